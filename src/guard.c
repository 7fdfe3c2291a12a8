/* guard.c — R's side of the guard (guard.h): fork it, ask it, hear it.
 * The guard process itself is guard_proc.c. It keeps the lease in a
 * MAP_SHARED page that R writes (the deadline) and it writes (what it
 * did), takes R's requests on a socket and reports on a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"
#include "guard.h"
#include "guard_impl.h"
#include "rr.h"

#define load64 rr_guard_load64
#define load32 rr_guard_load32
#define store32 rr_guard_store32

struct rr_guard {
    struct shared *sh;
    pid_t pid;                /* the guard's */
    int ctl;                  /* R -> G requests; -1 once stood down */
    int rep;                  /* G -> R reports */
};

/* Map the page, make the pipes, fork; in the child, main runs and never
 * returns. NULL (errno set) with nothing left behind on failure. */
static struct rr_guard *launch(void (*main_fn)(struct gstate *), struct gstate *init)
{
    struct rr_guard *g = calloc(1, sizeof *g);
    int ctl[2] = { -1, -1 }, rep[2] = { -1, -1 };
    sigset_t all, old;

    if (!g)
        return NULL;
    g->sh = mmap(NULL, sizeof *g->sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* Requests on a socket (send's MSG_NOSIGNAL: no SIGPIPE to R once the
     * guard is dead), reports on a pipe. */
    if (g->sh == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
        pipe2(rep, O_CLOEXEC) < 0)
        goto fail;
    g->sh->deadline_ms = RR_INF;
    /* Every signal blocked across the fork: the guard blocks them all
     * anyway, and none of R's handlers may run in it meanwhile. */
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    g->pid = fork();
    if (g->pid == 0) {
        close(ctl[1]);
        close(rep[0]);
        init->sh = g->sh;
        init->ctl = ctl[0];
        init->rep = rep[1];
        main_fn(init);
    }
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(ctl[0]);
    close(rep[1]);
    ctl[0] = rep[1] = -1;
    if (g->pid < 0) {
        errno = e;
        goto fail;
    }
    g->ctl = ctl[1];
    g->rep = rep[0];
    fcntl(g->rep, F_SETFL, O_NONBLOCK);
    return g;
fail:
    e = errno;
    for (int i = 0; i < 2; i++) {
        if (ctl[i] >= 0)
            close(ctl[i]);
        if (rep[i] >= 0)
            close(rep[i]);
    }
    if (g->sh && g->sh != MAP_FAILED)
        munmap(g->sh, sizeof *g->sh);
    free(g);
    errno = e;
    return NULL;
}

struct rr_guard *rr_guard_start(const struct rr_guard_opts *o)
{
    struct gstate init = { .cgroup = o->cgroup, .leftover = o->leftover,
                           .foreground = o->foreground, .gp = -1,
                           .sfd = -1, .kill_at = RR_INF, .phase = G_IDLE,
                           .parent = getpid(), .own_pgid = getpgid(0) };
    return launch(rr_guard_main, &init);
}

/* ---- R's side ---- */

static int request(struct rr_guard *g, const struct req *q)
{
    if (!g || g->ctl < 0)
        return -EPIPE;
    return rr_guard_send_req(g->ctl, q, -1, NULL, 0);
}


/* The spawn request: the header with the exec pipe's write end
 * (SCM_RIGHTS), then argv and envp, NUL-separated. */
static int send_spawn(struct rr_guard *g, const struct rr_guard_spawn *s, int errfd)
{
    struct req q = { .op = REQ_SPAWN, .arg = s->tty };
    size_t len = 0;

    if (!g || g->ctl < 0)
        return -EPIPE;
    for (char *const *a = s->argv; *a; a++, q.argc++)
        len += strlen(*a) + 1;
    for (char *const *e = s->envp; *e; e++, q.envc++)
        len += strlen(*e) + 1;
    if (len > (size_t)SPAWN_MAX)
        return -E2BIG;
    char *blob = malloc(len), *p = blob;
    if (!blob)
        return -ENOMEM;
    for (char *const *a = s->argv; *a; a++)
        p = stpcpy(p, *a) + 1;
    for (char *const *e = s->envp; *e; e++)
        p = stpcpy(p, *e) + 1;
    q.ms = (int64_t)len;
    int rc = rr_guard_send_req(g->ctl, &q, errfd, blob, len);
    free(blob);
    return rc;
}

int rr_guard_spawn_send(struct rr_guard *g, const struct rr_guard_spawn *s, int *fd, char *err,
                        size_t errlen)
{
    int ep[2];

    *fd = -1;
    __atomic_store_n(&g->sh->deadline_ms, s->deadline_ms, __ATOMIC_SEQ_CST);
    g->sh->grace_ms = s->grace_ms < 0 ? 0 : s->grace_ms;
    if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) < 0)
        return rr_exec_error(RR_EXEC_FORK - errno, s->argv[0], err, errlen);
    int rc = send_spawn(g, s, ep[1]);
    close(ep[1]);
    if (rc == -E2BIG || rc == -ENOMEM) {
        close(ep[0]);
        return rr_exec_error(RR_EXEC_FORK + rc, s->argv[0], err, errlen);
    }
    if (rc != 0) {
        close(ep[0]);
        snprintf(err, errlen, "cannot run '%s': the guard process died", s->argv[0]);
        return -1;
    }
    *fd = ep[0];
    return 0;
}

/* EOF once C has exec'd and the guard has closed its copy (after writing
 * C's pid to the page), or once the guard died; an int is exec.h's code. */
int rr_guard_spawn_outcome(struct rr_guard *g, int fd, const char *name, char *err,
                           size_t errlen)
{
    int code = 0;
    ssize_t n;

    do {
        n = read(fd, &code, sizeof code);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
    if (n == (ssize_t)sizeof code)
        return rr_exec_error(code, name, err, errlen);
    if (n != 0 || rr_guard_child(g) <= 0) {
        snprintf(err, errlen, "cannot run '%s': the guard process died", name);
        return -1;
    }
    return 0;
}

pid_t rr_guard_child(const struct rr_guard *g)
{
    return g ? load32(&g->sh->child_pid) : 0;
}

int rr_guard_report_fd(const struct rr_guard *g)
{
    return g ? g->rep : -1;
}

int rr_guard_read_report(struct rr_guard *g, struct rr_guard_report *r)
{
    ssize_t n;

    if (!g || g->rep < 0)
        return -1;
    do {
        n = read(g->rep, r, sizeof *r);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof *r)
        return 1;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    return -1;
}

int rr_guard_signal(struct rr_guard *g, int sig)
{
    return request(g, &(struct req){ .op = REQ_SIGNAL, .arg = sig });
}

void rr_guard_stop_child(struct rr_guard *g, int64_t grace_ms)
{
    request(g, &(struct req){ .op = REQ_STOP, .ms = grace_ms });
}

void rr_guard_hurry(struct rr_guard *g)
{
    if (g)
        store32(&g->sh->hurry, 1);
}

void rr_guard_set_deadline(struct rr_guard *g, int64_t deadline_ms)
{
    if (!g)
        return;
    int64_t old = load64(&g->sh->deadline_ms);
    __atomic_store_n(&g->sh->deadline_ms, deadline_ms, __ATOMIC_SEQ_CST);
    if (deadline_ms < old)
        request(g, &(struct req){ .op = REQ_WAKE });
}

void rr_guard_kill_now(struct rr_guard *g)
{
    rr_guard_hurry(g);
    rr_guard_set_deadline(g, 0);
}

bool rr_guard_termed(const struct rr_guard *g)
{
    return g && load32(&g->sh->termed);
}

bool rr_guard_fired(const struct rr_guard *g)
{
    return g && load32(&g->sh->fired);
}

pid_t rr_guard_pid(const struct rr_guard *g)
{
    return g ? g->pid : 0;
}

void rr_guard_stand_down(struct rr_guard *g)
{
    if (!g || g->ctl < 0)
        return;
    request(g, &(struct req){ .op = REQ_EXIT });
    close(g->ctl);
    g->ctl = -1;
}

static int release(struct rr_guard *g)
{
    int st = 0;

    if (g->ctl >= 0)
        close(g->ctl);
    if (g->pid > 0)
        while (waitpid(g->pid, &st, __WALL) < 0 && errno == EINTR)
            ;
    if (g->rep >= 0)
        close(g->rep);
    munmap(g->sh, sizeof *g->sh);
    free(g);
    return st;
}

void rr_guard_let_go(struct rr_guard *g)
{
    if (!g)
        return;
    /* Nothing of the command is left, or nothing was spawned: it exits at
     * once by itself. Not waited for: its exit (an address space torn down,
     * a millisecond on some VMs) is not the run's. Reaped by us if we live
     * on, by init once we exit. */
    rr_guard_stand_down(g);
    if (g->rep >= 0)
        close(g->rep);
    munmap(g->sh, sizeof *g->sh);
    free(g);
}

void rr_guard_stop(struct rr_guard *g)
{
    if (!g)
        return;
    /* It kills what it still has and exits: a short wait, and no zombie. */
    rr_guard_stand_down(g);
    release(g);
}

int rr_guard_reap_dead(struct rr_guard *g)
{
    return g ? release(g) : 0;
}

pid_t rr_guard_start_successor(pid_t pgid, bool reaped, const struct rr_cgroup *cgroup)
{
    struct gstate init = { .cgroup = cgroup, .cpid = pgid, .c_reaped = reaped, .gp = -1, .sfd = -1,
                           .parent = getpid(), .own_pgid = getpgid(0) };
    struct rr_guard *g = launch(rr_guard_successor_main, &init);
    if (!g)
        return -1;
    pid_t pid = g->pid;
    /* Nothing to ask it, nothing it reports: only its exit counts. */
    close(g->ctl);
    close(g->rep);
    munmap(g->sh, sizeof *g->sh);
    free(g);
    return pid;
}
