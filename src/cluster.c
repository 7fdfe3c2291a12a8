/* cluster.c — the lock service behind redis-cluster:// (service_impl.h).
 *
 * Every key of a job carries the hash tag {NAME}, so all of its commands
 * go to one slot, computed once (slot.h). The owner of that slot is
 * learnt from the cluster's own answers, never from a map:
 *
 *   UNKNOWN  the request goes to a node we know (the seeds in URL order,
 *            then nodes learnt since), as is. The owner runs it; any
 *            other node answers -MOVED SLOT HOST:PORT without running it.
 *   KNOWN    requests go to the owner's connection.
 *
 * So a run whose first seed owns the slot sends exactly what a plain
 * redis:// run sends (no CLUSTER command at all), and a run from another
 * seed pays one round trip, the MOVED. CLUSTER SHARDS / SLOTS would cost a
 * round trip on every path and tell us about 16383 slots we never use.
 *
 * Answers the node refused unrun are sent again (service.c bounds them by
 * RR_SVC_MAX_SENDS and the request's deadline):
 *   MOVED        the owner is that node now: remember it, resend there
 *                (after a pause if it sends us back where the last MOVED
 *                came from: two nodes disagree while SETSLOT spreads).
 *   ASK          the slot is migrating and our keys are on the target:
 *                ASKING + the command there, once; the owner is unchanged.
 *   TRYAGAIN     keys split mid-migration; CLUSTERDOWN, LOADING: retry
 *                with a backoff that spreads the sends left over the time
 *                left, so the last one goes near the deadline.
 * A request never written (connection refused, not connected in time) is
 * sent to the next node we know, with one fresh request timeout so that
 * a dead first seed costs at most one timeout; once every node failed
 * this way it is answered with an error naming each. A request that may
 * have run (timeout or reset after the write) is answered as an error and
 * the owner is forgotten: the next request finds it again.
 *
 * Pub/sub: SUBSCRIBE becomes SSUBSCRIBE (sharded, Redis >= 7), which lives
 * on the slot's owner and follows MOVED like any command; the release
 * script is told to SPUBLISH (lock.c). When the slot leaves the node, it
 * ends the subscription (conn.c turns that into a connection down), and
 * service.c subscribes again, here, wherever the slot is then. A node that
 * does not know SSUBSCRIBE (Redis 6.x) gets SUBSCRIBE from then on: the
 * scripts fall back to PUBLISH there, which a Cluster sends to every node.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "service_impl.h"
#include "slot.h"

#define CL_MAX_NODES 64         /* nodes we keep a connection to */
#define CL_DEAD_MS 500          /* a node whose connect failed this recently... */
#define CL_DEAD_PAUSE_MS 100    /* ...is sent to again after this pause only */
#define CL_MIN_BACKOFF_MS 20

/* q->tag, what we note on a request:
 *   bit 0       its deadline was extended once (a send never written)
 *   bits 1..8   1 + the node whose MOVED sent it on last (0: none)
 *   bits 9..16  1 + the node an ASK sends it to next, after ASKING (0: none)
 * A node's index never changes (nodes are only added, CL_MAX_NODES < 255). */
#define TAG_EXTENDED 1u
#define TAG_FROM 1
#define TAG_ASK 9
#define TAG_MASK 0xffu

struct cnode {
    char host[256];
    int port;
    struct rr_conn *c;
    uint64_t failed_at;         /* uv_now of its last failed connect, 0 none */
};

struct clus {
    int slot;
    int n, n_seeds;
    struct cnode nodes[CL_MAX_NODES];  /* the seeds first, then nodes learnt */
    int owner;                         /* index, or -1: UNKNOWN */
    int probe;                         /* where an UNKNOWN request goes */
    int failed;                        /* nodes failed in a row (unsent) */
    char why[RR_ERRLEN];               /* what those failures said */
    bool plain_pubsub;                 /* no SSUBSCRIBE here (Redis 6.x) */
};

static int tag_node(const struct svc_req *q, int field)
{
    return (int)((q->tag >> field) & TAG_MASK) - 1;
}

static void set_tag_node(struct svc_req *q, int field, int node)
{
    q->tag = (q->tag & ~((uintptr_t)TAG_MASK << field)) | ((uintptr_t)(node + 1) << field);
}

static int find_node(struct clus *k, const char *host, int port)
{
    for (int i = 0; i < k->n; i++)
        if (k->nodes[i].port == port && strcmp(k->nodes[i].host, host) == 0)
            return i;
    return -1;
}

static int index_of(const struct clus *k, const struct rr_conn *c)
{
    for (int i = 0; c && i < k->n; i++)
        if (k->nodes[i].c == c)
            return i;
    return -1;
}

/* The node host:port, added (with a connection) when new; -1 when full. */
static int node_for(struct rr_svc *s, const char *host, int port)
{
    struct clus *k = s->impl;
    int i = find_node(k, host, port);

    if (i >= 0)
        return i;
    if (strlen(host) >= sizeof k->nodes[0].host) {
        rr_svc_set_error(s, "%s: a node's address is too long", s->ep.display);
        return -1;
    }
    if (k->n == CL_MAX_NODES) {
        rr_svc_set_error(s, "%s: more than %d nodes to keep a connection to", s->ep.display,
                  CL_MAX_NODES);
        return -1;
    }
    i = k->n;
    snprintf(k->nodes[i].host, sizeof k->nodes[i].host, "%s", host);
    k->nodes[i].port = port;
    k->nodes[i].failed_at = 0;
    if (!(k->nodes[i].c = rr_svc_node_conn(s, host, port))) {
        rr_svc_set_error(s, "out of memory");
        return -1;
    }
    k->n++;
    return i;
}

static int cl_init(struct rr_svc *s)
{
    struct clus *k = calloc(1, sizeof *k);

    if (!k)
        return -1;
    s->impl = k;
    k->slot = rr_key_slot(s->o.route_key, strlen(s->o.route_key));
    k->owner = -1;
    for (int i = 0; i < s->ep.n_nodes; i++)
        if (node_for(s, s->ep.nodes[i].host, s->ep.nodes[i].port) < 0)
            return -1;
    k->n_seeds = k->n;
    return k->n > 0 ? 0 : -1;
}

static void rename_cmd(struct svc_req *q, const char *from, const char *to)
{
    char *v;

    if (strcasecmp(q->argv[0], from) != 0 || !(v = strdup(to)))
        return;
    free(q->argv[0]);
    q->argv[0] = v;
    q->argvlen[0] = strlen(v);
}

/* SUBSCRIBE → SSUBSCRIBE: a sharded channel lives on the slot's owner
 * only, and a release wakes nobody on the other nodes. */
static void shard_subscribe(struct rr_svc *s, struct svc_req *q)
{
    if (!((struct clus *)s->impl)->plain_pubsub)
        rename_cmd(q, "SUBSCRIBE", "SSUBSCRIBE");
}

/* A node without sharded pub/sub (Redis 6.x): SUBSCRIBE, now and for
 * every later (re)subscription; said once. */
static bool unsharded(struct rr_svc *s, struct svc_req *q, const redisReply *r)
{
    struct clus *k = s->impl;

    if (strcasecmp(q->argv[0], "SSUBSCRIBE") != 0 || r->type != REDIS_REPLY_ERROR || !r->str ||
        !strcasestr(r->str, "unknown command"))
        return false;
    if (!k->plain_pubsub)
        rr_log(RR_LOG_INFO, "cluster", NULL, "%s has no sharded pub/sub (Redis < 7.0): "
               "waiting with SUBSCRIBE, and each release is sent to every node",
               s->ep.display);
    k->plain_pubsub = true;
    rename_cmd(q, "SSUBSCRIBE", "SUBSCRIBE");
    return true;
}

static enum svc_route cl_route(struct rr_svc *s, struct svc_req *q, struct rr_conn **c)
{
    struct clus *k = s->impl;
    int ask = tag_node(q, TAG_ASK);

    shard_subscribe(s, q);
    /* The slot is migrating and our keys are there: once, ASKING first. */
    if (ask >= 0) {
        *c = k->nodes[ask].c;
        return SVC_ROUTED;
    }
    if (k->owner >= 0) {
        *c = k->nodes[k->owner].c;
        return SVC_ROUTED;
    }
    if (k->probe >= k->n)
        k->probe = 0;
    *c = k->nodes[k->probe].c;
    return SVC_ROUTED;
}

static const char *const *cl_preamble(struct rr_svc *s, struct svc_req *q)
{
    static const char *const asking[] = { "ASKING", NULL };

    (void)s;
    if (tag_node(q, TAG_ASK) < 0)
        return NULL;
    set_tag_node(q, TAG_ASK, -1);
    return asking;
}

static uint64_t now_ms(struct rr_svc *s)
{
    uv_update_time(s->loop);
    return uv_now(s->loop);
}

/* Spread the sends left over the time left: a CLUSTERDOWN that lasts
 * gets its last try near the deadline, not six tries in 100 ms. */
static void backoff(struct rr_svc *s, struct svc_req *q)
{
    uint64_t now = now_ms(s);
    uint64_t left = q->deadline > now ? q->deadline - now : 0;
    int sends_left = RR_SVC_MAX_SENDS - q->sends;
    uint64_t ms = sends_left > 0 ? left / (uint64_t)sends_left : left;

    if (ms < CL_MIN_BACKOFF_MS)
        ms = CL_MIN_BACKOFF_MS;
    q->not_before = now + ms;
}

static void add_why(struct clus *k, const char *what)
{
    size_t n = strlen(k->why);

    if (n + 3 < sizeof k->why)
        snprintf(k->why + n, sizeof k->why - n, "%s%s", n ? "; " : "", what);
}

static enum svc_verdict follow(struct rr_svc *s, struct svc_req *q, const redisReply *r)
{
    struct clus *k = s->impl;
    struct rr_redirect rd;
    int from = index_of(k, q->on), to;

    if (rr_parse_redirect(r->str, r->len, &rd) != 0) {
        rr_svc_set_error(s, "%s: a redirection that is not SLOT HOST:PORT: %.*s",
                  rr_conn_name(q->on), rr_svc_excerpt(r), r->str);
        return SVC_DELIVER;
    }
    /* An empty host: the node does not know its own address; it is the
     * one we asked. */
    if (!rd.host[0] && from >= 0)
        snprintf(rd.host, sizeof rd.host, "%s", k->nodes[from].host);
    if ((to = node_for(s, rd.host, rd.port)) < 0)
        return SVC_DELIVER;
    if (to == from) {
        rr_svc_set_error(s, "%s: redirected to itself: %.*s", rr_conn_name(q->on),
                  rr_svc_excerpt(r), r->str);
        return SVC_DELIVER;
    }
    rr_svc_set_error(s, "%s: %s %d %s:%d", rr_conn_name(q->on), rd.ask ? "ASK" : "MOVED", rd.slot,
              rd.host, rd.port);
    if (rd.ask) {
        set_tag_node(q, TAG_ASK, to);
        return SVC_RESEND;
    }
    /* The slot is the one of all our keys (a --prefix with a hash tag of
     * its own moves them all alike): the node's word is the truth. */
    k->slot = rd.slot;
    k->owner = to;
    /* The cluster may still name a master that just died: pause. */
    if (k->nodes[to].failed_at && now_ms(s) - k->nodes[to].failed_at < CL_DEAD_MS)
        q->not_before = now_ms(s) + CL_DEAD_PAUSE_MS;
    /* Sent back to the node that redirected us last time: the two disagree
     * for a moment (SETSLOT NODE reached one of them first). Wait, spread
     * over the time left, rather than spend every send in a millisecond. */
    if (tag_node(q, TAG_FROM) == to)
        backoff(s, q);
    set_tag_node(q, TAG_FROM, from);
    return SVC_RESEND;
}

static enum svc_verdict cl_judge(struct rr_svc *s, struct svc_req *q)
{
    struct clus *k = s->impl;
    const redisReply *r = q->reply;
    int on = index_of(k, q->on);

    if (q->status == RR_REPLY_OK) {
        k->failed = 0;
        k->why[0] = '\0';
        if (on >= 0)
            k->nodes[on].failed_at = 0;
        if (rr_svc_is_error(r, "MOVED") || rr_svc_is_error(r, "ASK"))
            return follow(s, q, r);
        if (unsharded(s, q, r))
            return SVC_RESEND;
        if (rr_svc_is_error(r, "TRYAGAIN") || rr_svc_is_error(r, "CLUSTERDOWN") ||
            rr_svc_is_error(r, "LOADING")) {
            rr_svc_error_reply(s, q);
            backoff(s, q);
            return SVC_RESEND;
        }
        return SVC_DELIVER;
    }
    /* No answer: find the owner again, from the next node we know. */
    if (on >= 0 && on == k->owner)
        k->owner = -1;
    if (on >= 0)
        k->probe = on + 1 < k->n ? on + 1 : 0;
    if (!q->unsent)
        return SVC_DELIVER;  /* it may have run: never twice */
    if (on >= 0)
        k->nodes[on].failed_at = now_ms(s);
    add_why(k, rr_conn_error(q->on));
    if (++k->failed >= k->n) {
        rr_svc_set_error(s, "no node of %s answered: %s", s->ep.display, k->why);
        k->failed = 0;
        k->why[0] = '\0';
        return SVC_DELIVER;
    }
    rr_svc_set_error(s, "%s: %s", s->ep.display, k->why);
    /* Never written, so it never ran: one fresh timeout for the next node,
     * so a dead (or silent) first seed costs at most one. */
    if (!(q->tag & TAG_EXTENDED)) {
        uint64_t until = now_ms(s) + (uint64_t)s->o.conn.request_timeout_ms;
        q->tag |= TAG_EXTENDED;
        if (until > q->deadline)
            q->deadline = until;
    }
    return SVC_RESEND;
}

static void cl_down(struct rr_svc *s, struct rr_conn *c)
{
    struct clus *k = s->impl;
    int i = index_of(k, c);

    if (i >= 0 && i == k->owner) {
        k->owner = -1;
        k->probe = i + 1 < k->n ? i + 1 : 0;
    }
}

static void cl_close(struct rr_svc *s)
{
    struct clus *k = s->impl;

    for (int i = 0; i < k->n; i++)
        rr_conn_close(k->nodes[i].c);
    free(k);
    s->impl = NULL;
}

const struct rr_svc_backend rr_svc_cluster = {
    .kind = "cluster",
    .ep_kind = RR_EP_CLUSTER,
    .sharded = true,
    .init = cl_init,
    .route = cl_route,
    .judge = cl_judge,
    .close = cl_close,
    .down = cl_down,
    .preamble = cl_preamble,
};
