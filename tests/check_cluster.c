/* check_cluster.c — unit tests for slot.h: CRC16, key slots (against
 * CLUSTER KEYSLOT of redis-server 7.0.15) and MOVED/ASK parsing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slot.h"
#include "unit.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

START_TEST(crc16_check_value)
{
    /* The CRC16/XMODEM check value, and the one Redis' crc16.c documents. */
    ck_assert_uint_eq(rr_crc16("123456789", 9), 0x31C3);
    ck_assert_uint_eq(rr_crc16("", 0), 0);
}
END_TEST

struct ks { const char *key; int slot; };

/* Each answer is redis-cli CLUSTER KEYSLOT KEY on redis-server 7.0.15. */
static const struct ks slots[] = {
    { "foo", 12182 },
    { "bar", 5061 },
    { "123456789", 12739 },
    { "{user1000}.following", 3443 },
    { "redlock:{job}:lock", 2906 },
    { "{job}", 2906 },
    { "job", 2906 },
    { "{}x", 10595 },            /* empty tag: the whole key */
    { "a{}b{c}", 7353 },         /* only the first '{' counts */
    { "{a}{b}", 15495 },
    { "x{y", 2740 },             /* no '}' */
    { "", 0 },
    { "redlock:{nightly-backup}:lock", 3445 },
    { "nightly-backup", 3445 },
};

START_TEST(key_slots)
{
    const struct ks *k = &slots[_i];

    ck_assert_int_eq(rr_key_slot(k->key, strlen(k->key)), k->slot);
}
END_TEST

struct rd { const char *err; int ok; int ask; int slot; const char *host; int port; };

static const struct rd redirects[] = {
    { "MOVED 3999 127.0.0.1:6381", 0, 0, 3999, "127.0.0.1", 6381 },
    { "ASK 3999 127.0.0.1:6381", 0, 1, 3999, "127.0.0.1", 6381 },
    { "MOVED 0 a.example.com:1", 0, 0, 0, "a.example.com", 1 },
    { "MOVED 16383 ::1:7000", 0, 0, 16383, "::1", 7000 },
    { "MOVED 16383 [::1]:7000", 0, 0, 16383, "::1", 7000 },
    { "MOVED 12 :7000", 0, 0, 12, "", 7000 },    /* the node's address unknown */
    { "MOVED 16384 h:1", -1, 0, 0, "", 0 },
    { "MOVED -1 h:1", -1, 0, 0, "", 0 },
    { "MOVED 1 h:0", -1, 0, 0, "", 0 },
    { "MOVED 1 h:65536", -1, 0, 0, "", 0 },
    { "MOVED 1 h", -1, 0, 0, "", 0 },
    { "MOVED 1", -1, 0, 0, "", 0 },
    { "MOVED  h:1", -1, 0, 0, "", 0 },
    { "MOVED 1 h:1x", -1, 0, 0, "", 0 },
    { "MOVED 1 h h:1", -1, 0, 0, "", 0 },
    { "moved 1 h:1", -1, 0, 0, "", 0 },
    { "ASKING", -1, 0, 0, "", 0 },
    { "TRYAGAIN Multiple keys request during rehashing of slot", -1, 0, 0, "", 0 },
    { "CLUSTERDOWN The cluster is down", -1, 0, 0, "", 0 },
};

START_TEST(parse_redirects)
{
    const struct rd *d = &redirects[_i];
    struct rr_redirect r;

    ck_assert_msg(rr_parse_redirect(d->err, strlen(d->err), &r) == d->ok, "%s", d->err);
    if (d->ok != 0)
        return;
    ck_assert_int_eq(r.ask, d->ask);
    ck_assert_int_eq(r.slot, d->slot);
    ck_assert_str_eq(r.host, d->host);
    ck_assert_int_eq(r.port, d->port);
}
END_TEST

START_TEST(long_host)
{
    char err[600];
    struct rr_redirect r;

    memset(err, 'h', sizeof err);
    memcpy(err, "MOVED 1 ", 8);
    memcpy(err + 500, ":80", 4);
    ck_assert_int_eq(rr_parse_redirect(err, strlen(err), &r), -1);
    /* Not NUL-terminated: the length is what counts. */
    ck_assert_int_eq(rr_parse_redirect("MOVED 1 h:12345", 12, &r), 0);
    ck_assert_int_eq(r.port, 12);
}
END_TEST

static Suite *cluster_suite(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("slot");

    tcase_add_test(tc, crc16_check_value);
    tcase_add_loop_test(tc, key_slots, 0, N(slots));
    tcase_add_loop_test(tc, parse_redirects, 0, N(redirects));
    tcase_add_test(tc, long_host);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "cluster", cluster_suite, NULL, NULL };
