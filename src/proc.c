/* proc.c — the one /proc reader (see proc.h): pure parsers, and small
 * reads with open/read/close and no state of its own. */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "proc.h"

int rr_proc_parse_pids(const char *buf, size_t len, pid_t *out, int max)
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

int rr_proc_parse_stat(const char *buf, size_t len, struct rr_proc_stat *st)
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

/* Read up to len bytes of a small /proc file; the count, or -1. */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, len);
    close(fd);
    return r;
}

/* Append the pids of /proc/PID/task/TID/children to out[*n..max), less
 * skip. -1 if the file cannot be read. */
static int thread_children(pid_t pid, const char *tid, pid_t skip, pid_t *out, int *n, int max)
{
    char path[96], kids[4096];

    snprintf(path, sizeof path, "/proc/%ld/task/%s/children", (long)pid, tid);
    ssize_t r = slurp(path, kids, sizeof kids);
    if (r < 0)
        return -1;
    pid_t tmp[RR_PROC_MAX];
    int k = rr_proc_parse_pids(kids, (size_t)r, tmp, RR_PROC_MAX);
    for (int i = 0; i < k && *n < max; i++)
        if (tmp[i] != skip)
            out[(*n)++] = tmp[i];
    return 0;
}

int rr_proc_children(pid_t pid, pid_t skip, pid_t *out, int max)
{
    char path[64];
    int n = 0;

    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    /* A thread that is gone has no children file: skipped. */
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            thread_children(pid, e->d_name, skip, out, &n, max);
    closedir(d);
    return n;
}

int rr_proc_own_children(pid_t self, pid_t *out, int max)
{
    char tid[24];
    int n = 0;

    snprintf(tid, sizeof tid, "%ld", (long)self);
    return thread_children(self, tid, 0, out, &n, max) < 0 ? -1 : n;
}

int rr_proc_read_stat(pid_t pid, struct rr_proc_stat *st)
{
    char path[48], buf[1024];

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    ssize_t r = slurp(path, buf, sizeof buf);
    return r > 0 ? rr_proc_parse_stat(buf, (size_t)r, st) : -1;
}

void rr_proc_comm(pid_t pid, char *buf, size_t len)
{
    char path[64];

    if (len == 0)
        return;
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
    ssize_t r = slurp(path, buf, len - 1);
    if (r <= 0) {
        snprintf(buf, len, "?");
        return;
    }
    /* One line: the name ends at its newline. */
    buf[r] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}
