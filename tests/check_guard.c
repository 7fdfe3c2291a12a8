/* check_guard.c — the guard's /proc parsers, and its hold on our tree. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "rr.h"
#include "unit.h"

#define S(x) x, sizeof(x) - 1

START_TEST(test_parse_stat)
{
    struct rr_guard_stat st;
    static const char line[] =
        "4242 (sleep) S 4200 4242 4200 0 -1 4194304 91 0 0 0 0 0 0 0 20 0 3 0 "
        "987654321 2252800 129 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";

    ck_assert_int_eq(rr_guard_parse_stat(S(line), &st), 0);
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.ppid, 4200);
    ck_assert_int_eq(st.threads, 3);
    ck_assert(st.start == 987654321ULL);
}
END_TEST

START_TEST(test_parse_stat_hostile_comm)
{
    struct rr_guard_stat st;
    /* A name with ") R 1 " in it: only the last ')' ends it. */
    static const char line[] =
        "77 (x) R 1 (y) Z 9 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5555 0 0\n";

    ck_assert_int_eq(rr_guard_parse_stat(S(line), &st), 0);
    ck_assert_int_eq(st.state, 'Z');
    ck_assert_int_eq(st.ppid, 9);
    ck_assert_int_eq(st.threads, 1);
    ck_assert(st.start == 5555ULL);
}
END_TEST

START_TEST(test_parse_stat_bad)
{
    struct rr_guard_stat st;

    ck_assert_int_eq(rr_guard_parse_stat("", 0, &st), -1);
    ck_assert_int_eq(rr_guard_parse_stat(S("12 (sh S 1 2 3"), &st), -1);
    /* cut before the start time */
    ck_assert_int_eq(rr_guard_parse_stat(S("12 (sh) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0"), &st), -1);
    /* a state of two letters, a parent that is no number */
    ck_assert_int_eq(rr_guard_parse_stat(
        S("12 (sh) SS 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n"), &st), -1);
    ck_assert_int_eq(rr_guard_parse_stat(
        S("12 (sh) S x 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0\n"), &st), -1);
    /* len is respected: the same line cut in the middle of the start time
     * gives a different one, cut before it none */
    static const char line[] = "12 (sh) S 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 98765 0\n";
    ck_assert_int_eq(rr_guard_parse_stat(line, sizeof line - 6, &st), 0);
    ck_assert(st.start == 987ULL);
    ck_assert_int_eq(rr_guard_parse_stat(line, sizeof line - 9, &st), -1);
}
END_TEST

START_TEST(test_parse_stat_self)
{
    char buf[1024];
    struct rr_guard_stat st;
    int fd = open("/proc/self/stat", O_RDONLY);

    ck_assert_int_ge(fd, 0);
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(rr_guard_parse_stat(buf, (size_t)n, &st), 0);
    ck_assert_int_eq(st.ppid, getppid());
    ck_assert_int_ge(st.threads, 1);
    ck_assert(st.start > 0);
}
END_TEST

START_TEST(test_parse_last_pid)
{
    ck_assert_int_eq(rr_guard_parse_last_pid(S("0.00 0.01 0.05 1/123 45678\n")), 45678);
    ck_assert_int_eq(rr_guard_parse_last_pid(S("3.72 3.13 2.52 4/336 8236")), 8236);
    ck_assert_int_eq(rr_guard_parse_last_pid("", 0), -1);
    ck_assert_int_eq(rr_guard_parse_last_pid(S("garbage\n")), -1);
    ck_assert_int_eq(rr_guard_parse_last_pid(S("0.00 1/1 x99\n")), -1);
    ck_assert_int_eq(rr_guard_parse_last_pid(S("0.00 1/1 99999999999999\n")), -1);
}
END_TEST

static int env_has(const char *env, size_t len, const char *mark, size_t piece)
{
    struct rr_guard_envmatch m = { mark, 0, 0 };
    for (size_t i = 0; i < len; i += piece)
        rr_guard_env_match(&m, env + i, len - i < piece ? len - i : piece);
    return m.found;
}

START_TEST(test_env_match)
{
    static const char env[] = "PATH=/bin\0REDLOCK_NAME=job\0XREDLOCK_FENCE=7\0"
                              "REDLOCK_FENCE=17\0REDLOCK_NAME=jobs\0";
    size_t len = sizeof env - 1;

    for (size_t piece = 1; piece <= len; piece++) {
        ck_assert_int_eq(env_has(env, len, "REDLOCK_NAME=job", piece), 1);
        ck_assert_int_eq(env_has(env, len, "REDLOCK_FENCE=17", piece), 1);
        ck_assert_int_eq(env_has(env, len, "REDLOCK_NAME=jobs", piece), 1);
        /* only whole entries, from their start */
        ck_assert_int_eq(env_has(env, len, "REDLOCK_FENCE=7", piece), 0);
        ck_assert_int_eq(env_has(env, len, "REDLOCK_FENCE=1", piece), 0);
        ck_assert_int_eq(env_has(env, len, "REDLOCK_NAME=jo", piece), 0);
        ck_assert_int_eq(env_has(env, len, "PATH=/bin/x", piece), 0);
    }
    /* an entry cut off (no final NUL) does not count */
    ck_assert_int_eq(env_has("A=1\0B=2", 7, "B=2", 7), 0);
    ck_assert_int_eq(env_has("", 0, "A=1", 1), 0);
}
END_TEST

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool alive(pid_t p)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)p);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    struct rr_guard_stat st;
    return n > 0 && rr_guard_parse_stat(buf, (size_t)n, &st) == 0 && st.state != 'Z';
}

/* The guard of a process that is SIGKILLed kills what that process left in
 * a session of its own, though it was re-parented to init by then. */
START_TEST(test_orphan_in_own_session)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t w = fork();
    ck_assert_int_ge(w, 0);
    if (w == 0) {
        /* The wrapper: a guard, a "command", and a grandchild that leaves
         * the group and the session. */
        close(fds[0]);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        struct rr_guard *g = rr_guard_start(false, rr_now_ms() + 60000, 1000);
        if (!g)
            _exit(2);
        pid_t c = fork();
        if (c == 0) {
            /* As exec would (O_CLOEXEC): the guard's pipe must be ours
             * alone, or it would not see us die. */
            for (int fd = 3; fd < 1024; fd++)
                if (fd != fds[1])
                    close(fd);
            setpgid(0, 0);
            pid_t s = fork();
            if (s == 0) {
                setsid();
                signal(SIGTERM, SIG_IGN);
                for (;;)
                    pause();
            }
            if (write(fds[1], &s, sizeof s) != sizeof s)
                _exit(3);
            for (;;)
                pause();
        }
        setpgid(c, c);
        rr_guard_set_child(g, c);
        for (;;)
            pause();
    }
    close(fds[1]);
    pid_t s = 0;
    ck_assert_int_eq(read(fds[0], &s, sizeof s), (ssize_t)sizeof s);
    close(fds[0]);
    ck_assert(alive(s));
    usleep(200 * 1000);   /* a few of the guard's walks */
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
    int64_t t0 = mono();
    while (alive(s) && mono() - t0 < 3000)
        usleep(10 * 1000);
    bool survived = alive(s);
    if (survived)
        kill(s, SIGKILL);
    ck_assert_msg(!survived, "the straggler outlived its wrapper's guard");
}
END_TEST

static Suite *guard_suite(void)
{
    Suite *s = suite_create("guard");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_parse_stat);
    tcase_add_test(tc, test_parse_stat_hostile_comm);
    tcase_add_test(tc, test_parse_stat_bad);
    tcase_add_test(tc, test_parse_stat_self);
    tcase_add_test(tc, test_parse_last_pid);
    tcase_add_test(tc, test_env_match);
    suite_add_tcase(s, tc);
    tc = tcase_create("process");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_orphan_in_own_session);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "guard", guard_suite, NULL, NULL };
