/* run.h — one run of a job: take the lock, run the child, keep the lock
 * alive, stop the child if the lock is lost or --max-runtime runs out, and
 * release the lock after the child was reaped. What happens when is decided
 * by the state machine in run_step.h; run.c carries it out, audit.c words
 * it. */
#ifndef RR_RUN_H
#define RR_RUN_H

#include <uv.h>
#include "config.h"
#include "service.h"
#include "metrics.h"

/* Run the job described by cfg on loop until it is over; returns the exit
 * status for main (see rr.h and the man page). */
int rr_run(uv_loop_t *loop, const struct rr_config *cfg);

#endif
