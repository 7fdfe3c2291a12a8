/* check_queue.c — the pure parts of fair waiting (src/queue.c) and of
 * --limit parsing (src/cli_check.c). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "unit.h"

START_TEST(test_entry_ttl)
{
    /* Half the lease, 200ms..10s: a dead waiter costs those behind it at
     * most the entry TTL plus one refresh, always less than a lease. */
    ck_assert_int_eq(rr_queue_entry_ttl(30000), 10000);
    ck_assert_int_eq(rr_queue_entry_ttl(3000), 1500);
    ck_assert_int_eq(rr_queue_entry_ttl(100), 200);
    ck_assert_int_eq(rr_queue_entry_ttl(3600000), 10000);
    for (int64_t ttl = 400; ttl < 100000; ttl += 97) {
        int64_t e = rr_queue_entry_ttl(ttl);
        ck_assert_int_lt(e + rr_queue_refresh_ms(e), ttl);
    }
    ck_assert_int_eq(rr_queue_refresh_ms(1500), 500);
    ck_assert_int_eq(rr_queue_refresh_ms(2), 1);
}
END_TEST

START_TEST(test_sleep_queued)
{
    /* Queued and not first: one refresh interval, whatever the holder. */
    ck_assert_int_eq(rr_queue_sleep_ms(3, 50, 1500, 100, 7, 100000), 500);
    ck_assert_int_eq(rr_queue_sleep_ms(3, -1, 1500, 100, 7, 100000), 500);
    /* First in line: no later than the holder's lease end. */
    ck_assert_int_eq(rr_queue_sleep_ms(0, 50, 1500, 100, 7, 100000), 51);
    ck_assert_int_eq(rr_queue_sleep_ms(0, 5000, 1500, 100, 7, 100000), 500);
    ck_assert_int_eq(rr_queue_sleep_ms(0, -1, 1500, 100, 7, 100000), 500);
    /* Never past the deadline, never 0. */
    ck_assert_int_eq(rr_queue_sleep_ms(3, 50, 1500, 100, 7, 20), 20);
    ck_assert_int_eq(rr_queue_sleep_ms(3, 50, 1500, 100, 7, 0), 1);
    ck_assert_int_eq(rr_queue_sleep_ms(3, 50, 1500, 100, 7, -5), 1);
}
END_TEST

START_TEST(test_rank_ttl)
{
    /* The first NEAR live the entry TTL; behind them (rank / NEAR)^2 times
     * as long, at most 100 times: acquire.lua sets the same TTL. */
    ck_assert_int_eq(RR_QUEUE_NEAR, 4);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 0), 2500);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 3), 2500);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 4), 2500);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 5), 3906);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 8), 10000);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 40), 250000);
    ck_assert_int_eq(rr_queue_rank_ttl(2500, 41), 250000);
    ck_assert_int_eq(rr_queue_rank_ttl(10000, 1LL << 40), 1000000);
    for (long long r = 1; r < 5000; r++)
        ck_assert_int_ge(rr_queue_rank_ttl(1500, r), rr_queue_rank_ttl(1500, r - 1));
    /* A waiter far back sleeps a third of its entry's TTL. */
    ck_assert_int_eq(rr_queue_sleep_ms(8, -1, 1500, 100, 7, 100000), 2000);
    ck_assert_int_eq(rr_queue_sleep_ms(999, -1, 1500, 100, 7, 100000), 50000);
    ck_assert_int_eq(rr_queue_sleep_ms(999, -1, 1500, 100, 7, 700), 700);
}
END_TEST

START_TEST(test_sleep_unqueued)
{
    /* Not queued (an error): jittered backoff in [b/2, b]. */
    for (long rnd = -1000; rnd < 1000; rnd += 13) {
        int64_t s = rr_queue_sleep_ms(-1, -1, 1500, 400, rnd, 100000);
        ck_assert_int_ge(s, 200);
        ck_assert_int_le(s, 400);
    }
    ck_assert_int_eq(rr_queue_sleep_ms(-1, 10, 1500, 400, 3, 100000), 11);
    ck_assert_int_ge(rr_queue_sleep_ms(-1, -1, 1500, 0, 3, 100000), 1);
}
END_TEST

START_TEST(test_parse_limit)
{
    static const char *const bad[] = { "0", "-1", "abc", "", "1x", " 3", "+3",
                                       "101", "99999999999999999999", "3.5" };
    char err[256];
    int v = -7;

    ck_assert_int_eq(rr_cli_parse_limit("1", &v, err, sizeof err), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(rr_cli_parse_limit("100", &v, err, sizeof err), 0);
    ck_assert_int_eq(v, 100);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -7;
        err[0] = '\0';
        ck_assert_int_eq(rr_cli_parse_limit(bad[i], &v, err, sizeof err), -1);
        ck_assert_int_eq(v, -7);
        ck_assert_ptr_nonnull(strstr(err, "--limit must be a number of holders from 1 to 100"));
        ck_assert_ptr_null(strchr(err, '\n'));
    }
}
END_TEST

static int parse(const char *const *args, struct rr_config *cfg, char *err, size_t len)
{
    char *argv[16];
    int argc = 0;

    for (; args[argc]; argc++)
        argv[argc] = (char *)args[argc];
    argv[argc] = NULL;
    return rr_cli_parse(argc, argv, cfg, err, len);
}

START_TEST(test_limit_options)
{
    static struct rr_config cfg;
    char err[512];
    const char *ok[] = { "redlock-run", "--limit", "3", "job", "true", NULL };
    const char *dflt[] = { "redlock-run", "job", "true", NULL };
    const char *once[] = { "redlock-run", "--limit", "3", "--once", "x", "job", "true", NULL };
    const char *multi[] = { "redlock-run", "--limit", "2", "-r", "redis://a,redis://b,redis://c",
                            "job", "true", NULL };
    const char *multi1[] = { "redlock-run", "--limit", "1", "-r", "redis://a,redis://b,redis://c",
                             "job", "true", NULL };

    ck_assert_int_eq(parse(dflt, &cfg, err, sizeof err), 0);
    ck_assert_int_eq(cfg.limit, 1);
    ck_assert_int_eq(parse(ok, &cfg, err, sizeof err), 0);
    ck_assert_int_eq(cfg.limit, 3);
    ck_assert_int_eq(parse(once, &cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "--limit cannot be used with --once"));
    ck_assert_int_eq(parse(multi, &cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "needs one lock service"));
    ck_assert_int_eq(parse(multi1, &cfg, err, sizeof err), 0);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("queue");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_entry_ttl);
    tcase_add_test(tc, test_rank_ttl);
    tcase_add_test(tc, test_sleep_queued);
    tcase_add_test(tc, test_sleep_unqueued);
    tcase_add_test(tc, test_parse_limit);
    tcase_add_test(tc, test_limit_options);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "queue", queue_suite, NULL, NULL };
