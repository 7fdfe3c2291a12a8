/* exec.c — the command's process between fork and exec (see exec.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cgroup.h"
#include "exec.h"
#include "mutant.h"
#include "rr.h"

/* A text file (no NUL in its first bytes, no ELF magic): what execvp and
 * every shell run with sh when the kernel says it has no format. */
static bool looks_like_text(const char *path)
{
    char buf[128];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0 || (n >= 4 && memcmp(buf, "\x7f" "ELF", 4) == 0))
        return false;
    return memchr(buf, '\0', (size_t)n) == NULL;
}

static void __attribute__((noreturn)) report(int errfd, int code)
{
    while (write(errfd, &code, sizeof code) < 0 && errno == EINTR)
        ;
    _exit(RR_EXIT_NOTFOUND);
}

/* A file named by a path: execve, and sh for a script without "#!" (a
 * binary the kernel cannot run stays an exec format error). A bare name:
 * libc's execvpe searches PATH. Returns the errno of the failure. */
static int exec_command(char *const *argv, char *const *envp)
{
    const char *file = argv[0];

    if (!strchr(file, '/')) {
        execvpe(file, argv, envp);
        return errno;
    }
    execve(file, argv, envp);
    int e = errno;
    if (e != ENOEXEC || !looks_like_text(file))
        return e;
    size_t n = 0;
    while (argv[n])
        n++;
    char **sh = calloc(n + 2, sizeof *sh);
    if (!sh)
        return ENOMEM;
    sh[0] = (char *)"sh";
    sh[1] = (char *)file;
    for (size_t i = 1; i < n; i++)
        sh[i + 1] = argv[i];
    execve("/bin/sh", sh, envp);
    return errno;
}

void rr_exec_child(const struct rr_exec_spawn *s)
{
    pid_t self = getpid();

    /* Into the cgroup before anything else, unless clone3 made us in it:
     * what we start is born in it. */
    if (s->cgroup && !s->born_in_cgroup) {
        int e = rr_cgroup_enter_self(s->cgroup);
        if (e < 0)
            report(s->errfd, RR_EXEC_CGROUP + e);
    }
    setpgid(0, s->own_group ? 0 : s->pgid);
    /* The terminal goes with us (every signal is blocked here, SIGTTOU too),
     * if R's group still has it: a job stopped while we were being started
     * gave it back to the shell, which must keep it (fg gives it to R, and
     * R hands it on when it continues us). */
    if (s->tty && tcgetpgrp(0) == s->pgid)
        ioctl(0, TIOCSPGRP, &self);
    /* Die with the guard, even when it is SIGKILLed. If it already died
     * before prctl took effect, the signal will never come, so check. */
    prctl(PR_SET_PDEATHSIG, RR_MUTANT_IS(no_pdeathsig) ? 0 : SIGKILL);
    if (getppid() != s->parent)
        _exit(RR_EXIT_SOFTWARE);
    /* Ignored signals survive exec: every disposition goes back to default
     * while all are still blocked. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    /* The lease must leave the grace to stop the command before its end. */
    if (s->lease_ok && !s->lease_ok(s->lease_arg) && !RR_MUTANT_IS(no_exec_lease_check))
        report(s->errfd, RR_EXEC_LATE);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    report(s->errfd, exec_command(s->argv, s->envp));
}

int rr_exec_error(int code, const char *name, char *err, size_t errlen)
{
    const char *what = "cannot run";
    int e = code;

    if (code == RR_EXEC_LATE) {
        snprintf(err, errlen, "not running '%s': the lease had too little time left to "
                 "stop it before its end", name);
        return -2;
    }
    if (code == ENOENT || code == ENOTDIR) {
        /* A bare name was looked up in PATH; a path names one file. */
        if (!strchr(name, '/'))
            snprintf(err, errlen, "cannot run '%s': command not found", name);
        else
            snprintf(err, errlen, "cannot run '%s': no such file or directory", name);
        return -RR_EXIT_NOTFOUND;
    }
    if (code <= RR_EXEC_FORK) {
        e = RR_EXEC_FORK - code;
        what = "cannot fork to run";
    } else if (code <= RR_EXEC_CGROUP) {
        e = RR_EXEC_CGROUP - code;
        what = "cannot move into its cgroup the command";
    }
    char msg[128];
    snprintf(msg, sizeof msg, "%s", strerror(e));
    if (msg[0] >= 'A' && msg[0] <= 'Z')
        msg[0] = (char)(msg[0] - 'A' + 'a');
    snprintf(err, errlen, "%s '%s': %s", what, name, msg);
    return code <= RR_EXEC_CGROUP ? -1 : -RR_EXIT_NOEXEC;
}
