// src/base/ctx.c: the serial context: creation, settings, last error, logging.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/base.h"

bool dsmmi_ctx_ok(const dsmm_ctx *ctx)
{
    return ctx != NULL && ctx->magic == DSMMI_CTX_MAGIC;
}

dsmm_status dsmm_ctx_create(dsmm_ctx **out)
{
    if (out == NULL) return DSMM_ERR_ARG;
    *out = NULL;
    dsmm_ctx *ctx = calloc(1, sizeof *ctx); // the context itself precedes any allocator
    if (ctx == NULL) return DSMM_ERR_NOMEM;
    ctx->magic = DSMMI_CTX_MAGIC;
    ctx->last_status = DSMM_OK;
    ctx->rank = 0;
    ctx->size = 1;
    ctx->log_level = DSMM_LOG_WARN;
    ctx->fail_at = -1;
    ctx->progress_mode = 1;
    // Default budget: the machine's memory. A file that declares 10^12 rows then fails with a
    // message instead of an allocation the kernel grants lazily and kills us for later.
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) ctx->budget = (size_t)pages * (size_t)page;
    const char *env = getenv("DSMM_LOG");
    if (env != NULL && env[0] >= '0' && env[0] <= '3')
        ctx->log_level = (dsmm_log_level)(env[0] - '0');
    *out = ctx;
    return DSMM_OK;
}

void dsmm_ctx_destroy(dsmm_ctx **pctx)
{
    if (pctx == NULL || *pctx == NULL) return;
    dsmm_ctx *ctx = *pctx;
    if (ctx->magic == DSMMI_CTX_MAGIC) {
        if (ctx->gpu_free) ctx->gpu_free(ctx); // before comm: the device state may log
        if (ctx->comm_free) ctx->comm_free(ctx);
        dsmmi_cache_drop(ctx);
        if (ctx->in_use != 0)
            dsmmi_log(ctx, DSMM_LOG_DEBUG, "context destroyed with %zu bytes still allocated",
                      ctx->in_use);
        ctx->magic = DSMMI_FREED_MAGIC;
        free(ctx);
    }
    *pctx = NULL;
}

const char *dsmm_ctx_last_error(const dsmm_ctx *ctx)
{
    if (!dsmmi_ctx_ok(ctx)) return "DSMM_ERR_ARG: invalid or destroyed context";
    return ctx->last_error;
}

dsmm_status dsmm_ctx_last_status(const dsmm_ctx *ctx)
{
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    return ctx->last_status;
}

void dsmm_ctx_clear_error(dsmm_ctx *ctx)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    ctx->last_status = DSMM_OK;
    ctx->last_error[0] = '\0';
}

dsmm_status dsmm_ctx_set_threads(dsmm_ctx *ctx, int n)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "thread count %d is negative", n);
    ctx->threads = n;
cleanup:
    return st;
}

int dsmm_ctx_threads(const dsmm_ctx *ctx)
{
    return dsmmi_threads(ctx);
}

int dsmmi_threads(const dsmm_ctx *ctx)
{
    if (dsmmi_ctx_ok(ctx) && ctx->threads > 0) return ctx->threads;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int dsmm_ctx_rank(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->rank : 0;
}

int dsmm_ctx_size(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->size : 1;
}

void dsmm_ctx_set_log(dsmm_ctx *ctx, dsmm_log_level level, dsmm_log_fn fn, void *user)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    ctx->log_level = level;
    ctx->log_fn = fn;
    ctx->log_user = user;
}

void dsmm_ctx_set_progress(dsmm_ctx *ctx, int mode)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    ctx->progress_mode = mode < 0 ? 0 : mode > 2 ? 2 : mode;
}

void dsmmi_log(dsmm_ctx *ctx, dsmm_log_level level, const char *fmt, ...)
{
    if (!dsmmi_ctx_ok(ctx) || level > ctx->log_level) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx->log_fn) {
        ctx->log_fn(ctx->log_user, level, msg);
        return;
    }
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (ctx->size > 1)
        fprintf(stderr, "dsmm[%d]: %s: %s\n", ctx->rank, names[level], msg);
    else
        fprintf(stderr, "dsmm: %s: %s\n", names[level], msg);
}
