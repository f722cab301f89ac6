// src/sparse/permute.c: B = A(p, q): rows and columns renumbered by permutations.
// Row i of B is row p[i] of A with column c renamed qinv[c]; the renamed rows are re-sorted
// with the stable row sort of sort.c (duplicates of an unsorted A are kept, not merged).
// B has A's column width; the sort works on 64-bit columns, so a 32-bit B is narrowed after.
#include <string.h>

#include "sparse/sparse.h"

// Checks that p is a permutation of 0..n-1, filling inv with its inverse on the way, and
// names the first bad entry.
static dsmm_status check_perm(dsmm_ctx *ctx, const char *name, const dsmm_idx *p, dsmm_idx n,
                              dsmm_idx *inv)
{
    dsmm_status st = DSMM_OK;
    for (dsmm_idx i = 0; i < n; i++) inv[i] = -1;
    for (dsmm_idx i = 0; i < n; i++) {
        dsmm_idx v = p[i];
        DSMM_CHECK(ctx, v >= 0 && v < n, DSMM_ERR_ARG,
                   "csr_permute: %s[%lld] = %lld outside 0..%lld: not a permutation", name,
                   (long long)i, (long long)v, (long long)n - 1);
        DSMM_CHECK(ctx, inv[v] < 0, DSMM_ERR_ARG,
                   "csr_permute: %s[%lld] = %lld repeats %s[%lld]: not a permutation", name,
                   (long long)i, (long long)v, name, (long long)inv[v]);
        inv[v] = i;
    }
cleanup:
    return st;
}

dsmm_status dsmm_csr_permute(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_idx *p, const dsmm_idx *q,
                             dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *B = NULL;
    dsmm_idx *pinv = NULL, *qinv = NULL, *c1 = NULL;
    double *v1 = NULL, *v0 = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_permute: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_permute: A must be non-NULL");
    if (p) {
        pinv = dsmmi_malloc(ctx, (size_t)A->nrows, sizeof *pinv);
        DSMM_CHECK(ctx, pinv != NULL, DSMM_ERR_NOMEM, "csr_permute: %lld rows",
                   (long long)A->nrows);
        DSMM_TRY(check_perm(ctx, "p", p, A->nrows, pinv));
    }
    if (q) {
        qinv = dsmmi_malloc(ctx, (size_t)A->ncols, sizeof *qinv);
        DSMM_CHECK(ctx, qinv != NULL, DSMM_ERR_NOMEM, "csr_permute: %lld columns",
                   (long long)A->ncols);
        DSMM_TRY(check_perm(ctx, "q", q, A->ncols, qinv));
    }
    dsmm_idx nnz = A->rowptr[A->nrows];
    bool rows_only = q == NULL && A->sorted;
    DSMM_TRY(dsmmi_csr_create_ex(ctx, A->nrows, A->ncols, nnz, A->type,
                                 rows_only ? dsmmi_csr_col_bits(A) : 64, &B));
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx r = p ? p[i] : i;
        B->rowptr[i + 1] = B->rowptr[i] + (A->rowptr[r + 1] - A->rowptr[r]);
    }
    bool vals = A->type != DSMM_PATTERN;
    if (rows_only) {
        // renaming rows only keeps every row sorted: plain copies
        size_t vs = dsmmi_type_size(A->type);
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            dsmm_idx r = p ? p[i] : i, s = A->rowptr[r], n = A->rowptr[r + 1] - s;
            if (n == 0) continue;
            if (A->colidx32)
                memcpy(B->colidx32 + B->rowptr[i], A->colidx32 + s,
                       (size_t)n * sizeof *B->colidx32);
            else
                memcpy(B->colidx + B->rowptr[i], A->colidx + s, (size_t)n * sizeof *B->colidx);
            if (vs)
                memcpy((char *)B->val + (size_t)B->rowptr[i] * vs,
                       (const char *)A->val + (size_t)s * vs, (size_t)n * vs);
        }
        B->nnz = nnz;
        B->sorted = 1;
    } else {
        c1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *c1);
        DSMM_CHECK(ctx, c1 != NULL, DSMM_ERR_NOMEM, "csr_permute: %lld entries", (long long)nnz);
        if (vals) {
            v1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *v1);
            v0 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *v0);
            DSMM_CHECK(ctx, v1 != NULL && v0 != NULL, DSMM_ERR_NOMEM, "csr_permute: %lld values",
                       (long long)nnz);
        }
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            dsmm_idx r = p ? p[i] : i, o = B->rowptr[i];
            for (dsmm_idx k = A->rowptr[r]; k < A->rowptr[r + 1]; k++, o++) {
                dsmm_idx c = dsmm_csr_col(A, k);
                c1[o] = qinv ? qinv[c] : c;
                if (vals) v1[o] = dsmm_csr_value(A, k);
            }
        }
        int had_dups = 0;
        dsmm_idx nnz_new = 0;
        // float -> double -> float is exact, so values come back unchanged
        DSMM_TRY(dsmmi_rows_sort_merge(ctx, A->nrows, B->rowptr, c1, v1, B->colidx, v0, B->val,
                                       A->type, DSMMI_DUP_KEEP, &nnz_new, &had_dups, NULL, NULL));
        B->nnz = nnz_new;
        B->sorted = !had_dups;
        if (A->colidx32) DSMM_TRY(dsmm_csr_set_col_width(B, 32));
    }
    *out = B;
    B = NULL;
cleanup:
    dsmm_csr_destroy(&B);
    pinv = dsmmi_free(ctx, pinv);
    qinv = dsmmi_free(ctx, qinv);
    c1 = dsmmi_free(ctx, c1);
    v1 = dsmmi_free(ctx, v1);
    v0 = dsmmi_free(ctx, v0);
    return st;
}
