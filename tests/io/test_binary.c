// tests/io/test_binary.c: the dsmm binary format (src/io/binary.c): round trips, empty
// matrices, 32-bit columns written as their 64-bit twin, and corrupt files (every flipped byte,
// every truncation) failing cleanly.
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "io/io.h"

// The binary image of A in memory (written through a temporary file).
static char *to_bytes(dsmm_ctx *ctx, const dsmm_csr *A, size_t *len)
{
    const char *path = test_path("m.dsmm");
    FILE *f = fopen(path, "wb");
    if (f == NULL) return NULL;
    dsmm_status st = dsmmi_bin_write(ctx, f, A);
    fclose(f);
    if (st != DSMM_OK) return NULL;
    f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len + 1);
    if (buf && fread(buf, 1, *len, f) != *len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

// Parses len bytes of buf (copied, NUL-terminated, as a source would be).
static dsmm_status from_bytes(dsmm_ctx *ctx, const char *buf, size_t len, dsmm_type type,
                              dsmm_csr **A)
{
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.type = type == DSMM_PATTERN ? DSMM_DOUBLE : type;
    char *copy = malloc(len + 1);
    if (copy == NULL) return DSMM_ERR_NOMEM;
    if (len) memcpy(copy, buf, len);
    copy[len] = '\0';
    dsmmi_source src = {.buf = copy, .len = len, .name = "m.dsmm", .gzipped = 0};
    dsmm_file_info info;
    dsmm_status st = dsmmi_bin_parse(ctx, &src, &o, A, &info);
    if (st == DSMM_OK && (info.format != DSMM_FORMAT_BIN || info.nrows != (*A)->nrows ||
                          info.stored != (*A)->nnz || info.bytes != len))
        st = DSMM_ERR_INTERNAL;
    free(copy);
    return st;
}

static uint64_t crc_of(const char *p, size_t n)
{
    return crc32(0, (const unsigned char *)p, (uInt)n);
}

// Rewrites both checksums after a deliberate change, so only the change is seen.
static void reseal(char *buf, size_t len)
{
    uint64_t h = crc_of(buf, 48);
    memcpy(buf + 48, &h, 8);
    uint64_t t = crc_of(buf + 64, len - 72);
    memcpy(buf + len - 8, &t, 8);
}

// A random m x n matrix of the given type with about nnz entries.
static dsmm_status random_csr(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, dsmm_idx nnz, dsmm_type type,
                              uint64_t seed, dsmm_csr **out)
{
    dsmm_coo *T = NULL;
    dsmm_status st = dsmm_coo_create(ctx, m, n, nnz, DSMM_DOUBLE, &T);
    dsmm_rng r;
    dsmm_rng_init(&r, seed, 7);
    for (dsmm_idx k = 0; st == DSMM_OK && k < nnz && m > 0 && n > 0; k++) {
        dsmm_idx i = (dsmm_idx)(dsmm_rng_u64(&r) % (uint64_t)m);
        dsmm_idx j = (dsmm_idx)(dsmm_rng_u64(&r) % (uint64_t)n);
        st = dsmm_coo_push(T, i, j, dsmm_rng_uniform(&r) * 1e3 - 500);
    }
    dsmm_csr *D = NULL;
    if (st == DSMM_OK) st = dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, &D);
    if (st == DSMM_OK) st = dsmm_csr_copy(ctx, D, type, out);
    dsmm_csr_destroy(&D);
    dsmm_coo_destroy(&T);
    return st;
}

static int roundtrip_one(dsmm_ctx *ctx, const dsmm_csr *A)
{
    size_t len = 0;
    char *buf = to_bytes(ctx, A, &len);
    CHECK_MSG(buf != NULL, "%s", dsmm_ctx_last_error(ctx));
    size_t vs = A->type == DSMM_DOUBLE ? 8 : A->type == DSMM_FLOAT ? 4 : 0;
    CHECK_EQ_IDX(len, 64 + 8 * (A->nrows + 1) + (8 + (dsmm_idx)vs) * A->nnz + 8);
    CHECK(memcmp(buf, "DSMMBIN1", 8) == 0);
    dsmm_csr *B = NULL;
    CHECK_OK(ctx, from_bytes(ctx, buf, len, A->type, &B));
    free(buf);
    CHECK(B->type == A->type);
    CHECK(B->sorted == A->sorted);
    dsmm_csr_diff d;
    CHECK_OK(ctx, dsmm_csr_compare(ctx, A, B, 0, 0, &d));
    CHECK_MSG(d.equal, "%s", d.what);
    // exact arrays, not only equal as sets
    CHECK(memcmp(A->rowptr, B->rowptr, (size_t)(A->nrows + 1) * 8) == 0);
    CHECK(A->nnz == 0 || memcmp(A->colidx, B->colidx, (size_t)A->nnz * 8) == 0);
    CHECK(A->nnz == 0 || vs == 0 || memcmp(A->val, B->val, (size_t)A->nnz * vs) == 0);
    dsmm_csr_destroy(&B);
    return TEST_PASS;
}

static int test_roundtrip(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_type types[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};
    for (int t = 0; t < 3; t++) {
        dsmm_csr *A = NULL;
        CHECK_OK(ctx, random_csr(ctx, 57, 91, 700, types[t], seed + (uint64_t)t, &A));
        if (roundtrip_one(ctx, A) != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&A);
    }
    // Pattern files read with keep_pattern = 0 give ones in the requested type.
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, random_csr(ctx, 10, 10, 30, DSMM_PATTERN, seed, &A));
    size_t len;
    char *buf = to_bytes(ctx, A, &len);
    CHECK(buf != NULL);
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.keep_pattern = 0;
    o.type = DSMM_FLOAT;
    dsmmi_source src = {.buf = buf, .len = len, .name = "p.dsmm"};
    buf[len] = '\0';
    CHECK_OK(ctx, dsmmi_bin_parse(ctx, &src, &o, &B, NULL));
    CHECK(B->type == DSMM_FLOAT && B->nnz == A->nnz);
    for (dsmm_idx k = 0; k < B->nnz; k++) CHECK(dsmm_csr_value(B, k) == 1.0);
    free(buf);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_empty_and_unsorted(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx shapes[][2] = {{0, 0}, {0, 5}, {5, 0}, {3, 3}};
    for (int s = 0; s < 4; s++) {
        for (int t = 0; t < 3; t++) {
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, dsmm_csr_create(ctx, shapes[s][0], shapes[s][1], 0, (dsmm_type)t, &A));
            if (roundtrip_one(ctx, A) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&A);
        }
    }
    // An unsorted matrix keeps its row order and its sorted flag.
    dsmm_idx rowptr[3] = {0, 3, 4};
    dsmm_idx colidx[4] = {2, 0, 1, 1};
    double val[4] = {1, 2, 3, 4};
    dsmm_csr *W = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rowptr, colidx, val, DSMM_DOUBLE, &W));
    W->sorted = 0;
    if (roundtrip_one(ctx, W) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&W);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A matrix with 32-bit columns writes the very bytes of its 64-bit twin (the file always holds
// 8-byte columns), through dsmmi_bin_write and through dsmm_write; the file reads back as
// the 64-bit matrix. Sizes cross the writer's 4096-column chunks.
static int same_bytes_col32(dsmm_ctx *ctx, const dsmm_csr *A)
{
    dsmm_csr *W = NULL;
    CHECK_OK(ctx, dsmm_csr_copy(ctx, A, A->type, &W));
    CHECK_OK(ctx, dsmm_csr_set_col_width(W, 32));
    CHECK(W->colidx == NULL && W->colidx32 != NULL);
    size_t l64 = 0, l32 = 0;
    char *b64 = to_bytes(ctx, A, &l64);
    char *b32 = to_bytes(ctx, W, &l32);
    CHECK_MSG(b64 != NULL && b32 != NULL, "%s", dsmm_ctx_last_error(ctx));
    CHECK_EQ_IDX(l64, l32);
    CHECK(memcmp(b64, b32, l64) == 0);
    dsmm_csr *B = NULL;
    CHECK_OK(ctx, from_bytes(ctx, b32, l32, A->type, &B));
    CHECK(B->colidx != NULL && B->colidx32 == NULL && B->sorted == A->sorted);
    CHECK(A->nnz == 0 || memcmp(A->colidx, B->colidx, (size_t)A->nnz * 8) == 0);
    dsmm_csr_destroy(&B);
    free(b64);
    free(b32);
    // the public writer, to a named file
    const char *p64 = test_path("w64.dsmm"), *p32 = test_path("w32.dsmm");
    CHECK_OK(ctx, dsmm_write(ctx, p64, A, NULL, NULL));
    CHECK_OK(ctx, dsmm_write(ctx, p32, W, NULL, NULL));
    FILE *f64 = fopen(p64, "rb"), *f32 = fopen(p32, "rb");
    CHECK(f64 != NULL && f32 != NULL);
    int c64, c32;
    do {
        c64 = fgetc(f64);
        c32 = fgetc(f32);
        CHECK(c64 == c32);
    } while (c64 != EOF);
    fclose(f64);
    fclose(f32);
    dsmm_csr_destroy(&W);
    return TEST_PASS;
}

static int test_col32(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_type types[] = {DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE};
    const dsmm_idx sizes[][3] = {{0, 0, 0}, {0, 7, 0}, {7, 0, 0}, {57, 91, 700}, {300, 250, 12000}};
    for (int s = 0; s < 5; s++)
        for (int t = 0; t < 3; t++) {
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, random_csr(ctx, sizes[s][0], sizes[s][1], sizes[s][2], types[t],
                                     seed + (uint64_t)(s * 3 + t), &A));
            CHECK(s < 4 || A->nnz > 2 * 4096); // several chunks of the widening writer
            if (same_bytes_col32(ctx, A) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&A);
        }
    // an unsorted matrix (flag 0) likewise
    dsmm_idx rowptr[3] = {0, 3, 4};
    dsmm_idx colidx[4] = {2, 0, 1, 1};
    double val[4] = {1, 2, 3, 4};
    dsmm_csr *W = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, rowptr, colidx, val, DSMM_DOUBLE, &W));
    CHECK(W->sorted == 0);
    if (same_bytes_col32(ctx, W) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&W);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every single flipped byte and every truncation fails with DSMM_ERR_FORMAT, leaking nothing.
static int test_corrupt(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, random_csr(ctx, 6, 5, 9, DSMM_DOUBLE, test_seed(), &A));
    size_t len;
    char *buf = to_bytes(ctx, A, &len);
    CHECK(buf != NULL);
    for (size_t pos = 0; pos < len; pos++) {
        for (int bit = 0; bit < 8; bit += 7) {
            buf[pos] ^= (char)(1 << bit);
            dsmm_status st = from_bytes(ctx, buf, len, DSMM_DOUBLE, &B);
            buf[pos] ^= (char)(1 << bit);
            CHECK_MSG(st == DSMM_ERR_FORMAT && B == NULL, "byte %zu bit %d: %s", pos, bit,
                      dsmm_ctx_last_error(ctx));
            dsmm_ctx_clear_error(ctx);
        }
    }
    for (size_t cut = 0; cut < len; cut++) {
        CHECK_ST(ctx, from_bytes(ctx, buf, cut, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
        CHECK(B == NULL);
        dsmm_ctx_clear_error(ctx);
    }
    // trailing garbage
    char *longer = malloc(len + 1);
    CHECK(longer != NULL);
    memcpy(longer, buf, len);
    longer[len] = 'x';
    CHECK_ST(ctx, from_bytes(ctx, longer, len + 1, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
    dsmm_ctx_clear_error(ctx);
    free(longer);

    // A different version, correctly sealed: named in the message.
    uint32_t v2 = 2;
    memcpy(buf + 8, &v2, 4);
    reseal(buf, len);
    CHECK_ST(ctx, from_bytes(ctx, buf, len, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "binary version 2 not supported (this dsmm reads 1)");
    dsmm_ctx_clear_error(ctx);
    v2 = 1;
    memcpy(buf + 8, &v2, 4);
    reseal(buf, len);
    CHECK_OK(ctx, from_bytes(ctx, buf, len, DSMM_DOUBLE, &B));
    dsmm_csr_destroy(&B);

    // Flipped payload byte: the checksum message.
    buf[64 + 3] ^= 1;
    CHECK_ST(ctx, from_bytes(ctx, buf, len, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "checksum mismatch: file is corrupt");
    dsmm_ctx_clear_error(ctx);
    buf[64 + 3] ^= 1;

    // Sealed but structurally invalid: a column out of range, a decreasing rowptr.
    size_t col0 = 64 + 8 * 7;
    int64_t bad = 5, keep;
    memcpy(&keep, buf + col0, 8);
    memcpy(buf + col0, &bad, 8);
    reseal(buf, len);
    CHECK_ST(ctx, from_bytes(ctx, buf, len, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "m.dsmm: invalid matrix");
    dsmm_ctx_clear_error(ctx);
    memcpy(buf + col0, &keep, 8);
    int64_t rp_bad = 100;
    memcpy(buf + 64 + 8 * 2, &rp_bad, 8);
    reseal(buf, len);
    CHECK_ST(ctx, from_bytes(ctx, buf, len, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
    dsmm_ctx_clear_error(ctx);

    // Sealed header with huge or negative sizes: rejected before any allocation.
    long before = dsmm_ctx_alloc_count(ctx);
    int64_t sizes[][3] = {
        {(int64_t)1 << 60, 5, 9}, {6, 5, (int64_t)1 << 61}, {-1, 5, 9}, {6, -5, 9}, {6, 5, -9},
        {INT64_MAX, 5, INT64_MAX}};
    for (int s = 0; s < 6; s++) {
        char hdr[64 + 8 + 8];
        memcpy(hdr, buf, 64);
        memcpy(hdr + 24, sizes[s], 24);
        memset(hdr + 64, 0, 16);
        reseal(hdr, sizeof hdr);
        CHECK_ST(ctx, from_bytes(ctx, hdr, sizeof hdr, DSMM_DOUBLE, &B), DSMM_ERR_FORMAT);
        dsmm_ctx_clear_error(ctx);
    }
    CHECK_EQ_IDX(dsmm_ctx_alloc_count(ctx), before);
    free(buf);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_oom(void)
{
    dsmm_ctx *ctx0 = test_ctx();
    dsmm_csr *A = NULL;
    CHECK_OK(ctx0, random_csr(ctx0, 20, 20, 50, DSMM_FLOAT, 3, &A));
    size_t len;
    char *buf = to_bytes(ctx0, A, &len);
    CHECK(buf != NULL);
    for (long k = 0;; k++) {
        dsmm_ctx *ctx = test_ctx();
        dsmm_csr *B = NULL;
        dsmm_ctx_fail_alloc_at(ctx, k);
        dsmm_status st = from_bytes(ctx, buf, len, DSMM_FLOAT, &B);
        if (st == DSMM_OK) {
            dsmm_csr_destroy(&B);
            CHECK_NO_LEAK(ctx);
            break;
        }
        CHECK_MSG(st == DSMM_ERR_NOMEM && B == NULL, "k = %ld: %s", k, dsmm_ctx_last_error(ctx));
        CHECK_NO_LEAK(ctx);
        CHECK(k < 100);
    }
    free(buf);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx0);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {TEST(test_roundtrip), TEST(test_empty_and_unsorted),
                                      TEST(test_col32), TEST(test_corrupt), TEST(test_oom)};
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
