/* scripts.c — EVALSHA with EVAL fallback for the embedded Lua scripts. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scripts.h"

/* One script as scripts/gen-lua.sh saw it: keys min_keys..max_keys (the
 * last ones optional), nargs fixed arguments, and any number more if rest. */
struct lua_script {
    const char *sha;
    const char *src;
    int min_keys, max_keys;
    int nargs;
    int rest;
};

#define RR_SCRIPTS_SOURCES
#include "scripts_gen.h"

/* One call in flight: the argv is kept so a NOSCRIPT answer can be retried
 * with EVAL and the same keys and arguments. */
struct call {
    rr_svc_reply_fn cb;
    void *arg;
    enum rr_script script;
    bool retried;
    int argc;
    const char **argv;   /* argv[0] is EVALSHA/EVAL, argv[1] SHA or source */
    size_t *argvlen;
};

const char *rr_script_sha(enum rr_script s)
{
    return lua_scripts[s].sha;
}

const char *rr_script_src(enum rr_script s)
{
    return lua_scripts[s].src;
}

const char *rr_script_sharded(const struct rr_svc *c)
{
    return rr_svc_sharded(c) ? "1" : "0";
}

/* Is reply a NOSCRIPT error? */
static bool is_noscript(const redisReply *reply)
{
    return reply && reply->type == REDIS_REPLY_ERROR && reply->str &&
           strncasecmp(reply->str, "NOSCRIPT", 8) == 0;
}

static void free_call(struct call *k)
{
    /* Only the strdup'd entries (index 2 onwards) are ours. */
    for (int i = 2; k->argv && i < k->argc; i++)
        free((void *)k->argv[i]);
    free(k->argv);
    free(k->argvlen);
    free(k);
}

static void on_reply(struct rr_svc *c, int status, redisReply *reply, void *arg);

/* The lock writes carry WAIT under --sync-replicas. */
static int send_call(struct rr_svc *c, struct call *k)
{
    bool write = k->script == RR_SCRIPT_ACQUIRE || k->script == RR_SCRIPT_RENEW ||
                 k->script == RR_SCRIPT_RELEASE;

    return (write ? rr_svc_write : rr_svc_command)(c, on_reply, k, k->argc, k->argv, k->argvlen);
}

static void on_reply(struct rr_svc *c, int status, redisReply *reply, void *arg)
{
    struct call *k = arg;

    if (status == RR_REPLY_OK && !k->retried && is_noscript(reply)) {
        k->retried = true;
        k->argv[0] = "EVAL";
        k->argv[1] = lua_scripts[k->script].src;
        k->argvlen[0] = 4;
        k->argvlen[1] = strlen(k->argv[1]);
        if (send_call(c, k) == 0)
            return;
        /* The connection is closing: report the NOSCRIPT reply as is. */
    }
    k->cb(c, status, reply, k->arg);
    free_call(k);
}

int rr_script_call(struct rr_svc *c, enum rr_script s,
                   int nkeys, const char *const *keys,
                   int nargs, const char *const *args,
                   rr_svc_reply_fn cb, void *arg)
{
    const struct lua_script *ls = &lua_scripts[s];
    struct call *k;
    char nk[16];

    if (nkeys < ls->min_keys || nkeys > ls->max_keys || nargs < ls->nargs ||
        (!ls->rest && nargs > ls->nargs))
        return -1;
    if (!(k = calloc(1, sizeof(*k))))
        return -1;
    k->cb = cb;
    k->arg = arg;
    k->script = s;
    k->argc = 3 + nkeys + nargs;
    k->argv = calloc((size_t)k->argc, sizeof(*k->argv));
    k->argvlen = calloc((size_t)k->argc, sizeof(*k->argvlen));
    if (!k->argv || !k->argvlen)
        goto fail;
    snprintf(nk, sizeof(nk), "%d", nkeys);
    k->argv[0] = "EVALSHA";
    k->argv[1] = ls->sha;
    k->argv[2] = strdup(nk);
    for (int i = 0; i < nkeys; i++)
        k->argv[3 + i] = strdup(keys[i]);
    for (int i = 0; i < nargs; i++)
        k->argv[3 + nkeys + i] = strdup(args[i] ? args[i] : "");
    for (int i = 0; i < k->argc; i++) {
        if (!k->argv[i])
            goto fail;
        k->argvlen[i] = strlen(k->argv[i]);
    }
    if (send_call(c, k) != 0)
        goto fail;
    return 0;
fail:
    free_call(k);
    return -1;
}
