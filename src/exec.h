/* exec.h — what the command's process does between its fork and its exec,
 * and the words for an exec that failed.
 *
 * At R's spawn request the guard forks the command's process
 * (guard_spawn.c), which runs rr_exec_child: into the cgroup if it was
 * not born in it, its process group, the terminal, PR_SET_PDEATHSIG, signals back to default, the
 * lease checked, then execvpe (a name without a slash is searched in PATH
 * by libc). Its outcome comes back through a close-on-exec pipe: EOF is
 * success, an int is the errno of the failure or one of the codes below
 * (rr_exec_error turns it into a message). */
#ifndef RR_EXEC_H
#define RR_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct rr_cgroup;

/* What the command's process needs, all of it prepared by the guard
 * before the fork. */
struct rr_exec_spawn {
    char *const *argv;
    char *const *envp;
    bool own_group;            /* setpgid(0, 0); else join pgid */
    pid_t pgid;                /* the group to join without own_group */
    bool tty;                  /* take the terminal (our group has it) */
    pid_t parent;              /* who must still be our parent after PDEATHSIG */
    int errfd;                 /* the pipe's write end (close-on-exec) */
    const struct rr_cgroup *cgroup;   /* entered first of all; NULL: none */
    bool born_in_cgroup;       /* forked into it (clone3.h): nothing to enter */
    /* Does the lease leave the grace, right before exec? */
    bool (*lease_ok)(const void *arg);
    const void *lease_arg;
};

/* Codes written to errfd besides an exec's errno. */
#define RR_EXEC_LATE (-1)          /* the lease had too little time left */
#define RR_EXEC_CGROUP (-1000)     /* minus errno: could not enter the cgroup */
#define RR_EXEC_FORK (-2000)       /* minus errno: the guard could not fork */

/* In the command's process, right after the fork. Never returns. */
void rr_exec_child(const struct rr_exec_spawn *s) __attribute__((noreturn));

/* "cannot run 'foo': permission denied" and friends for a code read from
 * errfd; returns -127 (not found), -126 (not executable), -1 (the guard
 * could not fork, the cgroup) or -2 (late: RR_SPAWN_LATE). */
int rr_exec_error(int code, const char *name, char *err, size_t errlen);

#endif
