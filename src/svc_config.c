/* svc_config.c — configuration to lock services (svc_config.h). The one
 * place that decides which credentials a server gets. */
#include <stdio.h>

#include "svc_config.h"

struct rr_svc *rr_svc_config_new(uv_loop_t *loop, const struct rr_config *cfg, int i)
{
    const struct rr_endpoint *ep = &cfg->endpoints[i];
    struct rr_svc_opts o = { 0 };

    o.conn.connect_timeout_ms = cfg->connect_timeout_ms;
    o.conn.request_timeout_ms = cfg->redis_timeout_ms;
    o.conn.password = ep->has_password ? ep->password : cfg->has_password ? cfg->password : NULL;
    o.conn.user = ep->has_user ? ep->user : cfg->has_user ? cfg->user : NULL;
    o.conn.tls = (struct rr_tls_opts){ .ca_file = cfg->tls_ca, .ca_dir = cfg->tls_ca_dir,
                                       .cert = cfg->tls_cert, .key = cfg->tls_key,
                                       .sni = cfg->tls_sni, .insecure = cfg->tls_insecure };
    o.sentinel_user = cfg->has_sentinel_user ? cfg->sentinel_user : NULL;
    o.sentinel_password = cfg->has_sentinel_password ? cfg->sentinel_password : NULL;
    o.sync_replicas = cfg->sync_replicas;
    snprintf(o.route_key, sizeof o.route_key, "{%s}", cfg->name ? cfg->name : "");
    return rr_svc_new(loop, ep, &o);
}
