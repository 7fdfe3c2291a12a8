/* votes.h — the pure arithmetic of the Redlock algorithm: one master's
 * answer as a vote, the quorum, the validity left, and the round's
 * decision. No I/O and no connection state; lock.c does the talking. */
#ifndef RR_VOTES_H
#define RR_VOTES_H

#include <stdbool.h>
#include <stdint.h>
#include <hiredis/hiredis.h>

#include "rr.h"

/* One master's answer to the acquire script. */
/* PENDING: sent, not answered yet (a round decided before every master
 * answered counts it nowhere). */
enum rr_vote_kind { RR_VOTE_OK, RR_VOTE_BUSY, RR_VOTE_DONE, RR_VOTE_STALE, RR_VOTE_ERR,
                    RR_VOTE_PENDING };

struct rr_vote {
    enum rr_vote_kind kind;
    long long fence;          /* OK: the new fencing token; others: holder's (0 unknown) */
    long long started_ms;     /* OK: Redis TIME at acquisition */
    long long pttl_ms;        /* BUSY: the holder's remaining lease (-1 no expiry) */
    long long when_ms;        /* DONE: finished_ms; STALE: last heartbeat */
    long long now_ms;         /* STALE: the server's TIME when it refused (0 unknown):
                               * when_ms's "ago" on the clock that wrote it */
    int slot;                 /* OK: the --limit slot we took, 1..N */
    long long rank;           /* BUSY: our place in the queue (0 first), -1 not queued */
    long long ticket;         /* BUSY: our arrival ticket, 0 not queued */
    long long ahead;          /* BUSY: the lock is free, but this many waiters
                               * are queued ahead (-1: it is held) */
    long long since_ms;       /* BUSY: Redis TIME when the holder took it, 0 unknown */
    bool foreign;             /* BUSY: held by a value with no redlock-run record
                               * of its token: another program's lock (an
                               * application's SET NX PX), or a revoked one */
    bool abandoned;           /* OK: an abandoned previous run was recorded */
    bool command_changed;     /* OK: the record replaced had another command fingerprint */
    int n_undo;               /* OK: the ids of those history entries, */
    char undo[2][48];         /*     deleted again if the round fails */
    bool stale;               /* DONE, STALE: a 'running' record with no lock
                               * here, not marked yet (abandon.lua) */
    char host[128];           /* holder / previous run host, if known */
    long long pid;
    /* STALE: the last attempt's status ("failed", "abandoned", ...; "" not
     * said), whether the --once ID's attempt budget is spent (else a dead
     * run is refused by --on-stale refuse), the attempts used and allowed,
     * and the last attempt's exit code and signal (-1 when not recorded). */
    char last[16];
    bool spent;
    long long used, allowed;
    long long exit_code, signal;
    char detail[RR_ERRLEN];   /* ERR: why */
};

/* Did a write reach enough replicas? want is --sync-replicas (0: always
 * yes), acked WAIT's answer (-1: none came). Pure. */
bool rr_lock_synced(int want, long long acked);

/* How long a waiter first in line sleeps at most behind a foreign holder
 * (rr_vote.foreign), whose release publishes nothing: a tenth of the
 * lease, between 10ms and 250ms. Pure. */
int64_t rr_lock_foreign_poll_ms(int64_t ttl_ms);

/* N/2+1. Pure. */
int rr_lock_quorum(int n);

/* Remaining validity after acquiring with a lease of ttl_ms, elapsed_ms
 * after the first send: ttl - elapsed - (ttl/100 + 2). Pure. */
int64_t rr_lock_validity(int64_t ttl_ms, int64_t elapsed_ms);

enum rr_acq { RR_ACQ_OK, RR_ACQ_BUSY, RR_ACQ_DONE, RR_ACQ_STALE, RR_ACQ_ERROR };

/* The outcome of one acquisition round from the vote counts (n masters)
 * and the validity left. DONE on any master wins (success is recorded only
 * after a real success), then STALE on any master if no master has a
 * holder (BUSY), then OK with a quorum and positive validity; else ERROR if
 * errors alone make a quorum impossible, else BUSY. Pure. */
enum rr_acq rr_lock_decide(int n, int ok, int busy, int done, int stale,
                           int err, int64_t validity_ms);

/* The vote of one acquire reply. r is the script's answer, or NULL when
 * none came, and then no_reply says why ("no reply in time"). Anything that
 * is not exactly a well-formed script answer — nil, an error, a wrong type,
 * a short array, a non-numeric fence — is an ERR vote, never OK. Pure. */
void rr_vote_acquire(const redisReply *r, const char *no_reply, struct rr_vote *v);

/* The failures of a round: every ERR vote's detail (a sentence that names
 * the master) in a few words (diag.h's rr_diag_brief), "; " between them,
 * into out ("" none). tls_refused[i]: master i refused our TLS handshake.
 * Returns how many refused our configuration; *first (if not NULL) is the
 * first of those, -1 none. Pure. */
int rr_votes_failures(const struct rr_vote *v, int n, const bool *tls_refused,
                      bool gave_password, char *out, size_t len, int *first);

/* The message of a round of n masters that failed on errors, into err:
 * with one master its error (a refusal in diag.h's words); with several,
 * "no quorum, ..." naming every master that failed and why, so that a
 * refused password is not hidden behind an outage. The list goes to failed,
 * the count of refusals to *n_refused. Returns whether it is a refusal of
 * our configuration (78): the masters that refused leave no quorum. Pure. */
bool rr_votes_explain(const struct rr_vote *v, int n, const bool *tls_refused,
                      bool gave_password, char *err, size_t errlen, char *failed,
                      size_t failedlen, int *n_refused);

/* One vote per server: a server's identity is INFO server's run_id (40
 * hex digits, new at every start of the server). The run_id of an INFO
 * reply's text into id (41 bytes): 0, or -1 if it has none. Pure. */
#define RR_RUN_ID_LEN 40
int rr_vote_run_id(const char *info, size_t len, char *id);

/* Another of n masters with master i's identity ("" unknown: never the
 * same as anything): the first such, or -1 if i is a server of its own.
 * Pure. */
int rr_votes_twin(const char (*ids)[RR_RUN_ID_LEN + 1], int n, int i);

/* The answer to one renewal (r NULL: none came): 1 extended, 0 token
 * mismatch, -1 error. by (len bytes, may be NULL): who revoked the lock
 * with --release (user@host:pid, from Redis: untrusted), "" not known.
 * Pure. */
int rr_vote_renew(const redisReply *r, char *by, size_t len);

#endif
