/* rr.h — what every module shares: error-buffer size, exit statuses, the
 * shared limits and connection defaults, and small helpers (util.c). */
#ifndef RR_H
#define RR_H

#include <stddef.h>
#include <stdint.h>

/* Size of the caller-owned error buffers that functions fill on failure. */
#define RR_ERRLEN 256

/* A duration that never ends (`inf`). */
#define RR_INF INT64_MAX

/* Limits shared by the command line and the modules below it. */
#define RR_MAX_ENDPOINTS 15     /* -r URLs: Redlock masters */
#define RR_NAME_MAX 200         /* bytes of a job NAME */
#define RR_ONCE_MAX 200         /* bytes of an expanded --once ID */
#define RR_LIMIT_MAX 100        /* --limit N: holders at once */

/* The connection defaults (--connect-timeout, --redis-timeout); here rather
 * than in config.h because the connection layer falls back to them too. */
#define RR_DEFAULT_CONNECT_TIMEOUT_MS 1000
#define RR_DEFAULT_REDIS_TIMEOUT_MS 500

/* Exit statuses (documented in the man page, EXIT STATUS). */
enum rr_exit {
    RR_EXIT_OK = 0,
    RR_EXIT_USAGE = 64,        /* bad option, URL, duration, name */
    RR_EXIT_STALE = 65,        /* previous run died mid-way, --on-stale refuse */
    RR_EXIT_UNAVAILABLE = 69,  /* Redis down, auth refused, no quorum by errors */
    RR_EXIT_SOFTWARE = 70,     /* internal error (a bug) */
    RR_EXIT_OSERR = 71,        /* fork/pipe failed */
    RR_EXIT_UNRECORDED = 74,   /* the command ended, but no release landed before the lease did */
    RR_EXIT_BUSY = 75,         /* lock busy or --wait ran out (-E changes it) */
    RR_EXIT_CONFIG = 78,       /* the server refused our configuration: fix it (auth, ACL, DB, TLS) */
    RR_EXIT_LOST = 79,         /* lock lost while the child ran */
    RR_EXIT_TIMEOUT = 124,     /* --max-runtime ran out */
    RR_EXIT_NOEXEC = 126,      /* command found but could not be executed */
    RR_EXIT_NOTFOUND = 127,    /* command not found */
};

/* The fewest open files a run works with: the loop's own, the guard's
 * socket and pipes, the cgroup's, up to 15 masters and their waiters'
 * connections. Below it, every mode refuses at once with 71. */
#define RR_MIN_FDS 64

/* Monotonic clock in milliseconds (uv_hrtime based, for deadlines). */
int64_t rr_now_ms(void);

/* The process's title, as ps and pkill -f read it (/proc/PID/cmdline):
 * rr_title_init remembers where main's argv lies; rr_set_title overwrites
 * it (in this process only: the guard names itself after its fork). */
void rr_title_init(int argc, char **argv);
void rr_set_title(const char *title);

/* The usual max for rr_quote. */
#define RR_QUOTE_MAX 60

/* Copy at most n bytes of s (up to its NUL; SIZE_MAX: all of it) into out
 * for an error message: printable ASCII only (anything else shows as '?'),
 * at most max bytes and fewer than outlen - 4, then "..." if s went on and
 * out has room, so a message stays one line whatever the user typed. out
 * may be s itself. Returns out. */
const char *rr_quote(const char *s, size_t n, size_t max, char *out, size_t outlen);

/* Parse the n bytes of s as a decimal number in [lo, hi]: digits only, no
 * sign or space, at least one digit; any number of leading zeros. Returns 0
 * with *out set, or -1 (also on overflow). hi < LONG_MAX. Pure. */
int rr_parse_decimal(const char *s, size_t n, long lo, long hi, long *out);

/* Who an operator is, for the audit trail of --resolve and --release:
 * "user@host" (the user behind sudo when root runs it through sudo; "uid
 * N" when the uid has no name). */
void rr_operator_name(char *buf, size_t len);

#endif
