/* check_guard.c — the guard: its clock (pure), and that it, the command's
 * parent and subreaper, kills what the command left once the wrapper is
 * SIGKILLed, wherever that went (its /proc reader: check_proc.c). */
#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
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

extern char **environ;

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool alive(pid_t p)
{
    struct rr_proc_stat st;
    return rr_proc_read_stat(p, &st) == 0 && st.state != 'Z';
}

START_TEST(test_clock)
{
    int64_t w;

    ck_assert_int_eq(rr_guard_clock(1000, 10000, 2000, false, false, &w), RR_GUARD_WAIT);
    ck_assert_int_eq(w, 7000);
    ck_assert_int_eq(rr_guard_clock(8000, 10000, 2000, false, false, &w), RR_GUARD_TERM);
    ck_assert_int_eq(w, 2000);
    ck_assert_int_eq(rr_guard_clock(8500, 10000, 2000, true, false, &w), RR_GUARD_WAIT);
    ck_assert_int_eq(w, 1500);
    ck_assert_int_eq(rr_guard_clock(10000, 10000, 2000, true, false, &w), RR_GUARD_KILL);
    ck_assert_int_gt(w, 0);
    /* Once fired, a later deadline revives nothing. */
    ck_assert_int_eq(rr_guard_clock(0, 10000, 2000, true, true, &w), RR_GUARD_KILL);
    /* No lease end: a long sleep, never longer than a minute. */
    ck_assert_int_eq(rr_guard_clock(0, RR_INF, 0, false, false, &w), RR_GUARD_WAIT);
    ck_assert_int_eq(w, 60000);
    ck_assert_int_eq(rr_guard_clock(5, 5, 0, false, false, &w), RR_GUARD_KILL);
}
END_TEST

/* The wrapper: a guard that spawns a command whose helper leaves the group
 * and the session (`setsid`, twice forked: re-parented to the guard), and
 * says its pid in FILE. */
static void wrapper(const char *file)
{
    char script[512];
    snprintf(script, sizeof script,
             "setsid sh -c 'trap \"\" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 60' & "
             "exec sleep 60", file, file, file);
    char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
    char err[256];
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct rr_guard *g = rr_guard_start(&(struct rr_guard_opts){ .foreground = false });
    if (!g)
        _exit(2);
    struct rr_guard_spawn sp = { .argv = argv, .envp = environ,
                                 .deadline_ms = rr_now_ms() + 60000, .grace_ms = 1000 };
    int fd, rc = rr_guard_spawn_send(g, &sp, &fd, err, sizeof err);
    if (rc == 0)
        while ((rc = rr_guard_spawn_outcome(g, fd, argv[0], err, sizeof err)) == 1)
            poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, -1);
    if (rc != 0)
        _exit(3);   /* the exec failed */
    for (;;)
        pause();
}

static pid_t read_pid(const char *file)
{
    int64_t t0 = mono();
    while (mono() - t0 < 5000) {
        FILE *f = fopen(file, "r");
        int p = 0;
        if (f && fscanf(f, "%d", &p) == 1 && p > 0) {
            fclose(f);
            return p;
        }
        if (f)
            fclose(f);
        usleep(10 * 1000);
    }
    return -1;
}

/* The wrapper is SIGKILLed: the guard kills the helper, though it is in a
 * session of its own and ignores SIGTERM. */
START_TEST(test_orphan_in_own_session)
{
    char file[64];
    snprintf(file, sizeof file, "/tmp/rr-guard-%d", (int)getpid());
    unlink(file);
    pid_t w = fork();
    ck_assert_int_ge(w, 0);
    if (w == 0)
        wrapper(file);
    pid_t s = read_pid(file);
    unlink(file);
    ck_assert_int_gt(s, 0);
    ck_assert(alive(s));
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
    TCase *tc = tcase_create("clock");
    tcase_add_test(tc, test_clock);
    suite_add_tcase(s, tc);
    tc = tcase_create("process");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_orphan_in_own_session);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "guard", guard_suite, NULL, NULL };
