/* check_duration.c — unit tests for rr_duration_parse / rr_duration_format. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "rr.h"
#include "unit.h"

struct good {
    const char *in;
    int64_t ms;
};

static const struct good goods[] = {
    { "0", 0 },
    { "0s", 0 },
    { "1", 1000 },
    { "30", 30000 },
    { "0.1", 100 },
    { "1.5s", 1500 },
    { ".5s", 500 },
    { "2.", 2000 },
    { "500ms", 500 },
    { "1ms", 1 },
    { "1.5ms", 1 },
    { "30s", 30000 },
    { "5m", 300000 },
    { "1h", 3600000 },
    { "2d", 172800000 },
    { "1h30m", 5400000 },
    { "2m10s500ms", 130500 },
    { "1d2h3m4s5ms", 93784005 },
    { "1.5h", 5400000 },
    { "0.001s", 1 },
    { "0.0001s", 0 },
    { "1.123456789123s", 1123 },
    { "90m", 5400000 },
    { "10s1m", 70000 },
    { "inf", RR_INF },
    { "infinity", RR_INF },
    { "106751991167d", 106751991167LL * 86400000 },
    { "9223372036854775806ms", INT64_MAX - 1 },
};

static const char *const bads[] = {
    "",
    "-1",
    "-5s",
    "abc",
    "s",
    "ms",
    ".",
    ".s",
    "5x",
    "5 s",
    " 5s",
    "5s ",
    "5sec",
    "5mss",
    "1m2m",
    "1s1s",
    "1h30",
    "1.2.3s",
    "1e3",
    "0x10",
    "+5s",
    "5S",
    "Inf",
    "inff",
    "5s,",
    "9223372036854775807ms",
    "9223372036854775808",
    "99999999999999999999999s",
    "106751991168d",
    "1d\n",
    "5m\x01",
    "\xff\xfe",
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void assert_one_line(const char *err)
{
    ck_assert_msg(err[0] != '\0', "error message is empty");
    ck_assert_msg(strchr(err, '\n') == NULL, "error message has a newline: %s", err);
    for (const char *p = err; *p; p++)
        ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
                      "error message has a non-printable byte: %s", err);
    ck_assert_msg(err[strlen(err) - 1] != '.', "error message ends with a full stop: %s", err);
}

START_TEST(parse_good)
{
    const struct good *g = &goods[_i];
    int64_t ms = -42;
    char err[RR_ERRLEN] = "";

    ck_assert_msg(rr_duration_parse(g->in, &ms, err, sizeof err) == 0,
                  "'%s' rejected: %s", g->in, err);
    ck_assert_msg(ms == g->ms, "'%s' gave %lld, want %lld", g->in, (long long)ms, (long long)g->ms);
}
END_TEST

START_TEST(parse_bad)
{
    const char *in = bads[_i];
    int64_t ms = -42;
    char err[RR_ERRLEN] = "";

    ck_assert_msg(rr_duration_parse(in, &ms, err, sizeof err) == -1, "'%s' accepted as %lld", in, (long long)ms);
    ck_assert_msg(ms == -42, "'%s' wrote *ms on failure", in);
    assert_one_line(err);
    ck_assert_msg(strncmp(err, "invalid duration '", 18) == 0, "unexpected message: %s", err);
}
END_TEST

START_TEST(parse_null_and_messages)
{
    int64_t ms;
    char err[RR_ERRLEN];

    ck_assert_int_eq(rr_duration_parse(NULL, &ms, err, sizeof err), -1);
    assert_one_line(err);

    ck_assert_int_eq(rr_duration_parse("x", &ms, err, sizeof err), -1);
    ck_assert_str_eq(err, "invalid duration 'x': expected a number with a unit, such as 500ms, 30s, 5m, 1h30m or inf");

    ck_assert_int_eq(rr_duration_parse("-5s", &ms, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "negative"));

    ck_assert_int_eq(rr_duration_parse("1m2m", &ms, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "twice"));

    ck_assert_int_eq(rr_duration_parse("999999999999d", &ms, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "too large"));

    /* A huge input is cut, and a small buffer is still terminated. */
    char big[400];
    memset(big, '7', sizeof big - 2);
    big[sizeof big - 2] = 'x';
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(rr_duration_parse(big, &ms, err, sizeof err), -1);
    assert_one_line(err);
    ck_assert_uint_lt(strlen(err), 200);

    char tiny[8];
    ck_assert_int_eq(rr_duration_parse("zz", &ms, tiny, sizeof tiny), -1);
    ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
}
END_TEST

struct fmt {
    int64_t ms;
    const char *out;
};

static const struct fmt fmts[] = {
    { 0, "0s" },
    { 1, "1ms" },
    { 250, "250ms" },
    { 999, "999ms" },
    { 1000, "1s" },
    { 1500, "1.5s" },
    { 1250, "1.25s" },
    { 1005, "1.005s" },
    { 30000, "30s" },
    { 60000, "1m" },
    { 150000, "2m30s" },
    { 3720000, "1h2m" },
    { 3600000, "1h" },
    { 5400000, "1h30m" },
    { 86400000, "1d" },
    { 30LL * 86400000, "30d" },
    { 93784005, "1d2h3m4.005s" },
    { RR_INF, "inf" },
};

START_TEST(format_table)
{
    char buf[64];

    ck_assert_str_eq(rr_duration_format(fmts[_i].ms, buf, sizeof buf), fmts[_i].out);
}
END_TEST

/* Whatever format prints, parse must read back as the same value. */
START_TEST(format_round_trip)
{
    static const int64_t vals[] = {
        0, 1, 9, 10, 999, 1000, 1001, 1999, 59999, 60000, 61001, 3599999,
        3600000, 86399999, 86400000, 90061001, INT64_MAX - 1, RR_INF,
    };
    char buf[64], err[RR_ERRLEN];
    int64_t back;

    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        rr_duration_format(vals[i], buf, sizeof buf);
        ck_assert_msg(rr_duration_parse(buf, &back, err, sizeof err) == 0, "'%s': %s", buf, err);
        ck_assert_msg(back == vals[i], "%lld -> '%s' -> %lld", (long long)vals[i], buf, (long long)back);
    }
}
END_TEST

START_TEST(format_small_buffers)
{
    char buf[4];

    ck_assert_str_eq(rr_duration_format(93784005, buf, sizeof buf), "1d2");
    ck_assert_str_eq(rr_duration_format(250, buf, sizeof buf), "250");
    ck_assert_str_eq(rr_duration_format(RR_INF, buf, 1), "");
    buf[0] = 'x';
    rr_duration_format(5, buf, 0);
    ck_assert_int_eq(buf[0], 'x');
}
END_TEST

static Suite *duration_suite(void)
{
    Suite *s = suite_create("duration");
    TCase *tc = tcase_create("parse");

    tcase_add_loop_test(tc, parse_good, 0, N(goods));
    tcase_add_loop_test(tc, parse_bad, 0, N(bads));
    tcase_add_test(tc, parse_null_and_messages);
    suite_add_tcase(s, tc);

    tc = tcase_create("format");
    tcase_add_loop_test(tc, format_table, 0, N(fmts));
    tcase_add_test(tc, format_round_trip);
    tcase_add_test(tc, format_small_buffers);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "duration", duration_suite, NULL, NULL };
