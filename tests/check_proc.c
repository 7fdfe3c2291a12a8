/* check_proc.c — the /proc reader: its parsers on texts, and its reads of
 * this very process. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "unit.h"

#define S(x) x, sizeof(x) - 1

START_TEST(test_parse_stat)
{
    struct rr_proc_stat st;
    static const char line[] =
        "4242 (sleep) S 4200 4242 4200 0 -1 4194304 91 0 0 0 0 0 0 0 20 0 3 0 "
        "987654321 2252800 129 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";

    ck_assert_int_eq(rr_proc_parse_stat(S(line), &st), 0);
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.ppid, 4200);
    ck_assert_int_eq(st.threads, 3);
    ck_assert(st.start == 987654321ULL);
}
END_TEST

START_TEST(test_parse_stat_hostile_comm)
{
    struct rr_proc_stat st;
    /* A name with ") R 1 " in it: only the last ')' ends it. */
    static const char line[] =
        "77 (x) R 1 (y) Z 9 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5555 0 0\n";

    ck_assert_int_eq(rr_proc_parse_stat(S(line), &st), 0);
    ck_assert_int_eq(st.state, 'Z');
    ck_assert_int_eq(st.ppid, 9);
    ck_assert_int_eq(st.threads, 1);
    ck_assert(st.start == 5555ULL);
}
END_TEST

START_TEST(test_parse_stat_bad)
{
    struct rr_proc_stat st;

    ck_assert_int_eq(rr_proc_parse_stat("", 0, &st), -1);
    ck_assert_int_eq(rr_proc_parse_stat(S("12 (sh S 1 2 3"), &st), -1);
    /* cut before the start time */
    ck_assert_int_eq(rr_proc_parse_stat(S("12 (sh) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0"), &st), -1);
    /* a state of two letters, a parent that is no number */
    ck_assert_int_eq(rr_proc_parse_stat(
        S("12 (sh) SS 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n"), &st), -1);
    ck_assert_int_eq(rr_proc_parse_stat(
        S("12 (sh) S x 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n"), &st), -1);
    /* len is respected: the same line cut in the middle of the start time
     * gives a different one, cut before it none */
    static const char line[] = "12 (sh) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 98765 0\n";
    ck_assert_int_eq(rr_proc_parse_stat(line, sizeof line - 6, &st), 0);
    ck_assert(st.start == 987ULL);
    ck_assert_int_eq(rr_proc_parse_stat(line, sizeof line - 9, &st), -1);
}
END_TEST

START_TEST(test_parse_stat_self)
{
    char buf[1024];
    struct rr_proc_stat st;
    int fd = open("/proc/self/stat", O_RDONLY);

    ck_assert_int_ge(fd, 0);
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(rr_proc_parse_stat(buf, (size_t)n, &st), 0);
    ck_assert_int_eq(st.ppid, getppid());
    ck_assert_int_ge(st.threads, 1);
    ck_assert(st.start > 0);
}
END_TEST

START_TEST(test_parse_pids)
{
    pid_t out[4];

    ck_assert_int_eq(rr_proc_parse_pids("", 0, out, 4), 0);
    ck_assert_int_eq(rr_proc_parse_pids("12 345 ", 7, out, 4), 2);
    ck_assert_int_eq(out[0], 12);
    ck_assert_int_eq(out[1], 345);
    /* no trailing space, a cut at len, and at most max */
    ck_assert_int_eq(rr_proc_parse_pids("7 8 9 10 11", 11, out, 4), 4);
    ck_assert_int_eq(out[3], 10);
    ck_assert_int_eq(rr_proc_parse_pids("123456", 3, out, 4), 1);
    ck_assert_int_eq(out[0], 123);
    /* zero, garbage and absurd numbers are never pids */
    ck_assert_int_eq(rr_proc_parse_pids("0 x 99999999999 5", 17, out, 4), 1);
    ck_assert_int_eq(out[0], 5);
}
END_TEST

START_TEST(test_children_of_self)
{
    pid_t out[8];
    pid_t p = fork();

    if (p == 0) {
        pause();
        _exit(0);
    }
    ck_assert_int_gt(p, 0);
    int n = rr_proc_children(getpid(), 0, out, 8);
    bool seen = false;
    for (int i = 0; i < n; i++)
        seen |= out[i] == p;
    ck_assert(seen);
    n = rr_proc_children(getpid(), p, out, 8);
    for (int i = 0; i < n; i++)
        ck_assert_int_ne(out[i], p);
    /* One thread (this test's process): its own file says the same. */
    n = rr_proc_own_children(getpid(), out, 8);
    seen = false;
    for (int i = 0; i < n; i++)
        seen |= out[i] == p;
    ck_assert(seen);
    ck_assert_int_eq(rr_proc_own_children(4194304 + 7, out, 8), -1);   /* no such pid */
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}
END_TEST

START_TEST(test_read_self)
{
    struct rr_proc_stat st;
    char comm[32];

    ck_assert_int_eq(rr_proc_read_stat(getpid(), &st), 0);
    ck_assert_int_eq(st.ppid, getppid());
    ck_assert(st.start > 0);

    ck_assert_int_eq(prctl(PR_SET_NAME, "rr-proc-test"), 0);
    rr_proc_comm(getpid(), comm, sizeof comm);
    ck_assert_str_eq(comm, "rr-proc-test");
    /* gone: "?" (pid_max is at most 2^22) */
    rr_proc_comm(0x3fffffff, comm, sizeof comm);
    ck_assert_str_eq(comm, "?");
    ck_assert_int_eq(rr_proc_read_stat(0x3fffffff, &st), -1);
}
END_TEST

static Suite *proc_suite(void)
{
    Suite *s = suite_create("proc");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_parse_stat);
    tcase_add_test(tc, test_parse_stat_hostile_comm);
    tcase_add_test(tc, test_parse_stat_bad);
    tcase_add_test(tc, test_parse_stat_self);
    tcase_add_test(tc, test_parse_pids);
    suite_add_tcase(s, tc);
    tc = tcase_create("process");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_children_of_self);
    tcase_add_test(tc, test_read_self);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "proc", proc_suite, NULL, NULL };
