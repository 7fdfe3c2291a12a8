/* scripts.h — the Lua scripts (src/lua/), run by SHA with EVALSHA and
 * sent in full with EVAL only when the server answers NOSCRIPT.
 *
 * Each script names its KEYS and ARGV once, in its --! header lines;
 * scripts/gen-lua.sh turns them into scripts_gen.h: enum rr_script
 * (RR_SCRIPT_ACQUIRE, ...) and, per script, the positions as C sees them
 * (RR_ACQUIRE_KEY_LOCK ... RR_ACQUIRE_NKEYS, RR_ACQUIRE_ARG_TOKEN ...
 * RR_ACQUIRE_NARGS), the same ones the script reads by name. */
#ifndef RR_SCRIPTS_H
#define RR_SCRIPTS_H

#include "scripts_gen.h"
#include "service.h"

/* The script's SHA1 (40 hex chars) and its source as sent (the --! lines
 * turned into Lua locals); the SHA1 is that source's. Static storage. */
const char *rr_script_sha(enum rr_script s);
const char *rr_script_src(enum rr_script s);

/* The "sharded" argument of the scripts that wake waiters: "1" (SPUBLISH)
 * where waiters are on sharded channels (a cluster, rr_svc_sharded), else
 * "0". Static storage. */
const char *rr_script_sharded(const struct rr_svc *c);

/* Run script s on service c with nkeys keys and nargs args (all copied).
 * cb gets the script's reply — after one transparent EVAL retry on
 * NOSCRIPT (a script cache is per node) — with the same status semantics
 * as rr_svc_command. The lock writes (acquire, renew, release) go as
 * rr_svc_write, so --sync-replicas applies to them. Returns 0, or negative
 * (out of memory, c closing, or counts that do not fit the script's --!
 * lines: a bug) and then cb is never called. */
int rr_script_call(struct rr_svc *c, enum rr_script s,
                   int nkeys, const char *const *keys,
                   int nargs, const char *const *args,
                   rr_svc_reply_fn cb, void *arg);

#endif
