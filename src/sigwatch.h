/* sigwatch.h — the signals a run acts on, read from one signalfd.
 *
 * The signals are blocked and read from a signalfd that the libuv loop
 * polls: three system calls to start and one read per signal, where a
 * libuv signal handle costs about six to start and six to stop, each
 * (a process-wide lock taken over a pipe, the mask saved and restored, the
 * action set). Blocked, they are also never acted on by default while we
 * run: nothing stops us or kills us but what the callback decides (SIGKILL
 * and SIGSTOP aside). The mask is inherited by what we fork or clone: the
 * guard blocks every signal anyway, and the command's exec child sets an
 * empty mask before execve (exec.c). rr_sigwatch_close leaves the signals
 * blocked, so one that comes once the run is over is never delivered (it
 * must not turn the exit status into a death by signal). */
#ifndef RR_SIGWATCH_H
#define RR_SIGWATCH_H

#include <uv.h>

typedef void (*rr_sigwatch_cb)(void *arg, int sig);

struct rr_sigwatch {
    uv_poll_t poll;
    int fd;               /* the signalfd; -1 before start and after close */
    int closing_fd;       /* closed by the poll handle's close callback */
    rr_sigwatch_cb cb;
    void *arg;
};

/* Block sigs[0..n) and watch them on loop: cb(arg, sig) for each one that
 * comes, in the loop, in the order the kernel queued them. One of a kind
 * while it is pending, as with handlers, but pending now lasts until the
 * loop reads the signalfd: two SIGHUPs sent while the loop is busy (a
 * blocking step such as the wait for the exec) reach cb once. 0, or -errno (the signals are
 * then not blocked). */
int rr_sigwatch_start(struct rr_sigwatch *w, uv_loop_t *loop, const int *sigs, int n,
                      rr_sigwatch_cb cb, void *arg);

/* Stop watching; the poll handle closes with the loop's next turn and the
 * fd with it. The signals stay blocked. Safe to call twice, or without a
 * start. */
void rr_sigwatch_close(struct rr_sigwatch *w);

#endif
