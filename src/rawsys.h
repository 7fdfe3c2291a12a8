/* rawsys.h — system calls that touch no libc state, for the guard and the
 * /proc reader it uses (proc.c).
 *
 * The guard may run on our memory (clone(CLONE_VM), see guard.c): it must
 * not write errno, which lives in the thread-local storage it shares with
 * our main thread. So on x86-64 and arm64 these are inline `syscall`
 * instructions returning -errno. Where the guard is always forked (sanitizer
 * builds, other architectures), libc's wrapper is fine and is used. */
#ifndef RR_RAWSYS_H
#define RR_RAWSYS_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* AddressSanitizer cannot follow a process onto a stack it did not make
 * (it warns, and may report false errors): sanitizer builds fork the
 * guard. RR_CLONE_VM says whether it may be cloned at all. */
#if defined(__SANITIZE_ADDRESS__)
#define RR_CLONE_VM 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RR_CLONE_VM 0
#endif
#endif
#ifndef RR_CLONE_VM
#define RR_CLONE_VM 1
#endif

#if defined(__x86_64__) && RR_CLONE_VM
static inline long rr_sys6(long n, long a, long b, long c, long d, long e, long f)
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
#define RR_RAW_OK 1
#elif defined(__aarch64__) && RR_CLONE_VM
static inline long rr_sys6(long n, long a, long b, long c, long d, long e, long f)
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
#define RR_RAW_OK 1
#else
/* Elsewhere the guard is always forked, so libc's wrapper is fine. */
static inline long rr_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#define RR_RAW_OK 0
#endif

#define RR_SYS(n, a, b, c) rr_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define RR_SYS4(n, a, b, c, d) rr_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define RR_SYS6(n, a, b, c, d, e, f)                                                  \
    rr_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* The same number on every architecture (the syscall table is unified
 * from 424 on); older headers lack them. */
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define RR_EPERM_RAW 1
#define RR_ENOSYS_RAW 38

#endif
