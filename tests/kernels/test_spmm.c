// tests/kernels/test_spmm.c: local SpMM (dsmm_csr_spmm, src/kernels/spmm*.c): every kernel
// (auto, row, col, ref) in both orientations at 1 and 2 threads against the long-double
// reference of tests/common/ref.c, for k across the kernels' specialised and blocked widths
// with remainders, alpha/beta (NaN in what must not be read), leading dimensions and unaligned
// sub-blocks (padding must stay untouched), edge shapes and random inputs from several
// generators, every value type and column width of A, unsorted rows with repeated columns;
// results bitwise the same at every thread count; exact info counts; bad input, memory
// budgets and allocation failures; the STREAM triad; kernel names; the 64-byte-vector (AVX-512)
// instances against the 32-byte ones; the column-wise kernel on tiles (dsmm_spmm_tiles_create)
// in every case above, bitwise equal to the column-wise kernel on one thread; the row-wise
// kernel on rows stored by length (dsmm_spmm_rows_create), bitwise equal to it on A.
#define _DEFAULT_SOURCE // posix_memalign
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/kernels.h"
#include "ref.h"

static const dsmm_spmm_alg algs[] = {DSMM_SPMM_AUTO, DSMM_SPMM_ROW, DSMM_SPMM_COL, DSMM_SPMM_REF};
#define NALGS ((int)(sizeof algs / sizeof algs[0]))

// The value the padding of C holds before a call; it must hold it afterwards, bit for bit.
#define SENTINEL (-1234.5)

static uint64_t seed_at(uint64_t k)
{
    return test_seed() * 0x9e3779b97f4a7c15ULL + k;
}

/* ---- dense operands ---------------------------------------------------------------------- */

/* A dense operand in a buffer of exactly the values its entries span, (rows - 1) * ld + cols
 * after `off` leading values, so ASan and valgrind flag any access past the last entry and
 * off > 0 gives a pointer that is not vector-aligned. The buffer starts on a 64-byte boundary:
 * with off = 0 and 64-byte rows, AVX-512 CPUs run the 64-byte-vector instances. ld - cols padding
 * values follow every row but the last. val is NULL when rows * ld == 0 (allowed by
 * dsmm_dense_wrap). */
typedef struct buf {
    dsmm_idx rows, cols, ld, off;
    dsmm_type type;
    size_t count; // values from base, off included
    void *base;   // the allocation
    void *val;    // base + off values: entry (i, j) at val[i * ld + j]
} buf;

static size_t type_size(dsmm_type t)
{
    return t == DSMM_DOUBLE ? sizeof(double) : sizeof(float);
}

static int buf_make(buf *b, dsmm_idx rows, dsmm_idx cols, dsmm_idx ld, dsmm_idx off, dsmm_type type)
{
    memset(b, 0, sizeof *b);
    b->rows = rows;
    b->cols = cols;
    b->ld = ld;
    b->off = off;
    b->type = type;
    if (rows * ld == 0) return TEST_PASS;
    size_t span = rows > 0 && cols > 0 ? (size_t)((rows - 1) * ld + cols) : 0;
    b->count = (size_t)off + span;
    // one value at least, so that a k = 0 operand with padding still has an address
    void *base = NULL;
    CHECK(posix_memalign(&base, 64, (b->count ? b->count : 1) * type_size(type)) == 0);
    b->base = base;
    b->val = (char *)b->base + (size_t)off * type_size(type);
    return TEST_PASS;
}

static void buf_free(buf *b)
{
    free(b->base);
    memset(b, 0, sizeof *b);
}

static void buf_set_raw(buf *b, size_t t, double x)
{
    if (b->type == DSMM_DOUBLE)
        ((double *)b->base)[t] = x;
    else
        ((float *)b->base)[t] = (float)x;
}

static double buf_get_raw(const buf *b, size_t t)
{
    return b->type == DSMM_DOUBLE ? ((const double *)b->base)[t]
                                  : (double)((const float *)b->base)[t];
}

// Value t of the allocation is an entry (not padding or a leading value).
static int buf_is_entry(const buf *b, size_t t)
{
    if (t < (size_t)b->off) return 0;
    return (dsmm_idx)((t - (size_t)b->off) % (size_t)b->ld) < b->cols;
}

// Entries uniform in [-1, 1) (rounded to the type, so rounding in the kernels is real), or NaN
// when nan_entries; padding and leading values set to pad.
static void buf_fill(buf *b, dsmm_rng *g, int nan_entries, double pad)
{
    for (size_t t = 0; t < b->count; t++) {
        if (!buf_is_entry(b, t))
            buf_set_raw(b, t, pad);
        else
            buf_set_raw(b, t, nan_entries ? NAN : 2 * dsmm_rng_uniform(g) - 1);
    }
}

static double buf_at(const buf *b, dsmm_idx i, dsmm_idx j)
{
    return buf_get_raw(b, (size_t)b->off + (size_t)(i * b->ld + j));
}

static int buf_same_bits(const buf *x, const buf *y)
{
    return x->count == y->count &&
           (x->count == 0 || memcmp(x->base, y->base, x->count * type_size(x->type)) == 0);
}

static int buf_copy(buf *dst, const buf *src)
{
    if (buf_make(dst, src->rows, src->cols, src->ld, src->off, src->type) != TEST_PASS)
        return TEST_FAIL;
    if (src->count) memcpy(dst->base, src->base, src->count * type_size(src->type));
    return TEST_PASS;
}

static int buf_wrap(dsmm_ctx *ctx, buf *b, dsmm_dense **D)
{
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, b->rows, b->cols, b->ld, b->val, b->type, D));
    return TEST_PASS;
}

/* ---- one multiply checked ---------------------------------------------------------------- */

typedef struct spmm_case {
    dsmm_type type; // of B and C
    dsmm_idx k;
    double alpha, beta;
    dsmm_idx ldb_pad, ldc_pad; // ldb = k + ldb_pad, ldc = k + ldc_pad
    dsmm_idx off;              // values before B's and C's first entry
    int max_threads;           // 1..max_threads for ROW, COL and AUTO (0: 2)
    dsmm_idx k_block;          // opts.k_block (0: auto)
} spmm_case;

static void case_init(spmm_case *c, dsmm_type type, dsmm_idx k, double alpha, double beta)
{
    memset(c, 0, sizeof *c);
    c->type = type;
    c->k = k;
    c->alpha = alpha;
    c->beta = beta;
}

static uint64_t case_counter;

// Tiles for the product under test (dsmm_spmm_tiles_create), passed by run_checked; NULL: none.
static const dsmm_spmm_tiles *use_tiles;
// Rows stored by length (dsmm_spmm_rows_create), passed by run_checked; NULL: none.
static const dsmm_spmm_rows *use_rows;

/* got against the reference: every entry within
 *   max(base, 2 (terms + 3) u) * scale,
 * base 1e-5 (float) or 1e-12 (double), u the unit roundoff: a sum of `terms` products plus
 * the alpha and beta steps rounds at most terms + 3 times, each by u relative to scale, so
 * the bound holds for any summation order (threads, blocking, FMA). scale == 0 asks for an
 * exact 0. Padding and leading values are compared bit for bit with `before`. */
static int check_values(const buf *got, const buf *before, const double *want, const double *scale,
                        const dsmm_idx *terms, const char *what)
{
    double base = got->type == DSMM_FLOAT ? 1e-5 : 1e-12;
    double u = got->type == DSMM_FLOAT ? ldexp(1.0, -24) : ldexp(1.0, -53);
    dsmm_idx m = got->rows, k = got->cols;
    for (dsmm_idx i = 0; i < m; i++)
        for (dsmm_idx j = 0; j < k; j++) {
            size_t at = (size_t)(i * k + j);
            double g = buf_at(got, i, j), tol = fmax(base, 2.0 * (double)(terms[i] + 3) * u);
            CHECK_MSG(fabs(g - want[at]) <= tol * scale[at],
                      "%s: C(%lld, %lld) = %.17g, reference %.17g (scale %g, %lld terms)", what,
                      (long long)i, (long long)j, g, want[at], scale[at], (long long)terms[i]);
        }
    size_t w = type_size(got->type);
    for (size_t t = 0; t < got->count; t++) {
        if (buf_is_entry(got, t)) continue;
        CHECK_MSG(memcmp((char *)got->base + t * w, (char *)before->base + t * w, w) == 0,
                  "%s: padding value %zu of C changed from %g to %g", what, t,
                  buf_get_raw(before, t), buf_get_raw(got, t));
    }
    return TEST_PASS;
}

// The kernel that runs for alg (AUTO: COL when transposing, else ROW).
static dsmm_spmm_alg resolved(dsmm_spmm_alg alg, int trans)
{
    if (alg != DSMM_SPMM_AUTO) return alg;
    if (use_tiles != NULL) return DSMM_SPMM_COL; // AUTO with tiles
    return trans ? DSMM_SPMM_COL : DSMM_SPMM_ROW;
}

static int check_info(const dsmm_csr *A, const spmm_case *c, int trans, dsmm_spmm_alg alg,
                      int threads, const dsmm_spmm_info *info, const char *what)
{
    dsmm_idx m = trans ? A->ncols : A->nrows, n = trans ? A->nrows : A->ncols;
    CHECK_MSG(info->alg == resolved(alg, trans), "%s: info.alg %s", what,
              dsmm_spmm_alg_name(info->alg));
    double flops = 2.0 * (double)A->nnz * (double)c->k;
    CHECK_MSG(info->flops == flops, "%s: info.flops %.17g, expected %.17g", what, info->flops,
              flops);
    double bytes = dsmm_spmm_bytes(A, trans, c->k, c->type, c->beta);
    CHECK_MSG(bytes > 0 && info->bytes == bytes, "%s: info.bytes %.17g, dsmm_spmm_bytes %.17g",
              what, info->bytes, bytes);
    CHECK_MSG(info->threads >= 1 && info->threads <= threads, "%s: info.threads %d", what,
              info->threads);
    CHECK_MSG(isfinite(info->seconds) && info->seconds >= 0, "%s: info.seconds %g", what,
              info->seconds);
    CHECK_MSG(isfinite(info->gbps) && info->gbps >= 0, "%s: info.gbps %g", what, info->gbps);
    // A kernel that reads the other orientation, or values of another type, needs scratch.
    int runs = m > 0 && n > 0 && c->k > 0 && A->nnz > 0 && c->alpha != 0.0;
    int other = (info->alg == DSMM_SPMM_ROW && trans) || (info->alg == DSMM_SPMM_COL && !trans);
    int convert = A->type != DSMM_PATTERN && A->type != c->type;
    // tiles hold op(A)^T in C's type, rows A's rows in C's type
    if (runs && (other || convert) && use_tiles == NULL && use_rows == NULL)
        CHECK_MSG(info->workspace_bytes > 0, "%s: no workspace reported for a %s", what,
                  other ? "transpose" : "value conversion");
    // Passes over the sparse operand: ceil(k / k_block) when the kernel runs at all.
    if (runs) {
        dsmm_idx kb = c->k_block > 0 && c->k_block < c->k ? c->k_block : c->k;
        if (c->k_block <= 0 && info->alg != DSMM_SPMM_REF) kb = info->k_block; // auto
        if (use_tiles != NULL) kb = c->k; // tiles take all of k in one pass
        CHECK_MSG(kb >= 1 && info->k_block == kb && info->passes == (int)((c->k + kb - 1) / kb),
                  "%s: info.k_block %lld, passes %d (k %lld, asked %lld)", what,
                  (long long)info->k_block, info->passes, (long long)c->k, (long long)c->k_block);
    } else {
        CHECK_MSG(info->passes == 0, "%s: %d passes for a product with nothing to do", what,
                  info->passes);
    }
    return TEST_PASS;
}

// The column-wise kernel, on a slice of k columns at `threads` threads, splits S's rows into
// private copies of C (spmm_col.c) rather than owning ranges of C's rows: short rows of B,
// small copies.
static int col_private_k(const dsmm_csr *A, int trans, dsmm_idx k, dsmm_type type, int threads)
{
    dsmm_idx srows = trans ? A->nrows : A->ncols, m = trans ? A->ncols : A->nrows;
    if (threads < 2 || srows == 0 || k == 0) return 0;
    double copies = (double)(threads - 1) * (double)m * (double)k * (double)type_size(type);
    return (double)k * (double)type_size(type) <= dsmmi_spmm_tune.col_split_bytes &&
           copies <= (double)dsmmi_spmm_tune.col_private_max;
}

// Any slice of case c (k_block wide, and the remainder) takes private copies.
static int col_private(const dsmm_csr *A, int trans, const spmm_case *c, int threads)
{
    dsmm_idx kb = c->k_block > 0 && c->k_block < c->k ? c->k_block : c->k;
    if (kb == 0) return 0;
    return col_private_k(A, trans, kb, c->type, threads) ||
           col_private_k(A, trans, c->k % kb, c->type, threads);
}

// One product by alg at `threads` threads into *got (a copy of c0, freed by the caller), its
// info and values checked; *threads_ran (may be NULL) = info.threads.
static int run_checked(dsmm_ctx *ctx, const dsmm_csr *A, const spmm_case *c, int trans,
                       dsmm_spmm_alg alg, int threads, const dsmm_dense *Bd, const buf *c0,
                       const double *want, const double *scale, const dsmm_idx *terms, buf *got,
                       int *threads_ran, const char *label)
{
    dsmm_dense *Cd = NULL;
    if (buf_copy(got, c0) != TEST_PASS || buf_wrap(ctx, got, &Cd) != TEST_PASS) return TEST_FAIL;
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    o.alg = alg;
    o.transpose_a = trans;
    o.alpha = c->alpha;
    o.beta = c->beta;
    o.k_block = c->k_block;
    o.tiles = use_tiles;
    o.rows = use_rows;
    dsmm_spmm_info info;
    memset(&info, 0x5a, sizeof info); // every field must be written
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, threads));
    dsmm_status st = dsmm_csr_spmm(ctx, A, Bd, Cd, &o, &info);
    dsmm_dense_destroy(&Cd);
    CHECK_MSG(st == DSMM_OK, "%s: %s", label, dsmm_ctx_last_error(ctx));
    if (check_info(A, c, trans, alg, threads, &info, label) != TEST_PASS) return TEST_FAIL;
    if (check_values(got, c0, want, scale, terms, label) != TEST_PASS) return TEST_FAIL;
    if (threads_ran) *threads_ran = info.threads;
    return TEST_PASS;
}

// One orientation: the reference once, then every kernel at every thread count.
static int check_orientation(dsmm_ctx *ctx, const dsmm_csr *A, const spmm_case *c, int trans,
                             const char *what)
{
    dsmm_idx m = trans ? A->ncols : A->nrows, n = trans ? A->nrows : A->ncols, k = c->k;
    int max_t = c->max_threads ? c->max_threads : 2;
    buf b, c0, bsave, got, first[NALGS];
    memset(first, 0, sizeof first);
    dsmm_dense *Bd = NULL, *C0d = NULL;
    dsmm_rng g;
    dsmm_rng_init(&g, seed_at(0x5a33 + case_counter++), 11);
    // NaN where the call must not read: all of B when alpha == 0, C when beta == 0
    if (buf_make(&b, n, k, k + c->ldb_pad, c->off, c->type) != TEST_PASS) return TEST_FAIL;
    buf_fill(&b, &g, c->alpha == 0.0, NAN);
    if (buf_make(&c0, m, k, k + c->ldc_pad, c->off, c->type) != TEST_PASS) return TEST_FAIL;
    buf_fill(&c0, &g, c->beta == 0.0, SENTINEL);
    if (buf_copy(&bsave, &b) != TEST_PASS) return TEST_FAIL;
    size_t cells = (size_t)(m * k) + 1;
    double *want = malloc(cells * sizeof *want), *scale = malloc(cells * sizeof *scale);
    dsmm_idx *terms = malloc(((size_t)m + 1) * sizeof *terms);
    CHECK(want != NULL && scale != NULL && terms != NULL);
    if (buf_wrap(ctx, &b, &Bd) != TEST_PASS || buf_wrap(ctx, &c0, &C0d) != TEST_PASS)
        return TEST_FAIL;
    CHECK_OK(ctx, ref_spmm(A, trans, c->alpha, Bd, c->beta, C0d, want, scale, terms));

    for (int a = 0; a < NALGS; a++) {
        for (int t = 1; t <= max_t; t++) {
            if (algs[a] == DSMM_SPMM_REF && t > 1) continue;
            char label[320];
            snprintf(label, sizeof label,
                     "%s [%s%s, %s, k %lld, alpha %g, beta %g, ldb %lld, ldc %lld, off %lld, %d "
                     "thread%s]",
                     what, dsmm_spmm_alg_name(algs[a]), trans ? ", A^T" : "",
                     dsmm_type_name(c->type), (long long)k, c->alpha, c->beta, (long long)b.ld,
                     (long long)c0.ld, (long long)c->off, t, t > 1 ? "s" : "");
            int threads_ran = 0;
            if (run_checked(ctx, A, c, trans, algs[a], t, Bd, &c0, want, scale, terms, &got,
                            &threads_ran, label) != TEST_PASS)
                return TEST_FAIL;
            CHECK_MSG(buf_same_bits(&b, &bsave), "%s: B changed", label);
            if (t == 1) {
                first[a] = got;
                memset(&got, 0, sizeof got);
                continue;
            }
            if (resolved(algs[a], trans) != DSMM_SPMM_COL ||
                !col_private(A, trans, c, threads_ran)) {
                CHECK_MSG(buf_same_bits(&got, &first[a]),
                          "%s: C differs bitwise from the 1-thread result", label);
            } else {
                // Threads split S's rows into private copies of C: sums in another order than
                // at 1 thread (within the bound check_values applies), but the same bits at
                // this thread count every time.
                buf again;
                if (run_checked(ctx, A, c, trans, algs[a], t, Bd, &c0, want, scale, terms, &again,
                                NULL, label) != TEST_PASS)
                    return TEST_FAIL;
                CHECK_MSG(buf_same_bits(&got, &again), "%s: C differs bitwise between two runs",
                          label);
                buf_free(&again);
                // With owned ranges of C forced (col_split_bytes 0): the 1-thread bits.
                double keep = dsmmi_spmm_tune.col_split_bytes;
                dsmmi_spmm_tune.col_split_bytes = 0;
                int rc = run_checked(ctx, A, c, trans, algs[a], t, Bd, &c0, want, scale, terms,
                                     &again, NULL, label);
                dsmmi_spmm_tune.col_split_bytes = keep;
                if (rc != TEST_PASS) return TEST_FAIL;
                CHECK_MSG(buf_same_bits(&again, &first[a]),
                          "%s: C (owned ranges) differs bitwise from the 1-thread result", label);
                buf_free(&again);
            }
            buf_free(&got);
        }
    }
    // Tiles (docs/kernels.md, "Column-wise on tiles"): the column-wise kernel's 1-thread bits at
    // every thread count, with the default height, one row a tile, a few rows a tile, the rows
    // of B as 64-bit indices, entries standing alone or in segments (runs of one row of S) or
    // grouped by row of C (the rows layout: one window of B's rows, windows of one row, of
    // 64 and 1,000 bytes), C built in place or in tile buffers streamed out; AUTO with tiles
    // runs them too.
    CHECK(algs[2] == DSMM_SPMM_COL);
    static const struct {
        size_t bytes;  // col_tile_bytes (0: default)
        int src64;     // rows of B as 64-bit indices
        int runs;      // col_tile_runs
        int stream;    // tile buffers streamed out, whatever C's size (row_stream_min 1)
        int rows;      // col_tile_rows
        size_t window; // col_tile_window
    } tv[] = {{0, 0, -1, 0, 0, 0},  {1, 0, 0, 0, 0, 0},   {200, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0},
              {0, 0, 1, 0, 0, 0},   {200, 1, 1, 0, 0, 0}, {1, 0, 1, 0, 0, 0},   {0, 0, -1, 1, 0, 0},
              {1, 0, 0, 1, 0, 0},   {200, 0, 1, 1, 0, 0}, {0, 0, -1, 0, 1, 0},  {0, 0, 0, 0, 1, 0},
              {1, 0, 0, 0, 1, 0},   {200, 0, 0, 0, 1, 1}, {0, 1, 0, 0, 1, 64},  {0, 0, 0, 1, 1, 0},
              {200, 1, 0, 1, 1, 1}, {0, 0, 0, 0, 1, 1000}};
    for (int v = 0; v < (int)(sizeof tv / sizeof tv[0]); v++) {
        dsmmi_spmm_tuning keep = dsmmi_spmm_tune;
        if (tv[v].bytes > 0) dsmmi_spmm_tune.col_tile_bytes = tv[v].bytes;
        if (tv[v].src64) dsmmi_spmm_tune.col_tile_src32_max = -1;
        dsmmi_spmm_tune.col_tile_runs = tv[v].runs;
        dsmmi_spmm_tune.col_tile_rows = tv[v].rows;
        dsmmi_spmm_tune.col_tile_window = tv[v].window;
        dsmm_spmm_tiles *tl = NULL;
        dsmm_status st = dsmm_spmm_tiles_create(ctx, A, trans, k > 0 ? k : 1, c->type, &tl);
        dsmmi_spmm_tune = keep;
        size_t keep_stream = dsmmi_spmm_tune.row_stream_min;
        double keep_stream_row = dsmmi_spmm_tune.col_tile_stream_row;
        if (tv[v].stream) {
            dsmmi_spmm_tune.row_stream_min = 1;
            dsmmi_spmm_tune.col_tile_stream_row = 0;
        }
        CHECK_MSG(st == DSMM_OK, "%s: tiles: %s", what, dsmm_ctx_last_error(ctx));
        CHECK(dsmm_spmm_tiles_bytes(tl) > 0 && (!tv[v].src64 || tl->src != NULL));
        CHECK(tv[v].rows != 0 || tl->nruns == 0);
        CHECK(tv[v].rows != 1 || tl->nruns > 0 || A->nnz == 0);
        CHECK(tv[v].runs != 0 || tl->nseg == 0);
        CHECK(tv[v].runs != 1 || tl->nseg > 0 || A->nnz == 0 || tl->nruns > 0);
        // one row of B a window, unless the windows would outnumber the entries (then fewer)
        if (tv[v].rows == 1 && tv[v].window == 1 && A->nnz > 0)
            CHECK(tl->window == 1 || (double)tl->ntiles * (double)tl->n > 4.0 * (double)A->nnz);
        if (tv[v].bytes == 1) CHECK(tl->height == 1);
        use_tiles = tl;
        for (int t = 1; t <= max_t; t++) {
            char label[320];
            snprintf(label, sizeof label,
                     "%s [tiles %d of height %lld, %s%s, %s, k %lld, alpha %g, beta %g, %d "
                     "thread%s]",
                     what, v, (long long)tl->height, t == 2 ? "auto" : "col", trans ? ", A^T" : "",
                     dsmm_type_name(c->type), (long long)k, c->alpha, c->beta, t, t > 1 ? "s" : "");
            dsmm_spmm_alg alg = t == 2 ? DSMM_SPMM_AUTO : DSMM_SPMM_COL;
            if (run_checked(ctx, A, c, trans, alg, t, Bd, &c0, want, scale, terms, &got, NULL,
                            label) != TEST_PASS) {
                use_tiles = NULL;
                dsmmi_spmm_tune.row_stream_min = keep_stream;
                dsmmi_spmm_tune.col_tile_stream_row = keep_stream_row;
                dsmm_spmm_tiles_destroy(&tl);
                return TEST_FAIL;
            }
            CHECK_MSG(buf_same_bits(&got, &first[2]),
                      "%s: C differs bitwise from the column-wise kernel's 1-thread result", label);
            buf_free(&got);
        }
        use_tiles = NULL;
        dsmmi_spmm_tune.row_stream_min = keep_stream;
        dsmmi_spmm_tune.col_tile_stream_row = keep_stream_row;
        dsmm_spmm_tiles_destroy(&tl);
        CHECK(tl == NULL);
    }

    // Rows stored by length (dsmm_spmm_rows_create, A * B only): the plain row-wise kernel's
    // 1-thread bits at every thread count, by ROW (1 thread) and AUTO (2), with the kernel's
    // default paths, the odd entry always under a mask or always by the branch, and the k = 1
    // gather off; the rows always stored by length (the small inputs here would not be),
    // kept in A's order, and as the library decides.
    CHECK(algs[1] == DSMM_SPMM_ROW);
    static const struct {
        int odd_mask; // row_odd_mask (-1: default)
        int gather;   // row_gather (-1: default)
        int reorder;  // rows_reorder
    } rv[] = {{-1, -1, 1}, {2, -1, 1}, {0, -1, 1}, {-1, 0, 1}, {-1, -1, 0}, {-1, -1, -1}};
    for (int v = 0; !trans && v < (int)(sizeof rv / sizeof rv[0]); v++) {
        dsmm_spmm_rows *rw = NULL;
        dsmmi_spmm_tune.rows_reorder = rv[v].reorder;
        dsmm_status rst = dsmm_spmm_rows_create(ctx, A, k > 0 ? k : 1, c->type, &rw);
        dsmmi_spmm_tune.rows_reorder = -1;
        CHECK_OK(ctx, rst);
        CHECK(dsmm_spmm_rows_bytes(rw) > 0 && rw->m == A->nrows && rw->nnz == A->nnz);
        CHECK(rv[v].reorder < 0 || (rw->crow != NULL) == (rv[v].reorder == 1));
        dsmmi_spmm_tuning keep = dsmmi_spmm_tune;
        if (rv[v].odd_mask >= 0) dsmmi_spmm_tune.row_odd_mask = rv[v].odd_mask;
        if (rv[v].gather >= 0) dsmmi_spmm_tune.row_gather = rv[v].gather;
        // The plain row-wise kernel under the same settings (the gather's sums differ from the
        // scalar loop's in the last bits): the bits the rows must give.
        buf plain;
        if (run_checked(ctx, A, c, trans, DSMM_SPMM_ROW, 1, Bd, &c0, want, scale, terms, &plain,
                        NULL, what) != TEST_PASS) {
            dsmmi_spmm_tune = keep;
            dsmm_spmm_rows_destroy(&rw);
            return TEST_FAIL;
        }
        use_rows = rw;
        for (int t = 1; t <= max_t; t++) {
            char label[320];
            snprintf(label, sizeof label,
                     "%s [rows %d, %s, %s, k %lld, alpha %g, beta %g, ldb %lld, ldc %lld, %d "
                     "thread%s]",
                     what, v, t == 2 ? "auto" : "row", dsmm_type_name(c->type), (long long)k,
                     c->alpha, c->beta, (long long)b.ld, (long long)c0.ld, t, t > 1 ? "s" : "");
            dsmm_spmm_alg alg = t == 2 ? DSMM_SPMM_AUTO : DSMM_SPMM_ROW;
            int rc = run_checked(ctx, A, c, trans, alg, t, Bd, &c0, want, scale, terms, &got, NULL,
                                 label);
            if (rc == TEST_PASS && !buf_same_bits(&got, &plain)) {
                fprintf(stderr,
                        "%s: C differs bitwise from the row-wise kernel's 1-thread result\n",
                        label);
                rc = TEST_FAIL;
            }
            buf_free(&got);
            if (rc != TEST_PASS) {
                use_rows = NULL;
                dsmmi_spmm_tune = keep;
                dsmm_spmm_rows_destroy(&rw);
                return TEST_FAIL;
            }
        }
        CHECK_MSG(v > 0 || buf_same_bits(&plain, &first[1]),
                  "%s: the row-wise kernel's bits changed between two runs", what);
        buf_free(&plain);
        use_rows = NULL;
        dsmmi_spmm_tune = keep;
        dsmm_spmm_rows_destroy(&rw);
        CHECK(rw == NULL);
    }

    // AUTO runs the kernel it names, so it gives that kernel's bits.
    int r = trans ? 2 : 1;
    CHECK(algs[0] == DSMM_SPMM_AUTO && algs[r] == resolved(DSMM_SPMM_AUTO, trans));
    CHECK_MSG(buf_same_bits(&first[0], &first[r]), "%s%s: auto differs bitwise from %s", what,
              trans ? " (A^T)" : "", dsmm_spmm_alg_name(algs[r]));
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    for (int a = 0; a < NALGS; a++) buf_free(&first[a]);
    dsmm_dense_destroy(&Bd);
    dsmm_dense_destroy(&C0d);
    buf_free(&b);
    buf_free(&bsave);
    buf_free(&c0);
    free(want);
    free(scale);
    free(terms);
    return TEST_PASS;
}

// C = alpha * A * B + beta * C and C = alpha * A^T * B + beta * C, every kernel.
static int check_spmm(dsmm_ctx *ctx, const dsmm_csr *A, const spmm_case *c, const char *what)
{
    for (int trans = 0; trans <= 1; trans++)
        if (check_orientation(ctx, A, c, trans, what) != TEST_PASS) return TEST_FAIL;
    return TEST_PASS;
}

static const double alpha_beta[][2] = {{1, 0}, {2.5, 0}, {1, 1}, {-0.5, 2}};
#define NAB ((int)(sizeof alpha_beta / sizeof alpha_beta[0]))

/* ---- k, alpha/beta, shapes, generators --------------------------------------------------- */

// Every k the kernels may specialise (1..5, 8, 16, 32) or block (33, 64, 256), and remainders
// around the block edges.
static int test_ks(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx ks[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 65, 100, 256};
    for (int v = 0; v < 2; v++) {
        test_mat ma;
        dsmm_csr *A = NULL;
        if (v == 0) {
            test_mat_init(&ma, 37, 29, 0.15, seed_at(1));
            ma.empty_rows = ma.empty_cols = 0.1;
        } else {
            test_mat_init(&ma, 50, 70, 0.05, seed_at(2));
            ma.dense_row = 11;
            ma.col_bits = 32;
        }
        CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int t = 0; t < 2; t++) {
                spmm_case c;
                const double *ab = alpha_beta[(i + (size_t)t) % NAB];
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                if (check_spmm(ctx, A, &c, v ? "50x70 with a dense row" : "37x29 uniform") !=
                    TEST_PASS)
                    return TEST_FAIL;
            }
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// k no multiple of the vector (the row-wise kernel's last pass takes the columns left with an
// extra vector overlapping the block before it, and k under one vector runs in vectors of 8, 4
// or 2 lanes, two overlapping): with 32- and 64-byte vectors, streaming stores or not, alpha
// and beta, and padded rows (the overlap must stay inside the row: padding untouched), every
// kernel against the reference and the row-wise one bitwise at 1 and 2 threads. Then the
// overlapped columns: a B whose columns each hold one value (2^c) make every column's sum a
// different number, so a vector stored at the wrong columns shows.
static int test_tail_passes(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx ks[] = {2, 3, 5, 6, 7, 9, 12, 15, 23, 31, 39, 47, 57, 71, 121};
    int keep_vec = dsmmi_spmm_tune.vec_bytes;
    size_t keep_stream = dsmmi_spmm_tune.row_stream_min;
    test_mat ma;
    dsmm_csr *A = NULL;
    test_mat_init(&ma, 45, 38, 0.14, seed_at(480));
    ma.empty_rows = 0.1;
    ma.dense_row = 5;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    int rc = TEST_PASS, keep_group = dsmmi_spmm_tune.col_tile_group_tail;
    // v 4 and 5: the tiles' runs below a vector one at a time instead of four side by side
    // (GROUP_TAIL); check_spmm holds both to the scatter kernel's bits
    for (int v = 0; v < 6 && rc == TEST_PASS; v++) {
        dsmmi_spmm_tune.vec_bytes = v % 2 ? 64 : 32;
        dsmmi_spmm_tune.row_stream_min = v == 2 || v == 3 ? 1 : 0; // streams where beta = 0
        dsmmi_spmm_tune.col_tile_group_tail = v < 4;
        for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == TEST_PASS; i++)
            for (int t = 0; t < 2 && rc == TEST_PASS; t++) {
                spmm_case c;
                const double *ab = alpha_beta[(i + (size_t)t + (size_t)v) % NAB];
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                c.ldb_pad = (dsmm_idx)(i + (size_t)v) % 3;
                c.ldc_pad = v >= 2 ? (16 - ks[i] % 16) % 16 : (dsmm_idx)(i % 2);
                rc = check_spmm(ctx, A, &c, "45x38, k no multiple of a vector");
            }
    }
    dsmmi_spmm_tune.vec_bytes = keep_vec;
    dsmmi_spmm_tune.row_stream_min = keep_stream;
    dsmmi_spmm_tune.col_tile_group_tail = keep_group;
    if (rc == TEST_PASS) {
        // A of one entry (1.0) a row, B(r, c) = 2^(c mod 60) / 2^30: C = B's rows, exactly.
        dsmm_csr *D = NULL;
        CHECK_OK(ctx, dsmm_csr_create(ctx, 6, 6, 6, DSMM_DOUBLE, &D));
        D->nnz = 6;
        for (dsmm_idx r = 0; r <= 6; r++) D->rowptr[r] = r;
        for (dsmm_idx r = 0; r < 6; r++) {
            D->colidx[r] = 5 - r;
            ((double *)D->val)[r] = 1.0;
        }
        for (size_t i = 0; i < 2 * (sizeof ks / sizeof ks[0]) && rc == TEST_PASS; i++) {
            dsmm_idx k = ks[i / 2];
            dsmmi_spmm_tune.vec_bytes = i % 2 ? 64 : 32;
            dsmm_dense *B = NULL, *C = NULL;
            CHECK_OK(ctx, dsmm_dense_create(ctx, 6, k, DSMM_DOUBLE, &B));
            CHECK_OK(ctx, dsmm_dense_create(ctx, 6, k, DSMM_DOUBLE, &C));
            for (dsmm_idx r = 0; r < 6; r++)
                for (dsmm_idx j = 0; j < k; j++)
                    ((double *)B->val)[r * k + j] = ldexp(1.0, (int)((j + r) % 60) - 30);
            dsmm_spmm_opts o;
            dsmm_spmm_opts_init(&o);
            o.alg = DSMM_SPMM_ROW;
            CHECK_OK(ctx, dsmm_csr_spmm(ctx, D, B, C, &o, NULL));
            for (dsmm_idx r = 0; r < 6 && rc == TEST_PASS; r++)
                for (dsmm_idx j = 0; j < k; j++)
                    if (((double *)C->val)[r * k + j] != ((double *)B->val)[(5 - r) * k + j]) {
                        fprintf(stderr, "FAIL: k %lld: C(%lld, %lld) = %g, want %g\n", (long long)k,
                                (long long)r, (long long)j, ((double *)C->val)[r * k + j],
                                ((double *)B->val)[(5 - r) * k + j]);
                        rc = TEST_FAIL;
                        break;
                    }
            dsmm_dense_destroy(&B);
            dsmm_dense_destroy(&C);
        }
        dsmm_csr_destroy(&D);
        dsmmi_spmm_tune.vec_bytes = keep_vec;
    }
    dsmm_csr_destroy(&A);
    if (rc != TEST_PASS) return rc;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// k cut into passes of k_block columns (every kernel, uneven last slice, leading dimensions):
// the same values as one pass, and ceil(k / k_block) passes reported.
static int test_k_block(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx kbs[][2] = {{17, 1}, {17, 3}, {33, 8}, {64, 16}, {100, 32}, {9, 64}};
    test_mat ma;
    dsmm_csr *A = NULL;
    test_mat_init(&ma, 41, 23, 0.12, seed_at(71));
    ma.empty_rows = ma.empty_cols = 0.1;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    for (size_t i = 0; i < sizeof kbs / sizeof kbs[0]; i++) {
        spmm_case c;
        const double *ab = alpha_beta[i % NAB];
        case_init(&c, i % 2 ? DSMM_DOUBLE : DSMM_FLOAT, kbs[i][0], ab[0], ab[1]);
        c.k_block = kbs[i][1];
        c.ldb_pad = (dsmm_idx)i % 3;
        c.ldc_pad = (dsmm_idx)(i + 1) % 3;
        if (check_spmm(ctx, A, &c, "41x23 in k-slices") != TEST_PASS) return TEST_FAIL;
    }
    // k_block -1 is one pass; below -1 is refused.
    spmm_case c;
    case_init(&c, DSMM_DOUBLE, 40, 1, 0);
    c.k_block = -1;
    if (check_spmm(ctx, A, &c, "41x23 one pass") != TEST_PASS) return TEST_FAIL;
    dsmm_dense *B = NULL, *C = NULL;
    CHECK_OK(ctx, dsmm_dense_create(ctx, A->ncols, 4, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_create(ctx, A->nrows, 4, DSMM_DOUBLE, &C));
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    o.k_block = -2;
    CHECK(dsmm_csr_spmm(ctx, A, B, C, &o, NULL) == DSMM_ERR_ARG);
    CHECK(strstr(dsmm_ctx_last_error(ctx), "k_block") != NULL);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// alpha = 0 with NaN in B (B must not be read), beta = 0 with NaN in C (C must not be read),
// and the combinations in between, on a matrix with empty rows (C = beta * C there).
static int test_alpha_beta(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const double ab[][2] = {{1, 0}, {2.5, 0}, {1, 1}, {-0.5, 2},
                                   {0, 0}, {0, 1.5}, {0, 1}, {-1, -1}};
    static const dsmm_idx ks[] = {1, 5, 33};
    test_mat ma;
    test_mat_init(&ma, 40, 33, 0.2, seed_at(10));
    ma.empty_rows = 0.2;
    ma.empty_cols = 0.1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    for (size_t s = 0; s < sizeof ab / sizeof ab[0]; s++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int t = 0; t < 2; t++) {
                spmm_case c;
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[s][0], ab[s][1]);
                if (check_spmm(ctx, A, &c, "alpha/beta") != TEST_PASS) return TEST_FAIL;
            }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// 0 x n, m x 0, 1 x 1, one row, one column, rectangular both ways, nnz = 0, k = 0.
static int test_shapes(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx shapes[][2] = {{0, 0},  {0, 6},   {6, 0},   {1, 1},  {1, 40},
                                         {40, 1}, {23, 57}, {57, 23}, {64, 64}};
    static const double dens[] = {0, 0.1, 0.7};
    static const dsmm_idx ks[] = {0, 1, 3, 8, 17};
    uint64_t n = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
            test_mat ma;
            test_mat_init(&ma, shapes[s][0], shapes[s][1], dens[d], seed_at(100 + n++));
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
            if (dens[d] == 0) CHECK_EQ_IDX(A->nnz, 0);
            char what[96];
            snprintf(what, sizeof what, "%lldx%lld, density %g", (long long)shapes[s][0],
                     (long long)shapes[s][1], dens[d]);
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
                spmm_case c;
                const double *ab = alpha_beta[(s + d + i) % NAB];
                case_init(&c, (s + i) % 2 ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                if (check_spmm(ctx, A, &c, what) != TEST_PASS) return TEST_FAIL;
            }
            dsmm_csr_destroy(&A);
        }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Uniform (Erdős–Rényi), power-law (R-MAT: skewed rows, and skewed columns under A^T),
// banded, a dense row (a dense column under A^T), empty rows and columns, explicit zeros.
static int test_generators(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx ks[] = {4, 16, 33};
    for (int gen = 0; gen < 5; gen++) {
        dsmm_csr *A = NULL;
        const char *what = "";
        test_mat ma;
        switch (gen) {
        case 0:
            CHECK_OK(ctx, test_rand_er(ctx, 300, 5, 0, DSMM_DOUBLE, seed_at(200), &A));
            what = "Erdos-Renyi n=300";
            break;
        case 1:
            CHECK_OK(ctx, test_rand_rmat(ctx, 8, 8, 0, DSMM_DOUBLE, seed_at(201), &A));
            what = "R-MAT scale 8";
            break;
        case 2:
            CHECK_OK(ctx, test_band_csr(ctx, 150, 120, 2, 4, DSMM_DOUBLE, seed_at(202), &A));
            CHECK_EQ_IDX(A->rowptr[1], 5); // row 0: columns 0..4
            what = "banded 150x120";
            break;
        case 3:
            test_mat_init(&ma, 80, 60, 0.08, seed_at(203));
            ma.dense_row = 5;
            ma.empty_cols = 0.2;
            ma.zeros = 1;
            CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
            what = "dense row, empty columns, explicit zeros";
            break;
        case 4:
            test_mat_init(&ma, 70, 90, 0.3, seed_at(204));
            ma.empty_rows = 0.5;
            ma.empty_cols = 0.5;
            ma.zeros = 1;
            CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
            what = "half the rows and columns empty";
            break;
        }
        CHECK_OK(ctx, dsmm_csr_check(ctx, A));
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int t = 0; t < 2; t++) {
                spmm_case c;
                const double *ab = alpha_beta[(i + (size_t)t + (size_t)gen) % NAB];
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                if (check_spmm(ctx, A, &c, what) != TEST_PASS) return TEST_FAIL;
            }
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- A's value types, column widths, unsorted rows; B and C sub-blocks ------------------- */

// A's arrays bit for bit (the call must only read A).
static int csr_same_bits(const dsmm_csr *X, const dsmm_csr *Y)
{
    if (X->nrows != Y->nrows || X->ncols != Y->ncols || X->nnz != Y->nnz || X->type != Y->type ||
        X->sorted != Y->sorted || (X->colidx32 == NULL) != (Y->colidx32 == NULL))
        return 0;
    size_t nnz = (size_t)X->nnz;
    if (memcmp(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof *X->rowptr) != 0) return 0;
    if (X->colidx32 ? memcmp(X->colidx32, Y->colidx32, nnz * sizeof(int32_t)) != 0
                    : nnz && memcmp(X->colidx, Y->colidx, nnz * sizeof(dsmm_idx)) != 0)
        return 0;
    if (X->type != DSMM_PATTERN && nnz &&
        memcmp(X->val, Y->val, nnz * (X->type == DSMM_DOUBLE ? sizeof(double) : sizeof(float))))
        return 0;
    return 1;
}

static int test_value_types(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 45, 38, 0.15, seed_at(300));
    ma.dense_row = 3;
    ma.zeros = 1;
    ma.empty_rows = 0.1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    static const dsmm_type at[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};
    static const dsmm_idx ks[] = {3, 8, 65};
    for (int ta = 0; ta < 3; ta++)
        for (int bits = 32; bits <= 64; bits += 32)
            for (int sorted = 1; sorted >= 0; sorted--) {
                dsmm_csr *A2 = NULL, *S = NULL, *keep = NULL;
                CHECK_OK(ctx, test_csr_convert(ctx, A, at[ta], bits, &A2));
                if (!sorted) {
                    CHECK_OK(ctx, test_csr_shuffle(ctx, A2, 1, seed_at(301), &S));
                    dsmm_csr_destroy(&A2);
                    A2 = S;
                    CHECK(A2->sorted == 0);
                    CHECK_OK(ctx, dsmm_csr_check(ctx, A2));
                    int out_of_order = 0;
                    for (dsmm_idx r = 0; r < A2->nrows; r++)
                        for (dsmm_idx p = A2->rowptr[r] + 1; p < A2->rowptr[r + 1]; p++)
                            out_of_order |= dsmm_csr_col(A2, p) < dsmm_csr_col(A2, p - 1);
                    CHECK(out_of_order);
                    if (at[ta] != DSMM_PATTERN) CHECK(A2->nnz > A->nnz); // repeated columns
                }
                CHECK((A2->colidx32 != NULL) == (bits == 32));
                CHECK_OK(ctx, test_csr_convert(ctx, A2, A2->type, bits, &keep));
                char what[96];
                snprintf(what, sizeof what, "A %s, %d-bit columns, %s", dsmm_type_name(at[ta]),
                         bits, sorted ? "sorted" : "unsorted with repeats");
                for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
                    for (int t = 0; t < 2; t++) {
                        spmm_case c;
                        const double *ab = alpha_beta[(i + (size_t)ta) % NAB];
                        case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                        if (check_spmm(ctx, A2, &c, what) != TEST_PASS) return TEST_FAIL;
                    }
                CHECK_MSG(csr_same_bits(A2, keep), "%s: A changed", what);
                dsmm_csr_destroy(&A2);
                dsmm_csr_destroy(&keep);
            }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// B and C as sub-blocks of bigger matrices: ldb > k, ldc > k, and first entries that are not
// vector-aligned; the padding must come back untouched (checked in check_values).
static int test_leading_dims(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx pads[][3] = {{1, 0, 0}, {0, 1, 1}, {7, 3, 0}, {64, 64, 3}, {2, 5, 1}};
    static const dsmm_idx ks[] = {1, 4, 7, 16, 33, 100};
    test_mat ma;
    test_mat_init(&ma, 31, 26, 0.2, seed_at(400));
    ma.empty_rows = 0.1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    for (size_t p = 0; p < sizeof pads / sizeof pads[0]; p++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            for (int t = 0; t < 2; t++) {
                spmm_case c;
                const double *ab = alpha_beta[(i + p + (size_t)t) % NAB];
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                c.ldb_pad = pads[p][0];
                c.ldc_pad = pads[p][1];
                c.off = pads[p][2];
                if (check_spmm(ctx, A, &c, "sub-blocks") != TEST_PASS) return TEST_FAIL;
            }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A larger skewed matrix at 1 to 4 threads: enough rows for every thread to get work, and
// every thread count must give the 1-thread bits (check_orientation compares them).
static int test_threads(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 10, 4, 0, DSMM_DOUBLE, seed_at(500), &A));
    static const dsmm_idx ks[] = {16, 33};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        for (int t = 0; t < 2; t++) {
            spmm_case c;
            case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], i ? -0.5 : 1, i ? 2 : 0);
            c.max_threads = 4;
            if (check_spmm(ctx, A, &c, "R-MAT scale 10") != TEST_PASS) return TEST_FAIL;
        }
    // Wide enough rows of work (nnz/row * k >= 256) for the column-wise kernel to split C's
    // rows between threads: the multi-threaded path runs, and matches 1 thread bitwise.
    spmm_case c;
    case_init(&c, DSMM_DOUBLE, 128, 1, 0);
    c.max_threads = 3;
    if (check_spmm(ctx, A, &c, "R-MAT scale 10, k 128") != TEST_PASS) return TEST_FAIL;
    dsmm_dense *B = NULL, *C = NULL;
    CHECK_OK(ctx, dsmm_dense_create(ctx, A->nrows, 128, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_create(ctx, A->ncols, 128, DSMM_DOUBLE, &C));
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    o.alg = DSMM_SPMM_COL;
    o.transpose_a = 1;
    dsmm_spmm_info info;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, &info));
    CHECK_MSG(info.threads == 2, "column-wise kernel ran on %d threads, not 2", info.threads);
    // Short rows (k = 8: 4 entries a row * 8 < 256) take private copies of C at 2 threads,
    // unless the memory budget has no room for them: then one thread, the 1-thread bits, and
    // no error.
    {
        dsmm_dense *B8 = NULL, *C8 = NULL, *C1 = NULL;
        CHECK_OK(ctx, dsmm_dense_create(ctx, A->nrows, 8, DSMM_DOUBLE, &B8));
        for (dsmm_idx i = 0; i < A->nrows * 8; i++)
            ((double *)B8->val)[i] = (double)((i * 7) % 13) - 6.0;
        CHECK_OK(ctx, dsmm_dense_create(ctx, A->ncols, 8, DSMM_DOUBLE, &C8));
        CHECK_OK(ctx, dsmm_dense_create(ctx, A->ncols, 8, DSMM_DOUBLE, &C1));
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1));
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B8, C1, &o, &info));
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B8, C8, &o, &info));
        size_t copy = (size_t)A->ncols * 8 * sizeof(double);
        CHECK_MSG(info.threads == 2 && info.workspace_bytes >= copy,
                  "short rows: %d threads, %zu bytes of workspace (a copy of C is %zu)",
                  info.threads, info.workspace_bytes, copy);
        dsmm_ctx_set_mem_budget(ctx, dsmm_ctx_mem_in_use(ctx) + copy / 2);
        memset(C8->val, 0, copy);
        dsmm_status st = dsmm_csr_spmm(ctx, A, B8, C8, &o, &info);
        dsmm_ctx_set_mem_budget(ctx, 0);
        CHECK_MSG(st == DSMM_OK, "no room for a copy of C: %s", dsmm_ctx_last_error(ctx));
        CHECK_MSG(info.threads == 1, "no room for a copy of C, yet %d threads", info.threads);
        CHECK(memcmp(C8->val, C1->val, copy) == 0);
        dsmm_dense_destroy(&B8);
        dsmm_dense_destroy(&C8);
        dsmm_dense_destroy(&C1);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A matrix of m x n whose row i holds i % period entries, entry e at column (i * a + e * b) % n
// with value scale * ((i + c * e) % mod) - shift, rows unsorted; of value type vt with bits-bit
// columns.
typedef struct cyclic_spec {
    dsmm_idx m, n, period, a, b, c, mod;
    double scale, shift;
} cyclic_spec;

static dsmm_status cyclic_csr(dsmm_ctx *ctx, const cyclic_spec *cs, dsmm_type vt, int bits,
                              dsmm_csr **out)
{
    dsmm_idx nnz = 0, q = 0;
    for (dsmm_idx i = 0; i < cs->m; i++) nnz += i % cs->period;
    dsmm_csr *Ad = NULL;
    dsmm_status st = dsmm_csr_create(ctx, cs->m, cs->n, nnz, DSMM_DOUBLE, &Ad);
    if (st != DSMM_OK) return st;
    Ad->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < cs->m; i++) {
        for (dsmm_idx e = 0; e < i % cs->period; e++, q++) {
            Ad->colidx[q] = (i * cs->a + e * cs->b) % cs->n;
            ((double *)Ad->val)[q] = cs->scale * (double)((i + cs->c * e) % cs->mod) - cs->shift;
        }
        Ad->rowptr[i + 1] = q;
    }
    Ad->nnz = nnz;
    Ad->sorted = 0;
    st = test_csr_convert(ctx, Ad, vt, bits, out);
    dsmm_csr_destroy(&Ad);
    return st;
}

// Entry (i, j) of a float or double dense matrix, set and read as a double.
static void dense_put(dsmm_dense *D, dsmm_idx i, dsmm_idx j, double v)
{
    if (D->type == DSMM_DOUBLE)
        ((double *)D->val)[i * D->ld + j] = v;
    else
        ((float *)D->val)[i * D->ld + j] = (float)v;
}

static double dense_get(const dsmm_dense *D, dsmm_idx i, dsmm_idx j)
{
    return D->type == DSMM_DOUBLE ? ((const double *)D->val)[i * D->ld + j]
                                  : (double)((const float *)D->val)[i * D->ld + j];
}

// C (m x k) against the reference want/scale (m x k, row-major) where B's row nan_row is NaN:
// NaN exactly in the rows of A that name column nan_row, elsewhere within rtol * (scale + 1).
static int check_nan_rows(const dsmm_csr *A, const dsmm_dense *C, dsmm_idx nan_row,
                          const double *want, const double *scale, double rtol, const char *what)
{
    dsmm_idx k = C->ncols;
    for (dsmm_idx i = 0; i < C->nrows; i++) {
        int has_nan = 0;
        for (dsmm_idx p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            has_nan |= dsmm_csr_col(A, p) == nan_row;
        for (dsmm_idx j = 0; j < k; j++) {
            double got = dense_get(C, i, j), w = want[i * k + j];
            CHECK_MSG(has_nan ? isnan(got) : fabs(got - w) <= rtol * (scale[i * k + j] + 1),
                      "%s: row %lld (%lld entries%s), col %lld: %g, expected %g", what,
                      (long long)i, (long long)(A->rowptr[i + 1] - A->rowptr[i]),
                      has_nan ? ", the NaN row of B" : "", (long long)j, got, has_nan ? NAN : w);
        }
    }
    return TEST_PASS;
}

// The row-wise kernel adds a row's odd entry under a mask (row_odd_mask) at k = 1, at k below
// one vector (ROW_SMALL_FN: 2-7 floats, 2-3 doubles, one vector or two overlapping; on AVX2
// ROW_SMALLM, the last vector under a lane mask, up to 15 floats and 7 doubles) and at k of
// one vector (ROW_ODD1: 8 floats or 4 doubles on AVX2, 16 floats or 8 doubles on AVX-512 with
// the test's 64-byte aligned rows): the sum is always formed, from the next row's first entry
// where the row has none, and dropped. Rows of 0 to 7 entries, one column of B all NaN that is
// the stand-in of even rows: the same bits as the branch (row_odd_mask = 0), with alpha = 1,
// beta = 0 and with alpha = 1.5, beta = -0.5; NaN exactly in the rows that hold that column,
// the reference's values elsewhere; k = 1-9, 12, 15, 16; 32- and 64-bit columns, float and double,
// 1 and 2 threads. Then dsmmi_spmm_parity_mixed, which picks the mask at 1 (graphs, not
// meshes), on rows of known parity.
static int test_odd_entry(void)
{
    dsmm_ctx *ctx = test_ctx();
    const dsmm_idx m = 40, n = 20, nan_col = 19;
    int keep = dsmmi_spmm_tune.row_odd_mask;
    for (int t = 0; t < 2; t++)
        for (int bits = 32; bits <= 64; bits += 32) {
            dsmm_type type = t ? DSMM_DOUBLE : DSMM_FLOAT;
            // first column (3 i) % 20: 19 at i 13
            const cyclic_spec cs = {m, n, 8, 3, 5, 1, 7, 0.25, 0.75};
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, cyclic_csr(ctx, &cs, type, bits, &A));
            CHECK_OK(ctx, dsmm_csr_check(ctx, A));
            static const dsmm_idx ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16};
            for (size_t kab = 0; kab < 2 * sizeof ks / sizeof ks[0]; kab++) {
                dsmm_idx k = ks[kab / 2];
                double alpha = kab % 2 ? 1.5 : 1.0, beta = kab % 2 ? -0.5 : 0.0;
                dsmm_dense *B = NULL, *C0 = NULL, *C1 = NULL;
                CHECK_OK(ctx, dsmm_dense_create(ctx, n, k, type, &B));
                CHECK_OK(ctx, dsmm_dense_create(ctx, m, k, type, &C0));
                CHECK_OK(ctx, dsmm_dense_create(ctx, m, k, type, &C1));
                for (dsmm_idx r = 0; r < n; r++)
                    for (dsmm_idx j = 0; j < k; j++)
                        dense_put(B, r, j,
                                  r == nan_col ? NAN : 0.5 * (double)((r * 7 + j) % 9) - 2.0);
                double *want = malloc(sizeof *want * (size_t)(m * k));
                double *scale = malloc(sizeof *scale * (size_t)(m * k));
                CHECK(want != NULL && scale != NULL);
                for (dsmm_idx e = 0; e < m * k; e++)
                    dense_put(C0, e / k, e % k, 0.25 * (double)(e % 11) - 1.0);
                CHECK_OK(ctx, ref_spmm(A, 0, alpha, B, beta, C0, want, scale, NULL));
                for (int th = 1; th <= 2; th++) {
                    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, th));
                    dsmm_spmm_opts o;
                    dsmm_spmm_opts_init(&o);
                    o.alg = DSMM_SPMM_ROW;
                    o.alpha = alpha;
                    o.beta = beta;
                    size_t bytes = (size_t)(m * k) * dsmmi_type_size(type);
                    for (dsmm_idx e = 0; e < m * k; e++)
                        dense_put(C0, e / k, e % k, 0.25 * (double)(e % 11) - 1.0);
                    void *c_old = malloc(bytes);
                    CHECK(c_old != NULL);
                    memcpy(c_old, C0->val, bytes);
                    dsmmi_spmm_tune.row_odd_mask = 0;
                    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C0, &o, NULL));
                    // the masks on AVX2 (vec_bytes 32) and, where the CPU has it, AVX-512VL
                    int keep_vb = dsmmi_spmm_tune.vec_bytes;
                    for (int vb = 32; vb <= 64; vb += 32) {
                        memcpy(C1->val, c_old, bytes);
                        dsmmi_spmm_tune.row_odd_mask = 2;
                        dsmmi_spmm_tune.vec_bytes = vb;
                        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C1, &o, NULL));
                        dsmmi_spmm_tune.vec_bytes = keep_vb;
                        CHECK_MSG(memcmp(C0->val, C1->val, bytes) == 0,
                                  "%s, %d-bit, k %lld, alpha %g beta %g, %d threads, %d-byte "
                                  "vectors: masked odd entry differs from the branch",
                                  dsmm_type_name(type), bits, (long long)k, alpha, beta, th, vb);
                    }
                    free(c_old);
                    char what[96];
                    snprintf(what, sizeof what, "%s, %d-bit, k %lld, %d threads",
                             dsmm_type_name(type), bits, (long long)k, th);
                    CHECK(check_nan_rows(A, C1, nan_col, want, scale, 1e-5, what) == TEST_PASS);
                }
                CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
                free(want);
                free(scale);
                dsmm_dense_destroy(&B);
                dsmm_dense_destroy(&C0);
                dsmm_dense_destroy(&C1);
            }
            dsmm_csr_destroy(&A);
        }
    dsmmi_spmm_tune.row_odd_mask = keep;
    // The rule: a third or more of consecutive rows changing parity, in 16 runs of 64 rows.
    enum { NR = 5000 };
    dsmm_idx *rp = malloc(sizeof *rp * (NR + 1));
    CHECK(rp != NULL);
    for (int pattern = 0; pattern < 5; pattern++) {
        // lengths: all even; alternating odd/even; every 4th row odd (1/2 of the pairs
        // change); every 8th row odd (1/4); odd in 3-row runs of 9 (2/9)
        rp[0] = 0;
        for (dsmm_idx i = 0; i < NR; i++) {
            int odd = pattern == 1   ? (int)(i % 2)
                      : pattern == 2 ? i % 4 == 0
                      : pattern == 3 ? i % 8 == 0
                      : pattern == 4 ? i % 9 < 3
                                     : 0;
            rp[i + 1] = rp[i] + 2 * (i % 3) + odd;
        }
        int want_mixed = pattern == 1 || pattern == 2;
        for (dsmm_idx rows = 0; rows <= NR; rows += rows < 200 ? 1 : 997) {
            int got = dsmmi_spmm_parity_mixed(rp, rows);
            int want = rows >= 2 && want_mixed;
            if (rows < 65 && pattern >= 3) want = got; // a run too short for the fraction
            CHECK_MSG(got == want, "parity pattern %d, %lld rows: mixed %d, expected %d", pattern,
                      (long long)rows, got, want);
        }
    }
    free(rp);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// k = 1 on AVX-512 gathers (ROW_GATHER; row_gather, B's column contiguous): rows of 0 to 40
// entries (pieces of 8 and a masked rest), one row of B NaN: the reference's values within the
// rounding bound and NaN exactly in the rows that name it; the same bits at 1 and 2 threads;
// values and pattern A, 32- and 64-bit columns, float and double, alpha/beta. With ldb = 2 the
// scalar loop runs (the gather reads a contiguous column), and row_gather = 0 turns it off:
// both against the same reference. Then the choice (the CPU, the setting).
static int test_gather(void)
{
    dsmm_ctx *ctx = test_ctx();
    const dsmm_idx m = 82, n = 50, nan_row = 47;
    int keep = dsmmi_spmm_tune.row_gather;
    for (int t = 0; t < 3; t++)
        for (int bits = 32; bits <= 64; bits += 32) {
            dsmm_type type = t == 2 ? DSMM_DOUBLE : DSMM_FLOAT, vt = t == 0 ? DSMM_PATTERN : type;
            const cyclic_spec cs = {m, n, 41, 5, 7, 3, 13, 0.125, 0.8}; // row 7 + 8j: column 47
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, cyclic_csr(ctx, &cs, vt, bits, &A));
            for (int ab = 0; ab < 2; ab++) {
                double alpha = ab ? -1.25 : 1.0, beta = ab ? 0.5 : 0.0;
                for (dsmm_idx ldb = 1; ldb <= 2; ldb++) {
                    dsmm_dense *B = NULL, *C[3] = {NULL, NULL, NULL};
                    double *bbuf = calloc((size_t)(n * ldb), sizeof(double));
                    CHECK(bbuf != NULL);
                    CHECK_OK(ctx, dsmm_dense_wrap(ctx, n, 1, ldb, bbuf, type, &B));
                    for (dsmm_idx r = 0; r < n; r++)
                        dense_put(B, r, 0,
                                  r == nan_row ? NAN : 0.3 * (double)((r * 11) % 17) - 2.1);
                    double *want = malloc(sizeof *want * (size_t)m);
                    double *scale = malloc(sizeof *scale * (size_t)m);
                    CHECK(want != NULL && scale != NULL);
                    for (int h = 0; h < 3; h++) {
                        CHECK_OK(ctx, dsmm_dense_create(ctx, m, 1, type, &C[h]));
                        for (dsmm_idx i = 0; i < m; i++)
                            dense_put(C[h], i, 0, 0.5 * (double)(i % 5) - 1.0);
                    }
                    CHECK_OK(ctx, ref_spmm(A, 0, alpha, B, beta, C[0], want, scale, NULL));
                    // C[0]: gather (where the CPU has it) at 1 thread, C[1] at 2, C[2] scalar
                    for (int h = 0; h < 3; h++) {
                        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, h == 1 ? 2 : 1));
                        dsmmi_spmm_tune.row_gather = h == 2 ? 0 : 1;
                        dsmm_spmm_opts o;
                        dsmm_spmm_opts_init(&o);
                        o.alg = DSMM_SPMM_ROW;
                        o.alpha = alpha;
                        o.beta = beta;
                        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C[h], &o, NULL));
                    }
                    size_t bytes = (size_t)m * dsmmi_type_size(type);
                    CHECK_MSG(memcmp(C[0]->val, C[1]->val, bytes) == 0,
                              "%s, %d-bit, ldb %lld: 1 and 2 threads differ", dsmm_type_name(vt),
                              bits, (long long)ldb);
                    for (int h = 0; h < 3; h += 2) {
                        char what[96];
                        snprintf(what, sizeof what, "%s, %d-bit, ldb %lld, %s", dsmm_type_name(vt),
                                 bits, (long long)ldb, h ? "scalar" : "gather");
                        CHECK(check_nan_rows(A, C[h], nan_row, want, scale,
                                             type == DSMM_DOUBLE ? 1e-13 : 1e-5,
                                             what) == TEST_PASS);
                    }
                    free(want);
                    free(scale);
                    for (int h = 0; h < 3; h++) dsmm_dense_destroy(&C[h]);
                    dsmm_dense_destroy(&B);
                    free(bbuf);
                }
            }
            dsmm_csr_destroy(&A);
        }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    int v4 = 0, amd = 0;
#if DSMMI_HAVE_WIDE
    v4 = __builtin_cpu_supports("x86-64-v4") != 0;
    amd = __builtin_cpu_is("amd") != 0;
#endif
    dsmmi_spmm_tune.row_gather = 0;
    CHECK(dsmmi_spmm_gather() == 0);
    dsmmi_spmm_tune.row_gather = 1;
    CHECK(dsmmi_spmm_gather() == v4);
    dsmmi_spmm_tune.row_gather = -1;
    CHECK(dsmmi_spmm_gather() == (v4 && !amd));
    if (!v4) printf("  (no AVX-512 here: the gathers are not run, only the scalar loop)\n");
    dsmmi_spmm_tune.row_gather = keep;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The 64-byte-vector (AVX-512) instances: dsmmi_spmm_wide's choice (the CPU, 64-byte aligned
// B and C rows, each kernel's least k), and, where the CPU has them, the same bits as the
// 32-byte instances (beta = 0; within a rounding otherwise) for row and column-wise products
// (owned ranges and private copies), at 1 and 2 threads, with and without streaming stores. k where
// both instances run the same blocks (a block of 2 vectors or more per row, or a whole vector per
// entry of S): the sums are then formed in the same order. Other k (tails after the vectors)
// against the reference.
static int test_wide_vectors(void)
{
    dsmm_ctx *ctx = test_ctx();
    int cpu = 0;
#if DSMMI_HAVE_WIDE
    cpu = __builtin_cpu_supports("x86-64-v4") != 0;
#endif
    if (!cpu) printf("  (no AVX-512 here: the 64-byte instances are not run, only the choice)\n");
    int keep_vec = dsmmi_spmm_tune.vec_bytes;
    size_t keep_stream = dsmmi_spmm_tune.row_stream_min;
    double keep_split = dsmmi_spmm_tune.col_split_bytes;
    // The choice, on hand-made arguments.
    static double dummy[64] __attribute__((aligned(64)));
    dsmmi_spmm_args a;
    memset(&a, 0, sizeof a);
    a.type = DSMM_DOUBLE;
    a.k = 16;
    a.B = dummy;
    a.C = dummy;
    a.ldb = a.ldc = 16;
    dsmmi_spmm_tune.vec_bytes = 64;
    CHECK_MSG(dsmmi_spmm_wide(&a, 128) == cpu, "k 16 double, aligned: wide %d, CPU %d",
              dsmmi_spmm_wide(&a, 128), cpu);
    a.k = 8;
    a.ldb = a.ldc = 8;
    CHECK(dsmmi_spmm_wide(&a, 128) == 0); // 64 bytes, under the row-wise kernel's 128
    CHECK(dsmmi_spmm_wide(&a, 64) == cpu);
    a.ldb = 12; // rows 96 bytes apart: every other row splits a line
    CHECK(dsmmi_spmm_wide(&a, 64) == 0);
    a.ldb = 8;
    a.C = dummy + 2;
    CHECK(dsmmi_spmm_wide(&a, 64) == 0);
    a.C = dummy;
    a.type = DSMM_FLOAT;
    CHECK(dsmmi_spmm_wide(&a, 64) == 0); // 8 floats: 32 bytes
    a.k = a.ldb = a.ldc = 16;
    CHECK(dsmmi_spmm_wide(&a, 64) == cpu);
    dsmmi_spmm_tune.vec_bytes = 32;
    CHECK(dsmmi_spmm_wide(&a, 64) == 0);

    test_mat ma;
    test_mat_init(&ma, 97, 83, 0.09, seed_at(470));
    ma.empty_rows = 0.1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    static const struct {
        dsmm_type type;
        dsmm_idx k;
    } ks[] = {{DSMM_DOUBLE, 8}, {DSMM_DOUBLE, 16}, {DSMM_DOUBLE, 64}, {DSMM_DOUBLE, 256},
              {DSMM_FLOAT, 16}, {DSMM_FLOAT, 32},  {DSMM_FLOAT, 64},  {DSMM_FLOAT, 256}};
    int rc = TEST_PASS;
    // k that leaves a tail after the 64-byte vectors (up to 15 floats), with B's and C's rows
    // padded to 64 bytes so that the wide instances run: every kernel against the reference.
    static const dsmm_idx tails[] = {17, 31, 33, 47, 63, 100};
    dsmmi_spmm_tune.vec_bytes = 64;
    for (size_t i = 0; i < sizeof tails / sizeof tails[0] && rc == TEST_PASS; i++)
        for (int t = 0; t < 2 && rc == TEST_PASS; t++) {
            spmm_case c;
            const double *ab = alpha_beta[(i + (size_t)t) % NAB];
            case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, tails[i], ab[0], ab[1]);
            c.ldb_pad = c.ldc_pad = (16 - tails[i] % 16) % 16;
            rc = check_spmm(ctx, A, &c, "64-byte rows with a tail");
        }
    for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == TEST_PASS; i++) {
        dsmm_type type = ks[i].type;
        dsmm_idx k = ks[i].k;
        // 8 doubles and 16 floats: the row-wise kernel's 64-byte instance keeps two sets of
        // sums (one in the 32-byte one), so only the column-wise ones compare here;
        // test_odd_entry checks the row-wise one.
        int row_wide = k * (dsmm_idx)type_size(type) >= 128;
        for (int trans = 0; trans < 2; trans++) {
            dsmm_idx m = trans ? A->ncols : A->nrows, n = trans ? A->nrows : A->ncols;
            dsmm_dense *B = NULL, *C[2] = {NULL, NULL};
            CHECK_OK(ctx, dsmm_dense_create(ctx, n, k, type, &B));
            for (dsmm_idx e = 0; e < n * k; e++) {
                double x = (double)((e * 37) % 101) / 17.0 - 3.0;
                if (type == DSMM_DOUBLE)
                    ((double *)B->val)[e] = x;
                else
                    ((float *)B->val)[e] = (float)x;
            }
            for (int alg = 0; alg < 2 && rc == TEST_PASS; alg++) {
                if (alg == 0 && !row_wide) continue;
                for (int mode = 0; mode < 6 && rc == TEST_PASS; mode++) {
                    // mode: threads 1 or 2; column-wise: owned ranges (split work 0) or
                    // private copies (split work huge); row-wise: streaming stores or not;
                    // modes 4 and 5 with beta != 0
                    int th = 1 + mode % 2;
                    double beta = mode >= 4 ? -0.5 : 0.0;
                    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, th));
                    dsmmi_spmm_tune.col_split_bytes = mode < 2 ? 0 : 1e30;
                    dsmmi_spmm_tune.row_stream_min = mode == 2 || mode == 3 ? 1 : 0;
                    for (int w = 0; w < 2; w++) {
                        CHECK_OK(ctx, dsmm_dense_create(ctx, m, k, type, &C[w]));
                        for (dsmm_idx e = 0; e < m * k; e++) {
                            double x = (double)((e * 13) % 29) / 7.0 - 2.0;
                            if (type == DSMM_DOUBLE)
                                ((double *)C[w]->val)[e] = x;
                            else
                                ((float *)C[w]->val)[e] = (float)x;
                        }
                        dsmm_spmm_opts o;
                        dsmm_spmm_opts_init(&o);
                        o.alg = alg ? DSMM_SPMM_COL : DSMM_SPMM_ROW;
                        o.transpose_a = trans;
                        o.alpha = 1.5;
                        o.beta = beta;
                        dsmmi_spmm_tune.vec_bytes = w ? 64 : 32;
                        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C[w], &o, NULL));
                    }
                    // The same bits with beta = 0. With beta != 0 the compiler may fuse
                    // alpha * sum + beta * C either way in each instance: the last bit may
                    // differ, no more (16 units of roundoff of the result's size, 2^-48 and
                    // 2^-20 relative, is far above one rounding and far below an error).
                    double tol = type == DSMM_DOUBLE ? 0x1p-48 : 0x1p-20;
                    for (dsmm_idx e = 0; e < m * k && rc == TEST_PASS; e++) {
                        double x0 = type == DSMM_DOUBLE ? ((double *)C[0]->val)[e]
                                                        : ((float *)C[0]->val)[e];
                        double x1 = type == DSMM_DOUBLE ? ((double *)C[1]->val)[e]
                                                        : ((float *)C[1]->val)[e];
                        int same = beta == 0 ? memcmp(&x0, &x1, sizeof x0) == 0
                                             : fabs(x0 - x1) <= tol * (fabs(x0) + 1);
                        if (!same) {
                            fprintf(stderr,
                                    "FAIL: %s k %lld %s, %s, %d threads, mode %d, entry %lld: "
                                    "64-byte instances %.17g, 32-byte %.17g\n",
                                    alg ? "col" : "row", (long long)k, dsmm_type_name(type),
                                    trans ? "A^T B" : "A B", th, mode, (long long)e, x1, x0);
                            rc = TEST_FAIL;
                        }
                    }
                    dsmm_dense_destroy(&C[0]);
                    dsmm_dense_destroy(&C[1]);
                }
            }
            dsmm_dense_destroy(&B);
        }
    }
    dsmmi_spmm_tune.vec_bytes = keep_vec;
    dsmmi_spmm_tune.row_stream_min = keep_stream;
    dsmmi_spmm_tune.col_split_bytes = keep_split;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&A);
    if (rc != TEST_PASS) return rc;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// C = alpha * A * B by the row-wise kernel (B of fixed values, C library-allocated, so
// aligned) under a tuning's two settings, set(0) and set(1), at 1 and 2 threads: TEST_PASS
// where both give the same bits.
static int row_same_bits(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type type, double alpha,
                         void (*set)(int), const char *what)
{
    dsmm_dense *B = NULL, *C[2] = {NULL, NULL};
    CHECK_OK(ctx, dsmm_dense_create(ctx, A->ncols, k, type, &B));
    for (dsmm_idx e = 0; e < A->ncols * k; e++) {
        double x = (double)((e * 37) % 101) / 17.0 - 3.0;
        if (type == DSMM_DOUBLE)
            ((double *)B->val)[e] = x;
        else
            ((float *)B->val)[e] = (float)x;
    }
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    o.alg = DSMM_SPMM_ROW;
    o.alpha = alpha;
    for (int th = 1; th <= 2; th++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, th));
        for (int v = 0; v < 2; v++) {
            CHECK_OK(ctx, dsmm_dense_create(ctx, A->nrows, k, type, &C[v]));
            set(v);
            CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C[v], &o, NULL));
        }
        size_t bytes = (size_t)A->nrows * (size_t)k * type_size(type);
        CHECK_MSG(bytes == 0 || memcmp(C[0]->val, C[1]->val, bytes) == 0,
                  "k %lld %s, %d threads: %s changed C's bits", (long long)k, dsmm_type_name(type),
                  th, what);
        dsmm_dense_destroy(&C[0]);
        dsmm_dense_destroy(&C[1]);
    }
    dsmm_dense_destroy(&B);
    return TEST_PASS;
}

static void set_stream(int v)
{
    dsmmi_spmm_tune.row_stream_min = v ? 1 : 0;
}

static void set_block_prefetch(int v)
{
    dsmmi_spmm_tune.row_block_prefetch = v ? 2 : 0;
}

// Streaming stores for C (beta = 0, C aligned, at least row_stream_min bytes; here every
// size): the reference's values, padding untouched, unaligned C and leading dimensions taking
// plain stores, and the same bits as without streaming at 1 and 2 threads.
static int test_streaming_stores(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx pads[][3] = {{0, 0, 0}, {0, 1, 0}, {0, 3, 1}, {0, 4, 0}};
    static const dsmm_idx ks[] = {1, 4, 8, 16, 33, 64, 100, 256};
    size_t keep = dsmmi_spmm_tune.row_stream_min;
    test_mat ma;
    test_mat_init(&ma, 61, 45, 0.12, seed_at(450));
    ma.empty_rows = 0.1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    int rc = TEST_PASS;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == TEST_PASS; i++)
        for (int t = 0; t < 2 && rc == TEST_PASS; t++) {
            dsmm_type type = t ? DSMM_DOUBLE : DSMM_FLOAT;
            for (size_t p = 0; p < sizeof pads / sizeof pads[0] && rc == TEST_PASS; p++) {
                spmm_case c;
                const double *ab = alpha_beta[(i + p) % 3]; // beta = 0 twice in three
                case_init(&c, type, ks[i], ab[0], ab[1]);
                c.ldb_pad = pads[p][0];
                c.ldc_pad = pads[p][1];
                c.off = pads[p][2];
                dsmmi_spmm_tune.row_stream_min = 1;
                rc = check_spmm(ctx, A, &c, "streaming stores");
            }
            // The same bits with and without streaming (library-allocated, aligned C).
            if (rc == TEST_PASS)
                rc = row_same_bits(ctx, A, ks[i], type, 1.5, set_stream, "streaming stores");
        }
    dsmmi_spmm_tune.row_stream_min = keep;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&A);
    if (rc != TEST_PASS) return rc;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The row-wise kernel's wide-k path (k >= row_buffer_k) with the rows of B `row_prefetch`
// entries ahead prefetched (0 = none): the same values at every distance, including 1 (the
// next entry), past the end of a row (into the next rows) and past the thread's last entry;
// k with an odd number of vectors (132 doubles, 136 floats: the unrolled loop's leftover)
// and k over the 4 KiB buffer (600: two pieces of B's rows). The buffer is forced on
// (row_buffer_k = 128), whatever this CPU's default, and the same k run without it (0).
static int test_row_prefetch(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx ks[] = {128, 132, 136, 600};
    static const dsmm_idx dists[] = {0, 1, 3, 1000};
    dsmm_idx keep = dsmmi_spmm_tune.row_prefetch, keep_buf = dsmmi_spmm_tune.row_buffer_k;
    // the register blocks by default, on every CPU
    CHECK(keep_buf == 0);
    CHECK(dsmmi_spmm_buffer_k() == 0);
    dsmmi_spmm_tune.row_buffer_k = 128;
    CHECK(dsmmi_spmm_buffer_k() == 128);
    test_mat ma;
    test_mat_init(&ma, 53, 47, 0.2, seed_at(470));
    ma.empty_rows = 0.15;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    int rc = TEST_PASS;
    for (size_t d = 0; d < sizeof dists / sizeof dists[0] && rc == TEST_PASS; d++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == TEST_PASS; i++)
            for (int t = 0; t < 2 && rc == TEST_PASS; t++) {
                spmm_case c;
                const double *ab = alpha_beta[(d + i + (size_t)t) % NAB];
                case_init(&c, t ? DSMM_DOUBLE : DSMM_FLOAT, ks[i], ab[0], ab[1]);
                c.ldb_pad = (dsmm_idx)(i % 2);
                dsmmi_spmm_tune.row_prefetch = dists[d];
                dsmmi_spmm_tune.row_buffer_k = 128;
                rc = check_spmm(ctx, A, &c, "row prefetch");
                if (rc == TEST_PASS && d == 0) {
                    dsmmi_spmm_tune.row_buffer_k = 0; // the register blocks on the same k
                    rc = check_spmm(ctx, A, &c, "row wide k, no buffer");
                }
            }
    dsmmi_spmm_tune.row_prefetch = keep;
    dsmmi_spmm_tune.row_buffer_k = keep_buf;
    dsmm_csr_destroy(&A);
    if (rc != TEST_PASS) return rc;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The row-wise register blocks with the rows of B `row_block_prefetch` entries ahead
// prefetched (blocks of 128 bytes or more: k = 32 floats, 16 doubles and up): every distance,
// including 1, past a row's end and past the thread's last entry, checked against the reference
// and bitwise against no prefetch at 1 and 2 threads. The automatic rule (-1) gives 0 or 8, and
// 0 for a B that any L2 holds.
static int test_row_block_prefetch(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx ks[] = {32, 64, 100, 256};
    static const dsmm_idx dists[] = {1, 3, 8, 1000};
    dsmm_idx keep = dsmmi_spmm_tune.row_block_prefetch;
    CHECK(keep == -1);
    test_mat ma;
    test_mat_init(&ma, 57, 43, 0.2, seed_at(480));
    ma.empty_rows = 0.15;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    int rc = TEST_PASS;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == TEST_PASS; i++)
        for (int t = 0; t < 2 && rc == TEST_PASS; t++) {
            dsmm_type type = t ? DSMM_DOUBLE : DSMM_FLOAT;
            // the rule: a B of at most 43 * 256 * 8 = 88 KB never prefetches, whatever the CPU
            dsmmi_spmm_args args = {.A = A, .type = type, .m = A->nrows, .n = A->ncols, .k = ks[i]};
            dsmmi_spmm_tune.row_block_prefetch = -1;
            CHECK(dsmmi_spmm_block_prefetch(&args) == 0);
            dsmmi_spmm_tune.row_block_prefetch = 5;
            CHECK(dsmmi_spmm_block_prefetch(&args) == 5);
            for (size_t d = 0; d < sizeof dists / sizeof dists[0] && rc == TEST_PASS; d++) {
                spmm_case c;
                const double *ab = alpha_beta[(d + i + (size_t)t) % NAB];
                case_init(&c, type, ks[i], ab[0], ab[1]);
                c.ldb_pad = (dsmm_idx)(d % 2);
                dsmmi_spmm_tune.row_block_prefetch = dists[d];
                rc = check_spmm(ctx, A, &c, "row block prefetch");
            }
            // The same bits with and without the prefetch.
            if (rc == TEST_PASS)
                rc = row_same_bits(ctx, A, ks[i], type, 0.75, set_block_prefetch,
                                   "the block prefetch");
        }
    dsmmi_spmm_tune.row_block_prefetch = keep;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&A);
    if (rc != TEST_PASS) return rc;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- options, info, traffic -------------------------------------------------------------- */

static int test_info(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_spmm_opts o;
    memset(&o, 0x5a, sizeof o);
    dsmm_spmm_opts_init(&o);
    CHECK(o.alg == DSMM_SPMM_AUTO && o.transpose_a == 0 && o.alpha == 1.0 && o.beta == 0.0);

    // A = [1 0 2 0; 0 0 0 3; 4 5 0 0]: 3 x 4, 5 entries
    dsmm_idx rp[] = {0, 2, 3, 5}, ci[] = {0, 2, 3, 0, 1};
    double av[] = {1, 2, 3, 4, 5};
    dsmm_csr *A = NULL, *Af = NULL, *Ap = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 3, 4, rp, ci, av, DSMM_DOUBLE, &A));
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_FLOAT, 32, &Af));
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_PATTERN, 64, &Ap));
    // counted by hand: rowptr 4 * 8 = 32; columns 5 * 8 = 40 (5 * 4 = 20 when 32-bit); values
    // 5 * 8 = 40 (5 * 4 float, none pattern); B n x k and C m x k, C twice when beta != 0
    CHECK(dsmm_spmm_bytes(A, 0, 7, DSMM_DOUBLE, 0) == 32 + 40 + 40 + 4 * 7 * 8 + 3 * 7 * 8);
    CHECK(dsmm_spmm_bytes(A, 0, 7, DSMM_DOUBLE, 2) == 32 + 40 + 40 + 4 * 7 * 8 + 2 * 3 * 7 * 8);
    CHECK(dsmm_spmm_bytes(A, 1, 7, DSMM_DOUBLE, 0) == 32 + 40 + 40 + 3 * 7 * 8 + 4 * 7 * 8);
    CHECK(dsmm_spmm_bytes(A, 1, 7, DSMM_DOUBLE, -1) == 32 + 40 + 40 + 3 * 7 * 8 + 2 * 4 * 7 * 8);
    CHECK(dsmm_spmm_bytes(A, 0, 7, DSMM_FLOAT, 0) == 32 + 40 + 40 + 4 * 7 * 4 + 3 * 7 * 4);
    CHECK(dsmm_spmm_bytes(Af, 0, 7, DSMM_FLOAT, 0) == 32 + 20 + 20 + 4 * 7 * 4 + 3 * 7 * 4);
    CHECK(dsmm_spmm_bytes(Af, 0, 3, DSMM_DOUBLE, 1) == 32 + 20 + 20 + 4 * 3 * 8 + 2 * 3 * 3 * 8);
    CHECK(dsmm_spmm_bytes(Ap, 0, 7, DSMM_DOUBLE, 0) == 32 + 40 + 0 + 4 * 7 * 8 + 3 * 7 * 8);
    CHECK(dsmm_spmm_bytes(A, 0, 0, DSMM_DOUBLE, 1) == 32 + 40 + 40);
    CHECK(dsmm_spmm_bytes(A, 0, 7, DSMM_PATTERN, 0) == 0);
    CHECK(dsmm_spmm_bytes(NULL, 0, 7, DSMM_DOUBLE, 0) == 0);

    // The product by hand: B = [1 2; 3 4; 5 6; 7 8] (4 x 2), A * B = [11 14; 21 24; 19 28],
    // A^T * [1 0; 0 1; 1 1] = [5 4; 5 5; 2 0; 0 3].
    double bv[] = {1, 2, 3, 4, 5, 6, 7, 8}, cv[6], tv[] = {1, 0, 0, 1, 1, 1}, ctv[8];
    double want[] = {11, 14, 21, 24, 19, 28}, want_t[] = {5, 4, 5, 5, 2, 0, 0, 3};
    dsmm_dense *B = NULL, *C = NULL, *T = NULL, *CT = NULL;
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 4, 2, 2, bv, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 3, 2, 2, cv, DSMM_DOUBLE, &C));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 3, 2, 2, tv, DSMM_DOUBLE, &T));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 4, 2, 2, ctv, DSMM_DOUBLE, &CT));
    for (int a = 0; a < NALGS; a++) {
        dsmm_spmm_opts_init(&o);
        o.alg = algs[a];
        dsmm_spmm_info info;
        for (int i = 0; i < 6; i++) cv[i] = NAN;
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, &info));
        for (int i = 0; i < 6; i++) CHECK_NEAR(cv[i], want[i], 0);
        CHECK(info.flops == 20);
        CHECK(info.bytes == 32 + 40 + 40 + 64 + 48);
        CHECK(info.alg == resolved(algs[a], 0));
        o.transpose_a = 1;
        o.beta = 1;
        for (int i = 0; i < 8; i++) ctv[i] = 0.5;
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, T, CT, &o, &info));
        for (int i = 0; i < 8; i++) CHECK_NEAR(ctv[i], want_t[i] + 0.5, 0);
        CHECK(info.flops == 20);
        CHECK(info.bytes == 32 + 40 + 40 + 48 + 2 * 64);
        CHECK(info.alg == resolved(algs[a], 1));
        // info may be NULL
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, T, CT, &o, NULL));
        for (int i = 0; i < 8; i++) CHECK_NEAR(ctv[i], 2 * want_t[i] + 0.5, 0);
    }
    // opts NULL: the defaults (AUTO, A * B, alpha 1, beta 0)
    dsmm_spmm_info info;
    for (int i = 0; i < 6; i++) cv[i] = NAN;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, NULL, &info));
    for (int i = 0; i < 6; i++) CHECK_NEAR(cv[i], want[i], 0);
    CHECK(info.alg == DSMM_SPMM_ROW);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_dense_destroy(&T);
    dsmm_dense_destroy(&CT);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&Af);
    dsmm_csr_destroy(&Ap);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- bad input --------------------------------------------------------------------------- */

static int test_bad_input(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 10, 8, 0.3, seed_at(600));
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    // A is 10 x 8: A * B needs B 8 x k and C 10 x k; A^T * B needs B 10 x k and C 8 x k
    static double buf_d[400];
    static float buf_f[400];
    dsmm_dense *B8 = NULL, *B10 = NULL, *C10 = NULL, *C8 = NULL, *C10k4 = NULL, *C9 = NULL,
               *B8f = NULL, *C10f = NULL;
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_d, DSMM_DOUBLE, &B8));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 10, 3, 3, buf_d + 50, DSMM_DOUBLE, &B10));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 10, 3, 3, buf_d + 100, DSMM_DOUBLE, &C10));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_d + 150, DSMM_DOUBLE, &C8));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 10, 4, 4, buf_d + 200, DSMM_DOUBLE, &C10k4));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 9, 3, 3, buf_d + 250, DSMM_DOUBLE, &C9));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_f, DSMM_FLOAT, &B8f));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 10, 3, 3, buf_f + 100, DSMM_FLOAT, &C10f));
    dsmm_spmm_opts o;
    for (int a = 0; a < NALGS; a++) {
        dsmm_spmm_opts_init(&o);
        o.alg = algs[a];
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B8, C10, &o, NULL));
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B8f, C10f, &o, NULL));
        // shapes: B's rows, C's rows, C's columns, in both orientations
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B10, C10, &o, NULL), DSMM_ERR_DIM);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C9, &o, NULL), DSMM_ERR_DIM);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C8, &o, NULL), DSMM_ERR_DIM);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10k4, &o, NULL), DSMM_ERR_DIM);
        o.transpose_a = 1;
        CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B10, C8, &o, NULL));
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C8, &o, NULL), DSMM_ERR_DIM);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B10, C10, &o, NULL), DSMM_ERR_DIM);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B10, C9, &o, NULL), DSMM_ERR_DIM);
        o.transpose_a = 0;
        // B and C of different types
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10f, &o, NULL), DSMM_ERR_ARG);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8f, C10, &o, NULL), DSMM_ERR_ARG);
        // non-finite alpha or beta
        static const double bad[] = {NAN, INFINITY, -INFINITY};
        for (int b = 0; b < 3; b++) {
            o.alpha = bad[b];
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10, &o, NULL), DSMM_ERR_ARG);
            o.alpha = 1;
            o.beta = bad[b];
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10, &o, NULL), DSMM_ERR_ARG);
            o.beta = 0;
        }
        // NULL arguments
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, NULL, B8, C10, &o, NULL), DSMM_ERR_ARG);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, NULL, C10, &o, NULL), DSMM_ERR_ARG);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, NULL, &o, NULL), DSMM_ERR_ARG);
        CHECK_ST(ctx, dsmm_csr_spmm(NULL, A, B8, C10, &o, NULL), DSMM_ERR_ARG);
    }
    // C overlapping B: the same buffer, and C starting inside B
    dsmm_dense *S = NULL, *Sb = NULL, *Sc = NULL;
    dsmm_csr *Q = NULL;
    test_mat mq;
    test_mat_init(&mq, 8, 8, 0.4, seed_at(601));
    CHECK_OK(ctx, test_rand_csr(ctx, &mq, &Q));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_d + 300, DSMM_DOUBLE, &S));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_d + 300, DSMM_DOUBLE, &Sb));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 8, 3, 3, buf_d + 300 + 3 * 7, DSMM_DOUBLE, &Sc));
    for (int a = 0; a < NALGS; a++)
        for (int trans = 0; trans <= 1; trans++) {
            dsmm_spmm_opts_init(&o);
            o.alg = algs[a];
            o.transpose_a = trans;
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, Q, S, Sb, &o, NULL), DSMM_ERR_ARG);
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, Q, S, S, &o, NULL), DSMM_ERR_ARG);
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, Q, S, Sc, &o, NULL), DSMM_ERR_ARG);
            CHECK_ST(ctx, dsmm_csr_spmm(ctx, Q, Sc, S, &o, NULL), DSMM_ERR_ARG);
        }
    // structs made by hand: a leading dimension below the column count, B of pattern type
    dsmm_dense hb = *B8, hc = *C10;
    hb.ld = 2;
    dsmm_spmm_opts_init(&o);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, &hb, C10, &o, NULL), DSMM_ERR_ARG);
    hc.ld = 2;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, &hc, &o, NULL), DSMM_ERR_ARG);
    hb = *B8;
    hb.val = NULL;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, &hb, C10, &o, NULL), DSMM_ERR_ARG);
    hb = *B8;
    hc = *C10;
    hb.type = hc.type = DSMM_PATTERN;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, &hb, &hc, &o, NULL), DSMM_ERR_ARG);
    // unknown kernels
    static const int bad_alg[] = {-1, DSMM_SPMM_ALG_COUNT, 99};
    for (int b = 0; b < 3; b++) {
        o.alg = (dsmm_spmm_alg)bad_alg[b];
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10, &o, NULL), DSMM_ERR_ARG);
    }
    // the GPU kernel in a build without CUDA
#if !DSMM_HAVE_CUDA
    dsmm_spmm_opts_init(&o);
    o.alg = DSMM_SPMM_GPU;
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B8, C10, &o, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "gpu");
#endif
    dsmm_dense *all[] = {B8, B10, C10, C8, C10k4, C9, B8f, C10f, S, Sb, Sc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) dsmm_dense_destroy(&all[i]);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&Q);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_names(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_spmm_alg alg;
    static const char *names[] = {"auto", "row", "col", "ref", "gpu", "cusparse"};
    for (int a = 0; a < DSMM_SPMM_ALG_COUNT; a++) {
        CHECK(strcmp(dsmm_spmm_alg_name((dsmm_spmm_alg)a), names[a]) == 0);
        CHECK_OK(ctx, dsmm_spmm_alg_from_name(dsmm_spmm_alg_name((dsmm_spmm_alg)a), &alg));
        CHECK(alg == (dsmm_spmm_alg)a);
    }
    static const char *bad[] = {"fast", "", "rows", "hash", "auto "};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        alg = DSMM_SPMM_COL;
        CHECK_ST(ctx, dsmm_spmm_alg_from_name(bad[b], &alg), DSMM_ERR_ARG);
        CHECK(alg == DSMM_SPMM_COL); // untouched on error
    }
    CHECK_ST(ctx, dsmm_spmm_alg_from_name(NULL, &alg), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_alg_from_name("row", NULL), DSMM_ERR_ARG);
    CHECK(dsmm_spmm_alg_name((dsmm_spmm_alg)99) != NULL);
    CHECK(dsmm_spmm_alg_name((dsmm_spmm_alg)-1) != NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- memory ------------------------------------------------------------------------------ */

// The calls that need scratch: A's values in another type, A in the other orientation.
typedef struct scratch_call {
    dsmm_type atype, btype;
    dsmm_spmm_alg alg;
    int trans;
    const char *what;
} scratch_call;

static const scratch_call scratch_calls[] = {
    {DSMM_FLOAT, DSMM_DOUBLE, DSMM_SPMM_ROW, 0, "float A, double B (conversion)"},
    {DSMM_DOUBLE, DSMM_FLOAT, DSMM_SPMM_AUTO, 0, "double A, float B (conversion)"},
    {DSMM_DOUBLE, DSMM_DOUBLE, DSMM_SPMM_COL, 0, "col without transpose_a (transpose)"},
    {DSMM_DOUBLE, DSMM_DOUBLE, DSMM_SPMM_ROW, 1, "row with transpose_a (transpose)"},
    {DSMM_FLOAT, DSMM_DOUBLE, DSMM_SPMM_AUTO, 1, "auto, A^T, float A (conversion)"},
};
#define NSCRATCH ((int)(sizeof scratch_calls / sizeof scratch_calls[0]))

// A budget a few bytes above what is in use: DSMM_ERR_NOMEM and nothing leaked; then every
// k-th allocation made to fail in turn, each failure clean, until the call succeeds.
static int test_budget(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 60, 50, 0.3, seed_at(700));
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    CHECK(A->nnz > 500); // its scratch is thousands of bytes
    for (int s = 0; s < NSCRATCH; s++) {
        const scratch_call *sc = &scratch_calls[s];
        dsmm_csr *A2 = NULL;
        CHECK_OK(ctx, test_csr_convert(ctx, A, sc->atype, 64, &A2));
        dsmm_idx m = sc->trans ? A->ncols : A->nrows, n = sc->trans ? A->nrows : A->ncols;
        const dsmm_idx k = 8;
        buf b, c;
        dsmm_dense *Bd = NULL, *Cd = NULL;
        dsmm_rng g;
        dsmm_rng_init(&g, seed_at(701), (uint64_t)s);
        if (buf_make(&b, n, k, k, 0, sc->btype) != TEST_PASS ||
            buf_make(&c, m, k, k, 0, sc->btype) != TEST_PASS)
            return TEST_FAIL;
        buf_fill(&b, &g, 0, 0);
        buf_fill(&c, &g, 0, 0);
        if (buf_wrap(ctx, &b, &Bd) != TEST_PASS || buf_wrap(ctx, &c, &Cd) != TEST_PASS)
            return TEST_FAIL;
        dsmm_spmm_opts o;
        dsmm_spmm_opts_init(&o);
        o.alg = sc->alg;
        o.transpose_a = sc->trans;
        size_t base = dsmm_ctx_mem_in_use(ctx);
        dsmm_ctx_set_mem_budget(ctx, base + 64);
        dsmm_status st = dsmm_csr_spmm(ctx, A2, Bd, Cd, &o, NULL);
        dsmm_ctx_set_mem_budget(ctx, 0);
        CHECK_MSG(st == DSMM_ERR_NOMEM, "%s: %s: %s", sc->what, dsmm_status_name(st),
                  dsmm_ctx_last_error(ctx));
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
        for (int t = 1; t <= 2; t++) {
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
            long fail_at = 0;
            for (;; fail_at++) {
                CHECK_MSG(fail_at < 1000, "%s: still failing after 1000 allocations", sc->what);
                dsmm_ctx_fail_alloc_at(ctx, fail_at);
                st = dsmm_csr_spmm(ctx, A2, Bd, Cd, &o, NULL);
                dsmm_ctx_fail_alloc_at(ctx, -1);
                CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
                if (st == DSMM_OK) break;
                CHECK_MSG(st == DSMM_ERR_NOMEM, "%s, allocation %ld failing: %s: %s", sc->what,
                          fail_at, dsmm_status_name(st), dsmm_ctx_last_error(ctx));
            }
            CHECK_MSG(fail_at >= 1, "%s: succeeded with the first allocation failing", sc->what);
        }
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
        dsmm_dense_destroy(&Bd);
        dsmm_dense_destroy(&Cd);
        buf_free(&b);
        buf_free(&c);
        dsmm_csr_destroy(&A2);
    }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- rows by length ----------------------------------------------------------------------- */

// dsmm_spmm_rows_create and the checks of dsmm_csr_spmm on rows: bad arguments, rows of another
// A or type, with a transpose, tiles or a kernel that does not read them, every allocation
// failing in turn; the stored order (within each block of rows, by length, stably; every row's
// entries A's) on a matrix of several blocks with empty, short and long rows; and the product
// on it bitwise the plain row-wise kernel's at 1 and 2 threads for the widths that take the
// k = 1 gather, the one-vector loops (ROW_ODD1) and the general blocks.
static int test_rows(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 30, 20, 0.2, seed_at(950));
    dsmm_csr *A = NULL, *A2 = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    test_mat_init(&ma, 30, 20, 0.3, seed_at(951)); // same shape, other entry count
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A2));
    CHECK(A2->nnz != A->nnz);
    dsmm_spmm_rows *rw = NULL, *rf = NULL;
    CHECK_ST(ctx, dsmm_spmm_rows_create(ctx, A, 8, DSMM_DOUBLE, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_rows_create(ctx, NULL, 8, DSMM_DOUBLE, &rw), DSMM_ERR_ARG);
    CHECK(rw == NULL);
    CHECK_ST(ctx, dsmm_spmm_rows_create(ctx, A, 8, DSMM_PATTERN, &rw), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_rows_create(ctx, A, 0, DSMM_DOUBLE, &rw), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_rows_create(NULL, A, 8, DSMM_DOUBLE, &rw), DSMM_ERR_ARG);
    CHECK(rw == NULL && dsmm_spmm_rows_bytes(NULL) == 0 && dsmm_spmm_rows_by_length(NULL) == 0);
    dsmm_spmm_rows_destroy(NULL);
    dsmm_spmm_rows_destroy(&rw);

    dsmmi_spmm_tune.rows_reorder = 1;
    CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, A, 8, DSMM_DOUBLE, &rw));
    CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, A, 8, DSMM_FLOAT, &rf));
    static double bd[30 * 8], cd[30 * 8];
    static float bf[30 * 8], cf[30 * 8];
    dsmm_dense *B = NULL, *C = NULL, *Bf = NULL, *Cf = NULL;
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, bd, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, cd, DSMM_DOUBLE, &C));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, bf, DSMM_FLOAT, &Bf));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, cf, DSMM_FLOAT, &Cf));
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    CHECK(o.rows == NULL);
    o.rows = rw;
    dsmm_spmm_info info;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, &info));
    CHECK(info.alg == DSMM_SPMM_ROW && info.workspace_bytes == 0 && info.passes == 1);
    o.alg = DSMM_SPMM_ROW;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL));
    o.k_block = 3; // passes of 3 columns read the rows too
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, &info));
    CHECK(info.passes == 3 && info.k_block == 3);
    o.k_block = 0;
    static const dsmm_spmm_alg other[] = {DSMM_SPMM_COL, DSMM_SPMM_REF, DSMM_SPMM_GPU};
    for (int a = 0; a < 3; a++) {
        o.alg = other[a];
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG);
        CHECK_MSG(strstr(dsmm_ctx_last_error(ctx), "row-wise") != NULL, "%s",
                  dsmm_ctx_last_error(ctx));
    }
    o.alg = DSMM_SPMM_AUTO;
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A2, B, C, &o, NULL), DSMM_ERR_ARG); // another A
    CHECK(strstr(dsmm_ctx_last_error(ctx), "not from this A") != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, Bf, Cf, &o, NULL), DSMM_ERR_ARG); // double rows
    CHECK(strstr(dsmm_ctx_last_error(ctx), "double") != NULL);
    o.rows = rf;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, Bf, Cf, &o, NULL));
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG);
    {
        dsmm_dense *B30 = NULL, *C20 = NULL;
        CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, bf, DSMM_FLOAT, &B30));
        CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, cf, DSMM_FLOAT, &C20));
        o.transpose_a = 1;
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B30, C20, &o, NULL), DSMM_ERR_ARG);
        CHECK(strstr(dsmm_ctx_last_error(ctx), "transpose") != NULL);
        o.transpose_a = 0;
        dsmm_spmm_tiles *tl = NULL;
        CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 8, DSMM_FLOAT, &tl));
        o.tiles = tl;
        CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, Bf, Cf, &o, NULL), DSMM_ERR_ARG);
        o.tiles = NULL;
        dsmm_spmm_tiles_destroy(&tl);
        dsmm_dense_destroy(&B30);
        dsmm_dense_destroy(&C20);
    }
    dsmm_ctx_clear_error(ctx);

    // Every allocation of the creation failing in turn: a clean DSMM_ERR_NOMEM, nothing kept.
    size_t base = dsmm_ctx_mem_in_use(ctx);
    long fail_at = 0;
    dsmm_spmm_rows *rx = NULL;
    for (;; fail_at++) {
        CHECK(fail_at < 100);
        dsmm_ctx_fail_alloc_at(ctx, fail_at);
        dsmm_status st = dsmm_spmm_rows_create(ctx, A, 8, DSMM_FLOAT, &rx);
        dsmm_ctx_fail_alloc_at(ctx, -1);
        if (st == DSMM_OK) break;
        CHECK_MSG(st == DSMM_ERR_NOMEM && rx == NULL, "allocation %ld failing: %s", fail_at,
                  dsmm_status_name(st));
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
    }
    CHECK(fail_at >= 3); // the struct, the row map, the stored rows' arrays
    dsmm_spmm_rows_destroy(&rx);
    dsmm_ctx_clear_error(ctx);

    // Three blocks and a part: rows of 0-40 entries (a quarter empty, lengths in runs so that
    // the sort moves them), one row of every column; pattern, float and double A.
    dsmm_idx m = 3 * DSMMI_SPMM_ROWS_BLOCK + 517, n = 700;
    for (int vt = 0; vt < 3; vt++) {
        static const dsmm_type vts[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};
        test_mat_init(&ma, m, n, 0.02, seed_at(960 + (uint64_t)vt));
        ma.type = vts[vt];
        ma.empty_rows = 0.25;
        ma.dense_row = 4100;
        dsmm_csr *L = NULL;
        CHECK_OK(ctx, test_rand_csr(ctx, &ma, &L));
        for (int ty = 0; ty < 2; ty++) {
            dsmm_type type = ty ? DSMM_DOUBLE : DSMM_FLOAT;
            dsmm_spmm_rows *r = NULL;
            CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, L, 8, type, &r));
            CHECK(r->crow != NULL);
            CHECK(r->S->nrows == m && r->S->nnz == L->nnz && r->S->colidx32 != NULL);
            CHECK(r->type == (vts[vt] == DSMM_PATTERN ? DSMM_PATTERN : type));
            char *seen = calloc((size_t)m, 1);
            CHECK(seen != NULL);
            for (dsmm_idx i = 0; i < m; i++) {
                dsmm_idx src = r->crow[i], len = r->S->rowptr[i + 1] - r->S->rowptr[i];
                CHECK(src >= 0 && src < m && !seen[src]);
                seen[src] = 1;
                CHECK(src / DSMMI_SPMM_ROWS_BLOCK == i / DSMMI_SPMM_ROWS_BLOCK); // its block
                CHECK_EQ_IDX(len, L->rowptr[src + 1] - L->rowptr[src]);
                for (dsmm_idx p = 0; p < len; p++) {
                    dsmm_idx q = L->rowptr[src] + p, s2 = r->S->rowptr[i] + p;
                    CHECK(dsmm_csr_col(L, q) == r->S->colidx32[s2]);
                    if (vts[vt] == DSMM_PATTERN) continue;
                    double v = vts[vt] == DSMM_FLOAT ? ((float *)L->val)[q] : ((double *)L->val)[q];
                    double got =
                        type == DSMM_FLOAT ? ((float *)r->val)[s2] : ((double *)r->val)[s2];
                    CHECK(got == v); // values are exact in float
                }
                if (i % DSMMI_SPMM_ROWS_BLOCK == 0) continue;
                // by length within the block (lengths of 63 and more share a bucket), stably
                dsmm_idx prev = r->crow[i - 1];
                dsmm_idx lp = L->rowptr[prev + 1] - L->rowptr[prev], l1 = lp < 63 ? lp : 63,
                         l2 = len < 63 ? len : 63;
                CHECK(l1 < l2 || (l1 == l2 && prev < src));
            }
            free(seen);
            static const dsmm_idx ks[] = {1, 3, 4, 8, 16, 33};
            for (int ki = 0; ki < 6; ki++) {
                dsmm_idx k = ks[ki];
                spmm_case c;
                case_init(&c, type, k, ki % 2 ? 1.0 : 2.5, ki % 2 ? 0.5 : 0.0);
                dsmm_rng g;
                dsmm_rng_init(&g, seed_at(970 + (uint64_t)ki), 3);
                buf b, c0, want, got;
                if (buf_make(&b, n, k, k, 0, type) != TEST_PASS ||
                    buf_make(&c0, m, k, k, 0, type) != TEST_PASS)
                    return TEST_FAIL;
                buf_fill(&b, &g, 0, 0);
                buf_fill(&c0, &g, 0, 0);
                dsmm_dense *Bd = NULL, *Cd = NULL;
                for (int t = 1; t <= 2; t++) {
                    for (int use = 0; use <= 1; use++) {
                        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
                        if (buf_copy(&got, &c0) != TEST_PASS ||
                            buf_wrap(ctx, &b, &Bd) != TEST_PASS ||
                            buf_wrap(ctx, &got, &Cd) != TEST_PASS)
                            return TEST_FAIL;
                        dsmm_spmm_opts_init(&o);
                        o.alpha = c.alpha;
                        o.beta = c.beta;
                        o.alg = DSMM_SPMM_ROW;
                        o.rows = use ? r : NULL;
                        CHECK_OK(ctx, dsmm_csr_spmm(ctx, L, Bd, Cd, &o, &info));
                        dsmm_dense_destroy(&Bd);
                        dsmm_dense_destroy(&Cd);
                        if (t == 1 && !use) {
                            want = got;
                            continue;
                        }
                        CHECK_MSG(buf_same_bits(&got, &want),
                                  "rows: %s A, %s product, k %lld, %d thread%s, %s: C differs "
                                  "bitwise from the row-wise kernel on A at 1 thread",
                                  dsmm_type_name(vts[vt]), dsmm_type_name(type), (long long)k, t,
                                  t > 1 ? "s" : "", use ? "rows" : "A");
                        CHECK(info.threads == t);
                        buf_free(&got);
                    }
                }
                buf_free(&want);
                buf_free(&b);
                buf_free(&c0);
            }
            dsmm_spmm_rows_destroy(&r);
        }
        dsmm_csr_destroy(&L);
    }
    dsmmi_spmm_tune.rows_reorder = -1;

    // The library's choice (reorder_pays): short rows of mixed lengths are stored by length
    // for rows of B of up to 64 bytes (k = 1, 8 floats, 8 doubles), not for wider ones; rows of
    // one length (a band), or of more than 24 entries on average, keep A's order.
    {
        test_mat_init(&ma, 5000, 5000, 0.002, seed_at(990)); // about 10 a row, mixed
        dsmm_csr *G = NULL, *W = NULL;
        CHECK_OK(ctx, test_rand_csr(ctx, &ma, &G));
        test_mat_init(&ma, 500, 500, 0.2, seed_at(991)); // about 100 a row
        CHECK_OK(ctx, test_rand_csr(ctx, &ma, &W));
        static const struct {
            dsmm_idx k;
            dsmm_type type;
            int want;
        } pv[] = {{1, DSMM_DOUBLE, 1}, {8, DSMM_FLOAT, 1},   {8, DSMM_DOUBLE, 1},
                  {16, DSMM_FLOAT, 1}, {16, DSMM_DOUBLE, 0}, {64, DSMM_FLOAT, 0}};
        for (int i = 0; i < (int)(sizeof pv / sizeof pv[0]); i++) {
            dsmm_spmm_rows *r = NULL;
            CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, G, pv[i].k, pv[i].type, &r));
            CHECK_MSG((r->crow != NULL) == pv[i].want, "k %lld %s: reordered %d",
                      (long long)pv[i].k, dsmm_type_name(pv[i].type), r->crow != NULL);
            CHECK(dsmm_spmm_rows_by_length(r) == pv[i].want);
            dsmm_spmm_rows_destroy(&r);
        }
        dsmm_spmm_rows *r = NULL;
        CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, W, 8, DSMM_FLOAT, &r));
        CHECK(r->crow == NULL);
        dsmm_spmm_rows_destroy(&r);
        // a band: every row 5 entries
        dsmm_csr *Bn = NULL;
        CHECK_OK(ctx, dsmm_csr_create(ctx, 1000, 1000, 5000, DSMM_DOUBLE, &Bn));
        for (dsmm_idx i = 0; i < 1000; i++) {
            for (dsmm_idx j = 0; j < 5; j++) {
                Bn->colidx[i * 5 + j] = (i + j) % 1000;
                ((double *)Bn->val)[i * 5 + j] = 1.0;
            }
            Bn->rowptr[i + 1] = (i + 1) * 5;
        }
        Bn->nnz = 5000;
        Bn->sorted = 0;
        CHECK_OK(ctx, dsmm_spmm_rows_create(ctx, Bn, 8, DSMM_FLOAT, &r));
        CHECK(r->crow == NULL);
        dsmm_spmm_rows_destroy(&r);
        dsmm_csr_destroy(&Bn);
        dsmm_csr_destroy(&G);
        dsmm_csr_destroy(&W);
    }

    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_spmm_rows_destroy(&rw);
    dsmm_spmm_rows_destroy(&rf);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_dense_destroy(&Bf);
    dsmm_dense_destroy(&Cf);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&A2);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- tiles ------------------------------------------------------------------------------- */

// dsmm_spmm_tiles_create and the checks of dsmm_csr_spmm on tiles: bad arguments, tiles of
// another A, orientation or type, a kernel that does not read tiles, every allocation failing
// in turn; the tile height (col_tile_bytes of C, at least 4 tiles a thread, at most 65536
// rows) on a tall matrix against the reference.
static int test_tiles(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 30, 20, 0.2, seed_at(900));
    dsmm_csr *A = NULL, *A2 = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    test_mat_init(&ma, 30, 20, 0.3, seed_at(901)); // same shape, other entry count
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A2));
    CHECK(A2->nnz != A->nnz);
    dsmm_spmm_tiles *tl = NULL, *tf = NULL, *tt = NULL;
    CHECK_ST(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 8, DSMM_DOUBLE, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_tiles_create(ctx, NULL, 0, 8, DSMM_DOUBLE, &tl), DSMM_ERR_ARG);
    CHECK(tl == NULL);
    CHECK_ST(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 0, DSMM_DOUBLE, &tl), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 8, DSMM_PATTERN, &tl), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_spmm_tiles_create(NULL, A, 0, 8, DSMM_DOUBLE, &tl), DSMM_ERR_ARG);
    CHECK(tl == NULL && dsmm_spmm_tiles_bytes(NULL) == 0);
    dsmm_spmm_tiles_destroy(NULL);
    dsmm_spmm_tiles_destroy(&tl);

    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 8, DSMM_DOUBLE, &tl));
    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, A, 0, 8, DSMM_FLOAT, &tf));
    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, A, 1, 8, DSMM_DOUBLE, &tt));
    CHECK(tl->m == 30 && tl->n == 20 && tt->m == 20 && tt->n == 30 && tl->nnz == A->nnz);
    static double bd[30 * 8], cd[30 * 8];
    static float bf[30 * 8], cf[30 * 8];
    dsmm_dense *B = NULL, *C = NULL, *Bf = NULL, *Cf = NULL;
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, bd, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, cd, DSMM_DOUBLE, &C));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, bf, DSMM_FLOAT, &Bf));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, cf, DSMM_FLOAT, &Cf));
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    CHECK(o.tiles == NULL);
    o.tiles = tl;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL));
    o.alg = DSMM_SPMM_COL;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL));
    {
        // C streamed out of tile buffers (beta != 0, where the rows layout loads C's rows):
        // the buffers are workspace, and their allocation failing is a clean DSMM_ERR_NOMEM.
        // With beta = 0 the rows layout streams its rows straight to C: no workspace.
        dsmmi_spmm_tuning keep = dsmmi_spmm_tune;
        dsmmi_spmm_tune.row_stream_min = 1;
        dsmmi_spmm_tune.col_tile_stream_row = 0;
        dsmm_spmm_info info;
        size_t before = dsmm_ctx_mem_in_use(ctx);
        o.beta = 1;
        dsmm_ctx_fail_alloc_at(ctx, 0);
        dsmm_status st = dsmm_csr_spmm(ctx, A, B, C, &o, &info);
        dsmm_ctx_fail_alloc_at(ctx, -1);
        int ok = st == DSMM_ERR_NOMEM && dsmm_ctx_mem_in_use(ctx) == before;
        ok = ok && dsmm_csr_spmm(ctx, A, B, C, &o, &info) == DSMM_OK && info.workspace_bytes > 0;
        o.beta = 0;
        ok = ok && dsmm_csr_spmm(ctx, A, B, C, &o, &info) == DSMM_OK && info.workspace_bytes == 0;
        dsmmi_spmm_tune = keep;
        CHECK_MSG(ok, "streamed tiles: %s", dsmm_ctx_last_error(ctx));
    }
    dsmm_ctx_clear_error(ctx);
    o.alg = DSMM_SPMM_ROW; // a kernel that does not read tiles
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG);
    CHECK_MSG(strstr(dsmm_ctx_last_error(ctx), "column-wise") != NULL, "%s",
              dsmm_ctx_last_error(ctx));
    o.alg = DSMM_SPMM_REF;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    o.alg = DSMM_SPMM_AUTO;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A2, B, C, &o, NULL), DSMM_ERR_ARG); // another A
    CHECK(strstr(dsmm_ctx_last_error(ctx), "not from this A") != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, Bf, Cf, &o, NULL), DSMM_ERR_ARG); // double tiles
    CHECK(strstr(dsmm_ctx_last_error(ctx), "double") != NULL);
    o.tiles = tf;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, Bf, Cf, &o, NULL));
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG);
    o.tiles = tt; // made for A^T * B
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A, B, C, &o, NULL), DSMM_ERR_ARG); // A * B: not transposed
    CHECK(strstr(dsmm_ctx_last_error(ctx), "(transposed)") != NULL);
    dsmm_dense *B30 = NULL, *C20 = NULL;
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 30, 8, 8, bd, DSMM_DOUBLE, &B30));
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 20, 8, 8, cd, DSMM_DOUBLE, &C20));
    o.transpose_a = 1;
    CHECK_ST(ctx, dsmm_csr_spmm(ctx, A2, B30, C20, &o, NULL), DSMM_ERR_ARG); // another A
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B30, C20, &o, NULL));
    dsmm_dense_destroy(&B30);
    dsmm_dense_destroy(&C20);

    // Every allocation of the creation failing in turn: a clean DSMM_ERR_NOMEM, nothing kept.
    size_t base = dsmm_ctx_mem_in_use(ctx);
    for (int trans = 0; trans <= 1; trans++) {
        long fail_at = 0;
        dsmm_spmm_tiles *tx = NULL;
        for (;; fail_at++) {
            CHECK(fail_at < 100);
            dsmm_ctx_fail_alloc_at(ctx, fail_at);
            dsmm_status st = dsmm_spmm_tiles_create(ctx, A, trans, 8, DSMM_DOUBLE, &tx);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            if (st == DSMM_OK) break;
            CHECK_MSG(st == DSMM_ERR_NOMEM && tx == NULL, "allocation %ld failing: %s", fail_at,
                      dsmm_status_name(st));
            CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
        }
        CHECK(fail_at >= 5);
        dsmm_spmm_tiles_destroy(&tx);
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
    }
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_dense_destroy(&Bf);
    dsmm_dense_destroy(&Cf);
    dsmm_spmm_tiles_destroy(&tl);
    dsmm_spmm_tiles_destroy(&tf);
    dsmm_spmm_tiles_destroy(&tt);

    // Segments by default only where a row of B takes 256 bytes to 8 vectors and runs average
    // 2 entries: a tridiagonal A^T * B with k = 32 doubles (256 bytes), 2 threads (heights of
    // 1000 / 8 = 125 rows), has one segment a row of S and two for the 14 rows that straddle a
    // tile's edge: 1014 segments for 2998 entries; k = 1 and k = 256 take none.
    {
        static dsmm_idx rp[1001], ci[2998];
        dsmm_idx q = 0;
        for (dsmm_idx r = 0; r < 1000; r++) {
            rp[r] = q;
            for (dsmm_idx c = r - 1; c <= r + 1; c++)
                if (c >= 0 && c < 1000) ci[q++] = c;
        }
        rp[1000] = q;
        CHECK_EQ_IDX(q, 2998);
        dsmm_csr *D = NULL;
        CHECK_OK(ctx, dsmm_csr_wrap(ctx, 1000, 1000, rp, ci, NULL, DSMM_PATTERN, &D));
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
        dsmmi_spmm_tune.col_tile_rows = 0; // segments and entries are the other layout
        CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, D, 1, 32, DSMM_DOUBLE, &tl));
        CHECK_EQ_IDX(tl->height, 125);
        CHECK_EQ_IDX(tl->nseg, 1014);
        CHECK(tl->sptr[8] == 1014 && tl->beg[1014] == 2998 && tl->beg[0] == 0 && tl->src32[0] == 0);
        dsmm_spmm_tiles_destroy(&tl);
        static const dsmm_idx ks[] = {1, 256};
        for (int i = 0; i < 2; i++) {
            CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, D, 1, ks[i], DSMM_DOUBLE, &tl));
            CHECK_EQ_IDX(tl->nseg, 0);
            dsmm_spmm_tiles_destroy(&tl);
        }
        dsmmi_spmm_tune.col_tile_rows = 1;
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
        dsmm_csr_destroy(&D);
    }

    // Tile heights: col_tile_bytes / (k * value size), at most 65536 rows, and fewer where C
    // has too few rows for 4 tiles a thread. A tall A^T * B (300000 rows of C, k = 1, one
    // thread, 16 MiB a tile): 65536 rows a tile, 5 tiles, against the reference.
    test_mat_init(&ma, 40, 300000, 0.0001, seed_at(902));
    ma.empty_rows = 0.2;
    dsmm_csr *T = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &T));
    dsmmi_spmm_tuning keep = dsmmi_spmm_tune;
    dsmmi_spmm_tune.col_tile_bytes = (size_t)16 << 20;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1));
    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, T, 1, 1, DSMM_DOUBLE, &tl));
    dsmmi_spmm_tune = keep;
    CHECK_EQ_IDX(tl->height, 65536);
    CHECK_EQ_IDX(tl->ntiles, 5);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2)); // 16 MiB, 2 threads: 300000 / 8 rows a tile
    dsmmi_spmm_tune.col_tile_bytes = (size_t)16 << 20;
    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, T, 1, 1, DSMM_DOUBLE, &tt));
    dsmmi_spmm_tune = keep;
    CHECK_EQ_IDX(tt->height, 37500);
    CHECK_OK(ctx, dsmm_spmm_tiles_create(ctx, T, 1, 64, DSMM_FLOAT, &tf)); // 32 KiB: 128 rows
    CHECK_EQ_IDX(tf->height, 128);
    dsmm_spmm_tiles_destroy(&tt);
    dsmm_spmm_tiles_destroy(&tf);
    spmm_case c;
    case_init(&c, DSMM_DOUBLE, 1, 1.5, 0.5);
    c.max_threads = 1;
    buf b, c0, got;
    dsmm_dense *Bd = NULL, *C0d = NULL;
    dsmm_rng g;
    dsmm_rng_init(&g, seed_at(903), 1);
    CHECK(buf_make(&b, 40, 1, 1, 0, DSMM_DOUBLE) == TEST_PASS);
    CHECK(buf_make(&c0, 300000, 1, 1, 0, DSMM_DOUBLE) == TEST_PASS);
    buf_fill(&b, &g, 0, 0);
    buf_fill(&c0, &g, 0, 0);
    double *want = malloc(300000 * sizeof *want), *scale = malloc(300000 * sizeof *scale);
    dsmm_idx *terms = malloc(300000 * sizeof *terms);
    CHECK(want != NULL && scale != NULL && terms != NULL);
    CHECK(buf_wrap(ctx, &b, &Bd) == TEST_PASS && buf_wrap(ctx, &c0, &C0d) == TEST_PASS);
    CHECK_OK(ctx, ref_spmm(T, 1, c.alpha, Bd, c.beta, C0d, want, scale, terms));
    use_tiles = tl;
    int rc = run_checked(ctx, T, &c, 1, DSMM_SPMM_COL, 1, Bd, &c0, want, scale, terms, &got, NULL,
                         "tall A^T * B on 65536-row tiles");
    use_tiles = NULL;
    CHECK(rc == TEST_PASS);
    buf_free(&got);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_spmm_tiles_destroy(&tl);
    dsmm_dense_destroy(&Bd);
    dsmm_dense_destroy(&C0d);
    buf_free(&b);
    buf_free(&c0);
    free(want);
    free(scale);
    free(terms);
    dsmm_csr_destroy(&T);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&A2);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- STREAM triad ------------------------------------------------------------------------ */

static int test_stream_triad(void)
{
    dsmm_ctx *ctx = test_ctx();
    for (int t = 1; t <= 2; t++) {
        double gbps = -1;
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        CHECK_OK(ctx, dsmm_stream_triad(ctx, (size_t)1 << 20, 2, &gbps));
        CHECK_MSG(isfinite(gbps) && gbps > 0, "%d threads: %g GB/s", t, gbps);
        printf("     STREAM triad, 1 MiB arrays, %d thread%s: %.1f GB/s\n", t, t > 1 ? "s" : "",
               gbps);
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 0);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    double gbps = 0;
    CHECK_ST(ctx, dsmm_stream_triad(ctx, 1000, 2, &gbps), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_stream_triad(ctx, 8, 2, &gbps), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_stream_triad(ctx, (size_t)1 << 20, -1, &gbps), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_stream_triad(ctx, (size_t)1 << 20, 2, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_stream_triad(NULL, (size_t)1 << 20, 2, &gbps), DSMM_ERR_ARG);
    // three arrays do not fit a budget of two
    dsmm_ctx_set_mem_budget(ctx, (size_t)2 << 20);
    CHECK_ST(ctx, dsmm_stream_triad(ctx, (size_t)1 << 20, 1, &gbps), DSMM_ERR_NOMEM);
    dsmm_ctx_set_mem_budget(ctx, 0);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 0);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- the checks themselves --------------------------------------------------------------- */

// check_values catches a wrong entry, a NaN and a written padding value.
static int test_checks_catch_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 12, 9, 0.4, seed_at(800));
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    const dsmm_idx k = 5;
    buf b, c0, got;
    dsmm_dense *Bd = NULL, *C0d = NULL, *Cd = NULL;
    dsmm_rng g;
    dsmm_rng_init(&g, seed_at(801), 1);
    if (buf_make(&b, 9, k, k + 2, 1, DSMM_DOUBLE) != TEST_PASS ||
        buf_make(&c0, 12, k, k + 3, 1, DSMM_DOUBLE) != TEST_PASS)
        return TEST_FAIL;
    buf_fill(&b, &g, 0, NAN);
    buf_fill(&c0, &g, 0, SENTINEL);
    double want[60], scale[60];
    dsmm_idx terms[12];
    if (buf_wrap(ctx, &b, &Bd) != TEST_PASS || buf_wrap(ctx, &c0, &C0d) != TEST_PASS ||
        buf_copy(&got, &c0) != TEST_PASS || buf_wrap(ctx, &got, &Cd) != TEST_PASS)
        return TEST_FAIL;
    CHECK_OK(ctx, ref_spmm(A, 0, 1.5, Bd, -1, C0d, want, scale, terms));
    dsmm_spmm_opts o;
    dsmm_spmm_opts_init(&o);
    o.alpha = 1.5;
    o.beta = -1;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, Bd, Cd, &o, NULL));
    CHECK(check_values(&got, &c0, want, scale, terms, "unchanged") == TEST_PASS);
    dsmm_idx i = 0;
    while (i < 12 && terms[i] == 0) i++;
    CHECK(i < 12);
    size_t at = (size_t)(got.off + i * got.ld + 2);
    double keep = buf_get_raw(&got, at);
    printf("     (three failure messages expected below)\n");
    buf_set_raw(&got, at, keep * (1 + 1e-9) + 1e-9);
    CHECK(check_values(&got, &c0, want, scale, terms, "entry changed on purpose") == TEST_FAIL);
    buf_set_raw(&got, at, NAN);
    CHECK(check_values(&got, &c0, want, scale, terms, "NaN put in on purpose") == TEST_FAIL);
    buf_set_raw(&got, at, keep);
    CHECK(check_values(&got, &c0, want, scale, terms, "restored") == TEST_PASS);
    buf_set_raw(&got, (size_t)(got.off + got.ld - 1), 0.0); // padding after row 0
    CHECK(check_values(&got, &c0, want, scale, terms, "padding written on purpose") == TEST_FAIL);
    dsmm_dense_destroy(&Bd);
    dsmm_dense_destroy(&C0d);
    dsmm_dense_destroy(&Cd);
    buf_free(&b);
    buf_free(&c0);
    buf_free(&got);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The rows layout (docs/kernels.md, "Rows of C within windows"), counted: an A^T with empty
// rows and columns, unsorted rows with repeated columns, k = 8 and 1 doubles, tiles of 8 rows
// of C, windows of 8 rows of B and of all of B; at k = 1 the runs' entries interleaved in
// chunks of 8 runs (step i: the i-th entries of the chunk's runs that have one). Read back run by
// run, the layout must hold each row of op(A)'s entries in the column-wise kernel's order
// (increasing row of B, repeats in S's order) cut at the windows' edges: buckets (tile, window) in
// order, a bucket's runs distinct rows of C, longest first, each run's rows of B inside its window
// and increasing; entry counts by tile in ptr.
static int test_tiles_rows(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 90, 70, 0.15, seed_at(905));
    ma.empty_rows = 0.2;
    ma.empty_cols = 0.1;
    dsmm_csr *A = NULL, *Ash = NULL, *S = NULL, *R = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    CHECK_OK(ctx, test_csr_shuffle(ctx, A, 1, seed_at(906), &Ash));
    dsmmi_spmm_tuning keep = dsmmi_spmm_tune;
    static const size_t windows[] = {512, 0};
    for (int trans = 0; trans < 4; trans++)
        for (int wv = 0; wv < 2; wv++) {
            dsmm_idx k = trans < 2 ? 8 : 1;
            const dsmm_csr *X = trans % 2 ? Ash : A;
            // R = op(X) with each row in the column-wise kernel's order: the transpose of
            // S = op(X)^T, which the kernel walks row by row
            if (trans % 2) {
                S = NULL;
                CHECK_OK(ctx, dsmm_csr_transpose(ctx, X, &R)); // op(X) = X^T; S = X
            } else {
                CHECK_OK(ctx, dsmm_csr_transpose(ctx, X, &S));
                CHECK_OK(ctx, dsmm_csr_transpose(ctx, S, &R));
            }
            dsmmi_spmm_tune = keep;
            dsmmi_spmm_tune.col_tile_bytes = 8 * 8 * (size_t)k; // 8 rows of C a tile
            dsmmi_spmm_tune.col_tile_slice = 1;                 // the chunks at k = 1 on every CPU
            dsmmi_spmm_tune.col_tile_window = windows[wv] * (size_t)k / 8;
            dsmm_spmm_tiles *tl = NULL;
            dsmm_status st = dsmm_spmm_tiles_create(ctx, X, trans % 2, k, DSMM_DOUBLE, &tl);
            dsmmi_spmm_tune = keep;
            CHECK_OK(ctx, st);
            dsmm_idx m = R->nrows, n = R->ncols, h = tl->height;
            CHECK(tl->nruns > 0 && tl->m == m && tl->n == n && tl->nnz == R->nnz);
            CHECK_EQ_IDX(h, 8);
            CHECK_EQ_IDX(tl->window, wv == 0 ? 8 : n);
            CHECK_EQ_IDX(tl->nwin, (n + tl->window - 1) / tl->window);
            CHECK_EQ_IDX(tl->ntiles, (m + h - 1) / h);
            dsmm_idx nb = tl->ntiles * tl->nwin;
            CHECK(tl->bptr[0] == 0 && tl->bptr[nb] == tl->nruns && tl->rbeg[0] == 0 &&
                  tl->rbeg[tl->nruns] == tl->nnz);
            CHECK_EQ_IDX(tl->slice, k == 1 ? 8 : 0);
            // at: where entry i of run u lies (at[rbeg[u] + i]): itself, or interleaved
            dsmm_idx *at = malloc(((size_t)tl->nnz + 1) * sizeof *at);
            CHECK(at != NULL);
            for (dsmm_idx q = 0; q < tl->nnz; q++) at[q] = q;
            for (dsmm_idx b = 0; tl->slice > 0 && b < nb; b++)
                for (dsmm_idx g = tl->bptr[b]; g < tl->bptr[b + 1]; g += tl->slice) {
                    dsmm_idx q = tl->rbeg[g], e = g + tl->slice;
                    if (e > tl->bptr[b + 1]) e = tl->bptr[b + 1];
                    for (dsmm_idx i = 0; q < tl->rbeg[e]; i++)
                        for (dsmm_idx u = g; u < e; u++)
                            if (tl->rbeg[u + 1] - tl->rbeg[u] > i) at[tl->rbeg[u] + i] = q++;
                }
            // each row of op(X): where its next entry is, as the runs are read back
            dsmm_idx *next = malloc((size_t)m * sizeof *next);
            CHECK(next != NULL);
            for (dsmm_idx r = 0; r < m; r++) next[r] = R->rowptr[r];
            for (dsmm_idx i = 0; i < tl->ntiles; i++) {
                CHECK_EQ_IDX(tl->ptr[i], tl->rbeg[tl->bptr[i * tl->nwin]]);
                for (dsmm_idx v = 0; v < tl->nwin; v++) {
                    dsmm_idx b = i * tl->nwin + v, w0 = v * tl->window, w1 = w0 + tl->window;
                    CHECK(tl->bptr[b] <= tl->bptr[b + 1]);
                    uint64_t seen[2] = {0, 0}; // the bucket's rows of C (h = 8)
                    for (dsmm_idx u = tl->bptr[b]; u < tl->bptr[b + 1]; u++) {
                        dsmm_idx len = tl->rbeg[u + 1] - tl->rbeg[u];
                        CHECK(len >= 1 && tl->dst[u] < h && !(seen[0] >> tl->dst[u] & 1));
                        seen[0] |= (uint64_t)1 << tl->dst[u];
                        if (u > tl->bptr[b]) CHECK(len <= tl->rbeg[u] - tl->rbeg[u - 1]);
                        dsmm_idx r = i * h + tl->dst[u];
                        CHECK(r < m);
                        for (dsmm_idx p = tl->rbeg[u]; p < tl->rbeg[u + 1]; p++) {
                            dsmm_idx q = at[p], src = tl->src32[q];
                            CHECK(src >= w0 && src < w1);
                            if (p > tl->rbeg[u]) CHECK(src >= tl->src32[at[p - 1]]);
                            CHECK(next[r] < R->rowptr[r + 1]);
                            CHECK_EQ_IDX(src, dsmm_csr_col(R, next[r]));
                            CHECK(((const double *)tl->val)[q] == dsmm_csr_value(R, next[r]));
                            next[r]++;
                        }
                    }
                    (void)seen[1];
                }
            }
            for (dsmm_idx r = 0; r < m; r++) CHECK_EQ_IDX(next[r], R->rowptr[r + 1]);
            free(next);
            free(at);
            dsmm_spmm_tiles_destroy(&tl);
            dsmm_csr_destroy(&S);
            dsmm_csr_destroy(&R);
        }
    // The k given to dsmm_spmm_tiles_create only shapes the tiles: tiles made for k = 1 (made
    // 0: in chunks; 2: not, as on AMD CPUs) and for k = 8 (made 1) serve products at k = 1, 3 and
    // 8, float and double, beta 0 and 1, with the column-wise kernel's 1-thread bits (the tiles on
    // the context's threads).
    for (int ty = 0; ty < 2; ty++)
        for (int made = 0; made < 3; made++)
            for (int use = 0; use < 3; use++)
                for (int be = 0; be < 2; be++) {
                    static const dsmm_idx ks[] = {1, 3, 8};
                    dsmm_type type = ty ? DSMM_FLOAT : DSMM_DOUBLE;
                    dsmm_idx kk = ks[use], m = A->nrows, n = A->ncols;
                    dsmm_spmm_tiles *tl = NULL;
                    int keep_slice = dsmmi_spmm_tune.col_tile_slice;
                    dsmmi_spmm_tune.col_tile_slice = made != 2; // either layout on every CPU
                    dsmm_status st =
                        dsmm_spmm_tiles_create(ctx, A, 0, made == 1 ? 8 : 1, type, &tl);
                    dsmmi_spmm_tune.col_tile_slice = keep_slice;
                    CHECK_OK(ctx, st);
                    CHECK_EQ_IDX(tl->slice, made ? 0 : (ty ? 16 : 8));
                    dsmm_dense *B = NULL, *C1 = NULL, *C2 = NULL;
                    CHECK_OK(ctx, dsmm_dense_create(ctx, n, kk, type, &B));
                    CHECK_OK(ctx, dsmm_dense_create(ctx, m, kk, type, &C1));
                    CHECK_OK(ctx, dsmm_dense_create(ctx, m, kk, type, &C2));
                    dsmm_rng g;
                    dsmm_rng_init(&g, seed_at(907), (uint64_t)(ty * 18 + made * 6 + use * 2 + be));
                    for (dsmm_idx q = 0; q < n * kk; q++) {
                        double x = dsmm_rng_uniform(&g) - 0.5;
                        if (ty)
                            ((float *)B->val)[q] = (float)x;
                        else
                            ((double *)B->val)[q] = x;
                    }
                    for (dsmm_idx q = 0; q < m * kk; q++) {
                        double x = dsmm_rng_uniform(&g);
                        if (ty) {
                            ((float *)C1->val)[q] = ((float *)C2->val)[q] = (float)x;
                        } else {
                            ((double *)C1->val)[q] = ((double *)C2->val)[q] = x;
                        }
                    }
                    dsmm_spmm_opts o;
                    dsmm_spmm_opts_init(&o);
                    o.alg = DSMM_SPMM_COL;
                    o.alpha = 0.75;
                    o.beta = be;
                    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1)); // the kernel's 1-thread bits
                    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C1, &o, NULL));
                    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
                    o.tiles = tl;
                    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, C2, &o, NULL));
                    CHECK_MSG(memcmp(C1->val, C2->val, (size_t)(m * kk) * (ty ? 4 : 8)) == 0,
                              "tiles made for k = %d (chunks %d) used at k = %lld (%s, beta %d): "
                              "other bits",
                              made == 1 ? 8 : 1, made == 0, (long long)kk, ty ? "float" : "double",
                              be);
                    dsmm_dense_destroy(&B);
                    dsmm_dense_destroy(&C1);
                    dsmm_dense_destroy(&C2);
                    dsmm_spmm_tiles_destroy(&tl);
                }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&Ash);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_ks),
        TEST(test_tail_passes),
        TEST(test_k_block),
        TEST(test_alpha_beta),
        TEST(test_shapes),
        TEST(test_generators),
        TEST(test_value_types),
        TEST(test_leading_dims),
        TEST(test_streaming_stores),
        TEST(test_odd_entry),
        TEST(test_gather),
        TEST(test_wide_vectors),
        TEST(test_row_prefetch),
        TEST(test_row_block_prefetch),
        TEST(test_threads),
        TEST(test_info),
        TEST(test_bad_input),
        TEST(test_names),
        TEST(test_budget),
        TEST(test_tiles),
        TEST(test_tiles_rows),
        TEST(test_rows),
        TEST(test_stream_triad),
        TEST(test_checks_catch_errors),
    };
    // Threads for any product, however small (the library wants 65536 multiply-adds a
    // thread): the small inputs of these tests then run every multi-threaded path.
    dsmmi_spmm_tune.min_thread_work = 8;
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
