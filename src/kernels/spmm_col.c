// src/kernels/spmm_col.c: column-wise SpMM, C = alpha * S^T * B + beta * C with S in CSR (S is
// A for C = A^T * B, or A's transpose, i.e. A in CSC, for C = A * B): each row of S, a column
// of the product's sparse operand, scatters one row of B into the rows of C it names. Threads
// own disjoint ranges of C's rows, balanced by the entries of S that fall into them (a
// histogram over column buckets), so no two threads write one row: no atomics, no per-thread
// copies of C, and a result that is bitwise the same at any thread count. Where S's rows are
// too short for every thread to walk them all, threads split S's rows instead, scatter into
// private copies of C and add them (docs/kernels.md, "Column-wise").
#include <string.h>

#include "kernels/kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define BUCKETS_PER_THREAD 1024
// The histogram counts every stride-th entry (a balance, not a count): at least every 8th, and
// about HIST_SAMPLES per thread. Every 8th entry read all of S's column indices (each cache line
// twice), 35 us of facebook's 130 us at k = 8, float, 2 threads.
#define HIST_STRIDE_MIN 8
#define HIST_SAMPLES    2048

#define SPMM_TMPL       "kernels/spmm_col_tmpl.h"
#define SPMM_FN(suffix) col_##suffix
#include "kernels/spmm_instances.h"
#undef SPMM_TMPL

// The instance for value type TY and column width CW (SPMM_PICK) run on the rows at hand,
// A's columns in the CIX array.
#define COL_RUN(TY, CW, CIX)                                                                       \
    SPMM_PICK(TY, CW)                                                                              \
    (rp, S->CIX, av, B, a->ldb, C, ldc, a->k, al, r0, r1, c0, c1, sorted, full, tail)

/* Rows [r0, r1) of S, their entries in columns [c0, c1) only, scattered into C (ldc): the
 * product's own C, or a thread's private buffer of the same shape. */
static void col_part(const dsmmi_spmm_args *a, void *C, dsmm_idx ldc, dsmm_idx r0, dsmm_idx r1,
                     dsmm_idx c0, dsmm_idx c1)
{
    const dsmm_csr *S = a->A;
    const dsmm_idx *rp = S->rowptr;
    int pat = a->av == NULL, sorted = S->sorted, full = c0 == 0 && c1 >= a->m;
    int tail = sorted && !full && c1 >= a->m;
    dsmmi_spmm_args into = *a; // C may be a thread's private buffer
    into.C = C;
    into.ldc = ldc;
    int wide = dsmmi_spmm_wide(&into, 64);
    (void)wide;
    if (a->type == DSMM_DOUBLE) {
        const double *av = a->av;
        const double *B = a->B;
        double al = a->alpha;
        if (S->colidx32) {
            COL_RUN(d, 32, colidx32);
        } else {
            COL_RUN(d, 64, colidx);
        }
    } else {
        const float *av = a->av;
        const float *B = a->B;
        float al = (float)a->alpha;
        if (S->colidx32) {
            COL_RUN(f, 32, colidx32);
        } else {
            COL_RUN(f, 64, colidx);
        }
    }
}

/* Rows [c0, c1) of C: scaled by beta, then every entry of S in those columns scattered. */
static void col_range(const dsmmi_spmm_args *a, dsmm_idx c0, dsmm_idx c1)
{
    dsmmi_spmm_scale_rows(a->C, a->type, a->ldc, c0, c1, a->k, a->beta);
    col_part(a, a->C, a->ldc, 0, a->A->nrows, c0, c1);
}

/* C's rows [i0, i1) += the same rows of the `nbuf` private buffers (m x k, leading dimension
 * k), in buffer order. */
static void add_buffers(const dsmmi_spmm_args *a, void *const *buf, int nbuf, dsmm_idx i0,
                        dsmm_idx i1)
{
    dsmm_idx k = a->k;
    for (int u = 0; u < nbuf; u++) {
        if (a->type == DSMM_DOUBLE) {
            for (dsmm_idx i = i0; i < i1; i++) {
                double *c = (double *)a->C + i * a->ldc;
                const double *x = (const double *)buf[u] + i * k;
                for (dsmm_idx j = 0; j < k; j++) c[j] += x[j];
            }
        } else {
            for (dsmm_idx i = i0; i < i1; i++) {
                float *c = (float *)a->C + i * a->ldc;
                const float *x = (const float *)buf[u] + i * k;
                for (dsmm_idx j = 0; j < k; j++) c[j] += x[j];
            }
        }
    }
}

/* The first row of S from which thread t of `threads` takes rows: t / threads of S's entries
 * lie before it. */
static dsmm_idx split_rows(const dsmm_csr *S, int t, int threads)
{
    dsmm_idx want = (dsmm_idx)((double)S->nnz * t / threads), lo = 0, hi = S->nrows;
    while (lo < hi) { // first row r with rowptr[r] >= want
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (S->rowptr[mid] < want) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return t == threads ? S->nrows : lo;
}

/* Short rows of B (up to col_split_bytes): threads split S's rows by entries
 * instead. Thread 0 scatters into C (scaled by beta first), thread t > 0 into a zeroed private
 * m x k buffer; then each thread adds the buffers' rows of its share of C, in buffer order. */
static dsmm_status col_private(dsmm_ctx *ctx, const dsmmi_spmm_args *a, int threads,
                               dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    size_t bytes = (size_t)a->m * (size_t)a->k * dsmmi_type_size(a->type);
    void **buf = dsmmi_calloc(ctx, (size_t)threads, sizeof *buf);
    DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "spmm col: no memory for buffer pointers");
    for (int t = 1; t < threads; t++) {
        buf[t] = dsmmi_malloc(ctx, bytes, 1);
        DSMM_CHECK(ctx, buf[t] != NULL, DSMM_ERR_NOMEM,
                   "spmm col: no memory for a private %zu-byte copy of C", bytes);
    }
    info->workspace_bytes = (size_t)(threads - 1) * bytes + (size_t)threads * sizeof *buf;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dsmm_idx r0 = split_rows(a->A, t, threads), r1 = split_rows(a->A, t + 1, threads);
        if (t == 0) {
            dsmmi_spmm_scale_rows(a->C, a->type, a->ldc, 0, a->m, a->k, a->beta);
            col_part(a, a->C, a->ldc, r0, r1, 0, a->m);
        } else {
            memset(buf[t], 0, bytes); // first touch by the thread that writes it
            col_part(a, buf[t], a->k, r0, r1, 0, a->m);
        }
#ifdef _OPENMP
#pragma omp barrier
#endif
        dsmm_idx i0 = a->m * t / threads, i1 = a->m * (t + 1) / threads;
        add_buffers(a, buf + 1, threads - 1, i0, i1);
    }
cleanup:
    if (buf != NULL)
        for (int t = 1; t < threads; t++) dsmmi_free(ctx, buf[t]);
    dsmmi_free(ctx, buf);
    return st;
}

/* Column bounds[0..threads] of the threads' row ranges of C: thread t starts at the first
 * bucket (of bw columns, nb in all, threads histograms of nb counts) where the running count
 * of the `sampled` entries reaches t / threads of them. */
static void split_columns(const dsmm_idx *hist, dsmm_idx nb, dsmm_idx bw, int threads,
                          dsmm_idx sampled, dsmm_idx m, dsmm_idx *bounds)
{
    dsmm_idx run = 0;
    int t = 1;
    bounds[0] = 0;
    for (dsmm_idx bk = 0; bk < nb && t < threads; bk++) {
        for (int u = 0; u < threads; u++) run += hist[(size_t)u * (size_t)nb + (size_t)bk];
        while (t < threads && run >= (dsmm_idx)((double)sampled * t / threads)) {
            dsmm_idx c = (bk + 1) * bw; // the first column of the next bucket
            bounds[t++] = c < m ? c : m;
        }
    }
    while (t <= threads) bounds[t++] = m;
}

dsmm_status dsmmi_spmm_col(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    const dsmm_csr *S = a->A;
    dsmm_idx m = a->m; // rows of C = columns of S
    dsmm_idx *hist = NULL, *bounds = NULL;
    int threads = dsmmi_spmm_threads(ctx, a);
    if (threads > m) threads = (int)m;
    info->threads = threads;
    info->workspace_bytes = 0;
    // With owned ranges of C every thread walks all of S's rows (to find the entries of its
    // columns) and mispredicts the end of each row's walk: a cost per row of S and thread,
    // which short rows of B (k * w bytes) do not repay. Private copies of C cost per row of C
    // and byte of B's row instead (cleared, then added). Measured (docs/kernels.md): private
    // copies were faster at k = 8 on all four inputs tried, owned ranges at k = 64 on seven of
    // eight; so threads split S's rows when B's rows hold col_split_bytes (64) or fewer, and
    // the copies are small.
    if (threads > 1 && S->nrows > 0 &&
        (double)a->k * (double)dsmmi_type_size(a->type) <= dsmmi_spmm_tune.col_split_bytes) {
        double copies =
            (double)(threads - 1) * (double)m * (double)a->k * (double)dsmmi_type_size(a->type);
        if (copies <= (double)dsmmi_spmm_tune.col_private_max &&
            dsmmi_budget_room(ctx, (size_t)copies))
            return col_private(ctx, a, threads, info);
        threads = 1;
        info->threads = 1;
    }
    if (threads <= 1) {
        col_range(a, 0, m);
        return DSMM_OK;
    }

    // Entries of S per bucket of 2^shift consecutive columns (every stride-th entry), each
    // thread counting its share of the entries into its own histogram; then one thread turns
    // the sum into column bounds, and every thread takes its range of C's rows.
    int shift = 0;
    while (((m - 1) >> shift) >= (dsmm_idx)threads * BUCKETS_PER_THREAD) shift++;
    dsmm_idx nb = ((m - 1) >> shift) + 1;
    dsmm_idx stride = S->nnz / ((dsmm_idx)threads * HIST_SAMPLES);
    if (stride < HIST_STRIDE_MIN) stride = HIST_STRIDE_MIN;
    hist = dsmmi_calloc(ctx, (size_t)threads * (size_t)nb, sizeof(dsmm_idx));
    bounds = dsmmi_malloc(ctx, (size_t)threads + 1, sizeof(dsmm_idx));
    DSMM_CHECK(ctx, hist != NULL && bounds != NULL, DSMM_ERR_NOMEM,
               "spmm col: no memory for %lld column buckets", (long long)nb);
    info->workspace_bytes = ((size_t)threads * (size_t)nb + (size_t)threads + 1) * sizeof(dsmm_idx);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dsmm_idx *h = hist + (size_t)t * (size_t)nb;
        dsmm_idx q0 = S->nnz * t / threads, q1 = S->nnz * (t + 1) / threads;
        q0 += (stride - q0 % stride) % stride; // the same entries at any split
        if (S->colidx32) {
            const int32_t *ci = S->colidx32;
            for (dsmm_idx q = q0; q < q1; q += stride) h[(dsmm_idx)ci[q] >> shift]++;
        } else {
            const dsmm_idx *ci = S->colidx;
            for (dsmm_idx q = q0; q < q1; q += stride) h[ci[q] >> shift]++;
        }
#ifdef _OPENMP
#pragma omp barrier
#pragma omp single
#endif
        split_columns(hist, nb, (dsmm_idx)1 << shift, threads, (S->nnz + stride - 1) / stride, m,
                      bounds);
        if (bounds[t] < bounds[t + 1]) col_range(a, bounds[t], bounds[t + 1]);
    }
cleanup:
    dsmmi_free(ctx, hist);
    dsmmi_free(ctx, bounds);
    return st;
}
