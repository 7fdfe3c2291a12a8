/* lock.h — the Redlock algorithm over 1..N independent masters.
 *
 * One connection per master. Every operation sends its script to all
 * masters at once and completes when each has answered or failed within
 * the request timeout. With one master this is a plain single-instance
 * lock; with N it needs a quorum of N/2+1. Operations may overlap (a
 * release may start while a renewal is still in flight).
 */
#ifndef RR_LOCK_H
#define RR_LOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "job.h"
#include "rr.h"
#include "service.h"
#include "votes.h"

struct rr_lock;

struct rr_lock_opts {
    const char *prefix;
    const char *name;
    const char *once_id;      /* "" without --once */
    /* --once as given when it has strftime fields: the acquisition expands
     * it on the lock service's clock first (once_clock.h); NULL: none. */
    const char *once_pattern;
    int64_t ttl_ms;
    int64_t state_ttl_ms;     /* once records */
    bool refuse_stale;
    int attempts;             /* --attempts: an --once ID's attempts (0: 1) */
    const char *host;         /* recorded in the state */
    const char *contain;      /* "cgroup" or "tree": recorded in the state */
    const char *command_fp;   /* the command's fingerprint: recorded, compared */
    long pid;
    const char *waiter;       /* --wait: our queue id (queue.c); "" never queue */
    int64_t queue_ttl_ms;     /* how long our queue entry lives unrenewed */
    int limit;                /* --limit: holders at once (1 = one lock key) */
    bool gave_password;       /* we send one: "not authenticated" means refused */
};

/* rr_vote_acquire and rr_vote_renew (votes.h) for a reply callback's
 * status and reply: a timeout or a failed connection is an ERR vote. Pure. */
void rr_lock_classify_acquire(int status, const redisReply *r, struct rr_vote *v);
int rr_lock_classify_renew(int status, const redisReply *r, char *by, size_t len);

struct rr_acquire_result {
    enum rr_acq result;
    long long fence;          /* OK: max fence over the quorum */
    int64_t validity_ms;
    int64_t elapsed_ms;
    int64_t retry_ms;         /* BUSY: when to try again at the latest, with no
                               * message: the smallest holder PTTL, or sooner
                               * behind a foreign holder (rr_lock_foreign_poll_ms);
                               * -1 unknown */
    int64_t lease_ms;         /* BUSY: smallest holder PTTL, -1 unknown */
    int slot;                 /* OK: the --limit slot, 1..N (REDLOCK_SLOT) */
    long long rank;           /* BUSY: our best place in the queues, -1 not queued */
    long long ahead;          /* BUSY: a master's lock is free, but this many
                               * waiters are queued ahead there (max; 0 none) */
    int n_ok, n_busy, n_done, n_stale, n_err;
    bool abandoned;           /* a dead previous run was found and recorded */
    bool command_changed;     /* OK: the last run's command fingerprint was another */
    struct rr_vote holder;    /* BUSY/DONE/STALE: a representative vote */
    bool foreign;             /* BUSY: a master's holder is not a redlock-run run */
    /* ERROR: what went wrong. With several masters, every master that
     * failed is named in it, and why; with refused, it is a refusal of our
     * configuration (78): the masters that refused it are too many for a
     * quorum, so that retrying cannot help. */
    char err[RR_ERRLEN * 5];
    bool refused;
    int n_refused;            /* masters that refused our configuration */
    /* Every master whose vote was an error, and why, "; " between them
     * ("127.0.0.1:6380 refused our password (WRONGPASS)"); "" if none. On
     * OK, a quorum reached without them: a degraded quorum. */
    char failed[RR_ERRLEN * 2];
};

typedef void (*rr_acquire_fn)(struct rr_lock *lk, const struct rr_acquire_result *res, void *arg);

enum rr_extend { RR_EXTEND_OK, RR_EXTEND_FAILED, RR_EXTEND_LOST };
/* sent_ms is the monotonic time the renewal was sent: the lock is valid
 * until sent_ms + rr_lock_validity(ttl, 0) after RR_EXTEND_OK. */
typedef void (*rr_extend_fn)(struct rr_lock *lk, enum rr_extend res, int64_t sent_ms,
                             const char *err, void *arg);

struct rr_release_info {
    const char *status;       /* "succeeded", "failed", ...; "" aborts an acquisition */
    int exit_code;            /* -1 none */
    int signal;               /* 0 none */
    int64_t hold_ms;          /* --min-hold remainder; 0 = delete */
    int64_t wait_ms;
};
/* released = masters where our key was deleted or shortened; errors = masters
 * that did not answer. */
typedef void (*rr_release_fn)(struct rr_lock *lk, int released, int written,
                              int errors, const char *err, void *arg);

/* Create a lock over n connections (borrowed; the caller closes them after
 * rr_lock_free). Every acquisition attempt draws a fresh random 128-bit
 * token with getrandom, so nothing left over from an earlier attempt can
 * match a later one. Returns NULL with err set. */
struct rr_lock *rr_lock_new(struct rr_svc **conns, int n, const struct rr_lock_opts *o,
                            char *err, size_t errlen);
void rr_lock_free(struct rr_lock *lk);

/* The operations; each calls its callback exactly once, later. A failed
 * acquisition has already released what it took when cb runs.
 * With several masters, an acquisition is decided as soon as its outcome
 * is certain: a quorum of OK where no master can answer DONE or STALE (no
 * --once, no refusal of stale records). The others' replies come later:
 * each OK is counted for the record (renewals and the release go to every
 * master anyway), and if some master failed, the degraded callback (below)
 * runs once they all answered, with the round's final counts. */
int rr_lock_acquire(struct rr_lock *lk, rr_acquire_fn cb, void *arg);

/* The --once ID the acquisitions use ("" without --once). With
 * once_pattern, the first acquisition asks every master TIME and expands
 * the pattern on the median of the answers (once_clock.h) before it sends
 * anything; no master answering is an ERROR result like any other outage
 * (so --wait waits it out), a pattern that makes no ID on that clock a
 * refusal. Until then, once_id as given. Owned by lk. */
const char *rr_lock_once_id(const struct rr_lock *lk);

/* Called, after cb said OK, when masters that answered after the decision
 * failed: res has the final n_ok, n_err and failed (for the warning that
 * a degraded quorum gets). Set before rr_lock_acquire; NULL: none. */
void rr_lock_on_degraded(struct rr_lock *lk, rr_acquire_fn fn, void *arg);
int rr_lock_extend(struct rr_lock *lk, rr_extend_fn cb, void *arg);
int rr_lock_release(struct rr_lock *lk, const struct rr_release_info *ri,
                    rr_release_fn cb, void *arg);

#endif
