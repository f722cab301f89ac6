// bench/dist_petsc.c: the PETSc side of bench/dist.sh: distributed C = A * A (SpGEMM) and
// C = A * B with B dense n x k (SpMM) on P MPI ranks, A an MPIAIJ matrix in PETSc's default
// layout (1D: contiguous blocks of rows, PetscSplitOwnership), B and C MPIDENSE with the same
// row blocks. Both products are MatMatMult(..., MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C), so C's
// allocation (and for SpGEMM the symbolic phase) is inside the clock, as in dsmm's product.
//
// Input: a raw CSR file (bench_spgemm INPUT --export FILE --no-run writes it from Matrix Market,
// abc, edge lists, .gz or R-MAT; format in bench/bench_spgemm.c). Each rank reads only its own
// rows from it (no rank holds the whole matrix). B(i, j) = bench_spmm_b(i, j) as in
// bench/spmm.sh. Each timing: MPI_Barrier, the call, the maximum over ranks; the median of
// --repeat runs after --warmup warm-ups.
//
// Check values: nnz_out (global stored entries of C: for SpGEMM the structural count, as PETSc
// keeps cancelled entries; for SpMM n * k) and check_sum = the sum of all entries of C
// (C * ones, VecSum). For a pattern A multiplied as ones, check_sum of A * A is the number of
// paths of length 2, i.e. the flops (multiply-adds) of the product.
//
// Usage: mpirun -n P dist_petsc FILE.csr [--ops spgemm,spmm] [--k 128] [--repeat R]
//                                [--warmup W] [--reuse] [--name NAME] [-- PETSC_OPTIONS...]
// --reuse also times MatMatMult(..., MAT_REUSE_MATRIX) (the numeric phase into the known C) and
// reports it as reuse_seconds. One JSON line per op on rank 0 (stdout); messages on stderr.
// As root, Open MPI wants --allow-run-as-root (or OMPI_ALLOW_RUN_AS_ROOT=1 and
// OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
#define _DEFAULT_SOURCE // getrusage, gethostname, fseeko beside _POSIX_C_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <petscmat.h>

#include "bench_common.h"

#define PROG "dist_petsc"

typedef struct run_opts {
    const char *path, *name;
    int reps, warmup, k, do_spgemm, do_spmm, reuse;
} run_opts;

// This rank's rows [r0, r0 + m) of a raw CSR file, row pointers from 0, global columns.
typedef struct local_rows {
    PetscInt n, ncols, nnz_global, r0, m;
    int pattern;
    PetscInt *rowptr, *colidx;
    PetscScalar *val;
} local_rows;

// Reads rows [r0, r0 + m) (m = PETSC_DECIDE share of this rank). 1 on success; prints why not.
static int read_local(MPI_Comm comm, const char *path, local_rows *L)
{
    memset(L, 0, sizeof *L);
    int64_t h[5];
    FILE *f = bench_raw_open(PROG, path, h);
    if (f == NULL) return 0;
    int ok = 0;
    int64_t *tmp = NULL;
    if (h[0] > PETSC_MAX_INT || h[1] > PETSC_MAX_INT || h[2] > PETSC_MAX_INT) {
        fprintf(stderr, "%s: %s: sizes exceed PetscInt (%d-bit)\n", PROG, path,
                (int)(8 * sizeof(PetscInt)));
        goto done;
    }
    L->n = (PetscInt)h[0];
    L->ncols = (PetscInt)h[1];
    L->nnz_global = (PetscInt)h[2];
    L->pattern = (int)(h[4] & 1);
    PetscInt m = PETSC_DECIDE, n = L->n;
    if (PetscSplitOwnership(comm, &m, &n) != 0) goto done;
    PetscInt rend = 0;
    if (MPI_Scan(&m, &rend, 1, MPIU_INT, MPI_SUM, comm) != MPI_SUCCESS) goto done;
    L->m = m;
    L->r0 = rend - m;

    const off_t hdr = 48, rp0 = hdr + 8 * (off_t)L->r0;
    const off_t cols = hdr + 8 * ((off_t)h[0] + 1), vals = cols + (off_t)h[3] * (off_t)h[2];
    size_t mm = (size_t)m;
    L->rowptr = malloc((mm + 1) * sizeof *L->rowptr);
    tmp = malloc((mm + 1) * sizeof *tmp);
    if (L->rowptr == NULL || tmp == NULL) goto nomem;
    if (fseeko(f, rp0, SEEK_SET) != 0 || fread(tmp, 8, mm + 1, f) != mm + 1) goto bad;
    int64_t k0 = tmp[0], cnt = tmp[mm] - tmp[0];
    if (k0 < 0 || cnt < 0 || k0 + cnt > h[2]) goto bad;
    for (size_t i = 0; i <= mm; i++) L->rowptr[i] = (PetscInt)(tmp[i] - k0);
    free(tmp);
    tmp = NULL;
    size_t c = (size_t)cnt;
    L->colidx = malloc((c + 1) * sizeof *L->colidx);
    L->val = malloc((c + 1) * sizeof *L->val);
    tmp = malloc((c + 1) * sizeof *tmp);
    if (L->colidx == NULL || L->val == NULL || tmp == NULL) goto nomem;
    if (fseeko(f, cols + (off_t)h[3] * (off_t)k0, SEEK_SET) != 0) goto bad;
    if (h[3] == 4) {
        int32_t *c32 = (int32_t *)tmp;
        if (fread(c32, 4, c, f) != c) goto bad;
        for (size_t q = 0; q < c; q++) L->colidx[q] = (PetscInt)c32[q];
    } else {
        if (fread(tmp, 8, c, f) != c) goto bad;
        for (size_t q = 0; q < c; q++) L->colidx[q] = (PetscInt)tmp[q];
    }
    double *dv = (double *)tmp;
    if (fseeko(f, vals + 8 * (off_t)k0, SEEK_SET) != 0 || fread(dv, 8, c, f) != c) goto bad;
    for (size_t q = 0; q < c; q++) L->val[q] = (PetscScalar)dv[q];
    ok = 1;
    goto done;
nomem:
    fprintf(stderr, "%s: out of memory reading rows %lld.. of %s\n", PROG, (long long)L->r0, path);
    goto done;
bad:
    fprintf(stderr, "%s: %s: truncated or inconsistent raw CSR file\n", PROG, path);
done:
    free(tmp);
    fclose(f);
    return ok;
}

// Frees the arrays and keeps the sizes (they go into the JSON lines).
static void local_free_arrays(local_rows *L)
{
    free(L->rowptr);
    free(L->colidx);
    free(L->val);
    L->rowptr = L->colidx = NULL;
    L->val = NULL;
}

// nnz(C) over all ranks and the sum of all entries of C.
static PetscErrorCode check_values(Mat C, double *nnz, double *sum)
{
    MatInfo info;
    Vec x = NULL, y = NULL;
    PetscScalar s = 0.0;

    PetscFunctionBeginUser;
    PetscCall(MatGetInfo(C, MAT_GLOBAL_SUM, &info));
    *nnz = (double)info.nz_used;
    PetscCall(MatCreateVecs(C, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(C, x, y));
    PetscCall(VecSum(y, &s));
    *sum = (double)PetscRealPart(s);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscFunctionReturn(0);
}

// The slowest rank's time of one call; every rank gets it.
static double max_over_ranks(MPI_Comm comm, double t)
{
    double tmax = t;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return tmax;
}

typedef struct op_result {
    double median, min, reuse_median, nnz, sum;
} op_result;

// Times MatMatMult(A, X) (X = A for SpGEMM, the dense B for SpMM): warm-ups, then the timed
// repeats; the check values come from the last C.
static PetscErrorCode time_product(MPI_Comm comm, const run_opts *o, Mat A, Mat X, double *t,
                                   op_result *r)
{
    Mat C = NULL;

    PetscFunctionBeginUser;
    for (int w = 0; w < o->warmup; w++) {
        PetscCall(MatDestroy(&C));
        PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
    }
    for (int i = 0; i < o->reps; i++) {
        PetscCall(MatDestroy(&C));
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
        t[i] = max_over_ranks(comm, MPI_Wtime() - t0);
    }
    r->median = bench_median(t, o->reps);
    r->min = t[0];
    r->reuse_median = -1.0;
    if (o->reuse) {
        for (int w = 0; w < o->warmup; w++)
            PetscCall(MatMatMult(A, X, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
        for (int i = 0; i < o->reps; i++) {
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            PetscCall(MatMatMult(A, X, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
            t[i] = max_over_ranks(comm, MPI_Wtime() - t0);
        }
        r->reuse_median = bench_median(t, o->reps);
    }
    PetscCall(check_values(C, &r->nnz, &r->sum));
    PetscCall(MatDestroy(&C));
    PetscFunctionReturn(0);
}

static void print_line(const run_opts *o, const char *op, int size, const local_rows *L,
                       const op_result *r, double setup_s, long rss_kb)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++) {
        if (*p == '"' || *p == '\\') *p = '_';
    }
    char kbuf[32], reuse[64] = "";
    if (strcmp(op, "spmm") == 0) {
        snprintf(kbuf, sizeof kbuf, "%d", o->k);
    } else {
        snprintf(kbuf, sizeof kbuf, "null");
    }
    if (r->reuse_median >= 0.0)
        snprintf(reuse, sizeof reuse, ",\"reuse_seconds\":%.6g", r->reuse_median);
    printf("{\"bench\":\"dist\",\"system\":\"petsc\",\"op\":\"%s\",\"matrix\":\"%s\","
           "\"ranks\":%d,\"k\":%s,\"seconds\":%.6g,\"min_s\":%.6g%s,\"nnz_out\":%.0f,"
           "\"check_sum\":%.17g,\"repeats\":%d,\"warmup\":%d,\"host\":\"%s\","
           "\"version\":\"%d.%d.%d\",\"layout\":\"1D rows %dx1\",\"format\":\"MPIAIJ%s\","
           "\"algorithm\":\"MatMatMult default\",\"petsc_int_bits\":%d,\"n\":%lld,"
           "\"nnz_a\":%lld,\"pattern\":%d,\"setup_s\":%.6g,\"peak_rss_kb_max\":%ld}\n",
           op, o->name, size, kbuf, r->median, r->min, reuse, r->nnz, r->sum, o->reps, o->warmup,
           host, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, size,
           strcmp(op, "spmm") == 0 ? " x MPIDENSE" : "", (int)(8 * sizeof(PetscInt)),
           (long long)L->n, (long long)L->nnz_global, L->pattern, setup_s, rss_kb);
    fflush(stdout);
}

static PetscErrorCode run(const run_opts *o, int *rc)
{
    MPI_Comm comm = PETSC_COMM_WORLD;
    Mat A = NULL, B = NULL;
    double *t = NULL;
    local_rows L = {0};
    int rank = 0, size = 1;

    PetscFunctionBeginUser;
    *rc = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    int ok = read_local(comm, o->path, &L), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        if (rank == 0) fprintf(stderr, "%s: reading %s failed\n", PROG, o->path);
        goto done;
    }
    if (L.n != L.ncols) {
        if (rank == 0) fprintf(stderr, "%s: %s is not square\n", PROG, o->path);
        goto done;
    }
    // Column layout PETSC_DECIDE splits the columns like the rows (square A), so the dense B
    // and C below get the same row blocks as A.
    PetscCall(MatCreateMPIAIJWithArrays(comm, L.m, PETSC_DECIDE, L.n, L.ncols, L.rowptr, L.colidx,
                                        L.val, &A));
    local_free_arrays(&L); // PETSc copied them
    PetscInt n = 0;
    PetscCall(MatGetSize(A, &n, NULL));
    double setup_s = max_over_ranks(comm, MPI_Wtime() - t0);
    PetscCall(PetscMalloc1(o->reps, &t));

    if (o->do_spgemm) {
        op_result r;
        PetscCall(time_product(comm, o, A, A, t, &r));
        long rss = bench_peak_rss_kb(), rss_max = rss;
        MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, comm);
        if (rank == 0) print_line(o, "spgemm", size, &L, &r, setup_s, rss_max);
    }
    if (o->do_spmm) {
        PetscInt mloc = 0, r0 = 0;
        PetscCall(MatGetLocalSize(A, NULL, &mloc)); // B's rows follow A's columns
        PetscCall(MatCreateDense(comm, mloc, PETSC_DECIDE, n, o->k, NULL, &B));
        PetscCall(MatGetOwnershipRange(B, &r0, NULL));
        PetscScalar *b = NULL;
        PetscInt lda = 0;
        PetscCall(MatDenseGetLDA(B, &lda));
        PetscCall(MatDenseGetArrayWrite(B, &b));
        for (PetscInt j = 0; j < o->k; j++) {
            for (PetscInt i = 0; i < mloc; i++)
                b[j * lda + i] = bench_spmm_b((uint64_t)(r0 + i), (uint64_t)j);
        }
        PetscCall(MatDenseRestoreArrayWrite(B, &b));
        PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
        op_result r;
        PetscCall(time_product(comm, o, A, B, t, &r));
        long rss = bench_peak_rss_kb(), rss_max = rss;
        MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, comm);
        if (rank == 0) print_line(o, "spmm", size, &L, &r, setup_s, rss_max);
    }
    *rc = 0;
done:
    local_free_arrays(&L);
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
    PetscCall(PetscFree(t));
    PetscFunctionReturn(0);
}

static int parse_ops(const char *s, run_opts *o)
{
    o->do_spgemm = o->do_spmm = 0;
    char buf[64];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) return 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "spgemm") == 0) {
            o->do_spgemm = 1;
        } else if (strcmp(w, "spmm") == 0) {
            o->do_spmm = 1;
        } else {
            return 0;
        }
    }
    return o->do_spgemm || o->do_spmm;
}

int main(int argc, char **argv)
{
    run_opts o = {.reps = 5, .warmup = 1, .k = 128, .do_spgemm = 1, .do_spmm = 1};
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
        } else if (has && strcmp(a, "--k") == 0) {
            o.k = atoi(argv[++k]);
        } else if (has && strcmp(a, "--ops") == 0) {
            bad |= !parse_ops(argv[++k], &o);
        } else if (has && strcmp(a, "--name") == 0) {
            o.name = argv[++k];
        } else if (strcmp(a, "--reuse") == 0) {
            o.reuse = 1;
        } else if (a[0] != '-' && o.path == NULL) {
            o.path = a;
        } else {
            bad = 1;
        }
    }
    if (bad || o.path == NULL || o.reps < 1 || o.warmup < 0 || o.k < 1) {
        fprintf(stderr,
                "usage: %s FILE.csr [--ops spgemm,spmm] [--k 128] [--repeat R] "
                "[--warmup W] [--reuse] [--name NAME] [-- PETSC_OPTIONS...]\n",
                PROG);
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

    int rc = 1;
    char **pa = pargv;
    PetscErrorCode ierr = PetscInitialize(&pargc, &pa, NULL, NULL);
    if (ierr) {
        fprintf(stderr, "%s: PetscInitialize failed (%d)\n", PROG, (int)ierr);
    } else {
        ierr = run(&o, &rc);
        if (ierr) rc = 1;
        if (PetscFinalize()) rc = 1;
    }
    free(pargv);
    return rc;
}
