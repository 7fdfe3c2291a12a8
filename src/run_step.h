/* run_step.h — the run state machine, pure: events in, next state and
 * actions out. run.c turns what happened (a reply, a timer, a signal, the
 * child's end) into one event, calls rr_run_step, and executes the actions
 * in order; no state of the run is decided anywhere else.
 *
 *   ACQUIRING -> STARTING -> RUNNING -> RELEASING -> DONE
 *       |  ^         |    \      |          |  ^  ^
 *       v  |         |     v     v          v  |  |
 *     WAITING        |    STOPPING --+ RETRYING
 *                    |               |        (a release refused for now:
 *                    +-> RELEASING   +-> RELEASING  TRYAGAIN, a half-way
 *                    (nothing ran: late, not found)  slot, a lost reply)
 *
 * STARTING holds the lock while the guard starts the command: the lease
 * is renewed, and a loss, --max-runtime, a signal, a stop reach what
 * starts as they would the command (the guard takes requests in order,
 * after the spawn; the command's process has every signal blocked until
 * right before its exec).
 *
 * Times are the monotonic rr_now_ms clock, given with each event.
 */
#ifndef RR_RUN_STEP_H
#define RR_RUN_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"

enum rr_run_state {
    RR_RUN_ACQUIRING,
    RR_RUN_WAITING,
    RR_RUN_STARTING,        /* the lock is ours; the command is being started */
    RR_RUN_RUNNING,
    RR_RUN_STOPPING,
    RR_RUN_RELEASING,
    RR_RUN_RETRYING,        /* the release is retried; the lock still renewed */
    RR_RUN_DONE,
};

enum rr_run_event {
    RR_EV_START,            /* set up: take the lock */
    RR_EV_SETUP_FAILED,     /* text: why; code: the exit status (0: 70) */
    RR_EV_ACQ_OK,           /* slot, fence, validity_ms, abandoned */
    RR_EV_ACQ_BUSY,         /* rank, pttl */
    RR_EV_ACQ_DONE,         /* --once ID already succeeded */
    RR_EV_ACQ_STALE,        /* the previous run died mid-way, refuse */
    RR_EV_ACQ_ERROR,        /* rank, pttl, text: the first error */
    RR_EV_ACQ_REFUSED,      /* the server refused our configuration; text */
    RR_EV_ACQ_NOT_SENT,     /* the acquire request could not be sent */
    RR_EV_WOKEN,            /* a release message: it may be our turn */
    RR_EV_RETRY,            /* the waiter's timer */
    RR_EV_LEFT,             /* we left the queue (or never were in it) */
    RR_EV_CHILD_STARTED,
    RR_EV_CHILD_LATE,       /* the lease left less than the grace at exec; text */
    RR_EV_CHILD_FAILED,     /* spawn_rc (-127, -126, -1), text */
    RR_EV_CHILD_EXITED,     /* code, child_exit, child_signal, lease_ran_out, guard_pid */
    RR_EV_CHILD_STOPPED,    /* sig: the command's stop signal; job_control, terminal */
    RR_EV_RENEW_DUE,        /* the renew timer */
    RR_EV_RENEW_NOT_SENT,
    RR_EV_RENEWED,          /* sent_ms, valid_until */
    RR_EV_RENEW_FAILED,     /* no quorum of answers; text */
    RR_EV_RENEW_LOST,       /* certain loss: the key is gone or another's; text */
    RR_EV_LOST_DEADLINE,    /* the lost timer: the lease may be running out */
    RR_EV_MAX_RUNTIME,
    RR_EV_SIGNAL,           /* sig: a terminating (or USR) signal */
    RR_EV_SIGTSTP,          /* job_control, terminal */
    RR_EV_CONTINUED,        /* SIGCONT, or back from our own stop; lease_ran_out */
    RR_EV_RELEASED,         /* freed, unlanded; text */
    RR_EV_RELEASE_NOT_SENT,
    RR_EV_RELEASE_DUE,      /* the release retry timer */
};

/* One event and the data its decision needs; fields an event does not use
 * are ignored. text is borrowed for the step and its actions only. */
struct rr_run_ev {
    enum rr_run_event kind;
    int64_t now;
    const char *text;
    int slot;
    long long fence;
    int64_t validity_ms;
    bool abandoned;
    long long rank;           /* BUSY/ERROR: our place in the queue, -1 not queued */
    int64_t pttl;             /* BUSY/ERROR: the holder's lease left, -1 unknown */
    int spawn_rc;
    int code;                 /* CHILD_EXITED: shell-style (128+N for signal N) */
    int child_exit;           /* CHILD_EXITED: exit status, -1 if signalled */
    int child_signal;         /* CHILD_EXITED: 0 if it exited */
    bool lease_ran_out;       /* the guard stopped the command at the lease's end */
    long guard_pid;           /* CHILD_EXITED: the guard died first (its pid), else 0 */
    int64_t sent_ms, valid_until;
    int sig;
    bool freed;
    bool unlanded;            /* RELEASED: no quorum answered (!rr_release_landed) */
    /* CHILD_STOPPED, SIGTSTP: can a shell continue us after a stop (a
     * controlling terminal, and we are a job of it: tty.h); is there a
     * terminal at all (for the message). */
    bool job_control, terminal;
};

/* What a user is told; audit.h formats each one. */
enum rr_run_msg {
    RR_MSG_SETUP,             /* text */
    RR_MSG_ACQUIRE_NOT_SENT,
    RR_MSG_ABANDONED,
    RR_MSG_WAITED,
    RR_MSG_ACQUIRED,
    RR_MSG_WAITING,           /* once, the first busy answer of a --wait */
    RR_MSG_BUSY,
    RR_MSG_SKIPPED,
    RR_MSG_STALE,
    RR_MSG_CONFIG,            /* text */
    RR_MSG_UNAVAILABLE_WAIT,  /* once per run; text */
    RR_MSG_UNAVAILABLE,       /* text, with a hint */
    RR_MSG_LATE,              /* text */
    RR_MSG_EXEC_FAILED,       /* text */
    RR_MSG_CHILD_EXIT,        /* n: the shell-style status */
    RR_MSG_LEASE_RAN_OUT,
    RR_MSG_GUARD_DIED,        /* n: the guard's pid */
    RR_MSG_LOST,              /* reason, text (certain loss), n: 1 killed, 0 stopping */
    RR_MSG_TIMEOUT,
    RR_MSG_RENEWED_AGAIN,     /* n: failures before */
    RR_MSG_RENEWED,           /* n: round trip ms */
    RR_MSG_RENEW_FAILED,      /* text, n: 1 first of an outage */
    RR_MSG_FORWARDED,         /* n: the signal */
    RR_MSG_STOPPED,           /* n: lease left ms */
    RR_MSG_TTY_STOP,          /* sig: SIGTTIN or SIGTTOU stopped the command; we stop with it */
    RR_MSG_CHILD_STOPPED,     /* sig: another process stopped the command (SIGSTOP) */
    RR_MSG_CHILD_CONTINUED,   /* sig, terminal, n: 1 the first time: no job control, continued */
    RR_MSG_TSTP_IGNORED,      /* terminal, n: 1 the first time: no job control, not stopping */
    RR_MSG_MIN_HOLD,          /* n: hold ms */
    RR_MSG_RELEASE_FAILED,    /* text */
    RR_MSG_RELEASE_NOT_SENT,
    RR_MSG_RELEASED,          /* n: 1 the lock was freed */
    RR_MSG_RELEASE_RETRY,     /* text, n: 1 the first refusal, ms: lease left */
    RR_MSG_RELEASE_LANDED,    /* n: attempts */
    RR_MSG_UNRECORDED,        /* text: the last error; n: the command's status */
};

/* Why the lock is lost (RR_MSG_LOST). */
enum rr_run_loss {
    RR_LOSS_TAKEN,            /* certain: text says where */
    RR_LOSS_NO_QUORUM,        /* renewals failed until the lease's end */
    RR_LOSS_STOPPED,          /* we were stopped longer than the lease */
};

enum rr_run_act {
    RR_ACT_ENTER,             /* from -> to (state already changed; for the log) */
    RR_ACT_SAY,               /* msg, n, text, loss */
    RR_ACT_ACQUIRE,           /* send an acquire (RR_EV_ACQ_NOT_SENT if it cannot) */
    RR_ACT_WAITER_STOP,       /* we hold the lock: no more wake-ups */
    RR_ACT_WAIT,              /* sleep: rank, pttl, backoff, left (ms until --wait ends) */
    RR_ACT_LEAVE,             /* leave the queue; RR_EV_LEFT when done */
    RR_ACT_START_CHILD,       /* RR_EV_CHILD_STARTED, _LATE or _FAILED */
    RR_ACT_FORWARD,           /* sig to the command */
    RR_ACT_STOP_CHILD,        /* TERM, KILL after ms */
    RR_ACT_KILL_CHILD,        /* KILL now */
    RR_ACT_PAUSE_CHILD,       /* the job stops: SIGSTOP to the command, its cgroup frozen */
    RR_ACT_RESUME_CHILD,      /* thawed, the terminal back to it if we have it, SIGCONT */
    RR_ACT_SET_DEADLINE,      /* ms: the lease's new end, for the guard */
    RR_ACT_STOP_SELF,         /* raise SIGSTOP; RR_EV_CONTINUED when continued */
    RR_ACT_ARM_RENEW,         /* ms */
    RR_ACT_ARM_LOST,          /* ms */
    RR_ACT_ARM_TIMEOUT,       /* ms */
    RR_ACT_DISARM_RENEW,
    RR_ACT_DISARM_LOST,
    RR_ACT_DISARM_TIMEOUT,
    RR_ACT_RENEW,             /* send a renewal (RR_EV_RENEW_NOT_SENT if it cannot) */
    RR_ACT_RELEASE,           /* ms: --min-hold left (RR_EV_RELEASE_NOT_SENT if it cannot) */
    RR_ACT_ARM_RELEASE,       /* ms: RR_EV_RELEASE_DUE then */
    RR_ACT_DISARM_RELEASE,
    RR_ACT_FINISH,            /* code: close everything; the loop ends */
};

struct rr_run_action {
    enum rr_run_act kind;
    enum rr_run_state from, to;
    enum rr_run_msg msg;
    enum rr_run_loss loss;
    const char *text;
    long long n;
    int64_t ms;
    int sig;
    int code;
    bool terminal;            /* RR_MSG_CHILD_CONTINUED, _TSTP_IGNORED */
    /* RR_ACT_WAIT */
    long long rank;
    int64_t pttl, backoff, left;
};

#define RR_RUN_MAX_ACTIONS 16

struct rr_run_actions {
    int n;
    struct rr_run_action a[RR_RUN_MAX_ACTIONS];
};

/* The configuration the decisions need (from struct rr_config). */
struct rr_run_params {
    int64_t ttl_ms;
    int64_t renew_ms;         /* --renew */
    int64_t kill_after_ms;
    int64_t wait_ms;          /* 0 none, RR_INF forever */
    int64_t timeout_ms;       /* --max-runtime: 0 or RR_INF none */
    int64_t min_hold_ms;
    int conflict_exit_code;
};

/* The machine. Every field is written by rr_run_sm_init and rr_run_step
 * only; run.c reads them (the report, the release's record). */
struct rr_run_sm {
    struct rr_run_params p;
    enum rr_run_state state;
    int exit_code;
    enum rr_job_status status;   /* the outcome; NONE gives an acquisition back */
    int child_exit;              /* -1 when the child never ran */
    int signal;
    long long fence;
    int slot;                    /* --limit: REDLOCK_SLOT */
    int64_t t_start, wait_deadline;   /* INT64_MAX: wait forever */
    int64_t wait_ms;             /* until the lock was ours (or given up) */
    int64_t backoff_ms;
    int64_t renew_ms, stop_grace_ms;  /* --renew and --kill-after, fitted to the lease */
    int64_t acquired_at;
    int64_t valid_until;         /* the lease's end as we must assume it */
    bool woken;                  /* a wake-up came while an acquire was in flight */
    bool leaving;                /* leaving the queue, then finish with leave_code */
    int leave_code;
    int abort_signal;            /* a terminating signal while acquiring */
    bool warned_unavailable;
    bool said_waiting;
    bool renew_in_flight;
    int renew_failures;          /* in a row */
    enum rr_job_status final_status;  /* our reason to stop (lost, timeout); NONE */
    int final_code;
    bool child_started;
    int release_tries;           /* release requests sent */
    bool said_tty_stop;          /* RR_MSG_TTY_STOP, once */
    bool said_child_stop;        /* RR_MSG_CHILD_STOPPED, once */
    bool own_stop_pending;       /* our PAUSE_CHILD's SIGSTOP: its report is ours */
    long long child_continued;   /* stops of the command undone (no job control) */
    long long tstp_ignored;      /* SIGTSTPs not obeyed (no job control) */
};

/* Initialise sm in ACQUIRING for a run that starts at now. */
void rr_run_sm_init(struct rr_run_sm *sm, const struct rr_run_params *p, int64_t now);

/* Decide: move sm to its next state and fill out with the actions to
 * execute, in order (out->n 0: nothing to do). Pure. */
void rr_run_step(struct rr_run_sm *sm, const struct rr_run_ev *ev, struct rr_run_actions *out);

/* Did a release reach enough masters to stand, with errors of n? (A
 * master that answered wrote what it could, idempotently: release.lua.)
 * Pure. */
bool rr_release_landed(int n, int errors);

/* The pause before release attempt tries + 1 (tries >= 1), never past
 * left_ms (the lease left). Pure. */
int64_t rr_release_backoff(int tries, int64_t left_ms);

/* "acquiring", "waiting", ... */
const char *rr_run_state_name(enum rr_run_state s);

#endif
