// src/dist/rdma.h: the one-sided distributed products (RDMA paper §3, §5.2-5.3): matrices whose
// tiles other ranks fetch with gets (dsmmi_rmat), the pool their local copies come from, the
// remote accumulation queues (dsmmi_rqueue), and the engine that runs stationary-C/A/B and
// the work-stealing variants for SpGEMM and SpMM (rdma_run.c).
//
// Tiles are the pieces of the SUMMA stage plan (summa.h): A(i,s) holds the rows of A's row
// block i and the columns [lo[s], hi[s]), B(s,j) the rows [lo[s], hi[s]) of B's column block j.
// On a square grid they are exactly the pr x pc tiles; on a non-square grid the inner index
// is cut at the union of A's column cut and B's row cut, so every work item
// C(i,j) += A(i,s) * B(s,j) multiplies two whole tiles. A sparse tile travels in the SUMMA
// piece layout (row pointers, values, 32-bit columns: contiguous, one get); a dense tile is a
// row range of its owner's row-major block (contiguous, one get).
#ifndef DSMM_DIST_RDMA_H
#define DSMM_DIST_RDMA_H

#include "comm/rma.h"
#include "dist/summa.h"

/* ------------------------------------------------------------------------------------------ */
/* RDMA matrices                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* One tile of the directory every rank holds: its owner, where it lies in the owner's window,
 * its shape, entries (dense: rows x cols) and bytes (0: empty, never fetched). */
typedef struct dsmmi_rtile {
    int owner;
    int64_t disp, nnz, bytes;
    dsmm_idx nrows, ncols;
} dsmmi_rtile;

/* A matrix of ntr x ntc tiles (index t = r * ntc + c); each rank's tiles lie in its part of
 * one window (MPI_Win_allocate, locked for all for the matrix's life). Replacements staged by
 * dsmmi_rmat_replace become visible at the next dsmmi_rmat_renew (§5.3). */
typedef struct dsmmi_rmat {
    int ntr, ntc, dense;
    dsmm_type type;
    dsmmi_rtile *dir;
    dsmmi_win *win;
    char *base;    // this rank's window memory
    char **staged; // per tile: a replacement in the piece layout (owned), or NULL
    int64_t *snnz; // its entries
    int *replaced; // per tile: 1 when a replacement is staged (snnz 0 = now empty)
} dsmmi_rmat;

/* dsmmi_rmat_a: A's tiles (i, s) over plan p (owner i * pc + kc[s]). Collective. */
dsmm_status dsmmi_rmat_a(dsmm_ctx *ctx, const dsmm_dist *A, const dsmmi_summa_plan *p,
                         dsmmi_rmat *m);
/* dsmmi_rmat_b: B's tiles (s, j) over plan p (owner kr[s] * pc + j). Collective. */
dsmm_status dsmmi_rmat_b(dsmm_ctx *ctx, const dsmm_dist *B, const dsmmi_summa_plan *p,
                         dsmmi_rmat *m);
/* dsmmi_rmat_dense_b: the dense B's tiles (s, j), rows [lo, hi) of block (kr[s], j). */
dsmm_status dsmmi_rmat_dense_b(dsmm_ctx *ctx, const dsmm_dist_dense *B, const dsmmi_summa_plan *p,
                               dsmmi_rmat *m);
/* dsmmi_rmat_replace: stages a new content for this rank's own tile t (CSR of the tile's shape,
 * sparse matrices only); others still read the old one until dsmmi_rmat_renew. Local. */
dsmm_status dsmmi_rmat_replace(dsmm_ctx *ctx, dsmmi_rmat *m, int t, const dsmm_csr *tile);
/* dsmmi_rmat_renew: makes every staged replacement visible: a new window with the current
 * tiles, the directory published again. Collective. */
dsmm_status dsmmi_rmat_renew(dsmm_ctx *ctx, dsmmi_rmat *m);
void dsmmi_rmat_free(dsmm_ctx *ctx, dsmmi_rmat *m);

/* Local destination buffers for fetched tiles, reused: a buffer given back is handed out
 * again to the next request that fits, so the hot path allocates only while the pool grows
 * (at most as many buffers as are in flight at once). */
typedef struct dsmmi_pool {
    char **buf;
    size_t *cap;
    int *busy;
    int n, max;
    int64_t grows; // allocations made (statistics; stays small)
} dsmmi_pool;
char *dsmmi_pool_take(dsmm_ctx *ctx, dsmmi_pool *pl, size_t bytes);
void dsmmi_pool_give(dsmmi_pool *pl, const char *buf);
void dsmmi_pool_free(dsmm_ctx *ctx, dsmmi_pool *pl);

/* A tile on its way (non-blocking get_tile): wait returns the local copy, or the owner's own
 * memory when the tile is this rank's (no get issued). */
typedef struct dsmmi_rfut {
    int tile;  // -1: none
    char *buf; // pool buffer (NULL: local or empty)
    const char *data;
    dsmmi_req req;
} dsmmi_rfut;
/* dsmmi_rmat_get_async: starts fetching tile t into a pool buffer (nothing for own or empty
 * tiles). */
dsmm_status dsmmi_rmat_get_async(dsmm_ctx *ctx, const dsmmi_rmat *m, int t, dsmmi_pool *pl,
                                 dsmmi_rfut *f);
/* dsmmi_rfut_wait: completes f; *data: the tile's bytes (NULL when empty). */
dsmm_status dsmmi_rfut_wait(dsmm_ctx *ctx, dsmmi_rfut *f, const char **data);
/* dsmmi_rmat_get: blocking get_tile (get_async + wait). */
dsmm_status dsmmi_rmat_get(dsmm_ctx *ctx, const dsmmi_rmat *m, int t, dsmmi_pool *pl, dsmmi_rfut *f,
                           const char **data);
/* dsmmi_rfut_release: completes f if still pending and gives its buffer back. */
void dsmmi_rfut_release(dsmm_ctx *ctx, dsmmi_rfut *f, dsmmi_pool *pl);

/* ------------------------------------------------------------------------------------------ */
/* Remote accumulation queues (§3.1.2)                                                        */
/* ------------------------------------------------------------------------------------------ */

/* What a producer pushes: where its partial result lies (rank, displacement in the partials'
 * dynamic window), its size, and the item it came from. */
typedef struct dsmmi_qdesc {
    int64_t rank, disp, nnz, bytes, item;
} dsmmi_qdesc;

/* Every rank's queue: a ring of cap slots in a window, [head, tail, slot 0, slot 1, ...], a
 * slot being a sequence word and a descriptor. A push reserves slot t with a fetch-and-add on
 * tail, waits until t - head < cap, writes the descriptor, flushes, then sets the slot's
 * sequence word to t + 1; the owner pops slot head once its sequence word says so and then
 * advances head. While its target is full a producer serves its own queue (serve), so full
 * queues never deadlock. */
typedef struct dsmmi_rqueue {
    dsmmi_win *win;
    char *base;
    int cap;
    int64_t head; // the owner's copy of its head
    int64_t pushes, pops, full_waits;
} dsmmi_rqueue;

typedef dsmm_status (*dsmmi_serve_fn)(dsmm_ctx *ctx, void *arg);

dsmm_status dsmmi_rqueue_create(dsmm_ctx *ctx, int cap, dsmmi_rqueue *q); // collective
/* dsmmi_rqueue_push: d into target's queue (target != this rank); calls serve(ctx, arg) while
 * the target's queue is full. */
dsmm_status dsmmi_rqueue_push(dsmm_ctx *ctx, dsmmi_rqueue *q, int target, const dsmmi_qdesc *d,
                              dsmmi_serve_fn serve, void *arg);
/* dsmmi_rqueue_pop: the next descriptor of this rank's queue into *d (*got 1), or *got 0 when
 * none is ready. */
dsmm_status dsmmi_rqueue_pop(dsmm_ctx *ctx, dsmmi_rqueue *q, dsmmi_qdesc *d, int *got);
dsmm_status dsmmi_rqueue_free(dsmm_ctx *ctx, dsmmi_rqueue *q); // collective

/* ------------------------------------------------------------------------------------------ */
/* The engine (rdma_run.c)                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* dsmmi_rdma_spgemm / dsmmi_rdma_spmm: the products for alg (one of the RDMA algorithms of
 * dsmm_dist_alg), arguments already checked by dsmm_spgemm_ex / dsmm_spmm_ex. Collective. */
dsmm_status dsmmi_rdma_spgemm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                              const dsmm_dist_opts *o, dsmm_dist **C);
dsmm_status dsmmi_rdma_spmm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist_dense *B,
                            const dsmm_dist_opts *o, dsmm_dist_dense **C);

/* dsmmi_dist_auto: the algorithm DSMM_DIST_AUTO runs for A * B (B sparse, or Bd dense):
 * SUMMA or stationary C, from the model of rdma_run.c. Collective. */
dsmm_status dsmmi_dist_auto(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                            const dsmm_dist_dense *Bd, dsmm_dist_alg *alg);

/* Test hooks (never set in production): rank `rank` sleeps `seconds` before each work item it
 * executes (an overloaded rank, for the work-stealing tests); DSMM_TEST_DELAY="RANK:SECONDS"
 * in the environment sets the same for the CLI. trace: when non-NULL, an array of
 * pr * S * pc counters the engine increments for every item this rank executes. */
void dsmmi_rdma_set_test_delay(dsmm_ctx *ctx, int rank, double seconds);
void dsmmi_rdma_set_trace(dsmm_ctx *ctx, int64_t *trace, int64_t n);

#endif // DSMM_DIST_RDMA_H
