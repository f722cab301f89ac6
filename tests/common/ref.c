// tests/common/ref.c: naive references and random matrix makers for the tests (see ref.h).
// Written to be independent of the library's own kernels: the SpGEMM reference works on dense
// arrays, conversions go entry by entry, and only creation, sorting, comparison and the
// generators come from the public API.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ref.h"

static double sr_mul(dsmm_semiring sr, double x, double y)
{
    if (sr == DSMM_PLUS_PAIR) return 1.0;
    if (sr == DSMM_MIN_PLUS) return x + y;
    return x * y;
}

static double sr_add(dsmm_semiring sr, double x, double y)
{
    if (sr == DSMM_MIN_PLUS) return fmin(x, y);
    if (sr == DSMM_MAX_TIMES) return fmax(x, y);
    return x + y;
}

dsmm_status ref_spgemm_dense(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_csr *M,
                             dsmm_semiring sr, dsmm_csr **C)
{
    *C = NULL;
    if (A->ncols != B->nrows) return DSMM_ERR_DIM;
    if (M && (M->nrows != A->nrows || M->ncols != B->ncols)) return DSMM_ERR_DIM;
    dsmm_idx m = A->nrows, n = B->ncols;
    if (m > 0 && n > ((dsmm_idx)1 << 27) / m) return DSMM_ERR_NOMEM; // small sizes only
    size_t cells = (size_t)(m * n) + 1;
    double *v = calloc(cells, sizeof *v);
    unsigned char *on = calloc(cells, 1), *keep = calloc(cells, 1);
    dsmm_status st = DSMM_ERR_NOMEM;
    if (v == NULL || on == NULL || keep == NULL) goto done;
    for (dsmm_idx i = 0; i < m; i++) {
        for (dsmm_idx ka = A->rowptr[i]; ka < A->rowptr[i + 1]; ka++) {
            dsmm_idx k = dsmm_csr_col(A, ka);
            for (dsmm_idx kb = B->rowptr[k]; kb < B->rowptr[k + 1]; kb++) {
                size_t at = (size_t)(i * n + dsmm_csr_col(B, kb));
                double p = sr_mul(sr, dsmm_csr_value(A, ka), dsmm_csr_value(B, kb));
                v[at] = on[at] ? sr_add(sr, v[at], p) : p;
                on[at] = 1;
            }
        }
        for (dsmm_idx j = 0; j < n; j++) keep[(size_t)(i * n + j)] = (M == NULL);
        if (M)
            for (dsmm_idx km = M->rowptr[i]; km < M->rowptr[i + 1]; km++)
                keep[(size_t)(i * n + dsmm_csr_col(M, km))] = 1;
    }
    dsmm_idx nnz = 0;
    for (size_t at = 0; at + 1 < cells; at++) nnz += on[at] && keep[at];
    st = dsmm_csr_create(ctx, m, n, nnz, DSMM_DOUBLE, C);
    if (st != DSMM_OK) goto done;
    dsmm_idx k = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        for (dsmm_idx j = 0; j < n; j++) {
            size_t at = (size_t)(i * n + j);
            if (!on[at] || !keep[at]) continue;
            (*C)->colidx[k] = j;
            ((double *)(*C)->val)[k] = v[at];
            k++;
        }
        (*C)->rowptr[i + 1] = k;
    }
    (*C)->nnz = k;
done:
    free(v);
    free(on);
    free(keep);
    return st;
}

double ref_flops(const dsmm_csr *A, const dsmm_csr *B)
{
    double f = 0;
    for (dsmm_idx ka = 0; ka < A->nnz; ka++) {
        dsmm_idx k = dsmm_csr_col(A, ka);
        f += (double)(B->rowptr[k + 1] - B->rowptr[k]);
    }
    return f;
}

void test_mat_init(test_mat *o, dsmm_idx nrows, dsmm_idx ncols, double density, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->nrows = nrows;
    o->ncols = ncols;
    o->density = density;
    o->type = DSMM_DOUBLE;
    o->dense_row = -1;
    o->col_bits = 64;
    o->seed = seed;
}

// A test value: k/4 for k in -8..8, k != 0 (or 0 with probability 1/4 when zeros).
static double rand_value(dsmm_rng *g, int zeros)
{
    if (zeros && dsmm_rng_uniform(g) < 0.25) return 0.0;
    int k = (int)(dsmm_rng_u64(g) % 16) - 8; // -8..7
    if (k >= 0) k++;                         // -8..-1, 1..8
    return 0.25 * k;
}

dsmm_status test_rand_csr(dsmm_ctx *ctx, const test_mat *o, dsmm_csr **A)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;
    dsmm_csr *R = NULL;
    dsmm_idx m = o->nrows, n = o->ncols;
    unsigned char *erow = calloc((size_t)m + 1, 1), *ecol = calloc((size_t)n + 1, 1);
    dsmm_rng g;
    *A = NULL;
    if (erow == NULL || ecol == NULL) {
        st = DSMM_ERR_NOMEM;
        goto done;
    }
    dsmm_rng_init(&g, o->seed, 0x7e57);
    for (dsmm_idx i = 0; i < m; i++) erow[i] = dsmm_rng_uniform(&g) < o->empty_rows;
    for (dsmm_idx j = 0; j < n; j++) ecol[j] = dsmm_rng_uniform(&g) < o->empty_cols;
    if (o->dense_row >= 0 && o->dense_row < m) erow[o->dense_row] = 0;
    st = dsmm_coo_create(ctx, m, n, 0, o->type, &T);
    if (st != DSMM_OK) goto done;
    double cells = (double)m * (double)n, p = o->density;
    // positions t = i * n + j in row-major order, gaps geometric with parameter p
    double t = 0;
    if (p > 0 && cells > 0) {
        for (;;) {
            if (p < 1) {
                double u = dsmm_rng_uniform(&g);
                t += floor(log1p(-u) / log1p(-p));
            }
            if (t >= cells) break;
            dsmm_idx i = (dsmm_idx)(t / (double)n), j = (dsmm_idx)(t - (double)i * (double)n);
            t += 1;
            if (erow[i] || ecol[j] || i == o->dense_row) continue;
            st = dsmm_coo_push(T, i, j, rand_value(&g, o->zeros));
            if (st != DSMM_OK) goto done;
        }
    }
    if (o->dense_row >= 0 && o->dense_row < m) {
        for (dsmm_idx j = 0; j < n; j++) {
            if (ecol[j]) continue;
            st = dsmm_coo_push(T, o->dense_row, j, rand_value(&g, o->zeros));
            if (st != DSMM_OK) goto done;
        }
    }
    st = dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &R);
    if (st != DSMM_OK) goto done;
    if (o->col_bits == 32) st = dsmm_csr_set_col_width(R, 32);
    if (st != DSMM_OK) goto done;
    *A = R;
    R = NULL;
done:
    dsmm_coo_destroy(&T);
    dsmm_csr_destroy(&R);
    free(erow);
    free(ecol);
    return st;
}

// G with test values (or G itself when type is PATTERN).
static dsmm_status with_values(dsmm_ctx *ctx, dsmm_csr **G, dsmm_type type, uint64_t seed)
{
    if (type == DSMM_PATTERN) return DSMM_OK;
    dsmm_csr *V = NULL;
    dsmm_status st = test_csr_convert(ctx, *G, type, 64, &V);
    if (st != DSMM_OK) return st;
    dsmm_rng g;
    dsmm_rng_init(&g, seed, 0xfa1);
    for (dsmm_idx k = 0; k < V->nnz; k++) {
        double x = rand_value(&g, 0);
        if (type == DSMM_DOUBLE) ((double *)V->val)[k] = x;
        if (type == DSMM_FLOAT) ((float *)V->val)[k] = (float)x;
    }
    dsmm_csr_destroy(G);
    *G = V;
    return DSMM_OK;
}

dsmm_status test_rand_rmat(dsmm_ctx *ctx, int scale, double edge_factor, int symmetric,
                           dsmm_type type, uint64_t seed, dsmm_csr **A)
{
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.scale = scale;
    p.edge_factor = edge_factor;
    p.symmetric = symmetric;
    p.seed = seed;
    dsmm_status st = dsmm_gen_rmat(ctx, &p, A);
    if (st == DSMM_OK) st = with_values(ctx, A, type, seed);
    if (st != DSMM_OK) dsmm_csr_destroy(A);
    return st;
}

dsmm_status test_rand_er(dsmm_ctx *ctx, dsmm_idx n, double deg, int symmetric, dsmm_type type,
                         uint64_t seed, dsmm_csr **A)
{
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.n = n;
    p.avg_degree = deg;
    p.symmetric = symmetric;
    p.seed = seed;
    dsmm_status st = dsmm_gen_er(ctx, &p, A);
    if (st == DSMM_OK) st = with_values(ctx, A, type, seed);
    if (st != DSMM_OK) dsmm_csr_destroy(A);
    return st;
}

dsmm_status test_csr_convert(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type, int col_bits,
                             dsmm_csr **out)
{
    dsmm_csr *B = NULL;
    dsmm_status st = dsmm_csr_create(ctx, A->nrows, A->ncols, A->nnz, type, &B);
    if (st != DSMM_OK) return st;
    memcpy(B->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof *B->rowptr);
    for (dsmm_idx k = 0; k < A->nnz; k++) {
        B->colidx[k] = dsmm_csr_col(A, k);
        if (type == DSMM_DOUBLE) ((double *)B->val)[k] = dsmm_csr_value(A, k);
        if (type == DSMM_FLOAT) ((float *)B->val)[k] = (float)dsmm_csr_value(A, k);
    }
    B->nnz = A->nnz;
    B->sorted = A->sorted;
    if (col_bits == 32) st = dsmm_csr_set_col_width(B, 32);
    if (st != DSMM_OK) {
        dsmm_csr_destroy(&B);
        return st;
    }
    *out = B;
    return DSMM_OK;
}

int test_csr_same(dsmm_ctx *ctx, const dsmm_csr *got, const dsmm_csr *want, double rtol,
                  double atol, const char *what)
{
    dsmm_csr *G = NULL, *W = NULL;
    int rc = TEST_FAIL;
    if (got == NULL || want == NULL) {
        fprintf(stderr, "%s: NULL matrix\n", what);
        return TEST_FAIL;
    }
    dsmm_type t = got->type == DSMM_PATTERN ? DSMM_PATTERN : DSMM_DOUBLE;
    if (test_csr_convert(ctx, got, t, 64, &G) != DSMM_OK ||
        test_csr_convert(ctx, want, t, 64, &W) != DSMM_OK) {
        fprintf(stderr, "%s: conversion failed: %s\n", what, dsmm_ctx_last_error(ctx));
        goto done;
    }
    rc = TEST_PASS;
    if (!G->sorted && dsmm_csr_sort_inplace(ctx, G, DSMM_DUP_ERROR) != DSMM_OK) {
        fprintf(stderr, "%s: unsorted result with a repeated column: %s\n", what,
                dsmm_ctx_last_error(ctx));
        rc = TEST_FAIL;
        goto done;
    }
    dsmm_csr_diff d;
    if (dsmm_csr_compare(ctx, G, W, rtol, atol, &d) != DSMM_OK) {
        fprintf(stderr, "%s: compare failed: %s\n", what, dsmm_ctx_last_error(ctx));
        rc = TEST_FAIL;
    } else if (!d.equal) {
        fprintf(stderr, "%s: result differs from the reference: %s\n", what, d.what);
        rc = TEST_FAIL;
    }
done:
    dsmm_csr_destroy(&G);
    dsmm_csr_destroy(&W);
    return rc;
}

int test_check_spmv(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_csr *C,
                    double tol)
{
    (void)ctx;
    int rc = TEST_FAIL;
    dsmm_idx m = A->nrows, kdim = A->ncols, n = B->ncols;
    double *x = malloc(((size_t)n + 1) * sizeof *x);
    double *t = calloc((size_t)kdim + 1, sizeof *t), *ta = calloc((size_t)kdim + 1, sizeof *ta);
    if (x == NULL || t == NULL || ta == NULL) goto done;
    if (C->nrows != m || C->ncols != n || B->nrows != kdim) {
        fprintf(stderr, "spmv check: shapes differ (C %lld x %lld, A %lld x %lld, B %lld x %lld)\n",
                (long long)C->nrows, (long long)C->ncols, (long long)m, (long long)kdim,
                (long long)B->nrows, (long long)n);
        goto done;
    }
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 0x5b3);
    for (dsmm_idx j = 0; j < n; j++) x[j] = 2 * dsmm_rng_uniform(&g) - 1;
    for (dsmm_idx k = 0; k < kdim; k++) // t = B x, ta = |B| |x|
        for (dsmm_idx e = B->rowptr[k]; e < B->rowptr[k + 1]; e++) {
            double b = dsmm_csr_value(B, e), xj = x[dsmm_csr_col(B, e)];
            t[k] += b * xj;
            ta[k] += fabs(b * xj);
        }
    for (dsmm_idx i = 0; i < m; i++) {
        double y = 0, ya = 0, z = 0;
        for (dsmm_idx e = A->rowptr[i]; e < A->rowptr[i + 1]; e++) {
            double a = dsmm_csr_value(A, e);
            y += a * t[dsmm_csr_col(A, e)];
            ya += fabs(a) * ta[dsmm_csr_col(A, e)];
        }
        for (dsmm_idx e = C->rowptr[i]; e < C->rowptr[i + 1]; e++)
            z += dsmm_csr_value(C, e) * x[dsmm_csr_col(C, e)];
        if (!(fabs(y - z) <= tol * ya + tol)) {
            fprintf(stderr, "spmv check: row %lld: (C x) = %.17g but A (B x) = %.17g (scale %g)\n",
                    (long long)i, z, y, ya);
            goto done;
        }
    }
    rc = TEST_PASS;
done:
    free(x);
    free(t);
    free(ta);
    return rc;
}

// Entry (i, j) of a dense operand as a double, whichever its type.
static double dense_at(const dsmm_dense *D, dsmm_idx i, dsmm_idx j)
{
    size_t at = (size_t)i * (size_t)D->ld + (size_t)j;
    return D->type == DSMM_DOUBLE ? ((const double *)D->val)[at]
                                  : (double)((const float *)D->val)[at];
}

dsmm_status ref_spmm(const dsmm_csr *A, int transpose_a, double alpha, const dsmm_dense *B,
                     double beta, const dsmm_dense *C, double *want, double *scale, dsmm_idx *terms)
{
    dsmm_idx m = transpose_a ? A->ncols : A->nrows, n = transpose_a ? A->nrows : A->ncols;
    if (B->type != DSMM_FLOAT && B->type != DSMM_DOUBLE) return DSMM_ERR_ARG;
    if (C->type != B->type) return DSMM_ERR_ARG;
    if (B->nrows != n || C->nrows != m || C->ncols != B->ncols) return DSMM_ERR_DIM;
    dsmm_idx k = B->ncols;
    size_t cells = (size_t)m * (size_t)k + 1;
    long double *sum = calloc(cells, sizeof *sum), *mag = calloc(cells, sizeof *mag);
    if (sum == NULL || mag == NULL) {
        free(sum);
        free(mag);
        return DSMM_ERR_NOMEM;
    }
    if (terms)
        for (dsmm_idx i = 0; i < m; i++) terms[i] = 0;
    // One pass over A's entries in storage order: entry (r, c) is op(A)(i, l) with
    // (i, l) = (r, c), or (c, r) under transpose_a; it adds a * B(l, :) to row i.
    for (dsmm_idx r = 0; r < A->nrows; r++) {
        for (dsmm_idx p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            dsmm_idx c = dsmm_csr_col(A, p);
            dsmm_idx i = transpose_a ? c : r, l = transpose_a ? r : c;
            double a = dsmm_csr_value(A, p);
            if (B->type == DSMM_FLOAT) a = (double)(float)a;
            if (terms) terms[i]++;
            if (alpha == 0.0) continue;
            for (dsmm_idx j = 0; j < k; j++) {
                long double t = (long double)a * (long double)dense_at(B, l, j);
                sum[(size_t)i * (size_t)k + (size_t)j] += t;
                mag[(size_t)i * (size_t)k + (size_t)j] += fabsl(t);
            }
        }
    }
    for (dsmm_idx i = 0; i < m; i++) {
        for (dsmm_idx j = 0; j < k; j++) {
            size_t at = (size_t)i * (size_t)k + (size_t)j;
            long double w = (long double)alpha * sum[at];
            long double s = fabsl((long double)alpha) * mag[at];
            if (beta != 0.0) {
                long double c = (long double)beta * (long double)dense_at(C, i, j);
                w += c;
                s += fabsl(c);
            }
            want[at] = (double)w;
            scale[at] = (double)s;
        }
    }
    free(sum);
    free(mag);
    return DSMM_OK;
}

dsmm_status test_band_csr(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, dsmm_idx lower, dsmm_idx upper,
                          dsmm_type type, uint64_t seed, dsmm_csr **A)
{
    dsmm_idx nnz = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx lo = i - lower < 0 ? 0 : i - lower, hi = i + upper >= n ? n - 1 : i + upper;
        if (hi >= lo) nnz += hi - lo + 1;
    }
    dsmm_status st = dsmm_csr_create(ctx, m, n, nnz, type, A);
    if (st != DSMM_OK) return st;
    dsmm_rng g;
    dsmm_rng_init(&g, seed, 0xba4d);
    dsmm_idx q = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx lo = i - lower < 0 ? 0 : i - lower, hi = i + upper >= n ? n - 1 : i + upper;
        for (dsmm_idx j = lo; j <= hi; j++, q++) {
            (*A)->colidx[q] = j;
            double x = rand_value(&g, 0);
            if (type == DSMM_DOUBLE) ((double *)(*A)->val)[q] = x;
            if (type == DSMM_FLOAT) ((float *)(*A)->val)[q] = (float)x;
        }
        (*A)->rowptr[i + 1] = q;
    }
    (*A)->nnz = q;
    return DSMM_OK;
}

dsmm_status test_csr_shuffle(dsmm_ctx *ctx, const dsmm_csr *A, int dups, uint64_t seed,
                             dsmm_csr **out)
{
    dsmm_rng g;
    *out = NULL;
    // Decide the splits first (one draw per entry), so the size is known before filling.
    unsigned char *split = calloc((size_t)A->nnz + 1, 1);
    if (split == NULL) return DSMM_ERR_NOMEM;
    dsmm_rng_init(&g, seed, 0x5f1);
    dsmm_idx extra = 0;
    for (dsmm_idx p = 0; p < A->nnz; p++) {
        split[p] = dups && A->type != DSMM_PATTERN && dsmm_rng_uniform(&g) < 0.25;
        extra += split[p];
    }
    dsmm_csr *S = NULL;
    dsmm_status st = dsmm_csr_create(ctx, A->nrows, A->ncols, A->nnz + extra, A->type, &S);
    if (st != DSMM_OK) {
        free(split);
        return st;
    }
    dsmm_idx q = 0;
    for (dsmm_idx r = 0; r < A->nrows; r++) {
        dsmm_idx q0 = q;
        for (dsmm_idx p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            double v = dsmm_csr_value(A, p);
            for (int h = 0; h <= split[p]; h++, q++) {
                double x = split[p] ? 0.5 * v : v;
                S->colidx[q] = dsmm_csr_col(A, p);
                if (A->type == DSMM_DOUBLE) ((double *)S->val)[q] = x;
                if (A->type == DSMM_FLOAT) ((float *)S->val)[q] = (float)x;
            }
        }
        for (dsmm_idx e = q - 1; e > q0; e--) { // Fisher-Yates over the row, values follow
            dsmm_idx f = q0 + (dsmm_idx)(dsmm_rng_u64(&g) % (uint64_t)(e - q0 + 1));
            dsmm_idx tc = S->colidx[e];
            S->colidx[e] = S->colidx[f];
            S->colidx[f] = tc;
            if (A->type == DSMM_DOUBLE) {
                double *v = S->val, tv = v[e];
                v[e] = v[f];
                v[f] = tv;
            } else if (A->type == DSMM_FLOAT) {
                float *v = S->val, tv = v[e];
                v[e] = v[f];
                v[f] = tv;
            }
        }
        S->rowptr[r + 1] = q;
    }
    S->nnz = q;
    S->sorted = 0;
    free(split);
    if (A->colidx32) st = dsmm_csr_set_col_width(S, 32);
    if (st != DSMM_OK) {
        dsmm_csr_destroy(&S);
        return st;
    }
    *out = S;
    return DSMM_OK;
}
