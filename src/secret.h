/* secret.h — credentials from files and the environment, never argv. */
#ifndef RR_SECRET_H
#define RR_SECRET_H

#include <stdbool.h>
#include <stddef.h>

struct rr_config;

/* Read the first line of path (without its line ending) into buf. what
 * names it in messages ("password file"). *loose (if not NULL) tells
 * whether others than the owner may read or write the file. Returns 0, or
 * -1 with a one-line reason that never holds the file's content. buf is
 * wiped on failure. */
int rr_secret_read_file(const char *path, const char *what, char *buf, size_t buflen,
                        bool *loose, char *err, size_t errlen);

/* Fill cfg's credentials: the data nodes' from pwfile or $REDLOCK_PASSWORD
 * (user: $REDLOCK_USER), the sentinels' from sentinel_pwfile or
 * $REDLOCK_SENTINEL_PASSWORD (user: $REDLOCK_SENTINEL_USER). A file wins
 * over the environment. Returns 0, or -1 with a message (exit 64). */
int rr_secret_resolve(struct rr_config *cfg, const char *pwfile, const char *sentinel_pwfile,
                      char *err, size_t errlen);

#endif
