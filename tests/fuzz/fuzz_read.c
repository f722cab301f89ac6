// tests/fuzz/fuzz_read.c: libFuzzer target for format detection, the dsmm binary format, mcl's
// native matrix format (a "(mclheader" line sends the input to dsmmi_mci_parse) and the
// dense (Matrix Market "array") reader. The input is read twice: with DSMM_FORMAT_AUTO, as
// dsmm_read does on a file of unknown kind (a binary magic sends it to dsmmi_bin_parse), and as
// a dense matrix, as dsmm_read_dense does for `dsmm spmm --B`. A sparse parse that succeeds
// must give a matrix that passes dsmm_csr_check and, in the binary format, survives a
// write/read round trip bit for bit; a dense one must have the declared shape and finite
// values; a failure leaves no output and says why; the context ends empty.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "io/io.h"

// The binary writer's output read back gives the same matrix.
static void bin_roundtrip(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_read_opts *o)
{
    char *bytes = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&bytes, &len);
    if (f == NULL) return;
    dsmm_status st = dsmmi_bin_write(ctx, f, A);
    fclose(f);
    if (st == DSMM_ERR_NOMEM) {
        free(bytes);
        return;
    }
    if (st != DSMM_OK) __builtin_trap();
    dsmm_read_opts ro = *o;
    ro.format = DSMM_FORMAT_BIN;
    fuzz_read_back(ctx, A, bytes, len, "roundtrip.dsmm", &ro);
}

static void read_sparse(dsmm_ctx *ctx, const uint8_t *data, size_t size, uint8_t b)
{
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.dup = (dsmm_dup)(b % 5);
    o.keep_pattern = (b >> 3) & 1;
    o.type = (b >> 5) & 1 ? DSMM_FLOAT : DSMM_DOUBLE;
    o.threads = 1 + ((b >> 7) & 1);
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_file_info info;
    dsmm_status st =
        dsmm_read_buffer(ctx, (const char *)data, size, "fuzz.input", &o, &A, &L, &info);
    if (st == DSMM_OK) {
        if (A == NULL || dsmm_csr_check(ctx, A) != DSMM_OK) __builtin_trap();
        if (A->nrows != info.nrows || A->ncols != info.ncols) __builtin_trap();
        if (info.format == DSMM_FORMAT_BIN) bin_roundtrip(ctx, A, &o);
    } else if (A != NULL || L != NULL || dsmm_ctx_last_error(ctx)[0] == '\0') {
        __builtin_trap(); // a failure must leave no output and say why
    }
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
}

static void read_dense(dsmm_ctx *ctx, const uint8_t *data, size_t size, uint8_t b)
{
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.format = DSMM_FORMAT_MTX;
    o.type = b & 1 ? DSMM_FLOAT : DSMM_DOUBLE;
    dsmmi_source src = {0};
    if (dsmmi_source_wrap(ctx, (const char *)data, size, "fuzz.mtx", &src) != DSMM_OK) return;
    dsmm_dense *D = NULL;
    dsmm_file_info info;
    memset(&info, 0, sizeof info);
    dsmm_status st =
        src.len > 0 ? dsmmi_mtx_parse(ctx, &src, &o, NULL, &D, &info) : DSMM_ERR_FORMAT;
    if (st == DSMM_OK) {
        if (D == NULL || D->type != o.type || D->ld < D->ncols || D->nrows < 0 || D->ncols < 0)
            __builtin_trap();
        if (D->nrows != info.nrows || D->ncols != info.ncols) __builtin_trap();
        for (dsmm_idx i = 0; i < D->nrows; i++)
            for (dsmm_idx j = 0; j < D->ncols; j++) {
                double v = o.type == DSMM_FLOAT ? ((const float *)D->val)[i * D->ld + j]
                                                : ((const double *)D->val)[i * D->ld + j];
                if (!isfinite(v)) __builtin_trap(); // NaN and Inf are refused by default
            }
    } else if (D != NULL || (src.len > 0 && dsmm_ctx_last_error(ctx)[0] == '\0')) {
        __builtin_trap();
    }
    dsmm_dense_destroy(&D);
    dsmmi_source_free(ctx, &src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsmm_ctx *ctx = fuzz_ctx();
    if (ctx == NULL) return 0;
    // The last byte picks the policies (the first ones are the magic or the banner).
    uint8_t b = size > 0 ? data[size - 1] : 0;
    read_sparse(ctx, data, size, b);
    if (dsmm_ctx_mem_in_use(ctx) != 0) __builtin_trap();
    dsmm_ctx_clear_error(ctx);
    read_dense(ctx, data, size, b);
    if (dsmm_ctx_mem_in_use(ctx) != 0) __builtin_trap();
    dsmm_ctx_destroy(&ctx);
    return 0;
}
