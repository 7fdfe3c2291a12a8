/* verdict.c — the --status --max-age verdict (see verdict.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "escape.h"
#include "verdict.h"

static const char *const words[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

static bool failed(enum rr_job_status s)
{
    return s == RR_JOB_FAILED || s == RR_JOB_TIMEOUT || s == RR_JOB_LOST ||
           s == RR_JOB_ABANDONED || s == RR_JOB_UNKNOWN;
}

/* Append to line at *n (bounded by len), as snprintf. */
#define ADD(...)                                                                   \
    do {                                                                           \
        if (*n < len)                                                              \
            *n += (size_t)snprintf(line + *n, len - *n, __VA_ARGS__);              \
    } while (0)

/* "held 3d by web-1 (fence 42), more than --warn-held 6h; " */
static void add_held(const struct rr_verdict_in *in, char *line, size_t len, size_t *n)
{
    char held_s[32], warn_s[32], host[400];

    rr_nagios_escape(in->held_host ? in->held_host : "", host, sizeof host);
    rr_duration_format((in->now_ms - in->held_since_ms) / 1000 * 1000, held_s, sizeof held_s);
    rr_duration_format(in->warn_held_ms, warn_s, sizeof warn_s);
    ADD("held %s", held_s);
    if (*host)
        ADD(" by %s", host);
    if (in->held_fence > 0)
        ADD(" (fence %lld)", in->held_fence);
    ADD(", more than --warn-held %s; ", warn_s);
}

/* "--once d1 abandoned, not settled: redlock-run --status settle says how
 * to settle it; " (or the first three of several). The command is one to
 * paste: --status prints the --resolve commands, each with what it means. */
static void add_unsettled(const struct rr_verdict_in *in, char *line, size_t len, size_t *n)
{
    char id[600], st[100], job[600], qjob[sizeof job * 4 + 3], again[4200], cmd[sizeof qjob + 4300];
    size_t k = in->n_unsettled;

    rr_nagios_escape(in->job ? in->job : in->name, job, sizeof job);
    rr_shell_word(job, qjob, sizeof qjob);
    rr_nagios_escape(in->again ? in->again : "", again, sizeof again);
    snprintf(cmd, sizeof cmd, "redlock-run%s --status %s", again, qjob);
    if (k == 1) {
        rr_nagios_escape(in->unsettled[0], id, sizeof id);
        rr_nagios_escape(in->unsettled[1], st, sizeof st);
        ADD("--once %s %s, not settled: %s says how to settle it; ", id, st, cmd);
        return;
    }
    ADD("%zu --once IDs not settled (", k);
    for (size_t i = 0; i < k && i < 3; i++) {
        rr_nagios_escape(in->unsettled[2 * i], id, sizeof id);
        rr_nagios_escape(in->unsettled[2 * i + 1], st, sizeof st);
        ADD("%s%s %s", i ? ", " : "", id, st);
    }
    ADD("%s): %s says how to settle each; ", k > 3 ? ", ..." : "", cmd);
}

bool rr_verdict_held_long(const struct rr_verdict_in *in)
{
    return in->held && in->warn_held_ms > 0 && in->held_since_ms > 0 &&
           in->now_ms - in->held_since_ms > in->warn_held_ms;
}

/* The plugin line is one line whose perfdata (after '|') only we write:
 * every string in it goes through rr_nagios_escape, the record's host
 * (which any tenant of the Redis may have written) as much as the name
 * (a NAME may hold a '|'). */
int rr_verdict(const struct rr_verdict_in *in, char *line, size_t len)
{
    char age_s[32], max_s[32], where[600] = "", name[600], key[600], host[400], near[600];
    long long age = in->now_ms - in->success_ms;
    enum rr_job_status last = in->last;
    bool long_held = rr_verdict_held_long(in);
    int code;
    size_t n0 = 0, *n = &n0;

    if (last == RR_JOB_RUNNING && !in->held)
        last = RR_JOB_ABANDONED;   /* its holder died, as --status says */
    rr_nagios_escape(in->name, name, sizeof name);
    rr_nagios_escape(in->key, key, sizeof key);
    rr_nagios_escape(in->success_host, host, sizeof host);
    if (last == RR_JOB_NONE && in->success_ms <= 0) {
        ADD("REDLOCK CRITICAL - %s never ran (no record under %s)", name, key);
        if (in->near) {
            rr_nagios_escape(in->near, near, sizeof near);
            ADD("; did you mean %s?", near);
        }
        return RR_VERDICT_CRITICAL;
    }
    rr_duration_format(in->max_age_ms, max_s, sizeof max_s);
    if (in->success_ms <= 0) {
        ADD("REDLOCK CRITICAL - %s ", name);
        if (long_held)
            add_held(in, line, len, n);
        if (in->n_unsettled)
            add_unsettled(in, line, len, n);
        ADD("never succeeded (last run %s)", rr_job_status_name(last));
        return RR_VERDICT_CRITICAL;
    }
    if (age < 0)
        age = 0;   /* a clock a little behind the server's */
    rr_duration_format(age / 1000 * 1000, age_s, sizeof age_s);
    if (in->success_fence > 0 && *host)
        snprintf(where, sizeof where, " (fence %lld on %s)", in->success_fence, host);
    if (age > in->max_age_ms)
        code = RR_VERDICT_CRITICAL;
    else if (failed(last) || in->n_unsettled || long_held)
        code = RR_VERDICT_WARNING;
    else
        code = RR_VERDICT_OK;
    ADD("REDLOCK %s - %s ", words[code], name);
    if (long_held)
        add_held(in, line, len, n);
    if (failed(last))
        ADD("last run %s; ", rr_job_status_name(last));
    else if (last == RR_JOB_RUNNING && !long_held)
        ADD("running now; ");
    if (in->n_unsettled)
        add_unsettled(in, line, len, n);
    ADD("succeeded %s ago%s%s%s | age=%llds;;%llds", age_s, where,
        code == RR_VERDICT_CRITICAL ? ", more than --max-age " : "",
        code == RR_VERDICT_CRITICAL ? max_s : "", age / 1000, in->max_age_ms / 1000);
    return code;
}

/* Levenshtein distance of a and b, two rows; SIZE_MAX when one is too long. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[2][257];

    if (la > 256 || lb > 256)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *prev = row[(i - 1) & 1], *cur = row[i & 1];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    }
    return row[la & 1][lb];
}

int rr_verdict_closest(const char *want, const char *const *cands, size_t n)
{
    size_t len = strlen(want), best = SIZE_MAX, limit = len / 3;
    int at = -1;

    /* One edit for a short name, a third of a long one; never as many as
     * want has letters (for "nc", "a?" is no typo). */
    if (limit < 1)
        limit = 1;
    if (limit >= len)
        limit = len ? len - 1 : 0;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i] || strcmp(cands[i], want) == 0)
            continue;
        size_t d = distance(want, cands[i]);
        if (d <= limit && d < best) {
            best = d;
            at = (int)i;
        }
    }
    return at;
}

int rr_verdict_unknown(const char *why, char *line, size_t len)
{
    char w[1024];

    rr_nagios_escape(why, w, sizeof w);
    snprintf(line, len, "REDLOCK UNKNOWN - %s", w);
    return RR_VERDICT_UNKNOWN;
}
