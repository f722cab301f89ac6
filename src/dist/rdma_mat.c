// src/dist/rdma_mat.c: RDMA matrices (RDMA paper §3.1, §5.2-5.3): each rank's tiles packed
// into its part of one window, a directory of every tile on every rank (published with one
// sum-allreduce of displacements and sizes), get_tile blocking and non-blocking with local
// copies from a buffer pool, and the owner-only replace + collective renew of §5.3.
#include <string.h>

#include "dist/rdma.h"

/* ------------------------------------------------------------------------------------------ */
/* Building: tiles packed into a window, directory published                                  */
/* ------------------------------------------------------------------------------------------ */

/* Packs this rank's tiles (own[t]: bytes in the tile layout or NULL when empty; nnz[t]) into
 * a new window and publishes displacements and sizes. dir[] already holds owner and shape. */
static dsmm_status publish(dsmm_ctx *ctx, dsmmi_rmat *m, char *const *own, const int64_t *nnz,
                           const int64_t *bytes)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int T = m->ntr * m->ntc, me = dsmm_ctx_rank(ctx);
    int64_t *v = dsmmi_calloc(ctx, 3 * (size_t)(T ? T : 1), sizeof *v);
    if (v == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "tile directory");
    size_t total = 0;
    for (int t = 0; v && t < T; t++) {
        if (m->dir[t].owner != me) continue;
        v[3 * t] = (int64_t)total;
        v[3 * t + 1] = nnz[t];
        v[3 * t + 2] = bytes[t];
        // Each tile starts on a DSMMI_WIN_ALIGN boundary, as the window does: own tiles are
        // read in place (a sparse tile's row pointers, a dense tile's rows by the SpMM's
        // 64-byte vectors).
        total += ((size_t)bytes[t] + DSMMI_WIN_ALIGN - 1) & ~(size_t)(DSMMI_WIN_ALIGN - 1);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    void *base = NULL;
    DSMM_TRY(dsmmi_win_allocate(ctx, total, &base, &m->win));
    m->base = base;
    for (int t = 0; t < T; t++)
        if (m->dir[t].owner == me && bytes[t] > 0)
            memcpy(m->base + v[3 * t], own[t], (size_t)bytes[t]);
    // Each tile has one owner, so the sum over ranks is the directory. The window is filled
    // before the allreduce, which orders the copies before any rank's first get.
    DSMM_TRY(dsmmi_allreduce_i64(ctx, v, 3 * T, '+'));
    for (int t = 0; t < T; t++) {
        m->dir[t].disp = v[3 * t];
        m->dir[t].nnz = v[3 * t + 1];
        m->dir[t].bytes = v[3 * t + 2];
    }
cleanup:
    dsmmi_free(ctx, v);
    return st;
}

static dsmm_status rmat_init(dsmm_ctx *ctx, dsmmi_rmat *m, int ntr, int ntc, int dense,
                             dsmm_type type)
{
    dsmm_status st = DSMM_OK;
    memset(m, 0, sizeof *m);
    m->ntr = ntr;
    m->ntc = ntc;
    m->dense = dense;
    m->type = type;
    size_t T = (size_t)ntr * (size_t)ntc;
    m->dir = dsmmi_calloc(ctx, T ? T : 1, sizeof *m->dir);
    m->staged = dsmmi_calloc(ctx, T ? T : 1, sizeof *m->staged);
    m->snnz = dsmmi_calloc(ctx, T ? T : 1, sizeof *m->snnz);
    m->replaced = dsmmi_calloc(ctx, T ? T : 1, sizeof *m->replaced);
    DSMM_CHECK(ctx, m->dir && m->staged && m->snnz && m->replaced, DSMM_ERR_NOMEM,
               "directory of %zu tiles", T);
cleanup:
    return st;
}

// Sparse tiles of A (is_b 0: tiles (i, s)) or B (is_b 1: tiles (s, j)) from the SUMMA pieces.
static dsmm_status rmat_sparse(dsmm_ctx *ctx, const dsmm_dist *X, int is_b,
                               const dsmmi_summa_plan *p, dsmmi_rmat *m)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    const dsmmi_grid *g = X->grid;
    int S = p->n, me = dsmm_ctx_rank(ctx);
    char **pack = NULL, **own = NULL;
    int64_t *pnnz = NULL, *nnz = NULL, *bytes = NULL;
    local = rmat_init(ctx, m, is_b ? S : g->pr, is_b ? g->pc : S, 0, X->type);
    int T = m->ntr * m->ntc;
    if (local == DSMM_OK) {
        pack = dsmmi_calloc(ctx, S ? (size_t)S : 1, sizeof *pack);
        pnnz = dsmmi_calloc(ctx, S ? (size_t)S : 1, sizeof *pnnz);
        own = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *own);
        nnz = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *nnz);
        bytes = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *bytes);
        if (!pack || !pnnz || !own || !nnz || !bytes)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "tiles of %d stages", S);
    }
    if (local == DSMM_OK) local = dsmmi_summa_pieces(ctx, X, is_b, p, pack, pnnz);
    for (int t = 0; local == DSMM_OK && t < T; t++) {
        int r = t / m->ntc, c = t % m->ntc;
        int s = is_b ? r : c, blk = is_b ? c : r; // stage, and the other index
        dsmmi_rtile *d = &m->dir[t];
        d->owner = is_b ? p->kr[s] * g->pc + blk : blk * g->pc + p->kc[s];
        d->nrows = is_b ? p->hi[s] - p->lo[s] : X->rb[blk + 1] - X->rb[blk];
        d->ncols = is_b ? X->cb[blk + 1] - X->cb[blk] : p->hi[s] - p->lo[s];
        // This rank's pieces are those of its own grid row (A) or column (B).
        if (d->owner == me) {
            own[t] = pack[s];
            nnz[t] = pnnz[s];
            bytes[t] = (int64_t)dsmmi_piece_bytes(d->nrows, pnnz[s], X->type);
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(publish(ctx, m, own, nnz, bytes));
cleanup:
    if (pack) dsmmi_summa_pieces_free(ctx, pack, S);
    dsmmi_free(ctx, pack);
    dsmmi_free(ctx, pnnz);
    dsmmi_free(ctx, own);
    dsmmi_free(ctx, nnz);
    dsmmi_free(ctx, bytes);
    return st;
}

dsmm_status dsmmi_rmat_a(dsmm_ctx *ctx, const dsmm_dist *A, const dsmmi_summa_plan *p,
                         dsmmi_rmat *m)
{
    return rmat_sparse(ctx, A, 0, p, m);
}

dsmm_status dsmmi_rmat_b(dsmm_ctx *ctx, const dsmm_dist *B, const dsmmi_summa_plan *p,
                         dsmmi_rmat *m)
{
    return rmat_sparse(ctx, B, 1, p, m);
}

dsmm_status dsmmi_rmat_dense_b(dsmm_ctx *ctx, const dsmm_dist_dense *B, const dsmmi_summa_plan *p,
                               dsmmi_rmat *m)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    const dsmmi_grid *g = B->grid;
    int S = p->n, me = dsmm_ctx_rank(ctx);
    char **own = NULL;
    int64_t *nnz = NULL, *bytes = NULL;
    size_t vb = dsmmi_type_size(B->type);
    local = rmat_init(ctx, m, S, g->pc, 1, B->type);
    int T = m->ntr * m->ntc;
    if (local == DSMM_OK) {
        own = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *own);
        nnz = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *nnz);
        bytes = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *bytes);
        if (!own || !nnz || !bytes)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "tiles of %d stages", S);
    }
    for (int t = 0; local == DSMM_OK && t < T; t++) {
        int s = t / m->ntc, j = t % m->ntc;
        dsmmi_rtile *d = &m->dir[t];
        d->owner = p->kr[s] * g->pc + j;
        d->nrows = p->hi[s] - p->lo[s];
        d->ncols = B->cb[j + 1] - B->cb[j];
        if (d->owner == me) {
            // Rows [lo, hi) of the row-major block: contiguous, ld == its column count.
            dsmm_idx r0 = p->lo[s] - B->rb[g->myrow];
            own[t] = (char *)B->tile->val + (size_t)r0 * (size_t)d->ncols * vb;
            nnz[t] = (int64_t)d->nrows * d->ncols;
            bytes[t] = nnz[t] * (int64_t)vb;
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(publish(ctx, m, own, nnz, bytes));
cleanup:
    dsmmi_free(ctx, own);
    dsmmi_free(ctx, nnz);
    dsmmi_free(ctx, bytes);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Replace and renew (§5.3)                                                                   */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmmi_rmat_replace(dsmm_ctx *ctx, dsmmi_rmat *m, int t, const dsmm_csr *tile)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, !m->dense && t >= 0 && t < m->ntr * m->ntc, DSMM_ERR_ARG,
               "replace_tile: tile %d of a %s matrix", t, m->dense ? "dense" : "sparse");
    const dsmmi_rtile *d = &m->dir[t];
    DSMM_CHECK(ctx, d->owner == dsmm_ctx_rank(ctx), DSMM_ERR_ARG,
               "replace_tile: tile %d belongs to rank %d; only its owner may replace it", t,
               d->owner);
    DSMM_CHECK(ctx, tile->nrows == d->nrows && tile->ncols == d->ncols, DSMM_ERR_DIM,
               "replace_tile: tile %d is %lldx%lld, the replacement %lldx%lld", t,
               (long long)d->nrows, (long long)d->ncols, (long long)tile->nrows,
               (long long)tile->ncols);
    char *buf = NULL;
    DSMM_TRY(dsmmi_piece_pack(ctx, tile, m->type, &buf));
    dsmmi_free(ctx, m->staged[t]);
    m->staged[t] = buf;
    m->snnz[t] = tile->nnz;
    m->replaced[t] = 1;
cleanup:
    return st;
}

dsmm_status dsmmi_rmat_renew(dsmm_ctx *ctx, dsmmi_rmat *m)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int T = m->ntr * m->ntc, me = dsmm_ctx_rank(ctx);
    char **own = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *own);
    int64_t *nnz = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *nnz);
    int64_t *bytes = dsmmi_calloc(ctx, T ? (size_t)T : 1, sizeof *bytes);
    char *old = NULL;
    size_t oldsz = 0;
    if (!own || !nnz || !bytes)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "renew of %d tiles", T);
    // The current tiles are copied out of the old window, which goes before the new one comes.
    for (int t = 0; local == DSMM_OK && t < T; t++)
        if (m->dir[t].owner == me && !m->replaced[t]) oldsz += (size_t)m->dir[t].bytes;
    if (local == DSMM_OK && oldsz) {
        old = dsmmi_malloc(ctx, oldsz, 1);
        if (old == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "renew");
    }
    size_t off = 0;
    for (int t = 0; local == DSMM_OK && t < T; t++) {
        if (m->dir[t].owner != me) continue;
        if (m->replaced[t]) {
            own[t] = m->staged[t];
            nnz[t] = m->snnz[t];
            bytes[t] = (int64_t)dsmmi_piece_bytes(m->dir[t].nrows, m->snnz[t], m->type);
        } else {
            bytes[t] = m->dir[t].bytes;
            nnz[t] = m->dir[t].nnz;
            if (bytes[t]) memcpy(old + off, m->base + m->dir[t].disp, (size_t)bytes[t]);
            own[t] = bytes[t] ? old + off : NULL;
            off += (size_t)bytes[t];
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    // Nobody may still be reading the old window.
    DSMM_TRY(dsmmi_barrier(ctx, NULL));
    DSMM_TRY(dsmmi_win_free(ctx, &m->win));
    m->base = NULL;
    DSMM_TRY(publish(ctx, m, own, nnz, bytes));
    for (int t = 0; t < T; t++) {
        m->staged[t] = dsmmi_free(ctx, m->staged[t]);
        m->replaced[t] = 0;
        m->snnz[t] = 0;
    }
cleanup:
    dsmmi_free(ctx, own);
    dsmmi_free(ctx, nnz);
    dsmmi_free(ctx, bytes);
    dsmmi_free(ctx, old);
    return st;
}

void dsmmi_rmat_free(dsmm_ctx *ctx, dsmmi_rmat *m)
{
    if (m == NULL) return;
    (void)dsmmi_win_free(ctx, &m->win);
    for (int t = 0; m->staged && t < m->ntr * m->ntc; t++) dsmmi_free(ctx, m->staged[t]);
    dsmmi_free(ctx, m->staged);
    dsmmi_free(ctx, m->snnz);
    dsmmi_free(ctx, m->replaced);
    dsmmi_free(ctx, m->dir);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------------------------ */
/* Buffer pool and get_tile                                                                   */
/* ------------------------------------------------------------------------------------------ */

char *dsmmi_pool_take(dsmm_ctx *ctx, dsmmi_pool *pl, size_t bytes)
{
    int best = -1, idle = -1;
    for (int k = 0; k < pl->n; k++) {
        if (pl->busy[k]) continue;
        if (pl->cap[k] >= bytes && (best < 0 || pl->cap[k] < pl->cap[best])) best = k;
        if (idle < 0 || pl->cap[k] > pl->cap[idle]) idle = k;
    }
    if (best < 0) {
        // Grow the largest idle buffer, or add one.
        if (idle < 0) {
            if (pl->n == pl->max) {
                int nm = pl->max ? 2 * pl->max : 8;
                char **b = dsmmi_realloc(ctx, pl->buf, (size_t)nm, sizeof *b);
                if (b == NULL) return NULL;
                pl->buf = b;
                size_t *c = dsmmi_realloc(ctx, pl->cap, (size_t)nm, sizeof *c);
                if (c == NULL) return NULL;
                pl->cap = c;
                int *u = dsmmi_realloc(ctx, pl->busy, (size_t)nm, sizeof *u);
                if (u == NULL) return NULL;
                pl->busy = u;
                pl->max = nm;
            }
            idle = pl->n++;
            pl->buf[idle] = NULL;
            pl->cap[idle] = 0;
            pl->busy[idle] = 0;
        }
        size_t want = bytes + bytes / 4 + 64; // room for a somewhat larger tile next time
        char *nb = dsmmi_realloc(ctx, pl->buf[idle], want, 1);
        if (nb == NULL) return NULL;
        pl->buf[idle] = nb;
        pl->cap[idle] = want;
        pl->grows++;
        best = idle;
    }
    pl->busy[best] = 1;
    return pl->buf[best];
}

void dsmmi_pool_give(dsmmi_pool *pl, const char *buf)
{
    for (int k = 0; buf && k < pl->n; k++)
        if (pl->buf[k] == buf) pl->busy[k] = 0;
}

void dsmmi_pool_free(dsmm_ctx *ctx, dsmmi_pool *pl)
{
    for (int k = 0; k < pl->n; k++) dsmmi_free(ctx, pl->buf[k]);
    dsmmi_free(ctx, pl->buf);
    dsmmi_free(ctx, pl->cap);
    dsmmi_free(ctx, pl->busy);
    memset(pl, 0, sizeof *pl);
}

dsmm_status dsmmi_rmat_get_async(dsmm_ctx *ctx, const dsmmi_rmat *m, int t, dsmmi_pool *pl,
                                 dsmmi_rfut *f)
{
    dsmm_status st = DSMM_OK;
    memset(f, 0, sizeof *f);
    f->tile = t;
    const dsmmi_rtile *d = &m->dir[t];
    if (d->bytes == 0) return DSMM_OK;
    if (d->owner == dsmm_ctx_rank(ctx)) {
        f->data = m->base + d->disp;
        return DSMM_OK;
    }
    f->buf = dsmmi_pool_take(ctx, pl, (size_t)d->bytes);
    DSMM_CHECK(ctx, f->buf != NULL, DSMM_ERR_NOMEM, "buffer for a tile of %lld bytes",
               (long long)d->bytes);
    DSMM_TRY(dsmmi_rma_get(ctx, m->win, f->buf, (size_t)d->bytes, d->owner, (uint64_t)d->disp,
                           DSMMI_RMA_DATA, &f->req));
    f->data = f->buf;
cleanup:
    if (st != DSMM_OK && f->buf) {
        dsmmi_pool_give(pl, f->buf);
        f->buf = NULL;
        f->data = NULL;
    }
    return st;
}

dsmm_status dsmmi_rfut_wait(dsmm_ctx *ctx, dsmmi_rfut *f, const char **data)
{
    dsmm_status st = dsmmi_req_wait(ctx, &f->req);
    *data = st == DSMM_OK ? f->data : NULL;
    return st;
}

dsmm_status dsmmi_rmat_get(dsmm_ctx *ctx, const dsmmi_rmat *m, int t, dsmmi_pool *pl, dsmmi_rfut *f,
                           const char **data)
{
    dsmm_status st = dsmmi_rmat_get_async(ctx, m, t, pl, f);
    if (st != DSMM_OK) return st;
    return dsmmi_rfut_wait(ctx, f, data);
}

void dsmmi_rfut_release(dsmm_ctx *ctx, dsmmi_rfut *f, dsmmi_pool *pl)
{
    (void)dsmmi_req_wait(ctx, &f->req);
    dsmmi_pool_give(pl, f->buf);
    memset(f, 0, sizeof *f);
    f->tile = -1;
}
