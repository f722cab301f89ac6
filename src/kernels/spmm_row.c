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
#undef SPMM_TMPL

dsmmi_spmm_tuning dsmmi_spmm_tune = {
    .row_buffer_k = -1,
    .row_stream_min = (size_t)8 << 20,
    .row_prefetch = 2,
    .row_odd_mask = 1,
    .vec_bytes = 64,
    .col_split_bytes = 64.0,
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

int dsmmi_spmm_wide(const dsmmi_spmm_args *a, size_t min_bytes)
{
#if DSMMI_HAVE_WIDE
    size_t w = dsmmi_type_size(a->type);
    return dsmmi_spmm_tune.vec_bytes >= 64 && (double)a->k * (double)w >= (double)min_bytes &&
           (uintptr_t)a->B % 64 == 0 && (uintptr_t)a->C % 64 == 0 && (size_t)a->ldb * w % 64 == 0 &&
           (size_t)a->ldc * w % 64 == 0 && __builtin_cpu_supports("x86-64-v4");
#else
    (void)a;
    (void)min_bytes;
    return 0;
#endif
}

// The instance for value type TY and column width CW (SPMM_PICK) run on the rows at hand,
// A's columns in the CIX array.
#define ROW_RUN(TY, CW, CIX)                                                                       \
    SPMM_PICK(TY, CW)(rp, A->CIX, av, B, a->ldb, C, a->ldc, a->k, al, be, r0, r1, kbuf, pfd, nt)

/* Rows [r0, r1) through the instantiation that fits A's columns, values and the type. */
static void row_range(const dsmmi_spmm_args *a, dsmm_idx r0, dsmm_idx r1)
{
    const dsmm_csr *A = a->A;
    const dsmm_idx *rp = A->rowptr;
    int pat = a->av == NULL;
    dsmm_idx kbuf = dsmmi_spmm_buffer_k(), pfd = dsmmi_spmm_tune.row_prefetch;
    size_t w = dsmmi_type_size(a->type);
    // k = 8 double as one 64-byte vector (two sets of sums) against two 32-byte ones: 0.77x
    // on facebook, 1.11-1.26x on as-caida and ca-condmat (short rows), so 32-byte vectors there.
    int wide = dsmmi_spmm_wide(a, 128);
    (void)wide;
    int nt = DSMMI_HAVE_STREAM && dsmmi_spmm_tune.row_stream_min > 0 && a->beta == 0 &&
             (double)a->m * (double)a->k * (double)w >= (double)dsmmi_spmm_tune.row_stream_min &&
             (uintptr_t)a->C % 16 == 0 && (size_t)a->ldc * w % 16 == 0;
    if (a->type == DSMM_DOUBLE) {
        const double *av = a->av;
        const double *B = a->B;
        double *C = a->C;
        double al = a->alpha, be = a->beta;
        if (A->colidx32) {
            ROW_RUN(d, 32, colidx32);
        } else {
            ROW_RUN(d, 64, colidx);
        }
    } else {
        const float *av = a->av;
        const float *B = a->B;
        float *C = a->C;
        float al = (float)a->alpha, be = (float)a->beta;
        if (A->colidx32) {
            ROW_RUN(f, 32, colidx32);
        } else {
            ROW_RUN(f, 64, colidx);
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
