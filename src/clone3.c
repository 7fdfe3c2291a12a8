/* clone3.c — clone3(2) into a cgroup, with or without our memory (see
 * clone3.h). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "clone3.h"
#include "rawsys.h"

#ifndef SYS_clone3
#define SYS_clone3 435   /* the same number on every architecture */
#endif
#define RR_CLONE_VM_FLAG 0x00000100ULL
#define RR_CLONE_INTO_CGROUP 0x200000000ULL

/* The kernel's struct clone_args up to cgroup (CLONE_ARGS_SIZE_VER2):
 * our own, so no header of a particular kernel is needed. */
struct rr_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
    uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

#if RR_CLONE3_VM && defined(__x86_64__)
/* The child comes back from the system call on the new stack, with no
 * frame to return into: it must go straight to fn, so this is assembly.
 * The syscall instruction keeps every register but rax, rcx and r11, so fn
 * and arg wait in r8 and r9. */
long rr_clone3_raw(struct rr_clone_args *args, size_t size, int (*fn)(void *), void *arg)
    __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".globl rr_clone3_raw\n"
        ".hidden rr_clone3_raw\n"
        ".type rr_clone3_raw,@function\n"
        "rr_clone3_raw:\n"
        "    mov %rdx, %r8\n"
        "    mov %rcx, %r9\n"
        "    mov $435, %eax\n"
        "    syscall\n"
        "    test %rax, %rax\n"
        "    jz 1f\n"
        "    ret\n"
        "1:  xor %ebp, %ebp\n"
        "    mov %r9, %rdi\n"
        "    call *%r8\n"
        "    mov %eax, %edi\n"
        "    mov $60, %eax\n"          /* exit: this process, not a group */
        "    syscall\n"
        "    hlt\n"
        ".size rr_clone3_raw, .-rr_clone3_raw\n");
#endif

long rr_clone3_vm(int cgroup_fd, void *stack, size_t size, int (*fn)(void *), void *arg)
{
#if RR_CLONE3_VM && defined(__x86_64__)
    /* Field by field: no initialiser the compiler could turn into a
     * memset call (no libc here). */
    struct rr_clone_args a;
    a.flags = RR_CLONE_VM_FLAG | RR_CLONE_INTO_CGROUP;
    a.pidfd = a.child_tid = a.parent_tid = 0;
    a.exit_signal = SIGCHLD;
    a.stack = (uint64_t)(uintptr_t)stack;
    a.stack_size = size;
    a.tls = a.set_tid = a.set_tid_size = 0;
    a.cgroup = (uint64_t)cgroup_fd;
    return rr_clone3_raw(&a, sizeof a, fn, arg);
#else
    (void)cgroup_fd;
    (void)stack;
    (void)size;
    (void)fn;
    (void)arg;
    return -ENOSYS;
#endif
}

long rr_clone3_fork(int cgroup_fd)
{
    struct rr_clone_args a;
    a.flags = RR_CLONE_INTO_CGROUP;
    a.pidfd = a.child_tid = a.parent_tid = 0;
    a.exit_signal = SIGCHLD;
    a.stack = a.stack_size = a.tls = a.set_tid = a.set_tid_size = 0;
    a.cgroup = (uint64_t)cgroup_fd;
    return RR_SYS(SYS_clone3, &a, sizeof a, 0);
}
