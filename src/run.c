/* run.c — one run of a job: executes what the state machine (run_step.c)
 * decides. Every callback here turns what happened into one event, steps
 * the machine, and carries out its actions: the timers, the signals, the
 * lock, the queue and the child. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "cgroup.h"
#include "sigwatch.h"
#include "child.h"
#include "child_env.h"
#include "cli.h"
#include "diag.h"
#include "leftover.h"
#include "service.h"
#include "lock.h"
#include "log.h"
#include "metrics_file.h"
#include "proc.h"
#include "queue.h"
#include "record.h"
#include "run_step.h"
#include "run.h"
#include "svc_config.h"
#include "tty.h"

/* Signals forwarded to the child's process group while it runs. */
static const int fwd_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_SIGNALS (sizeof(fwd_signals) / sizeof(fwd_signals[0]))
/* Events an action may feed back within one step (feed). */
#define RUN_QUEUE_MAX 8

struct run {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    struct rr_run_sm sm;          /* written by rr_run_step only */
    struct rr_audit au;

    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n;
    struct rr_waiter *waiter;     /* --wait: our place in the queue (queue.c) */
    struct rr_lock *lock;
    int masters_reached;          /* of n, in the last acquisition round; -1 none */
    char host[256];
    /* --once: the ID of this run, "" without; the lock expands a pattern
     * on the lock service's clock at its first acquire (lock.h). */
    char once_id[RR_ONCE_MAX + 1];

    struct rr_child *child;
    char **child_env;
    struct rr_cgroup *cgroup;     /* the command's own, made at start; NULL: tree mode */
    struct rr_leftover *leftover; /* tree mode's mark of the run (leftover.h), or NULL */
    bool child_gone;              /* nothing of the command is left (exit reported) */
    bool cgroup_removed;          /* its rmdir was done (the handle lives on) */
    char cgroup_path[4200];       /* where it is (it was) made */

    uv_timer_t renew_timer, lost_timer, timeout_timer, release_timer;
    struct rr_sigwatch sigs;      /* fwd_signals, SIGTSTP, SIGCONT */

    /* Events fed back while a step's actions run (feed). */
    bool feeding;
    int queued;
    struct queued_ev {
        struct rr_run_ev ev;
        const struct rr_acquire_result *res;
        char text[RR_ERRLEN];
    } queue[RUN_QUEUE_MAX];
};

static void feed(struct run *r, const struct rr_run_ev *ev, const struct rr_acquire_result *res);

/* An event that carries nothing but the time. */
static void feed_kind(struct run *r, enum rr_run_event kind)
{
    feed(r, &(struct rr_run_ev){ .kind = kind, .now = rr_now_ms() }, NULL);
}

/* ---- shutdown ---- */

static void close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h))
        uv_close(h, NULL);
}

/* Close every handle we own; the loop then runs dry and rr_run returns. */
static void close_all(struct run *r)
{
    close_if_open((uv_handle_t *)&r->renew_timer);
    close_if_open((uv_handle_t *)&r->lost_timer);
    close_if_open((uv_handle_t *)&r->timeout_timer);
    close_if_open((uv_handle_t *)&r->release_timer);
    /* The run is over (lock given back, child reaped): the signals stay
     * blocked, so a late one cannot turn the exit status into a death by
     * signal. */
    rr_sigwatch_close(&r->sigs);
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

/* ---- the lock ---- */

static void on_acquired(struct rr_lock *lk, const struct rr_acquire_result *res, void *arg)
{
    static const enum rr_run_event kinds[] = {
        [RR_ACQ_OK] = RR_EV_ACQ_OK,       [RR_ACQ_BUSY] = RR_EV_ACQ_BUSY,
        [RR_ACQ_DONE] = RR_EV_ACQ_DONE,   [RR_ACQ_STALE] = RR_EV_ACQ_STALE,
        [RR_ACQ_ERROR] = RR_EV_ACQ_ERROR,
    };
    struct run *r = arg;
    struct rr_run_ev ev = { .kind = kinds[res->result], .now = rr_now_ms(), .text = res->err,
                            .slot = res->slot, .fence = res->fence,
                            .validity_ms = res->validity_ms, .abandoned = res->abandoned,
                            .rank = res->rank, .pttl = res->retry_ms };

    (void)lk;
    snprintf(r->once_id, sizeof r->once_id, "%s", rr_lock_once_id(r->lock));
    r->masters_reached = r->n - res->n_err;
    /* A refusal of our configuration (lock.c tells it, and its words). */
    if (res->result == RR_ACQ_ERROR && res->refused)
        ev.kind = RR_EV_ACQ_REFUSED;
    feed(r, &ev, res);
}

/* Masters that answered after the round was decided on its quorum, and
 * failed: the run is on a degraded quorum after all (lock.h). */
static void on_degraded(struct rr_lock *lk, const struct rr_acquire_result *res, void *arg)
{
    struct run *r = arg;

    (void)lk;
    r->masters_reached = r->n - res->n_err;
    rr_audit_degraded(&r->au, &r->sm, res);
}

static void on_extended(struct rr_lock *lk, enum rr_extend res, int64_t sent_ms,
                        const char *err, void *arg)
{
    struct run *r = arg;
    struct rr_run_ev ev = { .now = rr_now_ms(), .text = err, .sent_ms = sent_ms,
                            .valid_until = sent_ms + rr_lock_validity(r->cfg->ttl_ms, 0) };

    (void)lk;
    ev.kind = res == RR_EXTEND_OK ? RR_EV_RENEWED
            : res == RR_EXTEND_LOST ? RR_EV_RENEW_LOST : RR_EV_RENEW_FAILED;
    feed(r, &ev, NULL);
}

static void on_released(struct rr_lock *lk, int released, int written, int errors,
                        const char *err, void *arg)
{
    struct run *r = arg;

    (void)lk;
    (void)written;
    feed(r, &(struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = rr_now_ms(), .text = err,
                                 .freed = !(errors > 0 && released < rr_lock_quorum(r->n)),
                                 .unlanded = !rr_release_landed(r->n, errors) },
         NULL);
}

static void uncontain(struct run *r);

static void release(struct run *r, int64_t hold_ms)
{
    struct rr_release_info ri = {
        .status = rr_job_status_name(r->sm.status),   /* "" for NONE: aborts */
        .exit_code = r->sm.child_exit,
        .signal = r->sm.signal,
        .hold_ms = hold_ms,
        .wait_ms = r->sm.wait_ms,
    };

    if (rr_lock_release(r->lock, &ri, on_released, r) != 0) {
        feed_kind(r, RR_EV_RELEASE_NOT_SENT);
        return;
    }
    /* The empty cgroup goes while the servers run the release. */
    if (r->child_gone)
        uncontain(r);
}

/* ---- the child ---- */

static void on_child_exit(struct rr_child *ch, int wstatus, void *arg)
{
    struct run *r = arg;

    /* Nothing of the command is left, its guard stands down: the cgroup
     * is empty and goes once the release is sent (or at the end). */
    r->child_gone = true;
    feed(arg, &(struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = rr_now_ms(),
                                   .code = rr_child_exit_code(wstatus),
                                   .child_exit = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
                                   .child_signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0,
                                   .lease_ran_out = rr_child_lease_ran_out(ch),
                                   .guard_pid = rr_child_guard_died(ch) },
         NULL);
}

static pid_t parent_of(pid_t pid)
{
    struct rr_proc_stat st;

    return rr_proc_read_stat(pid, &st) == 0 ? st.ppid : -1;
}

/* Could a shell continue us after a stop, now (tty.h)? Asked at each stop
 * only: a terminal can go away, or come (a shell's job when started). */
static void job_control(struct rr_run_ev *ev)
{
    struct rr_tty_facts f;

    rr_tty_facts(&f, parent_of);
    ev->terminal = f.terminal;
    ev->job_control = rr_tty_job_control(&f);
}

static void on_child_stop(struct rr_child *ch, int sig, void *arg)
{
    struct rr_run_ev ev = { .kind = RR_EV_CHILD_STOPPED, .now = rr_now_ms(), .sig = sig };

    (void)ch;
    job_control(&ev);
    feed(arg, &ev, NULL);
}

static int build_env(struct run *r)
{
    extern char **environ;
    const struct rr_child_env_run v = { r->cfg->name, r->sm.fence, r->cfg->ttl_ms,
                                        r->sm.slot, r->once_id };

    r->child_env = rr_child_env_for_run(environ, &v);
    return r->child_env ? 0 : -1;
}

static void feed_started(struct run *r, int rc, const char *err)
{
    feed(r, &(struct rr_run_ev){ .kind = rc == 0 ? RR_EV_CHILD_STARTED
                                       : rc == RR_SPAWN_LATE ? RR_EV_CHILD_LATE
                                                             : RR_EV_CHILD_FAILED,
                                 .now = rr_now_ms(), .text = err, .spawn_rc = rc },
         NULL);
}

/* The spawn's outcome; on failure the child is gone already. */
static void on_child_started(struct rr_child *ch, int rc, const char *err, void *arg)
{
    struct run *r = arg;

    (void)ch;
    if (rc != 0)
        r->child = NULL;
    feed_started(r, rc, err);
}

/* Asked, not waited for: the loop renews the lease while the command
 * starts, however long a loaded machine or a slow exec (NFS) takes. */
static void start_child(struct run *r)
{
    char err[RR_ERRLEN];
    int rc;

    if (build_env(r) != 0) {
        rc = -1;
        snprintf(err, sizeof(err), "out of memory");
    } else {
        struct rr_child_opts co = { .foreground = r->cfg->foreground,
                                    .deadline_ms = r->sm.valid_until,
                                    .grace_ms = r->sm.stop_grace_ms,
                                    .stop_cb = on_child_stop,
                                    .cgroup = r->cgroup };
        rc = rr_child_start(r->loop, &r->child, r->cfg->command, r->child_env, &co,
                            on_child_exit, on_child_started, r, err, sizeof(err));
    }
    if (rc != 0)
        feed_started(r, rc, err);
}

/* ---- timers, the queue, signals: events ---- */

static void on_renew_timer(uv_timer_t *t)
{
    feed_kind(t->data, RR_EV_RENEW_DUE);
}

static void on_lost_timer(uv_timer_t *t)
{
    feed_kind(t->data, RR_EV_LOST_DEADLINE);
}

static void on_timeout_timer(uv_timer_t *t)
{
    feed_kind(t->data, RR_EV_MAX_RUNTIME);
}

static void on_release_timer(uv_timer_t *t)
{
    feed_kind(t->data, RR_EV_RELEASE_DUE);
}

static void on_retry(void *arg)
{
    feed_kind(arg, RR_EV_RETRY);
}

/* A message or our subscription says it may be our turn. */
static void on_wake(void *arg)
{
    feed_kind(arg, RR_EV_WOKEN);
}

static void on_left(void *arg)
{
    feed_kind(arg, RR_EV_LEFT);
}

static void on_signal(struct run *r, int sig)
{
    feed(r, &(struct rr_run_ev){ .kind = RR_EV_SIGNAL, .now = rr_now_ms(), .sig = sig }, NULL);
}

/* SIGTSTP (Ctrl-Z, kill -TSTP): see RR_EV_SIGTSTP in run_step.c. (SIGTTIN
 * and SIGTTOU are ignored: we never read the terminal, and a log line must
 * not stop us.) */
static void on_sigtstp(struct run *r)
{
    struct rr_run_ev ev = { .kind = RR_EV_SIGTSTP, .now = rr_now_ms() };

    job_control(&ev);
    feed(r, &ev, NULL);
}

/* Continued: whether the guard had to act while we were stopped. */
static void continued(struct run *r)
{
    feed(r, &(struct rr_run_ev){ .kind = RR_EV_CONTINUED, .now = rr_now_ms(),
                                 .lease_ran_out = rr_child_lease_ran_out(r->child) },
         NULL);
}

static void on_sig(void *arg, int sig)
{
    if (sig == SIGTSTP)
        on_sigtstp(arg);
    else if (sig == SIGCONT)
        continued(arg);
    else
        on_signal(arg, sig);
}

/* ---- the actions ---- */

static void arm(uv_timer_t *t, uv_timer_cb cb, int64_t ms)
{
    uv_timer_start(t, cb, ms > 0 ? (uint64_t)ms : 0, 0);
}

static void wait_for_turn(struct run *r, const struct rr_run_action *a)
{
    /* Either way bounded by the holder's lease, since a crashed holder
     * sends nothing. */
    int64_t sleep_ms = rr_queue_sleep_ms(a->rank, a->pttl, rr_queue_entry_ttl(r->cfg->ttl_ms),
                                         a->backoff, random(), a->left);

    rr_audit_sleep(a->rank, sleep_ms);
    rr_waiter_sleep(r->waiter, sleep_ms, a->rank >= 0, on_retry, r);
}

/* Carry out one action. res: the acquisition's answer of this step, if any.
 * An action that fails at once feeds the event that says so. */
static void execute(struct run *r, const struct rr_run_action *a,
                    const struct rr_acquire_result *res)
{
    switch (a->kind) {
    case RR_ACT_ENTER:
        rr_audit_enter(a);
        break;
    case RR_ACT_SAY:
        rr_audit_say(&r->au, &r->sm, a, res);
        break;
    case RR_ACT_ACQUIRE:
        if (rr_lock_acquire(r->lock, on_acquired, r) != 0)
            feed_kind(r, RR_EV_ACQ_NOT_SENT);
        break;
    case RR_ACT_WAITER_STOP:
        rr_waiter_stop(r->waiter);
        break;
    case RR_ACT_WAIT:
        wait_for_turn(r, a);
        break;
    case RR_ACT_LEAVE:
        if (rr_waiter_leave(r->waiter, on_left, r) != 0)
            feed_kind(r, RR_EV_LEFT);   /* never queued: nothing to leave */
        break;
    case RR_ACT_START_CHILD:
        start_child(r);
        break;
    case RR_ACT_FORWARD:
        rr_child_signal(r->child, a->sig);
        break;
    case RR_ACT_STOP_CHILD:
        rr_child_stop(r->child, a->ms);
        break;
    case RR_ACT_KILL_CHILD:
        rr_child_kill_now(r->child);
        break;
    case RR_ACT_PAUSE_CHILD:
        rr_child_pause(r->child);
        break;
    case RR_ACT_RESUME_CHILD:
        rr_child_resume(r->child);
        break;
    case RR_ACT_SET_DEADLINE:
        rr_child_set_deadline(r->child, a->ms);
        break;
    case RR_ACT_STOP_SELF:
        raise(SIGSTOP);
        continued(r);   /* here when continued */
        break;
    case RR_ACT_ARM_RENEW:
        arm(&r->renew_timer, on_renew_timer, a->ms);
        break;
    case RR_ACT_ARM_LOST:
        arm(&r->lost_timer, on_lost_timer, a->ms);
        break;
    case RR_ACT_ARM_TIMEOUT:
        arm(&r->timeout_timer, on_timeout_timer, a->ms);
        break;
    case RR_ACT_DISARM_RENEW:
        uv_timer_stop(&r->renew_timer);
        break;
    case RR_ACT_DISARM_LOST:
        uv_timer_stop(&r->lost_timer);
        break;
    case RR_ACT_DISARM_TIMEOUT:
        uv_timer_stop(&r->timeout_timer);
        break;
    case RR_ACT_ARM_RELEASE:
        arm(&r->release_timer, on_release_timer, a->ms);
        break;
    case RR_ACT_DISARM_RELEASE:
        uv_timer_stop(&r->release_timer);
        break;
    case RR_ACT_RENEW:
        if (rr_lock_extend(r->lock, on_extended, r) != 0)
            feed_kind(r, RR_EV_RENEW_NOT_SENT);
        break;
    case RR_ACT_RELEASE:
        release(r, a->ms);
        break;
    case RR_ACT_FINISH:
        close_all(r);
        break;
    }
}

/* Step the machine with ev and carry out its actions. An action that
 * feeds an event back (one that could not start, a spawn's outcome) is
 * queued, not stepped inside the step that asked for it: the events are
 * stepped one after the other, each after all the actions of the one
 * before. Its text is copied, since it may live on the feeder's stack. */
static void feed(struct run *r, const struct rr_run_ev *ev, const struct rr_acquire_result *res)
{
    struct rr_run_actions out;

    if (r->feeding) {
        if (r->queued >= RUN_QUEUE_MAX) {
            /* A machine that feeds back more than this in one step is a
             * bug; say so rather than lose an event silently. */
            rr_log(RR_LOG_ERROR, "internal", NULL, "run: event queue full (event %d lost)",
                   (int)ev->kind);
            return;
        }
        struct queued_ev *q = &r->queue[r->queued++];
        q->ev = *ev;
        q->res = res;
        if (ev->text) {
            snprintf(q->text, sizeof q->text, "%s", ev->text);
            q->ev.text = q->text;
        }
        return;
    }
    r->feeding = true;
    rr_run_step(&r->sm, ev, &out);
    for (int i = 0; i < out.n; i++)
        execute(r, &out.a[i], res);
    for (int k = 0; k < r->queued; k++) {
        struct queued_ev q = r->queue[k];
        if (q.ev.text)
            q.ev.text = q.text;
        rr_run_step(&r->sm, &q.ev, &out);
        for (int i = 0; i < out.n; i++)
            execute(r, &out.a[i], q.res);
    }
    r->queued = 0;
    r->feeding = false;
}

/* ---- setup ---- */

/* The command's cgroup, as --contain asks (cgroup.h), made before the lock
 * is asked for and kept until the command's exit: --contain cgroup then
 * refuses without touching Redis, and what --contain auto reports (the
 * log, the lock's record, --status) is what the command gets; one mkdir
 * and a reading of /proc/self/cgroup a run. A run killed while it waits
 * leaves an empty cgroup, which the guard of the next run of the job
 * removes once it is a minute old (rr_cgroup_kill_dead).
 * Returns 0, or -1 with err filled when --contain cgroup cannot have one. */
static int contain(struct run *r, const struct rr_config *cfg, char *err, size_t errlen)
{
    char why[RR_ERRLEN - 32];

    if (cfg->contain != RR_CONTAIN_TREE &&
        rr_cgroup_create(&r->cgroup, cfg->name, why, sizeof why) == 0) {
        snprintf(r->cgroup_path, sizeof r->cgroup_path, "%s", rr_cgroup_path(r->cgroup));
        return 0;
    }
    if (cfg->contain == RR_CONTAIN_CGROUP) {
        snprintf(err, errlen, "--contain cgroup: %s", why);
        return -1;
    }
    if (cfg->contain != RR_CONTAIN_TREE)
        rr_log(RR_LOG_DEBUG, "contain", (struct rr_field[]){ RR_FS("reason", why), RR_FIELD_END },
               "no cgroup for the command (%s): the process tree holds it", why);
    /* The mark by which the next run of the job kills what this one's
     * command left in its group if we and the guard both die. */
    if (!cfg->foreground && rr_leftover_open(&r->leftover, cfg->name, why, sizeof why) < 0)
        rr_log(RR_LOG_DEBUG, "contain", (struct rr_field[]){ RR_FS("reason", why), RR_FIELD_END },
               "%s: if this run's redlock-run and guard both die, nothing will stop what its "
               "command left running", why);
    return 0;
}

/* The one place R removes the command's cgroup (the guard does it only
 * after our death): once the release is sent after the command's exit was
 * reported (child.c reports it once nothing is left in the cgroup), or
 * after the run for the runs that made one and never got that far (the
 * lock held, a failed spawn, a release not sent). Then it is freed. */
static void uncontain(struct run *r)
{
    int rc;

    if (!r->cgroup || r->cgroup_removed)
        return;
    r->cgroup_removed = true;
    rc = rr_cgroup_remove(r->cgroup);
    if (rc < 0 && rc != -ENOENT)
        rr_log(RR_LOG_WARN, "contain", NULL, "cannot remove the cgroup %s: %s",
               rr_cgroup_path(r->cgroup), strerror(-rc));
}

/* The handle goes only at the end, once the guard is reaped
 * (rr_child_free). */
static void free_cgroup(struct run *r)
{
    uncontain(r);
    rr_cgroup_free(r->cgroup);
    r->cgroup = NULL;
    rr_leftover_free(r->leftover);
    r->leftover = NULL;
}

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
    r->au.cfg = cfg;
    r->au.once_id = r->once_id;
    r->au.n = r->n;
    r->au.host = r->host;
    lo.prefix = cfg->prefix;
    lo.name = cfg->name;
    lo.once_id = r->once_id;
    lo.once_pattern = cfg->once_raw && strchr(cfg->once_raw, '%') ? cfg->once_raw : NULL;
    lo.ttl_ms = cfg->ttl_ms;
    lo.state_ttl_ms = cfg->state_ttl_ms;
    lo.refuse_stale = cfg->on_stale == RR_STALE_REFUSE;
    lo.attempts = cfg->attempts;
    lo.host = r->host;
    lo.contain = r->au.contain;
    lo.command_fp = cfg->command_fp;
    lo.pid = (long)getpid();
    lo.limit = cfg->limit;
    lo.gave_password = rr_cli_gave_password(cfg);
    lo.queue_ttl_ms = rr_queue_entry_ttl(cfg->ttl_ms);
    if (cfg->wait_ms != 0) {
        struct rr_job_keys keys;
        if (rr_job_keys(&keys, cfg->prefix, cfg->name, r->once_id) != 0) {
            snprintf(err, errlen, RR_JOB_KEYS_TOO_LONG);
            return -1;
        }
        r->waiter = rr_waiter_new(r->loop, cfg, r->conns, r->n, &keys, on_wake, r, err, errlen);
        if (!r->waiter)
            return -1;
        lo.waiter = rr_waiter_id(r->waiter);
    }
    r->lock = rr_lock_new(r->conns, r->n, &lo, err, errlen);
    if (r->lock)
        rr_lock_on_degraded(r->lock, on_degraded, r);
    if (!r->lock)
        return -1;

    uv_timer_init(r->loop, &r->renew_timer);
    uv_timer_init(r->loop, &r->lost_timer);
    uv_timer_init(r->loop, &r->timeout_timer);
    uv_timer_init(r->loop, &r->release_timer);
    r->renew_timer.data = r->lost_timer.data = r;
    r->timeout_timer.data = r->release_timer.data = r;
    int sigs[N_SIGNALS + 2], rc;
    memcpy(sigs, fwd_signals, sizeof fwd_signals);
    sigs[N_SIGNALS] = SIGTSTP;
    sigs[N_SIGNALS + 1] = SIGCONT;
    if ((rc = rr_sigwatch_start(&r->sigs, r->loop, sigs, N_SIGNALS + 2, on_sig, r)) != 0) {
        snprintf(err, errlen, "cannot watch signals: %s", uv_strerror(rc));
        return -1;
    }
    return 0;
}

int rr_run(uv_loop_t *loop, const struct rr_config *cfg)
{
    struct run r;
    char err[RR_ERRLEN] = "";
    struct rr_run_report rep = { 0 };
    const struct rr_run_params p = {
        .ttl_ms = cfg->ttl_ms, .renew_ms = cfg->renew_ms, .kill_after_ms = cfg->kill_after_ms,
        .wait_ms = cfg->wait_ms, .timeout_ms = cfg->timeout_ms, .min_hold_ms = cfg->min_hold_ms,
        .conflict_exit_code = cfg->conflict_exit_code,
    };

    memset(&r, 0, sizeof(r));
    r.loop = loop;
    r.cfg = cfg;
    r.masters_reached = -1;
    snprintf(r.once_id, sizeof r.once_id, "%s", cfg->once_id);
    r.sigs.fd = r.sigs.closing_fd = -1;   /* not watched yet (close_all) */
    rep.start_s = (double)rr_audit_wall_ms() / 1000.0;
    rr_run_sm_init(&r.sm, &p, rr_now_ms());
    srandom((unsigned)(getpid() ^ (unsigned)uv_hrtime()));

    /* What fails before the lock is asked for ends the run through the
     * machine too (its message, the audit trail, the metrics): a cgroup
     * that --contain cgroup cannot have, a guard that cannot be forked
     * (71), a setup that fails (70). */
    int failed = 0;
    if (contain(&r, cfg, err, sizeof(err)) != 0)
        failed = RR_EXIT_OSERR;
    r.au.contain = r.cgroup ? "cgroup" : "tree";
    r.au.cgroup = r.cgroup_path;
    /* The guard is forked now, while we are one thread with no connection
     * (child.h); it waits for the command until we have the lock. */
    const struct rr_child_opts co = { .foreground = cfg->foreground, .cgroup = r.cgroup,
                                      .leftover = r.leftover };
    if (!failed && rr_child_prepare(&r.child, &co, err, sizeof(err)) != 0)
        failed = RR_EXIT_OSERR;
    if (!failed && setup(&r, cfg, err, sizeof(err)) != 0)
        failed = RR_EXIT_SOFTWARE;
    if (failed)
        feed(&r, &(struct rr_run_ev){ .kind = RR_EV_SETUP_FAILED, .now = rr_now_ms(), .text = err,
                                      .code = failed }, NULL);
    else
        feed_kind(&r, RR_EV_START);
    uv_run(loop, UV_RUN_DEFAULT);

    rep.status = rr_job_status_name(r.sm.status);
    rep.exit_code = r.sm.exit_code;
    rep.child_exit = r.sm.child_exit;
    rep.signal = r.sm.signal;
    rep.fence = r.sm.fence;
    rep.wait_ms = r.sm.wait_ms;
    rep.masters_reachable = r.masters_reached;
    rep.masters_total = r.masters_reached >= 0 ? r.n : 0;
    rep.end_s = (double)rr_audit_wall_ms() / 1000.0;
    /* An error, not a warning: under -q too, a monitor reading a file that
     * went stale must not be the first to know. */
    if (cfg->metrics_file &&
        rr_metrics_write(cfg->metrics_file, cfg->name, &rep, err, sizeof(err)) != 0)
        rr_log(RR_LOG_ERROR, "metrics", NULL, "%s", err);
    free_cgroup(&r);
    rr_lock_free(r.lock);
    rr_waiter_free(r.waiter);
    rr_child_env_free(r.child_env);
    return r.sm.exit_code;
}
