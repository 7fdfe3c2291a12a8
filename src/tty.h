/* tty.h — the terminal goes with the command, as a shell's job would; and
 * whether a stop can be undone at all.
 *
 * Without --foreground the command runs in a process group of its own (so
 * that it can be stopped as a whole). A group that is not the terminal's
 * foreground group is stopped by SIGTTIN when it reads the terminal; so when
 * redlock-run itself is in the foreground, the command's group is made the
 * foreground for as long as it runs, and redlock-run takes the terminal back
 * when it ends or is stopped (Ctrl-Z). SIGTTOU is ignored by redlock-run, so
 * handing the terminal over and back never stops us. Only ioctls: the
 * give/take functions are safe in the command's spawned process.
 *
 * A job stops as a whole (the command, then redlock-run) only where a shell
 * can continue it: under cron, CI or a service manager there is no terminal,
 * and nobody would ever `fg` a stopped redlock-run. */
#ifndef RR_TTY_H
#define RR_TTY_H

#include <stdbool.h>
#include <sys/types.h>

/* Is stdin a terminal whose foreground group is ours? */
bool rr_tty_ours(void);

/* Make pgid the terminal's foreground group (stdin). */
void rr_tty_give(pid_t pgid);

/* Take the terminal back for our own group if pgid has it. */
void rr_tty_take(pid_t pgid);

/* One process on the way up from us: its group and session. */
struct rr_tty_proc {
    pid_t pgid, sid;
};

/* How far up rr_tty_facts looks for the shell that runs us as a job. */
#define RR_TTY_CHAIN 16

/* What decides whether a stop of ours can be undone (rr_tty_job_control). */
struct rr_tty_facts {
    bool terminal;          /* we have a controlling terminal (/dev/tty opens) */
    pid_t tty_sid;          /* the session it belongs to (tcgetsid), -1 unknown */
    int n;                  /* chain[0] is us, chain[i + 1] the parent of chain[i] */
    struct rr_tty_proc chain[RR_TTY_CHAIN];
};

/* Is our process group a job that a shell can continue? That is, not an
 * orphaned group (POSIX): going up from us through our group, the first
 * process outside it is in our session, a job-control shell whose child
 * stopping it sees. A group led from another session (setsid, a pty of a
 * program, a container's first process) is orphaned: the kernel itself
 * discards a terminal's stop signals to it. False if unknown. Pure. */
bool rr_tty_in_job(const struct rr_tty_proc *chain, int n);

/* Can job control continue us after a stop: a controlling terminal, of our
 * session, and our group a job of it (rr_tty_in_job). Pure. */
bool rr_tty_job_control(const struct rr_tty_facts *f);

/* The facts now: opens /dev/tty, and walks up our ancestors while they are
 * in our group (parent_of(pid) gives a process's parent, or -1 if it is
 * gone; our own parent is getppid()). */
void rr_tty_facts(struct rr_tty_facts *f, pid_t (*parent_of)(pid_t pid));

#endif
