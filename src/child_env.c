/* child_env.c — the command's environment (child_env.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child_env.h"

char **rr_child_env_for_run(char *const env[], const struct rr_child_env_run *run)
{
    char name[300], fence[64], ttl[64], once[300], slot[40];
    const char *drop[] = { "REDLOCK_PASSWORD", "REDLOCK_USER", "REDISCLI_AUTH",
                           "REDLOCK_SENTINEL_PASSWORD", "REDLOCK_SENTINEL_USER",
                           NULL, NULL };
    const char *add[6];
    int na = 0;
    const char *url = NULL;

    /* The value getenv("REDLOCK_URL") would give, had env been environ. */
    if (env)
        for (char *const *e = env; *e && !url; e++)
            if (strncmp(*e, "REDLOCK_URL=", 12) == 0)
                url = *e + 12;
    /* A URL with credentials in it is a password too. */
    if (url && strchr(url, '@'))
        drop[5] = "REDLOCK_URL";
    snprintf(name, sizeof(name), "REDLOCK_NAME=%s", run->name);
    snprintf(fence, sizeof(fence), "REDLOCK_FENCE=%lld", run->fence);
    snprintf(ttl, sizeof(ttl), "REDLOCK_TTL_MS=%lld", (long long)run->ttl_ms);
    add[na++] = name;
    add[na++] = fence;
    add[na++] = ttl;
    snprintf(slot, sizeof(slot), "REDLOCK_SLOT=%d", run->slot > 0 ? run->slot : 1);
    add[na++] = slot;
    if (run->once_id && run->once_id[0]) {
        snprintf(once, sizeof(once), "REDLOCK_ONCE=%s", run->once_id);
        add[na++] = once;
    }
    add[na] = NULL;
    return rr_child_env(env, drop, add);
}

/* Length of the name part of "NAME=value" (the whole string if no '='). */
static size_t name_len(const char *s)
{
    const char *eq = strchr(s, '=');
    return eq ? (size_t)(eq - s) : strlen(s);
}

static bool has_name(const char *entry, size_t len, const char *const list[], bool list_is_env)
{
    if (!list)
        return false;
    for (const char *const *p = list; *p; p++) {
        size_t plen = list_is_env ? name_len(*p) : strlen(*p);
        if (plen == len && memcmp(*p, entry, len) == 0)
            return true;
    }
    return false;
}

char **rr_child_env(char *const env[], const char *const drop[], const char *const add[])
{
    size_t n = 0, nadd = 0;
    if (env)
        for (char *const *p = env; *p; p++)
            n++;
    if (add)
        for (const char *const *p = add; *p; p++)
            nadd++;

    char **out = calloc(n + nadd + 1, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = name_len(env[i]);
        if (has_name(env[i], len, drop, false) || has_name(env[i], len, add, true))
            continue;
        if (!(out[k++] = strdup(env[i])))
            goto fail;
    }
    for (size_t i = 0; i < nadd; i++) {
        if (!(out[k++] = strdup(add[i])))
            goto fail;
    }
    return out;

fail:
    rr_child_env_free(out);
    return NULL;
}

void rr_child_env_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}
