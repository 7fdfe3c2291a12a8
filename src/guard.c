/* guard.c — the lease's enforcer (see guard.h for what it does and why).
 *
 * The guard is started with clone(CLONE_VM) on a stack of its own, like a
 * thread but a separate process that outlives us: fork() would make every
 * page we write afterwards a copy-on-write fault, a cost per run that is
 * easy to measure. Sharing our memory, it must not touch libc state: it
 * makes raw system calls only (below), so that not even errno, which lives
 * in the thread-local storage it shares with our main thread, is written.
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
#include "rr.h"

#define GUARD_STACK (64 * 1024)
#define MAX_KIDS 256
/* After the deadline, how often the guard looks again for processes to
 * kill (descendants re-parented to us once their parent died). */
#define SWEEP_MS 10

/* AddressSanitizer cannot follow a process onto a stack it did not make
 * (it warns, and may report false errors): sanitizer builds fork. */
#if defined(__SANITIZE_ADDRESS__)
#define GUARD_CLONE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_CLONE 0
#endif
#endif
#ifndef GUARD_CLONE
#define GUARD_CLONE 1
#endif

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
    /* Ours only. */
    pid_t guard_pid;
    void *stack;
};

/* ---- raw system calls: no errno, no libc state ---- */

#if defined(__x86_64__) && GUARD_CLONE
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#define RAW_OK 1
#elif defined(__aarch64__) && GUARD_CLONE
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#define RAW_OK 1
#else
/* Elsewhere the guard is always forked, so libc's wrapper is fine. */
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#define RAW_OK 0
#endif

#define SYS(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

static int64_t mono_ms(void)
{
    struct timespec ts = { 0, 0 };
    SYS(SYS_clock_gettime, CLOCK_MONOTONIC, &ts, 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t load64(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static int load32(const int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store32(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

/* ---- pure helpers ---- */

int rr_guard_parse_pids(const char *buf, size_t len, pid_t *out, int max)
{
    int n = 0;
    long v = -1;

    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? buf[i] : ' ';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v) * 10 + (c - '0');
            if (v > 0x3fffffff)
                v = 0x3fffffff;   /* nonsense; kept out below */
        } else {
            if (v > 0 && v < 0x3fffffff && n < max)
                out[n++] = (pid_t)v;
            v = -1;
        }
    }
    return n;
}

/* "/proc/" + number + suffix into buf; returns buf. */
static char *proc_path(char *buf, size_t len, long pid, const char *suffix)
{
    char num[24];
    size_t k = 0, o = 0;
    const char *pre = "/proc/";

    do {
        num[k++] = (char)('0' + pid % 10);
        pid /= 10;
    } while (pid > 0 && k < sizeof num);
    for (; *pre && o + 1 < len; pre++)
        buf[o++] = *pre;
    while (k > 0 && o + 1 < len)
        buf[o++] = num[--k];
    for (; *suffix && o + 1 < len; suffix++)
        buf[o++] = *suffix;
    buf[o] = '\0';
    return buf;
}

struct dirent64_raw {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

int rr_guard_children(pid_t pid, pid_t skip, pid_t *out, int max)
{
    char path[96], dents[2048], kids[4096];
    int n = 0;
    long dfd;

    dfd = SYS(SYS_openat, AT_FDCWD, proc_path(path, sizeof path, pid, "/task"),
              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    for (;;) {
        long got = SYS(SYS_getdents64, dfd, dents, sizeof dents);
        if (got <= 0)
            break;
        for (long off = 0; off < got;) {
            const struct dirent64_raw *d = (const void *)(dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9')
                continue;
            /* /proc/PID/task/TID/children */
            char sub[160];
            size_t o = 0;
            const char *s = proc_path(path, sizeof path, pid, "/task/");
            for (; *s && o + 1 < sizeof sub; s++)
                sub[o++] = *s;
            for (s = d->d_name; *s && o + 1 < sizeof sub; s++)
                sub[o++] = *s;
            for (s = "/children"; *s && o + 1 < sizeof sub; s++)
                sub[o++] = *s;
            sub[o] = '\0';
            long fd = SYS(SYS_openat, AT_FDCWD, sub, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;   /* the thread is gone */
            long r = SYS(SYS_read, fd, kids, sizeof kids);
            SYS(SYS_close, fd, 0, 0);
            if (r <= 0)
                continue;
            pid_t tmp[MAX_KIDS];
            int k = rr_guard_parse_pids(kids, (size_t)r, tmp, MAX_KIDS);
            for (int i = 0; i < k && n < max; i++)
                if (tmp[i] != skip)
                    out[n++] = tmp[i];
        }
    }
    SYS(SYS_close, dfd, 0, 0);
    return n;
}

/* ---- the guard process ---- */

/* sig to the command (its group, unless foreground) and, once the lease is
 * over, to every other child of the wrapper and that child's group. */
static void signal_all(const struct rr_guard *g, pid_t self, int sig, bool stragglers)
{
    pid_t c = load32(&g->child_pid);

    if (c > 0 && !load32(&g->leader_reaped))
        SYS(SYS_kill, c, sig, 0);
    /* A group lives on while it has members, whatever became of its
     * leader; its id is not reused meanwhile. */
    if (c > 0 && !g->foreground)
        SYS(SYS_kill, -c, sig, 0);
    if (!stragglers)
        return;
    pid_t kids[MAX_KIDS];
    int n = rr_guard_children(g->parent_pid, self, kids, MAX_KIDS);
    for (int i = 0; i < n; i++) {
        SYS(SYS_kill, kids[i], sig, 0);
        long pg = SYS(SYS_getpgid, kids[i], 0, 0);
        if (pg > 1 && pg != g->own_pgid)
            SYS(SYS_kill, -pg, sig, 0);
    }
}

static int guard_main(void *p)
{
    struct rr_guard *g = p;
    pid_t self = (pid_t)SYS(SYS_getpid, 0, 0, 0);
    int rfd = g->rfd, wfd = g->wfd;
    char c;

    /* Hold nothing open but our pipe: not a socket, a terminal or an
     * output pipe that someone waits to see closed. */
    SYS(SYS_close, wfd, 0, 0);
    long cr = -1;
#ifdef SYS_close_range
    cr = rfd > 0 ? SYS(SYS_close_range, 0, rfd - 1, 0) : 0;
    if (cr == 0)
        cr = SYS(SYS_close_range, rfd + 1, ~0U, 0);
#endif
    /* Without close_range (kernel < 5.9, a seccomp filter) one by one: a
     * pipe end we kept open would hang the exec-status read for good. */
    if (cr != 0)
        for (int fd = 0; fd < 65536; fd++)
            if (fd != rfd)
                SYS(SYS_close, fd, 0, 0);
    /* A process group and a name of our own: `kill -9 -PGID` of the
     * wrapper's group, or `pkill redlock-run`, must not take the guard
     * with it, or nothing would stop the command's group. */
    SYS(SYS_setpgid, 0, 0, 0);
    SYS(SYS_prctl, PR_SET_NAME, (long)"redlock-guard", 0);
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
        if (wait > 60000)
            wait = 60000;
        if (wait < 1)
            wait = 1;
        struct pollfd pfd = { .fd = rfd, .events = POLLIN };
        if (SYS(SYS_poll, &pfd, 1, wait) <= 0)
            continue;
        long n = SYS(SYS_read, rfd, &c, 1);
        if (n == 1 && c == 'x')
            break;          /* stand down: the command and its kin are reaped */
        if (n == 1)
            continue;       /* woken: the deadline moved */
        if (n <= 0) {
            /* We died, even by SIGKILL: the lease will lapse under the
             * command, so it goes now. */
            signal_all(g, self, SIGKILL, false);
            break;
        }
    }
    SYS(SYS_exit, 0, 0, 0);
    return 0;
}

/* Map the control block (and, cloned, the stack above it) and start the
 * guard on it; NULL with nothing left behind when that fails. */
static struct rr_guard *launch(bool clone_it, const struct rr_guard *init)
{
    size_t len = clone_it ? GUARD_STACK : 4096;
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
        pid = clone(guard_main, (char *)g + GUARD_STACK, CLONE_VM | SIGCHLD, g);
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
    g->stack = (void *)(uintptr_t)len;   /* the mapping's size, for munmap */
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
    if (GUARD_CLONE && RAW_OK && !UNDER_VALGRIND())
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
    munmap(g, (size_t)(uintptr_t)g->stack);
}
