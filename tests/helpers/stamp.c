/* stamp FILE — append the CLOCK_REALTIME time in nanoseconds, as one line,
 * to FILE (O_APPEND, so concurrent stampers never interleave), then exit 0.
 * Used by scripts/bench to time handoffs and lock-loss detection. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct timespec ts;
    char line[32];
    int fd, n;

    if (argc != 2) {
        fputs("usage: stamp FILE\n", stderr);
        return 64;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    n = snprintf(line, sizeof line, "%lld\n",
                 (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "stamp: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (write(fd, line, (size_t)n) != n) {
        fprintf(stderr, "stamp: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    close(fd);
    return 0;
}
