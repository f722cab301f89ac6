// tests/fuzz/fuzz_abc.c: libFuzzer target for the abc parser (dsmm_read_buffer, format ABC;
// the SIF and ETC layouts too).
// A parse that succeeds must give a matrix that passes dsmm_csr_check and a label dictionary
// that names every row; everything is freed and the context must end empty.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsmm.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsmm_ctx *ctx = fuzz_ctx();
    if (ctx == NULL) return 0;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.format = DSMM_FORMAT_ABC;
    // Exercise the other policies on some inputs: the first byte picks them.
    if (size > 0) {
        o.dup = (dsmm_dup)(data[0] % 5);
        o.keep_pattern = (data[0] >> 3) & 1;
        o.allow_nonfinite = (data[0] >> 4) & 1;
        o.type = (data[0] >> 5) & 1 ? DSMM_FLOAT : DSMM_DOUBLE;
        // The top two bits: abc, SIF (label:weight when the low bit is set), ETC, ETC with
        // label:weight.
        int lay = data[0] >> 6;
        o.layout = lay == 0 ? DSMM_LAYOUT_ABC : lay == 1 ? DSMM_LAYOUT_SIF : DSMM_LAYOUT_ETC;
        o.expect_values = lay == 3 || (lay == 1 && (data[0] & 1));
    }
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_file_info info;
    dsmm_status st = dsmm_read_buffer(ctx, (const char *)data, size, "fuzz.abc", &o, &A, &L, &info);
    if (st == DSMM_OK) {
        if (A == NULL || L == NULL || dsmm_csr_check(ctx, A) != DSMM_OK) __builtin_trap();
        if (A->nrows != dsmm_labels_count(L) || A->ncols != A->nrows) __builtin_trap();
        for (dsmm_idx i = 0; i < A->nrows; i++) {
            const char *name = dsmm_labels_name(L, i);
            if (name == NULL || dsmm_labels_find(L, name) != i) __builtin_trap();
        }
    } else if (A != NULL || L != NULL || dsmm_ctx_last_error(ctx)[0] == '\0') {
        __builtin_trap();
    }
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    if (dsmm_ctx_mem_in_use(ctx) != 0) __builtin_trap();
    dsmm_ctx_destroy(&ctx);
    return 0;
}
