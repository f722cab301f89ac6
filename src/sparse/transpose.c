// src/sparse/transpose.c: T = A^T by a counting sort on columns, O(nnz + ncols).
// Rows of A are visited in order, so each row of T lists its columns in increasing order.
// A may hold 32- or 64-bit columns; T always gets 64-bit ones (its columns are A's rows).
#include <string.h>

#include "sparse/sparse.h"

dsmm_status dsmm_csr_transpose(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *T = NULL;
    dsmm_idx *next = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_transpose: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_transpose: A must be non-NULL");
    DSMM_CHECK(ctx, A->ncols < INT64_MAX, DSMM_ERR_ARG, "csr_transpose: %lld columns",
               (long long)A->ncols);
    DSMM_TRY(dsmm_csr_create(ctx, A->ncols, A->nrows, A->nnz, A->type, &T));
    next = dsmmi_malloc(ctx, (size_t)A->ncols, sizeof *next);
    DSMM_CHECK(ctx, next != NULL, DSMM_ERR_NOMEM, "csr_transpose: %lld counters",
               (long long)A->ncols);
    dsmm_idx nnz = A->rowptr[A->nrows];
    const int32_t *c32 = A->colidx32;
    const dsmm_idx *c64 = A->colidx;
    if (c32)
        for (dsmm_idx k = 0; k < nnz; k++) T->rowptr[c32[k] + 1]++;
    else
        for (dsmm_idx k = 0; k < nnz; k++) T->rowptr[c64[k] + 1]++;
    for (dsmm_idx j = 0; j < A->ncols; j++) {
        T->rowptr[j + 1] += T->rowptr[j];
        next[j] = T->rowptr[j];
    }
    size_t vs = dsmmi_type_size(A->type);
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx p = next[c32 ? (dsmm_idx)c32[k] : c64[k]]++;
            T->colidx[p] = i;
            if (vs == sizeof(double))
                ((double *)T->val)[p] = ((const double *)A->val)[k];
            else if (vs == sizeof(float))
                ((float *)T->val)[p] = ((const float *)A->val)[k];
        }
    }
    T->nnz = nnz;
    // A repeated (i, j) in an unsorted A becomes a repeated column in row j of T.
    T->sorted = A->sorted ? 1 : dsmmi_csr_rows_increasing(T);
    *out = T;
    T = NULL;
cleanup:
    dsmm_csr_destroy(&T);
    next = dsmmi_free(ctx, next);
    return st;
}
