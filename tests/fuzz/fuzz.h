// tests/fuzz/fuzz.h: what the fuzz targets share: the entry point's prototype and a quiet
// context with a 64 MiB budget, so absurd declared sizes fail cleanly instead of paging.
#ifndef DSMM_FUZZ_H
#define DSMM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsmm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline dsmm_ctx *fuzz_ctx(void)
{
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return NULL;
    dsmm_ctx_set_log(ctx, DSMM_LOG_ERROR, NULL, NULL);
    dsmm_ctx_set_mem_budget(ctx, (size_t)64 << 20);
    dsmm_ctx_set_progress(ctx, 0);
    return ctx;
}

/* fuzz_same_csr: A and B hold the same matrix bit for bit (shape, type, pattern, values). */
static inline int fuzz_same_csr(const dsmm_csr *A, const dsmm_csr *B)
{
    if (A->nrows != B->nrows || A->ncols != B->ncols || A->nnz != B->nnz || A->type != B->type)
        return 0;
    for (dsmm_idx i = 0; i <= A->nrows; i++)
        if (A->rowptr[i] != B->rowptr[i]) return 0;
    size_t vs = A->type == DSMM_PATTERN ? 0
                : A->type == DSMM_FLOAT ? sizeof(float)
                                        : sizeof(double);
    for (dsmm_idx k = 0; k < A->nnz; k++) {
        if (dsmm_csr_col(A, k) != dsmm_csr_col(B, k)) return 0;
        if (vs && memcmp((const char *)A->val + k * vs, (const char *)B->val + k * vs, vs) != 0)
            return 0;
    }
    return 1;
}

/* fuzz_read_back: a writer's output (bytes, len; freed here) read with ro must give A again,
 * bit for bit; a budget too small for the second copy is no finding. */
static inline void fuzz_read_back(dsmm_ctx *ctx, const dsmm_csr *A, char *bytes, size_t len,
                                  const char *name, const dsmm_read_opts *ro)
{
    dsmm_csr *B = NULL;
    dsmm_status st = dsmm_read_buffer(ctx, bytes, len, name, ro, &B, NULL, NULL);
    free(bytes);
    if (st == DSMM_ERR_NOMEM) return;
    if (st != DSMM_OK || !fuzz_same_csr(A, B)) __builtin_trap();
    dsmm_csr_destroy(&B);
}

#endif // DSMM_FUZZ_H
