/* cluster.c — the lock service behind redis-cluster:// (service_impl.h).
 * Not built yet: every request fails with a message that says so. */
#include "service_impl.h"

static int cl_init(struct rr_svc *s)
{
    (void)s;
    return 0;
}

static enum svc_route cl_route(struct rr_svc *s, struct svc_req *q, struct rr_conn **c)
{
    (void)q;
    (void)c;
    svc_error(s, "redis-cluster:// is not supported by this version; give the slot owner as redis://HOST:PORT");
    return SVC_FAILED;
}

static enum svc_verdict cl_judge(struct rr_svc *s, struct svc_req *q)
{
    (void)s;
    (void)q;
    return SVC_DELIVER;
}

static void cl_close(struct rr_svc *s)
{
    s->impl = NULL;
}

const struct rr_svc_backend svc_cluster = {
    .kind = "cluster",
    .init = cl_init,
    .route = cl_route,
    .judge = cl_judge,
    .close = cl_close,
};
