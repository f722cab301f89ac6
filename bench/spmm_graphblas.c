// bench/spmm_graphblas.c: the SuiteSparse:GraphBLAS side of bench/spmm.sh: C = A * B with A
// from a raw CSR file (format in bench/bench_spgemm.c) and B a full n x k matrix of
// bench_spmm_b values, the two ways users call GrB_mxm:
//   --mode new:   GrB_mxm(C, NULL, NULL, PLUS_TIMES, A, B, NULL) + GrB_wait into a C made
//                 by GrB_Matrix_new before each run (the library picks C's format and
//                 allocates it inside the timed call);
//   --mode accum: GrB_mxm(C, NULL, GrB_PLUS_<T>, PLUS_TIMES, A, B, NULL) + GrB_wait, i.e.
//                 C += A * B into a preallocated full C, set to 0 and materialised before
//                 each run (untimed), which GraphBLAS updates in place.
// A, B and C hold --type values (GrB_FP32 or GrB_FP64) and B is built untimed with
// GxB_Matrix_pack_FullR. One warm-up, then --repeat timed runs (more under --min-time, as
// bench_repeats in bench_common.h says); then the check file (format
// in bench/bench_spmm.c) from y = C w and z = C^T u computed with GrB_mxv / GrB_vxm in FP64.
// Usage: spmm_graphblas FILE.csr [--k K] [--type float|double] [--mode new|accum]
//                       [--threads N] [--repeat R] [--warmup W] [--min-time S] [--check FILE]
//                       [--name NAME]
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
            fprintf(stderr, "spmm_graphblas: %s failed: GrB_Info %d\n", #call, (int)info_);        \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

// The raw CSR file as GraphBLAS wants it: 64-bit unsigned row pointers and columns; values
// double, or converted to float in place (the first half of val) when is_float.
typedef struct raw_csr {
    int64_t nrows, ncols, nnz;
    GrB_Index *rowptr, *colidx;
    double *val;
} raw_csr;

static int raw_read(const char *path, raw_csr *A, int is_float)
{
    memset(A, 0, sizeof *A);
    int64_t h[5];
    FILE *f = bench_raw_open("spmm_graphblas", path, h);
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
    if (!ok) fprintf(stderr, "spmm_graphblas: %s: not a raw CSR file or truncated\n", path);
    if (ok && is_float) {
        // Front to back: float p is written over bytes that double p/2 occupied, already read.
        float *fv = (float *)A->val;
        for (size_t p = 0; p < nnz; p++) fv[p] = (float)A->val[p];
    }
    return ok;
}

static void raw_free(raw_csr *A)
{
    free(A->rowptr);
    free(A->colidx);
    free(A->val);
    memset(A, 0, sizeof *A);
}

// A whole decimal number in [lo, hi] into *v; 0 (with a message) otherwise.
static int parse_int(const char *opt, const char *s, long long lo, long long hi, long long *v)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || x < lo || x > hi) {
        fprintf(stderr, "spmm_graphblas: %s '%s': expected a whole number in %lld..%lld\n", opt, s,
                lo, hi);
        return 0;
    }
    *v = x;
    return 1;
}

// A new malloc'ed m x k row-major array of zeros (float or double), every page written.
static void *dense_zeros(GrB_Index m, GrB_Index k, size_t w, GrB_Index *size)
{
    *size = m * k * w;
    void *p = malloc(*size > 0 ? *size : w);
    if (p) memset(p, 0, *size);
    return p;
}

// Sets the full matrix C to 0 in place: unpack (O(1)), write, pack back. A scalar assign would
// make C iso-valued, and the timed mxm would then spend time expanding it.
static GrB_Info full_zero(GrB_Matrix C)
{
    void *x = NULL;
    GrB_Index size = 0;
    bool iso = false;
    GrB_Info info = GxB_Matrix_unpack_FullR(C, &x, &size, &iso, NULL);
    if (info != GrB_SUCCESS) return info;
    if (iso) return GrB_INVALID_OBJECT; // never packed iso here
    memset(x, 0, size);
    return GxB_Matrix_pack_FullR(C, &x, size, false, NULL);
}

static const char *sparsity_name(int s)
{
    return s == GxB_FULL          ? "full"
           : s == GxB_BITMAP      ? "bitmap"
           : s == GxB_SPARSE      ? "sparse"
           : s == GxB_HYPERSPARSE ? "hypersparse"
                                  : "?";
}

int main(int argc, char **argv)
{
    const char *path = NULL, *check = NULL, *name = NULL, *mode = "new", *type = "double";
    long long k = 64, threads = 1, reps = 5, warmup = 1;
    double min_time = 0.0;
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        int has = a + 1 < argc;
        if (has && strcmp(s, "--k") == 0) {
            if (!parse_int(s, argv[++a], 1, INT32_MAX, &k)) return 2;
        } else if (has && strcmp(s, "--threads") == 0) {
            if (!parse_int(s, argv[++a], 1, 4096, &threads)) return 2;
        } else if (has && strcmp(s, "--repeat") == 0) {
            if (!parse_int(s, argv[++a], 1, 100000, &reps)) return 2;
        } else if (has && strcmp(s, "--warmup") == 0) {
            if (!parse_int(s, argv[++a], 0, 100000, &warmup)) return 2;
        } else if (has && strcmp(s, "--min-time") == 0) {
            if (!bench_parse_min_time("spmm_graphblas", argv[++a], &min_time)) return 2;
        } else if (has && strcmp(s, "--type") == 0) {
            type = argv[++a];
        } else if (has && strcmp(s, "--mode") == 0) {
            mode = argv[++a];
        } else if (has && strcmp(s, "--check") == 0) {
            check = argv[++a];
        } else if (has && strcmp(s, "--name") == 0) {
            name = argv[++a];
        } else if (s[0] != '-' && path == NULL) {
            path = s;
        } else {
            fprintf(stderr, "spmm_graphblas: unknown option or missing value: '%s'\n", s);
            path = NULL;
            break;
        }
    }
    int is_float = strcmp(type, "float") == 0;
    int accum = strcmp(mode, "accum") == 0;
    if (path == NULL || (!is_float && strcmp(type, "double") != 0) ||
        (!accum && strcmp(mode, "new") != 0)) {
        fprintf(stderr, "usage: spmm_graphblas FILE.csr [--k K] [--type float|double] "
                        "[--mode new|accum]\n"
                        "                      [--threads N] [--repeat R] [--warmup W] "
                        "[--min-time S] [--check FILE] [--name NAME]\n");
        return 2;
    }
    if (name == NULL) name = path;

    int rc = 1;
    raw_csr R;
    GrB_Matrix A = NULL, B = NULL, C = NULL;
    GrB_Vector w = NULL, u = NULL, y = NULL, z = NULL;
    GrB_Type T = is_float ? GrB_FP32 : GrB_FP64;
    GrB_Semiring sr = is_float ? GrB_PLUS_TIMES_SEMIRING_FP32 : GrB_PLUS_TIMES_SEMIRING_FP64;
    GrB_BinaryOp plus = is_float ? GrB_PLUS_FP32 : GrB_PLUS_FP64;
    size_t wsz = is_float ? sizeof(float) : sizeof(double);
    void *bx = NULL;
    GrB_Index *idx = NULL;
    double *vals = NULL, *yv = NULL, *zv = NULL;
    double *t = NULL;
    if (!raw_read(path, &R, is_float)) {
        raw_free(&R);
        return 1;
    }
    GrB_Index m = (GrB_Index)R.nrows, n = (GrB_Index)R.ncols, kk = (GrB_Index)k;

    GB_TRY(GrB_init(GrB_NONBLOCKING));
    GB_TRY(GxB_set(GxB_NTHREADS, (int)threads));
    GB_TRY(GxB_set(GxB_BURBLE, false));
    if (is_float) {
        GB_TRY(GrB_Matrix_import_FP32(&A, T, m, n, R.rowptr, R.colidx, (float *)R.val, m + 1,
                                      (GrB_Index)R.nnz, (GrB_Index)R.nnz, GrB_CSR_FORMAT));
    } else {
        GB_TRY(GrB_Matrix_import_FP64(&A, T, m, n, R.rowptr, R.colidx, R.val, m + 1,
                                      (GrB_Index)R.nnz, (GrB_Index)R.nnz, GrB_CSR_FORMAT));
    }
    GB_TRY(GrB_wait(A, GrB_MATERIALIZE));
    GrB_Index nnz_a = (GrB_Index)R.nnz;
    raw_free(&R); // the import copied the arrays

    // B: full, held by row, the same values as every other system's.
    GrB_Index bsize = 0;
    bx = dense_zeros(n, kk, wsz, &bsize);
    if (bx == NULL) {
        fprintf(stderr, "spmm_graphblas: no memory for B (%llu x %llu)\n", (unsigned long long)n,
                (unsigned long long)kk);
        goto done;
    }
    for (GrB_Index i = 0; i < n; i++) {
        for (GrB_Index j = 0; j < kk; j++) {
            double b = bench_spmm_b(i, j);
            if (is_float) {
                ((float *)bx)[i * kk + j] = (float)b;
            } else {
                ((double *)bx)[i * kk + j] = b;
            }
        }
    }
    GB_TRY(GrB_Matrix_new(&B, T, n, kk));
    GB_TRY(GxB_Matrix_pack_FullR(B, &bx, bsize, false, NULL)); // B now owns the array
    GB_TRY(GrB_wait(B, GrB_MATERIALIZE));

    if (accum) {
        GrB_Index csize = 0;
        void *cx = dense_zeros(m, kk, wsz, &csize);
        if (cx == NULL) {
            fprintf(stderr, "spmm_graphblas: no memory for C (%llu x %llu)\n",
                    (unsigned long long)m, (unsigned long long)kk);
            goto done;
        }
        GB_TRY(GrB_Matrix_new(&C, T, m, kk));
        GrB_Info pinfo = GxB_Matrix_pack_FullR(C, &cx, csize, false, NULL);
        if (pinfo != GrB_SUCCESS) free(cx);
        GB_TRY(pinfo);
    }
    double one = 0.0; // the last warm-up's seconds
    for (int r = -(int)warmup; r < (int)reps; r++) {
        if (r == 0) { // warm-ups done: the timed runs' count, then their array
            reps = bench_repeats((int)reps, min_time, one);
            t = malloc((size_t)reps * sizeof *t);
            if (t == NULL) {
                fprintf(stderr, "spmm_graphblas: no memory for %lld timings\n", reps);
                goto done;
            }
        }
        if (accum) {
            GB_TRY(full_zero(C));
            GB_TRY(GrB_wait(C, GrB_MATERIALIZE));
        } else {
            if (C) GrB_Matrix_free(&C);
            GB_TRY(GrB_Matrix_new(&C, T, m, kk));
        }
        double t0 = bench_now();
        GB_TRY(GrB_mxm(C, NULL, accum ? plus : NULL, sr, A, B, NULL));
        GB_TRY(GrB_wait(C, GrB_MATERIALIZE));
        if (r >= 0) {
            t[r] = bench_now() - t0;
        } else {
            one = bench_now() - t0;
        }
    }
    int sparsity = 0;
    GB_TRY(GxB_Matrix_Option_get(C, GxB_SPARSITY_STATUS, &sparsity));

    // The check of the last result: y = C w, z = C^T u in FP64 (C's values cast up); entries
    // GraphBLAS left out of C (empty rows of A in mode new) count as 0.
    idx = malloc(((m > kk ? m : kk) + 1) * sizeof *idx);
    vals = malloc(((m > kk ? m : kk) + 1) * sizeof *vals);
    yv = calloc(m + 1, sizeof *yv);
    zv = calloc(kk + 1, sizeof *zv);
    if (idx == NULL || vals == NULL || yv == NULL || zv == NULL) {
        fprintf(stderr, "spmm_graphblas: no memory for the check\n");
        goto done;
    }
    GB_TRY(GrB_Vector_new(&w, GrB_FP64, kk));
    for (GrB_Index j = 0; j < kk; j++) {
        idx[j] = j;
        vals[j] = bench_check_x(j);
    }
    GB_TRY(GrB_Vector_build_FP64(w, idx, vals, kk, GrB_PLUS_FP64));
    GB_TRY(GrB_Vector_new(&u, GrB_FP64, m));
    for (GrB_Index i = 0; i < m; i++) {
        idx[i] = i;
        vals[i] = bench_check_x(i);
    }
    GB_TRY(GrB_Vector_build_FP64(u, idx, vals, m, GrB_PLUS_FP64));
    GB_TRY(GrB_Vector_new(&y, GrB_FP64, m));
    GB_TRY(GrB_Vector_new(&z, GrB_FP64, kk));
    GB_TRY(GrB_mxv(y, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, C, w, NULL));
    GB_TRY(GrB_vxm(z, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, u, C, NULL));
    GrB_Index ny = m, nz = kk;
    GB_TRY(GrB_Vector_extractTuples_FP64(idx, vals, &ny, y));
    for (GrB_Index p = 0; p < ny; p++) yv[idx[p]] = vals[p];
    GB_TRY(GrB_Vector_extractTuples_FP64(idx, vals, &nz, z));
    for (GrB_Index p = 0; p < nz; p++) zv[idx[p]] = vals[p];
    if (check && !bench_spmm_check_write("spmm_graphblas", check, (int64_t)m, (int64_t)kk, yv, zv))
        goto done;

    char times[4096];
    size_t len = 0;
    times[0] = '\0';
    for (int r = 0; r < (int)reps && r < 64 && len + 32 < sizeof times; r++) { // the first 64
        len += (size_t)snprintf(times + len, sizeof times - len, "%s%.6g", r ? "," : "", t[r]);
    }
    int nth = 0;
    GB_TRY(GxB_get(GxB_NTHREADS, &nth));
    int ver[3] = {0, 0, 0};
    GB_TRY(GxB_get(GxB_LIBRARY_VERSION, ver));
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    double med = bench_median(t, (int)reps);
    double flops = 2.0 * (double)nnz_a * (double)kk;
    printf("{\"bench\":\"spmm\",\"system\":\"graphblas\",\"mode\":\"%s\",\"name\":\"%s\","
           "\"version\":\"%d.%d.%d\",\"machine\":\"%s\",\"ranks\":1,\"threads\":%d,"
           "\"algorithm\":\"%s\",\"m\":%llu,\"n\":%llu,\"nnz\":%llu,\"k\":%llu,"
           "\"type\":\"%s\",\"c_format\":\"%s\",\"repeats\":%d,\"median_s\":%.6g,"
           "\"min_s\":%.6g,\"times\":[%s],\"gflops\":%.6g,\"peak_rss_kb\":%ld}\n",
           mode, name, ver[0], ver[1], ver[2], host, nth,
           accum ? "GrB_mxm C += A*B, C full" : "GrB_mxm into a new C", (unsigned long long)m,
           (unsigned long long)n, (unsigned long long)nnz_a, (unsigned long long)kk, type,
           sparsity_name(sparsity), (int)reps, med, t[0], times, med > 0 ? flops / med / 1e9 : 0.0,
           bench_peak_rss_kb());
    rc = 0;
done:
    if (A) GrB_Matrix_free(&A);
    if (B) GrB_Matrix_free(&B);
    if (C) GrB_Matrix_free(&C);
    if (w) GrB_Vector_free(&w);
    if (u) GrB_Vector_free(&u);
    if (y) GrB_Vector_free(&y);
    if (z) GrB_Vector_free(&z);
    GrB_finalize();
    raw_free(&R);
    free(bx); // NULL once B owns it
    free(t);
    free(idx);
    free(vals);
    free(yv);
    free(zv);
    return rc;
}
