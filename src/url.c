/* url.c — Redis endpoint URLs (redis://, rediss://, unix://,
 * redis-sentinel://, redis-cluster://) to struct rr_endpoint, and which two
 * hosts are one. Pure; never connects, never looks a name up.
 *
 * Credentials are found the same way here and in rr_url_scrub: the userinfo
 * is everything between "//" and the LAST '@' of the URL, and the password
 * is what follows the first ':' in it. Taking the last '@' means an
 * unencoded '/', '?' or '@' inside a password can never make password bytes
 * reach a host, port or path, and so can never reach an error message. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rr.h"
#include "url.h"

#define DEFAULT_PORT 6379
#define DEFAULT_SENTINEL_PORT 26379
#define MAX_DB 10000

/* " (got '70000')" for a port or database that is a short number, else
 * nothing: "redis://user:secret" without a host puts the password where the
 * port goes, and it must not reach the message. */
static void got(const char *s, size_t n, char *out, size_t outlen)
{
    size_t i;

    out[0] = '\0';
    if (n == 0 || n > 5)
        return;
    for (i = 0; i < n; i++)
        if ((s[i] < '0' || s[i] > '9') && !(i == 0 && s[i] == '-'))
            return;
    snprintf(out, outlen, " (got '%.*s')", (int)n, s);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode n bytes of s into out (outlen includes the NUL).
 * Returns the decoded length, -1 on a bad escape or an encoded NUL, -2 if
 * the result does not fit. */
static int pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= n)
                return -1;
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (o + 1 >= outlen)
            return -2;
        out[o++] = c;
    }
    out[o] = '\0';
    return (int)o;
}

/* A decimal number of n bytes in [lo, hi]; digits only, and at most 9 of
 * them (a port or a database never needs more). */
static int parse_int(const char *s, size_t n, long lo, long hi, long *out)
{
    return n > 9 ? -1 : rr_parse_decimal(s, n, lo, hi, out);
}

static int parse_db(const char *s, size_t n, struct rr_endpoint *ep, char *err, size_t errlen)
{
    long v;
    char q[72];

    if (parse_int(s, n, 0, MAX_DB, &v) < 0) {
        got(s, n, q, sizeof q);
        snprintf(err, errlen, "invalid Redis URL: database must be a number from 0 to %d%s", MAX_DB, q);
        return -1;
    }
    ep->db = (int)v;
    return 0;
}

/* Split userinfo (n bytes, no '@') into user and password, decoded. */
static int parse_userinfo(const char *s, size_t n, struct rr_endpoint *ep, char *err, size_t errlen)
{
    const char *colon = memchr(s, ':', n);
    size_t ulen = colon ? (size_t)(colon - s) : n;
    int r;

    if (ulen > 0) {
        r = pct_decode(s, ulen, ep->user, sizeof ep->user);
        if (r == -1) {
            snprintf(err, errlen, "invalid Redis URL: bad %%-escape in the user name");
            return -1;
        }
        if (r == -2) {
            snprintf(err, errlen, "invalid Redis URL: user name longer than %zu bytes", sizeof ep->user - 1);
            return -1;
        }
        ep->has_user = true;
    }
    if (colon && (size_t)(colon - s) + 1 < n) {
        r = pct_decode(colon + 1, n - ulen - 1, ep->password, sizeof ep->password);
        if (r == -1) {
            snprintf(err, errlen, "invalid Redis URL: bad %%-escape in the password; write a literal %% as %%25");
            return -1;
        }
        if (r == -2) {
            snprintf(err, errlen, "invalid Redis URL: password longer than %zu bytes", sizeof ep->password - 1);
            return -1;
        }
        ep->has_password = true;
    }
    return 0;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

/* Parse "host[:port]" or "[v6]:port" of n bytes into ep. */
static int parse_hostport(const char *s, size_t n, int defport, struct rr_endpoint *ep,
                          char *err, size_t errlen)
{
    const char *end = s + n, *p;
    const char *port = NULL;
    size_t hlen, i;
    long v;
    char q[72];
    unsigned char addr[16];

    if (n > 0 && s[0] == '[') {
        p = memchr(s, ']', n);
        if (p == NULL) {
            snprintf(err, errlen, "invalid Redis URL: missing ']' after the IPv6 address");
            return -1;
        }
        hlen = (size_t)(p - s - 1);
        if (hlen == 0 || hlen >= sizeof ep->host) {
            snprintf(err, errlen, "invalid Redis URL: empty or overlong IPv6 address");
            return -1;
        }
        memcpy(ep->host, s + 1, hlen);
        ep->host[hlen] = '\0';
        if (inet_pton(AF_INET6, ep->host, addr) != 1) {
            rr_quote(ep->host, hlen, RR_QUOTE_MAX, q, sizeof q);
            snprintf(err, errlen, "invalid Redis URL: '%s' is not an IPv6 address", q);
            return -1;
        }
        p++;
        if (p < end && *p != ':') {
            rr_quote(p, (size_t)(end - p), RR_QUOTE_MAX, q, sizeof q);
            snprintf(err, errlen, "invalid Redis URL: unexpected '%s' after the IPv6 address", q);
            return -1;
        }
        if (p < end)
            port = p + 1;
    } else {
        /* "redis://a:6379, redis://b:6379": the list goes on after a
         * space, which no host name has. */
        p = memchr(s, ',', n);
        if (p && p + 1 < end && (p[1] == ' ' || p[1] == '\t')) {
            snprintf(err, errlen, "invalid Redis URL: remove the space after the comma; "
                     "several URLs are separated by ',' alone (or give -r once for each)");
            return -1;
        }
        p = memchr(s, ':', n);
        if (p && memchr(p + 1, ':', (size_t)(end - p - 1))) {
            snprintf(err, errlen, "invalid Redis URL: put an IPv6 address in brackets, as in redis://[::1]:6379");
            return -1;
        }
        hlen = p ? (size_t)(p - s) : n;
        if (hlen == 0) {
            snprintf(err, errlen, "invalid Redis URL: empty host; write one, as in redis://127.0.0.1:6379");
            return -1;
        }
        for (i = 0; i < hlen; i++) {
            if (!host_char(s[i])) {
                rr_quote(s, hlen, RR_QUOTE_MAX, q, sizeof q);
                snprintf(err, errlen, "invalid Redis URL: bad host '%s'%s", q,
                         s[i] == ':' || memchr(s, ':', hlen) ? "; put an IPv6 address in brackets" : "");
                return -1;
            }
        }
        if (hlen >= sizeof ep->host) {
            snprintf(err, errlen, "invalid Redis URL: host name longer than %zu bytes", sizeof ep->host - 1);
            return -1;
        }
        memcpy(ep->host, s, hlen);
        ep->host[hlen] = '\0';
        if (p)
            port = p + 1;
    }

    ep->port = defport;
    if (port) {
        if (parse_int(port, (size_t)(end - port), 1, 65535, &v) < 0) {
            got(port, (size_t)(end - port), q, sizeof q);
            snprintf(err, errlen, "invalid Redis URL: port must be a number from 1 to 65535%s", q);
            return -1;
        }
        ep->port = (int)v;
    }
    if (strchr(ep->host, ':'))
        snprintf(ep->display, sizeof ep->display, "[%s]:%d", ep->host, ep->port);
    else
        snprintf(ep->display, sizeof ep->display, "%s:%d", ep->host, ep->port);
    return 0;
}

/* unix://[[user]:password@]/path[?db=N] or unix:/path[?db=N]; rest starts
 * after "unix:". Credentials as redis-cli and redis-py take them: the
 * userinfo is what lies between "//" and the last '@', and the path follows
 * the '@' (unix://:secret@/run/redis.sock). */
static int parse_unix(const char *rest, struct rr_endpoint *ep, char *err, size_t errlen)
{
    const char *path, *query, *at;
    size_t plen;
    int r;

    if (strncmp(rest, "//", 2) == 0) {
        path = rest + 2;
        at = strrchr(path, '@');
        if (at && at[1] == '/') {
            if (parse_userinfo(path, (size_t)(at - path), ep, err, errlen) < 0)
                return -1;
            path = at + 1;
        } else if (at) {
            snprintf(err, errlen, "invalid Redis URL: in a unix:// URL the socket path follows "
                     "the '@' of the credentials, as in unix://user:PASSWORD@/run/redis.sock");
            return -1;
        }
        if (*path != '/') {
            snprintf(err, errlen, "invalid Redis URL: a unix:// URL takes an absolute socket path and no host, as in unix:///run/redis.sock or unix://user:PASSWORD@/run/redis.sock");
            return -1;
        }
    } else {
        path = rest;
    }
    if (*path != '/') {
        snprintf(err, errlen, "invalid Redis URL: the socket path must be absolute, as in unix:///run/redis.sock");
        return -1;
    }
    if (strchr(path, '@')) {
        snprintf(err, errlen, "invalid Redis URL: credentials go in unix://user:PASSWORD@/path (or --password-file, $REDLOCK_PASSWORD)");
        return -1;
    }
    if (strchr(path, '#')) {
        snprintf(err, errlen, "invalid Redis URL: unexpected '#' in a unix:// URL");
        return -1;
    }
    query = strchr(path, '?');
    plen = query ? (size_t)(query - path) : strlen(path);

    r = pct_decode(path, plen, ep->path, sizeof ep->path);
    if (r == -1) {
        snprintf(err, errlen, "invalid Redis URL: bad %%-escape in the socket path");
        return -1;
    }
    if (r == -2) {
        snprintf(err, errlen, "invalid Redis URL: socket path longer than %zu bytes", sizeof ep->path - 1);
        return -1;
    }
    if (r <= 1) {
        snprintf(err, errlen, "invalid Redis URL: empty socket path, write one as in unix:///run/redis.sock");
        return -1;
    }

    if (query) {
        const char *q = query + 1;
        /* Only db is understood; a ?password= would put the secret where
         * ps(1) and shell history show it, so it is refused by name and
         * its value is never echoed. */
        if (strncmp(q, "db=", 3) != 0) {
            if (strncmp(q, "password=", 9) == 0)
                snprintf(err, errlen, "invalid Redis URL: ?password= is not accepted; use --password-file or $REDLOCK_PASSWORD");
            else
                snprintf(err, errlen, "invalid Redis URL: the only query parameter of a unix:// URL is ?db=N");
            return -1;
        }
        if (parse_db(q + 3, strlen(q + 3), ep, err, errlen) < 0)
            return -1;
    }
    ep->transport = RR_TRANSPORT_UNIX;
    snprintf(ep->display, sizeof ep->display, "%s", ep->path);
    return 0;
}

/* The node list of a sentinel or cluster URL: h1[:p][,h2[:p]...] in
 * [p, stop). Keeps the first in ep->host/port too. */
static int parse_nodes(const char *p, const char *stop, int defport, struct rr_endpoint *ep,
                       char *err, size_t errlen)
{
    const char *comma;

    ep->n_nodes = 0;
    for (;;) {
        struct rr_endpoint tmp = *ep;
        comma = memchr(p, ',', (size_t)(stop - p));
        if (ep->n_nodes == RR_MAX_NODES) {
            snprintf(err, errlen, "invalid Redis URL: at most %d %s in one URL", RR_MAX_NODES,
                     ep->kind == RR_EP_SENTINEL ? "sentinels" : "seed nodes");
            return -1;
        }
        if (parse_hostport(p, (size_t)((comma ? comma : stop) - p), defport, &tmp, err, errlen) < 0)
            return -1;
        snprintf(ep->nodes[ep->n_nodes].host, sizeof ep->nodes[0].host, "%s", tmp.host);
        ep->nodes[ep->n_nodes].port = tmp.port;
        if (ep->n_nodes++ == 0) {
            snprintf(ep->host, sizeof ep->host, "%s", tmp.host);
            ep->port = tmp.port;
            snprintf(ep->display, sizeof ep->display, "%s", tmp.display);
        }
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Everything after the "//" of a redis, rediss, sentinel or cluster URL. */
static int parse_tcp(const char *rest, struct rr_endpoint *ep, char *err, size_t errlen)
{
    const char *at = strrchr(rest, '@');
    const char *host = at ? at + 1 : rest;
    const char *slash, *end;
    char q[72];

    if (at && parse_userinfo(rest, (size_t)(at - rest), ep, err, errlen) < 0)
        return -1;

    end = host + strcspn(host, "?#");
    if (ep->kind == RR_EP_SENTINEL) {
        /* h1[:p][,h2[:p]...]/MASTER[?db=N] */
        char first[300];
        size_t mlen;
        slash = memchr(host, '/', (size_t)(end - host));
        if (slash == NULL || slash + 1 >= end) {
            snprintf(err, errlen, "invalid Redis URL: redis-sentinel:// needs a master name, as in redis-sentinel://host:26379/mymaster");
            return -1;
        }
        if (*end == '#' || (*end == '?' && strncmp(end, "?db=", 4) != 0)) {
            snprintf(err, errlen, "invalid Redis URL: the only query parameter of a redis-sentinel:// URL is ?db=N");
            return -1;
        }
        if (*end == '?' && parse_db(end + 4, strlen(end + 4), ep, err, errlen) < 0)
            return -1;
        mlen = (size_t)(end - slash - 1);
        if (mlen >= sizeof ep->master || memchr(slash + 1, '/', mlen)) {
            snprintf(err, errlen, "invalid Redis URL: the master name after the sentinels must be one name of at most %zu bytes",
                     sizeof ep->master - 1);
            return -1;
        }
        for (size_t i = 0; i < mlen; i++) {
            unsigned char ch = (unsigned char)slash[1 + i];
            if (ch <= 0x20 || ch >= 0x7f) {
                snprintf(err, errlen, "invalid Redis URL: the master name may not contain spaces or control characters");
                return -1;
            }
        }
        memcpy(ep->master, slash + 1, mlen);
        ep->master[mlen] = '\0';
        if (parse_nodes(host, slash, DEFAULT_SENTINEL_PORT, ep, err, errlen) < 0)
            return -1;
        snprintf(first, sizeof first, "%s", ep->display);
        if (snprintf(ep->display, sizeof ep->display, "%.120s via sentinel %.150s", ep->master,
                     first) < 0)
            ep->display[0] = '\0';
        return 0;
    }
    if (*end) {
        snprintf(err, errlen, "invalid Redis URL: query parameters and fragments are not supported; put the database in the path, as in redis://host:6379/2");
        return -1;
    }
    if (ep->kind == RR_EP_CLUSTER) {
        char first[300];
        if (memchr(host, '/', (size_t)(end - host))) {
            snprintf(err, errlen, "invalid Redis URL: a redis-cluster:// URL has no path (a cluster has database 0 only), as in redis-cluster://host:7000,host2:7000");
            return -1;
        }
        if (parse_nodes(host, end, DEFAULT_PORT, ep, err, errlen) < 0)
            return -1;
        snprintf(first, sizeof first, "%s", ep->display);
        snprintf(ep->display, sizeof ep->display, "cluster %.280s", first);
        return 0;
    }

    slash = memchr(host, '/', (size_t)(end - host));
    if (parse_hostport(host, (size_t)((slash ? slash : end) - host), DEFAULT_PORT, ep, err, errlen) < 0)
        return -1;
    if (slash && slash + 1 < end) {
        if (memchr(slash + 1, '/', (size_t)(end - slash - 1))) {
            rr_quote(slash, (size_t)(end - slash), RR_QUOTE_MAX, q, sizeof q);
            snprintf(err, errlen, "invalid Redis URL: unexpected path '%s'; the path is only the database number, as in /2", q);
            return -1;
        }
        if (parse_db(slash + 1, (size_t)(end - slash - 1), ep, err, errlen) < 0)
            return -1;
    }
    return 0;
}

int rr_url_parse(const char *url, struct rr_endpoint *ep, char *err, size_t errlen)
{
    const char *rest;
    char q[72];
    size_t n;

    memset(ep, 0, sizeof *ep);
    ep->transport = RR_TRANSPORT_TCP;
    if (url == NULL || *url == '\0') {
        snprintf(err, errlen, "empty Redis URL; write one as in redis://127.0.0.1:6379");
        goto fail;
    }

    if (strncasecmp(url, "redis://", 8) == 0) {
        rest = url + 8;
    } else if (strncasecmp(url, "rediss://", 9) == 0) {
        ep->tls = true;
        rest = url + 9;
    } else if (strncasecmp(url, "redis-sentinel://", 17) == 0) {
        ep->kind = RR_EP_SENTINEL;
        rest = url + 17;
    } else if (strncasecmp(url, "rediss-sentinel://", 18) == 0) {
        ep->kind = RR_EP_SENTINEL;
        ep->tls = true;
        rest = url + 18;
    } else if (strncasecmp(url, "redis-cluster://", 16) == 0) {
        ep->kind = RR_EP_CLUSTER;
        rest = url + 16;
    } else if (strncasecmp(url, "rediss-cluster://", 17) == 0) {
        ep->kind = RR_EP_CLUSTER;
        ep->tls = true;
        rest = url + 17;
    } else if (strncasecmp(url, "unix:", 5) == 0) {
        if (parse_unix(url + 5, ep, err, errlen) < 0)
            goto fail;
        return 0;
    } else {
        /* Show only the scheme: whatever follows may hold a password. */
        n = strcspn(url, ":/@");
        rr_quote(url, n, RR_QUOTE_MAX, q, sizeof q);
        size_t digits = url[n] == ':' ? strspn(url + n + 1, "0123456789") : 0;
        if (digits > 0 && digits <= 5 && url[n + 1 + digits] == '\0')
            /* HOST:PORT, as redis-cli -h/-p users write it: no secret. */
            snprintf(err, errlen, "invalid Redis URL: missing scheme; write it as redis://%s:%s",
                     q, url + n + 1);
        else if (url[n] == ':')
            snprintf(err, errlen, "invalid Redis URL: unknown scheme '%s:'; use redis://, rediss://, unix://, redis-sentinel:// or redis-cluster://", q);
        else
            snprintf(err, errlen, "invalid Redis URL: missing scheme; write it as redis://HOST[:PORT][/DB] or unix:///PATH");
        goto fail;
    }
    if (parse_tcp(rest, ep, err, errlen) < 0)
        goto fail;
    return 0;

fail:
    /* Leave no half-parsed secret behind in the caller's struct. */
    memset(ep, 0, sizeof *ep);
    return -1;
}

/* The address a numeric host is, as IPv6 (an IPv4 one mapped: ::ffff:a.b.c.d),
 * or false for a name. inet_aton, as getaddrinfo, takes "127.1" and
 * "2130706433" too. */
static bool host_addr(const char *host, unsigned char out[16])
{
    struct in_addr a4;

    if (inet_pton(AF_INET6, host, out) == 1)
        return true;
    if (inet_aton(host, &a4) == 0)
        return false;
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, &a4, 4);
    return true;
}

/* The length of a host name without its one trailing dot ("h." is "h"). */
static size_t name_len(const char *host)
{
    size_t n = strlen(host);

    return n > 1 && host[n - 1] == '.' ? n - 1 : n;
}

static bool is_localhost(const char *host)
{
    return name_len(host) == 9 && strncasecmp(host, "localhost", 9) == 0;
}

/* 127.0.0.1 or ::1: what /etc/hosts gives localhost. */
static bool is_loopback_of_localhost(const unsigned char a[16])
{
    static const unsigned char v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 };
    static const unsigned char v6[16] = { [15] = 1 };

    return memcmp(a, v4, 16) == 0 || memcmp(a, v6, 16) == 0;
}

bool rr_url_same_host(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    bool ax = host_addr(a, x), by = host_addr(b, y);

    if (ax && by)
        return memcmp(x, y, 16) == 0;
    if (is_localhost(a) && by)
        return is_loopback_of_localhost(y);
    if (is_localhost(b) && ax)
        return is_loopback_of_localhost(x);
    return !ax && !by && name_len(a) == name_len(b) && strncasecmp(a, b, name_len(a)) == 0;
}

bool rr_url_scrub(char *url)
{
    char *rest = strstr(url, "://");
    char *at, *colon, *p;
    bool hidden = false;

    if (rest == NULL)
        return false;
    rest += 3;
    at = strrchr(rest, '@');
    if (at == NULL)
        return false;
    colon = memchr(rest, ':', (size_t)(at - rest));
    if (colon == NULL)
        return false;
    for (p = colon + 1; p < at; p++) {
        *p = '*';
        hidden = true;
    }
    return hidden;
}

/* Append s to out at *o, each byte outside keep and the unreserved set of
 * RFC 3986 percent-encoded (as pct_decode reads it back). */
static void put_pct(char *out, size_t len, size_t *o, const char *s, const char *keep)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     strchr("-._~", c) || (keep && strchr(keep, c));
        if (*o < len)
            *o += (size_t)snprintf(out + *o, len - *o, plain ? "%c" : "%%%02X", c);
    }
}

static void put_host(char *out, size_t len, size_t *o, const char *host, int port)
{
    if (*o < len)
        *o += (size_t)snprintf(out + *o, len - *o, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
                               port);
}

int rr_url_format(const struct rr_endpoint *ep, char *out, size_t len)
{
    static const char *const schemes[][2] = {
        [RR_EP_DIRECT] = { "redis://", "rediss://" },
        [RR_EP_SENTINEL] = { "redis-sentinel://", "rediss-sentinel://" },
        [RR_EP_CLUSTER] = { "redis-cluster://", "rediss-cluster://" },
    };
    size_t o = 0;

    if (len == 0)
        return -1;
    out[0] = '\0';
    o += (size_t)snprintf(out, len, "%s",
                          ep->transport == RR_TRANSPORT_UNIX ? "unix://"
                                                             : schemes[ep->kind][ep->tls]);
    if (ep->has_user && ep->user[0]) {
        put_pct(out, len, &o, ep->user, NULL);
        if (o < len)
            o += (size_t)snprintf(out + o, len - o, "@");
    }
    if (ep->transport == RR_TRANSPORT_UNIX) {
        put_pct(out, len, &o, ep->path, "/");
        if (ep->db && o < len)
            o += (size_t)snprintf(out + o, len - o, "?db=%d", ep->db);
    } else if (ep->kind == RR_EP_DIRECT) {
        put_host(out, len, &o, ep->host, ep->port);
        if (ep->db && o < len)
            o += (size_t)snprintf(out + o, len - o, "/%d", ep->db);
    } else {
        for (int i = 0; i < ep->n_nodes; i++) {
            if (i && o < len)
                o += (size_t)snprintf(out + o, len - o, ",");
            put_host(out, len, &o, ep->nodes[i].host, ep->nodes[i].port);
        }
        if (ep->kind == RR_EP_SENTINEL && o < len)
            o += (size_t)snprintf(out + o, len - o, "/%s", ep->master);
        if (ep->kind == RR_EP_SENTINEL && ep->db && o < len)
            o += (size_t)snprintf(out + o, len - o, "?db=%d", ep->db);
    }
    return o < len ? 0 : -1;
}
