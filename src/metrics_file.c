/* metrics_file.c — the --metrics-file on disk (see metrics_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics_file.h"

/* A file of ours holds a few kilobytes a lock; a larger one is not ours,
 * and is never overwritten (which would drop what we could not read). */
#define MAX_FILE (4 * 1024 * 1024)

/* How long a run waits for another to let go of the directory's flock, and
 * how often it tries. Anyone who can open the directory can hold that
 * lock (in /tmp, any local user): past the bound the run's figures are not
 * written and it says so, rather than hang after its command ended. */
#define LOCK_WAIT_MS 1000
#define LOCK_STEP_MS 20

/* The error for path, with what to do about errno e in its directory. */
static int fail_errno(char *err, size_t errlen, const char *path, const char *dir, int e)
{
    const char *what = e == ENOENT                               ? "create the directory"
                       : e == EACCES || e == EPERM || e == EROFS ? "let this user write to"
                       : e == ENOSPC || e == EDQUOT ? "free some space on the file system of"
                                                    : "check";

    snprintf(err, errlen, "cannot write --metrics-file %s: %s; %s %s", path, strerror(e), what,
             dir);
    return -1;
}

/* path's directory, for the flock and the messages. */
static void dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

/* What a file of type mode is called in a message. */
static const char *kind_of(mode_t mode)
{
    return S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a directory"
           : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "not a regular file";
}

/* Open what is at path to read it, without following a symbolic link and
 * without blocking (a FIFO planted there would wait for a writer forever):
 * only a regular file is ours. Returns the fd, -1 when there is no file
 * yet (*none set), or -2 with err. */
static int open_existing(const char *path, const char *dir, bool *none, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat sb;

    *none = false;
    if (fd < 0 && errno == ENOENT) {
        *none = true;
        return -1;
    }
    if (fd < 0 && errno == ELOOP && lstat(path, &sb) == 0)
        sb.st_mode = S_IFLNK;
    else if (fd < 0) {
        fail_errno(err, errlen, path, dir, errno);
        return -2;
    } else if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        fail_errno(err, errlen, path, dir, e);
        return -2;
    }
    if (fd >= 0 && S_ISREG(sb.st_mode))
        return fd;
    if (fd >= 0)
        close(fd);
    snprintf(err, errlen, "cannot write --metrics-file %s: it is %s, not a regular file, and is "
             "left alone; remove it, or give redlock-run a path of its own", path,
             kind_of(sb.st_mode));
    return -2;
}

/* What the file holds now (*buf, malloc'd, NUL-terminated; empty when there
 * is no file yet). Returns 0, or -1 with err. */
static int read_all(const char *path, const char *dir, char **buf, size_t *len, char *err,
                    size_t errlen)
{
    bool none;
    int in = open_existing(path, dir, &none, err, errlen);
    size_t n = 0;
    ssize_t r = 0;

    *buf = NULL;
    if (in == -2)
        return -1;
    if (!(*buf = malloc(MAX_FILE + 1))) {
        if (in >= 0)
            close(in);
        snprintf(err, errlen, "cannot write --metrics-file %s: out of memory", path);
        return -1;
    }
    while (in >= 0 && n <= MAX_FILE && (r = read(in, *buf + n, MAX_FILE + 1 - n)) != 0) {
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    int e = errno;
    if (in >= 0)
        close(in);
    (*buf)[n > MAX_FILE ? MAX_FILE : n] = '\0';
    *len = n;
    if (r < 0)
        return fail_errno(err, errlen, path, dir, e);
    if (n > MAX_FILE) {
        snprintf(err, errlen,
                 "cannot write --metrics-file %s: it is over %d MiB, so not a file redlock-run "
                 "wrote; give redlock-run a file of its own",
                 path, MAX_FILE / (1024 * 1024));
        return -1;
    }
    return 0;
}

/* Write what put writes beside path and rename it over path: the
 * collector never sees half a file. */
static int replace(const char *path, const char *dir, void (*put)(FILE *f, const void *arg),
                   const void *arg, char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    FILE *f;
    int fd;

    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0)
        return fail_errno(err, errlen, path, dir, errno);
    fchmod(fd, 0644);
    if (!(f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return fail_errno(err, errlen, path, dir, e);
    }
    put(f, arg);
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        return fail_errno(err, errlen, path, dir, e);
    }
    return 0;
}

/* Take the directory's flock, waiting at most LOCK_WAIT_MS. Returns 0, or
 * -1 with err. */
static int lock_dir(int lfd, const char *path, const char *dir, char *err, size_t errlen)
{
    const struct timespec step = { 0, LOCK_STEP_MS * 1000000L };
    struct timespec t0, now;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (flock(lfd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK)
            return fail_errno(err, errlen, path, dir, errno);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= LOCK_WAIT_MS)
            break;
        nanosleep(&step, NULL);
    }
    snprintf(err, errlen, "cannot write --metrics-file %s: another process has held its "
             "directory's flock for over %d ms; this run's figures are skipped: try later "
             "(lslocks names the holder), or use a directory of your own", path, LOCK_WAIT_MS);
    return -1;
}

/* The directory of path, open and flock'd, in *lfd. Returns 0, or -1
 * with err. */
static int take_dir(const char *path, char *dir, size_t dirlen, int *lfd, char *err,
                    size_t errlen)
{
    if (strlen(path) + sizeof ".tmp.XXXXXX" > PATH_MAX) {
        snprintf(err, errlen, "--metrics-file path is too long");
        return -1;
    }
    dir_of(path, dir, dirlen);
    /* Runs on this host take turns, so no series and no count is lost: a
     * flock on the directory, which leaves no file of ours for the
     * collector to see. */
    *lfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (*lfd < 0)
        return fail_errno(err, errlen, path, dir, errno);
    /* What is at path is ours to replace only if it is a regular file. */
    bool none;
    int in = lock_dir(*lfd, path, dir, err, errlen) == 0
                 ? open_existing(path, dir, &none, err, errlen) : -2;
    if (in >= 0)
        close(in);
    if (in == -2) {
        close(*lfd);
        return -1;
    }
    return 0;
}

static void put_set(FILE *f, const void *set)
{
    rr_metrics_set_format(f, set);
}

int rr_metrics_write(const char *path, const char *lock, const struct rr_run_report *rep,
                     char *err, size_t errlen)
{
    char dir[PATH_MAX];
    struct rr_metrics_set set;
    struct rr_metrics *m;
    char *buf = NULL;
    size_t len = 0;
    int lfd, rc = -1;

    if (take_dir(path, dir, sizeof dir, &lfd, err, errlen) != 0)
        return -1;
    if (read_all(path, dir, &buf, &len, err, errlen) != 0)
        goto out;
    if (rr_metrics_set_parse(buf, len, &set) != 0 || !(m = rr_metrics_set_get(&set, lock))) {
        rr_metrics_set_free(&set);
        snprintf(err, errlen, "cannot write --metrics-file %s: out of memory", path);
        goto out;
    }
    rr_metrics_update(m, rep);
    rr_metrics_set_prune(&set, lock, rep->end_s);
    rc = replace(path, dir, put_set, &set, err, errlen);
    rr_metrics_set_free(&set);
out:
    free(buf);
    close(lfd);
    return rc;
}

int rr_metrics_file_put(const char *path, void (*put)(FILE *f, const void *arg), const void *arg,
                        char *err, size_t errlen)
{
    char dir[PATH_MAX];
    int lfd;

    if (take_dir(path, dir, sizeof dir, &lfd, err, errlen) != 0)
        return -1;
    int rc = replace(path, dir, put, arg, err, errlen);
    close(lfd);
    return rc;
}
