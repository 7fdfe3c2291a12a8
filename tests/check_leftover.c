/* check_leftover.c — tree mode's mark of a run: its text, the judgement of
 * a dead run's group, the directory rule; and one mark made, locked and
 * removed for real. */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "leftover.h"
#include "unit.h"

#define S(x) x, sizeof(x) - 1

START_TEST(test_format_parse)
{
    char buf[64];
    pid_t g = 0;
    unsigned long long st = 0;
    size_t n = rr_leftover_format(buf, sizeof buf, 4242, 987654321ULL);

    ck_assert_str_eq(buf, "4242 987654321\n");
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_int_eq(rr_leftover_parse(buf, n, &g, &st), 0);
    ck_assert_int_eq(g, 4242);
    ck_assert(st == 987654321ULL);
    /* Too short a buffer: nothing. */
    ck_assert_uint_eq(rr_leftover_format(buf, 5, 4242, 1), 0);
}
END_TEST

START_TEST(test_parse_bad)
{
    pid_t g = 7;
    unsigned long long st = 7;

    /* Empty (the command never started), cut short, signs, group 0 or 1
     * (kill(-1) is everyone), junk after, no newline, too long. */
    ck_assert_int_eq(rr_leftover_parse("", 0, &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("4242"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("4242 \n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("-5 10\n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("1 10\n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("0 10\n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("5 -10\n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("5 10\nx"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("5 10"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("99999999999 10\n"), &g, &st), -1);
    ck_assert_int_eq(rr_leftover_parse(S("5 1000000000000000000000000000000000000\n"), &g, &st), -1);
    ck_assert_int_eq(g, 7);   /* untouched */
}
END_TEST

START_TEST(test_judge)
{
    /* No process of that pid: the group, if any, is still the dead run's. */
    ck_assert_int_eq(rr_leftover_judge(false, 0, 100), RR_LEFTOVER_KILL);
    /* The command itself, somehow alive. */
    ck_assert_int_eq(rr_leftover_judge(true, 100, 100), RR_LEFTOVER_KILL);
    /* Its pid is another process's now. */
    ck_assert_int_eq(rr_leftover_judge(true, 101, 100), RR_LEFTOVER_SKIP);
    ck_assert_int_eq(rr_leftover_judge(true, 99, 100), RR_LEFTOVER_SKIP);
}
END_TEST

START_TEST(test_dir)
{
    char d[64];

    ck_assert_int_eq(rr_leftover_dir(d, sizeof d, 0, 0), 0);
    ck_assert_str_eq(d, "/run/redlock-run");
    ck_assert_int_eq(rr_leftover_dir(d, sizeof d, 0, 1), 0);
    ck_assert_str_eq(d, "/tmp/redlock-run-0");
    ck_assert_int_eq(rr_leftover_dir(d, sizeof d, 0, 2), -1);
    ck_assert_int_eq(rr_leftover_dir(d, sizeof d, 1000, 0), 0);
    ck_assert_str_eq(d, "/tmp/redlock-run-1000");
    ck_assert_int_eq(rr_leftover_dir(d, sizeof d, 1000, 1), -1);
    ck_assert_int_eq(rr_leftover_dir(d, 8, 1000, 0), -1);
}
END_TEST

/* A mark for real: it has the run's name, it is locked while the handle
 * lives (a second lock on it fails), and it is gone after free. */
START_TEST(test_mark)
{
    struct rr_leftover *lo = NULL;
    char why[256], dir[64], path[PATH_MAX];
    int k = 0;

    if (rr_leftover_open(&lo, "unit/mark job", why, sizeof why) != 0) {
        rr_unit_skip("no mark can be made here (%s)", why);
        return;
    }
    /* Which directory it took: the first candidate that has our file. */
    for (;; k++) {
        ck_assert_int_eq(rr_leftover_dir(dir, sizeof dir, (unsigned)geteuid(), k), 0);
        snprintf(path, sizeof path, "%s/redlock-run.%ld.unit_mark_job", dir, (long)getpid());
        if (access(path, F_OK) == 0)
            break;
    }
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
    rr_leftover_note(lo, getpid());
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    char want[32];
    snprintf(want, sizeof want, "%ld ", (long)getpid());
    ck_assert(strncmp(buf, want, strlen(want)) == 0);
    close(fd);
    rr_leftover_free(lo);
    ck_assert_int_eq(access(path, F_OK), -1);
    /* Nothing to kill for a job with no dead run. */
    ck_assert_int_eq(rr_leftover_kill_dead(NULL, 0, NULL, 0), 0);
}
END_TEST

static Suite *leftover_suite(void)
{
    Suite *s = suite_create("leftover");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_format_parse);
    tcase_add_test(tc, test_parse_bad);
    tcase_add_test(tc, test_judge);
    tcase_add_test(tc, test_dir);
    suite_add_tcase(s, tc);
    tc = tcase_create("mark");
    tcase_add_test(tc, test_mark);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "leftover", leftover_suite, NULL, NULL };
