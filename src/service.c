/* service.c — the lock-service seam (service.h): requests, resends, WAIT
 * for --sync-replicas, subscribing again; the kinds are backends
 * (service_impl.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "service_impl.h"

/* ---- helpers for backends ---- */

void rr_svc_set_error(struct rr_svc *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

int rr_svc_excerpt(const redisReply *r)
{
    return (int)(r->len > 200 ? 200 : r->len);
}

void rr_svc_error_reply(struct rr_svc *s, const struct svc_req *q)
{
    rr_svc_set_error(s, "%s: %.*s", rr_conn_name(q->on), rr_svc_excerpt(q->reply), q->reply->str);
}

bool rr_svc_is_error(const redisReply *r, const char *word)
{
    size_t n = strlen(word);

    return r && r->type == REDIS_REPLY_ERROR && r->str && r->len >= n &&
           strncasecmp(r->str, word, n) == 0 && (r->len == n || r->str[n] == ' ');
}

static void on_conn_message(struct rr_conn *c, redisReply *msg, void *arg)
{
    struct rr_svc *s = arg;

    (void)c;
    if (s->msg_fn)
        s->msg_fn(s, msg, s->msg_arg);
}

static void start_resub(struct rr_svc *s);

static void on_node_down(struct rr_conn *c, void *arg)
{
    struct rr_svc *s = arg;

    if (s->closing)
        return;
    if (s->be->down)
        s->be->down(s, c);
    if (s->n_subs > 0 && c == s->sub_conn) {
        s->sub_conn = NULL;
        start_resub(s);
    }
}

void rr_svc_endpoint(const struct rr_svc *s, const char *host, int port, struct rr_endpoint *out)
{
    *out = s->ep;
    if (host) {
        out->transport = RR_TRANSPORT_TCP;
        snprintf(out->host, sizeof out->host, "%s", host);
        out->port = port;
        if (strchr(host, ':'))
            snprintf(out->display, sizeof out->display, "[%s]:%d", host, port);
        else
            snprintf(out->display, sizeof out->display, "%s:%d", host, port);
    }
    out->kind = RR_EP_DIRECT;
}

struct rr_conn *rr_svc_node_conn(struct rr_svc *s, const char *host, int port)
{
    struct rr_endpoint ep;
    struct rr_conn *c;

    rr_svc_endpoint(s, host, port, &ep);
    c = rr_conn_new(s->loop, &ep, &s->o.conn);
    explicit_bzero(&ep, sizeof ep);
    if (c) {
        rr_conn_on_message(c, on_conn_message, s);
        rr_conn_on_down(c, on_node_down, s);
    }
    return c;
}

/* ---- requests ---- */

static void send_req(struct svc_req *q);
static void arm_timer(struct rr_svc *s);

static void free_req(struct svc_req *q)
{
    for (int i = 0; q->argv && i < q->argc; i++)
        free(q->argv[i]);
    free(q->argv);
    free(q->argvlen);
    if (q->reply)
        freeReplyObject(q->reply);
    free(q);
}

static void park(struct svc_req *q);

static void deliver(struct svc_req *q, int status)
{
    struct rr_svc *s = q->s;

    if (s->queueing && !s->closing) {
        /* A callback never runs inside the call that queued it: answer
         * from the timer, on the next turn of the loop. */
        q->fail_status = status;
        q->not_before = 0;
        park(q);
        return;
    }

    s->acked = q->acked;
    s->wait_err = q->wait_err;
    s->unsent = status != RR_REPLY_OK && q->unsent;
    q->cb(s, status, status == RR_REPLY_OK ? q->reply : NULL, q->arg);
    s->acked = -1;
    s->wait_err = NULL;
    s->unsent = false;
    free_req(q);
}

static void park(struct svc_req *q)
{
    struct rr_svc *s = q->s;

    q->next = NULL;
    if (s->parked_tail)
        s->parked_tail->next = q;
    else
        s->parked = q;
    s->parked_tail = q;
    arm_timer(s);
}

/* One send of q is over (every part answered). */
static void send_done(struct svc_req *q)
{
    struct rr_svc *s = q->s;
    enum svc_verdict v;

    snprintf(s->node, sizeof s->node, "%s", rr_conn_name(q->on));
    if (q->status != RR_REPLY_OK && q->status != RR_REPLY_CLOSED)
        rr_svc_set_error(s, "%s", rr_conn_error(q->on));
    s->refused = q->status != RR_REPLY_OK && rr_conn_refused(q->on);
    if (s->closing || q->status == RR_REPLY_CLOSED) {
        deliver(q, RR_REPLY_CLOSED);
        return;
    }
    v = s->be->judge(s, q);
    uv_update_time(s->loop);
    if (v == SVC_RESEND && q->sends < RR_SVC_MAX_SENDS && uv_now(s->loop) < q->deadline) {
        if (q->reply)
            freeReplyObject(q->reply);
        q->reply = NULL;
        q->on = NULL;
        if (q->not_before > uv_now(s->loop))
            park(q);
        else
            send_req(q);
        return;
    }
    deliver(q, q->status);
}

static void on_part(struct svc_req *q)
{
    if (--q->due == 0)
        send_done(q);
}

static bool is_subscribe(const struct svc_req *q)
{
    const char *c = q->argv[0];

    return strcasecmp(c, "SUBSCRIBE") == 0 || strcasecmp(c, "SSUBSCRIBE") == 0 ||
           strcasecmp(c, "PSUBSCRIBE") == 0;
}

/* Keep a subscription that took, to send it again after a failover. */
static void remember_sub(struct rr_svc *s, const struct svc_req *q, struct rr_conn *c)
{
    struct svc_sub *sb;

    s->sub_conn = c;
    if (q->resub || s->n_subs == SVC_MAX_SUBS)
        return;
    sb = &s->subs[s->n_subs];
    sb->argv = calloc((size_t)q->argc, sizeof *sb->argv);
    sb->argvlen = calloc((size_t)q->argc, sizeof *sb->argvlen);
    if (!sb->argv || !sb->argvlen)
        goto fail;
    for (int i = 0; i < q->argc; i++) {
        if (!(sb->argv[i] = malloc(q->argvlen[i] + 1)))
            goto fail;
        memcpy(sb->argv[i], q->argv[i], q->argvlen[i] + 1);
        sb->argvlen[i] = q->argvlen[i];
        sb->argc = i + 1;
    }
    s->n_subs++;
    return;
fail:
    for (int i = 0; sb->argv && i < sb->argc; i++)
        free(sb->argv[i]);
    free(sb->argv);
    free(sb->argvlen);
    memset(sb, 0, sizeof *sb);
}

static void on_cmd(struct rr_conn *c, int status, redisReply *reply, void *arg)
{
    struct svc_req *q = arg;

    q->status = status;
    q->unsent = status != RR_REPLY_OK && rr_conn_unsent(c);
    if (status == RR_REPLY_OK) {
        rr_conn_keep_reply(c);
        q->reply = reply;
        if (reply->type != REDIS_REPLY_ERROR && is_subscribe(q))
            remember_sub(q->s, q, c);
    }
    on_part(q);
}

static void on_wait(struct rr_conn *c, int status, redisReply *reply, void *arg)
{
    struct svc_req *q = arg;

    (void)c;
    if (status == RR_REPLY_OK && reply->type == REDIS_REPLY_INTEGER)
        q->acked = reply->integer;
    else if (status == RR_REPLY_OK && reply->type == REDIS_REPLY_ERROR && reply->str)
        /* A refusal (NOPERM: the ACL lacks +wait) is not a slow replica. */
        snprintf(q->wait_err, sizeof q->wait_err, "%s", reply->str);
    on_part(q);
}

static void on_preamble(struct rr_conn *c, int status, redisReply *reply, void *arg)
{
    (void)c;
    (void)status;
    (void)reply;
    on_part(arg);
}

static void send_req(struct svc_req *q)
{
    struct rr_svc *s = q->s;
    struct rr_conn *c = NULL;
    const char *const *pre;
    enum svc_route rt;

    q->status = RR_REPLY_IOERR;
    q->unsent = false;
    q->acked = -1;
    q->wait_err[0] = '\0';
    rt = s->be->route(s, q, &c);
    if (rt == SVC_PARKED) {
        park(q);
        return;
    }
    if (rt == SVC_FAILED || !c) {
        deliver(q, RR_REPLY_IOERR);
        return;
    }
    q->on = c;
    q->sends++;
    q->due = 1;
    if (s->be->preamble && (pre = s->be->preamble(s, q)) != NULL &&
        rr_conn_commandv(c, on_preamble, q, (const char **)pre) == 0)
        q->due++;
    if (rr_conn_command(c, on_cmd, q, q->argc, (const char **)q->argv, q->argvlen) != 0) {
        q->due--;
        if (q->due == 0)
            deliver(q, RR_REPLY_IOERR);
        /* else the preamble's callback ends this send as IOERR */
        return;
    }
    if (q->write && s->o.sync_replicas > 0) {
        char n[16], t[24];
        int64_t ms = s->o.conn.request_timeout_ms / 2;
        const char *argv[] = { "WAIT", n, t, NULL };
        snprintf(n, sizeof n, "%d", s->sync_need);
        snprintf(t, sizeof t, "%lld", (long long)(ms > 0 ? ms : 1));
        if (rr_conn_commandv(c, on_wait, q, argv) == 0)
            q->due++;
    }
}

/* The timer: answer parked requests past their deadline, resend those
 * whose backoff is over. */
static void on_timer(uv_timer_t *t)
{
    struct rr_svc *s = t->data;

    rr_svc_kick(s);
}

static void arm_timer(struct rr_svc *s)
{
    uint64_t now, due = UINT64_MAX;

    if (s->closing)
        return;
    uv_update_time(s->loop);
    now = uv_now(s->loop);
    for (struct svc_req *q = s->parked; q; q = q->next) {
        uint64_t at = q->fail_status ? now : q->not_before > now ? q->not_before : q->deadline;
        if (at < due)
            due = at;
    }
    if (due == UINT64_MAX)
        uv_timer_stop(&s->timer);
    else
        uv_timer_start(&s->timer, on_timer, due > now ? due - now : 0, 0);
}

void rr_svc_kick(struct rr_svc *s)
{
    struct svc_req *q, **tail = &s->kicking;
    uint64_t now;

    /* The list being walked hangs off s, so that a callback that closes s
     * (rr_svc_close kicks too) answers the rest before close returns. What
     * is parked again goes to s->parked, not back into this walk. */
    while (*tail)
        tail = &(*tail)->next;
    *tail = s->parked;
    s->parked = s->parked_tail = NULL;
    uv_update_time(s->loop);
    now = uv_now(s->loop);
    while ((q = s->kicking) != NULL) {
        s->kicking = q->next;
        q->next = NULL;
        if (s->closing) {
            deliver(q, RR_REPLY_CLOSED);
        } else if (q->fail_status) {
            deliver(q, q->fail_status);
        } else if (now >= q->deadline) {
            if (!s->err[0])
                rr_svc_set_error(s, "%s: no answer within %lldms", s->ep.display,
                          (long long)s->o.conn.request_timeout_ms);
            deliver(q, RR_REPLY_TIMEOUT);
        } else if (q->not_before > now) {
            park(q);
        } else {
            send_req(q);
        }
    }
    arm_timer(s);
}

static struct svc_req *new_req(struct rr_svc *s, bool write, rr_svc_reply_fn cb, void *arg,
                               int argc, const char **argv, const size_t *argvlen);

static int queue(struct rr_svc *s, bool write, rr_svc_reply_fn cb, void *arg,
                 int argc, const char **argv, const size_t *argvlen)
{
    struct svc_req *q = new_req(s, write, cb, arg, argc, argv, argvlen);

    bool outer = !s->queueing;

    if (!q)
        return -1;
    s->queueing = true;
    send_req(q);
    if (outer)
        s->queueing = false;
    return 0;
}

/* ---- subscribing again ---- */

static void on_resub(struct rr_svc *s, int status, redisReply *reply, void *arg)
{
    (void)arg;
    if (s->closing)
        return;
    if (status != RR_REPLY_OK || reply->type == REDIS_REPLY_ERROR) {
        start_resub(s);
        return;
    }
    s->resub_ms = 0;
    /* Messages may have been missed while no subscription stood. */
    if (s->msg_fn)
        s->msg_fn(s, NULL, s->msg_arg);
}

static void on_resub_timer(uv_timer_t *t)
{
    struct rr_svc *s = t->data;

    for (int i = 0; i < s->n_subs && !s->closing; i++) {
        struct svc_req *q = new_req(s, false, on_resub, NULL, s->subs[i].argc,
                                    (const char **)s->subs[i].argv, s->subs[i].argvlen);
        if (!q) {
            start_resub(s);
            return;
        }
        q->resub = true;
        send_req(q);
    }
}

void rr_svc_resubscribe(struct rr_svc *s)
{
    if (s->n_subs > 0 && s->sub_conn) {
        s->sub_conn = NULL;
        start_resub(s);
    }
}

static void start_resub(struct rr_svc *s)
{
    if (s->closing)
        return;
    s->resub_ms = s->resub_ms <= 0 ? 100 : s->resub_ms >= 1000 ? 2000 : s->resub_ms * 2;
    uv_timer_start(&s->resub_timer, on_resub_timer, (uint64_t)s->resub_ms, 0);
}

static struct svc_req *new_req(struct rr_svc *s, bool write, rr_svc_reply_fn cb, void *arg,
                               int argc, const char **argv, const size_t *argvlen)
{
    struct svc_req *q;

    if (s->closing || !cb || argc < 1)
        return NULL;
    if (!(q = calloc(1, sizeof *q)))
        return NULL;
    q->s = s;
    q->cb = cb;
    q->arg = arg;
    q->write = write;
    q->acked = -1;
    q->argc = argc;
    q->argv = calloc((size_t)argc, sizeof *q->argv);
    q->argvlen = calloc((size_t)argc, sizeof *q->argvlen);
    if (!q->argv || !q->argvlen)
        goto fail;
    for (int i = 0; i < argc; i++) {
        size_t n = argvlen ? argvlen[i] : strlen(argv[i]);
        if (!(q->argv[i] = malloc(n + 1)))
            goto fail;
        memcpy(q->argv[i], argv[i], n);
        q->argv[i][n] = '\0';
        q->argvlen[i] = n;
    }
    uv_update_time(s->loop);
    q->deadline = uv_now(s->loop) + (uint64_t)s->o.conn.request_timeout_ms;
    return q;
fail:
    free_req(q);
    return NULL;
}

/* ---- the API ---- */

static const struct rr_svc_backend *const backends[] = { &rr_svc_direct, &rr_svc_sentinel, &rr_svc_cluster };

struct rr_svc *rr_svc_new(uv_loop_t *loop, const struct rr_endpoint *ep,
                          const struct rr_svc_opts *o)
{
    struct rr_svc *s = calloc(1, sizeof *s);

    if (!s)
        return NULL;
    s->loop = loop;
    s->ep = *ep;
    s->o = *o;
    s->acked = -1;
    s->sync_need = o->sync_replicas;
    s->be = backends[0];   /* redis://: one fixed server */
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (backends[i]->ep_kind == ep->kind)
            s->be = backends[i];
    snprintf(s->node, sizeof s->node, "%s", ep->display);
    uv_timer_init(loop, &s->timer);
    uv_timer_init(loop, &s->resub_timer);
    s->timer.data = s->resub_timer.data = s;
    s->handles = 2;
    if (s->be->init(s) != 0) {
        s->closing = true;
        rr_svc_close(s);
        return NULL;
    }
    return s;
}

int rr_svc_command(struct rr_svc *s, rr_svc_reply_fn cb, void *arg,
                   int argc, const char **argv, const size_t *argvlen)
{
    return queue(s, false, cb, arg, argc, argv, argvlen);
}

int rr_svc_commandv(struct rr_svc *s, rr_svc_reply_fn cb, void *arg, const char **argv)
{
    int argc = 0;

    while (argv[argc])
        argc++;
    return queue(s, false, cb, arg, argc, argv, NULL);
}

int rr_svc_write(struct rr_svc *s, rr_svc_reply_fn cb, void *arg,
                 int argc, const char **argv, const size_t *argvlen)
{
    return queue(s, true, cb, arg, argc, argv, argvlen);
}

long long rr_svc_replicas(const struct rr_svc *s)
{
    return s->acked;
}

bool rr_svc_unsent(const struct rr_svc *s)
{
    return s->unsent;
}

const char *rr_svc_wait_error(const struct rr_svc *s)
{
    return s->wait_err ? s->wait_err : "";
}

int rr_svc_sync_replicas(const struct rr_svc *s)
{
    return s->sync_need;
}

void rr_svc_on_message(struct rr_svc *s, rr_svc_message_fn fn, void *arg)
{
    s->msg_fn = fn;
    s->msg_arg = arg;
}

static void on_timer_close(uv_handle_t *h)
{
    struct rr_svc *s = h->data;

    if (--s->handles == 0)
        free(s);
}

void rr_svc_close(struct rr_svc *s)
{
    if (!s)
        return;
    s->closing = true;
    s->msg_fn = NULL;
    /* Pending sends are answered CLOSED by the connections, parked ones here. */
    if (s->impl)
        s->be->close(s);
    rr_svc_kick(s);
    for (int i = 0; i < s->n_subs; i++) {
        for (int j = 0; j < s->subs[i].argc; j++)
            free(s->subs[i].argv[j]);
        free(s->subs[i].argv);
        free(s->subs[i].argvlen);
    }
    s->n_subs = 0;
    explicit_bzero(&s->ep, sizeof s->ep);
    uv_timer_stop(&s->timer);
    uv_timer_stop(&s->resub_timer);
    uv_close((uv_handle_t *)&s->timer, on_timer_close);
    uv_close((uv_handle_t *)&s->resub_timer, on_timer_close);
}

const char *rr_svc_error(const struct rr_svc *s)
{
    return s->err;
}

const char *rr_svc_name(const struct rr_svc *s)
{
    return s->node;
}

bool rr_svc_refused(const struct rr_svc *s)
{
    return s->refused;
}

bool rr_svc_sharded(const struct rr_svc *s)
{
    return s->be->sharded;
}

const char *rr_svc_kind(const struct rr_svc *s)
{
    return s->be->kind;
}
