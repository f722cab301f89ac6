// tests/kernels/test_ooc.c: out-of-core SpGEMM (dsmm_csr_spgemm_ooc, src/kernels/ooc.c): for
// every panel count tried, the chunked product equals the in-core one (the same bits with one
// accumulator kind, the same pattern and values within rounding with AUTO), at 1 and 2
// threads, on random rectangular inputs with empty rows and columns and a dense row, every
// semiring, type and column width, transpose_b and unsorted output, and on real matrices;
// the plan under a budget (every planned chunk within it, measured chunks within it with the
// exact estimate, an output 4x and more the budget); chunks largest flops first; the hybrid
// split of Alg. 4 (fixed ratio and auto) and run-time splitting with a CPU stand-in for the
// device; bad arguments; every allocation failing in turn with nothing leaked.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/ooc.h"
#include "ref.h"

static uint64_t seed_at(uint64_t k)
{
    return test_seed() * 0x9e3779b97f4a7c15ULL + k;
}

static dsmm_status rand_mat(dsmm_ctx *ctx, dsmm_idx m, dsmm_idx n, double density, dsmm_type t,
                            int col_bits, uint64_t k, dsmm_csr **A)
{
    test_mat o;
    test_mat_init(&o, m, n, density, seed_at(k));
    o.type = t;
    o.col_bits = col_bits;
    o.empty_rows = 0.1;
    o.empty_cols = 0.1;
    o.dense_row = m > 3 ? m / 3 : -1;
    return test_rand_csr(ctx, &o, A);
}

static dsmm_status read_data(dsmm_ctx *ctx, const char *file, dsmm_csr **A)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, file);
    return dsmm_read(ctx, path, NULL, A, NULL, NULL);
}

// info's bookkeeping against C: chunk flops and nnz add up, chunks within their panels.
static int check_info(const dsmm_csr *A, const dsmm_csr *B, const dsmm_csr *C,
                      const dsmm_ooc_info *in, double flops, const char *what)
{
    double f = 0;
    dsmm_idx z = 0;
    CHECK_MSG(in->chunk != NULL || in->chunks == 0, "%s: no chunk records", what);
    for (int i = 0; i < in->chunks; i++) {
        const dsmm_ooc_chunk_info *c = &in->chunk[i];
        CHECK_MSG(c->row0 < c->row1 && c->row1 <= A->nrows && c->col0 < c->col1 &&
                      c->col1 <= C->ncols,
                  "%s: chunk %d is [%lld, %lld) x [%lld, %lld)", what, i, (long long)c->row0,
                  (long long)c->row1, (long long)c->col0, (long long)c->col1);
        CHECK_MSG(c->flops > 0, "%s: chunk %d has no flops", what, i);
        CHECK_MSG(c->row_panel < in->row_panels && c->col_panel < in->col_panels,
                  "%s: chunk %d in panel (%d, %d)", what, i, c->row_panel, c->col_panel);
        f += c->flops;
        z += c->nnz;
    }
    CHECK_MSG(f == flops && in->flops == flops, "%s: chunk flops %.17g, info %.17g, want %.17g",
              what, f, in->flops, flops);
    CHECK_MSG(z == C->nnz && in->nnz == C->nnz, "%s: chunk nnz %lld, info %lld, C %lld", what,
              (long long)z, (long long)in->nnz, (long long)C->nnz);
    (void)B;
    return TEST_PASS;
}

// C = A * B out of core with panels (R, Cp) equals the in-core product of the same opts.
static int check_panels(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                        const dsmm_spgemm_opts *so, int R, int Cp, const char *what)
{
    dsmm_csr *want = NULL, *got = NULL, *Bt = NULL;
    dsmm_ooc_opts o;
    dsmm_ooc_info in;
    char w[256];
    dsmm_ooc_opts_init(&o);
    o.row_panels = R;
    o.col_panels = Cp;
    snprintf(w, sizeof w, "%s, %d x %d panels, %s", what, R, Cp, dsmm_spgemm_alg_name(so->alg));
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, B, so, &want, NULL));
    CHECK_OK(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, so, &o, &got, &in));
    CHECK_MSG(dsmm_csr_check(ctx, got) == DSMM_OK, "%s: %s", w, dsmm_ctx_last_error(ctx));
    CHECK_MSG(got->type == want->type, "%s: type %s", w, dsmm_type_name(got->type));
    CHECK_MSG(got->nnz == 0 || (got->colidx32 != NULL) == (so->col_bits == 32), "%s: column width",
              w);
    CHECK_MSG(so->unsorted || got->sorted, "%s: rows not sorted", w);
    CHECK_MSG(in.row_panels == (R > 0 ? R : in.row_panels) && in.col_panels == Cp,
              "%s: planned %d x %d", w, in.row_panels, in.col_panels);
    // with one accumulator kind every entry sums in A's row order, as in core: the same bits
    double tol = so->alg == DSMM_SPGEMM_HASH ? 0.0 : got->type == DSMM_FLOAT ? 1e-6 : 1e-12;
    if (test_csr_same(ctx, got, want, tol, tol, w) != TEST_PASS) return TEST_FAIL;
    if (so->transpose_b) CHECK_OK(ctx, dsmm_csr_transpose(ctx, B, &Bt));
    if (check_info(A, Bt ? Bt : B, got, &in, ref_flops(A, Bt ? Bt : B), w) != TEST_PASS)
        return TEST_FAIL;
    // the CPU alone takes the chunks largest first
    for (int i = 1; i < in.chunks; i++)
        CHECK_MSG(in.chunk[i - 1].flops >= in.chunk[i].flops, "%s: chunk %d (%g flops) after %g", w,
                  i, in.chunk[i].flops, in.chunk[i - 1].flops);
    CHECK(in.chunks_gpu == 0 && in.flops_gpu == 0 && in.splits == 0);
    dsmm_free(ctx, in.chunk);
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&got);
    dsmm_csr_destroy(&Bt);
    return TEST_PASS;
}

// Random rectangular A (m x k) and B (k x n) at every panel count listed, 1 and 2 threads,
// hash (bitwise) and auto.
static int test_panel_counts(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx shapes[][3] = {
        {60, 40, 70}, {1, 30, 25}, {45, 1, 50}, {80, 80, 1}, {97, 61, 83}};
    static const int panels[][2] = {{1, 1}, {1, 2}, {3, 1}, {4, 3}, {7, 5}, {2, 16}};
    for (int t = 1; t <= 2; t++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            dsmm_csr *A = NULL, *B = NULL;
            dsmm_idx m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
            CHECK_OK(ctx, rand_mat(ctx, m, k, 0.12, DSMM_DOUBLE, 64, 10 * s + 1, &A));
            CHECK_OK(ctx, rand_mat(ctx, k, n, 0.15, DSMM_DOUBLE, 32, 10 * s + 2, &B));
            for (size_t p = 0; p < sizeof panels / sizeof panels[0]; p++) {
                int R = panels[p][0] <= m ? panels[p][0] : (int)m;
                int Cp = panels[p][1] <= n ? panels[p][1] : (int)n;
                static const dsmm_spgemm_alg algs[] = {DSMM_SPGEMM_HASH, DSMM_SPGEMM_AUTO};
                for (int a = 0; a < 2; a++) {
                    dsmm_spgemm_opts so;
                    char w[96];
                    dsmm_spgemm_opts_init(&so);
                    so.alg = algs[a];
                    snprintf(w, sizeof w, "%lldx%lldx%lld, %d threads", (long long)m, (long long)k,
                             (long long)n, t);
                    if (check_panels(ctx, A, B, &so, R, Cp, w) != TEST_PASS) return TEST_FAIL;
                }
            }
            // every row its own panel, every column its own panel
            dsmm_spgemm_opts so;
            dsmm_spgemm_opts_init(&so);
            so.alg = DSMM_SPGEMM_HASH;
            if (check_panels(ctx, A, B, &so, (int)m, 1, "one row per panel") != TEST_PASS)
                return TEST_FAIL;
            if (check_panels(ctx, A, B, &so, 1, (int)n, "one column per panel") != TEST_PASS)
                return TEST_FAIL;
            dsmm_csr_destroy(&A);
            dsmm_csr_destroy(&B);
        }
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Semirings (plus-pair on pattern inputs), float values, 32-bit C, transpose_b, unsorted rows,
// the heap and dense accumulators.
static int test_variants(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL, *Ap = NULL, *Bp = NULL, *Af = NULL, *Bf = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 70, 50, 0.1, DSMM_DOUBLE, 64, 101, &A));
    CHECK_OK(ctx, rand_mat(ctx, 50, 90, 0.1, DSMM_DOUBLE, 64, 102, &B));
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_PATTERN, 64, &Ap));
    CHECK_OK(ctx, test_csr_convert(ctx, B, DSMM_PATTERN, 32, &Bp));
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_FLOAT, 32, &Af));
    CHECK_OK(ctx, test_csr_convert(ctx, B, DSMM_FLOAT, 64, &Bf));
    dsmm_spgemm_opts so;
    static const dsmm_semiring srs[] = {DSMM_PLUS_TIMES, DSMM_MIN_PLUS, DSMM_MAX_TIMES};
    for (size_t i = 0; i < 3; i++) {
        dsmm_spgemm_opts_init(&so);
        so.alg = DSMM_SPGEMM_HASH;
        so.semiring = srs[i];
        if (check_panels(ctx, A, B, &so, 3, 4, dsmm_semiring_name(srs[i])) != TEST_PASS)
            return TEST_FAIL;
    }
    dsmm_spgemm_opts_init(&so);
    so.semiring = DSMM_PLUS_PAIR;
    if (check_panels(ctx, Ap, Bp, &so, 5, 2, "plus-pair on patterns") != TEST_PASS)
        return TEST_FAIL;
    so.type = DSMM_PATTERN;
    if (check_panels(ctx, Ap, Bp, &so, 2, 3, "pattern C") != TEST_PASS) return TEST_FAIL;
    dsmm_spgemm_opts_init(&so);
    if (check_panels(ctx, Af, Bf, &so, 4, 4, "float") != TEST_PASS) return TEST_FAIL;
    so.col_bits = 32;
    so.type = DSMM_DOUBLE;
    if (check_panels(ctx, Af, B, &so, 3, 2, "32-bit double C") != TEST_PASS) return TEST_FAIL;
    dsmm_spgemm_opts_init(&so);
    so.unsorted = 1;
    so.alg = DSMM_SPGEMM_HASH;
    if (check_panels(ctx, A, B, &so, 3, 3, "unsorted") != TEST_PASS) return TEST_FAIL;
    static const dsmm_spgemm_alg others[] = {DSMM_SPGEMM_HEAP, DSMM_SPGEMM_DENSE, DSMM_SPGEMM_REF};
    for (size_t i = 0; i < 3; i++) {
        dsmm_spgemm_opts_init(&so);
        so.alg = others[i];
        if (check_panels(ctx, A, B, &so, 4, 3, "accumulator") != TEST_PASS) return TEST_FAIL;
    }
    // C = A * A'^T with A' 60 x 50: transpose_b
    dsmm_csr *T = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 60, 50, 0.1, DSMM_DOUBLE, 64, 103, &T));
    dsmm_spgemm_opts_init(&so);
    so.transpose_b = 1;
    so.alg = DSMM_SPGEMM_HASH;
    if (check_panels(ctx, A, T, &so, 3, 5, "transpose_b") != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&T);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&Ap);
    dsmm_csr_destroy(&Bp);
    dsmm_csr_destroy(&Af);
    dsmm_csr_destroy(&Bf);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Empty shapes: 0 rows, 0 columns, 0 inner dimension, an all-empty A.
static int test_edges(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx shapes[][3] = {{0, 5, 6}, {5, 0, 6}, {5, 6, 0}, {0, 0, 0}, {8, 8, 8}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        dsmm_csr *A = NULL, *B = NULL, *C = NULL;
        dsmm_ooc_info in;
        test_mat tm;
        test_mat_init(&tm, shapes[s][0], shapes[s][1], s == 4 ? 0.0 : 0.5, seed_at(200 + s));
        tm.type = DSMM_DOUBLE;
        tm.dense_row = -1;
        CHECK_OK(ctx, test_rand_csr(ctx, &tm, &A));
        CHECK_OK(ctx, rand_mat(ctx, shapes[s][1], shapes[s][2], 0.5, DSMM_DOUBLE, 64, 210 + s, &B));
        CHECK_OK(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, NULL, NULL, &C, &in));
        CHECK(C->nrows == shapes[s][0] && C->ncols == shapes[s][2] && C->nnz == 0);
        CHECK(in.chunks == 0 && in.nnz == 0 && in.flops == 0);
        dsmm_free(ctx, in.chunk);
        dsmm_csr_destroy(&C);
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The plan under budgets on hep-th A * A: every planned chunk within the budget; with the
// exact estimate the measured working sets too; an output at least 4 times the budget.
static int test_budget(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *want = NULL;
    CHECK_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &A));
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.alg = DSMM_SPGEMM_HASH;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &so, &want, NULL));
    size_t cbytes = (size_t)want->nnz * 16; // C's columns and values, 64-bit
    static const double shares[] = {4.0, 1.0 / 4, 1.0 / 8};
    for (int keys = 0; keys <= 8; keys += 8) {
        for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++) {
            dsmm_csr *C = NULL;
            dsmm_ooc_opts o;
            dsmm_ooc_info in;
            char w[96];
            dsmm_ooc_opts_init(&o);
            o.mem_bytes = (size_t)((double)cbytes * shares[i]);
            o.estimate_keys = keys;
            snprintf(w, sizeof w, "hep-th, budget %zu bytes, keys %d", o.mem_bytes, keys);
            CHECK_OK(ctx, dsmm_csr_spgemm_ooc(ctx, A, A, &so, &o, &C, &in));
            if (test_csr_same(ctx, C, want, 0, 0, w) != TEST_PASS) return TEST_FAIL;
            CHECK_MSG(in.mem_bytes == o.mem_bytes && in.max_est_bytes <= o.mem_bytes,
                      "%s: a chunk planned at %zu bytes", w, in.max_est_bytes);
            if (shares[i] > 1) CHECK_MSG(in.chunks == 1, "%s: %d chunks", w, in.chunks);
            if (shares[i] < 1) {
                // output 4x (8x) the budget: several chunks, each within it
                CHECK_MSG(in.chunks >= 4, "%s: %d chunks", w, in.chunks);
                CHECK(cbytes >= 4 * o.mem_bytes);
            }
            if (keys == 0)
                CHECK_MSG(in.max_bytes <= o.mem_bytes, "%s: a chunk used %zu bytes", w,
                          in.max_bytes);
            dsmm_free(ctx, in.chunk);
            dsmm_csr_destroy(&C);
        }
    }
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A budget that cannot hold one row: DSMM_ERR_NOMEM naming the row; nothing leaked. Column
// panels are added before giving up when they are not fixed.
static int test_too_small(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *C = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 50, 50, 0.3, DSMM_DOUBLE, 64, 301, &A));
    dsmm_ooc_opts o;
    dsmm_ooc_info in;
    dsmm_ooc_opts_init(&o);
    o.mem_bytes = 64;
    size_t before = dsmm_ctx_mem_in_use(ctx);
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, A, NULL, &o, &C, &in), DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "row");
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "budget");
    CHECK(C == NULL && in.chunk == NULL);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), before);
    // a budget that one column panel of B cannot meet with one row panel, but narrower ones can
    dsmm_csr *want = NULL;
    CHECK_OK(ctx, dsmm_csr_spgemm(ctx, A, A, &want));
    o.mem_bytes = 12 * 1024;
    dsmm_ctx_clear_error(ctx);
    CHECK_OK(ctx, dsmm_csr_spgemm_ooc(ctx, A, A, NULL, &o, &C, &in));
    CHECK_MSG(in.col_panels > 1, "%d column panels", in.col_panels);
    if (test_csr_same(ctx, C, want, 1e-12, 1e-12, "narrow panels") != TEST_PASS) return TEST_FAIL;
    dsmm_free(ctx, in.chunk);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* A CPU stand-in for the device: the host executor's work, single chunks through the hash
 * kernel, marked on_gpu; refuses (splits) chunks of more than max_rows rows. */
typedef struct fake_dev {
    dsmm_idx max_rows;
    int taken;
} fake_dev;

static dsmm_status fake_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user)
{
    dsmm_status st = DSMM_OK;
    fake_dev *f = user;
    dsmmi_ooc_chunk *c;
    while ((c = dsmmi_ooc_take(run, side)) != NULL) {
        dsmm_csr *Ai = NULL, *Cc = NULL;
        const dsmm_csr *Bj = NULL;
        f->taken++;
        if (f->max_rows > 0 && c->r1 - c->r0 > f->max_rows) {
            st = dsmmi_ooc_split(run, c, side);
            if (st != DSMM_OK) return st;
            continue;
        }
        const dsmmi_spgemm_args *a = dsmmi_ooc_args(run);
        dsmm_spgemm_opts o;
        dsmm_spgemm_opts_init(&o);
        o.alg = DSMM_SPGEMM_HASH;
        o.semiring = a->sr;
        o.type = (int)a->type;
        st = dsmmi_ooc_panels(run, c, &Ai, &Bj);
        if (st == DSMM_OK) {
            // the plan's row flops, as the device executor takes them, equal a fresh count
            dsmm_idx *pf = malloc(sizeof *pf * (size_t)(Ai->nrows + 1));
            dsmm_idx *cf = malloc(sizeof *cf * (size_t)(Ai->nrows + 1));
            if (pf == NULL || cf == NULL) st = DSMM_ERR_NOMEM;
            if (st == DSMM_OK) {
                dsmmi_ooc_row_flops(run, c, pf);
                dsmmi_spgemm_row_flops(Ai, Bj, cf, NULL);
                for (dsmm_idx r = 0; r < Ai->nrows; r++)
                    if (pf[r] != cf[r]) st = DSMM_ERR_INTERNAL;
            }
            free(pf);
            free(cf);
        }
        if (st == DSMM_OK) st = dsmm_csr_spgemm_ex(ctx, Ai, Bj, &o, &Cc, NULL);
        dsmm_csr_destroy(&Ai);
        if (st != DSMM_OK) return st;
        c->on_gpu = 1;
        c->seconds_compute = 1e-3;
        c->seconds_hidden = 5e-4;
        st = dsmmi_ooc_done(run, c, Cc);
        if (st != DSMM_OK) return st;
    }
    return DSMM_OK;
}

// Hybrid: the device gets exactly the largest chunks up to the ratio of the flops (Alg. 4);
// auto measures a ratio; both equal the in-core product.
static int test_hybrid(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *want = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 9, 8, 1, DSMM_DOUBLE, seed_at(401), &A));
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.alg = DSMM_SPGEMM_HASH;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &so, &want, NULL));
    static const double ratios[] = {0.65, 0.3, 1.0, 0.0, -1.0};
    for (int t = 1; t <= 2; t++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
            dsmm_csr *C = NULL;
            dsmm_ooc_opts o;
            dsmm_ooc_info in;
            fake_dev f = {0, 0};
            char w[96];
            dsmm_ooc_opts_init(&o);
            o.row_panels = 6;
            o.col_panels = 3;
            o.use_gpu = 1;
            o.hybrid = 1;
            o.gpu_ratio = ratios[i];
            snprintf(w, sizeof w, "hybrid ratio %g, %d threads", ratios[i], t);
            CHECK_OK(ctx, dsmmi_ooc_spgemm(ctx, A, A, &so, &o, fake_exec, &f, &C, &in));
            if (test_csr_same(ctx, C, want, 0, 0, w) != TEST_PASS) return TEST_FAIL;
            if (check_info(A, A, C, &in, ref_flops(A, A), w) != TEST_PASS) return TEST_FAIL;
            CHECK_MSG(f.taken == in.chunks_gpu, "%s: device took %d, ran %d", w, f.taken,
                      in.chunks_gpu);
            if (ratios[i] >= 0) {
                // the device's chunks are the g largest, g the first prefix reaching the ratio
                double *fl = malloc(sizeof(double) * (size_t)(in.chunks + 1));
                int *dev = malloc(sizeof(int) * (size_t)(in.chunks + 1));
                CHECK(fl != NULL && dev != NULL);
                for (int k = 0; k < in.chunks; k++) {
                    fl[k] = in.chunk[k].flops;
                    dev[k] = in.chunk[k].on_gpu;
                }
                // sort descending by flops, device chunks first among ties
                for (int a = 1; a < in.chunks; a++)
                    for (int b = a; b > 0 && (fl[b] > fl[b - 1] ||
                                              (fl[b] == fl[b - 1] && dev[b] > dev[b - 1]));
                         b--) {
                        double tf = fl[b];
                        fl[b] = fl[b - 1];
                        fl[b - 1] = tf;
                        int td = dev[b];
                        dev[b] = dev[b - 1];
                        dev[b - 1] = td;
                    }
                double acc = 0;
                int g = 0;
                if (ratios[i] >= 1)
                    g = in.chunks;
                else if (ratios[i] > 0)
                    while (g < in.chunks) {
                        acc += fl[g++];
                        if (acc >= ratios[i] * in.flops) break;
                    }
                CHECK_MSG(in.chunks_gpu == g, "%s: %d device chunks, want %d", w, in.chunks_gpu, g);
                for (int k = 0; k < in.chunks; k++)
                    CHECK_MSG(dev[k] == (k < g), "%s: chunk %d of the flops order on the %s", w, k,
                              dev[k] ? "device" : "host");
                CHECK(in.gpu_ratio == ratios[i]);
                free(fl);
                free(dev);
            } else {
                // measured from both sides' first chunks, or (when one side was done before
                // the other finished one) the share the device took
                CHECK_MSG(in.gpu_ratio >= 0 && in.gpu_ratio <= 1, "%s: auto ratio %g", w,
                          in.gpu_ratio);
            }
            CHECK(in.seconds_compute >= 0 && in.seconds_hidden <= in.seconds_compute);
            CHECK(in.chunks_gpu == 0 || fabs(in.hidden_fraction - 0.5) < 1e-12);
            dsmm_free(ctx, in.chunk);
            dsmm_csr_destroy(&C);
        }
    }
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 0));
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A device that refuses large chunks: they are split by rows until they fit; the result is the
// same. A device that refuses every chunk fails with NOMEM once a chunk is a single row.
static int test_split(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *want = NULL, *C = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 8, 8, 1, DSMM_DOUBLE, seed_at(501), &A));
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.alg = DSMM_SPGEMM_HASH;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &so, &want, NULL));
    dsmm_ooc_opts o;
    dsmm_ooc_info in;
    dsmm_ooc_opts_init(&o);
    o.row_panels = 2;
    o.col_panels = 2;
    o.use_gpu = 1;
    fake_dev f = {17, 0};
    CHECK_OK(ctx, dsmmi_ooc_spgemm(ctx, A, A, &so, &o, fake_exec, &f, &C, &in));
    if (test_csr_same(ctx, C, want, 0, 0, "split chunks") != TEST_PASS) return TEST_FAIL;
    if (check_info(A, A, C, &in, ref_flops(A, A), "split chunks") != TEST_PASS) return TEST_FAIL;
    CHECK(in.splits > 0 && in.chunks_gpu == in.chunks && in.chunks > 4);
    for (int k = 0; k < in.chunks; k++) CHECK(in.chunk[k].row1 - in.chunk[k].row0 <= 17);
    dsmm_free(ctx, in.chunk);
    dsmm_csr_destroy(&C);
    size_t before = dsmm_ctx_mem_in_use(ctx);
    // chunks of one row each
    fake_dev g = {1, 0};
    CHECK_OK(ctx, dsmmi_ooc_spgemm(ctx, A, A, &so, &o, fake_exec, &g, &C, &in));
    if (test_csr_same(ctx, C, want, 0, 0, "one-row chunks") != TEST_PASS) return TEST_FAIL;
    for (int k = 0; k < in.chunks; k++) CHECK(in.chunk[k].row1 - in.chunk[k].row0 == 1);
    dsmm_free(ctx, in.chunk);
    dsmm_csr_destroy(&C);
    CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), before);
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* A device that cannot hold anything: every chunk is refused, down to one row. */
static dsmm_status full_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user)
{
    dsmmi_ooc_chunk *c;
    (void)ctx;
    (void)user;
    while ((c = dsmmi_ooc_take(run, side)) != NULL) {
        dsmm_status st = dsmmi_ooc_split(run, c, side);
        if (st != DSMM_OK) return st;
    }
    return DSMM_OK;
}

static int test_split_fails(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *C = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 40, 40, 0.2, DSMM_DOUBLE, 64, 601, &A));
    dsmm_ooc_opts o;
    dsmm_ooc_info in;
    dsmm_ooc_opts_init(&o);
    o.use_gpu = 1;
    for (int hybrid = 0; hybrid <= 1; hybrid++) {
        o.hybrid = hybrid;
        size_t before = dsmm_ctx_mem_in_use(ctx);
        CHECK_ST(ctx, dsmmi_ooc_spgemm(ctx, A, A, NULL, &o, full_exec, NULL, &C, &in),
                 DSMM_ERR_NOMEM);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "does not fit");
        CHECK(C == NULL && in.chunk == NULL);
        CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), before);
        dsmm_ctx_clear_error(ctx);
    }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Real matrices: several panel counts, in core and out of core equal.
static int test_real(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const char *files[] = {"hep-th.mtx.gz", "fe_4elt2.mtx.gz", "bcsstk13.mtx.gz"};
    static const int panels[][2] = {{5, 1}, {3, 4}, {16, 2}};
    for (size_t f = 0; f < 3; f++) {
        dsmm_csr *A = NULL, *A0 = NULL;
        CHECK_OK(ctx, read_data(ctx, files[f], &A0));
        CHECK_OK(ctx, test_csr_convert(ctx, A0, DSMM_DOUBLE, 64, &A)); // patterns get ones
        dsmm_csr_destroy(&A0);
        for (size_t p = 0; p < 3; p++) {
            dsmm_spgemm_opts so;
            dsmm_spgemm_opts_init(&so);
            if (check_panels(ctx, A, A, &so, panels[p][0], panels[p][1], files[f]) != TEST_PASS)
                return TEST_FAIL;
            so.alg = DSMM_SPGEMM_HASH;
            if (check_panels(ctx, A, A, &so, panels[p][0], panels[p][1], files[f]) != TEST_PASS)
                return TEST_FAIL;
        }
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_bad_args(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL, *P = NULL, *C = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 20, 30, 0.2, DSMM_DOUBLE, 64, 701, &A));
    CHECK_OK(ctx, rand_mat(ctx, 20, 30, 0.2, DSMM_DOUBLE, 64, 702, &B));
    CHECK_OK(ctx, test_csr_convert(ctx, A, DSMM_PATTERN, 64, &P));
    dsmm_ooc_opts o;
    dsmm_spgemm_opts so;
    dsmm_ooc_opts_init(&o);
    dsmm_spgemm_opts_init(&so);
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, NULL, &o, &C, NULL), DSMM_ERR_DIM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "inner dimensions");
    dsmm_ctx_clear_error(ctx);
    so.transpose_b = 1;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, P, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "pattern");
    dsmm_ctx_clear_error(ctx);
    so.mask = A;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "mask");
    dsmm_ctx_clear_error(ctx);
    so.mask = NULL;
    o.hybrid = 1;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "hybrid");
    dsmm_ctx_clear_error(ctx);
    o.use_gpu = 1;
    o.gpu_ratio = 1.5;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "ratio");
    dsmm_ctx_clear_error(ctx);
    o.gpu_ratio = 0.5;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "device");
    dsmm_ctx_clear_error(ctx);
    dsmm_ooc_opts_init(&o);
    o.row_panels = 21;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "row panels");
    dsmm_ctx_clear_error(ctx);
    o.row_panels = 0;
    o.col_panels = 21;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "column panels");
    dsmm_ctx_clear_error(ctx);
    o.col_panels = 0;
    o.estimate_keys = 2;
    CHECK_ST(ctx, dsmm_csr_spgemm_ooc(ctx, A, B, &so, &o, &C, NULL), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "keys");
    CHECK(C == NULL);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&P);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every allocation failing in turn: DSMM_ERR_NOMEM, nothing leaked, until the call succeeds
// with the in-core answer.
static int test_nomem(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *want = NULL;
    CHECK_OK(ctx, rand_mat(ctx, 60, 60, 0.1, DSMM_DOUBLE, 64, 801, &A));
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.alg = DSMM_SPGEMM_HASH;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &so, &want, NULL));
    static const int ks[] = {8, 0};
    for (int q = 0; q < 2; q++) {
        dsmm_ooc_opts o;
        dsmm_ooc_opts_init(&o);
        o.col_panels = 3;
        o.mem_bytes = 16 * 1024;
        o.estimate_keys = ks[q];
        size_t before = dsmm_ctx_mem_in_use(ctx);
        int ok = 0;
        for (long k = 0; k < 2000 && !ok; k++) {
            dsmm_csr *C = NULL;
            dsmm_ooc_info in;
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = dsmm_csr_spgemm_ooc(ctx, A, A, &so, &o, &C, &in);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            if (st == DSMM_OK) {
                ok = 1;
                if (test_csr_same(ctx, C, want, 0, 0, "after failures") != TEST_PASS)
                    return TEST_FAIL;
                dsmm_free(ctx, in.chunk);
                dsmm_csr_destroy(&C);
            } else {
                CHECK_ST(ctx, st, DSMM_ERR_NOMEM);
                CHECK(C == NULL && in.chunk == NULL);
            }
            CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), before);
            dsmm_ctx_clear_error(ctx);
        }
        CHECK(ok);
    }
    dsmm_csr_destroy(&want);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_panel_counts), TEST(test_variants), TEST(test_edges), TEST(test_budget),
        TEST(test_too_small),    TEST(test_hybrid),   TEST(test_split), TEST(test_split_fails),
        TEST(test_real),         TEST(test_bad_args), TEST(test_nomem),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
