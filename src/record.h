/* record.h — reading and showing a job's records (the state and --once
 * hashes, history entries) as --status and --list print them. Pure: the
 * replies come from the caller, the output goes to the caller's FILE. */
#ifndef RR_RECORD_H
#define RR_RECORD_H

#include <stdio.h>
#include <hiredis/hiredis.h>

/* r's text if it is a string or status reply, else "". */
const char *rr_record_str(const redisReply *r);

/* The value of field name in a flat HGETALL / stream entry array, NULL
 * when it is not there. */
const char *rr_record_field(const redisReply *flat, const char *name);

/* The wall clock in ms: records hold the servers' TIME, ages are taken
 * from ours. */
long long rr_record_wall_ms(void);

/* ms since the epoch as "YYYY-MM-DD HH:MM:SS" local time, "-" for <= 0. */
void rr_record_time(long long ms, char *buf, size_t len);

/* s as a JSON string, quotes included (NULL as ""). */
void rr_record_json_str(FILE *f, const char *s);

/* The fields of a state or --once record, in the order JSON shows them. */
extern const char *const rr_record_fields[];

/* A record as a JSON object: the fields names, numbers as numbers, missing
 * as null; status, if not NULL, replaces the stored status. */
void rr_record_json(FILE *f, const redisReply *flat, const char *const *names,
                    const char *status);

#endif
