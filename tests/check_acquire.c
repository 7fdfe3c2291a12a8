/* check_acquire.c — the acquisition round's machine (acquire_step.c)
 * driven without Redis: a master's answers in, the next state and the
 * actions out. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "acquire_step.h"
#include "unit.h"

#define T0 1000
#define TTL 30000

static struct rr_acq_sm sm;
static struct rr_acq_actions out;

/* The actions as one line: "answered:1 unsure:2 decide:ok enter:reported". */
static const char *acts(void)
{
    static const char *const marks[] = {
        [RR_AQ_ANSWERED] = "answered", [RR_AQ_UNSURE] = "unsure", [RR_AQ_UNSENT] = "unsent",
    };
    static const char *const results[] = {
        [RR_ACQ_OK] = "ok",       [RR_ACQ_BUSY] = "busy", [RR_ACQ_DONE] = "done",
        [RR_ACQ_STALE] = "stale", [RR_ACQ_ERROR] = "error",
    };
    static char buf[1024];
    size_t o = 0;

    buf[0] = '\0';
    for (int i = 0; i < out.n; i++) {
        const struct rr_acq_action *a = &out.a[i];
        const char *sp = i ? " " : "";
        switch (a->kind) {
        case RR_AQ_ACT_ENTER:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%senter:%s", sp,
                                  rr_acq_state_name(a->to));
            break;
        case RR_AQ_ACT_MARK:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s:%d", sp, marks[a->mark], a->idx);
            break;
        case RR_AQ_ACT_DECIDE:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sdecide:%s", sp, results[a->result]);
            break;
        case RR_AQ_ACT_SEND_FENCE:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sfence:%d", sp, a->idx);
            break;
        case RR_AQ_ACT_TIMED:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%stimed", sp);
            break;
        case RR_AQ_ACT_FAIL:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sfail", sp);
            break;
        case RR_AQ_ACT_GIVE_BACK:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sgive_back%s", sp,
                                  a->stands ? ":stands" : "");
            break;
        case RR_AQ_ACT_SEND_MARK:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sabandon:%d", sp, a->idx);
            break;
        case RR_AQ_ACT_ABANDONED:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sabandoned", sp);
            break;
        case RR_AQ_ACT_LATE_OK:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%slate_ok:%d", sp, a->idx);
            break;
        case RR_AQ_ACT_LATE_ERR:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%slate_err:%d", sp, a->idx);
            break;
        case RR_AQ_ACT_FOLD_LATE:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sfold", sp);
            break;
        case RR_AQ_ACT_REPORT:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sreport", sp);
            break;
        case RR_AQ_ACT_DEGRADED:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sdegraded", sp);
            break;
        case RR_AQ_ACT_FREE:
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%sfree", sp);
            break;
        }
    }
    return buf;
}

static const struct rr_acq_action *find(enum rr_acq_act kind)
{
    for (int i = 0; i < out.n; i++)
        if (out.a[i].kind == kind)
            return &out.a[i];
    return NULL;
}

static void start(int n, bool early)
{
    struct rr_acq_params p = { .n = n, .ttl_ms = TTL, .early = early };

    rr_acq_init(&sm, &p, T0);
}

static const char *step(struct rr_acq_ev ev)
{
    if (!ev.now)
        ev.now = T0 + 10;
    rr_acq_step(&sm, &ev, &out);
    return acts();
}

/* A master's answers. */
static const char *ok(int i, long long fence)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = i, .vote = RR_VOTE_OK,
                                    .fence = fence });
}

static const char *vote(int i, enum rr_vote_kind v, bool stale)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = i, .vote = v,
                                    .stale = stale });
}

static const char *refused(int i, const char *text)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = i, .vote = RR_VOTE_ERR,
                                    .text = text });
}

static const char *timeout(int i)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_NO_ANSWER, .idx = i,
                                    .text = "no reply in time" });
}

static const char *fence(int i, bool raised, int64_t now)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_FENCE, .idx = i, .ok = raised, .now = now,
                                    .text = raised ? NULL : "m: cannot raise the fencing counter" });
}

static const char *kind(enum rr_acq_event k, int i)
{
    return step((struct rr_acq_ev){ .kind = k, .idx = i });
}

START_TEST(test_single)
{
    start(1, true);
    ck_assert_int_eq(sm.state, RR_AQ_VOTING);
    ck_assert_str_eq(ok(0, 7), "answered:0 decide:ok enter:reported report enter:over free");
    const struct rr_acq_action *d = find(RR_AQ_ACT_DECIDE);
    ck_assert_int_eq(d->n_ok, 1);
    ck_assert_int_eq(d->fence, 7);
    ck_assert_int_eq(d->elapsed_ms, 10);
    ck_assert_int_eq(d->validity_ms, rr_lock_validity(TTL, 10));
    ck_assert_str_eq(d->text, "");

    /* BUSY: nothing was taken, nothing to give back. */
    start(1, true);
    ck_assert_str_eq(vote(0, RR_VOTE_BUSY, false),
                     "answered:0 decide:busy enter:reported report enter:over free");
    /* An error: the master may have run it; it is given back. */
    start(1, true);
    ck_assert_str_eq(timeout(0), "unsure:0 decide:error enter:giving_back give_back");
    ck_assert_str_eq(find(RR_AQ_ACT_DECIDE)->text, "no reply in time");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:reported report enter:over free");
}
END_TEST

/* A quorum of OK decides before the last master: it answers later. */
START_TEST(test_early_decision)
{
    start(3, true);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(ok(1, 7), "answered:1 unsure:2 decide:ok enter:reported report");
    ck_assert_int_eq(find(RR_AQ_ACT_DECIDE)->n_ok, 2);
    ck_assert_int_eq(sm.unanswered, 1);
    /* The lock is ours there too: counted for the release. */
    ck_assert_str_eq(ok(2, 7), "answered:2 late_ok:2 enter:over free");
    ck_assert_int_eq(sm.state, RR_AQ_OVER);

    /* A late master with another fence is given the command's (its
     * records then show it); the round waits for that answer too. */
    start(3, true);
    ck_assert_str_eq(ok(0, 9), "answered:0");
    ck_assert_str_eq(ok(1, 9), "answered:1 unsure:2 decide:ok enter:reported report");
    ck_assert_str_eq(ok(2, 5), "answered:2 late_ok:2 fence:2");
    ck_assert_int_eq(find(RR_AQ_ACT_SEND_FENCE)->fence, 9);
    ck_assert_int_eq(sm.state, RR_AQ_REPORTED);
    ck_assert_str_eq(fence(2, false, T0 + 20), "enter:over free");
    /* ... also while the quorum's own fences are raised (FENCING), and a
     * fence answer of the quorum is not taken for the late one's. */
    start(3, true);
    ck_assert_str_eq(ok(0, 9), "answered:0");
    ck_assert_str_eq(ok(1, 4), "answered:1 unsure:2 decide:ok enter:fencing fence:1");
    ck_assert_str_eq(ok(2, 12), "answered:2 late_ok:2 fence:2");
    ck_assert_str_eq(fence(1, true, T0 + 20), "timed enter:reported report");
    ck_assert_int_eq(sm.late_fences, 1);
    ck_assert_str_eq(kind(RR_AQ_EV_FENCE_NOT_SENT, 2), "enter:over free");

    /* Without a quorum of OK, every master is waited for. */
    start(3, true);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(vote(1, RR_VOTE_BUSY, false), "answered:1");
    ck_assert_str_eq(ok(2, 7), "answered:2 decide:ok enter:reported report enter:over free");
}
END_TEST

/* One server under two URLs (lock.c tells it from INFO server's run_id):
 * the twin's answer is no vote, and the round fails at once as a refusal
 * of our configuration, giving back what it took; after an early decision
 * it is only a master that failed. */
static const char *twin(int i, enum rr_vote_kind v)
{
    return step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = i, .vote = v, .twin = true,
                                    .text = "--redis: a and b are the same Redis server" });
}

START_TEST(test_twin)
{
    start(3, true);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(twin(1, RR_VOTE_OK),
                     "answered:1 unsure:2 decide:error enter:giving_back give_back");
    const struct rr_acq_action *d = find(RR_AQ_ACT_DECIDE);
    ck_assert(d->refused);
    ck_assert_int_eq(d->n_ok, 1);
    ck_assert_int_eq(d->n_err, 1);
    ck_assert_str_eq(d->text, "--redis: a and b are the same Redis server");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:reported report");
    ck_assert_str_eq(ok(2, 7), "enter:over free");

    /* Another master's error first: the refusal is still what is said. */
    start(3, false);
    ck_assert_str_eq(timeout(0), "unsure:0");
    ck_assert_str_eq(twin(2, RR_VOTE_BUSY),
                     "answered:2 unsure:1 decide:error enter:giving_back give_back");
    ck_assert_str_eq(find(RR_AQ_ACT_DECIDE)->text, "--redis: a and b are the same Redis server");

    /* Late: the quorum of two other servers stands; the twin failed. */
    start(3, true);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(ok(2, 7), "answered:2 unsure:1 decide:ok enter:reported report");
    ck_assert(!find(RR_AQ_ACT_DECIDE)->refused);
    ck_assert_str_eq(twin(1, RR_VOTE_BUSY), "answered:1 late_err:1 degraded enter:over free");
}
END_TEST

/* With --once or --refuse-stale a later DONE or STALE outranks the quorum. */
START_TEST(test_no_early_decision)
{
    start(3, false);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(ok(1, 7), "answered:1");
    ck_assert_str_eq(vote(2, RR_VOTE_DONE, false),
                     "answered:2 decide:done enter:giving_back give_back");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:reported report enter:over free");
}
END_TEST

/* A master that fails after the early decision: before the callback the
 * result says so itself (fold); after it, the degraded callback does. */
START_TEST(test_late_errors)
{
    start(3, true);
    ok(0, 7);
    ck_assert_str_eq(ok(1, 7), "answered:1 unsure:2 decide:ok enter:reported report");
    ck_assert_str_eq(timeout(2), "unsure:2 late_err:2 degraded enter:over free");

    /* Our own closing of the connection is no failure of the master. */
    start(3, true);
    ok(0, 7);
    ok(1, 7);
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_NO_ANSWER, .idx = 2,
                                              .closed = true }),
                     "unsure:2 enter:over free");

    /* Failed while the fences were raised: folded in before the callback. */
    start(3, true);
    ok(0, 5);
    ck_assert_str_eq(ok(1, 7), "answered:1 unsure:2 decide:ok enter:fencing fence:0");
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_NO_ANSWER, .idx = 2,
                                              .unsent = true }),
                     "unsent:2 late_err:2");
    ck_assert_str_eq(fence(0, true, T0 + 20), "timed fold enter:reported report enter:over free");

    /* A refused write (too few replicas) after the decision is a failure
     * too, though the master answered. */
    start(3, true);
    ok(0, 7);
    ok(1, 7);
    ck_assert_str_eq(refused(2, "only 0 of 1 replicas confirmed the lock on m2"),
                     "answered:2 late_err:2 degraded enter:over free");
}
END_TEST

/* Tombstones: the release must know which masters' acquire may still run. */
START_TEST(test_tombstones)
{
    start(3, true);
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_NO_ANSWER, .idx = 0,
                                              .unsent = true, .text = "m0: refused" }),
                     "unsent:0");
    ck_assert_str_eq(timeout(1), "unsure:1");
    ck_assert_str_eq(vote(2, RR_VOTE_BUSY, false), "answered:2 decide:error enter:giving_back "
                     "give_back");
    ck_assert_str_eq(find(RR_AQ_ACT_DECIDE)->text, "m0: refused");

    /* A request never written changes no mark. */
    start(3, true);
    ck_assert_str_eq(kind(RR_AQ_EV_NOT_SENT, 2), "");
    ck_assert_int_eq(sm.vote[2], RR_VOTE_ERR);
    ok(0, 7);
    ck_assert_str_eq(ok(1, 7), "answered:1 decide:ok enter:reported report enter:over free");

    /* A round that no longer holds the lock (its fences failed) owns the
     * marks no more: a late answer leaves them to whoever holds them now. */
    start(3, true);
    ok(0, 5);
    ck_assert_str_eq(ok(1, 7), "answered:1 unsure:2 decide:ok enter:fencing fence:0");
    ck_assert_str_eq(fence(0, false, T0 + 20), "timed fail enter:giving_back give_back:stands");
    ck_assert_str_eq(find(RR_AQ_ACT_FAIL)->text, "m: cannot raise the fencing counter");
    ck_assert_str_eq(ok(2, 7), "");
    ck_assert_str_eq(timeout(2), "");   /* answered already */
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:reported report enter:over free");
}
END_TEST

START_TEST(test_fence_sync)
{
    /* Equal fences: nothing to raise. */
    start(3, false);
    ok(0, 7);
    ok(1, 7);
    ck_assert_str_eq(ok(2, 7), "answered:2 decide:ok enter:reported report enter:over free");

    /* The masters behind are raised to the maximum. */
    start(3, false);
    ok(0, 5);
    ok(1, 6);
    ck_assert_str_eq(ok(2, 7), "answered:2 decide:ok enter:fencing fence:0 fence:1");
    ck_assert_int_eq(find(RR_AQ_ACT_SEND_FENCE)->fence, 7);
    ck_assert_int_eq(find(RR_AQ_ACT_DECIDE)->fence, 7);
    ck_assert_str_eq(fence(1, true, T0 + 20), "");
    ck_assert_str_eq(fence(0, false, T0 + 30), "timed enter:reported report enter:over free");
    ck_assert_int_eq(find(RR_AQ_ACT_TIMED)->elapsed_ms, 30);

    /* Too few at the fence: the round fails and gives back what it took;
     * its 'abandoned' entries stand (it had its quorum). */
    start(3, false);
    ok(0, 5);
    ok(1, 5);
    ck_assert_str_eq(ok(2, 7), "answered:2 decide:ok enter:fencing fence:0 fence:1");
    ck_assert_str_eq(fence(0, false, T0 + 20), "");
    ck_assert_str_eq(fence(1, false, T0 + 20), "timed fail enter:giving_back give_back:stands");
    ck_assert_str_eq(find(RR_AQ_ACT_FAIL)->text, "m: cannot raise the fencing counter");
    ck_assert_int_eq(sm.result, RR_ACQ_ERROR);

    /* The validity ran out meanwhile. */
    start(3, false);
    ok(0, 5);
    ok(1, 7);
    ok(2, 7);
    ck_assert_str_eq(fence(0, true, T0 + TTL), "timed fail enter:giving_back give_back:stands");
    ck_assert_str_eq(find(RR_AQ_ACT_FAIL)->text,
                     "the lock's validity ran out while synchronising the fencing counter");

    /* Nothing could be sent: decided with the masters at the fence. */
    start(3, false);
    ok(0, 5);
    ok(1, 7);
    ck_assert_str_eq(ok(2, 7), "answered:2 decide:ok enter:fencing fence:0");
    ck_assert_str_eq(kind(RR_AQ_EV_FENCE_NOT_SENT, 0), "enter:reported report enter:over free");
    start(3, false);
    ok(0, 5);
    ok(1, 5);
    ok(2, 7);
    ck_assert_str_eq(kind(RR_AQ_EV_FENCE_NOT_SENT, 0), "");
    ck_assert_str_eq(kind(RR_AQ_EV_FENCE_NOT_SENT, 1), "fail enter:giving_back give_back:stands");
    ck_assert_str_eq(find(RR_AQ_ACT_FAIL)->text, "cannot raise the fencing counter");
}
END_TEST

/* A partial quorum: the round waits for every master, counts them all, and
 * gives back what it took. */
START_TEST(test_partial_quorum)
{
    start(5, true);
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(ok(1, 7), "answered:1");
    ck_assert_str_eq(timeout(2), "unsure:2");
    ck_assert_str_eq(refused(3, "m3: NOPERM"), "answered:3");
    ck_assert_str_eq(vote(4, RR_VOTE_BUSY, false),
                     "answered:4 decide:busy enter:giving_back give_back");
    const struct rr_acq_action *d = find(RR_AQ_ACT_DECIDE);
    ck_assert_int_eq(d->n_ok, 2);
    ck_assert_int_eq(d->n_busy, 1);
    ck_assert_int_eq(d->n_err, 2);
    ck_assert_str_eq(d->text, "no reply in time");   /* the first error */
    ck_assert_str_eq(kind(RR_AQ_EV_GIVE_BACK_NOT_SENT, 0),
                     "enter:reported report enter:over free");

    /* Errors alone leave no quorum: ERROR (lock.c names every master, and
     * whether it is a refusal of our configuration). */
    start(3, true);
    ck_assert_str_eq(refused(0, "m0: WRONGPASS"), "answered:0");
    ck_assert_str_eq(refused(1, "m1: WRONGPASS"), "answered:1");
    ck_assert_str_eq(vote(2, RR_VOTE_BUSY, false),
                     "answered:2 decide:error enter:giving_back give_back");
    ck_assert_str_eq(find(RR_AQ_ACT_DECIDE)->text, "m0: WRONGPASS");

    /* A quorum that came too late is no lock. */
    start(3, true);
    ok(0, 7);
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = 1,
                                              .vote = RR_VOTE_OK, .fence = 7,
                                              .now = T0 + TTL }),
                     "answered:1 unsure:2 decide:error enter:giving_back give_back");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:reported report");
    ck_assert_str_eq(ok(2, 7), "enter:over free");   /* not ours: no mark, not counted */
}
END_TEST

/* A dead run's record with no holder: marked abandoned after the round. */
START_TEST(test_abandoned)
{
    start(3, false);
    ck_assert_str_eq(vote(0, RR_VOTE_STALE, true), "answered:0");
    ck_assert_str_eq(vote(1, RR_VOTE_STALE, true), "answered:1");
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_ANSWER, .idx = 2,
                                              .vote = RR_VOTE_OK, .abandoned = true }),
                     "answered:2 decide:stale enter:giving_back give_back");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "enter:marking abandon:0 abandon:1 abandon:2");
    ck_assert_str_eq(step((struct rr_acq_ev){ .kind = RR_AQ_EV_MARKED, .idx = 0,
                                              .abandoned = true }), "abandoned");
    ck_assert_str_eq(kind(RR_AQ_EV_MARK_NOT_SENT, 1), "");
    ck_assert_str_eq(kind(RR_AQ_EV_MARKED, 2), "enter:reported report enter:over free");

    /* DONE with nothing taken: marked at once. */
    start(2, false);
    vote(0, RR_VOTE_DONE, true);
    ck_assert_str_eq(vote(1, RR_VOTE_DONE, false),
                     "answered:1 decide:done enter:marking abandon:0");

    /* A holder somewhere (BUSY): the record may be a live run's. */
    start(3, false);
    vote(0, RR_VOTE_STALE, true);
    vote(1, RR_VOTE_BUSY, false);
    ck_assert_str_eq(vote(2, RR_VOTE_DONE, true),
                     "answered:2 decide:done enter:reported report enter:over free");
}
END_TEST

/* Events that do not belong to the state change nothing. */
START_TEST(test_out_of_place)
{
    start(2, true);
    ck_assert_str_eq(fence(0, true, T0), "");
    ck_assert_str_eq(kind(RR_AQ_EV_GAVE_BACK, 0), "");
    ck_assert_str_eq(kind(RR_AQ_EV_MARKED, 0), "");
    ck_assert_str_eq(ok(5, 7), "");
    ck_assert_str_eq(ok(0, 7), "answered:0");
    ck_assert_str_eq(ok(0, 7), "");
    ck_assert_int_eq(sm.state, RR_AQ_VOTING);
    ck_assert_int_eq(sm.unanswered, 1);
    ck_assert_str_eq(rr_acq_state_name(RR_AQ_GIVING_BACK), "giving_back");
    ck_assert_str_eq(rr_acq_state_name((enum rr_acq_state)99), "?");
}
END_TEST

static Suite *acquire_suite(void)
{
    Suite *s = suite_create("acquire");
    TCase *tc = tcase_create("step");

    tcase_add_test(tc, test_single);
    tcase_add_test(tc, test_early_decision);
    tcase_add_test(tc, test_no_early_decision);
    tcase_add_test(tc, test_twin);
    tcase_add_test(tc, test_late_errors);
    tcase_add_test(tc, test_tombstones);
    tcase_add_test(tc, test_fence_sync);
    tcase_add_test(tc, test_partial_quorum);
    tcase_add_test(tc, test_abandoned);
    tcase_add_test(tc, test_out_of_place);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "acquire", acquire_suite, NULL, NULL };
