/* check_guard.c — the guard's hold on our tree (its /proc reader: check_proc.c). */
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
#include "proc.h"
#include "rr.h"
#include "unit.h"

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
    struct rr_proc_stat st;
    return n > 0 && rr_proc_parse_stat(buf, (size_t)n, &st) == 0 && st.state != 'Z';
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
    TCase *tc = tcase_create("process");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_orphan_in_own_session);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "guard", guard_suite, NULL, NULL };
