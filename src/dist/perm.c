// src/dist/perm.c: random permutations for load balance (the same on every rank from a seed,
// CombBLAS's random symmetric permutation) and their inverses.
#include "dist/dist.h"

dsmm_status dsmm_perm_random(dsmm_ctx *ctx, dsmm_idx n, uint64_t seed, dsmm_idx **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *p = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL && n >= 0, DSMM_ERR_ARG, "perm_random: out NULL or n < 0");
    *out = NULL;
    p = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *p);
    DSMM_CHECK(ctx, p != NULL, DSMM_ERR_NOMEM, "permutation of %lld", (long long)n);
    for (dsmm_idx i = 0; i < n; i++) p[i] = i;
    // Fisher-Yates from a counter-based stream: the same permutation on every rank.
    dsmm_rng r;
    dsmm_rng_init(&r, seed, 0x7065726d); // stream "perm"
    for (dsmm_idx i = n - 1; i > 0; i--) {
        dsmm_idx j = (dsmm_idx)(dsmm_rng_u64(&r) % (uint64_t)(i + 1));
        dsmm_idx t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    *out = p;
    p = NULL;
cleanup:
    p = dsmmi_free(ctx, p);
    return st;
}

dsmm_status dsmm_perm_invert(dsmm_ctx *ctx, dsmm_idx n, const dsmm_idx *perm, dsmm_idx **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *inv = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL && n >= 0 && (perm != NULL || n == 0), DSMM_ERR_ARG,
               "perm_invert: out or perm NULL, or n < 0");
    *out = NULL;
    inv = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *inv);
    DSMM_CHECK(ctx, inv != NULL, DSMM_ERR_NOMEM, "permutation of %lld", (long long)n);
    for (dsmm_idx i = 0; i < n; i++) inv[i] = -1;
    for (dsmm_idx i = 0; i < n; i++) {
        DSMM_CHECK(ctx, perm[i] >= 0 && perm[i] < n && inv[perm[i]] < 0, DSMM_ERR_ARG,
                   "perm_invert: perm[%lld] = %lld: not a permutation of 0..%lld", (long long)i,
                   (long long)perm[i], (long long)n - 1);
        inv[perm[i]] = i;
    }
    *out = inv;
    inv = NULL;
cleanup:
    inv = dsmmi_free(ctx, inv);
    return st;
}
