// src/sparse/coo.c: coordinate triples: creation, appending, assembly into CSR and back.
// Assembly is a stable counting sort by row, then a stable sort of each row by column and a
// merge of duplicates (sort.c), so DSMM_DUP_LAST keeps the entry that came last in the input.
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sparse/sparse.h"

dsmm_status dsmm_coo_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx cap,
                            dsmm_type type, dsmm_coo **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "coo_create: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "coo_create: invalid or destroyed context");
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0 && cap >= 0, DSMM_ERR_ARG,
               "coo_create: negative size (nrows %lld, ncols %lld, cap %lld)", (long long)nrows,
               (long long)ncols, (long long)cap);
    DSMM_CHECK(ctx, nrows < INT64_MAX && (uint64_t)cap < SIZE_MAX, DSMM_ERR_NOMEM,
               "coo_create: %lld entries do not fit in memory", (long long)cap);
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "coo_create: invalid value type %d",
               (int)type);
    T = dsmmi_calloc(ctx, 1, sizeof *T);
    DSMM_CHECK(ctx, T != NULL, DSMM_ERR_NOMEM, "coo_create: struct");
    T->ctx = ctx;
    T->nrows = nrows;
    T->ncols = ncols;
    T->type = type;
    T->row = dsmmi_malloc(ctx, (size_t)cap, sizeof *T->row);
    T->col = dsmmi_malloc(ctx, (size_t)cap, sizeof *T->col);
    DSMM_CHECK(ctx, T->row != NULL && T->col != NULL, DSMM_ERR_NOMEM,
               "coo_create: indices of %lld entries", (long long)cap);
    if (type != DSMM_PATTERN) {
        T->val = dsmmi_malloc(ctx, (size_t)cap, dsmmi_type_size(type));
        DSMM_CHECK(ctx, T->val != NULL, DSMM_ERR_NOMEM, "coo_create: values of %lld entries",
                   (long long)cap);
    }
    T->cap = cap;
    *out = T;
    T = NULL;
cleanup:
    dsmm_coo_destroy(&T);
    return st;
}

void dsmm_coo_destroy(dsmm_coo **pT)
{
    if (pT == NULL || *pT == NULL) return;
    dsmm_coo *T = *pT;
    dsmm_ctx *ctx = T->ctx;
    dsmmi_free(ctx, T->row);
    dsmmi_free(ctx, T->col);
    dsmmi_free(ctx, T->val);
    dsmmi_free(ctx, T);
    *pT = NULL;
}

// Each array is grown separately; cap changes only when all have grown, so a failure leaves
// T valid (some arrays merely larger than cap).
static dsmm_status coo_grow(dsmm_coo *T)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = T->ctx;
    dsmm_idx cap = T->cap < 16 ? 16 : T->cap;
    DSMM_CHECK(ctx, cap <= INT64_MAX / 2, DSMM_ERR_NOMEM, "coo_push: capacity %lld cannot grow",
               (long long)cap);
    cap *= 2;
    dsmm_idx *r = dsmmi_realloc(ctx, T->row, (size_t)cap, sizeof *r);
    DSMM_CHECK(ctx, r != NULL, DSMM_ERR_NOMEM, "coo_push: %lld row indices", (long long)cap);
    T->row = r;
    dsmm_idx *c = dsmmi_realloc(ctx, T->col, (size_t)cap, sizeof *c);
    DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "coo_push: %lld column indices", (long long)cap);
    T->col = c;
    if (T->type != DSMM_PATTERN) {
        void *v = dsmmi_realloc(ctx, T->val, (size_t)cap, dsmmi_type_size(T->type));
        DSMM_CHECK(ctx, v != NULL, DSMM_ERR_NOMEM, "coo_push: %lld values", (long long)cap);
        T->val = v;
    }
    T->cap = cap;
cleanup:
    return st;
}

dsmm_status dsmm_coo_push(dsmm_coo *T, dsmm_idx i, dsmm_idx j, double v)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = T ? T->ctx : NULL;

    DSMM_CHECK(ctx, T != NULL, DSMM_ERR_ARG, "coo_push: T must be non-NULL");
    DSMM_CHECK(ctx, i >= 0 && i < T->nrows && j >= 0 && j < T->ncols, DSMM_ERR_ARG,
               "coo_push: entry (%lld, %lld) outside the %lld x %lld matrix (0-based)",
               (long long)i, (long long)j, (long long)T->nrows, (long long)T->ncols);
    if (T->nnz >= T->cap) DSMM_TRY(coo_grow(T));
    T->row[T->nnz] = i;
    T->col[T->nnz] = j;
    if (T->type == DSMM_DOUBLE)
        ((double *)T->val)[T->nnz] = v;
    else if (T->type == DSMM_FLOAT)
        ((float *)T->val)[T->nnz] = (float)v;
    T->nnz++;
cleanup:
    return st;
}

#define PAR_MIN 20000 // entries below which threads cost more than they save

static inline double coo_val(const dsmm_coo *T, dsmm_idx k)
{
    if (T->type == DSMM_DOUBLE) return ((const double *)T->val)[k];
    return (double)((const float *)T->val)[k];
}

// Stable counting sort by row, in parallel: thread t takes the t-th contiguous chunk of the
// triples, counts its rows in cnt[t], and gets, for every row, the slots after those of the
// chunks before it, so each row keeps input order. Fills rowptr (zeroed on entry) and c1/v1
// (v1 NULL: no values); *bad receives the smallest index of an entry outside the matrix
// (left alone when all are inside, and then nothing is scattered).
static void scatter(const dsmm_coo *T, int nt, dsmm_idx *cnt, dsmm_idx *rowptr, dsmm_idx *c1,
                    double *v1, dsmm_idx *bad)
{
    dsmm_idx nnz = T->nnz, nrows = T->nrows, ncols = T->ncols, first_bad = nnz;
    const dsmm_idx *row = T->row, *col = T->col;
    size_t stride = (size_t)nrows + 1;
    (void)nt; // only OpenMP reads it
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), tn = omp_get_num_threads();
#else
        int t = 0, tn = 1;
#endif
        dsmm_idx k0 = nnz / tn * t + (t < nnz % tn ? t : nnz % tn);
        dsmm_idx k1 = k0 + nnz / tn + (t < nnz % tn ? 1 : 0);
        dsmm_idx *h = cnt + (size_t)t * stride;
        for (dsmm_idx k = k0; k < k1; k++) {
            dsmm_idx i = row[k], j = col[k];
            if (i < 0 || i >= nrows || j < 0 || j >= ncols) {
#ifdef _OPENMP
#pragma omp critical(dsmmi_coo_bad)
#endif
                if (k < first_bad) first_bad = k;
                break;
            }
            h[i]++;
        }
#ifdef _OPENMP
#pragma omp barrier
#pragma omp for schedule(static)
#endif
        for (dsmm_idx i = 0; i < nrows; i++) {
            dsmm_idx s = 0;
            for (int u = 0; u < tn; u++) s += cnt[(size_t)u * stride + i];
            rowptr[i + 1] = s;
        }
#ifdef _OPENMP
#pragma omp single
#endif
        for (dsmm_idx i = 0; i < nrows; i++) rowptr[i + 1] += rowptr[i];
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (dsmm_idx i = 0; i < nrows; i++) {
            dsmm_idx s = rowptr[i];
            for (int u = 0; u < tn; u++) {
                dsmm_idx c = cnt[(size_t)u * stride + i];
                cnt[(size_t)u * stride + i] = s;
                s += c;
            }
        }
        if (first_bad == nnz) {
            if (v1 == NULL) {
                for (dsmm_idx k = k0; k < k1; k++) c1[h[row[k]]++] = col[k];
            } else {
                for (dsmm_idx k = k0; k < k1; k++) {
                    dsmm_idx p = h[row[k]]++;
                    c1[p] = col[k];
                    v1[p] = coo_val(T, k);
                }
            }
        }
    }
    if (first_bad < nnz) *bad = first_bad;
}

dsmm_status dsmmi_coo_to_csr(dsmm_ctx *ctx, const dsmm_coo *T, dsmm_dup dup, dsmm_type type,
                             dsmm_csr **out, dsmm_idx *dup_row, dsmm_idx *dup_col)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *C = NULL;
    dsmm_idx *c1 = NULL, *next = NULL, bad = 0;
    double *v1 = NULL, *vscratch = NULL;

    if (dup_row) *dup_row = -1;
    if (dup_col) *dup_col = -1;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "coo_to_csr: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, T != NULL, DSMM_ERR_ARG, "coo_to_csr: T must be non-NULL");
    DSMM_CHECK(ctx, dsmmi_dup_ok(dup), DSMM_ERR_ARG, "coo_to_csr: invalid dup policy %d", (int)dup);
    DSMM_CHECK(ctx, dsmmi_type_ok(type) && dsmmi_type_ok(T->type), DSMM_ERR_ARG,
               "coo_to_csr: invalid value type %d (triples: %d)", (int)type, (int)T->type);
    DSMM_CHECK(ctx, T->nrows >= 0 && T->ncols >= 0 && T->nnz >= 0 && T->nnz <= T->cap, DSMM_ERR_ARG,
               "coo_to_csr: corrupt triples (%lld x %lld, nnz %lld, cap %lld)", (long long)T->nrows,
               (long long)T->ncols, (long long)T->nnz, (long long)T->cap);
    DSMM_CHECK(ctx, T->nnz == 0 || (T->row && T->col && (T->val || T->type == DSMM_PATTERN)),
               DSMM_ERR_ARG, "coo_to_csr: NULL arrays with nnz = %lld", (long long)T->nnz);
    dsmm_idx nnz = T->nnz, nrows = T->nrows;
    DSMM_TRY(dsmm_csr_create(ctx, nrows, T->ncols, nnz, type, &C));
    bool vals = type != DSMM_PATTERN && T->type != DSMM_PATTERN;
    c1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *c1);
    DSMM_CHECK(ctx, c1 != NULL, DSMM_ERR_NOMEM, "coo_to_csr: scratch for %lld entries",
               (long long)nnz);
    double *v0 = NULL;
    if (vals) {
        v1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *v1);
        DSMM_CHECK(ctx, v1 != NULL, DSMM_ERR_NOMEM, "coo_to_csr: %lld values", (long long)nnz);
        if (type == DSMM_DOUBLE) {
            v0 = C->val;
        } else {
            vscratch = dsmmi_malloc(ctx, (size_t)nnz, sizeof *vscratch);
            DSMM_CHECK(ctx, vscratch != NULL, DSMM_ERR_NOMEM, "coo_to_csr: %lld values",
                       (long long)nnz);
            v0 = vscratch;
        }
    }
    int nt = nnz >= PAR_MIN && nrows <= nnz ? dsmmi_threads(ctx) : 1;
    if (nt < 1) nt = 1;
    next = dsmmi_calloc(ctx, (size_t)nt * ((size_t)nrows + 1), sizeof *next);
    DSMM_CHECK(ctx, next != NULL, DSMM_ERR_NOMEM, "coo_to_csr: %d x %lld row counters", nt,
               (long long)nrows);
    bad = nnz;
    scatter(T, nt, next, C->rowptr, c1, vals ? v1 : NULL, &bad);
    if (bad < nnz)
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "coo_to_csr: entry %lld at (%lld, %lld) outside the %lld x %lld matrix "
                  "(0-based)",
                  (long long)bad, (long long)T->row[bad], (long long)T->col[bad], (long long)nrows,
                  (long long)T->ncols);
    dsmm_idx *rp = C->rowptr;
    next = dsmmi_free(ctx, next);
    dsmm_idx nnz_new = 0;
    DSMM_TRY(dsmmi_rows_sort_merge(ctx, nrows, rp, c1, v1, C->colidx, v0, C->val, type, (int)dup,
                                   &nnz_new, NULL, dup_row, dup_col));
    C->nnz = nnz_new;
    C->sorted = 1;
    *out = C;
    C = NULL;
cleanup:
    dsmm_csr_destroy(&C);
    c1 = dsmmi_free(ctx, c1);
    next = dsmmi_free(ctx, next);
    v1 = dsmmi_free(ctx, v1);
    vscratch = dsmmi_free(ctx, vscratch);
    return st;
}

dsmm_status dsmm_coo_to_csr(dsmm_ctx *ctx, const dsmm_coo *T, dsmm_dup dup, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, T != NULL, DSMM_ERR_ARG, "coo_to_csr: T must be non-NULL");
    st = dsmmi_coo_to_csr(ctx, T, dup, T->type, out, NULL, NULL);
cleanup:
    if (st != DSMM_OK && out != NULL) *out = NULL;
    return st;
}

dsmm_status dsmm_csr_to_coo(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_coo **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "csr_to_coo: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_to_coo: A must be non-NULL");
    DSMM_TRY(dsmm_coo_create(ctx, A->nrows, A->ncols, A->nnz, A->type, &T));
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) T->row[k] = i;
    if (A->colidx32)
        for (dsmm_idx k = 0; k < A->nnz; k++) T->col[k] = A->colidx32[k];
    else if (A->nnz > 0)
        memcpy(T->col, A->colidx, (size_t)A->nnz * sizeof *T->col);
    dsmmi_vals_convert(T->val, T->type, A->val, A->type, A->nnz);
    T->nnz = A->nnz;
    *out = T;
    T = NULL;
cleanup:
    dsmm_coo_destroy(&T);
    return st;
}
