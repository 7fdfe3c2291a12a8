/* guard.h — the command's parent and the only process that stops it: a
 * small process that starts the command, is the subreaper of everything
 * the command starts, and stops all of it at the end of the lease,
 * whatever becomes of redlock-run.
 *
 * The processes: redlock-run (R) → the guard (G) → the command (C). G is an
 * ordinary fork of R, made at the top of a run (rr_guard_start: before the
 * event loop has a thread or a connection), named `redlock-guard` in ps,
 * in a process group of its own, so that neither `pkill redlock-run`,
 * `killall redlock-run`, `pkill -f 'redlock-run.*NAME'` nor `kill -9
 * -PGID` of R's group reaches it. It waits for R's word and spawns C when
 * R has the lock (rr_guard_spawn_send): C's own process group (unless
 * foreground: then R's), PR_SET_PDEATHSIG=SIGKILL against G, the terminal
 * if R has it, the cgroup if there is one (cgroup.h), signals reset, the
 * lease checked right before exec (exec.h). Whatever C starts and leaves
 * (`cmd &`, setsid, a double fork, env -i) is re-parented to G, never to
 * init: G's children are exactly C and those orphans.
 *
 * G is the only process that signals C and what C started. R asks it
 * (rr_guard_signal, rr_guard_stop_child, rr_guard_kill_now) over a pipe,
 * and G sleeps in ppoll on that pipe, a signalfd for SIGCHLD and the
 * lease's deadline, which lives in a page shared with R (R moves it
 * forward only after a confirmed renewal):
 *
 *   - at deadline - grace: SIGTERM and SIGCONT to C's group (C alone in
 *     foreground) and to each of G's children and its group;
 *   - at deadline: SIGKILL to all of that (and cgroup.kill), again until
 *     nothing is left;
 *   - C stops, continues, exits: G reaps it and reports it to R over a
 *     second pipe (rr_guard_read_report). What C left gets TERM+CONT, KILL
 *     after the grace (at once if R was stopping it), and is reaped until
 *     none is left (and the cgroup is empty): then G reports GONE, and
 *     only then does R release the lock;
 *   - R dies (its pipe closes): G kills everything it has until nothing is
 *     left, removes the cgroup, exits.
 *
 * If G dies, C gets SIGKILL (PDEATHSIG) and what C started goes to R, a
 * subreaper too. R sees the report pipe's EOF in its loop and starts a
 * successor (rr_guard_start_successor), a guard whose only work is to kill
 * what is left of the command: C's group, the cgroup, and R's children
 * other than itself (R reaps them). */
#ifndef RR_GUARD_H
#define RR_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_guard;
struct rr_cgroup;
struct rr_leftover;

struct rr_guard_opts {
    bool foreground;          /* C stays in R's process group */
    const struct rr_cgroup *cgroup;   /* NULL: tree mode; its fds must be open */
    const struct rr_leftover *leftover;   /* tree mode's mark of the run, or NULL */
};

/* Fork the guard. Call it before the loop has a thread (libuv's pool) or a
 * connection: the guard keeps only its own descriptors and those C is to
 * inherit. NULL with errno if no guard could be started: then nothing must
 * be spawned. */
struct rr_guard *rr_guard_start(const struct rr_guard_opts *o);

/* What the command is and how long its lease runs. */
struct rr_guard_spawn {
    char *const *argv;        /* argv[0] is searched in PATH like execvp */
    char *const *envp;
    bool tty;                 /* C's group takes the terminal */
    int64_t deadline_ms;      /* the lease's end, rr_now_ms clock */
    int64_t grace_ms;         /* TERM this long before it; stragglers' grace */
};

/* Have the guard spawn the command, and learn later whether it has
 * exec'd: the caller's loop goes on meanwhile (and renews the lease: the
 * deadline C's check reads is the page's, moved by rr_guard_set_deadline).
 * _send asks for the spawn: 0 with *fd the read end of the exec pipe
 * (non-blocking) to watch; else as _outcome. _outcome once *fd is
 * readable: 1 not yet; 0 it exec'd; -127 the command was not found, -126
 * it could not be executed, RR_SPAWN_LATE (-2) the lease had less than
 * the grace left at the moment of exec, -1 anything else (the guard died,
 * it could not fork, the cgroup), err then saying why. fd stays the
 * caller's to close, once it no longer polls it. */
int rr_guard_spawn_send(struct rr_guard *g, const struct rr_guard_spawn *s, int *fd, char *err,
                        size_t errlen);
int rr_guard_spawn_outcome(struct rr_guard *g, int fd, const char *name, char *err,
                           size_t errlen);

/* C's pid once it was spawned, else 0. */
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

/* Ask the guard to send sig to C's group (C alone in foreground); nothing
 * once C was reaped. 0, or -EPIPE if the guard is gone. */
int rr_guard_signal(struct rr_guard *g, int sig);

/* Ask the guard to stop C: SIGTERM now (then the cgroup thawed, and
 * SIGCONT), SIGKILL to its group after grace_ms if it has not been reaped
 * by then (RR_INF: never); the sooner of two such deadlines wins. What C
 * leaves gets SIGKILL at once. */
void rr_guard_stop_child(struct rr_guard *g, int64_t grace_ms);

/* A certain loss: SIGKILL to everything now (the lease is over). */
void rr_guard_kill_now(struct rr_guard *g);

/* R is stopping the command: what it leaves gets SIGKILL at once. */
void rr_guard_hurry(struct rr_guard *g);

/* Move the lease's end. Later: the guard sees it when it next wakes up.
 * Earlier: the guard is woken and acts at once. Once the guard has killed,
 * nothing revives the lease. */
void rr_guard_set_deadline(struct rr_guard *g, int64_t deadline_ms);

/* Has the guard sent SIGTERM / SIGKILL because the lease ran out? */
bool rr_guard_termed(const struct rr_guard *g);
bool rr_guard_fired(const struct rr_guard *g);

/* The guard's own pid. */
pid_t rr_guard_pid(const struct rr_guard *g);

/* Tell the guard to stand down (it kills and reaps whatever it still has,
 * then exits), without waiting for it. Then rr_guard_stop. NULL is fine. */
void rr_guard_stand_down(struct rr_guard *g);

/* Stand it down and free everything without waiting for its exit: for a
 * guard that has nothing left to kill (it reported GONE, or spawned
 * nothing). NULL is fine. */
void rr_guard_let_go(struct rr_guard *g);

/* Stand it down if not yet, reap it and free everything. NULL is fine. */
void rr_guard_stop(struct rr_guard *g);

/* The guard died: reap it (its report pipe said EOF) and free everything;
 * returns how it ended (a wait status). NULL: 0. */
int rr_guard_reap_dead(struct rr_guard *g);

/* After a guard's death: fork a successor that kills what is left of the
 * command — C's group (pgid, 0: none; once C was reaped, only if no
 * process has that pid again), the cgroup, every child of ours but itself
 * and their groups — every 10 ms (then every 250) until nothing of it is
 * left, then exits. The caller reaps what dies (it is their parent, a
 * subreaper) and then the successor. Its pid, or -1 with errno. */
pid_t rr_guard_start_successor(pid_t pgid, bool reaped, const struct rr_cgroup *cgroup);

/* The guard's clock, as a pure function (unit-tested): what to do at now
 * for a lease ending at deadline with the TERM grace before it, given what
 * was done; *wait_ms: until the next thing to do (at most 60 s). */
enum rr_guard_act { RR_GUARD_WAIT, RR_GUARD_TERM, RR_GUARD_KILL };
enum rr_guard_act rr_guard_clock(int64_t now, int64_t deadline, int64_t grace, bool termed,
                                 bool fired, int64_t *wait_ms);

#endif
