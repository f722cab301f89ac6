// tests/dist/dist_products.h: what the tests of the distributed products share: the random
// global inputs (make_pairs: Erdős–Rényi, R-MAT, rectangular, smaller than the grid, empty
// tiles and rows, all zero, explicit zeros), and one distributed SpGEMM or SpMM of a given
// algorithm compared with the serial product of the same global inputs.
#ifndef DSMM_TEST_DIST_PRODUCTS_H
#define DSMM_TEST_DIST_PRODUCTS_H

#include "dist_common.h"

#define MAX_SHAPES 16

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static dsmm_status rand_mat(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, double density,
                            double empty_rows, double empty_cols, dsmm_type type, uint64_t seed,
                            dsmm_csr **A)
{
    test_mat o;
    test_mat_init(&o, m, n, density, seed);
    o.type = type;
    o.empty_rows = empty_rows;
    o.empty_cols = empty_cols;
    return test_rand_csr(ctx, &o, A);
}

/* A pair of global inputs of a product test, made alike on every rank. */
typedef struct pair {
    const char *name;
    dsmm_csr *A, *B;
} pair;

/* make_pairs: the random SpGEMM inputs (A * B); returns the count. */
static int make_pairs(dsmm_ctx *ctx, pair *p, dsmm_status *st)
{
    int n = 0;
    *st = DSMM_OK;
#define ADD(nm, a, b)                                                                              \
    do {                                                                                           \
        p[n].name = nm;                                                                            \
        p[n].A = p[n].B = NULL;                                                                    \
        if (*st == DSMM_OK) *st = (a);                                                             \
        if (*st == DSMM_OK) *st = (b);                                                             \
        n++;                                                                                       \
    } while (0)
    ADD("er 120 A*B", test_rand_er(ctx, 120, 4, 0, DSMM_DOUBLE, task_seed(10), &p[n].A),
        test_rand_er(ctx, 120, 3, 0, DSMM_DOUBLE, task_seed(11), &p[n].B));
    ADD("rmat 7 A*A", test_rand_rmat(ctx, 7, 4, 1, DSMM_DOUBLE, task_seed(12), &p[n].A),
        dsmm_csr_copy(ctx, p[n].A, DSMM_DOUBLE, &p[n].B));
    ADD("45x31 * 31x52", rand_mat(ctx, 45, 31, 0.1, 0.2, 0.1, DSMM_DOUBLE, task_seed(13), &p[n].A),
        rand_mat(ctx, 31, 52, 0.1, 0.1, 0.2, DSMM_DOUBLE, task_seed(14), &p[n].B));
    ADD("2x3 * 3x2", rand_mat(ctx, 2, 3, 0.8, 0, 0, DSMM_DOUBLE, task_seed(15), &p[n].A),
        rand_mat(ctx, 3, 2, 0.8, 0, 0, DSMM_DOUBLE, task_seed(16), &p[n].B));
    ADD("1x1 * 1x1", rand_mat(ctx, 1, 1, 1.0, 0, 0, DSMM_DOUBLE, task_seed(17), &p[n].A),
        rand_mat(ctx, 1, 1, 1.0, 0, 0, DSMM_DOUBLE, task_seed(18), &p[n].B));
    ADD("3x1 * 1x4", rand_mat(ctx, 3, 1, 1.0, 0, 0, DSMM_DOUBLE, task_seed(19), &p[n].A),
        rand_mat(ctx, 1, 4, 1.0, 0, 0, DSMM_DOUBLE, task_seed(20), &p[n].B));
    ADD("5x0 * 0x4", rand_mat(ctx, 5, 0, 0.0, 0, 0, DSMM_DOUBLE, task_seed(21), &p[n].A),
        rand_mat(ctx, 0, 4, 0.0, 0, 0, DSMM_DOUBLE, task_seed(22), &p[n].B));
    ADD("60x60 empty tiles",
        rand_mat(ctx, 60, 60, 0.01, 0.3, 0.3, DSMM_DOUBLE, task_seed(23), &p[n].A),
        rand_mat(ctx, 60, 60, 0.01, 0.3, 0.3, DSMM_DOUBLE, task_seed(24), &p[n].B));
    ADD("all-zero 20x20 * 20x20",
        rand_mat(ctx, 20, 20, 0.0, 0, 0, DSMM_DOUBLE, task_seed(25), &p[n].A),
        rand_mat(ctx, 20, 20, 0.2, 0, 0, DSMM_DOUBLE, task_seed(26), &p[n].B));
    ADD("20x20 * all-zero 20x7",
        rand_mat(ctx, 20, 20, 0.2, 0, 0, DSMM_DOUBLE, task_seed(27), &p[n].A),
        rand_mat(ctx, 20, 7, 0.0, 0, 0, DSMM_DOUBLE, task_seed(28), &p[n].B));
#undef ADD
    // Explicit zeros: entries stay structural.
    if (*st == DSMM_OK) {
        test_mat o;
        test_mat_init(&o, 25, 25, 0.15, task_seed(29));
        o.zeros = 1;
        p[n].name = "explicit zeros";
        p[n].A = p[n].B = NULL;
        *st = test_rand_csr(ctx, &o, &p[n].A);
        if (*st == DSMM_OK) *st = dsmm_csr_transpose(ctx, p[n].A, &p[n].B);
        n++;
    }
    return n;
}

static void free_pairs(pair *p, int n)
{
    for (int i = 0; i < n; i++) {
        dsmm_csr_destroy(&p[i].A);
        dsmm_csr_destroy(&p[i].B);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* One distributed product against the serial one                                             */
/* ------------------------------------------------------------------------------------------ */

/* spgemm_vs_serial: C = A * B on pr x pc with prefetch and semiring sr (type: opts.spgemm.type)
 * equals the serial dsmm_csr_spgemm_ex of the global inputs: shape, pattern and values within
 * rtol on every tile and gathered. */
static int spgemm_vs_serial(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                            int prefetch, dsmm_semiring sr, double rtol, const char *name,
                            dsmm_dist_alg alg, int qcap)
{
    char what[240];
    snprintf(what, sizeof what, "%s on %d x %d, prefetch %d, %s, %s, queue %d", name, pr, pc,
             prefetch, dsmm_semiring_name(sr), dsmm_dist_alg_name(alg), qcap);
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.semiring = sr;
    dsmm_csr *Cs = NULL;
    dsmm_spgemm_info info;
    CHECK_ALL_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &so, &Cs, &info));
    dsmm_dist *DA = NULL, *DB = NULL, *DC = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &DA));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, g_size - 1, B, pr, pc, &DB));
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.prefetch = prefetch;
    o.spgemm.semiring = sr;
    o.alg = alg;
    o.queue_capacity = qcap;
    // SUMMA: both accumulations, partial products merged and one fused multiply per rank.
    static const dsmm_dist_acc accs[] = {DSMM_ACC_MERGE, DSMM_ACC_FUSED, DSMM_ACC_AUTO};
    for (int a = 0; a < (alg == DSMM_DIST_SUMMA ? 3 : 1); a++) {
        o.accumulate = accs[a];
        dsmm_dist_destroy(&DC);
        CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
        int gpr = 0, gpc = 0;
        dsmm_dist_grid(DC, &gpr, &gpc);
        CHECK_ALL_MSG(gpr == pr && gpc == pc, "%s: C on %d x %d", what, gpr, gpc);
        CHECK_ALL_MSG(dist_near(ctx, DC, Cs, (int)(info.nnz % g_size), rtol, what),
                      "%s, accumulate %d", what, (int)accs[a]);
    }
    // The inputs are only read (checked once per pair and grid).
    if (prefetch) {
        CHECK_ALL_MSG(dist_equals(ctx, DA, A, 0, what), "%s: A changed", what);
        CHECK_ALL_MSG(dist_equals(ctx, DB, B, 0, what), "%s: B changed", what);
    }
    dsmm_dist_destroy(&DA);
    dsmm_dist_destroy(&DB);
    dsmm_dist_destroy(&DC);
    dsmm_csr_destroy(&Cs);
    return TEST_PASS;
}

/* dense_close: |got - want| <= tol * scale entry by entry (scale(i, j) = sum |a| |b|). */
static int dense_close(const dsmm_dense *got, const dsmm_dense *want, const double *scale,
                       dsmm_idx r0, dsmm_idx c0, dsmm_idx ldscale, double tol, const char *what)
{
    for (dsmm_idx i = 0; i < got->nrows; i++)
        for (dsmm_idx j = 0; j < got->ncols; j++) {
            double g = dense_at(got, i, j), w = dense_at(want, r0 + i, c0 + j);
            double sc = scale[(r0 + i) * ldscale + c0 + j];
            if (!(fabs(g - w) <= tol * sc)) {
                fprintf(stderr, "rank %d: %s: C(%lld, %lld) = %.17g, expected %.17g (scale %g)\n",
                        g_rank, what, (long long)(r0 + i), (long long)(c0 + j), g, w, sc);
                return 0;
            }
        }
    return 1;
}

/* spmm_vs_serial: C = A * B with B (n x k, `type`) on A's grid equals the serial dsmm_csr_spmm,
 * tile by tile and gathered, within tol relative to sum |a| |b|. */
static int spmm_vs_serial(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type type, int pr,
                          int pc, int prefetch, const char *name, dsmm_dist_alg alg, int qcap)
{
    char what[240];
    snprintf(what, sizeof what, "spmm %s k %lld %s on %d x %d, prefetch %d, %s, queue %d", name,
             (long long)k, dsmm_type_name(type), pr, pc, prefetch, dsmm_dist_alg_name(alg), qcap);
    double tol = type == DSMM_FLOAT ? 1e-5 : 1e-12;
    dsmm_dense *Bg = NULL, *Cs = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, A->ncols, k, type, task_seed(5000 + (uint64_t)k), &Bg));
    CHECK_ALL_OK(ctx, dsmm_dense_create(ctx, A->nrows, k, type, &Cs));
    CHECK_ALL_OK(ctx, dsmm_csr_spmm(ctx, A, Bg, Cs, NULL, NULL));
    double *scale = calloc((size_t)(A->nrows * k) + 1, sizeof *scale);
    CHECK_ALL(scale != NULL);
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)
            for (dsmm_idx j = 0; j < k; j++)
                scale[i * k + j] +=
                    fabs(dsmm_csr_value(A, e)) * fabs(dense_at(Bg, dsmm_csr_col(A, e), j));
    dsmm_dist *DA = NULL;
    dsmm_dist_dense *DB = NULL, *DC = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &DA));
    CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, Bg, pr, pc, &DB));
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.prefetch = prefetch;
    o.alg = alg;
    o.queue_capacity = qcap;
    CHECK_ALL_OK(ctx, dsmm_spmm_ex(ctx, DA, DB, &o, &DC));
    dsmm_idx nr = -1, nc = -1, r0 = -1, c0 = -1;
    int gpr = 0, gpc = 0;
    dsmm_dist_dense_dims(DC, &nr, &nc, &gpr, &gpc);
    CHECK_ALL_MSG(nr == A->nrows && nc == k && gpr == pr && gpc == pc,
                  "%s: C %lld x %lld on %d x %d", what, (long long)nr, (long long)nc, gpr, gpc);
    dsmm_idx rb[MAX_SHAPES + 1], cb[MAX_SHAPES + 1];
    split_bounds(A->nrows, pr, rb);
    split_bounds(k, pc, cb);
    dsmm_dense *T = dsmm_dist_dense_local(DC, &r0, &c0);
    int myrow = g_rank / pc, mycol = g_rank % pc;
    CHECK_ALL_MSG(T != NULL && T->type == type && r0 == rb[myrow] && c0 == cb[mycol] &&
                      T->nrows == rb[myrow + 1] - rb[myrow] &&
                      T->ncols == cb[mycol + 1] - cb[mycol] && T->ld == T->ncols,
                  "%s: C's tile", what);
    CHECK_ALL(dense_close(T, Cs, scale, r0, c0, k, tol, what));
    dsmm_dense *G = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_dense_gather(ctx, DC, g_size - 1, &G));
    int ok = 1;
    if (g_rank == g_size - 1)
        ok = G != NULL && G->nrows == A->nrows && G->ncols == k && G->type == type &&
             dense_close(G, Cs, scale, 0, 0, k, tol, what);
    CHECK_ALL_MSG(ok, "%s: gathered C", what);
    free(scale);
    dsmm_dense_destroy(&G);
    dsmm_dist_destroy(&DA);
    dsmm_dist_dense_destroy(&DB);
    dsmm_dist_dense_destroy(&DC);
    dsmm_dense_destroy(&Bg);
    dsmm_dense_destroy(&Cs);
    return TEST_PASS;
}

#endif // DSMM_TEST_DIST_PRODUCTS_H
