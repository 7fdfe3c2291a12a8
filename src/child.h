/* child.h — the wrapped command: spawn, signal, stop, hear of its end.
 *
 * The command is the guard's child (guard.h): redlock-run → guard →
 * command. The guard is forked early (rr_child_prepare, before the loop
 * has a thread or a connection) and spawns the command when asked; it runs
 * in its own process group (unless foreground), with
 * PR_SET_PDEATHSIG=SIGKILL so it dies if the guard dies, even by SIGKILL;
 * signal dispositions and the signal mask are reset before exec. The guard
 * is the only process that signals the command: everything here asks it.
 * It reaps the command, stops what it left, and reports each step
 * (stopped, reaped, all gone) over a pipe watched here; the exit is
 * reported once everything is gone. If the guard dies first, its report
 * pipe says EOF in our loop: a successor guard kills what is left, we reap
 * it (we are a subreaper), and the exit is reported with
 * rr_child_guard_died set if the command had not ended yet.
 */
#ifndef RR_CHILD_H
#define RR_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

struct rr_child;

/* Called once when the child has been reaped and what it left behind is
 * gone too; wstatus is waitpid()'s for the command. */
typedef void (*rr_child_exit_fn)(struct rr_child *ch, int wstatus, void *arg);

/* Called each time the command (the group's leader) is stopped, with the
 * signal that stopped it; the terminal, if it had it, is ours again. What
 * to do (stop with it, continue it, nothing) is the caller's decision. */
typedef void (*rr_child_stop_fn)(struct rr_child *ch, int sig, void *arg);

struct rr_cgroup;
struct rr_leftover;

struct rr_child_opts {
    bool foreground;          /* stay in our process group */
    int64_t deadline_ms;      /* the lease's end (rr_now_ms clock), RR_INF for none */
    int64_t grace_ms;         /* TERM this long before the end; stragglers' grace */
    rr_child_stop_fn stop_cb; /* NULL: a stopped command is left as it is */
    /* The command's cgroup (cgroup.h), entered before exec; NULL: tree mode.
     * Not ours: it must outlive the child until exit_cb (nothing of the
     * command is left in it then; the guard is gone); the caller removes
     * and frees it (run.c: uncontain). */
    const struct rr_cgroup *cgroup;
    /* Tree mode's mark of the run (leftover.h), or NULL; the caller's too. */
    const struct rr_leftover *leftover;
};

/* The spawn's result when the lease had less than the grace left at the
 * moment of exec: the command was not started. */
#define RR_SPAWN_LATE (-2)

/* Fork the guard now (guard.h), for a command to be spawned later with
 * rr_child_start: o->foreground and o->cgroup count; the rest is read at
 * the spawn. 0, or -1 with err filled (nothing is left behind). Free with
 * rr_child_free if nothing is spawned. */
int rr_child_prepare(struct rr_child **out, const struct rr_child_opts *o, char *err,
                     size_t errlen);

/* Called once the spawn's outcome is known: rc 0, the command has exec'd
 * (ch is it: exit_cb comes later); else rc is -127 (not found), -126 (not
 * executable), RR_SPAWN_LATE, or -1 (the guard, fork, the cgroup, a
 * watcher), err says why, ch is NULL: the child and its guard were freed
 * and exit_cb is never called. */
typedef void (*rr_child_started_fn)(struct rr_child *ch, int rc, const char *err, void *arg);

/* Ask for argv[0] (searched in PATH like execvp) to be spawned with envp as
 * its environment, through the guard of *out if rr_child_prepare made one,
 * else a new one, and return at once: the loop goes on (and renews the
 * lease: rr_child_set_deadline moves the end that the command's own check
 * reads right before its exec) until started_cb says how it went. argv
 * must live until then. Meanwhile the child is starting:
 * rr_child_signal, _stop and _kill_now reach the command (the guard takes
 * requests in order), _pause and _resume do nothing. 0: asked, *out is
 * the child. Else as started_cb's rc, with err filled, *out NULL and
 * nothing left behind (started_cb is not called). */
int rr_child_start(uv_loop_t *loop, struct rr_child **out, char *const argv[],
                   char *const envp[], const struct rr_child_opts *o,
                   rr_child_exit_fn exit_cb, rr_child_started_fn started_cb, void *arg,
                   char *err, size_t errlen);

/* Have the guard send sig to the child's process group (to the child alone
 * in foreground mode). Returns 0 or -errno. Does nothing once the child
 * was reaped. */
int rr_child_signal(struct rr_child *ch, int sig);

/* Stop the child: SIGTERM (and SIGCONT) now, SIGKILL after grace_ms if it
 * has not been reaped by then; RR_INF: no KILL. Calling it again never puts
 * an earlier KILL off: the sooner of the two deadlines wins. */
void rr_child_stop(struct rr_child *ch, int64_t grace_ms);

/* The job stops as a whole (job control, we stop next): SIGSTOP to the
 * command's group (to it alone in foreground mode) and, in cgroup mode,
 * its whole cgroup frozen (cgroup.freeze), so that what it started outside
 * its group (setsid) stops too. Nothing once it was reaped. */
void rr_child_pause(struct rr_child *ch);

/* Continue the command after we were continued: its cgroup thawed, the
 * terminal given back first if we are in the foreground (tty.h), then
 * SIGCONT. rr_child_stop and rr_child_kill_now thaw it too: a frozen
 * cgroup never outlasts the run, nor holds a SIGTERM back. */
void rr_child_resume(struct rr_child *ch);

/* A certain loss: SIGKILL to the group and every straggler, now. */
void rr_child_kill_now(struct rr_child *ch);

/* A confirmed renewal moved the lease's end (see guard.h). */
void rr_child_set_deadline(struct rr_child *ch, int64_t deadline_ms);

/* Did the guard have to stop the command because the lease ran out? */
bool rr_child_lease_ran_out(const struct rr_child *ch);

/* The guard's pid if it died before the command ended (the lease could no
 * longer be enforced, and the command was killed), else 0. Valid in
 * exit_cb. A guard that dies after the command ended is only logged: the
 * command's own status stands. */
pid_t rr_child_guard_died(const struct rr_child *ch);

/* The command's pid (and its group's id, unless foreground); -1 for NULL. */
pid_t rr_child_pid(const struct rr_child *ch);

/* Close the child's handles and free it (after exit_cb, or at shutdown). */
void rr_child_free(struct rr_child *ch);

/* Map a waitpid() status to a shell-style exit code: the exit status, or
 * 128+N for death by signal N. Pure. */
int rr_child_exit_code(int wstatus);

#endif
