// src/kernels/ooc.h: the out-of-core SpGEMM driver (ooc.c): the chunk planner, the queue the
// executors take chunks from, and the assembly of C (out-of-core paper §III-IV, docs/ooc.md).
// The host executor (CPU kernels) lives in ooc.c; the device executor in src/gpu/ooc.cu.
#ifndef DSMM_KERNELS_OOC_H
#define DSMM_KERNELS_OOC_H

#include "kernels/kernels.h"

/* One chunk C[i][j] = A[i] * B[j]: rows [r0, r1) of A against columns [c0, c1) of B (the
 * row-column formulation, §III.A: each chunk's values are final, nothing is summed across
 * chunks). The planner fills the first block; the executor that ran it fills the second
 * before handing C to dsmmi_ooc_done. */
typedef struct dsmmi_ooc_chunk {
    int rp, cp;       // row panel and column panel (a split chunk keeps its parent's)
    dsmm_idx r0, r1;  // rows of A (and of C)
    dsmm_idx c0, c1;  // columns of B (and of C)
    double flops;     // multiply-adds of this chunk (exact)
    double est_nnz;   // the planner's estimate of nnz(C[i][j])
    size_t est_bytes; // the planner's estimate of the working set (panels + C + workspace)
    // filled by the executor
    int on_gpu;              // 1: ran on the device
    double seconds_compute;  // kernels (device events, or the CPU kernel's wall time)
    double seconds_transfer; // host<->device copies of this chunk (0 on the CPU)
    double seconds_hidden;   // the part of seconds_compute that ran under another chunk's
                             // transfers (device pipeline, §IV.B)
    size_t bytes;            // working set measured (device pool peak, or panels + C +
                             // the CPU kernel's workspace)
} dsmmi_ooc_chunk;

/* The sides that take chunks. */
enum { DSMMI_OOC_HOST = 0, DSMMI_OOC_DEV = 1 };

typedef struct dsmmi_ooc dsmmi_ooc; // one out-of-core product (ooc.c)

/* dsmmi_ooc_take: the next chunk for `side`, or NULL when that side has nothing left.
 * Chunks are sorted by flops, largest first (§IV.C). The device takes from the front (split
 * halves first), the host from its own part; in a hybrid run the boundary between the two
 * parts is the gpu_ratio of the flops (Alg. 4), or, for ratio auto, set once both sides have
 * finished their first chunk, from their measured rates. Thread-safe. */
dsmmi_ooc_chunk *dsmmi_ooc_take(dsmmi_ooc *run, int side);

/* dsmmi_ooc_panels: the operands of chunk c: A's row panel (r1 - r0 rows, all columns; its
 * column and value arrays borrow A's) and B's column panel (all rows of B, c1 - c0 columns
 * numbered from 0). Both stay valid until the run ends; executors only read them. The caller
 * owns *Ai and destroys it (dsmm_csr_destroy) when done; *Bj belongs to the run. */
dsmm_status dsmmi_ooc_panels(dsmmi_ooc *run, const dsmmi_ooc_chunk *c, dsmm_csr **Ai,
                             const dsmm_csr **Bj);

/* dsmmi_ooc_row_flops: flops[r] = the multiply-adds of row c->r0 + r of A against chunk c's
 * column panel, for the chunk's rows (the plan counted them; an executor that bins rows by
 * flops need not count again). */
void dsmmi_ooc_row_flops(const dsmmi_ooc *run, const dsmmi_ooc_chunk *c, dsmm_idx *flops);

/* dsmmi_ooc_args: the normalised multiply (semiring, value type of C, sorted rows) every
 * chunk runs with; A, B and M of the returned args are NULL (take the panels). Chunks may
 * be returned with 32- or 64-bit columns and must have type args->type. */
const dsmmi_spgemm_args *dsmmi_ooc_args(const dsmmi_ooc *run);

/* dsmmi_ooc_budget: bytes a chunk's working set may use (what the plan was made for). */
size_t dsmmi_ooc_budget(const dsmmi_ooc *run);

/* dsmmi_ooc_done: hands chunk c's result to the run, which takes ownership of C (a host CSR
 * of (r1 - r0) x (c1 - c0), columns numbered from 0, type args->type) in every case.
 * Errors: DSMM_ERR_ARG if C has the wrong shape or type. Thread-safe. */
dsmm_status dsmmi_ooc_done(dsmmi_ooc *run, dsmmi_ooc_chunk *c, dsmm_csr *C);

/* dsmmi_ooc_split: chunk c (taken by `side`) did not fit: its rows are cut in two halves of
 * about equal flops that go back to the front of that side's queue, to be taken next.
 * Errors: DSMM_ERR_NOMEM with a message when c has a single row (no smaller chunk exists).
 * Thread-safe. */
dsmm_status dsmmi_ooc_split(dsmmi_ooc *run, dsmmi_ooc_chunk *c, int side);

/* A side's executor: takes chunks with dsmmi_ooc_take(run, side) until NULL, hands each
 * result to dsmmi_ooc_done (or splits it), and returns the first error. */
typedef dsmm_status (*dsmmi_ooc_exec_fn)(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user);

/* dsmmi_ooc_host_exec: the CPU executor: each chunk runs through the local SpGEMM table
 * (dsmmi_local_spgemm, the context's threads). */
dsmm_status dsmmi_ooc_host_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user);

/* dsmmi_gpu_ooc_exec (src/gpu/ooc.cu; gpu_stub.c: DSMM_ERR_UNSUPPORTED): the device executor:
 * chunks in flops order through the context's device, pipelined as in §IV.B (Fig. 6): chunk
 * i's row analysis and upload, then chunk i - 1's first third of rows downloaded (stream 1)
 * while chunk i's symbolic phase runs (stream 0), then the rest while its numeric phase
 * runs; all device memory from the pool; a chunk that does not fit the pool is split. */
dsmm_status dsmmi_gpu_ooc_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user);

/* dsmmi_ooc_spgemm: the whole product (dsmm_csr_spgemm_ooc after its checks). dev_exec NULL:
 * the device executor when ooc->use_gpu, else none; tests pass a CPU stand-in to check the
 * hybrid split and the splitting of chunks without a GPU. */
dsmm_status dsmmi_ooc_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                             const dsmm_spgemm_opts *opts, const dsmm_ooc_opts *ooc,
                             dsmmi_ooc_exec_fn dev_exec, void *dev_user, dsmm_csr **C,
                             dsmm_ooc_info *info);

#endif // DSMM_KERNELS_OOC_H
