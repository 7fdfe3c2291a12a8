/* secret.h — a password from a file, never from argv. Knows nothing of
 * the configuration; cli_check.c decides what fills which credential. */
#ifndef RR_SECRET_H
#define RR_SECRET_H

#include <stdbool.h>
#include <stddef.h>

/* Read the first line of path (without its line ending) into buf. what
 * names it in messages ("password file"). *loose (if not NULL) tells
 * whether others than the owner may read or write the file. Returns 0, or
 * -1 with a one-line reason that never holds the file's content. buf is
 * wiped on failure. */
int rr_secret_read_file(const char *path, const char *what, char *buf, size_t buflen,
                        bool *loose, char *err, size_t errlen);

#endif
