// src/base/status.c: status names, version, and error recording with file/line context.
#include <stdio.h>
#include <string.h>

#include "base/base.h"

// clang-format off
static const char *const status_names[DSMM_STATUS_COUNT] = {
    [DSMM_OK]              = "DSMM_OK",
    [DSMM_ERR_ARG]         = "DSMM_ERR_ARG",
    [DSMM_ERR_DIM]         = "DSMM_ERR_DIM",
    [DSMM_ERR_FORMAT]      = "DSMM_ERR_FORMAT",
    [DSMM_ERR_NOMEM]       = "DSMM_ERR_NOMEM",
    [DSMM_ERR_IO]          = "DSMM_ERR_IO",
    [DSMM_ERR_MPI]         = "DSMM_ERR_MPI",
    [DSMM_ERR_CUDA]        = "DSMM_ERR_CUDA",
    [DSMM_ERR_UNSUPPORTED] = "DSMM_ERR_UNSUPPORTED",
    [DSMM_ERR_INTERNAL]    = "DSMM_ERR_INTERNAL",
};
// clang-format on

const char *dsmm_status_name(dsmm_status st)
{
    if ((int)st < 0 || st >= DSMM_STATUS_COUNT) return "DSMM_ERR_?";
    return status_names[st];
}

const char *dsmm_type_name(dsmm_type t)
{
    switch (t) {
    case DSMM_PATTERN:
        return "pattern";
    case DSMM_FLOAT:
        return "float";
    case DSMM_DOUBLE:
        return "double";
    }
    return "?";
}

size_t dsmmi_type_size(dsmm_type t)
{
    return t == DSMM_DOUBLE ? sizeof(double) : t == DSMM_FLOAT ? sizeof(float) : 0;
}

const char *dsmm_version(void)
{
    return DSMM_VERSION_STRING;
}

// Source paths are shown from "src/" on, so messages do not depend on the build directory.
static const char *short_path(const char *file)
{
    const char *p = strstr(file, "src/");
    const char *last = NULL;
    while (p) {
        last = p;
        p = strstr(p + 1, "src/");
    }
    return last ? last : file;
}

dsmm_status dsmmi_error(dsmm_ctx *ctx, dsmm_status code, const char *file, int line,
                        const char *fmt, ...)
{
    if (ctx == NULL || !dsmmi_ctx_ok(ctx)) return code;
    char msg[DSMMI_ERRMSG_MAX - 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
#ifdef _OPENMP
#pragma omp critical(dsmmi_error_lock)
#endif
    {
        // The first failure is the cause; later ones are consequences, unless the context was
        // cleared in between (dsmm_ctx_clear_error).
        if (ctx->last_status == DSMM_OK) {
            ctx->last_status = code;
            snprintf(ctx->last_error, sizeof ctx->last_error, "%s: %s (%s:%d)",
                     dsmm_status_name(code), msg, short_path(file), line);
        }
    }
    return code;
}

void dsmmi_error_replace(dsmm_ctx *ctx, dsmm_status code, const char *msg)
{
    if (ctx == NULL || !dsmmi_ctx_ok(ctx)) return;
    ctx->last_status = code;
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", msg);
}
