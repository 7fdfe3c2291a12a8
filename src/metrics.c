/* metrics.c — the Prometheus textfile-collector file (see metrics.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "metrics.h"

const char *const rr_metrics_statuses[RR_METRICS_NSTATUS] = {
    "succeeded", "failed", "timeout", "lost", "busy", "skipped", "refused", "error",
};
#define ERROR_INDEX 7
#define HELD_LAST 3     /* succeeded .. lost: the command ran */

int rr_metrics_status_index(const char *status)
{
    for (int i = 0; status && i < RR_METRICS_NSTATUS; i++)
        if (strcmp(status, rr_metrics_statuses[i]) == 0)
            return i;
    return ERROR_INDEX;
}

/* The value of label key in a "{a="x",b="y"}" text, unescaped; false if
 * there is none. */
static bool label_of(const char *labels, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);
    const char *p = labels;

    while ((p = strstr(p, key)) != NULL) {
        if ((p == labels || p[-1] == '{' || p[-1] == ',') && strncmp(p + klen, "=\"", 2) == 0) {
            p += klen + 2;
            size_t o = 0;
            for (; *p && *p != '"' && o + 1 < len; p++) {
                if (*p == '\\' && p[1]) {
                    p++;
                    out[o++] = *p == 'n' ? '\n' : *p;
                } else {
                    out[o++] = *p;
                }
            }
            out[o] = '\0';
            return *p == '"';
        }
        p += klen;
    }
    return false;
}

/* One sample line: its metric name, lock and status labels and value.
 * false for comments, blank lines and anything we do not understand. */
static bool parse_line(const char *line, char *name, char *lk, size_t lklen, int *si, double *v)
{
    char labels[768] = "", val[64], st[64];

    if (line[0] == '#' || line[0] == '\0')
        return false;
    if (sscanf(line, "%127[a-zA-Z0-9_:]{%767[^}]} %63s", name, labels, val) != 3 &&
        sscanf(line, "%127[a-zA-Z0-9_:] %63s", name, val) != 2)
        return false;
    if (!label_of(labels, "lock", lk, lklen))
        return false;
    char *end;
    *v = strtod(val, &end);
    if (*end)
        return false;
    *si = label_of(labels, "status", st, sizeof st) ? rr_metrics_status_index(st) : -1;
    return true;
}

static void metrics_init(struct rr_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->last_status = -1;
    m->held_status = -1;
}

/* Fold one sample of this lock into m. */
static void apply(struct rr_metrics *m, const char *name, int si, double v)
{
    if (strcmp(name, "redlock_run_runs_total") == 0 && si >= 0 && v >= 0)
        m->runs[si] = v;
    else if (strcmp(name, "redlock_run_last_status") == 0 && si >= 0 && v == 1)
        m->held_status = si, m->held_any = true;
    else if (strcmp(name, "redlock_run_last_exit_code") == 0)
        m->held_exit_code = (int)v;
    else if (strcmp(name, "redlock_run_last_fence") == 0)
        m->held_fence = (long long)v;
    else if (strcmp(name, "redlock_run_last_start_timestamp_seconds") == 0)
        m->held_start_s = v;
    else if (strcmp(name, "redlock_run_last_end_timestamp_seconds") == 0)
        m->held_end_s = v;
    else if (strcmp(name, "redlock_run_last_wait_seconds") == 0)
        m->held_wait_s = v;
    else if (strcmp(name, "redlock_run_last_success_timestamp_seconds") == 0)
        m->last_success_s = v;
    else if (strcmp(name, "redlock_run_last_attempt_status") == 0 && si >= 0 && v == 1)
        m->last_status = si;
    else if (strcmp(name, "redlock_run_last_attempt_exit_code") == 0)
        m->last_exit_code = (int)v;
    else if (strcmp(name, "redlock_run_last_attempt_timestamp_seconds") == 0)
        m->last_attempt_s = v;
    else if (strcmp(name, "redlock_run_masters_reachable") == 0 && v >= 0)
        m->masters_reachable = (int)v;
    else if (strcmp(name, "redlock_run_masters") == 0 && v >= 0)
        m->masters_total = (int)v;
}

/* Call fn for every sample line of buf. Returns fn's first nonzero result. */
static int each_sample(const char *buf, size_t len,
                       int (*fn)(void *arg, const char *name, const char *lk, int si, double v),
                       void *arg)
{
    char line[1024], name[128], lk[512];

    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1;
        memcpy(line, buf + i, n);
        line[n] = '\0';
        i = j + 1;
        int si;
        double v;
        if (!parse_line(line, name, lk, sizeof lk, &si, &v))
            continue;
        int rc = fn(arg, name, lk, si, v);
        if (rc)
            return rc;
    }
    return 0;
}

struct one_lock {
    const char *lock;
    struct rr_metrics *m;
};

static int apply_if_ours(void *arg, const char *name, const char *lk, int si, double v)
{
    struct one_lock *o = arg;

    if (strcmp(lk, o->lock) == 0)
        apply(o->m, name, si, v);
    return 0;
}

void rr_metrics_parse(const char *buf, size_t len, const char *lock, struct rr_metrics *m)
{
    struct one_lock o = { lock, m };

    metrics_init(m);
    each_sample(buf, len, apply_if_ours, &o);
}

struct rr_metrics *rr_metrics_set_get(struct rr_metrics_set *set, const char *lock)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->e[i].lock, lock) == 0)
            return &set->e[i].m;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 4;
        struct rr_metrics_entry *e = realloc(set->e, cap * sizeof *e);
        if (!e)
            return NULL;
        set->e = e;
        set->cap = cap;
    }
    struct rr_metrics_entry *e = &set->e[set->n];
    if (!(e->lock = strdup(lock)))
        return NULL;
    metrics_init(&e->m);
    set->n++;
    return &e->m;
}

static int apply_to_set(void *arg, const char *name, const char *lk, int si, double v)
{
    struct rr_metrics *m = rr_metrics_set_get(arg, lk);

    if (!m)
        return -1;
    apply(m, name, si, v);
    return 0;
}

int rr_metrics_set_parse(const char *buf, size_t len, struct rr_metrics_set *set)
{
    memset(set, 0, sizeof *set);
    if (each_sample(buf, len, apply_to_set, set) == 0)
        return 0;
    rr_metrics_set_free(set);
    return -1;
}

void rr_metrics_set_prune(struct rr_metrics_set *set, const char *keep, double now_s)
{
    size_t o = 0;

    for (size_t i = 0; i < set->n; i++) {
        const struct rr_metrics *m = &set->e[i].m;
        if (strcmp(set->e[i].lock, keep) != 0 && m->last_attempt_s > 0 &&
            now_s - m->last_attempt_s > RR_METRICS_KEEP_S) {
            free(set->e[i].lock);
            continue;
        }
        set->e[o++] = set->e[i];
    }
    set->n = o;
}

void rr_metrics_set_free(struct rr_metrics_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->e[i].lock);
    free(set->e);
    memset(set, 0, sizeof *set);
}

void rr_metrics_update(struct rr_metrics *m, const struct rr_run_report *rep)
{
    int si = rr_metrics_status_index(rep->status);

    m->runs[si] += 1;
    m->last_status = si;
    m->last_exit_code = rep->exit_code;
    m->last_attempt_s = rep->end_s;
    if (rep->masters_total > 0) {
        m->masters_reachable = rep->masters_reachable;
        m->masters_total = rep->masters_total;
    }
    if (si > HELD_LAST)
        return;   /* busy, skipped, refused, error: the holder's figures stand */
    m->held_any = true;
    m->held_status = si;
    m->held_exit_code = rep->exit_code;
    m->held_fence = rep->fence;
    m->held_start_s = rep->start_s;
    m->held_end_s = rep->end_s;
    m->held_wait_s = (double)rep->wait_ms / 1000.0;
    if (si == 0)
        m->last_success_s = rep->end_s;
}

/* The file's metric families, in the order written. held: only for a
 * lock whose run held it at least once. */
enum fig {
    F_RUNS, F_LAST_STATUS, F_LAST_EXIT, F_LAST_ATTEMPT, F_LAST_SUCCESS,
    F_MASTERS, F_MASTERS_REACHABLE, F_HELD_STATUS, F_HELD_EXIT, F_HELD_START, F_HELD_END, F_HELD_DURATION, F_HELD_WAIT,
    F_HELD_FENCE,
};

static const struct family {
    enum fig fig;
    const char *name, *type, *help;
} families[] = {
    { F_RUNS, "redlock_run_runs_total", "counter", "Runs on this host by outcome, across runs." },
    { F_LAST_STATUS, "redlock_run_last_attempt_status", "gauge",
      "Outcome of the last run on this host (1 for its status)." },
    { F_LAST_EXIT, "redlock_run_last_attempt_exit_code", "gauge",
      "Exit status of the last run on this host." },
    { F_LAST_ATTEMPT, "redlock_run_last_attempt_timestamp_seconds", "gauge",
      "When the last run on this host ended." },
    { F_LAST_SUCCESS, "redlock_run_last_success_timestamp_seconds", "gauge",
      "When a run on this host last succeeded (0: never)." },
    { F_MASTERS, "redlock_run_masters", "gauge",
      "Masters (-r) the last run on this host asked for the lock." },
    { F_MASTERS_REACHABLE, "redlock_run_masters_reachable", "gauge",
      "Masters that answered the last run's acquire (fewer than redlock_run_masters: a "
      "degraded quorum, or none)." },
    { F_HELD_STATUS, "redlock_run_last_status", "gauge",
      "Outcome of the last run on this host that held the lock (1 for its status)." },
    { F_HELD_EXIT, "redlock_run_last_exit_code", "gauge",
      "Exit status of the last run that held the lock." },
    { F_HELD_START, "redlock_run_last_start_timestamp_seconds", "gauge",
      "When the last run that held the lock started." },
    { F_HELD_END, "redlock_run_last_end_timestamp_seconds", "gauge",
      "When the last run that held the lock ended." },
    { F_HELD_DURATION, "redlock_run_last_duration_seconds", "gauge",
      "Wall time of the last run that held the lock." },
    { F_HELD_WAIT, "redlock_run_last_wait_seconds", "gauge",
      "Time the last holder waited for the lock." },
    { F_HELD_FENCE, "redlock_run_last_fence", "gauge",
      "Fencing token of the last run that held the lock." },
};

/* One lock's samples of family fam. lj: the escaped lock label. */
static void samples(FILE *f, const struct family *fam, const char *lj, const struct rr_metrics *m)
{
    int one = fam->fig == F_LAST_STATUS ? m->last_status : m->held_status;
    double v = 0;
    bool whole = true;

    if (fam->fig == F_RUNS || fam->fig == F_LAST_STATUS || fam->fig == F_HELD_STATUS) {
        for (int i = 0; i < RR_METRICS_NSTATUS; i++)
            fprintf(f, "%s{lock=\"%s\",status=\"%s\"} %.0f\n", fam->name, lj,
                    rr_metrics_statuses[i], fam->fig == F_RUNS ? m->runs[i] : (double)(i == one));
        return;
    }
    switch (fam->fig) {
    case F_LAST_EXIT: v = m->last_exit_code; break;
    case F_HELD_EXIT: v = m->held_exit_code; break;
    case F_HELD_FENCE: v = (double)m->held_fence; break;
    case F_MASTERS: v = m->masters_total; break;
    case F_MASTERS_REACHABLE: v = m->masters_reachable; break;
    default:
        whole = false;
        v = fam->fig == F_LAST_ATTEMPT    ? m->last_attempt_s
            : fam->fig == F_LAST_SUCCESS  ? m->last_success_s
            : fam->fig == F_HELD_START    ? m->held_start_s
            : fam->fig == F_HELD_END      ? m->held_end_s
            : fam->fig == F_HELD_DURATION ? m->held_end_s - m->held_start_s
                                          : m->held_wait_s;
        break;
    }
    fprintf(f, whole ? "%s{lock=\"%s\"} %.0f\n" : "%s{lock=\"%s\"} %.3f\n", fam->name, lj, v);
}

/* Every family once, each with the samples of every lock: the text format
 * wants a family's samples together, under one HELP and TYPE. */
static void format_entries(FILE *f, const struct rr_metrics_entry *e, size_t n)
{
    bool any_held = false;
    char lj[512];

    for (size_t i = 0; i < n; i++)
        any_held |= e[i].m.held_any;
    for (size_t k = 0; k < sizeof families / sizeof families[0]; k++) {
        const struct family *fam = &families[k];
        bool held = fam->fig >= F_HELD_STATUS;
        if (held && !any_held)
            continue;
        bool masters = fam->fig == F_MASTERS || fam->fig == F_MASTERS_REACHABLE;
        bool any = !masters;
        for (size_t i = 0; i < n && !any; i++)
            any = e[i].m.masters_total > 0;
        if (!any)
            continue;
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam->name, fam->help, fam->name, fam->type);
        for (size_t i = 0; i < n; i++) {
            if ((held && !e[i].m.held_any) || (masters && e[i].m.masters_total <= 0))
                continue;
            rr_label_escape(e[i].lock, lj, sizeof lj);
            samples(f, fam, lj, &e[i].m);
        }
    }
}

void rr_metrics_format(FILE *f, const char *lock, const struct rr_metrics *m)
{
    struct rr_metrics_entry e = { .lock = (char *)lock, .m = *m };

    format_entries(f, &e, 1);
}

void rr_metrics_set_format(FILE *f, const struct rr_metrics_set *set)
{
    format_entries(f, set->e, set->n);
}

bool rr_metrics_name_collected(const char *path)
{
    size_t n = strlen(path);

    return n >= 5 && strcmp(path + n - 5, ".prom") == 0;
}
