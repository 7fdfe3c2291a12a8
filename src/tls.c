/* tls.c — the TLS transport (see tls.h): a session over the plain socket.
 *
 * OpenSSL is reached only through the function pointers below, filled by
 * dlopen/dlsym at the first session: the binary has no DT_NEEDED on libssl,
 * and a plain run never maps it. The pointers' types are written out by
 * hand from the 3.0 headers (each line checked against /usr/include/openssl).
 * The static build (scripts/static-build) defines RR_TLS_LINKED: OpenSSL is
 * linked in, and the same pointers are filled from the linked functions.
 * One SSL_CTX per process (the options are the same for every master),
 * one SSL per connection attempt with a memory BIO on each side. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "rr.h"
#include "sock.h"
#include "tls.h"

enum { TLS_OK = 0, TLS_IOERR = -1, TLS_REFUSED = -2 };

#define CRYPTO_FUNCS(X) \
    X(BIO *, BIO_new, (const BIO_METHOD *)) \
    X(const BIO_METHOD *, BIO_s_mem, (void)) \
    X(int, BIO_read, (BIO *, void *, int)) \
    X(int, BIO_write, (BIO *, const void *, int)) \
    X(size_t, BIO_ctrl_pending, (BIO *)) \
    X(int, BIO_free, (BIO *)) \
    X(int, X509_VERIFY_PARAM_set1_host, (X509_VERIFY_PARAM *, const char *, size_t)) \
    X(int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *, const char *)) \
    X(const char *, X509_verify_cert_error_string, (long)) \
    X(int, X509_STORE_CTX_get_error, (const X509_STORE_CTX *)) \
    X(X509 *, X509_STORE_CTX_get_current_cert, (const X509_STORE_CTX *)) \
    X(void *, X509_get_ext_d2i, (const X509 *, int, int *, int *)) \
    X(X509_NAME *, X509_get_subject_name, (const X509 *)) \
    X(int, X509_NAME_get_text_by_NID, (const X509_NAME *, int, char *, int)) \
    X(void, GENERAL_NAMES_free, (GENERAL_NAMES *)) \
    X(int, OPENSSL_sk_num, (const OPENSSL_STACK *)) \
    X(void *, OPENSSL_sk_value, (const OPENSSL_STACK *, int)) \
    X(const unsigned char *, ASN1_STRING_get0_data, (const ASN1_STRING *)) \
    X(int, ASN1_STRING_length, (const ASN1_STRING *)) \
    X(unsigned long, ERR_get_error, (void)) \
    X(void, ERR_clear_error, (void)) \
    X(const char *, ERR_reason_error_string, (unsigned long))

#define SSL_FUNCS(X) \
    X(const SSL_METHOD *, TLS_client_method, (void)) \
    X(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *)) \
    X(void, SSL_CTX_free, (SSL_CTX *)) \
    X(long, SSL_CTX_ctrl, (SSL_CTX *, int, long, void *)) \
    X(void, SSL_CTX_set_verify, (SSL_CTX *, int, SSL_verify_cb)) \
    X(void, SSL_CTX_set_msg_callback, (SSL_CTX *, void (*)(int, int, int, const void *, \
                                                         size_t, SSL *, void *))) \
    X(int, SSL_CTX_load_verify_file, (SSL_CTX *, const char *)) \
    X(int, SSL_CTX_load_verify_dir, (SSL_CTX *, const char *)) \
    X(int, SSL_CTX_set_default_verify_paths, (SSL_CTX *)) \
    X(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX *, const char *)) \
    X(int, SSL_CTX_use_PrivateKey_file, (SSL_CTX *, const char *, int)) \
    X(int, SSL_CTX_check_private_key, (const SSL_CTX *)) \
    X(SSL *, SSL_new, (SSL_CTX *)) \
    X(void, SSL_free, (SSL *)) \
    X(void, SSL_set_bio, (SSL *, BIO *, BIO *)) \
    X(void, SSL_set_connect_state, (SSL *)) \
    X(int, SSL_do_handshake, (SSL *)) \
    X(int, SSL_read, (SSL *, void *, int)) \
    X(int, SSL_write, (SSL *, const void *, int)) \
    X(int, SSL_get_error, (const SSL *, int)) \
    X(long, SSL_ctrl, (SSL *, int, long, void *)) \
    X(X509_VERIFY_PARAM *, SSL_get0_param, (SSL *)) \
    X(long, SSL_get_verify_result, (const SSL *))

#define DECLARE(ret, name, args) ret (*name) args;
static struct {
    CRYPTO_FUNCS(DECLARE)
    SSL_FUNCS(DECLARE)
} f;
#undef DECLARE

static struct {
    bool loaded;
    char err[200];              /* why loading failed, kept: it will not change */
    SSL_CTX *ctx;
    const struct rr_tls_opts *opts;
} g;

struct session {
    SSL *ssl;
    BIO *in, *out;              /* owned by ssl */
    const struct rr_tls_opts *o;
    char host[256];             /* the name (or IP) verified */
    bool sent_cert;             /* a client certificate is configured */
    bool got_bytes;             /* the server sent something */
    bool cert_requested;        /* the server sent a CertificateRequest */
    char names[160];            /* the certificate's names, on a mismatch */
};

/* The session whose SSL call is running: the verify callback records the
 * certificate's names there. One thread, and OpenSSL calls back only from
 * inside that call. */
static struct session *current;

/* ---- loading ---------------------------------------------------------- */

static int load_lib(char *err, size_t errlen)
{
    void *crypto, *ssl;
    const char *missing = NULL;

    if (g.loaded)
        return TLS_OK;
#ifdef RR_TLS_LINKED
    (void)crypto, (void)ssl, (void)missing, (void)err, (void)errlen;
#define LINK(ret, name, args) f.name = name;
    CRYPTO_FUNCS(LINK)
    SSL_FUNCS(LINK)
#undef LINK
    g.loaded = true;
    return TLS_OK;
#else
    if (g.err[0])
        goto fail;
    /* Never unloaded: OpenSSL registers exit handlers of its own. */
    if (!(crypto = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_LOCAL))
        || !(ssl = dlopen("libssl.so.3", RTLD_LAZY | RTLD_LOCAL))) {
        snprintf(g.err, sizeof g.err, "rediss:// needs OpenSSL 3 (%s); install libssl3",
                 dlerror());
        goto fail;
    }
#define LOAD(lib) \
    do { \
        void *p_ = dlsym(lib, name_); \
        if (!p_ && !missing) \
            missing = name_; \
        memcpy(slot_, &p_, sizeof p_); \
    } while (0)
#define LOAD_CRYPTO(ret, name, args) { const char *name_ = #name; void *slot_ = &f.name; LOAD(crypto); }
#define LOAD_SSL(ret, name, args) { const char *name_ = #name; void *slot_ = &f.name; LOAD(ssl); }
    CRYPTO_FUNCS(LOAD_CRYPTO)
    SSL_FUNCS(LOAD_SSL)
#undef LOAD_SSL
#undef LOAD_CRYPTO
#undef LOAD
    if (missing) {
        snprintf(g.err, sizeof g.err, "rediss:// needs OpenSSL 3, and this libssl has no %s",
                 missing);
        goto fail;
    }
    g.loaded = true;
    return TLS_OK;
fail:
    snprintf(err, errlen, "%s", g.err);
    return TLS_REFUSED;
#endif
}

/* The reason of the first queued OpenSSL error, or what. Empties the queue. */
static const char *ssl_reason(unsigned long *code, const char *what)
{
    unsigned long e = f.ERR_get_error(), more;
    const char *s;

    while ((more = f.ERR_get_error()) != 0)
        ;
    if (code)
        *code = e;
    if (e && (s = f.ERR_reason_error_string(e)) != NULL)
        return s;
    return what;
}

/* Record "a, b, c" from the certificate's subjectAltName (or its CN). */
static void cert_names(X509 *x, char *out, size_t outlen)
{
    GENERAL_NAMES *gens = f.X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    size_t off = 0;
    int i, n;

    out[0] = '\0';
    n = gens ? f.OPENSSL_sk_num((const OPENSSL_STACK *)gens) : 0;
    for (i = 0; i < n && off + 1 < outlen; i++) {
        const GENERAL_NAME *gn = f.OPENSSL_sk_value((const OPENSSL_STACK *)gens, i);
        const unsigned char *d;
        char name[64];
        int len;

        if (gn->type == GEN_DNS) {
            d = f.ASN1_STRING_get0_data(gn->d.dNSName);
            len = f.ASN1_STRING_length(gn->d.dNSName);
            snprintf(name, sizeof name, "%.*s", len, (const char *)d);
        } else if (gn->type == GEN_IPADD) {
            d = f.ASN1_STRING_get0_data(gn->d.iPAddress);
            len = f.ASN1_STRING_length(gn->d.iPAddress);
            if (!inet_ntop(len == 16 ? AF_INET6 : AF_INET, d, name, sizeof name))
                continue;
        } else {
            continue;
        }
        /* The name is the server's text: keep the line printable. */
        for (char *p = name; *p; p++)
            if (*p < 0x20 || *p > 0x7e)
                *p = '?';
        off += (size_t)snprintf(out + off, outlen - off, "%s%s", off ? ", " : "", name);
    }
    if (gens)
        f.GENERAL_NAMES_free(gens);
    if (!out[0] && f.X509_NAME_get_text_by_NID(f.X509_get_subject_name(x), NID_commonName,
                                               out, (int)outlen) < 0)
        snprintf(out, outlen, "no name");
}

static int on_verify(int ok, X509_STORE_CTX *sctx)
{
    int e = f.X509_STORE_CTX_get_error(sctx);
    X509 *x;

    if (!ok && current && !current->names[0]
        && (e == X509_V_ERR_HOSTNAME_MISMATCH || e == X509_V_ERR_IP_ADDRESS_MISMATCH)
        && (x = f.X509_STORE_CTX_get_current_cert(sctx)) != NULL)
        cert_names(x, current->names, sizeof current->names);
    return ok;
}

/* Notes a CertificateRequest: a server that then closes the connection
 * without a word (TLS 1.3 checks the client's certificate after the
 * client's handshake is done) refused our certificate, or our lack of one. */
static void on_message(int write_p, int version, int type, const void *buf, size_t len,
                       SSL *ssl, void *arg)
{
    (void)version;
    (void)ssl;
    (void)arg;
    if (!write_p && type == SSL3_RT_HANDSHAKE && len > 0 && current
        && *(const unsigned char *)buf == SSL3_MT_CERTIFICATE_REQUEST)
        current->cert_requested = true;
}

/* The process-wide context, built from the first options we see. */
static int get_ctx(const struct rr_tls_opts *o, char *err, size_t errlen)
{
    SSL_CTX *ctx;
    unsigned long code;

    if (g.ctx)
        return TLS_OK;
    if (!(ctx = f.SSL_CTX_new(f.TLS_client_method()))) {
        snprintf(err, errlen, "cannot set up TLS: %s", ssl_reason(NULL, "out of memory"));
        return TLS_IOERR;
    }
    f.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    f.SSL_CTX_set_verify(ctx, o->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                         o->insecure ? NULL : on_verify);
    f.SSL_CTX_set_msg_callback(ctx, on_message);
    if (o->ca_file && f.SSL_CTX_load_verify_file(ctx, o->ca_file) != 1) {
        snprintf(err, errlen, "cannot load --tls-ca %s: %s", o->ca_file,
                 ssl_reason(&code, "no certificate in it"));
        goto fail;
    }
    if (o->ca_dir && f.SSL_CTX_load_verify_dir(ctx, o->ca_dir) != 1) {
        snprintf(err, errlen, "cannot use --tls-ca-dir %s: %s", o->ca_dir,
                 ssl_reason(&code, "not a directory"));
        goto fail;
    }
    /* The system store, which honours SSL_CERT_FILE and SSL_CERT_DIR. */
    if (!o->ca_file && !o->ca_dir && f.SSL_CTX_set_default_verify_paths(ctx) != 1) {
        snprintf(err, errlen, "cannot load the system CA store: %s; pass --tls-ca FILE",
                 ssl_reason(&code, "unknown error"));
        goto fail;
    }
    if (o->cert && f.SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
        snprintf(err, errlen, "cannot load --tls-cert %s: %s", o->cert,
                 ssl_reason(&code, "no certificate in it"));
        goto fail;
    }
    if (o->key && (f.SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1
                   || f.SSL_CTX_check_private_key(ctx) != 1)) {
        snprintf(err, errlen, "cannot use --tls-key %s: %s", o->key,
                 ssl_reason(&code, "no key in it"));
        goto fail;
    }
    if (o->insecure)
        /* Said on every run, even with -q: nothing else would tell. */
        rr_log(rr_log_enabled(RR_LOG_WARN) ? RR_LOG_WARN : RR_LOG_ERROR, "tls_insecure", NULL,
               "--tls-insecure: the server's certificate is not verified; anyone on the "
               "path can pose as Redis and read what we send");
    g.ctx = ctx;
    g.opts = o;
    return TLS_OK;
fail:
    f.SSL_CTX_free(ctx);
    return TLS_REFUSED;
}

/* Load OpenSSL and build the process-wide context now (session_new does
 * it too). Returns TLS_OK or an error. */
static int prepare(const struct rr_tls_opts *o, char *err, size_t errlen)
{
    int rc = load_lib(err, errlen);

    if (rc == TLS_OK) {
        f.ERR_clear_error();
        rc = get_ctx(o, err, errlen);
    }
    return rc;
}

/* ---- sessions --------------------------------------------------------- */

static void session_free(struct session *t);

/* A client session to host (a name or an IP literal). Loads OpenSSL and
 * builds the process-wide context from o on first use (o must stay valid:
 * every session of a process shares the first o it was given). */
static int session_new(struct session **out, const struct rr_tls_opts *o, const char *host,
                       char *err, size_t errlen)
{
    struct session *t;
    X509_VERIFY_PARAM *vp;
    unsigned char ip[16];
    const char *name = o->sni && o->sni[0] ? o->sni : host;
    bool is_ip;
    int rc;

    *out = NULL;
    if ((rc = prepare(o, err, errlen)) != TLS_OK)
        return rc;
    if (!(t = calloc(1, sizeof *t))) {
        snprintf(err, errlen, "out of memory");
        return TLS_IOERR;
    }
    t->o = o;
    t->sent_cert = o->cert != NULL;
    snprintf(t->host, sizeof t->host, "%s", name);
    if (!(t->ssl = f.SSL_new(g.ctx)) || !(t->in = f.BIO_new(f.BIO_s_mem()))
        || !(t->out = f.BIO_new(f.BIO_s_mem()))) {
        if (t->in)
            f.BIO_free(t->in);
        snprintf(err, errlen, "cannot set up TLS: %s", ssl_reason(NULL, "out of memory"));
        goto fail;
    }
    f.SSL_set_bio(t->ssl, t->in, t->out);
    f.SSL_set_connect_state(t->ssl);
    is_ip = inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1;
    /* SNI carries a host name only (RFC 6066), never an address. */
    if (!is_ip && f.SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                             t->host) != 1) {
        snprintf(err, errlen, "invalid TLS server name '%.200s'", t->host);
        goto refuse;
    }
    if (!o->insecure) {
        vp = f.SSL_get0_param(t->ssl);
        if ((is_ip ? f.X509_VERIFY_PARAM_set1_ip_asc(vp, name)
                   : f.X509_VERIFY_PARAM_set1_host(vp, name, 0)) != 1) {
            snprintf(err, errlen, "cannot verify the name '%.200s'", t->host);
            goto refuse;
        }
    }
    *out = t;
    return TLS_OK;
refuse:
    session_free(t);
    return TLS_REFUSED;
fail:
    session_free(t);
    return TLS_IOERR;
}

static void session_free(struct session *t)
{
    if (!t)
        return;
    if (t->ssl)
        f.SSL_free(t->ssl);  /* and both BIOs */
    free(t);
}

/* Ciphertext read from the socket. TLS_OK or TLS_IOERR. */
static int session_feed(struct session *t, const char *data, size_t len, char *err, size_t errlen)
{
    if (len > INT_MAX || f.BIO_write(t->in, data, (int)len) != (int)len) {
        snprintf(err, errlen, "out of memory");
        return TLS_IOERR;
    }
    if (len)
        t->got_bytes = true;
    return TLS_OK;
}

/* Say why an SSL call failed, as "what happened; what to change". */
static int failure(struct session *t, int rc, char *err, size_t errlen)
{
    int e = f.SSL_get_error(t->ssl, rc);
    long v = f.SSL_get_verify_result(t->ssl);
    unsigned long code = 0;
    const char *why;
    int reason;

    if (e == SSL_ERROR_ZERO_RETURN) {
        snprintf(err, errlen, "connection closed by server");
        f.ERR_clear_error();
        return TLS_IOERR;
    }
    if (!t->o->insecure && v != X509_V_OK) {
        f.ERR_clear_error();
        switch (v) {
        case X509_V_ERR_HOSTNAME_MISMATCH:
        case X509_V_ERR_IP_ADDRESS_MISMATCH:
            snprintf(err, errlen, "certificate names %s, not %s; fix the URL or pass --tls-sni",
                     t->names[0] ? t->names : "another server", t->host);
            break;
        case X509_V_ERR_CERT_HAS_EXPIRED:
            snprintf(err, errlen, "the server's certificate has expired; renew it on the "
                     "server (or check this machine's clock)");
            break;
        case X509_V_ERR_CERT_NOT_YET_VALID:
            snprintf(err, errlen, "the server's certificate is not valid yet; check the "
                     "clocks of this machine and the server");
            break;
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
        case X509_V_ERR_CERT_UNTRUSTED:
            if (t->o->ca_file || t->o->ca_dir)
                /* It was passed: the server's certificate is from another CA. */
                snprintf(err, errlen, "certificate not signed by the CA of %s %.80s (%s); "
                         "give the CA that signed the server's certificate",
                         t->o->ca_file ? "--tls-ca" : "--tls-ca-dir",
                         t->o->ca_file ? t->o->ca_file : t->o->ca_dir,
                         f.X509_verify_cert_error_string(v));
            else
                snprintf(err, errlen, "certificate not signed by a trusted CA (%s); pass --tls-ca "
                         "with the CA that signed the server's certificate",
                         f.X509_verify_cert_error_string(v));
            break;
        default:
            snprintf(err, errlen, "certificate verification failed: %s",
                     f.X509_verify_cert_error_string(v));
        }
        return TLS_REFUSED;
    }
    why = ssl_reason(&code, NULL);
    reason = ERR_GET_LIB(code) == ERR_LIB_SSL ? ERR_GET_REASON(code) : 0;
    switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
        snprintf(err, errlen, "the server requires a client certificate; pass --tls-cert "
                 "and --tls-key");
        return TLS_REFUSED;
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
        snprintf(err, errlen, "the server refused the TLS handshake (%s)%s", why,
                 t->sent_cert ? "; check --tls-cert"
                              : ": does it require a client certificate (--tls-cert, --tls-key)?");
        return TLS_REFUSED;
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
        snprintf(err, errlen, "the server refused our client certificate (%s); check "
                 "--tls-cert and --tls-key", why);
        return TLS_REFUSED;
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
    case SSL_R_UNSUPPORTED_PROTOCOL:
        snprintf(err, errlen, "the server does not offer TLS 1.2 or later (%s)", why);
        return TLS_REFUSED;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_RECORD_LENGTH_MISMATCH:
        snprintf(err, errlen, "the server did not answer TLS: is it a plain redis:// port?");
        return TLS_IOERR;
    }
    snprintf(err, errlen, "TLS: %s", why ? why : e == SSL_ERROR_SYSCALL
                                                      ? "connection closed by server"
                                                      : "handshake failed");
    return TLS_IOERR;
}

/* Advance the handshake: 1 done, 0 needs more input, or an error. */
static int session_handshake(struct session *t, char *err, size_t errlen)
{
    int rc, e;

    f.ERR_clear_error();
    current = t;
    rc = f.SSL_do_handshake(t->ssl);
    current = NULL;
    if (rc == 1)
        return 1;
    e = f.SSL_get_error(t->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    return failure(t, rc, err, errlen);
}

/* Decrypt into buf: the number of bytes (> 0), 0 when more input is
 * needed, or an error (a close_notify is TLS_IOERR "closed"). */
static long session_read(struct session *t, char *buf, size_t cap, char *err, size_t errlen)
{
    int rc, e;

    f.ERR_clear_error();
    current = t;
    rc = f.SSL_read(t->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
    current = NULL;
    if (rc > 0)
        return rc;
    e = f.SSL_get_error(t->ssl, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    return failure(t, rc, err, errlen);
}

/* Encrypt len bytes of plaintext (after the handshake). */
static int session_write(struct session *t, const char *data, size_t len, char *err, size_t errlen)
{
    int rc;

    if (len == 0)
        return TLS_OK;
    f.ERR_clear_error();
    /* A memory BIO takes everything: one call writes it all. */
    rc = f.SSL_write(t->ssl, data, len > INT_MAX ? INT_MAX : (int)len);
    if (rc == (int)len)
        return TLS_OK;
    if (rc > 0) {
        snprintf(err, errlen, "TLS: short write");
        return TLS_IOERR;
    }
    return failure(t, rc, err, errlen);
}

/* The ciphertext waiting to be sent, as a malloc'ed buffer the caller owns
 * (*out NULL and *len 0 when there is none). TLS_OK or TLS_IOERR. */
static int session_output(struct session *t, char **out, size_t *len)
{
    size_t n = f.BIO_ctrl_pending(t->out);
    char *buf;

    *out = NULL;
    *len = 0;
    if (n == 0)
        return TLS_OK;
    if (n > INT_MAX || !(buf = malloc(n)))
        return TLS_IOERR;
    if (f.BIO_read(t->out, buf, (int)n) != (int)n) {
        free(buf);
        return TLS_IOERR;
    }
    *out = buf;
    *len = n;
    return TLS_OK;
}

/* The server closed or reset the connection before its first reply: if it
 * had asked for a client certificate, that is a refusal of ours (or of
 * none): TLS_REFUSED with the reason in err. Else TLS_IOERR, err
 * untouched. */
static int session_closed(const struct session *t, char *err, size_t errlen)
{
    if (!t->cert_requested)
        return TLS_IOERR;
    if (t->sent_cert)
        snprintf(err, errlen, "the server closed the connection after asking for our client "
                 "certificate: it does not accept --tls-cert (is it signed by the CA the "
                 "server trusts?)");
    else
        snprintf(err, errlen, "the server requires a client certificate; pass --tls-cert "
                 "and --tls-key");
    return TLS_REFUSED;
}

/* Why a handshake that ran out of time did not finish, for the message. */
static const char *session_stall(const struct session *t)
{
    return t->got_bytes ? "the TLS handshake did not finish"
                        : "the server did not answer TLS: is it a plain redis:// port, "
                          "or is the server stopped?";
}

/* ---- the transport ---------------------------------------------------- */

struct tls_transport {
    struct rr_wire t;          /* first: the transport is this */
    struct rr_wire *sock;      /* the bytes */
    struct rr_transport_events ev;  /* the owner's */
    const struct rr_tls_opts *o;
    const char *host;
    struct session *tls;            /* once TCP is up */
    bool up;                        /* the handshake is done */
    bool answered;                  /* the server answered a request */
    bool closed;
};

static void fail(struct tls_transport *tt, enum rr_transport_fault fault,
                 enum rr_transport_verdict verdict, const char *detail)
{
    struct rr_transport_failure fl = { fault, verdict, detail };

    tt->ev.failed(tt->ev.arg, &fl);
}

/* A session failed: rc says whether retrying can help. */
static void session_failed(struct tls_transport *tt, long rc, const char *why)
{
    fail(tt, RR_TF_CONNECT, rc == TLS_REFUSED ? RR_TV_REFUSED : RR_TV_RETRY, why);
}

/* Send what the session has to send (handshake records, ciphertext).
 * Returns 0, or -1 with why filled. */
static int flush(struct tls_transport *tt, char *why, size_t whylen)
{
    char *out;
    size_t n;

    if (session_output(tt->tls, &out, &n) != TLS_OK) {
        snprintf(why, whylen, "%s", uv_strerror(UV_ENOMEM));
        return -1;
    }
    return n ? tt->sock->ops->write(tt->sock, out, n, false, why, whylen) : 0;
}

/* TCP is up: start the handshake; the transport stays connecting (under
 * the owner's connect deadline) until it is done. */
static void on_sock_up(void *arg)
{
    struct tls_transport *tt = arg;
    char why[RR_ERRLEN];
    int rc = session_new(&tt->tls, tt->o, tt->host, why, sizeof why);

    if (rc == TLS_OK && (rc = session_handshake(tt->tls, why, sizeof why)) >= 0) {
        if (flush(tt, why, sizeof why) < 0)
            fail(tt, RR_TF_STREAM, RR_TV_NONE, why);
        return;
    }
    session_failed(tt, rc, why);
}

/* Ciphertext: it drives the handshake first, then is decrypted for the
 * owner. Every step stops as soon as the owner closed us. */
static void on_sock_data(void *arg, const char *data, size_t len)
{
    struct tls_transport *tt = arg;
    char why[RR_ERRLEN], plain[16384];
    long n;
    int rc;

    if ((rc = session_feed(tt->tls, data, len, why, sizeof why)) != TLS_OK) {
        session_failed(tt, rc, why);
        return;
    }
    if (!tt->up) {
        rc = session_handshake(tt->tls, why, sizeof why);
        if (flush(tt, why, sizeof why) < 0) {
            fail(tt, RR_TF_STREAM, RR_TV_NONE, why);
            return;
        }
        if (rc < 0)
            session_failed(tt, rc, why);
        if (rc <= 0)
            return;
        tt->up = true;
        tt->ev.up(tt->ev.arg);
    }
    while (!tt->closed) {
        if ((n = session_read(tt->tls, plain, sizeof plain, why, sizeof why)) < 0) {
            session_failed(tt, n, why);
            return;
        }
        if (n == 0)
            break;
        tt->ev.data(tt->ev.arg, plain, (size_t)n);
    }
    /* TLS 1.3 may answer records of its own (a key update). */
    if (!tt->closed && flush(tt, why, sizeof why) < 0)
        fail(tt, RR_TF_STREAM, RR_TV_NONE, why);
}

/* The socket broke. Closed or reset before any reply, after the server had
 * asked for a client certificate: that is a refusal of ours. */
static void on_sock_failed(void *arg, const struct rr_transport_failure *fl)
{
    struct tls_transport *tt = arg;
    char why[RR_ERRLEN];

    if (fl->fault != RR_TF_CONNECT && tt->tls && !tt->answered
        && session_closed(tt->tls, why, sizeof why) == TLS_REFUSED) {
        session_failed(tt, TLS_REFUSED, why);
        return;
    }
    if (fl->fault == RR_TF_EOF && !tt->up) {
        fail(tt, RR_TF_CONNECT, RR_TV_NONE,
             "connection closed during the TLS handshake (is it a TLS port?)");
        return;
    }
    tt->ev.failed(tt->ev.arg, fl);
}

static void on_sock_released(void *arg)
{
    struct tls_transport *tt = arg;
    struct rr_transport_events ev = tt->ev;

    session_free(tt->tls);
    free(tt);
    ev.released(ev.arg);
}

static int tls_write(struct rr_wire *t, char *data, size_t len, bool secret,
                     char *why, size_t whylen)
{
    struct tls_transport *tt = (struct tls_transport *)t;
    int rc = session_write(tt->tls, data, len, why, whylen);

    if (secret)
        explicit_bzero(data, len);
    free(data);
    if (rc != TLS_OK)
        return -1;
    return flush(tt, why, whylen);
}

static void tls_answered(struct rr_wire *t)
{
    ((struct tls_transport *)t)->answered = true;
}

/* The socket's bytes go through on_sock_data: they drive the handshake or
 * are decrypted for the owner. */
static bool tls_catch_up(struct rr_wire *t)
{
    struct tls_transport *tt = (struct tls_transport *)t;

    return !tt->closed && tt->sock->ops->catch_up(tt->sock);
}

static const char *tls_stalled(const struct rr_wire *t)
{
    const struct tls_transport *tt = (const struct tls_transport *)t;

    return tt->tls ? session_stall(tt->tls) : NULL;
}

static void tls_close(struct rr_wire *t)
{
    struct tls_transport *tt = (struct tls_transport *)t;

    if (tt->closed)
        return;
    tt->closed = true;
    tt->sock->ops->close(tt->sock);
}

static const struct rr_transport_ops tls_ops = {
    tls_write, tls_answered, tls_catch_up, tls_stalled, tls_close,
};

int rr_tls_open(struct rr_wire **out, uv_loop_t *loop, const struct rr_endpoint *ep,
                const struct rr_tls_opts *o, const struct rr_transport_events *ev,
                char *why, size_t whylen)
{
    struct tls_transport *tt = calloc(1, sizeof *tt);
    struct rr_transport_events inner = {
        tt, on_sock_up, on_sock_data, on_sock_failed, on_sock_released,
    };
    char ignored[RR_ERRLEN];
    int err;

    *out = NULL;
    if (!tt) {
        snprintf(why, whylen, "%s", uv_strerror(UV_ENOMEM));
        return UV_ENOMEM;
    }
    tt->t.ops = &tls_ops;
    tt->ev = *ev;
    tt->o = o;
    tt->host = ep->host;
    err = rr_sock_open(&tt->sock, loop, ep, &inner, why, whylen);
    if (!tt->sock) {
        free(tt);
        return err;
    }
    *out = &tt->t;
    /* While the SYN or the lookup is out; its errors come again with the
     * session. */
    prepare(o, ignored, sizeof ignored);
    return err;
}
