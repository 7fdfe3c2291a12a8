/* list_export.c — --list --metrics-file: every job's state as Redis holds
 * it, in the Prometheus text format (list.h). Pure: the rows come from
 * --list, the text goes to the caller's FILE.
 *
 * These are figures of the job, not of a host: the state record every
 * host's run writes, so a failure one host recorded is gone from here
 * once any host's later run succeeds, and a busy or skipped run changes
 * nothing. The file is rewritten whole each time: a job whose records are
 * no longer in Redis (or that has not started a run for RR_LIST_EXPORT_KEEP)
 * has no series in it. */
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "list.h"
#include "status.h"

/* The state record's statuses, each a series of redlock_job_last_status. */
static const enum rr_job_status shown[] = {
    RR_JOB_RUNNING, RR_JOB_SUCCEEDED, RR_JOB_FAILED, RR_JOB_TIMEOUT,
    RR_JOB_LOST, RR_JOB_ABANDONED, RR_JOB_CLEARED, RR_JOB_UNKNOWN,
};

enum fam {
    F_CODE, F_LAST, F_SUCCESS, F_FINISHED, F_DURATION, F_HELD, F_HELD_FOR, F_UNSETTLED, NFAM
};

static const char *const fam_name[NFAM] = {
    "redlock_job_status_code", "redlock_job_last_status",
    "redlock_job_last_success_timestamp_seconds", "redlock_job_last_finished_timestamp_seconds",
    "redlock_job_last_duration_seconds", "redlock_job_slots_held", "redlock_job_held_seconds",
    "redlock_job_unsettled_once",
};

static const char *const fam_help[NFAM] = {
    "What redlock-run --status NAME exits with: 0 fine, 1 held, 2 the last run or an unsettled "
    "--once ID failed, timed out or lost its lock, 3 one died mid-way (abandoned).",
    "Status of the job's last run, whichever host ran it (1 for its status).",
    "When a run of the job last succeeded, on any host (0: never).",
    "When the job's last run ended (absent while a run holds the lock).",
    "Wall time of the job's last finished run (absent while a run holds the lock).",
    "Slots of the job's lock held right now (0: free).",
    "How long the current holder has held the lock (0: free; absent when its start is unknown).",
    "The job's --once IDs that are not settled (failed, timed out, lost, abandoned).",
};

/* Is the row's last run over (its record has an end)? */
static bool finished(const struct rr_list_row *r)
{
    return r->last.status != RR_JOB_RUNNING && r->last.finished_ms > 0 &&
           r->last.started_ms > 0 && r->last.finished_ms >= r->last.started_ms;
}

/* One row's samples of family k; lj: the escaped lock label. */
static void samples(FILE *f, enum fam k, const struct rr_list_row *r, const char *lj,
                    long long now_ms)
{
    const struct rr_job_record *st = &r->last;

    switch (k) {
    case F_CODE:
        fprintf(f, "%s{lock=\"%s\"} %d\n", fam_name[k], lj, r->status_code);
        break;
    case F_LAST:
        for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
            fprintf(f, "%s{lock=\"%s\",status=\"%s\"} %d\n", fam_name[k], lj,
                    rr_job_status_name(shown[i]), st->status == shown[i]);
        break;
    case F_SUCCESS:
        fprintf(f, "%s{lock=\"%s\"} %.3f\n", fam_name[k], lj,
                st->last_success_ms > 0 ? (double)st->last_success_ms / 1000.0 : 0.0);
        break;
    case F_FINISHED:
        if (finished(r))
            fprintf(f, "%s{lock=\"%s\"} %.3f\n", fam_name[k], lj, (double)st->finished_ms / 1000.0);
        break;
    case F_DURATION:
        if (finished(r))
            fprintf(f, "%s{lock=\"%s\"} %.3f\n", fam_name[k], lj,
                    (double)(st->finished_ms - st->started_ms) / 1000.0);
        break;
    case F_HELD:
        fprintf(f, "%s{lock=\"%s\"} %d\n", fam_name[k], lj, r->held ? r->slots_held : 0);
        break;
    case F_HELD_FOR:
        if (!r->held)
            fprintf(f, "%s{lock=\"%s\"} 0\n", fam_name[k], lj);
        else if (r->holder_since_ms > 0)
            fprintf(f, "%s{lock=\"%s\"} %.3f\n", fam_name[k], lj,
                    (double)(now_ms > r->holder_since_ms ? now_ms - r->holder_since_ms : 0) / 1000.0);
        break;
    case F_UNSETTLED:
        fprintf(f, "%s{lock=\"%s\"} %d\n", fam_name[k], lj, r->n_unsettled);
        break;
    default:
        break;
    }
}

bool rr_list_export_keeps(const struct rr_list_row *r, long long now_ms, long long keep_ms)
{
    const struct rr_job_record *st = &r->last;
    long long seen = st->started_ms > st->finished_ms ? st->started_ms : st->finished_ms;

    if (st->heartbeat_ms > seen)
        seen = st->heartbeat_ms;
    return r->read && (r->held || seen <= 0 || now_ms - seen <= keep_ms);
}

void rr_list_export_format(FILE *f, const struct rr_list_row *rows, size_t n, long long now_ms,
                           long long keep_ms)
{
    char lj[512];

    fprintf(f, "# HELP redlock_jobs_export_timestamp_seconds When redlock-run --list "
               "--metrics-file last wrote this file.\n"
               "# TYPE redlock_jobs_export_timestamp_seconds gauge\n"
               "redlock_jobs_export_timestamp_seconds %.3f\n", (double)now_ms / 1000.0);
    for (int k = 0; k < NFAM; k++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", fam_name[k], fam_help[k], fam_name[k]);
        for (size_t i = 0; i < n; i++) {
            if (!rr_list_export_keeps(&rows[i], now_ms, keep_ms))
                continue;
            rr_label_escape(rows[i].name, lj, sizeof lj);
            samples(f, (enum fam)k, &rows[i], lj, now_ms);
        }
    }
}
