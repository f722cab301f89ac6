// src/sparse/dense.c: dense row-major matrices: creation, borrowing, and CSR -> dense.
#include <string.h>

#include "sparse/sparse.h"

// nrows * ld elements of the type's size must fit size_t.
static bool dense_size_ok(dsmm_idx nrows, dsmm_idx ld, dsmm_type type, size_t *count)
{
    size_t n, bytes;
    if (!dsmmi_mul_ok((size_t)nrows, (size_t)ld, &n)) return false;
    if (!dsmmi_mul_ok(n, dsmmi_type_size(type), &bytes)) return false;
    *count = n;
    return true;
}

dsmm_status dsmm_dense_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type,
                              dsmm_dense **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_dense *D = NULL;
    size_t count = 0;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dense_create: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "dense_create: invalid or destroyed context");
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0, DSMM_ERR_ARG,
               "dense_create: negative size %lld x %lld", (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "dense_create: type must be float or double, not %s", dsmm_type_name(type));
    DSMM_CHECK(ctx, dense_size_ok(nrows, ncols, type, &count), DSMM_ERR_NOMEM,
               "dense_create: %lld x %lld overflows", (long long)nrows, (long long)ncols);
    D = dsmmi_calloc(ctx, 1, sizeof *D);
    DSMM_CHECK(ctx, D != NULL, DSMM_ERR_NOMEM, "dense_create: struct");
    D->ctx = ctx;
    D->owns_arrays = 1;
    D->val = dsmmi_calloc(ctx, count, dsmmi_type_size(type));
    DSMM_CHECK(ctx, D->val != NULL, DSMM_ERR_NOMEM, "dense_create: %lld x %lld values",
               (long long)nrows, (long long)ncols);
    D->nrows = nrows;
    D->ncols = ncols;
    D->ld = ncols;
    D->type = type;
    *out = D;
    D = NULL;
cleanup:
    dsmm_dense_destroy(&D);
    return st;
}

dsmm_status dsmm_dense_wrap(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx ld, void *val,
                            dsmm_type type, dsmm_dense **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_dense *D = NULL;
    size_t count = 0;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dense_wrap: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "dense_wrap: invalid or destroyed context");
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0, DSMM_ERR_ARG, "dense_wrap: negative size %lld x %lld",
               (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, ld >= ncols, DSMM_ERR_ARG, "dense_wrap: ld = %lld < ncols = %lld",
               (long long)ld, (long long)ncols);
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "dense_wrap: type must be float or double, not %s", dsmm_type_name(type));
    DSMM_CHECK(ctx, dense_size_ok(nrows, ld, type, &count), DSMM_ERR_ARG,
               "dense_wrap: %lld x %lld overflows", (long long)nrows, (long long)ld);
    DSMM_CHECK(ctx, val != NULL || count == 0, DSMM_ERR_ARG, "dense_wrap: val is NULL");
    D = dsmmi_calloc(ctx, 1, sizeof *D);
    DSMM_CHECK(ctx, D != NULL, DSMM_ERR_NOMEM, "dense_wrap: struct");
    *D = (dsmm_dense){.nrows = nrows,
                      .ncols = ncols,
                      .ld = ld,
                      .val = val,
                      .type = type,
                      .owns_arrays = 0,
                      .ctx = ctx};
    *out = D;
    D = NULL;
cleanup:
    dsmm_dense_destroy(&D);
    return st;
}

void dsmm_dense_destroy(dsmm_dense **pD)
{
    if (pD == NULL || *pD == NULL) return;
    dsmm_dense *D = *pD;
    if (D->owns_arrays) dsmmi_free(D->ctx, D->val);
    dsmmi_free(D->ctx, D);
    *pD = NULL;
}

dsmm_status dsmm_csr_to_dense(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type, dsmm_dense **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_dense *D = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_to_dense: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_to_dense: A must be non-NULL");
    DSMM_TRY(dsmm_dense_create(ctx, A->nrows, A->ncols, type, &D));
    // Repeated (i, j) in an unsorted A add up, as they would in any product with A.
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            size_t at = (size_t)i * (size_t)D->ld + (size_t)dsmm_csr_col(A, k);
            double v = dsmm_csr_value(A, k);
            if (type == DSMM_DOUBLE)
                ((double *)D->val)[at] += v;
            else
                ((float *)D->val)[at] += (float)v;
        }
    }
    *out = D;
    D = NULL;
cleanup:
    dsmm_dense_destroy(&D);
    return st;
}
