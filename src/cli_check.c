/* cli_check.c — the command line after the getopt loop: defaults, the
 * conflicts between options, NAME and COMMAND, the URLs and credentials,
 * and the checks of single values (NAME, --once ID, numbers). As in
 * flock(1), every verdict is made here, after the loop, so it does not
 * depend on the order of the options. Never prints or exits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_impl.h"
#include "duration.h"
#include "secret.h"

#define PREFIX_MAX 64
#define MIN_TTL_MS 10

static const char *quote(const char *s, char *out, size_t outlen)
{
    return rr_quote(s, SIZE_MAX, RR_QUOTE_MAX, out, outlen);
}

static bool given(const struct rr_cli_seen *sn, unsigned bit)
{
    return (sn->given & bit) != 0;
}

void rr_cli_defaults(struct rr_config *cfg)
{
    cfg->mode = RR_MODE_RUN;
    cfg->ttl_ms = RR_DEFAULT_TTL_MS;
    cfg->wait_ms = 0;
    cfg->timeout_ms = 0;
    cfg->kill_after_ms = RR_DEFAULT_KILL_AFTER_MS;
    cfg->min_hold_ms = 0;
    cfg->connect_timeout_ms = RR_DEFAULT_CONNECT_TIMEOUT_MS;
    cfg->redis_timeout_ms = RR_DEFAULT_REDIS_TIMEOUT_MS;
    cfg->state_ttl_ms = RR_DEFAULT_STATE_TTL_MS;
    cfg->conflict_exit_code = RR_DEFAULT_CONFLICT_EXIT;
    cfg->on_stale = RR_STALE_DEFAULT;
    cfg->resolve = RR_RESOLVE_NONE;
    cfg->prefix = RR_DEFAULT_PREFIX;
    cfg->log_format = RR_LOGFMT_TEXT;
    cfg->limit = RR_DEFAULT_LIMIT;
    cfg->attempts = 1;
}

static bool printable_token(const char *s)
{
    for (; *s; s++)
        if (*s <= 0x20 || *s >= 0x7f)
            return false;
    return true;
}

int rr_cli_number(const char *opt, const char *noun, const char *arg, long lo, long hi,
                  long *out, char *err, size_t errlen)
{
    char q[72];

    if (rr_parse_decimal(arg, strlen(arg), lo, hi, out) < 0) {
        snprintf(err, errlen, "--%s must be a number%s from %ld to %ld (got '%s')",
                 opt, noun, lo, hi, quote(arg, q, sizeof q));
        return -1;
    }
    return 0;
}

int rr_cli_parse_limit(const char *arg, int *out, char *err, size_t errlen)
{
    long v;

    if (rr_cli_number("limit", " of holders", arg, 1, RR_LIMIT_MAX, &v, err, errlen) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* ---- single values ---- */

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

static int check_positive_finite(const char *opt, int64_t ms, char *err, size_t errlen)
{
    char d[48];

    if (ms <= 0 || ms == RR_INF) {
        snprintf(err, errlen, "--%s must be more than 0 and finite (got %s)", opt,
                 rr_duration_format(ms, d, sizeof d));
        return -1;
    }
    return 0;
}

/* ---- URLs ---- */

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

/* Sentinel and cluster URLs list their nodes with commas and a password
 * may contain one: only a comma followed by a scheme separates URLs. */
size_t rr_cli_url_len(const char *s)
{
    const char *p;

    for (p = s; *p; p++)
        if (*p == ',' && is_scheme_at(p + 1))
            break;
    return (size_t)(p - s);
}

/* The real path of the directory of path (absolute: url.c), whose name
 * starts at base. */
static bool real_dir(const char *path, const char *base, char out[PATH_MAX])
{
    char dir[sizeof ((struct rr_endpoint *)0)->path];

    snprintf(dir, sizeof dir, "%.*s", (int)(base - path), path);
    return realpath(dir, out) != NULL;
}

/* Do two unix socket paths reach one server, as far as can be told without
 * asking it? The same socket inode, whatever "/./", ".." or symlink led to
 * it; where neither socket is there yet, one name in one real directory. */
static bool same_socket(const char *a, const char *b)
{
    const char *ba = strrchr(a, '/') + 1, *bb = strrchr(b, '/') + 1;
    char da[PATH_MAX], db[PATH_MAX];
    struct stat x, y;
    bool xa = stat(a, &x) == 0, yb = stat(b, &y) == 0;

    if (xa || yb)
        return xa && yb && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
    return strcmp(ba, bb) == 0 && real_dir(a, ba, da) && real_dir(b, bb, db) &&
           strcmp(da, db) == 0;
}

/* Would a and b vote twice from one server? Only what can be told here,
 * without connecting (rr_url_same_host says which hosts are one). */
static bool same_server(const struct rr_endpoint *a, const struct rr_endpoint *b)
{
    if (a->transport != b->transport)
        return false;
    if (a->transport == RR_TRANSPORT_UNIX)
        return strcmp(a->path, b->path) == 0 || same_socket(a->path, b->path);
    if (a->kind == RR_EP_DIRECT && b->kind == RR_EP_DIRECT)
        return a->port == b->port && rr_url_same_host(a->host, b->host);
    return strcasecmp(a->display, b->display) == 0;
}

/* Add each URL of one --redis value (or $REDLOCK_URL) to cfg. */
static int add_urls(struct rr_config *cfg, const char *value, const char *what,
                    char *err, size_t errlen)
{
    char url[2048];
    char why[RR_CLI_INNER_ERRLEN];
    char q[72], q2[72];
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

        n = rr_cli_url_len(p);
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
            if (!same_server(o, ep))
                continue;
            /* A socket path may hold any byte, "%0a" too: quote it so
             * the message stays one line. */
            if (strcasecmp(o->display, ep->display) == 0)
                snprintf(err, errlen, "%s: Redis server %s is given twice; each Redlock master "
                         "must be a separate server", what, quote(ep->display, q, sizeof q));
            else
                snprintf(err, errlen, "%s: %s and %s are the same Redis server; each Redlock "
                         "master must be a separate server, so give it once", what,
                         quote(o->display, q, sizeof q), quote(ep->display, q2, sizeof q2));
            goto fail;
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
    /* A file that cannot be read is a usage error, told before connecting
     * and in the words a --password-file gets; one that reads but holds no
     * certificate is the TLS layer's to tell (78). */
    const struct { const char *opt, *path; bool dir; } files[] = {
        { "--tls-ca", cfg->tls_ca, false }, { "--tls-ca-dir", cfg->tls_ca_dir, true },
        { "--tls-cert", cfg->tls_cert, false }, { "--tls-key", cfg->tls_key, false },
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char q[72];
        int fd;
        if (!files[k].path)
            continue;
        fd = open(files[k].path, O_RDONLY | O_CLOEXEC | (files[k].dir ? O_DIRECTORY : 0));
        if (fd < 0) {
            snprintf(err, errlen, "cannot read %s '%s': %s", files[k].opt,
                     quote(files[k].path, q, sizeof q), strerror(errno));
            return -1;
        }
        close(fd);
    }
    return 0;
}

/* Endpoints: -r wins over $REDLOCK_URL, which wins over the default. */
static int take_endpoints(struct rr_config *cfg, const struct rr_cli_seen *sn, char *err, size_t errlen)
{
    const char *url;

    if (sn->too_many_redis) {
        snprintf(err, errlen, "too many Redis URLs: at most %d masters", RR_MAX_ENDPOINTS);
        return -1;
    }
    if (sn->n_redis > 0) {
        for (int i = 0; i < sn->n_redis; i++)
            if (add_urls(cfg, sn->redis[i], "--redis", err, errlen) < 0)
                return -1;
    } else if ((url = getenv("REDLOCK_URL")) != NULL && *url) {
        if (add_urls(cfg, url, "$REDLOCK_URL", err, errlen) < 0)
            return -1;
    } else if (add_urls(cfg, RR_DEFAULT_URL, "default", err, errlen) < 0) {
        return -1;
    } else {
        cfg->default_url = true;
    }
    if (check_tls(cfg, err, errlen) < 0)
        return -1;
    if (cfg->limit > 1 && cfg->n_endpoints > 1) {
        snprintf(err, errlen, "--limit %d needs one lock service, not %d -r URLs: use one "
                 "master (or Sentinel/Cluster), or drop --limit", cfg->limit, cfg->n_endpoints);
        return -1;
    }
    return 0;
}

/* ---- credentials ---- */

/* One user/password pair: the file wins over the environment. */
static int resolve_pair(const char *uvar, const char *pvar, const char *pwfile, const char *what,
                        char *user, size_t ulen, bool *has_user,
                        char *pw, size_t plen, bool *has_pw, const char **loose_file,
                        char *err, size_t errlen)
{
    const char *v;

    if ((v = getenv(uvar)) != NULL && *v) {
        if (strlen(v) >= ulen) {
            snprintf(err, errlen, "$%s is longer than %zu bytes", uvar, ulen - 1);
            return -1;
        }
        snprintf(user, ulen, "%s", v);
        *has_user = true;
    }
    if (pwfile) {
        bool loose = false;
        if (rr_secret_read_file(pwfile, what, pw, plen, &loose, err, errlen) < 0)
            return -1;
        *has_pw = true;
        if (loose && !*loose_file)
            *loose_file = pwfile;
    } else if ((v = getenv(pvar)) != NULL && *v) {
        if (strlen(v) >= plen) {
            snprintf(err, errlen, "$%s is longer than %zu bytes", pvar, plen - 1);
            return -1;
        }
        snprintf(pw, plen, "%s", v);
        *has_pw = true;
    }
    return 0;
}

/* The data nodes' credentials from pwfile or $REDLOCK_PASSWORD (user:
 * $REDLOCK_USER), the sentinels' from sentinel_pwfile or
 * $REDLOCK_SENTINEL_PASSWORD (user: $REDLOCK_SENTINEL_USER). Which of
 * these or a URL's own is used for a server is decided in svc_config.c. */
static int take_credentials(struct rr_config *cfg, const struct rr_cli_seen *sn,
                            char *err, size_t errlen)
{
    cfg->password_file = sn->password_file;
    cfg->sentinel_password_file = sn->sentinel_password_file;
    if (resolve_pair("REDLOCK_USER", "REDLOCK_PASSWORD", sn->password_file, "password file",
                     cfg->user, sizeof cfg->user, &cfg->has_user,
                     cfg->password, sizeof cfg->password, &cfg->has_password,
                     &cfg->loose_secret_file, err, errlen) < 0)
        return -1;
    return resolve_pair("REDLOCK_SENTINEL_USER", "REDLOCK_SENTINEL_PASSWORD", sn->sentinel_password_file,
                        "sentinel password file",
                        cfg->sentinel_user, sizeof cfg->sentinel_user, &cfg->has_sentinel_user,
                        cfg->sentinel_password, sizeof cfg->sentinel_password,
                        &cfg->has_sentinel_password, &cfg->loose_secret_file, err, errlen);
}

bool rr_cli_gave_password(const struct rr_config *cfg)
{
    bool any = cfg->has_password;

    for (int i = 0; i < cfg->n_endpoints; i++)
        any |= cfg->endpoints[i].has_password;
    return any;
}

/* ---- after the loop ---- */

/* The mode, and the options that only make sense in one. *modeopt is the
 * mode's option ("--status"), NULL for a run. */
static int check_modes(struct rr_config *cfg, const struct rr_cli_seen *sn, const char **modeopt,
                       char *err, size_t errlen)
{
    bool status = given(sn, RR_GIVEN_STATUS), release = given(sn, RR_GIVEN_RELEASE);
    bool resolve = given(sn, RR_GIVEN_RESOLVE), quiet = given(sn, RR_GIVEN_QUIET);
    bool list = given(sn, RR_GIVEN_LIST);

    *modeopt = NULL;
    if (status + release + resolve + list > 1) {
        const char *a = status ? "--status" : release ? "--release" : "--resolve";
        const char *b = list ? "--list" : resolve ? "--resolve" : "--release";
        snprintf(err, errlen, "%s and %s cannot be used together; give only one", a, b);
        return -1;
    }
    if (list) {
        cfg->mode = RR_MODE_LIST;
        *modeopt = "--list";
    } else if (status) {
        cfg->mode = RR_MODE_STATUS;
        *modeopt = "--status";
    } else if (release) {
        cfg->mode = RR_MODE_RELEASE;
        *modeopt = "--release";
    } else if (resolve) {
        cfg->mode = RR_MODE_RESOLVE;
        *modeopt = "--resolve";
    }
    /* Only a run has a command to hold: an operator mode would ignore it. */
    if (given(sn, RR_GIVEN_CONTAIN) && (status || release || resolve || list)) {
        snprintf(err, errlen, "--contain works only when running a COMMAND, not with %s",
                 *modeopt);
        return -1;
    }
    if ((cfg->force || cfg->release_fence) && !release) {
        snprintf(err, errlen, "%s works only with --release NAME",
                 cfg->force ? "--force" : "--fence");
        return -1;
    }
    if ((cfg->release_slot || cfg->all_slots) && !release) {
        snprintf(err, errlen, "%s works only with --release NAME: redlock-run --release %s NAME",
                 cfg->all_slots ? "--all-slots" : "--slot", cfg->all_slots ? "--all-slots"
                                                                           : "--slot K");
        return -1;
    }
    if (cfg->release_slot && cfg->all_slots) {
        snprintf(err, errlen, "--slot and --all-slots cannot be used together; give only one");
        return -1;
    }
    if (cfg->release_slot > 1 && given(sn, RR_GIVEN_LIMIT) && cfg->release_slot > cfg->limit) {
        snprintf(err, errlen, "--slot %d is beyond --limit %d: a --limit N lock has slots 1 to N",
                 cfg->release_slot, cfg->limit);
        return -1;
    }
    if (cfg->release_fence &&
        (!*cfg->release_fence || strspn(cfg->release_fence, "0123456789") !=
                                     strlen(cfg->release_fence))) {
        snprintf(err, errlen, "--fence must be the holder's fencing token, a number as "
                 "--status shows it (got '%.64s')", cfg->release_fence);
        return -1;
    }
    if (cfg->metrics_file && (status || release || resolve)) {
        snprintf(err, errlen, "--metrics-file works only when running a COMMAND, or with --list "
                 "(every job's state): not with %s", *modeopt);
        return -1;
    }
    if (cfg->metrics_file && list && cfg->json) {
        snprintf(err, errlen, "--list --metrics-file writes the file and prints nothing; give "
                 "--json or --metrics-file");
        return -1;
    }
    if (cfg->json && !status && !list) {
        snprintf(err, errlen, "--json works only with --status or --list");
        return -1;
    }
    if (given(sn, RR_GIVEN_MAX_AGE) && !status) {
        snprintf(err, errlen, "--max-age works only with --status: redlock-run --status --max-age DUR NAME");
        return -1;
    }
    if (given(sn, RR_GIVEN_MAX_AGE) && cfg->json) {
        snprintf(err, errlen, "--max-age prints one check line, not JSON; give --max-age or --json");
        return -1;
    }
    if (given(sn, RR_GIVEN_MAX_AGE) && (cfg->max_age_ms <= 0 || cfg->max_age_ms == RR_INF)) {
        snprintf(err, errlen, "--max-age must be a positive finite duration, like 25h");
        return -1;
    }
    if (given(sn, RR_GIVEN_WARN_HELD) && (!given(sn, RR_GIVEN_MAX_AGE) ||
                                          cfg->warn_held_ms <= 0 || cfg->warn_held_ms == RR_INF)) {
        snprintf(err, errlen, "--warn-held works only with --status --max-age, and takes a "
                 "positive finite duration: redlock-run --status --max-age 25h --warn-held 2h NAME");
        return -1;
    }
    if (quiet && sn->verbose) {
        snprintf(err, errlen, "-q/--quiet and -v/--verbose cannot be used together; give only one");
        return -1;
    }
    cfg->verbosity = quiet ? -1 : sn->verbose > 2 ? 2 : sn->verbose;
    return 0;
}

/* NAME -c CMD: flock's rule, exactly one word after -c, and it is CMD. */
static int take_flock_command(struct rr_config *cfg, int argc, char **argv, int at,
                              char *err, size_t errlen)
{
    const char *flag = argv[at], *eq = strchr(flag, '=');
    int cmd_at = eq ? at : at + 1;

    if (cfg->shell_command) {
        snprintf(err, errlen, "-c/--command is given twice (before and after NAME); give it once");
        return -1;
    }
    if (cmd_at >= argc) {
        snprintf(err, errlen, "-c needs a command string: redlock-run [OPTIONS] NAME -c 'CMD'");
        return -1;
    }
    if (cmd_at + 1 < argc) {
        snprintf(err, errlen, "-c takes exactly one command string, as in flock: quote CMD whole, "
                 "or for arguments write NAME -- sh -c 'CMD' sh ARG1 ARG2");
        return -1;
    }
    cfg->shell_command = eq ? eq + 1 : argv[cmd_at];
    return 0;
}

/* -c CMD, before or after NAME: COMMAND is sh -c CMD, and nothing else. */
static int shell_command(struct rr_config *cfg, const char *modeopt, char *err, size_t errlen)
{
    if (cfg->mode != RR_MODE_RUN) {
        snprintf(err, errlen, "-c/--command works only when running a COMMAND, not with %s",
                 modeopt);
        return -1;
    }
    if (cfg->command_argc > 0) {
        snprintf(err, errlen, "-c CMD and a COMMAND after NAME: give only one "
                 "(-c 'CMD' is the same as NAME -- sh -c 'CMD')");
        return -1;
    }
    if (*cfg->shell_command == '\0') {
        snprintf(err, errlen, "-c needs a command, not an empty string: NAME -c 'CMD'");
        return -1;
    }
    char *sh[] = { (char *)"sh", (char *)"-c", (char *)cfg->shell_command, NULL };
    memcpy(cfg->shell_argv, sh, sizeof sh);
    cfg->command = cfg->shell_argv;
    cfg->command_argc = 3;
    return 0;
}

/* NAME and COMMAND from argv[next]. getopt_long already stepped over a
 * "--" that came before NAME; one right after NAME is skipped here. */
static int take_name_command(struct rr_config *cfg, const struct rr_cli_seen *sn, const char *modeopt,
                             int argc, char **argv, int next, char *err, size_t errlen)
{
    if (cfg->mode == RR_MODE_LIST) {
        /* every job under --prefix: there is no NAME to give */
        if (next < argc) {
            char q[72];
            snprintf(err, errlen, "--list takes no NAME or command (got '%s'): it shows every job "
                     "under --prefix; for one job use --status NAME",
                     quote(argv[next], q, sizeof q));
            return -1;
        }
        if (cfg->shell_command)
            return shell_command(cfg, "--list", err, errlen);
        if (given(sn, RR_GIVEN_ONCE)) {
            snprintf(err, errlen, "--list takes no --once: it shows each job's last run; for one "
                     "ID use --status --once ID NAME");
            return -1;
        }
        return 0;
    }
    if (next >= argc) {
        if (cfg->mode == RR_MODE_RUN)
            snprintf(err, errlen, "missing NAME: " RR_CLI_USAGE_RUN);
        else
            snprintf(err, errlen, "missing NAME: usage: redlock-run %s%s NAME", modeopt,
                     cfg->mode == RR_MODE_STATUS ? " [--json | --max-age DUR] [--once ID]"
                     : cfg->mode == RR_MODE_RESOLVE ? " succeeded|clear|retry [--once ID]" : "");
        return -1;
    }
    cfg->name = argv[next++];
    if (rr_cli_check_name(cfg->name, err, errlen) < 0)
        return -1;
    /* flock(1)'s -c, where flock takes it: right after NAME. */
    if (next < argc && (strcmp(argv[next], "-c") == 0 || strcmp(argv[next], "--command") == 0 ||
                        strncmp(argv[next], "--command=", 10) == 0)) {
        if (take_flock_command(cfg, argc, argv, next, err, errlen) < 0)
            return -1;
        next = argc;
    } else if (next < argc && strcmp(argv[next], "--") == 0) {
        next++;
    } else if (next < argc && argv[next][0] == '-' && argv[next][1] != '\0') {
        /* A command never starts with '-' in practice; this is an option
         * placed after NAME, which would otherwise be run as the command. */
        char q[72];
        size_t n = strcspn(argv[next], "=");
        /* Cut at '=' so a misplaced --redis=URL never shows its password. */
        snprintf(q, sizeof q, "%.*s", (int)(n < 60 ? n : 60), argv[next]);
        snprintf(err, errlen, "option '%s' after NAME: put options before NAME, or write -- before a command that starts with '-'",
                 quote(q, q, sizeof q));
        return -1;
    }
    cfg->command = argv + next;
    cfg->command_argc = argc - next;
    if (cfg->shell_command && shell_command(cfg, modeopt, err, errlen) < 0)
        return -1;
    if (cfg->mode == RR_MODE_RUN && cfg->command_argc == 0) {
        snprintf(err, errlen, "missing COMMAND: " RR_CLI_USAGE_RUN);
        return -1;
    }
    if (cfg->mode != RR_MODE_RUN && cfg->command_argc > 0) {
        snprintf(err, errlen, "%s takes only NAME, not a command", modeopt);
        return -1;
    }
    if (cfg->mode == RR_MODE_RELEASE && given(sn, RR_GIVEN_ONCE)) {
        /* The lock is one per NAME; a --once ID is a record, not a lock. */
        snprintf(err, errlen, "--release takes no --once: it removes the lock of NAME, whatever "
                 "the run; to settle a --once record use --resolve succeeded|clear|retry --once ID");
        return -1;
    }
    return 0;
}

static int check_times(struct rr_config *cfg, const struct rr_cli_seen *sn, char *err, size_t errlen)
{
    char d1[48], d2[48];

    if (given(sn, RR_GIVEN_NONBLOCK) && given(sn, RR_GIVEN_WAIT)) {
        /* flock lets -n win silently; a migrated "-n -w 1m" more likely
         * meant to wait, so neither is guessed. */
        snprintf(err, errlen, "-n/--nonblock and -w/--wait cannot be used together: -n gives up "
                 "at once (the default), -w DUR waits; give only one");
        return -1;
    }

    if (cfg->ttl_ms == RR_INF) {
        snprintf(err, errlen, "--ttl must be finite (got inf): the lock is a lease that must expire if we die");
        return -1;
    }
    if (cfg->ttl_ms < MIN_TTL_MS) {
        snprintf(err, errlen, "--ttl must be at least 10ms (got %s)",
                 rr_duration_format(cfg->ttl_ms, d1, sizeof d1));
        return -1;
    }
    if (!given(sn, RR_GIVEN_RENEW))
        cfg->renew_ms = cfg->ttl_ms / 3;
    if (cfg->renew_ms <= 0 || cfg->renew_ms >= cfg->ttl_ms) {
        snprintf(err, errlen, "--renew must be more than 0 and less than --ttl %s (got %s)",
                 rr_duration_format(cfg->ttl_ms, d1, sizeof d1),
                 rr_duration_format(cfg->renew_ms, d2, sizeof d2));
        return -1;
    }
    if (given(sn, RR_GIVEN_TIMEOUT) && cfg->timeout_ms == 0) {
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
    if (check_positive_finite("state-ttl", cfg->state_ttl_ms, err, errlen) < 0 ||
        check_positive_finite("connect-timeout", cfg->connect_timeout_ms, err, errlen) < 0 ||
        check_positive_finite("redis-timeout", cfg->redis_timeout_ms, err, errlen) < 0)
        return -1;
    return 0;
}

/* --once and --on-stale. */
static int check_once(struct rr_config *cfg, const struct rr_cli_seen *sn, char *err, size_t errlen)
{
    char why[RR_CLI_INNER_ERRLEN];
    bool once = given(sn, RR_GIVEN_ONCE);

    if (once && rr_cli_expand_once(cfg->once_raw, (long long)time(NULL), cfg->once_id,
                                   sizeof cfg->once_id, why, sizeof why) < 0) {
        snprintf(err, errlen, "--once: %s", why);
        return -1;
    }
    if (cfg->on_stale == RR_STALE_DEFAULT)
        cfg->on_stale = once ? RR_STALE_REFUSE : RR_STALE_RUN;
    if ((given(sn, RR_GIVEN_ATTEMPTS) && (!once || cfg->mode != RR_MODE_RUN)) ||
        (cfg->resolve == RR_RESOLVE_RETRY && !once)) {
        snprintf(err, errlen, "%s counts the attempts of a --once ID: add --once ID "
                 "(--status NAME lists them)", cfg->resolve ? "--resolve retry" : "--attempts");
        return -1;
    }
    if (given(sn, RR_GIVEN_LIMIT) && once && cfg->mode == RR_MODE_RUN) {
        /* One success per ID; N holders at once would run it N times. */
        snprintf(err, errlen, "--limit cannot be used with --once: a --once ID runs at most "
                 "once, so drop --limit (or --once to allow N runs at a time)");
        return -1;
    }
    return 0;
}

int rr_cli_check(struct rr_config *cfg, const struct rr_cli_seen *sn, int argc, char **argv,
                 int next, char *err, size_t errlen)
{
    const char *modeopt;

    if (check_modes(cfg, sn, &modeopt, err, errlen) < 0 ||
        take_name_command(cfg, sn, modeopt, argc, argv, next, err, errlen) < 0 ||
        check_times(cfg, sn, err, errlen) < 0 ||
        check_prefix(cfg->prefix, err, errlen) < 0 ||
        check_once(cfg, sn, err, errlen) < 0 ||
        take_endpoints(cfg, sn, err, errlen) < 0 ||
        take_credentials(cfg, sn, err, errlen) < 0)
        return -1;
    return 0;
}
