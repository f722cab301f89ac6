// src/dist/stats.c: the statistics record of a distributed operation (DESIGN.md "Every run is
// measured"): every rank's time components, traffic and flops are gathered on every rank, and
// the record gets the stable keys, the component averages and maxima (the RDMA paper's Table 2:
// comp, comm, acc, load imbalance = waiting), the flops imbalance end to end and per stage (its
// Fig. 1: synchronising between stages turns a small end-to-end max/avg into a large one),
// one object per rank and one per stage.
#include <string.h>

#include "dist/dist.h"

// The per-rank values gathered: doubles first (the stage flops follow them), then integers.
enum {
    F_COMP,
    F_COMM,
    F_ACC,
    F_WAIT,
    F_TOTAL,
    F_FLOPS,
    F_GETWAIT,
    F_DONE,
    F_SETUP,
    F_MERGE,
    F_EXPOSED,
    F_OVERLAPPED,
    F_CPU_IDLE,
    F_GPU_IDLE,
    NF
};
enum {
    I_NSTAGES, // checked equal on every rank before the doubles are gathered
    I_NNZ_A,
    I_NNZ_B,
    I_NNZ_C,
    I_PEAK,
    I_BSENT0,
    I_BSENT1,
    I_BRECV0,
    I_BRECV1,
    I_MSENT0,
    I_MSENT1,
    I_MRECV0,
    I_MRECV1,
    I_RMAB0,
    I_RMAB1,
    I_RMAC0,
    I_RMAC1,
    I_CTLB,
    I_CTLM,
    I_ITEMS,
    I_STOLEN,
    I_PUSHES,
    I_POPS,
    I_GETS,
    I_MPEAK,
    I_GPU_PRODUCTS,
    I_IDLE_KNOWN,
    NI
};

static const char *const comp_names[] = {"comp", "comm", "acc", "wait", "total"};
const char *const dsmmi_stats_comp_keys[4] = {"comp_seconds", "comm_seconds", "acc_seconds",
                                              "wait_seconds"};

static void pack_ints(const dsmmi_rank_stats *m, int nstages, int64_t *v)
{
    const dsmm_traffic *t = &m->traffic;
    v[I_NSTAGES] = nstages;
    v[I_NNZ_A] = m->nnz_a;
    v[I_NNZ_B] = m->nnz_b;
    v[I_NNZ_C] = m->nnz_c;
    v[I_PEAK] = m->peak_bytes;
    for (int k = 0; k < 2; k++) {
        v[I_BSENT0 + k] = t->bytes_sent[k];
        v[I_BRECV0 + k] = t->bytes_recv[k];
        v[I_MSENT0 + k] = t->msgs_sent[k];
        v[I_MRECV0 + k] = t->msgs_recv[k];
        v[I_RMAB0 + k] = t->rma_bytes[k];
        v[I_RMAC0 + k] = t->rma_calls[k];
    }
    v[I_CTLB] = t->ctl_bytes;
    v[I_CTLM] = t->ctl_msgs;
    v[I_ITEMS] = m->items;
    v[I_STOLEN] = m->stolen;
    v[I_PUSHES] = m->pushes;
    v[I_POPS] = m->pops;
    v[I_GETS] = m->gets;
    v[I_MPEAK] = m->merge_peak_bytes;
    v[I_GPU_PRODUCTS] = m->gpu_products;
    v[I_IDLE_KNOWN] = m->idle_known;
}

// max/avg of x[0..n) (stride apart); 0 when all are zero (the callers decide what that means).
static double max_over_avg(const double *x, int n, size_t stride, double *sum)
{
    double s = 0, mx = 0;
    for (int r = 0; r < n; r++) {
        double v = x[(size_t)r * stride];
        s += v;
        if (v > mx) mx = v;
    }
    *sum = s;
    return s > 0 ? mx / (s / n) : 0;
}

// The value built in j stored under key; the builder's first failure wins.
static dsmm_status put_raw(dsmm_stats *s, const char *key, dsmmi_json *j)
{
    if (j->st != DSMM_OK) return j->st;
    return dsmmi_stats_set_raw(s, key, j->buf);
}

dsmm_status dsmmi_stats_fill(dsmm_ctx *ctx, dsmm_stats *s, const char *op, const char *algo,
                             const dsmmi_grid *g, int prefetch, const dsmmi_rank_stats *mine,
                             int nstages, const dsmm_idx *stage_lo, const dsmm_idx *stage_hi,
                             const double *stage_flops, dsmm_idx nnz_in, dsmm_idx nnz_out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int64_t iv[NI], *iall = NULL;
    double *fv = NULL, *fall = NULL;
    char *seen = NULL;
    dsmmi_json j;
    dsmmi_json_init(&j, ctx);

    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    const int P = dsmm_ctx_size(ctx);
    const int nf = NF + (nstages > 0 ? nstages : 0);

    // Local phase: arguments and buffers; every rank then learns whether all can go on.
    if (s == NULL || op == NULL || algo == NULL || g == NULL || mine == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "stats: s, op, algo, grid and rank record must be non-NULL");
    else if (nstages < 0 ||
             (nstages > 0 && (stage_lo == NULL || stage_hi == NULL || stage_flops == NULL)))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "stats: %d stages need their bounds and flops", nstages);
    else if (g->pr * g->pc != P)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "stats: grid %dx%d does not hold the %d ranks", g->pr, g->pc, P);
    if (local == DSMM_OK) {
        iall = dsmmi_malloc(ctx, (size_t)P * NI, sizeof *iall);
        fv = dsmmi_malloc(ctx, (size_t)nf, sizeof *fv);
        fall = dsmmi_malloc(ctx, (size_t)P * (size_t)nf, sizeof *fall);
        seen = dsmmi_calloc(ctx, (size_t)P, 1);
        if (!iall || !fv || !fall || !seen) local = DSMM_ERR_NOMEM;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));

    pack_ints(mine, nstages, iv);
    DSMM_TRY(dsmmi_allgather_i64(ctx, iv, NI, iall));
    // Every rank sees the same gathered counts, so this check fails on all ranks or on none.
    for (int r = 0; r < P; r++)
        DSMM_CHECK(ctx, iall[(size_t)r * NI + I_NSTAGES] == nstages, DSMM_ERR_INTERNAL,
                   "stats: rank %d ran %lld stages, rank %d ran %d", r,
                   (long long)iall[(size_t)r * NI + I_NSTAGES], dsmm_ctx_rank(ctx), nstages);
    fv[F_COMP] = mine->comp;
    fv[F_COMM] = mine->comm;
    fv[F_ACC] = mine->acc;
    fv[F_WAIT] = mine->wait;
    fv[F_TOTAL] = mine->total;
    fv[F_FLOPS] = mine->flops;
    fv[F_GETWAIT] = mine->get_wait;
    fv[F_DONE] = mine->done;
    fv[F_SETUP] = mine->setup;
    fv[F_MERGE] = mine->merge_seconds;
    fv[F_EXPOSED] = mine->comm_exposed;
    fv[F_OVERLAPPED] = mine->comm_overlapped;
    fv[F_CPU_IDLE] = mine->cpu_idle;
    fv[F_GPU_IDLE] = mine->gpu_idle;
    for (int k = 0; k < nstages; k++) fv[NF + k] = stage_flops[k];
    DSMM_TRY(dsmmi_allgather_f64(ctx, fv, nf, fall));

    // From here on every rank computes the same record from the same numbers.
    double seconds = 0, flops = 0;
    int64_t peak = 0, sent = 0;
    for (int r = 0; r < P; r++) {
        const double *f = fall + (size_t)r * nf;
        const int64_t *iv_r = iall + (size_t)r * NI;
        if (f[F_TOTAL] > seconds) seconds = f[F_TOTAL];
        flops += f[F_FLOPS];
        if (iv_r[I_PEAK] > peak) peak = iv_r[I_PEAK];
        sent += iv_r[I_BSENT0] + iv_r[I_BSENT1];
    }
    int workgroups = 0;
    for (int r = 0; r < P; r++) {
        int w = dsmm_ctx_workgroup(ctx, r);
        if (w >= 0 && w < P && !seen[w]) {
            seen[w] = 1;
            workgroups++;
        }
    }
    char grid[48];
    snprintf(grid, sizeof grid, "%dx%d", g->pr, g->pc);

    local = dsmm_stats_set_str(s, "op", op);
    if (local == DSMM_OK) local = dsmm_stats_set_str(s, "algo", algo);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "ranks", P);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "threads", dsmm_ctx_threads(ctx));
    if (local == DSMM_OK) local = dsmm_stats_set_num(s, "seconds", seconds);
    if (local == DSMM_OK) local = dsmm_stats_set_num(s, "flops", flops);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "nnz_in", nnz_in);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "nnz_out", nnz_out);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "peak_bytes", peak);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "bytes_sent", sent);
    if (local == DSMM_OK) local = dsmm_stats_set_str(s, "grid", grid);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "prefetch", prefetch ? 1 : 0);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "workgroups", workgroups);
    if (local == DSMM_OK) local = dsmm_stats_set_int(s, "stages_count", nstages);
    if (mine->merge || mine->pipeline) {
        int64_t mpeak = 0, gpu_products = 0, idle_known = 1;
        double msec = 0, exposed = 0, overlapped = 0, cpu_idle = 0, gpu_idle = 0;
        for (int r = 0; r < P; r++) {
            const double *f = fall + (size_t)r * nf;
            int64_t p = iall[(size_t)r * NI + I_MPEAK];
            double ov = f[F_OVERLAPPED];
            if (p > mpeak) mpeak = p;
            if (f[F_MERGE] > msec) msec = f[F_MERGE];
            if (f[F_EXPOSED] > exposed) exposed = f[F_EXPOSED];
            if (ov > overlapped) overlapped = ov;
            if (f[F_CPU_IDLE] > cpu_idle) cpu_idle = f[F_CPU_IDLE];
            if (f[F_GPU_IDLE] > gpu_idle) gpu_idle = f[F_GPU_IDLE];
            gpu_products += iall[(size_t)r * NI + I_GPU_PRODUCTS];
            if (!iall[(size_t)r * NI + I_IDLE_KNOWN]) idle_known = 0;
        }
        if (local == DSMM_OK && mine->merge)
            local = dsmm_stats_set_int(s, "merge_peak_bytes", mpeak);
        if (local == DSMM_OK && mine->merge) local = dsmm_stats_set_num(s, "merge_seconds", msec);
        if (local == DSMM_OK) local = dsmm_stats_set_int(s, "pipeline", mine->pipeline);
        if (local == DSMM_OK && mine->pipeline)
            local = dsmm_stats_set_num(s, "comm_exposed_seconds", exposed);
        if (local == DSMM_OK && mine->pipeline)
            local = dsmm_stats_set_num(s, "comm_overlapped_seconds", overlapped);
        // HipMCL-GPU's Table V (maxima over ranks), when every rank ran the two-thread
        // pipeline; the GPU's only when stage products ran there.
        int idle = mine->pipeline && idle_known;
        if (local == DSMM_OK && idle) local = dsmm_stats_set_num(s, "cpu_idle_seconds", cpu_idle);
        if (local == DSMM_OK && idle) local = dsmm_stats_set_int(s, "gpu_products", gpu_products);
        if (local == DSMM_OK && idle && gpu_products > 0)
            local = dsmm_stats_set_num(s, "gpu_idle_seconds", gpu_idle);
    }

    // components: average and maximum over ranks of each time.
    dsmmi_json_begin_object(&j, NULL);
    for (int c = 0; c < 5; c++) {
        double sum = 0, mx = 0;
        for (int r = 0; r < P; r++) {
            double v = fall[(size_t)r * nf + F_COMP + c];
            sum += v;
            if (r == 0 || v > mx) mx = v;
        }
        dsmmi_json_begin_object(&j, comp_names[c]);
        dsmmi_json_num(&j, "avg", sum / P);
        dsmmi_json_num(&j, "max", mx);
        dsmmi_json_end_object(&j);
        // The maxima also as numbers of their own (dsmm mcl sums them over its phases).
        if (c < 4 && local == DSMM_OK) local = dsmm_stats_set_num(s, dsmmi_stats_comp_keys[c], mx);
    }
    dsmmi_json_end_object(&j);
    if (local == DSMM_OK) local = put_raw(s, "components", &j);

    // imbalance: end to end, and per stage (stages without flops say nothing about balance).
    double fsum = 0, e2e = max_over_avg(fall + F_FLOPS, P, (size_t)nf, &fsum);
    double worst = 0, wsum = 0, wflops = 0;
    for (int k = 0; k < nstages; k++) {
        double ssum = 0, m = max_over_avg(fall + NF + k, P, (size_t)nf, &ssum);
        if (ssum <= 0) continue;
        if (m > worst) worst = m;
        wsum += ssum * m;
        wflops += ssum;
    }
    dsmmi_json_free(&j);
    dsmmi_json_init(&j, ctx);
    dsmmi_json_begin_object(&j, NULL);
    dsmmi_json_num(&j, "flops_max_over_avg", fsum > 0 ? e2e : 1.0);
    dsmmi_json_num(&j, "stage_max_over_avg_worst", wflops > 0 ? worst : 1.0);
    dsmmi_json_num(&j, "stage_max_over_avg_mean", wflops > 0 ? wsum / wflops : 1.0);
    dsmmi_json_end_object(&j);
    if (local == DSMM_OK) local = put_raw(s, "imbalance", &j);

    dsmmi_json_free(&j);
    dsmmi_json_init(&j, ctx);
    dsmmi_json_begin_array(&j, NULL);
    for (int r = 0; r < P; r++) {
        const double *f = fall + (size_t)r * nf;
        const int64_t *v = iall + (size_t)r * NI;
        dsmmi_json_begin_object(&j, NULL);
        dsmmi_json_int(&j, "rank", r);
        dsmmi_json_int(&j, "workgroup", dsmm_ctx_workgroup(ctx, r));
        for (int c = 0; c < 5; c++) dsmmi_json_num(&j, comp_names[c], f[F_COMP + c]);
        dsmmi_json_num(&j, "flops", f[F_FLOPS]);
        dsmmi_json_int(&j, "nnz_a", v[I_NNZ_A]);
        dsmmi_json_int(&j, "nnz_b", v[I_NNZ_B]);
        dsmmi_json_int(&j, "nnz_c", v[I_NNZ_C]);
        dsmmi_json_int(&j, "peak_bytes", v[I_PEAK]);
        dsmmi_json_int(&j, "bytes_sent_intra", v[I_BSENT0]);
        dsmmi_json_int(&j, "bytes_sent_inter", v[I_BSENT1]);
        dsmmi_json_int(&j, "bytes_recv_intra", v[I_BRECV0]);
        dsmmi_json_int(&j, "bytes_recv_inter", v[I_BRECV1]);
        dsmmi_json_int(&j, "msgs_sent_intra", v[I_MSENT0]);
        dsmmi_json_int(&j, "msgs_sent_inter", v[I_MSENT1]);
        dsmmi_json_int(&j, "msgs_recv_intra", v[I_MRECV0]);
        dsmmi_json_int(&j, "msgs_recv_inter", v[I_MRECV1]);
        dsmmi_json_int(&j, "rma_bytes_intra", v[I_RMAB0]);
        dsmmi_json_int(&j, "rma_bytes_inter", v[I_RMAB1]);
        dsmmi_json_int(&j, "rma_calls_intra", v[I_RMAC0]);
        dsmmi_json_int(&j, "rma_calls_inter", v[I_RMAC1]);
        dsmmi_json_int(&j, "ctl_bytes", v[I_CTLB]);
        if (mine->rdma) {
            dsmmi_json_int(&j, "items", v[I_ITEMS]);
            dsmmi_json_int(&j, "stolen", v[I_STOLEN]);
            dsmmi_json_int(&j, "pushes", v[I_PUSHES]);
            dsmmi_json_int(&j, "pops", v[I_POPS]);
            dsmmi_json_int(&j, "gets", v[I_GETS]);
            dsmmi_json_num(&j, "get_wait", f[F_GETWAIT]);
            dsmmi_json_num(&j, "done", f[F_DONE]);
        }
        dsmmi_json_end_object(&j);
    }
    dsmmi_json_end_array(&j);
    if (local == DSMM_OK) local = put_raw(s, "ranks_detail", &j);

    if (mine->rdma) {
        // The one-sided run: totals of the work counts, the get waits and the spread of the
        // ranks' finish times (what work stealing shrinks).
        int64_t tot[5] = {0, 0, 0, 0, 0};
        double gw = 0, gwmax = 0, dmin = 0, dmax = 0, setup = 0;
        for (int r = 0; r < P; r++) {
            const int64_t *v = iall + (size_t)r * NI;
            const double *f = fall + (size_t)r * nf;
            for (int k = 0; k < 5; k++) tot[k] += v[I_ITEMS + k];
            gw += f[F_GETWAIT];
            if (f[F_SETUP] > setup) setup = f[F_SETUP];
            if (f[F_GETWAIT] > gwmax) gwmax = f[F_GETWAIT];
            if (r == 0 || f[F_DONE] < dmin) dmin = f[F_DONE];
            if (r == 0 || f[F_DONE] > dmax) dmax = f[F_DONE];
        }
        dsmmi_json_free(&j);
        dsmmi_json_init(&j, ctx);
        dsmmi_json_begin_object(&j, NULL);
        dsmmi_json_int(&j, "items", tot[0]);
        dsmmi_json_int(&j, "stolen", tot[1]);
        dsmmi_json_int(&j, "pushes", tot[2]);
        dsmmi_json_int(&j, "pops", tot[3]);
        dsmmi_json_int(&j, "gets", tot[4]);
        dsmmi_json_num(&j, "get_wait_avg", gw / P);
        dsmmi_json_num(&j, "get_wait_max", gwmax);
        dsmmi_json_num(&j, "done_min", dmin);
        dsmmi_json_num(&j, "done_max", dmax);
        dsmmi_json_num(&j, "done_spread", dmax - dmin);
        dsmmi_json_num(&j, "setup_max", setup);
        dsmmi_json_end_object(&j);
        if (local == DSMM_OK) local = put_raw(s, "rdma", &j);
    }

    dsmmi_json_free(&j);
    dsmmi_json_init(&j, ctx);
    dsmmi_json_begin_array(&j, NULL);
    for (int k = 0; k < nstages; k++) {
        double ssum = 0, m = max_over_avg(fall + NF + k, P, (size_t)nf, &ssum);
        dsmmi_json_begin_object(&j, NULL);
        dsmmi_json_int(&j, "stage", k);
        dsmmi_json_int(&j, "lo", stage_lo[k]);
        dsmmi_json_int(&j, "hi", stage_hi[k]);
        dsmmi_json_begin_array(&j, "flops");
        for (int r = 0; r < P; r++) dsmmi_json_num(&j, NULL, fall[(size_t)r * nf + NF + k]);
        dsmmi_json_end_array(&j);
        dsmmi_json_num(&j, "max_over_avg", ssum > 0 ? m : 1.0);
        dsmmi_json_end_object(&j);
    }
    dsmmi_json_end_array(&j);
    if (local == DSMM_OK) local = put_raw(s, "stages", &j);
    // A failed allocation has recorded its own message, which stays the first one.
    if (local != DSMM_OK)
        local = dsmmi_error(ctx, local, __FILE__, __LINE__, "stats: the record of %s", op);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
cleanup:
    dsmmi_json_free(&j);
    iall = dsmmi_free(ctx, iall);
    fv = dsmmi_free(ctx, fv);
    fall = dsmmi_free(ctx, fall);
    seen = dsmmi_free(ctx, seen);
    return st;
}
