// tests/fuzz/fuzz.h: what the fuzz targets share: the entry point's prototype and a quiet
// context with a 64 MiB budget, so absurd declared sizes fail cleanly instead of paging.
#ifndef DSMM_FUZZ_H
#define DSMM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

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

#endif // DSMM_FUZZ_H
