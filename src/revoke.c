/* revoke.c — --release: free a lock without an overlap (force.lua).
 *
 * A live holder's lock is marked revoked, not deleted: its next renewal
 * finds the mark, kills its command and releases; nobody can acquire
 * until then (or until the old lease ends). We wait for that, polling
 * every RV_POLL_MS, bounded by the longest lease left, and say what
 * happened. --force deletes at once (and says what that risks); --fence F
 * acts only on a holder of fence F. */
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
#include "revoke.h"
#include "scripts.h"
#include "svc_config.h"

#define RV_POLL_MS 100

struct rv {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    FILE *out;
    struct rr_job_keys keys;
    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n, pending;
    char host[256], pid[24];
    const char *mode;           /* "revoke", "force", "poll" */
    /* one round's tallies */
    int n_free, n_revoked, n_pending, n_deleted, n_fence, n_held, errors;
    long long max_pttl;
    bool was_running;           /* the holder's record said running (force) */
    char who[320];              /* "HOST pid P (fence F)", or "" unknown */
    char fence[32];             /* the holder's, from the first round */
    bool replaced;              /* poll: a new run's record replaced the holder's */
    char status[32];
    long long heartbeat, finished;
    char err[RR_ERRLEN];
    uint64_t deadline;          /* loop time: the wait ends */
    uv_timer_t timer;
    bool waiting;
    int exit_code;
};

static const char *sv(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : "";
}

static void fmt_time(long long ms, char *buf, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0 || !localtime_r(&t, &tm)) {
        snprintf(buf, len, "-");
        return;
    }
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
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

static void send_round(struct rv *v, const char *mode)
{
    const char *keys[RR_FORCE_NKEYS] = {
        [RR_FORCE_KEY_LOCK] = v->keys.lock, [RR_FORCE_KEY_STATE] = v->keys.state,
        [RR_FORCE_KEY_HISTORY] = v->keys.history,
    };
    const char *args[RR_FORCE_NARGS] = {
        [RR_FORCE_ARG_CHANNEL] = v->keys.channel, [RR_FORCE_ARG_HOST] = v->host,
        [RR_FORCE_ARG_PID] = v->pid, [RR_FORCE_ARG_SHARDED] = "0", [RR_FORCE_ARG_MODE] = mode,
        [RR_FORCE_ARG_FENCE] = v->cfg->release_fence ? v->cfg->release_fence : "",
    };

    v->mode = mode;
    v->n_free = v->n_revoked = v->n_pending = v->n_deleted = v->n_fence = v->n_held = 0;
    v->errors = 0;
    v->max_pttl = 0;
    v->err[0] = '\0';
    for (int i = 0; i < v->n; i++) {
        args[RR_FORCE_ARG_SHARDED] = rr_script_sharded(v->conns[i]);
        if (rr_script_call(v->conns[i], RR_SCRIPT_FORCE, RR_FORCE_NKEYS, keys, RR_FORCE_NARGS,
                           args, on_reply, v) == 0)
            v->pending++;
    }
    if (v->pending == 0) {
        snprintf(v->err, sizeof v->err, "no master could be asked");
        v->exit_code = RR_EXIT_UNAVAILABLE;
        rr_log(RR_LOG_ERROR, "unavailable", NULL, "cannot release: %s", v->err);
        close_all(v);
    }
}

/* r: {tag, pttl, host, pid, fence, status, heartbeat_ms, finished_ms} */
static void tally(struct rv *v, struct rr_svc *c, int status, const redisReply *r)
{
    if (status != RR_REPLY_OK || r->type != REDIS_REPLY_ARRAY || r->elements != 8) {
        v->errors++;
        if (!v->err[0])
            snprintf(v->err, sizeof v->err, "%s",
                     status == RR_REPLY_OK ? (r->type == REDIS_REPLY_ERROR ? r->str
                                                                           : "unexpected reply")
                                           : rr_svc_error(c));
        return;
    }
    const char *tag = sv(r->element[0]);
    long long pttl = r->element[1]->type == REDIS_REPLY_INTEGER ? r->element[1]->integer : -2;

    if (pttl > v->max_pttl)
        v->max_pttl = pttl;
    if (strcmp(v->mode, "poll") != 0) {
        if (!v->who[0] && *sv(r->element[2])) {
            snprintf(v->who, sizeof v->who, "%s pid %s (fence %s)", sv(r->element[2]),
                     sv(r->element[3]), sv(r->element[4]));
            snprintf(v->fence, sizeof v->fence, "%s", sv(r->element[4]));
        }
    } else if (strcmp(sv(r->element[4]), v->fence) != 0) {
        /* Only after the holder's lock was gone could a new run take it. */
        v->replaced = true;
    }
    if (v->replaced)
        return (void)(strcmp(sv(r->element[0]), "FREE") == 0 ? v->n_free++ : v->n_held++);
    snprintf(v->status, sizeof v->status, "%s", sv(r->element[5]));
    v->heartbeat = atoll(sv(r->element[6]));
    v->finished = atoll(sv(r->element[7]));
    if (strcmp(tag, "FREE") == 0)
        v->n_free++;
    else if (strcmp(tag, "REVOKED") == 0)
        v->n_revoked++;
    else if (strcmp(tag, "PENDING") == 0)
        v->n_pending++;
    else if (strcmp(tag, "DELETED") == 0) {
        v->n_deleted++;
        v->was_running = v->was_running || strcmp(sv(r->element[5]), "running") == 0;
    } else if (strcmp(tag, "FENCE") == 0)
        v->n_fence++;
    else
        v->n_held++;   /* poll: another holder's lock (ours is gone) */
}

static void on_timer(uv_timer_t *t)
{
    struct rv *v = t->data;

    send_round(v, "poll");
}

/* The wait is over: the mark is gone everywhere, or the lease ended. */
static void report_wait(struct rv *v, bool timed_out)
{
    char when[64], last[64];

    fmt_time(v->finished, when, sizeof when);
    fmt_time(v->heartbeat, last, sizeof last);
    if (timed_out) {
        rr_log(RR_LOG_ERROR, "release_wait", NULL,
               "the holder %s has not released yet (last renewed at %s); its lock stays "
               "revoked until it does or its lease ends: nobody can acquire before",
               v->who[0] ? v->who : "(unknown)", last);
        v->exit_code = RR_EXIT_UNAVAILABLE;
    } else if (v->replaced) {
        fprintf(v->out, "released the lock of %s: the holder %s released it; a new run "
                "holds the lock now\n", v->cfg->name,
                v->who[0] ? v->who : "(unknown)");
        v->exit_code = 0;
    } else if (strcmp(v->status, "running") != 0 && v->finished > 0) {
        fprintf(v->out, "released the lock of %s: the holder %s released it at %s, its run "
                "recorded %s%s\n", v->cfg->name, v->who[0] ? v->who : "(unknown)", when,
                v->status, strcmp(v->status, "lost") == 0 ? " (its command was stopped)" : "");
        v->exit_code = 0;
    } else {
        fprintf(v->out, "released the lock of %s: the holder %s did not release by itself "
                "(last renewed at %s); its lease ended, and the lock with it\n",
                v->cfg->name, v->who[0] ? v->who : "(unknown)", last);
        v->exit_code = 0;
    }
    close_all(v);
}

static void decide(struct rv *v)
{
    bool poll = strcmp(v->mode, "poll") == 0;

    if (poll) {
        if (v->n_pending > 0 && uv_now(v->loop) < v->deadline) {
            uv_timer_start(&v->timer, on_timer, RV_POLL_MS, 0);
            return;
        }
        report_wait(v, v->n_pending > 0);
        return;
    }
    if (v->n_revoked + v->n_pending + v->n_deleted + v->n_fence + v->n_held == 0) {
        if (v->n_free == 0) {
            v->exit_code = unavailable(v);
        } else {
            fprintf(v->out, "the lock of %s is not held; nothing to release\n", v->cfg->name);
            v->exit_code = 1;
        }
        close_all(v);
        return;
    }
    if (v->n_fence > 0 && v->n_revoked + v->n_pending + v->n_deleted == 0) {
        fprintf(v->out, "the lock of %s is held by %s, not by fence %s; nothing released\n",
                v->cfg->name, v->who[0] ? v->who : "a holder whose record is gone",
                v->cfg->release_fence);
        v->exit_code = 1;
        close_all(v);
        return;
    }
    if (v->errors)
        rr_log(RR_LOG_WARN, "partial", NULL, "%d master%s did not answer: %s", v->errors,
               v->errors == 1 ? "" : "s", v->err);
    if (v->n_revoked + v->n_pending == 0) {
        fprintf(v->out, "released the lock of %s (%s) on %d of %d master%s\n", v->cfg->name,
                v->who[0] ? v->who : "holder unknown", v->n_deleted, v->n,
                v->n == 1 ? "" : "s");
        if (v->cfg->force && v->was_running)
            rr_log(RR_LOG_WARN, "forced", NULL,
                   "--force: the holder %s may run its command on until its next renewal; a "
                   "run that takes the lock meanwhile overlaps it",
                   v->who[0] ? v->who : "(unknown)");
        v->exit_code = 0;
        close_all(v);
        return;
    }
    char d[32];
    rr_duration_format(v->max_pttl, d, sizeof d);
    rr_log(RR_LOG_INFO, "revoked", NULL,
           "revoked the lock of %s held by %s; waiting (at most %s, its lease) for it to stop "
           "its command and release at its next renewal", v->cfg->name,
           v->who[0] ? v->who : "(unknown)", d);
    v->deadline = uv_now(v->loop) + (uint64_t)v->max_pttl + 500;
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
    decide(v);
}

int rr_revoke_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out)
{
    struct rv v;

    memset(&v, 0, sizeof(v));
    v.loop = loop;
    v.cfg = cfg;
    v.out = out;
    v.n = cfg->n_endpoints;
    if (rr_job_keys(&v.keys, cfg->prefix, cfg->name, "") != 0) {
        rr_log(RR_LOG_ERROR, "usage", NULL, "job name and prefix are too long together");
        return RR_EXIT_USAGE;
    }
    if (gethostname(v.host, sizeof(v.host) - 1) != 0)
        snprintf(v.host, sizeof(v.host), "unknown");
    snprintf(v.pid, sizeof(v.pid), "%ld", (long)getpid());
    for (int i = 0; i < v.n; i++) {
        if (!(v.conns[i] = rr_svc_config_new(loop, cfg, i))) {
            close_all(&v);
            uv_run(loop, UV_RUN_DEFAULT);
            return RR_EXIT_SOFTWARE;
        }
    }
    send_round(&v, cfg->force ? "force" : "revoke");
    uv_run(loop, UV_RUN_DEFAULT);
    return v.exit_code;
}
