/* lock_release.c — giving the lock back over 1..N services: the release
 * of a run, and the give-back of an acquisition that failed (lock.c calls
 * rr_lock_give_back; nothing here calls lock.c), one release.lua call per
 * master (src/lock_impl.h). */
#include <stdio.h>
#include <string.h>

#include "lock.h"
#include "lock_impl.h"
#include "scripts.h"

static void on_release_reply(struct rr_svc *c, int status, redisReply *r, void *arg);

/* Send release.lua to every master for op; votes: a give-back's (NULL for
 * a run's release), whose history entries are undone unless stands. -1 if
 * none could be sent. */
static int start_release(struct op *op, const struct rr_release_info *ri,
                         const struct rr_vote *votes, bool stands)
{
    struct rr_lock *lk = op->lk;
    char code[16], sig[16], hold[24], wait[24], fence[24], started[24], slot[12];
    /* Slot 1's keys and the slot: release.lua names slot K's keys. */
    const char *keys[RR_RELEASE_NKEYS] = {
        [RR_RELEASE_KEY_LOCK] = lk->base_lock, [RR_RELEASE_KEY_STATE] = lk->base_state,
        [RR_RELEASE_KEY_HISTORY] = lk->keys.history, [RR_RELEASE_KEY_VOID] = lk->void_key,
        [RR_RELEASE_KEY_QUEUE] = lk->keys.queue, [RR_RELEASE_KEY_ONCE] = lk->keys.once,
    };
    int nkeys = lk->keys.once[0] ? RR_RELEASE_NKEYS : RR_RELEASE_KEY_ONCE;

    snprintf(code, sizeof(code), "%d", ri->exit_code);
    if (ri->exit_code < 0)
        code[0] = '\0';
    snprintf(sig, sizeof(sig), "%d", ri->signal);
    if (ri->signal <= 0)
        sig[0] = '\0';
    snprintf(hold, sizeof(hold), "%lld", (long long)ri->hold_ms);
    snprintf(wait, sizeof(wait), "%lld", (long long)ri->wait_ms);
    snprintf(fence, sizeof(fence), "%lld", lk->fence);
    snprintf(started, sizeof(started), "%lld", 0LL);
    /* A give-back cannot know which slot its acquire took: a reply that
     * was lost or turned into an error may hide any slot. 0 makes the
     * script find the slot that carries our token. */
    snprintf(slot, sizeof(slot), "%d", votes ? 0 : lk->slot);
    /* Each master recorded its own start time; the script prefers the one in
     * its own state record and falls back to this. */
    for (int i = 0; i < lk->n; i++)
        if (lk->started_ms[i]) {
            snprintf(started, sizeof(started), "%lld", lk->started_ms[i]);
            break;
        }
    /* The fixed arguments, then a vote's history entries to undo. */
    const char *args[RR_RELEASE_NARGS + sizeof votes->undo / sizeof votes->undo[0]] = {
        [RR_RELEASE_ARG_TOKEN] = lk->token, [RR_RELEASE_ARG_STATUS] = ri->status,
        [RR_RELEASE_ARG_EXIT_CODE] = code, [RR_RELEASE_ARG_SIGNAL] = sig,
        [RR_RELEASE_ARG_HOLD_MS] = hold, [RR_RELEASE_ARG_WAIT_MS] = wait,
        [RR_RELEASE_ARG_CHANNEL] = lk->keys.channel, [RR_RELEASE_ARG_HOST] = lk->host,
        [RR_RELEASE_ARG_PID] = lk->pid, [RR_RELEASE_ARG_FENCE] = fence,
        [RR_RELEASE_ARG_ONCE] = lk->once_id, [RR_RELEASE_ARG_STARTED_MS] = started,
        [RR_RELEASE_ARG_STATE_TTL_MS] = lk->state_ttl, [RR_RELEASE_ARG_VOID_MS] = "0",
        [RR_RELEASE_ARG_STANDS] = stands ? "1" : "0", [RR_RELEASE_ARG_WAITER] = lk->waiter,
        [RR_RELEASE_ARG_WAITER_PREFIX] = lk->keys.q_prefix,
        [RR_RELEASE_ARG_WAKE_PREFIX] = lk->keys.wake_prefix,
        [RR_RELEASE_ARG_LIMIT] = lk->limit, [RR_RELEASE_ARG_SLOT] = slot,
        [RR_RELEASE_ARG_SHARDED] = "0", [RR_RELEASE_ARG_MASTERS_OK] = lk->masters_ok,
        [RR_RELEASE_ARG_MASTERS_TOTAL] = lk->masters_total,
        [RR_RELEASE_ARG_MASTERS_FAILED] = lk->failed,
    };
    int sent = 0;

    op->pending = lk->n;
    for (int i = 0; i < lk->n; i++) {
        int nargs = RR_RELEASE_NARGS;
        /* A give-back to a master our acquire never reached (its connection
         * never came up) has nothing to take back, and would only wait for
         * another --connect-timeout. */
        if (votes && lk->unsent[i]) {
            op->pending--;
            continue;
        }
        /* Where our acquire was never answered it may still arrive, after
         * this release: that master also gets a tombstone for our token. */
        args[RR_RELEASE_ARG_VOID_MS] = lk->unsure[i] ? lk->void_ms : "0";
        args[RR_RELEASE_ARG_SHARDED] = rr_script_sharded(lk->conns[i]);
        for (int u = 0; votes && !stands && u < votes[i].n_undo; u++)
            args[nargs++] = votes[i].undo[u];
        if (rr_script_call(lk->conns[i], RR_SCRIPT_RELEASE, nkeys, keys, nargs, args,
                           on_release_reply, &op->slots[i]) == 0)
            sent++;
        else
            op->pending--;
    }
    return sent == 0 ? -1 : 0;
}

static void on_release_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct op *op = sl->op;

    (void)c;
    if (status == RR_REPLY_OK && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[0]->type == REDIS_REPLY_INTEGER &&
        r->element[1]->type == REDIS_REPLY_INTEGER) {
        op->released += r->element[0]->integer == 1;
        op->written += r->element[1]->integer == 1;
    } else {
        op->err++;
        rr_op_note_error(op, sl->idx, status,
                         status == RR_REPLY_OK && r->type == REDIS_REPLY_ERROR
                             ? r->str : "unexpected reply to the release script");
    }
    if (--op->pending > 0)
        return;
    op->release_cb(op->lk, op->released, op->written, op->err, op->errmsg, op->arg);
    rr_op_free(op);
}

static int release(struct rr_lock *lk, const struct rr_release_info *ri,
                   const struct rr_vote *votes, bool stands, rr_release_fn cb, void *arg)
{
    struct op *op = rr_op_new(lk, sizeof(struct op), arg);

    if (!op)
        return -1;
    op->release_cb = cb;
    if (start_release(op, ri, votes, stands) != 0) {
        rr_op_free(op);
        return -1;
    }
    return 0;
}

int rr_lock_release(struct rr_lock *lk, const struct rr_release_info *ri,
                    rr_release_fn cb, void *arg)
{
    return release(lk, ri, NULL, true, cb, arg);
}

/* A round without a quorum may have met a live run that this master lost
 * the key of: the 'abandoned' entries it added do not stand. */
int rr_lock_give_back(struct rr_lock *lk, const struct rr_vote *votes, bool stands,
                      rr_release_fn cb, void *arg)
{
    const struct rr_release_info ri = { .status = "", .exit_code = -1 };

    return release(lk, &ri, votes, stands, cb, arg);
}
