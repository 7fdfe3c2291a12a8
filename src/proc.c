/* proc.c — the one /proc reader (see proc.h).
 *
 * No libc call that touches its state, no errno, no static data: the guard,
 * which may share our memory and thread-local storage (clone(CLONE_VM)),
 * calls these, and the unit tests too. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/types.h>

#include "proc.h"
#include "rawsys.h"

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

/* "/proc/" + number + suffix into buf; returns buf. */
static char *proc_path(char *buf, size_t len, long pid, const char *suffix)
{
    char num[24];
    size_t k = 0, o = 0;
    const char *pre = "/proc/";

    do {
        num[k++] = (char)('0' + pid % 10);
        pid /= 10;
    } while (pid > 0 && k < sizeof num);
    for (; *pre && o + 1 < len; pre++)
        buf[o++] = *pre;
    while (k > 0 && o + 1 < len)
        buf[o++] = num[--k];
    for (; *suffix && o + 1 < len; suffix++)
        buf[o++] = *suffix;
    buf[o] = '\0';
    return buf;
}

struct dirent64_raw {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Append the pids of /proc/PID/task/TID/children (tid: its digits) to
 * out[*n..max), less skip. -1 if the file cannot be opened. */
static int thread_children(pid_t pid, const char *tid, pid_t skip, pid_t *out, int *n, int max)
{
    char path[96], sub[160], kids[4096];
    size_t o = 0;
    const char *s = proc_path(path, sizeof path, pid, "/task/");

    for (; *s && o + 1 < sizeof sub; s++)
        sub[o++] = *s;
    for (s = tid; *s && o + 1 < sizeof sub; s++)
        sub[o++] = *s;
    for (s = "/children"; *s && o + 1 < sizeof sub; s++)
        sub[o++] = *s;
    sub[o] = '\0';
    long fd = RR_SYS(SYS_openat, AT_FDCWD, sub, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long r = RR_SYS(SYS_read, fd, kids, sizeof kids);
    RR_SYS(SYS_close, fd, 0, 0);
    if (r <= 0)
        return 0;
    pid_t tmp[RR_PROC_MAX];
    int k = rr_proc_parse_pids(kids, (size_t)r, tmp, RR_PROC_MAX);
    for (int i = 0; i < k && *n < max; i++)
        if (tmp[i] != skip)
            out[(*n)++] = tmp[i];
    return 0;
}

int rr_proc_children(pid_t pid, pid_t skip, pid_t *out, int max)
{
    char path[96], dents[2048];
    int n = 0;
    long dfd;

    dfd = RR_SYS(SYS_openat, AT_FDCWD, proc_path(path, sizeof path, pid, "/task"),
                 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    for (;;) {
        long got = RR_SYS(SYS_getdents64, dfd, dents, sizeof dents);
        if (got <= 0)
            break;
        for (long off = 0; off < got;) {
            const struct dirent64_raw *d = (const void *)(dents + off);
            off += d->d_reclen;
            /* A thread that is gone has no children file: skipped. */
            if (d->d_name[0] >= '0' && d->d_name[0] <= '9')
                thread_children(pid, d->d_name, skip, out, &n, max);
        }
    }
    RR_SYS(SYS_close, dfd, 0, 0);
    return n;
}

int rr_proc_own_children(pid_t self, pid_t *out, int max)
{
    char path[96];
    int n = 0;

    /* The one thread's id is the pid: its digits follow "/proc/". */
    const char *tid = proc_path(path, sizeof path, self, "") + 6;
    return thread_children(self, tid, 0, out, &n, max) < 0 ? -1 : n;
}

int rr_proc_read_stat(pid_t pid, struct rr_proc_stat *st)
{
    char path[48], buf[1024];
    long fd = RR_SYS(SYS_openat, AT_FDCWD, proc_path(path, sizeof path, pid, "/stat"),
                     O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long r = RR_SYS(SYS_read, fd, buf, sizeof buf);
    RR_SYS(SYS_close, fd, 0, 0);
    return r > 0 ? rr_proc_parse_stat(buf, (size_t)r, st) : -1;
}

void rr_proc_comm(pid_t pid, char *buf, size_t len)
{
    char path[64];
    long r = -1;

    if (len == 0)
        return;
    long fd = RR_SYS(SYS_openat, AT_FDCWD, proc_path(path, sizeof path, pid, "/comm"),
                     O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        r = RR_SYS(SYS_read, fd, buf, len - 1);
        RR_SYS(SYS_close, fd, 0, 0);
    }
    if (r <= 0) {
        if (len > 1)
            *buf++ = '?';
        *buf = '\0';
        return;
    }
    /* One line: the name ends at its newline. */
    size_t i = 0;
    while (i < (size_t)r && buf[i] != '\n')
        i++;
    buf[i] = '\0';
}
