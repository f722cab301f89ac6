// bench/spgemm_petsc.c: the PETSc side of bench/spgemm.sh: C = A * A on a raw CSR file
// (format in bench/bench_spgemm.c) as a SeqAIJ matrix, one process: MatMatMult with
// MAT_INITIAL_MATRIX (the full product) and then MAT_REUSE_MATRIX (the numeric phase on the
// known pattern), each timed after a warm-up; writes the check file (nnz(C), y = C x).
// Usage: spgemm_petsc FILE.csr [--repeat R] [--warmup W] [--min-time S] [--check FILE]
//                     [--name NAME]
//                     [-- PETSC_OPTIONS...]   (e.g. -- -matmatmult_via heap)
// As root, Open MPI wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
#define _DEFAULT_SOURCE // getrusage, gethostname beside _POSIX_C_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <petscmat.h>

#include "bench_common.h"

// The raw CSR file with PetscInt row pointers and columns (they must fit PetscInt).
typedef struct raw_csr {
    PetscInt nrows, ncols, nnz;
    PetscInt *rowptr, *colidx;
    PetscScalar *val;
} raw_csr;

static int raw_read(const char *path, raw_csr *A)
{
    memset(A, 0, sizeof *A);
    int64_t h[5];
    int64_t *tmp = NULL;
    FILE *f = bench_raw_open("spgemm_petsc", path, h);
    if (f == NULL) return 0;
    if (h[0] > PETSC_MAX_INT || h[1] > PETSC_MAX_INT || h[2] > PETSC_MAX_INT) {
        fprintf(stderr, "spgemm_petsc: %s: sizes exceed PetscInt (%d-bit)\n", path,
                (int)(8 * sizeof(PetscInt)));
        fclose(f);
        return 0;
    }
    size_t n = (size_t)h[0], nnz = (size_t)h[2];
    A->nrows = (PetscInt)h[0];
    A->ncols = (PetscInt)h[1];
    A->nnz = (PetscInt)h[2];
    tmp = malloc((n > nnz ? n : nnz) * sizeof *tmp + 8);
    A->rowptr = malloc((n + 1) * sizeof *A->rowptr);
    A->colidx = malloc((nnz + 1) * sizeof *A->colidx);
    A->val = malloc((nnz + 1) * sizeof *A->val);
    int ok = tmp && A->rowptr && A->colidx && A->val && fread(tmp, 8, n + 1, f) == n + 1;
    for (size_t i = 0; ok && i <= n; i++) A->rowptr[i] = (PetscInt)tmp[i];
    if (ok && h[3] == 4) {
        int32_t *c32 = (int32_t *)tmp;
        ok = fread(c32, 4, nnz, f) == nnz;
        for (size_t k = 0; ok && k < nnz; k++) A->colidx[k] = (PetscInt)c32[k];
    } else if (ok) {
        ok = fread(tmp, 8, nnz, f) == nnz;
        for (size_t k = 0; ok && k < nnz; k++) A->colidx[k] = (PetscInt)tmp[k];
    }
    ok = ok && fread(A->val, sizeof(double), nnz, f) == nnz;
    free(tmp);
    fclose(f);
    if (!ok) fprintf(stderr, "spgemm_petsc: %s: not a raw CSR file or truncated\n", path);
    return ok;
}

static void raw_free(raw_csr *A)
{
    free(A->rowptr);
    free(A->colidx);
    free(A->val);
    memset(A, 0, sizeof *A);
}

// nnz(C), its stored zeros (cancellation) and y = C x for the check vector x.
static PetscErrorCode check_product(Mat C, Vec x, Vec y, PetscInt *nnz, PetscInt *zeros, double *yv)
{
    PetscInt nr = 0;
    const PetscInt *ia = NULL, *ja = NULL;
    PetscBool done = PETSC_FALSE;
    const PetscScalar *ya = NULL, *ca = NULL;

    PetscFunctionBeginUser;
    PetscCall(MatGetRowIJ(C, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRowIJ is not supported");
    *nnz = ia[nr];
    PetscInt m = nr; // MatRestoreRowIJ clears nr
    PetscCall(MatRestoreRowIJ(C, 0, PETSC_FALSE, PETSC_FALSE, &nr, &ia, &ja, &done));
    PetscCall(MatSeqAIJGetArrayRead(C, &ca));
    *zeros = 0;
    for (PetscInt k = 0; k < *nnz; k++) *zeros += ca[k] == 0.0;
    PetscCall(MatSeqAIJRestoreArrayRead(C, &ca));
    PetscCall(MatMult(C, x, y));
    PetscCall(VecGetArrayRead(y, &ya));
    for (PetscInt i = 0; i < m; i++) yv[i] = (double)ya[i];
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscFunctionReturn(0);
}

typedef struct run_opts {
    const char *path, *check, *name;
    int reps, warmup;
    double min_time; // seconds of timed runs at least, per loop (bench_repeats)
} run_opts;

static PetscErrorCode run(const run_opts *o, raw_csr *R, int *rc)
{
    Mat A = NULL, C = NULL;
    Vec x = NULL, y = NULL;
    double *t = NULL, *xv = NULL, *yv = NULL, *y2 = NULL;
    PetscInt n = R->nrows, nnz_c = 0, nnz2 = 0, zeros = 0, zeros2 = 0;

    PetscFunctionBeginUser;
    *rc = 1;
    int reps = o->reps, nreps = o->reps;
    PetscCall(PetscMalloc1(n + 1, &xv));
    PetscCall(PetscMalloc1(n + 1, &yv));
    PetscCall(PetscMalloc1(n + 1, &y2));
    for (PetscInt j = 0; j < n; j++) xv[j] = bench_check_x((uint64_t)j);
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, R->nrows, R->ncols, R->rowptr, R->colidx,
                                        R->val, &A));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, xv, &x));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &y));

    // Full product: warm-up (its result gives the check), then the timed repeats; the last C
    // stays for the reuse runs.
    double one = 0.0; // the last warm-up's seconds
    for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
        PetscCall(MatDestroy(&C));
        double t0 = bench_now();
        PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
        one = bench_now() - t0;
    }
    reps = bench_repeats(o->reps, o->min_time, one);
    PetscCall(PetscMalloc1(reps, &t));
    PetscCall(check_product(C, x, y, &nnz_c, &zeros, yv));
    for (int r = 0; r < reps; r++) {
        PetscCall(MatDestroy(&C));
        double t0 = bench_now();
        PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
        t[r] = bench_now() - t0;
    }
    long rss_full = bench_peak_rss_kb();
    double med = bench_median(t, reps), tmin = t[0];

    // Numeric phase on the known pattern.
    for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
        double t0 = bench_now();
        PetscCall(MatMatMult(A, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
        one = bench_now() - t0;
    }
    nreps = bench_repeats(o->reps, o->min_time, one);
    if (nreps > reps) {
        PetscCall(PetscFree(t));
        PetscCall(PetscMalloc1(nreps, &t));
    }
    for (int r = 0; r < nreps; r++) {
        double t0 = bench_now();
        PetscCall(MatMatMult(A, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
        t[r] = bench_now() - t0;
    }
    double reuse_med = bench_median(t, nreps), reuse_min = t[0];
    PetscCall(check_product(C, x, y, &nnz2, &zeros2, y2));
    double worst = 0.0;
    for (PetscInt i = 0; i < n; i++) {
        double d = fabs(yv[i] - y2[i]), s = fmax(fabs(yv[i]), fabs(y2[i]));
        if (d > 0.0) worst = fmax(worst, s > 0.0 ? d / s : INFINITY);
    }
    if (nnz2 != nnz_c || !(worst <= 1e-12)) {
        fprintf(stderr, "spgemm_petsc: MAT_REUSE_MATRIX differs from MAT_INITIAL_MATRIX\n");
        goto done;
    }
    if (o->check && !bench_check_write("spgemm_petsc", o->check, (int64_t)n, (int64_t)nnz_c,
                                       (int64_t)zeros, yv))
        goto done;
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    printf("{\"bench\":\"spgemm\",\"system\":\"petsc\",\"name\":\"%s\","
           "\"version\":\"%d.%d.%d\",\"machine\":\"%s\",\"ranks\":1,\"threads\":1,"
           "\"algorithm\":\"MatMatMult default\",\"petsc_int_bits\":%d,\"n\":%lld,"
           "\"nnz_a\":%lld,\"nnz_c\":%lld,\"repeats\":%d,\"median_s\":%.6g,\"min_s\":%.6g,"
           "\"reuse_repeats\":%d,\"reuse_median_s\":%.6g,\"reuse_min_s\":%.6g,\"peak_rss_kb\":%ld,"
           "\"peak_rss_full_kb\":%ld}\n",
           o->name, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, host,
           (int)(8 * sizeof(PetscInt)), (long long)n, (long long)R->nnz, (long long)nnz_c, reps,
           med, tmin, nreps, reuse_med, reuse_min, bench_peak_rss_kb(), rss_full);
    fflush(stdout);
    *rc = 0;
done:
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&A));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(PetscFree(t));
    PetscCall(PetscFree(xv));
    PetscCall(PetscFree(yv));
    PetscCall(PetscFree(y2));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    run_opts o = {.reps = 5, .warmup = 1};
    int k = 1, bad = 0;
    for (; k < argc; k++) {
        const char *a = argv[k];
        int has = k + 1 < argc;
        if (strcmp(a, "--") == 0) {
            k++;
            break;
        } else if (has && strcmp(a, "--repeat") == 0) {
            o.reps = atoi(argv[++k]);
        } else if (has && strcmp(a, "--warmup") == 0) {
            o.warmup = atoi(argv[++k]);
        } else if (has && strcmp(a, "--min-time") == 0) {
            if (!bench_parse_min_time("spgemm_petsc", argv[++k], &o.min_time)) bad = 1;
        } else if (has && strcmp(a, "--check") == 0) {
            o.check = argv[++k];
        } else if (has && strcmp(a, "--name") == 0) {
            o.name = argv[++k];
        } else if (a[0] != '-' && o.path == NULL) {
            o.path = a;
        } else {
            bad = 1;
        }
    }
    if (bad || o.path == NULL || o.reps < 1 || o.warmup < 0) {
        fprintf(stderr, "usage: spgemm_petsc FILE.csr [--repeat R] [--warmup W] [--min-time S] "
                        "[--check FILE] [--name NAME] [-- PETSC_OPTIONS...]\n");
        return 2;
    }
    if (o.name == NULL) o.name = o.path;

    // PETSc sees only the program name and what follows "--".
    int pargc = 1 + (argc - k);
    char **pargv = malloc(((size_t)pargc + 1) * sizeof *pargv);
    if (pargv == NULL) return 1;
    pargv[0] = argv[0];
    for (int j = k; j < argc; j++) pargv[1 + j - k] = argv[j];
    pargv[pargc] = NULL;

    raw_csr R;
    if (!raw_read(o.path, &R)) {
        free(pargv);
        return 1;
    }
    if (R.nrows != R.ncols) {
        fprintf(stderr, "spgemm_petsc: %s is not square\n", o.path);
        raw_free(&R);
        free(pargv);
        return 1;
    }
    int rc = 1;
    char **pa = pargv;
    PetscErrorCode ierr = PetscInitialize(&pargc, &pa, NULL, NULL);
    if (ierr) {
        fprintf(stderr, "spgemm_petsc: PetscInitialize failed (%d)\n", (int)ierr);
    } else {
        ierr = run(&o, &R, &rc);
        if (ierr) rc = 1;
        if (PetscFinalize()) rc = 1;
    }
    raw_free(&R);
    free(pargv);
    return rc;
}
