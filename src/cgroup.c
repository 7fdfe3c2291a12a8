/* cgroup.c — the command's own cgroup v2 (see cgroup.h).
 *
 * The pure parsers (unit-tested); rr_cgroup_create, run by the main process
 * before the guard is forked, which reads /proc/self/mountinfo and
 * /proc/self/cgroup, makes the directory and opens its files; and the small
 * writes and reads on those fds that the guard makes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

struct rr_cgroup {
    int parent_fd;      /* the directory we made it in (for the rmdir) */
    int dir_fd;         /* the cgroup's own directory (clone3's CLONE_INTO_CGROUP;
                         * cgroup.procs and cgroup.freeze are opened at it when
                         * needed: most runs need neither) */
    int kill_fd;        /* cgroup.kill, O_WRONLY */
    int events_fd;      /* cgroup.events, O_RDONLY */
    char name[256];
    char path[PATH_MAX];
};

/* ---- the files, on fds opened in advance ---- */

static int write_byte(int fd, char c)
{
    if (fd < 0)
        return -ENOENT;
    return write(fd, &c, 1) == 1 ? 0 : -errno;
}

/* One byte to the file name of the cgroup's directory: open, write, close. */
static int write_byte_at(const struct rr_cgroup *cg, const char *name, char c)
{
    if (!cg)
        return -EINVAL;
    int fd = openat(cg->dir_fd, name, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int r = write_byte(fd, c);
    close(fd);
    return r;
}

int rr_cgroup_enter_self(const struct rr_cgroup *cg)
{
    return write_byte_at(cg, "cgroup.procs", '0');
}

int rr_cgroup_kill(const struct rr_cgroup *cg)
{
    return cg ? write_byte(cg->kill_fd, '1') : -EINVAL;
}

int rr_cgroup_freeze(const struct rr_cgroup *cg, int on)
{
    return write_byte_at(cg, "cgroup.freeze", on ? '1' : '0');
}

/* "populated 0\nfrozen 0\n" (n bytes): 1, 0, or -EINVAL. */
static int parse_populated(const char *buf, long n)
{
    static const char key[] = "populated ";

    /* Find "populated " at a line's start. */
    for (long i = 0; i + (long)sizeof key - 1 < n; i++) {
        long k = 0;
        if (i > 0 && buf[i - 1] != '\n')
            continue;
        while (k < (long)sizeof key - 1 && buf[i + k] == key[k])
            k++;
        if (k == (long)sizeof key - 1)
            return buf[i + k] == '1' ? 1 : buf[i + k] == '0' ? 0 : -EINVAL;
    }
    return -EINVAL;
}

int rr_cgroup_populated(const struct rr_cgroup *cg)
{
    char buf[256];
    long n;

    if (!cg)
        return -EINVAL;
    n = pread(cg->events_fd, buf, sizeof buf - 1, 0);
    return n < 0 ? -errno : parse_populated(buf, n);
}

int rr_cgroup_events_fd(const struct rr_cgroup *cg)
{
    return cg ? cg->events_fd : -1;
}

int rr_cgroup_dir_fd(const struct rr_cgroup *cg)
{
    return cg ? cg->dir_fd : -1;
}

int rr_cgroup_fds(const struct rr_cgroup *cg, int *fds, int max)
{
    int n = 0;

    if (!cg)
        return 0;
    for (int i = 0; i < 4 && n < max; i++) {
        int fd = i == 0 ? cg->parent_fd : i == 1 ? cg->kill_fd : i == 2 ? cg->events_fd
               : cg->dir_fd;
        if (fd >= 0)
            fds[n++] = fd;
    }
    return n;
}

/* rmdir name at parent_fd, and first the cgroups the command made below
 * it (a cgroup with children is EBUSY), depth first, at most depth deep.
 * 0 or -errno. */
static int rmdir_tree(int parent_fd, const char *name, int depth)
{
    if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0)
        return 0;
    int e = errno, fd;
    DIR *d = (e == EBUSY || e == ENOTEMPTY) && depth > 0 &&
                     (fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0
                 ? fdopendir(fd) : NULL;
    if (!d)
        return -e;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (ent->d_type == DT_DIR && strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0)
            rmdir_tree(dirfd(d), ent->d_name, depth - 1);
    closedir(d);
    return unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

int rr_cgroup_remove(const struct rr_cgroup *cg)
{
    if (!cg)
        return -EINVAL;
    return rmdir_tree(cg->parent_fd, cg->name, 8);
}

/* ---- pure parsing ---- */

/* Copy the mountinfo field at s (up to a blank) into out, undoing the
 * kernel's octal escapes (\040 for a blank). 0 or -ENAMETOOLONG. */
static int unescape_field(const char *s, const char *end, char *out, size_t outlen)
{
    size_t n = 0;

    while (s < end && *s != ' ') {
        char c = *s++;
        if (c == '\\' && end - s >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' &&
            s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
            c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
            s += 3;
        }
        if (n + 1 >= outlen)
            return -ENAMETOOLONG;
        out[n++] = c;
    }
    if (outlen == 0)
        return -ENAMETOOLONG;
    out[n] = '\0';
    return 0;
}

/* The start of field k (0-based) of the line [s, end), or NULL. */
static const char *field_at(const char *s, const char *end, int k)
{
    while (k-- > 0) {
        while (s < end && *s != ' ')
            s++;
        if (s >= end)
            return NULL;
        s++;
    }
    return s < end ? s : NULL;
}

/* Is r a mount root above our cgroup namespace's root ("/..", "/../x")? */
static bool above_ns(const char *r)
{
    return strncmp(r, "/..", 3) == 0 && (r[3] == '/' || r[3] == '\0');
}

/* One cgroup2 mount of the mountinfo text: its mount point and root. The
 * one whose root is "/" wins; else the first inside our cgroup namespace;
 * else the first. 0 or -ENOENT/-ENAMETOOLONG. */
static int find_mount(const char *mi, char *mnt, size_t mntlen, char *root, size_t rootlen)
{
    int best = -ENOENT;
    int rank = 0;   /* of best: 1 above our namespace, 2 inside it */

    for (const char *s = mi; s && *s;) {
        const char *end = strchr(s, '\n'), *dash, *f;
        char r[PATH_MAX];

        if (!end)
            end = s + strlen(s);
        /* The optional fields end with " - "; the type follows. */
        dash = strstr(s, " - ");
        if (dash && dash < end && strncmp(dash + 3, "cgroup2 ", 8) == 0 &&
            (f = field_at(s, end, 3)) && unescape_field(f, end, r, sizeof r) == 0 &&
            (best == -ENOENT || strcmp(r, "/") == 0 || (rank == 1 && !above_ns(r)))) {
            const char *m = field_at(s, end, 4);
            best = m ? unescape_field(m, end, mnt, mntlen) : -ENOENT;
            rank = above_ns(r) ? 1 : 2;
            if (best == 0 && snprintf(root, rootlen, "%s", r) >= (int)rootlen)
                best = -ENAMETOOLONG;
            if (best == 0 && strcmp(r, "/") == 0)
                return 0;
        }
        s = *end ? end + 1 : end;
    }
    return best;
}

int rr_cgroup_find_mount(const char *mountinfo, char *out, size_t outlen)
{
    char root[PATH_MAX];

    return find_mount(mountinfo, out, outlen, root, sizeof root);
}

int rr_cgroup_own_path(const char *pc, char *out, size_t outlen)
{
    for (const char *s = pc; s && *s;) {
        const char *end = strchr(s, '\n');
        size_t n;

        if (!end)
            end = s + strlen(s);
        if (strncmp(s, "0::", 3) == 0) {
            n = (size_t)(end - s - 3);
            if (n + 1 > outlen)
                return -ENAMETOOLONG;
            memcpy(out, s + 3, n);
            out[n] = '\0';
            return 0;
        }
        s = *end ? end + 1 : end;
    }
    return -ENOENT;
}

int rr_cgroup_locate(const char *mountinfo, const char *proc_cgroup, char *out, size_t outlen)
{
    char mnt[PATH_MAX], root[PATH_MAX], own[PATH_MAX];
    const char *rel;
    size_t rn;
    int rc;

    if ((rc = find_mount(mountinfo, mnt, sizeof mnt, root, sizeof root)) < 0)
        return rc;
    if ((rc = rr_cgroup_own_path(proc_cgroup, own, sizeof own)) < 0)
        return rc;
    if (own[0] != '/')
        return -EINVAL;   /* "(deleted)" suffixes and the like are not paths */
    /* Outside our cgroup namespace's root ("/../x"), and a mount whose root
     * is outside it ("/.."): where we are cannot be named from here. */
    if (above_ns(own) || above_ns(root))
        return -ENOENT;
    /* A mount of a subtree (root "/docker/ID") shows our path from the
     * hierarchy's top: what is under its root is under its mount point. */
    rn = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (rn && (strncmp(own, root, rn) != 0 || (own[rn] != '/' && own[rn] != '\0')))
        return -ENOENT;
    rel = own + rn;
    if (strcmp(rel, "/") == 0)
        rel = "";
    if ((size_t)snprintf(out, outlen, "%s%s", mnt, rel) >= outlen)
        return -ENAMETOOLONG;
    return 0;
}

size_t rr_cgroup_child_name(char *out, size_t outlen, long pid, const char *lockname)
{
    size_t n, cap = outlen < 256 ? outlen : 256;
    int k;

    if (cap == 0)
        return 0;
    k = snprintf(out, cap, "redlock-run.%ld.", pid);
    if (k < 0 || (size_t)k >= cap) {
        out[cap - 1] = '\0';
        return strlen(out);
    }
    n = (size_t)k;
    for (const char *s = lockname ? lockname : ""; *s && n + 1 < cap; s++) {
        char c = *s;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    return n;
}

long rr_cgroup_name_pid(const char *name)
{
    static const char pre[] = "redlock-run.";
    long pid = 0;
    const char *s;

    if (strncmp(name, pre, sizeof pre - 1) != 0)
        return -1;
    for (s = name + sizeof pre - 1; *s >= '0' && *s <= '9'; s++) {
        pid = pid * 10 + (*s - '0');
        if (pid > 0x3fffffff)
            return -1;
    }
    return s > name + sizeof pre - 1 && *s == '.' && pid > 0 ? pid : -1;
}

bool rr_cgroup_controllers_enabled(const char *sc)
{
    for (; sc && *sc; sc++)
        if (*sc != ' ' && *sc != '\n' && *sc != '\t')
            return true;
    return false;
}

/* ---- creation (libc, before the guard) ---- */

/* A whole small file into a malloc'd string (NULL and errno on failure). */
static char *slurp_at(int dirfd, const char *path)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    size_t len = 0, cap = 4096;
    char *buf = NULL;
    ssize_t n;

    if (fd < 0)
        return NULL;
    for (;;) {
        if (!buf || len + 1 >= cap) {
            char *nb = realloc(buf, buf ? cap *= 2 : cap);
            if (!nb)
                goto fail;
            buf = nb;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;

fail:
    n = errno;
    free(buf);
    close(fd);
    errno = (int)n;
    return NULL;
}

/* strerror's words, lowercase as our messages are. */
static const char *why(int e)
{
    switch (e) {
    case EACCES:
    case EPERM:
        return "permission denied";
    case EROFS:
        return "read-only file system";
    case ENOENT:
        return "no such file or directory";
    case EAGAIN:
        return "too many cgroups (cgroup.max.descendants or cgroup.max.depth)";
    case ENOSPC:
        return "no space left";
    default:
        return strerror(e);
    }
}

/* How to get a cgroup one may create children in. */
#define RR_CGROUP_HINT "run as a systemd unit with Delegate=yes, or see \"Containment\" in the README"

#define RR_CGROUP2_MAGIC 0x63677270   /* statfs's f_type of a cgroup2 */
#define RR_CGROUP_NS_INIT 0xEFFFFFFBu /* the initial cgroup namespace's inode */

/* Our own cgroup's directory in the usual places: a cgroup2 at
 * /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid) under which
 * our path (pc's "0::" line) is a directory. 0, or -1: ask mountinfo.
 * Reading /proc/self/mountinfo costs tens of microseconds (the kernel
 * writes every mount's line), which a plain run should not pay where a
 * statfs can tell. A mount of a subtree (a container without a cgroup
 * namespace of its own: root /docker/ID) has no directory for our whole
 * path under it, so it goes to mountinfo, which knows the mount's root.
 * So does a cgroup namespace of our own: our path is then from its root,
 * and /sys/fs/cgroup may be the host's whole hierarchy (a bind mount), on
 * which the same path names another cgroup (ours would be its root). */
static int locate_usual(const char *pc, char *base, size_t baselen)
{
    static const char *const mounts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
    char own[PATH_MAX];
    struct statfs sf;
    struct stat st;

    if (!pc || rr_cgroup_own_path(pc, own, sizeof own) < 0)
        return -1;
    if (stat("/proc/self/ns/cgroup", &st) != 0 || st.st_ino != RR_CGROUP_NS_INIT)
        return -1;
    for (size_t i = 0; i < sizeof mounts / sizeof mounts[0]; i++) {
        if (statfs(mounts[i], &sf) != 0 || sf.f_type != RR_CGROUP2_MAGIC)
            continue;
        size_t n = (size_t)snprintf(base, baselen, "%s%s", mounts[i],
                                    strcmp(own, "/") == 0 ? "" : own);
        if (n < baselen && stat(base, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return -1;
}

/* Our own cgroup's directory. 0 or -errno with err filled. */
static int locate_self(char *base, size_t baselen, char *err, size_t errlen)
{
    char *pc = slurp_at(AT_FDCWD, "/proc/self/cgroup");
    char *mi;
    char mnt[PATH_MAX];
    int rc;

    if (locate_usual(pc, base, baselen) == 0) {
        free(pc);
        return 0;
    }
    mi = slurp_at(AT_FDCWD, "/proc/self/mountinfo");
    if (!mi || !pc) {
        rc = -errno;
        snprintf(err, errlen, "cannot read /proc/self/%s: %s", mi ? "cgroup" : "mountinfo",
                 why(-rc));
    } else if (rr_cgroup_find_mount(mi, mnt, sizeof mnt) < 0) {
        rc = -ENOENT;
        snprintf(err, errlen, "no cgroup v2 mounted");
    } else if ((rc = rr_cgroup_locate(mi, pc, base, baselen)) < 0) {
        snprintf(err, errlen, "our cgroup is not to be found under the cgroup v2 mount %s", mnt);
    }
    free(mi);
    free(pc);
    return rc;
}

/* Open the files of the new cgroup (dir, named name under parent). */
static int open_files(struct rr_cgroup *cg, char *err, size_t errlen)
{
    int dir = openat(cg->parent_fd, cg->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = 0;

    if (dir < 0) {
        e = errno;
        snprintf(err, errlen, "cannot open %s: %s", cg->path, why(e));
        return -e;
    }
    cg->kill_fd = openat(dir, "cgroup.kill", O_WRONLY | O_CLOEXEC);
    if (cg->kill_fd < 0) {
        e = errno;
        if (e == ENOENT)
            snprintf(err, errlen, "the kernel has no cgroup.kill (Linux 5.14 brought it)");
        else
            snprintf(err, errlen, "cannot open %s/cgroup.kill: %s", cg->path, why(e));
        goto out;
    }
    cg->events_fd = openat(dir, "cgroup.events", O_RDONLY | O_CLOEXEC);
    if (cg->events_fd < 0) {
        e = errno;
        snprintf(err, errlen, "cannot open %s/cgroup.events: %s", cg->path, why(e));
        goto out;
    }
    /* The run's mark of life (rr_cgroup_kill_dead): a shared flock on the
     * directory, held by this open file, which R, the guard and its
     * successor share (the command's exec closes its copy), so that it is
     * free exactly once they are all gone, whatever pid namespace looks. */
    flock(dir, LOCK_SH | LOCK_NB);
    cg->dir_fd = dir;
    return 0;
out:
    close(dir);
    return -e;
}

static void sweep_stale(int parent_fd);

/* Make the directory: mkdir, or, if a dead run of ours left one with our
 * pid's name, rmdir it first (it is empty, or rmdir fails); if the kernel
 * says there are too many (cgroup.max.descendants), once more after
 * removing those of dead runs. */
static int make_dir(struct rr_cgroup *cg, char *err, size_t errlen)
{
    const char *base = cg->path;
    int e;

    if (mkdirat(cg->parent_fd, cg->name, 0755) == 0)
        return 0;
    e = errno;
    if (e == EAGAIN) {
        sweep_stale(cg->parent_fd);
        if (mkdirat(cg->parent_fd, cg->name, 0755) == 0)
            return 0;
        e = errno;
    }
    if (e == EEXIST && unlinkat(cg->parent_fd, cg->name, AT_REMOVEDIR) == 0 &&
        mkdirat(cg->parent_fd, cg->name, 0755) == 0)
        return 0;
    if (e == EEXIST)
        e = errno;
    snprintf(err, errlen, "cannot create a cgroup under %.*s: %s (%s)",
             (int)(strrchr(base, '/') - base), base, why(e), RR_CGROUP_HINT);
    return -e;
}

/* The populated flag of the child name of parent_fd: 1, 0, or -errno. */
static int populated_at(int parent_fd, const char *name)
{
    char path[NAME_MAX + 32], buf[256];
    long n;

    if ((size_t)snprintf(path, sizeof path, "%s/cgroup.events", name) >= sizeof path)
        return -ENAMETOOLONG;
    int fd = openat(parent_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n < 0 ? -EIO : parse_populated(buf, n);
}

/* Is the run that made the child name of parent_fd gone? Its redlock-run,
 * guard and successor share a flock on the directory (open_files): free
 * once they are all gone. A pid that names no process says nothing on its
 * own: the run may live in another pid namespace. */
static bool run_gone(int parent_fd, const char *name)
{
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool gone = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;

    if (fd >= 0)
        close(fd);
    return gone;
}

/* The entries of the directory parent_fd, read through a description of
 * its own: a dup(2) would share parent_fd's offset, which R and the guard
 * share too (fork), so a listing read to its end by one leaves the next
 * with none (the end-of-run sweep found nothing after the guard's scan). */
static DIR *listing(int parent_fd)
{
    int fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

    if (!d && fd >= 0)
        close(fd);
    return d;
}

/* Remove the child name of parent_fd if it is a directory made over a
 * minute ago whose run is gone: the empty cgroup of a dead run (killed with
 * its guard, which would have removed it). rmdir fails on one that holds a
 * process (EBUSY). A run whose pid we cannot see (another pid namespace)
 * keeps its directory's flock while it waits, however long; the minute
 * keeps clear of one made a moment ago, before its flock was taken. */
static void remove_if_stale(int parent_fd, const char *name, time_t now)
{
    struct stat st;

    if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        now - st.st_mtime > 60 && run_gone(parent_fd, name))
        unlinkat(parent_fd, name, AT_REMOVEDIR);
}

/* The empty cgroups that dead runs of any job left beside ours: only when
 * the kernel refuses a new one (cgroup.max.descendants), to make room; a
 * run otherwise removes only its own job's (rr_cgroup_kill_dead), so that
 * its cost does not grow with other jobs' runs. Best effort. */
static void sweep_stale(int parent_fd)
{
    DIR *d = listing(parent_fd);
    struct dirent *e;
    time_t now = time(NULL);

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        long pid = rr_cgroup_name_pid(e->d_name);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        remove_if_stale(parent_fd, e->d_name, now);
    }
    closedir(d);
}

/* "redlock-run.PID.JOB": the ".JOB" part (NULL if the name is not ours). */
static const char *job_part(const char *name)
{
    return rr_cgroup_name_pid(name) > 0 ? strchr(name + sizeof "redlock-run." - 1, '.') : NULL;
}

int rr_cgroup_kill_dead(const struct rr_cgroup *cg, int wait_ms, char *first, size_t firstlen)
{
    enum { MAX_DEAD = 16 };
    char dead[MAX_DEAD][NAME_MAX + 1];
    int n = 0;
    const char *job = cg ? job_part(cg->name) : NULL;
    DIR *d = job ? listing(cg->parent_fd) : NULL;
    struct dirent *e;
    time_t now = time(NULL);

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < MAX_DEAD) {
        const char *j = job_part(e->d_name);
        long pid = rr_cgroup_name_pid(e->d_name);
        /* Another run of this job whose redlock-run is gone. Its cgroup
         * still populated: its guard is gone too (a living guard empties
         * and removes it at once when its redlock-run dies). Empty: it was
         * killed with its guard, maybe while it waited. Other jobs' are
         * passed by with a strcmp. */
        if (!j || strcmp(j, job) != 0 || strcmp(e->d_name, cg->name) == 0 ||
            kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        int populated = populated_at(cg->parent_fd, e->d_name);
        if (populated == 0)
            remove_if_stale(cg->parent_fd, e->d_name, now);
        if (populated != 1 || !run_gone(cg->parent_fd, e->d_name))
            continue;
        char path[NAME_MAX + 32];
        snprintf(path, sizeof path, "%s/cgroup.kill", e->d_name);
        int kfd = openat(cg->parent_fd, path, O_WRONLY | O_CLOEXEC);
        if (kfd < 0)
            continue;
        if (write_byte(kfd, '1') == 0) {
            if (n == 0 && first)
                snprintf(first, firstlen, "%s", e->d_name);
            snprintf(dead[n++], sizeof dead[0], "%s", e->d_name);
        }
        close(kfd);
    }
    closedir(d);
    /* SIGKILL is sent; they are gone once the kernel has run each one's
     * exit: wait for that (bounded: a process stuck in the kernel keeps its
     * cgroup), then remove the directories. */
    for (int left = n, waited = 0; left > 0 && waited <= wait_ms; waited += 10) {
        left = 0;
        for (int i = 0; i < n; i++)
            if (dead[i][0] && populated_at(cg->parent_fd, dead[i]) == 1)
                left++;
        if (left > 0)
            nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
    }
    for (int i = 0; i < n; i++)
        rmdir_tree(cg->parent_fd, dead[i], 8);
    return n;
}

static struct rr_cgroup *cg_new(void)
{
    struct rr_cgroup *cg = calloc(1, sizeof *cg);

    if (cg)
        cg->parent_fd = cg->dir_fd = cg->kill_fd = cg->events_fd = -1;
    return cg;
}

int rr_cgroup_create(struct rr_cgroup **out, const char *lockname, char *err, size_t errlen)
{
    struct rr_cgroup *cg = cg_new();
    char base[PATH_MAX], *sc = NULL;
    bool made = false;
    int rc;

    *out = NULL;
    if (!cg) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if ((rc = locate_self(base, sizeof base, err, errlen)) < 0)
        goto fail;
    cg->parent_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg->parent_fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot open our cgroup %s: %s", base, why(-rc));
        goto fail;
    }
    /* "No internal processes": a cgroup other than the root that hands
     * controllers down may hold no process beside its children. We live in
     * ours, so it should hand none down, unless it is the root (which has
     * no cgroup.kill, also at the top of a cgroup namespace); say so if it
     * does. */
    sc = slurp_at(cg->parent_fd, "cgroup.subtree_control");
    if (sc && rr_cgroup_controllers_enabled(sc) &&
        faccessat(cg->parent_fd, "cgroup.kill", F_OK, 0) == 0) {
        rc = -EBUSY;
        sc[strcspn(sc, "\n")] = '\0';
        snprintf(err, errlen, "our cgroup %s enables controllers for its children (%s), so the "
                 "command cannot live in a child beside us: run redlock-run in a leaf cgroup",
                 base, sc);
        goto fail;
    }
    /* Moving the command from our cgroup into its child is a write to the
     * cgroup.procs of their common ancestor: ours. */
    if (faccessat(cg->parent_fd, "cgroup.procs", W_OK, AT_EACCESS) != 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot move processes out of our cgroup %s: %s (%s)", base,
                 why(-rc), RR_CGROUP_HINT);
        goto fail;
    }
    rr_cgroup_child_name(cg->name, sizeof cg->name, (long)getpid(), lockname);
    if ((size_t)snprintf(cg->path, sizeof cg->path, "%s/%s", base, cg->name) >= sizeof cg->path) {
        rc = -ENAMETOOLONG;
        snprintf(err, errlen, "the cgroup path under %s is too long", base);
        goto fail;
    }
    if ((rc = make_dir(cg, err, errlen)) < 0)
        goto fail;
    made = true;
    if ((rc = open_files(cg, err, errlen)) < 0)
        goto fail;
    free(sc);
    *out = cg;
    return 0;

fail:
    free(sc);
    if (made)
        unlinkat(cg->parent_fd, cg->name, AT_REMOVEDIR);
    rr_cgroup_free(cg);
    return rc < 0 ? rc : -EINVAL;
}

const char *rr_cgroup_path(const struct rr_cgroup *cg)
{
    return cg ? cg->path : "";
}

void rr_cgroup_free(struct rr_cgroup *cg)
{
    if (!cg)
        return;
    if (cg->parent_fd >= 0)
        close(cg->parent_fd);
    if (cg->dir_fd >= 0)
        close(cg->dir_fd);
    if (cg->kill_fd >= 0)
        close(cg->kill_fd);
    if (cg->events_fd >= 0)
        close(cg->events_fd);
    free(cg);
}
