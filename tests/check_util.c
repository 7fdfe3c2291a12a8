/* check_util.c — unit tests for the shared helpers of util.c: rr_quote and
 * rr_parse_decimal. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "rr.h"
#include "unit.h"

START_TEST(quote_cuts_and_masks)
{
    char q[72];

    ck_assert_str_eq(rr_quote("abc", SIZE_MAX, RR_QUOTE_MAX, q, sizeof q), "abc");
    ck_assert_str_eq(rr_quote("a\nb\tc\x80", SIZE_MAX, RR_QUOTE_MAX, q, sizeof q), "a?b?c?");
    /* n bytes only, and "..." only when s goes on within them. */
    ck_assert_str_eq(rr_quote("abcdef", 3, RR_QUOTE_MAX, q, sizeof q), "abc");
    ck_assert_str_eq(rr_quote("abcdef", SIZE_MAX, 3, q, sizeof q), "abc...");
    ck_assert_str_eq(rr_quote("abc", SIZE_MAX, 3, q, sizeof q), "abc");
    /* A small output buffer cuts it, with room for "..." kept but unused. */
    ck_assert_str_eq(rr_quote("abcdefgh", SIZE_MAX, RR_QUOTE_MAX, q, 8), "abcd");
    /* In place. */
    strcpy(q, "x\001y");
    ck_assert_str_eq(rr_quote(q, SIZE_MAX, RR_QUOTE_MAX, q, sizeof q), "x?y");

    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_uint_eq(strlen(rr_quote(big, SIZE_MAX, RR_QUOTE_MAX, q, sizeof q)), RR_QUOTE_MAX + 3);
}
END_TEST

START_TEST(decimal_bounds)
{
    long v = -1;

    ck_assert_int_eq(rr_parse_decimal("0", 1, 0, 255, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(rr_parse_decimal("255", 3, 0, 255, &v), 0);
    ck_assert_int_eq(v, 255);
    ck_assert_int_eq(rr_parse_decimal("000000000000007", 15, 0, 255, &v), 0);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(rr_parse_decimal("6379/2", 4, 1, 65535, &v), 0);
    ck_assert_int_eq(v, 6379);
    v = 42;
    ck_assert_int_eq(rr_parse_decimal("256", 3, 0, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("0", 1, 1, 100, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("", 0, 0, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("-1", 2, -5, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("+1", 2, 0, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal(" 1", 2, 0, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("1x", 2, 0, 255, &v), -1);
    ck_assert_int_eq(rr_parse_decimal("99999999999999999999999999", 26, 0, 255, &v), -1);
    ck_assert_int_eq(v, 42);
}
END_TEST

static Suite *util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");

    tcase_add_test(tc, quote_cuts_and_masks);
    tcase_add_test(tc, decimal_bounds);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "util", util_suite, NULL, NULL };
