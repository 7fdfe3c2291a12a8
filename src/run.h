/* run.h — one run of a job: the state machine that takes the lock, runs
 * the child, keeps the lock alive, stops the child if the lock is lost or
 * --max-runtime runs out, and releases the lock after the child was reaped.
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
#include "service.h"
#include "metrics.h"

/* Run the job described by cfg on loop until it is over; returns the exit
 * status for main (see rr.h and the man page). */
int rr_run(uv_loop_t *loop, const struct rr_config *cfg);

#endif
