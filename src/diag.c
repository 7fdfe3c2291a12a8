/* diag.c — which server errors are a refusal of our configuration, and
 * what to check first in an outage. */
#include <stdio.h>
#include <string.h>

#include "diag.h"

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
enum refusal { R_NONE, R_NEEDS_PASS, R_WRONG_PASS, R_NO_PASS_SET, R_DB, R_PERM };

static enum refusal refusal_of(const char *msg, bool gave_password)
{
    /* Redis answers a client that has not authenticated with NOAUTH, or,
     * for a request as large as our scripts, closes with a protocol error. */
    bool unauth = strstr(msg, "NOAUTH") || strstr(msg, "unauthenticated multibulk") ||
                  strstr(msg, "unauthenticated bulk");
    if (unauth && !gave_password)
        return R_NEEDS_PASS;
    if (unauth || strstr(msg, "WRONGPASS") || strstr(msg, "invalid password") ||
        strstr(msg, "invalid username-password"))
        return R_WRONG_PASS;
    if (strstr(msg, "called without any password configured"))
        return R_NO_PASS_SET;
    if (strstr(msg, "DB index is out of range"))
        return R_DB;
    if (strstr(msg, "NOPERM") || strstr(msg, "can't run this command") ||
        strstr(msg, "No permissions to access"))
        return R_PERM;
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
    server_of(msg, who, sizeof who);
    /* Redis answers a client that has not authenticated with NOAUTH, or,
     * for a request as large as our scripts, closes with a protocol error. */
    bool unauth = strstr(msg, "NOAUTH") || strstr(msg, "unauthenticated multibulk") ||
                  strstr(msg, "unauthenticated bulk");
    if (unauth && !gave_password) {
        snprintf(out, len, "%s requires a password: set REDLOCK_PASSWORD or --password-file "
                 "(and REDLOCK_USER for an ACL user)", who);
        return true;
    }
    if (unauth || strstr(msg, "WRONGPASS") || strstr(msg, "invalid password") ||
        strstr(msg, "invalid username-password")) {
        snprintf(out, len, "%s refused the password, or the user is unknown or disabled: "
                 "check REDLOCK_USER and the password", who);
        return true;
    }
    if (strstr(msg, "called without any password configured")) {
        snprintf(out, len, "%s has no password set, but we sent one: drop it from the URL, "
                 "$REDLOCK_PASSWORD or --password-file", who);
        return true;
    }
    if (strstr(msg, "DB index is out of range")) {
        snprintf(out, len, "%s has no such database: fix ?db= (or /N) in the URL", who);
        return true;
    }
    if (strstr(msg, "NOPERM") || strstr(msg, "can't run this command") ||
        strstr(msg, "No permissions to access")) {
        /* Keep the server's own words: they name the command or the key. */
        p = strstr(msg, ": ");
        p = p ? p + 2 : msg;
        snprintf(out, len, "%s: the user lacks a permission the lock needs (%.*s); grant it "
                 "the ACL line of redlock-run(1), LEAST PRIVILEGE", who, 160, p);
        return true;
    }
    return false;
}

const char *rr_diag_unavailable_hint(const char *msg)
{
    if (msg && strstr(msg, "replicas confirmed"))
        return "check the replicas' links to the master, or lower --sync-replicas";
    if (msg && strstr(msg, "(is it a TLS port?)"))
        return "if it is, use rediss:// (and --tls-ca), else check that Redis is up and "
               "-r/--redis is right";
    if (msg && strstr(msg, "TRYAGAIN"))
        return "the job's cluster slot is being resharded: try again when it has moved, or "
               "give --wait";
    if (msg && strstr(msg, "CLUSTERDOWN"))
        return "the cluster serves no master for the job's slot: check CLUSTER INFO, or give "
               "--wait";
    return "check that Redis is up and -r/--redis is right";
}
