// bench/bench_common.h: what the SpGEMM benchmark drivers (bench_spgemm, spgemm_graphblas,
// spgemm_petsc) share: timers, peak RSS, medians, the check vector, the check file and the raw
// CSR header (formats in bench/bench_spgemm.c); and, for the SpMM drivers (bench_spmm,
// spmm_graphblas), the dense B and the SpMM check (bench/bench_spmm.c). Header-only; each
// driver compiles alone.
// Needs _DEFAULT_SOURCE (getrusage) before the system headers, as every driver defines.
#ifndef DSMM_BENCH_COMMON_H
#define DSMM_BENCH_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline long bench_peak_rss_kb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return ru.ru_maxrss; // kilobytes on Linux
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// Sorts t in place.
static inline double bench_median(double *t, int n)
{
    if (n <= 0) return 0.0;
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

// The number of timed runs: at least `repeat`, and, with min_time > 0, enough runs of `one`
// seconds each (the last warm-up's time; none: just `repeat`) to fill min_time, at most
// BENCH_MAX_REPEAT. Products of a few microseconds are timed over many runs this way, like
// Python's timeit autorange; every SpMM and SpGEMM driver applies the same rule (the two
// scipy drivers in Python).
#define BENCH_MAX_REPEAT 100000
static inline int bench_repeats(int repeat, double min_time, double one)
{
    if (min_time <= 0.0 || one <= 0.0) return repeat; // no warm-up: no measure of a run
    double want = min_time / one + 1.0;
    if (want > (double)BENCH_MAX_REPEAT) want = (double)BENCH_MAX_REPEAT;
    return (int)want > repeat ? (int)want : repeat;
}

// --min-time's value s: seconds in 0..3600 into *v; 0, with a message naming prog, otherwise.
static inline int bench_parse_min_time(const char *prog, const char *s, double *v)
{
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !(x >= 0.0 && x <= 3600.0)) {
        fprintf(stderr, "%s: --min-time '%s': expected seconds in 0..3600\n", prog, s);
        return 0;
    }
    *v = x;
    return 1;
}

// Entry j of the check vector x (y = C x goes to the check file).
static inline double bench_check_x(uint64_t j)
{
    return 1.0 + (double)((j * 2654435761u) % 1000u) / 1000.0;
}

// Writes the check file "DSMMCHK1", nrows, nnz(C), stored zeros, y[nrows]; 1 on success.
static inline int bench_check_write(const char *prog, const char *path, int64_t nrows, int64_t nnz,
                                    int64_t zeros, const double *y)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return 0;
    }
    int64_t h[3] = {nrows, nnz, zeros};
    int ok = fwrite("DSMMCHK1", 1, 8, f) == 8 && fwrite(h, sizeof h[0], 3, f) == 3 &&
             (nrows == 0 || fwrite(y, sizeof *y, (size_t)nrows, f) == (size_t)nrows);
    if (fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "%s: writing %s failed\n", prog, path);
    return ok;
}

// Opens a raw CSR file and checks its header (h: nrows, ncols, nnz, column bytes 4 or 8,
// flags) against the file's length; the file is left at the row pointers. NULL on error.
static inline FILE *bench_raw_open(const char *prog, const char *path, int64_t h[5])
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
        return NULL;
    }
    char magic[8];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "DSMMRAW1", 8) != 0 ||
        fread(h, sizeof h[0], 5, f) != 5 || h[0] < 0 || h[1] < 0 || h[2] < 0 ||
        (h[3] != 4 && h[3] != 8) || (h[3] == 4 && h[1] > INT32_MAX)) {
        fprintf(stderr, "%s: %s: not a raw CSR file (bad header)\n", prog, path);
        fclose(f);
        return NULL;
    }
    long long want = 48 + 8 * (h[0] + 1) + (h[3] + 8) * h[2];
    if (fseek(f, 0, SEEK_END) != 0 || ftell(f) != want || fseek(f, 48, SEEK_SET) != 0) {
        fprintf(stderr, "%s: %s: length differs from the %lld bytes its header says\n", prog, path,
                want);
        fclose(f);
        return NULL;
    }
    return f;
}

/* ---------------------------------------------------------------------------------------- */
/* SpMM (bench_spmm, spmm_graphblas, spmm_scipy.py; formats in bench/bench_spmm.c)           */
/* ---------------------------------------------------------------------------------------- */

// Entry (i, j) of the dense B of the SpMM benchmark: murmur3's 64-bit finaliser of
// i * 0x9E3779B97F4A7C15 + j (mod 2^64), top 24 bits mapped to [-1, 1). Every system computes
// it itself, so no file of B is needed, and 24 bits make each value exact in float and double:
// the float and double runs multiply the same B. spmm_scipy.py repeats the formula.
static inline double bench_spmm_b(uint64_t i, uint64_t j)
{
    uint64_t h = i * 0x9E3779B97F4A7C15u + j;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53u;
    h ^= h >> 33;
    return (double)(h >> 40) / 8388608.0 - 1.0; // (h >> 40) / 2^23 - 1
}

// The SpMM check of a row-major m x k C (float when is_float, else double; leading dimension
// ld): y = C w (y[m]) and z = C^T u (z[k]) with w_j = bench_check_x(j), u_i = bench_check_x(i),
// summed in double. y catches a wrong row, z a wrong column that y's weights might hide.
static inline void bench_spmm_check(const void *C, int is_float, int64_t m, int64_t k, int64_t ld,
                                    double *y, double *z)
{
    for (int64_t j = 0; j < k; j++) z[j] = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double s = 0.0, u = bench_check_x((uint64_t)i);
        for (int64_t j = 0; j < k; j++) {
            double c =
                is_float ? (double)((const float *)C)[i * ld + j] : ((const double *)C)[i * ld + j];
            s += c * bench_check_x((uint64_t)j);
            z[j] += u * c;
        }
        y[i] = s;
    }
}

// Writes the SpMM check file "DSMMSPC1", m, k, y[m], z[k]; 1 on success.
static inline int bench_spmm_check_write(const char *prog, const char *path, int64_t m, int64_t k,
                                         const double *y, const double *z)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return 0;
    }
    int64_t h[2] = {m, k};
    int ok = fwrite("DSMMSPC1", 1, 8, f) == 8 && fwrite(h, sizeof h[0], 2, f) == 2 &&
             (m == 0 || fwrite(y, sizeof *y, (size_t)m, f) == (size_t)m) &&
             (k == 0 || fwrite(z, sizeof *z, (size_t)k, f) == (size_t)k);
    if (fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "%s: writing %s failed\n", prog, path);
    return ok;
}

#endif // DSMM_BENCH_COMMON_H
