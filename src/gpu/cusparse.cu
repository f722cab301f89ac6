// src/gpu/cusparse.cu: the context's cuSPARSE handle and the cusparseSpGEMM (ALG1) entry, the
// reference dsmm's GPU SpGEMM is checked and timed against (--kernel cusparse). Its buffers
// come from the context's pool like everything else, so peak device memory compares fairly.
#include <string.h>

#include <cub/block/block_reduce.cuh>
#include <cusparse.h>

#include "gpu/device.cuh"

#define CUSPARSE_TRY(call)                                                                         \
    do {                                                                                           \
        cusparseStatus_t cs_ = (call);                                                             \
        if (cs_ != CUSPARSE_STATUS_SUCCESS)                                                        \
            DSMM_FAIL(ctx, DSMM_ERR_CUDA, "%s: %s", #call, cusparseGetErrorString(cs_));           \
    } while (0)

static void handle_free(dsmmi_gpu *g)
{
    if (g->cusparse) cusparseDestroy((cusparseHandle_t)g->cusparse);
    g->cusparse = NULL;
}

namespace dsmmg {

dsmm_status cusparse_handle(dsmm_ctx *ctx, dsmmi_gpu *g, void **handle)
{
    dsmm_status st = DSMM_OK;
    if (g->cusparse == NULL) {
        cusparseHandle_t h;
        CUSPARSE_TRY(cusparseCreate(&h));
        g->cusparse = h;
        g->cusparse_free = handle_free;
        CUSPARSE_TRY(cusparseSetStream(h, stream(g, 0)));
    }
    *handle = g->cusparse;
cleanup:
    return st;
}

} // namespace dsmmg

namespace {

void unpack_rowptr64(void *arg, const void *src, size_t off, size_t n)
{
    dsmm_idx *rp = (dsmm_idx *)arg;
    const int32_t *s = (const int32_t *)src;
    for (size_t i = 0; i < n; i++) rp[off + i] = s[i];
}

struct operand {
    int32_t *rp_d, *col_d; // 32-bit row pointers and columns
    double *val_d;
    cusparseSpMatDescr_t desc;
};

// ones: the values uploaded as ones (plus-pair, counting the paths, is plus-times on ones)
dsmm_status upload_operand(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *A, int ones, operand *o)
{
    dsmm_status st = DSMM_OK;
    dsmmg::index_arg rp = {A->rowptr, NULL, 0};
    dsmmg::csr_arg c = {A, NULL, DSMM_DOUBLE};
    DSMM_CHECK(ctx, A->nnz <= INT32_MAX && A->nrows < INT32_MAX, DSMM_ERR_UNSUPPORTED,
               "cusparse spgemm: %lld entries, %lld rows: cusparseSpGEMM takes 32-bit indices "
               "(use --kernel gpu, whose row pointers are 64-bit)",
               (long long)A->nnz, (long long)A->nrows);
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)A->nrows + 1) * sizeof(int32_t),
                               "cuSPARSE row pointers", (void **)&o->rp_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)A->nnz * sizeof(int32_t), "columns",
                               (void **)&o->col_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)A->nnz * sizeof(double), "values",
                               (void **)&o->val_d));
    DSMM_TRY(dsmmg::upload(ctx, g, o->rp_d, (size_t)A->nrows + 1, sizeof(int32_t),
                           dsmmg::pack_index, &rp));
    DSMM_TRY(
        dsmmg::upload(ctx, g, o->col_d, (size_t)A->nnz, sizeof(int32_t), dsmmg::pack_cols, &c));
    DSMM_TRY(dsmmg::upload(ctx, g, o->val_d, (size_t)A->nnz, sizeof(double),
                           ones ? dsmmg::pack_ones : dsmmg::pack_vals, &c));
    CUSPARSE_TRY(cusparseCreateCsr(&o->desc, A->nrows, A->ncols, A->nnz, o->rp_d, o->col_d,
                                   o->val_d, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
cleanup:
    return st;
}

void operand_free(dsmmi_gpu *g, operand *o)
{
    if (o->desc) cusparseDestroySpMat(o->desc);
    o->desc = NULL;
    o->rp_d = (int32_t *)dsmmi_dpool_free(&g->pool, o->rp_d);
    o->col_d = (int32_t *)dsmmi_dpool_free(&g->pool, o->col_d);
    o->val_d = (double *)dsmmi_dpool_free(&g->pool, o->val_d);
}

// The product's multiply-adds (info.flops), summed on the device over A's entries while the
// host waits for cuSPARSE anyway: a pass on the host would lengthen the reference's call, which
// bench_gpu times against dsmm's (whose row flops are counted on the device too).
constexpr int FLOPS_BLOCK = 256;
__global__ void __launch_bounds__(FLOPS_BLOCK)
    flops_sum(int64_t nnz, const int32_t *__restrict__ col, const int32_t *__restrict__ brp,
              unsigned long long *out)
{
    typedef cub::BlockReduce<unsigned long long, FLOPS_BLOCK> reduce_t;
    __shared__ typename reduce_t::TempStorage tmp;
    unsigned long long f = 0;
    for (int64_t j = (int64_t)blockIdx.x * FLOPS_BLOCK + threadIdx.x; j < nnz;
         j += (int64_t)gridDim.x * FLOPS_BLOCK) {
        const int32_t c = col[j];
        f += (unsigned long long)(brp[c + 1] - brp[c]);
    }
    f = reduce_t(tmp).Sum(f);
    if (threadIdx.x == 0 && f != 0) atomicAdd(out, f);
}

int rows_sorted(const dsmm_csr *C)
{
    for (dsmm_idx i = 0; i < C->nrows; i++)
        for (dsmm_idx k = C->rowptr[i] + 1; k < C->rowptr[i + 1]; k++)
            if (dsmm_csr_col(C, k) <= dsmm_csr_col(C, k - 1)) return 0;
    return 1;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_spgemm_cusparse(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                                 dsmmi_spgemm_phase phase, dsmm_csr **C,
                                                 dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    operand A, B;
    cusparseSpMatDescr_t Cdesc = NULL;
    cusparseSpGEMMDescr_t sg = NULL;
    void *buf1 = NULL, *buf2 = NULL, *h = NULL;
    int32_t *crp = NULL, *ccol = NULL;
    double *cval = NULL;
    unsigned long long *flops_d = NULL, flops = 0;
    dsmm_csr *Ch = NULL;
    dsmmg::csr_arg cs = {NULL, NULL, a->type};
    size_t b1 = 0, b2 = 0;
    int64_t cr = 0, cc = 0, cnnz = 0;
    double alpha = 1.0, beta = 0.0, t0 = dsmmi_wtime(), t_up = 0, t1 = 0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_ALG1;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "cusparse spgemm: no device on this context (dsmm_ctx_set_gpu)");
    DSMM_CHECK(ctx,
               phase == DSMMI_SPGEMM_FULL && a->M == NULL &&
                   (a->sr == DSMM_PLUS_TIMES || a->sr == DSMM_PLUS_PAIR),
               DSMM_ERR_UNSUPPORTED,
               "cusparse spgemm: cuSPARSE computes full plus-times (and plus-pair, on ones) "
               "products only (no mask, no symbolic/numeric pair, no other semiring)");
    DSMM_CHECK(
        ctx, a->sr == DSMM_PLUS_PAIR || (a->A->type != DSMM_PATTERN && a->B->type != DSMM_PATTERN),
        DSMM_ERR_UNSUPPORTED, "cusparse spgemm: plus-times needs inputs with values");
    DSMMG_CUDA(cudaSetDevice(g->device));
    dsmmi_dpool_peak_reset(&g->pool);
    DSMM_TRY(dsmmg::cusparse_handle(ctx, g, &h));
    DSMM_TRY(upload_operand(ctx, g, a->A, a->sr == DSMM_PLUS_PAIR, &A));
    DSMM_TRY(upload_operand(ctx, g, a->B, a->sr == DSMM_PLUS_PAIR, &B));
    t_up = dsmmi_wtime() - t0;
    {
        cusparseHandle_t H = (cusparseHandle_t)h;
        cudaStream_t s = dsmmg::stream(g, 0);
        CUSPARSE_TRY(cusparseCreateCsr(&Cdesc, a->A->nrows, a->B->ncols, 0, NULL, NULL, NULL,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        CUSPARSE_TRY(cusparseSpGEMM_createDescr(&sg));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 2), s));
        CUSPARSE_TRY(cusparseSpGEMM_workEstimation(H, op, op, &alpha, A.desc, B.desc, &beta, Cdesc,
                                                   CUDA_R_64F, alg, sg, &b1, NULL));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, b1, "cuSPARSE work estimation buffer", &buf1));
        CUSPARSE_TRY(cusparseSpGEMM_workEstimation(H, op, op, &alpha, A.desc, B.desc, &beta, Cdesc,
                                                   CUDA_R_64F, alg, sg, &b1, buf1));
        CUSPARSE_TRY(cusparseSpGEMM_compute(H, op, op, &alpha, A.desc, B.desc, &beta, Cdesc,
                                            CUDA_R_64F, alg, sg, &b2, NULL));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, b2, "cuSPARSE compute buffer", &buf2));
        CUSPARSE_TRY(cusparseSpGEMM_compute(H, op, op, &alpha, A.desc, B.desc, &beta, Cdesc,
                                            CUDA_R_64F, alg, sg, &b2, buf2));
        CUSPARSE_TRY(cusparseSpMatGetSize(Cdesc, &cr, &cc, &cnnz));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)cr + 1) * sizeof(int32_t),
                                   "row pointers of C", (void **)&crp));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)cnnz * sizeof(int32_t), "columns of C",
                                   (void **)&ccol));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)cnnz * sizeof(double), "values of C",
                                   (void **)&cval));
        CUSPARSE_TRY(cusparseCsrSetPointers(Cdesc, crp, ccol, cval));
        CUSPARSE_TRY(cusparseSpGEMM_copy(H, op, op, &alpha, A.desc, B.desc, &beta, Cdesc,
                                         CUDA_R_64F, alg, sg));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 3), s));
        // after the timed events: the count is dsmm's bookkeeping, not cuSPARSE's work
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, sizeof flops, "flops count", (void **)&flops_d));
        DSMMG_CUDA(cudaMemsetAsync(flops_d, 0, sizeof flops, s));
        if (a->A->nnz > 0) {
            int64_t blocks = (a->A->nnz + FLOPS_BLOCK - 1) / FLOPS_BLOCK;
            flops_sum<<<(unsigned)(blocks < 4096 ? blocks : 4096), FLOPS_BLOCK, 0, s>>>(
                a->A->nnz, A.col_d, B.rp_d, flops_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "cusparse spgemm: flops count"));
        }
        DSMMG_CUDA(cudaMemcpyAsync(dsmmg::scratch(g, 2), flops_d, sizeof flops,
                                   cudaMemcpyDeviceToHost, s));
        DSMMG_CUDA(cudaStreamSynchronize(s));
        memcpy(&flops, dsmmg::scratch(g, 2), sizeof flops);
    }
    t1 = dsmmi_wtime();
    DSMM_TRY(dsmmi_csr_create_ex(ctx, a->A->nrows, a->B->ncols, cnnz, a->type, a->col_bits, &Ch));
    DSMM_TRY(dsmmg::download(ctx, g, crp, (size_t)a->A->nrows + 1, sizeof(int32_t), unpack_rowptr64,
                             Ch->rowptr));
    cs.C = Ch;
    DSMM_TRY(dsmmg::download(ctx, g, ccol, (size_t)cnnz, sizeof(int32_t), dsmmg::unpack_cols, &cs));
    if (a->type != DSMM_PATTERN)
        DSMM_TRY(
            dsmmg::download(ctx, g, cval, (size_t)cnnz, sizeof(double), dsmmg::unpack_vals, &cs));
    Ch->nnz = cnnz;
    // cuSPARSE's ALG1 output is sorted in practice, but that is not documented: check it, and
    // sort when asked and it is not
    Ch->sorted = rows_sorted(Ch);
    if (a->sorted && !Ch->sorted) DSMM_TRY(dsmm_csr_sort_inplace(ctx, Ch, DSMM_DUP_SUM));
    info->seconds_transfer = t_up + (dsmmi_wtime() - t1);
    info->seconds_device = dsmmg::elapsed(g, 2, 3) / 1e3;
    info->seconds_numeric = info->seconds_device;
    info->nnz = cnnz;
    info->sorted = Ch->sorted;
    info->threads = 1;
    info->on_gpu = 1;
    info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
    info->flops = (double)flops;
    g->info.products_gpu++;
    g->info.seconds_kernels += info->seconds_device;
    *C = Ch;
    Ch = NULL;
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0));
        if (sg) cusparseSpGEMM_destroyDescr(sg);
        if (Cdesc) cusparseDestroySpMat(Cdesc);
        operand_free(g, &A);
        operand_free(g, &B);
        dsmmi_dpool_free(&g->pool, buf1);
        dsmmi_dpool_free(&g->pool, buf2);
        dsmmi_dpool_free(&g->pool, crp);
        dsmmi_dpool_free(&g->pool, ccol);
        dsmmi_dpool_free(&g->pool, cval);
        dsmmi_dpool_free(&g->pool, flops_d);
    }
    dsmm_csr_destroy(&Ch);
    return st;
}
