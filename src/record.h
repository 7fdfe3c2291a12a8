/* record.h — reading and showing a job's records (the state and --once
 * hashes, history entries) as --status and --list print them. Pure: the
 * replies come from the caller, the output goes to the caller's FILE.
 * Whatever a record holds was written by whoever can write to the Redis:
 * every string is escaped for where it goes (escape.h), every number
 * checked before JSON shows it as one. */
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

/* When a job's keys end, ms from now (qstatus.lua's keys_pttl): "in 30d",
 * "in 2h5m", "in 40s" (rounded down to what a reader needs), or "never"
 * for a negative ms (a key with no expiry, as an older version wrote). */
void rr_record_keys_end(long long ms, char *buf, size_t len);

/* s as a JSON string, quotes included (NULL as ""). */
void rr_record_json_str(FILE *f, const char *s);

/* v as a JSON integer if it is one (rr_json_int), else null: a field read
 * from Redis never reaches JSON unchecked. */
void rr_record_json_int(FILE *f, const char *v);

/* s (NULL as "") escaped for a terminal into buf (rr_text_escape, cut to
 * len); returns buf, to be printed as it is. */
const char *rr_record_text(const char *s, char *buf, size_t len);

/* The fields of a state or --once record, in the order JSON shows them. */
extern const char *const rr_record_fields[];

/* A record as a JSON object: the fields names, numbers as numbers (a
 * numeric field that is not a JSON integer as null), missing as null; status, if not NULL, replaces the stored status. */
void rr_record_json(FILE *f, const redisReply *flat, const char *const *names,
                    const char *status);

/* --status's "resolved" line: the record's last --resolve (its kind,
 * who, when, the status it found), if it has one. */
void rr_record_text_resolved(FILE *f, const redisReply *flat);

/* --status's "command changed" line: the record's command fingerprint is
 * not the run before's (fingerprints only, never the command). */
void rr_record_text_command(FILE *f, const redisReply *flat);

#endif
