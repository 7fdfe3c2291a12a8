/* cli.h — the command line: options, validation, --help. */
#ifndef RR_CLI_H
#define RR_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

/* Parse argv into cfg (getopt_long with a leading '+', so parsing stops at
 * NAME's command). Reads $REDLOCK_URL, $REDLOCK_PASSWORD, $REDLOCK_USER and
 * --password-file. Validates conflicts after the loop. Never prints or exits.
 * Returns 0, or -1 with a one-line message in err (exit status 64). cfg
 * points into argv; argv itself is left untouched (see rr_cli_scrub_argv). */
int rr_cli_parse(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen);

/* The same into a cfg that is all zero already (a static one, as main's):
 * the 54 KB are not written over, so the pages nobody uses are never
 * touched (14 page faults fewer a run). */
int rr_cli_parse_zeroed(int argc, char **argv, struct rr_config *cfg, char *err, size_t errlen);

/* Hide passwords that were given on the command line in URLs, so they do not
 * show in /proc/PID/cmdline or ps(1). Call after rr_cli_parse. */
void rr_cli_scrub_argv(int argc, char **argv);

/* The same for the environment, in the memory /proc/PID/environ shows: the
 * values of $REDLOCK_PASSWORD, $REDLOCK_SENTINEL_PASSWORD and
 * $REDISCLI_AUTH are zeroed (they read as empty from then on), a password
 * in $REDLOCK_URL's URLs is hidden as in argv. Call after rr_cli_parse,
 * which copied what it needs; the guard, forked later, inherits the
 * scrubbed memory. */
void rr_cli_scrub_env(void);

/* Whether argv (before any "--") asks for --status --max-age, a monitoring
 * check, whose usage errors must read as UNKNOWN (3) to its caller even when
 * rr_cli_parse refused it. Pure. */
bool rr_cli_wants_check(int argc, const char *const *argv);

/* The options of cfg that name the lock service and reach it, as words a
 * POSIX shell reads back, each after a space (cli_again.c): every -r URL
 * (without its password; none when the built-in default was used, so
 * $REDLOCK_URL's are written out too), --prefix if not the default,
 * --password-file, --sentinel-password-file and the --tls-* options. For
 * the commands --status prints to paste: they must reach the same Redis.
 * Into out (len bytes); -1 if they do not fit, and then out says which
 * options to add (never nothing: the command would reach another Redis).
 * Pure. */
int rr_cli_target_words(const struct rr_config *cfg, char *out, size_t len);

/* "redlock-run AGAIN --resolve VERB [--once ID] NAME", a command to paste
 * into out (len bytes): again from rr_cli_target_words, ID (NULL or "":
 * none) and NAME quoted for the shell (give them escaped for the terminal
 * when they come from Redis). The one spelling of every --resolve command
 * printed. Returns out. Pure. */
const char *rr_cli_resolve_command(char *out, size_t len, const char *again, const char *verb,
                                   const char *id, const char *name);

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

/* Is a password configured, for any endpoint? (diag.c: then "not
 * authenticated" means the password was refused.) */
bool rr_cli_gave_password(const struct rr_config *cfg);

#endif
