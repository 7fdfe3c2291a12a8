/* check_service.c — the lock-service seam (service.c) against real
 * redis-server processes: replies, WAIT behind a write, callbacks never
 * inside the call that queued them (even when the route fails at once),
 * rr_svc_close answering what is parked, and a subscription sent again by
 * itself after the server restarted. Sentinel failover itself is tested
 * against real sentinels in tests/integration/t_sentinel.sh. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>

#include "service.h"

#include "servers.h"
#include "unit.h"

static struct rr_endpoint ep_direct(int port)
{
    struct rr_endpoint ep;

    memset(&ep, 0, sizeof ep);
    ep.transport = RR_TRANSPORT_TCP;
    snprintf(ep.host, sizeof ep.host, "127.0.0.1");
    ep.port = port;
    snprintf(ep.display, sizeof ep.display, "127.0.0.1:%d", port);
    return ep;
}

/* A sentinel URL's endpoint over the given "sentinel" ports. */
static struct rr_endpoint ep_sentinel(const int *ports, int n)
{
    struct rr_endpoint ep = ep_direct(ports[0]);

    ep.kind = RR_EP_SENTINEL;
    snprintf(ep.master, sizeof ep.master, "mymaster");
    for (int i = 0; i < n; i++) {
        snprintf(ep.nodes[i].host, sizeof ep.nodes[i].host, "127.0.0.1");
        ep.nodes[i].port = ports[i];
    }
    ep.n_nodes = n;
    return ep;
}

static struct rr_svc_opts opts(int sync)
{
    struct rr_svc_opts o;

    memset(&o, 0, sizeof o);
    o.conn.connect_timeout_ms = 500;
    o.conn.request_timeout_ms = 500;
    o.sync_replicas = sync;
    snprintf(o.route_key, sizeof o.route_key, "{job}");
    return o;
}

struct call {
    int called;
    int status;
    int type;
    long long replicas;
    char str[256];
    char err[256];
    int again;              /* issue one more command from the callback */
    struct call *next;
};

static int in_command;

static int cmd(struct rr_svc *s, bool write, struct call *k, ...);

static void on_reply(struct rr_svc *s, int status, redisReply *reply, void *arg)
{
    struct call *k = arg;

    ck_assert_msg(!in_command, "callback ran inside the call that queued it");
    ck_assert_int_eq(k->called, 0);
    k->called = 1;
    k->status = status;
    k->replicas = rr_svc_replicas(s);
    snprintf(k->err, sizeof k->err, "%s", rr_svc_error(s));
    if (status == RR_REPLY_OK) {
        k->type = reply->type;
        if (reply->str)
            snprintf(k->str, sizeof k->str, "%.*s", (int)reply->len, reply->str);
    }
    if (k->again && k->next)
        ck_assert_int_eq(cmd(s, false, k->next, "PING", NULL), 0);
}

static int cmd(struct rr_svc *s, bool write, struct call *k, ...)
{
    const char *argv[16];
    va_list ap;
    int argc = 0, rc, saved = in_command;

    va_start(ap, k);
    while (argc < 15 && (argv[argc] = va_arg(ap, const char *)) != NULL)
        argc++;
    va_end(ap);
    in_command = 1;
    rc = (write ? rr_svc_write : rr_svc_command)(s, on_reply, k, argc, argv, NULL);
    in_command = saved;
    return rc;
}

static void wait_for(uv_loop_t *loop, const int *flag)
{
    for (int i = 0; !*flag && i < 100000; i++)
        uv_run(loop, UV_RUN_ONCE);
    ck_assert_msg(*flag, "no callback");
}

static void finish(uv_loop_t *loop, struct rr_svc **v, int n)
{
    for (int i = 0; i < n; i++)
        rr_svc_close(v[i]);
    ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(loop), 0);
}

START_TEST(test_direct_reply_and_wait)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_direct(sv->port);
    struct rr_svc_opts o0 = opts(0), o1 = opts(1);
    uv_loop_t loop;
    struct rr_svc *v[2];
    struct call a = { 0 }, b = { 0 }, c = { 0 };

    uv_loop_init(&loop);
    v[0] = rr_svc_new(&loop, &ep, &o0);
    v[1] = rr_svc_new(&loop, &ep, &o1);
    ck_assert_ptr_nonnull(v[0]);
    ck_assert_ptr_nonnull(v[1]);
    ck_assert_str_eq(rr_svc_kind(v[0]), "redis");
    ck_assert_int_eq(cmd(v[0], false, &a, "PING", NULL), 0);
    wait_for(&loop, &a.called);
    ck_assert_int_eq(a.status, RR_REPLY_OK);
    ck_assert_str_eq(a.str, "PONG");
    ck_assert_int_eq(a.replicas, -1);          /* not a write */
    /* --sync-replicas 0: a write asks no WAIT. */
    ck_assert_int_eq(cmd(v[0], true, &b, "SET", "k", "v", NULL), 0);
    wait_for(&loop, &b.called);
    ck_assert_int_eq(b.status, RR_REPLY_OK);
    ck_assert_int_eq(b.replicas, -1);
    /* --sync-replicas 1 on a master without replicas: WAIT says 0, and the
     * write's own reply is what the callback gets. */
    ck_assert_int_eq(cmd(v[1], true, &c, "SET", "k", "w", NULL), 0);
    wait_for(&loop, &c.called);
    ck_assert_int_eq(c.status, RR_REPLY_OK);
    ck_assert_str_eq(c.str, "OK");
    ck_assert_int_eq(c.replicas, 0);
    ck_assert_int_eq(rr_svc_sync_replicas(v[1]), 1);
    finish(&loop, v, 2);
}
END_TEST

START_TEST(test_failure_never_synchronous)
{
    /* Nothing listens on these: every sentinel fails, the round fails, and
     * the callback issues another request, whose route fails at once. */
    int ports[2] = { free_port(), free_port() };
    struct rr_endpoint ep = ep_sentinel(ports, 2);
    struct rr_svc_opts o = opts(0);
    uv_loop_t loop;
    struct rr_svc *v;
    struct call a = { 0 }, b = { 0 };

    uv_loop_init(&loop);
    v = rr_svc_new(&loop, &ep, &o);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(rr_svc_kind(v), "sentinel");
    a.again = 1;
    a.next = &b;
    ck_assert_int_eq(cmd(v, false, &a, "PING", NULL), 0);
    wait_for(&loop, &a.called);
    ck_assert_int_ne(a.status, RR_REPLY_OK);
    ck_assert_msg(strstr(a.err, "no sentinel named the master of 'mymaster'"), "%s", a.err);
    wait_for(&loop, &b.called);
    ck_assert_int_ne(b.status, RR_REPLY_OK);
    finish(&loop, &v, 1);
}
END_TEST

START_TEST(test_close_answers_parked)
{
    /* A stopped server as the only "sentinel": the question is never
     * answered, so the request stays parked until the close. */
    struct server *sv = server_start(NULL);
    int ports[1] = { sv->port };
    struct rr_endpoint ep = ep_sentinel(ports, 1);
    struct rr_svc_opts o = opts(0);
    uv_loop_t loop;
    struct rr_svc *v;
    struct call a = { 0 };

    o.conn.request_timeout_ms = 5000;
    kill(sv->pid, SIGSTOP);
    uv_loop_init(&loop);
    v = rr_svc_new(&loop, &ep, &o);
    ck_assert_int_eq(cmd(v, false, &a, "PING", NULL), 0);
    for (int i = 0; i < 20; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    ck_assert_int_eq(a.called, 0);
    rr_svc_close(v);
    ck_assert_int_eq(a.called, 1);             /* before close returned */
    ck_assert_int_eq(a.status, RR_REPLY_CLOSED);
    kill(sv->pid, SIGCONT);
    ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static int messages, resubscribed;

static void on_msg(struct rr_svc *s, redisReply *msg, void *arg)
{
    (void)s;
    (void)arg;
    if (msg == NULL)
        resubscribed++;
    else
        messages++;
}

START_TEST(test_resubscribe_after_restart)
{
    struct server *sv = server_start(NULL);
    struct rr_endpoint ep = ep_direct(sv->port);
    struct rr_svc_opts o = opts(0);
    uv_loop_t loop;
    struct rr_svc *v[2];
    struct call sub = { 0 }, pub1 = { 0 }, pub2 = { 0 };

    messages = resubscribed = 0;
    uv_loop_init(&loop);
    v[0] = rr_svc_new(&loop, &ep, &o);   /* the subscriber */
    v[1] = rr_svc_new(&loop, &ep, &o);   /* the publisher */
    rr_svc_on_message(v[0], on_msg, NULL);
    ck_assert_int_eq(cmd(v[0], false, &sub, "SUBSCRIBE", "ch", NULL), 0);
    wait_for(&loop, &sub.called);
    ck_assert_int_eq(sub.status, RR_REPLY_OK);
    ck_assert_int_eq(cmd(v[1], false, &pub1, "PUBLISH", "ch", "one", NULL), 0);
    wait_for(&loop, &messages);
    /* The server goes away and comes back on the same port. */
    server_kill(sv);
    for (int i = 0; i < 50; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    server_spawn(sv);
    wait_for(&loop, &resubscribed);
    ck_assert_int_eq(resubscribed, 1);
    messages = 0;
    ck_assert_int_eq(cmd(v[1], false, &pub2, "PUBLISH", "ch", "two", NULL), 0);
    wait_for(&loop, &messages);
    ck_assert_int_eq(messages, 1);
    finish(&loop, v, 2);
}
END_TEST

static Suite *service_suite(void)
{
    Suite *s = suite_create("service");
    TCase *tc = tcase_create("service");

    tcase_set_timeout(tc, 20);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_direct_reply_and_wait);
    tcase_add_test(tc, test_failure_never_synchronous);
    tcase_add_test(tc, test_close_answers_parked);
    tcase_add_test(tc, test_resubscribe_after_restart);
    suite_add_tcase(s, tc);
    return s;
}

const struct rr_unit rr_unit = { "service", service_suite, servers_begin, servers_end };
