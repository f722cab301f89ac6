// tests/apps/test_mcl.c: Markov clustering (src/apps/mcl/) at every rank count: the column
// pruning against a reference written from mcl's rules with sorts (ties, selection, both
// recoveries, the emergency loop), the distributed top-k candidate set giving the same
// column, the interpretation against a breadth-first reference on random limit-like
// matrices, whole runs with the distributed expansion (SUMMA, phases, a one-sided algorithm,
// binary merge, exact count or Cohen estimate sizing the phases) equal to the fused one-rank
// run, checkpoint + resume equal to one run, the parameter and input errors, isolated
// vertices and empty graphs. mcl itself is compared in tests/cli/test_cli_mcl.sh.
#include <float.h>
#include <math.h>
#include <sys/stat.h>

#include "../dist/dist_common.h"
#include "apps/apps.h"

// ------------------------------------------------------------------------------------------
// Reference pruning, from the rules (docs/mcl.md), with sorted copies.
// ------------------------------------------------------------------------------------------

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static double mass_ge(const float *v, int n, double bar, int *cnt)
{
    double s = 0.0;
    *cnt = 0;
    for (int i = 0; i < n; i++)
        if ((double)v[i] >= bar) {
            s += (double)v[i];
            (*cnt)++;
        }
    return s;
}

// Returns the kept count; keep[i] marks kept entries; out values rescaled.
static int ref_prune(const dsmmi_mcl_rules *r, const float *v, int n, float *out, int *keep)
{
    float *t = malloc(sizeof(float) * (size_t)(n + 1));
    double cut = r->cut, bar;
    int ncut = 0, m = 0;
    double mcut = r->cut > 0 ? mass_ge(v, n, cut, &ncut) : mass_ge(v, n, -1e300, &ncut);
    double lo_only = r->cut > 0 ? cut : -1e300;
    if (r->R > 0 && ncut < r->R && mcut < r->pct) {
        bar = 0.0;
        if (n > r->R) {
            for (int i = 0; i < n; i++)
                if ((double)v[i] < cut) t[m++] = v[i];
            qsort(t, (size_t)m, sizeof *t, cmp_desc);
            bar = t[r->R - ncut - 1];
        }
    } else if (r->S > 0 && ncut > r->S) {
        for (int i = 0; i < n; i++)
            if ((double)v[i] >= lo_only) t[m++] = v[i];
        qsort(t, (size_t)m, sizeof *t, cmp_desc);
        double sbar = t[r->S - 1];
        int nsel = 0;
        double msel = 0.0;
        for (int i = 0; i < m; i++)
            if ((double)t[i] >= sbar) {
                nsel++;
                msel += (double)t[i];
            }
        bar = sbar;
        if (r->R > 0 && nsel < r->R && msel < r->pct) {
            bar = 0.0;
            if (m > r->R) {
                int q = 0;
                for (int i = 0; i < m; i++)
                    if ((double)t[i] < sbar) t[q++] = t[i];
                bar = t[r->R - nsel - 1];
            }
            if (bar < lo_only) bar = lo_only;
        }
    } else {
        bar = lo_only;
    }
    int k = 0;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        keep[i] = (double)v[i] >= bar;
        if (keep[i]) s += (double)v[i];
    }
    for (int i = 0; i < n; i++)
        if (keep[i]) out[k++] = s != 0.0 ? (float)((double)v[i] / s) : v[i];
    free(t);
    return k;
}

// A column of n values drawn from few levels (ties) and from a continuum.
static void rand_column(uint64_t seed, int n, float *v)
{
    static const float levels[] = {0.5f, 0.25f, 0.125f, 0.01f, 1e-5f, 3e-5f, 2e-4f, 7e-5f};
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        uint64_t u = dsmm_rng_at(seed, 1, (uint64_t)i);
        v[i] = (u & 1) ? levels[(u >> 1) % 8] : (float)((double)(u >> 11) * 0x1.0p-53 * 1e-3);
        s += (double)v[i];
    }
    for (int i = 0; i < n; i++) v[i] = (float)((double)v[i] / s);
}

// The buffers of the prune tests, n entries each: the column as pruned (idx, val) and a copy
// (idx2, val2), prune scratch, the column as drawn (v), and the reference's kept values and
// flags.
typedef struct prune_bufs {
    int32_t *idx, *idx2;
    float *val, *val2, *scr, *v, *ref;
    int *keep;
} prune_bufs;

static void prune_bufs_free(prune_bufs *b)
{
    free(b->idx);
    free(b->idx2);
    free(b->val);
    free(b->val2);
    free(b->scr);
    free(b->v);
    free(b->ref);
    free(b->keep);
}

// Allocates every buffer of b; 0 (nothing left allocated) when one fails.
static int prune_bufs_alloc(prune_bufs *b, int n)
{
    b->idx = malloc(sizeof(int32_t) * (size_t)n);
    b->idx2 = malloc(sizeof(int32_t) * (size_t)n);
    b->val = malloc(sizeof(float) * (size_t)n);
    b->val2 = malloc(sizeof(float) * (size_t)n);
    b->scr = malloc(sizeof(float) * (size_t)n);
    b->v = malloc(sizeof(float) * (size_t)n);
    b->ref = malloc(sizeof(float) * (size_t)n);
    b->keep = malloc(sizeof(int) * (size_t)n);
    if (b->idx && b->idx2 && b->val && b->val2 && b->scr && b->v && b->ref && b->keep) return 1;
    prune_bufs_free(b);
    return 0;
}

// dsmmi_mcl_sum_exact's promise: where it holds, the four running sums give the running sum's
// bits. Floats in [bar, 1] drawn at every scale of that range, n up to 200000; the trials where
// it does not hold must show the orders differing at least once (else the check proves
// nothing); a bound 8 times too loose fails.
static int test_sum_exact(void)
{
    int n_max = 200000, exact = 0, differ = 0;
    float *v = malloc(sizeof(float) * (size_t)n_max);
    CHECK(v != NULL);
    for (int t = 0; t < 200; t++) {
        uint64_t seed = task_seed((uint64_t)(70000 + t));
        double bar = ldexp(1.0, -(int)(dsmm_rng_at(seed, 2, 0) % 40)) * 1.37;
        if (bar > 1.0) bar = 0.7;
        int n = 1 + (int)(dsmm_rng_at(seed, 2, 1) % (uint64_t)n_max);
        for (int i = 0; i < n; i++) {
            double u = (double)(dsmm_rng_at(seed, 1, (uint64_t)i) >> 11) * 0x1.0p-53;
            // half near 1 (the partial sums grow as fast as they may), half log-uniform in
            // [bar, 1] (the finest units the bound allows)
            float x = (i & 1) ? (float)(0.5 + 0.5 * u) : (float)(bar * pow(1.0 / bar, u));
            if ((double)x < bar) x = nextafterf(x, INFINITY);
            v[i] = x > 1.0f ? 1.0f : x;
        }
        double run = 0.0;
        for (int i = 0; i < n; i++) run += (double)v[i];
        double four = dsmmi_mcl_sum4(v, n);
        if (dsmmi_mcl_sum_exact(bar, 1.0, n)) {
            exact++;
            CHECK_MSG(four == run, "bar %g n %d: %.17g against %.17g", bar, n, four, run);
        } else if (four != run) {
            differ++;
        }
    }
    CHECK(exact > 20 && differ > 0);
    CHECK(!dsmmi_mcl_sum_exact(0.0, 1.0, 10));
    CHECK(!dsmmi_mcl_sum_exact(1e-40, 1.0, 10)); // subnormal floats: not claimed
    CHECK(dsmmi_mcl_sum_exact(0.99999 / 4000, 1.0, 10000));
    CHECK(!dsmmi_mcl_sum_exact(0.99999 / 4000, 1.0, 1 << 24));
    free(v);
    return TEST_PASS;
}

// Long expanded columns (up to 100000 entries) through prune_whole, against the reference
// with mcl's running sums: the same entries and the same bits, whether the kept mass may be
// summed in any order (every kept value >= cut, few enough of them: sum_exact) or not (a cut of
// 1e-9 with 100000 entries), with and without selection and recovery.
static int test_prune_long_columns(void)
{
    const int lens[] = {5000, 30000, 100000};
    const double Ps[] = {1000, 10000, 1e9};
    const int64_t Ss[] = {0, 1100};
    const int64_t Rs[] = {0, 1400};
    prune_bufs bufs;
    CHECK(prune_bufs_alloc(&bufs, 100000));
    int32_t *idx = bufs.idx;
    float *val = bufs.val, *scr = bufs.scr, *v = bufs.v, *ref = bufs.ref;
    int *keep = bufs.keep;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++)
                for (int d = 0; d < 2; d++) {
                    int n = lens[a];
                    dsmmi_mcl_rules r = {0.99999 / Ps[b], Ss[c], Rs[d], 0.9};
                    rand_column(task_seed((uint64_t)(90000 + a * 100 + b * 10 + c * 2 + d)), n, v);
                    for (int i = 0; i < n; i++) {
                        idx[i] = i;
                        val[i] = v[i];
                    }
                    float chaos = 0.0f;
                    dsmm_idx got = dsmmi_mcl_prune_whole(&r, 1, idx, val, n, scr, &chaos);
                    int want = ref_prune(&r, v, n, ref, keep);
                    if (want == 0 && r.R == 0) { // mcl's emergency measure: the loop alone
                        CHECK(got == 1 && idx[0] == 1 && val[0] == 1.0f);
                        continue;
                    }
                    CHECK_MSG(got == want, "n %d P %g S %lld R %lld: %lld kept, want %d", n, Ps[b],
                              (long long)Ss[c], (long long)Rs[d], (long long)got, want);
                    for (int i = 0, k = 0; i < n; i++)
                        if (keep[i]) {
                            CHECK(idx[k] == i);
                            CHECK_MSG(val[k] == ref[k], "n %d P %g: entry %d %.9g, want %.9g", n,
                                      Ps[b], k, (double)val[k], (double)ref[k]);
                            k++;
                        }
                    dsmmi_mcl_col cs;
                    dsmmi_mcl_measure(v, n, &cs);
                    float want_chaos = (float)((cs.maxval - cs.center) * (double)got);
                    CHECK(fabsf(chaos - want_chaos) <= 1e-6f * fabsf(want_chaos));
                }
    prune_bufs_free(&bufs);
    return TEST_PASS;
}

static int test_prune_vs_reference(void)
{
    const int lens[] = {1, 2, 7, 50, 300, 2000};
    const int64_t Ps[] = {0, 10, 1000, 10000, 100000};
    const int64_t Ss[] = {0, 3, 40, 1100};
    const int64_t Rs[] = {0, 5, 60, 1400};
    const int pcts[] = {0, 50, 90, 99};
    int cases = 0;
    prune_bufs bufs;
    CHECK(prune_bufs_alloc(&bufs, 2000));
    int32_t *idx = bufs.idx, *idx2 = bufs.idx2;
    float *val = bufs.val, *val2 = bufs.val2, *scr = bufs.scr, *v = bufs.v, *ref = bufs.ref;
    int *keep = bufs.keep;
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++)
                    for (int e = 0; e < 4; e++) {
                        int n = lens[a];
                        dsmmi_mcl_rules r = {Ps[b] ? 0.99999 / (double)Ps[b] : 0.0, Ss[c], Rs[d],
                                             pcts[e] / 100.0};
                        rand_column(task_seed((uint64_t)(a * 1000 + b * 100 + c * 10 + d)), n, v);
                        for (int i = 0; i < n; i++) {
                            idx[i] = i * 3;
                            val[i] = v[i];
                        }
                        dsmmi_mcl_col cs;
                        dsmmi_mcl_measure(val, n, &cs);
                        float chaos, chaos2;
                        // The one-pass form on a copy must agree entry for entry.
                        for (int i = 0; i < n; i++) {
                            idx2[i] = i * 3;
                            val2[i] = v[i];
                        }
                        dsmm_idx got2 = dsmmi_mcl_prune_whole(&r, 9, idx2, val2, n, scr, &chaos2);
                        dsmm_idx got = dsmmi_mcl_prune(&r, 9, idx, val, n, &cs, scr, &chaos);
                        // the one-pass form sums the chaos's squares in another order
                        CHECK(got2 == got && fabsf(chaos2 - chaos) <= 1e-6f * fabsf(chaos));
                        for (dsmm_idx i = 0; i < got; i++)
                            CHECK(idx2[i] == idx[i] && val2[i] == val[i]);
                        int want = ref_prune(&r, v, n, ref, keep);
                        if (want == 0 && r.R == 0) { // emergency loop
                            CHECK(got == 1 && idx[0] == 9 && val[0] == 1.0f);
                            cases++;
                            continue;
                        }
                        if (got != want) {
                            fprintf(stderr,
                                    "n %d P %lld S %lld R %lld pct %d: %lld kept, want %d\n", n,
                                    (long long)Ps[b], (long long)Ss[c], (long long)Rs[d], pcts[e],
                                    (long long)got, want);
                            return TEST_FAIL;
                        }
                        for (int i = 0, k = 0; i < n; i++)
                            if (keep[i]) {
                                CHECK(idx[k] == i * 3);
                                CHECK(val[k] == ref[k]);
                                k++;
                            }
                        double mx = 0, sq = 0;
                        for (int i = 0; i < n; i++) {
                            if (v[i] > mx) mx = v[i];
                            sq += (double)v[i] * v[i];
                        }
                        CHECK(chaos == (float)((mx - sq) * (double)want));
                        cases++;
                    }
    CHECK(cases == 6 * 5 * 4 * 4 * 4);
    prune_bufs_free(&bufs);
    return TEST_PASS;
}

// ------------------------------------------------------------------------------------------
// The fused expansion of one column against a reference written from mcl's two paths, on
// the matrix as loaded and relabelled (rows in breadth-first order, columns unchanged), with
// the AVX-512 collect loop allowed and forbidden; N not a multiple of 16, empty rows, both
// paths; the same columns expanded as panels of every width. Then a whole iteration under rules
// that prune everything: mcl's emergency loop must name the column's own vertex, not its row.
// ------------------------------------------------------------------------------------------

static dsmm_status random_mcl_mat(dsmm_ctx *ctx, dsmm_idx N, uint64_t seed, dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx cap = N * N;
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, M, N, cap));
    dsmm_idx nnz = 0;
    for (dsmm_idx r = 0; r < N; r++) {
        uint64_t u = dsmm_rng_at(seed, 0, (uint64_t)r);
        // A fifth of the rows empty, a fifth nearly full, the rest 1..8 entries.
        int kind = (int)(u % 5);
        for (dsmm_idx c = 0; c < N; c++) {
            uint64_t w = dsmm_rng_at(seed, 1 + (uint64_t)r, (uint64_t)c);
            int on = kind == 0 ? 0 : kind == 1 ? (w % 10) != 0 : (w % (uint64_t)N) < 1 + u % 8;
            if (!on) continue;
            M->col[nnz] = (int32_t)c;
            M->val[nnz] = (float)((double)((w >> 11) | 1) * 0x1.0p-53);
            nnz++;
        }
        M->rowptr[r + 1] = nnz;
    }
    M->nnz = nnz;
cleanup:
    return st;
}

// Column v of M*M as mcl computes it, from the unrelabelled M.
static dsmm_idx ref_expand(const dsmmi_mcl_mat *M, dsmm_idx v, dsmm_idx N, double *acc,
                           int32_t *idx, float *val)
{
    dsmm_idx flops = 0;
    for (dsmm_idx p = M->rowptr[v]; p < M->rowptr[v + 1]; p++)
        flops += M->rowptr[M->col[p] + 1] - M->rowptr[M->col[p]];
    int dense = flops * 10 >= N;
    for (dsmm_idx j = 0; j < N; j++) acc[j] = 0.0;
    for (dsmm_idx p = M->rowptr[v]; p < M->rowptr[v + 1]; p++) {
        dsmm_idx k = M->col[p];
        for (dsmm_idx q = M->rowptr[k]; q < M->rowptr[k + 1]; q++)
            acc[M->col[q]] += dense ? (double)(float)(M->val[q] * M->val[p])
                                    : (double)M->val[q] * (double)M->val[p];
    }
    dsmm_idx n = 0;
    for (dsmm_idx j = 0; j < N; j++)
        if (acc[j] != 0.0) {
            idx[n] = (int32_t)j;
            val[n++] = (float)acc[j];
        }
    return n;
}

// Rows of lo..hi entries at random distinct columns (sorted), a fifth of them empty: sparse
// columns for large N (the sparse path's long columns, sorted or read off its bitmap).
static dsmm_status sparse_mcl_mat(dsmm_ctx *ctx, dsmm_idx N, uint64_t seed, int lo, int hi,
                                  dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, M, N, N * hi));
    dsmm_idx nnz = 0;
    for (dsmm_idx r = 0; r < N; r++) {
        uint64_t u = dsmm_rng_at(seed, 0, (uint64_t)r);
        int d = u % 5 == 0 ? 0 : lo + (int)((u >> 8) % (uint64_t)(hi - lo + 1));
        dsmm_idx start = nnz;
        for (uint64_t t = 0; nnz - start < d; t++) {
            int32_t c = (int32_t)(dsmm_rng_at(seed, 1 + (uint64_t)r, t) % (uint64_t)N);
            dsmm_idx at = nnz; // insertion into the sorted row, duplicates skipped
            while (at > start && M->col[at - 1] > c) at--;
            if (at > start && M->col[at - 1] == c) continue;
            memmove(M->col + at + 1, M->col + at, (size_t)(nnz - at) * sizeof *M->col);
            M->col[at] = c;
            M->val[nnz] =
                (float)((double)((dsmm_rng_at(seed, 7, (uint64_t)nnz) >> 11) | 1) * 0x1.0p-53);
            nnz++;
        }
        M->rowptr[r + 1] = nnz;
    }
    M->nnz = nnz;
cleanup:
    return st;
}

// A matrix as loaded (M) and relabelled (R), with the buffers one expansion needs and those
// of the reference. lo > 0: sparse_mcl_mat rows of lo..hi entries; lo == 0: random_mcl_mat.
typedef struct expand_fixture {
    dsmm_idx N;
    dsmmi_mcl_mat M, R;
    int32_t *newof, *orig, *idx, *ridx;
    double *acc, *racc;
    uint64_t *seen;
    float *val, *rval;
} expand_fixture;

static void fixture_free(dsmm_ctx *ctx, expand_fixture *f)
{
    dsmmi_mcl_mat_free(ctx, &f->M);
    dsmmi_mcl_mat_free(ctx, &f->R);
    dsmmi_free(ctx, f->newof);
    dsmmi_free(ctx, f->orig);
    free(f->acc);
    free(f->racc);
    free(f->seen);
    free(f->idx);
    free(f->ridx);
    free(f->val);
    free(f->rval);
    memset(f, 0, sizeof *f);
}

static dsmm_status fixture_make(dsmm_ctx *ctx, dsmm_idx N, uint64_t seed, int lo, int hi,
                                expand_fixture *f)
{
    dsmm_status st = DSMM_OK;
    memset(f, 0, sizeof *f);
    f->N = N;
    for (int k = 0; k < 2; k++) {
        dsmmi_mcl_mat *X = k ? &f->R : &f->M;
        DSMM_TRY(lo > 0 ? sparse_mcl_mat(ctx, N, seed, lo, hi, X)
                        : random_mcl_mat(ctx, N, seed, X));
    }
    DSMM_TRY(dsmmi_mcl_relabel(ctx, &f->R, &f->newof, &f->orig));
    f->acc = calloc((size_t)N * DSMMI_MCL_PANEL, sizeof *f->acc);
    f->racc = calloc((size_t)N, sizeof *f->racc);
    f->seen = calloc((size_t)N / 64 + 1, sizeof *f->seen);
    f->idx = malloc(sizeof *f->idx * (size_t)(N + 16));
    f->ridx = malloc(sizeof *f->ridx * (size_t)N);
    f->val = malloc(sizeof *f->val * (size_t)(N + 16));
    f->rval = malloc(sizeof *f->rval * (size_t)N);
    DSMM_CHECK(ctx, f->acc && f->racc && f->seen && f->idx && f->ridx && f->val && f->rval,
               DSMM_ERR_NOMEM, "test buffers");
cleanup:
    if (st != DSMM_OK) fixture_free(ctx, f);
    return st;
}

// The sparse path's long columns: read off the bitmap (N = 3000) or sorted (N = 100000).
static int test_expand_sparse_long(void)
{
    dsmm_ctx *ctx = NULL;
    CHECK(dsmm_ctx_create(&ctx) == DSMM_OK);
    const dsmm_idx Ns[] = {3000, 100000};
    int from_bitmap = 0, sorted = 0;
    for (int t = 0; t < 2; t++) {
        dsmm_idx N = Ns[t];
        expand_fixture f;
        CHECK_OK(ctx, fixture_make(ctx, N, task_seed(60 + (uint64_t)t), 5, 12, &f));
        dsmmi_mcl_mat *M = &f.M, *R = &f.R;
        int32_t *newof = f.newof, *idx = f.idx, *ridx = f.ridx;
        double *acc = f.acc, *racc = f.racc;
        uint64_t *seen = f.seen;
        float *val = f.val, *rval = f.rval;
        for (int relabelled = 0; relabelled < 2; relabelled++)
            for (dsmm_idx i = 0; i < 300; i++) {
                dsmm_idx v = i * (N / 300);
                dsmm_idx want = ref_expand(M, v, N, racc, ridx, rval);
                int dense = -1;
                const dsmmi_mcl_mat *X = relabelled ? R : M;
                dsmm_idx row = relabelled ? newof[v] : v;
                dsmm_idx got = dsmmi_mcl_expand_col(X, row, N, X, 0, acc, seen, idx, val, &dense);
                CHECK(dense == 0);
                CHECK_MSG(got == want, "N %lld column %lld: %lld entries, want %lld", (long long)N,
                          (long long)v, (long long)got, (long long)want);
                for (dsmm_idx k = 0; k < got; k++) CHECK(idx[k] == ridx[k] && val[k] == rval[k]);
                for (dsmm_idx k = 0; k < N / 64 + 1; k++) CHECK(seen[k] == 0);
                for (dsmm_idx j = 0; j < N; j++) CHECK(acc[j] == 0.0);
                if (got > 32) {
                    from_bitmap += (N + 63) / 64 <= 16 * got;
                    sorted += (N + 63) / 64 > 16 * got;
                }
            }
        fixture_free(ctx, &f);
    }
    CHECK_MSG(from_bitmap > 0 && sorted > 0, "bitmap %d, sorted %d", from_bitmap, sorted);
    dsmm_ctx_destroy(&ctx);
    return TEST_PASS;
}

static int test_expand_vs_reference(void)
{
    dsmm_ctx *ctx = NULL;
    CHECK(dsmm_ctx_create(&ctx) == DSMM_OK);
    const dsmm_idx Ns[] = {1, 37, 203};
    int dense_seen = 0, sparse_seen = 0, panels = 0;
    for (int t = 0; t < 3; t++) {
        dsmm_idx N = Ns[t];
        expand_fixture f;
        CHECK_OK(ctx, fixture_make(ctx, N, task_seed(40 + (uint64_t)t), 0, 0, &f));
        dsmmi_mcl_mat *M = &f.M, *R = &f.R;
        int32_t *newof = f.newof, *orig = f.orig, *idx = f.idx, *ridx = f.ridx;
        double *acc = f.acc, *racc = f.racc;
        uint64_t *seen = f.seen;
        float *val = f.val, *rval = f.rval;
        // SIMD levels: portable, AVX2, AVX-512 collect and take, AVX-512 panel rows (each as
        // far as the CPU has it).
        for (int simd = 0; simd < 4; simd++) {
            dsmmi_mcl_simd(simd);
            for (int relabelled = 0; relabelled < 2; relabelled++)
                for (dsmm_idx v = 0; v < N; v++) {
                    dsmm_idx want = ref_expand(M, v, N, racc, ridx, rval);
                    int dense = -1;
                    const dsmmi_mcl_mat *X = relabelled ? R : M;
                    dsmm_idx row = relabelled ? newof[v] : v;
                    dsmm_idx got =
                        dsmmi_mcl_expand_col(X, row, N, X, 0, acc, seen, idx, val, &dense);
                    CHECK_MSG(got == want, "N %lld column %lld: %lld entries, want %lld",
                              (long long)N, (long long)v, (long long)got, (long long)want);
                    for (dsmm_idx i = 0; i < got; i++)
                        CHECK(idx[i] == ridx[i] && val[i] == rval[i]);
                    for (dsmm_idx j = 0; j < N; j++) CHECK(acc[j] == 0.0 && seen[j / 64] == 0);
                    dense_seen += dense == 1;
                    sparse_seen += dense == 0;
                }
        }
        // Runs of dense-path columns as panels (every start, every width from 2).
        double *pacc = acc; // N * DSMMI_MCL_PANEL doubles
        for (int simd = 0; simd < 4; simd++) {
            dsmmi_mcl_simd(simd);
            for (int relabelled = 0; relabelled < 2; relabelled++) {
                const dsmmi_mcl_mat *X = relabelled ? R : M;
                for (dsmm_idx r0 = 0; r0 < N; r0++) {
                    int run = 0;
                    while (run < DSMMI_MCL_PANEL && r0 + run < N &&
                           dsmmi_mcl_dense_col(X, r0 + run, N, X, 0))
                        run++;
                    for (int w = 2; w <= run; w++) {
                        dsmmi_mcl_expand_panel(X, r0, w, X, 0, pacc);
                        for (int c = w - 1; c >= 0; c--) { // any order
                            dsmm_idx v = relabelled ? orig[r0 + c] : r0 + c;
                            dsmm_idx want = ref_expand(M, v, N, racc, ridx, rval);
                            dsmm_idx got = dsmmi_mcl_panel_take(pacc, N, c, idx, val);
                            CHECK_MSG(got == want,
                                      "panel at %lld width %d column %d: %lld, want %lld",
                                      (long long)r0, w, c, (long long)got, (long long)want);
                            for (dsmm_idx i = 0; i < want; i++)
                                CHECK(idx[i] == ridx[i] && val[i] == rval[i]);
                        }
                        dsmmi_mcl_panel_clear(pacc, N);
                        for (dsmm_idx j = 0; j < N * DSMMI_MCL_PANEL; j++) CHECK(pacc[j] == 0.0);
                        panels++;
                    }
                }
            }
        }
        // Everything pruned, no recovery: each column keeps its own loop (vertex, not row).
        dsmmi_mcl_simd(3);
        dsmmi_mcl_rules none = {1e300, 0, 0, 0.0}; // sums exceed 1: M is not stochastic
        dsmmi_mcl_mat out = {0};
        dsmmi_mcl_iter_stats s;
        CHECK_OK(ctx, dsmmi_mcl_iterate_local(ctx, R, 0, N, R, 0, &none, 0.0, &out, &s));
        for (dsmm_idx r = 0; r < N; r++) { // an empty expansion also keeps the loop
            CHECK(out.rowptr[r + 1] - out.rowptr[r] == 1);
            CHECK(out.col[out.rowptr[r]] == orig[r] && out.val[out.rowptr[r]] == 1.0f);
        }
        dsmmi_mcl_mat_free(ctx, &out);
        fixture_free(ctx, &f);
    }
    CHECK(dense_seen > 0 && sparse_seen > 0 && panels > 0);
    dsmm_ctx_destroy(&ctx);
    return TEST_PASS;
}

// Inflation by 2 squares instead of calling pow: the same floats, on values of every scale
// (down to float subnormals), checked against pow itself.
static int test_inflate_square(void)
{
    enum { N = 4000 };
    float *v = malloc(sizeof(float) * N), *w = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) {
        uint64_t u = dsmm_rng_at(task_seed(77), 0, (uint64_t)i);
        double x = (double)((u >> 11) | 1) * 0x1.0p-53; // (0, 1)
        v[i] = (float)ldexp(x, -(int)(u % 150));        // down to ~1e-45
        if (v[i] == 0.0f) v[i] = 0x1.0p-149f;
    }
    double s = 0.0;
    for (int i = 0; i < N; i++) {
        w[i] = (float)pow((double)v[i], 2.0);
        s += (double)w[i];
    }
    for (int i = 0; i < N; i++) w[i] = (float)((double)w[i] / s);
    CHECK(dsmmi_mcl_inflate(v, N, 2.0) == N);
    for (int i = 0; i < N; i++)
        CHECK_MSG(v[i] == w[i], "entry %d: %a, pow gives %a", i, v[i], w[i]);
    free(v);
    free(w);
    return TEST_PASS;
}

// The owner's view in a distributed run: each of `parts` ranks holds a slice of the column
// and sends every entry >= cut and its R largest below the cut with ties; pruning that
// candidate set with the column's measures must give the column pruned whole.
static int test_candidates_exact(void)
{
    enum { N = 3000 };
    int32_t *i1 = malloc(sizeof(int32_t) * N), *i2 = malloc(sizeof(int32_t) * N);
    float *v1 = malloc(sizeof(float) * N), *v2 = malloc(sizeof(float) * N);
    float *scr = malloc(sizeof(float) * N), *t = malloc(sizeof(float) * N);
    for (int trial = 0; trial < 60; trial++) {
        int n = 1 + (int)(dsmm_rng_at(task_seed(77), 2, (uint64_t)trial) % N);
        int parts = 1 + trial % 5;
        dsmmi_mcl_rules r = {trial % 3 ? 0.99999 / 3000.0 : 0.0, (trial % 4) * 40, (trial % 7) * 30,
                             0.9};
        rand_column(task_seed(1000 + (uint64_t)trial), n, v1);
        for (int i = 0; i < n; i++) i1[i] = i;
        dsmmi_mcl_col cs;
        dsmmi_mcl_measure(v1, n, &cs);
        int m = 0;
        for (int p = 0; p < parts; p++) {
            int lo = n * p / parts, hi = n * (p + 1) / parts, below = 0;
            for (int i = lo; i < hi; i++)
                if (!(r.cut <= 0 || v1[i] >= r.cut)) t[below++] = v1[i];
            double tbar = -1e300;
            if (below > r.R) {
                qsort(t, (size_t)below, sizeof *t, cmp_desc);
                tbar = r.R ? (double)t[r.R - 1] : 1e300;
            }
            for (int i = lo; i < hi; i++)
                if (r.cut <= 0 || v1[i] >= r.cut || (double)v1[i] >= tbar) {
                    i2[m] = i;
                    v2[m++] = v1[i];
                }
        }
        float c1, c2;
        dsmm_idx a = dsmmi_mcl_prune(&r, 0, i1, v1, n, &cs, scr, &c1);
        dsmm_idx b = dsmmi_mcl_prune(&r, 0, i2, v2, m, &cs, scr, &c2);
        CHECK(a == b);
        CHECK(c1 == c2);
        for (dsmm_idx k = 0; k < a; k++) CHECK(i1[k] == i2[k] && v1[k] == v2[k]);
    }
    free(i1);
    free(i2);
    free(v1);
    free(v2);
    free(scr);
    free(t);
    return TEST_PASS;
}

// ------------------------------------------------------------------------------------------
// Reference interpretation (breadth-first searches, mcl's rules as docs/mcl.md states them).
// ------------------------------------------------------------------------------------------

typedef struct refmat {
    int n;
    int *ptr, *col;
    float *val;
} refmat;

static void ref_dag(const refmat *L, refmat *D)
{
    D->n = L->n;
    D->ptr = calloc((size_t)L->n + 1, sizeof(int));
    D->col = malloc(sizeof(int) * (size_t)(L->ptr[L->n] + 1));
    D->val = malloc(sizeof(float) * (size_t)(L->ptr[L->n] + 1));
    int q = 0;
    for (int c = 0; c < L->n; c++) {
        double self = 0, mx = -3.4028234663852886e38;
        for (int k = L->ptr[c]; k < L->ptr[c + 1]; k++) {
            if (L->col[k] == c) self = L->val[k];
            if (L->val[k] > mx) mx = L->val[k];
        }
        double bar = self < mx ? 0.999 * self + 0.001 * mx : self / 1.01;
        int s0 = q;
        double s = 0;
        for (int k = L->ptr[c]; k < L->ptr[c + 1]; k++)
            if ((double)L->val[k] >= bar) {
                D->col[q] = L->col[k];
                D->val[q++] = L->val[k];
                s += L->val[k];
            }
        int m = q - s0;
        q = s0;
        for (int k = s0; k < s0 + m; k++) {
            float x = s != 0 ? (float)((double)D->val[k] / s) : D->val[k];
            if ((double)x >= 1.0 / (m + 1)) {
                D->col[q] = D->col[k];
                D->val[q++] = x;
            }
        }
        D->ptr[c + 1] = q;
    }
}

typedef struct rcl {
    int size, first, id;
} rcl;

static int cmp_rcl(const void *a, const void *b)
{
    const rcl *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static void ref_interpret(const refmat *L, int64_t *cluster)
{
    refmat D;
    ref_dag(L, &D);
    int n = L->n;
    int *attr = calloc((size_t)n, sizeof(int)), *comp = malloc(sizeof(int) * (size_t)n);
    int *stack = malloc(sizeof(int) * (size_t)n), *mark = calloc((size_t)n, sizeof(int));
    rcl *cl = calloc((size_t)n + 1, sizeof(rcl));
    for (int c = 0; c < n; c++)
        for (int k = D.ptr[c]; k < D.ptr[c + 1]; k++)
            if (D.col[k] == c) attr[c] = 1;
    int nc = 0;
    for (int c = 0; c < n; c++) comp[c] = -1;
    for (int a = 0; a < n; a++) {
        if (!attr[a] || comp[a] >= 0) continue;
        int sp = 0, size = 0;
        stack[sp++] = a;
        comp[a] = nc;
        while (sp) {
            int x = stack[--sp];
            size++;
            for (int y = 0; y < n; y++) { // symmetric: x -> y or y -> x among attractors
                if (!attr[y] || comp[y] >= 0) continue;
                int edge = 0;
                for (int k = D.ptr[x]; k < D.ptr[x + 1] && !edge; k++) edge = D.col[k] == y;
                for (int k = D.ptr[y]; k < D.ptr[y + 1] && !edge; k++) edge = D.col[k] == x;
                if (edge) {
                    comp[y] = nc;
                    stack[sp++] = y;
                }
            }
        }
        cl[nc] = (rcl){size, a, nc};
        nc++;
    }
    qsort(cl, (size_t)nc, sizeof *cl, cmp_rcl);
    int *rank = malloc(sizeof(int) * (size_t)(nc + 1));
    for (int i = 0; i < nc; i++) rank[cl[i].id] = i;
    for (int v = 0; v < n; v++) {
        if (attr[v]) {
            cluster[v] = rank[comp[v]];
            continue;
        }
        // Everything reachable from v; the first system among them.
        for (int u = 0; u < n; u++) mark[u] = 0;
        int sp = 0, best = nc;
        for (int k = D.ptr[v]; k < D.ptr[v + 1]; k++)
            if (!mark[D.col[k]]) {
                mark[D.col[k]] = 1;
                stack[sp++] = D.col[k];
            }
        while (sp) {
            int x = stack[--sp];
            if (attr[x] && rank[comp[x]] < best) best = rank[comp[x]];
            for (int k = D.ptr[x]; k < D.ptr[x + 1]; k++)
                if (!mark[D.col[k]]) {
                    mark[D.col[k]] = 1;
                    stack[sp++] = D.col[k];
                }
        }
        cluster[v] = best; // nc: the extra cluster of the unreached
    }
    for (int i = 0; i <= nc; i++) cl[i] = (rcl){0, n, i};
    for (int v = 0; v < n; v++) {
        cl[cluster[v]].size++;
        if (v < cl[cluster[v]].first) cl[cluster[v]].first = v;
    }
    int m = 0;
    for (int i = 0; i <= nc; i++)
        if (cl[i].size) cl[m++] = cl[i];
    qsort(cl, (size_t)m, sizeof *cl, cmp_rcl);
    for (int i = 0; i < m; i++) rank[cl[i].id] = i;
    for (int v = 0; v < n; v++) cluster[v] = rank[cluster[v]];
    free(attr);
    free(comp);
    free(stack);
    free(mark);
    free(cl);
    free(rank);
    free(D.ptr);
    free(D.col);
    free(D.val);
}

// This rank's rows r0..r1 of the reference matrix L as an iterate's local rows.
static dsmm_status ref_local_rows(dsmm_ctx *ctx, const refmat *L, dsmm_idx r0, dsmm_idx r1,
                                  dsmmi_mcl_mat *M)
{
    dsmm_status st = dsmmi_mcl_mat_alloc(ctx, M, r1 - r0, L->ptr[r1] - L->ptr[r0]);
    for (dsmm_idx i = r0; i < r1 && st == DSMM_OK; i++) {
        M->rowptr[i - r0 + 1] = L->ptr[i + 1] - L->ptr[r0];
        for (int k = L->ptr[i]; k < L->ptr[i + 1]; k++) {
            M->col[k - L->ptr[r0]] = L->col[k];
            M->val[k - L->ptr[r0]] = L->val[k];
        }
    }
    return st;
}

static int test_interpret_vs_reference(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    for (int trial = 0; trial < 30; trial++) {
        int n = 1 + (int)(dsmm_rng_at(task_seed(5), 3, (uint64_t)trial) % 120);
        refmat L = {n, calloc((size_t)n + 1, sizeof(int)), malloc(sizeof(int) * (size_t)n * 4),
                    malloc(sizeof(float) * (size_t)n * 4)};
        int q = 0;
        for (int c = 0; c < n; c++) {
            // Limit-like columns: one or a few dominant rows, sometimes itself, some empty.
            uint64_t u = dsmm_rng_at(task_seed(6 + (uint64_t)trial), 4, (uint64_t)c);
            int deg = (int)(u % 4);
            int rows[4], nr = 0;
            for (int e = 0; e < deg; e++) {
                int r = (u >> (8 + 2 * e)) & 1 ? c : (int)((u >> (16 + 8 * e)) % (uint64_t)n);
                if (e == 0 && trial % 3 == 0) r = (int)((u >> 40) % (uint64_t)(n < 6 ? n : 6));
                int dup = 0;
                for (int t = 0; t < nr; t++) dup |= rows[t] == r;
                if (!dup) rows[nr++] = r;
            }
            for (int a = 0; a < nr; a++) // sort the rows
                for (int b = a + 1; b < nr; b++)
                    if (rows[b] < rows[a]) {
                        int t = rows[a];
                        rows[a] = rows[b];
                        rows[b] = t;
                    }
            for (int e = 0; e < nr; e++) {
                L.col[q] = rows[e];
                L.val[q++] = (e + (int)(u % 3)) % 2 ? 0.25f : 0.75f;
            }
            L.ptr[c + 1] = q;
        }
        int64_t *want = malloc(sizeof(int64_t) * (size_t)n);
        ref_interpret(&L, want);
        // This rank's rows of the equal split.
        dsmm_idx b[65];
        split_bounds(n, g_size, b);
        dsmmi_mcl_mat M = {0};
        dsmm_idx r0 = b[g_rank], r1 = b[g_rank + 1];
        CHECK_ALL_OK(ctx, ref_local_rows(ctx, &L, r0, r1, &M));
        dsmm_mcl_result res = {0};
        CHECK_ALL_OK(ctx, dsmmi_mcl_interpret(ctx, &M, r0, n, DSMM_MCL_OVERLAP_CUT,
                                              DSMM_MCL_SORT_REVSIZE, &res));
        int same = res.n == n;
        for (int v = 0; v < n && same; v++) same = res.cluster[v] == want[v];
        CHECK_ALL_MSG(same, "trial %d (n %d): clusters differ from the reference", trial, n);
        dsmm_mcl_result_free(&res);
        dsmmi_mcl_mat_free(ctx, &M);
        free(want);
        free(L.ptr);
        free(L.col);
        free(L.val);
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// The overlap and sort modes against a reference: each vertex's systems found by a search
// from it, the clusters built for the mode (systems in the interpretation's order, the
// unreached, then for SPLIT the vertices in overlap grouped as mcl 22-282 groups them: two
// go together when they reach two systems in common, transitively), then put in order by an
// insertion sort with the rules of docs/mcl.md.
typedef struct reflists {
    int nc;
    int *start, *members;
} reflists;

static int ref_lex(const int *a, int na, const int *b, int nb)
{
    for (int k = 0; k < na && k < nb; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return (na > nb) - (na < nb);
}

// 1: list a goes before list b in the order sort names.
static int ref_before(int sort, const int *a, int na, const int *b, int nb)
{
    if (sort == DSMM_MCL_SORT_SIZE) return ref_before(DSMM_MCL_SORT_REVSIZE, b, nb, a, na);
    if (sort == DSMM_MCL_SORT_LEX) return ref_lex(a, na, b, nb) < 0;
    if (sort == DSMM_MCL_SORT_REVSIZE) return na > nb || (na == nb && ref_lex(a, na, b, nb) < 0);
    return 0; // NONE: as built
}

// *mixed (SPLIT): 1 when a group holds two vertices that reach different sets of systems
// (where mcl's rule and "the same systems" part).
static void ref_interpret_modes(const refmat *L, int mode, int sort, reflists *out, int *noverlap,
                                int *mixed)
{
    refmat D;
    ref_dag(L, &D);
    int n = L->n;
    int64_t *first = malloc(sizeof(int64_t) * (size_t)n);
    ref_interpret(L, first); // CUT's clusters; the systems' order from a search of its own:
    int *attr = calloc((size_t)n, sizeof(int)), *comp = malloc(sizeof(int) * (size_t)n);
    int *stack = malloc(sizeof(int) * (size_t)n), *mark = calloc((size_t)n, sizeof(int));
    for (int c = 0; c < n; c++)
        for (int k = D.ptr[c]; k < D.ptr[c + 1]; k++)
            if (D.col[k] == c) attr[c] = 1;
    int nsys = 0;
    for (int c = 0; c < n; c++) comp[c] = -1;
    for (int a = 0; a < n; a++) { // systems: attractors joined by DAG edges either way
        if (!attr[a] || comp[a] >= 0) continue;
        int sp = 0;
        stack[sp++] = a;
        comp[a] = nsys;
        while (sp) {
            int x = stack[--sp];
            for (int y = 0; y < n; y++) {
                if (!attr[y] || comp[y] >= 0) continue;
                int edge = 0;
                for (int k = D.ptr[x]; k < D.ptr[x + 1] && !edge; k++) edge = D.col[k] == y;
                for (int k = D.ptr[y]; k < D.ptr[y + 1] && !edge; k++) edge = D.col[k] == x;
                if (edge) {
                    comp[y] = nsys;
                    stack[sp++] = y;
                }
            }
        }
        nsys++;
    }
    // The systems ranked as the interpretation orders them: attractor count, smallest vertex.
    int *cnt = calloc((size_t)nsys + 1, sizeof(int)),
        *low = malloc(sizeof(int) * (size_t)(nsys + 1));
    int *rank = malloc(sizeof(int) * (size_t)(nsys + 1));
    for (int c = 0; c < nsys; c++) low[c] = n;
    for (int v = 0; v < n; v++)
        if (attr[v]) {
            cnt[comp[v]]++;
            if (v < low[comp[v]]) low[comp[v]] = v;
        }
    for (int c = 0; c < nsys; c++) {
        rank[c] = 0;
        for (int d = 0; d < nsys; d++)
            if (cnt[d] > cnt[c] || (cnt[d] == cnt[c] && low[d] < low[c])) rank[c]++;
    }
    // reach[v * nsys + s]: v reaches system s (ranked).
    unsigned char *reach = calloc((size_t)n * (size_t)(nsys + 1), 1);
    int *nreach = calloc((size_t)n, sizeof(int));
    *noverlap = 0;
    for (int v = 0; v < n; v++) {
        if (attr[v]) {
            reach[(size_t)v * nsys + rank[comp[v]]] = 1;
            nreach[v] = 1;
            continue;
        }
        for (int u = 0; u < n; u++) mark[u] = 0;
        int sp = 0;
        for (int k = D.ptr[v]; k < D.ptr[v + 1]; k++)
            if (!mark[D.col[k]]) {
                mark[D.col[k]] = 1;
                stack[sp++] = D.col[k];
            }
        while (sp) {
            int x = stack[--sp];
            if (attr[x] && !reach[(size_t)v * nsys + rank[comp[x]]]) {
                reach[(size_t)v * nsys + rank[comp[x]]] = 1;
                nreach[v]++;
            }
            for (int k = D.ptr[x]; k < D.ptr[x + 1]; k++)
                if (!mark[D.col[k]]) {
                    mark[D.col[k]] = 1;
                    stack[sp++] = D.col[k];
                }
        }
        if (nreach[v] > 1) (*noverlap)++;
    }
    // SPLIT's groups: group[v] the smallest vertex in overlap joined to v through pairs that
    // reach two systems in common (a fixpoint of minimum labels, pair by pair).
    int *group = malloc(sizeof(int) * (size_t)n);
    for (int v = 0; v < n; v++) group[v] = v;
    *mixed = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int u = 0; u < n; u++)
            for (int v = u + 1; v < n; v++) {
                if (nreach[u] < 2 || nreach[v] < 2) continue;
                int common = 0;
                for (int s = 0; s < nsys; s++)
                    common += reach[(size_t)u * nsys + s] && reach[(size_t)v * nsys + s];
                if (common < 2 || group[u] == group[v]) continue;
                int g = group[u] < group[v] ? group[u] : group[v];
                group[u] = group[v] = g;
                changed = 1;
            }
    }
    for (int u = 0; u < n; u++)
        for (int v = u + 1; v < n; v++)
            if (nreach[u] > 1 && nreach[v] > 1 && group[u] == group[v] &&
                memcmp(reach + (size_t)u * nsys, reach + (size_t)v * nsys, (size_t)nsys) != 0)
                *mixed = 1;
    // Slots: systems, the unreached, then one per vertex in overlap (SPLIT; merged below).
    int nslots = nsys + 1 + n;
    int *size = calloc((size_t)nslots, sizeof(int));
    int *lists = malloc(sizeof(int) * (size_t)nslots * (size_t)n);
    for (int v = 0; v < n; v++) {
        if (nreach[v] == 0) {
            lists[(size_t)nsys * n + size[nsys]++] = v;
        } else if (nreach[v] == 1 || mode == DSMM_MCL_OVERLAP_CUT) {
            int s = 0;
            while (!reach[(size_t)v * nsys + s]) s++; // the first system it reaches
            lists[(size_t)s * n + size[s]++] = v;
        } else if (mode == DSMM_MCL_OVERLAP_KEEP) {
            for (int s = 0; s < nsys; s++)
                if (reach[(size_t)v * nsys + s]) lists[(size_t)s * n + size[s]++] = v;
        } else { // SPLIT: in its group's slot
            int slot = nsys + 1 + group[v];
            lists[(size_t)slot * n + size[slot]++] = v;
        }
    }
    int *order = malloc(sizeof(int) * (size_t)nslots), m = 0;
    int eff = mode == DSMM_MCL_OVERLAP_SPLIT && *noverlap > 0 && sort == DSMM_MCL_SORT_NONE
                  ? DSMM_MCL_SORT_REVSIZE
                  : sort;
    for (int c = 0; c < nslots; c++) {
        if (!size[c]) continue;
        int at = m; // insertion sort, stable
        while (at > 0 && ref_before(eff, lists + (size_t)c * n, size[c],
                                    lists + (size_t)order[at - 1] * n, size[order[at - 1]])) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = c;
        m++;
    }
    out->nc = m;
    out->start = calloc((size_t)m + 1, sizeof(int));
    out->members = malloc(sizeof(int) * ((size_t)n * (size_t)(nsys + 1) + 1));
    for (int k = 0; k < m; k++) {
        out->start[k + 1] = out->start[k] + size[order[k]];
        memcpy(out->members + out->start[k], lists + (size_t)order[k] * n,
               sizeof(int) * (size_t)size[order[k]]);
    }
    free(first);
    free(attr);
    free(comp);
    free(stack);
    free(mark);
    free(cnt);
    free(low);
    free(rank);
    free(reach);
    free(nreach);
    free(group);
    free(size);
    free(lists);
    free(order);
    free(D.ptr);
    free(D.col);
    free(D.val);
}

// res's lists equal the reference's, and cluster[v] is the first cluster that holds v.
static int same_lists(const dsmm_mcl_result *res, const reflists *want)
{
    if (res->nclusters != want->nc) return 0;
    for (int c = 0; c <= want->nc; c++)
        if (res->start[c] != want->start[c]) return 0;
    for (int k = 0; k < want->start[want->nc]; k++)
        if (res->members[k] != want->members[k]) return 0;
    for (int64_t v = 0; v < res->n; v++) {
        int64_t c = 0;
        while (c < res->nclusters) {
            int in = 0;
            for (int64_t k = res->start[c]; k < res->start[c + 1] && !in; k++)
                in = res->members[k] == v;
            if (in) break;
            c++;
        }
        if (res->cluster[v] != c) return 0;
    }
    return 1;
}

static int test_overlap_and_sort_modes(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int with_overlap = 0, with_groups = 0, with_mixed = 0;
    for (int trial = 0; trial < 40; trial++) {
        int n = 1 + (int)(dsmm_rng_at(task_seed(21), 3, (uint64_t)trial) % 90);
        refmat L = {n, calloc((size_t)n + 1, sizeof(int)), malloc(sizeof(int) * (size_t)n * 4),
                    malloc(sizeof(float) * (size_t)n * 4)};
        int q = 0;
        for (int c = 0; c < n; c++) {
            // Limit-like columns; equal halves make vertices that reach two systems (overlap),
            // and columns of vertices in overlap that point at each other make chains of them.
            uint64_t u = dsmm_rng_at(task_seed(22 + (uint64_t)trial), 4, (uint64_t)c);
            int rows[3], nr = 0;
            if (u % 3 == 0) {
                rows[nr++] = c; // an attractor
                if ((u >> 8) % 4 == 0 && c > 0) rows[nr++] = (int)((u >> 16) % (uint64_t)c);
            } else if (u % 3 == 1 && n > 1) { // two equal entries: two systems, maybe
                rows[nr++] = (int)((u >> 8) % (uint64_t)n);
                int r = (int)((u >> 24) % (uint64_t)n);
                if (r != rows[0] && r != c && rows[0] != c) rows[nr++] = r;
            } else if (n > 1) {
                rows[nr++] = (int)((u >> 8) % (uint64_t)n);
                if (rows[0] == c) nr = (u >> 40) % 2; // sometimes an empty column
            }
            if (nr == 2 && rows[1] < rows[0]) {
                int t = rows[0];
                rows[0] = rows[1];
                rows[1] = t;
            }
            for (int e = 0; e < nr; e++) {
                L.col[q] = rows[e];
                L.val[q++] = nr == 2 ? 0.5f : 1.0f;
            }
            L.ptr[c + 1] = q;
        }
        dsmm_idx b[65];
        split_bounds(n, g_size, b);
        dsmm_idx r0 = b[g_rank], r1 = b[g_rank + 1];
        for (int mode = 0; mode < 3; mode++)
            for (int sort = 0; sort < 4; sort++) {
                reflists want;
                int nov = 0, mixed = 0;
                ref_interpret_modes(&L, mode, sort, &want, &nov, &mixed);
                with_mixed += mixed && mode == DSMM_MCL_OVERLAP_SPLIT && sort == 0;
                with_overlap += nov > 0 && mode == 0 && sort == 0;
                dsmmi_mcl_mat M = {0};
                CHECK_ALL_OK(ctx, ref_local_rows(ctx, &L, r0, r1, &M));
                dsmm_mcl_result res = {0};
                CHECK_ALL_OK(ctx, dsmmi_mcl_interpret(ctx, &M, r0, n, (dsmm_mcl_overlap)mode,
                                                      (dsmm_mcl_sort)sort, &res));
                CHECK_ALL_MSG(res.n == n && same_lists(&res, &want) && res.overlap == nov,
                              "trial %d (n %d) overlap %d sort %d: %lld clusters, %lld in overlap; "
                              "the reference %d, %d",
                              trial, n, mode, sort, (long long)res.nclusters,
                              (long long)res.overlap, want.nc, nov);
                if (mode == DSMM_MCL_OVERLAP_SPLIT && sort == 0 && nov > 1) {
                    // Groups of two or more vertices in overlap (same systems) happen.
                    int64_t singles = 0;
                    for (int64_t c = 0; c < res.nclusters; c++)
                        singles += res.start[c + 1] - res.start[c] == 1;
                    with_groups += singles < nov;
                }
                dsmm_mcl_result_free(&res);
                dsmmi_mcl_mat_free(ctx, &M);
                free(want.start);
                free(want.members);
            }
        free(L.ptr);
        free(L.col);
        free(L.val);
    }
    // The trials reach what they test: overlap, split groups of several vertices, and groups
    // of vertices that reach different systems (mcl's rule, not "the same systems").
    CHECK_ALL_MSG(with_overlap >= 10 && with_groups >= 1 && with_mixed >= 1,
                  "%d trials with overlap, %d with groups, %d with mixed groups", with_overlap,
                  with_groups, with_mixed);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// dsmmi_mcl_connect against union-find: random graphs (directed edges, loops) and random
// clusterings, partitions and overlapping ones.
static int ref_find(int *parent, int x)
{
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

static int test_connect_vs_reference(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    int split_seen = 0;
    for (int trial = 0; trial < 30; trial++) {
        uint64_t sd = task_seed(40 + (uint64_t)trial);
        int n = 1 + (int)(dsmm_rng_at(sd, 0, 0) % 70);
        int deg = (int)(dsmm_rng_at(sd, 0, 1) % 4);
        // The graph: row v lists deg random vertices (any direction; loops and repeats kept).
        int *gptr = calloc((size_t)n + 1, sizeof(int)),
            *gcol = malloc(sizeof(int) * (size_t)(n * deg + 1));
        for (int v = 0; v < n; v++) {
            for (int e = 0; e < deg; e++)
                gcol[gptr[v] + e] = (int)(dsmm_rng_at(sd, 1, (uint64_t)(v * 4 + e)) % (uint64_t)n);
            gptr[v + 1] = gptr[v] + deg;
        }
        // The clusters: k random groups covering every vertex; with overlap, some vertices in
        // a second one too. Lists ascending.
        int k = 1 + (int)(dsmm_rng_at(sd, 0, 2) % (uint64_t)(n < 6 ? n : 6));
        int overlapping = trial % 3 == 2;
        int64_t *start = calloc((size_t)k + 1, sizeof(int64_t));
        int64_t *members = malloc(sizeof(int64_t) * (size_t)(2 * n + 1));
        int *in = calloc((size_t)n * (size_t)k, sizeof(int));
        for (int v = 0; v < n; v++) {
            in[(size_t)v * k + (v < k ? v : (int)(dsmm_rng_at(sd, 2, (uint64_t)v) % (uint64_t)k))] =
                1;
            if (overlapping && dsmm_rng_at(sd, 3, (uint64_t)v) % 4 == 0)
                in[(size_t)v * k + (int)(dsmm_rng_at(sd, 4, (uint64_t)v) % (uint64_t)k)] = 1;
        }
        int64_t q = 0;
        for (int c = 0; c < k; c++) {
            for (int v = 0; v < n; v++)
                if (in[(size_t)v * k + c]) members[q++] = v;
            start[c + 1] = q;
        }
        // Reference: memberships m joined along the graph's edges inside one cluster.
        int M = (int)q, *parent = malloc(sizeof(int) * (size_t)(M + 1));
        for (int m = 0; m < M; m++) parent[m] = m;
        for (int c = 0; c < k; c++)
            for (int64_t a = start[c]; a < start[c + 1]; a++)
                for (int e = gptr[members[a]]; e < gptr[members[a] + 1]; e++)
                    for (int64_t b = start[c]; b < start[c + 1]; b++)
                        if (members[b] == gcol[e])
                            parent[ref_find(parent, (int)a)] = ref_find(parent, (int)b);
        int ncc = 0;
        int *cc = malloc(sizeof(int) * (size_t)(M + 1)),
            *csize = calloc((size_t)M + 1, sizeof(int));
        int *clist = malloc(sizeof(int) * (size_t)(M + 1)),
            *cstart = calloc((size_t)M + 2, sizeof(int));
        for (int m = 0; m < M; m++) cc[m] = -1;
        for (int m = 0; m < M; m++) {
            int r = ref_find(parent, m);
            if (cc[r] < 0) cc[r] = ncc++;
            csize[cc[r]]++;
        }
        // The components as lists (memberships in order: ascending inside a cluster), then
        // largest first, ties by members.
        for (int c = 0; c < ncc; c++) cstart[c + 1] = cstart[c] + csize[c];
        int *fill = malloc(sizeof(int) * (size_t)(ncc + 1));
        memcpy(fill, cstart, sizeof(int) * (size_t)ncc);
        for (int m = 0; m < M; m++) clist[fill[cc[ref_find(parent, m)]]++] = (int)members[m];
        int *order = malloc(sizeof(int) * (size_t)(ncc + 1));
        for (int c = 0; c < ncc; c++) {
            int at = c;
            while (at > 0 && ref_before(DSMM_MCL_SORT_REVSIZE, clist + cstart[c], csize[c],
                                        clist + cstart[order[at - 1]], csize[order[at - 1]])) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = c;
        }
        dsmm_idx b[65];
        split_bounds(n, g_size, b);
        dsmm_idx r0 = b[g_rank], r1 = b[g_rank + 1];
        dsmm_idx *rp = malloc(sizeof(dsmm_idx) * (size_t)(r1 - r0 + 1));
        int32_t *col = malloc(sizeof(int32_t) * (size_t)(gptr[r1] - gptr[r0] + 1));
        for (dsmm_idx i = r0; i <= r1; i++) rp[i - r0] = gptr[i] - gptr[r0];
        for (int e = gptr[r0]; e < gptr[r1]; e++) col[e - gptr[r0]] = gcol[e];
        for (int force = 0; force < 2; force++) {
            dsmm_mcl_result res = {0};
            res.n = n;
            res.nclusters = k;
            res.start = malloc(sizeof(int64_t) * (size_t)(k + 1));
            res.members = malloc(sizeof(int64_t) * (size_t)(q + 1));
            res.cluster = malloc(sizeof(int64_t) * (size_t)n);
            memcpy(res.start, start, sizeof(int64_t) * (size_t)(k + 1));
            memcpy(res.members, members, sizeof(int64_t) * (size_t)q);
            CHECK_ALL_OK(ctx, dsmmi_mcl_connect(ctx, rp, col, r1 - r0, r0, force, &res));
            CHECK_ALL_MSG(res.components == ncc, "trial %d: %lld components, the reference %d",
                          trial, (long long)res.components, ncc);
            if (!force || ncc == k) { // unchanged
                CHECK_ALL(res.nclusters == k && res.orig_start == NULL);
                CHECK_ALL(memcmp(res.members, members, sizeof(int64_t) * (size_t)q) == 0);
            } else {
                split_seen++;
                int same = res.nclusters == ncc && res.orig_nclusters == k;
                for (int c = 0; c < ncc && same; c++) {
                    same = res.start[c + 1] - res.start[c] == csize[order[c]];
                    for (int t = 0; t < csize[order[c]] && same; t++)
                        same = res.members[res.start[c] + t] == clist[cstart[order[c]] + t];
                }
                same = same && memcmp(res.orig_members, members, sizeof(int64_t) * (size_t)q) == 0;
                CHECK_ALL_MSG(same, "trial %d: split clusters differ from the reference", trial);
                for (int v = 0; v < n && same; v++) { // cluster[v]: the first that holds v
                    int64_t c = res.cluster[v], there = 0;
                    for (int64_t t = res.start[c]; t < res.start[c + 1]; t++)
                        there |= res.members[t] == v;
                    for (int64_t d = 0; d < c && there; d++)
                        for (int64_t t = res.start[d]; t < res.start[d + 1]; t++)
                            there &= res.members[t] != v;
                    same = there != 0;
                }
                CHECK_ALL_MSG(same, "trial %d: cluster[] is not the first cluster", trial);
            }
            dsmm_mcl_result_free(&res);
        }
        free(rp);
        free(col);
        free(gptr);
        free(gcol);
        free(start);
        free(members);
        free(in);
        free(parent);
        free(cc);
        free(csize);
        free(clist);
        free(cstart);
        free(fill);
        free(order);
    }
    CHECK_ALL_MSG(split_seen >= 5, "only %d trials split a cluster", split_seen);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// ------------------------------------------------------------------------------------------
// Whole runs.
// ------------------------------------------------------------------------------------------

// A weighted graph every rank builds the same way: planted blocks plus noise, a few isolated
// vertices, symmetric; n vertices.
static dsmm_status weighted_graph(dsmm_ctx *ctx, dsmm_idx n, uint64_t seed, dsmm_csr **out)
{
    dsmm_coo *T = NULL;
    dsmm_status st = dsmm_coo_create(ctx, n, n, 16 * n, DSMM_DOUBLE, &T);
    if (st != DSMM_OK) return st;
    double *val = T->val;
    for (dsmm_idx i = 0; i < n - 3; i++)
        for (int e = 0; e < 6; e++) {
            uint64_t u = dsmm_rng_at(seed, (uint64_t)i, (uint64_t)e);
            dsmm_idx j = (u % 4 == 0) ? (dsmm_idx)((u >> 8) % (uint64_t)(n - 3))
                                      : (i / 20) * 20 + (dsmm_idx)((u >> 8) % 20);
            if (j >= n - 3 || j == i) continue;
            double w = 0.1 + (double)((u >> 32) % 1000) / 1000.0;
            T->row[T->nnz] = i;
            T->col[T->nnz] = j;
            val[T->nnz++] = w;
            T->row[T->nnz] = j;
            T->col[T->nnz] = i;
            val[T->nnz++] = w;
        }
    st = dsmm_coo_to_csr(ctx, T, DSMM_DUP_MAX, out);
    dsmm_coo_destroy(&T);
    return st;
}

static int same_clusters(const dsmm_mcl_result *a, const dsmm_mcl_result *b)
{
    if (a->n != b->n || a->nclusters != b->nclusters) return 0;
    for (dsmm_idx v = 0; v < a->n; v++)
        if (a->cluster[v] != b->cluster[v]) return 0;
    return 1;
}

// The fused one-rank result on a serial context (every rank computes it).
static dsmm_status fused_result(const dsmm_csr *A, const dsmm_mcl_params *p, dsmm_mcl_result *r)
{
    dsmm_ctx *s = NULL;
    dsmm_dist *G = NULL;
    dsmm_status st = dsmm_ctx_create(&s);
    if (st == DSMM_OK) st = dsmm_ctx_set_threads(s, 1);
    dsmm_ctx_set_log(s, DSMM_LOG_ERROR, NULL, NULL);
    if (st == DSMM_OK) st = dsmm_dist_scatter(s, 0, A, 0, 0, &G);
    dsmm_mcl_params q = *p;
    q.expand = DSMM_MCL_FUSED;
    q.checkpoint_dir = q.resume_dir = NULL;
    q.per_process_mem = 0; // the budget is the distributed run's
    if (st == DSMM_OK) st = dsmm_mcl_run(s, G, &q, r);
    dsmm_dist_destroy(&G);
    dsmm_ctx_destroy(&s);
    return st;
}

static int run_compare(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_mcl_params *p, const char *what,
                       dsmm_mcl_result *keep)
{
    dsmm_mcl_result want = {0}, got = {0};
    dsmm_dist *G = NULL;
    CHECK_ALL(fused_result(A, p, &want) == DSMM_OK);
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    dsmm_mcl_params q = *p;
    q.expand = DSMM_MCL_DIST;
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &q, &got));
    CHECK_ALL_MSG(same_clusters(&want, &got), "%s: %lld clusters, fused %lld", what,
                  (long long)got.nclusters, (long long)want.nclusters);
    // Stage sums round differently from one running sum; the chaos may cross 1e-4 one
    // iteration apart (docs/mcl.md "Exactness"), the clusters may not differ.
    CHECK_ALL(abs(got.iterations - want.iterations) <= 1);
    CHECK_ALL(got.nclusters >= 1 && got.nclusters <= A->nrows);
    CHECK_ALL(got.niters >= 1 && want.niters >= 1);
    // SUMMA's time components, per iteration of the distributed run only: each within the
    // iteration's wall time (the largest rank's, summed over the phases; 20 ms for the ranks'
    // skew when oversubscribed, far below a sum over ranks or over iterations).
    for (int k = 0; k < got.niters; k++) {
        const dsmm_mcl_iter *it = &got.iters[k];
        double c[4] = {it->comp_seconds, it->comm_seconds, it->acc_seconds, it->wait_seconds};
        for (int m = 0; m < 4; m++)
            CHECK_ALL_MSG(c[m] >= 0 && c[m] <= it->seconds + 0.02,
                          "%s: iteration %d component %d: %g s of %g", what, it->iteration, m, c[m],
                          it->seconds);
    }
    CHECK_ALL(want.iters[0].comp_seconds == -1 && want.iters[0].wait_seconds == -1);
    // The first iteration multiplies the same iterate both ways: the same count of products
    // (the fused expansion counts per column, SUMMA per row of its stage products).
    CHECK_ALL_MSG(got.iters[0].flops == want.iters[0].flops && want.iters[0].flops > 0 &&
                      got.iters[0].nnz_expand == want.iters[0].nnz_expand,
                  "%s: first iteration's flops %.0f, fused %.0f", what, got.iters[0].flops,
                  want.iters[0].flops);
    if (keep) {
        *keep = got;
        got = (dsmm_mcl_result){0};
    }
    dsmm_mcl_result_free(&want);
    dsmm_mcl_result_free(&got);
    dsmm_dist_destroy(&G);
    return TEST_PASS;
}

static int test_dist_equals_fused(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 123, task_seed(11), &A));
    const double infl[] = {1.6, 4.0};
    for (int k = 0; k < 2; k++) {
        p.inflation = infl[k];
        dsmm_mcl_result r = {0};
        if (run_compare(ctx, A, &p, "weighted graph", &r) != TEST_PASS) return TEST_FAIL;
        // The isolated vertices are singletons, and clusters are numbered by size.
        for (dsmm_idx v = A->nrows - 3; v < A->nrows; v++) {
            int alone = 1;
            for (dsmm_idx u = 0; u < A->nrows; u++) alone &= u == v || r.cluster[u] != r.cluster[v];
            CHECK_ALL(alone);
        }
        dsmm_mcl_result_free(&r);
    }
    dsmm_csr_destroy(&A);
    // A tight scheme (selection and recovery cut most columns): the candidates matter. The
    // real networks run against mcl itself in tests/cli/test_cli_mcl.sh (collins at 2, 4 ranks).
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 90, task_seed(14), &A));
    p.inflation = 2.0;
    p.scheme = 1;
    p.select_number = 4;
    p.recover_number = 7;
    if (run_compare(ctx, A, &p, "select 4, recover 7", NULL) != TEST_PASS) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// A budget that makes a distributed run take phases: over the iterations of r, the largest of
// a quarter of the estimated unpruned product beside the iterate's resident share.
static double quarter_budget(const dsmm_mcl_result *r)
{
    double budget = 0.0;
    for (int k = 0; k < r->iterations; k++) {
        double b = r->iters[k].resident_bytes + r->iters[k].est_bytes / 4;
        if (b > budget) budget = b;
    }
    return budget;
}

static int test_phases_algos(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 100, task_seed(12), &A));
    p.phases = 4;
    if (run_compare(ctx, A, &p, "4 phases", NULL) != TEST_PASS) return TEST_FAIL;
    p.phases = 0;
    // A budget of a quarter of the estimated unpruned product beside the iterate's share.
    dsmm_mcl_result r = {0};
    dsmm_dist *G = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    p.expand = DSMM_MCL_DIST;
    p.main_loop = 1;
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &r));
    CHECK_ALL(r.iters[0].phases == 1 && r.iters[0].est_bytes > 0);
    dsmm_mcl_result_free(&r);
    p.main_loop = 10000;
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &r));
    for (int k = 0; k < r.iterations; k++) CHECK_ALL(r.iters[k].phases == 1);
    double budget = quarter_budget(&r);
    dsmm_mcl_result_free(&r);
    p.per_process_mem = (size_t)budget;
    dsmm_mcl_result b = {0};
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &b));
    int most = 0;
    for (int k = 0; k < b.iterations; k++)
        if (b.iters[k].phases > most) most = b.iters[k].phases;
    CHECK_ALL_MSG(most >= 3, "at most %d phases", most); // about 4 in the heaviest iteration
    if (run_compare(ctx, A, &p, "budget of a quarter", NULL) != TEST_PASS) return TEST_FAIL;
    dsmm_mcl_result_free(&b);
    // Too small for one column: a clear failure on every rank.
    p.per_process_mem = 1000;
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &b), DSMM_ERR_NOMEM);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "too small") != NULL);
    p.per_process_mem = 0;
    dsmm_dist_destroy(&G);
    // Other distributed SpGEMMs and SUMMA's accumulations give the same clusters.
    p.dist.alg = DSMM_DIST_RDMA_C;
    if (run_compare(ctx, A, &p, "rdma-c", NULL) != TEST_PASS) return TEST_FAIL;
    p.dist.alg = DSMM_DIST_SUMMA;
    p.dist.accumulate = DSMM_ACC_MERGE;
    dsmm_mcl_result kept = {0};
    if (run_compare(ctx, A, &p, "summa merge", &kept) != TEST_PASS) return TEST_FAIL;
    // Unpipelined: no idle times measured.
    for (int k = 0; k < kept.iterations; k++)
        CHECK_ALL(kept.iters[k].cpu_idle_seconds == -1 && kept.iters[k].gpu_products == -1 &&
                  kept.iters[k].gpu_idle_seconds == -1);
    dsmm_mcl_result_free(&kept);
    // Pipelined, also with AUTO accumulation (which then merges by stages): with two threads
    // and more than one stage (more than one rank), every iteration has the broadcasting
    // thread's idle time, within its seconds, and no GPU products, so no GPU idle time.
    p.dist.pipeline = 1;
    int saved_threads = dsmm_ctx_threads(ctx);
    CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, 2));
    for (int v = 0; v < 2; v++) {
        p.dist.accumulate = v ? DSMM_ACC_AUTO : DSMM_ACC_BINARY;
        if (run_compare(ctx, A, &p, v ? "summa auto pipelined" : "summa binary pipelined", &kept) !=
            TEST_PASS)
            return TEST_FAIL;
        for (int k = 0; k < kept.iterations; k++) {
            const dsmm_mcl_iter *it = &kept.iters[k];
            int ok = g_size > 1
                         ? it->cpu_idle_seconds >= 0 && it->cpu_idle_seconds <= it->seconds &&
                               it->gpu_products == 0 && it->merge_peak_bytes > 0
                         : it->cpu_idle_seconds == -1 && it->gpu_products == -1;
            CHECK_ALL_MSG(ok && it->gpu_idle_seconds == -1,
                          "iteration %d: cpu idle %g s of %g, %lld GPU products, GPU idle %g",
                          it->iteration, it->cpu_idle_seconds, it->seconds,
                          (long long)it->gpu_products, it->gpu_idle_seconds);
        }
        dsmm_mcl_result_free(&kept);
    }
    CHECK_ALL_OK(ctx, dsmm_ctx_set_threads(ctx, saved_threads));
    p.dist.pipeline = 0;
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Sizing the distributed expansion: the exact count of SUMMA's stage products, Cohen's estimate
// and auto's choice between them give the same clusters as the fused run; each iteration says
// which ran, auto follows its rule (exact when flops < 4 * 8 keys * nnz of the iterate), and
// the exact count bounds the unpruned product from above (equals it on one rank: one stage).
static int test_estimate_modes(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    CHECK_ALL(p.estimate_keys == -1);
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 100, task_seed(15), &A));
    const int modes[] = {0, 8, -1, 3};
    dsmm_mcl_result r[4] = {{0}};
    for (int m = 0; m < 4; m++) {
        p.estimate_keys = modes[m];
        if (run_compare(ctx, A, &p, "estimate modes", &r[m]) != TEST_PASS) return TEST_FAIL;
    }
    int exact_seen = 0, cohen_seen = 0;
    for (int m = 0; m < 4; m++) {
        CHECK_ALL(r[m].iterations == r[0].iterations && same_clusters(&r[0], &r[m]));
        for (int k = 0; k < r[m].iterations; k++) {
            const dsmm_mcl_iter *it = &r[m].iters[k], *e = &r[0].iters[k];
            int want = modes[m];
            if (want == -1) want = it->flops < 4.0 * 8.0 * (double)it->nnz_in ? 0 : 8;
            CHECK_ALL_MSG(it->estimate_keys == want && it->flops == e->flops && it->flops > 0 &&
                              it->nnz_expand == e->nnz_expand && it->estimate_seconds >= 0,
                          "mode %d iteration %d: keys %d (want %d), flops %g (exact run %g)",
                          modes[m], it->iteration, it->estimate_keys, want, it->flops, e->flops);
            if (modes[m] == -1) {
                exact_seen += want == 0;
                cohen_seen += want == 8;
            }
        }
    }
    for (int k = 0; k < r[0].iterations; k++) {
        const dsmm_mcl_iter *it = &r[0].iters[k];
        double counted = it->est_bytes * g_size / 24.0;
        CHECK_ALL_MSG(g_size == 1 ? counted == (double)it->nnz_expand
                                  : counted >= (double)it->nnz_expand,
                      "iteration %d: counted %.0f entries, the product has %lld", it->iteration,
                      counted, (long long)it->nnz_expand);
    }
    // The graph's first iterations are heavy, its last ones light: auto took both.
    CHECK_ALL_MSG(exact_seen > 0 && cohen_seen > 0, "auto: %d exact, %d estimated", exact_seen,
                  cohen_seen);
    // Phases sized by the exact count: a quarter of the heaviest product, the same clusters.
    double budget = quarter_budget(&r[0]);
    for (int m = 0; m < 4; m++) dsmm_mcl_result_free(&r[m]);
    p.estimate_keys = 0;
    p.per_process_mem = (size_t)budget;
    dsmm_mcl_result b = {0};
    if (run_compare(ctx, A, &p, "exact count, budget of a quarter", &b) != TEST_PASS)
        return TEST_FAIL;
    int most = 0;
    for (int k = 0; k < b.iterations; k++)
        if (b.iters[k].phases > most) most = b.iters[k].phases;
    CHECK_ALL_MSG(most >= 3, "at most %d phases", most);
    dsmm_mcl_result_free(&b);
    p.per_process_mem = 0;
    // Key counts Cohen's estimator cannot use: the same error on every rank.
    dsmm_dist *G = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    const int bad[] = {1, 2, -2};
    for (int m = 0; m < 3; m++) {
        p.estimate_keys = bad[m];
        CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &b), DSMM_ERR_ARG);
        CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "estimate_keys") != NULL);
    }
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// The replicated expansion: every rank gathers the iterate and expands a range of equal work
// with the fused code, so every iteration is the one-rank run's (same counts, same clusters),
// at any rank count; AUTO takes it when its working set fits the budget and SUMMA when not.
static int test_replicated(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 150, task_seed(16), &A));
    dsmm_mcl_result want = {0}, got = {0};
    CHECK_ALL(fused_result(A, &p, &want) == DSMM_OK);
    dsmm_dist *G = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    const dsmm_mcl_expand modes[] = {DSMM_MCL_REPLICATED, DSMM_MCL_AUTO};
    for (int m = 0; m < 2; m++) {
        p.expand = modes[m];
        CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &got));
        CHECK_ALL(same_clusters(&want, &got) && got.iterations == want.iterations);
        for (int k = 0; k < got.iterations; k++) {
            const dsmm_mcl_iter *a = &got.iters[k], *b = &want.iters[k];
            dsmm_mcl_expand e =
                g_size == 1 && modes[m] == DSMM_MCL_AUTO ? DSMM_MCL_FUSED : DSMM_MCL_REPLICATED;
            CHECK_ALL_MSG(a->expand == e && a->nnz_expand == b->nnz_expand &&
                              a->nnz_pruned == b->nnz_pruned && a->chaos == b->chaos &&
                              a->phases == 1 && a->estimate_keys == -1,
                          "mode %d iteration %d: expand %d, %lld/%lld expanded, chaos %g/%g",
                          (int)modes[m], a->iteration, (int)a->expand, (long long)a->nnz_expand,
                          (long long)b->nnz_expand, a->chaos, b->chaos);
        }
        dsmm_mcl_result_free(&got);
    }
    if (g_size > 1) {
        // The budget SUMMA runs in with phases (a quarter of its heaviest product beside the
        // iterates it holds, as in test_phases_algos). From 3 ranks on it is below the
        // replicated working set in the heavy iterations, so AUTO takes SUMMA there; at 2
        // ranks SUMMA's resident share (three copies of the iterate on the grid, halved, and
        // the rank's rows) is as large as the whole iterate, so either may fit. The clusters
        // are the same either way; REPLICATED alone fails with a clear message.
        p.expand = DSMM_MCL_DIST;
        CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &got));
        double budget = quarter_budget(&got);
        dsmm_mcl_result_free(&got);
        p.per_process_mem = (size_t)budget;
        p.expand = DSMM_MCL_AUTO;
        CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &got));
        CHECK_ALL(same_clusters(&want, &got));
        int dist = 0;
        for (int k = 0; k < got.iterations; k++) dist += got.iters[k].expand == DSMM_MCL_DIST;
        CHECK_ALL_MSG(g_size < 3 || dist > 0, "no SUMMA iteration under a budget of %zu",
                      p.per_process_mem);
        dsmm_mcl_result_free(&got);
        if (dist > 0) {
            p.expand = DSMM_MCL_REPLICATED;
            CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &got), DSMM_ERR_NOMEM);
            CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "too small") != NULL);
        }
    }
    p.per_process_mem = 0;
    p.expand = (dsmm_mcl_expand)7;
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &got), DSMM_ERR_ARG);
    dsmm_mcl_result_free(&want);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_checkpoint_resume(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_csr *A = NULL;
    dsmm_dist *G = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    p.inflation = 1.6;
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 80, task_seed(13), &A));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    dsmm_mcl_result whole = {0}, part = {0}, rest = {0};
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &whole));
    CHECK_ALL(whole.converged && whole.iterations > 4);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_path("ckpt")); // rank 0's scratch directory, for all
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (g_rank == 0) mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    p.checkpoint_dir = dir;
    p.main_loop = 3; // "interrupted" after three iterations
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &part));
    CHECK_ALL(part.iterations == 3 && !part.converged);
    p.checkpoint_dir = NULL;
    p.resume_dir = dir;
    p.main_loop = 10000;
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &rest));
    CHECK_ALL(same_clusters(&whole, &rest));
    CHECK_ALL_EQ(rest.iterations, whole.iterations);
    // The records are the iterations run since the checkpoint, measured as the whole run's.
    CHECK_ALL_EQ(whole.niters, whole.iterations);
    CHECK_ALL_EQ(part.niters, 3);
    CHECK_ALL_EQ(rest.niters, whole.iterations - 3);
    for (int k = 0; k < rest.niters && k + 3 < whole.niters; k++) {
        const dsmm_mcl_iter *a = &rest.iters[k], *b = &whole.iters[k + 3];
        CHECK_ALL_MSG(a->iteration == k + 4 && a->flops == b->flops && a->flops > 0 &&
                          a->nnz_expand == b->nnz_expand && a->nnz_pruned == b->nnz_pruned,
                      "record %d: iteration %d, flops %.0f against %.0f", k, a->iteration, a->flops,
                      b->flops);
    }
    // A checkpoint of other settings is refused.
    p.inflation = 3.0;
    dsmm_mcl_result bad = {0};
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &bad), DSMM_ERR_ARG);
    p.inflation = 1.6;
    dsmm_ctx_clear_error(ctx); // the first error is kept until cleared
    // So is one of another graph: one weight changed, or the same graph with two vertices'
    // numbers swapped (the same edges, numbered otherwise); the message says which.
    for (int change = 0; change < 2; change++) {
        dsmm_csr *A2 = NULL;
        dsmm_dist *G2 = NULL;
        if (change == 0) {
            CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &A2));
            ((double *)A2->val)[A2->nnz / 2] *= 1.5;
        } else {
            dsmm_idx perm[80];
            for (dsmm_idx i = 0; i < 80; i++) perm[i] = i;
            perm[3] = 41;
            perm[41] = 3;
            CHECK_ALL_OK(ctx, dsmm_csr_permute(ctx, A, perm, perm, &A2));
        }
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A2, 0, 0, &G2));
        CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G2, &p, &bad), DSMM_ERR_ARG);
        CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "made from another graph") != NULL,
                      "change %d: %s", change, dsmm_ctx_last_error(ctx));
        dsmm_ctx_clear_error(ctx);
        dsmm_dist_destroy(&G2);
        dsmm_csr_destroy(&A2);
    }
    // The fingerprint depends on the graph only, not on how it is spread over the ranks.
    uint64_t fp = 0, fp_row = 0;
    dsmm_dist *Grow = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, g_size, 1, &Grow));
    CHECK_ALL_OK(ctx, dsmmi_mcl_graph_fp(ctx, G, &fp));
    CHECK_ALL_OK(ctx, dsmmi_mcl_graph_fp(ctx, Grow, &fp_row));
    CHECK_ALL(fp == fp_row && fp != 0);
    dsmm_dist_destroy(&Grow);
    p.resume_dir = "/nonexistent/dir";
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &bad), DSMM_ERR_IO);
    // The consuming form: the same clusters, G gone afterwards, on success and on error.
    p.resume_dir = NULL;
    dsmm_mcl_result once = {0};
    CHECK_ALL_OK(ctx, dsmm_mcl_run_consume(ctx, &G, &p, &once));
    CHECK_ALL(G == NULL);
    CHECK_ALL(same_clusters(&whole, &once));
    CHECK_ALL_EQ(once.iterations, whole.iterations);
    dsmm_mcl_result_free(&once);
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    p.inflation = 0.0;
    CHECK_ALL_ST(ctx, dsmm_mcl_run_consume(ctx, &G, &p, &bad), DSMM_ERR_ARG);
    CHECK_ALL(G == NULL && bad.cluster == NULL);
    CHECK_ALL_ST(ctx, dsmm_mcl_run_consume(ctx, NULL, &p, &bad), DSMM_ERR_ARG);
    dsmm_mcl_result_free(&whole);
    dsmm_mcl_result_free(&part);
    dsmm_mcl_result_free(&rest);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_errors_and_edges(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_coo *T = NULL;
    dsmm_csr *A = NULL;
    dsmm_dist *G = NULL;
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    dsmm_mcl_result r = {0};
    // Negative and NaN weights.
    const double bad[] = {-1.0, NAN};
    for (int k = 0; k < 2; k++) {
        CHECK_ALL_OK(ctx, dsmm_coo_create(ctx, 4, 4, 4, DSMM_DOUBLE, &T));
        T->row[0] = 0, T->col[0] = 1, ((double *)T->val)[0] = 1.0;
        T->row[1] = 2, T->col[1] = 3, ((double *)T->val)[1] = bad[k];
        T->nnz = 2;
        CHECK_ALL_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &A));
        CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
        CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &r), DSMM_ERR_ARG);
        CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "weight") != NULL, "%s",
                      dsmm_ctx_last_error(ctx));
        CHECK_ALL(r.cluster == NULL);
        dsmm_dist_destroy(&G);
        dsmm_csr_destroy(&A);
        dsmm_coo_destroy(&T);
    }
    // Not square; bad parameters.
    CHECK_ALL_OK(ctx, dsmm_csr_create(ctx, 3, 4, 0, DSMM_DOUBLE, &A));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &r), DSMM_ERR_DIM);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    // A graph without edges: every vertex alone, in order.
    CHECK_ALL_OK(ctx, dsmm_csr_create(ctx, 7, 7, 0, DSMM_DOUBLE, &A));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    p.scheme = 9;
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &r), DSMM_ERR_ARG);
    p.scheme = 6;
    p.inflation = 0.0;
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &r), DSMM_ERR_ARG);
    p.inflation = 2.0;
    if (g_size > 1) {
        p.expand = DSMM_MCL_FUSED;
        CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &r), DSMM_ERR_ARG);
        p.expand = DSMM_MCL_AUTO;
    }
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &r));
    CHECK_ALL(r.nclusters == 7 && r.attractors == 7 && r.garbage == 0);
    for (int v = 0; v < 7; v++) CHECK_ALL(r.cluster[v] == v);
    dsmm_mcl_result_free(&r);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

static int option_vs_graph(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_mcl_params *opt,
                           const dsmm_csr *B, const char *what);

// mcl's value transforms: every step against its formula (the same double operations), mcl's
// values for the logarithms of 0, the normalised text, the errors, the reader's abc_map (mapped
// before repeated pairs merge), and -tf in a run equal to the graph transformed by hand.
static int test_tf(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    dsmm_mcl_tf *tf = NULL;
    const double l10 = log(10.0), big = (double)FLT_MAX;
    static const struct {
        const char *spec;
        double in, want;
    } cases[] = {
        {"gt(0.5)", 0.5, 0.0},
        {"gt(0.5)", 0.6, 0.6},
        {"gq(0.5)", 0.5, 0.5},
        {"gq(0.5)", 0.4, 0.0},
        {"lt(2)", 2.0, 0.0},
        {"lt(2)", 1.5, 1.5},
        {"lq(2)", 2.0, 2.0},
        {"lq(2)", 2.5, 0.0},
        {"ceil(200)", 1e300, 200.0},
        {"ceil(200)", 3.0, 3.0},
        {"floor(0.9)", 0.2, 0.9},
        {"floor(0.9)", 1.5, 1.5},
        {"add(-0.25)", 1.0, 0.75},
        {"mul(3)", 0.25, 0.75},
        {"pow(2)", 3.0, 9.0},
        {"pow(0.5)", 4.0, 2.0},
        {"log()", 1.0, 0.0},
        {"log()", 0.0, -(double)FLT_MAX},
        {"log(10)", 0.0, -(double)FLT_MAX},
        {"neglog()", 0.0, (double)FLT_MAX},
        {"exp()", 0.0, 1.0},
        {"abs()", -2.0, 2.0},
        {"gq(5),add(-4)", 4.9, -4.0},
        {" gq( 5 ) , add(-4) ", 6.0, 2.0},
        {"", 0.3, 0.3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, cases[c].spec, 0.0, &tf));
        double got = dsmm_mcl_tf_apply(tf, cases[c].in);
        CHECK_ALL_MSG(got == cases[c].want, "'%s'(%g) = %.17g, want %.17g", cases[c].spec,
                      cases[c].in, got, cases[c].want);
        dsmm_mcl_tf_destroy(&tf);
    }
    // Bases: log_b w = ln w / ln b, neglog, exp(b) = b^w.
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "log(2)", 0.0, &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 8.0) == log(8.0) / log(2.0));
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "neglog(10)", 0.0, &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 0.01) == -log(0.01) / l10);
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "exp(2)", 0.0, &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 2.5) == pow(2.0, 2.5));
    dsmm_mcl_tf_destroy(&tf);
    // The stream's negated logs first (mcl's --abc-neg-log10): 0 gives FLT_MAX / ln 10, as
    // mcl 22-282 writes it (1.477827e+38); below 0 NaN; the spec's steps after it.
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, NULL, 10.0, &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 1e-50) == -log(1e-50) / l10);
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 0.0) == big / l10);
    CHECK_ALL(isnan(dsmm_mcl_tf_apply(tf, -1.0)));
    CHECK_ALL(strcmp(dsmm_mcl_tf_spec(tf), "") == 0);
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "ceil(200)", 10.0, &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 0.0) == 200.0 && dsmm_mcl_tf_apply(tf, 1e-20) == 20.0);
    CHECK_ALL(strcmp(dsmm_mcl_tf_spec(tf), "ceil(200)") == 0);
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, NULL, exp(1.0), &tf));
    CHECK_ALL(dsmm_mcl_tf_apply(tf, 0.0) == big && dsmm_mcl_tf_apply(tf, 1.0) == 0.0);
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, " gq( 5 ) , add(-4),abs( ) ", 0.0, &tf));
    CHECK_ALL_MSG(strcmp(dsmm_mcl_tf_spec(tf), "gq(5),add(-4),abs()") == 0, "%s",
                  dsmm_mcl_tf_spec(tf));
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "gq( 0.3 ),mul(1e-30),pow(-2.5E+2)", 0.0, &tf));
    CHECK_ALL_MSG(strcmp(dsmm_mcl_tf_spec(tf), "gq(0.3),mul(1e-30),pow(-250)") == 0, "%s",
                  dsmm_mcl_tf_spec(tf));
    dsmm_mcl_tf_destroy(&tf);
    // Errors: nothing made, the message names the step.
    static const char *bad[] = {
        "bogus(1)", "gt()",         "abs(2)",     "gt(1",       "gt(x)", "log(1)",  "log(-2)",
        "gt(1),",   "gt(1) mul(2)", ",",          "gt(inf)",    "gt",    "(1)",     "gt(1)),",
        "#knn()",   "#knn(-1)",     "#ceilnb(x)", "#knn(1e10)", "#",     "# knn(2)"};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        dsmm_ctx_clear_error(ctx); // the context keeps the first failure's message until then
        CHECK_ALL_ST(ctx, dsmm_mcl_tf_parse(ctx, bad[b], 0.0, &tf), DSMM_ERR_ARG);
        CHECK_ALL(tf == NULL);
        CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "mcl transform") != NULL, "%s: %s", bad[b],
                      dsmm_ctx_last_error(ctx));
    }
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_ST(ctx, dsmm_mcl_tf_parse(ctx, "gt(1) mul(2)", 0.0, &tf), DSMM_ERR_ARG);
    CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "',' expected between steps at 'mul(2)'") !=
                      NULL,
                  "%s", dsmm_ctx_last_error(ctx));
    static const char *unsupported[] = {"#step()", "gt(1),#step(10)", "acos()", "rand(0.5)"};
    for (size_t b = 0; b < sizeof unsupported / sizeof unsupported[0]; b++) {
        CHECK_ALL_ST(ctx, dsmm_mcl_tf_parse(ctx, unsupported[b], 0.0, &tf), DSMM_ERR_UNSUPPORTED);
        CHECK_ALL(tf == NULL);
    }
    CHECK_ALL_ST(ctx, dsmm_mcl_tf_parse(ctx, NULL, 1.0, &tf), DSMM_ERR_ARG);
    CHECK_ALL_ST(ctx, dsmm_mcl_tf_parse(ctx, NULL, -10.0, &tf), DSMM_ERR_ARG);
    CHECK_ALL(dsmm_mcl_tf_apply(NULL, 0.7) == 0.7);
    // Graph-wide steps: counted, normalised, skipped by dsmm_mcl_tf_apply.
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, " add(1) , #knn( 20 ),mul(2),#ceilnb(2.5)", 0.0, &tf));
    CHECK_ALL_MSG(strcmp(dsmm_mcl_tf_spec(tf), "add(1),#knn(20),mul(2),#ceilnb(2.5)") == 0, "%s",
                  dsmm_mcl_tf_spec(tf));
    CHECK_ALL(dsmm_mcl_tf_graph_steps(tf) == 2 && dsmm_mcl_tf_apply(tf, 1.0) == 4.0);
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL(dsmm_mcl_tf_graph_steps(NULL) == 0);

    // The reader maps each abc weight before repeated pairs merge: a b's 1e-50 and 1e-20 give
    // max(50, 20), not -log10(max(1e-50, 1e-20)); a line without a weight maps 1.
    const char *txt = "a b 1e-50\na b 1e-20\na c\nc d 0\n";
    dsmm_read_opts ro;
    dsmm_read_opts_init(&ro);
    ro.dup = DSMM_DUP_MAX;
    ro.format = DSMM_FORMAT_ABC;
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, NULL, 10.0, &tf));
    ro.abc_map = dsmm_mcl_tf_apply;
    ro.abc_map_arg = tf;
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    CHECK_ALL_OK(ctx, dsmm_read_buffer(ctx, txt, strlen(txt), "t.abc", &ro, &A, &L, NULL));
    CHECK_ALL(A->nnz == 3 && A->type == DSMM_DOUBLE);
    const double want[3] = {50.0, -log(1.0) / l10, big / l10}; // a-b, a-c, c-d
    for (int e = 0; e < 3; e++) CHECK_ALL(dsmm_csr_value(A, e) == want[e]);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    const char *neg = "a b 0.5\nb c -1\n";
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_ST(ctx, dsmm_read_buffer(ctx, neg, strlen(neg), "t.abc", &ro, &A, &L, NULL),
                 DSMM_ERR_FORMAT);
    CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "t.abc:2: weight '-1' becomes") != NULL, "%s",
                  dsmm_ctx_last_error(ctx));
    CHECK_ALL(A == NULL && L == NULL);
    dsmm_mcl_tf_destroy(&tf);

    // -tf in a run: the same clusters as the graph transformed by hand (each weight a float,
    // transformed, a float again: what the run stores), at this test's rank count.
    CHECK_ALL_OK(ctx, weighted_graph(ctx, 150, task_seed(31), &A));
    dsmm_csr *B = NULL;
    CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_DOUBLE, &B));
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "gq(0.4),pow(3),add(0.01)", 0.0, &tf));
    double *bv = B->val;
    for (dsmm_idx k = 0; k < B->nnz; k++)
        bv[k] = (double)(float)dsmm_mcl_tf_apply(tf, (double)(float)bv[k]);
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    p.tf = tf;
    if (option_vs_graph(ctx, A, &p, B, "-tf")) return TEST_FAIL;
    // A step that makes a weight negative: refused, naming the transform.
    dsmm_dist *G = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    dsmm_mcl_tf_destroy(&tf);
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "add(-0.5)", 0.0, &tf));
    p.tf = tf;
    dsmm_mcl_result rb = {0};
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_ST(ctx, dsmm_mcl_run(ctx, G, &p, &rb), DSMM_ERR_ARG);
    CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "after -tf 'add(-0.5)'") != NULL, "%s",
                  dsmm_ctx_last_error(ctx));
    CHECK_ALL(rb.cluster == NULL);
    dsmm_mcl_tf_destroy(&tf);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// ------------------------------------------------------------------------------------------
// mcl's graph-wide transforms against a dense reference.
// ------------------------------------------------------------------------------------------

static int cmp_desc_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

// Each row's choice of its k highest entries, as mcl's mclvSelectHighest (sorting instead of
// selecting): the k-th largest value f; ties at f beyond k: the bar is f * (1 + FLT_EPSILON).
static void ref_choose(const float *W, const unsigned char *E, int N, int k, unsigned char *C,
                       float *tmp)
{
    for (int i = 0; i < N; i++) {
        int n = 0;
        for (int j = 0; j < N; j++)
            if (E[i * N + j]) tmp[n++] = W[i * N + j];
        double bar = -INFINITY;
        if (n > k && k == 0) bar = INFINITY;
        if (n > k && k > 0) {
            qsort(tmp, (size_t)n, sizeof *tmp, cmp_desc_float);
            double f = (double)tmp[k - 1];
            int cnt = 0;
            for (int e = 0; e < n; e++) cnt += (double)tmp[e] >= f;
            bar = cnt > k ? f * (1.0 + FLT_EPSILON) : f;
        }
        for (int j = 0; j < N; j++)
            C[i * N + j] = E[i * N + j] && (n <= k || (double)W[i * N + j] >= bar);
    }
}

// #knn(k) / #knnj(k) on the dense graph (row i: the entries of mcl's column i).
static void ref_knn(float *W, unsigned char *E, int N, int k, int join, unsigned char *C,
                    float *tmp)
{
    ref_choose(W, E, N, k, C, tmp);
    for (int i = 0; i < N; i++)
        for (int j = i; j < N; j++) {
            int a = C[i * N + j], b = C[j * N + i];
            float wij = W[i * N + j], wji = W[j * N + i];
            int keep = join ? (a || b) : (a && b);
            // knnj: the larger of the chosen sides' weights (row i's (i, j) and row j's (j, i)).
            float vij = a && b ? (wij > wji ? wij : wji) : a ? wij : wji;
            float vji = a && b ? (wji > wij ? wji : wij) : b ? wji : wij;
            E[i * N + j] = (unsigned char)keep;
            E[j * N + i] = (unsigned char)keep;
            if (join && keep) {
                W[i * N + j] = vij;
                W[j * N + i] = vji;
            }
        }
}

typedef struct {
    int deg, v;
} ref_hub;

static int ref_hub_cmp(const void *pa, const void *pb)
{
    const ref_hub *a = pa, *b = pb;
    if (a->deg != b->deg) return a->deg > b->deg ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v);
}

// #ceilnb(k): hubs by degree (highest first, then lower vertex), each keeps its k highest
// remaining entries; a dropped (h, j) also drops (j, h).
static void ref_ceilnb(const float *W, unsigned char *E, int N, int k, float *tmp, ref_hub *h)
{
    int H = 0;
    for (int i = 0; i < N; i++) {
        int d = 0;
        for (int j = 0; j < N; j++) d += E[i * N + j];
        if (d > k) h[H++] = (ref_hub){d, i};
    }
    qsort(h, (size_t)H, sizeof *h, ref_hub_cmp);
    for (int r = 0; r < H; r++) {
        int i = h[r].v, n = 0;
        for (int j = 0; j < N; j++)
            if (E[i * N + j]) tmp[n++] = W[i * N + j];
        if (n <= k) continue;
        double bar = INFINITY;
        if (k > 0) {
            qsort(tmp, (size_t)n, sizeof *tmp, cmp_desc_float);
            double f = (double)tmp[k - 1];
            int cnt = 0;
            for (int e = 0; e < n; e++) cnt += (double)tmp[e] >= f;
            bar = cnt > k ? f * (1.0 + FLT_EPSILON) : f;
        }
        for (int j = 0; j < N; j++)
            if (E[i * N + j] && !((double)W[i * N + j] >= bar)) {
                E[i * N + j] = 0;
                E[j * N + i] = 0;
            }
    }
}

// A's entries into the dense n x n graph (W weights as floats, E presence).
static void csr_dense(const dsmm_csr *A, int n, float *W, unsigned char *E)
{
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx e = A->rowptr[i]; e < A->rowptr[i + 1]; e++) {
            dsmm_idx j = dsmm_csr_col(A, e);
            E[i * n + j] = 1;
            W[i * n + j] = (float)dsmm_csr_value(A, e);
        }
}

// The dense graph as a new CSR (double values).
static dsmm_status dense_csr(dsmm_ctx *ctx, const float *W, const unsigned char *E, int n,
                             dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;
    dsmm_idx nnz = 0;
    for (int e = 0; e < n * n; e++) nnz += E[e];
    DSMM_TRY(dsmm_coo_create(ctx, n, n, nnz + 1, DSMM_DOUBLE, &T));
    for (int e = 0; e < n * n; e++)
        if (E[e]) {
            T->row[T->nnz] = e / n;
            T->col[T->nnz] = e % n;
            ((double *)T->val)[T->nnz++] = (double)W[e];
        }
    DSMM_TRY(dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, out));
cleanup:
    dsmm_coo_destroy(&T);
    return st;
}

// mcl on A with the option that opt sets (-tf, -icl) gives the clusters and iteration count
// of mcl on B, the graph a reference made of A for that option, and not those of A without it
// (else the check could not fail). Collective.
static int option_vs_graph(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_mcl_params *opt,
                           const dsmm_csr *B, const char *what)
{
    dsmm_dist *G = NULL, *H = NULL;
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &G));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, B, 0, 0, &H));
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    dsmm_mcl_result rt = {0}, rh = {0}, rn = {0};
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, H, &p, &rh));
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, &p, &rn));
    CHECK_ALL_OK(ctx, dsmm_mcl_run(ctx, G, opt, &rt));
    CHECK_ALL_MSG(same_clusters(&rt, &rh) && rt.iterations == rh.iterations,
                  "%s: %lld clusters, by the reference %lld", what, (long long)rt.nclusters,
                  (long long)rh.nclusters);
    CHECK_ALL_MSG(!same_clusters(&rt, &rn), "%s changed nothing (the check cannot fail)", what);
    dsmm_mcl_result_free(&rt);
    dsmm_mcl_result_free(&rh);
    dsmm_mcl_result_free(&rn);
    dsmm_dist_destroy(&G);
    dsmm_dist_destroy(&H);
    return TEST_PASS;
}

// M (new): rows [r0, r0 + nr) of the dense N x N graph (W, E), as this rank holds them.
static dsmm_status dense_rows(dsmm_ctx *ctx, const float *W, const unsigned char *E, int N,
                              dsmm_idx r0, dsmm_idx nr, dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx nnz = 0, q = 0;
    for (dsmm_idx i = r0; i < r0 + nr; i++)
        for (int j = 0; j < N; j++) nnz += E[i * N + j];
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, M, nr, nnz));
    for (dsmm_idx i = 0; i < nr; i++) {
        for (int j = 0; j < N; j++)
            if (E[(r0 + i) * N + j]) {
                M->col[q] = j;
                M->val[q++] = W[(r0 + i) * N + j];
            }
        M->rowptr[i + 1] = q;
    }
    M->nnz = q;
cleanup:
    return st;
}

// Whether M's rows (from r0) are the dense graph's, entry for entry (columns, float bits).
static int rows_match(const dsmmi_mcl_mat *M, const float *W, const unsigned char *E, int N,
                      dsmm_idx r0)
{
    dsmm_idx want = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx e = M->rowptr[i];
        for (int j = 0; j < N; j++) {
            if (!E[(r0 + i) * N + j]) continue;
            want++;
            if (!(e < M->rowptr[i + 1] && M->col[e] == j && M->val[e] == W[(r0 + i) * N + j]))
                return 0;
            e++;
        }
        if (e != M->rowptr[i + 1]) return 0;
    }
    return M->nnz == want;
}

// mcl's transpose joins on the dense graph (name: max, min, add, mul, arcmax, arcsub, tp, tug):
// entry (i, j) from w = W(i, j) and t = W(j, i) (0 where absent), all at once into T, F.
static void ref_join(const char *name, float *W, unsigned char *E, int N, float *T,
                     unsigned char *F)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int hw = E[i * N + j], ht = E[j * N + i];
            float w = hw ? W[i * N + j] : 0.0f, t = ht ? W[j * N + i] : 0.0f, x = 0.0f;
            int keep = 0;
            if (strcmp(name, "max") == 0) {
                keep = hw || ht;
                x = w > t ? w : t;
            } else if (strcmp(name, "min") == 0) {
                keep = hw && ht;
                x = w < t ? w : t;
            } else if (strcmp(name, "add") == 0) {
                x = w + t;
                keep = (hw || ht) && x != 0.0f;
            } else if (strcmp(name, "mul") == 0) {
                x = w * t;
                keep = hw && ht && x != 0.0f;
            } else if (strcmp(name, "arcmax") == 0) {
                keep = hw && !(t > w);
                x = w;
            } else if (strcmp(name, "arcsub") == 0) {
                x = w - t;
                keep = x != 0.0f;
            } else if (strcmp(name, "tp") == 0) {
                keep = ht;
                x = t;
            } else { // tug: an entry above the diagonal of row i (j > i) replaced by its reverse
                keep = hw || (j > i && ht);
                x = j > i && ht ? t : w;
            }
            F[i * N + j] = (unsigned char)keep;
            T[i * N + j] = keep ? x : 0.0f;
        }
    memcpy(W, T, (size_t)N * N * sizeof *W);
    memcpy(E, F, (size_t)N * N);
}

// The spec's steps one at a time on the dense graph: value steps through dsmm_mcl_tf_apply
// (each result a float; 0 leaves the graph), graph steps by the references above.
static dsmm_status ref_tf(dsmm_ctx *ctx, const char *spec, float *W, unsigned char *E, int N)
{
    dsmm_status st = DSMM_OK;
    unsigned char *C = malloc((size_t)N * N);
    float *tmp = malloc((size_t)N * sizeof *tmp), *T = malloc((size_t)N * N * sizeof *T);
    ref_hub *h = malloc((size_t)N * sizeof *h);
    char *copy = strdup(spec);
    if (!C || !tmp || !T || !h || !copy) st = DSMM_ERR_NOMEM;
    for (char *tok = copy ? strtok(copy, ",") : NULL; tok != NULL && st == DSMM_OK;
         tok = strtok(NULL, ",")) {
        char name[16];
        double a;
        int got = sscanf(tok, " #%15[a-z] ( %lf )", name, &a);
        if (got >= 1 && strcmp(name, "knn") != 0 && strcmp(name, "knnj") != 0 &&
            strcmp(name, "ceilnb") != 0) {
            ref_join(name, W, E, N, T, C);
            continue;
        }
        if (got == 2) {
            int k = (int)(a + 0.5);
            if (strcmp(name, "ceilnb") == 0)
                ref_ceilnb(W, E, N, k, tmp, h);
            else if (a != 0.0)
                ref_knn(W, E, N, k, strcmp(name, "knnj") == 0, C, tmp);
            continue;
        }
        dsmm_mcl_tf *tf = NULL;
        st = dsmm_mcl_tf_parse(ctx, tok, 0.0, &tf);
        for (int e = 0; st == DSMM_OK && e < N * N; e++)
            if (E[e]) {
                W[e] = (float)dsmm_mcl_tf_apply(tf, (double)W[e]);
                if (W[e] == 0.0f) E[e] = 0;
            }
        dsmm_mcl_tf_destroy(&tf);
    }
    free(C);
    free(tmp);
    free(T);
    free(h);
    free(copy);
    return st;
}

// A directed graph every rank builds alike: row i of degree 0..60 (hubs, empty rows, a few
// loops), weights from 4 values (ties == 1) or from many.
static void tf_graph(int N, uint64_t seed, int ties, float *W, unsigned char *E)
{
    memset(E, 0, (size_t)N * N);
    for (int i = 0; i < N; i++) {
        uint64_t u = dsmm_rng_at(seed, (uint64_t)i, 0);
        int deg = i % 11 == 3 ? 0 : (int)(u % 7 == 0 ? 30 + u % 31 : u % 9);
        for (int e = 0; e < deg; e++) {
            uint64_t r = dsmm_rng_at(seed, (uint64_t)i, (uint64_t)e + 1);
            int j = (int)(r % (uint64_t)N);
            E[i * N + j] = 1;
            W[i * N + j] =
                ties ? (float)(1 + (r >> 20) % 4) : (float)(0.05 + (r >> 20) % 10007 / 100.0);
        }
    }
}

// dsmmi_mcl_tf_run on this rank's rows of the dense graph (the equal split) against the dense
// reference, entry for entry (columns and the float values' bits), on directed graphs with and
// without ties, composed with value steps; then -tf '#knn(4)' in a run equals the graph
// transformed by the reference.
static int test_tf_graph(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    const int N = 97, P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    float *W = calloc((size_t)N * N, sizeof *W);
    unsigned char *E = calloc((size_t)N * N, 1);
    float *W0 = calloc((size_t)N * N, sizeof *W0);
    unsigned char *E0 = calloc((size_t)N * N, 1);
    dsmm_idx rb[5];
    CHECK_ALL(W && E && W0 && E0 && P <= 4);
    dsmmi_equal_split(N, P, rb);
    static const char *specs[] = {"#knn(3)",
                                  "#knn(1)",
                                  "#knn(0)",
                                  "#knn(0.3)",
                                  "#knn(1000)",
                                  "#knnj(4)",
                                  "#knnj(2)",
                                  "#ceilnb(5)",
                                  "#ceilnb(0)",
                                  "#ceilnb(1)",
                                  "#ceilnb(2.6)",
                                  "gq(2),#knn(3),add(1)",
                                  "#ceilnb(6),#knn(4)",
                                  "mul(0.5),#knnj(3),#ceilnb(4),pow(2)",
                                  "#max()",
                                  "#min()",
                                  "#add()",
                                  "#mul()",
                                  "#arcmax()",
                                  "#arcsub(),gt(0)",
                                  "#arcsub(),abs()",
                                  "#tp()",
                                  "#tp(),#arcmax()",
                                  "mul(2),#add(),#knn(3)",
                                  "#max(7),#min()",
                                  "#tug()",
                                  "#tp(),#tug(),#arcmax()"};
    int changed = 0;
    for (int ties = 0; ties < 2; ties++)
        for (size_t c = 0; c < sizeof specs / sizeof specs[0]; c++) {
            tf_graph(N, task_seed(77 + (uint64_t)ties), ties, W0, E0);
            memcpy(W, W0, (size_t)N * N * sizeof *W);
            memcpy(E, E0, (size_t)N * N);
            CHECK_ALL_OK(ctx, ref_tf(ctx, specs[c], W, E, N));
            changed += memcmp(E, E0, (size_t)N * N) != 0;
            // This rank's rows of the untransformed graph.
            dsmm_idx r0 = rb[me], nr = rb[me + 1] - rb[me];
            dsmmi_mcl_mat M = {0};
            CHECK_ALL_OK(ctx, dense_rows(ctx, W0, E0, N, r0, nr, &M));
            dsmm_mcl_tf *tf = NULL;
            CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, specs[c], 0.0, &tf));
            CHECK_ALL_OK(ctx, dsmmi_mcl_tf_run(ctx, tf, N, r0, &M));
            int ok = rows_match(&M, W, E, N, r0);
            CHECK_ALL_MSG(ok, "'%s' (ties %d) differs from the reference on rank %d", specs[c],
                          ties, me);
            dsmm_mcl_tf_destroy(&tf);
            dsmmi_mcl_mat_free(ctx, &M);
        }
    CHECK_ALL_MSG(changed >= 20, "only %d of the cases changed the graph", changed);

    // In a run: -tf '#knn(4)' on a symmetric graph gives the clusters of the graph the
    // reference transformed (symmetric again), and not those of the untransformed one.
    dsmm_csr *A = NULL, *B = NULL;
    const int n = 150;
    CHECK_ALL_OK(ctx, weighted_graph(ctx, n, task_seed(41), &A));
    float *Wn = calloc((size_t)n * n, sizeof *Wn);
    unsigned char *En = calloc((size_t)n * n, 1);
    CHECK_ALL(Wn && En);
    csr_dense(A, n, Wn, En);
    CHECK_ALL_OK(ctx, ref_tf(ctx, "#knn(4)", Wn, En, n));
    CHECK_ALL_OK(ctx, dense_csr(ctx, Wn, En, n, &B));
    dsmm_mcl_tf *tf = NULL;
    CHECK_ALL_OK(ctx, dsmm_mcl_tf_parse(ctx, "#knn(4)", 0.0, &tf));
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    p.tf = tf;
    if (option_vs_graph(ctx, A, &p, B, "#knn(4)")) return TEST_FAIL;
    dsmm_mcl_tf_destroy(&tf);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    free(Wn);
    free(En);
    free(W);
    free(E);
    free(W0);
    free(E0);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// mcl -icl's block partition on the dense graph: row i keeps its entries to its own cluster
// (none when unclustered), above the median of its other weights when that median is positive
// and below their largest; then an arc stays only both ways, with the smaller weight.
static void ref_icl(float *W, unsigned char *E, int N, const int64_t *cl, float *tmp,
                    unsigned char *K)
{
    memset(K, 0, (size_t)N * N);
    for (int i = 0; i < N; i++) {
        int nx = 0, any = 0;
        float mx = 0;
        for (int j = 0; j < N; j++) {
            if (!E[i * N + j]) continue;
            if (cl[i] >= 0 && cl[j] == cl[i]) {
                if (!any || W[i * N + j] > mx) mx = W[i * N + j];
                any = 1;
            } else {
                tmp[nx++] = W[i * N + j];
            }
        }
        double med = 0;
        if (nx > 0) { // insertion sort, ascending
            for (int a = 1; a < nx; a++)
                for (int b = a; b > 0 && tmp[b - 1] > tmp[b]; b--) {
                    float t = tmp[b];
                    tmp[b] = tmp[b - 1];
                    tmp[b - 1] = t;
                }
            med = ((double)tmp[nx / 2] + (double)tmp[(nx - 1) / 2]) / 2.0;
        }
        int cut = med != 0 && any && med < (double)mx;
        for (int j = 0; j < N; j++)
            if (E[i * N + j] && cl[i] >= 0 && cl[j] == cl[i] &&
                (!cut || (double)W[i * N + j] > med))
                K[i * N + j] = 1;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            int keep = K[i * N + j] && K[j * N + i];
            E[i * N + j] = E[j * N + i] = (unsigned char)keep;
            if (keep) {
                float m = W[i * N + j] < W[j * N + i] ? W[i * N + j] : W[j * N + i];
                W[i * N + j] = W[j * N + i] = m;
            }
        }
}

// dsmmi_mcl_icl on this rank's rows against the dense reference, entry for entry, on directed
// graphs with and without ties and partitions with unclustered vertices, at every rank count;
// then -icl in a run gives the clusters of the graph the reference partitioned.
static int test_icl(void)
{
    dsmm_ctx *ctx = dist_ctx();
    CHECK_ALL(ctx != NULL);
    const int N = 97, P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    float *W = calloc((size_t)N * N, sizeof *W), *W0 = calloc((size_t)N * N, sizeof *W0);
    unsigned char *E = calloc((size_t)N * N, 1), *E0 = calloc((size_t)N * N, 1);
    unsigned char *K = calloc((size_t)N * N, 1);
    float *tmp = calloc((size_t)N, sizeof *tmp);
    int64_t cl[97];
    dsmm_idx rb[5];
    CHECK_ALL(W && E && W0 && E0 && K && tmp && P <= 4);
    dsmmi_equal_split(N, P, rb);
    int changed = 0, cut = 0;
    for (int c = 0; c < 6; c++) {
        int ties = c % 2, k = 2 + c;
        tf_graph(N, task_seed(91 + (uint64_t)c), ties, W0, E0);
        for (int v = 0; v < N; v++) { // k clusters, every 13th vertex in none
            uint64_t u = dsmm_rng_at(task_seed(97 + (uint64_t)c), (uint64_t)v, 0);
            cl[v] = v % 13 == 5 ? -1 : (int64_t)(u % (uint64_t)k);
        }
        memcpy(W, W0, (size_t)N * N * sizeof *W);
        memcpy(E, E0, (size_t)N * N);
        ref_icl(W, E, N, cl, tmp, K);
        changed += memcmp(E, E0, (size_t)N * N) != 0;
        for (int e = 0; e < N * N; e++)
            cut += E0[e] && cl[e / N] >= 0 && cl[e % N] == cl[e / N] && E0[(e % N) * N + e / N] &&
                   !E[e];
        dsmm_idx r0 = rb[me], nr = rb[me + 1] - rb[me];
        dsmmi_mcl_mat M = {0};
        CHECK_ALL_OK(ctx, dense_rows(ctx, W0, E0, N, r0, nr, &M));
        CHECK_ALL_OK(ctx, dsmmi_mcl_icl(ctx, N, r0, &M, cl, N - 3)); // the last 3 in none too
        for (int v = N - 3; v < N; v++) cl[v] = -1;
        memcpy(W, W0, (size_t)N * N * sizeof *W);
        memcpy(E, E0, (size_t)N * N);
        ref_icl(W, E, N, cl, tmp, K);
        int ok = rows_match(&M, W, E, N, r0);
        CHECK_ALL_MSG(ok, "-icl case %d (ties %d) differs from the reference on rank %d", c, ties,
                      me);
        dsmmi_mcl_mat_free(ctx, &M);
    }
    CHECK_ALL_MSG(changed == 6 && cut > 0, "-icl: %d of 6 graphs changed, %d arcs cut by medians",
                  changed, cut);

    // In a run: -icl gives the clusters of the graph the reference partitioned, not those of
    // the whole graph.
    dsmm_csr *A = NULL, *B = NULL;
    const int n = 150;
    CHECK_ALL_OK(ctx, weighted_graph(ctx, n, task_seed(43), &A));
    float *Wn = calloc((size_t)n * n, sizeof *Wn), *tn = calloc((size_t)n, sizeof *tn);
    unsigned char *En = calloc((size_t)n * n, 1), *Kn = calloc((size_t)n * n, 1);
    int64_t *cn = calloc((size_t)n, sizeof *cn);
    CHECK_ALL(Wn && En && Kn && tn && cn);
    for (int v = 0; v < n; v++) cn[v] = v / 40; // 4 blocks of consecutive vertices
    csr_dense(A, n, Wn, En);
    ref_icl(Wn, En, n, cn, tn, Kn);
    CHECK_ALL_OK(ctx, dense_csr(ctx, Wn, En, n, &B));
    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    p.icl = cn;
    p.icl_n = n;
    if (option_vs_graph(ctx, A, &p, B, "-icl")) return TEST_FAIL;
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    free(Wn);
    free(En);
    free(Kn);
    free(tn);
    free(cn);
    free(W);
    free(E);
    free(W0);
    free(E0);
    free(K);
    free(tmp);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_prune_vs_reference),
        TEST(test_prune_long_columns),
        TEST(test_sum_exact),
        TEST(test_expand_vs_reference),
        TEST(test_expand_sparse_long),
        TEST(test_inflate_square),
        TEST(test_candidates_exact),
        TEST(test_interpret_vs_reference),
        TEST(test_overlap_and_sort_modes),
        TEST(test_connect_vs_reference),
        TEST(test_dist_equals_fused),
        TEST(test_phases_algos),
        TEST(test_estimate_modes),
        TEST(test_replicated),
        TEST(test_checkpoint_resume),
        TEST(test_errors_and_edges),
        TEST(test_tf),
        TEST(test_tf_graph),
        TEST(test_icl),
    };
    return dist_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
