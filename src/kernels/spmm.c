// src/kernels/spmm.c: the local SpMM front end: names, options, the checks every kernel relies
// on (dsmmi_local_spmm), value conversion, the transposes the kernels' orientation needs, the
// public dsmm_csr_spmm and the compulsory-traffic count.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

// clang-format off
static const char *const spmm_alg_names[DSMM_SPMM_ALG_COUNT] = {
    [DSMM_SPMM_AUTO] = "auto", [DSMM_SPMM_ROW] = "row", [DSMM_SPMM_COL] = "col",
    [DSMM_SPMM_REF] = "ref", [DSMM_SPMM_GPU] = "gpu", [DSMM_SPMM_CUSPARSE] = "cusparse",
};
// clang-format on

dsmm_status dsmm_spmm_alg_from_name(const char *name, dsmm_spmm_alg *alg)
{
    if (name == NULL || alg == NULL) return DSMM_ERR_ARG;
    for (int k = 0; k < DSMM_SPMM_ALG_COUNT; k++) {
        if (strcmp(name, spmm_alg_names[k]) == 0) {
            *alg = (dsmm_spmm_alg)k;
            return DSMM_OK;
        }
    }
    return DSMM_ERR_ARG;
}

const char *dsmm_spmm_alg_name(dsmm_spmm_alg alg)
{
    if ((int)alg < 0 || alg >= DSMM_SPMM_ALG_COUNT) return "?";
    return spmm_alg_names[alg];
}

void dsmm_spmm_opts_init(dsmm_spmm_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->alg = DSMM_SPMM_AUTO;
    opts->alpha = 1.0;
    opts->beta = 0.0;
}

double dsmm_spmm_bytes(const dsmm_csr *A, int transpose_a, dsmm_idx k, dsmm_type type, double beta)
{
    if (A == NULL || (type != DSMM_FLOAT && type != DSMM_DOUBLE) || k < 0) return 0.0;
    double w = (double)dsmmi_type_size(type);
    double m = (double)(transpose_a ? A->ncols : A->nrows);
    double n = (double)(transpose_a ? A->nrows : A->ncols);
    double a = (double)(A->nrows + 1) * sizeof(dsmm_idx) +
               (double)A->nnz * (A->colidx32 ? sizeof(int32_t) : sizeof(dsmm_idx)) +
               (double)A->nnz * (double)dsmmi_type_size(A->type);
    double b = n * (double)k * w;
    double c = m * (double)k * w * (beta != 0.0 ? 2.0 : 1.0);
    return a + b + c;
}

int dsmmi_spmm_threads(dsmm_ctx *ctx, const dsmmi_spmm_args *a)
{
    double work = ((double)a->A->nnz + (double)a->m) * (double)a->k;
    int threads = dsmmi_threads(ctx);
    while (threads > 1 && work < (double)threads * dsmmi_spmm_tune.min_thread_work) threads--;
    return threads;
}

void dsmmi_spmm_scale_rows(void *C, dsmm_type type, dsmm_idx ldc, dsmm_idx r0, dsmm_idx r1,
                           dsmm_idx k, double beta)
{
    if (beta == 1.0 || r0 >= r1) return;
    if (beta == 0.0 && ldc == k) { // rows back to back: one memset (k = 1 made one a row)
        size_t w = dsmmi_type_size(type);
        memset((char *)C + (size_t)r0 * (size_t)ldc * w, 0, (size_t)(r1 - r0) * (size_t)k * w);
        return;
    }
    for (dsmm_idx i = r0; i < r1; i++) {
        if (type == DSMM_DOUBLE) {
            double *c = (double *)C + i * ldc;
            if (beta == 0.0) {
                memset(c, 0, (size_t)k * sizeof(double));
            } else {
                for (dsmm_idx j = 0; j < k; j++) c[j] *= beta;
            }
        } else {
            float *c = (float *)C + i * ldc;
            float bf = (float)beta;
            if (beta == 0.0) {
                memset(c, 0, (size_t)k * sizeof(float));
            } else {
                for (dsmm_idx j = 0; j < k; j++) c[j] *= bf;
            }
        }
    }
}

/* The byte range [lo, hi) a dense matrix's entries span. */
static void dense_span(const dsmm_dense *D, uintptr_t *lo, uintptr_t *hi)
{
    size_t w = dsmmi_type_size(D->type);
    *lo = (uintptr_t)D->val;
    *hi = *lo;
    if (D->nrows > 0 && D->ncols > 0) {
        *hi = *lo + ((size_t)(D->nrows - 1) * (size_t)D->ld + (size_t)D->ncols) * w;
    }
}

/* A's values in `type` (NULL when A is pattern or already holds that type: then *av points at
 * A's own values). */
static dsmm_status convert_values(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type, void **scratch,
                                  const void **av)
{
    dsmm_status st = DSMM_OK;
    *scratch = NULL;
    *av = NULL;
    if (A->type == DSMM_PATTERN) return DSMM_OK;
    if (A->type == type) {
        *av = A->val;
        return DSMM_OK;
    }
    void *v = dsmmi_malloc(ctx, (size_t)A->nnz, dsmmi_type_size(type));
    DSMM_CHECK(ctx, v != NULL || A->nnz == 0, DSMM_ERR_NOMEM,
               "spmm: no memory for A's %lld values converted", (long long)A->nnz);
    if (type == DSMM_DOUBLE) {
        const float *s = (const float *)A->val;
        double *d = (double *)v;
        for (dsmm_idx p = 0; p < A->nnz; p++) d[p] = (double)s[p];
    } else {
        const double *s = (const double *)A->val;
        float *d = (float *)v;
        for (dsmm_idx p = 0; p < A->nnz; p++) d[p] = (float)s[p];
    }
    *scratch = v;
    *av = v;
cleanup:
    return st;
}

static size_t csr_bytes(const dsmm_csr *T)
{
    return (size_t)(T->nrows + 1) * sizeof(dsmm_idx) +
           (size_t)T->nnz * (sizeof(dsmm_idx) + dsmmi_type_size(T->type));
}

dsmm_status dsmmi_local_spmm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_dense *B, dsmm_dense *C,
                             const dsmm_spmm_opts *opts, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *At = NULL;
    void *conv = NULL;
    dsmm_spmm_opts dflt;
    dsmm_spmm_info local_info;
    double t0 = dsmmi_wtime();

    if (info == NULL) info = &local_info;
    memset(info, 0, sizeof *info);
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "spmm: invalid or destroyed context");
    DSMM_CHECK(ctx, A != NULL && B != NULL && C != NULL, DSMM_ERR_ARG,
               "spmm: A, B and C must be non-NULL");
    if (opts == NULL) {
        dsmm_spmm_opts_init(&dflt);
        opts = &dflt;
    }
    DSMM_CHECK(ctx, (int)opts->alg >= 0 && opts->alg < DSMM_SPMM_ALG_COUNT, DSMM_ERR_ARG,
               "spmm: unknown kernel %d", (int)opts->alg);
    DSMM_CHECK(ctx, opts->k_block >= -1, DSMM_ERR_ARG,
               "spmm: k_block %lld (0 = auto, -1 = one pass, or a column count)",
               (long long)opts->k_block);
    DSMM_CHECK(ctx, isfinite(opts->alpha) && isfinite(opts->beta), DSMM_ERR_ARG,
               "spmm: alpha (%g) and beta (%g) must be finite", opts->alpha, opts->beta);
    DSMM_CHECK(ctx, dsmmi_type_ok(A->type), DSMM_ERR_ARG, "spmm: invalid value type of A");
    DSMM_CHECK(ctx, B->type == DSMM_FLOAT || B->type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "spmm: B must hold float or double values");
    DSMM_CHECK(ctx, C->type == B->type, DSMM_ERR_ARG,
               "spmm: B holds %s but C holds %s (they must have one type)",
               B->type == DSMM_DOUBLE ? "double" : "float",
               C->type == DSMM_DOUBLE  ? "double"
               : C->type == DSMM_FLOAT ? "float"
                                       : "no values");
    DSMM_CHECK(ctx, B->ld >= B->ncols && C->ld >= C->ncols && B->nrows >= 0 && C->nrows >= 0,
               DSMM_ERR_ARG, "spmm: leading dimension smaller than the column count");
    DSMM_CHECK(ctx,
               (B->val != NULL || B->nrows * B->ncols == 0) &&
                   (C->val != NULL || C->nrows * C->ncols == 0),
               DSMM_ERR_ARG, "spmm: B or C has no values");

    int trans = opts->transpose_a != 0;
    dsmm_idx m = trans ? A->ncols : A->nrows;
    dsmm_idx n = trans ? A->nrows : A->ncols;
    DSMM_CHECK(ctx, B->nrows == n, DSMM_ERR_DIM,
               "spmm: A%s is %lld x %lld but B is %lld x %lld (inner dimensions differ)",
               trans ? "^T" : "", (long long)m, (long long)n, (long long)B->nrows,
               (long long)B->ncols);
    DSMM_CHECK(ctx, C->nrows == m && C->ncols == B->ncols, DSMM_ERR_DIM,
               "spmm: C is %lld x %lld but A%s * B is %lld x %lld", (long long)C->nrows,
               (long long)C->ncols, trans ? "^T" : "", (long long)m, (long long)B->ncols);
    uintptr_t blo, bhi, clo, chi;
    dense_span(B, &blo, &bhi);
    dense_span(C, &clo, &chi);
    DSMM_CHECK(ctx, bhi <= clo || chi <= blo, DSMM_ERR_ARG,
               "spmm: C overlaps B in memory (the product cannot be written in place)");

    dsmm_idx k = B->ncols;
    dsmm_spmm_alg alg = opts->alg;
    const dsmm_spmm_tiles *tl = opts->tiles;
    if (tl != NULL) {
        DSMM_CHECK(ctx, alg == DSMM_SPMM_AUTO || alg == DSMM_SPMM_COL, DSMM_ERR_ARG,
                   "spmm: tiles are read by the column-wise kernel only, not by '%s'",
                   spmm_alg_names[alg]);
        DSMM_CHECK(ctx, tl->m == m && tl->n == n && tl->nnz == A->nnz && tl->transpose_a == trans,
                   DSMM_ERR_ARG,
                   "spmm: the tiles were made from a %lld x %lld operand with %lld entries%s, "
                   "not from this A%s (%lld x %lld, %lld entries)",
                   (long long)tl->m, (long long)tl->n, (long long)tl->nnz,
                   tl->transpose_a ? " (transposed)" : "", trans ? "^T" : "", (long long)m,
                   (long long)n, (long long)A->nnz);
        DSMM_CHECK(ctx, tl->type == DSMM_PATTERN ? A->type == DSMM_PATTERN : tl->type == B->type,
                   DSMM_ERR_ARG, "spmm: the tiles hold %s values but the product is in %s",
                   dsmm_type_name(tl->type), dsmm_type_name(B->type));
        alg = DSMM_SPMM_COL;
    }
    const dsmm_spmm_rows *rw = opts->rows;
    if (rw != NULL) {
        DSMM_CHECK(ctx, tl == NULL, DSMM_ERR_ARG,
                   "spmm: rows (row-wise) and tiles (column-wise) given together");
        DSMM_CHECK(ctx, alg == DSMM_SPMM_AUTO || alg == DSMM_SPMM_ROW, DSMM_ERR_ARG,
                   "spmm: rows are read by the row-wise kernel only, not by '%s'",
                   spmm_alg_names[alg]);
        DSMM_CHECK(ctx, !trans, DSMM_ERR_ARG,
                   "spmm: rows are made for A * B; with transpose_a use tiles (column-wise)");
        DSMM_CHECK(ctx, rw->m == m && rw->n == n && rw->nnz == A->nnz, DSMM_ERR_ARG,
                   "spmm: the rows were made from a %lld x %lld operand with %lld entries, not "
                   "from this A (%lld x %lld, %lld entries)",
                   (long long)rw->m, (long long)rw->n, (long long)rw->nnz, (long long)m,
                   (long long)n, (long long)A->nnz);
        DSMM_CHECK(ctx, rw->type == DSMM_PATTERN ? A->type == DSMM_PATTERN : rw->type == B->type,
                   DSMM_ERR_ARG, "spmm: the rows hold %s values but the product is in %s",
                   dsmm_type_name(rw->type), dsmm_type_name(B->type));
        alg = DSMM_SPMM_ROW;
    }
    int on_device = alg == DSMM_SPMM_GPU || alg == DSMM_SPMM_CUSPARSE;
    // AUTO with a device: the GPU entry decides (dsmmi_gpu_wants), handing small products to
    // the row-wise kernel; a transposed A stays on the CPU's column-wise kernel.
    if (alg == DSMM_SPMM_AUTO && !trans && ctx->gpu_auto && dsmmi_spmm_kernel(DSMM_SPMM_GPU))
        alg = DSMM_SPMM_GPU;
    if (alg == DSMM_SPMM_AUTO) alg = trans ? DSMM_SPMM_COL : DSMM_SPMM_ROW;
    dsmmi_spmm_fn fn = dsmmi_spmm_kernel(alg);
    DSMM_CHECK(ctx, !on_device || (fn != NULL && ctx->gpu != NULL), DSMM_ERR_UNSUPPORTED,
               "spmm: kernel '%s' needs a GPU: %s", spmm_alg_names[alg],
               DSMM_HAVE_CUDA ? "enable one on the context first (dsmm_ctx_set_gpu, --gpu)"
                              : "this dsmm was built without CUDA");
    DSMM_CHECK(ctx, fn != NULL, DSMM_ERR_UNSUPPORTED, "spmm: kernel '%s' is not built in",
               spmm_alg_names[alg]);
    int gpu_alg = alg == DSMM_SPMM_GPU || alg == DSMM_SPMM_CUSPARSE;
    info->alg = alg;
    info->threads = 1;
    info->flops = 2.0 * (double)A->nnz * (double)k;
    info->bytes = dsmm_spmm_bytes(A, trans, k, B->type, opts->beta);
    info->k_block = k;
    if (m == 0 || k == 0) goto cleanup;
    if (opts->alpha == 0.0 || n == 0 || A->nnz == 0) {
        dsmmi_spmm_scale_rows(C->val, C->type, C->ld, 0, m, k, opts->beta);
        goto cleanup;
    }

    dsmmi_spmm_args a = {.A = A,
                         .trans = trans,
                         .type = B->type,
                         .m = m,
                         .n = n,
                         .k = k,
                         .B = B->val,
                         .ldb = B->ld,
                         .C = C->val,
                         .ldc = C->ld,
                         .alpha = opts->alpha,
                         .beta = opts->beta,
                         .auto_chosen = opts->alg == DSMM_SPMM_AUTO,
                         .tiles = tl};
    if (tl != NULL) { // the tiles hold op(A)^T's entries in B's type: nothing to prepare
        a.trans = 1;
        DSMM_TRY(dsmmi_spmm_col_tiles(ctx, &a, info));
        info->passes = 1;
        goto cleanup;
    }
    const dsmm_csr *S = A;
    const void *av;
    if (rw != NULL) { // the stored rows, values in B's type: nothing to prepare
        S = rw->S;
        av = rw->val;
        a.crow = rw->crow;
    } else {
        if (((alg == DSMM_SPMM_ROW || gpu_alg) && trans) || (alg == DSMM_SPMM_COL && !trans)) {
            // The kernel reads the other orientation: A^T into scratch, counted as workspace.
            DSMM_TRY(dsmm_csr_transpose(ctx, A, &At));
            S = At;
            trans = !trans;
            info->workspace_bytes += csr_bytes(At);
        }
        DSMM_TRY(convert_values(ctx, S, B->type, &conv, &av));
        if (conv) info->workspace_bytes += (size_t)S->nnz * dsmmi_type_size(B->type);
    }

    a.A = S;
    a.trans = trans;
    a.av = av;
    // k in slices of kb columns, one kernel call (one pass over S) each.
    size_t elem = dsmmi_type_size(B->type);
    // AUTO (0) is one pass: slicing where B or C overflowed the last-level cache, as a
    // traffic model asked, ran 1.0-2.2x as long on every input measured (docs/kernels.md).
    dsmm_idx kb = opts->k_block > 0 ? opts->k_block : k;
    if (gpu_alg) kb = k; // the device kernels read B once per row group; no slicing
    if (kb > k) kb = k;
    info->k_block = kb;
    size_t ws = info->workspace_bytes, kws = 0;
    for (dsmm_idx j0 = 0; j0 < k; j0 += kb) {
        a.B = (const char *)B->val + (size_t)j0 * elem;
        a.C = (char *)C->val + (size_t)j0 * elem;
        a.k = k - j0 < kb ? k - j0 : kb;
        DSMM_TRY(fn(ctx, &a, info));
        if (info->workspace_bytes > kws) kws = info->workspace_bytes;
        info->passes++;
    }
    info->workspace_bytes = ws + kws;
    info->alg = alg;
cleanup:
    dsmm_csr_destroy(&At);
    dsmmi_free(ctx, conv);
    info->seconds = dsmmi_wtime() - t0;
    info->gbps = info->seconds > 0 ? info->bytes / info->seconds / 1e9 : 0.0;
    return st;
}

dsmm_status dsmm_csr_spmm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_dense *B, dsmm_dense *C,
                          const dsmm_spmm_opts *opts, dsmm_spmm_info *info)
{
    return dsmmi_local_spmm(ctx, A, B, C, opts, info);
}
