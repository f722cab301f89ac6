// src/kernels/roofline.c: the machine side of the SpMM roofline: STREAM's triad
// a[i] = b[i] + s * c[i] (McCalpin), with the context's threads, first-touched by the same
// threads and static schedule that time it.
#include <string.h>

#include "kernels/kernels.h"

dsmm_status dsmm_stream_triad(dsmm_ctx *ctx, size_t bytes, int repeats, double *gbps)
{
    dsmm_status st = DSMM_OK;
    double *a = NULL, *b = NULL, *c = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "stream: invalid or destroyed context");
    DSMM_CHECK(ctx, gbps != NULL, DSMM_ERR_ARG, "stream: gbps must be non-NULL");
    DSMM_CHECK(ctx, repeats >= 0, DSMM_ERR_ARG, "stream: repeats %d < 0", repeats);
    *gbps = 0.0;
    if (bytes == 0) bytes = (size_t)64 << 20;
    if (repeats == 0) repeats = 5;
    size_t n = bytes / sizeof(double);
    DSMM_CHECK(ctx, n >= 1024, DSMM_ERR_ARG, "stream: arrays of %zu bytes are too small", bytes);
    a = dsmmi_malloc(ctx, n, sizeof(double));
    b = dsmmi_malloc(ctx, n, sizeof(double));
    c = dsmmi_malloc(ctx, n, sizeof(double));
    DSMM_CHECK(ctx, a && b && c, DSMM_ERR_NOMEM, "stream: no memory for 3 arrays of %zu bytes",
               bytes);
    int nt = dsmmi_threads(ctx);
    long long nn = (long long)n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
    for (long long i = 0; i < nn; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    double best = 0.0;
    const double s = 3.0;
    for (int r = 0; r <= repeats; r++) {
        double t0 = dsmmi_wtime();
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
        for (long long i = 0; i < nn; i++) a[i] = b[i] + s * c[i];
        double t = dsmmi_wtime() - t0;
        double rate = t > 0 ? 3.0 * (double)n * sizeof(double) / t / 1e9 : 0.0;
        if (r > 0 && rate > best) best = rate; // r == 0 is the warm-up
    }
    // Read a back so the compiler keeps the stores.
    DSMM_CHECK(ctx, a[n / 2] == 7.0, DSMM_ERR_INTERNAL, "stream: triad gave %g, not 7", a[n / 2]);
    *gbps = best;
cleanup:
    dsmmi_free(ctx, a);
    dsmmi_free(ctx, b);
    dsmmi_free(ctx, c);
    return st;
}
