/* slot.c — hash slots and redirections (slot.h). */
#include <stdlib.h>
#include <string.h>

#include "slot.h"

uint16_t rr_crc16(const char *buf, size_t len)
{
    uint16_t crc = 0;

    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint16_t)(unsigned char)buf[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

int rr_key_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);

    if (open) {
        size_t from = (size_t)(open - key) + 1;
        const char *close = memchr(key + from, '}', len - from);
        if (close && close > key + from)
            return rr_crc16(key + from, (size_t)(close - (key + from))) & (RR_CLUSTER_SLOTS - 1);
    }
    return rr_crc16(key, len) & (RR_CLUSTER_SLOTS - 1);
}

/* A decimal number in [lo, hi] spanning exactly s[0..n-1]. */
static int number(const char *s, size_t n, long lo, long hi, long *out)
{
    long v = 0;

    if (n == 0 || n > 6)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int rr_parse_redirect(const char *err, size_t len, struct rr_redirect *out)
{
    const char *p, *end = err + len, *sp, *colon;
    long slot, port;
    size_t hl;

    memset(out, 0, sizeof *out);
    if (len > 6 && memcmp(err, "MOVED ", 6) == 0) {
        p = err + 6;
    } else if (len > 4 && memcmp(err, "ASK ", 4) == 0) {
        out->ask = true;
        p = err + 4;
    } else {
        return -1;
    }
    if (!(sp = memchr(p, ' ', (size_t)(end - p))) ||
        number(p, (size_t)(sp - p), 0, RR_CLUSTER_SLOTS - 1, &slot) != 0)
        return -1;
    p = sp + 1;
    /* The port is after the last ':' (an IPv6 address has more of them). */
    for (colon = NULL, sp = p; sp < end; sp++)
        if (*sp == ':')
            colon = sp;
    if (!colon || number(colon + 1, (size_t)(end - colon - 1), 1, 65535, &port) != 0)
        return -1;
    hl = (size_t)(colon - p);
    if (hl >= 2 && p[0] == '[' && p[hl - 1] == ']') {
        p++;
        hl -= 2;
    }
    if (hl >= sizeof out->host || memchr(p, ' ', hl))
        return -1;
    memcpy(out->host, p, hl);
    out->host[hl] = '\0';
    out->slot = (int)slot;
    out->port = (int)port;
    return 0;
}
