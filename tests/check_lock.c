/* check_lock.c — quorum, validity, reply classification and the acquire
 * decision: the pure parts of the Redlock algorithm. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "lock.h"
#include "rand.h"
#include "replies.h"
#include "unit.h"

START_TEST(test_quorum)
{
    ck_assert_int_eq(rr_lock_quorum(1), 1);
    ck_assert_int_eq(rr_lock_quorum(2), 2);
    ck_assert_int_eq(rr_lock_quorum(3), 2);
    ck_assert_int_eq(rr_lock_quorum(4), 3);
    ck_assert_int_eq(rr_lock_quorum(5), 3);
    ck_assert_int_eq(rr_lock_quorum(15), 8);
}
END_TEST

START_TEST(test_synced)
{
    ck_assert(rr_lock_synced(0, -1));     /* --sync-replicas 0: never waits */
    ck_assert(rr_lock_synced(0, 0));
    ck_assert(!rr_lock_synced(1, -1));    /* WAIT did not answer */
    ck_assert(!rr_lock_synced(1, 0));
    ck_assert(rr_lock_synced(1, 1));
    ck_assert(rr_lock_synced(1, 2));
    ck_assert(!rr_lock_synced(2, 1));
}
END_TEST

START_TEST(test_validity)
{
    /* ttl - elapsed - (ttl/100 + 2) */
    ck_assert_int_eq(rr_lock_validity(30000, 0), 30000 - 302);
    ck_assert_int_eq(rr_lock_validity(30000, 100), 30000 - 100 - 302);
    ck_assert_int_eq(rr_lock_validity(1000, 0), 988);
    ck_assert_int_eq(rr_lock_validity(10, 0), 8);
    ck_assert(rr_lock_validity(1000, 988) <= 0);
    ck_assert(rr_lock_validity(1000, 5000) < 0);
}
END_TEST

START_TEST(test_decide_single)
{
    ck_assert_int_eq(rr_lock_decide(1, 1, 0, 0, 0, 0, 900), RR_ACQ_OK);
    ck_assert_int_eq(rr_lock_decide(1, 0, 1, 0, 0, 0, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(1, 0, 0, 0, 0, 1, 900), RR_ACQ_ERROR);
    ck_assert_int_eq(rr_lock_decide(1, 0, 0, 1, 0, 0, 900), RR_ACQ_DONE);
    ck_assert_int_eq(rr_lock_decide(1, 0, 0, 0, 1, 0, 900), RR_ACQ_STALE);
    /* A quorum that arrived after its lease expired is not a lock. */
    ck_assert_int_eq(rr_lock_decide(1, 1, 0, 0, 0, 0, 0), RR_ACQ_ERROR);
    ck_assert_int_eq(rr_lock_decide(1, 1, 0, 0, 0, 0, -5), RR_ACQ_ERROR);
}
END_TEST

START_TEST(test_decide_quorum)
{
    /* 3 masters, quorum 2. */
    ck_assert_int_eq(rr_lock_decide(3, 2, 1, 0, 0, 0, 900), RR_ACQ_OK);
    ck_assert_int_eq(rr_lock_decide(3, 2, 0, 0, 0, 1, 900), RR_ACQ_OK);
    ck_assert_int_eq(rr_lock_decide(3, 1, 2, 0, 0, 0, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(3, 1, 1, 0, 0, 1, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(3, 1, 0, 0, 0, 2, 900), RR_ACQ_ERROR);
    ck_assert_int_eq(rr_lock_decide(3, 0, 1, 0, 0, 2, 900), RR_ACQ_ERROR);
    ck_assert_int_eq(rr_lock_decide(3, 0, 0, 0, 0, 3, 900), RR_ACQ_ERROR);
    /* DONE on any master wins, even over a quorum of OK. */
    ck_assert_int_eq(rr_lock_decide(3, 2, 0, 1, 0, 0, 900), RR_ACQ_DONE);
    ck_assert_int_eq(rr_lock_decide(3, 2, 0, 0, 1, 0, 900), RR_ACQ_STALE);
    ck_assert_int_eq(rr_lock_decide(3, 0, 0, 1, 2, 0, 900), RR_ACQ_DONE);
    /* A minority master that lost the key while a holder lives elsewhere
     * says STALE: the holder's BUSY wins (found in review). */
    ck_assert_int_eq(rr_lock_decide(3, 0, 2, 0, 1, 0, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(3, 1, 1, 0, 1, 0, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(3, 0, 0, 0, 3, 0, 900), RR_ACQ_STALE);
    ck_assert_int_eq(rr_lock_decide(3, 0, 0, 0, 1, 2, 900), RR_ACQ_STALE);
    /* 5 masters, quorum 3. */
    ck_assert_int_eq(rr_lock_decide(5, 3, 2, 0, 0, 0, 900), RR_ACQ_OK);
    ck_assert_int_eq(rr_lock_decide(5, 2, 3, 0, 0, 0, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(5, 2, 1, 0, 0, 2, 900), RR_ACQ_BUSY);
    ck_assert_int_eq(rr_lock_decide(5, 2, 0, 0, 0, 3, 900), RR_ACQ_ERROR);
    ck_assert_int_eq(rr_lock_decide(5, 3, 0, 0, 0, 2, 900), RR_ACQ_OK);
}
END_TEST

/* Every split of 5 masters into ok/busy/err agrees with the rule. */
static void err_vote(struct rr_vote *v, const char *detail)
{
    memset(v, 0, sizeof *v);
    v->kind = RR_VOTE_ERR;
    snprintf(v->detail, sizeof v->detail, "%s", detail);
}

/* A failed round names every master that failed, and is a refusal of our
 * configuration (78) only when the refusals alone leave no quorum. */
START_TEST(test_votes_explain)
{
    struct rr_vote v[3];
    bool tls[3] = { false, false, false };
    char err[1280], failed[512];
    int nref;

    err_vote(&v[0], "a:1: authentication failed: WRONGPASS invalid username-password pair");
    err_vote(&v[1], "cannot connect to b:2: connection refused");
    memset(&v[2], 0, sizeof v[2]);
    v[2].kind = RR_VOTE_OK;
    /* One refusal, one outage: 69, and the refusal is still named. */
    ck_assert(!rr_votes_explain(v, 3, tls, true, err, sizeof err, failed, sizeof failed, &nref));
    ck_assert_int_eq(nref, 1);
    ck_assert_str_eq(err, "no quorum, 2 of the 3 masters failed (a quorum needs 2): a:1 refused "
                          "our password (WRONGPASS); cannot connect to b:2: connection refused");
    /* Two refusals: 78, with the first one's hint. */
    err_vote(&v[1], "b:2: authentication failed: WRONGPASS invalid username-password pair");
    ck_assert(rr_votes_explain(v, 3, tls, true, err, sizeof err, failed, sizeof failed, &nref));
    ck_assert_int_eq(nref, 2);
    ck_assert_ptr_nonnull(strstr(err, "no quorum, 2 of the 3 masters refused our configuration"));
    ck_assert_ptr_nonnull(strstr(err, "check REDLOCK_USER and the password"));
    /* One master: its own words. */
    ck_assert(rr_votes_explain(v, 1, tls, true, err, sizeof err, failed, sizeof failed, &nref));
    ck_assert_ptr_nonnull(strstr(err, "Redis at a:1 refused the password"));
    /* A degraded quorum's list. */
    v[1].kind = RR_VOTE_OK;
    ck_assert_int_eq(rr_votes_failures(v, 3, tls, true, failed, sizeof failed, NULL), 1);
    ck_assert_str_eq(failed, "a:1 refused our password (WRONGPASS)");
}
END_TEST

START_TEST(test_decide_exhaustive)
{
    for (int n = 1; n <= 7; n++)
        for (int ok = 0; ok <= n; ok++)
            for (int busy = 0; ok + busy <= n; busy++) {
                int err = n - ok - busy, q = n / 2 + 1;
                enum rr_acq want = ok >= q ? RR_ACQ_OK
                                 : err > n - q ? RR_ACQ_ERROR : RR_ACQ_BUSY;
                ck_assert_int_eq(rr_lock_decide(n, ok, busy, 0, 0, err, 100), want);
            }
}
END_TEST

static void vote(const char *text, int status, struct rr_vote *v)
{
    redisReply *r = text ? resp(text) : NULL;

    if (text)
        ck_assert_ptr_nonnull(r);
    rr_lock_classify_acquire(status, r, v);
    if (r)
        freeReplyObject(r);
}

START_TEST(test_classify_ok)
{
    struct rr_vote v;

    vote("*5\r\n$2\r\nOK\r\n:7\r\n:1700000000000\r\n:0\r\n:1\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_OK);
    ck_assert_int_eq(v.fence, 7);
    ck_assert_int_eq(v.slot, 1);
    ck_assert_int_eq(v.started_ms, 1700000000000LL);
    ck_assert(!v.abandoned);
    vote("*5\r\n$2\r\nOK\r\n:8\r\n:1\r\n:1\r\n:3\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.slot, 3);   /* --limit: the slot taken */
    ck_assert_int_eq(v.kind, RR_VOTE_OK);
    ck_assert(v.abandoned);
    ck_assert_int_eq(v.n_undo, 0);
    /* The ids of the 'abandoned' entries, for a give-back to delete. */
    vote("*7\r\n$2\r\nOK\r\n:8\r\n:1\r\n:1\r\n:1\r\n$15\r\n1700000000000-0\r\n"
         "$15\r\n1700000000000-1\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_OK);
    ck_assert_int_eq(v.n_undo, 2);
    ck_assert_str_eq(v.undo[0], "1700000000000-0");
    ck_assert_str_eq(v.undo[1], "1700000000000-1");
}
END_TEST

START_TEST(test_classify_busy_queued)
{
    struct rr_vote v;

    /* A waiter's BUSY carries its place in the queue and its ticket. */
    vote("*9\r\n$4\r\nBUSY\r\n:900\r\n$1\r\nh\r\n$2\r\n12\r\n$1\r\n5\r\n"
         ":2\r\n:41\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.pttl_ms, 900);
    ck_assert_int_eq(v.rank, 2);
    ck_assert_int_eq(v.ticket, 41);
    /* --wait 0 is never queued. */
    vote("*9\r\n$4\r\nBUSY\r\n:900\r\n$1\r\nh\r\n$2\r\n12\r\n$1\r\n5\r\n"
         ":-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.rank, -1);
    ck_assert_int_eq(v.ticket, 0);
    ck_assert_int_eq(v.ahead, -1);
    ck_assert_int_eq(v.since_ms, 0);
    /* The lock is free but waiters are queued: how many, queued or not. */
    vote("*9\r\n$4\r\nBUSY\r\n:-1\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:-1\r\n:0\r\n:150\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.rank, -1);
    ck_assert_int_eq(v.ahead, 150);
    vote("*9\r\n$4\r\nBUSY\r\n:-1\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:3\r\n:41\r\n:3\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.rank, 3);
    ck_assert_int_eq(v.ahead, 3);
    ck_assert(!v.foreign);   /* free, not held */
}
END_TEST

/* A held lock whose holder has no record (another program's SET NX PX on
 * the key) is foreign, queued or not; a named holder never is. */
START_TEST(test_classify_busy_foreign)
{
    struct rr_vote v;

    vote("*9\r\n$4\r\nBUSY\r\n:2500\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
         ":-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert(v.foreign);
    vote("*9\r\n$4\r\nBUSY\r\n:2500\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:0\r\n:7\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert(v.foreign);
    ck_assert_int_eq(v.rank, 0);
    vote("*9\r\n$4\r\nBUSY\r\n:-1\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert(v.foreign);    /* no expiry */
    vote("*9\r\n$4\r\nBUSY\r\n:900\r\n$1\r\nh\r\n$2\r\n12\r\n$1\r\n5\r\n"
         ":0\r\n:41\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert(!v.foreign);
}
END_TEST

/* Behind a foreign holder the first waiter looks again every tenth of the
 * lease, 10..250 ms. */
START_TEST(test_foreign_poll)
{
    ck_assert_int_eq(rr_lock_foreign_poll_ms(30000), 250);
    ck_assert_int_eq(rr_lock_foreign_poll_ms(2500), 250);
    ck_assert_int_eq(rr_lock_foreign_poll_ms(1000), 100);
    ck_assert_int_eq(rr_lock_foreign_poll_ms(50), 10);
    ck_assert_int_eq(rr_lock_foreign_poll_ms(INT64_MAX), 250);
}
END_TEST

START_TEST(test_classify_busy_done_stale)
{
    struct rr_vote v;

    vote("*9\r\n$4\r\nBUSY\r\n:1234\r\n$3\r\nweb\r\n$2\r\n42\r\n$1\r\n9\r\n"
         ":-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.pttl_ms, 1234);
    ck_assert_str_eq(v.host, "web");
    ck_assert_int_eq(v.pid, 42);
    ck_assert_int_eq(v.fence, 9);
    ck_assert_int_eq(v.since_ms, 0);
    /* When the holder took the lock comes with the answer: a loser says for
     * how long it has been held with no second round trip. */
    vote("*9\r\n$4\r\nBUSY\r\n:1234\r\n$3\r\nweb\r\n$2\r\n42\r\n$1\r\n9\r\n"
         ":-1\r\n:0\r\n:-1\r\n$13\r\n1796478998441\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.since_ms, 1796478998441LL);
    ck_assert(!v.foreign);
    /* The shorter answers of older scripts are not ours: malformed. */
    vote("*5\r\n$4\r\nBUSY\r\n:1234\r\n$3\r\nweb\r\n$2\r\n42\r\n$1\r\n9\r\n", RR_REPLY_OK,
         &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    /* Holder unknown: empty strings. */
    vote("*9\r\n$4\r\nBUSY\r\n:-1\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_int_eq(v.pttl_ms, -1);
    ck_assert_str_eq(v.host, "");
    vote("*5\r\n$4\r\nDONE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n100\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_DONE);
    ck_assert_int_eq(v.when_ms, 100);
    vote("*6\r\n$5\r\nSTALE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n100\r\n$1\r\nk\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_STALE);
    ck_assert(!v.stale);
    /* A 'running' record with no lock, reported but not marked yet. */
    vote("*7\r\n$5\r\nSTALE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n100\r\n"
         "$1\r\nk\r\n:1\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_STALE);
    ck_assert(v.stale);
    ck_assert_int_eq(v.now_ms, 0);   /* an older script: no TIME, this host's clock */
    /* A spent --once ID: the last attempt, the counts, and the server's TIME
     * (how long ago is told on it, not on a skewed host's clock). */
    vote("*14\r\n$5\r\nSTALE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n100\r\n"
         "$1\r\nk\r\n:0\r\n$6\r\nfailed\r\n:1\r\n:1\r\n:1\r\n$1\r\n1\r\n$0\r\n\r\n:1500\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_STALE);
    ck_assert_str_eq(v.last, "failed");
    ck_assert(v.spent);
    ck_assert_int_eq(v.exit_code, 1);
    ck_assert_int_eq(v.signal, -1);
    ck_assert_int_eq(v.now_ms, 1500);
    vote("*6\r\n$4\r\nDONE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n100\r\n:1\r\n",
         RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_DONE);
    ck_assert(v.stale);
    /* A late request of an attempt already given back took nothing. */
    vote("*1\r\n$4\r\nVOID\r\n", RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    ck_assert_str_eq(v.detail, "this attempt was already given back");
}
END_TEST

/* A malformed reply is never counted as a vote for us. */
static const char *const bad_replies[] = {
    "$-1\r\n",                                     /* nil */
    "*-1\r\n",                                     /* nil array */
    "-ERR something\r\n",                          /* error */
    "-NOSCRIPT No matching script\r\n",
    "-OOM command not allowed\r\n",
    "+OK\r\n",                                     /* wrong type */
    ":1\r\n",
    "$2\r\nOK\r\n",
    "*0\r\n",                                      /* empty array */
    "*1\r\n$2\r\nOK\r\n",                          /* short */
    "*3\r\n$2\r\nOK\r\n:1\r\n:2\r\n",
    "*4\r\n$2\r\nOK\r\n$1\r\nx\r\n:2\r\n:0\r\n",  /* non-numeric fence */
    "*4\r\n$2\r\nOK\r\n:0\r\n:2\r\n:0\r\n",       /* fence 0 */
    "*4\r\n$2\r\nOK\r\n:-3\r\n:2\r\n:0\r\n",      /* negative fence */
    "*4\r\n$2\r\nOK\r\n$-1\r\n:2\r\n:0\r\n",      /* nil fence */
    "*4\r\n$2\r\nok\r\n:1\r\n:2\r\n:0\r\n",       /* wrong case */
    "*4\r\n$3\r\nOKK\r\n:1\r\n:2\r\n:0\r\n",
    "*4\r\n*1\r\n$2\r\nOK\r\n:1\r\n:2\r\n:0\r\n", /* nested */
    "*9\r\n$4\r\nBUSY\r\n$3\r\nabc\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
    ":-1\r\n:0\r\n:-1\r\n$0\r\n\r\n",                       /* pttl not a number */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
    ":-1\r\n:0\r\n$1\r\nx\r\n$0\r\n\r\n",                  /* ahead not a number */
    "*10\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
    ":-1\r\n:0\r\n:-1\r\n$0\r\n\r\n:1\r\n",                  /* 10 elements */
    "*2\r\n$4\r\nBUSY\r\n:5\r\n",
    "*4\r\n$4\r\nDONE\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n",
    "*3\r\n$5\r\nSTALE\r\n$1\r\na\r\n$1\r\n1\r\n",
    "*6\r\n$2\r\nOK\r\n:1\r\n:2\r\n:1\r\n:1\r\n:5\r\n",     /* id not a string */
    "*6\r\n$2\r\nOK\r\n:1\r\n:2\r\n:1\r\n:1\r\n$0\r\n\r\n",/* empty id */
    "*8\r\n$2\r\nOK\r\n:1\r\n:2\r\n:1\r\n:1\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
    "*4\r\n$2\r\nOK\r\n:1\r\n:2\r\n:0\r\n",                 /* no slot */
    "*5\r\n$2\r\nOK\r\n:1\r\n:2\r\n:0\r\n:0\r\n",         /* slot 0 */
    "*5\r\n$2\r\nOK\r\n:1\r\n:2\r\n:0\r\n:101\r\n",       /* slot > --limit max */
    "*5\r\n$2\r\nOK\r\n:1\r\n:2\r\n:0\r\n$1\r\nx\r\n",   /* slot not a number */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
     ":-1\r\n:3\r\n:-1\r\n$0\r\n\r\n",          /* not queued, ticket */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
     ":-2\r\n:0\r\n:-1\r\n$0\r\n\r\n",          /* rank < -1 */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
     ":2\r\n:0\r\n:-1\r\n$0\r\n\r\n",           /* no ticket */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
     ":-1\r\n:0\r\n:-4\r\n$0\r\n\r\n",          /* ahead < -1 */
    "*9\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"
     ":0\r\n$1\r\nx\r\n:-1\r\n$0\r\n\r\n",     /* ticket not a number */
    "*8\r\n$4\r\nBUSY\r\n:5\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n:-1\r\n:0\r\n:3\r\n", /* no since */
};

START_TEST(test_classify_malformed)
{
    struct rr_vote v;
    const char *text = bad_replies[_i];

    vote(text, RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    ck_assert_str_ne(v.detail, "");
}
END_TEST

START_TEST(test_classify_truncated_and_failures)
{
    struct rr_vote v;

    /* A truncated reply never parses into anything. */
    ck_assert_ptr_null(resp("*4\r\n$2\r\nOK\r\n:7\r\n"));
    ck_assert_ptr_null(resp("$100\r\nshort\r\n"));
    vote(NULL, RR_REPLY_TIMEOUT, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    vote(NULL, RR_REPLY_IOERR, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    vote(NULL, RR_REPLY_CLOSED, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    vote(NULL, RR_REPLY_OK, &v);   /* OK status without a reply */
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
}
END_TEST

/* Bytes after a NUL inside a bulk string are not ignored: such a reply is
 * not what the script sent, so it is no vote (found by fuzz_reply). */
START_TEST(test_classify_embedded_nul)
{
    static const char fence_nul[] = "*4\r\n$2\r\nOK\r\n$3\r\n7\0x\r\n:1\r\n:0\r\n";
    static const char tag_nul[] = "*4\r\n$3\r\nOK\0\r\n:7\r\n:1\r\n:0\r\n";
    static const char fence_plus[] = "*4\r\n$2\r\nOK\r\n$2\r\n+7\r\n:1\r\n:0\r\n";
    struct rr_vote v;
    redisReply *r;

    r = resp_n(fence_nul, sizeof(fence_nul) - 1);
    ck_assert_ptr_nonnull(r);
    rr_lock_classify_acquire(RR_REPLY_OK, r, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    freeReplyObject(r);
    r = resp_n(tag_nul, sizeof(tag_nul) - 1);
    ck_assert_ptr_nonnull(r);
    rr_lock_classify_acquire(RR_REPLY_OK, r, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    freeReplyObject(r);
    r = resp_n(fence_plus, sizeof(fence_plus) - 1);
    ck_assert_ptr_nonnull(r);
    rr_lock_classify_acquire(RR_REPLY_OK, r, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    freeReplyObject(r);
    /* An empty error still says something. */
    r = resp("-\r\n");
    rr_lock_classify_acquire(RR_REPLY_OK, r, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_ERR);
    ck_assert_str_ne(v.detail, "");
    freeReplyObject(r);
}
END_TEST

START_TEST(test_classify_huge_bulk)
{
    /* A 1 MiB host name is truncated, never overflows. */
    size_t big = 1 << 20;
    char *text = malloc(big + 200);
    struct rr_vote v;
    int n = sprintf(text, "*9\r\n$4\r\nBUSY\r\n:5\r\n$%zu\r\n", big);

    memset(text + n, 'h', big);
    strcpy(text + n + big, "\r\n$1\r\n1\r\n$1\r\n2\r\n:-1\r\n:0\r\n:-1\r\n$0\r\n\r\n");
    vote(text, RR_REPLY_OK, &v);
    ck_assert_int_eq(v.kind, RR_VOTE_BUSY);
    ck_assert_uint_eq(strlen(v.host), sizeof(v.host) - 1);
    free(text);
}
END_TEST

START_TEST(test_classify_renew)
{
    redisReply *r;

    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp(":1\r\n"), NULL, 0), 1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp(":0\r\n"), NULL, 0), 0);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp(":2\r\n"), NULL, 0), -1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp("$1\r\n1\r\n"), NULL, 0), -1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp("-ERR x\r\n"), NULL, 0), -1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp("$-1\r\n"), NULL, 0), -1);
    freeReplyObject(r);
    /* {0, by}: revoked by an operator's --release, who is said (cut to fit). */
    char by[8];
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK,
                                            r = resp("*2\r\n:0\r\n$11\r\nops@h:12345\r\n"),
                                            by, sizeof by), 0);
    ck_assert_str_eq(by, "ops@h:1");
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp(":0\r\n"), by, sizeof by), 0);
    ck_assert_str_eq(by, "");
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_OK, r = resp("*2\r\n:1\r\n$1\r\nx\r\n"),
                                            by, sizeof by), -1);
    freeReplyObject(r);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_TIMEOUT, NULL, NULL, 0), -1);
    ck_assert_int_eq(rr_lock_classify_renew(RR_REPLY_IOERR, NULL, NULL, 0), -1);
}
END_TEST

/* The tokens and waiter ids (rand.c). */
/* One vote per server: INFO server's run_id read, and a master's twin. */
START_TEST(test_run_id)
{
    static const char id[] = "8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7f80";
    const char *info = "# Server\r\nredis_version:7.0.15\r\nrun_id:8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7f80\r\ntcp_port:6379\r\n";
    char out[RR_RUN_ID_LEN + 1] = "";

    ck_assert_int_eq(rr_vote_run_id(info, strlen(info), out), 0);
    ck_assert_str_eq(out, id);
    /* At the very start, and at the very end without a line break. */
    ck_assert_int_eq(rr_vote_run_id("run_id:8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7f80", 47, out), 0);
    ck_assert_str_eq(out, id);
    /* Not a field of its own, too short, too long, not hex, missing. */
    const char *bad[] = {
        "master_run_id:8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7f80\r\n",
        "run_id:8a5f1c0e2b3d\r\n",
        "run_id:8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7f80a\r\n",
        "run_id:8a5f1c0e2b3d4f6a7b8c9d0e1f2a3b4c5d6e7fzz\r\n",
        "# Server\r\nredis_version:7.0.15\r\n", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(rr_vote_run_id(bad[i], strlen(bad[i]), out) == -1, "%s", bad[i]);

    char ids[4][RR_RUN_ID_LEN + 1] = { "a", "b", "", "a" };
    const char (*c)[RR_RUN_ID_LEN + 1] = (const char (*)[RR_RUN_ID_LEN + 1])ids;
    ck_assert_int_eq(rr_votes_twin(c, 4, 0), 3);
    ck_assert_int_eq(rr_votes_twin(c, 4, 3), 0);
    ck_assert_int_eq(rr_votes_twin(c, 4, 1), -1);
    /* Unknown is never the same as anything, not even another unknown. */
    snprintf(ids[1], sizeof ids[1], "%s", "");
    ck_assert_int_eq(rr_votes_twin(c, 4, 2), -1);
    ck_assert_int_eq(rr_votes_twin(c, 4, 1), -1);
}
END_TEST

START_TEST(test_random_hex)
{
    char a[33], b[33];

    memset(a, 'z', sizeof a);
    ck_assert_int_eq(rr_random_hex(a, 16), 0);
    ck_assert_uint_eq(strlen(a), 32);
    ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
    ck_assert_int_eq(rr_random_hex(b, 16), 0);
    ck_assert_str_ne(a, b);
    ck_assert_int_lt(rr_random_hex(a, 65), 0);
}
END_TEST

static Suite *lock_suite(void)
{
    Suite *s = suite_create("lock");
    TCase *tc = tcase_create("pure");

    tcase_add_test(tc, test_quorum);
    tcase_add_test(tc, test_synced);
    tcase_add_test(tc, test_validity);
    tcase_add_test(tc, test_foreign_poll);
    tcase_add_test(tc, test_classify_busy_foreign);
    tcase_add_test(tc, test_decide_single);
    tcase_add_test(tc, test_decide_quorum);
    tcase_add_test(tc, test_decide_exhaustive);
    tcase_add_test(tc, test_votes_explain);
    tcase_add_test(tc, test_classify_ok);
    tcase_add_test(tc, test_classify_busy_done_stale);
    tcase_add_test(tc, test_classify_busy_queued);
    tcase_add_loop_test(tc, test_classify_malformed, 0,
                        (int)(sizeof(bad_replies) / sizeof(bad_replies[0])));
    tcase_add_test(tc, test_classify_truncated_and_failures);
    tcase_add_test(tc, test_classify_embedded_nul);
    tcase_add_test(tc, test_classify_huge_bulk);
    tcase_add_test(tc, test_classify_renew);
    tcase_add_test(tc, test_random_hex);
    tcase_add_test(tc, test_run_id);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "lock", lock_suite, NULL, NULL };
