// src/dist/rdma_run.c: the one-sided distributed products of the RDMA paper (§3.2-§3.4) for
// SpGEMM and SpMM: stationary C (Alg. 2), stationary A (Alg. 1) and stationary B, each with
// prefetch of the next item's tiles and the iteration offset of §3.3 (i + j for C, i + k for
// A, k + j for B); random work stealing on a 2D reservation grid over A's tiles (Alg. 3) and
// locality-aware stealing on a 3D grid of items for stationary A and C.
//
// A work item is C(i,j) += A(i,s) * B(s,j) over the tiles of rdma.h. An item is live when both
// tiles are non-empty; every rank knows which are from the directory, so dead items are never
// claimed, fetched or pushed. The rank that executes an item multiplies the two tiles (its own
// through local pointers, others fetched with non-blocking gets into pool buffers) and
// delivers the partial product: into its own C tile when it owns C(i,j), else it keeps the
// packed partial in the partials window and pushes a descriptor to C(i,j)'s owner's queue.
// Owners pop, fetch and accumulate (sparse: the partials are merged in stage order at the
// end, so the result does not depend on arrival order; dense: added as they come) until they
// have one contribution per live item of their tile, then everyone meets at a barrier, after
// which no partial is read any more.
//
// A rank that fails locally (memory) goes on claiming and delivering, with a failure marker
// instead of a partial, so no owner waits for ever; the status is agreed at the end.
//
// With dsmm_dist_opts.gpu_resident the C tile's partials stay on the device. SpGEMM: the
// owner multiplies its own items into a device accumulator (slot = the item's stage) and
// uploads the partials it fetches from other ranks into it; the accumulator merges them in a
// fixed tree over the stages (gpu/sum_tree.c), so the result still does not depend on the
// order they arrived in, and C's tile is downloaded once. SpMM: C's dense tile lives on the
// device (gpu/spmm.cu's dsmmi_gpu_dacc); the owner's items are added into it by the kernel,
// fetched partials after one upload each, and the tile is downloaded once. Items for other
// owners are multiplied by the local kernel (on the device when AUTO sends them there) and
// travel packed through host windows, as without residency.
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/rdma.h"
#include "gpu/gpu.h"

enum { DEFAULT_QUEUE_CAP = 64 };

typedef struct eng {
    dsmm_ctx *ctx;
    dsmm_dist_alg alg;
    int spmm, prefetch;
    const dsmm_dist *A, *B;
    const dsmm_dist_dense *Bd;
    dsmm_type ctype;
    const dsmmi_grid *g;
    int pr, pc, S, me, myrow, mycol;
    dsmmi_summa_plan plan;
    dsmmi_rmat ra, rb;
    dsmmi_pool pool;
    dsmmi_win *pwin; // partial results kept for their consumers (dynamic)
    dsmmi_rqueue q;
    int queues; // 1 when some item may be executed away from its C tile's owner
    // Claims: one counter per item (3D) or per A tile (2D), hosted at chost, at cdisp.
    dsmmi_win *cwin;
    int64_t nclaims; // counters hosted here
    int *chost;
    int64_t *cdisp;
    // Candidate items: this rank's own [0, nown), then steal candidates [nown, ncand).
    int64_t *cand, ncand, nown, pos;
    int64_t *apieces, napieces, apos, aclaimed; // ws-random-a: A tiles to claim from
    int64_t nitems;
    // This rank's C tile.
    dsmm_csr **parts;      // SpGEMM: one partial per stage
    dsmmi_gpu_acc *dacc;   // SpGEMM with gpu_resident: the partials on the device instead
    dsmmi_gpu_dacc *ddacc; // SpMM with gpu_resident: C's dense tile on the device
    int gpu_merges;        // the accumulator's merges, and their device seconds
    double gpu_merge_seconds;
    dsmm_dist_dense *Cd;
    int64_t expected, received;
    // Partials this rank produced for others, attached to pwin until the final barrier.
    char **out;
    int nout, capout;
    dsmm_spgemm_opts klo;
    dsmm_spmm_opts mlo;
    dsmm_status local;
    double t0; // when the operation began
    // Statistics.
    double *stage_flops, comp, acc, get_wait, done, setup;
    int64_t items, stolen, gets;
} eng;

void dsmmi_rdma_set_test_delay(dsmm_ctx *ctx, int rank, double seconds)
{
    ctx->test_delay_rank = rank;
    ctx->test_delay = seconds;
}

void dsmmi_rdma_set_trace(dsmm_ctx *ctx, int64_t *trace, int64_t n)
{
    ctx->rdma_trace = trace;
    ctx->rdma_trace_n = n;
}

static void item_split(const eng *e, int64_t it, int *i, int *s, int *j)
{
    *j = (int)(it % e->pc);
    *s = (int)((it / e->pc) % e->S);
    *i = (int)(it / ((int64_t)e->pc * e->S));
}

static int64_t item_of(const eng *e, int i, int s, int j)
{
    return ((int64_t)i * e->S + s) * e->pc + j;
}

static int live(const eng *e, int i, int s, int j)
{
    return e->ra.dir[i * e->S + s].nnz > 0 && e->rb.dir[s * e->pc + j].nnz > 0;
}

static int a_owner(const eng *e, int i, int s)
{
    return e->ra.dir[i * e->S + s].owner;
}

static int b_owner(const eng *e, int s, int j)
{
    return e->rb.dir[s * e->pc + j].owner;
}

static int is_ws(dsmm_dist_alg a)
{
    return a == DSMM_DIST_WS_RANDOM_A || a == DSMM_DIST_WS_LOCAL_A || a == DSMM_DIST_WS_LOCAL_C;
}

/* ------------------------------------------------------------------------------------------ */
/* Work lists and claims                                                                      */
/* ------------------------------------------------------------------------------------------ */

static void add_cand(eng *e, char *mark, int i, int s, int j)
{
    int64_t it = item_of(e, i, s, j);
    if (mark[it] || !live(e, i, s, j)) return;
    mark[it] = 1;
    e->cand[e->ncand++] = it;
}

// This rank's own items in the order of its stationary matrix, with the §3.3 offsets.
static void own_items(eng *e, char *mark, int stationary_c)
{
    int i = e->myrow, j = e->mycol, S = e->S;
    if (stationary_c) {
        for (int s_ = 0; s_ < S; s_++) add_cand(e, mark, i, (s_ + i + j) % S, j);
    } else if (e->alg == DSMM_DIST_RDMA_B) {
        for (int s = 0; s < S; s++) {
            if (b_owner(e, s, j) != e->me) continue;
            for (int i_ = 0; i_ < e->pr; i_++) add_cand(e, mark, (i_ + s + j) % e->pr, s, j);
        }
    } else { // stationary A
        for (int s = 0; s < S; s++) {
            if (a_owner(e, i, s) != e->me) continue;
            for (int j_ = 0; j_ < e->pc; j_++) add_cand(e, mark, i, s, (j_ + i + s) % e->pc);
        }
    }
}

// Locality-aware steal candidates: items touching one of this rank's tiles (§3.4).
static void steal_items(eng *e, char *mark)
{
    int S = e->S;
    if (e->alg == DSMM_DIST_WS_LOCAL_A) {
        // C tile first (the result stays here), then B tiles.
        for (int s_ = 0; s_ < S; s_++)
            add_cand(e, mark, e->myrow, (s_ + e->myrow + e->mycol) % S, e->mycol);
        for (int s = 0; s < S; s++)
            if (b_owner(e, s, e->mycol) == e->me)
                for (int i_ = 0; i_ < e->pr; i_++)
                    add_cand(e, mark, (i_ + s + e->mycol) % e->pr, s, e->mycol);
    } else { // ws-local-c: A tiles, then B tiles
        for (int s = 0; s < S; s++)
            if (a_owner(e, e->myrow, s) == e->me)
                for (int j_ = 0; j_ < e->pc; j_++)
                    add_cand(e, mark, e->myrow, s, (j_ + e->myrow + s) % e->pc);
        for (int s = 0; s < S; s++)
            if (b_owner(e, s, e->mycol) == e->me)
                for (int i_ = 0; i_ < e->pr; i_++)
                    add_cand(e, mark, (i_ + s + e->mycol) % e->pr, s, e->mycol);
    }
}

static dsmm_status plan_work(eng *e)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    int P = e->pr * e->pc;
    char *mark = NULL;
    int64_t *count = NULL;
    e->nitems = (int64_t)e->pr * e->S * e->pc;
    size_t n = e->nitems ? (size_t)e->nitems : 1;
    mark = dsmmi_calloc(ctx, n, 1);
    e->cand = dsmmi_malloc(ctx, n, sizeof *e->cand);
    DSMM_CHECK(ctx, mark && e->cand, DSMM_ERR_NOMEM, "work list of %lld items",
               (long long)e->nitems);
    int stat_c = e->alg == DSMM_DIST_RDMA_C || e->alg == DSMM_DIST_WS_LOCAL_C;
    own_items(e, mark, stat_c);
    e->nown = e->ncand;
    if (e->alg == DSMM_DIST_WS_LOCAL_A || e->alg == DSMM_DIST_WS_LOCAL_C) steal_items(e, mark);
    if (!is_ws(e->alg)) goto cleanup;

    // Claim counters: per item hosted by its A tile's (ws-local-a) or C tile's (ws-local-c)
    // owner; per A tile by its owner (ws-random-a).
    int random = e->alg == DSMM_DIST_WS_RANDOM_A;
    int64_t nc = random ? (int64_t)e->pr * e->S : e->nitems;
    e->chost = dsmmi_malloc(ctx, nc ? (size_t)nc : 1, sizeof *e->chost);
    e->cdisp = dsmmi_malloc(ctx, nc ? (size_t)nc : 1, sizeof *e->cdisp);
    count = dsmmi_calloc(ctx, (size_t)P, sizeof *count);
    DSMM_CHECK(ctx, e->chost && e->cdisp && count, DSMM_ERR_NOMEM, "%lld claim counters",
               (long long)nc);
    for (int64_t c = 0; c < nc; c++) {
        int i, s, j;
        if (random) {
            i = (int)(c / e->S);
            s = (int)(c % e->S);
            j = 0;
        } else {
            item_split(e, c, &i, &s, &j);
        }
        int h = random || e->alg == DSMM_DIST_WS_LOCAL_A ? a_owner(e, i, s) : i * e->pc + j;
        e->chost[c] = h;
        e->cdisp[c] = 8 * count[h]++;
    }
    if (random) {
        // Own A tiles first, then every other A tile, starting at a rank-dependent place so
        // thieves spread over the victims (Alg. 3's (rank() + idx) order).
        e->apieces = dsmmi_malloc(ctx, nc ? (size_t)nc : 1, sizeof *e->apieces);
        DSMM_CHECK(ctx, e->apieces != NULL, DSMM_ERR_NOMEM, "%lld A tiles", (long long)nc);
        for (int64_t c = 0; c < nc; c++)
            if (e->chost[c] == e->me) e->apieces[e->napieces++] = c;
        e->nown = e->napieces;
        for (int64_t k = 0; k < nc; k++) {
            int64_t c = (e->me * (nc / P + 1) + k) % nc;
            if (e->chost[c] != e->me) e->apieces[e->napieces++] = c;
        }
    }
    e->nclaims = count[e->me];
cleanup:
    dsmmi_free(ctx, mark);
    dsmmi_free(ctx, count);
    return st;
}

/* next_item: the next item this rank executes (claimed when stealing is on); 0 when none is
 * left. *stolen: the item is not one of this rank's own. */
static dsmm_status next_item(eng *e, int64_t *it, int *stolen, int *got)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    *got = 0;
    if (e->alg == DSMM_DIST_WS_RANDOM_A) {
        while (e->apos < e->napieces) {
            int64_t c = e->apieces[e->apos], old = 0;
            int i = (int)(c / e->S), s = (int)(c % e->S);
            if (e->ra.dir[c].nnz == 0) {
                e->apos++;
                continue;
            }
            DSMM_TRY(
                dsmmi_rma_fetch_add(ctx, e->cwin, e->chost[c], (uint64_t)e->cdisp[c], 1, &old));
            if (old >= e->pc) {
                e->apos++;
                continue;
            }
            int j = (int)((old + i + s) % e->pc);
            if (!live(e, i, s, j)) continue;
            *it = item_of(e, i, s, j);
            *stolen = e->apos >= e->nown;
            *got = 1;
            return DSMM_OK;
        }
        return DSMM_OK;
    }
    while (e->pos < e->ncand) {
        int64_t c = e->cand[e->pos++], old = 0;
        if (is_ws(e->alg)) {
            DSMM_TRY(
                dsmmi_rma_fetch_add(ctx, e->cwin, e->chost[c], (uint64_t)e->cdisp[c], 1, &old));
            if (old != 0) continue; // someone else has it
        }
        *it = c;
        *stolen = e->pos > e->nown;
        *got = 1;
        return DSMM_OK;
    }
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Accumulation at the C tile's owner                                                         */
/* ------------------------------------------------------------------------------------------ */

// Adds a dense partial (rows x cols of the C tile's type) into the C tile.
static void dense_add(eng *e, const char *p)
{
    dsmm_dense *C = e->Cd->tile;
    size_t n = (size_t)C->nrows * (size_t)C->ncols;
    if (C->type == DSMM_DOUBLE) {
        double *c = C->val;
        const double *v = (const double *)p;
        for (size_t k = 0; k < n; k++) c[k] += v[k];
    } else {
        float *c = C->val;
        const float *v = (const float *)p;
        for (size_t k = 0; k < n; k++) c[k] += v[k];
    }
}

// One contribution from a descriptor: fetched from its producer and accumulated.
static dsmm_status take(eng *e, const dsmmi_qdesc *d)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    char *buf = NULL;
    int i, s, j;
    item_split(e, d->item, &i, &s, &j);
    e->received++;
    if (d->nnz < 0) {
        if (e->local == DSMM_OK)
            e->local =
                dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                            "rank %lld could not compute its partial product", (long long)d->rank);
        return DSMM_OK;
    }
    if (d->bytes == 0 || e->local != DSMM_OK) {
        // An empty partial of a sparse product is an empty stage for the device's merge tree
        // (its slot skipped, so its neighbours merge as the tree says, not all at the finish).
        if (d->bytes == 0 && e->local == DSMM_OK && e->dacc && !e->spmm)
            e->local = dsmmi_gpu_acc_skip(ctx, e->dacc, s);
        return DSMM_OK;
    }
    buf = dsmmi_pool_take(ctx, &e->pool, (size_t)d->bytes);
    DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "partial of %lld bytes", (long long)d->bytes);
    double t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_rma_get(ctx, e->pwin, buf, (size_t)d->bytes, (int)d->rank, (uint64_t)d->disp,
                           DSMMI_RMA_DATA, NULL));
    e->gets++;
    double t1 = dsmmi_wtime();
    e->get_wait += t1 - t0;
    if (e->spmm && e->ddacc) {
        const dsmm_dense *ct = e->Cd->tile; // the partial: the tile's shape, packed
        dsmm_dense Pv = {ct->nrows, ct->ncols, ct->ncols, buf, ct->type, 0, ctx};
        DSMM_TRY(dsmmi_gpu_dacc_add(ctx, e->ddacc, &Pv));
    } else if (e->spmm) {
        dense_add(e, buf);
    } else {
        dsmm_csr v;
        const dsmmi_rtile *ta = &e->ra.dir[i * e->S + s];
        dsmmi_piece_view(buf, ta->nrows, e->B->cb[j + 1] - e->B->cb[j], d->nnz, e->ctype, ctx, &v);
        if (e->dacc)
            DSMM_TRY(dsmmi_gpu_acc_add(ctx, e->dacc, s, &v));
        else
            DSMM_TRY(dsmm_csr_copy(ctx, &v, e->ctype, &e->parts[s]));
    }
    e->acc += dsmmi_wtime() - t1;
cleanup:
    dsmmi_pool_give(&e->pool, buf);
    return st;
}

// Pops and accumulates whatever is waiting in this rank's queue (never blocks).
static dsmm_status serve(dsmm_ctx *ctx, void *arg)
{
    eng *e = arg;
    dsmm_status st = DSMM_OK;
    int got = 1, any = 0;
    while (got) {
        dsmmi_qdesc d;
        DSMM_TRY(dsmmi_rqueue_pop(ctx, &e->q, &d, &got));
        if (got) {
            any = 1;
            st = take(e, &d);
            if (st != DSMM_OK) {
                // The contribution is counted; the failure is this rank's and is agreed later.
                if (e->local == DSMM_OK) e->local = st;
                st = DSMM_OK;
            }
        }
    }
    if (!any) {
        // Nothing came: let the MPI library serve the others' gets from this rank's windows
        // (dsmmi_comm_progress), and oversubscribed ranks let the producers run.
        DSMM_TRY(dsmmi_comm_progress(ctx));
        sched_yield();
    }
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Executing an item                                                                          */
/* ------------------------------------------------------------------------------------------ */

// Keeps a packed partial for its consumer and pushes its descriptor.
static dsmm_status deliver(eng *e, int64_t it, int owner, char *buf, int64_t nnz, int64_t bytes)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    dsmmi_qdesc d = {e->me, 0, nnz, bytes, it};
    if (buf) {
        if (e->nout == e->capout) {
            int nc = e->capout ? 2 * e->capout : 16;
            char **o = dsmmi_realloc(ctx, e->out, (size_t)nc, sizeof *o);
            if (o == NULL) {
                dsmmi_free(ctx, buf);
                DSMM_FAIL(ctx, DSMM_ERR_NOMEM, "list of %d partial results", nc);
            }
            e->out = o;
            e->capout = nc;
        }
        e->out[e->nout++] = buf;
        uint64_t disp = 0;
        DSMM_TRY(dsmmi_win_attach(ctx, e->pwin, buf, (size_t)bytes, &disp));
        d.disp = (int64_t)disp;
    }
    DSMM_TRY(dsmmi_rqueue_push(ctx, &e->q, owner, &d, serve, e));
cleanup:
    return st;
}

// After a local failure: the item's owner is told (a failure marker), so it does not wait for
// this contribution.
static dsmm_status execute_failed(eng *e, int64_t it)
{
    int i, s, j;
    item_split(e, it, &i, &s, &j);
    int owner = i * e->pc + j;
    if (owner == e->me) {
        e->received++;
        return DSMM_OK;
    }
    dsmmi_qdesc d = {e->me, 0, -1, 0, it};
    return dsmmi_rqueue_push(e->ctx, &e->q, owner, &d, serve, e);
}

// Multiplies item it's tiles (adata, bdata) and delivers the partial product.
static dsmm_status execute(eng *e, int64_t it, const char *adata, const char *bdata)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    int i, s, j;
    item_split(e, it, &i, &s, &j);
    int owner = i * e->pc + j;
    const dsmmi_rtile *ta = &e->ra.dir[i * e->S + s], *tb = &e->rb.dir[s * e->pc + j];
    dsmm_csr Av, *P = NULL;
    char *buf = NULL;
    if (ctx->test_delay > 0 && ctx->test_delay_rank == e->me) {
        struct timespec ts = {(time_t)ctx->test_delay,
                              (long)((ctx->test_delay - (double)(time_t)ctx->test_delay) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (ctx->rdma_trace && it < ctx->rdma_trace_n) ctx->rdma_trace[it]++;
    e->items++;
    if (e->local != DSMM_OK) return execute_failed(e, it);
    double t0 = dsmmi_wtime();
    dsmmi_piece_view(adata, ta->nrows, ta->ncols, ta->nnz, e->ra.type, ctx, &Av);
    int64_t nnz = 0, bytes = 0;
    if (e->spmm) {
        dsmm_dense Bv = {tb->nrows, tb->ncols, tb->ncols, (void *)bdata, e->rb.type, 0, ctx};
        dsmm_spmm_info info;
        memset(&info, 0, sizeof info);
        if (owner == e->me && e->ddacc) { // resident: added into the device's tile
            DSMM_TRY(dsmmi_gpu_dacc_multiply(ctx, e->ddacc, &Av, 0, &Bv, 0, &info));
        } else if (owner == e->me) {
            DSMM_TRY(dsmmi_local_spmm(ctx, &Av, &Bv, e->Cd->tile, &e->mlo, &info));
        } else {
            nnz = (int64_t)ta->nrows * tb->ncols;
            bytes = nnz * (int64_t)dsmmi_type_size(e->ctype);
            buf = dsmmi_calloc(ctx, (size_t)(bytes ? bytes : 1), 1);
            DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "partial of %lld bytes", (long long)bytes);
            dsmm_dense Pv = {ta->nrows, tb->ncols, tb->ncols, buf, e->ctype, 0, ctx};
            DSMM_TRY(dsmmi_local_spmm(ctx, &Av, &Bv, &Pv, &e->mlo, &info));
        }
        e->stage_flops[s] += info.flops;
    } else {
        dsmm_csr Bv;
        dsmmi_piece_view(bdata, tb->nrows, tb->ncols, tb->nnz, e->rb.type, ctx, &Bv);
        dsmm_spgemm_info info;
        memset(&info, 0, sizeof info);
        if (owner == e->me && e->dacc) { // resident: the partial stays in the tile's accumulator
            // (the merges it sets off are accumulation, not the multiply's time)
            double m0 = dsmmi_gpu_acc_merge_seconds(e->dacc);
            DSMM_TRY(dsmmi_gpu_acc_multiply(ctx, e->dacc, s, &Av, 0, &Bv, 0, &info));
            double dm = dsmmi_gpu_acc_merge_seconds(e->dacc) - m0;
            e->acc += dm;
            t0 += dm;
        } else
            DSMM_TRY(dsmmi_local_spgemm(ctx, &Av, &Bv, &e->klo, DSMMI_SPGEMM_FULL, &P, &info));
        e->stage_flops[s] += info.flops;
        if (owner == e->me) {
            e->parts[s] = P; // (NULL when resident)
            P = NULL;
        } else {
            nnz = P->nnz;
            bytes = (int64_t)dsmmi_piece_bytes(P->nrows, P->nnz, e->ctype);
            DSMM_TRY(dsmmi_piece_pack(ctx, P, e->ctype, &buf));
        }
    }
    e->comp += dsmmi_wtime() - t0;
    if (owner == e->me) {
        e->received++;
    } else {
        char *b = buf;
        buf = NULL; // deliver keeps it (or frees it on failure)
        DSMM_TRY(deliver(e, it, owner, b, nnz, bytes));
    }
cleanup:
    dsmm_csr_destroy(&P);
    dsmmi_free(ctx, buf);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The run                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct pending {
    int64_t it;
    int stolen, have;
    dsmmi_rfut fa, fb;
} pending;

static dsmm_status fetch(eng *e, pending *p)
{
    int i, s, j;
    item_split(e, p->it, &i, &s, &j);
    dsmm_status st = dsmmi_rmat_get_async(e->ctx, &e->ra, i * e->S + s, &e->pool, &p->fa);
    if (st == DSMM_OK && p->fa.buf) e->gets++;
    if (st == DSMM_OK) st = dsmmi_rmat_get_async(e->ctx, &e->rb, s * e->pc + j, &e->pool, &p->fb);
    if (st == DSMM_OK && p->fb.buf) e->gets++;
    return st;
}

// A local failure (memory for a tile buffer) is recorded and the item still runs, as a
// failure marker, so its owner's count completes; only a failed claim stops the loop.
static void note(eng *e, dsmm_status st)
{
    if (st != DSMM_OK && e->local == DSMM_OK) e->local = st;
}

static dsmm_status advance(eng *e, pending *p)
{
    dsmm_status st = next_item(e, &p->it, &p->stolen, &p->have);
    if (st == DSMM_OK && p->have && e->local == DSMM_OK) note(e, fetch(e, p));
    return st;
}

// The work loop: every item this rank gets, its tiles prefetched one item ahead.
static dsmm_status work(eng *e)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    pending cur, nxt;
    memset(&cur, 0, sizeof cur);
    memset(&nxt, 0, sizeof nxt);
    cur.fa.tile = cur.fb.tile = nxt.fa.tile = nxt.fb.tile = -1;
    DSMM_TRY(advance(e, &cur));
    while (cur.have) {
        const char *a = NULL, *b = NULL;
        double t0 = dsmmi_wtime();
        note(e, dsmmi_rfut_wait(ctx, &cur.fa, &a));
        note(e, dsmmi_rfut_wait(ctx, &cur.fb, &b));
        e->get_wait += dsmmi_wtime() - t0;
        if (e->prefetch) DSMM_TRY(advance(e, &nxt));
        // Keep claiming and delivering (failure markers after a failure) so nobody waits for
        // ever; a failed push, though, is a failed MPI and ends the loop.
        st = execute(e, cur.it, a, b);
        if (st != DSMM_OK && e->local == DSMM_OK) {
            note(e, st);
            st = execute_failed(e, cur.it);
        }
        DSMM_TRY(st);
        if (cur.stolen) e->stolen++;
        dsmmi_rfut_release(ctx, &cur.fa, &e->pool);
        dsmmi_rfut_release(ctx, &cur.fb, &e->pool);
        if (!e->prefetch) DSMM_TRY(advance(e, &nxt));
        cur = nxt;
        memset(&nxt, 0, sizeof nxt);
        nxt.fa.tile = nxt.fb.tile = -1;
        if (e->queues) DSMM_TRY(serve(ctx, e));
    }
cleanup:
    dsmmi_rfut_release(ctx, &cur.fa, &e->pool);
    dsmmi_rfut_release(ctx, &cur.fb, &e->pool);
    dsmmi_rfut_release(ctx, &nxt.fa, &e->pool);
    dsmmi_rfut_release(ctx, &nxt.fb, &e->pool);
    return st;
}

static void eng_free(eng *e)
{
    dsmm_ctx *ctx = e->ctx;
    for (int k = 0; k < e->nout; k++) {
        if (e->pwin) (void)dsmmi_win_detach(ctx, e->pwin, e->out[k]);
        dsmmi_free(ctx, e->out[k]);
    }
    dsmmi_free(ctx, e->out);
    (void)dsmmi_win_free(ctx, &e->pwin);
    (void)dsmmi_rqueue_free(ctx, &e->q);
    (void)dsmmi_win_free(ctx, &e->cwin);
    dsmmi_rmat_free(ctx, &e->ra);
    dsmmi_rmat_free(ctx, &e->rb);
    dsmmi_pool_free(ctx, &e->pool);
    dsmmi_gpu_acc_free(ctx, &e->dacc);
    dsmmi_gpu_dacc_free(ctx, &e->ddacc);
    for (int s = 0; e->parts && s < e->S; s++) dsmm_csr_destroy(&e->parts[s]);
    dsmmi_free(ctx, e->parts);
    dsmmi_free(ctx, e->stage_flops);
    dsmmi_free(ctx, e->cand);
    dsmmi_free(ctx, e->apieces);
    dsmmi_free(ctx, e->chost);
    dsmmi_free(ctx, e->cdisp);
    dsmmi_summa_plan_free(ctx, &e->plan);
}

// Reads DSMM_TEST_DELAY="RANK:SECONDS" (test hook for the CLI) unless a test set one.
static void env_delay(dsmm_ctx *ctx)
{
    const char *v = getenv("DSMM_TEST_DELAY");
    if (v == NULL || ctx->test_delay > 0) return;
    char *end = NULL;
    long r = strtol(v, &end, 10);
    if (end == v || *end != ':') return;
    double s = strtod(end + 1, NULL);
    if (s > 0 && s < 10) dsmmi_rdma_set_test_delay(ctx, (int)r, s);
}

/* Set-up shared by both products: plan, RDMA matrices (B's made by the caller), queues,
 * claims, the expected contributions to this rank's C tile. Collective. */
static dsmm_status setup(eng *e, const dsmm_dist_opts *o)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    const dsmmi_grid *g = e->g;
    e->pr = g->pr;
    e->pc = g->pc;
    e->me = dsmm_ctx_rank(ctx);
    e->myrow = g->myrow;
    e->mycol = g->mycol;
    e->prefetch = o->prefetch != 0;
    e->alg = o->alg;
    env_delay(ctx);
    local = dsmmi_summa_plan_make(ctx, e->A->ncols, g->pr, g->pc, &e->plan);
    e->S = e->plan.n;
    if (local == DSMM_OK) {
        size_t n = e->S ? (size_t)e->S : 1;
        e->stage_flops = dsmmi_calloc(ctx, n, sizeof *e->stage_flops);
        e->parts = dsmmi_calloc(ctx, n, sizeof *e->parts);
        if (!e->stage_flops || !e->parts)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%d stages", e->S);
    }
    // Resident: the C tile's accumulator, one slot a stage, or SpMM's dense tile (a rank
    // without a device fails here, and every rank with it after the agreement).
    if (local == DSMM_OK && o->gpu_resident && !e->spmm) {
        const dsmm_dist *A = e->A, *B = e->B;
        local = dsmmi_gpu_acc_create(ctx, A->rb[g->myrow + 1] - A->rb[g->myrow],
                                     B->cb[g->mycol + 1] - B->cb[g->mycol], o->spgemm.semiring,
                                     e->S, &e->dacc);
    }
    if (local == DSMM_OK && o->gpu_resident && e->spmm) {
        const dsmm_dense *ct = e->Cd->tile;
        local = dsmmi_gpu_dacc_create(ctx, ct->nrows, ct->ncols, ct->type, &e->ddacc);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_rmat_a(ctx, e->A, &e->plan, &e->ra));
    if (e->spmm)
        DSMM_TRY(dsmmi_rmat_dense_b(ctx, e->Bd, &e->plan, &e->rb));
    else
        DSMM_TRY(dsmmi_rmat_b(ctx, e->B, &e->plan, &e->rb));
    local = plan_work(e);
    // The stages with no item of this tile are empty slots from the start.
    for (int s = 0; local == DSMM_OK && e->dacc && s < e->S; s++)
        if (!live(e, e->myrow, s, e->mycol)) local = dsmmi_gpu_acc_skip(ctx, e->dacc, s);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    if (is_ws(e->alg)) {
        void *base = NULL;
        DSMM_TRY(dsmmi_win_allocate(ctx, 8 * (size_t)e->nclaims, &base, &e->cwin));
    }
    for (int s = 0; s < e->S; s++) e->expected += live(e, e->myrow, s, e->mycol);
    e->queues = e->alg != DSMM_DIST_RDMA_C && e->pr * e->pc > 1;
    // Queues and the partials' window only where partial results may travel: stationary C
    // without stealing accumulates at home (and one rank keeps every partial; Open MPI's
    // single-process windows are not dynamic either).
    if (e->queues) {
        int cap = o->queue_capacity > 0 ? o->queue_capacity : DEFAULT_QUEUE_CAP;
        DSMM_TRY(dsmmi_rqueue_create(ctx, cap, &e->q));
        DSMM_TRY(dsmmi_win_dynamic(ctx, &e->pwin));
    }
cleanup:
    return st;
}

static dsmm_status fill_stats(eng *e, const dsmm_dist_opts *o, const char *op, double t0,
                              const dsmm_traffic *before, dsmm_idx nnz_a, dsmm_idx nnz_b,
                              dsmm_idx nnz_c, dsmm_idx nnz_in, dsmm_idx nnz_out, double wait)
{
    dsmm_ctx *ctx = e->ctx;
    dsmmi_rank_stats rs;
    memset(&rs, 0, sizeof rs);
    rs.comp = e->comp;
    rs.acc = e->acc;
    rs.wait = wait;
    rs.total = dsmmi_wtime() - t0;
    rs.comm = rs.total - rs.comp - rs.acc - rs.wait;
    if (rs.comm < 0) rs.comm = 0;
    for (int s = 0; s < e->S; s++) rs.flops += e->stage_flops[s];
    rs.nnz_a = nnz_a;
    rs.nnz_b = nnz_b;
    rs.nnz_c = nnz_c;
    rs.peak_bytes = (int64_t)dsmm_ctx_mem_peak(ctx);
    dsmmi_traffic_diff(&ctx->traffic, before, &rs.traffic);
    rs.items = e->items;
    rs.stolen = e->stolen;
    rs.pushes = e->q.pushes;
    rs.pops = e->q.pops;
    rs.gets = e->gets;
    rs.get_wait = e->get_wait;
    rs.done = e->done;
    rs.setup = e->setup;
    rs.rdma = 1;
    if (e->dacc) { // merge_seconds: the device merges' time (maximum over ranks)
        rs.merge = 1;
        rs.merge_seconds = e->gpu_merge_seconds;
    }
    dsmm_status st =
        dsmmi_stats_fill(ctx, o->stats, op, dsmm_dist_alg_name(e->alg), e->g, e->prefetch, &rs,
                         e->S, e->plan.lo, e->plan.hi, e->stage_flops, nnz_in, nnz_out);
    if (st == DSMM_OK) {
        int cap = o->queue_capacity > 0 ? o->queue_capacity : DEFAULT_QUEUE_CAP;
        st = dsmm_stats_set_int(o->stats, "queue_capacity", cap);
    }
    // As SUMMA's: SpGEMM's partials merged at the end on the host, or on the device; C's tile
    // on the device or not. Partials travel through windows of host memory, never device
    // buffers.
    int resident = e->dacc != NULL || e->ddacc != NULL;
    if (st == DSMM_OK && !e->spmm)
        st = dsmm_stats_set_str(o->stats, "accumulate", e->dacc ? "device" : "merge");
    if (st == DSMM_OK) st = dsmm_stats_set_int(o->stats, "gpu_resident", resident);
    if (st == DSMM_OK && e->dacc) st = dsmm_stats_set_int(o->stats, "gpu_merges", e->gpu_merges);
    if (st == DSMM_OK && resident) st = dsmm_stats_set_int(o->stats, "mpi_device_buffers", 0);
    return st;
}

// Waits for this rank's contributions after its work, then meets the others.
static dsmm_status finish(eng *e, double *wait)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    while (e->received < e->expected) DSMM_TRY(serve(ctx, e));
    // After this barrier every partial has been fetched: the windows may go.
    DSMM_TRY(dsmmi_barrier(ctx, wait));
cleanup:
    return st;
}

static dsmm_status start(eng *e)
{
    dsmm_ctx *ctx = e->ctx;
    dsmm_status st = DSMM_OK;
    // Everyone starts together, so the finish times compare.
    DSMM_TRY(dsmmi_barrier(ctx, NULL));
    double start_time = dsmmi_wtime();
    e->setup = start_time - e->t0;
    st = work(e);
    if (st != DSMM_OK) {
        if (e->local == DSMM_OK) e->local = st;
        st = DSMM_OK;
    }
    e->done = dsmmi_wtime() - start_time;
cleanup:
    return st;
}

dsmm_status dsmmi_rdma_spgemm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                              const dsmm_dist_opts *o, dsmm_dist **C)
{
    dsmm_status st = DSMM_OK;
    eng e;
    memset(&e, 0, sizeof e);
    dsmm_dist *Cd = NULL;
    dsmm_csr *tile = NULL;
    double t0 = dsmmi_wtime(), wait = 0;
    dsmm_traffic before = ctx->traffic;
    e.t0 = t0;
    e.ctx = ctx;
    e.A = A;
    e.B = B;
    e.g = A->grid;
    e.ctype = o->spgemm.type != -1                               ? (dsmm_type)o->spgemm.type
              : (A->type == DSMM_FLOAT && B->type == DSMM_FLOAT) ? DSMM_FLOAT
                                                                 : DSMM_DOUBLE;
    const dsmmi_grid *g = A->grid;
    dsmm_idx nr = A->rb[g->myrow + 1] - A->rb[g->myrow], nc = B->cb[g->mycol + 1] - B->cb[g->mycol];
    int bits = nc <= INT32_MAX ? 32 : 64;
    e.klo = o->spgemm;
    e.klo.type = (int)e.ctype;
    e.klo.unsorted = 0;
    e.klo.col_bits = 32; // partials travel with 32-bit columns (piece layout)
    DSMM_TRY(setup(&e, o));
    DSMM_TRY(start(&e));
    DSMM_TRY(finish(&e, &wait));
    // Merge in stage order: the same result whatever order the partials arrived in.
    dsmm_status local = e.local;
    if (local == DSMM_OK) {
        double ta = dsmmi_wtime();
        if (e.dacc)
            local = dsmmi_gpu_acc_finish(ctx, e.dacc, e.ctype, bits, &tile, &e.gpu_merges,
                                         &e.gpu_merge_seconds);
        else
            local = dsmmi_csr_merge(ctx, (const dsmm_csr *const *)e.parts, e.S, nr, nc,
                                    o->spgemm.semiring, e.ctype, bits, &tile);
        e.acc += dsmmi_wtime() - ta;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_dist_new(ctx, A->nrows, B->ncols, e.ctype, g->pr, g->pc, &Cd));
    DSMM_TRY(dsmmi_dist_set_tile(ctx, Cd, tile));
    tile = NULL;
    if (o->stats)
        DSMM_TRY(fill_stats(&e, o, "spgemm", t0, &before, A->tile->nnz, B->tile->nnz, Cd->tile->nnz,
                            A->nnz + B->nnz, Cd->nnz, wait));
    *C = Cd;
    Cd = NULL;
cleanup:
    dsmm_csr_destroy(&tile);
    dsmm_dist_destroy(&Cd);
    eng_free(&e);
    return st;
}

dsmm_status dsmmi_rdma_spmm(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist_dense *B,
                            const dsmm_dist_opts *o, dsmm_dist_dense **C)
{
    dsmm_status st = DSMM_OK;
    eng e;
    memset(&e, 0, sizeof e);
    double t0 = dsmmi_wtime(), wait = 0;
    dsmm_traffic before = ctx->traffic;
    e.t0 = t0;
    e.ctx = ctx;
    e.A = A;
    e.Bd = B;
    e.spmm = 1;
    e.g = A->grid;
    e.ctype = B->type;
    e.mlo = o->spmm;
    e.mlo.beta = 1.0;   // partials and the C tile start at zero and accumulate
    e.mlo.tiles = NULL; // tiles describe one local A; the blocks here are others
    DSMM_TRY(dsmmi_dense_new(ctx, A->nrows, B->ncols, B->type, e.g->pr, e.g->pc, &e.Cd));
    DSMM_TRY(setup(&e, o));
    DSMM_TRY(start(&e));
    DSMM_TRY(finish(&e, &wait));
    if (e.local == DSMM_OK && e.ddacc) { // resident: the tile comes down once
        double ta = dsmmi_wtime();
        e.local = dsmmi_gpu_dacc_finish(ctx, e.ddacc, e.Cd->tile, NULL);
        e.acc += dsmmi_wtime() - ta;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, e.local));
    if (o->stats) {
        const dsmm_dense *bt = B->tile, *ct = e.Cd->tile;
        DSMM_TRY(fill_stats(&e, o, "spmm", t0, &before, A->tile->nnz, bt->nrows * bt->ncols,
                            ct->nrows * ct->ncols, A->nnz, (dsmm_idx)A->nrows * B->ncols, wait));
    }
    *C = e.Cd;
    e.Cd = NULL;
cleanup:
    dsmm_dist_dense_destroy(&e.Cd);
    eng_free(&e);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* AUTO: the model's choice between SUMMA and stationary C                                    */
/* ------------------------------------------------------------------------------------------ */

/* Both move the same tiles (stationary C fetches exactly what SUMMA broadcasts to a rank), so
 * the model's difference is the load imbalance (RDMA paper Fig. 1): SUMMA pays the sum over
 * stages of the slowest rank's flops, stationary C the slowest rank's total. Item flops come
 * from the tile sizes every rank learns with one small allreduce: exact for SpMM (2 nnz(A) k),
 * the expectation under independent columns for SpGEMM (nnz(A(i,s)) nnz(B(s,j)) / (hi - lo)).
 * AUTO takes stationary C when the stages would cost more than 10% over it; else SUMMA, whose
 * collectives have no window set-up and are tuned by the MPI library. One rank: SUMMA. */
dsmm_status dsmmi_dist_auto(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                            const dsmm_dist_dense *Bd, dsmm_dist_alg *alg)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    const dsmmi_grid *g = A->grid;
    int pr = g->pr, pc = g->pc;
    dsmmi_summa_plan p;
    memset(&p, 0, sizeof p);
    int64_t *v = NULL;
    *alg = DSMM_DIST_SUMMA;
    if (pr * pc == 1) return DSMM_OK;
    local = dsmmi_summa_plan_make(ctx, A->ncols, pr, pc, &p);
    int S = p.n;
    size_t na = (size_t)pr * (size_t)S, n = na + (size_t)S * (size_t)pc;
    if (local == DSMM_OK) {
        v = dsmmi_calloc(ctx, n ? n : 1, sizeof *v);
        if (v == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "auto");
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    // This rank's tiles: A(myrow, s) for its column block, B(s, mycol) for its row block.
    const dsmm_csr *T = A->tile;
    dsmm_idx c0 = A->cb[g->mycol];
    for (int s = 0; s < S; s++) {
        if (p.kc[s] != g->mycol) continue;
        int64_t z = 0;
        for (dsmm_idx e = 0; e < T->nnz; e++) {
            dsmm_idx c = dsmm_csr_col(T, e) + c0;
            z += c >= p.lo[s] && c < p.hi[s];
        }
        v[(size_t)g->myrow * S + s] = z;
    }
    for (int s = 0; s < S; s++) {
        if (p.kr[s] != g->myrow) continue;
        int64_t z;
        if (B) {
            dsmm_idx r0 = p.lo[s] - B->rb[g->myrow], r1 = p.hi[s] - B->rb[g->myrow];
            z = B->tile->rowptr[r1] - B->tile->rowptr[r0];
        } else {
            z = (int64_t)(p.hi[s] - p.lo[s]) * (Bd->cb[g->mycol + 1] - Bd->cb[g->mycol]);
        }
        v[na + (size_t)s * pc + g->mycol] = z;
    }
    DSMM_TRY(dsmmi_allreduce_i64(ctx, v, (int)n, '+'));
    double stages = 0, worst = 0;
    for (int s = 0; s < S; s++) {
        double mx = 0;
        for (int i = 0; i < pr; i++)
            for (int j = 0; j < pc; j++) {
                double za = (double)v[(size_t)i * S + s], zb = (double)v[na + (size_t)s * pc + j];
                double f = B ? za * zb / (double)(p.hi[s] - p.lo[s])
                             : 2 * za * (double)(Bd->cb[j + 1] - Bd->cb[j]) * (zb > 0);
                if (f > mx) mx = f;
            }
        stages += mx;
    }
    for (int i = 0; i < pr; i++)
        for (int j = 0; j < pc; j++) {
            double tot = 0;
            for (int s = 0; s < S; s++) {
                double za = (double)v[(size_t)i * S + s], zb = (double)v[na + (size_t)s * pc + j];
                tot += B ? za * zb / (double)(p.hi[s] - p.lo[s])
                         : 2 * za * (double)(Bd->cb[j + 1] - Bd->cb[j]) * (zb > 0);
            }
            if (tot > worst) worst = tot;
        }
    if (stages > 1.1 * worst) *alg = DSMM_DIST_RDMA_C;
cleanup:
    dsmmi_free(ctx, v);
    dsmmi_summa_plan_free(ctx, &p);
    return st;
}
