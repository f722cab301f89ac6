// src/gpu/device.cu: device discovery, a context's device state (the pool's one cudaMalloc,
// two streams, events, pinned staging buffers), and the staged copies of CSR arrays that every
// GPU entry uses.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/device.cuh"

extern "C" int dsmmi_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

extern "C" void dsmmi_gpu_describe(char *buf, size_t len)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
        snprintf(buf, len, "none (%s)", rc != cudaSuccess ? cudaGetErrorString(rc) : "no device");
        return;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        snprintf(buf, len, "device 0 (properties unavailable)");
        return;
    }
    snprintf(buf, len, "%s, %zu MiB, sm_%d%d", p.name, (size_t)(p.totalGlobalMem >> 20), p.major,
             p.minor);
}

extern "C" void dsmmi_gpu_state_destroy(dsmm_ctx *ctx, dsmmi_gpu **pg)
{
    dsmmi_gpu *g = *pg;
    if (g == NULL) return;
    cudaSetDevice(g->device);
    for (int i = 0; i < 2; i++)
        if (g->stream[i]) cudaStreamSynchronize((cudaStream_t)g->stream[i]);
    for (int i = 0; i < 8; i++)
        if (g->ev[i]) cudaEventDestroy((cudaEvent_t)g->ev[i]);
    for (int i = 0; i < 2; i++) {
        if (g->stream[i]) cudaStreamDestroy((cudaStream_t)g->stream[i]);
        if (g->pinned[i]) cudaFreeHost(g->pinned[i]);
    }
    if (g->cusparse_free) g->cusparse_free(g);
    if (g->pool_base_d) cudaFree(g->pool_base_d);
    dsmmi_dpool_destroy(ctx, &g->pool);
    free(g);
    *pg = NULL;
}

extern "C" dsmm_status dsmmi_gpu_state_create(dsmm_ctx *ctx, const dsmm_gpu_opts *o,
                                              dsmmi_gpu **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = NULL;
    int n = 0;
    size_t free_b = 0, total_b = 0, want = 0;
    cudaDeviceProp p;

    *out = NULL;
    cudaError_t rc = cudaGetDeviceCount(&n);
    DSMM_CHECK(ctx, rc == cudaSuccess && n > 0, DSMM_ERR_CUDA, "gpu: no CUDA device (%s)",
               rc != cudaSuccess ? cudaGetErrorString(rc) : "none visible");
    // the context's own bookkeeping, like the context itself: outside its byte count and budget
    g = (dsmmi_gpu *)calloc(1, sizeof *g);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_NOMEM, "gpu: device state");
    g->device = o->device >= 0 ? o->device : ctx->rank % n;
    DSMM_CHECK(ctx, g->device < n, DSMM_ERR_ARG, "gpu: device %d asked but %d visible", g->device,
               n);
    DSMMG_CUDA(cudaSetDevice(g->device));
    DSMMG_CUDA(cudaGetDeviceProperties(&p, g->device));
    snprintf(g->name, sizeof g->name, "%.80s, sm_%d%d", p.name, p.major, p.minor);
    g->sm_count = p.multiProcessorCount;
    g->auto_flops = o->auto_flops;
    g->host_planning = o->host_planning != 0;
    g->spread = o->spgemm_spread;
    g->spmm_unroll = o->spmm_unroll; // 0, 1 or 4 (checked): 0 picks by k at each launch
    DSMMG_CUDA(cudaMemGetInfo(&free_b, &total_b));
    {
        // The default: 80% of the free memory, shared among the ranks that pick this device
        // (rank modulo the device count), which start at the same time and would otherwise
        // each ask for 80% of what the first had not yet taken.
        int sharing = (ctx->size - g->device + n - 1) / n;
        if (sharing < 1) sharing = 1;
        want = o->pool_bytes ? o->pool_bytes : free_b / 5 * 4 / (size_t)sharing;
    }
    DSMM_CHECK(ctx, want <= free_b, DSMM_ERR_CUDA,
               "gpu: a pool of %.1f MiB asked but %s has %.1f MiB free", want / 1048576.0, p.name,
               free_b / 1048576.0);
    DSMMG_CUDA(cudaMalloc(&g->pool_base_d, want));
    DSMM_TRY(dsmmi_dpool_init(ctx, &g->pool, g->pool_base_d, want, 256));
    for (int i = 0; i < 2; i++) {
        cudaStream_t s;
        DSMMG_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        g->stream[i] = s;
        DSMMG_CUDA(cudaMallocHost(&g->pinned[i], o->stage_bytes));
    }
    g->pinned_bytes = o->stage_bytes;
    for (int i = 0; i < 8; i++) {
        cudaEvent_t e;
        DSMMG_CUDA(cudaEventCreate(&e));
        g->ev[i] = e;
    }
    *out = g;
    g = NULL;
cleanup:
    dsmmi_gpu_state_destroy(ctx, &g);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_copy_bandwidth(dsmm_ctx *ctx, double *gbps)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    void *src = NULL, *dst = NULL;
    size_t bytes = 0;
    double best = 0;
    *gbps = 0;
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED, "gpu: no device on this context");
    bytes = dsmmi_dpool_largest_free(&g->pool) / 4;
    if (bytes > ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, bytes, "bandwidth source", &src));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, bytes, "bandwidth target", &dst));
    for (int rep = 0; rep < 6; rep++) {
        cudaStream_t s = dsmmg::stream(g, 0);
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 6), s));
        DSMMG_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 7), s));
        DSMMG_CUDA(cudaStreamSynchronize(s));
        double ms = dsmmg::elapsed(g, 6, 7);
        double r = ms > 0 ? 2.0 * (double)bytes / (ms * 1e-3) / 1e9 : 0;
        if (rep > 0 && r > best) best = r; // the first copy warms up
    }
    *gbps = best;
cleanup:
    if (g) {
        dsmmi_dpool_free(&g->pool, src);
        dsmmi_dpool_free(&g->pool, dst);
    }
    return st;
}

extern "C" dsmm_status dsmmi_gpu_copy(dsmm_ctx *ctx, void *dst, const void *src, size_t bytes,
                                      int to_device)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED, "gpu: no device on this context");
    DSMMG_CUDA(cudaSetDevice(g->device));
    if (bytes > 0) {
        // On the library's stream 0, then waited for: a plain cudaMemcpy from pageable memory
        // may return once the bytes are staged, before the DMA lands, and runs on the legacy
        // stream, which the library's non-blocking streams do not wait for; so a kernel queued
        // next on stream 0 could read the piece before it arrived. On stream 0 a download also
        // follows the kernels queued before it.
        cudaStream_t s = dsmmg::stream(g, 0);
        DSMMG_CUDA(cudaMemcpyAsync(dst, src, bytes,
                                   to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
        DSMMG_CUDA(cudaStreamSynchronize(s));
    }
cleanup:
    return st;
}

namespace dsmmg {

struct stage_user {
    dsmmi_gpu *g;
    char *dev; // device side of the transfer
    int s;     // stream of the copies
};

static dsmm_status op_copy(void *user, int up, int b, size_t off, size_t n, size_t elem)
{
    stage_user *u = (stage_user *)user;
    cudaStream_t s = stream(u->g, u->s);
    cudaError_t rc;
    if (up) {
        rc = cudaMemcpyAsync(u->dev + off * elem, u->g->pinned[b], n * elem, cudaMemcpyHostToDevice,
                             s);
    } else {
        // The buffer's last mark may be an upload still in flight on another stream (stage.c
        // waits for it only before packing); an event never recorded counts as complete.
        rc = cudaStreamWaitEvent(s, event(u->g, b), 0);
        if (rc == cudaSuccess)
            rc = cudaMemcpyAsync(u->g->pinned[b], u->dev + off * elem, n * elem,
                                 cudaMemcpyDeviceToHost, s);
    }
    return rc == cudaSuccess ? DSMM_OK : DSMM_ERR_CUDA;
}

static dsmm_status op_record(void *user, int b)
{
    stage_user *u = (stage_user *)user;
    return cudaEventRecord(event(u->g, b), stream(u->g, u->s)) == cudaSuccess ? DSMM_OK
                                                                              : DSMM_ERR_CUDA;
}

static dsmm_status op_wait(void *user, int b)
{
    stage_user *u = (stage_user *)user;
    return cudaEventSynchronize(event(u->g, b)) == cudaSuccess ? DSMM_OK : DSMM_ERR_CUDA;
}

static dsmm_status staged(dsmm_ctx *ctx, dsmmi_gpu *g, int up, int s, char *dev, size_t n,
                          size_t elem, dsmmi_stage_pack_fn pack, dsmmi_stage_unpack_fn unpack,
                          void *arg)
{
    dsmm_status st = DSMM_OK;
    stage_user u = {g, dev, s};
    dsmmi_stage_ops ops = {&u,     {g->pinned[0], g->pinned[1]}, stage_bytes(g), op_copy, op_record,
                           op_wait};
    double t0 = dsmmi_wtime();
    st = up ? dsmmi_stage_up(ctx, &ops, n, elem, pack, arg, NULL)
            : dsmmi_stage_down(ctx, &ops, n, elem, unpack, arg, NULL);
    if (st == DSMM_ERR_CUDA) {
        cudaError_t rc = cudaGetLastError();
        DSMM_FAIL(ctx, DSMM_ERR_CUDA, "gpu: staged %s of %zu bytes: %s", up ? "upload" : "download",
                  n * elem, cudaGetErrorString(rc));
    }
    DSMM_TRY(st);
    if (up) {
        g->info.bytes_h2d += (double)(n * elem);
        g->info.seconds_h2d += dsmmi_wtime() - t0; // host view: the last pieces may still fly
    } else {
        g->info.bytes_d2h += (double)(n * elem);
        g->info.seconds_d2h += dsmmi_wtime() - t0;
    }
cleanup:
    return st;
}

dsmm_status pool_alloc(dsmm_ctx *ctx, dsmmi_gpu *g, size_t bytes, const char *what, void **out,
                       int *pool_full)
{
    dsmm_status st = dsmmi_dpool_alloc(ctx, &g->pool, bytes, what, out);
    if (st == DSMM_ERR_NOMEM && pool_full != NULL) {
        size_t need = (bytes + g->pool.align - 1) & ~(g->pool.align - 1);
        if (need < bytes || dsmmi_dpool_largest_free(&g->pool) < need) *pool_full = 1;
    }
    return st;
}

dsmm_status upload(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst_d, size_t n, size_t elem_bytes,
                   dsmmi_stage_pack_fn pack, void *arg)
{
    return staged(ctx, g, 1, 0, (char *)dst_d, n, elem_bytes, pack, NULL, arg);
}

dsmm_status download(dsmm_ctx *ctx, dsmmi_gpu *g, const void *src_d, size_t n, size_t elem_bytes,
                     dsmmi_stage_unpack_fn unpack, void *arg, int s)
{
    return staged(ctx, g, 0, s, (char *)src_d, n, elem_bytes, NULL, unpack, arg);
}

struct raw_arg {
    const char *src;
    char *dst;
    size_t bytes;
};

static void pack_raw(void *arg, void *dst, size_t off, size_t n)
{
    raw_arg *r = (raw_arg *)arg;
    memcpy(dst, r->src + off * r->bytes, n * r->bytes);
}

static void unpack_raw(void *arg, const void *src, size_t off, size_t n)
{
    raw_arg *r = (raw_arg *)arg;
    memcpy(r->dst + off * r->bytes, src, n * r->bytes);
}

dsmm_status upload_raw(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst_d, const void *src, size_t n,
                       size_t bytes)
{
    raw_arg r = {(const char *)src, NULL, bytes};
    return upload(ctx, g, dst_d, n, bytes, pack_raw, &r);
}

dsmm_status download_raw(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst, const void *src_d, size_t n,
                         size_t bytes, int s)
{
    raw_arg r = {NULL, (char *)dst, bytes};
    return download(ctx, g, src_d, n, bytes, unpack_raw, &r, s);
}

void pack_cols(void *arg, void *dst, size_t off, size_t n)
{
    const dsmm_csr *A = ((csr_arg *)arg)->A;
    int32_t *d = (int32_t *)dst;
    if (A->colidx32) {
        memcpy(d, A->colidx32 + off, n * sizeof *d);
    } else {
        for (size_t i = 0; i < n; i++) d[i] = (int32_t)A->colidx[off + i];
    }
}

void pack_vals(void *arg, void *dst, size_t off, size_t n)
{
    const csr_arg *c = (const csr_arg *)arg;
    const dsmm_csr *A = c->A;
    if (c->t == DSMM_DOUBLE) {
        double *d = (double *)dst;
        for (size_t i = 0; i < n; i++) d[i] = dsmm_csr_value(A, (dsmm_idx)(off + i));
    } else {
        float *d = (float *)dst;
        for (size_t i = 0; i < n; i++) d[i] = (float)dsmm_csr_value(A, (dsmm_idx)(off + i));
    }
}

void pack_ones(void *arg, void *dst, size_t off, size_t n)
{
    (void)off;
    if (((const csr_arg *)arg)->t == DSMM_DOUBLE) {
        for (size_t i = 0; i < n; i++) ((double *)dst)[i] = 1.0;
    } else {
        for (size_t i = 0; i < n; i++) ((float *)dst)[i] = 1.0f;
    }
}

dsmm_status upload_csr(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *A, dsmm_type val_type,
                       csr_d *out, int *pool_full)
{
    dsmm_status st = DSMM_OK;
    csr_arg c = {A, NULL, val_type};
    memset(out, 0, sizeof *out);
    DSMM_CHECK(ctx, A->ncols <= INT32_MAX, DSMM_ERR_ARG,
               "gpu: %lld columns do not fit the device's 32-bit columns (split into tiles)",
               (long long)A->ncols);
    out->nrows = A->nrows;
    out->ncols = A->ncols;
    out->nnz = A->nnz;
    out->val_bytes = val_type == DSMM_DOUBLE ? 8 : val_type == DSMM_FLOAT ? 4 : 0;
    DSMM_TRY(pool_alloc(ctx, g, ((size_t)A->nrows + 1) * sizeof(dsmm_idx), "row pointers",
                        (void **)&out->rowptr_d, pool_full));
    DSMM_TRY(pool_alloc(ctx, g, (size_t)A->nnz * sizeof(int32_t), "columns", (void **)&out->col_d,
                        pool_full));
    DSMM_TRY(pool_alloc(ctx, g, (size_t)A->nnz * out->val_bytes, "values", &out->val_d, pool_full));
    DSMM_TRY(upload_raw(ctx, g, out->rowptr_d, A->rowptr, (size_t)A->nrows + 1, sizeof(dsmm_idx)));
    DSMM_TRY(upload(ctx, g, out->col_d, (size_t)A->nnz, sizeof(int32_t), pack_cols, &c));
    if (out->val_bytes)
        DSMM_TRY(upload(ctx, g, out->val_d, (size_t)A->nnz, out->val_bytes, pack_vals, &c));
cleanup:
    if (st != DSMM_OK) free_csr(g, out);
    return st;
}

void free_csr(dsmmi_gpu *g, csr_d *A)
{
    A->rowptr_d = (dsmm_idx *)dsmmi_dpool_free(&g->pool, A->rowptr_d);
    A->col_d = (int32_t *)dsmmi_dpool_free(&g->pool, A->col_d);
    A->val_d = dsmmi_dpool_free(&g->pool, A->val_d);
}

void unpack_cols(void *arg, const void *src, size_t off, size_t n)
{
    dsmm_csr *C = ((csr_arg *)arg)->C;
    const int32_t *s = (const int32_t *)src;
    if (C->colidx32) {
        memcpy(C->colidx32 + off, s, n * sizeof *s);
    } else {
        for (size_t i = 0; i < n; i++) C->colidx[off + i] = s[i];
    }
}

void unpack_vals(void *arg, const void *src, size_t off, size_t n)
{
    dsmm_csr *C = ((csr_arg *)arg)->C;
    const double *s = (const double *)src;
    if (C->type == DSMM_DOUBLE) {
        memcpy((double *)C->val + off, s, n * sizeof *s);
    } else {
        float *d = (float *)C->val + off;
        for (size_t i = 0; i < n; i++) d[i] = (float)s[i];
    }
}

void pack_index(void *arg, void *dst, size_t off, size_t n)
{
    const index_arg *x = (const index_arg *)arg;
    if (x->wide && x->i64) {
        memcpy(dst, x->i64 + off, n * sizeof(int64_t));
    } else if (x->wide) {
        for (size_t i = 0; i < n; i++) ((int64_t *)dst)[i] = x->i32[off + i];
    } else if (x->i32) {
        memcpy(dst, x->i32 + off, n * sizeof(int32_t));
    } else {
        for (size_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int32_t)x->i64[off + i];
    }
}

dsmm_status download_csr(dsmm_ctx *ctx, dsmmi_gpu *g, const csr_d *D, dsmm_type type, int col_bits,
                         int sorted, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *C = NULL;
    csr_arg c = {NULL, NULL, type};
    *out = NULL;
    DSMM_TRY(dsmmi_csr_create_ex(ctx, D->nrows, D->ncols, D->nnz, type, col_bits, &C));
    c.C = C;
    DSMM_TRY(download_raw(ctx, g, C->rowptr, D->rowptr_d, (size_t)D->nrows + 1, sizeof(dsmm_idx)));
    DSMM_TRY(download(ctx, g, D->col_d, (size_t)D->nnz, sizeof(int32_t), unpack_cols, &c));
    if (type != DSMM_PATTERN)
        DSMM_TRY(download(ctx, g, D->val_d, (size_t)D->nnz, sizeof(double), unpack_vals, &c));
    C->nnz = D->nnz;
    C->sorted = sorted;
    *out = C;
    C = NULL;
cleanup:
    dsmm_csr_destroy(&C);
    return st;
}

double elapsed(const dsmmi_gpu *g, int e0, int e1)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, event(g, e0), event(g, e1)) != cudaSuccess) return 0.0;
    return (double)ms;
}

dsmm_status check_launch(dsmm_ctx *ctx, const char *what)
{
    dsmm_status st = DSMM_OK;
    cudaError_t rc = cudaGetLastError();
    DSMM_CHECK(ctx, rc == cudaSuccess, DSMM_ERR_CUDA, "gpu: %s: %s", what, cudaGetErrorString(rc));
cleanup:
    return st;
}

} // namespace dsmmg
