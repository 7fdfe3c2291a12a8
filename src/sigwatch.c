/* sigwatch.c — the signals a run acts on, read from one signalfd (see
 * sigwatch.h). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sigwatch.h"

static void on_readable(uv_poll_t *h, int status, int events)
{
    struct rr_sigwatch *w = h->data;
    struct signalfd_siginfo si[8];

    (void)status;
    (void)events;
    for (;;) {
        ssize_t n = read(w->fd, si, sizeof si);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < (ssize_t)sizeof si[0])
            return;
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++) {
            w->cb(w->arg, (int)si[i].ssi_signo);
            if (w->fd < 0)
                return;  /* the callback closed us */
        }
    }
}

int rr_sigwatch_start(struct rr_sigwatch *w, uv_loop_t *loop, const int *sigs, int n,
                      rr_sigwatch_cb cb, void *arg)
{
    sigset_t set, old;
    int e;

    memset(w, 0, sizeof *w);
    w->fd = w->closing_fd = -1;
    sigemptyset(&set);
    for (int i = 0; i < n; i++)
        sigaddset(&set, sigs[i]);
    if (sigprocmask(SIG_BLOCK, &set, &old) != 0)
        return -errno;
    w->fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (w->fd < 0) {
        e = -errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        return e;
    }
    w->cb = cb;
    w->arg = arg;
    w->poll.data = w;
    if ((e = uv_poll_init(loop, &w->poll, w->fd)) == 0 &&
        (e = uv_poll_start(&w->poll, UV_READABLE, on_readable)) == 0)
        return 0;
    if (w->poll.loop)
        uv_close((uv_handle_t *)&w->poll, NULL);
    close(w->fd);
    w->fd = -1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* The fd is closed only once libuv has let go of it: closed earlier, its
 * number could be taken by another fd that libuv would then stop polling. */
static void on_closed(uv_handle_t *h)
{
    struct rr_sigwatch *w = h->data;

    close(w->closing_fd);
    w->closing_fd = -1;
}

void rr_sigwatch_close(struct rr_sigwatch *w)
{
    if (w->fd < 0)
        return;
    w->closing_fd = w->fd;
    w->fd = -1;
    uv_close((uv_handle_t *)&w->poll, on_closed);
}
