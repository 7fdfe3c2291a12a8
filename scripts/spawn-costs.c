/* spawn-costs.c — what starting a process costs on this machine, the four
 * ways a guard could be started: fork and _exit (a forked guard's own
 * start and end), posix_spawn of /bin/true, posix_spawn of BIN --version
 * (a guard that re-executes redlock-run, as runc's `runc init`), fork and
 * exec of /bin/true. Each from spawn to reap, in turn, N times; the means.
 *
 *   cc -O2 -o /tmp/spawn-costs scripts/spawn-costs.c
 *   /tmp/spawn-costs 300 ./redlock-run
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void reap(pid_t p)
{
    while (waitpid(p, NULL, 0) < 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s RUNS BIN\n", argv[0]);
        return 64;
    }
    int n = atoi(argv[1]);
    char *tv[] = { "/bin/true", NULL };
    char *bv[] = { argv[2], "--version", NULL };
    double sum[4] = { 0 };
    posix_spawn_file_actions_t fa;   /* BIN's output goes nowhere */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);

    for (int i = 0; i < n; i++) {
        double t = now_ms();
        pid_t p = fork();
        if (p == 0)
            _exit(0);
        reap(p);
        sum[0] += now_ms() - t;
        t = now_ms();
        posix_spawn(&p, tv[0], NULL, NULL, tv, environ);
        reap(p);
        sum[1] += now_ms() - t;
        t = now_ms();
        posix_spawn(&p, bv[0], &fa, NULL, bv, environ);
        reap(p);
        sum[2] += now_ms() - t;
        t = now_ms();
        if ((p = fork()) == 0) {
            execve(tv[0], tv, environ);
            _exit(127);
        }
        reap(p);
        sum[3] += now_ms() - t;
    }
    printf("fork + _exit                 %.3f ms\n", sum[0] / n);
    printf("posix_spawn /bin/true        %.3f ms\n", sum[1] / n);
    printf("posix_spawn BIN --version    %.3f ms\n", sum[2] / n);
    printf("fork + exec /bin/true        %.3f ms\n", sum[3] / n);
    return 0;
}
