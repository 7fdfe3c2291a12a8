/* verdict.c — the --status --max-age verdict (see verdict.h). */
#include <stdio.h>

#include "duration.h"
#include "escape.h"
#include "verdict.h"

static const char *const words[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

static bool failed(enum rr_job_status s)
{
    return s == RR_JOB_FAILED || s == RR_JOB_TIMEOUT || s == RR_JOB_LOST ||
           s == RR_JOB_ABANDONED || s == RR_JOB_UNKNOWN;
}

/* The plugin line is one line whose perfdata (after '|') only we write:
 * every string in it goes through rr_nagios_escape, the record's host
 * (which any tenant of the Redis may have written) as much as the name
 * (a NAME may hold a '|'). */
int rr_verdict(const struct rr_verdict_in *in, char *line, size_t len)
{
    char age_s[32], max_s[32], where[600] = "", name[600], key[600], host[400];
    long long age = in->now_ms - in->success_ms;
    enum rr_job_status last = in->last;
    int code;

    if (last == RR_JOB_RUNNING && !in->held)
        last = RR_JOB_ABANDONED;   /* its holder died, as --status says */
    rr_nagios_escape(in->name, name, sizeof name);
    rr_nagios_escape(in->key, key, sizeof key);
    rr_nagios_escape(in->success_host, host, sizeof host);
    if (last == RR_JOB_NONE && in->success_ms <= 0) {
        snprintf(line, len, "REDLOCK CRITICAL - %s never ran (no record under %s)",
                 name, key);
        return RR_VERDICT_CRITICAL;
    }
    rr_duration_format(in->max_age_ms, max_s, sizeof max_s);
    if (in->success_ms <= 0) {
        snprintf(line, len, "REDLOCK CRITICAL - %s never succeeded (last run %s)", name,
                 rr_job_status_name(last));
        return RR_VERDICT_CRITICAL;
    }
    if (age < 0)
        age = 0;   /* a clock a little behind the server's */
    rr_duration_format(age / 1000 * 1000, age_s, sizeof age_s);
    if (in->success_fence > 0 && *host)
        snprintf(where, sizeof where, " (fence %lld on %s)", in->success_fence, host);
    if (age > in->max_age_ms)
        code = RR_VERDICT_CRITICAL;
    else if (failed(last))
        code = RR_VERDICT_WARNING;
    else
        code = RR_VERDICT_OK;
    int n = snprintf(line, len, "REDLOCK %s - %s ", words[code], name);
    if (n < 0 || (size_t)n >= len)
        return code;
    if (code == RR_VERDICT_WARNING || (code == RR_VERDICT_CRITICAL && failed(last)))
        n += snprintf(line + n, len - (size_t)n, "last run %s; ", rr_job_status_name(last));
    else if (last == RR_JOB_RUNNING)
        n += snprintf(line + n, len - (size_t)n, "running now; ");
    if ((size_t)n >= len)
        return code;
    snprintf(line + n, len - (size_t)n, "succeeded %s ago%s%s%s | age=%llds;;%llds", age_s,
             where, code == RR_VERDICT_CRITICAL ? ", more than --max-age " : "",
             code == RR_VERDICT_CRITICAL ? max_s : "", age / 1000, in->max_age_ms / 1000);
    return code;
}

int rr_verdict_unknown(const char *why, char *line, size_t len)
{
    char w[1024];

    rr_nagios_escape(why, w, sizeof w);
    snprintf(line, len, "REDLOCK UNKNOWN - %s", w);
    return RR_VERDICT_UNKNOWN;
}
