// bench/bench_spmm.c: the dsmm side of bench/spmm.sh: times the local SpMM C = op(A) * B
// (dsmm_csr_spmm) with B a dense n x k matrix of floats or doubles, prints one JSON line and
// writes the check file that the runner compares with the other systems' (bench_spmm
// --compare).
//
// Usage:
//   bench_spmm INPUT [--k K] [--type float|double] [--threads N] [--alg auto|row|col|ref]
//              [--transpose] [--repeat R] [--warmup W] [--min-time S] [--symmetrize]
//              [--name NAME] [--check FILE] [--col-tiles 0|1] [--rows]
//   bench_spmm --compare REF.chk OTHER.chk [--rtol R]
// INPUT is read as bench_spgemm reads it (format in bench/bench_spgemm.c): a raw CSR file, as
// bench_spgemm --export writes for every system of the runner, anything dsmm_read reads, or
// rmat:SCALE[:SEED] / rmatd:SCALE[:SEED]; --symmetrize makes A = max(A, A^T). A's values are
// converted to --type (pattern inputs: 1) and its columns kept 32-bit, before timing.
//
// The product is op(A) * B, op(A) = A (default) or A^T (--transpose), and each kernel is
// handed the orientation it reads, prepared untimed: row (and auto, ref) gets the CSR of
// op(A) with transpose_a = 0; col gets the CSR of op(A)^T with transpose_a = 1, so that row
// and col time the same product with no transpose inside the call. col then also prepares
// op(A)^T in tiles (dsmm_spmm_tiles_create, untimed; its seconds are the JSON's prepare_s)
// and passes them, as a caller repeating the product would; --col-tiles 0 times the plain
// column-wise kernel on the CSR instead. --rows (row or auto) likewise prepares op(A)'s rows
// stored by length (dsmm_spmm_rows_create, untimed, prepare_s) and passes them.
// B(i, j) = bench_spmm_b(i, j) (bench/bench_common.h), the same in every system. C is
// allocated and its pages written before timing (the library only writes it: beta = 0). One
// warm-up run (--warmup), then --repeat timed runs of the dsmm_csr_spmm call alone, or more
// when --min-time S asks for S seconds of timed runs (bench_repeats, bench_common.h).
//
// --pair auto|row (with --alg col) times the column-wise kernel against the row-wise one in
// one process: --pair-rounds R (7) rounds, each a batch of col's runs and a batch of the
// paired kernel's on the same B and C (which goes first alternates), and adds to the JSON
// pair_median_s (the paired kernel's median), pair_ratio (the median over the rounds of col's
// batch median / the paired batch median) and its min and max over the rounds. bench/spmm.sh
// reports col/row from it: two separate processes see this shared VM's drift between them.
//
// --l2-model BYTES (0: the L2 size sysfs gives) adds, after the timings and untimed, the
// traffic model of bench/spmm_model.h for the row-wise orientation: b_line_misses (the lines
// of B the threads' L2 caches of BYTES bring in, at --model-threads T, default the run's) and
// gather_gbps / gather_l2_gbps (random reads of B's rows from all of B, and from a part of B
// half the L2 holds); bench/spmm.sh turns them into the cache model's time (%CM).
//
// Check file, written after the timings by every driver:
//   char magic[8] = "DSMMSPC1"; int64 m, k; double y[m]; double z[k]
// with y = C w, z = C^T u, w_j = 1 + ((j * 2654435761) mod 1000) / 1000 and u_i likewise,
// summed in double. --compare checks m and k exactly and max |y1 - y2| / max |y1|, and the
// same for z, against --rtol (relative to the norm: single entries of y may cancel to near 0;
// the runner uses 1e-3 for float and 1e-9 for double).
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

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_common.h"
#include "spmm_model.h"
#include "kernels/kernels.h"
#include "bench_dsmm.h"
#include "dsmm.h"

#define PROG "bench_spmm"

#ifndef DSMM_BENCH_BUILD
#define DSMM_BENCH_BUILD "unknown"
#endif

#define CHK_MAGIC "DSMMSPC1"

typedef struct bench_opts {
    const char *input, *check_path, *name, *alg;
    dsmm_type type;
    dsmm_idx k;
    int symmetrize, transpose, threads, repeat, warmup;
    double min_time;   // seconds of timed runs at least (0: just --repeat)
    dsmm_idx k_block;  // opts.k_block: 0 auto, -1 one pass, > 0 slice width
    int col_tiles;     // col: 1 prepares op(A)^T in tiles (dsmm_spmm_tiles_create) untimed
    int rows;          // row, auto: 1 prepares op(A)'s rows by length (dsmm_spmm_rows_create)
    double l2_model;   // --l2-model: < 0 off, 0 sysfs's L2 size, > 0 that many bytes a thread
    int model_threads; // --model-threads: the threads of the model (0: the run's)
    const char *pair;  // --pair ALG: col's runs alternated in rounds with ALG's (auto or row)
    int pair_rounds;   // --pair-rounds: those rounds (default 7)
} bench_opts;

static int fail(dsmm_ctx *ctx, const char *what)
{
    const char *msg = ctx ? dsmm_ctx_last_error(ctx) : "";
    fprintf(stderr, "bench_spmm: %s: %s\n", what, *msg ? msg : "failed (see above)");
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Check files                                                                               */
/* ---------------------------------------------------------------------------------------- */

// Reads a check file; *y and *z are malloc'ed.
static int check_read(const char *path, int64_t *m, int64_t *k, double **y, double **z)
{
    *y = *z = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "bench_spmm: cannot open %s: %s\n", path, strerror(errno));
        return 0;
    }
    char magic[8];
    int64_t h[2];
    int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, CHK_MAGIC, 8) == 0 &&
             fread(h, sizeof h[0], 2, f) == 2 && h[0] >= 0 && h[1] >= 0;
    if (ok) {
        *y = malloc(((size_t)h[0] + 1) * sizeof **y);
        *z = malloc(((size_t)h[1] + 1) * sizeof **z);
        ok = *y != NULL && *z != NULL && fread(*y, sizeof **y, (size_t)h[0], f) == (size_t)h[0] &&
             fread(*z, sizeof **z, (size_t)h[1], f) == (size_t)h[1] && fgetc(f) == EOF;
    }
    fclose(f);
    if (!ok) {
        fprintf(stderr, "bench_spmm: %s: not an SpMM check file, truncated or too long\n", path);
        free(*y);
        free(*z);
        *y = *z = NULL;
        return 0;
    }
    *m = h[0];
    *k = h[1];
    return 1;
}

// max |a - b| / max(|a|, |b|) over the vectors (0 when both are 0; infinite for NaN).
static double norm_rel_diff(const double *a, const double *b, int64_t n, int64_t *where)
{
    double dmax = 0.0, amax = 0.0;
    *where = -1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (d != d) d = INFINITY; // NaN on either side
        if (d > dmax) {
            dmax = d;
            *where = i;
        }
        amax = fmax(amax, fmax(fabs(a[i]), fabs(b[i])));
    }
    if (dmax == 0.0) return 0.0;
    return amax > 0.0 && isfinite(amax) ? dmax / amax : INFINITY;
}

static int compare_main(int argc, char **argv)
{
    double rtol = 1e-9;
    if (argc != 4 && !(argc == 6 && strcmp(argv[4], "--rtol") == 0)) {
        fprintf(stderr, "usage: bench_spmm --compare REF.chk OTHER.chk [--rtol R]\n");
        return 2;
    }
    if (argc == 6) {
        char *end = NULL;
        rtol = strtod(argv[5], &end);
        if (end == argv[5] || *end != '\0' || !(rtol >= 0.0)) {
            fprintf(stderr, "bench_spmm: --rtol '%s' is not a number >= 0\n", argv[5]);
            return 2;
        }
    }
    int64_t m1, k1, m2, k2;
    double *y1 = NULL, *z1 = NULL, *y2 = NULL, *z2 = NULL;
    int rc = 1;
    if (!check_read(argv[2], &m1, &k1, &y1, &z1) || !check_read(argv[3], &m2, &k2, &y2, &z2))
        goto done;
    if (m1 != m2 || k1 != k2) {
        printf("DISAGREE C is %lld x %lld vs %lld x %lld\n", (long long)m1, (long long)k1,
               (long long)m2, (long long)k2);
        goto done;
    }
    int64_t ay, az;
    double ry = norm_rel_diff(y1, y2, m1, &ay), rz = norm_rel_diff(z1, z2, k1, &az);
    if (ry > rtol) {
        printf("DISAGREE y = C w: y[%lld] = %.17g vs %.17g (%.3g of max |y| > %.3g)\n",
               (long long)ay, y1[ay], y2[ay], ry, rtol);
        goto done;
    }
    if (rz > rtol) {
        printf("DISAGREE z = C^T u: z[%lld] = %.17g vs %.17g (%.3g of max |z| > %.3g)\n",
               (long long)az, z1[az], z2[az], rz, rtol);
        goto done;
    }
    printf("agree C %lld x %lld, relative difference y %.3g, z %.3g\n", (long long)m1,
           (long long)k1, ry, rz);
    rc = 0;
done:
    free(y1);
    free(z1);
    free(y2);
    free(z2);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Input preparation (as bench/bench_spgemm.c prepares it)                                   */
/* ---------------------------------------------------------------------------------------- */

// *A := a copy with values of `type` and sorted rows, 32-bit columns when they fit.
static dsmm_status retype(dsmm_ctx *ctx, dsmm_csr **A, dsmm_type type)
{
    dsmm_status st = DSMM_OK;
    if ((*A)->type != type) {
        dsmm_csr *D = NULL;
        st = dsmm_csr_copy(ctx, *A, type, &D);
        if (st != DSMM_OK) return st;
        dsmm_csr_destroy(A);
        *A = D;
    }
    if (!(*A)->sorted) st = dsmm_csr_sort_inplace(ctx, *A, DSMM_DUP_SUM);
    if (st == DSMM_OK && (*A)->ncols <= INT32_MAX && (*A)->colidx32 == NULL)
        st = dsmm_csr_set_col_width(*A, 32);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* The dsmm timings                                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef unsigned long long gvec __attribute__((vector_size(16), aligned(8))); // SSE2-sized

static volatile unsigned long long gather_sink; // gather_gbps's XOR of what it read

// One thread's share of gather_gbps: the pieces idx[0..n) of `piece` bytes XORed together,
// a 64-byte line a step, in 16-byte loads (any x86-64 or other CPU). gather_gbps prefers the
// AVX-512 and AVX2 forms below where the CPU has them: a line in one AVX-512 load lets more
// lines be in flight than four 16-byte loads do (random 256-byte pieces of an 80 MiB buffer,
// 2 threads, this Intel VM: 19 GB/s against 10), and dsmm's kernels use those widths.
static unsigned long long gather_lines(const char *b, const uint32_t *idx, size_t n, size_t piece)
{
    gvec a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i++) {
        const char *q = b + (size_t)idx[i] * piece;
        for (size_t v = 0; v < piece; v += 64) {
            gvec y0, y1, y2, y3;
            memcpy(&y0, q + v, 16);
            memcpy(&y1, q + v + 16, 16);
            memcpy(&y2, q + v + 32, 16);
            memcpy(&y3, q + v + 48, 16);
            a0 ^= y0;
            a1 ^= y1;
            a2 ^= y2;
            a3 ^= y3;
        }
    }
    a0 ^= a1 ^ a2 ^ a3;
    return a0[0] ^ a0[1];
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx512f"))) static unsigned long long
gather_lines_512(const char *b, const uint32_t *idx, size_t n, size_t piece)
{
    __m512i acc = _mm512_setzero_si512();
    for (size_t i = 0; i < n; i++) {
        const char *q = b + (size_t)idx[i] * piece;
        for (size_t v = 0; v < piece; v += 64)
            acc = _mm512_xor_si512(acc, _mm512_loadu_si512(q + v));
    }
    unsigned long long o[8];
    _mm512_storeu_si512(o, acc);
    return o[0] ^ o[7];
}

__attribute__((target("avx2"))) static unsigned long long
gather_lines_256(const char *b, const uint32_t *idx, size_t n, size_t piece)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    for (size_t i = 0; i < n; i++) {
        const char *q = b + (size_t)idx[i] * piece;
        for (size_t v = 0; v < piece; v += 64) {
            a0 = _mm256_xor_si256(a0, _mm256_loadu_si256((const __m256i *)(q + v)));
            a1 = _mm256_xor_si256(a1, _mm256_loadu_si256((const __m256i *)(q + v + 32)));
        }
    }
    unsigned long long o[4];
    _mm256_storeu_si256((__m256i *)o, _mm256_xor_si256(a0, a1));
    return o[0] ^ o[3];
}
#endif

// The rate at which `threads` threads read pieces of `piece` bytes (a multiple of 64) at
// uniformly random piece positions of the `bytes` bytes at b, in GB/s (best of 8 after a
// warm-up; 64 MiB or 4 * bytes read a round, whichever is more). With the pieces B's rows
// and b B itself, it is what a row of B costs when it is not in the L2: the cache floor's
// bandwidth for B's line misses. Returns 0 when out of memory or nothing to read.
static double gather_gbps(const char *b, size_t bytes, size_t piece, int threads)
{
    size_t npieces = bytes / piece;
    if (npieces == 0) return 0.0;
    double want = 4.0 * (double)bytes > 64.0 * 1048576.0 ? 4.0 * (double)bytes : 64.0 * 1048576.0;
    size_t nacc = (size_t)(want / (double)piece);
    uint32_t *idx = malloc(nacc * sizeof *idx);
    if (idx == NULL) return 0.0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < nacc; i++) { // xorshift64*: uniform enough for positions
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        idx[i] = (uint32_t)(((x * 0x2545f4914f6cdd1dull) >> 32) % npieces);
    }
    double best = 0.0;
    unsigned long long sink = 0;
    for (int r = 0; r < 9; r++) { // best of 8: a descheduled thread spoils a round, not the rate
        double t0 = bench_now();
#pragma omp parallel num_threads(threads) reduction(^ : sink)
        {
            int t = 0, nt = 1;
#ifdef _OPENMP
            t = omp_get_thread_num();
            nt = omp_get_num_threads();
#endif
            size_t lo = nacc * (size_t)t / (size_t)nt, hi = nacc * (size_t)(t + 1) / (size_t)nt;
#if defined(__GNUC__) && defined(__x86_64__)
            if (__builtin_cpu_supports("avx512f"))
                sink ^= gather_lines_512(b, idx + lo, hi - lo, piece);
            else if (__builtin_cpu_supports("avx2"))
                sink ^= gather_lines_256(b, idx + lo, hi - lo, piece);
            else
#endif
                sink ^= gather_lines(b, idx + lo, hi - lo, piece);
        }
        double t = bench_now() - t0;
        double gbps = t > 0 ? (double)nacc * (double)piece / t / 1e9 : 0.0;
        if (r > 0 && gbps > best) best = gbps; // round 0 warms up
    }
    free(idx);
    gather_sink = sink; // keeps the reads
    return best;
}

// Times n runs of the product into t[0..n-1]; DSMM_OK or the first failure's status.
static dsmm_status time_runs(dsmm_ctx *ctx, const dsmm_csr *H, const dsmm_dense *B, dsmm_dense *C,
                             const dsmm_spmm_opts *so, dsmm_spmm_info *info, int n, double *t)
{
    for (int r = 0; r < n; r++) {
        double t0 = bench_now();
        dsmm_status st = dsmm_csr_spmm(ctx, H, B, C, so, info);
        t[r] = bench_now() - t0;
        if (st != DSMM_OK) return st;
    }
    return DSMM_OK;
}

// H is the matrix handed to the kernel (prepared by main), trans its transpose_a. P, when not
// NULL, is op(A) for the paired kernel palg (--pair): the timed runs then alternate in
// o->pair_rounds rounds, a batch of H's runs and a batch of P's on the same B and C, the
// first batch of a round alternating between the two, and the JSON adds the median over the
// rounds of (H's batch median / P's batch median). Both kernels see the same host state within
// a round, so the ratio does not take the drift of a shared machine between two processes.
static int run_dsmm(dsmm_ctx *ctx, const bench_opts *o, const dsmm_csr *H, int trans,
                    dsmm_spmm_alg alg, const dsmm_csr *P, dsmm_spmm_alg palg)
{
    dsmm_spmm_opts so;
    dsmm_spmm_info info;
    dsmm_dense *B = NULL, *C = NULL;
    dsmm_spmm_tiles *tiles = NULL;
    dsmm_spmm_rows *rows = NULL;
    double *t = NULL, *y = NULL, *z = NULL, *pt = NULL, *rt = NULL, prep = 0.0;
    int rc = 1;
    char host[256];
    dsmm_spmm_opts po; // the paired kernel's options
    dsmm_spmm_info pinfo;
    dsmm_spmm_opts_init(&po);
    po.alg = palg;
    po.k_block = o->k_block;

    dsmm_spmm_opts_init(&so);
    so.alg = alg;
    so.transpose_a = trans;
    so.k_block = o->k_block;
    dsmm_idx m = trans ? H->ncols : H->nrows, n = trans ? H->nrows : H->ncols, k = o->k;
    int is_float = o->type == DSMM_FLOAT;
    if (dsmm_dense_create(ctx, n, k, o->type, &B) != DSMM_OK ||
        dsmm_dense_create(ctx, m, k, o->type, &C) != DSMM_OK) {
        rc = fail(ctx, "dense B and C");
        goto done;
    }
    for (dsmm_idx i = 0; i < n; i++) {
        for (dsmm_idx j = 0; j < k; j++) {
            double b = bench_spmm_b((uint64_t)i, (uint64_t)j);
            if (is_float) {
                ((float *)B->val)[i * B->ld + j] = (float)b;
            } else {
                ((double *)B->val)[i * B->ld + j] = b;
            }
        }
    }
    // dsmm_dense_create's zeroed memory may be pages never touched yet; writing them here
    // keeps first-touch page faults out of the timed runs, as in a real application's
    // reused output.
    if (m > 0 && k > 0) memset(C->val, 0, (size_t)m * (size_t)k * (is_float ? 4 : 8));
    if (alg == DSMM_SPMM_COL && o->col_tiles) { // prepared once, as a caller repeating it would
        double t0 = bench_now();
        if (dsmm_spmm_tiles_create(ctx, H, trans, k, o->type, &tiles) != DSMM_OK) {
            rc = fail(ctx, "spmm tiles");
            goto done;
        }
        prep = bench_now() - t0;
        so.tiles = tiles;
    }
    if (o->rows) { // likewise
        double t0 = bench_now();
        if (dsmm_spmm_rows_create(ctx, H, k, o->type, &rows) != DSMM_OK) {
            rc = fail(ctx, "spmm rows");
            goto done;
        }
        prep = bench_now() - t0;
        so.rows = rows;
    }

    double one = 0.0; // the last warm-up's seconds
    for (int w = 0; w < o->warmup; w++) {
        double t0 = bench_now();
        if (dsmm_csr_spmm(ctx, H, B, C, &so, &info) != DSMM_OK) {
            rc = fail(ctx, "spmm");
            goto done;
        }
        one = bench_now() - t0;
    }
    int reps = bench_repeats(o->repeat, o->min_time, one);
    int rounds = P ? o->pair_rounds : 0, per = 0;
    if (P) { // whole rounds of per runs each
        per = (reps + rounds - 1) / rounds;
        reps = per * rounds;
    }
    t = malloc((size_t)reps * sizeof *t);
    y = malloc(((size_t)m + 1) * sizeof *y);
    z = malloc(((size_t)k + 1) * sizeof *z);
    pt = P ? malloc((size_t)reps * sizeof *pt) : NULL;
    rt = P ? malloc((size_t)rounds * sizeof *rt) : NULL;
    if (t == NULL || y == NULL || z == NULL || (P && (pt == NULL || rt == NULL))) {
        fprintf(stderr, "bench_spmm: out of memory for the timings and the check\n");
        goto done;
    }
    if (P) {
        for (int w = 0; w < o->warmup; w++) { // the paired kernel's warm-up
            if (dsmm_csr_spmm(ctx, P, B, C, &po, &pinfo) != DSMM_OK) {
                rc = fail(ctx, "paired spmm");
                goto done;
            }
        }
        for (int r = 0; r < rounds; r++) {
            double *th = t + (size_t)r * per, *tp = pt + (size_t)r * per;
            for (int h = 0; h < 2; h++) {
                int mine = (h == 0) == (r % 2 == 0); // H first in even rounds
                dsmm_status st = mine ? time_runs(ctx, H, B, C, &so, &info, per, th)
                                      : time_runs(ctx, P, B, C, &po, &pinfo, per, tp);
                if (st != DSMM_OK) {
                    rc = fail(ctx, mine ? "spmm" : "paired spmm");
                    goto done;
                }
            }
            double mh = bench_median(th, per), mp = bench_median(tp, per);
            rt[r] = mp > 0 ? mh / mp : 0.0;
        }
        // The last runs were P's in even round counts: C is H's again for the check.
        if (rounds % 2 == 0 && dsmm_csr_spmm(ctx, H, B, C, &so, &info) != DSMM_OK) {
            rc = fail(ctx, "spmm");
            goto done;
        }
    } else if (time_runs(ctx, H, B, C, &so, &info, reps, t) != DSMM_OK) {
        rc = fail(ctx, "spmm");
        goto done;
    }
    bench_spmm_check(C->val, is_float, m, k, C->ld, y, z);
    if (o->check_path && !bench_spmm_check_write("bench_spmm", o->check_path, m, k, y, z))
        goto done;

    // The L2 traffic model (row-wise orientation only: H is op(A) in CSR).
    char model[256] = "";
    if (o->l2_model >= 0 && !trans) {
        double cap = o->l2_model > 0 ? o->l2_model : dsmmi_cpu_cache_bytes(2);
        int mt = o->model_threads > 0 ? o->model_threads : info.threads;
        double miss = cap > 0 ? bench_l2_model_misses(H, k, is_float ? 4 : 8, mt, cap) : -1.0;
        if (cap > 0 && miss < 0) // the timings still count; the report leaves %CM out
            fprintf(stderr, "bench_spmm: no L2 model: out of memory, or B of 2^31 lines\n");
        size_t rowb = (size_t)k * (is_float ? 4 : 8);
        size_t piece = rowb < 64 ? 64 : (rowb + 63) / 64 * 64;
        size_t bb = (size_t)n * (size_t)B->ld * (is_float ? 4 : 8);
        // B's rows at random from all of B (an L2 miss's rate) and from a part of B that
        // half the L2 holds (a hit's rate).
        size_t in_l2 = (size_t)(cap / 2) / piece * piece;
        double gg = B->ld == k ? gather_gbps(B->val, bb, piece, info.threads) : 0.0;
        double g2 =
            B->ld == k ? gather_gbps(B->val, in_l2 < bb ? in_l2 : bb, piece, info.threads) : 0.0;
        snprintf(model, sizeof model,
                 ",\"l2_model_bytes\":%.0f,\"l2_model_threads\":%d,\"b_line_misses\":%.0f,"
                 "\"gather_piece\":%zu,\"gather_gbps\":%.6g,\"gather_l2_gbps\":%.6g",
                 cap, mt, miss, piece, gg, g2);
    }
    // Times in run order for the record, then sorted for the median.
    char times[4096];
    size_t len = 0;
    times[0] = '\0';
    for (int r = 0; r < reps && r < 64 && len + 32 < sizeof times; r++) { // the first 64
        len += (size_t)snprintf(times + len, sizeof times - len, "%s%.6g", r ? "," : "", t[r]);
    }
    char pair[256] = "";
    if (P) {
        double pmed = bench_median(pt, reps), rmed = bench_median(rt, rounds);
        snprintf(pair, sizeof pair,
                 ",\"pair_alg\":\"%s\",\"pair_median_s\":%.6g,\"pair_rounds\":%d,"
                 "\"pair_ratio\":%.6g,\"pair_ratio_min\":%.6g,\"pair_ratio_max\":%.6g",
                 dsmm_spmm_alg_name(pinfo.alg), pmed, rounds, rmed, rt[0], rt[rounds - 1]);
    }
    double med = bench_median(t, reps), tmin = t[0];
    double flops = 2.0 * (double)H->nnz * (double)k;
    double bytes = dsmm_spmm_bytes(H, trans, k, o->type, 0.0);
    double w = is_float ? 4.0 : 8.0;
    bench_hostname(host, sizeof host);
    printf("{\"bench\":\"spmm\",\"system\":\"dsmm\",\"name\":\"%s\",\"build\":\"%s\","
           "\"version\":\"%s\",\"machine\":\"%s\",\"ranks\":1,\"threads\":%d,"
           "\"algorithm\":\"%s\",\"transpose\":%d,\"m\":%lld,\"n\":%lld,\"nnz\":%lld,"
           "\"k\":%lld,\"type\":\"%s\",\"repeats\":%d,\"median_s\":%.6g,\"min_s\":%.6g,"
           "\"times\":[%s],\"gflops\":%.6g,\"bytes\":%.0f,\"gbps\":%.6g,\"b_bytes\":%.0f,"
           "\"c_bytes\":%.0f,\"workspace_bytes\":%zu,\"k_block\":%lld,\"passes\":%d,"
           "\"tiles\":%d,\"tiles_bytes\":%zu,\"tiles_height\":%lld,\"tiles_segments\":%lld,"
           "\"tiles_runs\":%lld,\"tiles_windows\":%lld,\"tiles_chunk\":%d,"
           "\"rows\":%d,\"rows_reordered\":%d,\"rows_bytes\":%zu,\"prepare_s\":%.6g,\"peak_rss_"
           "kb\":%ld%s%s}\n",
           o->name, DSMM_BENCH_BUILD, dsmm_version(), host, info.threads,
           dsmm_spmm_alg_name(info.alg), o->transpose, (long long)m, (long long)n,
           (long long)H->nnz, (long long)k, is_float ? "float" : "double", reps, med, tmin, times,
           med > 0 ? flops / med / 1e9 : 0.0, bytes, med > 0 ? bytes / med / 1e9 : 0.0,
           (double)n * (double)k * w, (double)m * (double)k * w, info.workspace_bytes,
           (long long)info.k_block, info.passes, tiles != NULL, dsmm_spmm_tiles_bytes(tiles),
           (long long)(tiles ? tiles->height : 0), (long long)(tiles ? tiles->nseg : 0),
           (long long)(tiles ? tiles->nruns : 0), (long long)(tiles ? tiles->nwin : 0),
           tiles ? tiles->slice : 0, rows != NULL, rows != NULL && rows->crow != NULL,
           dsmm_spmm_rows_bytes(rows), prep, bench_peak_rss_kb(), model, pair);
    fflush(stdout);
    rc = 0;
done:
    dsmm_spmm_tiles_destroy(&tiles);
    dsmm_spmm_rows_destroy(&rows);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    free(t);
    free(y);
    free(z);
    free(pt);
    free(rt);
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_spmm INPUT [--k K] [--type float|double] [--threads N]\n"
            "                  [--alg auto|row|col|ref] [--transpose] [--repeat R] [--warmup W]\n"
            "                  [--min-time S] [--symmetrize] [--name NAME] [--check FILE]\n"
            "                  [--k-block KB] [--col-tiles 0|1] [--rows] [--col-tile-bytes N]\n"
            "                  [--col-tile-prefetch D] [--col-tile-runs -1|0|1]\n"
            "                  [--col-tile-rows 0|1] [--col-tile-window KIB]\n"
            "                  [--col-tile-slice -1|0|1]\n"
            "                  [--col-tile-stream 0|1]\n"
            "                  [--col-split-bytes W]\n"
            "                  [--row-stream MIB]\n"
            "                  [--row-buffer-k K] [--row-prefetch D] [--row-odd-mask 0|1|2]\n"
            "                  [--row-gather -1|0|1] [--vec-bytes 32|64] [--min-thread-work N]\n"
            "                  [--row-block-prefetch -1|D]\n"
            "                  [--l2-model BYTES] [--model-threads T]\n"
            "                  [--pair auto|row] [--pair-rounds R]\n"
            "       bench_spmm --compare REF.chk OTHER.chk [--rtol R]\n"
            "INPUT: raw CSR file, any file dsmm_read reads, rmat:SCALE[:SEED] or "
            "rmatd:SCALE[:SEED]\n");
}

// A whole decimal number in [lo, hi] into *v; 0 (with a message) otherwise.
static int parse_int(const char *opt, const char *s, long long lo, long long hi, long long *v)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || x < lo || x > hi) {
        fprintf(stderr, "bench_spmm: %s '%s': expected a whole number in %lld..%lld\n", opt, s, lo,
                hi);
        return 0;
    }
    *v = x;
    return 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--compare") == 0) return compare_main(argc, argv);
    bench_opts o = {.alg = "auto",
                    .type = DSMM_DOUBLE,
                    .k = 64,
                    .repeat = 5,
                    .warmup = 1,
                    .col_tiles = 1,
                    .l2_model = -1.0,
                    .pair_rounds = 7};
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        long long x = 0;
        if (strcmp(s, "--symmetrize") == 0) {
            o.symmetrize = 1;
        } else if (strcmp(s, "--transpose") == 0) {
            o.transpose = 1;
        } else if (v && strcmp(s, "--k") == 0) {
            if (!parse_int(s, argv[++a], 1, INT32_MAX, &x)) return 2;
            o.k = (dsmm_idx)x;
        } else if (v && strcmp(s, "--type") == 0) {
            a++;
            if (strcmp(v, "float") == 0) {
                o.type = DSMM_FLOAT;
            } else if (strcmp(v, "double") == 0) {
                o.type = DSMM_DOUBLE;
            } else {
                fprintf(stderr, "bench_spmm: --type '%s': expected float or double\n", v);
                return 2;
            }
        } else if (v && strcmp(s, "--threads") == 0) {
            if (!parse_int(s, argv[++a], 0, 4096, &x)) return 2;
            o.threads = (int)x;
        } else if (v && strcmp(s, "--repeat") == 0) {
            if (!parse_int(s, argv[++a], 1, 100000, &x)) return 2;
            o.repeat = (int)x;
        } else if (v && strcmp(s, "--warmup") == 0) {
            if (!parse_int(s, argv[++a], 0, 100000, &x)) return 2;
            o.warmup = (int)x;
        } else if (v && strcmp(s, "--min-time") == 0) {
            if (!bench_parse_min_time("bench_spmm", argv[++a], &o.min_time)) return 2;
        } else if (v && strcmp(s, "--alg") == 0) {
            o.alg = argv[++a];
        } else if (v && strcmp(s, "--pair") == 0) {
            o.pair = argv[++a];
        } else if (v && strcmp(s, "--pair-rounds") == 0) {
            if (!parse_int(s, argv[++a], 1, 1000, &x)) return 2;
            o.pair_rounds = (int)x;
        } else if (strcmp(s, "--rows") == 0) {
            o.rows = 1;
        } else if (v && strcmp(s, "--col-tiles") == 0) {
            if (!parse_int(s, argv[++a], 0, 1, &x)) return 2;
            o.col_tiles = (int)x;
        } else if (v && strcmp(s, "--col-tile-bytes") == 0) {
            // dsmmi_spmm_tune.col_tile_bytes: bytes of C a tile covers
            if (!parse_int(s, argv[++a], 1, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.col_tile_bytes = (size_t)x;
        } else if (v && strcmp(s, "--col-tile-runs") == 0) {
            // dsmmi_spmm_tune.col_tile_runs: segmented tiles -1 by run length, 0 never, 1 always
            if (!parse_int(s, argv[++a], -1, 1, &x)) return 2;
            dsmmi_spmm_tune.col_tile_runs = (int)x;
        } else if (v && strcmp(s, "--col-tile-rows") == 0) {
            // dsmmi_spmm_tune.col_tile_rows: rows layout 1 (default), 0 segments or entries
            if (!parse_int(s, argv[++a], 0, 1, &x)) return 2;
            dsmmi_spmm_tune.col_tile_rows = (int)x;
        } else if (v && strcmp(s, "--col-tile-slice") == 0) {
            // dsmmi_spmm_tune.col_tile_slice: k = 1 runs in interleaved chunks (0 = no,
            // -1 = by CPU)
            if (!parse_int(s, argv[++a], -1, 1, &x)) return 2;
            dsmmi_spmm_tune.col_tile_slice = (int)x;
        } else if (v && strcmp(s, "--col-tile-window") == 0) {
            // dsmmi_spmm_tune.col_tile_window: KiB of B a window of the rows layout (0: the LLC;
            // default: all of B)
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.col_tile_window = (size_t)x << 10;
        } else if (v && strcmp(s, "--col-tile-stream") == 0) {
            // dsmmi_spmm_tune.col_tile_stream: tiles built in buffers and streamed out (0 = no)
            if (!parse_int(s, argv[++a], 0, 1, &x)) return 2;
            dsmmi_spmm_tune.col_tile_stream = (int)x;
        } else if (v && strcmp(s, "--col-tile-prefetch") == 0) {
            // dsmmi_spmm_tune.col_tile_prefetch: entries ahead (0 = none)
            if (!parse_int(s, argv[++a], 0, 1000, &x)) return 2;
            dsmmi_spmm_tune.col_tile_prefetch = (dsmm_idx)x;
        } else if (v && strcmp(s, "--col-split-bytes") == 0) {
            // dsmmi_spmm_tune.col_split_bytes (docs/kernels.md): 0 never splits S's rows
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.col_split_bytes = (double)x;
        } else if (v && strcmp(s, "--row-stream") == 0) {
            // dsmmi_spmm_tune.row_stream_min in MiB (docs/kernels.md): 0 never streams
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.row_stream_min = (size_t)x << 20;
        } else if (v && strcmp(s, "--row-buffer-k") == 0) {
            // dsmmi_spmm_tune.row_buffer_k (docs/kernels.md): 0 never uses the buffer
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.row_buffer_k = (dsmm_idx)x;
        } else if (v && strcmp(s, "--row-prefetch") == 0) {
            // dsmmi_spmm_tune.row_prefetch (docs/kernels.md): 0 never prefetches
            if (!parse_int(s, argv[++a], 0, 1024, &x)) return 2;
            dsmmi_spmm_tune.row_prefetch = (dsmm_idx)x;
        } else if (v && strcmp(s, "--row-odd-mask") == 0) {
            // dsmmi_spmm_tune.row_odd_mask (docs/kernels.md): 0 branches on a row's odd entry,
            // 2 masks it at one 32-byte vector whatever the rows' parity
            if (!parse_int(s, argv[++a], 0, 2, &x)) return 2;
            dsmmi_spmm_tune.row_odd_mask = (int)x;
        } else if (v && strcmp(s, "--row-gather") == 0) {
            // dsmmi_spmm_tune.row_gather (docs/kernels.md): k = 1 on AVX-512 gathers
            if (!parse_int(s, argv[++a], -1, 1, &x)) return 2;
            dsmmi_spmm_tune.row_gather = (int)x;
        } else if (v && strcmp(s, "--row-block-prefetch") == 0) {
            // dsmmi_spmm_tune.row_block_prefetch (docs/kernels.md): 0 never prefetches, -1 auto
            if (!parse_int(s, argv[++a], -1, 1024, &x)) return 2;
            dsmmi_spmm_tune.row_block_prefetch = (dsmm_idx)x;
        } else if (v && strcmp(s, "--min-thread-work") == 0) {
            // dsmmi_spmm_tune.min_thread_work (docs/kernels.md): below it per thread, fewer threads
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            dsmmi_spmm_tune.min_thread_work = (double)x;
        } else if (v && strcmp(s, "--vec-bytes") == 0) {
            // dsmmi_spmm_tune.vec_bytes (docs/kernels.md): 32 keeps to AVX2 on AVX-512 CPUs
            if (!parse_int(s, argv[++a], 32, 64, &x) || (x != 32 && x != 64)) {
                fprintf(stderr, "bench_spmm: --vec-bytes must be 32 or 64\n");
                return 2;
            }
            dsmmi_spmm_tune.vec_bytes = (int)x;
        } else if (v && strcmp(s, "--l2-model") == 0) {
            // the traffic model of B's lines into the L2 (bench_l2_model_misses): 0 sysfs's size
            if (!parse_int(s, argv[++a], 0, INT32_MAX, &x)) return 2;
            o.l2_model = (double)x;
        } else if (v && strcmp(s, "--model-threads") == 0) {
            if (!parse_int(s, argv[++a], 1, 4096, &x)) return 2;
            o.model_threads = (int)x;
        } else if (v && strcmp(s, "--k-block") == 0) {
            if (!parse_int(s, argv[++a], -1, INT32_MAX, &x)) return 2;
            o.k_block = (dsmm_idx)x;
        } else if (v && strcmp(s, "--check") == 0) {
            o.check_path = argv[++a];
        } else if (v && strcmp(s, "--name") == 0) {
            o.name = argv[++a];
        } else if (s[0] != '-' && o.input == NULL) {
            o.input = s;
        } else {
            fprintf(stderr, "bench_spmm: unknown option or missing value: '%s'\n", s);
            usage();
            return 2;
        }
    }
    if (o.input == NULL) {
        usage();
        return 2;
    }
    dsmm_spmm_alg alg;
    if (dsmm_spmm_alg_from_name(o.alg, &alg) != DSMM_OK) {
        fprintf(stderr, "bench_spmm: unknown --alg '%s' (auto, row, col, ref, gpu)\n", o.alg);
        return 2;
    }
    dsmm_spmm_alg palg = DSMM_SPMM_AUTO;
    if (o.pair != NULL &&
        (dsmm_spmm_alg_from_name(o.pair, &palg) != DSMM_OK ||
         (palg != DSMM_SPMM_AUTO && palg != DSMM_SPMM_ROW) || alg != DSMM_SPMM_COL)) {
        fprintf(stderr, "bench_spmm: --pair '%s': auto or row, with --alg col\n", o.pair);
        return 2;
    }
    if (o.rows && alg != DSMM_SPMM_ROW && alg != DSMM_SPMM_AUTO) {
        fprintf(stderr, "bench_spmm: --rows: with --alg row or auto\n");
        return 2;
    }
    if (o.name == NULL) o.name = bench_base_name(o.input);

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *T = NULL;
    int rc = 1;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return fail(NULL, "context");
    dsmm_ctx_set_progress(ctx, 0);
    if (dsmm_ctx_set_threads(ctx, o.threads) != DSMM_OK) {
        rc = fail(ctx, "threads");
        goto done;
    }
    if (bench_load(ctx, PROG, o.input, o.symmetrize, &A, NULL) != DSMM_OK) {
        rc = fail(ctx, o.input);
        goto done;
    }
    // The kernel's own orientation, prepared here so that no transpose is timed: col reads
    // op(A)^T (with transpose_a = 1), the others op(A). AUTO resolves to row without a
    // transpose, so it runs as row does.
    // With --pair the other orientation is kept in T for the paired row-wise kernel.
    int col = alg == DSMM_SPMM_COL;
    if (col != o.transpose) {
        if (dsmm_csr_transpose(ctx, A, &T) != DSMM_OK) {
            rc = fail(ctx, "transpose");
            goto done;
        }
        dsmm_csr *t = A;
        A = T;
        T = t;
        if (o.pair == NULL) dsmm_csr_destroy(&T);
    } else if (o.pair != NULL) { // --transpose: col reads A, the row-wise kernel op(A) = A^T
        if (dsmm_csr_transpose(ctx, A, &T) != DSMM_OK) {
            rc = fail(ctx, "transpose");
            goto done;
        }
    }
    if (retype(ctx, &A, o.type) != DSMM_OK || (T && retype(ctx, &T, o.type) != DSMM_OK)) {
        rc = fail(ctx, "preparing A");
        goto done;
    }
    rc = run_dsmm(ctx, &o, A, col, alg, T, palg);
done:
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&T);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
