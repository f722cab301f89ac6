// src/dist/summa_spmm.c: bulk-synchronous SUMMA for C = A * B with A sparse and B, C dense
// and tall-skinny (RDMA paper §2's bulk-synchronous baseline). Stage s broadcasts A's piece
// along grid rows (as in summa_spgemm.c) and the dense block B(lo:hi, column block j) along
// grid column j straight from its owner's tile (rows of a row-major tile are contiguous), and
// every rank accumulates A_piece * B_piece into its C tile with the local SpMM
// (dsmmi_local_spmm, beta = 1). No merge: the dense C tile is the accumulator. Prefetch as
// in summa_spgemm.c. With dsmm_dist_opts.gpu_resident the C tile is the device's
// (dsmmi_gpu_dacc): each stage's product is added into it where the kernel makes it, and the
// tile is downloaded once, instead of C going up and down the bus every stage; a CUDA-aware
// MPI then receives the pieces into device memory.
#include <string.h>

#include "dist/rdma.h"
#include "gpu/gpu.h"

typedef struct run {
    dsmmi_summa_plan plan;
    dsmmi_summa_side a, b; // A's pieces; B's receive slots (its blocks are sent from the tile)
    double *stage_flops;
    dsmmi_gpu_dacc *dacc; // gpu_resident: C's tile on the device
    int dev_recv;         // the receive slots are device memory (a CUDA-aware MPI)
} run;

static void run_free(dsmm_ctx *ctx, run *r)
{
    if (r->dev_recv) dsmmi_summa_slots_free_device(ctx, &r->a, &r->b);
    dsmmi_gpu_dacc_free(ctx, &r->dacc);
    dsmmi_summa_side_free(ctx, r->plan.n, &r->a);
    dsmmi_summa_side_free(ctx, r->plan.n, &r->b);
    r->stage_flops = dsmmi_free(ctx, r->stage_flops);
    dsmmi_summa_plan_free(ctx, &r->plan);
}

// Bytes of stage s's block of B for this rank's grid column.
static size_t b_bytes(const dsmm_dist_dense *B, const run *r, int s)
{
    const dsmmi_grid *g = B->grid;
    return (size_t)(r->plan.hi[s] - r->plan.lo[s]) *
           (size_t)(B->cb[g->mycol + 1] - B->cb[g->mycol]) * dsmmi_type_size(B->type);
}

// Where stage s's B block lives on its owner (this rank when it is in grid row kr).
static char *b_source(const dsmm_dist_dense *B, const run *r, int s)
{
    const dsmmi_grid *g = B->grid;
    size_t row = (size_t)(r->plan.lo[s] - B->rb[g->myrow]);
    return (char *)B->tile->val + row * (size_t)B->tile->ld * dsmmi_type_size(B->type);
}

// Where stage s's pieces are (or arrive): A's as in summa_spgemm.c, B's block in its owner's
// tile or in the receive slot.
static char *a_at(const dsmm_dist *A, const run *r, int s, int slot)
{
    return dsmmi_summa_piece_at(&r->a, A->grid->mycol == r->plan.kc[s], s, slot);
}

static char *b_at(const dsmm_dist_dense *B, const run *r, int s, int slot)
{
    return B->grid->myrow == r->plan.kr[s] ? b_source(B, r, s) : r->b.buf[slot];
}

static dsmm_status post(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist_dense *B, run *r, int s,
                        int slot, int prefetch)
{
    return dsmmi_summa_bcast_stage(ctx, A->grid, &r->plan, s, slot, prefetch, a_at(A, r, s, slot),
                                   dsmmi_summa_a_bytes(A, &r->plan, r->a.all, s), &r->a,
                                   b_at(B, r, s, slot), b_bytes(B, r, s), &r->b);
}

dsmm_status dsmm_spmm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist_dense *B,
                      dsmm_dist_dense **C)
{
    return dsmm_spmm_ex(ctx, A, B, NULL, C);
}

dsmm_status dsmm_spmm_ex(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist_dense *B,
                         const dsmm_dist_opts *opts, dsmm_dist_dense **C)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist_dense *Cd = NULL;
    run r;
    memset(&r, 0, sizeof r);
    dsmm_dist_opts o;
    dsmmi_rank_stats rs;
    memset(&rs, 0, sizeof rs);
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_ARG, "spmm: C must be non-NULL");
    *C = NULL;
    if (opts)
        o = *opts;
    else
        dsmm_dist_opts_init(&o);
    DSMM_CHECK(ctx, dsmmi_dist_ok(ctx, A) && dsmmi_dense_ok(ctx, B), DSMM_ERR_ARG,
               "spmm: A and B must be live distributed matrices of this context");
    DSMM_CHECK(ctx, A->grid == B->grid, DSMM_ERR_ARG,
               "spmm: A is on a %dx%d grid, B on %dx%d; redistribute B", A->grid->pr, A->grid->pc,
               B->grid->pr, B->grid->pc);
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM,
               "spmm: A is %lldx%lld, B %lldx%lld: inner dimensions differ", (long long)A->nrows,
               (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    DSMM_CHECK(ctx, (int)o.alg >= DSMM_DIST_AUTO && o.alg <= DSMM_DIST_WS_LOCAL_C, DSMM_ERR_ARG,
               "spmm: unknown distributed algorithm %d", (int)o.alg);
    DSMM_CHECK(ctx, !o.spmm.transpose_a && o.spmm.alpha == 1.0 && o.spmm.beta == 0.0, DSMM_ERR_ARG,
               "spmm: transpose_a, alpha and beta are not supported in distributed products");
    DSMM_CHECK(ctx, !o.gpu_resident || o.spmm.alg == DSMM_SPMM_AUTO || o.spmm.alg == DSMM_SPMM_GPU,
               DSMM_ERR_ARG,
               "spmm: gpu_resident multiplies with dsmm's GPU kernel; the local kernel must be "
               "auto or gpu");
    if (o.alg == DSMM_DIST_AUTO && o.gpu_resident) o.alg = DSMM_DIST_SUMMA;
    if (o.alg == DSMM_DIST_AUTO) DSMM_TRY(dsmmi_dist_auto(ctx, A, NULL, B, &o.alg));
    if (o.alg != DSMM_DIST_SUMMA) return dsmmi_rdma_spmm(ctx, A, B, &o, C);
    double t0 = dsmmi_wtime();
    dsmm_traffic before = ctx->traffic;
    const dsmmi_grid *g = A->grid;
    int prefetch = o.prefetch != 0;
    DSMM_TRY(dsmmi_dense_new(ctx, A->nrows, B->ncols, B->type, g->pr, g->pc, &Cd));
    dsmm_idx nr = A->rb[g->myrow + 1] - A->rb[g->myrow];
    dsmm_idx kcols = B->cb[g->mycol + 1] - B->cb[g->mycol];

    local = dsmmi_summa_plan_make(ctx, A->ncols, g->pr, g->pc, &r.plan);
    int S = r.plan.n;
    if (local == DSMM_OK) {
        r.stage_flops = dsmmi_calloc(ctx, S ? (size_t)S : 1, sizeof *r.stage_flops);
        if (!r.stage_flops)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "spmm: %d stages", S);
    }
    // Resident: C's tile on the device (a rank without a device fails here, and every rank
    // with it after the agreement).
    if (local == DSMM_OK && o.gpu_resident)
        local = dsmmi_gpu_dacc_create(ctx, nr, kcols, B->type, &r.dacc);
    if (local == DSMM_OK) local = dsmmi_summa_side_make(ctx, A, 0, &r.plan, &r.a);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_allgather_i64(ctx, r.a.nnz, S, r.a.all));
    size_t amax = 0, bmax = 0;
    for (int s = 0; s < S; s++) {
        size_t ab = dsmmi_summa_a_bytes(A, &r.plan, r.a.all, s);
        if (g->mycol != r.plan.kc[s] && ab > amax) amax = ab;
        if (g->myrow != r.plan.kr[s] && b_bytes(B, &r, s) > bmax) bmax = b_bytes(B, &r, s);
    }
    // A CUDA-aware MPI receives the resident product's pieces into the device pool, in blocking
    // broadcasts only (device buffers are not taken by nonblocking collectives): with prefetch
    // (MPI_Ibcast) they arrive on the host and are uploaded.
    r.dev_recv =
        r.dacc != NULL && local == DSMM_OK && ctx->size > 1 && !prefetch && dsmm_mpi_cuda_aware();
    if (local == DSMM_OK)
        local =
            dsmmi_summa_slots_alloc(ctx, &r.a, &r.b, 1 + prefetch, amax, bmax, r.dev_recv, "spmm");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    rs.comm += dsmmi_wtime() - t0;

    dsmm_spmm_opts lo = o.spmm;
    lo.tiles = NULL; // tiles describe one local A; the blocks here are others
    lo.beta = 1.0;   // C's tile starts at zero and accumulates every stage
    double t = dsmmi_wtime();
    if (prefetch && S > 0) DSMM_TRY(post(ctx, A, B, &r, 0, 0, 1));
    for (int s = 0; s < S; s++) {
        int slot = prefetch ? s % 2 : 0;
        if (prefetch) {
            DSMM_TRY(dsmmi_req_wait(ctx, &r.a.req[slot]));
            DSMM_TRY(dsmmi_req_wait(ctx, &r.b.req[slot]));
            if (s + 1 < S) DSMM_TRY(post(ctx, A, B, &r, s + 1, (s + 1) % 2, 1));
        } else {
            DSMM_TRY(post(ctx, A, B, &r, s, slot, 0));
        }
        double t1 = dsmmi_wtime();
        rs.comm += t1 - t;
        int64_t an = r.a.all[(g->myrow * g->pc + r.plan.kc[s]) * S + s];
        if (local == DSMM_OK && an > 0 && kcols > 0) {
            dsmm_idx w = r.plan.hi[s] - r.plan.lo[s];
            const char *abuf = a_at(A, &r, s, slot);
            char *bbuf = b_at(B, &r, s, slot);
            dsmm_csr Av;
            dsmmi_piece_view(abuf, nr, w, an, A->type, ctx, &Av);
            dsmm_dense Bv = {w, kcols, kcols, bbuf, B->type, 0, ctx};
            dsmm_spmm_info info;
            memset(&info, 0, sizeof info);
            if (r.dacc) {
                // (a received piece is in device memory when the slots are; own pieces never)
                int adev = r.dev_recv && g->mycol != r.plan.kc[s];
                int bdev = r.dev_recv && g->myrow != r.plan.kr[s];
                local = dsmmi_gpu_dacc_multiply(ctx, r.dacc, &Av, adev, &Bv, bdev, &info);
            } else {
                local = dsmmi_local_spmm(ctx, &Av, &Bv, Cd->tile, &lo, &info);
            }
            r.stage_flops[s] = info.flops;
        }
        t = dsmmi_wtime();
        rs.comp += t - t1;
    }
    // Resident: the tile comes down once (counted as accumulation).
    if (local == DSMM_OK && r.dacc) {
        local = dsmmi_gpu_dacc_finish(ctx, r.dacc, Cd->tile, NULL);
        rs.acc = dsmmi_wtime() - t;
    }
    DSMM_TRY(dsmmi_barrier(ctx, &rs.wait));
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    rs.total = dsmmi_wtime() - t0;

    if (o.stats) {
        for (int s = 0; s < S; s++) rs.flops += r.stage_flops[s];
        rs.nnz_a = A->tile->nnz;
        rs.nnz_b = (dsmm_idx)B->tile->nrows * B->tile->ncols;
        rs.nnz_c = (dsmm_idx)Cd->tile->nrows * Cd->tile->ncols;
        rs.peak_bytes = (int64_t)dsmm_ctx_mem_peak(ctx);
        dsmmi_traffic_diff(&ctx->traffic, &before, &rs.traffic);
        DSMM_TRY(dsmmi_stats_fill(ctx, o.stats, "spmm", "summa", g, prefetch, &rs, S, r.plan.lo,
                                  r.plan.hi, r.stage_flops, A->nnz, (dsmm_idx)A->nrows * B->ncols));
        DSMM_TRY(dsmm_stats_set_int(o.stats, "gpu_resident", r.dacc != NULL));
        if (r.dacc) DSMM_TRY(dsmm_stats_set_int(o.stats, "mpi_device_buffers", r.dev_recv));
    }
    *C = Cd;
    Cd = NULL;
cleanup:
    dsmm_dist_dense_destroy(&Cd);
    run_free(ctx, &r);
    return st;
}
