// bench/bench_spgemm.c: the dsmm side of bench/spgemm.sh: prepares an input, exports it as a
// raw CSR file that the scipy, GraphBLAS and PETSc drivers read (so every system multiplies
// exactly the same matrix), times dsmm's local C = A * A, and compares check files.
//
// Usage:
//   bench_spgemm INPUT [--symmetrize] [--export FILE] [--no-run] [--name NAME]
//                [--threads N] [--kernel auto|hash|heap|dense|ref] [--repeat R]
//                [--warmup W] [--min-time S] [--no-numeric] [--check FILE]
//   bench_spgemm --compare REF.chk OTHER.chk [--rtol 1e-9]
// INPUT is a raw CSR file (below), anything dsmm_read reads (Matrix Market, abc, edge list,
// .gz), rmat:SCALE[:SEED] (R-MAT, edge factor 16, a=0.57, b=c=0.19, symmetric, no self loops,
// seed 1 by default) or rmatd:SCALE[:SEED] (the same generator, directed: not symmetrised).
// --symmetrize makes A = max(A, A^T) entrywise (abc files and edge lists that list each
// undirected pair once). Pattern inputs get values 1.0, so every system computes plus-times
// on ones. A run prints one JSON line on stdout.
//
// Raw CSR file (native byte order, little-endian on x86), 48-byte header then three arrays:
//   char magic[8] = "DSMMRAW1"; int64 nrows, ncols, nnz; int64 col_bytes (4 or 8);
//   int64 flags (bit 0: the source had no values, every value is 1.0);
//   int64 rowptr[nrows + 1]; int32 or int64 colidx[nnz]; double val[nnz].
// Rows are sorted by column without duplicates.
//
// Check file, written by every driver after its timings:
//   char magic[8] = "DSMMCHK1"; int64 nrows; int64 nnz(C); int64 zeros; double y[nrows]
// with y = C x, x_j = 1 + ((j * 2654435761) mod 1000) / 1000 (j from 0, 64-bit unsigned), and
// zeros the stored entries of C whose value is exactly 0 (sums that cancel).
// --compare checks nrows and nnz exactly and y within a relative tolerance. One exception:
// scipy drops the zeros that cancellation leaves, so when the zeros of one side account for
// the whole difference (nnz1 - zeros1 == nnz2 - zeros2 and one side has none) they agree.
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

#include "bench_common.h"
#include "bench_dsmm.h"
#include "dsmm.h"

#define PROG "bench_spgemm"

#ifndef DSMM_BENCH_BUILD
#define DSMM_BENCH_BUILD "unknown"
#endif

#define CHK_MAGIC "DSMMCHK1"

typedef struct bench_opts {
    const char *input, *export_path, *check_path, *name, *kernel;
    int symmetrize, run, numeric, threads, repeat, warmup;
    double min_time; // seconds of timed runs at least, per loop (bench_repeats)
} bench_opts;

static int fail(dsmm_ctx *ctx, const char *what)
{
    const char *msg = ctx ? dsmm_ctx_last_error(ctx) : "";
    fprintf(stderr, "bench_spgemm: %s: %s\n", what, *msg ? msg : "failed (see above)");
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Raw CSR and check files                                                                   */
/* ---------------------------------------------------------------------------------------- */

static int write_all(FILE *f, const void *p, size_t size, size_t n)
{
    return n == 0 || fwrite(p, size, n, f) == n;
}

// A must hold doubles, sorted rows. 32-bit columns when ncols fits.
static int raw_write(const char *path, const dsmm_csr *A, int was_pattern)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return 0;
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        fprintf(stderr, "bench_spgemm: cannot write %s: %s\n", tmp, strerror(errno));
        return 0;
    }
    int64_t col_bytes = A->ncols <= INT32_MAX ? 4 : 8;
    int64_t hdr[5] = {A->nrows, A->ncols, A->nnz, col_bytes, was_pattern ? 1 : 0};
    int ok = write_all(f, RAW_MAGIC, 1, 8) && write_all(f, hdr, sizeof hdr[0], 5) &&
             write_all(f, A->rowptr, sizeof(int64_t), (size_t)A->nrows + 1);
    const size_t chunk = 1 << 20;
    if (col_bytes == 4) {
        int32_t *buf = malloc(chunk * sizeof *buf);
        ok = ok && buf != NULL;
        for (dsmm_idx k0 = 0; ok && k0 < A->nnz; k0 += (dsmm_idx)chunk) {
            size_t m = (size_t)(A->nnz - k0) < chunk ? (size_t)(A->nnz - k0) : chunk;
            for (size_t k = 0; k < m; k++) buf[k] = (int32_t)dsmm_csr_col(A, k0 + (dsmm_idx)k);
            ok = write_all(f, buf, sizeof *buf, m);
        }
        free(buf);
    } else {
        int64_t *buf = malloc(chunk * sizeof *buf);
        ok = ok && buf != NULL;
        for (dsmm_idx k0 = 0; ok && k0 < A->nnz; k0 += (dsmm_idx)chunk) {
            size_t m = (size_t)(A->nnz - k0) < chunk ? (size_t)(A->nnz - k0) : chunk;
            for (size_t k = 0; k < m; k++) buf[k] = dsmm_csr_col(A, k0 + (dsmm_idx)k);
            ok = write_all(f, buf, sizeof *buf, m);
        }
        free(buf);
    }
    ok = ok && write_all(f, A->val, sizeof(double), (size_t)A->nnz);
    if (fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "bench_spgemm: writing %s failed: %s\n", path, strerror(errno));
        remove(tmp);
    }
    return ok;
}

// Reads a check file; *y is malloc'ed.
static int check_read(const char *path, int64_t *nrows, int64_t *nnz, int64_t *zeros, double **y)
{
    *y = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "bench_spgemm: cannot open %s: %s\n", path, strerror(errno));
        return 0;
    }
    char magic[8];
    int64_t h[3];
    int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, CHK_MAGIC, 8) == 0 &&
             fread(h, sizeof h[0], 3, f) == 3 && h[0] >= 0;
    if (ok) {
        *y = malloc(((size_t)h[0] + 1) * sizeof **y);
        ok = *y != NULL && fread(*y, sizeof **y, (size_t)h[0], f) == (size_t)h[0];
    }
    fclose(f);
    if (!ok) {
        fprintf(stderr, "bench_spgemm: %s: not a check file or truncated\n", path);
        free(*y);
        *y = NULL;
        return 0;
    }
    *nrows = h[0];
    *nnz = h[1];
    *zeros = h[2];
    return 1;
}

// Largest relative difference |a - b| / max(|a|, |b|) over y (0 where both are 0).
static double max_rel_diff(const double *a, const double *b, int64_t n, int64_t *where)
{
    double worst = 0.0;
    *where = -1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]), s = fmax(fabs(a[i]), fabs(b[i]));
        double r = d == 0.0 ? 0.0 : (s > 0.0 ? d / s : INFINITY);
        if (r != r) r = INFINITY; // NaN on either side
        if (r > worst) {
            worst = r;
            *where = i;
        }
    }
    return worst;
}

static int compare_main(int argc, char **argv)
{
    double rtol = 1e-9;
    if (argc < 4) {
        fprintf(stderr, "usage: bench_spgemm --compare REF.chk OTHER.chk [--rtol R]\n");
        return 2;
    }
    if (argc >= 6 && strcmp(argv[4], "--rtol") == 0) rtol = atof(argv[5]);
    int64_t n1, z1, e1, n2, z2, e2;
    double *y1 = NULL, *y2 = NULL;
    int rc = 1;
    if (!check_read(argv[2], &n1, &z1, &e1, &y1) || !check_read(argv[3], &n2, &z2, &e2, &y2))
        goto done;
    // Dropped cancellation zeros (scipy) are the only allowed difference in nnz.
    int dropped = z1 != z2 && (e1 == 0 || e2 == 0) && z1 - e1 == z2 - e2;
    if (n1 != n2 || (z1 != z2 && !dropped)) {
        printf("DISAGREE nrows %lld vs %lld, nnz %lld vs %lld (exact zeros %lld, %lld)\n",
               (long long)n1, (long long)n2, (long long)z1, (long long)z2, (long long)e1,
               (long long)e2);
        goto done;
    }
    int64_t at;
    double worst = max_rel_diff(y1, y2, n1, &at);
    if (worst > rtol) {
        printf("DISAGREE nnz %lld equal; y[%lld] = %.17g vs %.17g (relative %.3g > %.3g)\n",
               (long long)z1, (long long)at, y1[at], y2[at], worst, rtol);
        goto done;
    }
    if (dropped) {
        printf("agree nnz %lld vs %lld (%lld cancellation zeros dropped), max relative "
               "difference of y %.3g\n",
               (long long)z1, (long long)z2, (long long)(e1 > e2 ? e1 : e2), worst);
    } else {
        printf("agree nnz %lld, max relative difference of y %.3g\n", (long long)z1, worst);
    }
    rc = 0;
done:
    free(y1);
    free(y2);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Input preparation                                                                         */
/* ---------------------------------------------------------------------------------------- */

// Loads INPUT as a CSR of doubles with sorted rows.
static dsmm_status load_input(dsmm_ctx *ctx, const bench_opts *o, dsmm_csr **out, int *was_pattern)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL, *D = NULL;
    *out = NULL;
    *was_pattern = 0;
    st = bench_load(ctx, PROG, o->input, o->symmetrize, &A, was_pattern);
    if (st != DSMM_OK) goto done;
    if (A->type != DSMM_DOUBLE) {
        st = dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &D);
        if (st != DSMM_OK) goto done;
        dsmm_csr_destroy(&A);
        A = D;
        D = NULL;
    }
    if (!A->sorted) st = dsmm_csr_sort_inplace(ctx, A, DSMM_DUP_SUM);
    if (st == DSMM_OK && A->ncols <= INT32_MAX) st = dsmm_csr_set_col_width(A, 32);
    if (st != DSMM_OK) goto done;
    *out = A;
    A = NULL;
done:
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&D);
    return st;
}

static double count_flops(const dsmm_csr *A)
{
    double f = 0.0;
    if (A->nrows != A->ncols) return -1.0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx c = dsmm_csr_col(A, k);
            f += (double)(A->rowptr[c + 1] - A->rowptr[c]);
        }
    }
    return f;
}

// y = C x for the check vector x; returns the stored entries equal to 0.
static int64_t mult_check(const dsmm_csr *C, double *y)
{
    const double *v = C->val;
    int64_t zeros = 0;
    for (dsmm_idx i = 0; i < C->nrows; i++) {
        double s = 0.0;
        for (dsmm_idx k = C->rowptr[i]; k < C->rowptr[i + 1]; k++) {
            s += v[k] * bench_check_x((uint64_t)dsmm_csr_col(C, k));
            zeros += v[k] == 0.0;
        }
        y[i] = s;
    }
    return zeros;
}

/* ---------------------------------------------------------------------------------------- */
/* The dsmm timings                                                                          */
/* ---------------------------------------------------------------------------------------- */

static int run_dsmm(dsmm_ctx *ctx, const bench_opts *o, const dsmm_csr *A)
{
    dsmm_spgemm_opts so;
    dsmm_spgemm_info info, winfo, sinfo, ninfo;
    dsmm_csr *C = NULL;
    double *t = NULL, *y = NULL, *y2 = NULL;
    int rc = 1;
    char host[256];

    dsmm_spgemm_opts_init(&so);
    if (dsmm_spgemm_alg_from_name(o->kernel, &so.alg) != DSMM_OK) {
        fprintf(stderr, "bench_spgemm: unknown kernel '%s'\n", o->kernel);
        return 2;
    }
    so.col_bits = A->ncols <= INT32_MAX ? 32 : 64;
    y = malloc(((size_t)A->nrows + 1) * sizeof *y);
    y2 = malloc(((size_t)A->nrows + 1) * sizeof *y2);
    if (y == NULL || y2 == NULL) goto done;

    // Full product: warm-up (its result gives the check), then the timed repeats.
    double one = 0.0; // the last warm-up's seconds
    for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
        dsmm_csr_destroy(&C);
        double t0 = bench_now();
        if (dsmm_csr_spgemm_ex(ctx, A, A, &so, &C, &winfo) != DSMM_OK) {
            rc = fail(ctx, "spgemm");
            goto done;
        }
        one = bench_now() - t0;
    }
    int reps = bench_repeats(o->repeat, o->min_time, one);
    t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) goto done;
    dsmm_idx nnz_c = C->nnz;
    int64_t zeros = mult_check(C, y);
    dsmm_csr_destroy(&C);
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        dsmm_status st = dsmm_csr_spgemm_ex(ctx, A, A, &so, &C, &info);
        t[r] = bench_now() - t0;
        if (st != DSMM_OK) {
            rc = fail(ctx, "spgemm");
            goto done;
        }
        if (C->nnz != nnz_c) {
            fprintf(stderr, "bench_spgemm: nnz(C) changed between runs: %lld vs %lld\n",
                    (long long)C->nnz, (long long)nnz_c);
            goto done;
        }
        dsmm_csr_destroy(&C);
    }
    long rss_full = bench_peak_rss_kb();
    double med = bench_median(t, reps), tmin = t[0];
    if (o->check_path &&
        !bench_check_write("bench_spgemm", o->check_path, A->nrows, nnz_c, zeros, y))
        goto done;

    // Numeric phase alone: symbolic once, numeric warm-up, timed numeric repeats.
    double sym_s = 0.0, num_med = -1.0, num_min = -1.0, num_rel = -1.0;
    int nreps = 0;
    if (o->numeric) {
        double t0 = bench_now();
        if (dsmm_csr_spgemm_symbolic(ctx, A, A, &so, &C, &sinfo) != DSMM_OK) {
            rc = fail(ctx, "spgemm_symbolic");
            goto done;
        }
        sym_s = bench_now() - t0;
        for (int w = 0; w < (o->warmup > 0 ? o->warmup : 1); w++) {
            t0 = bench_now();
            if (dsmm_csr_spgemm_numeric(ctx, A, A, &so, C, &ninfo) != DSMM_OK) {
                rc = fail(ctx, "spgemm_numeric");
                goto done;
            }
            one = bench_now() - t0;
        }
        nreps = bench_repeats(o->repeat, o->min_time, one);
        if (nreps > reps) {
            double *tn = realloc(t, (size_t)nreps * sizeof *t);
            if (tn == NULL) goto done;
            t = tn;
        }
        for (int r = 0; r < nreps; r++) {
            t0 = bench_now();
            dsmm_status st = dsmm_csr_spgemm_numeric(ctx, A, A, &so, C, &ninfo);
            t[r] = bench_now() - t0;
            if (st != DSMM_OK) {
                rc = fail(ctx, "spgemm_numeric");
                goto done;
            }
        }
        num_med = bench_median(t, nreps);
        num_min = t[0];
        (void)mult_check(C, y2);
        int64_t at;
        num_rel = C->nnz == nnz_c ? max_rel_diff(y, y2, A->nrows, &at) : INFINITY;
        dsmm_csr_destroy(&C);
        if (!(num_rel <= 1e-12)) {
            fprintf(stderr,
                    "bench_spgemm: symbolic+numeric differs from the full product "
                    "(nnz %lld vs %lld, relative %.3g)\n",
                    (long long)sinfo.nnz, (long long)nnz_c, num_rel);
            goto done;
        }
    }
    bench_hostname(host, sizeof host);
    printf(
        "{\"bench\":\"spgemm\",\"system\":\"dsmm\",\"name\":\"%s\",\"build\":\"%s\","
        "\"version\":\"%s\",\"machine\":\"%s\",\"ranks\":1,\"threads\":%d,"
        "\"algorithm\":\"%s\",\"n\":%lld,\"nnz_a\":%lld,\"flops\":%.0f,\"nnz_c\":%lld,"
        "\"zeros_c\":%lld,\"cf\":%.4f,\"repeats\":%d,\"median_s\":%.6g,\"min_s\":%.6g,"
        "\"madds_per_s\":%.6g,\"symbolic_s\":%.6g,\"numeric_repeats\":%d,\"numeric_median_s\":%.6g,"
        "\"numeric_min_s\":%.6g,\"rows_hash\":%lld,\"rows_heap\":%lld,\"rows_dense\":%lld,"
        "\"sorted\":%d,\"workspace_bytes\":%zu,\"peak_rss_kb\":%ld,"
        "\"peak_rss_full_kb\":%ld}\n",
        o->name, DSMM_BENCH_BUILD, dsmm_version(), host, info.threads, dsmm_spgemm_alg_name(so.alg),
        (long long)A->nrows, (long long)A->nnz, info.flops, (long long)nnz_c, (long long)zeros,
        info.cf, reps, med, tmin, med > 0 ? info.flops / med : 0.0, sym_s, nreps, num_med, num_min,
        (long long)winfo.rows_hash, (long long)winfo.rows_heap, (long long)winfo.rows_dense,
        winfo.sorted, winfo.workspace_bytes, bench_peak_rss_kb(), rss_full);
    fflush(stdout);
    rc = 0;
done:
    dsmm_csr_destroy(&C);
    free(t);
    free(y);
    free(y2);
    return rc;
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: bench_spgemm INPUT [--symmetrize] [--export FILE] [--no-run] [--name NAME]\n"
        "                    [--threads N] [--kernel auto|hash|heap|dense|ref] [--repeat R]\n"
        "                    [--warmup W] [--min-time S] [--no-numeric] [--check FILE]\n"
        "       bench_spgemm --compare REF.chk OTHER.chk [--rtol R]\n"
        "INPUT: raw CSR file, any file dsmm_read reads, rmat:SCALE[:SEED] or rmatd:SCALE[:SEED]\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--compare") == 0) return compare_main(argc, argv);
    bench_opts o = {
        .kernel = "auto", .run = 1, .numeric = 1, .threads = 0, .repeat = 5, .warmup = 1};
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        const char *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (strcmp(a, "--symmetrize") == 0) {
            o.symmetrize = 1;
        } else if (strcmp(a, "--no-run") == 0) {
            o.run = 0;
        } else if (strcmp(a, "--no-numeric") == 0) {
            o.numeric = 0;
        } else if (v && strcmp(a, "--export") == 0) {
            o.export_path = argv[++k];
        } else if (v && strcmp(a, "--check") == 0) {
            o.check_path = argv[++k];
        } else if (v && strcmp(a, "--name") == 0) {
            o.name = argv[++k];
        } else if (v && strcmp(a, "--kernel") == 0) {
            o.kernel = argv[++k];
        } else if (v && strcmp(a, "--threads") == 0) {
            o.threads = atoi(argv[++k]);
        } else if (v && strcmp(a, "--repeat") == 0) {
            o.repeat = atoi(argv[++k]);
        } else if (v && strcmp(a, "--warmup") == 0) {
            o.warmup = atoi(argv[++k]);
        } else if (v && strcmp(a, "--min-time") == 0) {
            if (!bench_parse_min_time("bench_spgemm", argv[++k], &o.min_time)) return 2;
        } else if (a[0] != '-' && o.input == NULL) {
            o.input = a;
        } else {
            usage();
            return 2;
        }
    }
    if (o.input == NULL || o.repeat < 1 || o.threads < 0 || o.warmup < 0) {
        usage();
        return 2;
    }
    if (o.name == NULL) o.name = bench_base_name(o.input);

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL;
    int rc = 1;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return fail(NULL, "context");
    dsmm_ctx_set_progress(ctx, 0);
    if (dsmm_ctx_set_threads(ctx, o.threads) != DSMM_OK) {
        rc = fail(ctx, "threads");
        goto done;
    }
    int was_pattern = 0;
    double t0 = bench_now();
    if (load_input(ctx, &o, &A, &was_pattern) != DSMM_OK) {
        rc = fail(ctx, o.input);
        goto done;
    }
    double load_s = bench_now() - t0;
    if (o.export_path) {
        if (!raw_write(o.export_path, A, was_pattern)) goto done;
        // nnz(C) estimated (Cohen, 16 keys) so the runner can skip products beyond memory.
        dsmm_spgemm_estimate_result est = {0};
        if (A->nrows == A->ncols && dsmm_spgemm_estimate(ctx, A, A, 16, 1, NULL, &est) != DSMM_OK)
            est.nnz = -1.0;
        printf("{\"bench\":\"spgemm_prepare\",\"name\":\"%s\",\"input\":\"%s\","
               "\"symmetrized\":%d,\"pattern\":%d,\"n\":%lld,\"ncols\":%lld,\"nnz_a\":%lld,"
               "\"flops\":%.0f,\"nnz_c_est\":%.0f,\"load_s\":%.3f,\"export\":\"%s\"}\n",
               o.name, bench_base_name(o.input), o.symmetrize, was_pattern, (long long)A->nrows,
               (long long)A->ncols, (long long)A->nnz, count_flops(A), est.nnz, load_s,
               bench_base_name(o.export_path));
        fflush(stdout);
    }
    if (o.run) {
        if (A->nrows != A->ncols) {
            fprintf(stderr, "bench_spgemm: %s is %lld x %lld; A * A needs a square matrix\n",
                    o.input, (long long)A->nrows, (long long)A->ncols);
            goto done;
        }
        rc = run_dsmm(ctx, &o, A);
        goto done;
    }
    rc = 0;
done:
    dsmm_csr_destroy(&A);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
