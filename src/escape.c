/* escape.c — one escaping function per output kind (see escape.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static const char hex[] = "0123456789abcdef";

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the byte at s
 * does not start one: overlong forms, surrogates and code points above
 * U+10FFFF count as invalid, as in RFC 3629. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n < need)
        return 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return need;
}

/* The code point of a valid sequence of len bytes. */
static uint32_t utf8_cp(const unsigned char *s, size_t len)
{
    uint32_t cp = len == 2 ? s[0] & 0x1F : len == 3 ? s[0] & 0x0F : s[0] & 0x07;
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    return cp;
}

/* A code point that a terminal acts on or that reorders or breaks the
 * line around it: C1 controls (0x9b is CSI on some terminals), the
 * Unicode line and paragraph separators, bidirectional marks, embeddings,
 * overrides and isolates ("Trojan Source"). */
static bool hides_text(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* "\xHH" */
static size_t put_x(char *tmp, unsigned char c)
{
    tmp[0] = '\\';
    tmp[1] = 'x';
    tmp[2] = hex[c >> 4];
    tmp[3] = hex[c & 15];
    return 4;
}

/* "\uHHHH" */
static size_t put_u(char *tmp, uint32_t cp)
{
    tmp[0] = '\\';
    tmp[1] = 'u';
    for (int k = 0; k < 4; k++)
        tmp[2 + k] = hex[(cp >> (12 - 4 * k)) & 15];
    return 6;
}

/* One ASCII byte c escaped for kind into tmp (at most 6 bytes). */
static size_t ascii(enum rr_esc_kind kind, unsigned char c, char *tmp)
{
    bool json = kind == RR_ESC_JSON, label = kind == RR_ESC_LABEL;
    const char *shortcut = c == '\n' ? "n" : c == '\r' ? "r" : c == '\t' ? "t"
                         : c == '\b' ? "b" : c == '\f' ? "f" : NULL;

    if (label) {
        if (c == '\\' || c == '"' || c == '\n') {
            tmp[0] = '\\';
            tmp[1] = c == '\n' ? 'n' : (char)c;
            return 2;
        }
    } else if (json && (c == '"' || c == '\\')) {
        tmp[0] = '\\';
        tmp[1] = (char)c;
        return 2;
    } else if (shortcut && (json || c == '\n' || c == '\r' || c == '\t')) {
        tmp[0] = '\\';
        tmp[1] = shortcut[0];
        return 2;
    } else if (c < 0x20 || c == 0x7F) {
        return json ? put_u(tmp, c) : put_x(tmp, c);
    } else if (c == '|' && kind == RR_ESC_NAGIOS) {
        return put_x(tmp, c);
    }
    tmp[0] = (char)c;
    return 1;
}

size_t rr_escape_n(enum rr_esc_kind kind, const char *s, size_t len, char *out, size_t outlen,
                   size_t *consumed)
{
    const unsigned char *u = (const unsigned char *)s;
    /* JSON too: it is read on terminals (an operator's --status --json),
     * and \uHHHH keeps it the same string for a parser. */
    bool terminal = kind != RR_ESC_LABEL;
    size_t i = 0, o = 0;

    while (i < len) {
        char tmp[8];
        size_t tlen, used = 1;
        size_t ulen = utf8_len(u + i, len - i);

        if (ulen == 1) {
            tlen = ascii(kind, u[i], tmp);
        } else if (ulen > 1) {
            used = ulen;
            uint32_t cp = utf8_cp(u + i, ulen);
            if (terminal && hides_text(cp)) {
                tlen = put_u(tmp, cp);
            } else {
                memcpy(tmp, u + i, ulen);
                tlen = ulen;
            }
        } else if (kind == RR_ESC_JSON) {
            tlen = put_u(tmp, 0xFFFD);
        } else if (kind == RR_ESC_LABEL) {
            memcpy(tmp, "\xef\xbf\xbd", 3);
            tlen = 3;
        } else {
            tlen = put_x(tmp, u[i]);
        }

        if (outlen == 0 || o + tlen > outlen - 1)
            break;
        memcpy(out + o, tmp, tlen);
        o += tlen;
        i += used;
    }
    if (outlen > 0)
        out[o] = '\0';
    if (consumed)
        *consumed = i;
    return o;
}

static size_t escape(enum rr_esc_kind kind, const char *s, char *out, size_t outlen)
{
    if (!s)
        s = "";
    return rr_escape_n(kind, s, strlen(s), out, outlen, NULL);
}

size_t rr_text_escape(const char *s, char *out, size_t outlen)
{
    return escape(RR_ESC_TEXT, s, out, outlen);
}

size_t rr_json_escape(const char *s, char *out, size_t outlen)
{
    return escape(RR_ESC_JSON, s, out, outlen);
}

size_t rr_nagios_escape(const char *s, char *out, size_t outlen)
{
    return escape(RR_ESC_NAGIOS, s, out, outlen);
}

size_t rr_label_escape(const char *s, char *out, size_t outlen)
{
    return escape(RR_ESC_LABEL, s, out, outlen);
}

bool rr_json_int(const char *s, long long *out)
{
    const char *d = s && *s == '-' ? s + 1 : s;
    char *end;

    if (!d || *d < '0' || *d > '9' || (d[0] == '0' && d[1] != '\0'))
        return false;
    for (const char *p = d; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return false;
    if (out)
        *out = v;
    return true;
}

const char *rr_shell_word(const char *s, char *out, size_t outlen)
{
    size_t need = 0, n = 0;
    /* zsh expands a word that starts with '=' (=cmd is cmd's path). */
    bool plain = *s != '\0' && *s != '=';

    for (const char *p = s; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || strchr("._-:/@%+=,", *p);
        plain = plain && ok;
        need += *p == '\'' ? 4 : 1;
    }
    need += plain ? 1 : 3;   /* the NUL; or two quotes and the NUL */
    if (outlen == 0)
        return out;
    if (need > outlen) {
        out[0] = '\0';
        return out;
    }
    if (!plain)
        out[n++] = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'' && !plain) {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *p;
        }
    }
    if (!plain)
        out[n++] = '\'';
    out[n] = '\0';
    return out;
}
