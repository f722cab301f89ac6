// src/kernels/ref/spgemm_ref.c: the reference SpGEMM kernel: slow, single-threaded and
// obviously right, the yardstick of every optimised kernel (STYLE.md §7).
//
// Row i of C: every product (j, mul(A(i,k), B(k,j))) of row i goes into a list in the order
// k of A's row, then j of B's row; a stable merge sort by column brings equal columns
// together in that order, and a left fold with the semiring's add combines them. A mask keeps
// only the columns found (binary search) in the sorted copy of M's row, which may be unsorted
// or repeat columns. Everything is computed in double and rounded once when stored. FULL runs
// the row loop twice (count, then fill an exactly sized C); NUMERIC matches each row's
// products one-to-one against C's given pattern.
#include <string.h>

#include "kernels/kernels.h"

// One product: column of C and its value.
typedef struct prod {
    dsmm_idx col;
    double v;
} prod;

// The kernel's scratch: products of one row (and merge-sort buffer), the mask row, and the
// C-row match flags of the numeric phase. Sized for the largest row.
typedef struct work {
    prod *p, *tmp;
    dsmm_idx *mask, *mask_tmp;
    unsigned char *hit;
} work;

// Stable merge sort of p[0..n) by column, tmp of n entries as scratch (top-down, so equal
// columns keep their order: the fold below then adds in A's then B's order).
static void sort_prods(prod *p, prod *tmp, dsmm_idx n)
{
    if (n <= 16) { // insertion sort: moves only strictly larger columns, so stable too
        for (dsmm_idx s = 1; s < n; s++) {
            prod x = p[s];
            dsmm_idx t = s;
            for (; t > 0 && p[t - 1].col > x.col; t--) p[t] = p[t - 1];
            p[t] = x;
        }
        return;
    }
    dsmm_idx h = n / 2;
    sort_prods(p, tmp, h);
    sort_prods(p + h, tmp, n - h);
    dsmm_idx a = 0, b = h, o = 0;
    while (a < h && b < n) tmp[o++] = (p[b].col < p[a].col) ? p[b++] : p[a++];
    while (a < h) tmp[o++] = p[a++];
    while (b < n) tmp[o++] = p[b++];
    memcpy(p, tmp, (size_t)n * sizeof *p);
}

static void sort_idx(dsmm_idx *x, dsmm_idx *tmp, dsmm_idx n)
{
    if (n < 2) return;
    dsmm_idx h = n / 2;
    sort_idx(x, tmp, h);
    sort_idx(x + h, tmp, n - h);
    dsmm_idx a = 0, b = h, o = 0;
    while (a < h && b < n) tmp[o++] = (x[b] < x[a]) ? x[b++] : x[a++];
    while (a < h) tmp[o++] = x[a++];
    while (b < n) tmp[o++] = x[b++];
    memcpy(x, tmp, (size_t)n * sizeof *x);
}

// Position of col in sorted x[0..n), or -1.
static dsmm_idx find(const dsmm_idx *x, dsmm_idx n, dsmm_idx col)
{
    dsmm_idx lo = 0, hi = n;
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (x[mid] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && x[lo] == col) ? lo : -1;
}

static dsmm_idx find_prod(const prod *p, dsmm_idx n, dsmm_idx col)
{
    dsmm_idx lo = 0, hi = n;
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (p[mid].col < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && p[lo].col == col) ? lo : -1;
}

static double sr_mul(dsmm_semiring sr, double x, double y)
{
    switch (sr) {
    case DSMM_PLUS_PAIR:
        return 1.0;
    case DSMM_MIN_PLUS:
        return x + y;
    default:
        return x * y; // PLUS_TIMES, MAX_TIMES
    }
}

static double sr_add(dsmm_semiring sr, double x, double y)
{
    switch (sr) {
    case DSMM_MIN_PLUS:
        return y < x ? y : x;
    case DSMM_MAX_TIMES:
        return y > x ? y : x;
    default:
        return x + y; // PLUS_TIMES, PLUS_PAIR
    }
}

// Row i of C into w->p[0..*n), sorted, one entry per column, masked; *flops gets the number
// of products formed (before the mask).
static void row_product(const dsmmi_spgemm_args *a, work *w, dsmm_idx i, dsmm_idx *n,
                        dsmm_idx *flops)
{
    const dsmm_csr *A = a->A, *B = a->B, *M = a->M;
    int values = a->sr != DSMM_PLUS_PAIR;
    dsmm_idx cnt = 0;
    for (dsmm_idx ka = A->rowptr[i]; ka < A->rowptr[i + 1]; ka++) {
        dsmm_idx k = dsmm_csr_col(A, ka);
        double x = values ? dsmm_csr_value(A, ka) : 1.0;
        for (dsmm_idx kb = B->rowptr[k]; kb < B->rowptr[k + 1]; kb++) {
            double y = values ? dsmm_csr_value(B, kb) : 1.0;
            w->p[cnt].col = dsmm_csr_col(B, kb);
            w->p[cnt].v = sr_mul(a->sr, x, y);
            cnt++;
        }
    }
    *flops = cnt;
    sort_prods(w->p, w->tmp, cnt);

    dsmm_idx mlen = 0;
    if (M) {
        for (dsmm_idx km = M->rowptr[i]; km < M->rowptr[i + 1]; km++)
            w->mask[mlen++] = dsmm_csr_col(M, km);
        sort_idx(w->mask, w->mask_tmp, mlen);
    }
    dsmm_idx out = 0;
    for (dsmm_idx s = 0; s < cnt;) {
        dsmm_idx col = w->p[s].col;
        double acc = w->p[s].v;
        dsmm_idx e = s + 1;
        for (; e < cnt && w->p[e].col == col; e++) acc = sr_add(a->sr, acc, w->p[e].v);
        if (M == NULL || find(w->mask, mlen, col) >= 0) {
            w->p[out].col = col;
            w->p[out].v = acc;
            out++;
        }
        s = e;
    }
    *n = out;
}

static void store_value(dsmm_csr *C, dsmm_idx k, double v)
{
    if (C->type == DSMM_DOUBLE) ((double *)C->val)[k] = v;
    if (C->type == DSMM_FLOAT) ((float *)C->val)[k] = (float)v;
}

static void store_col(dsmm_csr *C, dsmm_idx k, dsmm_idx col)
{
    if (C->colidx32)
        C->colidx32[k] = (int32_t)col;
    else
        C->colidx[k] = col;
}

// NUMERIC: C's row i must hold exactly the columns of the row's products.
static dsmm_status numeric_row(dsmm_ctx *ctx, work *w, dsmm_idx i, dsmm_idx n, dsmm_csr *C)
{
    dsmm_status st = DSMM_OK;
    memset(w->hit, 0, (size_t)n);
    for (dsmm_idx k = C->rowptr[i]; k < C->rowptr[i + 1]; k++) {
        dsmm_idx col = dsmm_csr_col(C, k);
        dsmm_idx at = find_prod(w->p, n, col);
        DSMM_CHECK(ctx, at >= 0, DSMM_ERR_ARG,
                   "spgemm numeric: pattern changed since the symbolic phase: row %lld of C "
                   "holds column %lld that no product reaches",
                   (long long)i, (long long)col);
        DSMM_CHECK(ctx, !w->hit[at], DSMM_ERR_ARG,
                   "spgemm numeric: row %lld of C holds column %lld twice", (long long)i,
                   (long long)col);
        w->hit[at] = 1;
        store_value(C, k, w->p[at].v);
    }
    for (dsmm_idx s = 0; s < n; s++) {
        DSMM_CHECK(ctx, w->hit[s], DSMM_ERR_ARG,
                   "spgemm numeric: pattern changed since the symbolic phase: row %lld has a "
                   "product in column %lld outside C's pattern",
                   (long long)i, (long long)w->p[s].col);
    }
cleanup:
    return st;
}

dsmm_status dsmmi_spgemm_ref(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    work w = {0};
    dsmm_csr *Cn = NULL;
    const dsmm_csr *A = a->A, *B = a->B, *M = a->M;
    double t0 = dsmmi_wtime();

    // Scratch sizes: the largest row's products and the longest mask row.
    dsmm_idx max_flops = 0, max_mask = 0;
    double total_flops = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx f = 0;
        for (dsmm_idx ka = A->rowptr[i]; ka < A->rowptr[i + 1]; ka++) {
            dsmm_idx k = dsmm_csr_col(A, ka);
            f += B->rowptr[k + 1] - B->rowptr[k];
        }
        if (f > max_flops) max_flops = f;
        total_flops += (double)f;
        if (M && M->rowptr[i + 1] - M->rowptr[i] > max_mask)
            max_mask = M->rowptr[i + 1] - M->rowptr[i];
    }
    w.p = dsmmi_malloc(ctx, (size_t)max_flops, sizeof *w.p);
    w.tmp = dsmmi_malloc(ctx, (size_t)max_flops, sizeof *w.tmp);
    w.mask = dsmmi_malloc(ctx, (size_t)max_mask, sizeof *w.mask);
    w.mask_tmp = dsmmi_malloc(ctx, (size_t)max_mask, sizeof *w.mask_tmp);
    w.hit = dsmmi_malloc(ctx, (size_t)max_flops, 1);
    DSMM_CHECK(ctx, w.p && w.tmp && w.mask && w.mask_tmp && w.hit, DSMM_ERR_NOMEM,
               "spgemm ref: scratch for a row of %lld products", (long long)max_flops);
    info->workspace_bytes =
        (size_t)max_flops * (2 * sizeof(prod) + 1) + (size_t)max_mask * 2 * sizeof(dsmm_idx);

    dsmm_idx n = 0, f = 0;
    if (phase == DSMMI_SPGEMM_NUMERIC) {
        dsmm_csr *Cg = *C; // the caller's: values rewritten in place
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            row_product(a, &w, i, &n, &f);
            DSMM_TRY(numeric_row(ctx, &w, i, n, Cg));
        }
        info->seconds_numeric = dsmmi_wtime() - t0;
        info->nnz = Cg->nnz;
        info->sorted = Cg->sorted;
    } else {
        // count, then fill an exactly sized C
        dsmm_idx nnz = 0;
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            row_product(a, &w, i, &n, &f);
            nnz += n;
        }
        DSMM_TRY(dsmmi_csr_create_ex(ctx, A->nrows, B->ncols, nnz, a->type, a->col_bits, &Cn));
        double t1 = dsmmi_wtime();
        dsmm_idx at = 0;
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            row_product(a, &w, i, &n, &f);
            for (dsmm_idx s = 0; s < n; s++, at++) {
                store_col(Cn, at, w.p[s].col);
                store_value(Cn, at, phase == DSMMI_SPGEMM_SYMBOLIC ? 0.0 : w.p[s].v);
            }
            Cn->rowptr[i + 1] = at;
        }
        Cn->nnz = at;
        Cn->sorted = 1;
        if (phase == DSMMI_SPGEMM_FULL) {
            info->seconds_symbolic = t1 - t0;
            info->seconds_numeric = dsmmi_wtime() - t1;
        } else {
            info->seconds_symbolic = dsmmi_wtime() - t0;
        }
        info->nnz = at;
        info->sorted = 1;
        *C = Cn;
        Cn = NULL;
    }
    info->flops = total_flops;
    info->rows_masked = M ? A->nrows : 0;
    info->threads = 1;
cleanup:
    dsmm_csr_destroy(&Cn);
    w.p = dsmmi_free(ctx, w.p);
    w.tmp = dsmmi_free(ctx, w.tmp);
    w.mask = dsmmi_free(ctx, w.mask);
    w.mask_tmp = dsmmi_free(ctx, w.mask_tmp);
    w.hit = dsmmi_free(ctx, w.hit);
    return st;
}
