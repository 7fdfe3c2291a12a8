/* util.c — small shared helpers (rr.h). */
#include <limits.h>
#include <string.h>
#include <uv.h>

#include "rr.h"

int64_t rr_now_ms(void)
{
    return (int64_t)(uv_hrtime() / 1000000u);
}

const char *rr_quote(const char *s, size_t n, size_t max, char *out, size_t outlen)
{
    size_t i, o = 0;

    for (i = 0; i < n && s[i] && o + 4 < outlen && i < max; i++)
        out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (i < n && s[i] && o + 4 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

int rr_parse_decimal(const char *s, size_t n, long lo, long hi, long *out)
{
    long v = 0;
    size_t i;

    if (n == 0)
        return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        /* Past hi the value only matters as "too large": stop growing it,
         * so no number of digits can overflow. */
        if (v > hi)
            continue;
        v = v > (LONG_MAX - (s[i] - '0')) / 10 ? LONG_MAX : v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
