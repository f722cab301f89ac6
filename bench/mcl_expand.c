// bench/mcl_expand.c: the fused MCL iteration (dsmmi_mcl_iterate_local: expansion, pruning,
// inflation) on one saved iterate, under each level of x86 SIMD loops the CPU has (0 the
// portable loops, 1 AVX2, 2 AVX-512 collect and take, 3 AVX-512 panel rows too;
// dsmmi_mcl_simd), levels interleaved round after round so a
// slow spell of a shared machine hits them all alike, after one warm-up round. Prints each
// level's median seconds, the median of its per-round ratios to the first level, and whether
// every run's iterate is bit for bit the first one's (it must be: the levels differ in speed
// only). This is how the SIMD forms of docs/mcl.md ("Panels") were measured.
// Usage: mcl_expand CHECKPOINT_DIR [--threads N] [--rounds R] [--levels L,L,...]
//   CHECKPOINT_DIR: written by `dsmm mcl INPUT [--abc] -L K --checkpoint DIR` with mcl's default
//   settings: the iterate after K iterations (K = 1 gives the heaviest expansion of the bundled
//   networks). The rows are stored in breadth-first order, as a one-rank run does.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "base/base.h"
#include "bench_common.h"

#define MAX_LEVELS 4
#define MAX_ROUNDS 99

static int usage(void)
{
    fprintf(stderr,
            "usage: mcl_expand CHECKPOINT_DIR [--threads N] [--rounds R] [--levels L,L,...]\n");
    return 2;
}

static int same_iterate(const dsmmi_mcl_mat *a, const dsmmi_mcl_mat *b)
{
    return a->nrows == b->nrows && a->nnz == b->nnz &&
           memcmp(a->rowptr, b->rowptr, (size_t)(a->nrows + 1) * sizeof *a->rowptr) == 0 &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

int main(int argc, char **argv)
{
    int threads = 2, rounds = 5, nlev = 0, levels[MAX_LEVELS];
    if (argc < 2 || argv[1][0] == '-') return usage();
    const char *dir = argv[1];
    for (int a = 2; a < argc; a += 2) {
        if (a + 1 >= argc) return usage();
        if (strcmp(argv[a], "--threads") == 0) {
            threads = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--rounds") == 0) {
            rounds = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--levels") == 0) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", argv[a + 1]);
            for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
                if (nlev == MAX_LEVELS || t[0] < '0' || t[0] > '3' || t[1] != 0) return usage();
                levels[nlev++] = t[0] - '0';
            }
        } else {
            return usage();
        }
    }
    if (nlev == 0) {
        levels[0] = 2; // the AVX2 panel rows against the AVX-512 ones
        levels[1] = 3;
        nlev = 2;
    }
    if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) return usage();
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK || dsmm_ctx_set_threads(ctx, threads) != DSMM_OK) {
        fprintf(stderr, "mcl_expand: no context\n");
        return 1;
    }
    int rc = 1, sym = 0;
    dsmm_idx N = 0;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    p.resume_dir = dir;
    dsmmi_mcl_rules rules;
    dsmmi_mcl_mat M = {0}, first = {0};
    dsmmi_mcl_loop loop = {0};
    int32_t *newof = NULL, *orig = NULL;
    dsmm_idx row0 = 0;
    // The bench has no input graph: the checkpoint's own fingerprint stands in for it.
    if (dsmmi_mcl_checkpoint_peek(ctx, dir, &N, &sym, &loop.graph_fp) != DSMM_OK) {
        fprintf(stderr, "mcl_expand: %s: %s\n", dir, dsmm_ctx_last_error(ctx));
        goto done;
    }
    p.symmetrize = sym;
    if (dsmmi_mcl_rules_from(ctx, &p, &rules) != DSMM_OK ||
        dsmmi_mcl_checkpoint_read(ctx, &p, N, &M, &row0, &loop) != DSMM_OK ||
        dsmmi_mcl_relabel(ctx, &M, &newof, &orig) != DSMM_OK) {
        fprintf(stderr, "mcl_expand: %s: %s\n", dir, dsmm_ctx_last_error(ctx));
        goto done;
    }
    M.newof = newof;
    M.orig = orig;
    double power = loop.n_ite < p.init_loop ? (double)(float)p.init_inflation : loop.inflation_main;
    static double t[MAX_LEVELS][MAX_ROUNDS];
    int identical = 1;
    long long products = -1;
    for (int r = -1; r < rounds; r++) { // round -1: warm-up
        for (int l = 0; l < nlev; l++) {
            dsmmi_mcl_mat out = {0};
            dsmmi_mcl_iter_stats s;
            dsmmi_mcl_simd(levels[l]);
            double t0 = bench_now();
            if (dsmmi_mcl_iterate_local(ctx, &M, 0, N, &M, 0, &rules, power, &out, &s) != DSMM_OK) {
                fprintf(stderr, "mcl_expand: %s\n", dsmm_ctx_last_error(ctx));
                goto done;
            }
            double dt = bench_now() - t0;
            if (r >= 0) t[l][r] = dt;
            if (first.rowptr == NULL) {
                first = out;
                products = (long long)s.nnz_expand;
            } else {
                identical &= same_iterate(&first, &out);
                dsmmi_mcl_mat_free(ctx, &out);
            }
        }
    }
    printf("# %s: %lld vertices, %lld entries in, %lld expanded; %d threads, %d rounds (+1 "
           "warm-up)\n",
           dir, (long long)N, (long long)M.nnz, products, threads, rounds);
    for (int l = 0; l < nlev; l++) {
        double ratio[MAX_ROUNDS], secs[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            ratio[r] = t[l][r] / t[0][r];
            secs[r] = t[l][r];
        }
        printf("simd level %d: median %.4f s, median ratio to level %d: %.3f\n", levels[l],
               bench_median(secs, rounds), levels[0], bench_median(ratio, rounds));
    }
    printf("iterates identical across levels and rounds: %s\n", identical ? "yes" : "NO");
    rc = identical ? 0 : 1;
done:
    dsmmi_mcl_simd(3);
    dsmmi_mcl_mat_free(ctx, &first);
    dsmmi_mcl_mat_free(ctx, &M);
    dsmmi_free(ctx, newof);
    dsmmi_free(ctx, orig);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
