/* check_conn.c — conn.c against real redis-server processes.
 *
 * Each test starts its own throwaway redis-server (fork/exec, temp dir,
 * TCP port found by binding port 0, plus a unix socket), waits until it
 * answers PING, and kills it by PID at the end. Stalled or broken peers are
 * plain sockets that never answer (no Redis mock). Every test ends with
 * uv_run returning 0 and uv_loop_close returning 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conn.h"

#include "servers.h"
#include "unit.h"

/* ---- helpers ------------------------------------------------------------- */

static struct rr_endpoint ep_tcp(const char *host, int port, int db)
{
    struct rr_endpoint ep;

    memset(&ep, 0, sizeof ep);
    ep.transport = RR_TRANSPORT_TCP;
    snprintf(ep.host, sizeof ep.host, "%s", host);
    ep.port = port;
    ep.db = db;
    return ep;
}

static struct rr_endpoint ep_unix(const char *path, int db)
{
    struct rr_endpoint ep;

    memset(&ep, 0, sizeof ep);
    ep.transport = RR_TRANSPORT_UNIX;
    snprintf(ep.path, sizeof ep.path, "%s", path);
    snprintf(ep.display, sizeof ep.display, "%s", path);
    ep.db = db;
    return ep;
}

static struct rr_conn_opts opts_ms(int64_t connect_ms, int64_t request_ms)
{
    struct rr_conn_opts o;

    memset(&o, 0, sizeof o);
    o.connect_timeout_ms = connect_ms;
    o.request_timeout_ms = request_ms;
    return o;
}

static int64_t now_ms(void)
{
    return (int64_t)(uv_hrtime() / 1000000u);
}

/* One recorded reply. */
struct call {
    int called;
    int status;
    int type;
    long long integer;
    char str[256];
    char err[256];
    int64_t at;
    bool unsent;            /* rr_conn_unsent() in the callback */
    void (*then)(struct rr_conn *c, struct call *k);  /* optional follow-up */
    void *user;
};

static int in_command;  /* set while inside rr_conn_command */

static void on_reply(struct rr_conn *c, int status, redisReply *reply, void *arg)
{
    struct call *k = arg;

    ck_assert_msg(!in_command, "callback ran synchronously inside rr_conn_command");
    ck_assert_int_eq(k->called, 0);
    k->called = 1;
    k->status = status;
    k->at = now_ms();
    k->unsent = rr_conn_unsent(c);
    snprintf(k->err, sizeof k->err, "%s", rr_conn_error(c));
    if (status == RR_REPLY_OK) {
        ck_assert_ptr_nonnull(reply);
        k->type = reply->type;
        k->integer = reply->integer;
        if (reply->str)
            snprintf(k->str, sizeof k->str, "%.*s", (int)reply->len, reply->str);
        else if (reply->type == REDIS_REPLY_ARRAY && reply->elements > 0
                 && reply->element[0]->str)
            snprintf(k->str, sizeof k->str, "%s", reply->element[0]->str);
    } else {
        ck_assert_ptr_null(reply);
    }
    if (k->then)
        k->then(c, k);
}

/* Issue a NULL-terminated command with on_reply. */
static int cmd(struct rr_conn *c, struct call *k, ...)
{
    const char *argv[16];
    va_list ap;
    int argc = 0, rc, saved = in_command;

    va_start(ap, k);
    while (argc < 15 && (argv[argc] = va_arg(ap, const char *)) != NULL)
        argc++;
    va_end(ap);
    argv[argc] = NULL;
    in_command = 1;
    rc = rr_conn_commandv(c, on_reply, k, argv);
    in_command = saved;
    return rc;
}

static void wait_for(uv_loop_t *loop, const int *flag)
{
    while (!*flag)
        uv_run(loop, UV_RUN_ONCE);
}

/* Close c, drain the loop, and make sure nothing is left on it. */
static void finish(uv_loop_t *loop, struct rr_conn **conns, int n)
{
    int i;

    for (i = 0; i < n; i++)
        rr_conn_close(conns[i]);
    ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

static void ping_ok(uv_loop_t *loop, struct rr_conn *c)
{
    struct call k = { 0 };

    ck_assert_int_eq(cmd(c, &k, "PING", NULL), 0);
    wait_for(loop, &k.called);
    ck_assert_msg(k.status == RR_REPLY_OK, "PING failed: %d %s", k.status, k.err);
    ck_assert_int_eq(k.type, REDIS_REPLY_STATUS);
    ck_assert_str_eq(k.str, "PONG");
}

/* ---- basic ------------------------------------------------------------- */

START_TEST(test_ping_tcp)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 1000);
    uv_loop_t loop;
    struct rr_conn *c;
    char name[64];

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    ck_assert_ptr_nonnull(c);
    snprintf(name, sizeof name, "127.0.0.1:%d", sv->port);
    ck_assert_str_eq(rr_conn_name(c), name);
    ck_assert_str_eq(rr_conn_error(c), "");
    ck_assert_int_eq(rr_conn_is_ready(c), 0);
    ping_ok(&loop, c);
    ck_assert_int_eq(rr_conn_is_ready(c), 1);
    ping_ok(&loop, c);
    finish(&loop, &c, 1);
}
END_TEST

START_TEST(test_ping_unix)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_conn_opts o = opts_ms(1000, 200);
    uv_loop_t loop;
    struct rr_conn *c;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    ck_assert_str_eq(rr_conn_name(c), sv->sock);
    /* The loop's cached clock is now stale by more than the request
     * timeout; the deadline must count from the real queueing time. */
    usleep(300000);
    ping_ok(&loop, c);
    finish(&loop, &c, 1);
}
END_TEST

START_TEST(test_ping_hostname_and_ipv6)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep1 = ep_tcp("localhost", sv->port, 0);
    struct rr_endpoint ep2 = ep_tcp("::1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(2000, 2000);
    uv_loop_t loop;
    struct rr_conn *c[2];
    char name[64];

    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep1, &o);
    c[1] = rr_conn_new(&loop, &ep2, &o);
    snprintf(name, sizeof name, "[::1]:%d", sv->port);
    ck_assert_str_eq(rr_conn_name(c[1]), name);
    ping_ok(&loop, c[0]);
    ping_ok(&loop, c[1]);
    finish(&loop, c, 2);
}
END_TEST

/* ---- pipelining ---------------------------------------------------------- */

struct pipe_state {
    int next;        /* index of the reply expected next */
    int done;
    int total;
};

static void on_rpush(struct rr_conn *c, int status, redisReply *reply, void *arg)
{
    struct pipe_state *ps = arg;

    (void)c;
    ck_assert_int_eq(status, RR_REPLY_OK);
    ck_assert_int_eq(reply->type, REDIS_REPLY_INTEGER);
    ps->next++;
    /* RPUSH answers the new length: replies come back in request order. */
    ck_assert_int_eq(reply->integer, ps->next);
    if (ps->next == ps->total)
        ps->done = 1;
}

START_TEST(test_pipeline_1000)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_conn_opts o = opts_ms(1000, 5000);
    struct pipe_state ps = { 0, 0, 2000 };
    uv_loop_t loop;
    struct rr_conn *c;
    char num[16];
    int i;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    /* The first 1000 are queued before the connection exists (one batch
     * write), the next 1000 are written one by one once READY. */
    for (i = 0; i < 1000; i++) {
        const char *argv[] = { "RPUSH", "list", num, NULL };
        snprintf(num, sizeof num, "%d", i);
        ck_assert_int_eq(rr_conn_commandv(c, on_rpush, &ps, argv), 0);
    }
    while (!rr_conn_is_ready(c))
        uv_run(&loop, UV_RUN_ONCE);
    for (i = 1000; i < 2000; i++) {
        const char *argv[] = { "RPUSH", "list", num, NULL };
        snprintf(num, sizeof num, "%d", i);
        ck_assert_int_eq(rr_conn_commandv(c, on_rpush, &ps, argv), 0);
    }
    wait_for(&loop, &ps.done);
    ck_assert_int_eq(ps.next, 2000);
    {
        struct call k = { 0 };
        cmd(c, &k, "LINDEX", "list", "1999", NULL);
        wait_for(&loop, &k.called);
        ck_assert_str_eq(k.str, "1999");
    }
    finish(&loop, &c, 1);
}
END_TEST

/* ---- SELECT / AUTH --------------------------------------------------------- */

START_TEST(test_select_db)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep3 = ep_tcp("127.0.0.1", sv->port, 3);
    struct rr_endpoint ep0 = ep_unix(sv->sock, 0);
    struct rr_conn_opts o = opts_ms(1000, 1000);
    struct call set = { 0 }, get0 = { 0 }, sel = { 0 }, get3 = { 0 };
    uv_loop_t loop;
    struct rr_conn *c[2];

    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep3, &o);
    c[1] = rr_conn_new(&loop, &ep0, &o);
    cmd(c[0], &set, "SET", "k", "in-db-3", NULL);
    wait_for(&loop, &set.called);
    ck_assert_int_eq(set.status, RR_REPLY_OK);
    ck_assert_str_eq(set.str, "OK");
    /* db 0 does not have it; SELECT 3 on the second connection does. */
    cmd(c[1], &get0, "GET", "k", NULL);
    cmd(c[1], &sel, "SELECT", "3", NULL);
    cmd(c[1], &get3, "GET", "k", NULL);
    wait_for(&loop, &get3.called);
    ck_assert_int_eq(get0.type, REDIS_REPLY_NIL);
    ck_assert_str_eq(sel.str, "OK");
    ck_assert_int_eq(get3.type, REDIS_REPLY_STRING);
    ck_assert_str_eq(get3.str, "in-db-3");
    finish(&loop, c, 2);
}
END_TEST

START_TEST(test_auth_password)
{
    struct server *sv = server_start("--requirepass", "s3cr3t-pass", NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 2);
    struct rr_conn_opts good = opts_ms(1000, 1000), bad = opts_ms(1000, 1000);
    struct rr_conn_opts none = opts_ms(1000, 1000);
    struct call k[3] = { { 0 } }, noauth = { 0 }, set = { 0 };
    uv_loop_t loop;
    struct rr_conn *c[3];
    char want[128];
    int i;

    good.password = "s3cr3t-pass";
    bad.password = "hunter2-wrong";
    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &good);
    c[1] = rr_conn_new(&loop, &ep, &bad);
    c[2] = rr_conn_new(&loop, &ep, &none);

    /* AUTH + SELECT 2 are pipelined in front; only SET's reply is seen. */
    cmd(c[0], &set, "SET", "a", "1", NULL);
    wait_for(&loop, &set.called);
    ck_assert_int_eq(set.status, RR_REPLY_OK);
    ck_assert_str_eq(set.str, "OK");
    ck_assert_int_eq(rr_conn_is_ready(c[0]), 1);

    /* Wrong password: every pipelined request fails, the message names
     * the endpoint and the server's reason, never the password. */
    for (i = 0; i < 3; i++)
        cmd(c[1], &k[i], "PING", NULL);
    wait_for(&loop, &k[2].called);
    snprintf(want, sizeof want, "127.0.0.1:%d: authentication failed: WRONGPASS", sv->port);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(k[i].status, RR_REPLY_IOERR);
        ck_assert_msg(strncmp(k[i].err, want, strlen(want)) == 0, "error: %s", k[i].err);
        ck_assert_ptr_null(strstr(k[i].err, "hunter2"));
    }
    ck_assert_int_eq(rr_conn_is_ready(c[1]), 0);

    /* No password: the handshake's SELECT 2 meets NOAUTH. */
    cmd(c[2], &noauth, "GET", "a", NULL);
    wait_for(&loop, &noauth.called);
    ck_assert_int_eq(noauth.status, RR_REPLY_IOERR);
    snprintf(want, sizeof want, "127.0.0.1:%d: cannot select db 2: NOAUTH", sv->port);
    ck_assert_msg(strncmp(noauth.err, want, strlen(want)) == 0, "%s", noauth.err);
    finish(&loop, c, 3);
}
END_TEST

START_TEST(test_auth_acl_user)
{
    struct server *sv = server_start("--user", "alice", "on", ">secret", "~*", "+@all",
                                     NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_conn_opts good = opts_ms(1000, 1000), bad = opts_ms(1000, 1000);
    struct call who = { 0 }, fail = { 0 };
    uv_loop_t loop;
    struct rr_conn *c[2];

    good.user = "alice";
    good.password = "secret";
    bad.user = "alice";
    bad.password = "not-the-secret";
    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &good);
    c[1] = rr_conn_new(&loop, &ep, &bad);
    cmd(c[0], &who, "ACL", "WHOAMI", NULL);
    cmd(c[1], &fail, "ACL", "WHOAMI", NULL);
    wait_for(&loop, &who.called);
    wait_for(&loop, &fail.called);
    ck_assert_int_eq(who.status, RR_REPLY_OK);
    ck_assert_str_eq(who.str, "alice");
    ck_assert_int_eq(fail.status, RR_REPLY_IOERR);
    ck_assert_msg(strstr(fail.err, ": authentication failed: WRONGPASS") != NULL, "%s", fail.err);
    ck_assert_ptr_null(strstr(fail.err, "not-the-secret"));
    finish(&loop, c, 2);
}
END_TEST

/* ---- failures ---------------------------------------------------------- */

START_TEST(test_connect_refused)
{
    int port = free_port();
    struct rr_endpoint ep = ep_tcp("127.0.0.1", port, 0);
    struct rr_conn_opts o = opts_ms(1000, 1000);
    struct call k = { 0 };
    uv_loop_t loop;
    struct rr_conn *c;
    char want[128];
    int64_t t0;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    t0 = now_ms();
    ck_assert_int_eq(cmd(c, &k, "PING", NULL), 0);
    ck_assert_int_eq(k.called, 0);  /* never synchronous */
    wait_for(&loop, &k.called);
    ck_assert_int_eq(k.status, RR_REPLY_IOERR);
    ck_assert_int_lt(k.at - t0, 500);
    snprintf(want, sizeof want, "cannot connect to 127.0.0.1:%d: connection refused", port);
    ck_assert_str_eq(k.err, want);
    finish(&loop, &c, 1);
}
END_TEST

/* uv_tcp_connect itself refuses these (no route / bad scope): the failure
 * is known inside rr_conn_command but must still arrive from the loop. */
START_TEST(test_connect_fails_synchronously)
{
    struct rr_endpoint ep[2] = { ep_tcp("255.255.255.255", 6379, 0),
                                 ep_tcp("fe80::1", 6379, 0) };
    struct rr_conn_opts o = opts_ms(1000, 1000);
    struct call k[2][2];
    uv_loop_t loop;
    struct rr_conn *c[2];
    int i;

    memset(k, 0, sizeof k);
    uv_loop_init(&loop);
    for (i = 0; i < 2; i++) {
        c[i] = rr_conn_new(&loop, &ep[i], &o);
        ck_assert_int_eq(cmd(c[i], &k[i][0], "PING", NULL), 0);
        ck_assert_int_eq(cmd(c[i], &k[i][1], "PING", NULL), 0);
        ck_assert_int_eq(k[i][0].called, 0);
    }
    for (i = 0; i < 2; i++) {
        wait_for(&loop, &k[i][1].called);
        ck_assert_int_eq(k[i][0].status, RR_REPLY_IOERR);
        ck_assert_int_eq(k[i][1].status, RR_REPLY_IOERR);
        ck_assert_msg(strncmp(k[i][0].err, "cannot connect to ", 18) == 0, "%s", k[i][0].err);
    }
    finish(&loop, c, 2);
}
END_TEST

START_TEST(test_sigstop_timeout_then_reconnect)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 200);
    struct call k[3] = { { 0 } };
    uv_loop_t loop;
    struct rr_conn *c;
    char want[128];
    int64_t t0;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    ping_ok(&loop, c);
    kill(sv->pid, SIGSTOP);
    t0 = now_ms();
    cmd(c, &k[0], "PING", NULL);
    cmd(c, &k[1], "SET", "x", "1", NULL);
    wait_for(&loop, &k[1].called);
    ck_assert_int_eq(k[0].status, RR_REPLY_TIMEOUT);
    ck_assert_int_eq(k[1].status, RR_REPLY_TIMEOUT);
    ck_assert_int_ge(k[0].at - t0, 180);
    ck_assert_int_lt(k[0].at - t0, 600);
    snprintf(want, sizeof want, "127.0.0.1:%d: no reply within 200ms", sv->port);
    ck_assert_str_eq(k[0].err, want);
    ck_assert_int_eq(rr_conn_is_ready(c), 0);
    kill(sv->pid, SIGCONT);
    /* The broken stream was dropped; this one reconnects. */
    cmd(c, &k[2], "GET", "x", NULL);
    wait_for(&loop, &k[2].called);
    ck_assert_int_eq(k[2].status, RR_REPLY_OK);
    ck_assert_int_eq(rr_conn_is_ready(c), 1);
    finish(&loop, &c, 1);
}
END_TEST

static void on_kill_timer(uv_timer_t *t)
{
    struct server *sv = t->data;

    server_kill(sv);
    uv_close((uv_handle_t *)t, NULL);
}

START_TEST(test_server_killed_then_restarted)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 5000);
    struct call blpop = { 0 }, refused = { 0 };
    uv_timer_t killer;
    uv_loop_t loop;
    struct rr_conn *c;
    char want[128];

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    ping_ok(&loop, c);
    /* A request in flight when the server dies. */
    cmd(c, &blpop, "BLPOP", "nothing", "10", NULL);
    uv_timer_init(&loop, &killer);
    killer.data = sv;
    uv_timer_start(&killer, on_kill_timer, 100, 0);
    wait_for(&loop, &blpop.called);
    ck_assert_int_eq(blpop.status, RR_REPLY_IOERR);
    snprintf(want, sizeof want, "127.0.0.1:%d: connection closed by server", sv->port);
    ck_assert_msg(strcmp(blpop.err, want) == 0 || strstr(blpop.err, "reset") != NULL,
                  "%s", blpop.err);
    /* While it is down: refused. */
    cmd(c, &refused, "PING", NULL);
    wait_for(&loop, &refused.called);
    ck_assert_int_eq(refused.status, RR_REPLY_IOERR);
    ck_assert_msg(strstr(refused.err, "connection refused") != NULL, "%s", refused.err);
    /* Back on the same port: the next request reconnects. */
    server_spawn(sv);
    ping_ok(&loop, c);
    finish(&loop, &c, 1);
}
END_TEST

/* A plain socket that completes the TCP handshake (kernel backlog) but
 * never reads or answers. */
static int stalled_listener(int backlog, int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(fd, backlog), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

START_TEST(test_stalled_peer_timeout)
{
    int port, lfd = stalled_listener(16, &port);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", port, 0);
    struct rr_conn_opts o = opts_ms(1000, 200);
    struct call k = { 0 };
    uv_loop_t loop;
    struct rr_conn *c;
    int64_t t0;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    t0 = now_ms();
    cmd(c, &k, "PING", NULL);
    wait_for(&loop, &k.called);
    ck_assert_int_eq(k.status, RR_REPLY_TIMEOUT);
    ck_assert_int_ge(k.at - t0, 180);
    ck_assert_int_lt(k.at - t0, 600);
    ck_assert_msg(strstr(k.err, "no reply within 200ms") != NULL, "%s", k.err);
    finish(&loop, &c, 1);
    close(lfd);
}
END_TEST

/* A listener whose accept queue is full: further SYNs are dropped, so a
 * connect hangs until our connect timeout. */
static int full_listener(int *port, int fillers[2])
{
    struct sockaddr_in sa;
    int lfd = stalled_listener(0, port), i;

    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)*port);
    for (i = 0; i < 2; i++) {
        fillers[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[i], (struct sockaddr *)&sa, sizeof sa);
    }
    usleep(50000);
    return lfd;
}

START_TEST(test_connect_timeout)
{
    int port, fillers[2], lfd = full_listener(&port, fillers);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", port, 0);
    struct rr_conn_opts o = opts_ms(300, 2000), o2 = opts_ms(800, 100);
    struct call k = { 0 }, early = { 0 }, late = { 0 };
    uv_loop_t loop;
    struct rr_conn *c[2];
    char want[128];
    int64_t t0;

    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &o);
    c[1] = rr_conn_new(&loop, &ep, &o2);
    t0 = now_ms();
    cmd(c[0], &k, "PING", NULL);
    /* Request deadline before the connect deadline: the request times out
     * alone, the attempt goes on, and a later request meets the connect
     * timeout. */
    cmd(c[1], &early, "PING", NULL);
    wait_for(&loop, &early.called);
    ck_assert_int_eq(early.status, RR_REPLY_TIMEOUT);
    ck_assert_int_lt(early.at - t0, 400);
    ck_assert_msg(strstr(early.err, "not connected within 100ms") != NULL, "%s", early.err);
    /* It was never written: another node may be asked (cluster.c). */
    ck_assert(early.unsent);
    wait_for(&loop, &k.called);
    ck_assert_int_eq(k.status, RR_REPLY_IOERR);
    ck_assert_int_ge(k.at - t0, 280);
    ck_assert_int_lt(k.at - t0, 900);
    snprintf(want, sizeof want, "cannot connect to 127.0.0.1:%d: connection timed out", port);
    ck_assert_str_eq(k.err, want);
    rr_conn_close(c[0]);
    /* c[1]'s attempt started at t0 and still runs with nothing pending;
     * a new request times out alone again, and at 800ms the attempt ends
     * by itself (the timer stays armed for the connect deadline). */
    ck_assert_int_eq(cmd(c[1], &late, "PING", NULL), 0);
    wait_for(&loop, &late.called);
    ck_assert_int_eq(late.status, RR_REPLY_TIMEOUT);
    ck_assert_int_eq(rr_conn_is_ready(c[1]), 0);
    while (strstr(rr_conn_error(c[1]), "connection timed out") == NULL)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_int_ge(now_ms() - t0, 750);
    ck_assert_int_lt(now_ms() - t0, 1500);
    finish(&loop, &c[1], 1);
    close(fillers[0]);
    close(fillers[1]);
    close(lfd);
}
END_TEST

/* A process starved of CPU (a herd of runs on a busy machine) comes back
 * to its loop after a deadline, with the reply already in the socket: libuv
 * runs the due timer before it polls, and that reply must not be judged
 * late (issue 33: losers of a herd blamed Redis, exit 69). usleep stands
 * for the starvation: the loop does not run while the real server answers. */
START_TEST(test_reply_in_socket_is_not_late)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep[2] = { ep_tcp("127.0.0.1", sv->port, 0), ep_unix(sv->sock, 0) };
    struct rr_conn_opts o = opts_ms(1000, 100);
    struct call k[2][2];
    uv_loop_t loop;
    struct rr_conn *c[2];
    int i;

    memset(k, 0, sizeof k);
    uv_loop_init(&loop);
    for (i = 0; i < 2; i++) {
        c[i] = rr_conn_new(&loop, &ep[i], &o);
        ping_ok(&loop, c[i]);
        cmd(c[i], &k[i][0], "SET", "x", "1", NULL);
        cmd(c[i], &k[i][1], "GET", "x", NULL);
    }
    usleep(400 * 1000);
    for (i = 0; i < 2; i++) {
        wait_for(&loop, &k[i][1].called);
        ck_assert_msg(k[i][0].status == RR_REPLY_OK, "SET: %d %s", k[i][0].status, k[i][0].err);
        ck_assert_msg(k[i][1].status == RR_REPLY_OK, "GET: %d %s", k[i][1].status, k[i][1].err);
        ck_assert_str_eq(k[i][1].str, "1");
        ck_assert_int_eq(rr_conn_is_ready(c[i]), 1);
    }
    finish(&loop, c, 2);
}
END_TEST

/* The same for a connect: the kernel finished it long before the loop ran,
 * so "connection timed out" would be a lie. What follows it (AUTH, SELECT,
 * the request) goes on, and gets its answers. */
START_TEST(test_connect_done_is_not_late)
{
    struct server *sv = server_start("--requirepass", "pw", NULL);
    struct rr_endpoint ep[2] = { ep_tcp("127.0.0.1", sv->port, 1), ep_unix(sv->sock, 1) };
    struct rr_conn_opts o = opts_ms(200, 200);
    struct call k[2];
    uv_loop_t loop;
    struct rr_conn *c[2];
    int i;

    memset(k, 0, sizeof k);
    o.wait_connect = true;  /* as for one fixed server (direct.c) */
    o.password = "pw";
    uv_loop_init(&loop);
    for (i = 0; i < 2; i++) {
        c[i] = rr_conn_new(&loop, &ep[i], &o);
        cmd(c[i], &k[i], "PING", NULL);
    }
    usleep(500 * 1000);
    for (i = 0; i < 2; i++) {
        wait_for(&loop, &k[i].called);
        ck_assert_msg(k[i].status == RR_REPLY_OK, "PING: %d %s", k[i].status, k[i].err);
        ck_assert_str_eq(k[i].str, "PONG");
    }
    finish(&loop, c, 2);
}
END_TEST

/* The same over TLS: the ciphertext read is decrypted and dispatched, and a
 * TLS handshake still to come after a connect found done gets its time. */
START_TEST(test_tls_reply_in_socket_is_not_late)
{
    char conf[64], cert[64], sh[1024], tport[16];
    struct server *sv;
    struct rr_endpoint ep;
    struct rr_conn_opts o = opts_ms(300, 100);
    struct call k[3];
    uv_loop_t loop;
    struct rr_conn *c[2];
    int i;

    snprintf(cert, sizeof cert, "%s/tls.pem", basedir);
    snprintf(conf, sizeof conf, "%s/tls.conf", basedir);
    snprintf(sh, sizeof sh, "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s/tls.key -out %s >/dev/null 2>&1 && "
             "printf 'tls-cert-file %s\ntls-key-file %s/tls.key\ntls-ca-cert-file %s\n"
             "tls-auth-clients no\n' >%s", basedir, cert, cert, basedir, cert, conf);
    ck_assert_msg(system(sh) == 0, "cannot make a certificate with openssl");
    snprintf(tport, sizeof tport, "%d", free_port());
    sv = server_start("--tls-port", tport, "--include", conf, NULL);
    (void)sv;
    ep = ep_tcp("127.0.0.1", atoi(tport), 0);
    ep.tls = true;
    o.tls.ca_file = cert;
    o.wait_connect = true;
    memset(k, 0, sizeof k);
    uv_loop_init(&loop);
    for (i = 0; i < 2; i++)
        c[i] = rr_conn_new(&loop, &ep, &o);
    ping_ok(&loop, c[0]);
    cmd(c[0], &k[0], "SET", "x", "1", NULL);
    cmd(c[0], &k[1], "GET", "x", NULL);
    cmd(c[1], &k[2], "PING", NULL);   /* connects, then the handshake */
    usleep(500 * 1000);
    for (i = 0; i < 3; i++) {
        wait_for(&loop, &k[i].called);
        ck_assert_msg(k[i].status == RR_REPLY_OK, "%d: %d %s", i, k[i].status, k[i].err);
    }
    ck_assert_str_eq(k[1].str, "1");
    ck_assert_str_eq(k[2].str, "PONG");
    finish(&loop, c, 2);
}
END_TEST

START_TEST(test_protocol_error)
{
    int port, lfd = stalled_listener(16, &port), fd;
    struct rr_endpoint ep = ep_tcp("127.0.0.1", port, 0);
    struct rr_conn_opts o = opts_ms(1000, 2000);
    struct call k = { 0 };
    uv_loop_t loop;
    struct rr_conn *c;

    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    cmd(c, &k, "PING", NULL);
    while (!rr_conn_is_ready(c))
        uv_run(&loop, UV_RUN_ONCE);
    fd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "HTTP/1.1 400 Bad\r\n", 18), 18);
    wait_for(&loop, &k.called);
    ck_assert_int_eq(k.status, RR_REPLY_IOERR);
    ck_assert_msg(strstr(k.err, ": protocol error: ") != NULL, "%s", k.err);
    finish(&loop, &c, 1);
    close(fd);
    close(lfd);
}
END_TEST

/* What a broken or hostile peer might answer: a 4 GB bulk string, 2e9
 * elements (hiredis would calloc 16 GB for them up front), the same one
 * level down, and a line that never ends. Each must fail every pending
 * request at once with one clear message, long before the deadline. */
START_TEST(test_reply_too_large)
{
    static char line[(1 << 20) + 65536];
    static const char nested[] = "*2\r\n:1\r\n*1\r\n*2000000000\r\n";
    const struct { const char *data; size_t len; } cases[] = {
        { "$4000000000\r\n", 13 },
        { "*2000000000\r\n", 13 },
        { nested, sizeof nested - 1 },
        { line, sizeof line },
    };
    int port, lfd = stalled_listener(16, &port), fd;
    struct rr_endpoint ep = ep_tcp("127.0.0.1", port, 0);
    struct rr_conn_opts o = opts_ms(1000, 5000);
    struct call k[3];
    uv_loop_t loop;
    struct rr_conn *c;
    char want[128];
    size_t i, off;
    int64_t t0;
    int j;

    memset(line, 'x', sizeof line);
    line[0] = '+';
    snprintf(want, sizeof want, "127.0.0.1:%d: reply larger than 1 MiB (is it a Redis server?)",
             port);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(k, 0, sizeof k);
        uv_loop_init(&loop);
        c = rr_conn_new(&loop, &ep, &o);
        for (j = 0; j < 3; j++)
            cmd(c, &k[j], "PING", NULL);
        while (!rr_conn_is_ready(c))
            uv_run(&loop, UV_RUN_ONCE);
        fd = accept(lfd, NULL, NULL);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
        t0 = now_ms();
        for (off = 0; !k[2].called;) {
            ssize_t n = off < cases[i].len ? write(fd, cases[i].data + off, cases[i].len - off) : 0;
            if (n > 0)
                off += (size_t)n;
            uv_run(&loop, off < cases[i].len ? UV_RUN_NOWAIT : UV_RUN_ONCE);
        }
        for (j = 0; j < 3; j++) {
            ck_assert_msg(k[j].status == RR_REPLY_IOERR, "case %zu: status %d: %s", i,
                          k[j].status, k[j].err);
            ck_assert_str_eq(k[j].err, want);
        }
        ck_assert_int_lt(k[2].at - t0, 1000);
        ck_assert_int_eq(rr_conn_is_ready(c), 0);
        finish(&loop, &c, 1);
        close(fd);
    }
    close(lfd);
}
END_TEST

/* Replies just below the cap pass, one after the other: the cap is per
 * reply, not per connection. */
START_TEST(test_reply_below_cap)
{
    static char big[900 * 1024];
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_conn_opts o = opts_ms(1000, 5000);
    struct call set = { 0 }, get[3] = { { 0 } }, lr = { 0 };
    const char *argv[] = { "SET", "big", big, NULL };
    uv_loop_t loop;
    struct rr_conn *c;
    int i;

    memset(big, 'b', sizeof big - 1);
    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    ck_assert_int_eq(rr_conn_commandv(c, on_reply, &set, argv), 0);
    wait_for(&loop, &set.called);
    ck_assert_int_eq(set.status, RR_REPLY_OK);
    for (i = 0; i < 3; i++)
        cmd(c, &get[i], "GET", "big", NULL);
    /* 5000 elements, each a short string. */
    for (i = 0; i < 5; i++) {
        struct call push = { 0 };
        const char *pv[1003] = { "RPUSH", "l" };
        char num[1000][8];
        int n;
        for (n = 0; n < 1000; n++) {
            snprintf(num[n], sizeof num[n], "%d", n);
            pv[n + 2] = num[n];
        }
        pv[1002] = NULL;
        ck_assert_int_eq(rr_conn_commandv(c, on_reply, &push, pv), 0);
        wait_for(&loop, &push.called);
        ck_assert_int_eq(push.status, RR_REPLY_OK);
    }
    cmd(c, &lr, "LRANGE", "l", "0", "-1", NULL);
    wait_for(&loop, &lr.called);
    for (i = 0; i < 3; i++) {
        ck_assert_msg(get[i].status == RR_REPLY_OK, "GET %d: %d %s", i, get[i].status,
                      get[i].err);
        ck_assert_int_eq(get[i].type, REDIS_REPLY_STRING);
    }
    ck_assert_msg(lr.status == RR_REPLY_OK, "LRANGE: %d %s", lr.status, lr.err);
    ck_assert_int_eq(lr.type, REDIS_REPLY_ARRAY);
    finish(&loop, &c, 1);
}
END_TEST

/* ---- callbacks and close --------------------------------------------------- */

struct closer {
    struct call k[3];
    int after_close_rc;
    int others_done_before_return;
};

static void close_from_callback(struct rr_conn *c, struct call *k)
{
    struct closer *cl = k->user;

    rr_conn_close(c);
    cl->others_done_before_return = cl->k[1].called && cl->k[2].called;
    cl->after_close_rc = cmd(c, &cl->k[1], "PING", NULL);
}

START_TEST(test_close_in_callback)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_conn_opts o = opts_ms(1000, 1000);
    struct closer cl;
    uv_loop_t loop;
    struct rr_conn *c;

    memset(&cl, 0, sizeof cl);
    uv_loop_init(&loop);
    c = rr_conn_new(&loop, &ep, &o);
    cl.k[0].then = close_from_callback;
    cl.k[0].user = &cl;
    cmd(c, &cl.k[0], "PING", NULL);
    cmd(c, &cl.k[1], "PING", NULL);
    cmd(c, &cl.k[2], "PING", NULL);
    /* The loop runs dry: c freed itself, nothing is left active. */
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(cl.k[0].status, RR_REPLY_OK);
    ck_assert_int_eq(cl.k[1].status, RR_REPLY_CLOSED);
    ck_assert_int_eq(cl.k[2].status, RR_REPLY_CLOSED);
    ck_assert_int_eq(cl.others_done_before_return, 1);
    ck_assert_int_lt(cl.after_close_rc, 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static void on_close_timer(uv_timer_t *t)
{
    rr_conn_close(t->data);
    uv_close((uv_handle_t *)t, NULL);
}

START_TEST(test_close_with_pending)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 5000);
    struct call k[5] = { { 0 } }, blpop = { 0 };
    uv_timer_t t;
    uv_loop_t loop;
    struct rr_conn *c;
    int i;

    uv_loop_init(&loop);
    /* Never connected: queued requests are answered by the close itself. */
    c = rr_conn_new(&loop, &ep, &o);
    for (i = 0; i < 5; i++)
        cmd(c, &k[i], "PING", NULL);
    rr_conn_close(c);
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(k[i].called, 1);
        ck_assert_int_eq(k[i].status, RR_REPLY_CLOSED);
    }
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);

    /* Connected, a blocking request in flight, closed from a timer. */
    c = rr_conn_new(&loop, &ep, &o);
    ping_ok(&loop, c);
    cmd(c, &blpop, "BLPOP", "nothing", "10", NULL);
    uv_timer_init(&loop, &t);
    t.data = c;
    uv_timer_start(&t, on_close_timer, 50, 0);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(blpop.status, RR_REPLY_CLOSED);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_close_never_used_and_mid_connect)
{
    int port, fillers[2], lfd = full_listener(&port, fillers);
    struct rr_endpoint full = ep_tcp("127.0.0.1", port, 0);
    struct rr_endpoint named = ep_tcp("localhost", port, 0);
    struct rr_conn_opts o = opts_ms(5000, 5000);
    struct call k[2] = { { 0 } };
    uv_loop_t loop;
    struct rr_conn *c[3];

    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &full, &o);    /* never used */
    c[1] = rr_conn_new(&loop, &full, &o);    /* connect hangs */
    c[2] = rr_conn_new(&loop, &named, &o);   /* name lookup pending */
    cmd(c[1], &k[0], "PING", NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    cmd(c[2], &k[1], "PING", NULL);
    ck_assert_int_eq(rr_conn_is_ready(c[1]), 0);
    finish(&loop, c, 3);
    ck_assert_int_eq(k[0].status, RR_REPLY_CLOSED);
    ck_assert_int_eq(k[1].status, RR_REPLY_CLOSED);
    close(fillers[0]);
    close(fillers[1]);
    close(lfd);
}
END_TEST

struct chain {
    struct call k[10];
    int n, limit;
};

static void chain_next(struct rr_conn *c, struct call *k)
{
    struct chain *ch = k->user;

    if (++ch->n < ch->limit) {
        ch->k[ch->n].then = chain_next;
        ch->k[ch->n].user = ch;
        ck_assert_int_eq(cmd(c, &ch->k[ch->n], "INCR", "n", NULL), 0);
    }
}

START_TEST(test_command_from_callback)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_unix(sv->sock, 0);
    struct rr_endpoint dead = ep_tcp("127.0.0.1", free_port(), 0);
    struct rr_conn_opts o = opts_ms(1000, 1000);
    struct chain ok, bad;
    uv_loop_t loop;
    struct rr_conn *c[2];
    int i;

    memset(&ok, 0, sizeof ok);
    memset(&bad, 0, sizeof bad);
    ok.limit = 10;
    bad.limit = 3;
    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &o);
    c[1] = rr_conn_new(&loop, &dead, &o);
    ok.k[0].then = chain_next;
    ok.k[0].user = &ok;
    bad.k[0].then = chain_next;
    bad.k[0].user = &bad;
    cmd(c[0], &ok.k[0], "INCR", "n", NULL);
    cmd(c[1], &bad.k[0], "INCR", "n", NULL);
    wait_for(&loop, &ok.k[9].called);
    wait_for(&loop, &bad.k[2].called);
    for (i = 0; i < 10; i++) {
        ck_assert_int_eq(ok.k[i].status, RR_REPLY_OK);
        ck_assert_int_eq(ok.k[i].integer, i + 1);
    }
    /* Each failure is reported asynchronously, and each retry reconnects. */
    for (i = 0; i < 3; i++)
        ck_assert_int_eq(bad.k[i].status, RR_REPLY_IOERR);
    finish(&loop, c, 2);
}
END_TEST

/* ---- pub/sub ----------------------------------------------------------- */

struct sub {
    const char *kind;       /* the push expected; "" = "message" */
    int messages;
    char channel[64];
    char payload[64];
};

static void on_message(struct rr_conn *c, redisReply *msg, void *arg)
{
    struct sub *s = arg;

    (void)c;
    ck_assert_int_eq(msg->type, REDIS_REPLY_ARRAY);
    ck_assert_int_eq(msg->elements, 3);
    ck_assert_str_eq(msg->element[0]->str, s->kind[0] ? s->kind : "message");
    snprintf(s->channel, sizeof s->channel, "%s", msg->element[1]->str);
    snprintf(s->payload, sizeof s->payload, "%s", msg->element[2]->str);
    s->messages++;
}

static void on_idle_timer(uv_timer_t *t)
{
    *(int *)t->data = 1;
    uv_close((uv_handle_t *)t, NULL);
}

START_TEST(test_pubsub)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 200);
    struct call subk = { 0 }, pub = { 0 }, ping = { 0 };
    struct sub s;
    uv_timer_t idle;
    uv_loop_t loop;
    struct rr_conn *c[2];
    int waited = 0;

    memset(&s, 0, sizeof s);
    s.kind = "";
    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &o);
    c[1] = rr_conn_new(&loop, &ep, &o);
    rr_conn_on_message(c[0], on_message, &s);
    /* Two channels, two confirmations: the first answers SUBSCRIBE. */
    cmd(c[0], &subk, "SUBSCRIBE", "ch-a", "ch-b", NULL);
    wait_for(&loop, &subk.called);
    ck_assert_int_eq(subk.status, RR_REPLY_OK);
    ck_assert_int_eq(subk.type, REDIS_REPLY_ARRAY);
    ck_assert_str_eq(subk.str, "subscribe");
    /* Idle for 3x the request timeout: nothing pending, nothing expires. */
    uv_timer_init(&loop, &idle);
    idle.data = &waited;
    uv_timer_start(&idle, on_idle_timer, 600, 0);
    wait_for(&loop, &waited);
    ck_assert_int_eq(rr_conn_is_ready(c[0]), 1);
    ck_assert_str_eq(rr_conn_error(c[0]), "");
    cmd(c[1], &pub, "PUBLISH", "ch-b", "hello", NULL);
    wait_for(&loop, &pub.called);
    ck_assert_int_eq(pub.integer, 1);
    while (s.messages == 0)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_str_eq(s.channel, "ch-b");
    ck_assert_str_eq(s.payload, "hello");
    /* Still in step: PING in subscribed mode answers ["pong", ""]. */
    cmd(c[0], &ping, "PING", NULL);
    wait_for(&loop, &ping.called);
    ck_assert_int_eq(ping.status, RR_REPLY_OK);
    ck_assert_str_eq(ping.str, "pong");
    finish(&loop, c, 2);
}
END_TEST

/* Sharded pub/sub (Redis 7, also without a cluster): the confirmation is
 * SSUBSCRIBE's reply, pushes are "smessage" and reach the handler. */
START_TEST(test_sharded_pubsub)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_tcp("127.0.0.1", sv->port, 0);
    struct rr_conn_opts o = opts_ms(1000, 500);
    struct call subk = { 0 }, pub = { 0 }, ping = { 0 };
    struct sub s;
    uv_loop_t loop;
    struct rr_conn *c[2];

    memset(&s, 0, sizeof s);
    s.kind = "smessage";
    uv_loop_init(&loop);
    c[0] = rr_conn_new(&loop, &ep, &o);
    c[1] = rr_conn_new(&loop, &ep, &o);
    rr_conn_on_message(c[0], on_message, &s);
    cmd(c[0], &subk, "SSUBSCRIBE", "{j}:released", NULL);
    wait_for(&loop, &subk.called);
    ck_assert_int_eq(subk.status, RR_REPLY_OK);
    ck_assert_str_eq(subk.str, "ssubscribe");
    cmd(c[1], &pub, "SPUBLISH", "{j}:released", "7", NULL);
    wait_for(&loop, &pub.called);
    ck_assert_int_eq(pub.integer, 1);
    while (s.messages == 0)
        uv_run(&loop, UV_RUN_ONCE);
    ck_assert_str_eq(s.channel, "{j}:released");
    ck_assert_str_eq(s.payload, "7");
    cmd(c[0], &ping, "PING", NULL);
    wait_for(&loop, &ping.called);
    ck_assert_int_eq(ping.status, RR_REPLY_OK);
    ck_assert_str_eq(ping.str, "pong");
    finish(&loop, c, 2);
}
END_TEST

static Suite *conn_suite(void)
{
    Suite *s = suite_create("conn");
    TCase *tc = tcase_create("conn");

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_ping_tcp);
    tcase_add_test(tc, test_ping_unix);
    tcase_add_test(tc, test_ping_hostname_and_ipv6);
    tcase_add_test(tc, test_pipeline_1000);
    tcase_add_test(tc, test_select_db);
    tcase_add_test(tc, test_auth_password);
    tcase_add_test(tc, test_auth_acl_user);
    tcase_add_test(tc, test_connect_refused);
    tcase_add_test(tc, test_connect_fails_synchronously);
    tcase_add_test(tc, test_sigstop_timeout_then_reconnect);
    tcase_add_test(tc, test_server_killed_then_restarted);
    tcase_add_test(tc, test_stalled_peer_timeout);
    tcase_add_test(tc, test_connect_timeout);
    tcase_add_test(tc, test_reply_in_socket_is_not_late);
    tcase_add_test(tc, test_connect_done_is_not_late);
    tcase_add_test(tc, test_tls_reply_in_socket_is_not_late);
    tcase_add_test(tc, test_protocol_error);
    tcase_add_test(tc, test_reply_too_large);
    tcase_add_test(tc, test_reply_below_cap);
    tcase_add_test(tc, test_close_in_callback);
    tcase_add_test(tc, test_close_with_pending);
    tcase_add_test(tc, test_close_never_used_and_mid_connect);
    tcase_add_test(tc, test_command_from_callback);
    tcase_add_test(tc, test_pubsub);
    tcase_add_test(tc, test_sharded_pubsub);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "conn", conn_suite, servers_begin, servers_end };
