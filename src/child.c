/* child.c — the wrapped command: spawn (through the guard), signal, stop,
 * and hear of its end.
 *
 * The guard (guard.c) is the command's parent: it spawns it on the exec
 * plan built here (exec.c), reaps it, stops what it leaves, and reports
 * each step over a pipe watched here with uv_poll. We never reap the
 * command ourselves: our only child is the guard, until it dies (then what
 * the command started is re-parented to us, and sweep.c stops it). The
 * guard's death is seen in our own SIGCHLD handler (no libuv watcher: the
 * kill must happen even if we are stopped right after the signal came), and
 * by the loop at the EOF of the report pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "child.h"
#include "exec.h"
#include "guard.h"
#include "log.h"
#include "proc.h"
#include "rr.h"
#include "sweep.h"
#include "tty.h"

extern char **environ;

/* Where the command is; every change goes through transition(). */
enum child_state {
    CHILD_RUNNING,     /* spawned: the leader lives */
    CHILD_STOPPING,    /* ... and we asked it to end (rr_child_stop, _kill_now) */
    CHILD_SWEEPING,    /* the leader was reaped; what it left is being stopped */
    CHILD_EXITED,      /* reaped, nothing left, the guard gone: exit reported */
};

struct rr_child {
    uv_loop_t *loop;
    uv_poll_t reports;         /* the guard's report pipe */
    uv_timer_t kill_timer;     /* TERM -> KILL escalation */
    uv_timer_t sweep_timer;    /* the guard died: stopping what is left */
    pid_t pid;
    enum child_state state;
    struct rr_guard *guard;    /* the command's parent (guard.h) */
    struct rr_guard *spent_guard;   /* stood down at EXITED, reaped when freed */
    const struct rr_cgroup *cgroup;
    struct rr_sweep sweep;     /* only once the guard died */
    bool foreground;
    bool kill_armed;           /* kill_timer is counting down */
    bool closing;              /* rr_child_free was called: handles closing */
    bool tty;                  /* its group has the terminal (tty.h) */
    bool lease_ran_out;        /* the guard had acted, seen as it stood down */
    bool sweeping_self;        /* the guard died: our sweep, not its */
    bool frozen;               /* rr_child_pause froze its cgroup */
    pid_t guard_died;          /* its pid, if it died before the end */
    int open_handles;
    int64_t kill_deadline_ms;  /* uv_now() based, valid if kill_armed */
    int64_t grace_ms;          /* TERM -> KILL for stragglers */
    int wstatus;               /* the leader's, once reaped */
    rr_child_exit_fn exit_cb;
    rr_child_stop_fn stop_cb;
    void *arg;
};

/* ---- the guard's death, in a signal handler ----
 *
 * One command per process. A SIGCHLD can only be the guard's (the command
 * is its child), or, once it died, an orphan's. If the guard is gone, the
 * command's group is killed here and now (and the cgroup): SIGCHLD (17) is
 * dequeued before a SIGSTOP (19) sent right after the kill, so this runs
 * even if we are stopped next. */
static struct rr_guard *volatile live_guard;
static volatile pid_t live_pid;       /* the command's, 0 once reaped */
static volatile pid_t live_pgid;      /* its group's, 0 in foreground */
static const struct rr_cgroup *volatile live_cgroup;

static void on_sigchld(int sig)
{
    int saved = errno;
    struct rr_guard *g = live_guard;

    (void)sig;
    if (g && rr_guard_dead(g)) {
        live_guard = NULL;
        if (live_pgid > 0)
            kill(-live_pgid, SIGKILL);
        else if (live_pid > 0)
            kill(live_pid, SIGKILL);
        if (live_cgroup)
            rr_cgroup_kill(live_cgroup);
        /* What the guard had came to us before its SIGCHLD did (the kernel
         * re-parents first): each of them and its group, now. */
        pid_t kids[64], own = getpgrp();
        int n = rr_proc_children(getpid(), rr_guard_pid(g), kids, 64);
        for (int i = 0; i < n; i++) {
            kill(kids[i], SIGKILL);
            pid_t pg = getpgid(kids[i]);
            if (pg > 1 && pg != own)
                kill(-pg, SIGKILL);
        }
    }
    errno = saved;
}

static void own_sigchld(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigfillset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
}

/* ---- the command's state ---- */

static bool reaped(const struct rr_child *ch)
{
    return ch->state == CHILD_SWEEPING || ch->state == CHILD_EXITED;
}

/* Thaw the cgroup if rr_child_pause froze it (the guard thaws it too when
 * it stops the command: writing "0" again is harmless). */
static void thaw(struct rr_child *ch)
{
    if (!ch->frozen)
        return;
    ch->frozen = false;
    int rc = rr_cgroup_freeze(ch->cgroup, 0);
    if (rc < 0)
        rr_log(RR_LOG_WARN, "contain", NULL, "cannot thaw the cgroup %s: %s",
               rr_cgroup_path(ch->cgroup), strerror(-rc));
}

/* Every change of state, and what it entails, in one place. */
static void transition(struct rr_child *ch, enum child_state to)
{
    ch->state = to;
    switch (to) {
    case CHILD_RUNNING:
        /* from nothing: the exec succeeded */
        break;
    case CHILD_STOPPING:
        /* from RUNNING: what the command leaves gets no grace of its own */
        rr_guard_hurry(ch->guard);
        break;
    case CHILD_SWEEPING:
        /* from RUNNING or STOPPING: the leader was reaped, and its pid may
         * be anyone's now: no KILL for it, the terminal comes back to us */
        live_pid = 0;
        ch->kill_armed = false;
        if (ch->tty) {
            rr_tty_take(ch->pid);
            ch->tty = false;
        }
        uv_timer_stop(&ch->kill_timer);
        break;
    case CHILD_EXITED:
        /* from SWEEPING once nothing is left */
        live_guard = NULL;
        live_pgid = 0;
        /* Told to exit, but not waited for here: nothing of the command is
         * left, so the lock's release need not wait for the guard's own
         * exit; rr_child_free reaps it, by then long gone. */
        rr_guard_stand_down(ch->guard);
        ch->spent_guard = ch->guard;
        ch->guard = NULL;
        thaw(ch);   /* nothing is left in it; never left frozen all the same */
        /* Empty now, and ours no more: its owner (run.c) removes it. */
        ch->cgroup = NULL;
        live_cgroup = NULL;
        uv_poll_stop(&ch->reports);
        uv_timer_stop(&ch->kill_timer);
        uv_timer_stop(&ch->sweep_timer);
        break;
    }
}

/* ---- what the guard reports ---- */

static void on_handle_close(uv_handle_t *h)
{
    struct rr_child *ch = h->data;
    if (--ch->open_handles == 0)
        free(ch);
}

static void finish_exit(struct rr_child *ch)
{
    /* Read before the guard goes: run.c asks after exit_cb. */
    ch->lease_ran_out = rr_guard_termed(ch->guard) || rr_guard_fired(ch->guard);
    transition(ch, CHILD_EXITED);
    /* Last use of ch here: exit_cb may call rr_child_free, whose memory
     * stays valid until the close callbacks run. */
    if (ch->exit_cb)
        ch->exit_cb(ch, ch->wstatus, ch->arg);
}

/* "123 (sleep), 124 (sh), and 3 more" for the log. */
static void describe(const struct rr_guard_report *r, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < r->n && i < RR_GUARD_REPORT_PIDS && o + 40 < len; i++) {
        char comm[32];
        rr_proc_comm(r->pids[i], comm, sizeof comm);
        o += (size_t)snprintf(buf + o, len - o, "%s%d (%s)", i ? ", " : "", r->pids[i], comm);
    }
    if (r->n > RR_GUARD_REPORT_PIDS && o + 16 < len)
        snprintf(buf + o, len - o, ", and %d more", r->n - RR_GUARD_REPORT_PIDS);
}

static void say_left(const struct rr_guard_report *r)
{
    char who[512];

    describe(r, who, sizeof who);
    if (r->kind == RR_GUARD_LEFT)
        rr_log(RR_LOG_WARN, "stragglers",
               (struct rr_field[]){ RR_FN("count", r->n), RR_FIELD_END },
               "the command left %s running; stopping %s before the lock is released",
               r->n ? who : "processes in its cgroup", r->n == 1 ? "it" : "them");
    else
        rr_log(RR_LOG_ERROR, "stragglers", NULL,
               "processes the command left behind survive SIGKILL (another user's, or "
               "stuck): %s; keeping the lock until they are gone",
               r->n ? who : "members of its cgroup");
}

/* Not an exit: reported, and run_step.c decides (a job stops as a whole
 * only where a shell can continue it). A stopped job gives the terminal
 * back, as a shell's would. */
static void on_stopped(struct rr_child *ch, int sig)
{
    if (ch->tty && (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
        rr_tty_take(ch->pid);
    if (ch->stop_cb)
        ch->stop_cb(ch, sig, ch->arg);
}

static void on_sweep_timer(uv_timer_t *h);

/* What our sweep said: nothing left (report the exit), or look again. */
static void sweep_next(struct rr_child *ch, int64_t next_ms)
{
    if (next_ms == 0)
        finish_exit(ch);
    else
        uv_timer_start(&ch->sweep_timer, on_sweep_timer, (uint64_t)next_ms, 0);
}

static void on_sweep_timer(uv_timer_t *h)
{
    struct rr_child *ch = h->data;
    sweep_next(ch, rr_sweep_look(&ch->sweep));
}

/* The guard died before the end (the report pipe closed): nothing enforces
 * the lease any more. As at its end: everything is stopped and reaped (the
 * command, killed by PR_SET_PDEATHSIG, and what it started came to us). */
static void guard_died(struct rr_child *ch)
{
    ch->guard_died = rr_guard_pid(ch->guard);
    uv_poll_stop(&ch->reports);
    if (!reaped(ch)) {
        ch->wstatus = SIGKILL;   /* as waitpid says of a death by SIGKILL */
        transition(ch, CHILD_SWEEPING);
    }
    ch->sweeping_self = true;
    if (!ch->foreground)
        killpg(ch->pid, SIGKILL);
    sweep_next(ch, rr_sweep_begin(&ch->sweep, ch->foreground ? 0 : ch->pid,
                                  rr_guard_pid(ch->guard), ch->grace_ms, true, ch->cgroup));
}

static void on_report(uv_poll_t *h, int status, int events)
{
    struct rr_child *ch = h->data;
    struct rr_guard_report r;
    int got;

    (void)status;
    (void)events;
    while (ch->state != CHILD_EXITED && !ch->sweeping_self &&
           (got = rr_guard_read_report(ch->guard, &r)) != 0) {
        if (got < 0) {
            guard_died(ch);
            return;
        }
        switch (r.kind) {
        case RR_GUARD_STOPPED:
            if (!reaped(ch))
                on_stopped(ch, r.value);
            break;
        case RR_GUARD_REAPED:
            ch->wstatus = r.value;
            transition(ch, CHILD_SWEEPING);
            break;
        case RR_GUARD_LEFT:
        case RR_GUARD_STUCK:
            say_left(&r);
            break;
        case RR_GUARD_GONE:
            finish_exit(ch);
            return;   /* ch may be freed */
        default:
            break;    /* continued: nothing to do */
        }
    }
}

static void on_kill_timer(uv_timer_t *h)
{
    struct rr_child *ch = h->data;
    ch->kill_armed = false;
    rr_child_signal(ch, SIGKILL);
}

/* ---- spawning ---- */

/* Wait for the exec's outcome on the read end (closed here): the write end
 * closes on exec, so EOF means it succeeded. Returns 0, or rr_exec_error's
 * code with err filled. */
static int await_exec(int *rfd, const char *name, char *err, size_t errlen)
{
    int code = 0;
    ssize_t n;
    do {
        n = read(*rfd, &code, sizeof code);
    } while (n < 0 && errno == EINTR);
    close(*rfd);
    *rfd = -1;
    if (n == 0)
        return 0;
    if (n != (ssize_t)sizeof code)
        code = EIO;
    return rr_exec_error(code, name, err, errlen);
}

/* Watch the guard's reports. On failure the command is killed (the guard
 * stands down), ch freed, err filled and -1 returned. */
static int watch(struct rr_child *ch, const char *name, char *err, size_t errlen)
{
    int e = uv_poll_init(ch->loop, &ch->reports, rr_guard_report_fd(ch->guard));
    if (e < 0) {
        snprintf(err, errlen, "cannot watch '%s': %s", name, uv_strerror(e));
        rr_guard_stop(ch->guard);
        live_guard = NULL;
        free(ch);
        return -1;
    }
    uv_timer_init(ch->loop, &ch->kill_timer);
    uv_timer_init(ch->loop, &ch->sweep_timer);
    ch->open_handles = 3;
    ch->reports.data = ch->kill_timer.data = ch->sweep_timer.data = ch;
    e = uv_poll_start(&ch->reports, UV_READABLE | UV_DISCONNECT, on_report);
    if (e < 0) {
        snprintf(err, errlen, "cannot watch '%s': %s", name, uv_strerror(e));
        ch->wstatus = SIGKILL;
        transition(ch, CHILD_EXITED);
        rr_child_free(ch);   /* freed by the close callbacks */
        return -1;
    }
    return 0;
}


int rr_child_spawn(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                   char *const envp[], const struct rr_child_opts *o,
                   rr_child_exit_fn exit_cb, void *arg, char *err, size_t errlen)
{
    struct rr_exec_plan plan;
    struct rr_child *ch = NULL;
    int pipefd[2] = { -1, -1 };
    int rc = -1;

    *out = NULL;
    if (!argv || !argv[0]) {
        snprintf(err, errlen, "no command to run");
        return -RR_EXIT_NOTFOUND;
    }
    if (rr_exec_plan_make(&plan, argv, envp ? envp : environ) < 0) {
        snprintf(err, errlen, "cannot run '%s': out of memory", argv[0]);
        return -1;
    }
    ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(err, errlen, "cannot run '%s': out of memory", argv[0]);
        goto fail;
    }
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
    /* If the guard dies, what the command started is re-parented to us,
     * not to init; and we hear of its death at once. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    own_sigchld();
    ch->tty = !o->foreground && rr_tty_ours();
    const struct rr_guard_opts go = { .plan = &plan, .foreground = o->foreground,
                                      .tty = ch->tty, .deadline_ms = o->deadline_ms,
                                      .grace_ms = o->grace_ms, .cgroup = o->cgroup,
                                      .errfd = pipefd[1] };
    /* Without a guard the command is not run: nothing would enforce its lease. */
    ch->guard = rr_guard_start(&go);
    int start_errno = errno;
    close(pipefd[1]);
    pipefd[1] = -1;
    if (!ch->guard) {
        snprintf(err, errlen, "cannot start the guard process: %s", strerror(start_errno));
        goto fail;
    }
    live_cgroup = o->cgroup;
    live_pgid = 0;
    live_guard = ch->guard;
    rc = await_exec(&pipefd[0], argv[0], err, errlen);
    if (rc == 0 && rr_guard_child(ch->guard) <= 0) {
        snprintf(err, errlen, "cannot run '%s': the guard process died", argv[0]);
        rc = -1;
    }
    if (rc != 0)
        goto fail;
    rr_exec_plan_free(&plan);

    ch->loop = loop;
    ch->pid = rr_guard_child(ch->guard);
    live_pid = ch->pid;
    live_pgid = o->foreground ? 0 : ch->pid;
    ch->cgroup = o->cgroup;
    ch->foreground = o->foreground;
    ch->grace_ms = o->grace_ms;
    ch->exit_cb = exit_cb;
    ch->stop_cb = o->stop_cb;
    ch->arg = arg;
    transition(ch, CHILD_RUNNING);
    if (watch(ch, argv[0], err, errlen) < 0)
        return -1;
    *out = ch;
    return 0;

fail:
    live_guard = NULL;
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    rr_exec_plan_free(&plan);
    if (ch)
        rr_guard_stop(ch->guard);   /* it reaps the failed command */
    free(ch);
    return rc;
}

/* ---- what run.c asks ---- */

int rr_child_signal(struct rr_child *ch, int sig)
{
    if (!ch || reaped(ch))
        return 0;
    int r = ch->foreground ? kill(ch->pid, sig) : killpg(ch->pid, sig);
    return r < 0 ? -errno : 0;
}

void rr_child_stop(struct rr_child *ch, int64_t grace_ms)
{
    if (!ch || ch->closing)
        return;
    rr_guard_hurry(ch->guard);
    if (reaped(ch))
        return;
    if (ch->state == CHILD_RUNNING)
        transition(ch, CHILD_STOPPING);
    rr_child_signal(ch, SIGTERM);
    /* A stopped process would hold TERM pending until the KILL; wake it so
     * it can exit cleanly (as timeout(1) does). A frozen one likewise (a
     * handled SIGTERM waits for the thaw): thawed once TERM is pending, so
     * that nothing of it runs before the TERM is there. */
    thaw(ch);
    rr_child_signal(ch, SIGCONT);

    if (grace_ms < 0)
        grace_ms = 0;
    if (grace_ms == RR_INF)
        return;   /* never escalate, unless an earlier call asked to */
    /* The loop's cached time may be stale (stop called after blocking
     * work), and the timer counts from it: refresh it so the grace period
     * is never shorter than asked. */
    uv_update_time(ch->loop);
    int64_t now = (int64_t)uv_now(ch->loop);
    int64_t deadline = grace_ms > RR_INF - now ? RR_INF : now + grace_ms;
    if (ch->kill_armed && ch->kill_deadline_ms <= deadline)
        return;
    ch->kill_armed = true;
    ch->kill_deadline_ms = deadline;
    uv_timer_start(&ch->kill_timer, on_kill_timer, (uint64_t)grace_ms, 0);
}

void rr_child_kill_now(struct rr_child *ch)
{
    if (!ch || ch->closing)
        return;
    if (ch->state == CHILD_RUNNING)
        transition(ch, CHILD_STOPPING);
    /* The guard kills the group and everything it has at once, and keeps
     * killing whatever appears until it is all reaped. */
    rr_guard_hurry(ch->guard);
    rr_guard_set_deadline(ch->guard, 0);
    rr_child_signal(ch, SIGKILL);
    /* cgroup.kill reaches frozen processes; thawed so as not to stay so. */
    thaw(ch);
}

void rr_child_set_deadline(struct rr_child *ch, int64_t deadline_ms)
{
    if (ch && !ch->closing)
        rr_guard_set_deadline(ch->guard, deadline_ms);
}

bool rr_child_lease_ran_out(const struct rr_child *ch)
{
    return ch && (ch->lease_ran_out || rr_guard_termed(ch->guard) || rr_guard_fired(ch->guard));
}

pid_t rr_child_guard_died(const struct rr_child *ch)
{
    return ch ? ch->guard_died : 0;
}

pid_t rr_child_pid(const struct rr_child *ch)
{
    return ch ? ch->pid : -1;
}

void rr_child_free(struct rr_child *ch)
{
    if (!ch || ch->closing)
        return;
    /* A command still running is left alone (the caller decides whether to
     * stop it first); the watchers go, so the loop can finish. Its guard
     * stays: it kills everything when we exit. */
    ch->closing = true;
    ch->kill_armed = false;
    live_guard = NULL;
    ch->guard = NULL;
    rr_guard_stop(ch->spent_guard);
    ch->spent_guard = NULL;
    uv_close((uv_handle_t *)&ch->sweep_timer, on_handle_close);
    uv_close((uv_handle_t *)&ch->reports, on_handle_close);
    uv_close((uv_handle_t *)&ch->kill_timer, on_handle_close);
}

void rr_child_pause(struct rr_child *ch)
{
    if (!ch || ch->closing || reaped(ch))
        return;
    rr_child_signal(ch, SIGSTOP);
    if (!ch->cgroup)
        return;
    int rc = rr_cgroup_freeze(ch->cgroup, 1);
    if (rc == 0)
        ch->frozen = true;
    else
        rr_log(RR_LOG_WARN, "contain", NULL,
               "cannot freeze the cgroup %s (%s): what the command started outside its "
               "process group runs on while we are stopped", rr_cgroup_path(ch->cgroup),
               strerror(-rc));
}

void rr_child_resume(struct rr_child *ch)
{
    if (!ch || ch->closing)
        return;
    thaw(ch);
    if (!reaped(ch) && !ch->foreground && rr_tty_ours()) {
        rr_tty_give(ch->pid);
        ch->tty = true;
    }
    rr_child_signal(ch, SIGCONT);
}

int rr_child_exit_code(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return -1;
}
