/* status.h — the operator modes: --status, --release, --resolve. */
#ifndef RR_STATUS_H
#define RR_STATUS_H

#include <stdio.h>
#include <uv.h>
#include "config.h"
#include "job.h"

/* Exit statuses of --status, for monitoring checks. */
enum rr_status_exit {
    RR_STATUS_IDLE = 0,       /* free, last run succeeded */
    RR_STATUS_HELD = 1,       /* the lock is held right now */
    RR_STATUS_FAILED = 2,     /* last run failed, timed out or lost its lock */
    RR_STATUS_ABANDONED = 3,  /* a run died mid-way and nobody resolved it */
    RR_STATUS_NONE = 4,       /* no record: the NAME (or --once ID) never ran */
};

/* The --status exit code from what was read: held, the last run's status,
 * the --once IDs of the job left abandoned, and those failed, timed out or
 * lost and not settled since (2, as a failed last run: a day that failed
 * stays failed after the next day succeeds, until it is settled). Pure. */
int rr_status_exit_code(bool held, enum rr_job_status last, int n_abandoned, int n_failed);

/* Run --status, --release or --resolve as cfg->mode says; prints to out
 * (messages go through log). Returns the exit status. */
int rr_status_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out);

#endif
