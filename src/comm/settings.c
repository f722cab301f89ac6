// src/comm/settings.c: the distributed settings of a context (default grid, emulated workgroup
// size, message chunk) and its traffic counters; the same with and without MPI.
#include <limits.h>

#include "comm/comm.h"

#define MAX_CHUNK ((size_t)INT_MAX & ~(size_t)7)

dsmm_status dsmm_ctx_set_grid(dsmm_ctx *ctx, int pr, int pc)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    int r, c;
    if (pr != 0 || pc != 0) DSMM_TRY(dsmmi_grid_resolve(ctx, pr, pc, &r, &c)); // the same check
    ctx->grid_pr = pr;
    ctx->grid_pc = pc;
cleanup:
    return st;
}

dsmm_status dsmmi_grid_resolve(dsmm_ctx *ctx, int pr, int pc, int *opr, int *opc)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    if (pr == 0 && pc == 0) {
        pr = ctx->grid_pr;
        pc = ctx->grid_pc;
        if (pr == 0 || pc == 0) DSMM_TRY(dsmm_grid_dims(ctx->size, &pr, &pc));
    }
    DSMM_CHECK(ctx, pr > 0 && pc > 0 && (int64_t)pr * pc == ctx->size, DSMM_ERR_ARG,
               "grid %dx%d does not match %d ranks", pr, pc, ctx->size);
    *opr = pr;
    *opc = pc;
cleanup:
    return st;
}

dsmm_status dsmm_ctx_set_workgroup_size(dsmm_ctx *ctx, int n)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "workgroup size %d < 0", n);
    ctx->wg_size = n;
cleanup:
    return st;
}

int dsmmi_link(const dsmm_ctx *ctx, int a, int b)
{
    return dsmm_ctx_workgroup(ctx, a) == dsmm_ctx_workgroup(ctx, b) ? DSMMI_INTRA : DSMMI_INTER;
}

dsmm_traffic *dsmmi_traffic(dsmm_ctx *ctx)
{
    static dsmm_traffic sink; // counts of a dead context go nowhere (never read)
    return dsmmi_ctx_ok(ctx) ? &ctx->traffic : &sink;
}

void dsmm_ctx_traffic(const dsmm_ctx *ctx, dsmm_traffic *t)
{
    if (t == NULL) return;
    static const dsmm_traffic zero;
    *t = dsmmi_ctx_ok(ctx) ? ctx->traffic : zero;
}

void dsmmi_count_rma(dsmm_ctx *ctx, int target, size_t bytes)
{
    dsmm_traffic *t = dsmmi_traffic(ctx);
    int l = dsmmi_link(ctx, ctx->rank, target);
    t->rma_calls[l]++;
    t->rma_bytes[l] += (int64_t)bytes;
}

void dsmmi_traffic_diff(const dsmm_traffic *after, const dsmm_traffic *before, dsmm_traffic *d)
{
    for (int l = 0; l < 2; l++) {
        d->bytes_sent[l] = after->bytes_sent[l] - before->bytes_sent[l];
        d->bytes_recv[l] = after->bytes_recv[l] - before->bytes_recv[l];
        d->msgs_sent[l] = after->msgs_sent[l] - before->msgs_sent[l];
        d->msgs_recv[l] = after->msgs_recv[l] - before->msgs_recv[l];
        d->rma_bytes[l] = after->rma_bytes[l] - before->rma_bytes[l];
        d->rma_calls[l] = after->rma_calls[l] - before->rma_calls[l];
    }
    d->ctl_bytes = after->ctl_bytes - before->ctl_bytes;
    d->ctl_msgs = after->ctl_msgs - before->ctl_msgs;
}

size_t dsmmi_comm_chunk(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) && ctx->chunk > 0 ? ctx->chunk : MAX_CHUNK;
}

void dsmmi_comm_set_chunk(dsmm_ctx *ctx, size_t bytes)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    ctx->chunk = bytes == 0 || bytes > MAX_CHUNK ? 0 : bytes;
}
