// src/io/write.c: dsmm_write / dsmm_write_dense: pick the format (options, then the name) and
// write through an atomic output file, so a failed write leaves no file behind.
#include <string.h>

#include "io/io.h"

void dsmm_write_opts_init(dsmm_write_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->format = DSMM_FORMAT_AUTO;
    opts->symmetric = -1;
    opts->precision = 0;
    opts->comment = NULL;
}

dsmm_status dsmmi_write_format(dsmm_ctx *ctx, const char *path, dsmm_format asked, dsmm_format *fmt)
{
    dsmm_status st = DSMM_OK;
    *fmt = asked;
    if (*fmt == DSMM_FORMAT_AUTO) *fmt = dsmmi_format_from_name(path);
    if (*fmt == DSMM_FORMAT_AUTO) *fmt = DSMM_FORMAT_MTX; // "-" and unknown names
    DSMM_CHECK(ctx, *fmt >= DSMM_FORMAT_MTX && *fmt <= DSMM_FORMAT_MCI, DSMM_ERR_ARG,
               "write: unknown format %d", (int)*fmt);
cleanup:
    return st;
}

dsmm_status dsmm_write(dsmm_ctx *ctx, const char *path, const dsmm_csr *A,
                       const dsmm_labels *labels, const dsmm_write_opts *opts)
{
    dsmm_status st = DSMM_OK;
    dsmmi_outfile out = {0};
    int open = 0;
    dsmm_write_opts o;

    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "write: invalid context");
    DSMM_CHECK(ctx, path != NULL && A != NULL, DSMM_ERR_ARG, "write: path and A must be non-NULL");
    if (opts)
        o = *opts;
    else
        dsmm_write_opts_init(&o);
    dsmm_format fmt;
    DSMM_TRY(dsmmi_write_format(ctx, path, o.format, &fmt));
    DSMM_TRY(dsmmi_outfile_open(ctx, &out, path));
    open = 1;
    switch (fmt) {
    case DSMM_FORMAT_MTX:
        DSMM_TRY(dsmmi_mtx_write(ctx, out.f, A, &o));
        break;
    case DSMM_FORMAT_ABC:
        DSMM_TRY(dsmmi_abc_write(ctx, out.f, A, labels, &o));
        break;
    case DSMM_FORMAT_MCI:
        DSMM_TRY(dsmmi_mci_write(ctx, out.f, A, &o));
        break;
    default:
        DSMM_TRY(dsmmi_bin_write(ctx, out.f, A));
        break;
    }
    open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &out));
cleanup:
    if (open) dsmmi_outfile_abort(ctx, &out);
    return st;
}

dsmm_status dsmm_write_dense(dsmm_ctx *ctx, const char *path, const dsmm_dense *D)
{
    dsmm_status st = DSMM_OK;
    dsmmi_outfile out = {0};
    int open = 0;

    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "write: invalid context");
    DSMM_CHECK(ctx, path != NULL && D != NULL, DSMM_ERR_ARG, "write: path and D must be non-NULL");
    DSMM_TRY(dsmmi_outfile_open(ctx, &out, path));
    open = 1;
    DSMM_TRY(dsmmi_mtx_write_dense(ctx, out.f, D));
    open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &out));
cleanup:
    if (open) dsmmi_outfile_abort(ctx, &out);
    return st;
}
