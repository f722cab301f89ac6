// src/io/gen_er.c: the Erdős–Rényi generator G(n, p), p = avg_degree / n, and the row driver
// the generators share. Row i draws only from random stream i and finds its columns by
// geometric skipping (the gap to the next success is floor(log U / log(1 - p))), so the work
// is O(n + nnz), not O(n^2), and the matrix is the same for every thread count. The driver
// runs each row twice, counting then filling, instead of storing rows of unknown length.
#include <math.h>
#include <string.h>

#include "io/gen.h"

void dsmmi_gen_bernoulli(dsmm_rng *r, dsmm_idx lo, dsmm_idx hi, double lq, dsmm_idx skip,
                         int want_vals, dsmm_idx *cols, double *vals, dsmm_idx *len)
{
    if (lo >= hi || lq == 0.0) return; // empty range or p == 0
    dsmm_idx k = lo - 1;
    for (;;) {
        dsmm_idx gap = 0;
        if (lq != -INFINITY) {
            double x = log(1.0 - dsmm_rng_uniform(r)) / lq; // U in (0, 1]
            if (!(x < (double)(hi - k))) break;             // also catches NaN
            gap = (dsmm_idx)x;
        }
        if (gap >= hi - k - 1) break;
        k += gap + 1;
        double v = want_vals ? 1.0 - dsmm_rng_uniform(r) : 1.0; // (0, 1]
        if (k == skip) continue;
        if (cols) {
            cols[*len] = k;
            if (vals) vals[*len] = v;
        }
        (*len)++;
    }
}

dsmm_status dsmmi_gen_check_type(dsmm_ctx *ctx, const dsmm_gen_params *p)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, p->type == DSMM_PATTERN || p->type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "generators make pattern or double matrices, not type %d", (int)p->type);
cleanup:
    return st;
}

// A = L + strict_lower(L)^T for L lower triangular with sorted rows: row i of A is row i of L
// (columns <= i) followed by column i of L below the diagonal (rows > i, increasing).
static dsmm_status mirror_lower(dsmm_ctx *ctx, const dsmm_csr *L, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL;
    dsmm_idx *cnt = NULL;
    dsmm_idx n = L->nrows;
    double *lv = L->val, *av = NULL;

    cnt = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *cnt);
    DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "generator: %lld counters", (long long)n);
    dsmm_idx strict = 0;
    for (dsmm_idx i = 0; i < n; i++) {
        for (dsmm_idx k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
            if (L->colidx[k] < i) {
                cnt[L->colidx[k]]++;
                strict++;
            }
        }
    }
    DSMM_TRY(dsmm_csr_create(ctx, n, n, L->nnz + strict, L->type, &A));
    av = A->val;
    A->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < n; i++) {
        dsmm_idx len = L->rowptr[i + 1] - L->rowptr[i];
        dsmm_idx at = A->rowptr[i];
        if (len > 0) {
            memcpy(A->colidx + at, L->colidx + L->rowptr[i], (size_t)len * sizeof(dsmm_idx));
            if (av) memcpy(av + at, lv + L->rowptr[i], (size_t)len * sizeof(double));
        }
        A->rowptr[i + 1] = at + len + cnt[i];
        cnt[i] = at + len; // next free slot of row i's upper part
    }
    for (dsmm_idx r = 0; r < n; r++) {
        for (dsmm_idx k = L->rowptr[r]; k < L->rowptr[r + 1]; k++) {
            dsmm_idx c = L->colidx[k];
            if (c >= r) continue;
            A->colidx[cnt[c]] = r;
            if (av) av[cnt[c]] = lv[k];
            cnt[c]++;
        }
    }
    A->nnz = L->nnz + strict;
    A->sorted = 1;
    *out = A;
    A = NULL;
cleanup:
    dsmm_csr_destroy(&A);
    dsmmi_free(ctx, cnt);
    return st;
}

dsmm_status dsmmi_gen_rows(dsmm_ctx *ctx, dsmm_idx n, dsmm_type type, int symmetric,
                           dsmmi_gen_row_fn row_fn, const void *data, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *L = NULL;
    dsmm_idx *cnt = NULL;
    int nt = dsmmi_threads(ctx);

    *out = NULL;
    cnt = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *cnt);
    DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "generator: %lld row counts", (long long)n);
    cnt[0] = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
#endif
    for (dsmm_idx i = 0; i < n; i++) cnt[i + 1] = row_fn(data, i, NULL, NULL);
    for (dsmm_idx i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    DSMM_TRY(dsmm_csr_create(ctx, n, n, cnt[n], type, &L));
    memcpy(L->rowptr, cnt, ((size_t)n + 1) * sizeof *cnt);
    double *val = L->val;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
#endif
    for (dsmm_idx i = 0; i < n; i++) {
        // Rows of no entries get NULL, not NULL + 0, when the matrix is empty.
        if (cnt[i + 1] > cnt[i]) row_fn(data, i, L->colidx + cnt[i], val ? val + cnt[i] : NULL);
    }
    L->nnz = cnt[n];
    L->sorted = 1;
    if (symmetric) {
        DSMM_TRY(mirror_lower(ctx, L, out));
    } else {
        *out = L;
        L = NULL;
    }
cleanup:
    (void)nt;
    dsmm_csr_destroy(&L);
    dsmmi_free(ctx, cnt);
    return st;
}

void dsmm_gen_params_init(dsmm_gen_params *p)
{
    if (p == NULL) return;
    memset(p, 0, sizeof *p);
    p->seed = 1;
    p->type = DSMM_PATTERN;
    p->symmetric = 0;
    p->self_loops = 0;
    p->scale = 10;
    p->edge_factor = 16;
    p->a = 0.57;
    p->b = 0.19;
    p->c = 0.19;
    p->d = 0.05;
    p->n = 1000;
    p->avg_degree = 8;
    p->nblocks = 4;
    p->p_in = 0.05;
    p->p_out = 0.002;
}

typedef struct er_data {
    uint64_t seed;
    dsmm_idx n;
    double lq; // log(1 - p)
    int symmetric, self_loops, vals;
} er_data;

static dsmm_idx er_row(const void *data, dsmm_idx i, dsmm_idx *cols, double *vals)
{
    const er_data *d = data;
    dsmm_rng r;
    dsmm_idx len = 0;
    dsmm_rng_init(&r, d->seed, (uint64_t)i);
    dsmmi_gen_bernoulli(&r, 0, d->symmetric ? i + 1 : d->n, d->lq, d->self_loops ? -1 : i, d->vals,
                        cols, vals, &len);
    return len;
}

dsmm_status dsmm_gen_er(dsmm_ctx *ctx, const dsmm_gen_params *p, dsmm_csr **A)
{
    dsmm_status st = DSMM_OK;
    if (A) *A = NULL;
    DSMM_CHECK(ctx, p != NULL && A != NULL, DSMM_ERR_ARG, "gen_er: p and A must be non-NULL");
    DSMM_TRY(dsmmi_gen_check_type(ctx, p));
    DSMM_CHECK(ctx, p->n >= 0, DSMM_ERR_ARG, "gen_er: n = %lld < 0", (long long)p->n);
    DSMM_CHECK(ctx, isfinite(p->avg_degree) && p->avg_degree >= 0 && p->avg_degree <= (double)p->n,
               DSMM_ERR_ARG, "gen_er: avg_degree %g outside 0..n (n = %lld)", p->avg_degree,
               (long long)p->n);
    double prob = p->n > 0 ? p->avg_degree / (double)p->n : 0.0;
    er_data d = {.seed = p->seed,
                 .n = p->n,
                 .lq = prob >= 1.0 ? -INFINITY : log1p(-prob),
                 .symmetric = p->symmetric != 0,
                 .self_loops = p->self_loops != 0,
                 .vals = p->type != DSMM_PATTERN};
    DSMM_TRY(dsmmi_gen_rows(ctx, p->n, p->type, d.symmetric, er_row, &d, A));
cleanup:
    return st;
}
