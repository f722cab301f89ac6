// src/gpu/spgemm.cu: row-wise hash SpGEMM on the GPU, two-phase (symbolic count, exact
// allocation, numeric), with rows binned by their flops (nsparse / spECK): rows whose table of
// up to 8192 entries fits in shared memory run a warp per row (small tables, several rows per
// block) or a block per row; larger rows get a table of their own in device memory, processed
// in batches that fit the pool, and are sorted with CUB's segmented sort. Row pointers and
// counts are 64-bit throughout (cuSPARSE's 32-bit row pointers overflow at 2^31 entries).
// Values accumulate in double whatever C's type, as on the CPU, so results agree.
#include <math.h>
#include <string.h>

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "gpu/device.cuh"

namespace {

enum { OP_PLUS_TIMES = 0, OP_PLUS_PAIR, OP_MIN_PLUS, OP_MAX_TIMES };

template <int OP> __device__ __forceinline__ double sr_mul(double a, double b)
{
    if (OP == OP_PLUS_PAIR) return 1.0;
    if (OP == OP_MIN_PLUS) return a + b;
    return a * b;
}

template <int OP> __device__ __forceinline__ double sr_identity()
{
    if (OP == OP_MIN_PLUS) return __longlong_as_double(0x7ff0000000000000LL);              // +inf
    if (OP == OP_MAX_TIMES) return __longlong_as_double((long long)0xfff0000000000000ULL); // -inf
    return 0.0;
}

// The semiring's add into a table slot that other threads update at the same time.
template <int OP> __device__ __forceinline__ void sr_accumulate(double *p, double v)
{
    if (OP == OP_PLUS_TIMES || OP == OP_PLUS_PAIR) {
        atomicAdd(p, v);
        return;
    }
    unsigned long long *q = (unsigned long long *)p;
    unsigned long long old = *q, seen;
    do {
        double cur = __longlong_as_double((long long)old);
        // the CPU's dsmmi_sr_add: y < x ? y : x (min), y > x ? y : x (max)
        double nv = OP == OP_MIN_PLUS ? (v < cur ? v : cur) : (v > cur ? v : cur);
        if (nv == cur) return;
        seen = old;
        old = atomicCAS(q, seen, (unsigned long long)__double_as_longlong(nv));
    } while (old != seen);
}

// Multiplicative hashing: odd multiplier, so consecutive columns land on distinct slots.
__device__ __forceinline__ unsigned slot_of(int32_t c, unsigned mask)
{
    return ((unsigned)c * 2654435761u) & mask;
}

// Finds (or claims) c's slot; *fresh is set when this thread inserted it.
__device__ __forceinline__ unsigned probe(int32_t *keys, unsigned mask, int32_t c, int *fresh)
{
    unsigned h = slot_of(c, mask);
    for (;;) {
        int32_t k = keys[h];
        if (k == c) return h;
        if (k == -1) {
            k = atomicCAS(&keys[h], -1, c);
            if (k == -1) {
                *fresh = 1;
                return h;
            }
            if (k == c) return h;
        }
        h = (h + 1) & mask;
    }
}

// One product A(r, j) * B(j's row, q) added into column c's slot (claimed when new).
template <int OP>
__device__ __forceinline__ void accumulate(int32_t *keys, double *vals, unsigned mask, int32_t c,
                                           const double *__restrict__ av, dsmm_idx j,
                                           const double *__restrict__ bv, dsmm_idx q)
{
    double a = OP == OP_PLUS_PAIR ? 1.0 : av[j];
    double b = OP == OP_PLUS_PAIR ? 1.0 : bv[q];
    int fresh = 0;
    unsigned h = probe(keys, mask, c, &fresh);
    sr_accumulate<OP>(&vals[h], sr_mul<OP>(a, b));
}

template <int GROUP> __device__ __forceinline__ void group_sync()
{
    if (GROUP == 32)
        __syncwarp();
    else
        __syncthreads();
}

template <int GROUP> struct launch {
    static constexpr int block = GROUP == 32 ? 128 : GROUP; // threads per block
    static constexpr int rows = block / GROUP;              // rows per block
};

// The (A entry, B entry) pairs of row r, spread over the group: `sub` lanes (a power of two,
// about the mean length of B's rows) share one A entry, so short B rows keep lanes busy.
#define FOR_ROW_PRODUCTS(body)                                                                     \
    for (dsmm_idx j = ap[r] + lane / sub; j < ap[r + 1]; j += GROUP / sub) {                       \
        int32_t kk = ac[j];                                                                        \
        for (dsmm_idx q = bp[kk] + lane % sub; q < bp[kk + 1]; q += sub) {                         \
            int32_t c = bc[q];                                                                     \
            body                                                                                   \
        }                                                                                          \
    }

// Symbolic, shared-memory tables: nnz of each row of the bin into cnt_out[row].
template <int GROUP>
__global__ void __launch_bounds__(launch<GROUP>::block)
    sym_shared(const int32_t *__restrict__ rows, dsmm_idx nrows, int T, int sub,
               const dsmm_idx *__restrict__ ap, const int32_t *__restrict__ ac,
               const dsmm_idx *__restrict__ bp, const int32_t *__restrict__ bc,
               dsmm_idx *__restrict__ cnt_out)
{
    extern __shared__ int32_t skeys[];
    __shared__ int cnt[launch<GROUP>::rows];
    int grp = threadIdx.x / GROUP, lane = threadIdx.x % GROUP;
    dsmm_idx slot = (dsmm_idx)blockIdx.x * launch<GROUP>::rows + grp;
    if (slot >= nrows) return; // a whole group leaves together (a block when GROUP == block)
    int32_t r = rows[slot];
    int32_t *keys = skeys + (size_t)grp * T;
    unsigned mask = (unsigned)T - 1;
    for (int i = lane; i < T; i += GROUP) keys[i] = -1;
    if (lane == 0) cnt[grp] = 0;
    group_sync<GROUP>();
    int mine = 0;
    FOR_ROW_PRODUCTS({
        int fresh = 0;
        probe(keys, mask, c, &fresh);
        mine += fresh;
    })
    if (mine) atomicAdd(&cnt[grp], mine);
    group_sync<GROUP>();
    if (lane == 0) cnt_out[r] = cnt[grp];
}

// Numeric, shared-memory tables: values accumulated, then each entry's rank among the row's
// columns (a count over the table, nsparse's sort for short rows) gives its place in C.
template <int GROUP, int OP, bool SORT>
__global__ void __launch_bounds__(launch<GROUP>::block)
    num_shared(const int32_t *__restrict__ rows, dsmm_idx nrows, int T, int sub,
               const dsmm_idx *__restrict__ ap, const int32_t *__restrict__ ac,
               const double *__restrict__ av, const dsmm_idx *__restrict__ bp,
               const int32_t *__restrict__ bc, const double *__restrict__ bv,
               const dsmm_idx *__restrict__ cp, int32_t *__restrict__ cc, double *__restrict__ cv)
{
    extern __shared__ double svals[]; // rows * T doubles, then rows * T keys
    __shared__ int cnt[launch<GROUP>::rows];
    int grp = threadIdx.x / GROUP, lane = threadIdx.x % GROUP;
    dsmm_idx slot = (dsmm_idx)blockIdx.x * launch<GROUP>::rows + grp;
    if (slot >= nrows) return;
    int32_t r = rows[slot];
    double *vals = svals + (size_t)grp * T;
    int32_t *keys = (int32_t *)(svals + (size_t)launch<GROUP>::rows * T) + (size_t)grp * T;
    unsigned mask = (unsigned)T - 1;
    for (int i = lane; i < T; i += GROUP) {
        keys[i] = -1;
        vals[i] = sr_identity<OP>();
    }
    if (lane == 0) cnt[grp] = 0;
    group_sync<GROUP>();
    FOR_ROW_PRODUCTS(accumulate<OP>(keys, vals, mask, c, av, j, bv, q);)
    group_sync<GROUP>();
    dsmm_idx base = cp[r];
    for (int i = lane; i < T; i += GROUP) {
        int32_t c = keys[i];
        if (c < 0) continue;
        dsmm_idx at;
        if (SORT) {
            int rank = 0;
            // empty slots hold -1, which is the largest value as unsigned
            for (int t = 0; t < T; t++) rank += (unsigned)keys[t] < (unsigned)c;
            at = base + rank;
        } else {
            at = base + atomicAdd(&cnt[grp], 1);
        }
        cc[at] = c;
        cv[at] = vals[i];
    }
}

// Global-memory tables, a block per row: row g of the batch owns entries
// [toff[g] - toff[0], toff[g + 1] - toff[0]) of keys/vals.
constexpr int GLOBAL_BLOCK = 512;

__global__ void __launch_bounds__(GLOBAL_BLOCK)
    sym_global(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ toff, int sub,
               const dsmm_idx *__restrict__ ap, const int32_t *__restrict__ ac,
               const dsmm_idx *__restrict__ bp, const int32_t *__restrict__ bc, int32_t *tkeys,
               dsmm_idx *__restrict__ cnt_out)
{
    constexpr int GROUP = GLOBAL_BLOCK;
    __shared__ unsigned long long cnt;
    int lane = threadIdx.x;
    int32_t r = rows[blockIdx.x];
    dsmm_idx T = toff[blockIdx.x + 1] - toff[blockIdx.x];
    int32_t *keys = tkeys + (toff[blockIdx.x] - toff[0]);
    unsigned mask = (unsigned)(T - 1);
    for (dsmm_idx i = lane; i < T; i += GROUP) keys[i] = -1;
    if (lane == 0) cnt = 0;
    __syncthreads();
    unsigned long long mine = 0;
    FOR_ROW_PRODUCTS({
        int fresh = 0;
        probe(keys, mask, c, &fresh);
        mine += fresh;
    })
    if (mine) atomicAdd(&cnt, mine);
    __syncthreads();
    if (lane == 0) cnt_out[r] = (dsmm_idx)cnt;
}

// Numeric with global tables. Sorted output goes to the batch's scratch at soff[g] (CUB sorts
// it and copy_rows moves it into C); unsorted output goes straight to C's row.
template <int OP>
__global__ void __launch_bounds__(GLOBAL_BLOCK)
    num_global(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ toff, int sub,
               const dsmm_idx *__restrict__ ap, const int32_t *__restrict__ ac,
               const double *__restrict__ av, const dsmm_idx *__restrict__ bp,
               const int32_t *__restrict__ bc, const double *__restrict__ bv, int32_t *tkeys,
               double *tvals, const dsmm_idx *__restrict__ out_off, int by_row,
               int32_t *__restrict__ oc, double *__restrict__ ov)
{
    constexpr int GROUP = GLOBAL_BLOCK;
    __shared__ unsigned long long cnt;
    int lane = threadIdx.x;
    int32_t r = rows[blockIdx.x];
    dsmm_idx T = toff[blockIdx.x + 1] - toff[blockIdx.x];
    dsmm_idx t0 = toff[blockIdx.x] - toff[0];
    int32_t *keys = tkeys + t0;
    double *vals = tvals + t0;
    unsigned mask = (unsigned)(T - 1);
    for (dsmm_idx i = lane; i < T; i += GROUP) {
        keys[i] = -1;
        vals[i] = sr_identity<OP>();
    }
    if (lane == 0) cnt = 0;
    __syncthreads();
    FOR_ROW_PRODUCTS(accumulate<OP>(keys, vals, mask, c, av, j, bv, q);)
    __syncthreads();
    dsmm_idx base = by_row ? out_off[r] : out_off[blockIdx.x];
    for (dsmm_idx i = lane; i < T; i += GROUP) {
        int32_t c = keys[i];
        if (c < 0) continue;
        dsmm_idx at = base + (dsmm_idx)atomicAdd(&cnt, 1ULL);
        oc[at] = c;
        ov[at] = vals[i];
    }
}

// The batch's row counts, gathered for the scratch offsets (the last slot 0: its exclusive
// sum is the total).
__global__ void gather_counts(const int32_t *__restrict__ rows, dsmm_idx n,
                              const dsmm_idx *__restrict__ cnt, dsmm_idx *__restrict__ out)
{
    dsmm_idx g = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) out[g] = cnt[rows[g]];
    if (g == n) out[g] = 0;
}

// Sorted scratch rows into C, a block per row.
__global__ void copy_rows(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ soff,
                          const int32_t *__restrict__ sc, const double *__restrict__ sv,
                          const dsmm_idx *__restrict__ cp, int32_t *__restrict__ cc,
                          double *__restrict__ cv)
{
    int32_t r = rows[blockIdx.x];
    dsmm_idx s = soff[blockIdx.x], len = soff[blockIdx.x + 1] - s, d = cp[r];
    for (dsmm_idx i = threadIdx.x; i < len; i += blockDim.x) {
        cc[d + i] = sc[s + i];
        cv[d + i] = sv[s + i];
    }
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

struct product {
    dsmm_ctx *ctx;
    dsmmi_gpu *g;
    const dsmmi_spgemm_args *a;
    dsmmi_gpu_bins bins;
    dsmmg::csr_d A, B;
    int32_t *rows_d;  // bins.rows
    dsmm_idx *toff_d; // bins.gtab_off
    dsmm_idx *cnt_d;  // nnz per row (nrows + 1; the last 0)
    dsmm_idx *cp_d;   // C's row pointers
    int32_t *cc_d;    // C's columns
    double *cv_d;     // C's values
    int sub;          // lanes per A entry (power of two)
    int op;           // OP_*
};

template <typename K> static dsmm_status set_smem(dsmm_ctx *ctx, K kernel, size_t bytes)
{
    dsmm_status st = DSMM_OK;
    DSMMG_CUDA(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
cleanup:
    return st;
}

template <int GROUP> static dsmm_status sym_bin(product *p, int bin)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    dsmm_idx n = p->bins.count[bin];
    int T = dsmmi_gpu_bin_table(bin);
    size_t smem = (size_t)launch<GROUP>::rows * T * sizeof(int32_t);
    dsmm_idx blocks = (n + launch<GROUP>::rows - 1) / launch<GROUP>::rows;
    int sub = p->sub < GROUP ? p->sub : GROUP;
    DSMM_TRY(set_smem(ctx, sym_shared<GROUP>, smem));
    sym_shared<GROUP><<<(unsigned)blocks, launch<GROUP>::block, smem, dsmmg::stream(p->g, 0)>>>(
        p->rows_d + p->bins.start[bin], n, T, sub, p->A.rowptr_d, p->A.col_d, p->B.rowptr_d,
        p->B.col_d, p->cnt_d);
    DSMM_TRY(dsmmg::check_launch(ctx, "spgemm symbolic (shared tables)"));
cleanup:
    return st;
}

template <int GROUP, int OP, bool SORT> static dsmm_status num_bin_op(product *p, int bin)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    dsmm_idx n = p->bins.count[bin];
    int T = dsmmi_gpu_bin_table(bin);
    size_t smem = (size_t)launch<GROUP>::rows * T * (sizeof(double) + sizeof(int32_t));
    dsmm_idx blocks = (n + launch<GROUP>::rows - 1) / launch<GROUP>::rows;
    int sub = p->sub < GROUP ? p->sub : GROUP;
    DSMM_TRY(set_smem(ctx, num_shared<GROUP, OP, SORT>, smem));
    num_shared<GROUP, OP, SORT>
        <<<(unsigned)blocks, launch<GROUP>::block, smem, dsmmg::stream(p->g, 0)>>>(
            p->rows_d + p->bins.start[bin], n, T, sub, p->A.rowptr_d, p->A.col_d,
            (const double *)p->A.val_d, p->B.rowptr_d, p->B.col_d, (const double *)p->B.val_d,
            p->cp_d, p->cc_d, p->cv_d);
    DSMM_TRY(dsmmg::check_launch(ctx, "spgemm numeric (shared tables)"));
cleanup:
    return st;
}

template <int GROUP> static dsmm_status num_bin(product *p, int bin)
{
    int sorted = p->a->sorted;
    switch (p->op) {
    case OP_PLUS_PAIR:
        return sorted ? num_bin_op<GROUP, OP_PLUS_PAIR, true>(p, bin)
                      : num_bin_op<GROUP, OP_PLUS_PAIR, false>(p, bin);
    case OP_MIN_PLUS:
        return sorted ? num_bin_op<GROUP, OP_MIN_PLUS, true>(p, bin)
                      : num_bin_op<GROUP, OP_MIN_PLUS, false>(p, bin);
    case OP_MAX_TIMES:
        return sorted ? num_bin_op<GROUP, OP_MAX_TIMES, true>(p, bin)
                      : num_bin_op<GROUP, OP_MAX_TIMES, false>(p, bin);
    default:
        return sorted ? num_bin_op<GROUP, OP_PLUS_TIMES, true>(p, bin)
                      : num_bin_op<GROUP, OP_PLUS_TIMES, false>(p, bin);
    }
}

static dsmm_status shared_bins(product *p, int numeric)
{
    dsmm_status st = DSMM_OK;
    for (int bin = 1; bin <= DSMMI_GPU_SHARED_BINS && st == DSMM_OK; bin++) {
        if (p->bins.count[bin] == 0) continue;
        switch (dsmmi_gpu_bin_group(bin)) {
        case 32:
            st = numeric ? num_bin<32>(p, bin) : sym_bin<32>(p, bin);
            break;
        case 128:
            st = numeric ? num_bin<128>(p, bin) : sym_bin<128>(p, bin);
            break;
        case 256:
            st = numeric ? num_bin<256>(p, bin) : sym_bin<256>(p, bin);
            break;
        default:
            st = numeric ? num_bin<512>(p, bin) : sym_bin<512>(p, bin);
            break;
        }
    }
    return st;
}

static void launch_num_global(product *p, dsmm_idx nb, const int32_t *rows, const dsmm_idx *toff,
                              int32_t *tk, double *tv, const dsmm_idx *off, int by_row, int32_t *oc,
                              double *ov)
{
    cudaStream_t s = dsmmg::stream(p->g, 0);
    const double *av = (const double *)p->A.val_d, *bv = (const double *)p->B.val_d;
#define NUM_GLOBAL(OP)                                                                             \
    num_global<OP><<<(unsigned)nb, GLOBAL_BLOCK, 0, s>>>(                                          \
        rows, toff, p->sub, p->A.rowptr_d, p->A.col_d, av, p->B.rowptr_d, p->B.col_d, bv, tk, tv,  \
        off, by_row, oc, ov)
    switch (p->op) {
    case OP_PLUS_PAIR:
        NUM_GLOBAL(OP_PLUS_PAIR);
        break;
    case OP_MIN_PLUS:
        NUM_GLOBAL(OP_MIN_PLUS);
        break;
    case OP_MAX_TIMES:
        NUM_GLOBAL(OP_MAX_TIMES);
        break;
    default:
        NUM_GLOBAL(OP_PLUS_TIMES);
        break;
    }
#undef NUM_GLOBAL
}

// The rows with tables in device memory, in batches that fit the pool: symbolic (numeric == 0)
// or numeric with, for sorted output, scratch rows sorted by CUB and copied into C.
static dsmm_status global_bin(product *p, int numeric)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = p->g;
    cudaStream_t s = dsmmg::stream(g, 0);
    dsmm_idx n = p->bins.count[DSMMI_GPU_GLOBAL_BIN], nb = 0;
    dsmm_idx *bounds = NULL, *soff_d = NULL;
    int32_t *tk = NULL, *sc = NULL, *sc2 = NULL;
    double *tv = NULL, *sv = NULL, *sv2 = NULL;
    void *tmp = NULL;
    if (n == 0) return DSMM_OK;
    const dsmm_idx *toff = p->bins.gtab_off;
    const int32_t *grows = p->rows_d + p->bins.start[DSMMI_GPU_GLOBAL_BIN];
    // table entries per batch: keys (4) + values (8) + sorted scratch twice (half the table
    // at most, 12 bytes each) = 24 bytes an entry, in a third of the largest free block
    size_t per = numeric ? 24 : 4;
    dsmm_idx cap = (dsmm_idx)(dsmmi_dpool_largest_free(&g->pool) / 3 / per);
    bounds = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)n + 1, sizeof *bounds);
    DSMM_CHECK(ctx, bounds != NULL, DSMM_ERR_NOMEM, "gpu spgemm: batches");
    dsmmi_gpu_global_batches(toff, n, cap, bounds, &nb);
    for (dsmm_idx t = 0; t < nb; t++) {
        dsmm_idx lo = bounds[t], cnt = bounds[t + 1] - lo, ent = toff[bounds[t + 1]] - toff[lo];
        const int32_t *rows = grows + lo;
        const dsmm_idx *toff_d = p->toff_d + lo;
        int sub = p->sub;
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)ent * sizeof(int32_t),
                                   "hash tables of the longest rows", (void **)&tk));
        if (!numeric) {
            sym_global<<<(unsigned)cnt, GLOBAL_BLOCK, 0, s>>>(rows, toff_d, sub, p->A.rowptr_d,
                                                              p->A.col_d, p->B.rowptr_d, p->B.col_d,
                                                              tk, p->cnt_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm symbolic (device-memory tables)"));
            tk = (int32_t *)dsmmi_dpool_free(&g->pool, tk);
            continue;
        }
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)ent * sizeof(double),
                                   "hash values of the longest rows", (void **)&tv));
        if (!p->a->sorted) {
            launch_num_global(p, cnt, rows, toff_d, tk, tv, p->cp_d, 1, p->cc_d, p->cv_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm numeric (device-memory tables)"));
        } else {
            // Each row's nnz is at most half its table, so ent / 2 bounds the batch's output.
            dsmm_idx outn = ent / 2;
            size_t tmp_bytes = 0;
            DSMM_CHECK(ctx, outn <= INT32_MAX, DSMM_ERR_INTERNAL, "gpu spgemm: batch too large");
            DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)cnt + 1) * sizeof(dsmm_idx),
                                       "row offsets of the longest rows", (void **)&soff_d));
            DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)outn * 4, "sort keys", (void **)&sc));
            DSMM_TRY(
                dsmmi_dpool_alloc(ctx, &g->pool, (size_t)outn * 8, "sort values", (void **)&sv));
            DSMM_TRY(
                dsmmi_dpool_alloc(ctx, &g->pool, (size_t)outn * 4, "sorted keys", (void **)&sc2));
            DSMM_TRY(
                dsmmi_dpool_alloc(ctx, &g->pool, (size_t)outn * 8, "sorted values", (void **)&sv2));
            gather_counts<<<(unsigned)((cnt + 256) / 256), 256, 0, s>>>(rows, cnt, p->cnt_d,
                                                                        soff_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm gather counts"));
            DSMMG_CUDA(
                cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, soff_d, soff_d, (int)(cnt + 1), s));
            size_t sort_bytes = 0;
            DSMMG_CUDA(cub::DeviceSegmentedSort::SortPairs(
                NULL, sort_bytes, sc, sc2, sv, sv2, (int)outn, (int)cnt, soff_d, soff_d + 1, s));
            if (sort_bytes > tmp_bytes) tmp_bytes = sort_bytes;
            DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, tmp_bytes, "CUB scratch", &tmp));
            DSMMG_CUDA(
                cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, soff_d, soff_d, (int)(cnt + 1), s));
            launch_num_global(p, cnt, rows, toff_d, tk, tv, soff_d, 0, sc, sv);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm numeric (device-memory tables)"));
            // num_items may exceed what the rows hold; entries past soff[cnt] are not sorted
            DSMMG_CUDA(cub::DeviceSegmentedSort::SortPairs(
                tmp, sort_bytes, sc, sc2, sv, sv2, (int)outn, (int)cnt, soff_d, soff_d + 1, s));
            copy_rows<<<(unsigned)cnt, 256, 0, s>>>(rows, soff_d, sc2, sv2, p->cp_d, p->cc_d,
                                                    p->cv_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm copy sorted rows"));
            // the next batch reuses the pool: wait until this one no longer needs its blocks
            DSMMG_CUDA(cudaStreamSynchronize(s));
            tmp = dsmmi_dpool_free(&g->pool, tmp);
            sv2 = (double *)dsmmi_dpool_free(&g->pool, sv2);
            sc2 = (int32_t *)dsmmi_dpool_free(&g->pool, sc2);
            sv = (double *)dsmmi_dpool_free(&g->pool, sv);
            sc = (int32_t *)dsmmi_dpool_free(&g->pool, sc);
            soff_d = (dsmm_idx *)dsmmi_dpool_free(&g->pool, soff_d);
        }
        tv = (double *)dsmmi_dpool_free(&g->pool, tv);
        tk = (int32_t *)dsmmi_dpool_free(&g->pool, tk);
    }
cleanup:
    // Blocks freed here are only reused by work queued after this point on the same stream.
    dsmmi_dpool_free(&g->pool, tmp);
    dsmmi_dpool_free(&g->pool, sv2);
    dsmmi_dpool_free(&g->pool, sc2);
    dsmmi_dpool_free(&g->pool, sv);
    dsmmi_dpool_free(&g->pool, sc);
    dsmmi_dpool_free(&g->pool, soff_d);
    dsmmi_dpool_free(&g->pool, tv);
    dsmmi_dpool_free(&g->pool, tk);
    dsmmi_free(ctx, bounds);
    return st;
}

static int op_of(dsmm_semiring sr)
{
    switch (sr) {
    case DSMM_PLUS_PAIR:
        return OP_PLUS_PAIR;
    case DSMM_MIN_PLUS:
        return OP_MIN_PLUS;
    case DSMM_MAX_TIMES:
        return OP_MAX_TIMES;
    default:
        return OP_PLUS_TIMES;
    }
}

// Lanes per A entry: the power of two nearest above B's mean row length, at most a warp.
static int sub_lanes(const dsmm_csr *B)
{
    double mean = B->nrows ? (double)B->nnz / (double)B->nrows : 1.0;
    int s = 1;
    while (s < 32 && s < mean) s <<= 1;
    return s;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_spgemm(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                        dsmmi_spgemm_phase phase, dsmm_csr **C,
                                        dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmm_idx *flops = NULL, total = 0, nnz = 0;
    size_t tmp_bytes = 0;
    void *tmp = NULL;
    product p;
    memset(&p, 0, sizeof p);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu spgemm: no device on this context (dsmm_ctx_set_gpu)");
    // What the device kernel does not do (masks, the symbolic/numeric pair) runs on the CPU,
    // and so do AUTO products too small to pay for the copies.
    if (phase != DSMMI_SPGEMM_FULL || a->M != NULL) {
        g->info.products_cpu++;
        return dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
    }
    flops = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)a->A->nrows + 1, sizeof *flops);
    DSMM_CHECK(ctx, flops != NULL, DSMM_ERR_NOMEM, "gpu spgemm: row flops");
    dsmmi_spgemm_row_flops(a->A, a->B, flops, &total);
    if (a->alg == DSMM_SPGEMM_AUTO && !dsmmi_gpu_wants(ctx, (double)total)) {
        g->info.products_cpu++;
        flops = (dsmm_idx *)dsmmi_free(ctx, flops);
        return dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
    }
    {
        double t0 = dsmmi_wtime();
        cudaStream_t s = dsmmg::stream(g, 0);
        dsmm_idx m = a->A->nrows;
        dsmm_type vt = a->sr == DSMM_PLUS_PAIR ? DSMM_PATTERN : DSMM_DOUBLE;
        DSMMG_CUDA(cudaSetDevice(g->device));
        dsmmi_dpool_peak_reset(&g->pool);
        p.ctx = ctx;
        p.g = g;
        p.a = a;
        p.op = op_of(a->sr);
        p.sub = sub_lanes(a->B);
        DSMM_TRY(dsmmi_gpu_bins_make(ctx, flops, m, a->B->ncols, &p.bins));
        flops = (dsmm_idx *)dsmmi_free(ctx, flops);
        DSMM_TRY(dsmmg::upload_csr(ctx, g, a->A, vt, &p.A));
        DSMM_TRY(dsmmg::upload_csr(ctx, g, a->B, vt, &p.B));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)m + 1) * sizeof(int32_t), "row bins",
                                   (void **)&p.rows_d));
        dsmm_idx ng = p.bins.count[DSMMI_GPU_GLOBAL_BIN];
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)ng + 1) * sizeof(dsmm_idx),
                                   "table offsets", (void **)&p.toff_d));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)m + 1) * sizeof(dsmm_idx), "row counts",
                                   (void **)&p.cnt_d));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, ((size_t)m + 1) * sizeof(dsmm_idx),
                                   "row pointers of C", (void **)&p.cp_d));
        DSMM_TRY(dsmmg::upload_raw(ctx, g, p.rows_d, p.bins.rows, (size_t)m, sizeof(int32_t)));
        DSMM_TRY(
            dsmmg::upload_raw(ctx, g, p.toff_d, p.bins.gtab_off, (size_t)ng + 1, sizeof(dsmm_idx)));
        double t_up = dsmmi_wtime() - t0;
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 2), s));
        // symbolic: rows of bin 0 (no products) keep the zero count
        DSMMG_CUDA(cudaMemsetAsync(p.cnt_d, 0, ((size_t)m + 1) * sizeof(dsmm_idx), s));
        DSMM_TRY(shared_bins(&p, 0));
        DSMM_TRY(global_bin(&p, 0));
        DSMMG_CUDA(
            cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, p.cnt_d, p.cp_d, (int64_t)m + 1, s));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, tmp_bytes, "CUB scan scratch", &tmp));
        DSMMG_CUDA(
            cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, p.cnt_d, p.cp_d, (int64_t)m + 1, s));
        DSMMG_CUDA(
            cudaMemcpyAsync(g->pinned[0], p.cp_d + m, sizeof(dsmm_idx), cudaMemcpyDeviceToHost, s));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 3), s));
        DSMMG_CUDA(cudaStreamSynchronize(s));
        tmp = dsmmi_dpool_free(&g->pool, tmp);
        memcpy(&nnz, g->pinned[0], sizeof nnz);
        // numeric: C's arrays exactly as large as the symbolic phase counted
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)nnz * sizeof(int32_t), "columns of C",
                                   (void **)&p.cc_d));
        DSMM_TRY(dsmmi_dpool_alloc(ctx, &g->pool, (size_t)nnz * sizeof(double), "values of C",
                                   (void **)&p.cv_d));
        DSMM_TRY(shared_bins(&p, 1));
        DSMM_TRY(global_bin(&p, 1));
        DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 4), s));
        DSMMG_CUDA(cudaStreamSynchronize(s));
        double t1 = dsmmi_wtime();
        dsmmg::csr_d Cd = {m, a->B->ncols, nnz, p.cp_d, p.cc_d, p.cv_d, 8};
        DSMM_TRY(dsmmg::download_csr(ctx, g, &Cd, a->type, a->col_bits, a->sorted, C));
        info->seconds_transfer = t_up + (dsmmi_wtime() - t1);
        info->seconds_symbolic = dsmmg::elapsed(g, 2, 3) / 1e3;
        info->seconds_numeric = dsmmg::elapsed(g, 3, 4) / 1e3;
        info->seconds_device = info->seconds_symbolic + info->seconds_numeric;
        info->flops = (double)total;
        info->nnz = nnz;
        info->rows_hash = m - p.bins.count[0];
        info->sorted = a->sorted;
        info->threads = 1;
        info->on_gpu = 1;
        info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
        g->info.products_gpu++;
        g->info.seconds_kernels += info->seconds_device;
    }
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0)); // blocks may be in use
        dsmmg::free_csr(g, &p.A);
        dsmmg::free_csr(g, &p.B);
        dsmmi_dpool_free(&g->pool, p.rows_d);
        dsmmi_dpool_free(&g->pool, p.toff_d);
        dsmmi_dpool_free(&g->pool, p.cnt_d);
        dsmmi_dpool_free(&g->pool, p.cp_d);
        dsmmi_dpool_free(&g->pool, p.cc_d);
        dsmmi_dpool_free(&g->pool, p.cv_d);
        dsmmi_dpool_free(&g->pool, tmp);
    }
    dsmmi_gpu_bins_free(ctx, &p.bins);
    dsmmi_free(ctx, flops);
    return st;
}
