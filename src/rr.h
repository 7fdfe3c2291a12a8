/* rr.h — things every module shares: error-buffer size, exit statuses. */
#ifndef RR_H
#define RR_H

#include <stddef.h>
#include <stdint.h>

/* Size of the caller-owned error buffers that functions fill on failure. */
#define RR_ERRLEN 256

/* A duration that never ends (`inf`). */
#define RR_INF INT64_MAX

/* Exit statuses (documented in the man page, EXIT STATUS). */
enum rr_exit {
    RR_EXIT_OK = 0,
    RR_EXIT_USAGE = 64,        /* bad option, URL, duration, name */
    RR_EXIT_STALE = 65,        /* previous run died mid-way, --on-stale refuse */
    RR_EXIT_UNAVAILABLE = 69,  /* Redis down, auth refused, no quorum by errors */
    RR_EXIT_SOFTWARE = 70,     /* internal error (a bug) */
    RR_EXIT_OSERR = 71,        /* fork/pipe failed */
    RR_EXIT_BUSY = 75,         /* lock busy or --wait ran out (-E changes it) */
    RR_EXIT_CONFIG = 78,       /* the server refused our configuration: fix it (auth, ACL, DB, TLS) */
    RR_EXIT_LOST = 79,         /* lock lost while the child ran */
    RR_EXIT_TIMEOUT = 124,     /* --max-runtime ran out */
    RR_EXIT_NOEXEC = 126,      /* command found but could not be executed */
    RR_EXIT_NOTFOUND = 127,    /* command not found */
};

/* Monotonic clock in milliseconds (uv_hrtime based, for deadlines). */
int64_t rr_now_ms(void);

#endif
