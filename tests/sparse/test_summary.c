// tests/sparse/test_summary.c: dsmm_csr_summary and dsmm_grid_dims against hand-counted answers and
// naive references (dense symmetry check, per-entry flops, tile loops).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

// A CSR over caller arrays, built directly (the struct is transparent), so this test needs nothing
// from the sparse layer but the summary itself.
static dsmm_csr make(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, dsmm_idx *rowptr, dsmm_idx *colidx,
                     double *val, int sorted)
{
    dsmm_csr A;
    memset(&A, 0, sizeof A);
    A.nrows = m;
    A.ncols = n;
    A.nnz = A.cap = rowptr[m];
    A.rowptr = rowptr;
    A.colidx = colidx;
    A.val = val;
    A.type = val ? DSMM_DOUBLE : DSMM_PATTERN;
    A.sorted = sorted;
    A.ctx = ctx;
    return A;
}

static int test_grid_dims(void)
{
    static const int want[][3] = {{1, 1, 1},  {2, 1, 2},  {3, 1, 3},  {4, 2, 2},
                                  {6, 2, 3},  {7, 1, 7},  {8, 2, 4},  {9, 3, 3},
                                  {12, 3, 4}, {16, 4, 4}, {30, 5, 6}, {97, 1, 97}};
    for (size_t t = 0; t < sizeof want / sizeof want[0]; t++) {
        int pr = 0, pc = 0;
        CHECK(dsmm_grid_dims(want[t][0], &pr, &pc) == DSMM_OK);
        CHECK_EQ_IDX(pr, want[t][1]);
        CHECK_EQ_IDX(pc, want[t][2]);
    }
    int pr, pc;
    CHECK(dsmm_grid_dims(0, &pr, &pc) == DSMM_ERR_ARG);
    CHECK(dsmm_grid_dims(-3, &pr, &pc) == DSMM_ERR_ARG);
    return TEST_PASS;
}

/* A 4 x 5 hand-made matrix:
 *   row 0: (0,0)=2 (0,3)=-1
 *   row 1: empty
 *   row 2: (2,0)=5 (2,1)=0.5 (2,3)=7
 *   row 3: (3,3)=1
 * columns: 0:2 1:1 2:0 3:3 4:0 -> empty cols 2 */
static int test_handmade(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx rp[] = {0, 2, 2, 5, 6};
    dsmm_idx ci[] = {0, 3, 0, 1, 3, 3};
    double v[] = {2, -1, 5, 0.5, 7, 1};
    dsmm_csr A = make(ctx, 4, 5, rp, ci, v, 1);
    dsmm_summary s;
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &A, 4, &s));
    CHECK_EQ_IDX(s.nrows, 4);
    CHECK_EQ_IDX(s.ncols, 5);
    CHECK_EQ_IDX(s.nnz, 6);
    CHECK_EQ_IDX(s.diag_nnz, 2);
    CHECK_EQ_IDX(s.empty_rows, 1);
    CHECK_EQ_IDX(s.empty_cols, 2);
    CHECK_EQ_IDX(s.row_deg_min, 0);
    CHECK_EQ_IDX(s.row_deg_max, 3);
    CHECK_EQ_IDX(s.col_deg_min, 0);
    CHECK_EQ_IDX(s.col_deg_max, 3);
    CHECK_NEAR(s.row_deg_mean, 1.5, 1e-15);
    CHECK_NEAR(s.col_deg_mean, 1.2, 1e-15);
    CHECK_NEAR(s.flops_aa, -1, 0); // not square
    CHECK(!s.pattern_symmetric && !s.value_symmetric && !s.skew_symmetric);
    CHECK_NEAR(s.val_min, -1, 0);
    CHECK_NEAR(s.val_max, 7, 0);
    CHECK(!s.has_nonfinite);
    // grid 2 x 2: rows {0,1} {2,3}; cols {0,1,2} {3,4}
    // tiles: (0,0): (0,0) -> 1; (0,1): (0,3) -> 1; (1,0): (2,0),(2,1) -> 2; (1,1): (2,3),(3,3) -> 2
    CHECK_EQ_IDX(s.procs, 4);
    CHECK_EQ_IDX(s.grid_rows, 2);
    CHECK_EQ_IDX(s.grid_cols, 2);
    CHECK_EQ_IDX(s.tile_nnz_max, 2);
    CHECK_NEAR(s.tile_nnz_avg, 1.5, 1e-15);
    CHECK_NEAR(s.tile_imbalance, 2.0 / 1.5, 1e-15);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Square: flops and the three symmetry flags, sorted and unsorted rows.
static int test_symmetry_kinds(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_summary s;
    // symmetric, values: [[1,2,0],[2,0,3],[0,3,4]]; rows unsorted
    dsmm_idx rp[] = {0, 2, 4, 6};
    dsmm_idx ci[] = {1, 0, 2, 0, 2, 1};
    double v[] = {2, 1, 3, 2, 4, 3};
    dsmm_csr A = make(ctx, 3, 3, rp, ci, v, 0);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &A, 1, &s));
    CHECK(s.pattern_symmetric && s.value_symmetric && !s.skew_symmetric);
    CHECK_EQ_IDX(s.diag_nnz, 2);
    // flops: col counts 2,2,2 and row counts 2,2,2 -> 12
    CHECK_NEAR(s.flops_aa, 12, 0);
    CHECK_EQ_IDX(s.tile_nnz_max, 6);
    CHECK_NEAR(s.tile_imbalance, 1.0, 0);

    // same pattern, one value changed: pattern symmetric only
    v[5] = 9; // (2,1) = 9 but (1,2) = 3
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &A, 2, &s));
    CHECK(s.pattern_symmetric && !s.value_symmetric && !s.skew_symmetric);

    // skew: [[0,2],[-2,0]] (no stored diagonal)
    dsmm_idx rp2[] = {0, 1, 2};
    dsmm_idx ci2[] = {1, 0};
    double v2[] = {2, -2};
    dsmm_csr K = make(ctx, 2, 2, rp2, ci2, v2, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &K, 3, &s));
    CHECK(s.pattern_symmetric && !s.value_symmetric && s.skew_symmetric);
    CHECK_EQ_IDX(s.grid_rows, 1);
    CHECK_EQ_IDX(s.grid_cols, 3);
    // cols split into 3 ranges over 2 columns: {0} {1} {} -> tiles 1,1,0
    CHECK_EQ_IDX(s.tile_nnz_max, 1);
    CHECK_NEAR(s.tile_imbalance, 1.5, 1e-15);

    // pattern, not symmetric: (0,1) only
    dsmm_idx rp3[] = {0, 1, 1};
    dsmm_idx ci3[] = {1};
    dsmm_csr P = make(ctx, 2, 2, rp3, ci3, NULL, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &P, 1, &s));
    CHECK(!s.pattern_symmetric && !s.value_symmetric && !s.skew_symmetric);
    CHECK_NEAR(s.val_min, 1, 0);
    CHECK_NEAR(s.val_max, 1, 0);
    CHECK_NEAR(s.flops_aa, 0, 0); // col 1 has 1 entry, row 1 has none; col 0 none
    CHECK_EQ_IDX(s.empty_rows, 1);
    CHECK_EQ_IDX(s.empty_cols, 1);

    // a diagonal entry that is nonzero breaks skew symmetry but not symmetry
    dsmm_idx rp4[] = {0, 1};
    dsmm_idx ci4[] = {0};
    double v4[] = {3};
    dsmm_csr D = make(ctx, 1, 1, rp4, ci4, v4, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &D, 1, &s));
    CHECK(s.pattern_symmetric && s.value_symmetric && !s.skew_symmetric);
    CHECK_NEAR(s.flops_aa, 1, 0);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_empty_and_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_summary s;
    dsmm_idx rp0[] = {0};
    dsmm_csr E = make(ctx, 0, 0, rp0, NULL, NULL, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &E, 4, &s));
    CHECK_EQ_IDX(s.nnz, 0);
    CHECK_EQ_IDX(s.row_deg_min, 0);
    CHECK_EQ_IDX(s.col_deg_max, 0);
    CHECK_NEAR(s.flops_aa, 0, 0);
    CHECK_NEAR(s.tile_imbalance, 1.0, 0);
    CHECK(s.pattern_symmetric && s.value_symmetric && s.skew_symmetric);

    dsmm_idx rp[] = {0, 0, 0, 0};
    double dummy[1] = {0};
    dsmm_csr Z = make(ctx, 3, 2, rp, NULL, dummy, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &Z, 5, &s));
    CHECK_EQ_IDX(s.empty_rows, 3);
    CHECK_EQ_IDX(s.empty_cols, 2);
    CHECK_NEAR(s.flops_aa, -1, 0);
    CHECK_NEAR(s.val_min, 0, 0);
    CHECK_NEAR(s.val_max, 0, 0);
    CHECK_EQ_IDX(s.grid_rows, 1);
    CHECK_EQ_IDX(s.grid_cols, 5);

    // nonfinite values are flagged and left out of the range
    dsmm_idx rp2[] = {0, 3};
    dsmm_idx ci2[] = {0, 1, 2};
    double v2[] = {-2, NAN, INFINITY};
    dsmm_csr N = make(ctx, 1, 3, rp2, ci2, v2, 1);
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &N, 1, &s));
    CHECK(s.has_nonfinite);
    CHECK_NEAR(s.val_min, -2, 0);
    CHECK_NEAR(s.val_max, -2, 0);

    CHECK_ST(ctx, dsmm_csr_summary(ctx, &N, 0, &s), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_summary(ctx, NULL, 1, &s), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_summary(ctx, &N, 1, NULL), DSMM_ERR_ARG);
    ci2[1] = 3; // column out of range
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_summary(ctx, &N, 1, &s), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "out of range");
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Random matrices (some symmetric, some skew, unsorted rows) against naive answers.
static int test_random_vs_naive(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_rng r;
    dsmm_rng_init(&r, seed, 7);
    for (int trial = 0; trial < 60; trial++) {
        dsmm_idx m = 1 + (dsmm_idx)(dsmm_rng_u64(&r) % 23);
        dsmm_idx n = (trial % 3 == 0) ? 1 + (dsmm_idx)(dsmm_rng_u64(&r) % 23) : m;
        int kind = (int)(dsmm_rng_u64(&r) % 4); // 0 general, 1 symmetric, 2 skew, 3 pattern
        if (m != n && (kind == 1 || kind == 2)) kind = 0;
        double dens = 0.05 + 0.5 * dsmm_rng_uniform(&r);
        double *Dm = calloc((size_t)(m * n), sizeof *Dm); // dense, 0 = absent
        CHECK(Dm != NULL);
        for (dsmm_idx i = 0; i < m; i++) {
            for (dsmm_idx j = 0; j < n; j++) {
                if (dsmm_rng_uniform(&r) >= dens) continue;
                double v = kind == 3 ? 1.0 : (double)(1 + dsmm_rng_u64(&r) % 9);
                if (kind == 1 || kind == 2) {
                    if (j < i) continue;
                    if (kind == 2 && i == j) continue;
                    Dm[i * n + j] = v;
                    Dm[j * n + i] = kind == 2 ? -v : v;
                } else {
                    Dm[i * n + j] = v;
                }
            }
        }
        dsmm_idx *rp = calloc((size_t)m + 1, sizeof *rp);
        dsmm_idx *ci = malloc((size_t)(m * n + 1) * sizeof *ci);
        double *val = malloc((size_t)(m * n + 1) * sizeof *val);
        CHECK(rp && ci && val);
        dsmm_idx nnz = 0;
        for (dsmm_idx i = 0; i < m; i++) {
            dsmm_idx start = nnz;
            for (dsmm_idx j = 0; j < n; j++) {
                if (Dm[i * n + j] == 0) continue;
                ci[nnz] = j;
                val[nnz++] = Dm[i * n + j];
            }
            // reverse every other row: summary must not rely on sorted rows
            if (trial % 2) {
                for (dsmm_idx a = start, b = nnz - 1; a < b; a++, b--) {
                    dsmm_idx tc = ci[a];
                    ci[a] = ci[b];
                    ci[b] = tc;
                    double tv = val[a];
                    val[a] = val[b];
                    val[b] = tv;
                }
            }
            rp[i + 1] = nnz;
        }
        dsmm_csr A = make(ctx, m, n, rp, ci, kind == 3 ? NULL : val, trial % 2 == 0);

        // naive reference numbers
        int psym = m == n, vsym = m == n, skew = m == n;
        dsmm_idx diag = 0, erows = 0, ecols = 0;
        for (dsmm_idx i = 0; i < m; i++) {
            for (dsmm_idx j = 0; j < n; j++) {
                double a = Dm[i * n + j];
                if (i == j && a != 0) diag++;
                if (m != n) continue;
                double b = Dm[j * n + i];
                if ((a != 0) != (b != 0)) psym = 0;
                if (a != b) vsym = 0;
                if (a != -b) skew = 0;
            }
        }
        for (dsmm_idx i = 0; i < m; i++) erows += rp[i + 1] == rp[i];
        for (dsmm_idx j = 0; j < n; j++) {
            int any = 0;
            for (dsmm_idx i = 0; i < m; i++) any |= Dm[i * n + j] != 0;
            ecols += !any;
        }
        double flops = -1;
        if (m == n) { // per entry (i,k): row k's length
            flops = 0;
            for (dsmm_idx k = 0; k < nnz; k++) flops += (double)(rp[ci[k] + 1] - rp[ci[k]]);
        }
        for (int procs = 1; procs <= 9; procs++) {
            dsmm_summary s;
            CHECK_OK(ctx, dsmm_csr_summary(ctx, &A, procs, &s));
            CHECK_EQ_IDX(s.nnz, nnz);
            CHECK_EQ_IDX(s.diag_nnz, diag);
            CHECK_EQ_IDX(s.empty_rows, erows);
            CHECK_EQ_IDX(s.empty_cols, ecols);
            CHECK_NEAR(s.flops_aa, flops, 0);
            CHECK_MSG(s.pattern_symmetric == psym && s.value_symmetric == vsym &&
                          s.skew_symmetric == skew,
                      "trial %d kind %d: got %d %d %d want %d %d %d", trial, kind,
                      s.pattern_symmetric, s.value_symmetric, s.skew_symmetric, psym, vsym, skew);
            // tiles: loop over every tile for every entry; ranges built by accumulation
            int pr = s.grid_rows, pc = s.grid_cols;
            CHECK_EQ_IDX(pr * pc, procs);
            CHECK(pr <= pc);
            dsmm_idx rs[10], cs[10];
            rs[0] = cs[0] = 0;
            for (int I = 0; I < pr; I++) rs[I + 1] = rs[I] + m / pr + (I < m % pr);
            for (int J = 0; J < pc; J++) cs[J + 1] = cs[J] + n / pc + (J < n % pc);
            CHECK_EQ_IDX(rs[pr], m);
            CHECK_EQ_IDX(cs[pc], n);
            dsmm_idx tmax = 0;
            for (int I = 0; I < pr; I++) {
                for (int J = 0; J < pc; J++) {
                    dsmm_idx cnt = 0;
                    for (dsmm_idx i = 0; i < m; i++)
                        for (dsmm_idx k = rp[i]; k < rp[i + 1]; k++)
                            cnt +=
                                i >= rs[I] && i < rs[I + 1] && ci[k] >= cs[J] && ci[k] < cs[J + 1];
                    if (cnt > tmax) tmax = cnt;
                }
            }
            CHECK_EQ_IDX(s.tile_nnz_max, tmax);
            CHECK_NEAR(s.tile_nnz_avg, (double)nnz / procs, 1e-12);
            if (nnz > 0) CHECK_NEAR(s.tile_imbalance, tmax / ((double)nnz / procs), 1e-12);
        }
        free(Dm);
        free(rp);
        free(ci);
        free(val);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A star graph: one dense row and column dominate flops(A*A) (n*n from k = 0).
static int test_flops_star(void)
{
    dsmm_ctx *ctx = test_ctx();
    // star: row 0 full, column 0 full -> flops = n*n (k=0) + sum_{k>0} 1*1
    enum { N = 50 };
    dsmm_idx rp[N + 1], ci[2 * N];
    dsmm_idx nnz = 0;
    rp[0] = 0;
    for (dsmm_idx j = 0; j < N; j++) ci[nnz++] = j;
    rp[1] = nnz;
    for (dsmm_idx i = 1; i < N; i++) {
        ci[nnz++] = 0;
        rp[i + 1] = nnz;
    }
    dsmm_csr A = make(ctx, N, N, rp, ci, NULL, 1);
    dsmm_summary s;
    CHECK_OK(ctx, dsmm_csr_summary(ctx, &A, 4, &s));
    CHECK_NEAR(s.flops_aa, (double)N * N + (N - 1), 0);
    CHECK_EQ_IDX(s.row_deg_max, N);
    CHECK_EQ_IDX(s.row_deg_min, 1);
    CHECK(s.pattern_symmetric && s.value_symmetric && !s.skew_symmetric);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_grid_dims),        TEST(test_handmade),        TEST(test_symmetry_kinds),
        TEST(test_empty_and_errors), TEST(test_random_vs_naive), TEST(test_flops_star),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
