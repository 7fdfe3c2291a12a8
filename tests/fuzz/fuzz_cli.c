/* fuzz_cli.c — libFuzzer target for rr_cli_parse and rr_cli_scrub_argv.
 *
 * The input is split on NUL bytes into arguments, after argv[0] =
 * "redlock-run"; each argument is its own allocation so ASan sees any read
 * past one. Invariants:
 *   - on failure err is one non-empty line, and the config holds no
 *     endpoint and no password (cli.c promises to wipe them);
 *   - on success in a run or operator mode: 1..15 endpoints, each valid;
 *     10ms <= ttl < inf; 0 < renew < ttl; a valid NAME; the command is a
 *     NULL-terminated tail of argv (non-empty exactly in run mode); the
 *     other durations and settings are in their documented ranges;
 *   - rr_cli_scrub_argv stars the password of every URL the parser took one
 *     from: there are at least as many starred runs as endpoints with a
 *     password (checked only when no argument already contains a '*');
 *   - neither function writes outside argv's strings or changes argv.
 *
 * cli_check.c reads the environment and --password-file. $REDLOCK_* are unset
 * once at start. A password file is read with fopen and fgets; inputs that
 * name anything under /dev, /proc or /sys are skipped, because
 * /dev/stdin, /dev/tty or /proc/self/fd/1 could block the fuzzer forever. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "duration.h"
#include "rr.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_cli: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    unsetenv("REDLOCK_URL");
    unsetenv("REDLOCK_USER");
    unsetenv("REDLOCK_PASSWORD");
    if (!freopen("/dev/null", "r", stdin))
        abort();
    return 0;
}

static void check_line(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);

    if (n == cap)
        FAIL("err is not NUL-terminated");
    if (n == 0)
        FAIL("err is empty");
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r')
            FAIL("err is more than one line: %s", s);
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *u = p;

    for (size_t i = 0; i < n; i++)
        if (u[i])
            return false;
    return true;
}

static bool positive_finite(int64_t ms)
{
    return ms > 0 && ms != RR_INF;
}

static void check_config(const struct rr_config *cfg, int argc, char **argv)
{
    char why[RR_ERRLEN];

    if (cfg->mode == RR_MODE_HELP || cfg->mode == RR_MODE_VERSION)
        return;     /* --help and --version win before any validation */
    if (cfg->n_endpoints < 1 || cfg->n_endpoints > RR_MAX_ENDPOINTS)
        FAIL("n_endpoints = %d", cfg->n_endpoints);
    bool any_tls = false;
    for (int i = 0; i < cfg->n_endpoints; i++) {
        const struct rr_endpoint *ep = &cfg->endpoints[i];
        if (ep->transport == RR_TRANSPORT_TCP && (ep->port < 1 || ep->port > 65535))
            FAIL("endpoint %d: port %d", i, ep->port);
        if (ep->kind != RR_EP_DIRECT && (ep->n_nodes < 1 || ep->n_nodes > RR_MAX_NODES))
            FAIL("endpoint %d: %d nodes", i, ep->n_nodes);
        if (ep->kind == RR_EP_SENTINEL && ep->master[0] == '\0')
            FAIL("endpoint %d: sentinel URL without a master name", i);
        if (ep->tls && ep->transport != RR_TRANSPORT_TCP)
            FAIL("endpoint %d: TLS on a unix socket", i);
        any_tls |= ep->tls;
        if (ep->display[0] == '\0')
            FAIL("endpoint %d: empty display", i);
    }
    if (!any_tls && (cfg->tls_ca || cfg->tls_ca_dir || cfg->tls_cert || cfg->tls_key ||
                     cfg->tls_sni || cfg->tls_insecure))
        FAIL("a --tls-* option accepted without a rediss:// URL");
    if (!cfg->tls_cert != !cfg->tls_key)
        FAIL("--tls-cert and --tls-key accepted one without the other");
    if (cfg->ttl_ms < 10 || cfg->ttl_ms == RR_INF)
        FAIL("ttl_ms = %lld", (long long)cfg->ttl_ms);
    if (cfg->renew_ms <= 0 || cfg->renew_ms >= cfg->ttl_ms)
        FAIL("renew_ms = %lld, ttl_ms = %lld", (long long)cfg->renew_ms, (long long)cfg->ttl_ms);
    if (cfg->wait_ms < 0 || cfg->timeout_ms < 0 || cfg->timeout_ms == RR_INF ||
        cfg->kill_after_ms < 0 || cfg->kill_after_ms == RR_INF ||
        cfg->min_hold_ms < 0 || cfg->min_hold_ms == RR_INF)
        FAIL("a duration is out of range");
    if (!positive_finite(cfg->state_ttl_ms) || !positive_finite(cfg->connect_timeout_ms) ||
        !positive_finite(cfg->redis_timeout_ms))
        FAIL("a timeout is not positive and finite");
    if (cfg->conflict_exit_code < 0 || cfg->conflict_exit_code > 255)
        FAIL("conflict_exit_code = %d", cfg->conflict_exit_code);
    if (cfg->verbosity < -1 || cfg->verbosity > 2)
        FAIL("verbosity = %d", cfg->verbosity);
    if (cfg->on_stale == RR_STALE_DEFAULT)
        FAIL("on_stale left at DEFAULT");
    if (cfg->name == NULL || rr_cli_check_name(cfg->name, why, sizeof why) < 0)
        FAIL("an invalid NAME was accepted");
    if (cfg->prefix == NULL || strlen(cfg->prefix) > 64 || strpbrk(cfg->prefix, "{} "))
        FAIL("an invalid prefix was accepted");
    if (cfg->once_raw && cfg->once_id[0] == '\0')
        FAIL("--once given but the ID is empty");
    if (strnlen(cfg->once_id, sizeof cfg->once_id) == sizeof cfg->once_id)
        FAIL("once_id is not NUL-terminated");
    if (cfg->command == NULL || cfg->command < argv || cfg->command > argv + argc ||
        cfg->command + cfg->command_argc != argv + argc || cfg->command[cfg->command_argc] != NULL)
        FAIL("command is not a NULL-terminated tail of argv");
    if ((cfg->mode == RR_MODE_RUN) != (cfg->command_argc > 0))
        FAIL("mode %d with %d command words", (int)cfg->mode, cfg->command_argc);
    if (cfg->has_password && strnlen(cfg->password, sizeof cfg->password) == sizeof cfg->password)
        FAIL("password is not NUL-terminated");
}

/* Runs of bytes that rr_cli_scrub_argv turned into '*'. */
static int starred_runs(int argc, char **before, char **after)
{
    int runs = 0;

    for (int i = 0; i < argc; i++) {
        bool in = false;
        for (size_t j = 0; before[i][j]; j++) {
            bool starred = after[i][j] == '*' && before[i][j] != '*';
            if (starred && !in)
                runs++;
            in = starred;
        }
    }
    return runs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rr_config cfg;
    char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 2], *scrub[MAX_ARGS + 2];
    char err[RR_ERRLEN];
    size_t start = 0;
    int argc = 1, r;
    bool has_star = false;

    if (size > 4096)
        return 0;
    for (size_t i = 0; i + 5 <= size; i++)
        if (memcmp(data + i, "/dev/", 5) == 0 || memcmp(data + i, "/proc", 5) == 0 ||
            memcmp(data + i, "/sys/", 5) == 0)
            return 0;

    argv[0] = strdup("redlock-run");
    for (size_t i = 0; i <= size && argc <= MAX_ARGS; i++) {
        if (i == size || data[i] == '\0') {
            if (i == size && start == size)
                break;      /* a trailing NUL ends the last word; no empty word after it */
            argv[argc] = malloc(i - start + 1);
            if (!argv[argc])
                abort();
            memcpy(argv[argc], data + start, i - start);
            argv[argc][i - start] = '\0';
            argc++;
            start = i + 1;
        }
    }
    argv[argc] = NULL;
    for (int i = 0; i <= argc; i++) {
        orig[i] = argv[i] ? strdup(argv[i]) : NULL;
        if (argv[i] && strchr(argv[i], '*'))
            has_star = true;
    }

    memset(err, 0x55, sizeof err);
    r = rr_cli_parse(argc, argv, &cfg, err, sizeof err);
    for (int i = 0; i <= argc; i++)
        if ((argv[i] == NULL) != (orig[i] == NULL) || (argv[i] && strcmp(argv[i], orig[i]) != 0))
            FAIL("rr_cli_parse changed argv[%d]", i);
    if (r == 0) {
        check_config(&cfg, argc, argv);
    } else if (r == -1) {
        check_line(err, sizeof err);
        if (cfg.n_endpoints != 0 || cfg.has_password ||
            !all_zero(cfg.password, sizeof cfg.password) ||
            !all_zero(cfg.endpoints, sizeof cfg.endpoints))
            FAIL("a failed parse left a password or an endpoint behind");
    } else {
        FAIL("rr_cli_parse returned %d", r);
    }

    /* Scrub a writable copy, as main() does with the real argv. */
    for (int i = 0; i <= argc; i++)
        scrub[i] = orig[i] ? strdup(orig[i]) : NULL;
    rr_cli_scrub_argv(argc, scrub);
    for (int i = 0; i < argc; i++) {
        if (strlen(scrub[i]) != strlen(orig[i]))
            FAIL("rr_cli_scrub_argv changed the length of argv[%d]", i);
        for (size_t j = 0; orig[i][j]; j++)
            if (scrub[i][j] != orig[i][j] && scrub[i][j] != '*')
                FAIL("rr_cli_scrub_argv wrote '%c' into argv[%d]", scrub[i][j], i);
    }
    if (r == 0 && !has_star && cfg.mode != RR_MODE_HELP && cfg.mode != RR_MODE_VERSION) {
        int with_pw = 0;
        for (int i = 0; i < cfg.n_endpoints; i++)
            with_pw += cfg.endpoints[i].has_password;
        if (starred_runs(argc, orig, scrub) < with_pw)
            FAIL("%d URL password(s) parsed but only %d hidden by rr_cli_scrub_argv",
                 with_pw, starred_runs(argc, orig, scrub));
    }

    for (int i = 0; i <= argc; i++) {
        free(argv[i]);
        free(orig[i]);
        free(scrub[i]);
    }
    return 0;
}
