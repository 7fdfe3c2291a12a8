/* audit.h — what a run tells its user and its audit trail: the words for
 * each message the state machine decides on (run_step.h), as text or JSON
 * lines through log.h. Which message, and when, is run_step.c's business;
 * this file only formats. */
#ifndef RR_AUDIT_H
#define RR_AUDIT_H

#include <stdint.h>

#include "config.h"
#include "lock.h"
#include "run_step.h"

/* What every message of one run may name. Borrowed, for the run's life. */
struct rr_audit {
    const struct rr_config *cfg;
    int n;                    /* masters */
    const char *host;         /* our host name */
    const char *contain;      /* "cgroup" or "tree" (--contain, as it came out) */
    const char *cgroup;       /* the cgroup's path, "" in tree mode */
    const char *once_id;      /* the --once ID as expanded for this run; "" none */
};

/* A round decided on its quorum, whose later masters failed: the warning
 * of a degraded quorum, with res's final counts (lock.h's
 * rr_lock_on_degraded). */
void rr_audit_degraded(const struct rr_audit *au, const struct rr_run_sm *sm,
                       const struct rr_acquire_result *res);

/* Log the message of a (an RR_ACT_SAY of sm's last step). res: the
 * acquisition's answer that step was about, NULL for any other event. */
void rr_audit_say(const struct rr_audit *au, const struct rr_run_sm *sm,
                  const struct rr_run_action *a, const struct rr_acquire_result *res);

/* Log a state change (an RR_ACT_ENTER), at debug level. */
void rr_audit_enter(const struct rr_run_action *a);

/* Log the sleep before the next try of a waiter, at debug level. */
void rr_audit_sleep(long long rank, int64_t sleep_ms);

/* The wall clock in milliseconds (the records' and the report's clock). */
int64_t rr_audit_wall_ms(void);

#endif
