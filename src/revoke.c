/* revoke.c — --release: free a lock without an overlap (force.lua).
 *
 * A live holder's lock is marked revoked, not deleted: its next renewal
 * finds the mark, kills its command and releases; nobody can acquire
 * until then (or until the old lease ends). We wait for that, polling
 * every RV_POLL_MS, bounded by the longest lease left, and say what
 * happened. --force deletes at once (and says what that risks); --fence F
 * acts only on a holder of fence F. With --limit N: --slot K acts on slot
 * K, --all-slots (and --fence F without --slot) on every held slot, each
 * holder revoked and waited for at once; one line per slot acted on.
 * A lock with no record of its token is another program's (an
 * application's SET NX PX on the key): revoked like a live run, so its
 * holder can no longer extend or delete it and its lease runs out; one
 * with no expiry is left alone (there is no lease to wait for). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "duration.h"
#include "job.h"
#include "log.h"
#include "record.h"
#include "revoke.h"
#include "scripts.h"
#include "svc_config.h"

#define RV_POLL_MS 100

/* One --limit slot's holder, as the masters told. */
struct rv_slot {
    /* one round's tallies */
    int n_free, n_revoked, n_pending, n_deleted, n_fence, n_held, n_forever;
    long long pttl;
    bool waiting;               /* revoked: its holder has not released yet */
    bool was_running;           /* the holder's record said running (force) */
    char who[400];              /* "HOST pid P (fence F)" escaped, or "" unknown */
    bool foreign;               /* no record of its token: not a redlock-run run */
    char holder[320];           /* its record's "HOST PID", raw, from the first round */
    bool replaced;              /* poll: a new run's record replaced the holder's */
    char status[32];
    long long heartbeat, finished;
};

struct rv {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    FILE *out;
    struct rr_job_keys keys;
    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n, pending;
    char host[256], pid[24];      /* the operator: user@host, our pid */
    const char *mode;           /* "revoke", "force", "poll" */
    int target;                 /* the first round's slot: K, or 0 every held slot */
    bool slotted;               /* --slot or --all-slots: name the slot */
    struct rv_slot slots[RR_LIMIT_MAX + 1];   /* by slot number, 1..RR_LIMIT_MAX */
    int errors, answered;
    char err[RR_ERRLEN];
    uint64_t deadline;          /* loop time: the wait ends */
    uv_timer_t timer;
    bool waiting;
    int exit_code;
};

/* "the lock of NAME", or "slot K of the lock of NAME". */
static const char *label(const struct rv *v, int k, char *buf, size_t len)
{
    if (v->slotted || k > 1)
        snprintf(buf, len, "slot %d of the lock of %s", k, v->cfg->name);
    else
        snprintf(buf, len, "the lock of %s", v->cfg->name);
    return buf;
}

#define RV_FOREIGN "a program that is not redlock-run (no record of its token)"

static const char *who(const struct rv_slot *s)
{
    return s->who[0] ? s->who : RV_FOREIGN;
}

static void close_all(struct rv *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->conns[i]) {
            rr_svc_close(v->conns[i]);
            v->conns[i] = NULL;
        }
    if (v->waiting && !uv_is_closing((uv_handle_t *)&v->timer))
        uv_close((uv_handle_t *)&v->timer, NULL);
}

static int unavailable(struct rv *v)
{
    char why[RR_ERRLEN + 256];

    for (int i = 0; i < v->n; i++)
        if (v->conns[i] && rr_svc_refused(v->conns[i])) {
            rr_log(RR_LOG_ERROR, "config", NULL, "cannot release: %s", rr_svc_error(v->conns[i]));
            return RR_EXIT_CONFIG;
        }
    if (rr_diag_config(v->err, rr_cli_gave_password(v->cfg), why, sizeof why)) {
        rr_log(RR_LOG_ERROR, "config", NULL, "cannot release: %s", why);
        return RR_EXIT_CONFIG;
    }
    rr_log(RR_LOG_ERROR, "unavailable", NULL, "cannot release: %s", v->err);
    return RR_EXIT_UNAVAILABLE;
}

static void on_reply(struct rr_svc *c, int status, redisReply *r, void *arg);

/* Ask every master about slot k (0: every held slot). */
static void call_slot(struct rv *v, int k)
{
    char slot[12], top[12], keep[24];
    const char *keys[RR_FORCE_NKEYS] = {
        [RR_FORCE_KEY_LOCK] = v->keys.lock, [RR_FORCE_KEY_STATE] = v->keys.state,
        [RR_FORCE_KEY_HISTORY] = v->keys.history, [RR_FORCE_KEY_QUEUE] = v->keys.queue,
    };
    const char *args[RR_FORCE_NARGS] = {
        [RR_FORCE_ARG_CHANNEL] = v->keys.channel, [RR_FORCE_ARG_HOST] = v->host,
        [RR_FORCE_ARG_PID] = v->pid, [RR_FORCE_ARG_SHARDED] = "0", [RR_FORCE_ARG_MODE] = v->mode,
        [RR_FORCE_ARG_FENCE] = v->cfg->release_fence ? v->cfg->release_fence : "",
        [RR_FORCE_ARG_SLOT] = slot, [RR_FORCE_ARG_MAX_SLOT] = top, [RR_FORCE_ARG_STATE_TTL_MS] = keep,
        [RR_FORCE_ARG_WAITER_PREFIX] = v->keys.q_prefix,
        [RR_FORCE_ARG_WAKE_PREFIX] = v->keys.wake_prefix,
    };

    snprintf(keep, sizeof keep, "%lld", (long long)v->cfg->state_ttl_ms);
    snprintf(slot, sizeof slot, "%d", k);
    snprintf(top, sizeof top, "%d", RR_LIMIT_MAX);
    for (int i = 0; i < v->n; i++) {
        args[RR_FORCE_ARG_SHARDED] = rr_script_sharded(v->conns[i]);
        if (rr_script_call(v->conns[i], RR_SCRIPT_FORCE, RR_FORCE_NKEYS, keys, RR_FORCE_NARGS,
                           args, on_reply, v) == 0)
            v->pending++;
    }
}

/* A round: the first (mode revoke or force) on v->target, a poll on
 * every slot still waiting. */
static void send_round(struct rv *v, const char *mode)
{
    bool poll = strcmp(mode, "poll") == 0;

    v->mode = mode;
    for (int k = 1; k <= RR_LIMIT_MAX; k++) {
        struct rv_slot *s = &v->slots[k];
        s->n_free = s->n_revoked = s->n_pending = s->n_deleted = s->n_fence = s->n_held =
            s->n_forever = 0;
        s->pttl = 0;
    }
    v->errors = v->answered = 0;
    v->err[0] = '\0';
    if (!poll)
        call_slot(v, v->target);
    else
        for (int k = 1; k <= RR_LIMIT_MAX; k++)
            if (v->slots[k].waiting)
                call_slot(v, k);
    if (v->pending == 0) {
        snprintf(v->err, sizeof v->err, "no master could be asked");
        v->exit_code = RR_EXIT_UNAVAILABLE;
        rr_log(RR_LOG_ERROR, "unavailable", NULL, "cannot release: %s", v->err);
        close_all(v);
    }
}

/* A force.lua entry's holder, "HOST PID" as its record has them. */
static void holder_of(const redisReply *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s", rr_record_str(e->element[3]), rr_record_str(e->element[4]));
}

/* Does a poll's entry e show another run's record than the holder's? A
 * run is its host and pid: a master that answered the holder's acquire
 * after the quorum was decided keeps its own draw of the fence, and must
 * not pass for a new run (a pid comes back only after its process is
 * gone, long after a revoked holder's release). */
static bool another_run(const struct rv_slot *s, const redisReply *e)
{
    char h[sizeof s->holder];

    holder_of(e, h, sizeof h);
    return strcmp(h, s->holder) != 0;
}

/* e: {slot, tag, pttl, host, pid, fence, status, heartbeat_ms, finished_ms} */
static void tally_slot(struct rv *v, const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 9 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[0]->integer < 1 ||
        e->element[0]->integer > RR_LIMIT_MAX)
        return;
    struct rv_slot *s = &v->slots[e->element[0]->integer];
    const char *tag = rr_record_str(e->element[1]);
    long long pttl = e->element[2]->type == REDIS_REPLY_INTEGER ? e->element[2]->integer : -2;

    if (pttl > s->pttl)
        s->pttl = pttl;
    if (strcmp(v->mode, "poll") != 0) {
        if (!s->who[0] && *rr_record_str(e->element[3])) {
            /* Another tenant may have written the record: escaped for the
             * terminal. */
            char host[256], pid[40], fence[40];
            snprintf(s->who, sizeof s->who, "%s pid %s (fence %s)",
                     rr_record_text(rr_record_str(e->element[3]), host, sizeof host),
                     rr_record_text(rr_record_str(e->element[4]), pid, sizeof pid),
                     rr_record_text(rr_record_str(e->element[5]), fence, sizeof fence));
            holder_of(e, s->holder, sizeof s->holder);
        }
        s->foreign = !s->who[0];
    } else if (s->foreign ? strcmp(tag, "HELD") == 0 : another_run(s, e)) {
        /* Only after the holder's lock was gone could a new run take it (a
         * foreign holder's mark is gone once anything else holds it). */
        s->replaced = true;
    }
    if (s->replaced)
        return (void)(strcmp(tag, "FREE") == 0 ? s->n_free++ : s->n_held++);
    snprintf(s->status, sizeof s->status, "%s", rr_record_str(e->element[6]));
    s->heartbeat = atoll(rr_record_str(e->element[7]));
    s->finished = atoll(rr_record_str(e->element[8]));
    if (strcmp(tag, "FREE") == 0)
        s->n_free++;
    else if (strcmp(tag, "REVOKED") == 0)
        s->n_revoked++;
    else if (strcmp(tag, "PENDING") == 0)
        s->n_pending++;
    else if (strcmp(tag, "DELETED") == 0) {
        s->n_deleted++;
        s->was_running = s->was_running || strcmp(rr_record_str(e->element[6]), "running") == 0;
    } else if (strcmp(tag, "FENCE") == 0)
        s->n_fence++;
    else if (strcmp(tag, "FOREVER") == 0)
        s->n_forever++;
    else
        s->n_held++;   /* poll: another holder's lock (ours is gone) */
}

static void tally(struct rv *v, struct rr_svc *c, int status, const redisReply *r)
{
    if (status != RR_REPLY_OK || r->type != REDIS_REPLY_ARRAY) {
        v->errors++;
        if (!v->err[0])
            snprintf(v->err, sizeof v->err, "%s",
                     status == RR_REPLY_OK ? (r->type == REDIS_REPLY_ERROR ? r->str
                                                                           : "unexpected reply")
                                           : rr_svc_error(c));
        return;
    }
    v->answered++;
    for (size_t i = 0; i < r->elements; i++)
        tally_slot(v, r->element[i]);
}

static void on_timer(uv_timer_t *t)
{
    struct rv *v = t->data;

    send_round(v, "poll");
}

/* Slot k's wait is over: its mark is gone everywhere, or the lease ended. */
static void report_wait(struct rv *v, int k, bool timed_out)
{
    struct rv_slot *s = &v->slots[k];
    char when[64], last[64], lb[400], status[4 * sizeof s->status];

    rr_record_time(s->finished, when, sizeof when);
    rr_record_time(s->heartbeat, last, sizeof last);
    label(v, k, lb, sizeof lb);
    s->waiting = false;
    if (timed_out) {
        rr_log(RR_LOG_ERROR, "release_wait", NULL,
               "the holder %s of %s has not released yet (last renewed at %s); it stays "
               "revoked until it does or its lease ends: nobody can acquire before",
               who(s), lb, last);
        v->exit_code = RR_EXIT_UNAVAILABLE;
    } else if (s->foreign) {
        fprintf(v->out, "released %s: its holder, %s, could no longer extend it; its lease "
                "ended, and the lock with it%s\n", lb, RV_FOREIGN,
                s->replaced ? "; another holder has it now" : "");
    } else if (s->replaced) {
        fprintf(v->out, "released %s: the holder %s released it; a new run holds it now\n",
                lb, who(s));
    } else if (strcmp(s->status, "running") != 0 && s->finished > 0) {
        fprintf(v->out, "released %s: the holder %s released it at %s, its run recorded "
                "%s%s\n", lb, who(s), when, rr_record_text(s->status, status, sizeof status),
                strcmp(s->status, "lost") == 0 ? " (its command was stopped)" : "");
    } else {
        fprintf(v->out, "released %s: the holder %s did not release by itself (last renewed "
                "at %s); its lease ended, and the lock with it\n", lb, who(s), last);
    }
}

static void poll_done(struct rv *v)
{
    bool more = false;

    for (int k = 1; k <= RR_LIMIT_MAX; k++) {
        struct rv_slot *s = &v->slots[k];
        if (!s->waiting)
            continue;
        if (s->n_pending > 0 && uv_now(v->loop) < v->deadline)
            more = true;
        else
            report_wait(v, k, s->n_pending > 0);
    }
    if (more)
        uv_timer_start(&v->timer, on_timer, RV_POLL_MS, 0);
    else
        close_all(v);
}

/* Nothing acted on: say why, one line per slot another fence holds or a
 * lock that never expires holds. */
static void nothing_done(struct rv *v, int n_kept)
{
    char lb[400];

    if (n_kept == 0 && v->answered == 0) {
        v->exit_code = unavailable(v);
    } else if (n_kept == 0) {
        if (v->target == 0 && v->slotted)
            fprintf(v->out, "no slot of the lock of %s is held; nothing to release\n",
                    v->cfg->name);
        else
            fprintf(v->out, "%s is not held; nothing to release\n",
                    label(v, v->target ? v->target : 1, lb, sizeof lb));
        v->exit_code = 1;
    } else {
        for (int k = 1; k <= RR_LIMIT_MAX; k++) {
            if (v->slots[k].n_fence > 0)
                fprintf(v->out, "%s is held by %s, not by fence %s; nothing released\n",
                        label(v, k, lb, sizeof lb),
                        v->slots[k].who[0] ? v->slots[k].who : "a holder whose record is gone",
                        v->cfg->release_fence);
            else if (v->slots[k].n_forever > 0)
                fprintf(v->out, "%s is held by %s, with no expiry: there is no lease to wait "
                        "for; nothing released (--force deletes it)\n",
                        label(v, k, lb, sizeof lb), RV_FOREIGN);
        }
        v->exit_code = 1;
    }
    close_all(v);
}

/* The first round's answers: slots deleted are reported, revoked ones
 * waited for, all at once, bounded by the longest lease among them. */
static void decide(struct rv *v)
{
    int acted = 0, n_kept = 0, waiting = 0;
    long long max_pttl = 0;
    char lb[400], d[32];

    for (int k = 1; k <= RR_LIMIT_MAX; k++) {
        struct rv_slot *s = &v->slots[k];
        acted += s->n_revoked + s->n_pending + s->n_deleted > 0;
        n_kept += s->n_fence + s->n_forever > 0;
    }
    if (acted == 0)
        return nothing_done(v, n_kept);
    if (v->errors)
        rr_log(RR_LOG_WARN, "partial", NULL, "%d master%s did not answer: %s", v->errors,
               v->errors == 1 ? "" : "s", v->err);
    for (int k = 1; k <= RR_LIMIT_MAX; k++) {
        struct rv_slot *s = &v->slots[k];
        if (s->n_revoked + s->n_pending + s->n_deleted == 0)
            continue;
        label(v, k, lb, sizeof lb);
        if (s->n_revoked + s->n_pending == 0) {
            fprintf(v->out, "released %s (%s) on %d of %d master%s\n", lb,
                    s->who[0] ? s->who : "holder unknown", s->n_deleted, v->n,
                    v->n == 1 ? "" : "s");
            if (v->cfg->force && (s->was_running || s->foreign))
                rr_log(RR_LOG_WARN, "forced", NULL,
                       "--force: the holder %s may run its command on until its next renewal; "
                       "a run that takes the lock meanwhile overlaps it", who(s));
            continue;
        }
        rr_duration_format(s->pttl, d, sizeof d);
        if (s->foreign)
            rr_log(RR_LOG_INFO, "revoked", NULL,
                   "revoked %s held by %s; waiting (at most %s) for its lease to end: its "
                   "holder can no longer extend or delete it", lb, who(s), d);
        else
            rr_log(RR_LOG_INFO, "revoked", NULL,
                   "revoked %s held by %s; waiting (at most %s, its lease) for it to stop its "
                   "command and release at its next renewal", lb, who(s), d);
        s->waiting = true;
        waiting++;
        if (s->pttl > max_pttl)
            max_pttl = s->pttl;
    }
    v->exit_code = 0;
    if (waiting == 0)
        return close_all(v);
    v->deadline = uv_now(v->loop) + (uint64_t)max_pttl + 500;
    uv_timer_init(v->loop, &v->timer);
    v->timer.data = v;
    v->waiting = true;
    uv_timer_start(&v->timer, on_timer, RV_POLL_MS, 0);
}

static void on_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct rv *v = arg;

    tally(v, c, status, r);
    if (--v->pending > 0)
        return;
    if (strcmp(v->mode, "poll") == 0)
        poll_done(v);
    else
        decide(v);
}

int rr_revoke_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out)
{
    struct rv *v = calloc(1, sizeof(*v));
    int code;

    if (!v) {
        rr_log(RR_LOG_ERROR, "software", NULL, "out of memory");
        return RR_EXIT_SOFTWARE;
    }
    v->loop = loop;
    v->cfg = cfg;
    v->out = out;
    v->n = cfg->n_endpoints;
    v->slotted = cfg->release_slot > 0 || cfg->all_slots;
    /* --fence F without --slot finds the slot whose holder has F. */
    v->target = cfg->release_slot ? cfg->release_slot
              : cfg->all_slots || cfg->release_fence ? 0 : 1;
    if (rr_job_keys(&v->keys, cfg->prefix, cfg->name, "") != 0) {
        rr_log(RR_LOG_ERROR, "usage", NULL, "job name and prefix are too long together");
        free(v);
        return RR_EXIT_USAGE;
    }
    rr_operator_name(v->host, sizeof v->host);   /* the history's "by" */
    snprintf(v->pid, sizeof(v->pid), "%ld", (long)getpid());
    for (int i = 0; i < v->n; i++) {
        if (!(v->conns[i] = rr_svc_config_new(loop, cfg, i))) {
            close_all(v);
            uv_run(loop, UV_RUN_DEFAULT);
            free(v);
            return RR_EXIT_SOFTWARE;
        }
    }
    send_round(v, cfg->force ? "force" : "revoke");
    uv_run(loop, UV_RUN_DEFAULT);
    code = v->exit_code;
    free(v);
    return code;
}
