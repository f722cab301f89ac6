// tests/common/ref.h: naive references and random matrix makers shared by the tests: a dense
// SpGEMM reference (every semiring, optional mask), a long-double SpMM reference, random CSR
// makers (uniform with explicit zeros, empty rows/columns, a dense row; R-MAT and Erdős–Rényi
// graphs with test values; banded), conversions (value type, column width, shuffled rows), an
// SpMV check of large products and a comparison that prints the first difference.
#ifndef DSMM_TEST_REF_H
#define DSMM_TEST_REF_H

#include "dsmm.h"

/* ref_spgemm_dense: C<M> = A * B under semiring sr, computed on dense nrows(A) x ncols(B)
 * arrays of values and presence flags (for small sizes only). A, B and M may hold 32- or
 * 64-bit columns and any value type; M (may be NULL) is structural (values ignored, rows in
 * any order, repeats allowed). C: sorted, 64-bit columns, DOUBLE, entries exactly where a
 * product exists (a sum that cancels to 0 is kept) and M has an entry.
 * Errors: DSMM_ERR_DIM when shapes do not fit; DSMM_ERR_NOMEM. */
dsmm_status ref_spgemm_dense(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_csr *M,
                             dsmm_semiring sr, dsmm_csr **C);

/* ref_flops: sum over A(i,k) of nnz(B(k,:)), counted naively. */
double ref_flops(const dsmm_csr *A, const dsmm_csr *B);

/* What test_rand_csr makes. test_mat_init sets: density as given, DOUBLE values, no explicit
 * zeros, no empty rows/columns forced, no dense row, 64-bit columns. */
typedef struct test_mat {
    dsmm_idx nrows, ncols;
    double density;     // probability of each (i, j), 0..1
    dsmm_type type;     // PATTERN, FLOAT or DOUBLE
    int zeros;          // 1: about a quarter of the stored values are explicit zeros
    double empty_rows;  // each row is forced empty with this probability (not dense_row)
    double empty_cols;  // each column is forced empty with this probability
    dsmm_idx dense_row; // >= 0: this row holds every (non-empty) column
    int col_bits;       // 32 or 64
    uint64_t seed;
} test_mat;

void test_mat_init(test_mat *o, dsmm_idx nrows, dsmm_idx ncols, double density, uint64_t seed);

/* test_rand_csr: a random sorted CSR as o describes. Values are small multiples of 1/4 in
 * [-2, 2] (exact in float, so sums of a few thousand products are exact in double), nonzero
 * unless o->zeros. */
dsmm_status test_rand_csr(dsmm_ctx *ctx, const test_mat *o, dsmm_csr **A);

/* test_rand_rmat: a skewed R-MAT graph (2^scale vertices, dsmm_gen_rmat with
 * edge_factor) with values as test_rand_csr's when type != PATTERN. */
dsmm_status test_rand_rmat(dsmm_ctx *ctx, int scale, double edge_factor, int symmetric,
                           dsmm_type type, uint64_t seed, dsmm_csr **A);

/* test_rand_er: an Erdős–Rényi graph (dsmm_gen_er: n vertices, average degree deg) with
 * values as test_rand_csr's when type != PATTERN. */
dsmm_status test_rand_er(dsmm_ctx *ctx, dsmm_idx n, double deg, int symmetric, dsmm_type type,
                         uint64_t seed, dsmm_csr **A);

/* test_csr_convert: a deep copy of A (32- or 64-bit columns, any type, sorted or not) with
 * value type `type` (pattern -> ones, values -> pattern drops them) and `col_bits`-wide
 * columns, made entry by entry (independent of dsmm_csr_copy). */
dsmm_status test_csr_convert(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type, int col_bits,
                             dsmm_csr **out);

/* test_csr_same: TEST_PASS when got equals want: shape, pattern (an unsorted got is compared
 * through a sorted 64-bit copy; a repeated column in one of its rows fails) and values within
 * |a - b| <= atol + rtol * max(|a|, |b|) (only the pattern when got is pattern-only). Prints
 * `what` and the first difference otherwise. */
int test_csr_same(dsmm_ctx *ctx, const dsmm_csr *got, const dsmm_csr *want, double rtol,
                  double atol, const char *what);

/* test_check_spmv: TEST_PASS when C x == A (B x) for a random x (plus-times), entry by entry
 * within tol * (|A| (|B| |x|))_i + tol (relative to the magnitudes summed). For large products
 * without a reference. A, B, C may hold 32- or 64-bit columns, any value type, unsorted rows. */
int test_check_spmv(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_csr *C,
                    double tol);

/* ref_spmm: want = alpha * op(A) * B + beta * C, op(A) = A or A^T (transpose_a), for dense B
 * (n x k) and C (m x k) of one type (FLOAT or DOUBLE, any leading dimension), summed in long
 * double from A's values rounded to that type first (as dsmm_csr_spmm converts them). B is read
 * only when alpha != 0 and C only when beta != 0, so NaN there must not reach want. want and
 * scale are m x k row-major with leading dimension k (caller's arrays): scale(i, j) =
 * |alpha| sum |a b| + |beta c|, the magnitude the rounding errors of a kernel are relative to.
 * terms (m entries, may be NULL) receives the entries in each row of op(A), which bound the
 * number of roundings. A may hold 32- or 64-bit columns, unsorted rows and repeated columns.
 * Errors: DSMM_ERR_DIM when shapes do not fit; DSMM_ERR_ARG (types); DSMM_ERR_NOMEM. */
dsmm_status ref_spmm(const dsmm_csr *A, int transpose_a, double alpha, const dsmm_dense *B,
                     double beta, const dsmm_dense *C, double *want, double *scale,
                     dsmm_idx *terms);

/* test_band_csr: an m x n banded matrix: (i, j) stored when i - lower <= j <= i + upper, with
 * test_rand_csr's values (nonzero; none for PATTERN); sorted, 64-bit columns. */
dsmm_status test_band_csr(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, dsmm_idx lower, dsmm_idx upper,
                          dsmm_type type, uint64_t seed, dsmm_csr **A);

/* test_csr_shuffle: the same operator as A with every row in random order (sorted = 0) and,
 * when dups, about a quarter of the entries of a valued A split into two halves at the same
 * column (exact for test values; pattern entries are never split). Keeps A's value type and
 * column width. */
dsmm_status test_csr_shuffle(dsmm_ctx *ctx, const dsmm_csr *A, int dups, uint64_t seed,
                             dsmm_csr **out);

#endif // DSMM_TEST_REF_H
