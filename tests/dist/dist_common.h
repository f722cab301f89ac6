// tests/dist/dist_common.h: helpers shared by the distributed-layer tests: the MPI test main
// (one seed for all ranks, rank 0 reports), collective checks (every rank evaluates the same
// CHECK_ALL sequence and all return together, so a failure never leaves ranks waiting in
// different collectives), grid shapes of P, the equal split rule, real inputs from
// tests/data, and comparisons of distributed matrices with the global matrix every rank holds.
#ifndef DSMM_TEST_DIST_COMMON_H
#define DSMM_TEST_DIST_COMMON_H

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "check.h"
#include "ref.h"

static int g_rank, g_size;

/* all_true: 1 when cond holds on every rank (collective on MPI_COMM_WORLD). */
static inline int all_true(int cond)
{
    int local = cond ? 1 : 0, all = 0;
    MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* CHECK_ALL: cond must hold on every rank; ranks where it fails print; all return together. */
#define CHECK_ALL(cond)                                                                            \
    do {                                                                                           \
        int ok_ = (cond) ? 1 : 0;                                                                  \
        if (!ok_)                                                                                  \
            fprintf(stderr, "%s:%d: rank %d/%d: CHECK_ALL failed: %s\n", __FILE__, __LINE__,       \
                    g_rank, g_size, #cond);                                                        \
        if (!all_true(ok_)) return TEST_FAIL;                                                      \
    } while (0)

#define CHECK_ALL_MSG(cond, ...)                                                                   \
    do {                                                                                           \
        int ok_ = (cond) ? 1 : 0;                                                                  \
        if (!ok_) {                                                                                \
            fprintf(stderr, "%s:%d: rank %d/%d: CHECK_ALL failed: %s: ", __FILE__, __LINE__,       \
                    g_rank, g_size, #cond);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
        if (!all_true(ok_)) return TEST_FAIL;                                                      \
    } while (0)

#define CHECK_ALL_EQ(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            fprintf(stderr, "%s:%d: rank %d/%d: CHECK_ALL_EQ failed: %s == %lld, %s == %lld\n",    \
                    __FILE__, __LINE__, g_rank, g_size, #a, a_, #b, b_);                           \
        if (!all_true(a_ == b_)) return TEST_FAIL;                                                 \
    } while (0)

/* CHECK_ALL_ST: call returns exactly `expected` on every rank. */
#define CHECK_ALL_ST(ctx, call, expected)                                                          \
    do {                                                                                           \
        dsmm_status st_ = (call), want_ = (expected);                                              \
        if (st_ != want_)                                                                          \
            fprintf(stderr, "%s:%d: rank %d/%d: %s returned %s, expected %s: %s\n", __FILE__,      \
                    __LINE__, g_rank, g_size, #call, dsmm_status_name(st_),                        \
                    dsmm_status_name(want_), (ctx) ? dsmm_ctx_last_error(ctx) : "");               \
        if (!all_true(st_ == want_)) return TEST_FAIL;                                             \
    } while (0)

#define CHECK_ALL_OK(ctx, call) CHECK_ALL_ST(ctx, call, DSMM_OK)

/* CHECK_ALL_NO_LEAK: the context leaks nothing on any rank (destroys it). */
#define CHECK_ALL_NO_LEAK(ctx) CHECK_ALL(test_ctx_done(&(ctx)) == 0)

/* dist_ctx: a context over MPI_COMM_WORLD, quiet, without progress output. */
static inline dsmm_ctx *dist_ctx(void)
{
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create_mpi(MPI_COMM_WORLD, &ctx) != DSMM_OK) return NULL;
    dsmm_ctx_set_log(ctx, DSMM_LOG_ERROR, NULL, NULL);
    dsmm_ctx_set_progress(ctx, 0);
    return ctx;
}

/* split_bounds: b[0..p] of the equal split of n into p blocks, the first n % p one longer
 * (the rule of dsmm.h "Process grids", written out independently of the library). */
static inline void split_bounds(dsmm_idx n, int p, dsmm_idx *b)
{
    dsmm_idx q = n / p, r = n % p;
    b[0] = 0;
    for (int i = 0; i < p; i++) b[i + 1] = b[i] + q + (i < r ? 1 : 0);
}

/* grid_shapes: every pr x pc with pr * pc == P (1 x P first, P x 1 last); returns the count. */
static inline int grid_shapes(int P, int *pr, int *pc)
{
    int n = 0;
    for (int r = 1; r <= P; r++)
        if (P % r == 0) {
            pr[n] = r;
            pc[n] = P / r;
            n++;
        }
    return n;
}

/* task_seed: the run's seed mixed with a tag, so each test draws its own inputs. */
static inline uint64_t task_seed(uint64_t tag)
{
    return dsmm_rng_at(test_seed(), 0x64697374ULL, tag);
}

/* read_data: tests/data/name with the reader's defaults (pattern files stay pattern). */
static inline dsmm_status read_data(dsmm_ctx *ctx, const char *name, dsmm_csr **A)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, name);
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    return dsmm_read(ctx, path, &o, A, NULL, NULL);
}

/* csr_equal: A and B have the same shape, pattern and values within rtol (prints the first
 * difference, tagged with what). */
static inline int csr_equal(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, double rtol,
                            const char *what)
{
    dsmm_csr_diff d;
    memset(&d, 0, sizeof d);
    if (A == NULL || B == NULL) {
        fprintf(stderr, "rank %d: %s: %s is NULL\n", g_rank, what, A == NULL ? "got" : "want");
        return 0;
    }
    if (dsmm_csr_compare(ctx, A, B, rtol, 0.0, &d) != DSMM_OK) {
        fprintf(stderr, "rank %d: %s: compare failed: %s\n", g_rank, what,
                dsmm_ctx_last_error(ctx));
        return 0;
    }
    if (!d.equal)
        fprintf(stderr, "rank %d: %s: differ: %s (row %lld col %lld: %.17g vs %.17g)\n", g_rank,
                what, d.what, (long long)d.row, (long long)d.col, d.a, d.b);
    return d.equal;
}

/* tile_matches: this rank's tile of D has the shape and offsets of the equal split on D's grid
 * and holds A(rows, cols) of the global A (values within rtol); it passes dsmm_csr_check, its
 * rows are sorted and its columns are 32-bit. Local (no communication). */
static inline int tile_matches(dsmm_ctx *ctx, const dsmm_dist *D, const dsmm_csr *A, double rtol,
                               const char *what)
{
    int pr = 0, pc = 0, ok = 1;
    dsmm_dist_grid(D, &pr, &pc);
    if (pr * pc != g_size) {
        fprintf(stderr, "rank %d: %s: grid %d x %d on %d ranks\n", g_rank, what, pr, pc, g_size);
        return 0;
    }
    dsmm_idx *rb = calloc((size_t)pr + 1, sizeof *rb), *cb = calloc((size_t)pc + 1, sizeof *cb);
    split_bounds(A->nrows, pr, rb);
    split_bounds(A->ncols, pc, cb);
    int myrow = g_rank / pc, mycol = g_rank % pc;
    dsmm_idx r0 = -1, c0 = -1;
    const dsmm_csr *T = dsmm_dist_local(D, &r0, &c0);
    dsmm_csr *want = NULL;
    if (T == NULL) {
        fprintf(stderr, "rank %d: %s: no local tile\n", g_rank, what);
        ok = 0;
    } else if (r0 != rb[myrow] || c0 != cb[mycol] || T->nrows != rb[myrow + 1] - rb[myrow] ||
               T->ncols != cb[mycol + 1] - cb[mycol]) {
        fprintf(stderr,
                "rank %d: %s: tile %lld x %lld at (%lld, %lld), expected %lld x %lld at "
                "(%lld, %lld) on grid %d x %d\n",
                g_rank, what, (long long)T->nrows, (long long)T->ncols, (long long)r0,
                (long long)c0, (long long)(rb[myrow + 1] - rb[myrow]),
                (long long)(cb[mycol + 1] - cb[mycol]), (long long)rb[myrow], (long long)cb[mycol],
                pr, pc);
        ok = 0;
    } else if (dsmm_csr_check(ctx, T) != DSMM_OK || !T->sorted || T->type != A->type ||
               (T->cap > 0 && T->colidx32 == NULL)) {
        fprintf(stderr, "rank %d: %s: tile invalid (sorted %d, type %s, colidx32 %p): %s\n", g_rank,
                what, T->sorted, dsmm_type_name(T->type), (void *)T->colidx32,
                dsmm_ctx_last_error(ctx));
        ok = 0;
    } else if (dsmm_csr_extract(ctx, A, rb[myrow], rb[myrow + 1], cb[mycol], cb[mycol + 1],
                                &want) != DSMM_OK) {
        fprintf(stderr, "rank %d: %s: extract failed\n", g_rank, what);
        ok = 0;
    } else {
        ok = csr_equal(ctx, T, want, rtol, what);
    }
    dsmm_csr_destroy(&want);
    free(rb);
    free(cb);
    return ok;
}

/* dist_near: D describes A: dims, type, nnz, this rank's tile (tile_matches), and the matrix
 * gathered on `root` equals A (values within rtol). Collective; the same answer on every rank. */
static inline int dist_near(dsmm_ctx *ctx, const dsmm_dist *D, const dsmm_csr *A, int root,
                            double rtol, const char *what)
{
    int ok = dsmm_dist_nrows(D) == A->nrows && dsmm_dist_ncols(D) == A->ncols &&
             dsmm_dist_nnz(D) == A->nnz && dsmm_dist_type(D) == A->type;
    if (!ok)
        fprintf(stderr, "rank %d: %s: %lld x %lld nnz %lld %s, expected %lld x %lld nnz %lld %s\n",
                g_rank, what, (long long)dsmm_dist_nrows(D), (long long)dsmm_dist_ncols(D),
                (long long)dsmm_dist_nnz(D), dsmm_type_name(dsmm_dist_type(D)), (long long)A->nrows,
                (long long)A->ncols, (long long)A->nnz, dsmm_type_name(A->type));
    if (!tile_matches(ctx, D, A, rtol, what)) ok = 0;
    dsmm_csr *G = NULL;
    dsmm_status st = dsmm_dist_gather(ctx, D, root, &G);
    if (st != DSMM_OK) {
        fprintf(stderr, "rank %d: %s: gather returned %s: %s\n", g_rank, what, dsmm_status_name(st),
                dsmm_ctx_last_error(ctx));
        ok = 0;
    } else if (g_rank == root) {
        if (!csr_equal(ctx, G, A, rtol, what) || G->type != A->type) ok = 0;
    } else if (G != NULL) {
        fprintf(stderr, "rank %d: %s: gather gave a matrix off the root\n", g_rank, what);
        ok = 0;
    }
    dsmm_csr_destroy(&G);
    return all_true(ok);
}

/* dist_equals: dist_near with values equal exactly. */
static inline int dist_equals(dsmm_ctx *ctx, const dsmm_dist *D, const dsmm_csr *A, int root,
                              const char *what)
{
    return dist_near(ctx, D, A, root, 0.0, what);
}

/* dense_at: entry (i, j) of a dense matrix as a double. */
static inline double dense_at(const dsmm_dense *D, dsmm_idx i, dsmm_idx j)
{
    if (D->type == DSMM_FLOAT) return ((const float *)D->val)[i * D->ld + j];
    return ((const double *)D->val)[i * D->ld + j];
}

/* rand_dense: an m x k dense matrix of test values (multiples of 1/4 in [-2, 2], exact in
 * float), the same on every rank for the same seed. */
static inline dsmm_status rand_dense(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx k, dsmm_type type,
                                     uint64_t seed, dsmm_dense **out)
{
    dsmm_status st = dsmm_dense_create(ctx, m, k, type, out);
    if (st != DSMM_OK) return st;
    for (dsmm_idx i = 0; i < m; i++)
        for (dsmm_idx j = 0; j < k; j++) {
            double v = (double)((int)(dsmm_rng_at(seed, (uint64_t)i, (uint64_t)j) % 17) - 8) / 4;
            if (type == DSMM_FLOAT)
                ((float *)(*out)->val)[i * (*out)->ld + j] = (float)v;
            else
                ((double *)(*out)->val)[i * (*out)->ld + j] = v;
        }
    return DSMM_OK;
}

/* dist_main: MPI main of a test table: one seed for every rank (rank 0 draws and prints it,
 * the others replay it), rank 0 reports, the exit code is the worst over the ranks. */
static inline int dist_main(int argc, char **argv, const test_case *tests, size_t ntests)
{
    int provided = 0; // FUNNELED, as the CLI asks: pipelined SUMMA broadcasts from the main thread
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    unsigned long long seed = 0;
    if (g_rank == 0) seed = (unsigned long long)test_seed();
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (g_rank != 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", seed);
        setenv("DSMM_TEST_SEED", buf, 1);
        if (freopen("/dev/null", "w", stdout) == NULL) return 1; // rank 0 reports
    }
    if (g_rank == 0) printf("ranks %d\n", g_size);
    int rc = test_main(argc, argv, tests, ntests);
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}

#endif // DSMM_TEST_DIST_COMMON_H
