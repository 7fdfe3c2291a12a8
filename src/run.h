/* run.h — one run of a job: the state machine that takes the lock, runs
 * the child, keeps the lock alive, stops the child if the lock is lost or
 * --timeout runs out, and releases the lock after the child was reaped.
 *
 *   ACQUIRING -> RUNNING -> RELEASING -> DONE
 *       |  ^        |            ^
 *       v  |        v            |
 *     WAITING    STOPPING -------+
 */
#ifndef RR_RUN_H
#define RR_RUN_H

#include <uv.h>
#include "cli.h"
#include "conn.h"

/* Run the job described by cfg on loop until it is over; returns the exit
 * status for main (see rr.h and the man page). */
int rr_run(uv_loop_t *loop, const struct rr_config *cfg);

/* A connection (not yet open) to endpoint i of cfg, with cfg's timeouts and
 * credentials. NULL when out of memory. */
struct rr_conn *rr_run_conn_new(uv_loop_t *loop, const struct rr_config *cfg, int i);

/* Metrics and reporting need to know what happened; filled by rr_run. */
struct rr_run_report {
    const char *status;       /* succeeded, failed, timeout, lost, busy, skipped, refused, error */
    int exit_code;
    int child_exit;           /* -1 when the child never ran */
    int signal;
    long long fence;
    double start_s, end_s;    /* wall clock, seconds */
    int64_t wait_ms;          /* time until the lock was ours (or given up) */
};

/* Write the Prometheus textfile-collector file for one run, atomically
 * (temporary file in the same directory, then rename). Returns 0, or -1
 * with err set. */
int rr_run_write_metrics(const char *path, const char *job, const struct rr_run_report *rep,
                         char *err, size_t errlen);

#endif
