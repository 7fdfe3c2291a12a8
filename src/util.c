/* util.c — small shared helpers (rr.h). */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "rr.h"

int64_t rr_now_ms(void)
{
    return (int64_t)(uv_hrtime() / 1000000u);
}

static char *title_at;
static size_t title_len;

void rr_title_init(int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return;
    /* The strings lie end to end from argv[0]: as far as they do. */
    char *end = argv[0] + strlen(argv[0]);
    for (int i = 1; i < argc && argv[i] == end + 1; i++)
        end = argv[i] + strlen(argv[i]);
    title_at = argv[0];
    title_len = (size_t)(end - argv[0]) + 1;
}

void rr_set_title(const char *title)
{
    if (!title_at)
        return;
    memset(title_at, 0, title_len);
    memcpy(title_at, title, strnlen(title, title_len - 1));
}

const char *rr_quote(const char *s, size_t n, size_t max, char *out, size_t outlen)
{
    size_t i, o = 0;

    for (i = 0; i < n && s[i] && o + 4 < outlen && i < max; i++)
        out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (i < n && s[i] && o + 4 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

int rr_parse_decimal(const char *s, size_t n, long lo, long hi, long *out)
{
    long v = 0;
    size_t i;

    if (n == 0)
        return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        /* Past hi the value only matters as "too large": stop growing it,
         * so no number of digits can overflow. */
        if (v > hi)
            continue;
        v = v > (LONG_MAX - (s[i] - '0')) / 10 ? LONG_MAX : v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

void rr_operator_name(char *buf, size_t len)
{
    char host[200] = "unknown";
    const char *user = getuid() == 0 ? getenv("SUDO_USER") : NULL;
    struct passwd *pw = user && *user ? NULL : getpwuid(getuid());
    char uid[24];

    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    if (!user || !*user) {
        snprintf(uid, sizeof uid, "uid %ld", (long)getuid());
        user = pw && pw->pw_name ? pw->pw_name : uid;
    }
    snprintf(buf, len, "%.40s@%s", user, host);
}
