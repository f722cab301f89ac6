// tests/io/test_badinput.c: the catalogue of malformed inputs. Each case must fail with its
// status and a message naming file:line and the problem, return no matrix and leak nothing,
// through dsmm_read and dsmm_read_buffer alike. `test_badinput --write DIR` writes every case
// as DIR/<name>.<ext> plus DIR/expected.tsv for the CLI test (tests/cli/test_cli_badinput.sh).
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "check.h"

#define HDR_REAL "%%MatrixMarket matrix coordinate real general\n"
#define HDR_PAT  "%%MatrixMarket matrix coordinate pattern general\n"
#define MCI_HDR  "(mclheader\nmcltype matrix\ndimensions 3x3\n)\n(mclmatrix\nbegin\n"

enum { FILE_CASE = 0, DIR_CASE, MISSING_CASE };

typedef struct content {
    char *data;
    size_t len;
} content;

typedef struct bad_case {
    const char *name;
    const char *ext;
    const char *text;       // content, or NULL when gen makes it
    int (*gen)(content *c); // for big or binary contents; 0 on success
    dsmm_status st;
    const char *msg; // expected after "<name>.<ext>", e.g. ":3: row index 0 ..."
    int kind;
} bad_case;

static int gen_long_line(content *c)
{
    const char *head = HDR_REAL "2 2 1\n1";
    size_t pad = ((size_t)1 << 20) + 100, hl = strlen(head);
    c->len = hl + pad + 6;
    c->data = malloc(c->len);
    if (!c->data) return 1;
    memcpy(c->data, head, hl);
    memset(c->data + hl, ' ', pad);
    memcpy(c->data + hl + pad, " 1 1\n", 6);
    c->len = hl + pad + 5;
    return 0;
}

static int gen_binary(content *c)
{
    c->len = 512;
    c->data = malloc(c->len);
    if (!c->data) return 1;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t k = 0; k < c->len; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c->data[k] = (char)(k % 7 == 0 ? 0 : (x & 0xff));
    }
    c->data[0] = 0x7f; // not a gzip magic, not '%'
    return 0;
}

static int gen_nul(content *c)
{
    static const char t[] = HDR_REAL "2 2 1\n1 1\0 2\n";
    c->len = sizeof t - 1;
    c->data = malloc(c->len);
    if (!c->data) return 1;
    memcpy(c->data, t, c->len);
    return 0;
}

static int gzip_text(const char *text, content *c)
{
    uLong n = (uLong)strlen(text);
    uLong cap = compressBound(n) + 64;
    unsigned char *out = malloc(cap);
    if (!out) return 1;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 1;
    zs.next_in = (Bytef *)(uintptr_t)text;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) return 1;
    c->len = zs.total_out;
    deflateEnd(&zs);
    c->data = (char *)out;
    return 0;
}

static const char *big_text(void)
{
    static char t[8192];
    if (!t[0]) {
        size_t n = (size_t)snprintf(t, sizeof t, HDR_REAL "100 100 300\n");
        for (int k = 0; k < 300 && n < sizeof t - 32; k++)
            n +=
                (size_t)snprintf(t + n, sizeof t - n, "%d %d %d.25\n", k % 100 + 1, k / 100 + 1, k);
    }
    return t;
}

static int gen_truncated_gz(content *c)
{
    if (gzip_text(big_text(), c)) return 1;
    c->len /= 2;
    return 0;
}

static int gen_corrupt_gz(content *c)
{
    if (gzip_text(big_text(), c)) return 1;
    for (size_t k = 12; k < c->len - 8; k += 3) c->data[k] = (char)(c->data[k] ^ 0x5a);
    return 0;
}

// clang-format off
static const bad_case cases[] = {
    {"truncated", "mtx", HDR_REAL "3 3 4\n1 1 1\n2 2 2\n3 3", NULL, DSMM_ERR_FORMAT,
     ":5: file ends after 3 of 4 entries", FILE_CASE},
    {"fewer_entries", "mtx", HDR_REAL "3 3 3\n1 1 1\n2 2 2\n", NULL, DSMM_ERR_FORMAT,
     ":4: file ends after 2 of 3 entries", FILE_CASE},
    {"more_entries", "mtx", HDR_REAL "3 3 2\n1 1 1\n2 2 2\n3 3 3\n", NULL, DSMM_ERR_FORMAT,
     ":5: more than 2 entries", FILE_CASE},
    {"bad_banner", "mtx", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", NULL,
     DSMM_ERR_FORMAT, ":1: bad banner", FILE_CASE},
    {"missing_banner", "mtx", "3 3 1\n1 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":1: missing %%MatrixMarket banner", FILE_CASE},
    {"banner_word", "mtx", "%%MatrixMarket matrix coordinate real sideways\n1 1 0\n", NULL,
     DSMM_ERR_FORMAT, ":1: unknown symmetry 'sideways'", FILE_CASE},
    {"banner_short", "mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n", NULL,
     DSMM_ERR_FORMAT, ":1: banner has 3 words", FILE_CASE},
    {"banner_object", "mtx", "%%MatrixMarket vector coordinate real general\n1 1 0\n", NULL,
     DSMM_ERR_FORMAT, ":1: unknown object 'vector'", FILE_CASE},
    {"complex", "mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
     NULL, DSMM_ERR_UNSUPPORTED, ":1: complex matrices are not supported", FILE_CASE},
    {"hermitian", "mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", NULL,
     DSMM_ERR_UNSUPPORTED, ":1: complex matrices are not supported", FILE_CASE},
    {"array_pattern", "mtx", "%%MatrixMarket matrix array pattern general\n1 1\n", NULL,
     DSMM_ERR_FORMAT, ":1: an array file cannot have field pattern", FILE_CASE},
    {"row_index_0", "mtx", HDR_REAL "3 3 1\n0 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":3: row index 0 out of range 1..3", FILE_CASE},
    {"col_index_0", "mtx", HDR_REAL "3 3 1\n1 0 1\n", NULL, DSMM_ERR_FORMAT,
     ":3: column index 0 out of range 1..3", FILE_CASE},
    {"row_past_end", "mtx", HDR_REAL "3 3 2\n1 1 1\n4 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":4: row index 4 out of range 1..3", FILE_CASE},
    {"col_past_end", "mtx", HDR_PAT "3 5 2\n1 1\n% c\n2 9\n", NULL, DSMM_ERR_FORMAT,
     ":5: column index 9 out of range 1..5", FILE_CASE},
    {"negative_index", "mtx", HDR_REAL "3 3 1\n-1 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":3: row index -1 out of range 1..3", FILE_CASE},
    {"huge_index", "mtx", HDR_REAL "3 3 1\n99999999999999999999 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":3: expected an integer row index, found '99999999999999999999'", FILE_CASE},
    {"negative_size", "mtx", HDR_REAL "3 -3 1\n1 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":2: negative size -3 (columns)", FILE_CASE},
    {"absurd_size", "mtx", HDR_REAL "1000000000000 1000000000000 1000000000000000\n1 1 1\n",
     NULL, DSMM_ERR_NOMEM, ":2: declares 1000000000000000 entries but only 6 bytes follow",
     FILE_CASE},
    {"array_overflow", "mtx",
     "%%MatrixMarket matrix array real general\n4294967296 4294967296\n1\n", NULL,
     DSMM_ERR_FORMAT, ":2: array size 4294967296 x 4294967296 overflows", FILE_CASE},
    {"array_absurd", "mtx", "%%MatrixMarket matrix array real general\n1000000 1000000\n1\n",
     NULL, DSMM_ERR_NOMEM, ":2: declares 1000000000000 entries", FILE_CASE},
    {"array_short", "mtx", "%%MatrixMarket matrix array real general\n2 2\n1.5\n2.5\n3.5\n",
     NULL, DSMM_ERR_FORMAT, ":5: file ends after 3 of 4 entries", FILE_CASE},
    {"array_tiny", "mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", NULL,
     DSMM_ERR_NOMEM, ":2: declares 4 entries but only 6 bytes follow", FILE_CASE},
    {"size_missing", "mtx", HDR_REAL "% only comments\n\n", NULL, DSMM_ERR_FORMAT,
     ":4: missing size line", FILE_CASE},
    {"only_banner", "mtx", HDR_REAL, NULL, DSMM_ERR_FORMAT, ":2: missing size line", FILE_CASE},
    {"size_short", "mtx", HDR_REAL "3 3\n", NULL, DSMM_ERR_FORMAT,
     ":2: size line needs 3 numbers", FILE_CASE},
    {"size_text", "mtx", HDR_REAL "3 3 x\n", NULL, DSMM_ERR_FORMAT,
     ":2: malformed size line: expected the number of entries, found 'x'", FILE_CASE},
    {"size_garbage", "mtx", HDR_REAL "3 3 1 7\n1 1 1\n", NULL, DSMM_ERR_FORMAT,
     ":2: trailing garbage '7' after the size line", FILE_CASE},
    {"nan", "mtx", HDR_REAL "3 3 2\n1 1 1\n2 2 nan\n", NULL, DSMM_ERR_FORMAT,
     ":4: value NaN is not finite", FILE_CASE},
    {"inf", "mtx", HDR_REAL "3 3 1\n1 1 -Inf\n", NULL, DSMM_ERR_FORMAT,
     ":3: value -Inf is not finite", FILE_CASE},
    {"overflow_value", "mtx", HDR_REAL "3 3 1\n1 1 1e999\n", NULL, DSMM_ERR_FORMAT,
     ":3: value Inf is not finite", FILE_CASE},
    {"text_for_number", "mtx", HDR_REAL "3 3 1\n1 abc 1\n", NULL, DSMM_ERR_FORMAT,
     ":3: expected an integer column index, found 'abc'", FILE_CASE},
    {"text_for_value", "mtx", HDR_REAL "3 3 1\n1 1 one\n", NULL, DSMM_ERR_FORMAT,
     ":3: expected a real value, found 'one'", FILE_CASE},
    {"trailing_garbage", "mtx", HDR_REAL "3 3 1\n1 1 1.0 xyz\n", NULL, DSMM_ERR_FORMAT,
     ":3: trailing garbage 'xyz' after the entry", FILE_CASE},
    {"missing_value", "mtx", HDR_REAL "3 3 2\n1 1 1\n2 2\n", NULL, DSMM_ERR_FORMAT,
     ":4: missing value", FILE_CASE},
    {"missing_column", "mtx", HDR_PAT "3 3 1\n22   \n", NULL, DSMM_ERR_FORMAT,
     ":3: missing column index", FILE_CASE},
    {"pattern_value", "mtx", HDR_PAT "3 3 1\n1 1 5\n", NULL, DSMM_ERR_FORMAT,
     ":3: pattern entry has a value '5'", FILE_CASE},
    {"non_integer", "mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n",
     NULL, DSMM_ERR_FORMAT, ":3: expected an integer value, found '1.5'", FILE_CASE},
    {"duplicate", "mtx", HDR_REAL "3 3 3\n1 1 1\n2 3 1\n1 1 2\n", NULL, DSMM_ERR_FORMAT,
     ":5: duplicate entry (1, 1) on lines 3 and 5", FILE_CASE},
    {"sym_upper", "mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1\n", NULL,
     DSMM_ERR_FORMAT,
     ":3: symmetric file has entry (1, 2) above the diagonal; only the lower triangle may be "
     "stored", FILE_CASE},
    {"skew_diagonal", "mtx",
     "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", NULL,
     DSMM_ERR_FORMAT, ":4: skew-symmetric file has a diagonal entry (2, 2)", FILE_CASE},
    {"rect_symmetric", "mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n",
     NULL, DSMM_ERR_FORMAT, ":2: symmetric matrix must be square", FILE_CASE},
    {"long_line", "mtx", NULL, gen_long_line, DSMM_ERR_FORMAT, ":3: line longer than 1 MiB",
     FILE_CASE},
    {"binary_garbage", "mtx", NULL, gen_binary, DSMM_ERR_FORMAT,
     ":1: missing %%MatrixMarket banner", FILE_CASE},
    {"nul_byte", "mtx", NULL, gen_nul, DSMM_ERR_FORMAT,
     ":3: expected an integer column index, found '1\\x00'", FILE_CASE},
    {"empty", "mtx", "", NULL, DSMM_ERR_FORMAT, ": empty file", FILE_CASE},
    {"truncated_gz", "mtx.gz", NULL, gen_truncated_gz, DSMM_ERR_IO,
     ": truncated gzip stream", FILE_CASE},
    {"corrupt_gz", "mtx.gz", NULL, gen_corrupt_gz, DSMM_ERR_IO, ": corrupt gzip stream",
     FILE_CASE},
    {"not_gzip", "mtx.gz", "this is plain text, not gzip\n", NULL, DSMM_ERR_FORMAT,
     ":1: missing %%MatrixMarket banner", FILE_CASE},
    // mcl's native matrix format (.mci): header, ranges, values, terminators, domains.
    {"mci_no_header", "mci", "(mclmatrix\nbegin\n)\n", NULL, DSMM_ERR_FORMAT,
     ": no '(mclheader' line: not mcl's native format", FILE_CASE},
    {"mci_bad_dims", "mci", "(mclheader\nmcltype matrix\ndimensions 3y3\n)\n", NULL,
     DSMM_ERR_FORMAT, ":3: bad 'dimensions RxC'", FILE_CASE},
    {"mci_huge_dims", "mci", "(mclheader\nmcltype matrix\ndimensions 999999999x999999999\n)\n"
     "(mclmatrix\nbegin\n)\n", NULL, DSMM_ERR_FORMAT,
     ": dimensions 999999999x999999999: more than a file of 78 bytes can hold", FILE_CASE},
    {"mci_row_range", "mci", MCI_HDR "0 5 $\n)\n", NULL, DSMM_ERR_FORMAT,
     ":7: row index expected in 0..2, found '5'", FILE_CASE},
    {"mci_col_range", "mci", MCI_HDR "4 1 $\n)\n", NULL, DSMM_ERR_FORMAT,
     ":7: column index expected in 0..2, found '4'", FILE_CASE},
    {"mci_no_dollar", "mci", MCI_HDR "0 1 2\n", NULL, DSMM_ERR_FORMAT,
     ": column 0 does not end with '$'", FILE_CASE},
    {"mci_bad_value", "mci", MCI_HDR "0 1:x $\n)\n", NULL, DSMM_ERR_FORMAT,
     ":7: value of entry '1:x' is not a finite number", FILE_CASE},
    {"mci_duplicate", "mci", MCI_HDR "0 1 1 $\n)\n", NULL, DSMM_ERR_FORMAT,
     ": entry 1 of column 0 is listed twice", FILE_CASE},
    {"mci_trailing", "mci", MCI_HDR "0 1 $\n)\nxx\n", NULL, DSMM_ERR_FORMAT,
     ":9: text after the matrix's ')'", FILE_CASE},
    {"mci_domains", "mci",
     "(mclheader\nmcltype matrix\ndimensions 3x3\n)\n(mcldoms\n0 1 2 $\n)\n(mclmatrix\nbegin\n)\n",
     NULL, DSMM_ERR_UNSUPPORTED,
     ":5: mcl domains (indices other than 0..R-1): not supported; write the graph with canonical "
     "domains (mcxload does)", FILE_CASE},
    {"directory", "mtx", NULL, NULL, DSMM_ERR_IO, ": is a directory", DIR_CASE},
    {"missing_file", "mtx", NULL, NULL, DSMM_ERR_IO, ": No such file or directory",
     MISSING_CASE},
};
// clang-format on
enum { NCASES = sizeof cases / sizeof cases[0] };

static int case_content(const bad_case *bc, content *c)
{
    c->data = NULL;
    c->len = 0;
    if (bc->gen) return bc->gen(c);
    if (bc->text == NULL) return 0;
    c->len = strlen(bc->text);
    c->data = malloc(c->len + 1);
    if (!c->data) return 1;
    memcpy(c->data, bc->text, c->len + 1);
    return 0;
}

static void case_expect(const bad_case *bc, char *out, size_t cap)
{
    snprintf(out, cap, "%s.%s%s", bc->name, bc->ext, bc->msg);
}

// Writes a case into dir; 0 on success.
static int write_case(const char *dir, const bad_case *bc, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s.%s", dir, bc->name, bc->ext);
    if (bc->kind == DIR_CASE) return mkdir(path, 0755) != 0 && errno != EEXIST;
    if (bc->kind == MISSING_CASE) return 0;
    content c;
    if (case_content(bc, &c)) return 1;
    int rc = test_write_file(path, c.data ? c.data : "", c.len);
    free(c.data);
    return rc;
}

static int test_catalogue_files(void)
{
    CHECK(NCASES >= 30);
    for (int k = 0; k < NCASES; k++) {
        const bad_case *bc = &cases[k];
        char path[1024], expect[512];
        CHECK_MSG(write_case(test_tmpdir(), bc, path, sizeof path) == 0, "%s", bc->name);
        case_expect(bc, expect, sizeof expect);
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = (dsmm_csr *)&A; // must come back NULL
        dsmm_labels *L = (dsmm_labels *)&L;
        dsmm_status st = dsmm_read(ctx, path, NULL, &A, &L, NULL);
        CHECK_MSG(st == bc->st, "%s: %s, expected %s: %s", bc->name, dsmm_status_name(st),
                  dsmm_status_name(bc->st), dsmm_ctx_last_error(ctx));
        CHECK_MSG(strstr(dsmm_ctx_last_error(ctx), expect) != NULL, "%s: \"%s\" lacks \"%s\"",
                  bc->name, dsmm_ctx_last_error(ctx), expect);
        CHECK_MSG(A == NULL && L == NULL, "%s: outputs not NULL", bc->name);
        CHECK_NO_LEAK(ctx);
    }
    return TEST_PASS;
}

static int test_catalogue_buffers(void)
{
    for (int k = 0; k < NCASES; k++) {
        const bad_case *bc = &cases[k];
        if (bc->kind != FILE_CASE) continue;
        char name[256], expect[512];
        snprintf(name, sizeof name, "%s.%s", bc->name, bc->ext);
        case_expect(bc, expect, sizeof expect);
        content c;
        CHECK(case_content(bc, &c) == 0);
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = NULL;
        dsmm_status st =
            dsmm_read_buffer(ctx, c.data ? c.data : "", c.len, name, NULL, &A, NULL, NULL);
        free(c.data);
        CHECK_MSG(st == bc->st, "%s: %s, expected %s: %s", bc->name, dsmm_status_name(st),
                  dsmm_status_name(bc->st), dsmm_ctx_last_error(ctx));
        CHECK_MSG(strstr(dsmm_ctx_last_error(ctx), expect) != NULL, "%s: \"%s\" lacks \"%s\"",
                  bc->name, dsmm_ctx_last_error(ctx), expect);
        CHECK(A == NULL);
        CHECK_NO_LEAK(ctx);
    }
    return TEST_PASS;
}

// Absurd declarations fail before allocating: the peak stays near the input's own size.
static int test_absurd_sizes_allocate_nothing(void)
{
    const char *texts[] = {
        HDR_REAL "1000000000000 1000000000000 1000000000000000\n1 1 1\n",
        "%%MatrixMarket matrix array real general\n3000000 3000000\n1\n",
        HDR_PAT "9223372036854775807 9223372036854775807 999999999999999999\n",
    };
    for (int k = 0; k < 3; k++) {
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *A = NULL;
        CHECK_ST(
            ctx,
            dsmm_read_buffer(ctx, texts[k], strlen(texts[k]), "absurd.mtx", NULL, &A, NULL, NULL),
            DSMM_ERR_NOMEM);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "absurd.mtx:2: declares");
        CHECK_MSG(dsmm_ctx_mem_peak(ctx) < 4096, "peak %zu", dsmm_ctx_mem_peak(ctx));
        CHECK(A == NULL);
        CHECK_NO_LEAK(ctx);
    }
    // a plausible file length but beyond the memory budget
    size_t n = 200000;
    char *big = malloc(n * 6 + 128);
    CHECK(big != NULL);
    strcpy(big, HDR_PAT);
    size_t len = strlen(big);
    len += (size_t)sprintf(big + len, "1000 1000 %zu\n", n);
    for (size_t k = 0; k < n; k++) len += (size_t)sprintf(big + len, "1 1\n");
    dsmm_ctx *ctx = test_ctx();
    dsmm_ctx_set_mem_budget(ctx, len + 65536);
    dsmm_csr *A = NULL;
    CHECK_ST(ctx, dsmm_read_buffer(ctx, big, len, "budget.mtx", NULL, &A, NULL, NULL),
             DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx),
                   "budget.mtx:2: declares 200000 entries (1000 rows), which need");
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "memory budget");
    CHECK(A == NULL);
    CHECK_NO_LEAK(ctx);
    free(big);
    return TEST_PASS;
}

// Non-finite values pass when allowed.
static int test_allow_nonfinite(void)
{
    dsmm_ctx *ctx = test_ctx();
    const char *t = HDR_REAL "2 2 2\n1 1 nan\n2 2 -inf\n";
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.allow_nonfinite = 1;
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, t, strlen(t), "nf.mtx", &o, &A, NULL, NULL));
    double *v = A->val;
    CHECK(v[0] != v[0] && v[1] < -1e308);
    dsmm_csr_destroy(&A);
    // doubles beyond FLT_MAX cannot become floats unless non-finite values are allowed
    const char *big = HDR_REAL "3 3 1\n1 1 -1e300\n";
    o.type = DSMM_FLOAT;
    o.allow_nonfinite = 0;
    CHECK_ST(ctx, dsmm_read_buffer(ctx, big, strlen(big), "f.mtx", &o, &A, NULL, NULL),
             DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "f.mtx:3: value -1e+300 is out of range for float");
    CHECK(A == NULL);
    dsmm_ctx_clear_error(ctx);
    o.allow_nonfinite = 1;
    CHECK_OK(ctx, dsmm_read_buffer(ctx, big, strlen(big), "f.mtx", &o, &A, NULL, NULL));
    CHECK(((float *)A->val)[0] < -3e38f);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int write_all(const char *dir)
{
    char path[1024];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "test_badinput: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/expected.tsv", dir);
    FILE *tsv = fopen(path, "w");
    if (tsv == NULL) {
        fprintf(stderr, "test_badinput: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (int k = 0; k < NCASES; k++) {
        char expect[512];
        if (write_case(dir, &cases[k], path, sizeof path) != 0) {
            fprintf(stderr, "test_badinput: cannot write %s\n", path);
            fclose(tsv);
            return 1;
        }
        case_expect(&cases[k], expect, sizeof expect);
        fprintf(tsv, "%s.%s\t%s\n", cases[k].name, cases[k].ext, expect);
    }
    return fclose(tsv) != 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) return write_all(argv[2]);
    static const test_case tests[] = {
        TEST(test_catalogue_files),
        TEST(test_catalogue_buffers),
        TEST(test_absurd_sizes_allocate_nothing),
        TEST(test_allow_nonfinite),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
