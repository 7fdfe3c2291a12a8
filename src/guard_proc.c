/* guard_proc.c — the guard's parsers of /proc texts (see guard.h).
 *
 * Pure functions on a buffer: no libc call, no errno, no static state, so
 * that the guard, which may share our memory and thread-local storage
 * (clone(CLONE_VM)), can call them, and the unit tests too. */
#include <stddef.h>
#include <sys/types.h>

#include "guard.h"

int rr_guard_parse_pids(const char *buf, size_t len, pid_t *out, int max)
{
    int n = 0;
    long v = -1;

    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? buf[i] : ' ';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v) * 10 + (c - '0');
            if (v > 0x3fffffff)
                v = 0x3fffffff;   /* nonsense; kept out below */
        } else {
            if (v > 0 && v < 0x3fffffff && n < max)
                out[n++] = (pid_t)v;
            v = -1;
        }
    }
    return n;
}

/* A number from buf[i..j) (digits only), or -1. */
static long long number(const char *buf, size_t i, size_t j)
{
    long long v = 0;

    if (i == j)
        return -1;
    for (; i < j; i++) {
        if (buf[i] < '0' || buf[i] > '9' || v > 0x7fffffffffffLL)
            return -1;
        v = v * 10 + (buf[i] - '0');
    }
    return v;
}

int rr_guard_parse_stat(const char *buf, size_t len, struct rr_guard_stat *st)
{
    size_t i, close = len;
    int field = 3;   /* the first after "pid (comm)" is the state */
    int got = 0;

    /* comm may hold anything, ')' and blanks too: it ends at the last ')'. */
    for (i = 0; i < len; i++)
        if (buf[i] == ')')
            close = i;
    if (close == len)
        return -1;
    i = close + 1;
    while (field <= 22) {
        while (i < len && buf[i] == ' ')
            i++;
        size_t j = i;
        while (j < len && buf[j] != ' ' && buf[j] != '\n')
            j++;
        if (j == i)
            return -1;   /* cut short */
        long long v = field == 3 ? 0 : number(buf, i, j);
        if (field == 3) {
            if (j - i != 1)
                return -1;
            st->state = buf[i];
            got++;
        } else if (field == 4) {
            if (v < 0 || v > 0x3fffffff)
                return -1;
            st->ppid = (pid_t)v;
            got++;
        } else if (field == 20) {
            if (v < 1 || v > 0x7fffffff)
                return -1;
            st->threads = (int)v;
            got++;
        } else if (field == 22) {
            if (v < 0)
                return -1;
            st->start = (unsigned long long)v;
            got++;
        }
        field++;
        i = j;
    }
    return got == 4 ? 0 : -1;
}

long rr_guard_parse_last_pid(const char *buf, size_t len)
{
    size_t j = len;

    /* "0.00 0.01 0.05 1/123 45678\n": the last field. */
    while (j > 0 && (buf[j - 1] < '0' || buf[j - 1] > '9'))
        j--;
    size_t i = j;
    while (i > 0 && buf[i - 1] >= '0' && buf[i - 1] <= '9')
        i--;
    if (i == j || (i > 0 && buf[i - 1] != ' '))
        return -1;
    long long v = number(buf, i, j);
    return v > 0x3fffffff ? -1 : (long)v;
}

void rr_guard_env_match(struct rr_guard_envmatch *m, const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\0') {
            if (m->pos >= 0 && m->mark[m->pos] == '\0')
                m->found = 1;
            m->pos = 0;   /* the next entry starts */
        } else if (m->pos >= 0) {
            m->pos = m->mark[m->pos] == c ? m->pos + 1 : -1;
        }
    }
}
