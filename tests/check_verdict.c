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

/* Issue 34, 1: an unsettled --once ID of the job is not OK, even after a
 * later success; the line names the ID and the command that settles it. */
START_TEST(test_unsettled)
{
    struct rr_verdict_in in = base();
    const char *one[] = { "d1", "abandoned" };
    const char *four[] = { "d1", "abandoned", "d2", "failed", "d3", "timeout", "d4", "lost" };
    char line[1024];

    in.unsettled = one;
    in.n_unsettled = 1;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    ck_assert_str_eq(line, "REDLOCK WARNING - settle --once d1 abandoned, not settled: "
                           "redlock-run --status settle says how to settle it; "
                           "succeeded 3h ago (fence 41 on web-2) | age=10800s;;90000s");
    in.unsettled = four;
    in.n_unsettled = 4;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    ck_assert_ptr_nonnull(strstr(line, "4 --once IDs not settled (d1 abandoned, d2 failed, "
                                       "d3 timeout, ...): redlock-run --status settle "
                                       "says how to settle each; "));
    in.success_ms = in.now_ms - 26 * H;   /* too old as well: CRITICAL, still named */
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_ptr_nonnull(strstr(line, "d1 abandoned"));
    in.success_ms = 0;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_ptr_nonnull(strstr(line, "d1 abandoned"));
}
END_TEST

/* Issue 34, 3: a run that holds the lock longer than --warn-held shows. */
START_TEST(test_held_long)
{
    struct rr_verdict_in in = base();
    char line[1024];

    in.last = RR_JOB_RUNNING;
    in.held = true;
    in.held_since_ms = in.now_ms - 2 * H;
    in.held_fence = 42;
    in.held_host = "web-1";
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);   /* no bound */
    in.warn_held_ms = 3 * H;
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);   /* within it */
    in.warn_held_ms = 1 * H;
    ck_assert(rr_verdict_held_long(&in));
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_WARNING);
    ck_assert_str_eq(line, "REDLOCK WARNING - settle held 2h by web-1 (fence 42), more than "
                           "--warn-held 1h; succeeded 3h ago (fence 41 on web-2) "
                           "| age=10800s;;90000s");
    in.held = false;   /* its holder died: abandoned, not held */
    ck_assert(!rr_verdict_held_long(&in));
    in.held = true;
    in.held_since_ms = 0;   /* holder unknown: no claim */
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_OK);
}
END_TEST

/* Issue 34, 5: a NAME that never ran names the closest one there is. */
START_TEST(test_near)
{
    struct rr_verdict_in in = base();
    const char *names[] = { "backup", "settle", "report", "settle-eu" };
    char line[1024];

    ck_assert_int_eq(rr_verdict_closest("setle", names, 4), 1);
    ck_assert_int_eq(rr_verdict_closest("settle-e", names, 4), 3);
    ck_assert_int_eq(rr_verdict_closest("invoice", names, 4), -1);   /* nothing close */
    ck_assert_int_eq(rr_verdict_closest("settle", names, 4), -1);    /* not itself */
    ck_assert_int_eq(rr_verdict_closest("x", names, 0), -1);
    /* A short name: one edit, never the whole name. */
    const char *short_names[] = { "a?", "nd", "ncat" };
    ck_assert_int_eq(rr_verdict_closest("nc", short_names, 3), 1);
    ck_assert_int_eq(rr_verdict_closest("nc", short_names, 1), -1);
    ck_assert_int_eq(rr_verdict_closest("rpt", names, 4), -1);   /* not "report": 3 edits */
    in.name = "setle";
    in.key = "redlock:{setle}:state";
    in.last = RR_JOB_NONE;
    in.success_ms = 0;
    in.near = "settle";
    ck_assert_int_eq(rr_verdict(&in, line, sizeof line), RR_VERDICT_CRITICAL);
    ck_assert_str_eq(line, "REDLOCK CRITICAL - setle never ran (no record under "
                           "redlock:{setle}:state); did you mean settle?");
    in.near = "a|b\n";
    rr_verdict(&in, line, sizeof line);
    ck_assert_ptr_nonnull(strstr(line, "did you mean a\\x7cb\\n?"));
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
    tcase_add_test(tc, test_unsettled);
    tcase_add_test(tc, test_held_long);
    tcase_add_test(tc, test_near);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "verdict", verdict_suite, NULL, NULL };
