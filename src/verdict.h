/* verdict.h — the monitoring check of --status --max-age: what was read
 * about a job becomes a plugin exit status (0 OK, 1 WARNING, 2 CRITICAL,
 * 3 UNKNOWN) and one status line with perfdata, as Nagios, Icinga and
 * Sensu read them. */
#ifndef RR_VERDICT_H
#define RR_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

enum rr_verdict_code {
    RR_VERDICT_OK = 0,
    RR_VERDICT_WARNING = 1,
    RR_VERDICT_CRITICAL = 2,
    RR_VERDICT_UNKNOWN = 3,
};

/* What the check knows of a job (or of one --once ID). */
struct rr_verdict_in {
    const char *name;           /* the job, or "NAME --once ID" */
    const char *key;            /* the record's key, named when it is missing */
    enum rr_job_status last;    /* the last run's status; NONE: no record */
    bool held;                  /* the lock is held right now */
    long long now_ms, max_age_ms;
    long long success_ms;       /* the last success, 0 if none recorded */
    long long success_fence;    /* 0 if unknown */
    const char *success_host;   /* "" or NULL if unknown */
    /* The holder, when held and known: since when (0 unknown), where. */
    long long held_since_ms, held_fence;
    const char *held_host;
    long long warn_held_ms;     /* --warn-held: 0 no bound */
    /* The job's --once IDs that are not settled: n pairs {id, status}
     * (status as the record says it). The job name for the command that
     * settles them is job (NULL: name). */
    const char *const *unsettled;
    size_t n_unsettled;
    const char *job;
    /* The options that reach the same Redis (rr_cli_target_words), put in
     * the --status command the line names; NULL none. */
    const char *again;
    const char *near;           /* never ran: the closest existing name, or NULL */
};

/* The verdict for in: returns the exit status and writes the status line
 * (no newline) into line, truncated to len. Pure. */
int rr_verdict(const struct rr_verdict_in *in, char *line, size_t len);

/* The UNKNOWN line for a check that could not read anything: why says
 * what went wrong. Returns RR_VERDICT_UNKNOWN. Pure. */
int rr_verdict_unknown(const char *why, char *line, size_t len);

/* Whether in's holder has held the lock longer than --warn-held. Pure. */
bool rr_verdict_held_long(const struct rr_verdict_in *in);

/* The index in cands[0..n) of the name closest to want by edit distance
 * (Levenshtein), if it is close enough to be a typo of it (one edit, or a
 * third of want's length, and fewer edits than want has bytes); -1 if
 * none is. Pure. */
int rr_verdict_closest(const char *want, const char *const *cands, size_t n);

#endif
