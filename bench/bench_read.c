// bench/bench_read.c: times dsmm_read on one file (Matrix Market, abc, binary, .gz) for each
// thread count given, and prints one JSON line per thread count with the median of N runs.
// Usage: bench_read FILE [REPEATS (5)] [THREADS ... (1 2)]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_read FILE [REPEATS] [THREADS ...]\n");
        return 2;
    }
    const char *path = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (reps < 1) reps = 1;
    int default_threads[] = {1, 2};
    int nt = argc > 3 ? argc - 3 : 2;
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return 1;
    dsmm_ctx_set_progress(ctx, 0);
    double *t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) return 1;
    int rc = 0;
    for (int c = 0; c < nt && rc == 0; c++) {
        int threads = argc > 3 ? atoi(argv[3 + c]) : default_threads[c];
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.threads = threads;
        dsmm_file_info info;
        dsmm_idx nnz = 0;
        for (int r = 0; r < reps; r++) {
            dsmm_csr *A = NULL;
            double t0 = dsmmi_wtime();
            dsmm_status st = dsmm_read(ctx, path, &o, &A, NULL, &info);
            t[r] = dsmmi_wtime() - t0;
            if (st != DSMM_OK) {
                fprintf(stderr, "bench_read: %s\n", dsmm_ctx_last_error(ctx));
                rc = 1;
                break;
            }
            nnz = A->nnz;
            dsmm_csr_destroy(&A);
        }
        if (rc) break;
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        printf("{\"bench\":\"mtx_read\",\"file\":\"%s\",\"threads\":%d,\"repeats\":%d,"
               "\"bytes\":%zu,\"gzipped\":%d,\"nnz\":%lld,\"median_s\":%.6f,\"min_s\":%.6f,"
               "\"mb_per_s\":%.1f}\n",
               path, threads, reps, info.bytes, info.gzipped, (long long)nnz, med, t[0],
               (double)info.bytes / 1e6 / med);
        fflush(stdout);
    }
    free(t);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
