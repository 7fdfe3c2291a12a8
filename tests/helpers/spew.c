/* spew — fill stderr's pipe, then run a command.
 *
 *   spew [-n BYTES] COMMAND [ARG...]
 *
 * Writes up to BYTES (default 65536, a whole default pipe) of 'x' to the
 * pipe or FIFO on stderr, without ever blocking, then execs COMMAND. It
 * writes through a descriptor of its own (/proc/self/fd/2 opened again with
 * O_NONBLOCK): stderr's open file description, which redlock-run shares,
 * keeps its flags. So when nobody reads that pipe, everything written to
 * stderr afterwards (redlock-run's log lines) finds it full. If stderr is
 * not a pipe or cannot be opened again, nothing is written.
 *
 * Used by scripts/chaos (the stalled-stderr scenarios). Exit status: that
 * of COMMAND; 2 on a usage error; 127 if COMMAND cannot be run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long long want = 65536;
    int i = 1;
    struct stat st;

    if (i + 1 < argc && strcmp(argv[i], "-n") == 0) {
        char *end;
        errno = 0;
        want = strtoll(argv[i + 1], &end, 10);
        if (errno || *end || want < 0) {
            fprintf(stderr, "usage: spew [-n BYTES] COMMAND [ARG...]\n");
            return 2;
        }
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: spew [-n BYTES] COMMAND [ARG...]\n");
        return 2;
    }
    if (fstat(2, &st) == 0 && S_ISFIFO(st.st_mode)) {
        int fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
            char buf[4096];
            memset(buf, 'x', sizeof buf);
            /* A write of up to PIPE_BUF bytes is all or nothing: when a
             * chunk does not fit, try smaller ones, down to one byte, so
             * that not even a short log line fits afterwards. */
            size_t chunk = sizeof buf;
            while (want > 0 && chunk > 0) {
                size_t n = want < (long long)chunk ? (size_t)want : chunk;
                ssize_t w = write(fd, buf, n);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w < 0 && errno == EAGAIN) {
                    chunk /= 2;
                    continue;
                }
                if (w <= 0)
                    break;
                want -= w;
            }
            close(fd);
        }
    }
    execvp(argv[i], argv + i);
    return 127;
}
