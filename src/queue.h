/* queue.h — fair waiting: our place in the queue beside the lock, the
 * wake-up channel, and the timers of a waiter (the run's WAITING state).
 *
 * The queue itself lives in Redis and is kept by the scripts (acquire.lua
 * joins and refreshes it and grants the lock to its head only, release.lua
 * wakes the head, leave.lua removes us). This module owns the waiter's side:
 * its random id, a pub/sub connection per master subscribed to its own
 * channel wake:ID (so a release wakes one waiter, not all), the timer that
 * refreshes the queue entry and retries, and leaving the queue. */
#ifndef RR_QUEUE_H
#define RR_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "service.h"
#include "job.h"

/* How long a queue entry lives unless its waiter refreshes it: half the
 * lease, between 200ms and 10s. A dead waiter costs the ones behind it at
 * most this plus one refresh interval, always less than one lease. Pure. */
int64_t rr_queue_entry_ttl(int64_t ttl_ms);

/* The refresh interval for an entry that lives entry_ttl_ms: a third. Pure. */
int64_t rr_queue_refresh_ms(int64_t entry_ttl_ms);

/* The first RR_QUEUE_NEAR waiters' entries live the entry TTL. Further
 * back, an entry whose waiter listens on its channel lives entry_ttl_ms *
 * (rank / NEAR)^2, at most 100 times the entry TTL, and is refreshed as
 * rarely: a waiter that dies is seen by its channel going silent (its
 * connections close), and one that comes near gets the short TTL back and
 * a message to refresh (release.lua). acquire.lua computes the same. Pure. */
#define RR_QUEUE_NEAR 4
int64_t rr_queue_rank_ttl(int64_t entry_ttl_ms, long long rank);

/* How long a waiter sleeps before its next try. rank: our place in the
 * queue (0 = first), -1 when not queued (an error, or a lock service that
 * did not queue us); pttl: the holder's lease left (-1 unknown); backoff:
 * the current backoff step (for the unqueued case), rnd any random number
 * (its jitter); left: time until --wait runs out. A queued waiter sleeps
 * one refresh interval of its place's entry TTL (rr_queue_rank_ttl; it is
 * woken by message when its turn comes; rr_waiter_sleep shortens it to the
 * entry TTL's while it is not yet listening), the
 * first in line no longer than the holder's lease (a holder that dies
 * sends nothing); an unqueued one backs off with jitter. At least 1ms,
 * never past the deadline. Pure. */
int64_t rr_queue_sleep_ms(long long rank, int64_t pttl, int64_t entry_ttl_ms,
                          int64_t backoff, long rnd, int64_t left);

struct rr_waiter;

/* Called when a message or the subscription says it may be our turn. */
typedef void (*rr_wake_fn)(void *arg);
/* Called once leaving the queue is done (or failed: the entry then
 * expires by itself within the entry TTL). */
typedef void (*rr_left_fn)(void *arg);

/* A waiter for NAME of cfg. conns: the run's connections (borrowed, for
 * leave.lua); keys are copied; subscriptions get connections of their own. id is drawn
 * with getrandom. NULL with err set. */
struct rr_waiter *rr_waiter_new(uv_loop_t *loop, const struct rr_config *cfg,
                                struct rr_svc **conns, int n,
                                const struct rr_job_keys *keys, rr_wake_fn wake,
                                void *arg, char *err, size_t errlen);
const char *rr_waiter_id(const struct rr_waiter *w);

/* Sleep after a busy (or failed) try: subscribe if not yet, then call
 * retry(arg) when the timer fires. queued: the try put us in the queue. */
void rr_waiter_sleep(struct rr_waiter *w, int64_t sleep_ms, bool queued,
                     void (*retry)(void *), void *arg);

/* Stop the timer and close the subscriptions (we got the lock, or are done). */
void rr_waiter_stop(struct rr_waiter *w);

/* Leave the queue at once (--wait ran out, a signal). Returns 0 and calls
 * cb later, or -1 when we never queued (nothing to do; cb is not called). */
int rr_waiter_leave(struct rr_waiter *w, rr_left_fn cb, void *arg);

/* Close the handles (before the loop ends); free after the loop ended. */
void rr_waiter_close(struct rr_waiter *w);
void rr_waiter_free(struct rr_waiter *w);

#endif
