/* direct.c — the lock service behind redis://, rediss:// and unix://: one
 * fixed server (service_impl.h). Every request goes to its one
 * connection, and every answer is delivered as it is. */
#include "service_impl.h"

static int direct_init(struct rr_svc *s)
{
    /* One fixed server: no other node to ask, so a request waits for the
     * whole --connect-timeout (a slow TLS handshake) before its own. */
    s->o.conn.wait_connect = true;
    s->impl = rr_svc_node_conn(s, NULL, 0);
    return s->impl ? 0 : -1;
}

static enum svc_route direct_route(struct rr_svc *s, struct svc_req *q, struct rr_conn **c)
{
    (void)q;
    *c = s->impl;
    return SVC_ROUTED;
}

static enum svc_verdict direct_judge(struct rr_svc *s, struct svc_req *q)
{
    (void)s;
    (void)q;
    return SVC_DELIVER;
}

static void direct_close(struct rr_svc *s)
{
    if (s->impl)
        rr_conn_close(s->impl);
    s->impl = NULL;
}

const struct rr_svc_backend rr_svc_direct = {
    .kind = "redis",
    .ep_kind = RR_EP_DIRECT,
    .init = direct_init,
    .route = direct_route,
    .judge = direct_judge,
    .close = direct_close,
};
