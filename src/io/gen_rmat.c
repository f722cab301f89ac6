// src/io/gen_rmat.c: the R-MAT generator (Chakrabarti et al. 2004; Graph500 parameters): each
// edge descends `scale` levels, choosing quadrant a (top left), b (top right), c (bottom left)
// or d (bottom right) at each. Edges come in blocks of RMAT_BLOCK, block k drawing from random
// stream k and writing to fixed positions, so the triples, and the matrix, are the same for
// every thread count. Duplicates merge (pattern) or their values add (DSMM_DUP_SUM), so a
// value is k times the pair's value for an edge drawn k times.
#include <math.h>

#include "io/gen.h"

#define RMAT_BLOCK 4096

// The value of edge {i, j}, in (0, 1]: a function of the unordered pair, so an edge, its
// mirror and its duplicates all carry the same value, and their sums do not depend on the
// order of addition (A stays exactly symmetric). Its key differs from the edge streams'.
static double pair_value(uint64_t seed, dsmm_idx i, dsmm_idx j)
{
    uint64_t lo = (uint64_t)(i < j ? i : j), hi = (uint64_t)(i < j ? j : i);
    uint64_t bits = dsmm_rng_at(seed ^ 0x9e3779b97f4a7c15ULL, lo, hi);
    return 1.0 - (double)(bits >> 11) * 0x1.0p-53;
}

dsmm_status dsmm_gen_rmat(dsmm_ctx *ctx, const dsmm_gen_params *p, dsmm_csr **A)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *row = NULL, *col = NULL;
    double *val = NULL;
    if (A) *A = NULL;
    DSMM_CHECK(ctx, p != NULL && A != NULL, DSMM_ERR_ARG, "gen_rmat: p and A must be non-NULL");
    DSMM_TRY(dsmmi_gen_check_type(ctx, p));
    DSMM_CHECK(ctx, p->scale >= 0 && p->scale <= 40, DSMM_ERR_ARG,
               "gen_rmat: scale %d outside 0..40", p->scale);
    DSMM_CHECK(ctx,
               p->a >= 0 && p->b >= 0 && p->c >= 0 && p->d >= 0 &&
                   fabs(p->a + p->b + p->c + p->d - 1.0) <= 1e-9,
               DSMM_ERR_ARG, "gen_rmat: a, b, c, d = %g, %g, %g, %g must be >= 0 and sum to 1",
               p->a, p->b, p->c, p->d);
    dsmm_idx n = (dsmm_idx)1 << p->scale;
    double medges = p->edge_factor * (double)n;
    DSMM_CHECK(ctx, isfinite(p->edge_factor) && p->edge_factor >= 0 && medges < 0x1p50,
               DSMM_ERR_ARG, "gen_rmat: edge_factor %g gives too many edges for scale %d",
               p->edge_factor, p->scale);
    dsmm_idx m = (dsmm_idx)llround(medges);
    int sym = p->symmetric != 0, loops = p->self_loops != 0, vals = p->type != DSMM_PATTERN;
    size_t cap = (size_t)m * (sym ? 2 : 1);
    row = dsmmi_malloc(ctx, cap ? cap : 1, sizeof *row);
    col = dsmmi_malloc(ctx, cap ? cap : 1, sizeof *col);
    DSMM_CHECK(ctx, row != NULL && col != NULL, DSMM_ERR_NOMEM, "gen_rmat: %zu edges", cap);
    if (vals) {
        val = dsmmi_malloc(ctx, cap ? cap : 1, sizeof *val);
        DSMM_CHECK(ctx, val != NULL, DSMM_ERR_NOMEM, "gen_rmat: %zu edge values", cap);
    }
    double ab = p->a + p->b, abc = p->a + p->b + p->c;
    dsmm_idx nblk = (m + RMAT_BLOCK - 1) / RMAT_BLOCK;
    int nt = dsmmi_threads(ctx);
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
#endif
    for (dsmm_idx blk = 0; blk < nblk; blk++) {
        dsmm_rng r;
        dsmm_rng_init(&r, p->seed, (uint64_t)blk);
        dsmm_idx e1 = (blk + 1) * RMAT_BLOCK < m ? (blk + 1) * RMAT_BLOCK : m;
        for (dsmm_idx e = blk * RMAT_BLOCK; e < e1; e++) {
            dsmm_idx i = 0, j = 0;
            for (int l = 0; l < p->scale; l++) {
                double u = dsmm_rng_uniform(&r);
                i <<= 1;
                j <<= 1;
                if (u < p->a) {
                } else if (u < ab) {
                    j |= 1;
                } else if (u < abc) {
                    i |= 1;
                } else {
                    i |= 1;
                    j |= 1;
                }
            }
            double v = vals ? pair_value(p->seed, i, j) : 1.0;
            int drop = i == j && !loops;
            row[e] = drop ? -1 : i;
            col[e] = j;
            if (vals) val[e] = v;
            if (sym) {
                // A diagonal edge is its own mirror: adding it twice would double its value.
                row[m + e] = drop || i == j ? -1 : j;
                col[m + e] = i;
                if (vals) val[m + e] = v;
            }
        }
    }
    size_t kept = 0;
    for (size_t k = 0; k < cap; k++) {
        if (row[k] < 0) continue;
        row[kept] = row[k];
        col[kept] = col[k];
        if (vals) val[kept] = val[k];
        kept++;
    }
    dsmm_coo T = {.nrows = n,
                  .ncols = n,
                  .nnz = (dsmm_idx)kept,
                  .cap = (dsmm_idx)cap,
                  .row = row,
                  .col = col,
                  .val = val,
                  .type = p->type,
                  .ctx = ctx};
    dsmm_idx di = -1, dj = -1;
    DSMM_TRY(dsmmi_coo_to_csr(ctx, &T, DSMM_DUP_SUM, p->type, A, &di, &dj));
cleanup:
    dsmmi_free(ctx, row);
    dsmmi_free(ctx, col);
    dsmmi_free(ctx, val);
    return st;
}
