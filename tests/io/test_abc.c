// tests/io/test_abc.c: abc label triples and mcl's SIF/ETC layouts (src/io/abc.c), the label
// dictionary (src/io/labels.c) and its tab files, cluster output (src/io/clusters.c, mcl's label
// and native formats), and mcl's native matrix format (src/io/mci.c).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "io/io.h"

// Parses text as abc through the internal entry point (no file, no format detection).
static dsmm_status parse(dsmm_ctx *ctx, const char *text, size_t len, const dsmm_read_opts *o,
                         dsmm_csr **A, dsmm_labels **L)
{
    dsmm_read_opts d;
    dsmm_read_opts_init(&d);
    char *copy = malloc(len + 1);
    if (copy == NULL) return DSMM_ERR_NOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    dsmmi_source src = {.buf = copy, .len = len, .name = "net.abc", .gzipped = 0};
    dsmm_file_info info;
    dsmm_status st = dsmmi_abc_parse(ctx, &src, o ? o : &d, A, L, &info);
    free(copy);
    return st;
}

static dsmm_status parse_str(dsmm_ctx *ctx, const char *text, const dsmm_read_opts *o, dsmm_csr **A,
                             dsmm_labels **L)
{
    return parse(ctx, text, strlen(text), o, A, L);
}

// A(i, j) by labels: the value, 0 if absent, NAN if a label is unknown.
static double entry(const dsmm_csr *A, const dsmm_labels *L, const char *a, const char *b)
{
    dsmm_idx i = dsmm_labels_find(L, a), j = dsmm_labels_find(L, b);
    if (i < 0 || j < 0) return NAN;
    for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
        if (A->colidx[k] == j) return dsmm_csr_value(A, k);
    return 0.0;
}

static int test_basic(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    // tabs, spaces, CRLF, comments, blank lines, leading blanks, exponent weights
    const char *text = "# a comment\n"
                       "a\tb\t1.5\r\n"
                       "\n"
                       "   \t \n"
                       "b c 2e0\n"
                       "  # indented comment\n"
                       "c  \t a\t0.25";
    CHECK_OK(ctx, parse_str(ctx, text, NULL, &A, &L));
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    CHECK_EQ_IDX(dsmm_labels_count(L), 3);
    CHECK(strcmp(dsmm_labels_name(L, 0), "a") == 0);
    CHECK(strcmp(dsmm_labels_name(L, 1), "b") == 0);
    CHECK(strcmp(dsmm_labels_name(L, 2), "c") == 0);
    CHECK(dsmm_labels_name(L, 3) == NULL && dsmm_labels_name(L, -1) == NULL);
    CHECK_EQ_IDX(dsmm_labels_find(L, "zz"), -1);
    CHECK_EQ_IDX(A->nrows, 3);
    CHECK_EQ_IDX(A->ncols, 3);
    CHECK_EQ_IDX(A->nnz, 3);
    CHECK(A->type == DSMM_DOUBLE);
    CHECK(entry(A, L, "a", "b") == 1.5);
    CHECK(entry(A, L, "b", "c") == 2.0);
    CHECK(entry(A, L, "c", "a") == 0.25);
    CHECK(entry(A, L, "b", "a") == 0.0); // directed: no symmetrisation
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // The info block and the labels-may-be-NULL path.
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    dsmmi_source src = {.buf = (char *)"x y 3\ny x 4\nx x 1\n", .len = 18, .name = "n2"};
    dsmm_file_info info;
    CHECK_OK(ctx, dsmmi_abc_parse(ctx, &src, &o, &A, NULL, &info));
    CHECK(info.format == DSMM_FORMAT_ABC && info.field == DSMM_MM_REAL);
    CHECK_EQ_IDX(info.nrows, 2);
    CHECK_EQ_IDX(info.stored, 3);
    CHECK_EQ_IDX(info.bytes, 18);
    CHECK_EQ_IDX(A->nnz, 3);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_weights_optional(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);

    // No weight anywhere: a pattern matrix by default.
    CHECK_OK(ctx, parse_str(ctx, "p q\nq r\nr p\n", &o, &A, &L));
    CHECK(A->type == DSMM_PATTERN && A->val == NULL);
    CHECK_EQ_IDX(A->nnz, 3);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // ... or ones when patterns are not kept.
    o.keep_pattern = 0;
    CHECK_OK(ctx, parse_str(ctx, "p q\nq r\n", &o, &A, &L));
    CHECK(A->type == DSMM_DOUBLE);
    CHECK(entry(A, L, "p", "q") == 1.0 && entry(A, L, "q", "r") == 1.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // Mixed: the missing weights are 1, before and after the first weight.
    o.keep_pattern = 1;
    CHECK_OK(ctx, parse_str(ctx, "p q\nq r 0.5\nr p\n", &o, &A, &L));
    CHECK(A->type == DSMM_DOUBLE);
    CHECK(entry(A, L, "p", "q") == 1.0);
    CHECK(entry(A, L, "q", "r") == 0.5);
    CHECK(entry(A, L, "r", "p") == 1.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // Float results, and a pattern result that drops the weights.
    o.type = DSMM_FLOAT;
    CHECK_OK(ctx, parse_str(ctx, "p q 0.1\nq r\n", &o, &A, &L));
    CHECK(A->type == DSMM_FLOAT);
    CHECK(entry(A, L, "p", "q") == (double)0.1f);
    CHECK(entry(A, L, "q", "r") == 1.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    o.type = DSMM_PATTERN;
    CHECK_OK(ctx, parse_str(ctx, "p q 0.1\nq r 7\n", &o, &A, &L));
    CHECK(A->type == DSMM_PATTERN && A->nnz == 2);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Each malformed input fails with DSMM_ERR_FORMAT and a message naming file:line.
static int expect_error(const char *text, size_t len, const dsmm_read_opts *o, const char *want)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = (dsmm_csr *)1;
    dsmm_labels *L = (dsmm_labels *)1;
    CHECK_ST(ctx, parse(ctx, text, len, o, &A, &L), DSMM_ERR_FORMAT);
    CHECK(A == NULL && L == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), want);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_errors(void)
{
    const char *cases[][2] = {
        {"a b 1\nb c 2\nlonely\n", "net.abc:3: one field"},
        {"a b 1\n\nb c 2 3\n", "net.abc:3: more than 3 fields"},
        {"a b 1 x y z\n", "net.abc:1: more than 3 fields"},
        {"a b 1\nb c x1\n", "net.abc:2: weight 'x1' is not a number"},
        {"a b 1.5.2\n", "net.abc:1: weight '1.5.2' is not a number"},
        {"a b 1\n#c\nb c nan\n", "net.abc:3: weight 'nan' is not finite"},
        {"a b inf\n", "net.abc:1: weight 'inf' is not finite"},
        {"a b 1e999\n", "net.abc:1: weight '1e999' is not finite"},
        {"", "net.abc: contains no edges"},
        {"# only\n\n  \n# comments\n", "net.abc: contains no edges"},
        {"a b 1\nc d 2\n\na b 3\n", "net.abc:4: duplicate edge (a, b), first on line 1"},
        {"x y\ny x\n#\nx y\n", "net.abc:4: duplicate edge (x, y), first on line 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (expect_error(cases[c][0], strlen(cases[c][0]), NULL, cases[c][1]) != TEST_PASS) {
            fprintf(stderr, "  case %zu: %s\n", c, cases[c][0]);
            return TEST_FAIL;
        }
    }
    // NUL byte on line 2
    if (expect_error("a b 1\nb \0c 2\n", 13, NULL, "net.abc:2: NUL byte") != TEST_PASS)
        return TEST_FAIL;
    // a line over DSMMI_MAX_LINE on line 2
    size_t big = DSMMI_MAX_LINE + 10;
    char *buf = malloc(big + 16);
    CHECK(buf != NULL);
    memcpy(buf, "a b 1\n", 6);
    memset(buf + 6, 'x', big);
    memcpy(buf + 6 + big, " y\n", 3);
    int r = expect_error(buf, big + 9, NULL, "net.abc:2: line longer than");
    free(buf);
    if (r != TEST_PASS) return r;

    // allow_nonfinite accepts NaN/Inf; other dup policies accept repeats.
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.allow_nonfinite = 1;
    CHECK_OK(ctx, parse_str(ctx, "a b nan\nb a -inf\n", &o, &A, &L));
    CHECK(isnan(entry(A, L, "a", "b")) && entry(A, L, "b", "a") == -INFINITY);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    o.allow_nonfinite = 0;
    o.dup = DSMM_DUP_SUM;
    CHECK_OK(ctx, parse_str(ctx, "a b 1\nb c 2\na b 3\n", &o, &A, &L));
    CHECK_EQ_IDX(A->nnz, 2);
    CHECK(entry(A, L, "a", "b") == 4.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    o.dup = DSMM_DUP_MAX;
    CHECK_OK(ctx, parse_str(ctx, "a b 1\nb c 2\na b 3\na b 2\n", &o, &A, &L));
    CHECK(entry(A, L, "a", "b") == 3.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A budget too small for the labels: DSMM_ERR_NOMEM naming the line, nothing leaked.
static int test_budget(void)
{
    dsmm_ctx *ctx = test_ctx();
    size_t n = 20000, len = 0;
    char *text = malloc(n * 40);
    CHECK(text != NULL);
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "label_%zu other_%zu 1\n", i, i);
    dsmm_ctx_set_mem_budget(ctx, 64 * 1024);
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_status st = parse(ctx, text, len, NULL, &A, &L);
    free(text);
    CHECK_ST(ctx, st, DSMM_ERR_NOMEM);
    CHECK(A == NULL && L == NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every allocation failure gives DSMM_ERR_NOMEM, NULL outputs and no leak.
static int test_oom(void)
{
    const char *text = "a b 1\nb c\nc d 2\nd a 3\n";
    for (long k = 0;; k++) {
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = NULL;
        dsmm_labels *L = NULL;
        dsmm_ctx_fail_alloc_at(ctx, k);
        dsmm_status st = parse_str(ctx, text, NULL, &A, &L);
        if (st == DSMM_OK) {
            CHECK(A != NULL && L != NULL && A->nnz == 4);
            dsmm_csr_destroy(&A);
            dsmm_labels_destroy(&L);
            CHECK_NO_LEAK(ctx);
            CHECK(k > 3);
            break;
        }
        CHECK_MSG(st == DSMM_ERR_NOMEM, "k = %ld: %s", k, dsmm_ctx_last_error(ctx));
        CHECK(A == NULL && L == NULL);
        CHECK_NO_LEAK(ctx);
        CHECK(k < 1000);
    }
    return TEST_PASS;
}

// Many labels: indices in order of first appearance, found again after every rehash.
static int test_labels_many(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_labels *L = NULL;
    CHECK_OK(ctx, dsmmi_labels_create(ctx, &L));
    char name[64];
    dsmm_idx n = 100000, idx;
    for (dsmm_idx i = 0; i < n; i++) {
        int len = snprintf(name, sizeof name, "%s%lld", i % 3 ? "YAL" : "g", (long long)i * 7);
        CHECK_OK(ctx, dsmmi_labels_intern(L, name, (size_t)len, &idx));
        CHECK_EQ_IDX(idx, i);
    }
    // interning again finds the same index; a prefix of a name is a different name
    for (dsmm_idx i = 0; i < n; i += 97) {
        int len = snprintf(name, sizeof name, "%s%lld", i % 3 ? "YAL" : "g", (long long)i * 7);
        CHECK_OK(ctx, dsmmi_labels_intern(L, name, (size_t)len, &idx));
        CHECK_EQ_IDX(idx, i);
        CHECK_EQ_IDX(dsmm_labels_find(L, name), i);
        CHECK(strcmp(dsmm_labels_name(L, i), name) == 0);
    }
    CHECK_EQ_IDX(dsmm_labels_count(L), n);
    CHECK_EQ_IDX(dsmm_labels_find(L, "YAL"), -1);
    CHECK_OK(ctx, dsmmi_labels_intern(L, "", 0, &idx)); // the empty name is a name too
    CHECK_EQ_IDX(idx, n);
    CHECK_EQ_IDX(dsmm_labels_find(L, ""), n);
    CHECK_EQ_IDX(dsmm_labels_count(NULL), 0);
    CHECK_EQ_IDX(dsmm_labels_find(NULL, "a"), -1);
    dsmm_labels_destroy(&L);
    CHECK(L == NULL);
    dsmm_labels_destroy(&L);
    dsmm_labels_destroy(NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

// write -> read gives the same labelled edges, weights bit for bit (shortest round trip).
static int test_roundtrip(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_rng r;
    dsmm_rng_init(&r, seed, 42);
    dsmm_labels *L = NULL, *L2 = NULL;
    dsmm_csr *A = NULL, *B = NULL;
    dsmm_coo *T = NULL;
    dsmm_idx n = 300, idx;
    CHECK_OK(ctx, dsmmi_labels_create(ctx, &L));
    char name[64];
    for (dsmm_idx i = 0; i < n; i++) {
        int len = snprintf(name, sizeof name, "v%llx_%lld", (unsigned long long)dsmm_rng_u64(&r),
                           (long long)i);
        CHECK_OK(ctx, dsmmi_labels_intern(L, name, (size_t)len, &idx));
    }
    CHECK_OK(ctx, dsmm_coo_create(ctx, n, n, 0, DSMM_DOUBLE, &T));
    for (int e = 0; e < 3000; e++) {
        dsmm_idx i = (dsmm_idx)(dsmm_rng_u64(&r) % (uint64_t)n);
        dsmm_idx j = (dsmm_idx)(dsmm_rng_u64(&r) % (uint64_t)n);
        double v = e % 5 == 0 ? -1e300 * dsmm_rng_uniform(&r) : dsmm_rng_uniform(&r) / 3;
        CHECK_OK(ctx, dsmm_coo_push(T, i, j, v));
    }
    CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_LAST, &A));

    for (int pattern = 0; pattern < 2; pattern++) {
        dsmm_csr *W = A;
        dsmm_csr *P = NULL;
        if (pattern) {
            CHECK_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_PATTERN, &P));
            W = P;
        }
        const char *path = test_path("rt.abc");
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        CHECK_OK(ctx, dsmmi_abc_write(ctx, f, W, L, NULL));
        CHECK(fclose(f) == 0);
        size_t len;
        char *text = slurp(path, &len);
        CHECK(text != NULL);
        CHECK(strchr(text, ' ') == NULL); // tab-separated
        CHECK_OK(ctx, parse(ctx, text, len, NULL, &B, &L2));
        free(text);
        CHECK(B->type == (pattern ? DSMM_PATTERN : DSMM_DOUBLE));
        CHECK_EQ_IDX(B->nnz, W->nnz);
        // the same edges, compared through the labels
        for (dsmm_idx i = 0; i < W->nrows; i++) {
            for (dsmm_idx k = W->rowptr[i]; k < W->rowptr[i + 1]; k++) {
                double v = entry(B, L2, dsmm_labels_name(L, i), dsmm_labels_name(L, W->colidx[k]));
                CHECK_MSG(v == dsmm_csr_value(W, k), "(%lld, %lld): %.17g vs %.17g", (long long)i,
                          (long long)W->colidx[k], v, dsmm_csr_value(W, k));
            }
        }
        dsmm_csr_destroy(&B);
        dsmm_labels_destroy(&L2);
        dsmm_csr_destroy(&P);
    }

    // Without labels the indices are the labels; precision limits the digits.
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    wo.precision = 3;
    const char *path = test_path("idx.abc");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_OK(ctx, dsmmi_abc_write(ctx, f, A, NULL, &wo));
    CHECK(fclose(f) == 0);
    size_t len;
    char *text = slurp(path, &len);
    CHECK(text != NULL);
    long long i0, j0;
    double v0;
    CHECK(sscanf(text, "%lld\t%lld\t%lg", &i0, &j0, &v0) == 3);
    CHECK_EQ_IDX(i0, 0);
    CHECK_EQ_IDX(j0, A->colidx[0]);
    CHECK_NEAR(v0, dsmm_csr_value(A, 0), 5e-3 * fabs(v0) + 1e-300);
    free(text);

    // Too few labels for the matrix is an argument error.
    dsmm_labels *small = NULL;
    CHECK_OK(ctx, dsmmi_labels_create(ctx, &small));
    f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_ST(ctx, dsmmi_abc_write(ctx, f, A, small, NULL), DSMM_ERR_ARG);
    fclose(f);
    dsmm_ctx_clear_error(ctx);
    dsmm_labels_destroy(&small);

    dsmm_coo_destroy(&T);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_clusters(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_labels *L = NULL;
    dsmm_idx idx;
    CHECK_OK(ctx, dsmmi_labels_create(ctx, &L));
    const char *names[] = {"v0", "v1", "v2", "v3", "v4", "v5"};
    for (int i = 0; i < 6; i++) CHECK_OK(ctx, dsmmi_labels_intern(L, names[i], 2, &idx));
    // cluster 1 is empty (no line), members come out in increasing vertex order
    dsmm_idx cl[6] = {2, 0, 2, 3, 0, 2};
    const char *path = test_path("clusters.txt");
    CHECK_OK(ctx, dsmm_write_clusters(ctx, path, 6, cl, NULL));
    size_t len;
    char *text = slurp(path, &len);
    CHECK(text != NULL);
    CHECK(strcmp(text, "1\t4\n0\t2\t5\n3\n") == 0);
    free(text);
    CHECK_OK(ctx, dsmm_write_clusters(ctx, path, 6, cl, L));
    text = slurp(path, &len);
    CHECK(text != NULL);
    CHECK(strcmp(text, "v1\tv4\nv0\tv2\tv5\nv3\n") == 0);
    free(text);
    // empty clustering: an empty file
    CHECK_OK(ctx, dsmm_write_clusters(ctx, path, 0, NULL, NULL));
    text = slurp(path, &len);
    CHECK(text != NULL && len == 0);
    free(text);
    // bad ids: an argument error and the previous file untouched
    dsmm_idx bad[3] = {0, 3, 1};
    CHECK_ST(ctx, dsmm_write_clusters(ctx, path, 3, bad, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "vertex 1 has cluster id 3");
    dsmm_ctx_clear_error(ctx);
    bad[1] = -1;
    CHECK_ST(ctx, dsmm_write_clusters(ctx, path, 3, bad, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_write_clusters(ctx, path, 7, cl, L), DSMM_ERR_ARG); // too few labels
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_write_clusters(ctx, test_path("no/such/dir/c.txt"), 6, cl, NULL),
             DSMM_ERR_IO);
    dsmm_ctx_clear_error(ctx);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Real ClusterONE / ProCope networks through dsmm_read (gzip, format from the name).
static int test_real_data(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/mcl/collins2007.txt.gz", DSMM_SHARED_DATA_DIR);
    FILE *probe = fopen(path, "rb");
    if (probe == NULL) return TEST_SKIP;
    fclose(probe);
    static const struct {
        const char *file;
        dsmm_idx n, stored;
    } nets[] = {{"collins2007.txt.gz", 1622, 9074},
                {"gavin2006_socioaffinities_rescaled.txt.gz", 1855, 7669},
                {"pe_combined.txt.gz", 5437, 401820}};
    for (size_t t = 0; t < sizeof nets / sizeof nets[0]; t++) {
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = NULL;
        dsmm_labels *L = NULL;
        dsmm_file_info info;
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.format = DSMM_FORMAT_ABC;
        snprintf(path, sizeof path, "%s/mcl/%s", DSMM_SHARED_DATA_DIR, nets[t].file);
        double t0 = (double)clock() / CLOCKS_PER_SEC;
        CHECK_OK(ctx, dsmm_read(ctx, path, &o, &A, &L, &info));
        double secs = (double)clock() / CLOCKS_PER_SEC - t0;
        printf("  %s: n %lld, nnz %lld, %.3f s\n", nets[t].file, (long long)A->nrows,
               (long long)A->nnz, secs);
        CHECK_OK(ctx, dsmm_csr_check(ctx, A));
        CHECK_EQ_IDX(dsmm_labels_count(L), nets[t].n);
        CHECK_EQ_IDX(A->nrows, nets[t].n);
        CHECK_EQ_IDX(A->nnz, nets[t].stored);
        CHECK_EQ_IDX(info.stored, nets[t].stored);
        CHECK(info.gzipped && A->type == DSMM_DOUBLE);
        for (dsmm_idx k = 0; k < A->nnz; k++) CHECK(dsmm_csr_value(A, k) > 0);
        dsmm_csr_destroy(&A);
        dsmm_labels_destroy(&L);
        CHECK_NO_LEAK(ctx);
    }
    return TEST_PASS;
}

// A(r, c) of a sorted CSR, or NAN when absent.
static double at(const dsmm_csr *A, dsmm_idx r, dsmm_idx c)
{
    for (dsmm_idx k = A->rowptr[r]; k < A->rowptr[r + 1]; k++)
        if (dsmm_csr_col(A, k) == c) return dsmm_csr_value(A, k);
    return NAN;
}

// mcl's native matrix format: column vectors "c r[:v] ... $" become A(r, c); free text before
// the header; detection by content; pattern files; rectangular and empty matrices; repeats.
// mcl's SIF and ETC layouts: sources, SIF's ignored relation, vertices without edges, and
// --expect-values's "label:weight" (the text after the last ':' when it is a number, else the
// whole field is the label), repeated pairs, transforms, refusals.
static double times3(const void *arg, double w)
{
    (void)arg;
    return 3.0 * w;
}

static int test_sif_etc(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.layout = DSMM_LAYOUT_SIF;
    // Blanks of any kind separate fields; "x" is a relation, not a vertex; "g pp" and "h"
    // name vertices without edges.
    CHECK_OK(ctx, parse_str(ctx, "# c\na x b c\nb\tpp\tc\r\ng pp\nh\n", &o, &A, &L));
    CHECK_EQ_IDX(dsmm_labels_count(L), 5);
    CHECK(dsmm_labels_find(L, "x") < 0 && dsmm_labels_find(L, "pp") < 0);
    CHECK(strcmp(dsmm_labels_name(L, 3), "g") == 0 && strcmp(dsmm_labels_name(L, 4), "h") == 0);
    CHECK_EQ_IDX(A->nnz, 3);
    CHECK(entry(A, L, "a", "b") == 1.0 && entry(A, L, "a", "c") == 1.0);
    CHECK(entry(A, L, "b", "c") == 1.0 && entry(A, L, "c", "b") == 0.0);
    CHECK_EQ_IDX(A->rowptr[4] - A->rowptr[3], 0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // ETC with weights; without expect_values "b:5" is a label.
    o.layout = DSMM_LAYOUT_ETC;
    CHECK_OK(ctx, parse_str(ctx, "a b:5 c\n", &o, &A, &L));
    CHECK(dsmm_labels_find(L, "b:5") == 1 && entry(A, L, "a", "b:5") == 1.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    o.expect_values = 1;
    o.dup = DSMM_DUP_MAX;
    CHECK_OK(ctx, parse_str(ctx,
                            "a b:5 c ns:P1 q:r:2.5 e: :7 b:0.5 f:1e400\n"
                            "b a:0.25\n",
                            &o, &A, &L));
    CHECK(entry(A, L, "a", "b") == 5.0);     // repeated pair: the larger weight
    CHECK(entry(A, L, "a", "c") == 1.0);     // no weight: 1
    CHECK(entry(A, L, "a", "ns:P1") == 1.0); // not a number after ':': a label with a colon
    CHECK(entry(A, L, "a", "q:r") == 2.5);   // the last ':' splits
    CHECK(entry(A, L, "a", "e:") == 1.0 && entry(A, L, "a", ":7") == 1.0);
    CHECK(entry(A, L, "a", "f:1e400") == 1.0); // not finite: a label
    CHECK(entry(A, L, "b", "a") == 0.25);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    // The transforms see each weight as read (1 where there is none).
    o.abc_map = times3;
    CHECK_OK(ctx, parse_str(ctx, "a b:2 c\n", &o, &A, &L));
    CHECK(entry(A, L, "a", "b") == 6.0 && entry(A, L, "a", "c") == 3.0);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    o.abc_map = NULL;
    // Long lines grow the field list.
    char *big = malloc(8 * 3000 + 8);
    CHECK(big != NULL);
    size_t q = (size_t)sprintf(big, "s");
    for (int k = 0; k < 3000; k++) q += (size_t)sprintf(big + q, " t%d:%d", k, k % 7 + 1);
    CHECK_OK(ctx, parse_str(ctx, big, &o, &A, &L));
    CHECK_EQ_IDX(dsmm_labels_count(L), 3001);
    CHECK(entry(A, L, "s", "t2999") == 2999 % 7 + 1);
    free(big);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);

    // Refused: no vertex at all; expect_values with abc; an unknown layout.
    CHECK_ST(ctx, parse_str(ctx, "# nothing\n\n", &o, &A, &L), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "names no vertices");
    CHECK(A == NULL && L == NULL);
    dsmm_read_opts b;
    dsmm_read_opts_init(&b);
    b.format = DSMM_FORMAT_ABC;
    b.expect_values = 1;
    CHECK_ST(ctx, dsmm_read_buffer(ctx, "a b 1\n", 6, "x.abc", &b, &A, &L, NULL), DSMM_ERR_ARG);
    b.expect_values = 0;
    b.layout = (dsmm_label_layout)7;
    CHECK_ST(ctx, dsmm_read_buffer(ctx, "a b 1\n", 6, "x.abc", &b, &A, &L, NULL), DSMM_ERR_ARG);
    // Through dsmm_read_buffer: the same matrix as the abc triples it stands for.
    b.layout = DSMM_LAYOUT_ETC;
    b.expect_values = 1;
    dsmm_csr *E = NULL;
    dsmm_labels *LE = NULL;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, "u v:2 w:3\nw u:4\n", 16, "x.etc", &b, &E, &LE, NULL));
    b.layout = DSMM_LAYOUT_ABC;
    b.expect_values = 0;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, "u v 2\nu w 3\nw u 4\n", 18, "x.abc", &b, &A, &L, NULL));
    CHECK_EQ_IDX(E->nnz, A->nnz);
    for (dsmm_idx k = 0; k < A->nnz; k++)
        CHECK(E->colidx[k] == A->colidx[k] && dsmm_csr_value(E, k) == dsmm_csr_value(A, k));
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&E);
    dsmm_labels_destroy(&L);
    dsmm_labels_destroy(&LE);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_mci(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_file_info fi;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    const char *t1 = "  some words about the graph\n\n(mclheader\nmcltype matrix\n"
                     "dimensions 3x3\nsomekey value\n)\n(mclmatrix\nbegin\n"
                     "0 1:0.5 2 $\n2   0:7e-1\n      1:2 $\n)\n";
    // Named "graph" (no .mci): found by its "(mclheader" line.
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t1, strlen(t1), "graph", &o, &A, NULL, &fi));
    CHECK(fi.format == DSMM_FORMAT_MCI && fi.nrows == 3 && fi.ncols == 3 && fi.stored == 4);
    CHECK(A->type == DSMM_DOUBLE && A->nnz == 4);
    CHECK(at(A, 1, 0) == 0.5 && at(A, 2, 0) == 1.0 && at(A, 0, 2) == 0.7 && at(A, 1, 2) == 2.0);
    CHECK(isnan(at(A, 0, 1)));
    dsmm_csr_destroy(&A);
    // No values: a pattern matrix (keep_pattern), or ones.
    const char *t2 = "(mclheader\nmcltype matrix\ndimensions 2x4\n)\n(mclmatrix\nbegin\n"
                     "3 0 1 $\n0 1 $\n)\n";
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t2, strlen(t2), "p.mci", &o, &A, NULL, &fi));
    CHECK(A->type == DSMM_PATTERN && A->nrows == 2 && A->ncols == 4 && A->nnz == 3);
    CHECK(at(A, 0, 3) == 1.0 && at(A, 1, 3) == 1.0 && at(A, 1, 0) == 1.0);
    dsmm_csr_destroy(&A);
    o.keep_pattern = 0;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t2, strlen(t2), "p.mci", &o, &A, NULL, NULL));
    CHECK(A->type == DSMM_DOUBLE && at(A, 1, 0) == 1.0);
    dsmm_csr_destroy(&A);
    // An empty matrix; a repeated entry under DSMM_DUP_MAX.
    const char *t3 = "(mclheader\nmcltype matrix\ndimensions 5x5\n)\n(mclmatrix\nbegin\n)\n";
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t3, strlen(t3), "e.mci", &o, &A, NULL, NULL));
    CHECK(A->nrows == 5 && A->ncols == 5 && A->nnz == 0);
    dsmm_csr_destroy(&A);
    const char *t4 = "(mclheader\nmcltype matrix\ndimensions 2x2\n)\n(mclmatrix\nbegin\n"
                     "1 0:2 0:3 $\n)\n";
    CHECK_ST(ctx, dsmm_read_buffer(ctx, t4, strlen(t4), "d.mci", &o, &A, NULL, NULL),
             DSMM_ERR_FORMAT);
    CHECK(A == NULL);
    o.dup = DSMM_DUP_MAX;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t4, strlen(t4), "d.mci", &o, &A, NULL, NULL));
    CHECK(A->nnz == 1 && at(A, 0, 1) == 3.0);
    dsmm_csr_destroy(&A);
    // Written and read back: the same matrix (values, a pattern matrix, a rectangular one with
    // empty columns, an empty one), in mcl's layout: the columns with entries, rows sorted.
    char path[256];
    snprintf(path, sizeof path, "/tmp/dsmm_test_mci_%d.mci", (int)getpid());
    const char *back[] = {t1, t2, t3};
    o.dup = DSMM_DUP_ERROR;
    o.keep_pattern = 1;
    for (int b = 0; b < 3; b++) {
        dsmm_csr *B = NULL;
        CHECK_OK(ctx, dsmm_read_buffer(ctx, back[b], strlen(back[b]), "x.mci", &o, &A, NULL, NULL));
        CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, NULL));
        CHECK_OK(ctx, dsmm_read(ctx, path, &o, &B, NULL, NULL));
        CHECK(B->type == A->type && B->nrows == A->nrows && B->ncols == A->ncols &&
              B->nnz == A->nnz);
        for (dsmm_idx k = 0; k < A->nnz; k++)
            CHECK(dsmm_csr_col(A, k) == dsmm_csr_col(B, k) &&
                  dsmm_csr_value(A, k) == dsmm_csr_value(B, k));
        for (dsmm_idx r = 0; r <= A->nrows; r++) CHECK(A->rowptr[r] == B->rowptr[r]);
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    // The text: t2 (a 2 x 4 pattern matrix) lists columns 0 and 3 only, bare rows.
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t2, strlen(t2), "x.mci", &o, &A, NULL, NULL));
    CHECK_OK(ctx, dsmm_write(ctx, path, A, NULL, NULL));
    dsmm_csr_destroy(&A);
    char text[512] = "";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';
    CHECK_MSG(strcmp(text, "(mclheader\nmcltype matrix\ndimensions 2x4\n)\n(mclmatrix\nbegin\n"
                           "0 1 $\n3 0 1 $\n)\n") == 0,
              "%s", text);
    remove(path);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Tab files (mcl -use-tab) and the native cluster format.
static int test_tab_and_native(void)
{
    dsmm_ctx *ctx = test_ctx();
    char dir[] = "/tmp/dsmm_test_tab_XXXXXX", path[512], out[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.tab", dir);
    // Any order, labels with spaces, CRLF.
    const char *tab = "2\tc c\r\n0\ta\n\n1\tb\n";
    CHECK(test_write_file(path, tab, strlen(tab)) == 0);
    dsmm_labels *L = NULL;
    CHECK_OK(ctx, dsmmi_labels_read_tab(ctx, path, 3, &L));
    CHECK(dsmm_labels_count(L) == 3 && strcmp(dsmm_labels_name(L, 0), "a") == 0 &&
          strcmp(dsmm_labels_name(L, 1), "b") == 0 && strcmp(dsmm_labels_name(L, 2), "c c") == 0);
    dsmm_labels_destroy(&L);
    static const struct {
        const char *text, *msg;
        dsmm_idx n;
    } bad[] = {{"0\ta\n1\tb\n", "index 2 has no label", 3},
               {"0\ta\n0\tb\n1\tc\n", "t.tab:2: index 0 listed twice", 3},
               {"0\ta\n3\tb\n", "t.tab:2: index 3 outside the graph's 0..2", 3},
               {"0\ta\nx\tb\n", "t.tab:2: expected 'index<TAB>label'", 3},
               {"0\ta\n1\ta\n", "t.tab:2: label 'a' also names index 0", 2}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        CHECK(test_write_file(path, bad[b].text, strlen(bad[b].text)) == 0);
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmmi_labels_read_tab(ctx, path, bad[b].n, &L), DSMM_ERR_FORMAT);
        CHECK(L == NULL);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), bad[b].msg);
    }
    // The native cluster format: header "NxK", clusters renumbered 0..K-1 in id order, members
    // 0-based, lines of at most 70 characters continued after 6 spaces; read back by clm.
    enum { N = 120 };
    dsmm_idx cl[N];
    for (int v = 0; v < N; v++) cl[v] = v < 100 ? 2 : (v % 2 ? 5 : 7);
    snprintf(out, sizeof out, "%s/c.mcl", dir);
    CHECK_OK(ctx, dsmmi_write_clusters_native(ctx, out, N, cl));
    FILE *f = fopen(out, "r");
    CHECK(f != NULL);
    char line[256];
    int nline = 0, long_lines = 0, dollars = 0;
    const char *want_head[] = {"(mclheader\n", "mcltype matrix\n", "dimensions 120x3\n",
                               ")\n",          "(mclmatrix\n",     "begin\n"};
    while (fgets(line, sizeof line, f)) {
        if (nline < 6) CHECK_MSG(strcmp(line, want_head[nline]) == 0, "line %d: %s", nline, line);
        if (nline == 6) CHECK(strncmp(line, "0   0 1 2 3 ", 12) == 0); // "%-4d": 120 nodes
        long_lines += strlen(line) > 71;
        dollars += strstr(line, "$") != NULL;
        nline++;
    }
    fclose(f);
    CHECK(long_lines == 0 && dollars == 3 && strcmp(line, ")\n") == 0);
    dsmm_clustering *C = NULL;
    dsmm_labels *D = NULL;
    CHECK_OK(ctx, dsmm_clustering_read(ctx, out, &D, 1, &C));
    CHECK(C->nclusters == 3 && C->listed == N);
    for (int v = 0; v < N; v++) {
        char name[32];
        snprintf(name, sizeof name, "%d", v);
        dsmm_idx id = C->cluster[dsmm_labels_find(D, name)];
        CHECK(id == (v < 100 ? 0 : (v % 2 ? 1 : 2)));
    }
    dsmm_clustering_destroy(&C);
    dsmm_labels_destroy(&D);
    remove(out);
    remove(path);
    rmdir(dir);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_basic),     TEST(test_weights_optional),
        TEST(test_errors),    TEST(test_budget),
        TEST(test_oom),       TEST(test_labels_many),
        TEST(test_roundtrip), TEST(test_clusters),
        TEST(test_real_data), TEST(test_sif_etc),
        TEST(test_mci),       TEST(test_tab_and_native),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
