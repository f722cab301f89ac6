// src/dist/rdma_queue.c: the remote accumulation queues of the RDMA paper (§3.1.2, §5.3): each
// rank's ring of descriptor slots in a window. A push is one fetch-and-add on the target's tail
// (the reservation), a put of the descriptor and an atomic store of the slot's sequence word;
// the owner pops locally and advances its head with an atomic store, which producers read to
// know a slot is free again. Producers whose slot is not free yet serve their own queue while
// they wait, so a ring of any capacity >= 1 cannot deadlock: every rank that waits also pops.
#include <string.h>

#include "dist/rdma.h"

enum { Q_HEAD = 0, Q_TAIL = 8, Q_SLOTS = 16 };
#define SLOT_BYTES (8 + sizeof(dsmmi_qdesc))

static uint64_t slot_at(const dsmmi_rqueue *q, int64_t t)
{
    return Q_SLOTS + (uint64_t)(t % q->cap) * SLOT_BYTES;
}

dsmm_status dsmmi_rqueue_create(dsmm_ctx *ctx, int cap, dsmmi_rqueue *q)
{
    dsmm_status st = DSMM_OK;
    memset(q, 0, sizeof *q);
    DSMM_CHECK(ctx, cap >= 1 && cap <= (1 << 24), DSMM_ERR_ARG,
               "queue capacity %d outside 1..16777216", cap);
    q->cap = cap;
    void *base = NULL;
    DSMM_TRY(dsmmi_win_allocate(ctx, Q_SLOTS + (size_t)cap * SLOT_BYTES, &base, &q->win));
    q->base = base;
cleanup:
    return st;
}

dsmm_status dsmmi_rqueue_push(dsmm_ctx *ctx, dsmmi_rqueue *q, int target, const dsmmi_qdesc *d,
                              dsmmi_serve_fn serve, void *arg)
{
    dsmm_status st = DSMM_OK;
    int64_t t = 0, head = 0;
    DSMM_TRY(dsmmi_rma_fetch_add(ctx, q->win, target, Q_TAIL, 1, &t));
    // Slot t is free once the owner has popped slot t - cap.
    for (int waited = 0;; waited = 1) {
        DSMM_TRY(dsmmi_rma_fetch_add(ctx, q->win, target, Q_HEAD, 0, &head));
        if (t - head < q->cap) break;
        if (!waited) q->full_waits++;
        DSMM_TRY(serve(ctx, arg));
    }
    uint64_t at = slot_at(q, t);
    DSMM_TRY(dsmmi_rma_put(ctx, q->win, d, sizeof *d, target, at + 8, DSMMI_RMA_CTL));
    DSMM_TRY(dsmmi_rma_flush(ctx, q->win, target));
    // The sequence word goes last: a popper that sees t + 1 sees the whole descriptor.
    DSMM_TRY(dsmmi_rma_store(ctx, q->win, target, at, t + 1));
    q->pushes++;
cleanup:
    return st;
}

dsmm_status dsmmi_rqueue_pop(dsmm_ctx *ctx, dsmmi_rqueue *q, dsmmi_qdesc *d, int *got)
{
    dsmm_status st = DSMM_OK;
    int me = dsmm_ctx_rank(ctx);
    int64_t seq = 0;
    *got = 0;
    uint64_t at = slot_at(q, q->head);
    DSMM_TRY(dsmmi_rma_fetch_add(ctx, q->win, me, at, 0, &seq));
    if (seq != q->head + 1) return DSMM_OK;
    DSMM_TRY(dsmmi_rma_get(ctx, q->win, d, sizeof *d, me, at + 8, DSMMI_RMA_CTL, NULL));
    q->head++;
    // Publishing the new head frees the slot for the producer waiting on it.
    DSMM_TRY(dsmmi_rma_store(ctx, q->win, me, Q_HEAD, q->head));
    q->pops++;
    *got = 1;
cleanup:
    return st;
}

dsmm_status dsmmi_rqueue_free(dsmm_ctx *ctx, dsmmi_rqueue *q)
{
    dsmm_status st = dsmmi_win_free(ctx, &q->win);
    q->base = NULL;
    return st;
}
