/* status.c — --status and --resolve (--release: revoke.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "service.h"
#include "duration.h"
#include "escape.h"
#include "log.h"
#include "once_clock.h"
#include "scripts.h"
#include "svc_config.h"
#include "status.h"
#include "status_impl.h"
#include "diag.h"
#include "verdict.h"
#include "record.h"

struct op {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    FILE *out;
    struct rr_job_keys keys;
    /* --once ID: its pattern expanded on the lock service's clock, as a
     * run expands it (once_clock.h); "" without --once. */
    char once_id[RR_ONCE_MAX + 1];
    struct rr_svc *conns[RR_MAX_ENDPOINTS];
    int n, next, pending;
    int exit_code;
    char host[256], pid[24];
    char state_pattern[1024];
    /* The options that reach the same Redis, for the commands to paste
     * (rr_cli_target_words): " -r URL ..." or "". */
    char again[4096];
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
    const char *want = op->once_id[0] ? op->once_id : op->cfg->name;
    char names[200][RR_NAME_MAX + 1];
    const char *cands[200];
    size_t n = 0, pl = strlen(op->cfg->prefix);

    for (size_t i = 0; near->type == REDIS_REPLY_ARRAY && i < near->elements && n < 200; i++) {
        const char *k = rr_record_str(near->element[i]), *e = strstr(k, "}:state");
        if (op->once_id[0]) {
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

    if (op->once_id[0])
        snprintf(name, sizeof name, "%s --once %s", op->cfg->name, op->once_id);
    else
        snprintf(name, sizeof name, "%s", op->cfg->name);
    struct rr_verdict_in in = {
        .name = name, .key = op->once_id[0] ? op->keys.once : op->keys.state,
        .last = rec->status, .held = held, .now_ms = rr_record_wall_ms(),
        .max_age_ms = op->cfg->max_age_ms, .success_ms = rec->last_success_ms,
        .success_fence = rec->last_success_fence, .success_host = rec->last_success_host,
        .held_since_ms = know_holder ? st->started_ms : 0,
        .held_fence = know_holder ? st->fence : 0, .held_host = know_holder ? st->host : "",
        .warn_held_ms = op->cfg->warn_held_ms, .job = op->cfg->name, .again = op->again,
    };
    /* The unsettled --once IDs are the job's: a check of one ID is about it. */
    for (size_t i = 0; !op->once_id[0] && uns->type == REDIS_REPLY_ARRAY &&
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

/* The --once ID's part of the text: its record, its last success, the
 * attempts it used, and the command that allows one more. */
static void text_once(struct op *op, const struct rr_job_record *on, const redisReply *once,
                      bool held)
{
    const struct rr_config *cfg = op->cfg;
    FILE *f = op->out;
    char cmd[8192];

    fprintf(f, "once %s:\n", op->once_id);
    rr_status_text_record(f, "  ", once, held, op->keys.once);
    rr_status_text_success(f, "  last ok", on);
    /* The attempts the ID used (--attempts N allows N per ID). */
    if (on->status != RR_JOB_NONE)
        fprintf(f, "%-10s %d used%s\n", "  attempts", rr_job_attempts_used(on),
                on->retry ? ", one more allowed (--resolve retry)" : "");
    /* Refused (65) once --attempts are used: the command that allows one
     * more, to copy. */
    if (!on->retry && (on->status == RR_JOB_FAILED || on->status == RR_JOB_TIMEOUT ||
                       on->status == RR_JOB_LOST))
        fprintf(f, "%-10s %s\n", "  one more",
                rr_cli_resolve_command(cmd, sizeof cmd, op->again, "retry", op->once_id,
                                       cfg->name));
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
static void text_failed_ids(FILE *f, const char *name, const redisReply *uns, const char *again)
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
    if (n > 0) {
        fputc('\n', f);
        rr_status_text_settle(f, n == 1 ? first : NULL, name, again);
    }
}

/* "did you mean NEAR?" (a NAME, or with name an --once ID of that job), and
 * the command that asks about it, each word quoted for the shell. */
static void say_near(FILE *f, const char *near, const char *name, const char *again)
{
    char id[RR_ONCE_MAX * 4 + 1], w1[sizeof id * 4 + 3], nm[300], w2[sizeof nm * 4 + 3];

    TXT(near, id);
    rr_shell_word(id, w1, sizeof w1);
    if (name)
        fprintf(f, "%-10s did you mean %s? redlock-run%s --status --once %s %s\n", "note", id,
                again, w1, rr_shell_word(TXT(name, nm), w2, sizeof w2));
    else
        fprintf(f, "%-10s did you mean %s? redlock-run%s --status %s\n", "note", id, again, w1);
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
    bool have_once = op->once_id[0] && once->type == REDIS_REPLY_ARRAY;

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
    int code = op->once_id[0]
                   ? rr_status_exit_code(held && (!know_holder || !st.once[0] ||
                                                  strcmp(st.once, op->once_id) == 0),
                                         on.status, 0, 0)
                   : rr_status_exit_code(held, st.status, n_stale, n_failed_ids(r->element[8]));

    char near_b[RR_ONCE_MAX + RR_NAME_MAX + 2];
    const char *near = (op->once_id[0] ? on.status : st.status) == RR_JOB_NONE && !held
                           ? closest(op, r->element[7], near_b, sizeof near_b) : NULL;

    if (cfg->max_age_ms > 0)
        return check_line(op, op->once_id[0] ? &on : &st, held, &st, know_holder, r, near);

    if (cfg->json) {
        fputs("{\"name\":", f);
        rr_record_json_str(f, cfg->name);
        fprintf(f, ",\"exit_code\":%d,\"did_you_mean\":", code);
        if (near) rr_record_json_str(f, near); else fputs("null", f);
        fprintf(f, ",\"never_ran\":%s,\"lock\":{\"held\":%s",
                (op->once_id[0] ? on.status : st.status) == RR_JOB_NONE ? "true" : "false",
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
        if (op->once_id[0]) {
            fputs(",\"once\":", f);
            if (on.status == RR_JOB_NONE) {
                fputs("{\"id\":", f);
                rr_record_json_str(f, op->once_id);
                fputs(",\"status\":null}", f);
            } else {
                rr_record_json(f, once, rr_record_fields, on_shown);
            }
        }
        return code;   /* on_qstatus adds the holders and the queue, and closes */
    }

    char beat[64], host[300];
    rr_record_time(st.heartbeat_ms, beat, sizeof beat);
    fprintf(f, "%-10s %s\n", "job", cfg->name);
    rr_status_text_lock(f, held ? holder_tok : NULL, pttl, &st, contain);
    rr_status_text_record(f, "last run", state, held, op->keys.state);
    rr_status_text_success(f, "last ok", &st);
    /* What is known: it stopped renewing, and its lease ended. Not why. */
    if (st_shown)
        fprintf(f, "%-10s free, but the last run's holder (%s pid %lld) stopped renewing at %s "
                   "and its record still says running: it died, or could not record its "
                   "outcome (it then exited 74)\n", "warning", TXT(st.host, host), st.pid, beat);
    if (op->once_id[0])
        text_once(op, &on, have_once ? once : NULL, held);
    if (near)
        say_near(f, near, op->once_id[0] ? cfg->name : NULL, op->again);
    if (!scan_complete)
        fprintf(f, "%-10s searched part of a large keyspace for abandoned --once IDs; "
                   "there may be more than listed\n", "note");
    rr_status_text_abandoned(f, cfg->name, stale, op->again);
    if (!op->once_id[0])
        text_failed_ids(f, cfg->name, r->element[8], op->again);
    rr_status_text_history(f, hist);
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

/* r: {{{slot, pttl, host, pid, fence}...}, {{waiter, ticket, pttl}...}, keys_pttl}
 * (qstatus.lua): the --limit holders beyond slot 1, the queue, and when the
 * job's keys expire. */
static void print_queue(struct op *op, const redisReply *r)
{
    FILE *f = op->out;
    bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
              r->element[0]->type == REDIS_REPLY_ARRAY && r->element[1]->type == REDIS_REPLY_ARRAY &&
              r->element[2]->type == REDIS_REPLY_INTEGER;
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
        fputc(']', f);
        /* null: a key that never ends, or none */
        if (ok && r->element[2]->integer >= 0)
            fprintf(f, ",\"keys_ttl_ms\":%lld", r->element[2]->integer);
        else if (ok)
            fputs(",\"keys_ttl_ms\":null", f);
        fputs("}\n", f);
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
    if (ok && r->element[2]->integer >= 0) {
        rr_record_keys_end(r->element[2]->integer, d, sizeof d);
        fprintf(f, "%-10s end %s unless the job runs again (--state-ttl)\n", "keys", d);
    } else if (ok && r->element[2]->integer == -1) {
        fprintf(f, "%-10s one has no expiry (an older version wrote it): they never end\n", "keys");
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
            [RR_QSTATUS_KEY_QUEUE] = op->keys.queue, [RR_QSTATUS_KEY_FENCE] = op->keys.fence,
            [RR_QSTATUS_KEY_HISTORY] = op->keys.history, [RR_QSTATUS_KEY_QSEQ] = op->keys.qseq,
        };
        char top[16];
        const char *args[RR_QSTATUS_NARGS] = {
            [RR_QSTATUS_ARG_WAITER_PREFIX] = op->keys.q_prefix, [RR_QSTATUS_ARG_MAX_SLOT] = top,
            [RR_QSTATUS_ARG_QUEUE_MAX] = "100",
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
    const char *target = op->once_id[0] ? "--once " : "the last run";
    if (op->running) {
        rr_log(RR_LOG_ERROR, "running", NULL,
               "%s of %s is running right now and holds the lock; resolve it after it ends",
               op->once_id[0] ? op->once_id : "the job", op->cfg->name);
        op->exit_code = RR_EXIT_BUSY;
    } else if (op->done && op->cfg->resolve == RR_RESOLVE_RETRY) {
        char was[sizeof op->what];
        fprintf(op->out, "--once %s of %s may have one more attempt (the last was %s)\n",
                op->once_id, op->cfg->name, TXT(op->what, was));
        op->exit_code = 0;
    } else if (op->done) {
        char was[sizeof op->what];
        /* Without --once only the last-run record is touched; an operator
         * who meant an abandoned --once record must not think it is gone. */
        fprintf(op->out, "%s %s%s of %s (was %s)%s\n",
                op->cfg->resolve == RR_RESOLVE_CLEAR ? "cleared" : "marked as succeeded:",
                target, op->once_id, op->cfg->name, TXT(op->what, was),
                op->once_id[0] ? ""
                : "; --once records are not touched: add --once with the ID that --status lists");
        op->exit_code = 0;
    } else if (op->succeeded) {
        fprintf(op->out, "--once %s of %s succeeded: nothing to retry (--resolve clear runs "
                "it again)\n", op->once_id, op->cfg->name);
        op->exit_code = 1;
    } else if (op->none) {
        fprintf(op->out, "no record of %s%s for %s; nothing to resolve\n", target,
                op->once_id, op->cfg->name);
        op->exit_code = 1;
    } else {
        op->exit_code = unavailable(op, "cannot resolve");
    }
    close_all(op);
}

/* --resolve: the script to every master (on_resolve counts the answers). */
static void ask_resolve(struct op *op)
{
    const struct rr_config *cfg = op->cfg;
    char keep[24];
    const char *keys[RR_RESOLVE_NKEYS] = {
        [RR_RESOLVE_KEY_LOCK] = op->keys.lock,
        [RR_RESOLVE_KEY_RECORD] = op->keys.once[0] ? op->keys.once : op->keys.state,
        [RR_RESOLVE_KEY_HISTORY] = op->keys.history,
    };
    const char *args[RR_RESOLVE_NARGS] = {
        [RR_RESOLVE_ARG_ACTION] = cfg->resolve == RR_RESOLVE_CLEAR   ? "clear"
                                  : cfg->resolve == RR_RESOLVE_RETRY ? "retry"
                                                                     : "succeeded",
        [RR_RESOLVE_ARG_HOST] = op->host, [RR_RESOLVE_ARG_PID] = op->pid,
        [RR_RESOLVE_ARG_ONCE] = op->once_id, [RR_RESOLVE_ARG_STATE_TTL_MS] = keep,
    };

    snprintf(keep, sizeof keep, "%lld", (long long)cfg->state_ttl_ms);
    for (int i = 0; i < op->n; i++)
        if (rr_script_call(op->conns[i], RR_SCRIPT_RESOLVE, RR_RESOLVE_NKEYS, keys,
                           RR_RESOLVE_NARGS, args, on_resolve, op) == 0)
            op->pending++;
    if (op->pending == 0) {
        op->exit_code = unavailable(op, "cannot resolve");
        close_all(op);
    }
}

/* The keys of the --once ID (or of the job): 0, or -1 said (64). */
static int job_keys(struct op *op)
{
    if (rr_job_keys(&op->keys, op->cfg->prefix, op->cfg->name, op->once_id) == 0)
        return 0;
    rr_log(RR_LOG_ERROR, "usage", NULL, "job name, prefix and --once ID are too long together");
    op->exit_code = RR_EXIT_USAGE;
    return -1;
}

/* The --once ID on the lock service's clock, as a run has it: then the
 * mode asks for its records. Without a clock nothing can be read (69). */
static void on_once_clock(int n_ok, long long sec, int64_t local_ms, const char *err, void *arg)
{
    struct op *op = arg;
    char why[RR_ERRLEN - 32];

    if (n_ok == 0) {
        snprintf(op->err, sizeof op->err,
                 "cannot read the lock service's clock (TIME) for --once: %s", err);
        if (op->cfg->mode == RR_MODE_STATUS) {
            op->next = op->n;   /* ask_status: no master left, say why */
            ask_status(op);
        } else {
            op->exit_code = unavailable(op, "cannot resolve");
            close_all(op);
        }
        return;
    }
    if (rr_once_clock_id(op->cfg->once_raw, n_ok, sec, local_ms, op->once_id,
                         sizeof op->once_id, why, sizeof why) != 0) {
        rr_log(RR_LOG_ERROR, "usage", NULL, "--once: %s", why);
        op->exit_code = RR_EXIT_USAGE;
    }
    if (op->exit_code || job_keys(op) != 0)
        close_all(op);
    else if (op->cfg->mode == RR_MODE_STATUS)
        ask_status(op);
    else
        ask_resolve(op);
}

int rr_status_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out)
{
    struct op op;

    memset(&op, 0, sizeof(op));
    op.loop = loop;
    op.cfg = cfg;
    op.out = out;
    op.n = cfg->n_endpoints;
    snprintf(op.once_id, sizeof op.once_id, "%s", cfg->once_id);
    if (job_keys(&op) != 0)
        return op.exit_code;
    if (state_pattern(cfg->prefix, op.state_pattern, sizeof op.state_pattern) != 0)
        op.state_pattern[0] = '\0';   /* no suggestions; the read is the same */
    rr_operator_name(op.host, sizeof op.host);
    snprintf(op.pid, sizeof(op.pid), "%ld", (long)getpid());
    rr_cli_target_words(cfg, op.again, sizeof op.again);
    for (int i = 0; i < op.n; i++) {
        if (!(op.conns[i] = rr_svc_config_new(loop, cfg, i))) {
            close_all(&op);
            uv_run(loop, UV_RUN_DEFAULT);
            return RR_EXIT_SOFTWARE;
        }
    }
    /* An ID with time fields names the slot a run on this day would take:
     * the lock service's clock, not this host's (a run's rule). */
    if (cfg->once_raw && strchr(cfg->once_raw, '%')) {
        if (rr_once_clock_ask(op.conns, op.n, on_once_clock, &op) != 0)
            on_once_clock(0, 0, 0, "no master could be asked", &op);
    } else if (cfg->mode == RR_MODE_STATUS)
        ask_status(&op);
    else
        ask_resolve(&op);
    uv_run(loop, UV_RUN_DEFAULT);
    return op.exit_code;
}
