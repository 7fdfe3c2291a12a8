/* guard.c — the command's parent and the lease's enforcer (see guard.h).
 *
 * The guard is started with clone(CLONE_VM) on a stack of its own, like a
 * thread but a separate process that outlives us: fork() would make every
 * page we write afterwards a copy-on-write fault, a cost per run that is
 * easy to measure. Sharing our memory, it must not touch libc state: it
 * makes raw system calls only (rawsys.h, proc.c, the async-signal-safe part
 * of cgroup.c), so that not even errno, which lives in the thread-local
 * storage it shares with our main thread, is written. It spawns the command
 * the same way, clone(CLONE_VM) on a second stack (glibc's clone() is only
 * the trampoline: it writes errno on failure alone), without CLONE_VFORK:
 * the guard must keep the lease while the command's execve runs
 * (exec_pending). Where clone(CLONE_VM) is refused or cannot be followed
 * (valgrind, ASan), the guard is forked and forks the command; the control
 * block is a MAP_SHARED page either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clone3.h"
#include "exec.h"
#include "guard.h"
#include "proc.h"
#include "rawsys.h"
#include "rr.h"

#define GUARD_STACK (64 * 1024)
#define EXEC_STACK (32 * 1024)
/* Killing: how often to look again while something is left, and after how
 * long what is left is said to survive SIGKILL (then looked at less often). */
#define TICK_MS 10
#define GIVE_UP_MS 2000
#define STUCK_TICK_MS 250
#define KEEP_MAX 16

/* valgrind does not emulate clone(CLONE_VM) without threads and gives up. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND() 0
#endif

enum phase { G_RUN, G_SWEEP, G_DONE };

struct rr_guard {
    /* Shared with the guard process; the fields it writes or we change
     * after it started are accessed atomically. */
    int64_t deadline_ms;
    int64_t grace_ms;
    int child_pid;            /* 0 until the spawned process says */
    int parent_pid;           /* R */
    int own_pgid;             /* R's group: never signalled as a group */
    int termed, fired, hurry;
    int stopping;             /* rr_guard_stop began: its exit is expected */
    int rfd, wfd;             /* R -> G: 'w' wake, 'x' stand down */
    int rep_rfd, rep_wfd;     /* G -> R: struct rr_guard_report */
    int errfd;
    bool foreground, tty, cloned;
    const struct rr_exec_plan *plan;
    const struct rr_cgroup *cgroup;
    struct rr_exec_spawn spawn;
    /* Ours only. */
    pid_t guard_pid;
    size_t map_len;           /* the mapping's size (block + stacks), for munmap */
    char *exec_stack;         /* the top of the command's clone stack */
};

/* The guard's own state, on its stack. */
struct gstate {
    struct rr_guard *g;
    pid_t self, cpid;
    int sfd, gp;                   /* gp: C's exec pipe until C exec'd, else -1 */
    int64_t exec_until;            /* no KILL before then while C has not exec'd */
    enum phase phase;
    bool c_reaped, begun, killed, said_stuck, watch_exec;   /* watch_exec: poll gp */
    bool owe_reaped, owe_gone;     /* reports the pipe had no room for */
    int cstatus;
    int64_t until;
};

/* ---- the clock and the shared fields: no errno, no libc state ---- */

static int64_t mono_ms(void)
{
    struct timespec ts = { 0, 0 };
    RR_SYS(SYS_clock_gettime, CLOCK_MONOTONIC, &ts, 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t load64(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static int load32(const int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store32(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

enum rr_guard_act rr_guard_clock(int64_t now, int64_t deadline, int64_t grace, bool termed,
                                 bool fired, int64_t *wait_ms)
{
    enum rr_guard_act act = RR_GUARD_WAIT;
    int64_t w;

    if (fired || now >= deadline) {
        act = RR_GUARD_KILL;
        w = TICK_MS;
    } else if (now >= deadline - grace) {
        act = termed ? RR_GUARD_WAIT : RR_GUARD_TERM;
        w = deadline - now;
    } else {
        w = deadline - grace - now;
    }
    *wait_ms = w > 60000 ? 60000 : w < 1 ? 1 : w;
    return act;
}

/* ---- reports to R ---- */

static bool report(struct gstate *s, int kind, int value, const pid_t *pids, int n)
{
    struct rr_guard_report r = { kind, value, n, { 0 } };

    for (int i = 0; i < n && i < RR_GUARD_REPORT_PIDS; i++)
        r.pids[i] = pids[i];
    long w;
    do {
        w = RR_SYS(SYS_write, s->g->rep_wfd, &r, sizeof r);
    } while (w == -EINTR);
    return w == (long)sizeof r;
}

/* The two reports R cannot do without are sent again until there was room.
 * Both at once (C left nothing behind, the usual end) go in one write,
 * under PIPE_BUF so never split: R wakes once for them, not twice. */
static void report_owed(struct gstate *s)
{
    if (s->owe_reaped && s->owe_gone) {
        struct rr_guard_report r[2] = { { RR_GUARD_REAPED, s->cstatus, 0, { 0 } },
                                        { RR_GUARD_GONE, 0, 0, { 0 } } };
        long w;
        do {
            w = RR_SYS(SYS_write, s->g->rep_wfd, r, sizeof r);
        } while (w == -EINTR);
        if (w == (long)sizeof r)
            s->owe_reaped = s->owe_gone = false;
        return;
    }
    if (s->owe_reaped && report(s, RR_GUARD_REAPED, s->cstatus, NULL, 0))
        s->owe_reaped = false;
    if (!s->owe_reaped && s->owe_gone && report(s, RR_GUARD_GONE, 0, NULL, 0))
        s->owe_gone = false;
}

/* ---- signalling what we have ---- */

/* sig to C (its group unless foreground; C alone while not reaped), to
 * each of our children and its group (never R's group, never ours), and
 * for SIGKILL to the cgroup. A TERM or KILL also thaws the cgroup (R froze
 * it if the job was stopped, job control): a frozen process holds a handled
 * SIGTERM until it is thawed, so TERM is made pending first and the thaw
 * comes after it (the SIGCONT that follows a TERM then reaches them all);
 * cgroup.kill needs no thaw, but nothing is to stay frozen once the lease
 * is over. Returns how many children we have (pids in kids, at most
 * RR_PROC_MAX). */
static int signal_all(struct gstate *s, int sig, pid_t *kids)
{
    struct rr_guard *g = s->g;

    int n = rr_proc_own_children(s->self, kids, RR_PROC_MAX);
    if (n < 0)
        n = 0;
    if (s->cpid > 0 && !s->c_reaped)
        RR_SYS(SYS_kill, s->cpid, sig, 0);
    /* A group lives on while it has members, whatever became of its
     * leader; its id is not reused meanwhile. Every member is C or a
     * descendant of ours (we are the subreaper), so once C is reaped and
     * we have no child left the group is empty, and its id may already
     * name someone else's group: it is not signalled then. */
    if (s->cpid > 0 && !g->foreground && (!s->c_reaped || n > 0))
        RR_SYS(SYS_kill, -s->cpid, sig, 0);
    if (sig == SIGKILL && g->cgroup)
        rr_cgroup_kill(g->cgroup);
    for (int i = 0; i < n; i++) {
        if (sig == 0)
            break;
        RR_SYS(SYS_kill, kids[i], sig, 0);
        long pg = RR_SYS(SYS_getpgid, kids[i], 0, 0);
        if (pg > 1 && pg != g->own_pgid && pg != s->self)
            RR_SYS(SYS_kill, -pg, sig, 0);
    }
    if ((sig == SIGTERM || sig == SIGKILL) && g->cgroup)
        rr_cgroup_freeze(g->cgroup, 0);
    return n;
}

static bool cgroup_populated(const struct rr_guard *g)
{
    return g->cgroup && rr_cgroup_populated(g->cgroup) == 1;
}

static void exec_over(struct gstate *s)   /* C exec'd or died: its pipe is spent */
{
    if (s->gp >= 0)
        RR_SYS(SYS_close, s->gp, 0, 0);
    s->gp = -1;
    s->watch_exec = false;
}

/* Reap every child of ours that ended; C's stops, continuations and exit
 * are reported. */
static void reap(struct gstate *s)
{
    bool c_ended = false;
    long r;

    for (;;) {
        int st = 0;
        r = RR_SYS4(SYS_wait4, -1, &st, WNOHANG | WUNTRACED | WCONTINUED | __WALL, 0);
        if (r <= 0)
            break;
        if (r != s->cpid || s->c_reaped)
            continue;   /* an orphan of C's, or one's stop */
        if (WIFSTOPPED(st)) {
            report(s, RR_GUARD_STOPPED, WSTOPSIG(st), NULL, 0);
        } else if (WIFCONTINUED(st)) {
            report(s, RR_GUARD_CONTINUED, 0, NULL, 0);
        } else {
            s->c_reaped = true;
            s->cstatus = st;
            exec_over(s);   /* it exec'd or died: nothing to wait for */
            s->owe_reaped = true;
            s->phase = G_SWEEP;
            c_ended = true;
        }
    }
    if (!c_ended)
        return;
    /* Nothing left already (wait4 found no child, live or dead: as the
     * subreaper we then have no descendant either; and the cgroup is
     * empty): gone too, told with the reap. Else the sweep begins. */
    if (r == -ECHILD && !cgroup_populated(s->g)) {
        s->phase = G_DONE;
        s->owe_gone = true;
    }
    report_owed(s);
}

/* C was reaped: stop what it left, as sweep.h describes for R's own
 * sweep. Returns the ms until the next look, -1 once nothing is left. */
static int64_t sweep_step(struct gstate *s, int64_t now)
{
    struct rr_guard *g = s->g;
    pid_t kids[RR_PROC_MAX];
    int n = signal_all(s, 0, kids);

    if (n == 0 && !cgroup_populated(g)) {
        s->phase = G_DONE;
        s->owe_gone = true;
        report_owed(s);
        return -1;
    }
    if (!s->begun) {
        s->begun = true;
        report(s, RR_GUARD_LEFT, 0, kids, n);
        if (load32(&g->hurry) || load32(&g->fired)) {
            s->killed = true;
            s->until = now + GIVE_UP_MS;
            signal_all(s, SIGKILL, kids);
        } else {
            s->until = now + g->grace_ms;
            signal_all(s, SIGTERM, kids);
            signal_all(s, SIGCONT, kids);
        }
        return TICK_MS;
    }
    if (!s->killed && (now >= s->until || load32(&g->hurry))) {
        s->killed = true;
        s->until = now + GIVE_UP_MS;
    }
    if (s->killed) {
        /* Again on every look: one re-parented to us meanwhile. */
        signal_all(s, SIGKILL, kids);
        if (now >= s->until && !s->said_stuck) {
            s->said_stuck = true;
            report(s, RR_GUARD_STUCK, 0, kids, n);
        }
    } else if (s->until - now < TICK_MS * 5) {
        return s->until - now < 1 ? 1 : s->until - now;
    }
    return s->said_stuck ? STUCK_TICK_MS : s->killed ? TICK_MS : TICK_MS * 5;
}

/* Wait up to ms for a SIGCHLD (or anything on fd when fd >= 0); returns
 * the poll's revents for fd. */
static int wait_event(struct gstate *s, int fd, short events, int64_t ms)
{
    struct pollfd p[2] = { { .fd = s->sfd, .events = POLLIN }, { .fd = fd, .events = events } };
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

    /* No mask of ppoll's own (NULL): ours, every signal blocked, stays. */
    long r = RR_SYS6(SYS_ppoll, p, fd >= 0 ? 2 : 1, ms < 0 ? NULL : &ts, NULL, 0, 0);
    if (r > 0 && (p[0].revents & POLLIN)) {
        char buf[128 * 4];   /* signalfd_siginfo is 128 bytes */
        while (RR_SYS(SYS_read, s->sfd, buf, sizeof buf) > 0)
            ;
    }
    return r > 0 && fd >= 0 ? p[1].revents : 0;
}

/* R is gone or stands down: SIGKILL to everything we have, reap, look
 * again, until no child is left and the cgroup is empty (a SIGKILLed
 * process forks no more, and the pids of our unreaped children are ours). */
static void kill_everything(struct gstate *s)
{
    pid_t kids[RR_PROC_MAX];
    int64_t start = mono_ms();

    /* Told gone (the usual stand-down): no child left, none can come back. */
    if (s->phase == G_DONE && !cgroup_populated(s->g))
        return;
    for (;;) {
        int n = signal_all(s, SIGKILL, kids);
        reap(s);
        if (n == 0 && !cgroup_populated(s->g))
            break;
        bool slow = mono_ms() - start > GIVE_UP_MS;
        int efd = s->g->cgroup ? rr_cgroup_events_fd(s->g->cgroup) : -1;
        wait_event(s, efd, POLLPRI, slow ? STUCK_TICK_MS : TICK_MS);
    }
}

/* ---- the guard process ---- */

static bool lease_ok_fn(const void *arg)
{
    return rr_guard_lease_ok(arg);
}

/* Has C yet to exec? s->gp, a close-on-exec pipe only C holds, reads EOF
 * once C exec'd or died. Not waited for (one more wake-up a run): only the
 * lease's clock asks (enforce). Until then no TERM (C is before its own
 * lease check, which fails as RR_EXEC_LATE, not a lost lease; or in execve)
 * and no KILL before exec_until (the lease's end, >= 100 ms after the
 * spawn): then an exec still running dies before its first instruction. */
static bool exec_pending(struct gstate *s)
{
    struct pollfd p = { .fd = s->gp, .events = POLLIN };
    struct timespec zero = { 0, 0 };

    if (s->gp < 0)
        return false;
    if (RR_SYS6(SYS_ppoll, &p, 1, &zero, NULL, 0, 0) == 0)
        return true;
    exec_over(s);
    return false;
}

/* Spawn C; its pid, or RR_EXEC_FORK - errno written to errfd and -1. *gp
 * is the read end of C's exec pipe (exec_pending), or -1. */
static pid_t spawn_command(struct rr_guard *g, pid_t self, int *gp)
{
    long pid;
    int gpipe[2];

    *gp = -1;
    if (RR_SYS(SYS_pipe2, gpipe, O_CLOEXEC, 0) < 0)
        gpipe[0] = gpipe[1] = -1;

    g->spawn = (struct rr_exec_spawn){
        .plan = g->plan, .own_group = !g->foreground, .pgid = g->own_pgid, .tty = g->tty,
        .parent = self, .errfd = g->errfd, .cgroup = g->cgroup, .lease_ok = lease_ok_fn,
        .lease_arg = g,
    };
    /* Born in the cgroup where the kernel can (clone3.h): no migration.
     * Otherwise, or if it refuses, as before: C enters it itself, and says
     * why it could not. */
    pid = -ENOSYS;
    int cgfd = rr_cgroup_dir_fd(g->cgroup);
    if (cgfd >= 0) {
        g->spawn.born_in_cgroup = true;
#if RR_CLONE_VM
        if (g->cloned)
            pid = rr_clone3_vm(cgfd, g->exec_stack - EXEC_STACK, EXEC_STACK, rr_exec_child_fn,
                               &g->spawn);
        else
#endif
        if ((pid = rr_clone3_fork(cgfd)) == 0)
            rr_exec_child(&g->spawn);
        if (pid < 0)
            g->spawn.born_in_cgroup = false;
    }
#if RR_CLONE_VM
    if (pid < 0 && g->cloned) {
        /* glibc's clone() writes errno only when it fails: then ours. */
        pid = clone(rr_exec_child_fn, g->exec_stack, CLONE_VM | SIGCHLD, &g->spawn);
        if (pid < 0)
            pid = -EAGAIN;
    } else
#endif
    if (pid < 0) {
        pid = fork();
        if (pid == 0)
            rr_exec_child(&g->spawn);
        if (pid < 0)
            pid = -errno;   /* forked: the errno is our own */
    }
    if (gpipe[1] >= 0)
        RR_SYS(SYS_close, gpipe[1], 0, 0);
    if (pid < 0) {
        int code = RR_EXEC_FORK + (int)pid;
        RR_SYS(SYS_write, g->errfd, &code, sizeof code);
        if (gpipe[0] >= 0)
            RR_SYS(SYS_close, gpipe[0], 0, 0);
        return -1;
    }
    *gp = gpipe[0];
    store32(&g->child_pid, (int)pid);
    /* Also from this side, so the group exists before R hears of it.
     * EACCES once it has exec'd: then it did setpgid itself. */
    if (!g->foreground)
        RR_SYS(SYS_setpgid, pid, pid, 0);
    return (pid_t)pid;
}

/* Hold nothing open but our own: not R's sockets, a terminal or an output
 * pipe that someone waits to see closed. With a cgroup, its fds stay (the
 * numbers it holds: ours are copies with the same numbers). */
static void close_others(struct rr_guard *g, int sfd, int gp)
{
    int keep[KEEP_MAX + 4];
    int nk = 0;

    keep[nk++] = g->rfd;
    keep[nk++] = g->rep_wfd;
    keep[nk++] = sfd;
    if (gp >= 0)
        keep[nk++] = gp;
    nk += rr_cgroup_fds(g->cgroup, keep + nk, KEEP_MAX);
    /* Sorted, then closed between them. */
    for (int i = 1; i < nk; i++)
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    int lo = 0;
    for (int i = 0; i <= nk; i++) {
        unsigned hi = i < nk ? (unsigned)keep[i] : ~0U;
        if (i < nk && keep[i] < lo)
            continue;
        long cr = -1;
#ifdef SYS_close_range
        cr = (unsigned)lo < hi ? RR_SYS(SYS_close_range, lo, hi - 1, 0) : 0;
#endif
        /* Without close_range (kernel < 5.9, a seccomp filter) one by one:
         * a pipe end we kept open would hang the exec-status read. */
        if (cr != 0)
            for (unsigned fd = (unsigned)lo; fd < hi && fd < 65536; fd++)
                RR_SYS(SYS_close, fd, 0, 0);
        if (i < nk)
            lo = keep[i] + 1;
    }
}

/* One byte from R: 0 nothing, 'x' stand down, -1 R is gone. */
static int read_control(struct rr_guard *g)
{
    char c;
    long n = RR_SYS(SYS_read, g->rfd, &c, 1);
    if (n == 1)
        return c == 'x' ? 'x' : 0;
    return n == -EAGAIN || n == -EINTR ? 0 : -1;
}

/* The lease's clock; returns the ms to wait. */
static int64_t enforce(struct gstate *s, int64_t now)
{
    struct rr_guard *g = s->g;
    pid_t kids[RR_PROC_MAX];
    int64_t wait;

    enum rr_guard_act a = rr_guard_clock(now, load64(&g->deadline_ms), g->grace_ms,
                                         load32(&g->termed), load32(&g->fired), &wait);
    if (a != RR_GUARD_WAIT && exec_pending(s)) {
        int64_t until = a == RR_GUARD_TERM ? load64(&g->deadline_ms) : s->exec_until;
        if (now < until) {
            s->watch_exec = true;
            return until - now;
        }
    }
    if (a == RR_GUARD_TERM) {
        store32(&g->termed, 1);
        signal_all(s, SIGTERM, kids);
        signal_all(s, SIGCONT, kids);
    } else if (a == RR_GUARD_KILL) {
        store32(&g->fired, 1);
        if (signal_all(s, SIGKILL, kids) == 0 && !cgroup_populated(g))
            wait = 60000;   /* nothing left to kill: C's exit is being told */
    }
    return wait;
}

static void guard_loop(struct gstate *s)
{
    struct rr_guard *g = s->g;

    for (;;) {
        int64_t now = mono_ms();
        int64_t wait = s->phase == G_DONE ? -1 : enforce(s, now);
        if (s->phase == G_SWEEP) {
            int64_t w = sweep_step(s, now);
            if (w >= 0 && (wait < 0 || w < wait))
                wait = w;
        }
        if (s->phase == G_DONE)
            wait = -1;
        if (s->owe_reaped || s->owe_gone)
            wait = wait < 0 || wait > TICK_MS ? TICK_MS : wait;
        int efd = s->phase == G_SWEEP && g->cgroup ? rr_cgroup_events_fd(g->cgroup) : -1;
        struct pollfd p[3] = { { .fd = g->rfd, .events = POLLIN },
                               { .fd = s->sfd, .events = POLLIN },
                               { .fd = efd >= 0 ? efd : s->watch_exec ? s->gp : -1,
                                 .events = efd >= 0 ? POLLPRI : POLLIN } };
        struct timespec ts = { (time_t)(wait / 1000), (long)(wait % 1000) * 1000000L };
        /* No mask of ppoll's own: every signal stays blocked, so SIGCHLD
         * is queued for the signalfd (an empty one would let the kernel
         * discard it, its default action being to ignore it). */
        long r = RR_SYS6(SYS_ppoll, p, p[2].fd >= 0 ? 3 : 2, wait < 0 ? NULL : &ts, NULL, 0, 0);
        if (r > 0 && (p[1].revents & POLLIN)) {
            char buf[128 * 4];
            while (RR_SYS(SYS_read, s->sfd, buf, sizeof buf) > 0)
                ;
        }
        reap(s);
        report_owed(s);
        if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            int c = read_control(g);
            if (c == 'x' || c < 0) {
                kill_everything(s);
                /* R is gone: the cgroup is ours to remove. */
                if (c < 0 && g->cgroup)
                    rr_cgroup_remove(g->cgroup);
                return;
            }
        }
    }
}

static int guard_main(void *p)
{
    struct rr_guard *g = p;
    struct gstate s = { .g = g, .gp = -1, .phase = G_RUN };

    s.self = (pid_t)RR_SYS(SYS_getpid, 0, 0, 0);
    /* Whatever C leaves is re-parented to us, not to R or init. */
    RR_SYS(SYS_prctl, PR_SET_CHILD_SUBREAPER, 1, 0);
    /* A process group and a name of our own: `kill -9 -PGID` of the
     * wrapper's group, or `pkill redlock-run`, must not take the guard
     * with it. */
    RR_SYS(SYS_setpgid, 0, 0, 0);
    RR_SYS(SYS_prctl, PR_SET_NAME, (long)"redlock-guard", 0);
    /* R's SIGCHLD action came with us, SA_NOCLDSTOP and all: with it, C's
     * stops would never be signalled. Default (blocked: still queued for
     * the signalfd). The kernel's struct sigaction: handler, flags,
     * restorer, mask. */
    unsigned long dfl[4] = { 0, 0, 0, 0 };
    RR_SYS4(SYS_rt_sigaction, SIGCHLD, dfl, 0, sizeof(unsigned long));
    /* C gets R's descriptors (ours are close-on-exec), so it comes first.
     * Its exec is not waited for (exec_pending). */
    s.cpid = spawn_command(g, s.self, &s.gp);
    int64_t soonest = mono_ms() + 100;
    s.exec_until = load64(&g->deadline_ms);
    if (s.exec_until < soonest)
        s.exec_until = soonest;
    RR_SYS(SYS_close, g->errfd, 0, 0);
    unsigned long chld = 1UL << (SIGCHLD - 1);
    s.sfd = (int)RR_SYS4(SYS_signalfd4, -1, &chld, sizeof chld, O_CLOEXEC | O_NONBLOCK);
    close_others(g, s.sfd, s.gp);
    if (s.cpid < 0) {
        s.c_reaped = true;
        s.phase = G_SWEEP;
        s.owe_reaped = true;
        s.cstatus = RR_EXIT_OSERR << 8;
    }
    guard_loop(&s);
    RR_SYS(SYS_exit_group, 0, 0, 0);
    return 0;
}

/* Map the control block (and, cloned, the stacks above it) and start the
 * guard on it; NULL with nothing left behind when that fails. */
static struct rr_guard *launch(bool clone_it, const struct rr_guard *init)
{
    size_t len = (sizeof(struct rr_guard) + 4095) & ~(size_t)4095;
    if (clone_it)
        len += GUARD_STACK + EXEC_STACK;
    int fds[2], rep[2];
    sigset_t all, old;
    pid_t pid = -1;

    /* Cloned, the guard shares all our memory anyway, and private pages
     * fault in cheaper than shared ones; forked, the block must be shared. */
    struct rr_guard *g = mmap(NULL, len, PROT_READ | PROT_WRITE,
                              (clone_it ? MAP_PRIVATE | MAP_STACK : MAP_SHARED) |
                                  MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED)
        return NULL;
    *g = *init;
    if (pipe2(fds, O_CLOEXEC) < 0) {
        munmap(g, len);
        return NULL;
    }
    if (pipe2(rep, O_CLOEXEC | O_NONBLOCK) < 0) {
        close(fds[0]);
        close(fds[1]);
        munmap(g, len);
        return NULL;
    }
    g->rfd = fds[0];
    g->wfd = fds[1];
    g->rep_rfd = rep[0];
    g->rep_wfd = rep[1];
    g->cloned = clone_it;
    /* The guard's stack grows down from the top; the command's, below it. */
    g->exec_stack = (char *)g + len - GUARD_STACK;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (clone_it) {
        pid = clone(guard_main, (char *)g + len, CLONE_VM | SIGCHLD, g);
    } else {
        pid = fork();
        if (pid == 0)
            guard_main(g);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* g->rfd and g->rep_wfd stay as they are: the guard may not have read them yet. */
    close(fds[0]);
    close(rep[1]);
    if (pid < 0) {
        close(fds[1]);
        close(rep[0]);
        munmap(g, len);
        return NULL;
    }
    g->guard_pid = pid;
    g->map_len = len;
    return g;
}

struct rr_guard *rr_guard_start(const struct rr_guard_opts *o)
{
    struct rr_guard init = { 0 };
    struct rr_guard *g = NULL;

    init.deadline_ms = o->deadline_ms;
    init.grace_ms = o->grace_ms < 0 ? 0 : o->grace_ms;
    init.parent_pid = getpid();
    init.own_pgid = getpgid(0);
    init.foreground = o->foreground;
    init.tty = o->tty;
    init.plan = o->plan;
    init.cgroup = o->cgroup;
    init.errfd = o->errfd;
    if (RR_CLONE_VM && RR_RAW_OK && !UNDER_VALGRIND())
        g = launch(true, &init);
    if (!g)   /* not cloned, or clone(CLONE_VM) refused */
        g = launch(false, &init);
    return g;
}

pid_t rr_guard_child(const struct rr_guard *g)
{
    return g ? load32(&g->child_pid) : 0;
}

int rr_guard_report_fd(const struct rr_guard *g)
{
    return g ? g->rep_rfd : -1;
}

int rr_guard_read_report(struct rr_guard *g, struct rr_guard_report *r)
{
    ssize_t n;

    if (!g || g->rep_rfd < 0)
        return -1;
    do {
        n = read(g->rep_rfd, r, sizeof *r);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof *r)
        return 1;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    return -1;
}

void rr_guard_hurry(struct rr_guard *g)
{
    if (g)
        store32(&g->hurry, 1);
}

bool rr_guard_lease_ok(const struct rr_guard *g)
{
    if (!g)
        return true;
    return !load32(&g->fired) && mono_ms() < load64(&g->deadline_ms) - g->grace_ms;
}

/* Has the guard exited (a zombie of ours, not reaped)? */
static bool exited(const struct rr_guard *g)
{
    siginfo_t si;

    memset(&si, 0, sizeof si);
    long r = RR_SYS6(SYS_waitid, P_PID, g->guard_pid, &si, WEXITED | WNOHANG | WNOWAIT, 0, 0);
    return r == 0 && si.si_pid == g->guard_pid;
}

static void poke(struct rr_guard *g, char c)
{
    ssize_t w;

    /* A write to the pipe of a dead guard would be a SIGPIPE. */
    if (g->wfd < 0 || exited(g))
        return;
    do {
        w = write(g->wfd, &c, 1);
    } while (w < 0 && errno == EINTR);
}

void rr_guard_set_deadline(struct rr_guard *g, int64_t deadline_ms)
{
    if (!g)
        return;
    int64_t old = load64(&g->deadline_ms);
    __atomic_store_n(&g->deadline_ms, deadline_ms, __ATOMIC_SEQ_CST);
    if (deadline_ms < old)
        poke(g, 'w');
}

bool rr_guard_termed(const struct rr_guard *g)
{
    return g && load32(&g->termed);
}

bool rr_guard_fired(const struct rr_guard *g)
{
    return g && load32(&g->fired);
}

pid_t rr_guard_pid(const struct rr_guard *g)
{
    return g ? g->guard_pid : 0;
}

bool rr_guard_dead(const struct rr_guard *g)
{
    if (!g || g->guard_pid <= 0 || load32(&g->stopping))
        return false;
    /* Raw: a handler must leave errno as it was (the caller saves it too). */
    return exited(g);
}

void rr_guard_stand_down(struct rr_guard *g)
{
    if (!g || g->wfd < 0)
        return;
    store32(&g->stopping, 1);
    poke(g, 'x');
    close(g->wfd);
    g->wfd = -1;
}

void rr_guard_stop(struct rr_guard *g)
{
    if (!g)
        return;
    rr_guard_stand_down(g);
    /* It kills what it still has and exits: a short wait, and no zombie. */
    if (g->guard_pid > 0)
        while (waitpid(g->guard_pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    if (g->rep_rfd >= 0)
        close(g->rep_rfd);
    munmap(g, g->map_len);
}
