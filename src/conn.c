/* conn.c — one connection to one Redis endpoint, on a libuv loop.
 *
 * The layer of hiredis's async.c: requests, deadlines, the AUTH/SELECT
 * handshake, dispatch, reconnect. The bytes travel through a transport
 * (transport.h: the plain socket of sock.c, or TLS over it from tls.c);
 * RESP is encoded, classified and decoded by resp.c.
 *
 * Lifetime rules (STYLE: never free a context inside its own callback):
 *  - Each connection attempt opens its own transport and RESP reader. A
 *    broken one is "abandoned": c->t is cleared at once (the transport is
 *    freed later, see transport.h), so a reconnect never waits for the old
 *    handle, and a dispatch loop still running for it sees c->t changed.
 *  - c itself is freed only when it is CLOSING and every handle / transport
 *    it started (c->ops) has come back. Those completions are loop
 *    callbacks, never nested in our own callbacks, so c outlives any stack
 *    frame that still uses it.
 *  - Requests are popped from a list before their callback runs, so a
 *    callback may queue new requests or close the connection.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* explicit_bzero, strdup */
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "resp.h"
#include "rr.h"
#include "sock.h"
#include "tls.h"
#include "transport.h"

enum conn_state {
    CS_CLOSED,      /* no transport; the next request connects */
    CS_CONNECTING,  /* the transport is opening: lookup, connect, TLS handshake */
    CS_READY,       /* connected; requests are written as they come */
    CS_CLOSING,     /* rr_conn_close was called; waiting for handles */
};

enum req_kind { REQ_USER, REQ_AUTH, REQ_SELECT };

struct req {
    struct req *next;
    enum req_kind kind;
    rr_reply_fn cb;
    void *arg;
    uint64_t deadline;      /* uv_now based; 0 for handshake entries */
    char *cmd;              /* encoded command until it is written */
    size_t len;
    int nconfirm;           /* replies a (P)SUBSCRIBE-family command yields */
    bool sunsub;            /* a SUNSUBSCRIBE: its confirmations are replies */
    int status;             /* status to report once doomed */
    bool waits;             /* wait_connect: deadline is the connect's until it is up */
};

struct rr_conn {
    uv_loop_t *loop;
    struct rr_endpoint ep;
    int64_t connect_timeout_ms;
    bool wait_connect;              /* opts.wait_connect */
    int64_t request_timeout_ms;
    char *user, *password;  /* AUTH credentials, or NULL */
    struct rr_tls_opts tls;         /* rediss:// only; strings borrowed */
    bool refused;                   /* the last failure was a refusal (TLS verification) */
    bool unsent;                    /* in a failure callback: that request was never written */
    bool keep;                      /* in a reply callback: the callee took the reply */
    bool replied;                   /* this attempt's server has answered once */
    char name[300];

    enum conn_state state;
    struct rr_wire *t;         /* current transport, or NULL */
    struct rr_resp_reader *rd;      /* its replies */
    uint64_t connect_deadline;
    int handshake_left;             /* AUTH/SELECT replies still due */
    int skip_confirms;              /* extra (un)subscribe confirmations to swallow */

    struct req *head, *tail;        /* pending, in wire order */
    struct req *doomed;             /* taken off the queue, callbacks due */

    uv_timer_t timer;               /* earliest deadline, or a deferred failure */
    uint64_t timer_due;             /* when the timer is armed for; 0 = stopped */
    int deferred_status;            /* fail the queue from the timer (never sync) */

    rr_message_fn msg_fn;
    void *msg_arg;
    rr_down_fn down_fn;
    void *down_arg;

    int ops;                        /* handles / transports whose callback is due */
    char err[RR_ERRLEN];
};

static void arm_timer(struct rr_conn *c);
static void on_timer(uv_timer_t *t);

/* ---- small helpers ---------------------------------------------------- */

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void free_req(struct req *r)
{
    if (r->cmd) {
        if (r->kind == REQ_AUTH)
            explicit_bzero(r->cmd, r->len);
        free(r->cmd);
    }
    free(r);
}

static void set_error(struct rr_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_error(struct rr_conn *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    /* A server error text could in theory echo what we sent; never let the
     * password reach a log line through us. */
    if (c->password && c->password[0]) {
        char *p;
        size_t n = strlen(c->password);
        while ((p = strstr(c->err, c->password)) != NULL) {
            memmove(p + 3, p + n, strlen(p + n) + 1);
            memcpy(p, "***", 3);
        }
    }
}

static void maybe_free(struct rr_conn *c)
{
    if (c->state != CS_CLOSING || c->ops > 0)
        return;
    wipe_free(c->user);
    wipe_free(c->password);
    explicit_bzero(&c->ep, sizeof c->ep);
    free(c);
}

/* The transport of an abandoned attempt is freed: one thing less to wait for. */
static void on_released(void *arg)
{
    struct rr_conn *c = arg;

    c->ops--;
    maybe_free(c);
}

static void on_timer_close(uv_handle_t *h)
{
    struct rr_conn *c = h->data;

    c->ops--;
    maybe_free(c);
}

/* Drop the current transport and its reader; the transport's released
 * event still comes, see the lifetime rules at the top. */
static void abandon_transport(struct rr_conn *c)
{
    if (c->t) {
        struct rr_wire *t = c->t;
        c->t = NULL;
        t->ops->close(t);
    }
    rr_resp_reader_free(c->rd);
    c->rd = NULL;
    c->handshake_left = 0;
    c->skip_confirms = 0;
}

/* The one place the state changes. Entering CLOSED or CLOSING tears the
 * transport down; CLOSING also closes the timer, which is the last handle
 * c owns. */
static void transition(struct rr_conn *c, enum conn_state to)
{
    enum conn_state from = c->state;
    struct req *r;

    switch (to) {
    case CS_CLOSED:
        /* from CONNECTING / READY: failure or timeout */
        abandon_transport(c);
        break;
    case CS_CONNECTING:
        /* from CLOSED: the first request; from CONNECTING: catch_up found the
         * connect done, its budget (wait_connect: the requests') starts again */
        c->connect_deadline = uv_now(c->loop) + (uint64_t)c->connect_timeout_ms;
        for (r = c->head; r && from == CS_CONNECTING && c->wait_connect; r = r->next)
            if (r->kind == REQ_USER) {
                r->waits = true;   /* on_up gives it request_timeout from there */
                r->deadline = c->connect_deadline;
            }
        break;
    case CS_READY:
        /* from CONNECTING: the transport is up */
        break;
    case CS_CLOSING:
        /* from anything but CLOSING */
        abandon_transport(c);
        uv_close((uv_handle_t *)&c->timer, on_timer_close);
        c->timer_due = 0;
        break;
    }
    c->state = to;
    if (to != CS_CLOSING)
        arm_timer(c);
}

static void push_req(struct rr_conn *c, struct req *r)
{
    r->next = NULL;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;
}

static struct req *pop_req(struct rr_conn *c)
{
    struct req *r = c->head;

    if (r) {
        c->head = r->next;
        if (!c->head)
            c->tail = NULL;
        r->next = NULL;
    }
    return r;
}

/* Answer every doomed request. Callbacks may queue requests (they go to
 * the live queue) or close c (which drains this list itself). */
static void run_doomed(struct rr_conn *c)
{
    struct req *r;

    while ((r = c->doomed) != NULL) {
        c->doomed = r->next;
        if (r->kind == REQ_USER) {
            c->unsent = r->cmd != NULL;
            r->cb(c, r->status, NULL, r->arg);
            c->unsent = false;
        }
        free_req(r);
    }
}

/* Move the whole live queue to the doomed list with one status. */
static void doom_queue(struct rr_conn *c, int status)
{
    struct req *r, **tailp = &c->doomed;

    while (*tailp)
        tailp = &(*tailp)->next;
    for (r = c->head; r; r = r->next)
        r->status = status;
    *tailp = c->head;
    c->head = c->tail = NULL;
}

/* The stream cannot be trusted any more (error, timeout, EOF): close it and
 * answer everything that was pending. c->err is already set. */
static void break_conn(struct rr_conn *c, int status)
{
    bool was_up = c->state == CS_READY;

    transition(c, CS_CLOSED);
    doom_queue(c, status);
    run_doomed(c);
    if (was_up && c->state != CS_CLOSING && c->down_fn)
        c->down_fn(c, c->down_arg);
}

/* Fail later, from the timer: callbacks must never run inside
 * rr_conn_command, even when we learn synchronously that it failed. */
static void defer_break(struct rr_conn *c, int status)
{
    if (c->deferred_status == 0)
        c->deferred_status = status;
    arm_timer(c);
}

/* ---- timer ------------------------------------------------------------- */

static bool connecting(const struct rr_conn *c)
{
    return c->state == CS_CONNECTING || (c->state == CS_READY && c->handshake_left > 0);
}

static struct req *first_user_req(const struct rr_conn *c)
{
    struct req *r;

    for (r = c->head; r; r = r->next)
        if (r->kind == REQ_USER)
            return r;
    return NULL;
}

/* Arm the single timer for the earliest thing that can expire. Deadlines
 * grow along the queue, so the first user request has the earliest one. It
 * stays stopped on an idle (e.g. subscribed) connection. */
static void arm_timer(struct rr_conn *c)
{
    uint64_t due = 0, now = uv_now(c->loop);
    struct req *r;

    if (c->state == CS_CLOSING)
        return;
    if (c->deferred_status)
        due = now;
    if (connecting(c) && (due == 0 || c->connect_deadline < due))
        due = c->connect_deadline;
    r = first_user_req(c);
    if (r && (due == 0 || r->deadline < due))
        due = r->deadline;
    if (due == c->timer_due)
        return;
    c->timer_due = due;
    if (due == 0) {
        uv_timer_stop(&c->timer);
        return;
    }
    uv_timer_start(&c->timer, on_timer, due > now ? due - now : 0, 0);
}

/* Before a deadline fails anything, read what the socket holds: libuv runs
 * due timers before it polls, so a process starved of CPU (a herd on a busy
 * host) would judge a reply that has arrived late, and blame Redis (exit 69)
 * for its own slowness. A connect the kernel has finished is not late either:
 * its budget starts again from uv_now (updated just before the timers), once
 * per attempt: the loop polls, and reports it, before its timers run again. */
static void catch_up(struct rr_conn *c)
{
    struct rr_wire *t = c->t;

    if (t && t->ops->catch_up(t) && c->t == t && c->state == CS_CONNECTING
        && uv_now(c->loop) >= c->connect_deadline)
        transition(c, CS_CONNECTING);
}

static void on_timer(uv_timer_t *t)
{
    struct rr_conn *c = t->data;
    uint64_t now;
    const char *why;
    struct req *r;

    c->timer_due = 0;
    if (c->deferred_status) {
        int status = c->deferred_status;
        c->deferred_status = 0;
        break_conn(c, status);
        return;
    }
    catch_up(c);
    if (c->state == CS_CLOSING)
        return;     /* a reply's callback closed c */
    now = uv_now(c->loop);
    if (connecting(c) && now >= c->connect_deadline) {
        why = c->state == CS_CONNECTING && c->t ? c->t->ops->stalled(c->t) : NULL;
        set_error(c, "cannot connect to %s: %s", c->name, why ? why : uv_strerror(UV_ETIMEDOUT));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    r = first_user_req(c);
    if (r && now >= r->deadline) {
        if (c->state == CS_READY) {
            /* The reply is on its way or lost; RESP cannot skip one, so
             * the stream is useless from here. */
            set_error(c, "%s: no reply within %lldms", c->name,
                      (long long)c->request_timeout_ms);
            break_conn(c, RR_REPLY_TIMEOUT);
            return;
        }
        /* Still connecting: nothing was written, so expired requests can go
         * alone and the connection attempt carries on for later ones. */
        why = c->t ? c->t->ops->stalled(c->t) : NULL;
        set_error(c, "%s: not connected within %lldms%s%s", c->name,
                  (long long)c->request_timeout_ms, why ? ": " : "", why ? why : "");
        while (c->state != CS_CLOSING && c->state != CS_READY
               && (r = c->head) != NULL && r->deadline <= now) {
            pop_req(c);
            c->unsent = true;   /* never written: safe to send elsewhere */
            r->cb(c, RR_REPLY_TIMEOUT, NULL, r->arg);
            c->unsent = false;
            free_req(r);
        }
    }
    arm_timer(c);
}

/* ---- dispatch ---------------------------------------------------------- */

/* Route one decoded reply. */
static void dispatch(struct rr_conn *c, redisReply *reply)
{
    struct req *r;

    if (c->msg_fn && rr_resp_is_push(reply)) {
        c->msg_fn(c, reply, c->msg_arg);
        return;
    }
    if (c->skip_confirms > 0 && rr_resp_is_confirm(reply)) {
        c->skip_confirms--;
        return;
    }
    r = first_user_req(c);     /* is the oldest our own SUNSUBSCRIBE? */
    if (c->msg_fn && rr_resp_ended_unasked(reply, r && r->sunsub)) {
        /* As if the node went away: the owner subscribes again where the
         * slot lives now (service.c), and learns messages may be lost. */
        set_error(c, "%s: the node ended our sharded subscription (its slot moved)", c->name);
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    r = pop_req(c);
    if (!r) {
        set_error(c, "%s: protocol error: unexpected reply", c->name);
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    if (r->kind != REQ_USER) {
        bool auth = r->kind == REQ_AUTH;
        free_req(r);
        if (reply->type == REDIS_REPLY_ERROR) {
            if (auth)
                set_error(c, "%s: authentication failed: %s", c->name, reply->str);
            else
                set_error(c, "%s: cannot select db %d: %s", c->name, c->ep.db, reply->str);
            break_conn(c, RR_REPLY_IOERR);
            return;
        }
        c->handshake_left--;
        arm_timer(c);
        return;
    }
    if (r->nconfirm > 1 && rr_resp_is_confirm(reply))
        c->skip_confirms += r->nconfirm - 1;
    r->cb(c, RR_REPLY_OK, reply, r->arg);
    free_req(r);
    if (c->state != CS_CLOSING)
        arm_timer(c);
}

/* Plaintext from the transport to the RESP reader, and the replies to
 * dispatch. */
static void on_data(void *arg, const char *data, size_t len)
{
    struct rr_conn *c = arg;
    struct rr_wire *t = c->t;
    redisReply *reply;
    int rc;

    if (rr_resp_feed(c->rd, data, len) != RR_RESP_OK) {
        set_error(c, "%s: %s", c->name, uv_strerror(UV_ENOMEM));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    /* Stop as soon as a callback broke or closed the connection: t then is
     * abandoned (but still valid until its released event). */
    while (c->t == t && c->state == CS_READY) {
        if ((rc = rr_resp_get(c->rd, &reply)) < 0) {
            if (!c->ep.tls && (data[0] == 0x15 || data[0] == 0x16))
                set_error(c, "%s: the server answered in TLS: is it a rediss:// port?", c->name);
            else if (rc == RR_RESP_TOO_LARGE)
                set_error(c, "%s: reply larger than " RR_RESP_CAP_TEXT " (is it a Redis server?)",
                          c->name);
            else
                set_error(c, "%s: protocol error: %s", c->name, rr_resp_errstr(c->rd));
            break_conn(c, RR_REPLY_IOERR);
            return;
        }
        if (rc == 0)
            return;
        c->refused = false;  /* a reply: the server took our TLS session */
        c->replied = true;
        t->ops->answered(t);
        c->keep = false;
        dispatch(c, reply);
        if (!c->keep)
            freeReplyObject(reply);
        c->keep = false;
    }
}

/* The transport broke (or never came up): answer everything pending. */
static void on_failed(void *arg, const struct rr_transport_failure *f)
{
    struct rr_conn *c = arg;

    if (f->fault == RR_TF_CONNECT)
        set_error(c, "cannot connect to %s: %s", c->name, f->detail);
    else if (!c->ep.tls && c->ep.transport == RR_TRANSPORT_TCP && !c->replied &&
             strstr(f->detail, "reset by peer"))   /* as a TLS port does to plain RESP */
        set_error(c, "%s: %s before any reply (is it a TLS port?)", c->name, f->detail);
    else
        set_error(c, "%s: %s", c->name, f->detail);
    if (f->verdict != RR_TV_NONE)
        c->refused = f->verdict == RR_TV_REFUSED;
    break_conn(c, RR_REPLY_IOERR);
}

/* ---- connecting -------------------------------------------------------- */

/* All outgoing bytes pass here; data is malloc'ed and owned from now on.
 * Returns 0, or -1 with c->err set. */
static int send_bytes(struct rr_conn *c, char *data, size_t len, bool secret)
{
    char why[RR_ERRLEN];

    if (c->t->ops->write(c->t, data, len, secret, why, sizeof why) < 0) {
        set_error(c, "%s: %s", c->name, why);
        return -1;
    }
    return 0;
}

/* One handshake entry in front of the queue. */
static int push_front(struct rr_conn *c, enum req_kind kind, int argc, const char **argv)
{
    struct req *r = calloc(1, sizeof *r);

    if (!r || rr_resp_format(&r->cmd, &r->len, argc, argv, NULL) < 0) {
        free(r);
        return UV_ENOMEM;
    }
    r->kind = kind;
    r->next = c->head;
    c->head = r;
    if (!c->tail)
        c->tail = r;
    c->handshake_left++;
    return 0;
}

/* Put AUTH and SELECT at the head of the queue, in that order. */
static int queue_handshake(struct rr_conn *c)
{
    char dbbuf[16];
    const char *sel[] = { "SELECT", dbbuf };
    const char *auth[] = { "AUTH", c->user ? c->user : c->password, c->password };

    snprintf(dbbuf, sizeof dbbuf, "%d", c->ep.db);
    if (c->ep.db != 0 && push_front(c, REQ_SELECT, 2, sel) < 0)
        return UV_ENOMEM;
    if (c->password && push_front(c, REQ_AUTH, c->user ? 3 : 2, auth) < 0)
        return UV_ENOMEM;
    return 0;
}

/* Write everything queued while connecting (handshake first) in one go.
 * Returns 0, or -1 with c->err set. */
static int flush_queue(struct rr_conn *c)
{
    size_t total = 0, off = 0;
    bool secret = false;
    struct req *r;
    char *buf;

    for (r = c->head; r; r = r->next)
        total += r->len;
    if (total == 0)
        return 0;
    if (!(buf = malloc(total))) {
        set_error(c, "%s: %s", c->name, uv_strerror(UV_ENOMEM));
        return -1;
    }
    for (r = c->head; r; r = r->next) {
        if (!r->cmd)
            continue;
        memcpy(buf + off, r->cmd, r->len);
        off += r->len;
        if (r->kind == REQ_AUTH) {
            secret = true;
            explicit_bzero(r->cmd, r->len);
        }
        free(r->cmd);
        r->cmd = NULL;
        r->len = 0;
    }
    return send_bytes(c, buf, off, secret);
}

/* The transport is up (TCP, unix, or TLS after its handshake): pipeline
 * AUTH and SELECT in front of what is queued, and send it all. */
static void on_up(void *arg)
{
    struct rr_conn *c = arg;
    int err;

    if ((err = queue_handshake(c)) < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(err));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    uv_update_time(c->loop);   /* requests that waited get their own time now */
    for (struct req *r = c->head; r; r = r->next)
        if (r->waits) {
            r->waits = false;
            r->deadline = uv_now(c->loop) + (uint64_t)c->request_timeout_ms;
        }
    transition(c, CS_READY);
    if (flush_queue(c) < 0)
        break_conn(c, RR_REPLY_IOERR);
}

/* Begin a connection attempt. Errors are reported from the timer, never
 * synchronously. */
static void start_connect(struct rr_conn *c)
{
    const struct rr_transport_events ev = { c, on_up, on_data, on_failed, on_released };
    char why[RR_ERRLEN];
    int err;

    c->replied = false;
    if (!(c->rd = rr_resp_reader_new())) {
        err = UV_ENOMEM;
        snprintf(why, sizeof why, "%s", uv_strerror(err));
    } else if (c->ep.tls) {
        err = rr_tls_open(&c->t, c->loop, &c->ep, &c->tls, &ev, why, sizeof why);
    } else {
        err = rr_sock_open(&c->t, c->loop, &c->ep, &ev, why, sizeof why);
    }
    if (c->t)
        c->ops++;  /* until its released event */
    transition(c, CS_CONNECTING);
    if (err < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, why);
        defer_break(c, RR_REPLY_IOERR);
    }
}

/* ---- API --------------------------------------------------------------- */

struct rr_conn *rr_conn_new(uv_loop_t *loop, const struct rr_endpoint *ep,
                            const struct rr_conn_opts *opts)
{
    struct rr_conn *c = calloc(1, sizeof *c);
    const char *user = NULL, *password = NULL;

    if (!c)
        return NULL;
    c->loop = loop;
    c->ep = *ep;
    c->wait_connect = opts->wait_connect;
    c->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : RR_DEFAULT_CONNECT_TIMEOUT_MS;
    c->request_timeout_ms = opts->request_timeout_ms > 0 ? opts->request_timeout_ms : RR_DEFAULT_REDIS_TIMEOUT_MS;
    c->tls = opts->tls;
    /* The caller chose the credentials (for the lock services: svc_config.c,
     * where a URL's own win); the URL's copy in ep is not looked at here. A
     * user without a password sends no AUTH. */
    password = opts->password;
    user = password ? opts->user : NULL;
    if (password && !(c->password = strdup(password)))
        goto fail;
    if (user && !(c->user = strdup(user)))
        goto fail;
    if (ep->display[0])
        snprintf(c->name, sizeof c->name, "%s", ep->display);
    else if (ep->transport == RR_TRANSPORT_UNIX)
        snprintf(c->name, sizeof c->name, "%s", ep->path);
    else if (strchr(ep->host, ':'))
        snprintf(c->name, sizeof c->name, "[%s]:%d", ep->host, ep->port);
    else
        snprintf(c->name, sizeof c->name, "%s:%d", ep->host, ep->port);
    if (uv_timer_init(loop, &c->timer) < 0)
        goto fail;
    c->timer.data = c;
    c->ops = 1;  /* the timer */
    c->state = CS_CLOSED;
    return c;
fail:
    c->state = CS_CLOSING;  /* c->ops is 0: maybe_free frees it */
    maybe_free(c);
    return NULL;
}

int rr_conn_command(struct rr_conn *c, rr_reply_fn cb, void *arg,
                    int argc, const char **argv, const size_t *argvlen)
{
    struct req *r;

    if (c->state == CS_CLOSING)
        return UV_EINVAL;
    if (!cb || argc < 1)
        return UV_EINVAL;
    if (!(r = calloc(1, sizeof *r)))
        return UV_ENOMEM;
    if (rr_resp_format(&r->cmd, &r->len, argc, argv, argvlen) < 0) {
        free(r);
        return UV_ENOMEM;
    }
    r->kind = REQ_USER;
    r->cb = cb;
    r->arg = arg;
    r->nconfirm = rr_resp_confirm_count(argc, argv, argvlen);
    r->sunsub = rr_resp_is_command(argv, argvlen, "sunsubscribe");
    /* uv_now is cached per loop turn; a caller that blocked since then
     * would otherwise get a deadline already in the past. */
    uv_update_time(c->loop);
    r->deadline = uv_now(c->loop) + (uint64_t)c->request_timeout_ms;

    if (c->state == CS_READY) {
        char *cmd = r->cmd;
        size_t len = r->len;
        r->cmd = NULL;
        r->len = 0;
        push_req(c, r);
        if (send_bytes(c, cmd, len, false) < 0)
            defer_break(c, RR_REPLY_IOERR);
    } else {
        push_req(c, r);
        if (c->state == CS_CLOSED && !c->deferred_status)
            start_connect(c);
        /* wait_connect: due at the connect deadline; on_up gives it its own. */
        if (c->wait_connect && c->state == CS_CONNECTING && c->connect_deadline > r->deadline) {
            r->deadline = c->connect_deadline;
            r->waits = true;
        }
    }
    arm_timer(c);
    return 0;
}

int rr_conn_commandv(struct rr_conn *c, rr_reply_fn cb, void *arg, const char **argv)
{
    int argc = 0;

    while (argv[argc])
        argc++;
    return rr_conn_command(c, cb, arg, argc, argv, NULL);
}

void rr_conn_on_message(struct rr_conn *c, rr_message_fn fn, void *arg)
{
    c->msg_fn = fn;
    c->msg_arg = arg;
}

void rr_conn_on_down(struct rr_conn *c, rr_down_fn fn, void *arg)
{
    c->down_fn = fn;
    c->down_arg = arg;
}

void rr_conn_close(struct rr_conn *c)
{
    if (!c || c->state == CS_CLOSING)
        return;
    c->msg_fn = NULL;
    c->down_fn = NULL;
    transition(c, CS_CLOSING);
    /* Synchronous on purpose: once rr_conn_close returns, no callback for c
     * ever runs again, so the caller may free what arg points to. */
    doom_queue(c, RR_REPLY_CLOSED);
    run_doomed(c);
}

const char *rr_conn_error(const struct rr_conn *c)
{
    return c->err;
}

const char *rr_conn_name(const struct rr_conn *c)
{
    return c->name;
}

int rr_conn_is_ready(const struct rr_conn *c)
{
    return c->state == CS_READY && c->handshake_left == 0;
}

bool rr_conn_unsent(const struct rr_conn *c)
{
    return c->unsent;
}

void rr_conn_keep_reply(struct rr_conn *c)
{
    c->keep = true;
}

bool rr_conn_refused(const struct rr_conn *c)
{
    return c->refused;
}
