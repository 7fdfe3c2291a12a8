/* acquire_step.c — every step of an acquisition round, decided in one
 * place (acquire_step.h). */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "acquire_step.h"

static const char *const state_names[] = {
    [RR_AQ_VOTING] = "voting",           [RR_AQ_FENCING] = "fencing",
    [RR_AQ_GIVING_BACK] = "giving_back", [RR_AQ_MARKING] = "marking",
    [RR_AQ_REPORTED] = "reported",       [RR_AQ_OVER] = "over",
};

const char *rr_acq_state_name(enum rr_acq_state s)
{
    return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

void rr_acq_init(struct rr_acq_sm *sm, const struct rr_acq_params *p, int64_t now)
{
    memset(sm, 0, sizeof(*sm));
    assert(p->n >= 1 && p->n <= RR_MAX_ENDPOINTS);
    sm->p = *p;
    sm->state = RR_AQ_VOTING;
    sm->t0 = now;
    sm->unanswered = p->n;
    for (int i = 0; i < p->n; i++)
        sm->vote[i] = RR_VOTE_PENDING;
}

/* ---- building the action list ---- */

static struct rr_acq_action *push(struct rr_acq_actions *out, enum rr_acq_act kind)
{
    assert(out->n < RR_AQ_MAX_ACTIONS);
    struct rr_acq_action *a = &out->a[out->n++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    return a;
}

static void push_idx(struct rr_acq_actions *out, enum rr_acq_act kind, int idx)
{
    push(out, kind)->idx = idx;
}

static void mark(struct rr_acq_actions *out, int idx, enum rr_acq_mark m)
{
    struct rr_acq_action *a = push(out, RR_AQ_ACT_MARK);

    a->idx = idx;
    a->mark = m;
}

static void enter(struct rr_acq_sm *sm, struct rr_acq_actions *out, enum rr_acq_state s)
{
    struct rr_acq_action *a = push(out, RR_AQ_ACT_ENTER);

    a->from = sm->state;
    a->to = s;
    sm->state = s;
}

/* Keep the first error of a phase. */
static void note(char *err, size_t len, const char *text)
{
    if (!err[0] && text)
        snprintf(err, len, "%s", text);
}

static int count(const struct rr_acq_sm *sm, enum rr_vote_kind k)
{
    int c = 0;

    for (int i = 0; i < sm->p.n; i++)
        c += sm->vote[i] == k;
    return c;
}

/* Does the round hold the lock? Then it owns the release's marks of every
 * master still; a round decided otherwise (given back, perhaps retried by
 * a new round on the same lock) owns them no more. */
static bool holds(const struct rr_acq_sm *sm)
{
    return sm->state != RR_AQ_VOTING && sm->result == RR_ACQ_OK;
}

/* ---- the end of a round ---- */

static void report(struct rr_acq_sm *sm, struct rr_acq_actions *out)
{
    if (sm->late_err && sm->result == RR_ACQ_OK) {
        /* Masters that failed after an early decision, before the
         * callback: the result says so itself. */
        push(out, RR_AQ_ACT_FOLD_LATE);
        sm->late_err = false;
    }
    enter(sm, out, RR_AQ_REPORTED);
    push(out, RR_AQ_ACT_REPORT);
    if (sm->unanswered == 0 && sm->late_fences == 0) {
        enter(sm, out, RR_AQ_OVER);
        push(out, RR_AQ_ACT_FREE);
    }
}

/* acquire.lua writes nothing about a 'running' record with no lock unless
 * it takes the lock, because one master cannot tell a dead run from a live
 * one whose key it lost. After a round that refused (STALE) or skipped
 * (DONE) with no master answering BUSY, nobody holds the lock: the records
 * the masters reported are marked abandoned now (after any give-back). */
static void conclude(struct rr_acq_sm *sm, struct rr_acq_actions *out)
{
    sm->pending = 0;
    if ((sm->result == RR_ACQ_STALE || sm->result == RR_ACQ_DONE) && sm->n_busy == 0)
        for (int i = 0; i < sm->p.n; i++)
            sm->pending += sm->dead_run[i];
    if (sm->pending == 0) {
        report(sm, out);
        return;
    }
    enter(sm, out, RR_AQ_MARKING);
    for (int i = 0; i < sm->p.n; i++)
        if (sm->dead_run[i])
            push_idx(out, RR_AQ_ACT_SEND_MARK, i);
}

/* Give back whatever we took. A master that failed may still have applied
 * the script before its answer was lost, so every master is asked. */
static void give_back(struct rr_acq_sm *sm, struct rr_acq_actions *out)
{
    enter(sm, out, RR_AQ_GIVING_BACK);
    push(out, RR_AQ_ACT_GIVE_BACK)->stands = sm->had_quorum;
}

static void fail(struct rr_acq_sm *sm, struct rr_acq_actions *out, const char *why)
{
    sm->result = RR_ACQ_ERROR;
    push(out, RR_AQ_ACT_FAIL)->text = why;
    give_back(sm, out);
}

/* ---- the decision ---- */

/* Masters hand out fences independently, so the maximum over our quorum may
 * come from a master that the next holder's quorum does not include. Raising
 * every master of our quorum to that maximum before the child starts makes
 * the next holder's quorum, which shares at least one master with ours, draw
 * a larger fence: the fence then strictly increases across holders. */
static void sync_fences(struct rr_acq_sm *sm, struct rr_acq_actions *out, long long max)
{
    sm->fenced = sm->pending = sm->fence_answers = 0;
    sm->fence_err[0] = '\0';
    for (int i = 0; i < sm->p.n; i++)
        if (sm->vote[i] == RR_VOTE_OK) {
            if (sm->fence[i] >= max)
                sm->fenced++;
            else
                sm->pending++;
        }
    if (sm->pending == 0) {
        conclude(sm, out);
        return;
    }
    enter(sm, out, RR_AQ_FENCING);
    for (int i = 0; i < sm->p.n; i++)
        if (sm->vote[i] == RR_VOTE_OK && sm->fence[i] < max) {
            struct rr_acq_action *a = push(out, RR_AQ_ACT_SEND_FENCE);
            a->idx = i;
            a->fence = max;
        }
}

static void decide(struct rr_acq_sm *sm, struct rr_acq_actions *out, int64_t now)
{
    struct rr_acq_action *a;
    long long max = 0;
    int ok = count(sm, RR_VOTE_OK), err = count(sm, RR_VOTE_ERR);

    /* A master still to answer may run our acquire after our release (a
     * re-send, a paused server): it gets a tombstone, as one that never
     * answered does. */
    for (int i = 0; i < sm->p.n; i++)
        if (sm->vote[i] == RR_VOTE_PENDING)
            mark(out, i, RR_AQ_UNSURE);
    for (int i = 0; i < sm->p.n; i++)
        if (sm->vote[i] == RR_VOTE_OK && sm->fence[i] > max)
            max = sm->fence[i];
    a = push(out, RR_AQ_ACT_DECIDE);
    a->elapsed_ms = now - sm->t0;
    a->validity_ms = rr_lock_validity(sm->p.ttl_ms, a->elapsed_ms);
    a->n_ok = ok;
    a->n_busy = sm->n_busy = count(sm, RR_VOTE_BUSY);
    a->n_done = count(sm, RR_VOTE_DONE);
    a->n_stale = count(sm, RR_VOTE_STALE);
    a->n_err = err;
    a->fence = sm->max_fence = max;
    a->text = sm->twin ? sm->twin_err : sm->err;
    a->refused = sm->twin;
    /* One server under two URLs would vote twice: no count can stand. */
    a->result = sm->result = sm->twin ? RR_ACQ_ERROR
                                      : rr_lock_decide(sm->p.n, ok, a->n_busy, a->n_done,
                                                       a->n_stale, err, a->validity_ms);
    sm->had_quorum = sm->result == RR_ACQ_OK;
    if (sm->result == RR_ACQ_OK)
        sync_fences(sm, out, max);
    else if (ok + err == 0)
        conclude(sm, out);   /* nothing was taken: nothing to give back */
    else
        give_back(sm, out);
}

/* Can the round be decided before every master answered? Only where the
 * answers still to come cannot change the outcome: a quorum of OK already,
 * and no master can yet say DONE or STALE, which would outrank it
 * (rr_lock_decide). Then the run starts after the quorum's answers, not
 * the slowest master's. */
static bool certain(const struct rr_acq_sm *sm)
{
    return sm->p.early && count(sm, RR_VOTE_OK) >= rr_lock_quorum(sm->p.n);
}

/* A round that has reported is OVER once nothing more is to come: the
 * acquire answers, and the fence answers of masters that answered late. */
static void maybe_over(struct rr_acq_sm *sm, struct rr_acq_actions *out)
{
    if (sm->unanswered > 0 || sm->late_fences > 0 || sm->state != RR_AQ_REPORTED)
        return;   /* before the callback, report() folds them in */
    if (sm->late_err && holds(sm))
        push(out, RR_AQ_ACT_DEGRADED);
    enter(sm, out, RR_AQ_OVER);
    push(out, RR_AQ_ACT_FREE);
}

/* An answer after the round was decided: the lock is ours on that master
 * too (OK), or it is not (BUSY, an error); either way the renewals and the
 * release go to every master as they do. What it says is kept for the
 * release; an OK with another fence than the command's is given it
 * (fence.lua), as the quorum's masters were. The last one ends a round
 * that has reported. */
static void late(struct rr_acq_sm *sm, const struct rr_acq_ev *ev, struct rr_acq_actions *out,
                 enum rr_vote_kind v)
{
    if (v == RR_VOTE_OK && holds(sm)) {
        push_idx(out, RR_AQ_ACT_LATE_OK, ev->idx);
        if (ev->fence != sm->max_fence) {
            struct rr_acq_action *a = push(out, RR_AQ_ACT_SEND_FENCE);
            a->idx = ev->idx;
            a->fence = sm->max_fence;
            sm->late_fence[ev->idx] = true;
            sm->late_fences++;
        }
    } else if (v == RR_VOTE_ERR && holds(sm) && !ev->closed) {
        sm->late_err = true;
        push_idx(out, RR_AQ_ACT_LATE_ERR, ev->idx);
    }
    maybe_over(sm, out);
}

/* A master's answer to the acquire, or its failure: ev->kind ANSWER,
 * NO_ANSWER or NOT_SENT. */
static void on_vote(struct rr_acq_sm *sm, const struct rr_acq_ev *ev, struct rr_acq_actions *out)
{
    int i = ev->idx;
    enum rr_vote_kind v = ev->kind == RR_AQ_EV_ANSWER && !ev->twin ? ev->vote : RR_VOTE_ERR;

    if (i < 0 || i >= sm->p.n || sm->vote[i] != RR_VOTE_PENDING || v == RR_VOTE_PENDING ||
        sm->state == RR_AQ_OVER)
        return;   /* answered already: cannot happen */
    /* Without an answer we cannot know whether the script ran, or will.
     * After the decision, only a round that holds the lock still owns
     * these marks. A request never written leaves them alone. */
    if (ev->kind != RR_AQ_EV_NOT_SENT && (sm->state == RR_AQ_VOTING || holds(sm)))
        mark(out, i, ev->kind == RR_AQ_EV_ANSWER ? RR_AQ_ANSWERED
                     : ev->unsent ? RR_AQ_UNSENT : RR_AQ_UNSURE);
    sm->vote[i] = v;
    sm->unanswered--;
    if (v == RR_VOTE_OK)
        sm->fence[i] = ev->fence;
    sm->dead_run[i] = ev->kind == RR_AQ_EV_ANSWER &&
                      (ev->stale || (v == RR_VOTE_OK && ev->abandoned));
    if (sm->state != RR_AQ_VOTING) {
        late(sm, ev, out, v);
        return;
    }
    if (v == RR_VOTE_ERR && ev->kind != RR_AQ_EV_NOT_SENT)
        note(sm->err, sizeof sm->err, ev->text);
    if (ev->kind == RR_AQ_EV_ANSWER && ev->twin && !sm->twin) {
        sm->twin = true;
        note(sm->twin_err, sizeof sm->twin_err, ev->text);
    }
    if (sm->unanswered == 0 || certain(sm) || sm->twin)
        decide(sm, out, ev->now);
}

/* All fence answers are in. */
static void fenced(struct rr_acq_sm *sm, struct rr_acq_actions *out, int64_t now)
{
    if (sm->fence_answers == 0) {
        /* Nothing could be sent: decide with what we have. */
        if (sm->fenced >= rr_lock_quorum(sm->p.n))
            conclude(sm, out);
        else
            fail(sm, out, "cannot raise the fencing counter");
        return;
    }
    struct rr_acq_action *a = push(out, RR_AQ_ACT_TIMED);
    a->elapsed_ms = now - sm->t0;
    a->validity_ms = rr_lock_validity(sm->p.ttl_ms, a->elapsed_ms);
    if (sm->fenced >= rr_lock_quorum(sm->p.n) && a->validity_ms > 0)
        conclude(sm, out);
    else
        fail(sm, out, sm->fence_err[0] ? sm->fence_err
             : "the lock's validity ran out while synchronising the fencing counter");
}

void rr_acq_step(struct rr_acq_sm *sm, const struct rr_acq_ev *ev, struct rr_acq_actions *out)
{
    out->n = 0;
    switch (ev->kind) {
    case RR_AQ_EV_NOT_SENT:
    case RR_AQ_EV_ANSWER:
    case RR_AQ_EV_NO_ANSWER:
        on_vote(sm, ev, out);
        break;
    case RR_AQ_EV_FENCE:
    case RR_AQ_EV_FENCE_NOT_SENT:
        if (ev->idx >= 0 && ev->idx < sm->p.n && sm->late_fence[ev->idx]) {
            /* A late master's: its records only, whatever it says. */
            sm->late_fence[ev->idx] = false;
            sm->late_fences--;
            maybe_over(sm, out);
            break;
        }
        if (sm->state != RR_AQ_FENCING)
            break;
        if (ev->kind == RR_AQ_EV_FENCE) {
            sm->fence_answers++;
            if (ev->ok)
                sm->fenced++;
            else
                note(sm->fence_err, sizeof sm->fence_err, ev->text);
        }
        if (--sm->pending == 0)
            fenced(sm, out, ev->now);
        break;
    case RR_AQ_EV_GAVE_BACK:
    case RR_AQ_EV_GIVE_BACK_NOT_SENT:
        if (sm->state == RR_AQ_GIVING_BACK)
            conclude(sm, out);
        break;
    case RR_AQ_EV_MARKED:
    case RR_AQ_EV_MARK_NOT_SENT:
        if (sm->state != RR_AQ_MARKING)
            break;
        if (ev->kind == RR_AQ_EV_MARKED && ev->abandoned)
            push(out, RR_AQ_ACT_ABANDONED);
        if (--sm->pending == 0)
            report(sm, out);
        break;
    }
}
