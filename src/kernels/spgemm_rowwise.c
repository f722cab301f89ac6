// src/kernels/spgemm_rowwise.c: the row-wise (Gustavson) SpGEMM driver behind the AUTO, HASH,
// HEAP and DENSE table entries: flops per row, rows split into chunks of equal flops (prefix
// sum + binary search, not equal row counts, so skewed graphs stay balanced), a symbolic
// count pass, exact allocation of C, and a numeric fill pass; or the numeric pass alone for
// a pattern known from an earlier symbolic call. Each row picks its accumulator (hash, heap,
// dense, one-row copy; masked rows the pattern-driven one) as described in kernels.h.
// Per-thread workspaces are sized before each pass from the rows the thread will see.
#include <sched.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/stream.h"

#ifdef _OPENMP
#include <omp.h>
#endif

// clang-format off
dsmmi_spgemm_tuning dsmmi_spgemm_tune = {
    .dense_max_cols = (dsmm_idx)1 << 24,
    .cache_cols     = (dsmm_idx)1 << 17,
    .sym_dense      = 16.0,
    .fill_dense     = 32.0,
    .fill_dense_cached = 1e18, // cached: every row (measured: docs/kernels.md)
    .heap_cf        = 1.5,
    .heap_k         = 8,
    .dense_sort_ratio = 16.0,
    .dense_rank_max = 64,
    .dense_rank_vec = 3,
    .dense_rank_words = 1.0,
    .dense_summary = 4.0,
    .dense_summary_regs = 1,
    .prefetch = 4,
    .prefetch_bp = 1,
    .one_pass = 1,
    .one_pass_max = (size_t)1 << 40,
    .one_pass_threads = 1 << 20,
    .one_pass_mt_max = (size_t)1 << 40,
    .one_pass_stage = (dsmm_idx)1 << 14,
    .one_pass_slots = 2,
    .one_pass_runs = 8,
    .one_pass_stream_min = (size_t)8 << 20,
    .min_thread_flops = 65536,
    .dense_mark_ratio = 4.0,
    .fill_mark_ratio = 1.0,
    .dense_scan_ratio = 2.0,
    .pos_max_cols   = (dsmm_idx)1 << 22,
};
// clang-format on

enum { ACC_NONE = 0, ACC_HASH, ACC_HEAP, ACC_DENSE, ACC_COPY, ACC_MASK };

#define CHUNKS_PER_THREAD 8

typedef struct plan {
    dsmmi_rw rw;
    dsmm_spgemm_alg alg;
    dsmm_idx nrows;
    dsmm_idx *wprefix; // nrows + 1: prefix sum of (flops_i + 1), the balancing weight
    dsmm_idx *bounds;  // nchunks + 1 row bounds
    int nchunks, threads;
    int sort;
    int b_dups; // B has repeated columns in a row: no one-row copy
    dsmm_idx flops;
    // owned by the plan
    dsmm_csr *Bs;      // sorted copy of B, when B was not sorted
    void *bcol, *bval; // B's columns / values converted to C's width / type
    dsmmi_acc *ws;     // one workspace per thread
    size_t conv_bytes, ws_bytes;
} plan;

typedef struct need {
    dsmm_idx hash_slots; // table entries
    dsmm_idx heap_k;
    dsmm_idx scratch;
    int dense, dense_vals, dense_bits, dense_seen, pos;
} need;

static inline dsmm_idx row_f(const plan *pl, dsmm_idx i)
{
    return dsmmi_rw_flops(&pl->rw, i);
}

static inline dsmm_idx pow2_slots(dsmm_idx n)
{
    dsmm_idx size = 16;
    while (size < 2 * n) size <<= 1;
    return size;
}

// The accumulator a forced kernel name means for every row; ACC_NONE for AUTO.
static int forced(dsmm_spgemm_alg alg)
{
    switch (alg) {
    case DSMM_SPGEMM_HASH:
        return ACC_HASH;
    case DSMM_SPGEMM_HEAP:
        return ACC_HEAP;
    case DSMM_SPGEMM_DENSE:
        return ACC_DENSE;
    default:
        return ACC_NONE;
    }
}

static int pick_count(const plan *pl, dsmm_idx i)
{
    const dsmmi_rw *m = &pl->rw;
    dsmm_idx f = row_f(pl, i);
    if (m->M) return ACC_MASK;
    if (f == 0) return ACC_NONE;
    if (forced(pl->alg) != ACC_NONE) return forced(pl->alg);
    const dsmmi_spgemm_tuning *t = &dsmmi_spgemm_tune;
    if (m->ncols <= t->cache_cols ||
        (m->ncols <= t->dense_max_cols && (double)f * t->sym_dense >= (double)m->ncols))
        return ACC_DENSE;
    return ACC_HASH;
}

// Row i of C is B's row A(i,:) names: A's row has one entry and B no repeated columns. The
// count takes its length and the fill copies it.
static inline int row_is_b_row(const plan *pl, dsmm_idx i)
{
    return pl->rw.ap[i + 1] - pl->rw.ap[i] == 1 && !pl->b_dups;
}

static int pick_fill(const plan *pl, dsmm_idx i, dsmm_idx nz)
{
    const dsmmi_rw *m = &pl->rw;
    dsmm_idx f = row_f(pl, i), k = m->ap[i + 1] - m->ap[i];
    if (m->M) return ACC_MASK;
    if (nz == 0) return ACC_NONE;
    if (forced(pl->alg) != ACC_NONE) return forced(pl->alg);
    const dsmmi_spgemm_tuning *t = &dsmmi_spgemm_tune;
    if (row_is_b_row(pl, i)) return ACC_COPY;
    if (m->ncols <= t->cache_cols
            ? (double)nz * t->fill_dense_cached >= (double)m->ncols
            : (m->ncols <= t->dense_max_cols && (double)nz * t->fill_dense >= (double)m->ncols))
        return ACC_DENSE;
    if (k <= t->heap_k && (double)f <= t->heap_cf * (double)nz) return ACC_HEAP;
    return ACC_HASH;
}

static void need_add(need *n, const plan *pl, dsmm_idx i, int acc, int numeric, dsmm_idx nz)
{
    const dsmmi_rw *m = &pl->rw;
    dsmm_idx f = row_f(pl, i), k = m->ap[i + 1] - m->ap[i];
    dsmm_idx h = f < m->ncols ? f : m->ncols;
    switch (acc) {
    case ACC_HASH:
        if (pow2_slots(h) > n->hash_slots) n->hash_slots = pow2_slots(h);
        if (numeric && pl->sort && nz > n->scratch) n->scratch = nz;
        break;
    case ACC_HEAP:
        if (k > n->heap_k) n->heap_k = k;
        break;
    case ACC_DENSE:
        n->dense = 1;
        if (numeric && m->kind != DSMMI_K_PATTERN) n->dense_vals = 1;
        if (numeric && nz + 1 > n->scratch) n->scratch = nz + 1; // the row's column list
        if (numeric) n->dense_bits = 1;
        if (numeric && DSMMI_PLUS_KIND(m->kind)) n->dense_seen = 1;
        break;
    case ACC_MASK: {
        dsmm_idx mk = m->M->rowptr[i + 1] - m->M->rowptr[i];
        if (mk > n->scratch) n->scratch = mk;
        if (m->ncols <= dsmmi_spgemm_tune.pos_max_cols) {
            n->pos = 1;
        } else if (pow2_slots(mk) > n->hash_slots) {
            n->hash_slots = pow2_slots(mk);
        }
        break;
    }
    default:
        break;
    }
}

// The dense fill's bitmap: a bit per column, then a summary bit per bitmap word.
static size_t bitmap_words(dsmm_idx ncols)
{
    size_t words = ((size_t)ncols + 63) / 64;
    return words + (words + 63) / 64;
}

static void acc_free(dsmm_ctx *ctx, dsmmi_acc *w)
{
    w->hkeys = dsmmi_free(ctx, w->hkeys);
    w->hvals = dsmmi_free(ctx, w->hvals);
    w->hslot = dsmmi_free(ctx, w->hslot);
    w->bitmap = dsmmi_free(ctx, w->bitmap);
    w->stamp = dsmmi_free(ctx, w->stamp);
    w->tag = 0;
    w->dvals = dsmmi_free(ctx, w->dvals);
    w->seen = dsmmi_free(ctx, w->seen);
    w->hp_pos = dsmmi_free(ctx, w->hp_pos);
    w->hp_end = dsmmi_free(ctx, w->hp_end);
    w->hp_a = dsmmi_free(ctx, w->hp_a);
    w->hp_key = dsmmi_free(ctx, w->hp_key);
    w->hp_src = dsmmi_free(ctx, w->hp_src);
    w->pos = dsmmi_free(ctx, w->pos);
    w->skey = dsmmi_free(ctx, w->skey);
    w->sval = dsmmi_free(ctx, w->sval);
    w->touched = dsmmi_free(ctx, w->touched);
    w->hcap = w->hp_cap = w->scap = 0;
}

// Grows w to cover n (never shrinks); bytes gets the workspace's size.
static dsmm_status acc_grow(dsmm_ctx *ctx, dsmmi_acc *w, const need *n, dsmm_idx ncols,
                            size_t *bytes)
{
    dsmm_status st = DSMM_OK;
    if (n->hash_slots > w->hcap) {
        w->hkeys = dsmmi_free(ctx, w->hkeys);
        w->hvals = dsmmi_free(ctx, w->hvals);
        w->hslot = dsmmi_free(ctx, w->hslot);
        w->hcap = 0;
        w->hkeys = dsmmi_malloc(ctx, (size_t)n->hash_slots, sizeof(dsmm_idx));
        w->hvals = dsmmi_malloc(ctx, (size_t)n->hash_slots, sizeof(double));
        w->hslot = dsmmi_malloc(ctx, (size_t)n->hash_slots, sizeof(int32_t));
        DSMM_CHECK(ctx, w->hkeys && w->hvals && w->hslot, DSMM_ERR_NOMEM,
                   "spgemm: hash accumulator of %lld entries", (long long)n->hash_slots);
        w->hcap = n->hash_slots;
    }
    if (n->dense && w->stamp == NULL) {
        w->stamp = dsmmi_calloc(ctx, (size_t)ncols, sizeof(uint32_t));
        DSMM_CHECK(ctx, w->stamp, DSMM_ERR_NOMEM, "spgemm: dense stamps of %lld columns",
                   (long long)ncols);
        w->tag = dsmmi_spgemm_tune.dense_first_tag;
    }
    if (n->dense_bits && w->bitmap == NULL) {
        w->bitmap = dsmmi_calloc(ctx, bitmap_words(ncols), sizeof(uint64_t));
        DSMM_CHECK(ctx, w->bitmap, DSMM_ERR_NOMEM, "spgemm: dense bitmap of %lld columns",
                   (long long)ncols);
    }
    if (n->dense_vals && w->dvals == NULL) {
        w->dvals = dsmmi_calloc(ctx, (size_t)ncols, sizeof(double));
        DSMM_CHECK(ctx, w->dvals, DSMM_ERR_NOMEM, "spgemm: dense accumulator of %lld columns",
                   (long long)ncols);
    }
    if (n->dense_seen && w->seen == NULL) {
        w->seen = dsmmi_calloc(ctx, (size_t)ncols, 1);
        DSMM_CHECK(ctx, w->seen, DSMM_ERR_NOMEM, "spgemm: dense reach marks of %lld columns",
                   (long long)ncols);
    }
    if (n->heap_k > w->hp_cap) {
        w->hp_pos = dsmmi_free(ctx, w->hp_pos);
        w->hp_end = dsmmi_free(ctx, w->hp_end);
        w->hp_a = dsmmi_free(ctx, w->hp_a);
        w->hp_key = dsmmi_free(ctx, w->hp_key);
        w->hp_src = dsmmi_free(ctx, w->hp_src);
        w->hp_cap = 0;
        size_t k = (size_t)n->heap_k;
        w->hp_pos = dsmmi_malloc(ctx, k, sizeof(dsmm_idx));
        w->hp_end = dsmmi_malloc(ctx, k, sizeof(dsmm_idx));
        w->hp_a = dsmmi_malloc(ctx, k, sizeof(double));
        w->hp_key = dsmmi_malloc(ctx, k, sizeof(dsmm_idx));
        w->hp_src = dsmmi_malloc(ctx, k, sizeof(int32_t));
        DSMM_CHECK(ctx, w->hp_pos && w->hp_end && w->hp_a && w->hp_key && w->hp_src, DSMM_ERR_NOMEM,
                   "spgemm: heap of %lld rows", (long long)n->heap_k);
        w->hp_cap = n->heap_k;
    }
    if (n->pos && w->pos == NULL) {
        w->pos = dsmmi_malloc(ctx, (size_t)ncols, sizeof(int32_t));
        DSMM_CHECK(ctx, w->pos, DSMM_ERR_NOMEM, "spgemm: position map of %lld columns",
                   (long long)ncols);
        memset(w->pos, 0xff, (size_t)ncols * sizeof(int32_t)); // all -1
    }
    if (n->scratch > w->scap) {
        w->skey = dsmmi_free(ctx, w->skey);
        w->sval = dsmmi_free(ctx, w->sval);
        w->touched = dsmmi_free(ctx, w->touched);
        w->scap = 0;
        w->skey = dsmmi_malloc(ctx, (size_t)n->scratch, sizeof(dsmm_idx));
        w->sval = dsmmi_malloc(ctx, (size_t)n->scratch, sizeof(double));
        w->touched = dsmmi_calloc(ctx, (size_t)n->scratch, 1);
        DSMM_CHECK(ctx, w->skey && w->sval && w->touched, DSMM_ERR_NOMEM,
                   "spgemm: row scratch of %lld entries", (long long)n->scratch);
        w->scap = n->scratch;
    }
cleanup:
    *bytes = (size_t)w->hcap * (sizeof(dsmm_idx) + sizeof(double) + sizeof(int32_t)) +
             (w->bitmap ? bitmap_words(ncols) * 8 : 0) + (w->dvals ? (size_t)ncols * 8 : 0) +
             (w->seen ? (size_t)ncols : 0) + (w->stamp ? (size_t)ncols * 4 : 0) +
             (w->pos ? (size_t)ncols * 4 : 0) + (size_t)w->hp_cap * 36 + (size_t)w->scap * 17;
    return st;
}

// Numeric reuse goes through the dense accumulator when it is cache-sized (no mask: masked
// products outside C's pattern must be skipped, which the slot map does).
static int known_dense(const plan *pl)
{
    return pl->rw.M == NULL && pl->rw.ncols <= dsmmi_spgemm_tune.cache_cols;
}

// What the rows of chunks c0, c0 + step, ... need for one pass. fill: fill choices (nz from
// crowptr); known: the numeric phase of a known pattern; else count choices.
static need chunks_need(const plan *pl, const dsmm_idx *crowptr, int fill, int known, int c0,
                        int step)
{
    need n = {0};
    for (int c = c0; c < pl->nchunks; c += step) {
        for (dsmm_idx i = pl->bounds[c]; i < pl->bounds[c + 1]; i++) {
            if (known) {
                dsmm_idx nz = crowptr[i + 1] - crowptr[i];
                if (known_dense(pl)) {
                    n.dense = n.dense_vals = 1;
                    n.dense_seen = DSMMI_PLUS_KIND(pl->rw.kind);
                    continue;
                }
                if (nz > n.scratch) n.scratch = nz;
                if (pl->rw.ncols <= dsmmi_spgemm_tune.pos_max_cols)
                    n.pos = 1;
                else if (pow2_slots(nz) > n.hash_slots)
                    n.hash_slots = pow2_slots(nz);
            } else if (fill) {
                dsmm_idx nz = crowptr[i + 1] - crowptr[i];
                need_add(&n, pl, i, pick_fill(pl, i, nz), 1, nz);
            } else {
                need_add(&n, pl, i, pick_count(pl, i), 0, 0);
            }
        }
    }
    return n;
}

// Sizes every thread's workspace for one pass. A known pattern's chunks go to whichever
// thread is free (fill_pass): every workspace covers every row, the need computed once.
// Else each thread's own chunks, one in every `threads`.
static dsmm_status size_workspaces(dsmm_ctx *ctx, const plan *pl, dsmmi_acc *ws,
                                   const dsmm_idx *crowptr, int fill, int known, size_t *ws_bytes)
{
    dsmm_status st = DSMM_OK;
    size_t total = 0;
    need n = {0};
    for (int t = 0; t < pl->threads; t++) {
        if (!known)
            n = chunks_need(pl, crowptr, fill, 0, t, pl->threads);
        else if (t == 0)
            n = chunks_need(pl, crowptr, fill, 1, 0, 1);
        size_t b = 0;
        DSMM_TRY(acc_grow(ctx, &ws[t], &n, pl->rw.ncols, &b));
        total += b;
    }
cleanup:
    if (total > *ws_bytes) *ws_bytes = total;
    return st;
}

static dsmm_idx count_one(dsmmi_acc *w, const plan *pl, dsmm_idx i)
{
    const dsmmi_rw *m = &pl->rw;
    if (m->M == NULL && row_is_b_row(pl, i)) {
        dsmm_idx r = dsmmi_rw_acol(m, m->ap[i]);
        return m->bp[r + 1] - m->bp[r];
    }
    switch (pick_count(pl, i)) {
    case ACC_HASH:
        return dsmmi_hash_count(w, &pl->rw, i);
    case ACC_HEAP:
        return dsmmi_heap_count(w, &pl->rw, i);
    case ACC_DENSE:
        return dsmmi_dense_count(w, &pl->rw, i);
    case ACC_MASK:
        return dsmmi_masked_count(w, &pl->rw, i);
    default:
        return 0;
    }
}

static dsmm_status count_pass(dsmm_ctx *ctx, const plan *pl, dsmmi_acc *ws, dsmm_idx *rowptr)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(pl->threads)
#endif
    for (int c = 0; c < pl->nchunks; c++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        for (dsmm_idx i = pl->bounds[c]; i < pl->bounds[c + 1]; i++)
            rowptr[i + 1] = count_one(&ws[t], pl, i);
    }
    (void)ctx;
    return DSMM_OK;
}

typedef struct counters {
    dsmm_idx hash, heap, dense, masked;
    int bad;          // a row wrote a different count than its symbolic one (a dsmm bug)
    dsmm_idx bad_row; // numeric_known: first row whose pattern did not match, else -1
    int unsorted;     // some row may be unsorted
} counters;

static void fill_pass(const plan *pl, dsmmi_acc *ws, dsmm_csr *C, int known, counters *tot)
{
    size_t cw = C->colidx32 ? sizeof(int32_t) : sizeof(dsmm_idx);
    size_t vw = dsmmi_type_size(C->type);
    char *cc = C->colidx32 ? (char *)C->colidx32 : (char *)C->colidx;
    char *cv = (char *)C->val;
    int want_vals = pl->rw.kind != DSMMI_K_PATTERN;
    int next = 0; // known: the next chunk to take
    tot->bad_row = -1;
#ifdef _OPENMP
#pragma omp parallel num_threads(pl->threads)
#endif
    {
        counters my = {0};
        my.bad_row = -1;
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        // Chunk after chunk: with a known pattern (every workspace covers every row), the
        // next chunk not taken, so a thread slowed down is not waited for; else this
        // thread's own, one in every `threads` (its workspace was sized for them).
        for (int c = t;; c += pl->threads) {
            if (known) c = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
            if (c >= pl->nchunks) break;
            for (dsmm_idx i = pl->bounds[c]; i < pl->bounds[c + 1]; i++) {
                dsmm_idx p = C->rowptr[i], nz = C->rowptr[i + 1] - p;
                void *rc = cc + (size_t)p * cw;
                void *rv = want_vals ? cv + (size_t)p * vw : NULL;
                if (known) {
                    if (nz == 0 && row_f(pl, i) == 0) continue;
                    dsmm_idx got = known_dense(pl)
                                       ? dsmmi_dense_known(&ws[t], &pl->rw, i, row_f(pl, i), rc, nz,
                                                           C->sorted, rv)
                                       : dsmmi_numeric_known(&ws[t], &pl->rw, i, rc, nz, rv);
                    if (got < 0 && my.bad_row < 0) my.bad_row = i;
                    continue;
                }
                dsmm_idx got = nz;
                switch (pick_fill(pl, i, nz)) {
                case ACC_HASH:
                    got = dsmmi_hash_fill(&ws[t], &pl->rw, i, rc, rv, pl->sort);
                    my.hash++;
                    my.unsorted |= !pl->sort && nz > 1;
                    break;
                case ACC_HEAP:
                    got = dsmmi_heap_fill(&ws[t], &pl->rw, i, rc, rv);
                    my.heap++;
                    break;
                case ACC_COPY:
                    got = dsmmi_copy_fill(&pl->rw, i, rc, rv);
                    my.heap++;
                    break;
                case ACC_DENSE:
                    got = dsmmi_dense_fill(&ws[t], &pl->rw, i, row_f(pl, i), rc, rv);
                    my.dense++;
                    break;
                case ACC_MASK:
                    got = dsmmi_masked_fill(&ws[t], &pl->rw, i, rc, rv, pl->sort);
                    my.masked++;
                    my.unsorted |= !pl->sort && !pl->rw.M->sorted && nz > 1;
                    break;
                default:
                    break;
                }
                my.bad |= got != nz;
            }
        }
#ifdef _OPENMP
#pragma omp critical(dsmmi_spgemm_fill)
#endif
        {
            tot->hash += my.hash;
            tot->heap += my.heap;
            tot->dense += my.dense;
            tot->masked += my.masked;
            tot->bad |= my.bad;
            tot->unsorted |= my.unsorted;
            if (my.bad_row >= 0 && (tot->bad_row < 0 || my.bad_row < tot->bad_row))
                tot->bad_row = my.bad_row;
        }
    }
}

void dsmmi_split_prefix(const dsmm_idx *wprefix, dsmm_idx nrows, int nparts, dsmm_idx *bounds)
{
    dsmm_idx total = wprefix[nrows];
    bounds[0] = 0;
    for (int c = 1; c < nparts; c++) {
        dsmm_idx target = (dsmm_idx)((double)total * c / nparts);
        dsmm_idx lo = bounds[c - 1], hi = nrows;
        while (lo < hi) { // first row i with wprefix[i] >= target
            dsmm_idx mid = lo + (hi - lo) / 2;
            if (wprefix[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        bounds[c] = lo;
    }
    bounds[nparts] = nrows;
}

// Sorted copy of B keeping repeated columns as separate entries (like the reference kernel):
// the heap merge, the dense bounds and the one-row copy need sorted B rows.
static dsmm_status sort_b_copy(dsmm_ctx *ctx, const dsmm_csr *B, plan *pl)
{
    dsmm_status st = DSMM_OK;
    double *v1 = NULL, *v0 = NULL;
    dsmm_idx *c0 = NULL;
    DSMM_TRY(dsmm_csr_copy(ctx, B, B->type, &pl->Bs));
    DSMM_TRY(dsmm_csr_set_col_width(pl->Bs, 64));
    dsmm_csr *Bs = pl->Bs;
    c0 = dsmmi_malloc(ctx, (size_t)Bs->nnz, sizeof *c0);
    DSMM_CHECK(ctx, c0 != NULL, DSMM_ERR_NOMEM, "spgemm: sorting a copy of B");
    if (Bs->type != DSMM_PATTERN) {
        v1 = dsmmi_malloc(ctx, (size_t)Bs->nnz, sizeof *v1);
        v0 = dsmmi_malloc(ctx, (size_t)Bs->nnz, sizeof *v0);
        DSMM_CHECK(ctx, v1 != NULL && v0 != NULL, DSMM_ERR_NOMEM, "spgemm: sorting a copy of B");
        dsmmi_vals_convert(v1, DSMM_DOUBLE, Bs->val, Bs->type, Bs->nnz);
    }
    dsmm_idx nnz_out = 0;
    DSMM_TRY(dsmmi_rows_sort_merge(ctx, Bs->nrows, Bs->rowptr, Bs->colidx, v1, c0, v0, Bs->val,
                                   Bs->type, DSMMI_DUP_KEEP, &nnz_out, &pl->b_dups, NULL, NULL));
    dsmmi_free(ctx, Bs->colidx);
    Bs->colidx = c0;
    c0 = NULL;
    Bs->sorted = !pl->b_dups;
cleanup:
    dsmmi_free(ctx, c0);
    dsmmi_free(ctx, v1);
    dsmmi_free(ctx, v0);
    return st;
}

static void plan_free(dsmm_ctx *ctx, plan *pl)
{
    if (pl->ws) {
        for (int t = 0; t < pl->threads; t++) acc_free(ctx, &pl->ws[t]);
        pl->ws = dsmmi_free(ctx, pl->ws);
    }
    pl->wprefix = dsmmi_free(ctx, pl->wprefix);
    pl->bounds = dsmmi_free(ctx, pl->bounds);
    pl->bcol = dsmmi_free(ctx, pl->bcol);
    pl->bval = dsmmi_free(ctx, pl->bval);
    dsmm_csr_destroy(&pl->Bs);
}

// Everything but the passes: sorted B, B converted to C's width and type, flops, chunks,
// empty workspaces. kind/vt: what the passes compute.
static dsmm_status plan_make(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, int kind, int vt, plan *pl)
{
    dsmm_status st = DSMM_OK;
    const dsmm_csr *A = a->A, *B = a->B;
    int threads = dsmmi_threads(ctx);

    pl->alg = a->alg;
    pl->sort = a->sorted;
    pl->nrows = A->nrows;
    pl->threads = threads;
    if (!B->sorted) {
        DSMM_TRY(sort_b_copy(ctx, B, pl));
        B = pl->Bs;
    }
    dsmmi_rw *m = &pl->rw;
    m->ap = A->rowptr;
    m->a_end = A->rowptr[A->nrows];
    m->ac64 = A->colidx;
    m->ac32 = A->colidx32;
    m->av = A->val;
    m->at = A->type;
    m->bp = B->rowptr;
    m->ncols = B->ncols;
    m->M = a->M;
    m->w32 = a->col_bits == 32;
    m->kind = kind;
    m->vt = vt;
    if (m->w32 && B->colidx32 == NULL) {
        int32_t *c = dsmmi_malloc(ctx, (size_t)B->nnz, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "spgemm: 32-bit copy of B's columns");
        for (dsmm_idx k = 0; k < B->nnz; k++) c[k] = (int32_t)B->colidx[k];
        pl->bcol = c;
        pl->conv_bytes += (size_t)B->nnz * sizeof *c;
    } else if (!m->w32 && B->colidx32 != NULL) {
        dsmm_idx *c = dsmmi_malloc(ctx, (size_t)B->nnz, sizeof *c);
        DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "spgemm: 64-bit copy of B's columns");
        for (dsmm_idx k = 0; k < B->nnz; k++) c[k] = B->colidx32[k];
        pl->bcol = c;
        pl->conv_bytes += (size_t)B->nnz * sizeof *c;
    }
    m->bc = pl->bcol ? pl->bcol : (m->w32 ? (const void *)B->colidx32 : (const void *)B->colidx);
    if (kind != DSMMI_K_PATTERN && kind != DSMMI_K_PLUS_PAIR) {
        if (B->type != (dsmm_type)vt) {
            pl->bval = dsmmi_malloc(ctx, (size_t)B->nnz, dsmmi_type_size((dsmm_type)vt));
            DSMM_CHECK(ctx, pl->bval != NULL, DSMM_ERR_NOMEM,
                       "spgemm: converted copy of B's values");
            dsmmi_vals_convert(pl->bval, (dsmm_type)vt, B->val, B->type, B->nnz);
            pl->conv_bytes += (size_t)B->nnz * dsmmi_type_size((dsmm_type)vt);
        }
        m->bv = pl->bval ? pl->bval : B->val;
    }

    pl->wprefix = dsmmi_malloc(ctx, (size_t)A->nrows + 1, sizeof *pl->wprefix);
    DSMM_CHECK(ctx, pl->wprefix != NULL, DSMM_ERR_NOMEM, "spgemm: flops of %lld rows",
               (long long)A->nrows);
    dsmmi_spgemm_row_flops(A, B, pl->wprefix + 1, &pl->flops);
    // A thread must get enough work to pay for waking it (tens of microseconds, far more
    // when the machine is oversubscribed).
    if (pl->flops / dsmmi_spgemm_tune.min_thread_flops + 1 < threads)
        threads = pl->threads = (int)(pl->flops / dsmmi_spgemm_tune.min_thread_flops + 1);
    pl->wprefix[0] = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) pl->wprefix[i + 1] += pl->wprefix[i] + 1;
    m->wprefix = pl->wprefix;
    dsmm_idx nchunks = (dsmm_idx)threads * CHUNKS_PER_THREAD;
    if (nchunks > A->nrows) nchunks = A->nrows > 0 ? A->nrows : 1;
    pl->nchunks = (int)nchunks;
    pl->bounds = dsmmi_malloc(ctx, (size_t)pl->nchunks + 1, sizeof *pl->bounds);
    DSMM_CHECK(ctx, pl->bounds != NULL, DSMM_ERR_NOMEM, "spgemm: chunk bounds");
    pl->ws = dsmmi_calloc(ctx, (size_t)threads, sizeof *pl->ws);
    DSMM_CHECK(ctx, pl->ws != NULL, DSMM_ERR_NOMEM, "spgemm: %d workspaces", threads);
    dsmmi_split_prefix(pl->wprefix, pl->nrows, pl->nchunks, pl->bounds); // flops + 1 a row
cleanup:
    return st;
}

// One pass without the symbolic count, on a cache-sized product without a mask (the AUTO or
// DENSE choice is then the dense accumulator, or a copy, for every row, and neither needs the
// row's count beforehand). A row of C has at most min(flops, ncols) entries; C is allocated at
// the sum of these bounds and filled from its start, so pages past the entries are never
// touched: the bound is address space, not memory. Afterwards the budget gets the unused tail
// back (dsmmi_shrink_account: the arrays keep their size, so the allocator hands the same
// blocks to the next product of that size; a real shrink made every repeated product fault its
// C in afresh, 2 us a page here). One thread writes its rows straight into C. Several take
// runs of rows whose bounds total about one_pass_stage entries, in order (the next run not
// taken, so skewed rows stay balanced), each writing its run into one of its one_pass_slots
// staging buffers, which stay in its cache. A run's place in C is where the runs before it
// end: each thread publishes its run's length and places every run whose predecessors are
// all known (a look-back), then copies its own runs that have their place. It waits only when
// all its buffers hold runs without a place (with one buffer, each run waits for the one
// before it, as an ordered loop did). C is thus
// written once, in order, with no gaps to close (an earlier version wrote each thread's rows
// at their bound and moved them down afterwards: a serial move, and up to half of C resident
// twice). Only when the bound fits the context's memory budget, which charges it in full (so
// dsmm_ctx_mem_peak counts it); an allocation failure in the one pass falls back to the two
// passes.
static dsmm_idx row_bound(const plan *pl, dsmm_idx i)
{
    dsmm_idx f = row_f(pl, i);
    return f < pl->rw.ncols ? f : pl->rw.ncols;
}

static dsmm_idx total_bound(const plan *pl)
{
    dsmm_idx b = 0;
    for (dsmm_idx i = 0; i < pl->nrows; i++) b += row_bound(pl, i);
    return b;
}

// Whether the one pass applies; *entries gets C's bound in entries when it does.
static int onepass_ok(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, const plan *pl, dsmm_idx *entries)
{
    const dsmmi_spgemm_tuning *tu = &dsmmi_spgemm_tune;
    if (!(pl->threads <= tu->one_pass_threads && pl->rw.M == NULL &&
          pl->rw.ncols <= tu->cache_cols && tu->one_pass &&
          (pl->alg == DSMM_SPGEMM_AUTO || pl->alg == DSMM_SPGEMM_DENSE)))
        return 0;
    *entries = total_bound(pl);
    size_t budget = dsmm_ctx_mem_budget(ctx), in_use = dsmm_ctx_mem_in_use(ctx);
    size_t per = (a->col_bits == 32 ? 4 : 8) + dsmmi_type_size(a->type);
    double b = (double)*entries * (double)per;
    size_t bound = b < 0x1p62 ? (size_t)b : SIZE_MAX;
    return bound <= (pl->threads == 1 ? tu->one_pass_max : tu->one_pass_mt_max) &&
           (budget == 0 || (bound <= budget && in_use <= budget - bound));
}

// Writes row i at entry p of the arrays cc/cv (cv NULL: pattern); returns its length.
static dsmm_idx onepass_row(plan *pl, dsmmi_acc *w, dsmm_idx i, char *cc, size_t cw, char *cv,
                            size_t vw, dsmm_idx p, dsmm_idx *hp, dsmm_idx *dn)
{
    if (row_f(pl, i) == 0) return 0;
    void *rc = cc + (size_t)p * cw, *rv = cv ? cv + (size_t)p * vw : NULL;
    if (row_is_b_row(pl, i)) {
        ++*hp;
        return dsmmi_copy_fill(&pl->rw, i, rc, rv);
    }
    ++*dn;
    return dsmmi_dense_fill(w, &pl->rw, i, row_f(pl, i), rc, rv);
}

#define ONEPASS_MAX_SLOTS 8

// Where staged runs go: C's arrays, the runs' row bounds and places.
typedef struct onepass_place {
    char *cc, *cv; // C's columns and values (cv NULL: pattern)
    size_t cw, vw;
    dsmm_idx big; // entries a staging buffer holds (its values start at big * cw)
    dsmm_idx *rowptr;
    const dsmm_idx *runs, *offs;
    int stream;
} onepass_place;

// Copies run r from its staging buffer to its place in C and shifts its row pointers (which
// hold the run's own offsets until then); with wait, first waits until the run is placed
// (*placed > r: every run before it computed, by whichever thread).
static void onepass_copy(const onepass_place *pc, dsmm_idx r, const char *buf, int wait,
                         dsmm_idx *placed)
{
    for (long spin = 0; wait && __atomic_load_n(placed, __ATOMIC_ACQUIRE) <= r; spin++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (spin >= 4096) sched_yield(); // more threads than cores: let the run's thread go on
    }
    dsmm_idx off = pc->offs[r];
    dsmm_idx q = pc->rowptr[pc->runs[r + 1]]; // the run's length: its last row's end
    const char *sc = buf, *sv = buf + (size_t)pc->big * pc->cw;
    if (pc->stream) {
        dsmmi_stream_copy(pc->cc + (size_t)off * pc->cw, sc, (size_t)q * pc->cw);
        if (pc->cv) dsmmi_stream_copy(pc->cv + (size_t)off * pc->vw, sv, (size_t)q * pc->vw);
    } else {
        memcpy(pc->cc + (size_t)off * pc->cw, sc, (size_t)q * pc->cw);
        if (pc->cv) memcpy(pc->cv + (size_t)off * pc->vw, sv, (size_t)q * pc->vw);
    }
    for (dsmm_idx i = pc->runs[r]; i < pc->runs[r + 1]; i++) pc->rowptr[i + 1] += off;
}

static dsmm_status onepass(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, plan *pl, dsmm_idx bound,
                           dsmm_csr **C, counters *cnt)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Cn = NULL;
    dsmm_idx *runs = NULL, *lens = NULL, *offs = NULL;
    char **stage = NULL;
    int nstage = 0;
    const dsmmi_rw *m = &pl->rw;
    int T = pl->threads;
    need n = {0};
    for (dsmm_idx i = 0; i < pl->nrows; i++)
        if (row_f(pl, i) > 0) need_add(&n, pl, i, ACC_DENSE, 1, row_bound(pl, i));
    for (int t = 0; t < T; t++) {
        size_t b = 0;
        DSMM_TRY(acc_grow(ctx, &pl->ws[t], &n, m->ncols, &b));
        pl->ws_bytes += b;
    }
    DSMM_TRY(dsmmi_csr_create_ex(ctx, pl->nrows, m->ncols, bound, a->type, a->col_bits, &Cn));
    size_t cw = Cn->colidx32 ? sizeof(int32_t) : sizeof(dsmm_idx);
    size_t vw = dsmmi_type_size(Cn->type);
    size_t ew = cw + (m->kind != DSMMI_K_PATTERN ? vw : 0); // bytes per entry
    char *cc = Cn->colidx32 ? (char *)Cn->colidx32 : (char *)Cn->colidx;
    char *cv = m->kind != DSMMI_K_PATTERN ? (char *)Cn->val : NULL;
    Cn->rowptr[0] = 0;
    dsmm_idx total = 0, hp = 0, dn = 0;
    if (T == 1) {
        for (dsmm_idx i = 0; i < pl->nrows; i++) {
            total += onepass_row(pl, &pl->ws[0], i, cc, cw, cv, vw, total, &hp, &dn);
            Cn->rowptr[i + 1] = total;
        }
    } else {
        // Runs of rows with bounds totalling about one_pass_stage entries (a row at least),
        // fewer on small products, so each thread gets one_pass_runs runs or more to balance.
        dsmm_idx nruns = 0, big = 1, target = dsmmi_spgemm_tune.one_pass_stage;
        dsmm_idx few = dsmmi_spgemm_tune.one_pass_runs * T;
        if (few > 0 && bound / few < target) target = bound / few > 0 ? bound / few : 1;
        runs = dsmmi_malloc(ctx, (size_t)pl->nrows + 1, sizeof *runs);
        DSMM_CHECK(ctx, runs != NULL, DSMM_ERR_NOMEM, "spgemm: one-pass runs");
        runs[0] = 0;
        for (dsmm_idx i = 0, b = 0; i < pl->nrows; i++) {
            b += row_bound(pl, i);
            if (b >= target || i + 1 == pl->nrows) {
                runs[++nruns] = i + 1;
                if (b > big) big = b;
                b = 0;
            }
        }
        big = (big + 7) / 8 * 8; // the values after the columns stay 8-byte aligned
        int S = dsmmi_spgemm_tune.one_pass_slots;
        S = S < 1 ? 1 : S > ONEPASS_MAX_SLOTS ? ONEPASS_MAX_SLOTS : S;
        // Per run: its length once computed (-1 before), its place in C once placed.
        lens = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof *lens);
        offs = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof *offs);
        DSMM_CHECK(ctx, lens != NULL && offs != NULL, DSMM_ERR_NOMEM, "spgemm: one-pass runs");
        for (dsmm_idx r = 0; r < nruns; r++) lens[r] = -1;
        nstage = T * S;
        stage = dsmmi_calloc(ctx, (size_t)nstage, sizeof *stage);
        DSMM_CHECK(ctx, stage != NULL, DSMM_ERR_NOMEM, "spgemm: staging buffers");
        for (int t = 0; t < nstage; t++) {
            stage[t] = dsmmi_malloc(ctx, (size_t)big, ew);
            DSMM_CHECK(ctx, stage[t] != NULL, DSMM_ERR_NOMEM,
                       "spgemm: staging buffer of %lld entries", (long long)big);
        }
        pl->ws_bytes += (size_t)nstage * (size_t)big * ew;
        onepass_place pc = {.cc = cc,
                            .cv = cv,
                            .cw = cw,
                            .vw = vw,
                            .big = big,
                            .rowptr = Cn->rowptr,
                            .runs = runs,
                            .offs = offs,
                            // C's bound past the caches: copies stream (the runs were written
                            // in L2; their copy in C is read by the caller later, if at all).
                            .stream = dsmmi_spgemm_tune.one_pass_stream_min > 0 &&
                                      (double)bound * (double)ew >=
                                          (double)dsmmi_spgemm_tune.one_pass_stream_min};
        dsmm_idx next = 0, placed = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(T) reduction(+ : hp, dn)
#endif
        {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            // The thread's runs computed but not yet copied, oldest first, in its S staging
            // buffers (each: columns, then values) used in turn.
            dsmm_idx mine[ONEPASS_MAX_SLOTS];
            int head = 0, npend = 0;
            char **my = stage + (size_t)t * (size_t)S;
            for (;;) {
                if (npend == S) { // every buffer holds a run: wait for the oldest's place
                    onepass_copy(&pc, mine[head], my[head], 1, &placed);
                    head = (head + 1) % S;
                    npend--;
                }
                dsmm_idx r = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED); // in run order
                if (r >= nruns) break;
                int b = (head + npend) % S;
                char *sc = my[b], *sv = cv ? my[b] + (size_t)big * cw : NULL;
                dsmm_idx q = 0;
                for (dsmm_idx i = runs[r]; i < runs[r + 1]; i++) {
                    q += onepass_row(pl, &pl->ws[t], i, sc, cw, sv, vw, q, &hp, &dn);
                    Cn->rowptr[i + 1] = q;
                }
                mine[b] = r;
                npend++;
                // Publish the run's length and place every run whose predecessors are all
                // known (whichever thread computed them), then copy this thread's placed runs.
#ifdef _OPENMP
#pragma omp critical(dsmmi_onepass_place)
#endif
                {
                    lens[r] = q;
                    dsmm_idx p = placed;
                    for (; p < nruns && lens[p] >= 0; p++) {
                        offs[p] = total;
                        total += lens[p];
                    }
                    __atomic_store_n(&placed, p, __ATOMIC_RELEASE);
                }
                while (npend > 0 && mine[head] < __atomic_load_n(&placed, __ATOMIC_ACQUIRE)) {
                    onepass_copy(&pc, mine[head], my[head], 0, &placed);
                    head = (head + 1) % S;
                    npend--;
                }
            }
            for (; npend > 0; npend--, head = (head + 1) % S)
                onepass_copy(&pc, mine[head], my[head], 1, &placed);
        }
    }
    cnt->heap += hp;
    cnt->dense += dn;
    // C keeps its arrays at the bound; the budget gets back what the entries do not use
    // (dsmmi_shrink_account: a real shrink made every repeated product fault its C in afresh).
    if (total < Cn->cap) {
        size_t keep = (size_t)(total > 0 ? total : 1);
        dsmmi_shrink_account(ctx, cc, keep, cw);
        if (Cn->val != NULL) dsmmi_shrink_account(ctx, Cn->val, keep, vw);
        Cn->cap = total;
    }
    Cn->nnz = total;
    *C = Cn;
    Cn = NULL;
cleanup:
    if (stage != NULL)
        for (int t = 0; t < nstage; t++) dsmmi_free(ctx, stage[t]);
    dsmmi_free(ctx, stage);
    dsmmi_free(ctx, runs);
    dsmmi_free(ctx, lens);
    dsmmi_free(ctx, offs);
    dsmm_csr_destroy(&Cn);
    return st;
}

dsmm_status dsmmi_spgemm_rowwise(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                 dsmmi_spgemm_phase phase, dsmm_csr **C, dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Cn = NULL;
    dsmm_idx *rp = NULL;
    plan pl = {0};
    double t0 = dsmmi_wtime(), t1 = t0;
    counters cnt = {0};

    int pattern_out = a->type == DSMM_PATTERN || phase == DSMMI_SPGEMM_SYMBOLIC;
    DSMM_TRY(plan_make(ctx, a, pattern_out ? DSMMI_K_PATTERN : (int)a->sr,
                       pattern_out ? DSMM_PATTERN : (int)a->type, &pl));
    info->flops = (double)pl.flops;
    info->threads = pl.threads;

    if (phase == DSMMI_SPGEMM_NUMERIC) {
        dsmm_csr *Ck = *C;
        DSMM_TRY(size_workspaces(ctx, &pl, pl.ws, Ck->rowptr, 1, 1, &pl.ws_bytes));
        fill_pass(&pl, pl.ws, Ck, 1, &cnt);
        DSMM_CHECK(ctx, cnt.bad_row < 0, DSMM_ERR_ARG,
                   "spgemm numeric: row %lld of A * B does not have C's pattern (the patterns "
                   "of A or B changed since the symbolic phase)",
                   (long long)cnt.bad_row);
        info->nnz = Ck->nnz;
        info->sorted = Ck->sorted;
        info->seconds_numeric = dsmmi_wtime() - t1;
        goto cleanup;
    }

    dsmm_idx bound = 0;
    if (phase == DSMMI_SPGEMM_FULL && onepass_ok(ctx, a, &pl, &bound)) {
        st = onepass(ctx, a, &pl, bound, &Cn, &cnt);
        if (st == DSMM_ERR_NOMEM) {
            // The bound did not fit where the exact size may: count first.
            dsmm_ctx_clear_error(ctx);
            st = DSMM_OK;
            cnt = (counters){0};
            goto two_pass;
        }
        if (st != DSMM_OK) goto cleanup;
        info->seconds_numeric = dsmmi_wtime() - t1;
        info->nnz = Cn->nnz;
        info->sorted = Cn->sorted = 1;
        info->rows_heap = cnt.heap;
        info->rows_dense = cnt.dense;
        *C = Cn;
        Cn = NULL;
        goto cleanup;
    }

two_pass: // symbolic count, exact allocation, fill
    DSMM_TRY(size_workspaces(ctx, &pl, pl.ws, NULL, 0, 0, &pl.ws_bytes));
    rp = dsmmi_malloc(ctx, (size_t)a->A->nrows + 1, sizeof *rp);
    DSMM_CHECK(ctx, rp != NULL, DSMM_ERR_NOMEM, "spgemm: row counts");
    rp[0] = 0;
    count_pass(ctx, &pl, pl.ws, rp);
    for (dsmm_idx i = 0; i < pl.nrows; i++) rp[i + 1] += rp[i];
    dsmm_idx nnz = rp[pl.nrows];
    DSMM_TRY(dsmmi_csr_create_ex(ctx, pl.nrows, pl.rw.ncols, nnz, a->type, a->col_bits, &Cn));
    dsmmi_free(ctx, Cn->rowptr);
    Cn->rowptr = rp;
    rp = NULL;
    Cn->nnz = nnz;
    info->seconds_symbolic = dsmmi_wtime() - t0;
    t1 = dsmmi_wtime();
    DSMM_TRY(size_workspaces(ctx, &pl, pl.ws, Cn->rowptr, 1, 0, &pl.ws_bytes));
    fill_pass(&pl, pl.ws, Cn, 0, &cnt);
    DSMM_CHECK(ctx, !cnt.bad, DSMM_ERR_INTERNAL,
               "spgemm: a row's numeric count differs from its symbolic count");
    if (phase == DSMMI_SPGEMM_SYMBOLIC && a->type != DSMM_PATTERN)
        memset(Cn->val, 0, (size_t)nnz * dsmmi_type_size(a->type));
    Cn->sorted = !cnt.unsorted;
    info->seconds_numeric = dsmmi_wtime() - t1;
    info->nnz = nnz;
    info->sorted = Cn->sorted;
    info->rows_hash = cnt.hash;
    info->rows_heap = cnt.heap;
    info->rows_dense = cnt.dense;
    info->rows_masked = cnt.masked;
    *C = Cn;
    Cn = NULL;
cleanup:
    info->workspace_bytes = pl.ws_bytes + pl.conv_bytes;
    plan_free(ctx, &pl);
    dsmmi_free(ctx, rp);
    dsmm_csr_destroy(&Cn);
    return st;
}

dsmm_status dsmmi_spgemm_count(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               dsmm_idx *row_nnz, dsmm_idx *total, dsmm_idx *flops)
{
    dsmm_status st = DSMM_OK;
    plan pl = {0};
    dsmm_idx *rp = NULL;

    DSMM_CHECK(ctx, A != NULL && B != NULL, DSMM_ERR_ARG, "spgemm count: A and B non-NULL");
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM,
               "spgemm count: A is %lld x %lld but B is %lld x %lld", (long long)A->nrows,
               (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    // B's own column width, so nothing is converted.
    dsmmi_spgemm_args a = {.A = A,
                           .B = B,
                           .sr = DSMM_PLUS_PAIR,
                           .alg = DSMM_SPGEMM_AUTO,
                           .type = DSMM_PATTERN,
                           .col_bits = B->colidx32 ? 32 : 64};
    DSMM_TRY(plan_make(ctx, &a, DSMMI_K_PATTERN, DSMM_PATTERN, &pl));
    DSMM_TRY(size_workspaces(ctx, &pl, pl.ws, NULL, 0, 0, &pl.ws_bytes));
    rp = dsmmi_malloc(ctx, (size_t)A->nrows + 1, sizeof *rp);
    DSMM_CHECK(ctx, rp != NULL, DSMM_ERR_NOMEM, "spgemm count: row counts");
    rp[0] = 0;
    count_pass(ctx, &pl, pl.ws, rp);
    dsmm_idx sum = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        if (row_nnz) row_nnz[i] = rp[i + 1];
        sum += rp[i + 1];
    }
    if (total) *total = sum;
    if (flops) *flops = pl.flops;
cleanup:
    plan_free(ctx, &pl);
    dsmmi_free(ctx, rp);
    return st;
}
