// bench/spgemm_tune.c: A/B runs of the local SpGEMM's tuning constants (dsmmi_spgemm_tune,
// src/kernels/spgemm_rowwise.c). For each input, C = A * A runs under every setting in turn,
// round after round (settings interleaved, so a slow spell of a shared machine hits them all
// alike), after one warm-up round; prints per input the median seconds of each setting and
// its ratio to the first, then the geomean ratio of each setting over the inputs. This is how
// the thresholds in docs/kernels.md were chosen.
// With --numeric, each run is the numeric phase alone (dsmm_csr_spgemm_numeric on the pattern
// of one symbolic call), not the full product.
// Usage: spgemm_tune [--threads N] [--rounds R] [--numeric] INPUT... -- SETTING...
//   INPUT: as bench_spgemm's (raw CSR file, any file dsmm_read reads, rmat:SCALE, rmatd:SCALE)
//   SETTING: comma-separated name=value pairs, "default" for none; names: rank (dense_rank_max),
//   scan (dense_scan_ratio), sort (dense_sort_ratio), summary (dense_summary), sumreg
//   (dense_summary_regs), rank_words (dense_rank_words), prefetch,
//   prefetch_bp, one_pass, one_pass_max (bytes), one_pass_mt_max (bytes), one_pass_stage,
//   slots (one_pass_slots), runs (one_pass_runs),
//   one_pass_stream (bytes, 0: never), one_pass_threads, heap_k, heap_cf,
//   sym_dense, fill_dense, cache_cols, min_thread_flops, mark (dense_mark_ratio),
//   fill_mark (fill_mark_ratio), rank_vec (dense_rank_vec: 2 AVX2, 1 SSE2, 0 scalar).
// Example: spgemm_tune --rounds 15 a.csr b.csr -- default rank=0 rank=64 scan=0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_dsmm.h"
#include "kernels/kernels.h"

#define MAX_SETTINGS 16
#define MAX_ROUNDS   99

static int apply(const char *spec)
{
    if (strcmp(spec, "default") == 0) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    dsmmi_spgemm_tuning *t = &dsmmi_spgemm_tune;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        char *end = NULL;
        if (eq == NULL) return -1;
        *eq = 0;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != 0 || !(v >= 0)) return -1;
        if (strcmp(tok, "rank") == 0)
            t->dense_rank_max = (dsmm_idx)v;
        else if (strcmp(tok, "scan") == 0)
            t->dense_scan_ratio = v;
        else if (strcmp(tok, "sort") == 0)
            t->dense_sort_ratio = v;
        else if (strcmp(tok, "summary") == 0)
            t->dense_summary = v;
        else if (strcmp(tok, "rank_words") == 0)
            t->dense_rank_words = v;
        else if (strcmp(tok, "sumreg") == 0)
            t->dense_summary_regs = (int)v;
        else if (strcmp(tok, "one_pass") == 0)
            t->one_pass = (int)v;
        else if (strcmp(tok, "one_pass_max") == 0)
            t->one_pass_max = (size_t)v;
        else if (strcmp(tok, "one_pass_mt_max") == 0)
            t->one_pass_mt_max = (size_t)v;
        else if (strcmp(tok, "one_pass_stage") == 0)
            t->one_pass_stage = (dsmm_idx)v;
        else if (strcmp(tok, "slots") == 0)
            t->one_pass_slots = (int)v;
        else if (strcmp(tok, "runs") == 0)
            t->one_pass_runs = (dsmm_idx)v;
        else if (strcmp(tok, "one_pass_stream") == 0)
            t->one_pass_stream_min = (size_t)v;
        else if (strcmp(tok, "one_pass_threads") == 0)
            t->one_pass_threads = (int)v;
        else if (strcmp(tok, "prefetch_bp") == 0)
            t->prefetch_bp = (int)v;
        else if (strcmp(tok, "prefetch") == 0)
            t->prefetch = (dsmm_idx)v;
        else if (strcmp(tok, "heap_k") == 0)
            t->heap_k = (dsmm_idx)v;
        else if (strcmp(tok, "heap_cf") == 0)
            t->heap_cf = v;
        else if (strcmp(tok, "sym_dense") == 0)
            t->sym_dense = v;
        else if (strcmp(tok, "fill_dense") == 0)
            t->fill_dense = v;
        else if (strcmp(tok, "cache_cols") == 0)
            t->cache_cols = (dsmm_idx)v;
        else if (strcmp(tok, "min_thread_flops") == 0)
            t->min_thread_flops = (dsmm_idx)v;
        else if (strcmp(tok, "mark") == 0)
            t->dense_mark_ratio = v;
        else if (strcmp(tok, "fill_mark") == 0)
            t->fill_mark_ratio = v;
        else if (strcmp(tok, "rank_vec") == 0)
            t->dense_rank_vec = (int)v;
        else
            return -1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: spgemm_tune [--threads N] [--rounds R] [--numeric] INPUT... -- SETTING...\n");
    return 2;
}

int main(int argc, char **argv)
{
    int threads = 1, rounds = 9, first = 1, numeric = 0;
    while (first < argc && strncmp(argv[first], "--", 2) == 0 && argv[first][2] != 0) {
        if (strcmp(argv[first], "--numeric") == 0) {
            numeric = 1;
            first++;
            continue;
        }
        if (first + 1 >= argc) return usage();
        if (strcmp(argv[first], "--threads") == 0)
            threads = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--rounds") == 0)
            rounds = atoi(argv[first + 1]);
        else
            return usage();
        first += 2;
    }
    int sep = first;
    while (sep < argc && strcmp(argv[sep], "--") != 0) sep++;
    int ninputs = sep - first, nset = argc - sep - 1;
    if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS || ninputs < 1 || nset < 1 ||
        nset > MAX_SETTINGS)
        return usage();
    char **inputs = argv + first, **settings = argv + sep + 1;
    const dsmmi_spgemm_tuning base = dsmmi_spgemm_tune;
    for (int s = 0; s < nset; s++) {
        if (apply(settings[s]) != 0) {
            fprintf(stderr, "spgemm_tune: bad setting '%s'\n", settings[s]);
            return 2;
        }
        dsmmi_spgemm_tune = base;
    }

    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK || dsmm_ctx_set_threads(ctx, threads) != DSMM_OK) {
        fprintf(stderr, "spgemm_tune: no context\n");
        return 1;
    }
    static double t[MAX_SETTINGS][MAX_ROUNDS];
    double logsum[MAX_SETTINGS] = {0};
    int rc = 0, done = 0;
    printf("# threads %d, rounds %d (+1 warm-up), %s, median seconds (ratio to '%s')\n", threads,
           rounds, numeric ? "numeric phase" : "full product", settings[0]);
    for (int f = 0; f < ninputs && rc == 0; f++) {
        dsmm_csr *A = NULL;
        if (bench_load(ctx, "spgemm_tune", inputs[f], 0, &A, NULL) != DSMM_OK) {
            fprintf(stderr, "spgemm_tune: %s: %s\n", inputs[f], dsmm_ctx_last_error(ctx));
            rc = 1;
            break;
        }
        dsmm_spgemm_opts so;
        dsmm_spgemm_opts_init(&so);
        so.col_bits = A->ncols <= INT32_MAX ? 32 : 64;
        dsmm_csr *P = NULL; // --numeric: the pattern, its values refilled by every run
        if (numeric && dsmm_csr_spgemm_symbolic(ctx, A, A, &so, &P, NULL) != DSMM_OK) {
            fprintf(stderr, "spgemm_tune: %s: %s\n", inputs[f], dsmm_ctx_last_error(ctx));
            dsmm_csr_destroy(&A);
            rc = 1;
            break;
        }
        for (int r = -1; r < rounds && rc == 0; r++) {
            for (int s = 0; s < nset && rc == 0; s++) {
                dsmmi_spgemm_tune = base;
                (void)apply(settings[s]);
                dsmm_csr *C = NULL;
                dsmm_spgemm_info info;
                double t0 = bench_now();
                dsmm_status st = numeric ? dsmm_csr_spgemm_numeric(ctx, A, A, &so, P, &info)
                                         : dsmm_csr_spgemm_ex(ctx, A, A, &so, &C, &info);
                if (st != DSMM_OK) {
                    fprintf(stderr, "spgemm_tune: %s: %s\n", inputs[f], dsmm_ctx_last_error(ctx));
                    rc = 1;
                }
                double dt = bench_now() - t0;
                if (r >= 0) t[s][r] = dt;
                dsmm_csr_destroy(&C);
            }
        }
        dsmmi_spgemm_tune = base;
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&P);
        if (rc != 0) break;
        double m0 = bench_median(t[0], rounds);
        printf("%-28s", bench_base_name(inputs[f]));
        for (int s = 0; s < nset; s++) {
            double md = bench_median(t[s], rounds);
            printf(" %10.5f (%5.3f)", md, md / m0);
            logsum[s] += log(md / m0);
        }
        printf("\n");
        done++;
    }
    if (done > 0) {
        printf("%-28s", "geomean ratio");
        for (int s = 0; s < nset; s++) printf(" %s %.3f", settings[s], exp(logsum[s] / done));
        printf("\n");
    }
    dsmm_ctx_destroy(&ctx);
    return rc;
}
