/* duration.c — human durations ("500ms", "1h30m", "1.5s", "inf") to
 * milliseconds and back. Pure functions, no allocation. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "rr.h"

#define HINT "expected a number with a unit, such as 500ms, 30s, 5m, 1h30m or inf"

/* Fractional digits beyond this many cannot change a whole millisecond count
 * by more than the truncation we already accept, and keeping the fraction
 * below 10^9 lets fraction * unit stay far inside int64_t. */
#define FRAC_DIGITS 9
#define FRAC_SCALE 1000000000LL

struct unit {
    const char *name;
    int64_t ms;
};

/* Longest names first, so "ms" is never read as "m" followed by junk. */
static const struct unit units[] = {
    { "ms", 1 },
    { "s", 1000 },
    { "m", 60 * 1000 },
    { "h", 60 * 60 * 1000 },
    { "d", 24 * 60 * 60 * 1000 },
};
#define N_UNITS (sizeof units / sizeof units[0])

/* At most this many bytes of the input in a message: shorter than
 * elsewhere, as the message also prints the hint. */
#define QUOTE_MAX 40

static int fail(const char *s, char *err, size_t errlen, const char *why)
{
    char q[48];

    rr_quote(s, SIZE_MAX, QUOTE_MAX, q, sizeof q);
    snprintf(err, errlen, "invalid duration '%s': %s", q, why);
    return -1;
}

int rr_duration_parse(const char *s, int64_t *ms, char *err, size_t errlen)
{
    const char *p = s;
    int64_t total = 0;
    bool seen[N_UNITS] = { false };
    bool components = false;
    char why[96];

    if (s == NULL)
        s = p = "";
    if (strcmp(s, "inf") == 0 || strcmp(s, "infinity") == 0) {
        *ms = RR_INF;
        return 0;
    }
    if (*p == '-')
        return fail(s, err, errlen, "must not be negative");
    if (*p == '\0')
        return fail(s, err, errlen, HINT);

    while (*p) {
        int64_t whole = 0, frac = 0, scale = FRAC_SCALE, part;
        bool digits = false;
        size_t u;

        for (; *p >= '0' && *p <= '9'; p++) {
            digits = true;
            if (whole > (INT64_MAX - (*p - '0')) / 10)
                goto too_large;
            whole = whole * 10 + (*p - '0');
        }
        if (*p == '.') {
            for (p++; *p >= '0' && *p <= '9'; p++) {
                digits = true;
                if (scale > 1) {
                    scale /= 10;
                    frac += (*p - '0') * scale;
                }
            }
        }
        if (!digits)
            return fail(s, err, errlen, HINT);

        if (*p == '\0') {
            /* A bare number is seconds (as in timeout(1)), but only on its
             * own: in "1h30" the missing unit is more likely a typo. */
            if (components)
                return fail(s, err, errlen, "the last number has no unit; add ms, s, m, h or d");
            u = 1;
        } else {
            for (u = 0; u < N_UNITS; u++) {
                size_t n = strlen(units[u].name);
                if (strncmp(p, units[u].name, n) == 0 &&
                    !(p[n] >= 'a' && p[n] <= 'z')) {
                    p += n;
                    break;
                }
            }
            if (u == N_UNITS)
                return fail(s, err, errlen, "unknown unit; use ms, s, m, h or d, such as 500ms, 30s, 5m, 1h30m or inf");
            if (seen[u]) {
                snprintf(why, sizeof why, "the unit '%s' is given twice", units[u].name);
                return fail(s, err, errlen, why);
            }
        }
        seen[u] = true;
        components = true;

        if (whole > INT64_MAX / units[u].ms)
            goto too_large;
        part = whole * units[u].ms;
        /* The whole part may sit just below INT64_MAX ("9223372036854775.999s"),
         * so adding the fraction needs its own check. */
        if (frac * units[u].ms / FRAC_SCALE > INT64_MAX - part)
            goto too_large;
        part += frac * units[u].ms / FRAC_SCALE;
        if (part > INT64_MAX - 1 - total)
            goto too_large;
        total += part;
    }
    *ms = total;
    return 0;

too_large:
    /* INT64_MAX itself is RR_INF, so the largest finite value is one less. */
    return fail(s, err, errlen, "too large; use inf for no limit");
}

char *rr_duration_format(int64_t ms, char *buf, size_t len)
{
    /* Built in a scratch buffer that always fits, then copied, so the
     * truncation rule for small buffers lives in one place. */
    char tmp[64];
    int off = 0;
    int64_t d, h, m, s, rest;
    int digits;

    if (len == 0)
        return buf;
    if (ms == RR_INF) {
        snprintf(buf, len, "inf");
        return buf;
    }
    if (ms == 0) {
        snprintf(buf, len, "0s");
        return buf;
    }
    if (ms < 1000) {
        /* Negative values are not durations, but print them plainly rather
         * than pretend. */
        snprintf(buf, len, "%lldms", (long long)ms);
        return buf;
    }

    d = ms / 86400000;
    h = ms / 3600000 % 24;
    m = ms / 60000 % 60;
    s = ms / 1000 % 60;
    rest = ms % 1000;

    if (d)
        off += snprintf(tmp + off, sizeof tmp - (size_t)off, "%lldd", (long long)d);
    if (h)
        off += snprintf(tmp + off, sizeof tmp - (size_t)off, "%lldh", (long long)h);
    if (m)
        off += snprintf(tmp + off, sizeof tmp - (size_t)off, "%lldm", (long long)m);
    if (rest) {
        /* "1.5s", "1.25s", "1.005s": as many decimals as needed, no more. */
        digits = 3;
        while (rest % 10 == 0) {
            rest /= 10;
            digits--;
        }
        snprintf(tmp + off, sizeof tmp - (size_t)off, "%lld.%0*llds",
                 (long long)s, digits, (long long)rest);
    } else if (s) {
        snprintf(tmp + off, sizeof tmp - (size_t)off, "%llds", (long long)s);
    }
    snprintf(buf, len, "%s", tmp);
    return buf;
}
