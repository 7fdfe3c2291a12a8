/* tls.h — the TLS filter under conn's transport hook (rediss://).
 *
 * A session is OpenSSL driven through two memory BIOs: conn feeds it the
 * ciphertext it read from the socket and writes out the ciphertext the
 * session produced; the session never touches a socket. OpenSSL itself
 * (libssl.so.3, libcrypto.so.3) is dlopen'ed at the first session, so a
 * plain redis:// run neither links nor loads it.
 *
 * Verification is on unless insecure: the chain against ca_file / ca_dir or
 * the system store (SSL_CERT_FILE / SSL_CERT_DIR honoured), and the host
 * name or IP address (or sni when given) against the certificate's
 * subjectAltName. TLS 1.2 at least.
 *
 * Functions that fail return RR_TLS_IOERR (the network or the peer: retry
 * may help, exit 69) or RR_TLS_REFUSED (verification, certificates, missing
 * library: fix the configuration, exit 78), with one line in err that says
 * what to change.
 */
#ifndef RR_TLS_H
#define RR_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct rr_tls_opts {
    const char *ca_file;   /* --tls-ca, or NULL */
    const char *ca_dir;    /* --tls-ca-dir, or NULL */
    const char *cert;      /* --tls-cert (with key), or NULL */
    const char *key;       /* --tls-key, or NULL */
    const char *sni;       /* --tls-sni: name sent and verified, or NULL = the host */
    bool insecure;         /* --tls-insecure: verify nothing (warned on every run) */
};

enum { RR_TLS_OK = 0, RR_TLS_IOERR = -1, RR_TLS_REFUSED = -2 };

struct rr_tls;

/* Load OpenSSL and build the process-wide context now (rr_tls_new does it
 * too): called while a connect or a name lookup is in flight, the ~2 ms
 * this takes overlaps the network. Returns RR_TLS_OK or an error. */
int rr_tls_prepare(const struct rr_tls_opts *o, char *err, size_t errlen);

/* A client session to host (a name or an IP literal). Loads OpenSSL and
 * builds the process-wide context from o on first use (o must stay valid:
 * every session of a process shares the first o it was given). Returns
 * RR_TLS_OK and *out, or an error. */
int rr_tls_new(struct rr_tls **out, const struct rr_tls_opts *o, const char *host,
               char *err, size_t errlen);
void rr_tls_free(struct rr_tls *t);

/* Ciphertext read from the socket. Returns RR_TLS_OK or RR_TLS_IOERR. */
int rr_tls_feed(struct rr_tls *t, const char *data, size_t len, char *err, size_t errlen);

/* Advance the handshake: 1 done, 0 needs more input, or an error. */
int rr_tls_handshake(struct rr_tls *t, char *err, size_t errlen);

/* Decrypt into buf: the number of bytes (> 0), 0 when more input is
 * needed, or an error (a close_notify is RR_TLS_IOERR "closed"). */
long rr_tls_read(struct rr_tls *t, char *buf, size_t cap, char *err, size_t errlen);

/* Encrypt len bytes of plaintext (after the handshake). */
int rr_tls_write(struct rr_tls *t, const char *data, size_t len, char *err, size_t errlen);

/* The ciphertext waiting to be sent, as a malloc'ed buffer the caller owns
 * (*out NULL and *len 0 when there is none). RR_TLS_OK or RR_TLS_IOERR. */
int rr_tls_take_output(struct rr_tls *t, char **out, size_t *len);

/* The server closed or reset the connection before its first reply: if it
 * had asked for a client certificate, that is a refusal of ours (or of
 * none): RR_TLS_REFUSED with the reason in err. Else RR_TLS_IOERR, err
 * untouched. */
int rr_tls_closed(const struct rr_tls *t, char *err, size_t errlen);

/* Why a handshake that ran out of time did not finish, for the message. */
const char *rr_tls_stall_reason(const struct rr_tls *t);

#endif
