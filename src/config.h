/* config.h — what the command line asks for: struct rr_config, the modes,
 * and the defaults. Data only; cli.c and cli_check.c fill it, everything
 * above reads it. */
#ifndef RR_CONFIG_H
#define RR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "rr.h"
#include "url.h"

/* The defaults, shown in --help and the man page. The connection
 * timeouts' defaults are in rr.h (the connection layer uses them too). */
#define RR_DEFAULT_URL "redis://127.0.0.1:6379"
#define RR_DEFAULT_PREFIX "redlock:"
#define RR_DEFAULT_TTL_MS 30000
#define RR_DEFAULT_KILL_AFTER_MS 10000
#define RR_DEFAULT_STATE_TTL_MS (30LL * 24 * 3600 * 1000)
#define RR_DEFAULT_CONFLICT_EXIT RR_EXIT_BUSY
#define RR_DEFAULT_LIMIT 1

enum rr_mode {
    RR_MODE_RUN,       /* redlock-run [OPTIONS] NAME [--] COMMAND [ARG...] */
    RR_MODE_STATUS,    /* --status [--json] [--once ID] NAME */
    RR_MODE_RELEASE,   /* --release NAME */
    RR_MODE_RESOLVE,   /* --resolve succeeded|clear|retry [--once ID] NAME */
    RR_MODE_LIST,      /* --list [--json]: every job under --prefix */
    RR_MODE_HELP,
    RR_MODE_VERSION,
};

enum rr_on_stale { RR_STALE_DEFAULT, RR_STALE_RUN, RR_STALE_REFUSE };
enum rr_resolve { RR_RESOLVE_NONE, RR_RESOLVE_SUCCEEDED, RR_RESOLVE_CLEAR, RR_RESOLVE_RETRY };
enum rr_log_format { RR_LOGFMT_TEXT, RR_LOGFMT_JSON };
/* --contain: how the command's processes are held (cgroup.h, guard.h). */
enum rr_contain { RR_CONTAIN_AUTO, RR_CONTAIN_CGROUP, RR_CONTAIN_TREE };

struct rr_config {
    enum rr_mode mode;
    const char *name;             /* job / lock name (points into argv) */
    char *const *command;         /* NULL-terminated, points into argv */
    int command_argc;
    const char *shell_command;    /* -c CMD (flock's): COMMAND is sh -c CMD */
    char *shell_argv[4];          /* then { "sh", "-c", CMD, NULL }: command points here */

    struct rr_endpoint endpoints[RR_MAX_ENDPOINTS];
    int n_endpoints;
    bool default_url;             /* no -r and no $REDLOCK_URL: RR_DEFAULT_URL */
    /* --password-file, --sentinel-password-file as given (paths: no secret). */
    const char *password_file, *sentinel_password_file;

    int64_t ttl_ms;               /* --ttl, RR_DEFAULT_TTL_MS */
    int64_t renew_ms;             /* --renew, default ttl/3 */
    int64_t wait_ms;              /* --wait, default 0; RR_INF = forever */
    int64_t timeout_ms;           /* --max-runtime, 0 = none */
    int64_t kill_after_ms;        /* --kill-after, RR_DEFAULT_KILL_AFTER_MS */
    int64_t min_hold_ms;          /* --min-hold, default 0 */
    int64_t connect_timeout_ms;   /* --connect-timeout, RR_DEFAULT_CONNECT_TIMEOUT_MS */
    int64_t redis_timeout_ms;     /* --redis-timeout, RR_DEFAULT_REDIS_TIMEOUT_MS */
    int64_t max_age_ms;           /* --status --max-age, 0 = not a check */
    int64_t warn_held_ms;         /* --warn-held: WARNING past it, 0 = no bound */
    int64_t state_ttl_ms;         /* --state-ttl, RR_DEFAULT_STATE_TTL_MS (once records) */
    int conflict_exit_code;       /* -E, RR_DEFAULT_CONFLICT_EXIT */
    int limit;                    /* --limit, default 1: holders at once */

    const char *once_raw;         /* --once as given (strftime pattern) */
    char once_id[RR_ONCE_MAX + 1];/* expanded in local time; "" without --once */
    enum rr_on_stale on_stale;    /* resolved: never DEFAULT after parsing */
    int attempts;                 /* --attempts N: attempts per --once ID, default 1 */
    enum rr_resolve resolve;      /* --resolve */

    const char *prefix;           /* --prefix, RR_DEFAULT_PREFIX */

    /* Credentials from --password-file or $REDLOCK_PASSWORD / $REDLOCK_USER.
     * For each endpoint a password written in its URL wins over these, and
     * so does a user in its URL (svc_config.c decides). */
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
    char command_fp[17];          /* a run: its command's fingerprint (sha256.h) */
    bool foreground;
    enum rr_contain contain;      /* --contain, RR_CONTAIN_AUTO */
    bool json;                    /* --status --json, --list --json */
    bool force;                   /* --release --force: delete, even under a live holder */
    const char *release_fence;    /* --release --fence F: only a holder of fence F; NULL any */
    int release_slot;             /* --release --slot K: that --limit slot; 0 not given */
    bool all_slots;               /* --release --all-slots: every held slot */
};

#endif
