/* list.h — --list: every job under the key prefix of one Redis deployment,
 * one line (or JSON object) per job. The keys are found with SCAN MATCH on
 * the state records (never KEYS), on each master of a cluster; each job is
 * read as --status reads it: the holders of each slot its --limit has, and
 * when its keys expire (qstatus.lua), then the state record (HGETALL): a
 * few commands per job, whatever --limit may be. status.lua is not used: its search for
 * abandoned --once records walks the keyspace, once per job; --list makes
 * one more SCAN per master for every job's --once records instead, and
 * reads each one's status (HMGET), so that status_code counts them. The pure
 * parts (names from keys, masters from CLUSTER SLOTS, rows from replies,
 * the table) are below and tested in tests/check_list.c. */
#ifndef RR_LIST_H
#define RR_LIST_H

#include <stdbool.h>
#include <stdio.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include "config.h"
#include "job.h"

#define RR_LIST_COUNT "500"           /* SCAN COUNT */
#define RR_LIST_MAX_JOBS 20000        /* more: the listing is partial */
#define RR_LIST_MAX_ONCE 200000       /* --once records read; more: partial */
#define RR_LIST_MAX_MASTERS 64        /* cluster masters scanned */
#define RR_LIST_BUDGET_FACTOR 30      /* overall bound: 30 x --redis-timeout */

/* One job as --list shows it. */
struct rr_list_row {
    char name[RR_NAME_MAX + 1];
    int master;                       /* index of the master it was found on */
    bool read;                        /* its records were read */
    bool held;                        /* some slot of its lock is held */
    int slots_held;                   /* slots with a holder (1 for a plain lock) */
    bool holder_known;                /* the holder's record was read */
    int holder_slot;                  /* the --limit slot it holds (1 for a plain lock) */
    char holder_host[256];
    long long holder_pid, holder_fence, holder_since_ms, ttl_ms;
    /* When the last of the job's keys expires, in ms from the reading; -1:
     * one has no expiry (an older version wrote it). */
    long long keys_ttl_ms;
    struct rr_job_record last;        /* the state record; RUNNING with no lock: ABANDONED */
    int status_code;                  /* what --status NAME would exit with */
    /* The job's --once records that are not settled (rr_list_row_once):
     * failed, timeout, lost, abandoned or another status; and 'running'
     * ones, unsettled when no lock is held. The first such ID is kept. */
    int once_bad, once_abandoned, once_running;
    int n_unsettled;                  /* judged with the holders: what the NOTE says */
    char unsettled_id[RR_ONCE_MAX + 1], unsettled_status[16];
    char *last_json;                  /* the state record as --status --json shows it */
    char err[RR_ERRLEN];              /* why it could not be read, "" */
};

/* The SCAN MATCH pattern for the state records under prefix (a glob, the
 * prefix escaped). Returns 0, or -1 if it does not fit. Pure. */
int rr_list_pattern(const char *prefix, char *buf, size_t len);

/* The job NAME of a state key "PREFIX{NAME}:state" or "...:state:N" (a
 * --limit slot). Returns 0, or -1 for a key that is not one. Pure. */
int rr_list_name_of(const char *prefix, const char *key, char *name, size_t len);

/* The masters in a CLUSTER SLOTS reply, each once; a master with no host
 * of its own (an empty one) is on seed_host. Returns how many (out holds
 * at most max; max + 1 means there are more than max), or -1 when the
 * reply is not CLUSTER SLOTS'. Pure. */
int rr_list_masters(const redisReply *slots, const char *seed_host, struct rr_node *out,
                    int max);

/* Fill row from qstatus.lua's reply (--status's): the holders of every
 * slot of the lock, and when the job's keys expire. Returns 0, or -1 with row->err set when r has not its
 * shape. */
int rr_list_row_holders(struct rr_list_row *row, const redisReply *r);

/* The SCAN MATCH pattern for the --once records under prefix. Returns 0,
 * or -1 if it does not fit. Pure. */
int rr_list_once_pattern(const char *prefix, char *buf, size_t len);

/* The job NAME of a once key "PREFIX{NAME}:once:ID". Returns 0, or -1 for
 * a key that is not one. Pure. */
int rr_list_once_name_of(const char *prefix, const char *key, char *name, size_t len);

/* The row of rows[0..n) (sorted, rr_list_sort) named name, or NULL. Pure. */
struct rr_list_row *rr_list_find(struct rr_list_row *rows, size_t n, const char *name);

/* Count one --once record of row's job: its ID and status (HMGET status
 * once), before rr_list_row_state. Pure. */
void rr_list_row_once(struct rr_list_row *row, const char *id, const char *status);

/* Then from the state record (HGETALL, as --status reads it): the last
 * run, the last success; 'running' with no holder is abandoned. Returns 0,
 * or -1 with row->err set. */
int rr_list_row_state(struct rr_list_row *row, const redisReply *r);

/* Sort rows by name and drop repeated names (a --limit job has a state
 * record per slot). Returns the new count. Pure. */
size_t rr_list_sort(struct rr_list_row *rows, size_t n);

/* The table: a header, then one line per row in aligned columns. Pure. */
void rr_list_print_text(FILE *f, const struct rr_list_row *rows, size_t n);

/* One JSON object per row, one a line. Pure. */
void rr_list_print_json(FILE *f, const struct rr_list_row *rows, size_t n);

/* --list --metrics-file (list_export.c): is row in the file (read, and
 * held or started a run within keep_ms)? Pure. */
bool rr_list_export_keeps(const struct rr_list_row *row, long long now_ms, long long keep_ms);

/* The file's text: every kept row's job-level series, and when it was
 * written. Pure. */
void rr_list_export_format(FILE *f, const struct rr_list_row *rows, size_t n, long long now_ms,
                           long long keep_ms);

/* Run --list; prints to out (messages go through log). Returns the exit
 * status: 0 listed, 69 unavailable or partial, 78 refused. */
int rr_list_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out);

#endif
