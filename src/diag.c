/* diag.c — which server errors are a refusal of our configuration, and
 * what to check first in an outage. */
#include <stdio.h>
#include <string.h>

#include "diag.h"

#define OUTAGE_HINT "check that Redis is up and -r/--redis is right"

/* The "host:port" the message starts with, into out ("Redis" if none). */
static void server_of(const char *msg, char *out, size_t len)
{
    const char *sp = strstr(msg, ": ");

    if (sp && sp - msg < 200 && !memchr(msg, ' ', (size_t)(sp - msg)))
        snprintf(out, len, "Redis at %.*s", (int)(sp - msg), msg);
    else
        snprintf(out, len, "Redis");
}

/* What a server's refusal of our configuration was, told by its words. */
enum refusal { R_NONE, R_UNAUTH, R_NEEDS_PASS, R_WRONG_PASS, R_NO_PASS_SET, R_DB, R_PERM };

/* The servers' words, as Redis 6.0 to 8 and Valkey 8 to 9 put them (any
 * case; a message may hold more, such as "script: NAME, on @user_script:1").
 * The first entry that occurs decides. R_UNAUTH is "not authenticated":
 * R_NEEDS_PASS when we sent no password, else a refused one. */
static const struct {
    const char *words;
    enum refusal kind;
} refusals[] = {
    /* A client that has not authenticated: NOAUTH, or, for a request as
     * large as our scripts, a protocol error and the connection closed. */
    { "NOAUTH", R_UNAUTH },
    { "unauthenticated multibulk", R_UNAUTH },
    { "unauthenticated bulk", R_UNAUTH },
    { "WRONGPASS", R_WRONG_PASS },
    { "invalid password", R_WRONG_PASS },
    { "invalid username-password", R_WRONG_PASS },
    { "called without any password configured", R_NO_PASS_SET },
    { "DB index is out of range", R_DB },
    /* ACL, a command itself: "NOPERM this user has no permissions to run
     * the 'eval' command or its subcommand" (6.x), "NOPERM User u has no
     * permissions to run the 'get' command" (7.x, 8, Valkey), "NOPERM No
     * permissions to access a key" (7.x). */
    { "NOPERM", R_PERM },
    /* ACL, inside a script: "The user executing the script can't run this
     * command or subcommand" and "... can't access at least one of the keys
     * mentioned in the command" (6.2, 7.0); "ACL failure in script: User u
     * has no permissions to run the 'exists' command" and "ACL failure in
     * script: No permissions to access a key" (7.2, 8, Valkey 8, 9). */
    { "ACL failure in script", R_PERM },
    { "can't run this command", R_PERM },
    { "can't access at least one of the keys", R_PERM },
    { "no permissions to run the", R_PERM },
    { "no permissions to access", R_PERM },
};

static enum refusal refusal_of(const char *msg, bool gave_password)
{
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        if (strcasestr(msg, refusals[i].words)) {
            if (refusals[i].kind == R_UNAUTH && !gave_password)
                return R_NEEDS_PASS;
            return refusals[i].kind == R_UNAUTH ? R_WRONG_PASS : refusals[i].kind;
        }
    return R_NONE;
}

bool rr_diag_brief(const char *msg, bool gave_password, bool tls_refused, char *out, size_t len)
{
    static const char *const what[] = {
        [R_NEEDS_PASS] = "requires a password (NOAUTH)",
        [R_WRONG_PASS] = "refused our password (WRONGPASS)",
        [R_NO_PASS_SET] = "has no password set, but we sent one",
        [R_DB] = "has no such database",
    };
    enum refusal k;
    const char *sp;

    if (!msg || !*msg)
        msg = "failed";
    k = refusal_of(msg, gave_password);
    if (k == R_NONE) {
        char tmp[512];
        snprintf(out, len, "%s", msg);
        /* sentinel.c's own refusals (the sentinels' credentials). */
        return tls_refused || rr_diag_config(msg, gave_password, tmp, sizeof tmp);
    }
    sp = strstr(msg, ": ");
    int nl = sp && sp - msg < 200 && !memchr(msg, ' ', (size_t)(sp - msg)) ? (int)(sp - msg) : 0;
    if (k == R_PERM)
        snprintf(out, len, "%.*s%slacks an ACL permission (%.*s)", nl, msg, nl ? " " : "",
                 120, nl ? sp + 2 : msg);
    else
        snprintf(out, len, "%.*s%s%s", nl, nl ? msg : "Redis", " ", what[k]);
    return true;
}

bool rr_diag_config(const char *msg, bool gave_password, char *out, size_t len)
{
    char who[256];
    const char *p;

    if (!msg || !*msg)
        return false;
    /* sentinel.c says what to fix about the sentinels' own credentials. */
    if ((p = strstr(msg, "--sentinel-password-file")) != NULL ||
        (p = strstr(msg, "it does not know SENTINEL")) != NULL) {
        const char *start = strstr(msg, ": ");
        snprintf(out, len, "%s", start && start < p ? start + 2 : msg);
        return true;
    }
    /* acquire.lua: a --limit other than the one the holders of NAME were
     * admitted with. Its own words name both. */
    if ((p = strstr(msg, "LIMIT this run's --limit ")) != NULL) {
        snprintf(out, len, "%s", p + strlen("LIMIT "));
        return true;
    }
    server_of(msg, who, sizeof who);
    switch (refusal_of(msg, gave_password)) {
    case R_NEEDS_PASS:
        snprintf(out, len, "%s requires a password: set REDLOCK_PASSWORD or --password-file "
                 "(and REDLOCK_USER for an ACL user)", who);
        return true;
    case R_UNAUTH:
    case R_WRONG_PASS:
        snprintf(out, len, "%s refused the password, or the user is unknown or disabled: "
                 "check REDLOCK_USER and the password", who);
        return true;
    case R_NO_PASS_SET:
        snprintf(out, len, "%s has no password set, but we sent one: drop it from the URL, "
                 "$REDLOCK_PASSWORD or --password-file", who);
        return true;
    case R_DB:
        snprintf(out, len, "%s has no such database: fix ?db= (or /N) in the URL", who);
        return true;
    case R_PERM:
        /* Keep the server's own words: they name the command or the key. */
        p = strstr(msg, ": ");
        p = p ? p + 2 : msg;
        snprintf(out, len, "%s: the user lacks a permission the lock needs (%.*s); grant it "
                 "the ACL line of redlock-run(1), LEAST PRIVILEGE", who, 160, p);
        return true;
    case R_NONE:
        break;
    }
    return false;
}

/* Does msg hold a Cluster redirection, "MOVED 15495 10.0.0.5:7001" or
 * "ASK 15495 ...", as a server's reply (after ": " or "-", or first)? */
static bool redirected(const char *msg)
{
    static const char *const words[] = { "MOVED ", "ASK " };

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        for (const char *p = strstr(msg, words[i]); p; p = strstr(p + 1, words[i])) {
            char d = p[strlen(words[i])];
            if ((p == msg || p[-1] == ' ' || p[-1] == '-') && d >= '0' && d <= '9')
                return true;
        }
    return false;
}

/* The outages' hints: the first entry whose words msg holds. */
static const struct {
    const char *words;
    const char *hint;
} outages[] = {
    { "replicas confirmed", "check the replicas' links to the master, or lower --sync-replicas" },
    { "(is it a TLS port?)", "if it is, use rediss:// (and --tls-ca), else check that Redis is up "
                             "and -r/--redis is right" },
    { "TRYAGAIN", "the job's cluster slot is being resharded: try again when it has moved, or "
                  "give --wait" },
    { "CLUSTERDOWN", "the cluster serves no master for the job's slot: check CLUSTER INFO, or "
                     "give --wait" },
    /* Another program keeps a key of the job as something else than we do:
     * Redisson's RLock, pointed at the lock key, keeps a hash there. */
    { "WRONGTYPE", "a key of the job holds another type than redlock-run's: another program "
                   "uses it (Redisson's RLock keeps a hash); an application sharing the lock "
                   "must keep it a string (README: Sharing a lock with an application)" },
};

const char *rr_diag_unavailable_hint(const char *msg)
{
    if (!msg)
        return OUTAGE_HINT;
    for (size_t i = 0; i < sizeof outages / sizeof outages[0]; i++)
        if (strstr(msg, outages[i].words))
            return outages[i].hint;
    /* A plain redis:// URL aimed at a Cluster node: every request for the
     * job's slot is redirected, and only redis-cluster:// follows. */
    if (redirected(msg))
        return "that is a Redis Cluster node: give the cluster as redis-cluster://HOST:PORT "
               "(rediss-cluster:// with TLS), which follows MOVED and ASK; if you did, the job's "
               "slot was moving: try again, or give --wait";
    return OUTAGE_HINT;
}
