/* rand.c — random hex identifiers (rand.h). */
#include <errno.h>
#include <sys/random.h>

#include "rand.h"

int rr_random_hex(char *hex, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char rnd[64];

    if (nbytes > sizeof(rnd)) {
        errno = EINVAL;
        return -1;
    }
    if (getrandom(rnd, nbytes, 0) != (ssize_t)nbytes)
        return -1;
    for (size_t i = 0; i < nbytes; i++) {
        hex[2 * i] = digits[rnd[i] >> 4];
        hex[2 * i + 1] = digits[rnd[i] & 15];
    }
    hex[2 * nbytes] = '\0';
    return 0;
}
