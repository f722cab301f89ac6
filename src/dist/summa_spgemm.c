// src/dist/summa_spgemm.c: bulk-synchronous Sparse SUMMA for C = A * B (HipMCL §II, RDMA
// paper §2). Stage s broadcasts A's piece along grid rows and B's piece along grid columns
// (summa.c's plan), every rank multiplies the two pieces it holds with the local SpGEMM
// (dsmmi_local_spgemm: the kernel table picks the accumulator), keeps the partial product, and
// at the end merges its partial products with a k-way heap merge (dsmmi_csr_merge), the
// HipMCL baseline. With prefetch, stage s+1's broadcasts (MPI_Ibcast) are posted before stage
// s is multiplied, so communication overlaps computation; without it each stage's broadcasts
// complete before its multiply. The piece sizes are exchanged once before the stages, so empty
// pieces are never sent and receivers size their buffers exactly.
#include <string.h>

#include "dist/summa.h"

// What one rank holds during the run.
typedef struct run {
    dsmmi_summa_plan plan;
    char **apack, **bpack; // this rank's own pieces (roots)
    int64_t *annz, *bnnz;  // this rank's piece sizes, then everyone's (P x S)
    int64_t *a_all, *b_all;
    char *abuf[2], *bbuf[2]; // receive slots (two with prefetch)
    dsmmi_req areq[2], breq[2];
    dsmm_csr **parts;
    double *stage_flops;
} run;

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
    DSMM_CHECK(ctx, o->alg == DSMM_DIST_AUTO || o->alg == DSMM_DIST_SUMMA, DSMM_ERR_ARG,
               "spgemm: unknown distributed algorithm %d", (int)o->alg);
    DSMM_CHECK(ctx, o->spgemm.mask == NULL && !o->spgemm.transpose_b, DSMM_ERR_ARG,
               "spgemm: a mask and transpose_b are not supported in distributed products");
    DSMM_CHECK(ctx, o->spgemm.type == -1 || dsmmi_type_ok((dsmm_type)o->spgemm.type), DSMM_ERR_ARG,
               "spgemm: invalid value type %d for C", o->spgemm.type);
    DSMM_CHECK(ctx, (int)o->spgemm.semiring >= 0 && o->spgemm.semiring < DSMM_SEMIRING_COUNT,
               DSMM_ERR_ARG, "spgemm: unknown semiring %d", (int)o->spgemm.semiring);
cleanup:
    return st;
}

static void run_free(dsmm_ctx *ctx, run *r)
{
    int S = r->plan.n;
    dsmmi_summa_pieces_free(ctx, r->apack, S);
    dsmmi_summa_pieces_free(ctx, r->bpack, S);
    r->apack = dsmmi_free(ctx, r->apack);
    r->bpack = dsmmi_free(ctx, r->bpack);
    r->annz = dsmmi_free(ctx, r->annz);
    r->bnnz = dsmmi_free(ctx, r->bnnz);
    r->a_all = dsmmi_free(ctx, r->a_all);
    r->b_all = dsmmi_free(ctx, r->b_all);
    for (int k = 0; k < 2; k++) {
        (void)dsmmi_req_wait(ctx, &r->areq[k]);
        (void)dsmmi_req_wait(ctx, &r->breq[k]);
        r->abuf[k] = dsmmi_free(ctx, r->abuf[k]);
        r->bbuf[k] = dsmmi_free(ctx, r->bbuf[k]);
    }
    for (int s = 0; r->parts && s < S; s++) dsmm_csr_destroy(&r->parts[s]);
    r->parts = dsmmi_free(ctx, r->parts);
    r->stage_flops = dsmmi_free(ctx, r->stage_flops);
    dsmmi_summa_plan_free(ctx, &r->plan);
}

// Bytes of stage s's A piece for this rank's grid row and B piece for its grid column.
static size_t a_bytes(const dsmm_dist *A, const run *r, int s)
{
    const dsmmi_grid *g = A->grid;
    int S = r->plan.n, owner = g->myrow * g->pc + r->plan.kc[s];
    return dsmmi_piece_bytes(A->rb[g->myrow + 1] - A->rb[g->myrow], r->a_all[owner * S + s],
                             A->type);
}

static size_t b_bytes(const dsmm_dist *B, const run *r, int s)
{
    const dsmmi_grid *g = B->grid;
    int S = r->plan.n, owner = r->plan.kr[s] * g->pc + g->mycol;
    return dsmmi_piece_bytes(r->plan.hi[s] - r->plan.lo[s], r->b_all[owner * S + s], B->type);
}

// Starts (prefetch) or completes (blocking) stage s's two broadcasts into slot.
static dsmm_status post(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r, int s,
                        int slot, int prefetch)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_grid *g = A->grid;
    int kc = r->plan.kc[s], kr = r->plan.kr[s];
    char *abuf = g->mycol == kc ? r->apack[s] : r->abuf[slot];
    char *bbuf = g->myrow == kr ? r->bpack[s] : r->bbuf[slot];
    size_t ab = a_bytes(A, r, s), bb = b_bytes(B, r, s);
    if (prefetch) {
        DSMM_TRY(dsmmi_ibcast(ctx, g, DSMMI_ALONG_ROW, kc, abuf, ab, &r->areq[slot]));
        DSMM_TRY(dsmmi_ibcast(ctx, g, DSMMI_ALONG_COL, kr, bbuf, bb, &r->breq[slot]));
    } else {
        DSMM_TRY(dsmmi_bcast(ctx, g, DSMMI_ALONG_ROW, kc, abuf, ab));
        DSMM_TRY(dsmmi_bcast(ctx, g, DSMMI_ALONG_COL, kr, bbuf, bb));
    }
cleanup:
    return st;
}

// Multiplies stage s's pieces (in slot) into a partial product of this rank's C tile.
static dsmm_status multiply(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B, run *r, int s,
                            int slot, const dsmm_spgemm_opts *lo, int *nparts)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_grid *g = A->grid;
    int S = r->plan.n;
    int64_t an = r->a_all[(g->myrow * g->pc + r->plan.kc[s]) * S + s];
    int64_t bn = r->b_all[(r->plan.kr[s] * g->pc + g->mycol) * S + s];
    if (an == 0 || bn == 0) return DSMM_OK;
    const char *abuf = g->mycol == r->plan.kc[s] ? r->apack[s] : r->abuf[slot];
    const char *bbuf = g->myrow == r->plan.kr[s] ? r->bpack[s] : r->bbuf[slot];
    dsmm_idx w = r->plan.hi[s] - r->plan.lo[s];
    dsmm_csr Av, Bv;
    dsmmi_piece_view(abuf, A->rb[g->myrow + 1] - A->rb[g->myrow], w, an, A->type, ctx, &Av);
    dsmmi_piece_view(bbuf, w, B->cb[g->mycol + 1] - B->cb[g->mycol], bn, B->type, ctx, &Bv);
    dsmm_spgemm_info info;
    memset(&info, 0, sizeof info);
    DSMM_TRY(dsmmi_local_spgemm(ctx, &Av, &Bv, lo, DSMMI_SPGEMM_FULL, &r->parts[*nparts], &info));
    (*nparts)++;
    r->stage_flops[s] = info.flops;
cleanup:
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
    double t0 = dsmmi_wtime();
    dsmm_traffic before = ctx->traffic;
    const dsmmi_grid *g = A->grid;
    int P = g->pr * g->pc, prefetch = o.prefetch != 0;
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
        r.apack = dsmmi_calloc(ctx, n, sizeof *r.apack);
        r.bpack = dsmmi_calloc(ctx, n, sizeof *r.bpack);
        r.annz = dsmmi_calloc(ctx, n, sizeof *r.annz);
        r.bnnz = dsmmi_calloc(ctx, n, sizeof *r.bnnz);
        r.a_all = dsmmi_calloc(ctx, n * (size_t)P, sizeof *r.a_all);
        r.b_all = dsmmi_calloc(ctx, n * (size_t)P, sizeof *r.b_all);
        r.parts = dsmmi_calloc(ctx, n, sizeof *r.parts);
        r.stage_flops = dsmmi_calloc(ctx, n, sizeof *r.stage_flops);
        if (!r.apack || !r.bpack || !r.annz || !r.bnnz || !r.a_all || !r.b_all || !r.parts ||
            !r.stage_flops)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "spgemm: %d stages", S);
    }
    if (local == DSMM_OK) local = dsmmi_summa_pieces(ctx, A, 0, &r.plan, r.apack, r.annz);
    if (local == DSMM_OK) local = dsmmi_summa_pieces(ctx, B, 1, &r.plan, r.bpack, r.bnnz);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_allgather_i64(ctx, r.annz, S, r.a_all));
    DSMM_TRY(dsmmi_allgather_i64(ctx, r.bnnz, S, r.b_all));
    size_t amax = 0, bmax = 0;
    for (int s = 0; s < S; s++) {
        if (g->mycol != r.plan.kc[s] && a_bytes(A, &r, s) > amax) amax = a_bytes(A, &r, s);
        if (g->myrow != r.plan.kr[s] && b_bytes(B, &r, s) > bmax) bmax = b_bytes(B, &r, s);
    }
    for (int k = 0; k < 1 + prefetch && local == DSMM_OK; k++) {
        r.abuf[k] = dsmmi_malloc(ctx, amax ? amax : 1, 1);
        r.bbuf[k] = dsmmi_malloc(ctx, bmax ? bmax : 1, 1);
        if (r.abuf[k] == NULL || r.bbuf[k] == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "spgemm: receive buffers of %zu + %zu bytes", amax, bmax);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    rs.comm += dsmmi_wtime() - t0;

    // Stages. A local failure stops multiplying but not communicating, so no rank is left
    // waiting in a broadcast; the status is agreed after the merge.
    dsmm_spgemm_opts lo = o.spgemm;
    lo.type = (int)type;
    lo.unsorted = 0;
    lo.col_bits = bits;
    int nparts = 0;
    double t = dsmmi_wtime();
    if (prefetch && S > 0) DSMM_TRY(post(ctx, A, B, &r, 0, 0, 1));
    for (int s = 0; s < S; s++) {
        int slot = prefetch ? s % 2 : 0;
        if (prefetch) {
            DSMM_TRY(dsmmi_req_wait(ctx, &r.areq[slot]));
            DSMM_TRY(dsmmi_req_wait(ctx, &r.breq[slot]));
            if (s + 1 < S) DSMM_TRY(post(ctx, A, B, &r, s + 1, (s + 1) % 2, 1));
        } else {
            DSMM_TRY(post(ctx, A, B, &r, s, slot, 0));
        }
        double t1 = dsmmi_wtime();
        rs.comm += t1 - t;
        if (local == DSMM_OK) local = multiply(ctx, A, B, &r, s, slot, &lo, &nparts);
        t = dsmmi_wtime();
        rs.comp += t - t1;
    }

    // Merge the partial products (the accumulation of the breakdown).
    if (local == DSMM_OK) {
        if (nparts == 1) {
            tile = r.parts[0];
            r.parts[0] = NULL;
        } else {
            local = dsmmi_csr_merge(ctx, (const dsmm_csr *const *)r.parts, nparts, nr, nc,
                                    o.spgemm.semiring, type, bits, &tile);
        }
    }
    for (int s = 0; s < S; s++) dsmm_csr_destroy(&r.parts[s]);
    double t2 = dsmmi_wtime();
    rs.acc = t2 - t;
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
    }
    *C = Cd;
    Cd = NULL;
cleanup:
    dsmm_csr_destroy(&tile);
    dsmm_dist_destroy(&Cd);
    run_free(ctx, &r);
    return st;
}
