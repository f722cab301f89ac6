// tests/dist/test_dist.c: distributed matrices (src/dist/dist.c, dense.c, perm.c) on every
// grid shape of P: scatter -> gather round trips of random and real matrices (0x0, 0xn, smaller
// than the grid, empty rows and tiles, rectangular), tile shapes and offsets of the equal split,
// assembly from triples spread over ranks with duplicates across ranks, redistribution,
// symmetric permutation, dense scatter/gather/redistribute, and errors that every rank must
// report alike (bad grids and roots, stale handles, a failure on one rank only).
#include <signal.h>
#include <unistd.h>

#include "dist_common.h"

#define MAX_SHAPES 16

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct rand_case {
    const char *name;
    dsmm_idx m, n;
    double density, empty_rows, empty_cols;
    dsmm_type type;
    int zeros, col_bits;
    dsmm_idx dense_row;
} rand_case;

// Shapes listed on purpose: empty, smaller than any grid of 2..9 ranks, skinny both ways,
// empty rows/columns (so whole tiles are empty), a dense row, explicit zeros, every type.
static const rand_case rand_cases[] = {
    {"0x0", 0, 0, 0.0, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"0x5", 0, 5, 0.0, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"5x0", 5, 0, 0.0, 0, 0, DSMM_FLOAT, 0, 64, -1},
    {"1x1", 1, 1, 1.0, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"1x1 empty", 1, 1, 0.0, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"2x3", 2, 3, 0.7, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"3x2 pattern", 3, 2, 0.7, 0, 0, DSMM_PATTERN, 0, 64, -1},
    {"1x40", 1, 40, 0.5, 0, 0, DSMM_DOUBLE, 0, 64, -1},
    {"40x1", 40, 1, 0.5, 0, 0, DSMM_FLOAT, 0, 64, -1},
    {"7x5 empty rows", 7, 5, 0.6, 0.4, 0.2, DSMM_DOUBLE, 0, 64, -1},
    {"41x26 zeros", 41, 26, 0.15, 0.1, 0.1, DSMM_DOUBLE, 1, 64, -1},
    {"26x41 dense row 32-bit", 26, 41, 0.1, 0, 0, DSMM_FLOAT, 0, 32, 5},
    {"60x60 sparse (empty tiles)", 60, 60, 0.004, 0.3, 0.3, DSMM_DOUBLE, 0, 64, -1},
    {"50x70 pattern", 50, 70, 0.08, 0.05, 0, DSMM_PATTERN, 0, 32, -1},
};
#define NRAND (sizeof rand_cases / sizeof rand_cases[0])

static dsmm_status make_rand(dsmm_ctx *ctx, const rand_case *c, uint64_t seed, dsmm_csr **A)
{
    test_mat o;
    test_mat_init(&o, c->m, c->n, c->density, seed);
    o.type = c->type;
    o.empty_rows = c->empty_rows;
    o.empty_cols = c->empty_cols;
    o.zeros = c->zeros;
    o.col_bits = c->col_bits;
    o.dense_row = c->dense_row;
    return test_rand_csr(ctx, &o, A);
}

/* One round trip: scatter from root_s (A passed only there when only_root), checks, gather on
 * root_g. */
static int roundtrip(dsmm_ctx *ctx, const dsmm_csr *A, int pr, int pc, int root_s, int root_g,
                     int only_root, const char *name)
{
    char what[200];
    snprintf(what, sizeof what, "%s on %d x %d (scatter from %d, gather on %d)", name, pr, pc,
             root_s, root_g);
    dsmm_dist *D = NULL;
    const dsmm_csr *in = (!only_root || g_rank == root_s) ? A : NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, root_s, in, pr, pc, &D));
    int gpr = 0, gpc = 0;
    dsmm_dist_grid(D, &gpr, &gpc);
    CHECK_ALL(gpr == pr && gpc == pc);
    CHECK_ALL_MSG(dist_equals(ctx, D, A, root_g, what), "%s", what);
    dsmm_dist_destroy(&D);
    CHECK_ALL(D == NULL);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Scatter / gather                                                                           */
/* ------------------------------------------------------------------------------------------ */

static int test_roundtrip_random(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    for (size_t c = 0; c < NRAND; c++) {
        dsmm_csr *A = NULL;
        CHECK_ALL_OK(ctx, make_rand(ctx, &rand_cases[c], task_seed(100 + c), &A));
        for (int s = 0; s < ns; s++) {
            int r1 = (int)((c + (size_t)s) % (size_t)g_size);
            if (roundtrip(ctx, A, pr[s], pc[s], 0, g_size - 1, 1, rand_cases[c].name))
                return TEST_FAIL;
            if (roundtrip(ctx, A, pr[s], pc[s], r1, 0, 0, rand_cases[c].name)) return TEST_FAIL;
        }
        dsmm_csr_destroy(&A);
    }
    // R-MAT and Erdős–Rényi graphs (skewed and uniform tiles).
    dsmm_csr *R = NULL, *E = NULL;
    CHECK_ALL_OK(ctx, test_rand_rmat(ctx, 8, 6, 0, DSMM_DOUBLE, task_seed(1), &R));
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 301, 5, 1, DSMM_PATTERN, task_seed(2), &E));
    for (int s = 0; s < ns; s++) {
        if (roundtrip(ctx, R, pr[s], pc[s], 0, 0, 1, "rmat 8")) return TEST_FAIL;
        if (roundtrip(ctx, E, pr[s], pc[s], g_size - 1, 0, 1, "er 301")) return TEST_FAIL;
    }
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&E);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_roundtrip_data(void)
{
    static const char *files[] = {"cora.adj.mtx.gz", "hep-th.mtx.gz", "bcsstk13.mtx.gz"};
    static const dsmm_idx nnz[] = {10556, 31502, 83883}; // tests/data/README.md
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    for (int f = 0; f < 3; f++) {
        dsmm_csr *A = NULL;
        CHECK_ALL_OK(ctx, read_data(ctx, files[f], &A));
        CHECK_ALL_EQ(A->nnz, nnz[f]);
        for (int s = 0; s < ns; s++)
            if (roundtrip(ctx, A, pr[s], pc[s], f % g_size, (f + 1) % g_size, 1, files[f]))
                return TEST_FAIL;
        dsmm_csr_destroy(&A);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// The context's default grid: as square as possible, or what dsmm_ctx_set_grid set.
static int test_default_grid(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    CHECK_ALL_OK(ctx, make_rand(ctx, &rand_cases[10], task_seed(3), &A));
    int want_pr = 0, want_pc = 0, pr = 0, pc = 0;
    CHECK_ALL_OK(ctx, dsmm_grid_dims(g_size, &want_pr, &want_pc));
    dsmm_dist *D = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    dsmm_dist_grid(D, &pr, &pc);
    CHECK_ALL(pr == want_pr && pc == want_pc);
    CHECK_ALL(dist_equals(ctx, D, A, 0, "default grid"));
    dsmm_dist_destroy(&D);
    CHECK_ALL_ST(ctx, dsmm_ctx_set_grid(ctx, g_size + 1, 1), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_ctx_set_grid(ctx, 0, 1), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_OK(ctx, dsmm_ctx_set_grid(ctx, g_size, 1));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    dsmm_dist_grid(D, &pr, &pc);
    CHECK_ALL(pr == g_size && pc == 1);
    CHECK_ALL(dist_equals(ctx, D, A, 0, "set grid P x 1"));
    dsmm_dist_destroy(&D);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Assembly from triples held by any rank                                                     */
/* ------------------------------------------------------------------------------------------ */

// Ranks r % 3 == 2 hold no entries (alternately a NULL and an empty T); the others hold a
// random share. Rank 0 always holds entries.
static int holds(int r)
{
    return g_size == 1 || r % 3 != 2;
}

static int nholders(void)
{
    int n = 0;
    for (int r = 0; r < g_size; r++) n += holds(r);
    return n;
}

static int holder(int i) // the i-th holding rank
{
    for (int r = 0; r < g_size; r++)
        if (holds(r) && i-- == 0) return r;
    return 0;
}

/* make_share: this rank's triples of A: each entry to a random holder; every third entry is
 * also repeated on another holder (a rank of its own when there are several): halves of the
 * value under SUM (exact for test values), the value minus 1 under MAX, the pattern entry
 * again for pattern matrices. *T is NULL on ranks (r / 3) even among non-holders. */
static dsmm_status make_share(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_dup dup, uint64_t seed,
                              dsmm_coo **T)
{
    *T = NULL;
    if (!holds(g_rank) && (g_rank / 3) % 2 == 0) return DSMM_OK;
    dsmm_status st = dsmm_coo_create(ctx, A->nrows, A->ncols, 0, A->type, T);
    if (st != DSMM_OK || !holds(g_rank)) return st;
    int nh = nholders();
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            double v = dsmm_csr_value(A, k);
            int o = holder((int)(dsmm_rng_at(seed, 1, (uint64_t)k) % (uint64_t)nh));
            int o2 = holder((int)((dsmm_rng_at(seed, 1, (uint64_t)k) + 1) % (uint64_t)nh));
            int twice = k % 3 == 0;
            double v1 = v, v2 = v;
            if (twice && dup == DSMM_DUP_SUM) v1 = v2 = v / 2;
            if (twice && dup == DSMM_DUP_MAX) v2 = v - 1.0;
            if (o == g_rank && (st = dsmm_coo_push(*T, i, j, v1)) != DSMM_OK) return st;
            if (twice && o2 == g_rank && (st = dsmm_coo_push(*T, i, j, v2)) != DSMM_OK) return st;
        }
    }
    return DSMM_OK;
}

static int test_from_coo(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    static const rand_case cases[] = {
        {"37x23", 37, 23, 0.2, 0.2, 0.1, DSMM_DOUBLE, 0, 64, -1},
        {"2x3", 2, 3, 0.8, 0, 0, DSMM_DOUBLE, 0, 64, -1},
        {"30x30 pattern", 30, 30, 0.1, 0.1, 0, DSMM_PATTERN, 0, 64, -1},
    };
    for (size_t c = 0; c < 3; c++) {
        dsmm_csr *A = NULL;
        CHECK_ALL_OK(ctx, make_rand(ctx, &cases[c], task_seed(200 + c), &A));
        for (int s = 0; s < ns; s++) {
            static const dsmm_dup dups[] = {DSMM_DUP_SUM, DSMM_DUP_MAX};
            for (int d = 0; d < (A->type == DSMM_PATTERN ? 1 : 2); d++) {
                char what[160];
                snprintf(what, sizeof what, "from_coo %s dup %d on %d x %d", cases[c].name,
                         (int)dups[d], pr[s], pc[s]);
                dsmm_coo *T = NULL;
                dsmm_dist *D = NULL;
                CHECK_ALL_OK(ctx, make_share(ctx, A, dups[d], task_seed(300 + (uint64_t)s), &T));
                CHECK_ALL_OK(
                    ctx, dsmm_dist_from_coo(ctx, A->nrows, A->ncols, T, dups[d], pr[s], pc[s], &D));
                CHECK_ALL_MSG(dist_equals(ctx, D, A, s % g_size, what), "%s", what);
                dsmm_dist_destroy(&D);
                dsmm_coo_destroy(&T);
            }
        }
        dsmm_csr_destroy(&A);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// DSMM_DUP_ERROR: accepted without repeats; a repeat (across ranks when P > 1) and an entry
// outside the matrix fail on every rank with DSMM_ERR_ARG (dsmm.h), leaving *out NULL.
static int test_from_coo_errors(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    static const rand_case c = {"19x17", 19, 17, 0.3, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    dsmm_csr *A = NULL;
    CHECK_ALL_OK(ctx, make_rand(ctx, &c, task_seed(400), &A));
    CHECK_ALL(A->nnz > 0);
    int pr = 0, pc = 0;
    CHECK_ALL_OK(ctx, dsmm_grid_dims(g_size, &pr, &pc));
    int last = holder(nholders() - 1);
    dsmm_dist *D = NULL;
    dsmm_coo *T = NULL;

    // Each entry once, spread over the ranks.
    CHECK_ALL_OK(ctx, dsmm_coo_create(ctx, A->nrows, A->ncols, 0, DSMM_DOUBLE, &T));
    dsmm_status pst = DSMM_OK;
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if ((int)(k % g_size) == g_rank && pst == DSMM_OK)
                pst = dsmm_coo_push(T, i, dsmm_csr_col(A, k), dsmm_csr_value(A, k));
    CHECK_ALL_OK(ctx, pst);
    CHECK_ALL_OK(ctx, dsmm_dist_from_coo(ctx, A->nrows, A->ncols, T, DSMM_DUP_ERROR, pr, pc, &D));
    CHECK_ALL(dist_equals(ctx, D, A, 0, "from_coo DUP_ERROR without repeats"));
    dsmm_dist_destroy(&D);

    // The first entry again on the last holder (another rank than its first owner, 0): under
    // SUM the triples give A with 1 added there (the DUP_ERROR case is checked last).
    dsmm_idx i0 = 0;
    while (A->rowptr[i0 + 1] == 0) i0++;
    CHECK_ALL_OK(ctx, g_rank == last ? dsmm_coo_push(T, i0, dsmm_csr_col(A, 0), 1.0) : DSMM_OK);
    CHECK_ALL_OK(ctx, dsmm_dist_from_coo(ctx, A->nrows, A->ncols, T, DSMM_DUP_SUM, pr, pc, &D));
    dsmm_csr *A1 = NULL;
    CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &A1));
    ((double *)A1->val)[0] += 1.0;
    CHECK_ALL(dist_equals(ctx, D, A1, 0, "from_coo SUM with one repeat"));
    dsmm_dist_destroy(&D);
    dsmm_csr_destroy(&A1);

    // Out of range on the last rank only: row == nrows, then column -1.
    for (int bad = 0; bad < 2; bad++) {
        dsmm_coo *T2 = NULL;
        CHECK_ALL_OK(ctx, dsmm_coo_create(ctx, A->nrows, A->ncols, 0, DSMM_DOUBLE, &T2));
        CHECK_ALL_OK(ctx, dsmm_coo_push(T2, 0, 0, 1.0));
        if (g_rank == g_size - 1) {
            if (bad == 0)
                T2->row[0] = A->nrows;
            else
                T2->col[0] = -1;
        }
        D = (dsmm_dist *)&D; // must be reset to NULL on error
        CHECK_ALL_ST(ctx, dsmm_dist_from_coo(ctx, A->nrows, A->ncols, T2, DSMM_DUP_SUM, pr, pc, &D),
                     DSMM_ERR_ARG);
        CHECK_ALL(D == NULL);
        dsmm_ctx_clear_error(ctx);
        dsmm_coo_destroy(&T2);
    }
    // Ranks disagreeing on the shape.
    if (g_size > 1) {
        D = NULL;
        CHECK_ALL_ST(ctx,
                     dsmm_dist_from_coo(ctx, A->nrows + (g_rank == g_size - 1), A->ncols, NULL,
                                        DSMM_DUP_SUM, pr, pc, &D),
                     DSMM_ERR_ARG);
        CHECK_ALL(D == NULL);
        dsmm_ctx_clear_error(ctx);
    }
    // The repeat under DSMM_DUP_ERROR: DSMM_ERR_FORMAT on every rank (dsmm.h's doc block of
    // dsmm_dist_from_coo, as dsmm_coo_to_csr), naming the entry.
    D = (dsmm_dist *)&D;
    CHECK_ALL_ST(ctx, dsmm_dist_from_coo(ctx, A->nrows, A->ncols, T, DSMM_DUP_ERROR, pr, pc, &D),
                 DSMM_ERR_FORMAT);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "repeated entry") != NULL);
    CHECK_ALL(D == NULL);
    dsmm_ctx_clear_error(ctx);
    dsmm_coo_destroy(&T);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Redistribution and permutation                                                             */
/* ------------------------------------------------------------------------------------------ */

static int test_redistribute(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    static const rand_case cases[] = {
        {"45x31", 45, 31, 0.12, 0.1, 0.1, DSMM_DOUBLE, 0, 64, -1},
        {"3x2", 3, 2, 0.9, 0, 0, DSMM_FLOAT, 0, 64, -1},
        {"33x33 pattern sparse", 33, 33, 0.01, 0.2, 0, DSMM_PATTERN, 0, 64, -1},
    };
    for (size_t c = 0; c < 3; c++) {
        dsmm_csr *A = NULL;
        CHECK_ALL_OK(ctx, make_rand(ctx, &cases[c], task_seed(500 + c), &A));
        for (int s = 0; s < ns; s++) {
            dsmm_dist *D = NULL, *E = NULL, *F = NULL, *G = NULL;
            CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr[s], pc[s], &D));
            // 2D -> P x 1 -> 1 x P -> back, and to every other shape.
            CHECK_ALL_OK(ctx, dsmm_dist_redistribute(ctx, D, g_size, 1, &E));
            CHECK_ALL(dist_equals(ctx, E, A, 0, "redistribute to P x 1"));
            CHECK_ALL_OK(ctx, dsmm_dist_redistribute(ctx, E, 1, g_size, &F));
            CHECK_ALL(dist_equals(ctx, F, A, g_size - 1, "redistribute P x 1 -> 1 x P"));
            CHECK_ALL_OK(ctx, dsmm_dist_redistribute(ctx, F, pr[s], pc[s], &G));
            CHECK_ALL(dist_equals(ctx, G, A, 0, "redistribute 1 x P -> 2D"));
            dsmm_dist_destroy(&E);
            dsmm_dist_destroy(&F);
            dsmm_dist_destroy(&G);
            for (int t = 0; t < ns; t++) {
                char what[96];
                snprintf(what, sizeof what, "%s: %d x %d -> %d x %d", cases[c].name, pr[s], pc[s],
                         pr[t], pc[t]);
                CHECK_ALL_OK(ctx, dsmm_dist_redistribute(ctx, D, pr[t], pc[t], &E));
                CHECK_ALL_MSG(dist_equals(ctx, E, A, t % g_size, what), "%s", what);
                dsmm_dist_destroy(&E);
            }
            // The input is only read.
            CHECK_ALL(dist_equals(ctx, D, A, 0, "redistribute input kept"));
            dsmm_dist_destroy(&D);
        }
        dsmm_csr_destroy(&A);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* permuted_direct: B with B(perm[i], perm[j]) = A(i, j), built entry by entry. */
static dsmm_status permuted_direct(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_idx *perm,
                                   dsmm_csr **B)
{
    dsmm_coo *T = NULL;
    dsmm_status st = dsmm_coo_create(ctx, A->nrows, A->ncols, A->nnz, A->type, &T);
    for (dsmm_idx i = 0; st == DSMM_OK && i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; st == DSMM_OK && k < A->rowptr[i + 1]; k++)
            st = dsmm_coo_push(T, perm[i], perm[dsmm_csr_col(A, k)], dsmm_csr_value(A, k));
    if (st == DSMM_OK) st = dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, B);
    dsmm_coo_destroy(&T);
    return st;
}

static int test_permute(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    static const rand_case rc = {"53x53", 53, 53, 0.08, 0.1, 0.1, DSMM_DOUBLE, 0, 64, -1};
    static const rand_case tiny = {"2x2", 2, 2, 1.0, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    dsmm_csr *mats[3] = {NULL, NULL, NULL};
    CHECK_ALL_OK(ctx, make_rand(ctx, &rc, task_seed(600), &mats[0]));
    CHECK_ALL_OK(ctx, make_rand(ctx, &tiny, task_seed(601), &mats[1]));
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &mats[2]));
    for (int m = 0; m < 3; m++) {
        const dsmm_csr *A = mats[m];
        dsmm_idx n = A->nrows;
        dsmm_idx *perm = NULL, *inv = NULL;
        CHECK_ALL_OK(ctx, dsmm_perm_random(ctx, n, task_seed(700 + (uint64_t)m), &perm));
        // A permutation, the same on every rank.
        char *seen = calloc((size_t)n + 1, 1);
        int isperm = seen != NULL;
        for (dsmm_idx i = 0; isperm && i < n; i++) {
            if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
                isperm = 0;
            else
                seen[perm[i]] = 1;
        }
        free(seen);
        CHECK_ALL(isperm);
        dsmm_idx *p0 = malloc(((size_t)n + 1) * sizeof *p0);
        CHECK_ALL(p0 != NULL);
        memcpy(p0, perm, (size_t)n * sizeof *p0);
        MPI_Bcast(p0, (int)n, MPI_INT64_T, 0, MPI_COMM_WORLD);
        CHECK_ALL(memcmp(p0, perm, (size_t)n * sizeof *p0) == 0);
        free(p0);
        CHECK_ALL_OK(ctx, dsmm_perm_invert(ctx, n, perm, &inv));
        int inverse = 1;
        for (dsmm_idx i = 0; i < n; i++) inverse &= inv[perm[i]] == i;
        CHECK_ALL(inverse);
        // The direct definition, and dsmm_csr_permute's convention B(i, j) = A(p[i], q[j]):
        // with p = q = inv it is the same matrix.
        dsmm_csr *B = NULL, *Bs = NULL;
        CHECK_ALL_OK(ctx, permuted_direct(ctx, A, perm, &B));
        CHECK_ALL_OK(ctx, dsmm_csr_permute(ctx, A, inv, inv, &Bs));
        CHECK_ALL(csr_equal(ctx, Bs, B, 0.0, "csr_permute(A, inv, inv) vs direct"));
        for (int s = 0; s < ns; s++) {
            dsmm_dist *D = NULL, *P1 = NULL, *P2 = NULL;
            CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr[s], pc[s], &D));
            CHECK_ALL_OK(ctx, dsmm_dist_permute(ctx, D, perm, &P1));
            int gpr, gpc;
            dsmm_dist_grid(P1, &gpr, &gpc);
            CHECK_ALL(gpr == pr[s] && gpc == pc[s]);
            CHECK_ALL(dist_equals(ctx, P1, B, g_size - 1, "dist_permute(A, perm)"));
            CHECK_ALL_OK(ctx, dsmm_dist_permute(ctx, P1, inv, &P2));
            CHECK_ALL(dist_equals(ctx, P2, A, 0, "dist_permute(dist_permute(A, perm), inv)"));
            dsmm_dist_destroy(&D);
            dsmm_dist_destroy(&P1);
            dsmm_dist_destroy(&P2);
        }
        dsmm_csr_destroy(&B);
        dsmm_csr_destroy(&Bs);
        perm = dsmm_free(ctx, perm);
        inv = dsmm_free(ctx, inv);
    }
    // A non-square matrix cannot be permuted symmetrically: the same failure on every rank.
    dsmm_csr *R = NULL;
    static const rand_case rect = {"7x9", 7, 9, 0.3, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    CHECK_ALL_OK(ctx, make_rand(ctx, &rect, task_seed(602), &R));
    dsmm_dist *D = NULL, *P1 = NULL;
    dsmm_idx id[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, R, 0, 0, &D));
    dsmm_status st = dsmm_dist_permute(ctx, D, id, &P1);
    int sti = (int)st, st0 = sti;
    MPI_Bcast(&st0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_ALL_MSG(st != DSMM_OK && sti == st0 && P1 == NULL, "non-square permute gave %s",
                  dsmm_status_name(st));
    dsmm_ctx_clear_error(ctx);
    dsmm_dist_destroy(&D);
    dsmm_csr_destroy(&R);
    for (int m = 0; m < 3; m++) dsmm_csr_destroy(&mats[m]);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Dense                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* dense_tile_matches: this rank's tile of B is the equal-split block of the global G (G NULL:
 * zeros), row-major with ld == its columns. Local. */
static int dense_tile_matches(dsmm_dist_dense *B, dsmm_idx m, dsmm_idx k, dsmm_type type,
                              const dsmm_dense *G, const char *what)
{
    dsmm_idx nr = -1, nc = -1, r0 = -1, c0 = -1;
    int pr = 0, pc = 0;
    dsmm_dist_dense_dims(B, &nr, &nc, &pr, &pc);
    if (nr != m || nc != k || pr * pc != g_size) {
        fprintf(stderr, "rank %d: %s: dims %lld x %lld grid %d x %d\n", g_rank, what, (long long)nr,
                (long long)nc, pr, pc);
        return 0;
    }
    dsmm_idx rb[MAX_SHAPES + 1], cb[MAX_SHAPES + 1];
    split_bounds(m, pr, rb);
    split_bounds(k, pc, cb);
    int myrow = g_rank / pc, mycol = g_rank % pc;
    dsmm_dense *T = dsmm_dist_dense_local(B, &r0, &c0);
    if (T == NULL || r0 != rb[myrow] || c0 != cb[mycol] || T->nrows != rb[myrow + 1] - rb[myrow] ||
        T->ncols != cb[mycol + 1] - cb[mycol] || T->ld != T->ncols || T->type != type) {
        fprintf(stderr, "rank %d: %s: tile %lld x %lld (ld %lld) at (%lld, %lld) on %d x %d\n",
                g_rank, what, T ? (long long)T->nrows : -1LL, T ? (long long)T->ncols : -1LL,
                T ? (long long)T->ld : -1LL, (long long)r0, (long long)c0, pr, pc);
        return 0;
    }
    for (dsmm_idx i = 0; i < T->nrows; i++)
        for (dsmm_idx j = 0; j < T->ncols; j++) {
            double want = G ? dense_at(G, r0 + i, c0 + j) : 0.0;
            if (dense_at(T, i, j) != want) {
                fprintf(stderr, "rank %d: %s: tile (%lld, %lld) = %g, expected %g\n", g_rank, what,
                        (long long)i, (long long)j, dense_at(T, i, j), want);
                return 0;
            }
        }
    return 1;
}

static int dense_equals(dsmm_ctx *ctx, dsmm_dist_dense *B, const dsmm_dense *G, int root,
                        const char *what)
{
    int ok = dense_tile_matches(B, G->nrows, G->ncols, G->type, G, what);
    dsmm_dense *H = NULL;
    dsmm_status st = dsmm_dist_dense_gather(ctx, B, root, &H);
    if (st != DSMM_OK) {
        fprintf(stderr, "rank %d: %s: dense gather %s: %s\n", g_rank, what, dsmm_status_name(st),
                dsmm_ctx_last_error(ctx));
        ok = 0;
    } else if (g_rank == root) {
        if (H == NULL || H->nrows != G->nrows || H->ncols != G->ncols || H->type != G->type) {
            fprintf(stderr, "rank %d: %s: gathered shape or type differs\n", g_rank, what);
            ok = 0;
        } else {
            for (dsmm_idx i = 0; ok && i < G->nrows; i++)
                for (dsmm_idx j = 0; ok && j < G->ncols; j++)
                    if (dense_at(H, i, j) != dense_at(G, i, j)) {
                        fprintf(stderr, "rank %d: %s: gathered (%lld, %lld) = %g, expected %g\n",
                                g_rank, what, (long long)i, (long long)j, dense_at(H, i, j),
                                dense_at(G, i, j));
                        ok = 0;
                    }
        }
    } else if (H != NULL) {
        fprintf(stderr, "rank %d: %s: dense gather gave a matrix off the root\n", g_rank, what);
        ok = 0;
    }
    dsmm_dense_destroy(&H);
    return all_true(ok);
}

static int test_dense_roundtrip(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    static const dsmm_idx ks[] = {1, 3, 128};
    static const dsmm_idx ms[] = {37, 2, 0};
    static const dsmm_type types[] = {DSMM_DOUBLE, DSMM_FLOAT};
    for (int t = 0; t < 2; t++)
        for (int ki = 0; ki < 3; ki++)
            for (int mi = 0; mi < 3; mi++) {
                dsmm_dense *G = NULL;
                CHECK_ALL_OK(ctx, rand_dense(ctx, ms[mi], ks[ki], types[t],
                                             task_seed(800 + (uint64_t)(t * 9 + ki * 3 + mi)), &G));
                for (int s = 0; s < ns; s++) {
                    char what[128];
                    snprintf(what, sizeof what, "dense %lld x %lld %s on %d x %d",
                             (long long)ms[mi], (long long)ks[ki], dsmm_type_name(types[t]), pr[s],
                             pc[s]);
                    dsmm_dist_dense *B = NULL, *E = NULL, *F = NULL;
                    int root = (s + ki) % g_size;
                    CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, root, g_rank == root ? G : NULL,
                                                              pr[s], pc[s], &B));
                    CHECK_ALL_MSG(dense_equals(ctx, B, G, g_size - 1 - root, what), "%s", what);
                    CHECK_ALL_OK(ctx, dsmm_dist_dense_redistribute(ctx, B, g_size, 1, &E));
                    CHECK_ALL_MSG(dense_equals(ctx, E, G, 0, what), "%s -> P x 1", what);
                    CHECK_ALL_OK(ctx, dsmm_dist_dense_redistribute(ctx, E, 1, g_size, &F));
                    CHECK_ALL_MSG(dense_equals(ctx, F, G, 0, what), "%s -> 1 x P", what);
                    dsmm_dist_dense_destroy(&F);
                    CHECK_ALL_OK(ctx, dsmm_dist_dense_redistribute(ctx, E, pr[s], pc[s], &F));
                    CHECK_ALL_MSG(dense_equals(ctx, F, G, 0, what), "%s -> back", what);
                    dsmm_dist_dense_destroy(&B);
                    dsmm_dist_dense_destroy(&E);
                    dsmm_dist_dense_destroy(&F);
                    CHECK_ALL(B == NULL && E == NULL && F == NULL);
                }
                dsmm_dense_destroy(&G);
            }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_dense_create(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    static const dsmm_idx dims[][2] = {{29, 5}, {1, 1}, {0, 3}, {64, 128}};
    for (int t = 0; t < 2; t++)
        for (int d = 0; d < 4; d++)
            for (int s = 0; s < ns; s++) {
                dsmm_type type = t ? DSMM_FLOAT : DSMM_DOUBLE;
                dsmm_dist_dense *B = NULL;
                CHECK_ALL_OK(ctx, dsmm_dist_dense_create(ctx, dims[d][0], dims[d][1], type, pr[s],
                                                         pc[s], &B));
                CHECK_ALL(dense_tile_matches(B, dims[d][0], dims[d][1], type, NULL, "zeros"));
                dsmm_dist_dense_destroy(&B);
            }
    // Sparse types are not dense types.
    dsmm_dist_dense *B = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_dense_create(ctx, 4, 4, DSMM_PATTERN, 0, 0, &B), DSMM_ERR_ARG);
    CHECK_ALL(B == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Errors every rank reports alike                                                            */
/* ------------------------------------------------------------------------------------------ */

static int test_bad_args(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    static const rand_case c = {"12x9", 12, 9, 0.3, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    CHECK_ALL_OK(ctx, make_rand(ctx, &c, task_seed(900), &A));
    dsmm_dense *G = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, 12, 3, DSMM_DOUBLE, task_seed(901), &G));
    dsmm_dist *D = NULL;
    dsmm_dist_dense *B = NULL;
    // Grids whose size is not P (or only one dimension 0).
    static const int bad[][2] = {{-1, -1}, {2, -1}, {0, 1}, {1, 0}, {-1, 0}};
    int nb = 5;
    int grids[8][2];
    for (int b = 0; b < nb; b++) {
        grids[b][0] = bad[b][0] < 0 ? g_size + 1 : bad[b][0];
        grids[b][1] = bad[b][1] < 0 ? (bad[b][0] == 2 ? g_size : 1) : bad[b][1];
    }
    for (int b = 0; b < nb; b++) {
        int pr = grids[b][0], pc = grids[b][1];
        D = (dsmm_dist *)&D;
        CHECK_ALL_ST(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &D), DSMM_ERR_ARG);
        CHECK_ALL(D == NULL);
        CHECK_ALL_ST(ctx, dsmm_dist_from_coo(ctx, 3, 3, NULL, DSMM_DUP_SUM, pr, pc, &D),
                     DSMM_ERR_ARG);
        B = (dsmm_dist_dense *)&B;
        CHECK_ALL_ST(ctx, dsmm_dist_dense_scatter(ctx, 0, G, pr, pc, &B), DSMM_ERR_ARG);
        CHECK_ALL(B == NULL);
        CHECK_ALL_ST(ctx, dsmm_dist_dense_create(ctx, 3, 3, DSMM_DOUBLE, pr, pc, &B), DSMM_ERR_ARG);
        dsmm_ctx_clear_error(ctx);
    }
    // Roots out of range; A NULL on the root.
    CHECK_ALL_ST(ctx, dsmm_dist_scatter(ctx, g_size, A, 0, 0, &D), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_dist_scatter(ctx, -1, A, 0, 0, &D), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_dist_scatter(ctx, g_size - 1, g_rank == g_size - 1 ? NULL : A, 0, 0, &D),
                 DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_dist_dense_scatter(ctx, g_size, G, 0, 0, &B), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_dist_dense_scatter(ctx, 0, g_rank == 0 ? NULL : G, 0, 0, &B),
                 DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, G, 0, 0, &B));
    dsmm_csr *H = (dsmm_csr *)&H;
    CHECK_ALL_ST(ctx, dsmm_dist_gather(ctx, D, g_size, &H), DSMM_ERR_ARG);
    CHECK_ALL(H == NULL);
    CHECK_ALL_ST(ctx, dsmm_dist_gather(ctx, D, -1, &H), DSMM_ERR_ARG);
    dsmm_dense *HD = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_dense_gather(ctx, B, g_size, &HD), DSMM_ERR_ARG);
    CHECK_ALL(HD == NULL);
    dsmm_dist *E = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_redistribute(ctx, D, g_size + 1, 1, &E), DSMM_ERR_ARG);
    CHECK_ALL(E == NULL);
    dsmm_ctx_clear_error(ctx);
    // Still usable after the failures, and nothing leaked by them.
    CHECK_ALL(dist_equals(ctx, D, A, 0, "after bad arguments"));
    dsmm_dist_destroy(&D);
    dsmm_dist_dense_destroy(&B);
    dsmm_dense_destroy(&G);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// An allocator that keeps freed blocks until the end, so a stale handle still points at
// readable memory (with its magic overwritten) and the check can be tested without a
// use-after-free.
typedef struct quarantine {
    void **blocks;
    size_t n, cap;
} quarantine;

static void *q_malloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void *q_realloc(void *user, void *p, size_t size)
{
    (void)user;
    return realloc(p, size);
}

static void q_free(void *user, void *p)
{
    quarantine *q = user;
    if (p == NULL) return;
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 1024;
        void **b = realloc(q->blocks, cap * sizeof *b);
        if (b == NULL) {
            free(p);
            return;
        }
        q->blocks = b;
        q->cap = cap;
    }
    q->blocks[q->n++] = p;
}

static int test_stale_handle(void)
{
    quarantine q = {NULL, 0, 0};
    dsmm_allocator al = {q_malloc, q_realloc, q_free, &q};
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    CHECK_ALL_OK(ctx, dsmm_ctx_set_allocator(ctx, &al));
    dsmm_csr *A = NULL;
    static const rand_case c = {"10x10", 10, 10, 0.3, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    CHECK_ALL_OK(ctx, make_rand(ctx, &c, task_seed(950), &A));
    dsmm_dense *G = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, 10, 2, DSMM_DOUBLE, task_seed(951), &G));
    dsmm_dist *D = NULL, *E = NULL;
    dsmm_dist_dense *B = NULL, *C = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, G, 0, 0, &B));
    dsmm_dist *stale = D;
    dsmm_dist_dense *staled = B;
    dsmm_dist_destroy(&D);
    dsmm_dist_dense_destroy(&B);
    CHECK_ALL(D == NULL && B == NULL);
    dsmm_csr *H = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_gather(ctx, stale, 0, &H), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_dist_redistribute(ctx, stale, 0, 0, &E), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_spgemm(ctx, stale, stale, &E), DSMM_ERR_ARG);
    CHECK_ALL(E == NULL);
    dsmm_dense *HD = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_dense_gather(ctx, staled, 0, &HD), DSMM_ERR_ARG);
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    CHECK_ALL_ST(ctx, dsmm_spmm(ctx, D, staled, &C), DSMM_ERR_ARG);
    CHECK_ALL(C == NULL);
    // NULL handles too.
    CHECK_ALL_ST(ctx, dsmm_dist_gather(ctx, NULL, 0, &H), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_spgemm(ctx, D, NULL, &E), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_dist_destroy(&D);
    dsmm_dense_destroy(&G);
    dsmm_csr_destroy(&A);
    int clean = test_ctx_done(&ctx) == 0;
    for (size_t i = 0; i < q.n; i++) free(q.blocks[i]);
    free(q.blocks);
    CHECK_ALL(clean);
    return TEST_PASS;
}

// What a rank was doing when the alarm rang: a hang is reported, not just killed.
static const char *volatile alarm_phase = "";

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n =
        snprintf(msg, sizeof msg, "rank %d/%d: test_one_rank_fails: no answer within %d s in %s\n",
                 g_rank, g_size, 60, alarm_phase);
    if (n > 0 && write(2, msg, (size_t)n) < 0) n = 0;
    _exit(1);
}

// A failure on one rank only (a tiny memory budget on the last rank) makes every rank return
// the same status, within a bounded time (SIGALRM ends a hang), and the context stays usable.
static int test_one_rank_fails(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_csr *Big = NULL;
    static const rand_case c = {"48x48", 48, 48, 0.2, 0, 0, DSMM_DOUBLE, 0, 64, -1};
    CHECK_ALL_OK(ctx, make_rand(ctx, &c, task_seed(960), &A));
    CHECK_ALL_OK(ctx, make_rand(ctx, &c, task_seed(961), &Big));
    dsmm_dense *G = NULL;
    CHECK_ALL_OK(ctx, rand_dense(ctx, 48, 8, DSMM_DOUBLE, task_seed(962), &G));
    size_t budget = dsmm_ctx_mem_budget(ctx);
    int last = g_size - 1;
    signal(SIGALRM, on_alarm);
    alarm(60);
    // The grid is fetched (and its communicators made) before the failures below; a fresh
    // context, where the failure comes before the first use of the grid, is tried last.
    dsmm_dist *W = NULL;
    alarm_phase = "warm-up scatter";
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &W));
    dsmm_dist_destroy(&W);
    for (int op = 0; op < 4; op++) {
        dsmm_dist *D = NULL, *E = NULL;
        dsmm_dist_dense *B = NULL;
        dsmm_csr *H = NULL;
        if (op >= 2) CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
        if (g_rank == last) dsmm_ctx_set_mem_budget(ctx, 1);
        dsmm_status st = DSMM_OK;
        static const char *names[] = {"scatter", "dense scatter", "gather on the failing rank",
                                      "spgemm"};
        const char *name = names[op];
        alarm_phase = name;
        switch (op) {
        case 0:
            st = dsmm_dist_scatter(ctx, 0, A, 0, 0, &E);
            break;
        case 1:
            st = dsmm_dist_dense_scatter(ctx, 0, G, 0, 0, &B);
            break;
        case 2:
            st = dsmm_dist_gather(ctx, D, last, &H);
            break;
        default:
            st = dsmm_spgemm(ctx, D, D, &E);
            break;
        }
        if (g_rank == last) dsmm_ctx_set_mem_budget(ctx, budget);
        CHECK_ALL_MSG(st == DSMM_ERR_NOMEM, "%s returned %s: %s", name, dsmm_status_name(st),
                      dsmm_ctx_last_error(ctx));
        CHECK_ALL(E == NULL && B == NULL && H == NULL);
        dsmm_ctx_clear_error(ctx);
        dsmm_dist_destroy(&D);
    }
    // Usable afterwards.
    dsmm_dist *D = NULL;
    alarm_phase = "scatter after the failures";
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, Big, 0, 0, &D));
    CHECK_ALL(dist_equals(ctx, D, Big, last, "after a one-rank failure"));
    dsmm_dist_destroy(&D);
    // A fresh context: the last rank fails before the grid exists.
    dsmm_ctx *ctx2 = dist_ctx();
    CHECK_ALL(ctx2 != NULL);
    if (g_rank == last) dsmm_ctx_set_mem_budget(ctx2, 1);
    alarm_phase = "first scatter of a fresh context";
    dsmm_status st = dsmm_dist_scatter(ctx2, 0, A, 0, 0, &D);
    if (g_rank == last) dsmm_ctx_set_mem_budget(ctx2, budget);
    CHECK_ALL_MSG(st == DSMM_ERR_NOMEM && D == NULL, "fresh-context scatter returned %s: %s",
                  dsmm_status_name(st), dsmm_ctx_last_error(ctx2));
    alarm(0);
    signal(SIGALRM, SIG_DFL);
    CHECK_ALL_NO_LEAK(ctx2);
    dsmm_dense_destroy(&G);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&Big);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_roundtrip_random), TEST(test_roundtrip_data),  TEST(test_default_grid),
        TEST(test_from_coo),         TEST(test_from_coo_errors), TEST(test_redistribute),
        TEST(test_permute),          TEST(test_dense_roundtrip), TEST(test_dense_create),
        TEST(test_bad_args),         TEST(test_stale_handle),    TEST(test_one_rank_fails),
    };
    return dist_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
