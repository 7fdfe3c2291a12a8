/* sentinel.c — the lock service behind redis-sentinel:// (service_impl.h).
 *
 * As the Sentinel client documentation describes, with one change: ask the
 * sentinels for the master (SENTINEL MASTER, all of them at once, so a dead
 * one costs at most a short grace once a majority answered), take the
 * answer with the highest config-epoch (not the first: see decide), connect, and check with ROLE that
 * the node is the master. ROLE is queued first on the new connection, so
 * it travels in the same write as AUTH/SELECT and the first request: no
 * extra round trip. The address is looked up again whenever a request
 * fails on the connection, so every reconnect re-resolves. READONLY,
 * LOADING and MASTERDOWN answers, and requests that never went out, mean
 * "find the master again" and are sent again; a request that may have run
 * is answered as an error, never sent twice.
 *
 * States: UNKNOWN (no master known), ASKING (a round of questions is out),
 * KNOWN (master set; ROLE may still be on its way).
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sentinel.h"
#include "service_impl.h"

#define ASK_PAUSE_MS 100      /* before asking again after a wrong answer */
#define GRACE_MS 100          /* for the other sentinels once a majority answered */
#define PENDING_MS 5000       /* a +switch-master's new epoch must be seen by then */

enum sstate { S_UNKNOWN, S_ASKING, S_KNOWN };

struct sent {
    enum sstate state;
    int n;
    struct rr_conn *sc[RR_MAX_NODES];  /* the sentinels */
    struct rr_conn *hint[RR_MAX_NODES];/* subscribed to +switch-master, once a master is known */
    struct rr_conn *master;            /* the master's connection, or NULL */
    struct rr_conn *not_master;        /* a connection whose ROLE said otherwise */
    char host[256];
    int port;
    long long epoch;                   /* the config-epoch the master was named with */
    int nrep;                          /* the replicas its ROLE listed, -1 not yet known */
    /* The master the sentinels demoted (+switch-master, or a newer epoch
     * naming another): never taken again unless a newer epoch names it.
     * epoch LLONG_MAX: the hint came, the new epoch is not known yet. */
    struct rr_sentinel_view demoted;
    struct rr_sentinel_view promoted;  /* what the hint named instead (host, port) */
    uint64_t pending_until;            /* the hint's epoch is looked for until then */
    unsigned round;                    /* which round of questions is current */
    int asked, answered;
    bool fail_now;                     /* the round failed: fail parked requests */
    bool said_few;                     /* warned: --sync-replicas below the replica count */
    bool cert_refused;                 /* this round: a sentinel's certificate did not verify */
    uint64_t ask_after;                /* no new round before (uv_now) */
    char why[RR_ERRLEN];               /* what the sentinels said, for the error */
    struct rr_sentinel_view views[RR_MAX_NODES];  /* this round's answers */
    int n_views;
    uv_timer_t grace;                  /* a majority answered: wait a little for the rest */
};

/* ---- pure: SENTINEL MASTER's answer, and which answer wins ---- */

int rr_sentinel_parse_master(const redisReply *r, struct rr_sentinel_view *v)
{
    bool ip = false, port = false;

    memset(v, 0, sizeof *v);
    v->epoch = -1;
    if (!r || (r->type != REDIS_REPLY_ARRAY && r->type != 9 /* RESP3 map */) || r->elements % 2)
        return -1;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *val = r->element[i + 1];
        char *end;
        if (k->type != REDIS_REPLY_STRING || val->type != REDIS_REPLY_STRING)
            continue;
        if (strcmp(k->str, "ip") == 0 && val->len > 0 && val->len < sizeof v->host) {
            memcpy(v->host, val->str, val->len + 1);
            ip = true;
        } else if (strcmp(k->str, "port") == 0) {
            long p = strtol(val->str, &end, 10);
            if (*end == '\0' && p > 0 && p < 65536) {
                v->port = (int)p;
                port = true;
            }
        } else if (strcmp(k->str, "config-epoch") == 0) {
            long long e = strtoll(val->str, &end, 10);
            if (*end == '\0' && e >= 0)
                v->epoch = e;
        } else if (strcmp(k->str, "flags") == 0) {
            v->down = strstr(val->str, "o_down") != NULL;
            v->in_failover = strstr(val->str, "failover_in_progress") != NULL;
        }
    }
    return ip && port ? 0 : -1;
}

static bool names(const struct rr_sentinel_view *v, const char *host, int port)
{
    return v->port == port && strcmp(v->host, host) == 0;
}

int rr_sentinel_pick(const struct rr_sentinel_view *v, int n,
                     const struct rr_sentinel_view *demoted)
{
    int best = -1;

    for (int i = 0; i < n; i++) {
        if (demoted && demoted->port > 0 && names(&v[i], demoted->host, demoted->port) &&
            v[i].epoch <= demoted->epoch)
            continue;
        if (best < 0 || v[i].epoch > v[best].epoch ||
            (v[i].epoch == v[best].epoch && v[best].in_failover && !v[i].in_failover))
            best = i;
    }
    return best;
}

int rr_sentinel_sync_need(int want, int nrep_before)
{
    int n = nrep_before - 1;

    if (want <= 0)
        return 0;
    if (n < 1)
        n = 1;
    return n < want ? n : want;
}

static struct sent *container_of_grace(uv_handle_t *h)
{
    return (struct sent *)((char *)h - offsetof(struct sent, grace));
}

struct ask {
    struct rr_svc *s;
    unsigned round;
};

static void note(struct sent *t, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(t->why);

    if (n + 3 >= sizeof t->why)
        return;
    if (n)
        n += (size_t)snprintf(t->why + n, sizeof t->why - n, "; ");
    snprintf(t->why + n, sizeof t->why - n, fmt, a, b);
}

static void forget_master(struct rr_svc *s, struct rr_conn *on, uint64_t pause_ms)
{
    struct sent *t = s->impl;

    if (t->state == S_KNOWN && (on == NULL || on == t->master)) {
        t->state = S_UNKNOWN;
        uv_update_time(s->loop);
        t->ask_after = uv_now(s->loop) + pause_ms;
    }
}

static void on_role(struct rr_conn *c, int status, redisReply *r, void *arg)
{
    struct rr_svc *s = arg;
    struct sent *t = s->impl;

    if (s->closing || !t || status != RR_REPLY_OK)
        return;  /* a broken connection fails the requests behind it */
    if (r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
        r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0) {
        /* ROLE lists the master's replicas. Sentinel may promote any of
         * them, also one that was cut off before our write: only WAIT for
         * all of them closes the failover window (the chaos harness's
         * sentinel-sync1 scenarios show overlaps; sync2 none). */
        size_t nrep = r->elements >= 3 && r->element[2]->type == REDIS_REPLY_ARRAY
                          ? r->element[2]->elements : 0;
        if (c == t->master)
            t->nrep = (int)nrep;
        if (s->o.sync_replicas > 0 && (size_t)s->o.sync_replicas < nrep && !t->said_few) {
            t->said_few = true;
            rr_log(RR_LOG_WARN, "sync_replicas", NULL,
                   "--sync-replicas %d, but %s has %zu replicas: a failover may promote one "
                   "that never saw the lock; use --sync-replicas %zu to keep the lock across "
                   "any failover", s->o.sync_replicas, rr_conn_name(c), nrep, nrep);
        }
        return;
    }
    t->not_master = c;
    rr_svc_set_error(s, "%s is not the master of '%s' (ROLE says %s); asking the sentinels again",
              rr_conn_name(c), s->ep.master,
              r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                      r->element[0]->type == REDIS_REPLY_STRING
                  ? r->element[0]->str : "something else");
    forget_master(s, c, ASK_PAUSE_MS);
}

static void demote(struct sent *t, const char *host, int port, long long epoch)
{
    snprintf(t->demoted.host, sizeof t->demoted.host, "%s", host);
    t->demoted.port = port;
    t->demoted.epoch = epoch;
}

/* "OLDIP OLDPORT NEWIP NEWPORT" of a +switch-master: the old master is
 * demoted; the epoch that did it is the one the sentinels name the new
 * master with (decide learns it from the next answers). */
static void remember_demoted(struct rr_svc *s, const char *what)
{
    struct sent *t = s->impl;
    char oh[256], nh[256];
    int op, np;

    if (sscanf(what, "%255s %d %255s %d", oh, &op, nh, &np) != 4 || op <= 0 || np <= 0)
        return;
    demote(t, oh, op, LLONG_MAX);
    snprintf(t->promoted.host, sizeof t->promoted.host, "%s", nh);
    t->promoted.port = np;
    uv_update_time(s->loop);
    t->pending_until = uv_now(s->loop) + PENDING_MS;
    rr_log(RR_LOG_INFO, "failover", NULL, "the sentinels demoted %s:%d (now %s:%d)", oh, op, nh, np);
}

/* ["message", "+switch-master", "NAME OLDIP OLDPORT NEWIP NEWPORT"]: a
 * hint only (the renewals would find out too); ask again at once. */
static void on_hint(struct rr_conn *c, redisReply *msg, void *arg)
{
    struct rr_svc *s = arg;
    const redisReply *p;
    size_t n;

    (void)c;
    if (s->closing || !s->impl || msg->type != REDIS_REPLY_ARRAY || msg->elements != 3)
        return;
    p = msg->element[2];
    n = strlen(s->ep.master);
    if (p->type != REDIS_REPLY_STRING || p->len <= n || strncmp(p->str, s->ep.master, n) != 0 ||
        p->str[n] != ' ')
        return;
    remember_demoted(s, p->str + n + 1);
    forget_master(s, NULL, 0);
    /* Our subscriptions stay on the old master, which may go on as a master
     * for a while: the new master's messages (a holder's release waking a
     * waiter) would never reach us. Subscribe again there. */
    rr_svc_resubscribe(s);
}

/* A connection to a sentinel. It has no databases and credentials of its
 * own (--sentinel-user, --sentinel-password), never the data nodes'; its
 * pushes are ours (on_hint), not the service's subscribers'. */
static struct rr_conn *sentinel_conn(struct rr_svc *s, const char *host, int port)
{
    struct rr_endpoint ep;
    struct rr_conn_opts o = s->o.conn;
    struct rr_conn *c;

    rr_svc_endpoint(s, host, port, &ep);
    ep.db = 0;
    ep.has_user = ep.has_password = false;
    o.user = s->o.sentinel_user;
    o.password = s->o.sentinel_password;
    c = rr_conn_new(s->loop, &ep, &o);
    explicit_bzero(&ep, sizeof ep);
    return c;
}

static void on_hint_subscribed(struct rr_conn *c, int status, redisReply *r, void *arg)
{
    (void)c;
    (void)status;
    (void)r;
    (void)arg;
}

static void subscribe_hints(struct rr_svc *s)
{
    struct sent *t = s->impl;
    static const char *const sub[] = { "SUBSCRIBE", "+switch-master", NULL };

    for (int i = 0; i < t->n; i++) {
        if (t->hint[i])
            continue;
        if (!(t->hint[i] = sentinel_conn(s, s->ep.nodes[i].host, s->ep.nodes[i].port)))
            return;
        rr_conn_on_message(t->hint[i], on_hint, s);
        rr_conn_commandv(t->hint[i], on_hint_subscribed, NULL, (const char **)sub);
    }
}

/* The master moves from t->host:t->port to host:port with epoch: a
 * failover when the epoch is newer or a +switch-master named the old one.
 * The old one is demoted then, and until it re-attaches as a replica the
 * writes need only the replicas the new master can have (service.c WAITs
 * for that many: a WAIT for one that is not there would hold every write,
 * the release too, for its whole timeout), until a WAIT answers that all
 * of them confirmed (sent_judge). */
static void switched(struct rr_svc *s, long long epoch)
{
    struct sent *t = s->impl;
    bool hinted = t->demoted.port == t->port && strcmp(t->demoted.host, t->host) == 0;

    if (!hinted && epoch <= t->epoch)
        return;
    demote(t, t->host, t->port, epoch > t->epoch ? epoch : t->epoch);
    t->pending_until = 0;
    s->sync_need = rr_sentinel_sync_need(s->o.sync_replicas, t->nrep);
    if (s->sync_need < s->o.sync_replicas)
        rr_log(RR_LOG_NOTICE, "sync_replicas", NULL,
               "after the failover, %d replica%s must confirm until %s:%d re-attaches as a replica",
               s->sync_need, s->sync_need == 1 ? "" : "s", t->host, t->port);
}

/* A sentinel named host:port (with epoch): take it as the master. */
static void adopt(struct rr_svc *s, const char *host, int port, long long epoch)
{
    struct sent *t = s->impl;
    static const char *const role[] = { "ROLE", NULL };

    if (!t->master || t->port != port || strcmp(t->host, host) != 0) {
        if (t->master) {
            rr_log(RR_LOG_NOTICE, "failover", NULL,
                   "the sentinels name a new master of '%s': %s:%d (was %s:%d)", s->ep.master,
                   host, port, t->host, t->port);
            switched(s, epoch);
            rr_conn_close(t->master);  /* what was pending there is answered CLOSED */
        }
        t->nrep = -1;
        t->not_master = NULL;
        snprintf(t->host, sizeof t->host, "%s", host);
        t->port = port;
        t->epoch = epoch;
        t->master = rr_svc_node_conn(s, host, port);
        if (!t->master) {
            rr_svc_set_error(s, "out of memory");
            t->fail_now = true;
            t->state = S_UNKNOWN;
            return;
        }
    }
    if (epoch > t->epoch)
        t->epoch = epoch;
    t->state = S_KNOWN;
    if (t->not_master == t->master)
        t->not_master = NULL;
    subscribe_hints(s);
    /* First on the (re)opened connection, ahead of the parked requests. */
    rr_conn_commandv(t->master, on_role, s, (const char **)role);
}

static void decide(struct rr_svc *s);
static void on_grace(uv_timer_t *h);

static void on_answer(struct rr_conn *c, int status, redisReply *r, void *arg)
{
    struct ask *a = arg;
    struct rr_svc *s = a->s;
    struct sent *t = s->impl;
    bool current = !s->closing && t && a->round == t->round && t->state == S_ASKING;

    free(a);
    if (!current)
        return;
    t->answered++;
    if (status != RR_REPLY_OK && strstr(rr_conn_error(c), "authentication failed")) {
        note(t, "%s refused our sentinel credentials: check --sentinel-password-file or "
             "$REDLOCK_SENTINEL_PASSWORD (and $REDLOCK_SENTINEL_USER)%s", rr_conn_name(c), "");
    } else if (status != RR_REPLY_OK) {
        /* A certificate that does not verify is a refusal (78), not an outage. */
        t->cert_refused |= rr_conn_refused(c);
        note(t, "%s%s", rr_conn_error(c), "");
    } else if (r->type == REDIS_REPLY_ERROR && (rr_svc_is_error(r, "NOAUTH") || rr_svc_is_error(r, "WRONGPASS"))) {
        note(t, "%s requires a password: set --sentinel-password-file or "
             "$REDLOCK_SENTINEL_PASSWORD%s", rr_conn_name(c), "");
    } else if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "unknown command")) {
        note(t, "%s is not a sentinel (it does not know SENTINEL): give the sentinels' "
             "addresses (port 26379 by default)%s", rr_conn_name(c), "");
    } else if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "No such master")) {
        note(t, "%s does not know a master named '%s'", rr_conn_name(c), s->ep.master);
    } else if (r->type != REDIS_REPLY_ERROR) {
        struct rr_sentinel_view v;
        if (rr_sentinel_parse_master(r, &v) == 0 && t->n_views < RR_MAX_NODES) {
            t->views[t->n_views++] = v;
            /* A majority answered: the rest get a moment, not a timeout. */
            if (t->answered < t->asked && t->n_views >= t->n / 2 + 1 &&
                !uv_is_active((uv_handle_t *)&t->grace))
                uv_timer_start(&t->grace, on_grace, GRACE_MS, 0);
            if (t->answered < t->asked)
                return;
            decide(s);
            return;
        }
        note(t, "%s: %s", rr_conn_name(c), "an answer without the master's address");
    } else if (r->type == REDIS_REPLY_ERROR) {
        note(t, "%s: %s", rr_conn_name(c), r->str);
    } else {
        note(t, "%s: %s", rr_conn_name(c), "unexpected reply");
    }
    if (t->answered < t->asked)
        return;
    decide(s);
}

/* The round is over (everyone answered, or the grace after a majority
 * ran out): the answer with the highest config-epoch wins. During a
 * failover the leader names the promoted replica with a new epoch while
 * the others still name the old master, which may still take writes: the
 * first answer is not good enough. */
/* A +switch-master came: its epoch is the newest a sentinel names the
 * promoted master with. Not seen within PENDING_MS: the hint is forgotten. */
static void learn_demoted_epoch(struct rr_svc *s)
{
    struct sent *t = s->impl;
    long long e = -1;

    if (t->demoted.port <= 0 || t->demoted.epoch != LLONG_MAX)
        return;
    for (int i = 0; i < t->n_views; i++)
        if (names(&t->views[i], t->promoted.host, t->promoted.port) && t->views[i].epoch > e)
            e = t->views[i].epoch;
    uv_update_time(s->loop);
    if (e >= 0)
        t->demoted.epoch = e;
    else if (uv_now(s->loop) >= t->pending_until)
        t->demoted.port = 0;
}

static void decide(struct rr_svc *s)
{
    struct sent *t = s->impl;
    int best;

    uv_timer_stop(&t->grace);
    learn_demoted_epoch(s);
    if ((best = rr_sentinel_pick(t->views, t->n_views, &t->demoted)) >= 0) {
        adopt(s, t->views[best].host, t->views[best].port, t->views[best].epoch);
        rr_svc_kick(s);
        return;
    }
    if (t->n_views > 0) {
        /* Only sentinels that have not seen the failover yet answered:
         * they name the master it demoted. Ask again in a moment. */
        rr_svc_set_error(s, "the sentinels still name %s:%d, the master of '%s' that a failover "
                  "demoted", t->demoted.host, t->demoted.port, s->ep.master);
        t->state = S_UNKNOWN;
        uv_update_time(s->loop);
        t->ask_after = uv_now(s->loop) + ASK_PAUSE_MS;
        rr_svc_kick(s);
        return;
    }
    rr_svc_set_error(s, "no sentinel named the master of '%s': %s", s->ep.master, t->why);
    s->refused = t->cert_refused;
    t->state = S_UNKNOWN;
    t->fail_now = true;
    rr_svc_kick(s);
    /* A callback may have closed s: its state is gone then. */
    if ((t = s->impl) != NULL)
        t->fail_now = false;
}

static void on_grace(uv_timer_t *h)
{
    struct rr_svc *s = h->data;
    struct sent *t = s->impl;

    if (!s->closing && t && t->state == S_ASKING)
        decide(s);
}

static void start_round(struct rr_svc *s)
{
    struct sent *t = s->impl;
    /* SENTINEL MASTER rather than get-master-addr-by-name: it carries the
     * config-epoch, which says whose view is the newest (decide). */
    const char *argv[] = { "SENTINEL", "MASTER", s->ep.master, NULL };

    t->state = S_ASKING;
    t->round++;
    t->asked = t->answered = 0;
    t->n_views = 0;
    t->cert_refused = false;
    t->why[0] = '\0';
    for (int i = 0; i < t->n; i++) {
        struct ask *a = malloc(sizeof *a);
        if (!a)
            continue;
        *a = (struct ask){ .s = s, .round = t->round };
        if (rr_conn_commandv(t->sc[i], on_answer, a, argv) != 0) {
            free(a);
            continue;
        }
        t->asked++;
    }
    if (t->asked == 0) {
        rr_svc_set_error(s, "cannot ask the sentinels of '%s': out of memory", s->ep.master);
        t->state = S_UNKNOWN;
        t->fail_now = true;
    }
}

static int sent_init(struct rr_svc *s)
{
    struct sent *t = calloc(1, sizeof *t);

    if (!t)
        return -1;
    s->impl = t;
    t->nrep = -1;
    t->epoch = -1;
    uv_timer_init(s->loop, &t->grace);
    t->grace.data = s;
    for (int i = 0; i < s->ep.n_nodes; i++) {
        if (!(t->sc[i] = sentinel_conn(s, s->ep.nodes[i].host, s->ep.nodes[i].port)))
            return -1;
        t->n++;
    }
    return 0;
}

static enum svc_route sent_route(struct rr_svc *s, struct svc_req *q, struct rr_conn **c)
{
    struct sent *t = s->impl;
    uint64_t now;

    if (t->fail_now)
        return SVC_FAILED;
    if (t->state == S_KNOWN) {
        *c = t->master;
        return SVC_ROUTED;
    }
    if (t->state == S_UNKNOWN) {
        uv_update_time(s->loop);
        now = uv_now(s->loop);
        if (now < t->ask_after) {
            q->not_before = t->ask_after;
            return SVC_PARKED;
        }
        start_round(s);
        if (t->fail_now)
            return SVC_FAILED;
    }
    return SVC_PARKED;
}

static enum svc_verdict sent_judge(struct rr_svc *s, struct svc_req *q)
{
    struct sent *t = s->impl;
    const redisReply *r = q->reply;

    if (q->status == RR_REPLY_OK) {
        if (rr_svc_is_error(r, "READONLY") || rr_svc_is_error(r, "LOADING") ||
            rr_svc_is_error(r, "MASTERDOWN")) {
            /* Refused unrun: a replica, a restarting node, a master that
             * lost its own master. Find the master again. */
            rr_svc_error_reply(s, q);
            forget_master(s, q->on, ASK_PAUSE_MS);
            uv_update_time(s->loop);
            q->not_before = uv_now(s->loop) + ASK_PAUSE_MS;
            return SVC_RESEND;
        }
        if (q->write && s->o.sync_replicas > 0 && q->acked >= s->o.sync_replicas) {
            s->sync_need = s->o.sync_replicas;  /* every replica is back */
        } else if (q->write && s->o.sync_replicas > 0 && q->acked < s->sync_need) {
            /* The replicas may follow another master now: ask again. The
             * answer stands (lock.c does not count it). */
            forget_master(s, q->on, 0);
        }
        if (q->on == t->not_master && r->type != REDIS_REPLY_ERROR) {
            /* A writable replica ran it: that lock is not on the master. */
            rr_svc_set_error(s, "%s is not the master of '%s' (it ran the request as a replica)",
                      rr_conn_name(q->on), s->ep.master);
            q->status = RR_REPLY_IOERR;
        }
        return SVC_DELIVER;
    }
    forget_master(s, q->on, q->unsent ? ASK_PAUSE_MS : 0);
    /* A refused handshake (password, db, TLS certificate) is not a failover. */
    if (q->unsent && !rr_conn_refused(q->on) && !strstr(rr_conn_error(q->on), "authentication failed") &&
        !strstr(rr_conn_error(q->on), "cannot select db")) {
        uv_update_time(s->loop);
        q->not_before = uv_now(s->loop) + ASK_PAUSE_MS;
        return SVC_RESEND;
    }
    return SVC_DELIVER;
}

static void free_sent(uv_handle_t *h)
{
    free(container_of_grace(h));
}

static void sent_down(struct rr_svc *s, struct rr_conn *c)
{
    forget_master(s, c, 0);
}

static void sent_close(struct rr_svc *s)
{
    struct sent *t = s->impl;

    for (int i = 0; i < t->n; i++) {
        rr_conn_close(t->sc[i]);
        if (t->hint[i])
            rr_conn_close(t->hint[i]);
    }
    if (t->master)
        rr_conn_close(t->master);
    s->impl = NULL;
    uv_close((uv_handle_t *)&t->grace, free_sent);
}

const struct rr_svc_backend rr_svc_sentinel = {
    .kind = "sentinel",
    .ep_kind = RR_EP_SENTINEL,
    .init = sent_init,
    .route = sent_route,
    .judge = sent_judge,
    .close = sent_close,
    .down = sent_down,
};
