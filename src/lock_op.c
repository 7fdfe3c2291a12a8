/* lock_op.c — one operation over the masters, what the acquisition
 * (lock.c), the renewal (lock_extend.c) and the release (lock_release.c)
 * share: its per-master callback slots, its first error (lock_impl.h). */
#include <stdio.h>
#include <stdlib.h>

#include "lock_impl.h"

struct op *rr_op_new(struct rr_lock *lk, size_t size, void *arg)
{
    struct op *op = calloc(1, size);

    if (!op)
        return NULL;
    op->slots = calloc((size_t)lk->n, sizeof(*op->slots));
    if (!op->slots) {
        free(op);
        return NULL;
    }
    op->lk = lk;
    op->arg = arg;
    op->t0 = rr_now_ms();
    for (int i = 0; i < lk->n; i++) {
        op->slots[i].op = op;
        op->slots[i].idx = i;
    }
    return op;
}

void rr_op_free(struct op *op)
{
    free(op->slots);
    free(op);
}

void rr_lock_error_text(const struct rr_lock *lk, int idx, int status, const char *what,
                        char *buf, size_t len)
{
    const char *cerr = rr_svc_error(lk->conns[idx]);

    if (status != RR_REPLY_OK && cerr && *cerr)
        snprintf(buf, len, "%s", cerr);
    else
        snprintf(buf, len, "%s: %s", rr_svc_name(lk->conns[idx]), what);
}

void rr_op_note_error(struct op *op, int idx, int status, const char *what)
{
    if (!op->errmsg[0])
        rr_lock_error_text(op->lk, idx, status, what, op->errmsg, sizeof op->errmsg);
}

void rr_lock_not_synced(const struct rr_svc *c, const char *what, char *buf, size_t len)
{
    if (*rr_svc_wait_error(c)) {
        /* WAIT itself was refused: a permission, not a replica's link. */
        snprintf(buf, len, "%s: WAIT after the %s was refused: %s", rr_svc_name(c), what,
                 rr_svc_wait_error(c));
        return;
    }
    snprintf(buf, len, "only %lld of %d replicas confirmed the %s on %s",
             rr_svc_replicas(c) < 0 ? 0 : rr_svc_replicas(c), rr_svc_sync_replicas(c), what,
             rr_svc_name(c));
}
