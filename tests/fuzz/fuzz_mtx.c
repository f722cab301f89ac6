// tests/fuzz/fuzz_mtx.c: libFuzzer target for the Matrix Market reader (dsmm_read_buffer).
// A parse that succeeds must give a matrix that passes dsmm_csr_check and that survives a
// write/read round trip bit for bit; everything is freed and the context must end empty.
// The memory budget (64 MiB) makes absurd declared sizes fail cleanly instead of allocating.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/io.h"

static void roundtrip(dsmm_ctx *ctx, const dsmm_csr *A)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return;
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    dsmm_status st = dsmmi_mtx_write(ctx, f, A, &wo);
    fclose(f);
    if (st != DSMM_OK) __builtin_trap();
    dsmm_read_opts ro;
    dsmm_read_opts_init(&ro);
    ro.type = A->type == DSMM_PATTERN ? DSMM_DOUBLE : A->type;
    fuzz_read_back(ctx, A, text, len, "roundtrip.mtx", &ro);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsmm_ctx *ctx = fuzz_ctx();
    if (ctx == NULL) return 0;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.format = DSMM_FORMAT_MTX;
    // The last byte picks the policies (the first must stay '%' for the banner).
    if (size > 0) {
        uint8_t b = data[size - 1];
        o.dup = (dsmm_dup)(b % 5);
        o.keep_pattern = (b >> 3) & 1;
        o.allow_nonfinite = (b >> 4) & 1;
        o.type = (b >> 5) & 1 ? DSMM_FLOAT : DSMM_DOUBLE;
        o.base = (b >> 6) & 1;
        o.threads = 1 + ((b >> 7) & 1);
    }
    dsmm_csr *A = NULL;
    dsmm_file_info info;
    dsmm_status st =
        dsmm_read_buffer(ctx, (const char *)data, size, "fuzz.mtx", &o, &A, NULL, &info);
    if (st == DSMM_OK) {
        if (A == NULL || dsmm_csr_check(ctx, A) != DSMM_OK || !A->sorted) __builtin_trap();
        if (A->nrows != info.nrows || A->ncols != info.ncols) __builtin_trap();
        if (!o.allow_nonfinite) roundtrip(ctx, A);
    } else if (A != NULL || dsmm_ctx_last_error(ctx)[0] == '\0') {
        __builtin_trap(); // a failure must leave no output and say why
    }
    dsmm_csr_destroy(&A);
    if (dsmm_ctx_mem_in_use(ctx) != 0) __builtin_trap();
    dsmm_ctx_destroy(&ctx);
    return 0;
}
