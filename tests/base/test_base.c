// tests/base/test_base.c: the base layer: status names, error messages with file/line,
// allocation accounting, budgets, failure injection, user allocators, sizes, JSON, stats,
// the counter-based RNG (thread-count independence), atomic output files.
#ifdef __linux__
#define _DEFAULT_SOURCE // mincore
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/base.h"
#include "check.h"

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

static int test_status_names(void)
{
    CHECK(strcmp(dsmm_status_name(DSMM_OK), "DSMM_OK") == 0);
    CHECK(strcmp(dsmm_status_name(DSMM_ERR_IO), "DSMM_ERR_IO") == 0);
    CHECK(strcmp(dsmm_status_name(DSMM_ERR_INTERNAL), "DSMM_ERR_INTERNAL") == 0);
    CHECK(strcmp(dsmm_status_name((dsmm_status)999), "DSMM_ERR_?") == 0);
    for (int s = 0; s < DSMM_STATUS_COUNT; s++)
        CHECK(strncmp(dsmm_status_name((dsmm_status)s), "DSMM_", 5) == 0);
    CHECK(strcmp(dsmm_type_name(DSMM_FLOAT), "float") == 0);
    CHECK(strcmp(dsmm_version(), DSMM_VERSION_STRING) == 0);
    return TEST_PASS;
}

static dsmm_status fails_with_context(dsmm_ctx *ctx, int line_of_file)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, line_of_file < 10, DSMM_ERR_IO, "graph.mtx:%d: column 0 out of range 1..500",
               line_of_file);
cleanup:
    return st;
}

static int test_error_message(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    CHECK(strcmp(dsmm_ctx_last_error(ctx), "") == 0);
    CHECK_ST(ctx, fails_with_context(ctx, 17), DSMM_ERR_IO);
    const char *msg = dsmm_ctx_last_error(ctx);
    CHECK_CONTAINS(msg, "DSMM_ERR_IO: graph.mtx:17: column 0 out of range 1..500 (");
    CHECK_CONTAINS(msg, "tests/base/test_base.c:");
    CHECK_EQ_IDX(dsmm_ctx_last_status(ctx), DSMM_ERR_IO);
    // The first failure is kept: later ones are consequences of it.
    CHECK_ST(ctx, fails_with_context(ctx, 42), DSMM_ERR_IO);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), ":17:");
    dsmm_ctx_clear_error(ctx);
    CHECK_OK(ctx, fails_with_context(ctx, 3));
    CHECK(strcmp(dsmm_ctx_last_error(ctx), "") == 0);
    CHECK_ST(ctx, dsmm_ctx_set_threads(ctx, -1), DSMM_ERR_ARG);
    CHECK_NO_LEAK(ctx);
    // A destroyed handle is reported, not dereferenced.
    CHECK_CONTAINS(dsmm_ctx_last_error(NULL), "invalid");
    return TEST_PASS;
}

static int test_alloc_accounting(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    double *a = dsmmi_malloc(ctx, 1000, sizeof *a);
    CHECK(a != NULL);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 8000);
    int *b = dsmmi_calloc(ctx, 10, sizeof *b);
    CHECK(b != NULL);
    for (int i = 0; i < 10; i++) CHECK_EQ_IDX(b[i], 0);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 8040);
    // Blocks are 64-byte aligned (the SpMM kernels' 64-byte vectors need it), small and large
    // (below), fresh and taken from the block cache.
    CHECK_MSG((uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0, "blocks at %p and %p", (void *)a,
              (void *)b);
    a = dsmmi_realloc(ctx, a, 2000, sizeof *a);
    CHECK(a != NULL);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 16040);
    a = dsmmi_realloc(ctx, a, 10, sizeof *a);
    CHECK(a != NULL);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 120);
    CHECK_EQ_IDX(dsmm_ctx_mem_peak(ctx), 16040);
    a = dsmmi_free(ctx, a);
    CHECK(a == NULL);
    b = dsmmi_free(ctx, b);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 0);
    // n * size overflow is refused before anything is asked of the system.
    void *p = dsmmi_malloc(ctx, SIZE_MAX / 2, 4);
    CHECK(p == NULL);
    CHECK_EQ_IDX(dsmm_ctx_last_status(ctx), DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "overflows");
    size_t out = 0;
    CHECK(!dsmmi_mul_ok(SIZE_MAX, 2, &out));
    CHECK(dsmmi_mul_ok(1u << 20, 1u << 10, &out) && out == (size_t)1 << 30);
    // dsmmi_realloc keeps the alignment and the values, growing (the block moves) and shrinking.
    int *g = dsmmi_malloc(ctx, 100, sizeof *g);
    CHECK(g != NULL);
    for (int i = 0; i < 100; i++) g[i] = 3 * i + 1;
    static const size_t sizes[] = {1000, 300000, 50, 5000000, 100};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        g = dsmmi_realloc(ctx, g, sizes[z], sizeof *g);
        CHECK(g != NULL);
        CHECK_MSG((uintptr_t)g % 64 == 0, "reallocated to %zu ints at %p", sizes[z], (void *)g);
        for (int i = 0; i < 50; i++) CHECK_EQ_IDX(g[i], 3 * i + 1);
        for (size_t i = 50; i < sizes[z] && i < 100; i++) g[i] = 3 * (int)i + 1;
    }
    g = dsmmi_free(ctx, g);
    for (int r = 0; r < 2; r++) {
        char *big = dsmmi_malloc(ctx, (size_t)3 << 20, 1);
        CHECK(big != NULL);
        CHECK_MSG((uintptr_t)big % 64 == 0, "3 MiB block at %p, round %d", (void *)big, r);
        dsmmi_free(ctx, big);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_budget(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    dsmm_ctx_set_mem_budget(ctx, 1000);
    CHECK_EQ_IDX(dsmm_ctx_mem_budget(ctx), 1000);
    char *a = dsmmi_malloc(ctx, 600, 1);
    CHECK(a != NULL);
    char *b = dsmmi_malloc(ctx, 600, 1);
    CHECK(b == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "memory budget");
    dsmm_ctx_clear_error(ctx);
    // A failed realloc keeps the old block valid and accounted.
    char *c = dsmmi_realloc(ctx, a, 2000, 1);
    CHECK(c == NULL);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), 600);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmmi_budget_check(ctx, 500, "a test array"), DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "a test array needs 500 bytes");
    CHECK_OK(ctx, dsmmi_budget_check(ctx, 400, "a small array"));
    a = dsmmi_free(ctx, a);
    dsmm_ctx_set_mem_budget(ctx, 0);
    b = dsmmi_malloc(ctx, 1 << 20, 1);
    CHECK(b != NULL);
    b = dsmmi_free(ctx, b);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_fail_injection(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    dsmm_ctx_fail_alloc_at(ctx, 2);
    long before = dsmm_ctx_alloc_count(ctx);
    void *p0 = dsmmi_malloc(ctx, 8, 1), *p1 = dsmmi_malloc(ctx, 8, 1);
    void *p2 = dsmmi_malloc(ctx, 8, 1), *p3 = dsmmi_malloc(ctx, 8, 1);
    CHECK(p0 && p1 && !p2 && p3);
    CHECK_EQ_IDX(dsmm_ctx_alloc_count(ctx) - before, 4);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "injected failure");
    dsmm_ctx_fail_alloc_at(ctx, -1);
    void *p4 = dsmmi_malloc(ctx, 8, 1);
    CHECK(p4 != NULL);
    dsmmi_free(ctx, p0);
    dsmmi_free(ctx, p1);
    dsmmi_free(ctx, p3);
    dsmmi_free(ctx, p4);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

typedef struct counting_alloc {
    long mallocs, frees;
} counting_alloc;

static void *c_malloc(void *u, size_t n)
{
    ((counting_alloc *)u)->mallocs++;
    return malloc(n);
}

static void *c_realloc(void *u, void *p, size_t n)
{
    (void)u;
    return realloc(p, n);
}

static void c_free(void *u, void *p)
{
    ((counting_alloc *)u)->frees++;
    free(p);
}

static int test_user_allocator(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    counting_alloc ca = {0, 0};
    dsmm_allocator al = {c_malloc, c_realloc, c_free, &ca};
    CHECK_OK(ctx, dsmm_ctx_set_allocator(ctx, &al));
    void *p = dsmmi_malloc(ctx, 100, 1);
    CHECK(p != NULL);
    CHECK_EQ_IDX(ca.mallocs, 1);
    // Switching allocators while memory is live would free blocks with the wrong one.
    CHECK_ST(ctx, dsmm_ctx_set_allocator(ctx, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    p = dsmmi_free(ctx, p);
    CHECK_EQ_IDX(ca.frees, 1);
    dsmm_allocator incomplete = {c_malloc, NULL, c_free, &ca};
    CHECK_ST(ctx, dsmm_ctx_set_allocator(ctx, &incomplete), DSMM_ERR_ARG);
    CHECK_OK(ctx, dsmm_ctx_set_allocator(ctx, NULL));
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_parse_size(void)
{
    size_t b = 0;
    CHECK(dsmm_parse_size("512", &b) == DSMM_OK && b == 512);
    CHECK(dsmm_parse_size("64K", &b) == DSMM_OK && b == 65536);
    CHECK(dsmm_parse_size("1.5G", &b) == DSMM_OK && b == (size_t)3 << 29);
    CHECK(dsmm_parse_size("2GiB", &b) == DSMM_OK && b == (size_t)2 << 30);
    CHECK(dsmm_parse_size("3mb", &b) == DSMM_OK && b == (size_t)3 << 20);
    CHECK(dsmm_parse_size("10B", &b) == DSMM_OK && b == 10);
    CHECK(dsmm_parse_size("", &b) == DSMM_ERR_ARG);
    CHECK(dsmm_parse_size("-1", &b) == DSMM_ERR_ARG);
    CHECK(dsmm_parse_size("12Q", &b) == DSMM_ERR_ARG);
    CHECK(dsmm_parse_size("1e30T", &b) == DSMM_ERR_ARG);
    CHECK(dsmm_parse_size("nan", &b) == DSMM_ERR_ARG);
    CHECK(dsmm_parse_size("5Kx", &b) == DSMM_ERR_ARG);
    return TEST_PASS;
}

static int test_json_and_stats(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    dsmmi_json j;
    dsmmi_json_init(&j, ctx);
    dsmmi_json_begin_object(&j, NULL);
    dsmmi_json_str(&j, "s", "a\"b\\c\n\x01");
    dsmmi_json_int(&j, "i", -42);
    dsmmi_json_num(&j, "x", 0.1);
    dsmmi_json_num(&j, "nan", NAN);
    dsmmi_json_begin_array(&j, "arr");
    dsmmi_json_int(&j, NULL, 1);
    dsmmi_json_bool(&j, NULL, 0);
    dsmmi_json_end_array(&j);
    dsmmi_json_end_object(&j);
    CHECK(j.st == DSMM_OK);
    CHECK(strcmp(j.buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-42,\"x\":0.10000000000000001,"
                        "\"nan\":null,\"arr\":[1,false]}") == 0);
    dsmmi_json_free(&j);

    dsmm_stats *s = NULL;
    char *json = NULL;
    CHECK_OK(ctx, dsmm_stats_create(ctx, "spgemm", &s));
    CHECK_OK(ctx, dsmm_stats_set_str(s, "algo", "summa"));
    CHECK_OK(ctx, dsmm_stats_set_num(s, "seconds", 1.5));
    CHECK_OK(ctx, dsmm_stats_set_num(s, "nnz_out", 12.0)); // stays an integer key
    CHECK_OK(ctx, dsmm_stats_set_int(s, "flops", 7));      // stays a number key
    CHECK_OK(ctx, dsmm_stats_set_int(s, "phases", 3));
    CHECK_OK(ctx, dsmm_stats_json(s, &json));
    const char *keys[] = {"\"op\":\"spgemm\"", "\"algo\":\"summa\"", "\"ranks\":1",
                          "\"threads\":",      "\"seconds\":1.5",    "\"io_seconds\":0",
                          "\"flops\":7",       "\"nnz_in\":0",       "\"nnz_out\":12",
                          "\"peak_bytes\":0",  "\"bytes_sent\":0",   "\"phases\":3"};
    const char *prev = json;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *at = strstr(json, keys[k]);
        CHECK_MSG(at != NULL, "%s missing in %s", keys[k], json);
        CHECK_MSG(at >= prev, "%s out of order in %s", keys[k], json); // stable keys first
        prev = at;
    }
    json = dsmm_free(ctx, json);
    const char *path = test_path("stats.json");
    CHECK_OK(ctx, dsmm_stats_write(s, path));
    CHECK(test_file_exists(path));
    CHECK_ST(ctx, dsmm_stats_write(s, test_path("no/such/dir/stats.json")), DSMM_ERR_IO);
    CHECK(!test_file_exists(test_path("no/such/dir/stats.json")));
    dsmm_stats_destroy(&s);
    CHECK(s == NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_rng(void)
{
    // Known-answer: Philox-4x32-10 with key 0 and counter 0 (Random123 test vector
    // 6627e8d5 e169c58d bc57ac4c 9b00dbd8); we return words 1:0.
    CHECK(dsmm_rng_at(0, 0, 0) == 0xe169c58d6627e8d5ULL);
    dsmm_rng r;
    dsmm_rng_init(&r, 7, 3);
    uint64_t first = dsmm_rng_u64(&r);
    CHECK(first == dsmm_rng_at(7, 3, 0));
    CHECK(dsmm_rng_u64(&r) == dsmm_rng_at(7, 3, 1));
    CHECK(dsmm_rng_at(7, 3, 0) != dsmm_rng_at(7, 4, 0));
    CHECK(dsmm_rng_at(7, 3, 0) != dsmm_rng_at(8, 3, 0));
    // Uniform in [0, 1), mean near 1/2.
    double sum = 0;
    dsmm_rng_init(&r, test_seed(), 0);
    for (int i = 0; i < 100000; i++) {
        double u = dsmm_rng_uniform(&r);
        CHECK(u >= 0 && u < 1);
        sum += u;
    }
    CHECK_NEAR(sum / 100000, 0.5, 0.01);
    // Streams filled by any number of threads give the same numbers.
    enum { N = 4096 };
    static uint64_t a[N], b[N];
    uint64_t seed = test_seed();
    for (int i = 0; i < N; i++) a[i] = dsmm_rng_at(seed, (uint64_t)i, 5);
#ifdef _OPENMP
#pragma omp parallel for num_threads(3) schedule(dynamic, 7)
#endif
    for (int i = 0; i < N; i++) {
        dsmm_rng rr;
        dsmm_rng_init(&rr, seed, (uint64_t)i);
        for (int k = 0; k < 5; k++) dsmm_rng_u64(&rr);
        b[i] = dsmm_rng_u64(&rr);
    }
    CHECK(memcmp(a, b, sizeof a) == 0);
    return TEST_PASS;
}

static int test_outfile_atomic(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    dsmmi_outfile o;
    const char *path = test_path("atomic.txt");
    CHECK_OK(ctx, dsmmi_outfile_open(ctx, &o, path));
    fprintf(o.f, "partial");
    CHECK(!test_file_exists(path)); // nothing under the final name while writing
    dsmmi_outfile_abort(ctx, &o);
    CHECK(!test_file_exists(path));
    CHECK_OK(ctx, dsmmi_outfile_open(ctx, &o, path));
    fprintf(o.f, "whole\n");
    CHECK_OK(ctx, dsmmi_outfile_commit(ctx, &o));
    CHECK(test_file_exists(path));
    CHECK_ST(ctx, dsmmi_outfile_open(ctx, &o, test_path("missing-dir/x")), DSMM_ERR_IO);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "cannot create");
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_threads_setting(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    CHECK(dsmm_ctx_threads(ctx) >= 1);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 3));
    CHECK_EQ_IDX(dsmm_ctx_threads(ctx), 3);
    CHECK_EQ_IDX(dsmm_ctx_rank(ctx), 0);
    CHECK_EQ_IDX(dsmm_ctx_size(ctx), 1);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Big freed blocks are kept for the next allocation of about their size, outside in_use, and
// given up when the budget needs the room.
static int test_block_cache(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    size_t big = (size_t)40 << 20;
    char *p = dsmmi_malloc(ctx, big, 1);
    CHECK(p != NULL);
    p[0] = 1;
    char *keep = p;
    p = dsmmi_free(ctx, p);
    CHECK(ctx->in_use == 0 && ctx->cached >= big);
    char *q = dsmmi_malloc(ctx, big - 4096, 1); // about the same size: the kept block
    CHECK(q == keep);
    CHECK(ctx->in_use >= big - 4096 && ctx->cached == 0);
    q = dsmmi_free(ctx, q);
    char *r = dsmmi_malloc(ctx, big * 3, 1); // far bigger: a new block, the kept one stays
    CHECK(r != NULL && ctx->cached >= big);
    r = dsmmi_free(ctx, r);
    CHECK(ctx->cached >= big * 4); // both slots used
    // A budget that cannot hold the kept blocks plus a new one drops them first.
    dsmm_ctx_set_mem_budget(ctx, big * 2);
    CHECK(ctx->cached == 0);
    char *a = dsmmi_malloc(ctx, big, 1);
    CHECK(a != NULL);
    a = dsmmi_free(ctx, a);                                    // kept: in_use + cached <= budget
    char *b = dsmmi_malloc(ctx, big + big / 2 + (big / 4), 1); // does not fit next to it
    CHECK(b != NULL);
    CHECK(ctx->in_use + ctx->cached <= big * 2);
    b = dsmmi_free(ctx, b);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A product's columns (half its values' bytes) and values, freed and asked for again columns
// first: each gets its own kept block back. With a first fit the columns took the values'
// block and the values a fresh one, faulted in again on every product.
static int test_block_cache_best_fit(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    size_t big = (size_t)36 << 20;
    char *vals = dsmmi_malloc(ctx, 2 * big, 1), *cols = dsmmi_malloc(ctx, big, 1);
    CHECK(vals != NULL && cols != NULL);
    char *keep_vals = vals, *keep_cols = cols;
    vals = dsmmi_free(ctx, vals); // the values' block takes the first slot
    cols = dsmmi_free(ctx, cols);
    CHECK(ctx->cached >= 3 * big);
    cols = dsmmi_malloc(ctx, big, 1);
    vals = dsmmi_malloc(ctx, 2 * big, 1);
    CHECK(cols == keep_cols && vals == keep_vals);
    CHECK(ctx->cached == 0);
    cols = dsmmi_free(ctx, cols);
    vals = dsmmi_free(ctx, vals);
    dsmmi_cache_drop(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Blocks of 16 KiB to 2 MiB are kept too (glibc would give a repeated product's pages back to
// the kernel), calloc'd ones come back zeroed, blocks of 2 to 32 MiB are not kept, the smaller
// blocks leave two slots free for big ones and keep 12 MiB at most.
static int test_block_cache_small(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    size_t mid = (size_t)1 << 20;
    char *p = dsmmi_malloc(ctx, 8 << 10, 1); // below 16 KiB: not kept
    CHECK(p != NULL);
    p = dsmmi_free(ctx, p);
    CHECK(ctx->cached == 0);
    p = dsmmi_malloc(ctx, 4 * mid, 1); // 2 to 32 MiB: not kept
    CHECK(p != NULL);
    p = dsmmi_free(ctx, p);
    CHECK(ctx->cached == 0);
    p = dsmmi_malloc(ctx, 16 << 10, 1); // 16 KiB: kept
    CHECK(p != NULL);
    p = dsmmi_free(ctx, p);
    CHECK(ctx->cached >= (16 << 10));
    dsmmi_cache_drop(ctx);
    p = dsmmi_malloc(ctx, mid, 1);
    CHECK(p != NULL);
    memset(p, 7, mid);
    char *keep = p;
    p = dsmmi_free(ctx, p);
    CHECK(ctx->cached >= mid && ctx->in_use == 0);
    unsigned char *z = dsmmi_calloc(ctx, mid - 100, 1); // the kept block, zeroed
    CHECK((char *)z == keep);
    for (size_t i = 0; i < mid - 100; i++) CHECK_MSG(z[i] == 0, "byte %zu is %d", i, z[i]);
    z = dsmmi_free(ctx, z);
    // As many smaller blocks as slots (0.25 and 0.5 MiB): all but two are kept (two slots
    // stay free for big blocks).
    char *b[DSMMI_CACHE_SLOTS];
    for (int i = 0; i < DSMMI_CACHE_SLOTS; i++) {
        b[i] = dsmmi_malloc(ctx, (mid / 4) << (i % 2), 1);
        CHECK(b[i] != NULL);
    }
    dsmmi_cache_drop(ctx);
    for (int i = 0; i < DSMMI_CACHE_SLOTS; i++) b[i] = dsmmi_free(ctx, b[i]);
    int kept = 0;
    for (int s = 0; s < DSMMI_CACHE_SLOTS; s++) kept += ctx->cache[s] != NULL;
    CHECK_MSG(kept == DSMMI_CACHE_SLOTS - 2, "%d blocks kept", kept);
    // Blocks just under 2 MiB: six fit in the 12 MiB the smaller blocks may hold.
    dsmmi_cache_drop(ctx);
    for (int i = 0; i < 8; i++) {
        b[i] = dsmmi_malloc(ctx, 2 * mid - 4096, 1);
        CHECK(b[i] != NULL);
    }
    for (int i = 0; i < 8; i++) b[i] = dsmmi_free(ctx, b[i]);
    kept = 0;
    for (int s = 0; s < DSMMI_CACHE_SLOTS; s++) kept += ctx->cache[s] != NULL;
    CHECK_MSG(kept == 6 && ctx->cached <= (size_t)12 << 20, "%d blocks kept, %zu bytes", kept,
              ctx->cached);
    size_t big = (size_t)40 << 20;
    char *g1 = dsmmi_malloc(ctx, big, 1), *g2 = dsmmi_malloc(ctx, big, 1);
    CHECK(g1 != NULL && g2 != NULL);
    g1 = dsmmi_free(ctx, g1);
    g2 = dsmmi_free(ctx, g2);
    CHECK(ctx->cached >= 2 * big); // both big blocks found a slot
    // MCL's setting: only big blocks.
    dsmmi_cache_drop(ctx);
    CHECK(dsmmi_cache_min(ctx, DSMMI_CACHE_BIG) == 0);
    p = dsmmi_malloc(ctx, mid, 1);
    CHECK(p != NULL);
    p = dsmmi_free(ctx, p);
    CHECK(ctx->cached == 0);
    CHECK(dsmmi_cache_min(ctx, 0) == DSMMI_CACHE_BIG);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// dsmmi_shrink_account gives the budget back the unused tail but keeps the block, so a kept
// block still serves a request of its full size.
static int test_shrink_account(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    size_t base = ctx->in_use;
    double *p = dsmmi_malloc(ctx, 1000, sizeof *p);
    CHECK(p != NULL);
    CHECK(ctx->in_use == base + 8000);
    dsmmi_shrink_account(ctx, p, 100, sizeof *p);
    CHECK(ctx->in_use == base + 800);
    dsmmi_shrink_account(ctx, p, 500, sizeof *p); // not smaller: no change
    CHECK(ctx->in_use == base + 800);
    p[999] = 1; // the block itself is still whole
    p = dsmmi_free(ctx, p);
    CHECK(ctx->in_use == base);
    size_t big = (size_t)40 << 20;
    char *q = dsmmi_malloc(ctx, big, 1);
    CHECK(q != NULL);
    char *keep = q;
    dsmmi_shrink_account(ctx, q, big / 8, 1);
    CHECK(ctx->in_use == base + big / 8);
    q = dsmmi_free(ctx, q);
    CHECK(ctx->in_use == base && ctx->cached >= big); // kept at its real size
    q = dsmmi_malloc(ctx, big, 1);
    CHECK(q == keep);
    CHECK(ctx->in_use >= base + big && ctx->cached == 0);
    q = dsmmi_free(ctx, q);
    dsmmi_cache_drop(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// dsmmi_move_release: the bytes arrive whatever the size and alignment; the source stays
// freeable; and (Linux) its whole interior pages are no longer resident afterwards, counted
// with mincore, while the page holding its last byte is kept.
static int test_move_release(void)
{
    static const size_t sizes[] = {0, 1, 4095, 4096 + 17, (3u << 20) + 123, (5u << 20)};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
        for (size_t off = 0; off < 3; off++) {
            size_t n = sizes[t];
            unsigned char *src = malloc(n + 8), *dst = malloc(n + 8), *want = malloc(n + 8);
            CHECK(src && dst && want);
            for (size_t i = 0; i < n; i++) src[off + i] = want[i] = (unsigned char)(i * 131 + t);
            dsmmi_move_release(dst + off, src + off, n);
            CHECK(n == 0 || memcmp(dst + off, want, n) == 0);
#ifdef __linux__
            long ps = sysconf(_SC_PAGESIZE);
            uintptr_t page = (uintptr_t)ps, lo = ((uintptr_t)(src + off) + page - 1) / page * page;
            uintptr_t hi = (uintptr_t)(src + off + n) / page * page;
            if (ps > 0 && hi > lo) {
                size_t np = (hi - lo) / page, resident = 0;
                unsigned char *vec = malloc(np);
                CHECK(vec != NULL);
                CHECK(mincore((void *)lo, hi - lo, vec) == 0);
                for (size_t i = 0; i < np; i++) resident += vec[i] & 1;
                free(vec);
                CHECK(resident == 0);
            }
            if (n > 0) CHECK(src[off + n - 1] == want[n - 1]); // the last page is kept
#endif
            free(src);
            free(dst);
            free(want);
        }
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_status_names),
        TEST(test_error_message),
        TEST(test_alloc_accounting),
        TEST(test_budget),
        TEST(test_fail_injection),
        TEST(test_user_allocator),
        TEST(test_parse_size),
        TEST(test_json_and_stats),
        TEST(test_rng),
        TEST(test_outfile_atomic),
        TEST(test_threads_setting),
        TEST(test_block_cache),
        TEST(test_block_cache_best_fit),
        TEST(test_block_cache_small),
        TEST(test_shrink_account),
        TEST(test_move_release),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
