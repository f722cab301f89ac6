// bench/spgemm_graphblas.c: the SuiteSparse:GraphBLAS side of bench/spgemm.sh: C = A * A with
// GrB_mxm(GrB_PLUS_TIMES_SEMIRING_FP64) + GrB_wait on a raw CSR file (format in
// bench/bench_spgemm.c), timed after a warm-up; writes the check file (nnz(C), y = C x).
// Usage: spgemm_graphblas FILE.csr [--threads N] [--repeat R] [--warmup W] [--min-time S]
//                         [--check FILE] [--name NAME]
#define _DEFAULT_SOURCE // getrusage, gethostname beside _POSIX_C_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <GraphBLAS.h>

#include "bench_common.h"

#define GB_TRY(call)                                                                               \
    do {                                                                                           \
        GrB_Info info_ = (call);                                                                   \
        if (info_ != GrB_SUCCESS) {                                                                \
            fprintf(stderr, "spgemm_graphblas: %s failed: GrB_Info %d\n", #call, (int)info_);      \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

// The raw CSR file as GraphBLAS wants it: 64-bit unsigned row pointers and columns.
typedef struct raw_csr {
    int64_t nrows, ncols, nnz;
    GrB_Index *rowptr, *colidx;
    double *val;
} raw_csr;

static int raw_read(const char *path, raw_csr *A)
{
    memset(A, 0, sizeof *A);
    int64_t h[5];
    FILE *f = bench_raw_open("spgemm_graphblas", path, h);
    if (f == NULL) return 0;
    A->nrows = h[0];
    A->ncols = h[1];
    A->nnz = h[2];
    size_t nnz = (size_t)h[2];
    A->rowptr = malloc(((size_t)h[0] + 1) * sizeof *A->rowptr);
    A->colidx = malloc((nnz + 1) * sizeof *A->colidx);
    A->val = malloc((nnz + 1) * sizeof *A->val);
    int ok = A->rowptr && A->colidx && A->val &&
             fread(A->rowptr, 8, (size_t)h[0] + 1, f) == (size_t)h[0] + 1;
    if (ok && h[3] == 4) {
        // 32-bit columns widen in place, from the back.
        int32_t *c32 = (int32_t *)A->colidx;
        ok = fread(c32, 4, nnz, f) == nnz;
        for (size_t k = nnz; ok && k-- > 0;) A->colidx[k] = (GrB_Index)c32[k];
    } else if (ok) {
        ok = fread(A->colidx, 8, nnz, f) == nnz;
    }
    ok = ok && fread(A->val, sizeof(double), nnz, f) == nnz;
    fclose(f);
    if (!ok) fprintf(stderr, "spgemm_graphblas: %s: not a raw CSR file or truncated\n", path);
    return ok;
}

static void raw_free(raw_csr *A)
{
    free(A->rowptr);
    free(A->colidx);
    free(A->val);
    memset(A, 0, sizeof *A);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *check = NULL, *name = NULL;
    int threads = 1, reps = 5, warmup = 1;
    double min_time = 0.0;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        int has = k + 1 < argc;
        if (has && strcmp(a, "--threads") == 0) {
            threads = atoi(argv[++k]);
        } else if (has && strcmp(a, "--repeat") == 0) {
            reps = atoi(argv[++k]);
        } else if (has && strcmp(a, "--warmup") == 0) {
            warmup = atoi(argv[++k]);
        } else if (has && strcmp(a, "--min-time") == 0) {
            if (!bench_parse_min_time("spgemm_graphblas", argv[++k], &min_time)) return 2;
        } else if (has && strcmp(a, "--check") == 0) {
            check = argv[++k];
        } else if (has && strcmp(a, "--name") == 0) {
            name = argv[++k];
        } else if (a[0] != '-' && path == NULL) {
            path = a;
        } else {
            path = NULL;
            break;
        }
    }
    if (path == NULL || threads < 1 || reps < 1 || warmup < 0) {
        fprintf(stderr, "usage: spgemm_graphblas FILE.csr [--threads N] [--repeat R] "
                        "[--warmup W] [--min-time S] [--check FILE] [--name NAME]\n");
        return 2;
    }
    if (name == NULL) name = path;

    int rc = 1;
    raw_csr R;
    GrB_Matrix A = NULL, C = NULL, Z = NULL;
    GrB_Vector x = NULL, y = NULL;
    GrB_Index *xi = NULL;
    double *xv = NULL, *yv = NULL, *t = NULL;
    if (!raw_read(path, &R)) return 1;
    if (R.nrows != R.ncols) {
        fprintf(stderr, "spgemm_graphblas: %s is not square\n", path);
        raw_free(&R);
        return 1;
    }

    GB_TRY(GrB_init(GrB_NONBLOCKING));
    GB_TRY(GxB_set(GxB_NTHREADS, threads));
    GB_TRY(GxB_set(GxB_BURBLE, false));
    GB_TRY(GrB_Matrix_import_FP64(&A, GrB_FP64, (GrB_Index)R.nrows, (GrB_Index)R.ncols, R.rowptr,
                                  R.colidx, R.val, (GrB_Index)R.nrows + 1, (GrB_Index)R.nnz,
                                  (GrB_Index)R.nnz, GrB_CSR_FORMAT));
    GB_TRY(GrB_wait(A, GrB_MATERIALIZE));
    GrB_Index n = (GrB_Index)R.nrows, nnz_c = 0;
    raw_free(&R); // the import copied the arrays

    double one = 0.0; // the last warm-up's seconds
    for (int w = 0; w < (warmup > 0 ? warmup : 1); w++) {
        if (C) GrB_Matrix_free(&C);
        GB_TRY(GrB_Matrix_new(&C, GrB_FP64, n, n));
        double t0 = bench_now();
        GB_TRY(GrB_mxm(C, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, A, A, NULL));
        GB_TRY(GrB_wait(C, GrB_MATERIALIZE));
        one = bench_now() - t0;
    }
    reps = bench_repeats(reps, min_time, one);
    t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) goto done;
    GB_TRY(GrB_Matrix_nvals(&nnz_c, C));
    // Stored entries equal to 0 (cancellation): GraphBLAS keeps them, as dsmm does.
    GrB_Index zeros = 0;
    GB_TRY(GrB_Matrix_new(&Z, GrB_FP64, n, n));
    GB_TRY(GrB_Matrix_select_FP64(Z, NULL, NULL, GrB_VALUEEQ_FP64, C, 0.0, NULL));
    GB_TRY(GrB_Matrix_nvals(&zeros, Z));
    GrB_Matrix_free(&Z);

    // The check: y = C x with GrB_mxv, missing entries of y are 0.
    xi = malloc(((size_t)n + 1) * sizeof *xi);
    xv = malloc(((size_t)n + 1) * sizeof *xv);
    yv = calloc((size_t)n + 1, sizeof *yv);
    if (xi == NULL || xv == NULL || yv == NULL) goto done;
    for (GrB_Index j = 0; j < n; j++) {
        xi[j] = j;
        xv[j] = bench_check_x((uint64_t)j);
    }
    GB_TRY(GrB_Vector_new(&x, GrB_FP64, n));
    GB_TRY(GrB_Vector_new(&y, GrB_FP64, n));
    GB_TRY(GrB_Vector_build_FP64(x, xi, xv, n, GrB_PLUS_FP64));
    GB_TRY(GrB_mxv(y, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, C, x, NULL));
    GrB_Index ny = n;
    GB_TRY(GrB_Vector_extractTuples_FP64(xi, xv, &ny, y));
    for (GrB_Index k = 0; k < ny; k++) yv[xi[k]] = xv[k];
    GrB_Vector_free(&x);
    GrB_Vector_free(&y);
    GrB_Matrix_free(&C);

    for (int r = 0; r < reps; r++) {
        GB_TRY(GrB_Matrix_new(&C, GrB_FP64, n, n));
        double t0 = bench_now();
        GB_TRY(GrB_mxm(C, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, A, A, NULL));
        GB_TRY(GrB_wait(C, GrB_MATERIALIZE));
        t[r] = bench_now() - t0;
        GrB_Index z = 0;
        GB_TRY(GrB_Matrix_nvals(&z, C));
        if (z != nnz_c) {
            fprintf(stderr, "spgemm_graphblas: nnz(C) changed between runs\n");
            goto done;
        }
        GrB_Matrix_free(&C);
    }
    if (check && !bench_check_write("spgemm_graphblas", check, (int64_t)n, (int64_t)nnz_c,
                                    (int64_t)zeros, yv))
        goto done;
    GrB_Index nnz_a = 0;
    GB_TRY(GrB_Matrix_nvals(&nnz_a, A));
    int nth = 0;
    GB_TRY(GxB_get(GxB_NTHREADS, &nth));
    int ver[3] = {0, 0, 0};
    GB_TRY(GxB_get(GxB_LIBRARY_VERSION, ver));
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    double med = bench_median(t, reps);
    printf("{\"bench\":\"spgemm\",\"system\":\"graphblas\",\"name\":\"%s\","
           "\"version\":\"%d.%d.%d\",\"machine\":\"%s\",\"ranks\":1,\"threads\":%d,"
           "\"algorithm\":\"GrB_mxm plus_times_fp64\",\"n\":%llu,\"nnz_a\":%llu,"
           "\"nnz_c\":%llu,\"repeats\":%d,\"median_s\":%.6g,\"min_s\":%.6g,"
           "\"peak_rss_kb\":%ld}\n",
           name, ver[0], ver[1], ver[2], host, nth, (unsigned long long)n,
           (unsigned long long)nnz_a, (unsigned long long)nnz_c, reps, med, t[0],
           bench_peak_rss_kb());
    rc = 0;
done:
    if (C) GrB_Matrix_free(&C);
    if (Z) GrB_Matrix_free(&Z);
    if (A) GrB_Matrix_free(&A);
    if (x) GrB_Vector_free(&x);
    if (y) GrB_Vector_free(&y);
    GrB_finalize();
    raw_free(&R);
    free(t);
    free(xi);
    free(xv);
    free(yv);
    return rc;
}
