/* clone3.h — a fork born in the command's cgroup.
 *
 * Moving a process into a cgroup (a write to cgroup.procs) takes the
 * kernel's threadgroup lock for writing, which waits out an RCU grace
 * period: a millisecond or more when runs are seconds apart. clone3 with
 * CLONE_INTO_CGROUP (Linux 5.7) makes the process in the cgroup instead,
 * with no migration at all. It is an ordinary fork: the child returns 0
 * on a copy of the caller's memory, as from fork(), but libc's fork
 * handlers do not run, so it must exec soon. */
#ifndef RR_CLONE3_H
#define RR_CLONE3_H

/* clone3(CLONE_INTO_CGROUP), exit signal SIGCHLD. The child's pid in the
 * parent, 0 in the child, or -errno: -ENOSYS where clone3 is missing or
 * filtered (a seccomp profile), -EINVAL or -E2BIG on a kernel without
 * CLONE_INTO_CGROUP, or whatever else the kernel refuses (the cgroup
 * removed, not writable). The caller then forks and moves the child
 * itself (rr_cgroup_enter_self), which reports the cause in its own
 * words. cgroup_fd: a directory fd of a cgroup v2. */
long rr_clone3_fork(int cgroup_fd);

#endif
