// tests/dist/test_rdma.c: the one-sided distributed products (RDMA paper §3): every algorithm
// (rdma-c, rdma-a, rdma-b, ws-random-a, ws-local-a, ws-local-c) for SpGEMM and SpMM against
// the serial product on every grid shape of P, prefetch off and on, with queues of 1, 2 and 64
// slots; every live work item executed exactly once (an item trace); work stealing under an
// injected delay (items stolen, the spread of finish times shrinks); the bytes each rank
// fetches equal to the model's prediction (src/dist/model.c) exactly; the remote queue and
// replace/renew of RDMA matrices on their own. An alarm turns a hang into a failure.
#include <unistd.h>

#include "dist/model.h"
#include "dist/rdma.h"
#include "dist_products.h"

static const dsmm_dist_alg rdma_algs[] = {DSMM_DIST_RDMA_C,     DSMM_DIST_RDMA_A,
                                          DSMM_DIST_RDMA_B,     DSMM_DIST_WS_RANDOM_A,
                                          DSMM_DIST_WS_LOCAL_A, DSMM_DIST_WS_LOCAL_C};
#define NALGS ((int)(sizeof rdma_algs / sizeof rdma_algs[0]))
static const int qcaps[] = {1, 2, 64};

/* ------------------------------------------------------------------------------------------ */
/* Results against the serial product                                                         */
/* ------------------------------------------------------------------------------------------ */

static int test_spgemm_random(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    pair p[16];
    dsmm_status st;
    int np = make_pairs(ctx, p, &st);
    CHECK_ALL_OK(ctx, st);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    int k = 0;
    for (int i = 0; i < np; i++)
        for (int s = 0; s < ns; s++)
            for (int a = 0; a < NALGS; a++, k++)
                if (spgemm_vs_serial(ctx, p[i].A, p[i].B, pr[s], pc[s], k % 2, DSMM_PLUS_TIMES,
                                     1e-12, p[i].name, rdma_algs[a], qcaps[k % 3]))
                    return TEST_FAIL;
    free_pairs(p, np);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spgemm_semirings_data(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL, *Af = NULL, *H = NULL, *C = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 40, 3, 0, DSMM_DOUBLE, task_seed(70), &A));
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 40, 3, 0, DSMM_DOUBLE, task_seed(71), &B));
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 30, 4, 0, DSMM_FLOAT, task_seed(72), &Af));
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &H));   // double, 751 empty rows
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &C)); // pattern
    int k = 0;
    for (int s = 0; s < ns; s++)
        for (int a = 0; a < NALGS; a++, k++) {
            dsmm_dist_alg alg = rdma_algs[a];
            int pf = k % 2, q = qcaps[k % 3];
            if (spgemm_vs_serial(ctx, A, B, pr[s], pc[s], pf, DSMM_MIN_PLUS, 0.0, "min-plus", alg,
                                 q) ||
                spgemm_vs_serial(ctx, A, B, pr[s], pc[s], pf, DSMM_MAX_TIMES, 0.0, "max-times", alg,
                                 q) ||
                spgemm_vs_serial(ctx, Af, Af, pr[s], pc[s], pf, DSMM_PLUS_TIMES, 1e-5, "float", alg,
                                 q) ||
                spgemm_vs_serial(ctx, H, H, pr[s], pc[s], pf, DSMM_PLUS_TIMES, 1e-12, "hep-th", alg,
                                 q) ||
                spgemm_vs_serial(ctx, C, C, pr[s], pc[s], pf, DSMM_PLUS_PAIR, 0.0, "cora", alg, q))
                return TEST_FAIL;
        }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&Af);
    dsmm_csr_destroy(&H);
    dsmm_csr_destroy(&C);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_spmm(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *E = NULL, *R = NULL, *S = NULL, *Z = NULL, *Cora = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 120, 4, 0, DSMM_DOUBLE, task_seed(80), &E));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 45, 31, 0.1, 0.2, 0.2, DSMM_DOUBLE, task_seed(81), &R));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 2, 3, 0.8, 0, 0, DSMM_DOUBLE, task_seed(82), &S));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 20, 20, 0.0, 0, 0, DSMM_DOUBLE, task_seed(83), &Z));
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &Cora));
    struct {
        const dsmm_csr *A;
        const char *name;
        dsmm_idx k;
        dsmm_type type;
    } cases[] = {
        {E, "er 120", 1, DSMM_DOUBLE},   {E, "er 120", 33, DSMM_FLOAT},
        {R, "45x31", 7, DSMM_DOUBLE},    {S, "2x3", 5, DSMM_FLOAT},
        {Z, "all-zero", 7, DSMM_DOUBLE}, {Cora, "cora pattern", 16, DSMM_DOUBLE},
    };
    int k = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int s = 0; s < ns; s++)
            for (int a = 0; a < NALGS; a++, k++)
                if (spmm_vs_serial(ctx, cases[c].A, cases[c].k, cases[c].type, pr[s], pc[s], k % 2,
                                   cases[c].name, rdma_algs[a], qcaps[k % 3]))
                    return TEST_FAIL;
    dsmm_csr_destroy(&E);
    dsmm_csr_destroy(&R);
    dsmm_csr_destroy(&S);
    dsmm_csr_destroy(&Z);
    dsmm_csr_destroy(&Cora);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Work items: each live one executed exactly once                                            */
/* ------------------------------------------------------------------------------------------ */

/* The model of the same product (every rank builds it from the global inputs). */
static dsmm_status model_of(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, dsmm_idx k, int pr,
                            int pc, dsmmi_model *m)
{
    if (B) {
        dsmm_spgemm_opts so;
        dsmm_spgemm_opts_init(&so);
        return dsmmi_model_spgemm(ctx, A, B, pr, pc, &so, m);
    }
    return dsmmi_model_spmm(ctx, A, k, DSMM_DOUBLE, pr, pc, m);
}

/* run_traced: one product with alg on pr x pc, the item trace summed over ranks in trace. */
static int run_traced(dsmm_ctx *ctx, dsmm_dist *DA, dsmm_dist *DB, dsmm_dist_dense *DBd,
                      dsmm_dist_alg alg, int prefetch, int64_t *trace, int64_t n, dsmm_stats *stats)
{
    memset(trace, 0, (size_t)n * sizeof *trace);
    dsmmi_rdma_set_trace(ctx, trace, n);
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.alg = alg;
    o.prefetch = prefetch;
    o.queue_capacity = 2;
    o.stats = stats;
    dsmm_dist *DC = NULL;
    dsmm_dist_dense *DCd = NULL;
    if (DB)
        CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
    else
        CHECK_ALL_OK(ctx, dsmm_spmm_ex(ctx, DA, DBd, &o, &DCd));
    dsmmi_rdma_set_trace(ctx, NULL, 0);
    dsmm_dist_destroy(&DC);
    dsmm_dist_dense_destroy(&DCd);
    MPI_Allreduce(MPI_IN_PLACE, trace, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return TEST_PASS;
}

static int test_items_once(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL;
    dsmm_dense *Bg = NULL;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 70, 61, 0.05, 0.2, 0.2, DSMM_DOUBLE, task_seed(90), &A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 61, 50, 0.05, 0.2, 0.1, DSMM_DOUBLE, task_seed(91), &B));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 61, 9, DSMM_DOUBLE, task_seed(92), &Bg));
    dsmm_stats *stats = NULL;
    CHECK_ALL_OK(ctx, dsmm_stats_create(ctx, "spgemm", &stats));
    for (int s = 0; s < ns; s++)
        for (int sp = 0; sp < 2; sp++) {
            dsmmi_model m;
            memset(&m, 0, sizeof m);
            CHECK_ALL_OK(ctx, model_of(ctx, A, sp ? NULL : B, 9, pr[s], pc[s], &m));
            int64_t n = (int64_t)m.pr * m.S * m.pc, nlive = 0;
            int64_t *trace = calloc((size_t)n + 1, sizeof *trace);
            CHECK_ALL(trace != NULL);
            dsmm_dist *DA = NULL, *DB = NULL;
            dsmm_dist_dense *DBd = NULL;
            CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr[s], pc[s], &DA));
            if (sp)
                CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, Bg, pr[s], pc[s], &DBd));
            else
                CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, pr[s], pc[s], &DB));
            for (int a = 0; a < NALGS; a++)
                for (int pf = 0; pf < 2; pf++) {
                    if (run_traced(ctx, DA, DB, DBd, rdma_algs[a], pf, trace, n, stats))
                        return TEST_FAIL;
                    nlive = 0;
                    for (int64_t it = 0; it < n; it++) {
                        int i = (int)(it / ((int64_t)m.S * m.pc)), st_ = (int)((it / m.pc) % m.S),
                            j = (int)(it % m.pc);
                        int lv = m.a_nnz[i * m.S + st_] > 0 && m.b_nnz[st_ * m.pc + j] > 0;
                        nlive += lv;
                        CHECK_ALL_MSG(trace[it] == lv,
                                      "%s on %dx%d (%s, prefetch %d): item (%d,%d,%d) ran %lld "
                                      "times, live %d",
                                      dsmm_dist_alg_name(rdma_algs[a]), pr[s], pc[s],
                                      sp ? "spmm" : "spgemm", pf, i, st_, j, (long long)trace[it],
                                      lv);
                    }
                    // The statistics count the same items.
                    char *json = NULL;
                    CHECK_ALL_OK(ctx, dsmm_stats_json(stats, &json));
                    const char *r = json ? strstr(json, "\"rdma\":") : NULL;
                    double items = r ? strtod(strstr(r, "\"items\":") + 8, NULL) : -1;
                    json = dsmm_free(ctx, json);
                    CHECK_ALL_MSG(items == (double)nlive, "stats items %g, live %lld", items,
                                  (long long)nlive);
                }
            free(trace);
            dsmm_dist_destroy(&DA);
            dsmm_dist_destroy(&DB);
            dsmm_dist_dense_destroy(&DBd);
            dsmmi_model_free(ctx, &m);
        }
    dsmm_stats_destroy(&stats);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_dense_destroy(&Bg);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Work stealing under an overloaded rank                                                     */
/* ------------------------------------------------------------------------------------------ */

/* json_at: the number after "key": inside the object named obj (NaN when absent). */
static double json_at(const char *json, const char *obj, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", obj);
    const char *p = json ? strstr(json, pat) : NULL;
    if (p == NULL) return NAN;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(p, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* delayed: the finish-time spread and the stolen items of alg with rank 0 slowed down. */
static int delayed(dsmm_ctx *ctx, dsmm_dist *DA, dsmm_dist *DB, dsmm_dist_alg alg, double *spread,
                   double *stolen)
{
    dsmm_stats *stats = NULL;
    CHECK_ALL_OK(ctx, dsmm_stats_create(ctx, "spgemm", &stats));
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.alg = alg;
    o.stats = stats;
    dsmmi_rdma_set_test_delay(ctx, 0, 0.05);
    dsmm_dist *DC = NULL;
    CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
    dsmmi_rdma_set_test_delay(ctx, 0, 0.0);
    char *json = NULL;
    CHECK_ALL_OK(ctx, dsmm_stats_json(stats, &json));
    *spread = json_at(json, "rdma", "done_spread");
    *stolen = json_at(json, "rdma", "stolen");
    json = dsmm_free(ctx, json);
    dsmm_dist_destroy(&DC);
    dsmm_stats_destroy(&stats);
    return TEST_PASS;
}

static int test_stealing_delay(void)
{
    if (g_size < 2) return TEST_PASS; // nobody to steal from with one rank
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 200, 6, 0, DSMM_DOUBLE, task_seed(100), &A));
    dsmm_dist *DA = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &DA));
    // Each stealing variant against the same algorithm without stealing.
    static const dsmm_dist_alg pairs[][2] = {{DSMM_DIST_RDMA_A, DSMM_DIST_WS_RANDOM_A},
                                             {DSMM_DIST_RDMA_A, DSMM_DIST_WS_LOCAL_A},
                                             {DSMM_DIST_RDMA_C, DSMM_DIST_WS_LOCAL_C}};
    for (int k = 0; k < 3; k++) {
        double sp0 = 0, st0 = 0, sp1 = 0, st1 = 0;
        if (delayed(ctx, DA, DA, pairs[k][0], &sp0, &st0) ||
            delayed(ctx, DA, DA, pairs[k][1], &sp1, &st1))
            return TEST_FAIL;
        if (g_rank == 0)
            printf("  %s: spread %.3f s, %s: spread %.3f s, %g stolen\n",
                   dsmm_dist_alg_name(pairs[k][0]), sp0, dsmm_dist_alg_name(pairs[k][1]), sp1, st1);
        CHECK_ALL_MSG(st0 == 0 && st1 > 0, "%s stole %g items, %s %g",
                      dsmm_dist_alg_name(pairs[k][0]), st0, dsmm_dist_alg_name(pairs[k][1]), st1);
        CHECK_ALL_MSG(sp1 < sp0, "finish-time spread %.4f s with %s, %.4f s with %s", sp1,
                      dsmm_dist_alg_name(pairs[k][1]), sp0, dsmm_dist_alg_name(pairs[k][0]));
    }
    dsmm_dist_destroy(&DA);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Bytes moved: measured against the model                                                    */
/* ------------------------------------------------------------------------------------------ */

static int counted(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, const dsmm_dense *Bg,
                   int pr, int pc, const char *name)
{
    dsmmi_model m;
    memset(&m, 0, sizeof m);
    CHECK_ALL_OK(ctx, model_of(ctx, A, B, Bg ? Bg->ncols : 0, pr, pc, &m));
    dsmm_dist *DA = NULL, *DB = NULL;
    dsmm_dist_dense *DBd = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, pr, pc, &DA));
    if (B)
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, pr, pc, &DB));
    else
        CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, Bg, pr, pc, &DBd));
    static const struct {
        dsmm_dist_alg alg;
        dsmmi_model_alg malg;
    } algs[] = {{DSMM_DIST_SUMMA, DSMMI_MODEL_SUMMA},
                {DSMM_DIST_RDMA_C, DSMMI_MODEL_RDMA_C},
                {DSMM_DIST_RDMA_A, DSMMI_MODEL_RDMA_A},
                {DSMM_DIST_RDMA_B, DSMMI_MODEL_RDMA_B}};
    for (int a = 0; a < 4; a++)
        for (int pf = 0; pf < 2; pf++) {
            dsmm_dist_opts o;
            dsmm_dist_opts_init(&o);
            o.alg = algs[a].alg;
            o.prefetch = pf;
            o.accumulate = DSMM_ACC_MERGE;
            dsmm_traffic t0, t1;
            dsmm_ctx_traffic(ctx, &t0);
            dsmm_dist *DC = NULL;
            dsmm_dist_dense *DCd = NULL;
            if (B)
                CHECK_ALL_OK(ctx, dsmm_spgemm_ex(ctx, DA, DB, &o, &DC));
            else
                CHECK_ALL_OK(ctx, dsmm_spmm_ex(ctx, DA, DBd, &o, &DCd));
            dsmm_ctx_traffic(ctx, &t1);
            dsmm_dist_destroy(&DC);
            dsmm_dist_dense_destroy(&DCd);
            int summa = algs[a].alg == DSMM_DIST_SUMMA;
            int64_t in =
                summa
                    ? (t1.bytes_recv[0] + t1.bytes_recv[1]) - (t0.bytes_recv[0] + t0.bytes_recv[1])
                    : (t1.rma_bytes[0] + t1.rma_bytes[1]) - (t0.rma_bytes[0] + t0.rma_bytes[1]);
            int64_t calls =
                (t1.rma_calls[0] + t1.rma_calls[1]) - (t0.rma_calls[0] + t0.rma_calls[1]);
            int64_t want = m.rank_in[algs[a].malg][g_rank];
            int64_t wcalls = m.rank_gets[algs[a].malg][g_rank];
            CHECK_ALL_MSG(in == want && calls == wcalls,
                          "%s on %dx%d, %s, prefetch %d: rank %d fetched %lld bytes in %lld gets, "
                          "the model says %lld in %lld",
                          name, pr, pc, dsmm_dist_alg_name(algs[a].alg), pf, g_rank, (long long)in,
                          (long long)calls, (long long)want, (long long)wcalls);
            if (summa) {
                int64_t out =
                    (t1.bytes_sent[0] + t1.bytes_sent[1]) - (t0.bytes_sent[0] + t0.bytes_sent[1]);
                CHECK_ALL_EQ(out, m.rank_out[DSMMI_MODEL_SUMMA][g_rank]);
            }
        }
    dsmmi_model_free(ctx, &m);
    dsmm_dist_destroy(&DA);
    dsmm_dist_destroy(&DB);
    dsmm_dist_dense_destroy(&DBd);
    return TEST_PASS;
}

static int test_bytes_match_model(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int pr[MAX_SHAPES], pc[MAX_SHAPES], ns = grid_shapes(g_size, pr, pc);
    dsmm_csr *A = NULL, *B = NULL, *H = NULL;
    dsmm_dense *Bg = NULL;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 57, 44, 0.08, 0.2, 0.2, DSMM_DOUBLE, task_seed(110), &A));
    CHECK_ALL_OK(ctx, rand_mat(ctx, 44, 39, 0.08, 0.2, 0.1, DSMM_DOUBLE, task_seed(111), &B));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 44, 11, DSMM_DOUBLE, task_seed(112), &Bg));
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &H));
    for (int s = 0; s < ns; s++) {
        if (counted(ctx, A, B, NULL, pr[s], pc[s], "57x44 * 44x39") ||
            counted(ctx, A, NULL, Bg, pr[s], pc[s], "57x44 * dense 44x11") ||
            counted(ctx, H, H, NULL, pr[s], pc[s], "hep-th A*A"))
            return TEST_FAIL;
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_csr_destroy(&H);
    dsmm_dense_destroy(&Bg);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* The building blocks on their own                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef struct qstate {
    dsmmi_rqueue q;
    int64_t *seen; // [producer * K + k]
    int K, got;
} qstate;

static dsmm_status drain(dsmm_ctx *ctx, void *arg)
{
    qstate *s = arg;
    int got = 1;
    while (got) {
        dsmmi_qdesc d;
        dsmm_status st = dsmmi_rqueue_pop(ctx, &s->q, &d, &got);
        if (st != DSMM_OK) return st;
        if (got) {
            // Producers encode (rank, k) in the descriptor; bytes carries a check value.
            if (d.rank >= 0 && d.rank < g_size && d.item >= 0 && d.item < s->K &&
                d.bytes == d.rank * 1000 + d.item + g_rank)
                s->seen[d.rank * s->K + d.item]++;
            else
                s->seen[0] += 1000; // garbage: fails the count below
            s->got++;
        }
    }
    return DSMM_OK;
}

/* Every rank pushes K descriptors to every other rank through queues of 1 and 2 slots, serving
 * its own queue while the target's is full; each descriptor arrives exactly once, intact. */
static int test_queue(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    for (int cap = 1; cap <= 2; cap++) {
        qstate s;
        memset(&s, 0, sizeof s);
        s.K = 25;
        s.seen = calloc((size_t)g_size * (size_t)s.K, sizeof *s.seen);
        CHECK_ALL(s.seen != NULL);
        CHECK_ALL_OK(ctx, dsmmi_rqueue_create(ctx, cap, &s.q));
        dsmm_status st = DSMM_OK;
        for (int k = 0; k < s.K && st == DSMM_OK; k++)
            for (int off = 1; off < g_size && st == DSMM_OK; off++) {
                int t = (g_rank + off) % g_size;
                dsmmi_qdesc d = {g_rank, 0, 0, g_rank * 1000 + k + t, k};
                st = dsmmi_rqueue_push(ctx, &s.q, t, &d, drain, &s);
            }
        while (st == DSMM_OK && s.got < (g_size - 1) * s.K) st = drain(ctx, &s);
        CHECK_ALL_OK(ctx, st);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < g_size; r++)
            for (int k = 0; k < s.K; k++) CHECK_ALL_EQ(s.seen[r * s.K + k], r == g_rank ? 0 : 1);
        CHECK_ALL_EQ(s.q.pops, (g_size - 1) * s.K);
        CHECK_ALL_EQ(s.q.pushes, (g_size - 1) * s.K);
        CHECK_ALL_OK(ctx, dsmmi_rqueue_free(ctx, &s.q));
        free(s.seen);
    }
    dsmmi_rqueue q;
    CHECK_ALL_ST(ctx, dsmmi_rqueue_create(ctx, 0, &q), DSMM_ERR_ARG);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* Windows: every rank's memory starts DSMMI_WIN_ALIGN-aligned whatever the sizes (each rank
 * its own, some 0), and a caller's displacement reaches the same byte on every target: each
 * rank fills its window with a pattern of its rank and the byte's index, then reads bytes of
 * the next rank at the start, in the middle and at the end, puts one byte there, adds to an
 * int64 by fetch-and-add and reads both back. A workgroup's shared segments start aligned too. */
static int test_window_align(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    static const size_t sizes[] = {0, 1, 13, 64, 100, 4099};
    enum { NS = (int)(sizeof sizes / sizeof sizes[0]) };
    for (int v = 0; v < NS; v++) {
        // Rank r gets sizes[(v + r) % NS], at least 24 bytes where a neighbour reads it.
        size_t mine = sizes[(v + g_rank) % NS], theirs = sizes[(v + (g_rank + 1) % g_size) % NS];
        mine = mine < 24 ? 24 : mine;
        theirs = theirs < 24 ? 24 : theirs;
        void *base = NULL;
        dsmmi_win *w = NULL;
        CHECK_ALL_OK(ctx, dsmmi_win_allocate(ctx, mine, &base, &w));
        CHECK_ALL_MSG(base != NULL && (uintptr_t)base % DSMMI_WIN_ALIGN == 0,
                      "rank %d: window of %zu bytes at %p", g_rank, mine, base);
        unsigned char *b = base;
        for (size_t i = 8; i < mine; i++) b[i] = (unsigned char)(g_rank * 31 + i);
        memset(b, 0, 8); // the int64 for the fetch-and-add
        MPI_Barrier(MPI_COMM_WORLD);
        int t = (g_rank + 1) % g_size;
        size_t at[3] = {8, theirs / 2 + 4, theirs - 1};
        for (int j = 0; j < 3; j++) {
            unsigned char got = 0;
            CHECK_ALL_OK(ctx, dsmmi_rma_get(ctx, w, &got, 1, t, at[j], DSMMI_RMA_CTL, NULL));
            CHECK_ALL_MSG(got == (unsigned char)(t * 31 + at[j]), "rank %d: byte %zu of %d", g_rank,
                          at[j], t);
        }
        MPI_Barrier(MPI_COMM_WORLD); // every read done before the puts
        unsigned char mark = 0xA5;
        CHECK_ALL_OK(ctx, dsmmi_rma_put(ctx, w, &mark, 1, t, theirs - 1, DSMMI_RMA_CTL));
        CHECK_ALL_OK(ctx, dsmmi_rma_flush(ctx, w, t));
        int64_t old = -1;
        CHECK_ALL_OK(ctx, dsmmi_rma_fetch_add(ctx, w, t, 0, 5, &old));
        CHECK_ALL_EQ(old, 0); // only this rank adds to t's counter
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t now = 0;
        memcpy(&now, b, 8);
        CHECK_ALL_EQ(now, 5);
        CHECK_ALL_EQ(b[mine - 1], 0xA5);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_ALL_OK(ctx, dsmmi_win_free(ctx, &w));
        // Shared segments of this rank's workgroup (its members are on this node).
        dsmmi_shm *sh = NULL;
        CHECK_ALL_OK(ctx, dsmmi_shm_create(ctx, sizes[(v + g_rank) % NS], &sh));
        for (int r = 0; r < g_size; r++) {
            if (dsmm_ctx_workgroup(ctx, r) != dsmm_ctx_workgroup(ctx, g_rank)) continue;
            size_t bytes = 0;
            char *seg = dsmmi_shm_base(sh, r, &bytes);
            CHECK_ALL_MSG(seg != NULL && (uintptr_t)seg % DSMMI_WIN_ALIGN == 0,
                          "rank %d: segment of rank %d at %p", g_rank, r, (void *)seg);
            CHECK_ALL_MSG(bytes >= sizes[(v + r) % NS], "segment of rank %d: %zu bytes", r, bytes);
        }
        dsmmi_shm_free(ctx, &sh);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* tile_is: the fetched bytes of tile t of m hold X's piece (rows r0.., columns c0..). */
static int tile_is(dsmm_ctx *ctx, const dsmmi_rmat *m, int t, const char *data, const dsmm_csr *X,
                   dsmm_idx r0, dsmm_idx c0)
{
    const dsmmi_rtile *d = &m->dir[t];
    dsmm_csr *want = NULL;
    if (dsmm_csr_extract(ctx, X, r0, r0 + d->nrows, c0, c0 + d->ncols, &want) != DSMM_OK) return 0;
    int ok = want->nnz == d->nnz;
    if (ok && d->nnz) {
        dsmm_csr v;
        dsmmi_piece_view(data, d->nrows, d->ncols, d->nnz, m->type, ctx, &v);
        ok = csr_equal(ctx, &v, want, 0.0, "tile");
    }
    dsmm_csr_destroy(&want);
    return ok;
}

/* RDMA matrices: every rank fetches every tile (blocking and not) and finds the tile of the
 * global matrix; after owners replace their tiles (scaled by 2, one emptied) and renew, every
 * rank finds the new ones. */
static int test_rmat_replace_renew(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL, *A2 = NULL;
    CHECK_ALL_OK(ctx, rand_mat(ctx, 37, 41, 0.15, 0.1, 0.1, DSMM_DOUBLE, task_seed(120), &A));
    CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &A2));
    for (dsmm_idx e = 0; e < A2->nnz; e++) ((double *)A2->val)[e] *= 2;
    dsmm_dist *DA = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &DA));
    int pr = 0, pc = 0;
    dsmm_dist_grid(DA, &pr, &pc);
    dsmmi_summa_plan p;
    CHECK_ALL_OK(ctx, dsmmi_summa_plan_make(ctx, A->ncols, pr, pc, &p));
    dsmmi_rmat m;
    CHECK_ALL_OK(ctx, dsmmi_rmat_a(ctx, DA, &p, &m));
    dsmm_idx rb[MAX_SHAPES + 1];
    split_bounds(A->nrows, pr, rb);
    dsmmi_pool pool;
    memset(&pool, 0, sizeof pool);
    for (int round = 0; round < 2; round++) {
        const dsmm_csr *X = round ? A2 : A;
        for (int t = 0; t < m.ntr * m.ntc; t++) {
            int i = t / m.ntc, s = t % m.ntc;
            dsmmi_rfut f;
            const char *data = NULL;
            if (t % 2)
                CHECK_ALL_OK(ctx, dsmmi_rmat_get(ctx, &m, t, &pool, &f, &data));
            else {
                CHECK_ALL_OK(ctx, dsmmi_rmat_get_async(ctx, &m, t, &pool, &f));
                CHECK_ALL_OK(ctx, dsmmi_rfut_wait(ctx, &f, &data));
            }
            // Round 1: the last tile was emptied by its owner.
            int emptied = round && t == m.ntr * m.ntc - 1;
            CHECK_ALL_MSG(emptied ? m.dir[t].nnz == 0 && data == NULL
                                  : tile_is(ctx, &m, t, data, X, rb[i], p.lo[s]),
                          "round %d: tile (%d, %d)", round, i, s);
            dsmmi_rfut_release(ctx, &f, &pool);
        }
        if (round) break;
        // Owners hold different numbers of tiles: replace locally, check together.
        dsmm_status rst = DSMM_OK;
        for (int t = 0; t < m.ntr * m.ntc && rst == DSMM_OK; t++) {
            if (m.dir[t].owner != g_rank) continue;
            int i = t / m.ntc, s = t % m.ntc;
            dsmm_csr *nt = NULL;
            if (t == m.ntr * m.ntc - 1)
                rst = dsmm_csr_create(ctx, m.dir[t].nrows, m.dir[t].ncols, 0, DSMM_DOUBLE, &nt);
            else
                rst = dsmm_csr_extract(ctx, A2, rb[i], rb[i + 1], p.lo[s], p.hi[s], &nt);
            if (rst == DSMM_OK) rst = dsmmi_rmat_replace(ctx, &m, t, nt);
            dsmm_csr_destroy(&nt);
        }
        CHECK_ALL_OK(ctx, rst);
        // Nothing changes before the renew.
        CHECK_ALL_OK(ctx, dsmmi_rmat_renew(ctx, &m));
    }
    // Only the owner may replace a tile.
    if (g_size > 1) {
        int t = m.dir[0].owner == g_rank ? 1 : 0;
        dsmm_csr *nt = NULL;
        CHECK_ALL_OK(ctx,
                     dsmm_csr_create(ctx, m.dir[t].nrows, m.dir[t].ncols, 0, DSMM_DOUBLE, &nt));
        dsmm_status st =
            m.dir[t].owner == g_rank ? DSMM_ERR_ARG : dsmmi_rmat_replace(ctx, &m, t, nt);
        CHECK_ALL(st == DSMM_ERR_ARG);
        dsmm_csr_destroy(&nt);
    }
    dsmmi_pool_free(ctx, &pool);
    dsmmi_rmat_free(ctx, &m);
    dsmmi_summa_plan_free(ctx, &p);
    dsmm_dist_destroy(&DA);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&A2);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Failures: one rank's k-th allocation fails, at every k                                     */
/* ------------------------------------------------------------------------------------------ */

/* Whatever allocation of whichever rank fails (set-up, a tile buffer, a partial product, the
 * merge), every rank returns DSMM_ERR_NOMEM, nobody waits for ever, and nothing leaks; once k
 * passes the run's allocations the product succeeds. */
static int test_alloc_failures(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_dense *Bg = NULL;
    CHECK_ALL_OK(ctx, test_rand_er(ctx, 60, 4, 0, DSMM_DOUBLE, task_seed(130), &A));
    CHECK_ALL_OK(ctx, rand_dense(ctx, 60, 5, DSMM_DOUBLE, task_seed(131), &Bg));
    dsmm_dist *DA = NULL;
    dsmm_dist_dense *DB = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &DA));
    CHECK_ALL_OK(ctx, dsmm_dist_dense_scatter(ctx, 0, Bg, 0, 0, &DB));
    size_t base = dsmm_ctx_mem_in_use(ctx);
    int victim = g_size - 1;
    for (int a = 0; a < NALGS; a++)
        for (int sp = 0; sp < 2; sp++) {
            dsmm_dist_opts o;
            dsmm_dist_opts_init(&o);
            o.alg = rdma_algs[a];
            o.prefetch = a % 2;
            o.queue_capacity = 1;
            int k = 0;
            for (;; k++) {
                CHECK_ALL_MSG(k < 2000, "%s: still failing after 2000 allocations",
                              dsmm_dist_alg_name(o.alg));
                if (g_rank == victim) dsmm_ctx_fail_alloc_at(ctx, k);
                dsmm_dist *DC = NULL;
                dsmm_dist_dense *DCd = NULL;
                dsmm_status st =
                    sp ? dsmm_spmm_ex(ctx, DA, DB, &o, &DCd) : dsmm_spgemm_ex(ctx, DA, DA, &o, &DC);
                dsmm_ctx_fail_alloc_at(ctx, -1);
                int fine = DC != NULL || DCd != NULL;
                dsmm_dist_destroy(&DC);
                dsmm_dist_dense_destroy(&DCd);
                CHECK_ALL_MSG(st == DSMM_OK || st == DSMM_ERR_NOMEM, "%s, allocation %d: %s: %s",
                              dsmm_dist_alg_name(o.alg), k, dsmm_status_name(st),
                              dsmm_ctx_last_error(ctx));
                CHECK_ALL_MSG(fine == (st == DSMM_OK), "%s: output on failure",
                              dsmm_dist_alg_name(o.alg));
                int all_ok = all_true(st == DSMM_OK), none_ok = all_true(st != DSMM_OK);
                CHECK_ALL_MSG(all_ok || none_ok, "%s, allocation %d: ranks disagree",
                              dsmm_dist_alg_name(o.alg), k);
                CHECK_ALL_EQ(dsmm_ctx_mem_in_use(ctx), base);
                dsmm_ctx_clear_error(ctx);
                if (all_ok) break;
            }
            CHECK_ALL(k >= 1);
        }
    dsmm_dist_destroy(&DA);
    dsmm_dist_dense_destroy(&DB);
    dsmm_csr_destroy(&A);
    dsmm_dense_destroy(&Bg);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    alarm(540); // a hang (a queue that never drains) fails the test instead of blocking CI
    static const test_case tests[] = {
        TEST(test_window_align),
        TEST(test_queue),
        TEST(test_rmat_replace_renew),
        TEST(test_spgemm_random),
        TEST(test_spgemm_semirings_data),
        TEST(test_spmm),
        TEST(test_items_once),
        TEST(test_bytes_match_model),
        TEST(test_stealing_delay),
        TEST(test_alloc_failures),
    };
    return dist_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
