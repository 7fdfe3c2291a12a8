/* cli_impl.h — what the parts of the command line share, and nobody else:
 * the option table (cli.c), what the getopt loop saw, and the checks after
 * the loop (cli_check.c). cli.c uses cli_check.c, never the other way. */
#ifndef RR_CLI_IMPL_H
#define RR_CLI_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Room for a nested message once a prefix such as "--connect-timeout: " or
 * "$REDLOCK_URL: " is put in front of it, so the whole still fits. */
#define RR_CLI_INNER_ERRLEN (RR_ERRLEN - 32)
#define RR_CLI_USAGE_RUN "usage: redlock-run [OPTIONS] NAME [--] COMMAND [ARG...]"

/* Options that are judged after the loop only by whether they were given. */
enum rr_cli_given {
    RR_GIVEN_RENEW = 1 << 0,
    RR_GIVEN_TIMEOUT = 1 << 1,    /* --max-runtime */
    RR_GIVEN_QUIET = 1 << 2,
    RR_GIVEN_STATUS = 1 << 3,
    RR_GIVEN_RELEASE = 1 << 4,
    RR_GIVEN_RESOLVE = 1 << 5,
    RR_GIVEN_HELP = 1 << 6,
    RR_GIVEN_VERSION = 1 << 7,
    RR_GIVEN_ONCE = 1 << 8,
    RR_GIVEN_LIMIT = 1 << 9,
    RR_GIVEN_MAX_AGE = 1 << 10,
    RR_GIVEN_LIST = 1 << 11,
    RR_GIVEN_CONTAIN = 1 << 12,
    RR_GIVEN_WAIT = 1 << 13,
    RR_GIVEN_NONBLOCK = 1 << 14,  /* flock's -n */
    RR_GIVEN_ATTEMPTS = 1 << 15,
    RR_GIVEN_WARN_HELD = 1 << 16,
};

/* What the loop saw, judged after it. */
struct rr_cli_seen {
    const char *redis[RR_MAX_ENDPOINTS * 4];
    int n_redis;
    bool too_many_redis;
    const char *password_file, *sentinel_password_file;
    int verbose;
    unsigned given;               /* enum rr_cli_given bits */
};

/* What an option's value is, and so how it is taken. */
enum rr_cli_kind {
    RR_CLI_MARK,        /* no value: only its mark is set */
    RR_CLI_FLAG,        /* no value: a bool field becomes true */
    RR_CLI_COUNT,       /* no value: an int field counts the times given */
    RR_CLI_DURATION,    /* an int64_t field of milliseconds (duration.h) */
    RR_CLI_STRING,      /* a const char * field, pointing into argv */
    RR_CLI_FILE,        /* the same, but not empty */
    RR_CLI_NUMBER,      /* an int field, a decimal in [lo, hi] */
    RR_CLI_CHOICE,      /* an enum field, one of two or three names */
    RR_CLI_URL,         /* one more --redis value, judged after the loop */
    RR_CLI_REFUSED,     /* not an option: refused with a hint (its value too) */
    RR_CLI_REFUSED_BARE, /* the same, for a habit that takes no value */
};

enum rr_cli_where { RR_CLI_IN_CONFIG, RR_CLI_IN_SEEN };

struct rr_cli_choice {
    const char *name;
    int value;
};

/* One row of the option table. */
struct rr_cli_opt {
    const char *name;             /* long name, without "--" (the contract) */
    char letter;                  /* short form, or 0 */
    enum rr_cli_kind kind;
    enum rr_cli_where where;      /* the field is in struct rr_config or rr_cli_seen */
    size_t field;                 /* its offset there (not for MARK, URL, REFUSED) */
    unsigned mark;                /* RR_GIVEN_* bits set when given, or 0 */
    long lo, hi;                  /* NUMBER: the range */
    const char *noun;             /* NUMBER: " of holders", as in "a number of holders" */
    struct rr_cli_choice choices[4]; /* CHOICE: two to four (name NULL: none) */
    const char *refusal;          /* REFUSED, REFUSED_BARE: the whole message */
};

/* The option table (cli.c), in --help order; rr_cli_n_opts rows. */
extern const struct rr_cli_opt rr_cli_opts[];
extern const size_t rr_cli_n_opts;

/* Does an option of this kind take a value? */
bool rr_cli_takes_value(enum rr_cli_kind kind);

/* Length of the first URL in a comma-separated --redis value. A comma only
 * separates URLs when a scheme follows it. */
size_t rr_cli_url_len(const char *s);

/* Parse arg as the decimal value of --opt in [lo, hi]. Returns 0, or -1
 * with "--opt must be a number<noun> from lo to hi (got 'arg')". */
int rr_cli_number(const char *opt, const char *noun, const char *arg, long lo, long hi,
                  long *out, char *err, size_t errlen);

/* Set the defaults (config.h) that are not zero, before the loop: cfg is
 * all zero already. */
void rr_cli_defaults(struct rr_config *cfg);

/* Judge what the loop saw: modes, NAME and COMMAND from argv[next], times,
 * --once, the URLs, TLS options and credentials; fill the rest of cfg.
 * Returns 0, or -1 with a one-line message. */
int rr_cli_check(struct rr_config *cfg, const struct rr_cli_seen *sn, int argc, char **argv,
                 int next, char *err, size_t errlen);

#endif
