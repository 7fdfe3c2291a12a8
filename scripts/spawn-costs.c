/* spawn-costs.c — what starting a process costs on this machine, the ways
 * a guard could be started: fork and _exit (a forked guard's own start and
 * end), posix_spawn of /bin/true, posix_spawn of BIN --version (a guard
 * that re-executes redlock-run, as runc's `runc init`), fork and exec of
 * /bin/true, and posix_spawn and fork + exec of this program itself, which
 * exits at once when given --exit (built with -static, it stands for a
 * small static guard program of its own). Each from spawn to reap, in
 * turn, N times; the means. MB, if given, is how much memory to touch
 * first, so that fork copies what a process of that size has (redlock-run:
 * about 2.5 MB resident).
 *
 *   cc -O2 -static -o /tmp/spawn-costs scripts/spawn-costs.c
 *   /tmp/spawn-costs 300 ./redlock-run [MB]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* From the start to the reap of one process running v. */
static double spawn_ms(char **v, const posix_spawn_file_actions_t *fa)
{
    double t = now_ms();
    pid_t p;
    if (posix_spawn(&p, v[0], fa, NULL, v, environ) == 0)
        reap(p);
    return now_ms() - t;
}

static double fork_exec_ms(char **v)
{
    double t = now_ms();
    pid_t p = fork();
    if (p == 0) {
        execve(v[0], v, environ);
        _exit(127);
    }
    reap(p);
    return now_ms() - t;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--exit") == 0)
        _exit(0);
    if (argc < 3 || argc > 4 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s RUNS BIN [MB]\n", argv[0]);
        return 64;
    }
    size_t touch = argc == 4 ? (size_t)atoi(argv[3]) << 20 : 0;
    char *mem = touch ? malloc(touch) : NULL;
    if (mem)
        memset(mem, 1, touch);
    int n = atoi(argv[1]);
    char *tv[] = { "/bin/true", NULL };
    char *bv[] = { argv[2], "--version", NULL };
    char *sv[] = { "/proc/self/exe", "--exit", NULL };
    double sum[6] = { 0 };
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
        sum[1] += spawn_ms(tv, NULL);
        sum[2] += spawn_ms(bv, &fa);
        sum[3] += fork_exec_ms(tv);
        sum[4] += spawn_ms(sv, NULL);
        sum[5] += fork_exec_ms(sv);
    }
    printf("fork + _exit                 %.3f ms\n", sum[0] / n);
    printf("posix_spawn /bin/true        %.3f ms\n", sum[1] / n);
    printf("posix_spawn BIN --version    %.3f ms\n", sum[2] / n);
    printf("fork + exec /bin/true        %.3f ms\n", sum[3] / n);
    printf("posix_spawn of itself        %.3f ms\n", sum[4] / n);
    printf("fork + exec of itself        %.3f ms\n", sum[5] / n);
    free(mem);
    return 0;
}
