// src/apps/mcl/mcl_local.c: one MCL iteration on rows held by this rank, fused as mcl does it:
// each column of M*M is expanded, pruned, rescaled and inflated before the next, so the
// unpruned product never exists (memory: two iterates plus a dense accumulator per thread).
// Columns of M are rows of the stored matrix (T = M^T in CSR), so column c of M*M is row c
// of T*T, Gustavson's row c. Arithmetic follows mcl's two expansion paths exactly: "dense"
// columns (flops * 10 >= N) add float products, the others exact double products; both sum
// in double over k ascending and store floats (docs/mcl.md "Exactness"). Heavy columns go
// four at a time through one accumulator (panels, below), which reads each shared row of G
// once and adds into the four columns with one vector operation, with the same sums.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "apps/apps.h"

void dsmmi_mcl_mat_free(dsmm_ctx *ctx, dsmmi_mcl_mat *M)
{
    M->rowptr = dsmmi_free(ctx, M->rowptr);
    M->col = dsmmi_free(ctx, M->col);
    M->val = dsmmi_free(ctx, M->val);
    M->nrows = M->nnz = 0;
    M->newof = M->orig = NULL;
}

dsmm_status dsmmi_mcl_mat_alloc(dsmm_ctx *ctx, dsmmi_mcl_mat *M, dsmm_idx nrows, dsmm_idx nnz)
{
    dsmm_status st = DSMM_OK;
    M->nrows = nrows;
    M->nnz = nnz;
    M->rowptr = dsmmi_calloc(ctx, (size_t)nrows + 1, sizeof *M->rowptr);
    M->col = dsmmi_malloc(ctx, (size_t)(nnz > 0 ? nnz : 1), sizeof *M->col);
    M->val = dsmmi_malloc(ctx, (size_t)(nnz > 0 ? nnz : 1), sizeof *M->val);
    DSMM_CHECK(ctx, M->rowptr && M->col && M->val, DSMM_ERR_NOMEM,
               "mcl: a matrix of %lld rows and %lld entries", (long long)nrows, (long long)nnz);
cleanup:
    if (st != DSMM_OK) dsmmi_mcl_mat_free(ctx, M);
    return st;
}

dsmm_status dsmmi_mcl_mat_from_tile(dsmm_ctx *ctx, const dsmm_csr *tile, dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, M, tile->nrows, tile->nnz));
    memcpy(M->rowptr, tile->rowptr, ((size_t)tile->nrows + 1) * sizeof *M->rowptr);
    for (dsmm_idx k = 0; k < tile->nnz; k++) {
        M->col[k] = tile->colidx32 ? tile->colidx32[k] : (int32_t)tile->colidx[k];
        M->val[k] = tile->val ? (float)((const double *)tile->val)[k] : 1.0f;
    }
cleanup:
    return st;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

// Per-thread state: the accumulator and the column being built.
typedef struct worker {
    double *acc, *acc_mem; // N * PANEL doubles, rows on cache lines (acc_mem aligned to 64
                           // bytes): a panel's accumulator, or, its first N, one column's
    uint64_t *seen;        // a bit per column
    int32_t *idx;          // the column being finished
    float *val, *scratch;
    dsmmi_mcl_iter_stats s;
} worker;

// Output of a contiguous block of rows; blocks are concatenated in order at the end.
typedef struct block {
    int32_t *col;
    float *val;
    dsmm_idx n, cap;
    int failed;
} block;

static int block_reserve(dsmm_ctx *ctx, block *b, dsmm_idx more)
{
    if (b->n + more <= b->cap) return 1;
    dsmm_idx cap = b->cap > 0 ? b->cap : 4096;
    while (cap < b->n + more) cap += cap / 2;
    int32_t *c = dsmmi_realloc(ctx, b->col, (size_t)cap, sizeof *c);
    if (c == NULL) return 0;
    b->col = c;
    float *v = dsmmi_realloc(ctx, b->val, (size_t)cap, sizeof *v);
    if (v == NULL) return 0;
    b->val = v;
    b->cap = cap;
    return 1;
}

// The row of G that holds vertex v (global, original label).
static inline dsmm_idx grow(const dsmmi_mcl_mat *M, int32_t v, dsmm_idx g0)
{
    return (M->newof != NULL ? (dsmm_idx)M->newof[v] : (dsmm_idx)v) - g0;
}

// Collects the non-zeros of acc[lo..hi) in index order into idx/val and zeroes them; returns
// the count. Branch-free: dense-path columns hold a fraction of N that makes a branch on each
// entry mispredict often. idx and val have 16 entries of slack past the count.
static dsmm_idx collect_scalar(double *restrict acc, dsmm_idx lo, dsmm_idx hi,
                               int32_t *restrict idx, float *restrict val)
{
    dsmm_idx n = 0;
    for (dsmm_idx j = lo; j < hi; j++) {
        double a = acc[j];
        idx[n] = (int32_t)j;
        val[n] = (float)a;
        n += a != 0.0;
        acc[j] = 0.0;
    }
    return n;
}

static void scatter_scalar(double *restrict acc, const int32_t *restrict gc,
                           const float *restrict gv, dsmm_idx len, float b)
{
    for (dsmm_idx q = 0; q < len; q++) acc[gc[q]] += (double)(float)(gv[q] * b);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_X86_SIMD 1 // AVX2 and AVX-512 loops, used when the CPU has them
#define AVX512        __attribute__((target("avx512f,avx512dq")))

// The entries of a0 (j..j+7) and a1 (j+8..j+15) that are not 0 (NEQ_UQ: NaN is kept, as in C),
// as floats with their indices, stored compressed at idx/val; returns how many.
AVX512 static inline dsmm_idx store16(__m512d a0, __m512d a1, dsmm_idx j, int32_t *restrict idx,
                                      float *restrict val)
{
    const __m512d zero = _mm512_setzero_pd();
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __mmask16 m = (__mmask16)(_mm512_cmp_pd_mask(a0, zero, _CMP_NEQ_UQ) |
                              (_mm512_cmp_pd_mask(a1, zero, _CMP_NEQ_UQ) << 8));
    __m512 v =
        _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(a0)), _mm512_cvtpd_ps(a1), 1);
    _mm512_storeu_ps(val, _mm512_maskz_compress_ps(m, v));
    _mm512_storeu_si512(
        idx, _mm512_maskz_compress_epi32(m, _mm512_add_epi32(iota, _mm512_set1_epi32((int)j))));
    return __builtin_popcount((unsigned)m);
}

// collect_scalar, 16 entries a step.
AVX512 static dsmm_idx collect_512(double *restrict acc, dsmm_idx lo, dsmm_idx hi,
                                   int32_t *restrict idx, float *restrict val)
{
    dsmm_idx n = 0, j = lo;
    const __m512d zero = _mm512_setzero_pd();
    for (; j + 16 <= hi; j += 16) {
        __m512d a0 = _mm512_loadu_pd(acc + j), a1 = _mm512_loadu_pd(acc + j + 8);
        dsmm_idx got = store16(a0, a1, j, idx + n, val + n);
        if (got != 0) {
            n += got;
            _mm512_storeu_pd(acc + j, zero);
            _mm512_storeu_pd(acc + j + 8, zero);
        }
    }
    return n + collect_scalar(acc, j, hi, idx + n, val + n);
}

// One row of G added into the accumulator as mcl's dense path does (float product, double
// sum), 8 products a step: the products are formed in a vector register and the adds stay
// scalar, in row order, so the sums are the same bit for bit.
__attribute__((target("avx2"))) static void scatter_avx2(double *restrict acc,
                                                         const int32_t *restrict gc,
                                                         const float *restrict gv, dsmm_idx len,
                                                         float b)
{
    dsmm_idx q = 0;
    const __m256 bb = _mm256_set1_ps(b);
    double t[8] __attribute__((aligned(32)));
    for (; q + 8 <= len; q += 8) {
        __m256 p = _mm256_mul_ps(_mm256_loadu_ps(gv + q), bb);
        _mm256_store_pd(t, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
        _mm256_store_pd(t + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
        const int32_t *g = gc + q;
        acc[g[0]] += t[0];
        acc[g[1]] += t[1];
        acc[g[2]] += t[2];
        acc[g[3]] += t[3];
        acc[g[4]] += t[4];
        acc[g[5]] += t[5];
        acc[g[6]] += t[6];
        acc[g[7]] += t[7];
    }
    scatter_scalar(acc, gc + q, gv + q, len - q, b);
}

// For each 4-bit mask, the lanes whose bit is set, in order, then lane 0 as filler: the
// permutation that packs a 4-lane vector's kept lanes at its front.
static const int32_t pack4[16][4] __attribute__((aligned(16))) = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};

// collect_scalar with AVX2, 4 entries a step: the kept entries (not 0; NaN kept, as in C) packed
// by a permutation from pack4 and stored 4 lanes wide (the slack past the count takes the rest),
// the count advanced by the mask's population. The scalar loop's count is a chain of dependent
// adds, one an entry, on which every store's address waits: on a Zen 1 VM it was 35% of
// ca-condmat's run, whose columns all take this dense path (docs/mcl.md). Same values: the
// same conversion to float, the same test.
__attribute__((target("avx2,popcnt"))) static dsmm_idx collect_avx2(double *restrict acc,
                                                                    dsmm_idx lo, dsmm_idx hi,
                                                                    int32_t *restrict idx,
                                                                    float *restrict val)
{
    dsmm_idx n = 0, j = lo;
    const __m256d zero = _mm256_setzero_pd();
    const __m128i iota = _mm_setr_epi32(0, 1, 2, 3);
    for (; j + 4 <= hi; j += 4) {
        __m256d a = _mm256_loadu_pd(acc + j);
        int m = _mm256_movemask_pd(_mm256_cmp_pd(a, zero, _CMP_NEQ_UQ));
        __m128i perm = _mm_load_si128((const __m128i *)pack4[m]);
        __m128 ix = _mm_castsi128_ps(_mm_add_epi32(iota, _mm_set1_epi32((int)j)));
        _mm_storeu_ps(val + n, _mm_permutevar_ps(_mm256_cvtpd_ps(a), perm));
        _mm_storeu_si128((__m128i *)(idx + n), _mm_castps_si128(_mm_permutevar_ps(ix, perm)));
        _mm256_storeu_pd(acc + j, zero);
        n += __builtin_popcount((unsigned)m);
    }
    return n + collect_scalar(acc, j, hi, idx + n, val + n);
}
#endif

// -1: not yet asked (pick_collect, before threads); use_512_rows: the AVX-512 panel rows.
static int use_512 = -1, use_avx2 = -1, use_512_rows = -1;

static void pick_collect(void)
{
#ifdef HAVE_X86_SIMD
    if (use_512 < 0) {
        __builtin_cpu_init();
        use_512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
        use_avx2 = __builtin_cpu_supports("avx2");
        use_512_rows = use_512;
    }
#endif
}

void dsmmi_mcl_simd(int level)
{
    use_512 = use_avx2 = use_512_rows = -1;
    pick_collect();
    if (level < 3) use_512_rows = 0;
    if (level < 2) use_512 = 0;
    if (level < 1) use_avx2 = 0;
}

static dsmm_idx collect(double *acc, dsmm_idx lo, dsmm_idx hi, int32_t *idx, float *val)
{
#ifdef HAVE_X86_SIMD
    if (use_512 > 0) return collect_512(acc, lo, hi, idx, val);
    if (use_avx2 > 0) return collect_avx2(acc, lo, hi, idx, val);
#endif
    return collect_scalar(acc, lo, hi, idx, val);
}

// ---- Panels: DSMMI_MCL_PANEL dense-path columns expanded together -------------------------
// The accumulator holds entry j of the panel's columns side by side (acc[j * PANEL + c]), so
// one entry of a row of G is one vector operation over the panel: the columns' k lists are
// merged, and a column without k multiplies by 0 (adding +0.0 leaves a sum of non-negative
// terms unchanged). Each column still sums over its own k ascending with mcl's float products,
// so the results are the same bit for bit; a row of G shared by the panel's columns (they are
// neighbours in breadth-first order) is read once instead of once per column.
#define PANEL DSMMI_MCL_PANEL

typedef float panel_f __attribute__((vector_size(PANEL * sizeof(float))));
typedef double panel_d __attribute__((vector_size(PANEL * sizeof(double))));

// One row of G added into the panel's columns, column c with factor bw[c].
static void panel_row(double *restrict acc, const int32_t *restrict gc, const float *restrict gv,
                      dsmm_idx len, const float *restrict bw)
{
    panel_f b;
    memcpy(&b, bw, sizeof b);
    for (dsmm_idx q = 0; q < len; q++) {
        double *a = acc + (size_t)gc[q] * PANEL;
        panel_d x;
        memcpy(&x, a, sizeof x);
        x += __builtin_convertvector(gv[q] * b, panel_d); // float products, exact widening
        memcpy(a, &x, sizeof x);
    }
}

#ifdef HAVE_X86_SIMD
_Static_assert(PANEL == 4, "panel_row_avx2 holds a panel row in one 4-double register");
// The same with AVX2, two entries a step: GCC's vector-extension form converted the four
// products in two halves and a merge; one vcvtps2pd does it here. Same products, same adds.
__attribute__((target("avx2"))) static void panel_row_avx2(double *restrict acc,
                                                           const int32_t *restrict gc,
                                                           const float *restrict gv, dsmm_idx len,
                                                           const float *restrict bw)
{
    const __m128 b = _mm_loadu_ps(bw);
    dsmm_idx q = 0;
    for (; q + 2 <= len; q += 2) {
        double *a0 = acc + (size_t)gc[q] * PANEL, *a1 = acc + (size_t)gc[q + 1] * PANEL;
        __m256d p0 = _mm256_cvtps_pd(_mm_mul_ps(_mm_broadcast_ss(gv + q), b));
        __m256d p1 = _mm256_cvtps_pd(_mm_mul_ps(_mm_broadcast_ss(gv + q + 1), b));
        _mm256_storeu_pd(a0, _mm256_add_pd(_mm256_loadu_pd(a0), p0));
        _mm256_storeu_pd(a1, _mm256_add_pd(_mm256_loadu_pd(a1), p1));
    }
    if (q < len) panel_row(acc, gc + q, gv + q, len - q, bw);
}
#endif

#ifdef HAVE_X86_SIMD
// panel_row_avx2 with AVX-512, four entries a step: the products of two entries are formed in
// one 8-float multiply (each entry's value broadcast to its four lanes), widened in one
// conversion and added to both entries' sums, loaded side by side, in one 8-double add. The
// same float products and double adds as panel_row_avx2, so the same bits; 0.87-0.97 of its
// time on the heaviest iterations of four bench networks (bench/mcl_expand, docs/mcl.md).
AVX512 static void panel_row_512(double *restrict acc, const int32_t *restrict gc,
                                 const float *restrict gv, dsmm_idx len, const float *restrict bw)
{
    const __m128 b = _mm_loadu_ps(bw);
    const __m256 b2 = _mm256_insertf128_ps(_mm256_castps128_ps256(b), b, 1);
    const __m256i lo = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m256i hi = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
    dsmm_idx q = 0;
    for (; q + 4 <= len; q += 4) {
        double *a0 = acc + (size_t)gc[q] * PANEL, *a1 = acc + (size_t)gc[q + 1] * PANEL;
        double *a2 = acc + (size_t)gc[q + 2] * PANEL, *a3 = acc + (size_t)gc[q + 3] * PANEL;
        __m256 g = _mm256_castps128_ps256(_mm_loadu_ps(gv + q));
        __m512d p01 = _mm512_cvtps_pd(_mm256_mul_ps(_mm256_permutevar8x32_ps(g, lo), b2));
        __m512d p23 = _mm512_cvtps_pd(_mm256_mul_ps(_mm256_permutevar8x32_ps(g, hi), b2));
        __m512d x01 =
            _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(a0)), _mm256_loadu_pd(a1), 1);
        __m512d x23 =
            _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd(a2)), _mm256_loadu_pd(a3), 1);
        x01 = _mm512_add_pd(x01, p01);
        x23 = _mm512_add_pd(x23, p23);
        _mm256_storeu_pd(a0, _mm512_castpd512_pd256(x01));
        _mm256_storeu_pd(a1, _mm512_extractf64x4_pd(x01, 1));
        _mm256_storeu_pd(a2, _mm512_castpd512_pd256(x23));
        _mm256_storeu_pd(a3, _mm512_extractf64x4_pd(x23, 1));
    }
    if (q < len) panel_row(acc, gc + q, gv + q, len - q, bw);
}
#endif

// Row k of G added into the accumulator: times b into a single column's (bw NULL), or into
// the panel's columns, column c times bw[c]; with AVX-512 (panel rows) or AVX2 when the CPU has
// it and dsmmi_mcl_simd allows it.
static void add_g_row(double *acc, const dsmmi_mcl_mat *G, dsmm_idx k, float b, const float *bw)
{
    const int32_t *gc = G->col + G->rowptr[k];
    const float *gv = G->val + G->rowptr[k];
    dsmm_idx len = G->rowptr[k + 1] - G->rowptr[k];
#ifdef HAVE_X86_SIMD
    if (bw != NULL && use_512_rows > 0) {
        panel_row_512(acc, gc, gv, len, bw);
        return;
    }
    if (use_avx2 > 0) {
        if (bw != NULL) {
            panel_row_avx2(acc, gc, gv, len, bw);
        } else {
            scatter_avx2(acc, gc, gv, len, b);
        }
        return;
    }
#endif
    if (bw != NULL) {
        panel_row(acc, gc, gv, len, bw);
    } else {
        scatter_scalar(acc, gc, gv, len, b);
    }
}

// Column c of the panel's accumulator: its non-zeros in index order into idx/val (the
// accumulator is left as it is; dsmmi_mcl_panel_clear zeroes it). Branch-free, like
// collect_scalar.
static dsmm_idx panel_take_scalar(const double *restrict acc, dsmm_idx j0, dsmm_idx N, int c,
                                  int32_t *restrict idx, float *restrict val)
{
    dsmm_idx n = 0;
    for (dsmm_idx j = j0; j < N; j++) {
        double a = acc[(size_t)j * PANEL + (size_t)c];
        idx[n] = (int32_t)j;
        val[n] = (float)a;
        n += a != 0.0;
    }
    return n;
}

#ifdef HAVE_X86_SIMD
// The same, 16 entries a step, gathered from the panel's rows (stride PANEL). Returns where it
// stopped (fewer than 16 rows left); *n the count.
AVX512 static dsmm_idx panel_take_512(const double *restrict acc, dsmm_idx N, int c,
                                      int32_t *restrict idx, float *restrict val, dsmm_idx *n)
{
    const __m256i off =
        _mm256_add_epi32(_mm256_setr_epi32(0, PANEL, 2 * PANEL, 3 * PANEL, 4 * PANEL, 5 * PANEL,
                                           6 * PANEL, 7 * PANEL),
                         _mm256_set1_epi32(c));
    dsmm_idx j = 0, cnt = 0;
    for (; j + 16 <= N; j += 16) {
        const double *a = acc + (size_t)j * PANEL;
        cnt += store16(_mm512_i32gather_pd(off, a, 8), _mm512_i32gather_pd(off, a + 8 * PANEL, 8),
                       j, idx + cnt, val + cnt);
    }
    *n = cnt;
    return j;
}
#endif

dsmm_idx dsmmi_mcl_panel_take(const double *acc, dsmm_idx N, int c, int32_t *idx, float *val)
{
    dsmm_idx j = 0, n = 0;
#ifdef HAVE_X86_SIMD
    if (use_512 > 0) j = panel_take_512(acc, N, c, idx, val, &n);
#endif
    return n + panel_take_scalar(acc, j, N, c, idx + n, val + n);
}

void dsmmi_mcl_panel_clear(double *acc, dsmm_idx N)
{
    memset(acc, 0, (size_t)N * PANEL * sizeof *acc);
}

static dsmm_idx col_flops(const dsmmi_mcl_mat *M, dsmm_idx r, const dsmmi_mcl_mat *G, dsmm_idx g0)
{
    dsmm_idx flops = 0;
    for (dsmm_idx p = M->rowptr[r]; p < M->rowptr[r + 1]; p++) {
        dsmm_idx k = grow(M, M->col[p], g0);
        flops += G->rowptr[k + 1] - G->rowptr[k];
    }
    return flops;
}

void dsmmi_mcl_work_bounds(const dsmmi_mcl_mat *M, const dsmmi_mcl_mat *G, dsmm_idx g0, int nb,
                           dsmm_idx *rflops, dsmm_idx *bnd)
{
    dsmm_idx nrows = M->nrows;
    double total = 0.0, acc = 0.0;
    for (dsmm_idx r = 0; r < nrows; r++) {
        dsmm_idx f = col_flops(M, r, G, g0);
        if (rflops != NULL) rflops[r] = f;
        total += (double)(f + M->rowptr[r + 1] - M->rowptr[r]);
    }
    bnd[0] = 0;
    int q = 1;
    for (dsmm_idx r = 0; r < nrows && q < nb; r++) {
        dsmm_idx f = rflops != NULL ? rflops[r] : col_flops(M, r, G, g0);
        acc += (double)(f + M->rowptr[r + 1] - M->rowptr[r]);
        while (q < nb && acc >= total * q / nb) bnd[q++] = r + 1;
    }
    while (q <= nb) bnd[q++] = nrows;
}

int dsmmi_mcl_dense_col(const dsmmi_mcl_mat *M, dsmm_idx r, dsmm_idx N, const dsmmi_mcl_mat *G,
                        dsmm_idx g0)
{
    return col_flops(M, r, G, g0) * 10 >= N;
}

// A column joins a panel when its flops reach this many times N: below it the panel's
// accumulator (N * PANEL doubles) costs more to scan than sharing the rows of G saves
// (measured on ca-condmat, whose columns carry 1.7 N flops in the heaviest iteration).
enum { PANEL_MIN_FLOPS_PER_N = 8 };

void dsmmi_mcl_expand_panel(const dsmmi_mcl_mat *M, dsmm_idx r0, int w, const dsmmi_mcl_mat *G,
                            dsmm_idx g0, double *acc)
{
    dsmm_idx cur[PANEL], end[PANEL];
    float bw[PANEL];
    for (int c = 0; c < PANEL; c++) {
        cur[c] = c < w ? M->rowptr[r0 + c] : 0;
        end[c] = c < w ? M->rowptr[r0 + c + 1] : 0;
    }
    for (;;) { // the k lists merged, ascending (each row's entries are in vertex order)
        int32_t v = INT32_MAX;
        for (int c = 0; c < w; c++)
            if (cur[c] < end[c] && M->col[cur[c]] < v) v = M->col[cur[c]];
        if (v == INT32_MAX) break;
        for (int c = 0; c < PANEL; c++) {
            int has = c < w && cur[c] < end[c] && M->col[cur[c]] == v;
            bw[c] = has ? M->val[cur[c]] : 0.0f;
            cur[c] += has;
        }
        add_g_row(acc, G, grow(M, v, g0), 0.0f, bw);
    }
}

// Expands column c (row c - row0 of the local rows) into w->idx/val; returns the count.
dsmm_idx dsmmi_mcl_expand_col(const dsmmi_mcl_mat *M, dsmm_idx r, dsmm_idx N,
                              const dsmmi_mcl_mat *G, dsmm_idx g0, double *acc, uint64_t *seen,
                              int32_t *idx, float *val, int *dense_path)
{
    // G holds the rows k of T that row r references (vertex v is row grow(v) of G). Column
    // numbers are original vertex labels throughout, so the accumulator is in mcl's order.
    if (dsmmi_mcl_dense_col(M, r, N, G, g0)) {
        // mcl's dense path: float products summed in double, the accumulator scanned whole
        // (the flops are at least N / 10, so the scan is cheap), exact zeros dropped.
        for (dsmm_idx p = M->rowptr[r]; p < M->rowptr[r + 1]; p++)
            add_g_row(acc, G, grow(M, M->col[p], g0), M->val[p], NULL);
        *dense_path = 1;
        return collect(acc, 0, N, idx, val);
    }
    dsmm_idx m = 0;
    for (dsmm_idx p = M->rowptr[r]; p < M->rowptr[r + 1]; p++) {
        dsmm_idx k = grow(M, M->col[p], g0);
        double b = (double)M->val[p];
        for (dsmm_idx q = G->rowptr[k]; q < G->rowptr[k + 1]; q++) {
            int32_t j = G->col[q];
            double term = (double)G->val[q] * b;
            uint64_t bit = (uint64_t)1 << (j & 63);
            if (!(seen[j >> 6] & bit)) {
                seen[j >> 6] |= bit;
                acc[j] = term;
                idx[m++] = j;
            } else {
                acc[j] += term;
            }
        }
    }
    dsmm_idx words = (N + 63) / 64;
    if (m > 32 && words <= 16 * m) {
        // Many entries: read them off the bitmap in order (a word per 64 columns) rather than
        // sorting them.
        dsmm_idx t = 0;
        for (dsmm_idx wd = 0; wd < words; wd++) {
            uint64_t x = seen[wd];
            seen[wd] = 0;
            while (x != 0) {
                int32_t j = (int32_t)(wd * 64 + __builtin_ctzll(x));
                x &= x - 1;
                idx[t] = j;
                val[t++] = (float)acc[j];
                acc[j] = 0.0;
            }
        }
        *dense_path = 0;
        return m;
    }
    if (m <= 32) { // insertion sort: sparse-path columns are short
        for (dsmm_idx a = 1; a < m; a++) {
            int32_t x = idx[a];
            dsmm_idx b = a;
            while (b > 0 && idx[b - 1] > x) {
                idx[b] = idx[b - 1];
                b--;
            }
            idx[b] = x;
        }
    } else {
        qsort(idx, (size_t)m, sizeof *idx, cmp_i32);
    }
    for (dsmm_idx t = 0; t < m; t++) {
        int32_t j = idx[t];
        seen[j >> 6] &= ~((uint64_t)1 << (j & 63));
        val[t] = (float)acc[j];
        acc[j] = 0.0;
    }
    *dense_path = 0;
    return m;
}

static int32_t vertex_of(const dsmmi_mcl_mat *M, dsmm_idx row0, dsmm_idx r)
{
    return M->orig != NULL ? M->orig[r] : (int32_t)(row0 + r);
}

// Measures, prunes, rescales and inflates the expanded column in me->idx/val and appends it to
// the block (its count into *count); non-zero when the block could not grow.
static int finish_col(dsmm_ctx *ctx, const dsmmi_mcl_rules *rules, double inflation, int32_t vertex,
                      worker *me, dsmm_idx n, block *bk, dsmm_idx *count)
{
    int32_t *idx = me->idx;
    float *val = me->val;
    float chaos = 0.0f;
    me->s.nnz_expand += n;
    n = dsmmi_mcl_prune_whole(rules, vertex, idx, val, n, me->scratch, &chaos);
    me->s.nnz_pruned += n;
    if ((double)chaos > me->s.chaos) me->s.chaos = (double)chaos;
    if (inflation > 0.0) n = dsmmi_mcl_inflate(val, n, inflation);
    if (!block_reserve(ctx, bk, n)) return 1;
    if (n > 0) { // an empty column (a vertex without loop and edges: --discard-loops=n) adds none
        memcpy(bk->col + bk->n, idx, (size_t)n * sizeof(int32_t));
        memcpy(bk->val + bk->n, val, (size_t)n * sizeof(float));
    }
    bk->n += n;
    *count = n;
    return 0;
}

dsmm_status dsmmi_mcl_iterate_local(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx row0,
                                    dsmm_idx N, const dsmmi_mcl_mat *G, dsmm_idx g0,
                                    const dsmmi_mcl_rules *rules, double inflation,
                                    dsmmi_mcl_mat *out, dsmmi_mcl_iter_stats *stats)
{
    dsmm_status st = DSMM_OK;
    int nt = dsmmi_threads(ctx);
    worker *w = NULL;
    block *blk = NULL;
    dsmm_idx *bnd = NULL, *rflops = NULL;
    dsmm_idx nrows = M->nrows;
    // Blocks of rows with equal flops, several per thread (taken dynamically) for balance;
    // each block's rows are written in order, so the result is the blocks concatenated, with
    // no per-row bookkeeping and no second copy of the iterate (the first block's arrays
    // grow into the result).
    int nb = nt == 1 ? 1 : 8 * nt;
    memset(out, 0, sizeof *out);
    memset(stats, 0, sizeof *stats);
    pick_collect();

    w = dsmmi_calloc(ctx, (size_t)nt, sizeof *w);
    blk = dsmmi_calloc(ctx, (size_t)nb, sizeof *blk);
    bnd = dsmmi_malloc(ctx, (size_t)nb + 1, sizeof *bnd);
    rflops = dsmmi_malloc(ctx, (size_t)nrows + 1, sizeof *rflops); // each column's flops
    DSMM_CHECK(ctx, w && blk && bnd && rflops, DSMM_ERR_NOMEM, "mcl: iteration bookkeeping");
    out->rowptr = dsmmi_calloc(ctx, (size_t)nrows + 1, sizeof *out->rowptr);
    DSMM_CHECK(ctx, out->rowptr != NULL, DSMM_ERR_NOMEM, "mcl: %lld row pointers",
               (long long)nrows);
    out->nrows = nrows;
    dsmmi_mcl_work_bounds(M, G, g0, nb, rflops, bnd);
    for (dsmm_idx r = 0; r < nrows; r++) stats->flops += (double)rflops[r];
    for (int t = 0; t < nt; t++) {
        w[t].acc_mem = dsmmi_calloc(ctx, (size_t)N * PANEL + 8, sizeof(double)); // kept zero
        w[t].acc = w[t].acc_mem;
        if (w[t].acc != NULL) w[t].acc += dsmmi_align_skip(w[t].acc, 64) / sizeof(double);
        w[t].seen = dsmmi_calloc(ctx, (size_t)N / 64 + 1, sizeof(uint64_t));
        w[t].scratch = dsmmi_malloc(ctx, (size_t)N + 1, sizeof(float));
        w[t].idx = dsmmi_malloc(ctx, (size_t)N + 16, sizeof(int32_t));
        w[t].val = dsmmi_malloc(ctx, (size_t)N + 16, sizeof(float));
        int ok = w[t].acc_mem && w[t].seen && w[t].scratch && w[t].idx && w[t].val;
        DSMM_CHECK(ctx, ok, DSMM_ERR_NOMEM, "mcl: accumulators of %lld columns for %d threads",
                   (long long)N, nt);
    }

#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (int b = 0; b < nb; b++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        worker *me = &w[t];
        block *bk = &blk[b];
        for (dsmm_idx r = bnd[b]; r < bnd[b + 1] && !bk->failed;) {
            // A run of heavy columns (all dense-path) goes as a panel; any other column alone.
            int pw = 0;
            while (pw < PANEL && r + pw < bnd[b + 1] && rflops[r + pw] >= PANEL_MIN_FLOPS_PER_N * N)
                pw++;
            if (pw >= 2) { // each column taken from the panel and finished in turn
                dsmmi_mcl_expand_panel(M, r, pw, G, g0, me->acc);
                for (int c = 0; c < pw && !bk->failed; c++) {
                    dsmm_idx n = dsmmi_mcl_panel_take(me->acc, N, c, me->idx, me->val);
                    me->s.dense_cols++;
                    if (finish_col(ctx, rules, inflation, vertex_of(M, row0, r + c), me, n, bk,
                                   &out->rowptr[r + c + 1]) != 0)
                        bk->failed = 1;
                }
                dsmmi_mcl_panel_clear(me->acc, N);
            } else {
                pw = 1;
                int dense = 0;
                dsmm_idx n = dsmmi_mcl_expand_col(M, r, N, G, g0, me->acc, me->seen, me->idx,
                                                  me->val, &dense);
                me->s.dense_cols += dense;
                if (finish_col(ctx, rules, inflation, vertex_of(M, row0, r), me, n, bk,
                               &out->rowptr[r + 1]) != 0)
                    bk->failed = 1;
            }
            r += pw;
        }
    }
    for (int b = 0; b < nb; b++)
        DSMM_CHECK(ctx, !blk[b].failed, DSMM_ERR_NOMEM, "mcl: the pruned columns of block %d", b);
    for (dsmm_idx r = 0; r < nrows; r++) out->rowptr[r + 1] += out->rowptr[r];
    out->nnz = out->rowptr[nrows];
    // The first block's arrays grow into the result (realloc moves pages, it does not copy
    // them twice); the others are appended and freed one by one.
    {
        dsmm_idx total = out->nnz > 0 ? out->nnz : 1;
        int32_t *c = dsmmi_realloc(ctx, blk[0].col, (size_t)total, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "mcl: the next iterate (%lld entries)",
                   (long long)out->nnz);
        blk[0].col = NULL;
        out->col = c;
        float *v = dsmmi_realloc(ctx, blk[0].val, (size_t)total, sizeof *v);
        DSMM_CHECK(ctx, v != NULL, DSMM_ERR_NOMEM, "mcl: the next iterate (%lld entries)",
                   (long long)out->nnz);
        blk[0].val = NULL;
        out->val = v;
        dsmm_idx off = blk[0].n;
        for (int b = 1; b < nb; b++) {
            if (blk[b].n > 0) {
                // The block's pages go back as they are copied: a plain memcpy raised the
                // run's peak by the largest block (R-MAT 14, iteration 2: 125.5 -> 131.1 MB).
                dsmmi_move_release(out->col + off, blk[b].col, (size_t)blk[b].n * sizeof(int32_t));
                dsmmi_move_release(out->val + off, blk[b].val, (size_t)blk[b].n * sizeof(float));
            }
            off += blk[b].n;
            blk[b].col = dsmmi_free(ctx, blk[b].col);
            blk[b].val = dsmmi_free(ctx, blk[b].val);
        }
    }
    for (int t = 0; t < nt; t++) {
        stats->nnz_expand += w[t].s.nnz_expand;
        stats->nnz_pruned += w[t].s.nnz_pruned;
        stats->dense_cols += w[t].s.dense_cols;
        if (w[t].s.chaos > stats->chaos) stats->chaos = w[t].s.chaos;
    }
cleanup:
    if (w != NULL)
        for (int t = 0; t < nt; t++) {
            dsmmi_free(ctx, w[t].acc_mem);
            dsmmi_free(ctx, w[t].seen);
            dsmmi_free(ctx, w[t].idx);
            dsmmi_free(ctx, w[t].val);
            dsmmi_free(ctx, w[t].scratch);
        }
    if (blk != NULL)
        for (int b = 0; b < nb; b++) {
            dsmmi_free(ctx, blk[b].col);
            dsmmi_free(ctx, blk[b].val);
        }
    dsmmi_free(ctx, w);
    dsmmi_free(ctx, blk);
    dsmmi_free(ctx, bnd);
    dsmmi_free(ctx, rflops);
    if (st != DSMM_OK) dsmmi_mcl_mat_free(ctx, out);
    return st;
}

dsmm_status dsmmi_mcl_relabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M, int32_t **newof, int32_t **orig)
{
    dsmm_status st = DSMM_OK;
    int32_t *nw = NULL, *og = NULL;
    dsmmi_mcl_mat R = {0};
    dsmm_idx N = M->nrows;
    *newof = *orig = NULL;
    nw = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *nw);
    og = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *og);
    DSMM_CHECK(ctx, nw && og, DSMM_ERR_NOMEM, "mcl: labels of %lld vertices", (long long)N);
    for (dsmm_idx v = 0; v < N; v++) nw[v] = -1;
    // Breadth-first from each unvisited vertex in turn; og doubles as the queue.
    dsmm_idx next = 0;
    for (dsmm_idx s = 0; s < N; s++) {
        if (nw[s] >= 0) continue;
        dsmm_idx head = next;
        nw[s] = (int32_t)next;
        og[next++] = (int32_t)s;
        while (head < next) {
            int32_t v = og[head++];
            for (dsmm_idx p = M->rowptr[v]; p < M->rowptr[v + 1]; p++) {
                int32_t u = M->col[p];
                if (nw[u] < 0) {
                    nw[u] = (int32_t)next;
                    og[next++] = u;
                }
            }
        }
    }
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, &R, N, M->nnz));
    for (dsmm_idx r = 0; r < N; r++) {
        int32_t v = og[r];
        dsmm_idx len = M->rowptr[v + 1] - M->rowptr[v];
        R.rowptr[r + 1] = R.rowptr[r] + len;
        memcpy(R.col + R.rowptr[r], M->col + M->rowptr[v], (size_t)len * sizeof *R.col);
        memcpy(R.val + R.rowptr[r], M->val + M->rowptr[v], (size_t)len * sizeof *R.val);
    }
    R.newof = nw;
    R.orig = og;
    dsmmi_mcl_mat_free(ctx, M);
    *M = R;
    R = (dsmmi_mcl_mat){0};
    *newof = nw;
    *orig = og;
    nw = og = NULL;
cleanup:
    dsmmi_mcl_mat_free(ctx, &R);
    dsmmi_free(ctx, nw);
    dsmmi_free(ctx, og);
    return st;
}

dsmm_status dsmmi_mcl_unlabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mcl_mat R = {0};
    dsmm_idx N = M->nrows;
    if (M->newof == NULL) return DSMM_OK;
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, &R, N, M->nnz));
    for (dsmm_idx v = 0; v < N; v++) {
        int32_t r = M->newof[v];
        dsmm_idx len = M->rowptr[r + 1] - M->rowptr[r];
        R.rowptr[v + 1] = R.rowptr[v] + len;
        memcpy(R.col + R.rowptr[v], M->col + M->rowptr[r], (size_t)len * sizeof *R.col);
        memcpy(R.val + R.rowptr[v], M->val + M->rowptr[r], (size_t)len * sizeof *R.val);
    }
    dsmmi_mcl_mat_free(ctx, M);
    *M = R;
    R = (dsmmi_mcl_mat){0};
cleanup:
    dsmmi_mcl_mat_free(ctx, &R);
    return st;
}
