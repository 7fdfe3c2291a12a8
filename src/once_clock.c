/* once_clock.c — TIME from every master, and their median (once_clock.h).
 * A host whose clock is a day off expands the same --once ID as the
 * others: strftime gets the lock service's time, in this host's time zone
 * rules (TZ). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli.h"
#include "log.h"
#include "once_clock.h"
#include "rr.h"

struct ask {
    rr_once_clock_fn cb;
    void *arg;
    int pending, n_ok;
    long long t[RR_MAX_ENDPOINTS];
    char err[RR_ERRLEN];
};

long long rr_once_clock_median(long long *t, int n)
{
    for (int i = 1; i < n; i++)   /* at most RR_MAX_ENDPOINTS: insertion sort */
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            long long x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[(n - 1) / 2];
}

int rr_once_clock_parse(const redisReply *r, long long *sec)
{
    char *end;

    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len == 0 ||
        r->element[0]->str[0] < '0' || r->element[0]->str[0] > '9')
        return -1;
    errno = 0;
    *sec = strtoll(r->element[0]->str, &end, 10);
    return errno == 0 && end == r->element[0]->str + r->element[0]->len ? 0 : -1;
}

int rr_once_clock_id(const char *pattern, int n_ok, long long sec, int64_t local_ms, char *id,
                     size_t idlen, char *err, size_t errlen)
{
    if (rr_cli_expand_once(pattern, sec, id, idlen, err, errlen) != 0)
        return -1;
    rr_log(RR_LOG_INFO, "once",
           (struct rr_field[]){ RR_FS("once", id), RR_FN("clock_s", sec), RR_FN("masters", n_ok),
                                RR_FN("local_offset_ms", local_ms - sec * 1000),
                                RR_FIELD_END },
           "--once ID %s, from the lock service's clock (TIME %lld: the median of %d "
           "master answer%s; this host's clock is %+.1fs from it)", id, sec, n_ok,
           n_ok == 1 ? "" : "s", (double)(local_ms - sec * 1000) / 1000.0);
    return 0;
}

static void on_time(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct ask *a = arg;
    long long sec;

    if (status == RR_REPLY_OK && rr_once_clock_parse(r, &sec) == 0) {
        a->t[a->n_ok++] = sec;
    } else if (!a->err[0]) {
        const char *why = status == RR_REPLY_OK && r->type == REDIS_REPLY_ERROR ? r->str
                          : status == RR_REPLY_OK                           ? "not a TIME reply"
                          : status == RR_REPLY_TIMEOUT                      ? "no reply in time"
                                                                            : rr_svc_error(c);
        snprintf(a->err, sizeof a->err, "%s: %s", rr_svc_name(c), why && *why ? why : "failed");
    }
    if (--a->pending > 0)
        return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    a->cb(a->n_ok, a->n_ok ? rr_once_clock_median(a->t, a->n_ok) : 0,
          (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000, a->err, a->arg);
    free(a);
}

int rr_once_clock_ask(struct rr_svc **conns, int n, rr_once_clock_fn cb, void *arg)
{
    struct ask *a = calloc(1, sizeof *a);
    const char *argv[] = { "TIME", NULL };

    if (!a)
        return -1;
    a->cb = cb;
    a->arg = arg;
    a->pending = 1;   /* held until every request is queued */
    for (int i = 0; i < n && i < RR_MAX_ENDPOINTS; i++) {
        a->pending++;
        if (rr_svc_commandv(conns[i], on_time, a, argv) != 0)
            a->pending--;
    }
    if (a->pending == 1) {
        free(a);
        return -1;
    }
    if (--a->pending == 0)   /* cannot happen: callbacks come later */
        free(a);
    return 0;
}
