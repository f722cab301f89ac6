// src/io/gen_planted.c: the planted-partition generator (stochastic block model): n vertices
// in nblocks contiguous blocks of equal size (the first n % nblocks one larger); (i, j) is an
// edge with probability p_in inside a block and p_out across. Row i draws from stream i and
// skips geometrically over three column ranges (before, inside, after its block), so a row
// costs O(1 + its entries) whatever nblocks is.
#include <math.h>

#include "io/gen.h"

typedef struct planted_data {
    uint64_t seed;
    dsmm_idx n, nblocks, base, extra; // blocks < extra have base + 1 vertices
    double lq_in, lq_out;
    int symmetric, self_loops, vals;
} planted_data;

static dsmm_idx block_start(const planted_data *d, dsmm_idx b)
{
    return b * d->base + (b < d->extra ? b : d->extra);
}

static dsmm_idx block_of(const planted_data *d, dsmm_idx i)
{
    dsmm_idx big = d->extra * (d->base + 1);
    if (i < big) return i / (d->base + 1);
    return d->extra + (i - big) / d->base; // base > 0 here, else every vertex is below big
}

static double lq_of(double p)
{
    return p >= 1.0 ? -INFINITY : log1p(-p);
}

static dsmm_idx planted_row(const void *data, dsmm_idx i, dsmm_idx *cols, double *vals)
{
    const planted_data *d = data;
    dsmm_rng r;
    dsmm_idx len = 0;
    dsmm_idx b = block_of(d, i);
    dsmm_idx lo = block_start(d, b), hi = block_start(d, b + 1);
    dsmm_idx end = d->symmetric ? i + 1 : d->n;
    dsmm_idx skip = d->self_loops ? -1 : i;
    dsmm_rng_init(&r, d->seed, (uint64_t)i);
    dsmmi_gen_bernoulli(&r, 0, lo < end ? lo : end, d->lq_out, skip, d->vals, cols, vals, &len);
    dsmmi_gen_bernoulli(&r, lo, hi < end ? hi : end, d->lq_in, skip, d->vals, cols, vals, &len);
    dsmmi_gen_bernoulli(&r, hi, end, d->lq_out, skip, d->vals, cols, vals, &len);
    return len;
}

dsmm_status dsmm_gen_planted(dsmm_ctx *ctx, const dsmm_gen_params *p, dsmm_csr **A,
                             dsmm_idx **truth)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *t = NULL;
    if (A) *A = NULL;
    if (truth) *truth = NULL;
    DSMM_CHECK(ctx, p != NULL && A != NULL, DSMM_ERR_ARG, "gen_planted: p and A must be non-NULL");
    DSMM_TRY(dsmmi_gen_check_type(ctx, p));
    DSMM_CHECK(ctx, p->n >= 0, DSMM_ERR_ARG, "gen_planted: n = %lld < 0", (long long)p->n);
    DSMM_CHECK(ctx, p->nblocks >= 1, DSMM_ERR_ARG, "gen_planted: nblocks = %d < 1", p->nblocks);
    DSMM_CHECK(ctx, p->p_in >= 0 && p->p_in <= 1 && p->p_out >= 0 && p->p_out <= 1, DSMM_ERR_ARG,
               "gen_planted: p_in = %g and p_out = %g must be in [0, 1]", p->p_in, p->p_out);
    planted_data d = {.seed = p->seed,
                      .n = p->n,
                      .nblocks = p->nblocks,
                      .base = p->n / p->nblocks,
                      .extra = p->n % p->nblocks,
                      .lq_in = lq_of(p->p_in),
                      .lq_out = lq_of(p->p_out),
                      .symmetric = p->symmetric != 0,
                      .self_loops = p->self_loops != 0,
                      .vals = p->type != DSMM_PATTERN};
    if (truth) {
        t = dsmmi_malloc(ctx, p->n > 0 ? (size_t)p->n : 1, sizeof *t);
        DSMM_CHECK(ctx, t != NULL, DSMM_ERR_NOMEM, "gen_planted: %lld labels", (long long)p->n);
        for (dsmm_idx i = 0; i < p->n; i++) t[i] = block_of(&d, i);
    }
    DSMM_TRY(dsmmi_gen_rows(ctx, p->n, p->type, d.symmetric, planted_row, &d, A));
    if (truth) {
        *truth = t;
        t = NULL;
    }
cleanup:
    dsmmi_free(ctx, t);
    return st;
}
