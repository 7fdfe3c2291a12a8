/* lock_extend.c — renewing the lease over 1..N masters (lock.h). */
#include <stdio.h>
#include <stdlib.h>

#include "lock_impl.h"

/* Send the renewal to every master; returns how many sends were accepted. */
static int send_all(struct op *op, rr_svc_reply_fn cb, int nkeys, const char *const *keys,
                    int nargs, const char **args)
{
    int sent = 0;

    op->pending = op->lk->n;
    for (int i = 0; i < op->lk->n; i++) {
        if (rr_script_call(op->lk->conns[i], RR_SCRIPT_RENEW, nkeys, keys, nargs, args, cb,
                           &op->slots[i]) == 0)
            sent++;
        else
            op->pending--;
    }
    return sent;
}

static void on_extend_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct op *op = sl->op;
    int q = rr_lock_quorum(op->lk->n);
    char by[RR_REVOKED_BY_LEN];

    switch (rr_lock_classify_renew(status, r, by, sizeof by)) {
    case 1:
        if (!rr_lock_synced(rr_svc_sync_replicas(c), rr_svc_replicas(c))) {
            /* Extended here, but not where a failover would look: do not
             * vouch for the longer lease. */
            char why[RR_ERRLEN];
            rr_lock_not_synced(c, "renewal", why, sizeof why);
            op->err++;
            if (!op->errmsg[0])
                snprintf(op->errmsg, sizeof op->errmsg, "%s", why);
            break;
        }
        op->ok += !op->lk->twin[sl->idx];   /* one server, one vote */
        break;
    case 0:
        op->mismatch++;
        if (by[0] && !op->revoked_by[0])
            snprintf(op->revoked_by, sizeof op->revoked_by, "%s", by);
        break;
    default:
        op->err++;
        rr_op_note_error(op, sl->idx, status,
                         status == RR_REPLY_OK && r->type == REDIS_REPLY_ERROR
                             ? r->str : "unexpected reply to the renewal");
        break;
    }
    op->pending--;
    /* Answer as soon as the outcome is certain: a stalled minority master
     * must not delay every renewal by --redis-timeout. Late answers only
     * complete the op. */
    if (!op->reported) {
        enum rr_extend res;
        bool decided = true;
        if (op->ok >= q)
            res = RR_EXTEND_OK;
        else if (op->mismatch > op->lk->n - q)
            res = RR_EXTEND_LOST;
        else if (op->ok + op->pending < q)
            res = RR_EXTEND_FAILED;
        else
            decided = false;
        if (decided) {
            op->reported = true;
            if (res == RR_EXTEND_LOST && op->revoked_by[0])
                snprintf(op->errmsg, sizeof(op->errmsg),
                         "the lock was revoked by --release (%s)", op->revoked_by);
            else if (res == RR_EXTEND_LOST)
                snprintf(op->errmsg, sizeof(op->errmsg),
                         "the lock was taken over or deleted on %d of %d master%s",
                         op->mismatch, op->lk->n, op->lk->n == 1 ? "" : "s");
            op->extend_cb(op->lk, res, op->t0, op->errmsg, op->arg);
        }
    }
    if (op->pending == 0)
        rr_op_free(op);
}

int rr_lock_extend(struct rr_lock *lk, rr_extend_fn cb, void *arg)
{
    struct op *op = rr_op_new(lk, sizeof(struct op), arg);
    const char *keys[RR_RENEW_NKEYS] = {
        [RR_RENEW_KEY_LOCK] = lk->keys.lock, [RR_RENEW_KEY_STATE] = lk->keys.state,
        [RR_RENEW_KEY_FENCE] = lk->keys.fence, [RR_RENEW_KEY_ONCE] = lk->keys.once,
    };
    const char *args[RR_RENEW_NARGS] = {
        [RR_RENEW_ARG_TOKEN] = lk->token, [RR_RENEW_ARG_TTL_MS] = lk->ttl,
        [RR_RENEW_ARG_ONCE_TTL_MS] = lk->once_ttl,
    };

    if (!op)
        return -1;
    op->extend_cb = cb;
    if (send_all(op, on_extend_reply, lk->keys.once[0] ? RR_RENEW_NKEYS : RR_RENEW_KEY_ONCE,
                 keys, RR_RENEW_NARGS, args) == 0) {
        rr_op_free(op);
        return -1;
    }
    return 0;
}
