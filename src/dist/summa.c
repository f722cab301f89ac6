// src/dist/summa.c: what the SUMMA products share (HipMCL §II, RDMA paper §2): the stage plan
// over the inner dimension, the pieces of A each rank broadcasts along its grid row, their
// wire format, and the algorithm names and options.
//
// On a pr x pc grid A's columns are cut into pc blocks and B's rows into pr blocks. When the
// grid is square the two cuts agree and stage k broadcasts tile A(i, k) and tile B(k, j).
// Otherwise the stages run over the finer split, the union of both cuts: stage s covers inner
// indices [lo, hi), lying inside one column block kc of A and one row block kr of B, and
// broadcasts the piece A(i, lo:hi) from grid column kc along grid row i and B(lo:hi, j) from
// grid row kr along grid column j. At most pr + pc - 1 stages.
#include <string.h>

#include "dist/summa.h"
#include "gpu/gpu.h"

static const char *const alg_names[] = {"auto",   "summa",       "rdma-c",     "rdma-a",
                                        "rdma-b", "ws-random-a", "ws-local-a", "ws-local-c"};

dsmm_status dsmm_dist_alg_from_name(const char *name, dsmm_dist_alg *alg)
{
    if (name == NULL || alg == NULL) return DSMM_ERR_ARG;
    for (int a = 0; a < (int)(sizeof alg_names / sizeof alg_names[0]); a++)
        if (strcmp(name, alg_names[a]) == 0) {
            *alg = (dsmm_dist_alg)a;
            return DSMM_OK;
        }
    return DSMM_ERR_ARG;
}

const char *dsmm_dist_alg_name(dsmm_dist_alg alg)
{
    return (int)alg >= 0 && (int)alg < (int)(sizeof alg_names / sizeof alg_names[0])
               ? alg_names[alg]
               : "unknown";
}

void dsmm_dist_opts_init(dsmm_dist_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->alg = DSMM_DIST_AUTO;
    dsmm_spgemm_opts_init(&opts->spgemm);
    dsmm_spmm_opts_init(&opts->spmm);
}

dsmm_status dsmmi_summa_plan_make(dsmm_ctx *ctx, dsmm_idx m, int pr, int pc, dsmmi_summa_plan *p)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *ca = NULL, *rb = NULL;
    memset(p, 0, sizeof *p);
    int most = pr + pc;
    ca = dsmmi_malloc(ctx, (size_t)pc + 1, sizeof *ca);
    rb = dsmmi_malloc(ctx, (size_t)pr + 1, sizeof *rb);
    p->lo = dsmmi_malloc(ctx, (size_t)most, sizeof *p->lo);
    p->hi = dsmmi_malloc(ctx, (size_t)most, sizeof *p->hi);
    p->kc = dsmmi_malloc(ctx, (size_t)most, sizeof *p->kc);
    p->kr = dsmmi_malloc(ctx, (size_t)most, sizeof *p->kr);
    DSMM_CHECK(ctx, ca && rb && p->lo && p->hi && p->kc && p->kr, DSMM_ERR_NOMEM, "stage plan");
    dsmmi_equal_split(m, pc, ca);
    dsmmi_equal_split(m, pr, rb);
    // Walk both cuts at once; a stage ends at the nearer of the two next boundaries.
    int a = 0, b = 0;
    dsmm_idx at = 0;
    while (at < m) {
        while (ca[a + 1] <= at) a++;
        while (rb[b + 1] <= at) b++;
        dsmm_idx end = ca[a + 1] < rb[b + 1] ? ca[a + 1] : rb[b + 1];
        p->lo[p->n] = at;
        p->hi[p->n] = end;
        p->kc[p->n] = a;
        p->kr[p->n] = b;
        p->n++;
        at = end;
    }
cleanup:
    ca = dsmmi_free(ctx, ca);
    rb = dsmmi_free(ctx, rb);
    if (st != DSMM_OK) dsmmi_summa_plan_free(ctx, p);
    return st;
}

void dsmmi_summa_plan_free(dsmm_ctx *ctx, dsmmi_summa_plan *p)
{
    p->lo = dsmmi_free(ctx, p->lo);
    p->hi = dsmmi_free(ctx, p->hi);
    p->kc = dsmmi_free(ctx, p->kc);
    p->kr = dsmmi_free(ctx, p->kr);
    p->n = 0;
}

size_t dsmmi_piece_bytes(dsmm_idx nrows, dsmm_idx nnz, dsmm_type type)
{
    if (nnz == 0) return 0;
    return ((size_t)nrows + 1) * sizeof(dsmm_idx) + (size_t)nnz * dsmmi_type_size(type) +
           (size_t)nnz * sizeof(int32_t);
}

// Wire layout: row pointers (int64, from 0), values (8- or 4-byte, so they stay aligned
// after the row pointers), then 32-bit columns.
dsmm_status dsmmi_piece_pack(dsmm_ctx *ctx, const dsmm_csr *P, dsmm_type type, char **buf)
{
    dsmm_status st = DSMM_OK;
    *buf = NULL;
    size_t bytes = dsmmi_piece_bytes(P->nrows, P->nnz, type);
    if (bytes == 0) return DSMM_OK;
    char *b = dsmmi_malloc(ctx, bytes, 1);
    DSMM_CHECK(ctx, b != NULL, DSMM_ERR_NOMEM, "piece of %lld entries", (long long)P->nnz);
    dsmm_idx *rp = (dsmm_idx *)b;
    for (dsmm_idx i = 0; i <= P->nrows; i++) rp[i] = P->rowptr[i] - P->rowptr[0];
    size_t vb = dsmmi_type_size(type);
    char *v = b + ((size_t)P->nrows + 1) * sizeof(dsmm_idx);
    if (vb) dsmmi_vals_convert(v, type, (const char *)P->val, P->type, P->nnz);
    int32_t *c = (int32_t *)(v + (size_t)P->nnz * vb);
    for (dsmm_idx k = 0; k < P->nnz; k++) c[k] = (int32_t)dsmm_csr_col(P, P->rowptr[0] + k);
    *buf = b;
cleanup:
    return st;
}

void dsmmi_piece_view(const char *buf, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx nnz, dsmm_type type,
                      dsmm_ctx *ctx, dsmm_csr *view)
{
    memset(view, 0, sizeof *view);
    view->nrows = nrows;
    view->ncols = ncols;
    view->nnz = view->cap = nnz;
    view->type = type;
    view->sorted = 1;
    view->ctx = ctx;
    size_t vb = dsmmi_type_size(type);
    view->rowptr = (dsmm_idx *)buf;
    view->val = vb ? (void *)(buf + ((size_t)nrows + 1) * sizeof(dsmm_idx)) : NULL;
    view->colidx32 = (int32_t *)(buf + ((size_t)nrows + 1) * sizeof(dsmm_idx) + (size_t)nnz * vb);
}

dsmm_status dsmmi_summa_pieces(dsmm_ctx *ctx, const dsmm_dist *X, int is_b,
                               const dsmmi_summa_plan *p, char **pack, int64_t *nnz)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_grid *g = X->grid;
    dsmm_csr **panels = NULL;
    dsmm_idx *bounds = NULL;
    int first = -1, count = 0;
    const int *owner = is_b ? p->kr : p->kc;
    int me = is_b ? g->myrow : g->mycol;
    for (int s = 0; s < p->n; s++) {
        pack[s] = NULL;
        nnz[s] = 0;
        if (owner[s] == me) {
            if (first < 0) first = s;
            count++;
        }
    }
    if (count == 0) return DSMM_OK;
    bounds = dsmmi_malloc(ctx, (size_t)count + 1, sizeof *bounds);
    DSMM_CHECK(ctx, bounds != NULL, DSMM_ERR_NOMEM, "piece bounds");
    dsmm_idx base = is_b ? X->rb[g->myrow] : X->cb[g->mycol];
    for (int q = 0; q < count; q++) bounds[q] = p->lo[first + q] - base;
    bounds[count] = p->hi[first + count - 1] - base;
    if (is_b)
        DSMM_TRY(dsmm_csr_row_panels(ctx, X->tile, count, bounds, &panels));
    else
        DSMM_TRY(dsmm_csr_col_panels(ctx, X->tile, count, bounds, &panels));
    for (int q = 0; q < count; q++) {
        nnz[first + q] = panels[q]->nnz;
        DSMM_TRY(dsmmi_piece_pack(ctx, panels[q], X->type, &pack[first + q]));
    }
cleanup:
    if (panels) dsmm_csr_panels_free(ctx, &panels, count);
    bounds = dsmmi_free(ctx, bounds);
    return st;
}

void dsmmi_summa_pieces_free(dsmm_ctx *ctx, char **pack, int n)
{
    for (int s = 0; pack && s < n; s++) pack[s] = dsmmi_free(ctx, pack[s]);
}

size_t dsmmi_summa_a_bytes(const dsmm_dist *A, const dsmmi_summa_plan *p, const int64_t *a_all,
                           int s)
{
    const dsmmi_grid *g = A->grid;
    int owner = g->myrow * g->pc + p->kc[s];
    return dsmmi_piece_bytes(A->rb[g->myrow + 1] - A->rb[g->myrow], a_all[owner * p->n + s],
                             A->type);
}

dsmm_status dsmmi_summa_side_make(dsmm_ctx *ctx, const dsmm_dist *X, int is_b,
                                  const dsmmi_summa_plan *p, dsmmi_summa_side *side)
{
    dsmm_status st = DSMM_OK;
    size_t n = p->n ? (size_t)p->n : 1, P = (size_t)X->grid->pr * (size_t)X->grid->pc;
    side->pack = dsmmi_calloc(ctx, n, sizeof *side->pack);
    side->nnz = dsmmi_calloc(ctx, n, sizeof *side->nnz);
    side->all = dsmmi_calloc(ctx, n * P, sizeof *side->all);
    DSMM_CHECK(ctx, side->pack && side->nnz && side->all, DSMM_ERR_NOMEM, "%d stages", p->n);
    DSMM_TRY(dsmmi_summa_pieces(ctx, X, is_b, p, side->pack, side->nnz));
cleanup:
    return st;
}

dsmm_status dsmmi_summa_bcast_stage(dsmm_ctx *ctx, const dsmmi_grid *g, const dsmmi_summa_plan *p,
                                    int s, int slot, int prefetch, char *abuf, size_t ab,
                                    dsmmi_summa_side *a, char *bbuf, size_t bb, dsmmi_summa_side *b)
{
    dsmm_status st = DSMM_OK;
    if (prefetch) {
        DSMM_TRY(dsmmi_ibcast(ctx, g, DSMMI_ALONG_ROW, p->kc[s], abuf, ab, &a->req[slot]));
        DSMM_TRY(dsmmi_ibcast(ctx, g, DSMMI_ALONG_COL, p->kr[s], bbuf, bb, &b->req[slot]));
    } else {
        DSMM_TRY(dsmmi_bcast(ctx, g, DSMMI_ALONG_ROW, p->kc[s], abuf, ab));
        DSMM_TRY(dsmmi_bcast(ctx, g, DSMMI_ALONG_COL, p->kr[s], bbuf, bb));
    }
cleanup:
    return st;
}

char *dsmmi_summa_piece_at(const dsmmi_summa_side *side, int own, int s, int slot)
{
    if (own) return side->pack[s];
    return side->keep ? side->keep[s] : side->buf[slot];
}

dsmm_status dsmmi_summa_slots_alloc(dsmm_ctx *ctx, dsmmi_summa_side *a, dsmmi_summa_side *b,
                                    int nslots, size_t amax, size_t bmax, int dev, const char *who)
{
    dsmm_status st = DSMM_OK;
    for (int k = 0; k < nslots; k++) {
        if (dev) {
            void *ab = NULL, *bb = NULL;
            DSMM_TRY(dsmmi_gpu_buf_alloc(ctx, amax ? amax : 1, "SUMMA receive slot of A", &ab));
            a->buf[k] = ab;
            DSMM_TRY(dsmmi_gpu_buf_alloc(ctx, bmax ? bmax : 1, "SUMMA receive slot of B", &bb));
            b->buf[k] = bb;
            continue;
        }
        a->buf[k] = dsmmi_malloc(ctx, amax ? amax : 1, 1);
        b->buf[k] = dsmmi_malloc(ctx, bmax ? bmax : 1, 1);
        DSMM_CHECK(ctx, a->buf[k] != NULL && b->buf[k] != NULL, DSMM_ERR_NOMEM,
                   "%s: receive buffers of %zu + %zu bytes", who, amax, bmax);
    }
cleanup:
    return st;
}

void dsmmi_summa_slots_free_device(dsmm_ctx *ctx, dsmmi_summa_side *a, dsmmi_summa_side *b)
{
    for (int k = 0; k < 2; k++) {
        (void)dsmmi_req_wait(ctx, &a->req[k]);
        (void)dsmmi_req_wait(ctx, &b->req[k]);
        a->buf[k] = dsmmi_gpu_buf_free(ctx, a->buf[k]);
        b->buf[k] = dsmmi_gpu_buf_free(ctx, b->buf[k]);
    }
}

void dsmmi_summa_side_free(dsmm_ctx *ctx, int n, dsmmi_summa_side *side)
{
    dsmmi_summa_pieces_free(ctx, side->pack, n);
    dsmmi_summa_pieces_free(ctx, side->keep, n);
    side->pack = dsmmi_free(ctx, side->pack);
    side->keep = dsmmi_free(ctx, side->keep);
    side->nnz = dsmmi_free(ctx, side->nnz);
    side->all = dsmmi_free(ctx, side->all);
    for (int k = 0; k < 2; k++) {
        (void)dsmmi_req_wait(ctx, &side->req[k]);
        side->buf[k] = dsmmi_free(ctx, side->buf[k]);
    }
}
