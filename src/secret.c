/* secret.c — a password from a file (secret.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rr.h"
#include "secret.h"

int rr_secret_read_file(const char *path, const char *what, char *buf, size_t buflen,
                        bool *loose, char *err, size_t errlen)
{
    char line[1024];
    char q[72];
    struct stat st;
    FILE *f;
    size_t n;

    rr_quote(path, SIZE_MAX, RR_QUOTE_MAX, q, sizeof q);
    f = fopen(path, "re");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s '%s': %s", what, q, strerror(errno));
        return -1;
    }
    if (loose)
        *loose = fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0;
    if (fgets(line, sizeof line, f) == NULL) {
        if (ferror(f))
            snprintf(err, errlen, "cannot read %s '%s': %s", what, q, strerror(errno));
        else
            snprintf(err, errlen, "%s '%s' is empty; put the password on its first line", what, q);
        goto fail;
    }
    n = strlen(line);
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    else if (!feof(f) && fgetc(f) != EOF) {
        snprintf(err, errlen, "password in '%s' is longer than %zu bytes", q, buflen - 1);
        goto fail;
    }
    if (n > 0 && line[n - 1] == '\r')
        line[--n] = '\0';
    if (n == 0) {
        snprintf(err, errlen, "%s '%s' is empty; put the password on its first line", what, q);
        goto fail;
    }
    if (n >= buflen) {
        snprintf(err, errlen, "password in '%s' is longer than %zu bytes", q, buflen - 1);
        goto fail;
    }
    memcpy(buf, line, n + 1);
    explicit_bzero(line, sizeof line);
    fclose(f);
    return 0;

fail:
    explicit_bzero(line, sizeof line);
    explicit_bzero(buf, buflen);
    fclose(f);
    return -1;
}
