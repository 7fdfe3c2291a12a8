/* witness — the child that scripts/chaos runs under redlock-run.
 *
 *   witness LOG COUNTER [SINK] [--klock PATH] [--hold MS] [--exit N]
 *
 * 0. with --klock: the kernel's own witness of overlaps. It opens
 *    PATH.<slot> ($REDLOCK_SLOT; PATH alone when unset), without O_CLOEXEC
 *    (whatever it might start inherits it), and tries flock(LOCK_EX |
 *    LOCK_NB). Taken: it appends "klock <mono_ns> <id> <fence> pid=<pid>
 *    file=<name>". Held by someone else (who is alive at this instant,
 *    or stopped: the kernel frees a flock when the last descriptor of
 *    its holder closes, which is when it dies): "kclash <mono_ns> <id>
 *    <fence> pid=<pid> file=<name> holder=<pid from /proc/locks, or ?>",
 *    and it goes on as before (it does not wait). The lock is taken before
 *    the start stamp and given back (LOCK_UN) after the critical section,
 *    before the end stamp: it covers the whole section, and a witness
 *    killed in its section gives it back only by dying;
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
 * Exit status: 0 (N with --exit N: a command that did its work, then
 * failed, for the --once attempt budget's scenarios), or 2 on a usage
 * error, 3 on an I/O error.
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
#include <sys/sysmacros.h>
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
    fprintf(stderr, "usage: witness LOG COUNTER [SINK] [--klock PATH] [--hold MS] [--exit N]\n");
    exit(2);
}

/* The pid /proc/locks names as the holder of the flock on fd's file, or
 * 0: "N: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF" (a
 * waiter's line has "->" after "N:"). */
static long lock_holder(int fd)
{
    struct stat st;
    char buf[256];
    long found = 0;

    if (fstat(fd, &st) != 0)
        return 0;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    while (!found && fgets(buf, sizeof(buf), f)) {
        char kind[16], arrow[4];
        unsigned maj, min;
        unsigned long long ino;
        long pid;

        if (sscanf(buf, "%*d: %3s", arrow) == 1 && strcmp(arrow, "->") == 0)
            continue;
        if (sscanf(buf, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min, &ino) == 5
            && strcmp(kind, "FLOCK") == 0 && maj == major(st.st_dev) && min == minor(st.st_dev)
            && ino == (unsigned long long)st.st_ino)
            found = pid;
    }
    fclose(f);
    return found;
}

/* Step 0 (see the top): -1 without --klock, else the descriptor, locked
 * or not; the record says which. */
static int klock_take(const char *base, const char *logp, const char *id, const char *fence_s)
{
    char path[4096], line[4608], holder[32];
    const char *slot = getenv("REDLOCK_SLOT");

    if (!base)
        return -1;
    if (slot && *slot)
        snprintf(path, sizeof(path), "%s.%s", base, slot);
    else
        snprintf(path, sizeof(path), "%s", base);
    /* No O_CLOEXEC: what the witness starts holds the lock with it. */
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0)
        die("open", path);
    int rc;
    while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0 && errno != EWOULDBLOCK)
        die("flock", path);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (rc == 0) {
        snprintf(line, sizeof(line), "klock %lld %s %s pid=%d file=%s\n", mono_ns(), id, fence_s,
                 (int)getpid(), name);
    } else {
        long long now = mono_ns();
        long pid = lock_holder(fd);
        if (pid > 0)
            snprintf(holder, sizeof(holder), "%ld", pid);
        else
            snprintf(holder, sizeof(holder), "?");
        snprintf(line, sizeof(line), "kclash %lld %s %s pid=%d file=%s holder=%s\n", now, id,
                 fence_s, (int)getpid(), name, holder);
    }
    append_line(logp, line);
    return fd;
}

int main(int argc, char **argv)
{
    const char *pos[3] = { NULL, NULL, NULL };
    const char *klock = NULL;
    int npos = 0;
    long long hold = 50, status = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hold") == 0) {
            if (i + 1 >= argc || !parse_ll(argv[i + 1], &hold) || hold < 0)
                usage();
            i++;
        } else if (strcmp(argv[i], "--exit") == 0) {
            if (i + 1 >= argc || !parse_ll(argv[i + 1], &status) || status < 0 || status > 125)
                usage();
            i++;
        } else if (strcmp(argv[i], "--klock") == 0) {
            if (i + 1 >= argc || !*argv[i + 1])
                usage();
            klock = argv[++i];
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

    int kfd = klock_take(klock, logp, id, fence_s);
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

    /* The section is over: give the kernel's lock back before the end
     * stamp, so that it never outlasts the section in the log. The
     * descriptor stays open until we exit. */
    if (kfd >= 0)
        flock(kfd, LOCK_UN);

    snprintf(line, sizeof(line), "end %lld %s %s pid=%d read=%lld prev=%s\n", mono_ns(), id,
             fence_s, pid, value, prev);
    append_line(logp, line);
    return (int)status;
}
