/* svc_config.h — the configuration's lock services: one rr_svc per URL,
 * with cfg's timeouts, TLS options and credentials. */
#ifndef RR_SVC_CONFIG_H
#define RR_SVC_CONFIG_H

#include <uv.h>

#include "config.h"
#include "service.h"

/* A lock service (not yet connected) for endpoint i of cfg. Credentials:
 * a password written in the URL wins over --password-file and
 * $REDLOCK_PASSWORD for that server, and so does a user in the URL over
 * $REDLOCK_USER; a URL with a password but no user takes $REDLOCK_USER.
 * The sentinels of a redis-sentinel:// URL use only the sentinel
 * credentials. cfg's strings must outlive the service. Returns NULL only
 * when out of memory; the caller owns the service (rr_svc_close). */
struct rr_svc *rr_svc_config_new(uv_loop_t *loop, const struct rr_config *cfg, int i);

#endif
