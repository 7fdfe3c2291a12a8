/* list.c — --list (list.h): SCAN the state records of one deployment (each
 * master of a cluster), then read each job with the --status scripts, a
 * few at a time, all within one overall deadline.
 *
 *   SCANNING ─all cursors at 0─▶ ONCE ─all cursors at 0, every record read─▶
 *       READING ─every job read─▶ DONE
 *   (from any: the deadline, or a master fails: partial ─▶ DONE)
 *
 * ONCE is a second SCAN of each master, for the --once records of every
 * job at once (not a walk of the keyspace per job): each record's status
 * is read (HMGET), so that a job's status_code counts its unsettled IDs
 * as --status NAME does.
 *
 * Nothing is written. A listing that is not complete says so (a last line,
 * a last JSON object) and exits 69 (78 when a server refused our
 * configuration), and the rows it prints are true. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "duration.h"
#include "list.h"
#include "log.h"
#include "metrics_file.h"
#include "record.h"
#include "scripts.h"
#include "service.h"
#include "svc_config.h"

#define LIST_IN_FLIGHT 16              /* jobs read at once */

struct lst;

struct lmaster {
    struct lst *l;
    struct rr_svc *svc;
    char cursor[32];
    bool scanned;
};

struct lread {
    struct lst *l;
    size_t i;
};

struct lst {
    uv_loop_t *loop;
    const struct rr_config *cfg;
    FILE *out;
    int src;                           /* the endpoint listed */
    struct rr_svc *seed;               /* a cluster's own service, for CLUSTER SLOTS */
    struct rr_config *mcfg;            /* the cluster masters as direct endpoints */
    int n_mcfg;
    struct lmaster m[RR_LIST_MAX_MASTERS];
    int n_masters, scanning;
    char pattern[400], once_pattern[400];
    bool once_phase;
    size_t once_pending, once_seen;
    struct rr_list_row *rows;
    size_t n_rows, cap;
    struct lread *reads;
    size_t next_read;
    int in_flight;
    uv_timer_t timer;
    bool reading, expired, finished, any_answer;
    bool warmed;                       /* a first job was read: read many at once */
    bool partial;
    bool write_failed;                 /* --metrics-file could not be written */
    char why[RR_ERRLEN + 64];          /* the first failure */
    bool refused;                      /* ... a server refused our configuration */
    int exit_code;
};

static void finish(struct lst *l);

static void note_error(struct lst *l, struct rr_svc *c, int status, const redisReply *r)
{
    l->partial = true;
    if (l->why[0])
        return;
    if (status == RR_REPLY_OK)
        snprintf(l->why, sizeof l->why, "%s: %.200s", rr_svc_name(c),
                 r && r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    else
        snprintf(l->why, sizeof l->why, "%s", rr_svc_error(c));
    l->refused = rr_svc_refused(c);
}

static void close_services(struct lst *l)
{
    if (l->seed) {
        rr_svc_close(l->seed);
        l->seed = NULL;
    }
    for (int i = 0; i < l->n_masters; i++)
        if (l->m[i].svc) {
            struct rr_svc *s = l->m[i].svc;
            l->m[i].svc = NULL;
            rr_svc_close(s);
        }
}

static void read_next(struct lst *l);

static void read_done(struct lst *l)
{
    l->in_flight--;
    read_next(l);
}

static void on_state(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct lread *rd = arg;
    struct lst *l = rd->l;
    struct rr_list_row *row = &l->rows[rd->i];

    if (l->finished)
        return;
    if (status != RR_REPLY_OK || r->type == REDIS_REPLY_ERROR) {
        if (status != RR_REPLY_CLOSED) {
            note_error(l, c, status, r);
            snprintf(row->err, sizeof row->err, "%.250s", l->why);
        }
    } else if (rr_list_row_state(row, r) != 0) {
        l->partial = true;
    }
    read_done(l);
}

/* The holders first, so that the record is judged knowing them. */
static void on_holders(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct lread *rd = arg;
    struct lst *l = rd->l;
    struct rr_list_row *row = &l->rows[rd->i];
    struct rr_job_keys k;

    if (l->finished)
        return;
    l->warmed = true;
    if (status != RR_REPLY_OK || r->type == REDIS_REPLY_ERROR) {
        if (status != RR_REPLY_CLOSED) {
            note_error(l, c, status, r);
            snprintf(row->err, sizeof row->err, "%.250s", l->why);
        }
        read_done(l);
        return;
    }
    l->any_answer = true;
    if (rr_list_row_holders(row, r) != 0 || rr_job_keys(&k, l->cfg->prefix, row->name, NULL) != 0) {
        l->partial = true;
        read_done(l);
        return;
    }
    const char *argv[] = { "HGETALL", k.state, NULL };
    if (rr_svc_commandv(c, on_state, rd, argv) != 0)
        read_done(l);
}

/* Keep LIST_IN_FLIGHT jobs being read; finish after the last. */
static void read_next(struct lst *l)
{
    char top[16];

    snprintf(top, sizeof top, "%d", RR_LIMIT_MAX);
    /* One alone first: a server without the script answers NOSCRIPT once,
     * not once per job in flight (rr_script_call then sends it whole). */
    int most = l->warmed ? LIST_IN_FLIGHT : 1;

    while (!l->finished && l->in_flight < most && l->next_read < l->n_rows) {
        size_t i = l->next_read++;
        struct rr_list_row *row = &l->rows[i];
        struct rr_job_keys k;
        struct rr_svc *c = l->m[row->master].svc;
        if (!c || rr_job_keys(&k, l->cfg->prefix, row->name, NULL) != 0)
            continue;
        const char *keys[RR_QSTATUS_NKEYS] = {
            [RR_QSTATUS_KEY_LOCK] = k.lock, [RR_QSTATUS_KEY_STATE] = k.state,
            [RR_QSTATUS_KEY_QUEUE] = k.queue, [RR_QSTATUS_KEY_FENCE] = k.fence,
            [RR_QSTATUS_KEY_HISTORY] = k.history, [RR_QSTATUS_KEY_QSEQ] = k.qseq,
        };
        const char *args[RR_QSTATUS_NARGS] = {
            [RR_QSTATUS_ARG_WAITER_PREFIX] = k.q_prefix, [RR_QSTATUS_ARG_MAX_SLOT] = top,
            [RR_QSTATUS_ARG_QUEUE_MAX] = "0",
        };
        if (rr_script_call(c, RR_SCRIPT_QSTATUS, RR_QSTATUS_NKEYS, keys, RR_QSTATUS_NARGS, args,
                           on_holders, &l->reads[i]) == 0)
            l->in_flight++;
    }
    if (!l->finished && l->in_flight == 0 && l->next_read >= l->n_rows)
        finish(l);
}

static void start_reading(struct lst *l)
{
    l->reading = true;
    read_next(l);
}

/* The once records' SCAN is done on every master and each record read. */
static void once_check_done(struct lst *l)
{
    if (!l->finished && l->once_phase && l->scanning == 0 && l->once_pending == 0) {
        l->once_phase = false;
        start_reading(l);
    }
}

/* r: {status, once} of one --once record of the row rd names. */
static void on_once(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct lread *rd = arg;
    struct lst *l = rd->l;

    if (l->finished)
        return;
    l->once_pending--;
    if (status != RR_REPLY_OK || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        if (status != RR_REPLY_CLOSED)
            note_error(l, c, status, r);
    } else {
        rr_list_row_once(&l->rows[rd->i], rr_record_str(r->element[1]),
                         rr_record_str(r->element[0]));
    }
    once_check_done(l);
}

/* One page of the once records' SCAN: read each record's status. */
static void once_keys(struct lst *l, struct rr_svc *c, const redisReply *keys)
{
    for (size_t i = 0; i < keys->elements; i++) {
        const char *k = rr_record_str(keys->element[i]);
        char name[RR_NAME_MAX + 1];
        struct rr_list_row *row;
        if (rr_list_once_name_of(l->cfg->prefix, k, name, sizeof name) != 0 ||
            !(row = rr_list_find(l->rows, l->n_rows, name)))
            continue;   /* a job without a state record is not listed */
        if (++l->once_seen > RR_LIST_MAX_ONCE) {
            l->partial = true;
            if (!l->why[0])
                snprintf(l->why, sizeof l->why, "more than %d --once records: the jobs' "
                         "unsettled IDs were counted among the first found", RR_LIST_MAX_ONCE);
            return;
        }
        const char *argv[] = { "HMGET", k, "status", "once", NULL };
        if (rr_svc_commandv(c, on_once, &l->reads[row - l->rows], argv) == 0)
            l->once_pending++;
    }
}

static void scan_step(struct lmaster *m);

/* Sort the rows, then SCAN every master again for the --once records. */
static void start_once(struct lst *l)
{
    l->n_rows = rr_list_sort(l->rows, l->n_rows);
    if (l->n_rows && !(l->reads = calloc(l->n_rows, sizeof *l->reads))) {
        l->partial = true;
        snprintf(l->why, sizeof l->why, "out of memory");
        finish(l);
        return;
    }
    for (size_t i = 0; i < l->n_rows; i++)
        l->reads[i] = (struct lread){ l, i };
    if (l->n_rows == 0) {
        start_reading(l);
        return;
    }
    l->once_phase = true;
    l->scanning = 0;
    for (int i = 0; i < l->n_masters; i++) {
        snprintf(l->m[i].cursor, sizeof l->m[i].cursor, "0");
        l->m[i].scanned = !l->m[i].svc;
        l->scanning += !l->m[i].scanned;
    }
    for (int i = 0; i < l->n_masters && !l->finished; i++)
        if (!l->m[i].scanned)
            scan_step(&l->m[i]);
    once_check_done(l);
}

static int add_row(struct lst *l, int master, const char *name)
{
    if (l->n_rows == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct rr_list_row *n = realloc(l->rows, cap * sizeof *n);
        if (!n)
            return -1;
        l->rows = n;
        l->cap = cap;
    }
    struct rr_list_row *r = &l->rows[l->n_rows++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->master = master;
    return 0;
}

static void master_done(struct lst *l)
{
    if (--l->scanning == 0 && !l->finished) {
        if (l->once_phase)
            once_check_done(l);
        else
            start_once(l);
    }
}

/* r: {cursor, {key...}} */
static void on_scan(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct lmaster *m = arg;
    struct lst *l = m->l;
    bool ok = status == RR_REPLY_OK && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
              r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_ARRAY;

    if (l->finished)
        return;
    if (!ok) {
        if (status != RR_REPLY_CLOSED)
            note_error(l, c, status, r);
        m->scanned = true;
        master_done(l);
        return;
    }
    l->any_answer = true;
    if (l->once_phase)
        once_keys(l, c, r->element[1]);
    for (size_t i = 0; !l->once_phase && i < r->element[1]->elements; i++) {
        char name[RR_NAME_MAX + 1];
        if (rr_list_name_of(l->cfg->prefix, rr_record_str(r->element[1]->element[i]), name,
                            sizeof name) != 0)
            continue;
        if (l->n_rows >= RR_LIST_MAX_JOBS || add_row(l, (int)(m - l->m), name) != 0) {
            l->partial = true;
            if (!l->why[0])
                snprintf(l->why, sizeof l->why, "more than %d jobs: listed the first found",
                         RR_LIST_MAX_JOBS);
            m->scanned = true;
            master_done(l);
            return;
        }
    }
    snprintf(m->cursor, sizeof m->cursor, "%s", r->element[0]->str);
    if (strcmp(m->cursor, "0") == 0) {
        m->scanned = true;
        master_done(l);
        return;
    }
    scan_step(m);
}

static void scan_step(struct lmaster *m)
{
    const char *argv[] = { "SCAN", m->cursor, "MATCH",
                           m->l->once_phase ? m->l->once_pattern : m->l->pattern,
                           "COUNT", RR_LIST_COUNT, NULL };

    if (rr_svc_commandv(m->svc, on_scan, m, argv) != 0) {
        m->scanned = true;
        m->l->partial = true;
        master_done(m->l);
    }
}

static void start_scans(struct lst *l)
{
    l->scanning = l->n_masters;
    for (int i = 0; i < l->n_masters; i++) {
        l->m[i].l = l;
        snprintf(l->m[i].cursor, sizeof l->m[i].cursor, "0");
    }
    for (int i = 0; i < l->n_masters && !l->finished; i++)
        scan_step(&l->m[i]);
}

/* Master host:port of the cluster behind endpoint src, as a direct server
 * with that endpoint's TLS and credentials: entry j of l->mcfg[j / N]. */
static struct rr_svc *master_svc(struct lst *l, int j, const struct rr_node *node)
{
    struct rr_config *c = &l->mcfg[j / RR_MAX_ENDPOINTS];
    int e = j % RR_MAX_ENDPOINTS;
    struct rr_endpoint *ep = &c->endpoints[e];

    *ep = l->cfg->endpoints[l->src];
    ep->kind = RR_EP_DIRECT;
    ep->transport = RR_TRANSPORT_TCP;
    memcpy(ep->host, node->host, sizeof ep->host);
    ep->host[sizeof ep->host - 1] = '\0';
    ep->port = node->port;
    ep->n_nodes = 1;
    ep->nodes[0] = *node;
    snprintf(ep->display, sizeof ep->display, strchr(node->host, ':') ? "[%.250s]:%d" : "%.250s:%d",
             node->host, node->port);
    if (c->n_endpoints <= e)
        c->n_endpoints = e + 1;
    return rr_svc_config_new(l->loop, c, e);
}

static void on_slots(struct rr_svc *c, int status, redisReply *r, void *arg)
{
    struct lst *l = arg;
    struct rr_node nodes[RR_LIST_MAX_MASTERS];
    int n = status == RR_REPLY_OK && r->type != REDIS_REPLY_ERROR
                ? rr_list_masters(r, l->cfg->endpoints[l->src].host, nodes, RR_LIST_MAX_MASTERS)
                : -1;
    int groups = (n + RR_MAX_ENDPOINTS - 1) / RR_MAX_ENDPOINTS;

    if (l->finished)
        return;
    if (n > RR_LIST_MAX_MASTERS) {
        /* The first ones are listed; the listing says it is not all. */
        n = RR_LIST_MAX_MASTERS;
        groups = (n + RR_MAX_ENDPOINTS - 1) / RR_MAX_ENDPOINTS;
        l->partial = true;
        snprintf(l->why, sizeof l->why, "the cluster has more than %d masters: only %d were "
                 "scanned", RR_LIST_MAX_MASTERS, RR_LIST_MAX_MASTERS);
    }
    if (n <= 0) {
        if (status != RR_REPLY_CLOSED)
            note_error(l, c, status, r);
        if (!l->why[0])
            snprintf(l->why, sizeof l->why, "%s: CLUSTER SLOTS named no master", rr_svc_name(c));
        finish(l);
        return;
    }
    l->any_answer = true;
    if (!(l->mcfg = calloc((size_t)groups, sizeof *l->mcfg))) {
        snprintf(l->why, sizeof l->why, "out of memory");
        finish(l);
        return;
    }
    l->n_mcfg = groups;
    for (int g = 0; g < groups; g++) {
        l->mcfg[g] = *l->cfg;
        l->mcfg[g].n_endpoints = 0;
    }
    for (int j = 0; j < n; j++)
        if (!(l->m[j].svc = master_svc(l, j, &nodes[j]))) {
            snprintf(l->why, sizeof l->why, "out of memory");
            l->n_masters = j;
            finish(l);
            return;
        }
    l->n_masters = n;
    start_scans(l);
}

static void start_endpoint(struct lst *l)
{
    struct rr_svc *s = rr_svc_config_new(l->loop, l->cfg, l->src);

    if (!s) {
        snprintf(l->why, sizeof l->why, "out of memory");
        finish(l);
        return;
    }
    if (l->cfg->endpoints[l->src].kind != RR_EP_CLUSTER) {
        /* one server, or the master the sentinels name */
        l->m[0].svc = s;
        l->n_masters = 1;
        start_scans(l);
        return;
    }
    const char *argv[] = { "CLUSTER", "SLOTS", NULL };
    l->seed = s;
    if (rr_svc_commandv(s, on_slots, l, argv) != 0) {
        snprintf(l->why, sizeof l->why, "out of memory");
        finish(l);
    }
}

static void on_deadline(uv_timer_t *t)
{
    struct lst *l = t->data;
    char d[32];

    l->expired = true;
    l->partial = true;
    snprintf(l->why, sizeof l->why, "the listing did not end within %s (%d x --redis-timeout)",
             rr_duration_format(l->cfg->redis_timeout_ms * RR_LIST_BUDGET_FACTOR, d, sizeof d),
             RR_LIST_BUDGET_FACTOR);
    finish(l);
}

static void free_rows(struct lst *l)
{
    for (size_t i = 0; i < l->n_rows; i++)
        free(l->rows[i].last_json);
    free(l->rows);
    free(l->reads);
    /* the masters' configurations hold copies of the credentials */
    if (l->mcfg)
        explicit_bzero(l->mcfg, (size_t)l->n_mcfg * sizeof *l->mcfg);
    free(l->mcfg);
    l->n_mcfg = 0;
    l->rows = NULL;
    l->reads = NULL;
    l->mcfg = NULL;
    l->n_rows = l->cap = l->next_read = 0;
}

/* 78 when a server refused our configuration, else 69. */
static int classify(struct lst *l)
{
    char hint[RR_ERRLEN + 256];

    if (l->refused || rr_diag_config(l->why, rr_cli_gave_password(l->cfg), hint, sizeof hint)) {
        if (!l->refused)
            snprintf(l->why, sizeof l->why, "%.*s", (int)sizeof l->why - 1, hint);
        return RR_EXIT_CONFIG;
    }
    return RR_EXIT_UNAVAILABLE;
}

struct export_arg {
    const struct lst *l;
    long long now_ms;
};

static void put_export(FILE *f, const void *arg)
{
    const struct export_arg *a = arg;

    rr_list_export_format(f, a->l->rows, a->l->n_rows, a->now_ms, a->l->cfg->state_ttl_ms);
}

/* --list --metrics-file: the file, only from a complete listing (one that
 * left a job out would clear its alerts); otherwise the old file stays, and
 * its redlock_jobs_export_timestamp_seconds grows old. */
static void export(struct lst *l)
{
    char err[RR_ERRLEN + 64];
    struct export_arg a = { l, rr_record_wall_ms() };

    for (size_t i = 0; i < l->n_rows && !l->partial; i++)
        if (!l->rows[i].read) {
            l->partial = true;
            snprintf(l->why, sizeof l->why, "job %.100s not read: %.150s", l->rows[i].name,
                     l->rows[i].err);
        }
    if (l->partial) {
        rr_log(RR_LOG_ERROR, "metrics", NULL, "--metrics-file %s left as it was: the listing is "
               "partial", l->cfg->metrics_file);
        return;
    }
    if (rr_metrics_file_put(l->cfg->metrics_file, put_export, &a, err, sizeof err) != 0) {
        rr_log(RR_LOG_ERROR, "metrics", NULL, "%s", err);
        l->write_failed = true;
    }
}

static void finish(struct lst *l)
{
    if (l->finished)
        return;
    l->finished = true;
    close_services(l);
    /* No server of this endpoint answered at all: the next -r URL, as --status. */
    if (!l->any_answer && !l->expired && l->src + 1 < l->cfg->n_endpoints) {
        rr_log(RR_LOG_DEBUG, "list", NULL, "%s", l->why);
        free_rows(l);
        memset(l->m, 0, sizeof l->m);
        l->n_masters = l->scanning = l->in_flight = 0;
        l->once_phase = false;
        l->once_pending = l->once_seen = 0;
        l->reading = l->partial = l->refused = l->finished = false;
        l->why[0] = '\0';
        l->src++;
        start_endpoint(l);
        return;
    }
    uv_close((uv_handle_t *)&l->timer, NULL);
    if (!l->any_answer) {
        l->exit_code = classify(l);
        rr_log(RR_LOG_ERROR, l->exit_code == RR_EXIT_CONFIG ? "config" : "unavailable", NULL,
               "cannot list the jobs: %s", l->why);
        return;
    }
    if (!l->reading)
        l->n_rows = rr_list_sort(l->rows, l->n_rows);   /* stopped while scanning */
    for (size_t i = 0; i < l->n_rows; i++)
        if (!l->rows[i].read && !l->rows[i].err[0])
            snprintf(l->rows[i].err, sizeof l->rows[i].err, "the listing stopped first");
    if (l->cfg->metrics_file) {
        export(l);
    } else if (l->cfg->json) {
        rr_list_print_json(l->out, l->rows, l->n_rows);
    } else if (l->n_rows) {
        rr_list_print_text(l->out, l->rows, l->n_rows);
    } else {
        fprintf(l->out, "no job under the prefix %s on %s\n", l->cfg->prefix,
                l->cfg->endpoints[l->src].display);
    }
    l->exit_code = l->write_failed ? RR_EXIT_OSERR : RR_EXIT_OK;
    if (l->partial) {
        l->exit_code = classify(l);
        if (l->cfg->metrics_file) {
            /* said below */
        } else if (l->cfg->json) {
            fputs("{\"partial\":true,\"error\":", l->out);
            rr_record_json_str(l->out, l->why);
            fputs("}\n", l->out);
        } else {
            char why[sizeof l->why];   /* may quote a server's error reply */
            fprintf(l->out, "partial: %s; the jobs above are as read, others may be missing\n",
                    rr_record_text(l->why, why, sizeof why));
        }
        rr_log(RR_LOG_ERROR, l->exit_code == RR_EXIT_CONFIG ? "config" : "partial", NULL,
               "the listing is partial: %s", l->why);
    }
}

int rr_list_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out)
{
    struct lst *l = calloc(1, sizeof *l);
    int code;

    if (!l)
        return RR_EXIT_OSERR;
    l->loop = loop;
    l->cfg = cfg;
    l->out = out;
    if (rr_list_pattern(cfg->prefix, l->pattern, sizeof l->pattern) != 0 ||
        rr_list_once_pattern(cfg->prefix, l->once_pattern, sizeof l->once_pattern) != 0) {
        free(l);
        rr_log(RR_LOG_ERROR, "usage", NULL, "--prefix is too long for --list");
        return RR_EXIT_USAGE;
    }
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    uv_timer_start(&l->timer, on_deadline, (uint64_t)(cfg->redis_timeout_ms * RR_LIST_BUDGET_FACTOR), 0);
    start_endpoint(l);
    uv_run(loop, UV_RUN_DEFAULT);
    code = l->exit_code;
    free_rows(l);
    free(l);
    return code;
}
