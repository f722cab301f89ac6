// src/kernels/merge.c: k-way merge of partial SpGEMM results, C = P[0] (+) ... (+) P[n-1]
// under the add of a semiring (dsmmi_csr_merge).
// Sparse SUMMA's baseline (HipMCL §II): every stage leaves a partial C tile, and at the end
// row i of C is the merge of the parts' sorted rows i through a binary min-heap of row cursors
// keyed by (column, part), O(len log k) for a row of len input entries from k parts, as the
// heap accumulator of spgemm_heap.c merges B rows. Two parts take a linear two-way merge and one
// part a copy. Two passes over rows (count, exact allocation, fill) in chunks of equal input
// length. Equal columns combine in part order, so C does not depend on the thread count.
#include <string.h>

#include "kernels/kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define CHUNKS_PER_THREAD      8
#define MIN_ENTRIES_PER_THREAD 65536

typedef struct mplan {
    const dsmm_csr **p; // the parts that hold entries, in part order
    int np;
    dsmm_idx nrows;
    int w32, kind, vt; // C's column width, DSMMI_K_* (PATTERN when C has no values), C's type
    dsmm_idx *wprefix; // nrows + 1: prefix sums of (input entries of row i + 1)
    dsmm_idx *bounds;  // nchunks + 1 row bounds
    int nchunks, threads;
    dsmm_idx *pos, *key; // heap workspace: np slots per thread each
    int32_t *src;
} mplan;

// Loads the cursors of row i into the heap (equal columns pop in part order,
// dsmmi_heap_before); returns the heap size.
static int heap_init(const mplan *pl, dsmm_idx i, dsmm_idx *pos, dsmm_idx *key, int32_t *src)
{
    int n = 0;
    for (int t = 0; t < pl->np; t++) {
        const dsmm_csr *P = pl->p[t];
        dsmm_idx q = P->rowptr[i];
        pos[t] = q;
        if (q < P->rowptr[i + 1]) {
            key[n] = dsmm_csr_col(P, q);
            src[n] = t;
            n++;
        }
    }
    for (int s = n / 2; s-- > 0;) dsmmi_heap_sift_down(key, src, n, s);
    return n;
}

// Advances the top cursor; returns the new heap size.
static inline int heap_next(const mplan *pl, dsmm_idx i, int n, dsmm_idx *pos, dsmm_idx *key,
                            int32_t *src)
{
    int t = src[0];
    const dsmm_csr *P = pl->p[t];
    dsmm_idx q = ++pos[t];
    if (q < P->rowptr[i + 1]) {
        key[0] = dsmm_csr_col(P, q);
    } else {
        n--;
        key[0] = key[n];
        src[0] = src[n];
    }
    if (n > 1) dsmmi_heap_sift_down(key, src, n, 0);
    return n;
}

static dsmm_idx count2(const dsmm_csr *A, const dsmm_csr *B, dsmm_idx i)
{
    dsmm_idx a = A->rowptr[i], ae = A->rowptr[i + 1], b = B->rowptr[i], be = B->rowptr[i + 1];
    dsmm_idx out = 0;
    while (a < ae && b < be) {
        dsmm_idx ca = dsmm_csr_col(A, a), cb = dsmm_csr_col(B, b);
        a += ca <= cb;
        b += cb <= ca;
        out++;
    }
    return out + (ae - a) + (be - b);
}

static dsmm_idx countk(const mplan *pl, dsmm_idx i, dsmm_idx *pos, dsmm_idx *key, int32_t *src)
{
    int n = heap_init(pl, i, pos, key, src);
    dsmm_idx out = 0, last = -1;
    while (n > 0) {
        out += key[0] != last;
        last = key[0];
        n = heap_next(pl, i, n, pos, key, src);
    }
    return out;
}

// Two-way merge of row i; A's value comes first where both hold the column.
DSMMI_INLINE void fill2(const mplan *pl, dsmm_idx i, void *ccol, void *cval, dsmm_idx *written,
                        const int w32, const int kind, const int vt)
{
    const dsmm_csr *A = pl->p[0], *B = pl->p[1];
    const int vals = kind != DSMMI_K_PATTERN;
    dsmm_idx a = A->rowptr[i], ae = A->rowptr[i + 1], b = B->rowptr[i], be = B->rowptr[i + 1];
    dsmm_idx o = 0;
    while (a < ae || b < be) {
        // INT64_MAX > every column, so an exhausted side never wins
        dsmm_idx ca = a < ae ? dsmm_csr_col(A, a) : INT64_MAX;
        dsmm_idx cb = b < be ? dsmm_csr_col(B, b) : INT64_MAX;
        double x = 0.0;
        if (ca == cb) {
            if (vals) x = dsmmi_sr_add(kind, dsmm_csr_value(A, a), dsmm_csr_value(B, b));
            a++;
            b++;
        } else if (ca < cb) {
            if (vals) x = dsmm_csr_value(A, a);
            a++;
        } else {
            if (vals) x = dsmm_csr_value(B, b);
            b++;
        }
        DSMMI_SET_COL(ccol, o, ca < cb ? ca : cb, w32);
        if (vals) DSMMI_SET_VAL(cval, o, x, vt);
        o++;
    }
    *written = o;
}

// k-way heap merge of row i.
DSMMI_INLINE void fillk(const mplan *pl, dsmm_idx i, dsmm_idx *pos, dsmm_idx *key, int32_t *src,
                        void *ccol, void *cval, dsmm_idx *written, const int w32, const int kind,
                        const int vt)
{
    const int vals = kind != DSMMI_K_PATTERN;
    int n = heap_init(pl, i, pos, key, src);
    dsmm_idx o = -1, last = -1;
    double acc = 0.0;
    while (n > 0) {
        dsmm_idx c = key[0];
        double v = vals ? dsmm_csr_value(pl->p[src[0]], pos[src[0]]) : 0.0;
        if (c != last) {
            if (o >= 0 && vals) DSMMI_SET_VAL(cval, o, acc, vt);
            o++;
            DSMMI_SET_COL(ccol, o, c, w32);
            acc = v;
            last = c;
        } else if (vals) {
            acc = dsmmi_sr_add(kind, acc, v);
        }
        n = heap_next(pl, i, n, pos, key, src);
    }
    if (o >= 0 && vals) DSMMI_SET_VAL(cval, o, acc, vt);
    *written = o + 1;
}

static void count_pass(const mplan *pl, dsmm_idx *rowptr)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(pl->threads)
#endif
    for (int c = 0; c < pl->nchunks; c++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dsmm_idx *pos = pl->pos + (size_t)t * pl->np, *key = pl->key + (size_t)t * pl->np;
        int32_t *src = pl->src + (size_t)t * pl->np;
        for (dsmm_idx i = pl->bounds[c]; i < pl->bounds[c + 1]; i++)
            rowptr[i + 1] =
                pl->np == 2 ? count2(pl->p[0], pl->p[1], i) : countk(pl, i, pos, key, src);
    }
}

// Fills C's rows; returns 1 when a row wrote a different count than counted (a dsmm bug).
static int fill_pass(const mplan *pl, dsmm_csr *C)
{
    size_t cw = pl->w32 ? sizeof(int32_t) : sizeof(dsmm_idx);
    size_t vw = dsmmi_type_size(C->type);
    char *cc = pl->w32 ? (char *)C->colidx32 : (char *)C->colidx;
    char *cv = (char *)C->val;
    int bad = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(pl->threads) reduction(| : bad)
#endif
    for (int c = 0; c < pl->nchunks; c++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        dsmm_idx *pos = pl->pos + (size_t)t * pl->np, *key = pl->key + (size_t)t * pl->np;
        int32_t *src = pl->src + (size_t)t * pl->np;
        for (dsmm_idx i = pl->bounds[c]; i < pl->bounds[c + 1]; i++) {
            dsmm_idx p = C->rowptr[i], nz = C->rowptr[i + 1] - p, got = 0;
            if (nz == 0) continue;
            void *rc = cc + (size_t)p * cw;
            void *rv = cv ? cv + (size_t)p * vw : NULL;
            if (pl->np == 2)
                DSMMI_RW_DISPATCH(pl, fill2, pl, i, rc, rv, &got);
            else
                DSMMI_RW_DISPATCH(pl, fillk, pl, i, pos, key, src, rc, rv, &got);
            bad |= got != nz;
        }
    }
    return bad;
}

// The one-part case: C is that part with its columns and values converted.
static dsmm_status copy_part(dsmm_ctx *ctx, const dsmm_csr *P, dsmm_type type, int col_bits,
                             dsmm_csr **C)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Cn = NULL;
    DSMM_TRY(dsmmi_csr_create_ex(ctx, P->nrows, P->ncols, P->nnz, type, col_bits, &Cn));
    memcpy(Cn->rowptr, P->rowptr, ((size_t)P->nrows + 1) * sizeof *Cn->rowptr);
    if (col_bits == dsmmi_csr_col_bits(P)) {
        if (col_bits == 32)
            memcpy(Cn->colidx32, P->colidx32, (size_t)P->nnz * sizeof *Cn->colidx32);
        else
            memcpy(Cn->colidx, P->colidx, (size_t)P->nnz * sizeof *Cn->colidx);
    } else if (col_bits == 32) {
        for (dsmm_idx k = 0; k < P->nnz; k++) Cn->colidx32[k] = (int32_t)P->colidx[k];
    } else {
        for (dsmm_idx k = 0; k < P->nnz; k++) Cn->colidx[k] = P->colidx32[k];
    }
    dsmmi_vals_convert(Cn->val, type, P->val, P->type, P->nnz);
    Cn->nnz = P->nnz;
    *C = Cn;
    Cn = NULL;
cleanup:
    dsmm_csr_destroy(&Cn);
    return st;
}

dsmm_status dsmmi_csr_merge(dsmm_ctx *ctx, const dsmm_csr *const *P, int n, dsmm_idx nrows,
                            dsmm_idx ncols, dsmm_semiring sr, dsmm_type type, int col_bits,
                            dsmm_csr **C)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Cn = NULL;
    dsmm_idx *rp = NULL;
    mplan pl = {0};

    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_ARG, "merge: C must be non-NULL");
    *C = NULL;
    DSMM_CHECK(ctx, n >= 0 && (n == 0 || P != NULL), DSMM_ERR_ARG,
               "merge: %d parts (P must be non-NULL when n > 0)", n);
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0, DSMM_ERR_ARG, "merge: negative shape %lld x %lld",
               (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, (int)sr >= 0 && sr < DSMM_SEMIRING_COUNT, DSMM_ERR_ARG,
               "merge: invalid semiring %d", (int)sr);
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "merge: invalid value type %d", (int)type);
    DSMM_CHECK(ctx, col_bits == 64 || (col_bits == 32 && ncols <= INT32_MAX), DSMM_ERR_ARG,
               "merge: %d-bit columns for %lld columns", col_bits, (long long)ncols);
    int np = 0;
    for (int t = 0; t < n; t++) {
        const dsmm_csr *A = P[t];
        if (A == NULL) continue;
        DSMM_CHECK(ctx, A->nrows == nrows && A->ncols == ncols, DSMM_ERR_ARG,
                   "merge: part %d is %lld x %lld, expected %lld x %lld", t, (long long)A->nrows,
                   (long long)A->ncols, (long long)nrows, (long long)ncols);
        DSMM_CHECK(ctx, dsmmi_type_ok(A->type), DSMM_ERR_ARG,
                   "merge: part %d has invalid value type %d", t, (int)A->type);
        DSMM_CHECK(ctx, A->sorted || dsmmi_csr_rows_increasing(A), DSMM_ERR_ARG,
                   "merge: part %d has unsorted rows (dsmm_csr_sort_inplace first)", t);
        np += A->nnz > 0;
    }

    if (np == 0) {
        DSMM_TRY(dsmmi_csr_create_ex(ctx, nrows, ncols, 0, type, col_bits, C));
        goto cleanup;
    }
    pl.p = dsmmi_malloc(ctx, (size_t)np, sizeof *pl.p);
    DSMM_CHECK(ctx, pl.p != NULL, DSMM_ERR_NOMEM, "merge: list of %d parts", np);
    for (int t = 0; t < n; t++)
        if (P[t] != NULL && P[t]->nnz > 0) pl.p[pl.np++] = P[t];
    if (np == 1) {
        DSMM_TRY(copy_part(ctx, pl.p[0], type, col_bits, C));
        goto cleanup;
    }

    pl.nrows = nrows;
    pl.w32 = col_bits == 32;
    pl.kind = type == DSMM_PATTERN ? DSMMI_K_PATTERN : (int)sr;
    pl.vt = (int)type;
    // A thread must get enough entries to pay for waking it.
    dsmm_idx total = nrows;
    for (int t = 0; t < np; t++) total += pl.p[t]->nnz;
    pl.threads = dsmmi_threads(ctx);
    if (total / MIN_ENTRIES_PER_THREAD + 1 < pl.threads)
        pl.threads = (int)(total / MIN_ENTRIES_PER_THREAD + 1);
    pl.wprefix = dsmmi_malloc(ctx, (size_t)nrows + 1, sizeof *pl.wprefix);
    DSMM_CHECK(ctx, pl.wprefix != NULL, DSMM_ERR_NOMEM, "merge: weights of %lld rows",
               (long long)nrows);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(pl.threads)
#endif
    for (dsmm_idx i = 0; i < nrows; i++) {
        dsmm_idx len = 1;
        for (int t = 0; t < np; t++) len += pl.p[t]->rowptr[i + 1] - pl.p[t]->rowptr[i];
        pl.wprefix[i + 1] = len;
    }
    pl.wprefix[0] = 0;
    for (dsmm_idx i = 0; i < nrows; i++) pl.wprefix[i + 1] += pl.wprefix[i];
    dsmm_idx nchunks = (dsmm_idx)pl.threads * CHUNKS_PER_THREAD;
    if (nchunks > nrows) nchunks = nrows > 0 ? nrows : 1;
    pl.nchunks = (int)nchunks;
    pl.bounds = dsmmi_malloc(ctx, (size_t)pl.nchunks + 1, sizeof *pl.bounds);
    DSMM_CHECK(ctx, pl.bounds != NULL, DSMM_ERR_NOMEM, "merge: chunk bounds");
    dsmmi_split_prefix(pl.wprefix, pl.nrows, pl.nchunks, pl.bounds); // input entries + 1 a row
    // heap workspace, np slots per thread (unused by the two-way merge, but small)
    size_t slots = (size_t)pl.threads * (size_t)np;
    pl.pos = dsmmi_malloc(ctx, slots, sizeof *pl.pos);
    pl.key = dsmmi_malloc(ctx, slots, sizeof *pl.key);
    pl.src = dsmmi_malloc(ctx, slots, sizeof *pl.src);
    DSMM_CHECK(ctx, pl.pos && pl.key && pl.src, DSMM_ERR_NOMEM,
               "merge: heaps of %d parts for %d threads", np, pl.threads);

    rp = dsmmi_malloc(ctx, (size_t)nrows + 1, sizeof *rp);
    DSMM_CHECK(ctx, rp != NULL, DSMM_ERR_NOMEM, "merge: row counts of %lld rows", (long long)nrows);
    rp[0] = 0;
    count_pass(&pl, rp);
    for (dsmm_idx i = 0; i < nrows; i++) rp[i + 1] += rp[i];
    DSMM_TRY(dsmmi_csr_create_ex(ctx, nrows, ncols, rp[nrows], type, col_bits, &Cn));
    dsmmi_free(ctx, Cn->rowptr);
    Cn->rowptr = rp;
    rp = NULL;
    Cn->nnz = Cn->rowptr[nrows];
    DSMM_CHECK(ctx, !fill_pass(&pl, Cn), DSMM_ERR_INTERNAL,
               "merge: a row's fill differs from its count");
    *C = Cn;
    Cn = NULL;
cleanup:
    dsmm_csr_destroy(&Cn);
    rp = dsmmi_free(ctx, rp);
    pl.p = dsmmi_free(ctx, pl.p);
    pl.wprefix = dsmmi_free(ctx, pl.wprefix);
    pl.bounds = dsmmi_free(ctx, pl.bounds);
    pl.pos = dsmmi_free(ctx, pl.pos);
    pl.key = dsmmi_free(ctx, pl.key);
    pl.src = dsmmi_free(ctx, pl.src);
    return st;
}
