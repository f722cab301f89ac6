// src/apps/mcl/mcl.c: dsmm_mcl_run, the MCL driver: the graph becomes T = M^T split by rows
// over the ranks (row c = column c of M, so every column-wise rule of mcl is a row-local
// one), mcl's preprocessing (loops, stochastic columns), the iterations (fused local
// expansion on one rank, distributed SpGEMM in phases otherwise), mcl's loop control
// (initial loop, chaos < 1e-4, the inflation bump after 40 iterations), checkpoints, and the
// interpretation into clusters (mcl_interpret.c).
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"

static const struct {
    int64_t P, S, R;
    int pct;
} schemes[8] = {
    {0, 0, 0, 0},         {3000, 400, 500, 90}, {4000, 500, 600, 90},    {5000, 600, 700, 90},
    {6000, 700, 800, 90}, {7000, 800, 900, 90}, {10000, 1100, 1400, 90}, {10000, 1200, 1600, 90}};

dsmm_status dsmm_mcl_scheme_values(int scheme, int64_t *P, int64_t *S, int64_t *R, int *pct)
{
    if (scheme < 1 || scheme > 7) return DSMM_ERR_ARG;
    if (P) *P = schemes[scheme].P;
    if (S) *S = schemes[scheme].S;
    if (R) *R = schemes[scheme].R;
    if (pct) *pct = schemes[scheme].pct;
    return DSMM_OK;
}

void dsmm_mcl_params_init(dsmm_mcl_params *p)
{
    memset(p, 0, sizeof *p);
    p->inflation = 2.0;
    p->init_inflation = 2.0;
    p->init_loop = 0;
    p->loop_scale = 1.0;
    p->main_loop = 10000;
    p->scheme = 6;
    p->prune_number = p->select_number = p->recover_number = -1;
    p->recover_pct = -1;
    p->expand = DSMM_MCL_AUTO;
    p->estimate_keys = -1;
    dsmm_dist_opts_init(&p->dist);
    p->dist.alg = DSMM_DIST_SUMMA;
}

void dsmm_mcl_result_free(dsmm_mcl_result *res)
{
    if (res == NULL) return;
    dsmm_free(NULL, res->cluster);
    dsmm_free(NULL, res->start);
    dsmm_free(NULL, res->members);
    dsmm_free(NULL, res->orig_start);
    dsmm_free(NULL, res->orig_members);
    dsmm_free(NULL, res->iters);
    memset(res, 0, sizeof *res);
}

dsmm_status dsmmi_mcl_rules_from(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmmi_mcl_rules *r)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, p->scheme >= 1 && p->scheme <= 7, DSMM_ERR_ARG,
               "mcl: scheme %d is not one of 1..7", p->scheme);
    int64_t P = p->prune_number >= 0 ? p->prune_number : schemes[p->scheme].P;
    r->S = p->select_number >= 0 ? p->select_number : schemes[p->scheme].S;
    r->R = p->recover_number >= 0 ? p->recover_number : schemes[p->scheme].R;
    int pct = p->recover_pct >= 0 ? p->recover_pct : schemes[p->scheme].pct;
    DSMM_CHECK(ctx, pct >= 0 && pct < 100, DSMM_ERR_ARG, "mcl: -pct %d is not in 0..99", pct);
    r->pct = pct / 100.0;
    r->cut = P > 0 ? 0.99999 / (double)P : 0.0;
cleanup:
    return st;
}

// ------------------------------------------------------------------------------------------
// The rows of T on this rank, from G.
// ------------------------------------------------------------------------------------------

static dsmm_status load_rows(dsmm_ctx *ctx, const dsmm_dist *G, const dsmm_mcl_params *p,
                             dsmmi_mcl_mat *M, dsmm_idx *row0)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *r = NULL, *c = NULL, n = 0, *tr = NULL, *tc = NULL;
    double *v = NULL, *tv = NULL;
    dsmm_dist *T = NULL;
    dsmm_csr *tile = NULL;
    int P = dsmm_ctx_size(ctx);
    dsmm_idx N = G->nrows;
    dsmm_status bad = DSMM_OK;
    int symmetrize = p->symmetrize;
    const dsmm_mcl_tf *tf = p->tf;

    DSMM_TRY(dsmmi_dist_triples(ctx, G, &r, &c, &v, &n));
    for (dsmm_idx k = 0; k < n && v != NULL && bad == DSMM_OK; k++)
        if (!isfinite(v[k]) || (v[k] < 0.0 && tf == NULL)) // -tf may map it (checked after)
            bad = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                              "mcl: edge %lld -> %lld has weight %g (weights must be finite and "
                              ">= 0)",
                              (long long)c[k] + 1, (long long)r[k] + 1, v[k]);
    DSMM_TRY(dsmmi_comm_agree(ctx, bad)); // the first failing rank's message on every rank
    dsmm_idx m = symmetrize ? 2 * n : n;
    tr = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tr);
    tc = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tc);
    tv = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tv);
    DSMM_CHECK(ctx, tr && tc && tv, DSMM_ERR_NOMEM, "mcl: %lld input entries", (long long)m);
    // mcl discards the input's loops as it reads the graph (unless --discard-loops=n), so
    // -icl and -tf (#knn, #ceilnb count a vertex's edges) never see them.
    dsmm_idx q = 0;
    for (dsmm_idx k = 0; k < n; k++) {
        if (r[k] == c[k] && !p->keep_loops) continue;
        // Stored as floats, as mcl reads them; T(c, r) = G(r, c).
        double w = v ? (double)(float)v[k] : 1.0;
        tr[q] = c[k];
        tc[q] = r[k];
        tv[q++] = w;
        if (symmetrize) {
            tr[q] = r[k];
            tc[q] = c[k];
            tv[q++] = w;
        }
    }
    m = q;
    r = dsmmi_free(ctx, r);
    c = dsmmi_free(ctx, c);
    v = dsmmi_free(ctx, v);
    DSMM_TRY(dsmmi_dist_from_triples(ctx, N, N, DSMM_DOUBLE, m, tr, tc, tv, DSMM_DOUBLE,
                                     symmetrize ? DSMM_DUP_MAX : DSMM_DUP_ERROR, "the graph", P, 1,
                                     &T));
    tr = dsmmi_free(ctx, tr);
    tc = dsmmi_free(ctx, tc);
    tv = dsmmi_free(ctx, tv);
    tile = T->tile;
    *row0 = T->rb[T->grid->myrow];
    DSMM_TRY(dsmmi_mcl_mat_from_tile(ctx, tile, M));
    dsmm_dist_destroy(&T);
    // mcl's -icl, on the graph as read (mcl applies it before -tf).
    if (p->icl != NULL) DSMM_TRY(dsmmi_mcl_icl(ctx, N, *row0, M, p->icl, p->icl_n));
    // mcl's -tf, on the graph as loaded (symmetric for abc), before the loops.
    if (tf != NULL) DSMM_TRY(dsmmi_mcl_tf_run(ctx, tf, N, *row0, M));
cleanup:
    dsmm_dist_destroy(&T);
    dsmmi_free(ctx, r);
    dsmmi_free(ctx, c);
    dsmmi_free(ctx, v);
    dsmmi_free(ctx, tr);
    dsmmi_free(ctx, tc);
    dsmmi_free(ctx, tv);
    return st;
}

// Row i of M (vertex gc) into out from q with mcl's loop, returning the next free slot: the
// stored loop dropped and the largest other weight (1 if none) put in its place, times |c|;
// with keep_loops (mcl's --discard-loops=n) a stored loop only multiplied by |c| (0 stays
// stored, as mcl keeps it) and none added where none was stored.
static dsmm_idx row_with_loop(const dsmm_mcl_params *p, const dsmmi_mcl_mat *M, dsmm_idx i,
                              int32_t gc, dsmmi_mcl_mat *out, dsmm_idx q)
{
    double c = fabs(p->loop_scale);
    if (p->keep_loops) {
        for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++) {
            out->col[q] = M->col[k];
            out->val[q++] = M->col[k] == gc ? (float)((double)M->val[k] * c) : M->val[k];
        }
        return q;
    }
    float mx = -FLT_MAX;
    dsmm_idx cnt = 0;
    for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++)
        if (M->col[k] != gc) {
            cnt++;
            if (M->val[k] > mx) mx = M->val[k];
        }
    float loop = (cnt == 0 || mx == 0.0f) ? 1.0f : mx;
    loop = (float)((double)loop * c);
    int placed = loop == 0.0f; // -c 0: no loop (mcl's zero loops, tested as the same clusters)
    for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++) {
        if (M->col[k] == gc) continue;
        if (!placed && M->col[k] > gc) {
            out->col[q] = gc;
            out->val[q++] = loop;
            placed = 1;
        }
        out->col[q] = M->col[k];
        out->val[q++] = M->val[k];
    }
    if (!placed) {
        out->col[q] = gc;
        out->val[q++] = loop;
    }
    return q;
}

// mcl's start: each column's loop (row_with_loop), -pi, then columns made stochastic.
static dsmm_status preprocess(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmmi_mcl_mat *M,
                              dsmm_idx row0)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mcl_mat out = {0};
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, &out, M->nrows, M->nnz + M->nrows));
    dsmm_idx q = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx start = q;
        q = row_with_loop(p, M, i, (int32_t)(row0 + i), &out, q);
        dsmm_idx n = q - start;
        if (p->pre_inflation > 0.0) {
            if (dsmmi_mcl_inflate(out.val + start, n, (double)(float)p->pre_inflation) == 0) {
                q = start; // mcl empties a column whose sum is not positive
                n = 0;
            }
        }
        double s = 0.0;
        for (dsmm_idx k = start; k < q; k++) s += (double)out.val[k];
        if (s != 0.0)
            for (dsmm_idx k = start; k < q; k++) out.val[k] = (float)((double)out.val[k] / s);
        out.rowptr[i + 1] = q;
    }
    out.nnz = q;
    dsmmi_mcl_mat_free(ctx, M);
    *M = out;
    out = (dsmmi_mcl_mat){0};
cleanup:
    dsmmi_mcl_mat_free(ctx, &out);
    return st;
}

// ------------------------------------------------------------------------------------------
// The replicated expansion: the whole iterate on every rank.
// ------------------------------------------------------------------------------------------

// out (new, nrows rows): the rows whose lengths (int64_t each) are in lens and whose columns
// and values were received into *cols and *vals, which out takes over (set to NULL). Collective;
// fails together.
static dsmm_status adopt_rows(dsmm_ctx *ctx, const char *lens, dsmm_idx nrows, char **cols,
                              char **vals, dsmmi_mcl_mat *out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    memset(out, 0, sizeof *out);
    out->rowptr = dsmmi_malloc(ctx, (size_t)nrows + 1, sizeof *out->rowptr);
    if (*cols == NULL) *cols = dsmmi_malloc(ctx, 1, sizeof *out->col);
    if (*vals == NULL) *vals = dsmmi_malloc(ctx, 1, sizeof *out->val);
    if (out->rowptr == NULL || *cols == NULL || *vals == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: %lld received rows",
                            (long long)nrows);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    out->rowptr[0] = 0;
    for (dsmm_idx v = 0; v < nrows; v++) {
        int64_t l;
        memcpy(&l, lens + (size_t)v * sizeof l, sizeof l);
        out->rowptr[v + 1] = out->rowptr[v] + l;
    }
    out->nrows = nrows;
    out->nnz = out->rowptr[nrows];
    out->col = (int32_t *)(void *)*cols;
    out->val = (float *)(void *)*vals;
    *cols = *vals = NULL;
cleanup:
    if (st != DSMM_OK) {
        dsmmi_free(ctx, out->rowptr);
        out->rowptr = NULL;
    }
    return st;
}

// G (new): the whole iterate, rows in global order; the ranks hold consecutive row blocks in
// rank order, so the all-to-all's receive order is the row order. Collective; fails together.
static dsmm_status gather_all(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx N, dsmmi_mcl_mat *G)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx);
    size_t *sc = NULL, *sd = NULL, *rc = NULL;
    int64_t *len = NULL;
    char *lens = NULL, *cols = NULL, *vals = NULL;
    memset(G, 0, sizeof *G);
    sc = dsmmi_malloc(ctx, (size_t)P, sizeof *sc);
    sd = dsmmi_calloc(ctx, (size_t)P, sizeof *sd); // every rank gets the same bytes: offset 0
    rc = dsmmi_malloc(ctx, (size_t)P, sizeof *rc);
    len = dsmmi_malloc(ctx, (size_t)M->nrows + 1, sizeof *len);
    if (!sc || !sd || !rc || !len)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: gathering the iterate");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (dsmm_idx i = 0; i < M->nrows; i++) len[i] = M->rowptr[i + 1] - M->rowptr[i];
    for (int q = 0; q < P; q++) sc[q] = (size_t)M->nrows * sizeof *len;
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)len, sc, sd, &lens, rc));
    for (int q = 0; q < P; q++) sc[q] = (size_t)M->nnz * sizeof *M->col;
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)M->col, sc, sd, &cols, rc));
    for (int q = 0; q < P; q++) sc[q] = (size_t)M->nnz * sizeof *M->val;
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)M->val, sc, sd, &vals, rc));
    DSMM_TRY(adopt_rows(ctx, lens, N, &cols, &vals, G));
cleanup:
    dsmmi_free(ctx, sc);
    dsmmi_free(ctx, sd);
    dsmmi_free(ctx, rc);
    dsmmi_free(ctx, len);
    dsmmi_free(ctx, lens);
    dsmmi_free(ctx, cols);
    dsmmi_free(ctx, vals);
    if (st != DSMM_OK) dsmmi_mcl_mat_free(ctx, G);
    return st;
}

// The rows [*b0, *b1) this rank expands in the replicated expansion: contiguous ranges of
// equal work (dsmmi_mcl_work_bounds, as the fused threads share columns), computed alike on
// every rank from the whole iterate W. Rows of equal count would leave a rank with the heavy
// columns: hart_scores' iteration 2 took as long on 2 ranks as on one. Collective; fails
// together.
static dsmm_status work_split(dsmm_ctx *ctx, const dsmmi_mcl_mat *W, dsmm_idx *b0, dsmm_idx *b1)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    dsmm_idx *bnd = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *bnd);
    if (bnd == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: %d rank ranges", P);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmmi_mcl_work_bounds(W, W, 0, P, NULL, bnd);
    *b0 = bnd[me];
    *b1 = bnd[me + 1];
cleanup:
    dsmmi_free(ctx, bnd);
    return st;
}

// next (new): this rank's nrows rows of the iterate (its block of the equal split), sent by the
// ranks that computed them (part: rows [b0, b0 + part->nrows)). Both splits are contiguous and in
// rank order, so the rows arrive in order. Collective; fails together.
static dsmm_status to_owners(dsmm_ctx *ctx, const dsmmi_mcl_mat *part, dsmm_idx b0, dsmm_idx nrows,
                             dsmm_idx N, dsmmi_mcl_mat *next)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx);
    size_t *sc = NULL, *sd = NULL, *rc = NULL;
    dsmm_idx *ob = NULL;
    int64_t *len = NULL;
    char *lens = NULL, *cols = NULL, *vals = NULL;
    memset(next, 0, sizeof *next);
    sc = dsmmi_malloc(ctx, (size_t)P, sizeof *sc);
    sd = dsmmi_malloc(ctx, (size_t)P, sizeof *sd);
    rc = dsmmi_malloc(ctx, (size_t)P, sizeof *rc);
    ob = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *ob);
    len = dsmmi_malloc(ctx, (size_t)part->nrows + 1, sizeof *len);
    if (!sc || !sd || !rc || !ob || !len)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: sending the rows");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmmi_equal_split(N, P, ob);
    for (dsmm_idx i = 0; i < part->nrows; i++) len[i] = part->rowptr[i + 1] - part->rowptr[i];
// Rows of part owned by q: [lo, hi) of part's own numbering.
#define OWNED(q, lo, hi)                                                                           \
    dsmm_idx lo = ob[q] - b0 > 0 ? ob[q] - b0 : 0;                                                 \
    dsmm_idx hi = ob[(q) + 1] - b0 < part->nrows ? ob[(q) + 1] - b0 : part->nrows;                 \
    if (lo > part->nrows) lo = part->nrows;                                                        \
    if (hi < lo) hi = lo;
    for (int q = 0; q < P; q++) {
        OWNED(q, lo, hi)
        sd[q] = (size_t)lo * sizeof *len;
        sc[q] = (size_t)(hi - lo) * sizeof *len;
    }
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)len, sc, sd, &lens, rc));
    for (int q = 0; q < P; q++) {
        OWNED(q, lo, hi)
        sd[q] = (size_t)part->rowptr[lo] * sizeof *part->col;
        sc[q] = (size_t)(part->rowptr[hi] - part->rowptr[lo]) * sizeof *part->col;
    }
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)part->col, sc, sd, &cols, rc));
    for (int q = 0; q < P; q++) {
        OWNED(q, lo, hi)
        sd[q] = (size_t)part->rowptr[lo] * sizeof *part->val;
        sc[q] = (size_t)(part->rowptr[hi] - part->rowptr[lo]) * sizeof *part->val;
    }
#undef OWNED
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)part->val, sc, sd, &vals, rc));
    DSMM_TRY(adopt_rows(ctx, lens, nrows, &cols, &vals, next));
cleanup:
    dsmmi_free(ctx, sc);
    dsmmi_free(ctx, sd);
    dsmmi_free(ctx, rc);
    dsmmi_free(ctx, ob);
    dsmmi_free(ctx, len);
    dsmmi_free(ctx, lens);
    dsmmi_free(ctx, cols);
    dsmmi_free(ctx, vals);
    if (st != DSMM_OK) dsmmi_mcl_mat_free(ctx, next);
    return st;
}

// Bytes the fused or replicated expansion holds on a rank: the whole iterate when replicated,
// the rank's rows and the next iterate's (half as much again for growth), and each thread's
// panel accumulator and scratch.
static double fused_need(dsmm_ctx *ctx, int64_t nnz_all, int64_t nnz_rows, dsmm_idx N,
                         int replicated)
{
    return (replicated ? 12.0 * (double)nnz_all + 8.0 * (double)N : 0.0) +
           2.0 * 12.0 * (double)nnz_rows * 1.5 +
           (double)dsmmi_threads(ctx) * (13.0 + 8.0 * DSMMI_MCL_PANEL) * (double)N;
}

// AUTO on several ranks: whether this iteration replicates. Its working set must fit the
// per-rank budget, or without one the rank's share of the memory left on its node (the
// context's budget is the machine's memory; ranks sharing a node share it). The same answer
// on every rank.
static dsmm_status replicate_fits(dsmm_ctx *ctx, const dsmm_mcl_params *p, int64_t nnz_all,
                                  const dsmmi_mcl_mat *M, dsmm_idx N, int *yes)
{
    dsmm_status st = DSMM_OK;
    int P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx), on_node = 0;
    for (int r = 0; r < P; r++)
        on_node += dsmm_ctx_workgroup(ctx, r) == dsmm_ctx_workgroup(ctx, me);
    double limit = (double)p->per_process_mem;
    if (p->per_process_mem == 0) {
        size_t budget = dsmm_ctx_mem_budget(ctx), used = dsmm_ctx_mem_in_use(ctx);
        limit = budget == 0 ? INFINITY
                            : (double)(budget > used ? budget - used : 0) / (on_node ? on_node : 1);
    }
    int64_t ok = fused_need(ctx, nnz_all, M->nnz, N, 1) <= limit;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &ok, 1, '<'));
    *yes = ok != 0;
cleanup:
    return st;
}

// ------------------------------------------------------------------------------------------
// The driver.
// ------------------------------------------------------------------------------------------

// The graph's pattern (local rows from row0: entries of nonzero weight, loops dropped), kept
// for --force-connected / --check-connected.
typedef struct pattern {
    dsmm_idx nrows, row0, *rowptr;
    int32_t *col;
} pattern;

static dsmm_status pattern_of(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx row0, pattern *g)
{
    dsmm_status st = DSMM_OK;
    g->nrows = M->nrows;
    g->row0 = row0;
    g->rowptr = dsmmi_malloc(ctx, (size_t)M->nrows + 1, sizeof *g->rowptr);
    g->col = dsmmi_malloc(ctx, (size_t)(M->nnz > 0 ? M->nnz : 1), sizeof *g->col);
    DSMM_CHECK(ctx, g->rowptr && g->col, DSMM_ERR_NOMEM, "mcl: the graph's pattern (%lld entries)",
               (long long)M->nnz);
    dsmm_idx q = 0;
    g->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++)
            if (M->val[k] != 0.0f && M->col[k] != row0 + i) g->col[q++] = M->col[k];
        g->rowptr[i + 1] = q;
    }
cleanup:
    return st;
}

static void pattern_free(dsmm_ctx *ctx, pattern *g)
{
    dsmmi_free(ctx, g->rowptr);
    dsmmi_free(ctx, g->col);
    memset(g, 0, sizeof *g);
}

// A copy of M's rows (mcl --analyze keeps the start matrix until the clustering is known).
static dsmm_status mat_copy(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmmi_mcl_mat *out)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, out, M->nrows, M->nnz));
    memcpy(out->rowptr, M->rowptr, ((size_t)M->nrows + 1) * sizeof *M->rowptr);
    if (M->nnz > 0) {
        memcpy(out->col, M->col, (size_t)M->nnz * sizeof *M->col);
        memcpy(out->val, M->val, (size_t)M->nnz * sizeof *M->val);
    }
    out->nnz = M->nnz;
cleanup:
    return st;
}

// res->analysis: clm info's measures of res's clustering on the start matrix S (this rank's
// rows from row0; a row of S is a column of mcl's matrix, so its sums are mcl's column sums),
// loops as stored, the sums added over the ranks. Collective.
static dsmm_status analyze(dsmm_ctx *ctx, const dsmmi_mcl_mat *S, dsmm_idx row0, dsmm_idx N,
                           dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_idx k = res->nclusters, *size = NULL, *vstart = NULL, *vcl = NULL;
    double *sums = NULL;
    // The clusters as written (with KEEP, a vertex in every cluster it reaches)
    local = dsmmi_clm_memberships(ctx, res->n, k, res->start, res->members, &vstart, &vcl, &size);
    if (local == DSMM_OK) {
        sums = dsmmi_calloc(ctx, 3 + 2 * (size_t)k, sizeof *sums);
        if (sums == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "mcl --analyze: %lld clusters", (long long)k);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    {
        dsmm_csr view = {0};
        view.nrows = S->nrows;
        view.ncols = N;
        view.nnz = view.cap = S->nnz;
        view.rowptr = S->rowptr;
        view.colidx32 = S->col;
        view.val = S->val;
        view.type = DSMM_FLOAT;
        view.ctx = ctx;
        dsmmi_clm_sums cs = {0};
        cs.win = sums + 3;
        cs.deg = sums + 3 + k;
        dsmmi_clm_info_rows(&view, row0, vstart, vcl, res->n, size, 1, &cs);
        sums[0] = cs.eff;
        sums[1] = cs.mf;
        sums[2] = cs.total;
    }
    DSMM_CHECK(ctx, 3 + 2 * k <= INT32_MAX, DSMM_ERR_DIM, "mcl --analyze: %lld clusters",
               (long long)k);
    DSMM_TRY(dsmmi_allreduce_f64(ctx, sums, (int)(3 + 2 * k), '+'));
    {
        dsmmi_clm_sums cs = {sums[0], sums[1], sums[2], sums + 3, sums + 3 + k};
        DSMM_TRY(
            dsmmi_comm_agree(ctx, dsmmi_clm_info_finish(ctx, N, k, size, &cs, &res->analysis)));
    }
    res->analyzed = 1;
cleanup:
    dsmmi_free(ctx, size);
    dsmmi_free(ctx, vstart);
    dsmmi_free(ctx, vcl);
    dsmmi_free(ctx, sums);
    return st;
}

// own: G itself, destroyed as soon as the iterate is built (dsmm_mcl_run_consume), or NULL.
static dsmm_status run_body(dsmm_ctx *ctx, const dsmm_dist *G, dsmm_dist **own,
                            const dsmm_mcl_params *p, dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mcl_mat M = {0}, next = {0};
    dsmmi_mcl_rules rules;
    dsmm_idx row0 = 0, N;
    dsmm_mcl_iter *iters = NULL;
    int cap = 0, nit = 0;
    double t0 = dsmmi_wtime();
    int P = dsmm_ctx_size(ctx);
    dsmmi_mcl_loop loop = {0};
    int32_t *newof = NULL, *orig = NULL;
    pattern gp = {0};
    dsmmi_mcl_mat start = {0}; // --analyze: the start matrix (this rank's rows from start0)
    dsmm_idx start0 = 0;

    DSMM_CHECK(ctx, res != NULL, DSMM_ERR_ARG, "mcl: res must be non-NULL");
    memset(res, 0, sizeof *res);
    DSMM_CHECK(ctx, p != NULL && dsmmi_dist_ok(ctx, G), DSMM_ERR_ARG,
               "mcl: G must be a distributed matrix of this context and p non-NULL");
    DSMM_CHECK(ctx, G->nrows == G->ncols, DSMM_ERR_DIM, "mcl: the graph is %lld x %lld, not square",
               (long long)G->nrows, (long long)G->ncols);
    N = G->nrows;
    DSMM_CHECK(ctx, N <= INT32_MAX, DSMM_ERR_DIM,
               "mcl: %lld vertices; mcl's index limit is 2147483647", (long long)N);
    DSMM_CHECK(ctx, N > 0, DSMM_ERR_ARG, "mcl: the graph has no vertices");
    DSMM_CHECK(ctx, p->inflation > 0.0 && p->inflation <= 30.0, DSMM_ERR_ARG,
               "mcl: inflation %g is not in (0, 30]", p->inflation);
    DSMM_CHECK(ctx, p->init_inflation >= 0.1 && p->init_inflation <= 30.0, DSMM_ERR_ARG,
               "mcl: initial inflation %g is not in [0.1, 30]", p->init_inflation);
    DSMM_CHECK(ctx, p->init_loop >= 0 && p->main_loop >= 0, DSMM_ERR_ARG,
               "mcl: loop lengths must be >= 0");
    DSMM_CHECK(ctx, p->estimate_keys == -1 || p->estimate_keys == 0 || p->estimate_keys >= 3,
               DSMM_ERR_ARG,
               "mcl: estimate_keys %d: -1 (auto), 0 (exact count) or at least 3 Cohen keys",
               p->estimate_keys);
    DSMM_CHECK(ctx, (int)p->expand >= DSMM_MCL_AUTO && p->expand <= DSMM_MCL_REPLICATED,
               DSMM_ERR_ARG, "mcl: unknown expansion %d", (int)p->expand);
    DSMM_CHECK(ctx, p->expand != DSMM_MCL_FUSED || P == 1, DSMM_ERR_ARG,
               "mcl: the fused expansion needs the whole iterate on one rank (%d ranks); use "
               "the replicated or the distributed expansion",
               P);
    DSMM_CHECK(ctx, (int)p->overlap >= DSMM_MCL_OVERLAP_CUT && p->overlap <= DSMM_MCL_OVERLAP_SPLIT,
               DSMM_ERR_ARG, "mcl: unknown overlap mode %d", (int)p->overlap);
    DSMM_CHECK(ctx, (int)p->sort >= DSMM_MCL_SORT_REVSIZE && p->sort <= DSMM_MCL_SORT_NONE,
               DSMM_ERR_ARG, "mcl: unknown sort mode %d", (int)p->sort);
    DSMM_TRY(dsmmi_mcl_rules_from(ctx, p, &rules));
    int connect = p->force_connected || p->check_connected;
    int fused = p->expand == DSMM_MCL_FUSED || (p->expand == DSMM_MCL_AUTO && P == 1);

    loop.inflation_main = (double)(float)p->inflation;
    if (p->resume_dir != NULL || p->checkpoint_dir != NULL)
        DSMM_TRY(dsmmi_mcl_graph_fp(ctx, G, &loop.graph_fp));
    if (p->resume_dir != NULL) {
        if (connect) { // the graph as the first run clustered it
            dsmm_idx g0 = 0;
            st = load_rows(ctx, G, p, &M, &g0);
            if (st == DSMM_OK) st = pattern_of(ctx, &M, g0, &gp);
            dsmmi_mcl_mat_free(ctx, &M);
            DSMM_TRY(dsmmi_comm_agree(ctx, st));
        }
        if (p->analyze) { // the start matrix again, from the graph (as mcl re-reads it)
            dsmm_idx g0 = 0;
            st = load_rows(ctx, G, p, &start, &g0);
            if (st == DSMM_OK) st = preprocess(ctx, p, &start, g0);
            start0 = g0;
            DSMM_TRY(dsmmi_comm_agree(ctx, st));
        }
        DSMM_TRY(dsmmi_mcl_checkpoint_read(ctx, p, N, &M, &row0, &loop));
    } else {
        DSMM_TRY(load_rows(ctx, G, p, &M, &row0));
        if (connect) DSMM_TRY(dsmmi_comm_agree(ctx, pattern_of(ctx, &M, row0, &gp)));
        DSMM_TRY(preprocess(ctx, p, &M, row0));
        start0 = row0;
        if (p->analyze) DSMM_TRY(dsmmi_comm_agree(ctx, mat_copy(ctx, &M, &start)));
    }
    if (own != NULL) dsmm_dist_destroy(own); // the input's memory is not part of the peak
    G = NULL;
    // One rank without checkpoints: rows stored in breadth-first order for locality.
    if (fused && p->checkpoint_dir == NULL) DSMM_TRY(dsmmi_mcl_relabel(ctx, &M, &newof, &orig));
    int64_t nnz0 = M.nnz;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &nnz0, 1, '+'));

    for (;;) {
        int init = loop.n_ite < p->init_loop;
        if (!init && loop.main_done >= p->main_loop) break;
        double power = init ? (double)(float)p->init_inflation : loop.inflation_main;
        dsmmi_mcl_iter_stats s;
        dsmm_mcl_iter it = {0};
        it.cpu_idle_seconds = it.gpu_idle_seconds = -1; // not measured (yet)
        it.comp_seconds = it.comm_seconds = it.acc_seconds = it.wait_seconds = -1;
        it.gpu_products = -1;
        it.estimate_keys = -1; // set by the distributed expansion
        double ti = dsmmi_wtime();
        int64_t nnz_in = M.nnz;
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &nnz_in, 1, '+'));
        int repl = 0;
        if (!fused && p->expand == DSMM_MCL_REPLICATED) repl = 1;
        // Forced phases and the pipeline are the distributed expansion's.
        if (!fused && p->expand == DSMM_MCL_AUTO && p->phases == 0 && !p->dist.pipeline)
            DSMM_TRY(replicate_fits(ctx, p, nnz_in, &M, N, &repl));
        if (fused || repl) {
            // The fused expansion holds two iterates (replicated: and the whole one) and each
            // thread's accumulator; its unit is one column, so no phases: the budget either
            // fits or is too small.
            int64_t rows_max = M.nnz;
            DSMM_TRY(dsmmi_allreduce_i64(ctx, &rows_max, 1, '>'));
            double need = fused_need(ctx, nnz_in, fused ? nnz_in : rows_max, N, repl);
            DSMM_CHECK(ctx, p->per_process_mem == 0 || need <= (double)p->per_process_mem,
                       DSMM_ERR_NOMEM,
                       "mcl: --per-process-mem %zu bytes is too small: iterating needs about %.0f",
                       p->per_process_mem, need);
            if (repl) {
                // Each rank expands a range of equal work against the whole iterate W, then
                // sends the pruned rows to their owners.
                dsmmi_mcl_mat W = {0}, part = {0};
                dsmm_idx b0 = 0, b1 = 0;
                DSMM_TRY(gather_all(ctx, &M, N, &W));
                st = work_split(ctx, &W, &b0, &b1);
                if (st == DSMM_OK) {
                    dsmmi_mcl_mat V = W; // a view of W's rows [b0, b1)
                    V.nrows = b1 - b0;
                    V.rowptr = W.rowptr + b0;
                    V.nnz = W.rowptr[b1] - W.rowptr[b0];
                    st = dsmmi_mcl_iterate_local(ctx, &V, b0, N, &W, 0, &rules, power, &part, &s);
                }
                dsmmi_mcl_mat_free(ctx, &W);
                st = dsmmi_comm_agree(ctx, st);
                if (st == DSMM_OK) st = to_owners(ctx, &part, b0, M.nrows, N, &next);
                dsmmi_mcl_mat_free(ctx, &part);
                DSMM_TRY(st);
            } else {
                DSMM_TRY(
                    dsmmi_mcl_iterate_local(ctx, &M, row0, N, &M, 0, &rules, power, &next, &s));
            }
            it.phases = 1;
            it.expand = fused ? DSMM_MCL_FUSED : DSMM_MCL_REPLICATED;
            it.flops = s.flops;
            DSMM_TRY(dsmmi_allreduce_f64(ctx, &it.flops, 1, '+'));
        } else {
            it.expand = DSMM_MCL_DIST;
            DSMM_TRY(dsmmi_mcl_iterate_dist(ctx, p, &M, row0, N, &rules, power, &next, &s, &it));
        }
        dsmmi_mcl_mat_free(ctx, &M);
        dsmmi_cache_drop(ctx); // the old iterate goes back to the system, not to the block cache
        M = next;
        M.newof = newof;
        M.orig = orig;
        next = (dsmmi_mcl_mat){0};
        int64_t cnt[3] = {s.nnz_expand, s.nnz_pruned, s.dense_cols};
        double chaos = s.chaos;
        DSMM_TRY(dsmmi_allreduce_i64(ctx, cnt, 3, '+'));
        DSMM_TRY(dsmmi_allreduce_f64(ctx, &chaos, 1, '>'));
        loop.n_ite++;
        if (!init) {
            loop.main_done++;
            if (loop.n_ite >= 40) loop.inflation_main *= 1.001;
        }
        it.iteration = loop.n_ite;
        it.inflation = power;
        it.chaos = chaos;
        it.nnz_in = nnz_in;
        it.nnz_expand = cnt[0];
        it.nnz_pruned = cnt[1];
        it.dense_cols = cnt[2];
        it.seconds = dsmmi_wtime() - ti;
        int64_t peak = (int64_t)dsmm_ctx_mem_peak(ctx);
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &peak, 1, '>'));
        it.peak_bytes = peak;
        if (nit == cap) {
            int nc = cap ? 2 * cap : 64;
            dsmm_mcl_iter *ni = dsmmi_realloc(NULL, iters, (size_t)nc, sizeof *ni);
            DSMM_CHECK(ctx, ni != NULL, DSMM_ERR_NOMEM, "mcl: iteration records");
            iters = ni;
            cap = nc;
        }
        iters[nit++] = it;
        if (p->progress != NULL && dsmm_ctx_rank(ctx) == 0) p->progress(p->progress_user, &it);
        if (p->checkpoint_dir != NULL)
            DSMM_TRY(dsmmi_mcl_checkpoint_write(ctx, p, N, &M, row0, &loop));
        if (!init && chaos < 1e-4) {
            loop.converged = 1;
            break;
        }
    }

    DSMM_TRY(dsmmi_mcl_unlabel(ctx, &M));
    DSMM_TRY(dsmmi_mcl_interpret(ctx, &M, row0, N, p->overlap, p->sort, res));
    dsmmi_mcl_mat_free(ctx, &M);
    if (connect)
        DSMM_TRY(
            dsmmi_mcl_connect(ctx, gp.rowptr, gp.col, gp.nrows, gp.row0, p->force_connected, res));
    // (the clustering as written: after a split, as mcl analyses it)
    if (p->analyze) DSMM_TRY(analyze(ctx, &start, start0, N, res));
    res->iterations = loop.n_ite;
    res->converged = loop.converged;
    res->iters = iters;
    res->niters = nit;
    iters = NULL;
    res->seconds = dsmmi_wtime() - t0;
cleanup:
    dsmmi_mcl_mat_free(ctx, &M);
    dsmmi_mcl_mat_free(ctx, &next);
    dsmmi_free(ctx, newof);
    dsmmi_free(ctx, orig);
    pattern_free(ctx, &gp);
    dsmmi_mcl_mat_free(ctx, &start);
    dsmmi_free(NULL, iters);
    if (st != DSMM_OK && res != NULL) dsmm_mcl_result_free(res);
    if (own != NULL) dsmm_dist_destroy(own);
    return st;
}

// MCL keeps only big freed blocks: smaller kept ones (from reading the graph too) added up to
// 35 MB to the peak RSS (pe_combined 105 -> 140 MB, mcl's own 109 MB), and the peak is what
// mcl users compare.
static dsmm_status run(dsmm_ctx *ctx, const dsmm_dist *G, dsmm_dist **own, const dsmm_mcl_params *p,
                       dsmm_mcl_result *res)
{
    dsmm_ctx *c = dsmmi_ctx_ok(ctx) ? ctx : NULL;
    size_t keep = dsmmi_cache_min(c, DSMMI_CACHE_BIG);
    dsmmi_cache_drop(c); // blocks kept from reading the graph
    dsmm_status st = run_body(ctx, G, own, p, res);
    (void)dsmmi_cache_min(c, keep);
    return st;
}

dsmm_status dsmm_mcl_run(dsmm_ctx *ctx, const dsmm_dist *G, const dsmm_mcl_params *p,
                         dsmm_mcl_result *res)
{
    return run(ctx, G, NULL, p, res);
}

dsmm_status dsmm_mcl_run_consume(dsmm_ctx *ctx, dsmm_dist **G, const dsmm_mcl_params *p,
                                 dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    if (res != NULL) memset(res, 0, sizeof *res);
    DSMM_CHECK(ctx, G != NULL, DSMM_ERR_ARG, "mcl: G must be non-NULL");
    st = run(ctx, *G, G, p, res);
cleanup:
    return st;
}
