/* job.c — keys, records and the run/skip/refuse decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"

static const char *const names[] = {
    [RR_JOB_NONE] = "",
    [RR_JOB_RUNNING] = "running",
    [RR_JOB_SUCCEEDED] = "succeeded",
    [RR_JOB_FAILED] = "failed",
    [RR_JOB_TIMEOUT] = "timeout",
    [RR_JOB_LOST] = "lost",
    [RR_JOB_ABANDONED] = "abandoned",
    [RR_JOB_CLEARED] = "cleared",
    [RR_JOB_UNKNOWN] = "unknown",
    [RR_JOB_BUSY] = "busy",
    [RR_JOB_SKIPPED] = "skipped",
    [RR_JOB_REFUSED] = "refused",
    [RR_JOB_ERROR] = "error",
};

static int put(char *dst, size_t len, const char *prefix, const char *name,
               const char *suffix)
{
    int n = snprintf(dst, len, "%s{%s}:%s", prefix, name, suffix);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* SCAN patterns are globs: a NAME may contain * ? [ ] or \ literally. */
static int glob_escape(char *dst, size_t len, const char *s)
{
    size_t o = 0;

    for (; *s; s++) {
        if (strchr("*?[]\\", *s)) {
            if (o + 1 >= len)
                return -1;
            dst[o++] = '\\';
        }
        if (o + 1 >= len)
            return -1;
        dst[o++] = *s;
    }
    dst[o] = '\0';
    return 0;
}

int rr_job_keys(struct rr_job_keys *k, const char *prefix, const char *name,
                const char *once_id)
{
    char ep[130], en[410];

    memset(k, 0, sizeof(*k));
    if (put(k->lock, sizeof(k->lock), prefix, name, "lock") ||
        put(k->fence, sizeof(k->fence), prefix, name, "fence") ||
        put(k->state, sizeof(k->state), prefix, name, "state") ||
        put(k->history, sizeof(k->history), prefix, name, "history") ||
        put(k->channel, sizeof(k->channel), prefix, name, "released") ||
        put(k->void_prefix, sizeof(k->void_prefix), prefix, name, "void:") ||
        put(k->queue, sizeof(k->queue), prefix, name, "queue") ||
        put(k->qseq, sizeof(k->qseq), prefix, name, "qseq") ||
        put(k->q_prefix, sizeof(k->q_prefix), prefix, name, "q:") ||
        put(k->wake_prefix, sizeof(k->wake_prefix), prefix, name, "wake:"))
        return -1;
    if (once_id && *once_id) {
        int n = snprintf(k->once, sizeof(k->once), "%s{%s}:once:%s", prefix,
                         name, once_id);
        if (n < 0 || (size_t)n >= sizeof(k->once))
            return -1;
    }
    if (glob_escape(ep, sizeof(ep), prefix) || glob_escape(en, sizeof(en), name))
        return -1;
    int n = snprintf(k->once_pattern, sizeof(k->once_pattern), "%s\\{%s\\}:once:*",
                     ep, en);
    return n < 0 || (size_t)n >= sizeof(k->once_pattern) ? -1 : 0;
}

const char *rr_job_status_name(enum rr_job_status s)
{
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

enum rr_job_status rr_job_status_parse(const char *s)
{
    if (!s || !*s)
        return RR_JOB_NONE;
    for (int i = RR_JOB_RUNNING; i < RR_JOB_UNKNOWN; i++)
        if (strcmp(s, names[i]) == 0)
            return (enum rr_job_status)i;
    return RR_JOB_UNKNOWN;
}

static long long num(const char *s, long long dflt)
{
    char *end;
    long long v;

    if (!s || !*s)
        return dflt;
    v = strtoll(s, &end, 10);
    return *end ? dflt : v;
}

void rr_job_record_parse(struct rr_job_record *rec, const redisReply *r)
{
    memset(rec, 0, sizeof(*rec));
    rec->exit_code = rec->signal = -1;
    rec->attempts = -1;
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            continue;
        const char *key = f->str, *val = v->str;
        if (strcmp(key, "status") == 0)
            rec->status = rr_job_status_parse(val);
        else if (strcmp(key, "host") == 0)
            snprintf(rec->host, sizeof(rec->host), "%s", val);
        else if (strcmp(key, "pid") == 0)
            rec->pid = num(val, 0);
        else if (strcmp(key, "fence") == 0)
            rec->fence = num(val, 0);
        else if (strcmp(key, "started_ms") == 0)
            rec->started_ms = num(val, 0);
        else if (strcmp(key, "heartbeat_ms") == 0)
            rec->heartbeat_ms = num(val, 0);
        else if (strcmp(key, "finished_ms") == 0)
            rec->finished_ms = num(val, 0);
        else if (strcmp(key, "exit_code") == 0)
            rec->exit_code = (int)num(val, -1);
        else if (strcmp(key, "signal") == 0)
            rec->signal = (int)num(val, -1);
        else if (strcmp(key, "once") == 0)
            snprintf(rec->once, sizeof(rec->once), "%s", val);
        else if (strcmp(key, "token") == 0)
            snprintf(rec->token, sizeof(rec->token), "%s", val);
        else if (strcmp(key, "last_success_ms") == 0)
            rec->last_success_ms = num(val, 0);
        else if (strcmp(key, "last_success_fence") == 0)
            rec->last_success_fence = num(val, 0);
        else if (strcmp(key, "last_success_host") == 0)
            snprintf(rec->last_success_host, sizeof(rec->last_success_host), "%s", val);
        else if (strcmp(key, "masters_ok") == 0)
            rec->masters_ok = (int)num(val, 0);
        else if (strcmp(key, "masters_total") == 0)
            rec->masters_total = (int)num(val, 0);
        else if (strcmp(key, "attempts") == 0)
            rec->attempts = (int)num(val, -1);
        else if (strcmp(key, "retry") == 0)
            rec->retry = strcmp(val, "1") == 0;
        else if (strcmp(key, "masters_failed") == 0)
            snprintf(rec->masters_failed, sizeof(rec->masters_failed), "%s", val);
    }
    /* A success written before the record kept last_success_*. */
    if (rec->status == RR_JOB_SUCCEEDED && rec->last_success_ms == 0) {
        rec->last_success_ms = rec->finished_ms;
        rec->last_success_fence = rec->fence;
        snprintf(rec->last_success_host, sizeof(rec->last_success_host), "%s", rec->host);
    }
}

int rr_job_attempts_used(const struct rr_job_record *rec)
{
    if (rec->attempts >= 0)
        return rec->attempts;
    return rec->status == RR_JOB_NONE ? 0 : 1;
}

enum rr_job_decision rr_job_decide(enum rr_job_status st, bool lock_held, bool once,
                                   bool refuse_stale, const struct rr_job_attempts *at)
{
    bool retry = once && at && at->retry;
    bool dead = st == RR_JOB_RUNNING || st == RR_JOB_ABANDONED;
    bool ended = dead || st == RR_JOB_FAILED || st == RR_JOB_TIMEOUT || st == RR_JOB_LOST;

    if (lock_held)
        return RR_DECIDE_BUSY;
    if (once && st == RR_JOB_SUCCEEDED)
        return RR_DECIDE_SKIP;
    if (once && ended && !retry && at && at->used >= (at->allowed > 0 ? at->allowed : 1))
        return RR_DECIDE_SPENT;
    if (dead && refuse_stale && !retry)
        return RR_DECIDE_REFUSE;
    return RR_DECIDE_RUN;
}
