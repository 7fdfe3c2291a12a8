/* transport.h — how conn.c talks to the bytes, whatever carries them.
 *
 * Two implementations: the plain socket (sock.h: TCP or a unix socket,
 * with the name lookup and one connect per resolved address) and TLS over
 * it (tls.h). conn opens one transport per connection attempt and knows no
 * more than this file: it writes plaintext, gets plaintext and three
 * events, and closes.
 *
 * Lifetime (hiredis's rule: never free a context inside its own callback):
 * close only marks the transport and starts closing its libuv handles; no
 * event comes after it except released, which comes from a later loop
 * callback once every handle and request the transport started is back
 * and its memory is freed. So a transport stays valid in every stack frame
 * that can still see it, and its owner counts it among what it waits for.
 */
#ifndef RR_TRANSPORT_H
#define RR_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

struct rr_wire;

/* What a failure says about the connection and the fix. */
enum rr_transport_fault {
    RR_TF_CONNECT,  /* it never came up: "cannot connect to NAME: detail" */
    RR_TF_STREAM,   /* it was up and broke: "NAME: detail" */
    RR_TF_EOF,      /* the server closed it: "NAME: detail" */
};

/* Does the failure settle whether retrying can help (rr_conn_refused)? */
enum rr_transport_verdict {
    RR_TV_NONE,     /* no word on it */
    RR_TV_RETRY,    /* a TLS failure retrying may fix */
    RR_TV_REFUSED,  /* a TLS refusal: fix the configuration */
};

struct rr_transport_failure {
    enum rr_transport_fault fault;
    enum rr_transport_verdict verdict;
    const char *detail;     /* e.g. "connection refused"; valid during the call */
};

/* The owner's callbacks, each given arg. After failed the transport is
 * useless; its owner closes it. */
struct rr_transport_events {
    void *arg;
    void (*up)(void *arg);                                   /* connected, handshake done */
    void (*data)(void *arg, const char *data, size_t len);   /* plaintext from the server */
    void (*failed)(void *arg, const struct rr_transport_failure *f);
    void (*released)(void *arg);                             /* freed: see above */
};

struct rr_transport_ops {
    /* Send len bytes of plaintext (once up); data is malloc'ed and the
     * transport's from now on, wiped before it is freed when secret.
     * Returns 0, or -1 with why (what failed) filled. */
    int (*write)(struct rr_wire *t, char *data, size_t len, bool secret,
                 char *why, size_t whylen);
    /* The server answered a request: a later close is no refusal. */
    void (*answered)(struct rr_wire *t);
    /* Before a deadline judges the connection: take in, now, what the
     * socket already holds (a non-blocking read; the bytes go through data
     * as usual, and may bring up or failed). Returns true when the connect
     * itself has finished in the kernel but the loop has not reported it
     * yet: up comes from its next poll. See catch_up in conn.c for why. */
    bool (*catch_up)(struct rr_wire *t);
    /* Why a connect that ran out of time has not finished, or NULL for
     * the plain "connection timed out". */
    const char *(*stalled)(const struct rr_wire *t);
    /* Stop: no event but released comes after this. */
    void (*close)(struct rr_wire *t);
};

/* Every transport starts with this. */
struct rr_wire {
    const struct rr_transport_ops *ops;
};

#endif
