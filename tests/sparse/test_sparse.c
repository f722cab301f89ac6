// tests/sparse/test_sparse.c: the local formats against naive dense references: creation,
// wrap, check, COO assembly and duplicate policies, sort, transpose, permute, tiles, panels,
// compare, dense; 32-bit columns (set_col_width, and every operation on 32-bit input against
// the same matrix with 64-bit columns); edge shapes, broken invariants and allocation failures.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sparse/sparse.h"

/* ---- references ------------------------------------------------------------------------- */

// A dense reference: values plus a presence mask, so explicit zeros count as entries.
typedef struct ref {
    dsmm_idx m, n;
    double *v;
    unsigned char *on;
} ref;

static ref ref_new(dsmm_idx m, dsmm_idx n)
{
    size_t sz = (size_t)(m * n) + 1;
    ref r = {m, n, calloc(sz, sizeof(double)), calloc(sz, 1)};
    return r;
}

static void ref_free(ref *r)
{
    free(r->v);
    free(r->on);
}

// Applies entry (i, j, x) as dsmm_coo_to_csr would under dup, in input order.
static void ref_add(ref *r, dsmm_idx i, dsmm_idx j, double x, dsmm_dup dup)
{
    size_t at = (size_t)(i * r->n + j);
    if (!r->on[at]) {
        r->on[at] = 1;
        r->v[at] = x;
        return;
    }
    if (dup == DSMM_DUP_SUM) r->v[at] += x;
    if (dup == DSMM_DUP_MAX) r->v[at] = x > r->v[at] ? x : r->v[at];
    if (dup == DSMM_DUP_MIN) r->v[at] = x < r->v[at] ? x : r->v[at];
    if (dup == DSMM_DUP_LAST) r->v[at] = x;
}

static ref ref_of_csr(const dsmm_csr *A)
{
    ref r = ref_new(A->nrows, A->ncols);
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            ref_add(&r, i, dsmm_csr_col(A, k), dsmm_csr_value(A, k), DSMM_DUP_SUM);
    return r;
}

// A is valid, sorted, and holds exactly r's entries (values within tol).
static int csr_matches(dsmm_ctx *ctx, const dsmm_csr *A, const ref *r, double tol)
{
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    CHECK(A->sorted);
    CHECK_EQ_IDX(A->nrows, r->m);
    CHECK_EQ_IDX(A->ncols, r->n);
    dsmm_idx count = 0;
    for (size_t at = 0; at < (size_t)(r->m * r->n); at++) count += r->on[at];
    CHECK_EQ_IDX(A->nnz, count);
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            size_t at = (size_t)(i * r->n + dsmm_csr_col(A, k));
            CHECK_MSG(r->on[at], "unexpected entry (%lld, %lld)", (long long)i,
                      (long long)dsmm_csr_col(A, k));
            CHECK_NEAR(dsmm_csr_value(A, k), r->v[at], tol);
        }
    return TEST_PASS;
}

static dsmm_idx rnd(dsmm_rng *g, dsmm_idx n)
{
    return n <= 0 ? 0 : (dsmm_idx)(dsmm_rng_u64(g) % (uint64_t)n);
}

// Random value with some explicit zeros and negatives, exact in float.
static double rnd_val(dsmm_rng *g)
{
    return (double)((int)rnd(g, 9) - 3) * 0.25;
}

// Random triples (duplicates likely) and their reference under dup.
static int rand_coo(dsmm_ctx *ctx, dsmm_rng *g, dsmm_idx m, dsmm_idx n, dsmm_idx cnt,
                    dsmm_type type, dsmm_coo **T)
{
    CHECK_OK(ctx, dsmm_coo_create(ctx, m, n, 0, type, T));
    if (m == 0 || n == 0) return TEST_PASS;
    for (dsmm_idx k = 0; k < cnt; k++) {
        double x = rnd_val(g);
        CHECK_OK(ctx, dsmm_coo_push(*T, rnd(g, m), rnd(g, n), x));
    }
    return TEST_PASS;
}

static ref ref_of_coo(const dsmm_coo *T, dsmm_dup dup, dsmm_type result)
{
    ref r = ref_new(T->nrows, T->ncols);
    for (dsmm_idx k = 0; k < T->nnz; k++) {
        double x = T->type == DSMM_DOUBLE  ? ((double *)T->val)[k]
                   : T->type == DSMM_FLOAT ? (double)((float *)T->val)[k]
                                           : 1.0;
        ref_add(&r, T->row[k], T->col[k], x, T->type == DSMM_PATTERN ? DSMM_DUP_LAST : dup);
    }
    if (result == DSMM_PATTERN)
        for (size_t at = 0; at < (size_t)(r.m * r.n); at++) r.v[at] = 1.0;
    return r;
}

// A random sorted CSR (duplicates summed).
static int rand_csr(dsmm_ctx *ctx, dsmm_rng *g, dsmm_idx m, dsmm_idx n, dsmm_idx cnt,
                    dsmm_type type, dsmm_csr **A)
{
    dsmm_coo *T = NULL;
    if (rand_coo(ctx, g, m, n, cnt, type, &T) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, A));
    dsmm_coo_destroy(&T);
    return TEST_PASS;
}

// A random unsorted CSR with repeated columns in some rows.
static int rand_unsorted(dsmm_ctx *ctx, dsmm_rng *g, dsmm_idx m, dsmm_idx n, dsmm_idx per_row,
                         dsmm_type type, dsmm_csr **A)
{
    CHECK_OK(ctx, dsmm_csr_create(ctx, m, n, m * per_row, type, A));
    dsmm_csr *B = *A;
    dsmm_idx k = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx len = n == 0 ? 0 : rnd(g, per_row + 1);
        for (dsmm_idx t = 0; t < len; t++, k++) {
            B->colidx[k] = rnd(g, n);
            if (type == DSMM_DOUBLE) ((double *)B->val)[k] = rnd_val(g);
            if (type == DSMM_FLOAT) ((float *)B->val)[k] = (float)rnd_val(g);
        }
        B->rowptr[i + 1] = k;
    }
    B->nnz = k;
    B->sorted = 0;
    CHECK_OK(ctx, dsmm_csr_check(ctx, B));
    return TEST_PASS;
}

static const dsmm_type types[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};
static const dsmm_idx shapes[][2] = {{0, 0},  {0, 5},  {5, 0},  {1, 1},   {1, 40},
                                     {40, 1}, {7, 13}, {13, 7}, {30, 30}, {3, 200}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* ---- create, wrap, reserve, copy, destroy ----------------------------------------------- */

static int test_create(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++) {
            CHECK_OK(ctx, dsmm_csr_create(ctx, shapes[s][0], shapes[s][1], 4, types[t], &A));
            CHECK_OK(ctx, dsmm_csr_check(ctx, A));
            CHECK(A->nnz == 0 && A->cap == 4 && A->sorted == 1 && A->owns_arrays == 1);
            CHECK((A->val == NULL) == (types[t] == DSMM_PATTERN));
            CHECK(A->ctx == ctx);
            dsmm_csr_destroy(&A);
            CHECK(A == NULL);
        }
    A = (dsmm_csr *)&A; // must be reset to NULL on error
    CHECK_ST(ctx, dsmm_csr_create(ctx, -1, 3, 0, DSMM_DOUBLE, &A), DSMM_ERR_ARG);
    CHECK(A == NULL);
    CHECK_ST(ctx, dsmm_csr_create(ctx, 3, -1, 0, DSMM_DOUBLE, &A), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_create(ctx, 3, 3, -1, DSMM_DOUBLE, &A), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_create(ctx, 3, 3, 0, (dsmm_type)7, &A), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_create(ctx, 3, 3, 0, DSMM_DOUBLE, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_create(ctx, 3, 3, (dsmm_idx)1 << 62, DSMM_DOUBLE, &A), DSMM_ERR_NOMEM);
    CHECK(A == NULL);
    dsmm_csr_destroy(NULL);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_wrap(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 2, 2, 5};
    dsmm_idx ci[] = {0, 3, 1, 2, 3};
    double v[] = {1, 2, 3, 4, 5};
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 3, 4, rp, ci, v, DSMM_DOUBLE, &A));
    CHECK(A->owns_arrays == 0 && A->sorted == 1 && A->nnz == 5 && A->rowptr == rp);
    dsmm_csr_destroy(&A); // must not free the borrowed arrays (stack: would crash)
    CHECK_EQ_IDX(ci[4], 3);
    dsmm_idx ci2[] = {3, 0, 1, 2, 3}; // unsorted row 0: accepted, sorted = 0
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 3, 4, rp, ci2, NULL, DSMM_PATTERN, &A));
    CHECK(A->sorted == 0);
    CHECK_ST(ctx, dsmm_csr_reserve(A, 100), DSMM_ERR_ARG); // borrowed arrays cannot grow
    dsmm_csr_destroy(&A);
    dsmm_idx ci3[] = {0, 4, 1, 2, 3}; // column 4 out of range
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_wrap(ctx, 3, 4, rp, ci3, v, DSMM_DOUBLE, &A), DSMM_ERR_FORMAT);
    CHECK(A == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "colidx[1] = 4 outside 0..3");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_wrap(ctx, 3, 4, rp, ci, NULL, DSMM_DOUBLE, &A), DSMM_ERR_FORMAT);
    CHECK_ST(ctx, dsmm_csr_wrap(ctx, 3, 4, NULL, ci, v, DSMM_DOUBLE, &A), DSMM_ERR_FORMAT);
    CHECK_ST(ctx, dsmm_csr_wrap(ctx, -3, 4, rp, ci, v, DSMM_DOUBLE, &A), DSMM_ERR_ARG);
    dsmm_idx rp0[] = {0};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 0, 0, rp0, NULL, NULL, DSMM_PATTERN, &A));
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_reserve_copy(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 1);
    for (int t = 0; t < 3; t++) {
        dsmm_csr *A = NULL;
        CHECK(rand_csr(ctx, &g, 20, 30, 100, types[t], &A) == TEST_PASS);
        ref r = ref_of_csr(A);
        dsmm_idx cap0 = A->cap;
        CHECK_OK(ctx, dsmm_csr_reserve(A, cap0 / 2)); // shrinking request: no-op
        CHECK_EQ_IDX(A->cap, cap0);
        CHECK_OK(ctx, dsmm_csr_reserve(A, cap0 + 1000));
        CHECK_EQ_IDX(A->cap, cap0 + 1000);
        CHECK(csr_matches(ctx, A, &r, 0) == TEST_PASS);
        CHECK_ST(ctx, dsmm_csr_reserve(A, -1), DSMM_ERR_ARG);
        for (int u = 0; u < 3; u++) {
            dsmm_csr *B = NULL;
            CHECK_OK(ctx, dsmm_csr_copy(ctx, A, types[u], &B));
            CHECK(B->type == types[u] && B->colidx != A->colidx);
            ref rb = ref_of_csr(A);
            if (types[t] == DSMM_PATTERN || types[u] == DSMM_PATTERN)
                for (size_t at = 0; at < (size_t)(rb.m * rb.n); at++) rb.v[at] = 1.0;
            CHECK(csr_matches(ctx, B, &rb, 0) == TEST_PASS);
            ref_free(&rb);
            dsmm_csr_destroy(&B);
        }
        ref_free(&r);
        dsmm_csr_destroy(&A);
    }
    dsmm_csr *B = NULL;
    CHECK_ST(ctx, dsmm_csr_copy(ctx, NULL, DSMM_DOUBLE, &B), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- check: every invariant, broken on purpose ------------------------------------------ */

// Expects dsmm_csr_check(A) to fail with a message containing want.
static int expect_broken(dsmm_ctx *ctx, const dsmm_csr *A, const char *want)
{
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_check(ctx, A), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), want);
    dsmm_ctx_clear_error(ctx);
    return TEST_PASS;
}

static int test_check(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 2, 2, 5};
    dsmm_idx ci[] = {0, 3, 1, 2, 3};
    double v[] = {1, 2, 3, 4, 5};
    const dsmm_csr good = {.nrows = 3,
                           .ncols = 4,
                           .nnz = 5,
                           .cap = 5,
                           .rowptr = rp,
                           .colidx = ci,
                           .val = v,
                           .type = DSMM_DOUBLE,
                           .sorted = 1,
                           .owns_arrays = 0,
                           .ctx = ctx};
    CHECK_OK(ctx, dsmm_csr_check(ctx, &good));
    dsmm_csr A;
    A = good, A.nrows = -1;
    CHECK(expect_broken(ctx, &A, "negative dimensions") == TEST_PASS);
    A = good, A.ncols = -2;
    CHECK(expect_broken(ctx, &A, "negative dimensions") == TEST_PASS);
    A = good, A.nnz = -1;
    CHECK(expect_broken(ctx, &A, "negative nnz") == TEST_PASS);
    A = good, A.cap = 4;
    CHECK(expect_broken(ctx, &A, "nnz = 5 > cap = 4") == TEST_PASS);
    A = good, A.rowptr = NULL;
    CHECK(expect_broken(ctx, &A, "rowptr is NULL") == TEST_PASS);
    A = good, A.colidx = NULL;
    CHECK(expect_broken(ctx, &A, "colidx is NULL with nnz = 5") == TEST_PASS);
    A = good, A.type = (dsmm_type)9;
    CHECK(expect_broken(ctx, &A, "invalid value type 9") == TEST_PASS);
    A = good, A.val = NULL;
    CHECK(expect_broken(ctx, &A, "val is NULL but type is double") == TEST_PASS);
    A = good, A.type = DSMM_PATTERN;
    CHECK(expect_broken(ctx, &A, "val is non-NULL but type is pattern") == TEST_PASS);
    dsmm_idx rp1[] = {1, 2, 2, 5};
    A = good, A.rowptr = rp1;
    CHECK(expect_broken(ctx, &A, "rowptr[0] = 1, not 0") == TEST_PASS);
    dsmm_idx rp2[] = {0, 3, 2, 5};
    A = good, A.rowptr = rp2;
    CHECK(expect_broken(ctx, &A, "rowptr[1] = 3 > rowptr[2] = 2: row pointers decrease") ==
          TEST_PASS);
    dsmm_idx rp3[] = {0, 2, 2, 4};
    A = good, A.rowptr = rp3;
    CHECK(expect_broken(ctx, &A, "rowptr[3] = 4 but nnz = 5") == TEST_PASS);
    dsmm_idx ci1[] = {0, 3, 1, -1, 3};
    A = good, A.colidx = ci1;
    CHECK(expect_broken(ctx, &A, "row 2: colidx[3] = -1 outside 0..3") == TEST_PASS);
    dsmm_idx ci2[] = {0, 3, 1, 3, 3};
    A = good, A.colidx = ci2;
    CHECK(expect_broken(ctx, &A, "row 2: colidx[4] = 3 <= colidx[3] = 3") == TEST_PASS);
    A.sorted = 0; // the same arrays are fine when not claimed sorted
    CHECK_OK(ctx, dsmm_csr_check(ctx, &A));
    dsmm_idx ci3[] = {3, 0, 1, 2, 3};
    A = good, A.colidx = ci3;
    CHECK(expect_broken(ctx, &A, "row 0: colidx[1] = 0 <= colidx[0] = 3") == TEST_PASS);
    CHECK_ST(ctx, dsmm_csr_check(ctx, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- COO ------------------------------------------------------------------------------- */

static int test_coo_push(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_coo *T = NULL;
    CHECK_OK(ctx, dsmm_coo_create(ctx, 3, 4, 0, DSMM_FLOAT, &T));
    for (int k = 0; k < 100; k++) CHECK_OK(ctx, dsmm_coo_push(T, k % 3, k % 4, k * 0.5));
    CHECK_EQ_IDX(T->nnz, 100);
    CHECK(T->cap >= 100);
    CHECK_NEAR(((float *)T->val)[99], 49.5, 0);
    CHECK_EQ_IDX(T->row[98], 98 % 3);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_coo_push(T, 3, 0, 1), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "(3, 0) outside the 3 x 4 matrix");
    CHECK_ST(ctx, dsmm_coo_push(T, 0, 4, 1), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_coo_push(T, -1, 0, 1), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_coo_push(NULL, 0, 0, 1), DSMM_ERR_ARG);
    CHECK_EQ_IDX(T->nnz, 100);
    dsmm_coo_destroy(&T);
    CHECK(T == NULL);
    dsmm_coo_destroy(&T);
    CHECK_ST(ctx, dsmm_coo_create(ctx, 3, 3, 0, (dsmm_type)5, &T), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_coo_create(ctx, -3, 3, 0, DSMM_DOUBLE, &T), DSMM_ERR_ARG);
    CHECK(T == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_coo_to_csr_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 2);
    const dsmm_dup dups[] = {DSMM_DUP_SUM, DSMM_DUP_MAX, DSMM_DUP_MIN, DSMM_DUP_LAST};
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int d = 0; d < 4; d++)
                for (int rt = 0; rt < 3; rt++) {
                    dsmm_idx m = shapes[s][0], n = shapes[s][1];
                    dsmm_coo *T = NULL;
                    dsmm_csr *A = NULL;
                    CHECK(rand_coo(ctx, &g, m, n, (m + n) * 3, types[t], &T) == TEST_PASS);
                    ref r = ref_of_coo(T, dups[d], types[rt]);
                    dsmm_idx dr = 0, dc = 0;
                    CHECK_OK(ctx, dsmmi_coo_to_csr(ctx, T, dups[d], types[rt], &A, &dr, &dc));
                    CHECK(dr == -1 && dc == -1);
                    CHECK(A->type == types[rt]);
                    CHECK(csr_matches(ctx, A, &r, 1e-6) == TEST_PASS);
                    ref_free(&r);
                    dsmm_csr_destroy(&A);
                    dsmm_coo_destroy(&T);
                }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Long rows (merge sort path) with many duplicates; dense row; thread counts agree.
static int test_coo_to_csr_long_rows(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 3);
    const dsmm_dup dups[] = {DSMM_DUP_SUM, DSMM_DUP_MAX, DSMM_DUP_MIN, DSMM_DUP_LAST};
    for (int d = 0; d < 4; d++) {
        dsmm_coo *T = NULL;
        CHECK_OK(ctx, dsmm_coo_create(ctx, 50, 300, 0, DSMM_DOUBLE, &T));
        for (int k = 0; k < 30000; k++) {
            dsmm_idx i = k % 7 == 0 ? 3 : rnd(&g, 50); // row 3 is long and dense
            CHECK_OK(ctx, dsmm_coo_push(T, i, rnd(&g, 300), rnd_val(&g)));
        }
        for (dsmm_idx j = 299; j >= 0; j--) CHECK_OK(ctx, dsmm_coo_push(T, 7, j, (double)j));
        ref r = ref_of_coo(T, dups[d], DSMM_DOUBLE);
        dsmm_csr *A1 = NULL, *A2 = NULL;
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1));
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, dups[d], &A1));
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, dups[d], &A2));
        CHECK(csr_matches(ctx, A1, &r, 1e-9) == TEST_PASS);
        CHECK(csr_matches(ctx, A2, &r, 1e-9) == TEST_PASS);
        CHECK_EQ_IDX(A1->rowptr[8] - A1->rowptr[7], 300);
        ref_free(&r);
        dsmm_csr_destroy(&A1);
        dsmm_csr_destroy(&A2);
        dsmm_coo_destroy(&T);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_coo_to_csr_dups(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_coo *T = NULL;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_coo_create(ctx, 4, 5, 0, DSMM_DOUBLE, &T));
    const double in[][3] = {{2, 3, 5}, {1, 1, 0}, {2, 3, -1}, {0, 4, 2}, {2, 3, 7}, {2, 0, 1}};
    for (int k = 0; k < 6; k++)
        CHECK_OK(ctx, dsmm_coo_push(T, (dsmm_idx)in[k][0], (dsmm_idx)in[k][1], in[k][2]));
    const double want[] = {11, 7, -1, 7}; // SUM MAX MIN LAST at (2, 3)
    for (int d = 0; d < 4; d++) {
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, (dsmm_dup)d, &A));
        CHECK_EQ_IDX(A->nnz, 4);
        CHECK_EQ_IDX(A->rowptr[2], 2); // explicit zero at (1, 1) kept
        CHECK_EQ_IDX(A->colidx[1], 1);
        CHECK_NEAR(dsmm_csr_value(A, 1), 0, 0);
        CHECK_EQ_IDX(A->colidx[3], 3);
        CHECK_NEAR(dsmm_csr_value(A, 3), want[d], 0);
        dsmm_csr_destroy(&A);
    }
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &A), DSMM_ERR_FORMAT);
    CHECK(A == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "duplicate entry (3, 4) (1-based)");
    dsmm_ctx_clear_error(ctx);
    dsmm_idx dr = 0, dc = 0;
    CHECK_ST(ctx, dsmmi_coo_to_csr(ctx, T, DSMM_DUP_ERROR, DSMM_FLOAT, &A, &dr, &dc),
             DSMM_ERR_FORMAT);
    CHECK(dr == 2 && dc == 3 && A == NULL);
    CHECK_ST(ctx, dsmm_coo_to_csr(ctx, T, (dsmm_dup)9, &A), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_coo_to_csr(ctx, NULL, DSMM_DUP_SUM, &A), DSMM_ERR_ARG);
    dsmm_coo_destroy(&T);
    // no duplicate: DUP_ERROR succeeds, reports -1
    CHECK_OK(ctx, dsmm_coo_create(ctx, 2, 2, 0, DSMM_PATTERN, &T));
    CHECK_OK(ctx, dsmm_coo_push(T, 1, 0, 0));
    CHECK_OK(ctx, dsmm_coo_push(T, 0, 1, 0));
    CHECK_OK(ctx, dsmmi_coo_to_csr(ctx, T, DSMM_DUP_ERROR, DSMM_DOUBLE, &A, &dr, &dc));
    CHECK(dr == -1 && dc == -1 && A->nnz == 2 && A->type == DSMM_DOUBLE);
    CHECK_NEAR(dsmm_csr_value(A, 0), 1, 0);
    dsmm_csr_destroy(&A);
    // pattern duplicates collapse to one entry of value 1, even under SUM
    CHECK_OK(ctx, dsmm_coo_push(T, 0, 1, 0));
    CHECK_OK(ctx, dsmmi_coo_to_csr(ctx, T, DSMM_DUP_SUM, DSMM_DOUBLE, &A, NULL, NULL));
    CHECK_EQ_IDX(A->nnz, 2);
    CHECK_NEAR(dsmm_csr_value(A, 0), 1, 0);
    dsmm_csr_destroy(&A);
    // an entry written directly outside the matrix is a format error, not a crash
    T->row[1] = 5;
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, &A), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "entry 1 at (5, 1) outside");
    dsmm_ctx_clear_error(ctx);
    dsmm_coo_destroy(&T);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Large enough for the threaded paths; first duplicate reported in row-major order.
static int test_coo_to_csr_threads(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 4);
    dsmm_coo *T = NULL;
    dsmm_idx n = 2000;
    CHECK_OK(ctx, dsmm_coo_create(ctx, n, n, 0, DSMM_DOUBLE, &T));
    for (dsmm_idx i = n - 1; i >= 0; i--)
        for (dsmm_idx j = 0; j < 30; j++)
            CHECK_OK(ctx, dsmm_coo_push(T, i, (i * 7 + j * 13) % n, 1));
    CHECK_OK(ctx, dsmm_coo_push(T, 1500, (1500 * 7) % n, 2)); // duplicates, rows 1500 and 900
    CHECK_OK(ctx, dsmm_coo_push(T, 900, (900 * 7 + 13) % n, 2));
    for (int t = 1; t <= 2; t++) {
        dsmm_csr *A = NULL;
        dsmm_idx dr = 0, dc = 0;
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmmi_coo_to_csr(ctx, T, DSMM_DUP_ERROR, DSMM_DOUBLE, &A, &dr, &dc),
                 DSMM_ERR_FORMAT);
        CHECK_EQ_IDX(dr, 900);
        CHECK_EQ_IDX(dc, (900 * 7 + 13) % n);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "duplicate entry (901, ");
        dsmm_ctx_clear_error(ctx);
        ref r = ref_of_coo(T, DSMM_DUP_LAST, DSMM_DOUBLE);
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_LAST, &A));
        CHECK(csr_matches(ctx, A, &r, 0) == TEST_PASS);
        ref_free(&r);
        dsmm_csr_destroy(&A);
    }
    (void)g;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_coo_destroy(&T);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_csr_to_coo(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 5);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++) {
            dsmm_csr *A = NULL, *B = NULL;
            dsmm_coo *T = NULL;
            CHECK(rand_csr(ctx, &g, shapes[s][0], shapes[s][1], 50, types[t], &A) == TEST_PASS);
            CHECK_OK(ctx, dsmm_csr_to_coo(ctx, A, &T));
            CHECK_EQ_IDX(T->nnz, A->nnz);
            for (dsmm_idx k = 1; k < T->nnz; k++)
                CHECK(T->row[k - 1] < T->row[k] ||
                      (T->row[k - 1] == T->row[k] && T->col[k - 1] < T->col[k]));
            CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &B));
            ref r = ref_of_csr(A);
            CHECK(csr_matches(ctx, B, &r, 0) == TEST_PASS);
            ref_free(&r);
            dsmm_csr_destroy(&A);
            dsmm_csr_destroy(&B);
            dsmm_coo_destroy(&T);
        }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- sort, transpose, permute ----------------------------------------------------------- */

static int test_sort_inplace(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 6);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++) {
            dsmm_csr *A = NULL;
            dsmm_idx per_row = s % 2 ? 70 : 6; // long rows take the merge sort
            CHECK(rand_unsorted(ctx, &g, shapes[s][0], shapes[s][1], per_row, types[t], &A) ==
                  TEST_PASS);
            ref r = ref_of_csr(A);
            if (types[t] == DSMM_PATTERN)
                for (size_t at = 0; at < (size_t)(r.m * r.n); at++) r.v[at] = 1.0;
            CHECK_OK(ctx, dsmm_csr_sort_inplace(ctx, A, DSMM_DUP_SUM));
            CHECK(csr_matches(ctx, A, &r, 1e-6) == TEST_PASS);
            ref_free(&r);
            dsmm_csr_destroy(&A);
        }
    // DUP_ERROR leaves A untouched; LAST keeps the later entry of the row
    dsmm_idx rp[] = {0, 4, 5};
    dsmm_idx ci[] = {3, 1, 3, 0, 2};
    double v[] = {1, 2, 3, 4, 5};
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 4, rp, ci, v, DSMM_DOUBLE, &A));
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_sort_inplace(ctx, A, DSMM_DUP_ERROR), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "duplicate entry (1, 4) (1-based)");
    dsmm_ctx_clear_error(ctx);
    CHECK(A->nnz == 5 && ci[0] == 3 && ci[3] == 0 && rp[2] == 5 && A->sorted == 0);
    CHECK_OK(ctx, dsmm_csr_sort_inplace(ctx, A, DSMM_DUP_LAST));
    CHECK(A->nnz == 4 && A->sorted == 1 && rp[1] == 3 && rp[2] == 4);
    CHECK(ci[0] == 0 && ci[1] == 1 && ci[2] == 3 && ci[3] == 2);
    CHECK(v[0] == 4 && v[1] == 2 && v[2] == 3 && v[3] == 5);
    CHECK_ST(ctx, dsmm_csr_sort_inplace(ctx, A, (dsmm_dup)-3), DSMM_ERR_ARG);
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_transpose(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 7);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int unsorted = 0; unsorted < 2; unsorted++) {
                dsmm_idx m = shapes[s][0], n = shapes[s][1];
                dsmm_csr *A = NULL, *T = NULL, *TT = NULL;
                if (unsorted)
                    CHECK(rand_unsorted(ctx, &g, m, n, 5, types[t], &A) == TEST_PASS);
                else
                    CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), types[t], &A) == TEST_PASS);
                CHECK_OK(ctx, dsmm_csr_transpose(ctx, A, &T));
                CHECK_OK(ctx, dsmm_csr_check(ctx, T));
                CHECK(T->nrows == n && T->ncols == m && T->nnz == A->nnz && T->type == A->type);
                for (dsmm_idx i = 0; i < T->nrows; i++) // rows of T non-decreasing
                    for (dsmm_idx k = T->rowptr[i] + 1; k < T->rowptr[i + 1]; k++)
                        CHECK(T->colidx[k - 1] <= T->colidx[k]);
                ref ra = ref_of_csr(A), rt = ref_of_csr(T);
                for (dsmm_idx i = 0; i < m; i++)
                    for (dsmm_idx j = 0; j < n; j++) {
                        CHECK(ra.on[i * n + j] == rt.on[j * m + i]);
                        CHECK_NEAR(ra.v[i * n + j], rt.v[j * m + i], 1e-6);
                    }
                ref_free(&ra);
                ref_free(&rt);
                CHECK_OK(ctx, dsmm_csr_transpose(ctx, T, &TT));
                dsmm_csr_diff d;
                CHECK_OK(ctx, dsmm_csr_compare(ctx, A, TT, 0, 0, &d));
                CHECK_MSG(d.equal, "%s", d.what);
                if (!unsorted) {
                    CHECK(T->sorted && TT->sorted);
                    CHECK(memcmp(A->colidx, TT->colidx, (size_t)A->nnz * sizeof(dsmm_idx)) == 0);
                }
                dsmm_csr_destroy(&A);
                dsmm_csr_destroy(&T);
                dsmm_csr_destroy(&TT);
            }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static void rand_perm(dsmm_rng *g, dsmm_idx n, dsmm_idx *p)
{
    for (dsmm_idx i = 0; i < n; i++) p[i] = i;
    for (dsmm_idx i = n - 1; i > 0; i--) {
        dsmm_idx j = rnd(g, i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

static int test_permute(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 8);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int mode = 0; mode < 4; mode++) { // p, q each NULL or not
                dsmm_idx m = shapes[s][0], n = shapes[s][1];
                dsmm_idx *p = malloc(sizeof(dsmm_idx) * (size_t)(m + 1));
                dsmm_idx *q = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
                dsmm_idx *pi = malloc(sizeof(dsmm_idx) * (size_t)(m + 1));
                dsmm_idx *qi = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
                rand_perm(&g, m, p);
                rand_perm(&g, n, q);
                for (dsmm_idx i = 0; i < m; i++) pi[p[i]] = i;
                for (dsmm_idx j = 0; j < n; j++) qi[q[j]] = j;
                const dsmm_idx *pp = mode & 1 ? p : NULL, *qq = mode & 2 ? q : NULL;
                dsmm_csr *A = NULL, *B = NULL, *C = NULL;
                CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), types[t], &A) == TEST_PASS);
                CHECK_OK(ctx, dsmm_csr_permute(ctx, A, pp, qq, &B));
                ref ra = ref_of_csr(A), rb = ref_new(m, n);
                for (dsmm_idx i = 0; i < m; i++)
                    for (dsmm_idx j = 0; j < n; j++) {
                        size_t src = (size_t)((pp ? p[i] : i) * n + (qq ? q[j] : j));
                        rb.on[i * n + j] = ra.on[src];
                        rb.v[i * n + j] = ra.v[src];
                    }
                CHECK(csr_matches(ctx, B, &rb, 0) == TEST_PASS);
                CHECK_OK(ctx, dsmm_csr_permute(ctx, B, pp ? pi : NULL, qq ? qi : NULL, &C));
                CHECK(csr_matches(ctx, C, &ra, 0) == TEST_PASS);
                ref_free(&ra);
                ref_free(&rb);
                dsmm_csr_destroy(&A);
                dsmm_csr_destroy(&B);
                dsmm_csr_destroy(&C);
                free(p), free(q), free(pi), free(qi);
            }
    // unsorted input with duplicates: kept, rows sorted stably, sorted = 0
    dsmm_idx rp[] = {0, 3, 4};
    dsmm_idx ci[] = {2, 0, 2, 1};
    double v[] = {1, 2, 3, 4};
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, v, DSMM_DOUBLE, &A));
    dsmm_idx p[] = {1, 0}, q[] = {0, 1, 2};
    CHECK_OK(ctx, dsmm_csr_permute(ctx, A, p, q, &B));
    CHECK_OK(ctx, dsmm_csr_check(ctx, B));
    CHECK(B->sorted == 0 && B->nnz == 4 && B->rowptr[1] == 1);
    CHECK(B->colidx[1] == 0 && B->colidx[2] == 2 && B->colidx[3] == 2);
    CHECK_NEAR(((double *)B->val)[2], 1, 0);
    CHECK_NEAR(((double *)B->val)[3], 3, 0);
    dsmm_csr_destroy(&B);
    // invalid permutations name the first bad entry
    dsmm_idx bad1[] = {0, 2}, bad2[] = {1, 1}, badq[] = {0, 2, 0};
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_permute(ctx, A, bad1, NULL, &B), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "p[1] = 2 outside 0..1");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_permute(ctx, A, bad2, NULL, &B), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "p[1] = 1 repeats p[0]");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_permute(ctx, A, NULL, badq, &B), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "q[2] = 0 repeats q[0]");
    CHECK(B == NULL);
    dsmm_ctx_clear_error(ctx);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- tiles and panels ------------------------------------------------------------------- */

static int test_extract(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 9);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int unsorted = 0; unsorted < 2; unsorted++) {
            dsmm_idx m = shapes[s][0], n = shapes[s][1];
            dsmm_csr *A = NULL;
            if (unsorted)
                CHECK(rand_unsorted(ctx, &g, m, n, 6, DSMM_DOUBLE, &A) == TEST_PASS);
            else
                CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), DSMM_DOUBLE, &A) == TEST_PASS);
            ref ra = ref_of_csr(A);
            for (int gr = 1; gr <= 4; gr++)
                for (int gc = 1; gc <= 5; gc += 2) {
                    dsmm_idx rb[5], cb[6], total = 0;
                    dsmmi_equal_split(m, gr, rb);
                    dsmmi_equal_split(n, gc, cb);
                    for (int a = 0; a < gr; a++)
                        for (int b = 0; b < gc; b++) {
                            dsmm_csr *X = NULL;
                            CHECK_OK(ctx, dsmm_csr_extract(ctx, A, rb[a], rb[a + 1], cb[b],
                                                           cb[b + 1], &X));
                            CHECK_OK(ctx, dsmm_csr_check(ctx, X));
                            CHECK(X->nrows == rb[a + 1] - rb[a] && X->ncols == cb[b + 1] - cb[b]);
                            total += X->nnz;
                            if (!unsorted) {
                                ref rx = ref_new(X->nrows, X->ncols);
                                for (dsmm_idx i = 0; i < X->nrows; i++)
                                    for (dsmm_idx j = 0; j < X->ncols; j++) {
                                        size_t at = (size_t)((rb[a] + i) * n + cb[b] + j);
                                        rx.on[i * X->ncols + j] = ra.on[at];
                                        rx.v[i * X->ncols + j] = ra.v[at];
                                    }
                                CHECK(csr_matches(ctx, X, &rx, 0) == TEST_PASS);
                                ref_free(&rx);
                            }
                            dsmm_csr_destroy(&X);
                        }
                    CHECK_EQ_IDX(total, A->nnz);
                }
            ref_free(&ra);
            dsmm_csr_destroy(&A);
        }
    dsmm_csr *A = NULL, *X = NULL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 4, 5, 0, DSMM_PATTERN, &A));
    CHECK_ST(ctx, dsmm_csr_extract(ctx, A, 2, 1, 0, 5, &X), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_extract(ctx, A, 0, 5, 0, 5, &X), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_extract(ctx, A, 0, 4, -1, 5, &X), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_extract(ctx, A, 0, 4, 3, 6, &X), DSMM_ERR_ARG);
    CHECK(X == NULL);
    CHECK_OK(ctx, dsmm_csr_extract(ctx, A, 2, 2, 5, 5, &X)); // empty tile
    CHECK(X->nrows == 0 && X->ncols == 0 && X->nnz == 0);
    dsmm_csr_destroy(&X);
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_panels(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 10);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int np = 1; np <= 9; np += 4) {
                dsmm_idx m = shapes[s][0], n = shapes[s][1];
                dsmm_csr *A = NULL, **R = NULL, **Cp = NULL;
                CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), types[t], &A) == TEST_PASS);
                ref ra = ref_of_csr(A);
                CHECK_OK(ctx, dsmm_csr_row_panels(ctx, A, np, NULL, &R));
                CHECK_OK(ctx, dsmm_csr_col_panels(ctx, A, np, NULL, &Cp));
                dsmm_idx rb[10], cb[10], rtot = 0, ctot = 0;
                dsmmi_equal_split(m, np, rb);
                dsmmi_equal_split(n, np, cb);
                for (int p = 0; p < np; p++) {
                    // the first panels take the remainder
                    if (p > 0) CHECK(rb[p + 1] - rb[p] <= rb[p] - rb[p - 1]);
                    CHECK(R[p]->nrows == rb[p + 1] - rb[p] && R[p]->ncols == n);
                    CHECK(Cp[p]->nrows == m && Cp[p]->ncols == cb[p + 1] - cb[p]);
                    CHECK(R[p]->type == A->type && Cp[p]->type == A->type);
                    ref rr = ref_new(R[p]->nrows, n), rc = ref_new(m, Cp[p]->ncols);
                    for (dsmm_idx i = 0; i < m; i++)
                        for (dsmm_idx j = 0; j < n; j++) {
                            size_t at = (size_t)(i * n + j);
                            if (i >= rb[p] && i < rb[p + 1]) {
                                rr.on[(i - rb[p]) * n + j] = ra.on[at];
                                rr.v[(i - rb[p]) * n + j] = ra.v[at];
                            }
                            if (j >= cb[p] && j < cb[p + 1]) {
                                rc.on[i * rc.n + j - cb[p]] = ra.on[at];
                                rc.v[i * rc.n + j - cb[p]] = ra.v[at];
                            }
                        }
                    CHECK(csr_matches(ctx, R[p], &rr, 0) == TEST_PASS);
                    CHECK(csr_matches(ctx, Cp[p], &rc, 0) == TEST_PASS);
                    ref_free(&rr);
                    ref_free(&rc);
                    rtot += R[p]->nnz;
                    ctot += Cp[p]->nnz;
                }
                CHECK_EQ_IDX(rtot, A->nnz);
                CHECK_EQ_IDX(ctot, A->nnz);
                dsmm_csr_panels_free(ctx, &R, np);
                dsmm_csr_panels_free(ctx, &Cp, np);
                CHECK(R == NULL && Cp == NULL);
                ref_free(&ra);
                dsmm_csr_destroy(&A);
            }
    // explicit bounds with an empty panel; invalid bounds; unsorted A for column panels
    dsmm_csr *A = NULL, **P = NULL;
    CHECK(rand_csr(ctx, &g, 6, 8, 30, DSMM_DOUBLE, &A) == TEST_PASS);
    dsmm_idx b[] = {0, 3, 3, 8};
    CHECK_OK(ctx, dsmm_csr_col_panels(ctx, A, 3, b, &P));
    CHECK(P[1]->ncols == 0 && P[1]->nnz == 0 && P[0]->nnz + P[2]->nnz == A->nnz);
    dsmm_csr_panels_free(ctx, &P, 3);
    dsmm_idx b2[] = {0, 4, 2, 6}, b3[] = {0, 2, 7}, b4[] = {1, 6};
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_row_panels(ctx, A, 3, b2, &P), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "bounds[1] = 4 > bounds[2] = 2");
    CHECK_ST(ctx, dsmm_csr_row_panels(ctx, A, 2, b3, &P), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_row_panels(ctx, A, 1, b4, &P), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_row_panels(ctx, A, 0, NULL, &P), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_col_panels(ctx, A, -1, NULL, &P), DSMM_ERR_ARG);
    CHECK(P == NULL);
    A->sorted = 0;
    CHECK_ST(ctx, dsmm_csr_col_panels(ctx, A, 2, NULL, &P), DSMM_ERR_ARG);
    dsmm_csr_panels_free(ctx, &P, 2);
    dsmm_csr_panels_free(ctx, NULL, 2);
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- compare, dense --------------------------------------------------------------------- */

static int test_compare(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 2, 3};
    dsmm_idx ci[] = {0, 2, 1};
    double va[] = {1, 2, 3}, vb[] = {1, 2, 3};
    dsmm_csr *A = NULL, *B = NULL;
    dsmm_csr_diff d;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, va, DSMM_DOUBLE, &A));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, vb, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 1 && d.row == -1 && d.col == -1);
    vb[1] = 2 + 1e-10;
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 0 && d.row == 0 && d.col == 2 && d.a == 2 && d.b == vb[1]);
    CHECK_CONTAINS(d.what, "value at (0, 2)");
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 1e-9, 0, &d));
    CHECK(d.equal == 1);
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 1e-9, &d));
    CHECK(d.equal == 1);
    dsmm_csr_destroy(&B);
    dsmm_idx ci2[] = {0, 1, 1}; // (0, 2) moved to (0, 1)
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci2, vb, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 0 && d.row == 0 && d.col == 1);
    CHECK_CONTAINS(d.what, "in B");
    dsmm_csr_destroy(&B);
    dsmm_idx rp3[] = {0, 1, 2};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp3, ci + 1, vb + 1, DSMM_DOUBLE, &B)); // nnz 2
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 0 && d.row == -1 && d.col == -1);
    CHECK_CONTAINS(d.what, "nnz differ: A has 3, B has 2");
    dsmm_csr_destroy(&B);
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 4, rp, ci, vb, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 0 && d.row == -1);
    CHECK_CONTAINS(d.what, "shapes differ");
    dsmm_csr_destroy(&B);
    // unsorted with duplicates equals its canonical form; pattern equals ones
    dsmm_idx rpu[] = {0, 3, 4};
    dsmm_idx ciu[] = {2, 0, 2, 1};
    double vu[] = {1.5, 1, 0.5, 3};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rpu, ciu, vu, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK_MSG(d.equal == 1, "%s", d.what);
    CHECK(ciu[0] == 2 && B->sorted == 0); // B itself untouched
    dsmm_csr_destroy(&B);
    double ones[] = {1, 1, 1};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, NULL, DSMM_PATTERN, &B));
    dsmm_csr_destroy(&A);
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, ones, DSMM_DOUBLE, &A));
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK(d.equal == 1);
    CHECK_ST(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, NULL), DSMM_ERR_ARG);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_dense(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 11);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int dt = 1; dt <= 2; dt++) {
                dsmm_idx m = shapes[s][0], n = shapes[s][1];
                dsmm_csr *A = NULL;
                dsmm_dense *D = NULL;
                CHECK(rand_unsorted(ctx, &g, m, n, 6, types[t], &A) == TEST_PASS);
                ref r = ref_of_csr(A);
                CHECK_OK(ctx, dsmm_csr_to_dense(ctx, A, (dsmm_type)dt, &D));
                CHECK(D->nrows == m && D->ncols == n && D->ld == n && D->owns_arrays);
                for (dsmm_idx i = 0; i < m; i++)
                    for (dsmm_idx j = 0; j < n; j++) {
                        double x = dt == DSMM_DOUBLE ? ((double *)D->val)[i * n + j]
                                                     : ((float *)D->val)[i * n + j];
                        CHECK_NEAR(x, r.v[i * n + j], 1e-5);
                    }
                ref_free(&r);
                dsmm_dense_destroy(&D);
                dsmm_csr_destroy(&A);
            }
    dsmm_dense *D = NULL;
    CHECK_OK(ctx, dsmm_dense_create(ctx, 3, 4, DSMM_FLOAT, &D));
    for (int k = 0; k < 12; k++) CHECK(((float *)D->val)[k] == 0);
    dsmm_dense_destroy(&D);
    CHECK(D == NULL);
    double buf[12];
    CHECK_OK(ctx, dsmm_dense_wrap(ctx, 2, 4, 6, buf, DSMM_DOUBLE, &D));
    CHECK(D->val == buf && D->owns_arrays == 0 && D->ld == 6);
    dsmm_dense_destroy(&D);
    CHECK_ST(ctx, dsmm_dense_wrap(ctx, 2, 4, 3, buf, DSMM_DOUBLE, &D), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_dense_wrap(ctx, 2, 4, 4, NULL, DSMM_DOUBLE, &D), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_dense_create(ctx, 2, 2, DSMM_PATTERN, &D), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_dense_create(ctx, -2, 2, DSMM_DOUBLE, &D), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_dense_create(ctx, (dsmm_idx)1 << 40, (dsmm_idx)1 << 40, DSMM_DOUBLE, &D),
             DSMM_ERR_NOMEM);
    CHECK(D == NULL);
    dsmm_dense_destroy(NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- 32-bit columns --------------------------------------------------------------------- */

// A and B hold the same matrix in the same layout: shape, type, flags, rowptr, columns (each
// read at its own width) and value bits. Widths may differ.
static int same_layout(const dsmm_csr *A, const dsmm_csr *B)
{
    CHECK_EQ_IDX(A->nrows, B->nrows);
    CHECK_EQ_IDX(A->ncols, B->ncols);
    CHECK_EQ_IDX(A->nnz, B->nnz);
    CHECK(A->type == B->type);
    CHECK_EQ_IDX(A->sorted, B->sorted);
    CHECK(memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(dsmm_idx)) == 0);
    for (dsmm_idx k = 0; k < A->nnz; k++) CHECK_EQ_IDX(dsmm_csr_col(A, k), dsmm_csr_col(B, k));
    size_t vs = A->type == DSMM_DOUBLE ? 8 : A->type == DSMM_FLOAT ? 4 : 0;
    CHECK(vs == 0 || A->nnz == 0 || memcmp(A->val, B->val, (size_t)A->nnz * vs) == 0);
    return TEST_PASS;
}

// A copy of A with 32-bit columns.
static int to32(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, out));
    CHECK_OK(ctx, dsmm_csr_set_col_width(*out, 32));
    CHECK((*out)->colidx == NULL && (*out)->colidx32 != NULL);
    return TEST_PASS;
}

static int test_set_col_width(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 12);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++) {
            dsmm_idx m = shapes[s][0], n = shapes[s][1];
            dsmm_csr *A = NULL, *B = NULL;
            CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), types[t], &A) == TEST_PASS);
            CHECK_OK(ctx, dsmm_csr_reserve(A, A->cap + 7)); // spare capacity survives
            CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, &B));
            dsmm_idx cap = A->cap;
            CHECK_OK(ctx, dsmm_csr_set_col_width(A, 32));
            CHECK(A->colidx == NULL && A->colidx32 != NULL && A->cap == cap);
            CHECK_OK(ctx, dsmm_csr_check(ctx, A));
            CHECK(same_layout(A, B) == TEST_PASS);
            int32_t *c32 = A->colidx32;
            CHECK_OK(ctx, dsmm_csr_set_col_width(A, 32)); // already 32: nothing moves
            CHECK(A->colidx32 == c32);
            CHECK_OK(ctx, dsmm_csr_set_col_width(A, 64));
            CHECK(A->colidx != NULL && A->colidx32 == NULL && A->cap == cap);
            CHECK_OK(ctx, dsmm_csr_check(ctx, A));
            CHECK(same_layout(A, B) == TEST_PASS);
            CHECK(A->nnz == 0 || memcmp(A->colidx, B->colidx, (size_t)A->nnz * 8) == 0);
            dsmm_csr_destroy(&A);
            dsmm_csr_destroy(&B);
        }
    dsmm_csr *A = NULL;
    CHECK(rand_csr(ctx, &g, 9, 11, 40, DSMM_DOUBLE, &A) == TEST_PASS);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_set_col_width(A, 16), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_set_col_width(A, 0), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_set_col_width(NULL, 32), DSMM_ERR_ARG);
    CHECK(A->colidx != NULL && A->colidx32 == NULL);
    // A failed allocation leaves A as it was, in both directions.
    for (int bits = 32; bits <= 64; bits += 32) {
        dsmm_csr *B = NULL;
        CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, &B));
        dsmm_idx *c64 = A->colidx;
        int32_t *c32 = A->colidx32;
        size_t used = dsmm_ctx_mem_in_use(ctx);
        dsmm_ctx_fail_alloc_at(ctx, 0);
        CHECK_ST(ctx, dsmm_csr_set_col_width(A, bits), DSMM_ERR_NOMEM);
        dsmm_ctx_fail_alloc_at(ctx, -1);
        dsmm_ctx_clear_error(ctx);
        CHECK(A->colidx == c64 && A->colidx32 == c32);
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), used);
        CHECK_OK(ctx, dsmm_csr_check(ctx, A));
        CHECK(same_layout(A, B) == TEST_PASS);
        CHECK_OK(ctx, dsmm_csr_set_col_width(A, bits)); // now it works
        CHECK(dsmmi_csr_col_bits(A) == bits);
        dsmm_csr_destroy(&B);
    }
    dsmm_csr_destroy(&A);
    // 1 x (INT32_MAX + 1), empty: its columns cannot be 32-bit.
    dsmm_idx wide = (dsmm_idx)INT32_MAX + 1;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 1, wide, 0, DSMM_PATTERN, &A));
    CHECK_ST(ctx, dsmm_csr_set_col_width(A, 32), DSMM_ERR_ARG);
    CHECK(A->colidx32 == NULL);
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    CHECK_OK(ctx, dsmm_csr_set_col_width(A, 64));
    dsmm_csr_destroy(&A);
    A = (dsmm_csr *)&A;
    CHECK_ST(ctx, dsmmi_csr_create_ex(ctx, 1, wide, 0, DSMM_PATTERN, 32, &A), DSMM_ERR_ARG);
    CHECK(A == NULL);
    CHECK_OK(ctx, dsmmi_csr_create_ex(ctx, 1, wide - 1, 0, DSMM_PATTERN, 32, &A));
    CHECK(A->colidx32 != NULL && A->colidx == NULL);
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    dsmm_csr_destroy(&A);
    // Borrowed arrays are not converted.
    dsmm_idx rp[] = {0, 2, 3}, ci[] = {0, 2, 1};
    double v[] = {1, 2, 3};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rp, ci, v, DSMM_DOUBLE, &A));
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_set_col_width(A, 32), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "borrowed");
    CHECK(A->colidx == ci && A->colidx32 == NULL && ci[1] == 2);
    CHECK_OK(ctx, dsmm_csr_set_col_width(A, 64)); // already 64: fine
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_check32(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 2, 2, 5};
    int32_t ci[] = {0, 3, 1, 2, 3};
    dsmm_idx ci64[] = {0, 3, 1, 2, 3};
    double v[] = {1, 2, 3, 4, 5};
    const dsmm_csr good = {.nrows = 3,
                           .ncols = 4,
                           .nnz = 5,
                           .cap = 5,
                           .rowptr = rp,
                           .colidx32 = ci,
                           .val = v,
                           .type = DSMM_DOUBLE,
                           .sorted = 1,
                           .owns_arrays = 0,
                           .ctx = ctx};
    CHECK_OK(ctx, dsmm_csr_check(ctx, &good));
    CHECK(dsmmi_csr_rows_increasing(&good));
    dsmm_csr A;
    int32_t ci1[] = {0, 3, 1, -1, 3};
    A = good, A.colidx32 = ci1;
    CHECK(expect_broken(ctx, &A, "row 2: colidx32[3] = -1 outside 0..3") == TEST_PASS);
    int32_t ci2[] = {0, 4, 1, 2, 3};
    A = good, A.colidx32 = ci2;
    CHECK(expect_broken(ctx, &A, "row 0: colidx32[1] = 4 outside 0..3") == TEST_PASS);
    int32_t ci3[] = {0, 3, 1, 3, 3};
    A = good, A.colidx32 = ci3;
    CHECK(expect_broken(ctx, &A, "row 2: colidx32[4] = 3 <= colidx32[3] = 3") == TEST_PASS);
    CHECK(!dsmmi_csr_rows_increasing(&A));
    A.sorted = 0;
    CHECK_OK(ctx, dsmm_csr_check(ctx, &A));
    A = good, A.colidx = ci64;
    CHECK(expect_broken(ctx, &A, "colidx and colidx32 are both non-NULL") == TEST_PASS);
    A = good, A.colidx32 = NULL;
    CHECK(expect_broken(ctx, &A, "colidx is NULL with nnz = 5, cap = 5") == TEST_PASS);
    dsmm_idx rp0[] = {0, 0, 0, 0};
    A = good, A.colidx32 = NULL, A.rowptr = rp0, A.nnz = 0; // no entries, but room for 5
    CHECK(expect_broken(ctx, &A, "colidx is NULL with nnz = 0, cap = 5") == TEST_PASS);
    A.cap = 0; // both NULL is fine without room
    CHECK_OK(ctx, dsmm_csr_check(ctx, &A));
    A = good, A.ncols = (dsmm_idx)INT32_MAX + 1;
    CHECK(expect_broken(ctx, &A, "32-bit columns (colidx32) with ncols = 2147483648") == TEST_PASS);
    A.colidx32 = NULL, A.colidx = ci64; // the same with 64-bit columns is fine
    CHECK_OK(ctx, dsmm_csr_check(ctx, &A));
    // dsmmi_csr_need_cols64: the message other layers rely on
    CHECK_OK(ctx, dsmmi_csr_need_cols64(ctx, &A, "spmm"));
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmmi_csr_need_cols64(ctx, &good, "spmm"), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx),
                   "spmm: 32-bit columns: call dsmm_csr_set_col_width(A, 64) first");
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int same_summary(const dsmm_summary *a, const dsmm_summary *b)
{
    CHECK(a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz);
    CHECK(a->pattern_symmetric == b->pattern_symmetric);
    CHECK(a->value_symmetric == b->value_symmetric && a->skew_symmetric == b->skew_symmetric);
    CHECK(a->diag_nnz == b->diag_nnz && a->empty_rows == b->empty_rows);
    CHECK(a->empty_cols == b->empty_cols);
    CHECK(a->row_deg_min == b->row_deg_min && a->row_deg_max == b->row_deg_max);
    CHECK(a->col_deg_min == b->col_deg_min && a->col_deg_max == b->col_deg_max);
    CHECK(a->row_deg_mean == b->row_deg_mean && a->col_deg_mean == b->col_deg_mean);
    CHECK(a->flops_aa == b->flops_aa && a->procs == b->procs);
    CHECK(a->grid_rows == b->grid_rows && a->grid_cols == b->grid_cols);
    CHECK(a->tile_nnz_max == b->tile_nnz_max && a->tile_nnz_avg == b->tile_nnz_avg);
    CHECK(a->tile_imbalance == b->tile_imbalance);
    CHECK(a->val_min == b->val_min && a->val_max == b->val_max);
    CHECK(a->has_nonfinite == b->has_nonfinite);
    return TEST_PASS;
}

// Panels of the same matrix at both widths: the 32-bit ones stay 32-bit and agree.
static int same_panels(dsmm_csr **P64, dsmm_csr **P32, int np)
{
    for (int p = 0; p < np; p++) {
        CHECK(P64[p]->colidx32 == NULL && P32[p]->colidx32 != NULL && P32[p]->colidx == NULL);
        CHECK(same_layout(P64[p], P32[p]) == TEST_PASS);
    }
    return TEST_PASS;
}

// Every operation that takes 32-bit columns gives, on a 32-bit copy of A, the result it gives
// on A itself (64-bit); results that keep the width keep it.
static int check_widths_agree(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_rng *g)
{
    dsmm_csr *W = NULL, *X = NULL, *Y = NULL;
    CHECK(to32(ctx, A, &W) == TEST_PASS);
    CHECK_OK(ctx, dsmm_csr_check(ctx, W));
    CHECK(dsmmi_csr_rows_increasing(W) == dsmmi_csr_rows_increasing(A));
    // copy keeps the width (and may change the value type)
    for (int u = 0; u < 3; u++) {
        CHECK_OK(ctx, dsmm_csr_copy(ctx, W, types[u], &X));
        CHECK_OK(ctx, dsmm_csr_copy(ctx, A, types[u], &Y));
        CHECK(X->colidx == NULL && X->colidx32 != NULL && X->colidx32 != W->colidx32);
        CHECK(same_layout(X, Y) == TEST_PASS);
        dsmm_csr_destroy(&X);
        dsmm_csr_destroy(&Y);
    }
    // compare, both ways and mixed; a changed value is found at the same place
    dsmm_csr_diff d, d64;
    CHECK_OK(ctx, dsmm_csr_compare(ctx, W, A, 0, 0, &d));
    CHECK_MSG(d.equal, "%s", d.what);
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, W, 0, 0, &d));
    CHECK_MSG(d.equal, "%s", d.what);
    CHECK_OK(ctx, dsmm_csr_compare(ctx, W, W, 0, 0, &d));
    CHECK(d.equal);
    if (A->nnz > 0) {
        CHECK_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &X));
        dsmm_idx k = rnd(g, X->nnz);
        ((double *)X->val)[k] += 100;
        CHECK_OK(ctx, dsmm_csr_compare(ctx, W, X, 0, 0, &d));
        CHECK_OK(ctx, dsmm_csr_compare(ctx, A, X, 0, 0, &d64));
        CHECK(!d.equal && !d64.equal && d.row == d64.row && d.col == d64.col);
        CHECK(strcmp(d.what, d64.what) == 0);
        dsmm_csr_destroy(&X);
    }
    // reserve grows the 32-bit array
    CHECK_OK(ctx, dsmm_csr_copy(ctx, W, W->type, &X));
    CHECK_OK(ctx, dsmm_csr_reserve(X, X->cap + 50));
    CHECK(X->colidx == NULL && X->colidx32 != NULL && X->cap == W->cap + 50);
    CHECK_OK(ctx, dsmm_csr_check(ctx, X));
    CHECK(same_layout(X, A) == TEST_PASS);
    dsmm_csr_destroy(&X);
    // sort_inplace (all policies) keeps the width and agrees
    const dsmm_dup dups[] = {DSMM_DUP_SUM, DSMM_DUP_MAX, DSMM_DUP_LAST, DSMM_DUP_ERROR};
    for (int u = 0; u < 4; u++) {
        CHECK_OK(ctx, dsmm_csr_copy(ctx, W, W->type, &X));
        CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, &Y));
        dsmm_status sx = dsmm_csr_sort_inplace(ctx, X, dups[u]);
        dsmm_status sy = dsmm_csr_sort_inplace(ctx, Y, dups[u]);
        dsmm_ctx_clear_error(ctx);
        CHECK(sx == sy && (sx == DSMM_OK || dups[u] == DSMM_DUP_ERROR));
        CHECK(X->colidx == NULL && X->colidx32 != NULL);
        CHECK(same_layout(X, Y) == TEST_PASS);
        if (sx == DSMM_OK) CHECK_OK(ctx, dsmm_csr_check(ctx, X));
        dsmm_csr_destroy(&X);
        dsmm_csr_destroy(&Y);
    }
    // transpose: 64-bit result, identical to the 64-bit one
    CHECK_OK(ctx, dsmm_csr_transpose(ctx, W, &X));
    CHECK_OK(ctx, dsmm_csr_transpose(ctx, A, &Y));
    CHECK(X->colidx32 == NULL && X->colidx != NULL);
    CHECK(same_layout(X, Y) == TEST_PASS);
    dsmm_csr_destroy(&X);
    dsmm_csr_destroy(&Y);
    // permute (rows only keeps rows; with columns re-sorts) keeps the width
    dsmm_idx *p = malloc(sizeof(dsmm_idx) * (size_t)(A->nrows + 1));
    dsmm_idx *q = malloc(sizeof(dsmm_idx) * (size_t)(A->ncols + 1));
    CHECK(p != NULL && q != NULL);
    rand_perm(g, A->nrows, p);
    rand_perm(g, A->ncols, q);
    for (int mode = 0; mode < 4; mode++) {
        const dsmm_idx *pp = mode & 1 ? p : NULL, *qq = mode & 2 ? q : NULL;
        CHECK_OK(ctx, dsmm_csr_permute(ctx, W, pp, qq, &X));
        CHECK_OK(ctx, dsmm_csr_permute(ctx, A, pp, qq, &Y));
        CHECK(X->colidx == NULL && X->colidx32 != NULL);
        CHECK_OK(ctx, dsmm_csr_check(ctx, X));
        CHECK(same_layout(X, Y) == TEST_PASS);
        dsmm_csr_destroy(&X);
        dsmm_csr_destroy(&Y);
    }
    free(p);
    free(q);
    // extract, row and column panels keep the width
    dsmm_idx r0 = rnd(g, A->nrows + 1), r1 = r0 + rnd(g, A->nrows - r0 + 1);
    dsmm_idx c0 = rnd(g, A->ncols + 1), c1 = c0 + rnd(g, A->ncols - c0 + 1);
    CHECK_OK(ctx, dsmm_csr_extract(ctx, W, r0, r1, c0, c1, &X));
    CHECK_OK(ctx, dsmm_csr_extract(ctx, A, r0, r1, c0, c1, &Y));
    CHECK(X->colidx == NULL);
    CHECK_OK(ctx, dsmm_csr_check(ctx, X));
    CHECK(same_layout(X, Y) == TEST_PASS);
    dsmm_csr_destroy(&X);
    dsmm_csr_destroy(&Y);
    dsmm_csr **P64 = NULL, **P32 = NULL;
    CHECK_OK(ctx, dsmm_csr_row_panels(ctx, W, 3, NULL, &P32));
    CHECK_OK(ctx, dsmm_csr_row_panels(ctx, A, 3, NULL, &P64));
    CHECK(same_panels(P64, P32, 3) == TEST_PASS);
    dsmm_csr_panels_free(ctx, &P32, 3);
    dsmm_csr_panels_free(ctx, &P64, 3);
    if (A->sorted) {
        CHECK_OK(ctx, dsmm_csr_col_panels(ctx, W, 3, NULL, &P32));
        CHECK_OK(ctx, dsmm_csr_col_panels(ctx, A, 3, NULL, &P64));
        CHECK(same_panels(P64, P32, 3) == TEST_PASS);
        dsmm_csr_panels_free(ctx, &P32, 3);
        dsmm_csr_panels_free(ctx, &P64, 3);
    }
    // to_dense, to_coo, summary
    for (int dt = 1; dt <= 2; dt++) {
        dsmm_dense *D32 = NULL, *D64 = NULL;
        CHECK_OK(ctx, dsmm_csr_to_dense(ctx, W, (dsmm_type)dt, &D32));
        CHECK_OK(ctx, dsmm_csr_to_dense(ctx, A, (dsmm_type)dt, &D64));
        size_t bytes = (size_t)(A->nrows * A->ncols) * (dt == DSMM_DOUBLE ? 8 : 4);
        CHECK(bytes == 0 || memcmp(D32->val, D64->val, bytes) == 0);
        dsmm_dense_destroy(&D32);
        dsmm_dense_destroy(&D64);
    }
    dsmm_coo *T32 = NULL, *T64 = NULL;
    CHECK_OK(ctx, dsmm_csr_to_coo(ctx, W, &T32));
    CHECK_OK(ctx, dsmm_csr_to_coo(ctx, A, &T64));
    CHECK_EQ_IDX(T32->nnz, T64->nnz);
    size_t vs = A->type == DSMM_DOUBLE ? 8 : A->type == DSMM_FLOAT ? 4 : 0;
    if (A->nnz > 0) {
        CHECK(memcmp(T32->row, T64->row, (size_t)A->nnz * 8) == 0);
        CHECK(memcmp(T32->col, T64->col, (size_t)A->nnz * 8) == 0);
        CHECK(vs == 0 || memcmp(T32->val, T64->val, (size_t)A->nnz * vs) == 0);
    }
    dsmm_coo_destroy(&T32);
    dsmm_coo_destroy(&T64);
    for (int procs = 1; procs <= 4; procs += 3) {
        dsmm_summary s32, s64;
        CHECK_OK(ctx, dsmm_csr_summary(ctx, W, procs, &s32));
        CHECK_OK(ctx, dsmm_csr_summary(ctx, A, procs, &s64));
        CHECK(same_summary(&s32, &s64) == TEST_PASS);
    }
    dsmm_csr_destroy(&W);
    return TEST_PASS;
}

static int test_width32_agrees(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 13);
    for (size_t s = 0; s < NSHAPES; s++)
        for (int t = 0; t < 3; t++)
            for (int unsorted = 0; unsorted < 2; unsorted++) {
                dsmm_idx m = shapes[s][0], n = shapes[s][1];
                dsmm_csr *A = NULL;
                if (unsorted)
                    CHECK(rand_unsorted(ctx, &g, m, n, s % 2 ? 70 : 5, types[t], &A) == TEST_PASS);
                else
                    CHECK(rand_csr(ctx, &g, m, n, 3 * (m + n), types[t], &A) == TEST_PASS);
                CHECK_MSG(check_widths_agree(ctx, A, &g) == TEST_PASS, "shape %lld x %lld, %s%s",
                          (long long)m, (long long)n, dsmm_type_name(types[t]),
                          unsorted ? ", unsorted" : "");
                dsmm_csr_destroy(&A);
            }
    // a symmetric matrix: summary sees the symmetry through 32-bit columns too
    dsmm_idx rp[] = {0, 2, 4, 5}, ci[] = {0, 1, 0, 2, 1};
    double v[] = {1, 2, 2, 3, 3};
    dsmm_csr *A = NULL, *W = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 3, 3, rp, ci, v, DSMM_DOUBLE, &A));
    CHECK(to32(ctx, A, &W) == TEST_PASS);
    dsmm_summary sw;
    CHECK_OK(ctx, dsmm_csr_summary(ctx, W, 1, &sw));
    CHECK(sw.pattern_symmetric && sw.value_symmetric && !sw.skew_symmetric && sw.diag_nnz == 1);
    CHECK(check_widths_agree(ctx, A, &g) == TEST_PASS);
    dsmm_csr_destroy(&W);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- allocation failures ---------------------------------------------------------------- */

// Runs op with the k-th allocation failing for k = 0, 1, ... until it succeeds: every failure
// must be DSMM_ERR_NOMEM, leave *out NULL and leak nothing.
typedef dsmm_status (*op_fn)(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out);

static dsmm_status op_transpose(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    return dsmm_csr_transpose(ctx, A, out);
}

static dsmm_status op_permute(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    dsmm_idx p[] = {2, 0, 1, 3}, q[] = {4, 3, 2, 1, 0};
    return dsmm_csr_permute(ctx, A, p, q, out);
}

static dsmm_status op_coo(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    dsmm_coo *T = NULL;
    *out = NULL;
    dsmm_status st = dsmm_csr_to_coo(ctx, A, &T);
    if (st == DSMM_OK) st = dsmmi_coo_to_csr(ctx, T, DSMM_DUP_SUM, DSMM_FLOAT, out, NULL, NULL);
    dsmm_coo_destroy(&T);
    return st;
}

static dsmm_status op_sort(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    dsmm_csr *B = NULL;
    dsmm_status st = dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &B);
    if (st == DSMM_OK) {
        B->sorted = 0;
        if (B->colidx32) // an unsorted row with a duplicate (columns 2, 2, 4)
            B->colidx32[0] = B->colidx32[1];
        else
            B->colidx[0] = B->colidx[1];
        st = dsmm_csr_sort_inplace(ctx, B, DSMM_DUP_SUM);
    }
    if (st == DSMM_OK) {
        *out = B;
        return st;
    }
    dsmm_csr_destroy(&B);
    *out = NULL;
    return st;
}

static dsmm_status op_panels(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    dsmm_csr **P = NULL, **R = NULL;
    *out = NULL;
    dsmm_status st = dsmm_csr_col_panels(ctx, A, 3, NULL, &P);
    if (st == DSMM_OK) st = dsmm_csr_row_panels(ctx, A, 3, NULL, &R);
    if (st == DSMM_OK) st = dsmm_csr_extract(ctx, A, 1, 3, 1, 4, out);
    if (st == DSMM_OK) st = dsmm_csr_compare(ctx, A, A, 0, 0, &(dsmm_csr_diff){0});
    if (st == DSMM_OK) {
        dsmm_dense *D = NULL;
        st = dsmm_csr_to_dense(ctx, A, DSMM_FLOAT, &D);
        dsmm_dense_destroy(&D);
    }
    if (st != DSMM_OK) dsmm_csr_destroy(out);
    dsmm_csr_panels_free(ctx, &P, 3);
    dsmm_csr_panels_free(ctx, &R, 3);
    return st;
}

static int test_oom(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 3, 3, 5, 6};
    dsmm_idx ci[] = {1, 2, 4, 0, 3, 2};
    double v[] = {1, 2, 3, 4, 5, 6};
    dsmm_csr *A = NULL, *W = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 4, 5, rp, ci, v, DSMM_DOUBLE, &A));
    CHECK(to32(ctx, A, &W) == TEST_PASS); // the same operations on 32-bit columns
    size_t base = dsmm_ctx_mem_in_use(ctx);
    const op_fn ops[] = {op_transpose, op_permute, op_coo, op_sort, op_panels};
    for (size_t o = 0; o < 2 * (sizeof ops / sizeof ops[0]); o++) {
        const dsmm_csr *in = o % 2 ? W : A;
        for (long k = 0;; k++) {
            CHECK(k < 1000);
            dsmm_csr *out = (dsmm_csr *)&out;
            dsmm_ctx_clear_error(ctx);
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = ops[o / 2](ctx, in, &out);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            if (st == DSMM_OK) {
                CHECK(out != NULL);
                dsmm_csr_destroy(&out);
                CHECK_MSG(k > 0, "op %zu made no allocation", o);
                break;
            }
            CHECK_MSG(st == DSMM_ERR_NOMEM, "op %zu, k %ld: %s", o, k, dsmm_ctx_last_error(ctx));
            CHECK(out == NULL);
            CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
        }
    }
    dsmm_csr_destroy(&W);
    dsmm_csr_destroy(&A);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_create),
        TEST(test_wrap),
        TEST(test_reserve_copy),
        TEST(test_check),
        TEST(test_coo_push),
        TEST(test_coo_to_csr_random),
        TEST(test_coo_to_csr_long_rows),
        TEST(test_coo_to_csr_dups),
        TEST(test_coo_to_csr_threads),
        TEST(test_csr_to_coo),
        TEST(test_sort_inplace),
        TEST(test_transpose),
        TEST(test_permute),
        TEST(test_extract),
        TEST(test_panels),
        TEST(test_compare),
        TEST(test_dense),
        TEST(test_set_col_width),
        TEST(test_check32),
        TEST(test_width32_agrees),
        TEST(test_oom),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
