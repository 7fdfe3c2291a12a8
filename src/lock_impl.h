/* lock_impl.h — what the files of the lock share: the lock's state and one
 * operation over the masters. Private to lock.c (the acquisition),
 * lock_extend.c, lock_release.c and lock_op.c. lock.c builds on
 * lock_release.c, and all three on lock_op.c, never the other way. */
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
    char ttl[24], state_ttl[24], once_ttl[24], pid[24], attempts[12];
    char host[128];
    char contain[8];               /* "cgroup", "tree", or "" */
    char command_fp[17];           /* the command's fingerprint, or "" */
    char once_id[RR_ONCE_MAX + 1];
    char once_pattern[RR_ONCE_MAX * 4 + 1];   /* "" none, or expanded already */
    rr_acquire_fn clock_cb;        /* the acquisition that waits for TIME */
    void *clock_arg;
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
    /* One vote per server (lock.c): with several masters, each one's INFO
     * server run_id, asked in front of its first acquire; "" unknown. */
    char run_id[RR_MAX_ENDPOINTS][RR_RUN_ID_LEN + 1];
    bool ident_done[RR_MAX_ENDPOINTS];   /* known, or INFO refused: not asked again */
    bool twin[RR_MAX_ENDPOINTS];         /* the same server as another master: no vote */
    struct rr_lock_ident { struct rr_lock *lk; int idx; } ident[RR_MAX_ENDPOINTS];
};

struct op;

/* The per-master callback argument of one operation. */
struct slot {
    struct op *op;
    int idx;
};

/* The operator a renewal names (renew.lua: user@host:pid), cut to fit. */
#define RR_REVOKED_BY_LEN 160

/* One operation over the masters: a renewal, a release, a give-back, or
 * the first member of an acquisition round (lock.c). */
struct op {
    struct rr_lock *lk;
    int pending;                  /* answers still to come */
    int64_t t0;
    rr_extend_fn extend_cb;       /* a renewal's */
    rr_release_fn release_cb;     /* a release's, a give-back's */
    void *arg;
    struct slot *slots;
    int ok, mismatch, err, released, written;
    bool reported;                /* a renewal: its callback has run */
    char errmsg[RR_ERRLEN];       /* the first error */
    char revoked_by[RR_REVOKED_BY_LEN];   /* a renewal: who --release'd the lock */
};

/* lock_op.c: an operation of size bytes (at least sizeof(struct op), the
 * op first), its slots set up; NULL out of memory. */
struct op *rr_op_new(struct rr_lock *lk, size_t size, void *arg);
void rr_op_free(struct op *op);
/* The error of master idx's request as a sentence for the user: the
 * connection's own words when it failed on the wire, else the master's
 * name and what. */
void rr_lock_error_text(const struct rr_lock *lk, int idx, int status, const char *what,
                        char *buf, size_t len);
/* Keep the first error of an operation (rr_lock_error_text). */
void rr_op_note_error(struct op *op, int idx, int status, const char *what);
/* Inside a write's callback on c, which WAIT did not confirm enough. */
void rr_lock_not_synced(const struct rr_svc *c, const char *what, char *buf, size_t len);

/* lock_release.c: give back what an acquisition round may have taken:
 * release.lua to every master its acquire reached (lk->unsent), with
 * votes' history entries to undo unless stands; cb when all answered. -1
 * if none could be sent. */
int rr_lock_give_back(struct rr_lock *lk, const struct rr_vote *votes, bool stands,
                      rr_release_fn cb, void *arg);

#endif
