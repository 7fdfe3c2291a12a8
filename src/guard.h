/* guard.h — the command's parent and the lease's enforcer: a small process
 * that starts the command, is the subreaper of everything it starts, and
 * stops all of it at the end of the lease, whatever becomes of redlock-run.
 *
 * The processes: redlock-run (R) → the guard (G) → the command (C). R is a
 * subreaper too. G is started by R (clone(CLONE_VM), or fork where that
 * cannot be followed: valgrind, ASan) on an exec plan R built (exec.h), and
 * spawns C at once: C's own process group (unless foreground: then R's),
 * PR_SET_PDEATHSIG=SIGKILL against G, the terminal if R has it, the cgroup
 * if there is one (cgroup.h), signals reset, the lease checked right before
 * exec. Whatever C starts and leaves (`cmd &`, setsid, a double fork, env -i)
 * is re-parented to G, never to init: G's children are exactly C and those
 * orphans, so G needs no search of /proc while it waits.
 *
 * G sleeps in ppoll on R's pipe, a signalfd for SIGCHLD (it blocks every
 * signal) and the lease's deadline, which lives in memory it shares with R
 * (R moves it forward only after a confirmed renewal):
 *
 *   - at deadline - grace: SIGTERM and SIGCONT to C's group (C alone in
 *     foreground) and to each of G's children and its group;
 *   - at deadline: SIGKILL to all of that (and cgroup.kill), again until
 *     nothing is left;
 *   - C stops, continues, exits: G reaps it (wait4 WUNTRACED|WCONTINUED)
 *     and reports it to R over a pipe (rr_guard_read_report). Once C is
 *     reaped, what it left among G's children (only then is
 *     /proc/G/task/G/children read) gets TERM+CONT, KILL after the grace
 *     (at once if R was stopping it), and is reaped until none is left
 *     (and the cgroup is empty): then G reports GONE, and only then does R
 *     release the lock. Some that survive SIGKILL are reported (STUCK) and
 *     keep the lock;
 *   - R dies (its pipe closes): G kills everything it has until nothing is
 *     left, removes the cgroup, exits.
 *
 * If G dies, C gets SIGKILL (PDEATHSIG) and what C started goes to R: R's
 * SIGCHLD handler sees it at once (child.c) and kills C's group and the
 * cgroup, and R's loop then stops and reaps the rest and records a loss.
 */
#ifndef RR_GUARD_H
#define RR_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_guard;
struct rr_cgroup;
struct rr_exec_plan;

struct rr_guard_opts {
    const struct rr_exec_plan *plan;  /* the command; must live until it exec'd */
    bool foreground;          /* C stays in our process group */
    bool tty;                 /* C's group takes the terminal */
    int64_t deadline_ms;      /* the lease's end, rr_now_ms clock */
    int64_t grace_ms;         /* TERM this long before it; stragglers' grace */
    const struct rr_cgroup *cgroup;   /* NULL: tree mode */
    int errfd;                /* the exec-status pipe's write end (exec.h) */
};

/* Start the guard, which spawns the command. Returns NULL if no guard could
 * be started (out of memory, no process): then nothing was spawned. The
 * outcome of the exec comes on opts->errfd's pipe (whose write end the
 * caller closes right after this call); then rr_guard_child says C's pid. */
struct rr_guard *rr_guard_start(const struct rr_guard_opts *o);

/* C's pid once it was spawned (it records it itself before exec), else 0. */
pid_t rr_guard_child(const struct rr_guard *g);

/* What the guard reports (rr_guard_read_report). */
enum rr_guard_report_kind {
    RR_GUARD_STOPPED = 1,     /* value: the signal that stopped C */
    RR_GUARD_CONTINUED,       /* C was continued */
    RR_GUARD_REAPED,          /* value: C's wait status; its pid is free now */
    RR_GUARD_LEFT,            /* n, pids: C left these running; being stopped */
    RR_GUARD_STUCK,           /* n, pids: these survive SIGKILL; the lock stays */
    RR_GUARD_GONE,            /* C and everything it started are gone */
};
#define RR_GUARD_REPORT_PIDS 8
struct rr_guard_report {
    int kind;
    int value;
    int n;
    int pids[RR_GUARD_REPORT_PIDS];
};

/* The fd to poll for reports (readable; EOF when the guard is gone). */
int rr_guard_report_fd(const struct rr_guard *g);

/* One report: 1 (in *r), 0 if none is there now, -1 at EOF (the guard
 * died, or stood down) or on error. */
int rr_guard_read_report(struct rr_guard *g, struct rr_guard_report *r);

/* R is stopping the command: what it leaves gets SIGKILL at once. */
void rr_guard_hurry(struct rr_guard *g);

/* Does the lease leave at least the grace before its end right now? Async-
 * signal-safe: the spawned process asks it just before exec. */
bool rr_guard_lease_ok(const struct rr_guard *g);

/* Move the lease's end. Later: the guard sees it when it next wakes up.
 * Earlier (a certain loss: pass rr_now_ms() or less): the guard is woken
 * and acts at once. Once the guard has killed, nothing revives the lease. */
void rr_guard_set_deadline(struct rr_guard *g, int64_t deadline_ms);

/* Has the guard sent SIGTERM / SIGKILL because the lease ran out? */
bool rr_guard_termed(const struct rr_guard *g);
bool rr_guard_fired(const struct rr_guard *g);

/* The guard's own pid (one of our children: never a straggler). */
pid_t rr_guard_pid(const struct rr_guard *g);

/* Has the guard exited (or been killed)? For a SIGCHLD handler: waitid
 * with WNOWAIT, so the zombie stays for rr_guard_stop. Async-signal-safe.
 * False once rr_guard_stop began: then its exit is ours. */
bool rr_guard_dead(const struct rr_guard *g);

/* Tell the guard to stand down (it kills and reaps whatever it still has,
 * then exits), without waiting for it: its exit is expected from now on
 * (rr_guard_dead is false). Then rr_guard_stop. NULL is fine. */
void rr_guard_stand_down(struct rr_guard *g);

/* Stand it down if not yet, reap it and free everything. NULL is fine. */
void rr_guard_stop(struct rr_guard *g);

/* The guard's clock, as a pure function (unit-tested): what to do at now
 * for a lease ending at deadline with the TERM grace before it, given what
 * was done; *wait_ms: until the next thing to do (at most 60 s). */
enum rr_guard_act { RR_GUARD_WAIT, RR_GUARD_TERM, RR_GUARD_KILL };
enum rr_guard_act rr_guard_clock(int64_t now, int64_t deadline, int64_t grace, bool termed,
                                 bool fired, int64_t *wait_ms);

#endif
