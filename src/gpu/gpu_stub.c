// src/gpu/gpu_stub.c: the device side of the GPU gateway when dsmm is built without CUDA:
// no devices, and every entry fails with DSMM_ERR_UNSUPPORTED.
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "kernels/ooc.h"

#define NO_CUDA "this dsmm was built without CUDA (configure with -DDSMM_USE_CUDA=ON)"

int dsmmi_gpu_device_count(void)
{
    return 0;
}

void dsmmi_gpu_describe(char *buf, size_t len)
{
    snprintf(buf, len, "none (built without CUDA)");
}

dsmm_status dsmmi_gpu_state_create(dsmm_ctx *ctx, const dsmm_gpu_opts *o, dsmmi_gpu **out)
{
    (void)o;
    *out = NULL;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu: %s", NO_CUDA);
}

void dsmmi_gpu_state_destroy(dsmm_ctx *ctx, dsmmi_gpu **g)
{
    (void)ctx;
    *g = NULL;
}

dsmm_status dsmmi_gpu_spgemm(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info)
{
    (void)a, (void)phase, (void)C, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu spgemm: %s", NO_CUDA);
}

dsmm_status dsmmi_gpu_spgemm_cusparse(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                      dsmmi_spgemm_phase phase, dsmm_csr **C,
                                      dsmm_spgemm_info *info)
{
    (void)a, (void)phase, (void)C, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "cusparse spgemm: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_spmm(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    (void)a, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu spmm: %s", NO_CUDA);
}

dsmm_status dsmmi_gpu_spmm_cusparse(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    (void)a, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "cusparse spmm: %s", NO_CUDA);
}

dsmm_status dsmmi_gpu_bins_device(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                  dsmmi_gpu_bins *out)
{
    (void)A, (void)B;
    memset(out, 0, sizeof *out);
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu bins: %s", NO_CUDA);
}

dsmm_status dsmmi_gpu_copy_bandwidth(dsmm_ctx *ctx, double *gbps)
{
    *gbps = 0;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu: %s", NO_CUDA);
}

dsmm_status dsmmi_gpu_ooc_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user)
{
    (void)run, (void)side, (void)user;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu out-of-core: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_acc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_semiring sr,
                                 int nslots, dsmmi_gpu_acc **out)
{
    (void)nrows, (void)ncols, (void)sr, (void)nslots;
    *out = NULL;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tiles: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_acc_multiply(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot, const dsmm_csr *A,
                                   int a_dev, const dsmm_csr *B, int b_dev, dsmm_spgemm_info *info)
{
    (void)acc, (void)slot, (void)A, (void)a_dev, (void)B, (void)b_dev, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tiles: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_acc_add(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot, const dsmm_csr *P)
{
    (void)acc, (void)slot, (void)P;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tiles: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_acc_skip(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot)
{
    (void)acc, (void)slot;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tiles: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_acc_finish(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, dsmm_type type, int col_bits,
                                 dsmm_csr **C, int *merges, double *merge_seconds)
{
    (void)acc, (void)type, (void)col_bits, (void)merges, (void)merge_seconds;
    *C = NULL;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tiles: %s",
                       NO_CUDA);
}

double dsmmi_gpu_acc_merge_seconds(const dsmmi_gpu_acc *acc)
{
    (void)acc;
    return 0.0;
}

void dsmmi_gpu_acc_free(dsmm_ctx *ctx, dsmmi_gpu_acc **acc)
{
    (void)ctx;
    *acc = NULL;
}

dsmm_status dsmmi_gpu_dacc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx k, dsmm_type type,
                                  dsmmi_gpu_dacc **out)
{
    (void)nrows, (void)k, (void)type;
    *out = NULL;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tile: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_dacc_multiply(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, const dsmm_csr *A,
                                    int a_dev, const dsmm_dense *B, int b_dev, dsmm_spmm_info *info)
{
    (void)acc, (void)A, (void)a_dev, (void)B, (void)b_dev, (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tile: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_dacc_add(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, const dsmm_dense *P)
{
    (void)acc, (void)P;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tile: %s",
                       NO_CUDA);
}

dsmm_status dsmmi_gpu_dacc_finish(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, dsmm_dense *C, int *products)
{
    (void)acc, (void)C, (void)products;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu resident tile: %s",
                       NO_CUDA);
}

void dsmmi_gpu_dacc_free(dsmm_ctx *ctx, dsmmi_gpu_dacc **acc)
{
    (void)ctx;
    *acc = NULL;
}

dsmm_status dsmmi_gpu_copy(dsmm_ctx *ctx, void *dst, const void *src, size_t bytes, int to_device)
{
    (void)dst, (void)src, (void)bytes, (void)to_device;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "gpu copy: %s", NO_CUDA);
}
