// tests/base/test_oom.c: "brutal malloc" test (CSparse Tcov, GraphBLAS): for each operation,
// make the k-th allocation fail for k = 0, 1, 2, ... until the operation succeeds. Every
// failed run must return DSMM_ERR_NOMEM, leave its output NULL, write no output file and
// leak nothing.
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct state {
    dsmm_csr *A; // 7 x 5 random double matrix with an empty row
    dsmm_csr *S; // symmetric pattern 9 x 9
    dsmm_coo *T; // triples with duplicates
    const char *mtx, *mtx_gz, *abc, *bin, *out;
    int no_estimate; // dsmm_spgemm_estimate is not built in yet (DSMM_ERR_UNSUPPORTED)
} state;

static state S0;

// Each op runs the operation under test and destroys what it made; *made reports whether an
// output object existed after a failure (it must not).
typedef dsmm_status (*op_fn)(dsmm_ctx *ctx, int *made);

#define OUT_CSR(call, var)                                                                         \
    dsmm_csr *var = (dsmm_csr *)0x1;                                                               \
    dsmm_status st = (call);                                                                       \
    *made = (st != DSMM_OK && var != NULL);                                                        \
    dsmm_csr_destroy(&var);                                                                        \
    return st

static dsmm_status op_transpose(dsmm_ctx *ctx, int *made)
{
    OUT_CSR(dsmm_csr_transpose(ctx, S0.A, &B), B);
}

static dsmm_status op_copy(dsmm_ctx *ctx, int *made)
{
    OUT_CSR(dsmm_csr_copy(ctx, S0.A, DSMM_FLOAT, &B), B);
}

static dsmm_status op_coo_to_csr(dsmm_ctx *ctx, int *made)
{
    OUT_CSR(dsmm_coo_to_csr(ctx, S0.T, DSMM_DUP_SUM, &B), B);
}

static dsmm_status op_permute(dsmm_ctx *ctx, int *made)
{
    dsmm_idx p[7] = {6, 5, 4, 3, 2, 1, 0}, q[5] = {1, 0, 3, 2, 4};
    OUT_CSR(dsmm_csr_permute(ctx, S0.A, p, q, &B), B);
}

static dsmm_status op_extract(dsmm_ctx *ctx, int *made)
{
    OUT_CSR(dsmm_csr_extract(ctx, S0.A, 1, 6, 1, 4, &B), B);
}

static dsmm_status op_col_panels(dsmm_ctx *ctx, int *made)
{
    dsmm_csr **P = (dsmm_csr **)0x1;
    dsmm_status st = dsmm_csr_col_panels(ctx, S0.A, 3, NULL, &P);
    *made = (st != DSMM_OK && P != NULL);
    if (st == DSMM_OK) dsmm_csr_panels_free(ctx, &P, 3);
    return st;
}

static dsmm_status op_row_panels(dsmm_ctx *ctx, int *made)
{
    dsmm_csr **P = (dsmm_csr **)0x1;
    dsmm_status st = dsmm_csr_row_panels(ctx, S0.A, 4, NULL, &P);
    *made = (st != DSMM_OK && P != NULL);
    if (st == DSMM_OK) dsmm_csr_panels_free(ctx, &P, 4);
    return st;
}

static dsmm_status op_compare(dsmm_ctx *ctx, int *made)
{
    dsmm_csr_diff d;
    *made = 0;
    return dsmm_csr_compare(ctx, S0.A, S0.A, 0, 0, &d);
}

static dsmm_status op_summary(dsmm_ctx *ctx, int *made)
{
    dsmm_summary s;
    *made = 0;
    return dsmm_csr_summary(ctx, S0.S, 4, &s);
}

static dsmm_status read_file(dsmm_ctx *ctx, int *made, const char *path)
{
    dsmm_csr *B = (dsmm_csr *)0x1;
    dsmm_labels *L = (dsmm_labels *)0x1;
    dsmm_status st = dsmm_read(ctx, path, NULL, &B, &L, NULL);
    *made = (st != DSMM_OK && (B != NULL || L != NULL));
    if (st == DSMM_OK) {
        dsmm_csr_destroy(&B);
        dsmm_labels_destroy(&L);
    }
    return st;
}

static dsmm_status op_read_mtx(dsmm_ctx *ctx, int *made)
{
    return read_file(ctx, made, S0.mtx);
}

static dsmm_status op_read_mtx_gz(dsmm_ctx *ctx, int *made)
{
    return read_file(ctx, made, S0.mtx_gz);
}

static dsmm_status op_read_abc(dsmm_ctx *ctx, int *made)
{
    return read_file(ctx, made, S0.abc);
}

static dsmm_status op_read_bin(dsmm_ctx *ctx, int *made)
{
    return read_file(ctx, made, S0.bin);
}

static dsmm_status op_write_mtx(dsmm_ctx *ctx, int *made)
{
    remove(S0.out);
    dsmm_status st = dsmm_write(ctx, S0.out, S0.A, NULL, NULL);
    *made = (st != DSMM_OK && test_file_exists(S0.out));
    return st;
}

static dsmm_status op_gen_rmat(dsmm_ctx *ctx, int *made)
{
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.scale = 6;
    p.edge_factor = 4;
    p.symmetric = 1;
    OUT_CSR(dsmm_gen_rmat(ctx, &p, &B), B);
}

static dsmm_status op_gen_er(dsmm_ctx *ctx, int *made)
{
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.n = 50;
    p.avg_degree = 4;
    p.type = DSMM_DOUBLE;
    OUT_CSR(dsmm_gen_er(ctx, &p, &B), B);
}

static dsmm_status op_gen_planted(dsmm_ctx *ctx, int *made)
{
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    p.n = 60;
    p.nblocks = 3;
    p.p_in = 0.3;
    p.p_out = 0.02;
    dsmm_csr *B = (dsmm_csr *)0x1;
    dsmm_idx *truth = (dsmm_idx *)0x1;
    dsmm_status st = dsmm_gen_planted(ctx, &p, &B, &truth);
    *made = (st != DSMM_OK && (B != NULL || truth != NULL));
    if (st == DSMM_OK) {
        dsmm_csr_destroy(&B);
        truth = dsmm_free(ctx, truth);
    }
    return st;
}

static dsmm_status op_stats(dsmm_ctx *ctx, int *made)
{
    dsmm_stats *s = (dsmm_stats *)0x1;
    char *json = NULL;
    dsmm_status st = dsmm_stats_create(ctx, "test", &s);
    *made = (st != DSMM_OK && s != NULL);
    if (st != DSMM_OK) return st;
    st = dsmm_stats_set_int(s, "extra_key", 5);
    if (st == DSMM_OK) st = dsmm_stats_json(s, &json);
    json = dsmm_free(ctx, json);
    dsmm_stats_destroy(&s);
    return st;
}

// SpGEMM: A * A^T (7 x 7, plus-times) with each kernel; transpose_b allocates too.
static dsmm_status spgemm_with(dsmm_ctx *ctx, int *made, dsmm_spgemm_alg alg)
{
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = alg;
    o.transpose_b = 1;
    OUT_CSR(dsmm_csr_spgemm_ex(ctx, S0.A, S0.A, &o, &B, NULL), B);
}

static dsmm_status op_spgemm_auto(dsmm_ctx *ctx, int *made)
{
    return spgemm_with(ctx, made, DSMM_SPGEMM_AUTO);
}

static dsmm_status op_spgemm_hash(dsmm_ctx *ctx, int *made)
{
    return spgemm_with(ctx, made, DSMM_SPGEMM_HASH);
}

static dsmm_status op_spgemm_heap(dsmm_ctx *ctx, int *made)
{
    return spgemm_with(ctx, made, DSMM_SPGEMM_HEAP);
}

static dsmm_status op_spgemm_dense(dsmm_ctx *ctx, int *made)
{
    return spgemm_with(ctx, made, DSMM_SPGEMM_DENSE);
}

static dsmm_status op_spgemm_ref(dsmm_ctx *ctx, int *made)
{
    return spgemm_with(ctx, made, DSMM_SPGEMM_REF);
}

// Symbolic, then numeric on the pattern it made (a failed numeric leaves C the caller's).
static dsmm_status op_spgemm_sym_num(dsmm_ctx *ctx, int *made)
{
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.transpose_b = 1;
    dsmm_csr *C = (dsmm_csr *)0x1;
    dsmm_status st = dsmm_csr_spgemm_symbolic(ctx, S0.A, S0.A, &o, &C, NULL);
    *made = (st != DSMM_OK && C != NULL);
    if (st != DSMM_OK) return st;
    st = dsmm_csr_spgemm_numeric(ctx, S0.A, S0.A, &o, C, NULL);
    dsmm_csr_destroy(&C);
    return st;
}

// Triangle-style masked product: C<S> = S * S, plus-pair, pattern inputs.
static dsmm_status masked_with(dsmm_ctx *ctx, int *made, dsmm_spgemm_alg alg)
{
    dsmm_spgemm_opts o;
    dsmm_spgemm_opts_init(&o);
    o.alg = alg;
    o.semiring = DSMM_PLUS_PAIR;
    o.mask = S0.S;
    OUT_CSR(dsmm_csr_spgemm_ex(ctx, S0.S, S0.S, &o, &B, NULL), B);
}

static dsmm_status op_spgemm_mask(dsmm_ctx *ctx, int *made)
{
    return masked_with(ctx, made, DSMM_SPGEMM_AUTO);
}

static dsmm_status op_spgemm_mask_ref(dsmm_ctx *ctx, int *made)
{
    return masked_with(ctx, made, DSMM_SPGEMM_REF);
}

static dsmm_status op_spgemm_estimate(dsmm_ctx *ctx, int *made)
{
    double row_nnz[9];
    dsmm_spgemm_estimate_result r;
    *made = 0;
    return dsmm_spgemm_estimate(ctx, S0.S, S0.S, 8, 42, row_nnz, &r);
}

typedef struct oom_case {
    const char *name;
    op_fn fn;
    int may_not_allocate; // e.g. compare of two sorted matrices needs no scratch
} oom_case;

static const oom_case cases[] = {
    {"csr_transpose", op_transpose, 0},
    {"csr_copy", op_copy, 0},
    {"coo_to_csr", op_coo_to_csr, 0},
    {"csr_permute", op_permute, 0},
    {"csr_extract", op_extract, 0},
    {"csr_col_panels", op_col_panels, 0},
    {"csr_row_panels", op_row_panels, 0},
    {"csr_compare", op_compare, 1},
    {"csr_summary", op_summary, 0},
    {"read_mtx", op_read_mtx, 0},
    {"read_mtx_gz", op_read_mtx_gz, 0},
    {"read_abc", op_read_abc, 0},
    {"read_bin", op_read_bin, 0},
    {"write_mtx", op_write_mtx, 0},
    {"gen_rmat", op_gen_rmat, 0},
    {"gen_er", op_gen_er, 0},
    {"gen_planted", op_gen_planted, 0},
    {"stats", op_stats, 0},
    {"spgemm_auto", op_spgemm_auto, 0},
    {"spgemm_hash", op_spgemm_hash, 0},
    {"spgemm_heap", op_spgemm_heap, 0},
    {"spgemm_dense", op_spgemm_dense, 0},
    {"spgemm_ref", op_spgemm_ref, 0},
    {"spgemm_sym_num", op_spgemm_sym_num, 0},
    {"spgemm_mask", op_spgemm_mask, 0},
    {"spgemm_mask_ref", op_spgemm_mask_ref, 0},
    {"spgemm_estimate", op_spgemm_estimate, 0},
};

static int setup(dsmm_ctx *ctx)
{
    // A: 7 x 5 with an empty row 3, explicit zero at (6, 4).
    static dsmm_idx rp[8] = {0, 2, 3, 5, 5, 7, 8, 10};
    static dsmm_idx ci[10] = {0, 3, 4, 1, 2, 0, 4, 2, 1, 4};
    static double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 7, 5, rp, ci, v, DSMM_DOUBLE, &S0.A));
    static dsmm_idx srp[10] = {0, 2, 4, 5, 6, 6, 8, 9, 11, 12};
    static dsmm_idx sci[12] = {0, 1, 0, 5, 7, 7, 1, 7, 8, 2, 5, 6};
    CHECK_OK(ctx, dsmm_csr_wrap(ctx, 9, 9, srp, sci, NULL, DSMM_PATTERN, &S0.S));
    CHECK_OK(ctx, dsmm_coo_create(ctx, 6, 6, 4, DSMM_DOUBLE, &S0.T));
    for (int k = 0; k < 30; k++)
        CHECK_OK(ctx, dsmm_coo_push(S0.T, (k * 7) % 6, (k * 5) % 6, 0.5 * k));
    S0.mtx = strdup(test_path("oom.mtx"));
    S0.mtx_gz = strdup(test_path("oom.mtx.gz"));
    S0.abc = strdup(test_path("oom.abc"));
    S0.bin = strdup(test_path("oom.dsmm"));
    S0.out = strdup(test_path("oom_out.mtx"));
    const char *mtx = "%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 5\n1 1 1.5\n"
                      "2 1 -2\n3 2 0.25\n4 3 1e3\n4 4 7\n";
    CHECK(test_write_file(S0.mtx, mtx, strlen(mtx)) == 0);
    const char *abc = "a\tb\t0.5\nb c 0.25\nc\ta\t1\nd\te\t2\n";
    CHECK(test_write_file(S0.abc, abc, strlen(abc)) == 0);
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    wo.format = DSMM_FORMAT_BIN;
    CHECK_OK(ctx, dsmm_write(ctx, S0.bin, S0.A, NULL, &wo));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s'", S0.mtx, S0.mtx_gz);
    CHECK(system(cmd) == 0);
    double row_nnz[9];
    dsmm_spgemm_estimate_result r;
    dsmm_status st = dsmm_spgemm_estimate(ctx, S0.S, S0.S, 8, 42, row_nnz, &r);
    CHECK(st == DSMM_OK || st == DSMM_ERR_UNSUPPORTED);
    S0.no_estimate = st == DSMM_ERR_UNSUPPORTED;
    dsmm_ctx_clear_error(ctx);
    return TEST_PASS;
}

static int test_kth_failure(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(ctx != NULL);
    CHECK_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
    if (setup(ctx) != TEST_PASS) return TEST_FAIL;
    size_t base = dsmm_ctx_mem_in_use(ctx);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].fn == op_spgemm_estimate && S0.no_estimate) {
            printf("     %-16s skipped: not built in yet\n", cases[c].name);
            continue;
        }
        long k = 0;
        for (;; k++) {
            dsmm_ctx_clear_error(ctx);
            dsmm_ctx_fail_alloc_at(ctx, k);
            int made = 0;
            dsmm_status st = cases[c].fn(ctx, &made);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            CHECK_MSG(dsmm_ctx_mem_in_use(ctx) == base, "%s, failure at k=%ld: %zu bytes leaked",
                      cases[c].name, k, dsmm_ctx_mem_in_use(ctx) - base);
            if (st == DSMM_OK) break;
            CHECK_MSG(st == DSMM_ERR_NOMEM, "%s, failure at k=%ld: returned %s: %s", cases[c].name,
                      k, dsmm_status_name(st), dsmm_ctx_last_error(ctx));
            CHECK_MSG(!made, "%s, failure at k=%ld: output left behind", cases[c].name, k);
            CHECK_MSG(k < 100000, "%s never succeeds", cases[c].name);
        }
        CHECK_MSG(k > 0 || cases[c].may_not_allocate,
                  "%s made no allocation at all, so nothing was tested", cases[c].name);
        printf("     %-16s %ld injected failures, all clean\n", cases[c].name, k);
    }
    dsmm_csr_destroy(&S0.A);
    dsmm_csr_destroy(&S0.S);
    dsmm_coo_destroy(&S0.T);
    free((void *)S0.mtx);
    free((void *)S0.mtx_gz);
    free((void *)S0.abc);
    free((void *)S0.bin);
    free((void *)S0.out);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {TEST(test_kth_failure)};
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
