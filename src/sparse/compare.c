// src/sparse/compare.c: dsmm_csr_compare, equality of shape, pattern and values within a
// tolerance. Unsorted inputs are compared through sorted copies (duplicates summed), so a
// matrix equals any reordering of its own entries. A and B may hold columns of either width,
// each its own.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sparse/sparse.h"

static bool close_enough(double a, double b, double rtol, double atol)
{
    if (a == b) return true; // also equal infinities
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= atol + rtol * m;
}

static void set_diff(dsmm_csr_diff *d, dsmm_idx row, dsmm_idx col, double a, double b)
{
    d->equal = 0;
    d->row = row;
    d->col = col;
    d->a = a;
    d->b = b;
}

// First difference of sorted A and B of equal shape in row-major order; *found = 0 if none.
static void first_diff(const dsmm_csr *A, const dsmm_csr *B, double rtol, double atol,
                       dsmm_csr_diff *d, int *found)
{
    *found = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx ka = A->rowptr[i], ea = A->rowptr[i + 1];
        dsmm_idx kb = B->rowptr[i], eb = B->rowptr[i + 1];
        while (ka < ea || kb < eb) {
            dsmm_idx ca = ka < ea ? dsmm_csr_col(A, ka) : INT64_MAX;
            dsmm_idx cb = kb < eb ? dsmm_csr_col(B, kb) : INT64_MAX;
            if (ca < cb) {
                set_diff(d, i, ca, dsmm_csr_value(A, ka), 0.0);
                snprintf(d->what, sizeof d->what,
                         "entry (%lld, %lld) (0-based) is in A (value %.17g) but not in B",
                         (long long)i, (long long)ca, d->a);
                *found = 1;
                return;
            }
            if (cb < ca) {
                set_diff(d, i, cb, 0.0, dsmm_csr_value(B, kb));
                snprintf(d->what, sizeof d->what,
                         "entry (%lld, %lld) (0-based) is in B (value %.17g) but not in A",
                         (long long)i, (long long)cb, d->b);
                *found = 1;
                return;
            }
            double a = dsmm_csr_value(A, ka), b = dsmm_csr_value(B, kb);
            if (!close_enough(a, b, rtol, atol)) {
                set_diff(d, i, ca, a, b);
                snprintf(d->what, sizeof d->what,
                         "value at (%lld, %lld) (0-based): A has %.17g, B has %.17g "
                         "(|a - b| = %.3g)",
                         (long long)i, (long long)ca, a, b, fabs(a - b));
                *found = 1;
                return;
            }
            ka++;
            kb++;
        }
    }
}

dsmm_status dsmm_csr_compare(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, double rtol,
                             double atol, dsmm_csr_diff *diff)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *As = NULL, *Bs = NULL;

    DSMM_CHECK(ctx, A != NULL && B != NULL && diff != NULL, DSMM_ERR_ARG,
               "csr_compare: A, B and diff must be non-NULL");
    memset(diff, 0, sizeof *diff);
    diff->equal = 1;
    diff->row = diff->col = -1;
    if (A->nrows != B->nrows || A->ncols != B->ncols) {
        set_diff(diff, -1, -1, 0.0, 0.0);
        snprintf(diff->what, sizeof diff->what, "shapes differ: A is %lld x %lld, B is %lld x %lld",
                 (long long)A->nrows, (long long)A->ncols, (long long)B->nrows,
                 (long long)B->ncols);
        goto cleanup;
    }
    const dsmm_csr *a = A, *b = B;
    if (!A->sorted) {
        DSMM_TRY(dsmm_csr_copy(ctx, A, A->type, &As));
        DSMM_TRY(dsmm_csr_sort_inplace(ctx, As, DSMM_DUP_SUM));
        a = As;
    }
    if (!B->sorted) {
        DSMM_TRY(dsmm_csr_copy(ctx, B, B->type, &Bs));
        DSMM_TRY(dsmm_csr_sort_inplace(ctx, Bs, DSMM_DUP_SUM));
        b = Bs;
    }
    dsmm_idx na = a->rowptr[a->nrows], nb = b->rowptr[b->nrows];
    int found = 0;
    first_diff(a, b, rtol, atol, diff, &found);
    if (na != nb) {
        // the documented contract: no single entry is blamed when the counts differ
        char first[sizeof diff->what];
        snprintf(first, sizeof first, "%s", found ? diff->what : "");
        set_diff(diff, -1, -1, 0.0, 0.0);
        snprintf(diff->what, sizeof diff->what, "nnz differ: A has %lld, B has %lld; first: %.90s",
                 (long long)na, (long long)nb, first);
    } else if (!found) {
        snprintf(diff->what, sizeof diff->what, "equal");
    }
cleanup:
    dsmm_csr_destroy(&As);
    dsmm_csr_destroy(&Bs);
    return st;
}
