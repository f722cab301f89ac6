// src/sparse/summary.c: matrix summary behind `dsmm info` (dsmm_csr_summary) and the process grid
// shape (dsmm_grid_dims).
//
// Everything is O(nnz + nrows + ncols): degrees and flops(A*A) come from row lengths and column
// counts; symmetry compares every row of A with the same row of A^T, built here by a counting sort
// (stable, so rows of A^T come out sorted by column and a row-by-row merge suffices); the tile
// counts use the regular 2D block grid of the distributed layers (rows split into pr nearly-equal
// contiguous ranges, the first n % pr ranges one longer; columns likewise).
#include <math.h>
#include <string.h>

#include "sparse/sparse.h"

dsmm_status dsmm_grid_dims(int procs, int *pr, int *pc)
{
    if (procs < 1 || pr == NULL || pc == NULL) return DSMM_ERR_ARG;
    int r = 1;
    for (int d = 1; (long)d * d <= procs; d++)
        if (procs % d == 0) r = d;
    *pr = r;
    *pc = procs / r;
    return DSMM_OK;
}

// Block of index i when n indices are split into p nearly-equal ranges, the first n % p of them one
// longer (so block sizes differ by at most one and no block is empty when n >= p).
static int block_of(dsmm_idx i, dsmm_idx n, int p)
{
    dsmm_idx base = n / p, rem = n % p;
    dsmm_idx split = rem * (base + 1); // first index of the short blocks
    if (i < split) return (int)(i / (base + 1));
    return (int)(rem + (i - split) / base); // base > 0 here: i < n == split when base == 0
}

// A CSR with values as doubles. Built by counting sort, so its rows are sorted by column and
// duplicates keep their order; transposing twice gives A with sorted rows.
typedef struct sorted_csr {
    dsmm_idx *rowptr, *colidx;
    double *val; // NULL for pattern
} sorted_csr;

static void sorted_free(dsmm_ctx *ctx, sorted_csr *S)
{
    S->rowptr = dsmmi_free(ctx, S->rowptr);
    S->colidx = dsmmi_free(ctx, S->colidx);
    S->val = dsmmi_free(ctx, S->val);
}

// T = transpose of (rowptr, colidx or colidx32, val) with nrows x ncols; T has ncols rows.
// colidx32, when non-NULL, holds the columns instead of colidx (A's 32-bit columns).
static dsmm_status transpose_into(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                  const dsmm_idx *rowptr, const dsmm_idx *colidx,
                                  const int32_t *colidx32, const dsmm_csr *A, const double *val,
                                  sorted_csr *T)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx nnz = rowptr[nrows];
    memset(T, 0, sizeof *T);
    T->rowptr = dsmmi_calloc(ctx, (size_t)ncols + 1, sizeof *T->rowptr);
    T->colidx = dsmmi_malloc(ctx, (size_t)nnz + 1, sizeof *T->colidx);
    DSMM_CHECK(ctx, T->rowptr != NULL && T->colidx != NULL, DSMM_ERR_NOMEM,
               "summary: transpose of %lld entries", (long long)nnz);
    if (A->type != DSMM_PATTERN) {
        T->val = dsmmi_malloc(ctx, (size_t)nnz + 1, sizeof *T->val);
        DSMM_CHECK(ctx, T->val != NULL, DSMM_ERR_NOMEM, "summary: transpose values");
    }
    for (dsmm_idx k = 0; k < nnz; k++) T->rowptr[(colidx32 ? colidx32[k] : colidx[k]) + 1]++;
    for (dsmm_idx j = 0; j < ncols; j++) T->rowptr[j + 1] += T->rowptr[j];
    // T->rowptr[j] serves as row j's fill cursor, then is shifted back by one row.
    for (dsmm_idx i = 0; i < nrows; i++) {
        for (dsmm_idx k = rowptr[i]; k < rowptr[i + 1]; k++) {
            dsmm_idx j = colidx32 ? colidx32[k] : colidx[k];
            dsmm_idx dst = T->rowptr[j]++;
            T->colidx[dst] = i;
            if (T->val) T->val[dst] = val ? val[k] : dsmm_csr_value(A, k);
        }
    }
    for (dsmm_idx j = ncols; j > 0; j--) T->rowptr[j] = T->rowptr[j - 1];
    T->rowptr[0] = 0;
cleanup:
    if (st != DSMM_OK) sorted_free(ctx, T);
    return st;
}

// Symmetry of square A: rows of S (A sorted) against rows of T (A^T sorted), entry by entry.
static void symmetry(const dsmm_csr *A, const sorted_csr *S, const sorted_csr *T, dsmm_summary *s)
{
    int pat = 1, sym = 1, skew = 1;
    for (dsmm_idx i = 0; i < A->nrows && pat; i++) {
        dsmm_idx a = S->rowptr[i], ae = S->rowptr[i + 1];
        dsmm_idx b = T->rowptr[i], be = T->rowptr[i + 1];
        if (ae - a != be - b) {
            pat = 0;
            break;
        }
        for (; a < ae; a++, b++) {
            if (S->colidx[a] != T->colidx[b]) {
                pat = 0;
                break;
            }
            double x = S->val ? S->val[a] : 1.0, y = T->val ? T->val[b] : 1.0;
            if (!(x == y)) sym = 0;
            if (!(x == -y)) skew = 0;
        }
    }
    s->pattern_symmetric = pat;
    s->value_symmetric = pat && sym;
    s->skew_symmetric = pat && skew;
}

dsmm_status dsmm_csr_summary(dsmm_ctx *ctx, const dsmm_csr *A, int procs, dsmm_summary *s)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *colcnt = NULL, *tiles = NULL;
    sorted_csr T = {0}, S = {0};
    int pr = 0, pc = 0;

    DSMM_CHECK(ctx, A != NULL && s != NULL, DSMM_ERR_ARG, "summary: A and s must be non-NULL");
    DSMM_CHECK(ctx, dsmm_grid_dims(procs, &pr, &pc) == DSMM_OK, DSMM_ERR_ARG,
               "summary: procs must be >= 1, got %d", procs);
    DSMM_CHECK(ctx, A->nrows >= 0 && A->ncols >= 0 && A->rowptr != NULL, DSMM_ERR_ARG,
               "summary: malformed matrix (%lld x %lld)", (long long)A->nrows, (long long)A->ncols);
    memset(s, 0, sizeof *s);
    const dsmm_idx m = A->nrows, n = A->ncols, nnz = A->rowptr[m];
    DSMM_CHECK(ctx, nnz >= 0 && (nnz == 0 || A->colidx != NULL || A->colidx32 != NULL),
               DSMM_ERR_ARG, "summary: malformed matrix (rowptr[%lld] = %lld)", (long long)m,
               (long long)nnz);
    s->nrows = m;
    s->ncols = n;
    s->nnz = nnz;
    s->procs = procs;
    s->grid_rows = pr;
    s->grid_cols = pc;

    colcnt = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *colcnt);
    tiles = dsmmi_calloc(ctx, (size_t)procs, sizeof *tiles);
    DSMM_CHECK(ctx, colcnt != NULL && tiles != NULL, DSMM_ERR_NOMEM,
               "summary: %lld column counters", (long long)n);

    // Serial pass: column counts (validating indices, since later passes index by them), diagonal,
    // tiles and values. One pass over the columns (either width); rows are processed in order.
    int have_val = A->type != DSMM_PATTERN && nnz > 0;
    double vmin = INFINITY, vmax = -INFINITY;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx k0 = A->rowptr[i], k1 = A->rowptr[i + 1];
        DSMM_CHECK(ctx, k0 <= k1 && k1 <= nnz, DSMM_ERR_FORMAT,
                   "summary: rowptr decreases at row %lld", (long long)i);
        int I = block_of(i, m, pr);
        for (dsmm_idx k = k0; k < k1; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            DSMM_CHECK(ctx, j >= 0 && j < n, DSMM_ERR_FORMAT,
                       "summary: column %lld out of range 0..%lld in row %lld", (long long)j,
                       (long long)n - 1, (long long)i);
            colcnt[j]++;
            if (j == i) s->diag_nnz++;
            tiles[I * pc + block_of(j, n, pc)]++;
            if (have_val) {
                double v = dsmm_csr_value(A, k);
                if (!isfinite(v)) {
                    s->has_nonfinite = 1;
                } else {
                    if (v < vmin) vmin = v;
                    if (v > vmax) vmax = v;
                }
            }
        }
    }
    if (A->type == DSMM_PATTERN) {
        s->val_min = s->val_max = 1.0;
    } else if (vmin <= vmax) {
        s->val_min = vmin;
        s->val_max = vmax;
    }

    // Degrees.
    s->row_deg_min = m > 0 ? INT64_MAX : 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx d = A->rowptr[i + 1] - A->rowptr[i];
        if (d == 0) s->empty_rows++;
        if (d < s->row_deg_min) s->row_deg_min = d;
        if (d > s->row_deg_max) s->row_deg_max = d;
    }
    s->col_deg_min = n > 0 ? INT64_MAX : 0;
    for (dsmm_idx j = 0; j < n; j++) {
        dsmm_idx d = colcnt[j];
        if (d == 0) s->empty_cols++;
        if (d < s->col_deg_min) s->col_deg_min = d;
        if (d > s->col_deg_max) s->col_deg_max = d;
    }
    s->row_deg_mean = m > 0 ? (double)nnz / (double)m : 0.0;
    s->col_deg_mean = n > 0 ? (double)nnz / (double)n : 0.0;

    // Tiles.
    for (int t = 0; t < procs; t++)
        if (tiles[t] > s->tile_nnz_max) s->tile_nnz_max = tiles[t];
    s->tile_nnz_avg = (double)nnz / (double)procs;
    s->tile_imbalance = nnz > 0 ? (double)s->tile_nnz_max / s->tile_nnz_avg : 1.0;

    if (m != n) {
        s->flops_aa = -1.0;
        goto cleanup; // symmetry stays 0: only square matrices can be symmetric
    }

    // flops(A*A) = sum_k nnz(A(:,k)) * nnz(A(k,:)); integer sum, exact to 2^64.
    uint64_t flops = 0;
    for (dsmm_idx k = 0; k < n; k++)
        flops += (uint64_t)colcnt[k] * (uint64_t)(A->rowptr[k + 1] - A->rowptr[k]);
    s->flops_aa = (double)flops;

    DSMM_TRY(transpose_into(ctx, m, n, A->rowptr, A->colidx, A->colidx32, A, NULL, &T));
    DSMM_TRY(transpose_into(ctx, n, m, T.rowptr, T.colidx, NULL, A, T.val, &S));
    symmetry(A, &S, &T, s);
cleanup:
    sorted_free(ctx, &T);
    sorted_free(ctx, &S);
    colcnt = dsmmi_free(ctx, colcnt);
    tiles = dsmmi_free(ctx, tiles);
    return st;
}
