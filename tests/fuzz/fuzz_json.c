/* fuzz_json.c — libFuzzer target for rr_json_escape.
 *
 * The first input byte picks the output buffer size (0..255); the rest is
 * the string (cut at its first NUL byte). Invariants:
 *   - nothing is written at or past outlen; with outlen > 0 the output is
 *     NUL-terminated and the return value is its length;
 *   - the output is a valid JSON string body: no raw control byte, no raw
 *     DEL, no unescaped '"', every '\' starts a complete escape, and the
 *     rest is valid UTF-8 without the code points a terminal acts on (C1
 *     controls, line separators, bidi controls: escaped as \uXXXX);
 *   - a short buffer gives a prefix of the full output that never cuts an
 *     escape or a UTF-8 sequence;
 *   - the full output decodes back to the input when the input is valid
 *     UTF-8 (and to the input with each invalid byte replaced by U+FFFD
 *     otherwise). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "log.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_json: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define GUARD 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Length of a valid UTF-8 sequence at s (RFC 3629), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    uint32_t cp;
    size_t need;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0) {
        need = 2;
        cp = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        need = 3;
        cp = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        need = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((need == 2 && cp < 0x80) || (need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

/* The code points escape.c writes as \uXXXX rather than raw: a terminal
 * acts on them (C1 controls) or they reorder or break the line. */
static bool hides_text(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* cp (below 0x10000) as UTF-8 into d; returns its length. */
static size_t put_utf8(char *d, uint32_t cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | cp >> 6);
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    d[0] = (char)(0xE0 | cp >> 12);
    d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

/* Check that out (n bytes) is a JSON string body and decode it into dec
 * (as UTF-8; \uXXXX only below 0x80, for U+FFFD, or for a code point
 * hides_text names, which never appears raw). Returns the decoded length. */
static size_t check_body(const char *out, size_t n, char *dec)
{
    const unsigned char *u = (const unsigned char *)out;
    size_t i = 0, o = 0;

    while (i < n) {
        if (u[i] < 0x20 || u[i] == 0x7f)
            FAIL("raw control byte 0x%02x at %zu", u[i], i);
        if (u[i] == '"')
            FAIL("unescaped quote at %zu", i);
        if (u[i] == '\\') {
            if (i + 1 >= n)
                FAIL("a lone backslash ends the output");
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            char c = out[i + 1];
            const char *simple = strchr(from, c);
            if (c && simple) {
                dec[o++] = to[simple - from];
                i += 2;
                continue;
            }
            if (c != 'u' || i + 6 > n)
                FAIL("incomplete or unknown escape at %zu", i);
            int v = 0;
            for (int k = 2; k < 6; k++) {
                int h = hexv(out[i + k]);
                if (h < 0)
                    FAIL("bad \\u escape at %zu", i);
                v = v * 16 + h;
            }
            if (v == 0xFFFD || (v < 0x80 && v > 0) || hides_text((uint32_t)v)) {
                o += put_utf8(dec + o, (uint32_t)v);
            } else {
                FAIL("unexpected \\u%04x at %zu", v, i);
            }
            i += 6;
            continue;
        }
        size_t l = utf8_seq(u + i, n - i);
        if (l == 0)
            FAIL("invalid UTF-8 at %zu", i);
        if (l == 2 && u[i] == 0xC2 && u[i + 1] < 0xA0)
            FAIL("raw C1 control at %zu", i);
        if (l == 3 && ((u[i] == 0xE2 && u[i + 1] == 0x80 && u[i + 2] >= 0xA8 && u[i + 2] <= 0xAE) ||
                       (u[i] == 0xE2 && u[i + 1] == 0x81 && u[i + 2] >= 0xA6 && u[i + 2] <= 0xA9) ||
                       (u[i] == 0xE2 && u[i + 1] == 0x80 && (u[i + 2] == 0x8E || u[i + 2] == 0x8F))))
            FAIL("raw line separator or bidirectional control at %zu", i);
        if (l == 2 && u[i] == 0xD8 && u[i + 1] == 0x9C)
            FAIL("raw U+061C at %zu", i);
        memcpy(dec + o, out + i, l);
        o += l;
        i += l;
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s, *full, *small, *dec, *want;
    size_t outlen, slen, fulllen, n, wlen = 0;
    bool valid = true;

    if (size < 1 || size > 4096)
        return 0;
    outlen = data[0];
    s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    slen = strlen(s);

    /* The full output: at most 6 bytes an input byte. */
    full = malloc(6 * slen + 1);
    fulllen = rr_json_escape(s, full, 6 * slen + 1);
    if (fulllen != strlen(full))
        FAIL("returned %zu for a %zu-byte output", fulllen, strlen(full));
    dec = malloc(3 * slen + 1);
    n = check_body(full, fulllen, dec);

    /* The input as the decoded output should be: invalid bytes as U+FFFD. */
    want = malloc(3 * slen + 1);
    for (size_t i = 0; i < slen;) {
        size_t l = utf8_seq((const unsigned char *)s + i, slen - i);
        if (l == 0) {
            memcpy(want + wlen, "\xEF\xBF\xBD", 3);
            wlen += 3;
            i++;
            valid = false;
        } else {
            memcpy(want + wlen, s + i, l);
            wlen += l;
            i += l;
        }
    }
    if (n != wlen || memcmp(dec, want, n) != 0)
        FAIL("the output does not decode to the input (valid UTF-8: %d)", valid);
    if (valid && (n != slen || memcmp(dec, s, slen) != 0))
        FAIL("valid UTF-8 did not round-trip");

    /* A short buffer: bounded, terminated, a prefix on an escape boundary. */
    small = malloc(outlen + GUARD);
    memset(small, 0x55, outlen + GUARD);
    size_t got = rr_json_escape(s, small, outlen);
    for (size_t i = outlen; i < outlen + GUARD; i++)
        if ((unsigned char)small[i] != 0x55)
            FAIL("wrote byte %zu of a %zu-byte buffer", i, outlen);
    if (outlen == 0) {
        if (got != 0)
            FAIL("returned %zu for a zero-length buffer", got);
    } else {
        if (strnlen(small, outlen) == outlen)
            FAIL("not NUL-terminated in %zu bytes", outlen);
        if (got != strlen(small) || got > fulllen || memcmp(small, full, got) != 0)
            FAIL("a %zu-byte buffer did not get a prefix of the full output", outlen);
        check_body(small, got, dec);
        /* Greedy: it stops only when the next piece does not fit. */
        if (got < fulllen && got + 6 < outlen - 1)
            FAIL("stopped at %zu with room for %zu more", got, outlen - 1 - got);
    }
    free(s);
    free(full);
    free(small);
    free(dec);
    free(want);
    return 0;
}
