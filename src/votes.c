/* votes.c — the pure part of the Redlock algorithm (votes.h): quorum,
 * validity, the round's decision, and the scripts' replies as votes.
 * Tested in tests/check_lock.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "mutant.h"
#include "votes.h"

bool rr_lock_synced(int want, long long acked)
{
    return want <= 0 || acked >= want;
}

int rr_lock_quorum(int n)
{
    return RR_MUTANT_IS(quorum_half) ? n / 2 : n / 2 + 1;
}

int64_t rr_lock_foreign_poll_ms(int64_t ttl_ms)
{
    int64_t p = ttl_ms / 10;

    return p < 10 ? 10 : p > 250 ? 250 : p;
}

int64_t rr_lock_validity(int64_t ttl_ms, int64_t elapsed_ms)
{
    return ttl_ms - elapsed_ms - (ttl_ms / 100 + 2);
}

enum rr_acq rr_lock_decide(int n, int ok, int busy, int done, int stale,
                           int err, int64_t validity_ms)
{
    int q = rr_lock_quorum(n);

    if (done > 0)
        return RR_ACQ_DONE;
    /* A master that lost the lock key (paused or partitioned past the
     * lease, restarted) sees a 'running' record with no lock and says
     * STALE; if another master still has a holder, that run is alive. */
    if (stale > 0 && busy == 0)
        return RR_ACQ_STALE;
    if (ok >= q && validity_ms > 0)
        return RR_ACQ_OK;
    if (err > n - q)
        return RR_ACQ_ERROR;
    if (ok >= q)  /* a quorum that took longer than the lease is worthless */
        return RR_ACQ_ERROR;
    return RR_ACQ_BUSY;
}

/* A string element as a C string; NULL if it is not one, or if it has a
 * NUL byte inside (then it is not what the script sent). */
static const char *str_of(const redisReply *e, char *buf, size_t len)
{
    if (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS)
        return e->str && strlen(e->str) == e->len ? e->str : NULL;
    if (e->type == REDIS_REPLY_INTEGER) {
        snprintf(buf, len, "%lld", e->integer);
        return buf;
    }
    return NULL;
}

/* An integer element, or a string that is entirely a decimal integer. */
static bool int_of(const redisReply *e, long long *out)
{
    char *end;

    if (e->type == REDIS_REPLY_INTEGER) {
        *out = e->integer;
        return true;
    }
    if (e->type != REDIS_REPLY_STRING || e->len == 0 || !e->str ||
        !(e->str[0] == '-' || (e->str[0] >= '0' && e->str[0] <= '9')))
        return false;
    errno = 0;
    *out = strtoll(e->str, &end, 10);
    return errno == 0 && end == e->str + e->len;
}

static void holder_of(const redisReply *r, size_t first, struct rr_vote *v)
{
    char buf[32];
    const char *h = str_of(r->element[first], buf, sizeof(buf));

    snprintf(v->host, sizeof(v->host), "%s", h ? h : "");
    if (!int_of(r->element[first + 1], &v->pid))
        v->pid = 0;
    if (!int_of(r->element[first + 2], &v->fence))
        v->fence = 0;
}

void rr_vote_acquire(const redisReply *r, const char *no_reply, struct rr_vote *v)
{
    char buf[64];
    const char *tag;
    long long flag;

    memset(v, 0, sizeof(*v));
    v->kind = RR_VOTE_ERR;
    v->pttl_ms = -1;
    v->rank = -1;
    if (!r) {
        snprintf(v->detail, sizeof(v->detail), "%s", no_reply ? no_reply : "no reply");
        return;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(v->detail, sizeof(v->detail), "%s",
                 r->str && r->str[0] ? r->str : "error reply");
        return;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        !(tag = str_of(r->element[0], buf, sizeof(buf)))) {
        snprintf(v->detail, sizeof(v->detail), "unexpected reply to the acquire script");
        return;
    }
    if (strcmp(tag, "OK") == 0 && r->elements >= 5 && r->elements <= 7) {
        long long ab, slot;
        if (!int_of(r->element[1], &v->fence) || v->fence <= 0 ||
            !int_of(r->element[2], &v->started_ms) || !int_of(r->element[3], &ab) ||
            !int_of(r->element[4], &slot) || slot < 1 || slot > RR_LIMIT_MAX)
            goto malformed;
        v->slot = (int)slot;
        for (size_t i = 5; i < r->elements; i++) {
            const char *id = r->element[i]->type == REDIS_REPLY_STRING
                                 ? str_of(r->element[i], buf, sizeof(buf)) : NULL;
            if (!id || !*id || strlen(id) >= sizeof(v->undo[0]))
                goto malformed;
            snprintf(v->undo[v->n_undo++], sizeof(v->undo[0]), "%s", id);
        }
        /* bit 0: a dead run was recorded; bit 1: the command changed */
        v->abandoned = (ab & 1) != 0;
        v->command_changed = (ab & 2) != 0;
        v->kind = RR_VOTE_OK;
    } else if (strcmp(tag, "BUSY") == 0 && r->elements == 9) {
        if (!int_of(r->element[1], &v->pttl_ms))
            goto malformed;
        holder_of(r, 2, v);
        /* rank -1 with ticket 0: not queued (a run without --wait); ahead
         * -1: held, else the lock is free but this many are queued ahead;
         * since: when the holder took it ('' not known). */
        if (!int_of(r->element[5], &v->rank) || v->rank < -1 ||
            !int_of(r->element[6], &v->ticket) || v->ticket < 0 ||
            (v->rank < 0) != (v->ticket == 0) ||
            !int_of(r->element[7], &v->ahead) || v->ahead < -1)
            goto malformed;
        if (!int_of(r->element[8], &v->since_ms) || v->since_ms < 0)
            v->since_ms = 0;
        /* A held lock whose holder the script could not name: no record
         * carries its token. */
        v->foreign = v->ahead < 0 && !v->host[0];
        v->kind = RR_VOTE_BUSY;
    } else if (strcmp(tag, "DONE") == 0 && r->elements >= 5) {
        holder_of(r, 1, v);
        if (!int_of(r->element[4], &v->when_ms))
            v->when_ms = 0;
        v->stale = r->elements >= 6 && int_of(r->element[5], &flag) && flag == 1;
        v->kind = RR_VOTE_DONE;
    } else if (strcmp(tag, "VOID") == 0) {
        /* Only a request that arrives after its own give-back sees this;
         * it took nothing, and it is never a vote for us. */
        snprintf(v->detail, sizeof(v->detail), "this attempt was already given back");
        return;
    } else if (strcmp(tag, "STALE") == 0 && r->elements >= 5) {
        holder_of(r, 1, v);
        if (!int_of(r->element[4], &v->when_ms))
            v->when_ms = 0;
        v->stale = r->elements >= 7 && int_of(r->element[6], &flag) && flag == 1;
        v->exit_code = v->signal = -1;
        if (r->elements >= 13) {
            const char *last = str_of(r->element[7], buf, sizeof(buf));
            snprintf(v->last, sizeof(v->last), "%s", last ? last : "");
            v->spent = int_of(r->element[8], &flag) && flag == 1;
            if (!int_of(r->element[9], &v->used) || !int_of(r->element[10], &v->allowed))
                v->used = v->allowed = 0;
            if (!int_of(r->element[11], &v->exit_code))
                v->exit_code = -1;
            if (!int_of(r->element[12], &v->signal))
                v->signal = -1;
        }
        if (r->elements < 14 || !int_of(r->element[13], &v->now_ms) || v->now_ms < 0)
            v->now_ms = 0;   /* a server with an older script: this host's clock */
        v->kind = RR_VOTE_STALE;
    } else {
        goto malformed;
    }
    return;
malformed:
    memset(v, 0, sizeof(*v));
    v->kind = RR_VOTE_ERR;
    v->pttl_ms = -1;
    v->rank = -1;
    snprintf(v->detail, sizeof(v->detail), "malformed reply to the acquire script");
}

/* {0, by}: the lock taken by an operator's --release (renew.lua). */
static bool renew_revoked(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
           r->element[0]->type == REDIS_REPLY_INTEGER && r->element[0]->integer == 0 &&
           r->element[1]->type == REDIS_REPLY_STRING;
}

int rr_vote_renew(const redisReply *r, char *by, size_t len)
{
    if (by && len)
        by[0] = '\0';
    if (r && renew_revoked(r)) {
        if (by && len)
            snprintf(by, len, "%.*s", (int)r->element[1]->len, r->element[1]->str);
        return 0;
    }
    if (!r || r->type != REDIS_REPLY_INTEGER)
        return -1;
    if (r->integer == 1)
        return 1;
    if (r->integer == 0)
        return 0;
    return -1;
}

int rr_votes_failures(const struct rr_vote *v, int n, const bool *tls_refused,
                      bool gave_password, char *out, size_t len, int *first)
{
    char one[RR_ERRLEN + 64];
    size_t off = 0;
    int refused = 0;

    if (first)
        *first = -1;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (v[i].kind != RR_VOTE_ERR)
            continue;
        if (rr_diag_brief(v[i].detail, gave_password, tls_refused[i], one, sizeof one)) {
            if (first && refused == 0)
                *first = i;
            refused++;
        }
        int k = snprintf(out + off, len - off, "%s%s", off ? "; " : "", one);
        if (k > 0)
            off = off + (size_t)k < len ? off + (size_t)k : len - 1;
    }
    return refused;
}

bool rr_votes_explain(const struct rr_vote *v, int n, const bool *tls_refused,
                      bool gave_password, char *err, size_t errlen, char *failed,
                      size_t failedlen, int *n_refused)
{
    int q = rr_lock_quorum(n), ref, n_err = 0;
    char why[RR_ERRLEN + 256];

    for (int i = 0; i < n; i++)
        n_err += v[i].kind == RR_VOTE_ERR;
    *n_refused = rr_votes_failures(v, n, tls_refused, gave_password, failed, failedlen, &ref);
    bool refused = *n_refused > 0 && *n_refused > n - q;
    if (refused && (tls_refused[ref] ||
                    !rr_diag_config(v[ref].detail, gave_password, why, sizeof why)))
        snprintf(why, sizeof why, "%s", v[ref].detail);
    if (n == 1 || n_err == 0) {
        if (refused)
            snprintf(err, errlen, "%s", why);
    } else if (!refused) {
        snprintf(err, errlen, "no quorum, %d of the %d masters failed (a quorum needs %d): %s",
                 n_err, n, q, failed);
    } else {
        /* The hint is the first refusal's: what to fix. */
        snprintf(err, errlen, "no quorum, %d of the %d masters refused our configuration "
                 "(a quorum needs %d): %s. %s", *n_refused, n, q, failed, why);
    }
    return refused;
}

int rr_vote_run_id(const char *info, size_t len, char *id)
{
    static const char key[] = "run_id:";
    const size_t klen = sizeof key - 1;

    /* A line of its own: "run_id:" at the start or after a newline. */
    for (size_t i = 0; i + klen + RR_RUN_ID_LEN <= len; i++) {
        if ((i > 0 && info[i - 1] != '\n') || memcmp(info + i, key, klen) != 0)
            continue;
        const char *v = info + i + klen;
        size_t n = 0;
        while (n < RR_RUN_ID_LEN && isxdigit((unsigned char)v[n]))
            n++;
        if (n != RR_RUN_ID_LEN || (i + klen + n < len && isalnum((unsigned char)v[n])))
            return -1;
        memcpy(id, v, RR_RUN_ID_LEN);
        id[RR_RUN_ID_LEN] = '\0';
        return 0;
    }
    return -1;
}

int rr_votes_twin(const char (*ids)[RR_RUN_ID_LEN + 1], int n, int i)
{
    for (int j = 0; ids[i][0] && j < n; j++)
        if (j != i && strcmp(ids[i], ids[j]) == 0)
            return j;
    return -1;
}
