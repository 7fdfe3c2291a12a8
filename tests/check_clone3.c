/* check_clone3.c — clone3 into a cgroup: the child is born in it (no
 * migration) and returns 0 like fork; a refusal is -errno, so the guard
 * can fall back. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "clone3.h"
#include "unit.h"

/* Is pid in the cgroup whose path (under the v2 mount) ends as path does? */
static int in_cgroup(pid_t pid, const char *path)
{
    char f[64], line[4400];
    snprintf(f, sizeof f, "/proc/%d/cgroup", (int)pid);
    FILE *fp = fopen(f, "r");
    int yes = 0;
    if (!fp)
        return -1;
    const char *tail = strrchr(path, '/');
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, "0::", 3) == 0 && tail && strstr(line, tail))
            yes = 1;
    fclose(fp);
    return yes;
}

static struct rr_cgroup *make(const char *name)
{
    struct rr_cgroup *cg = NULL;
    char err[256] = "";
    if (rr_cgroup_create(&cg, name, err, sizeof err) != 0) {
        fprintf(stderr, "check_clone3: no real cgroup here (%s): skipped\n", err);
        return NULL;
    }
    return cg;
}

static void reap_killed(struct rr_cgroup *cg, pid_t pid)
{
    int st;
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &st, __WALL), pid);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    for (int i = 0; i < 200 && rr_cgroup_populated(cg) != 0; i++)
        usleep(10000);
    ck_assert_int_eq(rr_cgroup_remove(cg), 0);
    rr_cgroup_free(cg);
}

START_TEST(test_fork_born_in_cgroup)
{
    struct rr_cgroup *cg = make("unit/clone3f");
    if (!cg)
        return;
    long pid = rr_clone3_fork(rr_cgroup_dir_fd(cg));
    if (pid == 0) {
        for (;;)
            pause();
    }
    if (pid == -ENOSYS || pid == -EINVAL || pid == -E2BIG) {
        fprintf(stderr, "check_clone3: kernel without CLONE_INTO_CGROUP (%ld): skipped\n", pid);
        rr_cgroup_remove(cg);
        rr_cgroup_free(cg);
        return;
    }
    ck_assert_int_gt(pid, 0);
    ck_assert_int_eq(in_cgroup((pid_t)pid, rr_cgroup_path(cg)), 1);
    reap_killed(cg, (pid_t)pid);
}
END_TEST

START_TEST(test_refused)
{
    /* Not a cgroup's directory: the kernel says no, and nothing is made. */
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    long r = rr_clone3_fork(fd);
    if (r == 0)
        _exit(0);
    ck_assert_int_lt(r, 0);
    ck_assert_int_lt(rr_clone3_fork(-1), 0);
    close(fd);
}
END_TEST

static Suite *clone3_suite(void)
{
    Suite *s = suite_create("clone3");
    TCase *tc = tcase_create("real");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fork_born_in_cgroup);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "clone3", clone3_suite, NULL, NULL };
