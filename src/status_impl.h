/* status_impl.h — what status.c takes from status_text.c: a job's records
 * as the lines of --status's text. Each writes to f; strings from Redis
 * are escaped for the terminal. */
#ifndef RR_STATUS_IMPL_H
#define RR_STATUS_IMPL_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stdio.h>

#include "job.h"

/* The "last ok" line of rec (label first), if it has a last success. */
void rr_status_text_success(FILE *f, const char *label, const struct rr_job_record *rec);

/* The lock's lines: free (tok NULL), or its holder as the record st says
 * (or "a program that is not redlock-run" when st is not the token's),
 * since when, the lease left (pttl), and what holds the command (contain,
 * from its record). */
void rr_status_text_lock(FILE *f, const char *tok, long long pttl,
                         const struct rr_job_record *st, const char *contain);

/* A record (flat HGETALL reply) under label; "never ran (no record under
 * key)" when there is none. A running record without the lock held reads
 * abandoned. */
void rr_status_text_record(FILE *f, const char *label, const redisReply *flat, bool held,
                           const char *key);

/* The history stream (XREVRANGE reply), one line an entry. */
void rr_status_text_history(FILE *f, const redisReply *hist);

/* The abandoned --once IDs of job name (stale), and the command that
 * resolves them. */
void rr_status_text_abandoned(FILE *f, const char *name, const redisReply *stale,
                              const char *again);
/* The --resolve commands that settle --once ID id of job name (id NULL:
 * several, "ID" each), to paste; again: the options that reach the same
 * Redis (rr_cli_target_words). */
void rr_status_text_settle(FILE *f, const char *id, const char *name, const char *again);

#endif
