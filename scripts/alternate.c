/* alternate.c — time commands run by run in turn (A B C … C B A …), so that
 * a machine whose speed drifts slows them alike: hyperfine runs one command
 * all its runs, then the next. For each command: the median wall time from
 * posix_spawn to its reap, the 25th and 75th percentiles, the ratio of its
 * median to the first command's, and the mean CPU time of its whole tree
 * (wait4's rusage: the process and every descendant it reaped). The
 * commands' output goes to /dev/null; a run that does not exit 0 is
 * counted as bad.
 *
 *   cc -O2 -o /tmp/alternate scripts/alternate.c
 *   /tmp/alternate 1000 flock -n /tmp/f /bin/true ::: ./redlock-run -r unix://S x -- /bin/true
 *
 * Ten warm-up rounds come first and are not counted. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16
#define WARMUP 10

extern char **environ;

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Run cmd once; its wall time, CPU time (ms) and whether it exited 0. */
static int run(char **cmd, const posix_spawn_file_actions_t *fa, double *wall, double *cpu)
{
    struct rusage ru;
    pid_t pid;
    int st;
    double t0 = now_ms();

    if (posix_spawn(&pid, cmd[0], fa, NULL, cmd, environ) != 0) {
        perror(cmd[0]);
        exit(1);
    }
    if (wait4(pid, &st, 0, &ru) != pid) {
        perror("wait4");
        exit(1);
    }
    *wall = now_ms() - t0;
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    char **cmds[MAX_CMDS];
    int nc = 0, n = argc > 2 ? atoi(argv[1]) : 0;

    if (n < 1) {
        fprintf(stderr, "usage: %s RUNS CMD [ARG...] [::: CMD [ARG...]]...\n", argv[0]);
        return 2;
    }
    cmds[nc++] = &argv[2];
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], ":::") == 0) {
            if (nc == MAX_CMDS || i + 1 >= argc) {
                fprintf(stderr, "%s: at most %d commands, none empty\n", argv[0], MAX_CMDS);
                return 2;
            }
            argv[i] = NULL;
            cmds[nc++] = &argv[i + 1];
        }
    double *wall = calloc((size_t)n * nc, sizeof *wall), *cpu = calloc((size_t)nc, sizeof *cpu);
    if (!wall || !cpu) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    int bad[MAX_CMDS] = { 0 };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

    for (int w = 0; w < WARMUP; w++)
        for (int c = 0; c < nc; c++) {
            double x, y;
            run(cmds[c], &fa, &x, &y);
        }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nc; k++) {
            int c = i & 1 ? nc - 1 - k : k;   /* A B C, then C B A */
            double t;
            if (!run(cmds[c], &fa, &wall[c * n + i], &t))
                bad[c]++;
            cpu[c] += t;
        }
    double m0 = 0;
    for (int c = 0; c < nc; c++) {
        double *v = &wall[c * n];
        qsort(v, (size_t)n, sizeof *v, cmp);
        double m = v[n / 2];
        if (c == 0)
            m0 = m;
        printf("%-24.24s median %.3f ms  p25 %.3f  p75 %.3f  ratio %.3f  cpu %.3f ms  bad %d\n",
               cmds[c][0], m, v[n / 4], v[3 * n / 4], m / m0, cpu[c] / n, bad[c]);
    }
    free(wall);
    free(cpu);
    return 0;
}
