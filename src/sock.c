/* sock.c — the plain socket transport (sock.h).
 *
 * Each connect attempt gets its own libuv handle: a handle whose connect
 * failed cannot connect again, so the next address gets a fresh one and
 * the old one closes on its own. The transport always holds one handle
 * from open to close, so released always comes from a close callback.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* explicit_bzero */
#endif
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "sock.h"

struct handle {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_connect_t connect_req;
    struct sock *s;
    bool used;              /* a connect was started on it */
    bool reading;           /* connected, and libuv reads it */
};

struct sock {
    struct rr_wire t;  /* first: the transport is the sock */
    uv_loop_t *loop;
    const struct rr_endpoint *ep;
    struct rr_transport_events ev;
    struct handle *cur;     /* the attempt that counts; NULL once closed */
    uv_getaddrinfo_t *gai;  /* the lookup in flight, or NULL */
    struct addrinfo *ai_list, *ai_next;
    int pending;            /* handles and lookups whose callback is due */
    bool closed;
    char rbuf[16384];
};

struct wreq {
    uv_write_t req;
    struct handle *h;
    char *data;
    size_t len;
    bool secret;            /* holds AUTH: wipe before free */
};

static void on_connect(uv_connect_t *req, int status);

static void fail(struct sock *s, enum rr_transport_fault fault, const char *detail)
{
    struct rr_transport_failure f = { fault, RR_TV_NONE, detail };

    s->ev.failed(s->ev.arg, &f);
}

static void maybe_release(struct sock *s)
{
    struct rr_transport_events ev = s->ev;

    if (!s->closed || s->pending > 0)
        return;
    free(s);
    ev.released(ev.arg);
}

static void on_handle_close(uv_handle_t *uh)
{
    struct handle *h = uh->data;
    struct sock *s = h->s;

    free(h);
    s->pending--;
    maybe_release(s);
}

static struct handle *new_handle(struct sock *s)
{
    struct handle *h = calloc(1, sizeof *h);
    int err;

    if (!h)
        return NULL;
    if (s->ep->transport == RR_TRANSPORT_UNIX)
        err = uv_pipe_init(s->loop, &h->h.pipe, 0);
    else
        err = uv_tcp_init(s->loop, &h->h.tcp);
    if (err < 0) {
        free(h);
        return NULL;
    }
    h->s = s;
    h->h.handle.data = h;
    h->connect_req.data = h;
    s->pending++;
    return h;
}

/* A TCP connect to addr, on a fresh handle if the current one was used. */
static int connect_addr(struct sock *s, const struct sockaddr *addr)
{
    if (s->cur->used) {
        struct handle *h = new_handle(s);
        if (!h)
            return UV_ENOMEM;
        uv_close(&s->cur->h.handle, on_handle_close);
        s->cur = h;
    }
    s->cur->used = true;
    /* Before connect: libuv applies it when it creates the fd. Lock
     * round trips are tiny; Nagle would only add latency. */
    uv_tcp_nodelay(&s->cur->h.tcp, 1);
    return uv_tcp_connect(&s->cur->connect_req, &s->cur->h.tcp, addr, on_connect);
}

/* The next resolved address, within the owner's one deadline. */
static void try_next(struct sock *s, const char *last)
{
    int err;

    while (s->ai_next) {
        struct addrinfo *ai = s->ai_next;
        s->ai_next = ai->ai_next;
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        if ((err = connect_addr(s, ai->ai_addr)) == 0)
            return;
        last = uv_strerror(err);
    }
    fail(s, RR_TF_CONNECT, last ? last : uv_strerror(UV_EAI_NONAME));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct sock *s = req->data;

    free(req);
    s->pending--;
    if (s->gai != req) {
        /* Stale: closed meanwhile. */
        if (res)
            uv_freeaddrinfo(res);
        maybe_release(s);
        return;
    }
    s->gai = NULL;
    if (status < 0) {
        fail(s, RR_TF_CONNECT, uv_strerror(status));
        return;
    }
    s->ai_list = s->ai_next = res;
    try_next(s, NULL);
}

static void on_alloc(uv_handle_t *uh, size_t suggested, uv_buf_t *buf)
{
    struct handle *h = uh->data;

    (void)suggested;
    *buf = uv_buf_init(h->s->rbuf, sizeof h->s->rbuf);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct handle *h = stream->data;
    struct sock *s = h->s;

    if (s->closed || h != s->cur)
        return;
    if (nread > 0)
        s->ev.data(s->ev.arg, buf->base, (size_t)nread);
    else if (nread == UV_EOF)
        fail(s, RR_TF_EOF, "connection closed by server");
    else if (nread < 0)
        fail(s, RR_TF_STREAM, uv_strerror((int)nread));
}

static void on_connect(uv_connect_t *req, int status)
{
    struct handle *h = req->data;
    struct sock *s = h->s;
    int err;

    if (s->closed || h != s->cur)
        return;  /* the handle is closing */
    if (status < 0) {
        try_next(s, uv_strerror(status));
        return;
    }
    if ((err = uv_read_start(&h->h.stream, on_alloc, on_read)) < 0) {
        fail(s, RR_TF_CONNECT, uv_strerror(err));
        return;
    }
    h->reading = true;
    if (s->ai_list) {
        uv_freeaddrinfo(s->ai_list);
        s->ai_list = s->ai_next = NULL;
    }
    s->ev.up(s->ev.arg);
}

static void on_write(uv_write_t *req, int status)
{
    struct wreq *w = (struct wreq *)req;
    struct handle *h = w->h;
    struct sock *s = h->s;

    if (w->secret)
        explicit_bzero(w->data, w->len);
    free(w->data);
    free(w);
    if (status < 0 && status != UV_ECANCELED && h == s->cur && !s->closed)
        fail(s, RR_TF_STREAM, uv_strerror(status));
}

static int sock_write(struct rr_wire *t, char *data, size_t len, bool secret,
                      char *why, size_t whylen)
{
    struct sock *s = (struct sock *)t;
    struct wreq *w = malloc(sizeof *w);
    uv_buf_t buf = uv_buf_init(data, (unsigned int)len);
    int err;

    if (!w) {
        err = UV_ENOMEM;
        goto fail;
    }
    w->h = s->cur;
    w->data = data;
    w->len = len;
    w->secret = secret;
    err = uv_write(&w->req, &s->cur->h.stream, &buf, 1, on_write);
    if (err < 0) {
        free(w);
        goto fail;
    }
    return 0;
fail:
    if (secret)
        explicit_bzero(data, len);
    free(data);
    snprintf(why, whylen, "%s", uv_strerror(err));
    return -1;
}

/* Connected: read what the socket holds without waiting, and deliver it
 * as on_read does (bounded, so a server that streams without end cannot
 * hold us here). libuv's poll is level-triggered, so it simply finds less
 * to read afterwards. Connecting: has the kernel finished the connect? A
 * zero-timeout poll says so (writable, no error or hang-up). SO_ERROR is
 * not read: that would clear a pending error that libuv's own connect
 * callback still has to see. */
static bool sock_catch_up(struct rr_wire *t)
{
    struct sock *s = (struct sock *)t;
    struct handle *h = s->cur;
    struct pollfd p;
    uv_os_fd_t fd;
    ssize_t n;
    int i;

    if (s->closed || !h || !h->used || uv_fileno(&h->h.handle, &fd) < 0)
        return false;
    if (!h->reading) {
        p.fd = fd;
        p.events = POLLOUT;
        p.revents = 0;
        return poll(&p, 1, 0) == 1 && (p.revents & (POLLOUT | POLLERR | POLLHUP)) == POLLOUT;
    }
    for (i = 0; i < 64 && !s->closed && h == s->cur; i++) {
        n = recv(fd, s->rbuf, sizeof s->rbuf, MSG_DONTWAIT);
        if (n > 0) {
            s->ev.data(s->ev.arg, s->rbuf, (size_t)n);
        } else if (n == 0) {
            fail(s, RR_TF_EOF, "connection closed by server");
            break;
        } else if (errno != EINTR) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fail(s, RR_TF_STREAM, uv_strerror(-errno));
            break;
        }
    }
    return false;
}

static void sock_answered(struct rr_wire *t)
{
    (void)t;
}

static const char *sock_stalled(const struct rr_wire *t)
{
    (void)t;
    return NULL;
}

static void sock_close(struct rr_wire *t)
{
    struct sock *s = (struct sock *)t;

    if (s->closed)
        return;
    s->closed = true;
    uv_close(&s->cur->h.handle, on_handle_close);
    s->cur = NULL;
    if (s->gai) {
        /* If the lookup already runs in the thread pool uv_cancel fails and
         * on_resolved sees it is stale; either way it frees the request. */
        uv_cancel((uv_req_t *)s->gai);
        s->gai = NULL;
    }
    if (s->ai_list) {
        uv_freeaddrinfo(s->ai_list);
        s->ai_list = s->ai_next = NULL;
    }
}

static const struct rr_transport_ops sock_ops = {
    sock_write, sock_answered, sock_catch_up, sock_stalled, sock_close,
};

/* A host name: start the lookup; on_resolved carries on. */
static int resolve(struct sock *s)
{
    struct addrinfo hints;
    char port[16];
    uv_getaddrinfo_t *req = malloc(sizeof *req);
    int err;

    if (!req)
        return UV_ENOMEM;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    snprintf(port, sizeof port, "%d", s->ep->port);
    req->data = s;
    err = uv_getaddrinfo(s->loop, req, on_resolved, s->ep->host, port, &hints);
    if (err < 0) {
        free(req);
        return err;
    }
    s->gai = req;
    s->pending++;
    return 0;
}

int rr_sock_open(struct rr_wire **out, uv_loop_t *loop, const struct rr_endpoint *ep,
                 const struct rr_transport_events *ev, char *why, size_t whylen)
{
    struct sock *s = calloc(1, sizeof *s);
    struct sockaddr_in6 sa6;
    struct sockaddr_in sa4;
    int err;

    *out = NULL;
    if (s) {
        s->ep = ep;
        s->loop = loop;
        s->cur = new_handle(s);
    }
    if (!s || !s->cur) {
        free(s);
        snprintf(why, whylen, "%s", uv_strerror(UV_ENOMEM));
        return UV_ENOMEM;
    }
    s->t.ops = &sock_ops;
    s->ev = *ev;
    *out = &s->t;
    if (ep->transport == RR_TRANSPORT_UNIX) {
        s->cur->used = true;
        uv_pipe_connect(&s->cur->connect_req, &s->cur->h.pipe, ep->path, on_connect);
        return 0;
    }
    /* IP literals skip the resolver (and its thread pool) entirely. */
    if (uv_ip4_addr(ep->host, ep->port, &sa4) == 0)
        err = connect_addr(s, (const struct sockaddr *)&sa4);
    else if (uv_ip6_addr(ep->host, ep->port, &sa6) == 0)
        err = connect_addr(s, (const struct sockaddr *)&sa6);
    else
        err = resolve(s);
    if (err < 0)
        snprintf(why, whylen, "%s", uv_strerror(err));
    return err;
}
