// tests/gpu/test_gpu.c: the CUDA kernels against the CPU kernels (label gpu; exits 77 when no
// device is visible or dsmm was built without CUDA): SpGEMM (gpu and cusparse) on listed edge
// shapes, random and skewed inputs that fill every row bin (device-memory tables included),
// every semiring, float/double/pattern outputs, 32/64-bit columns, unsorted output, real
// matrices; SpMM (gpu and cusparse) for k from 1 to 256, both variants, float and double,
// beta 0 and not, strided B and C; AUTO's threshold; a pool too small for the product; the
// out-of-core product (device only and hybrid) with C 4x the pool and more; the SpGEMM's row
// bins made on the device against the host's, and products planned on the host; both ways of
// handing a row's products to the threads; stage products kept and merged on the device
// (gpu_resident), from host pieces and from pieces in device memory; the distributed SpMM's
// resident dense tile.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dist/summa.h"
#include "gpu/gpu.h"
#include "ref.h"

// A test context with a device set up by o, or NULL (the reason on stderr).
static dsmm_ctx *gpu_ctx_opts(const dsmm_gpu_opts *o)
{
    dsmm_ctx *ctx = test_ctx();
    if (dsmm_ctx_set_gpu(ctx, o) != DSMM_OK) {
        fprintf(stderr, "     no GPU context: %s\n", dsmm_ctx_last_error(ctx));
        dsmm_ctx_destroy(&ctx);
        return NULL;
    }
    return ctx;
}

static dsmm_ctx *gpu_ctx(size_t pool_bytes)
{
    dsmm_gpu_opts o;
    dsmm_gpu_opts_init(&o);
    o.pool_bytes = pool_bytes;
    return gpu_ctx_opts(&o);
}

static uint64_t seed_at(uint64_t k)
{
    return test_seed() * 0x9e3779b97f4a7c15ULL + k;
}

// C by alg (gpu or cusparse) equals C by the CPU's AUTO kernel: same pattern, values within
// 1e-12 relative (both accumulate in double, in different orders).
// DSMM_TEST_NO_CUSPARSE=1 leaves out the cuSPARSE references, so that compute-sanitizer's
// reports (bench/gpu/run.sh) name dsmm's kernels alone.
static int skip_cusparse(int alg_is_cusparse)
{
    const char *e = getenv("DSMM_TEST_NO_CUSPARSE");
    return alg_is_cusparse && e != NULL && strcmp(e, "1") == 0;
}

// The largest magnitude of W's values (tolerances for entries that cancel).
static double max_abs(const dsmm_csr *W)
{
    double big = 0;
    for (dsmm_idx k = 0; k < W->nnz; k++)
        if (fabs(dsmm_csr_value(W, k)) > big) big = fabs(dsmm_csr_value(W, k));
    return big;
}

static int same_as_cpu(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, dsmm_spgemm_alg alg,
                       dsmm_semiring sr, int type, int col_bits, int unsorted, const char *what)
{
    if (skip_cusparse(alg == DSMM_SPGEMM_CUSPARSE)) return TEST_PASS;
    dsmm_spgemm_opts o;
    dsmm_spgemm_info gi, ci;
    dsmm_csr *G = NULL, *W = NULL;
    dsmm_spgemm_opts_init(&o);
    o.semiring = sr;
    o.type = type;
    o.col_bits = col_bits;
    o.unsorted = unsorted;
    o.alg = DSMM_SPGEMM_HASH; // AUTO would send large products to the device
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &W, &ci));
    CHECK_EQ_IDX(ci.on_gpu, 0);
    o.alg = alg;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &G, &gi));
    CHECK_MSG(gi.on_gpu == 1, "%s: did not run on the GPU", what);
    CHECK_MSG(dsmm_csr_check(ctx, G) == DSMM_OK, "%s: %s", what, dsmm_ctx_last_error(ctx));
    CHECK_MSG(unsorted || G->sorted, "%s: rows not sorted", what);
    CHECK_EQ_IDX(gi.nnz, W->nnz);
    CHECK_NEAR(gi.flops, ci.flops, 0);
    CHECK(G->nnz == 0 || (G->colidx32 != NULL) == (col_bits == 32));
    CHECK(gi.device_bytes > 0);
    // two summation orders: 1e-12 relative, and 1e-10 of C's largest magnitude for entries
    // that cancel (bcsstk13: terms near 1e10 leave a rounding residue of 0.3 on either side)
    if (test_csr_same(ctx, G, W, 1e-12, 1e-10 * max_abs(W) + 1e-300, what) != TEST_PASS)
        return TEST_FAIL;
    dsmm_csr_destroy(&G);
    dsmm_csr_destroy(&W);
    return TEST_PASS;
}

static int test_spgemm_shapes(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    static const dsmm_idx shapes[][3] = {{0, 0, 0},   {0, 5, 3},   {4, 0, 6},
                                         {5, 7, 0},   {1, 1, 1},   {7, 3, 9},
                                         {40, 1, 40}, {1, 300, 1}, {200, 150, 90}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        dsmm_csr *A = NULL, *B = NULL;
        test_mat o;
        test_mat_init(&o, shapes[s][0], shapes[s][1], 0.2, seed_at(s));
        o.empty_rows = 0.2;
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
        test_mat_init(&o, shapes[s][1], shapes[s][2], 0.2, seed_at(100 + s));
        o.empty_cols = 0.2;
        o.zeros = 1; // explicit zeros stay structural entries
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
        char what[64];
        snprintf(what, sizeof what, "shape %lldx%lldx%lld", (long long)shapes[s][0],
                 (long long)shapes[s][1], (long long)shapes[s][2]);
        if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, what)) return 1;
        if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_CUSPARSE, DSMM_PLUS_TIMES, -1, 64, 0, what))
            return 1;
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Rows of every bin: a skewed R-MAT graph, a matrix with dense rows (flops far over 4096, so
// device-memory tables, dense ones where they reach half of B's columns), rows with hash
// tables in device memory beside a dense one, and a narrow B (many flops, few columns: small
// tables).
static int test_spgemm_bins(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 12, 16, 0, DSMM_DOUBLE, seed_at(1), &A));
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, "rmat12")) return 1;
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 32, 1, "rmat12 unsorted"))
        return 1;
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_CUSPARSE, DSMM_PLUS_TIMES, -1, 64, 0, "rmat12 cusp"))
        return 1;
    dsmm_csr_destroy(&A);
    test_mat o;
    test_mat_init(&o, 3000, 3000, 0.004, seed_at(2));
    o.dense_row = 17;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    test_mat_init(&o, 3000, 20000, 0.01, seed_at(3));
    o.dense_row = 17; // A's dense row meets B's: a row of C with 20000 columns
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, "dense rows")) return 1;
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 1, "dense rows unsort"))
        return 1;
    dsmm_csr_destroy(&B);
    test_mat_init(&o, 3000, 6, 0.9, seed_at(4));
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, "narrow B")) return 1;
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&A);
    // device-memory rows of both kinds in one product: rows of about 6000 flops over 100000
    // columns get hash tables of 16384 entries; the dense row of A (600000 flops) a dense table
    test_mat_init(&o, 500, 3000, 0.01, seed_at(5));
    o.dense_row = 17;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    test_mat_init(&o, 3000, 100000, 0.002, seed_at(6));
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, "hash and dense"))
        return 1;
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 32, 1, "hash+dense unsort"))
        return 1;
    if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_MIN_PLUS, -1, 64, 0, "hash+dense min-plus"))
        return 1;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The bins of A * B made on the device are plan.c's, array for array: counts, flops' sum and
// maximum, every bin's rows in increasing order (a stable sort), the global rows' table and
// block offsets.
static int plan_same(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const char *what)
{
    dsmmi_gpu_bins h, d;
    dsmm_idx *flops = calloc((size_t)A->nrows + 1, sizeof *flops), total = 0;
    CHECK(flops != NULL);
    dsmmi_spgemm_row_flops(A, B, flops, &total);
    CHECK_OK(ctx, dsmmi_gpu_bins_make(ctx, flops, A->nrows, B->ncols, &h));
    CHECK_OK(ctx, dsmmi_gpu_bins_device(ctx, A, B, &d));
    for (int b = 0; b < DSMMI_GPU_NBINS; b++) {
        CHECK_MSG(h.count[b] == d.count[b],
                  "%s: bin %d holds %lld rows on the host, %lld on the device", what, b,
                  (long long)h.count[b], (long long)d.count[b]);
        CHECK_EQ_IDX(h.start[b + 1], d.start[b + 1]);
    }
    CHECK_EQ_IDX(h.total_flops, total);
    CHECK_EQ_IDX(d.total_flops, total);
    CHECK_EQ_IDX(d.max_flops, h.max_flops);
    for (dsmm_idx i = 0; i < A->nrows; i++)
        CHECK_MSG(h.rows[i] == d.rows[i],
                  "%s: slot %lld holds row %d on the host, %d on the device", what, (long long)i,
                  h.rows[i], d.rows[i]);
    for (dsmm_idx g = 0; g <= h.count[DSMMI_GPU_GLOBAL_BIN]; g++) {
        CHECK_EQ_IDX(d.gtab_off[g], h.gtab_off[g]);
        CHECK_EQ_IDX(d.gblk_off[g], h.gblk_off[g]);
    }
    printf("     %-24s %8lld rows, %6lld with device-memory tables: same bins\n", what,
           (long long)A->nrows, (long long)h.count[DSMMI_GPU_GLOBAL_BIN]);
    dsmmi_gpu_bins_free(ctx, &h);
    dsmmi_gpu_bins_free(ctx, &d);
    free(flops);
    return TEST_PASS;
}

// plan_same on edge shapes (no rows, no products, one row), rows of every bin (R-MAT, dense
// rows, both kinds of device-memory tables), a narrow B, real matrices. Then products planned
// on the host (dsmm_gpu_opts.host_planning) still equal the CPU's.
static int test_spgemm_plan(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    static const dsmm_idx shapes[][3] = {{0, 0, 0}, {0, 5, 3},   {4, 0, 6},     {5, 7, 0},
                                         {1, 1, 1}, {1, 300, 1}, {200, 150, 90}};
    dsmm_csr *A = NULL, *B = NULL;
    test_mat o;
    char what[64];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        test_mat_init(&o, shapes[s][0], shapes[s][1], 0.2, seed_at(500 + s));
        o.empty_rows = 0.2;
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
        test_mat_init(&o, shapes[s][1], shapes[s][2], 0.2, seed_at(600 + s));
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
        snprintf(what, sizeof what, "shape %lldx%lldx%lld", (long long)shapes[s][0],
                 (long long)shapes[s][1], (long long)shapes[s][2]);
        if (plan_same(ctx, A, B, what)) return TEST_FAIL;
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_OK(ctx, test_rand_rmat(ctx, 14, 16, 0, DSMM_DOUBLE, seed_at(501), &A));
    if (plan_same(ctx, A, A, "rmat14")) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    test_mat_init(&o, 500, 3000, 0.01, seed_at(502));
    o.dense_row = 17;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    test_mat_init(&o, 3000, 100000, 0.002, seed_at(503));
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (plan_same(ctx, A, B, "hash and dense tables")) return TEST_FAIL;
    dsmm_csr_destroy(&B);
    test_mat_init(&o, 3000, 6, 0.9, seed_at(504));
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (plan_same(ctx, A, B, "narrow B")) return TEST_FAIL;
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&A);
    static const char *files[] = {"hep-th.mtx.gz", "facebook-combined.mtx.gz"};
    for (int f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, files[f]);
        CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL));
        if (plan_same(ctx, A, A, files[f])) return TEST_FAIL;
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);

    // the host's planning, kept as an option, still gives the CPU's products
    dsmm_gpu_opts go;
    dsmm_gpu_opts_init(&go);
    go.host_planning = 1;
    ctx = gpu_ctx_opts(&go);
    CHECK(ctx != NULL);
    CHECK_OK(ctx, test_rand_rmat(ctx, 12, 16, 0, DSMM_DOUBLE, seed_at(505), &A));
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, "host-planned rmat12"))
        return TEST_FAIL;
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The other ways of handing a shared-table row's products to its threads (dsmm_gpu_opts.
// spgemm_spread: 1 by entry of A, 2 chosen per chunk; the default 0, spread evenly, runs in
// every other test), each against the CPU: R-MAT (hub rows of B beside short ones), a dense
// row of A with a narrow B (3000 A entries in one shared-table row: many chunks of a group),
// every semiring (plus-pair passes no values of A), unsorted output, 32-bit columns, hep-th.
static int test_spgemm_spread(void)
{
    for (int mode = 1; mode <= 2; mode++) {
        dsmm_gpu_opts go;
        dsmm_gpu_opts_init(&go);
        go.spgemm_spread = mode;
        dsmm_ctx *ctx = gpu_ctx_opts(&go);
        if (ctx == NULL) return TEST_SKIP;
        char what[64];
        dsmm_csr *A = NULL, *B = NULL;
        CHECK_OK(ctx, test_rand_rmat(ctx, 12, 16, 0, DSMM_DOUBLE, seed_at(700 + mode), &A));
        static const dsmm_semiring srs[] = {DSMM_PLUS_TIMES, DSMM_PLUS_PAIR, DSMM_MIN_PLUS,
                                            DSMM_MAX_TIMES};
        for (int k = 0; k < 4; k++) {
            snprintf(what, sizeof what, "spread %d rmat12 semiring %d", mode, k);
            if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, srs[k], -1, 64, 0, what)) return 1;
        }
        snprintf(what, sizeof what, "spread %d rmat12 unsorted 32-bit", mode);
        if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 32, 1, what)) return 1;
        dsmm_csr_destroy(&A);
        test_mat o;
        test_mat_init(&o, 3000, 3000, 0.004, seed_at(710 + mode));
        o.dense_row = 17;
        o.empty_rows = 0.1;
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
        test_mat_init(&o, 3000, 6, 0.9, seed_at(720 + mode));
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
        snprintf(what, sizeof what, "spread %d narrow B", mode);
        if (same_as_cpu(ctx, A, B, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, what)) return 1;
        dsmm_csr_destroy(&B);
        dsmm_csr_destroy(&A);
        char path[1024];
        snprintf(path, sizeof path, "%s/hep-th.mtx.gz", DSMM_TEST_DATA_DIR);
        CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL));
        snprintf(what, sizeof what, "spread %d hep-th", mode);
        if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 64, 0, what)) return 1;
        dsmm_csr_destroy(&A);
        CHECK_NO_LEAK(ctx);
    }
    // a setting out of range is refused, naming it
    dsmm_ctx *ctx = test_ctx();
    dsmm_gpu_opts go;
    dsmm_gpu_opts_init(&go);
    go.spgemm_spread = 3;
    CHECK_ST(ctx, dsmm_ctx_set_gpu(ctx, &go), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "spgemm_spread");
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spgemm_semirings_types(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    dsmm_csr *A = NULL, *Af = NULL, *P = NULL;
    CHECK_OK(ctx, test_rand_er(ctx, 500, 12, 0, DSMM_DOUBLE, seed_at(5), &A));
    static const dsmm_semiring srs[] = {DSMM_PLUS_TIMES, DSMM_PLUS_PAIR, DSMM_MIN_PLUS,
                                        DSMM_MAX_TIMES};
    for (int s = 0; s < 4; s++)
        if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, srs[s], -1, 64, 0, dsmm_semiring_name(srs[s])))
            return 1;
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, DSMM_FLOAT, 32, 0, "float C"))
        return 1;
    if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, DSMM_PATTERN, 64, 0, "pattern"))
        return 1;
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_FLOAT, 32, &Af));
    if (same_as_cpu(ctx, Af, Af, DSMM_SPGEMM_GPU, DSMM_PLUS_TIMES, -1, 32, 0, "float inputs"))
        return 1;
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_PATTERN, 64, &P));
    if (same_as_cpu(ctx, P, P, DSMM_SPGEMM_GPU, DSMM_PLUS_PAIR, -1, 64, 0, "pattern inputs"))
        return 1;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&Af);
    dsmm_csr_destroy(&P);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spgemm_real(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    static const char *files[] = {"hep-th.mtx.gz", "fe_4elt2.mtx.gz", "bcsstk13.mtx.gz",
                                  "facebook-combined.mtx.gz"};
    for (int f = 0; f < 4; f++) {
        char path[1024];
        dsmm_csr *A = NULL;
        snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, files[f]);
        CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL));
        // pattern graphs count paths (plus-pair), as the CLI does for them
        dsmm_semiring sr = A->type == DSMM_PATTERN ? DSMM_PLUS_PAIR : DSMM_PLUS_TIMES;
        if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_GPU, sr, -1, 64, 0, files[f])) return 1;
        if (same_as_cpu(ctx, A, A, DSMM_SPGEMM_CUSPARSE, sr, -1, 64, 0, files[f])) return 1;
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// AUTO: below the threshold on the CPU, at or above it on the GPU; the symbolic/numeric pair
// and masks run on the CPU even when named gpu.
static int test_spgemm_auto(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_gpu_opts go;
    dsmm_gpu_opts_init(&go);
    dsmm_csr *A = NULL, *C = NULL;
    CHECK_OK(ctx, test_rand_er(ctx, 400, 8, 0, DSMM_DOUBLE, seed_at(6), &A));
    double flops = ref_flops(A, A);
    go.auto_flops = flops + 1;
    if (dsmm_ctx_set_gpu(ctx, &go) != DSMM_OK) {
        dsmm_csr_destroy(&A);
        dsmm_ctx_destroy(&ctx);
        return TEST_SKIP;
    }
    dsmm_spgemm_info info;
    dsmm_gpu_info gi;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, NULL, &C, &info));
    CHECK_EQ_IDX(info.on_gpu, 0);
    dsmm_csr_destroy(&C);
    go.auto_flops = flops;
    CHECK_OK(ctx, dsmm_ctx_set_gpu(ctx, &go));
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, NULL, &C, &info));
    CHECK_EQ_IDX(info.on_gpu, 1);
    dsmm_csr_destroy(&C);
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_GPU;
    CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, A, A, &o, &C, &info));
    CHECK_EQ_IDX(info.on_gpu, 0);
    CHECK_OK(ctx, dsmm_csr_spgemm_numeric(ctx, A, A, &o, C, &info));
    dsmm_csr_destroy(&C);
    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &gi));
    CHECK_EQ_IDX(gi.enabled, 1);
    CHECK_EQ_IDX(gi.products_gpu, 1);
    CHECK(gi.products_cpu >= 2);
    CHECK_EQ_IDX(gi.pool_in_use, 0); // every product returned its blocks
    CHECK(gi.pool_peak > 0);
    printf("     device: %s, pool %.0f MiB\n", gi.name, gi.pool_bytes / 1048576.0);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A pool too small for the product: DSMM_ERR_NOMEM naming the pool, nothing left allocated.
static int test_spgemm_small_pool(void)
{
    dsmm_ctx *ctx = gpu_ctx((size_t)1 << 20);
    if (ctx == NULL) return TEST_SKIP;
    dsmm_csr *A = NULL, *C = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 13, 16, 0, DSMM_DOUBLE, seed_at(7), &A));
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_GPU;
    CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, NULL), DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "device pool");
    CHECK(C == NULL);
    dsmm_gpu_info gi;
    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &gi));
    CHECK_EQ_IDX(gi.pool_in_use, 0);
    dsmm_ctx_clear_error(ctx);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- Out of core ---------------------------------------------------------------------------- */

// The product in chunks on the device equals the CPU's: panel counts forced; a 4 MiB pool
// that holds a quarter of C or less (the out-of-core path, pipelined copies); hybrid at a fixed
// ratio and auto; chunks that do not fit the pool are split at run time.
static int test_ooc(void)
{
    dsmm_ctx *ctx = gpu_ctx((size_t)4 << 20);
    if (ctx == NULL) return TEST_SKIP;
    dsmm_csr *A = NULL, *W = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 13, 16, 1, DSMM_DOUBLE, seed_at(31), &A));
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.alg = DSMM_SPGEMM_HASH; // the CPU's C (AUTO would try the 4 MiB device pool)
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &so, &W, NULL));
    so.alg = DSMM_SPGEMM_AUTO;
    CHECK((size_t)W->nnz * 12 >= (size_t)4 * (4 << 20)); // C is 4x the pool or more
    static const int panels[][2] = {{0, 0}, {1, 1}, {4, 1}, {3, 3}, {16, 2}};
    static const double ratios[] = {-2, 0.65, -1}; // -2: device only
    for (size_t r = 0; r < 3; r++) {
        for (size_t p = 0; p < 5; p++) {
            dsmm_ooc_opts o;
            dsmm_ooc_info in;
            dsmm_csr *C = NULL;
            char w[96];
            dsmm_ooc_opts_init(&o);
            o.use_gpu = 1;
            o.hybrid = ratios[r] > -2;
            o.gpu_ratio = ratios[r] > -2 ? ratios[r] : 0.65;
            o.row_panels = panels[p][0];
            o.col_panels = panels[p][1];
            snprintf(w, sizeof w, "ooc %dx%d ratio %g", panels[p][0], panels[p][1], ratios[r]);
            CHECK_OK(ctx, dsmm_csr_spgemm_ooc(ctx, A, A, &so, &o, &C, &in));
            CHECK_MSG(dsmm_csr_check(ctx, C) == DSMM_OK, "%s: %s", w, dsmm_ctx_last_error(ctx));
            if (test_csr_same(ctx, C, W, 1e-12, 1e-300, w) != TEST_PASS) return TEST_FAIL;
            // (auto: the host may take every chunk before the device finishes one)
            if (ratios[r] != -1) CHECK_MSG(in.chunks_gpu > 0, "%s: nothing ran on the device", w);
            if (!o.hybrid) CHECK(in.chunks_gpu == in.chunks);
            if (panels[p][0] == 0) CHECK_MSG(in.chunks >= 4, "%s: %d chunks", w, in.chunks);
            CHECK(in.seconds_hidden <= in.seconds_compute + 1e-12);
            dsmm_gpu_info gi;
            CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &gi));
            CHECK_EQ_IDX(gi.pool_in_use, 0);
            dsmm_free(ctx, in.chunk);
            dsmm_csr_destroy(&C);
        }
    }
    dsmm_csr_destroy(&W);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- SpMM ---------------------------------------------------------------------------------- */

static void fill_dense(dsmm_dense *D, uint64_t seed)
{
    for (dsmm_idx i = 0; i < D->nrows; i++)
        for (dsmm_idx j = 0; j < D->ncols; j++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            double v = (double)((int)(seed >> 59) - 16) / 4.0;
            if (D->type == DSMM_DOUBLE)
                ((double *)D->val)[i * D->ld + j] = v;
            else
                ((float *)D->val)[i * D->ld + j] = (float)v;
        }
}

// C(:, 0:k) against want, within 8 ulps of C's type per term (row i's entries of A plus
// extra) of the magnitude scale; C's columns past k (filled by fill_dense(seed) before) are
// not C's and must be untouched.
static int dense_near(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_dense *C, dsmm_idx k,
                      dsmm_idx extra, const double *want, const double *scale, uint64_t seed,
                      const char *what)
{
    dsmm_type t = C->type;
    dsmm_dense *orig = NULL;
    CHECK_OK(ctx, dsmm_dense_create(ctx, C->nrows, C->ncols, t, &orig));
    fill_dense(orig, seed);
    double eps = t == DSMM_DOUBLE ? 2.2e-16 : 1.2e-7;
    for (dsmm_idx i = 0; i < C->nrows; i++) {
        dsmm_idx terms = A->rowptr[i + 1] - A->rowptr[i] + extra;
        for (dsmm_idx j = 0; j < C->ncols; j++) {
            double got = t == DSMM_DOUBLE ? ((double *)C->val)[i * C->ld + j]
                                          : ((float *)C->val)[i * C->ld + j];
            if (j >= k) {
                double o0 = t == DSMM_DOUBLE ? ((double *)orig->val)[i * orig->ld + j]
                                             : ((float *)orig->val)[i * orig->ld + j];
                CHECK_MSG(got == o0, "%s: padding (%lld, %lld) written", what, (long long)i,
                          (long long)j);
                continue;
            }
            double w = want[i * k + j], tol = 8 * eps * (double)terms * scale[i * k + j];
            CHECK_MSG(fabs(got - w) <= tol, "%s: C(%lld, %lld) = %.17g, want %.17g", what,
                      (long long)i, (long long)j, got, w);
        }
    }
    dsmm_dense_destroy(&orig);
    return TEST_PASS;
}

// Every block of the device pool given back.
static int pool_empty(dsmm_ctx *ctx)
{
    dsmm_gpu_info gi;
    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &gi));
    CHECK_MSG(gi.pool_in_use == 0, "%zu pool bytes still held", gi.pool_in_use);
    return TEST_PASS;
}

// One SpMM by alg against ref_spmm, within 8 ulps of the type per term of the magnitude.
static int spmm_case(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type t, double beta,
                     dsmm_idx pad, dsmm_spmm_alg alg, const char *what)
{
    dsmm_dense *B = NULL, *C = NULL, Bv, Cv;
    dsmm_idx m = A->nrows, n = A->ncols;
    CHECK_OK(ctx, dsmm_dense_create(ctx, n, k + pad, t, &B));
    CHECK_OK(ctx, dsmm_dense_create(ctx, m, k + pad, t, &C));
    fill_dense(B, seed_at(11));
    fill_dense(C, seed_at(12));
    Bv = *B; // a k-column view with ld = k + pad
    Bv.ncols = k;
    Cv = *C;
    Cv.ncols = k;
    double *want = malloc(((size_t)m * k + 1) * sizeof *want);
    double *scale = malloc(((size_t)m * k + 1) * sizeof *scale);
    CHECK(want && scale);
    CHECK_OK(ctx, ref_spmm(A, 0, 1.5, &Bv, beta, &Cv, want, scale, NULL));
    dsmm_spmm_opts o;
    dsmm_spmm_info info;
    dsmm_spmm_opts_init(&o);
    o.alg = alg;
    o.alpha = 1.5;
    o.beta = beta;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, &Bv, &Cv, &o, &info));
    // (no entries: the front end scales C by beta on the host)
    CHECK_MSG(info.on_gpu == 1 || A->nnz == 0, "%s: not on the GPU", what);
    if (dense_near(ctx, A, C, k, 2, want, scale, seed_at(12), what) != TEST_PASS) return TEST_FAIL;
    free(want);
    free(scale);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    return TEST_PASS;
}

static int test_spmm(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    dsmm_csr *U = NULL, *S = NULL, *E = NULL;
    test_mat o;
    test_mat_init(&o, 700, 500, 0.01, seed_at(20));
    o.empty_rows = 0.1;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &U)); // uniform rows: row-split
    o.dense_row = 3;                           // one long row: split rows
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &S));
    CHECK_OK(ctx, dsmm_csr_create(ctx, 9, 4, 0, DSMM_DOUBLE, &E)); // no entries at all
    static const dsmm_idx ks[] = {1, 3, 8, 16, 31, 32, 33, 64, 128, 256};
    static const dsmm_spmm_alg algs[] = {DSMM_SPMM_GPU, DSMM_SPMM_CUSPARSE};
    for (int a = 0; a < 2 && !skip_cusparse(a == 1); a++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int t = 0; t < 2; t++) {
                dsmm_type ty = t ? DSMM_FLOAT : DSMM_DOUBLE;
                char what[96];
                for (int v = 0; v < 3; v++) {
                    const dsmm_csr *A = v == 0 ? U : v == 1 ? S : E;
                    snprintf(what, sizeof what, "%s k=%lld %s %s", dsmm_spmm_alg_name(algs[a]),
                             (long long)ks[ki], ty == DSMM_FLOAT ? "float" : "double",
                             v == 0   ? "uniform"
                             : v == 1 ? "skewed"
                                      : "empty");
                    if (spmm_case(ctx, A, ks[ki], ty, 0.0, 0, algs[a], what)) return 1;
                    if (spmm_case(ctx, A, ks[ki], ty, -0.5, 3, algs[a], what)) return 1;
                }
            }
    dsmm_csr_destroy(&U);
    dsmm_csr_destroy(&S);
    dsmm_csr_destroy(&E);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// dsmm_gpu_opts.spmm_unroll: four entries' loads of B in flight (4) against one (1, the
// default). The row-split kernel adds the products in the same order either way, so C is the same
// to the bit; the split-rows kernel's atomics add in any order, so there C only agrees with the
// reference (spmm_case). Rows of 0 to 9 entries (remainders of every length), k from 1 to 256,
// float and double, vectorised and not; a value other than 0, 1 and 4 is refused.
static int test_spmm_unroll(void)
{
    dsmm_ctx *ctx[2] = {NULL, NULL};
    dsmm_gpu_opts go;
    for (int i = 0; i < 2; i++) {
        dsmm_gpu_opts_init(&go);
        go.pool_bytes = (size_t)256 << 20;
        go.spmm_unroll = i == 0 ? 1 : 4;
        ctx[i] = gpu_ctx_opts(&go);
        if (ctx[i] == NULL) {
            dsmm_ctx_destroy(&ctx[0]);
            return TEST_SKIP;
        }
    }
    dsmm_csr *U = NULL, *S = NULL;
    test_mat o;
    test_mat_init(&o, 900, 400, 0.012, seed_at(40)); // about 4.8 entries a row, 0 to 9+
    o.empty_rows = 0.05;
    CHECK_OK(ctx[0], test_rand_csr(ctx[0], &o, &U));
    o.dense_row = 2; // long rows: the split variant
    CHECK_OK(ctx[0], test_rand_csr(ctx[0], &o, &S));
    static const dsmm_idx ks[] = {1, 4, 8, 30, 32, 128, 256};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int t = 0; t < 2; t++) {
            dsmm_type ty = t ? DSMM_FLOAT : DSMM_DOUBLE;
            dsmm_idx k = ks[ki];
            dsmm_dense *B = NULL, *C[2] = {NULL, NULL};
            CHECK_OK(ctx[0], dsmm_dense_create(ctx[0], U->ncols, k, ty, &B));
            fill_dense(B, seed_at(41 + ki));
            for (int i = 0; i < 2; i++) {
                dsmm_spmm_opts so;
                dsmm_spmm_info info;
                dsmm_spmm_opts_init(&so);
                so.alg = DSMM_SPMM_GPU;
                CHECK_OK(ctx[i], dsmm_dense_create(ctx[i], U->nrows, k, ty, &C[i]));
                fill_dense(C[i], seed_at(60 + i)); // different garbage: beta 0 must not read it
                CHECK_OK(ctx[i], dsmm_csr_spmm(ctx[i], U, B, C[i], &so, &info));
                CHECK_MSG(info.on_gpu == 1 && info.gpu_variant == 0,
                          "unroll k=%lld: on_gpu %d, variant %d (row-split expected)", (long long)k,
                          info.on_gpu, info.gpu_variant);
            }
            size_t bytes = (size_t)U->nrows * (size_t)k * dsmmi_type_size(ty);
            CHECK_MSG(memcmp(C[0]->val, C[1]->val, bytes) == 0,
                      "unroll 1 and 4 differ at k=%lld %s (row-split adds in one order)",
                      (long long)k, ty == DSMM_FLOAT ? "float" : "double");
            dsmm_dense_destroy(&B);
            dsmm_dense_destroy(&C[0]);
            dsmm_dense_destroy(&C[1]);
            char what[64];
            for (int i = 0; i < 2; i++) {
                snprintf(what, sizeof what, "unroll %d split rows k=%lld %s", i ? 4 : 1,
                         (long long)k, ty == DSMM_FLOAT ? "float" : "double");
                if (spmm_case(ctx[i], S, k, ty, -0.5, 1, DSMM_SPMM_GPU, what)) return TEST_FAIL;
            }
        }
    dsmm_csr_destroy(&U);
    dsmm_csr_destroy(&S);
    for (int i = 0; i < 2; i++) {
        CHECK_NO_LEAK(ctx[i]);
        dsmm_ctx_destroy(&ctx[i]);
    }
    dsmm_ctx *bad = test_ctx();
    dsmm_gpu_opts_init(&go);
    go.spmm_unroll = 2;
    CHECK(dsmm_ctx_set_gpu(bad, &go) == DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(bad), "spmm_unroll");
    dsmm_ctx_destroy(&bad);
    return TEST_PASS;
}

// Products kept on the device (dsmm_dist_opts.gpu_resident): products put in slots from the
// host and summed on the device equal the host's k-way merge for every semiring, on empty,
// one-row and rectangular shapes with empty parts and float, double and pattern values, with
// an empty (skipped) slot among them; the sum is the same to the bit whether the products
// arrive in slot order, reversed or interleaved (the fixed tree of sum_tree.c), with k - 1
// merges (one for a lone product, whose rows it sorts); a slot left unfilled leaves sums
// apart, merged at the finish; C crosses the bus once (the download counted to the byte); a
// slot filled twice or out of range is refused and the accumulator goes on.
static int test_resident_merge(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    static const dsmm_idx shapes[][2] = {{0, 0}, {0, 4}, {5, 0}, {1, 1}, {37, 23}, {300, 200}};
    static const int parts[] = {0, 1, 2, 3, 5};
    for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
        dsmm_idx nr = shapes[h][0], nc = shapes[h][1];
        for (size_t q = 0; q < sizeof parts / sizeof parts[0]; q++) {
            int k = parts[q];
            dsmm_csr *P[5] = {NULL, NULL, NULL, NULL, NULL};
            for (int j = 0; j < k; j++) {
                test_mat o;
                // part 1 empty; values double, float or a pattern (ones) by turns
                test_mat_init(&o, nr, nc, j == 1 ? 0.0 : 0.15, seed_at(1000 + 10 * h + j));
                o.empty_rows = 0.2;
                o.type = j % 3 == 0 ? DSMM_DOUBLE : j % 3 == 1 ? DSMM_FLOAT : DSMM_PATTERN;
                CHECK_OK(ctx, test_rand_csr(ctx, &o, &P[j]));
            }
            // k + 1 slots: slot `hole` (in the middle) has no product
            int nslots = k + 1, hole = k / 2, slot_of[5];
            for (int j = 0; j < k; j++) slot_of[j] = j < hole ? j : j + 1;
            for (int sr = 0; sr < DSMM_SEMIRING_COUNT; sr++) {
                dsmm_csr *W = NULL, *G0 = NULL;
                CHECK_OK(ctx, dsmmi_csr_merge(ctx, (const dsmm_csr *const *)P, k, nr, nc,
                                              (dsmm_semiring)sr, DSMM_DOUBLE, 64, &W));
                // orders: slot order, reversed, odd slots first; the last leaves the hole
                // unfilled (never skipped)
                for (int ord = 0; ord < 3; ord++) {
                    char what[112];
                    snprintf(what, sizeof what,
                             "resident merge %lldx%lld, %d parts, semiring %d, order %d",
                             (long long)nr, (long long)nc, k, sr, ord);
                    int seq[5], n = 0;
                    for (int j = 0; j < k; j++) seq[n++] = ord == 1 ? k - 1 - j : j;
                    if (ord == 2) {
                        n = 0;
                        for (int j = 1; j < k; j += 2) seq[n++] = j;
                        for (int j = 0; j < k; j += 2) seq[n++] = j;
                    }
                    dsmmi_gpu_acc *acc = NULL;
                    CHECK_OK(ctx,
                             dsmmi_gpu_acc_create(ctx, nr, nc, (dsmm_semiring)sr, nslots, &acc));
                    if (ord != 2) CHECK_OK(ctx, dsmmi_gpu_acc_skip(ctx, acc, hole));
                    for (int j = 0; j < n; j++)
                        CHECK_OK(ctx, dsmmi_gpu_acc_add(ctx, acc, slot_of[seq[j]], P[seq[j]]));
                    if (ord == 0) {
                        // refused: a slot filled twice, a slot out of range
                        CHECK(dsmmi_gpu_acc_skip(ctx, acc, hole) == DSMM_ERR_INTERNAL);
                        CHECK(strstr(dsmm_ctx_last_error(ctx), "filled already") != NULL);
                        dsmm_ctx_clear_error(ctx);
                        CHECK(dsmmi_gpu_acc_skip(ctx, acc, nslots) == DSMM_ERR_INTERNAL);
                        CHECK(strstr(dsmm_ctx_last_error(ctx), "out of range") != NULL);
                        dsmm_ctx_clear_error(ctx);
                        if (k > 0) {
                            CHECK(dsmmi_gpu_acc_add(ctx, acc, slot_of[0], P[0]) ==
                                  DSMM_ERR_INTERNAL);
                            dsmm_ctx_clear_error(ctx);
                        }
                    }
                    dsmm_gpu_info before, after;
                    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &before));
                    int merges = -1;
                    double sec = -1;
                    dsmm_csr *G = NULL;
                    CHECK_OK(ctx,
                             dsmmi_gpu_acc_finish(ctx, acc, DSMM_DOUBLE, 64, &G, &merges, &sec));
                    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &after));
                    dsmmi_gpu_acc_free(ctx, &acc);
                    CHECK(acc == NULL);
                    // every slot filled: k - 1 pairwise merges. The unfilled hole leaves sums
                    // apart, merged at once by the finish: for k = 5 (slots 0 1 _ 3 4 5) the
                    // pairs 0+1 and 4+5, then one merge of [0,2), 3 and [4,6).
                    static const int want_hole[] = {0, 1, 1, 2, -1, 3};
                    int want = ord == 2 ? want_hole[k] : k == 0 ? 0 : k == 1 ? 1 : k - 1;
                    CHECK_MSG(merges == want, "%s: %d merges, want %d", what, merges, want);
                    CHECK(sec >= 0);
                    double down = k == 0 ? 0 : (double)((nr + 1) * 8 + G->nnz * (4 + 8));
                    CHECK_MSG(after.bytes_d2h - before.bytes_d2h == down,
                              "%s: %.0f bytes downloaded, want %.0f", what,
                              after.bytes_d2h - before.bytes_d2h, down);
                    CHECK_MSG(dsmm_csr_check(ctx, G) == DSMM_OK, "%s: %s", what,
                              dsmm_ctx_last_error(ctx));
                    CHECK_MSG(G->sorted, "%s: rows not sorted", what);
                    // sums in another order (a tree, not k-way): a cancelling entry keeps a
                    // residue
                    if (test_csr_same(ctx, G, W, 1e-12, 1e-13 * max_abs(W) + 1e-300, what) !=
                        TEST_PASS)
                        return TEST_FAIL;
                    if (ord == 0) {
                        G0 = G;
                        G = NULL;
                    } else if (ord == 1) {
                        // the same pairs merged whatever the order: the same bits
                        CHECK_MSG(
                            G->nnz == G0->nnz &&
                                memcmp(G->rowptr, G0->rowptr,
                                       (size_t)(nr + 1) * sizeof *G->rowptr) == 0 &&
                                (G->nnz == 0 ||
                                 (memcmp(G->colidx, G0->colidx,
                                         (size_t)G->nnz * sizeof *G->colidx) == 0 &&
                                  memcmp(G->val, G0->val, (size_t)G->nnz * sizeof(double)) == 0)),
                            "%s: not the bits of slot order", what);
                    }
                    dsmm_csr_destroy(&G);
                }
                dsmm_csr_destroy(&G0);
                dsmm_csr_destroy(&W);
            }
            for (int j = 0; j < k; j++) dsmm_csr_destroy(&P[j]);
        }
    }
    if (pool_empty(ctx) != TEST_PASS) return TEST_FAIL;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// P in SUMMA's wire layout (values as type) copied into a block of the device pool (*dev),
// where a CUDA-aware MPI leaves a received piece, and the CSR view over it.
static int piece_to_device(dsmm_ctx *ctx, const dsmm_csr *P, dsmm_type type, void **dev,
                           dsmm_csr *view)
{
    char *buf = NULL;
    size_t bytes = dsmmi_piece_bytes(P->nrows, P->nnz, type);
    CHECK_OK(ctx, dsmmi_piece_pack(ctx, P, type, &buf));
    CHECK_OK(ctx, dsmmi_gpu_buf_alloc(ctx, bytes, "test piece", dev));
    CHECK_OK(ctx, dsmmi_gpu_copy(ctx, *dev, buf, bytes, 1));
    dsmmi_free(ctx, buf);
    dsmmi_piece_view(*dev, P->nrows, P->ncols, P->nnz, type, ctx, view);
    return TEST_PASS;
}

// SUMMA's stages on the device: A(:, lo:hi) * B(lo:hi, :) for three stages, each pair of
// pieces packed in SUMMA's wire layout and multiplied either from the host (uploaded) or from
// device memory (copied there first, where a CUDA-aware MPI leaves a received piece: float
// values widened on the device), the products kept and summed on the device: the CPU's A * B,
// for a rectangular random product with empty rows and a skewed R-MAT square, double and
// float values under every semiring, and patterns under plus-pair.
static int test_resident_stages(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    for (int c = 0; c < 2; c++) {
        dsmm_csr *A0 = NULL, *B0 = NULL;
        if (c == 0) {
            test_mat o;
            test_mat_init(&o, 120, 90, 0.08, seed_at(2000));
            o.empty_rows = 0.2;
            CHECK_OK(ctx, test_rand_csr(ctx, &o, &A0));
            test_mat_init(&o, 90, 70, 0.1, seed_at(2001));
            o.empty_cols = 0.2;
            CHECK_OK(ctx, test_rand_csr(ctx, &o, &B0));
        } else {
            CHECK_OK(ctx, test_rand_rmat(ctx, 10, 8, 0, DSMM_DOUBLE, seed_at(2002), &A0));
            CHECK_OK(ctx, test_rand_rmat(ctx, 10, 8, 0, DSMM_DOUBLE, seed_at(2003), &B0));
        }
        for (int t = 0; t < 3; t++) {
            dsmm_type type = t == 0 ? DSMM_DOUBLE : t == 1 ? DSMM_FLOAT : DSMM_PATTERN;
            dsmm_csr *A = NULL, *B = NULL;
            CHECK_OK(ctx, test_csr_convert(ctx, A0, type, 32, &A));
            CHECK_OK(ctx, test_csr_convert(ctx, B0, type, 32, &B));
            for (int sr = 0; sr < DSMM_SEMIRING_COUNT; sr++) {
                // a pattern has no values for the others to read (refused, as on the CPU)
                if (type == DSMM_PATTERN && sr != DSMM_PLUS_PAIR) continue;
                dsmm_csr *W = NULL;
                dsmm_spgemm_opts so;
                dsmm_spgemm_info wi;
                dsmm_spgemm_opts_init(&so);
                so.alg = DSMM_SPGEMM_HASH;
                so.semiring = (dsmm_semiring)sr;
                so.type = DSMM_DOUBLE;
                CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &so, &W, &wi));
                for (int dev = 0; dev < 2; dev++) {
                    char what[96];
                    snprintf(what, sizeof what,
                             "resident stages, case %d, type %d, semiring %d, %s", c, (int)type, sr,
                             dev ? "device pieces" : "host pieces");
                    dsmmi_gpu_acc *acc = NULL;
                    CHECK_OK(ctx, dsmmi_gpu_acc_create(ctx, A->nrows, B->ncols, (dsmm_semiring)sr,
                                                       3, &acc));
                    dsmm_idx m = A->ncols, bounds[4] = {0, m / 3, 2 * m / 3, m};
                    double flops = 0;
                    for (int s = 0; s < 3; s++) {
                        dsmm_csr *Ap = NULL, *Bp = NULL, Av, Bv;
                        char *abuf = NULL, *bbuf = NULL;
                        void *ad = NULL, *bd = NULL;
                        CHECK_OK(ctx, dsmm_csr_extract(ctx, A, 0, A->nrows, bounds[s],
                                                       bounds[s + 1], &Ap));
                        CHECK_OK(ctx, dsmm_csr_extract(ctx, B, bounds[s], bounds[s + 1], 0,
                                                       B->ncols, &Bp));
                        if (Ap->nnz == 0 || Bp->nnz == 0) // SUMMA skips an empty piece's stage
                            CHECK_OK(ctx, dsmmi_gpu_acc_skip(ctx, acc, s));
                        if (Ap->nnz > 0 && Bp->nnz > 0) {
                            if (dev) {
                                if (piece_to_device(ctx, Ap, type, &ad, &Av) != TEST_PASS ||
                                    piece_to_device(ctx, Bp, type, &bd, &Bv) != TEST_PASS)
                                    return TEST_FAIL;
                            } else {
                                CHECK_OK(ctx, dsmmi_piece_pack(ctx, Ap, type, &abuf));
                                CHECK_OK(ctx, dsmmi_piece_pack(ctx, Bp, type, &bbuf));
                                dsmmi_piece_view(abuf, Ap->nrows, Ap->ncols, Ap->nnz, type, ctx,
                                                 &Av);
                                dsmmi_piece_view(bbuf, Bp->nrows, Bp->ncols, Bp->nnz, type, ctx,
                                                 &Bv);
                            }
                            dsmm_spgemm_info info;
                            CHECK_OK(ctx, dsmmi_gpu_acc_multiply(ctx, acc, s, &Av, dev, &Bv, dev,
                                                                 &info));
                            CHECK(info.on_gpu == 1);
                            CHECK_NEAR(info.flops, ref_flops(Ap, Bp), 0);
                            flops += info.flops;
                            ad = dsmmi_gpu_buf_free(ctx, ad);
                            bd = dsmmi_gpu_buf_free(ctx, bd);
                        }
                        abuf = dsmmi_free(ctx, abuf);
                        bbuf = dsmmi_free(ctx, bbuf);
                        dsmm_csr_destroy(&Ap);
                        dsmm_csr_destroy(&Bp);
                    }
                    CHECK_NEAR(flops, wi.flops, 0);
                    dsmm_csr *G = NULL;
                    CHECK_OK(ctx, dsmmi_gpu_acc_finish(ctx, acc, DSMM_DOUBLE, 32, &G, NULL, NULL));
                    dsmmi_gpu_acc_free(ctx, &acc);
                    CHECK_MSG(dsmm_csr_check(ctx, G) == DSMM_OK, "%s: %s", what,
                              dsmm_ctx_last_error(ctx));
                    if (test_csr_same(ctx, G, W, 1e-12, 1e-12 * max_abs(W) + 1e-300, what) !=
                        TEST_PASS)
                        return TEST_FAIL;
                    dsmm_csr_destroy(&G);
                }
                dsmm_csr_destroy(&W);
            }
            dsmm_csr_destroy(&A);
            dsmm_csr_destroy(&B);
        }
        dsmm_csr_destroy(&A0);
        dsmm_csr_destroy(&B0);
    }
    if (pool_empty(ctx) != TEST_PASS) return TEST_FAIL;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The distributed SpMM's resident C tile (dsmmi_gpu_dacc): three stages A(:, lo:hi) *
// B(lo:hi, :) added into the device's tile, from the host (A with 64-bit columns, B strided)
// or from device memory (A in SUMMA's wire layout, B packed, where a CUDA-aware MPI leaves
// them: values of another type converted on the device), and a dense partial added after
// one upload, downloaded once into a strided C: the reference A * B + P within 8 ulps per
// term, the padding untouched, a second finish the same bits; uniform rows (row-split) and a
// long row (split rows), double, float and pattern A, float and double tiles, k from 1 to 64.
// Refused: wrong shapes (DIM), B of another type or a device B with ld != k, a pattern tile
// (ARG); empty tiles and k = 0 work.
static int test_resident_spmm(void)
{
    dsmm_ctx *ctx = gpu_ctx(0);
    if (ctx == NULL) return TEST_SKIP;
    static const dsmm_idx ks[] = {1, 8, 32, 33, 64};
    for (int c = 0; c < 2; c++) {
        dsmm_csr *A0 = NULL;
        test_mat o;
        test_mat_init(&o, 400, 300, 0.02, seed_at(3000 + c));
        o.empty_rows = 0.1;
        if (c == 1) o.dense_row = 7; // one row far longer than the mean: split rows
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &A0));
        for (int at = 0; at < 3; at++) {
            dsmm_type atype = at == 0 ? DSMM_DOUBLE : at == 1 ? DSMM_FLOAT : DSMM_PATTERN;
            dsmm_csr *A = NULL;
            CHECK_OK(ctx, test_csr_convert(ctx, A0, atype, 64, &A));
            for (int tt = 0; tt < 2; tt++) {
                dsmm_type t = tt ? DSMM_FLOAT : DSMM_DOUBLE;
                size_t elem = t == DSMM_DOUBLE ? 8 : 4;
                for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                    dsmm_idx k = ks[ki], m = A->nrows, n = A->ncols, pad = 3;
                    for (int dev = 0; dev < 2; dev++) {
                        char what[128];
                        snprintf(what, sizeof what,
                                 "resident spmm, case %d, A type %d, %s tile, k=%lld, %s", c,
                                 (int)atype, t == DSMM_FLOAT ? "float" : "double", (long long)k,
                                 dev ? "device pieces" : "host pieces");
                        // B strided (ld k + pad) from the host; packed (ld k) for the device
                        dsmm_idx bld = dev ? k : k + pad;
                        dsmm_dense *B = NULL, *P = NULL, *C = NULL, Bv, Cv;
                        CHECK_OK(ctx, dsmm_dense_create(ctx, n, bld, t, &B));
                        CHECK_OK(ctx, dsmm_dense_create(ctx, m, k, t, &P));
                        CHECK_OK(ctx, dsmm_dense_create(ctx, m, k + pad, t, &C));
                        fill_dense(B, seed_at(3010));
                        fill_dense(P, seed_at(3011));
                        fill_dense(C, seed_at(3012));
                        Bv = *B;
                        Bv.ncols = k;
                        Cv = *C;
                        Cv.ncols = k;
                        double *want = malloc(((size_t)m * k + 1) * sizeof *want);
                        double *scale = malloc(((size_t)m * k + 1) * sizeof *scale);
                        CHECK(want && scale);
                        CHECK_OK(ctx, ref_spmm(A, 0, 1.0, &Bv, 1.0, P, want, scale, NULL));

                        dsmmi_gpu_dacc *acc = NULL;
                        CHECK_OK(ctx, dsmmi_gpu_dacc_create(ctx, m, k, t, &acc));
                        dsmm_idx bounds[4] = {0, n / 3, 2 * n / 3, n};
                        double flops = 0;
                        for (int s = 0; s < 3; s++) {
                            dsmm_idx lo = bounds[s], hi = bounds[s + 1];
                            dsmm_csr *Ap = NULL, Av;
                            void *ad = NULL, *bd = NULL;
                            CHECK_OK(ctx, dsmm_csr_extract(ctx, A, 0, m, lo, hi, &Ap));
                            dsmm_dense Bs = {
                                hi - lo, k, bld, (char *)B->val + (size_t)lo * (size_t)bld * elem,
                                t,       0, ctx};
                            dsmm_spmm_info info;
                            if (!dev) {
                                CHECK_OK(ctx,
                                         dsmmi_gpu_dacc_multiply(ctx, acc, Ap, 0, &Bs, 0, &info));
                            } else {
                                size_t bb = (size_t)(hi - lo) * (size_t)k * elem;
                                if (piece_to_device(ctx, Ap, atype, &ad, &Av) != TEST_PASS)
                                    return TEST_FAIL;
                                if (bb > 0) {
                                    CHECK_OK(ctx, dsmmi_gpu_buf_alloc(ctx, bb, "test B", &bd));
                                    CHECK_OK(ctx, dsmmi_gpu_copy(ctx, bd, Bs.val, bb, 1));
                                }
                                dsmm_dense Bd = Bs;
                                Bd.val = bd;
                                CHECK_OK(ctx,
                                         dsmmi_gpu_dacc_multiply(ctx, acc, &Av, 1, &Bd, 1, &info));
                            }
                            CHECK(info.on_gpu == 1);
                            CHECK_NEAR(info.flops, 2.0 * (double)Ap->nnz * (double)k, 0);
                            flops += info.flops;
                            ad = dsmmi_gpu_buf_free(ctx, ad);
                            bd = dsmmi_gpu_buf_free(ctx, bd);
                            dsmm_csr_destroy(&Ap);
                        }
                        CHECK_NEAR(flops, 2.0 * (double)A->nnz * (double)k, 0);
                        CHECK_OK(ctx, dsmmi_gpu_dacc_add(ctx, acc, P));
                        dsmm_gpu_info before, after;
                        CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &before));
                        int products = -1;
                        CHECK_OK(ctx, dsmmi_gpu_dacc_finish(ctx, acc, &Cv, &products));
                        CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &after));
                        CHECK_MSG(products == 4, "%s: %d products", what, products);
                        CHECK_MSG(after.bytes_d2h - before.bytes_d2h == (double)(m * k) * elem,
                                  "%s: %.0f bytes downloaded, want %.0f", what,
                                  after.bytes_d2h - before.bytes_d2h, (double)(m * k) * elem);
                        if (dense_near(ctx, A, C, k, 4, want, scale, seed_at(3012), what) !=
                            TEST_PASS)
                            return TEST_FAIL;
                        // a second finish: the same tile, the same bits
                        dsmm_dense *C2 = NULL;
                        CHECK_OK(ctx, dsmm_dense_create(ctx, m, k, t, &C2));
                        CHECK_OK(ctx, dsmmi_gpu_dacc_finish(ctx, acc, C2, NULL));
                        for (dsmm_idx i = 0; i < m; i++)
                            CHECK_MSG(memcmp((char *)C2->val + (size_t)(i * C2->ld) * elem,
                                             (char *)C->val + (size_t)(i * C->ld) * elem,
                                             (size_t)k * elem) == 0,
                                      "%s: a second finish differs in row %lld", what,
                                      (long long)i);
                        dsmm_dense_destroy(&C2);
                        dsmmi_gpu_dacc_free(ctx, &acc);
                        CHECK(acc == NULL);
                        free(want);
                        free(scale);
                        dsmm_dense_destroy(&B);
                        dsmm_dense_destroy(&P);
                        dsmm_dense_destroy(&C);
                    }
                }
            }
            dsmm_csr_destroy(&A);
        }
        dsmm_csr_destroy(&A0);
    }

    // Refusals, and the accumulator going on after them.
    {
        dsmm_csr *A = NULL;
        dsmm_dense *B = NULL, *Bf = NULL, *C = NULL;
        dsmmi_gpu_dacc *acc = NULL;
        test_mat o;
        test_mat_init(&o, 20, 10, 0.3, seed_at(3020));
        CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
        CHECK_OK(ctx, dsmm_dense_create(ctx, 10, 4, DSMM_DOUBLE, &B));
        CHECK_OK(ctx, dsmm_dense_create(ctx, 10, 4, DSMM_FLOAT, &Bf));
        CHECK_OK(ctx, dsmm_dense_create(ctx, 20, 4, DSMM_DOUBLE, &C));
        fill_dense(B, seed_at(3021));
        fill_dense(Bf, seed_at(3021));
        CHECK(dsmmi_gpu_dacc_create(ctx, 20, 4, DSMM_PATTERN, &acc) == DSMM_ERR_ARG);
        CHECK(acc == NULL);
        dsmm_ctx_clear_error(ctx);
        CHECK_OK(ctx, dsmmi_gpu_dacc_create(ctx, 20, 4, DSMM_DOUBLE, &acc));
        dsmm_spmm_info info;
        dsmm_dense Bw = *B; // 10 x 3: k differs
        Bw.ncols = 3;
        CHECK(dsmmi_gpu_dacc_multiply(ctx, acc, A, 0, &Bw, 0, &info) == DSMM_ERR_DIM);
        dsmm_ctx_clear_error(ctx);
        CHECK(dsmmi_gpu_dacc_multiply(ctx, acc, A, 0, Bf, 0, &info) == DSMM_ERR_ARG);
        dsmm_ctx_clear_error(ctx);
        dsmm_dense Bs = *B; // ld 5 != k, said to be device memory
        Bs.ld = 5;
        Bs.nrows = 8;
        CHECK(dsmmi_gpu_dacc_multiply(ctx, acc, A, 0, &Bs, 1, &info) == DSMM_ERR_DIM);
        dsmm_ctx_clear_error(ctx);
        dsmm_csr *At = NULL;
        CHECK_OK(ctx, dsmm_csr_extract(ctx, A, 0, 20, 0, 8, &At));
        CHECK(dsmmi_gpu_dacc_multiply(ctx, acc, At, 0, &Bs, 1, &info) == DSMM_ERR_ARG);
        dsmm_ctx_clear_error(ctx);
        CHECK(dsmmi_gpu_dacc_add(ctx, acc, B) == DSMM_ERR_DIM); // 10 x 4 into 20 x 4
        dsmm_ctx_clear_error(ctx);
        CHECK(dsmmi_gpu_dacc_finish(ctx, acc, B, NULL) == DSMM_ERR_DIM);
        dsmm_ctx_clear_error(ctx);
        // still good: A * B into the tile
        CHECK_OK(ctx, dsmmi_gpu_dacc_multiply(ctx, acc, A, 0, B, 0, &info));
        int products = -1;
        CHECK_OK(ctx, dsmmi_gpu_dacc_finish(ctx, acc, C, &products));
        CHECK(products == 1);
        double *want = malloc(20 * 4 * sizeof *want), *scale = malloc(20 * 4 * sizeof *scale);
        CHECK(want && scale);
        CHECK_OK(ctx, ref_spmm(A, 0, 1.0, B, 0.0, C, want, scale, NULL));
        for (int i = 0; i < 80; i++)
            CHECK_NEAR(((double *)C->val)[i], want[i], 1e-12 * (scale[i] + 1));
        free(want);
        free(scale);
        dsmmi_gpu_dacc_free(ctx, &acc);
        // empty tiles and k = 0: nothing to do, and nothing goes wrong
        dsmm_csr *E = NULL;
        dsmm_dense *E0 = NULL, *Ek = NULL;
        CHECK_OK(ctx, dsmm_csr_create(ctx, 0, 10, 0, DSMM_DOUBLE, &E));
        CHECK_OK(ctx, dsmm_dense_create(ctx, 0, 4, DSMM_DOUBLE, &E0));
        CHECK_OK(ctx, dsmmi_gpu_dacc_create(ctx, 0, 4, DSMM_DOUBLE, &acc));
        CHECK_OK(ctx, dsmmi_gpu_dacc_multiply(ctx, acc, E, 0, B, 0, &info));
        CHECK_OK(ctx, dsmmi_gpu_dacc_add(ctx, acc, E0));
        CHECK_OK(ctx, dsmmi_gpu_dacc_finish(ctx, acc, E0, NULL));
        dsmmi_gpu_dacc_free(ctx, &acc);
        CHECK_OK(ctx, dsmm_dense_create(ctx, 20, 0, DSMM_DOUBLE, &Ek));
        dsmm_dense B0 = *B;
        B0.ncols = 0;
        CHECK_OK(ctx, dsmmi_gpu_dacc_create(ctx, 20, 0, DSMM_DOUBLE, &acc));
        CHECK_OK(ctx, dsmmi_gpu_dacc_multiply(ctx, acc, A, 0, &B0, 0, &info));
        CHECK_OK(ctx, dsmmi_gpu_dacc_finish(ctx, acc, Ek, NULL));
        dsmmi_gpu_dacc_free(ctx, &acc);
        dsmm_csr_destroy(&E);
        dsmm_dense_destroy(&E0);
        dsmm_dense_destroy(&Ek);
        dsmm_csr_destroy(&At);
        dsmm_csr_destroy(&A);
        dsmm_dense_destroy(&B);
        dsmm_dense_destroy(&Bf);
        dsmm_dense_destroy(&C);
    }
    if (pool_empty(ctx) != TEST_PASS) return TEST_FAIL;
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    if (dsmm_gpu_count() == 0) {
        printf("no CUDA device visible (or built without CUDA): gpu tests skipped\n");
        return TEST_SKIP;
    }
    static const test_case tests[] = {
        TEST(test_spgemm_shapes),
        TEST(test_spgemm_bins),
        TEST(test_spgemm_semirings_types),
        TEST(test_spgemm_real),
        TEST(test_spgemm_auto),
        TEST(test_spgemm_small_pool),
        TEST(test_spmm),
        TEST(test_spmm_unroll),
        TEST(test_ooc),
        TEST(test_spgemm_plan),
        TEST(test_spgemm_spread),
        TEST(test_resident_merge),
        TEST(test_resident_stages),
        TEST(test_resident_spmm),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
