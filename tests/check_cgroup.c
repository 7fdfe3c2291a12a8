/* check_cgroup.c — the command's cgroup: the parsers on texts, and, where
 * this process may create a cgroup v2 child, a real one holding a forked
 * sleep and its setsid grandchild. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "unit.h"

/* A hybrid host (cgroup v1 controllers, cgroup2 at .../unified). */
static const char hybrid[] =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n";

/* A unified host, and a container that sees a subtree mounted first. */
static const char unified[] =
    "25 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
    "26 25 0:24 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
static const char container[] =
    "600 500 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup ro\n";
static const char escaped[] =
    "26 25 0:24 / /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n";
/* A cgroup namespace of our own that sees the host's hierarchy (a bind
 * mount from outside it): the mount's root is above ours. */
static const char nsbind[] =
    "40 30 0:37 /.. /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char v1only[] =
    "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
    "40 30 0:37 / /sys/fs/cgroup/cgroup2-not rw - tmpfs cgroup2 rw\n";

START_TEST(test_find_mount)
{
    char out[256];

    ck_assert_int_eq(rr_cgroup_find_mount(hybrid, out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup/unified");
    ck_assert_int_eq(rr_cgroup_find_mount(unified, out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup");
    ck_assert_int_eq(rr_cgroup_find_mount(container, out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup");
    ck_assert_int_eq(rr_cgroup_find_mount(escaped, out, sizeof out), 0);
    ck_assert_str_eq(out, "/mnt/my cg");
    ck_assert_int_eq(rr_cgroup_find_mount(v1only, out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_find_mount("", out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_find_mount(hybrid, out, 8), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_own_path)
{
    char out[256];

    ck_assert_int_eq(rr_cgroup_own_path("9:name=systemd:/\n4:memory:/x/y\n0::/\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/");
    ck_assert_int_eq(rr_cgroup_own_path("0::/system.slice/cron.service\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/system.slice/cron.service");
    ck_assert_int_eq(rr_cgroup_own_path("0::/no-newline", out, sizeof out), 0);
    ck_assert_str_eq(out, "/no-newline");
    /* "10::" is not "0::" (a v1 hierarchy numbered 10 with no controller). */
    ck_assert_int_eq(rr_cgroup_own_path("10::/a\n1:cpu:/b\n", out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_own_path("0::/system.slice\n", out, 4), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_locate)
{
    char out[256];

    ck_assert_int_eq(rr_cgroup_locate(hybrid, "1:cpu:/\n0::/\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup/unified");
    ck_assert_int_eq(rr_cgroup_locate(unified, "0::/system.slice/cron.service\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup/system.slice/cron.service");
    ck_assert_int_eq(rr_cgroup_locate(container, "0::/docker/abc/job\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup/job");
    ck_assert_int_eq(rr_cgroup_locate(container, "0::/docker/abc\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup");
    /* "/docker/abcd" is not under "/docker/abc". */
    ck_assert_int_eq(rr_cgroup_locate(container, "0::/docker/abcd\n", out, sizeof out), -ENOENT);
    /* In a cgroup namespace of our own: a mount from above its root, and
     * our own cgroup outside it, cannot be named from here. */
    ck_assert_int_eq(rr_cgroup_locate(nsbind, "0::/\n", out, sizeof out), -ENOENT);
    /* Beside it, a subtree inside the namespace: that one is used. */
    {
        static const char both[] =
            "40 30 0:37 /.. /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
            "41 30 0:37 /sub /mnt/sub rw - cgroup2 cgroup2 rw\n";
        ck_assert_int_eq(rr_cgroup_locate(both, "0::/sub/job\n", out, sizeof out), 0);
        ck_assert_str_eq(out, "/mnt/sub/job");
    }
    ck_assert_int_eq(rr_cgroup_locate(unified, "0::/../job\n", out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_locate(unified, "0::/..\n", out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_locate(unified, "0::/..job\n", out, sizeof out), 0);
    ck_assert_str_eq(out, "/sys/fs/cgroup/..job");
    ck_assert_int_eq(rr_cgroup_locate(v1only, "0::/\n", out, sizeof out), -ENOENT);
    ck_assert_int_eq(rr_cgroup_locate(unified, "1:cpu:/\n", out, sizeof out), -ENOENT);
}
END_TEST

START_TEST(test_child_name)
{
    char out[256], small[20];
    char long_name[400];

    ck_assert_uint_eq(rr_cgroup_child_name(out, sizeof out, 42, "backup"), 21);
    ck_assert_str_eq(out, "redlock-run.42.backup");
    rr_cgroup_child_name(out, sizeof out, 7, "db/nightly backup:ü");
    ck_assert_str_eq(out, "redlock-run.7.db_nightly_backup___");
    rr_cgroup_child_name(out, sizeof out, 7, "../..");
    ck_assert_str_eq(out, "redlock-run.7..._..");
    ck_assert(strchr(out, '/') == NULL);
    rr_cgroup_child_name(out, sizeof out, 7, "");
    ck_assert_str_eq(out, "redlock-run.7.");
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ck_assert_uint_eq(rr_cgroup_child_name(out, sizeof out, 123456, long_name), 255);
    ck_assert_uint_eq(strlen(out), 255);
    ck_assert_uint_eq(rr_cgroup_child_name(small, sizeof small, 99, "abcdefghij"), 19);
    ck_assert_str_eq(small, "redlock-run.99.abcd");
}
END_TEST

START_TEST(test_name_pid)
{
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.42.backup"), 42);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.7."), 7);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.42"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run..x"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.0.x"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.4x.y"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("other.42.x"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("redlock-run.99999999999.x"), -1);
    ck_assert_int_eq(rr_cgroup_name_pid("cgroup.procs"), -1);
}
END_TEST

START_TEST(test_controllers)
{
    ck_assert(!rr_cgroup_controllers_enabled(""));
    ck_assert(!rr_cgroup_controllers_enabled("\n"));
    ck_assert(rr_cgroup_controllers_enabled("cpu memory pids\n"));
    ck_assert(!rr_cgroup_controllers_enabled(NULL));
}
END_TEST

/* Wait up to 5 s for populated to become want, polling events for POLLPRI. */
static int wait_populated(const struct rr_cgroup *cg, int want)
{
    struct pollfd p = { .fd = rr_cgroup_events_fd(cg), .events = POLLPRI };
    int v = -1;

    for (int i = 0; i < 50 && (v = rr_cgroup_populated(cg)) != want; i++)
        poll(&p, 1, 100);
    return v;
}

/* rr_cgroup_fds: the parent's directory, then cgroup.kill, .events and
 * the cgroup's own directory: open, close-on-exec, and where they should
 * be; the guard keeps exactly these. A short array gets the first ones.
 * (cgroup.procs and .freeze are opened when written.) */
static void check_fds(const struct rr_cgroup *cg, const char *path)
{
    static const char *const names[] = { "", "/cgroup.kill", "/cgroup.events", "" };
    int fds[8], n = rr_cgroup_fds(cg, fds, 8);
    char want[4400], link[4400], proc[64];

    ck_assert_int_eq(n, 4);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fds[i]);
        ssize_t k = readlink(proc, link, sizeof link - 1);
        ck_assert_int_gt(k, 0);
        link[k] = '\0';
        if (i == 0) {
            snprintf(want, sizeof want, "%s", path);
            *strrchr(want, '/') = '\0';
        } else if (i == 3) {
            snprintf(want, sizeof want, "%s", path);   /* its own directory */
            ck_assert_int_eq(fds[i], rr_cgroup_dir_fd(cg));
        } else {
            snprintf(want, sizeof want, "%s%s", path, names[i]);
        }
        ck_assert_str_eq(link, want);
    }
    int two[2] = { -1, -1 };
    ck_assert_int_eq(rr_cgroup_fds(cg, two, 2), 2);
    ck_assert_int_eq(two[0], fds[0]);
    ck_assert_int_eq(two[1], fds[1]);
}

START_TEST(test_real_cgroup)
{
    struct rr_cgroup *cg = NULL;
    char err[256] = "", path[4200];
    struct stat st;
    int status;
    pid_t pid;

    if (rr_cgroup_create(&cg, "unit/test", err, sizeof err) != 0) {
        fprintf(stderr, "check_cgroup: no real cgroup here (%s): skipped\n", err);
        return;
    }
    snprintf(path, sizeof path, "%s", rr_cgroup_path(cg));
    ck_assert_msg(strstr(path, "/redlock-run.") && strstr(path, ".unit_test"), "%s", path);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(rr_cgroup_populated(cg), 0);
    check_fds(cg, path);

    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        if (rr_cgroup_enter_self(cg) != 0)
            _exit(3);
        /* A grandchild that leaves the session and the process group. */
        if (fork() == 0) {
            setsid();
            execlp("sleep", "sleep", "30", (char *)NULL);
            _exit(4);
        }
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(5);
    }
    ck_assert_int_eq(wait_populated(cg, 1), 1);
    ck_assert_int_eq(rr_cgroup_remove(cg), -EBUSY);
    ck_assert_int_eq(rr_cgroup_freeze(cg, 1), 0);
    ck_assert_int_eq(rr_cgroup_freeze(cg, 0), 0);
    ck_assert_int_eq(rr_cgroup_kill(cg), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* The setsid grandchild was killed too (init reaps it). */
    ck_assert_int_eq(wait_populated(cg, 0), 0);
    ck_assert_int_eq(rr_cgroup_kill(cg), 0);
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    ck_assert_int_eq(stat(path, &st), -1);
    ck_assert_int_eq(rr_cgroup_remove(cg), -ENOENT);
    rr_cgroup_free(cg);
}
END_TEST

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 16);
    if (f && buf)
        buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* rr_cgroup_create finds our cgroup by statfs in the usual places, and by
 * mountinfo elsewhere: here, both must name the same directory. */
START_TEST(test_usual_place_is_mountinfos)
{
    struct rr_cgroup *cg = NULL;
    char err[256] = "", want[4200], got[4200];
    char *mi = read_all("/proc/self/mountinfo"), *pc = read_all("/proc/self/cgroup");

    if (rr_cgroup_locate(mi, pc, want, sizeof want) != 0 ||
        rr_cgroup_create(&cg, "unit/where", err, sizeof err) != 0) {
        fprintf(stderr, "check_cgroup: no real cgroup here (%s): skipped\n", err);
        free(mi);
        free(pc);
        return;
    }
    snprintf(got, sizeof got, "%s", rr_cgroup_path(cg));
    *strrchr(got, '/') = '\0';
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    rr_cgroup_free(cg);
    free(mi);
    free(pc);
}
END_TEST

/* Make the directory base/name, its mtime secs_ago in the past. */
static void make_aged(const char *base, const char *name, int secs_ago)
{
    char p[4400];
    struct timespec t[2];

    snprintf(p, sizeof p, "%s/%s", base, name);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= secs_ago;
    t[1] = t[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, p, t, 0), 0);
}

/* A pid that names no process now. */
static pid_t dead_pid(void)
{
    pid_t p = fork();

    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

START_TEST(test_sweep_stale)
{
    struct rr_cgroup *cg = NULL;
    char err[256] = "", base[4200], stale[64], fresh[64], other[64], p[4400];
    struct stat st;
    pid_t dead = dead_pid(), dead2 = dead_pid();

    if (rr_cgroup_create(&cg, "probe", err, sizeof err) != 0) {
        fprintf(stderr, "check_cgroup: no real cgroup here (%s): skipped\n", err);
        return;
    }
    snprintf(base, sizeof base, "%s", rr_cgroup_path(cg));
    *strrchr(base, '/') = '\0';
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    rr_cgroup_free(cg);

    /* Of the job "unit-sweep": a dead run's, made long ago: removed. A
     * dead pid's made just now (maybe a run in another pid namespace that
     * has not taken its flock yet): kept. Another job's, however stale:
     * not this run's business, kept. */
    snprintf(stale, sizeof stale, "redlock-run.%ld.unit-sweep", (long)dead);
    snprintf(fresh, sizeof fresh, "redlock-run.%ld.unit-sweep", (long)dead2);
    snprintf(other, sizeof other, "redlock-run.%ld.unit-other", (long)dead);
    make_aged(base, stale, 120);
    make_aged(base, fresh, 0);
    make_aged(base, other, 120);
    ck_assert_int_eq(rr_cgroup_create(&cg, "unit-sweep", err, sizeof err), 0);
    snprintf(p, sizeof p, "%s/%s", base, stale);
    ck_assert_int_eq(stat(p, &st), 0);   /* not on the way to the lock */
    ck_assert_int_eq(rr_cgroup_kill_dead(cg, 0, NULL, 0), 0);   /* nothing to kill */
    ck_assert_msg(stat(p, &st) == -1, "%s was left", p);
    snprintf(p, sizeof p, "%s/%s", base, fresh);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(rmdir(p), 0);
    snprintf(p, sizeof p, "%s/%s", base, other);
    ck_assert_msg(stat(p, &st) == 0, "another job's %s was removed", p);
    ck_assert_int_eq(rmdir(p), 0);
    /* A second scan through the same handle lists the directory again
     * (R and the guard share it: a listing that shared its offset found
     * nothing after the first). */
    snprintf(stale, sizeof stale, "redlock-run.%ld.unit-sweep", (long)dead_pid());
    make_aged(base, stale, 120);
    ck_assert_int_eq(rr_cgroup_kill_dead(cg, 0, NULL, 0), 0);
    snprintf(p, sizeof p, "%s/%s", base, stale);
    ck_assert_msg(stat(p, &st) == -1, "%s was left by a second scan", p);
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    rr_cgroup_free(cg);
}
END_TEST

START_TEST(test_null)
{
    ck_assert_int_eq(rr_cgroup_kill(NULL), -EINVAL);
    ck_assert_int_eq(rr_cgroup_enter_self(NULL), -EINVAL);
    ck_assert_int_eq(rr_cgroup_populated(NULL), -EINVAL);
    ck_assert_int_eq(rr_cgroup_events_fd(NULL), -1);
    ck_assert_str_eq(rr_cgroup_path(NULL), "");
    int fds[8] = { -7 };
    ck_assert_int_eq(rr_cgroup_fds(NULL, fds, 8), 0);
    ck_assert_int_eq(fds[0], -7);
    rr_cgroup_free(NULL);
}
END_TEST

static Suite *cgroup_suite(void)
{
    Suite *s = suite_create("cgroup");
    TCase *tc = tcase_create("pure");
    tcase_add_test(tc, test_find_mount);
    tcase_add_test(tc, test_own_path);
    tcase_add_test(tc, test_locate);
    tcase_add_test(tc, test_child_name);
    tcase_add_test(tc, test_controllers);
    tcase_add_test(tc, test_name_pid);
    tcase_add_test(tc, test_null);
    suite_add_tcase(s, tc);
    tc = tcase_create("real");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_real_cgroup);
    tcase_add_test(tc, test_sweep_stale);
    tcase_add_test(tc, test_usual_place_is_mountinfos);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "cgroup", cgroup_suite, NULL, NULL };
