// src/kernels/spmm_col.c: column-wise SpMM, C = alpha * S^T * B + beta * C with S in CSR (S is
// A for C = A^T * B, or A's transpose, i.e. A in CSC, for C = A * B): each row of S, a column
// of the product's sparse operand, scatters one row of B into the rows of C it names. Threads
// own disjoint ranges of C's rows, balanced by the entries of S that fall into them (a
// histogram over column buckets), so no two threads write one row: no atomics, no per-thread
// copies of C, and a result that is bitwise the same at any thread count.
#include <string.h>

#include "kernels/kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define MIN_WORK_PER_THREAD 65536 // nnz * k below which another thread costs more than it brings
#define BUCKETS_PER_THREAD  1024
#define COL_MIN_ROW_WORK    256.0 // multiply-adds per row of S below which one thread is faster
#define HIST_STRIDE         8     // the histogram counts every 8th entry: a balance, not a count

// clang-format off
#define T double
#define V dsmmi_v4d
#define VL 4
#define PAT 0
#define CI dsmm_idx
#define NAME col_d64
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#define CI int32_t
#define NAME col_d32
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#undef PAT
#define PAT 1
#define CI dsmm_idx
#define NAME col_d64p
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#define CI int32_t
#define NAME col_d32p
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#undef PAT
#undef VL
#undef V
#undef T

#define T float
#define V dsmmi_v8f
#define VL 8
#define PAT 0
#define CI dsmm_idx
#define NAME col_f64
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#define CI int32_t
#define NAME col_f32
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#undef PAT
#define PAT 1
#define CI dsmm_idx
#define NAME col_f64p
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#define CI int32_t
#define NAME col_f32p
#include "kernels/spmm_col_tmpl.h"
#undef CI
#undef NAME
#undef PAT
#undef VL
#undef V
#undef T
// clang-format on

/* Rows [c0, c1) of C: scaled by beta, then every entry of S in those columns scattered. */
static void col_range(const dsmmi_spmm_args *a, dsmm_idx c0, dsmm_idx c1)
{
    const dsmm_csr *S = a->A;
    const dsmm_idx *rp = S->rowptr;
    int pat = a->av == NULL, sorted = S->sorted;
    dsmmi_spmm_scale_rows(a->C, a->type, a->ldc, c0, c1, a->k, a->beta);
    if (a->type == DSMM_DOUBLE) {
        const double *av = a->av;
        const double *B = a->B;
        double *C = a->C;
        double al = a->alpha;
        if (S->colidx32) {
            (pat ? col_d32p : col_d32)(rp, S->colidx32, av, B, a->ldb, C, a->ldc, a->k, al,
                                       S->nrows, c0, c1, sorted);
        } else {
            (pat ? col_d64p : col_d64)(rp, S->colidx, av, B, a->ldb, C, a->ldc, a->k, al, S->nrows,
                                       c0, c1, sorted);
        }
    } else {
        const float *av = a->av;
        const float *B = a->B;
        float *C = a->C;
        float al = (float)a->alpha;
        if (S->colidx32) {
            (pat ? col_f32p : col_f32)(rp, S->colidx32, av, B, a->ldb, C, a->ldc, a->k, al,
                                       S->nrows, c0, c1, sorted);
        } else {
            (pat ? col_f64p : col_f64)(rp, S->colidx, av, B, a->ldb, C, a->ldc, a->k, al, S->nrows,
                                       c0, c1, sorted);
        }
    }
}

dsmm_status dsmmi_spmm_col(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    const dsmm_csr *S = a->A;
    dsmm_idx m = a->m; // rows of C = columns of S
    dsmm_idx *hist = NULL, *bounds = NULL;
    double work = (double)S->nnz * (double)a->k + (double)m * (double)a->k;
    int threads = dsmmi_threads(ctx);
    while (threads > 1 && work < (double)threads * MIN_WORK_PER_THREAD) threads--;
    if (threads > m) threads = (int)m;
    // Every thread walks all of S's rows (to find the entries of its columns), so a thread
    // pays off only when a row brings enough work: measured (docs/kernels.md), 2 threads were
    // slower than 1 below about 256 multiply-adds per row of S.
    if (S->nrows > 0 && (double)S->nnz / (double)S->nrows * (double)a->k < COL_MIN_ROW_WORK)
        threads = 1;
    info->threads = threads;
    info->workspace_bytes = 0;
    if (threads <= 1) {
        col_range(a, 0, m);
        return DSMM_OK;
    }

    // Entries of S per bucket of columns, counted by every thread over its share of S's rows.
    dsmm_idx nb = (dsmm_idx)threads * BUCKETS_PER_THREAD;
    if (nb > m) nb = m;
    hist = dsmmi_calloc(ctx, (size_t)(threads + 1) * (size_t)nb, sizeof(dsmm_idx));
    bounds = dsmmi_malloc(ctx, (size_t)threads + 1, sizeof(dsmm_idx));
    DSMM_CHECK(ctx, hist != NULL && bounds != NULL, DSMM_ERR_NOMEM,
               "spmm col: no memory for %lld column buckets", (long long)nb);
    info->workspace_bytes =
        ((size_t)(threads + 1) * (size_t)nb + (size_t)threads + 1) * sizeof(dsmm_idx);
    double scale = (double)nb / (double)m;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dsmm_idx *h = hist + (size_t)(t + 1) * (size_t)nb;
        dsmm_idx q0 = S->nnz * t / threads, q1 = S->nnz * (t + 1) / threads;
        q0 += (HIST_STRIDE - q0 % HIST_STRIDE) % HIST_STRIDE; // the same entries at any split
        for (dsmm_idx q = q0; q < q1; q += HIST_STRIDE) {
            dsmm_idx bk = (dsmm_idx)((double)dsmm_csr_col(S, q) * scale);
            h[bk < nb ? bk : nb - 1]++;
        }
    }
    // Thread t starts at the first bucket where the running count reaches t / threads of the
    // sampled entries.
    dsmm_idx sampled = (S->nnz + HIST_STRIDE - 1) / HIST_STRIDE;
    bounds[0] = 0;
    dsmm_idx run = 0;
    int t = 1;
    for (dsmm_idx bk = 0; bk < nb && t < threads; bk++) {
        for (int u = 1; u <= threads; u++) run += hist[(size_t)u * (size_t)nb + (size_t)bk];
        while (t < threads && run >= (dsmm_idx)((double)sampled * t / threads)) {
            // First column of bucket bk + 1 (the first column whose bucket index exceeds bk).
            dsmm_idx c = (dsmm_idx)((double)(bk + 1) / scale);
            while (c > 0 && (dsmm_idx)((double)(c - 1) * scale) > bk) c--;
            while (c < m && (dsmm_idx)((double)c * scale) <= bk) c++;
            bounds[t++] = c;
        }
    }
    while (t <= threads) bounds[t++] = m;
    for (int u = 1; u <= threads; u++) {
        if (bounds[u] < bounds[u - 1]) bounds[u] = bounds[u - 1];
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int u = 0;
#ifdef _OPENMP
        u = omp_get_thread_num();
#endif
        if (bounds[u] < bounds[u + 1]) col_range(a, bounds[u], bounds[u + 1]);
    }
cleanup:
    dsmmi_free(ctx, hist);
    dsmmi_free(ctx, bounds);
    return st;
}
