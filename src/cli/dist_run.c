// src/cli/dist_run.c: the distributed paths of `dsmm spgemm` and `dsmm spmm` (--algo summa,
// or an MPI launch with more than one process): MPI start-up, the context over
// MPI_COMM_WORLD with the grid and workgroup options, parallel reading, the product repeated
// --repeat times (median reported), optional random symmetric permutation, parallel output,
// the statistics JSON (rank 0 writes it) and a short summary with the component breakdown.
// Every rank runs the same steps; a failure anywhere is agreed by the library, so every rank
// prints nothing partial and exits 1 (rank 0 prints the message).
#include <stdlib.h>
#include <string.h>

#include "dsmm_config.h"
#if DSMM_HAVE_MPI
#include <mpi.h> // before dsmm.h, which then declares dsmm_ctx_create_mpi
#endif
#include "cli/cli.h"
#include "cli/json_read.h"
#include "dist/dist.h"

int cli_dist_launched(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
                                 "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 1) return 1;
    }
    return 0;
}

int cli_dist_resolve(const cli_cmd *cmd, cli_dist *d)
{
    d->permute = d->permute_seed >= 0;
    if (strcmp(d->algo, "local") == 0) {
        if (cli_dist_launched())
            return cli_usage_error(cmd, "--algo local runs on one process; this launch has "
                                        "several (use --algo summa)");
        d->on = 0;
    } else if (strcmp(d->algo, "auto") == 0) {
        d->on = cli_dist_launched();
    } else if (dsmm_dist_alg_from_name(d->algo, &d->alg) == DSMM_OK) {
        d->on = 1;
    } else if (dsmm_cola_alg_from_name(d->algo, &d->cola_alg) == DSMM_OK) {
        d->on = 1;
        d->cola = 1;
    } else {
        return cli_usage_error(cmd,
                               "--algo: '%s' is not one of auto|local|summa|rdma-c|rdma-a|"
                               "rdma-b|ws-random-a|ws-local-a|ws-local-c|cola|cola-nofusion|"
                               "bcast-1d|rowwise-1d",
                               d->algo);
    }
    if (d->grid) {
        char x = 0;
        if (sscanf(d->grid, "%d%c%d", &d->pr, &x, &d->pc) != 3 || (x != 'x' && x != 'X') ||
            d->pr < 1 || d->pc < 1)
            return cli_usage_error(cmd, "--grid: '%s' is not PRxPC (e.g. 2x3)", d->grid);
    }
    if (!d->on && (d->grid || d->prefetch || d->wg || d->permute || d->accumulate || d->queue_cap ||
                   d->pipeline))
        return cli_usage_error(cmd, "--grid, --prefetch, --pipeline, --workgroup-size, --permute, "
                                    "--accumulate and --queue-cap need a distributed --algo");
    return CLI_OK;
}

// MPI up (if this build has it) and a context over all processes, set from the options.
static int dist_ctx(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, dsmm_ctx **ctx)
{
    *ctx = NULL;
#if DSMM_HAVE_MPI
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return cli_fail(cmd, NULL, "MPI_Init failed");
    }
    if (dsmm_ctx_create_mpi(MPI_COMM_WORLD, ctx) != DSMM_OK)
        return cli_fail(cmd, NULL, "cannot create an MPI context");
#else
    if (dsmm_ctx_create(ctx) != DSMM_OK) return cli_fail(cmd, NULL, "cannot create a context");
#endif
    // Threads default to this node's cores shared among its ranks, so P ranks on a node use
    // the cores one rank would, not P times as many threads.
    int threads = c->threads;
    if (threads == 0) {
        int mine = 0, size = dsmm_ctx_size(*ctx),
            wg = dsmm_ctx_workgroup(*ctx, dsmm_ctx_rank(*ctx));
        for (int r = 0; r < size; r++) mine += dsmm_ctx_workgroup(*ctx, r) == wg;
        threads = dsmm_ctx_threads(*ctx) / (mine > 0 ? mine : 1);
        if (threads < 1) threads = 1;
    }
    dsmm_status st = dsmm_ctx_set_threads(*ctx, threads);
    if (c->mem) dsmm_ctx_set_mem_budget(*ctx, c->mem);
    dsmm_ctx_set_log(*ctx,
                     c->quiet     ? DSMM_LOG_ERROR
                     : c->verbose ? DSMM_LOG_DEBUG
                                  : DSMM_LOG_WARN,
                     NULL, NULL);
    dsmm_ctx_set_progress(*ctx, 0);
    if (st == DSMM_OK && d->grid) st = dsmm_ctx_set_grid(*ctx, d->pr, d->pc);
    if (st == DSMM_OK) st = dsmm_ctx_set_workgroup_size(*ctx, d->wg);
    if (st != DSMM_OK) {
        int rc = dsmm_ctx_rank(*ctx) == 0 ? cli_fail(cmd, *ctx, "bad option") : CLI_FAIL;
        dsmm_ctx_destroy(ctx);
        return rc;
    }
    // The device may be missing on some ranks only: all ranks learn whether any failed, and
    // each failing rank says why.
    int gpu_bad = cli_gpu(cmd, c, *ctx) != CLI_OK;
#if DSMM_HAVE_MPI
    MPI_Allreduce(MPI_IN_PLACE, &gpu_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
    if (gpu_bad) {
        dsmm_ctx_destroy(ctx);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void dist_end(dsmm_ctx **ctx)
{
    dsmm_ctx_destroy(ctx);
#if DSMM_HAVE_MPI
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
#endif
}

static int fail(const cli_cmd *cmd, dsmm_ctx *ctx, const char *what)
{
    // The status and message are the same on every rank (agreed); one rank says it.
    if (dsmm_ctx_rank(ctx) == 0) cli_fail(cmd, ctx, what);
    return CLI_FAIL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cli_median_run(dsmm_ctx *ctx, const double *t, int n)
{
    double *sorted = dsmmi_malloc(ctx, (size_t)n, sizeof *sorted);
    if (sorted == NULL) return n - 1; // the last run's record: still one consistent run
    memcpy(sorted, t, (size_t)n * sizeof *t);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    double m = sorted[(n - 1) / 2];
    sorted = dsmmi_free(ctx, sorted);
    int best = 0;
    while (t[best] != m) best++;
    return best;
}

static void stats_free(dsmm_stats **all, int n)
{
    for (int i = 0; all && i < n; i++) dsmm_stats_destroy(&all[i]);
}

// A number of the statistics record at path k1 / k2 / k3 (k2, k3 may be NULL); 0 if absent.
static double num_at(const cli_json *v, const char *k1, const char *k2, const char *k3)
{
    v = cli_json_get(v, k1);
    if (v && k2) v = cli_json_get(v, k2);
    if (v && k3) v = cli_json_get(v, k3);
    return v && v->kind == CLI_JSON_NUMBER ? v->num : 0;
}

// Sum over ranks of the one-sided data bytes (ranks_detail).
static double rma_bytes(const cli_json *rec)
{
    const cli_json *rd = cli_json_get(rec, "ranks_detail");
    double sum = 0;
    for (size_t r = 0; rd && rd->kind == CLI_JSON_ARRAY && r < rd->n; r++) {
        const cli_json *o = &rd->items[r];
        for (int k = 0; k < 2; k++) {
            const cli_json *v = cli_json_get(o, k ? "rma_bytes_inter" : "rma_bytes_intra");
            if (v && v->kind == CLI_JSON_NUMBER) sum += v->num;
        }
    }
    return sum;
}

// The summary of rank 0, read from the run's statistics record: what ran, the time and the
// breakdown of the RDMA paper's Table 2.
static void summary(FILE *f, const char *op, const cli_dist *d, const cli_json *rec, int repeat)
{
    const cli_json *grid = cli_json_get(rec, "grid");
    const cli_json *algo = cli_json_get(rec, "algo");
    fprintf(f, "%-20s%s %s on %.0f ranks, grid %s, %.0f threads, prefetch %s\n", "algorithm:", op,
            algo && algo->kind == CLI_JSON_STRING ? algo->str : "?",
            num_at(rec, "ranks", NULL, NULL),
            grid && grid->kind == CLI_JSON_STRING ? grid->str : "?",
            num_at(rec, "threads", NULL, NULL), d->prefetch ? "on" : "off");
    fprintf(f, "%-20s%.6f%s\n", "seconds:", num_at(rec, "seconds", NULL, NULL),
            repeat > 1 ? " (median)" : "");
    fprintf(f, "%-20s%.0f\n", "flops:", num_at(rec, "flops", NULL, NULL));
    fprintf(f, "%-20s%.0f\n", "nnz_out:", num_at(rec, "nnz_out", NULL, NULL));
    fprintf(f, "%-20s%.0f\n", "bytes sent:", num_at(rec, "bytes_sent", NULL, NULL));
    fprintf(f, "%-20scomp %.6f  comm %.6f  acc %.6f  wait %.6f (average over ranks)\n",
            "breakdown:", num_at(rec, "components", "comp", "avg"),
            num_at(rec, "components", "comm", "avg"), num_at(rec, "components", "acc", "avg"),
            num_at(rec, "components", "wait", "avg"));
    fprintf(f, "%-20s%.3f end to end, %.3f worst stage (max/avg flops)\n",
            "load imbalance:", num_at(rec, "imbalance", "flops_max_over_avg", NULL),
            num_at(rec, "imbalance", "stage_max_over_avg_worst", NULL));
    if (cli_json_get(rec, "rdma"))
        fprintf(f,
                "%-20s%.0f items (%.0f stolen), %.0f pushes, %.0f gets, %.0f rma bytes; finish "
                "times %.6f..%.6f s\n",
                "one-sided:", num_at(rec, "rdma", "items", NULL),
                num_at(rec, "rdma", "stolen", NULL), num_at(rec, "rdma", "pushes", NULL),
                num_at(rec, "rdma", "gets", NULL), rma_bytes(rec),
                num_at(rec, "rdma", "done_min", NULL), num_at(rec, "rdma", "done_max", NULL));
}

// Finishes the statistics on every rank (collective); rank 0 writes them and the summary. With
// --repeat, s is the record of the run with the median time (on rank 0's clock).
static int finish(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, dsmm_ctx *ctx,
                  dsmm_stats *s, dsmm_status st, double io_seconds, int repeat, const char *out)
{
    // st: the caller's own additions to s so far; agreed below with the rest, so a rank that
    // failed to add a key does not leave the others waiting.
    // "seconds" stays the library's: the slowest rank's time in this (median) run.
    if (st == DSMM_OK) st = dsmm_stats_set_num(s, "io_seconds", io_seconds);
    if (st == DSMM_OK) st = dsmm_stats_set_int(s, "repeat", repeat);
    if (st == DSMM_OK) st = cli_gpu_stats(ctx, s); // rank 0's device record (when it has one)
    char *json = NULL;
    if (st == DSMM_OK) st = dsmm_stats_json(s, &json);
    if (st == DSMM_OK && dsmm_ctx_rank(ctx) == 0 && c->stats) st = dsmm_stats_write(s, c->stats);
    if (dsmmi_comm_agree(ctx, st) != DSMM_OK) {
        json = dsmm_free(ctx, json);
        if (out && strcmp(out, "-") != 0 && dsmm_ctx_rank(ctx) == 0) remove(out);
        return fail(cmd, ctx, "cannot write the statistics");
    }
    if (!c->quiet && dsmm_ctx_rank(ctx) == 0) {
        cli_json *rec = NULL;
        cli_json_error err;
        size_t pos = 0;
        if (cli_json_parse(json, strlen(json), &pos, &rec, &err) == 0)
            summary(cli_report_stream(c, out), cmd->name, d, rec, repeat);
        cli_json_free(rec);
    }
    json = dsmm_free(ctx, json);
    return CLI_OK;
}

int cli_spgemm_dist(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                    const char *b_path, const char *out, const dsmm_spgemm_opts *so,
                    int semiring_auto, int repeat)
{
    dsmm_ctx *ctx = NULL;
    dsmm_dist *A = NULL, *B = NULL, *Ap = NULL, *C = NULL, *Cp = NULL;
    dsmm_idx *perm = NULL, *inv = NULL;
    dsmm_stats **all = NULL; // one record per run
    double *times = NULL;
    int rc = dist_ctx(cmd, c, d, &ctx);
    if (rc != CLI_OK) {
        dist_end(&ctx);
        return rc;
    }
    dsmm_read_opts ro;
    cli_read_opts(c, &ro);
    double t0 = dsmmi_wtime();
    if (dsmm_dist_read(ctx, a_path, &ro, 0, 0, &A, NULL) != DSMM_OK) {
        rc = fail(cmd, ctx, "cannot read A");
        goto done;
    }
    if (b_path && dsmm_dist_read(ctx, b_path, &ro, 0, 0, &B, NULL) != DSMM_OK) {
        rc = fail(cmd, ctx, "cannot read B");
        goto done;
    }
    double io = dsmmi_wtime() - t0;
    const dsmm_dist *Bu = B ? B : A;
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.alg = d->alg;
    o.prefetch = d->prefetch;
    o.queue_capacity = d->queue_cap;
    o.accumulate = (dsmm_dist_acc)d->accumulate; // auto|merge|fused|binary in enum order
    o.pipeline = d->pipeline;
    o.gpu_resident = d->gpu_resident;
    o.spgemm = *so;
    if (semiring_auto)
        o.spgemm.semiring = dsmm_dist_type(A) != DSMM_PATTERN && dsmm_dist_type(Bu) != DSMM_PATTERN
                                ? DSMM_PLUS_TIMES
                                : DSMM_PLUS_PAIR;
    if (d->permute) {
        // C = A * A on P A P^T (balanced tiles), then P^T C P: only for A * A.
        if (B != NULL || dsmm_dist_nrows(A) != dsmm_dist_ncols(A)) {
            if (dsmm_ctx_rank(ctx) == 0)
                fprintf(stderr, "dsmm %s: --permute needs a square A and no B (A * A)\n",
                        cmd->name);
            rc = CLI_USAGE;
            goto done;
        }
        if (dsmm_perm_random(ctx, dsmm_dist_nrows(A), (uint64_t)d->permute_seed, &perm) !=
                DSMM_OK ||
            dsmm_perm_invert(ctx, dsmm_dist_nrows(A), perm, &inv) != DSMM_OK ||
            dsmm_dist_permute(ctx, A, perm, &Ap) != DSMM_OK) {
            rc = fail(cmd, ctx, "cannot permute A");
            goto done;
        }
    }
    times = dsmmi_malloc(ctx, (size_t)repeat, sizeof *times);
    all = dsmmi_calloc(ctx, (size_t)repeat, sizeof *all);
    dsmm_status sst = times && all ? DSMM_OK : DSMM_ERR_NOMEM;
    for (int i = 0; sst == DSMM_OK && i < repeat; i++)
        sst = dsmm_stats_create(ctx, "spgemm", &all[i]);
    if (dsmmi_comm_agree(ctx, sst) != DSMM_OK) { // one rank short of memory: all stop
        rc = fail(cmd, ctx, "no memory for the statistics");
        goto done;
    }
    const dsmm_dist *X = Ap ? Ap : A, *Y = Ap ? Ap : Bu;
    for (int i = 0; i < repeat; i++) {
        dsmm_dist_destroy(&C);
        o.stats = all[i];
        double t1 = dsmmi_wtime();
        // (agreed once more: a rank whose statistics record could not grow after the
        // product's last collective fails alone, and the others would wait in the write)
        if (dsmmi_comm_agree(ctx, dsmm_spgemm_ex(ctx, X, Y, &o, &C)) != DSMM_OK) {
            rc = fail(cmd, ctx, "multiply failed");
            goto done;
        }
        times[i] = dsmmi_wtime() - t1;
    }
    if (inv) {
        if (dsmm_dist_permute(ctx, C, inv, &Cp) != DSMM_OK) {
            rc = fail(cmd, ctx, "cannot undo the permutation");
            goto done;
        }
        dsmm_dist_destroy(&C);
        C = Cp;
        Cp = NULL;
    }
    if (out) {
        double t2 = dsmmi_wtime();
        dsmm_write_opts wo;
        dsmm_write_opts_init(&wo);
        if (dsmm_dist_write(ctx, out, C, &wo) != DSMM_OK) {
            rc = fail(cmd, ctx, "cannot write C");
            goto done;
        }
        io += dsmmi_wtime() - t2;
    }
    int mid = cli_median_run(ctx, times, repeat);
    rc = finish(cmd, c, d, ctx, all[mid], DSMM_OK, io, repeat, out);
done:
    times = dsmmi_free(ctx, times);
    stats_free(all, repeat);
    all = dsmmi_free(ctx, all);
    perm = dsmm_free(ctx, perm);
    inv = dsmm_free(ctx, inv);
    dsmm_dist_destroy(&C);
    dsmm_dist_destroy(&Cp);
    dsmm_dist_destroy(&Ap);
    dsmm_dist_destroy(&B);
    dsmm_dist_destroy(&A);
    dist_end(&ctx);
    return rc;
}

int cli_spmm_dist(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                  dsmm_idx k, uint64_t seed, dsmm_type type, const char *out,
                  const dsmm_spmm_opts *so, int repeat)
{
    dsmm_ctx *ctx = NULL;
    dsmm_dist *A = NULL;
    dsmm_dist_dense *B = NULL, *C = NULL;
    dsmm_dense *Cg = NULL;
    dsmm_stats **all = NULL; // one record per run
    double *times = NULL;
    int rc = dist_ctx(cmd, c, d, &ctx);
    if (rc != CLI_OK) {
        dist_end(&ctx);
        return rc;
    }
    dsmm_read_opts ro;
    cli_read_opts(c, &ro);
    ro.type = type;
    double t0 = dsmmi_wtime();
    if (dsmm_dist_read(ctx, a_path, &ro, 0, 0, &A, NULL) != DSMM_OK) {
        rc = fail(cmd, ctx, "cannot read A");
        goto done;
    }
    double io = dsmmi_wtime() - t0;
    int pr = 0, pc = 0;
    dsmm_dist_grid(A, &pr, &pc);
    if (dsmm_dist_dense_create(ctx, dsmm_dist_ncols(A), k, type, pr, pc, &B) != DSMM_OK) {
        rc = fail(cmd, ctx, "cannot allocate B");
        goto done;
    }
    dsmm_idx r0 = 0, c0 = 0;
    dsmm_dense *T = dsmm_dist_dense_local(B, &r0, &c0);
    cli_random_b(T, seed, NULL, r0, c0);
    dsmm_dist_opts o;
    dsmm_dist_opts_init(&o);
    o.alg = d->alg;
    o.prefetch = d->prefetch;
    o.queue_capacity = d->queue_cap;
    o.gpu_resident = d->gpu_resident;
    o.spmm = *so;
    times = dsmmi_malloc(ctx, (size_t)repeat, sizeof *times);
    all = dsmmi_calloc(ctx, (size_t)repeat, sizeof *all);
    dsmm_status sst = times && all ? DSMM_OK : DSMM_ERR_NOMEM;
    for (int i = 0; sst == DSMM_OK && i < repeat; i++)
        sst = dsmm_stats_create(ctx, "spmm", &all[i]);
    if (dsmmi_comm_agree(ctx, sst) != DSMM_OK) { // one rank short of memory: all stop
        rc = fail(cmd, ctx, "no memory for the statistics");
        goto done;
    }
    for (int i = 0; i < repeat; i++) {
        dsmm_dist_dense_destroy(&C);
        o.stats = all[i];
        double t1 = dsmmi_wtime();
        if (dsmmi_comm_agree(ctx, dsmm_spmm_ex(ctx, A, B, &o, &C)) != DSMM_OK) { // (as above)
            rc = fail(cmd, ctx, "multiply failed");
            goto done;
        }
        times[i] = dsmmi_wtime() - t1;
    }
    if (out) {
        double t2 = dsmmi_wtime();
        dsmm_status st = dsmm_dist_dense_gather(ctx, C, 0, &Cg);
        if (st == DSMM_OK && dsmm_ctx_rank(ctx) == 0) st = dsmm_write_dense(ctx, out, Cg);
        if (dsmmi_comm_agree(ctx, st) != DSMM_OK) {
            rc = fail(cmd, ctx, "cannot write C");
            goto done;
        }
        io += dsmmi_wtime() - t2;
    }
    int mid = cli_median_run(ctx, times, repeat);
    rc = finish(cmd, c, d, ctx, all[mid], dsmm_stats_set_int(all[mid], "k", k), io, repeat, out);
done:
    times = dsmmi_free(ctx, times);
    stats_free(all, repeat);
    all = dsmmi_free(ctx, all);
    dsmm_dense_destroy(&Cg);
    dsmm_dist_dense_destroy(&C);
    dsmm_dist_dense_destroy(&B);
    dsmm_dist_destroy(&A);
    dist_end(&ctx);
    return rc;
}

int cli_dist_ctx(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, dsmm_ctx **ctx)
{
    return dist_ctx(cmd, c, d, ctx);
}

void cli_dist_end(dsmm_ctx **ctx)
{
    dist_end(ctx);
}
