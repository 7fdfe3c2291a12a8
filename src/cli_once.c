/* cli_once.c — a --once pattern expanded into an ID (cli.h): strftime's
 * conversions checked, the result checked as an ID. The command line
 * expands it on the local clock to check it early; a run expands it again
 * on the lock service's (run.c, once_clock.c). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "rr.h"

static const char *quote(const char *s, char *out, size_t outlen)
{
    return rr_quote(s, SIZE_MAX, RR_QUOTE_MAX, out, outlen);
}

static bool printable_token(const char *s)
{
    for (; *s; s++)
        if (*s <= 0x20 || *s >= 0x7f)
            return false;
    return true;
}

/* The first % conversion of pattern that strftime does not know (glibc's
 * flags _-0^#, a width, E or O, then one of its letters), or NULL. strftime
 * would copy it as it is, so that a typo made one ID for ever. */
static const char *bad_conversion(const char *pattern, size_t *len)
{
    static const char letters[] = "aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZ%";

    for (const char *p = pattern; (p = strchr(p, '%')) != NULL;) {
        const char *c = p + 1;
        while (*c && strchr("_-0^#", *c))
            c++;
        while (*c >= '0' && *c <= '9')
            c++;
        if (*c == 'E' || *c == 'O')
            c++;
        if (!*c || !strchr(letters, *c)) {
            *len = (size_t)(c - p) + (*c ? 1 : 0);
            return p;
        }
        p = c + 1;
    }
    return NULL;
}

int rr_cli_expand_once(const char *pattern, long long t, char *out, size_t outlen,
                       char *err, size_t errlen)
{
    char buf[1024];
    char q[72];
    time_t tt = (time_t)t;
    struct tm tm;
    size_t n;

    if (outlen > 0)
        out[0] = '\0';
    if (pattern == NULL || *pattern == '\0') {
        snprintf(err, errlen, "the ID must not be empty, e.g. --once 'daily-%%F'");
        return -1;
    }
    const char *bad;
    size_t blen = 0;
    if ((bad = bad_conversion(pattern, &blen)) != NULL) {
        char b[72];
        snprintf(err, errlen, "'%s': '%s' is not a strftime conversion; use one such as %%F, "
                 "%%Y, %%m, %%d, %%H, or write %%%% for a literal %%", quote(pattern, q, sizeof q),
                 rr_quote(bad, blen, RR_QUOTE_MAX, b, sizeof b));
        return -1;
    }
    if (localtime_r(&tt, &tm) == NULL) {
        snprintf(err, errlen, "cannot convert the current time to local time");
        return -1;
    }
    /* strftime returns 0 both for "too long" and for an empty result. */
    n = strftime(buf, sizeof buf, pattern, &tm);
    if (n == 0) {
        snprintf(err, errlen, "'%s' expands to nothing or to more than %d bytes", quote(pattern, q, sizeof q), RR_ONCE_MAX);
        return -1;
    }
    if (n > RR_ONCE_MAX || n >= outlen) {
        snprintf(err, errlen, "'%s' expands to %zu bytes; the ID may have at most %d",
                 quote(pattern, q, sizeof q), n, RR_ONCE_MAX);
        return -1;
    }
    if (!printable_token(buf)) {
        snprintf(err, errlen, "'%s' expands to '%s', which has a space or a non-printable byte; IDs are printable ASCII without spaces",
                 quote(pattern, q, sizeof q), quote(buf, buf, sizeof buf));
        return -1;
    }
    /* Braces would put the ID's key in another hash tag, another job's
     * (`x}:state`); the key separator ':' stays allowed (%H:%M): the ID
     * ends its key, so it cannot make another key's name. */
    if (strpbrk(buf, "{}")) {
        snprintf(err, errlen, "'%s' expands to '%s', which has '{' or '}'; IDs may not (they "
                 "would name another job's keys)", quote(pattern, q, sizeof q),
                 quote(buf, buf, sizeof buf));
        return -1;
    }
    memcpy(out, buf, n + 1);
    return 0;
}
