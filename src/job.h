/* job.h — a job's Redis keys, its state record, and the pure decisions
 * made from that record. The acquire script (src/lua/acquire.lua) applies
 * the same decision atomically on each master; rr_job_decide is its
 * reference, tested in tests/check_job.c and used by --status. */
#ifndef RR_JOB_H
#define RR_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <hiredis/hiredis.h>

#include "rr.h"

/* Every key of one job shares the hash tag {NAME}, so one script may touch
 * them all (and one cluster slot holds them). */
struct rr_job_keys {
    char lock[320];
    char fence[320];
    char state[320];
    char history[320];
    char channel[320];
    char void_prefix[320];   /* + a token: that attempt was given back */
    char queue[320];         /* ZSET of waiters, scored by arrival ticket */
    char qseq[320];          /* INCR: the arrival tickets */
    char q_prefix[320];      /* + a waiter id: that waiter is alive (PX) */
    char wake_prefix[320];   /* + a waiter id: the channel that wakes it */
    char once[560];          /* "" without --once */
    char once_pattern[720];  /* SCAN MATCH pattern for every once record */
};

/* Build the keys for prefix, NAME and (optional, may be "" or NULL) once
 * ID. Returns 0, or -1 if a key would not fit. */
int rr_job_keys(struct rr_job_keys *k, const char *prefix, const char *name,
                const char *once_id);

enum rr_job_status {
    RR_JOB_NONE,        /* no record */
    RR_JOB_RUNNING,
    RR_JOB_SUCCEEDED,
    RR_JOB_FAILED,
    RR_JOB_TIMEOUT,
    RR_JOB_LOST,
    RR_JOB_ABANDONED,
    RR_JOB_CLEARED,     /* --resolve clear: set aside by an operator */
    RR_JOB_UNKNOWN,     /* a status this version does not know */
    /* Outcomes of a run that never recorded one (in the metrics only): a
     * record never holds them, so rr_job_status_parse does not know them. */
    RR_JOB_BUSY,
    RR_JOB_SKIPPED,
    RR_JOB_REFUSED,
    RR_JOB_ERROR,
};

/* "running", "succeeded", ... ("" for NONE). */
const char *rr_job_status_name(enum rr_job_status s);
/* The record status s (running ... abandoned); UNKNOWN for anything else,
 * NONE for "" or NULL. Pure. */
enum rr_job_status rr_job_status_parse(const char *s);

/* What a failed rr_job_keys means, as every caller reports it. */
#define RR_JOB_KEYS_TOO_LONG "job name, prefix and --once ID are too long together"

/* The fields of a state or once record (HGETALL). Strings are copied. */
struct rr_job_record {
    enum rr_job_status status;
    char host[256];
    long long pid, fence, started_ms, heartbeat_ms, finished_ms;
    int exit_code, signal;     /* -1 when not set */
    char once[RR_ONCE_MAX + 1];
    char token[64];
    /* The last success, kept across later runs: 0 / "" when none. */
    long long last_success_ms, last_success_fence;
    char last_success_host[256];
    /* How many masters the run's acquire reached, of how many (0: not
     * recorded), and the others with why ("" none). */
    int masters_ok, masters_total;
    char masters_failed[512];
    /* --once: the attempts the ID has used (-1: not recorded; see
     * rr_job_attempts_used), and whether --resolve retry allowed one more. */
    int attempts;
    bool retry;
};

/* The attempts a once record says its ID has used: its count, or 1 for a
 * record written before attempts were counted, 0 for no record. Pure. */
int rr_job_attempts_used(const struct rr_job_record *rec);

/* Fill rec from an HGETALL reply (a flat array of field, value); an empty
 * or non-array reply gives status NONE. Pure. */
void rr_job_record_parse(struct rr_job_record *rec, const redisReply *r);

enum rr_job_decision {
    RR_DECIDE_RUN,      /* take the lock and run */
    RR_DECIDE_BUSY,     /* somebody holds the lock */
    RR_DECIDE_SKIP,     /* --once ID already succeeded: exit 0 */
    RR_DECIDE_REFUSE,   /* previous run died mid-way and policy is refuse: 65 */
    RR_DECIDE_SPENT,    /* --once ID used its --attempts, the last one did not
                         * succeed, and no --resolve retry since: 65 */
};

/* How many attempts an --once ID has used, may use (--attempts N), and
 * whether --resolve retry allowed one more since the last. */
struct rr_job_attempts {
    int used, allowed;
    bool retry;
};

/* What a run would do given the record it is governed by (the once record
 * with --once, else the state record), whether the lock is held, the
 * policy, and (with --once; NULL: none counted) the ID's attempts. A
 * 'running' record with no lock held counts as abandoned. An --once ID
 * whose last attempt failed, timed out, lost its lock or was abandoned is
 * SPENT once it used its attempts, unless a retry was allowed; a dead run
 * (abandoned) is then REFUSEd under refuse_stale, unless a retry was
 * allowed. src/lua/acquire.lua makes the same decision. Pure. */
enum rr_job_decision rr_job_decide(enum rr_job_status st, bool lock_held, bool once,
                                   bool refuse_stale, const struct rr_job_attempts *at);

#endif
