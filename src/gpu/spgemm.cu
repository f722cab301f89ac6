// src/gpu/spgemm.cu: row-wise hash SpGEMM on the GPU, two-phase (symbolic count, exact
// allocation, numeric), with rows binned by their flops (nsparse / spECK): rows whose table of
// up to 8192 entries fits in shared memory run a warp per row (small tables, several rows per
// block) or a block per row; larger rows get a table of their own in device memory, processed
// in batches that fit the pool: a hash table sorted with CUB's segmented sort, or, when the
// row's bound reaches half of B's columns, a dense table read out in column order. Row
// pointers and counts are 64-bit throughout (cuSPARSE's 32-bit row pointers overflow at 2^31
// entries).
// Values accumulate in double whatever C's type, as on the CPU, so results agree.
#include <math.h>
#include <string.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "gpu/spgemm.cuh"

namespace {

enum { OP_PLUS_TIMES = 0, OP_PLUS_PAIR, OP_MIN_PLUS, OP_MAX_TIMES };

template <int OP> __device__ __forceinline__ double sr_mul(double a, double b)
{
    if (OP == OP_PLUS_PAIR) return 1.0;
    if (OP == OP_MIN_PLUS) return a + b;
    return a * b;
}

// The semiring's additive identity: on the device for shared tables, on the host for the
// device-memory tables that table_init fills.
__host__ __device__ __forceinline__ double sr_identity_of(int op)
{
    return op == OP_MIN_PLUS ? INFINITY : op == OP_MAX_TIMES ? -INFINITY : 0.0;
}

template <int OP> __device__ __forceinline__ double sr_identity()
{
    return sr_identity_of(OP);
}

// The semiring's add into a table slot that other threads update at the same time.
template <int OP> __device__ __forceinline__ void sr_accumulate(double *p, double v)
{
    if (OP == OP_PLUS_TIMES || OP == OP_PLUS_PAIR) {
        atomicAdd(p, v);
        return;
    }
    unsigned long long *q = (unsigned long long *)p;
    // the first read is atomic too (a compare-and-swap that writes back what it finds, so it
    // changes nothing): a plain load of a slot other threads swap is a hazard to racecheck
    unsigned long long old = atomicCAS(q, 0ULL, 0ULL), seen;
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

// Finds (or claims) c's slot; *fresh is set when this thread inserted it. In shared memory
// (SHARED) every read of a slot is the compare-and-swap itself: a plain load first (to skip the
// atomic when the slot already holds c) races with the other threads' swaps, which racecheck
// reports as hazards, though the swap re-checks what the load saw. Device-memory tables keep
// the load first, which spares an atomic in device memory for every repeated column.
template <bool SHARED>
__device__ __forceinline__ unsigned probe(int32_t *keys, unsigned mask, int32_t c, int *fresh)
{
    unsigned h = slot_of(c, mask);
    for (;;) {
        int32_t k = SHARED ? -1 : keys[h];
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

// A dense table's slot of column c is c; *fresh is set when this thread claimed it.
__device__ __forceinline__ unsigned claim_dense(int32_t *keys, int32_t c, int *fresh)
{
    if (keys[c] != c && atomicCAS(&keys[c], -1, c) == -1) *fresh = 1;
    return (unsigned)c;
}

// One product a * b of the row added into column c's slot (claimed when new).
template <int OP>
__device__ __forceinline__ void accumulate(int32_t *keys, double *vals, unsigned mask, int32_t c,
                                           double a, double b)
{
    int fresh = 0;
    unsigned h = probe<true>(keys, mask, c, &fresh);
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

// An exclusive sum over the group of one int a lane, with the group's total and maximum. A
// warp (GROUP 32) uses shuffles alone; a block group adds its warps' sums and maxima through
// ws (2 * GROUP / 32 ints). Every lane of the group calls it.
template <int GROUP>
__device__ __forceinline__ int group_scan(int v, int lane, int *ws, int *total, int *vmax)
{
    int x = v, m = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, x, o);
        if ((lane & 31) >= o) x += y;
        m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
    }
    if (GROUP == 32) {
        *total = __shfl_sync(0xffffffffu, x, 31);
        *vmax = m;
        return x - v;
    }
    const int w = lane >> 5, nw = GROUP / 32;
    if ((lane & 31) == 31) ws[w] = x;
    if ((lane & 31) == 0) ws[nw + w] = m;
    __syncthreads();
    int before = 0, tot = 0, mx = 0;
    for (int i = 0; i < nw; i++) {
        int sum = ws[i];
        before += i < w ? sum : 0;
        tot += sum;
        mx = max(mx, ws[nw + i]);
    }
    __syncthreads(); // ws is reused by the next call
    *total = tot;
    *vmax = mx;
    return before + x - v;
}

// The products (A entry, B entry) of row r, spread over the group, body(q, a) called for each
// with q B's entry and a the A entry's value (1 when av is NULL). The row's A entries go in
// chunks of GROUP: each lane takes one entry's B row start and length, and a group scan gives
// the chunk's product offsets (pre), kept in the group's shared arrays with the starts (bq) and
// values (as). A chunk's products then go to the lanes in one of two ways:
//  - by entry: `sub` lanes (a power of two near the mean B row length) share one A entry. No
//    search, but a lane's work is its entries' B rows: one long B row (a hub) keeps its few
//    lanes busy while the rest of the group waits.
//  - spread: product p of the chunk goes to lane p mod GROUP, which finds its entry by a
//    binary search of pre (log2 GROUP shared reads), so every lane does the same share.
// mode 0 spreads (the default: on the H100, 9.6% faster than by entry in geomean over the 15
// matrices of docs/bench.md, 2x on as-caida, at most 10% slower on the FEM matrices), 1 takes
// by entry, 2 decides per chunk: spread when the longest B row's turns on `sub` lanes are more
// than twice the spread turns, ceil(products / GROUP) (1.1% slower than 0). A chunk of
// shared-bin row never reaches 2^31 products: its row has at most 2^(4 + bins) flops, or B at
// most that many columns, so GROUP B rows of at most 4096 entries.
template <int GROUP, typename F>
__device__ __forceinline__ void
row_products(int mode, int32_t r, int lane, int sub, const dsmm_idx *__restrict__ ap,
             const int32_t *__restrict__ ac, const double *__restrict__ av,
             const dsmm_idx *__restrict__ bp, int *pre, dsmm_idx *bq, double *as, int *ws, F body)
{
    const dsmm_idx a1 = ap[r + 1];
    for (dsmm_idx j0 = ap[r]; j0 < a1; j0 += GROUP) {
        const dsmm_idx j = j0 + lane;
        int len = 0;
        dsmm_idx q0 = 0;
        if (j < a1) {
            const int32_t k = ac[j];
            q0 = bp[k];
            len = (int)(bp[k + 1] - q0);
        }
        int total = 0, longest = 0;
        const int ex = group_scan<GROUP>(len, lane, ws, &total, &longest);
        pre[lane] = ex;
        bq[lane] = q0;
        if (av) as[lane] = j < a1 ? av[j] : 1.0;
        group_sync<GROUP>();
        const int n = a1 - j0 < GROUP ? (int)(a1 - j0) : GROUP;
        const bool spread = mode == 0 || (mode == 2 && (longest + sub - 1) / sub >
                                                           2 * ((total + GROUP - 1) / GROUP));
        if (spread) {
            for (int p = lane; p < total; p += GROUP) {
                // the entry holding product p: the last e with pre[e] <= p (entries with no
                // products share their successor's offset and are passed over)
                const int e = dsmmg::last_at_or_below(pre, n, p);
                body(bq[e] + (p - pre[e]), av ? as[e] : 1.0);
            }
        } else {
            for (int e = lane / sub; e < n; e += GROUP / sub) {
                const int l = (e + 1 < n ? pre[e + 1] : total) - pre[e];
                const dsmm_idx qb = bq[e];
                const double ae = av ? as[e] : 1.0;
                for (int i = lane % sub; i < l; i += sub) body(qb + i, ae);
            }
        }
        group_sync<GROUP>(); // pre, bq and as are rewritten by the next chunk
    }
}

// The group's slice of the shared arrays row_products works in.
#define ROW_PRODUCTS_SHARED(NUMERIC)                                                               \
    __shared__ int s_pre[launch<GROUP>::block];                                                    \
    __shared__ dsmm_idx s_bq[launch<GROUP>::block];                                                \
    __shared__ double s_as[NUMERIC ? launch<GROUP>::block : 1];                                    \
    __shared__ int s_ws[2 * (GROUP / 32)];                                                         \
    int *pre = s_pre + (size_t)grp * GROUP;                                                        \
    dsmm_idx *bq = s_bq + (size_t)grp * GROUP;                                                     \
    double *as = NUMERIC ? s_as + (size_t)grp * GROUP : NULL

// Symbolic, shared-memory tables: nnz of each row of the bin into cnt_out[row].
template <int GROUP>
__global__ void __launch_bounds__(launch<GROUP>::block)
    sym_shared(const int32_t *__restrict__ rows, dsmm_idx nrows, int T, int sub, int mode,
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
    ROW_PRODUCTS_SHARED(false);
    int32_t *keys = skeys + (size_t)grp * T;
    unsigned mask = (unsigned)T - 1;
    for (int i = lane; i < T; i += GROUP) keys[i] = -1;
    if (lane == 0) cnt[grp] = 0;
    group_sync<GROUP>();
    int mine = 0;
    row_products<GROUP>(mode, r, lane, sub, ap, ac, NULL, bp, pre, bq, as, s_ws,
                        [&](dsmm_idx q, double) {
                            int fresh = 0;
                            probe<true>(keys, mask, bc[q], &fresh);
                            mine += fresh;
                        });
    if (mine) atomicAdd(&cnt[grp], mine);
    group_sync<GROUP>();
    if (lane == 0) cnt_out[r] = cnt[grp];
}

// Sorted output of a row whose table is in shared memory: the table's entries are compacted to
// its front (each lane first takes its slots into registers: T / GROUP <= 16 of them), padded
// to a power of two with a key above every column, and bitonic-sorted in place by the group,
// O(n log^2 n) compare-exchanges for the row's n entries (a rank count over the whole table
// was O(n T)); then written to C with consecutive lanes on consecutive entries.
constexpr int MAX_SLOTS_PER_LANE = 16;

template <int GROUP>
__device__ __forceinline__ void sort_row(int32_t *keys, double *vals, int T, int lane, int *cnt,
                                         dsmm_idx base, int32_t *__restrict__ cc,
                                         double *__restrict__ cv)
{
    int32_t kk[MAX_SLOTS_PER_LANE];
    double vv[MAX_SLOTS_PER_LANE];
#pragma unroll
    for (int u = 0; u < MAX_SLOTS_PER_LANE; u++) {
        int i = lane + u * GROUP;
        kk[u] = i < T ? keys[i] : -1;
        vv[u] = i < T ? vals[i] : 0.0;
    }
    group_sync<GROUP>();
#pragma unroll
    for (int u = 0; u < MAX_SLOTS_PER_LANE; u++) {
        if (kk[u] < 0) continue;
        int at = atomicAdd(cnt, 1);
        keys[at] = kk[u];
        vals[at] = vv[u];
    }
    group_sync<GROUP>();
    int n = *cnt, N = 1;
    while (N < n) N <<= 1;
    for (int i = n + lane; i < N; i += GROUP) keys[i] = INT32_MAX; // columns are below 2^31 - 1
    group_sync<GROUP>();
    for (int size = 2; size <= N; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int t = lane; t < N / 2; t += GROUP) {
                int i = 2 * t - (t & (stride - 1)), j = i + stride;
                int32_t ki = keys[i], kj = keys[j];
                if ((ki > kj) == ((i & size) == 0)) {
                    keys[i] = kj;
                    keys[j] = ki;
                    double tv = vals[i];
                    vals[i] = vals[j];
                    vals[j] = tv;
                }
            }
            group_sync<GROUP>();
        }
    }
    for (int i = lane; i < n; i += GROUP) {
        cc[base + i] = keys[i];
        cv[base + i] = vals[i];
    }
}

// Numeric, shared-memory tables: values accumulated, then the row's entries go to C, sorted
// (sort_row) or in table order.
template <int GROUP, int OP, bool SORT>
__global__ void __launch_bounds__(launch<GROUP>::block)
    num_shared(const int32_t *__restrict__ rows, dsmm_idx nrows, int T, int sub, int mode,
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
    ROW_PRODUCTS_SHARED(true);
    double *vals = svals + (size_t)grp * T;
    int32_t *keys = (int32_t *)(svals + (size_t)launch<GROUP>::rows * T) + (size_t)grp * T;
    unsigned mask = (unsigned)T - 1;
    for (int i = lane; i < T; i += GROUP) {
        keys[i] = -1;
        vals[i] = sr_identity<OP>();
    }
    if (lane == 0) cnt[grp] = 0;
    group_sync<GROUP>();
    row_products<GROUP>(mode, r, lane, sub, ap, ac, OP == OP_PLUS_PAIR ? NULL : av, bp, pre, bq, as,
                        s_ws, [&](dsmm_idx q, double a) {
                            accumulate<OP>(keys, vals, mask, bc[q], a,
                                           OP == OP_PLUS_PAIR ? 1.0 : bv[q]);
                        });
    group_sync<GROUP>();
    dsmm_idx base = cp[r];
    if (SORT) {
        sort_row<GROUP>(keys, vals, T, lane, &cnt[grp], base, cc, cv);
    } else {
        for (int i = lane; i < T; i += GROUP) {
            int32_t c = keys[i];
            if (c < 0) continue;
            dsmm_idx at = base + atomicAdd(&cnt[grp], 1);
            cc[at] = c;
            cv[at] = vals[i];
        }
    }
}

// A global row's table of T entries is dense (slot c is column c) exactly when T is ncols(B):
// dsmmi_gpu_global_table's rule, whose hash tables are always smaller.
__host__ __device__ __forceinline__ bool table_dense(dsmm_idx T, dsmm_idx ncols)
{
    return T == ncols;
}

// Global-memory tables: row g of the batch owns entries [toff[g] - toff[0], toff[g + 1] -
// toff[0]) of keys/vals, and thread blocks [boff[g], boff[g + 1]) (absolute numbers; the batch's
// first is boff[0]). A table of ncols entries is dense (dsmmi_gpu_global_table): column c's
// slot is c, no hashing. Block b of a row takes its products (A entry, B entry) numbered
// [b F, (b + 1) F) in row order, F = DSMMI_GPU_GLOBAL_BLOCK_FLOPS, so a hub row's work spreads
// over many multiprocessors evenly whatever the lengths of the B rows it meets. The tables are
// initialised by table_init first, and (numeric) read out by ext_global after.
constexpr int GLOBAL_BLOCK = 512;

__global__ void table_init(dsmm_idx n, int32_t *__restrict__ keys, double *__restrict__ vals,
                           double ident)
{
    const dsmm_idx stride = (dsmm_idx)gridDim.x * blockDim.x;
    for (dsmm_idx i = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        keys[i] = -1;
        if (vals) vals[i] = ident;
    }
}

template <bool NUMERIC, int OP>
__global__ void __launch_bounds__(GLOBAL_BLOCK)
    ins_global(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ toff,
               const dsmm_idx *__restrict__ boff, dsmm_idx nrows, const dsmm_idx *__restrict__ ap,
               const int32_t *__restrict__ ac, const double *__restrict__ av,
               const dsmm_idx *__restrict__ bp, const int32_t *__restrict__ bc,
               const double *__restrict__ bv, dsmm_idx ncols, int32_t *tkeys, double *tvals,
               dsmm_idx *__restrict__ cnt_out)
{
    typedef cub::BlockScan<dsmm_idx, GLOBAL_BLOCK> scan_t;
    typedef cub::BlockReduce<unsigned long long, GLOBAL_BLOCK> reduce_t;
    __shared__ union {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
    } tmp;
    __shared__ dsmm_idx pre[GLOBAL_BLOCK]; // products before each A entry of the chunk
    __shared__ int32_t acol[GLOBAL_BLOCK];
    __shared__ double aval[GLOBAL_BLOCK];
    const dsmm_idx t = boff[0] + blockIdx.x;
    const dsmm_idx g = dsmmg::last_at_or_below(boff, nrows, t), b = t - boff[g]; // the row
    const int32_t r = rows[g];
    const dsmm_idx T = toff[g + 1] - toff[g], t0 = toff[g] - toff[0];
    int32_t *keys = tkeys + t0;
    double *vals = NUMERIC ? tvals + t0 : NULL;
    const bool dense = table_dense(T, ncols);
    const unsigned mask = (unsigned)(T - 1); // hash tables only
    const dsmm_idx p0 = b * DSMMI_GPU_GLOBAL_BLOCK_FLOPS, p1 = p0 + DSMMI_GPU_GLOBAL_BLOCK_FLOPS;
    const dsmm_idx a1 = ap[r + 1];
    dsmm_idx run = 0; // products of the row before this chunk of A entries (block-uniform)
    unsigned long long mine = 0;
    for (dsmm_idx j0 = ap[r]; j0 < a1 && run < p1; j0 += GLOBAL_BLOCK) {
        const dsmm_idx j = j0 + threadIdx.x;
        dsmm_idx len = 0, excl = 0, total = 0;
        int32_t c = 0;
        if (j < a1) {
            c = ac[j];
            len = bp[c + 1] - bp[c];
        }
        scan_t(tmp.scan).ExclusiveSum(len, excl, total);
        pre[threadIdx.x] = run + excl;
        acol[threadIdx.x] = c;
        if (NUMERIC) aval[threadIdx.x] = (OP == OP_PLUS_PAIR || j >= a1) ? 1.0 : av[j];
        __syncthreads();
        const int n = a1 - j0 < GLOBAL_BLOCK ? (int)(a1 - j0) : GLOBAL_BLOCK;
        const dsmm_idx from = p0 > run ? p0 : run, to = p1 < run + total ? p1 : run + total;
        for (dsmm_idx p = from + threadIdx.x; p < to; p += GLOBAL_BLOCK) {
            // the A entry holding product p: the last e with pre[e] <= p (entries with no
            // products share their successor's start and are passed over)
            int e = 0, z = n;
            while (z - e > 1) {
                int m = (e + z) / 2;
                if (pre[m] <= p)
                    e = m;
                else
                    z = m;
            }
            const dsmm_idx q = bp[acol[e]] + (p - pre[e]);
            const int32_t col = bc[q];
            int fresh = 0;
            const unsigned h =
                dense ? claim_dense(keys, col, &fresh) : probe<false>(keys, mask, col, &fresh);
            if (NUMERIC) {
                const double bb = OP == OP_PLUS_PAIR ? 1.0 : bv[q];
                sr_accumulate<OP>(&vals[h], sr_mul<OP>(aval[e], bb));
            } else {
                mine += fresh;
            }
        }
        run += total;
        __syncthreads(); // pre, acol, aval and the scan's storage are reused
    }
    if (!NUMERIC) {
        unsigned long long sum = reduce_t(tmp.reduce).Sum(mine);
        if (threadIdx.x == 0 && sum) atomicAdd((unsigned long long *)&cnt_out[r], sum);
    }
}

// Numeric, after ins_global: a block per row reads its table out. A hash table goes to C's row
// (by_row, unsorted output) or to the batch's scratch at out_off[g] for CUB's sort, in slot
// order; a dense one goes to C's row (cp) in column order, sorted without a sort.
__global__ void __launch_bounds__(GLOBAL_BLOCK)
    ext_global(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ toff, dsmm_idx ncols,
               const int32_t *__restrict__ tkeys, const double *__restrict__ tvals,
               const dsmm_idx *__restrict__ out_off, int by_row, int32_t *__restrict__ oc,
               double *__restrict__ ov, const dsmm_idx *__restrict__ cp, int32_t *__restrict__ cc,
               double *__restrict__ cv)
{
    typedef cub::BlockScan<int, GLOBAL_BLOCK> scan_t;
    __shared__ typename scan_t::TempStorage scan;
    __shared__ unsigned long long cnt;
    const int32_t r = rows[blockIdx.x];
    const dsmm_idx T = toff[blockIdx.x + 1] - toff[blockIdx.x], t0 = toff[blockIdx.x] - toff[0];
    if (table_dense(T, ncols)) { // an ordered compaction, GLOBAL_BLOCK slots a step
        dsmm_idx base = cp[r];
        for (dsmm_idx i0 = 0; i0 < T; i0 += GLOBAL_BLOCK) {
            const dsmm_idx i = i0 + threadIdx.x;
            const int32_t c = i < T ? tkeys[t0 + i] : -1;
            int at = 0, total = 0;
            scan_t(scan).ExclusiveSum(c >= 0 ? 1 : 0, at, total);
            if (c >= 0) {
                cc[base + at] = c;
                cv[base + at] = tvals[t0 + i];
            }
            base += total;
            __syncthreads(); // the scan's storage is reused
        }
        return;
    }
    if (threadIdx.x == 0) cnt = 0;
    __syncthreads();
    const dsmm_idx base = by_row ? out_off[r] : out_off[blockIdx.x];
    for (dsmm_idx i = threadIdx.x; i < T; i += GLOBAL_BLOCK) {
        int32_t c = tkeys[t0 + i];
        if (c < 0) continue;
        dsmm_idx at = base + (dsmm_idx)atomicAdd(&cnt, 1ULL);
        oc[at] = c;
        ov[at] = tvals[t0 + i];
    }
}

// The batch's row counts, gathered for the scratch offsets (the last slot 0: its exclusive
// sum is the total). Rows with dense tables take no scratch: ext_global writes them to C.
__global__ void gather_counts(const int32_t *__restrict__ rows, const dsmm_idx *__restrict__ toff,
                              dsmm_idx ncols, dsmm_idx n, const dsmm_idx *__restrict__ cnt,
                              dsmm_idx *__restrict__ out)
{
    dsmm_idx g = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) out[g] = table_dense(toff[g + 1] - toff[g], ncols) ? 0 : cnt[rows[g]];
    if (g == n) out[g] = 0;
}

// Sorted scratch rows into C, a block per row (none for dense rows: their segments are empty).
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
// Planning on the device: plan.c's row bins made by kernels
// ---------------------------------------------------------------------------------------------

// What plan_rows counts for the host: rows per bin, then the row flops' sum and maximum.
enum { PLAN_TOTAL = DSMMI_GPU_NBINS, PLAN_MAX, PLAN_WORDS };
constexpr int PLAN_BLOCK = 256;
// The bins are sort keys of 4 bits; the readbacks of both lanes fit the pinned scratch words
// 8..31 (words 0 and 1 are the lanes' nnz).
constexpr int PLAN_KEY_BITS = 4;
constexpr int PLAN_SCRATCH_WORD = 8;
static_assert(DSMMI_GPU_NBINS <= (1 << PLAN_KEY_BITS), "bins must fit the radix sort's key bits");
static_assert(PLAN_SCRATCH_WORD + 2 * PLAN_WORDS <= 32, "plan readback outside the scratch");

// Row flops, a warp per row (A's entries read by consecutive lanes; a hub row does not hold up
// one thread), each row's bin as its sort key and its number as the value, and the counts:
// per block in shared memory, then added to stats.
__global__ void __launch_bounds__(PLAN_BLOCK)
    plan_rows(dsmm_idx m, const dsmm_idx *__restrict__ ap, const int32_t *__restrict__ ac,
              const dsmm_idx *__restrict__ bp, dsmm_idx ncols, dsmm_idx *__restrict__ flops,
              uint8_t *__restrict__ key, int32_t *__restrict__ id, unsigned long long *stats)
{
    __shared__ unsigned long long cnt[PLAN_WORDS];
    if (threadIdx.x < PLAN_WORDS) cnt[threadIdx.x] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const dsmm_idx warps = (dsmm_idx)gridDim.x * (PLAN_BLOCK / 32);
    // i is the same for the 32 lanes of a warp, so all of them reach the shuffles
    for (dsmm_idx i = (dsmm_idx)blockIdx.x * (PLAN_BLOCK / 32) + threadIdx.x / 32; i < m;
         i += warps) {
        unsigned long long f = 0;
        for (dsmm_idx j = ap[i] + lane; j < ap[i + 1]; j += 32) {
            const int32_t c = ac[j];
            f += (unsigned long long)(bp[c + 1] - bp[c]);
        }
        for (int o = 16; o > 0; o >>= 1) f += __shfl_down_sync(0xffffffffu, f, o);
        if (lane == 0) {
            const int b = dsmmi_gpu_bin_of((dsmm_idx)f, ncols);
            flops[i] = (dsmm_idx)f;
            key[i] = (uint8_t)b;
            id[i] = (int32_t)i;
            atomicAdd(&cnt[b], 1ULL);
            atomicAdd(&cnt[PLAN_TOTAL], f);
            atomicMax(&cnt[PLAN_MAX], f);
        }
    }
    __syncthreads();
    if (threadIdx.x < PLAN_WORDS && cnt[threadIdx.x] != 0) {
        if (threadIdx.x == PLAN_MAX)
            atomicMax(&stats[PLAN_MAX], cnt[PLAN_MAX]);
        else
            atomicAdd(&stats[threadIdx.x], cnt[threadIdx.x]);
    }
}

// The global rows' table entries and thread blocks (rows: the global bin's n rows), which
// inclusive scans turn into the offsets after a leading zero.
__global__ void plan_global(dsmm_idx n, const int32_t *__restrict__ rows,
                            const dsmm_idx *__restrict__ flops, dsmm_idx ncols,
                            dsmm_idx *__restrict__ tab, dsmm_idx *__restrict__ blk)
{
    const dsmm_idx g = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    const dsmm_idx f = flops[rows[g]];
    tab[g] = dsmmi_gpu_global_table(f, ncols);
    blk[g] = dsmmi_gpu_global_blocks(f);
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

using product = dsmmg::spgemm_run;

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
        p->rows_d + p->bins.start[bin], n, T, sub, p->g->spread, p->A->rowptr_d, p->A->col_d,
        p->B->rowptr_d, p->B->col_d, p->cnt_d);
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
    DSMM_CHECK(ctx, !SORT || T <= GROUP * MAX_SLOTS_PER_LANE, DSMM_ERR_INTERNAL,
               "gpu spgemm: bin %d's table of %d entries is over %d a lane", bin, T,
               MAX_SLOTS_PER_LANE);
    DSMM_TRY(set_smem(ctx, num_shared<GROUP, OP, SORT>, smem));
    num_shared<GROUP, OP, SORT>
        <<<(unsigned)blocks, launch<GROUP>::block, smem, dsmmg::stream(p->g, 0)>>>(
            p->rows_d + p->bins.start[bin], n, T, sub, p->g->spread, p->A->rowptr_d, p->A->col_d,
            (const double *)p->A->val_d, p->B->rowptr_d, p->B->col_d, (const double *)p->B->val_d,
            p->cp_d, p->cc_d, p->cv_d);
    DSMM_TRY(dsmmg::check_launch(ctx, "spgemm numeric (shared tables)"));
cleanup:
    return st;
}

template <int GROUP> static dsmm_status num_bin(product *p, int bin)
{
    int sorted = p->sorted;
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

// The global rows' tables of one batch: initialised (keys empty; values the semiring's identity
// when numeric), then filled by ins_global over the batch's `blocks` thread blocks.
static dsmm_status fill_global(product *p, int numeric, dsmm_idx cnt, dsmm_idx blocks, dsmm_idx ent,
                               const int32_t *rows, const dsmm_idx *toff_d, const dsmm_idx *boff_d,
                               int32_t *tk, double *tv)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    cudaStream_t s = dsmmg::stream(p->g, 0);
    const double *av = (const double *)p->A->val_d, *bv = (const double *)p->B->val_d;
    dsmm_idx ib = (ent + 255) / 256;
    DSMM_CHECK(ctx, blocks <= INT32_MAX, DSMM_ERR_UNSUPPORTED,
               "gpu spgemm: %lld thread blocks for the longest rows exceed the grid limit",
               (long long)blocks);
    table_init<<<(unsigned)(ib < 65536 ? ib : 65536), 256, 0, s>>>(ent, tk, numeric ? tv : NULL,
                                                                   sr_identity_of(p->op));
    DSMM_TRY(dsmmg::check_launch(ctx, "spgemm table init (device-memory tables)"));
#define INS_GLOBAL(NUM, OP)                                                                        \
    ins_global<NUM, OP><<<(unsigned)blocks, GLOBAL_BLOCK, 0, s>>>(                                 \
        rows, toff_d, boff_d, cnt, p->A->rowptr_d, p->A->col_d, av, p->B->rowptr_d, p->B->col_d,   \
        bv, p->ncols, tk, tv, p->cnt_d)
    if (!numeric) {
        INS_GLOBAL(false, OP_PLUS_PAIR); // the symbolic phase ignores the semiring
    } else {
        switch (p->op) {
        case OP_PLUS_PAIR:
            INS_GLOBAL(true, OP_PLUS_PAIR);
            break;
        case OP_MIN_PLUS:
            INS_GLOBAL(true, OP_MIN_PLUS);
            break;
        case OP_MAX_TIMES:
            INS_GLOBAL(true, OP_MAX_TIMES);
            break;
        default:
            INS_GLOBAL(true, OP_PLUS_TIMES);
            break;
        }
    }
#undef INS_GLOBAL
    DSMM_TRY(dsmmg::check_launch(ctx, numeric ? "spgemm numeric (device-memory tables)"
                                              : "spgemm symbolic (device-memory tables)"));
cleanup:
    return st;
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
        const dsmm_idx *toff_d = p->toff_d + lo, *boff_d = p->boff_d + lo;
        dsmm_idx blocks = p->bins.gblk_off[bounds[t + 1]] - p->bins.gblk_off[lo];
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)ent * sizeof(int32_t),
                                   "hash tables of the longest rows", (void **)&tk, &p->pool_full));
        if (!numeric) {
            DSMM_TRY(fill_global(p, 0, cnt, blocks, ent, rows, toff_d, boff_d, tk, NULL));
            tk = (int32_t *)dsmmi_dpool_free(&g->pool, tk);
            continue;
        }
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)ent * sizeof(double),
                                   "hash values of the longest rows", (void **)&tv, &p->pool_full));
        DSMM_TRY(fill_global(p, 1, cnt, blocks, ent, rows, toff_d, boff_d, tk, tv));
        dsmm_idx hash_ent = 0; // the batch's hash-table entries: dense rows need no sort
        for (dsmm_idx i = lo; i < bounds[t + 1]; i++)
            if (!table_dense(toff[i + 1] - toff[i], p->ncols)) hash_ent += toff[i + 1] - toff[i];
        if (!p->sorted || hash_ent == 0) {
            ext_global<<<(unsigned)cnt, GLOBAL_BLOCK, 0, s>>>(rows, toff_d, p->ncols, tk, tv,
                                                              p->cp_d, 1, p->cc_d, p->cv_d, p->cp_d,
                                                              p->cc_d, p->cv_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm table read-out"));
        } else {
            // A hash row's nnz is at most half its table, and dense rows take no scratch, so
            // hash_ent / 2 bounds the batch's scratch.
            dsmm_idx outn = hash_ent / 2;
            size_t tmp_bytes = 0;
            DSMM_CHECK(ctx, outn <= INT32_MAX, DSMM_ERR_INTERNAL, "gpu spgemm: batch too large");
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, ((size_t)cnt + 1) * sizeof(dsmm_idx),
                                       "row offsets of the longest rows", (void **)&soff_d,
                                       &p->pool_full));
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)outn * 4, "sort keys", (void **)&sc,
                                       &p->pool_full));
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)outn * 8, "sort values", (void **)&sv,
                                       &p->pool_full));
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)outn * 4, "sorted keys", (void **)&sc2,
                                       &p->pool_full));
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)outn * 8, "sorted values", (void **)&sv2,
                                       &p->pool_full));
            gather_counts<<<(unsigned)((cnt + 256) / 256), 256, 0, s>>>(rows, toff_d, p->ncols, cnt,
                                                                        p->cnt_d, soff_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm gather counts"));
            DSMMG_CUDA(
                cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, soff_d, soff_d, (int)(cnt + 1), s));
            size_t sort_bytes = 0;
            DSMMG_CUDA(cub::DeviceSegmentedSort::SortPairs(
                NULL, sort_bytes, sc, sc2, sv, sv2, (int)outn, (int)cnt, soff_d, soff_d + 1, s));
            if (sort_bytes > tmp_bytes) tmp_bytes = sort_bytes;
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, tmp_bytes, "CUB scratch", &tmp, &p->pool_full));
            DSMMG_CUDA(
                cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, soff_d, soff_d, (int)(cnt + 1), s));
            ext_global<<<(unsigned)cnt, GLOBAL_BLOCK, 0, s>>>(
                rows, toff_d, p->ncols, tk, tv, soff_d, 0, sc, sv, p->cp_d, p->cc_d, p->cv_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm table read-out"));
            // num_items may exceed what the rows hold; entries past soff[cnt] are not sorted
            DSMMG_CUDA(cub::DeviceSegmentedSort::SortPairs(
                tmp, sort_bytes, sc, sc2, sv, sv2, (int)outn, (int)cnt, soff_d, soff_d + 1, s));
            copy_rows<<<(unsigned)cnt, 256, 0, s>>>(rows, soff_d, sc2, sv2, p->cp_d, p->cc_d,
                                                    p->cv_d);
            DSMM_TRY(dsmmg::check_launch(ctx, "spgemm copy sorted rows"));
            // The next batch reuses the pool. Blocks reused by work queued later on the same
            // stream need no wait; the in-core entry keeps the synchronisation it always had.
            if (p->sync_batches) DSMMG_CUDA(cudaStreamSynchronize(s));
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
static int sub_lanes(const dsmmg::csr_d *B)
{
    double mean = B->nrows ? (double)B->nnz / (double)B->nrows : 1.0;
    int s = 1;
    while (s < 32 && s < mean) s <<= 1;
    return s;
}

// The events of a product: E0 starts a phase, E1 ends the symbolic one, E2 the numeric one.
static int ev_of(const product *p, int k)
{
    return 2 + 3 * p->lane + k;
}

// Host wait for one of the product's events, counted as time the host was held up.
static dsmm_status wait_event(product *p, int k)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    double t0 = dsmmi_wtime();
    DSMMG_CUDA(cudaEventSynchronize(dsmmg::event(p->g, ev_of(p, k))));
    p->seconds_blocked += dsmmi_wtime() - t0;
cleanup:
    return st;
}

// The device arrays of the global rows' table and block offsets (ng + 1 entries each), made
// by plan_device or uploaded from the host's bins.
static dsmm_status offsets_alloc(product *p, dsmm_idx ng)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = p->ctx;
    DSMM_TRY(dsmmg::pool_alloc(ctx, p->g, ((size_t)ng + 1) * sizeof(dsmm_idx), "table offsets",
                               (void **)&p->toff_d, &p->pool_full));
    DSMM_TRY(dsmmg::pool_alloc(ctx, p->g, ((size_t)ng + 1) * sizeof(dsmm_idx), "block offsets",
                               (void **)&p->boff_d, &p->pool_full));
cleanup:
    return st;
}

// The bins made on the device: plan_rows, CUB's stable radix sort of the row numbers by bin
// (so each bin lists its rows in increasing order, as dsmmi_gpu_bins_make does), then, for the
// global rows, plan_global and two inclusive scans. rows_d, toff_d and boff_d are filled on the
// device; the host gets what the launches need: the counts, the flops' sum and maximum (one
// wait), and, when there are global rows, their offsets (a second wait). bins.rows stays NULL.
static dsmm_status plan_device(product *p)
{
    dsmm_ctx *ctx = p->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = p->g;
    cudaStream_t s = dsmmg::stream(g, 0);
    const dsmm_idx m = p->nrows;
    dsmmi_gpu_bins *b = &p->bins;
    dsmm_idx *flops_d = NULL, *tab_d = NULL, *blk_d = NULL, ng = 0;
    uint8_t *key_d = NULL, *key2_d = NULL;
    int32_t *id_d = NULL;
    unsigned long long *stats_d = NULL, cnt[PLAN_WORDS] = {0};
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    memset(b, 0, sizeof *b);
    DSMM_CHECK(ctx, m <= INT32_MAX, DSMM_ERR_ARG,
               "gpu spgemm: %lld rows do not fit 32-bit row ids (split the product)", (long long)m);
    DSMM_TRY(dsmmg::pool_alloc(ctx, g, ((size_t)m + 1) * sizeof(int32_t), "row bins",
                               (void **)&p->rows_d, &p->pool_full));
    if (m > 0) {
        void *word = dsmmg::scratch(g, PLAN_SCRATCH_WORD + PLAN_WORDS * p->lane);
        dsmm_idx blocks = (m + PLAN_BLOCK / 32 - 1) / (PLAN_BLOCK / 32);
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)m * sizeof(dsmm_idx), "row flops",
                                   (void **)&flops_d, &p->pool_full));
        DSMM_TRY(
            dsmmg::pool_alloc(ctx, g, (size_t)m, "row bin keys", (void **)&key_d, &p->pool_full));
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)m, "sorted row bin keys", (void **)&key2_d,
                                   &p->pool_full));
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)m * sizeof(int32_t), "row numbers",
                                   (void **)&id_d, &p->pool_full));
        DSMM_TRY(
            dsmmg::pool_alloc(ctx, g, sizeof cnt, "bin counts", (void **)&stats_d, &p->pool_full));
        DSMMG_CUDA(cudaMemsetAsync(stats_d, 0, sizeof cnt, s));
        plan_rows<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), PLAN_BLOCK, 0, s>>>(
            m, p->A->rowptr_d, p->A->col_d, p->B->rowptr_d, p->ncols, flops_d, key_d, id_d,
            stats_d);
        DSMM_TRY(dsmmg::check_launch(ctx, "spgemm planning (row flops)"));
        DSMMG_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, key_d, key2_d, id_d, p->rows_d,
                                                   (int)m, 0, PLAN_KEY_BITS, s));
        // (a NULL scratch would make the next call a size query again: never 0 bytes)
        tmp_bytes = tmp_bytes ? tmp_bytes : 1;
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, tmp_bytes, "CUB sort scratch", &tmp, &p->pool_full));
        DSMMG_CUDA(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, key_d, key2_d, id_d, p->rows_d,
                                                   (int)m, 0, PLAN_KEY_BITS, s));
        DSMMG_CUDA(cudaMemcpyAsync(word, stats_d, sizeof cnt, cudaMemcpyDeviceToHost, s));
        double t0 = dsmmi_wtime();
        DSMMG_CUDA(cudaStreamSynchronize(s));
        p->seconds_blocked += dsmmi_wtime() - t0;
        memcpy(cnt, word, sizeof cnt);
    }
    for (int k = 0; k < DSMMI_GPU_NBINS; k++) {
        b->count[k] = (dsmm_idx)cnt[k];
        b->start[k + 1] = b->start[k] + b->count[k];
    }
    b->total_flops = (dsmm_idx)cnt[PLAN_TOTAL];
    b->max_flops = (dsmm_idx)cnt[PLAN_MAX];
    DSMM_CHECK(ctx, b->start[DSMMI_GPU_NBINS] == m, DSMM_ERR_INTERNAL,
               "gpu spgemm: the device binned %lld of %lld rows",
               (long long)b->start[DSMMI_GPU_NBINS], (long long)m);
    ng = b->count[DSMMI_GPU_GLOBAL_BIN];
    b->gtab_off = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)ng + 1, sizeof *b->gtab_off);
    b->gblk_off = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)ng + 1, sizeof *b->gblk_off);
    DSMM_CHECK(ctx, b->gtab_off && b->gblk_off, DSMM_ERR_NOMEM, "gpu spgemm: row bins");
    b->gtab_off[0] = b->gblk_off[0] = 0;
    DSMM_TRY(offsets_alloc(p, ng));
    DSMMG_CUDA(cudaMemsetAsync(p->toff_d, 0, sizeof(dsmm_idx), s));
    DSMMG_CUDA(cudaMemsetAsync(p->boff_d, 0, sizeof(dsmm_idx), s));
    if (ng > 0) {
        size_t scan_bytes = 0;
        const int32_t *grows = p->rows_d + b->start[DSMMI_GPU_GLOBAL_BIN];
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)ng * sizeof(dsmm_idx), "global table sizes",
                                   (void **)&tab_d, &p->pool_full));
        DSMM_TRY(dsmmg::pool_alloc(ctx, g, (size_t)ng * sizeof(dsmm_idx), "global block counts",
                                   (void **)&blk_d, &p->pool_full));
        plan_global<<<(unsigned)((ng + 255) / 256), 256, 0, s>>>(ng, grows, flops_d, p->ncols,
                                                                 tab_d, blk_d);
        DSMM_TRY(dsmmg::check_launch(ctx, "spgemm planning (global rows)"));
        DSMMG_CUDA(
            cub::DeviceScan::InclusiveSum(NULL, scan_bytes, tab_d, p->toff_d + 1, (int)ng, s));
        scan_bytes = scan_bytes ? scan_bytes : 1;
        if (scan_bytes > tmp_bytes) { // the sort's scratch is reused when large enough
            tmp = dsmmi_dpool_free(&g->pool, tmp);
            tmp_bytes = scan_bytes;
            DSMM_TRY(dsmmg::pool_alloc(ctx, g, tmp_bytes, "CUB scan scratch", &tmp, &p->pool_full));
        }
        DSMMG_CUDA(
            cub::DeviceScan::InclusiveSum(tmp, scan_bytes, tab_d, p->toff_d + 1, (int)ng, s));
        DSMMG_CUDA(
            cub::DeviceScan::InclusiveSum(tmp, scan_bytes, blk_d, p->boff_d + 1, (int)ng, s));
        double t0 = dsmmi_wtime();
        DSMM_TRY(
            dsmmg::download_raw(ctx, g, b->gtab_off, p->toff_d, (size_t)ng + 1, sizeof(dsmm_idx)));
        DSMM_TRY(
            dsmmg::download_raw(ctx, g, b->gblk_off, p->boff_d, (size_t)ng + 1, sizeof(dsmm_idx)));
        p->seconds_upload += dsmmi_wtime() - t0;
    }
cleanup:
    // Blocks freed here are only reused by work queued after this point on stream 0.
    dsmmi_dpool_free(&g->pool, tmp);
    dsmmi_dpool_free(&g->pool, blk_d);
    dsmmi_dpool_free(&g->pool, tab_d);
    dsmmi_dpool_free(&g->pool, stats_d);
    dsmmi_dpool_free(&g->pool, id_d);
    dsmmi_dpool_free(&g->pool, key2_d);
    dsmmi_dpool_free(&g->pool, key_d);
    dsmmi_dpool_free(&g->pool, flops_d);
    return st;
}

} // namespace

namespace dsmmg {

dsmm_status spgemm_begin(dsmm_ctx *ctx, dsmmi_gpu *g, dsmm_semiring sr, int sorted, const csr_d *A,
                         const csr_d *B, const dsmm_idx *flops, int lane, int sync_batches,
                         spgemm_run *r)
{
    dsmm_status st = DSMM_OK;
    cudaStream_t s = stream(g, 0);
    dsmm_idx m = A->nrows;
    size_t tmp_bytes = 0;
    void *tmp = NULL;
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->g = g;
    r->A = A;
    r->B = B;
    r->nrows = m;
    r->ncols = B->ncols;
    r->op = op_of(sr);
    r->sorted = sorted;
    r->sub = sub_lanes(B);
    r->lane = lane;
    r->sync_batches = sync_batches;
    DSMM_CHECK(ctx, lane == 0 || lane == 1, DSMM_ERR_INTERNAL, "gpu spgemm: lane %d", lane);
    if (flops == NULL) {
        DSMM_TRY(plan_device(r));
    } else {
        DSMM_TRY(dsmmi_gpu_bins_make(ctx, flops, m, B->ncols, &r->bins));
        dsmm_idx ng = r->bins.count[DSMMI_GPU_GLOBAL_BIN];
        DSMM_TRY(pool_alloc(ctx, g, ((size_t)m + 1) * sizeof(int32_t), "row bins",
                            (void **)&r->rows_d, &r->pool_full));
        DSMM_TRY(offsets_alloc(r, ng));
        double t0 = dsmmi_wtime();
        DSMM_TRY(upload_raw(ctx, g, r->rows_d, r->bins.rows, (size_t)m, sizeof(int32_t)));
        DSMM_TRY(upload_raw(ctx, g, r->toff_d, r->bins.gtab_off, (size_t)ng + 1, sizeof(dsmm_idx)));
        DSMM_TRY(upload_raw(ctx, g, r->boff_d, r->bins.gblk_off, (size_t)ng + 1, sizeof(dsmm_idx)));
        r->seconds_upload = dsmmi_wtime() - t0;
    }
    r->rows_empty = r->bins.count[0];
    DSMM_TRY(pool_alloc(ctx, g, ((size_t)m + 1) * sizeof(dsmm_idx), "row counts",
                        (void **)&r->cnt_d, &r->pool_full));
    DSMM_TRY(pool_alloc(ctx, g, ((size_t)m + 1) * sizeof(dsmm_idx), "row pointers of C",
                        (void **)&r->cp_d, &r->pool_full));
    r->stage = 1;
    DSMMG_CUDA(cudaEventRecord(event(g, ev_of(r, 0)), s));
    // symbolic: rows of bin 0 (no products) keep the zero count
    DSMMG_CUDA(cudaMemsetAsync(r->cnt_d, 0, ((size_t)m + 1) * sizeof(dsmm_idx), s));
    DSMM_TRY(shared_bins(r, 0));
    DSMM_TRY(global_bin(r, 0));
    DSMMG_CUDA(
        cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, r->cnt_d, r->cp_d, (int64_t)m + 1, s));
    DSMM_TRY(pool_alloc(ctx, g, tmp_bytes, "CUB scan scratch", &tmp, &r->pool_full));
    DSMMG_CUDA(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, r->cnt_d, r->cp_d, (int64_t)m + 1, s));
    // nnz into a pinned word the staged copies leave alone (stream 1 may be downloading)
    DSMMG_CUDA(cudaMemcpyAsync(scratch(g, lane), r->cp_d + m, sizeof(dsmm_idx),
                               cudaMemcpyDeviceToHost, s));
    DSMMG_CUDA(cudaEventRecord(event(g, ev_of(r, 1)), s));
cleanup:
    dsmmi_dpool_free(&g->pool, tmp); // reused only by work queued after the scan
    return st;
}

dsmm_status spgemm_numeric(spgemm_run *r)
{
    dsmm_ctx *ctx = r->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = r->g;
    cudaStream_t s = stream(g, 0);
    DSMM_CHECK(ctx, r->stage == 1, DSMM_ERR_INTERNAL, "gpu spgemm: numeric before symbolic");
    DSMM_TRY(wait_event(r, 1));
    r->ms_symbolic = elapsed(g, ev_of(r, 0), ev_of(r, 1));
    memcpy(&r->nnz, scratch(g, r->lane), sizeof r->nnz);
    // numeric: C's arrays exactly as large as the symbolic phase counted
    DSMM_TRY(pool_alloc(ctx, g, (size_t)r->nnz * sizeof(int32_t), "columns of C", (void **)&r->cc_d,
                        &r->pool_full));
    DSMM_TRY(pool_alloc(ctx, g, (size_t)r->nnz * sizeof(double), "values of C", (void **)&r->cv_d,
                        &r->pool_full));
    r->stage = 2;
    DSMMG_CUDA(cudaEventRecord(event(g, ev_of(r, 0)), s)); // E0 is free again: E1 completed
    DSMM_TRY(shared_bins(r, 1));
    DSMM_TRY(global_bin(r, 1));
    DSMMG_CUDA(cudaEventRecord(event(g, ev_of(r, 2)), s));
cleanup:
    return st;
}

dsmm_status spgemm_finish(spgemm_run *r)
{
    dsmm_ctx *ctx = r->ctx;
    dsmm_status st = DSMM_OK;
    if (r->stage == 3) return DSMM_OK;
    DSMM_CHECK(ctx, r->stage == 2, DSMM_ERR_INTERNAL, "gpu spgemm: finish before numeric");
    DSMM_TRY(wait_event(r, 2));
    r->ms_numeric = elapsed(r->g, ev_of(r, 0), ev_of(r, 2));
    r->stage = 3;
cleanup:
    return st;
}

void spgemm_report(const spgemm_run *r, double seconds_transfer, dsmm_spgemm_info *info)
{
    info->seconds_transfer = seconds_transfer;
    info->seconds_symbolic = r->ms_symbolic / 1e3;
    info->seconds_numeric = r->ms_numeric / 1e3;
    info->seconds_device = info->seconds_symbolic + info->seconds_numeric;
    info->flops = (double)r->bins.total_flops;
    info->nnz = r->nnz;
    info->rows_hash = r->nrows - r->rows_empty;
    info->sorted = r->sorted;
    info->threads = 1;
    info->on_gpu = 1;
    r->g->info.products_gpu++;
    r->g->info.seconds_kernels += info->seconds_device;
}

void spgemm_release(spgemm_run *r)
{
    if (r->g == NULL) return;
    dsmmi_dpool *pool = &r->g->pool;
    r->rows_d = (int32_t *)dsmmi_dpool_free(pool, r->rows_d);
    r->toff_d = (dsmm_idx *)dsmmi_dpool_free(pool, r->toff_d);
    r->boff_d = (dsmm_idx *)dsmmi_dpool_free(pool, r->boff_d);
    r->cnt_d = (dsmm_idx *)dsmmi_dpool_free(pool, r->cnt_d);
    dsmmi_gpu_bins_free(r->ctx, &r->bins);
}

void spgemm_free(spgemm_run *r)
{
    if (r->g == NULL) return;
    spgemm_release(r);
    dsmmi_dpool *pool = &r->g->pool;
    r->cp_d = (dsmm_idx *)dsmmi_dpool_free(pool, r->cp_d);
    r->cc_d = (int32_t *)dsmmi_dpool_free(pool, r->cc_d);
    r->cv_d = (double *)dsmmi_dpool_free(pool, r->cv_d);
}

} // namespace dsmmg

extern "C" dsmm_status dsmmi_gpu_spgemm(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                        dsmmi_spgemm_phase phase, dsmm_csr **C,
                                        dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmm_idx *flops = NULL, total = 0;
    double tw0 = 0, tw_flops = 0, tw_begin = 0, tw_num = 0, tw_fin = 0;
    dsmmg::csr_d Ad, Bd;
    dsmmg::spgemm_run r;
    memset(&Ad, 0, sizeof Ad);
    memset(&Bd, 0, sizeof Bd);
    memset(&r, 0, sizeof r);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu spgemm: no device on this context (dsmm_ctx_set_gpu)");
    // What the device kernel does not do (masks, the symbolic/numeric pair) runs on the CPU,
    // and so do AUTO products too small to pay for the copies.
    if (phase != DSMMI_SPGEMM_FULL || a->M != NULL) {
        g->info.products_cpu++;
        return dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
    }
    // The host counts flops only for AUTO's decision (the total) or when asked to plan on the
    // host (dsmm_gpu_opts.host_planning: every row's); otherwise the device bins the rows
    // (plan_device).
    if (a->alg == DSMM_SPGEMM_AUTO || g->host_planning) {
        tw0 = dsmmi_wtime();
        if (g->host_planning) {
            flops = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)a->A->nrows + 1, sizeof *flops);
            DSMM_CHECK(ctx, flops != NULL, DSMM_ERR_NOMEM, "gpu spgemm: row flops");
        }
        dsmmi_spgemm_row_flops(a->A, a->B, flops, &total);
        tw_flops = dsmmi_wtime() - tw0;
        if (a->alg == DSMM_SPGEMM_AUTO && !dsmmi_gpu_wants(ctx, (double)total)) {
            g->info.products_cpu++;
            flops = (dsmm_idx *)dsmmi_free(ctx, flops);
            return dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
        }
    }
    {
        double t0 = dsmmi_wtime();
        dsmm_type vt = a->sr == DSMM_PLUS_PAIR ? DSMM_PATTERN : DSMM_DOUBLE;
        DSMMG_CUDA(cudaSetDevice(g->device));
        dsmmi_dpool_peak_reset(&g->pool);
        DSMM_TRY(dsmmg::upload_csr(ctx, g, a->A, vt, &Ad));
        DSMM_TRY(dsmmg::upload_csr(ctx, g, a->B, vt, &Bd));
        double t_up = dsmmi_wtime() - t0;
        double tb = dsmmi_wtime();
        DSMM_TRY(dsmmg::spgemm_begin(ctx, g, a->sr, a->sorted, &Ad, &Bd, flops, 0, 1, &r));
        flops = (dsmm_idx *)dsmmi_free(ctx, flops);
        tw_begin = dsmmi_wtime() - tb;
        DSMM_TRY(dsmmg::spgemm_numeric(&r));
        tw_num = dsmmi_wtime() - tb - tw_begin;
        DSMM_TRY(dsmmg::spgemm_finish(&r));
        double t1 = dsmmi_wtime();
        tw_fin = t1 - tb - tw_begin - tw_num;
        // where the host's time goes (--verbose): the host's row flops (AUTO or host
        // planning), the bins (made on the host and uploaded, or made on the device) and the
        // symbolic launch, the wait for the count and numeric launch, the wait for the numeric
        // phase
        char per_bin[DSMMI_GPU_NBINS * 21] = "";
        for (int b = 0, at = 0; b < DSMMI_GPU_NBINS; b++)
            at += snprintf(per_bin + at, sizeof per_bin - (size_t)at, " %lld",
                           (long long)r.bins.count[b]);
        dsmmi_log(ctx, DSMM_LOG_DEBUG,
                  "gpu spgemm: host row flops %.3f ms, %s bins + symbolic launch %.3f ms, "
                  "count wait + "
                  "numeric launch %.3f ms, numeric wait %.3f ms; device symbolic %.3f ms, "
                  "numeric %.3f ms; rows per bin%s",
                  tw_flops * 1e3, g->host_planning ? "host" : "device", tw_begin * 1e3,
                  tw_num * 1e3, tw_fin * 1e3, r.ms_symbolic, r.ms_numeric, per_bin);
        dsmmg::csr_d Cd = dsmmg::spgemm_result(&r);
        DSMM_TRY(dsmmg::download_csr(ctx, g, &Cd, a->type, a->col_bits, a->sorted, C));
        dsmmg::spgemm_report(&r, t_up + r.seconds_upload + (dsmmi_wtime() - t1), info);
        info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
    }
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0)); // blocks may be in use
        dsmmg::spgemm_free(&r);
        dsmmg::free_csr(g, &Ad);
        dsmmg::free_csr(g, &Bd);
    }
    dsmmi_free(ctx, flops);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_bins_device(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                             dsmmi_gpu_bins *out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    dsmmg::csr_d Ad, Bd;
    dsmmg::spgemm_run r;
    memset(&Ad, 0, sizeof Ad);
    memset(&Bd, 0, sizeof Bd);
    memset(&r, 0, sizeof r);
    memset(out, 0, sizeof *out);
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu bins: no device on this context (dsmm_ctx_set_gpu)");
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM, "gpu bins: A is %lldx%lld, B is %lldx%lld",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    DSMMG_CUDA(cudaSetDevice(g->device));
    DSMM_TRY(dsmmg::upload_csr(ctx, g, A, DSMM_PATTERN, &Ad));
    DSMM_TRY(dsmmg::upload_csr(ctx, g, B, DSMM_PATTERN, &Bd));
    r.ctx = ctx;
    r.g = g;
    r.A = &Ad;
    r.B = &Bd;
    r.nrows = A->nrows;
    r.ncols = B->ncols;
    DSMM_TRY(plan_device(&r));
    *out = r.bins;
    memset(&r.bins, 0, sizeof r.bins); // out owns the host arrays now
    out->rows = (int32_t *)dsmmi_malloc(ctx, (size_t)A->nrows + 1, sizeof *out->rows);
    DSMM_CHECK(ctx, out->rows != NULL, DSMM_ERR_NOMEM, "gpu bins: rows");
    DSMM_TRY(dsmmg::download_raw(ctx, g, out->rows, r.rows_d, (size_t)A->nrows, sizeof(int32_t)));
cleanup:
    if (g != NULL) {
        cudaStreamSynchronize(dsmmg::stream(g, 0));
        dsmmg::spgemm_free(&r);
        dsmmg::free_csr(g, &Ad);
        dsmmg::free_csr(g, &Bd);
    }
    if (st != DSMM_OK) dsmmi_gpu_bins_free(ctx, out);
    return st;
}
