// src/sparse/tiles.c: tiles and panels of a CSR: extract, row panels, column panels.
// Column panels follow the out-of-core SpGEMM paper (§III.D): a cursor per row remembers
// where the previous panel stopped, so all panels together read A once.
// Tiles and panels keep A's column width (32-bit columns stay 32-bit: a tile has no more
// columns than A).
#include <string.h>

#include "sparse/sparse.h"

void dsmmi_equal_split(dsmm_idx len, int n, dsmm_idx *bounds)
{
    dsmm_idx base = len / n, extra = len % n;
    bounds[0] = 0;
    for (int p = 0; p < n; p++) bounds[p + 1] = bounds[p] + base + (p < extra ? 1 : 0);
}

// Copies `bounds` (validated) or makes an equal split into b[0..npanels].
static dsmm_status panel_bounds(dsmm_ctx *ctx, const char *fn, dsmm_idx len, int npanels,
                                const dsmm_idx *bounds, dsmm_idx *b)
{
    dsmm_status st = DSMM_OK;
    if (bounds == NULL) {
        dsmmi_equal_split(len, npanels, b);
        goto cleanup;
    }
    DSMM_CHECK(ctx, bounds[0] == 0, DSMM_ERR_ARG, "%s: bounds[0] = %lld, not 0", fn,
               (long long)bounds[0]);
    for (int p = 0; p < npanels; p++)
        DSMM_CHECK(ctx, bounds[p] <= bounds[p + 1], DSMM_ERR_ARG,
                   "%s: bounds[%d] = %lld > bounds[%d] = %lld: bounds decrease", fn, p,
                   (long long)bounds[p], p + 1, (long long)bounds[p + 1]);
    DSMM_CHECK(ctx, bounds[npanels] == len, DSMM_ERR_ARG, "%s: bounds[%d] = %lld, not %lld", fn,
               npanels, (long long)bounds[npanels], (long long)len);
    memcpy(b, bounds, ((size_t)npanels + 1) * sizeof *b);
cleanup:
    return st;
}

// First position in [lo, hi) of A's sorted row data whose column is >= col.
static dsmm_idx lower_bound(const dsmm_csr *A, dsmm_idx lo, dsmm_idx hi, dsmm_idx col)
{
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (dsmm_csr_col(A, mid) < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// Entry k of B gets column c (B's width; c fits, being below B->ncols).
static inline void put_col(dsmm_csr *B, dsmm_idx k, dsmm_idx c)
{
    if (B->colidx32)
        B->colidx32[k] = (int32_t)c;
    else
        B->colidx[k] = c;
}

dsmm_status dsmm_csr_extract(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx r0, dsmm_idx r1,
                             dsmm_idx c0, dsmm_idx c1, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *B = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_extract: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_extract: A must be non-NULL");
    DSMM_CHECK(ctx, 0 <= r0 && r0 <= r1 && r1 <= A->nrows, DSMM_ERR_ARG,
               "csr_extract: rows %lld:%lld outside 0:%lld", (long long)r0, (long long)r1,
               (long long)A->nrows);
    DSMM_CHECK(ctx, 0 <= c0 && c0 <= c1 && c1 <= A->ncols, DSMM_ERR_ARG,
               "csr_extract: columns %lld:%lld outside 0:%lld", (long long)c0, (long long)c1,
               (long long)A->ncols);
    DSMM_TRY(dsmmi_csr_create_ex(ctx, r1 - r0, c1 - c0, 0, A->type, dsmmi_csr_col_bits(A), &B));
    bool all_cols = c0 == 0 && c1 == A->ncols;
    for (dsmm_idx i = r0; i < r1; i++) {
        dsmm_idx n = 0;
        if (all_cols) {
            n = A->rowptr[i + 1] - A->rowptr[i];
        } else if (A->sorted) {
            dsmm_idx s = lower_bound(A, A->rowptr[i], A->rowptr[i + 1], c0);
            n = lower_bound(A, s, A->rowptr[i + 1], c1) - s;
        } else {
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                dsmm_idx c = dsmm_csr_col(A, k);
                n += c >= c0 && c < c1;
            }
        }
        B->rowptr[i - r0 + 1] = B->rowptr[i - r0] + n;
    }
    dsmm_idx nnz = B->rowptr[r1 - r0];
    DSMM_TRY(dsmm_csr_reserve(B, nnz));
    size_t vs = dsmmi_type_size(A->type);
    for (dsmm_idx i = r0; i < r1; i++) {
        dsmm_idx o = B->rowptr[i - r0];
        dsmm_idx s = A->rowptr[i], e = A->rowptr[i + 1];
        if (A->sorted && !all_cols) s = lower_bound(A, s, e, c0);
        for (dsmm_idx k = s; k < e; k++) {
            dsmm_idx c = dsmm_csr_col(A, k);
            if (c < c0 || c >= c1) {
                if (A->sorted) break; // past c1: the rest of the row is too
                continue;
            }
            put_col(B, o, c - c0);
            if (vs)
                memcpy((char *)B->val + (size_t)o * vs, (const char *)A->val + (size_t)k * vs, vs);
            o++;
        }
    }
    B->nnz = nnz;
    B->sorted = A->sorted ? 1 : dsmmi_csr_rows_increasing(B);
    *out = B;
    B = NULL;
cleanup:
    dsmm_csr_destroy(&B);
    return st;
}

dsmm_status dsmm_csr_row_panels(dsmm_ctx *ctx, const dsmm_csr *A, int npanels,
                                const dsmm_idx *bounds, dsmm_csr ***panels)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr **P = NULL;
    dsmm_idx *b = NULL;

    DSMM_CHECK(ctx, panels != NULL, DSMM_ERR_ARG, "csr_row_panels: panels must be non-NULL");
    *panels = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_row_panels: A must be non-NULL");
    DSMM_CHECK(ctx, npanels >= 1, DSMM_ERR_ARG, "csr_row_panels: npanels = %d < 1", npanels);
    b = dsmmi_malloc(ctx, (size_t)npanels + 1, sizeof *b);
    DSMM_CHECK(ctx, b != NULL, DSMM_ERR_NOMEM, "csr_row_panels: %d bounds", npanels);
    DSMM_TRY(panel_bounds(ctx, "csr_row_panels", A->nrows, npanels, bounds, b));
    P = dsmmi_calloc(ctx, (size_t)npanels, sizeof *P);
    DSMM_CHECK(ctx, P != NULL, DSMM_ERR_NOMEM, "csr_row_panels: %d panels", npanels);
    size_t vs = dsmmi_type_size(A->type);
    for (int p = 0; p < npanels; p++) {
        dsmm_idx r0 = b[p], r1 = b[p + 1], s = A->rowptr[r0], n = A->rowptr[r1] - s;
        DSMM_TRY(
            dsmmi_csr_create_ex(ctx, r1 - r0, A->ncols, n, A->type, dsmmi_csr_col_bits(A), &P[p]));
        dsmm_csr *B = P[p];
        for (dsmm_idx i = r0; i <= r1; i++) B->rowptr[i - r0] = A->rowptr[i] - s;
        if (n > 0) {
            if (A->colidx32)
                memcpy(B->colidx32, A->colidx32 + s, (size_t)n * sizeof *B->colidx32);
            else
                memcpy(B->colidx, A->colidx + s, (size_t)n * sizeof *B->colidx);
            if (vs) memcpy(B->val, (const char *)A->val + (size_t)s * vs, (size_t)n * vs);
        }
        B->nnz = n;
        B->sorted = A->sorted;
    }
    *panels = P;
    P = NULL;
cleanup:
    dsmm_csr_panels_free(ctx, &P, npanels);
    b = dsmmi_free(ctx, b);
    return st;
}

dsmm_status dsmm_csr_col_panels(dsmm_ctx *ctx, const dsmm_csr *A, int npanels,
                                const dsmm_idx *bounds, dsmm_csr ***panels)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr **P = NULL;
    dsmm_idx *b = NULL, *cur = NULL, *nxt = NULL;

    DSMM_CHECK(ctx, panels != NULL, DSMM_ERR_ARG, "csr_col_panels: panels must be non-NULL");
    *panels = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_col_panels: A must be non-NULL");
    DSMM_CHECK(ctx, A->sorted, DSMM_ERR_ARG,
               "csr_col_panels: A must be sorted (dsmm_csr_sort_inplace)");
    DSMM_CHECK(ctx, npanels >= 1, DSMM_ERR_ARG, "csr_col_panels: npanels = %d < 1", npanels);
    b = dsmmi_malloc(ctx, (size_t)npanels + 1, sizeof *b);
    DSMM_CHECK(ctx, b != NULL, DSMM_ERR_NOMEM, "csr_col_panels: %d bounds", npanels);
    DSMM_TRY(panel_bounds(ctx, "csr_col_panels", A->ncols, npanels, bounds, b));
    cur = dsmmi_malloc(ctx, (size_t)A->nrows, sizeof *cur);
    nxt = dsmmi_malloc(ctx, (size_t)A->nrows, sizeof *nxt);
    DSMM_CHECK(ctx, cur != NULL && nxt != NULL, DSMM_ERR_NOMEM, "csr_col_panels: %lld cursors",
               (long long)A->nrows);
    P = dsmmi_calloc(ctx, (size_t)npanels, sizeof *P);
    DSMM_CHECK(ctx, P != NULL, DSMM_ERR_NOMEM, "csr_col_panels: %d panels", npanels);
    memcpy(cur, A->rowptr, (size_t)A->nrows * sizeof *cur);
    size_t vs = dsmmi_type_size(A->type);
    for (int p = 0; p < npanels; p++) {
        dsmm_idx lo = b[p], hi = b[p + 1];
        DSMM_TRY(
            dsmmi_csr_create_ex(ctx, A->nrows, hi - lo, 0, A->type, dsmmi_csr_col_bits(A), &P[p]));
        dsmm_csr *B = P[p];
        // cur[i] is the first entry of row i not in an earlier panel: its column is >= lo
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            dsmm_idx k = cur[i], e = A->rowptr[i + 1];
            while (k < e && dsmm_csr_col(A, k) < hi) k++;
            nxt[i] = k;
            B->rowptr[i + 1] = B->rowptr[i] + (k - cur[i]);
        }
        dsmm_idx nnz = B->rowptr[A->nrows];
        DSMM_TRY(dsmm_csr_reserve(B, nnz));
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            dsmm_idx o = B->rowptr[i], s = cur[i], n = nxt[i] - s;
            for (dsmm_idx k = 0; k < n; k++) put_col(B, o + k, dsmm_csr_col(A, s + k) - lo);
            if (vs && n > 0)
                memcpy((char *)B->val + (size_t)o * vs, (const char *)A->val + (size_t)s * vs,
                       (size_t)n * vs);
        }
        B->nnz = nnz;
        B->sorted = 1;
        dsmm_idx *t = cur;
        cur = nxt;
        nxt = t;
    }
    *panels = P;
    P = NULL;
cleanup:
    dsmm_csr_panels_free(ctx, &P, npanels);
    b = dsmmi_free(ctx, b);
    cur = dsmmi_free(ctx, cur);
    nxt = dsmmi_free(ctx, nxt);
    return st;
}

void dsmm_csr_panels_free(dsmm_ctx *ctx, dsmm_csr ***panels, int npanels)
{
    if (panels == NULL || *panels == NULL) return;
    for (int p = 0; p < npanels; p++) dsmm_csr_destroy(&(*panels)[p]);
    *panels = dsmmi_free(ctx, *panels);
}
