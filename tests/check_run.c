/* check_run.c — the run state machine (run_step.c) driven without Redis:
 * events in, the next state and the actions out. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "rr.h"
#include "run_step.h"
#include "unit.h"

static const struct rr_run_params params = {
    .ttl_ms = 30000, .renew_ms = 10000, .kill_after_ms = 5000,
    .wait_ms = 0, .timeout_ms = 0, .min_hold_ms = 0, .conflict_exit_code = RR_EXIT_BUSY,
};

static struct rr_run_sm sm;
static struct rr_run_actions out;

/* The actions as one line: "enter:releasing disarm_renew release:0". */
static const char *acts(void)
{
    static const char *const names[] = {
        [RR_ACT_ENTER] = "enter",           [RR_ACT_SAY] = "say",
        [RR_ACT_ACQUIRE] = "acquire",       [RR_ACT_WAITER_STOP] = "waiter_stop",
        [RR_ACT_WAIT] = "wait",             [RR_ACT_LEAVE] = "leave",
        [RR_ACT_START_CHILD] = "start",     [RR_ACT_FORWARD] = "forward",
        [RR_ACT_STOP_CHILD] = "stop",       [RR_ACT_KILL_CHILD] = "kill",
        [RR_ACT_PAUSE_CHILD] = "pause",     [RR_ACT_RESUME_CHILD] = "resume",
        [RR_ACT_SET_DEADLINE] = "deadline",
        [RR_ACT_STOP_SELF] = "stop_self",   [RR_ACT_ARM_RENEW] = "arm_renew",
        [RR_ACT_ARM_LOST] = "arm_lost",     [RR_ACT_ARM_TIMEOUT] = "arm_timeout",
        [RR_ACT_DISARM_RENEW] = "disarm_renew", [RR_ACT_DISARM_LOST] = "disarm_lost",
        [RR_ACT_DISARM_TIMEOUT] = "disarm_timeout", [RR_ACT_RENEW] = "renew",
        [RR_ACT_RELEASE] = "release",       [RR_ACT_FINISH] = "finish",
        [RR_ACT_ARM_RELEASE] = "arm_release", [RR_ACT_DISARM_RELEASE] = "disarm_release",
    };
    static const char *const msgs[] = {
        [RR_MSG_SETUP] = "setup",
        [RR_MSG_ACQUIRE_NOT_SENT] = "not_sent",
        [RR_MSG_ABANDONED] = "abandoned",
        [RR_MSG_WAITED] = "waited",
        [RR_MSG_ACQUIRED] = "acquired",
        [RR_MSG_WAITING] = "waiting",
        [RR_MSG_BUSY] = "busy",
        [RR_MSG_SKIPPED] = "skipped",
        [RR_MSG_STALE] = "stale",
        [RR_MSG_CONFIG] = "config",
        [RR_MSG_UNAVAILABLE_WAIT] = "unavailable_wait",
        [RR_MSG_UNAVAILABLE] = "unavailable",
        [RR_MSG_LATE] = "late",
        [RR_MSG_EXEC_FAILED] = "exec_failed",
        [RR_MSG_CHILD_EXIT] = "child_exit",
        [RR_MSG_LEASE_RAN_OUT] = "lease_ran_out",
        [RR_MSG_GUARD_DIED] = "guard_died",
        [RR_MSG_LOST] = "lost",
        [RR_MSG_TIMEOUT] = "timeout",
        [RR_MSG_RENEWED_AGAIN] = "renewed_again",
        [RR_MSG_RENEWED] = "renewed",
        [RR_MSG_RENEW_FAILED] = "renew_failed",
        [RR_MSG_FORWARDED] = "forwarded",
        [RR_MSG_STOPPED] = "stopped",
        [RR_MSG_TTY_STOP] = "tty_stop",
        [RR_MSG_CHILD_STOPPED] = "child_stopped",
        [RR_MSG_CHILD_CONTINUED] = "child_continued",
        [RR_MSG_TSTP_IGNORED] = "tstp_ignored",
        [RR_MSG_MIN_HOLD] = "min_hold",
        [RR_MSG_RELEASE_FAILED] = "release_failed",
        [RR_MSG_RELEASE_NOT_SENT] = "release_not_sent",
        [RR_MSG_RELEASED] = "released",
        [RR_MSG_RELEASE_RETRY] = "release_retry",
        [RR_MSG_RELEASE_LANDED] = "release_landed",
        [RR_MSG_UNRECORDED] = "unrecorded",
    };
    static char buf[1024];
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < out.n; i++) {
        const struct rr_run_action *a = &out.a[i];
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? " " : "", names[a->kind]);
        switch (a->kind) {
        case RR_ACT_ENTER:
            o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", rr_run_state_name(a->to));
            break;
        case RR_ACT_SAY:
            o += (size_t)snprintf(buf + o, sizeof buf - o, ":%s", msgs[a->msg]);
            break;
        case RR_ACT_FORWARD:
            o += (size_t)snprintf(buf + o, sizeof buf - o, ":%d", a->sig);
            break;
        case RR_ACT_FINISH:
            o += (size_t)snprintf(buf + o, sizeof buf - o, ":%d", a->code);
            break;
        case RR_ACT_STOP_CHILD: case RR_ACT_SET_DEADLINE: case RR_ACT_ARM_RENEW:
        case RR_ACT_ARM_LOST: case RR_ACT_ARM_TIMEOUT: case RR_ACT_RELEASE:
        case RR_ACT_ARM_RELEASE:
            o += (size_t)snprintf(buf + o, sizeof buf - o, ":%lld", (long long)a->ms);
            break;
        default:
            break;
        }
    }
    return buf;
}

static const struct rr_run_action *find(enum rr_run_act kind)
{
    for (int i = 0; i < out.n; i++)
        if (out.a[i].kind == kind)
            return &out.a[i];
    return NULL;
}

static const char *step(struct rr_run_ev ev)
{
    rr_run_step(&sm, &ev, &out);
    return acts();
}

static void start(const struct rr_run_params *p)
{
    rr_run_sm_init(&sm, p, 1000);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_START, .now = 1000 }),
                     "enter:acquiring acquire");
}

/* Start, and take the lock at now 1100 with 29000ms validity: STARTING. */
static void acquire(const struct rr_run_params *p)
{
    start(p);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 1100, .validity_ms = 29000 });
}

/* What the acquisition of the last run() asked for. */
static char acquired_acts[512];

/* Take the lock at now 1100 with 29000ms validity and start the child. */
static void run(const struct rr_run_params *p)
{
    start(p);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 1100, .validity_ms = 29000,
                             .fence = 7, .slot = 2 });
    ck_assert_int_eq(out.a[out.n - 1].kind, RR_ACT_START_CHILD);
    ck_assert_int_eq(sm.state, RR_RUN_STARTING);
    /* 30100 - 5000 - 1100 = 24000 to the lost deadline; renew at 10000:
     * from the acquisition, while the command starts. */
    snprintf(acquired_acts, sizeof acquired_acts, "%s", acts());
    ck_assert(strstr(acquired_acts, "enter:starting arm_renew:10000 arm_lost:24000") != NULL);
    const char *a = step((struct rr_run_ev){ .kind = RR_EV_CHILD_STARTED, .now = 1100 });
    ck_assert_str_eq(a, "enter:running");
    ck_assert_int_eq(sm.fence, 7);
    ck_assert_int_eq(sm.slot, 2);
    ck_assert_int_eq(sm.wait_ms, 100);
}

START_TEST(test_init)
{
    struct rr_run_params p = params;

    p.renew_ms = 20000;
    p.kill_after_ms = 10000;
    p.wait_ms = RR_INF;
    rr_run_sm_init(&sm, &p, 5);
    ck_assert_int_eq(sm.state, RR_RUN_ACQUIRING);
    ck_assert_int_eq(sm.status, RR_JOB_ERROR);
    ck_assert_int_eq(sm.child_exit, -1);
    ck_assert_int_eq(sm.renew_ms, 15000);       /* at least twice per lease */
    ck_assert_int_eq(sm.stop_grace_ms, 7500);   /* a quarter of the lease at most */
    ck_assert(sm.wait_deadline == INT64_MAX);
    p.wait_ms = 3000;
    rr_run_sm_init(&sm, &p, 5);
    ck_assert_int_eq(sm.wait_deadline, 3005);
    ck_assert_str_eq(rr_run_state_name(RR_RUN_STOPPING), "stopping");
}
END_TEST

START_TEST(test_success)
{
    run(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 5000 }),
                     "say:child_exit enter:releasing disarm_renew disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(sm.status, RR_JOB_SUCCEEDED);
    ck_assert_int_eq(sm.exit_code, 0);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .freed = true }),
                     "say:released enter:done finish:0");
    /* Anything late changes nothing. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGTERM }), "");
}
END_TEST

START_TEST(test_failure_and_min_hold)
{
    struct rr_run_params p = params;

    p.min_hold_ms = 10000;
    run(&p);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 4100, .code = 3, .child_exit = 3 });
    ck_assert_str_eq(acts(), "say:child_exit enter:releasing disarm_renew disarm_lost disarm_timeout "
                             "say:min_hold release:7000");
    ck_assert_int_eq(sm.status, RR_JOB_FAILED);
    ck_assert_int_eq(sm.exit_code, 3);
    ck_assert_int_eq(sm.child_exit, 3);
    /* The release did not reach a quorum: said, and the code stays. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .freed = false }),
                     "say:release_failed say:released enter:done finish:3");

}
END_TEST

/* A release the cluster refuses for now (TRYAGAIN, a slot half-way) or
 * whose reply was lost is sent again with a backoff, while the renew timer
 * keeps the lease; it ends when one lands. */
START_TEST(test_release_retried)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2000 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2000,
                                              .unlanded = true, .text = "TRYAGAIN" }),
                     "enter:retrying arm_renew:0 arm_lost:28100 say:release_retry "
                     "arm_release:50");
    ck_assert_int_eq(out.a[3].n, 1);   /* the first refusal: a warning */
    ck_assert_int_eq(sm.state, RR_RUN_RETRYING);
    /* The renewals go on, and move the deadline. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 2000 }), "renew");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEWED, .now = 2100, .sent_ms = 2000,
                                              .valid_until = 40000 }),
                     "arm_lost:37900 say:renewed arm_renew:10000");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_DUE, .now = 2050 }),
                     "release:0");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2060,
                                              .unlanded = true, .text = "TRYAGAIN" }),
                     "say:release_retry arm_release:100");
    ck_assert_int_eq(out.a[0].n, 0);   /* later ones: the debug log */
    /* A renewal that finds the key gone (the release ran unanswered) only
     * stops the renewals; a failed one is retried, as while the command
     * ran (a quarter of --renew, at most 250 ms). */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_FAILED, .now = 2070 }),
                     "say:renew_failed arm_renew:250");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_LOST, .now = 2080 }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_DUE, .now = 2160 }),
                     "release:0");
    ck_assert_int_eq(sm.release_tries, 3);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2170, .freed = true }),
                     "disarm_renew disarm_lost disarm_release say:release_landed say:released "
                     "enter:done finish:0");
    ck_assert_int_eq(sm.status, RR_JOB_SUCCEEDED);
    /* A late answer changes nothing. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .unlanded = true }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_DUE }), "");
}
END_TEST

/* The lease ends before any release landed: said as exactly that, with
 * its own exit status, never as a success nor as a death. */
START_TEST(test_release_unrecorded)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2000, .code = 3, .child_exit = 3 });
    step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2000, .unlanded = true });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LOST_DEADLINE, .now = 30100 }),
                     "disarm_renew disarm_lost disarm_release say:unrecorded enter:done finish:74");
    ck_assert_int_eq(out.a[3].n, 3);   /* the command's own status is said */
    ck_assert_int_eq(sm.status, RR_JOB_FAILED);
    ck_assert_int_eq(sm.exit_code, RR_EXIT_UNRECORDED);
    /* An answer that comes after the lease's end does not retry. */
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2000 });
    step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2000, .unlanded = true });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 31000,
                                              .unlanded = true }),
                     "disarm_renew disarm_lost disarm_release say:unrecorded enter:done finish:74");
    /* A signal while retrying: go now, and say what is not known. */
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2000 });
    step((struct rr_run_ev){ .kind = RR_EV_RELEASE_NOT_SENT, .now = 2000 });
    ck_assert_str_eq(acts(), "say:release_not_sent say:released enter:done finish:0");
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2000 });
    step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2000, .unlanded = true });
    step((struct rr_run_ev){ .kind = RR_EV_RELEASE_DUE, .now = 2050 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_NOT_SENT, .now = 2100 }),
                     "say:release_retry arm_release:100");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .now = 2200, .sig = SIGTERM }),
                     "disarm_renew disarm_lost disarm_release say:unrecorded enter:done finish:74");
}
END_TEST

/* Not retried: a lost run (the lock may be another's) and a give-back
 * (nothing ran, nothing to record). */
START_TEST(test_release_not_retried)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 2000 });
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_LOST, .now = 2000, .text = "taken" });
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 2100, .code = 137 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 2100,
                                              .unlanded = true }),
                     "say:release_failed say:released enter:done finish:79");
    acquire(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_LATE, .now = 1200 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .now = 1300,
                                              .unlanded = true }),
                     "say:release_failed leave");
}
END_TEST

START_TEST(test_release_policy)
{
    ck_assert(rr_release_landed(1, 0));
    ck_assert(!rr_release_landed(1, 1));
    ck_assert(rr_release_landed(3, 1));
    ck_assert(!rr_release_landed(3, 2));
    ck_assert(rr_release_landed(5, 2));
    ck_assert(!rr_release_landed(5, 3));
    ck_assert_int_eq(rr_release_backoff(1, 10000), 50);
    ck_assert_int_eq(rr_release_backoff(2, 10000), 100);
    ck_assert_int_eq(rr_release_backoff(5, 10000), 800);
    ck_assert_int_eq(rr_release_backoff(6, 10000), 1000);
    ck_assert_int_eq(rr_release_backoff(60, 10000), 1000);
    ck_assert_int_eq(rr_release_backoff(6, 300), 300);    /* never past the lease */
    ck_assert_int_eq(rr_release_backoff(1, 0), 1);
}
END_TEST

/* A release that cannot even be sent still says how the run ended. */
START_TEST(test_release_not_sent)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 4100, .code = 1, .child_exit = 1 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_NOT_SENT }),
                     "say:release_not_sent say:released enter:done finish:1");
    /* Nothing ran: nothing to report but the refusal itself. */
    acquire(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_FAILED, .now = 1100, .spawn_rc = -127,
                             .text = "x: not found" });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASE_NOT_SENT }),
                     "say:release_not_sent enter:done finish:127");
}
END_TEST

/* A signal while the acquire is in flight: a lock we got is given back
 * unused (status NONE aborts it), then we leave the queue, exit 128+N. */
START_TEST(test_give_back)
{
    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGTERM }), "");
    ck_assert_int_eq(sm.abort_signal, SIGTERM);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 1200,
                                              .validity_ms = 29000 }),
                     "enter:releasing disarm_renew disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(sm.status, RR_JOB_NONE);
    ck_assert_int_eq(sm.exit_code, 128 + SIGTERM);
    ck_assert_ptr_null(find(RR_ACT_START_CHILD));
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .freed = true }), "leave");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:143");

    /* A busy answer after the signal: nothing to give back, just leave. */
    start(&params);
    step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGINT });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1200 }), "leave");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:130");
}
END_TEST

/* A wake-up while an acquire is in flight: its busy answer tries again at
 * once instead of sleeping a whole refresh interval. */
START_TEST(test_woken_during_acquire)
{
    struct rr_run_params p = params;

    p.wait_ms = 60000;
    start(&p);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1100, .rank = 1, .pttl = 5000 });
    ck_assert_str_eq(acts(), "enter:waiting say:waiting wait");
    ck_assert_int_eq(find(RR_ACT_WAIT)->rank, 1);
    ck_assert_int_eq(find(RR_ACT_WAIT)->left, 60000 - 100);
    /* The waiter's refresh timer: try again. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RETRY, .now = 2000 }),
                     "enter:acquiring acquire");
    /* Woken while that acquire is in flight. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_WOKEN, .now = 2001 }), "");
    ck_assert(sm.woken);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 2002, .rank = 0 }),
                     "enter:acquiring acquire");
    ck_assert(!sm.woken);
    /* The next busy answer sleeps again, and says "waiting" only once. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 2003, .rank = 0 }),
                     "enter:waiting wait");
    /* Woken while waiting: at once. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_WOKEN, .now = 2004 }),
                     "enter:acquiring acquire");
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 2100, .validity_ms = 29000 });
    ck_assert_str_eq(acts(), "waiter_stop say:waited say:acquired enter:starting "
                             "arm_renew:10000 arm_lost:24000 start");
    ck_assert_int_eq(sm.wait_ms, 1100);
}
END_TEST

/* Signals while waiting: leave the queue, exit 128+N; a second signal does
 * not wait for Redis. */
START_TEST(test_signal_while_waiting)
{
    struct rr_run_params p = params;

    p.wait_ms = RR_INF;
    start(&p);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1100, .rank = 0 });
    ck_assert_int_eq(find(RR_ACT_WAIT)->left, INT64_MAX);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGTERM }), "leave");
    ck_assert(sm.leaving);
    /* Leaving: wake-ups and the retry timer no longer try. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_WOKEN }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RETRY }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:143");
    ck_assert_int_eq(sm.status, RR_JOB_ERROR);

    start(&p);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1100, .rank = 0 });
    step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGTERM });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGINT }),
                     "enter:done finish:130");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "");
    ck_assert_int_eq(sm.exit_code, 130);
}
END_TEST

START_TEST(test_busy_and_wait_deadline)
{
    struct rr_run_params p = params;

    start(&params);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1300, .rank = -1 });
    ck_assert_str_eq(acts(), "say:busy leave");
    ck_assert_int_eq(sm.status, RR_JOB_BUSY);
    ck_assert_int_eq(sm.wait_ms, 300);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:75");

    /* --wait 1s: waited until the deadline, then given up. */
    p.wait_ms = 1000;
    p.conflict_exit_code = 3;
    start(&p);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 1999 }),
                     "enter:waiting say:waiting wait");
    step((struct rr_run_ev){ .kind = RR_EV_RETRY, .now = 2000 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_BUSY, .now = 2000 }),
                     "say:busy leave");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:3");
}
END_TEST

START_TEST(test_errors)
{
    struct rr_run_params p = params;

    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_ERROR, .now = 1100,
                                              .text = "down" }),
                     "say:unavailable leave");
    ck_assert_ptr_nonnull(strstr(out.a[0].text, "down"));
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:69");

    /* --wait: warned once, and the unqueued backoff doubles up to 2s. */
    p.wait_ms = 60000;
    start(&p);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_ERROR, .now = 1100, .rank = -1 }),
                     "say:unavailable_wait enter:waiting wait");
    ck_assert_int_eq(find(RR_ACT_WAIT)->backoff, 100);
    int64_t want[] = { 200, 400, 800, 1600, 3200, 3200 };
    for (int i = 0; i < 6; i++) {
        step((struct rr_run_ev){ .kind = RR_EV_RETRY, .now = 1200 });
        ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_ERROR, .now = 1200,
                                                  .rank = -1 }),
                         "enter:waiting wait");
        ck_assert_int_eq(find(RR_ACT_WAIT)->backoff, want[i]);
    }
    /* A refusal of our configuration is not waited out. */
    step((struct rr_run_ev){ .kind = RR_EV_RETRY, .now = 1200 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_REFUSED, .now = 1200 }),
                     "say:config enter:done finish:78");
    ck_assert_int_eq(sm.status, RR_JOB_ERROR);

    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_NOT_SENT }),
                     "say:not_sent enter:done finish:70");
    rr_run_sm_init(&sm, &params, 0);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SETUP_FAILED, .text = "x" }),
                     "say:setup enter:done finish:70");
    /* No cgroup for --contain cgroup, no guard: 71, through the machine. */
    rr_run_sm_init(&sm, &params, 0);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SETUP_FAILED, .text = "x",
                                              .code = RR_EXIT_OSERR }),
                     "say:setup enter:done finish:71");
}
END_TEST

START_TEST(test_once_outcomes)
{
    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_DONE }),
                     "say:skipped enter:done finish:0");
    ck_assert_int_eq(sm.status, RR_JOB_SKIPPED);
    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_STALE }),
                     "say:stale enter:done finish:65");
    ck_assert_int_eq(sm.status, RR_JOB_REFUSED);
    start(&params);
    step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 1100, .validity_ms = 29000,
                             .abandoned = true });
    ck_assert_str_eq(acts(), "waiter_stop say:abandoned say:acquired enter:starting "
                             "arm_renew:10000 arm_lost:24000 start");
}
END_TEST

START_TEST(test_spawn_failures)
{
    acquire(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_FAILED, .now = 1100,
                                              .spawn_rc = -127 }),
                     "say:exec_failed enter:releasing disarm_renew disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(sm.exit_code, RR_EXIT_NOTFOUND);
    ck_assert_int_eq(sm.child_exit, RR_EXIT_NOTFOUND);
    /* Issue 28, 2: a command that never started is no failed run. */
    ck_assert_int_eq(sm.status, RR_JOB_NONE);
    /* Never started: given back, then out of the queue. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RELEASED, .freed = true }), "leave");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LEFT }), "enter:done finish:127");

    acquire(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_FAILED, .spawn_rc = -126 });
    ck_assert_int_eq(sm.exit_code, RR_EXIT_NOEXEC);
    acquire(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_FAILED, .spawn_rc = -1 });
    ck_assert_int_eq(sm.exit_code, RR_EXIT_OSERR);
    ck_assert_int_eq(sm.status, RR_JOB_NONE);

    acquire(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_LATE, .now = 1100 }),
                     "say:late enter:releasing disarm_renew disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(sm.status, RR_JOB_NONE);
    ck_assert_int_eq(sm.exit_code, RR_EXIT_UNAVAILABLE);
}
END_TEST

/* While the command starts the lock is kept: renewals move the guard's
 * deadline (the one the command's exec checks); a signal, a SIGTSTP, a
 * loss reach what starts as they would the command. */
START_TEST(test_starting)
{
    acquire(&params);
    ck_assert_int_eq(sm.state, RR_RUN_STARTING);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11100 }), "renew");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEWED, .now = 11150,
                                              .sent_ms = 11100, .valid_until = 40100 }),
                     "deadline:40100 arm_lost:23950 say:renewed arm_renew:10000");
    /* Not put off until it runs (an exec that hangs would keep them for
     * ever): the guard signals the command's process once it is forked. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .now = 12000,
                                              .sig = SIGTERM }),
                     "forward:15 forward:18 say:forwarded");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP, .now = 12001,
                                              .job_control = true }),
                     "pause say:stopped stop_self");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CONTINUED, .now = 12002 }), "resume");
    /* Stopped before its exec (a SIGTSTP pending since it took the
     * terminal), nobody to continue it: continued. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 12003,
                                              .sig = SIGTSTP }),
                     "resume say:child_continued");
    ck_assert_int_eq(sm.state, RR_RUN_STARTING);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STARTED, .now = 12100 }),
                     "enter:running");
    ck_assert(sm.child_started);

    /* The lease ran out while it started (renewals failed): the guard
     * refuses the exec; nothing ran: Redis was unavailable, 69. */
    acquire(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LOST_DEADLINE, .now = 25100 }),
                     "disarm_renew disarm_lost stop:5000 say:lost");
    ck_assert_int_eq(sm.state, RR_RUN_STARTING);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_LATE, .now = 25200 }),
                     "say:late enter:releasing disarm_renew disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(sm.exit_code, RR_EXIT_UNAVAILABLE);
    ck_assert_int_eq(sm.status, RR_JOB_NONE);

    /* Taken while it started, and it exec'd all the same: killed. */
    acquire(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_LOST, .now = 11200 }),
                     "disarm_renew disarm_lost kill say:lost");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STARTED, .now = 11300 }),
                     "enter:stopping");
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 11400, .code = 137,
                             .child_exit = -1, .child_signal = SIGKILL });
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
    ck_assert_int_eq(sm.status, RR_JOB_LOST);

    /* One spawn, one outcome: a second one is nonsense, and ignored. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STARTED, .now = 11500 }), "");
}
END_TEST

/* --max-runtime: TERM with --kill-after, exit 124 once the child is reaped;
 * the lock is released after the reap only. */
START_TEST(test_max_runtime)
{
    struct rr_run_params p = params;

    p.timeout_ms = 2000;
    start(&p);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_ACQ_OK, .now = 1100,
                                              .validity_ms = 29000 }),
                     "waiter_stop say:acquired enter:starting arm_renew:10000 arm_lost:24000 "
                     "arm_timeout:2000 start");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STARTED, .now = 1100 }),
                     "enter:running");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_MAX_RUNTIME, .now = 3100 }),
                     "say:timeout enter:stopping stop:5000");
    ck_assert_ptr_null(find(RR_ACT_RELEASE));
    /* Renewals go on while it stops. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 3200 }), "renew");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEWED, .now = 3250, .sent_ms = 3200,
                                              .valid_until = 32900 }),
                     "deadline:32900 arm_lost:24650 say:renewed arm_renew:10000");
    ck_assert_int_eq(out.a[2].n, 50);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 3300, .code = 143,
                             .child_exit = -1, .child_signal = SIGTERM });
    ck_assert_int_eq(find(RR_ACT_RELEASE)->kind, RR_ACT_RELEASE);
    ck_assert_int_eq(sm.exit_code, RR_EXIT_TIMEOUT);
    ck_assert_int_eq(sm.status, RR_JOB_TIMEOUT);
    ck_assert_int_eq(sm.signal, SIGTERM);
    ck_assert_int_eq(sm.child_exit, -1);
}
END_TEST

/* Lost while stopping for --max-runtime: the loss wins, with the grace the
 * lease still leaves; a second loss adds nothing. */
START_TEST(test_lost_during_stopping)
{
    struct rr_run_params p = params;

    p.timeout_ms = 2000;
    run(&p);
    step((struct rr_run_ev){ .kind = RR_EV_MAX_RUNTIME, .now = 3100 });
    ck_assert_int_eq(sm.final_status, RR_JOB_TIMEOUT);
    /* The lost timer: 30100 - 27100 = 3000 of the lease left, under the grace. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_LOST_DEADLINE, .now = 27100 }),
                     "disarm_renew disarm_lost stop:3000 say:lost");
    ck_assert_int_eq(out.a[3].loss, RR_LOSS_NO_QUORUM);
    ck_assert_int_eq(out.a[3].n, 0);
    ck_assert_int_eq(sm.state, RR_RUN_STOPPING);
    ck_assert_int_eq(sm.final_status, RR_JOB_LOST);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_LOST, .now = 27200 }), "");
    /* A renewal's late answer is ignored once lost. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEWED, .now = 27300,
                                              .valid_until = 60000 }),
                     "");
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 27400, .code = 0 });
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
    ck_assert_int_eq(sm.status, RR_JOB_LOST);
}
END_TEST

/* Certain loss (the key is another's): SIGKILL now, no grace. */
START_TEST(test_certain_loss)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11100 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_LOST, .now = 11150,
                                              .text = "taken over" }),
                     "disarm_renew disarm_lost enter:stopping kill say:lost");
    ck_assert_int_eq(out.a[4].n, 1);
    ck_assert_int_eq(out.a[4].loss, RR_LOSS_TAKEN);
    ck_assert_str_eq(out.a[4].text, "taken over");
    ck_assert(!sm.renew_in_flight);
    ck_assert_ptr_null(find(RR_ACT_RELEASE));
    /* Signals are still forwarded while it dies; nothing is released yet. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGTERM }),
                     "forward:15 forward:18 say:forwarded");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGNAL, .sig = SIGUSR1 }),
                     "forward:10 say:forwarded");
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 11200, .code = 137,
                             .child_exit = -1, .child_signal = SIGKILL });
    ck_assert_ptr_nonnull(find(RR_ACT_RELEASE));
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
}
END_TEST

/* The guard died: a loss, and said, also when the run was lost already
 * (its lost timer fired first, while we were stopped): the log must name
 * what stopped enforcing the lease. */
START_TEST(test_guard_died)
{
    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 5000, .code = 137,
                             .child_exit = -1, .child_signal = SIGKILL, .guard_pid = 42 });
    ck_assert_str_eq(acts(), "say:guard_died say:child_exit enter:releasing disarm_renew "
                             "disarm_lost disarm_timeout release:0");
    ck_assert_int_eq(out.a[0].n, 42);
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
    ck_assert_int_eq(sm.status, RR_JOB_LOST);

    run(&params);
    step((struct rr_run_ev){ .kind = RR_EV_LOST_DEADLINE, .now = 25100 });
    ck_assert_int_eq(sm.final_status, RR_JOB_LOST);
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 25200, .code = 137,
                             .child_exit = -1, .child_signal = SIGKILL, .guard_pid = 42 });
    ck_assert_ptr_nonnull(find(RR_ACT_SAY));
    ck_assert_int_eq(find(RR_ACT_SAY)->msg, RR_MSG_GUARD_DIED);
    ck_assert_int_eq(find(RR_ACT_SAY)->n, 42);
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
    ck_assert_int_eq(sm.status, RR_JOB_LOST);
}
END_TEST

START_TEST(test_renewals)
{
    run(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11100 }), "renew");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11101 }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_FAILED, .now = 11200,
                                              .text = "no quorum" }),
                     "say:renew_failed arm_renew:250");
    ck_assert_int_eq(out.a[0].n, 1);   /* the first of an outage warns */
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11450 });
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_FAILED, .now = 11500 });
    ck_assert_int_eq(out.a[0].n, 0);
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 11750 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEWED, .now = 11800,
                                              .sent_ms = 11750, .valid_until = 41450 }),
                     "say:renewed_again deadline:41450 arm_lost:24650 say:renewed arm_renew:10000");
    ck_assert_int_eq(out.a[0].n, 2);
    ck_assert_int_eq(sm.renew_failures, 0);
    /* A renewal that could not be sent waits a whole interval. */
    step((struct rr_run_ev){ .kind = RR_EV_RENEW_DUE, .now = 21800 });
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_RENEW_NOT_SENT }),
                     "arm_renew:10000");
    ck_assert(!sm.renew_in_flight);
    /* The lease ran out under the guard: a loss, whatever the child said. */
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 50000, .code = 0,
                             .lease_ran_out = true });
    ck_assert_str_eq(acts(), "say:lease_ran_out say:child_exit enter:releasing disarm_renew disarm_lost "
                             "disarm_timeout release:0");
    ck_assert_int_eq(sm.exit_code, RR_EXIT_LOST);
    ck_assert_int_eq(sm.status, RR_JOB_LOST);
}
END_TEST

START_TEST(test_stop_and_continue)
{
    /* Job control: a shell can continue us. */
    run(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP, .now = 2100,
                                              .job_control = true, .terminal = true }),
                     "pause say:stopped stop_self");
    ck_assert_int_eq(out.a[1].n, 28000);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CONTINUED, .now = 3000 }), "resume");
    /* Our own SIGSTOP's report, read once continued: ours, not another's;
     * a SIGSTOP after it is another process's. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 3001,
                                              .sig = SIGSTOP, .job_control = true }), "");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 3002,
                                              .sig = SIGSTOP, .job_control = true }),
                     "say:child_stopped");
    /* Continued too late to stop the command in time: lost. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CONTINUED, .now = 25100 }),
                     "disarm_renew disarm_lost enter:stopping stop:5000 say:lost");
    ck_assert_int_eq(out.a[4].loss, RR_LOSS_STOPPED);
    /* Outside the run of the command, we just stop. */
    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP, .job_control = true }),
                     "stop_self");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CONTINUED }), "");
}
END_TEST

/* The command stopped by SIGTTIN (it read the terminal from the
 * background), SIGTTOU or SIGTSTP, where a shell can continue us: the job
 * stops as a whole. */
START_TEST(test_child_stop_job_control)
{
    run(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 2100,
                                              .sig = SIGTTIN, .job_control = true,
                                              .terminal = true }),
                     "say:tty_stop pause say:stopped stop_self");
    ck_assert_int_eq(out.a[0].sig, SIGTTIN);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CONTINUED, .now = 3000 }), "resume");
    /* Said once; Ctrl-Z (SIGTSTP) needs no word of its own. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 3100,
                                              .sig = SIGTTOU, .job_control = true }),
                     "pause say:stopped stop_self");
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 3200,
                                              .sig = SIGTSTP, .job_control = true }),
                     "pause say:stopped stop_self");
    /* SIGSTOP from another process: said once, the command stays stopped. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .sig = SIGSTOP,
                                              .job_control = true }),
                     "say:child_stopped");
    ck_assert_int_eq(out.a[0].sig, SIGSTOP);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .sig = SIGSTOP }), "");
}
END_TEST

/* No terminal (cron, CI), or nobody who could continue us: a stop would
 * last for ever. The command's job-control stops are undone at once, each
 * time; our SIGTSTP is not obeyed; the lease and --max-runtime stay. */
START_TEST(test_no_job_control)
{
    struct rr_run_params p = params;

    p.timeout_ms = 60000;
    run(&p);
    ck_assert(strstr(acquired_acts, "arm_timeout:60000") != NULL);

    static const int sigs[] = { SIGTTIN, SIGTTOU, SIGTSTP, SIGTTIN };
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 2000 + i,
                                                  .sig = sigs[i] }),
                         "resume say:child_continued");
        ck_assert_int_eq(out.a[1].sig, sigs[i]);
        ck_assert_int_eq(out.a[1].n, i == 0);   /* a warning once, then debug */
        ck_assert(!out.a[1].terminal);
    }
    ck_assert_int_eq(sm.child_continued, 4);
    /* A terminal, but not a job of a shell: the same, said so. */
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .sig = SIGTSTP, .terminal = true });
    ck_assert(find(RR_ACT_RESUME_CHILD) != NULL);
    ck_assert(out.a[1].terminal);

    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP, .now = 3000 }),
                     "say:tstp_ignored");
    ck_assert_int_eq(out.a[0].n, 1);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP, .now = 3100 }),
                     "say:tstp_ignored");
    ck_assert_int_eq(out.a[0].n, 0);
    ck_assert_int_eq(sm.state, RR_RUN_RUNNING);
    ck_assert(find(RR_ACT_STOP_SELF) == NULL);

    /* Nothing of the lease was touched: renewals, the lost deadline and
     * --max-runtime still decide. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_MAX_RUNTIME, .now = 61100 }),
                     "say:timeout enter:stopping stop:5000");
    /* Stopped again while stopping: continued, so that it can end. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .now = 61200,
                                              .sig = SIGTTOU }),
                     "resume say:child_continued");
    step((struct rr_run_ev){ .kind = RR_EV_CHILD_EXITED, .now = 61300, .code = 143,
                             .child_exit = -1, .child_signal = SIGTERM });
    ck_assert_int_eq(sm.exit_code, RR_EXIT_TIMEOUT);

    /* Not holding: SIGTSTP is not obeyed either, and a late stop report
     * after the command ended does nothing. */
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_CHILD_STOPPED, .sig = SIGTTIN }), "");
    start(&params);
    ck_assert_str_eq(step((struct rr_run_ev){ .kind = RR_EV_SIGTSTP }), "say:tstp_ignored");
    ck_assert_int_eq(sm.state, RR_RUN_ACQUIRING);
}
END_TEST

static Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("step");

    tcase_add_test(tc, test_init);
    tcase_add_test(tc, test_success);
    tcase_add_test(tc, test_failure_and_min_hold);
    tcase_add_test(tc, test_release_not_sent);
    tcase_add_test(tc, test_give_back);
    tcase_add_test(tc, test_woken_during_acquire);
    tcase_add_test(tc, test_signal_while_waiting);
    tcase_add_test(tc, test_busy_and_wait_deadline);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_once_outcomes);
    tcase_add_test(tc, test_spawn_failures);
    tcase_add_test(tc, test_starting);
    tcase_add_test(tc, test_max_runtime);
    tcase_add_test(tc, test_lost_during_stopping);
    tcase_add_test(tc, test_certain_loss);
    tcase_add_test(tc, test_guard_died);
    tcase_add_test(tc, test_renewals);
    tcase_add_test(tc, test_stop_and_continue);
    tcase_add_test(tc, test_child_stop_job_control);
    tcase_add_test(tc, test_no_job_control);
    tcase_add_test(tc, test_release_retried);
    tcase_add_test(tc, test_release_unrecorded);
    tcase_add_test(tc, test_release_not_retried);
    tcase_add_test(tc, test_release_policy);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "run", run_suite, NULL, NULL };
