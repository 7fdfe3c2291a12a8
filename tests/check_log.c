/* check_log.c — text and JSON lines, levels, escaping, redaction, caps. */
#include <check.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape.h"
#include "log.h"
#include "unit.h"

#define LINE_CAP 4096

/* ---- capturing stderr ---- */

static int saved_stderr = -1;
static FILE *capture_file;

static void start_capture(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    saved_stderr = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_eq(dup2(fileno(capture_file), STDERR_FILENO), STDERR_FILENO);
}

/* Stop capturing; returns everything written meanwhile (caller frees). */
static char *stop_capture(void)
{
    ck_assert_int_eq(dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
    close(saved_stderr);
    ck_assert_int_eq(fseek(capture_file, 0, SEEK_END), 0);
    long n = ftell(capture_file);
    ck_assert_int_ge(n, 0);
    rewind(capture_file);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, capture_file), (size_t)n);
    buf[n] = '\0';
    fclose(capture_file);
    return buf;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- a strict little JSON reader, enough to prove lines parse ---- */

#define MAX_KEYS 64

struct jobj {
    int n;
    char key[MAX_KEYS][64];
    char val[MAX_KEYS][LINE_CAP + 1];   /* decoded string, or number text */
    bool is_str[MAX_KEYS];
};

struct jp {
    const unsigned char *s;
    size_t i, n;
};

static void skip_ws(struct jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
                           p->s[p->i] == '\r' || p->s[p->i] == '\n'))
        p->i++;
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t need = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (!need || s[0] > 0xF4 || n < need)
        return 0;
    unsigned cp = s[0] & (0x7F >> need);
    for (size_t k = 1; k < need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static bool read_hex4(struct jp *p, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++, p->i++) {
        if (p->i >= p->n)
            return false;
        unsigned char c = p->s[p->i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99;
        if (d > 15)
            return false;
        *v = *v * 16 + d;
    }
    return true;
}

/* Parse a string; decode into out (cap bytes) when out is not NULL. */
static bool parse_string(struct jp *p, char *out, size_t cap)
{
    size_t o = 0;
    char tmp[8];
    if (p->i >= p->n || p->s[p->i] != '"')
        return false;
    p->i++;
    while (p->i < p->n) {
        unsigned char c = p->s[p->i];
        size_t tl = 0;
        if (c == '"') {
            p->i++;
            if (out)
                out[o < cap ? o : cap - 1] = '\0';
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (++p->i >= p->n)
                return false;
            c = p->s[p->i++];
            switch (c) {
            case '"': case '\\': case '/': tmp[0] = (char)c; tl = 1; break;
            case 'b': tmp[0] = '\b'; tl = 1; break;
            case 'f': tmp[0] = '\f'; tl = 1; break;
            case 'n': tmp[0] = '\n'; tl = 1; break;
            case 'r': tmp[0] = '\r'; tl = 1; break;
            case 't': tmp[0] = '\t'; tl = 1; break;
            case 'u': {
                unsigned cp;
                if (!read_hex4(p, &cp))
                    return false;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (p->i + 2 > p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                        return false;
                    p->i += 2;
                    if (!read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return false;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return false;
                }
                tl = put_utf8(tmp, cp);
                break;
            }
            default:
                return false;
            }
        } else {
            tl = utf8_seq(p->s + p->i, p->n - p->i);
            if (!tl)
                return false;
            memcpy(tmp, p->s + p->i, tl);
            p->i += tl;
        }
        if (out && o + tl < cap) {
            memcpy(out + o, tmp, tl);
            o += tl;
        }
    }
    return false;
}

static bool parse_number(struct jp *p, char *out, size_t cap)
{
    size_t start = p->i;
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i >= p->n)
        return false;
    if (p->s[p->i] == '0') {
        p->i++;
    } else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
        while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
            p->i++;
    } else {
        return false;
    }
    /* Our lines only carry integers: a fraction or exponent is a bug. */
    size_t len = p->i - start;
    if (out) {
        if (len >= cap)
            return false;
        memcpy(out, p->s + start, len);
        out[len] = '\0';
    }
    return true;
}

static bool parse_value(struct jp *p, int depth);

static bool parse_members(struct jp *p, int depth, struct jobj *top)
{
    if (depth > 16 || p->i >= p->n || p->s[p->i] != '{')
        return false;
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        return true;
    }
    for (;;) {
        char key[64];
        skip_ws(p);
        if (!parse_string(p, key, sizeof key))
            return false;
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i++] != ':')
            return false;
        skip_ws(p);
        if (top) {
            if (top->n >= MAX_KEYS)
                return false;
            for (int k = 0; k < top->n; k++)
                if (strcmp(top->key[k], key) == 0)
                    return false;   /* duplicate keys are ambiguous */
            int k = top->n++;
            snprintf(top->key[k], sizeof top->key[k], "%s", key);
            top->is_str[k] = p->i < p->n && p->s[p->i] == '"';
            if (top->is_str[k] ? !parse_string(p, top->val[k], sizeof top->val[k])
                               : !parse_number(p, top->val[k], sizeof top->val[k]))
                return false;
        } else if (!parse_value(p, depth + 1)) {
            return false;
        }
        skip_ws(p);
        if (p->i >= p->n)
            return false;
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == '}') {
            p->i++;
            return true;
        }
        return false;
    }
}

static bool parse_value(struct jp *p, int depth)
{
    skip_ws(p);
    if (p->i >= p->n)
        return false;
    unsigned char c = p->s[p->i];
    if (c == '"')
        return parse_string(p, NULL, 0);
    if (c == '{')
        return parse_members(p, depth, NULL);
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p, NULL, 0);
    return false;
}

/* Parse one line (without its newline) as a flat JSON object. */
static bool parse_line(const char *line, size_t len, struct jobj *obj)
{
    struct jp p = { (const unsigned char *)line, 0, len };
    memset(obj, 0, sizeof *obj);
    if (!parse_members(&p, 0, obj))
        return false;
    skip_ws(&p);
    return p.i == p.n;
}

static const char *jget(const struct jobj *obj, const char *key)
{
    for (int k = 0; k < obj->n; k++)
        if (strcmp(obj->key[k], key) == 0)
            return obj->val[k];
    return NULL;
}

static struct jobj parsed;

/* The captured output must be exactly one JSON line; parse it into parsed. */
static void expect_one_json_line(const char *out)
{
    size_t len = strlen(out);
    ck_assert_uint_ge(len, 2);
    ck_assert_uint_le(len, LINE_CAP);
    ck_assert_int_eq(out[len - 1], '\n');
    ck_assert_uint_eq(count_lines(out), 1);
    ck_assert_msg(parse_line(out, len - 1, &parsed), "not valid JSON: %.300s", out);
}

START_TEST(test_json_reader_rejects_bad_input)
{
    /* The checks below lean on this reader: prove it can say no. */
    struct jobj *o = &parsed;
    ck_assert(parse_line("{\"a\":\"b\",\"n\":-12}", 17, o));
    ck_assert_str_eq(jget(o, "a"), "b");
    ck_assert_str_eq(jget(o, "n"), "-12");
    const char *bad[] = {
        "{\"a\":\"b\"", "{\"a\":\"b\",}", "{\"a\":\"x\ny\"}", "{\"a\":\"\\x41\"}",
        "{\"a\":\"\xff\"}", "{\"a\":\"\\ud800\"}", "{\"a\":01}", "{\"a\":1,\"a\":2}",
        "{\"a\":\"b\"}x", "{a:1}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_msg(!parse_line(bad[k], strlen(bad[k]), o), "accepted %s", bad[k]);
}
END_TEST

/* ---- text ---- */

START_TEST(test_text_format)
{
    rr_log_init("settle", 0, false, false);
    start_capture();
    rr_log(RR_LOG_NOTICE, "busy", NULL, "lock busy, held by %s for %d ms", "web-2", 1500);
    rr_log(RR_LOG_ERROR, NULL, NULL, "cannot connect to %s: connection refused", "10.0.0.5:6379");
    char *out = stop_capture();
    ck_assert_str_eq(out,
        "redlock-run: settle: lock busy, held by web-2 for 1500 ms\n"
        "redlock-run: settle: cannot connect to 10.0.0.5:6379: connection refused\n");
    free(out);

    rr_log_init(NULL, 0, false, false);
    start_capture();
    rr_log(RR_LOG_WARN, "x", NULL, "no job here");
    out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: no job here\n");
    free(out);
}
END_TEST

START_TEST(test_default_before_init)
{
    start_capture();
    rr_log(RR_LOG_NOTICE, NULL, NULL, "shown");
    rr_log(RR_LOG_INFO, NULL, NULL, "hidden");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: shown\n");
    free(out);
}
END_TEST

START_TEST(test_text_escapes_controls)
{
    rr_log_init("j", 0, false, false);
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "ERR bad\nINJECTED line\r\x1b[31m\ttab\xff ok \xc3\xa9");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: j: ERR bad\\nINJECTED line\\r\\x1b[31m\\ttab\\xff ok \xc3\xa9\n");
    free(out);
}
END_TEST

START_TEST(test_levels_by_verbosity)
{
    static const char *const expect[4] = {
        "E\n",                  /* -q */
        "E\nW\nN\n",            /* default */
        "E\nW\nN\nI\n",         /* -v */
        "E\nW\nN\nI\nD\n",      /* -vv */
    };
    for (int v = -1; v <= 2; v++) {
        rr_log_init(NULL, v, false, false);
        start_capture();
        rr_log(RR_LOG_ERROR, NULL, NULL, "E");
        rr_log(RR_LOG_WARN, NULL, NULL, "W");
        rr_log(RR_LOG_NOTICE, NULL, NULL, "N");
        rr_log(RR_LOG_INFO, NULL, NULL, "I");
        rr_log(RR_LOG_DEBUG, NULL, NULL, "D");
        char *out = stop_capture();
        /* Strip the prefix to compare just the letters. */
        char letters[64] = "";
        for (char *p = out; (p = strstr(p, "redlock-run: ")) != NULL; p += 13) {
            size_t l = strlen(letters);
            letters[l] = p[13];
            letters[l + 1] = '\n';
            letters[l + 2] = '\0';
        }
        ck_assert_msg(strcmp(letters, expect[v + 1]) == 0, "verbosity %d showed %s", v, letters);
        ck_assert_uint_eq(count_lines(out), strlen(expect[v + 1]) / 2);
        free(out);

        ck_assert(rr_log_enabled(RR_LOG_ERROR));
        ck_assert(rr_log_enabled(RR_LOG_WARN) == (v >= 0));
        ck_assert(rr_log_enabled(RR_LOG_NOTICE) == (v >= 0));
        ck_assert(rr_log_enabled(RR_LOG_INFO) == (v >= 1));
        ck_assert(rr_log_enabled(RR_LOG_DEBUG) == (v >= 2));
    }
}
END_TEST

/* Under -q an outcome that is a failure (WARN or worse) still shows, one
 * line; a progress line is left to the outcome; without -q both show. */
START_TEST(test_quiet_outcomes)
{
    rr_log_init("job", -1, false, false);
    start_capture();
    rr_log_audit(RR_LOG_INFO, "released", NULL, "succeeded");
    rr_log_audit(RR_LOG_NOTICE, "busy", NULL, "busy");
    rr_log(RR_LOG_WARN, "renew_failed", NULL, "a warning");
    rr_log_progress(RR_LOG_ERROR, "timeout", NULL, "stopping it");
    rr_log_audit(RR_LOG_WARN, "released", NULL, "run failed");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: job: run failed\n");
    free(out);

    rr_log_init("job", 0, false, false);
    start_capture();
    rr_log_progress(RR_LOG_ERROR, "timeout", NULL, "stopping it");
    rr_log_audit(RR_LOG_ERROR, "released", NULL, "run timeout");
    rr_log_audit(RR_LOG_INFO, "released", NULL, "succeeded");
    out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: job: stopping it\nredlock-run: job: run timeout\n");
    free(out);
}
END_TEST

START_TEST(test_errno_preserved)
{
    rr_log_init(NULL, 0, false, false);
    start_capture();
    errno = ENOENT;
    rr_log(RR_LOG_ERROR, NULL, NULL, "x");
    ck_assert_int_eq(errno, ENOENT);
    free(stop_capture());
}
END_TEST

/* ---- JSON ---- */

static bool is_iso_time(const char *t)
{
    /* 2026-11-30T02:00:00.123Z */
    const char *pat = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (strlen(t) != strlen(pat))
        return false;
    for (size_t k = 0; pat[k]; k++) {
        if (pat[k] == 'd' ? (t[k] < '0' || t[k] > '9') : t[k] != pat[k])
            return false;
    }
    return true;
}

START_TEST(test_json_fields)
{
    rr_log_init("settle", 1, true, false);
    struct rr_field f[] = {
        RR_FN("fence", 42), RR_FN("ms", -7), RR_FS("host", "web-\"2\""),
        RR_FN("big", 9007199254740993LL), RR_FIELD_END,
    };
    start_capture();
    rr_log(RR_LOG_INFO, "acquired", f, "acquired in %d ms", 3);
    char *out = stop_capture();
    expect_one_json_line(out);
    ck_assert(is_iso_time(jget(&parsed, "time")));
    ck_assert_str_eq(jget(&parsed, "level"), "info");
    ck_assert_str_eq(jget(&parsed, "job"), "settle");
    ck_assert_str_eq(jget(&parsed, "event"), "acquired");
    ck_assert_str_eq(jget(&parsed, "msg"), "acquired in 3 ms");
    ck_assert_str_eq(jget(&parsed, "fence"), "42");
    ck_assert_str_eq(jget(&parsed, "ms"), "-7");
    ck_assert_str_eq(jget(&parsed, "host"), "web-\"2\"");
    ck_assert_str_eq(jget(&parsed, "big"), "9007199254740993");
    ck_assert_int_eq(parsed.n, 9);
    /* Numbers unquoted, and the documented key order. */
    ck_assert_ptr_nonnull(strstr(out, "\"fence\":42,"));
    ck_assert_ptr_nonnull(strstr(out, "{\"time\":\""));
    ck_assert_ptr_nonnull(strstr(out, "\",\"level\":\"info\",\"job\":\"settle\",\"event\":\"acquired\",\"msg\":\"acquired in 3 ms\",\"fence\":42"));
    free(out);
}
END_TEST

START_TEST(test_json_levels_and_optional_keys)
{
    static const char *const names[] = { "error", "warn", "notice", "info", "debug" };
    rr_log_init(NULL, 2, true, false);
    for (int l = RR_LOG_ERROR; l <= RR_LOG_DEBUG; l++) {
        start_capture();
        rr_log((enum rr_log_level)l, NULL, NULL, "m");
        char *out = stop_capture();
        expect_one_json_line(out);
        ck_assert_str_eq(jget(&parsed, "level"), names[l]);
        ck_assert_ptr_null(jget(&parsed, "job"));
        ck_assert_ptr_null(jget(&parsed, "event"));
        ck_assert_int_eq(parsed.n, 3);
        free(out);
    }
}
END_TEST

START_TEST(test_json_escaping)
{
    rr_log_init("j\"b", 0, true, false);
    struct rr_field f[] = { RR_FS("reply", "ERR \x01\n\xfe"), RR_FS("k\"ey", "v"), RR_FIELD_END };
    start_capture();
    rr_log(RR_LOG_ERROR, "ev\n", f, "q\" b\\ n\n t\t c\x01\x1f d\x7f bad\xff\xc3 ok\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92");
    char *out = stop_capture();
    expect_one_json_line(out);
    ck_assert_str_eq(jget(&parsed, "msg"),
                     "q\" b\\ n\n t\t c\x01\x1f d\x7f bad\xef\xbf\xbd\xef\xbf\xbd ok\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92");
    ck_assert_ptr_nonnull(strstr(out, "\"msg\":\"q\\\" b\\\\ n\\n t\\t c\\u0001\\u001f d\\u007f bad\\ufffd\\ufffd ok"));
    ck_assert_str_eq(jget(&parsed, "reply"), "ERR \x01\n\xef\xbf\xbd");
    ck_assert_str_eq(jget(&parsed, "k\"ey"), "v");
    ck_assert_str_eq(jget(&parsed, "job"), "j\"b");
    ck_assert_str_eq(jget(&parsed, "event"), "ev\n");
    free(out);
}
END_TEST

/* ---- redaction ---- */

START_TEST(test_redaction_text)
{
    rr_log_init("settle", 0, false, false);
    rr_log_secret("hunter2");
    rr_log_secret("");       /* ignored: would otherwise match everywhere */
    rr_log_secret(NULL);
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "AUTH %s failed; again hunter2hunter2!", "hunter2");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: settle: AUTH *** failed; again ******!\n");
    free(out);
}
END_TEST

START_TEST(test_redaction_json_fields)
{
    rr_log_init("settle", 0, true, false);
    rr_log_secret("s3cr\"t");   /* redacted before escaping */
    rr_log_secret("pw");        /* short: only as a whole token */
    struct rr_field f[] = {
        RR_FS("url", "redis://:s3cr\"t@host:6379"), RR_FS("user", "pwd-user"),
        RR_FS("pass", "pw"), RR_FN("n", 5), RR_FIELD_END,
    };
    start_capture();
    rr_log(RR_LOG_ERROR, "auth", f, "password s3cr\"t refused");
    char *out = stop_capture();
    expect_one_json_line(out);
    ck_assert_str_eq(jget(&parsed, "msg"), "password *** refused");
    ck_assert_str_eq(jget(&parsed, "url"), "redis://:***@host:6379");
    ck_assert_str_eq(jget(&parsed, "user"), "pwd-user");
    ck_assert_str_eq(jget(&parsed, "pass"), "***");
    ck_assert_str_eq(jget(&parsed, "n"), "5");
    ck_assert_ptr_null(strstr(out, "s3cr"));
    free(out);
}
END_TEST

START_TEST(test_redaction_longest_match)
{
    rr_log_init(NULL, 0, false, false);
    rr_log_secret("abcd");
    rr_log_secret("abcdefgh");
    rr_log_secret("x");   /* shorter than "***": the text grows */
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "abcdefghi abcdx xxxx x:x");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: ***i ***x xxxx ***:***\n");
    free(out);
}
END_TEST

/* Issue 30: with the password "e", every message read "acquir***d ...
 * f***nc***". A secret shorter than RR_LOG_SECRET_SUBSTR bytes is
 * redacted only as a whole token; from that length on, everywhere. */
START_TEST(test_redaction_short_secret)
{
    static const struct { const char *secret, *in, *out; } t[] = {
        { "e", "acquired in 3ms, fence 12", "acquired in 3ms, fence 12" },
        { "e", "cannot connect to redis://:e@10.0.0.5:6379", "cannot connect to redis://:***@10.0.0.5:6379" },
        { "e", "AUTH e refused", "AUTH *** refused" },
        { "e", "e", "***" },
        { "e", "e_x xe e9 \xc3\xa9" "e", "e_x xe e9 \xc3\xa9" "e" },
        { "e", "(e)", "(***)" },
        { "ab", "tab ab abab ab.", "tab *** abab ***." },
        { "abc", "abc/abcd", "***/abcd" },
        /* from RR_LOG_SECRET_SUBSTR bytes on: inside words too */
        { "abcd", "xabcdx abcd", "x***x ***" },
        { "p4ss", "redis://:p4ss@h user=p4ssp4ss", "redis://:***@h user=******" },
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        pid_t pid = fork();   /* the secrets list only grows: one a process */
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            rr_log_init(NULL, 0, false, false);
            rr_log_secret(t[k].secret);
            start_capture();
            rr_log(RR_LOG_ERROR, NULL, NULL, "%s", t[k].in);
            char *out = stop_capture();
            char want[256];
            snprintf(want, sizeof want, "redlock-run: %s\n", t[k].out);
            if (strcmp(out, want) != 0) {
                fprintf(stderr, "case %zu: got '%s', want '%s'\n", k, out, want);
                _exit(1);
            }
            _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "case %zu (secret '%s')", k,
                      t[k].secret);
    }
}
END_TEST

START_TEST(test_redaction_long_message)
{
    /* Past the cap and past any fixed formatting buffer: no part of the
     * secret may survive at a cut. */
    static char big[20000];
    const char *secret = "SECRETVALUE0123456789";
    rr_log_init(NULL, 0, false, false);
    rr_log_secret(secret);
    size_t o = 0;
    while (o + strlen(secret) + 1 < sizeof big) {
        memcpy(big + o, secret, strlen(secret));
        o += strlen(secret);
        big[o++] = ' ';
    }
    big[o] = '\0';
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "%s", big);
    char *out = stop_capture();
    ck_assert_ptr_null(strstr(out, "SEC"));
    ck_assert_uint_le(strlen(out), LINE_CAP);
    free(out);

    /* A secret straddling the 4 KiB cut. */
    memset(big, 'a', 4080);
    strcpy(big + 4080, secret);
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "%s", big);
    out = stop_capture();
    ck_assert_ptr_null(strstr(out, "SE"));
    free(out);
}
END_TEST

/* ---- the 4 KiB cap ---- */

START_TEST(test_truncation_text)
{
    static char big[10000];
    memset(big, 'x', sizeof big - 1);
    rr_log_init("settle", 0, false, false);
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "%s", big);
    rr_log(RR_LOG_ERROR, NULL, NULL, "next");
    char *out = stop_capture();
    char *nl = strchr(out, '\n');
    ck_assert_ptr_nonnull(nl);
    ck_assert_uint_eq((size_t)(nl - out) + 1, LINE_CAP);
    ck_assert(memcmp(nl - 4, "x...", 4) == 0);
    ck_assert_str_eq(nl + 1, "redlock-run: settle: next\n");
    free(out);

    /* Exactly at the cap: no ellipsis. */
    size_t fit = LINE_CAP - 1 - strlen("redlock-run: settle: ");
    big[fit] = '\0';
    start_capture();
    rr_log(RR_LOG_ERROR, NULL, NULL, "%s", big);
    out = stop_capture();
    ck_assert_uint_eq(strlen(out), LINE_CAP);
    ck_assert(memcmp(out + LINE_CAP - 4, "xxx\n", 4) == 0);
    free(out);
}
END_TEST

START_TEST(test_truncation_json_message)
{
    static char big[10000];
    rr_log_init("settle", 0, true, false);
    struct rr_field f[] = { RR_FN("fence", 7), RR_FIELD_END };
    /* Plain, escape-heavy and multi-byte messages: each must stay valid. */
    const char *units[] = { "x", "\"", "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xff" };
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t ul = strlen(units[u]), o = 0;
        while (o + ul < sizeof big) {
            memcpy(big + o, units[u], ul);
            o += ul;
        }
        big[o] = '\0';
        start_capture();
        rr_log(RR_LOG_ERROR, "e", f, "%s", big);
        char *out = stop_capture();
        expect_one_json_line(out);
        ck_assert_uint_gt(strlen(out), LINE_CAP - 8);
        const char *msg = jget(&parsed, "msg");
        ck_assert_str_eq(msg + strlen(msg) - 3, "...");
        ck_assert_str_eq(jget(&parsed, "fence"), "7");
        free(out);
    }
}
END_TEST

START_TEST(test_truncation_json_fields)
{
    static char big[10000];
    memset(big, 'v', sizeof big - 1);
    rr_log_init("settle", 0, true, false);
    struct rr_field f[] = {
        RR_FN("fence", 7), RR_FS("huge", big), RR_FS("after", "dropped"), RR_FIELD_END,
    };
    start_capture();
    rr_log(RR_LOG_ERROR, "e", f, "the message survives");
    char *out = stop_capture();
    expect_one_json_line(out);
    ck_assert_str_eq(jget(&parsed, "msg"), "the message survives");
    ck_assert_str_eq(jget(&parsed, "fence"), "7");
    const char *huge = jget(&parsed, "huge");
    ck_assert_ptr_nonnull(huge);
    ck_assert_str_eq(huge + strlen(huge) - 3, "...");
    ck_assert_ptr_null(jget(&parsed, "after"));
    free(out);

    /* Both long: still one valid line under the cap. */
    start_capture();
    rr_log(RR_LOG_ERROR, "e", f, "%s", big);
    out = stop_capture();
    expect_one_json_line(out);
    ck_assert_uint_ge(strlen(jget(&parsed, "msg")), 200);
    free(out);
}
END_TEST

START_TEST(test_truncation_json_every_size)
{
    /* Sweep a field's size across the whole budget: whatever the sizes,
     * the line stays valid, under the cap, and the message whole. */
    static char a[LINE_CAP + 200], b[120], m[1000];
    memset(b, 'b', sizeof b - 1);
    memset(m, 'm', sizeof m - 1);
    rr_log_init(NULL, 0, true, false);
    for (size_t alen = 3500; alen < sizeof a; alen++) {
        memset(a, 'a', alen);
        a[alen] = '\0';
        struct rr_field f[] = {
            RR_FN("fence", 7), RR_FS("a", a), RR_FS("b", b), RR_FN("n", 1), RR_FIELD_END,
        };
        start_capture();
        rr_log(RR_LOG_ERROR, NULL, f, "keep me");
        char *out = stop_capture();
        expect_one_json_line(out);
        ck_assert_str_eq(jget(&parsed, "msg"), "keep me");
        ck_assert_str_eq(jget(&parsed, "fence"), "7");
        const char *av = jget(&parsed, "a");
        ck_assert_ptr_nonnull(av);
        ck_assert(strlen(av) == alen || strcmp(av + strlen(av) - 3, "...") == 0);
        free(out);

        /* A long message is never crowded out by the fields. */
        start_capture();
        rr_log(RR_LOG_ERROR, NULL, f, "%s", m);
        out = stop_capture();
        expect_one_json_line(out);
        const char *msg = jget(&parsed, "msg");
        ck_assert_uint_ge(strlen(msg), 200);
        ck_assert_str_eq(msg + strlen(msg) - 3, "...");
        free(out);
    }
}
END_TEST

START_TEST(test_syslog_also_stderr)
{
    /* A socket of our own stands in for /dev/log. */
    char dir[] = "/tmp/check_log.XXXXXX", path[64];
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/log", dir);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    setenv("REDLOCK_SYSLOG_SOCKET", path, 1);

    rr_log_init("settle", 0, false, true);
    start_capture();
    rr_log(RR_LOG_DEBUG, NULL, NULL, "not shown anywhere");
    rr_log(RR_LOG_NOTICE, "test", NULL, "redlock-run unit test: syslog path");
    char *out = stop_capture();
    ck_assert_str_eq(out, "redlock-run: settle: redlock-run unit test: syslog path\n");
    free(out);
    char dgram[512];
    ssize_t n = recv(fd, dgram, sizeof dgram - 1, MSG_DONTWAIT);
    ck_assert_int_gt(n, 0);
    dgram[n] = '\0';
    ck_assert_ptr_nonnull(strstr(dgram, "redlock-run unit test: syslog path"));

    /* Under -q, syslog still gets the progress line stderr leaves out. */
    rr_log_init("settle", -1, false, true);
    start_capture();
    rr_log_progress(RR_LOG_ERROR, "timeout", NULL, "redlock-run unit test: stopping it");
    out = stop_capture();
    ck_assert_str_eq(out, "");
    free(out);
    n = recv(fd, dgram, sizeof dgram - 1, MSG_DONTWAIT);
    ck_assert_int_gt(n, 0);
    dgram[n] = '\0';
    ck_assert_ptr_nonnull(strstr(dgram, "<11>"));
    ck_assert_ptr_nonnull(strstr(dgram, "settle: redlock-run unit test: stopping it"));
    rr_log_init("settle", 0, false, false);   /* closes the log again */

    /* No syslog daemon: said once, on stderr, whatever the level. */
    close(fd);
    unlink(path);
    rr_log_init("settle", -1, false, true);
    start_capture();
    rr_log_audit(RR_LOG_INFO, "released", NULL, "run succeeded");
    rr_log_audit(RR_LOG_INFO, "released", NULL, "run succeeded");
    out = stop_capture();
    ck_assert_ptr_nonnull(strstr(out, "--syslog: cannot reach"));
    ck_assert_ptr_null(strstr(strstr(out, "--syslog: cannot reach") + 1, "--syslog: cannot reach"));
    free(out);
    rr_log_init("settle", 0, false, false);
    unsetenv("REDLOCK_SYSLOG_SOCKET");
    rmdir(dir);
}
END_TEST

/* ---- rr_json_escape ---- */

START_TEST(test_json_escape_table)
{
    static const struct { const char *in, *out; } t[] = {
        { "", "" },
        { "plain text/slash", "plain text/slash" },
        { "a\"b", "a\\\"b" },
        { "back\\slash", "back\\\\slash" },
        { "\n\r\t\b\f", "\\n\\r\\t\\b\\f" },
        { "\x01\x1f\x7f", "\\u0001\\u001f\\u007f" },
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92" },
        { "\xff", "\\ufffd" },
        { "a\xc3", "a\\ufffd" },                          /* cut sequence */
        { "\xc3(", "\\ufffd(" },                          /* bad continuation */
        { "\xc0\xaf", "\\ufffd\\ufffd" },                 /* overlong '/' */
        { "\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd" },      /* overlong, 3 bytes */
        { "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd" },      /* surrogate */
        { "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },   /* > U+10FFFF */
        { "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },       /* U+10FFFF itself */
        { "\x80", "\\ufffd" },
    };
    char out[256];
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        size_t n = rr_json_escape(t[k].in, out, sizeof out);
        ck_assert_msg(strcmp(out, t[k].out) == 0, "case %zu: got %s", k, out);
        ck_assert_uint_eq(n, strlen(t[k].out));
    }
}
END_TEST

START_TEST(test_json_escape_small_buffer)
{
    char out[8];
    memset(out, '#', sizeof out);
    ck_assert_uint_eq(rr_json_escape("abc", out, 0), 0);
    ck_assert_int_eq(out[0], '#');                      /* nothing written */
    ck_assert_uint_eq(rr_json_escape("abc", out, 1), 0);
    ck_assert_str_eq(out, "");
    ck_assert_uint_eq(rr_json_escape("abc", out, 3), 2);
    ck_assert_str_eq(out, "ab");
    /* Never half an escape or half a character. */
    ck_assert_uint_eq(rr_json_escape("a\"b", out, 3), 1);
    ck_assert_str_eq(out, "a");
    ck_assert_uint_eq(rr_json_escape("a\x01", out, 7), 1);
    ck_assert_str_eq(out, "a");
    ck_assert_uint_eq(rr_json_escape("a\x01", out, 8), 7);
    ck_assert_str_eq(out, "a\\u0001");
    ck_assert_uint_eq(rr_json_escape("a\xe2\x82\xac", out, 4), 1);
    ck_assert_str_eq(out, "a");
    ck_assert_uint_eq(rr_json_escape(NULL, out, sizeof out), 0);
    ck_assert_str_eq(out, "");
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, test_text_format);
    tcase_add_test(tc, test_default_before_init);
    tcase_add_test(tc, test_text_escapes_controls);
    tcase_add_test(tc, test_levels_by_verbosity);
    tcase_add_test(tc, test_errno_preserved);
    tcase_add_test(tc, test_syslog_also_stderr);
    tcase_add_test(tc, test_quiet_outcomes);
    suite_add_tcase(s, tc);

    tc = tcase_create("json");
    tcase_add_test(tc, test_json_reader_rejects_bad_input);
    tcase_add_test(tc, test_json_fields);
    tcase_add_test(tc, test_json_levels_and_optional_keys);
    tcase_add_test(tc, test_json_escaping);
    tcase_add_test(tc, test_json_escape_table);
    tcase_add_test(tc, test_json_escape_small_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("redaction");
    tcase_add_test(tc, test_redaction_text);
    tcase_add_test(tc, test_redaction_json_fields);
    tcase_add_test(tc, test_redaction_longest_match);
    tcase_add_test(tc, test_redaction_short_secret);
    tcase_add_test(tc, test_redaction_long_message);
    suite_add_tcase(s, tc);

    tc = tcase_create("cap");
    tcase_set_timeout(tc, 120);   /* the size sweep, under valgrind */
    tcase_add_test(tc, test_truncation_text);
    tcase_add_test(tc, test_truncation_json_message);
    tcase_add_test(tc, test_truncation_json_fields);
    tcase_add_test(tc, test_truncation_json_every_size);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "log", log_suite, NULL, NULL };
