// src/gpu/gpu.c: the public GPU calls (dsmm_ctx_set_gpu, dsmm_ctx_gpu_info, dsmm_gpu_count) and
// the registration of the GPU entries in the local-multiply tables; device work is in the .cu
// files (or gpu_stub.c without CUDA).
#include <string.h>

#include "gpu/gpu.h"

void dsmm_gpu_opts_init(dsmm_gpu_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->device = -1;
    opts->stage_bytes = (size_t)16 << 20;
    opts->auto_flops = 2e6;
}

int dsmm_gpu_count(void)
{
    return dsmmi_gpu_device_count();
}

static void gpu_free(dsmm_ctx *ctx)
{
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmmi_gpu_state_destroy(ctx, &g);
    ctx->gpu = NULL;
    ctx->gpu_free = NULL;
    ctx->gpu_auto = 0;
}

dsmm_status dsmm_ctx_set_gpu(dsmm_ctx *ctx, const dsmm_gpu_opts *opts)
{
    dsmm_status st = DSMM_OK;
    dsmm_gpu_opts o;
    dsmmi_gpu *g = NULL;

    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    if (opts == NULL) {
        dsmm_gpu_opts_init(&o);
        opts = &o;
    }
    DSMM_CHECK(ctx, opts->device >= -1, DSMM_ERR_ARG, "gpu: device %d is not an ordinal",
               opts->device);
    DSMM_CHECK(ctx, opts->stage_bytes >= 4096, DSMM_ERR_ARG,
               "gpu: staging buffers of %zu bytes (at least 4096)", opts->stage_bytes);
    DSMM_CHECK(ctx, opts->auto_flops == opts->auto_flops, DSMM_ERR_ARG, "gpu: auto_flops is NaN");
    DSMM_CHECK(ctx, opts->spgemm_spread >= 0 && opts->spgemm_spread <= 2, DSMM_ERR_ARG,
               "gpu: spgemm_spread %d is not 0 (spread), 1 (by entry) or 2 (per chunk)",
               opts->spgemm_spread);
    DSMM_CHECK(ctx, opts->spmm_unroll == 0 || opts->spmm_unroll == 1 || opts->spmm_unroll == 4,
               DSMM_ERR_ARG, "gpu: spmm_unroll %d is not 0 (default), 1 or 4", opts->spmm_unroll);
    if (ctx->gpu_free) ctx->gpu_free(ctx);
    DSMM_TRY(dsmmi_gpu_state_create(ctx, opts, &g));
    ctx->gpu = g;
    ctx->gpu_free = gpu_free;
    ctx->gpu_auto = opts->auto_flops >= 0;
    // The tables are process-wide; the entries check ctx->gpu, so registering twice is harmless.
    dsmmi_spgemm_kernel_set(DSMM_SPGEMM_GPU, dsmmi_gpu_spgemm);
    dsmmi_spgemm_kernel_set(DSMM_SPGEMM_CUSPARSE, dsmmi_gpu_spgemm_cusparse);
    dsmmi_spmm_kernel_set(DSMM_SPMM_GPU, dsmmi_gpu_spmm);
    dsmmi_spmm_kernel_set(DSMM_SPMM_CUSPARSE, dsmmi_gpu_spmm_cusparse);
cleanup:
    return st;
}

dsmm_status dsmm_ctx_gpu_info(const dsmm_ctx *ctx, dsmm_gpu_info *info)
{
    if (!dsmmi_ctx_ok(ctx) || info == NULL) return DSMM_ERR_ARG;
    memset(info, 0, sizeof *info);
    const dsmmi_gpu *g = (const dsmmi_gpu *)ctx->gpu;
    if (g == NULL) return DSMM_OK;
    *info = g->info;
    info->enabled = 1;
    info->device = g->device;
    memcpy(info->name, g->name, sizeof info->name);
    info->pool_bytes = g->pool.size;
    info->pool_in_use = g->pool.in_use;
    info->pool_peak = g->pool.peak;
    return DSMM_OK;
}

dsmm_status dsmmi_gpu_buf_alloc(dsmm_ctx *ctx, size_t bytes, const char *what, void **out)
{
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    *out = NULL;
    if (g == NULL)
        return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__,
                           "gpu: %s: no device on this context (dsmm_ctx_set_gpu)", what);
    return dsmmi_dpool_alloc(ctx, &g->pool, bytes, what, out);
}

void *dsmmi_gpu_buf_free(dsmm_ctx *ctx, void *p)
{
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    if (g != NULL && p != NULL) dsmmi_dpool_free(&g->pool, p);
    return NULL;
}
