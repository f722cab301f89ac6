// src/dist/summa_spgemm.c: bulk-synchronous Sparse SUMMA for C = A * B (HipMCL §II, RDMA
// paper §2). Stage s broadcasts A's piece along grid rows and B's piece along grid columns
// (summa.c's plan), every rank multiplies the two pieces it holds with the local SpGEMM
// (dsmmi_local_spgemm: the kernel table picks the accumulator), keeps the partial product, and
// at the end merges its partial products with a k-way heap merge (dsmmi_csr_merge), the
// HipMCL baseline, or as they complete by binary merge (HipMCL-GPU §IV: merge_binary.c's
// schedule). With prefetch, stage s+1's broadcasts (MPI_Ibcast) are posted before stage
// s is multiplied, so communication overlaps computation; without it each stage's broadcasts
// complete before its multiply. The piece sizes are exchanged once before the stages, so empty
// pieces are never sent and receivers size their buffers exactly. With pipeline the stages
// run in summa_pipelined.c, on the helpers exported here.
#include <string.h>

#include "dist/rdma.h"
#include "gpu/gpu.h"

typedef dsmmi_summa_run run;

static dsmm_status check_args(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                              const dsmm_dist_opts *o)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, dsmmi_dist_ok(ctx, A) && dsmmi_dist_ok(ctx, B), DSMM_ERR_ARG,
               "spgemm: A and B must be live distributed matrices of this context");
    DSMM_CHECK(ctx, A->grid == B->grid, DSMM_ERR_ARG,
               "spgemm: A is on a %dx%d grid, B on %dx%d; redistribute one of them", A->grid->pr,
               A->grid->pc, B->grid->pr, B->grid->pc);
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM,
               "spgemm: A is %lldx%lld, B %lldx%lld: inner dimensions differ", (long long)A->nrows,
               (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    DSMM_CHECK(ctx, (int)o->alg >= DSMM_DIST_AUTO && o->alg <= DSMM_DIST_WS_LOCAL_C, DSMM_ERR_ARG,
               "spgemm: unknown distributed algorithm %d", (int)o->alg);
    DSMM_CHECK(ctx, o->spgemm.mask == NULL && !o->spgemm.transpose_b, DSMM_ERR_ARG,
               "spgemm: a mask and transpose_b are not supported in distributed products");
    DSMM_CHECK(ctx, o->spgemm.type == -1 || dsmmi_type_ok((dsmm_type)o->spgemm.type), DSMM_ERR_ARG,
               "spgemm: invalid value type %d for C", o->spgemm.type);
    DSMM_CHECK(ctx, (int)o->accumulate >= DSMM_ACC_AUTO && o->accumulate <= DSMM_ACC_BINARY,
               DSMM_ERR_ARG, "spgemm: unknown accumulation %d", (int)o->accumulate);
    DSMM_CHECK(ctx, (int)o->spgemm.semiring >= 0 && o->spgemm.semiring < DSMM_SEMIRING_COUNT,
               DSMM_ERR_ARG, "spgemm: unknown semiring %d", (int)o->spgemm.semiring);
    // As the local kernel refuses it, but on every rank alike (a rank whose pieces are empty
    // never reaches the kernel, and the device's resident multiply read a pattern as ones).
    DSMM_CHECK(ctx,
               o->spgemm.semiring == DSMM_PLUS_PAIR ||
                   (A->type != DSMM_PATTERN && B->type != DSMM_PATTERN),
               DSMM_ERR_ARG,
               "spgemm: semiring %s needs values but %s is pattern-only (use plus-pair to count, "
               "or give the matrix values)",
               dsmm_semiring_name(o->spgemm.semiring), A->type == DSMM_PATTERN ? "A" : "B");
    if (o->gpu_resident) {
        DSMM_CHECK(ctx, o->accumulate != DSMM_ACC_FUSED, DSMM_ERR_ARG,
                   "spgemm: gpu_resident merges the stage products on the device; it does not "
                   "combine with the fused accumulation");
        DSMM_CHECK(ctx, o->spgemm.alg == DSMM_SPGEMM_AUTO || o->spgemm.alg == DSMM_SPGEMM_GPU,
                   DSMM_ERR_ARG,
                   "spgemm: gpu_resident multiplies with dsmm's GPU kernel; the local kernel "
                   "must be auto or gpu");
    }
cleanup:
    return st;
}

static void run_free(dsmm_ctx *ctx, run *r)
{
    int S = r->plan.n;
    if (r->dev_recv) dsmmi_summa_slots_free_device(ctx, &r->a, &r->b);
    dsmmi_gpu_acc_free(ctx, &r->dacc);
    dsmmi_summa_side_free(ctx, S, &r->a);
    dsmmi_summa_side_free(ctx, S, &r->b);
    dsmmi_merge_acc_free(ctx, &r->acc);
    r->stage_flops = dsmmi_free(ctx, r->stage_flops);
    dsmmi_summa_plan_free(ctx, &r->plan);
}

// Bytes of stage s's B piece for this rank's grid column.

static size_t b_bytes(const dsmm_dist *B, const run *r, int s)
{
    const dsmmi_grid *g = B->grid;
    int S = r->plan.n, owner = r->plan.kr[s] * g->pc + g->mycol;
    return dsmmi_piece_bytes(r->plan.hi[s] - r->plan.lo[s], r->b.all[owner * S + s], B->type);
}

// Both operands' pieces packed (a local failure, or one already in local, is agreed first),
// everyone's piece sizes all-gathered, and the largest piece of A and of B this rank receives.
// Collective.
static dsmm_status sides_make(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r,
                              dsmm_status local, size_t *amax, size_t *bmax)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_grid *g = A->grid;
    int S = r->plan.n;
    if (local == DSMM_OK) local = dsmmi_summa_side_make(ctx, A, 0, &r->plan, &r->a);
    if (local == DSMM_OK) local = dsmmi_summa_side_make(ctx, B, 1, &r->plan, &r->b);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_allgather_i64(ctx, r->a.nnz, S, r->a.all));
    DSMM_TRY(dsmmi_allgather_i64(ctx, r->b.nnz, S, r->b.all));
    *amax = *bmax = 0;
    for (int s = 0; s < S; s++) {
        size_t ab = dsmmi_summa_a_bytes(A, &r->plan, r->a.all, s), bb = b_bytes(B, r, s);
        if (g->mycol != r->plan.kc[s] && ab > *amax) *amax = ab;
        if (g->myrow != r->plan.kr[s] && bb > *bmax) *bmax = bb;
    }
cleanup:
    return st;
}

// Where stage s's pieces are (or arrive).
static char *a_at(const dsmm_dist *A, const run *r, int s, int slot)
{
    return dsmmi_summa_piece_at(&r->a, A->grid->mycol == r->plan.kc[s], s, slot);
}

static char *b_at(const dsmm_dist *B, const run *r, int s, int slot)
{
    return dsmmi_summa_piece_at(&r->b, B->grid->myrow == r->plan.kr[s], s, slot);
}

dsmm_status dsmmi_summa_post(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r, int s,
                             int slot, int prefetch)
{
    return dsmmi_summa_bcast_stage(ctx, A->grid, &r->plan, s, slot, prefetch, a_at(A, r, s, slot),
                                   dsmmi_summa_a_bytes(A, &r->plan, r->a.all, s), &r->a,
                                   b_at(B, r, s, slot), b_bytes(B, r, s), &r->b);
}

dsmm_status dsmmi_summa_multiply(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r,
                                 int s, int slot, const dsmm_spgemm_opts *lo)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *part = NULL;
    const dsmmi_grid *g = A->grid;
    int S = r->plan.n;
    int64_t an = r->a.all[(g->myrow * g->pc + r->plan.kc[s]) * S + s];
    int64_t bn = r->b.all[(r->plan.kr[s] * g->pc + g->mycol) * S + s];
    // Resident: merges the product or skip sets off are accumulation (r->acc.seconds, which
    // the caller takes out of the multiply's time) and device work (gpu_busy, Table V).
    double merged = r->dacc ? dsmmi_gpu_acc_merge_seconds(r->dacc) : 0;
    // An empty stage still counts in the binary schedule: it pushes no list (skips its slot).
    if (an == 0 || bn == 0) {
        if (!r->dacc) return dsmmi_merge_acc_push(ctx, &r->acc, &part);
        DSMM_TRY(dsmmi_gpu_acc_skip(ctx, r->dacc, s));
        goto cleanup;
    }
    const char *abuf = a_at(A, r, s, slot), *bbuf = b_at(B, r, s, slot);
    dsmm_idx w = r->plan.hi[s] - r->plan.lo[s];
    dsmm_csr Av, Bv;
    // (views only compute addresses: a piece in a device receive slot is never read here)
    dsmmi_piece_view(abuf, A->rb[g->myrow + 1] - A->rb[g->myrow], w, an, A->type, ctx, &Av);
    dsmmi_piece_view(bbuf, w, B->cb[g->mycol + 1] - B->cb[g->mycol], bn, B->type, ctx, &Bv);
    dsmm_spgemm_info info;
    memset(&info, 0, sizeof info);
    if (r->dacc) {
        // Resident: the product stays on the device; a received piece is there already when
        // the slots are device memory (this rank's own pieces are host memory).
        int adev = r->dev_recv && g->mycol != r->plan.kc[s];
        int bdev = r->dev_recv && g->myrow != r->plan.kr[s];
        DSMM_TRY(dsmmi_gpu_acc_multiply(ctx, r->dacc, s, &Av, adev, &Bv, bdev, &info));
        r->stage_flops[s] = info.flops;
        r->gpu_products++;
        r->gpu_busy += info.seconds_device + info.seconds_transfer;
        goto cleanup;
    }
    DSMM_TRY(dsmmi_local_spgemm(ctx, &Av, &Bv, lo, DSMMI_SPGEMM_FULL, &part, &info));
    r->stage_flops[s] = info.flops;
    if (info.on_gpu) {
        r->gpu_products++;
        r->gpu_busy += info.seconds_device + info.seconds_transfer;
    }
    DSMM_TRY(dsmmi_merge_acc_push(ctx, &r->acc, &part));
cleanup:
    if (r->dacc) {
        merged = dsmmi_gpu_acc_merge_seconds(r->dacc) - merged;
        r->acc.seconds += merged;
        r->gpu_busy += merged;
    }
    dsmm_csr_destroy(&part);
    return st;
}

dsmm_status dsmmi_summa_stages(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r,
                               const dsmm_spgemm_opts *lo, int prefetch, int fuse,
                               dsmm_status *local, dsmmi_rank_stats *rs)
{
    dsmm_status st = DSMM_OK;
    int S = r->plan.n;
    double t = dsmmi_wtime();
    if (prefetch && S > 0) DSMM_TRY(dsmmi_summa_post(ctx, A, B, r, 0, 0, 1));
    for (int s = 0; s < S; s++) {
        int slot = prefetch ? s % 2 : 0;
        if (prefetch) {
            DSMM_TRY(dsmmi_req_wait(ctx, &r->a.req[slot]));
            DSMM_TRY(dsmmi_req_wait(ctx, &r->b.req[slot]));
            if (s + 1 < S) DSMM_TRY(dsmmi_summa_post(ctx, A, B, r, s + 1, (s + 1) % 2, 1));
        } else {
            DSMM_TRY(dsmmi_summa_post(ctx, A, B, r, s, slot, 0));
        }
        double t1 = dsmmi_wtime();
        rs->comm += t1 - t;
        if (*local == DSMM_OK && !fuse) *local = dsmmi_summa_multiply(ctx, A, B, r, s, slot, lo);
        t = dsmmi_wtime();
        rs->comp += t - t1;
    }
cleanup:
    return st;
}

/* FUSED: the stages' pieces joined into this rank's row block of A (nr x m: piece s's columns
 * shifted by lo[s]) and column block of B (m x nc: pieces stacked), multiplied once. Stage
 * flops are counted from the pieces for the statistics. */
static dsmm_status fused(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r,
                         const dsmm_spgemm_opts *lo, dsmm_csr **tile, double *acc_seconds)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_grid *g = A->grid;
    int S = r->plan.n;
    dsmm_idx nr = A->rb[g->myrow + 1] - A->rb[g->myrow], nc = B->cb[g->mycol + 1] - B->cb[g->mycol];
    dsmm_idx m = A->ncols, an = 0, bn = 0;
    dsmm_csr *Ar = NULL, *Bc = NULL, *views = NULL;
    dsmm_idx *rowflops = NULL;
    double t0 = dsmmi_wtime();
    views = dsmmi_calloc(ctx, 2 * (size_t)(S ? S : 1), sizeof *views);
    rowflops = dsmmi_malloc(ctx, nr ? (size_t)nr : 1, sizeof *rowflops);
    DSMM_CHECK(ctx, views != NULL && rowflops != NULL, DSMM_ERR_NOMEM, "fused stages");
    dsmm_csr *av = views, *bv = views + S;
    for (int s = 0; s < S; s++) {
        int64_t za = r->a.all[(g->myrow * g->pc + r->plan.kc[s]) * S + s];
        int64_t zb = r->b.all[(r->plan.kr[s] * g->pc + g->mycol) * S + s];
        dsmm_idx w = r->plan.hi[s] - r->plan.lo[s];
        if (za) dsmmi_piece_view(a_at(A, r, s, 0), nr, w, za, A->type, ctx, &av[s]);
        if (zb) dsmmi_piece_view(b_at(B, r, s, 0), w, nc, zb, B->type, ctx, &bv[s]);
        an += za;
        bn += zb;
        if (za && zb) {
            dsmm_idx f = 0;
            dsmmi_spgemm_row_flops(&av[s], &bv[s], rowflops, &f);
            r->stage_flops[s] = (double)f;
        }
    }
    int abits = m <= INT32_MAX ? 32 : 64;
    DSMM_TRY(dsmmi_csr_create_ex(ctx, nr, m, an, A->type, abits, &Ar));
    DSMM_TRY(dsmmi_csr_create_ex(ctx, m, nc, bn, B->type, nc <= INT32_MAX ? 32 : 64, &Bc));
    size_t avb = dsmmi_type_size(A->type), bvb = dsmmi_type_size(B->type);
    // A's row block: row i takes piece 0's row i, then piece 1's, ... (columns increase).
    dsmm_idx k = 0;
    for (dsmm_idx i = 0; i < nr; i++) {
        Ar->rowptr[i] = k;
        for (int s = 0; s < S; s++) {
            if (av[s].nnz == 0) continue;
            dsmm_idx b = av[s].rowptr[i], e = av[s].rowptr[i + 1], lo_s = r->plan.lo[s];
            for (dsmm_idx q = b; q < e; q++, k++) {
                if (abits == 32)
                    Ar->colidx32[k] = (int32_t)(av[s].colidx32[q] + lo_s);
                else
                    Ar->colidx[k] = av[s].colidx32[q] + lo_s;
            }
            if (avb)
                memcpy((char *)Ar->val + (size_t)(k - (e - b)) * avb,
                       (const char *)av[s].val + (size_t)b * avb, (size_t)(e - b) * avb);
        }
    }
    Ar->rowptr[nr] = k;
    Ar->nnz = k;
    Ar->sorted = 1;
    // B's column block: the pieces' rows one after another.
    k = 0;
    for (int s = 0; s < S; s++) {
        dsmm_idx w = r->plan.hi[s] - r->plan.lo[s], lo_s = r->plan.lo[s];
        for (dsmm_idx i = 0; i < w; i++)
            Bc->rowptr[lo_s + i] = k + (bv[s].nnz ? bv[s].rowptr[i] : 0);
        if (bv[s].nnz) {
            for (dsmm_idx q = 0; q < bv[s].nnz; q++) {
                if (Bc->colidx32)
                    Bc->colidx32[k + q] = bv[s].colidx32[q];
                else
                    Bc->colidx[k + q] = bv[s].colidx32[q];
            }
            if (bvb) memcpy((char *)Bc->val + (size_t)k * bvb, bv[s].val, (size_t)bv[s].nnz * bvb);
            k += bv[s].nnz;
        }
    }
    Bc->rowptr[m] = k;
    Bc->nnz = k;
    Bc->sorted = 1;
    // Pieces no longer needed: free them before the multiply allocates C.
    dsmmi_summa_pieces_free(ctx, r->a.keep, S);
    dsmmi_summa_pieces_free(ctx, r->b.keep, S);
    *acc_seconds = dsmmi_wtime() - t0;
    dsmm_spgemm_info info;
    memset(&info, 0, sizeof info);
    DSMM_TRY(dsmmi_local_spgemm(ctx, Ar, Bc, lo, DSMMI_SPGEMM_FULL, tile, &info));
cleanup:
    dsmm_csr_destroy(&Ar);
    dsmm_csr_destroy(&Bc);
    views = dsmmi_free(ctx, views);
    rowflops = dsmmi_free(ctx, rowflops);
    return st;
}

dsmm_status dsmm_spgemm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, dsmm_dist **C)
{
    return dsmm_spgemm_ex(ctx, A, B, NULL, C);
}

dsmm_status dsmm_spgemm_ex(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                           const dsmm_dist_opts *opts, dsmm_dist **C)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist *Cd = NULL;
    dsmm_csr *tile = NULL;
    run r;
    memset(&r, 0, sizeof r);
    dsmm_dist_opts o;
    dsmmi_rank_stats rs;
    memset(&rs, 0, sizeof rs);
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_ARG, "spgemm: C must be non-NULL");
    *C = NULL;
    if (opts)
        o = *opts;
    else
        dsmm_dist_opts_init(&o);
    DSMM_TRY(check_args(ctx, A, B, &o));
    if (o.alg == DSMM_DIST_AUTO && o.gpu_resident) o.alg = DSMM_DIST_SUMMA;
    if (o.alg == DSMM_DIST_AUTO) DSMM_TRY(dsmmi_dist_auto(ctx, A, B, NULL, &o.alg));
    if (o.alg != DSMM_DIST_SUMMA) return dsmmi_rdma_spgemm(ctx, A, B, &o, C);
    double t0 = dsmmi_wtime();
    dsmm_traffic before = ctx->traffic;
    const dsmmi_grid *g = A->grid;
    // AUTO with the pipeline: the binary merge, made for it (HipMCL-GPU §IV).
    int prefetch = o.prefetch != 0,
        binary = o.accumulate == DSMM_ACC_BINARY || (o.accumulate == DSMM_ACC_AUTO && o.pipeline);
    dsmm_type type = o.spgemm.type != -1                                ? (dsmm_type)o.spgemm.type
                     : (A->type == DSMM_FLOAT && B->type == DSMM_FLOAT) ? DSMM_FLOAT
                                                                        : DSMM_DOUBLE;
    dsmm_idx nr = A->rb[g->myrow + 1] - A->rb[g->myrow], nc = B->cb[g->mycol + 1] - B->cb[g->mycol];
    int bits = nc <= INT32_MAX ? 32 : 64;

    // Set-up (local, then agreed): the plan, this rank's pieces, everyone's piece sizes.
    local = dsmmi_summa_plan_make(ctx, A->ncols, g->pr, g->pc, &r.plan);
    int S = r.plan.n;
    if (local == DSMM_OK) {
        size_t n = S ? (size_t)S : 1;
        r.stage_flops = dsmmi_calloc(ctx, n, sizeof *r.stage_flops);
        if (!r.stage_flops)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "spgemm: %d stages", S);
    }
    if (local == DSMM_OK)
        local = dsmmi_merge_acc_init(ctx, binary ? DSMMI_MERGE_BINARY : DSMMI_MERGE_KWAY, S, nr, nc,
                                     o.spgemm.semiring, type, bits, &r.acc);
    // Resident: the device holds and merges the stage products (a rank without a device fails
    // here, and every rank with it after the agreement below).
    if (local == DSMM_OK && o.gpu_resident)
        local = dsmmi_gpu_acc_create(ctx, nr, nc, o.spgemm.semiring, S, &r.dacc);
    size_t amax = 0, bmax = 0;
    DSMM_TRY(sides_make(ctx, A, B, &r, local, &amax, &bmax));
    // The accumulation is a local choice: the broadcasts are the same either way.
    size_t keep = 0;
    for (int s = 0; s < S; s++) {
        if (g->mycol != r.plan.kc[s]) keep += dsmmi_summa_a_bytes(A, &r.plan, r.a.all, s);
        if (g->myrow != r.plan.kr[s]) keep += b_bytes(B, &r, s);
    }
    int fuse = o.accumulate == DSMM_ACC_FUSED;
    if (o.accumulate == DSMM_ACC_AUTO && !o.pipeline && !o.gpu_resident) {
        // Twice the pieces: they are joined into one row block of A and column block of B.
        // (A pipeline multiplies stage by stage, so AUTO merges then: fusing as well had
        // multiplied every product twice, by stages and fused.)
        size_t budget = dsmm_ctx_mem_budget(ctx), used = dsmm_ctx_mem_in_use(ctx);
        fuse = budget == 0 || (used <= budget && 2 * keep <= budget - used);
    }
    int pipeline = o.pipeline != 0 && !fuse;
    if (fuse && local == DSMM_OK) {
        r.a.keep = dsmmi_calloc(ctx, S ? (size_t)S : 1, sizeof *r.a.keep);
        r.b.keep = dsmmi_calloc(ctx, S ? (size_t)S : 1, sizeof *r.b.keep);
        if (r.a.keep == NULL || r.b.keep == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "spgemm: %d stages", S);
        for (int s = 0; local == DSMM_OK && s < S; s++) {
            size_t ab = g->mycol != r.plan.kc[s] ? dsmmi_summa_a_bytes(A, &r.plan, r.a.all, s) : 0;
            size_t bb = g->myrow != r.plan.kr[s] ? b_bytes(B, &r, s) : 0;
            if (ab) r.a.keep[s] = dsmmi_malloc(ctx, ab, 1);
            if (bb) r.b.keep[s] = dsmmi_malloc(ctx, bb, 1);
            if ((ab && r.a.keep[s] == NULL) || (bb && r.b.keep[s] == NULL))
                local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                    "spgemm: %zu bytes of received pieces", keep);
        }
    }
    // A CUDA-aware MPI receives the resident product's pieces into the device pool, in blocking
    // broadcasts only: device buffers are not taken by nonblocking collectives (Open MPI's CUDA
    // notes), so prefetch without the pipeline (MPI_Ibcast) stages them through the host.
    r.dev_recv = r.dacc != NULL && local == DSMM_OK && ctx->size > 1 && (pipeline || !prefetch) &&
                 dsmm_mpi_cuda_aware();
    if (!fuse && local == DSMM_OK)
        local = dsmmi_summa_slots_alloc(ctx, &r.a, &r.b, 1 + (prefetch || pipeline), amax, bmax,
                                        r.dev_recv, "spgemm");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    rs.comm += dsmmi_wtime() - t0;

    // Stages. A local failure stops multiplying but not communicating, so no rank is left
    // waiting in a broadcast; the status is agreed after the merge.
    dsmm_spgemm_opts lo = o.spgemm;
    lo.type = (int)type;
    lo.unsorted = 0;
    lo.col_bits = bits;
    if (pipeline)
        DSMM_TRY(dsmmi_summa_pipelined(ctx, A, B, &r, &lo, &local, &rs));
    else
        DSMM_TRY(dsmmi_summa_stages(ctx, A, B, &r, &lo, prefetch, fuse, &local, &rs));
    // Merges during the stages (binary) are accumulation, not multiplication.
    double staged_merge = r.acc.seconds;
    rs.comp -= staged_merge;
    double t = dsmmi_wtime();

    // Merge the partial products (the accumulation of the breakdown), or the fused multiply.
    double fused_acc = 0, dev_merge = 0;
    int dev_merges = 0;
    if (local == DSMM_OK && fuse) {
        local = fused(ctx, A, B, &r, &lo, &tile, &fused_acc);
    } else if (local == DSMM_OK && r.dacc) {
        local = dsmmi_gpu_acc_finish(ctx, r.dacc, type, bits, &tile, &dev_merges, &dev_merge);
    } else if (local == DSMM_OK) {
        local = dsmmi_merge_acc_finish(ctx, &r.acc, &tile);
    }
    dsmmi_merge_acc_free(ctx, &r.acc);
    double t2 = dsmmi_wtime();
    if (fuse) {
        rs.acc = fused_acc;
        rs.comp += t2 - t - fused_acc;
    } else {
        rs.acc = t2 - t + staged_merge;
        rs.merge = 1;
        rs.merge_peak_bytes = r.acc.peak_bytes; // host bytes: 0 when resident
        rs.merge_seconds = r.dacc ? dev_merge : r.acc.seconds;
    }
    rs.pipeline = pipeline;
    DSMM_TRY(dsmmi_barrier(ctx, &rs.wait));
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_dist_new(ctx, A->nrows, B->ncols, type, g->pr, g->pc, &Cd));
    DSMM_TRY(dsmmi_dist_set_tile(ctx, Cd, tile));
    tile = NULL;
    rs.total = dsmmi_wtime() - t0;

    if (o.stats) {
        for (int s = 0; s < S; s++) rs.flops += r.stage_flops[s];
        rs.nnz_a = A->tile->nnz;
        rs.nnz_b = B->tile->nnz;
        rs.nnz_c = Cd->tile->nnz;
        rs.peak_bytes = (int64_t)dsmm_ctx_mem_peak(ctx);
        dsmmi_traffic_diff(&ctx->traffic, &before, &rs.traffic);
        DSMM_TRY(dsmmi_stats_fill(ctx, o.stats, "spgemm", "summa", g, prefetch, &rs, S, r.plan.lo,
                                  r.plan.hi, r.stage_flops, A->nnz + B->nnz, Cd->nnz));
        DSMM_TRY(dsmm_stats_set_str(o.stats, "accumulate",
                                    fuse     ? "fused"
                                    : r.dacc ? "device"
                                    : binary ? "binary"
                                             : "merge"));
        DSMM_TRY(dsmm_stats_set_int(o.stats, "gpu_resident", r.dacc != NULL));
        if (r.dacc) {
            DSMM_TRY(dsmm_stats_set_int(o.stats, "gpu_merges", dev_merges));
            DSMM_TRY(dsmm_stats_set_int(o.stats, "mpi_device_buffers", r.dev_recv));
        }
    }
    *C = Cd;
    Cd = NULL;
cleanup:
    dsmm_csr_destroy(&tile);
    dsmm_dist_destroy(&Cd);
    run_free(ctx, &r);
    return st;
}

dsmm_status dsmmi_summa_count(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                              double *row_nnz, double *flops)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_idx *rows = NULL;
    run r;
    memset(&r, 0, sizeof r);
    DSMM_CHECK(ctx, row_nnz != NULL && flops != NULL, DSMM_ERR_ARG, "count: NULL output");
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    DSMM_TRY(check_args(ctx, A, B, &o));
    const dsmmi_grid *g = A->grid;
    dsmm_idx nr = A->rb[g->myrow + 1] - A->rb[g->myrow], nc = B->cb[g->mycol + 1] - B->cb[g->mycol];
    for (dsmm_idx i = 0; i < nr; i++) row_nnz[i] = 0.0;
    *flops = 0.0;

    local = dsmmi_summa_plan_make(ctx, A->ncols, g->pr, g->pc, &r.plan);
    int S = r.plan.n;
    if (local == DSMM_OK) {
        rows = dsmmi_malloc(ctx, nr ? (size_t)nr : 1, sizeof *rows);
        if (rows == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "count: %lld rows",
                                (long long)nr);
    }
    size_t amax = 0, bmax = 0;
    DSMM_TRY(sides_make(ctx, A, B, &r, local, &amax, &bmax));
    r.a.buf[0] = dsmmi_malloc(ctx, amax ? amax : 1, 1);
    r.b.buf[0] = dsmmi_malloc(ctx, bmax ? bmax : 1, 1);
    if (r.a.buf[0] == NULL || r.b.buf[0] == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                            "count: receive buffers of %zu + %zu bytes", amax, bmax);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));

    // Stages: broadcast (blocking, as dsmmi_summa_stages without prefetch), count, add. A local
    // failure stops counting, never communicating; the status is agreed at the end.
    for (int s = 0; s < S; s++) {
        DSMM_TRY(dsmmi_summa_post(ctx, A, B, &r, s, 0, 0));
        int64_t an = r.a.all[(g->myrow * g->pc + r.plan.kc[s]) * S + s];
        int64_t bn = r.b.all[(r.plan.kr[s] * g->pc + g->mycol) * S + s];
        if (local != DSMM_OK || an == 0 || bn == 0) continue;
        dsmm_idx w = r.plan.hi[s] - r.plan.lo[s], total = 0, f = 0;
        dsmm_csr Av, Bv;
        dsmmi_piece_view(a_at(A, &r, s, 0), nr, w, an, A->type, ctx, &Av);
        dsmmi_piece_view(b_at(B, &r, s, 0), w, nc, bn, B->type, ctx, &Bv);
        local = dsmmi_spgemm_count(ctx, &Av, &Bv, rows, &total, &f);
        if (local != DSMM_OK) continue;
        for (dsmm_idx i = 0; i < nr; i++) row_nnz[i] += (double)rows[i];
        *flops += (double)f;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
cleanup:
    rows = dsmmi_free(ctx, rows);
    run_free(ctx, &r);
    return st;
}
