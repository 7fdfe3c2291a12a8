/* leftover.c — tree mode's mark of a run (see leftover.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "leftover.h"
#include "proc.h"

struct rr_leftover {
    int dir_fd;
    int fd;
    char name[NAME_MAX + 1];   /* "redlock-run.PID.JOB" */
};

/* ---- pure ---- */

int rr_leftover_dir(char *out, size_t outlen, unsigned euid, int k)
{
    int n;

    if (euid == 0 && k == 0)
        n = snprintf(out, outlen, "/run/redlock-run");
    else if (k == (euid == 0 ? 1 : 0))
        n = snprintf(out, outlen, "/tmp/redlock-run-%u", euid);
    else
        return -1;
    return n > 0 && (size_t)n < outlen ? 0 : -1;
}

size_t rr_leftover_format(char *buf, size_t len, pid_t pgid, unsigned long long start)
{
    int n = snprintf(buf, len, "%ld %llu\n", (long)pgid, start);
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

int rr_leftover_parse(const char *buf, size_t len, pid_t *pgid, unsigned long long *start)
{
    char tmp[64], *end;

    if (len == 0 || len >= sizeof tmp)
        return -1;
    memcpy(tmp, buf, len);
    tmp[len] = '\0';
    errno = 0;
    long g = strtol(tmp, &end, 10);
    if (errno || end == tmp || *end != ' ' || g <= 1 || g > INT_MAX)
        return -1;
    const char *s = end + 1;
    unsigned long long st = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || *end != '\n' || end[1] != '\0')
        return -1;
    *pgid = (pid_t)g;
    *start = st;
    return 0;
}

enum rr_leftover_act rr_leftover_judge(bool leader_exists, unsigned long long leader_start,
                                       unsigned long long recorded_start)
{
    /* A group keeps its id reserved while it has a member: with no process
     * of that pid, the group (if any) is still the dead run's. A process of
     * that pid born at another time is someone else's. */
    return !leader_exists || leader_start == recorded_start ? RR_LEFTOVER_KILL
                                                             : RR_LEFTOVER_SKIP;
}

/* ---- R ---- */

/* Our directory dir, made if missing: -errno unless it is a directory (no
 * symlink) owned by us with no access for others. */
static int open_dir(const char *dir)
{
    struct stat st;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

int rr_leftover_open(struct rr_leftover **out, const char *lockname, char *why, size_t whylen)
{
    char dir[64] = "", tmp[64];
    int dfd = -ENOENT;

    *out = NULL;
    for (int k = 0; dfd < 0 && rr_leftover_dir(dir, sizeof dir, (unsigned)geteuid(), k) == 0; k++)
        dfd = open_dir(dir);
    if (dfd < 0) {
        snprintf(why, whylen, "no directory of ours for the run's mark (%s: %s)", dir,
                 dfd == -EPERM ? "not ours, or open to others" : strerror(-dfd));
        return dfd;
    }
    struct rr_leftover *lo = calloc(1, sizeof *lo);
    if (!lo) {
        close(dfd);
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    lo->dir_fd = dfd;
    rr_cgroup_child_name(lo->name, sizeof lo->name, (long)getpid(), lockname);
    /* Locked before it has its name: a file of ours under its name is
     * never seen unlocked while we live. */
    snprintf(tmp, sizeof tmp, ".new.%ld", (long)getpid());
    lo->fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lo->fd < 0 || flock(lo->fd, LOCK_SH | LOCK_NB) < 0 ||
        renameat(dfd, tmp, dfd, lo->name) < 0) {
        int e = errno;
        if (lo->fd >= 0) {
            unlinkat(dfd, tmp, 0);
            close(lo->fd);
        }
        close(dfd);
        free(lo);
        snprintf(why, whylen, "cannot make the run's mark in %s: %s", dir, strerror(e));
        return -e;
    }
    *out = lo;
    return 0;
}

void rr_leftover_free(struct rr_leftover *lo)
{
    if (!lo)
        return;
    unlinkat(lo->dir_fd, lo->name, 0);
    close(lo->fd);
    close(lo->dir_fd);
    free(lo);
}

/* ---- G ---- */

void rr_leftover_note(const struct rr_leftover *lo, pid_t pgid)
{
    struct rr_proc_stat st;
    char buf[64];
    size_t n;

    if (lo && rr_proc_read_stat(pgid, &st) == 0 &&
        (n = rr_leftover_format(buf, sizeof buf, pgid, st.start)) > 0)
        (void)!pwrite(lo->fd, buf, n, 0);
}

int rr_leftover_fd(const struct rr_leftover *lo)
{
    return lo ? lo->fd : -1;
}

/* "redlock-run.PID.JOB": the ".JOB" part (NULL if the name is not a
 * mark's). */
static const char *job_part(const char *name)
{
    return rr_cgroup_name_pid(name) > 0 ? strchr(name + sizeof "redlock-run." - 1, '.') : NULL;
}

/* The group a dead run's mark names, to kill: > 1, or 0 (none: the run is
 * alive, its command never started, or the pid is someone else's now).
 * The mark is removed if the run is dead (fd's flock, which its R and G
 * shared, is free); the same inode only: a new run of the same pid may
 * have put its own there since. */
static pid_t dead_group(int dfd, const char *name)
{
    char buf[64];
    struct stat a, b;
    struct rr_proc_stat st;
    unsigned long long start;
    pid_t pgid = 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return 0;
    }
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    if (n > 0 && rr_leftover_parse(buf, (size_t)n, &pgid, &start) == 0) {
        bool leader = rr_proc_read_stat(pgid, &st) == 0;
        if (rr_leftover_judge(leader, leader ? st.start : 0, start) != RR_LEFTOVER_KILL)
            pgid = 0;
    } else {
        pgid = 0;
    }
    if (fstat(fd, &a) == 0 && fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
        a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        unlinkat(dfd, name, 0);
    close(fd);
    return pgid;
}

int rr_leftover_kill_dead(const struct rr_leftover *lo, int wait_ms, char *first,
                          size_t firstlen)
{
    enum { MAX_DEAD = 16 };
    pid_t dead[MAX_DEAD];
    int n = 0, fd;
    const char *job = lo ? job_part(lo->name) : NULL;
    DIR *d = job && (fd = openat(lo->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0
                 ? fdopendir(fd) : NULL;
    struct dirent *e;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < MAX_DEAD) {
        const char *j = job_part(e->d_name);
        /* A run whose redlock-run's pid names a process is taken as alive
         * without opening its mark: a queue of a thousand waiters of one
         * job costs each new one a kill(2) per waiter, not an open and a
         * flock. (A pid reused since leaves that dead run's group alone.) */
        if (!j || strcmp(j, job) != 0 || strcmp(e->d_name, lo->name) == 0 ||
            kill((pid_t)rr_cgroup_name_pid(e->d_name), 0) == 0 || errno != ESRCH)
            continue;
        pid_t g = dead_group(lo->dir_fd, e->d_name);
        if (g > 1 && kill(-g, SIGKILL) == 0) {
            if (n == 0 && first)
                snprintf(first, firstlen, "%ld (run %ld)", (long)g, rr_cgroup_name_pid(e->d_name));
            dead[n++] = g;
        }
    }
    closedir(d);
    /* Gone once init has reaped them all (bounded: a process stuck in the
     * kernel keeps its group). */
    for (int left = n, waited = 0; left > 0 && waited <= wait_ms; waited += 10) {
        left = 0;
        for (int i = 0; i < n; i++)
            left += kill(-dead[i], 0) == 0;
        if (left > 0)
            nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
    }
    return n;
}
