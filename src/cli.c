/* cli.c — the command line: getopt_long, defaults, validation, --help.
 *
 * Parsing happens in two steps, as in flock(1): the getopt loop only records
 * what it saw, and every conflict is judged after the loop, so the verdict
 * does not depend on the order of the options. Nothing here prints or exits;
 * each error is one line in the caller's buffer (exit status 64). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "duration.h"
#include "secret.h"

#define DEFAULT_URL "redis://127.0.0.1:6379"
#define DEFAULT_PREFIX "redlock:"
#define PREFIX_MAX 64
#define MIN_TTL_MS 10
/* Room for a nested message once a prefix such as "--connect-timeout: " or
 * "$REDLOCK_URL: " is put in front of it, so the whole still fits. */
#define INNER_ERRLEN (RR_ERRLEN - 32)
#define USAGE_RUN "usage: redlock-run [OPTIONS] NAME [--] COMMAND [ARG...]"

enum {
    OPT_RENEW = 256,
    OPT_TIMEOUT,
    OPT_OLD_TIMEOUT,
    OPT_KILL_AFTER,
    OPT_ONCE,
    OPT_ON_STALE,
    OPT_MIN_HOLD,
    OPT_STATE_TTL,
    OPT_PREFIX,
    OPT_CONNECT_TIMEOUT,
    OPT_REDIS_TIMEOUT,
    OPT_PASSWORD_FILE,
    OPT_SENTINEL_PASSWORD_FILE,
    OPT_SYNC_REPLICAS,
    OPT_TLS_CA,
    OPT_TLS_CA_DIR,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_TLS_SNI,
    OPT_TLS_INSECURE,
    OPT_LOG_FORMAT,
    OPT_SYSLOG,
    OPT_METRICS_FILE,
    OPT_FOREGROUND,
    OPT_STATUS,
    OPT_JSON,
    OPT_RELEASE,
    OPT_RESOLVE,
    OPT_LIMIT,
};

/* The leading '+' stops at NAME, so the command's own options are never
 * taken for ours; the ':' makes a missing value come back as ':' rather
 * than being printed by getopt. */
static const char optstring[] = "+:r:t:w:E:qvhV";

static const struct option longopts[] = {
    { "redis", required_argument, NULL, 'r' },
    { "ttl", required_argument, NULL, 't' },
    { "renew", required_argument, NULL, OPT_RENEW },
    { "wait", required_argument, NULL, 'w' },
    { "conflict-exit-code", required_argument, NULL, 'E' },
    { "max-runtime", required_argument, NULL, OPT_TIMEOUT },
    /* Not an option: flock(1) and consul use it for the wait. */
    { "timeout", required_argument, NULL, OPT_OLD_TIMEOUT },
    { "kill-after", required_argument, NULL, OPT_KILL_AFTER },
    { "once", required_argument, NULL, OPT_ONCE },
    { "on-stale", required_argument, NULL, OPT_ON_STALE },
    { "min-hold", required_argument, NULL, OPT_MIN_HOLD },
    { "limit", required_argument, NULL, OPT_LIMIT },
    { "state-ttl", required_argument, NULL, OPT_STATE_TTL },
    { "prefix", required_argument, NULL, OPT_PREFIX },
    { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
    { "redis-timeout", required_argument, NULL, OPT_REDIS_TIMEOUT },
    { "password-file", required_argument, NULL, OPT_PASSWORD_FILE },
    { "sentinel-password-file", required_argument, NULL, OPT_SENTINEL_PASSWORD_FILE },
    { "sync-replicas", required_argument, NULL, OPT_SYNC_REPLICAS },
    { "tls-ca", required_argument, NULL, OPT_TLS_CA },
    { "tls-ca-dir", required_argument, NULL, OPT_TLS_CA_DIR },
    { "tls-cert", required_argument, NULL, OPT_TLS_CERT },
    { "tls-key", required_argument, NULL, OPT_TLS_KEY },
    { "tls-sni", required_argument, NULL, OPT_TLS_SNI },
    { "tls-insecure", no_argument, NULL, OPT_TLS_INSECURE },
    { "quiet", no_argument, NULL, 'q' },
    { "verbose", no_argument, NULL, 'v' },
    { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
    { "syslog", no_argument, NULL, OPT_SYSLOG },
    { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
    { "foreground", no_argument, NULL, OPT_FOREGROUND },
    { "status", no_argument, NULL, OPT_STATUS },
    { "json", no_argument, NULL, OPT_JSON },
    { "release", no_argument, NULL, OPT_RELEASE },
    { "resolve", required_argument, NULL, OPT_RESOLVE },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

#define quote rr_cli_quote

/* What the loop saw, judged after it. */
struct seen {
    const char *redis[RR_MAX_ENDPOINTS * 4];
    int n_redis;
    bool too_many_redis;
    const char *password_file, *sentinel_password_file;
    bool renew, timeout, quiet;
    int verbose;
    bool status, release, resolve, help, version;
    bool once;
    bool limit;
};

/* Copy s for an error message: printable ASCII only (anything else shows
 * as '?'), at most 60 bytes, so the message stays one line. */
const char *rr_cli_quote(const char *s, char *out, size_t outlen)
{
    size_t i, o = 0;

    for (i = 0; s[i] && o + 4 < outlen && i < 60; i++)
        out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (s[i] && o + 4 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

static const struct option *find_by_val(int val)
{
    const struct option *o;

    for (o = longopts; o->name; o++)
        if (o->val == val)
            return o;
    return NULL;
}

/* Find a long option as getopt_long does: an exact name, or a prefix that
 * matches exactly one option. n is the length of name (before any '='). */
static const struct option *find_long(const char *name, size_t n)
{
    const struct option *o, *hit = NULL;

    for (o = longopts; o->name; o++) {
        if (strncmp(o->name, name, n) != 0)
            continue;
        if (strlen(o->name) == n)
            return o;
        if (hit)
            return NULL;
        hit = o;
    }
    return hit;
}

/* The display name of option val: "--ttl" (long forms are the contract). */
static const char *optname(int val)
{
    const struct option *o = find_by_val(val);
    return o ? o->name : "?";
}

static bool is_scheme_at(const char *p)
{
    static const char *const schemes[] = { "redis://", "rediss://", "redis-sentinel://",
                                           "rediss-sentinel://", "redis-cluster://",
                                           "rediss-cluster://", "unix:" };

    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strncasecmp(p, schemes[i], strlen(schemes[i])) == 0)
            return true;
    return false;
}

/* Length of the first URL in a comma-separated --redis value. A comma only
 * separates URLs when a scheme follows it, because sentinel and cluster
 * URLs list their nodes with commas and a password may contain one. */
static size_t url_piece_len(const char *s)
{
    const char *p;

    for (p = s; *p; p++)
        if (*p == ',' && is_scheme_at(p + 1))
            break;
    return (size_t)(p - s);
}

static int parse_dur(int val, const char *arg, int64_t *out, char *err, size_t errlen)
{
    char why[INNER_ERRLEN];

    if (rr_duration_parse(arg, out, why, sizeof why) < 0) {
        snprintf(err, errlen, "--%s: %s", optname(val), why);
        return -1;
    }
    return 0;
}

static bool printable_token(const char *s)
{
    for (; *s; s++)
        if (*s <= 0x20 || *s >= 0x7f)
            return false;
    return true;
}

/* The --tls-* options mean something only with a rediss:// URL; silently
 * ignoring them would let a typo in the URL send the password in clear. */
static int check_tls(const struct rr_config *cfg, char *err, size_t errlen)
{
    const char *opt = cfg->tls_ca ? "--tls-ca" : cfg->tls_ca_dir ? "--tls-ca-dir"
                    : cfg->tls_cert ? "--tls-cert" : cfg->tls_key ? "--tls-key"
                    : cfg->tls_sni ? "--tls-sni" : cfg->tls_insecure ? "--tls-insecure" : NULL;
    int i;

    if (!opt)
        return 0;
    for (i = 0; i < cfg->n_endpoints; i++)
        if (cfg->endpoints[i].tls)
            break;
    if (i == cfg->n_endpoints) {
        snprintf(err, errlen, "%s needs a rediss:// URL (TLS); none of the Redis URLs is one", opt);
        return -1;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        snprintf(err, errlen, "%s needs %s too (a client certificate and its key)",
                 cfg->tls_cert ? "--tls-cert" : "--tls-key",
                 cfg->tls_cert ? "--tls-key" : "--tls-cert");
        return -1;
    }
    if (cfg->tls_sni && !*cfg->tls_sni) {
        snprintf(err, errlen, "--tls-sni needs a host name");
        return -1;
    }
    return 0;
}

/* Add each URL of one --redis value (or $REDLOCK_URL) to cfg. */
static int add_urls(struct rr_config *cfg, const char *value, const char *what,
                    char *err, size_t errlen)
{
    char url[2048];
    char why[INNER_ERRLEN];
    char q[72];
    const char *p = value;
    size_t n;
    int i;

    /* "a,b," or "a,,b": a URL was left out, not mistyped. */
    n = strlen(value);
    if (n > 0 && (value[0] == ',' || value[n - 1] == ',' || strstr(value, ",,"))) {
        snprintf(err, errlen, "%s: an empty URL in the comma-separated list (a comma too many?): "
                 "remove it, or give the URL that belongs there", what);
        return -1;
    }

    do {
        struct rr_endpoint *ep;

        n = url_piece_len(p);
        if (cfg->n_endpoints >= RR_MAX_ENDPOINTS) {
            snprintf(err, errlen, "too many Redis URLs: at most %d masters", RR_MAX_ENDPOINTS);
            goto fail;
        }
        if (n >= sizeof url) {
            snprintf(err, errlen, "%s: Redis URL longer than %zu bytes", what, sizeof url - 1);
            goto fail;
        }
        memcpy(url, p, n);
        url[n] = '\0';
        ep = &cfg->endpoints[cfg->n_endpoints];
        if (rr_url_parse(url, ep, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: %s", what, why);
            goto fail;
        }
        /* The same server listed twice would vote twice in the quorum. */
        for (i = 0; i < cfg->n_endpoints; i++) {
            const struct rr_endpoint *o = &cfg->endpoints[i];
            if (o->transport == ep->transport &&
                (ep->transport == RR_TRANSPORT_UNIX ? strcmp(o->path, ep->path) == 0
                                                    : strcasecmp(o->display, ep->display) == 0)) {
                /* A socket path may hold any byte, "%0a" too: quote it so
                 * the message stays one line. */
                snprintf(err, errlen, "%s: Redis server %s is given twice; each Redlock master must be a separate server",
                         what, quote(ep->display, q, sizeof q));
                goto fail;
            }
        }
        cfg->n_endpoints++;
        p += n;
    } while (*p++ == ',');
    explicit_bzero(url, sizeof url);
    return 0;

fail:
    explicit_bzero(url, sizeof url);
    if (cfg->n_endpoints < RR_MAX_ENDPOINTS)
        memset(&cfg->endpoints[cfg->n_endpoints], 0, sizeof cfg->endpoints[0]);
    return -1;
}

static void set_defaults(struct rr_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = RR_MODE_RUN;
    cfg->ttl_ms = 30000;
    cfg->wait_ms = 0;
    cfg->timeout_ms = 0;
    cfg->kill_after_ms = 10000;
    cfg->min_hold_ms = 0;
    cfg->connect_timeout_ms = 1000;
    cfg->redis_timeout_ms = 500;
    cfg->state_ttl_ms = 30LL * 24 * 3600 * 1000;
    cfg->conflict_exit_code = RR_EXIT_BUSY;
    cfg->on_stale = RR_STALE_DEFAULT;
    cfg->resolve = RR_RESOLVE_NONE;
    cfg->prefix = DEFAULT_PREFIX;
    cfg->log_format = RR_LOGFMT_TEXT;
    cfg->limit = 1;
}

/* Record one option. Returns 0, or -1 with err filled. */
static int take_option(int c, const char *arg, struct rr_config *cfg, struct seen *sn,
                       char *err, size_t errlen)
{
    char q[72];
    char *end;
    long v;

    switch (c) {
    case 'r':
        if (sn->n_redis >= (int)(sizeof sn->redis / sizeof sn->redis[0])) {
            sn->too_many_redis = true;
            return 0;
        }
        sn->redis[sn->n_redis++] = arg;
        return 0;
    case 't':
        return parse_dur(c, arg, &cfg->ttl_ms, err, errlen);
    case OPT_RENEW:
        sn->renew = true;
        return parse_dur(c, arg, &cfg->renew_ms, err, errlen);
    case 'w':
        return parse_dur(c, arg, &cfg->wait_ms, err, errlen);
    case 'E':
        errno = 0;
        v = strtol(arg, &end, 10);
        if (*arg < '0' || *arg > '9' || *end || errno || v > 255) {
            snprintf(err, errlen, "--conflict-exit-code must be a number from 0 to 255 (got '%s')", quote(arg, q, sizeof q));
            return -1;
        }
        cfg->conflict_exit_code = (int)v;
        return 0;
    case OPT_OLD_TIMEOUT:
        snprintf(err, errlen, "--timeout is not an option: to wait for the lock use --wait DUR, "
                 "to limit the run use --max-runtime DUR");
        return -1;
    case OPT_TIMEOUT:
        sn->timeout = true;
        return parse_dur(c, arg, &cfg->timeout_ms, err, errlen);
    case OPT_KILL_AFTER:
        return parse_dur(c, arg, &cfg->kill_after_ms, err, errlen);
    case OPT_LIMIT:
        sn->limit = true;
        if (rr_cli_parse_limit(arg, &cfg->limit, err, errlen) < 0)
            return -1;
        return 0;
    case OPT_ONCE:
        sn->once = true;
        cfg->once_raw = arg;
        return 0;
    case OPT_ON_STALE:
        if (strcmp(arg, "run") == 0)
            cfg->on_stale = RR_STALE_RUN;
        else if (strcmp(arg, "refuse") == 0)
            cfg->on_stale = RR_STALE_REFUSE;
        else {
            snprintf(err, errlen, "--on-stale must be run or refuse (got '%s')", quote(arg, q, sizeof q));
            return -1;
        }
        return 0;
    case OPT_MIN_HOLD:
        return parse_dur(c, arg, &cfg->min_hold_ms, err, errlen);
    case OPT_STATE_TTL:
        return parse_dur(c, arg, &cfg->state_ttl_ms, err, errlen);
    case OPT_PREFIX:
        cfg->prefix = arg;
        return 0;
    case OPT_CONNECT_TIMEOUT:
        return parse_dur(c, arg, &cfg->connect_timeout_ms, err, errlen);
    case OPT_REDIS_TIMEOUT:
        return parse_dur(c, arg, &cfg->redis_timeout_ms, err, errlen);
    case OPT_PASSWORD_FILE:
        sn->password_file = arg;
        return 0;
    case OPT_SENTINEL_PASSWORD_FILE:
        sn->sentinel_password_file = arg;
        return 0;
    case OPT_SYNC_REPLICAS:
        errno = 0;
        v = strtol(arg, &end, 10);
        if (*arg < '0' || *arg > '9' || *end || errno || v > 100) {
            snprintf(err, errlen, "--sync-replicas must be a number of replicas from 0 to 100 (got '%s')", quote(arg, q, sizeof q));
            return -1;
        }
        cfg->sync_replicas = (int)v;
        return 0;
    case OPT_TLS_CA:
        cfg->tls_ca = arg;
        return 0;
    case OPT_TLS_CA_DIR:
        cfg->tls_ca_dir = arg;
        return 0;
    case OPT_TLS_CERT:
        cfg->tls_cert = arg;
        return 0;
    case OPT_TLS_KEY:
        cfg->tls_key = arg;
        return 0;
    case OPT_TLS_SNI:
        cfg->tls_sni = arg;
        return 0;
    case OPT_TLS_INSECURE:
        cfg->tls_insecure = true;
        return 0;
    case 'q':
        sn->quiet = true;
        return 0;
    case 'v':
        sn->verbose++;
        return 0;
    case OPT_LOG_FORMAT:
        if (strcmp(arg, "text") == 0)
            cfg->log_format = RR_LOGFMT_TEXT;
        else if (strcmp(arg, "json") == 0)
            cfg->log_format = RR_LOGFMT_JSON;
        else {
            snprintf(err, errlen, "--log-format must be text or json (got '%s')", quote(arg, q, sizeof q));
            return -1;
        }
        return 0;
    case OPT_SYSLOG:
        cfg->use_syslog = true;
        return 0;
    case OPT_METRICS_FILE:
        if (*arg == '\0') {
            snprintf(err, errlen, "--metrics-file needs a file name");
            return -1;
        }
        cfg->metrics_file = arg;
        return 0;
    case OPT_FOREGROUND:
        cfg->foreground = true;
        return 0;
    case OPT_STATUS:
        sn->status = true;
        return 0;
    case OPT_JSON:
        cfg->json = true;
        return 0;
    case OPT_RELEASE:
        sn->release = true;
        return 0;
    case OPT_RESOLVE:
        sn->resolve = true;
        if (strcmp(arg, "succeeded") == 0)
            cfg->resolve = RR_RESOLVE_SUCCEEDED;
        else if (strcmp(arg, "clear") == 0)
            cfg->resolve = RR_RESOLVE_CLEAR;
        else {
            snprintf(err, errlen, "--resolve must be succeeded or clear (got '%s')", quote(arg, q, sizeof q));
            return -1;
        }
        return 0;
    case 'h':
        sn->help = true;
        return 0;
    case 'V':
        sn->version = true;
        return 0;
    }
    snprintf(err, errlen, "internal error: unhandled option %d", c);
    return -1;
}

/* Explain a '?' or ':' from getopt_long in one line. The offending word is
 * cut at '=' because a mistyped "--redis-url=redis://:secret@host" must not
 * echo the secret. */
static void bad_option(int c, int argc, char **argv, char *err, size_t errlen)
{
    const struct option *o = optopt ? find_by_val(optopt) : NULL;
    const char *word = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "";
    char q[72];
    size_t n;

    if (c == ':') {
        if (o)
            snprintf(err, errlen, "option --%s needs a value", o->name);
        else
            snprintf(err, errlen, "option -%c needs a value", optopt);
        return;
    }
    if (o && o->has_arg == no_argument && strncmp(word, "--", 2) == 0 && strchr(word, '=')) {
        snprintf(err, errlen, "option --%s does not take a value", o->name);
        return;
    }
    if (optopt > 0x20 && optopt < 0x7f && !o) {
        snprintf(err, errlen, "unknown option '-%c'", optopt);
        return;
    }
    n = strcspn(word, "=");
    snprintf(q, sizeof q, "%.*s", (int)(n < 60 ? n : 60), word);
    quote(q, q, sizeof q);
    snprintf(err, errlen, "unknown or ambiguous option '%s'", q);
}

static int check_prefix(const char *s, char *err, size_t errlen)
{
    char q[72];

    if (strlen(s) > PREFIX_MAX || !printable_token(s) || strpbrk(s, "{}")) {
        snprintf(err, errlen, "--prefix must be at most %d printable bytes without spaces or braces (got '%s')",
                 PREFIX_MAX, quote(s, q, sizeof q));
        return -1;
    }
    return 0;
}

static int check_positive_finite(int val, int64_t ms, char *err, size_t errlen)
{
    char d[48];

    if (ms <= 0 || ms == RR_INF) {
        snprintf(err, errlen, "--%s must be more than 0 and finite (got %s)", optname(val),
                 rr_duration_format(ms, d, sizeof d));
        return -1;
    }
    return 0;
}

/* Everything the loop could not judge alone. */
static int validate(struct rr_config *cfg, struct seen *sn, int argc, char **argv,
                    char *err, size_t errlen)
{
    const char *url, *modeopt = NULL;
    char d1[48], d2[48], why[INNER_ERRLEN];
    int i, n_modes;

    n_modes = sn->status + sn->release + sn->resolve;
    if (n_modes > 1) {
        snprintf(err, errlen, "%s cannot be used together; give only one",
                 sn->status && sn->release ? "--status and --release"
                 : sn->status ? "--status and --resolve" : "--release and --resolve");
        return -1;
    }
    if (sn->status) {
        cfg->mode = RR_MODE_STATUS;
        modeopt = "--status";
    } else if (sn->release) {
        cfg->mode = RR_MODE_RELEASE;
        modeopt = "--release";
    } else if (sn->resolve) {
        cfg->mode = RR_MODE_RESOLVE;
        modeopt = "--resolve";
    }
    if (cfg->json && !sn->status) {
        snprintf(err, errlen, "--json works only with --status");
        return -1;
    }
    if (sn->quiet && sn->verbose) {
        snprintf(err, errlen, "-q/--quiet and -v/--verbose cannot be used together; give only one");
        return -1;
    }
    cfg->verbosity = sn->quiet ? -1 : sn->verbose > 2 ? 2 : sn->verbose;

    /* NAME and COMMAND. getopt_long already stepped over a "--" that came
     * before NAME; one right after NAME is skipped here. */
    if (optind >= argc) {
        if (cfg->mode == RR_MODE_RUN)
            snprintf(err, errlen, "missing NAME: " USAGE_RUN);
        else
            snprintf(err, errlen, "missing NAME: usage: redlock-run %s%s NAME", modeopt,
                     cfg->mode == RR_MODE_STATUS ? " [--json] [--once ID]"
                     : cfg->mode == RR_MODE_RESOLVE ? " succeeded|clear [--once ID]" : "");
        return -1;
    }
    cfg->name = argv[optind++];
    if (rr_cli_check_name(cfg->name, err, errlen) < 0)
        return -1;
    if (optind < argc && strcmp(argv[optind], "--") == 0) {
        optind++;
    } else if (optind < argc && argv[optind][0] == '-' && argv[optind][1] != '\0') {
        /* A command never starts with '-' in practice; this is an option
         * placed after NAME, which would otherwise be run as the command. */
        char q[72];
        size_t n = strcspn(argv[optind], "=");
        /* Cut at '=' so a misplaced --redis=URL never shows its password. */
        snprintf(q, sizeof q, "%.*s", (int)(n < 60 ? n : 60), argv[optind]);
        snprintf(err, errlen, "option '%s' after NAME: put options before NAME, or write -- before a command that starts with '-'",
                 quote(q, q, sizeof q));
        return -1;
    }
    cfg->command = argv + optind;
    cfg->command_argc = argc - optind;
    if (cfg->mode == RR_MODE_RUN && cfg->command_argc == 0) {
        snprintf(err, errlen, "missing COMMAND: " USAGE_RUN);
        return -1;
    }
    if (cfg->mode != RR_MODE_RUN && cfg->command_argc > 0) {
        snprintf(err, errlen, "%s takes only NAME, not a command", modeopt);
        return -1;
    }
    if (cfg->mode == RR_MODE_RELEASE && sn->once) {
        /* The lock is one per NAME; a --once ID is a record, not a lock. */
        snprintf(err, errlen, "--release takes no --once: it removes the lock of NAME, whatever "
                 "the run; to settle a --once record use --resolve succeeded|clear --once ID");
        return -1;
    }

    /* Times. */
    if (cfg->ttl_ms == RR_INF) {
        snprintf(err, errlen, "--ttl must be finite (got inf): the lock is a lease that must expire if we die");
        return -1;
    }
    if (cfg->ttl_ms < MIN_TTL_MS) {
        snprintf(err, errlen, "--ttl must be at least 10ms (got %s)",
                 rr_duration_format(cfg->ttl_ms, d1, sizeof d1));
        return -1;
    }
    if (!sn->renew)
        cfg->renew_ms = cfg->ttl_ms / 3;
    if (cfg->renew_ms <= 0 || cfg->renew_ms >= cfg->ttl_ms) {
        snprintf(err, errlen, "--renew must be more than 0 and less than --ttl %s (got %s)",
                 rr_duration_format(cfg->ttl_ms, d1, sizeof d1),
                 rr_duration_format(cfg->renew_ms, d2, sizeof d2));
        return -1;
    }
    if (sn->timeout && cfg->timeout_ms == 0) {
        snprintf(err, errlen, "--max-runtime must be more than 0 (got 0s); leave it out for no limit");
        return -1;
    }
    if (cfg->timeout_ms == RR_INF)
        cfg->timeout_ms = 0;
    if (cfg->kill_after_ms == RR_INF) {
        snprintf(err, errlen, "--kill-after must be finite (got inf)");
        return -1;
    }
    if (cfg->min_hold_ms == RR_INF) {
        snprintf(err, errlen, "--min-hold must be finite (got inf)");
        return -1;
    }
    if (check_positive_finite(OPT_STATE_TTL, cfg->state_ttl_ms, err, errlen) < 0 ||
        check_positive_finite(OPT_CONNECT_TIMEOUT, cfg->connect_timeout_ms, err, errlen) < 0 ||
        check_positive_finite(OPT_REDIS_TIMEOUT, cfg->redis_timeout_ms, err, errlen) < 0)
        return -1;

    if (check_prefix(cfg->prefix, err, errlen) < 0)
        return -1;

    /* --once and --on-stale. */
    if (sn->once) {
        if (rr_cli_expand_once(cfg->once_raw, (long long)time(NULL), cfg->once_id,
                               sizeof cfg->once_id, why, sizeof why) < 0) {
            snprintf(err, errlen, "--once: %s", why);
            return -1;
        }
    }
    if (cfg->on_stale == RR_STALE_DEFAULT)
        cfg->on_stale = sn->once ? RR_STALE_REFUSE : RR_STALE_RUN;
    if (sn->limit && sn->once && cfg->mode == RR_MODE_RUN) {
        /* --once means one success per ID; N holders at once would run it
         * up to N times. */
        snprintf(err, errlen, "--limit cannot be used with --once: a --once ID runs at most "
                 "once, so drop --limit (or --once to allow N runs at a time)");
        return -1;
    }

    /* Endpoints: -r wins over $REDLOCK_URL, which wins over the default. */
    if (sn->too_many_redis) {
        snprintf(err, errlen, "too many Redis URLs: at most %d masters", RR_MAX_ENDPOINTS);
        return -1;
    }
    if (sn->n_redis > 0) {
        for (i = 0; i < sn->n_redis; i++)
            if (add_urls(cfg, sn->redis[i], "--redis", err, errlen) < 0)
                return -1;
    } else if ((url = getenv("REDLOCK_URL")) != NULL && *url) {
        if (add_urls(cfg, url, "$REDLOCK_URL", err, errlen) < 0)
            return -1;
    } else if (add_urls(cfg, DEFAULT_URL, "default", err, errlen) < 0) {
        return -1;
    }
    if (check_tls(cfg, err, errlen) < 0)
        return -1;
    if (cfg->limit > 1 && cfg->n_endpoints > 1) {
        snprintf(err, errlen, "--limit %d needs one lock service, not %d -r URLs: use one "
                 "master (or Sentinel/Cluster), or drop --limit", cfg->limit, cfg->n_endpoints);
        return -1;
    }

    if (rr_secret_resolve(cfg, sn->password_file, sn->sentinel_password_file, err, errlen) < 0)
        return -1;
    return 0;
}

int rr_cli_parse(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen)
{
    struct seen sn;
    char first[RR_ERRLEN] = "", later[RR_ERRLEN];
    int c, saved_opterr = opterr;

    set_defaults(cfg);
    memset(&sn, 0, sizeof sn);
    if (errlen > 0)
        err[0] = '\0';

    /* getopt keeps its position in globals; 0 makes glibc start afresh, so
     * the parser can run many times in one process (the unit tests). */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        /* Keep scanning after an error: --help or --version anywhere wins,
         * but otherwise the first error is the one reported. */
        if (c == '?' || c == ':') {
            if (!first[0])
                bad_option(c, argc, argv, first, sizeof first);
        } else if (first[0]) {
            take_option(c, optarg, cfg, &sn, later, sizeof later);
        } else {
            take_option(c, optarg, cfg, &sn, first, sizeof first);
        }
    }
    opterr = saved_opterr;

    if (sn.help || sn.version) {
        cfg->mode = sn.help ? RR_MODE_HELP : RR_MODE_VERSION;
        cfg->on_stale = cfg->once_raw ? RR_STALE_REFUSE : RR_STALE_RUN;
        if (errlen > 0)
            err[0] = '\0';
        return 0;
    }
    if (first[0]) {
        snprintf(err, errlen, "%s", first);
        goto fail;
    }
    if (validate(cfg, &sn, argc, argv, err, errlen) < 0)
        goto fail;
    return 0;

fail:
    /* Leave no copied secret in a config the caller will discard. */
    explicit_bzero(cfg->password, sizeof cfg->password);
    explicit_bzero(cfg->endpoints, sizeof cfg->endpoints);
    cfg->n_endpoints = 0;
    cfg->has_password = false;
    return -1;
}

/* Scrub each URL of one --redis value in place. */
static void scrub_value(char *v)
{
    size_t n;
    char saved;

    for (;;) {
        n = url_piece_len(v);
        saved = v[n];
        v[n] = '\0';
        rr_url_scrub(v);
        v[n] = saved;
        if (saved == '\0')
            return;
        v += n + 1;
    }
}

void rr_cli_scrub_argv(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc && argv[i]; i++) {
        char *a = argv[i];

        if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
            return;     /* NAME, or the end of our options */
        if (a[1] == '-') {
            size_t n = strcspn(a + 2, "=");
            const struct option *o = find_long(a + 2, n);
            if (o == NULL || o->has_arg == no_argument)
                continue;
            if (a[2 + n] == '=') {
                if (o->val == 'r')
                    scrub_value(a + 3 + n);
            } else if (i + 1 < argc) {
                i++;
                if (o->val == 'r' && argv[i])
                    scrub_value(argv[i]);
            }
            continue;
        }
        /* A cluster of short options: the first one that takes a value
         * takes the rest of the word, or the next word. */
        for (a++; *a; a++) {
            const char *spec = strchr(optstring + 2, *a);
            if (spec == NULL || spec[1] != ':')
                continue;
            if (a[1]) {
                if (*a == 'r')
                    scrub_value(a + 1);
            } else if (i + 1 < argc) {
                i++;
                if (*a == 'r' && argv[i])
                    scrub_value(argv[i]);
            }
            break;
        }
    }
}

int rr_cli_parse_limit(const char *arg, int *out, char *err, size_t errlen)
{
    char q[72];
    char *end;
    long v;

    errno = 0;
    v = strtol(arg, &end, 10);
    if (*arg < '0' || *arg > '9' || *end || errno || v < 1 || v > RR_LIMIT_MAX) {
        snprintf(err, errlen, "--limit must be a number of holders from 1 to %d (got '%s')",
                 RR_LIMIT_MAX, quote(arg, q, sizeof q));
        return -1;
    }
    *out = (int)v;
    return 0;
}

int rr_cli_expand_once(const char *pattern, long long t, char *out, size_t outlen,
                       char *err, size_t errlen)
{
    char buf[1024];
    char q[72];
    time_t tt = (time_t)t;
    struct tm tm;
    size_t n;

    if (outlen > 0)
        out[0] = '\0';
    if (pattern == NULL || *pattern == '\0') {
        snprintf(err, errlen, "the ID must not be empty, e.g. --once 'daily-%%F'");
        return -1;
    }
    if (localtime_r(&tt, &tm) == NULL) {
        snprintf(err, errlen, "cannot convert the current time to local time");
        return -1;
    }
    /* strftime returns 0 both for "too long" and for an empty result. */
    n = strftime(buf, sizeof buf, pattern, &tm);
    if (n == 0) {
        snprintf(err, errlen, "'%s' expands to nothing or to more than %d bytes", quote(pattern, q, sizeof q), RR_ONCE_MAX);
        return -1;
    }
    if (n > RR_ONCE_MAX || n >= outlen) {
        snprintf(err, errlen, "'%s' expands to %zu bytes; the ID may have at most %d",
                 quote(pattern, q, sizeof q), n, RR_ONCE_MAX);
        return -1;
    }
    if (!printable_token(buf)) {
        snprintf(err, errlen, "'%s' expands to '%s', which has a space or a non-printable byte; IDs are printable ASCII without spaces",
                 quote(pattern, q, sizeof q), quote(buf, buf, sizeof buf));
        return -1;
    }
    memcpy(out, buf, n + 1);
    return 0;
}

int rr_cli_check_name(const char *s, char *err, size_t errlen)
{
    char q[72];
    size_t n;

    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "NAME must not be empty; it names the lock, as in 'nightly-backup'");
        return -1;
    }
    n = strlen(s);
    if (n > RR_NAME_MAX) {
        snprintf(err, errlen, "NAME is %zu bytes long; use at most %d", n, RR_NAME_MAX);
        return -1;
    }
    if (!printable_token(s)) {
        snprintf(err, errlen, "NAME '%s' has a space or a non-printable or non-ASCII byte; use printable ASCII without spaces",
                 quote(s, q, sizeof q));
        return -1;
    }
    /* Braces would break the {NAME} hash tag that keeps a job's keys in
     * one cluster slot. */
    if (strpbrk(s, "{}")) {
        snprintf(err, errlen, "NAME '%s' must not contain '{' or '}'", quote(s, q, sizeof q));
        return -1;
    }
    return 0;
}

void rr_cli_usage(FILE *f)
{
    fputs(
USAGE_RUN "\n"
"       redlock-run --status [--json] [--once ID] NAME\n"
"       redlock-run --release NAME | --resolve succeeded|clear [--once ID] NAME\n"
"\n"
"Run COMMAND while holding the Redis lock NAME: renew it, release it after,\n"
"record how the run ended. DUR: 500ms, 30s, 5m, 1h30m, 2d, 1.5s or inf.\n"
"\n"
"Locking:\n"
"  -r, --redis URL            lock service: redis[s]://, unix://, and\n"
"                             redis[s]-sentinel://, redis[s]-cluster://;\n"
"                             repeat for a Redlock quorum\n"
"                             ($REDLOCK_URL, else redis://127.0.0.1:6379)\n"
"      --sync-replicas N      a lock write counts once N replicas confirm it (0)\n"
"  -t, --ttl DUR              lock lease, renewed while COMMAND runs (30s)\n"
"      --renew DUR            renewal interval (ttl/3)\n"
"  -w, --wait DUR             wait for a busy lock; inf = forever (0: no wait)\n"
"  -E, --conflict-exit-code N exit status if busy or the wait ran out (75)\n"
"      --min-hold DUR         keep the lock this long after acquiring (0)\n"
"      --limit N              up to N holders at once, REDLOCK_SLOT=1..N (1)\n"
"      --prefix STR           Redis key prefix (redlock:)\n"
"\n"
"Run once and state:\n"
"      --once ID              succeed at most once per ID; strftime %-fields\n"
"                             expand in local time, e.g. 'daily-%F' (none)\n"
"      --on-stale run|refuse  if the last run died mid-way (refuse with --once)\n"
"      --state-ttl DUR        how long --once records are kept (30d)\n"
"\n"
"Child:\n"
"      --max-runtime DUR      stop COMMAND after DUR, exit 124 (none)\n"
"      --kill-after DUR       grace from SIGTERM to SIGKILL when stopping (10s)\n"
"      --foreground           keep COMMAND in our process group (off)\n"
"\n"
"Redis connection:\n"
"      --connect-timeout DUR  per connection attempt (1s)\n"
"      --redis-timeout DUR    per request (500ms)\n"
"      --password-file FILE   password on FILE's first line ($REDLOCK_PASSWORD;\n"
"                             user from $REDLOCK_USER); a URL's own one wins\n"
"      --sentinel-password-file FILE  the sentinels' own password\n"
"                             ($REDLOCK_SENTINEL_PASSWORD, _USER)\n"
"      --tls-ca FILE          CA bundle to verify rediss:// servers (system)\n"
"      --tls-ca-dir DIR       directory of hashed CA certificates (system)\n"
"      --tls-cert FILE        client certificate for rediss:// (none)\n"
"      --tls-key FILE         client private key for rediss:// (none)\n"
"      --tls-sni HOST         server name to send and verify (the URL's host)\n"
"      --tls-insecure         do not verify the server certificate (verify)\n"
"\n"
"Output:\n"
"  -q, --quiet                errors only; busy and skipped runs are silent\n"
"  -v, --verbose              narrate each step; twice for debug output\n"
"      --log-format text|json log lines as text or JSON objects (text)\n"
"      --syslog               also log to syslog (off)\n"
"      --metrics-file PATH    write Prometheus textfile metrics (none)\n"
"\n"
"Operator modes:\n"
"      --status               show the holder and the last run of NAME\n"
"      --json                 with --status: print one JSON object\n"
"      --release              force-release the lock NAME\n"
"      --resolve succeeded|clear  settle a run that died mid-way\n"
"  -h, --help                 show this help\n"
"  -V, --version              show the version\n"
"\n"
"EXIT STATUS\n"
"  0    success, or skipped because --once ID already succeeded\n"
"  N    COMMAND's own status; 128+N if it died of signal N, or if signal N\n"
"       stopped redlock-run before COMMAND started\n"
"  64   usage error (bad option, URL, duration or NAME)\n"
"  65   refused: a previous run died mid-way (--on-stale refuse)\n"
"  69   Redis unavailable, authentication refused, or no quorum by errors\n"
"  70   internal error (a bug: please report it)\n"
"  71   cannot fork or create a pipe (out of processes or descriptors)\n"
"  75   lock busy or --wait ran out (see -E)\n"
"  78   the server refused our configuration (password, ACL, db, TLS\n"
"       certificate verification): fix it; --wait does not retry it\n"
"  79   lock lost while COMMAND ran; COMMAND was stopped\n"
"  124  --max-runtime ran out; COMMAND was stopped\n"
"  126  COMMAND could not be executed\n"
"  127  COMMAND not found\n",
        f);
}

bool rr_cli_gave_password(const struct rr_config *cfg)
{
    bool any = cfg->has_password;

    for (int i = 0; i < cfg->n_endpoints; i++)
        any |= cfg->endpoints[i].has_password;
    return any;
}
