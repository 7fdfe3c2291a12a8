/* url.h — Redis endpoint URLs. */
#ifndef RR_URL_H
#define RR_URL_H

#include <stdbool.h>
#include <stddef.h>

enum rr_transport { RR_TRANSPORT_TCP, RR_TRANSPORT_UNIX };

/* How the lock service behind a URL finds the server to talk to. */
enum rr_ep_kind {
    RR_EP_DIRECT,             /* redis://, rediss://, unix://: that server */
    RR_EP_SENTINEL,           /* redis-sentinel://: the master the sentinels name */
    RR_EP_CLUSTER,            /* redis-cluster://: the owner of the job's slot */
};

#define RR_MAX_NODES 8        /* sentinels or cluster seeds in one URL */

struct rr_node {
    char host[256];
    int port;
};

struct rr_endpoint {
    enum rr_transport transport;
    enum rr_ep_kind kind;
    bool tls;                 /* rediss://, rediss-sentinel://, rediss-cluster:// */
    char host[256];           /* TCP: host name or IP literal, without [] */
    int port;                 /* TCP: 1..65535, default 6379 (26379 for a sentinel) */
    int n_nodes;              /* SENTINEL/CLUSTER: the sentinels or seeds, in URL order */
    struct rr_node nodes[RR_MAX_NODES];  /* (nodes[0] is host:port too) */
    char master[128];         /* SENTINEL: the master's name */
    char path[108];           /* unix: socket path */
    int db;                   /* SELECT index, default 0 */
    bool has_user, has_password;
    char user[128];
    char password[512];
    char display[300];        /* "host:port", "[::1]:6379", the socket path,
                               * "MASTER via sentinel host:port" or
                               * "cluster host:port"; never credentials */
};

/* Parse one URL:
 *   redis://[[user]:password@]host[:port][/db]
 *   rediss://...                     (TLS)
 *   unix://[[user]:password@]/path/to/sock[?db=N]  (also unix:/path; ?password=... is NOT accepted)
 *   redis-sentinel://[[user]:password@]host[:port][,host2[:port]...]/MASTER[?db=N]
 *   rediss-sentinel://...            (TLS to the sentinels and the master)
 *   redis-cluster://[[user]:password@]host:port[,host2:port...]  (seed nodes)
 *   rediss-cluster://...
 * The credentials of a sentinel or cluster URL are the data nodes' (the
 * master's), as for redis://; sentinels have their own (config.h).
 * An IPv6 host is written in brackets: redis://[::1]:6380. User and password
 * are percent-decoded. Returns 0, or -1 with a one-line reason in err that
 * never contains the password. */
int rr_url_parse(const char *url, struct rr_endpoint *ep, char *err, size_t errlen);

/* Do two TCP hosts, at the same port, reach the same server, as far as can
 * be told without a lookup? The same name in any case, with or without a
 * trailing dot; the same address however written ("127.1", "::ffff:127.0.0.1"
 * and "127.0.0.1" are one); "localhost" beside 127.0.0.1 or ::1 (it may
 * resolve to either, and the connection tries each address it gets).
 * Never the same: 127.0.0.1 beside ::1 (one server listening on both, or
 * two), or a name beside an address other than localhost's: only the
 * servers can tell. Pure. */
bool rr_url_same_host(const char *a, const char *b);

/* ep as a URL that rr_url_parse reads back to the same endpoint, without
 * its password (never written: the password comes from --password-file or
 * the environment, or is asked for by the server's refusal). Into out (len
 * bytes); -1 if it does not fit. Pure. */
int rr_url_format(const struct rr_endpoint *ep, char *out, size_t len);

/* Overwrite, in place, the password part of a URL string (argv scrubbing),
 * replacing each of its bytes with '*'. Returns true if something was hidden. */
bool rr_url_scrub(char *url);

#endif
