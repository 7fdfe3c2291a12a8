/* diag.h — which server errors are a refusal of our configuration, and
 * the hint an outage's message gets.
 *
 * 69 means "unavailable, try later"; 78 means "the server refused our
 * configuration, fix it": retrying cannot help, so --wait does not retry,
 * and the message says what to change, in one line, with one hint.
 */
#ifndef RR_DIAG_H
#define RR_DIAG_H

#include <stdbool.h>
#include <stddef.h>

/* msg is an error as we report it ("127.0.0.1:6379: WRONGPASS ..."). If it
 * is a refusal of our configuration (no password where one is required, a
 * wrong one, an ACL permission missing, a DB index out of range), write the
 * one-line message to out and return true. gave_password: whether we sent
 * one (then "not authenticated" means it was refused). Pure. */
bool rr_diag_config(const char *msg, bool gave_password, char *out, size_t len);

/* One master's failure in a few words, for a list of them ("127.0.0.1:6379
 * refused our password (WRONGPASS)"): a refusal of our configuration is
 * named by its kind, anything else is msg as it is. tls_refused: the
 * connection says its TLS handshake was refused (a certificate). Returns
 * whether it was a refusal of our configuration (78). Pure. */
bool rr_diag_brief(const char *msg, bool gave_password, bool tls_refused, char *out, size_t len);

/* The one hint for an outage (69) with error msg: what to check first.
 * Never NULL (a static string). Pure. */
const char *rr_diag_unavailable_hint(const char *msg);

#endif
