/* check_verdict.c — the --status --max-age verdict: what was read about a
 * job becomes a plugin exit status and one status line with perfdata. */
#include <check.h>
#include <string.h>

#include "unit.h"
#include "verdict.h"

#define H 3600000LL

static struct rr_verdict_in base(void)
{
    return (struct rr_verdict_in){
        .name = "settle", .key = "redlock:{settle}:state", .last = RR_JOB_SUCCEEDED,
        .now_ms = 100 * H, .max_age_ms = 25 * H, .success_ms = 97 * H,
        .success_fence = 41, .success_host = "web-2",
    };
}

START_TEST(test_ok)
{
    struct rr_verdict_in in = base();
    char line[512];

    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
    ck_assert_str_eq(line, "REDLOCK OK - settle succeeded 3h ago (fence 41 on web-2) "
                           "| age=10800s;;90000s");
    in.last = RR_JOB_RUNNING;
    in.held = true;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
    ck_assert_ptr_nonnull(strstr(line, "running now; succeeded 3h ago"));
    in.success_host = "";   /* host unknown: no "(fence ... on ...)" */
    in.last = RR_JOB_SUCCEEDED;
    rr_verdict(&in, line, sizeof line);
    ck_assert_str_eq(line, "REDLOCK OK - settle succeeded 3h ago | age=10800s;;90000s");
    in.success_ms = in.now_ms + 500;   /* our clock a little behind the server's */
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
    ck_assert_ptr_nonnull(strstr(line, "age=0s;"));
}
END_TEST

START_TEST(test_warning)
{
    struct rr_verdict_in in = base();
    char line[512];

    in.last = RR_JOB_FAILED;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    ck_assert_str_eq(line, "REDLOCK WARNING - settle last run failed; succeeded 3h ago "
                           "(fence 41 on web-2) | age=10800s;;90000s");
    in.last = RR_JOB_TIMEOUT;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    in.last = RR_JOB_LOST;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    in.last = RR_JOB_RUNNING;   /* running with no lock held: its holder died */
    in.held = false;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    ck_assert_ptr_nonnull(strstr(line, "last run abandoned;"));
}
END_TEST

START_TEST(test_critical)
{
    struct rr_verdict_in in = base();
    char line[512];

    in.success_ms = in.now_ms - 26 * H;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_str_eq(line, "REDLOCK CRITICAL - settle succeeded 1d2h ago (fence 41 on web-2), "
                           "more than --max-age 1d1h | age=93600s;;90000s");
    in.success_ms = in.now_ms - in.max_age_ms;   /* exactly DUR: still within */
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
    in.success_ms = in.now_ms - 26 * H;
    in.last = RR_JOB_FAILED;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_ptr_nonnull(strstr(line, "CRITICAL - settle last run failed; succeeded"));
    in.success_ms = 0;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_str_eq(line, "REDLOCK CRITICAL - settle never succeeded (last run failed)");
    in.last = RR_JOB_NONE;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_str_eq(line, "REDLOCK CRITICAL - settle never ran (no record under "
                           "redlock:{settle}:state)");
}
END_TEST

START_TEST(test_unknown_and_truncation)
{
    struct rr_verdict_in in = base();
    char line[512], tiny[12];

    ck_assert_int_eq(rr_verdict_unknown("127.0.0.1:6379: connection refused", line, sizeof line),
                     RR_VERDICT_UNKNOWN);
    ck_assert_str_eq(line, "REDLOCK UNKNOWN - 127.0.0.1:6379: connection refused");
    in.last = RR_JOB_FAILED;
    ck_assert_int_eq(rr_verdict(&in, tiny, sizeof tiny), RR_VERDICT_WARNING);
    ck_assert_str_eq(tiny, "REDLOCK WAR");
}
END_TEST

/* A host written by another tenant (issue 30) cannot add a line, plant
 * perfdata or drive a terminal: the line is one line, with one '|' (ours),
 * and its perfdata is the age we computed. So for a NAME with a '|'. */
START_TEST(test_hostile_host)
{
    struct rr_verdict_in in = base();
    char line[1024];

    in.success_host = "web-1) | age=1s;;\nREDLOCK OK - forged\x1b]0;T\x07";
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
    ck_assert_str_eq(line, "REDLOCK OK - settle succeeded 3h ago (fence 41 on web-1) \\x7c "
                           "age=1s;;\\nREDLOCK OK - forged\\x1b]0;T\\x07) | age=10800s;;90000s");
    in.name = "a|b";
    in.last = RR_JOB_NONE;
    in.success_ms = 0;
    rr_verdict(&in, line, sizeof line);
    ck_assert_str_eq(line, "REDLOCK CRITICAL - a\\x7cb never ran (no record under "
                           "redlock:{settle}:state)");
    rr_verdict_unknown("10.0.0.1: ERR x|y\nz", line, sizeof line);
    ck_assert_str_eq(line, "REDLOCK UNKNOWN - 10.0.0.1: ERR x\\x7cy\\nz");
}
END_TEST

static Suite *verdict_suite(void)
{
    Suite *s = suite_create("verdict");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_ok);
    tcase_add_test(tc, test_warning);
    tcase_add_test(tc, test_critical);
    tcase_add_test(tc, test_unknown_and_truncation);
    tcase_add_test(tc, test_hostile_host);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "verdict", verdict_suite, NULL, NULL };
