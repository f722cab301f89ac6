// src/kernels/kernels.h: internal header of the kernels layer: the local-multiply table
// (STYLE.md §1) and what the SpGEMM kernels share.
#ifndef DSMM_KERNELS_H
#define DSMM_KERNELS_H

#include "sparse/sparse.h"

/* What a table entry is asked to do. */
typedef enum dsmmi_spgemm_phase {
    DSMMI_SPGEMM_FULL = 0, // *C new: pattern and values
    DSMMI_SPGEMM_SYMBOLIC, // *C new: pattern, values allocated and zero (none for PATTERN)
    DSMMI_SPGEMM_NUMERIC   // *C given: its values recomputed for its pattern
} dsmmi_spgemm_phase;

/* One local product, checked and normalised by dsmmi_local_spgemm before a kernel sees it:
 * A->ncols == B->nrows (B already transposed when opts asked), M NULL or nrows(A) x ncols(B),
 * sr's value needs met (A and B hold values unless sr == DSMM_PLUS_PAIR), type resolved to
 * PATTERN/FLOAT/DOUBLE, col_bits 32 only when ncols(B) <= INT32_MAX. A, B and M may hold
 * 32- or 64-bit columns (dsmm_csr_col) and any value type; M's values are ignored and its
 * rows need not be sorted. */
typedef struct dsmmi_spgemm_args {
    const dsmm_csr *A, *B, *M;
    dsmm_semiring sr;
    dsmm_spgemm_alg alg; // the entry's own name (AUTO/HASH/HEAP/DENSE share one driver)
    dsmm_type type;      // value type of C
    int col_bits;        // 32 or 64
    int sorted;          // 1: rows of C must come out sorted
} dsmmi_spgemm_args;

/* A table entry. FULL and SYMBOLIC: *C is NULL on entry, set only on success. NUMERIC: *C is
 * the caller's matrix (type != PATTERN, pattern from SYMBOLIC of the same args); a product
 * outside its pattern, or an entry of the pattern that no product reaches, fails with
 * DSMM_ERR_ARG. info (never NULL) is zeroed by the caller; the kernel fills flops, nnz,
 * rows_*, sorted, threads, seconds_symbolic/numeric and workspace_bytes. */
typedef dsmm_status (*dsmmi_spgemm_fn)(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                       dsmmi_spgemm_phase phase, dsmm_csr **C,
                                       dsmm_spgemm_info *info);

/* The table: starts with the reference kernel in every CPU slot (src/kernels/table.c);
 * optimised kernels replace entries at build time; GPU is NULL until the gpu layer fills it. */
dsmmi_spgemm_fn dsmmi_spgemm_kernel(dsmm_spgemm_alg alg);
void dsmmi_spgemm_kernel_set(dsmm_spgemm_alg alg, dsmmi_spgemm_fn fn);

/* dsmmi_spgemm_args_make: the checks and normalisation of dsmmi_local_spgemm's operands and
 * options (kernel and semiring names, column width, value types, inner dimensions, a semiring
 * that needs values against pattern inputs, the mask's shape, C's type) into *a: A, B and M
 * as given (B not transposed), type resolved. Also used by the out-of-core driver.
 * Errors: DSMM_ERR_ARG, DSMM_ERR_DIM with the message of the failed check. */
dsmm_status dsmmi_spgemm_args_make(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                   const dsmm_spgemm_opts *opts, dsmmi_spgemm_args *a);

/* dsmmi_local_spgemm: the one local multiply every layer above calls: checks and normalises
 * (dims, semiring vs pattern inputs, mask shape, transpose_b, type, col_bits), looks the
 * kernel up and runs it, filling info (may be NULL). phase as for a table entry. */
dsmm_status dsmmi_local_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               const dsmm_spgemm_opts *opts, dsmmi_spgemm_phase phase, dsmm_csr **C,
                               dsmm_spgemm_info *info);

/* Kernels. */
dsmm_status dsmmi_spgemm_ref(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info);
dsmm_status dsmmi_spgemm_rowwise(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                 dsmmi_spgemm_phase phase, dsmm_csr **C, dsmm_spgemm_info *info);

/* dsmmi_spgemm_row_flops: flops[i] = sum over A(i,k) of nnz(B(k,:)) for each row i, and the
 * total in *total (may be NULL). flops has nrows(A) entries, or is NULL when only the total is
 * wanted. OpenMP over rows. */
void dsmmi_spgemm_row_flops(const dsmm_csr *A, const dsmm_csr *B, dsmm_idx *flops, dsmm_idx *total);

/* dsmmi_spgemm_count: exact nnz of each row of A * B (row_nnz, nrows(A) entries, may be NULL)
 * and in total, and the flops (may be NULL), with the fast symbolic count of the row-wise kernel
 * (no mask, no values). Errors: DSMM_ERR_DIM; DSMM_ERR_NOMEM. */
dsmm_status dsmmi_spgemm_count(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               dsmm_idx *row_nnz, dsmm_idx *total, dsmm_idx *flops);

/* ------------------------------------------------------------------------------------------ */
/* Row-wise accumulators: spgemm_rowwise.c drives them; spgemm_hash.c, spgemm_heap.c,         */
/* spgemm_dense.c and spgemm_masked.c each hold one. Values accumulate in double.             */
/* ------------------------------------------------------------------------------------------ */

/* The multiply kinds a row function is specialised for: the semiring, or PATTERN when C has
 * no values (structure only; values of A and B never read). */
enum {
    DSMMI_K_PLUS_TIMES = 0,
    DSMMI_K_PLUS_PAIR,
    DSMMI_K_MIN_PLUS,
    DSMMI_K_MAX_TIMES,
    DSMMI_K_PATTERN
};

/* The plus semirings: a product is added, so an accumulator kept at 0 outside a row needs no
 * first-touch test (the dense accumulator's marks, spgemm_dense.c). */
#define DSMMI_PLUS_KIND(kind) ((kind) == DSMMI_K_PLUS_TIMES || (kind) == DSMMI_K_PLUS_PAIR)

/* Read-only view of one product for the row functions. B's columns have the width of C's
 * (bc is int32_t * when w32, else dsmm_idx *); bv holds B's values in C's type (NULL for
 * PLUS_PAIR and PATTERN). A's columns may have either width, its values any type. B's rows
 * are sorted without duplicates (the driver makes a sorted copy otherwise). */
typedef struct dsmmi_rw {
    const dsmm_idx *ap;
    dsmm_idx a_end; // ap[nrows(A)]: A's entries, the prefetch's look-ahead stays below it
    const dsmm_idx *ac64;
    const int32_t *ac32;
    const void *av;
    dsmm_type at;
    const dsmm_idx *bp;
    const void *bc;
    const void *bv;
    dsmm_idx ncols;
    int w32;                 // columns of B and C are 32-bit
    int kind;                // DSMMI_K_*
    int vt;                  // C's value type (DSMM_PATTERN when kind == DSMMI_K_PATTERN)
    const dsmm_csr *M;       // mask, or NULL
    const dsmm_idx *wprefix; // prefix sums of (flops_i + 1), nrows(A) + 1 entries
} dsmmi_rw;

/* Flops of row i, from the driver's balancing prefix (computed once per product). */
static inline dsmm_idx dsmmi_rw_flops(const dsmmi_rw *m, dsmm_idx i)
{
    return m->wprefix[i + 1] - m->wprefix[i] - 1;
}

/* Per-thread workspace, sized by the driver before each pass and reused across rows. */
typedef struct dsmmi_acc {
    void *hkeys;         // hash keys (int32_t or dsmm_idx as w32), -1 = empty
    double *hvals;       // hash values
    dsmm_idx hcap;       // hash capacity (power of two), 0 = none
    uint64_t *bitmap;    // dense fill: one bit per column, all 0 between rows
    uint32_t *stamp;     // dense: per column, the tag of the last row that reached it
    uint32_t tag;        // dense: the current row's tag (0 = none yet)
    double *dvals;       // dense: one value per column, valid where stamp == tag (NULL for
                         // count or pattern only)
    unsigned char *seen; // dense, plus semirings, rows on marks: 1 where the row reached a
                         // column, 0 between rows
    dsmm_idx *hp_pos;    // heap: cursor into B per source row
    dsmm_idx *hp_end;    // heap: end of the source row
    double *hp_a;        // heap: A's value per source row
    dsmm_idx *hp_key;    // heap: current column per heap slot
    int32_t *hp_src;     // heap: source row per heap slot
    dsmm_idx hp_cap;     // heap: capacity (max nnz of an A row)
    int32_t *pos;        // masked: slot of each column, -1 = none (ncols entries), or NULL:
                         // then the hash (hkeys as dsmm_idx, hslot) maps columns to slots
    int32_t *hslot;      // masked without pos: slot per hash entry
    dsmm_idx *skey;      // scratch keys (sorting, masked distinct columns)
    double *sval;        // scratch values
    unsigned char *touched;
    dsmm_idx scap; // capacity of skey/sval/touched
} dsmmi_acc;

/* Semiring operations in double; kind is a compile-time constant where they are inlined. */
static inline double dsmmi_sr_mul(int kind, double a, double b)
{
    switch (kind) {
    case DSMMI_K_PLUS_PAIR:
        return 1.0;
    case DSMMI_K_MIN_PLUS:
        return a + b;
    default:
        return a * b;
    }
}

static inline double dsmmi_sr_add(int kind, double x, double y)
{
    switch (kind) {
    case DSMMI_K_MIN_PLUS:
        return y < x ? y : x;
    case DSMMI_K_MAX_TIMES:
        return y > x ? y : x;
    default:
        return x + y;
    }
}

/* A's value k as a double (1 for pattern). Read once per A entry, so the branch is cheap. */
static inline double dsmmi_rw_aval(const dsmmi_rw *m, dsmm_idx k)
{
    if (m->at == DSMM_DOUBLE) return ((const double *)m->av)[k];
    if (m->at == DSMM_FLOAT) return (double)((const float *)m->av)[k];
    return 1.0;
}

static inline dsmm_idx dsmmi_rw_acol(const dsmmi_rw *m, dsmm_idx k)
{
    return m->ac32 ? (dsmm_idx)m->ac32[k] : m->ac64[k];
}

/* Row functions. count: nnz of row i of C. fill: writes row i (nz entries, known from count)
 * to ccol/cval (C's arrays at the row's start, typed by w32 and vt; cval NULL for PATTERN),
 * sorted by column when sort != 0. Return value of fill: entries written (== nz unless a
 * bug). The masked pair follows M's row i instead (C<M>); numeric_known recomputes the values
 * of a known row pattern and returns -1 when the pattern does not match. */
dsmm_idx dsmmi_hash_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i);
dsmm_idx dsmmi_hash_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                         int sort);
dsmm_idx dsmmi_dense_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i);
dsmm_idx dsmmi_dense_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx flops, void *ccol,
                          void *cval);
dsmm_idx dsmmi_dense_known(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx flops,
                           const void *ccol, dsmm_idx nz, int sorted, void *cval);
dsmm_idx dsmmi_heap_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i);
dsmm_idx dsmmi_heap_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval);
dsmm_idx dsmmi_copy_fill(const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval);
dsmm_idx dsmmi_masked_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i);
dsmm_idx dsmmi_masked_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           int sort);
dsmm_idx dsmmi_numeric_known(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                             dsmm_idx nz, void *cval);

/* AUTO's per-row choice (docs/kernels.md has the measurements behind the defaults).
 * "Cached" means ncols <= cache_cols: the dense accumulator (4 + 8 bytes a column) stays in L2.
 * Symbolic count: dense stamps when cached, or when ncols <= dense_max_cols and
 * flops * sym_dense >= ncols; else hash. Numeric fill (nz known): one-row copy when
 * k = nnz(A(i,:)) = 1; dense when cached and nz * fill_dense_cached >= ncols, or when
 * ncols <= dense_max_cols and nz * fill_dense >= ncols; heap when k <= heap_k and
 * flops <= heap_cf * nz; else hash. A dense row is put in order by ranking its columns when
 * nz <= 32, or (AVX-512) nz <= dense_rank_max where the stamp walk does not apply and its
 * span has nz / dense_rank_words 64-bit words or more (32-bit columns), by walking its span's
 * stamps when
 * nz * dense_scan_ratio >= its span, by sorting when nz * dense_sort_ratio < its span in
 * 64-bit words, else through the bitmap (walking the span's words when they hold nz /
 * dense_summary columns or more, else only the non-zero ones, through a summary bit per
 * word). The masked accumulator uses a dense position array when ncols <= pos_max_cols.
 * Without a mask, on a cached product whose C at the bound (min(flops, ncols) entries a row)
 * takes at most one_pass_max bytes (one_pass_mt_max on more than one thread), one_pass skips
 * the symbolic count: C at the bound, filled in row order; several threads stage runs of rows
 * (one_pass_stage entries of bound each, in up to one_pass_slots buffers a thread) and copy
 * each into C once the runs before it are computed. Changed only by
 * benchmarks and tests, never concurrently with a multiply. */
typedef struct dsmmi_spgemm_tuning {
    dsmm_idx dense_max_cols, cache_cols;
    double sym_dense, fill_dense, fill_dense_cached, heap_cf, dense_sort_ratio, dense_scan_ratio;
    dsmm_idx dense_rank_max;
    double dense_summary;       // bitmap rows with span words * this > nz walk a summary level
    double dense_rank_words;    // rows of 33+ columns are ranked when span words * this >= nz
    int dense_summary_regs;     // 1: a summary of one or two words is kept in registers
    int one_pass;               // fill without the symbolic count (see above)
    size_t one_pass_max;        // ... when C at the bound takes at most this many bytes
    int one_pass_threads;       // ... and on at most this many threads
    size_t one_pass_mt_max;     // ... and, on more than one, at most this many bytes
    dsmm_idx one_pass_stage;    // ... several threads: entries of the rows' bounds per staged run
    int one_pass_slots;         // ... staging buffers a thread (1: each run waits for its place)
    dsmm_idx one_pass_runs;     // ... runs a thread at least: smaller runs on small products
    size_t one_pass_stream_min; // ... bytes of C's bound from which runs stream into C (0: never)
    dsmm_idx prefetch;          // dense: prefetch the B row this many A entries ahead (0: none)
    int prefetch_bp;            // ... and B's row pointer twice as far ahead
    uint32_t dense_first_tag;   // a new workspace's tag (tests start near the wrap-around)
    double dense_mark_ratio;    // known-pattern numeric: marks, not stamps, for plus-semiring
                                // rows with flops * this >= the span of C's row (0: never)
    double fill_mark_ratio;     // dense fill: marks and a walk of the span, not stamps and
                                // a list, for plus-semiring rows with flops * this >= ncols
                                // (0: never)
    int dense_rank_vec;         // rank rows by vectors: 3 sixteen columns (AVX-512 CPUs, rows
                                // up to 64 columns; else as 2), 2 eight (AVX2 CPUs, else four),
                                // 1 four (SSE2), 0 one column at a time
    dsmm_idx heap_k;
    dsmm_idx pos_max_cols;
    dsmm_idx min_thread_flops; // flops a thread must get (waking one costs tens of us)
} dsmmi_spgemm_tuning;
extern dsmmi_spgemm_tuning dsmmi_spgemm_tune;

/* dsmmi_sort_pairs: sorts keys[0..n) ascending, vals (may be NULL) following. */
void dsmmi_sort_pairs(dsmm_idx *keys, double *vals, dsmm_idx n);

/* dsmmi_split_prefix: bounds[0..nparts] cut rows 0..nrows into nparts ranges of about equal
 * weight, wprefix[0..nrows] holding the prefix sums of the rows' weights: bounds[c] is the first
 * row i with wprefix[i] >= total * c / nparts (bounds[nparts] = nrows). */
void dsmmi_split_prefix(const dsmm_idx *wprefix, dsmm_idx nrows, int nparts, dsmm_idx *bounds);

/* The binary min-heaps of the k-way merges (spgemm_heap.c, merge.c): keys with a source each,
 * ordered by (key, source), so equal keys pop in source order. */
static inline int dsmmi_heap_before(dsmm_idx k1, int32_t s1, dsmm_idx k2, int32_t s2)
{
    return k1 < k2 || (k1 == k2 && s1 < s2);
}

/* Restores the heap key/src[0..n) below slot s. */
static inline void dsmmi_heap_sift_down(dsmm_idx *key, int32_t *src, dsmm_idx n, dsmm_idx s)
{
    dsmm_idx k = key[s];
    int32_t v = src[s];
    for (;;) {
        dsmm_idx c = 2 * s + 1;
        if (c >= n) break;
        if (c + 1 < n && dsmmi_heap_before(key[c + 1], src[c + 1], key[c], src[c])) c++;
        if (!dsmmi_heap_before(key[c], src[c], k, v)) break;
        key[s] = key[c];
        src[s] = src[c];
        s = c;
    }
    key[s] = k;
    src[s] = v;
}

/* The 18 specialisations a row function dispatches to: column width x (kind, value type).
 * FN is a macro or always-inline function taking (args..., w32, kind, vt) constants. */
#define DSMMI_RW_DISPATCH(m, FN, ...)                                                              \
    do {                                                                                           \
        int v_ = ((m)->w32 ? 16 : 0) + (m)->kind * 3 + (int)(m)->vt;                               \
        switch (v_) {                                                                              \
        case 0 * 3 + DSMM_DOUBLE:                                                                  \
            FN(__VA_ARGS__, 0, DSMMI_K_PLUS_TIMES, DSMM_DOUBLE);                                   \
            break;                                                                                 \
        case 0 * 3 + DSMM_FLOAT:                                                                   \
            FN(__VA_ARGS__, 0, DSMMI_K_PLUS_TIMES, DSMM_FLOAT);                                    \
            break;                                                                                 \
        case 1 * 3 + DSMM_DOUBLE:                                                                  \
            FN(__VA_ARGS__, 0, DSMMI_K_PLUS_PAIR, DSMM_DOUBLE);                                    \
            break;                                                                                 \
        case 1 * 3 + DSMM_FLOAT:                                                                   \
            FN(__VA_ARGS__, 0, DSMMI_K_PLUS_PAIR, DSMM_FLOAT);                                     \
            break;                                                                                 \
        case 2 * 3 + DSMM_DOUBLE:                                                                  \
            FN(__VA_ARGS__, 0, DSMMI_K_MIN_PLUS, DSMM_DOUBLE);                                     \
            break;                                                                                 \
        case 2 * 3 + DSMM_FLOAT:                                                                   \
            FN(__VA_ARGS__, 0, DSMMI_K_MIN_PLUS, DSMM_FLOAT);                                      \
            break;                                                                                 \
        case 3 * 3 + DSMM_DOUBLE:                                                                  \
            FN(__VA_ARGS__, 0, DSMMI_K_MAX_TIMES, DSMM_DOUBLE);                                    \
            break;                                                                                 \
        case 3 * 3 + DSMM_FLOAT:                                                                   \
            FN(__VA_ARGS__, 0, DSMMI_K_MAX_TIMES, DSMM_FLOAT);                                     \
            break;                                                                                 \
        case 4 * 3 + DSMM_PATTERN:                                                                 \
            FN(__VA_ARGS__, 0, DSMMI_K_PATTERN, DSMM_PATTERN);                                     \
            break;                                                                                 \
        case 16 + 0 * 3 + DSMM_DOUBLE:                                                             \
            FN(__VA_ARGS__, 1, DSMMI_K_PLUS_TIMES, DSMM_DOUBLE);                                   \
            break;                                                                                 \
        case 16 + 0 * 3 + DSMM_FLOAT:                                                              \
            FN(__VA_ARGS__, 1, DSMMI_K_PLUS_TIMES, DSMM_FLOAT);                                    \
            break;                                                                                 \
        case 16 + 1 * 3 + DSMM_DOUBLE:                                                             \
            FN(__VA_ARGS__, 1, DSMMI_K_PLUS_PAIR, DSMM_DOUBLE);                                    \
            break;                                                                                 \
        case 16 + 1 * 3 + DSMM_FLOAT:                                                              \
            FN(__VA_ARGS__, 1, DSMMI_K_PLUS_PAIR, DSMM_FLOAT);                                     \
            break;                                                                                 \
        case 16 + 2 * 3 + DSMM_DOUBLE:                                                             \
            FN(__VA_ARGS__, 1, DSMMI_K_MIN_PLUS, DSMM_DOUBLE);                                     \
            break;                                                                                 \
        case 16 + 2 * 3 + DSMM_FLOAT:                                                              \
            FN(__VA_ARGS__, 1, DSMMI_K_MIN_PLUS, DSMM_FLOAT);                                      \
            break;                                                                                 \
        case 16 + 3 * 3 + DSMM_DOUBLE:                                                             \
            FN(__VA_ARGS__, 1, DSMMI_K_MAX_TIMES, DSMM_DOUBLE);                                    \
            break;                                                                                 \
        case 16 + 3 * 3 + DSMM_FLOAT:                                                              \
            FN(__VA_ARGS__, 1, DSMMI_K_MAX_TIMES, DSMM_FLOAT);                                     \
            break;                                                                                 \
        case 16 + 4 * 3 + DSMM_PATTERN:                                                            \
            FN(__VA_ARGS__, 1, DSMMI_K_PATTERN, DSMM_PATTERN);                                     \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

/* Typed access to B's and C's columns and values; w32 and vt are compile-time constants. */
#define DSMMI_COL(p, k, w32)                                                                       \
    ((w32) ? (dsmm_idx)((const int32_t *)(p))[k] : ((const dsmm_idx *)(p))[k])
#define DSMMI_SET_COL(p, k, c, w32)                                                                \
    do {                                                                                           \
        if (w32)                                                                                   \
            ((int32_t *)(p))[k] = (int32_t)(c);                                                    \
        else                                                                                       \
            ((dsmm_idx *)(p))[k] = (c);                                                            \
    } while (0)
#define DSMMI_VAL(p, k, vt)                                                                        \
    ((vt) == DSMM_DOUBLE ? ((const double *)(p))[k] : (double)((const float *)(p))[k])
#define DSMMI_SET_VAL(p, k, x, vt)                                                                 \
    do {                                                                                           \
        if ((vt) == DSMM_DOUBLE)                                                                   \
            ((double *)(p))[k] = (x);                                                              \
        else if ((vt) == DSMM_FLOAT)                                                               \
            ((float *)(p))[k] = (float)(x);                                                        \
    } while (0)

#if defined(__GNUC__) || defined(__clang__)
#define DSMMI_INLINE static inline __attribute__((always_inline))
#else
#define DSMMI_INLINE static inline
#endif

/* ------------------------------------------------------------------------------------------ */
/* SpMM: C = alpha * op(A) * B + beta * C (spmm.c front end; spmm_row.c, spmm_col.c kernels)  */
/* ------------------------------------------------------------------------------------------ */

/* One local SpMM, checked by dsmmi_local_spmm: op(A) is m x n (A when !trans, A^T when trans),
 * B n x k, C m x k, row-major with ldb, ldc >= k, of one type (FLOAT or DOUBLE); av holds A's
 * values in that type, or NULL when A is pattern (every value 1). A's rows may be unsorted
 * and its columns 32- or 64-bit. alpha != 0 (alpha == 0 never reaches a kernel), k >= 1.
 * beta == 0: C is written without being read. The ROW kernel is given trans == 0 only, COL
 * trans == 1 only (the front end transposes A into scratch otherwise); REF takes both. */
typedef struct dsmmi_spmm_args {
    const dsmm_csr *A;
    int trans;
    const void *av;
    dsmm_type type;
    dsmm_idx m, n, k;
    const void *B;
    dsmm_idx ldb;
    void *C;
    dsmm_idx ldc;
    double alpha, beta;
    int auto_chosen; // 1: the caller asked AUTO (a GPU entry may hand small products back)
    const dsmm_spmm_tiles *tiles; // COL: the tiles to read instead of A (then av is unused)
    const dsmm_idx *crow;         // ROW: row i of A (as stored) is row crow[i] of C; NULL: row i
} dsmmi_spmm_args;

/* A row-wise operand with its rows reordered (spmm_rows.c): S holds A's rows, row i of S
 * being row crow[i] of A, in blocks of DSMMI_SPMM_ROWS_BLOCK rows of A sorted by entry count
 * (stable), or in A's order (crow NULL) where that does not pay; val holds S's values in
 * `type` (NULL for a pattern A). */
#define DSMMI_SPMM_ROWS_BLOCK 4096
struct dsmm_spmm_rows {
    dsmm_ctx *ctx;
    dsmm_idx m, n, nnz; // A is m x n with nnz entries
    dsmm_type type;     // of val: FLOAT, DOUBLE, or PATTERN (val NULL, every value 1)
    dsmm_csr *S;        // the rows in their stored order (S's own values unused)
    void *val;
    dsmm_idx *crow; // m, or NULL: A's order
    size_t bytes;
};

/* A column-wise operand in tiles (spmm_tiles.c): the entries of S = op(A)^T whose column (row of
 * C) falls in [t * height, (t + 1) * height) are entries ptr[t] .. ptr[t + 1] - 1, in S's row
 * order; entry q adds val[q] * B(r, :) into row t * height + dst[q] of C, r = src[q]. In the
 * segmented layout (nseg > 0) src names segments instead: tile t's segments are sptr[t] ..
 * sptr[t + 1] - 1, segment s the entries beg[s] .. beg[s + 1] - 1, all from row src[s] of S. */
struct dsmm_spmm_tiles {
    dsmm_ctx *ctx;
    dsmm_idx m, n, nnz; // op(A) is m x n with nnz entries
    int transpose_a;    // as given to dsmm_spmm_tiles_create
    dsmm_type type;     // of val: FLOAT, DOUBLE, or PATTERN (val NULL, every value 1)
    dsmm_idx height;    // rows of C a tile (at most 65536)
    dsmm_idx ntiles;    // ceil(m / height)
    dsmm_idx *ptr;      // ntiles + 1
    int32_t *src32;     // rows of B when n fits 31 bits, else NULL and src holds them
    dsmm_idx *src;
    dsmm_idx nseg;   // segments (0: entries stand alone, src is per entry)
    dsmm_idx *sptr;  // ntiles + 1, when segmented
    dsmm_idx *beg;   // nseg + 1, when segmented
    uint16_t *dst;   // rows of C within the tile (per entry; per row run in the rows layout)
    dsmm_idx nruns;  // rows layout (0: not): runs of one row of C within a window of B's rows
    dsmm_idx nwin;   // windows of B's rows (rows layout); bucket b = tile * nwin + window
    dsmm_idx *bptr;  // ntiles * nwin + 1: a bucket's first run, in the rows layout
    dsmm_idx *rbeg;  // nruns + 1: a run's first entry, in the rows layout
    dsmm_idx window; // rows of B a window (rows layout)
    int slice;       // rows layout at k = 1: runs a chunk whose entries are interleaved (0: none)
    void *val;
    size_t bytes; // held by the arrays above
};

/* dsmmi_spmm_col_tiles: the column-wise product on a->tiles (threads take whole tiles). */
dsmm_status dsmmi_spmm_col_tiles(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);

/* A table entry; info (never NULL) gets threads and workspace_bytes. */
typedef dsmm_status (*dsmmi_spmm_fn)(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);
dsmmi_spmm_fn dsmmi_spmm_kernel(dsmm_spmm_alg alg);
void dsmmi_spmm_kernel_set(dsmm_spmm_alg alg, dsmmi_spmm_fn fn);

/* dsmmi_local_spmm: the one local SpMM every layer above calls: checks (shapes, types,
 * overlap), handles alpha == 0 and empty shapes, converts A's values, transposes A where the
 * kernel needs the other orientation, runs the table's kernel and fills info (may be NULL). */
dsmm_status dsmmi_local_spmm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_dense *B, dsmm_dense *C,
                             const dsmm_spmm_opts *opts, dsmm_spmm_info *info);

dsmm_status dsmmi_spmm_ref(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);
dsmm_status dsmmi_spmm_row(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);
dsmm_status dsmmi_spmm_col(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);

/* DSMMI_CLONES: the SpMM inner loops are compiled twice, for x86-64-v3 (AVX2 + FMA) and for
 * the baseline, and the loader picks the clone the CPU runs (GCC function multiversioning),
 * so one binary vectorises 4 doubles / 8 floats wide where it can and still runs anywhere.
 * DSMMI_CLONES_V4 adds an x86-64-v4 (AVX-512) clone (Cohen's estimator's 16-key vectors).
 * DSMMI_WIDE: the SpMM loops' 64-byte-vector instances, compiled for x86-64-v4 only and called
 * only where the CPU has it (dsmmi_spmm_wide); DSMMI_HAVE_WIDE says whether they are built. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) &&       \
    !defined(DSMM_NO_CLONES)
#define DSMMI_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define DSMMI_CLONES_V4                                                                            \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define DSMMI_HAVE_WIDE 1
#define DSMMI_WIDE      __attribute__((target("arch=x86-64-v4")))
#else
#define DSMMI_CLONES
#define DSMMI_CLONES_V4
#define DSMMI_HAVE_WIDE 0
#define DSMMI_WIDE
#endif

/* DSMMI_NO_VECTORIZE (GCC: on a function) and DSMMI_LOOP_SCALAR (clang: before a loop) keep
 * the compiler's loop vectoriser off a loop that runs faster scalar (the SpMV gathers). */
#if defined(__GNUC__) && !defined(__clang__)
#define DSMMI_NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#else
#define DSMMI_NO_VECTORIZE
#endif
#if defined(__clang__)
#define DSMMI_LOOP_SCALAR _Pragma("clang loop vectorize(disable)")
#else
#define DSMMI_LOOP_SCALAR
#endif

/* DSMMI_PAT_CONTRACT_OFF (GCC: on a function) and DSMMI_PAT_CONTRACT_OFF_BODY (clang: first
 * in its body): no fused multiply-adds in that function. For the column-wise kernel with a
 * pattern A, where alpha * B's row is the same for every entry of S's row: the compiler may
 * hoist that product out of one loop (two roundings) and fuse it in another (one), which made
 * the bits depend on the path a thread took. */
/* DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE: both on one function (GCC keeps only one of two
 * optimize attributes). */
#if defined(__GNUC__) && !defined(__clang__)
#define DSMMI_PAT_CONTRACT_OFF __attribute__((optimize("fp-contract=off")))
#define DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE                                                        \
    __attribute__((optimize("fp-contract=off", "no-tree-vectorize")))
#define DSMMI_PAT_CONTRACT_OFF_BODY
#elif defined(__clang__)
#define DSMMI_PAT_CONTRACT_OFF
#define DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE
#define DSMMI_PAT_CONTRACT_OFF_BODY _Pragma("clang fp contract(off)")
#else
#define DSMMI_PAT_CONTRACT_OFF
#define DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE
#define DSMMI_PAT_CONTRACT_OFF_BODY
#endif

/* 32-byte vectors for the SpMM inner loops (GCC/clang vector extensions: the compiler maps
 * them onto AVX registers, or pairs of SSE registers in the baseline clone). Loads and
 * stores go through memcpy, so B and C need no alignment. */
typedef double dsmmi_v4d __attribute__((vector_size(32)));
typedef float dsmmi_v8f __attribute__((vector_size(32)));

/* 64-byte vectors for the SpMM inner loops' AVX-512 instances (DSMMI_WIDE above). */
typedef double dsmmi_v8d __attribute__((vector_size(64)));
typedef float dsmmi_v16f __attribute__((vector_size(64)));

/* Narrower vectors for the row-wise loops' last columns (fewer than a vector's lanes left):
 * 2, 4 and 8 lanes of either type (spmm_row_tmpl.h, ROW_PASS). */
typedef float dsmmi_v2f __attribute__((vector_size(8)));
typedef float dsmmi_v4f __attribute__((vector_size(16)));
typedef double dsmmi_v2d __attribute__((vector_size(16)));

/* The column-wise scatter of one entry, shared by spmm_col_tmpl.h and spmm_tile_tmpl.h (it
 * expands there, with their T, V, VL and N2, N4, N8): cr[0:KC) += s * b[0:KC), vs = s in every
 * lane, in vectors, then the columns left in pieces of 8, 4 and 2 lanes and one scalar (a
 * scalar tail ran 3.7-5 times k = 8's time at k = 7 float, ca-condmat, 1 thread); bn (NULL: none) a
 * row of B whose lines are prefetched one per 64 bytes on the way. The same operations in every
 * kernel, so their results agree bitwise. */
#define DSMMI_COL_AXPY(cr, b, vs, s, KC, bn)                                                       \
    {                                                                                              \
        dsmm_idx j_ = 0;                                                                           \
        for (; j_ + VL <= (KC); j_ += VL) {                                                        \
            if ((bn) && (j_ * (dsmm_idx)sizeof(T)) % 64 == 0) __builtin_prefetch((bn) + j_, 0, 3); \
            V x_, y_;                                                                              \
            memcpy(&x_, (b) + j_, sizeof x_);                                                      \
            memcpy(&y_, (cr) + j_, sizeof y_);                                                     \
            y_ += (vs)*x_;                                                                         \
            memcpy((cr) + j_, &y_, sizeof y_);                                                     \
        }                                                                                          \
        /* the fewer than VL columns left: one piece of 8, 4 and 2 lanes at most, then one */      \
        if (VL > 8 && j_ + 8 <= (KC)) DSMMI_COL_AXPY_PIECE(N8, cr, b, s, j_)                       \
        if (VL > 4 && j_ + 4 <= (KC)) DSMMI_COL_AXPY_PIECE(N4, cr, b, s, j_)                       \
        if (j_ + 2 <= (KC)) DSMMI_COL_AXPY_PIECE(N2, cr, b, s, j_)                                 \
        if (j_ < (KC)) (cr)[j_] += (s) * (b)[j_];                                                  \
    }
#define DSMMI_COL_AXPY_PIECE(VT, cr, b, s, j_)                                                     \
    {                                                                                              \
        VT x_, y_;                                                                                 \
        memcpy(&x_, (b) + j_, sizeof x_);                                                          \
        memcpy(&y_, (cr) + j_, sizeof y_);                                                         \
        y_ += (s)*x_;                                                                              \
        memcpy((cr) + j_, &y_, sizeof y_);                                                         \
        j_ += (dsmm_idx)(sizeof x_ / sizeof(T));                                                   \
    }

/* Measured choices of the SpMM kernels (docs/kernels.md); a global so benchmarks can vary it. */
typedef struct dsmmi_spmm_tuning {
    dsmm_idx row_buffer_k; // row-wise: k from which sums go through an L1 buffer (0 = never,
                           // the default: dsmmi_spmm_buffer_k)
    size_t row_stream_min; // row-wise: bytes of C from which beta = 0 stores stream (0 = never)
    dsmm_idx row_prefetch; // row-wise, wide k: entries of A ahead whose row of B is prefetched
    dsmm_idx row_block_prefetch; // row-wise blocks of >= 128 bytes: the same; 0 none, -1 by
                                 // CPU and B's size (dsmmi_spmm_block_prefetch)
    int row_odd_mask;            // row-wise: a row's odd entry added under a mask, not a branch: 0
                                 // never; 1 at k = 1, and at one 32-byte vector when rows' parity
                                 // changes often (dsmmi_spmm_parity_mixed); 2 at both always
    int row_gather;              // row-wise, k = 1 with ldb = 1: AVX-512 gathers (ROW_GATHER): 0
                                 // never, 1 wherever the CPU has AVX-512, -1 there but on AMD
    int vec_bytes;               // both: widest vectors used (64: AVX-512 where the CPU has it; 32)
    double col_split_bytes;      // column-wise: bytes of a row of B (k * value size) up to which
                                 // threads split S's rows into private copies of C instead of
                                 // owning C's rows
    size_t col_private_max;      // column-wise: most bytes of those private copies, else 1 thread
    size_t col_tile_bytes;       // column-wise on tiles: bytes of C a tile covers (its height)
    dsmm_idx col_tile_prefetch;  // column-wise on tiles, rows of B of 256 bytes or more: entries
                                 // ahead whose row of B is prefetched (0 = none)
    dsmm_idx col_tile_src32_max; // column-wise on tiles: rows of B up to which their indices
                                 // are 32-bit (INT32_MAX; tests lower it for the 64-bit path)
    int col_tile_runs;           // column-wise on tiles, segmented layout: 1 always, 0 never,
                                 // -1 when a row of B takes 256 bytes to 8 vectors and
                                 // entries / segments >= col_tile_runs_min
    double col_tile_runs_min;
    int col_tile_group_tail; // column-wise on tiles, k below one vector: 1 four runs side by
                             // side (GROUP_TAIL in spmm_tile_tmpl.h), 0 one run at a time
    int col_tile_rows;       // column-wise on tiles: 1 the rows layout (a tile's entries grouped by
                             // row of C within windows of B's rows), 0 entries standing alone or
                             // in segments (col_tile_runs)
    size_t col_tile_window;  // rows layout: bytes of B a window covers (SIZE_MAX, the default:
                             // one window, all of B; 0: the last-level
                             // cache's size; all of B where unknown)
    int col_tile_slice;      // rows layout at k = 1: runs in interleaved chunks (1) or not (0);
                             // -1: by CPU (dsmmi_spmm_slice)
    int col_tile_stream;     // column-wise on tiles: C of row_stream_min bytes or more, with
                             // rows of col_tile_stream_row bytes or more, built in
                             // per-thread tile buffers and streamed out (0 = in place)
    double col_tile_stream_row;
    double min_thread_work; // both: multiply-adds and C entries a thread must get (tests: less)
    int rows_reorder;       // dsmm_spmm_rows: -1 by A, k and type (spmm_rows.c), 0 A's order,
                            // 1 always by length
} dsmmi_spmm_tuning;
extern dsmmi_spmm_tuning dsmmi_spmm_tune;
/* Whether the entry counts of consecutive rows of rp (m rows) change parity often enough
 * (a third of the pairs or more, in up to 16 runs of 64 rows spread over the matrix) that a
 * branch on a row's parity mispredicts: graphs (0.37-0.51), not meshes (0-0.26). */
int dsmmi_spmm_parity_mixed(const dsmm_idx *rp, dsmm_idx m);
/* The prefetch distance of the row-wise register blocks of 128 bytes or more (rows of B named
 * that many entries of A ahead, in the thread's range): row_block_prefetch, and for -1 8 on AMD
 * Zen 1 (znver1) where B is larger than the L2, else 0. Only measured there: 0.68-0.95 of the
 * time on graphs, unbanded meshes and R-MAT at k = 64 and 256, up to 1.10 on banded matrices
 * (1.16 with a B the L2 holds; docs/kernels.md); kept out on the Intel Xeon and Zen 4 VMs
 * (mixed at k = 64 double, 0.81-1.12). */
dsmm_idx dsmmi_spmm_block_prefetch(const dsmmi_spmm_args *a);
/* Whether k = 1 (B's column contiguous) runs on AVX-512 gathers (ROW_GATHER): row_gather, and
 * the CPU. */
int dsmmi_spmm_gather(void);
/* The row-wise kernel's row_buffer_k in effect (0: register blocks at every k). 0 by default on
 * every CPU: the L1 buffer path ran 1.45-4.5x as long on an Intel Xeon and 1.1-1.8x on an AMD
 * EPYC (Zen 4), where it had been the default (docs/kernels.md). */
dsmm_idx dsmmi_spmm_buffer_k(void);
/* Whether the column-wise tiles at k = 1 put their runs in interleaved chunks: col_tile_slice,
 * and for -1 every CPU but AMD's. On the AMD EPYC (Zen 4) VM the chunks ran 1.0-2.5x as long as
 * plain runs, with AVX-512 gathers or without (the row-wise kernel's gathers are off there for
 * the same reason; docs/kernels.md). */
int dsmmi_spmm_slice(void);

/* dsmmi_spmm_wide: whether the product runs the 64-byte vector (AVX-512) instances: the CPU
 * has x86-64-v4, vec_bytes allows it, a row of B holds min_bytes at least (the kernels pass
 * what they measured: row-wise 128, column-wise 64), and B's and C's rows start on 64-byte
 * boundaries (else every vector splits a cache line: 1.4-1.6x as long as 32-byte vectors on
 * facebook). */
int dsmmi_spmm_wide(const dsmmi_spmm_args *a, size_t min_bytes);

/* dsmmi_spmm_threads: the context's threads, fewer for a small product: each thread must get at
 * least min_thread_work (8192) multiply-adds and C entries ((nnz(A) + m) * k), below which
 * starting it costs more than it brings. With threads already running (products back to back)
 * two threads took 0.52-0.66 of one thread's time from 22,000 such units on a Zen 1 VM, where
 * 65536 a thread had kept three of the benchmark's k = 1 products on one (docs/kernels.md). */
int dsmmi_spmm_threads(dsmm_ctx *ctx, const dsmmi_spmm_args *a);

/* dsmmi_spmm_scale_rows: C(r0:r1, 0:k) = beta * C (beta == 0 writes zeros without reading). */
void dsmmi_spmm_scale_rows(void *C, dsmm_type type, dsmm_idx ldc, dsmm_idx r0, dsmm_idx r1,
                           dsmm_idx k, double beta);

/* ------------------------------------------------------------------------------------------ */
/* Merging partial results (merge.c)                                                          */
/* ------------------------------------------------------------------------------------------ */

/* dsmmi_csr_merge: C = P[0] (+) P[1] (+) ... (+) P[n-1], entry-wise with the add of semiring sr
 * (plus for PLUS_TIMES and PLUS_PAIR, min for MIN_PLUS, max for MAX_TIMES); NULL parts are
 * skipped; all parts nrows x ncols with sorted rows (any column width, any value type;
 * pattern parts count as 1). A k-way heap merge per row (HipMCL §II's baseline of Sparse
 * SUMMA): a binary heap of the parts' row cursors keyed by (column, part); one part is copied,
 * two take a linear two-way merge; two passes over rows (count, then fill) parallel over rows
 * with OpenMP, rows balanced by their total input length. Equal columns combine in part
 * order, so C is the same at any thread count. Entries are structural (zeros kept).
 * C: new, nrows x ncols, type `type` (PATTERN: no values), columns col_bits wide (32 needs
 * ncols <= INT32_MAX), rows sorted. Values accumulate in double. n == 0 (or only NULL or empty
 * parts): an empty nrows x ncols matrix. P and the parts are only read.
 * Errors: DSMM_ERR_ARG (a part not nrows x ncols, unsorted part, n < 0, bad sr/type/bits);
 * DSMM_ERR_NOMEM. On error *C is NULL. */
dsmm_status dsmmi_csr_merge(dsmm_ctx *ctx, const dsmm_csr *const *P, int n, dsmm_idx nrows,
                            dsmm_idx ncols, dsmm_semiring sr, dsmm_type type, int col_bits,
                            dsmm_csr **C);

/* ------------------------------------------------------------------------------------------ */
/* Accumulating the partial products of Sparse SUMMA's stages (merge_binary.c)                */
/* ------------------------------------------------------------------------------------------ */

/* The merge schedule: KWAY keeps every stage's partial product and merges them all at the end
 * (HipMCL §II); BINARY is HipMCL-GPU §IV's Algorithm 2: partial products go on a stack, and
 * after stage i (1-based) whose number has t >= 1 trailing zero bits the top t + 1 lists are
 * popped and merged into one (one multi-way merge, as the paper does), which is pushed back;
 * the lists left at the end are merged once more. */
typedef enum { DSMMI_MERGE_KWAY = 0, DSMMI_MERGE_BINARY } dsmmi_merge_sched;

/* dsmmi_binary_merge_count: the lists Algorithm 2 pops and merges after stage i (1-based):
 * 0 when i is odd, else 1 + the number of trailing zero bits of i. */
int dsmmi_binary_merge_count(int i);

/* dsmmi_csr_bytes: bytes of A's arrays: (nrows + 1) row pointers, nnz columns of A's width and
 * nnz values of A's type; 0 for NULL. */
int64_t dsmmi_csr_bytes(const dsmm_csr *A);

/* One rank's partial products during a SUMMA run. stack[0..depth) in stage order (a NULL list
 * is a stage without product); bytes: dsmmi_csr_bytes of the lists held, plus the output of
 * the merge running; peak_bytes: the most bytes ever held, which a merge reaches with its
 * inputs and output alive at once; seconds in merges; merges: merges of two or more lists
 * (one non-empty list is passed on, never copied). */
typedef struct dsmmi_merge_acc {
    dsmmi_merge_sched sched;
    dsmm_idx nrows, ncols;
    dsmm_semiring sr;
    dsmm_type type;
    int col_bits;
    dsmm_csr **stack;
    int depth, cap, pushed;
    int64_t bytes, peak_bytes;
    double seconds;
    int merges;
} dsmmi_merge_acc;

/* dsmmi_merge_acc_init: an empty accumulator for nstages stages of nrows x ncols partial
 * products, merged with semiring sr's add into `type` with col_bits-wide columns (as
 * dsmmi_csr_merge). */
dsmm_status dsmmi_merge_acc_init(dsmm_ctx *ctx, dsmmi_merge_sched sched, int nstages,
                                 dsmm_idx nrows, dsmm_idx ncols, dsmm_semiring sr, dsmm_type type,
                                 int col_bits, dsmmi_merge_acc *acc);
/* dsmmi_merge_acc_push: the next stage's partial product (*part, NULL for a stage without one;
 * of type `type` with col_bits columns) is taken over (*part becomes NULL, also on failure),
 * then the schedule's merge of that stage runs. */
dsmm_status dsmmi_merge_acc_push(dsmm_ctx *ctx, dsmmi_merge_acc *acc, dsmm_csr **part);
/* dsmmi_merge_acc_finish: *C = the merge of every list held (an empty matrix if none); the
 * accumulator is left empty. Summation order: each entry sums its stages' values in stage
 * order, left to right, under KWAY; BINARY groups them as the schedule does (the same sums
 * bit for bit while nstages <= 5, with double values, or for exact adds such as min and max). */
dsmm_status dsmmi_merge_acc_finish(dsmm_ctx *ctx, dsmmi_merge_acc *acc, dsmm_csr **C);
void dsmmi_merge_acc_free(dsmm_ctx *ctx, dsmmi_merge_acc *acc);

#endif // DSMM_KERNELS_H
