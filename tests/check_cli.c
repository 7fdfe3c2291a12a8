/* check_cli.c — unit tests for the command line: rr_cli_parse, its
 * validation, rr_cli_scrub_argv, rr_cli_expand_once, rr_cli_check_name and
 * the --help text. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_impl.h"
#include "rr.h"
#include "unit.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAXARGS 64
#define SECRET "S3cr3t"

/* argv is built in writable static storage, as the kernel gives it to main,
 * so scrubbing can be tested and nothing needs freeing. */
static char argbuf[MAXARGS][2048];
static char *argvec[MAXARGS + 1];

static int make_argv(const char *const *args)
{
    int argc = 0;

    snprintf(argbuf[argc], sizeof argbuf[0], "redlock-run");
    argvec[argc] = argbuf[argc];
    argc++;
    for (; *args; args++, argc++) {
        ck_assert_int_lt(argc, MAXARGS);
        snprintf(argbuf[argc], sizeof argbuf[0], "%s", *args);
        argvec[argc] = argbuf[argc];
    }
    argvec[argc] = NULL;
    return argc;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static struct rr_config cfg;
static char err[RR_ERRLEN];

static int parse_args(const char *const *args)
{
    int argc = make_argv(args);

    memset(err, 0, sizeof err);
    return rr_cli_parse(argc, argvec, &cfg, err, sizeof err);
}

#define PARSE(...) parse_args(ARGS(__VA_ARGS__))
#define PARSE_OK(...)                                                          \
    ck_assert_msg(parse_args(ARGS(__VA_ARGS__)) == 0, "rejected: %s", err)

static void assert_clean_error(const char *e)
{
    ck_assert_msg(e[0] != '\0', "empty error message");
    ck_assert_msg(strchr(e, '\n') == NULL, "error has a newline: %s", e);
    for (const char *p = e; *p; p++)
        ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
                      "error has a non-printable byte: %s", e);
    ck_assert_msg(e[strlen(e) - 1] != '.', "error ends with a full stop: %s", e);
    ck_assert_msg(strstr(e, SECRET) == NULL && strstr(e, "3cr3") == NULL,
                  "error shows a password: %s", e);
}

static void clean_env(void)
{
    unsetenv("REDLOCK_URL");
    unsetenv("REDLOCK_PASSWORD");
    unsetenv("REDLOCK_USER");
}

/* A temporary file holding text; the name is in static storage. */
static const char *temp_file(const char *text)
{
    static char path[64];
    FILE *f;
    int fd;

    snprintf(path, sizeof path, "/tmp/check_cli_XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* ---- bad command lines ------------------------------------------------ */

#define LONGNAME                                                                \
    "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn" \
    "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
#define URLS15                                                                  \
    "redis://h1,redis://h2,redis://h3,redis://h4,redis://h5,redis://h6,redis://h7,redis://h8," \
    "redis://h9,redis://h10,redis://h11,redis://h12,redis://h13,redis://h14,redis://h15"

struct bad {
    const char *const *args;
    const char *want;          /* substring of the message */
};

static const struct bad bads[] = {
    { ARGS(NULL), "missing NAME: usage: redlock-run [OPTIONS] NAME [--] COMMAND [ARG...]" },
    { ARGS("-q"), "missing NAME" },
    { ARGS("--"), "missing NAME" },
    { ARGS("job"), "missing COMMAND: usage: redlock-run [OPTIONS] NAME [--] COMMAND [ARG...]" },
    { ARGS("job", "--"), "missing COMMAND" },
    { ARGS("-t", "5s", "--", "job"), "missing COMMAND" },
    { ARGS("--status"), "missing NAME: usage: redlock-run --status" },
    { ARGS("--release"), "missing NAME: usage: redlock-run --release" },
    { ARGS("--status", "job", "cmd"), "--status takes only NAME, not a command" },
    { ARGS("--release", "job", "--", "x"), "--release takes only NAME, not a command" },
    { ARGS("--resolve", "clear", "job", "x"), "--resolve takes only NAME, not a command" },
    { ARGS("--status", "--release", "job"), "--status and --release cannot be used together" },
    { ARGS("--resolve", "clear", "--status", "job"), "--status and --resolve cannot be used together" },
    { ARGS("--release", "--resolve", "succeeded", "job"), "--release and --resolve cannot be used together" },
    { ARGS("--resolve", "maybe", "job"), "--resolve must be succeeded, clear or retry (got 'maybe')" },
    { ARGS("--json", "job", "true"), "--json works only with --status" },
    { ARGS("--json", "--release", "job"), "--json works only with --status" },
    { ARGS("-q", "-v", "job", "true"), "-q/--quiet and -v/--verbose cannot be used together" },
    { ARGS("-vq", "job", "true"), "cannot be used together" },
    { ARGS("-E", "256", "job", "true"), "--conflict-exit-code must be a number from 0 to 255 (got '256')" },
    { ARGS("-E", "-1", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("-E", "abc", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("-E", "", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("-E", "7x", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("-E", "99999999999999999999", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("--conflict-exit-code=+5", "job", "true"), "--conflict-exit-code must be" },
    { ARGS("-t", "0", "job", "true"), "--ttl must be at least 10ms (got 0s)" },
    { ARGS("-t", "9ms", "job", "true"), "--ttl must be at least 10ms" },
    { ARGS("-t", "inf", "job", "true"), "--ttl must be finite (got inf)" },
    { ARGS("-t", "abc", "job", "true"), "--ttl: invalid duration 'abc'" },
    { ARGS("--ttl=-5s", "job", "true"), "--ttl: invalid duration '-5s': must not be negative" },
    { ARGS("-t", "10s", "--renew", "10s", "job", "true"), "--renew must be more than 0 and less than --ttl 10s (got 10s)" },
    { ARGS("--renew", "0", "job", "true"), "--renew must be more than 0" },
    { ARGS("--renew", "inf", "job", "true"), "--renew must be" },
    { ARGS("-t", "10ms", "--renew", "10ms", "job", "true"), "--renew must be" },
    { ARGS("-w", "soon", "job", "true"), "--wait: invalid duration" },
    { ARGS("--max-runtime", "0", "job", "true"), "--max-runtime must be more than 0" },
    { ARGS("-r", "redis://a:1,", "job", "true"), "--redis: an empty URL in the comma-separated list" },
    { ARGS("-r", "redis://a:1,,redis://b:1", "job", "true"), "--redis: an empty URL" },
    { ARGS("--release", "--once", "x", "job"), "--release takes no --once" },
    { ARGS("--release", "--slot", "0", "job"), "--slot must be a number from 1 to 100" },
    { ARGS("--release", "--slot", "2x", "job"), "--slot must be a number from 1 to 100" },
    { ARGS("--slot", "2", "job", "true"), "--slot works only with --release NAME" },
    { ARGS("--all-slots", "job", "true"), "--all-slots works only with --release NAME" },
    { ARGS("--release", "--slot", "2", "--all-slots", "job"), "--slot and --all-slots cannot" },
    { ARGS("--release", "--limit", "2", "--slot", "3", "job"), "--slot 3 is beyond --limit 2" },
    { ARGS("--timeout", "5m", "job", "true"), "--timeout is not an option: to wait for the lock use --wait DUR, to limit the run use --max-runtime DUR" },
    { ARGS("--timeout"), "--timeout is not an option: to wait" },
    /* flock(1)'s habits: -n is taken, but never beside -w, in either order. */
    { ARGS("-n", "-w", "1m", "job", "true"), "-n/--nonblock and -w/--wait cannot be used together: -n gives up at once (the default), -w DUR waits; give only one" },
    { ARGS("-w", "1m", "-n", "job", "true"), "-n/--nonblock and -w/--wait cannot be used together" },
    { ARGS("--nonblock", "--wait=0", "job", "true"), "-n/--nonblock and -w/--wait cannot" },
    { ARGS("-qnw5", "job", "true"), "-n/--nonblock and -w/--wait cannot" },
    { ARGS("--nonblock=1", "job", "true"), "option --nonblock does not take a value" },
    { ARGS("job", "-c"), "-c needs a command string: redlock-run [OPTIONS] NAME -c 'CMD'" },
    { ARGS("job", "-c", "echo $1", "x"), "-c takes exactly one command string, as in flock: quote CMD whole, or for arguments write NAME -- sh -c 'CMD' sh ARG1 ARG2" },
    { ARGS("job", "--command", "a", "b"), "-c takes exactly one command string" },
    { ARGS("job", "--command=a", "b"), "-c takes exactly one command string" },
    { ARGS("job", "-c", ""), "-c needs a command, not an empty string" },
    { ARGS("--command=", "job"), "-c needs a command, not an empty string" },
    { ARGS("-c", "true", "job", "true"), "-c CMD and a COMMAND after NAME: give only one (-c 'CMD' is the same as NAME -- sh -c 'CMD')" },
    { ARGS("-c", "true", "job", "-c", "true"), "-c/--command is given twice" },
    { ARGS("-c", "true"), "missing NAME" },
    { ARGS("--status", "job", "-c", "true"), "-c/--command works only when running a COMMAND, not with --status" },
    { ARGS("-c", "true", "--release", "job"), "-c/--command works only when running a COMMAND, not with --release" },
    { ARGS("-c", "true", "--list"), "-c/--command works only when running a COMMAND, not with --list" },
    { ARGS("-xn", "job", "true"), "unknown option '-x': the lock is always exclusive (flock's -x, -e): leave it out" },
    { ARGS("-e", "job", "true"), "unknown option '-e': the lock is always exclusive" },
    { ARGS("-o", "job", "true"), "unknown option '-o': not needed: COMMAND never holds the lock" },
    { ARGS("-u", "job"), "unknown option '-u': there is no descriptor to unlock" },
    { ARGS("-F", "job", "true"), "unknown option '-F': COMMAND always runs as a child" },
    { ARGS("-s", "job", "true"), "(flock's -s: there are no shared locks)" },
    /* After -- the words are the command as they are: "-c" is not ours. */
    { ARGS("job", "--", "-c", "true"), NULL },
    { ARGS("-k", "5s", "--max-runtime", "1m", "job", "true"), "unknown option '-k': the grace from SIGTERM to SIGKILL is --kill-after DUR (timeout's -k)" },
    { ARGS("-s", "KILL", "--max-runtime", "1m", "job", "true"), "-s/--signal is not an option: COMMAND is always stopped with SIGTERM, then SIGKILL after --kill-after DUR" },
    { ARGS("--signal=9", "job", "true"), "-s/--signal is not an option" },
    { ARGS("job", "true", "-s"), NULL },
    { ARGS("--max-runtime", "1x", "job", "true"), "--max-runtime: invalid duration" },
    { ARGS("--kill-after", "inf", "job", "true"), "--kill-after must be finite" },
    { ARGS("--min-hold", "inf", "job", "true"), "--min-hold must be finite" },
    { ARGS("--connect-timeout", "0", "job", "true"), "--connect-timeout must be more than 0" },
    { ARGS("--connect-timeout", "inf", "job", "true"), "--connect-timeout must be more than 0 and finite (got inf)" },
    { ARGS("--redis-timeout", "0ms", "job", "true"), "--redis-timeout must be more than 0" },
    { ARGS("--redis-timeout", "inf", "job", "true"), "--redis-timeout must be" },
    { ARGS("--state-ttl", "0", "job", "true"), "--state-ttl must be more than 0" },
    { ARGS("--on-stale", "maybe", "job", "true"), "--on-stale must be run or refuse (got 'maybe')" },
    { ARGS("--log-format", "xml", "job", "true"), "--log-format must be text or json (got 'xml')" },
    { ARGS("--contain", "jail", "job", "true"), "--contain must be auto, cgroup or tree (got 'jail')" },
    { ARGS("--status", "--contain", "tree", "job"), "--contain works only when running a COMMAND, not with --status" },
    { ARGS("--prefix", "a b", "job", "true"), "--prefix must be" },
    { ARGS("--prefix", "{x}:", "job", "true"), "--prefix must be" },
    { ARGS("--prefix", "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp", "job", "true"), "--prefix must be at most 64" },
    { ARGS("--metrics-file", "", "job", "true"), "--metrics-file needs a file name" },
    { ARGS("--once", "", "job", "true"), "--once: the ID must not be empty" },
    { ARGS("--once", "a b", "job", "true"), "--once: 'a b' expands to 'a b', which has a space" },
    { ARGS("--once", "x%ny", "job", "true"), "which has a space or a non-printable byte" },
    { ARGS("--once", "caf\xc3\xa9", "job", "true"), "non-printable" },
    { ARGS("--once", LONGNAME "x", "job", "true"), "expands to 201 bytes; the ID may have at most 200" },
    { ARGS("a b", "true"), "NAME 'a b' has a space" },
    { ARGS("{job}", "true"), "must not contain '{' or '}'" },
    { ARGS("job}", "true"), "must not contain" },
    { ARGS(LONGNAME "x", "true"), "NAME is 201 bytes long; use at most 200" },
    { ARGS("\xff\xfe", "true"), "NAME '?\?' has a space or a non-printable or non-ASCII byte" },
    { ARGS("caf\xc3\xa9", "true"), "non-ASCII" },
    { ARGS("tab\tjob", "true"), "NAME 'tab?job'" },
    { ARGS("--", "", "true"), "NAME must not be empty" },
    { ARGS("--password-file", "/nonexistent/pw", "job", "true"), "cannot read password file '/nonexistent/pw': No such file or directory" },
    { ARGS("--password-file", "/", "job", "true"), "cannot read password file '/'" },
    { ARGS("--password-file", "/dev/null", "job", "true"), "password file '/dev/null' is empty" },
    { ARGS("-r", "http://x", "job", "true"), "--redis: invalid Redis URL: unknown scheme 'http:'" },
    { ARGS("-r", "", "job", "true"), "--redis: empty Redis URL" },
    { ARGS("-r", "redis://h:0", "job", "true"), "--redis: invalid Redis URL: port must be" },
    { ARGS("-r", "redis://:" SECRET "@h:x", "job", "true"), "--redis: invalid Redis URL: port must be" },
    { ARGS("-r", "redis://default:" SECRET, "job", "true"), "--redis: invalid Redis URL" },
    { ARGS("-r", "redis://a,", "job", "true"), "--redis: an empty URL in the comma-separated list" },
    { ARGS("-r", "rediss://h", "job", "true"), NULL },
    { ARGS("-r", "redis://a,rediss://:" SECRET "@b", "--tls-ca", "/dev/null", "job", "true"), NULL },
    /* A --tls-* file that cannot be read: told here, before connecting. */
    { ARGS("-r", "rediss://h", "--tls-ca", "/no/such/ca.pem", "job", "true"), "cannot read --tls-ca '/no/such/ca.pem': No such file or directory" },
    { ARGS("-r", "rediss://h", "--tls-ca-dir", "/dev/null", "job", "true"), "cannot read --tls-ca-dir '/dev/null': Not a directory" },
    { ARGS("-r", "redis://a", "--tls-ca", "ca.pem", "job", "true"), "--tls-ca needs a rediss:// URL (TLS); none of the Redis URLs is one" },
    { ARGS("--tls-insecure", "job", "true"), "--tls-insecure needs a rediss:// URL" },
    { ARGS("-r", "unix:///a.sock", "--tls-sni", "x", "job", "true"), "--tls-sni needs a rediss:// URL" },
    { ARGS("-r", "rediss://h", "--tls-cert", "c.pem", "job", "true"), "--tls-cert needs --tls-key too" },
    { ARGS("-r", "rediss://h", "--tls-key", "k.pem", "job", "true"), "--tls-key needs --tls-cert too" },
    { ARGS("--redis=redis-sentinel://s1,s2/m", "job", "true"), NULL },
    { ARGS("-r", "redis-sentinel://s1,s2/m,redis-cluster://c1:7000,c2:7000,redis://h", "job", "true"), NULL },
    { ARGS("--sync-replicas", "x", "job", "true"), "--sync-replicas must be a number of replicas from 0 to 100 (got 'x')" },
    { ARGS("--sync-replicas", "-1", "job", "true"), "--sync-replicas must be a number" },
    { ARGS("--sync-replicas", "101", "job", "true"), "--sync-replicas must be a number" },
    { ARGS("--sync-replicas", "2", "job", "true"), NULL },
    { ARGS("--sentinel-password-file", "/nonexistent/pw", "job", "true"), "cannot read sentinel password file '/nonexistent/pw'" },
    { ARGS("-r", URLS15 ",redis://h16", "job", "true"), "too many Redis URLs: at most 15" },
    { ARGS("-r", "redis://h", "-r", "redis://H:6379/1", "job", "true"), "Redis server H:6379 is given twice" },
    { ARGS("-r", "unix:///a.sock,unix:/a.sock?db=2", "job", "true"), "is given twice" },
    /* One server under two spellings (issue 28, 6): one vote each would be two. */
    { ARGS("-r", "redis://127.0.0.1:7001", "-r", "redis://localhost:7001", "-r", "redis://127.0.0.1:7002", "job", "true"),
      "--redis: 127.0.0.1:7001 and localhost:7001 are the same Redis server; each Redlock master must be a separate server, so give it once" },
    { ARGS("-r", "redis://[::1]:7001,redis://h:1,redis://LOCALHOST.:7001/2", "job", "true"), "[::1]:7001 and LOCALHOST.:7001 are the same Redis server" },
    { ARGS("-r", "redis://127.1,redis://[::ffff:127.0.0.1]:6379", "job", "true"), "127.1:6379 and [::ffff:127.0.0.1]:6379 are the same" },
    { ARGS("-r", "rediss://Redis.Example.com.:6380,redis://redis.example.com:6380", "job", "true"), "are the same Redis server" },
    { ARGS("-r", "unix:///tmp/a.sock", "-r", "unix:///tmp/./a.sock", "job", "true"), "/tmp/a.sock and /tmp/./a.sock are the same Redis server" },
    { ARGS("-r", "unix:///tmp/a.sock", "-r", "unix:///tmp//a.sock", "job", "true"), "are the same Redis server" },
    { ARGS("-r", "unix:///tmp/a.sock", "-r", "unix:///tmp/../tmp/a.sock", "job", "true"), "are the same Redis server" },
    /* What only the servers can tell is left to them. */
    { ARGS("-r", "redis://127.0.0.1:7001,redis://[::1]:7001,redis://127.0.0.2:7001", "job", "true"), NULL },
    { ARGS("-r", "redis://localhost:7001,redis://localhost:7002,redis://127.0.0.2:7001", "job", "true"), NULL },
    { ARGS("-r", "unix:///tmp/a.sock,unix:///tmp/b.sock,unix:///no/such/dir/../a.sock", "job", "true"), NULL },
    { ARGS("--bogus", "job", "true"), "unknown or ambiguous option '--bogus'" },
    { ARGS("--rediss-url=redis://:" SECRET "@h", "job", "true"), "unknown or ambiguous option '--rediss-url'" },
    { ARGS("--re", "x", "job", "true"), "unknown or ambiguous option '--re'" },
    { ARGS("-x", "job", "true"), "unknown option '-x'" },
    { ARGS("-qx", "job", "true"), "unknown option '-x'" },
    { ARGS("job", "true", "--ttl"), NULL },   /* valid: --ttl is the command's */
    { ARGS("--ttl"), "option --ttl needs a value" },
    { ARGS("-t"), "option --ttl needs a value" },
    { ARGS("-r"), "option --redis needs a value" },
    { ARGS("--once"), "option --once needs a value" },
    { ARGS("--quiet=1", "job", "true"), "option --quiet does not take a value" },
    { ARGS("--tls-insecure=yes", "job", "true"), "option --tls-insecure does not take a value" },
    { ARGS("job", "-v", "true"), "option '-v' after NAME" },
    { ARGS("job", "--redis=redis://:" SECRET "@h", "true"), "option '--redis' after NAME" },
    /* The first error wins, whatever follows. */
    { ARGS("-t", "x", "-E", "300", "job", "true"), "--ttl: invalid duration 'x'" },
};

START_TEST(bad_command_lines)
{
    const struct bad *b = &bads[_i];
    int rc = parse_args(b->args);

    if (b->want == NULL) {
        ck_assert_msg(rc == 0, "case %d rejected: %s", _i, err);
        return;
    }
    ck_assert_msg(rc == -1, "case %d accepted (want '%s')", _i, b->want);
    assert_clean_error(err);
    ck_assert_msg(strstr(err, b->want) != NULL, "case %d: got '%s', want '%s'", _i, err, b->want);
    /* No password survives in a config the caller will throw away. */
    ck_assert(!cfg.has_password);
    ck_assert_int_eq(cfg.n_endpoints, 0);
}
END_TEST

/* ---- good command lines ----------------------------------------------- */

START_TEST(defaults)
{
    PARSE_OK("job", "true");
    ck_assert_int_eq(cfg.mode, RR_MODE_RUN);
    ck_assert_str_eq(cfg.name, "job");
    ck_assert_int_eq(cfg.command_argc, 1);
    ck_assert_str_eq(cfg.command[0], "true");
    ck_assert_ptr_null(cfg.command[1]);
    ck_assert_int_eq(cfg.n_endpoints, 1);
    ck_assert_str_eq(cfg.endpoints[0].display, "127.0.0.1:6379");
    ck_assert_int_eq(cfg.endpoints[0].db, 0);
    ck_assert(cfg.ttl_ms == 30000);
    ck_assert(cfg.renew_ms == 10000);
    ck_assert(cfg.wait_ms == 0);
    ck_assert(cfg.timeout_ms == 0);
    ck_assert(cfg.kill_after_ms == 10000);
    ck_assert(cfg.min_hold_ms == 0);
    ck_assert(cfg.connect_timeout_ms == 1000);
    ck_assert(cfg.redis_timeout_ms == 500);
    ck_assert(cfg.state_ttl_ms == 30LL * 86400 * 1000);
    ck_assert_int_eq(cfg.conflict_exit_code, 75);
    ck_assert_ptr_null(cfg.once_raw);
    ck_assert_str_eq(cfg.once_id, "");
    ck_assert_int_eq(cfg.on_stale, RR_STALE_RUN);
    ck_assert_int_eq(cfg.resolve, RR_RESOLVE_NONE);
    ck_assert_str_eq(cfg.prefix, "redlock:");
    ck_assert(!cfg.has_password && !cfg.has_user);
    ck_assert_int_eq(cfg.verbosity, 0);
    ck_assert_int_eq(cfg.log_format, RR_LOGFMT_TEXT);
    ck_assert(!cfg.use_syslog && !cfg.foreground && !cfg.json && !cfg.tls_insecure);
    ck_assert_int_eq(cfg.contain, RR_CONTAIN_AUTO);
    ck_assert_ptr_null(cfg.metrics_file);
    ck_assert_ptr_null(cfg.tls_ca);
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(every_long_option)
{
    const char *pwf = temp_file("hunter2\n");
    /* The --tls-* files must be readable (cli_check.c opens them). */
    const char *ca = "/dev/null", *crt = "/dev/null", *key = "/dev/null";

    PARSE_OK("--redis", "redis://a:1", "--redis=rediss://b:2/3", "--ttl", "1m", "--renew", "5s",
             "--wait", "inf", "--conflict-exit-code", "0", "--max-runtime", "1h30m",
             "--kill-after", "0", "--once", "fixed-id", "--on-stale", "run", "--min-hold", "2s",
             "--state-ttl", "7d", "--prefix", "x:", "--connect-timeout", "250ms",
             "--redis-timeout", "0.1", "--password-file", pwf, "--tls-ca", ca, "--tls-ca-dir", "/",
             "--tls-cert", crt, "--tls-key", key, "--tls-sni", "sni.example",
             "--tls-insecure", "--verbose", "--verbose", "--log-format", "json", "--syslog",
             "--metrics-file", "/tmp/m.prom", "--foreground", "--contain", "tree", "job", "--", "ls", "-l");
    unlink(pwf);
    ck_assert_int_eq(cfg.n_endpoints, 2);
    ck_assert_str_eq(cfg.endpoints[0].display, "a:1");
    ck_assert_str_eq(cfg.endpoints[1].display, "b:2");
    ck_assert_int_eq(cfg.endpoints[1].db, 3);
    ck_assert(cfg.ttl_ms == 60000);
    ck_assert(cfg.renew_ms == 5000);
    ck_assert(cfg.wait_ms == RR_INF);
    ck_assert_int_eq(cfg.conflict_exit_code, 0);
    ck_assert(cfg.timeout_ms == 5400000);
    ck_assert(cfg.kill_after_ms == 0);
    ck_assert_str_eq(cfg.once_raw, "fixed-id");
    ck_assert_str_eq(cfg.once_id, "fixed-id");
    ck_assert_int_eq(cfg.on_stale, RR_STALE_RUN);
    ck_assert(cfg.min_hold_ms == 2000);
    ck_assert(cfg.state_ttl_ms == 7LL * 86400000);
    ck_assert_str_eq(cfg.prefix, "x:");
    ck_assert(cfg.connect_timeout_ms == 250);
    ck_assert(cfg.redis_timeout_ms == 100);
    ck_assert(cfg.has_password);
    ck_assert_str_eq(cfg.password, "hunter2");
    ck_assert_str_eq(cfg.tls_ca, ca);
    ck_assert_str_eq(cfg.tls_ca_dir, "/");
    ck_assert(cfg.endpoints[1].tls);
    ck_assert_str_eq(cfg.tls_cert, crt);
    ck_assert_str_eq(cfg.tls_key, key);
    ck_assert_str_eq(cfg.tls_sni, "sni.example");
    ck_assert(cfg.tls_insecure);
    ck_assert_int_eq(cfg.verbosity, 2);
    ck_assert_int_eq(cfg.log_format, RR_LOGFMT_JSON);
    ck_assert(cfg.use_syslog);
    ck_assert_str_eq(cfg.metrics_file, "/tmp/m.prom");
    ck_assert(cfg.foreground);
    ck_assert_int_eq(cfg.contain, RR_CONTAIN_TREE);
    ck_assert_str_eq(cfg.name, "job");
    ck_assert_int_eq(cfg.command_argc, 2);
    ck_assert_str_eq(cfg.command[0], "ls");
    ck_assert_str_eq(cfg.command[1], "-l");
}
END_TEST

START_TEST(short_options_and_clusters)
{
    PARSE_OK("-rredis://h1", "-t5s", "-w", "2m", "-E0", "-qr", "redis://h2", "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 2);
    ck_assert_str_eq(cfg.endpoints[0].host, "h1");
    ck_assert_str_eq(cfg.endpoints[1].host, "h2");
    ck_assert(cfg.ttl_ms == 5000);
    ck_assert(cfg.renew_ms == 1666);
    ck_assert(cfg.wait_ms == 120000);
    ck_assert_int_eq(cfg.conflict_exit_code, 0);
    ck_assert_int_eq(cfg.verbosity, -1);

    PARSE_OK("-vvv", "job", "true");
    ck_assert_int_eq(cfg.verbosity, 2);
    PARSE_OK("-v", "job", "true");
    ck_assert_int_eq(cfg.verbosity, 1);
    PARSE_OK("-E", "255", "job", "true");
    ck_assert_int_eq(cfg.conflict_exit_code, 255);
    /* Unique prefixes of long options work, as getopt_long allows. */
    PARSE_OK("--fore", "--conflict=3", "job", "true");
    ck_assert(cfg.foreground);
    ck_assert_int_eq(cfg.conflict_exit_code, 3);
}
END_TEST

START_TEST(name_and_command)
{
    PARSE_OK("job", "ls", "-q", "--ttl", "x");
    ck_assert_int_eq(cfg.verbosity, 0);
    ck_assert(cfg.ttl_ms == 30000);
    ck_assert_int_eq(cfg.command_argc, 4);
    ck_assert_str_eq(cfg.command[1], "-q");

    PARSE_OK("--", "job", "ls");
    ck_assert_str_eq(cfg.name, "job");
    ck_assert_str_eq(cfg.command[0], "ls");

    PARSE_OK("-q", "--", "-job", "--", "-x", "--");
    ck_assert_str_eq(cfg.name, "-job");
    ck_assert_int_eq(cfg.command_argc, 2);
    ck_assert_str_eq(cfg.command[0], "-x");
    ck_assert_str_eq(cfg.command[1], "--");
    ck_assert_ptr_null(cfg.command[2]);

    PARSE_OK("job", "--", "--", "x");
    ck_assert_int_eq(cfg.command_argc, 2);
    ck_assert_str_eq(cfg.command[0], "--");

    /* A lone "-" is a word, not an option. */
    PARSE_OK("job", "-");
    ck_assert_str_eq(cfg.command[0], "-");

    PARSE_OK(LONGNAME, "true");
    ck_assert_uint_eq(strlen(cfg.name), 200);
    PARSE_OK("a.b_c:d/e@f~!", "true");
}
END_TEST

/* flock(1)'s habits that are taken: -n, -c CMD after NAME (flock's place)
 * or before it (an option like the others), -E 1. */
START_TEST(flock_habits)
{
    PARSE_OK("-n", "job", "true");
    ck_assert(cfg.wait_ms == 0);
    ck_assert_str_eq(cfg.command[0], "true");
    PARSE_OK("-qn", "-E", "1", "/var/lock/x", "true");
    ck_assert_int_eq(cfg.verbosity, -1);
    ck_assert_int_eq(cfg.conflict_exit_code, 1);
    ck_assert_str_eq(cfg.name, "/var/lock/x");
    PARSE_OK("--nonblock", "-w", "0", "--help");

    const char *const *const forms[] = {
        ARGS("-n", "job", "-c", "echo \"$1\"; exit 3"),
        ARGS("-n", "job", "--command", "echo \"$1\"; exit 3"),
        ARGS("-n", "job", "--command=echo \"$1\"; exit 3"),
        ARGS("-n", "-c", "echo \"$1\"; exit 3", "job"),
        ARGS("-nc", "echo \"$1\"; exit 3", "job", "--"),
        ARGS("--command=echo \"$1\"; exit 3", "--", "job"),
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        ck_assert_msg(parse_args(forms[i]) == 0, "form %zu rejected: %s", i, err);
        ck_assert_str_eq(cfg.name, "job");
        ck_assert_int_eq(cfg.command_argc, 3);
        ck_assert_str_eq(cfg.command[0], "sh");
        ck_assert_str_eq(cfg.command[1], "-c");
        ck_assert_str_eq(cfg.command[2], "echo \"$1\"; exit 3");
        ck_assert_ptr_null(cfg.command[3]);
    }
    /* A word that merely starts like -c is the command's. */
    PARSE_OK("job", "--", "-c", "x");
    ck_assert_str_eq(cfg.command[0], "-c");
    ck_assert_int_eq(cfg.command_argc, 2);
    PARSE_OK("job", "sh", "-c", "x");
    ck_assert_str_eq(cfg.command[0], "sh");
}
END_TEST

START_TEST(wants_check)
{
    const char *a[] = { "redlock-run", "--status", "--max-age=1x", "job", NULL };
    const char *b[] = { "redlock-run", "--status", "job", NULL };
    const char *c[] = { "redlock-run", "job", "--", "--status", "--max-age", "1h", NULL };

    ck_assert(rr_cli_wants_check(4, a));
    ck_assert(!rr_cli_wants_check(3, b));
    ck_assert(!rr_cli_wants_check(6, c));
}
END_TEST

START_TEST(operator_modes)
{
    PARSE_OK("--status", "job");
    ck_assert_int_eq(cfg.mode, RR_MODE_STATUS);
    ck_assert_str_eq(cfg.name, "job");
    ck_assert_int_eq(cfg.command_argc, 0);
    ck_assert(!cfg.json);

    PARSE_OK("--status", "--json", "--once", "id-1", "job");
    ck_assert_int_eq(cfg.mode, RR_MODE_STATUS);
    ck_assert(cfg.json);
    ck_assert_str_eq(cfg.once_id, "id-1");

    PARSE_OK("--status", "--max-age", "25h", "job");
    ck_assert_int_eq(cfg.max_age_ms, 25 * 3600 * 1000LL);
    ck_assert_int_ne(PARSE("--max-age", "25h", "job", "--", "true"), 0);
    ck_assert_int_ne(PARSE("--status", "--json", "--max-age", "25h", "job"), 0);
    ck_assert_int_ne(PARSE("--status", "--max-age", "0", "job"), 0);
    ck_assert_int_ne(PARSE("--status", "--max-age", "inf", "job"), 0);

    PARSE_OK("--release", "job", "--");
    ck_assert_int_eq(cfg.mode, RR_MODE_RELEASE);
    ck_assert_int_eq(cfg.release_slot, 0);
    ck_assert(!cfg.all_slots);
    PARSE_OK("--release", "--slot", "7", "--fence", "12", "job");
    ck_assert_int_eq(cfg.release_slot, 7);
    PARSE_OK("--release", "--limit", "3", "--slot", "3", "job");
    ck_assert_int_eq(cfg.release_slot, 3);
    PARSE_OK("--release", "--all-slots", "--force", "job");
    ck_assert(cfg.all_slots);

    PARSE_OK("--resolve", "succeeded", "--once", "x", "job");
    ck_assert_int_eq(cfg.mode, RR_MODE_RESOLVE);
    ck_assert_int_eq(cfg.resolve, RR_RESOLVE_SUCCEEDED);
    PARSE_OK("--resolve=clear", "job");
    ck_assert_int_eq(cfg.resolve, RR_RESOLVE_CLEAR);
}
END_TEST

START_TEST(help_and_version_win)
{
    PARSE_OK("--help");
    ck_assert_int_eq(cfg.mode, RR_MODE_HELP);
    PARSE_OK("-h", "--ttl", "bogus", "--status", "--release");
    ck_assert_int_eq(cfg.mode, RR_MODE_HELP);
    PARSE_OK("--ttl", "bogus", "-x", "--help");
    ck_assert_int_eq(cfg.mode, RR_MODE_HELP);
    ck_assert_str_eq(err, "");
    PARSE_OK("-V");
    ck_assert_int_eq(cfg.mode, RR_MODE_VERSION);
    PARSE_OK("--version", "job", "true");
    ck_assert_int_eq(cfg.mode, RR_MODE_VERSION);
    ck_assert_int_ne(cfg.on_stale, RR_STALE_DEFAULT);
    /* After NAME, --help belongs to the command. */
    PARSE_OK("job", "--", "cmd", "--help");
    ck_assert_int_eq(cfg.mode, RR_MODE_RUN);
}
END_TEST

START_TEST(once_and_stale)
{
    PARSE_OK("--once", "settle-%Y", "job", "true");
    ck_assert_str_eq(cfg.once_raw, "settle-%Y");
    ck_assert_uint_eq(strlen(cfg.once_id), 11);
    ck_assert_int_eq(strncmp(cfg.once_id, "settle-", 7), 0);
    ck_assert_int_eq(cfg.on_stale, RR_STALE_REFUSE);

    PARSE_OK("--once", "x", "--on-stale", "run", "job", "true");
    ck_assert_int_eq(cfg.on_stale, RR_STALE_RUN);
    PARSE_OK("--on-stale", "refuse", "job", "true");
    ck_assert_int_eq(cfg.on_stale, RR_STALE_REFUSE);
    PARSE_OK("--once", LONGNAME, "job", "true");
    ck_assert_uint_eq(strlen(cfg.once_id), 200);
}
END_TEST

START_TEST(endpoints)
{
    PARSE_OK("-r", URLS15, "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 15);
    ck_assert_str_eq(cfg.endpoints[14].host, "h15");

    /* An even number of masters is allowed. */
    PARSE_OK("-r", "redis://a", "-r", "unix:///run/r.sock?db=2", "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 2);
    ck_assert_int_eq(cfg.endpoints[1].transport, RR_TRANSPORT_UNIX);
    ck_assert_int_eq(cfg.endpoints[1].db, 2);

    /* A comma inside a password does not split the value. */
    PARSE_OK("-r", "redis://:a,b@h1,redis://:" SECRET "@h2", "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 2);
    ck_assert_str_eq(cfg.endpoints[0].password, "a,b");
    ck_assert_str_eq(cfg.endpoints[1].password, SECRET);
    ck_assert(!cfg.has_password);
}
END_TEST

/* One socket under two paths: a symlinked directory, a symlink to the
 * socket itself, "." and ".." — once the socket is there, and before. */
START_TEST(same_socket_spellings)
{
    char dir[] = "/tmp/check_cli_sock_XXXXXX", a[160], b[160], c[160], d[160];
    char ua[200], ub[200], uc[200], ud[200];
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    int fd;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/real", dir);
    ck_assert_int_eq(mkdir(a, 0700), 0);
    snprintf(b, sizeof b, "%s/link", dir);
    ck_assert_int_eq(symlink("real", b), 0);
    snprintf(ua, sizeof ua, "unix://%s/real/r.sock", dir);
    snprintf(ub, sizeof ub, "unix://%s/link/r.sock", dir);
    snprintf(uc, sizeof uc, "unix://%s/real/../real/./r.sock", dir);

    /* No socket yet: the real directory and the name. */
    ck_assert_int_eq(PARSE("-r", ua, "-r", ub, "job", "true"), -1);
    ck_assert_ptr_nonnull(strstr(err, "are the same Redis server"));
    ck_assert_int_eq(PARSE("-r", ua, "-r", uc, "job", "true"), -1);

    /* A socket bound there, and a symlink to it under another name. */
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s/real/r.sock", dir);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    snprintf(c, sizeof c, "%s/other.sock", dir);
    ck_assert_int_eq(symlink(sun.sun_path, c), 0);
    snprintf(ud, sizeof ud, "unix://%s", c);
    ck_assert_int_eq(PARSE("-r", ua, "-r", ub, "job", "true"), -1);
    ck_assert_int_eq(PARSE("-r", uc, "-r", ud, "job", "true"), -1);
    ck_assert_ptr_nonnull(strstr(err, "/other.sock are the same Redis server"));
    /* Another socket in the same directory is another server. */
    snprintf(d, sizeof d, "unix://%s/real/s.sock", dir);
    PARSE_OK("-r", ua, "-r", d, "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 2);

    close(fd);
    unlink(sun.sun_path);
    unlink(c);
    unlink(b);
    rmdir(a);
    rmdir(dir);
}
END_TEST

START_TEST(environment)
{
    const char *pwf;

    setenv("REDLOCK_URL", "redis://e1:1,redis://e2:2", 1);
    PARSE_OK("job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 2);
    ck_assert_str_eq(cfg.endpoints[1].display, "e2:2");

    /* -r replaces $REDLOCK_URL rather than adding to it. */
    PARSE_OK("-r", "redis://c", "job", "true");
    ck_assert_int_eq(cfg.n_endpoints, 1);
    ck_assert_str_eq(cfg.endpoints[0].host, "c");

    setenv("REDLOCK_URL", "redis://:" SECRET "@h:bad", 1);
    ck_assert_int_eq(PARSE("job", "true"), -1);
    assert_clean_error(err);
    ck_assert_ptr_nonnull(strstr(err, "$REDLOCK_URL: invalid Redis URL"));

    setenv("REDLOCK_URL", "", 1);
    PARSE_OK("job", "true");
    ck_assert_str_eq(cfg.endpoints[0].display, "127.0.0.1:6379");

    setenv("REDLOCK_PASSWORD", "envpw", 1);
    setenv("REDLOCK_USER", "envuser", 1);
    PARSE_OK("-r", "redis://:urlpw@h", "job", "true");
    ck_assert(cfg.has_password && cfg.has_user);
    ck_assert_str_eq(cfg.password, "envpw");
    ck_assert_str_eq(cfg.user, "envuser");
    /* The URL's own password stays with its endpoint. */
    ck_assert_str_eq(cfg.endpoints[0].password, "urlpw");

    /* The file wins over $REDLOCK_PASSWORD; CRLF and the newline go. */
    pwf = temp_file("filepw\r\nsecond line\n");
    PARSE_OK("--password-file", pwf, "job", "true");
    unlink(pwf);
    ck_assert_str_eq(cfg.password, "filepw");
    ck_assert_str_eq(cfg.user, "envuser");

    pwf = temp_file("no-newline");
    PARSE_OK("--password-file", pwf, "job", "true");
    unlink(pwf);
    ck_assert_str_eq(cfg.password, "no-newline");

    pwf = temp_file("\n");
    ck_assert_int_eq(PARSE("--password-file", pwf, "job", "true"), -1);
    unlink(pwf);
    ck_assert_ptr_nonnull(strstr(err, "is empty"));
    ck_assert(!cfg.has_password);

    char big[700];
    memset(big, 'p', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    pwf = temp_file(big);
    ck_assert_int_eq(PARSE("--password-file", pwf, "job", "true"), -1);
    unlink(pwf);
    ck_assert_ptr_nonnull(strstr(err, "longer than 511 bytes"));
    ck_assert_ptr_null(strstr(err, "ppp"));

    setenv("REDLOCK_PASSWORD", big, 1);
    ck_assert_int_eq(PARSE("job", "true"), -1);
    ck_assert_ptr_null(strstr(err, "ppp"));
}
END_TEST

START_TEST(reparse_many_times)
{
    for (int i = 0; i < 50; i++) {
        PARSE_OK("-q", "-t", "2s", "a", "true");
        ck_assert_str_eq(cfg.name, "a");
        ck_assert(cfg.ttl_ms == 2000);
        ck_assert_int_eq(PARSE("-x", "b", "true"), -1);
        PARSE_OK("--status", "c");
        ck_assert_str_eq(cfg.name, "c");
        ck_assert_int_eq(cfg.verbosity, 0);
        ck_assert(cfg.ttl_ms == 30000);
    }
}
END_TEST

START_TEST(argv_left_untouched)
{
    const char *const *args = ARGS("-r", "redis://:" SECRET "@h", "-q", "job", "--", "cmd", "-x");
    int argc = make_argv(args);
    char *before[MAXARGS];

    memcpy(before, argvec, sizeof before);
    ck_assert_int_eq(rr_cli_parse(argc, argvec, &cfg, err, sizeof err), 0);
    for (int i = 0; i < argc; i++) {
        ck_assert_ptr_eq(argvec[i], before[i]);
        ck_assert_str_eq(argvec[i], i == 0 ? "redlock-run" : args[i - 1]);
    }
}
END_TEST

/* ---- scrubbing -------------------------------------------------------- */

struct scrub {
    const char *const *args;
    const char *const *want;
};

static const struct scrub scrubs[] = {
    { ARGS("-r", "redis://:pw@h", "job", "true"),
      ARGS("-r", "redis://:**@h", "job", "true") },
    { ARGS("-rredis://u:pw@h", "job", "true"),
      ARGS("-rredis://u:**@h", "job", "true") },
    { ARGS("-qrredis://:pw@h", "job", "true"),
      ARGS("-qrredis://:**@h", "job", "true") },
    { ARGS("-qr", "redis://:pw@h", "job", "true"),
      ARGS("-qr", "redis://:**@h", "job", "true") },
    { ARGS("--redis", "redis://:pw@h", "job", "true"),
      ARGS("--redis", "redis://:**@h", "job", "true") },
    { ARGS("--redis=redis://:pw@h,redis://:a,b@h2", "job", "true"),
      ARGS("--redis=redis://:**@h,redis://:***@h2", "job", "true") },
    { ARGS("--redi=redis://:pw@h", "job", "true"),
      ARGS("--redi=redis://:pw@h", "job", "true") },      /* ambiguous: not a --redis */
    { ARGS("-t", "-r", "-r", "redis://:pw@h", "job", "true"),
      ARGS("-t", "-r", "-r", "redis://:**@h", "job", "true") },
    { ARGS("--prefix", "redis://:pw@h", "job", "true"),
      ARGS("--prefix", "redis://:pw@h", "job", "true") },
    { ARGS("-q", "job", "-r", "redis://:pw@h"),
      ARGS("-q", "job", "-r", "redis://:pw@h") },          /* the command's own */
    { ARGS("--", "-r", "redis://:pw@h"),
      ARGS("--", "-r", "redis://:pw@h") },
    { ARGS("-r", "redis://:pw@h", "-r", "redis://u:xyz@h2", "job"),
      ARGS("-r", "redis://:**@h", "-r", "redis://u:***@h2", "job") },
    { ARGS("-r"), ARGS("-r") },
};

START_TEST(scrub_argv)
{
    const struct scrub *s = &scrubs[_i];
    int argc = make_argv(s->args);

    rr_cli_scrub_argv(argc, argvec);
    for (int i = 1; i < argc; i++)
        ck_assert_msg(strcmp(argvec[i], s->want[i - 1]) == 0, "case %d arg %d: '%s', want '%s'",
                      _i, i, argvec[i], s->want[i - 1]);
}
END_TEST

/* ---- --once expansion, NAME ------------------------------------------- */

START_TEST(expand_once)
{
    char out[RR_ONCE_MAX + 1], e[RR_ERRLEN];
    char small[6];
    const long long t = 1700000000;     /* 2023-11-14T22:13:20Z */

    setenv("TZ", "UTC", 1);
    tzset();
    ck_assert_int_eq(rr_cli_expand_once("settle-%F", t, out, sizeof out, e, sizeof e), 0);
    ck_assert_str_eq(out, "settle-2023-11-14");
    ck_assert_int_eq(rr_cli_expand_once("%Y%m%dT%H%M", t, out, sizeof out, e, sizeof e), 0);
    ck_assert_str_eq(out, "20231114T2213");
    ck_assert_int_eq(rr_cli_expand_once("100%%", t, out, sizeof out, e, sizeof e), 0);
    ck_assert_str_eq(out, "100%");

    /* Local time: in UTC+14 it is already the 15th. */
    setenv("TZ", "XXX-14", 1);
    tzset();
    ck_assert_int_eq(rr_cli_expand_once("d-%F", t, out, sizeof out, e, sizeof e), 0);
    ck_assert_str_eq(out, "d-2023-11-15");

    /* Braces would reach into another job's keys (issue 30: `x}:state`
     * made a phantom job in --list); the key separator stays allowed. */
    ck_assert_int_eq(rr_cli_expand_once("x}:state", t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_ptr_nonnull(strstr(e, "has '{' or '}'"));
    ck_assert_int_eq(rr_cli_expand_once("{x", t, out, sizeof out, e, sizeof e), -1);
    ck_assert_int_eq(rr_cli_expand_once("run-%H:%M", t, out, sizeof out, e, sizeof e), 0);

    /* A conversion strftime does not know would be copied as it is: refused. */
    ck_assert_int_eq(rr_cli_expand_once("x-%Q", t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_ptr_nonnull(strstr(e, "'%Q' is not a strftime conversion"));
    ck_assert_int_eq(rr_cli_expand_once("x-%", t, out, sizeof out, e, sizeof e), -1);
    ck_assert_int_eq(rr_cli_expand_once("x-%5", t, out, sizeof out, e, sizeof e), -1);
    ck_assert_int_eq(rr_cli_expand_once("x-%-d.%Ey.%010Y.%%Q", t, out, sizeof out, e, sizeof e), 0);
    ck_assert_str_eq(out, "x-15.23.0000002023.%Q");
    ck_assert_int_eq(rr_cli_expand_once("%c", t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_int_eq(rr_cli_expand_once("%t", t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(rr_cli_expand_once("", t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_int_eq(rr_cli_expand_once(NULL, t, out, sizeof out, e, sizeof e), -1);
    ck_assert_int_eq(rr_cli_expand_once("abcdef", t, small, sizeof small, e, sizeof e), -1);
    assert_clean_error(e);
    ck_assert_int_eq(rr_cli_expand_once("abcde", t, small, sizeof small, e, sizeof e), 0);
    ck_assert_str_eq(small, "abcde");
    /* Far past the 200-byte limit and strftime's own buffer. */
    char pat[1200];
    memset(pat, 'y', sizeof pat - 1);
    pat[sizeof pat - 1] = '\0';
    ck_assert_int_eq(rr_cli_expand_once(pat, t, out, sizeof out, e, sizeof e), -1);
    assert_clean_error(e);
}
END_TEST

static const char *const good_names[] = {
    "a", "nightly-backup", "settle.v2", "a_b:c/d", "x@y", "~!$%^&*()[]<>|;'\"`,.?=+#",
    LONGNAME,
};

static const char *const bad_names[] = {
    "", " ", "a b", "a\tb", "a\nb", "{a}", "a{", "}", "\x7f", "\x01",
    "caf\xc3\xa9", "\xff", LONGNAME "n",
};

START_TEST(check_name_good)
{
    char e[RR_ERRLEN] = "";

    ck_assert_msg(rr_cli_check_name(good_names[_i], e, sizeof e) == 0, "'%s': %s", good_names[_i], e);
}
END_TEST

START_TEST(check_name_bad)
{
    char e[RR_ERRLEN] = "";

    ck_assert_msg(rr_cli_check_name(bad_names[_i], e, sizeof e) == -1, "'%s' accepted", bad_names[_i]);
    assert_clean_error(e);
    ck_assert_int_eq(rr_cli_check_name(NULL, e, sizeof e), -1);
}
END_TEST

/* ---- --help ------------------------------------------------------------ */

/* The contract's long options (DESIGN.md); each must be in --help and be
 * accepted by the parser. */
static const char *const long_options[] = {
    "redis", "ttl", "renew", "wait", "conflict-exit-code", "max-runtime", "kill-after",
    "once", "on-stale", "min-hold", "state-ttl", "prefix", "connect-timeout",
    "redis-timeout", "password-file", "tls-ca", "tls-cert", "tls-key", "tls-sni",
    "tls-insecure", "quiet", "verbose", "log-format", "syslog", "metrics-file",
    "foreground", "contain", "status", "json", "release", "resolve", "help", "version",
    "nonblock", "command",
};

static char *help_text(void)
{
    static char buf[16384];
    FILE *f = fmemopen(buf, sizeof buf, "w");

    ck_assert_ptr_nonnull(f);
    rr_cli_usage(f);
    ck_assert_int_eq(ferror(f), 0);
    fclose(f);
    return buf;
}

/* The options that reach the same Redis, for the commands --status prints
 * to paste: every URL without its password, a prefix, TLS files; none for
 * the default URL; $REDLOCK_URL's written out. */
START_TEST(target_words)
{
    char w[2048], ca[] = "/tmp/ca b.XXXXXX", want[256];
    int fd = mkstemp(ca);

    ck_assert_int_ge(fd, 0);
    close(fd);
    PARSE_OK("-r", "redis://u:s3cr3tpw@h:1/2", "-r", "rediss://h2", "--prefix", "p$x:",
             "--tls-ca", ca, "--status", "job");
    ck_assert_int_eq(rr_cli_target_words(&cfg, w, sizeof w), 0);
    snprintf(want, sizeof want,
             " -r redis://u@h:1/2 -r rediss://h2:6379 --prefix 'p$x:' --tls-ca '%s'", ca);
    ck_assert_str_eq(w, want);
    unlink(ca);
    ck_assert_int_eq(rr_cli_target_words(&cfg, w, 60), -1);
    ck_assert_str_eq(w, " [the -r, --prefix and --tls-* options given here]");
    PARSE_OK("--status", "job");
    ck_assert_int_eq(rr_cli_target_words(&cfg, w, sizeof w), 0);
    ck_assert_str_eq(w, "");
    setenv("REDLOCK_URL", "redis-sentinel://s1,s2:26380/mymaster", 1);
    PARSE_OK("--status", "job");
    unsetenv("REDLOCK_URL");
    ck_assert_int_eq(rr_cli_target_words(&cfg, w, sizeof w), 0);
    ck_assert_str_eq(w, " -r redis-sentinel://s1:26379,s2:26380/mymaster");
    /* The one spelling of a --resolve command to paste. */
    ck_assert_str_eq(rr_cli_resolve_command(w, sizeof w, " -r redis://h:1", "retry", "d$1", "job"),
                     "redlock-run -r redis://h:1 --resolve retry --once 'd$1' job");
    ck_assert_str_eq(rr_cli_resolve_command(w, sizeof w, "", "clear", "", "=job"),
                     "redlock-run --resolve clear '=job'");
}
END_TEST

START_TEST(usage_shape)
{
    const char *h = help_text();
    const char *line = h;
    int lines = 0;

    while (*line) {
        const char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        ck_assert_msg(nl - line <= 80, "help line %d is %d columns: %.*s", lines + 1,
                      (int)(nl - line), (int)(nl - line), line);
        for (const char *p = line; p < nl; p++)
            ck_assert_msg(*p >= 0x20 && *p < 0x7f, "help line %d has a tab or control byte", lines + 1);
        lines++;
        line = nl + 1;
    }
    /* 82 + --attempts, + the warnings -q keeps (5) and --status's own exit
     * statuses (4), which t_docs compares with the README and the man page. */
    ck_assert_int_le(lines, 92);
    ck_assert_ptr_nonnull(strstr(h, "usage: redlock-run [OPTIONS] NAME [--] COMMAND [ARG...]"));
    ck_assert_ptr_nonnull(strstr(h, "redlock-run --status"));
    ck_assert_ptr_nonnull(strstr(h, "redlock-run --release"));
    const char *groups[] = { "Locking:", "Run once and state:", "Child:", "Redis connection:",
                             "Output:", "Operator modes:", "EXIT STATUS" };
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        ck_assert_msg(strstr(h, groups[i]) != NULL, "help lacks '%s'", groups[i]);
    const char *codes[] = { "\n  0 ", "128+N", "\n  64 ", "\n  65 ", "\n  69 ", "\n  75 ",
                            "\n  79 ", "\n  124 ", "\n  126 ", "\n  127 " };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        ck_assert_msg(strstr(h, codes[i]) != NULL, "help lacks exit status '%s'", codes[i]);
}
END_TEST

START_TEST(usage_lists_every_option)
{
    const char *h = help_text();
    const char *line;
    char opt[64];
    size_t n;
    bool found = false;

    /* Each option starts its own line: "  -x, --opt ..." or "      --opt ...". */
    n = (size_t)snprintf(opt, sizeof opt, "--%s", long_options[_i]);
    for (line = h; *line && !found; line = strchr(line, '\n') + 1) {
        const char *p = line;
        if (strncmp(p, "  -", 3) == 0 && p[3] != '-' && p[4] == ',')
            p += 6;
        else if (strncmp(p, "      --", 8) == 0)
            p += 6;
        else
            continue;
        found = strncmp(p, opt, n) == 0 && (p[n] == ' ' || p[n] == '=' || p[n] == '\n');
    }
    ck_assert_msg(found, "--help has no line for %s", opt);

    /* And the parser knows it. */
    int rc = PARSE(opt, "job", "true");
    if (rc != 0)
        ck_assert_msg(strstr(err, "unknown") == NULL, "parser does not know %s: %s", opt, err);
}
END_TEST

/* --help is written by hand: each row of the option table must have its
 * line, with the short form where the row has one, and the refused
 * habits (--timeout, --signal) none. */
START_TEST(usage_matches_table)
{
    const char *h = help_text();

    for (size_t i = 0; i < rr_cli_n_opts; i++) {
        const struct rr_cli_opt *o = &rr_cli_opts[i];
        char want[80];
        const char *at;

        if (o->kind == RR_CLI_REFUSED || o->kind == RR_CLI_REFUSED_BARE) {
            snprintf(want, sizeof want, " --%s ", o->name);
            ck_assert_msg(strstr(h, want) == NULL, "--help lists the refused --%s", o->name);
            continue;
        }
        if (o->letter)
            snprintf(want, sizeof want, "\n  -%c, --%s", o->letter, o->name);
        else
            snprintf(want, sizeof want, "\n      --%s", o->name);
        at = strstr(h, want);
        ck_assert_msg(at != NULL, "--help has no line '%s'", want + 1);
        at += strlen(want);
        ck_assert_msg(*at == ' ' || *at == '\n', "--help has no line for --%s", o->name);
        /* "--ttl DUR": one space, then what the value is. */
        ck_assert_msg(rr_cli_takes_value(o->kind) == (at[0] == ' ' && at[1] != ' '),
                      "--help's line for --%s does not show whether it takes a value", o->name);
    }
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("parse");

    tcase_add_checked_fixture(tc, clean_env, NULL);
    tcase_add_loop_test(tc, bad_command_lines, 0, N(bads));
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, every_long_option);
    tcase_add_test(tc, short_options_and_clusters);
    tcase_add_test(tc, name_and_command);
    tcase_add_test(tc, flock_habits);
    tcase_add_test(tc, operator_modes);
    tcase_add_test(tc, wants_check);
    tcase_add_test(tc, help_and_version_win);
    tcase_add_test(tc, once_and_stale);
    tcase_add_test(tc, endpoints);
    tcase_add_test(tc, same_socket_spellings);
    tcase_add_test(tc, environment);
    tcase_add_test(tc, reparse_many_times);
    tcase_add_test(tc, argv_left_untouched);
    suite_add_tcase(s, tc);

    tc = tcase_create("scrub");
    tcase_add_loop_test(tc, scrub_argv, 0, N(scrubs));
    suite_add_tcase(s, tc);

    tc = tcase_create("once_and_name");
    tcase_add_test(tc, expand_once);
    tcase_add_loop_test(tc, check_name_good, 0, N(good_names));
    tcase_add_loop_test(tc, check_name_bad, 0, N(bad_names));
    suite_add_tcase(s, tc);

    tc = tcase_create("usage");
    tcase_add_checked_fixture(tc, clean_env, NULL);
    tcase_add_test(tc, usage_shape);
    tcase_add_test(tc, target_words);
    tcase_add_loop_test(tc, usage_lists_every_option, 0, N(long_options));
    tcase_add_test(tc, usage_matches_table);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "cli", cli_suite, NULL, NULL };
