/* guard.h — the lease's enforcer: a small process that stops the command
 * at the end of the lease by itself, whatever becomes of redlock-run.
 *
 * The event loop renews the lock; the guard makes sure that the command
 * never outlives the lease the loop could vouch for. It holds the lease's
 * absolute deadline on CLOCK_MONOTONIC in memory it shares with us; the
 * loop moves that deadline forward only after a confirmed renewal. The
 * guard, on its own clock and with every signal blocked:
 *
 *   - at deadline - grace sends SIGTERM (and SIGCONT) to the command's group;
 *   - at deadline sends SIGKILL to the group and to every other child of
 *     redlock-run (orphaned descendants, which it adopts as subreaper),
 *     and keeps doing so until redlock-run tells it to stand down;
 *   - if redlock-run dies (the pipe closes without the stand-down byte),
 *     it kills the group at once, and every descendant of ours it knows.
 *
 * It knows them because, while we live, it walks our process tree
 * (/proc/PID/task/TID/children, from us down) every GUARD_SCAN_MS (unless
 * no process was created since the last walk) and holds a pidfd for each
 * process it finds (or its pid and start time where pidfd_open(2) is
 * missing). Once we are dead, a process that left the
 * command's group (setsid) is re-parented to init and no walk from us finds
 * it any more; the guard still has it. It also signals the whole set at the
 * TERM and at the deadline. At most RR_PROC_MAX (proc.h) processes are held;
 * the walk itself is proc.c's.
 *
 * So a stopped (SIGSTOP, SIGTSTP), blocked (a full stderr pipe, a stalled
 * syslog) or slow wrapper can never extend the command's life past its
 * lease. The guard is started before the command is spawned, so it also
 * covers a slow exec: the spawned process records its pid in the shared
 * block before it execs.
 */
#ifndef RR_GUARD_H
#define RR_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rr_guard;

/* Start the guard for a command that will run in its own process group
 * (or in ours with foreground), with the lease ending at deadline_ms
 * (rr_now_ms clock) and the TERM coming grace_ms before it. Returns NULL
 * if no guard could be started (out of memory, no process): the caller
 * must then not run the command. */
struct rr_guard *rr_guard_start(bool foreground, int64_t deadline_ms, int64_t grace_ms);

/* Called in the spawned process (after vfork, before exec): records its pid
 * so that the guard can stop it even while exec is slow. Only system calls. */
void rr_guard_set_child(struct rr_guard *g, pid_t pid);

/* The command's leader was reaped: from now on its pid may belong to
 * someone else, so the guard signals only its process group. */
void rr_guard_leader_reaped(struct rr_guard *g);

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

/* The guard's own pid (it is one of our children: never a straggler). */
pid_t rr_guard_pid(const struct rr_guard *g);

/* Tell the guard to stand down, reap it and free everything. After the
 * command and every straggler were reaped. NULL is fine. */
void rr_guard_stop(struct rr_guard *g);

/* How often the guard walks our tree while we live. It holds at most
 * RR_PROC_MAX (proc.h) processes of it: beyond that a new one is not held,
 * and rr_guard_tree_full says so. */
#define GUARD_SCAN_MS 25

/* Has the guard found more processes in our tree than it can hold? */
bool rr_guard_tree_full(const struct rr_guard *g);

/* The run's REDLOCK_NAME= and REDLOCK_FENCE= entries of envp, for the
 * guard: once we are dead, a process created since its last walk that has
 * both in its environment is ours even if nothing leads to it any more
 * (see guard.c). Call before the command is spawned. */
void rr_guard_set_marks(struct rr_guard *g, char *const envp[]);

#endif
