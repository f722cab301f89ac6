// tests/kernels/test_spmm_model.c: the traffic model of bench/spmm_model.h (the L2 misses of
// B's lines that bench/spmm.sh reports for the row-wise SpMM): hand-counted sequences, rows
// that share or straddle lines, the split over threads, and random matrices against a plain
// LRU simulation written here from the definition.
#include <stdlib.h>

#include "check.h"
#include "../../bench/spmm_model.h"

// A CSR view of rows given as column lists (no values: the model reads the pattern only).
typedef struct view {
    dsmm_csr H;
    dsmm_idx rowptr[64];
    int32_t col[256];
} view;

static void view_set(view *v, dsmm_idx ncols, dsmm_idx nrows, const dsmm_idx *lens,
                     const int32_t *cols)
{
    memset(v, 0, sizeof *v);
    v->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < nrows; i++) v->rowptr[i + 1] = v->rowptr[i] + lens[i];
    memcpy(v->col, cols, (size_t)v->rowptr[nrows] * sizeof *cols);
    v->H.nrows = nrows;
    v->H.ncols = ncols;
    v->H.nnz = v->rowptr[nrows];
    v->H.rowptr = v->rowptr;
    v->H.colidx32 = v->col;
    v->H.type = DSMM_PATTERN;
}

// Rows of one line each (k = 16 floats), an LRU of two lines: 0 1 0 2 1 1 3 0 misses at
// 0, 1, 2 (evicts 1), 1 (evicts 0), 3 (evicts 2), 0 (evicts 1): 6, however the entries are
// cut into rows (an empty row included), at 1 thread. Three lines: 0, 1, 2, 3 (evicts 0),
// 0 (evicts 2): 5; four: the 4 first touches.
static int test_hand_counted(void)
{
    static const int32_t cols[] = {0, 1, 0, 2, 1, 1, 3, 0};
    view v;
    view_set(&v, 4, 1, (dsmm_idx[]){8}, cols);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 128.0) == 6.0);
    view_set(&v, 4, 3, (dsmm_idx[]){3, 0, 5}, cols);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 128.0) == 6.0);
    CHECK(bench_l2_model_misses(&v.H, 8, 8, 1, 128.0) == 6.0); // 8 doubles: the same bytes
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 192.0) == 5.0);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 256.0) == 4.0);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 10.0) == 7.0); // one line: every change
    CHECK(bench_l2_model_misses(&v.H, 0, 4, 1, 128.0) == 0.0); // k = 0 reads nothing
    return TEST_PASS;
}

// Rows of two lines (k = 32 floats): 0 1 2 0 with four lines evicts row 0 for row 2 and row 1
// for row 0 again: 8 misses; with six lines, 6. Rows smaller than a line share it: k = 1
// double puts 8 rows in a line (0 7 8 15 3 with one line: 3 misses); k = 3 float (12 bytes)
// has row 5 on bytes 60..71, across lines 0 and 1.
static int test_line_spans(void)
{
    view v;
    view_set(&v, 3, 2, (dsmm_idx[]){2, 2}, (int32_t[]){0, 1, 2, 0});
    CHECK(bench_l2_model_misses(&v.H, 32, 4, 1, 256.0) == 8.0);
    CHECK(bench_l2_model_misses(&v.H, 32, 4, 1, 384.0) == 6.0);
    view_set(&v, 16, 1, (dsmm_idx[]){5}, (int32_t[]){0, 7, 8, 15, 3});
    CHECK(bench_l2_model_misses(&v.H, 1, 8, 1, 64.0) == 3.0);
    CHECK(bench_l2_model_misses(&v.H, 1, 8, 1, 128.0) == 2.0);
    view_set(&v, 8, 1, (dsmm_idx[]){2}, (int32_t[]){5, 4});
    CHECK(bench_l2_model_misses(&v.H, 3, 4, 1, 128.0) == 2.0);
    view_set(&v, 8, 1, (dsmm_idx[]){1}, (int32_t[]){4});
    CHECK(bench_l2_model_misses(&v.H, 3, 4, 1, 128.0) == 1.0);
    return TEST_PASS;
}

// Each thread has its own cache: 16 rows that all read row 0 of B miss once per thread that
// gets a row. Row i weighs rowptr[i] + i = 2i of 32: at 2 threads (16 chunks) chunk c is row
// c, dealt alternately, so both threads miss; at 4 threads (32 chunks) row i is chunk 2i,
// and the even chunks go to threads 0 and 2 only: 2 misses.
static int test_threads_own_caches(void)
{
    view v;
    dsmm_idx lens[16];
    int32_t cols[16];
    for (int i = 0; i < 16; i++) {
        lens[i] = 1;
        cols[i] = 0;
    }
    view_set(&v, 1, 16, lens, cols);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 1, 64.0) == 1.0);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 2, 64.0) == 2.0);
    CHECK(bench_l2_model_misses(&v.H, 16, 4, 4, 64.0) == 2.0);
    return TEST_PASS;
}

// The definition, plainly: thread of row i = ((rowptr[i] + i) * 8T / (nnz + m)) mod T; each
// thread walks its rows in order through an LRU array of cap lines (most recent first).
static double lru_reference(const view *v, size_t rowb, int threads, size_t cap)
{
    const dsmm_csr *H = &v->H;
    double misses = 0.0;
    int64_t nchunks = 8 * threads, total = H->nnz + H->nrows;
    size_t *lru = malloc((cap + 1) * sizeof *lru);
    if (lru == NULL) return -1.0;
    for (int t = 0; t < threads; t++) {
        size_t n = 0;
        for (dsmm_idx i = 0; i < H->nrows; i++) {
            if (((int64_t)H->rowptr[i] + i) * nchunks / total % threads != t) continue;
            for (dsmm_idx p = H->rowptr[i]; p < H->rowptr[i + 1]; p++) {
                size_t c = (size_t)H->colidx32[p];
                for (size_t l = c * rowb / 64; l <= (c * rowb + rowb - 1) / 64; l++) {
                    size_t at = 0;
                    while (at < n && lru[at] != l) at++;
                    if (at == n) { // a miss: the last one falls off when full
                        misses += 1.0;
                        if (n < cap) n++;
                        at = n - 1;
                    }
                    memmove(lru + 1, lru, at * sizeof *lru);
                    lru[0] = l;
                }
            }
        }
    }
    free(lru);
    return misses;
}

// Random rows (empty ones included), k of 1..40 floats or doubles, caches of 1..12 lines,
// 1..3 threads, against the reference.
static int test_random_vs_reference(void)
{
    uint64_t s = test_seed() | 1;
    for (int trial = 0; trial < 400; trial++) {
        view v;
        dsmm_idx lens[64];
        int32_t cols[256];
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        dsmm_idx m = 1 + (dsmm_idx)(s % 40), n = 1 + (dsmm_idx)((s >> 8) % 30), nnz = 0;
        for (dsmm_idx i = 0; i < m; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            lens[i] = (s % 4 == 0) ? 0 : (dsmm_idx)(s >> 5) % 6;
            for (dsmm_idx j = 0; j < lens[i]; j++)
                cols[nnz++] = (int32_t)((s >> (10 + 2 * j)) % (uint64_t)n);
        }
        view_set(&v, n, m, lens, cols);
        dsmm_idx k = 1 + (dsmm_idx)((s >> 40) % 40);
        size_t w = (s >> 50) % 2 ? 8 : 4, cap = 1 + (size_t)((s >> 52) % 12);
        int threads = 1 + (int)((s >> 58) % 3);
        double got = bench_l2_model_misses(&v.H, k, w, threads, 64.0 * (double)cap);
        double want = lru_reference(&v, (size_t)k * w, threads, cap);
        CHECK_MSG(got == want,
                  "trial %d: m %lld n %lld k %lld w %zu cap %zu threads %d: %g misses, "
                  "reference %g",
                  trial, (long long)m, (long long)n, (long long)k, w, cap, threads, got, want);
    }
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_hand_counted),
        TEST(test_line_spans),
        TEST(test_threads_own_caches),
        TEST(test_random_vs_reference),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
