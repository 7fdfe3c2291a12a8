/* child.c — the wrapped command: spawn (through the guard), signal, stop,
 * and hear of its end.
 *
 * The guard (guard.c) is the command's parent and the only process that
 * signals it: it spawns it, reaps it, stops what it leaves, and reports
 * each step over a pipe watched here with uv_poll. We never reap the
 * command ourselves and never signal it: we ask the guard. Its death is
 * an ordinary loop event (the report pipe's EOF): a successor guard then
 * kills what is left, and we reap it (we are a subreaper, and what the
 * guard had came to us).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "child.h"
#include "exec.h"
#include "guard.h"
#include "log.h"
#include "mutant.h"
#include "proc.h"
#include "rr.h"
#include "tty.h"

extern char **environ;

/* Where the command is; every change goes through transition(). */
enum child_state {
    CHILD_PREPARED,    /* the guard waits for the command */
    CHILD_STARTING,    /* asked to spawn it: its exec's outcome not known yet */
    CHILD_RUNNING,     /* spawned: the leader lives */
    CHILD_STOPPING,    /* ... and we asked it to end (rr_child_stop, _kill_now) */
    CHILD_SWEEPING,    /* the leader was reaped; what it left is being stopped */
    CHILD_EXITED,      /* reaped, nothing left, the guard gone: exit reported */
};

struct rr_child {
    uv_loop_t *loop;
    uv_poll_t reports;         /* the guard's report pipe */
    uv_poll_t exec_poll;       /* the exec pipe, while STARTING */
    int exec_fd;               /* its read end, -1 once the outcome is known */
    const char *name;          /* argv[0], the caller's: for the messages */
    uv_timer_t reap_timer;     /* the guard died: reaping what its successor kills */
    pid_t pid;
    enum child_state state;
    struct rr_guard *guard;    /* the command's parent (guard.h) */
    struct rr_guard *spent_guard;   /* stood down at EXITED, reaped when freed */
    const struct rr_cgroup *cgroup;
    pid_t successor;           /* after the guard's death: its successor's pid */
    bool foreground;
    bool watching;             /* the handles were initialised */
    bool exec_watched;         /* exec_poll was initialised and not closed */
    bool reports_watched;      /* reports was initialised */
    bool guard_eof;            /* the guard died while STARTING: told once settled */
    bool spawn_tried;          /* rr_child_start asked the guard */
    bool stop_asked;           /* stopped (or killed) while STARTING */
    bool closing;              /* rr_child_free was called: handles closing */
    bool tty;                  /* its group has the terminal (tty.h) */
    bool lease_ran_out;        /* the guard had acted, seen as it stood down */
    bool frozen;               /* rr_child_pause froze its cgroup */
    pid_t guard_died;          /* its pid, if it died before the command ended */
    int open_handles;
    int wstatus;               /* the leader's, once reaped */
    rr_child_exit_fn exit_cb;
    rr_child_started_fn started_cb;
    rr_child_stop_fn stop_cb;
    void *arg;
};

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
    case CHILD_PREPARED:
        /* from nothing: the guard was forked */
        break;
    case CHILD_STARTING:
        /* from PREPARED: the spawn was asked for */
        break;
    case CHILD_RUNNING:
        /* from STARTING: the exec succeeded */
        break;
    case CHILD_STOPPING:
        /* from RUNNING (or STARTING, once it has exec'd): what the command
         * leaves gets no grace of its own */
        rr_guard_hurry(ch->guard);
        break;
    case CHILD_SWEEPING:
        /* from RUNNING or STOPPING: the leader was reaped, and its pid may
         * be anyone's now; the terminal comes back to us */
        if (ch->tty) {
            rr_tty_take(ch->pid);
            ch->tty = false;
        }
        break;
    case CHILD_EXITED:
        /* from SWEEPING once nothing is left. The guard is told to exit,
         * but not waited for here: nothing of the command is left, so the
         * lock's release need not wait for the guard's own exit;
         * rr_child_free reaps it, by then long gone. */
        rr_guard_stand_down(ch->guard);
        ch->spent_guard = ch->guard;
        ch->guard = NULL;
        thaw(ch);   /* nothing is left in it; never left frozen all the same */
        /* Empty now, and ours no more: its owner (run.c) removes it. */
        ch->cgroup = NULL;
        if (ch->watching) {
            uv_poll_stop(&ch->reports);
            uv_timer_stop(&ch->reap_timer);
        }
        if (ch->exec_watched)   /* never left polling a pipe at EOF */
            uv_poll_stop(&ch->exec_poll);
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

/* A stop report read once the command runs again is out of date: with
 * --foreground the shell's fg continued it with us (one process group), or
 * it was continued meanwhile. Acted on, it would stop the job once more
 * right after fg. Where /proc cannot say, the report stands. */
static bool stopped_still(pid_t pid)
{
    struct rr_proc_stat st;

    return pid <= 0 || rr_proc_read_stat(pid, &st) != 0 || st.state == 'T' || st.state == 't';
}

/* Not an exit: reported, and run_step.c decides (a job stops as a whole
 * only where a shell can continue it). A stopped job gives the terminal
 * back, as a shell's would. */
static void on_stopped(struct rr_child *ch, int sig)
{
    if (!stopped_still(ch->pid)) {
        rr_log(RR_LOG_DEBUG, "child", NULL, "a stop (%s) of the command that it is no longer in: "
               "passed over", strsignal(sig));
        return;
    }
    if (ch->tty && (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
        rr_tty_take(ch->pid);
    if (ch->stop_cb)
        ch->stop_cb(ch, sig, ch->arg);
}

/* After the guard's death: reap what its successor kills (what the guard
 * had came to us), until the successor itself is done. */
static void on_reap_timer(uv_timer_t *h)
{
    struct rr_child *ch = h->data;
    pid_t p;
    int st;

    while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
        if (p == ch->successor) {
            finish_exit(ch);
            return;
        }
    if (p < 0 && errno == ECHILD) {
        finish_exit(ch);   /* nothing of ours is left at all */
        return;
    }
    uv_timer_start(&ch->reap_timer, on_reap_timer, 10, 0);
}

/* The guard died before the end (the report pipe closed): nothing enforces
 * the lease any more. The command was killed by PR_SET_PDEATHSIG; what it
 * started came to us, and a successor guard kills it; we reap. */
static void guard_died(struct rr_child *ch)
{
    pid_t gpid = rr_guard_pid(ch->guard);

    uv_poll_stop(&ch->reports);
    ch->lease_ran_out = rr_guard_termed(ch->guard) || rr_guard_fired(ch->guard);
    if (!reaped(ch)) {
        ch->guard_died = gpid;
        ch->wstatus = SIGKILL;   /* as waitpid says of a death by SIGKILL */
        transition(ch, CHILD_SWEEPING);
    } else {
        rr_log(RR_LOG_WARN, "guard", NULL,
               "the guard (pid %d) died after the command ended; what the command left "
               "is being stopped", (int)gpid);
    }
    ch->successor = rr_guard_start_successor(ch->foreground ? 0 : ch->pid, !ch->guard_died,
                                             ch->cgroup);
    if (ch->successor < 0)
        rr_log(RR_LOG_ERROR, "guard", NULL,
               "cannot start a process to stop what the command left: %s", strerror(errno));
    /* Reaped only now: once the dead guard's pid is gone, its successor
     * exists, and a SIGSTOP of ours from then on stops nothing it does. */
    rr_guard_reap_dead(ch->guard);
    ch->guard = NULL;
    on_reap_timer(&ch->reap_timer);
}

static bool settle(struct rr_child *ch);

static void on_report(uv_poll_t *h, int status, int events)
{
    struct rr_child *ch = h->data;
    struct rr_guard_report r;
    int got;

    (void)status;
    (void)events;
    /* The exec's outcome before each report: C's end of the exec pipe is
     * closed before the guard can report C reaped (and a stop_cb may have
     * stopped us for a while in between). */
    while (ch->guard && ch->state != CHILD_EXITED) {
        if (!settle(ch))
            return;   /* the spawn failed: ch is freed */
        if ((got = rr_guard_read_report(ch->guard, &r)) == 0)
            break;
        if (got < 0 && ch->state == CHILD_STARTING) {
            /* C dies with it (PDEATHSIG): its outcome comes, then this. */
            ch->guard_eof = true;
            uv_poll_stop(&ch->reports);
            return;
        }
        if (got < 0) {
            guard_died(ch);
            return;
        }
        if (ch->pid <= 0)
            ch->pid = rr_guard_child(ch->guard);   /* written before any report */
        switch (r.kind) {
        case RR_GUARD_STOPPED:   /* while STARTING too: stopped before its exec */
            if (!reaped(ch))
                on_stopped(ch, r.value);
            break;
        case RR_GUARD_REAPED:
            ch->wstatus = r.value;
            transition(ch, CHILD_SWEEPING);
            if (RR_MUTANT_IS(release_before_reap) && ch->exit_cb) {
                ch->exit_cb(ch, ch->wstatus, ch->arg);
                ch->exit_cb = NULL;
            }
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

/* If the exec's outcome is known, act on it: on success the command
 * runs (started_cb); on failure the child is freed, started_cb told, and
 * false returned. True while STARTING still or after it. */
static bool settle(struct rr_child *ch)
{
    char err[RR_ERRLEN] = "";

    if (ch->state != CHILD_STARTING)
        return true;
    int rc = rr_guard_spawn_outcome(ch->guard, ch->exec_fd, ch->name, err, sizeof err);
    if (rc == 1)
        return true;
    /* Not polled any more before it is closed (libuv's rule). */
    uv_close((uv_handle_t *)&ch->exec_poll, on_handle_close);
    ch->exec_watched = false;
    close(ch->exec_fd);
    ch->exec_fd = -1;
    if (rc != 0) {
        rr_child_started_fn cb = ch->started_cb;
        void *arg = ch->arg;
        ch->tty = false;
        rr_child_free(ch);
        cb(NULL, rc, err, arg);
        return false;
    }
    ch->pid = rr_guard_child(ch->guard);
    transition(ch, CHILD_RUNNING);
    if (ch->stop_asked)
        transition(ch, CHILD_STOPPING);
    ch->started_cb(ch, 0, "", ch->arg);
    if (ch->guard_eof && ch->guard)
        guard_died(ch);
    return true;
}

/* The exec pipe said something: how the spawn ended. */
static void on_exec_outcome(uv_poll_t *h, int status, int events)
{
    (void)status;
    (void)events;
    settle(h->data);
}

/* ---- spawning ---- */

int rr_child_prepare(struct rr_child **out, const struct rr_child_opts *o, char *err,
                     size_t errlen)
{
    struct rr_child *ch = calloc(1, sizeof *ch);

    *out = NULL;
    if (!ch) {
        snprintf(err, errlen, "cannot start the guard process: out of memory");
        return -1;
    }
    ch->exec_fd = -1;
    /* If the guard dies, what the command started is re-parented to us,
     * not to init. */
    prctl(PR_SET_CHILD_SUBREAPER, !RR_MUTANT_IS(no_wrapper_subreaper));
    const struct rr_guard_opts go = { .foreground = o->foreground, .cgroup = o->cgroup,
                                      .leftover = o->leftover };
    ch->guard = rr_guard_start(&go);
    if (!ch->guard) {
        struct rlimit nproc;
        if (errno == EAGAIN && getrlimit(RLIMIT_NPROC, &nproc) == 0 &&
            nproc.rlim_cur != RLIM_INFINITY)
            snprintf(err, errlen, "cannot start the guard process: the limit on processes is "
                     "reached (ulimit -u is %llu); raise it, or end some of this user's "
                     "processes", (unsigned long long)nproc.rlim_cur);
        else
            snprintf(err, errlen, "cannot start the guard process: %s", strerror(errno));
        free(ch);
        return -1;
    }
    ch->cgroup = o->cgroup;
    ch->foreground = o->foreground;
    transition(ch, CHILD_PREPARED);
    *out = ch;
    return 0;
}

/* The handles: the reap timer, the exec pipe's watcher and the report
 * pipe's, both watched from now on. 0, or -1 with err filled; what was
 * initialised is closed by rr_child_free. */
static int watch(struct rr_child *ch, int exec_fd, char *err, size_t errlen)
{
    uv_timer_init(ch->loop, &ch->reap_timer);
    ch->reap_timer.data = ch->reports.data = ch->exec_poll.data = ch;
    ch->watching = true;
    ch->open_handles = 1;
    int e = uv_poll_init(ch->loop, &ch->exec_poll, exec_fd);
    if (e == 0) {
        ch->exec_watched = true;
        ch->open_handles++;
        e = uv_poll_init(ch->loop, &ch->reports, rr_guard_report_fd(ch->guard));
    }
    if (e == 0) {
        ch->reports_watched = true;
        ch->open_handles++;
        e = uv_poll_start(&ch->exec_poll, UV_READABLE | UV_DISCONNECT, on_exec_outcome);
    }
    /* The reports too, from now on: a command stopped before its exec
     * (a SIGTSTP pending since it took the terminal) is reported so. */
    if (e == 0)
        e = uv_poll_start(&ch->reports, UV_READABLE | UV_DISCONNECT, on_report);
    if (e < 0)
        snprintf(err, errlen, "cannot watch '%s': %s", ch->name, uv_strerror(e));
    return e < 0 ? -1 : 0;
}

int rr_child_start(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                   char *const envp[], const struct rr_child_opts *o,
                   rr_child_exit_fn exit_cb, rr_child_started_fn started_cb, void *arg,
                   char *err, size_t errlen)
{
    struct rr_child *ch = *out;
    int rc, fd = -1;

    *out = NULL;
    if (!argv || !argv[0]) {
        snprintf(err, errlen, "no command to run");
        rr_child_free(ch);
        return -RR_EXIT_NOTFOUND;
    }
    if (!ch && rr_child_prepare(&ch, o, err, errlen) != 0)
        return -1;
    ch->loop = loop;
    ch->name = argv[0];
    ch->spawn_tried = true;
    ch->tty = !ch->foreground && rr_tty_ours();
    const struct rr_guard_spawn gs = { .argv = argv, .envp = envp ? envp : environ,
                                       .tty = ch->tty, .deadline_ms = o->deadline_ms,
                                       .grace_ms = o->grace_ms };
    rc = rr_guard_spawn_send(ch->guard, &gs, &fd, err, errlen);
    ch->exec_fd = fd;
    if (rc == 0 && watch(ch, fd, err, errlen) != 0)
        rc = -1;
    if (rc != 0) {
        /* The guard reaps a command that failed, and kills one that did
         * not (its watcher failed) as it stands down. */
        ch->tty = false;
        rr_child_free(ch);
        return rc;
    }
    ch->exit_cb = exit_cb;
    ch->started_cb = started_cb;
    ch->stop_cb = o->stop_cb;
    ch->arg = arg;
    transition(ch, CHILD_STARTING);
    *out = ch;
    return 0;
}

/* ---- what run.c asks ---- */

int rr_child_signal(struct rr_child *ch, int sig)
{
    /* While STARTING too: the guard takes requests in order, so a signal
     * asked for after the spawn reaches the command. */
    if (!ch || ch->closing || reaped(ch) || ch->state == CHILD_PREPARED)
        return 0;
    return rr_guard_signal(ch->guard, sig);
}

void rr_child_stop(struct rr_child *ch, int64_t grace_ms)
{
    if (!ch || ch->closing || ch->state == CHILD_PREPARED)
        return;
    rr_guard_hurry(ch->guard);
    if (reaped(ch))
        return;
    if (ch->state == CHILD_RUNNING)
        transition(ch, CHILD_STOPPING);
    if (ch->state == CHILD_STARTING)
        ch->stop_asked = true;
    /* TERM, then the thaw (a frozen process holds a handled SIGTERM until
     * then: thawed once TERM is pending), then CONT (a stopped process
     * would hold TERM pending until the KILL, as timeout(1) knows); KILL
     * after the grace: the guard does it all, in that order. */
    ch->frozen = false;
    rr_guard_stop_child(ch->guard, grace_ms);
}

void rr_child_kill_now(struct rr_child *ch)
{
    if (!ch || ch->closing || ch->state == CHILD_PREPARED)
        return;
    if (ch->state == CHILD_RUNNING)
        transition(ch, CHILD_STOPPING);
    if (ch->state == CHILD_STARTING)
        ch->stop_asked = true;
    /* The guard kills the group and everything it has at once, and keeps
     * killing whatever appears until it is all reaped; cgroup.kill reaches
     * frozen processes, and it thaws the cgroup after. */
    ch->frozen = false;
    rr_guard_kill_now(ch->guard);
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
    /* A command still running is left to its guard, which kills
     * everything when told to stand down or when we exit. */
    ch->closing = true;
    /* A guard that never spawned, or one that reported everything gone,
     * exits by itself: not waited for (rr_guard_let_go); nothing of the
     * command is in the cgroup, which is removed after this. */
    if (ch->state == CHILD_PREPARED && !ch->spawn_tried)
        rr_guard_let_go(ch->guard);
    else
        rr_guard_stop(ch->guard);
    ch->guard = NULL;
    rr_guard_let_go(ch->spent_guard);
    ch->spent_guard = NULL;
    if (!ch->watching) {
        if (ch->exec_fd >= 0)
            close(ch->exec_fd);
        free(ch);
        return;
    }
    uv_close((uv_handle_t *)&ch->reap_timer, on_handle_close);
    if (ch->exec_watched)
        uv_close((uv_handle_t *)&ch->exec_poll, on_handle_close);
    if (ch->exec_fd >= 0)
        close(ch->exec_fd);   /* asked to spawn, the outcome never heard */
    ch->exec_fd = -1;
    if (ch->reports_watched)
        uv_close((uv_handle_t *)&ch->reports, on_handle_close);
}

void rr_child_pause(struct rr_child *ch)
{
    if (!ch || ch->closing || reaped(ch) || ch->state == CHILD_PREPARED)
        return;
    rr_guard_signal(ch->guard, SIGSTOP);
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
    if (!ch || ch->closing || ch->state == CHILD_PREPARED)
        return;
    thaw(ch);
    if (ch->pid <= 0)
        ch->pid = rr_guard_child(ch->guard);   /* STARTING: once forked */
    if (!reaped(ch) && !ch->foreground && ch->pid > 0 && rr_tty_ours()) {
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
