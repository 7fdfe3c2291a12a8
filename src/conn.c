/* conn.c — one connection to one Redis endpoint, on a libuv loop.
 *
 * hiredis is only the codec: redisFormatCommandArgv encodes, a redisReader
 * decodes. The socket is a libuv stream we own, so every request can carry
 * a deadline, and for rediss:// the TLS filter (tls.c) sits in
 * transport_write / transport_feed.
 *
 * Lifetime rules (STYLE: never free a context inside its own callback):
 *  - Each connection attempt gets its own heap `struct sock` (stream handle,
 *    connect request, reader). A broken socket is "abandoned": c->sock is
 *    cleared at once and the struct is freed in its close callback, so a
 *    reconnect never waits for the old handle and a dispatch loop that is
 *    still walking the old reader keeps valid memory.
 *  - c itself is freed only when it is CLOSING and every handle / request it
 *    started (c->ops) has come back. Those completions are loop callbacks,
 *    never nested in our own callbacks, so c outlives any stack frame that
 *    still uses it.
 *  - Requests are popped from a list before their callback runs, so a
 *    callback may queue new requests or close the connection.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* explicit_bzero, strdup, strncasecmp */
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "conn.h"
#include "rr.h"
#include "tls.h"

enum conn_state {
    CS_CLOSED,      /* no socket; the next request connects */
    CS_RESOLVING,   /* uv_getaddrinfo in flight */
    CS_CONNECTING,  /* uv_tcp_connect / uv_pipe_connect in flight */
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
};

struct sock {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_connect_t connect_req;
    struct rr_conn *c;      /* always the owner; abandoned when c->sock != this */
    redisReader *reader;
    redisReplyObjectFunctions fns;          /* hiredis's own, two of them capped */
    const redisReplyObjectFunctions *dfl;   /* hiredis's own */
    size_t held;            /* charged to the reply being read, see REPLY_CAP */
    struct rr_tls *tls;     /* rediss://: the filter under the transport hook */
    bool replied;           /* a reply came on this socket */
};

struct wreq {
    uv_write_t req;
    struct sock *s;
    char *data;
    size_t len;
    bool secret;            /* holds AUTH: wipe before free */
};

struct rr_conn {
    uv_loop_t *loop;
    struct rr_endpoint ep;
    int64_t connect_timeout_ms;
    int64_t request_timeout_ms;
    char *user, *password;  /* AUTH credentials, or NULL */
    struct rr_tls_opts tls;         /* rediss:// only; strings borrowed */
    bool refused;                   /* the last failure was a refusal (TLS verification) */
    bool unsent;                    /* in a failure callback: that request was never written */
    bool keep;                      /* in a reply callback: the callee took the reply */
    char name[300];

    enum conn_state state;
    struct sock *sock;              /* current socket, or NULL */
    uv_getaddrinfo_t *gai;          /* current lookup, or NULL */
    struct addrinfo *ai_list, *ai_next;
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

    int ops;                        /* handles / requests whose callback is due */
    char err[RR_ERRLEN];
    char rbuf[16384];
};

static void arm_timer(struct rr_conn *c);
static void on_timer(uv_timer_t *t);
static void start_connect(struct rr_conn *c);

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

static void on_sock_close(uv_handle_t *h)
{
    struct sock *s = h->data;
    struct rr_conn *c = s->c;

    if (s->reader)
        redisReaderFree(s->reader);
    rr_tls_free(s->tls);
    free(s);
    c->ops--;
    maybe_free(c);
}

static void on_timer_close(uv_handle_t *h)
{
    struct rr_conn *c = h->data;

    c->ops--;
    maybe_free(c);
}

/* Drop the current socket and lookup; their callbacks still come, see
 * the lifetime rules at the top. */
static void abandon_transport(struct rr_conn *c)
{
    if (c->sock) {
        struct sock *s = c->sock;
        c->sock = NULL;
        uv_close(&s->h.handle, on_sock_close);
    }
    if (c->gai) {
        /* If the lookup already runs in the thread pool uv_cancel fails and
         * on_resolved sees it is stale; either way it frees the request. */
        uv_cancel((uv_req_t *)c->gai);
        c->gai = NULL;
    }
    if (c->ai_list) {
        uv_freeaddrinfo(c->ai_list);
        c->ai_list = c->ai_next = NULL;
    }
    c->handshake_left = 0;
    c->skip_confirms = 0;
}

/* The one place the state changes. Entering CLOSED or CLOSING tears the
 * transport down; CLOSING also closes the timer, which is the last handle
 * c owns. */
static void transition(struct rr_conn *c, enum conn_state to)
{
    enum conn_state from = c->state;

    switch (to) {
    case CS_CLOSED:
        /* from RESOLVING / CONNECTING / READY: failure or timeout */
        abandon_transport(c);
        break;
    case CS_RESOLVING:
        /* from CLOSED: first request, host name */
    case CS_CONNECTING:
        /* from CLOSED (IP literal, unix), RESOLVING, or CONNECTING itself
         * when the next resolved address is tried */
        if (from == CS_CLOSED)
            c->connect_deadline = uv_now(c->loop) + (uint64_t)c->connect_timeout_ms;
        break;
    case CS_READY:
        /* from CONNECTING: the addresses are no longer needed */
        if (c->ai_list) {
            uv_freeaddrinfo(c->ai_list);
            c->ai_list = c->ai_next = NULL;
        }
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
    return c->state == CS_RESOLVING || c->state == CS_CONNECTING
        || (c->state == CS_READY && c->handshake_left > 0);
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

static void on_timer(uv_timer_t *t)
{
    struct rr_conn *c = t->data;
    uint64_t now = uv_now(c->loop);
    struct req *r;

    c->timer_due = 0;
    if (c->deferred_status) {
        int status = c->deferred_status;
        c->deferred_status = 0;
        break_conn(c, status);
        return;
    }
    if (connecting(c) && now >= c->connect_deadline) {
        set_error(c, "cannot connect to %s: %s", c->name,
                  c->sock && c->sock->tls && c->state == CS_CONNECTING
                  ? rr_tls_stall_reason(c->sock->tls) : uv_strerror(UV_ETIMEDOUT));
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
        set_error(c, "%s: not connected within %lldms%s%s", c->name,
                  (long long)c->request_timeout_ms, c->sock && c->sock->tls ? ": " : "",
                  c->sock && c->sock->tls ? rr_tls_stall_reason(c->sock->tls) : "");
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

/* ---- transport hook ---------------------------------------------------- */

static void tls_failed(struct rr_conn *c, int rc, const char *why);

/* The server closed or reset a TLS socket before any reply: a refused
 * client certificate, when it had asked for one (see rr_tls_closed). */
static bool tls_closed(struct rr_conn *c, struct sock *s)
{
    char why[RR_ERRLEN];

    if (!s->tls || s->replied || rr_tls_closed(s->tls, why, sizeof why) != RR_TLS_REFUSED)
        return false;
    tls_failed(c, RR_TLS_REFUSED, why);
    return true;
}

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct sock *s = w->s;
    struct rr_conn *c = s->c;

    if (w->secret)
        explicit_bzero(w->data, w->len);
    free(w->data);
    free(w);
    if (status < 0 && status != UV_ECANCELED && c->sock == s && !tls_closed(c, s)) {
        set_error(c, "%s: %s", c->name, uv_strerror(status));
        break_conn(c, RR_REPLY_IOERR);
    }
}

/* Write data (malloc'ed, owned from now on) to the socket as it is. */
static int sock_write(struct rr_conn *c, char *data, size_t len, bool secret)
{
    struct wreq *w = malloc(sizeof *w);
    uv_buf_t buf = uv_buf_init(data, (unsigned int)len);
    int err;

    if (!w) {
        err = UV_ENOMEM;
        goto fail;
    }
    w->s = c->sock;
    w->data = data;
    w->len = len;
    w->secret = secret;
    err = uv_write(&w->req, &c->sock->h.stream, &buf, 1, on_write);
    if (err < 0) {
        free(w);
        goto fail;
    }
    return 0;
fail:
    if (secret)
        explicit_bzero(data, len);
    free(data);
    return err;
}

/* Send what the TLS session has to send (handshake records, ciphertext).
 * Returns 0, or a negative libuv error with c->err set. */
static int tls_flush(struct rr_conn *c)
{
    char *out;
    size_t n;
    int err;

    if (rr_tls_take_output(c->sock->tls, &out, &n) != RR_TLS_OK) {
        set_error(c, "%s: %s", c->name, uv_strerror(UV_ENOMEM));
        return UV_ENOMEM;
    }
    if (n && (err = sock_write(c, out, n, false)) < 0) {
        set_error(c, "%s: %s", c->name, uv_strerror(err));
        return err;
    }
    return 0;
}

/* A TLS session failed: rc says whether retrying can help. */
static void tls_failed(struct rr_conn *c, int rc, const char *why)
{
    set_error(c, "cannot connect to %s: %s", c->name, why);
    c->refused = rc == RR_TLS_REFUSED;
    break_conn(c, RR_REPLY_IOERR);
}

/* All outgoing bytes pass here; data is malloc'ed and owned from now on.
 * Over TLS the plaintext is encrypted and the ciphertext written. */
static int transport_write(struct rr_conn *c, char *data, size_t len, bool secret)
{
    char why[RR_ERRLEN];
    int rc;

    if (!c->sock->tls)
        return sock_write(c, data, len, secret);
    rc = rr_tls_write(c->sock->tls, data, len, why, sizeof why);
    if (secret)
        explicit_bzero(data, len);
    free(data);
    if (rc != RR_TLS_OK) {
        set_error(c, "%s: %s", c->name, why);
        return UV_EPROTO;  /* callers keep this message */
    }
    return tls_flush(c) < 0 ? UV_EPROTO : 0;
}

static bool is_str(const redisReply *r, const char *s)
{
    return (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
        && r->len == strlen(s) && strncasecmp(r->str, s, r->len) == 0;
}

static bool is_push(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements >= 3
        && (is_str(r->element[0], "message") || is_str(r->element[0], "pmessage")
            || is_str(r->element[0], "smessage"));
}

static bool is_confirm(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3
        && (is_str(r->element[0], "subscribe") || is_str(r->element[0], "psubscribe")
            || is_str(r->element[0], "unsubscribe")
            || is_str(r->element[0], "punsubscribe")
            || is_str(r->element[0], "ssubscribe")
            || is_str(r->element[0], "sunsubscribe"));
}

/* A "sunsubscribe" nobody asked for: a cluster node ends a sharded
 * subscription by itself when the slot of its channel leaves it (a
 * resharding, a failover). */
static bool is_dropped_shard_sub(const struct rr_conn *c, const redisReply *r)
{
    const struct req *q;

    if (!(r->type == REDIS_REPLY_ARRAY && r->elements == 3 && is_str(r->element[0], "sunsubscribe")))
        return false;
    for (q = c->head; q; q = q->next)
        if (q->kind == REQ_USER)
            return !q->sunsub;
    return true;
}

/* Route one decoded reply. */
static void dispatch(struct rr_conn *c, redisReply *reply)
{
    struct req *r;

    if (c->msg_fn && is_push(reply)) {
        c->msg_fn(c, reply, c->msg_arg);
        return;
    }
    if (c->skip_confirms > 0 && is_confirm(reply)) {
        c->skip_confirms--;
        return;
    }
    if (c->msg_fn && is_dropped_shard_sub(c, reply)) {
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
    if (r->nconfirm > 1 && is_confirm(reply))
        c->skip_confirms += r->nconfirm - 1;
    r->cb(c, RR_REPLY_OK, reply, r->arg);
    free_req(r);
    if (c->state != CS_CLOSING)
        arm_timer(c);
}

/* The most one reply may hold: its bytes still buffered in the reader plus
 * what its decoded parts take. Our largest reply, --status of a job whose
 * records are all full, is under 50 KB on the wire (t_hostile.sh measures
 * it); 1 MiB leaves 20 times that and stops a peer announcing a 4 GB string
 * or 2e9 elements (hiredis would calloc 16 GB for them) at a few MiB. */
#define REPLY_CAP ((size_t)1 << 20)
#define REPLY_CAP_TEXT "1 MiB"

/* Charge n parts of each bytes to the reply being read. Past the cap,
 * held becomes SIZE_MAX and NULL makes hiredis stop ("Out of memory"). */
static bool charge(struct sock *s, size_t n, size_t each)
{
    if (n > (REPLY_CAP - s->held) / each) {
        s->held = SIZE_MAX;
        return false;
    }
    s->held += n * each;
    return true;
}

static void *capped_string(const redisReadTask *t, char *str, size_t len)
{
    struct sock *s = t->privdata;

    return charge(s, len, 1) ? s->dfl->createString(t, str, len) : NULL;
}

/* Each element pays for its slot and its reply object before hiredis
 * allocates them, so integers and nils need no hook of their own. */
static void *capped_array(const redisReadTask *t, int n)
{
    struct sock *s = t->privdata;

    return charge(s, (size_t)n + 1, sizeof(redisReply *) + sizeof(redisReply))
        ? s->dfl->createArray(t, n) : NULL;
}

/* Is the reply hiredis waits to complete past the cap? Its buffered bytes
 * count, and so does the length a bulk header announces: hiredis has read
 * the '$' and keeps the digits until the whole string is there. */
static bool over_cap(const struct sock *s)
{
    const redisReader *r = s->reader;
    unsigned long long have = r->len - r->pos;

    if (s->held > REPLY_CAP)
        return true;
    if (r->ridx >= 0 && r->rstack[r->ridx].type == REDIS_REPLY_STRING) {
        long long n = strtoll(r->buf + r->pos, NULL, 10);  /* sds: NUL-terminated */
        if (n > 0 && (unsigned long long)n > have)
            have = (unsigned long long)n;
    }
    return have > REPLY_CAP - s->held;
}

/* Plaintext bytes to the RESP reader, and the replies to dispatch. */
static void feed_reader(struct rr_conn *c, struct sock *s, const char *data, size_t len)
{
    void *reply;

    if (redisReaderFeed(s->reader, data, len) != REDIS_OK) {
        set_error(c, "%s: %s", c->name, uv_strerror(UV_ENOMEM));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    /* Stop as soon as a callback broke or closed the connection: s then is
     * abandoned (but still valid until its close callback). */
    while (c->sock == s && c->state == CS_READY) {
        if (redisReaderGetReply(s->reader, &reply) != REDIS_OK || (!reply && over_cap(s))) {
            if (!s->tls && (data[0] == 0x15 || data[0] == 0x16))
                set_error(c, "%s: the server answered in TLS: is it a rediss:// port?", c->name);
            else if (over_cap(s))
                set_error(c, "%s: reply larger than " REPLY_CAP_TEXT " (is it a Redis server?)",
                          c->name);
            else
                set_error(c, "%s: protocol error: %s", c->name, s->reader->errstr);
            break_conn(c, RR_REPLY_IOERR);
            return;
        }
        if (!reply)
            return;
        s->held = 0;
        c->refused = false;  /* a reply: the server took our TLS session */
        s->replied = true;
        c->keep = false;
        dispatch(c, reply);
        if (!c->keep)
            freeReplyObject(reply);
        c->keep = false;
    }
}

static void connected(struct rr_conn *c);

/* All incoming bytes pass here. Over TLS they drive the handshake first,
 * then are decrypted for the reader. */
static void transport_feed(struct rr_conn *c, struct sock *s, const char *data, size_t len)
{
    char why[RR_ERRLEN], plain[16384];
    long n;
    int rc;

    if (!s->tls) {
        feed_reader(c, s, data, len);
        return;
    }
    if ((rc = rr_tls_feed(s->tls, data, len, why, sizeof why)) != RR_TLS_OK) {
        tls_failed(c, rc, why);
        return;
    }
    if (c->state == CS_CONNECTING) {
        rc = rr_tls_handshake(s->tls, why, sizeof why);
        if (tls_flush(c) < 0) {
            break_conn(c, RR_REPLY_IOERR);
            return;
        }
        if (rc < 0)
            tls_failed(c, rc, why);
        if (rc <= 0)
            return;
        connected(c);
    }
    while (c->sock == s && c->state == CS_READY) {
        if ((n = rr_tls_read(s->tls, plain, sizeof plain, why, sizeof why)) < 0) {
            tls_failed(c, (int)n, why);
            return;
        }
        if (n == 0)
            break;
        feed_reader(c, s, plain, (size_t)n);
    }
    /* TLS 1.3 may answer records of its own (a key update). */
    if (c->sock == s && tls_flush(c) < 0)
        break_conn(c, RR_REPLY_IOERR);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct sock *s = h->data;

    (void)suggested;
    *buf = uv_buf_init(s->c->rbuf, sizeof s->c->rbuf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct sock *s = stream->data;
    struct rr_conn *c = s->c;

    if (c->sock != s)
        return;
    if (nread > 0) {
        transport_feed(c, s, buf->base, (size_t)nread);
        return;
    }
    if (tls_closed(c, s))
        return;
    if (nread == UV_EOF) {
        if (c->state == CS_CONNECTING)  /* TLS handshake */
            set_error(c, "cannot connect to %s: connection closed during the TLS handshake "
                      "(is it a TLS port?)", c->name);
        else
            set_error(c, "%s: connection closed by server", c->name);
        break_conn(c, RR_REPLY_IOERR);
    } else if (nread < 0) {
        set_error(c, "%s: %s", c->name, uv_strerror((int)nread));
        break_conn(c, RR_REPLY_IOERR);
    }
}

/* ---- connecting -------------------------------------------------------- */

static int format_argv(char **out, size_t *len, int argc, const char **argv,
                       const size_t *argvlen)
{
    char *cmd = NULL;
    int n = redisFormatCommandArgv(&cmd, argc, argv, argvlen);

    if (n < 0 || !cmd)
        return UV_ENOMEM;
    *out = cmd;
    *len = (size_t)n;
    return 0;
}

/* Put AUTH and SELECT at the head of the queue, in that order. */
static int queue_handshake(struct rr_conn *c)
{
    struct req *auth = NULL, *sel = NULL;
    char dbbuf[16];

    if (c->ep.db != 0) {
        const char *argv[] = { "SELECT", dbbuf };
        snprintf(dbbuf, sizeof dbbuf, "%d", c->ep.db);
        if (!(sel = calloc(1, sizeof *sel)))
            goto fail;
        sel->kind = REQ_SELECT;
        if (format_argv(&sel->cmd, &sel->len, 2, argv, NULL) < 0)
            goto fail;
    }
    if (c->password) {
        const char *argv[] = { "AUTH", c->user ? c->user : c->password, c->password };
        if (!(auth = calloc(1, sizeof *auth)))
            goto fail;
        auth->kind = REQ_AUTH;
        if (format_argv(&auth->cmd, &auth->len, c->user ? 3 : 2, argv, NULL) < 0)
            goto fail;
    }
    if (sel) {
        sel->next = c->head;
        c->head = sel;
        if (!c->tail)
            c->tail = sel;
        c->handshake_left++;
    }
    if (auth) {
        auth->next = c->head;
        c->head = auth;
        if (!c->tail)
            c->tail = auth;
        c->handshake_left++;
    }
    return 0;
fail:
    if (sel)
        free_req(sel);
    if (auth)
        free_req(auth);
    return UV_ENOMEM;
}

/* Write everything queued while connecting (handshake first) in one go. */
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
    if (!(buf = malloc(total)))
        return UV_ENOMEM;
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
    return transport_write(c, buf, off, secret);
}

static void on_connect(uv_connect_t *req, int status)
{
    struct sock *s = req->data;
    struct rr_conn *c = s->c;
    int err;

    if (c->sock != s)
        return;  /* abandoned (timeout, close): the handle is closing */
    if (status < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(status));
        if (c->ai_next) {
            /* Try the next resolved address, within the same deadline. */
            struct sock *old = c->sock;
            c->sock = NULL;
            uv_close(&old->h.handle, on_sock_close);
            start_connect(c);
            return;
        }
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    if ((err = uv_read_start(&s->h.stream, on_alloc, on_read)) < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(err));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    if (c->ep.tls) {
        /* Still CONNECTING (under the connect deadline) until the TLS
         * handshake is done; transport_feed carries it on. */
        char why[RR_ERRLEN];
        int rc = rr_tls_new(&s->tls, &c->tls, c->ep.host, why, sizeof why);
        if (rc == RR_TLS_OK && (rc = rr_tls_handshake(s->tls, why, sizeof why)) >= 0) {
            if (tls_flush(c) < 0)
                break_conn(c, RR_REPLY_IOERR);
            return;
        }
        tls_failed(c, rc, why);
        return;
    }
    connected(c);
}

/* The transport is up (TCP, unix, or TLS after its handshake): pipeline
 * AUTH and SELECT in front of what is queued, and send it all. */
static void connected(struct rr_conn *c)
{
    int err;

    if ((err = queue_handshake(c)) < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(err));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    transition(c, CS_READY);
    if ((err = flush_queue(c)) < 0) {
        if (err != UV_EPROTO)
            set_error(c, "%s: %s", c->name, uv_strerror(err));
        break_conn(c, RR_REPLY_IOERR);
    }
}

static struct sock *new_sock(struct rr_conn *c)
{
    struct sock *s = calloc(1, sizeof *s);
    int err;

    if (!s)
        return NULL;
    if (!(s->reader = redisReaderCreate())) {
        free(s);
        return NULL;
    }
    s->dfl = s->reader->fn;
    s->fns = *s->dfl;
    s->fns.createString = capped_string;
    s->fns.createArray = capped_array;
    s->reader->fn = &s->fns;
    s->reader->privdata = s;  /* hiredis hands it to every task */
    if (c->ep.transport == RR_TRANSPORT_UNIX)
        err = uv_pipe_init(c->loop, &s->h.pipe, 0);
    else
        err = uv_tcp_init(c->loop, &s->h.tcp);
    if (err < 0) {
        redisReaderFree(s->reader);
        free(s);
        return NULL;
    }
    s->c = c;
    s->h.handle.data = s;
    s->connect_req.data = s;
    c->ops++;
    return s;
}

/* Start a TCP connect to addr on a fresh socket. */
static int connect_addr(struct rr_conn *c, const struct sockaddr *addr)
{
    struct sock *s = new_sock(c);
    int err;

    if (!s)
        return UV_ENOMEM;
    c->sock = s;
    /* Before connect: libuv applies it when it creates the fd. Lock
     * round trips are tiny; Nagle would only add latency. */
    uv_tcp_nodelay(&s->h.tcp, 1);
    err = uv_tcp_connect(&s->connect_req, &s->h.tcp, addr, on_connect);
    if (err < 0)
        return err;  /* s stays c->sock; break_conn closes it */
    transition(c, CS_CONNECTING);
    return 0;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct rr_conn *c = req->data;

    free(req);
    c->ops--;
    if (c->gai != req) {
        /* Stale: timed out, failed or closed meanwhile. */
        if (res)
            uv_freeaddrinfo(res);
        maybe_free(c);
        return;
    }
    c->gai = NULL;
    if (status < 0) {
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(status));
        break_conn(c, RR_REPLY_IOERR);
        return;
    }
    c->ai_list = c->ai_next = res;
    start_connect(c);
}

/* Begin (or continue, with the next resolved address) a connection attempt.
 * Errors are reported from the timer, never synchronously. */
static void start_connect(struct rr_conn *c)
{
    int err;

    if (c->ep.transport == RR_TRANSPORT_UNIX) {
        struct sock *s = new_sock(c);
        if (!s) {
            err = UV_ENOMEM;
            goto fail;
        }
        c->sock = s;
        uv_pipe_connect(&s->connect_req, &s->h.pipe, c->ep.path, on_connect);
        transition(c, CS_CONNECTING);
        return;
    }

    /* Resolved earlier: the next address in order. */
    if (c->ai_list && !c->ai_next)
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(UV_EAI_NONAME));
    while (c->ai_next) {
        struct addrinfo *ai = c->ai_next;
        c->ai_next = ai->ai_next;
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        if ((err = connect_addr(c, ai->ai_addr)) == 0)
            return;
        set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(err));
        if (c->sock) {
            struct sock *old = c->sock;
            c->sock = NULL;
            uv_close(&old->h.handle, on_sock_close);
        }
    }
    if (c->ai_list) {
        /* Every address failed synchronously; the message is set. */
        defer_break(c, RR_REPLY_IOERR);
        return;
    }

    /* IP literals skip the resolver (and its thread pool) entirely. */
    {
        struct sockaddr_in6 sa6;
        struct sockaddr_in sa4;
        if (uv_ip4_addr(c->ep.host, c->ep.port, &sa4) == 0) {
            if ((err = connect_addr(c, (const struct sockaddr *)&sa4)) < 0)
                goto fail;
            return;
        }
        if (uv_ip6_addr(c->ep.host, c->ep.port, &sa6) == 0) {
            if ((err = connect_addr(c, (const struct sockaddr *)&sa6)) < 0)
                goto fail;
            return;
        }
    }

    {
        struct addrinfo hints;
        char port[16];
        uv_getaddrinfo_t *req = malloc(sizeof *req);

        if (!req) {
            err = UV_ENOMEM;
            goto fail;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        snprintf(port, sizeof port, "%d", c->ep.port);
        req->data = c;
        err = uv_getaddrinfo(c->loop, req, on_resolved, c->ep.host, port, &hints);
        if (err < 0) {
            free(req);
            goto fail;
        }
        c->gai = req;
        c->ops++;
        transition(c, CS_RESOLVING);
    }
    return;
fail:
    set_error(c, "cannot connect to %s: %s", c->name, uv_strerror(err));
    defer_break(c, RR_REPLY_IOERR);
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
    wipe_free(c->password);
    wipe_free(c->user);
    explicit_bzero(&c->ep, sizeof c->ep);
    free(c);
    return NULL;
}

/* How many confirmations a pub/sub (un)subscribe command produces. */
static int confirm_count(int argc, const char **argv, const size_t *argvlen)
{
    static const char *const cmds[] = { "subscribe", "psubscribe", "unsubscribe",
                                        "punsubscribe", "ssubscribe", "sunsubscribe" };
    size_t len, i;

    if (argc < 2)
        return 1;
    len = argvlen ? argvlen[0] : strlen(argv[0]);
    for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (len == strlen(cmds[i]) && strncasecmp(argv[0], cmds[i], len) == 0)
            return argc - 1;
    return 1;
}

int rr_conn_command(struct rr_conn *c, rr_reply_fn cb, void *arg,
                    int argc, const char **argv, const size_t *argvlen)
{
    struct req *r;
    int err;

    if (c->state == CS_CLOSING)
        return UV_EINVAL;
    if (!cb || argc < 1)
        return UV_EINVAL;
    if (!(r = calloc(1, sizeof *r)))
        return UV_ENOMEM;
    if ((err = format_argv(&r->cmd, &r->len, argc, argv, argvlen)) < 0) {
        free(r);
        return err;
    }
    r->kind = REQ_USER;
    r->cb = cb;
    r->arg = arg;
    r->nconfirm = confirm_count(argc, argv, argvlen);
    r->sunsub = (argvlen ? argvlen[0] : strlen(argv[0])) == 12 &&
                strncasecmp(argv[0], "sunsubscribe", 12) == 0;
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
        if ((err = transport_write(c, cmd, len, false)) < 0) {
            if (err != UV_EPROTO)  /* TLS: the message is set */
                set_error(c, "%s: %s", c->name, uv_strerror(err));
            defer_break(c, RR_REPLY_IOERR);
        }
    } else {
        push_req(c, r);
        if (c->state == CS_CLOSED && !c->deferred_status) {
            start_connect(c);
            if (c->ep.tls)  /* while the SYN or the lookup is out; errors come again later */
                rr_tls_prepare(&c->tls, c->err, sizeof c->err);
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
