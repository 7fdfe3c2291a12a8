/* child.c — the wrapped command: spawn, signal, stop, reap.
 *
 * We fork and exec ourselves instead of using uv_spawn because the child
 * must call prctl(PR_SET_PDEATHSIG) between fork and exec, which uv_spawn
 * has no hook for. Exit is observed with our own SIGCHLD watcher and
 * waitpid() on our pid only, so libuv's SIGCHLD handling for any uv_spawn
 * process elsewhere is left alone.
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
#include "tty.h"
#include "guard.h"
#include "log.h"
#include "rr.h"

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"


struct rr_child {
    uv_loop_t *loop;
    uv_signal_t sigchld;
    uv_timer_t check_timer;    /* one look right after the watcher starts */
    uv_timer_t kill_timer;     /* TERM -> KILL escalation */
    uv_timer_t sweep_timer;    /* stopping what the command left behind */
    pid_t pid;
    struct rr_guard *guard;    /* the lease's enforcer (guard.h) */
    bool foreground;
    bool reaped;
    bool kill_armed;           /* kill_timer is counting down */
    bool stopping;             /* rr_child_stop was called */
    bool closing;
    int open_handles;
    int64_t kill_deadline_ms;  /* uv_now() based, valid if kill_armed */
    int64_t grace_ms;          /* TERM -> KILL for stragglers */
    int wstatus;               /* the leader's, once reaped */
    bool sweeping;             /* leader reaped, stragglers being stopped */
    bool sweep_killed;         /* ... and SIGKILL was sent */
    int64_t sweep_until;       /* rr_now_ms: KILL at, then give up at */
    bool said_tty_stop;        /* warned that SIGTTIN/SIGTTOU stopped it */
    bool said_stop;            /* warned that someone else stopped it */
    bool tty;                  /* its group has the terminal (tty.h) */
    bool lease_ran_out;        /* the guard had acted, seen as it stood down */
    bool said_stuck;           /* stragglers survive SIGKILL: lock kept */
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

static void on_handle_close(uv_handle_t *h)
{
    struct rr_child *ch = h->data;
    if (--ch->open_handles == 0)
        free(ch);
}

static void finish_exit(struct rr_child *ch)
{
    ch->sweeping = false;
    /* Read before the guard goes: run.c asks after exit_cb. */
    ch->lease_ran_out = rr_guard_termed(ch->guard) || rr_guard_fired(ch->guard);
    if (rr_guard_tree_full(ch->guard))
        rr_log(RR_LOG_WARN, "guard", NULL,
               "the command had more than %d processes at once: had redlock-run been "
               "SIGKILLed, the guard would not have known them all",
               GUARD_TREE);
    rr_guard_stop(ch->guard);
    ch->guard = NULL;
    uv_signal_stop(&ch->sigchld);
    uv_timer_stop(&ch->check_timer);
    uv_timer_stop(&ch->kill_timer);
    uv_timer_stop(&ch->sweep_timer);
    /* Last use of ch here: exit_cb may call rr_child_free, whose memory
     * stays valid until the close callbacks run. */
    if (ch->exit_cb)
        ch->exit_cb(ch, ch->wstatus, ch->arg);
}

/* ---- stragglers ----
 *
 * What the command started and left running (`cmd &`, a daemon that
 * called setsid) must not work on once the lock is released. We are the
 * subreaper of everything the command starts, so a descendant whose parent
 * died becomes our child: our children other than the guard, their process
 * groups, and the command's own group are what is left. They get SIGTERM
 * (and SIGCONT), SIGKILL after the grace, and are reaped before the lock is
 * released; the guard kills them too if the lease ends first. */

#define MAX_STRAGGLERS 256
#define SWEEP_TICK_MS 20
#define SWEEP_GIVE_UP_MS 2000

static int stragglers(const struct rr_child *ch, pid_t *out, int max)
{
    int n = rr_guard_children(getpid(), rr_guard_pid(ch->guard), out, max);
    return n < 0 ? 0 : n;
}

/* Reap those of our children that are gone; returns how many remain
 * (counting the command's group as one while it has members). */
static int reap_stragglers(struct rr_child *ch, pid_t *pids, int *n)
{
    int left = 0;

    *n = stragglers(ch, pids, MAX_STRAGGLERS);
    for (int i = 0; i < *n; i++) {
        pid_t r;
        do {
            r = waitpid(pids[i], NULL, WNOHANG | __WALL);
        } while (r < 0 && errno == EINTR);
        if (r == 0)
            pids[left++] = pids[i];
    }
    *n = left;
    /* EPERM: a member we may not signal (setuid, sudo) is still a member. */
    if (!ch->foreground && (killpg(ch->pid, 0) == 0 || errno == EPERM))
        left++;
    return left;
}

static void signal_stragglers(struct rr_child *ch, const pid_t *pids, int n, int sig)
{
    pid_t own = getpgrp();

    if (!ch->foreground)
        killpg(ch->pid, sig);
    for (int i = 0; i < n; i++) {
        kill(pids[i], sig);
        pid_t pg = getpgid(pids[i]);
        if (pg > 1 && pg != own)
            killpg(pg, sig);
    }
}

static void describe(const pid_t *pids, int n, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < n && i < 8 && o + 40 < len; i++) {
        char path[64], comm[32] = "?";
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pids[i]);
        FILE *f = fopen(path, "re");
        if (f) {
            if (fgets(comm, sizeof comm, f))
                comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        o += (size_t)snprintf(buf + o, len - o, "%s%d (%s)", i ? ", " : "", (int)pids[i], comm);
    }
    if (n > 8 && o + 16 < len)
        snprintf(buf + o, len - o, ", and %d more", n - 8);
}

static void on_sweep_timer(uv_timer_t *h);

static void sweep_tick(struct rr_child *ch)
{
    pid_t pids[MAX_STRAGGLERS];
    int n;

    if (reap_stragglers(ch, pids, &n) == 0) {
        finish_exit(ch);
        return;
    }
    int64_t now = rr_now_ms();
    if (!ch->sweep_killed && now >= ch->sweep_until) {
        ch->sweep_killed = true;
        ch->sweep_until = now + SWEEP_GIVE_UP_MS;
    }
    if (ch->sweep_killed) {
        /* Again on every tick: a process re-parented to us meanwhile. */
        signal_stragglers(ch, pids, n, SIGKILL);
        if (now >= ch->sweep_until && !ch->said_stuck) {
            /* One we may not signal (it became root: sudo, a setuid
             * helper) or one stuck in the kernel. Releasing now would let
             * the next holder overlap it: the lock stays, renewed, until
             * it is gone. */
            char who[512];
            ch->said_stuck = true;
            describe(pids, n, who, sizeof who);
            rr_log(RR_LOG_ERROR, "stragglers", NULL,
                   "processes the command left behind survive SIGKILL (another user's, or "
                   "stuck): %s; keeping the lock until they are gone",
                   n ? who : "members of the command's process group");
        }
    }
    uv_timer_start(&ch->sweep_timer, on_sweep_timer, ch->said_stuck ? 250 : SWEEP_TICK_MS, 0);
}

static void on_sweep_timer(uv_timer_t *h)
{
    sweep_tick(h->data);
}

/* The leader was reaped: stop what it left, then report its exit. */
static void begin_sweep(struct rr_child *ch)
{
    pid_t pids[MAX_STRAGGLERS];
    int n;

    if (reap_stragglers(ch, pids, &n) == 0) {
        finish_exit(ch);   /* the usual case: nothing left */
        return;
    }
    ch->sweeping = true;
    char who[512];
    describe(pids, n, who, sizeof who);
    rr_log(RR_LOG_WARN, "stragglers",
           (struct rr_field[]){ RR_FN("count", n), RR_FIELD_END },
           "the command left %s running; stopping %s before the lock is released",
           n ? who : "processes in its group", n == 1 ? "it" : "them");
    /* We were stopping the command (lock lost, --max-runtime): no more grace. */
    if (ch->stopping) {
        ch->sweep_killed = true;
        ch->sweep_until = rr_now_ms() + SWEEP_GIVE_UP_MS;
        signal_stragglers(ch, pids, n, SIGKILL);
    } else {
        ch->sweep_until = rr_now_ms() + ch->grace_ms;
        signal_stragglers(ch, pids, n, SIGTERM);
        signal_stragglers(ch, pids, n, SIGCONT);
    }
    uv_timer_start(&ch->sweep_timer, on_sweep_timer, SWEEP_TICK_MS, 0);
}

static void try_reap(struct rr_child *ch)
{
    if (ch->sweeping) {
        sweep_tick(ch);
        return;
    }
    if (ch->reaped)
        return;
    int st = 0;
    pid_t r;
    do {
        r = waitpid(ch->pid, &st, WNOHANG | WUNTRACED);
    } while (r < 0 && errno == EINTR);
    if (r == 0)
        return;
    if (r > 0 && WIFSTOPPED(st)) {
        /* Not an exit. Ctrl-Z (the command had the terminal), or a read or
         * write of the terminal from the background: the job stops, and we
         * with it, as a shell's job would — run.c's SIGTSTP handler stops
         * the group, lets the lease be watched by the guard, and continues
         * the command with the terminal on fg, if the lease allows. */
        int sig = WSTOPSIG(st);
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
        return;
    }
    if (r < 0) {
        /* ECHILD: someone else reaped our child (SIGCHLD set to SIG_IGN,
         * or a stray waitpid(-1)). The status is gone; report a failure
         * rather than waiting forever for an exit we will never see. */
        st = 255 << 8;
    }
    ch->reaped = true;
    ch->kill_armed = false;
    ch->wstatus = st;
    if (ch->tty) {
        rr_tty_take(ch->pid);
        ch->tty = false;
    }
    rr_guard_leader_reaped(ch->guard);
    uv_timer_stop(&ch->kill_timer);
    begin_sweep(ch);
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

int rr_child_spawn(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                   char *const envp[], const struct rr_child_opts *o,
                   rr_child_exit_fn exit_cb, void *arg, char *err, size_t errlen)
{
    bool foreground = o->foreground;
    struct exec_plan plan = { NULL };
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
    if (build_plan(argv[0], &plan) < 0) {
        snprintf(err, errlen, "cannot run '%s': out of memory", argv[0]);
        return -1;
    }
    size_t argc = 0;
    while (argv[argc])
        argc++;
    plan.sh_argv = calloc(argc + 2, sizeof *plan.sh_argv);
    if (plan.sh_argv) {
        plan.sh_argv[0] = (char *)"sh";
        for (size_t i = 1; i < argc; i++)
            plan.sh_argv[i + 1] = argv[i];
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
    ch->guard = rr_guard_start(foreground, o->deadline_ms, o->grace_ms);
    if (!ch->guard) {
        snprintf(err, errlen, "cannot start the guard process: %s", strerror(errno));
        goto fail;
    }
    rr_guard_set_marks(ch->guard, envp);

    /* Block every signal across vfork: the child must not run one of our
     * handlers before it has reset them to default. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool tty = !foreground && rr_tty_ours();
    struct spawn_args sa = { &plan, argv, envp, foreground, tty, getpid(), pipefd[0],
                             pipefd[1], ch->guard };
    pid_t pid = spawn_vfork(&sa);
    int fork_errno = errno;
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
    if (pid < 0) {
        snprintf(err, errlen, "cannot fork: %s", strerror(fork_errno));
        goto fail;
    }

    /* The write end closes on exec: EOF means the exec succeeded. */
    int child_errno = 0;
    ssize_t n;
    do {
        n = read(pipefd[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    pipefd[0] = -1;
    if (n != 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (n != (ssize_t)sizeof child_errno)
            child_errno = EIO;
        rc = exec_error(child_errno, argv[0], !strchr(argv[0], '/'), err, errlen);
        goto fail;
    }
    free_plan(&plan);

    ch->loop = loop;
    ch->pid = pid;
    ch->foreground = foreground;
    ch->grace_ms = o->grace_ms;
    ch->exit_cb = exit_cb;
    ch->arg = arg;

    int e = uv_signal_init(loop, &ch->sigchld);
    if (e < 0) {
        /* Nothing watches it: kill it now rather than leave it unmanaged. */
        snprintf(err, errlen, "cannot watch '%s': %s", argv[0], uv_strerror(e));
        rr_child_signal(ch, SIGKILL);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        rr_guard_stop(ch->guard);
        free(ch);
        return -1;
    }
    uv_timer_init(loop, &ch->check_timer);
    uv_timer_init(loop, &ch->kill_timer);
    uv_timer_init(loop, &ch->sweep_timer);
    ch->open_handles = 4;
    ch->sigchld.data = ch->check_timer.data = ch->kill_timer.data = ch;
    ch->sweep_timer.data = ch;

    e = uv_signal_start(&ch->sigchld, on_sigchld, SIGCHLD);
    if (e < 0) {
        snprintf(err, errlen, "cannot watch '%s': %s", argv[0], uv_strerror(e));
        rr_child_signal(ch, SIGKILL);
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        ch->reaped = true;
        rr_guard_stop(ch->guard);
        ch->guard = NULL;
        rr_child_free(ch);   /* freed by the close callbacks */
        return -1;
    }
    /* The child may have exited before the watcher was started, and that
     * SIGCHLD is gone; look once on the next loop iteration (not here: the
     * caller must have *out before exit_cb can run). */
    uv_timer_start(&ch->check_timer, on_check_timer, 0, 0);

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

int rr_child_signal(struct rr_child *ch, int sig)
{
    if (!ch || ch->reaped)
        return 0;
    int r = ch->foreground ? kill(ch->pid, sig) : killpg(ch->pid, sig);
    return r < 0 ? -errno : 0;
}

void rr_child_stop(struct rr_child *ch, int64_t grace_ms)
{
    if (!ch || ch->reaped || ch->closing)
        return;
    ch->stopping = true;
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
    ch->stopping = true;
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
    if (!ch->reaped && !ch->foreground && rr_tty_ours()) {
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

/* Length of the name part of "NAME=value" (the whole string if no '='). */
static size_t name_len(const char *s)
{
    const char *eq = strchr(s, '=');
    return eq ? (size_t)(eq - s) : strlen(s);
}

static bool has_name(const char *entry, size_t len, const char *const list[], bool list_is_env)
{
    if (!list)
        return false;
    for (const char *const *p = list; *p; p++) {
        size_t plen = list_is_env ? name_len(*p) : strlen(*p);
        if (plen == len && memcmp(*p, entry, len) == 0)
            return true;
    }
    return false;
}

char **rr_child_env(char *const env[], const char *const drop[], const char *const add[])
{
    size_t n = 0, nadd = 0;
    if (env)
        for (char *const *p = env; *p; p++)
            n++;
    if (add)
        for (const char *const *p = add; *p; p++)
            nadd++;

    char **out = calloc(n + nadd + 1, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = name_len(env[i]);
        if (has_name(env[i], len, drop, false) || has_name(env[i], len, add, true))
            continue;
        if (!(out[k++] = strdup(env[i])))
            goto fail;
    }
    for (size_t i = 0; i < nadd; i++) {
        if (!(out[k++] = strdup(add[i])))
            goto fail;
    }
    return out;

fail:
    rr_child_env_free(out);
    return NULL;
}

void rr_child_env_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}
