/* check_metrics.c — the metrics file: counters survive across runs, a run
 * that did not hold the lock keeps the holder's figures, the label is lock,
 * one file keeps the series of every lock written to it. */
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

/* The masters a run reached, of how many: a degraded quorum shows, and a
 * run that made no acquire round (a usage error) keeps the last figures. */
START_TEST(test_masters_reachable)
{
    struct rr_metrics m, again;
    struct rr_run_report dg = report("succeeded", 0, 7, 1000);
    struct rr_run_report none = report("error", 69, 0, 1010);

    rr_metrics_parse("", 0, "j", &m);
    char *t0 = format("j", &m);
    ck_assert_ptr_null(strstr(t0, "redlock_run_masters"));
    dg.masters_reachable = 2;
    dg.masters_total = 3;
    rr_metrics_update(&m, &dg);
    char *t1 = format("j", &m);
    ck_assert_ptr_nonnull(strstr(t1, "# TYPE redlock_run_masters gauge\n"));
    ck_assert_ptr_nonnull(strstr(t1, "redlock_run_masters{lock=\"j\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(t1, "redlock_run_masters_reachable{lock=\"j\"} 2\n"));
    rr_metrics_parse(t1, strlen(t1), "j", &again);
    rr_metrics_update(&again, &none);
    char *t2 = format("j", &again);
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_masters_reachable{lock=\"j\"} 2\n"));
    free(t0);
    free(t1);
    free(t2);
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

static char *format_set(const struct rr_metrics_set *set)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_ptr_nonnull(f);
    rr_metrics_set_format(f, set);
    fclose(f);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Read the text, fold a run of lock in, write it back: what a run does. */
static char *fold(const char *text, const char *lock, const struct rr_run_report *rep)
{
    struct rr_metrics_set set;

    ck_assert_int_eq(rr_metrics_set_parse(text, strlen(text), &set), 0);
    struct rr_metrics *m = rr_metrics_set_get(&set, lock);
    ck_assert_ptr_nonnull(m);
    rr_metrics_update(m, rep);
    char *out = format_set(&set);
    rr_metrics_set_free(&set);
    return out;
}

/* Two jobs share one file: each keeps its series and its counters, and
 * each family is written once (HELP, TYPE, then every lock's samples). */
START_TEST(test_two_locks_in_one_file)
{
    struct rr_run_report ok = report("succeeded", 0, 42, 1000);
    struct rr_run_report bad = report("failed", 3, 7, 1001);
    struct rr_run_report busy = report("busy", 75, 0, 1002);

    char *t1 = fold("", "settle", &ok);
    char *t2 = fold(t1, "report", &bad);
    char *t3 = fold(t2, "settle", &ok);
    char *t4 = fold(t3, "report", &busy);
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_runs_total{lock=\"settle\",status=\"succeeded\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_runs_total{lock=\"report\",status=\"failed\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_runs_total{lock=\"report\",status=\"busy\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_last_fence{lock=\"settle\"} 42\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_last_fence{lock=\"report\"} 7\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_last_exit_code{lock=\"report\"} 3\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_last_attempt_exit_code{lock=\"report\"} 75\n"));
    ck_assert_ptr_nonnull(strstr(t4, "redlock_run_last_success_timestamp_seconds{lock=\"report\"} 0.000\n"));
    ck_assert_int_eq(count(t4, "# HELP redlock_run_runs_total "), 1);
    ck_assert_int_eq(count(t4, "# TYPE redlock_run_last_fence gauge"), 1);
    /* The order of the locks is the order first written. */
    ck_assert(strstr(t4, "lock=\"settle\"") < strstr(t4, "lock=\"report\""));
    /* The samples of a family follow its TYPE line, before the next HELP. */
    const char *type = strstr(t4, "# TYPE redlock_run_last_fence gauge\n");
    ck_assert_ptr_nonnull(type);
    const char *s1 = strstr(type, "redlock_run_last_fence{lock=\"settle\"}");
    const char *s2 = strstr(type, "redlock_run_last_fence{lock=\"report\"}");
    const char *next = strstr(type + 1, "# HELP");
    ck_assert(s1 && s2 && (!next || (s1 < next && s2 < next)));
    /* Reading it back gives each lock its own figures. */
    struct rr_metrics m;
    rr_metrics_parse(t4, strlen(t4), "report", &m);
    ck_assert(m.runs[rr_metrics_status_index("failed")] == 1);
    ck_assert(m.runs[rr_metrics_status_index("succeeded")] == 0);
    ck_assert_int_eq(m.held_fence, 7);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
}
END_TEST

/* A lock that never held it next to one that did: the holder families are
 * written for the holder only; none at all while no lock ever held it. */
START_TEST(test_holder_families_per_lock)
{
    struct rr_run_report busy = report("busy", 75, 0, 1000);
    struct rr_run_report ok = report("succeeded", 0, 5, 1001);

    char *t1 = fold("", "a", &busy);
    ck_assert_ptr_null(strstr(t1, "redlock_run_last_fence"));
    char *t2 = fold(t1, "b", &ok);
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_last_fence{lock=\"b\"} 5\n"));
    ck_assert_ptr_null(strstr(t2, "redlock_run_last_fence{lock=\"a\"}"));
    ck_assert_ptr_nonnull(strstr(t2, "redlock_run_runs_total{lock=\"a\",status=\"busy\"} 1\n"));
    /* One lock alone: the same text as the one-lock formatter writes. */
    struct rr_metrics m;
    rr_metrics_parse(t2, strlen(t2), "b", &m);
    char *one = format("b", &m);
    struct rr_metrics_set set;
    ck_assert_int_eq(rr_metrics_set_parse(one, strlen(one), &set), 0);
    ck_assert_uint_eq(set.n, 1);
    char *again = format_set(&set);
    ck_assert_str_eq(again, one);
    rr_metrics_set_free(&set);
    ck_assert_uint_eq(set.n, 0);
    free(t1);
    free(t2);
    free(one);
    free(again);
}
END_TEST

/* A job no run on this host attempted for RR_METRICS_KEEP_S leaves a
 * shared file at the next write; the one being written, and the others,
 * stay. */
START_TEST(test_prune_old_locks)
{
    struct rr_run_report old = report("failed", 1, 3, 1000);
    struct rr_run_report recent = report("succeeded", 0, 4, 1000 + RR_METRICS_KEEP_S - 10);
    struct rr_metrics_set set;

    char *t1 = fold("", "gone", &old);
    char *t2 = fold(t1, "kept", &recent);
    ck_assert_int_eq(rr_metrics_set_parse(t2, strlen(t2), &set), 0);
    ck_assert_uint_eq(set.n, 2);
    rr_metrics_set_prune(&set, "kept", 1000 + RR_METRICS_KEEP_S - 1);
    ck_assert_uint_eq(set.n, 2);   /* not yet */
    rr_metrics_set_prune(&set, "gone", 1000 + RR_METRICS_KEEP_S + 5);
    ck_assert_uint_eq(set.n, 2);   /* the lock being written stays */
    rr_metrics_set_prune(&set, "kept", 1000 + RR_METRICS_KEEP_S + 5);
    ck_assert_uint_eq(set.n, 1);
    ck_assert_str_eq(set.e[0].lock, "kept");
    rr_metrics_set_free(&set);
    free(t1);
    free(t2);
}
END_TEST

START_TEST(test_name_collected)
{
    ck_assert(rr_metrics_name_collected("/var/lib/node_exporter/textfile/settle.prom"));
    ck_assert(rr_metrics_name_collected("x.prom"));
    ck_assert(!rr_metrics_name_collected("/var/lib/node_exporter/settle.txt"));
    ck_assert(!rr_metrics_name_collected("settle.prom.tmp"));
    ck_assert(!rr_metrics_name_collected("prom"));
    ck_assert(!rr_metrics_name_collected(""));
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_masters_reachable);
    tcase_add_test(tc, test_other_lock_and_garbage);
    tcase_add_test(tc, test_two_locks_in_one_file);
    tcase_add_test(tc, test_holder_families_per_lock);
    tcase_add_test(tc, test_name_collected);
    tcase_add_test(tc, test_prune_old_locks);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "metrics", metrics_suite, NULL, NULL };
