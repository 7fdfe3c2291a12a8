/* child.c — the wrapped command: spawn, signal, stop, reap.
 *
 * We fork and exec ourselves instead of using uv_spawn because the child
 * must call prctl(PR_SET_PDEATHSIG) between fork and exec, which uv_spawn
 * has no hook for. Exit is observed with our own SIGCHLD watcher and
 * waitpid() on pids we know: the command, then the stragglers the sweep
 * finds among our children (sweep.c), and the guard when it stands down
 * (guard.c). Never waitpid(-1), so libuv's SIGCHLD handling for any
 * uv_spawn process elsewhere is left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "guard.h"
#include "log.h"
#include "proc.h"
#include "rr.h"
#include "sweep.h"
#include "tty.h"

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* Where the command is; every change goes through transition(). */
enum child_state {
    CHILD_RUNNING,     /* spawned: the leader lives */
    CHILD_STOPPING,    /* ... and we asked it to end (rr_child_stop, _kill_now) */
    CHILD_SWEEPING,    /* the leader was reaped; what it left is being stopped */
    CHILD_EXITED,      /* reaped, nothing left, the guard gone: exit reported */
};

struct rr_child {
    uv_loop_t *loop;
    uv_signal_t sigchld;
    uv_timer_t check_timer;    /* one look right after the watcher starts */
    uv_timer_t kill_timer;     /* TERM -> KILL escalation */
    uv_timer_t sweep_timer;    /* stopping what the command left behind */
    pid_t pid;
    enum child_state state;
    struct rr_guard *guard;    /* the lease's enforcer (guard.h) */
    struct rr_sweep sweep;     /* valid in CHILD_SWEEPING */
    bool foreground;
    bool kill_armed;           /* kill_timer is counting down */
    bool closing;              /* rr_child_free was called: handles closing */
    bool tty;                  /* its group has the terminal (tty.h) */
    bool lease_ran_out;        /* the guard had acted, seen as it stood down */
    bool said_tty_stop;        /* warned that SIGTTIN/SIGTTOU stopped it */
    bool said_stop;            /* warned that someone else stopped it */
    int open_handles;
    int64_t kill_deadline_ms;  /* uv_now() based, valid if kill_armed */
    int64_t grace_ms;          /* TERM -> KILL for stragglers */
    int wstatus;               /* the leader's, once reaped */
    rr_child_exit_fn exit_cb;
    void *arg;
};

/* Everything the forked child needs, built before fork so that the child
 * only makes async-signal-safe calls (no malloc). */
struct exec_plan {
    char **paths;              /* candidate file names, NULL-terminated */
    char **sh_argv;            /* "sh", file, argv[1..], NULL: for ENOEXEC */
};

static void free_plan(struct exec_plan *plan)
{
    free(plan->sh_argv);
    plan->sh_argv = NULL;
    if (plan->paths) {
        for (char **p = plan->paths; *p; p++)
            free(*p);
        free(plan->paths);
    }
    plan->paths = NULL;
}

/* Build the list of files execvp would try for name: name itself when it
 * contains a slash, else every PATH directory (an empty entry meaning the
 * current directory, as POSIX says). Returns 0 or -1 when out of memory. */
static int build_plan(const char *name, struct exec_plan *plan)
{
    plan->paths = NULL;
    if (strchr(name, '/') || name[0] == '\0') {
        plan->paths = calloc(2, sizeof *plan->paths);
        if (!plan->paths || !(plan->paths[0] = strdup(name)))
            goto fail;
        return 0;
    }

    const char *path = getenv("PATH");
    if (!path)
        path = DEFAULT_PATH;
    size_t n = 1;
    for (const char *s = path; *s; s++)
        n += (*s == ':');
    plan->paths = calloc(n + 1, sizeof *plan->paths);
    if (!plan->paths)
        goto fail;

    size_t namelen = strlen(name), i = 0;
    const char *dir = path;
    for (;;) {
        const char *end = strchrnul(dir, ':');
        size_t dirlen = (size_t)(end - dir);
        char *cand = malloc(dirlen + namelen + 3);
        if (!cand)
            goto fail;
        if (dirlen == 0)
            sprintf(cand, "./%s", name);
        else
            sprintf(cand, "%.*s/%s", (int)dirlen, dir, name);
        plan->paths[i++] = cand;
        if (*end == '\0')
            break;
        dir = end + 1;
    }
    return 0;

fail:
    free_plan(plan);
    return -1;
}

/* The paths to try and the shell's argv for argv[0]; 0, or -1 when out of
 * memory. Without sh_argv (out of memory) a script without "#!" is an exec
 * format error, as for a binary. */
static int make_plan(char *const argv[], struct exec_plan *plan)
{
    if (build_plan(argv[0], plan) < 0)
        return -1;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    plan->sh_argv = calloc(argc + 2, sizeof *plan->sh_argv);
    if (plan->sh_argv) {
        plan->sh_argv[0] = (char *)"sh";
        for (size_t i = 1; i < argc; i++)
            plan->sh_argv[i + 1] = argv[i];
    }
    return 0;
}

/* Does the file start like text (no ELF magic, no NUL in its first bytes)?
 * Only system calls: it runs in the vfork child. */
static bool looks_like_text(const char *path)
{
    char buf[128];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return false;
    n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0 || (n >= 4 && memcmp(buf, "\x7f" "ELF", 4) == 0))
        return false;
    return memchr(buf, '\0', (size_t)n) == NULL;
}

/* Runs in the forked child: only async-signal-safe calls from here on. */
static void __attribute__((noreturn))
exec_child(const struct exec_plan *plan, char *const argv[], char *const envp[],
           bool foreground, bool tty, pid_t parent, int errfd, struct rr_guard *guard)
{
    /* First of all, so that the guard can stop us however slow the rest is
     * (a blocked parent, an exec from a stalled NFS mount). */
    rr_guard_set_child(guard, (pid_t)syscall(SYS_getpid));
    if (!foreground)
        setpgid(0, 0);
    /* The terminal goes with us (SIGTTOU is still ignored here). */
    if (tty)
        rr_tty_give((pid_t)syscall(SYS_getpid));

    /* Die with redlock-run, even when it is SIGKILLed: our lock would
     * expire under a child that outlives us. If the parent already died
     * before prctl took effect, the signal will never come, so check. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(RR_EXIT_SOFTWARE);

    /* Handlers are reset by exec anyway, but ignored signals survive it
     * (SIGPIPE: redlock-run ignores it), so every disposition goes back to
     * default. This is done while all signals are still blocked (the parent
     * blocked them around fork), so no inherited libuv handler can run here
     * and write into the parent's signal pipe. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL);   /* glibc-reserved ones fail: fine */
    }
    sigset_t none;
    sigemptyset(&none);

    /* The lease must leave the grace to stop the command before its end:
     * a command started later could not be stopped in time. (ETIME tells
     * the parent; the guard stops us anyway if we got here too late.) */
    int err = ENOENT;
    if (!rr_guard_lease_ok(guard)) {
        err = ETIME;
        goto report;
    }
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* Like execvp: skip files that are missing, remember EACCES in case
     * nothing else is found, stop at any other error. */
    bool saw_eacces = false;
    for (char *const *p = plan->paths; *p; p++) {
        execve(*p, argv, envp);
        err = errno;
        if (err == ENOEXEC && plan->sh_argv && looks_like_text(*p)) {
            /* A script without "#!": run it with the shell, as execvp and
             * every shell do (a binary stays an exec format error, as in
             * bash). sh_argv was built before vfork. */
            plan->sh_argv[1] = *p;
            execve("/bin/sh", plan->sh_argv, envp);
            err = errno;
            break;
        }
        if (err == EACCES) {
            saw_eacces = true;
            continue;
        }
        if (err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV ||
            err == ETIMEDOUT)
            continue;
        break;
    }
    if (saw_eacces && (err == ENOENT || err == ENOTDIR || err == ESTALE ||
                       err == ENODEV || err == ETIMEDOUT))
        err = EACCES;

report:;
    ssize_t w;
    do {
        w = write(errfd, &err, sizeof err);
    } while (w < 0 && errno == EINTR);
    _exit(RR_EXIT_NOTFOUND);
}

/* "cannot run 'foo': permission denied" and friends; returns -126/-127. */
static int exec_error(int e, const char *name, bool searched, char *err, size_t errlen)
{
    if (e == ETIME) {
        snprintf(err, errlen, "not running '%s': the lease had too little time left to "
                 "stop it before its end", name);
        return RR_SPAWN_LATE;
    }
    if (e == ENOENT || e == ENOTDIR) {
        /* A bare name was looked up in PATH; a path names one file. */
        if (searched)
            snprintf(err, errlen, "cannot run '%s': command not found", name);
        else
            snprintf(err, errlen, "cannot run '%s': no such file or directory", name);
        return -RR_EXIT_NOTFOUND;
    }
    char msg[128];
    snprintf(msg, sizeof msg, "%s", strerror(e));
    if (msg[0] >= 'A' && msg[0] <= 'Z')
        msg[0] = (char)(msg[0] - 'A' + 'a');
    snprintf(err, errlen, "cannot run '%s': %s", name, msg);
    return -RR_EXIT_NOEXEC;
}

/* ---- the command's state ---- */

static bool reaped(const struct rr_child *ch)
{
    return ch->state == CHILD_SWEEPING || ch->state == CHILD_EXITED;
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
        break;
    case CHILD_SWEEPING:
        /* from RUNNING or STOPPING: the leader was reaped, and its pid may
         * be anyone's now: no KILL for it, the terminal comes back to us,
         * and the guard signals only its group */
        ch->kill_armed = false;
        if (ch->tty) {
            rr_tty_take(ch->pid);
            ch->tty = false;
        }
        rr_guard_leader_reaped(ch->guard);
        uv_timer_stop(&ch->kill_timer);
        break;
    case CHILD_EXITED:
        /* from SWEEPING once nothing is left; from RUNNING only when the
         * child could not be watched and was killed and reaped at once */
        rr_guard_stop(ch->guard);
        ch->guard = NULL;
        uv_signal_stop(&ch->sigchld);
        uv_timer_stop(&ch->check_timer);
        uv_timer_stop(&ch->kill_timer);
        uv_timer_stop(&ch->sweep_timer);
        break;
    }
}

/* ---- reaping ---- */

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
    if (rr_guard_tree_full(ch->guard))
        rr_log(RR_LOG_WARN, "guard", NULL,
               "the command had more than %d processes at once: had redlock-run been "
               "SIGKILLed, the guard would not have known them all",
               RR_PROC_MAX);
    transition(ch, CHILD_EXITED);
    /* Last use of ch here: exit_cb may call rr_child_free, whose memory
     * stays valid until the close callbacks run. */
    if (ch->exit_cb)
        ch->exit_cb(ch, ch->wstatus, ch->arg);
}

static void on_sweep_timer(uv_timer_t *h);

/* What the sweep said: nothing left (report the exit), or look again. */
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

/* Not an exit. Ctrl-Z (the command had the terminal), or a read or write
 * of the terminal from the background: the job stops, and we with it, as
 * a shell's job would: the run's state machine (RR_EV_SIGTSTP in
 * run_step.c) stops the group, lets the lease be watched by the guard, and
 * continues the command with the terminal on fg, if the lease allows. */
static void on_stopped(struct rr_child *ch, int sig)
{
    if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
        if (ch->tty)
            rr_tty_take(ch->pid);
        if (sig != SIGTSTP && !ch->said_tty_stop) {
            ch->said_tty_stop = true;
            rr_log(RR_LOG_WARN, "tty_stop", NULL,
                   "the command was stopped by %s: it %s the terminal while redlock-run "
                   "was in the background; stopping with it (fg continues both), or use "
                   "--foreground", sig == SIGTTIN ? "SIGTTIN" : "SIGTTOU",
                   sig == SIGTTIN ? "read" : "changed or wrote to");
        }
        raise(SIGTSTP);
    } else if (!ch->said_stop) {
        ch->said_stop = true;
        rr_log(RR_LOG_WARN, "child_stopped", NULL,
               "the command was stopped (%s) by another process; it keeps the lock until "
               "it is continued or ends, and the guard ends it when the lease can no "
               "longer be renewed", strsignal(sig));
    }
}

static void try_reap(struct rr_child *ch)
{
    if (ch->state == CHILD_SWEEPING) {
        sweep_next(ch, rr_sweep_look(&ch->sweep));
        return;
    }
    if (ch->state == CHILD_EXITED)
        return;
    int st = 0;
    pid_t r;
    do {
        r = waitpid(ch->pid, &st, WNOHANG | WUNTRACED);
    } while (r < 0 && errno == EINTR);
    if (r == 0)
        return;
    if (r > 0 && WIFSTOPPED(st)) {
        on_stopped(ch, WSTOPSIG(st));
        return;
    }
    if (r < 0) {
        /* ECHILD: someone else reaped our child (SIGCHLD set to SIG_IGN,
         * or a stray waitpid(-1)). The status is gone; report a failure
         * rather than waiting forever for an exit we will never see. */
        st = 255 << 8;
    }
    bool was_stopping = ch->state == CHILD_STOPPING;
    ch->wstatus = st;
    transition(ch, CHILD_SWEEPING);
    /* Stop what it left, then report its exit. */
    sweep_next(ch, rr_sweep_begin(&ch->sweep, ch->foreground ? 0 : ch->pid,
                                  rr_guard_pid(ch->guard), ch->grace_ms, was_stopping));
}

static void on_sigchld(uv_signal_t *h, int signum)
{
    (void)signum;
    try_reap(h->data);
}

static void on_check_timer(uv_timer_t *h)
{
    try_reap(h->data);
}

static void on_kill_timer(uv_timer_t *h)
{
    struct rr_child *ch = h->data;
    ch->kill_armed = false;
    rr_child_signal(ch, SIGKILL);
}

/* ---- spawning ---- */

struct spawn_args {
    const struct exec_plan *plan;
    char *const *argv;
    char *const *envp;
    bool foreground;
    bool tty;
    pid_t parent;
    int rfd, wfd;
    struct rr_guard *guard;
};

/* vfork, as posix_spawn does: the child borrows our memory until it execs,
 * so nothing is copied and we take no copy-on-write faults afterwards (a
 * real cost per run). We are suspended meanwhile, with every signal
 * blocked; the child only makes system calls and never returns here. */
static pid_t spawn_vfork(const struct spawn_args *a)
{
    pid_t pid = vfork();

    if (pid == 0) {
        close(a->rfd);
        exec_child(a->plan, a->argv, a->envp, a->foreground, a->tty, a->parent, a->wfd,
                   a->guard);
    }
    return pid;
}

/* Start the child on the plan, in its own group with the terminal unless
 * foreground; the write end of pipefd is closed here. Returns its pid, or
 * -1 with vfork's errno in *fork_errno. */
static pid_t launch(struct rr_child *ch, const struct exec_plan *plan, char *const argv[],
                    char *const envp[], bool foreground, int pipefd[2], int *fork_errno)
{
    /* Block every signal across vfork: the child must not run one of our
     * handlers before it has reset them to default. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool tty = !foreground && rr_tty_ours();
    struct spawn_args sa = { plan, argv, envp, foreground, tty, getpid(), pipefd[0],
                             pipefd[1], ch->guard };
    pid_t pid = spawn_vfork(&sa);
    *fork_errno = errno;
    if (pid > 0)
        rr_guard_set_child(ch->guard, pid);  /* the parent's side too */
    if (pid > 0 && !foreground) {
        /* Also from this side, so the group exists when fork returns and a
         * killpg right away cannot miss. EACCES once the child has exec'd:
         * then it has done setpgid itself. */
        setpgid(pid, pid);
        if (tty)
            rr_tty_give(pid);
    }
    ch->tty = pid > 0 && tty;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(pipefd[1]);
    pipefd[1] = -1;
    return pid;
}

static void wait_for(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* Wait for the exec's outcome on the read end (closed here): the write end
 * closes on exec, so EOF means it succeeded. Returns 0, or (the failed
 * child reaped) exec_error's code with err filled. */
static int await_exec(pid_t pid, int *rfd, const char *name, char *err, size_t errlen)
{
    int child_errno = 0;
    ssize_t n;
    do {
        n = read(*rfd, &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    close(*rfd);
    *rfd = -1;
    if (n == 0)
        return 0;
    wait_for(pid);
    if (n != (ssize_t)sizeof child_errno)
        child_errno = EIO;
    return exec_error(child_errno, name, !strchr(name, '/'), err, errlen);
}

/* Watch the running child (SIGCHLD, timers). On failure the child is
 * killed and reaped, ch freed (now or by the close callbacks), err filled
 * and -1 returned. */
static int watch(struct rr_child *ch, const char *name, char *err, size_t errlen)
{
    int e = uv_signal_init(ch->loop, &ch->sigchld);
    if (e < 0) {
        /* Nothing watches it: kill it now rather than leave it unmanaged. */
        snprintf(err, errlen, "cannot watch '%s': %s", name, uv_strerror(e));
        rr_child_signal(ch, SIGKILL);
        wait_for(ch->pid);
        rr_guard_stop(ch->guard);
        free(ch);
        return -1;
    }
    uv_timer_init(ch->loop, &ch->check_timer);
    uv_timer_init(ch->loop, &ch->kill_timer);
    uv_timer_init(ch->loop, &ch->sweep_timer);
    ch->open_handles = 4;
    ch->sigchld.data = ch->check_timer.data = ch->kill_timer.data = ch;
    ch->sweep_timer.data = ch;

    e = uv_signal_start(&ch->sigchld, on_sigchld, SIGCHLD);
    if (e < 0) {
        snprintf(err, errlen, "cannot watch '%s': %s", name, uv_strerror(e));
        rr_child_signal(ch, SIGKILL);
        wait_for(ch->pid);
        transition(ch, CHILD_EXITED);
        rr_child_free(ch);   /* freed by the close callbacks */
        return -1;
    }
    /* The child may have exited before the watcher was started, and that
     * SIGCHLD is gone; look once on the next loop iteration (not here: the
     * caller must have *out before exit_cb can run). */
    uv_timer_start(&ch->check_timer, on_check_timer, 0, 0);
    return 0;
}

int rr_child_spawn(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                   char *const envp[], const struct rr_child_opts *o,
                   rr_child_exit_fn exit_cb, void *arg, char *err, size_t errlen)
{
    struct exec_plan plan = { NULL, NULL };
    struct rr_child *ch = NULL;
    int pipefd[2] = { -1, -1 };
    int rc = -1;

    *out = NULL;
    if (!argv || !argv[0]) {
        snprintf(err, errlen, "no command to run");
        return -RR_EXIT_NOTFOUND;
    }
    if (!envp)
        envp = environ;
    if (make_plan(argv, &plan) < 0) {
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
    /* Whatever we start from here on is ours to stop: a descendant whose
     * parent dies is re-parented to us, not to init. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* The guard comes first, so that it covers the exec itself. Without
     * one the command is not run: nothing would enforce its lease. */
    ch->guard = rr_guard_start(o->foreground, o->deadline_ms, o->grace_ms);
    if (!ch->guard) {
        snprintf(err, errlen, "cannot start the guard process: %s", strerror(errno));
        goto fail;
    }
    rr_guard_set_marks(ch->guard, envp);

    int fork_errno = 0;
    pid_t pid = launch(ch, &plan, argv, envp, o->foreground, pipefd, &fork_errno);
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(fork_errno));
        goto fail;
    }
    rc = await_exec(pid, &pipefd[0], argv[0], err, errlen);
    if (rc != 0)
        goto fail;
    free_plan(&plan);

    ch->loop = loop;
    ch->pid = pid;
    ch->foreground = o->foreground;
    ch->grace_ms = o->grace_ms;
    ch->exit_cb = exit_cb;
    ch->arg = arg;
    transition(ch, CHILD_RUNNING);
    if (watch(ch, argv[0], err, errlen) < 0)
        return -1;
    *out = ch;
    return 0;

fail:
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    free_plan(&plan);
    if (ch)
        rr_guard_stop(ch->guard);
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
    if (!ch || reaped(ch) || ch->closing)
        return;
    if (ch->state == CHILD_RUNNING)
        transition(ch, CHILD_STOPPING);
    rr_child_signal(ch, SIGTERM);
    /* A stopped process would hold TERM pending until the KILL; wake it so
     * it can exit cleanly (as timeout(1) does). */
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
    /* The guard kills the group and every straggler at once, and keeps
     * killing whatever appears until the command's kin are reaped. */
    rr_guard_set_deadline(ch->guard, 0);
    rr_child_signal(ch, SIGKILL);
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

pid_t rr_child_pid(const struct rr_child *ch)
{
    return ch ? ch->pid : -1;
}

void rr_child_free(struct rr_child *ch)
{
    if (!ch || ch->closing)
        return;
    /* A child still running is left alone (the caller decides whether to
     * stop it first); the watchers go, so the loop can finish. */
    ch->closing = true;
    ch->kill_armed = false;
    /* A guard still there watches a command (or stragglers) we did not
     * reap: its pipe and block stay, and it acts when we exit. */
    ch->guard = NULL;
    uv_close((uv_handle_t *)&ch->sweep_timer, on_handle_close);
    uv_close((uv_handle_t *)&ch->sigchld, on_handle_close);
    uv_close((uv_handle_t *)&ch->check_timer, on_handle_close);
    uv_close((uv_handle_t *)&ch->kill_timer, on_handle_close);
}

void rr_child_resume(struct rr_child *ch)
{
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
