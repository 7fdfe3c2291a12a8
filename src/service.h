/* service.h — one lock service, as lock.c sees it.
 *
 * A lock service is one vote of the Redlock count: a fixed server
 * (redis://, rediss://, unix://), the master a group of sentinels names
 * (redis-sentinel://), or the owner of the job's slot in a cluster
 * (redis-cluster://). Callers send commands and get replies exactly as
 * with conn.h; the service owns its connections, finds the node to talk
 * to, and sends a request again only when it surely did not run there:
 * it was never written, or the node refused it unrun (READONLY, LOADING,
 * MOVED, ASK, TRYAGAIN, CLUSTERDOWN). A request that may have run (a
 * timeout, a reset after the write) is answered as an error and the next
 * request finds the node afresh. Every request keeps its deadline; resends
 * are bounded (RR_SVC_MAX_SENDS), so nothing loops.
 *
 * With --sync-replicas N, a write (rr_svc_write) has WAIT N pipelined
 * behind it on the same connection, and its callback may ask
 * rr_svc_replicas how many replicas confirmed it.
 *
 * The kinds live in their own files behind struct rr_svc_backend
 * (service_impl.h): direct.c, sentinel.c, cluster.c.
 */
#ifndef RR_SERVICE_H
#define RR_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "conn.h"
#include "url.h"

#define RR_SVC_MAX_SENDS 6      /* sends of one request, the first included */

struct rr_svc;

/* As rr_reply_fn: status is an RR_REPLY_* value, reply is NULL unless
 * status is RR_REPLY_OK and is freed when the callback returns. */
typedef void (*rr_svc_reply_fn)(struct rr_svc *s, int status, redisReply *reply, void *arg);
typedef void (*rr_svc_message_fn)(struct rr_svc *s, redisReply *msg, void *arg);

struct rr_svc_opts {
    struct rr_conn_opts conn;        /* for the data nodes; strings borrowed */
    const char *sentinel_user;       /* AUTH for the sentinels, or NULL */
    const char *sentinel_password;
    char route_key[256];             /* "{NAME}": the job's hash tag picks the cluster slot */
    int sync_replicas;               /* WAIT N behind every rr_svc_write; 0 = none */
};

/* Create a service for ep (copied; strings in o are borrowed and must
 * outlive s). Connects lazily. NULL only when out of memory. */
struct rr_svc *rr_svc_new(uv_loop_t *loop, const struct rr_endpoint *ep,
                          const struct rr_svc_opts *o);

/* Queue a command (arguments copied). cb is called exactly once, later.
 * Returns 0, or negative if s is closing or out of memory (cb never called). */
int rr_svc_command(struct rr_svc *s, rr_svc_reply_fn cb, void *arg,
                   int argc, const char **argv, const size_t *argvlen);
int rr_svc_commandv(struct rr_svc *s, rr_svc_reply_fn cb, void *arg, const char **argv);

/* A lock write: as rr_svc_command, with WAIT behind it under --sync-replicas. */
int rr_svc_write(struct rr_svc *s, rr_svc_reply_fn cb, void *arg,
                 int argc, const char **argv, const size_t *argvlen);

/* Inside the callback of a write: how many replicas confirmed it (WAIT's
 * answer), or -1 when none was asked for or WAIT did not answer. */
long long rr_svc_replicas(const struct rr_svc *s);

/* Inside a failed request's callback: it was never written to any server
 * (the connection never came up), so it cannot have run. */
bool rr_svc_unsent(const struct rr_svc *s);

/* Inside the callback of a write: WAIT's error reply ("NOPERM ..." when
 * the ACL lacks +wait), "" if it gave none. */
const char *rr_svc_wait_error(const struct rr_svc *s);

/* How many replicas must confirm a write now: --sync-replicas N, or fewer
 * for a while after a failover (sentinel.c: until the demoted master
 * re-attaches as a replica; WAIT asks for this many). */
int rr_svc_sync_replicas(const struct rr_svc *s);

/* Pub/sub pushes from any of the service's connections go to fn. A
 * subscription that took is sent again, by itself, wherever the node is
 * after its connection went down (a restart, a failover); then fn is
 * called with msg NULL: messages may have been missed meanwhile. */
void rr_svc_on_message(struct rr_svc *s, rr_svc_message_fn fn, void *arg);

/* Answer every pending request with RR_REPLY_CLOSED (synchronously), close
 * the connections and free s. s must not be used afterwards. */
void rr_svc_close(struct rr_svc *s);

/* The last error, one line, never credentials. "" when none. */
const char *rr_svc_error(const struct rr_svc *s);

/* The node the last request went to ("10.0.0.5:6379"), else the URL's
 * display name. */
const char *rr_svc_name(const struct rr_svc *s);

/* Was the last failure a refusal retrying cannot fix (TLS verification)? */
bool rr_svc_refused(const struct rr_svc *s);

/* Are its waiters on a sharded channel (SSUBSCRIBE), so that a release
 * must SPUBLISH? True for a cluster. */
bool rr_svc_sharded(const struct rr_svc *s);

/* The kind of service, for messages: "redis", "sentinel", "cluster". */
const char *rr_svc_kind(const struct rr_svc *s);

#endif
