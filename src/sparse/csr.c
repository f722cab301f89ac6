// src/sparse/csr.c: CSR creation, borrowing, destruction, growth, copies; value-type helpers.
#include <string.h>

#include "sparse/sparse.h"

bool dsmmi_type_ok(dsmm_type t)
{
    return t == DSMM_PATTERN || t == DSMM_FLOAT || t == DSMM_DOUBLE;
}

bool dsmmi_dup_ok(dsmm_dup dup)
{
    return dup == DSMM_DUP_SUM || dup == DSMM_DUP_MAX || dup == DSMM_DUP_MIN ||
           dup == DSMM_DUP_LAST || dup == DSMM_DUP_ERROR;
}

void dsmmi_vals_convert(void *dst, dsmm_type dtype, const void *src, dsmm_type stype, dsmm_idx n)
{
    if (dtype == DSMM_PATTERN || n <= 0) return;
    if (dtype == DSMM_DOUBLE) {
        double *d = dst;
        if (stype == DSMM_DOUBLE) {
            if (d != src) memcpy(d, src, (size_t)n * sizeof *d);
        } else if (stype == DSMM_FLOAT) {
            const float *s = src;
            for (dsmm_idx k = 0; k < n; k++) d[k] = (double)s[k];
        } else {
            for (dsmm_idx k = 0; k < n; k++) d[k] = 1.0;
        }
    } else {
        float *d = dst;
        if (stype == DSMM_FLOAT) {
            if (d != src) memcpy(d, src, (size_t)n * sizeof *d);
        } else if (stype == DSMM_DOUBLE) {
            const double *s = src;
            for (dsmm_idx k = 0; k < n; k++) d[k] = (float)s[k];
        } else {
            for (dsmm_idx k = 0; k < n; k++) d[k] = 1.0f;
        }
    }
}

dsmm_status dsmm_csr_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx cap,
                            dsmm_type type, dsmm_csr **out)
{
    return dsmmi_csr_create_ex(ctx, nrows, ncols, cap, type, 64, out);
}

dsmm_status dsmmi_csr_create_ex(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx cap,
                                dsmm_type type, int col_bits, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_create: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "csr_create: invalid or destroyed context");
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0 && cap >= 0, DSMM_ERR_ARG,
               "csr_create: negative size (nrows %lld, ncols %lld, cap %lld)", (long long)nrows,
               (long long)ncols, (long long)cap);
    // rowptr needs nrows + 1 entries and every size must fit size_t
    DSMM_CHECK(ctx, nrows < INT64_MAX && (uint64_t)nrows < SIZE_MAX && (uint64_t)cap < SIZE_MAX,
               DSMM_ERR_NOMEM, "csr_create: %lld rows / %lld entries do not fit in memory",
               (long long)nrows, (long long)cap);
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "csr_create: invalid value type %d",
               (int)type);
    A = dsmmi_calloc(ctx, 1, sizeof *A);
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_NOMEM, "csr_create: struct");
    A->ctx = ctx;
    A->nrows = nrows;
    A->ncols = ncols;
    A->type = type;
    A->sorted = 1;
    A->owns_arrays = 1;
    A->rowptr = dsmmi_calloc(ctx, (size_t)nrows + 1, sizeof *A->rowptr);
    DSMM_CHECK(ctx, A->rowptr != NULL, DSMM_ERR_NOMEM, "csr_create: rowptr of %lld rows",
               (long long)nrows);
    DSMM_CHECK(ctx, col_bits == 64 || (col_bits == 32 && ncols <= INT32_MAX), DSMM_ERR_ARG,
               "csr_create: %d-bit columns for %lld columns", col_bits, (long long)ncols);
    if (col_bits == 32) {
        A->colidx32 = dsmmi_malloc(ctx, (size_t)cap, sizeof *A->colidx32);
        DSMM_CHECK(ctx, A->colidx32 != NULL, DSMM_ERR_NOMEM,
                   "csr_create: 32-bit colidx of %lld entries", (long long)cap);
    } else {
        A->colidx = dsmmi_malloc(ctx, (size_t)cap, sizeof *A->colidx);
        DSMM_CHECK(ctx, A->colidx != NULL, DSMM_ERR_NOMEM, "csr_create: colidx of %lld entries",
                   (long long)cap);
    }
    if (type != DSMM_PATTERN) {
        A->val = dsmmi_malloc(ctx, (size_t)cap, dsmmi_type_size(type));
        DSMM_CHECK(ctx, A->val != NULL, DSMM_ERR_NOMEM, "csr_create: values of %lld entries",
                   (long long)cap);
    }
    A->cap = cap;
    *out = A;
    A = NULL;
cleanup:
    dsmm_csr_destroy(&A);
    return st;
}

dsmm_status dsmm_csr_wrap(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx *rowptr,
                          dsmm_idx *colidx, void *val, dsmm_type type, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_wrap: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "csr_wrap: invalid or destroyed context");
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0 && nrows < INT64_MAX, DSMM_ERR_ARG,
               "csr_wrap: invalid size %lld x %lld", (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "csr_wrap: invalid value type %d",
               (int)type);
    DSMM_CHECK(ctx, rowptr != NULL, DSMM_ERR_FORMAT, "csr_wrap: rowptr is NULL");
    dsmm_csr tmp = {.nrows = nrows,
                    .ncols = ncols,
                    .nnz = rowptr[nrows],
                    .cap = rowptr[nrows],
                    .rowptr = rowptr,
                    .colidx = colidx,
                    .val = val,
                    .type = type,
                    .sorted = 0,
                    .owns_arrays = 0,
                    .ctx = ctx};
    DSMM_TRY(dsmm_csr_check(ctx, &tmp));
    tmp.sorted = dsmmi_csr_rows_increasing(&tmp);
    A = dsmmi_malloc(ctx, 1, sizeof *A);
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_NOMEM, "csr_wrap: struct");
    *A = tmp;
    *out = A;
    A = NULL;
cleanup:
    dsmm_csr_destroy(&A);
    return st;
}

void dsmm_csr_destroy(dsmm_csr **pA)
{
    if (pA == NULL || *pA == NULL) return;
    dsmm_csr *A = *pA;
    dsmm_ctx *ctx = A->ctx;
    if (A->owns_arrays) {
        dsmmi_free(ctx, A->rowptr);
        dsmmi_free(ctx, A->colidx);
        dsmmi_free(ctx, A->colidx32);
        dsmmi_free(ctx, A->val);
    }
    dsmmi_free(ctx, A);
    *pA = NULL;
}

// Grows the column array (whichever width A holds) first, then val: if the second step fails,
// the larger column array is still valid and cap is unchanged, so A stays consistent.
dsmm_status dsmm_csr_reserve(dsmm_csr *A, dsmm_idx cap)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = A ? A->ctx : NULL;

    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_reserve: A must be non-NULL");
    DSMM_CHECK(ctx, cap >= 0, DSMM_ERR_ARG, "csr_reserve: negative capacity %lld", (long long)cap);
    if (cap <= A->cap) goto cleanup;
    DSMM_CHECK(ctx, A->owns_arrays, DSMM_ERR_ARG,
               "csr_reserve: cannot grow arrays borrowed with dsmm_csr_wrap");
    DSMM_CHECK(ctx, (uint64_t)cap < SIZE_MAX, DSMM_ERR_NOMEM, "csr_reserve: %lld entries",
               (long long)cap);
    if (A->colidx32) {
        int32_t *c = dsmmi_realloc(ctx, A->colidx32, (size_t)cap, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "csr_reserve: 32-bit colidx of %lld entries",
                   (long long)cap);
        A->colidx32 = c;
    } else {
        dsmm_idx *c = dsmmi_realloc(ctx, A->colidx, (size_t)cap, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "csr_reserve: colidx of %lld entries",
                   (long long)cap);
        A->colidx = c;
    }
    if (A->type != DSMM_PATTERN) {
        void *v = dsmmi_realloc(ctx, A->val, (size_t)cap, dsmmi_type_size(A->type));
        DSMM_CHECK(ctx, v != NULL, DSMM_ERR_NOMEM, "csr_reserve: values of %lld entries",
                   (long long)cap);
        A->val = v;
    }
    A->cap = cap;
cleanup:
    return st;
}

dsmm_status dsmm_csr_copy(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *B = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_copy: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_copy: A must be non-NULL");
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "csr_copy: invalid value type %d",
               (int)type);
    DSMM_TRY(dsmmi_csr_create_ex(ctx, A->nrows, A->ncols, A->nnz, type, dsmmi_csr_col_bits(A), &B));
    memcpy(B->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof *B->rowptr);
    if (A->nnz > 0 && A->colidx32)
        memcpy(B->colidx32, A->colidx32, (size_t)A->nnz * sizeof *B->colidx32);
    else if (A->nnz > 0)
        memcpy(B->colidx, A->colidx, (size_t)A->nnz * sizeof *B->colidx);
    dsmmi_vals_convert(B->val, type, A->val, A->type, A->nnz);
    B->nnz = A->nnz;
    B->sorted = A->sorted;
    *out = B;
    B = NULL;
cleanup:
    dsmm_csr_destroy(&B);
    return st;
}

dsmm_status dsmm_csr_set_col_width(dsmm_csr *A, int bits)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = A ? A->ctx : NULL;

    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_set_col_width: A must be non-NULL");
    DSMM_CHECK(ctx, bits == 32 || bits == 64, DSMM_ERR_ARG,
               "csr_set_col_width: width %d is neither 32 nor 64", bits);
    DSMM_CHECK(ctx, bits == 64 || A->ncols <= INT32_MAX, DSMM_ERR_ARG,
               "csr_set_col_width: %lld columns do not fit 32-bit indices", (long long)A->ncols);
    if ((bits == 32) == (A->colidx32 != NULL)) goto cleanup; // already that width
    DSMM_CHECK(ctx, A->owns_arrays, DSMM_ERR_ARG,
               "csr_set_col_width: cannot convert arrays borrowed with dsmm_csr_wrap");
    if (bits == 32) {
        int32_t *c = dsmmi_malloc(ctx, (size_t)A->cap, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "csr_set_col_width: %lld columns",
                   (long long)A->cap);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(dsmmi_threads(ctx))
#endif
        for (dsmm_idx k = 0; k < A->nnz; k++) c[k] = (int32_t)A->colidx[k];
        A->colidx = dsmmi_free(ctx, A->colidx);
        A->colidx32 = c;
    } else {
        dsmm_idx *c = dsmmi_malloc(ctx, (size_t)A->cap, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "csr_set_col_width: %lld columns",
                   (long long)A->cap);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(dsmmi_threads(ctx))
#endif
        for (dsmm_idx k = 0; k < A->nnz; k++) c[k] = A->colidx32[k];
        A->colidx32 = dsmmi_free(ctx, A->colidx32);
        A->colidx = c;
    }
cleanup:
    return st;
}
