/* check_sentinel.c — the pure parts of the Sentinel kind: SENTINEL MASTER's
 * answer, and which sentinel's view wins (the highest config-epoch). */
#include <check.h>
#include <limits.h>
#include <stdlib.h>

#include "sentinel.h"
#include "replies.h"
#include "unit.h"

START_TEST(test_parse_master)
{
    struct rr_sentinel_view v;
    redisReply *r = resp("*10\r\n$4\r\nname\r\n$2\r\nmm\r\n$2\r\nip\r\n$8\r\n10.0.0.5\r\n"
                         "$4\r\nport\r\n$4\r\n6380\r\n$5\r\nflags\r\n$13\r\nmaster,o_down\r\n"
                         "$12\r\nconfig-epoch\r\n$1\r\n7\r\n");

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(rr_sentinel_parse_master(r, &v), 0);
    ck_assert_str_eq(v.host, "10.0.0.5");
    ck_assert_int_eq(v.port, 6380);
    ck_assert_int_eq(v.epoch, 7);
    ck_assert(v.down);
    ck_assert(!v.in_failover);
    freeReplyObject(r);
    r = resp("*6\r\n$2\r\nip\r\n$1\r\nh\r\n$4\r\nport\r\n$1\r\n1\r\n$5\r\nflags\r\n"
             "$42\r\nmaster,failover_in_progress,force_failover\r\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(rr_sentinel_parse_master(r, &v), 0);
    ck_assert(v.in_failover);
    ck_assert(!v.down);
    freeReplyObject(r);
}
END_TEST

START_TEST(test_parse_bad)
{
    struct rr_sentinel_view v;
    static const char *const bad[] = {
        "-ERR No such master with that name\r\n",
        "$-1\r\n",
        "*2\r\n$2\r\nip\r\n$1\r\nh\r\n",                                /* no port */
        "*4\r\n$2\r\nip\r\n$1\r\nh\r\n$4\r\nport\r\n$5\r\n70000\r\n",     /* bad port */
        "*4\r\n$2\r\nip\r\n$1\r\nh\r\n$4\r\nport\r\n$2\r\n1x\r\n",
        "*3\r\n$2\r\nip\r\n$1\r\nh\r\n$4\r\nport\r\n",                    /* odd */
        "*4\r\n$2\r\nip\r\n:1\r\n$4\r\nport\r\n$1\r\n1\r\n",              /* ip not a string */
    };

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        redisReply *r = resp(bad[i]);
        ck_assert_msg(rr_sentinel_parse_master(r, &v) == -1, "case %zu accepted", i);
        if (r)
            freeReplyObject(r);
    }
    ck_assert_int_eq(rr_sentinel_parse_master(NULL, &v), -1);
}
END_TEST

START_TEST(test_pick)
{
    struct rr_sentinel_view v[3] = {
        { "old", 1, 4, false, false }, { "new", 2, 5, false, false }, { "old", 1, 4, false, false },
    };

    ck_assert_int_eq(rr_sentinel_pick(v, 0, NULL), -1);
    ck_assert_int_eq(rr_sentinel_pick(v, 1, NULL), 0);
    /* The leader's newer view wins over a majority of older ones. */
    ck_assert_int_eq(rr_sentinel_pick(v, 3, NULL), 1);
    v[1].epoch = 4;
    ck_assert_int_eq(rr_sentinel_pick(v, 3, NULL), 0);   /* ties: the first */
    v[0].epoch = -1;
    ck_assert_int_eq(rr_sentinel_pick(v, 3, NULL), 1);
}
END_TEST

/* SENTINEL FAILOVER as redis-sentinel 7.0 answers it: the leader names the
 * old master with the new epoch and failover_in_progress until the end,
 * the others the promoted replica with the same epoch. Seen flip-flopping
 * between the two before (issue 18 point 4). */
START_TEST(test_pick_failover)
{
    struct rr_sentinel_view v[3] = {
        { "old", 1, 1, false, true }, { "new", 2, 1, false, false }, { "new", 2, 1, false, false },
    };
    struct rr_sentinel_view demoted = { "old", 1, 1, false, false };
    struct rr_sentinel_view none = { "", 0, 0, false, false };

    ck_assert_int_eq(rr_sentinel_pick(v, 3, NULL), 1);     /* not the leader's old address */
    ck_assert_int_eq(rr_sentinel_pick(v, 1, NULL), 0);     /* the leader alone: its word */
    ck_assert_int_eq(rr_sentinel_pick(v, 1, &none), 0);
    /* Once demoted, an epoch up to the demoting one never names it again... */
    ck_assert_int_eq(rr_sentinel_pick(v, 1, &demoted), -1);
    v[0].in_failover = false;
    v[0].epoch = 0;
    ck_assert_int_eq(rr_sentinel_pick(v, 3, &demoted), 1);
    /* ...a later failover (a newer epoch) may. */
    v[0].epoch = 2;
    ck_assert_int_eq(rr_sentinel_pick(v, 3, &demoted), 0);
    /* Demoted while the new epoch is not known yet: every view of it is skipped. */
    demoted.epoch = LLONG_MAX;
    ck_assert_int_eq(rr_sentinel_pick(v, 3, &demoted), 1);
}
END_TEST

START_TEST(test_sync_need)
{
    ck_assert_int_eq(rr_sentinel_sync_need(0, 2), 0);
    ck_assert_int_eq(rr_sentinel_sync_need(1, 2), 1);
    ck_assert_int_eq(rr_sentinel_sync_need(2, 2), 1);    /* the other replica */
    ck_assert_int_eq(rr_sentinel_sync_need(2, 3), 2);
    ck_assert_int_eq(rr_sentinel_sync_need(3, 3), 2);
    ck_assert_int_eq(rr_sentinel_sync_need(2, 1), 1);    /* never fewer than one */
    ck_assert_int_eq(rr_sentinel_sync_need(2, -1), 1);   /* ROLE not known */
}
END_TEST

static Suite *sentinel_suite(void)
{
    Suite *s = suite_create("sentinel");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_parse_master);
    tcase_add_test(tc, test_parse_bad);
    tcase_add_test(tc, test_pick);
    tcase_add_test(tc, test_pick_failover);
    tcase_add_test(tc, test_sync_need);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "sentinel", sentinel_suite, NULL, NULL };
