// tests/io/test_gen.c: the generators (src/io/gen_*.c): the same matrix for every thread
// count, seeds that matter, sizes within statistical bounds, symmetry, self loops, planted
// blocks, and parameter checks.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef enum { GEN_ER, GEN_RMAT, GEN_PLANTED } gen_kind;

static dsmm_status gen(dsmm_ctx *ctx, gen_kind kind, const dsmm_gen_params *p, dsmm_csr **A)
{
    if (kind == GEN_ER) return dsmm_gen_er(ctx, p, A);
    if (kind == GEN_RMAT) return dsmm_gen_rmat(ctx, p, A);
    return dsmm_gen_planted(ctx, p, A, NULL);
}

static int equal(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B)
{
    dsmm_csr_diff d;
    if (dsmm_csr_compare(ctx, A, B, 0, 0, &d) != DSMM_OK) return 0;
    return d.equal;
}

// Checks the invariants every generated matrix has: valid, square, sorted, the self-loop
// rule, values in (0, 1] unless duplicates were summed, symmetric when asked.
static int check_common(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_gen_params *p, int summed)
{
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    CHECK(A->nrows == A->ncols && A->sorted);
    CHECK(A->type == p->type);
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (!p->self_loops) CHECK_MSG(A->colidx[k] != i, "self loop at row %lld", (long long)i);
            double v = dsmm_csr_value(A, k);
            CHECK(v > 0 && (summed || v <= 1));
        }
    }
    if (p->symmetric) {
        dsmm_csr *T = NULL;
        CHECK_OK(ctx, dsmm_csr_transpose(ctx, A, &T));
        CHECK(equal(ctx, A, T));
        dsmm_csr_destroy(&T);
    }
    return TEST_PASS;
}

// Same seed: identical for 1, 2 and 3 threads; another seed: different.
static int test_deterministic(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    for (int kind = GEN_ER; kind <= GEN_PLANTED; kind++) {
        for (int variant = 0; variant < 4; variant++) {
            dsmm_gen_params p;
            dsmm_gen_params_init(&p);
            p.seed = seed;
            p.symmetric = variant & 1;
            p.type = variant & 2 ? DSMM_DOUBLE : DSMM_PATTERN;
            p.self_loops = variant == 3;
            p.n = 3000;
            p.scale = 11;
            p.nblocks = 7;
            p.p_in = 0.02;
            p.p_out = 0.001;
            dsmm_csr *A[3] = {NULL, NULL, NULL}, *B = NULL;
            for (int t = 0; t < 3; t++) {
                CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t + 1));
                CHECK_OK(ctx, gen(ctx, (gen_kind)kind, &p, &A[t]));
            }
            if (check_common(ctx, A[0], &p, kind == GEN_RMAT) != TEST_PASS) return TEST_FAIL;
            CHECK(A[0]->nnz > 0);
            CHECK_MSG(equal(ctx, A[0], A[1]) && equal(ctx, A[0], A[2]),
                      "kind %d variant %d differs across thread counts", kind, variant);
            p.seed = seed + 1;
            CHECK_OK(ctx, gen(ctx, (gen_kind)kind, &p, &B));
            CHECK_MSG(!equal(ctx, A[0], B), "kind %d variant %d: seeds give the same matrix", kind,
                      variant);
            for (int t = 0; t < 3; t++) dsmm_csr_destroy(&A[t]);
            dsmm_csr_destroy(&B);
        }
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// ER: nnz within 5 sigma of its mean n (n - 1) p, directed and symmetric.
static int test_er_stats(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.seed = test_seed();
    p.n = 4000;
    p.avg_degree = 10;
    for (int sym = 0; sym < 2; sym++) {
        p.symmetric = sym;
        dsmm_csr *A = NULL;
        CHECK_OK(ctx, dsmm_gen_er(ctx, &p, &A));
        double prob = p.avg_degree / (double)p.n;
        double mean = (double)p.n * (double)(p.n - 1) * prob;
        // symmetric: pairs are Bernoulli, each counted twice
        double sd = sym ? 2 * sqrt(mean / 2 * (1 - prob)) : sqrt(mean * (1 - prob));
        CHECK_MSG(fabs((double)A->nnz - mean) < 5 * sd, "nnz %lld, mean %.0f, sd %.1f",
                  (long long)A->nnz, mean, sd);
        if (check_common(ctx, A, &p, 0) != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&A);
    }
    // With self loops the diagonal is there about n p times.
    p.symmetric = 0;
    p.self_loops = 1;
    p.avg_degree = 400;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_gen_er(ctx, &p, &A));
    dsmm_idx diag = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) diag += A->colidx[k] == i;
    CHECK_MSG(fabs((double)diag - 400) < 5 * 20, "diagonal %lld, expected ~400", (long long)diag);
    dsmm_csr_destroy(&A);
    // Corner cases: p = 1 gives the complete graph, p = 0 none, n = 0 an empty 0 x 0.
    p.n = 50;
    p.avg_degree = 50;
    p.self_loops = 0;
    CHECK_OK(ctx, dsmm_gen_er(ctx, &p, &A));
    CHECK_EQ_IDX(A->nnz, 50 * 49);
    dsmm_csr_destroy(&A);
    p.avg_degree = 0;
    CHECK_OK(ctx, dsmm_gen_er(ctx, &p, &A));
    CHECK_EQ_IDX(A->nnz, 0);
    dsmm_csr_destroy(&A);
    p.n = 0;
    CHECK_OK(ctx, dsmm_gen_er(ctx, &p, &A));
    CHECK(A->nrows == 0 && A->nnz == 0);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// R-MAT, scale 12: the weight in each top-level quadrant is a, b, c, d of the total (values
// are independent of position, so weight fractions estimate edge fractions without the
// bias of merged duplicates).
static int test_rmat_stats(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.seed = test_seed();
    p.scale = 12;
    p.type = DSMM_DOUBLE;
    p.self_loops = 1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_gen_rmat(ctx, &p, &A));
    CHECK_EQ_IDX(A->nrows, 4096);
    dsmm_idx half = 2048;
    double q[4] = {0, 0, 0, 0}, total = 0, sq = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            double v = dsmm_csr_value(A, k);
            q[(i >= half) * 2 + (A->colidx[k] >= half)] += v;
            total += v;
            sq += v * v;
        }
    }
    // m values uniform in (0, 1], but a repeated pair repeats its value (it is a function of
    // the pair) and the merge adds them: a pair drawn t times stores t v, so the total's
    // variance is sum t^2 / 12, which sum (t v)^2 / 4 estimates (E v^2 = 1/3); without
    // repeats that is m / 12. Five standard deviations.
    double m = 16.0 * 4096, sd = sqrt(sq / 4);
    CHECK_MSG(sd >= sqrt(m / 12) * 0.9, "sum of squares %.1f below the no-repeat value", sq);
    CHECK_MSG(fabs(total - m / 2) < 5 * sd, "total weight %.1f, expected %.1f (sd %.1f)", total,
              m / 2, sd);
    double want[4] = {p.a, p.b, p.c, p.d};
    for (int k = 0; k < 4; k++)
        CHECK_MSG(fabs(q[k] / total - want[k]) < 0.01, "quadrant %d: %.4f, expected %.2f", k,
                  q[k] / total, want[k]);
    dsmm_csr_destroy(&A);

    // pattern: at most the edge count, merged duplicates; without self loops no diagonal
    p.type = DSMM_PATTERN;
    p.self_loops = 0;
    CHECK_OK(ctx, dsmm_gen_rmat(ctx, &p, &A));
    CHECK(A->nnz > m / 2 && A->nnz <= (dsmm_idx)m);
    if (check_common(ctx, A, &p, 0) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    p.symmetric = 1;
    CHECK_OK(ctx, dsmm_gen_rmat(ctx, &p, &A));
    CHECK(A->nnz > m / 2 && A->nnz <= (dsmm_idx)(2 * m));
    if (check_common(ctx, A, &p, 0) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    // scale 0: a 1 x 1 matrix, empty without self loops
    p.scale = 0;
    CHECK_OK(ctx, dsmm_gen_rmat(ctx, &p, &A));
    CHECK(A->nrows == 1 && A->nnz == 0);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_planted(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.seed = test_seed();
    p.n = 2003;
    p.nblocks = 4;
    p.p_in = 0.05;
    p.p_out = 0.002;
    p.symmetric = 1;
    dsmm_csr *A = NULL;
    dsmm_idx *truth = NULL;
    CHECK_OK(ctx, dsmm_gen_planted(ctx, &p, &A, &truth));
    if (check_common(ctx, A, &p, 0) != TEST_PASS) return TEST_FAIL;
    // blocks: contiguous, sizes 501, 501, 501, 500
    dsmm_idx size[4] = {0, 0, 0, 0};
    for (dsmm_idx i = 0; i < p.n; i++) {
        CHECK(truth[i] >= 0 && truth[i] < 4);
        CHECK(i == 0 || truth[i] == truth[i - 1] || truth[i] == truth[i - 1] + 1);
        size[truth[i]]++;
    }
    CHECK(size[0] == 501 && size[1] == 501 && size[2] == 501 && size[3] == 500);
    // densities near p_in and p_out
    double in = 0, out = 0, in_pairs = 0, out_pairs = 0;
    for (int b = 0; b < 4; b++) in_pairs += (double)size[b] * (double)(size[b] - 1);
    out_pairs = (double)p.n * (double)(p.n - 1) - in_pairs;
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            *(truth[i] == truth[A->colidx[k]] ? &in : &out) += 1;
    CHECK_MSG(fabs(in / in_pairs - p.p_in) < 0.1 * p.p_in, "in-block density %g", in / in_pairs);
    CHECK_MSG(fabs(out / out_pairs - p.p_out) < 0.15 * p.p_out, "out-block density %g",
              out / out_pairs);
    dsmm_csr_destroy(&A);
    truth = dsmm_free(ctx, truth);

    // more blocks than vertices: blocks of one and of none; truth may be NULL
    p.n = 5;
    p.nblocks = 8;
    p.symmetric = 0;
    CHECK_OK(ctx, dsmm_gen_planted(ctx, &p, &A, &truth));
    for (dsmm_idx i = 0; i < 5; i++) CHECK_EQ_IDX(truth[i], i);
    dsmm_csr_destroy(&A);
    truth = dsmm_free(ctx, truth);
    p.n = 0;
    CHECK_OK(ctx, dsmm_gen_planted(ctx, &p, &A, NULL));
    CHECK(A->nrows == 0);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_bad_params(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_gen_params p;
    dsmm_csr *A = NULL;
    dsmm_idx *truth = NULL;
#define BAD(field_change, call)                                                                    \
    do {                                                                                           \
        dsmm_gen_params_init(&p);                                                                  \
        field_change;                                                                              \
        CHECK_ST(ctx, call, DSMM_ERR_ARG);                                                         \
        CHECK(A == NULL);                                                                          \
        dsmm_ctx_clear_error(ctx);                                                                 \
    } while (0)
    BAD(p.scale = -1, dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.scale = 41, dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.a = 0.6, dsmm_gen_rmat(ctx, &p, &A));
    BAD((p.a = 1.2, p.d = -0.15), dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.edge_factor = -1, dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.edge_factor = NAN, dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.type = DSMM_FLOAT, dsmm_gen_rmat(ctx, &p, &A));
    BAD(p.n = -1, dsmm_gen_er(ctx, &p, &A));
    BAD(p.avg_degree = -1, dsmm_gen_er(ctx, &p, &A));
    BAD(p.avg_degree = 2000, dsmm_gen_er(ctx, &p, &A));
    BAD(p.type = (dsmm_type)7, dsmm_gen_er(ctx, &p, &A));
    BAD(p.nblocks = 0, dsmm_gen_planted(ctx, &p, &A, &truth));
    BAD(p.p_in = 1.5, dsmm_gen_planted(ctx, &p, &A, &truth));
    BAD(p.p_out = -0.1, dsmm_gen_planted(ctx, &p, &A, &truth));
    BAD(p.n = -3, dsmm_gen_planted(ctx, &p, &A, &truth));
    CHECK(truth == NULL);
    CHECK_ST(ctx, dsmm_gen_er(ctx, NULL, &A), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_gen_rmat(ctx, &p, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    // a budget too small for the result: NOMEM, nothing leaked
    dsmm_gen_params_init(&p);
    p.scale = 16;
    dsmm_ctx_set_mem_budget(ctx, 1 << 20);
    CHECK_ST(ctx, dsmm_gen_rmat(ctx, &p, &A), DSMM_ERR_NOMEM);
    CHECK(A == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every allocation failure of each generator: NOMEM, NULL outputs, no leak.
static int test_oom(void)
{
    for (int kind = GEN_ER; kind <= GEN_PLANTED; kind++) {
        for (long k = 0;; k++) {
            dsmm_ctx *ctx = test_ctx();
            dsmm_gen_params p;
            dsmm_gen_params_init(&p);
            p.n = 200;
            p.scale = 7;
            p.symmetric = 1;
            p.type = DSMM_DOUBLE;
            dsmm_csr *A = NULL;
            dsmm_idx *truth = NULL;
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = kind == GEN_PLANTED ? dsmm_gen_planted(ctx, &p, &A, &truth)
                                                 : gen(ctx, (gen_kind)kind, &p, &A);
            if (st == DSMM_OK) {
                dsmm_csr_destroy(&A);
                dsmm_free(ctx, truth);
                CHECK_NO_LEAK(ctx);
                break;
            }
            CHECK_MSG(st == DSMM_ERR_NOMEM, "kind %d k %ld: %s", kind, k, dsmm_ctx_last_error(ctx));
            CHECK(A == NULL && truth == NULL);
            CHECK_NO_LEAK(ctx);
            CHECK(k < 100);
        }
    }
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {TEST(test_deterministic), TEST(test_er_stats),
                                      TEST(test_rmat_stats),    TEST(test_planted),
                                      TEST(test_bad_params),    TEST(test_oom)};
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
