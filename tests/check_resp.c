/* check_resp.c — the pure RESP layer (resp.c), no server: encoding, the
 * classification of replies and pushes, and the capped reader. */
#include <stdbool.h>
#include <stdio.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"
#include "unit.h"

#define COST (sizeof(redisReply *) + sizeof(redisReply))

static struct rr_resp_reader *rd;

static void setup(void)
{
    rd = rr_resp_reader_new();
    ck_assert_ptr_nonnull(rd);
}

static void teardown(void)
{
    rr_resp_reader_free(rd);
    rd = NULL;
}

static void feed(const char *data, size_t len)
{
    ck_assert_int_eq(rr_resp_feed(rd, data, len), RR_RESP_OK);
}

static void feeds(const char *s)
{
    feed(s, strlen(s));
}

/* Feed s in pieces of step bytes. */
static void feed_by(const char *s, size_t len, size_t step)
{
    size_t off;

    for (off = 0; off < len; off += step)
        feed(s + off, len - off < step ? len - off : step);
}

/* The next reply, which must be there. */
static redisReply *next(void)
{
    redisReply *r = NULL;
    int rc = rr_resp_get(rd, &r);

    ck_assert_msg(rc == 1, "rr_resp_get: %d (%s)", rc, rr_resp_errstr(rd));
    ck_assert_ptr_nonnull(r);
    return r;
}

static void expect_status(int want)
{
    redisReply *r = NULL;

    ck_assert_int_eq(rr_resp_get(rd, &r), want);
    ck_assert_ptr_null(r);
}

static void expect_none(void)
{
    expect_status(0);
}

/* ---- encoding ----------------------------------------------------------- */

START_TEST(test_format)
{
    const char *argv[] = { "SET", "k", "v\0w" };
    const size_t argvlen[] = { 3, 1, 3 };
    char *out = NULL;
    size_t len = 0;

    ck_assert_int_eq(rr_resp_format(&out, &len, 3, argv, argvlen), RR_RESP_OK);
    ck_assert_uint_eq(len, 29);
    ck_assert_int_eq(memcmp(out, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\0w\r\n", len), 0);
    free(out);
    ck_assert_int_eq(rr_resp_format(&out, &len, 2, argv, NULL), RR_RESP_OK);
    ck_assert_uint_eq(len, strlen("*2\r\n$3\r\nSET\r\n$1\r\nk\r\n"));
    ck_assert_int_eq(memcmp(out, "*2\r\n$3\r\nSET\r\n$1\r\nk\r\n", len), 0);
    free(out);
}
END_TEST

START_TEST(test_confirm_count)
{
    const char *sub[] = { "SUBSCRIBE", "a", "b", "c" };
    const char *ssub[] = { "sSubscribe", "x" };
    const char *sunsub[] = { "SUNSUBSCRIBE", "x", "y" };
    const char *get[] = { "GET", "a", "b" };
    const char *bare[] = { "UNSUBSCRIBE" };
    const char *prefix[] = { "SUBSCRIBEX", "a", "b" };
    const size_t prefixlen[] = { 9, 1, 1 };   /* "SUBSCRIBE" by length */

    ck_assert_int_eq(rr_resp_confirm_count(4, sub, NULL), 3);
    ck_assert_int_eq(rr_resp_confirm_count(2, ssub, NULL), 1);
    ck_assert_int_eq(rr_resp_confirm_count(3, sunsub, NULL), 2);
    ck_assert_int_eq(rr_resp_confirm_count(3, get, NULL), 1);
    ck_assert_int_eq(rr_resp_confirm_count(1, bare, NULL), 1);
    ck_assert_int_eq(rr_resp_confirm_count(3, prefix, NULL), 1);
    ck_assert_int_eq(rr_resp_confirm_count(3, prefix, prefixlen), 2);
    ck_assert(rr_resp_is_command(sunsub, NULL, "sunsubscribe"));
    ck_assert(!rr_resp_is_command(ssub, NULL, "sunsubscribe"));
    ck_assert(!rr_resp_is_command(prefix, NULL, "subscribe"));
    ck_assert(rr_resp_is_command(prefix, prefixlen, "subscribe"));
}
END_TEST

/* ---- classification ----------------------------------------------------- */

START_TEST(test_classify)
{
    static const struct {
        const char *wire;
        bool push, confirm, unasked;
    } cases[] = {
        { "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n", true, false, false },
        { "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\nx\r\n", true, false, false },
        { "*3\r\n$8\r\nSMESSAGE\r\n$2\r\nch\r\n$1\r\nx\r\n", true, false, false },
        { "*2\r\n$7\r\nmessage\r\n$2\r\nch\r\n", false, false, false },
        { "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", false, true, false },
        { "*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:1\r\n", false, true, false },
        { "*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n", false, true, false },
        { "*3\r\n$12\r\npunsubscribe\r\n$2\r\nc*\r\n:0\r\n", false, true, false },
        { "*3\r\n$10\r\nssubscribe\r\n$2\r\nch\r\n:1\r\n", false, true, false },
        { "*3\r\n$12\r\nsunsubscribe\r\n$2\r\nch\r\n:0\r\n", false, true, true },
        { "*3\r\n+sunsubscribe\r\n$2\r\nch\r\n:0\r\n", false, true, true },
        { "*4\r\n$12\r\nsunsubscribe\r\n$2\r\nch\r\n:0\r\n:0\r\n", false, false, false },
        { "*3\r\n:1\r\n:2\r\n:3\r\n", false, false, false },
        { "$7\r\nmessage\r\n", false, false, false },
        { "+OK\r\n", false, false, false },
        { "-ERR no\r\n", false, false, false },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        redisReply *r;
        feeds(cases[i].wire);
        r = next();
        ck_assert_msg(rr_resp_is_push(r) == cases[i].push, "case %zu: push", i);
        ck_assert_msg(rr_resp_is_confirm(r) == cases[i].confirm, "case %zu: confirm", i);
        ck_assert_msg(rr_resp_ended_unasked(r, false) == cases[i].unasked, "case %zu", i);
        /* Our own SUNSUBSCRIBE's confirmation is a reply, never unasked. */
        ck_assert(!rr_resp_ended_unasked(r, true));
        freeReplyObject(r);
    }
    expect_none();
}
END_TEST

/* ---- the reader --------------------------------------------------------- */

/* Every kind of item, split at every byte: the framer stays in step with
 * hiredis, and each reply has its own account. */
START_TEST(test_reader_in_step)
{
    static const char wire[] =
        "+OK\r\n-ERR x\r\n:42\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n+a b\r\n"
        "*2\r\n*2\r\n:1\r\n$3\r\nabc\r\n*1\r\n$-1\r\n$5\r\nhe\r\nl\r\n";
    static const struct { int type; long long size; } simple[] = {
        { REDIS_REPLY_STATUS, 2 }, { REDIS_REPLY_ERROR, 5 }, { REDIS_REPLY_INTEGER, 42 },
        { REDIS_REPLY_NIL, 0 }, { REDIS_REPLY_NIL, 0 }, { REDIS_REPLY_ARRAY, 0 },
        { REDIS_REPLY_STRING, 0 },
    };
    redisReply *r;
    size_t step, i;

    for (step = 1; step <= 7; step++) {
        feed_by(wire, sizeof wire - 1, step);
        for (i = 0; i < sizeof simple / sizeof simple[0]; i++) {
            r = next();
            ck_assert_int_eq(r->type, simple[i].type);
            ck_assert_int_eq(r->type == REDIS_REPLY_INTEGER ? r->integer
                             : r->type == REDIS_REPLY_ARRAY ? (long long)r->elements
                                                            : (long long)r->len, simple[i].size);
            freeReplyObject(r);
        }
        r = next();
        ck_assert_int_eq(r->type, REDIS_REPLY_STATUS);
        ck_assert_str_eq(r->str, "a b");
        freeReplyObject(r);
        r = next();
        ck_assert_int_eq(r->type, REDIS_REPLY_ARRAY);
        ck_assert_uint_eq(r->elements, 2);
        ck_assert_str_eq(r->element[0]->element[1]->str, "abc");
        ck_assert_int_eq(r->element[1]->element[0]->type, REDIS_REPLY_NIL);
        freeReplyObject(r);
        r = next();
        ck_assert_uint_eq(r->len, 5);
        ck_assert_int_eq(memcmp(r->str, "he\r\nl", 5), 0);
        freeReplyObject(r);
        expect_none();
    }
}
END_TEST

/* A lone CR inside a status line, which Redis never sends: hiredis 0.14
 * keeps it in the string, 1.x refuses the stream; the reader gives that
 * answer whatever the chunks. */
START_TEST(test_reader_lone_cr)
{
    static const char wire[] = "+a\rb\r\n:7\r\n";
    redisReply *r = NULL;
    size_t step;

    for (step = 1; step <= 4; step++) {
        teardown();
        setup();
        feed_by(wire, sizeof wire - 1, step);
#if HIREDIS_MAJOR >= 1
        ck_assert_int_eq(rr_resp_get(rd, &r), RR_RESP_PROTO);
        ck_assert_ptr_null(r);
#else
        r = next();
        ck_assert_int_eq(r->type, REDIS_REPLY_STATUS);
        ck_assert_str_eq(r->str, "a\rb");
        freeReplyObject(r);
        r = next();
        ck_assert_int_eq(r->integer, 7);
        freeReplyObject(r);
        expect_none();
#endif
    }
}
END_TEST

/* The cap is per reply: many replies just below it pass one after the
 * other, whatever the chunks. */
START_TEST(test_reader_below_cap)
{
    size_t n = RR_RESP_CAP - 64, hlen, i;
    char *buf = malloc(n + 32);
    redisReply *r;

    ck_assert_ptr_nonnull(buf);
    hlen = (size_t)sprintf(buf, "$%zu\r\n", n);
    memset(buf + hlen, 'b', n);
    memcpy(buf + hlen + n, "\r\n", 2);
    for (i = 0; i < 3; i++) {
        feed_by(buf, hlen + n + 2, 16384 + i);
        r = next();
        ck_assert_uint_eq(r->len, n);
        freeReplyObject(r);
    }
    expect_none();
    free(buf);
}
END_TEST

/* The limits: a bulk string of exactly the cap is announced fine, one byte
 * more is not; the same for an array's elements. */
START_TEST(test_reader_cap_edges)
{
    const size_t most = RR_RESP_CAP / COST - 1;   /* elements, with the array's own */
    const struct { char type; size_t n; int want; } cases[] = {
        { '$', RR_RESP_CAP, 0 }, { '$', RR_RESP_CAP + 1, RR_RESP_TOO_LARGE },
        { '*', most, 0 }, { '*', most + 1, RR_RESP_TOO_LARGE },
    };
    char hdr[64];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        teardown();
        setup();
        snprintf(hdr, sizeof hdr, "%c%zu\r\n", cases[i].type, cases[i].n);
        feeds(hdr);
        expect_status(cases[i].want);
    }
}
END_TEST

/* What a hostile peer sends (t_hostile.sh, check_conn's test): the replies
 * complete before it still come out, then the cap. */
START_TEST(test_reader_too_large)
{
    static const char *const heads[] = {
        "$4000000000\r\n",
        "*2000000000\r\n",
        "*2\r\n:1\r\n*1\r\n*2000000000\r\n",
    };
    static char line[(1 << 20) + 65536];
    redisReply *r;
    size_t i;

    for (i = 0; i < sizeof heads / sizeof heads[0] + 1; i++) {
        teardown();
        setup();
        feeds("+OK\r\n");
        if (i < sizeof heads / sizeof heads[0]) {
            feeds(heads[i]);
        } else {
            memset(line, 'x', sizeof line);
            line[0] = '+';
            feed_by(line, sizeof line, 16384);
        }
        feeds("+after\r\n");        /* never reaches hiredis */
        r = next();
        ck_assert_str_eq(r->str, "OK");
        freeReplyObject(r);
        expect_status(RR_RESP_TOO_LARGE);
    }
}
END_TEST

/* A stream hiredis rejects is a protocol error with hiredis's words, also
 * for lengths the framer leaves to hiredis. */
START_TEST(test_reader_protocol_error)
{
    static const char *const bad[] = {
        "HTTP/1.1 400 Bad\r\n",
        "*3000000000\r\n",
        "$-2\r\n",
        "$12x\r\n",
        "\x16\x03\x01",
    };
    size_t i;

    ck_assert_str_eq(rr_resp_errstr(rd), "");
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        teardown();
        setup();
        feeds(bad[i]);
        expect_status(RR_RESP_PROTO);
        ck_assert_msg(rr_resp_errstr(rd)[0] != '\0', "case %zu", i);
    }
}
END_TEST

static Suite *resp_suite(void)
{
    Suite *s = suite_create("resp");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_format);
    tcase_add_test(tc, test_confirm_count);
    tcase_add_test(tc, test_classify);
    tcase_add_test(tc, test_reader_in_step);
    tcase_add_test(tc, test_reader_lone_cr);
    tcase_add_test(tc, test_reader_below_cap);
    tcase_add_test(tc, test_reader_cap_edges);
    tcase_add_test(tc, test_reader_too_large);
    tcase_add_test(tc, test_reader_protocol_error);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "resp", resp_suite, NULL, NULL };
