/* queue.c — the waiter's side of fair waiting (see queue.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "queue.h"
#include "rand.h"
#include "scripts.h"
#include "svc_config.h"

int64_t rr_queue_entry_ttl(int64_t ttl_ms)
{
    int64_t t = ttl_ms / 2;

    if (t < 200)
        t = 200;
    if (t > 10000)
        t = 10000;
    return t;
}

int64_t rr_queue_refresh_ms(int64_t entry_ttl_ms)
{
    int64_t r = entry_ttl_ms / 3;

    return r < 1 ? 1 : r;
}

int64_t rr_queue_rank_ttl(int64_t entry_ttl_ms, long long rank)
{
    const long long near2 = (long long)RR_QUEUE_NEAR * RR_QUEUE_NEAR;

    if (rank < RR_QUEUE_NEAR)
        return entry_ttl_ms;
    /* rank * rank, without overflow, at most 100 * NEAR * NEAR. */
    long long f = rank > 10LL * RR_QUEUE_NEAR ? 100 * near2 : rank * rank;
    return entry_ttl_ms * f / near2;
}

int64_t rr_queue_sleep_ms(long long rank, int64_t pttl, int64_t entry_ttl_ms,
                          int64_t backoff, long rnd, int64_t left)
{
    int64_t s;

    if (rank >= 0) {
        /* Woken by message when our turn comes (or when we come near it);
         * the timer refreshes our entry and covers a lost message or a dead
         * waiter ahead of us. */
        s = rr_queue_refresh_ms(rr_queue_rank_ttl(entry_ttl_ms, rank));
        if (rank == 0 && pttl >= 0 && pttl + 1 < s)
            s = pttl + 1;
    } else {
        if (backoff < 2)
            backoff = 2;
        s = backoff / 2 + (rnd < 0 ? -(rnd + 1) : rnd) % (backoff / 2 + 1);
        if (pttl >= 0 && pttl + 1 < s)
            s = pttl + 1;
    }
    if (s > left)
        s = left;
    return s < 1 ? 1 : s;
}

struct rr_waiter {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    struct rr_svc **conns;
    int n;
    struct rr_svc *subs[RR_MAX_ENDPOINTS];
    struct rr_job_keys keys;
    char id[40];
    char qkey[400];
    char chan[400];
    bool subscribed, queued, leaving, closed;
    /* Per master: its subscription took (we listen there), or it failed
     * (its connection never came up: subscribe again at the next sleep). */
    bool listening[RR_MAX_ENDPOINTS], sub_failed[RR_MAX_ENDPOINTS];
    bool sub_pending[RR_MAX_ENDPOINTS];   /* SUBSCRIBE sent, not yet answered */
    uv_timer_t timer;
    rr_wake_fn wake;
    void *wake_arg;
    void (*retry)(void *);
    void *retry_arg;
    int leave_pending;
    rr_left_fn left_cb;
    void *left_arg;
};

struct rr_waiter *rr_waiter_new(uv_loop_t *loop, const struct rr_config *cfg,
                                struct rr_svc **conns, int n,
                                const struct rr_job_keys *keys, rr_wake_fn wake,
                                void *arg, char *err, size_t errlen)
{
    struct rr_waiter *w = calloc(1, sizeof(*w));

    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* 96 bits: two waiters of one job do not draw the same id. */
    if (rr_random_hex(w->id, 12) != 0) {
        snprintf(err, errlen, "cannot draw a random waiter id: %s", strerror(errno));
        free(w);
        return NULL;
    }
    w->loop = loop;
    w->cfg = cfg;
    w->conns = conns;
    w->n = n;
    w->keys = *keys;
    w->wake = wake;
    w->wake_arg = arg;
    snprintf(w->qkey, sizeof(w->qkey), "%s%s", keys->q_prefix, w->id);
    snprintf(w->chan, sizeof(w->chan), "%s%s", keys->wake_prefix, w->id);
    uv_timer_init(loop, &w->timer);
    w->timer.data = w;
    return w;
}

const char *rr_waiter_id(const struct rr_waiter *w)
{
    return w->id;
}

static void close_subs(struct rr_waiter *w)
{
    for (int i = 0; i < w->n; i++) {
        if (w->subs[i])
            rr_svc_close(w->subs[i]);
        w->subs[i] = NULL;
        w->listening[i] = w->sub_pending[i] = false;
    }
}

static void on_message(struct rr_svc *c, redisReply *msg, void *arg)
{
    struct rr_waiter *w = arg;

    (void)c;
    /* Only our own channel is subscribed: a message is for us. msg NULL:
     * subscribed again after the node went down; one may have been missed. */
    (void)msg;
    if (w->leaving || w->closed)
        return;
    /* The try this starts replaces the timer's: two at once would each
     * draw a token, and the lock one took would be renewed with the other's. */
    uv_timer_stop(&w->timer);
    w->wake(w->wake_arg);
}

static void on_timer(uv_timer_t *t);

/* Which master's connection in set c is, -1 if none, or if we are done
 * waiting (a late reply). */
static int master_of(const struct rr_waiter *w, struct rr_svc *const *set,
                     const struct rr_svc *c)
{
    if (w->leaving || w->closed)
        return -1;
    for (int i = 0; i < w->n; i++)
        if (set[i] == c)
            return i;
    return -1;
}

static void on_heard(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct rr_waiter *w = arg;
    int i = master_of(w, w->conns, c);

    if (i < 0)
        return;
    /* ["wake:ID", n]: n >= 1, the scripts hear us too (an ACL without
     * PUBSUB answers NOPERM: they cannot, and our entry keeps the short
     * TTL and refresh). */
    w->listening[i] = status == RR_REPLY_OK && r->type == REDIS_REPLY_ARRAY &&
                      r->elements == 2 && r->element[1]->type == REDIS_REPLY_INTEGER &&
                      r->element[1]->integer >= 1;
    uv_timer_stop(&w->timer);
    w->wake(w->wake_arg);
}

/* Subscribed on master i: ask there, as the scripts do (PUBSUB NUMSUB, or
 * SHARDNUMSUB on a cluster), whether we are heard; on_heard then tries
 * again. -1 if the question could not be sent. */
static int hear_us(struct rr_waiter *w, int i)
{
    const char *q[] = { "PUBSUB", rr_svc_sharded(w->conns[i]) ? "SHARDNUMSUB" : "NUMSUB",
                        w->chan, NULL };

    return rr_svc_commandv(w->conns[i], on_heard, w, q) == 0 ? 0 : -1;
}

static void on_subscribed(struct rr_svc *c, int status, redisReply *reply, void *arg)
{
    struct rr_waiter *w = arg;
    int i = master_of(w, w->subs, c);

    if (i < 0)
        return;
    w->sub_pending[i] = false;
    /* Its connection never came up (a herd's connects time out), or the
     * server refused it for now (maxclients): a release meanwhile woke
     * nobody. Try soon, and subscribe again then (rr_waiter_sleep),
     * rather than poll a whole refresh. An ACL without SUBSCRIBE (NOPERM)
     * is for good: the timer polls. */
    if (status != RR_REPLY_OK ||
        (reply->type == REDIS_REPLY_ERROR && strncmp(reply->str, "NOPERM", 6) != 0)) {
        w->sub_failed[i] = true;
        if (w->retry && uv_timer_get_due_in(&w->timer) > 200)
            uv_timer_start(&w->timer, on_timer, 200, 0);
        return;
    }
    if (reply->type != REDIS_REPLY_ERROR && hear_us(w, i) == 0)
        return;
    /* A release between our try and the subscription sent its message to
     * nobody: try once more now. */
    uv_timer_stop(&w->timer);
    w->wake(w->wake_arg);
}

/* Subscribe on master i (again, after a failure). */
static void subscribe_one(struct rr_waiter *w, int i)
{
    const char *sub[] = { "SUBSCRIBE", w->chan, NULL };

    if (w->subs[i])
        rr_svc_close(w->subs[i]);
    w->sub_failed[i] = false;
    w->subs[i] = rr_svc_config_new(w->loop, w->cfg, i);
    if (!w->subs[i])
        return;
    w->sub_pending[i] = true;
    rr_svc_on_message(w->subs[i], on_message, w);
    rr_svc_commandv(w->subs[i], on_subscribed, w, sub);
}

static void subscribe(struct rr_waiter *w)
{
    w->subscribed = true;
    for (int i = 0; i < w->n; i++)
        subscribe_one(w, i);
}

static void on_timer(uv_timer_t *t)
{
    struct rr_waiter *w = t->data;

    if (!w->leaving && !w->closed && w->retry)
        w->retry(w->retry_arg);
}

void rr_waiter_sleep(struct rr_waiter *w, int64_t sleep_ms, bool queued,
                     void (*retry)(void *), void *arg)
{
    if (w->closed || w->leaving)
        return;
    w->queued |= queued;
    w->retry = retry;
    w->retry_arg = arg;
    if (!w->subscribed)
        subscribe(w);
    /* Far back, we refresh rarely only once every master hears us: where
     * we do not listen, our entry lives the short TTL (acquire.lua). Near
     * the head (a sleep no longer than the short refresh), while a
     * SUBSCRIBE is unanswered (a herd's connects: a SYN dropped waits a
     * second), a release's message would reach nobody: look every 200 ms. */
    int64_t cap = rr_queue_refresh_ms(rr_queue_entry_ttl(w->cfg->ttl_ms));
    bool near = sleep_ms <= cap;
    for (int i = 0; i < w->n; i++) {
        if (w->sub_failed[i])
            subscribe_one(w, i);
        if (!w->listening[i] && sleep_ms > cap)
            sleep_ms = cap;
        if (near && w->sub_pending[i] && sleep_ms > 200)
            sleep_ms = 200;
    }
    uv_timer_start(&w->timer, on_timer, (uint64_t)(sleep_ms < 1 ? 1 : sleep_ms), 0);
}

void rr_waiter_stop(struct rr_waiter *w)
{
    if (!w)
        return;
    uv_timer_stop(&w->timer);
    close_subs(w);
}

static void on_leave_reply(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct rr_waiter *w = arg;

    (void)c;
    if (status != RR_REPLY_OK || r->type == REDIS_REPLY_ERROR)
        rr_log(RR_LOG_DEBUG, "queue", NULL,
               "could not leave the queue on one master; the place expires by itself");
    if (--w->leave_pending == 0 && w->left_cb) {
        rr_left_fn cb = w->left_cb;
        w->left_cb = NULL;
        cb(w->left_arg);
    }
}

int rr_waiter_leave(struct rr_waiter *w, rr_left_fn cb, void *arg)
{
    if (!w || !w->queued || w->leaving || w->closed)
        return -1;

    const char *keys[RR_LEAVE_NKEYS] = {
        [RR_LEAVE_KEY_QUEUE] = w->keys.queue, [RR_LEAVE_KEY_WAITER_KEY] = w->qkey,
    };
    const char *args[RR_LEAVE_NARGS] = {
        [RR_LEAVE_ARG_WAITER] = w->id, [RR_LEAVE_ARG_WAITER_PREFIX] = w->keys.q_prefix,
        [RR_LEAVE_ARG_WAKE_PREFIX] = w->keys.wake_prefix, [RR_LEAVE_ARG_SHARDED] = "0",
    };
    w->leaving = true;
    rr_waiter_stop(w);
    w->left_cb = cb;
    w->left_arg = arg;
    w->leave_pending = 1;   /* held until every request is out */
    for (int i = 0; i < w->n; i++) {
        args[RR_LEAVE_ARG_SHARDED] = rr_script_sharded(w->conns[i]);
        if (rr_script_call(w->conns[i], RR_SCRIPT_LEAVE, RR_LEAVE_NKEYS, keys, RR_LEAVE_NARGS,
                           args, on_leave_reply, w) == 0)
            w->leave_pending++;
    }
    if (--w->leave_pending == 0) {
        w->left_cb = NULL;
        return -1;
    }
    return 0;
}

void rr_waiter_close(struct rr_waiter *w)
{
    if (!w || w->closed)
        return;
    w->closed = true;
    rr_waiter_stop(w);
    if (!uv_is_closing((uv_handle_t *)&w->timer))
        uv_close((uv_handle_t *)&w->timer, NULL);
}

void rr_waiter_free(struct rr_waiter *w)
{
    free(w);
}
