/* url.h — Redis endpoint URLs. */
#ifndef RR_URL_H
#define RR_URL_H

#include <stdbool.h>
#include <stddef.h>

enum rr_transport { RR_TRANSPORT_TCP, RR_TRANSPORT_UNIX };

struct rr_endpoint {
    enum rr_transport transport;
    bool tls;                 /* rediss:// */
    bool sentinel;            /* redis-sentinel:// (parsed, not yet supported) */
    char host[256];           /* TCP: host name or IP literal, without [] */
    int port;                 /* TCP: 1..65535, default 6379 */
    char path[108];           /* unix: socket path */
    int db;                   /* SELECT index, default 0 */
    bool has_user, has_password;
    char user[128];
    char password[512];
    char display[300];        /* "host:port", "[::1]:6379" or the socket path; never credentials */
};

/* Parse one URL:
 *   redis://[[user]:password@]host[:port][/db]
 *   rediss://...                     (TLS)
 *   unix:///path/to/sock[?db=N]      (also unix:/path, and ?password=... is NOT accepted)
 *   redis-sentinel://host[:port][,host2[:port]]/master-name  (sets sentinel)
 * An IPv6 host is written in brackets: redis://[::1]:6380. User and password
 * are percent-decoded. Returns 0, or -1 with a one-line reason in err that
 * never contains the password. */
int rr_url_parse(const char *url, struct rr_endpoint *ep, char *err, size_t errlen);

/* Overwrite, in place, the password part of a URL string (argv scrubbing),
 * replacing each of its bytes with '*'. Returns true if something was hidden. */
bool rr_url_scrub(char *url);

#endif
