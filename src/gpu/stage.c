// src/gpu/stage.c: host <-> device copies through two pinned staging buffers, double-buffered
// so the host packs (or unpacks) one piece while the copy engine moves the other. The device
// operations come in through dsmmi_stage_ops, so this loop runs, and is tested, without a GPU.
#include "gpu/gpu.h"

// Elements per piece: as many as one buffer holds (at least one).
static dsmm_status piece_cap(dsmm_ctx *ctx, const dsmmi_stage_ops *ops, size_t elem_bytes,
                             size_t *cap)
{
    dsmm_status st = DSMM_OK;
    *cap = elem_bytes ? ops->buf_bytes / elem_bytes : 0;
    DSMM_CHECK(ctx, *cap > 0, DSMM_ERR_ARG,
               "staging: buffers of %zu bytes cannot hold one element of %zu bytes", ops->buf_bytes,
               elem_bytes);
cleanup:
    return st;
}

dsmm_status dsmmi_stage_up(dsmm_ctx *ctx, const dsmmi_stage_ops *ops, size_t n, size_t elem_bytes,
                           dsmmi_stage_pack_fn pack, void *arg, size_t *pieces)
{
    dsmm_status st = DSMM_OK;
    size_t cap = 0, np = 0;
    if (pieces) *pieces = 0;
    if (n == 0) return DSMM_OK;
    DSMM_TRY(piece_cap(ctx, ops, elem_bytes, &cap));
    for (size_t off = 0; off < n; off += cap, np++) {
        int b = (int)(np & 1);
        size_t len = n - off < cap ? n - off : cap;
        // Its last copy must be done, also one started by an earlier call that returned
        // without waiting (a mark never recorded is complete).
        DSMM_TRY(ops->wait(ops->user, b));
        pack(arg, ops->buf[b], off, len);
        DSMM_TRY(ops->copy(ops->user, 1, b, off, len, elem_bytes));
        DSMM_TRY(ops->record(ops->user, b));
    }
    if (pieces) *pieces = np;
cleanup:
    return st;
}

dsmm_status dsmmi_stage_down(dsmm_ctx *ctx, const dsmmi_stage_ops *ops, size_t n, size_t elem_bytes,
                             dsmmi_stage_unpack_fn unpack, void *arg, size_t *pieces)
{
    dsmm_status st = DSMM_OK;
    size_t cap = 0, np = 0, prev_off = 0, prev_len = 0;
    if (pieces) *pieces = 0;
    if (n == 0) return DSMM_OK;
    DSMM_TRY(piece_cap(ctx, ops, elem_bytes, &cap));
    for (size_t off = 0; off < n; off += cap, np++) {
        int b = (int)(np & 1);
        size_t len = n - off < cap ? n - off : cap;
        // Buffer b last held piece np - 2, unpacked in the previous round: free to refill.
        DSMM_TRY(ops->copy(ops->user, 0, b, off, len, elem_bytes));
        DSMM_TRY(ops->record(ops->user, b));
        if (np > 0) { // unpack the previous piece while this one travels
            DSMM_TRY(ops->wait(ops->user, 1 - b));
            unpack(arg, ops->buf[1 - b], prev_off, prev_len);
        }
        prev_off = off;
        prev_len = len;
    }
    DSMM_TRY(ops->wait(ops->user, (int)((np - 1) & 1)));
    unpack(arg, ops->buf[(np - 1) & 1], prev_off, prev_len);
    if (pieces) *pieces = np;
cleanup:
    return st;
}
