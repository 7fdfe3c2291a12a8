/* sha256.h — SHA-256 (FIPS 180-4), for the command's fingerprint: the
 * binary links no crypto library (OpenSSL is loaded only for rediss://). */
#ifndef RR_SHA256_H
#define RR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct rr_sha256 {
    uint32_t h[8];
    uint64_t len;             /* bytes hashed */
    unsigned char buf[64];
    size_t n;                 /* bytes in buf */
};

void rr_sha256_init(struct rr_sha256 *s);
void rr_sha256_update(struct rr_sha256 *s, const void *data, size_t len);
void rr_sha256_final(struct rr_sha256 *s, unsigned char out[32]);

/* The fingerprint of a command line: the first 16 hex digits of SHA-256
 * over each of argv[0..argc), NUL-terminated, in turn, every run of
 * digits in them hashed as one '#' (a date or an hour in the arguments,
 * 'report --hour 05', is the same command). Never the arguments
 * themselves, which may hold secrets. out: 17 bytes. Pure. */
void rr_command_fingerprint(char *const *argv, int argc, char out[17]);

#endif
