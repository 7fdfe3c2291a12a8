/* metrics.h — the Prometheus textfile-collector text, pure: parse, fold a
 * run in, format (the file itself: metrics_file.h).
 *
 * A file holds the series of every lock written to it, told apart by the
 * `lock` label (not `job`, which Prometheus uses for itself). Every run
 * reads what the previous runs left, so counters survive across runs, and
 * a run that did not hold the lock (busy, skipped, refused, error) updates
 * only the counters and its own "last attempt" figures: it never erases
 * what the last holder recorded.
 */
#ifndef RR_METRICS_H
#define RR_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What one run did; filled by rr_run. */
struct rr_run_report {
    const char *status;       /* succeeded, failed, timeout, lost, busy, skipped, refused, error */
    int exit_code;
    int child_exit;           /* -1 when the child never ran */
    int signal;
    long long fence;
    double start_s, end_s;    /* wall clock, seconds */
    int64_t wait_ms;          /* time until the lock was ours (or given up) */
    int masters_reachable;    /* masters that answered the last acquire round */
    int masters_total;        /* of how many; 0: no round was made */
};

#define RR_METRICS_NSTATUS 8
extern const char *const rr_metrics_statuses[RR_METRICS_NSTATUS];

struct rr_metrics {
    double runs[RR_METRICS_NSTATUS];   /* counters, by status */
    /* The last run that held the lock (ran the command). */
    bool held_any;
    int held_status;                   /* index into rr_metrics_statuses */
    int held_exit_code;
    long long held_fence;
    double held_start_s, held_end_s, held_wait_s;
    double last_success_s;             /* 0: never */
    /* The last run of any kind. */
    int last_status;
    int last_exit_code;
    double last_attempt_s;
    /* The last acquisition round: masters that answered, of how many
     * (total 0: never known, not written). */
    int masters_reachable, masters_total;
};

/* The index of status in rr_metrics_statuses, or the index of "error". Pure. */
int rr_metrics_status_index(const char *status);

/* Read what a previous run wrote for this lock from the text in buf (a
 * file in our own format); figures of another lock or lines we do not
 * know are ignored. Pure. */
void rr_metrics_parse(const char *buf, size_t len, const char *lock, struct rr_metrics *m);

/* Fold one run into m. Pure. */
void rr_metrics_update(struct rr_metrics *m, const struct rr_run_report *rep);

/* The file's text for m alone. Pure. */
void rr_metrics_format(FILE *f, const char *lock, const struct rr_metrics *m);

/* The figures of every lock in one file, in the order first seen. */
struct rr_metrics_entry {
    char *lock;               /* owned by the set */
    struct rr_metrics m;
};
struct rr_metrics_set {
    struct rr_metrics_entry *e;
    size_t n, cap;
};

/* Read every lock's figures from buf into set (initialised here; free it
 * with rr_metrics_set_free). Returns 0, or -1 out of memory (set empty). Pure. */
int rr_metrics_set_parse(const char *buf, size_t len, struct rr_metrics_set *set);

/* The figures of lock in set, added (as never run) if it has none yet;
 * NULL out of memory. The pointer lasts until the set next grows. */
struct rr_metrics *rr_metrics_set_get(struct rr_metrics_set *set, const char *lock);

/* The file's text for every lock in set: each family once, with the samples
 * of every lock under it. Pure. */
void rr_metrics_set_format(FILE *f, const struct rr_metrics_set *set);

/* A lock no run on this host has attempted for this long (40 days: longer
 * than a monthly schedule) is dropped from a shared file by the next run
 * that writes it: a job removed from cron leaves no series for ever. */
#define RR_METRICS_KEEP_S (40.0 * 86400)

/* Drop from set every lock but keep whose last attempt is over
 * RR_METRICS_KEEP_S before now_s (seconds). Pure. */
void rr_metrics_set_prune(struct rr_metrics_set *set, const char *keep, double now_s);

/* Free what the set holds; it is empty afterwards. */
void rr_metrics_set_free(struct rr_metrics_set *set);

/* Does the node_exporter textfile collector read a file of this name
 * (only names ending in .prom)? Pure. */
bool rr_metrics_name_collected(const char *path);

#endif
