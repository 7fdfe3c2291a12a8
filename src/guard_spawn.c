/* guard_spawn.c — the command's process before its exec (guard_impl.h):
 * the guard forks it when the guard starts, ahead of R's request, so that
 * the fork overlaps the acquisition; it waits on a socket for the request
 * the guard relays (R's exec pipe, argv, envp) and then runs exec.c's
 * rr_exec_child. Also the wire of those requests, which R, the guard and
 * this process share. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "cgroup.h"
#include "clone3.h"
#include "exec.h"
#include "guard_impl.h"
#include "rr.h"

/* ---- the wire ---- */

bool rr_guard_read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static bool send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

int rr_guard_send_req(int fd, const struct req *q, int xfd, const void *data, size_t len)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { .iov_base = (void *)q, .iov_len = sizeof *q };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t w;

    if (fd < 0)
        return -EPIPE;
    if (xfd >= 0) {
        memset(cbuf, 0, sizeof cbuf);
        m.msg_control = cbuf;
        m.msg_controllen = sizeof cbuf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &xfd, sizeof xfd);
    }
    do {
        w = sendmsg(fd, &m, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof *q || (len > 0 && !send_all(fd, data, len)))
        return -EPIPE;
    return 0;
}

/* One request's header, with the descriptor that came with it (a spawn's
 * exec pipe), if any, in *fd. False at EOF (R is gone) or on error. */
bool rr_guard_recv_req(int ctl, struct req *q, int *fd)
{
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { .iov_base = q, .iov_len = sizeof *q };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof cbuf };
    ssize_t n;

    do {
        n = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        return false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    /* The rest of a header split by the stream (it never is, at 24 bytes). */
    return (size_t)n == sizeof *q || rr_guard_read_all(ctl, (char *)q + n, sizeof *q - (size_t)n);
}

/* ---- the command's process ---- */

static bool lease_ok_fn(const void *arg)
{
    const struct shared *sh = arg;
    return !rr_guard_load32(&sh->fired) &&
           rr_now_ms() < rr_guard_load64(&sh->deadline_ms) - sh->grace_ms;
}

/* The strings of a spawn request, NUL-separated in blob, as argv and envp
 * (pointers into blob). 0, or -1 if they do not add up. */
static int split_strings(char *blob, size_t len, int argc, int envc, char ***argv, char ***envp)
{
    char **v = calloc((size_t)argc + (size_t)envc + 2, sizeof *v);
    size_t o = 0;

    if (!v)
        return -1;
    for (int i = 0; i < argc + envc; i++) {
        char *end = o < len ? memchr(blob + o, '\0', len - o) : NULL;
        if (!end) {
            free(v);
            return -1;
        }
        v[i < argc ? i : i + 1] = blob + o;
        o = (size_t)(end - blob) + 1;
    }
    *argv = v;
    *envp = v + argc + 1;
    return 0;
}

/* Tell R through its exec pipe why there is no command (exec.h's codes). */
void rr_guard_spawn_failed(int errfd, int code)
{
    if (errfd >= 0) {
        while (write(errfd, &code, sizeof code) < 0 && errno == EINTR)
            ;
        close(errfd);
    }
}

/* The command's process before R's request: it waits on sock for the
 * request the guard relays (the header with R's exec pipe, then argv and
 * envp), then becomes the command (exec.h). EOF (the guard died, or let it
 * go unused): it exits, having run nothing. */
static void __attribute__((noreturn)) await_spawn(struct gstate *s, struct rr_exec_spawn *sp,
                                                  int sock)
{
    char *blob = NULL, **argv = NULL, **envp = NULL;
    struct req q;
    int errfd = -1;

    /* The guard's ends: a copy of its report pipe here would keep R from
     * hearing of its death. */
    close(s->ctl);
    close(s->rep);
    close(s->sfd);
    if (!rr_guard_recv_req(sock, &q, &errfd) || errfd < 0)
        _exit(RR_EXIT_SOFTWARE);
    if (q.ms <= 0 || q.ms > SPAWN_MAX || q.argc < 1 || q.envc < 0 ||
        !(blob = malloc((size_t)q.ms)) || !rr_guard_read_all(sock, blob, (size_t)q.ms) ||
        split_strings(blob, (size_t)q.ms, q.argc, q.envc, &argv, &envp) != 0) {
        rr_guard_spawn_failed(errfd, RR_EXEC_FORK - EINVAL);
        _exit(RR_EXIT_SOFTWARE);
    }
    close(sock);
    sp->argv = argv;
    sp->envp = envp;
    sp->tty = q.arg != 0;
    sp->errfd = errfd;
    rr_exec_child(sp);
}

/* Fork the command's process now, before R asks for it (born in the
 * cgroup where the kernel can): a fork costs as much as a whole run's
 * round trips on some VMs, and made at the guard's start it overlaps the
 * acquisition instead of following it. It runs nothing until told
 * (await_spawn). 0, or -errno. */
int rr_guard_prefork(struct gstate *s)
{
    int sv[2], gp[2];
    long pid = -ENOSYS;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    if (pipe2(gp, O_CLOEXEC) < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return -e;
    }
    struct rr_exec_spawn sp = {
        .own_group = !s->foreground, .pgid = s->own_pgid, .parent = s->self,
        .cgroup = s->cgroup, .lease_ok = lease_ok_fn, .lease_arg = s->sh,
    };
    if (s->cgroup) {
        sp.born_in_cgroup = true;
        pid = rr_clone3_fork(rr_cgroup_dir_fd(s->cgroup));
        if (pid < 0)
            sp.born_in_cgroup = false;   /* C enters it itself, and says why it cannot */
    }
    if (pid < 0 && (pid = fork()) < 0)
        pid = -errno;
    if (pid == 0) {
        close(sv[1]);
        close(gp[0]);
        await_spawn(s, &sp, sv[0]);
    }
    close(sv[0]);
    close(gp[1]);
    if (pid < 0) {
        close(sv[1]);
        close(gp[0]);
        return (int)pid;
    }
    s->pre = (pid_t)pid;
    s->pre_sock = sv[1];
    s->pre_gp = gp[0];
    return 0;
}

/* The forked-ahead process will not be used: it died (reaped already), or
 * R's request could not reach it, or R is gone (then it is killed here,
 * and reaped with the rest). */
void rr_guard_drop_pre(struct gstate *s, bool kill_it)
{
    if (s->pre > 0 && kill_it)
        kill(s->pre, SIGKILL);
    if (s->pre_sock >= 0)
        close(s->pre_sock);
    if (s->pre_gp >= 0)
        close(s->pre_gp);
    s->pre = 0;
    s->pre_sock = s->pre_gp = -1;
}
