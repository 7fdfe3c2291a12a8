/* status.c — --status and --resolve (--release: revoke.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "service.h"
#include "duration.h"
#include "escape.h"
#include "log.h"
#include "scripts.h"
#include "svc_config.h"
#include "status.h"
#include "diag.h"
#include "verdict.h"
#include "record.h"

struct op {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    FILE *out;
    struct rr_job_keys keys;
    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n, next, pending;
    int exit_code;
    char host[256], pid[24];
    char state_pattern[1024];
    /* --release / --resolve tallies over all masters */
    int done, none, running, succeeded, errors;
    char what[512];
    char err[RR_ERRLEN];
};

int rr_status_exit_code(bool held, enum rr_job_status last, int n_abandoned, int n_failed)
{
    if (held)
        return RR_STATUS_HELD;
    if (n_abandoned > 0 || last == RR_JOB_ABANDONED || last == RR_JOB_RUNNING)
        return RR_STATUS_ABANDONED;
    if (last == RR_JOB_NONE)
        return RR_STATUS_NONE;
    if (last == RR_JOB_FAILED || last == RR_JOB_TIMEOUT || last == RR_JOB_LOST || n_failed > 0)
        return RR_STATUS_FAILED;
    return RR_STATUS_IDLE;
}

/* A string read from Redis, escaped for the terminal into the buffer b
 * (an array): another tenant's record must not drive the terminal. */
#define TXT(s, b) rr_record_text((s), (b), sizeof(b))

static const char *const hist_fields[] = { "status", "exit_code", "signal", "host", "pid",
                                           "fence", "once", "started_ms", "finished_ms",
                                           "duration_ms", "wait_ms", "by", NULL };

/* "last success" line of a record, if it has one. */
static void text_success(FILE *f, const char *label, const struct rr_job_record *rec)
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
static void text_lock(FILE *f, const char *tok, long long pttl, const struct rr_job_record *st,
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
        fprintf(f, "%-10s held (holder unknown), %s left\n", "lock", d);
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
static void text_record(FILE *f, const char *label, const redisReply *flat, bool held,
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

/* The SCAN MATCH pattern of every job's state record under prefix, as
 * --list's (list_view.c, which calls into this file: not shared). */
static int state_pattern(const char *prefix, char *buf, size_t len)
{
    size_t o = 0;

    for (; *prefix; prefix++) {
        if (o + 3 >= len)
            return -1;
        if (strchr("*?[]\\", *prefix))
            buf[o++] = '\\';
        buf[o++] = *prefix;
    }
    return snprintf(buf + o, len - o, "\\{*\\}:state") >= (int)(len - o) ? -1 : 0;
}

/* The name a missing NAME or ID may be a typo of: near holds the state
 * keys "PREFIX{NAME}:state" there are (for a NAME) or the job's once IDs
 * (for an ID). Writes the closest to buf and returns it; NULL if none is
 * close. */
static const char *closest(const struct op *op, const redisReply *near, char *buf, size_t len)
{
    const char *want = op->cfg->once_id[0] ? op->cfg->once_id : op->cfg->name;
    char names[200][RR_NAME_MAX + 1];
    const char *cands[200];
    size_t n = 0, pl = strlen(op->cfg->prefix);

    for (size_t i = 0; near->type == REDIS_REPLY_ARRAY && i < near->elements && n < 200; i++) {
        const char *k = rr_record_str(near->element[i]), *e = strstr(k, "}:state");
        if (op->cfg->once_id[0]) {
            cands[n++] = k;
            continue;
        }
        if (strncmp(k, op->cfg->prefix, pl) != 0 || k[pl] != '{' || !e || e[7] ||
            (size_t)(e - k) - pl - 1 > RR_NAME_MAX)
            continue;   /* not a job's state key (a --limit slot's is ":state:N") */
        snprintf(names[n], sizeof names[n], "%.*s", (int)(e - k - (ptrdiff_t)pl - 1), k + pl + 1);
        cands[n] = names[n];
        n++;
    }
    int at = rr_verdict_closest(want, cands, n);
    if (at < 0)
        return NULL;
    snprintf(buf, len, "%s", cands[at]);
    return buf;
}

/* --status --max-age: the one plugin line for rec, and its exit status. */
static int check_line(struct op *op, const struct rr_job_record *rec, bool held,
                      const struct rr_job_record *st, bool know_holder, const redisReply *r,
                      const char *near)
{
    char name[RR_ONCE_MAX + 320], line[4096];
    const redisReply *uns = r->element[8];
    const char *ids[200];
    size_t n_uns = 0;

    if (op->cfg->once_id[0])
        snprintf(name, sizeof name, "%s --once %s", op->cfg->name, op->cfg->once_id);
    else
        snprintf(name, sizeof name, "%s", op->cfg->name);
    struct rr_verdict_in in = {
        .name = name, .key = op->cfg->once_id[0] ? op->keys.once : op->keys.state,
        .last = rec->status, .held = held, .now_ms = rr_record_wall_ms(),
        .max_age_ms = op->cfg->max_age_ms, .success_ms = rec->last_success_ms,
        .success_fence = rec->last_success_fence, .success_host = rec->last_success_host,
        .held_since_ms = know_holder ? st->started_ms : 0,
        .held_fence = know_holder ? st->fence : 0, .held_host = know_holder ? st->host : "",
        .warn_held_ms = op->cfg->warn_held_ms, .job = op->cfg->name,
    };
    /* The unsettled --once IDs are the job's: a check of one ID is about it. */
    for (size_t i = 0; !op->cfg->once_id[0] && uns->type == REDIS_REPLY_ARRAY &&
                       i + 1 < uns->elements && n_uns < 200; i += 2) {
        ids[n_uns++] = rr_record_str(uns->element[i]);
        ids[n_uns++] = rr_record_str(uns->element[i + 1]);
    }
    in.unsettled = ids;
    in.n_unsettled = n_uns / 2;
    in.near = near;
    int code = rr_verdict(&in, line, sizeof line);
    fprintf(op->out, "%s\n", line);
    return code;
}

/* The history entries, newest first, one line each. */
static void text_history(FILE *f, const redisReply *hist)
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

/* The --once ID's part of the text: its record, its last success, the
 * attempts it used, and the command that allows one more. */
static void text_once(struct op *op, const struct rr_job_record *on, const redisReply *once,
                      bool held)
{
    const struct rr_config *cfg = op->cfg;
    FILE *f = op->out;

    fprintf(f, "once %s:\n", cfg->once_id);
    text_record(f, "  ", once, held, op->keys.once);
    text_success(f, "  last ok", on);
    /* The attempts the ID used (--attempts N allows N per ID). */
    if (on->status != RR_JOB_NONE)
        fprintf(f, "%-10s %d used%s\n", "  attempts", rr_job_attempts_used(on),
                on->retry ? ", one more allowed (--resolve retry)" : "");
    /* Refused (65) once --attempts are used: the command that allows one
     * more, to copy. */
    if (!on->retry && (on->status == RR_JOB_FAILED || on->status == RR_JOB_TIMEOUT ||
                       on->status == RR_JOB_LOST))
        fprintf(f, "%-10s redlock-run --resolve retry --once %s %s\n", "  one more",
                cfg->once_id, cfg->name);
}

/* The abandoned --once IDs (stale), and the command that resolves them. */
static void text_abandoned(FILE *f, const char *name, const redisReply *stale)
{
    char id[RR_ONCE_MAX * 4 + 1];
    size_t n = stale->type == REDIS_REPLY_ARRAY ? stale->elements : 0;

    if (n == 0)
        return;
    fprintf(f, "%-10s", "abandoned");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %s", TXT(rr_record_str(stale->element[i]), id));
    /* The real ID when there is one; the operator copies this line. */
    if (n == 1)
        fprintf(f, "\n%-10s resolve with: redlock-run --resolve succeeded|retry|clear --once %s %s\n",
                "", TXT(rr_record_str(stale->element[0]), id), name);
    else
        fprintf(f, "\n%-10s resolve each with: redlock-run --resolve succeeded|retry|clear "
                   "--once ID %s, ID one of the above\n", "", name);
}

/* The unsettled --once IDs (status.lua's {id, status, ...}) that are not
 * abandoned: failed, timed out, lost (or another status). */
static int n_failed_ids(const redisReply *uns)
{
    int n = 0;

    for (size_t i = 0; uns->type == REDIS_REPLY_ARRAY && i + 1 < uns->elements; i += 2)
        n += strcmp(rr_record_str(uns->element[i + 1]), "abandoned") != 0;
    return n;
}

/* "not settled --once d3 failed, ...": the failed IDs nobody settled,
 * with the command that settles one. */
static void text_failed_ids(FILE *f, const char *name, const redisReply *uns)
{
    char id[RR_ONCE_MAX * 4 + 1], st[64];
    const char *first = NULL;
    int n = 0;

    for (size_t i = 0; uns->type == REDIS_REPLY_ARRAY && i + 1 < uns->elements; i += 2) {
        const char *s = rr_record_str(uns->element[i + 1]);
        if (strcmp(s, "abandoned") == 0)
            continue;
        if (!n++) {
            first = rr_record_str(uns->element[i]);
            fprintf(f, "%-10s", "not settled");
        }
        fprintf(f, " --once %s %s", TXT(rr_record_str(uns->element[i]), id), TXT(s, st));
    }
    if (n == 1)
        fprintf(f, "\n%-10s settle with: redlock-run --resolve retry|succeeded|clear --once %s %s\n",
                "", TXT(first, id), name);
    else if (n > 1)
        fprintf(f, "\n%-10s settle each with: redlock-run --resolve retry|succeeded|clear "
                   "--once ID %s\n", "", name);
}

/* reply: {holder|nil, pttl, state, history, stale_once_ids, once|nil, complete,
 *         near, unsettled} */
static int print_status(struct op *op, const redisReply *r)
{
    const struct rr_config *cfg = op->cfg;
    FILE *f = op->out;
    bool held = r->element[0]->type == REDIS_REPLY_STRING;
    long long pttl = r->element[1]->type == REDIS_REPLY_INTEGER ? r->element[1]->integer : -2;
    const redisReply *state = r->element[2], *hist = r->element[3];
    const redisReply *stale = r->element[4], *once = r->element[5];
    bool scan_complete = r->element[6]->type == REDIS_REPLY_INTEGER &&
                         r->element[6]->integer == 1;
    struct rr_job_record st, on;
    const char *holder_tok = held ? r->element[0]->str : "";
    int n_stale = stale->type == REDIS_REPLY_ARRAY ? (int)stale->elements : 0;
    bool have_once = cfg->once_id[0] && once->type == REDIS_REPLY_ARRAY;

    rr_job_record_parse(&st, state);
    rr_job_record_parse(&on, have_once ? once : NULL);
    /* 'running' with nobody holding the lock means its holder died: show it
     * as the next run will record it. */
    const char *abandoned = rr_job_status_name(RR_JOB_ABANDONED);
    const char *st_shown = st.status == RR_JOB_RUNNING && !held ? abandoned : NULL;
    const char *on_shown = on.status == RR_JOB_RUNNING && !held ? abandoned : NULL;
    /* The holder is described by the state record only if it is the holder's. */
    bool know_holder = held && strcmp(st.token, holder_tok) == 0;
    /* What holds the holder's command (--contain), as it wrote at acquire. */
    const char *contain = rr_record_field(state, "contain");
    int code = cfg->once_id[0]
                   ? rr_status_exit_code(held && (!know_holder || !st.once[0] ||
                                                  strcmp(st.once, cfg->once_id) == 0),
                                         on.status, 0, 0)
                   : rr_status_exit_code(held, st.status, n_stale, n_failed_ids(r->element[8]));

    char near_b[RR_ONCE_MAX + RR_NAME_MAX + 2];
    const char *near = (cfg->once_id[0] ? on.status : st.status) == RR_JOB_NONE && !held
                           ? closest(op, r->element[7], near_b, sizeof near_b) : NULL;

    if (cfg->max_age_ms > 0)
        return check_line(op, cfg->once_id[0] ? &on : &st, held, &st, know_holder, r, near);

    if (cfg->json) {
        fputs("{\"name\":", f);
        rr_record_json_str(f, cfg->name);
        fprintf(f, ",\"exit_code\":%d,\"did_you_mean\":", code);
        if (near) rr_record_json_str(f, near); else fputs("null", f);
        fprintf(f, ",\"never_ran\":%s,\"lock\":{\"held\":%s",
                (cfg->once_id[0] ? on.status : st.status) == RR_JOB_NONE ? "true" : "false",
                held ? "true" : "false");
        if (held) {
            fputs(",\"host\":", f);
            if (know_holder) rr_record_json_str(f, st.host); else fputs("null", f);
            /* As written, if a number: another tenant may have written it. */
            fputs(",\"pid\":", f);
            rr_record_json_int(f, know_holder ? rr_record_field(state, "pid") : NULL);
            fputs(",\"fence\":", f);
            rr_record_json_int(f, know_holder ? rr_record_field(state, "fence") : NULL);
            fputs(",\"contain\":", f);
            if (know_holder && contain && *contain) rr_record_json_str(f, contain); else fputs("null", f);
            fprintf(f, ",\"ttl_ms\":%lld", pttl);
        }
        fputs("},\"last_run\":", f);
        if (st.status == RR_JOB_NONE) fputs("null", f); else rr_record_json(f, state, rr_record_fields, st_shown);
        fputs(",\"history\":[", f);
        for (size_t i = 0; hist->type == REDIS_REPLY_ARRAY && i < hist->elements; i++) {
            const redisReply *e = hist->element[i];
            if (e->type != REDIS_REPLY_ARRAY || e->elements != 2)
                continue;
            fprintf(f, "%s", i ? "," : "");
            rr_record_json(f, e->element[1], hist_fields, NULL);
        }
        fputs("],\"abandoned_once\":[", f);
        for (int i = 0; i < n_stale; i++) {
            fprintf(f, "%s", i ? "," : "");
            rr_record_json_str(f, rr_record_str(stale->element[i]));
        }
        fprintf(f, "],\"abandoned_once_complete\":%s", scan_complete ? "true" : "false");
        if (cfg->once_id[0]) {
            fputs(",\"once\":", f);
            if (on.status == RR_JOB_NONE) {
                fputs("{\"id\":", f);
                rr_record_json_str(f, cfg->once_id);
                fputs(",\"status\":null}", f);
            } else {
                rr_record_json(f, once, rr_record_fields, on_shown);
            }
        }
        return code;   /* on_qstatus adds the holders and the queue, and closes */
    }

    char beat[64], host[300], id[RR_ONCE_MAX * 4 + 1];
    rr_record_time(st.heartbeat_ms, beat, sizeof beat);
    fprintf(f, "%-10s %s\n", "job", cfg->name);
    text_lock(f, held ? holder_tok : NULL, pttl, &st, contain);
    text_record(f, "last run", state, held, op->keys.state);
    text_success(f, "last ok", &st);
    /* What is known: it stopped renewing, and its lease ended. Not why. */
    if (st_shown)
        fprintf(f, "%-10s free, but the last run's holder (%s pid %lld) stopped renewing at %s "
                   "and its record still says running: it died, or could not record its "
                   "outcome (it then exited 74)\n", "warning", TXT(st.host, host), st.pid, beat);
    if (cfg->once_id[0])
        text_once(op, &on, have_once ? once : NULL, held);
    if (near && cfg->once_id[0])
        fprintf(f, "%-10s did you mean %s? redlock-run --status --once %s %s\n", "note",
                TXT(near, id), id, cfg->name);
    else if (near)
        fprintf(f, "%-10s did you mean %s? redlock-run --status %s\n", "note", TXT(near, id), id);
    if (!scan_complete)
        fprintf(f, "%-10s searched part of a large keyspace for abandoned --once IDs; "
                   "there may be more than listed\n", "note");
    text_abandoned(f, cfg->name, stale);
    if (!cfg->once_id[0])
        text_failed_ids(f, cfg->name, r->element[8]);
    text_history(f, hist);
    return code;
}

static bool status_shape(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements == 9;
}

static void close_all(struct op *op)
{
    for (int i = 0; i < op->n; i++)
        if (op->conns[i]) {
            rr_svc_close(op->conns[i]);
            op->conns[i] = NULL;
        }
}

static void ask_status(struct op *op);

/* r: {{{slot, pttl, host, pid, fence}...}, {{waiter, ticket, pttl}...}} (qstatus.lua):
 * the --limit holders beyond slot 1, and the queue. */
static void print_queue(struct op *op, const redisReply *r)
{
    FILE *f = op->out;
    bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
              r->element[0]->type == REDIS_REPLY_ARRAY && r->element[1]->type == REDIS_REPLY_ARRAY;
    const redisReply *hs = ok ? r->element[0] : NULL, *q = ok ? r->element[1] : NULL;
    size_t nh = ok ? hs->elements : 0, nq = ok ? q->elements : 0;
    char d[32];

    for (size_t i = 0; i < nh; i++)
        if (hs->element[i]->type != REDIS_REPLY_ARRAY || hs->element[i]->elements != 5)
            nh = 0;
    for (size_t i = 0; i < nq; i++)
        if (q->element[i]->type != REDIS_REPLY_ARRAY || q->element[i]->elements != 3)
            nq = 0;
    if (op->cfg->json) {
        fputs(",\"holders\":[", f);
        for (size_t i = 0; i < nh; i++) {
            redisReply **e = hs->element[i]->element;
            fprintf(f, "%s{\"slot\":%lld,\"ttl_ms\":%lld,\"host\":", i ? "," : "",
                    e[0]->integer, e[1]->integer);
            rr_record_json_str(f, rr_record_str(e[2]));
            fputs(",\"pid\":", f);
            rr_record_json_int(f, rr_record_str(e[3]));
            fputs(",\"fence\":", f);
            rr_record_json_int(f, rr_record_str(e[4]));
            fputc('}', f);
        }
        fputs("],\"queue\":[", f);
        for (size_t i = 0; i < nq; i++) {
            redisReply **e = q->element[i]->element;
            fprintf(f, "%s{\"waiter\":", i ? "," : "");
            rr_record_json_str(f, rr_record_str(e[0]));
            fputs(",\"ticket\":", f);
            rr_record_json_int(f, rr_record_str(e[1]));
            fprintf(f, ",\"alive\":%s}", e[2]->integer > 0 ? "true" : "false");
        }
        fputs("]}\n", f);
        return;
    }
    for (size_t i = 0; i < nh; i++) {
        redisReply **e = hs->element[i]->element;
        char host[300], pid[80], fence[80];
        if (e[0]->integer == 1)
            continue;   /* print_status described the lock key */
        rr_duration_format(e[1]->integer < 0 ? 0 : e[1]->integer, d, sizeof(d));
        fprintf(f, "%-10s slot %lld held by %s pid %s (fence %s), %s left\n", "lock",
                e[0]->integer, *rr_record_str(e[2]) ? TXT(rr_record_str(e[2]), host) : "?",
                *rr_record_str(e[3]) ? TXT(rr_record_str(e[3]), pid) : "?",
                *rr_record_str(e[4]) ? TXT(rr_record_str(e[4]), fence) : "?", d);
    }
    if (nq > 0) {
        fprintf(f, "%-10s %zu waiting%s:", "queue", nq, nq >= 100 ? " (first 100)" : "");
        for (size_t i = 0; i < nq; i++) {
            redisReply **e = q->element[i]->element;
            char w[160];
            fprintf(f, " %s%s", TXT(rr_record_str(e[0]), w), e[2]->integer > 0 ? "" : " (dead)");
        }
        fputc('\n', f);
    }
}

static void on_qstatus(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct op *op = arg;

    (void)c;
    print_queue(op, status == RR_REPLY_OK ? r : NULL);
    close_all(op);
}

static void on_status(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct op *op = arg;

    if (status == RR_REPLY_OK && status_shape(r)) {
        const char *keys[RR_QSTATUS_NKEYS] = {
            [RR_QSTATUS_KEY_LOCK] = op->keys.lock, [RR_QSTATUS_KEY_STATE] = op->keys.state,
            [RR_QSTATUS_KEY_QUEUE] = op->keys.queue,
        };
        char top[16];
        const char *args[RR_QSTATUS_NARGS] = {
            [RR_QSTATUS_ARG_WAITER_PREFIX] = op->keys.q_prefix, [RR_QSTATUS_ARG_MAX_SLOT] = top,
        };
        snprintf(top, sizeof top, "%d", RR_LIMIT_MAX);
        op->exit_code = print_status(op, r);
        if (op->cfg->max_age_ms > 0) {
            close_all(op);
            return;
        }
        if (rr_script_call(c, RR_SCRIPT_QSTATUS, RR_QSTATUS_NKEYS, keys, RR_QSTATUS_NARGS, args,
                           on_qstatus, op) != 0) {
            print_queue(op, NULL);
            close_all(op);
        }
        return;
    }
    if (!op->err[0]) {
        /* A server's own answer gets the server's name in front, as conn
         * errors have it: diag.c names the server from it. */
        if (status == RR_REPLY_OK)
            snprintf(op->err, sizeof(op->err), "%s: %s", rr_svc_name(c),
                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        else
            snprintf(op->err, sizeof(op->err), "%s", rr_svc_error(c));
    }
    ask_status(op);
}

/* Say why nothing could be done; 78 when the server refused our
 * configuration (retrying cannot help; a TLS refusal is marked on the
 * connection), else 69. */
static int unavailable(struct op *op, const char *what)
{
    char why[RR_ERRLEN + 256];

    for (int i = 0; i < op->n; i++)
        if (op->conns[i] && rr_svc_refused(op->conns[i])) {
            snprintf(op->err, sizeof op->err, "%s", rr_svc_error(op->conns[i]));
            rr_log(RR_LOG_ERROR, "config", NULL, "%s: %s", what, op->err);
            return RR_EXIT_CONFIG;
        }
    if (rr_diag_config(op->err, rr_cli_gave_password(op->cfg), why, sizeof why)) {
        rr_log(RR_LOG_ERROR, "config", NULL, "%s: %s", what, why);
        snprintf(op->err, sizeof op->err, "%.*s", (int)sizeof op->err - 1, why);
        return RR_EXIT_CONFIG;
    }
    rr_log(RR_LOG_ERROR, "unavailable", NULL, "%s: %s", what, op->err);
    return RR_EXIT_UNAVAILABLE;
}

/* --status reads the first master that answers. */
static void ask_status(struct op *op)
{
    const char *keys[RR_STATUS_NKEYS] = {
        [RR_STATUS_KEY_LOCK] = op->keys.lock, [RR_STATUS_KEY_STATE] = op->keys.state,
        [RR_STATUS_KEY_HISTORY] = op->keys.history, [RR_STATUS_KEY_ONCE] = op->keys.once,
    };
    const char *args[RR_STATUS_NARGS] = {
        [RR_STATUS_ARG_ONCE_PATTERN] = op->keys.once_pattern, [RR_STATUS_ARG_HISTORY_COUNT] = "10",
        [RR_STATUS_ARG_STATE_PATTERN] = op->state_pattern,
    };

    while (op->next < op->n) {
        int i = op->next++;
        if (rr_script_call(op->conns[i], RR_SCRIPT_STATUS,
                           op->keys.once[0] ? RR_STATUS_NKEYS : RR_STATUS_KEY_ONCE, keys,
                           RR_STATUS_NARGS, args, on_status, op) == 0)
            return;
    }
    op->exit_code = unavailable(op, "cannot read the job's state");
    if (op->cfg->max_age_ms > 0) {
        char line[RR_ERRLEN + 64];
        op->exit_code = rr_verdict_unknown(op->err, line, sizeof line);
        fprintf(op->out, "%s\n", line);
        close_all(op);
        return;
    }
    if (op->cfg->json) {
        /* A monitoring check parses stdout: an answer, even when it is "no". */
        fputs("{\"name\":", op->out);
        rr_record_json_str(op->out, op->cfg->name);
        fputs(",\"error\":", op->out);
        rr_record_json_str(op->out, op->err);
        fprintf(op->out, ",\"exit_code\":%d}\n", op->exit_code);
    }
    close_all(op);
}

static void tally_error(struct op *op, struct rr_svc *c, int status, const redisReply *r)
{
    op->errors++;
    if (!op->err[0]) {
        /* A server's own answer gets the server's name in front, as conn
         * errors have it: diag.c names the server from it. */
        if (status == RR_REPLY_OK)
            snprintf(op->err, sizeof(op->err), "%s: %s", rr_svc_name(c),
                     r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        else
            snprintf(op->err, sizeof(op->err), "%s", rr_svc_error(c));
    }
}

static void on_resolve(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct op *op = arg;
    const char *tag = status == RR_REPLY_OK && r->type == REDIS_REPLY_ARRAY && r->elements >= 1
                          ? rr_record_str(r->element[0]) : NULL;

    if (tag && strcmp(tag, "OK") == 0 && r->elements == 2) {
        if (!op->done++)
            snprintf(op->what, sizeof(op->what), "%s", rr_record_str(r->element[1]));
    } else if (tag && strcmp(tag, "NONE") == 0) {
        op->none++;
    } else if (tag && strcmp(tag, "RUNNING") == 0) {
        op->running++;
    } else if (tag && strcmp(tag, "SUCCEEDED") == 0) {
        op->succeeded++;
    } else {
        tally_error(op, c, status, r);
    }
    if (--op->pending > 0)
        return;
    const char *target = op->cfg->once_id[0] ? "--once " : "the last run";
    if (op->running) {
        rr_log(RR_LOG_ERROR, "running", NULL,
               "%s of %s is running right now and holds the lock; resolve it after it ends",
               op->cfg->once_id[0] ? op->cfg->once_id : "the job", op->cfg->name);
        op->exit_code = RR_EXIT_BUSY;
    } else if (op->done && op->cfg->resolve == RR_RESOLVE_RETRY) {
        char was[sizeof op->what];
        fprintf(op->out, "--once %s of %s may have one more attempt (the last was %s)\n",
                op->cfg->once_id, op->cfg->name, TXT(op->what, was));
        op->exit_code = 0;
    } else if (op->done) {
        char was[sizeof op->what];
        /* Without --once only the last-run record is touched; an operator
         * who meant an abandoned --once record must not think it is gone. */
        fprintf(op->out, "%s %s%s of %s (was %s)%s\n",
                op->cfg->resolve == RR_RESOLVE_CLEAR ? "cleared" : "marked as succeeded:",
                target, op->cfg->once_id, op->cfg->name, TXT(op->what, was),
                op->cfg->once_id[0] ? ""
                : "; --once records are not touched: add --once with the ID that --status lists");
        op->exit_code = 0;
    } else if (op->succeeded) {
        fprintf(op->out, "--once %s of %s succeeded: nothing to retry (--resolve clear runs "
                "it again)\n", op->cfg->once_id, op->cfg->name);
        op->exit_code = 1;
    } else if (op->none) {
        fprintf(op->out, "no record of %s%s for %s; nothing to resolve\n", target,
                op->cfg->once_id, op->cfg->name);
        op->exit_code = 1;
    } else {
        op->exit_code = unavailable(op, "cannot resolve");
    }
    close_all(op);
}

/* Who resolves: "user@host" (the user behind sudo when root runs it
 * through sudo), recorded by --resolve. */
static void operator_name(char *buf, size_t len)
{
    char host[200] = "unknown";
    const char *user = getuid() == 0 ? getenv("SUDO_USER") : NULL;
    struct passwd *pw = user && *user ? NULL : getpwuid(getuid());
    char uid[24];

    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    if (!user || !*user) {
        snprintf(uid, sizeof uid, "uid %ld", (long)getuid());
        user = pw && pw->pw_name ? pw->pw_name : uid;
    }
    snprintf(buf, len, "%.40s@%s", user, host);
}

int rr_status_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out)
{
    struct op op;

    memset(&op, 0, sizeof(op));
    op.loop = loop;
    op.cfg = cfg;
    op.out = out;
    op.n = cfg->n_endpoints;
    if (rr_job_keys(&op.keys, cfg->prefix, cfg->name, cfg->once_id) != 0) {
        rr_log(RR_LOG_ERROR, "usage", NULL, "job name, prefix and --once ID are too long together");
        return RR_EXIT_USAGE;
    }
    if (state_pattern(cfg->prefix, op.state_pattern, sizeof op.state_pattern) != 0)
        op.state_pattern[0] = '\0';   /* no suggestions; the read is the same */
    operator_name(op.host, sizeof op.host);
    snprintf(op.pid, sizeof(op.pid), "%ld", (long)getpid());
    for (int i = 0; i < op.n; i++) {
        if (!(op.conns[i] = rr_svc_config_new(loop, cfg, i))) {
            close_all(&op);
            uv_run(loop, UV_RUN_DEFAULT);
            return RR_EXIT_SOFTWARE;
        }
    }
    if (cfg->mode == RR_MODE_STATUS) {
        ask_status(&op);
    } else {
        const char *keys[RR_RESOLVE_NKEYS] = {
            [RR_RESOLVE_KEY_LOCK] = op.keys.lock,
            [RR_RESOLVE_KEY_RECORD] = op.keys.once[0] ? op.keys.once : op.keys.state,
            [RR_RESOLVE_KEY_HISTORY] = op.keys.history,
        };
        const char *args[RR_RESOLVE_NARGS] = {
            [RR_RESOLVE_ARG_ACTION] = cfg->resolve == RR_RESOLVE_CLEAR   ? "clear"
                                      : cfg->resolve == RR_RESOLVE_RETRY ? "retry"
                                                                         : "succeeded",
            [RR_RESOLVE_ARG_HOST] = op.host, [RR_RESOLVE_ARG_PID] = op.pid,
            [RR_RESOLVE_ARG_ONCE] = cfg->once_id,
        };
        for (int i = 0; i < op.n; i++)
            if (rr_script_call(op.conns[i], RR_SCRIPT_RESOLVE, RR_RESOLVE_NKEYS, keys,
                               RR_RESOLVE_NARGS, args, on_resolve, &op) == 0)
                op.pending++;
    }
    uv_run(loop, UV_RUN_DEFAULT);
    return op.exit_code;
}
