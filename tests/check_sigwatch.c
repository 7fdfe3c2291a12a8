/* check_sigwatch.c — the run's signals from one signalfd: each one that
 * comes reaches the callback in the loop; after the close it stays
 * blocked (pending, never acted on). */
#include <check.h>
#include <signal.h>
#include <string.h>
#include <uv.h>

#include "sigwatch.h"
#include "unit.h"

struct seen {
    int n;
    int sigs[8];
    struct rr_sigwatch *w;
    int close_on;
};

static void cb(void *arg, int sig)
{
    struct seen *s = arg;

    if (s->n < 8)
        s->sigs[s->n++] = sig;
    if (sig == s->close_on)
        rr_sigwatch_close(s->w);
}

START_TEST(test_delivers_then_blocks)
{
    uv_loop_t loop;
    struct rr_sigwatch w;
    struct seen s = { .w = &w, .close_on = -1 };
    const int sigs[] = { SIGUSR1, SIGUSR2 };
    sigset_t pending, old;

    sigprocmask(SIG_SETMASK, NULL, &old);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(rr_sigwatch_start(&w, &loop, sigs, 2, cb, &s), 0);
    raise(SIGUSR2);
    raise(SIGUSR1);
    uv_run(&loop, UV_RUN_NOWAIT);
    ck_assert_int_eq(s.n, 2);
    /* Lower numbers first, as the kernel dequeues standard signals. */
    ck_assert_int_eq(s.sigs[0], SIGUSR1);
    ck_assert_int_eq(s.sigs[1], SIGUSR2);

    rr_sigwatch_close(&w);
    rr_sigwatch_close(&w);   /* twice is fine */
    uv_run(&loop, UV_RUN_DEFAULT);   /* the poll handle closes: the loop runs dry */
    raise(SIGUSR1);          /* still blocked: pending, not acted on (that would end us) */
    sigpending(&pending);
    ck_assert(sigismember(&pending, SIGUSR1));
    ck_assert_int_eq(s.n, 2);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    /* Leave no pending signal to the next test. */
    signal(SIGUSR1, SIG_IGN);
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGUSR1, SIG_DFL);
}
END_TEST

START_TEST(test_close_in_callback)
{
    uv_loop_t loop;
    struct rr_sigwatch w;
    struct seen s = { .w = &w, .close_on = SIGUSR1 };
    const int sigs[] = { SIGUSR1, SIGUSR2 };
    sigset_t old;

    sigprocmask(SIG_SETMASK, NULL, &old);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    ck_assert_int_eq(rr_sigwatch_start(&w, &loop, sigs, 2, cb, &s), 0);
    raise(SIGUSR1);
    raise(SIGUSR2);
    uv_run(&loop, UV_RUN_DEFAULT);   /* ends: the callback closed the only handle */
    ck_assert_int_eq(s.n, 1);
    ck_assert_int_eq(s.sigs[0], SIGUSR1);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    signal(SIGUSR2, SIG_IGN);
    sigprocmask(SIG_SETMASK, &old, NULL);
    signal(SIGUSR2, SIG_DFL);
}
END_TEST

START_TEST(test_close_unstarted)
{
    struct rr_sigwatch w;

    memset(&w, 0, sizeof w);
    w.fd = w.closing_fd = -1;
    rr_sigwatch_close(&w);
}
END_TEST

static Suite *sigwatch_suite(void)
{
    Suite *s = suite_create("sigwatch");
    TCase *tc = tcase_create("signalfd");

    tcase_add_test(tc, test_delivers_then_blocks);
    tcase_add_test(tc, test_close_in_callback);
    tcase_add_test(tc, test_close_unstarted);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "sigwatch", sigwatch_suite, NULL, NULL };
