// src/comm/rma_serial.c: the one-sided layer (rma.h) without MPI: one rank, whose windows are
// its own memory. A dynamic window's displacement is the buffer's address; gets and puts are
// copies, atomics plain reads and writes, flushes no-ops.
#include <stdint.h>
#include <string.h>

#include "comm/rma.h"

struct dsmmi_win {
    char *base;
    int dynamic;
};

static void count(dsmm_ctx *ctx, int cls, int target, size_t bytes)
{
    if (cls == DSMMI_RMA_DATA) {
        dsmmi_count_rma(ctx, target, bytes);
    } else {
        dsmm_traffic *t = dsmmi_traffic(ctx);
        t->ctl_msgs++;
        t->ctl_bytes += (int64_t)bytes;
    }
}

static char *at(const dsmmi_win *w, uint64_t disp)
{
    return w->dynamic ? (char *)(uintptr_t)disp : w->base + disp;
}

dsmm_status dsmmi_win_allocate(dsmm_ctx *ctx, size_t bytes, void **base, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK;
    *base = NULL;
    *w = dsmmi_calloc(ctx, 1, sizeof **w);
    DSMM_CHECK(ctx, *w != NULL, DSMM_ERR_NOMEM, "one-sided window");
    if (bytes) {
        (*w)->base = dsmmi_calloc(ctx, bytes, 1);
        DSMM_CHECK(ctx, (*w)->base != NULL, DSMM_ERR_NOMEM, "window of %zu bytes", bytes);
    }
    *base = (*w)->base;
cleanup:
    if (st != DSMM_OK && *w) *w = dsmmi_free(ctx, *w);
    return st;
}

dsmm_status dsmmi_win_dynamic(dsmm_ctx *ctx, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK;
    *w = dsmmi_calloc(ctx, 1, sizeof **w);
    DSMM_CHECK(ctx, *w != NULL, DSMM_ERR_NOMEM, "one-sided window");
    (*w)->dynamic = 1;
cleanup:
    return st;
}

dsmm_status dsmmi_win_attach(dsmm_ctx *ctx, dsmmi_win *w, void *p, size_t bytes, uint64_t *disp)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, w->dynamic, DSMM_ERR_ARG, "attach of %zu bytes to a window that is not dynamic",
               bytes);
    *disp = (uint64_t)(uintptr_t)p;
cleanup:
    return st;
}

dsmm_status dsmmi_win_detach(dsmm_ctx *ctx, dsmmi_win *w, void *p)
{
    (void)ctx, (void)w, (void)p;
    return DSMM_OK;
}

dsmm_status dsmmi_win_free(dsmm_ctx *ctx, dsmmi_win **w)
{
    if (w == NULL || *w == NULL) return DSMM_OK;
    (*w)->base = dsmmi_free(ctx, (*w)->base);
    *w = dsmmi_free(ctx, *w);
    return DSMM_OK;
}

dsmm_status dsmmi_rma_get(dsmm_ctx *ctx, dsmmi_win *w, void *dst, size_t bytes, int target,
                          uint64_t disp, int cls, dsmmi_req *r)
{
    if (r) {
        r->reqs = NULL;
        r->n = r->cap = 0;
    }
    if (bytes == 0) return DSMM_OK;
    memmove(dst, at(w, disp), bytes);
    count(ctx, cls, target, bytes);
    return DSMM_OK;
}

dsmm_status dsmmi_rma_put(dsmm_ctx *ctx, dsmmi_win *w, const void *src, size_t bytes, int target,
                          uint64_t disp, int cls)
{
    if (bytes == 0) return DSMM_OK;
    memmove(at(w, disp), src, bytes);
    count(ctx, cls, target, bytes);
    return DSMM_OK;
}

dsmm_status dsmmi_rma_fetch_add(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t add,
                                int64_t *old)
{
    int64_t v;
    memcpy(&v, at(w, disp), sizeof v);
    *old = v;
    v += add;
    memcpy(at(w, disp), &v, sizeof v);
    count(ctx, DSMMI_RMA_CTL, target, sizeof v);
    return DSMM_OK;
}

dsmm_status dsmmi_rma_store(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t v)
{
    memcpy(at(w, disp), &v, sizeof v);
    count(ctx, DSMMI_RMA_CTL, target, sizeof v);
    return DSMM_OK;
}

dsmm_status dsmmi_rma_flush(dsmm_ctx *ctx, dsmmi_win *w, int target)
{
    (void)ctx, (void)w, (void)target;
    return DSMM_OK;
}

dsmm_status dsmmi_req_test(dsmm_ctx *ctx, dsmmi_req *r, int *done)
{
    (void)ctx;
    r->reqs = NULL;
    r->n = r->cap = 0;
    *done = 1;
    return DSMM_OK;
}
