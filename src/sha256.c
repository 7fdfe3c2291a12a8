/* sha256.c — SHA-256 (see sha256.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(struct rr_sha256 *s, const unsigned char *p)
{
    uint32_t w[64], v[8];

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, s->h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25)) +
                      ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
        uint32_t t2 = (ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22)) +
                      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        s->h[i] += v[i];
}

void rr_sha256_init(struct rr_sha256 *s)
{
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->n = 0;
}

void rr_sha256_update(struct rr_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;

    s->len += len;
    while (len > 0) {
        size_t k = 64 - s->n < len ? 64 - s->n : len;
        memcpy(s->buf + s->n, p, k);
        s->n += k;
        p += k;
        len -= k;
        if (s->n == 64) {
            block(s, s->buf);
            s->n = 0;
        }
    }
}

void rr_sha256_final(struct rr_sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->len * 8;
    unsigned char pad[72] = { 0x80 };
    size_t padlen = (s->n < 56 ? 56 : 120) - s->n;

    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    rr_sha256_update(s, pad, padlen + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (unsigned char)(s->h[i] >> (24 - 8 * j));
}

void rr_command_fingerprint(char *const *argv, int argc, char out[17])
{
    struct rr_sha256 s;
    unsigned char d[32];

    rr_sha256_init(&s);
    for (int i = 0; i < argc; i++) {
        /* A run of digits counts as one '#': a date, an hour or a counter
         * in the arguments is the same command run again. */
        for (const char *p = argv[i]; *p; p++) {
            bool digit = *p >= '0' && *p <= '9';
            if (digit && p[1] >= '0' && p[1] <= '9')
                continue;
            rr_sha256_update(&s, digit ? "#" : p, 1);
        }
        rr_sha256_update(&s, "", 1);
    }
    rr_sha256_final(&s, d);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}
