/* fuzz_duration.c — libFuzzer target for rr_duration_parse and
 * rr_duration_format.
 *
 * The input is one duration string (cut at its first NUL byte).
 * Invariants:
 *   - on failure err is one non-empty line;
 *   - on success the value is >= 0, and a finite value formatted and parsed
 *     again gives the same value (format is exact: it never rounds);
 *   - formatting into a short buffer gives a NUL-terminated prefix of the
 *     full text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "rr.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_duration: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

static void check_line(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);

    if (n == cap)
        FAIL("err is not NUL-terminated");
    if (n == 0)
        FAIL("err is empty");
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r')
            FAIL("err is more than one line: %s", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[RR_ERRLEN], buf[64], small[64];
    char *s;
    int64_t ms = -12345, again = -12345;

    if (size > 1024)
        return 0;
    s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';

    memset(err, 0x55, sizeof err);
    if (rr_duration_parse(s, &ms, err, sizeof err) < 0) {
        check_line(err, sizeof err);
        free(s);
        return 0;
    }
    if (ms < 0)
        FAIL("'%s' parsed to a negative value %lld", s, (long long)ms);

    memset(buf, 0x55, sizeof buf);
    rr_duration_format(ms, buf, sizeof buf);
    if (strnlen(buf, sizeof buf) == sizeof buf)
        FAIL("format of %lld is not NUL-terminated", (long long)ms);
    if (rr_duration_parse(buf, &again, err, sizeof err) < 0)
        FAIL("'%s' -> %lld -> '%s' does not parse: %s", s, (long long)ms, buf, err);
    if (again != ms)
        FAIL("'%s' -> %lld -> '%s' -> %lld", s, (long long)ms, buf, (long long)again);

    for (size_t len = 0; len <= strlen(buf) + 1; len++) {
        memset(small, 0x55, sizeof small);
        rr_duration_format(ms, small, len);
        if (len == 0) {
            if ((unsigned char)small[0] != 0x55)
                FAIL("format wrote into a zero-length buffer");
            continue;
        }
        if (strnlen(small, len) == len)
            FAIL("format into %zu bytes is not NUL-terminated", len);
        if (strncmp(small, buf, len - 1) != 0 || strlen(small) != (len - 1 < strlen(buf) ? len - 1 : strlen(buf)))
            FAIL("format into %zu bytes is not a prefix of '%s': '%s'", len, buf, small);
        if (len < sizeof small && (unsigned char)small[len] != 0x55)
            FAIL("format wrote past %zu bytes", len);
    }
    free(s);
    return 0;
}
