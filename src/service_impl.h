/* service_impl.h — what a kind of lock service implements (service.h).
 *
 * service.c owns the requests: a copy of each command, its deadline, the
 * number of sends, the WAIT behind a write. A backend owns how a node is
 * found: it picks the connection for a request (route), and judges each
 * answer (judge): deliver it, or send the request again because it surely
 * did not run. Backends call rr_svc_node_conn for their connections, so every
 * connection gets the service's options and pub/sub handler, and
 * rr_svc_kick when a route they were looking up is known (or has failed).
 * service.c knows no kind: what is particular to one (a cluster's ASKING,
 * a sentinel's credentials) stays in its backend, behind these hooks.
 */
#ifndef RR_SERVICE_IMPL_H
#define RR_SERVICE_IMPL_H

#include "rr.h"
#include "service.h"

struct svc_req {
    struct svc_req *next;            /* in the parked list */
    struct rr_svc *s;
    rr_svc_reply_fn cb;
    void *arg;
    int argc;
    char **argv;
    size_t *argvlen;
    bool write;                      /* WAIT behind it when sync_replicas > 0 */
    uint64_t deadline;               /* uv_now based */
    uint64_t not_before;             /* parked: resend no earlier (backoff) */
    int sends;
    /* The current send. */
    struct rr_conn *on;
    int due;                         /* conn callbacks still due */
    int status;                      /* the command's */
    bool unsent;                     /* status is an error and it was never written */
    redisReply *reply;               /* the command's, kept until the send ends */
    long long acked;                 /* WAIT's answer, -1 none */
    char wait_err[160];              /* WAIT's error reply (NOPERM ...), "" none */
    bool resub;                      /* our own re-subscription after a node went down */
    int fail_status;                 /* parked only to be answered with this, later */
    uintptr_t tag;                   /* the backend's notes about this request, 0 at first */
};

enum svc_verdict { SVC_DELIVER, SVC_RESEND };
enum svc_route { SVC_ROUTED, SVC_PARKED, SVC_FAILED };

struct rr_svc_backend {
    const char *kind;                /* rr_svc_kind */
    enum rr_ep_kind ep_kind;         /* the URLs it serves */
    bool sharded;                    /* rr_svc_sharded */
    int (*init)(struct rr_svc *s);
    /* Pick the connection for q (*c), or park q until rr_svc_kick, or fail it
     * (s->err set; it is answered RR_REPLY_IOERR). */
    enum svc_route (*route)(struct rr_svc *s, struct svc_req *q, struct rr_conn **c);
    /* q's send ended: q->status, q->reply, q->unsent are set. RESEND only
     * what surely did not run; q->not_before may delay it. */
    enum svc_verdict (*judge)(struct rr_svc *s, struct svc_req *q);
    /* Close every connection (synchronously answering what is pending). */
    void (*close)(struct rr_svc *s);
    /* Optional: an established connection of ours went down. */
    void (*down)(struct rr_svc *s, struct rr_conn *c);
    /* Optional, called after route for each send: a command to write just
     * before q on the same connection, its answer ignored (a cluster's
     * ASKING), as a NULL-terminated argv in static storage; or NULL. */
    const char *const *(*preamble)(struct rr_svc *s, struct svc_req *q);
};

#define SVC_MAX_SUBS 4

/* A (S|P)SUBSCRIBE that succeeded, to be sent again where the node is now. */
struct svc_sub {
    int argc;
    char **argv;
    size_t *argvlen;
};

struct rr_svc {
    uv_loop_t *loop;
    struct rr_endpoint ep;           /* copied; credentials wiped on close */
    struct rr_svc_opts o;
    const struct rr_svc_backend *be;
    void *impl;                      /* the backend's state */
    rr_svc_message_fn msg_fn;
    void *msg_arg;
    struct svc_req *parked, *parked_tail;
    struct svc_req *kicking;         /* the parked requests rr_svc_kick is walking */
    uv_timer_t timer;                /* parked deadlines and backoffs */
    uv_timer_t resub_timer;          /* subscribe again after the node went down */
    int handles;                     /* timers still open */
    struct svc_sub subs[SVC_MAX_SUBS];
    int n_subs;
    struct rr_conn *sub_conn;        /* where the subscriptions are */
    int64_t resub_ms;                /* backoff */
    bool closing;
    bool queueing;                   /* inside rr_svc_command: never call back from there */
    bool refused;
    long long acked;                 /* for rr_svc_replicas, in a callback */
    int sync_need;                   /* replicas that must confirm a write now (the
                                      * backend may lower o.sync_replicas for a while) */
    const char *wait_err;            /* for rr_svc_wait_error, in a callback */
    bool unsent;                     /* for rr_svc_unsent, in a callback */
    char node[300];                  /* where the last request went */
    char err[RR_ERRLEN];
};

/* The service's endpoint pointed at host:port (ep itself when host is
 * NULL), as one direct server: TLS and credentials as the URL has them.
 * The caller wipes *out (explicit_bzero) when done with it. */
void rr_svc_endpoint(const struct rr_svc *s, const char *host, int port, struct rr_endpoint *out);

/* A connection to host:port (or ep itself when host is NULL) with the
 * service's options, TLS and pub/sub handler. NULL when out of memory. */
struct rr_conn *rr_svc_node_conn(struct rr_svc *s, const char *host, int port);

/* Try again to route every parked request (call when a lookup ended). */
void rr_svc_kick(struct rr_svc *s);

/* The master moved (a backend learned it other than by the connection
 * going down): subscribe again where the master is now, and tell the
 * subscriber that messages may have been missed (msg NULL). */
void rr_svc_resubscribe(struct rr_svc *s);

/* Set s->err, one line. */
void rr_svc_set_error(struct rr_svc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How much of r's text our messages quote: at most 200 bytes, so that one
 * server's long error cannot fill the line. */
int rr_svc_excerpt(const redisReply *r);

/* Set s->err to "NODE: ERROR TEXT" (the excerpt) for q's reply. */
void rr_svc_error_reply(struct rr_svc *s, const struct svc_req *q);

/* Is r an error reply starting with word (e.g. "READONLY")? */
bool rr_svc_is_error(const redisReply *r, const char *word);

extern const struct rr_svc_backend rr_svc_direct, rr_svc_sentinel, rr_svc_cluster;

#endif
