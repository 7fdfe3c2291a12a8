/* cli.c — the command line: the option table and the getopt_long loop.
 *
 * Parsing happens in two steps, as in flock(1): the loop only records what
 * it saw, as the table below says, and every conflict is judged after the
 * loop (cli_check.c), so the verdict does not depend on the order of the
 * options. Nothing here prints or exits; each error is one line in the
 * caller's buffer (exit status 64). */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sha256.h"
#include "cli_impl.h"
#include "duration.h"

#define CFG(f) .where = RR_CLI_IN_CONFIG, .field = offsetof(struct rr_config, f)
#define SEEN(f) .where = RR_CLI_IN_SEEN, .field = offsetof(struct rr_cli_seen, f)

/* Every option, and where its value goes. The long names are the contract
 * (DESIGN.md); --help (cli_help.c) lists each row, which check_cli.c tests. */
const struct rr_cli_opt rr_cli_opts[] = {
    { .name = "redis", .letter = 'r', .kind = RR_CLI_URL },
    { .name = "ttl", .letter = 't', .kind = RR_CLI_DURATION, CFG(ttl_ms) },
    { .name = "renew", .kind = RR_CLI_DURATION, CFG(renew_ms), .mark = RR_GIVEN_RENEW },
    { .name = "wait", .letter = 'w', .kind = RR_CLI_DURATION, CFG(wait_ms), .mark = RR_GIVEN_WAIT },
    { .name = "conflict-exit-code", .letter = 'E', .kind = RR_CLI_NUMBER, CFG(conflict_exit_code), .lo = 0, .hi = 255, .noun = "" },
    { .name = "max-runtime", .kind = RR_CLI_DURATION, CFG(timeout_ms), .mark = RR_GIVEN_TIMEOUT },
    /* Not an option: flock(1) and consul use it for the wait. */
    { .name = "timeout", .kind = RR_CLI_REFUSED,
      .refusal = "--timeout is not an option: to wait for the lock use --wait DUR, "
                 "to limit the run use --max-runtime DUR" },
    /* flock(1)'s "do not wait" is already what we do, so it is taken as it
     * is; next to -w it is refused (cli_check.c), so "-n -w 1m" never means
     * whichever of the two came last. */
    { .name = "nonblock", .letter = 'n', .kind = RR_CLI_MARK, .mark = RR_GIVEN_NONBLOCK },
    /* flock(1)'s -c: COMMAND is sh -c CMD. flock takes it only after the
     * file (NAME -c CMD, cli_check.c); before NAME it is an option. */
    { .name = "command", .letter = 'c', .kind = RR_CLI_STRING, CFG(shell_command) },
    { .name = "kill-after", .kind = RR_CLI_DURATION, CFG(kill_after_ms) },
    /* timeout(1)'s stop signal: the lease's end is enforced by the guard
     * process as well as here, and both send TERM, then KILL. */
    { .name = "signal", .letter = 's', .kind = RR_CLI_REFUSED,
      .refusal = "-s/--signal is not an option: COMMAND is always stopped with SIGTERM, then "
                 "SIGKILL after --kill-after DUR; trap TERM in COMMAND to stop another way "
                 "(flock's -s: there are no shared locks)" },
    { .name = "once", .kind = RR_CLI_STRING, CFG(once_raw), .mark = RR_GIVEN_ONCE },
    { .name = "on-stale", .kind = RR_CLI_CHOICE, CFG(on_stale),
      .choices = { { "run", RR_STALE_RUN }, { "refuse", RR_STALE_REFUSE } } },
    { .name = "attempts", .kind = RR_CLI_NUMBER, CFG(attempts), .mark = RR_GIVEN_ATTEMPTS,
      .lo = 1, .hi = 1000, .noun = " of attempts" },
    { .name = "min-hold", .kind = RR_CLI_DURATION, CFG(min_hold_ms) },
    { .name = "limit", .kind = RR_CLI_NUMBER, CFG(limit), .mark = RR_GIVEN_LIMIT,
      .lo = 1, .hi = RR_LIMIT_MAX, .noun = " of holders" },
    { .name = "state-ttl", .kind = RR_CLI_DURATION, CFG(state_ttl_ms) },
    { .name = "prefix", .kind = RR_CLI_STRING, CFG(prefix) },
    { .name = "connect-timeout", .kind = RR_CLI_DURATION, CFG(connect_timeout_ms) },
    { .name = "redis-timeout", .kind = RR_CLI_DURATION, CFG(redis_timeout_ms) },
    { .name = "password-file", .kind = RR_CLI_STRING, SEEN(password_file) },
    { .name = "sentinel-password-file", .kind = RR_CLI_STRING, SEEN(sentinel_password_file) },
    { .name = "sync-replicas", .kind = RR_CLI_NUMBER, CFG(sync_replicas), .lo = 0, .hi = 100, .noun = " of replicas" },
    { .name = "tls-ca", .kind = RR_CLI_STRING, CFG(tls_ca) },
    { .name = "tls-ca-dir", .kind = RR_CLI_STRING, CFG(tls_ca_dir) },
    { .name = "tls-cert", .kind = RR_CLI_STRING, CFG(tls_cert) },
    { .name = "tls-key", .kind = RR_CLI_STRING, CFG(tls_key) },
    { .name = "tls-sni", .kind = RR_CLI_STRING, CFG(tls_sni) },
    { .name = "tls-insecure", .kind = RR_CLI_FLAG, CFG(tls_insecure) },
    { .name = "quiet", .letter = 'q', .kind = RR_CLI_MARK, .mark = RR_GIVEN_QUIET },
    { .name = "verbose", .letter = 'v', .kind = RR_CLI_COUNT, SEEN(verbose) },
    { .name = "log-format", .kind = RR_CLI_CHOICE, CFG(log_format),
      .choices = { { "text", RR_LOGFMT_TEXT }, { "json", RR_LOGFMT_JSON } } },
    { .name = "syslog", .kind = RR_CLI_FLAG, CFG(use_syslog) },
    { .name = "metrics-file", .kind = RR_CLI_FILE, CFG(metrics_file) },
    { .name = "foreground", .kind = RR_CLI_FLAG, CFG(foreground) },
    { .name = "contain", .kind = RR_CLI_CHOICE, CFG(contain), .mark = RR_GIVEN_CONTAIN,
      .choices = { { "auto", RR_CONTAIN_AUTO }, { "cgroup", RR_CONTAIN_CGROUP },
                   { "tree", RR_CONTAIN_TREE } } },
    { .name = "status", .kind = RR_CLI_MARK, .mark = RR_GIVEN_STATUS },
    { .name = "json", .kind = RR_CLI_FLAG, CFG(json) },
    { .name = "max-age", .kind = RR_CLI_DURATION, CFG(max_age_ms), .mark = RR_GIVEN_MAX_AGE },
    { .name = "warn-held", .kind = RR_CLI_DURATION, CFG(warn_held_ms), .mark = RR_GIVEN_WARN_HELD },
    { .name = "release", .kind = RR_CLI_MARK, .mark = RR_GIVEN_RELEASE },
    { .name = "list", .kind = RR_CLI_MARK, .mark = RR_GIVEN_LIST },
    { .name = "force", .kind = RR_CLI_FLAG, CFG(force) },
    { .name = "fence", .kind = RR_CLI_STRING, CFG(release_fence) },
    { .name = "slot", .kind = RR_CLI_NUMBER, CFG(release_slot), .lo = 1, .hi = RR_LIMIT_MAX,
      .noun = "" },
    { .name = "all-slots", .kind = RR_CLI_FLAG, CFG(all_slots) },
    { .name = "resolve", .kind = RR_CLI_CHOICE, CFG(resolve), .mark = RR_GIVEN_RESOLVE,
      .choices = { { "succeeded", RR_RESOLVE_SUCCEEDED }, { "clear", RR_RESOLVE_CLEAR },
                   { "retry", RR_RESOLVE_RETRY } } },
    { .name = "help", .letter = 'h', .kind = RR_CLI_MARK, .mark = RR_GIVEN_HELP },
    { .name = "version", .letter = 'V', .kind = RR_CLI_MARK, .mark = RR_GIVEN_VERSION },
};

#define N_OPTS (sizeof rr_cli_opts / sizeof rr_cli_opts[0])
const size_t rr_cli_n_opts = N_OPTS;

/* Enum fields are written through an int. */
_Static_assert(sizeof(enum rr_on_stale) == sizeof(int) && sizeof(enum rr_log_format) == sizeof(int) &&
               sizeof(enum rr_resolve) == sizeof(int) && sizeof(enum rr_contain) == sizeof(int),
               "enum fields are int-sized");

bool rr_cli_takes_value(enum rr_cli_kind kind)
{
    return kind != RR_CLI_MARK && kind != RR_CLI_FLAG && kind != RR_CLI_COUNT &&
           kind != RR_CLI_REFUSED_BARE;
}

/* getopt_long's val for row i: its letter, or a number no letter has. */
static int val_of(size_t i)
{
    return rr_cli_opts[i].letter ? rr_cli_opts[i].letter : 256 + (int)i;
}

static const struct rr_cli_opt *find_by_val(int val)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (val_of(i) == val)
            return &rr_cli_opts[i];
    return NULL;
}

/* Find a long option as getopt_long does: an exact name, or a prefix that
 * matches exactly one option. n is the length of name (before any '='). */
static const struct rr_cli_opt *find_long(const char *name, size_t n)
{
    const struct rr_cli_opt *hit = NULL;

    for (size_t i = 0; i < N_OPTS; i++) {
        const struct rr_cli_opt *o = &rr_cli_opts[i];
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

/* The table as getopt_long wants it. The leading '+' in optstring stops at
 * NAME, so the command's own options are never taken for ours; the ':'
 * makes a missing value come back as ':' rather than being printed by
 * getopt. */
static void getopt_tables(struct option *longopts, char *optstring)
{
    size_t i, n = 0;

    optstring[n++] = '+';
    optstring[n++] = ':';
    for (i = 0; i < N_OPTS; i++) {
        const struct rr_cli_opt *o = &rr_cli_opts[i];
        bool value = rr_cli_takes_value(o->kind);

        longopts[i] = (struct option){ o->name, value ? required_argument : no_argument, NULL, val_of(i) };
        if (o->letter) {
            optstring[n++] = o->letter;
            if (value)
                optstring[n++] = ':';
        }
    }
    longopts[i] = (struct option){ NULL, 0, NULL, 0 };
    optstring[n] = '\0';
}

/* Record one option as its row says. Returns 0, or -1 with err filled. */
static int take_option(const struct rr_cli_opt *o, const char *arg, struct rr_config *cfg,
                       struct rr_cli_seen *sn, char *err, size_t errlen)
{
    char *at = (o->where == RR_CLI_IN_SEEN ? (char *)sn : (char *)cfg) + o->field;
    char q[72], why[RR_CLI_INNER_ERRLEN];
    long v;

    sn->given |= o->mark;
    switch (o->kind) {
    case RR_CLI_MARK:
        return 0;
    case RR_CLI_FLAG:
        *(bool *)at = true;
        return 0;
    case RR_CLI_COUNT:
        (*(int *)at)++;
        return 0;
    case RR_CLI_DURATION:
        if (rr_duration_parse(arg, (int64_t *)at, why, sizeof why) < 0) {
            snprintf(err, errlen, "--%s: %s", o->name, why);
            return -1;
        }
        return 0;
    case RR_CLI_FILE:
        if (*arg == '\0') {
            snprintf(err, errlen, "--%s needs a file name", o->name);
            return -1;
        }
        /* fall through */
    case RR_CLI_STRING:
        *(const char **)at = arg;
        return 0;
    case RR_CLI_NUMBER:
        if (rr_cli_number(o->name, o->noun, arg, o->lo, o->hi, &v, err, errlen) < 0)
            return -1;
        *(int *)at = (int)v;
        return 0;
    case RR_CLI_CHOICE:
        for (size_t i = 0; i < 4 && o->choices[i].name; i++) {
            if (strcmp(arg, o->choices[i].name) == 0) {
                *(int *)at = o->choices[i].value;
                return 0;
            }
        }
        rr_quote(arg, SIZE_MAX, RR_QUOTE_MAX, q, sizeof q);
        if (o->choices[3].name)
            snprintf(err, errlen, "--%s must be %s, %s, %s or %s (got '%s')", o->name,
                     o->choices[0].name, o->choices[1].name, o->choices[2].name,
                     o->choices[3].name, q);
        else if (o->choices[2].name)
            snprintf(err, errlen, "--%s must be %s, %s or %s (got '%s')", o->name,
                     o->choices[0].name, o->choices[1].name, o->choices[2].name, q);
        else
            snprintf(err, errlen, "--%s must be %s or %s (got '%s')", o->name,
                     o->choices[0].name, o->choices[1].name, q);
        return -1;
    case RR_CLI_URL:
        if (sn->n_redis >= (int)(sizeof sn->redis / sizeof sn->redis[0])) {
            sn->too_many_redis = true;
            return 0;
        }
        sn->redis[sn->n_redis++] = arg;
        return 0;
    case RR_CLI_REFUSED:
    case RR_CLI_REFUSED_BARE:
        snprintf(err, errlen, "%s", o->refusal);
        return -1;
    }
    snprintf(err, errlen, "internal error: unhandled option --%s", o->name);
    return -1;
}

/* Short options of timeout(1) and flock(1) that have no row: what to write
 * instead. */
static const struct {
    char letter;
    const char *hint;
} habits[] = {
    /* timeout(1)'s -k; ours has no short form, as -k could be misread as
     * flock's or curl's. */
    { 'k', "the grace from SIGTERM to SIGKILL is --kill-after DUR (timeout's -k)" },
    { 'x', "the lock is always exclusive (flock's -x, -e): leave it out" },
    { 'e', "the lock is always exclusive (flock's -x, -e): leave it out" },
    { 'o', "not needed: COMMAND never holds the lock (flock's -o); leave it out" },
    { 'u', "there is no descriptor to unlock (flock's -u): the lock is released when "
           "COMMAND ends, or by hand with --release NAME" },
    { 'F', "COMMAND always runs as a child (flock's -F): leave it out" },
};

/* Explain a '?' or ':' from getopt_long in one line. The offending word is
 * cut at '=' because a mistyped "--redis-url=redis://:secret@host" must not
 * echo the secret. */
static void bad_option(int c, int argc, char **argv, char *err, size_t errlen)
{
    const struct rr_cli_opt *o = optopt ? find_by_val(optopt) : NULL;
    const char *word = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "";
    char q[72];
    size_t n;

    if (o && (o->kind == RR_CLI_REFUSED || o->kind == RR_CLI_REFUSED_BARE)) {
        snprintf(err, errlen, "%s", o->refusal);   /* "--timeout" alone, "--nonblock=1" */
        return;
    }
    if (c == ':') {
        if (o)
            snprintf(err, errlen, "option --%s needs a value", o->name);
        else
            snprintf(err, errlen, "option -%c needs a value", optopt);
        return;
    }
    if (o && !rr_cli_takes_value(o->kind) && strncmp(word, "--", 2) == 0 && strchr(word, '=')) {
        snprintf(err, errlen, "option --%s does not take a value", o->name);
        return;
    }
    for (size_t i = 0; i < sizeof habits / sizeof habits[0]; i++) {
        if (optopt == habits[i].letter) {
            snprintf(err, errlen, "unknown option '-%c': %s", optopt, habits[i].hint);
            return;
        }
    }
    if (optopt > 0x20 && optopt < 0x7f && !o) {
        snprintf(err, errlen, "unknown option '-%c'", optopt);
        return;
    }
    n = strcspn(word, "=");
    snprintf(q, sizeof q, "%.*s", (int)(n < 60 ? n : 60), word);
    rr_quote(q, SIZE_MAX, RR_QUOTE_MAX, q, sizeof q);
    snprintf(err, errlen, "unknown or ambiguous option '%s'", q);
}

int rr_cli_parse(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    return rr_cli_parse_zeroed(argc, argv, cfg, err, errlen);
}

int rr_cli_parse_zeroed(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen)
{
    struct option longopts[N_OPTS + 1];
    char optstring[2 + 2 * N_OPTS + 1];
    struct rr_cli_seen sn;
    char first[RR_ERRLEN] = "", later[RR_ERRLEN];
    int c, saved_opterr = opterr;

    rr_cli_defaults(cfg);
    memset(&sn, 0, sizeof sn);
    if (errlen > 0)
        err[0] = '\0';
    getopt_tables(longopts, optstring);

    /* getopt keeps its position in globals; 0 makes glibc start afresh, so
     * the parser can run many times in one process (the unit tests). */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        /* Keep scanning after an error: --help or --version anywhere wins,
         * but otherwise the first error is the one reported. */
        const struct rr_cli_opt *o = c == '?' || c == ':' ? NULL : find_by_val(c);

        if (!o) {
            if (!first[0])
                bad_option(c, argc, argv, first, sizeof first);
        } else if (first[0]) {
            take_option(o, optarg, cfg, &sn, later, sizeof later);
        } else {
            take_option(o, optarg, cfg, &sn, first, sizeof first);
        }
    }
    opterr = saved_opterr;

    if (sn.given & (RR_GIVEN_HELP | RR_GIVEN_VERSION)) {
        cfg->mode = sn.given & RR_GIVEN_HELP ? RR_MODE_HELP : RR_MODE_VERSION;
        cfg->on_stale = cfg->once_raw ? RR_STALE_REFUSE : RR_STALE_RUN;
        if (errlen > 0)
            err[0] = '\0';
        return 0;
    }
    if (first[0]) {
        snprintf(err, errlen, "%s", first);
        goto fail;
    }
    if (rr_cli_check(cfg, &sn, argc, argv, optind, err, errlen) < 0)
        goto fail;
    if (cfg->mode == RR_MODE_RUN)
        rr_command_fingerprint(cfg->command, cfg->command_argc, cfg->command_fp);
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
        n = rr_cli_url_len(v);
        saved = v[n];
        v[n] = '\0';
        rr_url_scrub(v);
        v[n] = saved;
        if (saved == '\0')
            return;
        v += n + 1;
    }
}

void rr_cli_scrub_env(void)
{
    extern char **environ;
    static const char *const secret[] = { "REDLOCK_PASSWORD=", "REDLOCK_SENTINEL_PASSWORD=",
                                          "REDISCLI_AUTH=" };

    for (char **e = environ; e && *e; e++) {
        for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
            size_t n = strlen(secret[i]);
            if (strncmp(*e, secret[i], n) == 0)
                explicit_bzero(*e + n, strlen(*e + n));
        }
        if (strncmp(*e, "REDLOCK_URL=", 12) == 0)
            scrub_value(*e + 12);
    }
}

static const struct rr_cli_opt *find_letter(char letter)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (letter && rr_cli_opts[i].letter == letter)
            return &rr_cli_opts[i];
    return NULL;
}

bool rr_cli_wants_check(int argc, const char *const *argv)
{
    bool status = false, max_age = false;

    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        status = status || strcmp(argv[i], "--status") == 0;
        max_age = max_age || strncmp(argv[i], "--max-age", 9) == 0;
    }
    return status && max_age;
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
            const struct rr_cli_opt *o = find_long(a + 2, n);
            if (o == NULL || !rr_cli_takes_value(o->kind))
                continue;
            if (a[2 + n] == '=') {
                if (o->kind == RR_CLI_URL)
                    scrub_value(a + 3 + n);
            } else if (i + 1 < argc) {
                i++;
                if (o->kind == RR_CLI_URL && argv[i])
                    scrub_value(argv[i]);
            }
            continue;
        }
        /* A cluster of short options: the first one that takes a value
         * takes the rest of the word, or the next word. */
        for (a++; *a; a++) {
            const struct rr_cli_opt *o = find_letter(*a);
            if (o == NULL || !rr_cli_takes_value(o->kind))
                continue;
            if (a[1]) {
                if (o->kind == RR_CLI_URL)
                    scrub_value(a + 1);
            } else if (i + 1 < argc) {
                i++;
                if (o->kind == RR_CLI_URL && argv[i])
                    scrub_value(argv[i]);
            }
            break;
        }
    }
}
