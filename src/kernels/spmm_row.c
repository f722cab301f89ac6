// src/kernels/spmm_row.c: row-wise SpMM, C = alpha * A * B + beta * C with A in CSR: each row
// of C gathers the rows of B its row of A names. Rows are split into chunks of equal
// nnz + rows (prefix of rowptr plus the row index, binary search), 8 per thread, taken
// dynamically; each row is computed whole by one thread, so the result is bitwise the same
// at any thread count. The inner loops (spmm_row_tmpl.h) block k into register-sized pieces.
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/stream.h"

#define CHUNKS_PER_THREAD 8

#define SPMM_TMPL       "kernels/spmm_row_tmpl.h"
#define SPMM_FN(suffix) row_##suffix
#include "kernels/spmm_instances.h"
#undef SPMM_FN
#undef SPMM_TMPL

dsmmi_spmm_tuning dsmmi_spmm_tune = {
    .row_buffer_k = -1,
    .row_stream_min = (size_t)8 << 20,
    .row_prefetch = 2,
    .row_odd_mask = 1,
    .col_split_work = 256.0,
    .col_private_max = (size_t)16 << 20,
    .min_thread_work = 65536.0,
};

dsmm_idx dsmmi_spmm_buffer_k(void)
{
    if (dsmmi_spmm_tune.row_buffer_k >= 0) return dsmmi_spmm_tune.row_buffer_k;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_is("amd")) return 128;
#endif
    return 0;
}

/* Rows [r0, r1) through the instantiation that fits A's columns, values and the type. */
static void row_range(const dsmmi_spmm_args *a, dsmm_idx r0, dsmm_idx r1)
{
    const dsmm_csr *A = a->A;
    const dsmm_idx *rp = A->rowptr;
    int pat = a->av == NULL;
    dsmm_idx kbuf = dsmmi_spmm_buffer_k(), pfd = dsmmi_spmm_tune.row_prefetch;
    size_t w = dsmmi_type_size(a->type);
    int nt = DSMMI_HAVE_STREAM && dsmmi_spmm_tune.row_stream_min > 0 && a->beta == 0 &&
             (double)a->m * (double)a->k * (double)w >= (double)dsmmi_spmm_tune.row_stream_min &&
             (uintptr_t)a->C % 16 == 0 && (size_t)a->ldc * w % 16 == 0;
    if (a->type == DSMM_DOUBLE) {
        const double *av = a->av;
        const double *B = a->B;
        double *C = a->C;
        double al = a->alpha, be = a->beta;
        if (A->colidx32) {
            (pat ? row_d32p : row_d32)(rp, A->colidx32, av, B, a->ldb, C, a->ldc, a->k, al, be, r0,
                                       r1, kbuf, pfd, nt);
        } else {
            (pat ? row_d64p : row_d64)(rp, A->colidx, av, B, a->ldb, C, a->ldc, a->k, al, be, r0,
                                       r1, kbuf, pfd, nt);
        }
    } else {
        const float *av = a->av;
        const float *B = a->B;
        float *C = a->C;
        float al = (float)a->alpha, be = (float)a->beta;
        if (A->colidx32) {
            (pat ? row_f32p : row_f32)(rp, A->colidx32, av, B, a->ldb, C, a->ldc, a->k, al, be, r0,
                                       r1, kbuf, pfd, nt);
        } else {
            (pat ? row_f64p : row_f64)(rp, A->colidx, av, B, a->ldb, C, a->ldc, a->k, al, be, r0,
                                       r1, kbuf, pfd, nt);
        }
    }
}

/* First row whose weight prefix rowptr[i] + i reaches w (rows 0..m). */
static dsmm_idx weight_row(const dsmm_idx *rp, dsmm_idx m, dsmm_idx w)
{
    dsmm_idx lo = 0, hi = m;
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (rp[mid] + mid < w) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

dsmm_status dsmmi_spmm_row(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    const dsmm_csr *A = a->A;
    dsmm_idx m = a->m;
    int threads = dsmmi_spmm_threads(ctx, a);
    info->threads = threads;
    info->workspace_bytes = 0;
    if (threads <= 1) {
        row_range(a, 0, m);
        return DSMM_OK;
    }
    int nchunks = threads * CHUNKS_PER_THREAD;
    dsmm_idx total = A->rowptr[m] + m;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (int c = 0; c < nchunks; c++) {
        dsmm_idx r0 = weight_row(A->rowptr, m, (dsmm_idx)((double)total * c / nchunks));
        dsmm_idx r1 = c + 1 == nchunks
                          ? m
                          : weight_row(A->rowptr, m, (dsmm_idx)((double)total * (c + 1) / nchunks));
        if (r0 < r1) row_range(a, r0, r1);
    }
    return DSMM_OK;
}
