/* sentinel.h — the pure parts of the Sentinel kind (sentinel.c). */
#ifndef RR_SENTINEL_H
#define RR_SENTINEL_H

#include <stdbool.h>
#include <hiredis/hiredis.h>

/* One sentinel's view of the master, from SENTINEL MASTER. */
struct rr_sentinel_view {
    char host[256];
    int port;
    long long epoch;     /* config-epoch, -1 when not given */
    bool down;           /* flags has o_down */
    bool in_failover;    /* flags has failover_in_progress: the address may be the old one */
};

/* Parse SENTINEL MASTER's reply (field, value, ...). Returns 0, or -1 when
 * it does not carry an ip and a port. Pure. */
int rr_sentinel_parse_master(const redisReply *r, struct rr_sentinel_view *v);

/* Index of the view that wins: the highest config-epoch; among equals, one
 * without a failover in progress (the failover's leader goes on naming the
 * old master, with the new epoch, until the failover ends), then the first.
 * A view naming demoted's address with an epoch up to demoted's is skipped:
 * the sentinels demoted that master, and only a later failover (a higher
 * epoch) can make it the master again. demoted may be NULL (port 0: none).
 * -1 when no view is left. Pure. */
int rr_sentinel_pick(const struct rr_sentinel_view *v, int n,
                     const struct rr_sentinel_view *demoted);

/* How many replicas must confirm a write (--sync-replicas want) on a master
 * the sentinels just promoted in place of one that had nrep_before
 * replicas, until the demoted master re-attaches: the promoted replica was
 * one of them, and the demoted master is not a replica yet (Sentinel
 * converts a live one 8-10 s after the failover; WAIT asks for this many,
 * and N counts again once a WAIT answers N). At least 1 and at most
 * want; 0 when want is 0. Pure. */
int rr_sentinel_sync_need(int want, int nrep_before);

#endif
