/* exec.c — the command's exec plan and its spawned side (see exec.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "exec.h"
#include "rawsys.h"
#include "rr.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

void rr_exec_plan_free(struct rr_exec_plan *plan)
{
    free(plan->sh_argv);
    plan->sh_argv = NULL;
    if (plan->paths) {
        for (char **p = plan->paths; *p; p++)
            free(*p);
        free(plan->paths);
    }
    plan->paths = NULL;
}

/* The files execvp would try for name: name itself when it contains a
 * slash, else every PATH directory (an empty entry meaning the current
 * directory, as POSIX says). 0, or -1 when out of memory. */
static int build_paths(const char *name, struct rr_exec_plan *plan)
{
    plan->paths = NULL;
    if (strchr(name, '/') || name[0] == '\0') {
        plan->paths = calloc(2, sizeof *plan->paths);
        if (!plan->paths || !(plan->paths[0] = strdup(name)))
            goto fail;
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = DEFAULT_PATH;
    size_t n = 1;
    for (const char *s = path; *s; s++)
        n += (*s == ':');
    plan->paths = calloc(n + 1, sizeof *plan->paths);
    if (!plan->paths)
        goto fail;
    size_t namelen = strlen(name), i = 0;
    const char *dir = path;
    for (;;) {
        const char *end = strchrnul(dir, ':');
        size_t dirlen = (size_t)(end - dir);
        char *cand = malloc(dirlen + namelen + 3);
        if (!cand)
            goto fail;
        if (dirlen == 0)
            sprintf(cand, "./%s", name);
        else
            sprintf(cand, "%.*s/%s", (int)dirlen, dir, name);
        plan->paths[i++] = cand;
        if (*end == '\0')
            break;
        dir = end + 1;
    }
    return 0;
fail:
    rr_exec_plan_free(plan);
    return -1;
}

int rr_exec_plan_make(struct rr_exec_plan *plan, char *const argv[], char *const envp[])
{
    memset(plan, 0, sizeof *plan);
    plan->argv = argv;
    plan->envp = envp;
    if (build_paths(argv[0], plan) < 0)
        return -1;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    plan->sh_argv = calloc(argc + 2, sizeof *plan->sh_argv);
    if (plan->sh_argv) {
        plan->sh_argv[0] = (char *)"sh";
        for (size_t i = 1; i < argc; i++)
            plan->sh_argv[i + 1] = argv[i];
    }
    return 0;
}

/* ---- the spawned process: raw system calls only ---- */

/* Does the file start like text (no ELF magic, no NUL in its first bytes)? */
static bool looks_like_text(const char *path)
{
    char buf[128];
    long fd = RR_SYS(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    long n = RR_SYS(SYS_read, fd, buf, sizeof buf);
    RR_SYS(SYS_close, fd, 0, 0);
    if (n < 0 || (n >= 4 && memcmp(buf, "\x7f" "ELF", 4) == 0))
        return false;
    return memchr(buf, '\0', (size_t)n) == NULL;
}

/* The kernel's struct sigaction (the same on x86-64 and arm64). */
struct k_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

static void __attribute__((noreturn)) report(int errfd, int code)
{
    long w;
    do {
        w = RR_SYS(SYS_write, errfd, &code, sizeof code);
    } while (w == -EINTR);
    RR_SYS(SYS_exit_group, RR_EXIT_NOTFOUND, 0, 0);
    __builtin_unreachable();
}

static bool skip_err(long e)
{
    return e == ENOENT || e == ENOTDIR || e == ESTALE || e == ENODEV || e == ETIMEDOUT;
}

void rr_exec_child(const struct rr_exec_spawn *s)
{
    const struct rr_exec_plan *plan = s->plan;
    pid_t self = (pid_t)RR_SYS(SYS_getpid, 0, 0, 0);

    /* Into the cgroup before anything else, unless clone3 made us in it:
     * what we start is born in it. */
    if (s->cgroup && !s->born_in_cgroup) {
        int e = rr_cgroup_enter_self(s->cgroup);
        if (e < 0)
            report(s->errfd, RR_EXEC_CGROUP + e);
    }
    RR_SYS(SYS_setpgid, 0, s->own_group ? 0 : s->pgid, 0);
    /* The terminal goes with us (every signal is blocked here, SIGTTOU too). */
    if (s->tty)
        RR_SYS(SYS_ioctl, 0, TIOCSPGRP, &self);
    /* Die with the guard, even when it is SIGKILLed. If it already died
     * before prctl took effect, the signal will never come, so check. */
    RR_SYS(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0);
    if (RR_SYS(SYS_getppid, 0, 0, 0) != s->parent)
        RR_SYS(SYS_exit_group, RR_EXIT_SOFTWARE, 0, 0);
    /* Ignored signals survive exec (SIGPIPE: redlock-run ignores it): every
     * disposition goes back to default while all are still blocked. */
    struct k_sigaction dfl = { 0 };
    dfl.handler = SIG_DFL;
    for (int sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            RR_SYS4(SYS_rt_sigaction, sig, &dfl, 0, sizeof dfl.mask);
    /* The lease must leave the grace to stop the command before its end. */
    if (s->lease_ok && !s->lease_ok(s->lease_arg))
        report(s->errfd, RR_EXEC_LATE);
    unsigned long none = 0;
    RR_SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, sizeof none);

    /* Like execvp: skip files that are missing, remember EACCES in case
     * nothing else is found, stop at any other error. */
    bool saw_eacces = false;
    long err = ENOENT;
    for (char *const *p = plan->paths; *p; p++) {
        err = -RR_SYS(SYS_execve, *p, plan->argv, plan->envp);
        if (err == ENOEXEC && plan->sh_argv && looks_like_text(*p)) {
            /* A script without "#!": run it with the shell, as execvp and
             * every shell do (a binary stays an exec format error). */
            plan->sh_argv[1] = *p;
            err = -RR_SYS(SYS_execve, "/bin/sh", plan->sh_argv, plan->envp);
            break;
        }
        if (err == EACCES) {
            saw_eacces = true;
            continue;
        }
        if (skip_err(err))
            continue;
        break;
    }
    if (saw_eacces && skip_err(err))
        err = EACCES;
    report(s->errfd, (int)err);
}

int rr_exec_child_fn(void *arg)
{
    rr_exec_child(arg);
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
