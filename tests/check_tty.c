/* check_tty.c — whether job control can continue us (tty.c): the pure
 * predicate on the facts, and the facts of this test process. */
#include <check.h>
#include <stdio.h>
#include <unistd.h>

#include "tty.h"
#include "unit.h"

/* Process groups and sessions as a shell makes them: session 100 led by an
 * interactive shell (group 100); a job, group 200, in it. */
START_TEST(test_in_job)
{
    /* redlock-run started by the shell as a job of its own. */
    const struct rr_tty_proc job[] = { { 200, 100 }, { 100, 100 } };
    ck_assert(rr_tty_in_job(job, 2));
    /* ... by a script (sh script.sh) that the shell runs as the job: the
     * script is in our group, its parent is the shell. */
    const struct rr_tty_proc script[] = { { 200, 100 }, { 200, 100 }, { 100, 100 } };
    ck_assert(rr_tty_in_job(script, 3));
    ck_assert(!rr_tty_in_job(script, 2));   /* not seen that far: unknown, no */
    /* A session leader (setsid, a container's first process, a program's
     * pty): its parent is in another session. */
    const struct rr_tty_proc leader[] = { { 300, 300 }, { 1, 1 } };
    ck_assert(!rr_tty_in_job(leader, 2));
    /* Our group led from another session: orphaned. */
    const struct rr_tty_proc orphan[] = { { 300, 300 }, { 300, 300 }, { 1, 1 } };
    ck_assert(!rr_tty_in_job(orphan, 3));
    /* No parent known (a container's pid 1, or gone). */
    ck_assert(!rr_tty_in_job(job, 1));
    ck_assert(!rr_tty_in_job(job, 0));
    const struct rr_tty_proc unknown[] = { { -1, 100 }, { 100, 100 } };
    ck_assert(!rr_tty_in_job(unknown, 2));
}
END_TEST

START_TEST(test_job_control)
{
    struct rr_tty_facts f = { .terminal = true, .tty_sid = 100, .n = 2,
                              .chain = { { 200, 100 }, { 100, 100 } } };

    ck_assert(rr_tty_job_control(&f));
    /* cron, CI: no controlling terminal, whatever the processes. */
    f.terminal = false;
    f.tty_sid = -1;
    ck_assert(!rr_tty_job_control(&f));
    /* A terminal of another session. */
    f.terminal = true;
    f.tty_sid = 999;
    ck_assert(!rr_tty_job_control(&f));
    /* A terminal, but nobody who could continue us. */
    f.tty_sid = 100;
    f.chain[1] = (struct rr_tty_proc){ 1, 1 };
    ck_assert(!rr_tty_job_control(&f));
    f.n = 0;
    ck_assert(!rr_tty_job_control(&f));
}
END_TEST

static pid_t no_parent(pid_t pid)
{
    (void)pid;
    return -1;
}

/* The facts of this process: the chain starts with us, and without a
 * controlling terminal (the unit tests usually run under make, CI or cron)
 * there is no job control. */
START_TEST(test_facts_here)
{
    struct rr_tty_facts f;

    rr_tty_facts(&f, no_parent);
    ck_assert_int_ge(f.n, 1);
    ck_assert_int_eq(f.chain[0].pgid, getpgrp());
    ck_assert_int_eq(f.chain[0].sid, getsid(0));
    if (!f.terminal)
        ck_assert(!rr_tty_job_control(&f));
    else
        ck_assert_int_eq(f.tty_sid, getsid(0));
}
END_TEST

static Suite *tty_suite(void)
{
    Suite *s = suite_create("tty");
    TCase *tc = tcase_create("job_control");

    tcase_add_test(tc, test_in_job);
    tcase_add_test(tc, test_job_control);
    tcase_add_test(tc, test_facts_here);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "tty", tty_suite, NULL, NULL };
