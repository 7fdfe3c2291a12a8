/* record.c — a job's records as --status and --list show them (record.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record.h"
#include "duration.h"
#include "escape.h"

long long rr_record_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *rr_record_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) ? r->str : "";
}

void rr_record_keys_end(long long ms, char *buf, size_t len)
{
    char d[32];

    if (ms < 0) {
        snprintf(buf, len, "never");
        return;
    }
    ms -= ms >= 3600000 ? ms % 60000 : ms >= 1000 ? ms % 1000 : 0;
    snprintf(buf, len, "in %s", rr_duration_format(ms, d, sizeof d));
}

void rr_record_time(long long ms, char *buf, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0 || !localtime_r(&t, &tm)) {
        snprintf(buf, len, "-");
        return;
    }
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

void rr_record_json_str(FILE *f, const char *s)
{
    char buf[1024];

    rr_json_escape(s ? s : "", buf, sizeof(buf));
    fprintf(f, "\"%s\"", buf);
}

const char *rr_record_field(const redisReply *flat, const char *name)
{
    if (!flat || flat->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < flat->elements; i += 2)
        if (strcmp(rr_record_str(flat->element[i]), name) == 0)
            return rr_record_str(flat->element[i + 1]);
    return NULL;
}

const char *const rr_record_fields[] = { "status", "host", "pid", "fence", "once",
                                         "started_ms", "heartbeat_ms", "finished_ms",
                                         "exit_code", "signal", "last_success_ms",
                                         "last_success_fence", "last_success_host",
                                         "masters_ok", "masters_total", "masters_failed",
                                         "resolved", "resolved_by", "resolved_ms",
                                         "resolved_from", "command", "command_prev", NULL };
static const char *const numeric[] = { "pid", "fence", "started_ms", "heartbeat_ms",
                                       "finished_ms", "exit_code", "signal", "duration_ms",
                                       "wait_ms", "last_success_ms", "last_success_fence",
                                       "masters_ok", "masters_total", "resolved_ms", NULL };

static bool is_numeric(const char *name)
{
    for (int i = 0; numeric[i]; i++)
        if (strcmp(numeric[i], name) == 0)
            return true;
    return false;
}

void rr_record_json_int(FILE *f, const char *v)
{
    long long n;

    if (rr_json_int(v, &n))
        fprintf(f, "%lld", n);
    else
        fputs("null", f);
}

const char *rr_record_text(const char *s, char *buf, size_t len)
{
    rr_text_escape(s, buf, len);
    return buf;
}

void rr_record_json(FILE *f, const redisReply *flat, const char *const *names,
                    const char *status)
{
    fputc('{', f);
    for (int i = 0; names[i]; i++) {
        const char *v = rr_record_field(flat, names[i]);
        if (status && strcmp(names[i], "status") == 0)
            v = status;
        fprintf(f, "%s\"%s\":", i ? "," : "", names[i]);
        /* Another tenant may have written anything there: a number that
         * is not a JSON integer is null, so the type holds. */
        if (!v || !*v)
            fputs("null", f);
        else if (is_numeric(names[i]))
            rr_record_json_int(f, v);
        else
            rr_record_json_str(f, v);
    }
    fputc('}', f);
}

/* "resolved  clear by alice@web-1:4242 at 2026-12-01 03:10:00 (it was
 * abandoned)": the operator's last verdict on the record, if any. */
void rr_record_text_resolved(FILE *f, const redisReply *flat)
{
    const char *how = rr_record_field(flat, "resolved");
    const char *by = rr_record_field(flat, "resolved_by");
    const char *from = rr_record_field(flat, "resolved_from");
    const char *when = rr_record_field(flat, "resolved_ms");
    char t[32], h[64], b[300], w[64];
    long long ms;

    if (!how || !*how)
        return;
    rr_record_time(when && rr_json_int(when, &ms) ? ms : 0, t, sizeof t);
    fprintf(f, "%-10s --resolve %s by %s at %s (it was %s)\n", "resolved",
            rr_record_text(how, h, sizeof h), by && *by ? rr_record_text(by, b, sizeof b) : "?", t,
            from && *from ? rr_record_text(from, w, sizeof w) : "?");
}

/* "command    changed: fingerprint X, the run before had Y": the last run's
 * command is not the one before it (the fingerprints, never the command). */
void rr_record_text_command(FILE *f, const redisReply *flat)
{
    const char *now = rr_record_field(flat, "command");
    const char *prev = rr_record_field(flat, "command_prev");
    char a[64], b[64];

    if (now && *now && prev && *prev && strcmp(now, prev) != 0)
        fprintf(f, "%-10s changed: fingerprint %s, the run before had %s (two jobs sharing "
                   "this NAME?)\n", "command", rr_record_text(now, a, sizeof a),
                rr_record_text(prev, b, sizeof b));
}
