// src/sparse/check.c: dsmm_csr_check, exactly the invariants listed above struct dsmm_csr.
// Checks run in the order of that list and stop at the first broken one, so the message
// names the earliest cause (later invariants may only be consequences of it).
#include "sparse/sparse.h"

bool dsmmi_csr_rows_increasing(const dsmm_csr *A)
{
    if (A->colidx32) {
        const int32_t *c = A->colidx32;
        for (dsmm_idx i = 0; i < A->nrows; i++)
            for (dsmm_idx k = A->rowptr[i] + 1; k < A->rowptr[i + 1]; k++)
                if (c[k] <= c[k - 1]) return false;
        return true;
    }
    const dsmm_idx *c = A->colidx;
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i] + 1; k < A->rowptr[i + 1]; k++)
            if (c[k] <= c[k - 1]) return false;
    return true;
}

dsmm_status dsmmi_csr_need_cols64(dsmm_ctx *ctx, const dsmm_csr *A, const char *fn)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, A == NULL || A->colidx32 == NULL, DSMM_ERR_UNSUPPORTED,
               "%s: 32-bit columns: call dsmm_csr_set_col_width(A, 64) first", fn);
cleanup:
    return st;
}

dsmm_status dsmm_csr_check(dsmm_ctx *ctx, const dsmm_csr *A)
{
    dsmm_status st = DSMM_OK;

    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_check: A must be non-NULL");
    DSMM_CHECK(ctx, A->nrows >= 0 && A->ncols >= 0, DSMM_ERR_FORMAT,
               "csr_check: negative dimensions %lld x %lld", (long long)A->nrows,
               (long long)A->ncols);
    DSMM_CHECK(ctx, A->nrows < INT64_MAX, DSMM_ERR_FORMAT, "csr_check: nrows %lld too large",
               (long long)A->nrows);
    DSMM_CHECK(ctx, A->nnz >= 0, DSMM_ERR_FORMAT, "csr_check: negative nnz %lld",
               (long long)A->nnz);
    DSMM_CHECK(ctx, A->nnz <= A->cap, DSMM_ERR_FORMAT, "csr_check: nnz = %lld > cap = %lld",
               (long long)A->nnz, (long long)A->cap);
    DSMM_CHECK(ctx, A->rowptr != NULL, DSMM_ERR_FORMAT, "csr_check: rowptr is NULL");
    DSMM_CHECK(ctx, A->colidx == NULL || A->colidx32 == NULL, DSMM_ERR_FORMAT,
               "csr_check: colidx and colidx32 are both non-NULL (exactly one holds the "
               "columns)");
    DSMM_CHECK(ctx, A->colidx != NULL || A->colidx32 != NULL || A->cap == 0, DSMM_ERR_FORMAT,
               "csr_check: colidx is NULL with nnz = %lld, cap = %lld (colidx32 too)",
               (long long)A->nnz, (long long)A->cap);
    DSMM_CHECK(ctx, A->colidx32 == NULL || A->ncols <= INT32_MAX, DSMM_ERR_FORMAT,
               "csr_check: 32-bit columns (colidx32) with ncols = %lld > INT32_MAX",
               (long long)A->ncols);
    DSMM_CHECK(ctx, dsmmi_type_ok(A->type), DSMM_ERR_FORMAT, "csr_check: invalid value type %d",
               (int)A->type);
    DSMM_CHECK(ctx, (A->val == NULL) == (A->type == DSMM_PATTERN), DSMM_ERR_FORMAT,
               "csr_check: val is %s but type is %s", A->val ? "non-NULL" : "NULL",
               dsmm_type_name(A->type));
    const dsmm_idx *rp = A->rowptr;
    DSMM_CHECK(ctx, rp[0] == 0, DSMM_ERR_FORMAT, "csr_check: rowptr[0] = %lld, not 0",
               (long long)rp[0]);
    for (dsmm_idx i = 0; i < A->nrows; i++)
        DSMM_CHECK(ctx, rp[i] <= rp[i + 1], DSMM_ERR_FORMAT,
                   "csr_check: rowptr[%lld] = %lld > rowptr[%lld] = %lld: row pointers decrease",
                   (long long)i, (long long)rp[i], (long long)(i + 1), (long long)rp[i + 1]);
    DSMM_CHECK(ctx, rp[A->nrows] == A->nnz, DSMM_ERR_FORMAT,
               "csr_check: rowptr[%lld] = %lld but nnz = %lld", (long long)A->nrows,
               (long long)rp[A->nrows], (long long)A->nnz);
    // The width test sits in dsmm_csr_col, outside any data dependence: the branch is free.
    const char *name = A->colidx32 ? "colidx32" : "colidx";
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = rp[i]; k < rp[i + 1]; k++) {
            dsmm_idx c = dsmm_csr_col(A, k);
            DSMM_CHECK(ctx, c >= 0 && c < A->ncols, DSMM_ERR_FORMAT,
                       "csr_check: row %lld: %s[%lld] = %lld outside 0..%lld", (long long)i, name,
                       (long long)k, (long long)c, (long long)A->ncols - 1);
        }
    if (A->sorted) {
        for (dsmm_idx i = 0; i < A->nrows; i++)
            for (dsmm_idx k = rp[i] + 1; k < rp[i + 1]; k++) {
                dsmm_idx c = dsmm_csr_col(A, k), p = dsmm_csr_col(A, k - 1);
                DSMM_CHECK(ctx, c > p, DSMM_ERR_FORMAT,
                           "csr_check: row %lld: %s[%lld] = %lld <= %s[%lld] = %lld: "
                           "columns not strictly increasing though sorted = 1",
                           (long long)i, name, (long long)k, (long long)c, name, (long long)(k - 1),
                           (long long)p);
            }
    }
cleanup:
    return st;
}
