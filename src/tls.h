/* tls.h — the TLS transport (transport.h) for rediss://.
 *
 * A session is OpenSSL driven through two memory BIOs over the plain socket
 * transport (sock.h): ciphertext read from the socket goes in, ciphertext
 * the session produced goes out, and the owner sees plaintext only. The
 * transport counts as connecting (it sends no up event) until its
 * handshake is done. OpenSSL itself (libssl.so.3, libcrypto.so.3) is
 * dlopen'ed by the first rr_tls_open, so a plain redis:// run neither links
 * nor loads it.
 *
 * Verification is on unless insecure: the chain against ca_file / ca_dir or
 * the system store (SSL_CERT_FILE / SSL_CERT_DIR honoured), and the host
 * name or IP address (or sni when given) against the certificate's
 * subjectAltName. TLS 1.2 at least.
 *
 * A failure of verification, of certificates or of the missing library
 * carries the verdict RR_TV_REFUSED (fix the configuration, exit 78); one
 * of the network or the peer RR_TV_RETRY (exit 69); each with one detail
 * line that says what to change.
 */
#ifndef RR_TLS_H
#define RR_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "transport.h"
#include "url.h"

struct rr_tls_opts {
    const char *ca_file;   /* --tls-ca, or NULL */
    const char *ca_dir;    /* --tls-ca-dir, or NULL */
    const char *cert;      /* --tls-cert (with key), or NULL */
    const char *key;       /* --tls-key, or NULL */
    const char *sni;       /* --tls-sni: name sent and verified, or NULL = the host */
    bool insecure;         /* --tls-insecure: verify nothing (warned on every run) */
};

/* Start connecting to ep over TLS, like rr_sock_open (same return, same
 * *out rule). The first call loads OpenSSL and builds the process-wide
 * context from o while the connect or the name lookup is in flight, so the
 * ~2 ms it takes overlap the network; o must stay valid for the process
 * (every session shares the first o), ep for the transport. */
int rr_tls_open(struct rr_wire **out, uv_loop_t *loop, const struct rr_endpoint *ep,
                const struct rr_tls_opts *o, const struct rr_transport_events *ev,
                char *why, size_t whylen);

#endif
