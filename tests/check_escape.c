/* check_escape.c — one escaping function per output kind (escape.h): what
 * a hostile record read from Redis becomes on a terminal, in a Nagios
 * line, in a metrics label; which numbers JSON may show as numbers.
 * rr_json_escape's own table is in check_log.c (log.c was its first user). */
#include <check.h>
#include <string.h>

#include "escape.h"
#include "unit.h"

struct pair {
    const char *in, *out;
};

static void table(size_t (*fn)(const char *, char *, size_t), const struct pair *t, size_t n)
{
    char out[512];

    for (size_t k = 0; k < n; k++) {
        size_t len = fn(t[k].in, out, sizeof out);
        ck_assert_msg(strcmp(out, t[k].out) == 0, "case %zu: got '%s', want '%s'", k, out,
                      t[k].out);
        ck_assert_uint_eq(len, strlen(t[k].out));
    }
}

/* No byte below 0x20 (newline included) and no DEL reaches the output. */
static void no_controls(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        ck_assert_msg(*p >= 0x20 && *p != 0x7f, "control byte 0x%02x in '%s'", *p, s);
}

/* The records of issue 30: a terminal title, a clear screen, an OSC 52
 * clipboard write, hidden lines. */
static const char *const hostile[] = {
    "web-1\x1b]0;T\x07\x1b[2J",
    "h\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "a\nREDLOCK OK - fake | age=1s;;1s",
    ") | age=1s;;\nREDLOCK OK - forged",
    "csi\xc2\x9b" "31m",                  /* C1 CSI, valid UTF-8 */
    "bidi\xe2\x80\xae" "txt.exe",         /* U+202E RIGHT-TO-LEFT OVERRIDE */
    "ls\xe2\x80\xa8" "next",              /* U+2028 LINE SEPARATOR */
    "tab\there\rcr\x7f" "del\x01\x1f",
    "bad\xff\xc3",
};

START_TEST(test_text_table)
{
    static const struct pair t[] = {
        { "", "" },
        { NULL, "" },
        { "web-1.example", "web-1.example" },
        { "back\\slash \"q\" |pipe|", "back\\slash \"q\" |pipe|" },
        { "a\nb\rc\td", "a\\nb\\rc\\td" },
        { "\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m" },
        { "\x1b]0;T\x07", "\\x1b]0;T\\x07" },
        { "\x01\x08\x0c\x1f\x7f", "\\x01\\x08\\x0c\\x1f\\x7f" },
        { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x92" },
        { "\xc2\x9b" "31m", "\\u009b31m" },
        { "\xc2\x85", "\\u0085" },
        { "\xc2\xa0nbsp", "\xc2\xa0nbsp" },       /* U+00A0 is printable */
        { "\xe2\x80\xae" "evil", "\\u202eevil" },
        { "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069" },
        { "\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029" },
        { "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c" },
        { "\xff", "\\xff" },
        { "a\xc3", "a\\xc3" },
        { "\xc0\xaf", "\\xc0\\xaf" },
    };
    table(rr_text_escape, t, sizeof t / sizeof t[0]);
}
END_TEST

START_TEST(test_text_hostile_records)
{
    char out[512];

    for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
        rr_text_escape(hostile[k], out, sizeof out);
        no_controls(out);
        ck_assert_ptr_null(strstr(out, "\xc2\x9b"));
        ck_assert_ptr_null(strstr(out, "\xe2\x80\xae"));
        ck_assert_ptr_null(strstr(out, "\xe2\x80\xa8"));
    }
}
END_TEST

/* rr_json_escape's table is in check_log.c; here what it shares with the
 * terminal's. */
START_TEST(test_json_terminal_code_points)
{
    static const struct pair t[] = {
        { "csi\xc2\x9b" "31m", "csi\\u009b31m" },
        { "\xe2\x80\xae" "evil\xe2\x80\xa8", "\\u202eevil\\u2028" },
        { "caf\xc3\xa9\xc2\xa0", "caf\xc3\xa9\xc2\xa0" },
    };
    table(rr_json_escape, t, sizeof t / sizeof t[0]);
}
END_TEST

START_TEST(test_nagios_table)
{
    static const struct pair t[] = {
        { "", "" },
        { NULL, "" },
        { "web-2", "web-2" },
        { "a|b", "a\\x7cb" },
        { ") | age=1s;;\nREDLOCK OK - x", ") \\x7c age=1s;;\\nREDLOCK OK - x" },
        { "\x1b[2J\r", "\\x1b[2J\\r" },
        { "\xe2\x80\xa8", "\\u2028" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },
    };
    table(rr_nagios_escape, t, sizeof t / sizeof t[0]);
}
END_TEST

START_TEST(test_nagios_hostile_records)
{
    char out[512];

    for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
        rr_nagios_escape(hostile[k], out, sizeof out);
        no_controls(out);
        ck_assert_ptr_null(strchr(out, '|'));
    }
}
END_TEST

START_TEST(test_label_table)
{
    static const struct pair t[] = {
        { "", "" },
        { "settle", "settle" },
        { "a\"b\\c\nd", "a\\\"b\\\\c\\nd" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },
        { "bad\xff", "bad\xef\xbf\xbd" },
        { "x|y{z}", "x|y{z}" },
    };
    table(rr_label_escape, t, sizeof t / sizeof t[0]);
}
END_TEST

/* Every kind: never half an escape, never past outlen, always a NUL. */
START_TEST(test_small_buffers)
{
    size_t (*const fns[])(const char *, char *, size_t) = {
        rr_text_escape, rr_json_escape, rr_nagios_escape, rr_label_escape,
    };
    static const char *const in = "a\x1b|\"\xe2\x82\xac\xc2\x9b\xff\n";
    char full[128], out[64];

    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        size_t n = fns[f](in, full, sizeof full);
        for (size_t len = 1; len <= n + 1; len++) {
            memset(out, '#', sizeof out);
            size_t got = fns[f](in, out, len);
            ck_assert_uint_lt(got, len);
            ck_assert_int_eq(out[got], '\0');
            ck_assert_int_eq(out[len], '#');
            /* What was written is a prefix of the whole escape that ends
             * where one of its pieces ends. */
            ck_assert_int_eq(memcmp(out, full, got), 0);
        }
        memset(out, '#', sizeof out);
        ck_assert_uint_eq(fns[f](in, out, 0), 0);
        ck_assert_int_eq(out[0], '#');
    }
    /* Cut at a piece's end: "a\x1b" never as "a\x1". */
    ck_assert_uint_eq(rr_text_escape("a\x1b", out, 5), 1);
    ck_assert_str_eq(out, "a");
    ck_assert_uint_eq(rr_nagios_escape("a|", out, 5), 1);
    ck_assert_uint_eq(rr_label_escape("a\"", out, 3), 1);
}
END_TEST

START_TEST(test_escape_n_consumed)
{
    char out[16];
    size_t used;

    ck_assert_uint_eq(rr_escape_n(RR_ESC_TEXT, "a\0b", 3, out, sizeof out, &used), 6);
    ck_assert_str_eq(out, "a\\x00b");
    ck_assert_uint_eq(used, 3);
    rr_escape_n(RR_ESC_JSON, "\"\"\"\"\"\"\"\"\"\"", 10, out, 7, &used);
    ck_assert_uint_eq(used, 3);
}
END_TEST

START_TEST(test_json_int)
{
    static const char *const good[] = { "0", "7", "-1", "123456789", "-0",
                                        "9223372036854775807", "-9223372036854775808" };
    static const char *const bad[] = {
        NULL, "", "-", "+7", " 7", "7 ", "07", "00", "1.5", "1e3", "inf", "+inf", "-inf",
        "nan", "0x10", "9223372036854775808", "-9223372036854775809",
        "7,\"fence\":1}", "1\n", "\xef\xbc\x91",
    };
    long long v = 42;

    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++)
        ck_assert_msg(rr_json_int(good[k], NULL), "'%s' refused", good[k]);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_msg(!rr_json_int(bad[k], &v), "'%s' taken", bad[k] ? bad[k] : "(null)");
    ck_assert_int_eq(v, 42);   /* untouched when refused */
    ck_assert(rr_json_int("-12", &v));
    ck_assert_int_eq(v, -12);
}
END_TEST

/* A word to paste into a shell: as it is when safe, else single-quoted. */
START_TEST(test_shell_word)
{
    char out[64];

    ck_assert_str_eq(rr_shell_word("settle-eu_1.x", out, sizeof out), "settle-eu_1.x");
    ck_assert_str_eq(rr_shell_word("a?", out, sizeof out), "'a?'");
    ck_assert_str_eq(rr_shell_word("deploy $BRANCH", out, sizeof out), "'deploy $BRANCH'");
    ck_assert_str_eq(rr_shell_word("it's", out, sizeof out), "'it'\\''s'");
    ck_assert_str_eq(rr_shell_word("", out, sizeof out), "''");
    ck_assert_str_eq(rr_shell_word("=ls", out, sizeof out), "'=ls'");   /* zsh's =cmd */
    ck_assert_str_eq(rr_shell_word("a=b", out, sizeof out), "a=b");
    ck_assert_str_eq(rr_shell_word("abcdef", out, 6), "");    /* does not fit: nothing */
    ck_assert_str_eq(rr_shell_word("a b", out, 6), "'a b'");
    ck_assert_str_eq(rr_shell_word("a b", out, 5), "");
}
END_TEST

static Suite *escape_suite(void)
{
    Suite *s = suite_create("escape");
    TCase *tc = tcase_create("kinds");
    tcase_add_test(tc, test_text_table);
    tcase_add_test(tc, test_text_hostile_records);
    tcase_add_test(tc, test_json_terminal_code_points);
    tcase_add_test(tc, test_nagios_table);
    tcase_add_test(tc, test_nagios_hostile_records);
    tcase_add_test(tc, test_label_table);
    tcase_add_test(tc, test_small_buffers);
    tcase_add_test(tc, test_escape_n_consumed);
    tcase_add_test(tc, test_json_int);
    tcase_add_test(tc, test_shell_word);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "escape", escape_suite, NULL, NULL };
