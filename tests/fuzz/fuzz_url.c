/* fuzz_url.c — libFuzzer target for rr_url_parse and rr_url_scrub.
 *
 * The input is one URL (cut at its first NUL byte). Invariants:
 *   - err is one non-empty line on failure, and ep is all zero;
 *   - on success a TCP port is in 1..65535 and display is a non-empty line
 *     (a unix display is the socket path, which may hold any byte);
 *   - the password is where rr_url_scrub says it is: for the redis schemes,
 *     has_password is set exactly when scrub finds password bytes, and scrub
 *     stars exactly those bytes and nothing else;
 *   - neither err nor display depends on the password's bytes: the URL is
 *     parsed again with the password replaced by a canary of the same shape
 *     (same length, same %-escape structure), and both results must be
 *     identical. A literal strstr(display, password) would be unsound — a
 *     password "1" is "in" 127.0.0.1:6379 — while this comparison is exact. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rr.h"
#include "url.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_url: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

/* Where the password is, found as url.h documents it and rr_url_scrub does:
 * userinfo runs from the first "://" to the last '@', the password follows
 * the first ':' in it. Returns false if there is no password. */
static bool find_password(const char *url, size_t *off, size_t *len)
{
    const char *rest = strstr(url, "://"), *at, *colon;

    if (rest == NULL)
        return false;
    rest += 3;
    at = strrchr(rest, '@');
    if (at == NULL)
        return false;
    colon = memchr(rest, ':', (size_t)(at - rest));
    if (colon == NULL || colon + 1 == at)
        return false;
    *off = (size_t)(colon + 1 - url);
    *len = (size_t)(at - colon - 1);
    return true;
}

static bool is_tcp_scheme(const char *url)
{
    return strncasecmp(url, "redis://", 8) == 0 || strncasecmp(url, "rediss://", 9) == 0 ||
           strncasecmp(url, "redis-sentinel://", 17) == 0;
}

/* Replace each password byte by one of the same class for pct_decode: '%'
 * stays, '0' stays (so %00 stays %00), other hex digits become '1', any
 * other byte becomes 'z'. Parsing then takes the same path. */
static void canary(char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '%' || c == '0')
            continue;
        if ((c >= '1' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
            p[i] = '1';
        else
            p[i] = 'z';
    }
}

static void check_line(const char *what, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);

    if (n == cap)
        FAIL("%s is not NUL-terminated", what);
    if (n == 0)
        FAIL("%s is empty", what);
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r')
            FAIL("%s is more than one line: %s", what, s);
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *u = p;

    for (size_t i = 0; i < n; i++)
        if (u[i])
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rr_endpoint ep, ep2;
    char err[RR_ERRLEN], err2[RR_ERRLEN];
    char *url, *copy;
    size_t off = 0, len = 0;
    bool has_pw;
    int r, r2;

    if (size > 4096)
        return 0;
    url = malloc(size + 1);
    copy = malloc(size + 1);
    if (!url || !copy)
        abort();
    memcpy(url, data, size);
    url[size] = '\0';
    size = strlen(url);
    has_pw = find_password(url, &off, &len);

    memset(err, 0x55, sizeof err);
    r = rr_url_parse(url, &ep, err, sizeof err);
    if (r != 0 && r != -1)
        FAIL("rr_url_parse returned %d", r);
    if (r < 0) {
        check_line("err", err, sizeof err);
        if (!all_zero(&ep, sizeof ep))
            FAIL("a failed parse left data in the endpoint");
    } else {
        if (ep.transport == RR_TRANSPORT_TCP) {
            if (ep.port < 1 || ep.port > 65535)
                FAIL("port %d out of range", ep.port);
            if (ep.host[0] == '\0')
                FAIL("empty host");
        } else if (ep.transport == RR_TRANSPORT_UNIX) {
            if (ep.path[0] != '/')
                FAIL("socket path '%s' is not absolute", ep.path);
            /* Credentials come before the path (unix://u:pw@/path): never in it. */
            if (strchr(ep.path, '@') || strchr(ep.display, '@'))
                FAIL("unix endpoint with an '@' in its path '%s'", ep.path);
        } else {
            FAIL("bad transport %d", (int)ep.transport);
        }
        if (ep.db < 0 || ep.db > 10000)
            FAIL("db %d out of range", ep.db);
        /* A socket path may hold any byte but NUL ("%0a" included), so
         * only a TCP display must be one line. */
        if (ep.transport == RR_TRANSPORT_TCP)
            check_line("display", ep.display, sizeof ep.display);
        else if (ep.display[0] == '\0' || strnlen(ep.display, sizeof ep.display) == sizeof ep.display)
            FAIL("display is empty or not NUL-terminated");
        if (is_tcp_scheme(url) && ep.has_password != has_pw)
            FAIL("parse (has_password=%d) and scrub (password=%d) disagree on '%s'",
                 ep.has_password, has_pw, url);
        if (ep.has_password && strnlen(ep.password, sizeof ep.password) == sizeof ep.password)
            FAIL("password not NUL-terminated");
    }

    /* rr_url_scrub stars exactly the password bytes. */
    memcpy(copy, url, size + 1);
    if (rr_url_scrub(copy) != has_pw)
        FAIL("rr_url_scrub return value disagrees with the password found");
    for (size_t i = 0; i <= size; i++) {
        bool in_pw = has_pw && i >= off && i < off + len;
        if (in_pw ? copy[i] != '*' : copy[i] != url[i])
            FAIL("rr_url_scrub changed byte %zu wrongly", i);
    }

    /* The outcome must not depend on the password's bytes. */
    if (has_pw) {
        memcpy(copy, url, size + 1);
        canary(copy + off, len);
        if (strcmp(copy, url) != 0) {
            r2 = rr_url_parse(copy, &ep2, err2, sizeof err2);
            if (r2 != r)
                FAIL("the password's bytes changed the outcome (%d vs %d)", r, r2);
            if (r < 0 && strcmp(err, err2) != 0)
                FAIL("the password's bytes reached the error message: '%s' vs '%s'", err, err2);
            if (r == 0 && strcmp(ep.display, ep2.display) != 0)
                FAIL("the password's bytes reached display: '%s' vs '%s'", ep.display, ep2.display);
        }
    }
    free(url);
    free(copy);
    return 0;
}
