// bench/gpu/bench_gpu.c: dsmm's CUDA kernels against cuSPARSE in one process on one device.
// SpGEMM: C = A * A with --kernel gpu and cusparseSpGEMM (ALG1); SpMM: C = A * B, float, for
// each k, with dsmm's kernels and cusparseSpMM. Both sides get the same inputs through the same
// staging; times are device events around the multiply alone (inputs already on the device),
// after one warm-up, median of --reps. Results are checked to agree (SpGEMM: nnz and values;
// SpMM: max relative difference). One JSON line per run, and a table.
// Usage: bench_gpu [--reps N] [--k 32,128,256] [--rmat S]... [--spgemm-only|--spmm-only]
//                  [--host-plan] [--spread 0|1|2] [--spmm-unroll 0|1|4] [--verbose] FILE...
// --host-plan: dsmm's SpGEMM bins its rows on the host (dsmm_gpu_opts.host_planning), the path
// before 2026-11-25, to compare the call times ("call-copies") with the device's planning.
// --spread: how rows with shared-memory tables hand their products to the threads
// (dsmm_gpu_opts.spgemm_spread: 0 spread evenly, 1 by entry of A, 2 chosen per chunk).
// --spmm-unroll: entries of a row whose loads of B the SpMM kernels put in flight together
// (dsmm_gpu_opts.spmm_unroll: 1, 4, or 0, the default: by k, dsmmi_gpu_spmm_unroll).
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_common.h"
#include "dsmm.h"
#include "gpu/gpu.h"

#ifndef DSMM_BENCH_BUILD
#define DSMM_BENCH_BUILD "?"
#endif

static double geo_sum[4];
static int geo_n[4];

static void geo_add(int which, double ratio)
{
    if (ratio > 0 && isfinite(ratio)) {
        geo_sum[which] += log(ratio);
        geo_n[which]++;
    }
}

// ||X - Y|| / ||Y|| (Frobenius) of two products with one pattern (-1: patterns differ). An
// entry-wise relative difference would flag cancellation (an exact zero against 1e-17), which
// two summation orders legitimately give.
static double spgemm_diff(const dsmm_csr *X, const dsmm_csr *Y)
{
    if (X->nnz != Y->nnz || X->nrows != Y->nrows) return -1;
    double dd = 0, yy = 0;
    for (dsmm_idx i = 0; i <= X->nrows; i++)
        if (X->rowptr[i] != Y->rowptr[i]) return -1;
    for (dsmm_idx k = 0; k < X->nnz; k++) {
        if (dsmm_csr_col(X, k) != dsmm_csr_col(Y, k)) return -1;
        double a = dsmm_csr_value(X, k), b = dsmm_csr_value(Y, k);
        dd += (a - b) * (a - b);
        yy += b * b;
    }
    return yy > 0 ? sqrt(dd / yy) : sqrt(dd);
}

static int bench_spgemm(dsmm_ctx *ctx, const char *name, const dsmm_csr *A, int reps)
{
    dsmm_spgemm_alg algs[2] = {DSMM_SPGEMM_GPU, DSMM_SPGEMM_CUSPARSE};
    double t[2][64], med[2] = {0, 0}, w[2][64], wmed[2] = {0, 0};
    double flops = 0, sym_ms = 0, num_ms = 0;
    size_t mem[2] = {0, 0};
    dsmm_csr *C[2] = {NULL, NULL};
    dsmm_status st[2] = {DSMM_OK, DSMM_OK};
    char err[2][256] = {"", ""};
    dsmm_spgemm_info info;
    for (int s = 0; s < 2; s++) {
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        o.alg = algs[s];
        o.col_bits = 32;
        for (int r = -1; r < reps && st[s] == DSMM_OK; r++) { // r = -1: warm-up
            dsmm_csr_destroy(&C[s]);
            double w0 = bench_now();
            st[s] = dsmm_csr_spgemm_ex(ctx, A, A, &o, &C[s], &info);
            double wall = bench_now() - w0;
            if (st[s] != DSMM_OK) {
                snprintf(err[s], sizeof err[s], "%s", dsmm_ctx_last_error(ctx));
                dsmm_ctx_clear_error(ctx);
                break;
            }
            if (r >= 0) t[s][r] = info.seconds_device;
            if (s == 0) { // dsmm's phases (last run)
                flops = info.flops;
                sym_ms = info.seconds_symbolic * 1e3;
                num_ms = info.seconds_numeric * 1e3;
            }
            // the call less its copies: host-side planning (row flops, bins) and the
            // device work with the host's waits, which device events alone do not see
            if (r >= 0) w[s][r] = wall - info.seconds_transfer;
            if (info.device_bytes > mem[s]) mem[s] = info.device_bytes;
        }
        if (st[s] == DSMM_OK) med[s] = bench_median(t[s], reps);
        if (st[s] == DSMM_OK) wmed[s] = bench_median(w[s], reps);
    }
    double diff = st[0] == DSMM_OK && st[1] == DSMM_OK ? spgemm_diff(C[0], C[1]) : 0;
    double ratio = st[0] == DSMM_OK && st[1] == DSMM_OK && med[0] > 0 ? med[1] / med[0] : 0;
    double mratio = mem[0] > 0 && st[1] == DSMM_OK ? (double)mem[1] / (double)mem[0] : 0;
    double wratio = wmed[0] > 0 && wmed[1] > 0 ? wmed[1] / wmed[0] : 0;
    if (ratio > 0) geo_add(0, ratio);
    if (mratio > 0) geo_add(1, mratio);
    if (wratio > 0) geo_add(3, wratio);
    printf("spgemm %-28s nnz(A) %10lld nnz(C) %11lld  dsmm %9.3f ms (%7.2f GFLOP/s, %8.1f MiB)"
           "  cusparse %9.3f ms (%8.1f MiB)  speed x%.2f  memory x%.2f  call-copies x%.2f  %s\n",
           name, (long long)A->nnz, (long long)(C[0] ? C[0]->nnz : -1), med[0] * 1e3,
           med[0] > 0 ? 2 * flops / med[0] / 1e9 : 0, mem[0] / 1048576.0, med[1] * 1e3,
           mem[1] / 1048576.0, ratio, mratio, wratio,
           diff < 0       ? "RESULTS DIFFER"
           : diff > 1e-10 ? "values differ"
                          : "agree");
    for (int s = 0; s < 2; s++)
        if (st[s] != DSMM_OK) printf("  %s failed: %s\n", s ? "cusparse" : "dsmm", err[s]);
    printf("{\"bench\": \"gpu_spgemm\", \"build\": \"%s\", \"matrix\": \"%s\", \"nnz_a\": %lld, "
           "\"nnz_c\": %lld, \"flops\": %.0f, \"dsmm_ms\": %.4f, \"cusparse_ms\": %.4f, "
           "\"ratio\": %.4f, \"dsmm_call_ms\": %.4f, \"cusparse_call_ms\": %.4f, "
           "\"dsmm_symbolic_ms\": %.4f, \"dsmm_numeric_ms\": %.4f, \"dsmm_device_bytes\": %zu, "
           "\"cusparse_device_bytes\": %zu, "
           "\"dsmm_ok\": %d, \"cusparse_ok\": %d, \"max_rel_diff\": %.3g, \"reps\": %d}\n",
           DSMM_BENCH_BUILD, name, (long long)A->nnz, (long long)(C[0] ? C[0]->nnz : -1), flops,
           med[0] * 1e3, med[1] * 1e3, ratio, wmed[0] * 1e3, wmed[1] * 1e3, sym_ms, num_ms, mem[0],
           mem[1], st[0] == DSMM_OK, st[1] == DSMM_OK, diff, reps);
    dsmm_csr_destroy(&C[0]);
    dsmm_csr_destroy(&C[1]);
    return st[0] == DSMM_OK && diff >= 0 && diff <= 1e-10 ? 0 : 1;
}

static int bench_spmm(dsmm_ctx *ctx, const char *name, const dsmm_csr *A, dsmm_idx k, int reps,
                      double hbm)
{
    dsmm_spmm_alg algs[2] = {DSMM_SPMM_GPU, DSMM_SPMM_CUSPARSE};
    dsmm_dense *B = NULL, *C[2] = {NULL, NULL};
    double t[2][64], med[2] = {0, 0};
    int variant = 0, bad = 0;
    if (dsmm_dense_create(ctx, A->ncols, k, DSMM_FLOAT, &B) != DSMM_OK ||
        dsmm_dense_create(ctx, A->nrows, k, DSMM_FLOAT, &C[0]) != DSMM_OK ||
        dsmm_dense_create(ctx, A->nrows, k, DSMM_FLOAT, &C[1]) != DSMM_OK) {
        fprintf(stderr, "bench_gpu: %s\n", dsmm_ctx_last_error(ctx));
        return 1;
    }
    for (dsmm_idx i = 0; i < A->ncols * k; i++) ((float *)B->val)[i] = (float)((i * 37) % 11) - 5;
    for (int s = 0; s < 2; s++) {
        dsmm_spmm_opts o;
        dsmm_spmm_info info;
        dsmm_spmm_opts_init(&o);
        o.alg = algs[s];
        for (int r = -1; r < reps; r++) {
            if (dsmm_csr_spmm(ctx, A, B, C[s], &o, &info) != DSMM_OK) {
                printf("  spmm %s failed: %s\n", s ? "cusparse" : "dsmm", dsmm_ctx_last_error(ctx));
                dsmm_ctx_clear_error(ctx);
                bad = 1;
                break;
            }
            if (r >= 0) t[s][r] = info.seconds_device;
            if (s == 0) variant = info.gpu_variant;
        }
        if (!bad) med[s] = bench_median(t[s], reps);
    }
    // ||C_dsmm - C_cusparse|| / ||C_cusparse|| (Frobenius): float sums in two orders differ by
    // rounding, far below 1e-5 of the norm; entry-wise ratios would flag cancellations
    double dd = 0, yy = 0;
    for (dsmm_idx i = 0; i < A->nrows * k && !bad; i++) {
        double a = ((float *)C[0]->val)[i], b = ((float *)C[1]->val)[i];
        dd += (a - b) * (a - b);
        yy += b * b;
    }
    double worst = yy > 0 ? sqrt(dd / yy) : sqrt(dd);
    double bytes = dsmm_spmm_bytes(A, 0, k, DSMM_FLOAT, 0.0);
    double ratio = !bad && med[0] > 0 ? med[1] / med[0] : 0;
    double gbps = med[0] > 0 ? bytes / med[0] / 1e9 : 0;
    if (ratio > 0) geo_add(2, ratio);
    printf("spmm   %-28s k %4lld  dsmm %9.3f ms (%s, %7.1f GB/s, %5.1f%% of HBM copy)  cusparse "
           "%9.3f ms  speed x%.2f  %s\n",
           name, (long long)k, med[0] * 1e3, variant ? "split rows" : "row-split", gbps,
           hbm > 0 ? 100 * gbps / hbm : 0, med[1] * 1e3, ratio,
           worst > 1e-5 ? "RESULTS DIFFER" : "agree");
    printf("{\"bench\": \"gpu_spmm\", \"build\": \"%s\", \"matrix\": \"%s\", \"k\": %lld, "
           "\"type\": \"float\", \"dsmm_ms\": %.4f, \"cusparse_ms\": %.4f, \"ratio\": %.4f, "
           "\"variant\": %d, \"bytes\": %.0f, \"gbps\": %.2f, \"hbm_copy_gbps\": %.2f, "
           "\"pct_of_floor\": %.2f, \"max_rel_diff\": %.3g, \"reps\": %d}\n",
           DSMM_BENCH_BUILD, name, (long long)k, med[0] * 1e3, med[1] * 1e3, ratio, variant, bytes,
           gbps, hbm, hbm > 0 ? 100 * gbps / hbm : 0, worst, reps);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C[0]);
    dsmm_dense_destroy(&C[1]);
    return bad || worst > 1e-5;
}

int main(int argc, char **argv)
{
    int reps = 5, do_spgemm = 1, do_spmm = 1, fails = 0;
    dsmm_idx ks[8] = {32, 128, 256};
    int nk = 3, rmat[8], nrmat = 0;
    dsmm_ctx *ctx = NULL;
    if (dsmm_gpu_count() == 0) {
        fprintf(stderr, "bench_gpu: no CUDA device (or built without CUDA): nothing to time\n");
        return 77;
    }
    dsmm_gpu_opts go;
    dsmm_gpu_opts_init(&go);
    for (int i = 1; i < argc; i++) { // before the device is set up: it takes the options
        if (strcmp(argv[i], "--host-plan") == 0) go.host_planning = 1;
        if (strcmp(argv[i], "--spread") == 0 && i + 1 < argc) go.spgemm_spread = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--spmm-unroll") == 0 && i + 1 < argc)
            go.spmm_unroll = atoi(argv[i + 1]);
    }
    if (dsmm_ctx_create(&ctx) != DSMM_OK || dsmm_ctx_set_gpu(ctx, &go) != DSMM_OK) {
        fprintf(stderr, "bench_gpu: %s\n", ctx ? dsmm_ctx_last_error(ctx) : "no context");
        return 1;
    }
    dsmm_ctx_set_progress(ctx, 0);
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > 64) reps = 5;
        } else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc) {
            nk = 0;
            for (char *p = strtok(argv[++i], ","); p && nk < 8; p = strtok(NULL, ","))
                ks[nk++] = atoll(p);
        } else if (strcmp(argv[i], "--rmat") == 0 && i + 1 < argc && nrmat < 8) {
            rmat[nrmat++] = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--verbose") == 0) { // the kernels' debug lines
            dsmm_ctx_set_log(ctx, DSMM_LOG_DEBUG, NULL, NULL);
        } else if (strcmp(argv[i], "--host-plan") == 0) { // taken above
        } else if ((strcmp(argv[i], "--spread") == 0 || strcmp(argv[i], "--spmm-unroll") == 0) &&
                   i + 1 < argc) { // taken above
            i++;
        } else if (strcmp(argv[i], "--spgemm-only") == 0) {
            do_spmm = 0;
        } else if (strcmp(argv[i], "--spmm-only") == 0) {
            do_spgemm = 0;
        } else {
            first_file = i;
            break;
        }
    }
    dsmm_gpu_info gi;
    double hbm = 0;
    if (dsmm_ctx_gpu_info(ctx, &gi) == DSMM_OK) printf("device: %s\n", gi.name);
    printf("SpGEMM planning (row flops, bins): on the %s; shared-table rows' products: %s; "
           "SpMM entries in flight: %s\n",
           go.host_planning ? "host" : "device",
           go.spgemm_spread == 1   ? "by entry"
           : go.spgemm_spread == 2 ? "per chunk"
                                   : "spread",
           go.spmm_unroll == 4   ? "4"
           : go.spmm_unroll == 1 ? "1"
                                 : "by k (4 to k = 128 floats, else 1)");
    if (dsmmi_gpu_copy_bandwidth(ctx, &hbm) == DSMM_OK)
        printf("device-to-device copy: %.0f GB/s (the SpMM floor's bandwidth)\n", hbm);
    int nin = (argc - first_file) + nrmat;
    for (int m = 0; m < nin; m++) {
        dsmm_csr *A = NULL;
        char name[256];
        dsmm_status st;
        if (m < argc - first_file) {
            const char *path = argv[first_file + m];
            const char *slash = strrchr(path, '/');
            snprintf(name, sizeof name, "%s", slash ? slash + 1 : path);
            st = dsmm_read(ctx, path, NULL, &A, NULL, NULL);
        } else {
            dsmm_gen_params p;
            dsmm_gen_params_init(&p);
            p.scale = rmat[m - (argc - first_file)];
            p.type = DSMM_DOUBLE;
            p.symmetric = 1;
            snprintf(name, sizeof name, "rmat%d", p.scale);
            st = dsmm_gen_rmat(ctx, &p, &A);
        }
        if (st != DSMM_OK) {
            fprintf(stderr, "bench_gpu: %s: %s\n", name, dsmm_ctx_last_error(ctx));
            dsmm_ctx_clear_error(ctx);
            fails++;
            continue;
        }
        if (A->type == DSMM_PATTERN) { // cuSPARSE needs values: ones
            dsmm_csr *V = NULL;
            if (dsmm_csr_create(ctx, A->nrows, A->ncols, A->nnz, DSMM_DOUBLE, &V) == DSMM_OK) {
                memcpy(V->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof *V->rowptr);
                for (dsmm_idx k = 0; k < A->nnz; k++) {
                    V->colidx[k] = dsmm_csr_col(A, k);
                    ((double *)V->val)[k] = 1.0;
                }
                V->nnz = A->nnz;
                V->sorted = A->sorted;
                dsmm_csr_destroy(&A);
                A = V;
            }
        }
        if (do_spgemm && A->nrows == A->ncols) fails += bench_spgemm(ctx, name, A, reps);
        for (int k = 0; do_spmm && k < nk; k++) fails += bench_spmm(ctx, name, A, ks[k], reps, hbm);
        dsmm_csr_destroy(&A);
    }
    if (geo_n[0])
        printf("SpGEMM geomean speed dsmm / cusparse: x%.3f over %d matrices (target >= 1.3)\n",
               exp(geo_sum[0] / geo_n[0]), geo_n[0]);
    if (geo_n[1])
        printf("SpGEMM geomean peak device memory cusparse / dsmm: x%.3f (> 1: dsmm lower)\n",
               exp(geo_sum[1] / geo_n[1]));
    if (geo_n[3])
        printf("SpGEMM geomean of the call less its copies (host planning included), cusparse / "
               "dsmm: x%.3f over %d matrices\n",
               exp(geo_sum[3] / geo_n[3]), geo_n[3]);
    if (geo_n[2])
        printf("SpMM geomean speed dsmm / cusparse: x%.3f over %d runs (target >= 1.0)\n",
               exp(geo_sum[2] / geo_n[2]), geo_n[2]);
    dsmm_ctx_destroy(&ctx);
    return fails ? 1 : 0;
}
