/* check_list.c — the pure half of --list: the SCAN pattern, job names from
 * keys, masters from CLUSTER SLOTS, rows from the --status scripts'
 * replies, sorting and the table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "list.h"
#include "record.h"
#include "replies.h"
#include "status.h"
#include "status_impl.h"
#include "unit.h"

START_TEST(test_pattern)
{
    char b[64];

    ck_assert_int_eq(rr_list_pattern("redlock:", b, sizeof b), 0);
    ck_assert_str_eq(b, "redlock:\\{*\\}:state*");
    ck_assert_int_eq(rr_list_pattern("a*[b]?\\:", b, sizeof b), 0);
    ck_assert_str_eq(b, "a\\*\\[b\\]\\?\\\\:\\{*\\}:state*");
    ck_assert_int_eq(rr_list_pattern("0123456789", b, 16), -1);
}
END_TEST

START_TEST(test_name_of)
{
    char n[RR_NAME_MAX + 1];

    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{backup}:state", n, sizeof n), 0);
    ck_assert_str_eq(n, "backup");
    /* a --limit slot's record names the same job */
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{pool}:state:7", n, sizeof n), 0);
    ck_assert_str_eq(n, "pool");
    /* a name with the characters of a glob */
    ck_assert_int_eq(rr_list_name_of("p/", "p/{a*b?}:state", n, sizeof n), 0);
    ck_assert_str_eq(n, "a*b?");
    /* not a job's state record */
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{x}:stateful", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{x}:state:1", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{x}:state:101", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "other:{x}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:x}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{x}:once:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:", n, sizeof n), -1);
    /* Only a NAME the command line takes: a --once record whose ID holds
     * "}:state" is not the job "realjob}:once:x" (issue 30), nor is a name
     * with a control byte or a space somebody wrote into Redis. */
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{realjob}:once:x}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{realjob}:once:x}:state:5", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{a{b}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{ev\x1b]0;T\x07}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_name_of("redlock:", "redlock:{a b}:state", n, sizeof n), -1);
}
END_TEST

START_TEST(test_masters)
{
    /* three ranges, two masters (one twice), the second with no host */
    redisReply *r = resp("*3\r\n"
                         "*4\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:7001\r\n$2\r\nid\r\n"
                         "*3\r\n$9\r\n127.0.0.1\r\n:7004\r\n$2\r\nr1\r\n"
                         "*3\r\n:5461\r\n:10922\r\n*3\r\n$0\r\n\r\n:7002\r\n$2\r\nid\r\n"
                         "*3\r\n:10923\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:7001\r\n$2\r\nid\r\n");
    struct rr_node m[4];

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(rr_list_masters(r, "seed.example", m, 4), 2);
    ck_assert_str_eq(m[0].host, "127.0.0.1");
    ck_assert_int_eq(m[0].port, 7001);
    ck_assert_str_eq(m[1].host, "seed.example");
    ck_assert_int_eq(m[1].port, 7002);
    ck_assert_int_eq(rr_list_masters(r, "s", m, 1), 2);   /* more than 1 */
    freeReplyObject(r);
    r = resp("$2\r\nOK\r\n");
    ck_assert_int_eq(rr_list_masters(r, "s", m, 4), -1);
    freeReplyObject(r);
    r = resp("*1\r\n*2\r\n:0\r\n:1\r\n");
    ck_assert_int_eq(rr_list_masters(r, "s", m, 4), -1);
    freeReplyObject(r);
}
END_TEST

#define STATE_OK "*10\r\n$6\r\nstatus\r\n$9\r\nsucceeded\r\n$4\r\nhost\r\n$3\r\nweb\r\n" \
                 "$3\r\npid\r\n$2\r\n42\r\n$15\r\nlast_success_ms\r\n$13\r\n1700000000000\r\n" \
                 "$9\r\nexit_code\r\n$1\r\n0\r\n"
#define NO_HOLDER "*3\r\n*0\r\n*0\r\n:2592000000\r\n"

START_TEST(test_row_free)
{
    struct rr_list_row row = { .name = "backup" };
    redisReply *q = resp(NO_HOLDER), *r = resp(STATE_OK);

    ck_assert_int_eq(rr_list_row_holders(&row, q), 0);
    ck_assert(!row.held);
    ck_assert_int_eq(row.slots_held, 0);
    ck_assert_int_eq(rr_list_row_state(&row, r), 0);
    ck_assert(row.read && !row.held);
    ck_assert_int_eq(row.last.status, RR_JOB_SUCCEEDED);
    ck_assert_int_eq(row.last.last_success_ms, 1700000000000LL);
    ck_assert_int_eq(row.status_code, RR_STATUS_IDLE);
    ck_assert_ptr_nonnull(strstr(row.last_json, "\"status\":\"succeeded\""));
    ck_assert_ptr_nonnull(strstr(row.last_json, "\"pid\":42"));
    freeReplyObject(q);
    freeReplyObject(r);
    free(row.last_json);
}
END_TEST

START_TEST(test_row_held_and_abandoned)
{
    struct rr_list_row row = { .name = "sync" };
    redisReply *q = resp("*3\r\n*1\r\n*5\r\n:1\r\n:9000\r\n$2\r\ndb\r\n$2\r\n99\r\n$1\r\n7\r\n*0\r\n:-1\r\n");
    redisReply *r = resp("*8\r\n$6\r\nstatus\r\n$7\r\nrunning\r\n"
                         "$4\r\nhost\r\n$2\r\ndb\r\n$5\r\nfence\r\n$1\r\n7\r\n"
                         "$10\r\nstarted_ms\r\n$4\r\n1234\r\n");

    ck_assert_int_eq(rr_list_row_holders(&row, q), 0);
    ck_assert_int_eq(rr_list_row_state(&row, r), 0);
    ck_assert(row.held && row.holder_known);
    ck_assert_str_eq(row.holder_host, "db");
    ck_assert_int_eq(row.holder_pid, 99);
    ck_assert_int_eq(row.holder_fence, 7);
    ck_assert_int_eq(row.holder_since_ms, 1234);
    ck_assert_int_eq(row.ttl_ms, 9000);
    ck_assert_int_eq(row.keys_ttl_ms, -1);   /* a key with no expiry */
    ck_assert_int_eq(row.status_code, RR_STATUS_HELD);
    ck_assert_int_eq(row.last.status, RR_JOB_RUNNING);
    freeReplyObject(q);
    free(row.last_json);
    /* the same record with no lock: its holder died */
    memset(&row, 0, sizeof row);
    q = resp(NO_HOLDER);
    ck_assert_int_eq(rr_list_row_holders(&row, q), 0);
    ck_assert_int_eq(rr_list_row_state(&row, r), 0);
    ck_assert(!row.held);
    ck_assert_int_eq(row.last.status, RR_JOB_ABANDONED);
    ck_assert_int_eq(row.status_code, RR_STATUS_ABANDONED);
    ck_assert_ptr_nonnull(strstr(row.last_json, "\"status\":\"abandoned\""));
    freeReplyObject(q);
    freeReplyObject(r);
    free(row.last_json);
    /* answers of another shape */
    r = resp("$2\r\nOK\r\n");
    ck_assert_int_eq(rr_list_row_holders(&row, r), -1);
    ck_assert_str_ne(row.err, "");
    row.err[0] = '\0';
    ck_assert_int_eq(rr_list_row_state(&row, r), -1);
    ck_assert_str_ne(row.err, "");
    freeReplyObject(r);
    r = resp("*3\r\n*1\r\n*2\r\n:1\r\n:2\r\n*0\r\n:5\r\n");
    ck_assert_int_eq(rr_list_row_holders(&row, r), -1);
    freeReplyObject(r);
}
END_TEST

START_TEST(test_row_limit)
{
    struct rr_list_row row = { .name = "pool" };
    /* slots 2 and 3 are held, slot 1 is free, and no run recorded in slot 1 */
    redisReply *q = resp("*3\r\n*2\r\n*5\r\n:2\r\n:800\r\n$1\r\na\r\n$2\r\n11\r\n$1\r\n5\r\n"
                         "*5\r\n:3\r\n:900\r\n$1\r\nb\r\n$2\r\n12\r\n$1\r\n6\r\n*0\r\n:1000\r\n");
    redisReply *r = resp("*0\r\n");

    ck_assert_int_eq(rr_list_row_holders(&row, q), 0);
    ck_assert_int_eq(rr_list_row_state(&row, r), 0);
    ck_assert_int_eq(row.last.status, RR_JOB_NONE);
    ck_assert_ptr_null(row.last_json);
    ck_assert(row.held && row.holder_known);
    ck_assert_int_eq(row.slots_held, 2);
    ck_assert_int_eq(row.holder_slot, 2);
    ck_assert_str_eq(row.holder_host, "a");
    ck_assert_int_eq(row.holder_pid, 11);
    ck_assert_int_eq(row.holder_since_ms, 0);
    ck_assert_int_eq(row.status_code, RR_STATUS_HELD);
    freeReplyObject(q);
    freeReplyObject(r);
}
END_TEST

static char *capture(void (*fn)(FILE *, const struct rr_list_row *, size_t),
                     const struct rr_list_row *rows, size_t n)
{
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);

    fn(f, rows, n);
    fclose(f);
    return buf;
}

START_TEST(test_sort_and_table)
{
    struct rr_list_row rows[4] = { { .name = "zeta", .read = true }, { .name = "alpha", .read = true },
                                   { .name = "zeta", .read = true, .master = 1 },
                                   { .name = "mid", .err = "timeout" } };
    rows[1].held = true;
    rows[1].slots_held = 1;
    rows[1].holder_known = true;
    snprintf(rows[1].holder_host, sizeof rows[1].holder_host, "host-with-a-long-name");
    rows[1].holder_pid = 7;
    rows[1].last.status = RR_JOB_RUNNING;
    rows[0].last.status = RR_JOB_FAILED;
    rows[0].last.exit_code = 3;
    rows[0].last.signal = -1;
    rows[1].last.exit_code = rows[1].last.signal = -1;

    ck_assert_int_eq(rr_list_sort(rows, 4), 3);
    ck_assert_str_eq(rows[0].name, "alpha");
    ck_assert_str_eq(rows[1].name, "mid");
    ck_assert_str_eq(rows[2].name, "zeta");
    ck_assert_int_eq(rows[2].master, 0);
    char *t = capture(rr_list_print_text, rows, 3);
    /* a header and three lines, the columns aligned: LOCK starts at the
     * same offset on each line, no line ends in a blank */
    char *line[4], *save = NULL, *p = t;
    for (int i = 0; i < 4; i++, p = NULL)
        ck_assert_ptr_nonnull(line[i] = strtok_r(p, "\n", &save));
    ck_assert_ptr_null(strtok_r(NULL, "\n", &save));
    ck_assert_int_eq(strstr(line[0], "LOCK") - line[0], strstr(line[1], "held") - line[1]);
    ck_assert_int_eq(strstr(line[0], "LOCK") - line[0], strstr(line[3], "free") - line[3]);
    ck_assert_int_eq(strstr(line[0], "LAST RUN") - line[0], strstr(line[3], "failed") - line[3]);
    ck_assert_ptr_nonnull(strstr(line[1], "host-with-a-long-name pid 7"));
    ck_assert_ptr_nonnull(strstr(line[2], "not read: timeout"));
    for (int i = 0; i < 4; i++)
        ck_assert(line[i][strlen(line[i]) - 1] != ' ');
    free(t);
    char *j = capture(rr_list_print_json, rows, 3);
    ck_assert_ptr_nonnull(strstr(j, "{\"name\":\"alpha\",\"status_code\":0,\"never_ran\":false,"
                                    "\"lock\":{\"held\":true,\"slots_held\":1,\"host\":"
                                    "\"host-with-a-long-name\",\"pid\":7"));
    ck_assert_ptr_nonnull(strstr(j, "{\"name\":\"mid\",\"error\":\"timeout\"}\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"last_run\":null"));
    free(j);
}
END_TEST

/* RESP for a flat array of the NULL-terminated strings kv. */
static redisReply *flat_reply(const char *const *kv)
{
    char buf[4096];
    size_t n = 0, o;

    while (kv[n])
        n++;
    o = (size_t)snprintf(buf, sizeof buf, "*%zu\r\n", n);
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "$%zu\r\n%s\r\n", strlen(kv[i]), kv[i]);
    return resp_n(buf, o);
}

/* Records another tenant wrote (issue 30): nothing of them reaches the
 * terminal raw, and JSON keeps its types. */
START_TEST(test_hostile_row)
{
    struct rr_list_row row = { .name = "evil" };
    static const char holders[] =
        "*3\r\n*1\r\n*5\r\n:1\r\n:9000\r\n$14\r\nh\x1b]52;c;SGk=\x07\n\r\n"
        "$8\r\n7,\"f\":1}\r\n$1\r\n3\r\n*0\r\n:1000\r\n";
    static const char *const state[] = {
        "status", "failed", "host", "web-1\x1b[31m\x1b]0;T\x07", "pid", "7,\"fence\":1}",
        "fence", "+inf", "exit_code", "1", "started_ms", "1700000000000",
        "last_success_ms", "1700000000000", "last_success_host", "ok\nREDLOCK OK\xc2\x9b",
        "once", "id\x1b[2J", NULL,
    };
    redisReply *q = resp(holders), *r = flat_reply(state);

    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(rr_list_row_holders(&row, q), 0);
    ck_assert_int_eq(rr_list_row_state(&row, r), 0);
    row.status_code = 1;
    char *t = capture(rr_list_print_text, &row, 1);
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        ck_assert_msg(*p >= 0x20 || *p == '\n', "byte 0x%02x in %s", *p, t);
    ck_assert_ptr_nonnull(strstr(t, "h\\x1b]52;c;SGk=\\x07\\n pid ?"));
    ck_assert_ptr_nonnull(strstr(t, "ok\\nREDLOCK OK\\u009b"));
    ck_assert_ptr_nonnull(strstr(t, "--once id\\x1b[2J"));
    ck_assert_ptr_null(strstr(t, "\xc2\x9b"));
    /* a header and one line */
    int lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 2);
    free(t);
    char *j = capture(rr_list_print_json, &row, 1);
    ck_assert_ptr_nonnull(strstr(j, "\"pid\":null,\"fence\":null,"));
    ck_assert_ptr_nonnull(strstr(j, "\"pid\":null,\"fence\":3,\"ttl_ms\":9000"));
    ck_assert_ptr_null(strstr(j, "inf"));
    ck_assert_ptr_null(strstr(j, "\x1b"));
    ck_assert_ptr_nonnull(strstr(j, "\"host\":\"web-1\\u001b[31m\\u001b]0;T\\u0007\""));
    free(j);
    freeReplyObject(q);
    freeReplyObject(r);
    free(row.last_json);
}
END_TEST

/* Issue 34, 1: --list counts a job's unsettled --once records as --status
 * NAME does: status_code 3 for an abandoned one (or one left running with
 * no lock held), and the NOTE and JSON name one of them. */
START_TEST(test_row_once)
{
    struct rr_list_row rows[2] = { { .name = "a" }, { .name = "settle" } };
    struct rr_list_row *row = &rows[1];
    redisReply *q = resp(NO_HOLDER), *r = resp(STATE_OK);
    char n[RR_NAME_MAX + 1], b[64];
    char *out = NULL;
    size_t len;

    ck_assert_int_eq(rr_list_once_pattern("redlock:", b, sizeof b), 0);
    ck_assert_str_eq(b, "redlock:\\{*\\}:once:*");
    ck_assert_int_eq(rr_list_once_name_of("redlock:", "redlock:{settle}:once:d1", n, sizeof n), 0);
    ck_assert_str_eq(n, "settle");
    ck_assert_int_eq(rr_list_once_name_of("redlock:", "redlock:{settle}:state", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_once_name_of("redlock:", "other:{settle}:once:d1", n, sizeof n), -1);
    ck_assert_int_eq(rr_list_once_name_of("redlock:", "redlock:{a b}:once:d1", n, sizeof n), -1);
    ck_assert_ptr_eq(rr_list_find(rows, 2, "settle"), row);
    ck_assert_ptr_null(rr_list_find(rows, 2, "setle"));

    rr_list_row_once(row, "d0", "succeeded");
    rr_list_row_once(row, "d2", "running");
    rr_list_row_once(row, "d1", "abandoned");
    rr_list_row_once(row, "d3", "failed");
    ck_assert_int_eq(rr_list_row_holders(row, q), 0);
    ck_assert_int_eq(rr_list_row_state(row, r), 0);
    ck_assert_int_eq(row->status_code, RR_STATUS_ABANDONED);
    ck_assert_int_eq(row->n_unsettled, 3);
    ck_assert_str_eq(row->unsettled_id, "d1");   /* a settled-whatever-the-lock one first */
    FILE *f = open_memstream(&out, &len);
    rr_list_print_json(f, row, 1);
    rr_list_print_text(f, row, 1);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(out, "\"unsettled_once\":3,\"unsettled_once_first\":"
                                      "{\"id\":\"d1\",\"status\":\"abandoned\"}"));
    ck_assert_ptr_nonnull(strstr(out, "not settled: --once d1 abandoned (+2 more)"));
    /* when the keys expire: 30 days from the reading */
    ck_assert_ptr_nonnull(strstr(out, ",\"keys_ttl_ms\":2592000000"));
    ck_assert_ptr_nonnull(strstr(out, "KEYS END"));
    ck_assert_ptr_nonnull(strstr(out, "  in 30d  "));
    free(out);
    free(row->last_json);

    /* Only a running one: unsettled (abandoned) with no lock held, not while held. */
    struct rr_list_row one = { .name = "x" };
    rr_list_row_once(&one, "d9", "running");
    ck_assert_int_eq(rr_list_row_holders(&one, q), 0);
    ck_assert_int_eq(rr_list_row_state(&one, r), 0);
    ck_assert_int_eq(one.status_code, RR_STATUS_ABANDONED);
    ck_assert_str_eq(one.unsettled_status, "abandoned");
    free(one.last_json);
    /* Only a failed one: --status NAME exits 2, as for a failed last run. */
    struct rr_list_row two = { .name = "y" };
    rr_list_row_once(&two, "d8", "failed");
    ck_assert_int_eq(rr_list_row_holders(&two, q), 0);
    ck_assert_int_eq(rr_list_row_state(&two, r), 0);
    ck_assert_int_eq(two.status_code, RR_STATUS_FAILED);
    ck_assert_int_eq(two.n_unsettled, 1);
    free(two.last_json);
    freeReplyObject(q);
    freeReplyObject(r);
}
END_TEST

/* KEYS END and --status's line: rounded down to what a reader needs. */
START_TEST(test_keys_end)
{
    char b[64];

    rr_record_keys_end(2592029657LL, b, sizeof b);   /* 30 d + 29.657 s */
    ck_assert_str_eq(b, "in 30d");
    rr_record_keys_end(7530999, b, sizeof b);        /* 2 h 5 m 30.999 s */
    ck_assert_str_eq(b, "in 2h5m");
    rr_record_keys_end(40500, b, sizeof b);
    ck_assert_str_eq(b, "in 40s");
    rr_record_keys_end(250, b, sizeof b);
    ck_assert_str_eq(b, "in 250ms");
    rr_record_keys_end(0, b, sizeof b);
    ck_assert_str_eq(b, "in 0s");
    rr_record_keys_end(-1, b, sizeof b);
    ck_assert_str_eq(b, "never");
}
END_TEST

/* --status's settle lines: three commands to paste, the ID from Redis made
 * safe for the terminal first, then quoted for the shell. */
START_TEST(test_settle_lines)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    rr_status_text_settle(f, "d$2 '\x1b[31m", "job", " -r redis://h:1");
    rr_status_text_settle(f, NULL, "job", "");
    fclose(f);
    ck_assert_ptr_null(strchr(out, '\x1b'));
    ck_assert_ptr_null(strchr(out, '#'));   /* no comment after a command */
    ck_assert_ptr_nonnull(strstr(out, "settle it with one of these"));
    ck_assert_ptr_nonnull(strstr(out, " - it did its work: never run it again:\n"));
    ck_assert_ptr_nonnull(strstr(out, "     redlock-run -r redis://h:1 --resolve succeeded --once "
                                      "'d$2 '\\''\\x1b[31m' job\n"));
    ck_assert_ptr_nonnull(strstr(out, "settle each with one of these"));
    ck_assert_ptr_nonnull(strstr(out, "     redlock-run --resolve retry --once ID job\n"));
    free(out);
}
END_TEST

static Suite *list_suite(void)
{
    Suite *s = suite_create("list");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_pattern);
    tcase_add_test(tc, test_name_of);
    tcase_add_test(tc, test_masters);
    tcase_add_test(tc, test_row_free);
    tcase_add_test(tc, test_row_held_and_abandoned);
    tcase_add_test(tc, test_row_limit);
    tcase_add_test(tc, test_sort_and_table);
    tcase_add_test(tc, test_hostile_row);
    tcase_add_test(tc, test_row_once);
    tcase_add_test(tc, test_keys_end);
    tcase_add_test(tc, test_settle_lines);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "list", list_suite, NULL, NULL };
