/* list_view.c — the pure half of --list (list.h): names from keys, masters
 * from CLUSTER SLOTS, rows from the --status scripts' replies, the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "escape.h"
#include "list.h"
#include "record.h"
#include "status.h"

static int pattern(const char *prefix, const char *tail, char *buf, size_t len)
{
    size_t o = 0;

    for (; *prefix; prefix++) {
        if (strchr("*?[]\\", *prefix)) {
            if (o + 1 >= len)
                return -1;
            buf[o++] = '\\';
        }
        if (o + 1 >= len)
            return -1;
        buf[o++] = *prefix;
    }
    if (o + strlen(tail) + 1 > len)
        return -1;
    strcpy(buf + o, tail);
    return 0;
}

int rr_list_pattern(const char *prefix, char *buf, size_t len)
{
    return pattern(prefix, "\\{*\\}:state*", buf, len);
}

int rr_list_once_pattern(const char *prefix, char *buf, size_t len)
{
    return pattern(prefix, "\\{*\\}:once:*", buf, len);
}

int rr_list_once_name_of(const char *prefix, const char *key, char *name, size_t len)
{
    size_t pl = strlen(prefix);

    if (strncmp(key, prefix, pl) != 0 || key[pl] != '{')
        return -1;
    const char *b = key + pl + 1, *e = strstr(b, "}:once:");
    if (!e || e == b || (size_t)(e - b) > RR_NAME_MAX || (size_t)(e - b) + 1 > len)
        return -1;
    memcpy(name, b, (size_t)(e - b));
    name[e - b] = '\0';
    char why[RR_ERRLEN];
    return rr_cli_check_name(name, why, sizeof why) == 0 ? 0 : -1;
}

void rr_list_row_once(struct rr_list_row *row, const char *id, const char *status)
{
    bool running = strcmp(status, "running") == 0;

    if (!*status || strcmp(status, "succeeded") == 0 || strcmp(status, "cleared") == 0)
        return;
    if (running) {
        row->once_running++;
    } else {
        row->once_bad++;
        row->once_abandoned += strcmp(status, "abandoned") == 0;
    }
    /* Keep the first ID that is not settled whatever the lock: a failed
     * one before a running one, which is unsettled only with no holder. */
    if (row->unsettled_id[0] && (running || strcmp(row->unsettled_status, "running") != 0))
        return;
    snprintf(row->unsettled_id, sizeof row->unsettled_id, "%s", id);
    snprintf(row->unsettled_status, sizeof row->unsettled_status, "%s", status);
}

int rr_list_name_of(const char *prefix, const char *key, char *name, size_t len)
{
    size_t pl = strlen(prefix), kl = strlen(key);
    const char *end = key + kl;

    if (kl < pl + 2 || strncmp(key, prefix, pl) != 0 || key[pl] != '{')
        return -1;
    /* ...:state, or ...:state:N with N a slot 2..RR_LIMIT_MAX */
    const char *p = end;
    while (p > key && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p < end) {
        long slot;
        if (p == key || p[-1] != ':' || rr_parse_decimal(p, (size_t)(end - p), 2, RR_LIMIT_MAX, &slot))
            return -1;
        end = p - 1;
    }
    static const char suffix[] = "}:state";
    size_t sl = sizeof suffix - 1;
    if ((size_t)(end - key) < pl + 1 + sl + 1 || memcmp(end - sl, suffix, sl) != 0)
        return -1;
    size_t nl = (size_t)(end - sl - (key + pl + 1));
    if (nl == 0 || nl > RR_NAME_MAX || nl + 1 > len)
        return -1;
    memcpy(name, key + pl + 1, nl);
    name[nl] = '\0';
    /* Only a NAME the command line would take: a --once record's key
     * "{NAME}:once:x}:state" (an ID may hold '}') would otherwise read as
     * the job "NAME}:once:x", and a name another tenant made up with
     * control bytes would reach the terminal. And the keys of NAME are
     * exactly this one's: the name is the job's. */
    char why[RR_ERRLEN];
    struct rr_job_keys k;
    if (rr_cli_check_name(name, why, sizeof why) != 0 || rr_job_keys(&k, prefix, name, NULL) != 0 ||
        strncmp(k.state, key, strlen(k.state)) != 0)
        return -1;
    return 0;
}

int rr_list_masters(const redisReply *slots, const char *seed_host, struct rr_node *out, int max)
{
    int n = 0;

    if (!slots || slots->type != REDIS_REPLY_ARRAY)
        return -1;
    for (size_t i = 0; i < slots->elements; i++) {
        const redisReply *e = slots->element[i];
        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[2]->type != REDIS_REPLY_ARRAY || e->element[2]->elements < 2 ||
            e->element[2]->element[1]->type != REDIS_REPLY_INTEGER)
            return -1;
        const redisReply *m = e->element[2];
        const char *host = rr_record_str(m->element[0]);
        int port = (int)m->element[1]->integer;
        if (!*host || strcmp(host, "?") == 0)
            host = seed_host;
        if (strlen(host) >= sizeof out[0].host || port <= 0 || port > 65535)
            return -1;
        int j;
        for (j = 0; j < n; j++)
            if (out[j].port == port && strcmp(out[j].host, host) == 0)
                break;
        if (j < n)
            continue;
        if (n == max)
            return max + 1;     /* one more than fits: the caller says so */
        snprintf(out[n].host, sizeof out[n].host, "%s", host);
        out[n].port = port;
        n++;
    }
    return n;
}

/* r: {{{slot, pttl, host, pid, fence}...}, {{waiter, ticket, pttl}...}, keys_pttl} */
int rr_list_row_holders(struct rr_list_row *row, const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        r->element[0]->type != REDIS_REPLY_ARRAY || r->element[2]->type != REDIS_REPLY_INTEGER) {
        snprintf(row->err, sizeof row->err, "an answer that is not the holders script's");
        return -1;
    }
    const redisReply *hs = r->element[0];
    long long v;
    int n = 0;
    for (size_t i = 0; i < hs->elements; i++) {
        const redisReply *h = hs->element[i];
        if (h->type != REDIS_REPLY_ARRAY || h->elements != 5 ||
            h->element[0]->type != REDIS_REPLY_INTEGER) {
            snprintf(row->err, sizeof row->err, "an answer that is not the holders script's");
            return -1;
        }
        n++;
        if (row->holder_known || !*rr_record_str(h->element[2]))
            continue;
        /* The first slot whose holder is known (slot 1 comes first). */
        snprintf(row->holder_host, sizeof row->holder_host, "%s", rr_record_str(h->element[2]));
        row->holder_slot = (int)h->element[0]->integer;
        /* Written by whoever can write to the Redis: -1 (shown as null
         * or "?") when it is not a number. */
        row->holder_pid = rr_json_int(rr_record_str(h->element[3]), &v) && v >= 0 ? v : -1;
        row->holder_fence = rr_json_int(rr_record_str(h->element[4]), &v) && v >= 0 ? v : -1;
        row->ttl_ms = h->element[1]->type == REDIS_REPLY_INTEGER ? h->element[1]->integer : -1;
        row->holder_known = true;
    }
    row->slots_held = n;
    row->held = n > 0;
    row->keys_ttl_ms = r->element[2]->integer < 0 ? -1 : r->element[2]->integer;
    return 0;
}

/* r: the state record (HGETALL), read after the holders. */
int rr_list_row_state(struct rr_list_row *row, const redisReply *r)
{
    struct rr_job_record *st = &row->last;

    if (!r || r->type != REDIS_REPLY_ARRAY) {
        snprintf(row->err, sizeof row->err, "an answer that is not a record");
        return -1;
    }
    rr_job_record_parse(st, r);
    row->read = true;
    /* Slot 1's holder is the run this record describes: its start. */
    if (row->holder_known && row->holder_slot == 1 && st->fence == row->holder_fence)
        row->holder_since_ms = st->started_ms;
    /* 'running' with nobody holding the lock: its holder died (as --status). */
    const char *shown = NULL;
    if (st->status == RR_JOB_RUNNING && !row->held)
        shown = rr_job_status_name(st->status = RR_JOB_ABANDONED);
    /* As status.lua judges them: a 'running' --once record with no lock
     * held is abandoned. */
    int stale = row->once_abandoned + (row->held ? 0 : row->once_running);
    row->n_unsettled = row->once_bad + (row->held ? 0 : row->once_running);
    if (row->n_unsettled && strcmp(row->unsettled_status, "running") == 0)
        snprintf(row->unsettled_status, sizeof row->unsettled_status, "abandoned");
    row->status_code = rr_status_exit_code(row->held, st->status, stale,
                                           row->once_bad - row->once_abandoned);
    free(row->last_json);
    row->last_json = NULL;
    if (st->status != RR_JOB_NONE) {
        size_t len;
        FILE *f = open_memstream(&row->last_json, &len);
        if (f) {
            rr_record_json(f, r, rr_record_fields, shown);
            fclose(f);
        }
    }
    return 0;
}

struct rr_list_row *rr_list_find(struct rr_list_row *rows, size_t n, const char *name)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(rows[mid].name, name);
        if (c == 0)
            return &rows[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    const struct rr_list_row *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    return c ? c : x->master - y->master;
}

size_t rr_list_sort(struct rr_list_row *rows, size_t n)
{
    size_t o = 0;

    if (n == 0)
        return 0;
    qsort(rows, n, sizeof rows[0], by_name);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(rows[i].name, rows[o].name) == 0) {
            free(rows[i].last_json);
            continue;
        }
        if (++o != i)
            rows[o] = rows[i];
    }
    return o + 1;
}

enum { C_NAME, C_LOCK, C_HOLDER, C_FENCE, C_SINCE, C_LAST, C_WHEN, C_EXIT, C_OK, C_OKHOST,
       C_KEYS, C_NOTE, NCOL };
static const char *const heads[NCOL] = { "NAME", "LOCK", "HOLDER", "FENCE", "SINCE", "LAST RUN",
                                         "ENDED", "EXIT", "LAST SUCCESS", "ON", "KEYS END",
                                         "NOTE" };
#define CELL 320

/* One line of the table, without trailing blanks. */
static void print_line(FILE *f, char c[NCOL][CELL], const int *w)
{
    char line[NCOL * (CELL + 2)];
    size_t o = 0;

    for (int i = 0; i < NCOL; i++) {
        int n = snprintf(line + o, sizeof line - o, "%-*s  ", w[i], c[i]);
        if (n < 0 || (size_t)n >= sizeof line - o)
            break;
        o += (size_t)n;
    }
    while (o > 0 && line[o - 1] == ' ')
        o--;
    fprintf(f, "%.*s\n", (int)o, line);
}

/* Every string that came from Redis goes through rr_record_text: another
 * tenant's record must not drive the terminal. */
static void cells(const struct rr_list_row *r, char c[NCOL][CELL])
{
    const struct rr_job_record *st = &r->last;
    char e[251];   /* a host's share of its cell: escaped, then never cut */

    for (int i = 0; i < NCOL; i++)
        snprintf(c[i], CELL, "-");
    rr_record_text(r->name, c[C_NAME], CELL);
    if (!r->read) {
        snprintf(c[C_LOCK], CELL, "?");
        snprintf(c[C_LAST], CELL, "?");
        snprintf(c[C_NOTE], CELL, "not read: %s", r->err[0] ? rr_record_text(r->err, e, sizeof e) : "?");
        return;
    }
    if (r->slots_held > 1)
        snprintf(c[C_LOCK], CELL, "held %d", r->slots_held);
    else
        snprintf(c[C_LOCK], CELL, r->held ? "held" : "free");
    if (r->held && r->holder_known) {
        char pid[24] = "?";
        if (r->holder_pid >= 0)
            snprintf(pid, sizeof pid, "%lld", r->holder_pid);
        snprintf(c[C_HOLDER], CELL, "%s pid %s",
                 r->holder_host[0] ? rr_record_text(r->holder_host, e, sizeof e) : "?", pid);
        if (r->holder_fence >= 0)
            snprintf(c[C_FENCE], CELL, "%lld", r->holder_fence);
        rr_record_time(r->holder_since_ms, c[C_SINCE], CELL);
    } else if (r->held) {
        snprintf(c[C_HOLDER], CELL, "unknown");
    }
    if (st->status == RR_JOB_NONE) {
        snprintf(c[C_LAST], CELL, "never ran");
    } else {
        snprintf(c[C_LAST], CELL, "%s", rr_job_status_name(st->status));
        if (st->status != RR_JOB_RUNNING)
            rr_record_time(st->finished_ms > 0 ? st->finished_ms : st->started_ms, c[C_WHEN], CELL);
        if (st->signal > 0)
            snprintf(c[C_EXIT], CELL, "signal %d", st->signal);
        else if (st->exit_code >= 0)
            snprintf(c[C_EXIT], CELL, "%d", st->exit_code);
    }
    if (st->last_success_ms > 0) {
        rr_record_time(st->last_success_ms, c[C_OK], CELL);
        snprintf(c[C_OKHOST], CELL, "%s",
                 st->last_success_host[0] ? rr_record_text(st->last_success_host, e, sizeof e) : "?");
    } else {
        snprintf(c[C_OK], CELL, "never");
    }
    rr_record_keys_end(r->keys_ttl_ms, c[C_KEYS], CELL);
    if (r->err[0])
        rr_record_text(r->err, c[C_NOTE], CELL);
    else if (st->once[0])
        snprintf(c[C_NOTE], CELL, "--once %s", rr_record_text(st->once, e, sizeof e));
    else
        c[C_NOTE][0] = '\0';
    if (!r->err[0] && r->n_unsettled) {
        /* Not settled: what --status NAME lists, and --max-age warns of. */
        char id[200], more[48] = "";
        size_t at = strlen(c[C_NOTE]);
        if (r->n_unsettled > 1)
            snprintf(more, sizeof more, " (+%d more)", r->n_unsettled - 1);
        snprintf(c[C_NOTE] + at, CELL - at, "%snot settled: --once %s %s%s", at ? "; " : "",
                 rr_record_text(r->unsettled_id, id, sizeof id), r->unsettled_status, more);
    }
}

void rr_list_print_text(FILE *f, const struct rr_list_row *rows, size_t n)
{
    char c[NCOL][CELL];
    int w[NCOL];

    for (int i = 0; i < NCOL; i++)
        w[i] = (int)strlen(heads[i]);
    for (size_t r = 0; r < n; r++) {
        cells(&rows[r], c);
        for (int i = 0; i < NCOL; i++)
            if ((int)strlen(c[i]) > w[i])
                w[i] = (int)strlen(c[i]);
    }
    for (int i = 0; i < NCOL; i++)
        snprintf(c[i], CELL, "%s", heads[i]);
    print_line(f, c, w);
    for (size_t r = 0; r < n; r++) {
        cells(&rows[r], c);
        print_line(f, c, w);
    }
}

void rr_list_print_json(FILE *f, const struct rr_list_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct rr_list_row *r = &rows[i];
        fputs("{\"name\":", f);
        rr_record_json_str(f, r->name);
        if (!r->read) {
            fputs(",\"error\":", f);
            rr_record_json_str(f, r->err);
            fputs("}\n", f);
            continue;
        }
        fprintf(f, ",\"status_code\":%d,\"never_ran\":%s,\"lock\":{\"held\":%s,\"slots_held\":%d",
                r->status_code, r->last.status == RR_JOB_NONE ? "true" : "false",
                r->held ? "true" : "false", r->slots_held);
        if (r->held && r->holder_known) {
            fputs(",\"host\":", f);
            rr_record_json_str(f, r->holder_host);
            char pid[24] = "null", fence[24] = "null";
            if (r->holder_pid >= 0)
                snprintf(pid, sizeof pid, "%lld", r->holder_pid);
            if (r->holder_fence >= 0)
                snprintf(fence, sizeof fence, "%lld", r->holder_fence);
            fprintf(f, ",\"pid\":%s,\"fence\":%s,\"ttl_ms\":%lld", pid, fence, r->ttl_ms);
            if (r->holder_since_ms > 0)
                fprintf(f, ",\"since_ms\":%lld", r->holder_since_ms);
            else
                fputs(",\"since_ms\":null", f);
        } else if (r->held) {
            fputs(",\"host\":null,\"pid\":null,\"fence\":null,\"since_ms\":null", f);
        }
        fprintf(f, "},\"unsettled_once\":%d,\"unsettled_once_first\":", r->n_unsettled);
        if (r->n_unsettled) {
            fputs("{\"id\":", f);
            rr_record_json_str(f, r->unsettled_id);
            fputs(",\"status\":", f);
            rr_record_json_str(f, r->unsettled_status);
            fputc('}', f);
        } else {
            fputs("null", f);
        }
        fprintf(f, ",\"last_run\":%s,\"last_success\":", r->last_json ? r->last_json : "null");
        if (r->last.last_success_ms > 0) {
            fprintf(f, "{\"ms\":%lld,\"fence\":%lld,\"host\":", r->last.last_success_ms,
                    r->last.last_success_fence);
            rr_record_json_str(f, r->last.last_success_host);
            fputc('}', f);
        } else {
            fputs("null", f);
        }
        if (r->keys_ttl_ms >= 0)
            fprintf(f, ",\"keys_ttl_ms\":%lld", r->keys_ttl_ms);
        else
            fputs(",\"keys_ttl_ms\":null", f);
        if (r->err[0]) {
            fputs(",\"error\":", f);
            rr_record_json_str(f, r->err);
        }
        fputs("}\n", f);
    }
}
