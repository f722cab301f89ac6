// bench/stream.c: the memory bandwidth bench/spmm.sh measures SpMM against: STREAM's triad
// (dsmm_stream_triad, three arrays of --bytes each, best of --repeat after a warm-up) at each
// thread count, printed as one JSON line with a gbps_<N>t key per thread count.
// Usage: stream [--threads 1,2] [--bytes 64M] [--repeat 5]
#define _DEFAULT_SOURCE // gethostname beside _POSIX_C_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsmm.h"

#ifndef DSMM_BENCH_BUILD
#define DSMM_BENCH_BUILD "unknown"
#endif

#define MAX_COUNTS 16

static void usage(void)
{
    fprintf(stderr, "usage: stream [--threads 1,2] [--bytes 64M] [--repeat 5]\n"
                    "  --threads: comma-separated thread counts (each >= 1)\n"
                    "  --bytes: size of each of the three arrays (suffix K, M, G)\n");
}

// "1,2,4" into counts[]; the number of counts, or 0 (with a message) when malformed.
static int parse_threads(const char *s, int *counts)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end = NULL;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno != 0 || v < 1 || v > 4096 || (*end != ',' && *end != '\0') ||
            n == MAX_COUNTS) {
            fprintf(stderr, "stream: --threads '%s': expected up to %d counts >= 1, like 1,2\n", s,
                    MAX_COUNTS);
            return 0;
        }
        counts[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n == 0) fprintf(stderr, "stream: --threads is empty\n");
    return n;
}

int main(int argc, char **argv)
{
    int counts[MAX_COUNTS] = {1, 2}, ncounts = 2, repeats = 5;
    size_t bytes = 0;
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (v && strcmp(s, "--threads") == 0) {
            ncounts = parse_threads(argv[++a], counts);
            if (ncounts == 0) return 2;
        } else if (v && strcmp(s, "--bytes") == 0) {
            if (dsmm_parse_size(argv[++a], &bytes) != DSMM_OK || bytes < 8192) {
                fprintf(stderr, "stream: --bytes '%s': expected a size of at least 8K\n", v);
                return 2;
            }
        } else if (v && strcmp(s, "--repeat") == 0) {
            char *end = NULL;
            long r = strtol(argv[++a], &end, 10);
            if (end == v || *end != '\0' || r < 1 || r > 10000) {
                fprintf(stderr, "stream: --repeat '%s': expected a whole number in 1..10000\n", v);
                return 2;
            }
            repeats = (int)r;
        } else {
            fprintf(stderr, "stream: unknown option or missing value: '%s'\n", s);
            usage();
            return 2;
        }
    }

    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) {
        fprintf(stderr, "stream: cannot create a dsmm context\n");
        return 1;
    }
    dsmm_ctx_set_progress(ctx, 0);
    double gbps[MAX_COUNTS];
    int rc = 1;
    for (int c = 0; c < ncounts; c++) {
        if (dsmm_ctx_set_threads(ctx, counts[c]) != DSMM_OK ||
            dsmm_stream_triad(ctx, bytes, repeats, &gbps[c]) != DSMM_OK) {
            fprintf(stderr, "stream: %d threads: %s\n", counts[c], dsmm_ctx_last_error(ctx));
            goto done;
        }
    }
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++) {
        if (*p == '"' || *p == '\\') *p = '_';
    }
    printf("{\"bench\":\"stream\",\"kernel\":\"triad\",\"build\":\"%s\",\"version\":\"%s\","
           "\"machine\":\"%s\",\"bytes\":%zu,\"repeats\":%d",
           DSMM_BENCH_BUILD, dsmm_version(), host, bytes ? bytes : (size_t)64 << 20, repeats);
    for (int c = 0; c < ncounts; c++) printf(",\"gbps_%dt\":%.4g", counts[c], gbps[c]);
    printf("}\n");
    rc = 0;
done:
    dsmm_ctx_destroy(&ctx);
    return rc;
}
