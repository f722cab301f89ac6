// tests/kernels/test_spgemm.c: local SpGEMM (dsmm_csr_spgemm*, src/kernels/spgemm*.c): every
// kernel (auto, hash, heap, dense, ref) at 1 and 2 threads against the dense reference of
// tests/common/ref.c on listed edge shapes and random inputs from several generators; every
// semiring, output type and column width; unsorted output; symbolic/numeric reuse; masks and
// triangle counting; transpose_b; bad input; real matrices with published nnz and flops.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/kernels.h"
#include "ref.h"

static const dsmm_spgemm_alg algs[] = {DSMM_SPGEMM_AUTO, DSMM_SPGEMM_HASH, DSMM_SPGEMM_HEAP,
                                       DSMM_SPGEMM_DENSE, DSMM_SPGEMM_REF};
#define NALGS ((int)(sizeof algs / sizeof algs[0]))
static const dsmm_semiring semirings[] = {DSMM_PLUS_TIMES, DSMM_PLUS_PAIR, DSMM_MIN_PLUS,
                                          DSMM_MAX_TIMES};
#define NSR ((int)(sizeof semirings / sizeof semirings[0]))

static uint64_t seed_at(uint64_t k)
{
    return test_seed() * 0x9e3779b97f4a7c15ULL + k;
}

// The value type C gets from opts (the rule of dsmm_spgemm_opts.type).
static dsmm_type expected_type(const dsmm_csr *A, const dsmm_csr *B, const dsmm_spgemm_opts *o)
{
    if (o->type != -1) return (dsmm_type)o->type;
    return (A->type == DSMM_FLOAT && B->type == DSMM_FLOAT) ? DSMM_FLOAT : DSMM_DOUBLE;
}

// The dense reference of the product opts describe (B transposed first when asked).
static int reference(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_spgemm_opts *o,
                     dsmm_csr **want)
{
    dsmm_csr *Bt = NULL, *B64 = NULL;
    const dsmm_csr *b = B;
    if (o->transpose_b) {
        CHECK_OK(ctx, test_csr_convert(ctx, B, B->type, 64, &B64));
        CHECK_OK(ctx, dsmm_csr_transpose(ctx, B64, &Bt));
        b = Bt;
    }
    CHECK_OK(ctx, ref_spgemm_dense(ctx, A, b, o->mask, o->semiring, want));
    dsmm_csr_destroy(&Bt);
    dsmm_csr_destroy(&B64);
    return TEST_PASS;
}

// One kernel's C checked: status, invariants, sortedness, type, width, info, values.
static int check_result(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                        const dsmm_spgemm_opts *o, const dsmm_csr *C, const dsmm_spgemm_info *info,
                        const dsmm_csr *want, double flops, const char *what)
{
    CHECK_MSG(C != NULL, "%s: no C", what);
    CHECK_MSG(dsmm_csr_check(ctx, C) == DSMM_OK, "%s: %s", what, dsmm_ctx_last_error(ctx));
    CHECK_MSG(o->unsorted || C->sorted == 1, "%s: rows not sorted", what);
    CHECK_MSG(info->sorted == C->sorted, "%s: info.sorted %d, C->sorted %d", what, info->sorted,
              C->sorted);
    CHECK_MSG(C->type == expected_type(A, B, o), "%s: C is %s", what, dsmm_type_name(C->type));
    CHECK_MSG(C->nnz == 0 || (C->colidx32 != NULL) == (o->col_bits == 32),
              "%s: C has the wrong column width", what);
    CHECK_MSG(info->nnz == C->nnz, "%s: info.nnz %lld, C->nnz %lld", what, (long long)info->nnz,
              (long long)C->nnz);
    CHECK_MSG(info->flops == flops, "%s: info.flops %.17g, expected %.17g", what, info->flops,
              flops);
    CHECK_MSG(info->threads >= 1, "%s: info.threads %d", what, info->threads);
    CHECK_MSG(fabs(info->cf - (C->nnz ? flops / (double)C->nnz : 0.0)) <= 1e-12 * (1 + info->cf),
              "%s: info.cf %g", what, info->cf);
    double tol = C->type == DSMM_FLOAT ? 1e-6 : 1e-12;
    return test_csr_same(ctx, C, want, tol, tol, what);
}

// Every kernel at 1 and 2 threads (REF once) computes the product opts describe, equal to the
// dense reference; info.flops and info.nnz exact.
static int check_product(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                         const dsmm_spgemm_opts *opts, const char *what)
{
    dsmm_csr *want = NULL;
    if (reference(ctx, A, B, opts, &want) != TEST_PASS) return TEST_FAIL;
    double flops = 0;
    if (opts->transpose_b) {
        dsmm_csr *Bt = NULL, *B64 = NULL;
        CHECK_OK(ctx, test_csr_convert(ctx, B, B->type, 64, &B64));
        CHECK_OK(ctx, dsmm_csr_transpose(ctx, B64, &Bt));
        flops = ref_flops(A, Bt);
        dsmm_csr_destroy(&Bt);
        dsmm_csr_destroy(&B64);
    } else {
        flops = ref_flops(A, B);
    }
    for (int a = 0; a < NALGS; a++) {
        for (int t = 1; t <= 2; t++) {
            if (algs[a] == DSMM_SPGEMM_REF && t == 2) continue;
            dsmm_spgemm_opts o = *opts;
            o.alg = algs[a];
            char label[256];
            snprintf(label, sizeof label, "%s [%s, %s, %d thread%s]", what,
                     dsmm_spgemm_alg_name(o.alg), dsmm_semiring_name(o.semiring), t,
                     t > 1 ? "s" : "");
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
            dsmm_csr *C = NULL;
            dsmm_spgemm_info info;
            dsmm_status st = dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, &info);
            CHECK_MSG(st == DSMM_OK, "%s: %s", label, dsmm_ctx_last_error(ctx));
            if (check_result(ctx, A, B, &o, C, &info, want, flops, label) != TEST_PASS)
                return TEST_FAIL;
            dsmm_csr_destroy(&C);
        }
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&want);
    return TEST_PASS;
}

// check_product with default options but the semiring.
static int check_default(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, dsmm_semiring sr,
                         const char *what)
{
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.semiring = sr;
    return check_product(ctx, A, B, &o, what);
}

static int rand_pair(dsmm_ctx *ctx, const test_mat *ma, const test_mat *mb, dsmm_csr **A,
                     dsmm_csr **B)
{
    CHECK_OK(ctx, test_rand_csr(ctx, ma, A));
    CHECK_OK(ctx, test_rand_csr(ctx, mb, B));
    return TEST_PASS;
}

/* ---- shapes, densities, edge rows ------------------------------------------------------- */

static int test_shapes(void)
{
    dsmm_ctx *ctx = test_ctx();
    // m x k times k x n
    static const dsmm_idx shapes[][3] = {{0, 0, 0},    {0, 5, 4},    {4, 5, 0},    {3, 0, 4},
                                         {0, 0, 3},    {1, 1, 1},    {1, 30, 1},   {30, 1, 30},
                                         {37, 53, 11}, {11, 53, 37}, {40, 40, 40}, {2, 3, 200}};
    static const double dens[] = {0.02, 0.15, 0.5, 1.0};
    uint64_t k = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
            test_mat ma, mb;
            test_mat_init(&ma, shapes[s][0], shapes[s][1], dens[d], seed_at(k++));
            test_mat_init(&mb, shapes[s][1], shapes[s][2], dens[d], seed_at(k++));
            dsmm_csr *A = NULL, *B = NULL;
            if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
            char what[128];
            snprintf(what, sizeof what, "%lldx%lld * %lldx%lld, density %g",
                     (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][1],
                     (long long)shapes[s][2], dens[d]);
            if (check_default(ctx, A, B, DSMM_PLUS_TIMES, what) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&A);
            dsmm_csr_destroy(&B);
        }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_edge_rows(void)
{
    dsmm_ctx *ctx = test_ctx();
    for (int c = 0; c < 6; c++) {
        test_mat ma, mb;
        test_mat_init(&ma, 45, 38, 0.12, seed_at(100 + 2 * (uint64_t)c));
        test_mat_init(&mb, 38, 51, 0.12, seed_at(101 + 2 * (uint64_t)c));
        const char *what = "";
        switch (c) {
        case 0: // empty rows and columns in both
            ma.empty_rows = mb.empty_rows = 0.3;
            ma.empty_cols = mb.empty_cols = 0.3;
            what = "empty rows and columns";
            break;
        case 1:
            ma.dense_row = 7;
            what = "a dense row in A";
            break;
        case 2:
            mb.dense_row = 0;
            mb.empty_rows = 0.2;
            what = "a dense row in B";
            break;
        case 3:
            ma.dense_row = 44;
            mb.dense_row = 37;
            what = "dense rows in A and B";
            break;
        case 4:
            ma.zeros = mb.zeros = 1;
            what = "explicit zeros";
            break;
        case 5:
            ma.density = mb.density = 0.6;
            ma.zeros = 1;
            ma.empty_cols = 0.5;
            what = "dense, zeros, empty columns of A";
            break;
        }
        dsmm_csr *A = NULL, *B = NULL;
        if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
        for (int s = 0; s < NSR; s++)
            if (check_default(ctx, A, B, semirings[s], what) != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Each row of A hits a single row of B (one entry per row), the outer product (k = 1), and a
// sum that cancels to 0 (kept as an entry).
static int test_single_b_row(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    dsmm_rng g;
    dsmm_rng_init(&g, seed_at(200), 1);
    CHECK_OK(ctx, dsmm_csr_create(ctx, 50, 20, 50, DSMM_DOUBLE, &A));
    for (dsmm_idx i = 0; i < 50; i++) {
        A->colidx[i] = (dsmm_idx)(dsmm_rng_u64(&g) % 20);
        ((double *)A->val)[i] = 0.5 * (double)(i % 7 + 1);
        A->rowptr[i + 1] = i + 1;
    }
    A->nnz = 50;
    test_mat mb;
    test_mat_init(&mb, 20, 33, 0.3, seed_at(201));
    CHECK_OK(ctx, test_rand_csr(ctx, &mb, &B));
    for (int s = 0; s < NSR; s++)
        if (check_default(ctx, A, B, semirings[s], "one entry per row of A") != TEST_PASS)
            return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);

    test_mat ma;
    test_mat_init(&ma, 25, 1, 0.8, seed_at(202));
    test_mat_init(&mb, 1, 31, 0.8, seed_at(203));
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    if (check_default(ctx, A, B, DSMM_PLUS_TIMES, "outer product") != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);

    // [1 1] * [1; -1] = [0]: one structural entry
    dsmm_idx arp[] = {0, 2}, aci[] = {0, 1}, brp[] = {0, 1, 2}, bci[] = {0, 0};
    double av[] = {1, 1}, bv[] = {1, -1};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 1, 2, arp, aci, av, DSMM_DOUBLE, &A));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 1, brp, bci, bv, DSMM_DOUBLE, &B));
    if (check_default(ctx, A, B, DSMM_PLUS_TIMES, "cancelling sum") != TEST_PASS) return TEST_FAIL;
    for (int a = 0; a < NALGS; a++) {
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        o.alg = algs[a];
        dsmm_csr *C = NULL;
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL));
        CHECK_EQ_IDX(C->nnz, 1);
        CHECK(dsmm_csr_value(C, 0) == 0.0);
        dsmm_csr_destroy(&C);
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_skewed(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *E = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 8, 8, 0, DSMM_DOUBLE, seed_at(300), &A));
    for (int s = 0; s < NSR; s++)
        if (check_default(ctx, A, A, semirings[s], "R-MAT scale 8, A*A") != TEST_PASS)
            return TEST_FAIL;
    CHECK_OK(ctx, test_rand_er(ctx, 256, 6, 0, DSMM_DOUBLE, seed_at(301), &E));
    if (check_default(ctx, A, E, DSMM_PLUS_TIMES, "R-MAT * ER") != TEST_PASS) return TEST_FAIL;
    if (check_default(ctx, E, A, DSMM_MAX_TIMES, "ER * R-MAT") != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&E);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- the dense accumulator's orderings -------------------------------------------------- */

// Each way the dense accumulator puts a row in order (rank by vectors or one column at a time,
// stamp walk, sort, bitmap), forced for every row through the tuning table, and stamps that
// wrap around mid-product, on skewed, rectangular and dense-row inputs, 32- and 64-bit
// columns, plus and min semirings.
static int dense_orders(void)
{
    const dsmmi_spgemm_tuning saved = dsmmi_spgemm_tune;
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *R = NULL, *A = NULL, *B = NULL, *S = NULL, *T = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 8, 8, 0, DSMM_DOUBLE, seed_at(350), &R));
    test_mat ms, mt; // sparse rows over many columns: few columns are touched before the wrap
    test_mat_init(&ms, 40, 400, 0.006, seed_at(353));
    test_mat_init(&mt, 400, 5000, 0.0008, seed_at(354));
    if (rand_pair(ctx, &ms, &mt, &S, &T) != TEST_PASS) return TEST_FAIL;
    test_mat ma, mb;
    test_mat_init(&ma, 70, 300, 0.05, seed_at(351));
    test_mat_init(&mb, 300, 700, 0.04, seed_at(352));
    ma.empty_rows = 0.1;
    ma.dense_row = 5;
    mb.empty_cols = 0.2;
    mb.zeros = 1;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    static const char *names[] = {"rank",
                                  "rank one by one",
                                  "rank by four",
                                  "rank by sixteen",
                                  "stamp walk",
                                  "sort",
                                  "bitmap walk",
                                  "bitmap summary",
                                  "bitmap summary in memory",
                                  "wrapping tags",
                                  "marks walk"};
    enum { NV = sizeof names / sizeof names[0] };
    for (int vv = 0; vv < 2 * NV; vv++) {
        int v = vv % NV, one_pass = vv < NV; // each ordering with and without the symbolic count
        dsmmi_spgemm_tune = saved;
        dsmmi_spgemm_tuning *t = &dsmmi_spgemm_tune;
        t->dense_rank_max = v <= 3 ? (dsmm_idx)1 << 40 : 0;
        // rows of up to 32 columns by eight (AVX2 CPUs, else four), one by one (any row), by
        // four; up to 64 by sixteen (AVX-512 CPUs, else 32 by eight), wherever the span
        // allows it
        t->dense_rank_vec = v == 0 ? 2 : v == 1 ? 0 : v == 2 ? 1 : 3;
        t->dense_rank_words = v == 3 ? 1e18 : t->dense_rank_words;
        t->dense_scan_ratio = v == 4 ? 1e18 : 0.0;
        t->dense_sort_ratio = v == 5 ? 1e18 : 0.0;
        // bitmap: always / never through the summary, the summary in registers or in memory
        t->dense_summary = v == 7 || v == 8 ? 1e18 : 0.0;
        t->dense_summary_regs = v != 8;
        if (v == NV - 2) {
            dsmmi_spgemm_tune = saved;
            t->dense_first_tag = UINT32_MAX - 2; // wraps at each workspace's third row
        }
        t->fill_mark_ratio = v == NV - 1 ? 1e18 : 0.0; // marks: every plus-times row, else none
        t->one_pass = one_pass;
        t->min_thread_flops = 1; // two threads even on these small products
        t->one_pass_threads = 2;
        t->one_pass_stage = vv & 1 ? 5 : 64;     // the threads' staged runs: a few rows each
        t->one_pass_stream_min = vv & 2 ? 1 : 0; // runs copied into C with streaming stores
        t->one_pass_slots = 1 + (vv >> 2) % 3;   // staging buffers a thread: 1, 2, 3
        t->one_pass_runs = vv & 8 ? 1000 : 0;    // runs cut to a row or so, or by the stage
        for (int bits = 32; bits <= 64; bits += 32) {
            for (int s = 0; s < 4; s += 2) { // plus-times, min-plus
                dsmm_spgemm_opts o;
                dsmm_spgemm_opts_init(&o);
                o.semiring = semirings[s];
                o.col_bits = bits;
                char what[128];
                snprintf(what, sizeof what, "dense %s, %s, %d-bit, R-MAT", names[v],
                         one_pass ? "one pass" : "two passes", bits);
                if (check_product(ctx, R, R, &o, what) != TEST_PASS) return TEST_FAIL;
                snprintf(what, sizeof what, "dense %s, %d-bit, 70x300 * 300x700", names[v], bits);
                if (check_product(ctx, A, B, &o, what) != TEST_PASS) return TEST_FAIL;
                snprintf(what, sizeof what, "dense %s, %d-bit, 40x400 * 400x5000", names[v], bits);
                if (check_product(ctx, S, T, &o, what) != TEST_PASS) return TEST_FAIL;
            }
        }
    }
    dsmmi_spgemm_tune = saved;

    // Three and four threads (more than this machine's cores) taking staged runs of one to a
    // few rows in turn, with one staging buffer a thread (each run waits for its place), two,
    // the most, and more than the most (taken as the most).
    dsmm_csr *want = NULL, *C = NULL;
    CHECK_OK(ctx, ref_spgemm_dense(ctx, R, R, NULL, DSMM_PLUS_TIMES, &want));
    static const int slots[] = {1, 2, 8, 50};
    for (int v = 0; v < 8; v++) {
        int nt = 3 + v % 2;
        dsmmi_spgemm_tune.min_thread_flops = 1;
        dsmmi_spgemm_tune.one_pass_stage = nt == 3 ? 1 : 40;
        dsmmi_spgemm_tune.one_pass_stream_min = nt == 4 ? 1 : 0;
        dsmmi_spgemm_tune.one_pass_slots = slots[v / 2];
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, nt));
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        dsmm_spgemm_info info;
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, R, R, &o, &C, &info));
        CHECK_MSG(info.threads == nt && info.seconds_symbolic == 0.0,
                  "%d threads: one pass expected (threads %d, symbolic %g s)", nt, info.threads,
                  info.seconds_symbolic);
        char what[96];
        snprintf(what, sizeof what, "staged one pass, %d threads, %d staging buffers", nt,
                 slots[v / 2]);
        if (test_csr_same(ctx, C, want, 1e-12, 1e-12, what) != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&C);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmmi_spgemm_tune = saved;

    // A budget below the one-pass bound (min(flops, ncols) entries a row) but above what two
    // passes need: the product takes two passes and succeeds.
    size_t bound = 0;
    for (dsmm_idx i = 0; i < R->nrows; i++) {
        size_t f = 0;
        for (dsmm_idx k = R->rowptr[i]; k < R->rowptr[i + 1]; k++) {
            dsmm_idx r = dsmm_csr_col(R, k);
            f += (size_t)(R->rowptr[r + 1] - R->rowptr[r]);
        }
        bound += (f < (size_t)R->ncols ? f : (size_t)R->ncols) * (sizeof(int32_t) + sizeof(double));
    }
    size_t exact = (size_t)want->nnz * (sizeof(int32_t) + sizeof(double));
    CHECK_MSG(exact + (1u << 16) < bound, "R-MAT product too compressed for this check");
    size_t old_budget = dsmm_ctx_mem_budget(ctx);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1));
    dsmm_ctx_set_mem_budget(ctx, dsmm_ctx_mem_in_use(ctx) + bound - 1);
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.col_bits = 32;
    dsmm_spgemm_info info;
    dsmm_status bst = dsmm_csr_spgemm_ex(ctx, R, R, &o, &C, &info);
    dsmm_ctx_set_mem_budget(ctx, old_budget);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    CHECK_MSG(bst == DSMM_OK, "two passes under a budget: %s", dsmm_ctx_last_error(ctx));
    CHECK_MSG(info.seconds_symbolic > 0.0, "under a budget below the bound: not two passes");
    if (test_csr_same(ctx, C, want, 1e-12, 1e-12, "two passes under a budget") != TEST_PASS)
        return TEST_FAIL;
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&S);
    dsmm_csr_destroy(&T);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Runs fn and puts the tuning table back as it was, also when a check failed.
static int restoring_tuning(int (*fn)(void))
{
    const dsmmi_spgemm_tuning saved = dsmmi_spgemm_tune;
    int r = fn();
    dsmmi_spgemm_tune = saved;
    return r;
}

static int test_dense_orders(void)
{
    return restoring_tuning(dense_orders);
}

// One pass allocates C at the flops bound; when an allocation of it fails, the product falls
// back to the two passes. Every allocation is failed in turn, at 1 and 2 threads: the product
// either succeeds with the right C or fails with DSMM_ERR_NOMEM and nothing held, and some
// injected failures (those inside the one pass) are recovered from.
static int onepass_fallback(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *R = NULL, *want = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 8, 8, 0, DSMM_DOUBLE, seed_at(360), &R));
    CHECK_OK(ctx, ref_spgemm_dense(ctx, R, R, NULL, DSMM_PLUS_TIMES, &want));
    dsmmi_spgemm_tune.min_thread_flops = 1;
    size_t base = dsmm_ctx_mem_in_use(ctx);
    for (int t = 1; t <= 2; t++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        int recovered = 0, failed = 0;
        for (long k = 0; k < 200; k++) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.col_bits = 32;
            dsmm_spgemm_info info;
            dsmm_csr *C = NULL;
            long before = dsmm_ctx_alloc_count(ctx);
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = dsmm_csr_spgemm_ex(ctx, R, R, &o, &C, &info);
            int injected = dsmm_ctx_alloc_count(ctx) > before + k;
            dsmm_ctx_fail_alloc_at(ctx, -1);
            if (st != DSMM_OK) {
                CHECK_MSG(st == DSMM_ERR_NOMEM, "failure %ld: %s", k, dsmm_ctx_last_error(ctx));
                CHECK(C == NULL);
                CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
                dsmm_ctx_clear_error(ctx);
                failed++;
                continue;
            }
            char what[96];
            snprintf(what, sizeof what, "allocation %ld failed, %d threads", k, t);
            if (test_csr_same(ctx, C, want, 1e-12, 1e-12, what) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&C);
            if (!injected) break; // ran out of allocations to fail
            recovered++;
        }
        CHECK_MSG(recovered > 0 && failed > 0, "%d threads: %d recovered, %d failed", t, recovered,
                  failed);
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&R);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_onepass_fallback(void)
{
    return restoring_tuning(onepass_fallback);
}

/* ---- semirings, types, widths ----------------------------------------------------------- */

static int test_semirings_types(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb;
    test_mat_init(&ma, 30, 25, 0.2, seed_at(400));
    test_mat_init(&mb, 25, 35, 0.2, seed_at(401));
    ma.zeros = mb.zeros = 1;
    ma.empty_rows = 0.1;
    dsmm_csr *A = NULL, *B = NULL;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    static const int types[] = {-1, DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
    for (int s = 0; s < NSR; s++)
        for (int t = 0; t < 4; t++)
            for (int bits = 32; bits <= 64; bits += 32) {
                dsmm_spgemm_opts o;
                dsmm_spgemm_opts_init(&o);
                o.semiring = semirings[s];
                o.type = types[t];
                o.col_bits = bits;
                char what[96];
                snprintf(what, sizeof what, "C type %d, %d-bit columns", types[t], bits);
                if (check_product(ctx, A, B, &o, what) != TEST_PASS) return TEST_FAIL;
            }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Inputs with 32-bit columns, float values, mixed types, pattern inputs with plus-pair.
static int test_input_variants(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb;
    test_mat_init(&ma, 33, 29, 0.15, seed_at(500));
    test_mat_init(&mb, 29, 41, 0.15, seed_at(501));
    ma.dense_row = 3;
    dsmm_csr *A = NULL, *B = NULL;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    static const dsmm_type vt[] = {DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
    for (int ta = 0; ta < 3; ta++)
        for (int tb = 0; tb < 3; tb++)
            for (int wa = 32; wa <= 64; wa += 32)
                for (int wb = 32; wb <= 64; wb += 32) {
                    dsmm_csr *A2 = NULL, *B2 = NULL;
                    CHECK_OK(ctx, test_csr_convert(ctx, A, vt[ta], wa, &A2));
                    CHECK_OK(ctx, test_csr_convert(ctx, B, vt[tb], wb, &B2));
                    CHECK((A2->colidx32 != NULL) == (wa == 32));
                    char what[96];
                    snprintf(what, sizeof what, "A %s %d-bit, B %s %d-bit", dsmm_type_name(vt[ta]),
                             wa, dsmm_type_name(vt[tb]), wb);
                    int pattern = vt[ta] == DSMM_PATTERN || vt[tb] == DSMM_PATTERN;
                    for (int s = 0; s < NSR; s++) {
                        if (pattern && semirings[s] != DSMM_PLUS_PAIR) continue;
                        if (check_default(ctx, A2, B2, semirings[s], what) != TEST_PASS)
                            return TEST_FAIL;
                    }
                    dsmm_csr_destroy(&A2);
                    dsmm_csr_destroy(&B2);
                }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_unsorted(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb;
    test_mat_init(&ma, 60, 50, 0.1, seed_at(600));
    test_mat_init(&mb, 50, 70, 0.1, seed_at(601));
    mb.dense_row = 9;
    dsmm_csr *A = NULL, *B = NULL;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    for (int s = 0; s < NSR; s++)
        for (int bits = 32; bits <= 64; bits += 32) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.semiring = semirings[s];
            o.unsorted = 1;
            o.col_bits = bits;
            if (check_product(ctx, A, B, &o, "unsorted") != TEST_PASS) return TEST_FAIL;
        }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- symbolic / numeric ----------------------------------------------------------------- */

// M with the same pattern as A and new test values.
static int new_values(dsmm_ctx *ctx, const dsmm_csr *A, uint64_t seed, dsmm_csr **out)
{
    CHECK_OK(ctx, test_csr_convert(ctx, A, A->type, A->colidx32 ? 32 : 64, out));
    dsmm_rng g;
    dsmm_rng_init(&g, seed, 9);
    for (dsmm_idx k = 0; k < A->nnz; k++) {
        double x = 0.25 * (double)((int)(dsmm_rng_u64(&g) % 13) - 6);
        if (A->type == DSMM_DOUBLE) ((double *)(*out)->val)[k] = x;
        if (A->type == DSMM_FLOAT) ((float *)(*out)->val)[k] = (float)x;
    }
    return TEST_PASS;
}

static int symbolic_numeric(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb, mm;
    test_mat_init(&ma, 40, 31, 0.12, seed_at(700));
    test_mat_init(&mb, 31, 45, 0.12, seed_at(701));
    test_mat_init(&mm, 40, 45, 0.3, seed_at(702));
    mb.dense_row = 4;
    dsmm_csr *A = NULL, *B = NULL, *M = NULL, *A2 = NULL, *B2 = NULL;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, test_rand_csr(ctx, &mm, &M));
    if (new_values(ctx, A, seed_at(703), &A2) != TEST_PASS) return TEST_FAIL;
    if (new_values(ctx, B, seed_at(704), &B2) != TEST_PASS) return TEST_FAIL;
    for (int a = 0; a < NALGS; a++)
        for (int s = 0; s < NSR; s++)
            for (int v = 0; v < 4; v++) { // plain, FLOAT + 32-bit, mask, unsorted
                dsmm_spgemm_opts o;
                dsmm_spgemm_opts_init(&o);
                o.alg = algs[a];
                o.semiring = semirings[s];
                if (v == 1) {
                    o.type = DSMM_FLOAT;
                    o.col_bits = 32;
                }
                if (v == 2) o.mask = M;
                if (v == 3) o.unsorted = 1;
                char what[128];
                snprintf(what, sizeof what, "symbolic/numeric [%s, %s, variant %d]",
                         dsmm_spgemm_alg_name(o.alg), dsmm_semiring_name(o.semiring), v);
                CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1 + (s & 1)));
                dsmm_csr *C = NULL, *want = NULL, *want2 = NULL, *Z = NULL;
                dsmm_spgemm_info info;
                CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, A, B, &o, &C, &info));
                if (reference(ctx, A, B, &o, &want) != TEST_PASS) return TEST_FAIL;
                if (reference(ctx, A2, B2, &o, &want2) != TEST_PASS) return TEST_FAIL;
                // the pattern, values all zero
                CHECK_OK(ctx, dsmm_csr_check(ctx, C));
                CHECK(C->type == expected_type(A, B, &o));
                CHECK_EQ_IDX(info.nnz, want->nnz);
                CHECK(info.flops == ref_flops(A, B));
                CHECK_OK(ctx, test_csr_convert(ctx, want, DSMM_DOUBLE, 64, &Z));
                for (dsmm_idx k = 0; k < Z->nnz; k++) ((double *)Z->val)[k] = 0;
                if (test_csr_same(ctx, C, Z, 0, 0, what) != TEST_PASS) return TEST_FAIL;
                // numeric with the same values, then with new ones on the same patterns
                dsmm_status st = dsmm_csr_spgemm_numeric(ctx, A, B, &o, C, &info);
                CHECK_MSG(st == DSMM_OK, "%s: %s", what, dsmm_ctx_last_error(ctx));
                double tol = C->type == DSMM_FLOAT ? 1e-6 : 1e-12;
                if (test_csr_same(ctx, C, want, tol, tol, what) != TEST_PASS) return TEST_FAIL;
                CHECK_EQ_IDX(info.nnz, C->nnz);
                CHECK(info.flops == ref_flops(A, B));
                CHECK(info.sorted == C->sorted);
                st = dsmm_csr_spgemm_numeric(ctx, A2, B2, &o, C, &info);
                CHECK_MSG(st == DSMM_OK, "%s (new values): %s", what, dsmm_ctx_last_error(ctx));
                if (test_csr_same(ctx, C, want2, tol, tol, what) != TEST_PASS) return TEST_FAIL;
                CHECK_OK(ctx, dsmm_csr_check(ctx, C));
                dsmm_csr_destroy(&C);
                dsmm_csr_destroy(&want);
                dsmm_csr_destroy(&want2);
                dsmm_csr_destroy(&Z);
            }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&M);
    dsmm_csr_destroy(&A2);
    dsmm_csr_destroy(&B2);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Numeric with patterns that changed since the symbolic phase, or a C it cannot fill.
static int numeric_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    // A = I (2 x 2), B = [1 0 0; 0 1 0]: C has (0,0) and (1,1)
    dsmm_idx arp[] = {0, 1, 2}, aci[] = {0, 1};
    double av[] = {1, 1};
    dsmm_idx brp[] = {0, 1, 2}, bci[] = {0, 1};
    double bv[] = {2, 3};
    dsmm_idx b2rp[] = {0, 2, 3}, b2ci[] = {0, 1, 1}; // extra product (0,1)
    double b2v[] = {2, 5, 3};
    dsmm_idx b3rp[] = {0, 0, 1}, b3ci[] = {1}; // (0,0) gets no product
    double b3v[] = {3};
    dsmm_csr *A = NULL, *B = NULL, *B2 = NULL, *B3 = NULL, *Bw = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 2, arp, aci, av, DSMM_DOUBLE, &A));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, brp, bci, bv, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, b2rp, b2ci, b2v, DSMM_DOUBLE, &B2));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, b3rp, b3ci, b3v, DSMM_DOUBLE, &B3));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 2, arp, aci, av, DSMM_DOUBLE, &Bw)); // 2 x 2
    for (int a = 0; a < NALGS; a++) {
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        o.alg = algs[a];
        dsmm_csr *C = NULL, *P = NULL;
        CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, A, B, &o, &C, NULL));
        CHECK_EQ_IDX(C->nnz, 2);
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, B2, &o, C, NULL), DSMM_ERR_ARG);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "pattern");
        CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, B3, &o, C, NULL), DSMM_ERR_ARG);
        CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, Bw, &o, C, NULL), DSMM_ERR_DIM);
        CHECK_OK(ctx, dsmm_csr_spgemm_numeric(ctx, A, B, &o, C, NULL)); // still usable
        CHECK(dsmm_csr_value(C, 0) == 2 && dsmm_csr_value(C, 1) == 3);
        CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, B, &o, NULL, NULL), DSMM_ERR_ARG);
        o.type = DSMM_PATTERN;
        CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, A, B, &o, &P, NULL));
        CHECK(P->type == DSMM_PATTERN && P->val == NULL);
        CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, B, &o, P, NULL), DSMM_ERR_ARG);
        dsmm_csr_destroy(&C);
        dsmm_csr_destroy(&P);
    }

    // A row with products that reach only part of C's row: B4 has (0,1) where B5 had (0,0)
    // and (0,1), so C(0,0) gets none though the row has a product
    dsmm_idx b5rp[] = {0, 2, 3}, b5ci[] = {0, 1, 1}, b4rp[] = {0, 1, 2}, b4ci[] = {1, 1};
    double b5v[] = {1, 2, 3}, b4v[] = {2, 3};
    dsmm_csr *B4 = NULL, *B5 = NULL, *C5 = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, b5rp, b5ci, b5v, DSMM_DOUBLE, &B5));
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 3, b4rp, b4ci, b4v, DSMM_DOUBLE, &B4));
    CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, A, B5, NULL, &C5, NULL));
    CHECK_EQ_IDX(C5->nnz, 3);
    CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, A, B4, NULL, C5, NULL), DSMM_ERR_ARG);
    CHECK_OK(ctx, dsmm_csr_spgemm_numeric(ctx, A, B5, NULL, C5, NULL)); // still usable
    CHECK(dsmm_csr_value(C5, 0) == 1 && dsmm_csr_value(C5, 1) == 2 && dsmm_csr_value(C5, 2) == 3);
    dsmm_csr_destroy(&B4);
    dsmm_csr_destroy(&B5);
    dsmm_csr_destroy(&C5);

    // random: one extra entry of B in a row that row 0 of A uses, at a column C(0,:) lacks
    test_mat ma, mb;
    test_mat_init(&ma, 20, 20, 0.15, seed_at(800));
    test_mat_init(&mb, 20, 60, 0.05, seed_at(801));
    ma.dense_row = 0;
    dsmm_csr *R = NULL, *S = NULL, *S2 = NULL, *C = NULL;
    if (rand_pair(ctx, &ma, &mb, &R, &S) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, R, S, NULL, &C, NULL));
    dsmm_idx missing = -1;
    for (dsmm_idx j = 0; j < S->ncols && missing < 0; j++) {
        int in = 0;
        for (dsmm_idx k = C->rowptr[0]; k < C->rowptr[1]; k++) in |= dsmm_csr_col(C, k) == j;
        if (!in) missing = j;
    }
    if (missing >= 0) {
        dsmm_coo *T = NULL;
        CHECK_OK(ctx, dsmm_csr_to_coo(ctx, S, &T));
        CHECK_OK(ctx, dsmm_coo_push(T, dsmm_csr_col(R, 0), missing, 1.0));
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &S2));
        dsmm_coo_destroy(&T);
        for (int a = 0; a < NALGS; a++) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.alg = algs[a];
            CHECK_ST(ctx, dsmm_csr_spgemm_numeric(ctx, R, S2, &o, C, NULL), DSMM_ERR_ARG);
        }
    }
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&S);
    dsmm_csr_destroy(&S2);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&B2);
    dsmm_csr_destroy(&B3);
    dsmm_csr_destroy(&Bw);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// body() with the known-pattern numeric phase on stamps only (dense_mark_ratio 0), then on
// marks wherever the semiring allows (every row, whatever its flops).
static int stamps_and_marks(int (*body)(void))
{
    const dsmmi_spgemm_tuning saved = dsmmi_spgemm_tune;
    int rc = TEST_PASS;
    for (int v = 0; v < 2 && rc == TEST_PASS; v++) {
        dsmmi_spgemm_tune.dense_mark_ratio = v ? 1e18 : 0.0;
        rc = body();
    }
    dsmmi_spgemm_tune = saved;
    return rc;
}

// body() with the pattern-driven accumulator's columns mapped through its dense position
// array (pos_max_cols at its default), then through its hash table (pos_max_cols 0), the path
// of products wider than 2^22 columns.
static int positions_and_hash(int (*body)(void))
{
    const dsmmi_spgemm_tuning saved = dsmmi_spgemm_tune;
    int rc = TEST_PASS;
    for (int v = 0; v < 2 && rc == TEST_PASS; v++) {
        dsmmi_spgemm_tune.pos_max_cols = v ? 0 : saved.pos_max_cols;
        rc = body();
    }
    dsmmi_spgemm_tune = saved;
    return rc;
}

static int symbolic_numeric_hash_too(void)
{
    return positions_and_hash(symbolic_numeric);
}

static int test_symbolic_numeric(void)
{
    return stamps_and_marks(symbolic_numeric_hash_too);
}

static int test_numeric_errors(void)
{
    return stamps_and_marks(numeric_errors);
}

// The dense accumulator on marks gives the bits it gives on stamps, in the known-pattern
// numeric phase and in the fill of a full product: R-MAT (dense and sparse rows), rows with
// explicit zeros, empty rows and a dense row, 1 and 2 threads, double and float, 32- and
// 64-bit columns, plus-times and plus-pair, C sorted and unsorted.
static int test_dense_marks(void)
{
    const dsmmi_spgemm_tuning saved = dsmmi_spgemm_tune;
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *R = NULL, *A = NULL, *B = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 9, 8, 0, DSMM_DOUBLE, seed_at(720), &R));
    test_mat ma, mb;
    test_mat_init(&ma, 90, 200, 0.06, seed_at(721));
    test_mat_init(&mb, 200, 500, 0.05, seed_at(722));
    ma.empty_rows = 0.1;
    ma.dense_row = 7;
    mb.empty_cols = 0.2;
    mb.zeros = 1;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    dsmmi_spgemm_tune.min_thread_flops = 1; // two threads even on these small products
    for (int v = 0; v < 16; v++) {
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        o.semiring = v & 1 ? DSMM_PLUS_PAIR : DSMM_PLUS_TIMES;
        o.type = v & 2 ? DSMM_FLOAT : DSMM_DOUBLE;
        o.col_bits = v & 4 ? 64 : 32;
        o.unsorted = (v & 8) != 0;
        const dsmm_csr *X = v & 1 ? R : A, *Y = v & 1 ? R : B;
        for (int threads = 1; threads <= 2; threads++) {
            char what[96];
            snprintf(what, sizeof what, "marks against stamps [variant %d, %d threads]", v,
                     threads);
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, threads));
            dsmm_csr *Cs = NULL, *Cm = NULL, *want = NULL;
            CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, X, Y, &o, &Cs, NULL));
            CHECK_OK(ctx, dsmm_csr_spgemm_symbolic(ctx, X, Y, &o, &Cm, NULL));
            dsmmi_spgemm_tune.dense_mark_ratio = 0;
            CHECK_OK(ctx, dsmm_csr_spgemm_numeric(ctx, X, Y, &o, Cs, NULL));
            dsmmi_spgemm_tune.dense_mark_ratio = 1e18;
            CHECK_OK(ctx, dsmm_csr_spgemm_numeric(ctx, X, Y, &o, Cm, NULL));
            if (test_csr_same(ctx, Cm, Cs, 0, 0, what) != TEST_PASS) return TEST_FAIL;
            if (reference(ctx, X, Y, &o, &want) != TEST_PASS) return TEST_FAIL;
            double tol = o.type == DSMM_FLOAT ? 1e-6 : 1e-12;
            if (test_csr_same(ctx, Cm, want, tol, tol, what) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&Cs);
            dsmm_csr_destroy(&Cm);
            // the full product, one pass and two, filled on stamps and on marks
            for (int one = 0; one < 2; one++) {
                snprintf(what, sizeof what, "fill on marks [variant %d, %d threads, %s]", v,
                         threads, one ? "one pass" : "two passes");
                dsmmi_spgemm_tune.one_pass = one;
                dsmmi_spgemm_tune.fill_mark_ratio = 0;
                CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, X, Y, &o, &Cs, NULL));
                dsmmi_spgemm_tune.fill_mark_ratio = 1e18;
                CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, X, Y, &o, &Cm, NULL));
                if (test_csr_same(ctx, Cm, Cs, 0, 0, what) != TEST_PASS) return TEST_FAIL;
                if (test_csr_same(ctx, Cm, want, tol, tol, what) != TEST_PASS) return TEST_FAIL;
                dsmm_csr_destroy(&Cs);
                dsmm_csr_destroy(&Cm);
            }
            dsmmi_spgemm_tune.one_pass = saved.one_pass;
            dsmm_csr_destroy(&want);
        }
    }
    dsmmi_spgemm_tune = saved;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- masks and triangles ---------------------------------------------------------------- */

// An m x n mask with unsorted rows and repeated columns (sorted = 0), per_row entries at most.
static int messy_mask(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, dsmm_idx per_row, uint64_t seed,
                      dsmm_csr **M)
{
    dsmm_rng g;
    dsmm_rng_init(&g, seed, 3);
    CHECK_OK(ctx, dsmm_csr_create(ctx, m, n, m * per_row, DSMM_PATTERN, M));
    dsmm_idx k = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx len = n ? (dsmm_idx)(dsmm_rng_u64(&g) % (uint64_t)(per_row + 1)) : 0;
        for (dsmm_idx t = 0; t < len; t++) (*M)->colidx[k++] = (dsmm_idx)(dsmm_rng_u64(&g) % n);
        (*M)->rowptr[i + 1] = k;
    }
    (*M)->nnz = k;
    (*M)->sorted = 0;
    CHECK_OK(ctx, dsmm_csr_check(ctx, *M));
    return TEST_PASS;
}

static int mask_products(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb, mm;
    test_mat_init(&ma, 35, 28, 0.15, seed_at(900));
    test_mat_init(&mb, 28, 47, 0.15, seed_at(901));
    test_mat_init(&mm, 35, 47, 0.25, seed_at(902));
    ma.dense_row = 2;
    mm.empty_rows = 0.2;
    mm.dense_row = 2;
    dsmm_csr *A = NULL, *B = NULL, *Ms[4] = {NULL, NULL, NULL, NULL};
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, test_rand_csr(ctx, &mm, &Ms[0])); // sorted, double values (ignored)
    mm.col_bits = 32;
    mm.type = DSMM_PATTERN;
    mm.seed = seed_at(903);
    CHECK_OK(ctx, test_rand_csr(ctx, &mm, &Ms[1])); // 32-bit pattern
    if (messy_mask(ctx, 35, 47, 30, seed_at(904), &Ms[2]) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 35, 47, 0, DSMM_PATTERN, &Ms[3])); // empty mask
    static const char *names[] = {"sorted mask", "32-bit pattern mask",
                                  "unsorted mask with repeats", "empty mask"};
    for (int m = 0; m < 4; m++)
        for (int s = 0; s < NSR; s++)
            for (int v = 0; v < 2; v++) {
                dsmm_spgemm_opts o;
                dsmm_spgemm_opts_init(&o);
                o.semiring = semirings[s];
                o.mask = Ms[m];
                o.unsorted = v;
                if (check_product(ctx, A, B, &o, names[m]) != TEST_PASS) return TEST_FAIL;
            }
    // C<M> equals the full product filtered by M, counted by hand for one kernel too
    dsmm_csr *C = NULL, *F = NULL;
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &F, NULL));
    o.mask = Ms[2];
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL));
    dsmm_idx kept = 0;
    for (dsmm_idx i = 0; i < F->nrows; i++)
        for (dsmm_idx k = F->rowptr[i]; k < F->rowptr[i + 1]; k++) {
            int in = 0;
            for (dsmm_idx e = Ms[2]->rowptr[i]; e < Ms[2]->rowptr[i + 1]; e++)
                in |= Ms[2]->colidx[e] == dsmm_csr_col(F, k);
            kept += in;
        }
    CHECK_EQ_IDX(C->nnz, kept);
    CHECK(C->nnz < F->nnz);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&F);
    for (int m = 0; m < 4; m++) dsmm_csr_destroy(&Ms[m]);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_mask(void)
{
    return positions_and_hash(mask_products);
}

// The strictly lower triangle of A as a pattern (64-bit columns).
static int lower_triangle(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **L)
{
    dsmm_coo *T = NULL;
    CHECK_OK(ctx, dsmm_coo_create(ctx, A->nrows, A->ncols, A->nnz / 2 + 1, DSMM_PATTERN, &T));
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (dsmm_csr_col(A, k) < i) CHECK_OK(ctx, dsmm_coo_push(T, i, dsmm_csr_col(A, k), 1));
    CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, L));
    dsmm_coo_destroy(&T);
    return TEST_PASS;
}

// Triangles of the undirected graph L (strict lower triangle, sorted rows), counted naively:
// for each edge (i, j), j < i, the common neighbours k < j by merging the two sorted rows.
static double naive_triangles(const dsmm_csr *L)
{
    double count = 0;
    for (dsmm_idx i = 0; i < L->nrows; i++)
        for (dsmm_idx e = L->rowptr[i]; e < L->rowptr[i + 1]; e++) {
            dsmm_idx j = L->colidx[e];
            dsmm_idx a = L->rowptr[i], ea = L->rowptr[i + 1];
            dsmm_idx b = L->rowptr[j], eb = L->rowptr[j + 1];
            while (a < ea && b < eb) {
                if (L->colidx[a] < L->colidx[b])
                    a++;
                else if (L->colidx[b] < L->colidx[a])
                    b++;
                else {
                    count += 1;
                    a++;
                    b++;
                }
            }
        }
    return count;
}

// sum(C<L> = L * L, plus-pair) for every kernel at 1 and 2 threads, equal to `expect`.
static int check_triangles(dsmm_ctx *ctx, const dsmm_csr *L, double expect, const char *what)
{
    for (int a = 0; a < NALGS; a++)
        for (int t = 1; t <= 2; t++) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.alg = algs[a];
            o.semiring = DSMM_PLUS_PAIR;
            o.mask = L;
            o.unsorted = t == 2;
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
            dsmm_csr *C = NULL;
            dsmm_spgemm_info info;
            CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, L, L, &o, &C, &info));
            double sum = 0;
            for (dsmm_idx k = 0; k < C->nnz; k++) sum += dsmm_csr_value(C, k);
            CHECK_MSG(sum == expect, "%s [%s, %d threads]: %.0f triangles, expected %.0f", what,
                      dsmm_spgemm_alg_name(o.alg), t, sum, expect);
            CHECK(info.flops == ref_flops(L, L));
            dsmm_csr_destroy(&C);
        }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    return TEST_PASS;
}

static int test_triangles(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *G = NULL, *L = NULL, *D = NULL;
    // small graphs: naive count, plus the O(n^3) count through the dense reference
    for (int g = 0; g < 2; g++) {
        if (g == 0)
            CHECK_OK(ctx, test_rand_er(ctx, 80, 12, 1, DSMM_PATTERN, seed_at(1000), &G));
        else
            CHECK_OK(ctx, test_rand_rmat(ctx, 7, 8, 1, DSMM_PATTERN, seed_at(1001), &G));
        if (lower_triangle(ctx, G, &L) != TEST_PASS) return TEST_FAIL;
        double tri = naive_triangles(L);
        CHECK_OK(ctx, ref_spgemm_dense(ctx, L, L, L, DSMM_PLUS_PAIR, &D));
        double dense = 0;
        for (dsmm_idx k = 0; k < D->nnz; k++) dense += ((double *)D->val)[k];
        CHECK_NEAR(dense, tri, 0);
        CHECK(tri > 0);
        if (check_triangles(ctx, L, tri, g ? "R-MAT scale 7" : "ER n=80") != TEST_PASS)
            return TEST_FAIL;
        dsmm_csr_destroy(&G);
        dsmm_csr_destroy(&L);
        dsmm_csr_destroy(&D);
    }
    // real graphs
    static const char *files[] = {"fe_4elt2.mtx.gz", "hep-th.mtx.gz"};
    for (int f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, files[f]);
        CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &G, NULL, NULL));
        if (lower_triangle(ctx, G, &L) != TEST_PASS) return TEST_FAIL;
        double tri = naive_triangles(L);
        CHECK(tri > 0);
        printf("     %s: %.0f triangles\n", files[f], tri);
        if (check_triangles(ctx, L, tri, files[f]) != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&G);
        dsmm_csr_destroy(&L);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- transpose_b ------------------------------------------------------------------------ */

static int test_transpose_b(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx shapes[][3] = {{23, 17, 31}, {0, 4, 5}, {5, 4, 0}, {6, 0, 7}, {1, 9, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        test_mat ma, mb;
        test_mat_init(&ma, shapes[s][0], shapes[s][1], 0.2, seed_at(1100 + 2 * s));
        test_mat_init(&mb, shapes[s][2], shapes[s][1], 0.2, seed_at(1101 + 2 * s)); // B^T's shape
        mb.col_bits = s == 0 ? 32 : 64;
        dsmm_csr *A = NULL, *B = NULL, *Bt = NULL, *C1 = NULL, *C2 = NULL;
        if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
        for (int sr = 0; sr < NSR; sr++) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.semiring = semirings[sr];
            o.transpose_b = 1;
            if (check_product(ctx, A, B, &o, "A * B^T") != TEST_PASS) return TEST_FAIL;
        }
        // and literally equal to A * transpose(B)
        dsmm_csr *B64 = NULL;
        CHECK_OK(ctx, test_csr_convert(ctx, B, B->type, 64, &B64));
        CHECK_OK(ctx, dsmm_csr_transpose(ctx, B64, &Bt));
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, Bt, &o, &C1, NULL));
        o.transpose_b = 1;
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C2, NULL));
        if (test_csr_same(ctx, C2, C1, 0, 0, "A * B^T vs A * transpose(B)") != TEST_PASS)
            return TEST_FAIL;
        // the shape check uses B^T's: A * B (without transpose) mismatches unless square
        if (shapes[s][1] != shapes[s][2]) {
            o.transpose_b = 0;
            dsmm_csr *X = (dsmm_csr *)&o;
            CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &X, NULL), DSMM_ERR_DIM);
            CHECK(X == NULL);
        }
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
        dsmm_csr_destroy(&B64);
        dsmm_csr_destroy(&Bt);
        dsmm_csr_destroy(&C1);
        dsmm_csr_destroy(&C2);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- bad input -------------------------------------------------------------------------- */

static int test_bad_input(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma, mb;
    test_mat_init(&ma, 10, 8, 0.3, seed_at(1200));
    test_mat_init(&mb, 8, 12, 0.3, seed_at(1201));
    dsmm_csr *A = NULL, *B = NULL, *P = NULL, *M = NULL, *C = (dsmm_csr *)&ma;
    if (rand_pair(ctx, &ma, &mb, &A, &B) != TEST_PASS) return TEST_FAIL;
    CHECK_OK(ctx, test_csr_convert(ctx, B, DSMM_PATTERN, 64, &P));
    dsmm_spgemm_opts o;
    for (int a = 0; a < NALGS; a++) {
        dsmm_spgemm_opts_init(&o);
        o.alg = algs[a];
        // dimension mismatch: A * A is 10x8 * 10x8
        C = (dsmm_csr *)&ma;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, NULL), DSMM_ERR_DIM);
        CHECK(C == NULL);
        C = (dsmm_csr *)&ma;
        CHECK_ST(ctx, dsmm_csr_spgemm_symbolic(ctx, B, B, &o, &C, NULL), DSMM_ERR_DIM);
        CHECK(C == NULL);
        // mask of the wrong shape
        CHECK_OK(ctx, dsmm_csr_create(ctx, 10, 11, 0, DSMM_PATTERN, &M));
        o.mask = M;
        C = (dsmm_csr *)&ma;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_DIM);
        CHECK(C == NULL);
        dsmm_csr_destroy(&M);
        CHECK_OK(ctx, dsmm_csr_create(ctx, 12, 12, 0, DSMM_PATTERN, &M));
        o.mask = M;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_DIM);
        dsmm_csr_destroy(&M);
        o.mask = NULL;
        // pattern input with a semiring that reads values
        static const dsmm_semiring need_values[] = {DSMM_PLUS_TIMES, DSMM_MIN_PLUS, DSMM_MAX_TIMES};
        for (int s = 0; s < 3; s++) {
            o.semiring = need_values[s];
            C = (dsmm_csr *)&ma;
            dsmm_ctx_clear_error(ctx);
            CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, P, &o, &C, NULL), DSMM_ERR_ARG);
            CHECK(C == NULL);
            CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "pattern");
        }
        o.semiring = DSMM_PLUS_PAIR; // fine with pattern
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, P, &o, &C, NULL));
        dsmm_csr_destroy(&C);
        // 32-bit columns are fine; other widths are not
        o.semiring = DSMM_PLUS_TIMES;
        o.col_bits = 32;
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL));
        CHECK(C->colidx32 != NULL && C->colidx == NULL);
        dsmm_csr_destroy(&C);
        o.col_bits = 16;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_ARG);
        o.col_bits = 64;
        o.type = 5;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_ARG);
        o.type = -1;
        o.semiring = (dsmm_semiring)17;
        CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_ARG);
        CHECK(C == NULL);
    }
    dsmm_spgemm_opts_init(&o);
    o.alg = (dsmm_spgemm_alg)99;
    CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_spgemm(ctx, NULL, B, &C), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_spgemm(ctx, A, B, NULL), DSMM_ERR_ARG);
    // the GPU kernel in a build without CUDA
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_GPU;
#if !DSMM_HAVE_CUDA
    C = (dsmm_csr *)&ma;
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK(C == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "gpu");
#endif
    // names
    dsmm_spgemm_alg alg;
    dsmm_semiring sr;
    for (int a = 0; a < DSMM_SPGEMM_ALG_COUNT; a++) {
        CHECK_OK(ctx, dsmm_spgemm_alg_from_name(dsmm_spgemm_alg_name((dsmm_spgemm_alg)a), &alg));
        CHECK(alg == (dsmm_spgemm_alg)a);
    }
    for (int s = 0; s < DSMM_SEMIRING_COUNT; s++) {
        CHECK_OK(ctx, dsmm_semiring_from_name(dsmm_semiring_name((dsmm_semiring)s), &sr));
        CHECK(sr == (dsmm_semiring)s);
    }
    CHECK_ST(ctx, dsmm_spgemm_alg_from_name("fast", &alg), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_semiring_from_name("plus_times", &sr), DSMM_ERR_ARG);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&P);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A memory budget too small for the product: DSMM_ERR_NOMEM, C NULL, nothing leaked.
static int test_budget(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_er(ctx, 400, 20, 0, DSMM_DOUBLE, seed_at(1300), &A));
    size_t base = dsmm_ctx_mem_in_use(ctx);
    for (int a = 0; a < NALGS; a++)
        for (int phase = 0; phase < 2; phase++) {
            dsmm_spgemm_opts o;
            dsmm_spgemm_opts_init(&o);
            o.alg = algs[a];
            dsmm_ctx_set_mem_budget(ctx, base + 4096);
            dsmm_csr *C = (dsmm_csr *)&o;
            dsmm_status st = phase ? dsmm_csr_spgemm_symbolic(ctx, A, A, &o, &C, NULL)
                                   : dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, NULL);
            dsmm_ctx_set_mem_budget(ctx, 0);
            CHECK_MSG(st == DSMM_ERR_NOMEM, "%s: %s: %s", dsmm_spgemm_alg_name(o.alg),
                      dsmm_status_name(st), dsmm_ctx_last_error(ctx));
            CHECK(C == NULL);
            CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
        }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- real inputs and large products ----------------------------------------------------- */

// A * A of a real matrix by every kernel against REF, with published nnz and flops.
static int check_real(const char *file, dsmm_idx nnz, double flops)
{
    dsmm_ctx *ctx = test_ctx();
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, file);
    dsmm_csr *A = NULL, *R = NULL;
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL));
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_REF;
    dsmm_spgemm_info info;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &R, &info));
    CHECK_EQ_IDX(R->nnz, nnz);
    CHECK_EQ_IDX(info.nnz, nnz);
    CHECK(info.flops == flops);
    CHECK(ref_flops(A, A) == flops);
    CHECK(test_check_spmv(ctx, A, A, R, 1e-12) == TEST_PASS);
    double maxv = 0;
    for (dsmm_idx k = 0; k < R->nnz; k++) maxv = fmax(maxv, fabs(dsmm_csr_value(R, k)));
    for (int a = 0; a < NALGS - 1; a++)
        for (int t = 1; t <= 2; t++) {
            o.alg = algs[a];
            CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
            dsmm_csr *C = NULL;
            CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, &info));
            CHECK_OK(ctx, dsmm_csr_check(ctx, C));
            CHECK(C->sorted);
            CHECK_EQ_IDX(C->nnz, nnz);
            CHECK_EQ_IDX(info.nnz, nnz);
            CHECK(info.flops == flops);
            char what[128];
            snprintf(what, sizeof what, "%s A*A [%s, %d threads]", file,
                     dsmm_spgemm_alg_name(o.alg), t);
            // summation order may differ: tolerance relative to the largest entry
            if (test_csr_same(ctx, C, R, 1e-12, 1e-13 * maxv, what) != TEST_PASS) return TEST_FAIL;
            dsmm_csr_destroy(&C);
        }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&R);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_real_hepth(void)
{
    return check_real("hep-th.mtx.gz", 171460, 273668);
}

static int test_real_bcsstk13(void)
{
    return check_real("bcsstk13.mtx.gz", 396773, 4554541);
}

// Larger products without a dense reference: C x == A (B x), and every kernel equal to REF.
static int test_large_spmv(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL, *R = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 12, 8, 0, DSMM_DOUBLE, seed_at(1400), &A));
    CHECK_OK(ctx, test_rand_er(ctx, 4096, 10, 0, DSMM_FLOAT, seed_at(1401), &B));
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_REF;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &R, NULL));
    CHECK(test_check_spmv(ctx, A, B, R, 1e-12) == TEST_PASS);
    for (int a = 0; a < NALGS - 1; a++) {
        o.alg = algs[a];
        o.col_bits = a % 2 ? 32 : 64;
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
        dsmm_csr *C = NULL;
        CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, &o, &C, NULL));
        CHECK(test_check_spmv(ctx, A, B, C, 1e-12) == TEST_PASS);
        if (test_csr_same(ctx, C, R, 1e-12, 1e-12, "R-MAT 12 * ER") != TEST_PASS) return TEST_FAIL;
        dsmm_csr_destroy(&C);
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&R);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The checks above can fail: a wrong product is caught by the comparison and the SpMV check.
static int test_checks_catch_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    test_mat ma;
    test_mat_init(&ma, 20, 20, 0.3, seed_at(1500));
    dsmm_csr *A = NULL, *C = NULL, *want = NULL;
    CHECK_OK(ctx, test_rand_csr(ctx, &ma, &A));
    CHECK_OK(ctx, dsmm_csr_spgemm(ctx, A, A, &C));
    CHECK_OK(ctx, ref_spgemm_dense(ctx, A, A, NULL, DSMM_PLUS_TIMES, &want));
    CHECK(test_csr_same(ctx, C, want, 1e-12, 1e-12, "unchanged") == TEST_PASS);
    CHECK(C->nnz > 2);
    ((double *)C->val)[C->nnz / 2] += 0.5;
    printf("     (two failure messages expected below)\n");
    CHECK(test_csr_same(ctx, C, want, 1e-12, 1e-12, "changed on purpose") == TEST_FAIL);
    CHECK(test_check_spmv(ctx, A, A, C, 1e-12) == TEST_FAIL);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&want);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_shapes),
        TEST(test_edge_rows),
        TEST(test_single_b_row),
        TEST(test_skewed),
        TEST(test_dense_orders),
        TEST(test_onepass_fallback),
        TEST(test_semirings_types),
        TEST(test_input_variants),
        TEST(test_unsorted),
        TEST(test_symbolic_numeric),
        TEST(test_numeric_errors),
        TEST(test_dense_marks),
        TEST(test_mask),
        TEST(test_triangles),
        TEST(test_transpose_b),
        TEST(test_bad_input),
        TEST(test_budget),
        TEST(test_real_hepth),
        TEST(test_real_bcsstk13),
        TEST(test_large_spmv),
        TEST(test_checks_catch_errors),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
