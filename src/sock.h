/* sock.h — the plain socket transport (transport.h): TCP or a unix socket.
 *
 * A host name is looked up with uv_getaddrinfo (an IP literal skips the
 * resolver and its thread pool) and each IPv4 / IPv6 address is tried in
 * order until one connects; the owner's connect deadline covers them all.
 * Bytes are written and read as they are, over a libuv stream.
 */
#ifndef RR_SOCK_H
#define RR_SOCK_H

#include <stddef.h>
#include <uv.h>

#include "transport.h"
#include "url.h"

/* Start connecting to ep (which must outlive the transport) on loop; the
 * events come from loop callbacks, never from inside this call. Returns 0,
 * or a negative libuv error with why filled. *out is set whenever a
 * transport was made, even on failure: the caller closes it and waits for
 * its released event. */
int rr_sock_open(struct rr_wire **out, uv_loop_t *loop, const struct rr_endpoint *ep,
                 const struct rr_transport_events *ev, char *why, size_t whylen);

#endif
