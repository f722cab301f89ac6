// src/kernels/spgemm.c: the local SpGEMM front end: names, options, the checks and
// normalisation every kernel relies on (dsmmi_local_spgemm), the public dsmm_csr_spgemm*
// calls and per-row flops.
#include <string.h>

#include "kernels/kernels.h"

// clang-format off
static const char *const alg_names[DSMM_SPGEMM_ALG_COUNT] = {
    [DSMM_SPGEMM_AUTO] = "auto", [DSMM_SPGEMM_HASH] = "hash", [DSMM_SPGEMM_HEAP] = "heap",
    [DSMM_SPGEMM_DENSE] = "dense", [DSMM_SPGEMM_REF] = "ref", [DSMM_SPGEMM_GPU] = "gpu",
    [DSMM_SPGEMM_CUSPARSE] = "cusparse",
};
static const char *const semiring_names[DSMM_SEMIRING_COUNT] = {
    [DSMM_PLUS_TIMES] = "plus-times", [DSMM_PLUS_PAIR] = "plus-pair",
    [DSMM_MIN_PLUS] = "min-plus", [DSMM_MAX_TIMES] = "max-times",
};
// clang-format on

dsmm_status dsmm_spgemm_alg_from_name(const char *name, dsmm_spgemm_alg *alg)
{
    if (name == NULL || alg == NULL) return DSMM_ERR_ARG;
    for (int k = 0; k < DSMM_SPGEMM_ALG_COUNT; k++) {
        if (strcmp(name, alg_names[k]) == 0) {
            *alg = (dsmm_spgemm_alg)k;
            return DSMM_OK;
        }
    }
    return DSMM_ERR_ARG;
}

const char *dsmm_spgemm_alg_name(dsmm_spgemm_alg alg)
{
    if ((int)alg < 0 || alg >= DSMM_SPGEMM_ALG_COUNT) return "?";
    return alg_names[alg];
}

dsmm_status dsmm_semiring_from_name(const char *name, dsmm_semiring *sr)
{
    if (name == NULL || sr == NULL) return DSMM_ERR_ARG;
    for (int k = 0; k < DSMM_SEMIRING_COUNT; k++) {
        if (strcmp(name, semiring_names[k]) == 0) {
            *sr = (dsmm_semiring)k;
            return DSMM_OK;
        }
    }
    return DSMM_ERR_ARG;
}

const char *dsmm_semiring_name(dsmm_semiring sr)
{
    if ((int)sr < 0 || sr >= DSMM_SEMIRING_COUNT) return "?";
    return semiring_names[sr];
}

void dsmm_spgemm_opts_init(dsmm_spgemm_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->alg = DSMM_SPGEMM_AUTO;
    opts->semiring = DSMM_PLUS_TIMES;
    opts->type = -1;
    opts->col_bits = 64;
}

void dsmmi_spgemm_row_flops(const dsmm_csr *A, const dsmm_csr *B, dsmm_idx *flops, dsmm_idx *total)
{
    dsmm_idx sum = 0;
    const dsmm_idx *bp = B->rowptr;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1024) reduction(+ : sum) num_threads(dsmmi_threads(A->ctx))
#endif
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        dsmm_idx f = 0;
        if (A->colidx32) {
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                int32_t c = A->colidx32[k];
                f += bp[c + 1] - bp[c];
            }
        } else {
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                dsmm_idx c = A->colidx[k];
                f += bp[c + 1] - bp[c];
            }
        }
        if (flops) flops[i] = f;
        sum += f;
    }
    if (total) *total = sum;
}

static const char *type_name(dsmm_type t)
{
    return t == DSMM_DOUBLE ? "double" : t == DSMM_FLOAT ? "float" : "pattern";
}

dsmm_status dsmmi_spgemm_args_make(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                   const dsmm_spgemm_opts *opts, dsmmi_spgemm_args *a)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, (int)opts->alg >= 0 && opts->alg < DSMM_SPGEMM_ALG_COUNT, DSMM_ERR_ARG,
               "spgemm: unknown kernel %d", (int)opts->alg);
    DSMM_CHECK(ctx, (int)opts->semiring >= 0 && opts->semiring < DSMM_SEMIRING_COUNT, DSMM_ERR_ARG,
               "spgemm: unknown semiring %d", (int)opts->semiring);
    DSMM_CHECK(ctx, opts->col_bits == 32 || opts->col_bits == 64, DSMM_ERR_ARG,
               "spgemm: column width %d is neither 32 nor 64", opts->col_bits);
    DSMM_CHECK(ctx, opts->type == -1 || dsmmi_type_ok((dsmm_type)opts->type), DSMM_ERR_ARG,
               "spgemm: invalid value type %d for C", opts->type);
    DSMM_CHECK(ctx, dsmmi_type_ok(A->type) && dsmmi_type_ok(B->type), DSMM_ERR_ARG,
               "spgemm: invalid value type of A or B");

    dsmm_idx inner_b = opts->transpose_b ? B->ncols : B->nrows;
    dsmm_idx ncols_c = opts->transpose_b ? B->nrows : B->ncols;
    DSMM_CHECK(ctx, A->ncols == inner_b, DSMM_ERR_DIM,
               "spgemm: A is %lld x %lld but B%s is %lld x %lld (inner dimensions differ)",
               (long long)A->nrows, (long long)A->ncols, opts->transpose_b ? "^T" : "",
               (long long)inner_b, (long long)ncols_c);
    if (opts->semiring != DSMM_PLUS_PAIR) {
        DSMM_CHECK(ctx, A->type != DSMM_PATTERN && B->type != DSMM_PATTERN, DSMM_ERR_ARG,
                   "spgemm: semiring %s needs values but %s is pattern-only (use plus-pair to "
                   "count, or give the matrix values)",
                   semiring_names[opts->semiring], A->type == DSMM_PATTERN ? "A" : "B");
    }
    if (opts->mask) {
        DSMM_CHECK(ctx, opts->mask->nrows == A->nrows && opts->mask->ncols == ncols_c, DSMM_ERR_DIM,
                   "spgemm: mask is %lld x %lld but C is %lld x %lld", (long long)opts->mask->nrows,
                   (long long)opts->mask->ncols, (long long)A->nrows, (long long)ncols_c);
    }
    DSMM_CHECK(ctx, opts->col_bits == 64 || ncols_c <= INT32_MAX, DSMM_ERR_ARG,
               "spgemm: 32-bit columns asked for C with %lld columns", (long long)ncols_c);

    *a = (dsmmi_spgemm_args){.A = A,
                             .B = B,
                             .M = opts->mask,
                             .sr = opts->semiring,
                             .alg = opts->alg,
                             .col_bits = opts->col_bits,
                             .sorted = !opts->unsorted};
    if (opts->type == -1) {
        a->type = (A->type == DSMM_FLOAT && B->type == DSMM_FLOAT) ? DSMM_FLOAT : DSMM_DOUBLE;
    } else {
        a->type = (dsmm_type)opts->type;
    }
cleanup:
    return st;
}

dsmm_status dsmmi_local_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               const dsmm_spgemm_opts *opts, dsmmi_spgemm_phase phase, dsmm_csr **C,
                               dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Bt = NULL;
    dsmm_spgemm_opts dflt;
    dsmm_spgemm_info local_info;
    dsmmi_spgemm_args a;
    double t0 = dsmmi_wtime();

    if (info == NULL) info = &local_info;
    memset(info, 0, sizeof *info);
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "spgemm: invalid or destroyed context");
    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_ARG, "spgemm: C must be non-NULL");
    if (phase != DSMMI_SPGEMM_NUMERIC) *C = NULL;
    DSMM_CHECK(ctx, A != NULL && B != NULL, DSMM_ERR_ARG, "spgemm: A and B must be non-NULL");
    if (opts == NULL) {
        dsmm_spgemm_opts_init(&dflt);
        opts = &dflt;
    }
    DSMM_TRY(dsmmi_spgemm_args_make(ctx, A, B, opts, &a));
    dsmm_idx ncols_c = opts->transpose_b ? B->nrows : B->ncols;
    if (phase == DSMMI_SPGEMM_NUMERIC) {
        const dsmm_csr *Cn = *C;
        DSMM_CHECK(ctx, Cn != NULL, DSMM_ERR_ARG, "spgemm numeric: C must be non-NULL");
        DSMM_CHECK(ctx, Cn->nrows == A->nrows && Cn->ncols == ncols_c, DSMM_ERR_DIM,
                   "spgemm numeric: C is %lld x %lld but A * B is %lld x %lld",
                   (long long)Cn->nrows, (long long)Cn->ncols, (long long)A->nrows,
                   (long long)ncols_c);
        DSMM_CHECK(ctx, Cn->type != DSMM_PATTERN, DSMM_ERR_ARG,
                   "spgemm numeric: C is pattern-only, there are no values to compute");
        a.type = Cn->type;
        a.col_bits = Cn->colidx32 ? 32 : 64;
        a.sorted = Cn->sorted;
    }
    dsmmi_spgemm_fn fn = dsmmi_spgemm_kernel(opts->alg);
    int on_device = opts->alg == DSMM_SPGEMM_GPU || opts->alg == DSMM_SPGEMM_CUSPARSE;
    DSMM_CHECK(ctx, !on_device || (fn != NULL && ctx->gpu != NULL), DSMM_ERR_UNSUPPORTED,
               "spgemm: kernel '%s' needs a GPU: %s", alg_names[opts->alg],
               DSMM_HAVE_CUDA ? "enable one on the context first (dsmm_ctx_set_gpu, --gpu)"
                              : "this dsmm was built without CUDA");
    // AUTO with a device: the GPU entry decides (dsmmi_gpu_wants) and hands small products
    // back to the CPU driver.
    if (opts->alg == DSMM_SPGEMM_AUTO && ctx->gpu_auto && dsmmi_spgemm_kernel(DSMM_SPGEMM_GPU))
        fn = dsmmi_spgemm_kernel(DSMM_SPGEMM_GPU);
    if (opts->transpose_b) {
        DSMM_TRY(dsmm_csr_transpose(ctx, B, &Bt));
        a.B = Bt;
    }
    dsmmi_log(ctx, DSMM_LOG_DEBUG, "spgemm: %s, %s, C %s %d-bit", alg_names[opts->alg],
              semiring_names[a.sr], type_name(a.type), a.col_bits);
    DSMM_TRY(fn(ctx, &a, phase, C, info));
    info->cf = info->nnz > 0 ? info->flops / (double)info->nnz : 0.0;
cleanup:
    dsmm_csr_destroy(&Bt);
    info->seconds = dsmmi_wtime() - t0;
    return st;
}

dsmm_status dsmm_csr_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, dsmm_csr **C)
{
    return dsmmi_local_spgemm(ctx, A, B, NULL, DSMMI_SPGEMM_FULL, C, NULL);
}

dsmm_status dsmm_csr_spgemm_ex(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               const dsmm_spgemm_opts *opts, dsmm_csr **C, dsmm_spgemm_info *info)
{
    return dsmmi_local_spgemm(ctx, A, B, opts, DSMMI_SPGEMM_FULL, C, info);
}

dsmm_status dsmm_csr_spgemm_symbolic(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                     const dsmm_spgemm_opts *opts, dsmm_csr **C,
                                     dsmm_spgemm_info *info)
{
    return dsmmi_local_spgemm(ctx, A, B, opts, DSMMI_SPGEMM_SYMBOLIC, C, info);
}

dsmm_status dsmm_csr_spgemm_numeric(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                    const dsmm_spgemm_opts *opts, dsmm_csr *C,
                                    dsmm_spgemm_info *info)
{
    return dsmmi_local_spgemm(ctx, A, B, opts, DSMMI_SPGEMM_NUMERIC, &C, info);
}
