/* revoke.h — --release NAME [--force] [--fence F] (revoke.c, force.lua). */
#ifndef RR_REVOKE_H
#define RR_REVOKE_H

#include <stdio.h>
#include <uv.h>

#include "config.h"

/* Revoke the lock of NAME and wait (bounded by its lease) for its holder
 * to stop and release; --force deletes at once. Returns the exit status:
 * 0 released, 1 nothing to release (or another fence holds it), 69, 78. */
int rr_revoke_main(uv_loop_t *loop, const struct rr_config *cfg, FILE *out);

#endif
