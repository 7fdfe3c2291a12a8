/* clone3.c — a fork born in the command's cgroup (see clone3.h). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clone3.h"

#ifndef SYS_clone3
#define SYS_clone3 435   /* the same number on every architecture */
#endif
#define RR_CLONE_INTO_CGROUP 0x200000000ULL

/* The kernel's struct clone_args up to cgroup (CLONE_ARGS_SIZE_VER2). */
struct rr_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
    uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

long rr_clone3_fork(int cgroup_fd)
{
    struct rr_clone_args a;

    if (cgroup_fd < 0)
        return -EBADF;
    memset(&a, 0, sizeof a);
    a.flags = RR_CLONE_INTO_CGROUP;
    a.exit_signal = SIGCHLD;
    a.cgroup = (uint64_t)cgroup_fd;
    /* No shared memory and no stack of its own: the child comes back from
     * the system call on a copy of ours, like fork's. */
    long r = syscall(SYS_clone3, &a, sizeof a);
    return r < 0 ? -errno : r;
}
