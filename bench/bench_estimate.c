// bench/bench_estimate.c: nnz(A * A) by Cohen's estimator (dsmm_spgemm_estimate, r = 4, 8, 16
// keys) against the exact symbolic count (keys = 0): median times, speedup and relative error.
// One JSON line per (matrix, r), then a summary line: the median relative error at r = 16 over
// the matrices and the speedup on those with cf >= 4 (issue 3's targets: <= 5 %, >= 3x).
// abc files (mcl label triples, edge lists) are symmetrised, A + A^T, as mcl does; Matrix
// Market files are used as read. Files that are absent are skipped.
// Usage: bench_estimate [--threads N] [--repeat N] [--seed S] FILE...
// Issue 3's set, with D=../shared/data (the mcl folder's cluster and node lists are not
// networks, so they are left out):
//   $D/graphs/* $D/matrices/*.mtx.gz $D/mcl/STRING_PPI.edgelist.gz $D/mcl/hep-th.mtx.gz
//   $(ls $D/mcl/*.txt.gz | grep -v -e node_list -e clusters -e ground -e complexes)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

#ifndef DSMM_BENCH_BUILD
#define DSMM_BENCH_BUILD "unknown"
#endif

#define NKEYS 3
static const int key_counts[NKEYS] = {4, 8, 16};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

// S = pattern of A + A^T (values dropped: the estimate reads the pattern only).
static dsmm_status symmetrise(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **S)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *T = NULL;
    dsmm_coo *C = NULL;
    *S = NULL;
    DSMM_TRY(dsmm_csr_transpose(ctx, A, &T));
    DSMM_TRY(dsmm_coo_create(ctx, A->nrows, A->ncols, A->nnz + T->nnz, DSMM_PATTERN, &C));
    for (int pass = 0; pass < 2; pass++) {
        const dsmm_csr *M = pass ? T : A;
        for (dsmm_idx i = 0; i < M->nrows; i++)
            for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++)
                DSMM_TRY(dsmm_coo_push(C, i, dsmm_csr_col(M, k), 1.0));
    }
    DSMM_TRY(dsmm_coo_to_csr(ctx, C, DSMM_DUP_SUM, S));
cleanup:
    dsmm_csr_destroy(&T);
    dsmm_coo_destroy(&C);
    return st;
}

// The exact count: keys = 0 when the fast symbolic count is built in, else the symbolic phase
// of the SpGEMM (plus-pair, pattern output), which also forms the pattern.
static dsmm_status exact_once(dsmm_ctx *ctx, const dsmm_csr *A, int *method, double *nnz,
                              double *flops)
{
    dsmm_spgemm_estimate_result res;
    dsmm_status st = dsmm_spgemm_estimate(ctx, A, A, 0, 0, NULL, &res);
    if (st == DSMM_OK) {
        *method = 0;
        *nnz = res.nnz;
        *flops = res.flops;
        return st;
    }
    if (st != DSMM_ERR_UNSUPPORTED) return st;
    dsmm_ctx_clear_error(ctx);
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.semiring = DSMM_PLUS_PAIR;
    o.type = DSMM_PATTERN;
    o.unsorted = 1;
    dsmm_csr *C = NULL;
    dsmm_spgemm_info info;
    st = dsmm_csr_spgemm_symbolic(ctx, A, A, &o, &C, &info);
    if (st == DSMM_OK) {
        *method = 1;
        *nnz = (double)C->nnz;
        *flops = info.flops;
    }
    dsmm_csr_destroy(&C);
    return st;
}

int main(int argc, char **argv)
{
    int threads = 0, repeat = 5, nfiles = 0, rc = 0;
    uint64_t seed = 1;
    const char **files = calloc((size_t)argc, sizeof *files);
    if (files == NULL) return 1;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc) {
            threads = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
            repeat = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--seed") == 0 && a + 1 < argc) {
            seed = strtoull(argv[++a], NULL, 0);
        } else if (argv[a][0] == '-') {
            fprintf(stderr,
                    "usage: bench_estimate [--threads N] [--repeat N] [--seed S] FILE...\n");
            return 2;
        } else {
            files[nfiles++] = argv[a];
        }
    }
    if (repeat < 1) repeat = 1;
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return 1;
    dsmm_ctx_set_progress(ctx, 0);
    if (dsmm_ctx_set_threads(ctx, threads) != DSMM_OK) return 2;
    threads = dsmm_ctx_threads(ctx);
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';

    double *t = malloc((size_t)repeat * sizeof *t), *e = malloc((size_t)repeat * sizeof *e);
    double *err16 = calloc((size_t)nfiles + 1, sizeof *err16);
    double *spd[NKEYS];
    for (int q = 0; q < NKEYS; q++) spd[q] = calloc((size_t)nfiles + 1, sizeof *spd[q]);
    int n16 = 0, nspd = 0;
    if (t == NULL || e == NULL || err16 == NULL) return 1;

    for (int f = 0; f < nfiles && rc == 0; f++) {
        const char *path = files[f];
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "bench_estimate: skipping %s (absent)\n", path);
            continue;
        }
        dsmm_csr *R = NULL, *A = NULL;
        dsmm_file_info fi;
        dsmm_read_opts ro;
        dsmm_read_opts_init(&ro);
        ro.dup = DSMM_DUP_MAX;
        if (dsmm_read(ctx, path, &ro, &R, NULL, &fi) != DSMM_OK) {
            fprintf(stderr, "bench_estimate: skipping %s: %s\n", path, dsmm_ctx_last_error(ctx));
            dsmm_ctx_clear_error(ctx);
            continue;
        }
        int sym = fi.format == DSMM_FORMAT_ABC && R->nrows == R->ncols;
        if (sym) {
            if (symmetrise(ctx, R, &A) != DSMM_OK) {
                fprintf(stderr, "bench_estimate: %s\n", dsmm_ctx_last_error(ctx));
                rc = 1;
            }
            dsmm_csr_destroy(&R);
        } else {
            A = R;
        }
        if (rc) break;
        if (A->nrows != A->ncols) {
            fprintf(stderr, "bench_estimate: skipping %s (not square)\n", path);
            dsmm_csr_destroy(&A);
            continue;
        }

        int method = 0;
        double nnz = 0, flops = 0;
        for (int k = 0; k < repeat + 1 && rc == 0; k++) { // one warm-up run
            double t0 = dsmmi_wtime();
            if (exact_once(ctx, A, &method, &nnz, &flops) != DSMM_OK) {
                fprintf(stderr, "bench_estimate: %s: %s\n", path, dsmm_ctx_last_error(ctx));
                rc = 1;
            }
            if (k > 0) t[k - 1] = dsmmi_wtime() - t0;
        }
        if (rc) break;
        double exact_s = median(t, repeat), cf = nnz > 0 ? flops / nnz : 0.0;

        for (int q = 0; q < NKEYS && rc == 0; q++) {
            int r = key_counts[q];
            double first_err = 0, first_nnz = 0, expected = 0;
            for (int k = 0; k < repeat + 1 && rc == 0; k++) {
                dsmm_spgemm_estimate_result res;
                // Each repetition draws new keys, so the errors sample the estimator's spread.
                uint64_t s = seed + (uint64_t)(k > 0 ? k - 1 : 0);
                double t0 = dsmmi_wtime();
                if (dsmm_spgemm_estimate(ctx, A, A, r, s, NULL, &res) != DSMM_OK) {
                    fprintf(stderr, "bench_estimate: %s: %s\n", path, dsmm_ctx_last_error(ctx));
                    rc = 1;
                    break;
                }
                if (k == 0) continue;
                t[k - 1] = dsmmi_wtime() - t0;
                e[k - 1] = nnz > 0 ? fabs(res.nnz / nnz - 1.0) : 0.0;
                expected += res.rel_err / repeat;
                if (k == 1) {
                    first_nnz = res.nnz;
                    first_err = nnz > 0 ? res.nnz / nnz - 1.0 : 0.0;
                }
            }
            if (rc) break;
            double est_s = median(t, repeat), med_err = median(e, repeat);
            double speedup = est_s > 0 ? exact_s / est_s : 0.0;
            if (r == 16) err16[n16++] = med_err;
            if (cf >= 4.0) spd[q][nspd] = speedup;
            printf("{\"bench\":\"estimate\",\"build\":\"%s\",\"machine\":\"%s\",\"matrix\":\"%s\","
                   "\"symmetrised\":%d,\"n\":%lld,"
                   "\"nnz_a\":%lld,\"flops\":%.0f,\"nnz_c\":%.0f,\"cf\":%.3f,\"threads\":%d,"
                   "\"repeat\":%d,\"exact\":\"%s\",\"exact_s\":%.6f,\"keys\":%d,\"est_s\":%.6f,"
                   "\"speedup\":%.2f,\"est_nnz\":%.0f,\"err\":%.5f,\"median_abs_err\":%.5f,"
                   "\"rel_err_expected\":%.5f}\n",
                   DSMM_BENCH_BUILD, host, base_name(path), sym, (long long)A->nrows,
                   (long long)A->nnz, flops, nnz, cf, threads, repeat,
                   method == 0 ? "count" : "symbolic", exact_s, r, est_s, speedup, first_nnz,
                   first_err, med_err, expected);
            fflush(stdout);
        }
        if (cf >= 4.0) nspd++;
        dsmm_csr_destroy(&A);
    }
    if (rc == 0) {
        printf("{\"bench\":\"estimate_summary\",\"build\":\"%s\",\"machine\":\"%s\",\"threads\":%d,"
               "\"repeat\":%d,\"matrices\":%d,"
               "\"median_err_r16\":%.5f,\"cf_ge_4\":%d",
               DSMM_BENCH_BUILD, host, threads, repeat, n16, n16 ? median(err16, n16) : 0.0, nspd);
        for (int q = 0; q < NKEYS; q++) {
            double lg = 0.0, mn = INFINITY;
            for (int k = 0; k < nspd; k++) {
                lg += log(spd[q][k]);
                mn = spd[q][k] < mn ? spd[q][k] : mn;
            }
            printf(",\"speedup_cf_ge_4_r%d_geomean\":%.2f,\"speedup_cf_ge_4_r%d_min\":%.2f",
                   key_counts[q], nspd ? exp(lg / nspd) : 0.0, key_counts[q], nspd ? mn : 0.0);
        }
        printf("}\n");
    }
    for (int q = 0; q < NKEYS; q++) free(spd[q]);
    free(err16);
    free(t);
    free(e);
    free(files);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
