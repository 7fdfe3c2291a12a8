/* cli.h — the command line: options, validation, --help. */
#ifndef RR_CLI_H
#define RR_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rr.h"
#include "url.h"

#define RR_MAX_ENDPOINTS 15
#define RR_NAME_MAX 200
#define RR_ONCE_MAX 200
#define RR_LIMIT_MAX 100

enum rr_mode {
    RR_MODE_RUN,       /* redlock-run [OPTIONS] NAME [--] COMMAND [ARG...] */
    RR_MODE_STATUS,    /* --status [--json] [--once ID] NAME */
    RR_MODE_RELEASE,   /* --release NAME */
    RR_MODE_RESOLVE,   /* --resolve succeeded|clear [--once ID] NAME */
    RR_MODE_HELP,
    RR_MODE_VERSION,
};

enum rr_on_stale { RR_STALE_DEFAULT, RR_STALE_RUN, RR_STALE_REFUSE };
enum rr_resolve { RR_RESOLVE_NONE, RR_RESOLVE_SUCCEEDED, RR_RESOLVE_CLEAR };
enum rr_log_format { RR_LOGFMT_TEXT, RR_LOGFMT_JSON };

struct rr_config {
    enum rr_mode mode;
    const char *name;             /* job / lock name (points into argv) */
    char *const *command;         /* NULL-terminated, points into argv */
    int command_argc;

    struct rr_endpoint endpoints[RR_MAX_ENDPOINTS];
    int n_endpoints;

    int64_t ttl_ms;               /* --ttl, default 30s */
    int64_t renew_ms;             /* --renew, default ttl/3 */
    int64_t wait_ms;              /* --wait, default 0; RR_INF = forever */
    int64_t timeout_ms;           /* --max-runtime, 0 = none */
    int64_t kill_after_ms;        /* --kill-after, default 10s */
    int64_t min_hold_ms;          /* --min-hold, default 0 */
    int64_t connect_timeout_ms;   /* --connect-timeout, default 1s */
    int64_t redis_timeout_ms;     /* --redis-timeout, default 500ms */
    int64_t state_ttl_ms;         /* --state-ttl, default 30d (once records) */
    int conflict_exit_code;       /* -E, default 75 */
    int limit;                    /* --limit, default 1: holders at once */

    const char *once_raw;         /* --once as given (strftime pattern) */
    char once_id[RR_ONCE_MAX + 1];/* expanded in local time; "" without --once */
    enum rr_on_stale on_stale;    /* resolved: never DEFAULT after parsing */
    enum rr_resolve resolve;      /* --resolve */

    const char *prefix;           /* --prefix, default "redlock:" */

    /* Credentials from --password-file or $REDLOCK_PASSWORD / $REDLOCK_USER;
     * a password in a URL wins for that endpoint. */
    char user[128];
    char password[512];
    bool has_user, has_password;
    /* The sentinels' own: --sentinel-password-file or
     * $REDLOCK_SENTINEL_PASSWORD / $REDLOCK_SENTINEL_USER. */
    char sentinel_user[128];
    char sentinel_password[512];
    bool has_sentinel_user, has_sentinel_password;
    int sync_replicas;            /* --sync-replicas, default 0 */
    const char *loose_secret_file;/* a password file others may read (warned) */

    const char *tls_ca, *tls_ca_dir, *tls_cert, *tls_key, *tls_sni;
    bool tls_insecure;

    int verbosity;                /* -1 quiet, 0 normal, 1 verbose, 2 debug */
    enum rr_log_format log_format;
    bool use_syslog;
    const char *metrics_file;
    bool foreground;
    bool json;                    /* --status --json */
};

/* Parse argv into cfg (getopt_long with a leading '+', so parsing stops at
 * NAME's command). Reads $REDLOCK_URL, $REDLOCK_PASSWORD, $REDLOCK_USER and
 * --password-file. Validates conflicts after the loop. Never prints or exits.
 * Returns 0, or -1 with a one-line message in err (exit status 64). cfg
 * points into argv; argv itself is left untouched (see rr_cli_scrub_argv). */
int rr_cli_parse(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen);

/* Hide passwords that were given on the command line in URLs, so they do not
 * show in /proc/PID/cmdline or ps(1). Call after rr_cli_parse. */
void rr_cli_scrub_argv(int argc, char **argv);

/* Write the --help text to f. */
void rr_cli_usage(FILE *f);

/* Expand strftime fields of pattern in local time at t into out.
 * Returns 0, or -1 with a reason (empty result, too long, contains a space
 * or a control byte). */
int rr_cli_expand_once(const char *pattern, long long t, char *out, size_t outlen, char *err, size_t errlen);

/* Is s a valid job NAME (1..200 printable ASCII bytes, no space, no '{' '}')?
 * Returns 0, or -1 with a reason. */
int rr_cli_check_name(const char *s, char *err, size_t errlen);

/* --limit N: 1..RR_LIMIT_MAX. Returns 0, or -1 with a reason. Pure. */
int rr_cli_parse_limit(const char *arg, int *out, char *err, size_t errlen);

/* Copy s for an error message into out: printable ASCII only (anything
 * else shows as '?'), at most 60 bytes, so the message stays one line. */
const char *rr_cli_quote(const char *s, char *out, size_t outlen);

/* Is a password configured, for any endpoint? (diag.c: then "not
 * authenticated" means the password was refused.) */
bool rr_cli_gave_password(const struct rr_config *cfg);

#endif
