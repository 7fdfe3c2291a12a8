/* guard.c — the lease's enforcer (see guard.h for what it does and why).
 *
 * The guard is started with clone(CLONE_VM) on a stack of its own, like a
 * thread but a separate process that outlives us: fork() would make every
 * page we write afterwards a copy-on-write fault, a cost per run that is
 * easy to measure. Sharing our memory, it must not touch libc state: it
 * makes raw system calls only (rawsys.h; its reads of /proc are proc.c's,
 * which makes them too), so that not even errno, which lives in the
 * thread-local storage it shares with our main thread, is written.
 * Where clone(CLONE_VM) is refused or cannot be followed (valgrind, ASan),
 * it is forked; the control block is a MAP_SHARED page either way.
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

#include "guard.h"
#include "proc.h"
#include "rawsys.h"
#include "rr.h"

#define GUARD_STACK (64 * 1024)
/* After the deadline, how often the guard looks again for processes to
 * kill (descendants re-parented to us once their parent died). */
#define SWEEP_MS 10

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

struct rr_guard {
    /* Shared with the guard process; the fields it writes or we change
     * after it started are accessed atomically. */
    int64_t deadline_ms;
    int64_t grace_ms;
    int child_pid;            /* 0 until the spawned process says */
    int parent_pid;
    int termed, fired;
    int leader_reaped;        /* its pid may be reused: only its group counts */
    int rfd, wfd;
    int own_pgid;
    bool foreground;
    int tree_full;            /* a process of our tree was not held */
    int nmarks;               /* 2 once marks are set (then read-only) */
    char marks[2][512];       /* "REDLOCK_NAME=...", "REDLOCK_FENCE=..." */
    /* Ours only. */
    pid_t guard_pid;
    size_t map_len;           /* the mapping's size (block + stack), for munmap */
    /* The guard's only: what it knows of our process tree. */
    int tree_n;
    int no_pidfd;             /* pidfd_open is missing (or valgrind's) */
    struct tree_proc {
        pid_t pid;
        int fd;                   /* its pidfd, or -1: then pid + start */
        unsigned long long start;
    } tree[RR_PROC_MAX];
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

/* ---- our process tree, as the guard knows it ----
 *
 * While we live, every process whose parent dies is re-parented to us (we
 * are a subreaper), so a walk down from us finds every descendant. Once we
 * are dead, those whose parent died go to init and nothing leads to them:
 * the guard keeps what its walks found. A pidfd names a process for good,
 * so a pid that is reused is never signalled; without pidfd_open (kernel
 * < 5.3, a seccomp filter, no fds left) the start time read with the pid
 * is checked again right before each signal. */

/* Is the process behind a pidfd alive (or a zombie)? One we may not
 * signal (it became root: sudo) is alive too: its children are walked. */
static bool fd_alive(long fd)
{
    long r = RR_SYS4(SYS_pidfd_send_signal, fd, 0, 0, 0);
    return r == 0 || r == -RR_EPERM_RAW;
}

/* Is the process held in e still the one it was (alive or a zombie)? */
static bool tree_same(const struct tree_proc *e)
{
    struct rr_proc_stat st;

    if (e->fd >= 0)
        return fd_alive(e->fd);
    return rr_proc_read_stat(e->pid, &st) == 0 && st.start == e->start;
}

static void tree_signal(struct rr_guard *g, int sig)
{
    for (int i = 0; i < g->tree_n; i++) {
        const struct tree_proc *e = &g->tree[i];
        if (e->fd >= 0)
            RR_SYS4(SYS_pidfd_send_signal, e->fd, sig, 0, 0);
        else if (tree_same(e))
            RR_SYS(SYS_kill, e->pid, sig, 0);
    }
}

static void tree_drop(struct rr_guard *g, int i)
{
    if (g->tree[i].fd >= 0)
        RR_SYS(SYS_close, g->tree[i].fd, 0, 0);
    g->tree[i] = g->tree[--g->tree_n];
}

/* Hold pid, a child of parent (or of us, if its parent just died): 1 if it
 * is new, 0 if known, gone or not held. New ones get sig if not 0. */
static int tree_add(struct rr_guard *g, pid_t pid, pid_t parent, int sig)
{
    struct rr_proc_stat st;

    for (int i = 0; i < g->tree_n; i++)
        if (g->tree[i].pid == pid && tree_same(&g->tree[i]))
            return 0;
    if (g->tree_n >= RR_PROC_MAX) {
        store32(&g->tree_full, 1);
        return 0;
    }
    long fd = g->no_pidfd ? -1 : RR_SYS(SYS_pidfd_open, pid, 0, 0);
    if (fd == -RR_ENOSYS_RAW)
        g->no_pidfd = 1;   /* kernel < 5.3 or seccomp: not every time */
    /* The stat read while the pidfd's process is still alive afterwards is
     * that process's: its parent says whether it is the one listed. */
    if (rr_proc_read_stat(pid, &st) != 0 || (st.ppid != parent && st.ppid != g->parent_pid) ||
        (fd >= 0 && !fd_alive(fd))) {
        if (fd >= 0)
            RR_SYS(SYS_close, fd, 0, 0);
        return 0;
    }
    struct tree_proc *e = &g->tree[g->tree_n++];
    e->pid = pid;
    e->fd = fd >= 0 ? (int)fd : -1;
    e->start = st.start;
    if (sig) {
        if (e->fd >= 0)
            RR_SYS4(SYS_pidfd_send_signal, e->fd, sig, 0, 0);
        else
            RR_SYS(SYS_kill, pid, sig, 0);
    }
    return 1;
}

/* Walk the tree from us (if we still live) and from every process held,
 * adding what is new (and sending it sig, if not 0), dropping the dead.
 * Returns how many were added. */
static int tree_scan(struct rr_guard *g, pid_t self, int sig)
{
    pid_t kids[RR_PROC_MAX];
    int added = 0;
    int n = rr_proc_children(g->parent_pid, self, kids, RR_PROC_MAX);

    for (int k = 0; k < n; k++)
        added += tree_add(g, kids[k], g->parent_pid, sig);
    /* Each one once; what is added is appended and walked in its turn. */
    for (int i = 0; i < g->tree_n;) {
        struct tree_proc *e = &g->tree[i];
        n = rr_proc_children(e->pid, self, kids, RR_PROC_MAX);
        /* Still the same process after the walk: the children were its. */
        if (!tree_same(e)) {
            tree_drop(g, i);
            continue;
        }
        pid_t parent = e->pid;
        for (int k = 0; k < n; k++)
            added += tree_add(g, kids[k], parent, sig);
        i++;
    }
    return added;
}

/* Walk down from everything held, stopping what is new, until two walks
 * 2 ms apart find nothing (a stopped process forks no more; a fork under
 * way when the stop came is seen in a moment). */
static void tree_stop_all(struct rr_guard *g, pid_t self)
{
    int quiet = 0;

    for (int round = 0; round < 20 && quiet < 2; round++) {
        if (tree_scan(g, self, SIGSTOP) > 0) {
            quiet = 0;
        } else {
            quiet++;
            struct timespec ts = { 0, 2 * 1000 * 1000 };
            RR_SYS(SYS_nanosleep, &ts, 0, 0);
        }
    }
}

/* The window a walk leaves: a process created after our last walk whose
 * parent died with us (the command, by PR_SET_PDEATHSIG) before we could
 * stop it went to init unseen. It got a pid after seen (pids are handed out
 * in increasing order until they wrap) and, unless it cleared them, it has
 * this run's REDLOCK_NAME and REDLOCK_FENCE in its environment, which no
 * process outside our tree is given. Those are held and stopped. */
static int take_marked(struct rr_guard *g, pid_t self, long seen)
{
    long lp = rr_proc_last_pid();
    int added = 0;

    if (lp < 0 || __atomic_load_n(&g->nmarks, __ATOMIC_ACQUIRE) != 2)
        return 0;
    long lo = seen + 1;
    if (seen < 0 || lp < seen || lp - seen > 4096)
        lo = lp - 4096;   /* wrapped, or a fork storm: the newest ones */
    if (lo < 2)
        lo = 2;
    for (long p = lo; p <= lp && g->tree_n < RR_PROC_MAX; p++) {
        bool known = p == self;
        for (int i = 0; i < g->tree_n && !known; i++)
            known = g->tree[i].pid == p;
        if (known)
            continue;
        long fd = g->no_pidfd ? -1 : RR_SYS(SYS_pidfd_open, p, 0, 0);
        struct rr_proc_stat st;
        /* Read while the pidfd's process still lives: that process's. */
        if (rr_proc_env_has((pid_t)p, g->marks[0], g->marks[1]) &&
            rr_proc_read_stat((pid_t)p, &st) == 0 && (fd < 0 || fd_alive(fd))) {
            struct tree_proc *e = &g->tree[g->tree_n++];
            e->pid = (pid_t)p;
            e->fd = fd >= 0 ? (int)fd : -1;
            e->start = st.start;
            if (e->fd >= 0)
                RR_SYS4(SYS_pidfd_send_signal, e->fd, SIGSTOP, 0, 0);
            else
                RR_SYS(SYS_kill, p, SIGSTOP, 0);
            added++;
        } else if (fd >= 0) {
            RR_SYS(SYS_close, fd, 0, 0);
        }
    }
    return added;
}

/* We are dead: stop everything held and what a walk down from it finds,
 * then what the marks find, then kill it all. */
static void tree_kill_orphans(struct rr_guard *g, pid_t self, long seen)
{
    tree_signal(g, SIGSTOP);
    tree_stop_all(g, self);
    if (take_marked(g, self, seen) > 0)
        tree_stop_all(g, self);
    tree_signal(g, SIGKILL);
}

/* ---- the guard process ---- */

/* sig to the command (its group, unless foreground) and, once the lease is
 * over, to every other child of the wrapper and that child's group. */
static void signal_all(struct rr_guard *g, pid_t self, int sig, bool stragglers)
{
    pid_t c = load32(&g->child_pid);

    if (c > 0 && !load32(&g->leader_reaped))
        RR_SYS(SYS_kill, c, sig, 0);
    /* A group lives on while it has members, whatever became of its
     * leader; its id is not reused meanwhile. */
    if (c > 0 && !g->foreground)
        RR_SYS(SYS_kill, -c, sig, 0);
    if (!stragglers)
        return;
    /* Every process of our tree, whatever its group or session (what is
     * new since the last walk is found by this one); then, as before, our
     * children's groups. */
    tree_scan(g, self, 0);
    tree_signal(g, sig);
    pid_t kids[RR_PROC_MAX];
    int n = rr_proc_children(g->parent_pid, self, kids, RR_PROC_MAX);
    for (int i = 0; i < n; i++) {
        RR_SYS(SYS_kill, kids[i], sig, 0);
        long pg = RR_SYS(SYS_getpgid, kids[i], 0, 0);
        if (pg > 1 && pg != g->own_pgid)
            RR_SYS(SYS_kill, -pg, sig, 0);
    }
}

static int guard_main(void *p)
{
    struct rr_guard *g = p;
    pid_t self = (pid_t)RR_SYS(SYS_getpid, 0, 0, 0);
    int rfd = g->rfd, wfd = g->wfd;
    int64_t next_scan = 0;
    long seen_pid = -1;
    char c;

    /* Hold nothing open but our pipe: not a socket, a terminal or an
     * output pipe that someone waits to see closed. */
    RR_SYS(SYS_close, wfd, 0, 0);
    long cr = -1;
#ifdef SYS_close_range
    cr = rfd > 0 ? RR_SYS(SYS_close_range, 0, rfd - 1, 0) : 0;
    if (cr == 0)
        cr = RR_SYS(SYS_close_range, rfd + 1, ~0U, 0);
#endif
    /* Without close_range (kernel < 5.9, a seccomp filter) one by one: a
     * pipe end we kept open would hang the exec-status read for good. */
    if (cr != 0)
        for (int fd = 0; fd < 65536; fd++)
            if (fd != rfd)
                RR_SYS(SYS_close, fd, 0, 0);
    /* A process group and a name of our own: `kill -9 -PGID` of the
     * wrapper's group, or `pkill redlock-run`, must not take the guard
     * with it, or nothing would stop the command's group. */
    RR_SYS(SYS_setpgid, 0, 0, 0);
    RR_SYS(SYS_prctl, PR_SET_NAME, (long)"redlock-guard", 0);
    for (;;) {
        int64_t now = mono_ms();
        int64_t dl = load64(&g->deadline_ms);
        int64_t wait;

        if (load32(&g->child_pid) <= 0) {
            wait = 5;   /* the spawned process records itself in a moment */
        } else if (load32(&g->fired) || now >= dl) {
            store32(&g->fired, 1);
            signal_all(g, self, SIGKILL, true);
            wait = SWEEP_MS;
        } else if (now >= dl - g->grace_ms) {
            if (!load32(&g->termed)) {
                store32(&g->termed, 1);
                signal_all(g, self, SIGTERM, true);
                signal_all(g, self, SIGCONT, true);
            }
            wait = dl - now;
        } else {
            wait = dl - g->grace_ms - now;
        }
        /* Until the lease ends, keep what we know of our tree current. */
        if (load32(&g->child_pid) > 0 && !load32(&g->fired)) {
            if (now >= next_scan) {
                /* No process created since the last walk (the usual case
                 * on a quiet host), nothing new to find: a walk costs a
                 * dozen system calls, this three. */
                long lp = rr_proc_last_pid();
                if (lp < 0 || lp != seen_pid) {
                    tree_scan(g, self, 0);
                    seen_pid = lp;
                }
                next_scan = now + GUARD_SCAN_MS;
            }
            if (wait > next_scan - now)
                wait = next_scan - now;
        }
        if (wait > 60000)
            wait = 60000;
        if (wait < 1)
            wait = 1;
        struct pollfd pfd = { .fd = rfd, .events = POLLIN };
        if (RR_SYS(SYS_poll, &pfd, 1, wait) <= 0)
            continue;
        long n = RR_SYS(SYS_read, rfd, &c, 1);
        if (n == 1 && c == 'x')
            break;          /* stand down: the command and its kin are reaped */
        if (n == 1)
            continue;       /* woken: the deadline moved */
        if (n <= 0) {
            /* We died, even by SIGKILL: the lease will lapse under the
             * command, so it goes now. */
            /* Stopped first, not killed: what a dying process leaves
             * goes to init, out of reach of a walk. */
            signal_all(g, self, SIGSTOP, false);
            tree_kill_orphans(g, self, seen_pid);
            signal_all(g, self, SIGKILL, false);
            break;
        }
    }
    RR_SYS(SYS_exit, 0, 0, 0);
    return 0;
}

/* Map the control block (and, cloned, the stack above it) and start the
 * guard on it; NULL with nothing left behind when that fails. */
static struct rr_guard *launch(bool clone_it, const struct rr_guard *init)
{
    /* The control block (with the tree) at the bottom; cloned, the stack
     * above it, growing down from the top. */
    size_t len = (sizeof(struct rr_guard) + 4095) & ~(size_t)4095;
    if (clone_it)
        len += GUARD_STACK;
    int fds[2];
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
    g->rfd = fds[0];
    g->wfd = fds[1];
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
    /* g->rfd stays as it is: the guard may not have read it yet. */
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        munmap(g, len);
        return NULL;
    }
    g->guard_pid = pid;
    g->map_len = len;
    return g;
}

struct rr_guard *rr_guard_start(bool foreground, int64_t deadline_ms, int64_t grace_ms)
{
    struct rr_guard init = { 0 };
    struct rr_guard *g = NULL;

    init.deadline_ms = deadline_ms;
    init.grace_ms = grace_ms < 0 ? 0 : grace_ms;
    init.parent_pid = getpid();
    init.own_pgid = getpgid(0);
    init.foreground = foreground;
    /* valgrind does not know pidfd_open and says so on every call. */
    init.no_pidfd = UNDER_VALGRIND() ? 1 : 0;
    if (RR_CLONE_VM && RR_RAW_OK && !UNDER_VALGRIND())
        g = launch(true, &init);
    if (!g)   /* not cloned, or clone(CLONE_VM) refused */
        g = launch(false, &init);
    return g;
}

void rr_guard_set_child(struct rr_guard *g, pid_t pid)
{
    if (g)
        store32(&g->child_pid, pid);
}

void rr_guard_leader_reaped(struct rr_guard *g)
{
    if (g)
        store32(&g->leader_reaped, 1);
}

bool rr_guard_lease_ok(const struct rr_guard *g)
{
    if (!g)
        return true;
    return !load32(&g->fired) && mono_ms() < load64(&g->deadline_ms) - g->grace_ms;
}

static void poke(struct rr_guard *g, char c)
{
    ssize_t w;

    if (g->wfd < 0)
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

void rr_guard_set_marks(struct rr_guard *g, char *const envp[])
{
    static const char *const want[2] = { "REDLOCK_NAME=", "REDLOCK_FENCE=" };
    int got = 0;

    if (!g || !envp)
        return;
    for (int k = 0; k < 2; k++) {
        size_t wl = strlen(want[k]);
        for (char *const *e = envp; *e; e++) {
            if (strncmp(*e, want[k], wl) == 0 && strlen(*e) < sizeof g->marks[k]) {
                memcpy(g->marks[k], *e, strlen(*e) + 1);
                got++;
                break;
            }
        }
    }
    /* Both, or the guard never looks: one alone could match strangers. */
    if (got == 2)
        __atomic_store_n(&g->nmarks, 2, __ATOMIC_RELEASE);
}

bool rr_guard_tree_full(const struct rr_guard *g)
{
    return g && load32(&g->tree_full);
}

bool rr_guard_fired(const struct rr_guard *g)
{
    return g && load32(&g->fired);
}

pid_t rr_guard_pid(const struct rr_guard *g)
{
    return g ? g->guard_pid : 0;
}

void rr_guard_stop(struct rr_guard *g)
{
    if (!g)
        return;
    poke(g, 'x');
    if (g->wfd >= 0)
        close(g->wfd);
    g->wfd = -1;
    /* It exits as soon as it reads that: a short wait, and no zombie. */
    if (g->guard_pid > 0)
        while (waitpid(g->guard_pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    munmap(g, g->map_len);
}
