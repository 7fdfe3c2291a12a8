/* least-wrapper.c — the least a Redis lock wrapper can do, for
 * scripts/bench: SET NAME tok NX PX 30000 over a unix socket, fork and exec
 * the command, wait for it, DEL NAME. No renewal, no guard, no record, no
 * check of the DEL: a floor to measure redlock-run against, not a tool.
 *
 *     least-wrapper SOCKET NAME /path/to/command [ARG...]
 *
 * Exit: the command's status; 75 the lock is held (a nil reply); 69 no
 * server, or any other answer (an error, EOF). */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int call(int fd, const char *req, char *buf, size_t len)
{
    if (write(fd, req, strlen(req)) < 0)
        return -1;
    return (int)read(fd, buf, len);
}

int main(int argc, char **argv)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    char buf[256], req[512];
    int fd, st;
    pid_t pid;

    if (argc < 4)
        return 64;
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        return 69;
    snprintf(req, sizeof req,
             "*6\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n30000\r\n",
             strlen(argv[2]), argv[2]);
    int n = call(fd, req, buf, sizeof buf);
    if (n >= 3 && memcmp(buf, "$-1", 3) == 0)
        return 75;
    if (n < 1 || buf[0] != '+')
        return 69;
    pid = fork();
    if (pid == 0) {
        execv(argv[3], argv + 3);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        st = 70 << 8;
    snprintf(req, sizeof req, "*2\r\n$3\r\nDEL\r\n$%zu\r\n%s\r\n", strlen(argv[2]), argv[2]);
    call(fd, req, buf, sizeof buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
