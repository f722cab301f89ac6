// src/gpu/plan.c: host-side planning of the GPU kernels: SpGEMM row bins (nsparse/spECK style,
// by the flops bound of each row's nnz), batches of the rows with tables in device memory, the
// SpMM variant, and AUTO's CPU-or-GPU decision (HipMCL §III). Plain C, tested on the CPU.
#include <string.h>

#include "gpu/gpu.h"

// Rows per thread below which binning stays on one thread (the pass over a chunk then costs
// less than waking the threads).
enum { BINS_ROWS_PER_THREAD = 32768 };

typedef struct bin_chunk {
    dsmm_idx lo, hi;                 // the chunk's rows
    dsmm_idx count[DSMMI_GPU_NBINS]; // its rows per bin; then its first slot in each bin
    dsmm_idx max_flops, total_flops; // over its rows
    dsmm_idx gtab, gblk;             // its global rows' table entries and blocks; then offsets
} bin_chunk;

// Pass 1 over a chunk: its counts and sums (in locals: the compiler keeps them in registers).
static void chunk_count(bin_chunk *c, const dsmm_idx *flops, dsmm_idx ncols)
{
    dsmm_idx count[DSMMI_GPU_NBINS] = {0}, maxf = 0, total = 0, tab = 0, blk = 0;
    for (dsmm_idx i = c->lo; i < c->hi; i++) {
        dsmm_idx f = flops[i];
        int b = dsmmi_gpu_bin_of(f, ncols);
        count[b]++;
        total += f;
        maxf = f > maxf ? f : maxf;
        if (b == DSMMI_GPU_GLOBAL_BIN) {
            tab += dsmmi_gpu_global_table(f, ncols);
            blk += dsmmi_gpu_global_blocks(f);
        }
    }
    memcpy(c->count, count, sizeof count);
    c->max_flops = maxf;
    c->total_flops = total;
    c->gtab = tab;
    c->gblk = blk;
}

// Pass 2 over a chunk: its rows into their bins from the chunk's first slots (count), and the
// offsets of its global rows from the chunk's first ones (gtab, gblk).
static void chunk_place(const bin_chunk *c, const dsmm_idx *flops, dsmm_idx ncols,
                        dsmmi_gpu_bins *out)
{
    const dsmm_idx g0 = out->start[DSMMI_GPU_GLOBAL_BIN];
    dsmm_idx next[DSMMI_GPU_NBINS], tab = c->gtab, blk = c->gblk;
    int32_t *rows = out->rows;
    memcpy(next, c->count, sizeof next);
    for (dsmm_idx i = c->lo; i < c->hi; i++) {
        dsmm_idx f = flops[i];
        int b = dsmmi_gpu_bin_of(f, ncols);
        dsmm_idx slot = next[b]++;
        rows[slot] = (int32_t)i;
        if (b == DSMMI_GPU_GLOBAL_BIN) {
            dsmm_idx g = slot - g0;
            tab += dsmmi_gpu_global_table(f, ncols);
            blk += dsmmi_gpu_global_blocks(f);
            out->gtab_off[g + 1] = tab;
            out->gblk_off[g + 1] = blk;
        }
    }
}

// A stable counting sort of the rows by bin: contiguous chunks of rows, one per thread, are
// counted, their first slots in every bin are the counts of the chunks before them, and each
// chunk then places its rows. Every bin lists its rows in increasing order and the offsets are
// the same at any thread count.
dsmm_status dsmmi_gpu_bins_make(dsmm_ctx *ctx, const dsmm_idx *flops, dsmm_idx nrows,
                                dsmm_idx ncols, dsmmi_gpu_bins *out)
{
    dsmm_status st = DSMM_OK;
    bin_chunk *ch = NULL;
    memset(out, 0, sizeof *out);
    DSMM_CHECK(ctx, nrows >= 0 && nrows <= INT32_MAX, DSMM_ERR_ARG,
               "gpu spgemm: %lld rows do not fit 32-bit row ids (split the product)",
               (long long)nrows);
    int nt = dsmmi_threads(ctx);
    if ((dsmm_idx)nt > nrows / BINS_ROWS_PER_THREAD) nt = (int)(nrows / BINS_ROWS_PER_THREAD);
    if (nt < 1) nt = 1;
    ch = dsmmi_calloc(ctx, (size_t)nt, sizeof *ch);
    DSMM_CHECK(ctx, ch != NULL, DSMM_ERR_NOMEM, "gpu spgemm: row bins");
    for (int t = 0; t < nt; t++) {
        ch[t].lo = nrows * t / nt;
        ch[t].hi = nrows * (t + 1) / nt;
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nt)
#endif
    for (int t = 0; t < nt; t++) chunk_count(&ch[t], flops, ncols);
    for (int t = 0; t < nt; t++) {
        for (int b = 0; b < DSMMI_GPU_NBINS; b++) out->count[b] += ch[t].count[b];
        out->total_flops += ch[t].total_flops;
        if (ch[t].max_flops > out->max_flops) out->max_flops = ch[t].max_flops;
    }
    for (int b = 0; b < DSMMI_GPU_NBINS; b++) out->start[b + 1] = out->start[b] + out->count[b];
    dsmm_idx next[DSMMI_GPU_NBINS], tab = 0, blk = 0;
    memcpy(next, out->start, sizeof next);
    for (int t = 0; t < nt; t++) { // counts become first slots; sums become first offsets
        for (int b = 0; b < DSMMI_GPU_NBINS; b++) {
            dsmm_idx n = ch[t].count[b];
            ch[t].count[b] = next[b];
            next[b] += n;
        }
        dsmm_idx gt = ch[t].gtab, gb = ch[t].gblk;
        ch[t].gtab = tab;
        ch[t].gblk = blk;
        tab += gt;
        blk += gb;
    }
    out->rows = dsmmi_malloc(ctx, (size_t)nrows + 1, sizeof *out->rows);
    out->gtab_off =
        dsmmi_malloc(ctx, (size_t)out->count[DSMMI_GPU_GLOBAL_BIN] + 1, sizeof *out->gtab_off);
    out->gblk_off =
        dsmmi_malloc(ctx, (size_t)out->count[DSMMI_GPU_GLOBAL_BIN] + 1, sizeof *out->gblk_off);
    DSMM_CHECK(ctx, out->rows && out->gtab_off && out->gblk_off, DSMM_ERR_NOMEM,
               "gpu spgemm: row bins");
    out->gtab_off[0] = 0;
    out->gblk_off[0] = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nt)
#endif
    for (int t = 0; t < nt; t++) chunk_place(&ch[t], flops, ncols, out);
cleanup:
    dsmmi_free(ctx, ch);
    if (st != DSMM_OK) dsmmi_gpu_bins_free(ctx, out);
    return st;
}

void dsmmi_gpu_bins_free(dsmm_ctx *ctx, dsmmi_gpu_bins *b)
{
    if (b == NULL) return;
    dsmmi_free(ctx, b->rows);
    dsmmi_free(ctx, b->gtab_off);
    dsmmi_free(ctx, b->gblk_off);
    memset(b, 0, sizeof *b);
}

void dsmmi_gpu_global_batches(const dsmm_idx *gtab_off, dsmm_idx n, dsmm_idx max_entries,
                              dsmm_idx *bounds, dsmm_idx *nb)
{
    dsmm_idx k = 0;
    bounds[0] = 0;
    for (dsmm_idx lo = 0; lo < n;) {
        dsmm_idx hi = lo + 1; // at least one row, even when it alone is over max_entries
        while (hi < n && gtab_off[hi + 1] - gtab_off[lo] <= max_entries) hi++;
        bounds[++k] = hi;
        lo = hi;
    }
    *nb = k;
}

int dsmmi_gpu_spmm_variant(const dsmm_csr *A)
{
    if (A->nrows == 0 || A->nnz == 0) return 0;
    dsmm_idx longest = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > longest) longest = len;
    }
    double mean = (double)A->nnz / (double)A->nrows;
    return (double)longest > 8.0 * mean + 64.0;
}

dsmm_idx dsmmi_gpu_spmm_cap(dsmm_idx nnz, int lanes, int sm_count)
{
    // groups of `lanes` threads, 2048 threads a multiprocessor, four waves
    double groups = 4.0 * (sm_count > 0 ? sm_count : 132) * (2048.0 / (lanes > 0 ? lanes : 32));
    double cap = (double)nnz / groups;
    return cap < 16 ? 16 : cap > 256 ? 256 : (dsmm_idx)cap;
}

dsmm_status dsmmi_gpu_spmm_segs_make(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx cap,
                                     dsmmi_gpu_spmm_segs *out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx n = 0;
    memset(out, 0, sizeof *out);
    DSMM_CHECK(ctx, cap > 0 && A->nrows <= INT32_MAX, DSMM_ERR_ARG,
               "gpu spmm: split rows need a positive cap and 32-bit row ids");
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > cap) n += (len - 1) / cap; // items past the first cap entries
    }
    if (n == 0) goto cleanup;
    out->row = dsmmi_malloc(ctx, (size_t)n, sizeof *out->row);
    out->begin = dsmmi_malloc(ctx, (size_t)n, sizeof *out->begin);
    DSMM_CHECK(ctx, out->row && out->begin, DSMM_ERR_NOMEM, "gpu spmm: split rows");
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx p = A->rowptr[i] + cap; p < A->rowptr[i + 1]; p += cap) {
            out->row[out->n] = (int32_t)i;
            out->begin[out->n++] = p;
        }
cleanup:
    if (st != DSMM_OK) dsmmi_gpu_spmm_segs_free(ctx, out);
    return st;
}

void dsmmi_gpu_spmm_segs_free(dsmm_ctx *ctx, dsmmi_gpu_spmm_segs *s)
{
    if (s == NULL) return;
    dsmmi_free(ctx, s->row);
    dsmmi_free(ctx, s->begin);
    memset(s, 0, sizeof *s);
}

int dsmmi_gpu_wants(dsmm_ctx *ctx, double flops)
{
    const dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    return g != NULL && g->auto_flops >= 0 && flops >= g->auto_flops;
}
