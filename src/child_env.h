/* child_env.h — the environment the command is given: ours, without the
 * credentials, with the run's REDLOCK_* variables. Pure: nothing here reads
 * the process environment or prints. */
#ifndef RR_CHILD_ENV_H
#define RR_CHILD_ENV_H

#include <stdint.h>

/* What the command is told about its run. */
struct rr_child_env_run {
    const char *name;        /* REDLOCK_NAME: the lock's name */
    long long fence;         /* REDLOCK_FENCE: the fencing token */
    int64_t ttl_ms;          /* REDLOCK_TTL_MS */
    int slot;                /* REDLOCK_SLOT: the --limit slot, 1 when 0 or less */
    const char *once_id;     /* REDLOCK_ONCE, unless NULL or "" */
};

/* The command's environment for a run: env without the credentials
 * (REDLOCK_PASSWORD, REDLOCK_USER, REDISCLI_AUTH, REDLOCK_SENTINEL_PASSWORD,
 * REDLOCK_SENTINEL_USER, and REDLOCK_URL when env's first REDLOCK_URL has
 * an '@' in it, a password too) and without the names it sets, followed by
 * the run's REDLOCK_NAME, REDLOCK_FENCE, REDLOCK_TTL_MS, REDLOCK_SLOT and
 * REDLOCK_ONCE (an entry is cut at 299 characters: the checked name and
 * --once id are far shorter). One malloc'd array, as rr_child_env's; NULL
 * when out of memory. */
char **rr_child_env_for_run(char *const env[], const struct rr_child_env_run *run);

/* Build the child's environment: a copy of env without any variable named
 * in drop (NULL-terminated list of names) and without the names in add,
 * followed by the "NAME=value" strings of add (NULL-terminated). The result
 * is one malloc'd NULL-terminated array whose strings are copied; free it
 * with rr_child_env_free. Returns NULL when out of memory. Pure. */
char **rr_child_env(char *const env[], const char *const drop[], const char *const add[]);

/* Free what rr_child_env or rr_child_env_for_run returned; NULL is fine. */
void rr_child_env_free(char **env);

#endif
