// src/dist/dense.c: distributed dense matrices (the tall-skinny B and C of SpMM), tiled like
// the sparse ones. Scatter, gather and redistribution are one rectangle exchange: every rank
// sends each other rank the intersection of its old tile with that rank's new tile, row-major.
#include <string.h>

#include "dist/dist.h"

typedef struct rect {
    dsmm_idx r0, r1, c0, c1;
} rect;

bool dsmmi_dense_ok(const dsmm_ctx *ctx, const dsmm_dist_dense *B)
{
    return B != NULL && B->magic == DSMMI_DENSE_MAGIC && B->ctx == ctx;
}

void dsmm_dist_dense_destroy(dsmm_dist_dense **pB)
{
    if (pB == NULL || *pB == NULL) return;
    dsmm_dist_dense *B = *pB;
    if (B->magic == DSMMI_DENSE_MAGIC) {
        dsmm_ctx *ctx = B->ctx;
        dsmm_dense_destroy(&B->tile);
        B->rb = dsmmi_free(ctx, B->rb);
        B->cb = dsmmi_free(ctx, B->cb);
        B->magic = DSMMI_FREED_MAGIC;
        dsmmi_free(ctx, B);
    }
    *pB = NULL;
}

dsmm_status dsmmi_dense_new(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type, int pr,
                            int pc, dsmm_dist_dense **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist_dense *B = NULL;
    const dsmmi_grid *g = NULL;
    *out = NULL;
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0, DSMM_ERR_ARG, "negative dimensions %lldx%lld",
               (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "dense values must be float or double, not %s", dsmm_type_name(type));
    // Grid first (collective when new); allocations are local and agreed (see dist.c).
    DSMM_TRY(dsmmi_grid_get(ctx, pr, pc, &g));
    B = dsmmi_calloc(ctx, 1, sizeof *B);
    if (B != NULL) {
        B->magic = DSMMI_DENSE_MAGIC;
        B->ctx = ctx;
        B->nrows = nrows;
        B->ncols = ncols;
        B->type = type;
        B->grid = g;
        B->rb = dsmmi_malloc(ctx, (size_t)g->pr + 1, sizeof *B->rb);
        B->cb = dsmmi_malloc(ctx, (size_t)g->pc + 1, sizeof *B->cb);
    }
    if (B == NULL || B->rb == NULL || B->cb == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "distributed dense matrix");
    if (local == DSMM_OK) {
        dsmmi_equal_split(nrows, g->pr, B->rb);
        dsmmi_equal_split(ncols, g->pc, B->cb);
        local = dsmm_dense_create(ctx, B->rb[g->myrow + 1] - B->rb[g->myrow],
                                  B->cb[g->mycol + 1] - B->cb[g->mycol], type, &B->tile);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    *out = B;
    B = NULL;
cleanup:
    dsmm_dist_dense_destroy(&B);
    return st;
}

dsmm_status dsmm_dist_dense_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type,
                                   int pr, int pc, dsmm_dist_dense **out)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_dense_create: out must be non-NULL");
    DSMM_TRY(dsmmi_dense_new(ctx, nrows, ncols, type, pr, pc, out));
cleanup:
    return st;
}

// The tile rectangle of rank p on B's grid.
static rect tile_rect(const dsmm_dist_dense *B, int p)
{
    int i = p / B->grid->pc, j = p % B->grid->pc;
    return (rect){B->rb[i], B->rb[i + 1], B->cb[j], B->cb[j + 1]};
}

static rect meet(rect a, rect b)
{
    rect m = {a.r0 > b.r0 ? a.r0 : b.r0, a.r1 < b.r1 ? a.r1 : b.r1, a.c0 > b.c0 ? a.c0 : b.c0,
              a.c1 < b.c1 ? a.c1 : b.c1};
    if (m.r1 < m.r0) m.r1 = m.r0;
    if (m.c1 < m.c0) m.c1 = m.c0;
    return m;
}

static size_t rect_elems(rect r)
{
    return (size_t)(r.r1 - r.r0) * (size_t)(r.c1 - r.c0);
}

/* Moves a dense matrix from the tiling src (src[p]: rank p's rectangle; this rank's data in
 * sbuf, row-major with leading dimension sld, its rectangle's origin at (src[me].r0, .c0)) to
 * the tiling dst (this rank's part written to dbuf with leading dimension dld). Collective. */
static dsmm_status dense_move(dsmm_ctx *ctx, size_t es, const rect *src, const char *sbuf,
                              dsmm_idx sld, const rect *dst, char *dbuf, dsmm_idx dld)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = ctx->size, me = ctx->rank;
    size_t *scount = NULL, *sdispl = NULL, *rcount = NULL;
    char *pack = NULL, *rbuf = NULL;
    scount = dsmmi_calloc(ctx, (size_t)P, sizeof *scount);
    sdispl = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *sdispl);
    rcount = dsmmi_calloc(ctx, (size_t)P, sizeof *rcount);
    if (!scount || !sdispl || !rcount)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "dense exchange counts");
    for (int p = 0; local == DSMM_OK && p < P; p++) {
        scount[p] = rect_elems(meet(src[me], dst[p])) * es;
        sdispl[p + 1] = sdispl[p] + scount[p];
    }
    if (local == DSMM_OK) {
        pack = dsmmi_malloc(ctx, sdispl[P] ? sdispl[P] : 1, 1);
        if (pack == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "dense exchange: %zu bytes", sdispl[P]);
    }
    for (int p = 0; local == DSMM_OK && p < P; p++) {
        rect m = meet(src[me], dst[p]);
        size_t w = (size_t)(m.c1 - m.c0) * es;
        char *o = pack + sdispl[p];
        for (dsmm_idx i = m.r0; w && i < m.r1; i++, o += w)
            memcpy(o,
                   sbuf +
                       ((size_t)(i - src[me].r0) * (size_t)sld + (size_t)(m.c0 - src[me].c0)) * es,
                   w);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_exchange(ctx, pack, scount, sdispl, &rbuf, rcount));
    size_t off = 0;
    for (int q = 0; q < P; q++) {
        rect m = meet(src[q], dst[me]);
        size_t w = (size_t)(m.c1 - m.c0) * es;
        for (dsmm_idx i = m.r0; w && i < m.r1; i++, off += w)
            memcpy(dbuf +
                       ((size_t)(i - dst[me].r0) * (size_t)dld + (size_t)(m.c0 - dst[me].c0)) * es,
                   rbuf + off, w);
    }
cleanup:
    scount = dsmmi_free(ctx, scount);
    sdispl = dsmmi_free(ctx, sdispl);
    rcount = dsmmi_free(ctx, rcount);
    pack = dsmmi_free(ctx, pack);
    rbuf = dsmmi_free(ctx, rbuf);
    return st;
}

// Rectangles of every rank: B's tiles, or the whole matrix at root and nothing elsewhere.
static dsmm_status rects(dsmm_ctx *ctx, const dsmm_dist_dense *B, int root, dsmm_idx nrows,
                         dsmm_idx ncols, rect **out)
{
    dsmm_status st = DSMM_OK;
    rect *r = dsmmi_calloc(ctx, (size_t)ctx->size, sizeof *r);
    DSMM_CHECK(ctx, r != NULL, DSMM_ERR_NOMEM, "rectangles");
    for (int p = 0; p < ctx->size; p++)
        r[p] = B ? tile_rect(B, p) : p == root ? (rect){0, nrows, 0, ncols} : (rect){0, 0, 0, 0};
    *out = r;
cleanup:
    return st;
}

dsmm_status dsmm_dist_dense_scatter(dsmm_ctx *ctx, int root, const dsmm_dense *B, int pr, int pc,
                                    dsmm_dist_dense **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist_dense *D = NULL;
    rect *src = NULL, *dst = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_dense_scatter: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, root >= 0 && root < ctx->size, DSMM_ERR_ARG, "root %d outside 0..%d", root,
               ctx->size - 1);
    int64_t shape[3] = {0, 0, 0};
    if (ctx->rank == root) {
        if (B == NULL || B->val == NULL || (B->type != DSMM_FLOAT && B->type != DSMM_DOUBLE) ||
            B->nrows < 0 || B->ncols < 0 || B->ld < B->ncols)
            local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                                "dist_dense_scatter: B on the root is NULL or malformed");
        else {
            shape[0] = B->nrows;
            shape[1] = B->ncols;
            shape[2] = B->type;
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_bcast_ctl(ctx, root, shape, sizeof shape));
    DSMM_TRY(dsmmi_dense_new(ctx, shape[0], shape[1], (dsmm_type)shape[2], pr, pc, &D));
    local = rects(ctx, NULL, root, shape[0], shape[1], &src);
    if (local == DSMM_OK) local = rects(ctx, D, root, 0, 0, &dst);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dense_move(ctx, dsmmi_type_size(D->type), src, ctx->rank == root ? B->val : NULL,
                        ctx->rank == root ? B->ld : 0, dst, D->tile->val, D->tile->ld));
    *out = D;
    D = NULL;
cleanup:
    src = dsmmi_free(ctx, src);
    dst = dsmmi_free(ctx, dst);
    dsmm_dist_dense_destroy(&D);
    return st;
}

dsmm_status dsmm_dist_dense_gather(dsmm_ctx *ctx, const dsmm_dist_dense *B, int root,
                                   dsmm_dense **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dense *D = NULL;
    rect *src = NULL, *dst = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_dense_gather: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_dense_ok(ctx, B), DSMM_ERR_ARG,
               "dist_dense_gather: not a live distributed dense matrix of this context");
    DSMM_CHECK(ctx, root >= 0 && root < ctx->size, DSMM_ERR_ARG, "root %d outside 0..%d", root,
               ctx->size - 1);
    if (ctx->rank == root) local = dsmm_dense_create(ctx, B->nrows, B->ncols, B->type, &D);
    if (local == DSMM_OK) local = rects(ctx, B, root, 0, 0, &src);
    if (local == DSMM_OK) local = rects(ctx, NULL, root, B->nrows, B->ncols, &dst);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dense_move(ctx, dsmmi_type_size(B->type), src, B->tile->val, B->tile->ld, dst,
                        D ? D->val : NULL, D ? D->ld : 0));
    *out = D;
    D = NULL;
cleanup:
    src = dsmmi_free(ctx, src);
    dst = dsmmi_free(ctx, dst);
    dsmm_dense_destroy(&D);
    return st;
}

dsmm_status dsmm_dist_dense_redistribute(dsmm_ctx *ctx, const dsmm_dist_dense *B, int pr, int pc,
                                         dsmm_dist_dense **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist_dense *D = NULL;
    rect *src = NULL, *dst = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_dense_redistribute: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_dense_ok(ctx, B), DSMM_ERR_ARG,
               "dist_dense_redistribute: not a live distributed dense matrix of this context");
    DSMM_TRY(dsmmi_dense_new(ctx, B->nrows, B->ncols, B->type, pr, pc, &D));
    local = rects(ctx, B, 0, 0, 0, &src);
    if (local == DSMM_OK) local = rects(ctx, D, 0, 0, 0, &dst);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dense_move(ctx, dsmmi_type_size(B->type), src, B->tile->val, B->tile->ld, dst,
                        D->tile->val, D->tile->ld));
    *out = D;
    D = NULL;
cleanup:
    src = dsmmi_free(ctx, src);
    dst = dsmmi_free(ctx, dst);
    dsmm_dist_dense_destroy(&D);
    return st;
}

dsmm_dense *dsmm_dist_dense_local(dsmm_dist_dense *B, dsmm_idx *row0, dsmm_idx *col0)
{
    int ok = B && B->magic == DSMMI_DENSE_MAGIC;
    if (row0) *row0 = ok ? B->rb[B->grid->myrow] : 0;
    if (col0) *col0 = ok ? B->cb[B->grid->mycol] : 0;
    return ok ? B->tile : NULL;
}

void dsmm_dist_dense_dims(const dsmm_dist_dense *B, dsmm_idx *nrows, dsmm_idx *ncols, int *pr,
                          int *pc)
{
    int ok = B && B->magic == DSMMI_DENSE_MAGIC;
    if (nrows) *nrows = ok ? B->nrows : 0;
    if (ncols) *ncols = ok ? B->ncols : 0;
    if (pr) *pr = ok ? B->grid->pr : 0;
    if (pc) *pc = ok ? B->grid->pc : 0;
}
