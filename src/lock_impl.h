/* lock_impl.h — what lock.c and lock_extend.c share: the lock's state and
 * one operation over the masters. Private to those two files. */
#ifndef RR_LOCK_IMPL_H
#define RR_LOCK_IMPL_H

#include "lock.h"
#include "scripts.h"

struct rr_lock {
    struct rr_svc **conns;
    int n;
    struct rr_lock_opts o;
    struct rr_job_keys keys;
    char token[33];
    char void_key[352];            /* the tombstone of this attempt's token */
    char void_ms[24];              /* how long a tombstone is kept */
    char ttl[24], state_ttl[24], once_ttl[24], pid[24];
    char host[128];
    char contain[8];               /* "cgroup", "tree", or "" */
    char once_id[RR_ONCE_MAX + 1];
    char waiter[48], waiter_key[400], qttl[24], limit[12], ticket_s[24];
    long long ticket;              /* our arrival ticket: the largest seen */
    char base_lock[320], base_state[320];   /* --limit slot 1 */
    int slot;                      /* after OK: the --limit slot we hold; 0 none */
    long long fence;               /* after OK: ours, for the history */
    long long *started_ms;         /* per master, Redis TIME at acquire */
    char masters_ok[12], masters_total[12];   /* after OK: the quorum we had */
    char failed[RR_ERRLEN * 2];    /* after OK: the masters that failed, and why */
    bool *unsure;                  /* per master: our acquire was never answered */
    bool *unsent;                  /* per master: our acquire was never even written */
    rr_acquire_fn degraded_fn;     /* rr_lock_on_degraded */
    void *degraded_arg;
};

enum op_kind { OP_ACQUIRE, OP_EXTEND, OP_RELEASE };

struct op;

/* The per-master callback argument of one operation. */
struct slot {
    struct op *op;
    int idx;
};

struct op {
    struct rr_lock *lk;
    enum op_kind kind;
    int pending;
    int64_t t0;
    void *cb;
    void *arg;
    struct slot *slots;
    struct rr_vote *votes;        /* OP_ACQUIRE */
    int ok, mismatch, err, released, written;
    bool reported;                /* OP_EXTEND: the callback has run */
    bool decided_ok;              /* OP_ACQUIRE: the round had a quorum */
    bool decided;                 /* OP_ACQUIRE: decide() ran */
    bool finished;                /* OP_ACQUIRE: its callback ran; freed once acq_left is 0 */
    int acq_left;                 /* OP_ACQUIRE: acquire replies still to come */
    bool late_err;                /* OP_ACQUIRE: a master failed after the decision */
    void (*after_release)(struct op *op);   /* a give-back's next step */
    bool marked;                  /* OP_ACQUIRE: abandon.lua was sent */
    char errmsg[RR_ERRLEN];
    /* After a failed acquisition, the result waits for the clean-up. */
    struct rr_acquire_result res;
};

struct op *op_new(struct rr_lock *lk, enum op_kind kind, void *cb, void *arg);
void op_free(struct op *op);
/* Keep the first error of an operation (see lock.c). */
void note_error(struct op *op, int idx, int status, const char *what);
/* Inside a write's callback on c, which WAIT did not confirm enough. */
void not_synced(const struct rr_svc *c, const char *what, char *buf, size_t len);
/* Send one script to every master; returns how many sends were accepted. */
/* Send release.lua to every master for op (a run's release, or an
 * acquisition's give-back); when all answered, op->after_release if set
 * (lock.c's end of an acquisition), else op's rr_release_fn. -1 if none
 * could be sent (lock_release.c). */
int start_release(struct rr_lock *lk, struct op *op, const struct rr_release_info *ri);

int send_all(struct op *op, enum rr_script s, rr_svc_reply_fn cb, int nkeys,
             const char *const *keys, int nargs, const char **args, int sharded_arg);

#endif
