/* exec.h — starting the command: the PATH search planned in advance, and
 * what the spawned process does between its fork and its exec.
 *
 * The plan (the files to try, the shell's argv for a script without "#!")
 * is built by redlock-run before the guard starts, with malloc. The guard
 * (guard.c) then spawns the command on it, and the spawned process runs
 * rr_exec_child: raw system calls only (rawsys.h), since it may share our
 * memory and our errno (clone(CLONE_VM) on a stack of its own from a guard
 * that is itself a clone(CLONE_VM) of redlock-run), and never returns. Its outcome
 * comes back through a close-on-exec pipe: EOF is success, an int is the
 * errno of the failure (rr_exec_error turns it into a message). */
#ifndef RR_EXEC_H
#define RR_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct rr_cgroup;

struct rr_exec_plan {
    char **paths;              /* candidate file names, NULL-terminated */
    char **sh_argv;            /* "sh", file, argv[1..], NULL: for ENOEXEC */
    char *const *argv;
    char *const *envp;
};

/* Build the plan for argv (argv[0] searched in PATH like execvp) and envp;
 * 0, or -1 when out of memory. Without sh_argv (out of memory) a script
 * without "#!" is an exec format error, as for a binary. */
int rr_exec_plan_make(struct rr_exec_plan *plan, char *const argv[], char *const envp[]);
void rr_exec_plan_free(struct rr_exec_plan *plan);

/* What the spawned process needs, all of it prepared before it exists. */
struct rr_exec_spawn {
    const struct rr_exec_plan *plan;
    bool own_group;            /* setpgid(0, 0); else join pgid */
    pid_t pgid;                /* the group to join without own_group (ours) */
    bool tty;                  /* take the terminal (our group has it) */
    pid_t parent;              /* who must still be our parent after PDEATHSIG */
    int errfd;                 /* the pipe's write end (close-on-exec) */
    const struct rr_cgroup *cgroup;   /* entered first of all; NULL: none */
    bool born_in_cgroup;       /* spawned into it (clone3.h): nothing to enter */
    /* Does the lease leave the grace, right before exec? Async-signal-safe. */
    bool (*lease_ok)(const void *arg);
    const void *lease_arg;
};

/* Codes written to errfd besides an exec's errno. */
#define RR_EXEC_LATE (-1)          /* the lease had too little time left */
#define RR_EXEC_CGROUP (-1000)     /* minus errno: could not enter the cgroup */
#define RR_EXEC_FORK (-2000)       /* minus errno: the guard could not fork */

/* In the spawned process: only raw system calls. Never returns. */
void rr_exec_child(const struct rr_exec_spawn *s) __attribute__((noreturn));

/* The same, with the signature clone(2) wants (arg: a struct rr_exec_spawn). */
int rr_exec_child_fn(void *arg);

/* "cannot run 'foo': permission denied" and friends for a code read from
 * errfd; returns -127 (not found), -126 (not executable), -1 (the guard
 * could not fork, the cgroup) or -2 (late: RR_SPAWN_LATE). */
int rr_exec_error(int code, const char *name, char *err, size_t errlen);

#endif
