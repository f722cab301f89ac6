// tests/gpu/test_gpu_host.c: the GPU layer's host-side logic, which runs without a device:
// the device memory pool (src/gpu/pool.c) on a host arena, the double-buffered staging loop
// (src/gpu/stage.c) against a fake copy engine whose copies really are deferred, the SpGEMM row
// bins and batches and the SpMM variant (src/gpu/plan.c), the resident accumulator's merge
// tree (src/gpu/sum_tree.c), and the dispatch of AUTO and of the gpu/cusparse kernels in the
// local-multiply front ends.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ref.h"
#include "gpu/gpu.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- pool ---------------------------------------------------------------------------------- */

// Random allocations and frees on a host arena: blocks aligned, inside the arena, disjoint
// (each block is filled with its own byte and checked before it is freed), the block list
// consistent after every step, in_use exact, and everything merges back into one free block.
static int test_pool_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    rng_state = test_seed() | 1;
    enum { ARENA = 1 << 20, LIVE = 64 };
    unsigned char *arena = aligned_alloc(4096, ARENA);
    CHECK(arena != NULL);
    dsmmi_dpool p;
    CHECK_OK(ctx, dsmmi_dpool_init(ctx, &p, arena, ARENA, 256));
    CHECK(dsmmi_dpool_check(&p));
    void *live[LIVE] = {0};
    size_t len[LIVE] = {0};
    size_t expect_in_use = 0;
    for (int step = 0; step < 20000; step++) {
        int s = (int)(rnd() % LIVE);
        if (live[s]) {
            unsigned char tag = (unsigned char)(s + 1);
            for (size_t i = 0; i < len[s]; i++)
                CHECK_MSG(((unsigned char *)live[s])[i] == tag, "block %d overwritten", s);
            expect_in_use -= (len[s] + 255) & ~(size_t)255;
            CHECK(dsmmi_dpool_free(&p, live[s]) == NULL);
            live[s] = NULL;
        } else {
            size_t want = 1 + (size_t)(rnd() % (rnd() % 4 == 0 ? 100000 : 3000));
            void *ptr = NULL;
            dsmm_status st = dsmmi_dpool_alloc(ctx, &p, want, "test block", &ptr);
            if (st == DSMM_ERR_NOMEM) {
                CHECK(ptr == NULL);
                CHECK(dsmmi_dpool_largest_free(&p) < ((want + 255) & ~(size_t)255));
                CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "test block needs");
                dsmm_ctx_clear_error(ctx);
                continue;
            }
            CHECK_OK(ctx, st);
            CHECK(((uintptr_t)ptr & 255) == 0);
            CHECK((unsigned char *)ptr >= arena && (unsigned char *)ptr + want <= arena + ARENA);
            memset(ptr, s + 1, want);
            live[s] = ptr;
            len[s] = want;
            expect_in_use += (want + 255) & ~(size_t)255;
        }
        CHECK_MSG(dsmmi_dpool_check(&p), "block list broken at step %d", step);
        CHECK_EQ_IDX(p.in_use, expect_in_use);
    }
    for (int s = 0; s < LIVE; s++) live[s] = dsmmi_dpool_free(&p, live[s]);
    CHECK(dsmmi_dpool_check(&p));
    CHECK_EQ_IDX(p.in_use, 0);
    CHECK_EQ_IDX(p.nblk, 1);
    CHECK_EQ_IDX(dsmmi_dpool_largest_free(&p), ARENA);
    CHECK(p.peak > 0 && p.peak <= ARENA);
    dsmmi_dpool_destroy(ctx, &p);
    free(arena);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Listed cases: zero bytes, exact fit, a full pool, merging with either neighbour, a foreign
// pointer, a double free, the local peak of one product, bad alignment arguments.
static int test_pool_edges(void)
{
    dsmm_ctx *ctx = test_ctx();
    static _Alignas(256) unsigned char arena[4096 + 100];
    dsmmi_dpool p;
    void *a, *b, *c, *z;
    CHECK_OK(ctx, dsmmi_dpool_init(ctx, &p, arena, sizeof arena, 256));
    CHECK_EQ_IDX(p.size, 4096); // the 100-byte tail cannot start a block
    CHECK_OK(ctx, dsmmi_dpool_alloc(ctx, &p, 0, "nothing", &z));
    CHECK(z == NULL);
    CHECK(dsmmi_dpool_free(&p, NULL) == NULL);
    CHECK_OK(ctx, dsmmi_dpool_alloc(ctx, &p, 1000, "a", &a)); // 1024
    CHECK_OK(ctx, dsmmi_dpool_alloc(ctx, &p, 1024, "b", &b)); // 1024
    CHECK_OK(ctx, dsmmi_dpool_alloc(ctx, &p, 2048, "c", &c)); // the rest: exact fit
    CHECK(a == (void *)arena && b == (void *)(arena + 1024) && c == (void *)(arena + 2048));
    CHECK_EQ_IDX(p.nblk, 3);
    CHECK_EQ_IDX(dsmmi_dpool_largest_free(&p), 0);
    CHECK_ST(ctx, dsmmi_dpool_alloc(ctx, &p, 1, "one more byte", &z), DSMM_ERR_NOMEM);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "one more byte needs 0.0 MiB");
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "--gpu-mem");
    dsmm_ctx_clear_error(ctx);
    CHECK(z == NULL);
    dsmmi_dpool_peak_reset(&p);
    CHECK_EQ_IDX(p.local_peak, 4096);
    dsmmi_dpool_free(&p, b); // a used, b free, c used
    CHECK_EQ_IDX(p.nblk, 3);
    dsmmi_dpool_free(&p, b);         // double free: ignored
    dsmmi_dpool_free(&p, arena + 8); // not a block start: ignored
    static unsigned char other[512];
    dsmmi_dpool_free(&p, other); // not the pool's: ignored
    CHECK(dsmmi_dpool_check(&p));
    CHECK_EQ_IDX(p.in_use, 3072);
    dsmmi_dpool_free(&p, a); // merges with the free successor b
    CHECK_EQ_IDX(p.nblk, 2);
    CHECK_EQ_IDX(dsmmi_dpool_largest_free(&p), 2048);
    dsmmi_dpool_free(&p, c); // merges with the free predecessor
    CHECK_EQ_IDX(p.nblk, 1);
    CHECK(dsmmi_dpool_check(&p));
    CHECK_EQ_IDX(p.peak, 4096);
    dsmmi_dpool_destroy(ctx, &p);
    CHECK_ST(ctx, dsmmi_dpool_init(ctx, &p, arena, sizeof arena, 48), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_dpool_init(ctx, &p, arena + 8, 1024, 256), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_OK(ctx, dsmmi_dpool_init(ctx, &p, arena, 0, 0)); // empty pool: every allocation fails
    CHECK_ST(ctx, dsmmi_dpool_alloc(ctx, &p, 8, "x", &z), DSMM_ERR_NOMEM);
    CHECK(dsmmi_dpool_check(&p));
    dsmmi_dpool_destroy(ctx, &p);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- staging ------------------------------------------------------------------------------- */

// A copy engine whose copies are queued and carried out only when a later wait reaches their
// mark (or at the final sync): a loop that reused a buffer before waiting would send (or
// unpack) the wrong bytes, and the comparison at the end would catch it.
typedef struct fake_copy {
    int up, b;
    size_t off, n, elem;
    long mark; // the record that follows it
} fake_copy;

typedef struct fake_engine {
    unsigned char *dev;
    unsigned char *buf[2];
    fake_copy q[32768];
    int nq, done;  // queued, carried out
    long marks[2]; // last mark recorded per buffer
    long nmarks;
    int in_flight_pack; // a pack met a buffer with a pending copy
} fake_engine;

static void run_copy(fake_engine *e, const fake_copy *c)
{
    unsigned char *d = e->dev + c->off * c->elem;
    if (c->up)
        memcpy(d, e->buf[c->b], c->n * c->elem);
    else
        memcpy(e->buf[c->b], d, c->n * c->elem);
}

static dsmm_status f_copy(void *u, int up, int b, size_t off, size_t n, size_t elem)
{
    fake_engine *e = u;
    if (e->nq == 32768) return DSMM_ERR_INTERNAL;
    e->q[e->nq++] = (fake_copy){up, b, off, n, elem, -1};
    return DSMM_OK;
}

static dsmm_status f_record(void *u, int b)
{
    fake_engine *e = u;
    e->marks[b] = ++e->nmarks;
    for (int i = e->done; i < e->nq; i++)
        if (e->q[i].mark < 0) e->q[i].mark = e->nmarks;
    return DSMM_OK;
}

static dsmm_status f_wait(void *u, int b)
{
    fake_engine *e = u;
    while (e->done < e->nq && e->q[e->done].mark <= e->marks[b] && e->q[e->done].mark >= 0)
        run_copy(e, &e->q[e->done++]);
    return DSMM_OK;
}

static void f_sync(fake_engine *e)
{
    while (e->done < e->nq) run_copy(e, &e->q[e->done++]);
}

typedef struct src_arg {
    const int64_t *src;
    int64_t *dst;
    fake_engine *e;
} src_arg;

// Packs 64-bit values into 32-bit slots (as the columns are narrowed), and records a pack into
// a buffer that still has a copy queued.
static void pack_narrow(void *arg, void *dst, size_t off, size_t n)
{
    src_arg *s = arg;
    int b = dst == s->e->buf[0] ? 0 : 1;
    for (int i = s->e->done; i < s->e->nq; i++)
        if (s->e->q[i].b == b) s->e->in_flight_pack = 1;
    for (size_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int32_t)s->src[off + i];
}

static void unpack_widen(void *arg, const void *src, size_t off, size_t n)
{
    src_arg *s = arg;
    for (size_t i = 0; i < n; i++) s->dst[off + i] = ((const int32_t *)src)[i];
}

static int test_stage(void)
{
    dsmm_ctx *ctx = test_ctx();
    static fake_engine e;
    enum { N = 10007 };
    static int64_t src[N], back[N];
    static int32_t devmem[N];
    static unsigned char b0[4096], b1[4096];
    for (size_t i = 0; i < N; i++) src[i] = (int64_t)(i * 7919 % 100003) - 50000;
    static const size_t caps[] = {4096, 4000, 400, 4, 8};
    static const size_t ns[] = {0, 1, 3, 1000, 1024, 1025, N};
    for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            size_t n = ns[ni], pieces = 0, cap = caps[ci] / 4;
            memset(&e, 0, sizeof e);
            e.dev = (unsigned char *)devmem;
            e.buf[0] = b0;
            e.buf[1] = b1;
            memset(devmem, 0x5a, sizeof devmem);
            dsmmi_stage_ops ops = {&e, {b0, b1}, caps[ci], f_copy, f_record, f_wait};
            src_arg a = {src, back, &e};
            CHECK_OK(ctx, dsmmi_stage_up(ctx, &ops, n, 4, pack_narrow, &a, &pieces));
            CHECK_EQ_IDX(pieces, (n + cap - 1) / cap);
            CHECK_MSG(!e.in_flight_pack, "packed into a buffer still being copied (cap %zu)", cap);
            // a second upload right after, without a synchronisation: its first packs must
            // wait for the first upload's last copies
            CHECK_OK(ctx, dsmmi_stage_up(ctx, &ops, n, 4, pack_narrow, &a, NULL));
            CHECK_MSG(!e.in_flight_pack, "second upload packed into a buffer in flight");
            f_sync(&e); // the caller synchronises the stream after an upload
            for (size_t i = 0; i < n; i++)
                CHECK_MSG(devmem[i] == (int32_t)src[i], "upload cap %zu n %zu: element %zu", cap, n,
                          i);
            CHECK(n == N || devmem[n] == 0x5a5a5a5a); // nothing written past the end
            // and back: every piece is unpacked after its own copy ran
            memset(back, 0, sizeof back);
            e.nq = e.done = 0;
            CHECK_OK(ctx, dsmmi_stage_down(ctx, &ops, n, 4, unpack_widen, &a, &pieces));
            CHECK_EQ_IDX(pieces, (n + cap - 1) / cap);
            CHECK_EQ_IDX(e.done, e.nq); // a download returns with every copy finished
            for (size_t i = 0; i < n; i++)
                CHECK_MSG(back[i] == (int32_t)src[i], "download cap %zu n %zu: element %zu", cap, n,
                          i);
        }
    }
    // a buffer smaller than one element
    dsmmi_stage_ops tiny = {&e, {b0, b1}, 3, f_copy, f_record, f_wait};
    src_arg a = {src, back, &e};
    CHECK_ST(ctx, dsmmi_stage_up(ctx, &tiny, 5, 4, pack_narrow, &a, NULL), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmmi_stage_down(ctx, &tiny, 5, 4, unpack_widen, &a, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- bins, batches, SpMM variant ----------------------------------------------------------- */

// The bin rule as written: the least b >= 1 whose table holds u = min(flops, ncols) at half load.
static int bin_ref(dsmm_idx flops, dsmm_idx ncols)
{
    dsmm_idx u = flops < ncols ? flops : ncols;
    if (u <= 0) return 0;
    for (int b = 1; b <= DSMMI_GPU_SHARED_BINS; b++)
        if (2 * u <= dsmmi_gpu_bin_table(b)) return b;
    return DSMMI_GPU_GLOBAL_BIN;
}

// The device-memory table as written: the least power of two >= 2u, or ncols when not smaller.
static dsmm_idx table_ref(dsmm_idx flops, dsmm_idx ncols)
{
    dsmm_idx u = flops < ncols ? flops : ncols, t = 1;
    while (t < 2 * u) t <<= 1;
    return t >= ncols ? ncols : t;
}

static int test_bins(void)
{
    dsmm_ctx *ctx = test_ctx();
    rng_state = test_seed() * 3 + 1;
    // the bin rule at its edges
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(0, 100), 0);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(5, 0), 0);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(1, 100), 1);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(32, 100), 1);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(33, 100), 2);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(4096, 1 << 20), 8);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of(4097, 1 << 20), DSMMI_GPU_GLOBAL_BIN);
    CHECK_EQ_IDX(dsmmi_gpu_bin_of((dsmm_idx)1 << 40, 20), 1); // nnz <= ncols: a small table
    // every u up to twice the largest shared table, and around every power of two
    for (dsmm_idx f = -2; f <= 2 * dsmmi_gpu_bin_table(DSMMI_GPU_SHARED_BINS) + 2; f++) {
        CHECK_EQ_IDX(dsmmi_gpu_bin_of(f, (dsmm_idx)1 << 40), bin_ref(f, (dsmm_idx)1 << 40));
        CHECK_EQ_IDX(dsmmi_gpu_bin_of(f, 777), bin_ref(f, 777));
    }
    for (int s = 0; s < 62; s++)
        for (dsmm_idx d = -1; d <= 1; d++) {
            dsmm_idx f = ((dsmm_idx)1 << s) + d;
            CHECK_EQ_IDX(dsmmi_gpu_bin_of(f, INT64_MAX), bin_ref(f, INT64_MAX));
            static const dsmm_idx nc[] = {1, 777, 1 << 20, (dsmm_idx)1 << 40};
            for (int c = 0; c < 4; c++)
                if (s < 60) CHECK_EQ_IDX(dsmmi_gpu_global_table(f, nc[c]), table_ref(f, nc[c]));
        }
    for (dsmm_idx f = 0; f <= 70000; f++)
        CHECK_EQ_IDX(dsmmi_gpu_global_table(f, 50000), table_ref(f, 50000));
    for (int b = 1; b <= DSMMI_GPU_SHARED_BINS; b++) {
        int T = dsmmi_gpu_bin_table(b);
        // the largest row of the bin fills at most half its table
        CHECK_EQ_IDX(dsmmi_gpu_bin_of(T / 2, 1 << 30), b);
        CHECK(T / 2 > 0 && (T & (T - 1)) == 0);
        int grp = dsmmi_gpu_bin_group(b);
        CHECK(grp == 32 || grp == 128 || grp == 256 || grp == 512);
        // numeric tables (12 bytes an entry) per block stay within the 227 KiB of an H100 SM
        // and the 163 KiB of an A100
        int rows = grp == 32 ? 4 : 1;
        CHECK((size_t)rows * (size_t)T * 12 <= 163 * 1024);
    }
    CHECK_EQ_IDX(dsmmi_gpu_global_table(4097, 1 << 20), 16384);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(8192, 1 << 20), 16384);
    // a dense table (ncols entries) once the hash table would be as large
    CHECK_EQ_IDX(dsmmi_gpu_global_table(100000, 5000), 5000);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(4097, 8192), 8192);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(30000, 100000), 65536);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(40000, 100000), 100000);
    CHECK_EQ_IDX(dsmmi_gpu_global_table((dsmm_idx)1 << 19, (dsmm_idx)1 << 20), (dsmm_idx)1 << 20);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(((dsmm_idx)1 << 19) - 1, (dsmm_idx)1 << 20),
                 (dsmm_idx)1 << 20);
    CHECK_EQ_IDX(dsmmi_gpu_global_table(((dsmm_idx)1 << 18), (dsmm_idx)1 << 20), (dsmm_idx)1 << 19);
    // random rows: every row once, bins in row order, table offsets exact
    enum { M = 5000 };
    static dsmm_idx flops[M];
    for (int trial = 0; trial < 4; trial++) {
        dsmm_idx ncols = trial == 3 ? 50 : 1 << 20;
        for (int i = 0; i < M; i++) {
            uint64_t r = rnd() % 100;
            flops[i] = r < 20 ? 0 : r < 90 ? (dsmm_idx)(rnd() % 600) : (dsmm_idx)(rnd() % 90000);
        }
        dsmmi_gpu_bins bins;
        CHECK_OK(ctx, dsmmi_gpu_bins_make(ctx, flops, M, ncols, &bins));
        static unsigned char seen[M];
        memset(seen, 0, sizeof seen);
        dsmm_idx total = 0, maxf = 0;
        for (int i = 0; i < M; i++) {
            total += flops[i];
            if (flops[i] > maxf) maxf = flops[i];
        }
        CHECK_EQ_IDX(bins.total_flops, total);
        CHECK_EQ_IDX(bins.max_flops, maxf);
        CHECK_EQ_IDX(bins.start[0], 0);
        CHECK_EQ_IDX(bins.start[DSMMI_GPU_NBINS], M);
        for (int b = 0; b < DSMMI_GPU_NBINS; b++) {
            CHECK_EQ_IDX(bins.start[b + 1] - bins.start[b], bins.count[b]);
            for (dsmm_idx s = bins.start[b]; s < bins.start[b + 1]; s++) {
                int32_t r = bins.rows[s];
                CHECK(r >= 0 && r < M && !seen[r]);
                seen[r] = 1;
                CHECK_EQ_IDX(dsmmi_gpu_bin_of(flops[r], ncols), b);
                if (s > bins.start[b]) CHECK(bins.rows[s - 1] < r);
                if (b == DSMMI_GPU_GLOBAL_BIN) {
                    dsmm_idx g = s - bins.start[b];
                    dsmm_idx t = bins.gtab_off[g + 1] - bins.gtab_off[g];
                    dsmm_idx u = flops[r] < ncols ? flops[r] : ncols;
                    CHECK(t >= 2 * u && t < 4 * u && (t & (t - 1)) == 0);
                    // blocks sharing the row: ceil(flops / block flops), at least one
                    dsmm_idx nbk = bins.gblk_off[g + 1] - bins.gblk_off[g];
                    CHECK(nbk >= 1 && (nbk - 1) * DSMMI_GPU_GLOBAL_BLOCK_FLOPS < flops[r] &&
                          nbk * DSMMI_GPU_GLOBAL_BLOCK_FLOPS >= flops[r]);
                }
            }
        }
        CHECK_EQ_IDX(bins.gblk_off[0], 0);
        if (trial < 3) CHECK(bins.count[DSMMI_GPU_GLOBAL_BIN] > 0);
        if (trial == 3) CHECK_EQ_IDX(bins.count[DSMMI_GPU_GLOBAL_BIN], 0);
        // batches of the global rows: cover them in order, each within the limit or one row
        dsmm_idx n = bins.count[DSMMI_GPU_GLOBAL_BIN], nb = 0;
        dsmm_idx *bounds = malloc(((size_t)n + 1) * sizeof *bounds);
        CHECK(bounds != NULL);
        static const dsmm_idx limits[] = {1, 100000, 1 << 20, (dsmm_idx)1 << 40};
        for (int l = 0; l < 4; l++) {
            dsmmi_gpu_global_batches(bins.gtab_off, n, limits[l], bounds, &nb);
            CHECK_EQ_IDX(bounds[0], 0);
            CHECK_EQ_IDX(bounds[nb], n);
            for (dsmm_idx k = 0; k < nb; k++) {
                dsmm_idx lo = bounds[k], hi = bounds[k + 1];
                CHECK(hi > lo);
                dsmm_idx ent = bins.gtab_off[hi] - bins.gtab_off[lo];
                CHECK(ent <= limits[l] || hi == lo + 1);
                // maximal: the next row would not have fitted
                if (hi < n) CHECK(bins.gtab_off[hi + 1] - bins.gtab_off[lo] > limits[l]);
            }
            if (l == 3) CHECK_EQ_IDX(nb, n > 0 ? 1 : 0);
            if (l == 0) CHECK_EQ_IDX(nb, n);
        }
        free(bounds);
        dsmmi_gpu_bins_free(ctx, &bins);
    }
    // no rows; too many rows for 32-bit ids
    dsmmi_gpu_bins nob;
    CHECK_OK(ctx, dsmmi_gpu_bins_make(ctx, flops, 0, 10, &nob));
    CHECK_EQ_IDX(nob.start[DSMMI_GPU_NBINS], 0);
    dsmmi_gpu_bins_free(ctx, &nob);
    CHECK_ST(ctx, dsmmi_gpu_bins_make(ctx, flops, (dsmm_idx)INT32_MAX + 1, 10, &nob), DSMM_ERR_ARG);
    CHECK(nob.rows == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The bins of many rows, made by 1-3 threads (chunks of at least 32768 rows each): the same
// arrays as one thread makes, and the rows of every bin in increasing order.
static int test_bins_threads(void)
{
    dsmm_ctx *ctx = test_ctx();
    enum { M = 200003 };
    dsmm_idx *flops = malloc(M * sizeof *flops);
    CHECK(flops != NULL);
    for (int i = 0; i < M; i++) {
        uint64_t r = rnd() % 100;
        flops[i] = r < 20 ? 0 : r < 97 ? (dsmm_idx)(rnd() % 600) : (dsmm_idx)(rnd() % 90000);
    }
    dsmmi_gpu_bins one, many;
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 1));
    CHECK_OK(ctx, dsmmi_gpu_bins_make(ctx, flops, M, 1 << 20, &one));
    dsmm_idx ng = one.count[DSMMI_GPU_GLOBAL_BIN];
    CHECK(ng > 1000);
    for (dsmm_idx s = 1; s < M; s++)
        if (dsmmi_gpu_bin_of(flops[one.rows[s]], 1 << 20) ==
            dsmmi_gpu_bin_of(flops[one.rows[s - 1]], 1 << 20))
            CHECK(one.rows[s - 1] < one.rows[s]);
    for (int t = 2; t <= 3; t++) {
        CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, t));
        CHECK_OK(ctx, dsmmi_gpu_bins_make(ctx, flops, M, 1 << 20, &many));
        CHECK(memcmp(one.count, many.count, sizeof one.count) == 0);
        CHECK(memcmp(one.start, many.start, sizeof one.start) == 0);
        CHECK_EQ_IDX(many.total_flops, one.total_flops);
        CHECK_EQ_IDX(many.max_flops, one.max_flops);
        CHECK(memcmp(one.rows, many.rows, M * sizeof *one.rows) == 0);
        CHECK(memcmp(one.gtab_off, many.gtab_off, (size_t)(ng + 1) * sizeof *one.gtab_off) == 0);
        CHECK(memcmp(one.gblk_off, many.gblk_off, (size_t)(ng + 1) * sizeof *one.gblk_off) == 0);
        dsmmi_gpu_bins_free(ctx, &many);
    }
    dsmmi_gpu_bins_free(ctx, &one);
    free(flops);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// AUTO's decision takes the flops' total alone (no per-row array): the same total as the
// per-row pass, which is the sum of its rows.
static int test_row_flops_total(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 10, 8, 0, DSMM_DOUBLE, 77, &A));
    dsmm_idx *fl = calloc((size_t)A->nrows + 1, sizeof *fl), total = -1, total_only = -1, sum = 0;
    CHECK(fl != NULL);
    dsmmi_spgemm_row_flops(A, A, fl, &total);
    dsmmi_spgemm_row_flops(A, A, NULL, &total_only);
    for (dsmm_idx i = 0; i < A->nrows; i++) sum += fl[i];
    CHECK_EQ_IDX(total, sum);
    CHECK_EQ_IDX(total_only, total);
    CHECK_NEAR((double)total, ref_flops(A, A), 0);
    free(fl);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The SpMM kernels' loads in flight: 1 or 4 as asked; by default 4 while a lane covers at most
// one 16-byte group of B's row (k / VEC <= 32 groups: 32 lanes), 1 beyond (measured on an
// H200: docs/gpu.md).
static int test_spmm_unroll_default(void)
{
    for (dsmm_idx groups = 0; groups <= 300; groups++) {
        CHECK(dsmmi_gpu_spmm_unroll(1, groups) == 1);
        CHECK(dsmmi_gpu_spmm_unroll(4, groups) == 4);
        CHECK(dsmmi_gpu_spmm_unroll(0, groups) == (groups <= 32 ? 4 : 1));
    }
    // float rows of B (float4 groups): k = 32 and 128 take 4, k = 256 takes 1; doubles
    // (double2 groups): k = 64 takes 4, k = 128 takes 1
    CHECK(dsmmi_gpu_spmm_unroll(0, 32 / 4) == 4);
    CHECK(dsmmi_gpu_spmm_unroll(0, 128 / 4) == 4);
    CHECK(dsmmi_gpu_spmm_unroll(0, 256 / 4) == 1);
    CHECK(dsmmi_gpu_spmm_unroll(0, 64 / 2) == 4);
    CHECK(dsmmi_gpu_spmm_unroll(0, 128 / 2) == 1);
    return 0;
}

static int test_spmm_variant(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *E = NULL;
    test_mat o;
    test_mat_init(&o, 300, 300, 0.02, test_seed());
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    CHECK_EQ_IDX(dsmmi_gpu_spmm_variant(A), 0); // uniform rows: a warp per row
    dsmm_csr_destroy(&A);
    o.dense_row = 7; // one row of 300 entries among rows of about 6
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    CHECK_EQ_IDX(dsmmi_gpu_spmm_variant(A), 1);
    dsmm_csr_destroy(&A);
    CHECK_OK(ctx, dsmm_csr_create(ctx, 0, 5, 0, DSMM_DOUBLE, &E));
    CHECK_EQ_IDX(dsmmi_gpu_spmm_variant(E), 0);
    dsmm_csr_destroy(&E);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_lanes(1), 8);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_lanes(16), 16);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_lanes(17), 32);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_lanes(256), 32);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The split variant's items: every entry of every row past its first `cap` is in exactly one
// item, items of a row are consecutive and cap apart, rows of at most cap entries have none.
static int test_spmm_segs(void)
{
    dsmm_ctx *ctx = test_ctx();
    static const dsmm_idx lens[] = {0, 1, 5, 5, 6, 10, 0, 11, 16, 17, 3};
    static const dsmm_idx caps[] = {1, 5, 16, 100};
    dsmm_idx m = sizeof lens / sizeof lens[0], nnz = 0;
    for (dsmm_idx i = 0; i < m; i++) nnz += lens[i];
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, m, 20, nnz, DSMM_PATTERN, &A));
    A->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        A->rowptr[i + 1] = A->rowptr[i] + lens[i];
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) A->colidx[k] = k - A->rowptr[i];
    }
    A->nnz = nnz;
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        dsmm_idx cap = caps[c], want = 0, t = 0;
        dsmmi_gpu_spmm_segs sg;
        CHECK_OK(ctx, dsmmi_gpu_spmm_segs_make(ctx, A, cap, &sg));
        for (dsmm_idx i = 0; i < m; i++)
            for (dsmm_idx p = A->rowptr[i] + cap; p < A->rowptr[i + 1]; p += cap, t++) {
                CHECK_MSG(t < sg.n, "cap %lld: %lld items, more wanted", (long long)cap,
                          (long long)sg.n);
                CHECK_EQ_IDX(sg.row[t], i);
                CHECK_EQ_IDX(sg.begin[t], p);
                want++;
            }
        CHECK_EQ_IDX(sg.n, want);
        CHECK(want > 0 || (sg.row == NULL && sg.begin == NULL));
        dsmmi_gpu_spmm_segs_free(ctx, &sg);
    }
    // cap 1: an item for each entry but the first of each row
    dsmmi_gpu_spmm_segs sg;
    CHECK_OK(ctx, dsmmi_gpu_spmm_segs_make(ctx, A, 1, &sg));
    CHECK_EQ_IDX(sg.n, nnz - 9); // 9 non-empty rows
    dsmmi_gpu_spmm_segs_free(ctx, &sg);
    CHECK_ST(ctx, dsmmi_gpu_spmm_segs_make(ctx, A, 0, &sg), DSMM_ERR_ARG);
    // the cap: four waves of groups, within [16, 256]
    CHECK_EQ_IDX(dsmmi_gpu_spmm_cap(1000, 8, 132), 16);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_cap((dsmm_idx)1 << 40, 32, 132), 256);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_cap((dsmm_idx)100 * 4 * 132 * 64, 32, 132), 100);
    CHECK_EQ_IDX(dsmmi_gpu_spmm_cap((dsmm_idx)100 * 4 * 132 * 64, 32, 0), 100); // unknown: 132
    dsmm_ctx_clear_error(ctx);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static int fake_calls;
static dsmm_status fake_gpu_spgemm(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                   dsmmi_spgemm_phase phase, dsmm_csr **C, dsmm_spgemm_info *info)
{
    fake_calls++;
    dsmm_idx total = 0;
    dsmmi_spgemm_row_flops(a->A, a->B, NULL, &total); // AUTO's total, as the device entry
    if (a->alg == DSMM_SPGEMM_AUTO && !dsmmi_gpu_wants(ctx, (double)total))
        return dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
    dsmm_status st = dsmmi_spgemm_rowwise(ctx, a, phase, C, info);
    info->on_gpu = 1; // "ran on the device"
    return st;
}

static int spmm_fake_calls;
static dsmm_status fake_gpu_spmm(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    spmm_fake_calls++;
    if (a->trans) return DSMM_ERR_INTERNAL; // the front end transposes for the GPU kernels
    return dsmmi_spmm_row(ctx, a, info);
}

// The front ends' wiring, with a stand-in device state and stand-in table entries: AUTO goes
// to the GPU entry only on a context with a device and gpu_auto set, which then applies the
// flops threshold; named CPU kernels never go there; gpu/cusparse fail cleanly on a context
// without a device; dsmm_ctx_set_gpu without a device fails with a clear status.
static int test_dispatch(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *C = NULL;
    dsmm_spgemm_opts o;
    dsmm_spgemm_info info;
    test_mat m;
    test_mat_init(&m, 60, 60, 0.1, test_seed());
    CHECK_OK(ctx, test_rand_csr(ctx, &m, &A));
    double flops = ref_flops(A, A);
    CHECK(flops > 100);

    // no device: set_gpu fails (built without CUDA, or no device visible), nothing changes
    dsmm_status st = dsmm_ctx_set_gpu(ctx, NULL);
    CHECK(st == (DSMM_HAVE_CUDA ? DSMM_ERR_CUDA : DSMM_ERR_UNSUPPORTED) ||
          (DSMM_HAVE_CUDA && st == DSMM_OK && dsmm_gpu_count() > 0));
    if (st == DSMM_OK) { // a real device: this test is about the wiring without one
        dsmm_csr_destroy(&A);
        CHECK_NO_LEAK(ctx);
        return TEST_SKIP;
    }
    CHECK(strlen(dsmm_ctx_last_error(ctx)) > 0);
    dsmm_ctx_clear_error(ctx);
    dsmm_gpu_info gi;
    CHECK_OK(ctx, dsmm_ctx_gpu_info(ctx, &gi));
    CHECK_EQ_IDX(gi.enabled, 0);
    dsmm_spgemm_opts_init(&o);
    o.alg = DSMM_SPGEMM_GPU;
    CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "gpu");
    dsmm_ctx_clear_error(ctx);
    o.alg = DSMM_SPGEMM_CUSPARSE;
    CHECK_ST(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, NULL), DSMM_ERR_UNSUPPORTED);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "cusparse");
    dsmm_ctx_clear_error(ctx);
    CHECK(C == NULL);
    dsmm_gpu_opts go;
    dsmm_gpu_opts_init(&go);
    go.stage_bytes = 100;
    CHECK_ST(ctx, dsmm_ctx_set_gpu(ctx, &go), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_gpu_opts_init(&go);
    go.spmm_unroll = 2; // 0, 1 or 4: refused before any device is looked for
    CHECK_ST(ctx, dsmm_ctx_set_gpu(ctx, &go), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "spmm_unroll");
    dsmm_ctx_clear_error(ctx);

    // a stand-in device: AUTO goes to the GPU entry, which keeps small products on the CPU
    dsmmi_spgemm_fn saved = dsmmi_spgemm_kernel(DSMM_SPGEMM_GPU);
    dsmmi_spmm_fn saved_mm = dsmmi_spmm_kernel(DSMM_SPMM_GPU);
    dsmmi_gpu fake;
    memset(&fake, 0, sizeof fake);
    fake.auto_flops = flops + 1;
    ctx->gpu = &fake;
    ctx->gpu_auto = 1;
    dsmmi_spgemm_kernel_set(DSMM_SPGEMM_GPU, fake_gpu_spgemm);
    dsmmi_spmm_kernel_set(DSMM_SPMM_GPU, fake_gpu_spmm);
    CHECK(!dsmmi_gpu_wants(ctx, flops));
    CHECK(dsmmi_gpu_wants(ctx, flops + 1));
    fake_calls = 0;
    dsmm_spgemm_opts_init(&o);
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, &info));
    CHECK_EQ_IDX(fake_calls, 1);
    CHECK_EQ_IDX(info.on_gpu, 0); // below the threshold
    dsmm_csr_destroy(&C);
    fake.auto_flops = flops;
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, &info));
    CHECK_EQ_IDX(fake_calls, 2);
    CHECK_EQ_IDX(info.on_gpu, 1);
    dsmm_csr_destroy(&C);
    o.alg = DSMM_SPGEMM_HASH; // a named CPU kernel stays on the CPU
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, &info));
    CHECK_EQ_IDX(fake_calls, 2);
    dsmm_csr_destroy(&C);
    fake.auto_flops = -1; // AUTO never sends
    CHECK(!dsmmi_gpu_wants(ctx, 1e30));
    ctx->gpu_auto = 0; // set_gpu leaves it off for auto_flops < 0: the entry is not asked
    dsmm_spgemm_opts_init(&o);
    CHECK_OK(ctx, dsmm_csr_spgemm_ex(ctx, A, A, &o, &C, &info));
    CHECK_EQ_IDX(fake_calls, 2);
    dsmm_csr_destroy(&C);

    // SpMM: AUTO goes to the GPU entry without a transpose; with one, the CPU's COL kernel runs
    dsmm_dense *B = NULL, *Y = NULL;
    CHECK_OK(ctx, dsmm_dense_create(ctx, 60, 8, DSMM_DOUBLE, &B));
    CHECK_OK(ctx, dsmm_dense_create(ctx, 60, 8, DSMM_DOUBLE, &Y));
    for (dsmm_idx i = 0; i < 60 * 8; i++) ((double *)B->val)[i] = (double)(i % 7) - 3;
    dsmm_spmm_opts so;
    dsmm_spmm_info si;
    dsmm_spmm_opts_init(&so);
    ctx->gpu_auto = 1;
    spmm_fake_calls = 0;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, Y, &so, &si));
    CHECK_EQ_IDX(spmm_fake_calls, 1);
    CHECK_EQ_IDX(si.alg, DSMM_SPMM_GPU);
    so.transpose_a = 1;
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, Y, &so, &si));
    CHECK_EQ_IDX(spmm_fake_calls, 1);
    CHECK_EQ_IDX(si.alg, DSMM_SPMM_COL);
    so.alg = DSMM_SPMM_GPU; // named: the front end transposes A for it
    CHECK_OK(ctx, dsmm_csr_spmm(ctx, A, B, Y, &so, &si));
    CHECK_EQ_IDX(spmm_fake_calls, 2);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&Y);

    dsmmi_spgemm_kernel_set(DSMM_SPGEMM_GPU, saved);
    dsmmi_spmm_kernel_set(DSMM_SPMM_GPU, saved_mm);
    ctx->gpu = NULL;
    ctx->gpu_auto = 0;
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ---- the resident accumulator's merge tree ------------------------------------------------- */

// One run of puts in the order seq (skipping the slots with skip[s]): every merge joins two
// held sums with no held sum between them (so each entry sums its slots left to right), the
// held list is what the test tracks, and at the end one sum is held when any slot had one.
// pairs_out gets the merges made (sorted), *peak the most sums held at once.
static int tree_run(dsmm_ctx *ctx, int n, const int *seq, int nput, const unsigned char *skip,
                    int64_t *pairs_out, int *npairs_out, int *peak)
{
    dsmmi_sum_tree t;
    unsigned char *held = calloc((size_t)n + 1, 1);
    int *first = malloc(((size_t)n + 1) * sizeof *first);
    int pairs[DSMMI_SUM_TREE_MAX_PAIRS][2], np = 0, nh = 0;
    CHECK(held != NULL && first != NULL);
    CHECK_OK(ctx, dsmmi_sum_tree_init(ctx, &t, n));
    *npairs_out = 0;
    *peak = 0;
    for (int q = 0; q < nput; q++) {
        int s = seq[q];
        CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, s, !skip[s], pairs, &np));
        if (!skip[s]) {
            held[s] = 1;
            nh++;
        }
        if (nh > *peak) *peak = nh;
        CHECK(np <= DSMMI_SUM_TREE_MAX_PAIRS);
        for (int i = 0; i < np; i++) {
            int a = pairs[i][0], b = pairs[i][1];
            CHECK_MSG(a >= 0 && a < b && b < n && held[a] && held[b],
                      "n %d: merge %d <- %d of sums not held", n, a, b);
            for (int c = a + 1; c < b; c++)
                CHECK_MSG(!held[c], "n %d: merge %d <- %d over the sum at %d", n, a, b, c);
            held[b] = 0;
            nh--;
            pairs_out[(*npairs_out)++] = (int64_t)a * n + b;
        }
        int k = dsmmi_sum_tree_held(&t, first), j = 0;
        CHECK_MSG(k == nh, "n %d: %d sums held, the tree says %d", n, nh, k);
        for (int c = 0; c < n; c++)
            if (held[c]) CHECK(first[j++] == c);
    }
    // sort the merges (insertion sort: a few dozen)
    for (int i = 1; i < *npairs_out; i++)
        for (int j = i; j > 0 && pairs_out[j - 1] > pairs_out[j]; j--) {
            int64_t x = pairs_out[j];
            pairs_out[j] = pairs_out[j - 1];
            pairs_out[j - 1] = x;
        }
    dsmmi_sum_tree_free(ctx, &t);
    free(held);
    free(first);
    return TEST_PASS;
}

// The merge tree of the resident accumulator: for 0 to 70 slots (and 1000), some skipped, in
// slot order, reversed and shuffled: only neighbouring sums are merged; with every slot filled
// one sum is left (none when all are skipped) after exactly (sums - 1) merges, and the same
// merges whatever the order (the same sum to the bit on the device); in slot order at most
// ceil(log2(n + 1)) sums are held at once; a slot filled twice or out of range is refused.
static int test_sum_tree(void)
{
    dsmm_ctx *ctx = test_ctx();
    rng_state = 0x9e3779b97f4a7c15ull;
    int sizes[72];
    for (int i = 0; i <= 70; i++) sizes[i] = i;
    sizes[71] = 1000;
    for (int z = 0; z < 72; z++) {
        int n = sizes[z];
        int *seq = malloc(((size_t)n + 1) * sizeof *seq);
        unsigned char *skip = calloc((size_t)n + 1, 1);
        int64_t *p0 = malloc(((size_t)n + 1) * sizeof *p0),
                *p1 = malloc(((size_t)n + 1) * sizeof *p1);
        CHECK(seq && skip && p0 && p1);
        for (int variant = 0; variant < 3; variant++) {
            // skipped slots: none, about a third, all
            int sums = 0;
            for (int s = 0; s < n; s++) {
                skip[s] = variant == 0 ? 0 : variant == 2 ? 1 : rnd() % 3 == 0;
                sums += !skip[s];
            }
            int n0 = 0, n1 = 0, peak = 0;
            for (int s = 0; s < n; s++) seq[s] = s;
            if (tree_run(ctx, n, seq, n, skip, p0, &n0, &peak) != TEST_PASS) return TEST_FAIL;
            int bound = 0;
            while (((int64_t)1 << bound) < (int64_t)n + 1) bound++;
            CHECK_MSG(peak <= bound, "n %d: %d sums held in slot order, bound %d", n, peak, bound);
            CHECK_MSG(n0 == (sums > 0 ? sums - 1 : 0), "n %d: %d merges of %d sums", n, n0, sums);
            for (int ord = 0; ord < 4; ord++) {
                for (int s = 0; s < n; s++) seq[s] = ord == 0 ? n - 1 - s : s;
                for (int s = n - 1; ord > 0 && s > 0; s--) { // Fisher-Yates
                    int r = (int)(rnd() % (uint64_t)(s + 1)), x = seq[s];
                    seq[s] = seq[r];
                    seq[r] = x;
                }
                if (tree_run(ctx, n, seq, n, skip, p1, &n1, &peak) != TEST_PASS) return TEST_FAIL;
                CHECK_MSG(n1 == n0 && (n0 == 0 || memcmp(p0, p1, (size_t)n0 * sizeof *p0) == 0),
                          "n %d, order %d: other merges than in slot order", n, ord);
            }
        }
        free(seq);
        free(skip);
        free(p0);
        free(p1);
    }
    // Refused: out of range, filled twice; the tree is unchanged by a refusal.
    dsmmi_sum_tree t;
    int pairs[DSMMI_SUM_TREE_MAX_PAIRS][2], np = -1, first[3];
    CHECK(dsmmi_sum_tree_init(ctx, &t, -1) == DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_OK(ctx, dsmmi_sum_tree_init(ctx, &t, 3));
    CHECK(dsmmi_sum_tree_put(ctx, &t, 3, 1, pairs, &np) == DSMM_ERR_INTERNAL);
    CHECK(np == 0);
    dsmm_ctx_clear_error(ctx);
    CHECK(dsmmi_sum_tree_put(ctx, &t, -1, 1, pairs, &np) == DSMM_ERR_INTERNAL);
    dsmm_ctx_clear_error(ctx);
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 1, 1, pairs, &np));
    CHECK(dsmmi_sum_tree_put(ctx, &t, 1, 1, pairs, &np) == DSMM_ERR_INTERNAL);
    CHECK(strstr(dsmm_ctx_last_error(ctx), "filled twice") != NULL);
    dsmm_ctx_clear_error(ctx);
    // 3 slots: [0,1] pair, [2] alone. Slot 2 skipped, then 0 with a sum: 0 + 1 merged.
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 2, 0, pairs, &np));
    CHECK(np == 0);
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 0, 1, pairs, &np));
    CHECK(np == 1 && pairs[0][0] == 0 && pairs[0][1] == 1);
    CHECK(dsmmi_sum_tree_held(&t, first) == 1 && first[0] == 0);
    dsmmi_sum_tree_free(ctx, &t);
    // A skipped left slot: the right one's sum stays where it was put (slot 1), then merges
    // with the next pair's at slot 2.
    CHECK_OK(ctx, dsmmi_sum_tree_init(ctx, &t, 4));
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 0, 0, pairs, &np));
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 1, 1, pairs, &np));
    CHECK(np == 0);
    CHECK(dsmmi_sum_tree_held(&t, first) == 1 && first[0] == 1);
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 3, 1, pairs, &np));
    CHECK(np == 0);
    CHECK_OK(ctx, dsmmi_sum_tree_put(ctx, &t, 2, 1, pairs, &np));
    CHECK(np == 2 && pairs[0][0] == 2 && pairs[0][1] == 3 && pairs[1][0] == 1 && pairs[1][1] == 2);
    CHECK(dsmmi_sum_tree_held(&t, first) == 1 && first[0] == 1);
    dsmmi_sum_tree_free(ctx, &t);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_pool_random),
        TEST(test_pool_edges),
        TEST(test_stage),
        TEST(test_bins),
        TEST(test_bins_threads),
        TEST(test_spmm_variant),
        TEST(test_spmm_segs),
        TEST(test_dispatch),
        TEST(test_row_flops_total),
        TEST(test_sum_tree),
        TEST(test_spmm_unroll_default),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
