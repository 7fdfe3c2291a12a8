/* acquire_step.h — one acquisition round over n masters as a state
 * machine, pure: events in, the next state and the actions out. lock.c
 * turns what happened (a master's answer, a send that could not be
 * written) into one event, calls rr_acq_step, and executes the actions in
 * order; no step of the round is decided anywhere else. An action that
 * leads to an event (a send that failed, a callback that closes the
 * connections) queues it: it is stepped after the actions of the step
 * that caused it, never inside it.
 *
 *   VOTING --quorum, fences equal----------------------------+
 *     |   \--quorum, fences differ--> FENCING --raised-------+
 *     |                                  | too few, too late  |
 *     | no lock, something taken         v                    v
 *     +--------------------------> GIVING_BACK --> (MARKING) --> REPORTED --> OVER
 *
 * VOTING: the acquire script is out to every master. The round is decided
 * when every master answered, or as soon as a quorum said OK where no
 * master can answer DONE or STALE (params.early). Then: a quorum whose
 * fences differ raises the masters behind (FENCING); a round without the
 * lock gives back what it took (GIVING_BACK); a round that found a dead
 * run and no holder marks its record abandoned (MARKING); the result is
 * reported (REPORTED), and the round is OVER once every master it did not
 * wait for has answered too (and been given the round's fence, when it
 * took the lock with another). Times are the monotonic rr_now_ms clock.
 */
#ifndef RR_ACQUIRE_STEP_H
#define RR_ACQUIRE_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "rr.h"
#include "votes.h"

enum rr_acq_state {
    RR_AQ_VOTING,
    RR_AQ_FENCING,          /* fence.lua to the OK masters behind the largest fence */
    RR_AQ_GIVING_BACK,      /* release.lua to every master our acquire reached */
    RR_AQ_MARKING,          /* abandon.lua where a dead run's record was reported */
    RR_AQ_REPORTED,         /* the callback ran; answers still to come */
    RR_AQ_OVER,             /* nothing more to come: the round is freed */
};

enum rr_acq_event {
    RR_AQ_EV_NOT_SENT,      /* idx: the acquire could not be written to it */
    RR_AQ_EV_ANSWER,        /* idx, vote, fence, stale, abandoned; text if vote is ERR */
    RR_AQ_EV_NO_ANSWER,     /* idx, unsent, closed, text: a timeout, a failed connection */
    RR_AQ_EV_FENCE,         /* idx, ok; text if not ok */
    RR_AQ_EV_FENCE_NOT_SENT,   /* idx */
    RR_AQ_EV_GAVE_BACK,     /* every master answered the give-back (or failed) */
    RR_AQ_EV_GIVE_BACK_NOT_SENT,
    RR_AQ_EV_MARKED,        /* idx, abandoned: abandon.lua's answer */
    RR_AQ_EV_MARK_NOT_SENT, /* idx */
};

/* One event; fields an event does not use are ignored. text is borrowed
 * for the step only (the machine copies what it keeps). */
struct rr_acq_ev {
    enum rr_acq_event kind;
    int64_t now;
    int idx;                  /* the master, 0..n-1 */
    enum rr_vote_kind vote;   /* ANSWER: OK, BUSY, DONE, STALE or ERR (a write
                               * that too few replicas confirmed is ERR) */
    long long fence;          /* ANSWER, OK: the master's fence */
    bool stale;               /* ANSWER: a dead run's record, not marked yet */
    bool abandoned;           /* ANSWER, OK: it marked one itself; MARKED: marked */
    bool unsent;              /* NO_ANSWER: never even written */
    bool closed;              /* NO_ANSWER: we closed the connection ourselves */
    bool twin;                /* ANSWER: the master is a server another master is
                               * too (text says which): no vote, and in VOTING
                               * the round fails as a refusal of our configuration */
    bool ok;                  /* FENCE: raised */
    const char *text;         /* an error, the master named (for the round's message) */
};

/* What the release must know of a master's acquire (the tombstone, the
 * give-back's skip): answered; or unsure, it may still run; or unsent. */
enum rr_acq_mark { RR_AQ_ANSWERED, RR_AQ_UNSURE, RR_AQ_UNSENT };

enum rr_acq_act {
    RR_AQ_ACT_ENTER,        /* from -> to (the state already changed) */
    RR_AQ_ACT_MARK,         /* idx, mark */
    RR_AQ_ACT_DECIDE,       /* result, elapsed_ms, validity_ms, the counts, fence,
                             * text: the round's first error ("" none): fill the result */
    RR_AQ_ACT_SEND_FENCE,   /* idx, fence (RR_AQ_EV_FENCE_NOT_SENT if it cannot) */
    RR_AQ_ACT_TIMED,        /* elapsed_ms, validity_ms after the fences */
    RR_AQ_ACT_FAIL,         /* text: a round that had its quorum fails after all */
    RR_AQ_ACT_GIVE_BACK,    /* stands (RR_AQ_EV_GIVE_BACK_NOT_SENT if it cannot) */
    RR_AQ_ACT_SEND_MARK,    /* idx (RR_AQ_EV_MARK_NOT_SENT if it cannot) */
    RR_AQ_ACT_ABANDONED,    /* a dead run's record was marked abandoned */
    RR_AQ_ACT_LATE_OK,      /* idx: a master the round did not wait for took the lock */
    RR_AQ_ACT_LATE_ERR,     /* idx: one failed */
    RR_AQ_ACT_FOLD_LATE,    /* the final counts into the result, before the callback */
    RR_AQ_ACT_REPORT,       /* the callback, with the result */
    RR_AQ_ACT_DEGRADED,     /* the degraded callback: masters failed after REPORT */
    RR_AQ_ACT_FREE,         /* free the round once these actions are done */
};

struct rr_acq_action {
    enum rr_acq_act kind;
    enum rr_acq_state from, to;
    int idx;
    enum rr_acq_mark mark;
    enum rr_acq result;
    int64_t elapsed_ms, validity_ms;
    int n_ok, n_busy, n_done, n_stale, n_err;
    long long fence;
    bool refused;             /* DECIDE: two masters are one server (text) */
    bool stands;              /* GIVE_BACK: the round had its quorum: the
                               * 'abandoned' entries it added stand */
    const char *text;         /* valid until the next step */
};

#define RR_AQ_MAX_ACTIONS (2 * RR_MAX_ENDPOINTS + 8)

struct rr_acq_actions {
    int n;
    struct rr_acq_action a[RR_AQ_MAX_ACTIONS];
};

struct rr_acq_params {
    int n;                    /* masters, 1..RR_MAX_ENDPOINTS */
    int64_t ttl_ms;
    /* No master can answer DONE or STALE (no --once, no refusal of stale
     * records): a quorum of OK decides before the others answer. */
    bool early;
};

/* The machine. Every field is written by rr_acq_init and rr_acq_step
 * only. */
struct rr_acq_sm {
    struct rr_acq_params p;
    enum rr_acq_state state;
    int64_t t0;
    enum rr_vote_kind vote[RR_MAX_ENDPOINTS];   /* PENDING until answered */
    long long fence[RR_MAX_ENDPOINTS];
    bool dead_run[RR_MAX_ENDPOINTS];  /* abandon.lua may mark a record there */
    int unanswered;           /* acquire answers still to come */
    enum rr_acq result;       /* after VOTING; a failed fence sync makes it ERROR */
    bool had_quorum;          /* the decision was OK */
    int n_busy;               /* at the decision */
    int pending;              /* FENCING, MARKING: answers still to come */
    int fenced, fence_answers;   /* FENCING: masters at the fence; answers */
    bool late_err;            /* a master failed after the decision */
    long long max_fence;      /* the decision's: the command's fence */
    /* A master that took the lock after the decision with another fence
     * is sent fence.lua too (its records then show the command's fence);
     * the round waits for those answers before it is OVER. */
    bool late_fence[RR_MAX_ENDPOINTS];
    int late_fences;
    bool twin;                /* VOTING: two masters are one server (twin_err) */
    char twin_err[RR_ERRLEN];
    char err[RR_ERRLEN];      /* VOTING: the round's first error */
    char fence_err[RR_ERRLEN];   /* FENCING: its first error */
};

/* Start a round sent at now: every master PENDING. */
void rr_acq_init(struct rr_acq_sm *sm, const struct rr_acq_params *p, int64_t now);

/* Decide: move sm to its next state and fill out with the actions to
 * execute, in order (out->n 0: nothing to do). Pure. */
void rr_acq_step(struct rr_acq_sm *sm, const struct rr_acq_ev *ev, struct rr_acq_actions *out);

/* "voting", "fencing", ... */
const char *rr_acq_state_name(enum rr_acq_state s);

#endif
