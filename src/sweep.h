/* sweep.h — stopping, in redlock-run itself, what is left of the command
 * once the guard died.
 *
 * The guard (guard.h) is the command's parent and subreaper and stops what
 * the command leaves; this is for the one case where it cannot: it died.
 * Then the command got SIGKILL (PR_SET_PDEATHSIG) and what the command
 * started was re-parented to us, the next subreaper up: our children other
 * than the guard, their process groups, the command's own group and its
 * cgroup (if any) are what is left. They get SIGKILL (or SIGTERM and
 * SIGCONT, SIGKILL after the grace) and are reaped before the lock is
 * released. If some survive SIGKILL (another user's, or stuck in the
 * kernel), the sweep says so once and goes on looking: the lock is kept,
 * renewed, until they are gone.
 *
 * No timer of its own: the caller (child.c) looks again when told to, or
 * sooner (on SIGCHLD). */
#ifndef RR_SWEEP_H
#define RR_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One sweep; set by rr_sweep_begin, then the sweep's own. */
struct rr_cgroup;

struct rr_sweep {
    const struct rr_cgroup *cgroup;   /* NULL: none; else it must be empty too */
    pid_t pgid;        /* the command's group, 0 if it has none (foreground) */
    pid_t skip;        /* our child that is no straggler: the guard */
    bool killed;       /* SIGKILL was sent (and is sent again on every look) */
    bool said_stuck;   /* said that some survive SIGKILL */
    int64_t until;     /* rr_now_ms: KILL at, then give up waiting at */
};

/* The command's leader was reaped: reap what it left that is gone, and if
 * anything is left, say so and send it SIGTERM and SIGCONT (SIGKILL right
 * away when kill_now: the command was being stopped). pgid is the command's
 * process group (0 in foreground), skip the guard's pid, grace_ms the time
 * from TERM to KILL, cgroup the command's (NULL: none). Returns 0 if nothing is left (the usual case), else
 * the milliseconds until rr_sweep_look should be called. */
int64_t rr_sweep_begin(struct rr_sweep *s, pid_t pgid, pid_t skip, int64_t grace_ms,
                       bool kill_now, const struct rr_cgroup *cgroup);

/* Look again: reap what is gone, escalate to SIGKILL once the grace is
 * over. Returns 0 once nothing is left, else the milliseconds until the
 * next look. */
int64_t rr_sweep_look(struct rr_sweep *s);

#endif
