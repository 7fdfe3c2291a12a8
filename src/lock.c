/* lock.c — acquire, extend and release over 1..N masters (Redlock). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "diag.h"
#include "lock.h"
#include "lock_impl.h"
#include "rand.h"
#include "scripts.h"

/* Draw a fresh token. It must be unguessable: it is all that separates our
 * lock from another holder's. And every acquisition attempt gets its own:
 * a request of an earlier attempt that arrives late (the give-back of a
 * timed-out try, delayed in the network) must not match the lock that a
 * later attempt took, or it would delete it under our running command.
 * (The chaos harness found exactly that with --wait and network delays.)
 * getrandom blocks only before the pool is seeded. */
static int new_token(struct rr_lock *lk)
{
    if (rr_random_hex(lk->token, (sizeof(lk->token) - 1) / 2) != 0)
        return -1;
    snprintf(lk->void_key, sizeof(lk->void_key), "%s%s", lk->keys.void_prefix, lk->token);
    return 0;
}

struct rr_lock *rr_lock_new(struct rr_svc **conns, int n, const struct rr_lock_opts *o,
                            char *err, size_t errlen)
{
    struct rr_lock *lk = calloc(1, sizeof(*lk));

    if (!lk || !(lk->started_ms = calloc((size_t)n, sizeof(*lk->started_ms))) ||
        !(lk->unsure = calloc((size_t)n, sizeof(*lk->unsure))) ||
        !(lk->unsent = calloc((size_t)n, sizeof(*lk->unsent)))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    lk->conns = conns;
    lk->n = n;
    lk->o = *o;
    snprintf(lk->host, sizeof(lk->host), "%s", o->host ? o->host : "");
    snprintf(lk->once_id, sizeof(lk->once_id), "%s", o->once_id ? o->once_id : "");
    snprintf(lk->contain, sizeof(lk->contain), "%s", o->contain ? o->contain : "");
    lk->o.host = lk->host;
    lk->o.contain = lk->contain;
    lk->o.once_id = lk->once_id;
    if (rr_job_keys(&lk->keys, o->prefix, o->name, lk->once_id) != 0) {
        snprintf(err, errlen, RR_JOB_KEYS_TOO_LONG);
        goto fail;
    }
    if (new_token(lk) != 0) {
        snprintf(err, errlen, "cannot draw a random token: %s", strerror(errno));
        goto fail;
    }
    snprintf(lk->ttl, sizeof(lk->ttl), "%lld", (long long)o->ttl_ms);
    snprintf(lk->state_ttl, sizeof(lk->state_ttl), "%lld", (long long)o->state_ttl_ms);
    /* A once record must outlive its run: acquire and every renewal set its
     * expiry to --state-ttl beyond the end of the lease, release sets
     * --state-ttl from the end of the run. */
    snprintf(lk->once_ttl, sizeof(lk->once_ttl), "%lld",
             o->state_ttl_ms > INT64_MAX - 1 - o->ttl_ms ? (long long)(INT64_MAX - 1)
                                                         : (long long)(o->state_ttl_ms + o->ttl_ms));
    /* A tombstone must outlive any late delivery of the acquire it voids.
     * Once a give-back has got through on a new connection the path works
     * again, and the old connection's data, if the kernel still has it, is
     * retransmitted within one RTO, at most 120 s on Linux (TCP_RTO_MAX);
     * twice the lease covers long leases. It costs one small key, only on
     * masters that did not answer an acquire. */
    snprintf(lk->void_ms, sizeof(lk->void_ms), "%lld",
             o->ttl_ms > INT64_MAX / 2 ? (long long)(INT64_MAX - 1)
             : 2 * o->ttl_ms > 120000 ? (long long)(2 * o->ttl_ms) : 120000LL);
    snprintf(lk->pid, sizeof(lk->pid), "%ld", o->pid);
    snprintf(lk->masters_ok, sizeof lk->masters_ok, "%d", 0);
    snprintf(lk->masters_total, sizeof lk->masters_total, "%d", n);
    snprintf(lk->waiter, sizeof(lk->waiter), "%s", o->waiter ? o->waiter : "");
    lk->o.waiter = lk->waiter;
    snprintf(lk->waiter_key, sizeof(lk->waiter_key), "%s%s", lk->keys.q_prefix, lk->waiter);
    snprintf(lk->qttl, sizeof(lk->qttl), "%lld", (long long)o->queue_ttl_ms);
    snprintf(lk->limit, sizeof(lk->limit), "%d", o->limit > 1 ? o->limit : 1);
    snprintf(lk->base_lock, sizeof(lk->base_lock), "%s", lk->keys.lock);
    snprintf(lk->base_state, sizeof(lk->base_state), "%s", lk->keys.state);
    return lk;
fail:
    if (lk) {
        free(lk->started_ms);
        free(lk->unsure);
        free(lk->unsent);
    }
    free(lk);
    return NULL;
}

void rr_lock_free(struct rr_lock *lk)
{
    if (!lk)
        return;
    free(lk->started_ms);
    free(lk->unsure);
    free(lk->unsent);
    free(lk);
}

void rr_lock_classify_acquire(int status, const redisReply *r, struct rr_vote *v)
{
    rr_vote_acquire(status == RR_REPLY_OK ? r : NULL,
                    status == RR_REPLY_TIMEOUT ? "no reply in time" : "connection failed", v);
}

int rr_lock_classify_renew(int status, const redisReply *r)
{
    return rr_vote_renew(status == RR_REPLY_OK ? r : NULL);
}

struct op *op_new(struct rr_lock *lk, enum op_kind kind, void *cb, void *arg)
{
    struct op *op = calloc(1, sizeof(*op));

    if (!op)
        return NULL;
    op->slots = calloc((size_t)lk->n, sizeof(*op->slots));
    op->votes = calloc((size_t)lk->n, sizeof(*op->votes));
    if (!op->slots || !op->votes) {
        free(op->slots);
        free(op->votes);
        free(op);
        return NULL;
    }
    op->lk = lk;
    op->kind = kind;
    op->cb = cb;
    op->arg = arg;
    op->t0 = rr_now_ms();
    for (int i = 0; i < lk->n; i++) {
        op->slots[i].op = op;
        op->slots[i].idx = i;
        /* A master whose request could not even be queued votes ERR. */
        op->votes[i].kind = RR_VOTE_ERR;
        snprintf(op->votes[i].detail, sizeof(op->votes[i].detail), "not sent");
    }
    return op;
}

void op_free(struct op *op)
{
    free(op->slots);
    free(op->votes);
    free(op);
}

/* Keep the first error of an operation: the connection's own words when
 * the request failed on the wire, else the master's name and what was wrong. */
void note_error(struct op *op, int idx, int status, const char *what)
{
    const char *cerr = rr_svc_error(op->lk->conns[idx]);

    if (op->errmsg[0])
        return;
    if (status != RR_REPLY_OK && cerr && *cerr)
        snprintf(op->errmsg, sizeof(op->errmsg), "%s", cerr);
    else
        snprintf(op->errmsg, sizeof(op->errmsg), "%s: %s",
                 rr_svc_name(op->lk->conns[idx]), what);
}

/* Inside a write's callback on c, which WAIT did not confirm enough. */
void not_synced(const struct rr_svc *c, const char *what, char *buf, size_t len)
{
    if (*rr_svc_wait_error(c)) {
        /* WAIT itself was refused: a permission, not a replica's link. */
        snprintf(buf, len, "%s: WAIT after the %s was refused: %s", rr_svc_name(c), what,
                 rr_svc_wait_error(c));
        return;
    }
    snprintf(buf, len, "only %lld of %d replicas confirmed the %s on %s",
             rr_svc_replicas(c) < 0 ? 0 : rr_svc_replicas(c), rr_svc_sync_replicas(c), what,
             rr_svc_name(c));
}

/* Send one script to every master; returns how many sends were accepted.
 * sharded_arg: the script's argument that says SPUBLISH, or -1. */
int send_all(struct op *op, enum rr_script s, rr_svc_reply_fn cb,
                    int nkeys, const char *const *keys, int nargs,
                    const char **args, int sharded_arg)
{
    int sent = 0;

    op->pending = op->lk->n;
    for (int i = 0; i < op->lk->n; i++) {
        if (sharded_arg >= 0)
            args[sharded_arg] = rr_script_sharded(op->lk->conns[i]);
        if (rr_script_call(op->lk->conns[i], s, nkeys, keys, nargs, args, cb,
                           &op->slots[i]) == 0) {
            sent++;
        } else {
            op->pending--;
            if (op->kind == OP_ACQUIRE) {
                op->acq_left--;
                op->votes[i].kind = RR_VOTE_ERR;   /* "not sent" */
            }
        }
    }
    return sent;
}

/* ---- acquire ---- */

static void finish_acquire(struct op *op);

static void on_abandon_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct op *op = sl->op;

    (void)c;
    if (status == RR_REPLY_OK && r->type == REDIS_REPLY_INTEGER && r->integer > 0)
        op->res.abandoned = true;
    if (--op->pending == 0)
        finish_acquire(op);
}

/* acquire.lua writes nothing about a 'running' record with no lock unless
 * it takes the lock, because one master cannot tell a dead run from a live
 * one whose key it lost. After a round that refused (STALE) or skipped
 * (DONE) with no master answering BUSY, nobody holds the lock: the records
 * the masters reported are marked abandoned now (after any give-back).
 * Returns true when abandon.lua was sent. */
static bool mark_abandoned(struct op *op)
{
    struct rr_lock *lk = op->lk;
    /* Slot 1's keys: with --limit the script looks at every slot. */
    const char *keys[RR_ABANDON_NKEYS] = {
        [RR_ABANDON_KEY_LOCK] = lk->base_lock, [RR_ABANDON_KEY_STATE] = lk->base_state,
        [RR_ABANDON_KEY_HISTORY] = lk->keys.history, [RR_ABANDON_KEY_ONCE] = lk->keys.once,
    };
    const char *args[RR_ABANDON_NARGS] = { [RR_ABANDON_ARG_LIMIT] = lk->limit };
    int nkeys = lk->keys.once[0] ? RR_ABANDON_NKEYS : RR_ABANDON_KEY_ONCE;

    op->marked = true;
    if ((op->res.result != RR_ACQ_STALE && op->res.result != RR_ACQ_DONE) || op->res.n_busy)
        return false;
    op->pending = 0;
    for (int i = 0; i < lk->n; i++) {
        const struct rr_vote *v = &op->votes[i];
        if (!v->stale && !(v->kind == RR_VOTE_OK && v->abandoned))
            continue;
        op->pending++;
        if (rr_script_call(lk->conns[i], RR_SCRIPT_ABANDON, nkeys, keys, RR_ABANDON_NARGS,
                           args, on_abandon_reply, &op->slots[i]) != 0)
            op->pending--;
    }
    return op->pending > 0;
}

/* The final counts of a round decided early, into res. */
static void fold_late(const struct op *op, struct rr_acquire_result *res)
{
    res->n_ok = res->n_err = 0;
    for (int i = 0; i < op->lk->n; i++) {
        res->n_ok += op->votes[i].kind == RR_VOTE_OK;
        res->n_err += op->votes[i].kind == RR_VOTE_ERR;
    }
    snprintf(res->failed, sizeof res->failed, "%s", op->lk->failed);
}

static void finish_acquire(struct op *op)
{
    if (!op->marked && mark_abandoned(op))
        return;   /* back here when the masters have answered */
    if (op->late_err && op->res.result == RR_ACQ_OK) {
        /* Masters that failed after an early decision, before the
         * callback: the result says so itself. */
        fold_late(op, &op->res);
        op->late_err = false;
    }
    ((rr_acquire_fn)op->cb)(op->lk, &op->res, op->arg);
    /* Replies of masters the round did not wait for still point here. */
    op->finished = true;
    if (op->acq_left == 0)
        op_free(op);
}

static void give_back(struct op *op);
static void explain_error(struct op *op);

/* Masters hand out fences independently, so the maximum over our quorum may
 * come from a master that the next holder's quorum does not include. Raising
 * every master of our quorum to that maximum before the child starts makes
 * the next holder's quorum, which shares at least one master with ours, draw
 * a larger fence: the fence then strictly increases across holders. */
static void on_fence_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct op *op = sl->op;
    struct rr_acquire_result *res = &op->res;

    (void)c;
    if (status == RR_REPLY_OK && r->type == REDIS_REPLY_INTEGER && r->integer == 1)
        op->ok++;
    else
        note_error(op, sl->idx, status, "cannot raise the fencing counter");
    if (--op->pending > 0)
        return;
    res->elapsed_ms = rr_now_ms() - op->t0;
    res->validity_ms = rr_lock_validity(op->lk->o.ttl_ms, res->elapsed_ms);
    if (op->ok >= rr_lock_quorum(op->lk->n) && res->validity_ms > 0) {
        finish_acquire(op);
        return;
    }
    res->result = RR_ACQ_ERROR;
    snprintf(res->err, sizeof(res->err), "%s", op->errmsg[0] ? op->errmsg
             : "the lock's validity ran out while synchronising the fencing counter");
    give_back(op);
}

static int sync_fences(struct op *op)
{
    struct rr_lock *lk = op->lk;
    char fence[24];
    const char *keys[RR_FENCE_NKEYS] = { [RR_FENCE_KEY_FENCE] = lk->keys.fence };
    const char *args[RR_FENCE_NARGS] = { [RR_FENCE_ARG_FENCE] = fence };
    int lagging = 0;

    snprintf(fence, sizeof(fence), "%lld", lk->fence);
    op->ok = 0;
    op->pending = 0;
    op->errmsg[0] = '\0';
    for (int i = 0; i < lk->n; i++) {
        if (op->votes[i].kind != RR_VOTE_OK)
            continue;
        if (op->votes[i].fence >= lk->fence) {
            op->ok++;
            continue;
        }
        lagging++;
    }
    if (lagging == 0)
        return -1;
    for (int i = 0; i < lk->n; i++) {
        if (op->votes[i].kind != RR_VOTE_OK || op->votes[i].fence >= lk->fence)
            continue;
        op->pending++;
        if (rr_script_call(lk->conns[i], RR_SCRIPT_FENCE, RR_FENCE_NKEYS, keys, RR_FENCE_NARGS,
                           args, on_fence_reply, &op->slots[i]) != 0)
            op->pending--;
    }
    if (op->pending > 0)
        return 0;
    /* Nothing could be sent: decide with what we have. */
    if (op->ok >= rr_lock_quorum(lk->n))
        return -1;
    op->res.result = RR_ACQ_ERROR;
    snprintf(op->res.err, sizeof(op->res.err), "cannot raise the fencing counter");
    give_back(op);
    return 0;
}

/* Renew and release act on the slot's keys: lock, lock:2 ... lock:N. */
static void take_slot(struct rr_lock *lk, int slot)
{
    lk->slot = slot;
    if (slot <= 1)
        return;
    char sfx[16];
    size_t nl = strlen(lk->base_lock), ns = strlen(lk->base_state);

    snprintf(sfx, sizeof(sfx), ":%d", slot);
    if (nl + strlen(sfx) >= sizeof(lk->keys.lock) || ns + strlen(sfx) >= sizeof(lk->keys.state))
        return;   /* cannot happen: rr_job_keys leaves room for ":100" */
    memcpy(lk->keys.lock, lk->base_lock, nl);
    memcpy(lk->keys.lock + nl, sfx, strlen(sfx) + 1);
    memcpy(lk->keys.state, lk->base_state, ns);
    memcpy(lk->keys.state + ns, sfx, strlen(sfx) + 1);
}

/* Every master's error as a sentence that names it, and whether its TLS
 * handshake was refused, for votes.c. */
static void failures_in(const struct op *op, bool *tls_refused)
{
    for (int i = 0; i < op->lk->n; i++) {
        struct rr_vote *v = &op->votes[i];
        const char *cerr = rr_svc_error(op->lk->conns[i]);
        tls_refused[i] = rr_svc_refused(op->lk->conns[i]);
        if (v->kind == RR_VOTE_ERR && strcmp(v->detail, "not sent") == 0)
            snprintf(v->detail, sizeof v->detail, "%.*s", (int)sizeof v->detail - 1,
                     cerr && *cerr ? cerr : rr_svc_name(op->lk->conns[i]));
    }
}

/* A round that failed on errors: every master that failed and why
 * (votes.c); a refusal of our configuration when those that refused leave
 * no quorum; a quorum that took too long says so. */
static void explain_error(struct op *op)
{
    struct rr_lock *lk = op->lk;
    struct rr_acquire_result *res = &op->res;
    bool *tls_refused = calloc((size_t)lk->n, sizeof *tls_refused);

    if (!tls_refused)
        return;
    failures_in(op, tls_refused);
    res->refused = rr_votes_explain(op->votes, lk->n, tls_refused, lk->o.gave_password,
                                    res->err, sizeof res->err, res->failed,
                                    sizeof res->failed, &res->n_refused);
    if (!res->refused && res->n_ok >= rr_lock_quorum(lk->n))
        snprintf(res->err, sizeof(res->err),
                 "the lock took %lldms to acquire, longer than its %lldms lease",
                 (long long)res->elapsed_ms, (long long)lk->o.ttl_ms);
    free(tls_refused);
}

/* A degraded quorum: the masters that failed, and why. */
static void list_failures(struct op *op)
{
    bool *tls_refused = calloc((size_t)op->lk->n, sizeof *tls_refused);

    if (!tls_refused)
        return;
    failures_in(op, tls_refused);
    op->res.n_refused = rr_votes_failures(op->votes, op->lk->n, tls_refused,
                                          op->lk->o.gave_password, op->res.failed,
                                          sizeof op->res.failed, NULL);
    free(tls_refused);
}

static void decide(struct op *op)
{
    struct rr_lock *lk = op->lk;
    struct rr_acquire_result *res = &op->res;
    const struct rr_vote *rep = NULL;

    res->elapsed_ms = rr_now_ms() - op->t0;
    res->validity_ms = rr_lock_validity(lk->o.ttl_ms, res->elapsed_ms);
    res->retry_ms = -1;
    res->rank = -1;
    for (int i = 0; i < lk->n; i++) {
        const struct rr_vote *v = &op->votes[i];
        switch (v->kind) {
        case RR_VOTE_OK:
            res->n_ok++;
            if (v->fence > res->fence)
                res->fence = v->fence;
            /* --limit N > 1 runs on one master only (cli_check.c): one slot. */
            if (!res->slot)
                take_slot(lk, res->slot = v->slot);
            res->abandoned |= v->abandoned;
            lk->started_ms[i] = v->started_ms;
            break;
        case RR_VOTE_BUSY:
            res->n_busy++;
            if (v->rank >= 0 && (res->rank < 0 || v->rank < res->rank))
                res->rank = v->rank;
            if (v->ticket > lk->ticket)
                lk->ticket = v->ticket;
            if (v->ahead > res->ahead)
                res->ahead = v->ahead;
            if (v->pttl_ms >= 0 && (res->retry_ms < 0 || v->pttl_ms < res->retry_ms))
                res->retry_ms = v->pttl_ms;
            if (!rep || rep->kind != RR_VOTE_BUSY || (!rep->host[0] && v->host[0]))
                rep = v;
            break;
        case RR_VOTE_DONE:
            res->n_done++;
            rep = v;
            break;
        case RR_VOTE_STALE:
            res->n_stale++;
            if (!rep || rep->kind != RR_VOTE_DONE)
                rep = v;
            break;
        case RR_VOTE_ERR:
            res->n_err++;
            if (!res->err[0])
                snprintf(res->err, sizeof(res->err), "%s", op->errmsg);
            break;
        case RR_VOTE_PENDING:
            break;   /* decided without it (certain) */
        }
    }
    if (rep)
        res->holder = *rep;
    res->result = rr_lock_decide(lk->n, res->n_ok, res->n_busy, res->n_done,
                                 res->n_stale, res->n_err, res->validity_ms);
    if (res->result == RR_ACQ_OK) {
        if (res->n_err > 0)
            list_failures(op);   /* a degraded quorum: say who and why */
        /* The release records it for --status, in the HSET it does anyway. */
        snprintf(lk->masters_ok, sizeof lk->masters_ok, "%d", res->n_ok);
        snprintf(lk->failed, sizeof lk->failed, "%s", res->failed);
        op->decided_ok = true;
        lk->fence = res->fence;
        if (sync_fences(op) == 0)
            return;   /* finish_acquire runs when the masters have answered */
        finish_acquire(op);
        return;
    }
    if (res->result == RR_ACQ_ERROR && !res->err[0]) {
        if (res->n_ok >= rr_lock_quorum(lk->n))
            snprintf(res->err, sizeof(res->err),
                     "the lock took %lldms to acquire, longer than its %lldms lease",
                     (long long)res->elapsed_ms, (long long)lk->o.ttl_ms);
        else
            snprintf(res->err, sizeof(res->err), "no quorum");
    } else if (res->result == RR_ACQ_ERROR) {
        explain_error(op);
    }
    if (res->n_ok + res->n_err == 0) {
        finish_acquire(op);
        return;
    }
    give_back(op);
}

/* Give back whatever we took. A master that failed may still have applied
 * the script before its reply was lost, so every master is asked. */
static void give_back(struct op *op)
{
    struct rr_release_info ri = { .status = "", .exit_code = -1 };

    op->res.fence = 0;
    op->after_release = finish_acquire;
    if (start_release(op->lk, op, &ri) != 0)
        finish_acquire(op);
}

/* Can the round be decided before every master answered? Only where the
 * answers still to come cannot change the outcome: a quorum of OK already,
 * and no --once and no refusal of stale records, so no master can yet say
 * DONE or STALE, which would outrank it (rr_lock_decide). Then the run
 * starts after the quorum's replies, not the slowest master's. */
static bool certain(const struct op *op)
{
    const struct rr_lock *lk = op->lk;
    int ok = 0;

    if (lk->keys.once[0] || lk->o.refuse_stale)
        return false;
    for (int i = 0; i < lk->n; i++)
        ok += op->votes[i].kind == RR_VOTE_OK;
    return ok >= rr_lock_quorum(lk->n);
}

/* Was the round decided, and does it hold the lock? Then it owns the
 * per-master marks still; a round decided otherwise (given back, perhaps
 * retried by a new round on the same lock) owns them no more. */
static bool holds(const struct op *op)
{
    return op->decided && op->res.result == RR_ACQ_OK;
}

/* A reply after the round was decided (certain): the lock is ours on that
 * master too (OK), or it is not (BUSY, an error); either way the renewals
 * and the release go to every master as they do. What it says is kept for
 * the release: how many masters took the lock, whether ours was answered.
 * The last one frees the op if its callback ran. */
static void late_reply(struct op *op, int idx, int status)
{
    struct rr_lock *lk = op->lk;
    const struct rr_vote *v = &op->votes[idx];

    if (v->kind == RR_VOTE_OK && holds(op)) {
        int ok = 0;
        for (int i = 0; i < lk->n; i++)
            ok += op->votes[i].kind == RR_VOTE_OK;
        snprintf(lk->masters_ok, sizeof lk->masters_ok, "%d", ok);
        lk->started_ms[idx] = v->started_ms;
    } else if (v->kind == RR_VOTE_ERR && holds(op) && status != RR_REPLY_CLOSED) {
        /* For --status, with the release: from the votes' own words (the
         * connections may be closing now). */
        bool *none = calloc((size_t)lk->n, sizeof *none);
        if (none)
            rr_votes_failures(op->votes, lk->n, none, lk->o.gave_password, lk->failed,
                              sizeof lk->failed, NULL);
        free(none);
        op->late_err = true;
    }
    if (--op->acq_left > 0 || !op->finished)
        return;   /* before the callback, finish_acquire folds them in */
    if (op->late_err && holds(op) && lk->degraded_fn) {
        struct rr_acquire_result res = op->res;
        fold_late(op, &res);
        lk->degraded_fn(lk, &res, lk->degraded_arg);
    }
    op_free(op);
}

void rr_lock_on_degraded(struct rr_lock *lk, rr_acquire_fn fn, void *arg)
{
    lk->degraded_fn = fn;
    lk->degraded_arg = arg;
}

static void on_acquire_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct op *op = sl->op;
    struct rr_vote *v = &op->votes[sl->idx];

    /* Without an answer we cannot know whether the script ran, or will.
     * After the decision, only a round that holds the lock still owns
     * these marks (one given back was marked when it was decided). */
    if (!op->decided || holds(op)) {
        op->lk->unsure[sl->idx] = status != RR_REPLY_OK;
        op->lk->unsent[sl->idx] = status != RR_REPLY_OK && rr_svc_unsent(c);
    }
    rr_lock_classify_acquire(status, r, v);
    if (v->kind == RR_VOTE_OK && !rr_lock_synced(rr_svc_sync_replicas(c), rr_svc_replicas(c))) {
        /* Taken, but a failover could promote a replica that never saw it:
         * it does not count, and give_back or the release takes it back. */
        v->kind = RR_VOTE_ERR;
        not_synced(c, "lock", v->detail, sizeof v->detail);
        if (!op->errmsg[0] && !op->decided)
            snprintf(op->errmsg, sizeof op->errmsg, "%s", v->detail);
    }
    if (v->kind == RR_VOTE_ERR) {
        const char *cerr = rr_svc_error(c);
        char full[RR_ERRLEN + 160];
        if (!op->decided)   /* later, op->errmsg is a later step's */
            note_error(op, sl->idx, status, v->detail);
        /* The vote keeps its error as a sentence that names the master. */
        if (status != RR_REPLY_OK && cerr && *cerr)
            snprintf(full, sizeof full, "%s", cerr);
        else if (strstr(v->detail, rr_svc_name(c)))
            snprintf(full, sizeof full, "%s", v->detail);
        else
            snprintf(full, sizeof full, "%.150s: %s", rr_svc_name(c), v->detail);
        size_t fl = strnlen(full, sizeof v->detail - 1);
        memcpy(v->detail, full, fl);
        v->detail[fl] = '\0';
    }
    if (op->decided) {
        late_reply(op, sl->idx, status);
        return;
    }
    if (--op->acq_left == 0 || certain(op)) {
        /* A master still to answer may run our acquire after our release
         * (a re-send, a paused server): it gets a tombstone, as one that
         * never answered does. */
        for (int i = 0; i < op->lk->n; i++)
            if (op->votes[i].kind == RR_VOTE_PENDING)
                op->lk->unsure[i] = true;
        op->decided = true;
        decide(op);
    }
}

int rr_lock_acquire(struct rr_lock *lk, rr_acquire_fn cb, void *arg)
{
    struct op *op = op_new(lk, OP_ACQUIRE, (void *)cb, arg);
    const char *keys[RR_ACQUIRE_NKEYS] = {
        [RR_ACQUIRE_KEY_LOCK] = lk->base_lock, [RR_ACQUIRE_KEY_FENCE] = lk->keys.fence,
        [RR_ACQUIRE_KEY_STATE] = lk->base_state, [RR_ACQUIRE_KEY_HISTORY] = lk->keys.history,
        [RR_ACQUIRE_KEY_VOID] = lk->void_key, [RR_ACQUIRE_KEY_QUEUE] = lk->keys.queue,
        [RR_ACQUIRE_KEY_QSEQ] = lk->keys.qseq, [RR_ACQUIRE_KEY_WAITER_KEY] = lk->waiter_key,
        [RR_ACQUIRE_KEY_ONCE] = lk->keys.once,
    };
    char floor[24];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(floor, sizeof(floor), "%lld",
             (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    const char *args[RR_ACQUIRE_NARGS] = {
        [RR_ACQUIRE_ARG_TOKEN] = lk->token, [RR_ACQUIRE_ARG_TTL_MS] = lk->ttl,
        [RR_ACQUIRE_ARG_HOST] = lk->host, [RR_ACQUIRE_ARG_PID] = lk->pid,
        [RR_ACQUIRE_ARG_ONCE_ID] = lk->once_id,
        [RR_ACQUIRE_ARG_REFUSE_STALE] = lk->o.refuse_stale ? "1" : "0",
        [RR_ACQUIRE_ARG_ONCE_TTL_MS] = lk->once_ttl, [RR_ACQUIRE_ARG_FENCE_FLOOR] = floor,
        [RR_ACQUIRE_ARG_WAITER] = lk->waiter, [RR_ACQUIRE_ARG_QUEUE_TTL_MS] = lk->qttl,
        [RR_ACQUIRE_ARG_TICKET] = lk->ticket_s, [RR_ACQUIRE_ARG_LIMIT] = lk->limit,
        [RR_ACQUIRE_ARG_WAITER_PREFIX] = lk->keys.q_prefix,
        [RR_ACQUIRE_ARG_KEEP] = lk->n > 1 ? "1" : "0",
        [RR_ACQUIRE_ARG_WAKE_PREFIX] = lk->keys.wake_prefix, [RR_ACQUIRE_ARG_SHARDED] = "0",
        [RR_ACQUIRE_ARG_CONTAIN] = lk->contain,
    };

    if (!op)
        return -1;
    if (new_token(lk) != 0) {
        op_free(op);
        return -1;
    }
    memset(lk->started_ms, 0, sizeof(*lk->started_ms) * (size_t)lk->n);
    memset(lk->unsure, 0, sizeof(*lk->unsure) * (size_t)lk->n);
    memset(lk->unsent, 0, sizeof(*lk->unsent) * (size_t)lk->n);
    snprintf(lk->keys.lock, sizeof(lk->keys.lock), "%s", lk->base_lock);
    snprintf(lk->keys.state, sizeof(lk->keys.state), "%s", lk->base_state);
    lk->slot = 0;
    snprintf(lk->ticket_s, sizeof(lk->ticket_s), "%lld", lk->ticket);
    /* The replies are counted apart: decide's later steps (the fences, a
     * give-back) count theirs in op->pending, on the same op. A send that
     * fails makes its vote ERR again (send_all). */
    op->acq_left = lk->n;
    for (int i = 0; i < lk->n; i++)
        op->votes[i].kind = RR_VOTE_PENDING;
    if (send_all(op, RR_SCRIPT_ACQUIRE, on_acquire_reply,
                 lk->keys.once[0] ? RR_ACQUIRE_NKEYS : RR_ACQUIRE_KEY_ONCE, keys,
                 RR_ACQUIRE_NARGS, args, RR_ACQUIRE_ARG_SHARDED) == 0) {
        op_free(op);
        return -1;
    }
    return 0;
}
