// bench/bench_dsmm.h: what the drivers that call dsmm (bench_spgemm, bench_spmm) share beyond
// bench_common.h: loading inputs (R-MAT, the raw CSR files of bench_spgemm --export, matrix
// files), symmetrising, and the
// machine and input names in their JSON lines. Header-only; include after dsmm.h.
#ifndef DSMM_BENCH_DSMM_H
#define DSMM_BENCH_DSMM_H

#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "dsmm.h"

#define RAW_MAGIC "DSMMRAW1"

static inline int bench_is_raw(const char *path)
{
    char magic[8];
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    int yes = fread(magic, 1, 8, f) == 8 && memcmp(magic, RAW_MAGIC, 8) == 0;
    fclose(f);
    return yes;
}

// Reads a raw CSR file into a new dsmm CSR of doubles (32-bit columns when the file has them);
// *was_pattern (may be NULL) says whether the matrix was pattern-only. prog names the driver in
// messages.
static inline dsmm_status bench_raw_read(dsmm_ctx *ctx, const char *prog, const char *path,
                                         dsmm_csr **out, int *was_pattern)
{
    dsmm_status st = DSMM_ERR_IO;
    dsmm_csr *A = NULL;
    *out = NULL;
    int64_t h[5];
    FILE *f = bench_raw_open(prog, path, h);
    if (f == NULL) return DSMM_ERR_IO;
    st = dsmm_csr_create(ctx, h[0], h[1], h[2], DSMM_DOUBLE, &A);
    if (st == DSMM_OK && h[3] == 4) st = dsmm_csr_set_col_width(A, 32);
    if (st != DSMM_OK) goto done;
    st = DSMM_ERR_IO;
    if (fread(A->rowptr, sizeof(int64_t), (size_t)h[0] + 1, f) != (size_t)h[0] + 1) goto done;
    size_t nnz = (size_t)h[2];
    if (h[3] == 4 ? fread(A->colidx32, 4, nnz, f) != nnz : fread(A->colidx, 8, nnz, f) != nnz)
        goto done;
    if (fread(A->val, sizeof(double), nnz, f) != nnz) goto done;
    A->nnz = h[2];
    A->sorted = 1;
    st = dsmm_csr_check(ctx, A);
    if (st != DSMM_OK) goto done;
    if (was_pattern) *was_pattern = (int)(h[4] & 1);
    *out = A;
    A = NULL;
done:
    fclose(f);
    dsmm_csr_destroy(&A);
    return st;
}

// A := max(A, A^T) entrywise, through triples.
static inline dsmm_status bench_symmetrize(dsmm_ctx *ctx, dsmm_csr **A)
{
    dsmm_coo *T = NULL;
    dsmm_csr *S = NULL;
    dsmm_status st = dsmm_csr_to_coo(ctx, *A, &T);
    dsmm_idx m = T ? T->nnz : 0;
    for (dsmm_idx k = 0; st == DSMM_OK && k < m; k++) {
        double v = (*A)->type == DSMM_PATTERN ? 1.0 : dsmm_csr_value(*A, k);
        st = dsmm_coo_push(T, T->col[k], T->row[k], v);
    }
    if (st == DSMM_OK) st = dsmm_coo_to_csr(ctx, T, DSMM_DUP_MAX, &S);
    dsmm_coo_destroy(&T);
    if (st == DSMM_OK) {
        dsmm_csr_destroy(A);
        *A = S;
    }
    return st;
}

// The host name, made safe for a JSON string.
static inline void bench_hostname(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0) snprintf(buf, n, "unknown");
    buf[n - 1] = '\0';
    for (char *p = buf; *p; p++) {
        if (*p == '"' || *p == '\\') *p = '_';
    }
}

static inline const char *bench_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

// Loads a benchmark input: rmat:SCALE[:SEED] / rmatd:SCALE[:SEED] (Graph500 R-MAT, symmetric or
// directed, pattern), a raw CSR file, or any file dsmm_read reads; then max(A, A^T) when
// symmetrize. *was_pattern (may be NULL) says whether the input had no values.
static inline dsmm_status bench_load(dsmm_ctx *ctx, const char *prog, const char *input,
                                     int symmetrize, dsmm_csr **out, int *was_pattern)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL;
    int pat = 0;
    *out = NULL;
    int directed = strncmp(input, "rmatd:", 6) == 0;
    if (strncmp(input, "rmat:", 5) == 0 || directed) {
        dsmm_gen_params p;
        dsmm_gen_params_init(&p);
        char *end = NULL;
        p.scale = (int)strtol(input + (directed ? 6 : 5), &end, 10);
        p.seed = *end == ':' ? strtoull(end + 1, NULL, 10) : 1;
        p.edge_factor = 16;
        p.a = 0.57;
        p.b = p.c = 0.19;
        p.d = 0.05;
        p.symmetric = !directed;
        p.self_loops = 0;
        p.type = DSMM_PATTERN;
        st = dsmm_gen_rmat(ctx, &p, &A);
    } else if (bench_is_raw(input)) {
        st = bench_raw_read(ctx, prog, input, &A, &pat);
    } else {
        dsmm_read_opts ro;
        dsmm_read_opts_init(&ro);
        st = dsmm_read(ctx, input, &ro, &A, NULL, NULL);
    }
    if (st != DSMM_OK) goto done;
    if (A->type == DSMM_PATTERN) pat = 1;
    if (symmetrize) {
        st = dsmm_csr_set_col_width(A, 64); // triples take 64-bit columns
        if (st == DSMM_OK) st = bench_symmetrize(ctx, &A);
        if (st != DSMM_OK) goto done;
    }
    if (was_pattern) *was_pattern = pat;
    *out = A;
    A = NULL;
done:
    dsmm_csr_destroy(&A);
    return st;
}

#endif // DSMM_BENCH_DSMM_H
