// src/base/outfile.c: atomic output files: write "<path>.tmp.<pid>", rename on commit, so a
// failed or interrupted run never leaves a partial output under the final name.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

dsmm_status dsmmi_outfile_open(dsmm_ctx *ctx, dsmmi_outfile *o, const char *path)
{
    dsmm_status st = DSMM_OK;
    memset(o, 0, sizeof *o);
    DSMM_CHECK(ctx, path != NULL && path[0] != '\0', DSMM_ERR_ARG, "output path is empty");
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->is_stdout = 1;
        return DSMM_OK;
    }
    o->path = dsmmi_strdup(ctx, path);
    DSMM_CHECK(ctx, o->path != NULL, DSMM_ERR_NOMEM, "output path");
    size_t n = strlen(path) + 32;
    o->tmp = dsmmi_malloc(ctx, n, 1);
    DSMM_CHECK(ctx, o->tmp != NULL, DSMM_ERR_NOMEM, "output path");
    snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "wb");
    DSMM_CHECK(ctx, o->f != NULL, DSMM_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
cleanup:
    if (st != DSMM_OK) {
        o->path = dsmmi_free(ctx, o->path);
        o->tmp = dsmmi_free(ctx, o->tmp);
    }
    return st;
}

dsmm_status dsmmi_outfile_commit(dsmm_ctx *ctx, dsmmi_outfile *o)
{
    dsmm_status st = DSMM_OK;
    if (o->is_stdout) {
        DSMM_CHECK(ctx, fflush(stdout) == 0 && !ferror(stdout), DSMM_ERR_IO,
                   "writing to standard output failed: %s", strerror(errno));
        return DSMM_OK;
    }
    DSMM_CHECK(ctx, o->f != NULL, DSMM_ERR_INTERNAL, "output file not open");
    int bad = ferror(o->f);
    int cerr = fclose(o->f);
    o->f = NULL;
    DSMM_CHECK(ctx, !bad && cerr == 0, DSMM_ERR_IO, "%s: write failed: %s", o->path,
               strerror(errno));
    DSMM_CHECK(ctx, rename(o->tmp, o->path) == 0, DSMM_ERR_IO, "%s: cannot rename from %s: %s",
               o->path, o->tmp, strerror(errno));
cleanup:
    if (st != DSMM_OK && o->tmp) remove(o->tmp);
    o->path = dsmmi_free(ctx, o->path);
    o->tmp = dsmmi_free(ctx, o->tmp);
    return st;
}

void dsmmi_outfile_abort(dsmm_ctx *ctx, dsmmi_outfile *o)
{
    if (o->is_stdout) return;
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->tmp) remove(o->tmp);
    o->path = dsmmi_free(ctx, o->path);
    o->tmp = dsmmi_free(ctx, o->tmp);
}
