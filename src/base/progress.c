// src/base/progress.c: a one-line progress bar on stderr, shown only when stderr is a
// terminal (or when forced), so logs and pipes never receive control characters.
#include <unistd.h>

#include "base/base.h"

void dsmmi_progress_begin(dsmm_ctx *ctx, dsmmi_progress *p, const char *label, double total)
{
    p->active = 0;
    p->label = label;
    p->total = total > 0 ? total : 1;
    p->start = dsmmi_wtime();
    p->last_draw = 0;
    if (!dsmmi_ctx_ok(ctx) || ctx->rank != 0) return;
    if (ctx->progress_mode == 2 || (ctx->progress_mode == 1 && isatty(STDERR_FILENO)))
        p->active = 1;
}

void dsmmi_progress_update(dsmmi_progress *p, double done)
{
    if (!p->active) return;
    double now = dsmmi_wtime();
    if (now - p->last_draw < 0.1 && done < p->total) return;
    p->last_draw = now;
    double frac = done / p->total;
    if (frac > 1) frac = 1;
    if (frac < 0) frac = 0;
    int width = 30, filled = (int)(frac * width);
    char bar[31];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r%s [%s] %5.1f%% %.1fs", p->label, bar, 100 * frac, now - p->start);
    fflush(stderr);
}

void dsmmi_progress_end(dsmmi_progress *p)
{
    if (!p->active) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->active = 0;
}
