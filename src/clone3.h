/* clone3.h — clone3(2) for the command's spawn: born in its cgroup.
 *
 * Moving a process into a cgroup (a write to cgroup.procs) takes the
 * kernel's threadgroup lock for writing, which waits out an RCU grace
 * period: a millisecond or more when runs are seconds apart, more than
 * the rest of a run costs. clone3 with CLONE_INTO_CGROUP (Linux 5.7) makes
 * the process in the cgroup instead, with no migration at all.
 *
 * Both calls are raw system calls that touch no libc state (rawsys.h):
 * the guard, which makes them, may run on our memory. They return the
 * child's pid in the parent, or -errno: -ENOSYS where clone3 is missing or
 * filtered (a seccomp profile), -EINVAL or -E2BIG on a kernel without
 * CLONE_INTO_CGROUP, or whatever else the kernel refuses (the cgroup
 * removed, not writable). The caller then spawns as before (clone or fork,
 * then rr_cgroup_enter_self), which reports the cause in its own words. */
#ifndef RR_CLONE3_H
#define RR_CLONE3_H

#include <stddef.h>

/* Whether rr_clone3_vm can work here at all (an architecture whose
 * trampoline we have: x86-64). Elsewhere it returns -ENOSYS. */
#if defined(__x86_64__)
#define RR_CLONE3_VM 1
#else
#define RR_CLONE3_VM 0
#endif

/* clone3(CLONE_VM | CLONE_INTO_CGROUP) on the stack [stack, stack + size)
 * (16-byte aligned), exit signal SIGCHLD: the child runs fn(arg), and
 * exits with what it returns (fn normally execs). cgroup_fd: a directory
 * fd of a cgroup v2. */
long rr_clone3_vm(int cgroup_fd, void *stack, size_t size, int (*fn)(void *), void *arg);

/* clone3(CLONE_INTO_CGROUP) without CLONE_VM: a fork born in the cgroup,
 * returning 0 in the child like fork(), with none of libc's fork handlers
 * run (the child must make raw system calls only, then exec). For a
 * forked guard (sanitizer builds, valgrind, other architectures). */
long rr_clone3_fork(int cgroup_fd);

#endif
