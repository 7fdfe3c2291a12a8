/* secret.c — credentials from files and the environment (secret.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "secret.h"

#define quote rr_cli_quote

int rr_secret_read_file(const char *path, const char *what, char *buf, size_t buflen,
                        bool *loose, char *err, size_t errlen)
{
    char line[1024];
    char q[72];
    struct stat st;
    FILE *f;
    size_t n;

    f = fopen(path, "re");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s '%s': %s", what, quote(path, q, sizeof q), strerror(errno));
        return -1;
    }
    if (loose)
        *loose = fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0;
    if (fgets(line, sizeof line, f) == NULL) {
        if (ferror(f))
            snprintf(err, errlen, "cannot read %s '%s': %s", what, quote(path, q, sizeof q), strerror(errno));
        else
            snprintf(err, errlen, "%s '%s' is empty; put the password on its first line", what, quote(path, q, sizeof q));
        goto fail;
    }
    n = strlen(line);
    if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    else if (!feof(f) && fgetc(f) != EOF) {
        snprintf(err, errlen, "password in '%s' is longer than %zu bytes", quote(path, q, sizeof q), buflen - 1);
        goto fail;
    }
    if (n > 0 && line[n - 1] == '\r')
        line[--n] = '\0';
    if (n == 0) {
        snprintf(err, errlen, "%s '%s' is empty; put the password on its first line", what, quote(path, q, sizeof q));
        goto fail;
    }
    if (n >= buflen) {
        snprintf(err, errlen, "password in '%s' is longer than %zu bytes", quote(path, q, sizeof q), buflen - 1);
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

/* One user/password pair: the file wins over the environment. */
static int resolve_pair(const char *uvar, const char *pvar, const char *pwfile, const char *what,
                        char *user, size_t ulen, bool *has_user,
                        char *pw, size_t plen, bool *has_pw, const char **loose_file,
                        char *err, size_t errlen)
{
    const char *v;

    if ((v = getenv(uvar)) != NULL && *v) {
        if (strlen(v) >= ulen) {
            snprintf(err, errlen, "$%s is longer than %zu bytes", uvar, ulen - 1);
            return -1;
        }
        snprintf(user, ulen, "%s", v);
        *has_user = true;
    }
    if (pwfile) {
        bool loose = false;
        if (rr_secret_read_file(pwfile, what, pw, plen, &loose, err, errlen) < 0)
            return -1;
        *has_pw = true;
        if (loose && !*loose_file)
            *loose_file = pwfile;
    } else if ((v = getenv(pvar)) != NULL && *v) {
        if (strlen(v) >= plen) {
            snprintf(err, errlen, "$%s is longer than %zu bytes", pvar, plen - 1);
            return -1;
        }
        snprintf(pw, plen, "%s", v);
        *has_pw = true;
    }
    return 0;
}

int rr_secret_resolve(struct rr_config *cfg, const char *pwfile, const char *sentinel_pwfile,
                      char *err, size_t errlen)
{
    if (resolve_pair("REDLOCK_USER", "REDLOCK_PASSWORD", pwfile, "password file",
                     cfg->user, sizeof cfg->user, &cfg->has_user,
                     cfg->password, sizeof cfg->password, &cfg->has_password,
                     &cfg->loose_secret_file, err, errlen) < 0)
        return -1;
    return resolve_pair("REDLOCK_SENTINEL_USER", "REDLOCK_SENTINEL_PASSWORD", sentinel_pwfile,
                        "sentinel password file",
                        cfg->sentinel_user, sizeof cfg->sentinel_user, &cfg->has_sentinel_user,
                        cfg->sentinel_password, sizeof cfg->sentinel_password,
                        &cfg->has_sentinel_password, &cfg->loose_secret_file, err, errlen);
}
