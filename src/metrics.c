/* metrics.c — the Prometheus textfile-collector file (see metrics.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

const char *const rr_metrics_statuses[RR_METRICS_NSTATUS] = {
    "succeeded", "failed", "timeout", "lost", "busy", "skipped", "refused", "error",
};
#define ERROR_INDEX 7
#define HELD_LAST 3     /* succeeded .. lost: the command ran */

/* The previous file is small; a larger one is not ours. */
#define MAX_FILE (64 * 1024)

int rr_metrics_status_index(const char *status)
{
    for (int i = 0; status && i < RR_METRICS_NSTATUS; i++)
        if (strcmp(status, rr_metrics_statuses[i]) == 0)
            return i;
    return ERROR_INDEX;
}

static void label_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;

    for (; *s && o + 3 < len; s++) {
        if (*s == '\\' || *s == '"') {
            out[o++] = '\\';
            out[o++] = *s;
        } else if (*s == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
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

void rr_metrics_parse(const char *buf, size_t len, const char *lock, struct rr_metrics *m)
{
    char line[1024], name[128], labels[768], val[64], lk[512], st[64];

    memset(m, 0, sizeof *m);
    m->last_status = -1;
    m->held_status = -1;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1;
        memcpy(line, buf + i, n);
        line[n] = '\0';
        i = j + 1;
        if (line[0] == '#' || line[0] == '\0')
            continue;
        labels[0] = '\0';
        if (sscanf(line, "%127[a-zA-Z0-9_:]{%767[^}]} %63s", name, labels, val) != 3 &&
            sscanf(line, "%127[a-zA-Z0-9_:] %63s", name, val) != 2)
            continue;
        if (!label_of(labels, "lock", lk, sizeof lk) || strcmp(lk, lock) != 0)
            continue;
        char *end;
        double v = strtod(val, &end);
        if (*end)
            continue;
        bool has_st = label_of(labels, "status", st, sizeof st);
        int si = has_st ? rr_metrics_status_index(st) : -1;
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
    }
}

void rr_metrics_update(struct rr_metrics *m, const struct rr_run_report *rep)
{
    int si = rr_metrics_status_index(rep->status);

    m->runs[si] += 1;
    m->last_status = si;
    m->last_exit_code = rep->exit_code;
    m->last_attempt_s = rep->end_s;
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

static void gauge(FILE *f, const char *name, const char *help, const char *lj, double v,
                  const char *fmt)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s{lock=\"%s\"} ", name, help, name, name, lj);
    fprintf(f, fmt, v);
    fputc('\n', f);
}

static void by_status(FILE *f, const char *name, const char *help, const char *type,
                      const char *lj, const double *v, int one)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (int i = 0; i < RR_METRICS_NSTATUS; i++)
        fprintf(f, "%s{lock=\"%s\",status=\"%s\"} %.0f\n", name, lj, rr_metrics_statuses[i],
                v ? v[i] : (double)(i == one));
}

void rr_metrics_format(FILE *f, const char *lock, const struct rr_metrics *m)
{
    char lj[512];

    label_escape(lock, lj, sizeof lj);
    by_status(f, "redlock_run_runs_total", "Runs on this host by outcome, across runs.",
              "counter", lj, m->runs, -1);
    by_status(f, "redlock_run_last_attempt_status", "Outcome of the last run on this host (1 for its status).",
              "gauge", lj, NULL, m->last_status);
    gauge(f, "redlock_run_last_attempt_exit_code", "Exit status of the last run on this host.",
          lj, m->last_exit_code, "%.0f");
    gauge(f, "redlock_run_last_attempt_timestamp_seconds", "When the last run on this host ended.",
          lj, m->last_attempt_s, "%.3f");
    gauge(f, "redlock_run_last_success_timestamp_seconds",
          "When a run on this host last succeeded (0: never).", lj, m->last_success_s, "%.3f");
    if (!m->held_any)
        return;
    by_status(f, "redlock_run_last_status",
              "Outcome of the last run on this host that held the lock (1 for its status).",
              "gauge", lj, NULL, m->held_status);
    gauge(f, "redlock_run_last_exit_code", "Exit status of the last run that held the lock.",
          lj, m->held_exit_code, "%.0f");
    gauge(f, "redlock_run_last_start_timestamp_seconds", "When the last run that held the lock started.",
          lj, m->held_start_s, "%.3f");
    gauge(f, "redlock_run_last_end_timestamp_seconds", "When the last run that held the lock ended.",
          lj, m->held_end_s, "%.3f");
    gauge(f, "redlock_run_last_duration_seconds", "Wall time of the last run that held the lock.",
          lj, m->held_end_s - m->held_start_s, "%.3f");
    gauge(f, "redlock_run_last_wait_seconds", "Time the last holder waited for the lock.",
          lj, m->held_wait_s, "%.3f");
    gauge(f, "redlock_run_last_fence", "Fencing token of the last run that held the lock.",
          lj, (double)m->held_fence, "%.0f");
}

static int fail(char *err, size_t errlen, const char *path)
{
    snprintf(err, errlen, "cannot write --metrics-file %s: %s", path, strerror(errno));
    return -1;
}

int rr_metrics_write(const char *path, const char *lock, const struct rr_run_report *rep,
                     char *err, size_t errlen)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    struct rr_metrics m;
    FILE *f;
    int fd, lfd;

    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) {
        snprintf(err, errlen, "--metrics-file path is too long");
        return -1;
    }
    /* Runs on this host take turns, so no counter is lost: a flock on the
     * directory, which leaves no file of ours for the collector to see. */
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    lfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0)
        return fail(err, errlen, path);
    while (flock(lfd, LOCK_EX) < 0 && errno == EINTR)
        ;

    char *buf = malloc(MAX_FILE);
    size_t len = 0;
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (buf && in >= 0) {
        ssize_t n;
        while (len < MAX_FILE && (n = read(in, buf + len, MAX_FILE - len)) > 0)
            len += (size_t)n;
    }
    if (in >= 0)
        close(in);
    rr_metrics_parse(buf ? buf : "", buf ? len : 0, lock, &m);
    free(buf);
    rr_metrics_update(&m, rep);

    int rc = -1;
    /* Write beside the target and rename: the collector never sees half a file. */
    if ((fd = mkstemp(tmp)) < 0) {
        fail(err, errlen, path);
        goto out;
    }
    fchmod(fd, 0644);
    if (!(f = fdopen(fd, "w"))) {
        fail(err, errlen, path);
        close(fd);
        unlink(tmp);
        goto out;
    }
    rr_metrics_format(f, lock, &m);
    if (fflush(f) != 0 || ferror(f)) {
        fail(err, errlen, path);
        fclose(f);
        unlink(tmp);
        goto out;
    }
    fclose(f);
    if (rename(tmp, path) != 0) {
        fail(err, errlen, path);
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    close(lfd);
    return rc;
}
