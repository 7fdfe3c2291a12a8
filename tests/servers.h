/* servers.h — throwaway redis-server processes for the Check suites that
 * talk to a real server (check_conn.c, check_service.c). Each test starts
 * its own (fork/exec, a directory below basedir, a TCP port found by
 * binding port 0, plus a unix socket), waits until it answers PING, and
 * kills it by PID in teardown. Included once per test program. */
#ifndef RR_TEST_SERVERS_H
#define RR_TEST_SERVERS_H

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- throwaway servers ------------------------------------------------- */

struct server {
    pid_t pid;
    int port;
    char dir[64];
    char sock[100];
    const char *extra[8];
};

#define MAX_SERVERS 4
static struct server *servers[MAX_SERVERS];
/* Made by servers_begin(): server dirs live below it, so the parent can remove what
 * a test that died on an assertion (skipping its teardown) left behind. */
static char basedir[32];

static int free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    ck_assert_int_ge(fd, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* Blocking PING over the unix socket; 0 once the server answers at all
 * (an -NOAUTH error counts: the server is up). */
static int raw_ping(const struct server *sv)
{
    struct sockaddr_un sa;
    char buf[64];
    int fd = socket(AF_UNIX, SOCK_STREAM, 0), ok = -1;
    ssize_t n;

    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sv->sock);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0
        && write(fd, "PING\r\n", 6) == 6 && (n = read(fd, buf, sizeof buf)) > 0
        && (buf[0] == '+' || buf[0] == '-'))
        ok = 0;
    close(fd);
    return ok;
}

static void server_spawn(struct server *sv)
{
    char portbuf[16];
    int i;

    snprintf(portbuf, sizeof portbuf, "%d", sv->port);
    unlink(sv->sock);
    sv->pid = fork();
    ck_assert_int_ge(sv->pid, 0);
    if (sv->pid == 0) {
        const char *argv[32];
        int n = 0, fd;
        /* If the test process dies (failed assertion, Check timeout), the
         * server goes with it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fd = open("/dev/null", O_RDWR);
        dup2(fd, 1);
        dup2(fd, 2);
        argv[n++] = "redis-server";
        argv[n++] = "--port";
        argv[n++] = portbuf;
        argv[n++] = "--bind";
        argv[n++] = "127.0.0.1 -::1";
        argv[n++] = "--unixsocket";
        argv[n++] = sv->sock;
        argv[n++] = "--save";
        argv[n++] = "";
        argv[n++] = "--appendonly";
        argv[n++] = "no";
        argv[n++] = "--dir";
        argv[n++] = sv->dir;
        for (i = 0; i < 8 && sv->extra[i]; i++)
            argv[n++] = sv->extra[i];
        argv[n] = NULL;
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    for (i = 0; i < 500; i++) {
        if (raw_ping(sv) == 0)
            return;
        usleep(10000);
    }
    ck_abort_msg("redis-server did not start");
}

static void server_kill(struct server *sv)
{
    if (sv->pid > 0) {
        kill(sv->pid, SIGKILL);
        kill(sv->pid, SIGCONT);
        waitpid(sv->pid, NULL, 0);
        sv->pid = 0;
    }
}

/* Start a server; extra arguments (up to 8) end with NULL. */
static struct server *server_start(const char *extra, ...)
{
    struct server *sv = calloc(1, sizeof *sv);
    va_list ap;
    int i;

    ck_assert_ptr_nonnull(sv);
    snprintf(sv->dir, sizeof sv->dir, "%s/srv.XXXXXX", basedir);
    ck_assert_ptr_nonnull(mkdtemp(sv->dir));
    snprintf(sv->sock, sizeof sv->sock, "%s/s.sock", sv->dir);
    sv->port = free_port();
    va_start(ap, extra);
    for (i = 0; extra && i < 8; i++, extra = va_arg(ap, const char *))
        sv->extra[i] = extra;
    va_end(ap);
    for (i = 0; i < MAX_SERVERS; i++)
        if (!servers[i]) {
            servers[i] = sv;
            break;
        }
    server_spawn(sv);
    return sv;
}

static void server_cleanup(struct server *sv)
{
    char path[128];

    server_kill(sv);
    unlink(sv->sock);
    snprintf(path, sizeof path, "%s/dump.rdb", sv->dir);
    unlink(path);
    rmdir(sv->dir);
    free(sv);
}

static void teardown(void)
{
    int i;

    for (i = 0; i < MAX_SERVERS; i++)
        if (servers[i]) {
            server_cleanup(servers[i]);
            servers[i] = NULL;
        }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* A test program's main: the servers' base directory, the suite, the
 * clean-up of whatever a test that died left behind. */
/* The suite's begin hook (unit.h): the directory the servers live below. */
static int servers_begin(const char *name)
{
    snprintf(basedir, sizeof basedir, "/tmp/check_%s.XXXXXX", name);
    if (!mkdtemp(basedir)) {
        perror("mkdtemp");
        return -1;
    }
    return 0;
}

/* The suite's end hook: servers are killed by each test's teardown (or by
 * PDEATHSIG when a test dies first); remove what is left of their files. */
static void servers_end(void)
{
    teardown();
    nftw(basedir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
