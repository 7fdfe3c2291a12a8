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
};

/* Parse SENTINEL MASTER's reply (field, value, ...). Returns 0, or -1 when
 * it does not carry an ip and a port. Pure. */
int rr_sentinel_parse_master(const redisReply *r, struct rr_sentinel_view *v);

/* Index of the view that wins: the highest config-epoch, the first among
 * equals; -1 when n is 0. Pure. */
int rr_sentinel_pick(const struct rr_sentinel_view *v, int n);

#endif
