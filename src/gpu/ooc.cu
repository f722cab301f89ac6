// src/gpu/ooc.cu: the device executor of the out-of-core SpGEMM (kernels/ooc.h): chunks
// C[i][j] = A[i] * B[j] taken from the run's queue, each multiplied by spgemm.cu's binned hash
// kernels, and copied back while the next chunk computes.
//
// The schedule is the out-of-core paper's Fig. 6 (§IV.B). Two chunks are on the device at once:
// chunk i computing on stream 0 and chunk i - 1, complete, copied back on stream 1 in two
// portions: its row pointers and first third of rows while chunk i's symbolic phase runs, the
// rest while its numeric phase runs. The host's row analysis of chunk i (flops per row) runs
// during chunk i - 1's numeric phase. Everything lives in the context's pool, whose blocks are
// reused only by work queued later on stream 0 (every write to the device is on stream 0;
// stream 1 only reads the results it copies, which are freed after the host has waited for the
// copies), so nothing synchronises the device between chunks. B's column panel stays on the
// device while consecutive chunks share it. A chunk that does not fit next to its predecessor's
// result is split in halves (dsmmi_ooc_split) after that result has been handed over.
#include <string.h>

#include "gpu/spgemm.cuh"

extern "C" {
#include "kernels/ooc.h"
}

namespace {

// One chunk on the device, from its upload until its result is handed over.
struct slot {
    dsmmi_ooc_chunk *c;      // NULL: free
    dsmm_csr *Ai;            // A's row panel (ours to destroy)
    dsmmg::csr_d A;          // its device copy
    dsmmg::spgemm_run r;     // the product (lane = this slot's index)
    dsmm_csr *C;             // the host result, created by the first download
    dsmm_idx rows_down;      // rows of C copied back so far
    int pool_full;           // an upload of this chunk found no pool block large enough
    double seconds_transfer; // host wall time in this chunk's uploads and downloads
    size_t peak;             // most pool bytes (above the executor's base) while it lived
};

struct exec {
    dsmm_ctx *ctx;
    dsmmi_gpu *g;
    dsmmi_ooc *run;
    const dsmmi_spgemm_args *args;
    dsmm_type vt; // operand values on the device: DOUBLE, or none (PATTERN) for plus-pair
    size_t base;  // pool bytes in use when the executor started (not ours)
    slot s[2];
    int bcp;        // column panel held in B, -1 none
    dsmmg::csr_d B; // that panel on the device
};

// Folds the pool's peak since the last call into every live chunk and starts a new interval;
// called whenever a chunk starts or ends, so each chunk sees the peaks of its own lifetime.
static void observe(exec *x)
{
    dsmmi_dpool *p = &x->g->pool;
    size_t now = p->local_peak > x->base ? p->local_peak - x->base : 0;
    for (int k = 0; k < 2; k++)
        if (x->s[k].c != NULL && now > x->s[k].peak) x->s[k].peak = now;
    dsmmi_dpool_peak_reset(p);
}

// Frees what a slot holds (device blocks: reused only by later stream-0 work, see above; the
// caller has waited for any stream-1 copy of them) and empties it.
static void drop(exec *x, slot *s)
{
    dsmmg::spgemm_free(&s->r);
    dsmmg::free_csr(x->g, &s->A);
    dsmm_csr_destroy(&s->Ai);
    dsmm_csr_destroy(&s->C);
    memset(s, 0, sizeof *s);
}

// Chunk c into slot s: panels, row analysis (host, during prev's numeric phase), B's panel
// unless resident, A's panel, then the symbolic phase queued on stream 0.
static dsmm_status start(exec *x, slot *s, dsmmi_ooc_chunk *c, slot *prev)
{
    dsmm_ctx *ctx = x->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = x->g;
    const dsmm_csr *Bj = NULL;
    dsmm_idx *flops = NULL, m = 0;
    double t0 = 0;
    observe(x);
    s->c = c;
    DSMM_TRY(dsmmi_ooc_panels(x->run, c, &s->Ai, &Bj));
    m = s->Ai->nrows;
    DSMM_CHECK(ctx,
               m == c->r1 - c->r0 && Bj->ncols == c->c1 - c->c0 && s->Ai->ncols == Bj->nrows &&
                   (m == 0 || s->Ai->rowptr[0] == 0),
               DSMM_ERR_INTERNAL,
               "gpu out-of-core: panels of chunk [%lld, %lld) x [%lld, %lld) are %lld x %lld and "
               "%lld x %lld",
               (long long)c->r0, (long long)c->r1, (long long)c->c0, (long long)c->c1, (long long)m,
               (long long)s->Ai->ncols, (long long)Bj->nrows, (long long)Bj->ncols);
    flops = (dsmm_idx *)dsmmi_malloc(ctx, (size_t)m + 1, sizeof *flops);
    DSMM_CHECK(ctx, flops != NULL, DSMM_ERR_NOMEM, "gpu out-of-core: row flops");
    dsmmi_ooc_row_flops(x->run, c, flops); // counted by the plan
    // The uploads queue behind prev's numeric phase on stream 0 anyway; waiting here makes
    // the time the host is held up by it count as prev's, not hidden.
    if (prev != NULL) DSMM_TRY(dsmmg::spgemm_finish(&prev->r));
    t0 = dsmmi_wtime();
    if (x->bcp != c->cp) {
        dsmmg::free_csr(g, &x->B); // its last readers (prev's kernels) have finished
        x->bcp = -1;
        DSMM_TRY(dsmmg::upload_csr(ctx, g, Bj, x->vt, &x->B, &s->pool_full));
        x->bcp = c->cp;
    }
    DSMM_TRY(dsmmg::upload_csr(ctx, g, s->Ai, x->vt, &s->A, &s->pool_full));
    s->seconds_transfer += dsmmi_wtime() - t0;
    DSMM_TRY(dsmmg::spgemm_begin(ctx, g, x->args->sr, x->args->sorted, &s->A, &x->B, flops,
                                 (int)(s - x->s), 0, &s->r));
    s->seconds_transfer += s->r.seconds_upload;
cleanup:
    dsmmi_free(ctx, flops);
    return st;
}

// Copies rows [rows_down, upto) of slot s's result back on stream 1 (its numeric phase has
// finished); the first call creates the host CSR and copies the row pointers first.
static dsmm_status download_rows(exec *x, slot *s, dsmm_idx upto)
{
    dsmm_ctx *ctx = x->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = x->g;
    const dsmmi_spgemm_args *a = x->args;
    double t0 = dsmmi_wtime();
    if (s->C == NULL) {
        const dsmmi_ooc_chunk *c = s->c;
        int bits = c->c1 - c->c0 <= INT32_MAX ? 32 : 64;
        DSMM_TRY(
            dsmmi_csr_create_ex(ctx, c->r1 - c->r0, c->c1 - c->c0, s->r.nnz, a->type, bits, &s->C));
        DSMM_TRY(dsmmg::download_raw(ctx, g, s->C->rowptr, s->r.cp_d, (size_t)s->r.nrows + 1,
                                     sizeof(dsmm_idx), 1));
        DSMM_CHECK(ctx, s->C->rowptr[s->r.nrows] == s->r.nnz, DSMM_ERR_INTERNAL,
                   "gpu out-of-core: row pointers end at %lld, nnz %lld",
                   (long long)s->C->rowptr[s->r.nrows], (long long)s->r.nnz);
        s->C->nnz = s->r.nnz;
        s->C->sorted = a->sorted;
    }
    if (upto > s->rows_down) {
        dsmm_idx e0 = s->C->rowptr[s->rows_down], e1 = s->C->rowptr[upto];
        // A view of C starting at entry e0: the staged unpacking counts from 0.
        dsmm_csr view = *s->C;
        if (view.colidx32)
            view.colidx32 += e0;
        else
            view.colidx += e0;
        if (view.val) view.val = (char *)view.val + (size_t)e0 * dsmmi_type_size(view.type);
        dsmmg::csr_arg ca = {NULL, &view, a->type};
        DSMM_TRY(dsmmg::download(ctx, g, s->r.cc_d + e0, (size_t)(e1 - e0), sizeof(int32_t),
                                 dsmmg::unpack_cols, &ca, 1));
        if (a->type != DSMM_PATTERN)
            DSMM_TRY(dsmmg::download(ctx, g, s->r.cv_d + e0, (size_t)(e1 - e0), sizeof(double),
                                     dsmmg::unpack_vals, &ca, 1));
        s->rows_down = upto;
    }
    s->seconds_transfer += dsmmi_wtime() - t0;
cleanup:
    return st;
}

// Finishes slot s (numeric phase, the rows not yet copied back), fills the chunk's timing,
// frees the slot and hands C to the run.
static dsmm_status hand_over(exec *x, slot *s)
{
    dsmm_status st = DSMM_OK;
    dsmmi_ooc_chunk *c = s->c;
    dsmm_csr *C = NULL;
    DSMM_TRY(dsmmg::spgemm_finish(&s->r));
    DSMM_TRY(download_rows(x, s, s->r.nrows));
    observe(x);
    {
        double compute = (s->r.ms_symbolic + s->r.ms_numeric) / 1e3;
        double hidden = compute - s->r.seconds_blocked;
        c->on_gpu = 1;
        c->seconds_compute = compute;
        c->seconds_transfer = s->seconds_transfer;
        c->seconds_hidden = hidden < 0 ? 0 : hidden > compute ? compute : hidden;
        c->bytes = s->peak;
        x->g->info.products_gpu++;
        x->g->info.seconds_kernels += compute;
    }
    C = s->C;
    s->C = NULL;
    drop(x, s);                             // the host waited for every copy of its result
    DSMM_TRY(dsmmi_ooc_done(x->run, c, C)); // takes C in every case
cleanup:
    return st;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_ooc_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    exec x;
    slot *prev = NULL; // complete (or computing) chunk whose result is still on the device
    int cur = 0;       // the slot the next chunk goes to
    (void)user;
    memset(&x, 0, sizeof x);
    x.bcp = -1;
    DSMM_CHECK(ctx, g != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu out-of-core: no device on this context (dsmm_ctx_set_gpu)");
    x.ctx = ctx;
    x.g = g;
    x.run = run;
    x.args = dsmmi_ooc_args(run);
    x.vt = x.args->sr == DSMM_PLUS_PAIR ? DSMM_PATTERN : DSMM_DOUBLE;
    DSMMG_CUDA(cudaSetDevice(g->device));
    x.base = g->pool.in_use;
    dsmmi_dpool_peak_reset(&g->pool);
    for (;;) {
        dsmmi_ooc_chunk *c = dsmmi_ooc_take(run, side);
        if (c == NULL) break;
        slot *s = &x.s[cur];
        // chunk i's symbolic phase queued; chunk i - 1's row pointers and first third of rows
        // copied back meanwhile; chunk i's numeric phase queued; the rest of i - 1 copied back
        st = start(&x, s, c, prev);
        if (st == DSMM_OK && prev != NULL) st = download_rows(&x, prev, prev->r.nrows / 3);
        if (st == DSMM_OK) st = dsmmg::spgemm_numeric(&s->r);
        if (st == DSMM_OK) {
            dsmmg::spgemm_release(&s->r);
            dsmmg::free_csr(g, &s->A);
            if (prev != NULL) st = hand_over(&x, prev);
            prev = NULL;
        }
        if (st == DSMM_ERR_NOMEM && (s->pool_full || s->r.pool_full)) {
            // Chunk i does not fit beside i - 1's result: hand i - 1 over, retry i in halves.
            // The pool's message is not an error of the run: cleared, so that a later error
            // is the one the context reports (the first recorded error wins).
            st = DSMM_OK;
            dsmm_ctx_clear_error(ctx);
            if (prev != NULL) DSMM_TRY(hand_over(&x, prev));
            prev = NULL;
            DSMMG_CUDA(cudaStreamSynchronize(dsmmg::stream(g, 0))); // i's queued kernels
            drop(&x, s);
            DSMM_TRY(dsmmi_ooc_split(run, c, side));
            continue;
        }
        DSMM_TRY(st);
        prev = s;
        cur ^= 1;
    }
    if (prev != NULL) DSMM_TRY(hand_over(&x, prev));
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) { // blocks may still be read or written
            cudaStreamSynchronize(dsmmg::stream(g, 0));
            cudaStreamSynchronize(dsmmg::stream(g, 1));
        }
        for (int k = 0; k < 2; k++) drop(&x, &x.s[k]);
        dsmmg::free_csr(g, &x.B);
    }
    return st;
}
