/* fuzz_render.c — libFuzzer target: a record another tenant wrote into
 * Redis, through the outputs that show it: the --list table and its JSON
 * (list_view.c, record.c), the --status --max-age line (verdict.c), and
 * each escaping function of escape.c.
 *
 * The input is up to 11 fields separated by NUL bytes: the holder's host,
 * pid and fence (as qstatus.lua returns them), then the state record's
 * status, host, pid, fence, once, last_success_host, masters_failed and
 * exit_code. Invariants:
 *   - the table is a header and one line: no byte below 0x20 but the two
 *     newlines, no DEL, no C1 control, line separator or bidi control;
 *   - the JSON is one line that parses (RFC 8259), with no raw control
 *     byte either;
 *   - the plugin line is one line without control bytes, with one '|',
 *     followed by the perfdata we computed;
 *   - rr_text_escape and rr_nagios_escape never write those bytes (nor
 *     nagios a '|'); rr_label_escape leaves no raw newline or unescaped
 *     '"'. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "list.h"
#include "verdict.h"
#include "../replies.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_render: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define NFIELDS 11

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A byte or sequence at s that a terminal acts on, or that breaks or
 * reorders the line: its length, else 0. Newlines are the caller's. */
static size_t terminal_hazard(const unsigned char *s)
{
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    if (s[0] == 0xC2 && s[1] >= 0x80 && s[1] < 0xA0)
        return 2;
    if (s[0] == 0xD8 && s[1] == 0x9C)
        return 2;
    if (s[0] == 0xE2 && s[1] == 0x80 && s[2] &&
        ((s[2] >= 0xA8 && s[2] <= 0xAE) || s[2] == 0x8E || s[2] == 0x8F))
        return 3;
    if (s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9)
        return 3;
    return 0;
}

/* Check s for hazards, newlines allowed; returns how many newlines. */
static int clean_lines(const char *what, const char *s)
{
    int lines = 0;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n') {
            lines++;
            continue;
        }
        if (terminal_hazard(p))
            FAIL("%s: byte 0x%02x raw at %zu: %s", what, *p, (size_t)(p - (const unsigned char *)s), s);
    }
    return lines;
}

/* ---- a small RFC 8259 validator: each returns past the value, or NULL ---- */

static const char *json_value(const char *p, int depth);

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *json_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!strchr("0123456789abcdefABCDEF", p[k]) || !p[k])
                        return NULL;
                p += 5;
                continue;
            }
            if (!*p || !strchr("\"\\/bfnrt", *p))
                return NULL;
        }
        p++;
    }
    return p + 1;
}

static const char *json_number(const char *p)
{
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

static const char *json_list(const char *p, char close, bool keys, int depth)
{
    p = ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (keys) {
            if (!(p = json_string(p)))
                return NULL;
            p = ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if (!(p = json_value(p, depth + 1)))
            return NULL;
        p = ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
        p = ws(p);
    }
}

static const char *json_value(const char *p, int depth)
{
    p = ws(p);
    if (depth > 32)
        return NULL;
    switch (*p) {
    case '{': return json_list(p, '}', true, depth);
    case '[': return json_list(p, ']', false, depth);
    case '"': return json_string(p);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return json_number(p);
    }
}

/* ---- building the replies ---- */

static void bulk(FILE *f, const char *s)
{
    fprintf(f, "$%zu\r\n%s\r\n", strlen(s), s);
}

static redisReply *reply_of(char *text, size_t len)
{
    redisReply *r = resp_n(text, len);
    free(text);
    if (!r)
        FAIL("the harness built a reply hiredis did not read");
    return r;
}

static redisReply *holders_reply(const char *const *fv)
{
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);

    fputs("*3\r\n*1\r\n*5\r\n:1\r\n:9000\r\n", f);
    for (int i = 0; i < 3; i++)
        bulk(f, fv[i]);
    fputs("*0\r\n:2592000000\r\n", f);
    fclose(f);
    return reply_of(text, len);
}

static redisReply *state_reply(const char *const *fv)
{
    static const char *const names[] = { "status", "host", "pid", "fence", "once",
                                         "last_success_host", "masters_failed", "exit_code" };
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);

    fprintf(f, "*%d\r\n", 2 * 8 + 4);
    for (int i = 0; i < 8; i++) {
        bulk(f, names[i]);
        bulk(f, fv[3 + i]);
    }
    bulk(f, "started_ms");
    bulk(f, "1700000000000");
    bulk(f, "last_success_ms");
    bulk(f, "1700000000000");
    fclose(f);
    return reply_of(text, len);
}

/* ---- the outputs ---- */

static char *capture(void (*fn)(FILE *, const struct rr_list_row *, size_t),
                     const struct rr_list_row *row)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);

    fn(f, row, 1);
    fclose(f);
    return buf;
}

static void check_list(const char *const *fv)
{
    struct rr_list_row row;
    redisReply *h = holders_reply(fv), *st = state_reply(fv);

    memset(&row, 0, sizeof row);
    snprintf(row.name, sizeof row.name, "job");
    if (rr_list_row_holders(&row, h) != 0 || rr_list_row_state(&row, st) != 0)
        FAIL("a reply of the right shape was refused: %s", row.err);
    char *t = capture(rr_list_print_text, &row);
    if (clean_lines("table", t) != 2 || t[strlen(t) - 1] != '\n')
        FAIL("the table is not a header and one line: %s", t);
    free(t);
    char *j = capture(rr_list_print_json, &row);
    if (clean_lines("json", j) != 1 || j[strlen(j) - 1] != '\n')
        FAIL("the JSON is not one line: %s", j);
    const char *end = json_value(j, 0);
    if (!end || *ws(end) != '\0')
        FAIL("the JSON does not parse: %s", j);
    free(j);
    free(row.last_json);
    freeReplyObject(h);
    freeReplyObject(st);
}

static void check_verdict(const char *host)
{
    const long long hour = 3600000LL, now = 100 * hour;
    struct rr_verdict_in in = {
        .name = "job", .key = "redlock:{job}:state", .last = RR_JOB_SUCCEEDED,
        .now_ms = now, .max_age_ms = 25 * hour, .success_ms = now - hour,
        .success_fence = 7, .success_host = host,
    };
    char line[2048], want[64];

    rr_verdict(&in, line, sizeof line);
    if (clean_lines("verdict", line) != 0)
        FAIL("the plugin line is not one line: %s", line);
    const char *bar = strchr(line, '|');
    if (!bar || strchr(bar + 1, '|'))
        FAIL("not exactly one '|': %s", line);
    snprintf(want, sizeof want, "| age=%llds;;%llds", hour / 1000, 25 * hour / 1000);
    if (strcmp(bar, want) != 0)
        FAIL("perfdata not ours: %s", line);
}

static void check_escapes(const char *s)
{
    char out[4096];

    rr_text_escape(s, out, sizeof out);
    if (clean_lines("text", out) != 0)
        FAIL("rr_text_escape let a newline through: %s", out);
    rr_nagios_escape(s, out, sizeof out);
    if (clean_lines("nagios", out) != 0 || strchr(out, '|'))
        FAIL("rr_nagios_escape let a newline or '|' through: %s", out);
    rr_label_escape(s, out, sizeof out);
    for (const char *p = out; *p; p++) {
        if (*p == '\n' || *p == '"')
            FAIL("rr_label_escape left a raw newline or quote: %s", out);
        if (*p == '\\' && !*++p)
            FAIL("rr_label_escape ended on a lone backslash: %s", out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *fv[NFIELDS];
    char *buf;
    size_t at = 0;

    if (size > 8192)
        return 0;
    buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    for (int i = 0; i < NFIELDS; i++) {
        fv[i] = at <= size ? buf + at : "";
        at += strlen(fv[i]) + 1;
    }
    check_list(fv);
    check_verdict(fv[8]);
    for (int i = 0; i < NFIELDS; i++)
        check_escapes(fv[i]);
    free(buf);
    return 0;
}
