/* slot.h — Redis Cluster's pure parts: the hash slot of a key, and the
 * redirections a node answers with (-MOVED, -ASK). No I/O. */
#ifndef RR_SLOT_H
#define RR_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RR_CLUSTER_SLOTS 16384

/* CRC16/XMODEM (poly 0x1021, init 0), as Redis Cluster uses it. */
uint16_t rr_crc16(const char *buf, size_t len);

/* The slot of a key, with Redis' hash-tag rule: if the key has a '{' and a
 * '}' after it with something between, only that part is hashed. Matches
 * CLUSTER KEYSLOT. */
int rr_key_slot(const char *key, size_t len);

struct rr_redirect {
    bool ask;                 /* ASK (once, with ASKING) rather than MOVED */
    int slot;
    char host[256];           /* "" when the node did not know its address */
    int port;
};

/* Parse an error reply "MOVED 3999 127.0.0.1:6381" or "ASK 3999 [::1]:6381"
 * (or "::1:6381": the port is after the last ':'). Returns 0, or -1 when
 * err is not a well-formed redirection. */
int rr_parse_redirect(const char *err, size_t len, struct rr_redirect *out);

#endif
