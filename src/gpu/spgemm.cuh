// src/gpu/spgemm.cuh: the binned hash SpGEMM of spgemm.cu driven in steps, so that a caller
// can run other work (ooc.cu: the previous chunk's download on stream 1, out-of-core paper
// §IV.B) between its phases. The in-core entry dsmmi_gpu_spgemm runs the same steps back to
// back. C++ (CUDA); nothing outside src/gpu includes it.
#ifndef DSMM_GPU_SPGEMM_CUH
#define DSMM_GPU_SPGEMM_CUH

#include "gpu/device.cuh"

namespace dsmmg {

/* One product C = A * B on the device. The operands are device CSRs of the caller, which may
 * free them (to the pool) once spgemm_numeric has returned: the kernels that read them are
 * queued by then, and whatever reuses their blocks is queued after them on stream 0. All
 * kernels, the uploads of the row bins and the nnz readback run on stream 0. Timing uses the
 * three events g->ev[2 + 3 * lane .. 4 + 3 * lane] and the readback scratch(g, lane), so two
 * products of different lanes (0 or 1) may be in flight at once. */
struct spgemm_run {
    dsmm_ctx *ctx;
    dsmmi_gpu *g;
    const csr_d *A, *B;
    dsmm_idx nrows, ncols, nnz; // nnz known after spgemm_numeric
    int op, sorted, sub;
    int lane;
    int sync_batches; // 1: synchronise stream 0 after each sorted batch of device-memory tables
    int pool_full;    // set when a step failed because no pool block was large enough
    int stage;        // 0 none, 1 symbolic queued, 2 numeric queued, 3 finished
    dsmmi_gpu_bins bins;
    dsmm_idx rows_empty;    // rows without products (bin 0)
    int32_t *rows_d;        // bins.rows (made on the device when bins.rows is NULL)
    dsmm_idx *toff_d;       // bins.gtab_off
    dsmm_idx *boff_d;       // bins.gblk_off
    dsmm_idx *cnt_d;        // nnz per row (nrows + 1; the last 0)
    dsmm_idx *cp_d;         // C's row pointers (64-bit)
    int32_t *cc_d;          // C's columns
    double *cv_d;           // C's values (double whatever C's type)
    double seconds_upload;  // host wall time of the bins' copies (spgemm_begin): their upload,
                            // or the download of the global rows' offsets made on the device
    double seconds_blocked; // host wall time spent waiting for the symbolic and numeric events
    double ms_symbolic;     // symbolic kernels + scan (events), after spgemm_numeric
    double ms_numeric;      // numeric kernels (events), after spgemm_finish
};

/* spgemm_begin: bins the rows by flops, allocates the row counts and C's row pointers from the
 * pool, and queues the symbolic kernels, the scan and the readback of nnz(C) on stream 0. It
 * does not wait for them. The bins are made on the host from flops[i] (each row of A's flops)
 * and uploaded, or, with flops NULL, made on the device (row flops, a radix sort by bin, the
 * global rows' offsets by scans), which waits for the bin counts (and, when there are rows
 * with device-memory tables, their offsets) before the symbolic launches.
 * *r is initialised first, so spgemm_free(r) is right after a failure too.
 * Errors: DSMM_ERR_NOMEM (host, or the pool: then r->pool_full); DSMM_ERR_CUDA. */
dsmm_status spgemm_begin(dsmm_ctx *ctx, dsmmi_gpu *g, dsmm_semiring sr, int sorted, const csr_d *A,
                         const csr_d *B, const dsmm_idx *flops, int lane, int sync_batches,
                         spgemm_run *r);

/* spgemm_numeric: waits for the symbolic phase, reads nnz(C), allocates C's columns and values
 * exactly from the pool and queues the numeric kernels on stream 0, without waiting for them.
 * Errors: DSMM_ERR_NOMEM (pool: r->pool_full; host); DSMM_ERR_CUDA. */
dsmm_status spgemm_numeric(spgemm_run *r);

/* spgemm_finish: waits for the numeric phase (C complete on the device). Idempotent. */
dsmm_status spgemm_finish(spgemm_run *r);

/* spgemm_release: frees the bins (host and device) and the row counts: what the numeric phase
 * no longer needs once queued. spgemm_free: that and C's arrays. Neither waits; blocks freed
 * are only reused by work queued later on stream 0 (after the kernels that use them), so only
 * a caller that reads them on another stream must wait first. */
void spgemm_release(spgemm_run *r);
void spgemm_free(spgemm_run *r);

/* spgemm_report: a finished product's record in info (flops, nnz, rows with products, the
 * symbolic and numeric device seconds, seconds_transfer as given, sorted as run, on_gpu 1), and
 * the product counted in the context's device record (products_gpu, seconds_kernels). The
 * caller sets device_bytes. */
void spgemm_report(const spgemm_run *r, double seconds_transfer, dsmm_spgemm_info *info);

/* C on the device (values double; valid after spgemm_numeric, complete after spgemm_finish). */
static inline csr_d spgemm_result(const spgemm_run *r)
{
    csr_d C = {r->nrows, r->ncols, r->nnz, r->cp_d, r->cc_d, r->cv_d, 8};
    return C;
}

} // namespace dsmmg

#endif // DSMM_GPU_SPGEMM_CUH
