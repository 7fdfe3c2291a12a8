/* guard_spawn.c — the command's process (guard_impl.h): at R's spawn
 * request the guard forks it, born in the cgroup where the kernel can, and
 * it runs exec.c's rr_exec_child. Also the wire of R's requests, which R
 * and the guard share. */
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

pid_t rr_guard_fork_command(struct gstate *s, const struct req *q, char *blob, int errfd)
{
    char **argv, **envp;
    int gp[2];
    long pid = -ENOSYS;

    if (split_strings(blob, (size_t)q->ms, q->argc, q->envc, &argv, &envp) != 0)
        return -EINVAL;
    if (pipe2(gp, O_CLOEXEC) < 0) {
        int e = errno;
        free(argv);
        return -e;
    }
    struct rr_exec_spawn sp = {
        .argv = argv, .envp = envp, .own_group = !s->foreground, .pgid = s->own_pgid,
        .tty = q->arg != 0, .parent = s->self, .errfd = errfd, .cgroup = s->cgroup,
        .lease_ok = lease_ok_fn, .lease_arg = s->sh,
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
        /* The guard's ends: a copy of its report pipe here would keep R
         * from hearing of its death. */
        close(s->ctl);
        close(s->rep);
        close(s->sfd);
        close(gp[0]);
        rr_exec_child(&sp);
    }
    free(argv);
    close(gp[1]);
    if (pid < 0)
        close(gp[0]);
    else
        s->gp = gp[0];
    return (pid_t)pid;
}
