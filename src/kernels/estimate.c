// src/kernels/estimate.c: nnz(A * B) without forming A * B: the exact symbolic count
// (dsmmi_spgemm_count) and Cohen's size-estimation framework (HipMCL §V; Cohen, JCSS 1997).
//
// Cohen, row-wise: column j of B draws r keys ~ Exp(1). Row k of B keeps, per key slot t, the
// minimum of the keys of the columns it holds; row i of A keeps the minimum over the rows of B
// it reaches, which is the minimum over the n_i = nnz(C(i,:)) distinct columns of C(i,:). The
// minimum of n independent Exp(1) keys is Exp(n), so row i's r minima sum to S_i ~ Gamma(r, n_i)
// and X_i = (r - 1) / S_i is unbiased for n_i with relative standard deviation 1/sqrt(r - 2).
// Rows that reach at most one column, copy one row of B, or have at most r products are
// counted exactly instead. Work O(r (nnz(A) + nnz(B) + ncols(B) + nrows(A))), memory r floats
// per column and per row of B. Keys depend on (seed, column, slot) only and rows are summed in
// fixed blocks, so the result is bit-identical at any thread count. The loops over columns and
// rows are compiled for AVX-512, AVX2 and the baseline (the loader picks one); the r = 4, 8, 16
// slots of a row are one vector variable, and nothing is contracted into multiply-adds, so
// every clone computes the same bits.
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/kernels.h"

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

// Rows of A per partial sum: fixed, so the order of the floating-point sums never depends on
// the thread count; small enough for dynamic scheduling to balance skewed rows.
#define ROWS_PER_BLOCK 256

// Per block: exact-row sum, sum of X_i, sum of X_i^2 / (r - 1), sum of the upper bounds
// min(flops_i, ncols(B)) and the count of estimated rows, then r leave-one-out sums.
enum { P_EXACT, P_EST, P_VAR, P_CAP, P_NEST, P_JACK };

// Keys are propagated as uniforms u in (0, 1): min commutes with the increasing map
// u -> -log(1 - u) to Exp(1), so only a row's r minima are mapped, not the r ncols(B) keys.
// From 32 random bits: resolution 2^-32 near 0, where the minima of large rows lie; the clamp
// keeps u < 1 where (float)h rounds up.
static inline float uniform_key(uint32_t h)
{
    float u = (float)h * 0x1p-32f + 0x1p-33f;
    return u < 0x1.fffffep-1f ? u : 0x1.fffffep-1f;
}

// SplitMix64's output function (Steele et al., OOPSLA 2014): the slots of one column come from
// one dsmm_rng_at draw, stepped by the golden-ratio increment, instead of r/2 Philox calls.
static inline uint64_t splitmix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// -log(1 - m) for 0 < m < 1 in float, relative error below 3e-7 over the whole range, without
// libm: 1 - m = 2^k z with z in [sqrt(1/2), sqrt(2)), log z = 2 atanh(s) with s = (z-1)/(z+1),
// |s| <= 0.172, by its series to s^9. When k == 0, z - 1 is exactly -m, so small minima keep
// their full relative precision. Branch-free, so the loop over a row's slots vectorises.
static inline float neg_log1m(float m)
{
    float y = 1.0f - m;
    uint32_t iy;
    memcpy(&iy, &y, sizeof iy);
    uint32_t tmp = iy - 0x3f3504f3u; // bits of sqrt(1/2)
    int32_t k = (int32_t)tmp >> 23;
    uint32_t iz = iy - (tmp & 0xff800000u);
    float z;
    memcpy(&z, &iz, sizeof z);
    // f = k == 0 ? -m : z - 1, blended on the bits so the loop has no branch to vectorise.
    float fa = -m, fb = z - 1.0f, f;
    uint32_t ia, ib, sel = 0u - (uint32_t)(k == 0), bits;
    memcpy(&ia, &fa, sizeof ia);
    memcpy(&ib, &fb, sizeof ib);
    bits = (ia & sel) | (ib & ~sel);
    memcpy(&f, &bits, sizeof f);
    float s = f / (2.0f + f), s2 = s * s;
    float lg =
        2.0f * s * (1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9)))));
    return -((float)k * 0x1.62e43p-1f + lg);
}

#define LINE_FLOATS 16 // floats per 64-byte cache line

static float *line_align(float *p)
{
    return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

// Slots kept in registers when r is a compile-time constant this small.
#define KEYS_IN_REGS 16

// out[0..r) = slot-wise minimum of the src rows named by X(row,:) (r floats per column of X).
// Inlined with r constant (4, 8, 16), the loops over slots become vector mins.
static ALWAYS_INLINE void gather_min(float *restrict out, const float *restrict src, size_t r,
                                     const dsmm_csr *X, dsmm_idx row)
{
    dsmm_idx lo = X->rowptr[row], hi = X->rowptr[row + 1];
    float acc[KEYS_IN_REGS];
    float *a = r <= KEYS_IN_REGS ? acc : out;
    for (size_t t = 0; t < r; t++) a[t] = INFINITY;
    for (dsmm_idx q = lo; q < hi; q++) {
        dsmm_idx c = X->colidx32 ? (dsmm_idx)X->colidx32[q] : X->colidx[q];
        const float *v = src + (size_t)c * r;
        for (size_t t = 0; t < r; t++) a[t] = v[t] < a[t] ? v[t] : a[t];
    }
    if (a != out) {
        for (size_t t = 0; t < r; t++) out[t] = a[t];
    }
}

typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int32_t v16i __attribute__((vector_size(64)));

// One slot-wise minimum an entry of the row, columns read from COLS (X's 32- or 64-bit array).
#define MIN_OVER(VT, VI, COLS)                                                                     \
    for (dsmm_idx q = lo_; q < hi_; q++) {                                                         \
        VT v_;                                                                                     \
        memcpy(&v_, src + (size_t)(COLS)[q] * (sizeof(VT) / sizeof(float)), sizeof v_);            \
        VI m_ = v_ < a_;                                                                           \
        a_ = (VT)(((VI)v_ & m_) | ((VI)a_ & ~m_));                                                 \
    }
// gather_min with the r slots in one vector variable VT (GCC vector extensions: one
// instruction an entry where the clone's ISA has VT's width, else a few). GCC left the
// array form's unrolled slots scalar, one min each, even in the AVX-512 clone.
#define GATHER_MIN_VEC(VT, VI)                                                                     \
    do {                                                                                           \
        dsmm_idx lo_ = X->rowptr[row], hi_ = X->rowptr[row + 1];                                   \
        VT a_ = (VT){0} + INFINITY;                                                                \
        if (X->colidx32) {                                                                         \
            MIN_OVER(VT, VI, X->colidx32)                                                          \
        } else {                                                                                   \
            MIN_OVER(VT, VI, X->colidx)                                                            \
        }                                                                                          \
        memcpy(out, &a_, sizeof a_);                                                               \
    } while (0)

// The usual key counts as vectors.
static ALWAYS_INLINE void gather_min_r(float *restrict out, const float *restrict src, size_t r,
                                       const dsmm_csr *X, dsmm_idx row)
{
    switch (r) {
    case 4:
        GATHER_MIN_VEC(v4f, v4i);
        break;
    case 8:
        GATHER_MIN_VEC(v8f, v8i);
        break;
    case 16:
        GATHER_MIN_VEC(v16f, v16i);
        break;
    default:
        gather_min(out, src, r, X, row);
        break;
    }
}

// Row i of A: its minima m (scratch of r floats), X_i = (r - 1) / S_i added to the block's
// sums p with its variance term and its r leave-one-slot-out estimates; returns X_i.
static ALWAYS_INLINE double row_estimate(float *restrict m, const float *restrict mb, size_t r,
                                         const dsmm_csr *A, dsmm_idx i, double *restrict p)
{
    gather_min_r(m, mb, r, A, i);
    for (size_t t = 0; t < r; t++) m[t] = neg_log1m(m[t]);
    // S_i: r = 4, 8, 16 summed pairwise in a fixed order (halves added, as vectors), else in
    // slot order; either way the same sum at any thread count and on any CPU.
    double s = 0.0;
    if (r == 4 || r == 8 || r == 16) {
        double d[16];
        for (size_t t = 0; t < r; t++) d[t] = (double)m[t];
        for (size_t w = r / 2; w >= 1; w /= 2)
            for (size_t t = 0; t < w; t++) d[t] += d[t + w];
        s = d[0];
    } else {
        for (size_t t = 0; t < r; t++) s += (double)m[t];
    }
    double rm1 = (double)r - 1.0, rm2 = (double)r - 2.0, x = rm1 / s;
    p[P_EST] += x;
    p[P_VAR] += x * x / rm1;
    for (size_t t = 0; t < r; t++) p[P_JACK + t] += rm2 / (s - (double)m[t]);
    return x;
}

static ALWAYS_INLINE double row_estimate_r(float *restrict m, const float *restrict mb, size_t r,
                                           const dsmm_csr *A, dsmm_idx i, double *restrict p)
{
    switch (r) {
    case 4:
        return row_estimate(m, mb, 4, A, i, p);
    case 8:
        return row_estimate(m, mb, 8, A, i, p);
    case 16:
        return row_estimate(m, mb, 16, A, i, p);
    default:
        return row_estimate(m, mb, r, A, i, p);
    }
}

// Rows with at most r products (and at most EXACT_TABLE / 2) are counted exactly: r table
// probes cost no more than the r-slot minima, logs and divisions of an estimate, and exact rows
// add no variance. (A higher threshold, 4r, made low-degree meshes twice as slow to estimate as
// to count, for little accuracy.) Load factor of the table at most 1/2.
#define EXACT_TABLE         512
#define EXACT_FLOPS_PER_KEY 1

// Distinct columns of row i of A * B (at most EXACT_TABLE / 2 products): open addressing over
// tab (all -1 on entry and on return), used the list of slots taken.
static dsmm_idx count_row_small(const dsmm_csr *A, const dsmm_csr *B, dsmm_idx i, dsmm_idx *tab,
                                int *used)
{
    int n = 0;
    for (dsmm_idx q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
        dsmm_idx k = dsmm_csr_col(A, q);
        for (dsmm_idx s = B->rowptr[k]; s < B->rowptr[k + 1]; s++) {
            dsmm_idx c = dsmm_csr_col(B, s);
            unsigned h = (unsigned)(((uint64_t)c * 0x9e3779b97f4a7c15ULL) >> 55); // 9 bits
            while (tab[h] != -1 && tab[h] != c) h = (h + 1) & (EXACT_TABLE - 1);
            if (tab[h] == -1) {
                tab[h] = c;
                used[n++] = (int)h;
            }
        }
    }
    for (int u = 0; u < n; u++) tab[used[u]] = -1;
    return n;
}

static dsmm_status estimate_exact(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                  double *row_nnz, dsmm_spgemm_estimate_result *res)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *rows = NULL, total = 0, flops = 0;

    if (row_nnz) {
        rows = dsmmi_malloc(ctx, (size_t)A->nrows, sizeof *rows);
        DSMM_CHECK(ctx, rows != NULL, DSMM_ERR_NOMEM, "estimate: %lld row counts",
                   (long long)A->nrows);
    }
    DSMM_TRY(dsmmi_spgemm_count(ctx, A, B, rows, &total, &flops));
    if (row_nnz) {
        for (dsmm_idx i = 0; i < A->nrows; i++) row_nnz[i] = (double)rows[i];
    }
    res->nnz = (double)total;
    res->flops = (double)flops;
cleanup:
    rows = dsmmi_free(ctx, rows);
    return st;
}

// The loops over columns and rows below are cloned (DSMMI_CLONES_V4, as the SpMM kernels):
// AVX-512 where the CPU has it (the 16 slots of r = 16 are one vector), AVX2, or the
// baseline's SSE2, where the slot loops cost r / 4 operations an entry.

// The r keys of columns j0..j1: slots 2p and 2p+1 of column j are the halves of
// splitmix64(dsmm_rng_at(seed, j, 0) + (p + 1) g).
DSMMI_CLONES_V4 static void column_keys(float *restrict keys, size_t r, uint64_t seed, dsmm_idx j0,
                                        dsmm_idx j1)
{
    for (dsmm_idx j = j0; j < j1; j++) {
        float *kj = keys + (size_t)j * r;
        uint64_t x = dsmm_rng_at(seed, (uint64_t)j, 0);
        for (size_t t = 0; t < r; t += 2) {
            x += 0x9e3779b97f4a7c15ULL;
            uint64_t z = splitmix64(x);
            kj[t] = uniform_key((uint32_t)z);
            if (t + 1 < r) kj[t + 1] = uniform_key((uint32_t)(z >> 32));
        }
    }
}

// Rows k0..k1 of B: their slot-wise minima of the keys of their columns.
DSMMI_CLONES_V4 static void b_minima(float *restrict mins, const float *restrict keys, size_t r,
                                     const dsmm_csr *B, dsmm_idx k0, dsmm_idx k1)
{
    for (dsmm_idx k = k0; k < k1; k++) gather_min_r(mins + (size_t)k * r, keys, r, B, k);
}

// Block blk of A's rows: exact rows counted, the others estimated, into the block's sums p
// (and row_nnz when not NULL); m is r floats of scratch. Returns the block's flops.
DSMMI_CLONES_V4 static dsmm_idx a_block(const dsmm_csr *A, const dsmm_csr *B, size_t r,
                                        const float *restrict mins, dsmm_idx blk,
                                        double *restrict p, float *restrict m, dsmm_idx small,
                                        double *row_nnz)
{
    const dsmm_idx ncols = B->ncols;
    const int b_sorted = B->sorted;
    dsmm_idx flops = 0;
    dsmm_idx tab[EXACT_TABLE];
    int used[EXACT_TABLE / 2];
    for (int h = 0; h < EXACT_TABLE; h++) tab[h] = -1;
    dsmm_idx i1 = (blk + 1) * ROWS_PER_BLOCK < A->nrows ? (blk + 1) * ROWS_PER_BLOCK : A->nrows;
    for (dsmm_idx i = blk * ROWS_PER_BLOCK; i < i1; i++) {
        dsmm_idx lo = A->rowptr[i], hi = A->rowptr[i + 1], f = 0;
        for (dsmm_idx q = lo; q < hi; q++) {
            dsmm_idx c = dsmm_csr_col(A, q);
            f += B->rowptr[c + 1] - B->rowptr[c];
        }
        flops += f;
        dsmm_idx cap = f < ncols ? f : ncols;
        // Exact rows: nothing or one product reachable, a single row of B copied, or few
        // enough products to count.
        if (cap <= 1 || (hi - lo == 1 && b_sorted) || f <= small) {
            dsmm_idx n = cap <= 1                   ? cap
                         : hi - lo == 1 && b_sorted ? f
                                                    : count_row_small(A, B, i, tab, used);
            p[P_EXACT] += (double)n;
            if (row_nnz) row_nnz[i] = (double)n;
            continue;
        }
        double x = row_estimate_r(m, mins, r, A, i, p);
        p[P_CAP] += (double)cap;
        p[P_NEST] += 1.0;
        if (row_nnz) row_nnz[i] = x < 1.0 ? 1.0 : x > (double)cap ? (double)cap : x;
    }
    return flops;
}

static dsmm_status estimate_cohen(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, size_t r,
                                  uint64_t seed, double *row_nnz, dsmm_spgemm_estimate_result *res)
{
    dsmm_status st = DSMM_OK;
    float *key = NULL, *mb = NULL, *scratch = NULL;
    double *part = NULL;
    const int nt = dsmmi_threads(ctx);
    const size_t stride = P_JACK + r;
    const dsmm_idx nblocks = (A->nrows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    const dsmm_idx ncols = B->ncols;
    const double rm1 = (double)r - 1.0, rm2 = (double)r - 2.0;
    const dsmm_idx small = EXACT_FLOPS_PER_KEY * (dsmm_idx)r < EXACT_TABLE / 2
                               ? EXACT_FLOPS_PER_KEY * (dsmm_idx)r
                               : EXACT_TABLE / 2;
    dsmm_idx flops = 0;

    size_t nkey = 0, nmin = 0;
    DSMM_CHECK(ctx,
               dsmmi_mul_ok((size_t)B->ncols, r, &nkey) && nkey < SIZE_MAX - LINE_FLOATS &&
                   dsmmi_mul_ok((size_t)B->nrows, r, &nmin) && nmin < SIZE_MAX - LINE_FLOATS,
               DSMM_ERR_NOMEM, "estimate: %zu keys for %lld x %lld overflow", r,
               (long long)B->nrows, (long long)B->ncols);
    // Aligned to cache lines, so the r = 16 slots of a column or row are one line, not two.
    key = dsmmi_malloc(ctx, nkey + LINE_FLOATS, sizeof *key);
    DSMM_CHECK(ctx, key != NULL, DSMM_ERR_NOMEM, "estimate: %zu keys for %lld columns", r,
               (long long)B->ncols);
    mb = dsmmi_malloc(ctx, nmin + LINE_FLOATS, sizeof *mb);
    DSMM_CHECK(ctx, mb != NULL, DSMM_ERR_NOMEM, "estimate: %zu minima for %lld rows of B", r,
               (long long)B->nrows);
    float *const keys = line_align(key), *const mins = line_align(mb);
    scratch = dsmmi_malloc(ctx, (size_t)nt, r * sizeof *scratch);
    DSMM_CHECK(ctx, scratch != NULL, DSMM_ERR_NOMEM, "estimate: scratch for %d threads", nt);
    part = dsmmi_calloc(ctx, (size_t)nblocks, stride * sizeof *part);
    DSMM_CHECK(ctx, part != NULL, DSMM_ERR_NOMEM, "estimate: %lld partial sums",
               (long long)nblocks);

#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nt)
#endif
    for (dsmm_idx j0 = 0; j0 < ncols; j0 += 1024)
        column_keys(keys, r, seed, j0, j0 + 1024 < ncols ? j0 + 1024 : ncols);

#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (dsmm_idx k0 = 0; k0 < B->nrows; k0 += 512) {
        dsmm_idx k1 = k0 + 512 < B->nrows ? k0 + 512 : B->nrows;
        b_minima(mins, keys, r, B, k0, k1);
    }

#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : flops) num_threads(nt)
#endif
    for (dsmm_idx blk = 0; blk < nblocks; blk++) {
#ifdef _OPENMP
        float *m = scratch + (size_t)omp_get_thread_num() * r;
#else
        float *m = scratch;
#endif
        flops += a_block(A, B, r, mins, blk, part + (size_t)blk * stride, m, small, row_nnz);
    }

    double sum[P_JACK] = {0};
    for (dsmm_idx blk = 0; blk < nblocks; blk++) {
        for (int s = 0; s < P_JACK; s++) sum[s] += part[(size_t)blk * stride + s];
    }
    // The sum of row estimates is kept unclamped: clamping rows to [1, cap] would bias the
    // total downwards where most rows reach cap (cf near 1). The total itself is clamped.
    double total = sum[P_EXACT] + sum[P_EST];
    double tlo = sum[P_EXACT] + sum[P_NEST], thi = sum[P_EXACT] + sum[P_CAP];
    total = total < tlo ? tlo : total > thi ? thi : total;

    /* Standard deviation of the total. Each X_i is a decreasing function of the same
     * independent keys, so Cov(X_i, X_j) >= 0 (Harris' inequality) and
     *     sum_i n_i^2 / (r - 2)  <=  Var(total)  <=  (sum_i n_i)^2 / (r - 2),
     * the left side when the rows reach disjoint columns, the right when they all reach the
     * same ones. Where in between depends on the overlap, which the r independent key slots
     * measure: the delete-one-slot jackknife over the slots,
     *     J_t = sum_i (r - 2) / (S_i - m_it),  v = (r - 1)/r sum_t (J_t - mean J)^2,
     * estimates Var(total) with the rows' covariances included. We report
     *     rel_err = sqrt(clamp(v, V_lo, V_hi)) / (E + sum_i X_i),
     * V_lo = sum_i X_i^2 / (r - 1) (unbiased for sum_i n_i^2 / (r - 2)), V_hi = (sum_i X_i)^2 /
     * (r - 2), E the exact rows' sum (they add no variance). It is the relative deviation of the
     * unclamped sum; clamping the total only brings it closer to the truth. Measured against
     * the spread over seeds it is within 0.85x..1.25x at r >= 4 on the test set (ER, R-MAT,
     * hep-th, bcsstk13, fe_4elt2, collins2007); tests/kernels/test_estimate.c checks it. */
    double rel_err = 0.0;
    if (sum[P_NEST] > 0.0) {
        double jmean = 0.0, v = 0.0;
        for (size_t t = 0; t < r; t++) {
            double jt = 0.0;
            for (dsmm_idx blk = 0; blk < nblocks; blk++)
                jt += part[(size_t)blk * stride + P_JACK + t];
            part[P_JACK + t] = jt; // block 0's slots now hold the totals
            jmean += jt;
        }
        jmean /= (double)r;
        for (size_t t = 0; t < r; t++) {
            double d = part[P_JACK + t] - jmean;
            v += d * d;
        }
        v *= rm1 / (double)r;
        double vlo = sum[P_VAR], vhi = sum[P_EST] * sum[P_EST] / rm2;
        v = v < vlo ? vlo : v > vhi ? vhi : v;
        rel_err = sqrt(v) / (sum[P_EXACT] + sum[P_EST]); // of the unclamped sum, >= its error
    }
    res->nnz = total;
    res->flops = (double)flops;
    res->rel_err = rel_err;
cleanup:
    key = dsmmi_free(ctx, key);
    mb = dsmmi_free(ctx, mb);
    scratch = dsmmi_free(ctx, scratch);
    part = dsmmi_free(ctx, part);
    return st;
}

dsmm_status dsmm_spgemm_estimate(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int keys,
                                 uint64_t seed, double *row_nnz, dsmm_spgemm_estimate_result *out)
{
    dsmm_status st = DSMM_OK;
    dsmm_spgemm_estimate_result res = {0};
    double t0 = dsmmi_wtime();

    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "estimate: invalid or destroyed context");
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "estimate: out must be non-NULL");
    *out = res;
    DSMM_CHECK(ctx, A != NULL && B != NULL, DSMM_ERR_ARG, "estimate: A and B must be non-NULL");
    DSMM_CHECK(ctx, keys == 0 || keys >= 3, DSMM_ERR_ARG,
               "estimate: %d keys (0 counts exactly; Cohen's estimator needs at least 3)", keys);
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM,
               "estimate: A is %lld x %lld but B is %lld x %lld (inner dimensions differ)",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    if (keys == 0) {
        DSMM_TRY(estimate_exact(ctx, A, B, row_nnz, &res));
    } else {
        DSMM_TRY(estimate_cohen(ctx, A, B, (size_t)keys, seed, row_nnz, &res));
    }
    res.keys = keys;
    res.cf = res.nnz > 0.0 ? res.flops / res.nnz : 0.0;
    res.seconds = dsmmi_wtime() - t0;
    *out = res;
cleanup:
    return st;
}
