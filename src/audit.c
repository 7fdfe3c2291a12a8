/* audit.c — the words of a run's messages (see audit.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "diag.h"
#include "duration.h"
#include "log.h"

int64_t rr_audit_wall_ms(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void fmt_dur(int64_t ms, char *buf, size_t len)
{
    rr_duration_format(ms < 0 ? 0 : ms, buf, len);
}

void rr_audit_enter(const struct rr_run_action *a)
{
    const char *from = rr_run_state_name(a->from), *to = rr_run_state_name(a->to);

    rr_log(RR_LOG_DEBUG, "state",
           (struct rr_field[]){ RR_FS("from", from), RR_FS("to", to), RR_FIELD_END },
           "%s -> %s", from, to);
}

void rr_audit_sleep(long long rank, int64_t sleep_ms)
{
    rr_log(RR_LOG_DEBUG, "waiting", NULL, "lock busy (queue place %lld); next try in %lldms",
           rank, (long long)sleep_ms);
}

static void say_acquired(const struct rr_audit *au, const struct rr_run_sm *sm,
                         const struct rr_acquire_result *res)
{
    if (res->failed[0]) {
        /* A degraded quorum: the run goes on, but one more failure and it
         * would not. A warning, so that -q still prints it (cron mails it)
         * and --syslog keeps it; it names each master that failed, and why. */
        rr_log_audit(RR_LOG_WARN, "acquired",
                     (struct rr_field[]){ RR_FN("fence", res->fence),
                                          RR_FN("acquire_ms", res->elapsed_ms),
                                          RR_FN("wait_ms", sm->wait_ms),
                                          RR_FN("masters", res->n_ok),
                                          RR_FN("masters_total", au->n),
                                          RR_FN("degraded", 1),
                                          RR_FS("failed_masters", res->failed),
                                          RR_FS("contain", au->contain ? au->contain : "tree"),
                                          RR_FIELD_END },
                     "acquired on %d of %d masters (fence %lld), a degraded quorum: %s",
                     res->n_ok, au->n, res->fence, res->failed);
        return;
    }
    rr_log(RR_LOG_INFO, "acquired",
           (struct rr_field[]){ RR_FN("fence", res->fence),
                                RR_FN("acquire_ms", res->elapsed_ms),
                                RR_FN("wait_ms", sm->wait_ms),
                                RR_FN("masters", res->n_ok),
                                RR_FS("contain", au->contain ? au->contain : "tree"),
                                RR_FN("masters_total", au->n), RR_FIELD_END },
           "acquired in %lldms (fence %lld, %d/%d master%s)",
           (long long)res->elapsed_ms, res->fence, res->n_ok, au->n, au->n == 1 ? "" : "s");
    /* What holds the command's processes, and what that promises. */
    if (au->cgroup && au->cgroup[0])
        rr_log(RR_LOG_INFO, "containment",
               (struct rr_field[]){ RR_FS("contain", "cgroup"), RR_FS("cgroup", au->cgroup),
                                    RR_FIELD_END },
               "containment: cgroup %s (cgroup.kill stops every process of the command at once)",
               au->cgroup);
    else
        rr_log(RR_LOG_INFO, "containment",
               (struct rr_field[]){ RR_FS("contain", "tree"), RR_FIELD_END },
               "containment: process tree (the guard is the subreaper of every process the "
               "command starts)");
}

/* " for 2d3h" after the holder's name: how long it has held the lock, from
 * the busy answer (a hung holder shows, not only its lease). */
static void held_for(const struct rr_acquire_result *res, char *holder, size_t len)
{
    char held[32];
    size_t n = strlen(holder);
    long long since = res->holder.since_ms;

    if (!n || since <= 0 || rr_audit_wall_ms() < since)
        return;
    fmt_dur((rr_audit_wall_ms() - since) / 1000 * 1000, held, sizeof held);
    snprintf(holder + n, len - n, " for %s", held);
}

/* Once per --wait, so that a CI log shows why nothing happens for a while. */
static void say_waiting(const struct rr_audit *au, const struct rr_run_sm *sm,
                        const struct rr_acquire_result *res)
{
    char w[32] = "forever", left_s[32] = "", holder[256] = "";
    bool forever = sm->wait_deadline == INT64_MAX;

    if (!forever)
        fmt_dur(au->cfg->wait_ms, w, sizeof w);
    if (res->holder.host[0])
        snprintf(holder, sizeof holder, ": held by %s pid %lld (fence %lld)",
                 res->holder.host, res->holder.pid, res->holder.fence);
    held_for(res, holder, sizeof holder);
    if (res->lease_ms >= 0)
        fmt_dur(res->lease_ms, left_s, sizeof left_s);
    rr_log(RR_LOG_NOTICE, "waiting",
           (struct rr_field[]){ RR_FS("holder_host", res->holder.host),
                                RR_FN("holder_pid", res->holder.pid),
                                RR_FN("holder_fence", res->holder.fence),
                                RR_FN("ttl_ms", res->lease_ms), RR_FIELD_END },
           "waiting %s%s for %s%s%s%s", forever ? "" : "up to ", w, au->cfg->name, holder,
           left_s[0] ? ", its lease ends in " : "", left_s);
}

static void say_busy(const struct rr_audit *au, const struct rr_acquire_result *res)
{
    char d[32] = "", holder[256] = "";

    if (res->holder.host[0])
        snprintf(holder, sizeof(holder), " by %s pid %lld (fence %lld)", res->holder.host,
                 res->holder.pid, res->holder.fence);
    held_for(res, holder, sizeof holder);
    if (res->lease_ms >= 0)
        fmt_dur(res->lease_ms, d, sizeof(d));
    if (!holder[0] && !d[0] && res->ahead > 0) {
        /* Nobody holds it: the queue's waiters come first, in turn. */
        rr_log_audit(RR_LOG_NOTICE, "busy",
                     (struct rr_field[]){ RR_FN("queued_ahead", res->ahead), RR_FIELD_END },
                     "%s: %lld waiter%s queued ahead (the lock is free; they take it in turn)",
                     au->cfg->wait_ms ? "gave up waiting" : "not running", res->ahead,
                     res->ahead == 1 ? " is" : "s are");
        return;
    }
    /* --limit N: every slot is taken; the holder named is the one whose
     * lease ends first. */
    char slots[96] = "lock is held";
    if (au->cfg->limit > 1)
        snprintf(slots, sizeof slots, "all %d slots are held (--limit %d); the one that frees first is held",
                 au->cfg->limit, au->cfg->limit);
    rr_log_audit(RR_LOG_NOTICE, "busy",
                 (struct rr_field[]){ RR_FS("holder_host", res->holder.host),
                                      RR_FN("holder_pid", res->holder.pid),
                                      RR_FN("holder_fence", res->holder.fence),
                                      RR_FN("ttl_ms", res->lease_ms), RR_FIELD_END },
                 "%s: %s%s%s%s%s", au->cfg->wait_ms ? "gave up waiting" : "not running", slots,
                 holder, d[0] ? ", " : "", d, d[0] ? " left" : "");
}

static void say_skipped(const struct rr_audit *au, const struct rr_acquire_result *res)
{
    const char *once = au->once_id ? au->once_id : "";

    rr_log_audit(RR_LOG_NOTICE, "skipped",
                 (struct rr_field[]){ RR_FS("once", once),
                                      RR_FS("host", res->holder.host),
                                      RR_FN("fence", res->holder.fence), RR_FIELD_END },
                 "not running: --once %s already succeeded%s%s", once,
                 res->holder.host[0] ? " on " : "", res->holder.host);
}

/* What the last attempt did, for the refusal: "failed (exit 3)". */
static void last_did(const struct rr_vote *v, char *buf, size_t len)
{
    if (strcmp(v->last, "failed") == 0 && v->signal > 0)
        snprintf(buf, len, "failed (signal %lld)", v->signal);
    else if (strcmp(v->last, "failed") == 0 && v->exit_code >= 0)
        snprintf(buf, len, "failed (exit %lld)", v->exit_code);
    else if (strcmp(v->last, "timeout") == 0)
        snprintf(buf, len, "timed out (--max-runtime)");
    else if (strcmp(v->last, "lost") == 0)
        snprintf(buf, len, "lost its lock");
    else if (strcmp(v->last, "abandoned") == 0 || !v->last[0])
        snprintf(buf, len, "died mid-way (abandoned), last seen");
    else
        snprintf(buf, len, "ended %s", v->last);
}

/* How long ago ms was, on the clock of the server that refused (now_ms,
 * its TIME; 0: unknown, then this host's): a host whose clock is a day
 * off would otherwise say "1d ago" of a run a second old. */
static int64_t ago_ms(int64_t ms, int64_t now_ms)
{
    return ms > 0 ? (now_ms > 0 ? now_ms : rr_audit_wall_ms()) - ms : 0;
}

/* A wall-clock time in ms as local "2026-12-05 02:00:01", and how long ago. */
static void when_text(int64_t ms, int64_t now_ms, char *buf, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char at[40] = "an unknown time", ago[32];

    if (ms > 0 && localtime_r(&t, &tm))
        strftime(at, sizeof at, "%Y-%m-%d %H:%M:%S %Z", &tm);
    fmt_dur(ago_ms(ms, now_ms), ago, sizeof ago);
    if (ms > 0)
        snprintf(buf, len, "%s (%s ago)", at, ago);
    else
        snprintf(buf, len, "%s", at);
}

static void say_stale(const struct rr_audit *au, const struct rr_acquire_result *res)
{
    const struct rr_config *cfg = au->cfg;
    const struct rr_vote *v = &res->holder;
    const char *once = au->once_id ? au->once_id : "";
    char d[32], did[64], when[96], again[4096], cmd[8192];

    /* The command it names reaches the same Redis, pasted as it is. */
    rr_cli_target_words(cfg, again, sizeof again);

    if (v->spent) {
        /* The --once ID's attempts are spent: one line that says what the
         * last one did, when, where, and what allows another. */
        bool dead = strcmp(v->last, "abandoned") == 0 || !v->last[0];
        last_did(v, did, sizeof did);
        when_text(v->when_ms, v->now_ms, when, sizeof when);
        rr_log_audit(RR_LOG_ERROR, "refused",
                     (struct rr_field[]){ RR_FS("once", once), RR_FS("last", v->last),
                                          RR_FN("attempts", v->used),
                                          RR_FN("attempts_allowed", v->allowed),
                                          RR_FS("host", v->host), RR_FN("pid", v->pid),
                                          RR_FN("fence", v->fence), RR_FIELD_END },
                     "not running: --once %s has used %lld of %lld attempt%s: the last one "
                     "%s %s on %s (pid %lld, fence %lld); check what it did%s, then this "
                     "allows one more: %s",
                     once, v->used, v->allowed, v->allowed == 1 ? "" : "s", did, when,
                     v->host[0] ? v->host : "an unknown host", v->pid, v->fence,
                     dead ? " ('--resolve succeeded' marks it done)" : "",
                     rr_cli_resolve_command(cmd, sizeof cmd, again, "retry", once, cfg->name));
        return;
    }
    fmt_dur(ago_ms(v->when_ms, v->now_ms), d, sizeof(d));
    rr_log_audit(RR_LOG_ERROR, "stale",
                 (struct rr_field[]){ RR_FS("once", once),
                                      RR_FS("host", v->host),
                                      RR_FN("pid", v->pid),
                                      RR_FN("fence", v->fence), RR_FIELD_END },
                 "not running: the previous run%s%s (%s pid %lld, fence %lld) died "
                 "mid-way, last seen %s ago; check what it did: '--resolve succeeded' "
                 "skips it, and this runs it again: %s",
                 once[0] ? " of --once " : "", once,
                 v->host[0] ? v->host : "unknown host", v->pid, v->fence, d,
                 rr_cli_resolve_command(cmd, sizeof cmd, again, once[0] ? "retry" : "clear", once,
                                        cfg->name));
}

/* The audit trail: who ran what, where, and how it ended. freed: whether
 * the release got through. */
static void say_released(const struct rr_audit *au, const struct rr_run_sm *sm, bool freed)
{
    const char *status = rr_job_status_name(sm->status);
    char how[48], after[64], d[32], k[32];
    int64_t held = rr_now_ms() - sm->acquired_at;

    if (sm->signal > 0)
        snprintf(how, sizeof how, "signal %d", sm->signal);
    else
        snprintf(how, sizeof how, "exit %d", sm->child_exit);
    /* Say what became of the lock: released, kept for --min-hold, or left
     * to expire because the release did not get through. */
    if (!freed) {
        fmt_dur(au->cfg->ttl_ms, k, sizeof k);
        snprintf(after, sizeof after, "lock left to expire within %s", k);
    } else if (au->cfg->min_hold_ms > held) {
        fmt_dur(au->cfg->min_hold_ms - held, k, sizeof k);
        snprintf(after, sizeof after, "lock kept %s more (--min-hold)", k);
    } else {
        snprintf(after, sizeof after, "lock released");
    }
    fmt_dur(held, d, sizeof(d));
    /* The command's own exit status, or the signal that ended it: one of
     * the two, as in the state record (never a made-up -1). */
    struct rr_field f[8];
    int n = 0;
    f[n++] = RR_FS("status", status);
    f[n++] = sm->signal > 0 ? RR_FN("signal", sm->signal) : RR_FN("exit_code", sm->child_exit);
    f[n++] = RR_FN("fence", sm->fence);
    f[n++] = RR_FN("held_ms", held);
    f[n++] = RR_FS("host", au->host);
    f[n++] = RR_FN("pid", getpid());
    f[n] = RR_FIELD_END;
    rr_log_audit(sm->status == RR_JOB_SUCCEEDED ? RR_LOG_INFO
                 : sm->status == RR_JOB_FAILED  ? RR_LOG_WARN
                                                : RR_LOG_ERROR,
                 "released", f, "run %s (%s) after %s, fence %lld, on %s pid %ld; %s", status,
                 how, d, sm->fence, au->host, (long)getpid(), after);
}

static const char *loss_why(const struct rr_run_action *a)
{
    switch (a->loss) {
    case RR_LOSS_NO_QUORUM:
        return "no quorum of renewals before the lease ran out";
    case RR_LOSS_STOPPED:
        return "redlock-run was stopped longer than the lease";
    default:
        return a->text;
    }
}

static const char *stop_name(int sig)
{
    return sig == SIGTSTP ? "SIGTSTP" : sig == SIGTTIN ? "SIGTTIN" : "SIGTTOU";
}

/* Why a job-control stop is not obeyed: nothing could continue it. */
static const char *no_job_why(bool terminal, bool command)
{
    if (!terminal)
        return command ? ", sent by a process: there is no terminal to continue it"
                       : ": there is no terminal to continue redlock-run";
    return ": redlock-run is not a job of a shell on its terminal, so nothing would "
           "continue it";
}

/* The messages of a run that holds the lock, and of its end. */
static void say_holding(const struct rr_audit *au, const struct rr_run_sm *sm,
                        const struct rr_run_action *a)
{
    const char *t = a->text ? a->text : "";
    char d[32];

    switch (a->msg) {
    case RR_MSG_CHILD_EXIT:
        rr_log(RR_LOG_DEBUG, "child_exit",
               (struct rr_field[]){ RR_FN("exit_code", a->n), RR_FIELD_END },
               "command ended with status %d", (int)a->n);
        break;
    case RR_MSG_LEASE_RAN_OUT:
        rr_log_progress(RR_LOG_ERROR, "lost", NULL,
                        "lock lost: the lease ran out before it could be renewed; the "
                        "command was stopped at its end");
        break;
    case RR_MSG_GUARD_DIED:
        rr_log_progress(RR_LOG_ERROR, "lost", NULL,
                        "lock lost: the guard (pid %ld) died: the lease could no longer be "
                        "enforced; the command was stopped", (long)a->n);
        break;
    case RR_MSG_LOST:
        rr_log_progress(RR_LOG_ERROR, "lost", NULL, "lock lost: %s; %s the command",
                        loss_why(a), a->n ? "killed" : "stopping");
        break;
    case RR_MSG_TIMEOUT:
        fmt_dur(au->cfg->timeout_ms, d, sizeof(d));
        rr_log_progress(RR_LOG_ERROR, "timeout", NULL,
                        "command ran longer than --max-runtime %s; stopping it", d);
        break;
    case RR_MSG_RENEWED_AGAIN:
        rr_log(RR_LOG_WARN, "renewed", NULL, "renewed again after %d failed attempt%s",
               (int)a->n, a->n == 1 ? "" : "s");
        break;
    case RR_MSG_RENEWED:
        rr_log(RR_LOG_INFO, "renewed", (struct rr_field[]){ RR_FN("rtt_ms", a->n), RR_FIELD_END },
               "renewed (%lldms round trip)", a->n);
        break;
    case RR_MSG_RENEW_FAILED:
        /* One warning per outage, not one per retry. */
        rr_log(a->n ? RR_LOG_WARN : RR_LOG_DEBUG, "renew_failed", NULL,
               "renewal failed (%s); retrying until the lease runs out", t);
        break;
    case RR_MSG_FORWARDED:
        rr_log(RR_LOG_INFO, "signal", NULL, "forwarded %s to the command", strsignal((int)a->n));
        break;
    case RR_MSG_STOPPED:
        rr_log(RR_LOG_WARN, "stopped", NULL,
               "stopped (SIGTSTP), and the command with us; the lease runs out in %lldms "
               "unless we are continued", a->n);
        break;
    case RR_MSG_TTY_STOP:
        rr_log(RR_LOG_WARN, "tty_stop", NULL,
               "the command was stopped by %s: it %s the terminal while redlock-run was in "
               "the background; stopping with it (fg continues both), or use --foreground",
               stop_name(a->sig), a->sig == SIGTTIN ? "read" : "changed or wrote to");
        break;
    case RR_MSG_CHILD_STOPPED:
        rr_log(RR_LOG_WARN, "child_stopped", NULL,
               "the command was stopped (%s) by another process; it keeps the lock until it "
               "is continued or ends, and the guard ends it when the lease can no longer be "
               "renewed", strsignal(a->sig));
        break;
    case RR_MSG_CHILD_CONTINUED:
        /* Without a terminal only kill(2) sends these: say so, not "read
         * the terminal". Once a warning, then (a command that keeps
         * stopping itself) only in the debug log. */
        rr_log(a->n ? RR_LOG_WARN : RR_LOG_DEBUG, "child_continued",
               (struct rr_field[]){ RR_FS("stop_signal", stop_name(a->sig)), RR_FIELD_END },
               "the command was stopped by %s%s; continued it (the lease and --max-runtime "
               "still apply)", stop_name(a->sig), no_job_why(a->terminal, true));
        break;
    case RR_MSG_TSTP_IGNORED:
        rr_log(a->n ? RR_LOG_WARN : RR_LOG_DEBUG, "sigtstp_ignored", NULL,
               "ignored SIGTSTP%s; the command runs on, under its lease",
               no_job_why(a->terminal, false));
        break;
    case RR_MSG_MIN_HOLD:
        fmt_dur(a->n, d, sizeof(d));
        rr_log(RR_LOG_INFO, "min_hold", NULL, "keeping the lock %s longer (--min-hold)", d);
        break;
    case RR_MSG_RELEASE_FAILED:
        fmt_dur(au->cfg->ttl_ms, d, sizeof(d));
        rr_log(RR_LOG_WARN, "release_failed", NULL,
               "could not release the lock (%s); it expires by itself within %s", t, d);
        break;
    case RR_MSG_RELEASE_NOT_SENT:
        rr_log(RR_LOG_WARN, "release_failed", NULL,
               "could not release the lock; it expires by itself");
        break;
    case RR_MSG_RELEASED:
        say_released(au, sm, a->n != 0);
        break;
    case RR_MSG_RELEASE_RETRY:
        fmt_dur(a->ms, d, sizeof(d));
        rr_log(a->n ? RR_LOG_WARN : RR_LOG_DEBUG, "release_retry", NULL,
               "the release did not land (%s); retrying while the lease lasts (%s left), "
               "the lock still renewed", t, d);
        break;
    case RR_MSG_RELEASE_LANDED:
        rr_log(RR_LOG_WARN, "release_landed",
               (struct rr_field[]){ RR_FN("attempts", a->n), RR_FIELD_END },
               "the release landed at attempt %lld; the outcome is recorded", a->n);
        break;
    case RR_MSG_UNRECORDED:
        rr_log_audit(RR_LOG_ERROR, "unrecorded",
                     (struct rr_field[]){ RR_FN("exit_code", a->n), RR_FIELD_END },
                     "the command ended with status %lld, but its outcome could not be "
                     "recorded (%s): the record may still read 'running' until the lock "
                     "expires, and then 'abandoned'; check the command's own results before "
                     "running it again (exit status 74)", a->n, t);
        break;
    default:
        break;
    }
}

void rr_audit_degraded(const struct rr_audit *au, const struct rr_run_sm *sm,
                       const struct rr_acquire_result *res)
{
    if (res->failed[0])
        say_acquired(au, sm, res);
}

void rr_audit_say(const struct rr_audit *au, const struct rr_run_sm *sm,
                  const struct rr_run_action *a, const struct rr_acquire_result *res)
{
    const char *t = a->text ? a->text : "";
    char d[32];

    switch (a->msg) {
    case RR_MSG_SETUP:
        rr_log_audit(RR_LOG_ERROR, "setup", NULL, "%s", t);
        break;
    case RR_MSG_ACQUIRE_NOT_SENT:
        rr_log_audit(RR_LOG_ERROR, "internal", NULL, "cannot send the acquire request");
        break;
    case RR_MSG_ABANDONED:
        /* Said under -q too: a job run again after a dead run is news. */
        rr_log_audit(RR_LOG_WARN, "abandoned", NULL,
                     "the previous run died without finishing (recorded as abandoned "
                     "in the history); running anyway (--on-stale run)");
        break;
    case RR_MSG_WAITED:
        fmt_dur(sm->wait_ms, d, sizeof(d));
        rr_log(RR_LOG_NOTICE, "waited",
               (struct rr_field[]){ RR_FN("wait_ms", sm->wait_ms), RR_FIELD_END },
               "got the lock after waiting %s", d);
        break;
    case RR_MSG_ACQUIRED:
        say_acquired(au, sm, res);
        break;
    case RR_MSG_WAITING:
        say_waiting(au, sm, res);
        break;
    case RR_MSG_BUSY:
        say_busy(au, res);
        break;
    case RR_MSG_SKIPPED:
        say_skipped(au, res);
        break;
    case RR_MSG_STALE:
        say_stale(au, res);
        break;
    case RR_MSG_CONFIG:
        rr_log_audit(RR_LOG_ERROR, "config", NULL, "cannot take the lock: %s", t);
        break;
    case RR_MSG_UNAVAILABLE_WAIT:
        rr_log(RR_LOG_WARN, "unavailable", NULL,
               "cannot take the lock: %s; retrying until --wait runs out", t);
        break;
    case RR_MSG_UNAVAILABLE:
        rr_log_audit(RR_LOG_ERROR, "unavailable", NULL, "cannot take the lock: %s; %s", t,
                     rr_diag_unavailable_hint(t));
        break;
    case RR_MSG_LATE:
        rr_log_audit(RR_LOG_ERROR, "late", NULL, "%s; try again", t);
        break;
    case RR_MSG_EXEC_FAILED:
        rr_log_audit(RR_LOG_ERROR, "exec_failed", NULL,
                     "%s; it never started: the lock is given back, nothing is recorded", t);
        break;
    default:
        say_holding(au, sm, a);
        break;
    }
}
