/* lock.c — a lock over 1..N masters (Redlock), and its acquisition: the
 * round's machine (acquire_step.c) decides, lock.c talks to the masters.
 * The renewal is in lock_extend.c, the release and the give-back in
 * lock_release.c. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "acquire_step.h"
#include "diag.h"
#include "lock.h"
#include "lock_impl.h"
#include "log.h"
#include "once_clock.h"
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
    struct rr_lock *lk = NULL;

    if (n < 1 || n > RR_MAX_ENDPOINTS) {
        snprintf(err, errlen, "%d masters: there must be 1 to %d", n, RR_MAX_ENDPOINTS);
        return NULL;
    }
    lk = calloc(1, sizeof(*lk));
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
    snprintf(lk->command_fp, sizeof(lk->command_fp), "%s", o->command_fp ? o->command_fp : "");
    lk->o.host = lk->host;
    lk->o.contain = lk->contain;
    lk->o.command_fp = lk->command_fp;
    lk->o.once_id = lk->once_id;
    if (o->once_pattern && snprintf(lk->once_pattern, sizeof lk->once_pattern, "%s",
                                    o->once_pattern) >= (int)sizeof lk->once_pattern) {
        snprintf(err, errlen, "--once is too long");
        goto fail;
    }
    lk->o.once_pattern = NULL;
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
    snprintf(lk->attempts, sizeof(lk->attempts), "%d", o->attempts > 0 ? o->attempts : 1);
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

int rr_lock_classify_renew(int status, const redisReply *r, char *by, size_t len)
{
    return rr_vote_renew(status == RR_REPLY_OK ? r : NULL, by, len);
}

/* ---- acquire: lock.c executes what the round's machine decides
 * (acquire_step.c) ---- */

/* An event an action caused waits in the round's queue until the actions
 * of its step are done: at most one per master's acquire, fence and mark,
 * and the give-back. */
#define QUEUE_LEN (3 * RR_MAX_ENDPOINTS + 2)

struct queued {
    struct rr_acq_ev ev;
    char text[RR_ERRLEN];
};

struct round {
    struct op op;                 /* first: the slots point at it */
    struct rr_acq_sm sm;
    rr_acquire_fn cb;
    struct rr_vote votes[RR_MAX_ENDPOINTS];
    struct rr_acquire_result res;
    struct queued queue[QUEUE_LEN];
    int head, len;
    bool stepping;                /* feed() is executing a step's actions */
    bool over;                    /* RR_AQ_ACT_FREE: freed once they are done */
};

static void feed(struct round *rd, const struct rr_acq_ev *ev);

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
static void failures_in(struct round *rd, bool *tls_refused)
{
    struct rr_lock *lk = rd->op.lk;

    for (int i = 0; i < lk->n; i++) {
        struct rr_vote *v = &rd->votes[i];
        const char *cerr = rr_svc_error(lk->conns[i]);
        tls_refused[i] = rr_svc_refused(lk->conns[i]);
        if (v->kind == RR_VOTE_ERR && strcmp(v->detail, "not sent") == 0)
            snprintf(v->detail, sizeof v->detail, "%.*s", (int)sizeof v->detail - 1,
                     cerr && *cerr ? cerr : rr_svc_name(lk->conns[i]));
    }
}

/* The result's why: a round that failed on errors names every master that
 * failed and why (votes.c), and is a refusal of our configuration when
 * those that refused leave no quorum; a quorum that took too long says so.
 * A degraded quorum lists the masters that failed. */
static void explain(struct round *rd)
{
    struct rr_lock *lk = rd->op.lk;
    struct rr_acquire_result *res = &rd->res;
    bool tls_refused[RR_MAX_ENDPOINTS];
    bool slow = res->n_ok >= rr_lock_quorum(lk->n);
    char took[RR_ERRLEN];

    snprintf(took, sizeof took, "the lock took %lldms to acquire, longer than its %lldms lease",
             (long long)res->elapsed_ms, (long long)lk->o.ttl_ms);
    if (res->result == RR_ACQ_OK && res->n_err > 0) {
        failures_in(rd, tls_refused);
        res->n_refused = rr_votes_failures(rd->votes, lk->n, tls_refused, lk->o.gave_password,
                                           res->failed, sizeof res->failed, NULL);
    } else if (res->result == RR_ACQ_ERROR && !res->err[0]) {
        snprintf(res->err, sizeof res->err, "%s", slow ? took : "no quorum");
    } else if (res->result == RR_ACQ_ERROR) {
        failures_in(rd, tls_refused);
        res->refused = rr_votes_explain(rd->votes, lk->n, tls_refused, lk->o.gave_password,
                                        res->err, sizeof res->err, res->failed,
                                        sizeof res->failed, &res->n_refused);
        if (!res->refused && slow)
            snprintf(res->err, sizeof res->err, "%s", took);
    }
}

/* RR_AQ_ACT_DECIDE: the result from the votes, as the machine counted them. */
static void tally(struct round *rd, const struct rr_acq_action *a)
{
    struct rr_lock *lk = rd->op.lk;
    struct rr_acquire_result *res = &rd->res;
    const struct rr_vote *rep = NULL;

    res->result = a->result;
    res->elapsed_ms = a->elapsed_ms;
    res->validity_ms = a->validity_ms;
    res->n_ok = a->n_ok;
    res->n_busy = a->n_busy;
    res->n_done = a->n_done;
    res->n_stale = a->n_stale;
    res->n_err = a->n_err;
    res->fence = a->fence;
    res->retry_ms = res->lease_ms = -1;
    res->foreign = false;
    res->rank = -1;
    if (a->n_err > 0)
        snprintf(res->err, sizeof res->err, "%s", a->text);
    for (int i = 0; i < lk->n; i++) {
        const struct rr_vote *v = &rd->votes[i];
        switch (v->kind) {
        case RR_VOTE_OK:
            /* --limit N > 1 runs on one master only (cli_check.c): one slot. */
            if (!res->slot)
                take_slot(lk, res->slot = v->slot);
            res->abandoned |= v->abandoned;
            res->command_changed |= v->command_changed;
            lk->started_ms[i] = v->started_ms;
            break;
        case RR_VOTE_BUSY:
            if (v->rank >= 0 && (res->rank < 0 || v->rank < res->rank))
                res->rank = v->rank;
            if (v->ticket > lk->ticket)
                lk->ticket = v->ticket;
            if (v->ahead > res->ahead)
                res->ahead = v->ahead;
            if (v->pttl_ms >= 0 && (res->lease_ms < 0 || v->pttl_ms < res->lease_ms))
                res->lease_ms = v->pttl_ms;
            res->foreign |= v->foreign;
            if (!rep || rep->kind != RR_VOTE_BUSY || (!rep->host[0] && v->host[0]))
                rep = v;
            break;
        case RR_VOTE_DONE:
            rep = v;
            break;
        case RR_VOTE_STALE:
            /* A spent attempt budget says more than a dead run alone. */
            if (!rep || (rep->kind != RR_VOTE_DONE &&
                         !(rep->kind == RR_VOTE_STALE && rep->spent && !v->spent)))
                rep = v;
            break;
        case RR_VOTE_ERR:
        case RR_VOTE_PENDING:   /* decided without it (certain) */
            break;
        }
    }
    if (rep)
        res->holder = *rep;
    /* A foreign holder's release publishes nothing: the first waiter
     * looks again soon rather than at the end of its lease. */
    res->retry_ms = res->lease_ms;
    if (res->foreign) {
        int64_t poll = rr_lock_foreign_poll_ms(lk->o.ttl_ms);
        if (res->retry_ms < 0 || poll < res->retry_ms)
            res->retry_ms = poll;
    }
    explain(rd);
    if (a->refused) {   /* one server under two URLs: retrying cannot help */
        res->refused = true;
        res->n_refused = 1;
        snprintf(res->err, sizeof res->err, "%s", a->text);
    }
    if (res->result == RR_ACQ_OK) {
        /* The release records it for --status, in the HSET it does anyway. */
        snprintf(lk->masters_ok, sizeof lk->masters_ok, "%d", res->n_ok);
        snprintf(lk->failed, sizeof lk->failed, "%s", res->failed);
        lk->fence = res->fence;
    }
}

/* The final counts of a round decided early, into res. */
static void fold_late(const struct round *rd, struct rr_acquire_result *res)
{
    res->n_ok = res->n_err = 0;
    for (int i = 0; i < rd->op.lk->n; i++) {
        res->n_ok += rd->votes[i].kind == RR_VOTE_OK;
        res->n_err += rd->votes[i].kind == RR_VOTE_ERR;
    }
    snprintf(res->failed, sizeof res->failed, "%s", rd->op.lk->failed);
}

static void on_fence_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    char why[RR_ERRLEN];
    struct rr_acq_ev ev = { .kind = RR_AQ_EV_FENCE, .now = rr_now_ms(), .idx = sl->idx,
                            .ok = status == RR_REPLY_OK && r->type == REDIS_REPLY_INTEGER &&
                                  r->integer == 1 };

    (void)c;
    if (!ev.ok) {
        rr_lock_error_text(sl->op->lk, sl->idx, status, "cannot raise the fencing counter",
                           why, sizeof why);
        ev.text = why;
    }
    feed((struct round *)sl->op, &ev);
}

static void on_abandon_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;

    (void)c;
    feed((struct round *)sl->op,
         &(struct rr_acq_ev){ .kind = RR_AQ_EV_MARKED, .now = rr_now_ms(), .idx = sl->idx,
                              .abandoned = status == RR_REPLY_OK &&
                                           r->type == REDIS_REPLY_INTEGER && r->integer > 0 });
}

static void on_gave_back(struct rr_lock *lk, int released, int written, int errors,
                         const char *err, void *arg)
{
    (void)lk, (void)released, (void)written, (void)errors, (void)err;
    feed(arg, &(struct rr_acq_ev){ .kind = RR_AQ_EV_GAVE_BACK, .now = rr_now_ms() });
}

static int send_fence(struct round *rd, int i, long long fence)
{
    struct rr_lock *lk = rd->op.lk;
    char f[24];
    const char *keys[RR_FENCE_NKEYS] = { [RR_FENCE_KEY_FENCE] = lk->keys.fence,
                                         [RR_FENCE_KEY_STATE] = lk->base_state,
                                         [RR_FENCE_KEY_ONCE] = lk->keys.once };
    const char *args[RR_FENCE_NARGS] = { [RR_FENCE_ARG_FENCE] = f,
                                         [RR_FENCE_ARG_KEEP_MS] = lk->once_ttl,
                                         [RR_FENCE_ARG_TOKEN] = lk->token,
                                         [RR_FENCE_ARG_LIMIT] = lk->limit };

    snprintf(f, sizeof f, "%lld", fence);
    return rr_script_call(lk->conns[i], RR_SCRIPT_FENCE,
                          lk->keys.once[0] ? RR_FENCE_NKEYS : RR_FENCE_KEY_ONCE, keys,
                          RR_FENCE_NARGS, args, on_fence_reply, &rd->op.slots[i]);
}

/* abandon.lua, with slot 1's keys: with --limit the script looks at every
 * slot. */
static int send_mark(struct round *rd, int i)
{
    struct rr_lock *lk = rd->op.lk;
    const char *keys[RR_ABANDON_NKEYS] = {
        [RR_ABANDON_KEY_LOCK] = lk->base_lock, [RR_ABANDON_KEY_STATE] = lk->base_state,
        [RR_ABANDON_KEY_HISTORY] = lk->keys.history, [RR_ABANDON_KEY_ONCE] = lk->keys.once,
    };
    const char *args[RR_ABANDON_NARGS] = { [RR_ABANDON_ARG_LIMIT] = lk->limit,
                                           [RR_ABANDON_ARG_STATE_TTL_MS] = lk->state_ttl };

    return rr_script_call(lk->conns[i], RR_SCRIPT_ABANDON,
                          lk->keys.once[0] ? RR_ABANDON_NKEYS : RR_ABANDON_KEY_ONCE, keys,
                          RR_ABANDON_NARGS, args, on_abandon_reply, &rd->op.slots[i]);
}

/* A master's answer after the round was decided, kept for the release: how
 * many masters took the lock, and who failed (from the votes' own words:
 * the connections may be closing now). */
static void late(struct round *rd, const struct rr_acq_action *a)
{
    struct rr_lock *lk = rd->op.lk;
    bool none[RR_MAX_ENDPOINTS] = { false };
    int ok = 0;

    if (a->kind == RR_AQ_ACT_LATE_OK) {
        for (int i = 0; i < lk->n; i++)
            ok += rd->votes[i].kind == RR_VOTE_OK;
        snprintf(lk->masters_ok, sizeof lk->masters_ok, "%d", ok);
        lk->started_ms[a->idx] = rd->votes[a->idx].started_ms;
        return;
    }
    rr_votes_failures(rd->votes, lk->n, none, lk->o.gave_password, lk->failed,
                      sizeof lk->failed, NULL);
}

static void execute(struct round *rd, const struct rr_acq_action *a)
{
    struct rr_lock *lk = rd->op.lk;
    struct rr_acquire_result res;

    switch (a->kind) {
    case RR_AQ_ACT_ENTER:
        break;
    case RR_AQ_ACT_MARK:
        lk->unsure[a->idx] = a->mark != RR_AQ_ANSWERED;
        lk->unsent[a->idx] = a->mark == RR_AQ_UNSENT;
        break;
    case RR_AQ_ACT_DECIDE:
        tally(rd, a);
        break;
    case RR_AQ_ACT_SEND_FENCE:
        if (send_fence(rd, a->idx, a->fence) != 0)
            feed(rd, &(struct rr_acq_ev){ .kind = RR_AQ_EV_FENCE_NOT_SENT, .idx = a->idx,
                                          .now = rr_now_ms() });
        break;
    case RR_AQ_ACT_TIMED:
        rd->res.elapsed_ms = a->elapsed_ms;
        rd->res.validity_ms = a->validity_ms;
        break;
    case RR_AQ_ACT_FAIL:
        rd->res.result = RR_ACQ_ERROR;
        snprintf(rd->res.err, sizeof rd->res.err, "%s", a->text);
        break;
    case RR_AQ_ACT_GIVE_BACK:
        rd->res.fence = 0;
        if (rr_lock_give_back(lk, rd->votes, a->stands, on_gave_back, rd) != 0)
            feed(rd, &(struct rr_acq_ev){ .kind = RR_AQ_EV_GIVE_BACK_NOT_SENT,
                                          .now = rr_now_ms() });
        break;
    case RR_AQ_ACT_SEND_MARK:
        if (send_mark(rd, a->idx) != 0)
            feed(rd, &(struct rr_acq_ev){ .kind = RR_AQ_EV_MARK_NOT_SENT, .idx = a->idx,
                                          .now = rr_now_ms() });
        break;
    case RR_AQ_ACT_ABANDONED:
        rd->res.abandoned = true;
        break;
    case RR_AQ_ACT_LATE_OK:
    case RR_AQ_ACT_LATE_ERR:
        late(rd, a);
        break;
    case RR_AQ_ACT_FOLD_LATE:
        fold_late(rd, &rd->res);
        break;
    case RR_AQ_ACT_REPORT:
        /* Said here, once per acquisition, under -q too: two jobs that
         * share a NAME by mistake block each other silently otherwise. */
        if (rd->res.result == RR_ACQ_OK && rd->res.command_changed)
            rr_log_act("command_changed", NULL,
                       "the command differs from the last run's of %s (fingerprint %s): "
                       "if two jobs share this NAME by mistake, give one another NAME; "
                       "--status %s shows both fingerprints",
                       lk->o.name, lk->command_fp, lk->o.name);
        rd->cb(lk, &rd->res, rd->op.arg);
        break;
    case RR_AQ_ACT_DEGRADED:
        if (!lk->degraded_fn)
            break;
        res = rd->res;
        fold_late(rd, &res);
        lk->degraded_fn(lk, &res, lk->degraded_arg);
        break;
    case RR_AQ_ACT_FREE:
        rd->over = true;
        break;
    }
}

/* Step the machine on ev and execute its actions. An event that they
 * cause (a send that failed, an answer of a connection that a callback
 * closed) is queued, and stepped when they are done: the machine never
 * decides in the middle of executing a decision. */
static void feed(struct round *rd, const struct rr_acq_ev *ev)
{
    struct queued *q;
    struct rr_acq_actions out;

    assert(rd->len < QUEUE_LEN);
    q = &rd->queue[(rd->head + rd->len++) % QUEUE_LEN];
    q->ev = *ev;
    snprintf(q->text, sizeof q->text, "%s", ev->text ? ev->text : "");
    if (rd->stepping)
        return;
    rd->stepping = true;
    while (rd->len > 0) {
        struct queued cur = rd->queue[rd->head];
        rd->head = (rd->head + 1) % QUEUE_LEN;
        rd->len--;
        if (cur.ev.text)
            cur.ev.text = cur.text;
        rr_acq_step(&rd->sm, &cur.ev, &out);
        for (int i = 0; i < out.n; i++)
            execute(rd, &out.a[i]);
    }
    rd->stepping = false;
    if (rd->over)
        rr_op_free(&rd->op);
}

void rr_lock_on_degraded(struct rr_lock *lk, rr_acquire_fn fn, void *arg)
{
    lk->degraded_fn = fn;
    lk->degraded_arg = arg;
}

/* ---- one vote per server ----
 * Two URLs may reach one server (127.0.0.1 beside ::1, a name beside its
 * address, a unix socket beside a TCP port): each would vote, and one
 * server could make a quorum. With several masters, INFO server goes in
 * front of a master's acquire until its run_id is known (no round trip
 * of its own: the replies come in order on one connection), so each
 * answer is checked against the masters known before it. */

static void on_info(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct rr_lock_ident *id = arg;
    struct rr_lock *lk = id->lk;

    if (status != RR_REPLY_OK)
        return;   /* asked again with the next acquire */
    lk->ident_done[id->idx] = true;
    if (r->type != REDIS_REPLY_STRING ||
        rr_vote_run_id(r->str, r->len, lk->run_id[id->idx]) != 0) {
        lk->run_id[id->idx][0] = '\0';
        rr_log(RR_LOG_INFO, "vote", NULL, "%s: INFO server gave no run_id (%s): a second URL "
               "of this server would not be told apart", rr_svc_name(c),
               r->type == REDIS_REPLY_ERROR ? "refused" : "no such field");
    }
}

static void ask_identity(struct rr_lock *lk, int i)
{
    const char *argv[] = { "INFO", "server", NULL };

    if (lk->n < 2 || lk->ident_done[i])
        return;
    lk->ident[i] = (struct rr_lock_ident){ lk, i };
    (void)rr_svc_commandv(lk->conns[i], on_info, &lk->ident[i], argv);
}

/* Is master i a server that another master is too? Then the message,
 * naming both, into why; its vote counts nowhere from now on. */
static bool twin_of_another(struct rr_lock *lk, int i, char *why, size_t len)
{
    int j = rr_votes_twin((const char (*)[RR_RUN_ID_LEN + 1])lk->run_id, lk->n, i);

    if (j < 0)
        return false;
    lk->twin[i] = true;
    snprintf(why, len, "--redis: %s and %s are the same Redis server (one run_id in INFO "
             "server); each Redlock master must be a separate server, so give it once",
             rr_svc_name(lk->conns[j < i ? j : i]), rr_svc_name(lk->conns[j < i ? i : j]));
    return true;
}

static void on_acquire_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct slot *sl = arg;
    struct round *rd = (struct round *)sl->op;
    struct rr_vote *v = &rd->votes[sl->idx];
    char first[RR_ERRLEN] = "";
    struct rr_acq_ev ev = { .kind = status == RR_REPLY_OK ? RR_AQ_EV_ANSWER : RR_AQ_EV_NO_ANSWER,
                            .now = rr_now_ms(), .idx = sl->idx, .text = first,
                            .unsent = status != RR_REPLY_OK && rr_svc_unsent(c),
                            .closed = status == RR_REPLY_CLOSED };

    rr_lock_classify_acquire(status, r, v);
    if (status == RR_REPLY_OK && twin_of_another(rd->op.lk, sl->idx, first, sizeof first)) {
        v->kind = RR_VOTE_ERR;
        snprintf(v->detail, sizeof v->detail, "%s", first);
        ev.twin = true;
    } else if (v->kind == RR_VOTE_OK && !rr_lock_synced(rr_svc_sync_replicas(c), rr_svc_replicas(c))) {
        /* Taken, but a failover could promote a replica that never saw it:
         * it does not count, and the give-back or the release takes it back. */
        v->kind = RR_VOTE_ERR;
        rr_lock_not_synced(c, "lock", v->detail, sizeof v->detail);
        snprintf(first, sizeof first, "%s", v->detail);
    }
    if (v->kind == RR_VOTE_ERR) {
        const char *cerr = rr_svc_error(c);
        char full[RR_ERRLEN + 160];
        if (!first[0])
            rr_lock_error_text(rd->op.lk, sl->idx, status, v->detail, first, sizeof first);
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
    ev.vote = v->kind;
    ev.fence = v->fence;
    ev.stale = v->stale;
    ev.abandoned = v->abandoned;
    feed(rd, &ev);
}

static int acquire_round(struct rr_lock *lk, rr_acquire_fn cb, void *arg)
{
    struct round *rd = (struct round *)rr_op_new(lk, sizeof(struct round), arg);
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
        [RR_ACQUIRE_ARG_CONTAIN] = lk->contain, [RR_ACQUIRE_ARG_ATTEMPTS] = lk->attempts,
        [RR_ACQUIRE_ARG_COMMAND] = lk->command_fp,
    };
    /* DONE and STALE outrank a quorum of OK: with --once or a refusal of
     * stale records, every master's answer counts. */
    struct rr_acq_params p = { .n = lk->n, .ttl_ms = lk->o.ttl_ms,
                               .early = !lk->keys.once[0] && !lk->o.refuse_stale };
    bool failed[RR_MAX_ENDPOINTS] = { false };
    int sent = 0;

    if (!rd)
        return -1;
    if (new_token(lk) != 0) {
        rr_op_free(&rd->op);
        return -1;
    }
    rd->cb = cb;
    rr_acq_init(&rd->sm, &p, rd->op.t0);
    memset(lk->started_ms, 0, sizeof(*lk->started_ms) * (size_t)lk->n);
    memset(lk->unsure, 0, sizeof(*lk->unsure) * (size_t)lk->n);
    memset(lk->unsent, 0, sizeof(*lk->unsent) * (size_t)lk->n);
    snprintf(lk->keys.lock, sizeof(lk->keys.lock), "%s", lk->base_lock);
    snprintf(lk->keys.state, sizeof(lk->keys.state), "%s", lk->base_state);
    lk->slot = 0;
    snprintf(lk->ticket_s, sizeof(lk->ticket_s), "%lld", lk->ticket);
    for (int i = 0; i < lk->n; i++) {
        /* A master whose request could not even be queued votes ERR. */
        rd->votes[i].kind = RR_VOTE_PENDING;
        snprintf(rd->votes[i].detail, sizeof(rd->votes[i].detail), "not sent");
        args[RR_ACQUIRE_ARG_SHARDED] = rr_script_sharded(lk->conns[i]);
        ask_identity(lk, i);
        if (rr_script_call(lk->conns[i], RR_SCRIPT_ACQUIRE,
                           lk->keys.once[0] ? RR_ACQUIRE_NKEYS : RR_ACQUIRE_KEY_ONCE, keys,
                           RR_ACQUIRE_NARGS, args, on_acquire_reply, &rd->op.slots[i]) == 0)
            sent++;
        else
            failed[i] = true;
    }
    if (sent == 0) {
        rr_op_free(&rd->op);
        return -1;
    }
    for (int i = 0; i < lk->n; i++)
        if (failed[i]) {
            rd->votes[i].kind = RR_VOTE_ERR;
            feed(rd, &(struct rr_acq_ev){ .kind = RR_AQ_EV_NOT_SENT, .idx = i,
                                          .now = rr_now_ms() });
        }
    return 0;
}

/* ---- the --once ID's clock: TIME before the first acquire ---- */

/* An acquisition that ends before any acquire was sent. */
static void report_error(struct rr_lock *lk, rr_acquire_fn cb, void *arg, const char *why,
                         bool refused)
{
    struct rr_acquire_result res = { .result = RR_ACQ_ERROR, .retry_ms = -1, .rank = -1,
                                     .n_err = refused ? 0 : lk->n, .refused = refused,
                                     .n_refused = refused };

    snprintf(res.err, sizeof res.err, "%s", why);
    cb(lk, &res, arg);
}

static int set_once(struct rr_lock *lk, const char *once_id)
{
    struct rr_job_keys k;

    if (rr_job_keys(&k, lk->o.prefix, lk->o.name, once_id) != 0)
        return -1;
    snprintf(lk->once_id, sizeof(lk->once_id), "%s", once_id);
    snprintf(lk->keys.once, sizeof(lk->keys.once), "%s", k.once);
    return 0;
}

static void on_once_clock(int n_ok, long long sec, int64_t local_ms, const char *err, void *arg)
{
    struct rr_lock *lk = arg;
    rr_acquire_fn cb = lk->clock_cb;
    char why[RR_ERRLEN], inner[RR_ERRLEN - 32] = RR_JOB_KEYS_TOO_LONG, id[RR_ONCE_MAX + 1];

    if (n_ok == 0) {
        /* A refusal (TIME not allowed, a wrong password) stays one: 78. */
        snprintf(why, sizeof why, "cannot read the lock service's clock (TIME) for --once: %s",
                 err);
        report_error(lk, cb, lk->clock_arg, why, rr_diag_config(err, lk->o.gave_password,
                                                                inner, sizeof inner));
        return;
    }
    if (rr_once_clock_id(lk->once_pattern, n_ok, sec, local_ms, id, sizeof id, inner,
                         sizeof inner) != 0 || set_once(lk, id) != 0) {
        snprintf(why, sizeof why, "--once: %s", inner);
        report_error(lk, cb, lk->clock_arg, why, true);
        return;
    }
    lk->once_pattern[0] = '\0';   /* one ID for the whole run, even across midnight */
    if (acquire_round(lk, cb, lk->clock_arg) != 0)
        report_error(lk, cb, lk->clock_arg, "cannot send the acquire", false);
}

int rr_lock_acquire(struct rr_lock *lk, rr_acquire_fn cb, void *arg)
{
    if (!lk->once_pattern[0])
        return acquire_round(lk, cb, arg);
    lk->clock_cb = cb;
    lk->clock_arg = arg;
    return rr_once_clock_ask(lk->conns, lk->n, on_once_clock, lk);
}

const char *rr_lock_once_id(const struct rr_lock *lk)
{
    return lk->once_id;
}
