/* check_once_clock.c — the --once clock: a TIME reply read, and the one
 * rule for several masters (the median; with an even count the earlier of
 * the two middle answers), so that one master a day off changes nothing. */
#include <check.h>
#include <stdlib.h>

#include "once_clock.h"
#include "replies.h"
#include "unit.h"

START_TEST(test_median)
{
    long long one[] = { 1000 };
    long long three[] = { 1000 + 86400, 1000, 1001 };   /* one master a day ahead */
    long long five[] = { 5, 1, 4, 2, 3 };
    long long two[] = { 20, 10 };
    long long four[] = { 40, 10, 30, 20 };
    long long behind[] = { 1000, 1000 - 86400, 1002 };  /* one a day behind */

    ck_assert_int_eq(rr_once_clock_median(one, 1), 1000);
    ck_assert_int_eq(rr_once_clock_median(three, 3), 1001);
    ck_assert_int_eq(rr_once_clock_median(five, 5), 3);
    ck_assert_int_eq(rr_once_clock_median(two, 2), 10);
    ck_assert_int_eq(rr_once_clock_median(four, 4), 20);
    ck_assert_int_eq(rr_once_clock_median(behind, 3), 1000);
}
END_TEST

START_TEST(test_parse)
{
    long long s = 0;
    redisReply *r = resp("*2\r\n$10\r\n1796434015\r\n$6\r\n123456\r\n");

    ck_assert_int_eq(rr_once_clock_parse(r, &s), 0);
    ck_assert_int_eq(s, 1796434015LL);
    freeReplyObject(r);
    r = resp("*2\r\n$3\r\n12x\r\n$1\r\n0\r\n");
    ck_assert_int_eq(rr_once_clock_parse(r, &s), -1);
    freeReplyObject(r);
    r = resp("*1\r\n$2\r\n12\r\n");
    ck_assert_int_eq(rr_once_clock_parse(r, &s), -1);
    freeReplyObject(r);
    r = resp("-NOPERM no\r\n");
    ck_assert_int_eq(rr_once_clock_parse(r, &s), -1);
    freeReplyObject(r);
    r = resp("*2\r\n$2\r\n-1\r\n$1\r\n0\r\n");
    ck_assert_int_eq(rr_once_clock_parse(r, &s), -1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_once_clock_parse(NULL, &s), -1);
}
END_TEST

static Suite *once_clock_suite(void)
{
    Suite *s = suite_create("once_clock");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_median);
    tcase_add_test(tc, test_parse);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "once_clock", once_clock_suite, NULL, NULL };
