// src/dist/summa.h: the parts shared by the SUMMA products (summa.c): stage plan, pieces of
// A and their wire format.
#ifndef DSMM_DIST_SUMMA_H
#define DSMM_DIST_SUMMA_H

#include "dist/dist.h"

/* Stage s covers inner indices [lo[s], hi[s]) (non-empty), inside column block kc[s] of A's
 * pc-way split and row block kr[s] of B's pr-way split. */
typedef struct dsmmi_summa_plan {
    int n;
    dsmm_idx *lo, *hi;
    int *kc, *kr;
} dsmmi_summa_plan;

/* dsmmi_summa_plan_make: the stages for inner dimension m on a pr x pc grid (local). */
dsmm_status dsmmi_summa_plan_make(dsmm_ctx *ctx, dsmm_idx m, int pr, int pc, dsmmi_summa_plan *p);
void dsmmi_summa_plan_free(dsmm_ctx *ctx, dsmmi_summa_plan *p);

/* dsmmi_piece_bytes: bytes of a sparse piece on the wire: (nrows + 1) 64-bit row pointers,
 * nnz values of type (none for pattern), nnz 32-bit columns; 0 when nnz == 0 (never sent). */
size_t dsmmi_piece_bytes(dsmm_idx nrows, dsmm_idx nnz, dsmm_type type);
/* dsmmi_piece_pack: P (rowptr[0] == 0, columns < 2^31) in wire layout, values converted to
 * type; *buf NULL when P is empty. */
dsmm_status dsmmi_piece_pack(dsmm_ctx *ctx, const dsmm_csr *P, dsmm_type type, char **buf);
/* dsmmi_piece_view: a CSR that borrows a piece's wire buffer (sorted, 32-bit columns). */
void dsmmi_piece_view(const char *buf, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx nnz, dsmm_type type,
                      dsmm_ctx *ctx, dsmm_csr *view);

/* dsmmi_summa_pieces: this rank's pieces, packed: of A (is_b 0: columns [lo, hi) of its tile
 * for the stages whose column block is this rank's grid column) or of B (is_b 1: rows
 * [lo, hi) for the stages whose row block is this rank's grid row); pack[s] NULL and nnz[s] 0
 * for the other stages. pack and nnz have p->n entries. */
dsmm_status dsmmi_summa_pieces(dsmm_ctx *ctx, const dsmm_dist *X, int is_b,
                               const dsmmi_summa_plan *p, char **pack, int64_t *nnz);
void dsmmi_summa_pieces_free(dsmm_ctx *ctx, char **pack, int n);

/* One operand's pieces during a SUMMA run: this rank's own (pack, nnz: p->n each), everyone's
 * sizes (all: P x p->n, all-gathered from nnz), and the receiving side: two slots with their
 * requests (the second for prefetch) or, for a fused multiply, every received piece (keep).
 * SpMM's dense B uses only buf and req. */
typedef struct dsmmi_summa_side {
    char **pack;
    int64_t *nnz, *all;
    char *buf[2];
    dsmmi_req req[2];
    char **keep;
} dsmmi_summa_side;

/* dsmmi_summa_side_make: allocates pack, nnz and all and packs this rank's pieces of X
 * (dsmmi_summa_pieces). Local: the caller agrees, then all-gathers nnz into all. */
dsmm_status dsmmi_summa_side_make(dsmm_ctx *ctx, const dsmm_dist *X, int is_b,
                                  const dsmmi_summa_plan *p, dsmmi_summa_side *side);
/* dsmmi_summa_piece_at: where stage s's piece of this side is or arrives: its own pack when
 * this rank is the stage's root (own), else the kept buffer (fused) or the receive slot. */
char *dsmmi_summa_piece_at(const dsmmi_summa_side *side, int own, int s, int slot);
/* dsmmi_summa_side_free: completes pending requests and frees everything in side (n stages). */
void dsmmi_summa_side_free(dsmm_ctx *ctx, int n, dsmmi_summa_side *side);
/* dsmmi_summa_slots_alloc: receive slots 0..nslots-1 (1 or 2) of a and b, of amax and bmax
 * bytes (1 at least): host memory, or blocks of the device pool when dev (a CUDA-aware MPI
 * writes the pieces there; give them back with dsmmi_summa_slots_free_device). Local. With
 * dev, no device work may be pending on the context's streams: MPI writes the slots outside
 * them, so a pool block just given back by queued kernels must not become a slot (every
 * resident product synchronises before it returns, and the slots are made before the first).
 * Errors: DSMM_ERR_NOMEM (naming who); those of dsmmi_gpu_buf_alloc. */
dsmm_status dsmmi_summa_slots_alloc(dsmm_ctx *ctx, dsmmi_summa_side *a, dsmmi_summa_side *b,
                                    int nslots, size_t amax, size_t bmax, int dev, const char *who);
/* dsmmi_summa_slots_free_device: device receive slots: waits for their broadcasts, then gives
 * them back to the pool (NULL afterwards, so dsmmi_summa_side_free skips them). */
void dsmmi_summa_slots_free_device(dsmm_ctx *ctx, dsmmi_summa_side *a, dsmmi_summa_side *b);

/* dsmmi_summa_bcast_stage: stage s's broadcasts: A's piece (ab bytes at abuf) along the grid
 * row from column p->kc[s], B's (bb bytes at bbuf) along the grid column from row p->kr[s];
 * started into a->req[slot] and b->req[slot] when prefetch, else completed. Collective over the
 * row and the column. */
dsmm_status dsmmi_summa_bcast_stage(dsmm_ctx *ctx, const dsmmi_grid *g, const dsmmi_summa_plan *p,
                                    int s, int slot, int prefetch, char *abuf, size_t ab,
                                    dsmmi_summa_side *a, char *bbuf, size_t bb,
                                    dsmmi_summa_side *b);

/* dsmmi_summa_a_bytes: bytes of stage s's piece of A for this rank's grid row, from the
 * all-gathered piece sizes a_all (P x p->n). */
size_t dsmmi_summa_a_bytes(const dsmm_dist *A, const dsmmi_summa_plan *p, const int64_t *a_all,
                           int s);

/* ------------------------------------------------------------------------------------------ */
/* A SUMMA SpGEMM run (summa_spgemm.c), and its pipelined stages (summa_pipelined.c)           */
/* ------------------------------------------------------------------------------------------ */

/* What one rank holds during a SUMMA SpGEMM: the plan, A's and B's pieces, the partial
 * products' accumulator (unused when fused) and the flops of each stage. */
typedef struct dsmmi_summa_run {
    dsmmi_summa_plan plan;
    dsmmi_summa_side a, b;
    dsmmi_merge_acc acc;
    double *stage_flops;
    // Stage products that ran on the GPU, and their device seconds (kernels and copies,
    // device events): what the pipeline's GPU idle time is measured against.
    int gpu_products;
    double gpu_busy;
    // dsmm_dist_opts.gpu_resident: the stage products' accumulator on the device, and whether
    // the receive slots are device memory (a CUDA-aware MPI writes the pieces there).
    struct dsmmi_gpu_acc *dacc;
    int dev_recv;
} dsmmi_summa_run;

/* dsmmi_summa_post: starts (nonblocking: MPI_Ibcast, completed by dsmmi_req_wait on the
 * slot's requests) or completes stage s's two broadcasts into slot. Collective on the grid's
 * row and column. */
dsmm_status dsmmi_summa_post(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                             dsmmi_summa_run *r, int s, int slot, int nonblocking);
/* dsmmi_summa_multiply: multiplies stage s's pieces (in slot) and pushes the partial product
 * (NULL when a piece is empty) to r->acc, which may merge (binary). Local; calls no MPI. */
dsmm_status dsmmi_summa_multiply(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                                 dsmmi_summa_run *r, int s, int slot, const dsmm_spgemm_opts *lo);
/* dsmmi_summa_stages: the stages one after another (prefetch: stage s+1 posted with
 * MPI_Ibcast before stage s is multiplied; fuse: pieces only kept). A local failure is kept in
 * *local and stops multiplying, never communicating. Adds to rs->comm and rs->comp. */
dsmm_status dsmmi_summa_stages(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                               dsmmi_summa_run *r, const dsmm_spgemm_opts *lo, int prefetch,
                               int fuse, dsmm_status *local, dsmmi_rank_stats *rs);
/* dsmmi_summa_pipelined: the stages of Pipelined Sparse SUMMA (HipMCL-GPU §III): stage s's
 * multiply and merge run on the other threads while this thread broadcasts stage s+1 (two
 * receive slots). Without MPI_THREAD_FUNNELED or a second thread, dsmmi_summa_stages with
 * prefetch. Adds to rs->comm (seconds in broadcasts), rs->comp, rs->comm_exposed (seconds of
 * the stage loop in which no multiply or merge ran: communication on the critical path) and
 * rs->comm_overlapped (broadcast seconds beyond that: hidden behind computation; 0 in the
 * fallback, which cannot tell). Local failures as above. */
dsmm_status dsmmi_summa_pipelined(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                                  dsmmi_summa_run *r, const dsmm_spgemm_opts *lo,
                                  dsmm_status *local, dsmmi_rank_stats *rs);

/* dsmmi_summa_count: the exact symbolic count of SUMMA's C = A * B without forming it (the
 * "exact scheme" HipMCL's memory estimation uses, HipMCL-GPU §V): the stages' pieces are
 * broadcast as for the product and each stage's pieces counted with the local symbolic count,
 * so row_nnz (this rank's tile rows of C) receives, row by row, the sum over stages of the
 * stage products' nnz: what the stage products hold before they are merged (nnz(C) of the row
 * when there is one stage, an upper bound of it otherwise). flops gets this rank's
 * multiply-adds. Peak memory: the pieces of one stage and nr counts. Collective. */
dsmm_status dsmmi_summa_count(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                              double *row_nnz, double *flops);

#endif // DSMM_DIST_SUMMA_H
