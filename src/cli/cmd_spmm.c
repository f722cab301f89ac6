// src/cli/cmd_spmm.c: `dsmm spmm A [--B FILE | --k K --seed S] [-o C]`: C = op(A) * B with the
// local SpMM (dsmm_csr_spmm), B dense from a Matrix Market file or random, the multiply timed
// alone (median of --repeat runs) and set against its memory-bandwidth floor: the compulsory
// traffic (dsmm_spmm_bytes) at the machine's bandwidth (STREAM triad, or --bandwidth). SpMM is
// bandwidth-bound, so achieved GB/s and % of that floor say how close a kernel is to the best
// this machine allows. C and the statistics are committed together: after any failure
// neither exists.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define DEFAULT_K    64
#define DEFAULT_SEED 1

static const cli_cmd cmd = {
    "spmm",
    "A [--B FILE | --k K --seed S] [-o C] [options]",
    "Multiplies a sparse matrix by a dense one: C = A * B (or A^T * B) and reports GB/s.",
    "A is read as `dsmm info` reads it (Matrix Market, abc, dsmm binary; .gz too). B is dense:\n"
    "--B FILE reads a Matrix Market array file (a coordinate file is densified) whose rows\n"
    "must equal the columns of A (of A^T with --transpose); without --B, B has --k columns\n"
    "(default 64) of values uniform in [-1, 1) drawn from (--seed, row), the same at any\n"
    "thread count. --type sets the values of B and C (A is read in the same type).\n"
    "--layout row gathers rows of B into each row of C; col scatters each row of B into the\n"
    "rows of C that a column of op(A) names; auto (default) is col with --transpose, else\n"
    "row. A layout that needs the other orientation of A gets it transposed once, before\n"
    "and outside the timing (prep seconds); col reads A prepared once, likewise, in tiles of\n"
    "C's rows, and row a copy of A's rows (32-bit columns, values in --type, stored by their\n"
    "length where that pays: short rows of B). --kernel names any library kernel (ref: the\n"
    "single-threaded reference, for checking).\n"
    "Only the multiply is timed (the median of --repeat runs). The floor is the time to move\n"
    "the compulsory bytes (A, B and C once each) at the memory bandwidth, measured with a\n"
    "STREAM triad unless --bandwidth gives it; one line on stderr reports GFLOP/s, GB/s and\n"
    "the % of that bandwidth reached (--quiet drops it). -o writes C as a Matrix Market\n"
    "array file ('-': stdout); without -o nothing is written. On any failure neither C nor\n"
    "the statistics file exists.",
};

// "auto|row|col|ref|gpu" from the library's name table, so the help and the parser follow it.
static void alg_choices(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < DSMM_SPMM_ALG_COUNT && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? "|" : "",
                              dsmm_spmm_alg_name((dsmm_spmm_alg)k));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Everything a run produced, for the summary and the statistics.
typedef struct run_report {
    const dsmm_csr *A;
    int transpose;         // C = A^T * B as asked
    const char *b_path;    // NULL: random B
    uint64_t seed;         // of the random B
    dsmm_idx m, n, k;      // op(A) is m x n, B n x k, C m x k
    dsmm_type type;        // of B and C
    dsmm_spmm_alg asked;   // --kernel / --layout
    dsmm_spmm_info info;   // of the last run
    int repeat;            // runs of the multiply
    double seconds;        // their median
    double seconds_min;    // and their minimum
    double io_seconds;     // reading A and B, writing C
    double prep_seconds;   // untimed: B generated, A transposed for the layout
    int prepared;          // A was transposed beforehand
    size_t tiles_bytes;    // A prepared in tiles for the column-wise kernel (0: not)
    size_t rows_bytes;     // A's rows prepared for the row-wise kernel (0: not)
    int rows_by_length;    // and stored by entry count
    double bytes_min;      // compulsory traffic of the timed call
    double bandwidth_gbps; // for the floor
    int bandwidth_measured;
    size_t peak_bytes;
} run_report;

static double gbps_of(const run_report *r)
{
    return r->seconds > 0 ? r->bytes_min / r->seconds / 1e9 : 0.0;
}

static double gflops_of(const run_report *r)
{
    return r->seconds > 0 ? r->info.flops / r->seconds / 1e9 : 0.0;
}

static double floor_seconds(const run_report *r)
{
    return r->bandwidth_gbps > 0 ? r->bytes_min / (r->bandwidth_gbps * 1e9) : 0.0;
}

static double pct_of_floor(const run_report *r)
{
    return r->seconds > 0 ? 100.0 * floor_seconds(r) / r->seconds : 0.0;
}

// The orientation the product was computed in: ROW gathers, COL scatters; the reference
// gathers for A * B and scatters for A^T * B.
static const char *layout_name(const run_report *r)
{
    if (r->info.alg == DSMM_SPMM_ROW) return "row";
    if (r->info.alg == DSMM_SPMM_COL) return "col";
    if (r->info.alg == DSMM_SPMM_REF) return r->transpose ? "col" : "row";
    return dsmm_spmm_alg_name(r->info.alg);
}

static void print_summary(FILE *f, const run_report *r)
{
    fprintf(f,
            "dsmm spmm: A%s %lld x %lld (%lld nnz) x B k=%lld %s, %s kernel, %d thread%s: "
            "%.4g s, %.3g GFLOP/s, %.3g GB/s = %.0f%% of the %.1f GB/s floor\n",
            r->transpose ? "^T" : "", (long long)r->m, (long long)r->n, (long long)r->A->nnz,
            (long long)r->k, dsmm_type_name(r->type), dsmm_spmm_alg_name(r->info.alg),
            r->info.threads, r->info.threads == 1 ? "" : "s", r->seconds, gflops_of(r), gbps_of(r),
            pct_of_floor(r), r->bandwidth_gbps);
}

static dsmm_status write_stats(dsmm_ctx *ctx, const char *path, const run_report *r)
{
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    DSMM_TRY(dsmm_stats_create(ctx, "spmm", &s));
    DSMM_TRY(dsmm_stats_set_str(s, "algo", dsmm_spmm_alg_name(r->info.alg)));
    if (r->info.threads > 0) DSMM_TRY(dsmm_stats_set_int(s, "threads", r->info.threads));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds", r->seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "io_seconds", r->io_seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "flops", r->info.flops));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_in", r->A->nnz + r->n * r->k));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_out", r->m * r->k));
    DSMM_TRY(dsmm_stats_set_int(s, "peak_bytes", (int64_t)r->peak_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "bytes_sent", 0));
    DSMM_TRY(dsmm_stats_set_int(s, "k", r->k));
    DSMM_TRY(dsmm_stats_set_str(s, "type", dsmm_type_name(r->type)));
    DSMM_TRY(dsmm_stats_set_str(s, "layout", layout_name(r)));
    DSMM_TRY(dsmm_stats_set_str(s, "kernel_asked", dsmm_spmm_alg_name(r->asked)));
    DSMM_TRY(dsmm_stats_set_int(s, "transpose", r->transpose));
    DSMM_TRY(dsmm_stats_set_int(s, "nrows", r->m));
    DSMM_TRY(dsmm_stats_set_int(s, "ncols", r->n));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_a", r->A->nnz));
    DSMM_TRY(dsmm_stats_set_str(s, "b", r->b_path ? "file" : "random"));
    if (r->b_path == NULL) DSMM_TRY(dsmm_stats_set_int(s, "seed", (int64_t)r->seed));
    DSMM_TRY(dsmm_stats_set_num(s, "bytes_min", r->bytes_min));
    DSMM_TRY(dsmm_stats_set_num(s, "gbps", gbps_of(r)));
    DSMM_TRY(dsmm_stats_set_num(s, "gflops", gflops_of(r)));
    DSMM_TRY(dsmm_stats_set_num(s, "bandwidth_gbps", r->bandwidth_gbps));
    DSMM_TRY(dsmm_stats_set_int(s, "bandwidth_measured", r->bandwidth_measured));
    DSMM_TRY(dsmm_stats_set_num(s, "floor_seconds", floor_seconds(r)));
    DSMM_TRY(dsmm_stats_set_num(s, "pct_of_floor", pct_of_floor(r)));
    DSMM_TRY(dsmm_stats_set_int(s, "workspace_bytes", (int64_t)r->info.workspace_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "on_gpu", r->info.on_gpu));
    if (r->info.on_gpu) {
        DSMM_TRY(dsmm_stats_set_int(s, "gpu_variant", r->info.gpu_variant));
        DSMM_TRY(dsmm_stats_set_num(s, "seconds_device", r->info.seconds_device));
        DSMM_TRY(dsmm_stats_set_num(s, "seconds_transfer", r->info.seconds_transfer));
        DSMM_TRY(dsmm_stats_set_int(s, "device_bytes", (int64_t)r->info.device_bytes));
    }
    DSMM_TRY(cli_gpu_stats(ctx, s));
    DSMM_TRY(dsmm_stats_set_num(s, "prep_seconds", r->prep_seconds));
    DSMM_TRY(dsmm_stats_set_int(s, "prep_transpose", r->prepared));
    DSMM_TRY(dsmm_stats_set_int(s, "prep_tiles", r->tiles_bytes > 0));
    DSMM_TRY(dsmm_stats_set_int(s, "tiles_bytes", (int64_t)r->tiles_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "prep_rows", r->rows_bytes > 0));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_bytes", (int64_t)r->rows_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_by_length", r->rows_by_length));
    DSMM_TRY(dsmm_stats_set_int(s, "repeat", r->repeat));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds_min", r->seconds_min));
    DSMM_TRY(dsmm_stats_write(s, path));
cleanup:
    dsmm_stats_destroy(&s);
    return st;
}

// The memory bandwidth for the floor, from a STREAM triad on a context of its own: its three
// 64 MiB arrays are no part of the multiply, so they stay out of peak_bytes. They share the
// --mem budget with what the run already holds.
static int measure_bandwidth(const cli_common *c, dsmm_ctx *ctx, double *gbps)
{
    dsmm_ctx *tctx = NULL;
    cli_common tc = *c;
    tc.gpu = 0; // the host's bandwidth; the device stays with the run's context
    tc.gpu_mem = 0;
    tc.gpu_flops = -1;
    int rc = cli_ctx(&cmd, &tc, &tctx);
    if (rc != CLI_OK) return rc;
    if (c->mem) {
        size_t used = dsmm_ctx_mem_in_use(ctx);
        dsmm_ctx_set_mem_budget(tctx, c->mem > used ? c->mem - used : 1);
    }
    if (dsmm_stream_triad(tctx, 0, 0, gbps) != DSMM_OK) {
        fprintf(stderr,
                "dsmm spmm: cannot measure the memory bandwidth (give --bandwidth GBPS): %s\n",
                dsmm_ctx_last_error(tctx));
        rc = CLI_FAIL;
    } else if (!(*gbps > 0)) {
        fprintf(stderr, "dsmm spmm: the STREAM triad measured no bandwidth (give --bandwidth "
                        "GBPS)\n");
        rc = CLI_FAIL;
    }
    dsmm_ctx_destroy(&tctx);
    return rc;
}

int cli_spmm(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *out = NULL, *b_path = NULL, *kernel = NULL;
    int64_t k = -1, seed = -1; // -1: not given
    int type = 0, layout = 0, transpose = 0, repeat = 1;
    cli_dist d = {.algo = "auto", .permute_seed = -1};
    const char *reorder = NULL, *comm = NULL;
    int no_pipeline = 0;
    double bandwidth = 0.0;
    char kernels[128];
    alg_choices(kernels, sizeof kernels);
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"output", 'o', "C", "write C as a Matrix Market array file ('-': stdout)", CLI_STRING,
         &out, 0, 0},
        {"B", 0, "FILE", "dense B from a Matrix Market file (rows: columns of op(A))", CLI_STRING,
         &b_path, 0, 0},
        {"k", 0, "K", "columns of the random B (default 64)", CLI_IDX, &k, 1, 1e15},
        {"seed", 's', "S", "seed of the random B (default 1)", CLI_IDX, &seed, 0, 0x1p53},
        {"type", 0, "double|float", "values of B and C (default double)", CLI_ENUM, &type, 0, 0},
        {"layout", 0, "auto|row|col", "row-wise (gather) or column-wise (scatter) kernel", CLI_ENUM,
         &layout, 0, 0},
        {"kernel", 0, kernels, "a kernel by its library name (ref: the reference)", CLI_STRING,
         &kernel, 0, 0},
        {"transpose", 0, NULL, "C = A^T * B", CLI_FLAG, &transpose, 0, 0},
        {"repeat", 'r', "N", "run the multiply N times, report the median (default 1)", CLI_INT,
         &repeat, 1, 1000000},
        {"bandwidth", 0, "GBPS", "memory bandwidth for the floor (default: STREAM triad)",
         CLI_DOUBLE, &bandwidth, 1e-6, 1e9},
        CLI_GPU_OPTS(c),
        CLI_DIST_OPTS(d),
        {"gpu-resident", 0, NULL,
         "distributed, implies --gpu: C's tile on the device, every product added into it "
         "there, the tile downloaded once (summa: pieces in device memory when MPI is "
         "CUDA-aware; one-sided: own items there, fetched partials uploaded; 1D: the rank's "
         "panel)",
         CLI_FLAG, &d.gpu_resident, 0, 0},
        {"reorder", 0, "none|rcm|rabbit",
         "1D algorithms: renumber A's vertices first (default none)", CLI_STRING, &reorder, 0, 0},
        {"comm", 0, "alltoallv|neighbor|put",
         "cola-nofusion: transfer of the coalesced rows (default alltoallv)", CLI_STRING, &comm, 0,
         0},
        {"no-pipeline", 0, NULL, "cola: no overlap of the next stage's transfers", CLI_FLAG,
         &no_pipeline, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 1);
    if (rc != CLI_OK) return rc;
    if (npos < 1) return cli_usage_error(&cmd, "needs A");
    if (b_path && k >= 0) return cli_usage_error(&cmd, "--B and --k exclude each other");
    if (b_path && seed >= 0) return cli_usage_error(&cmd, "--B and --seed exclude each other");
    rc = cli_dist_resolve(&cmd, &d);
    if (rc != CLI_OK) return rc;
    if (d.on && (b_path || transpose || d.permute || bandwidth > 0))
        return cli_usage_error(&cmd, "--B, --transpose, --permute and --bandwidth are not "
                                     "supported with a distributed --algo");
    static const dsmm_spmm_alg layouts[] = {DSMM_SPMM_AUTO, DSMM_SPMM_ROW, DSMM_SPMM_COL};
    dsmm_spmm_alg alg = layouts[layout];
    if (kernel) {
        dsmm_spmm_alg named = DSMM_SPMM_AUTO;
        if (dsmm_spmm_alg_from_name(kernel, &named) != DSMM_OK)
            return cli_usage_error(&cmd, "--kernel: '%s' is not one of %s", kernel, kernels);
        if (layout != 0 && named != alg)
            return cli_usage_error(&cmd, "--kernel %s and --layout %s disagree", kernel,
                                   dsmm_spmm_alg_name(alg));
        alg = named;
    }
    rc = cli_stdout_once(&cmd, &c, out && strcmp(out, "-") == 0, "-o -");
    if (rc != CLI_OK) return rc;
    if (d.gpu_resident && !d.on && !d.cola)
        return cli_usage_error(&cmd, "--gpu-resident needs a distributed --algo (summa, "
                                     "one-sided or 1D)");
    if (d.gpu_resident && alg != DSMM_SPMM_AUTO && alg != DSMM_SPMM_GPU)
        return cli_usage_error(&cmd, "--gpu-resident multiplies with dsmm's GPU kernel, not %s",
                               dsmm_spmm_alg_name(alg));
    if (c.gpu_mem || c.gpu_flops >= 0 || d.gpu_resident) c.gpu = 1; // they imply --gpu
    if ((alg == DSMM_SPMM_GPU || alg == DSMM_SPMM_CUSPARSE || c.gpu) && !DSMM_HAVE_CUDA) {
        fprintf(stderr,
                "dsmm spmm: %s: this dsmm was built without CUDA "
                "(configure with -DDSMM_USE_CUDA=ON)\n",
                alg == DSMM_SPMM_GPU        ? "--kernel gpu"
                : alg == DSMM_SPMM_CUSPARSE ? "--kernel cusparse"
                                            : "--gpu");
        return CLI_FAIL;
    }
    if (alg == DSMM_SPMM_GPU || alg == DSMM_SPMM_CUSPARSE) c.gpu = 1; // they need the device
    rc = cli_dir_writable(&cmd, "-o", out);
    if (rc == CLI_OK) rc = cli_dir_writable(&cmd, "--stats", c.stats);
    if (rc != CLI_OK) return rc;

    static const dsmm_type types[] = {DSMM_DOUBLE, DSMM_FLOAT};
    if ((reorder || comm || no_pipeline) && !d.cola)
        return cli_usage_error(&cmd, "--reorder, --comm and --no-pipeline need a 1D --algo "
                                     "(cola, cola-nofusion, bcast-1d, rowwise-1d)");
    if (d.cola) {
        dsmm_cola_opts co;
        dsmm_cola_opts_init(&co);
        co.alg = d.cola_alg;
        co.pipeline = !no_pipeline;
        if (reorder && dsmm_reorder_from_name(reorder, &co.reorder) != DSMM_OK)
            return cli_usage_error(&cmd, "--reorder: '%s' is not one of none|rcm|rabbit", reorder);
        if (comm && dsmm_cola_comm_from_name(comm, &co.comm) != DSMM_OK)
            return cli_usage_error(&cmd, "--comm: '%s' is not one of alltoallv|neighbor|put", comm);
        if (d.grid || d.prefetch || d.permute || d.accumulate || d.queue_cap || d.pipeline)
            return cli_usage_error(&cmd, "--grid, --prefetch, --permute, --accumulate, --queue-cap "
                                         "and --pipeline are not options of the 1D algorithms");
        // --layout row|col sets the kernel of the part that defaults to the other; --kernel
        // gpu|cusparse|ref sets both
        int both = alg == DSMM_SPMM_GPU || alg == DSMM_SPMM_CUSPARSE || alg == DSMM_SPMM_REF;
        co.lsc_alg = both || alg == DSMM_SPMM_COL ? alg : DSMM_SPMM_AUTO;
        co.rsc_alg = both || alg == DSMM_SPMM_ROW ? alg : DSMM_SPMM_AUTO;
        co.gpu_resident = d.gpu_resident;
        return cli_spmm_cola(&cmd, &c, &d, pos[0], k >= 0 ? k : DEFAULT_K,
                             seed >= 0 ? (uint64_t)seed : DEFAULT_SEED, types[type], out, &co,
                             repeat);
    }
    if (d.on) {
        dsmm_spmm_opts so;
        dsmm_spmm_opts_init(&so);
        so.alg = alg;
        return cli_spmm_dist(&cmd, &c, &d, pos[0], k >= 0 ? k : DEFAULT_K,
                             seed >= 0 ? (uint64_t)seed : DEFAULT_SEED, types[type], out, &so,
                             repeat);
    }
    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *At = NULL;
    dsmm_spmm_tiles *tiles = NULL;
    dsmm_spmm_rows *rows = NULL;
    dsmm_dense *B = NULL, *C = NULL;
    double *times = NULL;
    dsmm_read_opts ro;
    run_report r;
    memset(&r, 0, sizeof r);
    r.type = types[type];
    r.transpose = transpose;
    r.b_path = b_path;
    r.seed = seed >= 0 ? (uint64_t)seed : DEFAULT_SEED;
    r.asked = alg;
    r.repeat = repeat;
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    cli_read_opts(&c, &ro);
    // A in B's type: the front end would otherwise convert A's values inside the timed call.
    ro.type = r.type;
    double t0 = dsmmi_wtime();
    if (dsmm_read(ctx, pos[0], &ro, &A, NULL, NULL) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot read A");
        goto done;
    }
    r.A = A;
    r.m = transpose ? A->ncols : A->nrows;
    r.n = transpose ? A->nrows : A->ncols;
    if (b_path) {
        if (dsmm_read_dense(ctx, b_path, r.type, &B) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot read B");
            goto done;
        }
        if (B->nrows != r.n) {
            fprintf(stderr,
                    "dsmm spmm: --B %s is %lld x %lld but A%s is %lld x %lld: B needs %lld rows\n",
                    b_path, (long long)B->nrows, (long long)B->ncols, transpose ? "^T" : "",
                    (long long)r.m, (long long)r.n, (long long)r.n);
            rc = CLI_FAIL;
            goto done;
        }
        r.k = B->ncols;
    } else {
        r.k = k >= 0 ? k : DEFAULT_K;
    }
    r.io_seconds = dsmmi_wtime() - t0;

    // B (when random) and C at once against the budget, before either is allocated: an absurd
    // --k gets one message naming both sizes instead of a failed allocation. Sizes past any
    // budget are refused before they could overflow size_t.
    size_t w = dsmmi_type_size(r.type);
    double need = ((b_path ? 0.0 : (double)r.n) + (double)r.m) * (double)r.k * (double)w;
    char what[256];
    if (b_path)
        snprintf(what, sizeof what, "spmm: storage of C (%lld x %lld) in %s", (long long)r.m,
                 (long long)r.k, dsmm_type_name(r.type));
    else
        snprintf(what, sizeof what, "spmm: storage of B (%lld x %lld) and C (%lld x %lld) in %s",
                 (long long)r.n, (long long)r.k, (long long)r.m, (long long)r.k,
                 dsmm_type_name(r.type));
    if (need >= 0x1p62) {
        fprintf(stderr, "dsmm spmm: DSMM_ERR_NOMEM: %s needs %.3g bytes, more than any memory\n",
                what, need);
        rc = CLI_FAIL;
        goto done;
    }
    if (dsmmi_budget_check(ctx, (size_t)need, what) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "B and C do not fit in the memory budget");
        goto done;
    }
    double tp = dsmmi_wtime();
    if (!b_path) {
        if (dsmm_dense_create(ctx, r.n, r.k, r.type, &B) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot allocate B");
            goto done;
        }
        cli_random_b(B, r.seed, NULL, 0, 0);
    }
    // ROW reads op(A) by rows and COL by columns; given the other orientation, the front end
    // would transpose A inside every timed call. Done once here instead, so the timing is the
    // kernel proper. COL (also AUTO with --transpose) reads A prepared once in tiles, as a
    // caller repeating the product would (dsmm_spmm_tiles_create; docs/kernels.md).
    const dsmm_csr *S = A;
    int trans = transpose;
    if (alg == DSMM_SPMM_COL || (alg == DSMM_SPMM_AUTO && transpose)) {
        if (dsmm_spmm_tiles_create(ctx, A, transpose, r.k, r.type, &tiles) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot prepare A in tiles");
            goto done;
        }
        r.tiles_bytes = dsmm_spmm_tiles_bytes(tiles);
        if (c.verbose)
            fprintf(stderr,
                    "dsmm spmm: A prepared in tiles for the col kernel (untimed, %zu bytes)\n",
                    r.tiles_bytes);
    } else if (alg == DSMM_SPMM_ROW && transpose) {
        if (dsmm_csr_transpose(ctx, A, &At) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot transpose A");
            goto done;
        }
        S = At;
        trans = !transpose;
        r.prepared = 1;
        if (c.verbose)
            fprintf(stderr, "dsmm spmm: A transposed beforehand for the %s kernel (untimed)\n",
                    dsmm_spmm_alg_name(alg));
    }
    // ROW (and AUTO without --transpose) reads A's rows prepared once, as a caller repeating
    // the product would (dsmm_spmm_rows_create: values in B's type, 32-bit columns, and rows
    // stored by length where that pays for this k and type); the bits are those of A's rows.
    // Not with --gpu: AUTO may then send the product to the device, which reads A itself.
    if ((alg == DSMM_SPMM_ROW || (alg == DSMM_SPMM_AUTO && !c.gpu)) && !trans && tiles == NULL) {
        if (dsmm_spmm_rows_create(ctx, S, r.k, r.type, &rows) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot prepare the rows of A");
            goto done;
        }
        r.rows_bytes = dsmm_spmm_rows_bytes(rows);
        r.rows_by_length = dsmm_spmm_rows_by_length(rows);
        if (c.verbose)
            fprintf(stderr,
                    "dsmm spmm: A's rows prepared for the row kernel (untimed, %zu bytes, %s)\n",
                    r.rows_bytes, r.rows_by_length ? "stored by length" : "in A's order");
    }
    r.prep_seconds = dsmmi_wtime() - tp;
    if (dsmm_dense_create(ctx, r.m, r.k, r.type, &C) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot allocate C");
        goto done;
    }
    // Fresh zero pages fault on their first write; touched here, those faults are not charged
    // to the first timed multiply.
    memset(C->val, 0, (size_t)r.m * (size_t)r.k * w);
    times = dsmmi_malloc(ctx, (size_t)repeat, sizeof *times);
    if (times == NULL) {
        rc = cli_fail(&cmd, ctx, "no memory for the timings");
        goto done;
    }
    r.bytes_min = dsmm_spmm_bytes(S, trans, r.k, r.type, 0.0);
    r.bandwidth_gbps = bandwidth;
    if (bandwidth <= 0) {
        rc = measure_bandwidth(&c, ctx, &r.bandwidth_gbps);
        if (rc != CLI_OK) goto done;
        r.bandwidth_measured = 1;
    }

    dsmm_spmm_opts so;
    dsmm_spmm_opts_init(&so);
    so.alg = alg;
    so.transpose_a = trans;
    so.tiles = tiles;
    so.rows = rows;
    for (int i = 0; i < repeat; i++) {
        if (dsmm_csr_spmm(ctx, S, B, C, &so, &r.info) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "multiply failed");
            goto done;
        }
        times[i] = r.info.seconds;
    }
    qsort(times, (size_t)repeat, sizeof *times, cmp_double);
    r.seconds = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    r.seconds_min = times[0];
    if (out) {
        double t1 = dsmmi_wtime();
        if (dsmm_write_dense(ctx, out, C) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot write C");
            goto done;
        }
        r.io_seconds += dsmmi_wtime() - t1;
    }
    r.peak_bytes = dsmm_ctx_mem_peak(ctx);
    if (c.stats && write_stats(ctx, c.stats, &r) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot write the statistics");
        if (out && strcmp(out, "-") != 0) remove(out); // all outputs or none
        goto done;
    }
    if (!c.quiet) {
        print_summary(stderr, &r);
        if (r.bandwidth_measured && c.verbose)
            fprintf(stderr, "dsmm spmm: bandwidth %.1f GB/s from a STREAM triad (3 x 64 MiB)\n",
                    r.bandwidth_gbps);
    }
done:
    times = dsmmi_free(ctx, times);
    dsmm_dense_destroy(&C);
    dsmm_dense_destroy(&B);
    dsmm_spmm_tiles_destroy(&tiles);
    dsmm_spmm_rows_destroy(&rows);
    dsmm_csr_destroy(&At);
    dsmm_csr_destroy(&A);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
