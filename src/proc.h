/* proc.h — reading /proc: the process tree below a pid, a process's state,
 * parent and start time, its name.
 *
 * For the guard (guard.c), which lists its own children once the command
 * ended or must be killed, for its successor after a guard's death, and for
 * the names in the log. Plain libc, no state; the parsers are pure
 * functions on a buffer, for the unit tests too. */
#ifndef RR_PROC_H
#define RR_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The most processes handled at once: pids taken from one children file,
 * processes the guard holds of our tree, stragglers the sweep stops in one
 * look. */
#define RR_PROC_MAX 256

/* What is read in /proc/PID/stat. */
struct rr_proc_stat {
    char state;               /* R, S, Z, ... */
    pid_t ppid;
    int threads;
    unsigned long long start; /* clock ticks after boot: a pid's identity */
};

/* Parse a /proc/PID/stat text (comm may contain anything); 0, or -1 if it
 * is not one (cut before the 22nd field). Pure. */
int rr_proc_parse_stat(const char *buf, size_t len, struct rr_proc_stat *st);

/* The pids listed in a /proc/PID/task/TID/children text ("12 345 "), into
 * out (at most max); returns how many. Pure. */
int rr_proc_parse_pids(const char *buf, size_t len, pid_t *out, int max);

/* The children of process pid (every thread's children file), except skip,
 * into out (at most max); returns how many, or -1 if /proc cannot be read. */
int rr_proc_children(pid_t pid, pid_t skip, pid_t *out, int max);

/* The same for a process of one thread, ours (the guard): one file,
 * /proc/PID/task/PID/children, no listing of the threads. -1 if /proc
 * cannot be read. */
int rr_proc_own_children(pid_t self, pid_t *out, int max);

/* Read /proc/PID/stat into st: 0, or -1 if the process is gone (or the
 * text is not one). */
int rr_proc_read_stat(pid_t pid, struct rr_proc_stat *st);

/* The command name of pid (/proc/PID/comm, without the newline) into buf;
 * "?" if it cannot be read. */
void rr_proc_comm(pid_t pid, char *buf, size_t len);

#endif
