// src/cli/cola_run.c: `dsmm spmm --algo cola|cola-nofusion|bcast-1d|rowwise-1d`: the 1D CoLa
// plan of A (reordered when asked), B drawn row by row from A's vertex numbers exactly as the
// serial `dsmm spmm` draws it (so C is the same product whatever the layout), the multiply
// repeated (median reported), C gathered to rank 0 in A's vertex order, and the volume table
// of the CoLa paper (Tables 2/3): per rank and in total, V_CG, V_FR, V_FC and the inter-
// workgroup bytes without and with fusion, beside the bytes the run actually received.
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "comm/comm.h"

dsmm_status cli_cola_gather(dsmm_ctx *ctx, const dsmm_cola_volume *v, const dsmm_cola_info *info,
                            int64_t **all)
{
    int64_t mine[CLI_COLA_NCOL] = {v->nrows,
                                   v->lsc_nnz,
                                   v->rsc_nnz,
                                   v->rsc_cols,
                                   v->v_cg,
                                   v->v_fr,
                                   v->v_fc,
                                   v->inter_nofusion,
                                   v->inter_fused,
                                   info ? info->recv_intra : -1,
                                   info ? info->recv_inter : -1};
    *all = dsmmi_malloc(ctx, (size_t)dsmm_ctx_size(ctx) * CLI_COLA_NCOL, sizeof **all);
    dsmm_status st = dsmmi_comm_agree(ctx, *all ? DSMM_OK : DSMM_ERR_NOMEM);
    if (st == DSMM_OK) st = dsmmi_allgather_i64(ctx, mine, CLI_COLA_NCOL, *all);
    if (st != DSMM_OK) *all = dsmmi_free(ctx, *all);
    return st;
}

void cli_cola_print(FILE *f, const char *title, const int64_t *all, int P, int with_recv)
{
    int ncol = with_recv ? CLI_COLA_NCOL : CLI_COLA_NCOL - 2;
    static const char *const names[CLI_COLA_NCOL] = {
        "rows", "LSC nnz",      "RSC nnz",      "RSC cols",   "V_CG",      "V_FR",
        "V_FC", "inter(nofus)", "inter(fused)", "recv intra", "recv inter"};
    static const int width[CLI_COLA_NCOL] = {9, 10, 10, 9, 13, 13, 13, 13, 13, 13, 13};
    fprintf(f, "%s\n%6s", title, "rank");
    for (int c = 0; c < ncol; c++) fprintf(f, " %*s", width[c], names[c]);
    fprintf(f, "\n");
    int64_t tot[CLI_COLA_NCOL] = {0};
    for (int r = 0; r <= P; r++) {
        const int64_t *x = r < P ? all + (size_t)r * CLI_COLA_NCOL : tot;
        if (r < P) {
            for (int c = 0; c < CLI_COLA_NCOL; c++) tot[c] += x[c];
            fprintf(f, "%6d", r);
        } else {
            fprintf(f, "%6s", "total");
        }
        for (int c = 0; c < ncol; c++) fprintf(f, " %*lld", width[c], (long long)x[c]);
        fprintf(f, "\n");
    }
    if (tot[4] > 0)
        fprintf(f, "redundant: V_CG %.1f%%, V_FR %.1f%% (of their bytes, V_FC being the need)\n",
                100.0 * (double)(tot[4] - tot[6]) / (double)tot[4],
                tot[5] > 0 ? 100.0 * (double)(tot[5] - tot[6]) / (double)tot[5] : 0.0);
}

// C in A's vertex order on rank 0 (*out NULL elsewhere): every rank sends its rows with
// their vertex numbers.
static dsmm_status gather_c(dsmm_ctx *ctx, const dsmm_cola *plan, const dsmm_dense *C,
                            dsmm_dense **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx);
    dsmm_idx row0, nrows, n = 0;
    const dsmm_idx *vx;
    dsmm_cola_rows(plan, &row0, &nrows, &vx);
    size_t elem = C->type == DSMM_DOUBLE ? 8 : 4, rec = 8 + (size_t)C->ncols * elem;
    size_t *sc = dsmmi_malloc(ctx, 3 * (size_t)P + 1, sizeof *sc);
    char *sb = dsmmi_malloc(ctx, (size_t)nrows * rec + 1, 1), *rb = NULL;
    *out = NULL;
    if (sc == NULL || sb == NULL) local = DSMM_ERR_NOMEM;
    st = dsmmi_comm_agree(ctx, local);
    if (st != DSMM_OK) goto cleanup;
    size_t *sd = sc + P, *rc = sc + 2 * P;
    for (int t = 0; t < P; t++) sc[t] = sd[t] = 0;
    sc[0] = (size_t)nrows * rec;
    for (dsmm_idx i = 0; i < nrows; i++) {
        int64_t v = vx[i];
        memcpy(sb + (size_t)i * rec, &v, 8);
        memcpy(sb + (size_t)i * rec + 8, (const char *)C->val + (size_t)(i * C->ld) * elem,
               (size_t)C->ncols * elem);
    }
    st = dsmmi_exchange(ctx, sb, sc, sd, &rb, rc);
    if (st != DSMM_OK) goto cleanup;
    if (dsmm_ctx_rank(ctx) == 0) {
        size_t tot = 0;
        for (int t = 0; t < P; t++) tot += rc[t];
        n = (dsmm_idx)(tot / rec);
        local = dsmm_dense_create(ctx, n, C->ncols, C->type, out);
        for (dsmm_idx i = 0; local == DSMM_OK && i < n; i++) {
            int64_t v;
            memcpy(&v, rb + (size_t)i * rec, 8);
            memcpy((char *)(*out)->val + (size_t)(v * (*out)->ld) * elem, rb + (size_t)i * rec + 8,
                   (size_t)C->ncols * elem);
        }
    }
    st = dsmmi_comm_agree(ctx, local);
cleanup:
    if (st != DSMM_OK) dsmm_dense_destroy(out);
    dsmmi_free(ctx, sc);
    dsmmi_free(ctx, sb);
    dsmmi_free(ctx, rb);
    return st;
}

int cli_spmm_cola(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                  dsmm_idx k, uint64_t seed, dsmm_type type, const char *out,
                  const dsmm_cola_opts *co, int repeat)
{
    dsmm_ctx *ctx = NULL;
    dsmm_dist *A = NULL;
    dsmm_cola *plan = NULL;
    dsmm_dense *B = NULL, *C = NULL, *Cg = NULL;
    dsmm_stats *s = NULL;
    double *times = NULL;
    int64_t *vol = NULL; // the volume table's rows, every rank's
    int rc = cli_dist_ctx(cmd, c, d, &ctx);
    if (rc != CLI_OK) return rc;
    dsmm_read_opts ro;
    cli_read_opts(c, &ro);
    ro.type = type;
    double t0 = dsmmi_wtime();
    if (dsmm_dist_read(ctx, a_path, &ro, 0, 0, &A, NULL) != DSMM_OK) {
        rc = cli_fail(cmd, ctx, "cannot read A");
        goto done;
    }
    double io = dsmmi_wtime() - t0;
    t0 = dsmmi_wtime();
    if (dsmm_cola_create(ctx, A, co, &plan) != DSMM_OK) {
        rc = cli_fail(cmd, ctx, "cannot make the 1D plan");
        goto done;
    }
    double setup = dsmmi_wtime() - t0;
    dsmm_idx a_nnz = dsmm_dist_nnz(A), n_all = dsmm_dist_nrows(A);
    dsmm_dist_destroy(&A);
    dsmm_idx row0, nrows;
    const dsmm_idx *vx;
    dsmm_cola_rows(plan, &row0, &nrows, &vx);
    dsmm_status st = dsmm_dense_create(ctx, nrows, k, type, &B);
    if (st == DSMM_OK) st = dsmm_dense_create(ctx, nrows, k, type, &C);
    if (st == DSMM_OK) {
        times = dsmmi_malloc(ctx, 3 * (size_t)repeat, sizeof *times); // seconds | comp | comm
        if (times == NULL) st = DSMM_ERR_NOMEM;
    }
    if (dsmmi_comm_agree(ctx, st) != DSMM_OK) {
        rc = cli_fail(cmd, ctx, "cannot allocate B and C");
        goto done;
    }
    cli_random_b(B, seed, vx, 0, 0); // row r: vertex vx[r]'s stream
    dsmm_cola_info best = {0};       // the byte counts are the same every run
    for (int i = 0; i < repeat; i++) {
        dsmmi_barrier(ctx, NULL);
        double t1 = dsmmi_wtime();
        if (dsmm_cola_spmm(ctx, plan, B, C, &best) != DSMM_OK) {
            rc = cli_fail(cmd, ctx, "multiply failed");
            goto done;
        }
        // The slowest rank's seconds, compute and communication: the same on every rank.
        double mine[3] = {dsmmi_wtime() - t1, best.comp_seconds, best.comm_seconds};
        if (dsmmi_allreduce_f64(ctx, mine, 3, '>') != DSMM_OK) {
            rc = cli_fail(cmd, ctx, "cannot reduce the times");
            goto done;
        }
        for (int x = 0; x < 3; x++) times[x * repeat + i] = mine[x];
    }
    int mid = cli_median_run(ctx, times, repeat);
    double med = times[mid];
    best.comp_seconds = times[repeat + mid];
    best.comm_seconds = times[2 * repeat + mid];
    if (out) {
        double t2 = dsmmi_wtime();
        st = gather_c(ctx, plan, C, &Cg);
        if (st == DSMM_OK && dsmm_ctx_rank(ctx) == 0) st = dsmm_write_dense(ctx, out, Cg);
        if (dsmmi_comm_agree(ctx, st) != DSMM_OK) {
            rc = cli_fail(cmd, ctx, "cannot write C");
            goto done;
        }
        io += dsmmi_wtime() - t2;
    }
    int nwg = 0;
    for (int r = 0; r < dsmm_ctx_size(ctx); r++) nwg += dsmm_ctx_workgroup(ctx, r) == r;
    FILE *f = c->quiet ? NULL : cli_report_stream(c, out);
    size_t elem = type == DSMM_DOUBLE ? 8 : 4;
    if (f && dsmm_ctx_rank(ctx) == 0) {
        fprintf(f, "%-20sspmm %s on %d ranks (%d workgroups), reorder %s, comm %s, pipeline %s\n",
                "algorithm:", dsmm_cola_alg_name(co->alg), dsmm_ctx_size(ctx), nwg,
                dsmm_reorder_name(co->reorder), dsmm_cola_comm_name(co->comm),
                co->pipeline ? "on" : "off");
        fprintf(f, "%-20s%.6f%s (comp %.6f, comm %.6f: slowest rank)\n", "seconds:", med,
                repeat > 1 ? " (median)" : "", best.comp_seconds, best.comm_seconds);
        fprintf(f, "%-20s%.6f (plan), %.6f (read)\n", "setup seconds:", setup, io);
    }
    dsmm_cola_volume v;
    dsmm_cola_volume_get(plan, k, elem, &v);
    if (cli_cola_gather(ctx, &v, &best, &vol) != DSMM_OK) {
        rc = cli_fail(cmd, ctx, "cannot gather the volume table");
        goto done;
    }
    if (f && dsmm_ctx_rank(ctx) == 0) {
        char title[128];
        snprintf(title, sizeof title,
                 "volume (k = %lld, %zu-byte values; bytes this rank receives per multiply):",
                 (long long)k, elem);
        cli_cola_print(f, title, vol, dsmm_ctx_size(ctx), 1);
    }
    if (c->stats) {
        int64_t sums[7] = {v.v_cg,        v.v_fr,          v.v_fc,         v.inter_nofusion,
                           v.inter_fused, best.recv_intra, best.recv_inter};
        int64_t peak = (int64_t)dsmm_ctx_mem_peak(ctx);
        st = dsmmi_allreduce_i64(ctx, sums, 7, '+');
        if (st == DSMM_OK) st = dsmmi_allreduce_i64(ctx, &peak, 1, '>');
        static const char *const keys[7] = {
            "v_cg_bytes",        "v_fr_bytes",       "v_fc_bytes",      "inter_nofusion_bytes",
            "inter_fused_bytes", "recv_intra_bytes", "recv_inter_bytes"};
        if (st == DSMM_OK) st = dsmm_stats_create(ctx, "spmm", &s);
        if (st == DSMM_OK) st = dsmm_stats_set_str(s, "algo", dsmm_cola_alg_name(co->alg));
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "ranks", dsmm_ctx_size(ctx));
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "threads", dsmm_ctx_threads(ctx));
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "seconds", med);
        // the stable keys: a multiply-add per entry of A and column of B; C's n x k entries;
        // what every rank received in one multiply is what was sent
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "flops", 2.0 * (double)a_nnz * (double)k);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "nnz_in", a_nnz);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "nnz_out", (int64_t)n_all * k);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "peak_bytes", peak);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "bytes_sent", sums[5] + sums[6]);
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "comp_seconds", best.comp_seconds);
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "comm_seconds", best.comm_seconds);
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "setup_seconds", setup);
        if (st == DSMM_OK) st = dsmm_stats_set_num(s, "io_seconds", io);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "k", k);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "repeat", repeat);
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "workgroups", nwg);
        if (st == DSMM_OK) st = dsmm_stats_set_str(s, "reorder", dsmm_reorder_name(co->reorder));
        if (st == DSMM_OK) st = dsmm_stats_set_str(s, "comm", dsmm_cola_comm_name(co->comm));
        if (st == DSMM_OK)
            st = dsmm_stats_set_str(s, "lsc_kernel", dsmm_spmm_alg_name(best.lsc_alg));
        if (st == DSMM_OK)
            st = dsmm_stats_set_str(s, "rsc_kernel", dsmm_spmm_alg_name(best.rsc_alg));
        if (st == DSMM_OK) st = dsmm_stats_set_int(s, "gpu_resident", best.gpu_resident);
        if (st == DSMM_OK) st = cli_gpu_stats(ctx, s); // rank 0's device record (when it has one)
        for (int i = 0; i < 7 && st == DSMM_OK; i++) st = dsmm_stats_set_int(s, keys[i], sums[i]);
        if (st == DSMM_OK && dsmm_ctx_rank(ctx) == 0) st = dsmm_stats_write(s, c->stats);
        if (dsmmi_comm_agree(ctx, st) != DSMM_OK) {
            if (out && strcmp(out, "-") != 0 && dsmm_ctx_rank(ctx) == 0) remove(out);
            rc = cli_fail(cmd, ctx, "cannot write the statistics");
            goto done;
        }
    }
done:
    dsmm_stats_destroy(&s);
    dsmmi_free(ctx, times);
    dsmmi_free(ctx, vol);
    dsmm_dense_destroy(&Cg);
    dsmm_dense_destroy(&B);
    dsmm_dense_destroy(&C);
    dsmm_cola_destroy(&plan);
    dsmm_dist_destroy(&A);
    cli_dist_end(&ctx);
    return rc;
}
