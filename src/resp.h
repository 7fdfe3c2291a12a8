/* resp.h — pure RESP: encode a command, classify replies and pub/sub
 * pushes, and a reader that refuses a reply past a size cap.
 *
 * No sockets, no loop, no connection state: conn.c drives it, and
 * tests/check_resp.c tests it without a server. hiredis is only the codec
 * (redisFormatCommandArgv, redisReader); nothing here reads hiredis's
 * private reader state, so the same source builds against hiredis 0.14
 * and 1.x.
 */
#ifndef RR_RESP_H
#define RR_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <hiredis/hiredis.h>

/* The most one reply may hold: what its decoded parts take (string bytes,
 * an element slot and a reply object per array element) plus the part
 * still on its way (a line so far, a bulk string's announced length). Our
 * largest reply, --status of a job whose records are all full, is under
 * 50 KB on the wire (t_hostile.sh measures it); 1 MiB leaves 20 times that
 * and stops a peer announcing a 4 GB string or 2e9 elements (hiredis would
 * calloc 16 GB for them) at a few MiB. */
#define RR_RESP_CAP ((size_t)1 << 20)
#define RR_RESP_CAP_TEXT "1 MiB"

enum {
    RR_RESP_OK = 0,
    RR_RESP_NOMEM = -1,      /* out of memory */
    RR_RESP_PROTO = -2,      /* not RESP: rr_resp_errstr says what */
    RR_RESP_TOO_LARGE = -3,  /* a reply past RR_RESP_CAP */
};

/* Encode argv (argvlen NULL: NUL-terminated strings) as a RESP command in
 * a malloc'ed *out of *len bytes, owned by the caller (free it).
 * Returns RR_RESP_OK or RR_RESP_NOMEM. */
int rr_resp_format(char **out, size_t *len, int argc, const char **argv,
                   const size_t *argvlen);

/* How many replies the command argv yields: one, or for a pub/sub
 * (un)subscribe family command one confirmation per channel. */
int rr_resp_confirm_count(int argc, const char **argv, const size_t *argvlen);

/* Is argv[0] (argvlen NULL: NUL-terminated) the command name, any case? */
bool rr_resp_is_command(const char **argv, const size_t *argvlen, const char *name);

/* Is r a pub/sub push: ["message" | "pmessage" | "smessage", ...]? */
bool rr_resp_is_push(const redisReply *r);

/* Is r an (un)subscribe confirmation of any of the six kinds? */
bool rr_resp_is_confirm(const redisReply *r);

/* Did the server end a subscription we did not end? Only a "sunsubscribe"
 * can come unasked (a server drops a sharded subscription by itself);
 * asked says the oldest pending request is our own SUNSUBSCRIBE, whose
 * confirmations are ordinary replies. */
bool rr_resp_ended_unasked(const redisReply *r, bool asked);

/* A RESP reader whose replies never exceed RR_RESP_CAP: the bytes are
 * framed before hiredis sees them, and nothing past the point where a reply
 * outgrows the cap reaches hiredis (so it never allocates for it). */
struct rr_resp_reader;

/* A new reader, or NULL when out of memory. */
struct rr_resp_reader *rr_resp_reader_new(void);

/* Free rd (NULL is fine); replies already returned stay the caller's. */
void rr_resp_reader_free(struct rr_resp_reader *rd);

/* Append len bytes read from the server. Returns RR_RESP_OK or
 * RR_RESP_NOMEM; a reply past the cap is reported by rr_resp_get. */
int rr_resp_feed(struct rr_resp_reader *rd, const char *data, size_t len);

/* The next complete reply: 1 and *out (the caller frees it with
 * freeReplyObject), 0 when more bytes are needed, or RR_RESP_PROTO /
 * RR_RESP_TOO_LARGE, once the replies complete before the fault are
 * taken. After an error the reader is useless. */
int rr_resp_get(struct rr_resp_reader *rd, redisReply **out);

/* After RR_RESP_PROTO, hiredis's words for it; "" otherwise. */
const char *rr_resp_errstr(const struct rr_resp_reader *rd);

#endif
