// src/kernels/merge_binary.c: accumulating the partial products of Sparse SUMMA's stages, k-way
// (all at the end) or by binary merge (dsmmi_merge_acc_*), with the bytes they hold counted.
// Binary merge is HipMCL-GPU §IV's Algorithm 2: the lists arrive in stage order and go on a
// stack; after stage i with t trailing zero bits the top t + 1 lists are merged by one heap
// merge (dsmmi_csr_merge), like the merges of a bottom-up merge sort, so the stack never holds
// more than about lg(stages) + 1 lists and a merge can run while the next stage is fetched. The
// lists popped are consecutive stages and merged in stage order, so each entry still sums its
// stages left to right within a merge; only the grouping across merges differs from k-way.
#include <string.h>

#include "kernels/kernels.h"

int dsmmi_binary_merge_count(int i)
{
    if (i <= 0 || i % 2 != 0) return 0;
    int t = 0;
    for (; i % 2 == 0; i /= 2) t++;
    return t + 1;
}

int64_t dsmmi_csr_bytes(const dsmm_csr *A)
{
    if (A == NULL) return 0;
    int64_t cw = dsmmi_csr_col_bits(A) == 32 ? 4 : 8;
    int64_t vw = A->val ? (int64_t)dsmmi_type_size(A->type) : 0;
    return ((int64_t)A->nrows + 1) * (int64_t)sizeof(dsmm_idx) + (int64_t)A->nnz * (cw + vw);
}

dsmm_status dsmmi_merge_acc_init(dsmm_ctx *ctx, dsmmi_merge_sched sched, int nstages,
                                 dsmm_idx nrows, dsmm_idx ncols, dsmm_semiring sr, dsmm_type type,
                                 int col_bits, dsmmi_merge_acc *acc)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, acc != NULL, DSMM_ERR_ARG, "merge accumulator must be non-NULL");
    memset(acc, 0, sizeof *acc);
    DSMM_CHECK(ctx, sched == DSMMI_MERGE_KWAY || sched == DSMMI_MERGE_BINARY, DSMM_ERR_ARG,
               "merge accumulator: unknown schedule %d", (int)sched);
    DSMM_CHECK(ctx, nstages >= 0, DSMM_ERR_ARG, "merge accumulator: %d stages", nstages);
    acc->sched = sched;
    acc->nrows = nrows;
    acc->ncols = ncols;
    acc->sr = sr;
    acc->type = type;
    acc->col_bits = col_bits;
    acc->cap = nstages;
    acc->stack = dsmmi_calloc(ctx, nstages ? (size_t)nstages : 1, sizeof *acc->stack);
    DSMM_CHECK(ctx, acc->stack != NULL, DSMM_ERR_NOMEM, "merge accumulator of %d stages", nstages);
cleanup:
    return st;
}

void dsmmi_merge_acc_free(dsmm_ctx *ctx, dsmmi_merge_acc *acc)
{
    if (acc == NULL) return;
    for (int k = 0; acc->stack && k < acc->depth; k++) dsmm_csr_destroy(&acc->stack[k]);
    acc->stack = dsmmi_free(ctx, acc->stack);
    acc->depth = 0;
    acc->bytes = 0;
}

/* Replaces the top n lists by their merge. One non-empty list (the others NULL) moves down
 * unchanged and no list at all leaves a NULL, so nothing is ever copied. */
static dsmm_status merge_top(dsmm_ctx *ctx, dsmmi_merge_acc *acc, int n)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *M = NULL;
    dsmm_csr **L = acc->stack + acc->depth - n;
    int live = 0, last = -1;
    for (int k = 0; k < n; k++)
        if (L[k] != NULL) {
            live++;
            last = k;
        }
    if (live <= 1) {
        M = last >= 0 ? L[last] : NULL;
        for (int k = 0; k < n; k++) L[k] = NULL;
    } else {
        double t0 = dsmmi_wtime();
        DSMM_TRY(dsmmi_csr_merge(ctx, (const dsmm_csr *const *)L, n, acc->nrows, acc->ncols,
                                 acc->sr, acc->type, acc->col_bits, &M));
        int64_t out = dsmmi_csr_bytes(M);
        if (acc->bytes + out > acc->peak_bytes) acc->peak_bytes = acc->bytes + out;
        for (int k = 0; k < n; k++) {
            acc->bytes -= dsmmi_csr_bytes(L[k]);
            dsmm_csr_destroy(&L[k]);
        }
        acc->bytes += out;
        acc->merges++;
        acc->seconds += dsmmi_wtime() - t0;
    }
    acc->depth -= n;
    acc->stack[acc->depth++] = M;
    M = NULL;
cleanup:
    dsmm_csr_destroy(&M);
    return st;
}

dsmm_status dsmmi_merge_acc_push(dsmm_ctx *ctx, dsmmi_merge_acc *acc, dsmm_csr **part)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, acc != NULL && acc->stack != NULL && part != NULL, DSMM_ERR_ARG,
               "merge accumulator and part must be non-NULL");
    DSMM_CHECK(ctx, acc->depth < acc->cap, DSMM_ERR_INTERNAL, "merge accumulator: stage %d of %d",
               acc->pushed + 1, acc->cap);
    acc->stack[acc->depth++] = *part;
    *part = NULL;
    acc->pushed++;
    acc->bytes += dsmmi_csr_bytes(acc->stack[acc->depth - 1]);
    if (acc->bytes > acc->peak_bytes) acc->peak_bytes = acc->bytes;
    if (acc->sched == DSMMI_MERGE_BINARY) {
        int n = dsmmi_binary_merge_count(acc->pushed);
        if (n > 1) DSMM_TRY(merge_top(ctx, acc, n));
    }
cleanup:
    if (part != NULL) dsmm_csr_destroy(part);
    return st;
}

dsmm_status dsmmi_merge_acc_finish(dsmm_ctx *ctx, dsmmi_merge_acc *acc, dsmm_csr **C)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, acc != NULL && acc->stack != NULL && C != NULL, DSMM_ERR_ARG,
               "merge accumulator and C must be non-NULL");
    *C = NULL;
    if (acc->depth > 1) DSMM_TRY(merge_top(ctx, acc, acc->depth));
    if (acc->depth == 1 && acc->stack[0] != NULL) {
        *C = acc->stack[0];
        acc->stack[0] = NULL;
    } else {
        DSMM_TRY(dsmmi_csr_create_ex(ctx, acc->nrows, acc->ncols, 0, acc->type, acc->col_bits, C));
    }
    acc->depth = 0;
    acc->bytes = 0;
cleanup:
    return st;
}
