/* witness — the child that scripts/chaos runs under redlock-run.
 *
 *   witness LOG COUNTER [SINK] [--hold MS]
 *
 * 1. appends  "start <mono_ns> <id> <fence> pid=<pid>"  to LOG;
 * 2. the critical section: reads COUNTER ("<value> <writer id>"), sleeps
 *    MS milliseconds (default 50), writes "<value+1> <id>" — an unsynchronised
 *    read-sleep-write, so two overlapping sections lose an update;
 * 3. with SINK (a directory): a fenced resource with its own mutual
 *    exclusion (flock on SINK/high). If our fence is lower than the highest
 *    fence the sink has seen, the write is refused ("reject ..." in SINK/log),
 *    otherwise it is recorded ("accept ...") and becomes the highest;
 * 4. appends "end <mono_ns> <id> <fence> pid=<pid> read=<value> prev=<writer>"
 *    to LOG.
 *
 * <id> is $RR_ID (set by the harness, one per redlock-run invocation), <fence>
 * is $REDLOCK_FENCE ("-" when unset). Times are CLOCK_MONOTONIC nanoseconds,
 * the same clock as the harness's time.monotonic_ns(). Each log line is one
 * write(2) on an O_APPEND descriptor, so lines from concurrent witnesses never
 * interleave. Signals keep their default action: SIGTERM kills the witness in
 * the middle of its critical section, which leaves a "start" without an "end";
 * the checker closes such a section at the death time the harness observed.
 *
 * Exit status: 0, or 2 on a usage error, 3 on an I/O error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "witness: %s %s: %s\n", what, path ? path : "", strerror(errno));
    exit(3);
}

static void write_all(int fd, const char *buf, size_t len, const char *path)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("write", path);
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* One line, one write(2), O_APPEND: atomic with respect to other appenders. */
static void append_line(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

    if (fd < 0)
        die("open", path);
    write_all(fd, line, strlen(line), path);
    close(fd);
}

static size_t read_small(int fd, char *buf, size_t cap, const char *path)
{
    size_t got = 0;

    while (got + 1 < cap) {
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("read", path);
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return got;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int parse_ll(const char *s, long long *out)
{
    char *end;

    if (!s || !*s)
        return 0;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno == 0 && *end == '\0';
}

static void usage(void)
{
    fprintf(stderr, "usage: witness LOG COUNTER [SINK] [--hold MS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *pos[3] = { NULL, NULL, NULL };
    int npos = 0;
    long long hold = 50;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hold") == 0) {
            if (i + 1 >= argc || !parse_ll(argv[i + 1], &hold) || hold < 0)
                usage();
            i++;
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            usage();
        }
    }
    if (npos < 2)
        usage();
    const char *logp = pos[0], *counterp = pos[1], *sinkp = pos[2];
    const char *id = getenv("RR_ID");
    const char *fence_s = getenv("REDLOCK_FENCE");
    if (!id || !*id)
        id = "-";
    if (!fence_s || !*fence_s)
        fence_s = "-";
    int pid = (int)getpid();
    char line[512];

    snprintf(line, sizeof(line), "start %lld %s %s pid=%d\n", mono_ns(), id, fence_s, pid);
    append_line(logp, line);

    /* The critical section: read, sleep, write — deliberately unsynchronised. */
    long long value = 0;
    char prev[128] = "-";
    {
        char buf[256];
        int fd = open(counterp, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            read_small(fd, buf, sizeof(buf), counterp);
            close(fd);
            char who[128];
            int n = sscanf(buf, "%lld %127s", &value, who);
            if (n < 1)
                value = 0;
            if (n == 2)
                snprintf(prev, sizeof(prev), "%s", who);
        } else if (errno != ENOENT) {
            die("open", counterp);
        }
    }
    sleep_ms((long)hold);
    {
        /* Write a temporary file and rename it over COUNTER: a reader sees
         * either the old or the new content, never half of one. */
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp.%d", counterp, pid);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            die("open", tmp);
        snprintf(line, sizeof(line), "%lld %s\n", value + 1, id);
        write_all(fd, line, strlen(line), tmp);
        close(fd);
        if (rename(tmp, counterp) != 0)
            die("rename", counterp);
    }

    /* The fenced sink: its own mutual exclusion (flock), its own check. */
    if (sinkp) {
        char highp[4096], sinklog[4096], buf[64];
        long long fence = -1, highest = -1;
        snprintf(highp, sizeof(highp), "%s/high", sinkp);
        snprintf(sinklog, sizeof(sinklog), "%s/log", sinkp);
        if (!parse_ll(fence_s, &fence))
            fence = -1;
        int fd = open(highp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            die("open", highp);
        while (flock(fd, LOCK_EX) != 0)
            if (errno != EINTR)
                die("flock", highp);
        read_small(fd, buf, sizeof(buf), highp);
        if (sscanf(buf, "%lld", &highest) != 1)
            highest = -1;
        if (fence < 0 || fence < highest) {
            snprintf(line, sizeof(line), "reject %lld %s highest=%lld\n", fence, id, highest);
            append_line(sinklog, line);
        } else {
            snprintf(buf, sizeof(buf), "%lld\n", fence);
            if (ftruncate(fd, 0) != 0)
                die("ftruncate", highp);
            if (pwrite(fd, buf, strlen(buf), 0) != (ssize_t)strlen(buf))
                die("pwrite", highp);
            snprintf(line, sizeof(line), "accept %lld %s highest=%lld\n", fence, id, highest);
            append_line(sinklog, line);
        }
        flock(fd, LOCK_UN);
        close(fd);
    }

    snprintf(line, sizeof(line), "end %lld %s %s pid=%d read=%lld prev=%s\n", mono_ns(), id,
             fence_s, pid, value, prev);
    append_line(logp, line);
    return 0;
}
