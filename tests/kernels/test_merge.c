// tests/kernels/test_merge.c: the k-way merge of partial SpGEMM results (dsmmi_csr_merge,
// src/kernels/merge.c) against a dense reference that adds the parts in part order: random
// parts (densities, NULL, empty, empty rows, explicit zeros, every value type and column
// width) for n = 0, 1, 2, 3, 9, every semiring, output type and width; edge shapes; cancelling
// sums kept; part order of the sums; bitwise the same at 1 and 2 threads; bad input;
// allocation failures; and SUMMA's use: merging A(:, s) * B(s, :) over blocks s is A * B.
// Binary merge (merge_binary.c): Algorithm 2's schedule for k = 1..16 stages, the peak bytes
// of k-way and binary merge against a counted model, and binary's C against k-way's.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ref.h"
#include "kernels/kernels.h"

static const dsmm_semiring semirings[] = {DSMM_PLUS_TIMES, DSMM_PLUS_PAIR, DSMM_MIN_PLUS,
                                          DSMM_MAX_TIMES};
#define NSR ((int)(sizeof semirings / sizeof semirings[0]))
static const dsmm_type types[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};

static uint64_t seed_at(uint64_t k)
{
    return test_seed() * 0x9e3779b97f4a7c15ULL + k;
}

// splitmix64: the choices of which parts are NULL, empty, of which type and width.
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double sr_add(dsmm_semiring sr, double x, double y)
{
    switch (sr) {
    case DSMM_MIN_PLUS:
        return y < x ? y : x;
    case DSMM_MAX_TIMES:
        return y > x ? y : x;
    default:
        return x + y;
    }
}

// want = the parts added cell by cell on a dense array, in part order (the first value of a
// cell taken as is); DOUBLE, 64-bit columns, sorted, explicit entries wherever a part has one.
static int ref_merge(dsmm_ctx *ctx, const dsmm_csr *const *P, int n, dsmm_idx nrows, dsmm_idx ncols,
                     dsmm_semiring sr, dsmm_csr **want)
{
    size_t cells = (size_t)nrows * (size_t)ncols;
    double *val = calloc(cells + 1, sizeof *val);
    unsigned char *has = calloc(cells + 1, 1);
    CHECK(val != NULL && has != NULL);
    for (int t = 0; t < n; t++) {
        if (P[t] == NULL) continue;
        for (dsmm_idx i = 0; i < nrows; i++)
            for (dsmm_idx k = P[t]->rowptr[i]; k < P[t]->rowptr[i + 1]; k++) {
                size_t c = (size_t)i * (size_t)ncols + (size_t)dsmm_csr_col(P[t], k);
                double v = dsmm_csr_value(P[t], k);
                val[c] = has[c] ? sr_add(sr, val[c], v) : v;
                has[c] = 1;
            }
    }
    dsmm_idx nnz = 0;
    for (size_t c = 0; c < cells; c++) nnz += has[c];
    dsmm_csr *W = NULL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, nrows, ncols, nnz, DSMM_DOUBLE, &W));
    dsmm_idx o = 0;
    for (dsmm_idx i = 0; i < nrows; i++) {
        for (dsmm_idx j = 0; j < ncols; j++) {
            size_t c = (size_t)i * (size_t)ncols + (size_t)j;
            if (!has[c]) continue;
            W->colidx[o] = j;
            ((double *)W->val)[o] = val[c];
            o++;
        }
        W->rowptr[i + 1] = o;
    }
    W->nnz = nnz;
    free(val);
    free(has);
    *want = W;
    return TEST_PASS;
}

// C as the merge promises: valid, sorted, of the asked shape, type and width, equal to want
// (values exactly: test values are multiples of 1/4, so every sum here is exact).
static int check_merged(dsmm_ctx *ctx, const dsmm_csr *C, const dsmm_csr *want, dsmm_idx nrows,
                        dsmm_idx ncols, dsmm_type type, int col_bits, const char *what)
{
    CHECK_MSG(C != NULL, "%s: no C", what);
    CHECK_MSG(dsmm_csr_check(ctx, C) == DSMM_OK, "%s: %s", what, dsmm_ctx_last_error(ctx));
    CHECK_MSG(C->nrows == nrows && C->ncols == ncols, "%s: C is %lld x %lld", what,
              (long long)C->nrows, (long long)C->ncols);
    CHECK_MSG(C->sorted == 1, "%s: rows not sorted", what);
    CHECK_MSG(C->type == type, "%s: C is %s", what, dsmm_type_name(C->type));
    CHECK_MSG(C->nnz == 0 || (C->colidx32 != NULL) == (col_bits == 32),
              "%s: C has the wrong column width", what);
    return test_csr_same(ctx, C, want, 0.0, 0.0, what);
}

// X and Y identical bit for bit (shape, type, width, rowptr, columns, values); with
// any_zero_sign, values only == (-0 and +0 count as equal).
static int same_bits_ex(const dsmm_csr *X, const dsmm_csr *Y, int any_zero_sign, const char *what)
{
    CHECK_MSG(X->nrows == Y->nrows && X->ncols == Y->ncols && X->nnz == Y->nnz, "%s: shape/nnz",
              what);
    CHECK_MSG(X->type == Y->type && (X->colidx32 != NULL) == (Y->colidx32 != NULL),
              "%s: type/width", what);
    CHECK_MSG(memcmp(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof *X->rowptr) == 0,
              "%s: rowptr differs", what);
    if (X->nnz == 0) return TEST_PASS;
    if (X->colidx32)
        CHECK_MSG(memcmp(X->colidx32, Y->colidx32, (size_t)X->nnz * 4) == 0, "%s: columns", what);
    else
        CHECK_MSG(memcmp(X->colidx, Y->colidx, (size_t)X->nnz * 8) == 0, "%s: columns", what);
    if (X->type != DSMM_PATTERN) {
        size_t w = X->type == DSMM_DOUBLE ? 8 : 4;
        for (dsmm_idx k = 0; any_zero_sign && k < X->nnz; k++)
            CHECK_MSG(dsmm_csr_value(X, k) == dsmm_csr_value(Y, k), "%s: entry %lld: %.17g, %.17g",
                      what, (long long)k, dsmm_csr_value(X, k), dsmm_csr_value(Y, k));
        if (!any_zero_sign)
            CHECK_MSG(memcmp(X->val, Y->val, (size_t)X->nnz * w) == 0, "%s: values differ", what);
    }
    return TEST_PASS;
}

static int same_bits(const dsmm_csr *X, const dsmm_csr *Y, const char *what)
{
    return same_bits_ex(X, Y, 0, what);
}

// Merges at 1 and 2 threads; both results equal to the reference and to each other.
static int check_merge(dsmm_ctx *ctx, const dsmm_csr *const *P, int n, dsmm_idx nrows,
                       dsmm_idx ncols, dsmm_semiring sr, dsmm_type type, int col_bits,
                       const char *what)
{
    dsmm_csr *want = NULL, *C[2] = {NULL, NULL};
    if (ref_merge(ctx, P, n, nrows, ncols, sr, &want) != TEST_PASS) return TEST_FAIL;
    for (int t = 0; t < 2; t++) {
        char label[320];
        snprintf(label, sizeof label, "%s [%s, %s, %d-bit, %d thread%s]", what,
                 dsmm_semiring_name(sr), dsmm_type_name(type), col_bits, t + 1, t ? "s" : "");
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t + 1));
        dsmm_status st = dsmmi_csr_merge(ctx, P, n, nrows, ncols, sr, type, col_bits, &C[t]);
        CHECK_MSG(st == DSMM_OK, "%s: %s", label, dsmm_ctx_last_error(ctx));
        if (check_merged(ctx, C[t], want, nrows, ncols, type, col_bits, label) != TEST_PASS)
            return TEST_FAIL;
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    if (same_bits(C[0], C[1], what) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&C[0]);
    dsmm_csr_destroy(&C[1]);
    dsmm_csr_destroy(&want);
    return TEST_PASS;
}

// n random parts: NULL (if holes), empty, or random with one of four densities, empty rows,
// explicit zeros, a value type and a column width, all chosen from rng.
static int rand_parts(dsmm_ctx *ctx, int n, dsmm_idx nrows, dsmm_idx ncols, int holes,
                      uint64_t *rng, dsmm_csr **P)
{
    static const double dens[] = {0.02, 0.1, 0.3, 0.7};
    for (int t = 0; t < n; t++) {
        P[t] = NULL;
        uint64_t r = next_u64(rng);
        if (holes && r % 5 == 0) continue;
        test_mat m;
        test_mat_init(&m, nrows, ncols, holes && r % 5 == 1 ? 0.0 : dens[(r >> 8) % 4],
                      next_u64(rng));
        m.type = types[(r >> 16) % 3];
        m.col_bits = (r >> 20) % 2 ? 32 : 64;
        m.zeros = (r >> 24) % 3 == 0;
        m.empty_rows = (r >> 28) % 2 ? 0.3 : 0.0;
        CHECK_OK(ctx, test_rand_csr(ctx, &m, &P[t]));
    }
    return TEST_PASS;
}

static void free_parts(dsmm_csr **P, int n)
{
    for (int t = 0; t < n; t++) dsmm_csr_destroy(&P[t]);
}

/* ---- random parts ------------------------------------------------------------------------ */

static int test_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const int ns[] = {0, 1, 2, 3, 9};
    uint64_t rng = seed_at(1);
    dsmm_csr *P[9];
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (int holes = 0; holes < 2; holes++)
            for (int rep = 0; rep < 3; rep++) {
                int n = ns[a];
                dsmm_idx nrows = 17 + (dsmm_idx)(next_u64(&rng) % 20);
                dsmm_idx ncols = 9 + (dsmm_idx)(next_u64(&rng) % 40);
                if (rand_parts(ctx, n, nrows, ncols, holes, &rng, P) != TEST_PASS) return TEST_FAIL;
                for (int s = 0; s < NSR; s++)
                    for (int ty = 0; ty < 3; ty++)
                        for (int bits = 32; bits <= 64; bits += 32) {
                            char what[128];
                            snprintf(what, sizeof what, "n=%d%s %lldx%lld rep %d", n,
                                     holes ? " with NULL/empty parts" : "", (long long)nrows,
                                     (long long)ncols, rep);
                            if (check_merge(ctx, (const dsmm_csr *const *)P, n, nrows, ncols,
                                            semirings[s], types[ty], bits, what) != TEST_PASS)
                                return TEST_FAIL;
                        }
                free_parts(P, n);
            }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// One NULL or empty part among others leaves the fast paths (copy, two-way) to the rest, and
// a part of another type/width than C is converted: n parts, then the same with holes.
static int test_fast_paths(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL, *E = NULL;
    test_mat m;
    test_mat_init(&m, 30, 25, 0.2, seed_at(10));
    m.type = DSMM_FLOAT;
    m.col_bits = 32;
    m.zeros = 1;
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &A));
    test_mat_init(&m, 30, 25, 0.3, seed_at(11));
    m.empty_rows = 0.4;
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &B));
    CHECK_OK(ctx, dsmm_csr_create(ctx, 30, 25, 0, DSMM_DOUBLE, &E));
    const dsmm_csr *one[] = {NULL, A, E};
    const dsmm_csr *two[] = {E, A, NULL, B};
    const dsmm_csr *swapped[] = {B, E, A};
    for (int s = 0; s < NSR; s++)
        for (int ty = 0; ty < 3; ty++)
            for (int bits = 32; bits <= 64; bits += 32) {
                if (check_merge(ctx, one, 3, 30, 25, semirings[s], types[ty], bits, "copy") ||
                    check_merge(ctx, two, 4, 30, 25, semirings[s], types[ty], bits, "two-way") ||
                    check_merge(ctx, swapped, 3, 30, 25, semirings[s], types[ty], bits,
                                "two-way swapped"))
                    return TEST_FAIL;
            }
    // a copy is a copy: same pattern and values as A
    dsmm_csr *C = NULL;
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, one, 3, 30, 25, DSMM_PLUS_TIMES, DSMM_FLOAT, 32, &C));
    CHECK(same_bits(C, A, "copy of A") == TEST_PASS);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&E);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Large enough (>= 2 x 65536 input entries) that the merge really runs on 2 threads, with
// several chunks per thread; skewed row lengths (a dense row, empty rows).
static int test_threads(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const int ns[] = {2, 9};
    dsmm_csr *P[9];
    for (int a = 0; a < 2; a++) {
        int n = ns[a];
        for (int t = 0; t < n; t++) {
            test_mat m;
            test_mat_init(&m, 1500, 1700, n == 2 ? 0.035 : 0.008, seed_at(20 + (uint64_t)t));
            m.type = t % 3 == 2 ? DSMM_FLOAT : DSMM_DOUBLE;
            m.col_bits = t % 2 ? 32 : 64;
            m.empty_rows = 0.1;
            m.dense_row = t == 0 ? 700 : -1;
            CHECK_OK(ctx, test_rand_csr(ctx, &m, &P[t]));
        }
        for (int s = 0; s < NSR; s++)
            if (check_merge(ctx, (const dsmm_csr *const *)P, n, 1500, 1700, semirings[s],
                            DSMM_DOUBLE, 32,
                            n == 2 ? "large, 2 parts" : "large, 9 parts") != TEST_PASS)
                return TEST_FAIL;
        if (check_merge(ctx, (const dsmm_csr *const *)P, n, 1500, 1700, DSMM_PLUS_TIMES,
                        DSMM_PATTERN, 64, "large, pattern") != TEST_PASS)
            return TEST_FAIL;
        free_parts(P, n);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- listed edge cases ------------------------------------------------------------------- */

static int test_edge_shapes(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx shapes[][2] = {{0, 0}, {0, 7}, {7, 0}, {1, 1}, {5, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        dsmm_idx nr = shapes[s][0], nc = shapes[s][1];
        dsmm_csr *P[3] = {NULL, NULL, NULL};
        for (int t = 0; t < 3; t++)
            CHECK_OK(ctx, dsmmi_csr_create_ex(ctx, nr, nc, 0, types[t], t == 1 ? 32 : 64, &P[t]));
        for (int n = 0; n <= 3; n++)
            for (int ty = 0; ty < 3; ty++) {
                dsmm_csr *C = NULL;
                CHECK_OK(ctx, dsmmi_csr_merge(ctx, (const dsmm_csr *const *)P, n, nr, nc,
                                              DSMM_MIN_PLUS, types[ty], 32, &C));
                CHECK(dsmm_csr_check(ctx, C) == DSMM_OK);
                CHECK_EQ_IDX(C->nrows, nr);
                CHECK_EQ_IDX(C->ncols, nc);
                CHECK_EQ_IDX(C->nnz, 0);
                CHECK(C->type == types[ty] && C->sorted == 1);
                for (dsmm_idx i = 0; i <= nr; i++) CHECK_EQ_IDX(C->rowptr[i], 0);
                dsmm_csr_destroy(&C);
            }
        free_parts(P, 3);
    }
    // n == 0 with P == NULL
    dsmm_csr *C = NULL;
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, NULL, 0, 4, 6, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
    CHECK_EQ_IDX(C->nrows, 4);
    CHECK_EQ_IDX(C->ncols, 6);
    CHECK_EQ_IDX(C->nnz, 0);
    CHECK(C->val != NULL || C->cap == 0);
    dsmm_csr_destroy(&C);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A sorted 64-bit DOUBLE part from (row, col, value) triples.
static int part_of(dsmm_ctx *ctx, dsmm_idx nr, dsmm_idx nc, const double (*e)[3], int ne,
                   dsmm_csr **P)
{
    dsmm_coo *T = NULL;
    CHECK_OK(ctx, dsmm_coo_create(ctx, nr, nc, ne, DSMM_DOUBLE, &T));
    for (int k = 0; k < ne; k++)
        CHECK_OK(ctx, dsmm_coo_push(T, (dsmm_idx)e[k][0], (dsmm_idx)e[k][1], e[k][2]));
    CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, P));
    dsmm_coo_destroy(&T);
    return TEST_PASS;
}

// The value at (i, j) of C, or -999 (no test value) when C has no entry there.
static double entry(const dsmm_csr *C, dsmm_idx i, dsmm_idx j)
{
    for (dsmm_idx k = C->rowptr[i]; k < C->rowptr[i + 1]; k++)
        if (dsmm_csr_col(C, k) == j) return dsmm_csr_value(C, k);
    return -999.0;
}

// Entries are structural: explicit zeros and sums that cancel stay, in every path (two-way
// and heap); min/max pick among the values, zeros included.
static int test_explicit_zeros(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const double e0[][3] = {{0, 0, 1.0}, {0, 2, 0.0}, {1, 1, 2.0}};
    static const double e1[][3] = {{0, 0, -1.0}, {1, 1, 3.0}, {1, 3, 0.0}};
    static const double e2[][3] = {{0, 2, -0.5}, {1, 0, 0.0}};
    dsmm_csr *P[3] = {NULL, NULL, NULL}, *C = NULL;
    if (part_of(ctx, 2, 4, e0, 3, &P[0]) || part_of(ctx, 2, 4, e1, 3, &P[1]) ||
        part_of(ctx, 2, 4, e2, 2, &P[2]))
        return TEST_FAIL;
    const dsmm_csr *const *pp = (const dsmm_csr *const *)P;
    // two parts: (0,0) = 1 + -1 = 0 kept; (0,2) and (1,3) explicit zeros kept
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pp, 2, 2, 4, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
    CHECK_EQ_IDX(C->nnz, 4);
    CHECK(entry(C, 0, 0) == 0.0 && entry(C, 0, 2) == 0.0 && entry(C, 1, 1) == 5.0 &&
          entry(C, 1, 3) == 0.0);
    dsmm_csr_destroy(&C);
    // three parts (heap): adds (0,2) = 0 + -0.5 and (1,0) = 0
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pp, 3, 2, 4, DSMM_PLUS_TIMES, DSMM_FLOAT, 32, &C));
    CHECK_EQ_IDX(C->nnz, 5);
    CHECK(entry(C, 0, 0) == 0.0 && entry(C, 0, 2) == -0.5 && entry(C, 1, 0) == 0.0 &&
          entry(C, 1, 1) == 5.0 && entry(C, 1, 3) == 0.0);
    dsmm_csr_destroy(&C);
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pp, 3, 2, 4, DSMM_MIN_PLUS, DSMM_DOUBLE, 64, &C));
    CHECK(entry(C, 0, 0) == -1.0 && entry(C, 0, 2) == -0.5 && entry(C, 1, 1) == 2.0);
    dsmm_csr_destroy(&C);
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pp, 3, 2, 4, DSMM_MAX_TIMES, DSMM_DOUBLE, 64, &C));
    CHECK(entry(C, 0, 0) == 1.0 && entry(C, 0, 2) == 0.0 && entry(C, 1, 1) == 3.0);
    dsmm_csr_destroy(&C);
    // pattern output: the union of the patterns, zeros included
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pp, 3, 2, 4, DSMM_PLUS_PAIR, DSMM_PATTERN, 64, &C));
    CHECK_EQ_IDX(C->nnz, 5);
    CHECK(C->val == NULL);
    dsmm_csr_destroy(&C);
    free_parts(P, 3);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Equal columns combine in part order: 1e16 + 1 rounds to 1e16 in double, so
// (1e16 + 1) + -1e16 = 0 while (1e16 + -1e16) + 1 = 1, in the two-way merge and the heap.
static int test_part_order(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const double big[][3] = {{0, 1, 1e16}}, one[][3] = {{0, 1, 1.0}},
                        neg[][3] = {{0, 1, -1e16}};
    dsmm_csr *B = NULL, *O = NULL, *N = NULL, *C = NULL;
    if (part_of(ctx, 1, 3, big, 1, &B) || part_of(ctx, 1, 3, one, 1, &O) ||
        part_of(ctx, 1, 3, neg, 1, &N))
        return TEST_FAIL;
    const dsmm_csr *bon[] = {B, O, N}, *bno[] = {B, N, O}, *bo[] = {B, O}, *ob[] = {O, B};
    for (int t = 1; t <= 2; t++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        CHECK_OK(ctx, dsmmi_csr_merge(ctx, bon, 3, 1, 3, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
        CHECK(C->nnz == 1 && entry(C, 0, 1) == 0.0);
        dsmm_csr_destroy(&C);
        CHECK_OK(ctx, dsmmi_csr_merge(ctx, bno, 3, 1, 3, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
        CHECK(C->nnz == 1 && entry(C, 0, 1) == 1.0);
        dsmm_csr_destroy(&C);
        // two-way: the sum is commutative, so both orders give the rounded 1e16
        CHECK_OK(ctx, dsmmi_csr_merge(ctx, bo, 2, 1, 3, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
        CHECK(entry(C, 0, 1) == 1e16);
        dsmm_csr_destroy(&C);
        CHECK_OK(ctx, dsmmi_csr_merge(ctx, ob, 2, 1, 3, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
        CHECK(entry(C, 0, 1) == 1e16);
        dsmm_csr_destroy(&C);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&O);
    dsmm_csr_destroy(&N);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- errors -------------------------------------------------------------------------------- */

static int test_bad_input(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *W = NULL, *U = NULL, *C = NULL, *sentinel = (dsmm_csr *)&ctx;
    test_mat m;
    test_mat_init(&m, 6, 5, 0.4, seed_at(40));
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &A));
    test_mat_init(&m, 6, 4, 0.4, seed_at(41));
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &W));
    const dsmm_csr *pw[] = {A, NULL, W};
    // shape mismatch: columns, then rows (against the nrows/ncols given)
    C = sentinel;
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pw, 3, 6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK(C == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "part 2");
    dsmm_ctx_clear_error(ctx);
    const dsmm_csr *pa[] = {A};
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, 7, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK(C == NULL);
    dsmm_ctx_clear_error(ctx);
    // an unsorted part (row 1 holds columns 3, 1)
    static dsmm_idx rp[] = {0, 1, 3}, ci[] = {0, 3, 1};
    static double va[] = {1, 2, 3};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 4, rp, ci, va, DSMM_DOUBLE, &U));
    CHECK(U->sorted == 0);
    dsmm_csr *S = NULL;
    test_mat_init(&m, 2, 4, 0.5, seed_at(42));
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &S));
    const dsmm_csr *pu[] = {S, U, S};
    for (int n = 2; n <= 3; n++) {
        C = sentinel;
        CHECK_ST(ctx, dsmmi_csr_merge(ctx, pu, n, 2, 4, DSMM_MIN_PLUS, DSMM_FLOAT, 32, &C),
                 DSMM_ERR_ARG);
        CHECK(C == NULL);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "unsorted");
        dsmm_ctx_clear_error(ctx);
    }
    // a part flagged unsorted whose rows are in fact increasing is accepted
    S->sorted = 0;
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, pu, 1, 2, 4, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C));
    dsmm_csr_destroy(&C);
    // bad arguments
    const dsmm_csr *const *none = NULL;
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, -1, 6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, none, 2, 6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, 6, 5, DSMM_PLUS_TIMES, (dsmm_type)7, 64, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, 6, 5, DSMM_SEMIRING_COUNT, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, 6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 16, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, -6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, &C),
             DSMM_ERR_ARG);
    CHECK_ST(ctx,
             dsmmi_csr_merge(ctx, NULL, 0, 3, (dsmm_idx)INT32_MAX + 1, DSMM_PLUS_TIMES, DSMM_DOUBLE,
                             32, &C),
             DSMM_ERR_ARG);
    CHECK(C == NULL);
    CHECK_ST(ctx, dsmmi_csr_merge(ctx, pa, 1, 6, 5, DSMM_PLUS_TIMES, DSMM_DOUBLE, 64, NULL),
             DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    // 64-bit columns past INT32_MAX are fine
    CHECK_OK(ctx, dsmmi_csr_merge(ctx, NULL, 0, 3, (dsmm_idx)INT32_MAX + 1, DSMM_PLUS_TIMES,
                                  DSMM_DOUBLE, 64, &C));
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&W);
    dsmm_csr_destroy(&U);
    dsmm_csr_destroy(&S);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The k-th allocation fails for k = 0, 1, ... until the merge succeeds: every failure is
// DSMM_ERR_NOMEM with C NULL and nothing leaked; n = 0 (empty C), 1 (copy), 2, 3 and 9 (heap).
static int test_alloc_failures(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *P[9];
    uint64_t rng = seed_at(50);
    for (int t = 0; t < 9; t++) {
        test_mat m;
        test_mat_init(&m, 40, 33, 0.2, next_u64(&rng));
        m.col_bits = t % 2 ? 32 : 64;
        m.type = types[t % 3];
        CHECK_OK(ctx, test_rand_csr(ctx, &m, &P[t]));
    }
    static const int ns[] = {0, 1, 2, 3, 9};
    size_t base = dsmm_ctx_mem_in_use(ctx);
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (int threads = 1; threads <= 2; threads++) {
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, threads));
            long k = 0;
            for (;; k++) {
                dsmm_csr *C = (dsmm_csr *)&rng;
                dsmm_ctx_clear_error(ctx);
                dsmm_ctx_fail_alloc_at(ctx, k);
                dsmm_status st = dsmmi_csr_merge(ctx, (const dsmm_csr *const *)P, ns[a], 40, 33,
                                                 DSMM_PLUS_TIMES, DSMM_FLOAT, 32, &C);
                dsmm_ctx_fail_alloc_at(ctx, -1);
                if (st == DSMM_OK) {
                    CHECK(C != NULL && dsmm_csr_check(ctx, C) == DSMM_OK);
                    dsmm_csr_destroy(&C);
                    CHECK_MSG(dsmm_ctx_mem_in_use(ctx) == base, "n=%d: leak after success", ns[a]);
                    break;
                }
                CHECK_MSG(st == DSMM_ERR_NOMEM, "n=%d, failure at k=%ld: %s: %s", ns[a], k,
                          dsmm_status_name(st), dsmm_ctx_last_error(ctx));
                CHECK_MSG(C == NULL, "n=%d, failure at k=%ld: C left behind", ns[a], k);
                CHECK_MSG(dsmm_ctx_mem_in_use(ctx) == base, "n=%d, failure at k=%ld: %zu leaked",
                          ns[a], k, dsmm_ctx_mem_in_use(ctx) - base);
                CHECK(k < 1000);
            }
            CHECK_MSG(k > 0, "n=%d made no allocation", ns[a]);
            if (threads == 1) printf("     n=%d: %ld injected failures, all clean\n", ns[a], k);
        }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    free_parts(P, 9);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- SUMMA's use --------------------------------------------------------------------------- */

// Sparse SUMMA: C = sum over blocks s of A(:, s) * B(s, :). Cut A into column panels and B
// into row panels at the same bounds, multiply panel pairs, merge the partial products: the
// result is dsmm_csr_spgemm(A, B): the same pattern and equal values (test values make every
// sum exact, so the different association of the sums does not show), for every semiring.
// Only ==, not bitwise: the SpGEMM accumulators disagree on the sign of a zero sum (the dense
// one starts from +0, the one-row copy keeps a lone -0 product), so partial tiles may hold -0
// where the full product has +0.
static int test_summa(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const int nblocks[] = {1, 2, 3, 5, 8};
    for (int shape = 0; shape < 3; shape++) {
        dsmm_idx m = shape == 0 ? 40 : 57, k = shape == 2 ? 9 : 64, n = shape == 1 ? 31 : 45;
        test_mat ma, mb;
        test_mat_init(&ma, m, k, 0.12, seed_at(60 + 2 * (uint64_t)shape));
        test_mat_init(&mb, k, n, 0.12, seed_at(61 + 2 * (uint64_t)shape));
        ma.empty_rows = mb.empty_rows = 0.15;
        ma.zeros = 1;
        mb.col_bits = 32;
        dsmm_csr *A = NULL, *B = NULL;
        CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
        CHECK_OK(ctx, test_rand_csr(ctx, &mb, &B));
        for (size_t b = 0; b < sizeof nblocks / sizeof nblocks[0]; b++) {
            int s = nblocks[b];
            if (s > k) continue;
            dsmm_csr **Ap = NULL, **Bp = NULL;
            CHECK_OK(ctx, dsmm_csr_col_panels(ctx, A, s, NULL, &Ap));
            CHECK_OK(ctx, dsmm_csr_row_panels(ctx, B, s, NULL, &Bp));
            for (int r = 0; r < NSR; r++) {
                dsmm_spgemm_opts o;
                dsmm_spgemm_opts_init(&o);
                o.semiring = semirings[r];
                dsmm_csr *full = NULL, *C = NULL, *part[8] = {NULL};
                CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &full, NULL));
                o.col_bits = r % 2 ? 32 : 64; // partial tiles of either width
                for (int p = 0; p < s; p++)
                    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, Ap[p], Bp[p], &o, &part[p], NULL));
                CHECK_OK(ctx, dsmmi_csr_merge(ctx, (const dsmm_csr *const *)part, s, m, n,
                                              semirings[r], full->type, 64, &C));
                char what[128];
                snprintf(what, sizeof what, "SUMMA %lldx%lldx%lld, %d blocks, %s", (long long)m,
                         (long long)k, (long long)n, s, dsmm_semiring_name(semirings[r]));
                if (same_bits_ex(C, full, 1, what) != TEST_PASS) return TEST_FAIL;
                dsmm_csr_destroy(&C);
                dsmm_csr_destroy(&full);
                free_parts(part, s);
            }
            dsmm_csr_panels_free(ctx, &Ap, s);
            dsmm_csr_panels_free(ctx, &Bp, s);
        }
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- binary merge schedule (merge_binary.c) ------------------------------------------------ */

// A part of nrows x ncols with 32-bit columns: row i holds columns cols[0..m) (increasing) with
// values val(i, j) = base + i * m + j (or 1 when base < 0).
static int list_of(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, const dsmm_idx *cols, int m,
                   double base, dsmm_csr **out)
{
    dsmm_csr *P = NULL;
    CHECK_OK(ctx, dsmmi_csr_create_ex(ctx, nrows, ncols, nrows * m, DSMM_DOUBLE, 32, &P));
    for (dsmm_idx i = 0; i < nrows; i++) {
        P->rowptr[i + 1] = (i + 1) * m;
        for (int j = 0; j < m; j++) {
            P->colidx32[i * m + j] = (int32_t)cols[j];
            ((double *)P->val)[i * m + j] = base < 0 ? 1.0 : base + (double)(i * m + j);
        }
    }
    P->nnz = nrows * m;
    P->sorted = 1;
    *out = P;
    return TEST_PASS;
}

// Columns of a 1-row list as a bit mask.
static unsigned mask_of(const dsmm_csr *L)
{
    unsigned m = 0;
    for (dsmm_idx k = 0; L && k < L->nnz; k++) m |= 1u << dsmm_csr_col(L, k);
    return m;
}

// Algorithm 2 by hand: the lists merged after stage i = 1..16, and the stack after stage i,
// which holds the stages in blocks of the powers of two of i from the highest down (after
// stage 6: stages 1-4, 5-6; after 7: 1-4, 5-6, 7).
static int test_binary_schedule(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const int count[17] = {0, 0, 2, 0, 3, 0, 2, 0, 4, 0, 2, 0, 3, 0, 2, 0, 5};
    for (int i = 0; i <= 16; i++)
        CHECK_MSG(dsmmi_binary_merge_count(i) == count[i], "stage %d: %d lists merged", i,
                  dsmmi_binary_merge_count(i));
    for (int k = 1; k <= 9; k++) {
        dsmmi_merge_acc acc;
        CHECK_OK(ctx, dsmmi_merge_acc_init(ctx, DSMMI_MERGE_BINARY, k, 1, 16, DSMM_PLUS_TIMES,
                                           DSMM_DOUBLE, 32, &acc));
        int merges = 0;
        for (int i = 1; i <= k; i++) {
            dsmm_csr *L = NULL;
            dsmm_idx col = i - 1;
            if (list_of(ctx, 1, 16, &col, 1, -1, &L)) return TEST_FAIL;
            CHECK_OK(ctx, dsmmi_merge_acc_push(ctx, &acc, &L));
            CHECK(L == NULL);
            merges += count[i] > 1;
            CHECK_MSG(acc.merges == merges, "k %d stage %d: %d merges", k, i, acc.merges);
            int d = 0, first = 0;
            for (int b = 4; b >= 0; b--) {
                if (!(i & (1 << b))) continue;
                unsigned want = ((1u << (1 << b)) - 1) << first;
                CHECK_MSG(d < acc.depth && mask_of(acc.stack[d]) == want,
                          "k %d stage %d: stack[%d] holds stages %#x, want %#x", k, i, d,
                          d < acc.depth ? mask_of(acc.stack[d]) : 0, want);
                first += 1 << b;
                d++;
            }
            CHECK_MSG(acc.depth == d, "k %d stage %d: stack depth %d, want %d", k, i, acc.depth, d);
        }
        dsmm_csr *C = NULL;
        CHECK_OK(ctx, dsmmi_merge_acc_finish(ctx, &acc, &C));
        CHECK(acc.depth == 0 && mask_of(C) == (1u << k) - 1 && C->nnz == k);
        dsmm_csr_destroy(&C);
        dsmmi_merge_acc_free(ctx, &acc);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Bytes of a list of the peak test: 3 rows, 32-bit columns, double values.
static int64_t list_bytes(int64_t nnz)
{
    return 4 * 8 + nnz * 12;
}

// The peak bytes of k lists of 6 entries (3 rows of 2), disjoint (a merge's size is the sum of
// its inputs') or all alike (a merge has 6 entries): held lists plus a merge's output.
static int64_t model_peak(int k, int binary, int alike)
{
    static const int count[17] = {0, 0, 2, 0, 3, 0, 2, 0, 4, 0, 2, 0, 3, 0, 2, 0, 5};
    int64_t nnz[17], held = 0, peak = 0;
    int d = 0;
    for (int i = 1; i <= k + 1; i++) {
        int n = 0;
        if (i <= k) {
            nnz[d++] = 6;
            held += list_bytes(6);
            if (held > peak) peak = held;
            n = binary ? count[i] : 0;
        } else {
            n = d > 1 ? d : 0; // the final merge
        }
        if (n < 2) continue;
        int64_t out = 0;
        for (int t = d - n; t < d; t++) {
            out += nnz[t];
            held -= list_bytes(nnz[t]);
        }
        if (alike) out = 6;
        int64_t in = 0;
        for (int t = d - n; t < d; t++) in += list_bytes(nnz[t]);
        if (held + in + list_bytes(out) > peak) peak = held + in + list_bytes(out);
        held += list_bytes(out);
        d -= n;
        nnz[d++] = out;
    }
    return peak;
}

// Counted: the peak bytes of k-way and binary merge for k = 1..16 lists, exactly the model's;
// binary never above k-way, below it from 3 alike lists on; and the same C.
static int test_binary_peak(void)
{
    dsmm_ctx *ctx = test_ctx();
    // By hand, k = 4 (B(z) = 32 + 12 z): disjoint, binary holds 2 B(6) + B(12) after stage 2
    // and B(12) + 2 B(6) + B(24) in the last merge; k-way 4 B(6) + B(24). Alike: 3 B(6) + B(6)
    // at stage 4 against 4 B(6) + B(6).
    CHECK(model_peak(4, 1, 0) == 704 && model_peak(4, 0, 0) == 736);
    CHECK(model_peak(4, 1, 1) == 416 && model_peak(4, 0, 1) == 520);
    for (int alike = 0; alike < 2; alike++)
        for (int k = 1; k <= 16; k++) {
            dsmm_csr *C[2] = {NULL, NULL};
            int64_t peak[2] = {0, 0};
            for (int b = 0; b < 2; b++) {
                dsmmi_merge_acc acc;
                CHECK_OK(ctx,
                         dsmmi_merge_acc_init(ctx, b ? DSMMI_MERGE_BINARY : DSMMI_MERGE_KWAY, k, 3,
                                              64, DSMM_PLUS_TIMES, DSMM_DOUBLE, 32, &acc));
                for (int i = 0; i < k; i++) {
                    dsmm_csr *L = NULL;
                    dsmm_idx cols[2] = {alike ? 0 : 2 * i, alike ? 1 : 2 * i + 1};
                    if (list_of(ctx, 3, 64, cols, 2, 1.0, &L)) return TEST_FAIL;
                    CHECK_OK(ctx, dsmmi_merge_acc_push(ctx, &acc, &L));
                }
                CHECK_OK(ctx, dsmmi_merge_acc_finish(ctx, &acc, &C[b]));
                peak[b] = acc.peak_bytes;
                dsmmi_merge_acc_free(ctx, &acc);
                CHECK_MSG(peak[b] == model_peak(k, b, alike),
                          "%s k %d %s: peak %lld bytes, model %lld", b ? "binary" : "k-way", k,
                          alike ? "alike" : "disjoint", (long long)peak[b],
                          (long long)model_peak(k, b, alike));
            }
            CHECK_MSG(peak[1] <= peak[0] && (!alike || k < 3 || peak[1] < peak[0]),
                      "k %d: binary %lld bytes, k-way %lld", k, (long long)peak[1],
                      (long long)peak[0]);
            if (same_bits(C[1], C[0], "binary vs k-way")) return TEST_FAIL;
            dsmm_csr_destroy(&C[0]);
            dsmm_csr_destroy(&C[1]);
        }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Random lists (some stages without one, some empty): binary merge's C has k-way's pattern and
// values, bit for bit up to 5 stages (the same grouping of each sum) and for min-plus at any
// count, else within 1e-12.
static int test_binary_vs_kway(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t rs = seed_at(900);
    for (int sri = 0; sri < 2; sri++)
        for (int k = 1; k <= 16; k++) {
            dsmm_semiring sr = sri ? DSMM_MIN_PLUS : DSMM_PLUS_TIMES;
            dsmm_csr *C[2] = {NULL, NULL};
            dsmmi_merge_acc acc[2];
            for (int b = 0; b < 2; b++)
                CHECK_OK(ctx, dsmmi_merge_acc_init(ctx, b ? DSMMI_MERGE_BINARY : DSMMI_MERGE_KWAY,
                                                   k, 7, 40, sr, DSMM_DOUBLE, 32, &acc[b]));
            for (int i = 0; i < k; i++) {
                dsmm_csr *L[2] = {NULL, NULL};
                uint64_t kind = next_u64(&rs) % 6;
                if (kind != 0) { // kind 0: a stage without a product
                    test_mat o;
                    test_mat_init(&o, 7, 40, kind == 1 ? 0.0 : 0.3, next_u64(&rs));
                    o.type = DSMM_DOUBLE;
                    o.col_bits = 32;
                    CHECK_OK(ctx, test_rand_csr(ctx, &o, &L[0]));
                    // Values with full mantissas, so grouping the sums differently shows.
                    for (dsmm_idx q = 0; q < L[0]->nnz; q++)
                        ((double *)L[0]->val)[q] = (double)(next_u64(&rs) >> 11) * 0x1p-53 - 0.5;
                    CHECK_OK(ctx, dsmm_csr_copy(ctx, L[0], DSMM_DOUBLE, &L[1]));
                }
                for (int b = 0; b < 2; b++)
                    CHECK_OK(ctx, dsmmi_merge_acc_push(ctx, &acc[b], &L[b]));
            }
            for (int b = 0; b < 2; b++) {
                CHECK_OK(ctx, dsmmi_merge_acc_finish(ctx, &acc[b], &C[b]));
                dsmmi_merge_acc_free(ctx, &acc[b]);
            }
            if (k <= 5 || sr == DSMM_MIN_PLUS) {
                if (same_bits(C[1], C[0], "binary vs k-way")) return TEST_FAIL;
            } else {
                CHECK(test_csr_same(ctx, C[1], C[0], 1e-12, 0.0, "binary vs k-way") == TEST_PASS);
            }
            dsmm_csr_destroy(&C[0]);
            dsmm_csr_destroy(&C[1]);
        }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_random),          TEST(test_fast_paths),     TEST(test_threads),
        TEST(test_edge_shapes),     TEST(test_explicit_zeros), TEST(test_part_order),
        TEST(test_bad_input),       TEST(test_alloc_failures), TEST(test_summa),
        TEST(test_binary_schedule), TEST(test_binary_peak),    TEST(test_binary_vs_kway),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
