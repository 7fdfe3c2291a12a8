/* check_metrics.c — the metrics file: counters survive across runs, a run
 * that did not hold the lock keeps the holder's figures, the label is lock. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "unit.h"

static char *format(const char *lock, const struct rr_metrics *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    rr_metrics_format(f, lock, m);
    fclose(f);
    return buf;
}

static struct rr_run_report report(const char *status, int code, long long fence, double end)
{
    struct rr_run_report r = { .status = status, .exit_code = code, .child_exit = code,
                               .fence = fence, .start_s = end - 2, .end_s = end,
                               .wait_ms = 500 };
    return r;
}

START_TEST(test_roundtrip)
{
    struct rr_metrics m, again;
    struct rr_run_report ok = report("succeeded", 0, 42, 1000.5);
    struct rr_run_report busy = report("busy", 75, 0, 1010);

    rr_metrics_parse("", 0, "settle", &m);
    rr_metrics_update(&m, &ok);
    char *t1 = format("settle", &m);
    ck_assert_ptr_nonnull(strstr(t1, "redlock_run_last_fence{lock=\"settle\"} 42\n"));
    ck_assert_ptr_nonnull(strstr(t1, "redlock_run_last_success_timestamp_seconds{lock=\"settle\"} 1000.500\n"));
    ck_assert_ptr_null(strstr(t1, "job="));

    /* A busy run on the same host: counters move, the holder's figures stay. */
    rr_metrics_parse(t1, strlen(t1), "settle", &again);
    rr_metrics_update(&again, &busy);
    char *t2 = format("settle", &again);
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_fence{lock=\"settle\"} 42\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_runs_total{lock=\"settle\",status=\"succeeded\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_runs_total{lock=\"settle\",status=\"busy\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_status{lock=\"settle\",status=\"succeeded\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_attempt_status{lock=\"settle\",status=\"busy\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_attempt_exit_code{lock=\"settle\"} 75\n"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_success_timestamp_seconds{lock=\"settle\"} 1000.500\n"));

    /* A failure moves the holder's figures but not the last success. */
    struct rr_run_report bad = report("failed", 3, 43, 1020);
    rr_metrics_parse(t2, strlen(t2), "settle", &m);
    rr_metrics_update(&m, &bad);
    char *t3 = format("settle", &m);
    ck_assert_ptr_nonnull(strstr(t3, "redlock_run_last_fence{lock=\"settle\"} 43\n"));
    ck_assert_ptr_nonnull(strstr(t3, "redlock_run_last_exit_code{lock=\"settle\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(t3, "redlock_run_last_success_timestamp_seconds{lock=\"settle\"} 1000.500\n"));
    ck_assert_ptr_nonnull(strstr(t3, "redlock_run_runs_total{lock=\"settle\",status=\"failed\"} 1\n"));
    free(t1);
    free(t2);
    free(t3);
}
END_TEST

START_TEST(test_other_lock_and_garbage)
{
    struct rr_metrics m;
    const char *text = "redlock_run_runs_total{lock=\"other\",status=\"busy\"} 9\n"
                       "redlock_run_runs_total{lock=\"a\\\"b\",status=\"lost\"} 4\n"
                       "garbage line\n{}\n"
                       "redlock_run_last_fence{lock=\"a\\\"b\"} nan-ish\n";

    rr_metrics_parse(text, strlen(text), "a\"b", &m);
    ck_assert(m.runs[rr_metrics_status_index("busy")] == 0);
    ck_assert(m.runs[rr_metrics_status_index("lost")] == 4);
    ck_assert(m.held_fence == 0);
    ck_assert(!m.held_any);
    /* No holder yet: only the counters and the attempt figures. */
    char *t = format("a\"b", &m);
    ck_assert_ptr_null(strstr(t, "redlock_run_last_fence"));
    ck_assert_ptr_nonnull(strstr(t, "lock=\"a\\\"b\""));
    free(t);
    ck_assert_int_eq(rr_metrics_status_index("nonsense"), rr_metrics_status_index("error"));
    ck_assert_int_eq(rr_metrics_status_index(NULL), rr_metrics_status_index("error"));
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_other_lock_and_garbage);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "metrics", metrics_suite, NULL, NULL };
