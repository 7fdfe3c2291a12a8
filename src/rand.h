/* rand.h — random identifiers: the lock's tokens, the waiters' ids. */
#ifndef RR_RAND_H
#define RR_RAND_H

#include <stddef.h>

/* Draw nbytes (at most 64) from getrandom and write them to hex as 2 *
 * nbytes lowercase hex digits and a NUL; hex must hold 2 * nbytes + 1.
 * Unguessable, as a lock token must be; blocks only before the kernel's
 * pool is seeded. Returns 0, or -1 (errno set by getrandom) and then hex
 * is unchanged. */
int rr_random_hex(char *hex, size_t nbytes);

#endif
