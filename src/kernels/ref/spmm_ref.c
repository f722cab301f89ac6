// src/kernels/ref/spmm_ref.c: the reference SpMM: single-threaded, one entry at a time, sums in
// double. Slow and obviously right; the optimised kernels are tested against it.
#include "kernels/kernels.h"

static double ref_b(const dsmmi_spmm_args *a, dsmm_idx r, dsmm_idx j)
{
    return a->type == DSMM_DOUBLE ? ((const double *)a->B)[r * a->ldb + j]
                                  : (double)((const float *)a->B)[r * a->ldb + j];
}

static double ref_a(const dsmmi_spmm_args *a, dsmm_idx p)
{
    if (a->av == NULL) return 1.0;
    return a->type == DSMM_DOUBLE ? ((const double *)a->av)[p] : (double)((const float *)a->av)[p];
}

static void ref_store(const dsmmi_spmm_args *a, dsmm_idx i, dsmm_idx j, double sum)
{
    if (a->type == DSMM_DOUBLE) {
        double *c = (double *)a->C + i * a->ldc + j;
        *c = a->alpha * sum + (a->beta != 0.0 ? a->beta * *c : 0.0);
    } else {
        float *c = (float *)a->C + i * a->ldc + j;
        *c = (float)(a->alpha * sum + (a->beta != 0.0 ? a->beta * (double)*c : 0.0));
    }
}

dsmm_status dsmmi_spmm_ref(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    const dsmm_csr *A = a->A;
    double *sum = NULL;
    info->threads = 1;
    if (!a->trans) {
        for (dsmm_idx i = 0; i < a->m; i++) {
            for (dsmm_idx j = 0; j < a->k; j++) {
                double s = 0.0;
                for (dsmm_idx p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                    s += ref_a(a, p) * ref_b(a, dsmm_csr_col(A, p), j);
                }
                ref_store(a, i, j, s);
            }
        }
    } else {
        // C = A^T * B: row r of A adds A(r, c) * B(r, :) to row c of C; sums kept in double.
        sum = dsmmi_calloc(ctx, (size_t)a->m * (size_t)a->k, sizeof(double));
        DSMM_CHECK(ctx, sum != NULL, DSMM_ERR_NOMEM, "spmm ref: no memory for %lld x %lld sums",
                   (long long)a->m, (long long)a->k);
        info->workspace_bytes = (size_t)a->m * (size_t)a->k * sizeof(double);
        for (dsmm_idx r = 0; r < A->nrows; r++) {
            for (dsmm_idx p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
                dsmm_idx c = dsmm_csr_col(A, p);
                for (dsmm_idx j = 0; j < a->k; j++)
                    sum[c * a->k + j] += ref_a(a, p) * ref_b(a, r, j);
            }
        }
        for (dsmm_idx i = 0; i < a->m; i++) {
            for (dsmm_idx j = 0; j < a->k; j++) ref_store(a, i, j, sum[i * a->k + j]);
        }
    }
cleanup:
    dsmmi_free(ctx, sum);
    return st;
}
