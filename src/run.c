/* run.c — the run state machine (see run.h for the picture). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "diag.h"
#include "service.h"
#include "duration.h"
#include "lock.h"
#include "log.h"
#include "queue.h"
#include "run.h"
#include "svc_config.h"

enum state { ACQUIRING, WAITING, RUNNING, STOPPING, RELEASING, DONE };

static const char *const state_names[] = {
    "acquiring", "waiting", "running", "stopping", "releasing", "done",
};

/* Signals forwarded to the child's process group while it runs. */
static const int fwd_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_SIGNALS (sizeof(fwd_signals) / sizeof(fwd_signals[0]))

struct run {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    enum state state;
    int exit_code;
    struct rr_run_report rep;

    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n;
    struct rr_waiter *waiter;     /* --wait: our place in the queue (queue.c) */
    struct rr_lock *lock;
    char host[256];

    /* Acquisition and waiting. */
    int64_t t_start;              /* monotonic, when we began */
    int64_t wait_deadline;        /* monotonic; INT64_MAX = forever */
    int64_t backoff_ms;
    bool woken;                   /* a release message came during an acquire */
    bool leaving;                 /* leaving the queue, then exit with leave_code */
    int leave_code;
    int abort_signal;             /* a terminating signal before the child ran */
    int warned_unavailable;       /* said once that Redis is down while waiting */
    bool said_waiting;            /* said once what we wait for */

    /* Holding. */
    int64_t acquired_at;          /* monotonic */
    int slot;                     /* --limit: REDLOCK_SLOT */
    int64_t valid_until;          /* monotonic: lease end as we must assume it */
    int64_t renew_ms, stop_grace_ms;
    bool renew_in_flight;
    int renew_failures;           /* in a row */
    const char *final_status;     /* set when the reason to stop is ours */
    int final_code;

    struct rr_child *child;
    bool child_started;
    char **child_env;

    uv_timer_t renew_timer, lost_timer, timeout_timer;
    uv_signal_t sigs[N_SIGNALS];
    uv_signal_t sigtstp, sigcont;
};

static void enter(struct run *r, enum state s);
static void try_acquire(struct run *r);
static void give_up(struct run *r, int code);

static int64_t wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void fmt_dur(int64_t ms, char *buf, size_t len)
{
    rr_duration_format(ms < 0 ? 0 : ms, buf, len);
}

/* ---- shutdown ---- */

static void close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

/* Close every handle we own; the loop then runs dry and rr_run returns. */
static void finish(struct run *r, int code)
{
    if (r->state == DONE)
        return;
    r->exit_code = code;
    enter(r, DONE);
    close_if_open((uv_handle_t *)&r->renew_timer);
    close_if_open((uv_handle_t *)&r->lost_timer);
    close_if_open((uv_handle_t *)&r->timeout_timer);
    close_if_open((uv_handle_t *)&r->sigtstp);
    close_if_open((uv_handle_t *)&r->sigcont);
    for (size_t i = 0; i < N_SIGNALS; i++) {
        close_if_open((uv_handle_t *)&r->sigs[i]);
        /* The run is over (lock given back, child reaped): a late signal
         * must not turn the exit status into a death by signal. */
        signal(fwd_signals[i], SIG_IGN);
    }
    rr_waiter_close(r->waiter);
    for (int i = 0; i < r->n; i++) {
        if (r->conns[i])
            rr_svc_close(r->conns[i]);
        r->conns[i] = NULL;
    }
    if (r->child) {
        rr_child_free(r->child);
        r->child = NULL;
    }
}

static void enter(struct run *r, enum state s)
{
    rr_log(RR_LOG_DEBUG, "state", (struct rr_field[]){ RR_FS("from", state_names[r->state]),
                                                       RR_FS("to", state_names[s]),
                                                       RR_FIELD_END },
           "%s -> %s", state_names[r->state], state_names[s]);
    r->state = s;
}

/* ---- releasing ---- */

static void on_released(struct rr_lock *lk, int released, int written, int errors,
                        const char *err, void *arg)
{
    struct run *r = arg;
    char d[32];

    (void)lk;
    (void)written;
    if (errors > 0 && released < rr_lock_quorum(r->n)) {
        fmt_dur(r->cfg->ttl_ms, d, sizeof(d));
        rr_log(RR_LOG_WARN, "release_failed", NULL,
               "could not release the lock (%s); it expires by itself within %s",
               err, d);
    }
    if (r->child_started) {
        /* The audit trail: who ran what, where, and how it ended. */
        char how[48], after[64];
        bool ok = strcmp(r->rep.status, "succeeded") == 0;
        bool freed = !(errors > 0 && released < rr_lock_quorum(r->n));
        int64_t held = rr_now_ms() - r->acquired_at;
        if (r->rep.signal > 0)
            snprintf(how, sizeof how, "signal %d", r->rep.signal);
        else
            snprintf(how, sizeof how, "exit %d", r->rep.child_exit);
        /* Say what became of the lock: released, kept for --min-hold, or
         * left to expire because the release did not get through. */
        char k[32];
        if (!freed) {
            fmt_dur(r->cfg->ttl_ms, k, sizeof k);
            snprintf(after, sizeof after, "lock left to expire within %s", k);
        } else if (r->cfg->min_hold_ms > held) {
            fmt_dur(r->cfg->min_hold_ms - held, k, sizeof k);
            snprintf(after, sizeof after, "lock kept %s more (--min-hold)", k);
        } else {
            snprintf(after, sizeof after, "lock released");
        }
        fmt_dur(held, d, sizeof(d));
        rr_log_audit(ok ? RR_LOG_INFO : strcmp(r->rep.status, "failed") == 0 ? RR_LOG_WARN
                                                                             : RR_LOG_ERROR,
                     "released",
                     (struct rr_field[]){ RR_FS("status", r->rep.status),
                                          RR_FN("exit_code", r->rep.child_exit),
                                          RR_FN("signal", r->rep.signal),
                                          RR_FN("fence", r->rep.fence),
                                          RR_FN("held_ms", rr_now_ms() - r->acquired_at),
                                          RR_FIELD_END },
                     "run %s (%s) after %s, fence %lld, on %s pid %ld; %s",
                     r->rep.status, how, d, r->rep.fence, r->host, (long)getpid(), after);
        finish(r, r->exit_code);
        return;
    }
    /* A lock given back unused (a signal, a late start): with several
     * masters we were still queued; leave now rather than on expiry. */
    give_up(r, r->exit_code);
}

static void release(struct run *r)
{
    int64_t held = rr_now_ms() - r->acquired_at;
    struct rr_release_info ri = {
        .status = r->rep.status,
        .exit_code = r->rep.child_exit,
        .signal = r->rep.signal,
        /* --min-hold keeps a late server from running the job again; a run
         * whose command never started has nothing to protect. */
        .hold_ms = r->child_started && r->cfg->min_hold_ms > held ? r->cfg->min_hold_ms - held : 0,
        .wait_ms = r->rep.wait_ms,
    };

    enter(r, RELEASING);
    uv_timer_stop(&r->renew_timer);
    uv_timer_stop(&r->lost_timer);
    uv_timer_stop(&r->timeout_timer);
    if (ri.hold_ms > 0) {
        char d[32];
        fmt_dur(ri.hold_ms, d, sizeof(d));
        rr_log(RR_LOG_INFO, "min_hold", NULL, "keeping the lock %s longer (--min-hold)", d);
    }
    if (rr_lock_release(r->lock, &ri, on_released, r) != 0) {
        rr_log(RR_LOG_WARN, "release_failed", NULL,
               "could not release the lock; it expires by itself");
        finish(r, r->exit_code);
    }
}

/* ---- the child ---- */

static void on_child_exit(struct rr_child *ch, int wstatus, void *arg)
{
    struct run *r = arg;

    (void)ch;
    /* The guard stopped it because the lease ran out while we could not
     * act (stopped, blocked, slow): that is a loss, whatever we saw. */
    if (rr_child_lease_ran_out(ch) && !(r->final_status && strcmp(r->final_status, "lost") == 0)) {
        r->final_status = "lost";
        r->final_code = RR_EXIT_LOST;
        rr_log(RR_LOG_ERROR, "lost", NULL,
               "lock lost: the lease ran out before it could be renewed; the command "
               "was stopped at its end");
    }
    r->rep.child_exit = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    r->rep.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    if (r->final_status) {
        r->rep.status = r->final_status;
        r->exit_code = r->final_code;
    } else {
        r->exit_code = rr_child_exit_code(wstatus);
        r->rep.status = r->exit_code == 0 ? "succeeded" : "failed";
    }
    rr_log(RR_LOG_DEBUG, "child_exit",
           (struct rr_field[]){ RR_FN("exit_code", rr_child_exit_code(wstatus)),
                                RR_FIELD_END },
           "command ended with status %d", rr_child_exit_code(wstatus));
    release(r);
}

/* Stop the child for our own reason (lost, timeout); the first reason wins. */
static void stop_child(struct run *r, const char *status, int code, int64_t grace_ms)
{
    if (!r->final_status) {
        r->final_status = status;
        r->final_code = code;
    }
    if (r->state == RUNNING)
        enter(r, STOPPING);
    rr_child_stop(r->child, grace_ms);
}

/* The lock is lost. certain: another holder may be running already (our
 * key is gone or has another token), so every millisecond of grace would be
 * overlap: SIGKILL now. Otherwise (renewals failed, the lease may be running
 * out) TERM now and KILL no later than the end of the validity we can vouch
 * for, however late this runs. Signals go out before anything is logged: a
 * log write may block. */
static void lose(struct run *r, bool certain, const char *why)
{
    if (r->final_status && strcmp(r->final_status, "lost") == 0)
        return;
    int64_t grace = certain ? 0 : r->valid_until - rr_now_ms();
    if (grace > r->stop_grace_ms)
        grace = r->stop_grace_ms;
    uv_timer_stop(&r->renew_timer);
    uv_timer_stop(&r->lost_timer);
    /* Even a --max-runtime stop in progress becomes a loss: the lock is gone. */
    r->final_status = NULL;
    if (grace <= 0) {
        r->final_status = "lost";
        r->final_code = RR_EXIT_LOST;
        if (r->state == RUNNING)
            enter(r, STOPPING);
        rr_child_kill_now(r->child);
    } else {
        stop_child(r, "lost", RR_EXIT_LOST, grace);
    }
    rr_log(RR_LOG_ERROR, "lost", NULL, "lock lost: %s; %s the command", why,
           grace <= 0 ? "killed" : "stopping");
}

static void on_lost_timer(uv_timer_t *t)
{
    lose(t->data, false, "no quorum of renewals before the lease ran out");
}

/* The child must be gone by the time the lease can have expired, so the stop
 * starts stop_grace_ms before the end of the validity we can vouch for. */
static void arm_lost_timer(struct run *r)
{
    int64_t due = r->valid_until - r->stop_grace_ms - rr_now_ms();

    uv_timer_start(&r->lost_timer, on_lost_timer, due > 0 ? (uint64_t)due : 0, 0);
}

static void on_renew_timer(uv_timer_t *t);

static void on_extended(struct rr_lock *lk, enum rr_extend res, int64_t sent_ms,
                        const char *err, void *arg)
{
    struct run *r = arg;

    (void)lk;
    r->renew_in_flight = false;
    if (r->state != RUNNING && r->state != STOPPING)
        return;
    if (r->final_status && strcmp(r->final_status, "lost") == 0)
        return;
    switch (res) {
    case RR_EXTEND_OK:
        if (r->renew_failures)
            rr_log(RR_LOG_WARN, "renewed", NULL, "renewed again after %d failed attempt%s",
                   r->renew_failures, r->renew_failures == 1 ? "" : "s");
        r->renew_failures = 0;
        r->valid_until = sent_ms + rr_lock_validity(r->cfg->ttl_ms, 0);
        rr_child_set_deadline(r->child, r->valid_until);
        arm_lost_timer(r);
        rr_log(RR_LOG_INFO, "renewed",
               (struct rr_field[]){ RR_FN("rtt_ms", rr_now_ms() - sent_ms),
                                    RR_FIELD_END },
               "renewed (%lldms round trip)", (long long)(rr_now_ms() - sent_ms));
        uv_timer_start(&r->renew_timer, on_renew_timer, (uint64_t)r->renew_ms, 0);
        break;
    case RR_EXTEND_LOST:
        lose(r, true, err);
        break;
    case RR_EXTEND_FAILED: {
        /* Retry soon, until the lost timer says the lease may be over. */
        int64_t retry = r->renew_ms / 4;
        if (retry > 250)
            retry = 250;
        if (retry < 20)
            retry = 20;
        /* One warning per outage, not one per retry. */
        rr_log(r->renew_failures++ ? RR_LOG_DEBUG : RR_LOG_WARN, "renew_failed", NULL,
               "renewal failed (%s); retrying until the lease runs out", err);
        uv_timer_start(&r->renew_timer, on_renew_timer, (uint64_t)retry, 0);
        break;
    }
    }
}

static void on_renew_timer(uv_timer_t *t)
{
    struct run *r = t->data;

    if (r->renew_in_flight)
        return;
    if (rr_lock_extend(r->lock, on_extended, r) == 0)
        r->renew_in_flight = true;
    else
        uv_timer_start(&r->renew_timer, on_renew_timer, (uint64_t)r->renew_ms, 0);
}

/* The first renewal comes after --renew, or sooner if a slow acquisition
 * left less validity than usual: halfway to the lost-lock deadline. */
static int64_t first_renew(const struct run *r)
{
    int64_t half = (r->valid_until - r->stop_grace_ms - rr_now_ms()) / 2;

    if (half < 1)
        half = 1;
    return r->renew_ms < half ? r->renew_ms : half;
}

static void on_timeout_timer(uv_timer_t *t)
{
    struct run *r = t->data;
    char d[32];

    fmt_dur(r->cfg->timeout_ms, d, sizeof(d));
    rr_log(RR_LOG_ERROR, "timeout", NULL, "command ran longer than --max-runtime %s; stopping it", d);
    stop_child(r, "timeout", RR_EXIT_TIMEOUT, r->cfg->kill_after_ms);
}

static int build_env(struct run *r)
{
    extern char **environ;
    char name[300], fence[64], ttl[64], once[300], slot[40];
    const char *drop[] = { "REDLOCK_PASSWORD", "REDLOCK_USER", "REDISCLI_AUTH",
                           "REDLOCK_SENTINEL_PASSWORD", "REDLOCK_SENTINEL_USER",
                           NULL, NULL };
    const char *add[6];
    int na = 0;
    const char *url = getenv("REDLOCK_URL");

    /* A URL with credentials in it is a password too. */
    if (url && strchr(url, '@'))
        drop[5] = "REDLOCK_URL";
    snprintf(name, sizeof(name), "REDLOCK_NAME=%s", r->cfg->name);
    snprintf(fence, sizeof(fence), "REDLOCK_FENCE=%lld", r->rep.fence);
    snprintf(ttl, sizeof(ttl), "REDLOCK_TTL_MS=%lld", (long long)r->cfg->ttl_ms);
    add[na++] = name;
    add[na++] = fence;
    add[na++] = ttl;
    snprintf(slot, sizeof(slot), "REDLOCK_SLOT=%d", r->slot > 0 ? r->slot : 1);
    add[na++] = slot;
    if (r->cfg->once_id[0]) {
        snprintf(once, sizeof(once), "REDLOCK_ONCE=%s", r->cfg->once_id);
        add[na++] = once;
    }
    add[na] = NULL;
    r->child_env = rr_child_env(environ, drop, add);
    return r->child_env ? 0 : -1;
}

static void start_child(struct run *r)
{
    char err[RR_ERRLEN];
    int rc;

    if (build_env(r) != 0) {
        rc = -1;
        snprintf(err, sizeof(err), "out of memory");
    } else {
        struct rr_child_opts co = { .foreground = r->cfg->foreground,
                                    .deadline_ms = r->valid_until,
                                    .grace_ms = r->stop_grace_ms };
        rc = rr_child_spawn(r->loop, &r->child, r->cfg->command, r->child_env, &co,
                            on_child_exit, r, err, sizeof(err));
    }
    if (rc == RR_SPAWN_LATE) {
        /* Nothing ran: give the lock back as an aborted acquisition. */
        rr_log(RR_LOG_ERROR, "late", NULL, "%s; try again", err);
        r->exit_code = RR_EXIT_UNAVAILABLE;
        r->rep.status = "";
        release(r);
        return;
    }
    if (rc != 0) {
        rr_log(RR_LOG_ERROR, "exec_failed", NULL, "%s", err);
        r->exit_code = rc == -127 ? RR_EXIT_NOTFOUND : rc == -126 ? RR_EXIT_NOEXEC
                                                                 : RR_EXIT_OSERR;
        r->rep.child_exit = r->exit_code;
        r->rep.status = "failed";
        release(r);
        return;
    }
    r->child_started = true;
    /* We were suspended in vfork while the command exec'd (however long a
     * slow exec takes): libuv's cached time is from before it, and timers
     * count from that. Without this, an exec of a third of the lease made
     * the lost timer fire at once, and a valid run ended as lost. */
    uv_update_time(r->loop);
    enter(r, RUNNING);
    uv_timer_start(&r->renew_timer, on_renew_timer, (uint64_t)first_renew(r), 0);
    arm_lost_timer(r);
    if (r->cfg->timeout_ms > 0 && r->cfg->timeout_ms != RR_INF)
        uv_timer_start(&r->timeout_timer, on_timeout_timer, (uint64_t)r->cfg->timeout_ms, 0);
}

/* ---- waiting (the queue and its wake-ups: queue.c) ---- */

static void on_retry(void *arg)
{
    struct run *r = arg;

    /* Only from WAITING: one acquisition at a time (each draws the token). */
    if (r->state == WAITING && !r->leaving)
        try_acquire(r);
}

/* A message or our subscription says it may be our turn. */
static void on_wake(void *arg)
{
    struct run *r = arg;

    if (r->leaving)
        return;
    if (r->state == WAITING)
        try_acquire(r);
    else if (r->state == ACQUIRING)
        r->woken = true;
}

static void on_left(void *arg)
{
    struct run *r = arg;

    finish(r, r->leave_code);
}

/* End a run that did not get the lock: a waiter leaves the queue first, at
 * once, so that nobody behind it waits for it. */
static void give_up(struct run *r, int code)
{
    r->leaving = true;
    r->leave_code = code;
    if (rr_waiter_leave(r->waiter, on_left, r) != 0)
        finish(r, code);
}

static void wait_more(struct run *r, const struct rr_acquire_result *res)
{
    int64_t now = rr_now_ms();
    int64_t left = r->wait_deadline == INT64_MAX ? INT64_MAX : r->wait_deadline - now;
    int64_t sleep_ms;

    enter(r, WAITING);
    if (!r->said_waiting && res->result == RR_ACQ_BUSY) {
        /* Once, so that a CI log shows why nothing happens for a while. */
        char w[32] = "forever", left_s[32] = "", holder[256] = "";
        r->said_waiting = true;
        if (r->wait_deadline != INT64_MAX)
            fmt_dur(r->cfg->wait_ms, w, sizeof w);
        if (res->holder.host[0])
            snprintf(holder, sizeof holder, ": held by %s pid %lld (fence %lld)",
                     res->holder.host, res->holder.pid, res->holder.fence);
        if (res->retry_ms >= 0)
            fmt_dur(res->retry_ms, left_s, sizeof left_s);
        rr_log(RR_LOG_NOTICE, "waiting",
               (struct rr_field[]){ RR_FS("holder_host", res->holder.host),
                                    RR_FN("holder_pid", res->holder.pid),
                                    RR_FN("holder_fence", res->holder.fence),
                                    RR_FN("ttl_ms", res->retry_ms), RR_FIELD_END },
               "waiting %s%s for %s%s%s%s", r->wait_deadline == INT64_MAX ? "" : "up to ", w,
               r->cfg->name, holder, left_s[0] ? ", its lease ends in " : "", left_s);
    }
    /* Queued: the next try is when we are woken, or to refresh our place.
     * Not queued (Redis down): a jittered exponential backoff. Either way
     * bounded by the holder's lease, since a crashed holder sends nothing. */
    sleep_ms = rr_queue_sleep_ms(res->rank, res->retry_ms, rr_queue_entry_ttl(r->cfg->ttl_ms),
                                 r->backoff_ms, random(), left);
    if (res->rank < 0 && r->backoff_ms < 2000)
        r->backoff_ms *= 2;
    rr_log(RR_LOG_DEBUG, "waiting", NULL, "lock busy (queue place %lld); next try in %lldms",
           res->rank, (long long)sleep_ms);
    rr_waiter_sleep(r->waiter, sleep_ms, res->rank >= 0, on_retry, r);
}

/* ---- acquiring ---- */


static void busy_message(struct run *r, const struct rr_acquire_result *res)
{
    char d[32] = "", holder[256] = "";

    if (res->holder.host[0])
        snprintf(holder, sizeof(holder), " by %s pid %lld (fence %lld)", res->holder.host,
                 res->holder.pid, res->holder.fence);
    if (res->retry_ms >= 0)
        fmt_dur(res->retry_ms, d, sizeof(d));
    rr_log_audit(RR_LOG_NOTICE, "busy",
           (struct rr_field[]){ RR_FS("holder_host", res->holder.host),
                                RR_FN("holder_pid", res->holder.pid),
                                RR_FN("holder_fence", res->holder.fence),
                                RR_FN("ttl_ms", res->retry_ms), RR_FIELD_END },
           "%s: lock is held%s%s%s%s", r->cfg->wait_ms ? "gave up waiting" : "not running",
           holder, d[0] ? ", " : "", d, d[0] ? " left" : "");
}

static void on_acquired(struct rr_lock *lk, const struct rr_acquire_result *res, void *arg)
{
    struct run *r = arg;
    char d[32];

    (void)lk;
    if (r->state == DONE)
        return;   /* answered with CLOSED while we shut down */
    if (r->abort_signal) {
        /* A signal came while we were asking; a lock we got is given back. */
        if (res->result == RR_ACQ_OK) {
            r->rep.status = "";
            r->exit_code = 128 + r->abort_signal;
            r->acquired_at = rr_now_ms();
            release(r);
        } else {
            give_up(r, 128 + r->abort_signal);
        }
        return;
    }
    switch (res->result) {
    case RR_ACQ_OK:
        rr_waiter_stop(r->waiter);
        r->slot = res->slot;
        r->acquired_at = rr_now_ms();
        r->valid_until = r->acquired_at + res->validity_ms;
        r->rep.fence = res->fence;
        r->rep.wait_ms = r->acquired_at - r->t_start;
        if (res->abandoned)
            rr_log(RR_LOG_WARN, "abandoned", NULL,
                   "the previous run died without finishing (recorded as abandoned "
                   "in the history); running anyway (--on-stale run)");
        if (r->said_waiting) {
            fmt_dur(r->rep.wait_ms, d, sizeof(d));
            rr_log(RR_LOG_NOTICE, "waited", (struct rr_field[]){ RR_FN("wait_ms", r->rep.wait_ms),
                                                                 RR_FIELD_END },
                   "got the lock after waiting %s", d);
        }
        rr_log(RR_LOG_INFO, "acquired",
               (struct rr_field[]){ RR_FN("fence", res->fence),
                                    RR_FN("acquire_ms", res->elapsed_ms),
                                    RR_FN("wait_ms", r->rep.wait_ms),
                                    RR_FN("masters", res->n_ok), RR_FIELD_END },
               "acquired in %lldms (fence %lld, %d/%d master%s)",
               (long long)res->elapsed_ms, res->fence, res->n_ok, r->n,
               r->n == 1 ? "" : "s");
        start_child(r);
        return;
    case RR_ACQ_BUSY:
        if (r->woken) {
            r->woken = false;
            try_acquire(r);
            return;
        }
        if (r->wait_deadline > rr_now_ms()) {
            wait_more(r, res);
            return;
        }
        r->rep.status = "busy";
        r->rep.wait_ms = rr_now_ms() - r->t_start;
        busy_message(r, res);
        give_up(r, r->cfg->conflict_exit_code);
        return;
    case RR_ACQ_DONE:
        r->rep.status = "skipped";
        rr_log_audit(RR_LOG_NOTICE, "skipped",
               (struct rr_field[]){ RR_FS("once", r->cfg->once_id),
                                    RR_FS("host", res->holder.host),
                                    RR_FN("fence", res->holder.fence), RR_FIELD_END },
               "not running: --once %s already succeeded%s%s", r->cfg->once_id,
               res->holder.host[0] ? " on " : "", res->holder.host);
        finish(r, RR_EXIT_OK);
        return;
    case RR_ACQ_STALE:
        r->rep.status = "refused";
        fmt_dur(res->holder.when_ms ? wall_ms() - res->holder.when_ms : 0, d, sizeof(d));
        rr_log_audit(RR_LOG_ERROR, "stale",
               (struct rr_field[]){ RR_FS("once", r->cfg->once_id),
                                    RR_FS("host", res->holder.host),
                                    RR_FN("pid", res->holder.pid),
                                    RR_FN("fence", res->holder.fence), RR_FIELD_END },
               "not running: the previous run%s%s (%s pid %lld, fence %lld) died "
               "mid-way, last seen %s ago; check what it did, then run "
               "'redlock-run --resolve succeeded%s%s %s' to skip it or "
               "'--resolve clear' to run again",
               r->cfg->once_id[0] ? " of --once " : "", r->cfg->once_id,
               res->holder.host[0] ? res->holder.host : "unknown host", res->holder.pid,
               res->holder.fence, d, r->cfg->once_id[0] ? " --once " : "",
               r->cfg->once_id, r->cfg->name);
        finish(r, RR_EXIT_STALE);
        return;
    case RR_ACQ_ERROR: {
        /* A refusal of our configuration: no retry can fix it, so not even
         * --wait waits it out. TLS verification says so on the connection;
         * the server's own refusals are told by their text. */
        char why[RR_ERRLEN + 256];
        for (int i = 0; i < r->n; i++)
            if (rr_svc_refused(r->conns[i])) {
                r->rep.status = "error";
                rr_log_audit(RR_LOG_ERROR, "config", NULL, "cannot take the lock: %s",
                             rr_svc_error(r->conns[i]));
                finish(r, RR_EXIT_CONFIG);
                return;
            }
        if (rr_diag_config(res->err, rr_cli_gave_password(r->cfg), why, sizeof why)) {
            r->rep.status = "error";
            rr_log_audit(RR_LOG_ERROR, "config", NULL, "cannot take the lock: %s", why);
            finish(r, RR_EXIT_CONFIG);
            return;
        }
        /* With --wait, an unreachable Redis is waited out like a busy lock:
         * a restart or a failover should not fail a job that may wait. */
        if (r->wait_deadline > rr_now_ms()) {
            if (!r->warned_unavailable++)
                rr_log(RR_LOG_WARN, "unavailable", NULL,
                       "cannot take the lock: %s; retrying until --wait runs out", res->err);
            wait_more(r, res);
            return;
        }
        r->rep.status = "error";
        rr_log_audit(RR_LOG_ERROR, "unavailable", NULL, "cannot take the lock: %s; %s", res->err,
                     strstr(res->err, "replicas confirmed")
                         ? "check the replicas' links to the master, or lower --sync-replicas"
                     : strstr(res->err, "TRYAGAIN")
                         ? "the job's cluster slot is being resharded: try again when it has moved, or give --wait"
                     : strstr(res->err, "CLUSTERDOWN")
                         ? "the cluster serves no master for the job's slot: check CLUSTER INFO, or give --wait"
                         : "check that Redis is up and -r/--redis is right");
        give_up(r, RR_EXIT_UNAVAILABLE);
        return;
    }
    }
}

static void try_acquire(struct run *r)
{
    enter(r, ACQUIRING);
    if (rr_lock_acquire(r->lock, on_acquired, r) != 0) {
        rr_log(RR_LOG_ERROR, "internal", NULL, "cannot send the acquire request");
        finish(r, RR_EXIT_SOFTWARE);
        return;
    }
}

/* ---- signals ---- */

static void on_signal(uv_signal_t *h, int sig)
{
    struct run *r = h->data;

    switch (r->state) {
    case RUNNING:
    case STOPPING:
        rr_child_signal(r->child, sig);
        /* A stopped command (SIGTTIN: it read the terminal) would hold a
         * terminating signal pending forever, and us with it. */
        if (sig != SIGUSR1 && sig != SIGUSR2)
            rr_child_signal(r->child, SIGCONT);
        rr_log(RR_LOG_INFO, "signal", NULL, "forwarded %s to the command", strsignal(sig));
        break;
    case ACQUIRING:
        r->abort_signal = sig;  /* on_acquired gives back what it got */
        break;
    case WAITING:
        if (r->leaving)
            finish(r, 128 + sig);   /* a second signal: do not wait for Redis */
        else
            give_up(r, 128 + sig);
        break;
    case RELEASING:
    case DONE:
        break;  /* the release is bounded by --redis-timeout; let it finish */
    }
}

/* SIGTSTP (Ctrl-Z, kill -TSTP): the command is in a process group of its
 * own, so it would work on while we, stopped, let the lease run out. So the
 * whole job stops: the command first, then us. The guard still enforces
 * the lease meanwhile; when we are continued, the command is continued
 * only if the lease still leaves the grace to stop it. (SIGTTIN and
 * SIGTTOU are ignored: we never read the terminal, and a log line must
 * not stop us.) */
static void check_lease_on_cont(struct run *r)
{
    if (r->state != RUNNING && r->state != STOPPING)
        return;
    if (rr_child_lease_ran_out(r->child) || rr_now_ms() >= r->valid_until - r->stop_grace_ms) {
        lose(r, false, "redlock-run was stopped longer than the lease");
        return;
    }
    rr_child_resume(r->child);
}

static void on_sigtstp(uv_signal_t *h, int sig)
{
    struct run *r = h->data;

    (void)sig;
    if (r->state == RUNNING || r->state == STOPPING) {
        rr_child_signal(r->child, SIGSTOP);
        rr_log(RR_LOG_WARN, "stopped", NULL,
               "stopped (SIGTSTP), and the command with us; the lease runs out in %lldms "
               "unless we are continued",
               (long long)(r->valid_until - rr_now_ms()));
    }
    raise(SIGSTOP);
    /* Here when continued. */
    check_lease_on_cont(r);
}

static void on_sigcont(uv_signal_t *h, int sig)
{
    (void)sig;
    check_lease_on_cont(h->data);
}

/* ---- setup ---- */

static int setup(struct run *r, const struct rr_config *cfg, char *err, size_t errlen)
{
    struct rr_lock_opts lo = { 0 };

    r->n = cfg->n_endpoints;
    for (int i = 0; i < r->n; i++) {
        if (!(r->conns[i] = rr_svc_config_new(r->loop, cfg, i))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (gethostname(r->host, sizeof(r->host) - 1) != 0)
        snprintf(r->host, sizeof(r->host), "unknown");
    lo.prefix = cfg->prefix;
    lo.name = cfg->name;
    lo.once_id = cfg->once_id;
    lo.ttl_ms = cfg->ttl_ms;
    lo.state_ttl_ms = cfg->state_ttl_ms;
    lo.refuse_stale = cfg->on_stale == RR_STALE_REFUSE;
    lo.host = r->host;
    lo.pid = (long)getpid();
    lo.limit = cfg->limit;
    lo.queue_ttl_ms = rr_queue_entry_ttl(cfg->ttl_ms);
    if (cfg->wait_ms != 0) {
        struct rr_job_keys keys;
        if (rr_job_keys(&keys, cfg->prefix, cfg->name, cfg->once_id) != 0) {
            snprintf(err, errlen, "job name, prefix and --once ID are too long together");
            return -1;
        }
        r->waiter = rr_waiter_new(r->loop, cfg, r->conns, r->n, &keys, on_wake, r, err, errlen);
        if (!r->waiter)
            return -1;
        lo.waiter = rr_waiter_id(r->waiter);
    }
    r->lock = rr_lock_new(r->conns, r->n, &lo, err, errlen);
    if (!r->lock)
        return -1;

    uv_timer_init(r->loop, &r->renew_timer);
    uv_timer_init(r->loop, &r->lost_timer);
    uv_timer_init(r->loop, &r->timeout_timer);
    r->renew_timer.data = r->lost_timer.data = r;
    r->timeout_timer.data = r;
    for (size_t i = 0; i < N_SIGNALS; i++) {
        uv_signal_init(r->loop, &r->sigs[i]);
        r->sigs[i].data = r;
        uv_signal_start(&r->sigs[i], on_signal, fwd_signals[i]);
    }
    uv_signal_init(r->loop, &r->sigtstp);
    uv_signal_init(r->loop, &r->sigcont);
    r->sigtstp.data = r->sigcont.data = r;
    uv_signal_start(&r->sigtstp, on_sigtstp, SIGTSTP);
    uv_signal_start(&r->sigcont, on_sigcont, SIGCONT);
    /* Renew at least twice per lease, and leave the stop of the child room
     * to finish before the lease can have run out. */
    r->renew_ms = cfg->renew_ms;
    if (r->renew_ms > cfg->ttl_ms / 2)
        r->renew_ms = cfg->ttl_ms / 2;
    if (r->renew_ms < 1)
        r->renew_ms = 1;
    r->stop_grace_ms = cfg->kill_after_ms;
    if (r->stop_grace_ms > cfg->ttl_ms / 4)
        r->stop_grace_ms = cfg->ttl_ms / 4;
    return 0;
}

int rr_run(uv_loop_t *loop, const struct rr_config *cfg)
{
    struct run r;
    char err[RR_ERRLEN] = "";

    memset(&r, 0, sizeof(r));
    r.loop = loop;
    r.cfg = cfg;
    r.state = ACQUIRING;
    r.rep.child_exit = -1;
    r.rep.status = "error";
    r.rep.start_s = (double)wall_ms() / 1000.0;
    r.t_start = rr_now_ms();
    r.backoff_ms = 100;
    r.wait_deadline = cfg->wait_ms == RR_INF ? INT64_MAX
                    : cfg->wait_ms > 0 ? r.t_start + cfg->wait_ms : 0;
    srandom((unsigned)(getpid() ^ (unsigned)uv_hrtime()));

    if (setup(&r, cfg, err, sizeof(err)) != 0) {
        rr_log(RR_LOG_ERROR, "setup", NULL, "%s", err);
        finish(&r, RR_EXIT_SOFTWARE);
    } else {
        try_acquire(&r);
    }
    uv_run(loop, UV_RUN_DEFAULT);

    r.rep.exit_code = r.exit_code;
    r.rep.end_s = (double)wall_ms() / 1000.0;
    if (cfg->metrics_file) {
        if (rr_metrics_write(cfg->metrics_file, cfg->name, &r.rep, err, sizeof(err)) != 0)
            rr_log(RR_LOG_WARN, "metrics", NULL, "%s", err);
    }
    rr_lock_free(r.lock);
    rr_waiter_free(r.waiter);
    rr_child_env_free(r.child_env);
    return r.exit_code;
}
