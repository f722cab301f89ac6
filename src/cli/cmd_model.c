// src/cli/cmd_model.c: `dsmm model`: the performance model of the distributed products
// (dist/model.h, RDMA paper §1 Fig. 1 and §4) for a matrix file or a generated matrix on any
// grid, computed serially: flops, load imbalance (end to end, per stage, synchronised), bytes
// moved and gets per rank for SUMMA and the one-sided algorithms, the inter-node roofline and
// predicted times; as text, JSON (--json) and gnuplot data, scripts and PNGs (--plot).
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dist/model.h"

// Ranks the command models at most (the per-item arrays grow with pr * pc * stages).
#define MAX_RANKS 65536

static const cli_cmd cmd = {
    "model",
    "[FILE] (--ranks P | --grid PRxPC) [options]",
    "Models the distributed product C = A * B on a process grid without running it.",
    "A comes from FILE or from --gen rmat|er with the options of 'dsmm gen'. spgemm (default):\n"
    "B = A (square A) or -b FILE; spmm: B dense with -k columns. The model cuts the product\n"
    "into the work items C(i,j) += A(i,s) * B(s,j) of the SUMMA stage plan and counts, per\n"
    "algorithm (summa, rdma-c, rdma-a, rdma-b) and rank, the flops executed and the bytes\n"
    "moved, as the distributed code counts them. Printed: the load imbalance max/avg of the\n"
    "flops end to end, per stage and synchronised (sum of stage maxima / sum of stage\n"
    "averages: what synchronising between stages costs, RDMA paper Fig. 1), bytes per rank,\n"
    "gets, the inter-node roofline (§4) and a predicted time per algorithm.\n"
    "--permute SEED applies a random symmetric permutation to A first (square A; not with -b).\n"
    "--json FILE writes everything, per-rank arrays included ('-': JSON on stdout, no text).\n"
    "--plot DIR writes imbalance_heatmap, stage_imbalance and roofline as .dat data and .gp\n"
    "gnuplot scripts, and runs gnuplot on them (PNGs) when it is on PATH.\n"
    "docs/model.md has the formulas.",
};

// "PRxPC" with both positive; 0 on success.
static int parse_grid(const char *s, int *pr, int *pc)
{
    char *end = NULL;
    errno = 0;
    long r = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || errno || r < 1 || r > MAX_RANKS) return -1;
    const char *q = end + 1;
    long c = strtol(q, &end, 10);
    if (end == q || *end != '\0' || errno || c < 1 || c > MAX_RANKS) return -1;
    if (r * c > MAX_RANKS) return -2;
    *pr = (int)r;
    *pc = (int)c;
    return 0;
}

// Everything the outputs print.
typedef struct result {
    const dsmmi_model *m;
    dsmmi_model_roof roof;
    dsmmi_model_machine mc; // bytes/s and flop/s
    const char *a_desc, *b_desc;
    const dsmm_csr *A, *B; // B NULL for spmm
    dsmm_idx k;
    int op_spmm, permuted;
    uint64_t permute_seed;
    double nnz_c, seconds;
    int64_t live;
    double e2e, sync;
    double *stage_imb; // S entries
    int worst;
    double alg_imb[DSMMI_MODEL_COUNT];
} result;

static double max_i64(const int64_t *v, int n)
{
    int64_t m = 0;
    for (int r = 0; r < n; r++)
        if (v[r] > m) m = v[r];
    return (double)m;
}

static double sum_i64(const int64_t *v, int n)
{
    double s = 0;
    for (int r = 0; r < n; r++) s += (double)v[r];
    return s;
}

static void print_text(FILE *out, const result *R)
{
    const dsmmi_model *m = R->m;
    int P = m->P;
#define ROW(key, ...)                                                                              \
    do {                                                                                           \
        fprintf(out, "%-17s", key ":");                                                            \
        fprintf(out, __VA_ARGS__);                                                                 \
        fprintf(out, "\n");                                                                        \
    } while (0)
    ROW("A", "%lld x %lld, %lld entries, %s (%s)%s", (long long)R->A->nrows, (long long)R->A->ncols,
        (long long)R->A->nnz, dsmm_type_name(R->A->type), R->a_desc,
        R->permuted ? ", randomly permuted" : "");
    if (R->op_spmm)
        ROW("B", "dense %lld x %lld, %s", (long long)R->A->ncols, (long long)R->k,
            dsmm_type_name(m->ctype));
    else if (R->B == R->A)
        ROW("B", "= A");
    else
        ROW("B", "%lld x %lld, %lld entries, %s (%s)", (long long)R->B->nrows,
            (long long)R->B->ncols, (long long)R->B->nnz, dsmm_type_name(R->B->type), R->b_desc);
    ROW("product", "%s, C %s, flops %.0f, nnz(C) %.0f%s", R->op_spmm ? "spmm" : "spgemm",
        dsmm_type_name(m->ctype), R->roof.flops, R->nnz_c, "");
    if (!R->op_spmm) ROW("cf", "%.4g (flops / nnz of the partial products)", R->roof.cf);
    ROW("grid", "%d x %d (%d ranks), %d stages, %lld work items, %lld live", m->pr, m->pc, P, m->S,
        (long long)m->pr * m->S * m->pc, (long long)R->live);
    ROW("machine", "network %.4g GB/s, peak %.4g GFLOP/s, memory %.4g GB/s per rank",
        R->mc.bw / 1e9, R->mc.peak / 1e9, R->mc.membw / 1e9);
    ROW("local roofline", "AI %.4g flop/B, roof %.4g GFLOP/s", R->roof.local_ai,
        R->roof.local_roof / 1e9);
    fprintf(out, "\n%-8s %10s %12s %12s %12s %12s %9s %10s %10s %10s %11s\n", "alg", "flops imb",
            "MB in max", "MB in avg", "MB out max", "MB total", "gets max", "gets total",
            "AI flop/B", "GFLOP/s", "time s");
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        double total = R->roof.bytes[a];
        char ai[32];
        if (isfinite(R->roof.inter_ai[a]))
            snprintf(ai, sizeof ai, "%.4g", R->roof.inter_ai[a]);
        else
            snprintf(ai, sizeof ai, "inf");
        fprintf(out, "%-8s %10.4f %12.4f %12.4f %12.4f %12.4f %9.0f %10.0f %10s %10.4g %11.4g\n",
                dsmmi_model_alg_name((dsmmi_model_alg)a), R->alg_imb[a],
                max_i64(m->rank_in[a], P) / 1e6, total / P / 1e6, max_i64(m->rank_out[a], P) / 1e6,
                total / 1e6, max_i64(m->rank_gets[a], P), sum_i64(m->rank_gets[a], P), ai,
                R->roof.attainable[a] / 1e9, R->roof.time[a]);
    }
    fprintf(out,
            "\nimbalance of the flops (Fig. 1; stationary C: rank (i,j) multiplies for C(i,j))\n");
    ROW("end-to-end", "%.4f (max/avg of the ranks' total flops)", R->e2e);
    ROW("synchronized", "%.4f (sum over stages of max / sum of avg)", R->sync);
    if (R->worst >= 0)
        ROW("worst stage", "%d of %d, max/avg %.4f", R->worst, m->S, R->stage_imb[R->worst]);
    else
        ROW("worst stage", "n/a (no flops)");
    ROW("model seconds", "%.3f", R->seconds);
#undef ROW
}

static void json_i64s(dsmmi_json *j, const char *key, const int64_t *v, int n)
{
    dsmmi_json_begin_array(j, key);
    for (int r = 0; r < n; r++) dsmmi_json_int(j, NULL, v[r]);
    dsmmi_json_end_array(j);
}

static void json_nums(dsmmi_json *j, const char *key, const double *v, size_t n, size_t stride)
{
    dsmmi_json_begin_array(j, key);
    for (size_t r = 0; r < n; r++) dsmmi_json_num(j, NULL, v[r * stride]);
    dsmmi_json_end_array(j);
}

static void json_matrix(dsmmi_json *j, const char *key, const dsmm_csr *X, const char *desc)
{
    dsmmi_json_begin_object(j, key);
    dsmmi_json_str(j, "source", desc);
    dsmmi_json_int(j, "nrows", X->nrows);
    dsmmi_json_int(j, "ncols", X->ncols);
    dsmmi_json_int(j, "nnz", X->nnz);
    dsmmi_json_str(j, "values", dsmm_type_name(X->type));
    dsmmi_json_end_object(j);
}

static dsmm_status build_json(dsmm_ctx *ctx, const result *R, dsmmi_json *j)
{
    const dsmmi_model *m = R->m;
    int P = m->P, S = m->S;
    dsmmi_json_init(j, ctx);
    dsmmi_json_begin_object(j, NULL);
    dsmmi_json_str(j, "op", R->op_spmm ? "spmm" : "spgemm");
    json_matrix(j, "a", R->A, R->a_desc);
    if (R->op_spmm) {
        dsmmi_json_begin_object(j, "b");
        dsmmi_json_str(j, "source", "dense");
        dsmmi_json_int(j, "nrows", R->A->ncols);
        dsmmi_json_int(j, "ncols", R->k);
        dsmmi_json_str(j, "values", dsmm_type_name(m->ctype));
        dsmmi_json_end_object(j);
    } else {
        json_matrix(j, "b", R->B, R->B == R->A ? "A" : R->b_desc);
    }
    if (R->permuted)
        dsmmi_json_int(j, "permute_seed", (int64_t)R->permute_seed);
    else
        dsmmi_json_str(j, "permute_seed", NULL);
    dsmmi_json_str(j, "c_values", dsmm_type_name(m->ctype));
    dsmmi_json_int(j, "pr", m->pr);
    dsmmi_json_int(j, "pc", m->pc);
    dsmmi_json_int(j, "ranks", P);
    dsmmi_json_int(j, "stages", S);
    dsmmi_json_int(j, "items", (int64_t)m->pr * S * m->pc);
    dsmmi_json_int(j, "live_items", R->live);
    dsmmi_json_num(j, "flops", R->roof.flops);
    dsmmi_json_num(j, "nnz_c", R->nnz_c);
    if (R->op_spmm)
        dsmmi_json_str(j, "cf", NULL);
    else
        dsmmi_json_num(j, "cf", R->roof.cf);
    dsmmi_json_begin_object(j, "machine");
    dsmmi_json_num(j, "bandwidth_gbs", R->mc.bw / 1e9);
    dsmmi_json_num(j, "peak_gflops", R->mc.peak / 1e9);
    dsmmi_json_num(j, "mem_bw_gbs", R->mc.membw / 1e9);
    dsmmi_json_end_object(j);
    dsmmi_json_num(j, "local_ai", R->roof.local_ai);
    dsmmi_json_num(j, "local_roof_gflops", R->roof.local_roof / 1e9);
    dsmmi_json_begin_object(j, "imbalance");
    dsmmi_json_num(j, "end_to_end", R->e2e);
    dsmmi_json_num(j, "synchronized", R->sync);
    dsmmi_json_int(j, "worst_stage", R->worst);
    dsmmi_json_num(j, "worst_stage_imbalance", R->worst >= 0 ? R->stage_imb[R->worst] : 0.0);
    json_nums(j, "stages", R->stage_imb, (size_t)S, 1);
    dsmmi_json_end_object(j);
    json_i64s(j, "stage_lo", m->plan.lo, S);
    json_i64s(j, "stage_hi", m->plan.hi, S);
    dsmmi_json_begin_object(j, "algorithms");
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        dsmmi_json_begin_object(j, dsmmi_model_alg_name((dsmmi_model_alg)a));
        dsmmi_json_num(j, "flops_imbalance", R->alg_imb[a]);
        dsmmi_json_num(j, "bytes_in_max", max_i64(m->rank_in[a], P));
        dsmmi_json_num(j, "bytes_in_avg", R->roof.bytes[a] / P);
        dsmmi_json_num(j, "bytes_out_max", max_i64(m->rank_out[a], P));
        dsmmi_json_num(j, "bytes_total", R->roof.bytes[a]);
        dsmmi_json_num(j, "gets_max", max_i64(m->rank_gets[a], P));
        dsmmi_json_num(j, "gets_total", sum_i64(m->rank_gets[a], P));
        dsmmi_json_num(j, "inter_ai", R->roof.inter_ai[a]); // null when nothing moves
        dsmmi_json_num(j, "attainable_gflops", R->roof.attainable[a] / 1e9);
        dsmmi_json_num(j, "time_s", R->roof.time[a]);
        json_nums(j, "rank_flops", m->rank_flops[a], (size_t)P, 1);
        json_i64s(j, "rank_in", m->rank_in[a], P);
        json_i64s(j, "rank_out", m->rank_out[a], P);
        json_i64s(j, "rank_gets", m->rank_gets[a], P);
        dsmmi_json_end_object(j);
    }
    dsmmi_json_end_object(j);
    dsmmi_json_begin_array(j, "stage_flops"); // per rank, per stage
    for (int r = 0; r < P; r++) json_nums(j, NULL, m->stage_flops + (size_t)r * S, (size_t)S, 1);
    dsmmi_json_end_array(j);
    dsmmi_json_num(j, "model_seconds", R->seconds);
    dsmmi_json_end_object(j);
    return j->st;
}

// Writes text (and a newline) to path atomically ('-': stdout).
static dsmm_status write_file(dsmm_ctx *ctx, const char *path, const char *text, int newline)
{
    dsmm_status st = DSMM_OK;
    dsmmi_outfile o;
    memset(&o, 0, sizeof o);
    DSMM_TRY(dsmmi_outfile_open(ctx, &o, path));
    if (fputs(text, o.f) < 0 || (newline && fputc('\n', o.f) < 0)) {
        dsmmi_outfile_abort(ctx, &o);
        DSMM_FAIL(ctx, DSMM_ERR_IO, "cannot write %s", path);
    }
    DSMM_TRY(dsmmi_outfile_commit(ctx, &o));
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* --plot                                                                                      */
/* ------------------------------------------------------------------------------------------ */

// A growing text buffer for the plot files.
typedef struct text {
    char *buf;
    size_t len, cap;
    int failed;
} text;

static void tprintf(text *t, const char *fmt, ...) DSMMI_PRINTF(2, 3);
static void tprintf(text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->buf && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)n) cap *= 2;
        char *b = realloc(t->buf, cap);
        if (b == NULL) {
            t->failed = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
}

static const char terminal[] = "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                               "    set terminal pngcairo size 900,700\n"
                               "} else {\n"
                               "    set terminal png size 900,700\n"
                               "}\n";

// The three plots' data and scripts into dir (which exists), atomically file by file.
static dsmm_status write_plots(dsmm_ctx *ctx, const char *dir, const result *R)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_model *m = R->m;
    int P = m->P, S = m->S;
    text t = {0};
    char path[4200];
#define PUT(name)                                                                                  \
    do {                                                                                           \
        DSMM_CHECK(ctx, !t.failed, DSMM_ERR_NOMEM, "plot file %s", name);                          \
        snprintf(path, sizeof path, "%s/%s", dir, name);                                           \
        DSMM_TRY(write_file(ctx, path, t.buf ? t.buf : "", 0));                                    \
        t.len = 0;                                                                                 \
        if (t.buf) t.buf[0] = '\0';                                                                \
    } while (0)

    // Heat map: rank (i, j)'s flops / average, stationary C (the Fig. 1(a) assignment).
    double avg = 0;
    for (int r = 0; r < P; r++) avg += m->rank_flops[DSMMI_MODEL_SUMMA][r];
    avg /= P;
    tprintf(&t, "# flops / average of rank (i, j), stationary C: %d rows (grid rows) of %d\n",
            m->pr, m->pc);
    for (int i = 0; i < m->pr; i++) {
        for (int j = 0; j < m->pc; j++)
            tprintf(&t, "%s%.6g", j ? " " : "",
                    avg > 0 ? m->rank_flops[DSMMI_MODEL_SUMMA][i * m->pc + j] / avg : 0.0);
        tprintf(&t, "\n");
    }
    PUT("imbalance_heatmap.dat");
    tprintf(&t, "# imbalance_heatmap.gp: run 'gnuplot imbalance_heatmap.gp' in this directory\n");
    tprintf(&t, "%s", terminal);
    tprintf(&t,
            "set output 'imbalance_heatmap.png'\n"
            "set title 'flops / average per rank, %d x %d grid (end-to-end max/avg %.4f)'\n"
            "set xlabel 'grid column j'\nset ylabel 'grid row i'\nset cblabel 'flops / avg'\n"
            "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset palette rgb 33,13,10\n"
            "plot 'imbalance_heatmap.dat' matrix with image notitle\n",
            m->pr, m->pc, R->e2e, m->pc - 1, m->pr - 1);
    PUT("imbalance_heatmap.gp");

    // Per-stage max/avg (stages with flops), with the end-to-end and synchronised levels.
    tprintf(&t, "# stage  max/avg  lo  hi (stages with flops)\n");
    for (int s = 0; s < S; s++)
        if (R->stage_imb[s] > 0)
            tprintf(&t, "%d %.6g %lld %lld\n", s, R->stage_imb[s], (long long)m->plan.lo[s],
                    (long long)m->plan.hi[s]);
    PUT("stage_imbalance.dat");
    tprintf(&t, "# stage_imbalance.gp: run 'gnuplot stage_imbalance.gp' in this directory\n");
    tprintf(&t, "%s", terminal);
    tprintf(&t,
            "set output 'stage_imbalance.png'\n"
            "set title 'flops max/avg per stage, %d x %d grid'\n"
            "set xlabel 'stage'\nset ylabel 'max / avg'\nset yrange [0:*]\nset key below\n"
            "set xrange [-0.5:%d.5]\n"
            "plot 'stage_imbalance.dat' using 1:2 with linespoints pt 7 title 'per stage', \\\n"
            "     %.6g with lines dt 2 lw 2 title 'end to end (%.3f)', \\\n"
            "     %.6g with lines dt 3 lw 2 title 'synchronized (%.3f)'\n",
            m->pr, m->pc, S > 0 ? S - 1 : 0, R->e2e, R->e2e, R->sync, R->sync);
    PUT("stage_imbalance.gp");

    // Inter-node roofline: attainable GFLOP/s = min(local roof, AI * bandwidth); one series
    // per algorithm, points shrinking so that coinciding ones stay visible.
    double bw = R->mc.bw / 1e9, roof = R->roof.local_roof / 1e9;
    double lo = roof > 0 ? roof / bw : 1, hi = lo;
    int shown[DSMMI_MODEL_COUNT], nshown = 0;
    tprintf(&t, "# algorithm  inter-node AI (flop/B)  attainable GFLOP/s (algorithms that move "
                "bytes)\n");
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        double ai = R->roof.inter_ai[a];
        if (!isfinite(ai) || ai <= 0) continue;
        tprintf(&t, "%s %.6g %.6g\n", dsmmi_model_alg_name((dsmmi_model_alg)a), ai,
                R->roof.attainable[a] / 1e9);
        shown[nshown++] = a;
        if (ai < lo) lo = ai;
        if (ai > hi) hi = ai;
    }
    PUT("roofline.dat");
    tprintf(&t, "# roofline.gp: run 'gnuplot roofline.gp' in this directory\n");
    tprintf(&t, "%s", terminal);
    tprintf(&t,
            "set output 'roofline.png'\n"
            "set title 'inter-node roofline: %.4g GB/s network, local roof %.4g GFLOP/s'\n"
            "set logscale xy\nset xlabel 'inter-node arithmetic intensity (flop/byte)'\n"
            "set ylabel 'GFLOP/s per rank'\nset key bottom right\nset samples 400\n"
            "bw = %.6g\nroof = %.6g\nf(x) = (x * bw < roof) ? x * bw : roof\n"
            "set xrange [%.6g:%.6g]\n"
            "plot f(x) with lines lw 2 title 'min(local roof, AI x bandwidth)'",
            bw, roof, bw, roof > 0 ? roof : 1e-9, lo / 10, hi * 10);
    for (int x = 0; x < nshown; x++) {
        int a = shown[x];
        tprintf(&t,
                ", \\\n     'roofline.dat' every ::%d::%d using 2:3 with points pt %d ps %.1f "
                "title '%s (AI %.3g, %.3g GFLOP/s)'",
                x, x, 5 + 2 * (a % 3), 2.5 - 0.5 * a, dsmmi_model_alg_name((dsmmi_model_alg)a),
                R->roof.inter_ai[a], R->roof.attainable[a] / 1e9);
    }
    tprintf(&t, "\n");
    PUT("roofline.gp");
#undef PUT
cleanup:
    free(t.buf);
    return st;
}

// 1 when an executable named name is on PATH.
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (path == NULL) return 0;
    char buf[4096];
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if (len > 0 && len + strlen(name) + 2 < sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        if (!colon) break;
        path = colon + 1;
    }
    return 0;
}

// Runs `gnuplot script` inside dir (the scripts name their files relative to it); the exit
// status, or -1 when it could not start.
static int run_gnuplot(const char *dir, const char *script)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int plot(dsmm_ctx *ctx, const char *dir, const result *R)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (mkdir(dir, 0777) != 0) {
            fprintf(stderr, "dsmm model: --plot %s: cannot create the directory: %s\n", dir,
                    strerror(errno));
            return CLI_FAIL;
        }
    } else if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "dsmm model: --plot %s: not a directory\n", dir);
        return CLI_FAIL;
    }
    if (write_plots(ctx, dir, R) != DSMM_OK) return cli_fail(&cmd, ctx, "cannot write the plots");
    if (!on_path("gnuplot")) {
        fprintf(stderr,
                "dsmm model: gnuplot not found; wrote %s/*.gp and *.dat, run gnuplot on them\n",
                dir);
        return CLI_OK;
    }
    static const char *const scripts[] = {"imbalance_heatmap.gp", "stage_imbalance.gp",
                                          "roofline.gp"};
    for (size_t s = 0; s < sizeof scripts / sizeof scripts[0]; s++) {
        int rc = run_gnuplot(dir, scripts[s]);
        if (rc != 0) {
            fprintf(stderr, "dsmm model: gnuplot failed on %s/%s (exit %d)\n", dir, scripts[s], rc);
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* ------------------------------------------------------------------------------------------ */

int cli_model(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    dsmm_gen_params gp;
    dsmm_gen_params_init(&gp);
    int scale = gp.scale, symmetric = 0, self_loops = 0, values = 0, ranks = 0, op = 0, type = 0;
    int64_t n = gp.n, k = 128, permute_seed = -1;
    double bw = 12.5, peak = 1000, membw = 200;
    const char *gen = NULL, *abcd = NULL, *grid = NULL, *b_path = NULL, *json = NULL,
               *plot_dir = NULL;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"ranks", 'p', "P", "model P ranks on the squarest grid (at most 65536)", CLI_INT, &ranks,
         1, MAX_RANKS},
        {"grid", 0, "PRxPC", "model this process grid", CLI_STRING, &grid, 0, 0},
        {"op", 0, "spgemm|spmm", "the product (default spgemm)", CLI_ENUM, &op, 0, 0},
        {"B", 'b', "FILE", "spgemm: B from FILE (default B = A)", CLI_STRING, &b_path, 0, 0},
        {"k", 'k', "K", "spmm: columns of the dense B (default 128)", CLI_IDX, &k, 1, 1e12},
        {"type", 0, "double|float", "spmm: values of B and C (default double)", CLI_ENUM, &type, 0,
         0},
        {"permute", 0, "SEED", "random symmetric permutation of A first (square A)", CLI_IDX,
         &permute_seed, 0, 0x1p53},
        {"bandwidth", 0, "GB/s", "network bandwidth per rank (default 12.5: a 100 Gb/s NIC)",
         CLI_DOUBLE, &bw, 1e-9, 1e12},
        {"peak", 0, "GFLOP/s", "local arithmetic peak per rank (default 1000)", CLI_DOUBLE, &peak,
         1e-9, 1e12},
        {"mem-bw", 0, "GB/s", "local memory bandwidth per rank (default 200)", CLI_DOUBLE, &membw,
         1e-9, 1e12},
        {"json", 0, "FILE", "write everything as JSON ('-': stdout instead of the text)",
         CLI_STRING, &json, 0, 0},
        {"plot", 0, "DIR", "write gnuplot data and scripts (and PNGs) into DIR", CLI_STRING,
         &plot_dir, 0, 0},
        {"gen", 0, "rmat|er", "generate A instead of reading FILE", CLI_STRING, &gen, 0, 0},
        {"seed", 's', "S", "generator: random seed (default 1)", CLI_U64, &gp.seed, 0, 0},
        {"symmetric", 0, NULL, "generator: undirected, A = A^T", CLI_FLAG, &symmetric, 0, 0},
        {"self-loops", 0, NULL, "generator: keep diagonal entries", CLI_FLAG, &self_loops, 0, 0},
        {"values", 0, NULL, "generator: random values instead of a pattern", CLI_FLAG, &values, 0,
         0},
        {"scale", 0, "S", "rmat: 2^S vertices (default 10)", CLI_INT, &scale, 1, 40},
        {"edge-factor", 0, "F", "rmat: edges per vertex before merging (default 16)", CLI_DOUBLE,
         &gp.edge_factor, 1e-9, 1e9},
        {"abcd", 0, "a,b,c,d", "rmat: quadrant probabilities (default 0.57,0.19,0.19,0.05)",
         CLI_STRING, &abcd, 0, 0},
        {"n", 'n', "N", "er: vertices (default 1000)", CLI_IDX, &n, 1, 1e15},
        {"avg-degree", 0, "D", "er: expected entries per row (default 8)", CLI_DOUBLE,
         &gp.avg_degree, 0, 1e15},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 1);
    if (rc != CLI_OK) return rc;
    int kind = -1;
    if (gen) {
        kind = strcmp(gen, "rmat") == 0 ? 0 : strcmp(gen, "er") == 0 ? 1 : -1;
        if (kind < 0) return cli_usage_error(&cmd, "--gen: unknown generator '%s' (rmat, er)", gen);
        if (npos > 0) return cli_usage_error(&cmd, "FILE and --gen exclude each other");
    } else if (npos != 1) {
        return cli_usage_error(&cmd, "needs FILE or --gen rmat|er");
    }
    rc = cli_stdout_once(&cmd, &c, json && strcmp(json, "-") == 0, "--json -");
    if (rc != CLI_OK) return rc;
    if (abcd && cli_parse_abcd(abcd, &gp) != 0)
        return cli_usage_error(&cmd, "--abcd: '%s' is not four probabilities a,b,c,d summing to 1",
                               abcd);
    int pr = 0, pc = 0;
    if (grid) {
        int g = parse_grid(grid, &pr, &pc);
        if (g == -2) return cli_usage_error(&cmd, "--grid %s: more than %d ranks", grid, MAX_RANKS);
        if (g != 0)
            return cli_usage_error(&cmd, "--grid: '%s' is not PRxPC with positive PR and PC", grid);
        if (ranks && pr * pc != ranks)
            return cli_usage_error(&cmd, "--grid %s has %d ranks but --ranks is %d", grid, pr * pc,
                                   ranks);
    } else if (ranks) {
        if (dsmm_grid_dims(ranks, &pr, &pc) != DSMM_OK)
            return cli_usage_error(&cmd, "--ranks %d: no grid", ranks);
    } else {
        return cli_usage_error(&cmd, "needs --ranks P or --grid PRxPC");
    }
    if (op == 1 && b_path) return cli_usage_error(&cmd, "-b is for spgemm (spmm's B is dense)");
    if (permute_seed >= 0 && b_path)
        return cli_usage_error(&cmd, "--permute is for A * A and spmm, not with -b");
    if (json && cli_dir_writable(&cmd, "--json", json) != CLI_OK) return CLI_FAIL;
    if (plot_dir && cli_dir_writable(&cmd, "--plot", plot_dir) != CLI_OK) return CLI_FAIL;
    gp.scale = scale;
    gp.n = n;
    gp.symmetric = symmetric;
    gp.self_loops = self_loops;
    gp.type = values ? DSMM_DOUBLE : DSMM_PATTERN;

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *B = NULL, *Ap = NULL;
    dsmm_idx *perm = NULL;
    dsmmi_model m;
    memset(&m, 0, sizeof m);
    result R;
    memset(&R, 0, sizeof R);
    dsmmi_json j;
    dsmmi_json_init(&j, NULL);
    char a_desc[512], b_desc[512];
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    j.ctx = ctx;
    double t0 = dsmmi_wtime();
    dsmm_read_opts ro;
    cli_read_opts(&c, &ro);
    if (kind == 0) {
        snprintf(a_desc, sizeof a_desc,
                 "rmat scale %d, edge factor %g, abcd %g,%g,%g,%g, seed %llu", gp.scale,
                 gp.edge_factor, gp.a, gp.b, gp.c, gp.d, (unsigned long long)gp.seed);
        if (dsmm_gen_rmat(ctx, &gp, &A) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "generator failed");
            goto done;
        }
    } else if (kind == 1) {
        snprintf(a_desc, sizeof a_desc, "er n %lld, average degree %g, seed %llu", (long long)gp.n,
                 gp.avg_degree, (unsigned long long)gp.seed);
        if (dsmm_gen_er(ctx, &gp, &A) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "generator failed");
            goto done;
        }
    } else {
        snprintf(a_desc, sizeof a_desc, "%s", pos[0]);
        if (dsmm_read(ctx, pos[0], &ro, &A, NULL, NULL) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot read A");
            goto done;
        }
    }
    if (b_path) {
        snprintf(b_desc, sizeof b_desc, "%s", b_path);
        if (dsmm_read(ctx, b_path, &ro, &B, NULL, NULL) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot read B");
            goto done;
        }
    }
    if (permute_seed >= 0) {
        if (A->nrows != A->ncols) {
            fprintf(stderr, "dsmm model: --permute: A is %lld x %lld, not square\n",
                    (long long)A->nrows, (long long)A->ncols);
            rc = CLI_FAIL;
            goto done;
        }
        if (dsmm_perm_random(ctx, A->nrows, (uint64_t)permute_seed, &perm) != DSMM_OK ||
            dsmm_csr_permute(ctx, A, perm, perm, &Ap) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "permutation failed");
            goto done;
        }
        dsmm_csr_destroy(&A);
        A = Ap;
        Ap = NULL;
    }
    if (op == 0 && B == NULL && A->nrows != A->ncols) {
        fprintf(stderr, "dsmm model: A is %lld x %lld: A * A needs a square A (or give -b FILE)\n",
                (long long)A->nrows, (long long)A->ncols);
        rc = CLI_FAIL;
        goto done;
    }
    double t1 = dsmmi_wtime();
    dsmm_status st;
    if (op == 0)
        st = dsmmi_model_spgemm(ctx, A, B ? B : A, pr, pc, NULL, &m);
    else
        st = dsmmi_model_spmm(ctx, A, k, type == 1 ? DSMM_FLOAT : DSMM_DOUBLE, pr, pc, &m);
    R.mc.bw = bw * 1e9;
    R.mc.peak = peak * 1e9;
    R.mc.membw = membw * 1e9;
    if (st == DSMM_OK) st = dsmmi_model_roofline(ctx, &m, &R.mc, &R.roof);
    if (st == DSMM_OK) {
        R.stage_imb = dsmmi_malloc(ctx, m.S ? (size_t)m.S : 1, sizeof *R.stage_imb);
        if (R.stage_imb == NULL) st = DSMM_ERR_NOMEM;
    }
    if (st != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "the model failed");
        goto done;
    }
    R.m = &m;
    R.A = A;
    R.B = op == 0 ? (B ? B : A) : NULL;
    R.k = k;
    R.op_spmm = op == 1;
    R.permuted = permute_seed >= 0;
    R.permute_seed = (uint64_t)(permute_seed >= 0 ? permute_seed : 0);
    R.a_desc = a_desc;
    R.b_desc = b_path ? b_desc : "A";
    for (int x = 0; x < m.P; x++) R.nnz_c += (double)m.c_nnz[x];
    for (int i = 0; i < m.pr; i++)
        for (int s = 0; s < m.S; s++)
            for (int jj = 0; jj < m.pc; jj++)
                R.live += m.a_nnz[(size_t)i * m.S + s] > 0 && m.b_nnz[(size_t)s * m.pc + jj] > 0;
    R.e2e = dsmmi_model_imbalance(m.rank_flops[DSMMI_MODEL_SUMMA], m.P);
    R.sync = dsmmi_model_sync_imbalance(m.stage_flops, m.P, m.S);
    R.worst = dsmmi_model_stage_imbalance(m.stage_flops, m.P, m.S, R.stage_imb);
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++)
        R.alg_imb[a] = dsmmi_model_imbalance(m.rank_flops[a], m.P);
    R.seconds = dsmmi_wtime() - t1;

    int to_stdout = json && strcmp(json, "-") == 0;
    if (!to_stdout) print_text(cli_report_stream(&c, NULL), &R);
    if (json) {
        if (build_json(ctx, &R, &j) != DSMM_OK || write_file(ctx, json, j.buf, 1) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot write the JSON");
            goto done;
        }
    }
    if (fflush(stdout) != 0) {
        rc = cli_fail(&cmd, NULL, "cannot write to stdout");
        goto done;
    }
    if (plot_dir) {
        rc = plot(ctx, plot_dir, &R);
        if (rc != CLI_OK) goto done;
    }
    cli_run run = {dsmmi_wtime() - t0, t1 - t0, A->nnz, 0};
    rc = cli_stats(&cmd, &c, ctx, "model", &run);
done:
    dsmmi_json_free(&j);
    R.stage_imb = dsmmi_free(ctx, R.stage_imb);
    dsmmi_model_free(ctx, &m);
    perm = dsmm_free(ctx, perm);
    dsmm_csr_destroy(&Ap);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
