/* once_clock.h — an --once ID on one clock for every server: the lock
 * service's TIME, asked of every master; the median of the answers. */
#ifndef RR_ONCE_CLOCK_H
#define RR_ONCE_CLOCK_H

#include "service.h"

/* The answer: n_ok masters answered (0: none, err says why), sec is the
 * median of their TIME in seconds since the epoch, and local_ms this
 * host's wall clock when the last answer came (for the -v line). */
typedef void (*rr_once_clock_fn)(int n_ok, long long sec, int64_t local_ms, const char *err,
                                 void *arg);

/* Ask TIME of each of the n services; cb once, when every one answered or
 * failed (within its --redis-timeout). -1 if none could be asked (cb never
 * called). */
int rr_once_clock_ask(struct rr_svc **conns, int n, rr_once_clock_fn cb, void *arg);

/* The ID that pattern (--once as given) names on the lock service's clock:
 * the answer of rr_once_clock_ask (n_ok > 0 masters, their median sec,
 * local_ms this host's clock then) into id, and the -v line that says
 * which ID and which clock (a run, --status and --resolve say the same).
 * 0, or -1 with err (the pattern makes no ID on that clock). */
int rr_once_clock_id(const char *pattern, int n_ok, long long sec, int64_t local_ms, char *id,
                     size_t idlen, char *err, size_t errlen);

/* The median of n > 0 times (sorted in place): the middle one, or with an
 * even n the earlier of the two middle ones, so that it is always one
 * master's own answer. Pure. */
long long rr_once_clock_median(long long *t, int n);

/* A TIME reply's seconds into *sec: 0, or -1 if it is not {secs, usecs}.
 * Pure. */
int rr_once_clock_parse(const redisReply *r, long long *sec);

#endif
