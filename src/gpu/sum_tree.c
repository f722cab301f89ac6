// src/gpu/sum_tree.c: when the resident accumulator (resident.cu) merges the products it holds.
// The products of one C tile arrive in slots (SUMMA's stages, or a one-sided algorithm's
// items of the tile, in whatever order its gets and steals deliver them). The slots are the
// leaves of a fixed binary tree: leaf s is node [s, s+1) of level 0; node k of level l covers
// [k 2^l, (k+1) 2^l) cut at the slot count. A node is complete when every slot under it is
// filled or skipped; two complete siblings become their parent at once, and their sums are
// merged when both hold one. In stage order this is HipMCL-GPU §IV's binary schedule (about
// log2(slots) sums held); in any order each merge adds the same two sums, so the result does
// not depend on the order of arrival, to the bit, as the CPU's stage-order merge does not.
// Plain C: tested on the CPU.
#include <string.h>

#include "gpu/gpu.h"

dsmm_status dsmmi_sum_tree_init(dsmm_ctx *ctx, dsmmi_sum_tree *t, int nslots)
{
    dsmm_status st = DSMM_OK;
    memset(t, 0, sizeof *t);
    DSMM_CHECK(ctx, nslots >= 0, DSMM_ERR_ARG, "sum tree: %d slots", nslots);
    size_t n = nslots ? (size_t)nslots : 1;
    t->level = dsmmi_malloc(ctx, n, sizeof *t->level);
    t->at = dsmmi_malloc(ctx, n, sizeof *t->at);
    t->has = dsmmi_calloc(ctx, n, 1);
    t->filled = dsmmi_calloc(ctx, n, 1);
    DSMM_CHECK(ctx, t->level && t->at && t->has && t->filled, DSMM_ERR_NOMEM,
               "sum tree of %d slots", nslots);
    for (int s = 0; s < nslots; s++) t->level[s] = -1;
    t->n = nslots;
cleanup:
    if (st != DSMM_OK) dsmmi_sum_tree_free(ctx, t);
    return st;
}

void dsmmi_sum_tree_free(dsmm_ctx *ctx, dsmmi_sum_tree *t)
{
    dsmmi_free(ctx, t->level);
    dsmmi_free(ctx, t->at);
    dsmmi_free(ctx, t->has);
    dsmmi_free(ctx, t->filled);
    memset(t, 0, sizeof *t);
}

dsmm_status dsmmi_sum_tree_put(dsmm_ctx *ctx, dsmmi_sum_tree *t, int slot, int has, int pairs[][2],
                               int *npairs)
{
    dsmm_status st = DSMM_OK;
    *npairs = 0;
    DSMM_CHECK(ctx, slot >= 0 && slot < t->n, DSMM_ERR_INTERNAL, "sum tree: slot %d of %d", slot,
               t->n);
    DSMM_CHECK(ctx, !t->filled[slot], DSMM_ERR_INTERNAL, "sum tree: slot %d filled twice", slot);
    t->filled[slot] = 1;
    int lo = slot, l = 0;
    t->level[lo] = 0;
    t->has[lo] = has != 0;
    t->at[lo] = slot;
    // Climb while this node's sibling is complete (a node with no sibling climbs alone).
    while (!(lo == 0 && ((int64_t)1 << l) >= t->n)) {
        int64_t size = (int64_t)1 << l;
        int left = lo, right;
        if (((lo >> l) & 1) == 0) {
            if (lo + size >= t->n) { // no right sibling: the parent is this node
                t->level[lo] = ++l;
                continue;
            }
            right = (int)(lo + size);
        } else {
            left = (int)(lo - size);
            right = lo;
        }
        if (t->level[left] != l || t->level[right] != l) break; // the sibling is not complete
        if (t->has[left] && t->has[right]) {
            pairs[*npairs][0] = t->at[left];
            pairs[*npairs][1] = t->at[right];
            ++*npairs;
        } else if (t->has[right]) {
            t->at[left] = t->at[right]; // one sum: it stays where it is
        }
        t->has[left] = t->has[left] || t->has[right];
        t->has[right] = 0;
        t->level[right] = -1;
        t->level[left] = ++l;
        lo = left;
    }
cleanup:
    return st;
}

int dsmmi_sum_tree_held(const dsmmi_sum_tree *t, int *first)
{
    int k = 0;
    for (int s = 0; s < t->n; s++)
        if (t->level[s] >= 0 && t->has[s]) first[k++] = t->at[s];
    return k;
}
