/* tty.h — the terminal goes with the command, as a shell's job would.
 *
 * Without --foreground the command runs in a process group of its own (so
 * that it can be stopped as a whole). A group that is not the terminal's
 * foreground group is stopped by SIGTTIN when it reads the terminal; so when
 * redlock-run itself is in the foreground, the command's group is made the
 * foreground for as long as it runs, and redlock-run takes the terminal back
 * when it ends or is stopped (Ctrl-Z). SIGTTOU is ignored by redlock-run, so
 * handing the terminal over and back never stops us. Only ioctls: the
 * functions are safe in the vfork child. */
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

#endif
