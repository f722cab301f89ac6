// src/dist/dist.h: internal header of the dist layer: the distributed sparse and dense
// matrices (regular tiles on a process grid, ScaLAPACK owner map), the entry exchange that
// builds them, and the pieces shared by the SUMMA products and the statistics.
#ifndef DSMM_DIST_H
#define DSMM_DIST_H

#include "comm/comm.h"
#include "io/io.h"
#include "kernels/kernels.h"
#include "sparse/sparse.h"

#define DSMMI_DIST_MAGIC  0x64736d6d64697374ULL
#define DSMMI_DENSE_MAGIC 0x64736d6d64656e73ULL

/* Invariants: pr * pc == ctx size; rb[0..pr] and cb[0..pc] are dsmmi_equal_split(nrows, pr)
 * and dsmmi_equal_split(ncols, pc); tile is (rb[myrow+1] - rb[myrow]) x (cb[mycol+1] -
 * cb[mycol]) with columns numbered from cb[mycol], 32-bit when that count fits, rows sorted,
 * no repeated columns, of type `type`; nnz is the sum of the tiles' nnz. */
struct dsmm_dist {
    uint64_t magic;
    dsmm_ctx *ctx;
    dsmm_idx nrows, ncols, nnz;
    dsmm_type type;
    const dsmmi_grid *grid; // owned by the context's grid cache
    dsmm_idx *rb, *cb;
    dsmm_csr *tile;
};

/* Same grid rules; tile is row-major with ld == its column count. */
struct dsmm_dist_dense {
    uint64_t magic;
    dsmm_ctx *ctx;
    dsmm_idx nrows, ncols;
    dsmm_type type; // DSMM_FLOAT or DSMM_DOUBLE
    const dsmmi_grid *grid;
    dsmm_idx *rb, *cb;
    dsmm_dense *tile;
};

/* dsmmi_block_of: the block of index i in dsmmi_equal_split(n, p) (0 <= i < n). */
int dsmmi_block_of(dsmm_idx n, int p, dsmm_idx i);

/* dsmmi_dist_ok: A is a live distributed matrix of ctx (magic intact, same context). */
bool dsmmi_dist_ok(const dsmm_ctx *ctx, const dsmm_dist *A);
bool dsmmi_dense_ok(const dsmm_ctx *ctx, const dsmm_dist_dense *B);

/* dsmmi_dist_new: the shell of an nrows x ncols matrix on the pr x pc grid (resolved, grid
 * fetched, bounds filled), without a tile. Collective (the grid's communicators). */
dsmm_status dsmmi_dist_new(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type, int pr,
                           int pc, dsmm_dist **out);

/* dsmmi_dist_set_tile: gives tile (ownership moves; its shape must be this rank's tile shape)
 * to A, converts its columns to the tile's width, and sums nnz over the ranks. Collective. */
dsmm_status dsmmi_dist_set_tile(dsmm_ctx *ctx, dsmm_dist *A, dsmm_csr *tile);

/* dsmmi_dist_from_triples: the matrix of n local entries (global row[k], col[k], val[k] of
 * vtype; val NULL: pattern, all ones) that may belong to any rank: each entry goes to the owner
 * of its tile (dsmmi_exchange), owners assemble their tile with dup (dup_what names the source
 * in the message of a DSMM_DUP_ERROR failure, with global 1-based indices). type: the matrix's
 * value type. Entries outside nrows x ncols fail with DSMM_ERR_ARG. Collective; fails together.
 */
dsmm_status dsmmi_dist_from_triples(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type,
                                    dsmm_idx n, const dsmm_idx *row, const dsmm_idx *col,
                                    const void *val, dsmm_type vtype, dsmm_dup dup,
                                    const char *dup_what, int pr, int pc, dsmm_dist **out);

/* dsmmi_dist_triples: this rank's entries of A with global indices (new arrays; *val NULL for
 * pattern matrices, else doubles). */
dsmm_status dsmmi_dist_triples(dsmm_ctx *ctx, const dsmm_dist *A, dsmm_idx **row, dsmm_idx **col,
                               double **val, dsmm_idx *n);

/* dsmmi_dense_new: a distributed dense matrix of zeros (tile allocated). Collective. */
dsmm_status dsmmi_dense_new(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type, int pr,
                            int pc, dsmm_dist_dense **out);

/* ------------------------------------------------------------------------------------------ */
/* Statistics of one distributed operation (DESIGN.md "Every run is measured")                */
/* ------------------------------------------------------------------------------------------ */

/* One rank's share: seconds in local multiplies (comp), broadcasts and exchanges including
 * the waits inside them (comm), merging partial results (acc), and waiting at the closing
 * barrier for slower ranks (wait); traffic during the operation. */
typedef struct dsmmi_rank_stats {
    double comp, comm, acc, wait, total;
    double flops;
    dsmm_idx nnz_a, nnz_b, nnz_c;
    int64_t peak_bytes;
    dsmm_traffic traffic;
    // One-sided algorithms (rdma = 1): work items executed (stolen: not this rank's own),
    // queue pushes and pops, data gets issued, seconds waiting on gets, and when this rank's
    // work was done (seconds after the common start; the finish-time spread).
    int rdma;
    int64_t items, stolen, pushes, pops, gets;
    double get_wait, done, setup; // setup: packing, windows, directory, work plan
    // SUMMA SpGEMM merging partial products (merge = 1): the most bytes of partial products
    // and merged lists held at once, seconds in merges; pipeline = 1: seconds of the stage
    // loop with no multiply or merge running (communication not overlapped), and broadcast
    // seconds beyond those (overlapped with computation).
    int merge, pipeline;
    int64_t merge_peak_bytes;
    double merge_seconds, comm_exposed, comm_overlapped;
    // pipeline = 1, HipMCL-GPU's Table V: seconds the broadcasting thread waited for a stage's
    // multiply and merge (cpu_idle), and, when stage products ran on the GPU (gpu_products),
    // seconds of the stage loop the device was not busy with them (gpu_idle).
    // idle_known: the two-thread pipeline ran (the one-thread fallback cannot tell).
    double cpu_idle, gpu_idle;
    int gpu_products, idle_known;
} dsmmi_rank_stats;

/* The record's top-level maxima of the four components (comp, comm, acc, wait), in that order:
 * written by dsmmi_stats_fill, read back by dsmm mcl and dsmm report. */
extern const char *const dsmmi_stats_comp_keys[4];

/* dsmmi_stats_fill: gathers every rank's record and the per-stage flops (stage_flops[s] of this
 * rank, nstages entries; stage_lo/hi: inner-index range of each stage) and writes the
 * operation's statistics into s (on every rank): the stable keys (op, algo, ranks, threads,
 * seconds = max total, flops, nnz_in, nnz_out, peak_bytes = max, bytes_sent = sum), then grid,
 * prefetch, workgroups, components (averages and maxima of comp/comm/acc/wait; the maxima
 * also as dsmmi_stats_comp_keys), load
 * imbalance (max/avg flops, end-to-end and the worst stage), "ranks_detail" (one object per
 * rank) and "stages" (one object per stage with the flops of every rank); with mine->merge,
 * merge_peak_bytes and merge_seconds (maxima); with mine->pipeline, comm_exposed_seconds and
 * comm_overlapped_seconds (maxima), and when every rank ran the two-thread pipeline
 * (idle_known) cpu_idle_seconds (max), gpu_products (sum) and, if that is not 0,
 * gpu_idle_seconds (max). Collective. */
dsmm_status dsmmi_stats_fill(dsmm_ctx *ctx, dsmm_stats *s, const char *op, const char *algo,
                             const dsmmi_grid *g, int prefetch, const dsmmi_rank_stats *mine,
                             int nstages, const dsmm_idx *stage_lo, const dsmm_idx *stage_hi,
                             const double *stage_flops, dsmm_idx nnz_in, dsmm_idx nnz_out);

#endif // DSMM_DIST_H
