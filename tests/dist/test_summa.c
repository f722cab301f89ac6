// tests/dist/test_summa.c: distributed SUMMA products (dsmm_spgemm, dsmm_spmm) against the
// serial product of the same global inputs, on every grid shape of P, prefetch off and on:
// random (Erdős–Rényi, R-MAT, rectangular, smaller than the grid, empty tiles and rows, all
// zero) and real matrices, semirings, float and pattern inputs, SpMM with k = 1..128; errors
// every rank reports alike; the statistics record; and the bytes and messages that SUMMA moves,
// per rank and link class, equal to the count derived from the tile sizes; and the exact count
// of SUMMA's stage products (dsmmi_summa_count) against a stage-by-stage reference.
#include <limits.h>
#include <string.h>

#include "dist_common.h"

#include "dist/summa.h"
#include "dist_products.h"

/* ------------------------------------------------------------------------------------------ */
/* Correctness                                                                                */
/* ------------------------------------------------------------------------------------------ */

static int test_spgemm_random(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    pair p[16];
    dsmm_status st;
    int np = make_pairs(ctx, p, &st);
    CHECK_ALL_OK(ctx, st);
    for (int i = 0; i < np; i++)
        for (int s = 0; s < ns; s++)
            for (int pf = 0; pf < 2; pf++)
                if (spgemm_vs_serial(ctx, p[i].A, p[i].B, pr[s], pc[s], pf, DSMM_PLUS_TIMES, 1e-12,
                                     p[i].name, DSMM_DIST_SUMMA, 0))
                    return TEST_FAIL;
    free_pairs(p, np);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Semirings through opts.spgemm.semiring, and float and pattern inputs.
static int test_spgemm_semirings_types(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL, *Af = NULL, *Bf = NULL, *Ap = NULL, *Bp = NULL;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 40, 33, 0.1, 0.1, 0.1, DSMM_DOUBLE, task_seed(40), &A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 33, 29, 0.1, 0.1, 0.1, DSMM_DOUBLE, task_seed(41), &B));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 30, 30, 0.12, 0.1, 0, DSMM_FLOAT, task_seed(42), &Af));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 30, 17, 0.12, 0, 0.1, DSMM_FLOAT, task_seed(43), &Bf));
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 90, 4, 1, DSMM_PATTERN, task_seed(44), &Ap));
    CHECK_ALL_OK(ctx, test_rand_rmat(ctx, 6, 4, 0, DSMM_PATTERN, task_seed(45), &Bp));
    dsmm_csr *Bp90 = NULL; // 90 x 64 pattern from the R-MAT rows
    CHECK_ALL(Bp->nrows == 64);
    CHECK_ALL_OK(ctx, rand_mat(ctx, 90, 64, 0.05, 0.1, 0, DSMM_PATTERN, task_seed(46), &Bp90));
    for (int s = 0; s < ns; s++)
        for (int pf = 0; pf < 2; pf++) {
            if (spgemm_vs_serial(ctx, A, B, pr[s], pc[s], pf, DSMM_MIN_PLUS, 0.0, "40x33*33x29",
                                 DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, A, B, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0, "40x33*33x29",
                                 DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, Af, Bf, pr[s], pc[s], pf, DSMM_PLUS_TIMES, 1e-5,
                                 "float 30x30*30x17", DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, Ap, Ap, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0,
                                 "pattern er 90 A*A", DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, Ap, Bp90, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0,
                                 "pattern 90x90*90x64", DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, Bp, Bp, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0,
                                 "pattern rmat 6 A*A", DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
        }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&Af);
    dsmm_csr_destroy(&Bf);
    dsmm_csr_destroy(&Ap);
    dsmm_csr_destroy(&Bp);
    dsmm_csr_destroy(&Bp90);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spgemm_data(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *H = NULL, *C = NULL;
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &H));   // double, 751 empty rows
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &C)); // pattern
    for (int s = 0; s < ns; s++)
        for (int pf = 0; pf < 2; pf++) {
            if (spgemm_vs_serial(ctx, H, H, pr[s], pc[s], pf, DSMM_PLUS_TIMES, 1e-12, "hep-th",
                                 DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
            if (spgemm_vs_serial(ctx, C, C, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0, "cora",
                                 DSMM_DIST_SUMMA, 0))
                return TEST_FAIL;
        }
    dsmm_csr_destroy(&H);
    dsmm_csr_destroy(&C);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spmm(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *E = NULL, *R = NULL, *S = NULL, *Z = NULL, *F = NULL, *Cora = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 120, 4, 0, DSMM_DOUBLE, task_seed(60), &E));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 45, 31, 0.1, 0.2, 0.2, DSMM_DOUBLE, task_seed(61), &R));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 2, 3, 0.8, 0, 0, DSMM_DOUBLE, task_seed(62), &S));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 20, 20, 0.0, 0, 0, DSMM_DOUBLE, task_seed(63), &Z));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 33, 50, 0.1, 0.1, 0, DSMM_FLOAT, task_seed(64), &F));
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &Cora));
    struct {
        const dsmm_csr *A;
        const char *name;
        dsmm_idx k;
        dsmm_type type;
    } cases[] = {
        {E, "er 120", 1, DSMM_DOUBLE},
        {E, "er 120", 7, DSMM_DOUBLE},
        {E, "er 120", 64, DSMM_FLOAT},
        {E, "er 120", 128, DSMM_DOUBLE},
        {R, "45x31", 7, DSMM_FLOAT},
        {R, "45x31", 128, DSMM_FLOAT},
        {S, "2x3", 1, DSMM_DOUBLE},
        {S, "2x3", 7, DSMM_FLOAT},
        {Z, "all-zero 20x20", 7, DSMM_DOUBLE},
        {F, "float 33x50", 64, DSMM_FLOAT},
        {F, "float 33x50", 3, DSMM_DOUBLE},
        {Cora, "cora pattern", 64, DSMM_DOUBLE},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int s = 0; s < ns; s++)
            for (int pf = 0; pf < 2; pf++)
                if (spmm_vs_serial(ctx, cases[c].A, cases[c].k, cases[c].type, pr[s], pc[s], pf,
                                   cases[c].name, DSMM_DIST_SUMMA, 0))
                    return TEST_FAIL;
    dsmm_csr_destroy(&E);
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&S);
    dsmm_csr_destroy(&Z);
    dsmm_csr_destroy(&F);
    dsmm_csr_destroy(&Cora);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static int test_errors(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL, *P = NULL;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 10, 7, 0.3, 0, 0, DSMM_DOUBLE, task_seed(70), &A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 8, 5, 0.3, 0, 0, DSMM_DOUBLE, task_seed(71), &B));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 7, 7, 0.3, 0, 0, DSMM_PATTERN, task_seed(72), &P));
    dsmm_dense *G8 = NULL, *G7 = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, 8, 3, DSMM_DOUBLE, task_seed(73), &G8));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 7, 3, DSMM_DOUBLE, task_seed(74), &G7));
    for (int s = 0; s < ns; s++) {
        dsmm_dist *DA = NULL, *DB = NULL, *DP = NULL, *C = (dsmm_dist *)&C;
        dsmm_dist_dense *D8 = NULL, *D7 = NULL, *CD = (dsmm_dist_dense *)&CD;
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr[s], pc[s], &DA));
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, pr[s], pc[s], &DB));
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, P, pr[s], pc[s], &DP));
        CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, G8, pr[s], pc[s], &D8));
        CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, G7, pr[s], pc[s], &D7));
        // Inner dimensions 7 vs 8.
        CHECK_ALL_ST(ctx, dsmm_spgemm(ctx, DA, DB, &C), DSMM_ERR_DIM);
        CHECK_ALL(C == NULL);
        CHECK_ALL_ST(ctx, dsmm_spmm(ctx, DA, D8, &CD), DSMM_ERR_DIM);
        CHECK_ALL(CD == NULL);
        dsmm_ctx_clear_error(ctx);
        // Options the distributed products do not support.
        dsmm_dist_opts o;
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA;            // AUTO may pick a one-sided algorithm
        o.spgemm.semiring = DSMM_PLUS_PAIR; // valid but for the mask
        o.spgemm.mask = A;
        CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_ARG);
        dsmm_ctx_clear_error(ctx);
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA;            // AUTO may pick a one-sided algorithm
        o.spgemm.semiring = DSMM_PLUS_PAIR; // square P: valid shapes either way
        o.spgemm.transpose_b = 1;
        CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DP, DP, &o, &C), DSMM_ERR_ARG);
        CHECK_ALL(C == NULL);
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
        o.spmm.transpose_a = 1;  // square P: valid shapes either way
        CHECK_ALL_ST(ctx, dsmm_spmm_ex(ctx, DP, D7, &o, &CD), DSMM_ERR_ARG);
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
        o.spmm.alpha = 2;
        CHECK_ALL_ST(ctx, dsmm_spmm_ex(ctx, DP, D7, &o, &CD), DSMM_ERR_ARG);
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
        o.spmm.beta = 1;
        CHECK_ALL_ST(ctx, dsmm_spmm_ex(ctx, DP, D7, &o, &CD), DSMM_ERR_ARG);
        CHECK_ALL(CD == NULL);
        // Plus-times reads values; a pattern input fails as in the local product, with every
        // algorithm and on every rank (before the arguments reach a kernel, so also where a
        // rank's pieces are empty), resident or not.
        CHECK_ALL_ST(ctx, dsmm_spgemm(ctx, DA, DP, &C), DSMM_ERR_ARG);
        dsmm_ctx_clear_error(ctx);
        for (int res = 0; res < 2; res++)
            for (int alg = DSMM_DIST_AUTO; alg <= DSMM_DIST_WS_LOCAL_C; alg++) {
                dsmm_dist_opts_init(&o);
                o.alg = (dsmm_dist_alg)alg;
                o.gpu_resident = res;
                CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_ARG);
                CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "needs values") != NULL);
                CHECK_ALL(C == NULL);
                dsmm_ctx_clear_error(ctx);
            }
        // gpu_resident: not with the fused accumulation or a CPU kernel; on a context without
        // a device (these tests' contexts have none) every rank fails alike, SpGEMM and SpMM,
        // with SUMMA, AUTO and each one-sided algorithm, and C stays NULL.
        dsmm_dist_opts_init(&o);
        o.gpu_resident = 1;
        o.spgemm.semiring = DSMM_PLUS_PAIR;
        for (int alg = DSMM_DIST_AUTO; alg <= DSMM_DIST_WS_LOCAL_C; alg++) {
            o.alg = (dsmm_dist_alg)alg;
            if (alg != DSMM_DIST_AUTO) { // (SpGEMM's AUTO below)
                CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_UNSUPPORTED);
                CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "dsmm_ctx_set_gpu") != NULL ||
                          strstr(dsmm_ctx_last_error(ctx), "without CUDA") != NULL);
                CHECK_ALL(C == NULL);
                dsmm_ctx_clear_error(ctx);
            }
            CHECK_ALL_ST(ctx, dsmm_spmm_ex(ctx, DA, D7, &o, &CD), DSMM_ERR_UNSUPPORTED);
            CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "dsmm_ctx_set_gpu") != NULL ||
                      strstr(dsmm_ctx_last_error(ctx), "without CUDA") != NULL);
            CHECK_ALL(CD == NULL);
            dsmm_ctx_clear_error(ctx); // the first error stays until cleared
        }
        o.alg = DSMM_DIST_SUMMA;
        for (int k = 0; k < 4; k++) { // SpMM's kernels other than dsmm's GPU one: refused
            static const dsmm_spmm_alg cpu[] = {DSMM_SPMM_ROW, DSMM_SPMM_COL, DSMM_SPMM_REF,
                                                DSMM_SPMM_CUSPARSE};
            o.spmm.alg = cpu[k];
            CHECK_ALL_ST(ctx, dsmm_spmm_ex(ctx, DA, D7, &o, &CD), DSMM_ERR_ARG);
            CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "auto or gpu") != NULL);
            CHECK_ALL(CD == NULL);
            dsmm_ctx_clear_error(ctx);
        }
        o.spmm.alg = DSMM_SPMM_AUTO;
        o.alg = DSMM_DIST_SUMMA;
        o.accumulate = DSMM_ACC_FUSED;
        CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_ARG);
        CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "fused") != NULL);
        dsmm_ctx_clear_error(ctx); // the first error stays until cleared
        o.accumulate = DSMM_ACC_AUTO;
        o.spgemm.alg = DSMM_SPGEMM_HASH;
        CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_ARG);
        CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "auto or gpu") != NULL);
        dsmm_ctx_clear_error(ctx); // the first error stays until cleared
        o.spgemm.alg = DSMM_SPGEMM_AUTO;
        o.alg = DSMM_DIST_AUTO; // resident picks SUMMA
        CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C), DSMM_ERR_UNSUPPORTED);
        CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "dsmm_ctx_set_gpu") != NULL ||
                  strstr(dsmm_ctx_last_error(ctx), "without CUDA") != NULL);
        CHECK_ALL(C == NULL);
        dsmm_ctx_clear_error(ctx);
        // The good products still work.
        CHECK_ALL_OK(ctx, dsmm_spmm(ctx, DA, D7, &CD));
        dsmm_dist_dense_destroy(&CD);
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
        o.spgemm.semiring = DSMM_PLUS_PAIR;
        CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DP, &o, &C));
        dsmm_dist_destroy(&C);
        // A and B on different grids.
        if (ns > 1) {
            int t = ns - 1 - s == s ? 0 : ns - 1 - s;
            dsmm_dist *DP2 = NULL;
            dsmm_dist_dense *D72 = NULL;
            CHECK_ALL_OK(ctx, dsmm_dist_redistribute(ctx, DP, pr[t], pc[t], &DP2));
            CHECK_ALL_OK(ctx, dsmm_dist_dense_redistribute(ctx, D7, pr[t], pc[t], &D72));
            C = (dsmm_dist *)&C;
            CD = (dsmm_dist_dense *)&CD;
            CHECK_ALL_ST(ctx, dsmm_spgemm_ex(ctx, DA, DP2, &o, &C), DSMM_ERR_ARG);
            CHECK_ALL(C == NULL);
            CHECK_ALL_ST(ctx, dsmm_spmm(ctx, DA, D72, &CD), DSMM_ERR_ARG);
            CHECK_ALL(CD == NULL);
            dsmm_ctx_clear_error(ctx);
            dsmm_dist_destroy(&DP2);
            dsmm_dist_dense_destroy(&D72);
        }
        dsmm_dist_destroy(&DA);
        dsmm_dist_destroy(&DB);
        dsmm_dist_destroy(&DP);
        dsmm_dist_dense_destroy(&D8);
        dsmm_dist_dense_destroy(&D7);
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&P);
    dsmm_dense_destroy(&G8);
    dsmm_dense_destroy(&G7);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Counted traffic: measured == derived from the tile sizes, per rank and link class          */
/* ------------------------------------------------------------------------------------------ */

static int block_of(const dsmm_idx *b, int p, dsmm_idx i) // b[blk] <= i < b[blk + 1]
{
    for (int k = 0; k < p; k++)
        if (b[k] <= i && i < b[k + 1]) return k;
    return -1;
}

static int64_t nnz_in(const dsmm_csr *A, dsmm_idx r0, dsmm_idx r1, dsmm_idx c0, dsmm_idx c1)
{
    int64_t z = 0;
    for (dsmm_idx i = r0; i < r1; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            z += j >= c0 && j < c1;
        }
    return z;
}

static int value_bytes(dsmm_type t)
{
    return t == DSMM_DOUBLE ? 8 : t == DSMM_FLOAT ? 4 : 0;
}

static int64_t sparse_piece_bytes(int64_t rows, int64_t z, dsmm_type t)
{
    return z == 0 ? 0 : (rows + 1) * 8 + z * 4 + z * value_bytes(t);
}

/* count_bcast: a b-byte broadcast from context rank root to the ranks in members[0..q) (root
 * among them), as this rank's counters see it. */
static void count_bcast(const dsmm_ctx *ctx, int root, const int *members, int q, int64_t b,
                        size_t chunk, dsmm_traffic *e)
{
    if (b == 0 || q < 2) return;
    int64_t msgs = (b + (int64_t)chunk - 1) / (int64_t)chunk;
    for (int i = 0; i < q; i++) {
        int r = members[i];
        if (r == root) continue;
        int link = dsmm_ctx_workgroup(ctx, root) == dsmm_ctx_workgroup(ctx, r) ? 0 : 1;
        if (g_rank == root) {
            e->bytes_sent[link] += b;
            e->msgs_sent[link] += msgs;
        }
        if (g_rank == r) {
            e->bytes_recv[link] += b;
            e->msgs_recv[link] += msgs;
        }
    }
}

/* expect_summa: the traffic of this rank in SUMMA C = A * B on pr x pc: B sparse (Bs) or dense
 * (kdense columns of dtype). Stages: the union of A's column split (pc) and B's row split (pr)
 * of the inner dimension; stage [lo, hi) broadcasts A(row block i, lo:hi) along grid row i
 * from the grid column owning lo:hi in A's split, and B(lo:hi, column block j) along grid
 * column j from the grid row owning it in B's split. Returns the number of stages. */
static int expect_summa(const dsmm_ctx *ctx, int pr, int pc, const dsmm_csr *A, const dsmm_csr *Bs,
                        dsmm_idx kdense, dsmm_type dtype, size_t chunk, dsmm_traffic *e)
{
    memset(e, 0, sizeof *e);
    dsmm_idx n = A->ncols, q = Bs ? Bs->ncols : kdense;
    dsmm_idx ra[MAX_SHAPES + 1], ca[MAX_SHAPES + 1], rb[MAX_SHAPES + 1], cb[MAX_SHAPES + 1];
    split_bounds(A->nrows, pr, ra);
    split_bounds(n, pc, ca);
    split_bounds(n, pr, rb);
    split_bounds(q, pc, cb);
    dsmm_idx bounds[2 * MAX_SHAPES + 2];
    int nb = 0;
    for (int i = 0; i <= pc; i++) bounds[nb++] = ca[i];
    for (int i = 0; i <= pr; i++) bounds[nb++] = rb[i];
    for (int i = 1; i < nb; i++) // insertion sort; few entries
        for (int j = i; j > 0 && bounds[j - 1] > bounds[j]; j--) {
            dsmm_idx t = bounds[j];
            bounds[j] = bounds[j - 1];
            bounds[j - 1] = t;
        }
    int myrow = g_rank / pc, mycol = g_rank % pc, nstages = 0;
    int rowm[MAX_SHAPES], colm[MAX_SHAPES];
    for (int j = 0; j < pc; j++) rowm[j] = myrow * pc + j;
    for (int i = 0; i < pr; i++) colm[i] = i * pc + mycol;
    for (int s = 0; s + 1 < nb; s++) {
        dsmm_idx lo = bounds[s], hi = bounds[s + 1];
        if (hi <= lo) continue; // duplicates and empty ranges
        nstages++;
        int kc = block_of(ca, pc, lo), kr = block_of(rb, pr, lo);
        int64_t za = nnz_in(A, ra[myrow], ra[myrow + 1], lo, hi);
        int64_t ba = sparse_piece_bytes(ra[myrow + 1] - ra[myrow], za, A->type);
        count_bcast(ctx, myrow * pc + kc, rowm, pc, ba, chunk, e);
        int64_t bb;
        if (Bs)
            bb =
                sparse_piece_bytes(hi - lo, nnz_in(Bs, lo, hi, cb[mycol], cb[mycol + 1]), Bs->type);
        else
            bb = (int64_t)(hi - lo) * (cb[mycol + 1] - cb[mycol]) * value_bytes(dtype);
        count_bcast(ctx, kr * pc + mycol, colm, pr, bb, chunk, e);
    }
    return nstages;
}

/* traffic_equal: the data counters of the measured difference d equal e; no one-sided calls. */
static int traffic_equal(const dsmm_traffic *d, const dsmm_traffic *e, const char *what)
{
    int ok = 1;
    for (int c = 0; c < 2; c++) {
        if (d->bytes_sent[c] != e->bytes_sent[c] || d->bytes_recv[c] != e->bytes_recv[c] ||
            d->msgs_sent[c] != e->msgs_sent[c] || d->msgs_recv[c] != e->msgs_recv[c] ||
            d->rma_bytes[c] != 0 || d->rma_calls[c] != 0) {
            fprintf(stderr,
                    "rank %d: %s: link %s: bytes sent %lld recv %lld, msgs sent %lld recv %lld, "
                    "rma %lld/%lld; expected bytes sent %lld recv %lld, msgs sent %lld recv "
                    "%lld\n",
                    g_rank, what, c ? "inter" : "intra", (long long)d->bytes_sent[c],
                    (long long)d->bytes_recv[c], (long long)d->msgs_sent[c],
                    (long long)d->msgs_recv[c], (long long)d->rma_bytes[c],
                    (long long)d->rma_calls[c], (long long)e->bytes_sent[c],
                    (long long)e->bytes_recv[c], (long long)e->msgs_sent[c],
                    (long long)e->msgs_recv[c]);
            ok = 0;
        }
    }
    return ok;
}

static void diff_traffic(const dsmm_traffic *a, const dsmm_traffic *b, dsmm_traffic *d)
{
    for (int c = 0; c < 2; c++) {
        d->bytes_sent[c] = a->bytes_sent[c] - b->bytes_sent[c];
        d->bytes_recv[c] = a->bytes_recv[c] - b->bytes_recv[c];
        d->msgs_sent[c] = a->msgs_sent[c] - b->msgs_sent[c];
        d->msgs_recv[c] = a->msgs_recv[c] - b->msgs_recv[c];
        d->rma_bytes[c] = a->rma_bytes[c] - b->rma_bytes[c];
        d->rma_calls[c] = a->rma_calls[c] - b->rma_calls[c];
    }
    d->ctl_bytes = a->ctl_bytes - b->ctl_bytes;
    d->ctl_msgs = a->ctl_msgs - b->ctl_msgs;
}

/* One counted case: an SpGEMM (Bs) or SpMM (Bd) input pair. */
typedef struct count_case {
    const char *name;
    dsmm_csr *A, *Bs;
    dsmm_dense *Bd;
    dsmm_semiring sr;
} count_case;

static int run_counted(dsmm_ctx *ctx, const count_case *c, int pr, int pc, int wg, int prefetch,
                       size_t chunk)
{
    char what[200];
    snprintf(what, sizeof what, "%s on %d x %d, workgroups of %d, prefetch %d, chunk %zu", c->name,
             pr, pc, wg, prefetch, chunk);
    CHECK_ALL_OK(ctx, dsmm_ctx_set_workgroup_size(ctx, wg));
    int wg_ok = 1;
    for (int r = 0; r < g_size; r++) wg_ok &= dsmm_ctx_workgroup(ctx, r) == (r / wg) * wg;
    CHECK_ALL_MSG(wg_ok, "%s: workgroup of a rank is not its lowest rank", what);
    dsmmi_comm_set_chunk(ctx, chunk);
    CHECK_ALL(dsmmi_comm_chunk(ctx) == chunk);
    dsmm_dist *DA = NULL, *DB = NULL, *DC = NULL;
    dsmm_dist_dense *DBd = NULL, *DCd = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, c->A, pr, pc, &DA));
    if (c->Bs)
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, c->Bs, pr, pc, &DB));
    else
        CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, c->Bd, pr, pc, &DBd));
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
    o.prefetch = prefetch;
    o.spgemm.semiring = c->sr;
    dsmm_traffic before, after, d, e;
    dsmm_ctx_traffic(ctx, &before);
    if (c->Bs)
        CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
    else
        CHECK_ALL_OK(ctx, dsmm_spmm_ex(ctx, DA, DBd, &o, &DCd));
    dsmm_ctx_traffic(ctx, &after);
    diff_traffic(&after, &before, &d);
    expect_summa(ctx, pr, pc, c->A, c->Bs, c->Bd ? c->Bd->ncols : 0,
                 c->Bd ? c->Bd->type : DSMM_DOUBLE, chunk, &e);
    CHECK_ALL_MSG(traffic_equal(&d, &e, what), "%s", what);
    // The result is still exact with small chunks.
    if (c->Bs) {
        dsmm_spgemm_opts so;
        dsmm_spgemm_opts_init(&so);
        so.semiring = c->sr;
        dsmm_csr *Cs = NULL;
        CHECK_ALL_OK(ctx, dsmm_csr_spgemm_ex(ctx, c->A, c->Bs, &so, &Cs, NULL));
        CHECK_ALL_MSG(dist_near(ctx, DC, Cs, 0, 1e-12, what), "%s: product", what);
        dsmm_csr_destroy(&Cs);
    } else {
        dsmm_dense *G = NULL, *Cs = NULL;
        CHECK_ALL_OK(ctx, dsmm_dist_dense_gather(ctx, DCd, 0, &G));
        CHECK_ALL_OK(ctx, dsmm_dense_create(ctx, c->A->nrows, c->Bd->ncols, c->Bd->type, &Cs));
        CHECK_ALL_OK(ctx, dsmm_csr_spmm(ctx, c->A, c->Bd, Cs, NULL, NULL));
        int ok = 1;
        if (g_rank == 0) // test values: every product and sum is exact in both types
            for (dsmm_idx i = 0; ok && i < Cs->nrows; i++)
                for (dsmm_idx j = 0; ok && j < Cs->ncols; j++)
                    ok = dense_at(G, i, j) == dense_at(Cs, i, j);
        CHECK_ALL_MSG(ok, "%s: SpMM product", what);
        dsmm_dense_destroy(&G);
        dsmm_dense_destroy(&Cs);
    }
    dsmm_dist_destroy(&DA);
    dsmm_dist_destroy(&DB);
    dsmm_dist_destroy(&DC);
    dsmm_dist_dense_destroy(&DBd);
    dsmm_dist_dense_destroy(&DCd);
    return TEST_PASS;
}

static int test_counted_bytes(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    size_t dflt = dsmmi_comm_chunk(ctx);
    CHECK_ALL_EQ(dflt, (size_t)INT_MAX / 8 * 8);
    count_case cs[7];
    memset(cs, 0, sizeof cs);
    CHECK_ALL_OK(ctx, rand_mat(ctx, 37, 29, 0.1, 0.2, 0.2, DSMM_DOUBLE, task_seed(80), &cs[0].A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 29, 23, 0.1, 0.2, 0.1, DSMM_DOUBLE, task_seed(81), &cs[0].Bs));
    cs[0].name = "double 37x29 * 29x23";
    CHECK_ALL_OK(ctx, rand_mat(ctx, 20, 20, 0.15, 0, 0, DSMM_FLOAT, task_seed(82), &cs[1].A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 20, 20, 0.15, 0, 0, DSMM_FLOAT, task_seed(83), &cs[1].Bs));
    cs[1].name = "float 20x20 * 20x20";
    CHECK_ALL_OK(ctx, test_rand_rmat(ctx, 6, 4, 0, DSMM_PATTERN, task_seed(84), &cs[2].A));
    CHECK_ALL_OK(ctx, dsmm_csr_transpose(ctx, cs[2].A, &cs[2].Bs));
    CHECK_ALL(cs[2].Bs->type == DSMM_PATTERN);
    cs[2].name = "pattern rmat 6 (plus-pair)";
    cs[2].sr = DSMM_PLUS_PAIR;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 2, 3, 0.8, 0, 0, DSMM_DOUBLE, task_seed(85), &cs[3].A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 3, 2, 0.8, 0, 0, DSMM_DOUBLE, task_seed(86), &cs[3].Bs));
    cs[3].name = "2x3 * 3x2";
    CHECK_ALL_OK(ctx, rand_mat(ctx, 37, 29, 0.1, 0.2, 0.2, DSMM_DOUBLE, task_seed(87), &cs[4].A));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 29, 7, DSMM_DOUBLE, task_seed(88), &cs[4].Bd));
    cs[4].name = "spmm double 37x29, k 7";
    CHECK_ALL_OK(ctx, rand_mat(ctx, 20, 20, 0.15, 0.1, 0, DSMM_FLOAT, task_seed(89), &cs[5].A));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 20, 3, DSMM_FLOAT, task_seed(90), &cs[5].Bd));
    cs[5].name = "spmm float 20x20, k 3";
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 50, 3, 1, DSMM_PATTERN, task_seed(91), &cs[6].A));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 50, 64, DSMM_DOUBLE, task_seed(92), &cs[6].Bd));
    cs[6].name = "spmm pattern er 50, k 64 double";
    // Workgroups of 1 (every link inter), 2 and 3 (mixed), P (every link intra); prefetch off
    // and on; 1000-byte chunks (several messages per broadcast) with both.
    struct {
        int wg, prefetch;
        size_t chunk;
    } runs[] = {{1, 0, dflt},      {2, 1, dflt}, {g_size, 0, dflt},
                {g_size, 1, dflt}, {2, 0, 1000}, {3, 1, 1000}};
    for (int c = 0; c < 7; c++)
        for (int s = 0; s < ns; s++)
            for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
                if (run_counted(ctx, &cs[c], pr[s], pc[s], runs[r].wg, runs[r].prefetch,
                                runs[r].chunk))
                    return TEST_FAIL;
    dsmmi_comm_set_chunk(ctx, dflt);
    for (int c = 0; c < 7; c++) {
        dsmm_csr_destroy(&cs[c].A);
        dsmm_csr_destroy(&cs[c].Bs);
        dsmm_dense_destroy(&cs[c].Bd);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Binary merge and the pipeline                                                              */
/* ------------------------------------------------------------------------------------------ */

static double json_number(const char *json, const char *key);

/* One SUMMA product of DA * DB with accumulate acc and pipeline pl; *C new; *peak and *stages
 * from the statistics record (merge_peak_bytes, stages_count). */
static int run_acc(dsmm_ctx *ctx, const dsmm_dist *DA, const dsmm_dist *DB, dsmm_semiring sr,
                   dsmm_dist_acc acc, int pl, int prefetch, dsmm_dist **C, double *peak,
                   int *stages)
{
    dsmm_stats *st = NULL;
    char *json = NULL;
    CHECK_ALL_OK(ctx, dsmm_stats_create(ctx, "spgemm", &st));
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    CHECK_ALL(o.pipeline == 0);
    o.alg = DSMM_DIST_SUMMA;
    o.accumulate = acc;
    o.spgemm.semiring = sr;
    o.pipeline = pl;
    o.prefetch = prefetch;
    o.stats = st;
    // The pipeline overlaps with two threads (one broadcasts, one multiplies).
    int saved_threads = dsmm_ctx_threads(ctx);
    if (pl) CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
    dsmm_status rc = dsmm_spgemm_ex(ctx, DA, DB, &o, C);
    CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, saved_threads));
    CHECK_ALL_OK(ctx, rc);
    CHECK_ALL_OK(ctx, dsmm_stats_json(st, &json));
    *peak = json_number(json, "merge_peak_bytes");
    *stages = (int)json_number(json, "stages_count");
    double p = json_number(json, "pipeline");
    int ok = !isnan(*peak) && *peak >= 0 && *stages >= 0 && p == (pl ? 1 : 0) &&
             (!pl || !isnan(json_number(json, "comm_exposed_seconds")));
    // Table V's idle times: the two-thread pipeline (more than one stage) measures the CPU's,
    // within the run's seconds; no product ran on a GPU, so no GPU idle time. Else neither.
    double ci = json_number(json, "cpu_idle_seconds"), gp = json_number(json, "gpu_products");
    double gi = json_number(json, "gpu_idle_seconds"), secs = json_number(json, "seconds");
    if (pl && *stages > 1)
        ok = ok && ci >= 0 && ci <= secs && gp == 0 && isnan(gi);
    else
        ok = ok && isnan(ci) && isnan(gp) && isnan(gi);
    if (!ok) fprintf(stderr, "rank %d: stats without the merge keys: %s\n", g_rank, json);
    json = dsmm_free(ctx, json);
    dsmm_stats_destroy(&st);
    CHECK_ALL(ok);
    return TEST_PASS;
}

/* Binary merge gives k-way merge's C, bit for bit while there are at most 5 stages (the sums
 * group alike) or for exact adds, else within 1e-12; it never holds more bytes of partial
 * products than k-way; the pipeline changes nothing, bit for bit, for either accumulation. */
static int binary_vs_kway(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                          int exact, const char *name)
{
    char what[160];
    dsmm_dist *DA = NULL, *DB = NULL, *K = NULL, *Bn = NULL, *X = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &DA));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, pr, pc, &DB));
    // Pattern inputs count paths (plus-pair): exact sums.
    dsmm_semiring sr = A->val && B->val ? DSMM_PLUS_TIMES : DSMM_PLUS_PAIR;
    exact = exact || sr == DSMM_PLUS_PAIR;
    double pk = 0, pb = 0, px = 0;
    int sk = 0, sb = 0, sx = 0;
    if (run_acc(ctx, DA, DB, sr, DSMM_ACC_MERGE, 0, 0, &K, &pk, &sk)) return TEST_FAIL;
    if (run_acc(ctx, DA, DB, sr, DSMM_ACC_BINARY, 0, 0, &Bn, &pb, &sb)) return TEST_FAIL;
    snprintf(what, sizeof what, "%s on %d x %d (%d stages): binary vs k-way", name, pr, pc, sk);
    double tol = exact || sk <= 5 ? 0.0 : 1e-12;
    CHECK_ALL_MSG(
        csr_equal(ctx, dsmm_dist_local(Bn, NULL, NULL), dsmm_dist_local(K, NULL, NULL), tol, what),
        "%s", what);
    CHECK_ALL_MSG(sb == sk && pb <= pk, "%s: merge peak bytes binary %.0f > k-way %.0f", what, pb,
                  pk);
    // Pipelined, with and without prefetch (which the pipeline makes moot).
    for (int v = 0; v < 4; v++) {
        dsmm_dist_acc acc = v % 2 ? DSMM_ACC_BINARY : DSMM_ACC_MERGE;
        const dsmm_dist *want = v % 2 ? Bn : K;
        dsmm_dist_destroy(&X);
        if (run_acc(ctx, DA, DB, sr, acc, 1, v / 2, &X, &px, &sx)) return TEST_FAIL;
        snprintf(what, sizeof what, "%s on %d x %d: pipelined %s, prefetch %d", name, pr, pc,
                 v % 2 ? "binary" : "merge", v / 2);
        CHECK_ALL_MSG(csr_equal(ctx, dsmm_dist_local(X, NULL, NULL),
                                dsmm_dist_local(want, NULL, NULL), 0.0, what),
                      "%s", what);
        CHECK_ALL_MSG(px == (v % 2 ? pb : pk), "%s: merge peak bytes %.0f, unpipelined %.0f", what,
                      px, v % 2 ? pb : pk);
    }
    // Ranks with different thread counts (rank 0 one, the others two): they agree on the
    // pipeline's fallback (nonblocking broadcasts) instead of mixing blocking and nonblocking
    // broadcasts of one stage, which MPI does not match (before the agreement: a hang).
    {
        dsmm_dist_opts o;
        dsmm_dist_opts_init(&o);
        o.alg = DSMM_DIST_SUMMA;
        o.accumulate = DSMM_ACC_MERGE;
        o.spgemm.semiring = sr;
        o.pipeline = 1;
        int saved_threads = dsmm_ctx_threads(ctx);
        CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, g_rank == 0 ? 1 : 2));
        dsmm_dist_destroy(&X);
        dsmm_status rc = dsmm_spgemm_ex(ctx, DA, DB, &o, &X);
        CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, saved_threads));
        CHECK_ALL_OK(ctx, rc);
        snprintf(what, sizeof what, "%s on %d x %d: pipelined, rank 0 with one thread", name, pr,
                 pc);
        CHECK_ALL_MSG(csr_equal(ctx, dsmm_dist_local(X, NULL, NULL), dsmm_dist_local(K, NULL, NULL),
                                0.0, what),
                      "%s", what);
    }
    // AUTO with the pipeline merges stage by stage, with the binary merge: Bn's C and peak
    // (a fused multiply besides would have left the merge keys at 0).
    dsmm_dist_destroy(&X);
    if (run_acc(ctx, DA, DB, sr, DSMM_ACC_AUTO, 1, 0, &X, &px, &sx)) return TEST_FAIL;
    snprintf(what, sizeof what, "%s on %d x %d: pipelined auto", name, pr, pc);
    CHECK_ALL_MSG(
        csr_equal(ctx, dsmm_dist_local(X, NULL, NULL), dsmm_dist_local(Bn, NULL, NULL), 0.0, what),
        "%s", what);
    CHECK_ALL_MSG(px == pb && sx == sb, "%s: merge peak bytes %.0f (binary %.0f), %d stages", what,
                  px, pb, sx);
    dsmm_dist_destroy(&X);
    dsmm_dist_destroy(&K);
    dsmm_dist_destroy(&Bn);
    dsmm_dist_destroy(&DA);
    dsmm_dist_destroy(&DB);
    return TEST_PASS;
}

static int test_binary_pipeline(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    pair p[16];
    dsmm_status st;
    int np = make_pairs(ctx, p, &st);
    CHECK_ALL_OK(ctx, st);
    dsmm_csr *H = NULL, *F = NULL, *Ai = NULL;
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &H));
    CHECK_ALL_OK(ctx, read_data(ctx, "facebook-combined.mtx.gz", &F));
    // Small integers: every sum is exact, so binary equals k-way bit for bit at any stages.
    CHECK_ALL_OK(ctx, rand_mat(ctx, 70, 70, 0.15, 0.1, 0.1, DSMM_DOUBLE, task_seed(120), &Ai));
    for (dsmm_idx k = 0; k < Ai->nnz; k++) ((double *)Ai->val)[k] = (double)(k % 7) - 3.0;
    for (int s = 0; s < ns; s++) {
        for (int i = 0; i < np; i++)
            if (binary_vs_kway(ctx, p[i].A, p[i].B, pr[s], pc[s], 0, p[i].name)) return TEST_FAIL;
        if (binary_vs_kway(ctx, Ai, Ai, pr[s], pc[s], 1, "integers 70x70")) return TEST_FAIL;
        if (binary_vs_kway(ctx, H, H, pr[s], pc[s], 0, "hep-th")) return TEST_FAIL;
        if (binary_vs_kway(ctx, F, F, pr[s], pc[s], 0, "facebook-combined")) return TEST_FAIL;
    }
    free_pairs(p, np);
    dsmm_csr_destroy(&H);
    dsmm_csr_destroy(&F);
    dsmm_csr_destroy(&Ai);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Statistics record                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* json_number: the value of the first "key": in json (NaN if absent). */
static double json_number(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (p == NULL) return NAN;
    return strtod(p + strlen(pat), NULL);
}

static int check_stats(dsmm_ctx *ctx, dsmm_stats *st, const char *op, double flops,
                       dsmm_idx nnz_out, int64_t bytes_sent_sum, const char *what)
{
    char *json = NULL;
    CHECK_ALL_OK(ctx, dsmm_stats_json(st, &json));
    char ranks[48], opkey[48];
    snprintf(ranks, sizeof ranks, "\"ranks\":%d,", g_size);
    snprintf(opkey, sizeof opkey, "\"op\":\"%s\"", op);
    int ok = json && strstr(json, "\"ranks_detail\"") && strstr(json, "\"stages\"") &&
             strstr(json, ranks) && strstr(json, opkey);
    double f = json_number(json, "flops"), z = json_number(json, "nnz_out");
    double b = json_number(json, "bytes_sent");
    if (nnz_out < 0) z = nnz_out = -1; // not checked
    if (!ok || f != flops || z != (double)nnz_out || b != (double)bytes_sent_sum)
        fprintf(stderr,
                "rank %d: %s: stats flops %.17g (expected %.17g), nnz_out %.17g (expected %lld), "
                "bytes_sent %.17g (expected %lld), keys %s: %s\n",
                g_rank, what, f, flops, z, (long long)nnz_out, b, (long long)bytes_sent_sum,
                ok ? "present" : "missing", json ? json : "(null)");
    ok = ok && f == flops && z == (double)nnz_out && b == (double)bytes_sent_sum;
    json = dsmm_free(ctx, json);
    CHECK_ALL_MSG(ok, "%s", what);
    return TEST_PASS;
}

static int test_stats(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL, *Cs = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 80, 4, 0, DSMM_DOUBLE, task_seed(95), &A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 80, 50, 0.05, 0.1, 0, DSMM_DOUBLE, task_seed(96), &B));
    dsmm_dense *Bd = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, 80, 16, DSMM_DOUBLE, task_seed(97), &Bd));
    dsmm_spgemm_info info;
    CHECK_ALL_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, NULL, &Cs, &info));
    CHECK_ALL(info.flops == ref_flops(A, B));
    dsmm_dense *Cd = NULL;
    dsmm_spmm_info sinfo;
    CHECK_ALL_OK(ctx, dsmm_dense_create(ctx, 80, 16, DSMM_DOUBLE, &Cd));
    CHECK_ALL_OK(ctx, dsmm_csr_spmm(ctx, A, Bd, Cd, NULL, &sinfo));
    for (int s = 0; s < ns; s++)
        for (int pf = 0; pf < 2; pf++) {
            char what[96];
            snprintf(what, sizeof what, "stats on %d x %d, prefetch %d", pr[s], pc[s], pf);
            dsmm_dist *DA = NULL, *DB = NULL, *DC = NULL;
            dsmm_dist_dense *DBd = NULL, *DCd = NULL;
            dsmm_stats *st = NULL, *st2 = NULL;
            CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr[s], pc[s], &DA));
            CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, pr[s], pc[s], &DB));
            CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, Bd, pr[s], pc[s], &DBd));
            CHECK_ALL_OK(ctx, dsmm_stats_create(ctx, "spgemm", &st));
            CHECK_ALL_OK(ctx, dsmm_stats_create(ctx, "spmm", &st2));
            dsmm_dist_opts o;
            dsmm_dist_opts_init(&o);
            o.alg = DSMM_DIST_SUMMA; // AUTO may pick a one-sided algorithm
            o.prefetch = pf;
            o.stats = st;
            dsmm_traffic e;
            CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
            expect_summa(ctx, pr[s], pc[s], A, B, 0, DSMM_DOUBLE, dsmmi_comm_chunk(ctx), &e);
            long long sent = e.bytes_sent[0] + e.bytes_sent[1], sum = 0;
            MPI_Allreduce(&sent, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            CHECK_ALL(dist_near(ctx, DC, Cs, 0, 1e-12, what));
            if (check_stats(ctx, st, "spgemm", info.flops, Cs->nnz, sum, what)) return TEST_FAIL;
            o.stats = st2;
            CHECK_ALL_OK(ctx, dsmm_spmm_ex(ctx, DA, DBd, &o, &DCd));
            expect_summa(ctx, pr[s], pc[s], A, NULL, 16, DSMM_DOUBLE, dsmmi_comm_chunk(ctx), &e);
            sent = e.bytes_sent[0] + e.bytes_sent[1];
            MPI_Allreduce(&sent, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            // SpMM's flops as dsmm_spmm_info counts them: 2 nnz(A) k (nnz_out not checked: what
            // it means for a dense C is not settled).
            if (check_stats(ctx, st2, "spmm", sinfo.flops, -1, sum, what)) return TEST_FAIL;
            dsmm_stats_destroy(&st);
            dsmm_stats_destroy(&st2);
            dsmm_dist_destroy(&DA);
            dsmm_dist_destroy(&DB);
            dsmm_dist_destroy(&DC);
            dsmm_dist_dense_destroy(&DBd);
            dsmm_dist_dense_destroy(&DCd);
        }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&Cs);
    dsmm_dense_destroy(&Bd);
    dsmm_dense_destroy(&Cd);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* The exact count of SUMMA's stage products (dsmmi_summa_count)                              */
/* ------------------------------------------------------------------------------------------ */

/* count_vs_reference: dsmmi_summa_count of A * B on pr x pc gives, for each row of this
 * rank's C tile, the sum over SUMMA's stages of the nnz of that row of the stage product
 * A(rows, lo:hi) * B(lo:hi, cols), and the stages' flops; the reference walks the global
 * inputs with the same plan, one row, stage and column at a time. */
static int count_vs_reference(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                              const char *name)
{
    char what[200];
    snprintf(what, sizeof what, "count %s on %d x %d", name, pr, pc);
    dsmm_dist *DA = NULL, *DB = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &DA));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, g_size - 1, B, pr, pc, &DB));
    const dsmmi_grid *g = DA->grid;
    dsmm_idx r0 = DA->rb[g->myrow], r1 = DA->rb[g->myrow + 1];
    dsmm_idx c0 = DB->cb[g->mycol], c1 = DB->cb[g->mycol + 1];
    double *got = calloc((size_t)(r1 - r0) + 1, sizeof *got), gotf = -1.0;
    unsigned char *mark = calloc((size_t)B->ncols + 1, 1);
    CHECK_ALL(got != NULL && mark != NULL);
    CHECK_ALL_OK(ctx, dsmmi_summa_count(ctx, DA, DB, got, &gotf));
    dsmmi_summa_plan plan;
    CHECK_ALL_OK(ctx, dsmmi_summa_plan_make(ctx, A->ncols, pr, pc, &plan));
    int bad = 0;
    double wantf = 0.0;
    for (dsmm_idx i = r0; i < r1 && !bad; i++) {
        double want = 0.0;
        for (int s = 0; s < plan.n; s++) {
            for (dsmm_idx q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
                dsmm_idx k = dsmm_csr_col(A, q);
                if (k < plan.lo[s] || k >= plan.hi[s]) continue;
                for (dsmm_idx t = B->rowptr[k]; t < B->rowptr[k + 1]; t++) {
                    dsmm_idx j = dsmm_csr_col(B, t);
                    if (j < c0 || j >= c1) continue;
                    wantf += 1.0;
                    if (!mark[j]) want += 1.0;
                    mark[j] = 1;
                }
            }
            memset(mark, 0, (size_t)B->ncols + 1);
        }
        if (got[i - r0] != want) {
            fprintf(stderr, "rank %d: %s: row %lld counted %.0f, want %.0f\n", g_rank, what,
                    (long long)i, got[i - r0], want);
            bad = 1;
        }
    }
    if (!bad && gotf != wantf) {
        fprintf(stderr, "rank %d: %s: flops %.0f, want %.0f\n", g_rank, what, gotf, wantf);
        bad = 1;
    }
    dsmmi_summa_plan_free(ctx, &plan);
    free(got);
    free(mark);
    dsmm_dist_destroy(&DA);
    dsmm_dist_destroy(&DB);
    CHECK_ALL_MSG(!bad, "%s", what);
    return TEST_PASS;
}

static int test_summa_count(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    pair p[16];
    dsmm_status st;
    int np = make_pairs(ctx, p, &st);
    CHECK_ALL_OK(ctx, st);
    dsmm_csr *H = NULL;
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &H)); // 751 empty rows
    for (int s = 0; s < ns; s++) {
        for (int i = 0; i < np; i++)
            if (count_vs_reference(ctx, p[i].A, p[i].B, pr[s], pc[s], p[i].name)) return TEST_FAIL;
        if (count_vs_reference(ctx, H, H, pr[s], pc[s], "hep-th")) return TEST_FAIL;
    }
    // One stage (1 x 1 grid on one rank): the count is nnz of each row of the product.
    if (g_size == 1) {
        dsmm_csr *C = NULL;
        CHECK_ALL_OK(ctx, dsmm_csr_spgemm(ctx, H, H, &C));
        dsmm_dist *DH = NULL;
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, H, 1, 1, &DH));
        double *got = calloc((size_t)H->nrows, sizeof *got), f = 0.0;
        CHECK_ALL(got != NULL);
        CHECK_ALL_OK(ctx, dsmmi_summa_count(ctx, DH, DH, got, &f));
        for (dsmm_idx i = 0; i < H->nrows; i++)
            CHECK_ALL_MSG(got[i] == (double)(C->rowptr[i + 1] - C->rowptr[i]),
                          "hep-th row %lld: %.0f", (long long)i, got[i]);
        free(got);
        dsmm_dist_destroy(&DH);
        dsmm_csr_destroy(&C);
    }
    // Mismatched inner dimensions: the same error on every rank, nothing leaked.
    {
        dsmm_dist *DA = NULL, *DB = NULL;
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, p[2].A, pr[0], pc[0], &DA)); // 45 x 31
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, p[2].A, pr[0], pc[0], &DB));
        double row[64], f = 0.0;
        CHECK_ALL(dsmmi_summa_count(ctx, DA, DB, row, &f) == DSMM_ERR_DIM);
        dsmm_dist_destroy(&DA);
        dsmm_dist_destroy(&DB);
    }
    dsmm_csr_destroy(&H);
    free_pairs(p, np);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_spgemm_random), TEST(test_spgemm_semirings_types),
        TEST(test_spgemm_data),   TEST(test_spmm),
        TEST(test_errors),        TEST(test_counted_bytes),
        TEST(test_stats),         TEST(test_binary_pipeline),
        TEST(test_summa_count),
    };
    return dist_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
