// src/gpu/spmm.cu: SpMM C = alpha * A * B + beta * C on the GPU (own kernels and cuSPARSE).
// Two variants, picked by dsmmi_gpu_spmm_variant. Row-split: a group of 8, 16 or 32 lanes per
// row of A; each lane owns the columns of C congruent to its lane (in 16-byte vectors when k
// allows), walks the row's entries and keeps its sums in registers, so every element of C is
// written once, by one lane, and B's rows are read with coalesced loads. Split rows (for rows
// far longer than the mean, which would idle the other warps): the row-split kernel takes the
// first `cap` entries of every row and writes C, and a second kernel adds each further `cap`
// entries of a long row (an item of dsmmi_gpu_spmm_segs) into C with atomics. B and C live on
// the device packed to ld = k; A keeps 64-bit row pointers, so nnz may pass 2^31.
#include <stdint.h>
#include <string.h>

#include <cusparse.h>

#include "gpu/device.cuh"

namespace {

enum { BLOCK = 256, UNROLL = 4 };

// One access of VEC consecutive values: 16-byte vectors where k and alignment allow.
template <typename V, int VEC> struct vec { // VEC == 1
    typedef V T;
};
template <> struct vec<float, 4> {
    typedef float4 T;
};
template <> struct vec<double, 2> {
    typedef double2 T;
};

// acc[u] += sum over entries p in [p0, p1) of A(r, p) * B(col[p], group g0 + u * STRIDE), for
// the groups below `groups`; a NULL val means a pattern (all ones). PU entries at a time: their
// columns and values first, then their PU loads of B, then the products, so PU loads of B are
// in flight per lane instead of one (at k = 128 floats a lane has one column group, and a loop
// of one entry waits for each load). The products are added in the same order either way, so
// the sums are the same to the bit.
template <typename V, int STRIDE, int VEC, int PU>
__device__ __forceinline__ void
accumulate(V (&acc)[UNROLL][VEC], dsmm_idx p0, dsmm_idx p1, dsmm_idx g0, dsmm_idx groups,
           const int32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ B)
{
    typedef typename vec<V, VEC>::T T;
    const T *Bv = reinterpret_cast<const T *>(B);
    dsmm_idx p = p0;
    if (PU > 1) {
        for (; p + PU <= p1; p += PU) {
            dsmm_idx brow[PU];
            V v[PU];
#pragma unroll
            for (int j = 0; j < PU; j++) brow[j] = (dsmm_idx)__ldg(col + p + j) * groups;
            if (val) { // (one branch for the PU values: a branch between loads holds them back)
#pragma unroll
                for (int j = 0; j < PU; j++) v[j] = __ldg(val + p + j);
            } else {
#pragma unroll
                for (int j = 0; j < PU; j++) v[j] = V(1);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const dsmm_idx g = g0 + (dsmm_idx)u * STRIDE;
                if (g < groups) {
                    T b[PU];
#pragma unroll
                    for (int j = 0; j < PU; j++) b[j] = __ldg(Bv + brow[j] + g);
#pragma unroll
                    for (int j = 0; j < PU; j++) {
                        const V *e = reinterpret_cast<const V *>(&b[j]);
#pragma unroll
                        for (int i = 0; i < VEC; i++) acc[u][i] += v[j] * e[i];
                    }
                }
            }
        }
    }
    for (; p < p1; p++) {
        const dsmm_idx brow = (dsmm_idx)__ldg(col + p) * groups;
        const V v = val ? __ldg(val + p) : V(1);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const dsmm_idx g = g0 + (dsmm_idx)u * STRIDE;
            if (g < groups) {
                const T b = __ldg(Bv + brow + g);
                const V *e = reinterpret_cast<const V *>(&b);
#pragma unroll
                for (int i = 0; i < VEC; i++) acc[u][i] += v * e[i];
            }
        }
    }
}

// Row-split: LANES lanes per row; lane l owns column groups l, l + LANES, ... (VEC columns
// each) and keeps UNROLL of them in registers per pass over the row's entries. C is read
// only when read_c (beta != 0), so garbage (NaN) in C is not propagated for beta == 0.
template <typename V, int LANES, int VEC, int PU>
__global__ void __launch_bounds__(BLOCK)
    spmm_rows(dsmm_idx m, dsmm_idx k, const dsmm_idx *__restrict__ rowptr,
              const int32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ B,
              V *__restrict__ C, V alpha, V beta, int read_c, dsmm_idx cap)
{
    typedef typename vec<V, VEC>::T T;
    const dsmm_idx r = (dsmm_idx)blockIdx.x * (BLOCK / LANES) + threadIdx.x / LANES;
    const int lane = threadIdx.x % LANES;
    if (r >= m) return;
    // (split variant: the row's first `cap` entries; spmm_segs adds the rest)
    const dsmm_idx groups = k / VEC, p0 = rowptr[r],
                   p1 = rowptr[r + 1] - p0 > cap ? p0 + cap : rowptr[r + 1];
    T *Cr = reinterpret_cast<T *>(C + r * k);
    for (dsmm_idx g0 = lane; g0 < groups; g0 += (dsmm_idx)LANES * UNROLL) {
        V acc[UNROLL][VEC] = {};
        accumulate<V, LANES, VEC, PU>(acc, p0, p1, g0, groups, col, val, B);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const dsmm_idx g = g0 + (dsmm_idx)u * LANES;
            if (g >= groups) continue;
            T out;
            V *o = reinterpret_cast<V *>(&out);
            if (read_c) {
                const T c = Cr[g];
                const V *e = reinterpret_cast<const V *>(&c);
#pragma unroll
                for (int i = 0; i < VEC; i++) o[i] = alpha * acc[u][i] + beta * e[i];
            } else {
#pragma unroll
                for (int i = 0; i < VEC; i++) o[i] = alpha * acc[u][i];
            }
            Cr[g] = out;
        }
    }
}

// Split variant, the rest of the long rows: item t is entries [seg_begin[t], seg_begin[t] + cap)
// (clipped to the row's end) of row seg_row[t], after spmm_rows wrote the row's first cap
// entries; LANES lanes an item, the sums added into C with atomics (several items share a row).
template <typename V, int LANES, int VEC, int PU>
__global__ void __launch_bounds__(BLOCK)
    spmm_segs(dsmm_idx nseg, const int32_t *__restrict__ seg_row,
              const dsmm_idx *__restrict__ seg_begin, dsmm_idx cap, dsmm_idx k,
              const dsmm_idx *__restrict__ rowptr, const int32_t *__restrict__ col,
              const V *__restrict__ val, const V *__restrict__ B, V *__restrict__ C, V alpha)
{
    const dsmm_idx t = (dsmm_idx)blockIdx.x * (BLOCK / LANES) + threadIdx.x / LANES;
    const int lane = threadIdx.x % LANES;
    if (t >= nseg) return;
    const dsmm_idx r = seg_row[t], p0 = seg_begin[t],
                   p1 = rowptr[r + 1] - p0 > cap ? p0 + cap : rowptr[r + 1];
    const dsmm_idx groups = k / VEC;
    for (dsmm_idx g0 = lane; g0 < groups; g0 += (dsmm_idx)LANES * UNROLL) {
        V acc[UNROLL][VEC] = {};
        accumulate<V, LANES, VEC, PU>(acc, p0, p1, g0, groups, col, val, B);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const dsmm_idx g = g0 + (dsmm_idx)u * LANES;
            if (g >= groups) continue;
            V *c = C + r * k + g * VEC;
#pragma unroll
            for (int i = 0; i < VEC; i++) atomicAdd(c + i, alpha * acc[u][i]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

// Dense rows between the host (leading dimension ld) and the device (packed, ld = k): one
// staging element is one row, so a piece is always whole rows.
struct rows_arg {
    const char *src;
    char *dst;
    size_t row_bytes, ld_bytes;
};

static void pack_rows(void *arg, void *dst, size_t off, size_t n)
{
    const rows_arg *r = (const rows_arg *)arg;
    if (r->ld_bytes == r->row_bytes) {
        memcpy(dst, r->src + off * r->row_bytes, n * r->row_bytes);
        return;
    }
    for (size_t i = 0; i < n; i++)
        memcpy((char *)dst + i * r->row_bytes, r->src + (off + i) * r->ld_bytes, r->row_bytes);
}

static void unpack_rows(void *arg, const void *src, size_t off, size_t n)
{
    const rows_arg *r = (const rows_arg *)arg;
    if (r->ld_bytes == r->row_bytes) {
        memcpy(r->dst + off * r->row_bytes, src, n * r->row_bytes);
        return;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(r->dst + (off + i) * r->ld_bytes, (const char *)src + i * r->row_bytes,
               r->row_bytes);
}

// rows x k values of elem bytes at src (host, leading dimension ld) packed into dst (device,
// ld = k), and back.
static dsmm_status upload_rows(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst, const void *src,
                               dsmm_idx rows, dsmm_idx k, dsmm_idx ld, size_t elem)
{
    rows_arg r = {(const char *)src, NULL, (size_t)k * elem, (size_t)ld * elem};
    if (rows == 0 || r.row_bytes == 0) return DSMM_OK; // (staging needs elements of 1+ bytes)
    return dsmmg::upload(ctx, g, dst, (size_t)rows, r.row_bytes, pack_rows, &r);
}

static dsmm_status download_rows(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst, const void *src,
                                 dsmm_idx rows, dsmm_idx k, dsmm_idx ld, size_t elem)
{
    rows_arg r = {NULL, (char *)dst, (size_t)k * elem, (size_t)ld * elem};
    if (rows == 0 || r.row_bytes == 0) return DSMM_OK;
    return dsmmg::download(ctx, g, src, (size_t)rows, r.row_bytes, unpack_rows, &r);
}

// B (n x k) and C (m x k) on the device. C is uploaded only when beta != 0; otherwise it is
// zeroed when zero_c: pool blocks hold whatever the last product left (NaNs included), which
// atomics and cuSPARSE must not add to.
static dsmm_status upload_dense(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_spmm_args *a, int zero_c,
                                void **B_d, void **C_d)
{
    dsmm_status st = DSMM_OK;
    size_t elem = dsmmi_type_size(a->type), row = (size_t)a->k * elem;
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)a->n * row, "spmm B", B_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)a->m * row, "spmm C", C_d));
    if (row == 0) goto cleanup; // k == 0: nothing to move
    DSMM_TRY(upload_rows(ctx, g, *B_d, a->B, a->n, a->k, a->ldb, elem));
    if (a->beta != 0.0) {
        DSMM_TRY(upload_rows(ctx, g, *C_d, a->C, a->m, a->k, a->ldc, elem));
    } else if (zero_c && *C_d != NULL) {
        DSMMG_CUDA(cudaMemsetAsync(*C_d, 0, (size_t)a->m * row, dsmmg::stream(g, 0)));
    }
cleanup:
    return st;
}

static dsmm_status download_c(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_spmm_args *a,
                              const void *C_d)
{
    return download_rows(ctx, g, a->C, C_d, a->m, a->k, a->ldc, dsmmi_type_size(a->type));
}

// What both entries check first: the front end sends neither a transposed A (it transposes on
// the host) nor B and C of other types.
static dsmm_status begin(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_spmm_args *a, const char *who)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "%s: no device on this context (dsmm_ctx_set_gpu)", who);
    DSMM_CHECK(ctx, !a->trans && (a->type == DSMM_FLOAT || a->type == DSMM_DOUBLE),
               DSMM_ERR_INTERNAL, "%s: a transposed A, or B and C neither float nor double", who);
    DSMMG_CUDA(cudaSetDevice(g->device));
    dsmmi_dpool_peak_reset(&g->pool);
cleanup:
    return st;
}

// What both entries report; events 2 and 3 bracket the multiply alone.
static void finish(dsmmi_gpu *g, dsmm_spmm_info *info, double t_transfer)
{
    double s = dsmmg::elapsed(g, 2, 3) / 1e3;
    info->threads = 1;
    info->workspace_bytes = 0; // no host scratch: conversions happen in the staging buffers
    info->on_gpu = 1;
    info->seconds_device = s;
    info->seconds_transfer = t_transfer;
    info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
    g->info.products_gpu++;
    g->info.seconds_kernels += s;
}

template <typename V, int LANES, int VEC, int PU>
static void launch_pu(cudaStream_t s, dsmm_idx blocks, dsmm_idx sblocks, const dsmmi_spmm_args *a,
                      const dsmmg::csr_d *A, const V *val, const V *B, V *C, dsmm_idx cap,
                      const int32_t *seg_row, const dsmm_idx *seg_begin, dsmm_idx nseg)
{
    V alpha = (V)a->alpha, beta = (V)a->beta;
    spmm_rows<V, LANES, VEC, PU><<<(unsigned)blocks, BLOCK, 0, s>>>(
        a->m, a->k, A->rowptr_d, A->col_d, val, B, C, alpha, beta, a->beta != 0.0, cap);
    if (nseg > 0)
        spmm_segs<V, LANES, VEC, PU><<<(unsigned)sblocks, BLOCK, 0, s>>>(
            nseg, seg_row, seg_begin, cap, a->k, A->rowptr_d, A->col_d, val, B, C, alpha);
}

// (unroll: dsmmi_gpu_spmm_unroll of dsmmi_gpu.spmm_unroll, 1 or 4 entries' loads in flight)
template <typename V, int LANES, int VEC>
static void launch_lanes(cudaStream_t s, int unroll, dsmm_idx blocks, dsmm_idx sblocks,
                         const dsmmi_spmm_args *a, const dsmmg::csr_d *A, const V *val, const V *B,
                         V *C, dsmm_idx cap, const int32_t *seg_row, const dsmm_idx *seg_begin,
                         dsmm_idx nseg)
{
    if (unroll == 1)
        launch_pu<V, LANES, VEC, 1>(s, blocks, sblocks, a, A, val, B, C, cap, seg_row, seg_begin,
                                    nseg);
    else
        launch_pu<V, LANES, VEC, 4>(s, blocks, sblocks, a, A, val, B, C, cap, seg_row, seg_begin,
                                    nseg);
}

template <typename V, int VEC>
static dsmm_status launch(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_spmm_args *a,
                          const dsmmg::csr_d *A, const void *val_d, const void *B_d, void *C_d,
                          dsmm_idx cap, const int32_t *seg_row, const dsmm_idx *seg_begin,
                          dsmm_idx nseg)
{
    dsmm_status st = DSMM_OK;
    cudaStream_t s = dsmmg::stream(g, 0);
    const V *val = (const V *)val_d, *B = (const V *)B_d;
    V *C = (V *)C_d;
    // Lanes per row from the vector groups, not the columns: 32 floats are 8 float4 groups,
    // which 8 lanes cover without 24 idle ones.
    int lanes = dsmmi_gpu_spmm_lanes(a->k / VEC), rows = BLOCK / lanes;
    int unroll = dsmmi_gpu_spmm_unroll(g->spmm_unroll, a->k / VEC);
    dsmm_idx blocks = (a->m + rows - 1) / rows, sblocks = (nseg + rows - 1) / rows;
    DSMM_CHECK(ctx, blocks <= INT32_MAX && sblocks <= INT32_MAX, DSMM_ERR_UNSUPPORTED,
               "gpu spmm: %lld thread blocks exceed the grid limit", (long long)blocks);
    if (blocks == 0) goto cleanup;
    if (lanes == 8)
        launch_lanes<V, 8, VEC>(s, unroll, blocks, sblocks, a, A, val, B, C, cap, seg_row,
                                seg_begin, nseg);
    else if (lanes == 16)
        launch_lanes<V, 16, VEC>(s, unroll, blocks, sblocks, a, A, val, B, C, cap, seg_row,
                                 seg_begin, nseg);
    else
        launch_lanes<V, 32, VEC>(s, unroll, blocks, sblocks, a, A, val, B, C, cap, seg_row,
                                 seg_begin, nseg);
    DSMM_TRY(dsmmg::check_launch(ctx, cap == (dsmm_idx)INT64_MAX ? "spmm row-split"
                                                                 : "spmm split rows"));
cleanup:
    return st;
}

// 16-byte loads need k a multiple of the vector and 16-byte aligned rows: the pool gives
// 256-byte aligned blocks, so with ld = k every row start is aligned. cap: INT64_MAX for the
// row-split variant (rows whole), else the split rows' cap with nseg items past it.
template <typename V>
static dsmm_status run(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_spmm_args *a, const dsmmg::csr_d *A,
                       const void *val_d, const void *B_d, void *C_d, dsmm_idx cap,
                       const int32_t *seg_row, const dsmm_idx *seg_begin, dsmm_idx nseg)
{
    constexpr int W = (int)(16 / sizeof(V));
    int wide = a->k % W == 0 && ((uintptr_t)B_d | (uintptr_t)C_d) % 16 == 0;
    return wide ? launch<V, W>(ctx, g, a, A, val_d, B_d, C_d, cap, seg_row, seg_begin, nseg)
                : launch<V, 1>(ctx, g, a, A, val_d, B_d, C_d, cap, seg_row, seg_begin, nseg);
}

// The split rows of A (host row pointers) when the split variant is picked: the cap and the
// items past it, uploaded. variant 0 (row-split) leaves cap at INT64_MAX and no items.
struct split {
    int variant;
    dsmm_idx cap;
    dsmmi_gpu_spmm_segs sg;
    int32_t *row_d;
    dsmm_idx *begin_d;
};

static dsmm_status split_make(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *A, dsmm_idx k, split *sp)
{
    dsmm_status st = DSMM_OK;
    memset(sp, 0, sizeof *sp);
    sp->cap = (dsmm_idx)INT64_MAX; // row-split: every row whole
    sp->variant = dsmmi_gpu_spmm_variant(A);
    if (sp->variant != 1) goto cleanup;
    sp->cap = dsmmi_gpu_spmm_cap(A->nnz, dsmmi_gpu_spmm_lanes(k), g->sm_count);
    DSMM_TRY(dsmmi_gpu_spmm_segs_make(ctx, A, sp->cap, &sp->sg));
    if (sp->sg.n == 0) goto cleanup;
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)sp->sg.n * sizeof(int32_t), "spmm split rows",
                               (void **)&sp->row_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)sp->sg.n * sizeof(dsmm_idx),
                               "spmm split offsets", (void **)&sp->begin_d));
    DSMM_TRY(dsmmg::upload_raw(ctx, g, sp->row_d, sp->sg.row, (size_t)sp->sg.n, sizeof(int32_t)));
    DSMM_TRY(
        dsmmg::upload_raw(ctx, g, sp->begin_d, sp->sg.begin, (size_t)sp->sg.n, sizeof(dsmm_idx)));
cleanup:
    return st;
}

static void split_free(dsmm_ctx *ctx, dsmmi_gpu *g, split *sp)
{
    if (g != NULL) {
        sp->row_d = (int32_t *)dsmmi_dpool_free(&g->pool, sp->row_d);
        sp->begin_d = (dsmm_idx *)dsmmi_dpool_free(&g->pool, sp->begin_d);
    }
    dsmmi_gpu_spmm_segs_free(ctx, &sp->sg);
}

static dsmm_status cusp(dsmm_ctx *ctx, cusparseStatus_t rc, const char *what)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, rc == CUSPARSE_STATUS_SUCCESS, DSMM_ERR_CUDA, "cusparse spmm: %s: %s", what,
               cusparseGetErrorString(rc));
cleanup:
    return st;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_spmm(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmmg::csr_d Ad;
    void *val_d = NULL, *B_d = NULL, *C_d = NULL;
    split sp;
    size_t elem = 0;
    double t0 = 0, t_transfer = 0;
    memset(&Ad, 0, sizeof Ad);
    memset(&sp, 0, sizeof sp);
    // AUTO products below the context's threshold stay on the CPU's row-wise kernel.
    if (g != NULL && a->auto_chosen && !dsmmi_gpu_wants(ctx, (double)a->A->nnz * (double)a->k)) {
        g->info.products_cpu++;
        return dsmmi_spmm_row(ctx, a, info);
    }
    DSMM_TRY(begin(ctx, g, a, "gpu spmm"));
    elem = dsmmi_type_size(a->type);

    t0 = dsmmi_wtime();
    // The structure through upload_csr; the values as the front end converted them (a->type),
    // or none for a pattern, which the kernels read as ones.
    DSMM_TRY(dsmmg::upload_csr(ctx, g, a->A, DSMM_PATTERN, &Ad));
    if (a->av != NULL) {
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)a->A->nnz * elem, "spmm values", &val_d));
        DSMM_TRY(dsmmg::upload_raw(ctx, g, val_d, a->av, (size_t)a->A->nnz, elem));
    }
    // spmm_rows writes every element of C (beta * C read first when beta != 0): no zeroing
    DSMM_TRY(upload_dense(ctx, g, a, 0, &B_d, &C_d));
    DSMM_TRY(split_make(ctx, g, a->A, a->k, &sp));
    t_transfer = dsmmi_wtime() - t0;

    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 2), dsmmg::stream(g, 0)));
    if (a->type == DSMM_DOUBLE)
        DSMM_TRY(
            run<double>(ctx, g, a, &Ad, val_d, B_d, C_d, sp.cap, sp.row_d, sp.begin_d, sp.sg.n));
    else
        DSMM_TRY(
            run<float>(ctx, g, a, &Ad, val_d, B_d, C_d, sp.cap, sp.row_d, sp.begin_d, sp.sg.n));
    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 3), dsmmg::stream(g, 0)));

    t0 = dsmmi_wtime();
    DSMM_TRY(download_c(ctx, g, a, C_d));
    DSMMG_CUDA(cudaStreamSynchronize(dsmmg::stream(g, 0)));
    finish(g, info, t_transfer + (dsmmi_wtime() - t0));
    info->gpu_variant = sp.variant;
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0)); // blocks may be in use
        dsmmg::free_csr(g, &Ad);
        dsmmi_dpool_free(&g->pool, val_d);
        dsmmi_dpool_free(&g->pool, B_d);
        dsmmi_dpool_free(&g->pool, C_d);
    }
    split_free(ctx, g, &sp);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_spmm_cusparse(dsmm_ctx *ctx, const dsmmi_spmm_args *a,
                                               dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    const dsmm_csr *A = a->A;
    void *h = NULL, *rowptr_d = NULL, *col_d = NULL, *val_d = NULL, *B_d = NULL, *C_d = NULL;
    void *buf_d = NULL;
    cusparseHandle_t H = NULL;
    cusparseSpMatDescr_t sA = NULL;
    cusparseDnMatDescr_t dB = NULL, dC = NULL;
    cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;
    cusparseStatus_t rc = CUSPARSE_STATUS_SUCCESS;
    cusparseIndexType_t it = CUSPARSE_INDEX_32I;
    cudaDataType dt = CUDA_R_64F;
    size_t elem = 0, ib = 0, buf_bytes = 0;
    double t0 = 0, t_transfer = 0, alpha_d = a->alpha, beta_d = a->beta;
    float alpha_f = (float)a->alpha, beta_f = (float)a->beta;
    const void *alpha = &alpha_d, *beta = &beta_d;
    // 32-bit indices when everything fits them (half the index traffic); cuSPARSE wants one
    // index type for row offsets and columns, so larger matrices widen both to 64 bits.
    dsmmg::index_arg ra = {A->rowptr, NULL, 0}, ca = {A->colidx, A->colidx32, 0};
    int wide = A->nnz > INT32_MAX || A->nrows > INT32_MAX || A->ncols > INT32_MAX;
    ra.wide = ca.wide = wide;
    DSMM_TRY(begin(ctx, g, a, "cusparse spmm"));
    DSMM_TRY(dsmmg::cusparse_handle(ctx, g, &h));
    H = (cusparseHandle_t)h;
    elem = dsmmi_type_size(a->type);
    ib = wide ? sizeof(int64_t) : sizeof(int32_t);
    it = wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    if (a->type == DSMM_FLOAT) {
        dt = CUDA_R_32F;
        alpha = &alpha_f;
        beta = &beta_f;
    }

    t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)A->nrows + 1) * ib, "cusparse row offsets",
                               &rowptr_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)A->nnz * ib, "cusparse columns", &col_d));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)A->nnz * elem, "cusparse values", &val_d));
    DSMM_TRY(dsmmg::upload(ctx, g, rowptr_d, (size_t)A->nrows + 1, ib, dsmmg::pack_index, &ra));
    DSMM_TRY(dsmmg::upload(ctx, g, col_d, (size_t)A->nnz, ib, dsmmg::pack_index, &ca));
    if (a->av != NULL) {
        DSMM_TRY(dsmmg::upload_raw(ctx, g, val_d, a->av, (size_t)A->nnz, elem));
    } else {
        dsmmg::csr_arg ones = {A, NULL, a->type}; // a pattern: cuSPARSE has no implicit ones
        DSMM_TRY(dsmmg::upload(ctx, g, val_d, (size_t)A->nnz, elem, dsmmg::pack_ones, &ones));
    }
    DSMM_TRY(upload_dense(ctx, g, a, 1, &B_d, &C_d));
    t_transfer = dsmmi_wtime() - t0;

    DSMM_TRY(cusp(ctx,
                  cusparseCreateCsr(&sA, A->nrows, A->ncols, A->nnz, rowptr_d, col_d, val_d, it, it,
                                    CUSPARSE_INDEX_BASE_ZERO, dt),
                  "cusparseCreateCsr"));
    DSMM_TRY(cusp(ctx, cusparseCreateDnMat(&dB, a->n, a->k, a->k, B_d, dt, CUSPARSE_ORDER_ROW),
                  "cusparseCreateDnMat(B)"));
    DSMM_TRY(cusp(ctx, cusparseCreateDnMat(&dC, a->m, a->k, a->k, C_d, dt, CUSPARSE_ORDER_ROW),
                  "cusparseCreateDnMat(C)"));
    // The default algorithm takes row-major B and C in current cuSPARSE; CSR_ALG2 is the one
    // documented for row-major, kept as the fallback for versions whose default refuses it.
    rc = cusparseSpMM_bufferSize(H, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                 CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, sA, dB, beta, dC, dt, alg,
                                 &buf_bytes);
    if (rc == CUSPARSE_STATUS_NOT_SUPPORTED) {
        alg = CUSPARSE_SPMM_CSR_ALG2;
        rc = cusparseSpMM_bufferSize(H, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                     CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, sA, dB, beta, dC, dt,
                                     alg, &buf_bytes);
    }
    DSMM_TRY(cusp(ctx, rc, "cusparseSpMM_bufferSize"));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, buf_bytes, "cusparse spmm buffer", &buf_d));

    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 2), dsmmg::stream(g, 0)));
    DSMM_TRY(
        cusp(ctx,
             cusparseSpMM(H, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          alpha, sA, dB, beta, dC, dt, alg, buf_d),
             "cusparseSpMM"));
    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 3), dsmmg::stream(g, 0)));

    t0 = dsmmi_wtime();
    DSMM_TRY(download_c(ctx, g, a, C_d));
    DSMMG_CUDA(cudaStreamSynchronize(dsmmg::stream(g, 0)));
    finish(g, info, t_transfer + (dsmmi_wtime() - t0));
cleanup:
    if (sA != NULL) cusparseDestroySpMat(sA);
    if (dB != NULL) cusparseDestroyDnMat(dB);
    if (dC != NULL) cusparseDestroyDnMat(dC);
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0)); // blocks may be in use
        dsmmi_dpool_free(&g->pool, rowptr_d);
        dsmmi_dpool_free(&g->pool, col_d);
        dsmmi_dpool_free(&g->pool, val_d);
        dsmmi_dpool_free(&g->pool, B_d);
        dsmmi_dpool_free(&g->pool, C_d);
        dsmmi_dpool_free(&g->pool, buf_d);
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// The distributed SpMM's resident C tile (dsmmi_gpu_dacc)
// ---------------------------------------------------------------------------------------------

struct dsmmi_gpu_dacc {
    dsmm_idx nrows, k;
    dsmm_type type;
    void *c_d; // nrows x k, ld = k (NULL when empty)
    int products;
};

namespace {

template <typename V>
__global__ void add_into(dsmm_idx n, const V *__restrict__ p, V *__restrict__ c)
{
    for (dsmm_idx i = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (dsmm_idx)gridDim.x * blockDim.x)
        c[i] += p[i];
}

template <typename D, typename S>
__global__ void convert_vals(dsmm_idx n, const S *__restrict__ s, D *__restrict__ d)
{
    for (dsmm_idx i = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (dsmm_idx)gridDim.x * blockDim.x)
        d[i] = (D)s[i];
}

dsmm_status dacc_ok(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmmi_gpu_dacc *acc)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, g != NULL && acc != NULL, DSMM_ERR_INTERNAL,
               "gpu resident tile: no device or accumulator");
    DSMMG_CUDA(cudaSetDevice(g->device));
cleanup:
    return st;
}

// A dense matrix of the tile's shape and type (P added, or C downloaded into).
dsmm_status dacc_shape(dsmm_ctx *ctx, const dsmmi_gpu_dacc *acc, const dsmm_dense *D,
                       const char *what)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, D->nrows == acc->nrows && D->ncols == acc->k, DSMM_ERR_DIM,
               "gpu resident tile: %s is %lldx%lld, the tile %lldx%lld", what, (long long)D->nrows,
               (long long)D->ncols, (long long)acc->nrows, (long long)acc->k);
    DSMM_CHECK(ctx, D->type == acc->type && D->ld >= D->ncols, DSMM_ERR_ARG,
               "gpu resident tile: %s is not of the tile's type, or its ld is below its columns",
               what);
cleanup:
    return st;
}

// A's values on the device in the tile's type V, where a CUDA-aware MPI left them: used in
// place when they are V already, else converted into *own (a pattern has none).
template <typename V>
dsmm_status device_vals(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *A, void **val, void **own)
{
    dsmm_status st = DSMM_OK;
    *val = NULL;
    if (A->type == DSMM_PATTERN) goto cleanup;
    if (dsmmi_type_size(A->type) == sizeof(V)) {
        *val = A->val;
        goto cleanup;
    }
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)A->nnz * sizeof(V), "spmm values", own));
    if (A->type == DSMM_DOUBLE)
        convert_vals<V, double>
            <<<dsmmg::grid_stride_blocks(BLOCK, A->nnz), BLOCK, 0, dsmmg::stream(g, 0)>>>(
                A->nnz, (const double *)A->val, (V *)*own);
    else
        convert_vals<V, float>
            <<<dsmmg::grid_stride_blocks(BLOCK, A->nnz), BLOCK, 0, dsmmg::stream(g, 0)>>>(
                A->nnz, (const float *)A->val, (V *)*own);
    DSMM_TRY(dsmmg::check_launch(ctx, "spmm values converted"));
    *val = *own;
cleanup:
    return st;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_dacc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx k,
                                             dsmm_type type, dsmmi_gpu_dacc **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmmi_gpu_dacc *acc = NULL;
    size_t bytes = 0;
    *out = NULL;
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu resident tile: no device on this context (dsmm_ctx_set_gpu)");
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "gpu resident tile: the tile must hold float or double values");
    DSMM_CHECK(ctx, nrows >= 0 && k >= 0, DSMM_ERR_ARG, "gpu resident tile: %lldx%lld",
               (long long)nrows, (long long)k);
    bytes = (size_t)nrows * (size_t)k * dsmmi_type_size(type);
    DSMM_CHECK(ctx, k == 0 || bytes / (size_t)k / dsmmi_type_size(type) == (size_t)nrows,
               DSMM_ERR_NOMEM, "gpu resident tile: %lldx%lld overflows", (long long)nrows,
               (long long)k);
    acc = (dsmmi_gpu_dacc *)dsmmi_calloc(ctx, 1, sizeof *acc);
    DSMM_CHECK(ctx, acc != NULL, DSMM_ERR_NOMEM, "gpu resident tile");
    acc->nrows = nrows;
    acc->k = k;
    acc->type = type;
    DSMMG_CUDA(cudaSetDevice(g->device));
    DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, bytes, "resident C tile", &acc->c_d));
    if (bytes > 0) DSMMG_CUDA(cudaMemsetAsync(acc->c_d, 0, bytes, dsmmg::stream(g, 0)));
    *out = acc;
    acc = NULL;
cleanup:
    dsmmi_gpu_dacc_free(ctx, &acc);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_dacc_multiply(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc,
                                               const dsmm_csr *A, int a_dev, const dsmm_dense *B,
                                               int b_dev, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmmg::csr_d Ad;
    int a_up = 0;
    void *val_d = NULL, *own_val = NULL, *B_own = NULL;
    const void *B_d = NULL;
    dsmm_idx *rp_h = NULL;
    dsmm_csr Ah;
    split sp;
    double t0 = dsmmi_wtime(), t_transfer = 0, s = 0;
    memset(&Ad, 0, sizeof Ad);
    memset(&sp, 0, sizeof sp);
    memset(info, 0, sizeof *info);
    DSMM_TRY(dacc_ok(ctx, g, acc));
    DSMM_CHECK(ctx, A->nrows == acc->nrows && A->ncols == B->nrows && B->ncols == acc->k,
               DSMM_ERR_DIM, "gpu resident tile: %lldx%lld times %lldx%lld into %lldx%lld",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols,
               (long long)acc->nrows, (long long)acc->k);
    DSMM_CHECK(ctx, B->type == acc->type && B->ld >= B->ncols && (!b_dev || B->ld == B->ncols),
               DSMM_ERR_ARG,
               "gpu resident tile: B is not of the tile's type, or its ld does not fit (a device "
               "B must have ld = k)");
    DSMM_CHECK(ctx, !a_dev || ((A->colidx32 != NULL || A->nnz == 0) && A->ncols <= INT32_MAX),
               DSMM_ERR_INTERNAL, "gpu resident tile: a device A needs 32-bit columns");
    info->alg = DSMM_SPMM_GPU;
    info->threads = 1;
    info->flops = 2.0 * (double)A->nnz * (double)acc->k;
    info->bytes = dsmm_spmm_bytes(A, 0, acc->k, acc->type, 1.0);
    info->k_block = acc->k;
    info->on_gpu = 1;
    if (A->nnz == 0 || acc->k == 0) goto done; // adds nothing
    dsmmi_dpool_peak_reset(&g->pool);
    info->passes = 1;

    // A (its row pointers on the host for the variant and the split rows), then B.
    if (!a_dev) {
        DSMM_TRY(
            dsmmg::upload_csr(ctx, g, A, A->type == DSMM_PATTERN ? DSMM_PATTERN : acc->type, &Ad));
        a_up = 1;
        val_d = Ad.val_d;
        Ah = *A;
    } else {
        Ad.nrows = A->nrows;
        Ad.ncols = A->ncols;
        Ad.nnz = A->nnz;
        Ad.rowptr_d = A->rowptr;
        Ad.col_d = A->colidx32;
        if (acc->type == DSMM_DOUBLE)
            DSMM_TRY(device_vals<double>(ctx, g, A, &val_d, &own_val));
        else
            DSMM_TRY(device_vals<float>(ctx, g, A, &val_d, &own_val));
        rp_h = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)A->nrows + 1, sizeof *rp_h);
        DSMM_CHECK(ctx, rp_h != NULL, DSMM_ERR_NOMEM, "gpu resident tile: %lld row pointers",
                   (long long)A->nrows);
        DSMM_TRY(dsmmg::download_raw(ctx, g, rp_h, A->rowptr, (size_t)A->nrows + 1, sizeof *rp_h));
        Ah = *A;
        Ah.rowptr = rp_h;
    }
    if (b_dev) {
        B_d = B->val;
    } else {
        size_t elem = dsmmi_type_size(acc->type);
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)B->nrows * (size_t)acc->k * elem,
                                   "spmm B", &B_own));
        DSMM_TRY(upload_rows(ctx, g, B_own, B->val, B->nrows, acc->k, B->ld, elem));
        B_d = B_own;
    }
    DSMM_TRY(split_make(ctx, g, &Ah, acc->k, &sp));
    t_transfer = dsmmi_wtime() - t0;

    {
        // tile = 1 * A * B + 1 * tile: the row-split kernel reads the tile (beta != 0)
        dsmmi_spmm_args a;
        memset(&a, 0, sizeof a);
        a.A = A;
        a.type = acc->type;
        a.m = acc->nrows;
        a.n = A->ncols;
        a.k = acc->k;
        a.ldb = a.ldc = acc->k;
        a.alpha = a.beta = 1.0;
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 2), dsmmg::stream(g, 0)));
        if (acc->type == DSMM_DOUBLE)
            DSMM_TRY(run<double>(ctx, g, &a, &Ad, val_d, B_d, acc->c_d, sp.cap, sp.row_d,
                                 sp.begin_d, sp.sg.n));
        else
            DSMM_TRY(run<float>(ctx, g, &a, &Ad, val_d, B_d, acc->c_d, sp.cap, sp.row_d, sp.begin_d,
                                sp.sg.n));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 3), dsmmg::stream(g, 0)));
        DSMMG_CUDA(cudaStreamSynchronize(dsmmg::stream(g, 0)));
    }
    s = dsmmg::elapsed(g, 2, 3) / 1e3;
    info->seconds_device = s;
    info->seconds_transfer = t_transfer;
    info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
    info->gpu_variant = sp.variant;
    g->info.products_gpu++;
    g->info.seconds_kernels += s;
done:
    acc->products++;
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0)); // blocks may be in use
        if (a_up) dsmmg::free_csr(g, &Ad);
        dsmmi_dpool_free(&g->pool, own_val);
        dsmmi_dpool_free(&g->pool, B_own);
    }
    split_free(ctx, g, &sp);
    dsmmi_free(ctx, rp_h);
    info->seconds = dsmmi_wtime() - t0;
    info->gbps = info->seconds > 0 ? info->bytes / info->seconds / 1e9 : 0.0;
    return st;
}

extern "C" dsmm_status dsmmi_gpu_dacc_add(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, const dsmm_dense *P)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    void *P_d = NULL;
    size_t elem = 0;
    dsmm_idx n = 0;
    DSMM_TRY(dacc_ok(ctx, g, acc));
    DSMM_TRY(dacc_shape(ctx, acc, P, "a partial"));
    elem = dsmmi_type_size(acc->type);
    n = acc->nrows * acc->k;
    if (n > 0) {
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)n * elem, "spmm partial", &P_d));
        DSMM_TRY(upload_rows(ctx, g, P_d, P->val, acc->nrows, acc->k, P->ld, elem));
        if (acc->type == DSMM_DOUBLE)
            add_into<double>
                <<<dsmmg::grid_stride_blocks(BLOCK, n), BLOCK, 0, dsmmg::stream(g, 0)>>>(
                    n, (const double *)P_d, (double *)acc->c_d);
        else
            add_into<float><<<dsmmg::grid_stride_blocks(BLOCK, n), BLOCK, 0, dsmmg::stream(g, 0)>>>(
                n, (const float *)P_d, (float *)acc->c_d);
        DSMM_TRY(dsmmg::check_launch(ctx, "spmm partial added"));
    }
    acc->products++;
cleanup:
    // (the block is reused only by work queued after the addition: one stream)
    if (g != NULL) dsmmi_dpool_free(&g->pool, P_d);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_dacc_finish(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, dsmm_dense *C,
                                             int *products)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    DSMM_TRY(dacc_ok(ctx, g, acc));
    DSMM_TRY(dacc_shape(ctx, acc, C, "C"));
    DSMM_TRY(download_rows(ctx, g, C->val, acc->c_d, acc->nrows, acc->k, C->ld,
                           dsmmi_type_size(acc->type)));
    if (products) *products = acc->products;
cleanup:
    return st;
}

extern "C" void dsmmi_gpu_dacc_free(dsmm_ctx *ctx, dsmmi_gpu_dacc **pacc)
{
    dsmmi_gpu_dacc *acc = *pacc;
    if (acc == NULL) return;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    if (g != NULL) {
        cudaStreamSynchronize(dsmmg::stream(g, 0));
        dsmmi_dpool_free(&g->pool, acc->c_d);
    }
    dsmmi_free(ctx, acc);
    *pacc = NULL;
}
