/* check_job.c — keys, records, the run/skip/refuse decision and the
 * --status exit code. */
#include <check.h>
#include <stdlib.h>

#include "job.h"
#include "replies.h"
#include "status.h"
#include "unit.h"

START_TEST(test_keys)
{
    struct rr_job_keys k;

    ck_assert_int_eq(rr_job_keys(&k, "redlock:", "settle", ""), 0);
    ck_assert_str_eq(k.lock, "redlock:{settle}:lock");
    ck_assert_str_eq(k.fence, "redlock:{settle}:fence");
    ck_assert_str_eq(k.state, "redlock:{settle}:state");
    ck_assert_str_eq(k.history, "redlock:{settle}:history");
    ck_assert_str_eq(k.channel, "redlock:{settle}:released");
    ck_assert_str_eq(k.void_prefix, "redlock:{settle}:void:");
    ck_assert_str_eq(k.once, "");
    ck_assert_str_eq(k.once_pattern, "redlock:\\{settle\\}:once:*");
    ck_assert_int_eq(rr_job_keys(&k, "p/", "a*b?[c]", "settle-2026-11-30"), 0);
    ck_assert_str_eq(k.once, "p/{a*b?[c]}:once:settle-2026-11-30");
    ck_assert_str_eq(k.once_pattern, "p/\\{a\\*b\\?\\[c\\]\\}:once:*");
    ck_assert_int_eq(rr_job_keys(&k, "redlock:", "x", NULL), 0);
    ck_assert_str_eq(k.once, "");
}
END_TEST

START_TEST(test_keys_too_long)
{
    struct rr_job_keys k;
    char name[400];

    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    ck_assert_int_eq(rr_job_keys(&k, "redlock:", name, ""), -1);
    /* The longest legal name and once ID fit. */
    char n200[201], o200[201], p64[65];
    memset(n200, 'n', 200);
    n200[200] = '\0';
    memset(o200, 'o', 200);
    o200[200] = '\0';
    memset(p64, 'p', 64);
    p64[64] = '\0';
    ck_assert_int_eq(rr_job_keys(&k, p64, n200, o200), 0);
}
END_TEST

START_TEST(test_status_names)
{
    for (int s = RR_JOB_RUNNING; s < RR_JOB_UNKNOWN; s++)
        ck_assert_int_eq(rr_job_status_parse(rr_job_status_name(s)), s);
    ck_assert_int_eq(rr_job_status_parse(""), RR_JOB_NONE);
    ck_assert_int_eq(rr_job_status_parse(NULL), RR_JOB_NONE);
    ck_assert_int_eq(rr_job_status_parse("exploded"), RR_JOB_UNKNOWN);
    ck_assert_int_eq(rr_job_status_parse("Running"), RR_JOB_UNKNOWN);
    /* A run's outcomes for the metrics, under the names they always had;
     * no record holds them, so a record saying so is a status we do not know. */
    ck_assert_str_eq(rr_job_status_name(RR_JOB_BUSY), "busy");
    ck_assert_str_eq(rr_job_status_name(RR_JOB_SKIPPED), "skipped");
    ck_assert_str_eq(rr_job_status_name(RR_JOB_REFUSED), "refused");
    ck_assert_str_eq(rr_job_status_name(RR_JOB_ERROR), "error");
    ck_assert_str_eq(rr_job_status_name(RR_JOB_NONE), "");
    ck_assert_str_eq(rr_job_status_name((enum rr_job_status)99), "unknown");
    ck_assert_int_eq(rr_job_status_parse("busy"), RR_JOB_UNKNOWN);
    ck_assert_int_eq(rr_job_status_parse("error"), RR_JOB_UNKNOWN);
}
END_TEST

START_TEST(test_record_parse)
{
    struct rr_job_record rec;
    redisReply *r = resp("*12\r\n$6\r\nstatus\r\n$6\r\nfailed\r\n$4\r\nhost\r\n$3\r\nweb\r\n"
                         "$3\r\npid\r\n$2\r\n42\r\n$5\r\nfence\r\n$1\r\n7\r\n"
                         "$9\r\nexit_code\r\n$1\r\n3\r\n$6\r\nsignal\r\n$0\r\n\r\n");

    ck_assert_ptr_nonnull(r);
    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rec.status, RR_JOB_FAILED);
    ck_assert_str_eq(rec.host, "web");
    ck_assert_int_eq(rec.pid, 42);
    ck_assert_int_eq(rec.fence, 7);
    ck_assert_int_eq(rec.exit_code, 3);
    ck_assert_int_eq(rec.signal, -1);
    freeReplyObject(r);

    rr_job_record_parse(&rec, NULL);
    ck_assert_int_eq(rec.status, RR_JOB_NONE);
    r = resp("*0\r\n");
    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rec.status, RR_JOB_NONE);
    freeReplyObject(r);
    /* Odd-length and wrongly typed arrays are read as far as they make sense. */
    r = resp("*3\r\n$6\r\nstatus\r\n$9\r\nsucceeded\r\n$3\r\npid\r\n");
    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rec.status, RR_JOB_SUCCEEDED);
    ck_assert_int_eq(rec.pid, 0);
    freeReplyObject(r);
    r = resp("*2\r\n:1\r\n:2\r\n");
    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rec.status, RR_JOB_NONE);
    freeReplyObject(r);
}
END_TEST

START_TEST(test_decide)
{
    /* A budget not spent: the decisions as they were before attempts. */
    const struct rr_job_attempts fresh = { .used = 0, .allowed = 1 };
    const struct rr_job_attempts *a = &fresh;

    /* lock held: always busy */
    for (int s = RR_JOB_NONE; s <= RR_JOB_UNKNOWN; s++) {
        ck_assert_int_eq(rr_job_decide(s, true, true, true, a), RR_DECIDE_BUSY);
        ck_assert_int_eq(rr_job_decide(s, true, false, false, NULL), RR_DECIDE_BUSY);
    }
    /* --once */
    ck_assert_int_eq(rr_job_decide(RR_JOB_SUCCEEDED, false, true, true, a), RR_DECIDE_SKIP);
    ck_assert_int_eq(rr_job_decide(RR_JOB_SUCCEEDED, false, true, false, a), RR_DECIDE_SKIP);
    ck_assert_int_eq(rr_job_decide(RR_JOB_FAILED, false, true, true, a), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_TIMEOUT, false, true, true, a), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_LOST, false, true, true, a), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_NONE, false, true, true, a), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_RUNNING, false, true, true, a), RR_DECIDE_REFUSE);
    ck_assert_int_eq(rr_job_decide(RR_JOB_ABANDONED, false, true, true, a), RR_DECIDE_REFUSE);
    ck_assert_int_eq(rr_job_decide(RR_JOB_ABANDONED, false, true, false, a), RR_DECIDE_RUN);
    /* without --once, success does not prevent the next run */
    ck_assert_int_eq(rr_job_decide(RR_JOB_SUCCEEDED, false, false, false, NULL), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_RUNNING, false, false, false, NULL), RR_DECIDE_RUN);
    ck_assert_int_eq(rr_job_decide(RR_JOB_RUNNING, false, false, true, NULL), RR_DECIDE_REFUSE);
}
END_TEST

/* Issue 28, 1: by default an --once ID has one attempt; a failed, timed
 * out, lost or abandoned one spends it on every server. */
START_TEST(test_decide_attempts)
{
    const struct rr_job_attempts one = { .used = 1, .allowed = 1 };
    const struct rr_job_attempts of3 = { .used = 2, .allowed = 3 };
    const struct rr_job_attempts all3 = { .used = 3, .allowed = 3 };
    const struct rr_job_attempts retry = { .used = 1, .allowed = 1, .retry = true };
    const struct rr_job_attempts zero = { .used = 1, .allowed = 0 };   /* 0: 1 */
    const enum rr_job_status ended[] = { RR_JOB_FAILED, RR_JOB_TIMEOUT, RR_JOB_LOST,
                                         RR_JOB_ABANDONED, RR_JOB_RUNNING };

    for (size_t i = 0; i < sizeof ended / sizeof ended[0]; i++) {
        enum rr_job_status s = ended[i];
        ck_assert_int_eq(rr_job_decide(s, false, true, true, &one), RR_DECIDE_SPENT);
        ck_assert_int_eq(rr_job_decide(s, false, true, false, &one), RR_DECIDE_SPENT);
        ck_assert_int_eq(rr_job_decide(s, false, true, false, &zero), RR_DECIDE_SPENT);
        ck_assert_int_eq(rr_job_decide(s, false, true, false, &all3), RR_DECIDE_SPENT);
        ck_assert_int_eq(rr_job_decide(s, false, true, false, &of3), RR_DECIDE_RUN);
        /* --resolve retry: one more, even for a dead run under refuse */
        ck_assert_int_eq(rr_job_decide(s, false, true, true, &retry), RR_DECIDE_RUN);
        /* the lock held still comes first */
        ck_assert_int_eq(rr_job_decide(s, true, true, true, &one), RR_DECIDE_BUSY);
        /* without --once nothing is counted */
        ck_assert_int_eq(rr_job_decide(s, false, false, false, &one), RR_DECIDE_RUN);
    }
    /* attempts left, but a dead run is still refused under --on-stale refuse */
    ck_assert_int_eq(rr_job_decide(RR_JOB_ABANDONED, false, true, true, &of3), RR_DECIDE_REFUSE);
    ck_assert_int_eq(rr_job_decide(RR_JOB_FAILED, false, true, true, &of3), RR_DECIDE_RUN);
    /* success and no record are never spent */
    ck_assert_int_eq(rr_job_decide(RR_JOB_SUCCEEDED, false, true, true, &all3), RR_DECIDE_SKIP);
    ck_assert_int_eq(rr_job_decide(RR_JOB_NONE, false, true, true, &all3), RR_DECIDE_RUN);
    /* a retry allowed on a succeeded ID does not run it */
    ck_assert_int_eq(rr_job_decide(RR_JOB_SUCCEEDED, false, true, true, &retry), RR_DECIDE_SKIP);
}
END_TEST

START_TEST(test_attempts_used)
{
    struct rr_job_record rec;
    redisReply *r = resp("*4\r\n$6\r\nstatus\r\n$6\r\nfailed\r\n"
                         "$8\r\nattempts\r\n$1\r\n2\r\n");

    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rr_job_attempts_used(&rec), 2);
    ck_assert(!rec.retry);
    freeReplyObject(r);
    /* a record from before attempts were counted: one */
    r = resp("*4\r\n$6\r\nstatus\r\n$4\r\nlost\r\n$5\r\nretry\r\n$1\r\n1\r\n");
    rr_job_record_parse(&rec, r);
    ck_assert_int_eq(rr_job_attempts_used(&rec), 1);
    ck_assert(rec.retry);
    freeReplyObject(r);
    rr_job_record_parse(&rec, NULL);
    ck_assert_int_eq(rr_job_attempts_used(&rec), 0);
}
END_TEST

START_TEST(test_status_exit)
{
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_NONE, 0, 0), RR_STATUS_NONE);
    ck_assert_int_eq(rr_status_exit_code(true, RR_JOB_NONE, 0, 0), RR_STATUS_HELD);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_SUCCEEDED, 0, 0), RR_STATUS_IDLE);
    ck_assert_int_eq(rr_status_exit_code(true, RR_JOB_RUNNING, 0, 0), RR_STATUS_HELD);
    ck_assert_int_eq(rr_status_exit_code(true, RR_JOB_FAILED, 3, 0), RR_STATUS_HELD);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_FAILED, 0, 0), RR_STATUS_FAILED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_TIMEOUT, 0, 0), RR_STATUS_FAILED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_LOST, 0, 0), RR_STATUS_FAILED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_ABANDONED, 0, 0), RR_STATUS_ABANDONED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_RUNNING, 0, 0), RR_STATUS_ABANDONED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_SUCCEEDED, 1, 0), RR_STATUS_ABANDONED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_FAILED, 2, 0), RR_STATUS_ABANDONED);
    /* A failed --once ID not settled: failed, whatever the last run. */
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_SUCCEEDED, 0, 1), RR_STATUS_FAILED);
    ck_assert_int_eq(rr_status_exit_code(false, RR_JOB_SUCCEEDED, 1, 1), RR_STATUS_ABANDONED);
    ck_assert_int_eq(rr_status_exit_code(true, RR_JOB_SUCCEEDED, 0, 1), RR_STATUS_HELD);
}
END_TEST

static Suite *job_suite(void)
{
    Suite *s = suite_create("job");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_keys);
    tcase_add_test(tc, test_keys_too_long);
    tcase_add_test(tc, test_status_names);
    tcase_add_test(tc, test_record_parse);
    tcase_add_test(tc, test_decide);
    tcase_add_test(tc, test_decide_attempts);
    tcase_add_test(tc, test_attempts_used);
    tcase_add_test(tc, test_status_exit);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "job", job_suite, NULL, NULL };
