// tests/io/test_mtx.c: Matrix Market reader and writer: parsing rules, symmetric expansion,
// duplicate policies, array files, gzip, thread-count independence, exact value round trips,
// identical output for 32- and 64-bit columns.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "check.h"
#include "io/io.h"

static dsmm_status read_str(dsmm_ctx *ctx, const char *text, const dsmm_read_opts *o, dsmm_csr **A,
                            dsmm_file_info *info)
{
    return dsmm_read_buffer(ctx, text, strlen(text), "t.mtx", o, A, NULL, info);
}

// Bitwise equality of two CSR matrices (values compared as bit patterns: -0 != 0, NaN == NaN).
static int same_csr(const dsmm_csr *A, const dsmm_csr *B)
{
    if (A->nrows != B->nrows || A->ncols != B->ncols || A->nnz != B->nnz || A->type != B->type) {
        fprintf(stderr, "shape/type differ: %lldx%lld nnz %lld %d vs %lldx%lld nnz %lld %d\n",
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, (int)A->type,
                (long long)B->nrows, (long long)B->ncols, (long long)B->nnz, (int)B->type);
        return 0;
    }
    if (memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof *A->rowptr) != 0) return 0;
    if (A->nnz && memcmp(A->colidx, B->colidx, (size_t)A->nnz * sizeof *A->colidx) != 0) return 0;
    size_t vs = A->type == DSMM_DOUBLE ? 8 : (A->type == DSMM_FLOAT ? 4 : 0);
    if (vs && A->nnz && memcmp(A->val, B->val, (size_t)A->nnz * vs) != 0) {
        for (dsmm_idx k = 0; k < A->nnz; k++)
            if (memcmp((char *)A->val + k * vs, (char *)B->val + k * vs, vs) != 0) {
                fprintf(stderr, "value %lld differs: %.17g vs %.17g\n", (long long)k,
                        dsmm_csr_value(A, k), dsmm_csr_value(B, k));
                break;
            }
        return 0;
    }
    return 1;
}

// A value from a mix that stresses printing and parsing: random bit patterns (finite),
// uniforms, integers, tiny and huge magnitudes, subnormals and negative zero.
static double rand_value(dsmm_rng *r)
{
    uint64_t u = dsmm_rng_u64(r);
    switch (u % 8) {
    case 0: {
        uint64_t bits = dsmm_rng_u64(r);
        double v;
        memcpy(&v, &bits, sizeof v);
        return isfinite(v) ? v : 1.5;
    }
    case 1:
        return dsmm_rng_uniform(r);
    case 2:
        return (double)((int64_t)(dsmm_rng_u64(r) % 2000001) - 1000000);
    case 3:
        return dsmm_rng_uniform(r) * 1e-300;
    case 4:
        return -dsmm_rng_uniform(r) * 1e300;
    case 5:
        return 4.9e-324 * (double)(dsmm_rng_u64(r) % 1000);
    case 6:
        return (u >> 8) & 1 ? -0.0 : 0.1;
    default:
        return (dsmm_rng_uniform(r) - 0.5) * pow(10.0, (double)(dsmm_rng_u64(r) % 40) - 20);
    }
}

// A random CSR, rows sorted; sym = 1 makes it equal to its transpose.
static int make_random(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, double density, dsmm_type type,
                       int sym, uint64_t seed, dsmm_csr **out)
{
    dsmm_rng r;
    dsmm_rng_init(&r, seed, 7);
    dsmm_csr *A = NULL;
    size_t cells = (size_t)m * (size_t)n;
    double *dense = calloc(cells ? cells : 1, sizeof *dense);
    char *has = calloc(cells ? cells : 1, 1);
    if (!dense || !has) return 1;
    dsmm_idx nnz = 0;
    for (dsmm_idx i = 0; i < m; i++)
        for (dsmm_idx j = 0; j < n; j++) {
            if (sym && j > i) continue;
            if (dsmm_rng_uniform(&r) >= density) continue;
            double v = rand_value(&r);
            if (type == DSMM_FLOAT && !isfinite((float)v)) v = 0.25; // beyond FLT_MAX
            has[i * n + j] = 1;
            dense[i * n + j] = v;
            nnz++;
            if (sym && i != j) {
                has[j * n + i] = 1;
                dense[j * n + i] = v;
                nnz++;
            }
        }
    if (dsmm_csr_create(ctx, m, n, nnz, type, &A) != DSMM_OK) return 1;
    dsmm_idx k = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        for (dsmm_idx j = 0; j < n; j++) {
            if (!has[i * n + j]) continue;
            A->colidx[k] = j;
            if (type == DSMM_DOUBLE) ((double *)A->val)[k] = dense[i * n + j];
            if (type == DSMM_FLOAT) ((float *)A->val)[k] = (float)dense[i * n + j];
            k++;
        }
        A->rowptr[i + 1] = k;
    }
    A->nnz = nnz;
    free(dense);
    free(has);
    *out = A;
    return 0;
}

static int test_general_real(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_file_info info;
    const char *text = "%%MatrixMarket Matrix COORDINATE Real General\r\n"
                       "% a comment\n"
                       "\n"
                       "  3 4 5 \r\n"
                       "1 1 1.5\n"
                       "3 4 -2e3\r\n"
                       "\t2 2   0.1\n"
                       "% comment between entries\n"
                       "1 4 0\n"
                       "\n"
                       "1 2 7";
    CHECK_OK(ctx, read_str(ctx, text, NULL, &A, &info));
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    CHECK_EQ_IDX(A->nrows, 3);
    CHECK_EQ_IDX(A->ncols, 4);
    CHECK_EQ_IDX(A->nnz, 5);
    CHECK(A->type == DSMM_DOUBLE && A->sorted);
    dsmm_idx rp[] = {0, 3, 4, 5}, ci[] = {0, 1, 3, 1, 3};
    double v[] = {1.5, 7, 0, 0.1, -2000};
    for (int k = 0; k < 4; k++) CHECK_EQ_IDX(A->rowptr[k], rp[k]);
    for (int k = 0; k < 5; k++) {
        CHECK_EQ_IDX(A->colidx[k], ci[k]);
        CHECK(((double *)A->val)[k] == v[k]);
    }
    CHECK(info.format == DSMM_FORMAT_MTX && !info.array && info.field == DSMM_MM_REAL);
    CHECK(info.symmetry == DSMM_MM_GENERAL && info.stored == 5 && !info.gzipped);
    CHECK(info.bytes == strlen(text));
    dsmm_csr_destroy(&A);
    // float result
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.type = DSMM_FLOAT;
    CHECK_OK(ctx, read_str(ctx, text, &o, &A, NULL));
    CHECK(A->type == DSMM_FLOAT && ((float *)A->val)[3] == 0.1f);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_symmetric_pattern_skew_integer(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_file_info info;
    const char *pat = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n";
    CHECK_OK(ctx, read_str(ctx, pat, NULL, &A, &info));
    CHECK(A->type == DSMM_PATTERN && A->val == NULL);
    CHECK_EQ_IDX(A->nnz, 5); // (0,0) (0,2) (1,2) (2,0) (2,1)
    CHECK_EQ_IDX(A->rowptr[1], 2);
    CHECK_EQ_IDX(A->colidx[1], 2);
    CHECK_EQ_IDX(A->rowptr[2], 3);
    CHECK_EQ_IDX(A->colidx[2], 2);
    CHECK(info.symmetry == DSMM_MM_SYMMETRIC && info.stored == 3 && info.field == DSMM_MM_PATTERN);
    dsmm_csr_destroy(&A);
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.keep_pattern = 0;
    CHECK_OK(ctx, read_str(ctx, pat, &o, &A, NULL));
    CHECK(A->type == DSMM_DOUBLE && ((double *)A->val)[4] == 1.0);
    dsmm_csr_destroy(&A);

    const char *skew = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n"
                       "3 2 -7\n";
    CHECK_OK(ctx, read_str(ctx, skew, NULL, &A, &info));
    CHECK_EQ_IDX(A->nnz, 4);
    double *v = A->val;
    // row 0: (0,1) = -5; row 1: (1,0) = 5, (1,2) = 7; row 2: (2,1) = -7
    CHECK(v[0] == -5 && v[1] == 5 && v[2] == 7 && v[3] == -7);
    CHECK_EQ_IDX(A->colidx[2], 2);
    CHECK(info.field == DSMM_MM_INTEGER && info.symmetry == DSMM_MM_SKEW);
    dsmm_csr_destroy(&A);

    // 0-based indices (HipMCL -base 0)
    o.base = 0;
    CHECK_OK(ctx, read_str(ctx,
                           "%%MatrixMarket matrix coordinate real general\n2 2 2\n0 0 1\n"
                           "1 0 2\n",
                           &o, &A, NULL));
    CHECK_EQ_IDX(A->rowptr[1], 1);
    CHECK_EQ_IDX(A->colidx[1], 0);
    dsmm_csr_destroy(&A);
    CHECK_ST(ctx,
             read_str(ctx, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 1\n", &o, &A,
                      NULL),
             DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "t.mtx:3: row index 2 out of range 0..1");
    CHECK(A == NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_duplicates(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    const char *text = "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 2 3\n2 1 1\n"
                       "1 2 -1\n1 2 2\n";
    CHECK_ST(ctx, read_str(ctx, text, NULL, &A, NULL), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "t.mtx:5: duplicate entry (1, 2) on lines 3 and 5");
    CHECK(A == NULL);
    dsmm_ctx_clear_error(ctx);
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    double expect[] = {4, 3, -1, 2}; // SUM, MAX, MIN, LAST
    dsmm_dup pol[] = {DSMM_DUP_SUM, DSMM_DUP_MAX, DSMM_DUP_MIN, DSMM_DUP_LAST};
    for (int k = 0; k < 4; k++) {
        o.dup = pol[k];
        CHECK_OK(ctx, read_str(ctx, text, &o, &A, NULL));
        CHECK_OK(ctx, dsmm_csr_check(ctx, A));
        CHECK_EQ_IDX(A->nnz, 2);
        CHECK(((double *)A->val)[0] == expect[k]);
        dsmm_csr_destroy(&A);
    }
    // symmetric: the duplicate is mirrored, and found on the stored lower-triangle lines
    const char *sym = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n2 1\n";
    CHECK_ST(ctx, read_str(ctx, sym, NULL, &A, NULL), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "duplicate entry");
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "on lines 3 and 5");
    dsmm_ctx_clear_error(ctx);
    o.dup = DSMM_DUP_SUM;
    CHECK_OK(ctx, read_str(ctx, sym, &o, &A, NULL));
    CHECK_EQ_IDX(A->nnz, 3);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_array(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_dense *D = NULL;
    dsmm_file_info info;
    // column-major in the file: (0,0)=1 (1,0)=0 (0,1)=3 (1,1)=4 (0,2)=5 (1,2)=6
    const char *text = "%%MatrixMarket matrix array real general\n2 3\n1\n0\n3\n4\n5\n6\n";
    CHECK_OK(ctx, read_str(ctx, text, NULL, &A, &info));
    CHECK(info.array && info.stored == 6);
    CHECK_EQ_IDX(A->nnz, 5); // the zero is not stored
    CHECK_EQ_IDX(A->rowptr[1], 3);
    CHECK(((double *)A->val)[1] == 3 && ((double *)A->val)[3] == 4);
    dsmm_csr_destroy(&A);
    const char *path = test_path("arr.mtx");
    CHECK(test_write_file(path, text, strlen(text)) == 0);
    CHECK_OK(ctx, dsmm_read_dense(ctx, path, DSMM_DOUBLE, &D));
    CHECK(D->nrows == 2 && D->ncols == 3);
    double *d = D->val;
    double expect[] = {1, 3, 5, 0, 4, 6};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) CHECK(d[i * D->ld + j] == expect[i * 3 + j]);
    // write_dense then read_dense: same values
    const char *p2 = test_path("arr2.mtx");
    CHECK_OK(ctx, dsmm_write_dense(ctx, p2, D));
    dsmm_dense *E = NULL;
    CHECK_OK(ctx, dsmm_read_dense(ctx, p2, DSMM_DOUBLE, &E));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) CHECK(((double *)E->val)[i * E->ld + j] == expect[i * 3 + j]);
    dsmm_dense_destroy(&E);
    dsmm_dense_destroy(&D);
    // symmetric array: lower triangle column by column
    const char *sym = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    CHECK(test_write_file(path, sym, strlen(sym)) == 0);
    CHECK_OK(ctx, dsmm_read_dense(ctx, path, DSMM_FLOAT, &D));
    float *f = D->val;
    float fe[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    for (int k = 0; k < 9; k++) CHECK(f[(k / 3) * D->ld + k % 3] == fe[k]);
    dsmm_dense_destroy(&D);
    // coordinate file densified
    const char *coo = "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 9\n";
    CHECK(test_write_file(path, coo, strlen(coo)) == 0);
    CHECK_OK(ctx, dsmm_read_dense(ctx, path, DSMM_DOUBLE, &D));
    CHECK(((double *)D->val)[2] == 9 && ((double *)D->val)[1] == 0);
    dsmm_dense_destroy(&D);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Values that must parse to exactly what strtod gives, on the fast and the slow path.
static int test_exact_parsing(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng r;
    dsmm_rng_init(&r, test_seed(), 11);
    enum { N = 4000 };
    size_t cap = (size_t)N * 64 + 256;
    char *text = malloc(cap);
    double *want = malloc(N * sizeof *want);
    CHECK(text && want);
    size_t len = (size_t)snprintf(text, cap,
                                  "%%%%MatrixMarket matrix coordinate real general\n"
                                  "1 %d %d\n",
                                  N, N);
    for (int k = 0; k < N; k++) {
        char tok[64];
        uint64_t u = dsmm_rng_u64(&r);
        switch (u % 5) {
        case 0:
            snprintf(tok, sizeof tok, "%.17g", rand_value(&r));
            break;
        case 1:
            snprintf(tok, sizeof tok, "%.*g", (int)(u >> 8) % 20 + 1, rand_value(&r));
            break;
        case 2: // random digit strings with a decimal point and an exponent
            snprintf(tok, sizeof tok, "%s%llu.%llue%d", (u >> 9) & 1 ? "-" : "",
                     (unsigned long long)(dsmm_rng_u64(&r) % 100000000000ULL),
                     (unsigned long long)(dsmm_rng_u64(&r) % 1000000000ULL),
                     (int)(dsmm_rng_u64(&r) % 60) - 30);
            break;
        case 3:
            snprintf(tok, sizeof tok, "%llu", (unsigned long long)dsmm_rng_u64(&r));
            break;
        default:
            snprintf(tok, sizeof tok, "0.%019llu%llu", (unsigned long long)(u % 1000),
                     (unsigned long long)(dsmm_rng_u64(&r) % 100000));
        }
        want[k] = strtod(tok, NULL);
        len += (size_t)snprintf(text + len, cap - len, "1 %d %s\n", k + 1, tok);
    }
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, text, len, "exact.mtx", NULL, &A, NULL, NULL));
    for (int k = 0; k < N; k++) {
        double got = ((double *)A->val)[k];
        CHECK_MSG(memcmp(&got, &want[k], sizeof got) == 0, "entry %d: %.17g vs %.17g", k, got,
                  want[k]);
    }
    dsmm_csr_destroy(&A);
    free(text);
    free(want);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// write then read gives the same matrix bit for bit, for every value type and symmetry.
static int test_roundtrip_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_type types[] = {DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
    for (int t = 0; t < 3; t++) {
        for (int sym = 0; sym < 2; sym++) {
            dsmm_csr *A = NULL, *B = NULL;
            dsmm_idx m = 37 + t, n = sym ? m : 23;
            CHECK(make_random(ctx, m, n, 0.2, types[t], sym, seed + (uint64_t)(t * 2 + sym), &A) ==
                  0);
            const char *path = test_path("rt.mtx");
            dsmm_write_opts wo;
            dsmm_write_opts_init(&wo);
            wo.comment = "written by test_mtx\nsecond comment line";
            CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, &wo));
            dsmm_read_opts ro;
            dsmm_read_opts_init(&ro);
            ro.type = types[t] == DSMM_PATTERN ? DSMM_DOUBLE : types[t];
            dsmm_file_info info;
            CHECK_OK(ctx, dsmm_read(ctx, path, &ro, &B, NULL, &info));
            CHECK(info.symmetry == (sym ? DSMM_MM_SYMMETRIC : DSMM_MM_GENERAL));
            CHECK(same_csr(A, B));
            dsmm_csr_destroy(&B);
            // forced general output reads back the same
            wo.symmetric = 0;
            CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, &wo));
            CHECK_OK(ctx, dsmm_read(ctx, path, &ro, &B, NULL, &info));
            CHECK(info.symmetry == DSMM_MM_GENERAL && same_csr(A, B));
            dsmm_csr_destroy(&B);
            dsmm_csr_destroy(&A);
        }
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Large enough for several parsing chunks; every thread count must give the same matrix.
static int test_threads_agree(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    CHECK(make_random(ctx, 1500, 1500, 0.02, DSMM_DOUBLE, 1, test_seed(), &A) == 0);
    CHECK(A->nnz > 2 * 16384); // above the threshold for parallel assembly
    const char *path = test_path("threads.mtx");
    CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, NULL));
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size > (1 << 17));
    for (int t = 1; t <= 5; t++) {
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.threads = t;
        CHECK_OK(ctx, dsmm_read(ctx, path, &o, &B, NULL, NULL));
        CHECK_MSG(same_csr(A, B), "threads %d", t);
        dsmm_csr_destroy(&B);
    }
    // the entry lines reversed: rows arrive unsorted and take the sorting path
    FILE *in = fopen(path, "rb");
    CHECK(in != NULL);
    char *text = malloc((size_t)sb.st_size + 1);
    CHECK(text != NULL && fread(text, 1, (size_t)sb.st_size, in) == (size_t)sb.st_size);
    fclose(in);
    text[sb.st_size] = '\0';
    char *data = strchr(strchr(text, '\n') + 1, '\n') + 1; // after banner and size line
    const char *rpath = test_path("reversed.mtx");
    FILE *out = fopen(rpath, "wb");
    CHECK(out != NULL);
    fwrite(text, 1, (size_t)(data - text), out);
    for (char *e = text + sb.st_size - 1; e > data;) {
        char *b = e - 1;
        while (b >= data && *b != '\n') b--;
        fwrite(b + 1, 1, (size_t)(e - b), out);
        e = b;
    }
    fclose(out);
    free(text);
    for (int t = 1; t <= 4; t++) {
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.threads = t;
        CHECK_OK(ctx, dsmm_read(ctx, rpath, &o, &B, NULL, NULL));
        CHECK_MSG(same_csr(A, B), "reversed, threads %d", t);
        dsmm_csr_destroy(&B);
    }
    // an error deep in the file is reported with the same line whatever the thread count
    FILE *f = fopen(path, "ab");
    CHECK(f != NULL);
    fputs("1 1 oops\n", f);
    fclose(f);
    long long lines = 0;
    f = fopen(path, "rb");
    for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "threads.mtx:%lld: more than", lines);
    for (int t = 1; t <= 3; t++) {
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.threads = t;
        CHECK_ST(ctx, dsmm_read(ctx, path, &o, &B, NULL, NULL), DSMM_ERR_FORMAT);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), want);
        dsmm_ctx_clear_error(ctx);
    }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_gzip(void)
{
    dsmm_ctx *ctx = test_ctx();
    const char *text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 2.5\n3 2 -1\n";
    const char *path = test_path("g.mtx.gz");
    // two gzip members, as `cat a.gz b.gz` makes
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    CHECK(gzwrite(gz, text, 50) == 50);
    gzclose(gz);
    gz = gzopen(path, "ab");
    CHECK(gzwrite(gz, text + 50, (unsigned)strlen(text) - 50) == (int)strlen(text) - 50);
    gzclose(gz);
    dsmm_csr *A = NULL, *B = NULL;
    dsmm_file_info info;
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, &info));
    CHECK(info.gzipped && info.bytes == strlen(text));
    CHECK_OK(ctx, read_str(ctx, text, NULL, &B, NULL));
    CHECK(same_csr(A, B));
    dsmm_csr_destroy(&A);
    // the same bytes through dsmm_read_buffer
    FILE *f = fopen(path, "rb");
    char gzbuf[512];
    size_t n = fread(gzbuf, 1, sizeof gzbuf, f);
    fclose(f);
    CHECK_OK(ctx, dsmm_read_buffer(ctx, gzbuf, n, "g.mtx.gz", NULL, &A, NULL, &info));
    CHECK(info.gzipped && same_csr(A, B));
    dsmm_csr_destroy(&A);
    // a decompression that exceeds the memory budget fails with NOMEM, not a crash
    dsmm_ctx_set_mem_budget(ctx, 40);
    CHECK_ST(ctx, dsmm_read_buffer(ctx, gzbuf, n, "g.mtx.gz", NULL, &A, NULL, NULL),
             DSMM_ERR_NOMEM);
    CHECK(A == NULL);
    dsmm_ctx_set_mem_budget(ctx, 0);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_write_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    CHECK(make_random(ctx, 10, 10, 0.3, DSMM_DOUBLE, 0, 5, &A) == 0);
    const char *bad = test_path("no/such/dir/x.mtx");
    CHECK_ST(ctx, dsmm_write(ctx, bad, A, NULL, NULL), DSMM_ERR_IO);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "x.mtx");
    dsmm_ctx_clear_error(ctx);
    // symmetric output of a non-symmetric matrix is refused and leaves no file
    const char *path = test_path("nonsym.mtx");
    dsmm_write_opts o;
    dsmm_write_opts_init(&o);
    o.symmetric = 1;
    dsmm_csr *R = NULL;
    CHECK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 1\n",
                           NULL, &R, NULL));
    CHECK_ST(ctx, dsmm_write(ctx, path, R, NULL, &o), DSMM_ERR_ARG);
    CHECK(!test_file_exists(path));
    dsmm_ctx_clear_error(ctx);
    // precision option
    o.symmetric = 0;
    o.precision = 3;
    ((double *)R->val)[0] = 3.14159;
    CHECK_OK(ctx, dsmm_write(ctx, path, R, NULL, &o));
    FILE *f = fopen(path, "rb");
    char buf[256] = {0};
    CHECK(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    CHECK_CONTAINS(buf, "2 1 3.14\n");
    CHECK_CONTAINS(buf, "coordinate real general\n2 2 1\n");
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The whole file at path (malloc'ed, NUL-terminated), or NULL.
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

// dsmm_write gives the same bytes for A and for A with 32-bit columns (W), in every text
// format and symmetry mode; returns the 32-bit file's text in *text when asked.
static int same_files(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *W, const char *ext,
                      int symmetric, char **text)
{
    char n64[32], n32[32];
    snprintf(n64, sizeof n64, "w64.%s", ext);
    snprintf(n32, sizeof n32, "w32.%s", ext);
    const char *p64 = test_path(n64), *p32 = test_path(n32);
    dsmm_write_opts o;
    dsmm_write_opts_init(&o);
    o.symmetric = symmetric;
    CHECK_OK(ctx, dsmm_write(ctx, p64, A, NULL, &o));
    CHECK_OK(ctx, dsmm_write(ctx, p32, W, NULL, &o));
    size_t l64 = 0, l32 = 0;
    char *b64 = slurp(p64, &l64), *b32 = slurp(p32, &l32);
    CHECK(b64 != NULL && b32 != NULL);
    CHECK_EQ_IDX(l64, l32);
    CHECK_MSG(memcmp(b64, b32, l64) == 0, "%s files differ (symmetric %d)", ext, symmetric);
    free(b64);
    if (text)
        *text = b32;
    else
        free(b32);
    return TEST_PASS;
}

static int test_write_col32(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_type types[] = {DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
    for (int t = 0; t < 3; t++)
        for (int sym = 0; sym < 2; sym++)
            for (int unsorted = 0; unsorted < 2; unsorted++) {
                dsmm_csr *A = NULL, *W = NULL;
                dsmm_idx m = 41 + t, n = sym ? m : 29;
                CHECK(make_random(ctx, m, n, 0.2, types[t], sym, seed + (uint64_t)(t * 4 + sym),
                                  &A) == 0);
                if (unsorted) { // reverse every row: same entries, unsorted
                    size_t vs = types[t] == DSMM_DOUBLE ? 8 : types[t] == DSMM_FLOAT ? 4 : 0;
                    char tmp[8];
                    for (dsmm_idx i = 0; i < A->nrows; i++)
                        for (dsmm_idx a = A->rowptr[i], b = A->rowptr[i + 1] - 1; a < b; a++, b--) {
                            dsmm_idx c = A->colidx[a];
                            A->colidx[a] = A->colidx[b];
                            A->colidx[b] = c;
                            if (vs == 0) continue;
                            char *va = (char *)A->val + (size_t)a * vs;
                            char *vb = (char *)A->val + (size_t)b * vs;
                            memcpy(tmp, va, vs);
                            memcpy(va, vb, vs);
                            memcpy(vb, tmp, vs);
                        }
                    A->sorted = 0;
                }
                CHECK_OK(ctx, dsmm_csr_check(ctx, A));
                CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, &W));
                CHECK_OK(ctx, dsmm_csr_set_col_width(W, 32));
                CHECK(W->colidx == NULL && W->colidx32 != NULL);
                char *text = NULL;
                CHECK(same_files(ctx, A, W, "mtx", -1, &text) == TEST_PASS);
                // symmetry is detected through 32-bit columns too (sorted rows only)
                const char *want = sym && !unsorted ? " symmetric\n" : " general\n";
                CHECK_CONTAINS(text, want);
                free(text);
                CHECK(same_files(ctx, A, W, "mtx", 0, NULL) == TEST_PASS);
                if (sym && !unsorted) CHECK(same_files(ctx, A, W, "mtx", 1, NULL) == TEST_PASS);
                CHECK(same_files(ctx, A, W, "abc", -1, NULL) == TEST_PASS);
                // and the 32-bit matrix reads back as itself (64-bit)
                dsmm_csr *B = NULL;
                dsmm_read_opts ro;
                dsmm_read_opts_init(&ro);
                ro.type = types[t] == DSMM_PATTERN ? DSMM_DOUBLE : types[t];
                CHECK_OK(ctx, dsmm_read(ctx, test_path("w32.mtx"), &ro, &B, NULL, NULL));
                dsmm_csr_diff d;
                CHECK_OK(ctx, dsmm_csr_compare(ctx, W, B, 0, 0, &d));
                CHECK_MSG(d.equal, "%s", d.what);
                dsmm_csr_destroy(&B);
                dsmm_csr_destroy(&W);
                dsmm_csr_destroy(&A);
            }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_format_detect(void)
{
    CHECK(dsmmi_format_from_name("a.mtx") == DSMM_FORMAT_MTX);
    CHECK(dsmmi_format_from_name("a.MTX.gz") == DSMM_FORMAT_MTX);
    CHECK(dsmmi_format_from_name("a.mm") == DSMM_FORMAT_MTX);
    CHECK(dsmmi_format_from_name("a.abc") == DSMM_FORMAT_ABC);
    CHECK(dsmmi_format_from_name("a.tsv.gz") == DSMM_FORMAT_ABC);
    CHECK(dsmmi_format_from_name("a.edgelist") == DSMM_FORMAT_ABC);
    CHECK(dsmmi_format_from_name("a.dsmm") == DSMM_FORMAT_BIN);
    CHECK(dsmmi_format_from_name("a.bin") == DSMM_FORMAT_BIN);
    CHECK(dsmmi_format_from_name("a.dat") == DSMM_FORMAT_AUTO);
    const char *mm = "%%MatrixMarket matrix coordinate real general\n";
    CHECK(dsmmi_format_detect(mm, strlen(mm), "x.abc") == DSMM_FORMAT_MTX);
    CHECK(dsmmi_format_detect("DSMMBIN1xxxx", 12, "x.mtx") == DSMM_FORMAT_BIN);
    CHECK(dsmmi_format_detect("a b 1\n", 6, "x.dat") == DSMM_FORMAT_ABC);
    CHECK(dsmmi_format_detect("# c\nfoo bar\n", 12, NULL) == DSMM_FORMAT_ABC);
    CHECK(dsmmi_format_detect("a b c d\n", 8, NULL) == DSMM_FORMAT_MTX);
    CHECK(dsmmi_format_detect("a b 1\n", 6, "x.mtx") == DSMM_FORMAT_MTX);
    char buf[32];
    double vals[] = {0.1, 1.0 / 3, 1e-310, -2.5e300, 123456789012345678.0, 5e-324, -0.0};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        dsmmi_format_double(buf, vals[k]);
        double back = strtod(buf, NULL);
        CHECK_MSG(memcmp(&back, &vals[k], sizeof back) == 0, "%s", buf);
    }
    dsmmi_format_double(buf, 0.1);
    CHECK(strcmp(buf, "0.1") == 0);
    dsmmi_format_double(buf, 42);
    CHECK(strcmp(buf, "42") == 0);
    return TEST_PASS;
}

static int test_empty_matrices(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix coordinate real general\n0 0 0\n", NULL, &A,
                           NULL));
    CHECK(A->nrows == 0 && A->nnz == 0);
    dsmm_csr_destroy(&A);
    CHECK_OK(ctx, read_str(ctx, "%%MatrixMarket matrix coordinate pattern general\n5 3 0", NULL, &A,
                           NULL));
    CHECK(A->nrows == 5 && A->ncols == 3 && A->nnz == 0);
    const char *path = test_path("empty.mtx");
    CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, NULL));
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &B, NULL, NULL));
    CHECK(same_csr(A, B));
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every allocation failure on the read path gives NOMEM, no output and no leak.
static int test_read_oom(void)
{
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n1 1 1\n2 1 2\n"
                       "4 3 3\n4 1 2\n";
    for (long k = 0;; k++) {
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = NULL;
        dsmm_ctx_fail_alloc_at(ctx, k);
        dsmm_status st = read_str(ctx, text, NULL, &A, NULL);
        if (st == DSMM_OK) {
            CHECK(A != NULL && A->nnz == 7);
            dsmm_csr_destroy(&A);
            CHECK_NO_LEAK(ctx);
            CHECK(k > 3);
            break;
        }
        CHECK_MSG(st == DSMM_ERR_NOMEM, "k=%ld: %s", k, dsmm_ctx_last_error(ctx));
        CHECK(A == NULL);
        CHECK_NO_LEAK(ctx);
    }
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_general_real),   TEST(test_symmetric_pattern_skew_integer),
        TEST(test_duplicates),     TEST(test_array),
        TEST(test_exact_parsing),  TEST(test_roundtrip_random),
        TEST(test_threads_agree),  TEST(test_gzip),
        TEST(test_write_errors),   TEST(test_format_detect),
        TEST(test_empty_matrices), TEST(test_read_oom),
        TEST(test_write_col32),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
