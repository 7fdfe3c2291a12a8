/* conn.h — one connection to one Redis endpoint, on a libuv loop.
 *
 * hiredis is used only as the RESP codec (resp.h: redisFormatCommandArgv
 * to encode, a capped redisReader to decode); the bytes travel through a
 * transport (transport.h): the plain socket (sock.h, TCP or unix) or TLS
 * over it (tls.h, rediss://), which counts as connecting until its
 * handshake is done. Every request carries its own deadline, so a stopped
 * or unreachable server can never hang the caller. Requests are pipelined:
 * they are written as soon as the connection is up and answered in order.
 *
 * The connection opens lazily on the first request; AUTH and SELECT are
 * pipelined in front of it. If the connection fails, times out, or is
 * closed by the server, every pending request is answered with an error
 * status and the connection goes back to CLOSED; the next request
 * reconnects.
 */
#ifndef RR_CONN_H
#define RR_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "tls.h"
#include "url.h"

struct rr_conn;

/* Status passed to a reply callback. */
enum rr_reply_status {
    RR_REPLY_OK = 0,        /* reply is set (it may be a Redis error reply) */
    RR_REPLY_TIMEOUT = -1,  /* no reply before the request's deadline */
    RR_REPLY_IOERR = -2,    /* connect failed, connection reset, protocol error, AUTH refused */
    RR_REPLY_CLOSED = -3,   /* rr_conn_close was called while it was pending */
};

/* Called once per request. reply is owned by the connection and freed when
 * the callback returns; it is NULL unless status is RR_REPLY_OK. The
 * callback may issue new requests, and may call rr_conn_close on c. */
typedef void (*rr_reply_fn)(struct rr_conn *c, int status, redisReply *reply, void *arg);

/* Called for each pub/sub push ["message", channel, payload]. */
typedef void (*rr_message_fn)(struct rr_conn *c, redisReply *msg, void *arg);

struct rr_conn_opts {
    int64_t connect_timeout_ms;   /* TCP/unix connect (and name lookup) */
    int64_t request_timeout_ms;   /* per request, counted from when it is queued */
    const char *user;             /* AUTH user, or NULL */
    const char *password;         /* AUTH password, or NULL for no AUTH */
    struct rr_tls_opts tls;       /* for rediss:// endpoints; strings must outlive c */
    /* A request queued while connecting waits for the connection up to
     * connect_timeout_ms (TCP, TLS handshake, AUTH), and request_timeout_ms
     * counts from there. Without it, it times out alone, unsent, after
     * request_timeout_ms, and the attempt goes on (so that a cluster can ask
     * another node): right for one fixed server, which has no other. */
    bool wait_connect;
};

/* Create a connection object (does not connect yet). ep and opts are copied.
 * Returns NULL only when out of memory. */
struct rr_conn *rr_conn_new(uv_loop_t *loop, const struct rr_endpoint *ep,
                            const struct rr_conn_opts *opts);

/* Queue a command; connects first if needed. cb is always called exactly
 * once, later (never from inside this call). Returns 0, or a negative value
 * if c is closing (then cb is never called). */
int rr_conn_command(struct rr_conn *c, rr_reply_fn cb, void *arg,
                    int argc, const char **argv, const size_t *argvlen);

/* Same, with NUL-terminated strings; argv ends with NULL. */
int rr_conn_commandv(struct rr_conn *c, rr_reply_fn cb, void *arg, const char **argv);

/* Route pub/sub pushes ("message" arrays) to fn. Until set, they would be
 * taken as replies. */
void rr_conn_on_message(struct rr_conn *c, rr_message_fn fn, void *arg);

/* Called when a connection that was up goes down (EOF, reset, timeout),
 * after the pending requests were answered: a subscribed connection has
 * none, so this is how its owner learns it must subscribe again. */
typedef void (*rr_down_fn)(struct rr_conn *c, void *arg);
void rr_conn_on_down(struct rr_conn *c, rr_down_fn fn, void *arg);

/* Answer every pending request with RR_REPLY_CLOSED, close the socket and
 * free c once libuv has closed its handles. Safe to call from a callback of
 * c; c must not be used afterwards. */
void rr_conn_close(struct rr_conn *c);

/* The last error, e.g. "cannot connect to 10.0.0.5:6379: connection refused"
 * or "10.0.0.5:6379: no reply within 500ms". "" when none. */
const char *rr_conn_error(const struct rr_conn *c);

/* "host:port" or the socket path, never credentials. */
const char *rr_conn_name(const struct rr_conn *c);

/* Was the last failure a refusal that retrying cannot fix (a TLS
 * certificate that does not verify, a client certificate the server wants)?
 * Cleared by the next reply. */
bool rr_conn_refused(const struct rr_conn *c);

/* Inside a callback called with an error status: was that request never
 * written to the server (the connection failed before it went out)? Such
 * a request cannot have run, so it is safe to send again elsewhere. */
bool rr_conn_unsent(const struct rr_conn *c);

/* Inside a reply callback with RR_REPLY_OK: the callee keeps the reply and
 * frees it later with freeReplyObject (e.g. to answer a pair of pipelined
 * commands together). */
void rr_conn_keep_reply(struct rr_conn *c);

/* Is the connection up right now (connected and handshake done)? */
int rr_conn_is_ready(const struct rr_conn *c);

#endif
