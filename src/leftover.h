/* leftover.h — tree mode's mark of a run, for the case where its
 * redlock-run (R) and its guard (G) both die.
 *
 * In cgroup mode the next run of the job on this host finds a dead run's
 * populated cgroup and kills it (rr_cgroup_kill_dead). In tree mode there
 * is no cgroup: the command (C) dies with G (PDEATHSIG), but what C started
 * is re-parented to init and runs on past the lease. This is the tree
 * mode's equivalent: a small file per run, "redlock-run.PID.JOB" (the
 * cgroup's name rule, rr_cgroup_child_name) in a directory of the user's
 * own, holding C's process group and C's start time; R creates it before G
 * is forked and holds a shared flock on it, which G shares (one open file
 * description); the next run's guard, at its start, takes each same-job
 * file whose flock is free (R and G both gone), sends SIGKILL to the
 * recorded process group (unless its pid is now another process's: the
 * start time tells), waits for the group to go, and removes the file.
 *
 * What left C's process group (setsid, setpgid) is not found this way:
 * only a cgroup holds that (docs/ARCHITECTURE.md, "Containment").
 *
 * The directory: /run/redlock-run for root (/tmp/redlock-run-0 where /run
 * cannot have it), /tmp/redlock-run-UID for any other user (the same
 * wherever the job is started from: cron has no $XDG_RUNTIME_DIR); made
 * 0700 if missing, and used only if it is a directory (no symlink) owned by
 * us with no access for others: a directory someone else made first only
 * turns the mark off (-vv says so), it never stalls or misleads a run. */
#ifndef RR_LEFTOVER_H
#define RR_LEFTOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct rr_leftover; /* opaque; NULL: no mark (cgroup mode, or none could be made) */

/* --- R, before the guard's fork / at the end of the run --- */

/* Make this run's mark for lockname. 0 and *out set, or -errno with a
 * one-line reason in why and *out NULL (the run goes on without one). */
int rr_leftover_open(struct rr_leftover **out, const char *lockname, char *why, size_t whylen);

/* Remove the mark (unlink), close it and free lo. NULL is fine. */
void rr_leftover_free(struct rr_leftover *lo);

/* --- G --- */

/* Record C's process group (C's pid) and C's start time (from /proc). */
void rr_leftover_note(const struct rr_leftover *lo, pid_t pgid);

/* The descriptor lo holds (for the guard's list of what it keeps); -1 for
 * NULL. */
int rr_leftover_fd(const struct rr_leftover *lo);

/* Kill what dead runs of the same job left in their process groups (see
 * above), wait up to wait_ms for the groups to go, remove their marks.
 * The first group's run ("redlock-run.PID.JOB") goes into first (may be
 * NULL). Returns how many groups were killed. Only the guard calls it. */
int rr_leftover_kill_dead(const struct rr_leftover *lo, int wait_ms, char *first,
                          size_t firstlen);

/* --- pure, unit-tested (tests/check_leftover.c) --- */

/* The mark's text: "PGID START\n". Returns its length, or 0 if buf is
 * short. */
size_t rr_leftover_format(char *buf, size_t len, pid_t pgid, unsigned long long start);

/* Parse a mark's text. 0, or -1 if it is not one (empty: C never got
 * that far). */
int rr_leftover_parse(const char *buf, size_t len, pid_t *pgid, unsigned long long *start);

/* What to do with a dead run's recorded group: the process whose pid is
 * the group's id, if any (exists, and its start time) against the
 * recorded start time. */
enum rr_leftover_act {
    RR_LEFTOVER_KILL,   /* the group is the dead run's: kill it */
    RR_LEFTOVER_SKIP,   /* the pid is someone else's now: leave it */
};
enum rr_leftover_act rr_leftover_judge(bool leader_exists, unsigned long long leader_start,
                                       unsigned long long recorded_start);

/* The k-th candidate directory (k = 0, 1, ...) for euid into out. 0, or -1
 * when there is no k-th candidate (or out is short). */
int rr_leftover_dir(char *out, size_t outlen, unsigned euid, int k);

#endif
