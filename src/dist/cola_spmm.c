// src/dist/cola_spmm.c: the multiplies of the 1D CoLa family on a plan (cola.c):
//  - cola: W stages, one per workgroup, in the order of Algorithm 3 (stage j takes the panels
//    of group (mine + j) mod W); the holder of U[s] receives it once per multiply (request-
//    coalesced: one message per source, packed by the owner, Algorithm 2) into one of two
//    stage buffers in the workgroup's shared window, and every member multiplies its
//    compressed piece of s straight from the holder's buffer (column-wise RSC, Algorithm 1);
//    with pipeline, stage j+1's messages are posted before stage j's multiply;
//  - cola-nofusion: each rank receives its needed rows from every owner in one transfer
//    (MPI_Alltoallv, MPI_Neighbor_alltoallv or MPI_Put), then multiplies LSC and RSC;
//  - bcast-1d: P stages, panel s broadcast to all, everyone multiplies its piece of s;
//  - rowwise-1d: the RSC row by row with one MPI_Get of a remote row per nonzero.
// The local multiplies are the library's SpMM kernels (row-wise LSC, column-wise RSC). With
// dsmm_cola_opts.gpu_resident the rank's C panel lives on the device (gpu/spmm.cu's
// dsmmi_gpu_dacc): every local product is added into it there and the panel is downloaded
// once, instead of going up and down the bus with each product (rowwise-1d's remote rows,
// accumulated on the host, are added to it once at the end).
#include <string.h>

#include "dist/cola.h"
#include "gpu/gpu.h"

#define TAG_STAGE 0x4c00
#define GET_SLOTS 1024

typedef struct run {
    dsmm_ctx *ctx;
    dsmm_cola *p;
    const dsmmi_cola_mats *m;
    dsmm_type type;
    dsmm_idx k;
    size_t elem, row; // bytes of a value, of a row of B
    dsmm_dense *C;
    dsmmi_gpu_dacc *dacc; // gpu_resident: C's panel on the device
    double comp, comm;
    int64_t shared_read, products, products_gpu;
} run;

// AUTO: the row-wise kernel for the LSC and the column-wise one for the RSC, or, with a
// device on the context (dsmm_ctx_set_gpu), AUTO itself: the front end sends each product
// above the device's threshold there and keeps the rest on the row-wise kernel.
static dsmm_spmm_alg kernel_of(const run *r, dsmm_spmm_alg asked, dsmm_spmm_alg cpu)
{
    if (asked != DSMM_SPMM_AUTO) return asked;
    return r->ctx->gpu_auto ? DSMM_SPMM_AUTO : cpu;
}

static dsmm_spmm_alg lsc_alg(const run *r)
{
    return kernel_of(r, r->p->opts.lsc_alg, DSMM_SPMM_ROW);
}

static dsmm_spmm_alg rsc_alg(const run *r)
{
    return kernel_of(r, r->p->opts.rsc_alg, DSMM_SPMM_COL);
}

// X prepared in tiles for the column-wise kernel, from the plan's slot (made on first use and
// kept there; docs/cola.md, "Tiles"); NULL when there is no room in the memory budget for them
// (the kernel then reads X).
static dsmm_status tiles_of(run *r, const dsmm_csr *X, int slot, const dsmm_spmm_tiles **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    int t = r->type == DSMM_FLOAT;
    *out = NULL;
    if (p->tiles[t] == NULL) {
        p->tiles[t] = dsmmi_calloc(ctx, (size_t)DSMMI_COLA_TILE_SLOTS(p->P), sizeof *p->tiles[t]);
        DSMM_CHECK(ctx, p->tiles[t] != NULL, DSMM_ERR_NOMEM, "cola: no memory for tile slots");
    }
    dsmm_spmm_tiles **tl = &p->tiles[t][slot];
    if (*tl == NULL) {
        // about a copy of X^T (index, row in tile, value an entry), plus the transpose made
        // on the way
        double need = (double)X->nnz * (2.0 * (double)r->elem + 26.0) +
                      16.0 * ((double)X->nrows + (double)X->ncols + 2.0);
        if (!dsmmi_budget_room(ctx, (size_t)need)) return DSMM_OK;
        DSMM_TRY(dsmm_spmm_tiles_create(ctx, X, 0, r->k, r->type, tl));
        p->tiles_bytes += dsmm_spmm_tiles_bytes(*tl);
    }
    *out = *tl;
cleanup:
    return st;
}

// C += X * B, B the X->ncols x k rows at b with leading dimension ld; slot: X's tile slot in the
// plan (-1: none, the local part).
static dsmm_status mul_ld(run *r, const dsmm_csr *X, int slot, const void *b, dsmm_idx ld,
                          dsmm_spmm_alg alg)
{
    dsmm_status st = DSMM_OK;
    if (X == NULL || X->nnz == 0) return DSMM_OK;
    double t0 = dsmmi_wtime();
    dsmm_dense Bd = {X->ncols, r->k, ld, (void *)b, r->type, 0, r->ctx};
    dsmm_spmm_opts so;
    dsmm_spmm_opts_init(&so);
    so.alg = alg;
    so.beta = 1.0;
    if (alg == DSMM_SPMM_COL && slot >= 0 && !r->dacc) DSMM_TRY(tiles_of(r, X, slot, &so.tiles));
    dsmm_spmm_info info;
    if (r->dacc)
        DSMM_TRY(dsmmi_gpu_dacc_multiply(r->ctx, r->dacc, X, 0, &Bd, 0, &info));
    else
        DSMM_TRY(dsmm_csr_spmm(r->ctx, X, &Bd, r->C, &so, &info));
    r->products++;
    r->products_gpu += info.on_gpu;
cleanup:
    r->comp += dsmmi_wtime() - t0;
    return st;
}

// C += X * B, B packed (ld k).
static dsmm_status mul(run *r, const dsmm_csr *X, int slot, const void *b, dsmm_spmm_alg alg)
{
    return mul_ld(r, X, slot, b, r->k, alg);
}

// Rows idx[0..n) of B (ld ldb) packed into dst.
static void pack(const run *r, const dsmm_dense *B, const dsmm_idx *idx, dsmm_idx n, char *dst)
{
    const char *b = B->val;
    size_t ldb = (size_t)B->ld * r->elem;
    for (dsmm_idx i = 0; i < n; i++)
        memcpy(dst + (size_t)i * r->row, b + (size_t)idx[i] * ldb, r->row);
}

// B's rows into dst with ld k.
static void copy_rows(const run *r, const dsmm_dense *B, char *dst)
{
    if (r->row == 0) return;
    if (B->ld == r->k) {
        memcpy(dst, B->val, (size_t)B->nrows * r->row);
        return;
    }
    for (dsmm_idx i = 0; i < B->nrows; i++)
        memcpy(dst + (size_t)i * r->row, (const char *)B->val + (size_t)(i * B->ld) * r->elem,
               r->row);
}

static dsmm_status grow(dsmm_ctx *ctx, void **buf, size_t *have, size_t need)
{
    if (need <= *have && *buf) return DSMM_OK;
    void *nb = dsmmi_malloc(ctx, need ? need : 1, 1);
    if (nb == NULL)
        return dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "buffer of %zu bytes", need);
    dsmmi_free(ctx, *buf);
    *buf = nb;
    *have = need;
    return DSMM_OK;
}

/* ------------------------------------------------------------------------------------------ */

static dsmm_status run_bcast(run *r, const dsmm_dense *B)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    const dsmmi_grid *g = NULL;
    dsmm_idx hmax = 0;
    for (int s = 0; s < p->P; s++)
        if (p->rb[s + 1] - p->rb[s] > hmax) hmax = p->rb[s + 1] - p->rb[s];
    local = grow(ctx, &p->rbuf, &p->rbuf_bytes, (size_t)hmax * r->row);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_grid_get(ctx, p->P, 1, &g));
    for (int s = 0; s < p->P; s++) {
        size_t bytes = (size_t)(p->rb[s + 1] - p->rb[s]) * r->row;
        if (s == p->me) copy_rows(r, B, p->rbuf);
        double t0 = dsmmi_wtime();
        DSMM_TRY(dsmmi_bcast(ctx, g, DSMMI_ALONG_COL, s, p->rbuf, bytes));
        r->comm += dsmmi_wtime() - t0;
        DSMM_TRY(mul(r, r->m->piece[s], s == p->me ? -1 : s, p->rbuf,
                     s == p->me ? lsc_alg(r) : rsc_alg(r)));
    }
cleanup:
    return st;
}

static dsmm_status run_nofusion(run *r, const dsmm_dense *B)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    int P = p->P;
    size_t *cnt = dsmmi_malloc(ctx, 4 * (size_t)P + 1, sizeof *cnt);
    int *nodes = dsmmi_malloc(ctx, 2 * (size_t)P + 1, sizeof *nodes);
    size_t rbytes = (size_t)p->need_ptr[P] * r->row, sbytes = (size_t)p->serve_ptr[P] * r->row;
    if (cnt == NULL || nodes == NULL) local = DSMM_ERR_NOMEM;
    if (local == DSMM_OK) local = grow(ctx, &p->sbuf, &p->sbuf_bytes, sbytes);
    if (local == DSMM_OK && p->opts.comm != DSMM_COLA_PUT)
        local = grow(ctx, &p->rbuf, &p->rbuf_bytes, rbytes);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    size_t *sc = cnt, *sd = cnt + P, *rc = cnt + 2 * P, *rd = cnt + 3 * P;
    for (int t = 0; t < P; t++) {
        sc[t] = (size_t)(p->serve_ptr[t + 1] - p->serve_ptr[t]) * r->row;
        sd[t] = (size_t)p->serve_ptr[t] * r->row;
        rc[t] = (size_t)(p->need_ptr[t + 1] - p->need_ptr[t]) * r->row;
        rd[t] = (size_t)p->need_ptr[t] * r->row;
    }
    pack(r, B, p->serve_idx, p->serve_ptr[P], p->sbuf);
    double t0 = dsmmi_wtime();
    const void *recv = p->rbuf;
    if (p->opts.comm == DSMM_COLA_ALLTOALLV) {
        DSMM_TRY(dsmmi_alltoallv(ctx, p->sbuf, sc, sd, p->rbuf, rc, rd));
    } else if (p->opts.comm == DSMM_COLA_NEIGHBOR) {
        // Partners only: sources I receive from, destinations I send to (built once).
        int ns = 0, nd = 0;
        for (int t = 0; t < P; t++) {
            if (rc[t]) nodes[ns++] = t;
        }
        for (int t = 0; t < P; t++)
            if (sc[t]) nodes[ns + nd++] = t;
        if (p->nbr == NULL) DSMM_TRY(dsmmi_nbr_create(ctx, ns, nodes, nd, nodes + ns, &p->nbr));
        // Compact the counts to the partner order (in place: partners are ascending).
        for (int i = 0; i < ns; i++) {
            rc[i] = rc[nodes[i]];
            rd[i] = rd[nodes[i]];
        }
        for (int i = 0; i < nd; i++) {
            sc[i] = sc[nodes[ns + i]];
            sd[i] = sd[nodes[ns + i]];
        }
        DSMM_TRY(dsmmi_nbr_alltoallv(ctx, p->nbr, p->sbuf, sc, sd, p->rbuf, rc, rd));
    } else { // one-sided puts into the targets' receive windows
        int64_t need = (int64_t)rbytes, grow_any = need > (int64_t)p->win_bytes || p->win == NULL;
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &grow_any, 1, '>'));
        if (grow_any) {
            if (p->win) DSMM_TRY(dsmmi_win_free(ctx, &p->win));
            DSMM_TRY(dsmmi_win_allocate(ctx, rbytes ? rbytes : 8, &p->win_base, &p->win));
            p->win_bytes = rbytes;
        }
        DSMM_TRY(dsmmi_barrier(ctx, NULL)); // targets have finished reading the last multiply
        for (int t = 0; t < P; t++)
            if (sc[t])
                DSMM_TRY(dsmmi_rma_put(ctx, p->win, (char *)p->sbuf + sd[t], sc[t], t,
                                       (uint64_t)p->put_disp[t] * r->row, DSMMI_RMA_DATA));
        DSMM_TRY(dsmmi_rma_flush(ctx, p->win, -1));
        DSMM_TRY(dsmmi_barrier(ctx, NULL));
        recv = p->win_base;
    }
    r->comm += dsmmi_wtime() - t0;
    DSMM_TRY(mul_ld(r, r->m->piece[p->me], -1, B->val, B->ld, lsc_alg(r)));
    DSMM_TRY(mul(r, r->m->rsc, 2 * p->P, recv, rsc_alg(r)));
cleanup:
    dsmmi_free(ctx, cnt);
    dsmmi_free(ctx, nodes);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* cola: workgroups, fusion, pipeline                                                         */
/* ------------------------------------------------------------------------------------------ */

static int member_index(const dsmm_cola *p, int r)
{
    for (int q = 0; q < p->nmem; q++)
        if (p->members[q] == r) return q;
    return -1;
}

// Element offset of member t's stage buffer of parity par in its segment.
static size_t buf_at(const dsmm_cola *p, int t, int par, dsmm_idx k)
{
    dsmm_idx h = p->rb[t + 1] - p->rb[t], rmax = p->mem_rmax[member_index(p, t)];
    return (size_t)(h + par * rmax) * (size_t)k;
}

// Posts stage j's messages: receives of U[s] for the s this rank holds in group (mine + j),
// and the packed rows this rank's panel owes the holder in group (mine - j).
static dsmm_status post_stage(run *r, int j, char *sbuf_par, dsmmi_req *req)
{
    dsmm_status st = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    int W = p->W, par = j % 2;
    int g = (p->mywg + j) % W, tg = (p->mywg - j + W) % W;
    char *mine = dsmmi_shm_base(p->shm, p->me, NULL);
    char *buf = mine + buf_at(p, p->me, par, r->k) * r->elem;
    double t0 = dsmmi_wtime();
    for (int s = 0; s < p->P; s++)
        if (p->wg_of[s] == g && p->holder[s] == p->me && p->ulen[s] > 0)
            DSMM_TRY(dsmmi_irecv(ctx, buf + (size_t)p->hoff[s] * r->row,
                                 (size_t)p->ulen[s] * r->row, s, TAG_STAGE + j, req));
    int t = dsmmi_cola_holder(p, tg, p->me);
    dsmm_idx lo = p->fsend_ptr[t], cnt = p->fsend_ptr[t + 1] - lo;
    if (cnt > 0) {
        dsmm_dense Bc = {p->nrows, r->k, r->k, mine, r->type, 0, ctx};
        pack(r, &Bc, p->fsend_idx + lo, cnt, sbuf_par);
        DSMM_TRY(dsmmi_isend(ctx, sbuf_par, (size_t)cnt * r->row, t, TAG_STAGE + j, req));
    }
cleanup:
    r->comm += dsmmi_wtime() - t0;
    return st;
}

// Drives the next stage's messages while this one multiplies (MPI progresses a transfer
// only inside MPI calls): a test between pieces.
static dsmm_status progress(run *r, dsmmi_req *req)
{
    int done = 0;
    return req && req->n > 0 ? dsmmi_req_test(r->ctx, req, &done) : DSMM_OK;
}

static dsmm_status compute_stage(run *r, int j, dsmmi_req *req)
{
    dsmm_status st = DSMM_OK;
    dsmm_cola *p = r->p;
    int g = (p->mywg + j) % p->W;
    for (int s = 0; s < p->P; s++) {
        if (p->wg_of[s] != g) continue;
        dsmm_idx nneed = p->need_ptr[s + 1] - p->need_ptr[s];
        if (j == 0) { // my group: panels straight from the members' copies of B
            const char *b = dsmmi_shm_base(p->shm, s, NULL);
            if (s != p->me) r->shared_read += (int64_t)nneed * (int64_t)r->row;
            DSMM_TRY(mul(r, r->m->piece[s], s == p->me ? -1 : s, b,
                         s == p->me ? lsc_alg(r) : rsc_alg(r)));
            DSMM_TRY(progress(r, req));
        } else if (r->m->fpiece[s]) {
            int t = p->holder[s];
            const char *b =
                (const char *)dsmmi_shm_base(p->shm, t, NULL) +
                (buf_at(p, t, j % 2, r->k) + (size_t)p->hoff[s] * (size_t)r->k) * r->elem;
            if (t != p->me) r->shared_read += (int64_t)nneed * (int64_t)r->row;
            DSMM_TRY(mul(r, r->m->fpiece[s], p->P + s, b, rsc_alg(r)));
            DSMM_TRY(progress(r, req));
        }
    }
cleanup:
    return st;
}

static dsmm_status run_fused(run *r, const dsmm_dense *B)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    dsmmi_req req = {0};
    int W = p->W;
    // Segment: B's copy, then two stage buffers.
    size_t seg = (size_t)(p->nrows + 2 * p->rmax) * r->row;
    int64_t regrow = seg > p->shm_bytes;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &regrow, 1, '>'));
    if (regrow) {
        dsmmi_shm_free(ctx, &p->shm);
        p->shm_bytes = 0;
        DSMM_TRY(dsmmi_shm_create(ctx, seg, &p->shm));
        p->shm_bytes = seg;
    }
    dsmm_idx smax = 0;
    for (int t = 0; t < p->P; t++)
        if (p->fsend_ptr[t + 1] - p->fsend_ptr[t] > smax)
            smax = p->fsend_ptr[t + 1] - p->fsend_ptr[t];
    local = grow(ctx, &p->sbuf, &p->sbuf_bytes, 2 * (size_t)smax * r->row);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    char *sb[2] = {p->sbuf, (char *)p->sbuf + (size_t)smax * r->row};
    double t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_shm_sync(ctx, p->shm)); // the group is done with the last multiply
    r->comm += dsmmi_wtime() - t0;
    copy_rows(r, B, dsmmi_shm_base(p->shm, p->me, NULL));
    if (W > 1 && p->opts.pipeline) DSMM_TRY(post_stage(r, 1, sb[1], &req));
    t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_shm_sync(ctx, p->shm)); // the copies of B are visible
    r->comm += dsmmi_wtime() - t0;
    DSMM_TRY(compute_stage(r, 0, &req));
    for (int j = 1; j < W; j++) {
        if (!p->opts.pipeline) DSMM_TRY(post_stage(r, j, sb[j % 2], &req));
        t0 = dsmmi_wtime();
        DSMM_TRY(dsmmi_req_wait(ctx, &req));
        DSMM_TRY(dsmmi_shm_sync(ctx, p->shm)); // stage j's rows are in; stage j-1 is done
        r->comm += dsmmi_wtime() - t0;
        if (p->opts.pipeline && j + 1 < W) DSMM_TRY(post_stage(r, j + 1, sb[(j + 1) % 2], &req));
        DSMM_TRY(compute_stage(r, j, &req));
    }
    t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_req_wait(ctx, &req));
    r->comm += dsmmi_wtime() - t0;
cleanup:
    if (req.n) (void)dsmmi_req_wait(ctx, &req);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* rowwise-1d: a get per remote nonzero                                                        */
/* ------------------------------------------------------------------------------------------ */

static void axpy_row(const run *r, dsmm_idx i, double v, const char *src)
{
    if (r->type == DSMM_DOUBLE) {
        double *c = (double *)r->C->val + i * r->C->ld;
        const double *b = (const double *)src;
        for (dsmm_idx x = 0; x < r->k; x++) c[x] += v * b[x];
    } else {
        float *c = (float *)r->C->val + i * r->C->ld;
        const float *b = (const float *)src;
        float fv = (float)v;
        for (dsmm_idx x = 0; x < r->k; x++) c[x] += fv * b[x];
    }
}

static dsmm_status run_rowwise(run *r, const dsmm_dense *B)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_cola *p = r->p;
    dsmm_ctx *ctx = r->ctx;
    dsmmi_req *reqs = dsmmi_calloc(ctx, GET_SLOTS, sizeof *reqs);
    int nreq = 0;
    size_t bytes = (size_t)p->nrows * r->row;
    local = reqs ? grow(ctx, &p->rbuf, &p->rbuf_bytes, GET_SLOTS * r->row) : DSMM_ERR_NOMEM;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    int64_t regrow = bytes > p->win_bytes || p->win == NULL;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &regrow, 1, '>'));
    double t0 = dsmmi_wtime();
    if (regrow) {
        if (p->win) DSMM_TRY(dsmmi_win_free(ctx, &p->win));
        DSMM_TRY(dsmmi_win_allocate(ctx, bytes ? bytes : 8, &p->win_base, &p->win));
        p->win_bytes = bytes;
    }
    DSMM_TRY(dsmmi_barrier(ctx, NULL)); // nobody still reads the last multiply's rows
    copy_rows(r, B, p->win_base);
    DSMM_TRY(dsmmi_barrier(ctx, NULL));
    r->comm += dsmmi_wtime() - t0;
    DSMM_TRY(mul(r, r->m->piece[p->me], -1, p->win_base, lsc_alg(r)));
    // Rows in batches of at most GET_SLOTS remote nonzeros: issue the gets, wait, accumulate.
    const dsmmi_cola_mats *m = r->m;
    dsmm_idx i0 = 0;
    while (i0 < p->nrows) {
        dsmm_idx i1 = i0;
        int used = 0;
        double tg = dsmmi_wtime();
        for (; i1 < p->nrows; i1++) {
            int row_n = 0;
            for (int s = 0; s < p->P; s++)
                if (s != p->me && m->piece[s])
                    row_n += (int)(m->piece[s]->rowptr[i1 + 1] - m->piece[s]->rowptr[i1]);
            if (used + row_n > GET_SLOTS && i1 > i0) break;
            if (row_n > GET_SLOTS) { // one long row: no batching, gets one at a time below
                if (i1 == i0) i1++;
                break;
            }
            for (int s = 0; s < p->P; s++) {
                const dsmm_csr *X = m->piece[s];
                if (s == p->me || X == NULL) continue;
                for (dsmm_idx k = X->rowptr[i1]; k < X->rowptr[i1 + 1]; k++) {
                    DSMM_TRY(dsmmi_rma_get(ctx, p->win, (char *)p->rbuf + (size_t)used * r->row,
                                           r->row, s, (uint64_t)X->colidx[k] * r->row,
                                           DSMMI_RMA_DATA, &reqs[nreq++]));
                    used++;
                }
            }
        }
        if (i1 == i0 + 1 && used == 0) { // the long row: fetch and use one nonzero at a time
            for (int s = 0; s < p->P; s++) {
                const dsmm_csr *X = m->piece[s];
                if (s == p->me || X == NULL) continue;
                for (dsmm_idx k = X->rowptr[i0]; k < X->rowptr[i0 + 1]; k++) {
                    DSMM_TRY(dsmmi_rma_get(ctx, p->win, p->rbuf, r->row, s,
                                           (uint64_t)X->colidx[k] * r->row, DSMMI_RMA_DATA, NULL));
                    axpy_row(r, i0, dsmm_csr_value(X, k), p->rbuf);
                }
            }
            r->comm += dsmmi_wtime() - tg;
            i0 = i1;
            continue;
        }
        for (int q = 0; q < nreq; q++) DSMM_TRY(dsmmi_req_wait(ctx, &reqs[q]));
        nreq = 0;
        r->comm += dsmmi_wtime() - tg;
        double tc = dsmmi_wtime();
        int at = 0;
        for (dsmm_idx i = i0; i < i1; i++)
            for (int s = 0; s < p->P; s++) {
                const dsmm_csr *X = m->piece[s];
                if (s == p->me || X == NULL) continue;
                for (dsmm_idx k = X->rowptr[i]; k < X->rowptr[i + 1]; k++, at++)
                    axpy_row(r, i, dsmm_csr_value(X, k),
                             (const char *)p->rbuf + (size_t)at * r->row);
            }
        r->comp += dsmmi_wtime() - tc;
        i0 = i1;
    }
    t0 = dsmmi_wtime();
    DSMM_TRY(dsmmi_barrier(ctx, NULL)); // every get has completed before the next overwrite
    r->comm += dsmmi_wtime() - t0;
cleanup:
    for (int q = 0; q < nreq; q++) (void)dsmmi_req_wait(ctx, &reqs[q]);
    dsmmi_free(ctx, reqs);
    return st;
}

/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmm_cola_spmm(dsmm_ctx *ctx, dsmm_cola *p, const dsmm_dense *B, dsmm_dense *C,
                           dsmm_cola_info *info)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    run r;
    memset(&r, 0, sizeof r);
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    if (info) memset(info, 0, sizeof *info);
    if (p == NULL || p->magic != DSMMI_COLA_MAGIC || p->ctx != ctx)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dsmm_cola_spmm: the plan is not a live plan of this context");
    else if (B == NULL || C == NULL || (B->val == NULL && B->nrows * B->ncols > 0) ||
             (C->val == NULL && C->nrows * C->ncols > 0))
        local =
            dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__, "dsmm_cola_spmm: B or C is NULL");
    else if (B->type != C->type || (B->type != DSMM_FLOAT && B->type != DSMM_DOUBLE))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dsmm_cola_spmm: B and C must both be float or both double");
    else if (B->nrows != p->nrows || C->nrows != p->nrows || B->ncols != C->ncols ||
             B->ld < B->ncols || C->ld < C->ncols)
        local = dsmmi_error(ctx, DSMM_ERR_DIM, __FILE__, __LINE__,
                            "dsmm_cola_spmm: rank %d's panels are B %lld x %lld and C %lld x "
                            "%lld; the plan's panel has %lld rows",
                            ctx->rank, (long long)B->nrows, (long long)B->ncols,
                            (long long)C->nrows, (long long)C->ncols, (long long)p->nrows);
    else if (B->val == C->val && B->nrows > 0)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__, "dsmm_cola_spmm: C overlaps B");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    int64_t kk[4] = {B->ncols, -B->ncols, (int64_t)B->type, -(int64_t)B->type};
    DSMM_TRY(dsmmi_allreduce_i64(ctx, kk, 4, '>'));
    DSMM_CHECK(ctx, kk[0] == -kk[1] && kk[2] == -kk[3], DSMM_ERR_DIM,
               "dsmm_cola_spmm: ranks disagree on k (%lld..%lld) or the value type",
               (long long)-kk[1], (long long)kk[0]);
    r.ctx = ctx;
    r.p = p;
    r.type = B->type;
    r.k = B->ncols;
    r.elem = dsmmi_type_size(B->type);
    r.row = (size_t)r.k * r.elem;
    r.C = C;
    DSMM_TRY(dsmmi_comm_agree(ctx, dsmmi_cola_mats_get(ctx, p, r.type, &r.m)));
    dsmm_traffic before, after, d;
    dsmm_ctx_traffic(ctx, &before);
    double t0 = dsmmi_wtime();
    for (dsmm_idx i = 0; i < C->nrows; i++)
        memset((char *)C->val + (size_t)(i * C->ld) * r.elem, 0, r.row);
    // Resident: the panel on the device (a rank without a device fails here, every rank with
    // it after the agreement).
    if (p->opts.gpu_resident)
        DSMM_TRY(dsmmi_comm_agree(ctx, dsmmi_gpu_dacc_create(ctx, C->nrows, r.k, r.type, &r.dacc)));
    if (p->P == 1) {
        local = mul_ld(&r, r.m->piece[0], -1, B->val, B->ld, lsc_alg(&r));
    } else {
        switch (p->opts.alg) {
        case DSMM_COLA:
            local = run_fused(&r, B);
            break;
        case DSMM_COLA_NOFUSION:
            local = run_nofusion(&r, B);
            break;
        case DSMM_COLA_BCAST:
            local = run_bcast(&r, B);
            break;
        default:
            local = run_rowwise(&r, B);
            break;
        }
    }
    if (local == DSMM_OK && r.dacc) {
        double tc = dsmmi_wtime();
        // rowwise-1d's remote rows were added on the host: once into the panel
        if (p->P > 1 && p->opts.alg == DSMM_COLA_ROWWISE)
            local = dsmmi_gpu_dacc_add(ctx, r.dacc, C);
        if (local == DSMM_OK) local = dsmmi_gpu_dacc_finish(ctx, r.dacc, C, NULL);
        r.comp += dsmmi_wtime() - tc;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_ctx_traffic(ctx, &after);
    dsmmi_traffic_diff(&after, &before, &d);
    if (info) {
        info->seconds = dsmmi_wtime() - t0;
        info->comp_seconds = r.comp;
        info->comm_seconds = r.comm;
        info->recv_intra = d.bytes_recv[DSMMI_INTRA] + d.rma_bytes[DSMMI_INTRA];
        info->recv_inter = d.bytes_recv[DSMMI_INTER] + d.rma_bytes[DSMMI_INTER];
        if (p->opts.alg == DSMM_COLA_NOFUSION && p->opts.comm == DSMM_COLA_PUT) {
            // Puts are counted where they are issued; the bytes this rank received are those
            // its plan expects (every put completed before the closing barrier).
            info->recv_intra = info->recv_inter = 0;
            for (int s = 0; s < p->P; s++) {
                int64_t b = (int64_t)(p->need_ptr[s + 1] - p->need_ptr[s]) * (int64_t)r.row;
                if (p->wg_of[s] == p->mywg)
                    info->recv_intra += b;
                else
                    info->recv_inter += b;
            }
        }
        info->shared_read = r.shared_read;
        info->gpu_resident = r.dacc != NULL;
        info->lsc_alg = lsc_alg(&r);
        info->rsc_alg = rsc_alg(&r);
        info->products = r.products;
        info->products_gpu = r.products_gpu;
        info->tiles_bytes = p->tiles_bytes;
    }
cleanup:
    dsmmi_gpu_dacc_free(ctx, &r.dacc);
    return st;
}
