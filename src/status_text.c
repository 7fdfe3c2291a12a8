/* status_text.c — the pure half of --status (status_impl.h): a job's
 * records as text lines. Everything read from Redis is escaped for the
 * terminal (rr_record_text): another tenant's record must not drive it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "record.h"
#include "status_impl.h"

#define TXT(s, b) rr_record_text((s), (b), sizeof(b))

/* "last success" line of a record, if it has one. */
void rr_status_text_success(FILE *f, const char *label, const struct rr_job_record *rec)
{
    char t[32], d[32], host[300];

    if (rec->last_success_ms <= 0)
        return;
    rr_record_time(rec->last_success_ms, t, sizeof t);
    rr_duration_format((rr_record_wall_ms() - rec->last_success_ms) / 1000 * 1000, d, sizeof d);
    fprintf(f, "%-10s %s (%s ago) on %s (fence %lld)\n", label, t, d,
            rec->last_success_host[0] ? TXT(rec->last_success_host, host) : "?",
            rec->last_success_fence);
}

/* The lock line: who holds it, since when, when it was last renewed. tok:
 * the lock's value, NULL when free. A lock that --release marked
 * (force.lua) carries the holder's own token after the mark; it holds
 * until the holder's next renewal makes it stop and release. */
/* The lock's lines: free, or its holder (unknown if the record is not the
 * token's), what holds the holder's command (contain, from its record), and
 * the lease left. */
void rr_status_text_lock(FILE *f, const char *tok, long long pttl, const struct rr_job_record *st,
                      const char *contain)
{
    char d[32], since[64], beat[64], host[300], held_for[48] = "";

    if (!tok) {
        fprintf(f, "%-10s free\n", "lock");
        return;
    }
    bool revoked = strncmp(tok, "revoked:", 8) == 0 && strcmp(st->token, tok + 8) == 0;
    rr_duration_format(pttl < 0 ? 0 : pttl, d, sizeof(d));
    rr_record_time(st->started_ms, since, sizeof since);
    rr_record_time(st->heartbeat_ms, beat, sizeof beat);
    /* How long the run has held it: a hung run shows, not only its lease. */
    if (st->started_ms > 0 && rr_record_wall_ms() >= st->started_ms) {
        char dd[32];
        rr_duration_format((rr_record_wall_ms() - st->started_ms) / 1000 * 1000, dd, sizeof dd);
        snprintf(held_for, sizeof held_for, " (held for %s)", dd);
    }
    if (revoked || strcmp(st->token, tok) == 0)
        fprintf(f, "%-10s %sheld by %s pid %lld (fence %lld) since %s%s, last renewed %s, "
                "%s left\n", "lock", revoked ? "being released (--release): " : "",
                TXT(st->host, host), st->pid, st->fence, since, held_for, beat, d);
    else {
        /* Another program's SET NX PX on the key (an application sharing
         * the lock), or a mark whose record is gone. */
        fprintf(f, "%-10s held by a program that is not redlock-run (no record of its "
                "token), %s%s\n", "lock", pttl == -1 ? "no expiry" : d,
                pttl == -1 ? "" : " left");
        return;
    }
    if (contain && strcmp(contain, "cgroup") == 0)
        fprintf(f, "%-10s cgroup (cgroup.kill stops every process of the command at once)\n",
                "contain");
    else if (contain && strcmp(contain, "tree") == 0)
        fprintf(f, "%-10s process tree (the guard is the subreaper of every process the "
                   "command starts)\n", "contain");
}

/* key: the record's key, named when there is none (a typo in NAME or an
 * ID that never ran reads differently from a healthy job). */
void rr_status_text_record(FILE *f, const char *label, const redisReply *flat, bool held,
                        const char *key)
{
    struct rr_job_record rec;
    char t[32], d[32], host[300], failed[600];

    rr_job_record_parse(&rec, flat);
    if (rec.status == RR_JOB_RUNNING && !held)
        rec.status = RR_JOB_ABANDONED;
    if (rec.status == RR_JOB_NONE) {
        fprintf(f, "%-10s never ran (no record under %s)\n", label, key);
        return;
    }
    rr_record_time(rec.started_ms, t, sizeof(t));
    fprintf(f, "%-10s %s on %s pid %lld (fence %lld), started %s", label,
            rr_job_status_name(rec.status), rec.host[0] ? TXT(rec.host, host) : "?", rec.pid,
            rec.fence, t);
    if (rec.finished_ms > 0 && rec.started_ms > 0) {
        rr_duration_format(rec.finished_ms - rec.started_ms, d, sizeof(d));
        fprintf(f, ", took %s", d);
    }
    if (rec.exit_code >= 0)
        fprintf(f, ", exit %d", rec.exit_code);
    if (rec.signal > 0)
        fprintf(f, ", signal %d", rec.signal);
    fputc('\n', f);
    rr_record_text_resolved(f, flat);
    rr_record_text_command(f, flat);
    /* A degraded quorum: the run went ahead without some masters. */
    if (rec.masters_total > 1 && rec.masters_ok < rec.masters_total)
        fprintf(f, "%-10s the run reached %d of %d masters (a degraded quorum)%s%s\n",
                "warning", rec.masters_ok, rec.masters_total,
                rec.masters_failed[0] ? ": " : "", TXT(rec.masters_failed, failed));
}

/* The history entries, newest first, one line each. */
void rr_status_text_history(FILE *f, const redisReply *hist)
{
    char d[32];

    if (hist->type != REDIS_REPLY_ARRAY || hist->elements == 0)
        return;
    fprintf(f, "history (newest first):\n");
    for (size_t i = 0; i < hist->elements; i++) {
        const redisReply *e = hist->element[i];
        char t[32], how[80], status[80], host[300], pid[80], fence[80], once[300], by[300];
        if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
            continue;
        const redisReply *h = e->element[1];
        const char *s = rr_record_field(h, "started_ms"), *dur = rr_record_field(h, "duration_ms");
        const char *code_s = rr_record_field(h, "exit_code"), *once_s = rr_record_field(h, "once");
        const char *sig_s = rr_record_field(h, "signal"), *by_s = rr_record_field(h, "by");
        const char *st_s = rr_record_field(h, "status"), *host_s = rr_record_field(h, "host");
        const char *pid_s = rr_record_field(h, "pid"), *fence_s = rr_record_field(h, "fence");
        char v[64];
        /* One column for how it ended: "exit N", "signal N", or "-". */
        if (sig_s && *sig_s && strcmp(sig_s, "0") != 0)
            snprintf(how, sizeof how, "signal %s", TXT(sig_s, v));
        else if (code_s && *code_s)
            snprintf(how, sizeof how, "exit %s", TXT(code_s, v));
        else
            snprintf(how, sizeof how, "-");
        rr_record_time(s ? atoll(s) : 0, t, sizeof(t));
        rr_duration_format(dur ? atoll(dur) : 0, d, sizeof(d));
        fprintf(f, "  %s  %-18s %-9s %-8s %s pid %s fence %s%s%s%s%s\n", t,
                st_s ? TXT(st_s, status) : "?", how, d, host_s ? TXT(host_s, host) : "?",
                pid_s ? TXT(pid_s, pid) : "?", fence_s ? TXT(fence_s, fence) : "?",
                once_s && *once_s ? " once " : "", once_s && *once_s ? TXT(once_s, once) : "",
                by_s && *by_s ? " by " : "", by_s && *by_s ? TXT(by_s, by) : "");
    }
}


/* How to settle an --once ID (id: as stored; NULL: several, "ID" stands
 * for each): the three --resolve commands, each on a line of its own to
 * paste, every word quoted for the shell, with what each means on the line
 * above (a comment after a command is not one in every shell). again: the
 * options that reach the same Redis (rr_cli_target_words). */
void rr_status_text_settle(FILE *f, const char *id, const char *name, const char *again)
{
    static const char *const verb[][2] = {
        { "succeeded", "it did its work: never run it again" },
        { "retry", "allow one more attempt" },
        { "clear", "set it aside: its attempts count afresh, it may run again" },
    };
    char tid[RR_ONCE_MAX * 4 + 1], tnm[300], cmd[8192];

    fprintf(f, "%-10s settle %s with one of these, once you know what the run did:\n", "",
            id ? "it" : "each");
    for (size_t i = 0; i < sizeof verb / sizeof verb[0]; i++)
        fprintf(f, "%-10s - %s:\n%-10s     %s\n", "", verb[i][1], "",
                rr_cli_resolve_command(cmd, sizeof cmd, again, verb[i][0],
                                       id ? TXT(id, tid) : "ID", TXT(name, tnm)));
}

/* The abandoned --once IDs (stale), and the commands that resolve them. */
void rr_status_text_abandoned(FILE *f, const char *name, const redisReply *stale,
                              const char *again)
{
    char id[RR_ONCE_MAX * 4 + 1];
    size_t n = stale->type == REDIS_REPLY_ARRAY ? stale->elements : 0;

    if (n == 0)
        return;
    fprintf(f, "%-10s", "abandoned");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %s", TXT(rr_record_str(stale->element[i]), id));
    fputc('\n', f);
    rr_status_text_settle(f, n == 1 ? rr_record_str(stale->element[0]) : NULL, name, again);
}
