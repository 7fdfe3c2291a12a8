/* cgroup.h — a cgroup v2 of the command's own: containment the kernel keeps.
 *
 * Where a cgroup v2 child can be made next to ours (root on a host whose
 * cgroup2 is writable, a systemd unit with Delegate=yes, a user session's
 * delegated subtree), the command runs in a fresh one: every process it
 * starts stays in it whatever it does (setsid, double fork, env -i), and
 * cgroup.kill stops them all at once, racing forks included; cgroup.events
 * says when the last one is gone. NULL (no cgroup) means tree mode: the
 * guard is the subreaper of everything the command starts (guard.h).
 *
 * Life of one: R (the main process) calls rr_cgroup_create before the guard
 * is forked; it opens the directory and the files every run needs
 * (cgroup.kill, cgroup.events). The fds are O_CLOEXEC: the forked guard has
 * its own copies (and keeps them when R dies); the command's exec closes
 * them. The files most runs never write (cgroup.procs, cgroup.freeze) are
 * opened at the directory's fd when written. R calls rr_cgroup_remove
 * after the command was reaped and populated is 0, then rr_cgroup_free;
 * the guard removes it when R dies first. */
#ifndef RR_CGROUP_H
#define RR_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

struct rr_cgroup; /* opaque; NULL means tree mode */

/* --- small writes and reads on the fds opened in advance --- */

/* Move the calling process (the whole thread group) into the cgroup:
 * write "0" to its cgroup.procs (opened, written, closed). 0 or -errno (-EBUSY: the target has
 * controllers enabled in its subtree, -ENOENT/-ENODEV: it was removed). */
int rr_cgroup_enter_self(const struct rr_cgroup *cg);

/* Kill every process in the cgroup (SIGKILL, forks racing it included):
 * write "1" to cgroup.kill. 0 or -errno. Killing an empty cgroup is 0. */
int rr_cgroup_kill(const struct rr_cgroup *cg);

/* Whether some process is still in the cgroup: 1, 0, or -errno. Reads
 * cgroup.events with pread at offset 0 (the fd's offset is not moved, so
 * the guard and R may both call it). */
int rr_cgroup_populated(const struct rr_cgroup *cg);

/* The fd of cgroup.events, to poll for POLLPRI (the kernel raises it, and
 * POLLERR, when "populated" or "frozen" changes); read it again with
 * rr_cgroup_populated after each wake. Owned by cg: never close it. */
int rr_cgroup_events_fd(const struct rr_cgroup *cg);

/* The fd of the cgroup's own directory, for clone3's CLONE_INTO_CGROUP
 * (clone3.h). Owned by cg: never close it. */
int rr_cgroup_dir_fd(const struct rr_cgroup *cg);

/* Freeze (on != 0) or thaw (on == 0) every process of the cgroup: write
 * "1"/"0" to cgroup.freeze (opened, written, closed). 0 or -errno (-ENOENT: no cgroup.freeze, a
 * kernel before 5.2). Does not wait for "frozen 1" in cgroup.events.
 * R freezes it while job control stops the job (child.c); the guard thaws
 * it whenever it sends the command SIGTERM or SIGKILL. */
int rr_cgroup_freeze(const struct rr_cgroup *cg, int on);

/* The fds cg holds open (its parent's directory, its own, cgroup.kill and
 * cgroup.events),
 * into fds (at most max); returns how many. 0 for NULL. The guard keeps
 * exactly these when it closes everything else: by number, not by what
 * /proc says they are. */
int rr_cgroup_fds(const struct rr_cgroup *cg, int *fds, int max);

/* Remove the cgroup's directory (rmdir by the fd of its parent and its
 * name). 0, -EBUSY while populated (or a process is still leaving it),
 * -ENOENT if already removed, or another -errno. */
int rr_cgroup_remove(const struct rr_cgroup *cg);

/* --- normal libc: R only, before the guard starts / after it ends ------- */

/* Create the command's cgroup: find our own cgroup (/proc/self/cgroup)
 * under the cgroup2 mount (statfs of /sys/fs/cgroup and
 * /sys/fs/cgroup/unified, else /proc/self/mountinfo), check that a child
 * can hold processes next to us (cgroup.kill exists: kernel 5.14; our own
 * cgroup enables no controllers in cgroup.subtree_control, the "no
 * internal processes" rule), mkdir redlock-run.<pid>.<lock name> under it
 * (if the kernel says there are too many, again after removing the empty
 * cgroups that dead runs of any job left), and open its files. 0 and *out
 * set (free with rr_cgroup_free), or -errno with a one-line reason in err
 * and *out NULL. Calls nothing that needs the guard. */
int rr_cgroup_create(struct rr_cgroup **out, const char *lockname, char *err, size_t errlen);

/* Kill what dead runs of the same job left in their cgroups beside ours
 * (a name "redlock-run.PID.JOB" with our JOB, no process PID, populated,
 * and the flock that the run's redlock-run, guard and successor share on
 * its directory free, whatever pid namespace the run lives in):
 * their redlock-run and their guard both died (kill -9 of both, the OOM
 * killer), so nothing of theirs can stop it, and it runs on past their
 * lease. cgroup.kill to each, then up to wait_ms for them to empty, and
 * rmdir. The name of the first goes into first (may be NULL). Returns how
 * many were killed. Only the guard calls it: it is the one that kills.
 * It also removes the empty cgroups that dead runs of the job left, made
 * over a minute ago (a run killed with its guard, maybe while it waited).
 * Other jobs' cgroups cost a strcmp each: a run's work here grows with the
 * runs of its own job on this host, not with everyone's. */
int rr_cgroup_kill_dead(const struct rr_cgroup *cg, int wait_ms, char *first, size_t firstlen);

/* The cgroup's absolute path (e.g. /sys/fs/cgroup/unified/system.slice/
 * cron.service/redlock-run.42.backup); owned by cg. */
const char *rr_cgroup_path(const struct rr_cgroup *cg);

/* Close the fds and free cg; does not rmdir (rr_cgroup_remove does).
 * NULL is fine. Only R calls it, once the guard has ended (or in a forked
 * guard, never: its copies close with it). */
void rr_cgroup_free(struct rr_cgroup *cg);

/* --- pure parsing, unit-tested (tests/check_cgroup.c) ------------------- */

/* The mount point of the cgroup2 filesystem in the text of
 * /proc/self/mountinfo, copied into out (NUL-terminated). Prefers a mount
 * whose root is "/". 0, -ENOENT if none, -ENAMETOOLONG if out is short. */
int rr_cgroup_find_mount(const char *mountinfo, char *out, size_t outlen);

/* Our own cgroup v2 path (the "0::" line of /proc/self/cgroup, e.g.
 * "/system.slice/cron.service") into out. 0, -ENOENT if no 0:: line,
 * -ENAMETOOLONG if out is short. */
int rr_cgroup_own_path(const char *proc_cgroup, char *out, size_t outlen);

/* Our own cgroup's directory from both texts: the cgroup2 mount point and
 * our path, less the mount's root when it mounts a subtree (a container's
 * "/docker/ID"). E.g. "/sys/fs/cgroup/unified" for "0::/" on a hybrid host.
 * 0, -ENOENT (no cgroup2, no 0:: line, or our cgroup is outside the
 * mount), -EINVAL, -ENAMETOOLONG. */
int rr_cgroup_locate(const char *mountinfo, const char *proc_cgroup, char *out, size_t outlen);

/* The child's name: "redlock-run.<pid>.<lock name>" with every byte of the
 * lock name that is not [A-Za-z0-9_.-] turned into '_', a leading '.'
 * impossible, and the whole cut to fit outlen (at most 255 bytes, a
 * directory name's limit). Returns the length written. */
size_t rr_cgroup_child_name(char *out, size_t outlen, long pid, const char *lockname);

/* The pid in a child's name made by rr_cgroup_child_name
 * ("redlock-run.<pid>.<anything>"), or -1 if name is not one of ours. */
long rr_cgroup_name_pid(const char *name);

/* Whether a cgroup.subtree_control text enables any controller (it is then
 * an inner node: no process may live in it beside its children). */
bool rr_cgroup_controllers_enabled(const char *subtree_control);

#endif
