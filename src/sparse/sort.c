// src/sparse/sort.c: per-row stable sorting with duplicate merging (the engine shared by
// coo_to_csr, sort_inplace and permute) and dsmm_csr_sort_inplace.
// Short rows use insertion sort; long rows a bottom-up merge sort over runs of SMALL that
// ping-pongs between the input and a scratch buffer of the same length, so no per-thread
// scratch is needed. Both are stable, which DSMM_DUP_LAST relies on.
#include <string.h>

#include "sparse/sparse.h"

#define SMALL     32
#define PAR_MIN   20000 // entries below which threads cost more than they save
#define ROW_CHUNK 64

static void isort(dsmm_idx *c, double *v, dsmm_idx n)
{
    for (dsmm_idx i = 1; i < n; i++) {
        dsmm_idx key = c[i];
        if (c[i - 1] <= key) continue;
        double x = v ? v[i] : 0.0;
        dsmm_idx j = i;
        while (j > 0 && c[j - 1] > key) {
            c[j] = c[j - 1];
            if (v) v[j] = v[j - 1];
            j--;
        }
        c[j] = key;
        if (v) v[j] = x;
    }
}

// Stable merge of s[lo, mid) and s[mid, hi) into d[lo, hi); ties take the left run.
static void merge_runs(const dsmm_idx *sc, const double *sv, dsmm_idx *dc, double *dv, dsmm_idx lo,
                       dsmm_idx mid, dsmm_idx hi)
{
    dsmm_idx a = lo, b = mid, o = lo;
    while (a < mid && b < hi) {
        if (sc[b] < sc[a]) {
            dc[o] = sc[b];
            if (sv) dv[o] = sv[b];
            b++;
        } else {
            dc[o] = sc[a];
            if (sv) dv[o] = sv[a];
            a++;
        }
        o++;
    }
    if (a < mid) {
        memcpy(dc + o, sc + a, (size_t)(mid - a) * sizeof *dc);
        if (sv) memcpy(dv + o, sv + a, (size_t)(mid - a) * sizeof *dv);
    } else if (b < hi) {
        memcpy(dc + o, sc + b, (size_t)(hi - b) * sizeof *dc);
        if (sv) memcpy(dv + o, sv + b, (size_t)(hi - b) * sizeof *dv);
    }
}

// Sorts (ca, va)[0, n); returns 1 when the result ended in (cb, vb), 0 when in (ca, va).
static int seg_sort(dsmm_idx *ca, double *va, dsmm_idx *cb, double *vb, dsmm_idx n)
{
    dsmm_idx k = 1;
    while (k < n && ca[k - 1] <= ca[k]) k++;
    if (k >= n) return 0;
    if (n <= SMALL) {
        isort(ca, va, n);
        return 0;
    }
    for (dsmm_idx s = 0; s < n; s += SMALL)
        isort(ca + s, va ? va + s : NULL, n - s < SMALL ? n - s : SMALL);
    int in_b = 0;
    for (dsmm_idx w = SMALL; w < n; w *= 2) {
        const dsmm_idx *sc = in_b ? cb : ca;
        const double *sv = va ? (in_b ? vb : va) : NULL;
        dsmm_idx *dc = in_b ? ca : cb;
        double *dv = va ? (in_b ? va : vb) : NULL;
        for (dsmm_idx lo = 0; lo < n; lo += 2 * w) {
            dsmm_idx mid = lo + w < n ? lo + w : n;
            dsmm_idx hi = lo + 2 * w < n ? lo + 2 * w : n;
            merge_runs(sc, sv, dc, dv, lo, mid, hi);
        }
        in_b = !in_b;
    }
    return in_b;
}

static inline void put_val(void *out, dsmm_type t, dsmm_idx o, double x)
{
    if (t == DSMM_DOUBLE)
        ((double *)out)[o] = x;
    else if (t == DSMM_FLOAT)
        ((float *)out)[o] = (float)x;
}

dsmm_status dsmmi_rows_sort_merge(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx *rowptr, dsmm_idx *c1,
                                  double *v1, dsmm_idx *c0, double *v0, void *out_val,
                                  dsmm_type out_type, int dup, dsmm_idx *nnz_out, int *had_dups,
                                  dsmm_idx *dup_row, dsmm_idx *dup_col)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *cnt = NULL;
    dsmm_idx err_row = -1, err_col = -1;
    int any_dup = 0;

    if (dup_row) *dup_row = -1;
    if (dup_col) *dup_col = -1;
    if (had_dups) *had_dups = 0;
    if (out_type == DSMM_PATTERN) v1 = NULL; // values are not needed at all
    cnt = dsmmi_malloc(ctx, (size_t)nrows, sizeof *cnt);
    DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "sort rows: %lld row counters", (long long)nrows);
    dsmm_idx nnz = rowptr[nrows];
    int nt = nnz >= PAR_MIN ? dsmmi_threads(ctx) : 1;
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, ROW_CHUNK) num_threads(nt) reduction(| : any_dup)
#endif
    for (dsmm_idx i = 0; i < nrows; i++) {
        dsmm_idx s = rowptr[i], n = rowptr[i + 1] - s;
        dsmm_idx *rc = c1 + s;
        double *rv = v1 ? v1 + s : NULL;
        if (seg_sort(rc, rv, c0 + s, v1 ? v0 + s : NULL, n)) {
            rc = c0 + s;
            rv = v1 ? v0 + s : NULL;
        }
        dsmm_idx o = s, k = 0;
        while (k < n) {
            dsmm_idx col = rc[k];
            double acc = rv ? rv[k] : 1.0;
            dsmm_idx k2 = k + 1;
            if (dup == DSMMI_DUP_KEEP) {
                if (k2 < n && rc[k2] == col) any_dup = 1;
            } else {
                for (; k2 < n && rc[k2] == col; k2++) {
                    any_dup = 1;
                    if (rv == NULL) continue;
                    double x = rv[k2];
                    if (dup == DSMM_DUP_SUM)
                        acc += x;
                    else if (dup == DSMM_DUP_MAX)
                        acc = x > acc ? x : acc;
                    else if (dup == DSMM_DUP_MIN)
                        acc = x < acc ? x : acc;
                    else if (dup == DSMM_DUP_LAST)
                        acc = x;
                }
                if (dup == DSMM_DUP_ERROR && k2 > k + 1) {
#ifdef _OPENMP
#pragma omp critical(dsmmi_sort_dup)
#endif
                    {
                        if (err_row < 0 || i < err_row) {
                            err_row = i;
                            err_col = col;
                        }
                    }
                    break; // the row's first duplicate is all that can be reported
                }
            }
            c0[o] = col;
            put_val(out_val, out_type, o, acc);
            o++;
            k = k2;
        }
        cnt[i] = o - s;
    }
    if (had_dups) *had_dups = any_dup;
    if (err_row >= 0) {
        if (dup_row) *dup_row = err_row;
        if (dup_col) *dup_col = err_col;
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "duplicate entry (%lld, %lld) (1-based)",
                  (long long)err_row + 1, (long long)err_col + 1);
    }
    // Rows only shrank, so moving each one left in row order never overwrites unread data.
    size_t vs = dsmmi_type_size(out_type);
    dsmm_idx w = 0;
    for (dsmm_idx i = 0; i < nrows; i++) {
        dsmm_idx old = rowptr[i], n = cnt[i];
        if (old != w && n > 0) {
            memmove(c0 + w, c0 + old, (size_t)n * sizeof *c0);
            if (vs)
                memmove((char *)out_val + (size_t)w * vs, (char *)out_val + (size_t)old * vs,
                        (size_t)n * vs);
        }
        rowptr[i] = w;
        w += n;
    }
    rowptr[nrows] = w;
    if (nnz_out) *nnz_out = w;
cleanup:
    cnt = dsmmi_free(ctx, cnt);
    return st;
}

// Works on copies and writes back only on success, so a duplicate under DSMM_DUP_ERROR (or a
// failed allocation) leaves A as it was. 32-bit columns are widened into the 64-bit scratch
// and narrowed on the way back; A keeps its width.
dsmm_status dsmm_csr_sort_inplace(dsmm_ctx *ctx, dsmm_csr *A, dsmm_dup dup)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *c1 = NULL, *c0 = NULL, *rp = NULL;
    double *v1 = NULL, *v0 = NULL;

    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_sort_inplace: A must be non-NULL");
    DSMM_CHECK(ctx, dsmmi_dup_ok(dup), DSMM_ERR_ARG, "csr_sort_inplace: invalid dup policy %d",
               (int)dup);
    dsmm_csr tmp = *A;
    tmp.sorted = 0; // the rows are about to be sorted: only the other invariants must hold
    DSMM_TRY(dsmm_csr_check(ctx, &tmp));
    if (dsmmi_csr_rows_increasing(A)) {
        A->sorted = 1;
        goto cleanup;
    }
    dsmm_idx nnz = A->nnz;
    bool vals = A->type != DSMM_PATTERN;
    rp = dsmmi_malloc(ctx, (size_t)A->nrows + 1, sizeof *rp);
    c1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *c1);
    c0 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *c0);
    DSMM_CHECK(ctx, rp != NULL && c1 != NULL && c0 != NULL, DSMM_ERR_NOMEM,
               "csr_sort_inplace: index scratch for %lld entries", (long long)nnz);
    if (vals) {
        v1 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *v1);
        v0 = dsmmi_malloc(ctx, (size_t)nnz, sizeof *v0);
        DSMM_CHECK(ctx, v1 != NULL && v0 != NULL, DSMM_ERR_NOMEM,
                   "csr_sort_inplace: value scratch for %lld entries", (long long)nnz);
        dsmmi_vals_convert(v1, DSMM_DOUBLE, A->val, A->type, nnz);
    }
    memcpy(rp, A->rowptr, ((size_t)A->nrows + 1) * sizeof *rp);
    if (A->colidx32)
        for (dsmm_idx k = 0; k < nnz; k++) c1[k] = A->colidx32[k];
    else
        memcpy(c1, A->colidx, (size_t)nnz * sizeof *c1);
    dsmm_idx nnz_new = 0;
    DSMM_TRY(dsmmi_rows_sort_merge(ctx, A->nrows, rp, c1, v1, c0, v0, v0,
                                   vals ? DSMM_DOUBLE : DSMM_PATTERN, (int)dup, &nnz_new, NULL,
                                   NULL, NULL));
    memcpy(A->rowptr, rp, ((size_t)A->nrows + 1) * sizeof *rp);
    if (A->colidx32) // columns came from A's 32-bit array, so each fits back
        for (dsmm_idx k = 0; k < nnz_new; k++) A->colidx32[k] = (int32_t)c0[k];
    else
        memcpy(A->colidx, c0, (size_t)nnz_new * sizeof *c0);
    dsmmi_vals_convert(A->val, A->type, v0, DSMM_DOUBLE, nnz_new);
    A->nnz = nnz_new;
    A->sorted = 1;
cleanup:
    rp = dsmmi_free(ctx, rp);
    c1 = dsmmi_free(ctx, c1);
    c0 = dsmmi_free(ctx, c0);
    v1 = dsmmi_free(ctx, v1);
    v0 = dsmmi_free(ctx, v0);
    return st;
}
