// tests/dist/test_model.c: the performance model (src/dist/model.c) against brute force: on
// small random matrices (square, rectangular, empty rows and columns, all empty, one dense row,
// float, double and pattern, 32- and 64-bit columns, unsorted rows) and grids 1x1, 2x2, 2x3,
// 3x2, 4x1 and 1x4, every piece's nnz and bytes, every item's flops and partial product (dense
// boolean products), C's tiles, and the per-rank flops, bytes and gets of each algorithm
// derived here a second way from the rules in model.h; identities (flops of the items = flops
// of A*B, bytes in = bytes out, nothing moves on 1x1, RDMA-C moves SUMMA's pieces); SpMM; the
// imbalance helpers and the roofline on hand-made numbers; argument errors.
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "ref.h"

#include "dist/model.h"

static const int grids[][2] = {{1, 1}, {2, 2}, {2, 3}, {3, 2}, {4, 1}, {1, 4}};
#define NGRIDS (int)(sizeof grids / sizeof grids[0])

// Wire bytes of a sparse piece, written out independently of dsmmi_piece_bytes.
static int64_t piece_bytes(dsmm_idx rows, int64_t nnz, dsmm_type t)
{
    int64_t v = t == DSMM_DOUBLE ? 8 : t == DSMM_FLOAT ? 4 : 0;
    return nnz == 0 ? 0 : (rows + 1) * 8 + nnz * (v + 4);
}

static void split(dsmm_idx len, int n, dsmm_idx *b)
{
    b[0] = 0;
    for (int p = 0; p < n; p++) b[p + 1] = b[p] + len / n + (p < len % n ? 1 : 0);
}

// The stage of inner index k, by search in the model's plan (checked separately).
static int stage_of(const dsmmi_model *m, dsmm_idx k)
{
    for (int s = 0; s < m->S; s++)
        if (m->plan.lo[s] <= k && k < m->plan.hi[s]) return s;
    return -1;
}

// The plan: stages cover [0, kk) in order, each inside one column block of A's pc-way split
// and one row block of B's pr-way split, cut exactly at the union of both splits.
static int check_plan(const dsmmi_model *m, dsmm_idx kk)
{
    dsmm_idx ca[64], rb[64];
    split(kk, m->pc, ca);
    split(kk, m->pr, rb);
    dsmm_idx at = 0;
    for (int s = 0; s < m->S; s++) {
        CHECK_EQ_IDX(m->plan.lo[s], at);
        CHECK(m->plan.hi[s] > m->plan.lo[s]);
        int kc = m->plan.kc[s], kr = m->plan.kr[s];
        CHECK(ca[kc] <= m->plan.lo[s] && m->plan.hi[s] <= ca[kc + 1]);
        CHECK(rb[kr] <= m->plan.lo[s] && m->plan.hi[s] <= rb[kr + 1]);
        at = m->plan.hi[s];
        int cut = 0; // every stage ends at a boundary of one of the splits
        for (int p = 0; p <= m->pc; p++) cut |= ca[p] == at;
        for (int p = 0; p <= m->pr; p++) cut |= rb[p] == at;
        CHECK(cut);
    }
    CHECK_EQ_IDX(at, kk);
    return TEST_PASS;
}

// The per-rank numbers of every algorithm, derived again from the per-item numbers that the
// caller has already checked: SUMMA from the broadcasts each rank takes part in, the
// one-sided algorithms by walking the items rank by rank.
static int check_ranks(const dsmmi_model *m)
{
    int pr = m->pr, pc = m->pc, S = m->S, P = m->P;
    const dsmmi_summa_plan *p = &m->plan;
    double total = 0;
    size_t ni = (size_t)pr * S * pc;
    for (size_t it = 0; it < ni; it++) total += m->flops[it];
    for (int r = 0; r < P; r++) {
        int ri = r / pc, rj = r % pc;
        int64_t in = 0, out = 0;
        double f = 0;
        for (int s = 0; s < S; s++) {
            int64_t ab = m->a_bytes[(size_t)ri * S + s], bb = m->b_bytes[(size_t)s * pc + rj];
            if (rj != p->kc[s]) in += ab;
            if (ri != p->kr[s]) in += bb;
            if (rj == p->kc[s]) out += (int64_t)(pc - 1) * ab;
            if (ri == p->kr[s]) out += (int64_t)(pr - 1) * bb;
            double sf = m->flops[((size_t)ri * S + s) * pc + rj];
            CHECK(m->stage_flops[(size_t)r * S + s] == sf);
            f += sf;
        }
        CHECK_EQ_IDX(m->rank_in[DSMMI_MODEL_SUMMA][r], in);
        CHECK_EQ_IDX(m->rank_out[DSMMI_MODEL_SUMMA][r], out);
        CHECK_EQ_IDX(m->rank_gets[DSMMI_MODEL_SUMMA][r], 0);
        CHECK(m->rank_flops[DSMMI_MODEL_SUMMA][r] == f);
        // One-sided: rank r as executor, as owner of fetched pieces, as owner of C.
        int64_t gin[DSMMI_MODEL_COUNT] = {0}, gout[DSMMI_MODEL_COUNT] = {0};
        int64_t gets[DSMMI_MODEL_COUNT] = {0};
        double gf[DSMMI_MODEL_COUNT] = {0};
        for (int i = 0; i < pr; i++)
            for (int s = 0; s < S; s++)
                for (int j = 0; j < pc; j++) {
                    size_t it = ((size_t)i * S + s) * pc + j;
                    int64_t an = m->a_nnz[(size_t)i * S + s], bn = m->b_nnz[(size_t)s * pc + j];
                    if (an == 0 || bn == 0) {
                        CHECK(m->flops[it] == 0 && m->p_nnz[it] == 0 && m->p_bytes[it] == 0);
                        continue;
                    }
                    int64_t ab = m->a_bytes[(size_t)i * S + s], bb = m->b_bytes[(size_t)s * pc + j];
                    int64_t pb = m->p_bytes[it];
                    int oa = i * pc + p->kc[s], ob = p->kr[s] * pc + j, oc = i * pc + j;
                    int exec[DSMMI_MODEL_COUNT] = {0, oc, oa, ob};
                    for (int a = DSMMI_MODEL_RDMA_C; a < DSMMI_MODEL_COUNT; a++) {
                        int e = exec[a];
                        if (e == r) gf[a] += m->flops[it];
                        // the pieces the executor lacks
                        if (e == r && oa != r) gin[a] += ab, gets[a]++;
                        if (e != oa && oa == r) gout[a] += ab;
                        if (e == r && ob != r) gin[a] += bb, gets[a]++;
                        if (e != ob && ob == r) gout[a] += bb;
                        // the partial, fetched by C's owner
                        if (a != DSMMI_MODEL_RDMA_C && e != oc && pb > 0) {
                            if (oc == r) gin[a] += pb, gets[a]++;
                            if (e == r) gout[a] += pb;
                        }
                    }
                }
        for (int a = DSMMI_MODEL_RDMA_C; a < DSMMI_MODEL_COUNT; a++) {
            CHECK_EQ_IDX(m->rank_in[a][r], gin[a]);
            CHECK_EQ_IDX(m->rank_out[a][r], gout[a]);
            CHECK_EQ_IDX(m->rank_gets[a][r], gets[a]);
            CHECK(m->rank_flops[a][r] == gf[a]);
        }
        // RDMA-C fetches the pieces SUMMA broadcasts to it, but only those of live items.
        CHECK(m->rank_in[DSMMI_MODEL_RDMA_C][r] <= m->rank_in[DSMMI_MODEL_SUMMA][r]);
    }
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        int64_t in = 0, out = 0;
        double f = 0;
        for (int r = 0; r < P; r++) {
            in += m->rank_in[a][r];
            out += m->rank_out[a][r];
            f += m->rank_flops[a][r];
        }
        CHECK_EQ_IDX(in, out);
        CHECK(f == total);
        if (P == 1) CHECK_EQ_IDX(in, 0);
    }
    return TEST_PASS;
}

// Every per-item number of the SpGEMM model of A * B on pr x pc against brute force.
static int check_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                        int ctype_opt, const char *what)
{
    dsmmi_model m;
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.type = ctype_opt;
    CHECK_OK(ctx, dsmmi_model_spgemm(ctx, A, B, pr, pc, &o, &m));
    int S = m.S;
    dsmm_type ct = ctype_opt != -1                                  ? (dsmm_type)ctype_opt
                   : A->type == DSMM_FLOAT && B->type == DSMM_FLOAT ? DSMM_FLOAT
                                                                    : DSMM_DOUBLE;
    CHECK_MSG(m.pr == pr && m.pc == pc && m.P == pr * pc && !m.spmm && m.ctype == ct, "%s", what);
    if (check_plan(&m, A->ncols)) return TEST_FAIL;
    dsmm_idx rb[8], cb[8];
    split(A->nrows, pr, rb);
    split(B->ncols, pc, cb);
    // Pieces.
    for (int i = 0; i < pr; i++)
        for (int s = 0; s < S; s++) {
            int64_t n = 0;
            for (dsmm_idx r = rb[i]; r < rb[i + 1]; r++)
                for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++)
                    n += stage_of(&m, dsmm_csr_col(A, e)) == s;
            CHECK_EQ_IDX(m.a_nnz[i * S + s], n);
            CHECK_EQ_IDX(m.a_bytes[i * S + s], piece_bytes(rb[i + 1] - rb[i], n, A->type));
        }
    for (int s = 0; s < S; s++)
        for (int j = 0; j < pc; j++) {
            int64_t n = 0;
            for (dsmm_idx r = m.plan.lo[s]; r < m.plan.hi[s]; r++)
                for (dsmm_idx e = B->rowptr[r]; e < B->rowptr[r + 1]; e++) {
                    dsmm_idx c = dsmm_csr_col(B, e);
                    n += cb[j] <= c && c < cb[j + 1];
                }
            CHECK_EQ_IDX(m.b_nnz[s * pc + j], n);
            CHECK_EQ_IDX(m.b_bytes[s * pc + j],
                         piece_bytes(m.plan.hi[s] - m.plan.lo[s], n, B->type));
        }
    // Items: dense boolean products of the pieces; C's tiles as their union.
    double total = 0;
    size_t cells = (size_t)(A->nrows ? A->nrows : 1) * (size_t)(B->ncols ? B->ncols : 1);
    unsigned char *part = calloc(cells, 1), *full = calloc(cells, 1);
    CHECK(part && full);
    for (int i = 0; i < pr; i++)
        for (int j = 0; j < pc; j++) {
            memset(full, 0, cells);
            for (int s = 0; s < S; s++) {
                memset(part, 0, cells);
                double f = 0;
                int64_t pn = 0;
                for (dsmm_idx r = rb[i]; r < rb[i + 1]; r++)
                    for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
                        dsmm_idx k = dsmm_csr_col(A, e);
                        if (k < m.plan.lo[s] || k >= m.plan.hi[s]) continue;
                        for (dsmm_idx q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
                            dsmm_idx c = dsmm_csr_col(B, q);
                            if (c < cb[j] || c >= cb[j + 1]) continue;
                            f++;
                            size_t x = (size_t)r * (size_t)B->ncols + (size_t)c;
                            pn += !part[x];
                            part[x] = full[x] = 1;
                        }
                    }
                size_t it = ((size_t)i * S + s) * pc + j;
                CHECK_MSG(m.flops[it] == f, "%s %dx%d item (%d,%d,%d): flops %g, want %g", what, pr,
                          pc, i, s, j, m.flops[it], f);
                CHECK_MSG(m.p_nnz[it] == pn, "%s %dx%d item (%d,%d,%d): p_nnz %lld, want %lld",
                          what, pr, pc, i, s, j, (long long)m.p_nnz[it], (long long)pn);
                CHECK_EQ_IDX(m.p_bytes[it], piece_bytes(rb[i + 1] - rb[i], pn, ct));
                total += f;
            }
            int64_t cn = 0;
            for (size_t x = 0; x < cells; x++) cn += full[x];
            CHECK_EQ_IDX(m.c_nnz[i * pc + j], cn);
        }
    free(part);
    free(full);
    CHECK_MSG(total == ref_flops(A, B), "%s: items' flops %g, A*B's %g", what, total,
              ref_flops(A, B));
    if (check_ranks(&m)) {
        fprintf(stderr, "%s on %dx%d\n", what, pr, pc);
        return TEST_FAIL;
    }
    dsmmi_model_free(ctx, &m);
    dsmmi_model_free(ctx, &m); // twice is harmless
    return TEST_PASS;
}

typedef struct shape {
    const char *name;
    dsmm_idx m, k, n;
    double density, empty_rows, empty_cols;
    dsmm_type ta, tb;
    int dense_row, bits;
} shape;

static const shape shapes[] = {
    {"square", 23, 23, 23, 0.15, 0, 0, DSMM_DOUBLE, DSMM_DOUBLE, 0, 64},
    {"rect", 17, 11, 29, 0.2, 0, 0, DSMM_DOUBLE, DSMM_FLOAT, 0, 32},
    {"tall-skinny", 40, 5, 3, 0.3, 0, 0, DSMM_FLOAT, DSMM_FLOAT, 0, 64},
    {"empty-rows", 30, 25, 20, 0.2, 0.4, 0.3, DSMM_PATTERN, DSMM_DOUBLE, 0, 64},
    {"dense-row", 19, 21, 19, 0.05, 0.2, 0, DSMM_DOUBLE, DSMM_PATTERN, 1, 32},
    {"all-empty", 12, 9, 14, 0.0, 0, 0, DSMM_DOUBLE, DSMM_DOUBLE, 0, 64},
    {"tiny", 2, 3, 2, 0.7, 0, 0, DSMM_FLOAT, DSMM_DOUBLE, 0, 64},
    {"dense", 13, 16, 12, 1.0, 0, 0, DSMM_DOUBLE, DSMM_DOUBLE, 0, 64},
};

static int make(dsmm_ctx *ctx, const shape *sh, int second, uint64_t seed, dsmm_csr **X)
{
    test_mat o;
    test_mat_init(&o, second ? sh->k : sh->m, second ? sh->n : sh->k, sh->density, seed);
    o.type = second ? sh->tb : sh->ta;
    o.empty_rows = sh->empty_rows;
    o.empty_cols = sh->empty_cols;
    o.dense_row = sh->dense_row && !second ? 1 : -1;
    o.col_bits = sh->bits;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, X));
    return TEST_PASS;
}

static int test_spgemm_items(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
        const shape *sh = &shapes[x];
        dsmm_csr *A = NULL, *B = NULL;
        if (make(ctx, sh, 0, seed + 2 * x, &A) || make(ctx, sh, 1, seed + 2 * x + 1, &B))
            return TEST_FAIL;
        for (int g = 0; g < NGRIDS; g++)
            if (check_spgemm(ctx, A, B, grids[g][0], grids[g][1], -1, sh->name)) return TEST_FAIL;
        // C's type from the options changes only the partial products' bytes.
        if (check_spgemm(ctx, A, B, 2, 3, DSMM_FLOAT, sh->name)) return TEST_FAIL;
        if (check_spgemm(ctx, A, B, 3, 2, DSMM_PATTERN, sh->name)) return TEST_FAIL;
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A grid larger than the matrix (empty blocks, stages of one index), and A * A of a skewed
// graph, where hubs make some pieces and partials large.
static int test_spgemm_skewed_and_small(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_csr *A = NULL, *G = NULL;
    test_mat o;
    test_mat_init(&o, 3, 2, 0.8, seed);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    dsmm_csr *B = NULL;
    test_mat_init(&o, 2, 3, 0.8, seed + 1);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    if (check_spgemm(ctx, A, B, 4, 4, -1, "smaller than the grid")) return TEST_FAIL;
    if (check_spgemm(ctx, A, B, 1, 7, -1, "smaller than the grid")) return TEST_FAIL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 6, 6, 0, DSMM_PATTERN, seed + 2, &G));
    for (int g = 0; g < NGRIDS; g++)
        if (check_spgemm(ctx, G, G, grids[g][0], grids[g][1], -1, "rmat")) return TEST_FAIL;
    if (check_spgemm(ctx, G, G, 5, 3, -1, "rmat")) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&G);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Identities on a matrix whose pieces are all non-empty: RDMA-C moves exactly SUMMA's
// pieces; on 1x1 nothing moves and everything is one item per stage.
static int test_identities(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_csr *A = NULL;
    test_mat o;
    test_mat_init(&o, 24, 24, 1.0, seed);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    dsmmi_model m;
    for (int g = 0; g < NGRIDS; g++) {
        CHECK_OK(ctx, dsmmi_model_spgemm(ctx, A, A, grids[g][0], grids[g][1], NULL, &m));
        for (int r = 0; r < m.P; r++) {
            CHECK_EQ_IDX(m.rank_in[DSMMI_MODEL_RDMA_C][r], m.rank_in[DSMMI_MODEL_SUMMA][r]);
            CHECK(m.rank_flops[DSMMI_MODEL_RDMA_C][r] == m.rank_flops[DSMMI_MODEL_SUMMA][r]);
        }
        if (m.P == 1) {
            for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
                CHECK_EQ_IDX(m.rank_in[a][0], 0);
                CHECK_EQ_IDX(m.rank_out[a][0], 0);
                CHECK_EQ_IDX(m.rank_gets[a][0], 0);
            }
            CHECK_EQ_IDX(m.S, 1);
        }
        // Dense 24 x 24: every partial is full, C's tiles too.
        for (int x = 0; x < m.P; x++) {
            int i = x / m.pc, j = x % m.pc;
            dsmm_idx rb[8], cb[8];
            split(24, m.pr, rb);
            split(24, m.pc, cb);
            CHECK_EQ_IDX(m.c_nnz[x], (rb[i + 1] - rb[i]) * (cb[j + 1] - cb[j]));
        }
        dsmmi_model_free(ctx, &m);
    }
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Unsorted rows (and 32-bit columns) give the model of the sorted matrix.
static int test_unsorted(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    dsmm_csr *A = NULL, *As = NULL, *B = NULL, *Bs = NULL;
    test_mat o;
    test_mat_init(&o, 31, 27, 0.2, seed);
    o.col_bits = 32;
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    test_mat_init(&o, 27, 22, 0.2, seed + 1);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    CHECK_OK(ctx, test_csr_shuffle(ctx, A, 0, seed + 2, &As));
    CHECK_OK(ctx, test_csr_shuffle(ctx, B, 0, seed + 3, &Bs));
    CHECK(!As->sorted && !Bs->sorted);
    dsmmi_model m1, m2;
    CHECK_OK(ctx, dsmmi_model_spgemm(ctx, A, B, 2, 3, NULL, &m1));
    CHECK_OK(ctx, dsmmi_model_spgemm(ctx, As, Bs, 2, 3, NULL, &m2));
    size_t ni = (size_t)m1.pr * m1.S * m1.pc;
    for (size_t it = 0; it < ni; it++) {
        CHECK(m1.flops[it] == m2.flops[it]);
        CHECK_EQ_IDX(m1.p_nnz[it], m2.p_nnz[it]);
    }
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++)
        for (int r = 0; r < m1.P; r++) CHECK_EQ_IDX(m1.rank_in[a][r], m2.rank_in[a][r]);
    dsmmi_model_free(ctx, &m1);
    dsmmi_model_free(ctx, &m2);
    if (check_spgemm(ctx, A, B, 3, 2, -1, "32-bit columns")) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&As);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&Bs);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// SpMM: dense B of k columns; flops 2 * nnz(A(i,s)) * cols_j as dsmmi_local_spmm counts them.
static int check_spmm(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type bt, int pr, int pc)
{
    dsmmi_model m;
    CHECK_OK(ctx, dsmmi_model_spmm(ctx, A, k, bt, pr, pc, &m));
    CHECK(m.spmm == 1 && m.ctype == bt);
    if (check_plan(&m, A->ncols)) return TEST_FAIL;
    int S = m.S;
    int64_t w = bt == DSMM_DOUBLE ? 8 : 4;
    dsmm_idx rb[8], cb[8];
    split(A->nrows, pr, rb);
    split(k, pc, cb);
    double total = 0;
    for (int i = 0; i < pr; i++)
        for (int s = 0; s < S; s++) {
            int64_t an = 0;
            for (dsmm_idx r = rb[i]; r < rb[i + 1]; r++)
                for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++)
                    an += stage_of(&m, dsmm_csr_col(A, e)) == s;
            CHECK_EQ_IDX(m.a_nnz[i * S + s], an);
            CHECK_EQ_IDX(m.a_bytes[i * S + s], piece_bytes(rb[i + 1] - rb[i], an, A->type));
            for (int j = 0; j < pc; j++) {
                dsmm_idx cols = cb[j + 1] - cb[j], rows = rb[i + 1] - rb[i];
                dsmm_idx h = m.plan.hi[s] - m.plan.lo[s];
                CHECK_EQ_IDX(m.b_nnz[s * pc + j], h * cols);
                CHECK_EQ_IDX(m.b_bytes[s * pc + j], h * cols * w);
                size_t it = ((size_t)i * S + s) * pc + j;
                int live = an > 0 && cols > 0;
                CHECK(m.flops[it] == (live ? 2.0 * (double)an * (double)cols : 0.0));
                CHECK_EQ_IDX(m.p_nnz[it], live ? rows * cols : 0);
                CHECK_EQ_IDX(m.p_bytes[it], live ? rows * cols * w : 0);
                total += m.flops[it];
                if (s == 0) CHECK_EQ_IDX(m.c_nnz[i * pc + j], rows * cols);
            }
        }
    CHECK(total == 2.0 * (double)A->nnz * (double)k);
    if (check_ranks(&m)) return TEST_FAIL;
    dsmmi_model_free(ctx, &m);
    return TEST_PASS;
}

static int test_spmm(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    for (size_t x = 0; x < sizeof shapes / sizeof shapes[0]; x++) {
        dsmm_csr *A = NULL;
        if (make(ctx, &shapes[x], 0, seed + x, &A)) return TEST_FAIL;
        for (int g = 0; g < NGRIDS; g++) {
            if (check_spmm(ctx, A, 5, DSMM_DOUBLE, grids[g][0], grids[g][1])) return TEST_FAIL;
            if (check_spmm(ctx, A, 2, DSMM_FLOAT, grids[g][0], grids[g][1])) return TEST_FAIL;
        }
        dsmm_csr_destroy(&A);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_imbalance_helpers(void)
{
    const double v[] = {1, 2, 3, 2};
    CHECK_NEAR(dsmmi_model_imbalance(v, 4), 1.5, 1e-15);
    const double z[] = {0, 0, 0};
    CHECK(dsmmi_model_imbalance(z, 3) == 1.0);
    CHECK(dsmmi_model_imbalance(v, 1) == 1.0);
    // P = 2 ranks x S = 3 stages, [r * S + s]: stage 1 has no flops and is skipped.
    const double sf[] = {4, 0, 1, 0, 0, 3};
    double out[3];
    CHECK_EQ_IDX(dsmmi_model_stage_imbalance(sf, 2, 3, out), 0);
    CHECK_NEAR(out[0], 2.0, 1e-15);
    CHECK(out[1] == 0);
    CHECK_NEAR(out[2], 1.5, 1e-15);
    CHECK_NEAR(dsmmi_model_sync_imbalance(sf, 2, 3), 7.0 / 4.0, 1e-15);
    const double tot[] = {5, 3};
    CHECK_NEAR(dsmmi_model_imbalance(tot, 2), 1.25, 1e-15);
    // The synchronised imbalance is never below the end-to-end one.
    CHECK(dsmmi_model_sync_imbalance(sf, 2, 3) >= dsmmi_model_imbalance(tot, 2));
    CHECK_EQ_IDX(dsmmi_model_stage_imbalance(z, 3, 1, out), -1);
    CHECK(out[0] == 0);
    CHECK(dsmmi_model_sync_imbalance(z, 3, 1) == 1.0);
    // Perfect balance in every stage.
    const double even[] = {2, 5, 2, 5, 2, 5};
    CHECK_NEAR(dsmmi_model_sync_imbalance(even, 3, 2), 1.0, 1e-15);
    CHECK(strcmp(dsmmi_model_alg_name(DSMMI_MODEL_RDMA_A), "rdma-a") == 0);
    CHECK(strcmp(dsmmi_model_alg_name(DSMMI_MODEL_COUNT), "?") == 0);
    return TEST_PASS;
}

// Roofline numbers computed by hand.
static int test_roofline(void)
{
    dsmm_ctx *ctx = test_ctx();
    // A = 2 x 2 diagonal (double), B dense 2 x 3, 1 x 1: flops 2 * 2 * 3 = 12; A piece
    // 3 * 8 + 2 * 12 = 48 bytes, B 2 * 3 * 8 = 48, C 48: local AI 12 / 144.
    dsmm_idx rp[] = {0, 1, 2}, ci[] = {0, 1};
    double val[] = {1, 1};
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 2, 2, rp, ci, val, DSMM_DOUBLE, &A));
    dsmmi_model m;
    dsmmi_model_roof R;
    dsmmi_model_machine mc = {1e9, 1e9, 1e9};
    CHECK_OK(ctx, dsmmi_model_spmm(ctx, A, 3, DSMM_DOUBLE, 1, 1, &m));
    CHECK_OK(ctx, dsmmi_model_roofline(ctx, &m, &mc, &R));
    CHECK(R.flops == 12);
    CHECK_NEAR(R.local_ai, 12.0 / 144, 1e-15);
    CHECK_NEAR(R.local_roof, 12.0 / 144 * 1e9, 1e-3);
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        CHECK(R.bytes[a] == 0 && isinf(R.inter_ai[a]));
        CHECK(R.attainable[a] == R.local_roof);
        CHECK_NEAR(R.time[a], 12 / R.local_roof, 1e-18);
    }
    dsmmi_model_free(ctx, &m);
    // 2 x 1 grid: row block 0 = row 0, stage 0 = inner [0, 1) (row block 0 of B), stage 1 =
    // [1, 2). SUMMA: B(0,0) (48 / 2 = 24 bytes) goes to rank 1, B(1,0) to rank 0; rank 0 has
    // flops 6 in stage 0 only, rank 1 in stage 1 only. bw = 1e9, roof huge (peak, membw big).
    mc.peak = mc.membw = 1e15;
    CHECK_OK(ctx, dsmmi_model_spmm(ctx, A, 3, DSMM_DOUBLE, 2, 1, &m));
    CHECK_OK(ctx, dsmmi_model_roofline(ctx, &m, &mc, &R));
    CHECK_EQ_IDX(m.S, 2);
    CHECK(R.bytes[DSMMI_MODEL_SUMMA] == 48);
    // stage 0: rank 1 receives 24 bytes (24 ns), rank 0 computes; stage 1 the other way.
    CHECK_NEAR(R.time[DSMMI_MODEL_SUMMA], 2 * 24e-9, 1e-15);
    // RDMA-C: items (0,0,0) and (1,1,0) are live (the others have empty A pieces); both local.
    CHECK(R.bytes[DSMMI_MODEL_RDMA_C] == 0);
    CHECK_NEAR(R.time[DSMMI_MODEL_RDMA_C], 6 / R.local_roof, 1e-18);
    CHECK(R.local_roof == 1e15 || R.local_roof == R.local_ai * 1e15);
    dsmmi_model_free(ctx, &m);
    // SpGEMM: local AI = cf / ((3 + 2 cf) b), b = 8 + 4 for double C.
    CHECK_OK(ctx, dsmmi_model_spgemm(ctx, A, A, 1, 1, NULL, &m));
    mc.membw = 1e9;
    CHECK_OK(ctx, dsmmi_model_roofline(ctx, &m, &mc, &R));
    CHECK(R.cf == 1.0);
    CHECK_NEAR(R.local_ai, 1.0 / (5.0 * 12.0), 1e-15);
    CHECK_NEAR(R.local_roof, 1e9 / 60.0, 1e-3);
    mc.bw = 0;
    CHECK_ST(ctx, dsmmi_model_roofline(ctx, &m, &mc, &R), DSMM_ERR_ARG);
    mc.bw = NAN;
    CHECK_ST(ctx, dsmmi_model_roofline(ctx, &m, &mc, &R), DSMM_ERR_ARG);
    dsmmi_model_free(ctx, &m);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    test_mat o;
    test_mat_init(&o, 4, 4, 0.5, 1);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    test_mat_init(&o, 5, 4, 0.5, 2);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &B));
    dsmmi_model m;
    CHECK_ST(ctx, dsmmi_model_spgemm(ctx, A, B, 2, 2, NULL, &m), DSMM_ERR_DIM);
    CHECK(m.flops == NULL && m.rank_in[0] == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmmi_model_spgemm(ctx, A, A, 0, 2, NULL, &m), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmmi_model_spmm(ctx, A, 3, DSMM_PATTERN, 2, 2, &m), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmmi_model_spmm(ctx, A, -1, DSMM_DOUBLE, 2, 2, &m), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    // Too many items: 1 x 20000 over 20000 inner indices = 20000 stages x 20000 columns.
    dsmm_csr *E = NULL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 1, 20000, 0, DSMM_DOUBLE, &E));
    CHECK_ST(ctx, dsmmi_model_spmm(ctx, E, 10, DSMM_DOUBLE, 1, 20000, &m), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "work items");
    dsmm_ctx_clear_error(ctx);
    dsmm_spgemm_opts so;
    dsmm_spgemm_opts_init(&so);
    so.type = 7;
    CHECK_ST(ctx, dsmmi_model_spgemm(ctx, A, A, 1, 1, &so, &m), DSMM_ERR_ARG);
    dsmm_csr_destroy(&E);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Out of memory at every allocation: DSMM_ERR_NOMEM, nothing leaked, m left empty.
static int test_oom(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *As = NULL;
    test_mat o;
    test_mat_init(&o, 20, 20, 0.2, 3);
    CHECK_OK(ctx, test_rand_csr(ctx, &o, &A));
    CHECK_OK(ctx, test_csr_shuffle(ctx, A, 0, 4, &As));
    for (int op = 0; op < 2; op++) {
        for (long k = 0;; k++) {
            dsmmi_model m;
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = op == 0 ? dsmmi_model_spgemm(ctx, As, As, 2, 3, NULL, &m)
                                     : dsmmi_model_spmm(ctx, As, 4, DSMM_DOUBLE, 3, 2, &m);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            dsmm_ctx_clear_error(ctx);
            if (st == DSMM_OK) {
                dsmmi_model_free(ctx, &m);
                break;
            }
            CHECK_MSG(st == DSMM_ERR_NOMEM, "op %d alloc %ld: %s", op, k, dsmm_status_name(st));
            CHECK(m.flops == NULL && m.stage_flops == NULL && m.plan.lo == NULL);
            CHECK(k < 1000);
        }
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&As);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_spgemm_items), TEST(test_spgemm_skewed_and_small),
        TEST(test_identities),   TEST(test_unsorted),
        TEST(test_spmm),         TEST(test_imbalance_helpers),
        TEST(test_roofline),     TEST(test_errors),
        TEST(test_oom),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
