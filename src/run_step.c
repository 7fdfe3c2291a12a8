/* run_step.c — every transition of a run, decided in one place (run_step.h). */
#include <assert.h>
#include <signal.h>
#include <string.h>

#include "rr.h"
#include "run_step.h"

static const char *const state_names[] = {
    [RR_RUN_ACQUIRING] = "acquiring", [RR_RUN_WAITING] = "waiting",
    [RR_RUN_STARTING] = "starting",   [RR_RUN_RUNNING] = "running",
    [RR_RUN_STOPPING] = "stopping",
    [RR_RUN_RELEASING] = "releasing", [RR_RUN_RETRYING] = "retrying",
    [RR_RUN_DONE] = "done",
};

const char *rr_run_state_name(enum rr_run_state s)
{
    return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

void rr_run_sm_init(struct rr_run_sm *sm, const struct rr_run_params *p, int64_t now)
{
    memset(sm, 0, sizeof(*sm));
    sm->p = *p;
    sm->state = RR_RUN_ACQUIRING;
    sm->status = RR_JOB_ERROR;
    sm->child_exit = -1;
    sm->final_status = RR_JOB_NONE;
    sm->t_start = now;
    sm->backoff_ms = 100;
    sm->wait_deadline = p->wait_ms == RR_INF ? INT64_MAX : p->wait_ms > 0 ? now + p->wait_ms : 0;
    /* Renew at least twice per lease, and leave the stop of the child room
     * to finish before the lease can have run out. */
    sm->renew_ms = p->renew_ms;
    if (sm->renew_ms > p->ttl_ms / 2)
        sm->renew_ms = p->ttl_ms / 2;
    if (sm->renew_ms < 1)
        sm->renew_ms = 1;
    sm->stop_grace_ms = p->kill_after_ms;
    if (sm->stop_grace_ms > p->ttl_ms / 4)
        sm->stop_grace_ms = p->ttl_ms / 4;
}

/* ---- building the action list ---- */

static struct rr_run_action *push(struct rr_run_actions *out, enum rr_run_act kind)
{
    assert(out->n < RR_RUN_MAX_ACTIONS);
    struct rr_run_action *a = &out->a[out->n++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    return a;
}

static void push_ms(struct rr_run_actions *out, enum rr_run_act kind, int64_t ms)
{
    push(out, kind)->ms = ms;
}

static struct rr_run_action *say(struct rr_run_actions *out, enum rr_run_msg msg, long long n,
                                 const char *text)
{
    struct rr_run_action *a = push(out, RR_ACT_SAY);

    a->msg = msg;
    a->n = n;
    a->text = text;
    return a;
}

/* The state changes here, and the log line is an action so that it lands
 * where it belongs among the others. */
static void enter(struct rr_run_sm *sm, struct rr_run_actions *out, enum rr_run_state s)
{
    struct rr_run_action *a = push(out, RR_ACT_ENTER);

    a->from = sm->state;
    a->to = s;
    sm->state = s;
}

static void finish(struct rr_run_sm *sm, struct rr_run_actions *out, int code)
{
    if (sm->state == RR_RUN_DONE)
        return;
    sm->exit_code = code;
    enter(sm, out, RR_RUN_DONE);
    push(out, RR_ACT_FINISH)->code = code;
}

/* After a failed renewal, the next try: a quarter of --renew, 20..250 ms.
 * The one policy, while the command runs and while a release is retried. */
static int64_t renew_retry_ms(const struct rr_run_sm *sm)
{
    int64_t retry = sm->renew_ms / 4;

    return retry > 250 ? 250 : retry < 20 ? 20 : retry;
}

/* End a run that did not get the lock: a waiter leaves the queue first, at
 * once, so that nobody behind it waits for it (RR_EV_LEFT then finishes). */
static void give_up(struct rr_run_sm *sm, struct rr_run_actions *out, int code)
{
    sm->leaving = true;
    sm->leave_code = code;
    push(out, RR_ACT_LEAVE);
}

/* One acquisition at a time: each draws the token anew. */
static void try_acquire(struct rr_run_sm *sm, struct rr_run_actions *out)
{
    enter(sm, out, RR_RUN_ACQUIRING);
    push(out, RR_ACT_ACQUIRE);
}

/* --min-hold keeps a late server from running the job again; a run
 * whose command never started has nothing to protect. */
static int64_t hold_left(const struct rr_run_sm *sm, int64_t now)
{
    int64_t held = now - sm->acquired_at;

    return sm->child_started && sm->p.min_hold_ms > held ? sm->p.min_hold_ms - held : 0;
}

static void release(struct rr_run_sm *sm, struct rr_run_actions *out, int64_t now)
{
    int64_t hold = hold_left(sm, now);

    sm->release_tries = 1;
    enter(sm, out, RR_RUN_RELEASING);
    push(out, RR_ACT_DISARM_RENEW);
    push(out, RR_ACT_DISARM_LOST);
    push(out, RR_ACT_DISARM_TIMEOUT);
    if (hold > 0)
        say(out, RR_MSG_MIN_HOLD, hold, NULL);
    push_ms(out, RR_ACT_RELEASE, hold);
}

/* Queued: the next try is when we are woken, or to refresh our place.
 * Not queued (Redis down): a jittered exponential backoff. run.c draws the
 * sleep from these (rr_queue_sleep_ms). */
static void wait_more(struct rr_run_sm *sm, struct rr_run_actions *out, const struct rr_run_ev *ev)
{
    enter(sm, out, RR_RUN_WAITING);
    if (!sm->said_waiting && ev->kind == RR_EV_ACQ_BUSY) {
        /* Once, so that a CI log shows why nothing happens for a while. */
        sm->said_waiting = true;
        say(out, RR_MSG_WAITING, 0, NULL);
    }
    struct rr_run_action *a = push(out, RR_ACT_WAIT);
    a->rank = ev->rank;
    a->pttl = ev->pttl;
    a->backoff = sm->backoff_ms;
    a->left = sm->wait_deadline == INT64_MAX ? INT64_MAX : sm->wait_deadline - ev->now;
    if (ev->rank < 0 && sm->backoff_ms < 2000)
        sm->backoff_ms *= 2;
}

/* ---- holding ---- */

/* The child must be gone by the time the lease can have expired, so the stop
 * starts stop_grace_ms before the end of the validity we can vouch for. */
static void arm_lost(struct rr_run_sm *sm, struct rr_run_actions *out, int64_t now)
{
    int64_t due = sm->valid_until - sm->stop_grace_ms - now;

    push_ms(out, RR_ACT_ARM_LOST, due > 0 ? due : 0);
}

/* The first renewal comes after --renew, or sooner if a slow acquisition
 * left less validity than usual: halfway to the lost-lock deadline. */
static int64_t first_renew(const struct rr_run_sm *sm, int64_t now)
{
    int64_t half = (sm->valid_until - sm->stop_grace_ms - now) / 2;

    if (half < 1)
        half = 1;
    return sm->renew_ms < half ? sm->renew_ms : half;
}

/* Stop the child for our own reason (lost, timeout); the first reason wins. */
static void stop_child(struct rr_run_sm *sm, struct rr_run_actions *out,
                       enum rr_job_status status, int code, int64_t grace_ms)
{
    if (sm->final_status == RR_JOB_NONE) {
        sm->final_status = status;
        sm->final_code = code;
    }
    if (sm->state == RR_RUN_RUNNING)
        enter(sm, out, RR_RUN_STOPPING);
    push_ms(out, RR_ACT_STOP_CHILD, grace_ms);
}

/* The lock is lost. certain: another holder may be running already (our
 * key is gone or has another token), so every millisecond of grace would be
 * overlap: SIGKILL now. Otherwise (renewals failed, the lease may be running
 * out) TERM now and KILL no later than the end of the validity we can vouch
 * for. The signals go out before anything is logged: a log write may block. */
static void lose(struct rr_run_sm *sm, struct rr_run_actions *out, int64_t now, bool certain,
                 enum rr_run_loss why, const char *text)
{
    if (sm->final_status == RR_JOB_LOST)
        return;
    int64_t grace = certain ? 0 : sm->valid_until - now;
    if (grace > sm->stop_grace_ms)
        grace = sm->stop_grace_ms;
    push(out, RR_ACT_DISARM_RENEW);
    push(out, RR_ACT_DISARM_LOST);
    /* Even a --max-runtime stop in progress becomes a loss: the lock is gone. */
    sm->final_status = RR_JOB_NONE;
    if (grace <= 0) {
        sm->final_status = RR_JOB_LOST;
        sm->final_code = RR_EXIT_LOST;
        if (sm->state == RR_RUN_RUNNING)
            enter(sm, out, RR_RUN_STOPPING);
        push(out, RR_ACT_KILL_CHILD);
    } else {
        stop_child(sm, out, RR_JOB_LOST, RR_EXIT_LOST, grace);
    }
    say(out, RR_MSG_LOST, grace <= 0, text)->loss = why;
}

static bool holding(const struct rr_run_sm *sm)
{
    return sm->state == RR_RUN_STARTING || sm->state == RR_RUN_RUNNING ||
           sm->state == RR_RUN_STOPPING;
}

/* ---- the events ---- */

static void on_acquired(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                        struct rr_run_actions *out)
{
    if (sm->state == RR_RUN_DONE)
        return;   /* answered with CLOSED while we shut down */
    if (sm->abort_signal) {
        /* A signal came while we were asking; a lock we got is given back. */
        if (ev->kind == RR_EV_ACQ_OK) {
            sm->status = RR_JOB_NONE;
            sm->exit_code = 128 + sm->abort_signal;
            sm->acquired_at = ev->now;
            release(sm, out, ev->now);
        } else {
            give_up(sm, out, 128 + sm->abort_signal);
        }
        return;
    }
    switch (ev->kind) {
    case RR_EV_ACQ_OK:
        push(out, RR_ACT_WAITER_STOP);
        sm->slot = ev->slot;
        sm->acquired_at = ev->now;
        sm->valid_until = ev->now + ev->validity_ms;
        sm->fence = ev->fence;
        sm->wait_ms = ev->now - sm->t_start;
        if (ev->abandoned)
            say(out, RR_MSG_ABANDONED, 0, NULL);
        if (sm->said_waiting)
            say(out, RR_MSG_WAITED, 0, NULL);
        say(out, RR_MSG_ACQUIRED, 0, NULL);
        /* The lease is kept from here on: the command may be slow to start
         * (a loaded machine, an exec over NFS), and it starts only if the
         * lease still leaves the grace at its exec. */
        enter(sm, out, RR_RUN_STARTING);
        push_ms(out, RR_ACT_ARM_RENEW, first_renew(sm, ev->now));
        arm_lost(sm, out, ev->now);
        if (sm->p.timeout_ms > 0 && sm->p.timeout_ms != RR_INF)
            push_ms(out, RR_ACT_ARM_TIMEOUT, sm->p.timeout_ms);
        push(out, RR_ACT_START_CHILD);
        break;
    case RR_EV_ACQ_BUSY:
        if (sm->woken) {
            sm->woken = false;
            try_acquire(sm, out);
        } else if (sm->wait_deadline > ev->now) {
            wait_more(sm, out, ev);
        } else {
            sm->status = RR_JOB_BUSY;
            sm->wait_ms = ev->now - sm->t_start;
            say(out, RR_MSG_BUSY, 0, NULL);
            give_up(sm, out, sm->p.conflict_exit_code);
        }
        break;
    case RR_EV_ACQ_DONE:
        sm->status = RR_JOB_SKIPPED;
        say(out, RR_MSG_SKIPPED, 0, NULL);
        finish(sm, out, RR_EXIT_OK);
        break;
    case RR_EV_ACQ_STALE:
        sm->status = RR_JOB_REFUSED;
        say(out, RR_MSG_STALE, 0, NULL);
        finish(sm, out, RR_EXIT_STALE);
        break;
    case RR_EV_ACQ_REFUSED:
        /* No retry can fix our configuration: not even --wait waits it out. */
        sm->status = RR_JOB_ERROR;
        say(out, RR_MSG_CONFIG, 0, ev->text);
        finish(sm, out, RR_EXIT_CONFIG);
        break;
    default:   /* RR_EV_ACQ_ERROR */
        /* With --wait, an unreachable Redis is waited out like a busy lock:
         * a restart or a failover should not fail a job that may wait. */
        if (sm->wait_deadline > ev->now) {
            if (!sm->warned_unavailable) {
                sm->warned_unavailable = true;
                say(out, RR_MSG_UNAVAILABLE_WAIT, 0, ev->text);
            }
            wait_more(sm, out, ev);
            break;
        }
        sm->status = RR_JOB_ERROR;
        say(out, RR_MSG_UNAVAILABLE, 0, ev->text);
        give_up(sm, out, RR_EXIT_UNAVAILABLE);
        break;
    }
}

static void on_child(struct rr_run_sm *sm, const struct rr_run_ev *ev, struct rr_run_actions *out)
{
    switch (ev->kind) {
    case RR_EV_CHILD_STARTED:
        sm->child_started = true;
        /* A loss or --max-runtime while it started: it is being stopped. */
        enter(sm, out, sm->final_status == RR_JOB_NONE ? RR_RUN_RUNNING : RR_RUN_STOPPING);
        break;
    case RR_EV_CHILD_LATE:
        /* Nothing ran: give the lock back as an aborted acquisition. (The
         * lease ran out while it started: renewals failed, Redis is
         * unavailable; a loss said so already.) */
        say(out, RR_MSG_LATE, 0, ev->text);
        sm->exit_code = RR_EXIT_UNAVAILABLE;
        sm->status = RR_JOB_NONE;
        release(sm, out, ev->now);
        break;
    case RR_EV_CHILD_FAILED:
        /* The command never started (no fork, no pipe, no exec, not found:
         * 127 means it never ran): nothing to record and no attempt of an
         * --once ID used. The lock is given back as an aborted
         * acquisition, the records as they were before it. */
        say(out, RR_MSG_EXEC_FAILED, 0, ev->text);
        sm->exit_code = ev->spawn_rc == -127   ? RR_EXIT_NOTFOUND
                        : ev->spawn_rc == -126 ? RR_EXIT_NOEXEC
                                               : RR_EXIT_OSERR;
        sm->child_exit = sm->exit_code;
        sm->status = RR_JOB_NONE;
        release(sm, out, ev->now);
        break;
    default:   /* RR_EV_CHILD_EXITED: the lock is released after the reap only */
        /* The guard stopped it because the lease ran out while we could not
         * act (stopped, blocked, slow): that is a loss, whatever we saw. */
        /* The guard died: nothing enforced the lease any more, and the
         * command was stopped for it. A loss too; and said even when the
         * run was lost already (a lost timer that fired first, after we
         * were continued), so that the log names what failed. */
        if (ev->guard_pid > 0) {
            sm->final_status = RR_JOB_LOST;
            sm->final_code = RR_EXIT_LOST;
            say(out, RR_MSG_GUARD_DIED, ev->guard_pid, NULL);
        }
        if (ev->lease_ran_out && sm->final_status != RR_JOB_LOST) {
            sm->final_status = RR_JOB_LOST;
            sm->final_code = RR_EXIT_LOST;
            say(out, RR_MSG_LEASE_RAN_OUT, 0, NULL);
        }
        sm->child_exit = ev->child_exit;
        sm->signal = ev->child_signal;
        if (sm->final_status != RR_JOB_NONE) {
            sm->status = sm->final_status;
            sm->exit_code = sm->final_code;
        } else {
            sm->exit_code = ev->code;
            sm->status = ev->code == 0 ? RR_JOB_SUCCEEDED : RR_JOB_FAILED;
        }
        say(out, RR_MSG_CHILD_EXIT, ev->code, NULL);
        release(sm, out, ev->now);
        break;
    }
}

static void on_retry_renewal(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                             struct rr_run_actions *out);
static void unrecorded(struct rr_run_sm *sm, struct rr_run_actions *out, const char *text);

static void on_renewal(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                       struct rr_run_actions *out)
{
    if (sm->state == RR_RUN_RETRYING && ev->kind != RR_EV_RENEW_DUE) {
        if (ev->kind != RR_EV_LOST_DEADLINE && ev->kind != RR_EV_MAX_RUNTIME)
            sm->renew_in_flight = false;
        on_retry_renewal(sm, ev, out);
        return;
    }
    switch (ev->kind) {
    case RR_EV_RENEW_DUE:
        if (sm->renew_in_flight)
            return;
        sm->renew_in_flight = true;
        push(out, RR_ACT_RENEW);
        return;
    case RR_EV_RENEW_NOT_SENT:
        sm->renew_in_flight = false;
        push_ms(out, RR_ACT_ARM_RENEW, sm->renew_ms);
        return;
    case RR_EV_LOST_DEADLINE:
        lose(sm, out, ev->now, false, RR_LOSS_NO_QUORUM, NULL);
        return;
    case RR_EV_MAX_RUNTIME:
        say(out, RR_MSG_TIMEOUT, 0, NULL);
        stop_child(sm, out, RR_JOB_TIMEOUT, RR_EXIT_TIMEOUT, sm->p.kill_after_ms);
        return;
    default:
        break;
    }
    /* A renewal's answer. */
    sm->renew_in_flight = false;
    if (!holding(sm) || sm->final_status == RR_JOB_LOST)
        return;
    if (ev->kind == RR_EV_RENEWED) {
        if (sm->renew_failures)
            say(out, RR_MSG_RENEWED_AGAIN, sm->renew_failures, NULL);
        sm->renew_failures = 0;
        sm->valid_until = ev->valid_until;
        push_ms(out, RR_ACT_SET_DEADLINE, sm->valid_until);
        arm_lost(sm, out, ev->now);
        say(out, RR_MSG_RENEWED, ev->now - ev->sent_ms, NULL);
        push_ms(out, RR_ACT_ARM_RENEW, sm->renew_ms);
    } else if (ev->kind == RR_EV_RENEW_LOST) {
        lose(sm, out, ev->now, true, RR_LOSS_TAKEN, ev->text);
    } else {
        /* Retry soon, until the lost timer says the lease may be over.
         * One warning per outage, not one per retry. */
        say(out, RR_MSG_RENEW_FAILED, sm->renew_failures++ == 0, ev->text);
        push_ms(out, RR_ACT_ARM_RENEW, renew_retry_ms(sm));
    }
}

/* The whole job stops, as a shell's job would: the command is in a process
 * group of its own, so it would work on while we, stopped, let the lease run
 * out; the command first (SIGSTOP, and in cgroup mode its whole cgroup
 * frozen: what left its group stops too), then us. Only where a shell can
 * continue us. */
static void stop_job(struct rr_run_sm *sm, struct rr_run_actions *out, int64_t now,
                     bool child_running)
{
    if (holding(sm)) {
        /* Our SIGSTOP to a running command comes back as its stop report,
         * read once we are continued: ours, not another process's. */
        sm->own_stop_pending = child_running;
        push(out, RR_ACT_PAUSE_CHILD);
        say(out, RR_MSG_STOPPED, sm->valid_until - now, NULL);
    }
    push(out, RR_ACT_STOP_SELF);
}

/* The command stopped (waitpid's WUNTRACED). A job-control stop (SIGTSTP,
 * SIGTTIN, SIGTTOU) stops the job as a whole where a shell can continue it.
 * Elsewhere (cron, CI: no terminal, or one no shell of ours runs) nobody
 * ever could: as the kernel discards these signals for a group that no
 * shell can continue, the stop is undone, at once and each time; a command
 * that keeps stopping itself is still bounded by the lease and
 * --max-runtime. A SIGSTOP is someone's deliberate pause: it stays. */
static void on_child_stopped(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                             struct rr_run_actions *out)
{
    if (!holding(sm))
        return;
    if (ev->sig == SIGSTOP && sm->own_stop_pending) {
        sm->own_stop_pending = false;
        return;
    }
    if (ev->sig != SIGTSTP && ev->sig != SIGTTIN && ev->sig != SIGTTOU) {
        if (!sm->said_child_stop) {
            sm->said_child_stop = true;
            say(out, RR_MSG_CHILD_STOPPED, 0, NULL)->sig = ev->sig;
        }
        return;
    }
    if (!ev->job_control) {
        push(out, RR_ACT_RESUME_CHILD);
        struct rr_run_action *a = say(out, RR_MSG_CHILD_CONTINUED, sm->child_continued++ == 0, NULL);
        a->sig = ev->sig;
        a->terminal = ev->terminal;
        return;
    }
    if (ev->sig != SIGTSTP && !sm->said_tty_stop) {
        sm->said_tty_stop = true;
        say(out, RR_MSG_TTY_STOP, 0, NULL)->sig = ev->sig;
    }
    stop_job(sm, out, ev->now, false);
}

static void on_signal(struct rr_run_sm *sm, const struct rr_run_ev *ev, struct rr_run_actions *out)
{
    switch (ev->kind) {
    case RR_EV_SIGNAL:
        switch (sm->state) {
        case RR_RUN_STARTING:   /* the guard signals it once it is forked */
        case RR_RUN_RUNNING:
        case RR_RUN_STOPPING:
            push(out, RR_ACT_FORWARD)->sig = ev->sig;
            /* A stopped command (SIGTTIN: it read the terminal) would hold a
             * terminating signal pending forever, and us with it. */
            if (ev->sig != SIGUSR1 && ev->sig != SIGUSR2)
                push(out, RR_ACT_FORWARD)->sig = SIGCONT;
            say(out, RR_MSG_FORWARDED, ev->sig, NULL);
            break;
        case RR_RUN_ACQUIRING:
            sm->abort_signal = ev->sig;   /* the answer gives back what it got */
            break;
        case RR_RUN_WAITING:
            if (sm->leaving)
                finish(sm, out, 128 + ev->sig);   /* a second signal: do not wait for Redis */
            else
                give_up(sm, out, 128 + ev->sig);
            break;
        case RR_RUN_RETRYING:
            /* Told to go while a release is retried: go, and say what is
             * not known, rather than wait out the lease. */
            unrecorded(sm, out, "stopped by a signal before a release could land");
            break;
        default:
            break;   /* the release is bounded by --redis-timeout; let it finish */
        }
        break;
    case RR_EV_SIGTSTP:
        if (ev->job_control) {
            stop_job(sm, out, ev->now, true);
        } else {
            /* Nobody could continue us: a stop would last for ever, the
             * command killed at the lease's end and us left in state T.
             * SIGSTOP still stops us; the guard enforces the lease. */
            say(out, RR_MSG_TSTP_IGNORED, sm->tstp_ignored++ == 0, NULL)->terminal = ev->terminal;
        }
        break;
    default:   /* RR_EV_CONTINUED */
        /* The guard enforced the lease meanwhile; the command goes on only if
         * the lease still leaves the grace to stop it. */
        if (!holding(sm))
            break;
        if (ev->lease_ran_out || ev->now >= sm->valid_until - sm->stop_grace_ms)
            lose(sm, out, ev->now, false, RR_LOSS_STOPPED, NULL);
        else
            push(out, RR_ACT_RESUME_CHILD);
        break;
    }
}

/* ---- the release, and its retries ---- */

bool rr_release_landed(int n, int errors)
{
    return errors <= 0 || n - errors >= n / 2 + 1;
}

int64_t rr_release_backoff(int tries, int64_t left_ms)
{
    int64_t ms = 50;

    for (int i = 1; i < tries && ms < 1000; i++)
        ms *= 2;
    if (ms > 1000)
        ms = 1000;
    if (ms > left_ms)
        ms = left_ms;
    return ms < 1 ? 1 : ms;
}

static void stop_retrying(struct rr_run_actions *out)
{
    push(out, RR_ACT_DISARM_RENEW);
    push(out, RR_ACT_DISARM_LOST);
    push(out, RR_ACT_DISARM_RELEASE);
}

/* The lease ended (or we were told to go) before a release could land: the
 * command's outcome may not be recorded, and the record may read
 * 'running' (then 'abandoned' to the next run). Said as exactly that, with
 * an exit status of its own, so that nobody takes it for a run that died. */
static void unrecorded(struct rr_run_sm *sm, struct rr_run_actions *out, const char *text)
{
    stop_retrying(out);
    say(out, RR_MSG_UNRECORDED, sm->exit_code, text);
    finish(sm, out, RR_EXIT_UNRECORDED);
}

/* A release that did not land (TRYAGAIN, a slot half-way, a timeout, a
 * lost reply) is sent again, with a backoff, while the lease lasts: the
 * renew timer runs on meanwhile, so the lease lasts as long as renewals
 * land. release.lua is idempotent: a retry after one that ran unanswered
 * writes nothing twice. A lost run (the lock is another's or may be) and
 * a give-back (nothing ran: nothing to record) are not retried. */
static void on_released(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                        struct rr_run_actions *out)
{
    bool retry = ev->unlanded && sm->child_started && sm->final_status != RR_JOB_LOST;

    if (sm->state != RR_RUN_RELEASING && sm->state != RR_RUN_RETRYING)
        return;   /* a late answer: we gave up on it */
    if (retry && ev->now < sm->valid_until) {
        int64_t left = sm->valid_until - ev->now;
        if (sm->state == RR_RUN_RELEASING) {
            enter(sm, out, RR_RUN_RETRYING);
            push_ms(out, RR_ACT_ARM_RENEW, 0);
            push_ms(out, RR_ACT_ARM_LOST, left);
        }
        say(out, RR_MSG_RELEASE_RETRY, sm->release_tries == 1, ev->text)->ms = left;
        push_ms(out, RR_ACT_ARM_RELEASE, rr_release_backoff(sm->release_tries, left));
        return;
    }
    if (retry) {
        unrecorded(sm, out, ev->text);
        return;
    }
    if (sm->state == RR_RUN_RETRYING) {
        stop_retrying(out);
        say(out, RR_MSG_RELEASE_LANDED, sm->release_tries, NULL);
    }
    if (!ev->freed)
        say(out, RR_MSG_RELEASE_FAILED, 0, ev->text);
    if (sm->child_started) {
        say(out, RR_MSG_RELEASED, ev->freed, NULL);
        finish(sm, out, sm->exit_code);
    } else {
        /* A lock given back unused (a signal, a late start): with several
         * masters we were still queued; leave now rather than on expiry. */
        give_up(sm, out, sm->exit_code);
    }
}

/* While the release is retried the lock is renewed as before; a renewal
 * that finds the key gone (our own release ran unanswered, or the lease
 * ended) stops the renewals only: the records are written by token. */
static void on_retry_renewal(struct rr_run_sm *sm, const struct rr_run_ev *ev,
                             struct rr_run_actions *out)
{
    switch (ev->kind) {
    case RR_EV_LOST_DEADLINE:
        unrecorded(sm, out, "the lease ended before a release could land");
        break;
    case RR_EV_RENEWED:
        sm->valid_until = ev->valid_until;
        push_ms(out, RR_ACT_ARM_LOST, sm->valid_until - ev->now);
        say(out, RR_MSG_RENEWED, ev->now - ev->sent_ms, NULL);
        push_ms(out, RR_ACT_ARM_RENEW, sm->renew_ms);
        break;
    case RR_EV_RENEW_FAILED:
        say(out, RR_MSG_RENEW_FAILED, sm->renew_failures++ == 0, ev->text);
        push_ms(out, RR_ACT_ARM_RENEW, renew_retry_ms(sm));
        break;
    default:   /* RR_EV_RENEW_LOST, _NOT_SENT, RR_EV_MAX_RUNTIME: no more renewals */
        break;
    }
}

void rr_run_step(struct rr_run_sm *sm, const struct rr_run_ev *ev, struct rr_run_actions *out)
{
    out->n = 0;
    switch (ev->kind) {
    case RR_EV_START:
        try_acquire(sm, out);
        break;
    case RR_EV_SETUP_FAILED:
        say(out, RR_MSG_SETUP, 0, ev->text);
        finish(sm, out, ev->code ? ev->code : RR_EXIT_SOFTWARE);
        break;
    case RR_EV_ACQ_NOT_SENT:
        say(out, RR_MSG_ACQUIRE_NOT_SENT, 0, NULL);
        finish(sm, out, RR_EXIT_SOFTWARE);
        break;
    case RR_EV_ACQ_OK:
    case RR_EV_ACQ_BUSY:
    case RR_EV_ACQ_DONE:
    case RR_EV_ACQ_STALE:
    case RR_EV_ACQ_ERROR:
    case RR_EV_ACQ_REFUSED:
        on_acquired(sm, ev, out);
        break;
    case RR_EV_WOKEN:
        if (sm->leaving)
            break;
        if (sm->state == RR_RUN_WAITING)
            try_acquire(sm, out);
        else if (sm->state == RR_RUN_ACQUIRING)
            sm->woken = true;   /* a busy answer to this acquire tries again at once */
        break;
    case RR_EV_RETRY:
        if (sm->state == RR_RUN_WAITING && !sm->leaving)
            try_acquire(sm, out);
        break;
    case RR_EV_LEFT:
        finish(sm, out, sm->leave_code);
        break;
    case RR_EV_CHILD_STARTED:
    case RR_EV_CHILD_LATE:
    case RR_EV_CHILD_FAILED:
        if (sm->state == RR_RUN_STARTING)   /* one spawn, one outcome */
            on_child(sm, ev, out);
        break;
    case RR_EV_CHILD_EXITED:
        on_child(sm, ev, out);
        break;
    case RR_EV_CHILD_STOPPED:
        on_child_stopped(sm, ev, out);
        break;
    case RR_EV_RENEW_DUE:
    case RR_EV_RENEW_NOT_SENT:
    case RR_EV_RENEWED:
    case RR_EV_RENEW_FAILED:
    case RR_EV_RENEW_LOST:
    case RR_EV_LOST_DEADLINE:
    case RR_EV_MAX_RUNTIME:
        on_renewal(sm, ev, out);
        break;
    case RR_EV_SIGNAL:
    case RR_EV_SIGTSTP:
    case RR_EV_CONTINUED:
        on_signal(sm, ev, out);
        break;
    case RR_EV_RELEASED:
        on_released(sm, ev, out);
        break;
    case RR_EV_RELEASE_DUE:
        if (sm->state == RR_RUN_RETRYING) {
            sm->release_tries++;
            push_ms(out, RR_ACT_RELEASE, hold_left(sm, ev->now));
        }
        break;
    case RR_EV_RELEASE_NOT_SENT:
        if (sm->state == RR_RUN_RETRYING) {
            struct rr_run_ev e = *ev;
            e.kind = RR_EV_RELEASED;
            e.unlanded = true;
            e.text = "the release could not be sent";
            on_released(sm, &e, out);
            break;
        }
        say(out, RR_MSG_RELEASE_NOT_SENT, 0, NULL);
        /* The run's outcome is said all the same: under -q it is the only
         * line a failed run leaves. */
        if (sm->child_started)
            say(out, RR_MSG_RELEASED, 0, NULL);
        finish(sm, out, sm->exit_code);
        break;
    }
}
