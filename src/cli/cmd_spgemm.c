// src/cli/cmd_spgemm.c: `dsmm spgemm A [B] -o C`: C = A * B (B defaults to A) with the local
// SpGEMM engine (dsmm_csr_spgemm_ex): kernel, semiring, mask, B^T, value type and row order
// chosen by options; a summary of what ran (dims, flops, nnz(C), cf, kernel mix, times),
// --stats JSON, and Cohen's estimate of nnz(C) (dsmm_spgemm_estimate) with --estimate.
// C and the statistics are committed together: after any failure neither exists.
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

// The estimate --estimate prints: keys and seed are fixed so that runs repeat exactly.
#define ESTIMATE_KEYS 16
#define ESTIMATE_SEED 1

static const cli_cmd cmd = {
    "spgemm",
    "A [B] -o C [options]",
    "Multiplies sparse matrices: C = A * B (B defaults to A) and writes C.",
    "A, B and the mask are read as `dsmm info` reads them (Matrix Market, abc, dsmm binary;\n"
    ".gz too); C's format follows its name (.mtx, .abc/.txt, .dsmm/.bin; '-': Matrix Market\n"
    "on stdout). abc labels of A are kept for C when B is A or has the same labels.\n"
    "--semiring auto (default) is plus-times when A and B both hold values, else plus-pair\n"
    "(C counts the paths). --kernel auto (default) picks the accumulator of each row from\n"
    "its flops and the compression factor cf = flops / nnz(C); ref is the slow reference.\n"
    "A summary (dims, flops, nnz(C), cf, kernel mix, times) goes to stdout, or to stderr\n"
    "when C or the statistics go to stdout; --quiet drops it. -o may be left out with\n"
    "--stats (the product is computed, not written) or with --estimate alone (only the\n"
    "estimate runs: Cohen's estimator, 16 keys, seed 1, O(16 (nnz(A) + nnz(B))); the mask\n"
    "is not taken into account). On any failure neither C nor the statistics file exists.\n"
    "Out of core (docs/ooc.md): --ooc computes C in chunks A[i] * B[j] (A in row panels, B\n"
    "in column panels) whose working set fits --ooc-mem (default a quarter of the memory),\n"
    "largest chunks first, and assembles them into one C. With --gpu (and --kernel auto or\n"
    "gpu) the chunks run on the device, as many as the device memory (--gpu-mem) needs, with\n"
    "the copies of one chunk overlapping the kernels of the next; --hybrid sends the largest\n"
    "chunks to the device up to --gpu-ratio of the flops (default 0.65; auto: measured on\n"
    "the first chunks) and runs the rest on the CPU threads at the same time.",
};

// "auto|hash|heap|..." and "auto|plus-times|..." from the library's name tables, so the help
// and the parser follow them.
static void alg_choices(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < DSMM_SPGEMM_ALG_COUNT && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? "|" : "",
                              dsmm_spgemm_alg_name((dsmm_spgemm_alg)k));
}

static void semiring_choices(char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "auto");
    for (int k = 0; k < DSMM_SEMIRING_COUNT && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, "|%s", dsmm_semiring_name((dsmm_semiring)k));
}

// Same names in the same order: the two abc files number their vertices alike.
static int labels_same(const dsmm_labels *a, const dsmm_labels *b)
{
    if (a == NULL || b == NULL) return a == b;
    dsmm_idx n = dsmm_labels_count(a);
    if (n != dsmm_labels_count(b)) return 0;
    for (dsmm_idx i = 0; i < n; i++)
        if (strcmp(dsmm_labels_name(a, i), dsmm_labels_name(b, i)) != 0) return 0;
    return 1;
}

static void row(FILE *f, const char *key, const char *fmt, ...) DSMMI_PRINTF(3, 4);
static void row(FILE *f, const char *key, const char *fmt, ...)
{
    va_list ap;
    char k[64];
    snprintf(k, sizeof k, "%s:", key);
    fprintf(f, "%-20s", k);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

// Everything a run produced, for the summary and the statistics.
typedef struct run_report {
    const char *a_path, *b_path, *m_path, *out;
    const dsmm_csr *A, *B, *M, *C;
    dsmm_spgemm_alg alg;
    dsmm_semiring sr;
    const char *sr_why; // NULL when --semiring named it, else why auto chose sr
    int transpose_b;
    dsmm_spgemm_info info;
    int ooc; // 1: out of core (oinfo holds the chunks)
    dsmm_ooc_info oinfo;
    double io_seconds;
    size_t peak_bytes;
    int estimated;                  // --estimate was given
    dsmm_status est_st;             // its status; DSMM_OK: est holds it
    char est_why[DSMMI_ERRMSG_MAX]; // the reason when it failed
    dsmm_spgemm_estimate_result est;
} run_report;

static void print_mat(FILE *f, const char *key, const char *path, const dsmm_csr *X)
{
    row(f, key, "%s (%lld x %lld, nnz %lld, %s)", path, (long long)X->nrows, (long long)X->ncols,
        (long long)X->nnz, dsmm_type_name(X->type));
}

static void print_ooc(FILE *f, const dsmm_ooc_info *o)
{
    row(f, "out of core", "%d x %d panels, %d chunks (%d on the device, %d split), budget %.1f MiB",
        o->row_panels, o->col_panels, o->chunks, o->chunks_gpu, o->splits,
        (double)o->mem_bytes / 1048576.0);
    row(f, "chunk bytes", "largest planned %.1f MiB, measured %.1f MiB",
        (double)o->max_est_bytes / 1048576.0, (double)o->max_bytes / 1048576.0);
    row(f, "ooc seconds", "plan %.6f, cpu %.6f, gpu %.6f, assemble %.6f", o->seconds_plan,
        o->seconds_cpu, o->seconds_gpu, o->seconds_assemble);
    if (o->chunks_gpu > 0) {
        row(f, "gpu share", "%.1f%% of the flops (aimed at %.1f%%)",
            o->flops > 0 ? 100.0 * o->flops_gpu / o->flops : 0.0, 100.0 * o->gpu_ratio);
        row(f, "gpu chunks", "kernels %.6f s, copies %.6f s, %.1f%% of the kernel time hidden",
            o->seconds_compute, o->seconds_transfer, 100.0 * o->hidden_fraction);
    }
}

static void print_summary(FILE *f, const run_report *r)
{
    print_mat(f, "A", r->a_path, r->A);
    if (r->b_path)
        print_mat(f, r->transpose_b ? "B (used as B^T)" : "B", r->b_path, r->B);
    else
        row(f, "B", "= A%s", r->transpose_b ? " (used as A^T)" : "");
    if (r->m_path) print_mat(f, "mask", r->m_path, r->M);
    const dsmm_spgemm_info *in = &r->info;
    if (r->C) {
        const dsmm_csr *C = r->C;
        row(f, "C", "%s (%lld x %lld, nnz %lld, %s, rows %s)", r->out ? r->out : "not written",
            (long long)C->nrows, (long long)C->ncols, (long long)C->nnz, dsmm_type_name(C->type),
            in->sorted ? "sorted" : "unsorted");
        if (r->sr_why)
            row(f, "semiring", "%s (auto: %s)", dsmm_semiring_name(r->sr), r->sr_why);
        else
            row(f, "semiring", "%s", dsmm_semiring_name(r->sr));
        row(f, "kernel", "%s", dsmm_spgemm_alg_name(r->alg));
        if (!r->ooc)
            row(f, "kernel mix", "hash %lld  heap %lld  dense %lld  masked %lld rows",
                (long long)in->rows_hash, (long long)in->rows_heap, (long long)in->rows_dense,
                (long long)in->rows_masked);
        row(f, "threads", "%d", in->threads);
        row(f, "flops", "%.0f", in->flops);
        row(f, "nnz(C)", "%lld", (long long)in->nnz);
        row(f, "cf", "%.4g", in->cf);
        if (r->ooc)
            row(f, "seconds", "%.6f", in->seconds);
        else
            row(f, "seconds", "%.6f (symbolic %.6f, numeric %.6f)", in->seconds,
                in->seconds_symbolic, in->seconds_numeric);
        if (in->on_gpu)
            row(f, "gpu", "device %.6f s, copies %.6f s, pool peak %.1f MiB", in->seconds_device,
                in->seconds_transfer, (double)in->device_bytes / 1048576.0);
        if (r->ooc) print_ooc(f, &r->oinfo);
        row(f, "multiply-adds/s", "%.4g", in->seconds > 0 ? in->flops / in->seconds : 0.0);
        row(f, "io seconds", "%.6f", r->io_seconds);
        row(f, "peak bytes", "%zu (%.1f MiB)", r->peak_bytes, (double)r->peak_bytes / 1048576.0);
    }
    if (!r->estimated) return;
    if (r->est_st != DSMM_OK) {
        row(f, "nnz(C) estimate", "n/a (%s)", r->est_why);
        return;
    }
    const dsmm_spgemm_estimate_result *e = &r->est;
    row(f, "nnz(C) estimate", "%.0f (%d keys, expected relative error %.2f%%, %.6f s%s)", e->nnz,
        e->keys, 100.0 * e->rel_err, e->seconds, r->m_path ? ", without the mask" : "");
    row(f, "cf estimate", "%.4g", e->cf);
    if (r->C && !r->m_path && in->nnz > 0)
        row(f, "estimate error", "%+.2f%%", 100.0 * (e->nnz - (double)in->nnz) / (double)in->nnz);
}

// The out-of-core plan, and each chunk as keys ooc_chunk_<k>_<field> in the order the chunks
// were taken (the first 1000).
static dsmm_status ooc_stats(dsmm_stats *s, const dsmm_ooc_info *o)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(dsmm_stats_set_int(s, "ooc", 1));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_row_panels", o->row_panels));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_col_panels", o->col_panels));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_chunks", o->chunks));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_chunks_gpu", o->chunks_gpu));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_splits", o->splits));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_mem_bytes", (int64_t)o->mem_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_max_est_bytes", (int64_t)o->max_est_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "ooc_max_bytes", (int64_t)o->max_bytes));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_flops_gpu", o->flops_gpu));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_gpu_ratio", o->gpu_ratio));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_plan", o->seconds_plan));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_cpu", o->seconds_cpu));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_gpu", o->seconds_gpu));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_assemble", o->seconds_assemble));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_compute", o->seconds_compute));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_transfer", o->seconds_transfer));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_seconds_hidden", o->seconds_hidden));
    DSMM_TRY(dsmm_stats_set_num(s, "ooc_hidden_fraction", o->hidden_fraction));
    for (int i = 0; i < o->chunks && i < 1000; i++) {
        const dsmm_ooc_chunk_info *c = &o->chunk[i];
        char k[64];
#define CHUNK_KEY(field) (snprintf(k, sizeof k, "ooc_chunk_%d_%s", i, field), k)
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("row0"), c->row0));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("row1"), c->row1));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("col0"), c->col0));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("col1"), c->col1));
        DSMM_TRY(dsmm_stats_set_num(s, CHUNK_KEY("flops"), c->flops));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("nnz"), c->nnz));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("bytes"), (int64_t)c->bytes));
        DSMM_TRY(dsmm_stats_set_int(s, CHUNK_KEY("on_gpu"), c->on_gpu));
        DSMM_TRY(dsmm_stats_set_num(s, CHUNK_KEY("seconds_compute"), c->seconds_compute));
        DSMM_TRY(dsmm_stats_set_num(s, CHUNK_KEY("seconds_transfer"), c->seconds_transfer));
        DSMM_TRY(dsmm_stats_set_num(s, CHUNK_KEY("seconds_hidden"), c->seconds_hidden));
#undef CHUNK_KEY
    }
cleanup:
    return st;
}

static dsmm_status write_stats(dsmm_ctx *ctx, const char *path, const run_report *r)
{
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    const dsmm_spgemm_info *in = &r->info;
    dsmm_idx nnz_in = r->A->nnz + (r->b_path ? r->B->nnz : 0);
    DSMM_TRY(dsmm_stats_create(ctx, "spgemm", &s));
    DSMM_TRY(dsmm_stats_set_str(s, "algo", dsmm_spgemm_alg_name(r->alg)));
    if (in->threads > 0) DSMM_TRY(dsmm_stats_set_int(s, "threads", in->threads));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds", in->seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "io_seconds", r->io_seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "flops", in->flops));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_in", nnz_in));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_out", r->C->nnz));
    DSMM_TRY(dsmm_stats_set_int(s, "peak_bytes", (int64_t)r->peak_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "nrows", r->C->nrows));
    DSMM_TRY(dsmm_stats_set_int(s, "ncols", r->C->ncols));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_a", r->A->nnz));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_b", r->B->nnz));
    DSMM_TRY(dsmm_stats_set_num(s, "cf", in->cf));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds_symbolic", in->seconds_symbolic));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds_numeric", in->seconds_numeric));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_hash", in->rows_hash));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_heap", in->rows_heap));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_dense", in->rows_dense));
    DSMM_TRY(dsmm_stats_set_int(s, "rows_masked", in->rows_masked));
    DSMM_TRY(dsmm_stats_set_str(s, "semiring", dsmm_semiring_name(r->sr)));
    DSMM_TRY(dsmm_stats_set_str(s, "semiring_asked", r->sr_why ? "auto" : "given"));
    DSMM_TRY(dsmm_stats_set_int(s, "sorted", in->sorted));
    DSMM_TRY(dsmm_stats_set_str(s, "type", dsmm_type_name(r->C->type)));
    DSMM_TRY(dsmm_stats_set_int(s, "mask", r->M != NULL));
    DSMM_TRY(dsmm_stats_set_int(s, "transpose_b", r->transpose_b));
    DSMM_TRY(dsmm_stats_set_int(s, "workspace_bytes", (int64_t)in->workspace_bytes));
    DSMM_TRY(dsmm_stats_set_int(s, "on_gpu", in->on_gpu));
    if (in->on_gpu) {
        DSMM_TRY(dsmm_stats_set_num(s, "seconds_device", in->seconds_device));
        DSMM_TRY(dsmm_stats_set_num(s, "seconds_transfer", in->seconds_transfer));
        DSMM_TRY(dsmm_stats_set_int(s, "device_bytes", (int64_t)in->device_bytes));
    }
    if (r->ooc) DSMM_TRY(ooc_stats(s, &r->oinfo));
    DSMM_TRY(cli_gpu_stats(ctx, s));
    if (r->estimated && r->est_st == DSMM_OK) {
        DSMM_TRY(dsmm_stats_set_num(s, "estimate_nnz", r->est.nnz));
        DSMM_TRY(dsmm_stats_set_num(s, "estimate_rel_err", r->est.rel_err));
        DSMM_TRY(dsmm_stats_set_int(s, "estimate_keys", r->est.keys));
        DSMM_TRY(dsmm_stats_set_num(s, "estimate_seconds", r->est.seconds));
    }
    DSMM_TRY(dsmm_stats_write(s, path));
cleanup:
    dsmm_stats_destroy(&s);
    return st;
}

// Reads one operand with the shared reader options; labels may be NULL.
static int read_matrix(dsmm_ctx *ctx, const dsmm_read_opts *ro, const char *path, dsmm_csr **X,
                       dsmm_labels **labels)
{
    if (dsmm_read(ctx, path, ro, X, labels, NULL) != DSMM_OK)
        return cli_fail(&cmd, ctx, "cannot read the input");
    return CLI_OK;
}

int cli_spgemm(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *out = NULL, *kernel = "auto", *semiring = "auto", *mask_path = NULL;
    int transpose_b = 0, unsorted = 0, type = 0, estimate = 0, repeat = 1;
    int ooc = 0, hybrid = 0, row_panels = 0, col_panels = 0;
    size_t ooc_mem = 0;
    const char *gpu_ratio = NULL, *ooc_estimate = "auto";
    cli_dist d = {.algo = "auto", .permute_seed = -1};
    char kernels[128], semirings[128];
    alg_choices(kernels, sizeof kernels);
    semiring_choices(semirings, sizeof semirings);
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"output", 'o', "C", "output file; the format follows the name", CLI_STRING, &out, 0, 0},
        {"kernel", 'k', kernels, "accumulator (default auto: chosen per row)", CLI_STRING, &kernel,
         0, 0},
        {"semiring", 's', semirings, "default auto: plus-times with values, else plus-pair",
         CLI_STRING, &semiring, 0, 0},
        {"mask", 'm', "M", "structural mask: C<M> = A*B keeps only entries where M has one",
         CLI_STRING, &mask_path, 0, 0},
        {"transpose-b", 0, NULL, "C = A * B^T", CLI_FLAG, &transpose_b, 0, 0},
        {"unsorted", 0, NULL, "rows of C may stay unsorted (skips sorting)", CLI_FLAG, &unsorted, 0,
         0},
        {"type", 0, "auto|double|float|pattern", "value type of C (default auto: from A and B)",
         CLI_ENUM, &type, 0, 0},
        {"estimate", 'e', NULL, "also estimate nnz(C) (Cohen, 16 keys); alone: only that", CLI_FLAG,
         &estimate, 0, 0},
        CLI_GPU_OPTS(c),
        {"ooc", 0, NULL, "out of core: C in chunks that fit --ooc-mem, assembled at the end",
         CLI_FLAG, &ooc, 0, 0},
        {"ooc-mem", 0, "SIZE",
         "out of core: a chunk's working set (implies --ooc; default a "
         "quarter of the memory, or 90% of the device pool with --gpu)",
         CLI_SIZE, &ooc_mem, 0, 0},
        {"row-panels", 0, "N", "out of core: exactly N row panels of A (default from the budget)",
         CLI_INT, &row_panels, 1, INT32_MAX},
        {"col-panels", 0, "N",
         "out of core: exactly N column panels of B (default from the "
         "budget)",
         CLI_INT, &col_panels, 1, INT32_MAX},
        {"ooc-estimate", 0, "auto|cohen|exact",
         "out of core: nnz of the chunks for the plan (default auto: exact, a symbolic pass, on "
         "the CPU alone, so each chunk goes straight into C; cohen, 8 keys, with --gpu)",
         CLI_STRING, &ooc_estimate, 0, 0},
        {"hybrid", 0, NULL,
         "with --gpu: the largest chunks on the device, the rest on the CPU "
         "at the same time",
         CLI_FLAG, &hybrid, 0, 0},
        {"gpu-ratio", 0, "r|auto", "with --hybrid: the device's share of the flops (default 0.65)",
         CLI_STRING, &gpu_ratio, 0, 0},
        CLI_DIST_OPTS(d),
        {"gpu-resident", 0, NULL,
         "distributed, implies --gpu: the C tile's partial products on the device, merged "
         "there, the tile downloaded once (summa: every stage there, pieces in device memory "
         "when MPI is CUDA-aware; one-sided: own items there, fetched partials uploaded)",
         CLI_FLAG, &d.gpu_resident, 0, 0},
        {"repeat", 'r', "N", "distributed: run the multiply N times, report the median", CLI_INT,
         &repeat, 1, 1000000},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[2];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 2);
    if (rc != CLI_OK) return rc;
    if (npos < 1) return cli_usage_error(&cmd, "needs A (and optionally B)");
    dsmm_spgemm_alg alg = DSMM_SPGEMM_AUTO;
    if (dsmm_spgemm_alg_from_name(kernel, &alg) != DSMM_OK)
        return cli_usage_error(&cmd, "--kernel: '%s' is not one of %s", kernel, kernels);
    dsmm_semiring sr = DSMM_PLUS_TIMES;
    int sr_auto = strcmp(semiring, "auto") == 0;
    if (!sr_auto && dsmm_semiring_from_name(semiring, &sr) != DSMM_OK)
        return cli_usage_error(&cmd, "--semiring: '%s' is not one of %s", semiring, semirings);
    rc = cli_dist_resolve(&cmd, &d);
    if (rc != CLI_OK) return rc;
    if (d.cola)
        return cli_usage_error(&cmd, "--algo %s is a 1D SpMM algorithm (dsmm spmm)", d.algo);
    if (d.on && (mask_path || transpose_b || unsorted || estimate))
        return cli_usage_error(&cmd, "--mask, --transpose-b, --unsorted and --estimate are not "
                                     "supported with --algo summa");
    if (!d.on && repeat > 1) return cli_usage_error(&cmd, "--repeat needs --algo summa");
    if (out == NULL && c.stats == NULL && !estimate && !d.on)
        return cli_usage_error(&cmd, "needs -o C (or --stats FILE, or --estimate)");
    rc = cli_stdout_once(&cmd, &c, out && strcmp(out, "-") == 0, "-o -");
    if (rc != CLI_OK) return rc;
    double ratio = 0.65;
    if (gpu_ratio) {
        char *end = NULL;
        if (strcmp(gpu_ratio, "auto") == 0)
            ratio = -1;
        else {
            ratio = strtod(gpu_ratio, &end);
            if (end == gpu_ratio || *end != '\0' || !(ratio >= 0 && ratio <= 1))
                return cli_usage_error(&cmd,
                                       "--gpu-ratio: '%s' is neither a share in [0, 1] nor "
                                       "auto",
                                       gpu_ratio);
        }
        if (!hybrid) return cli_usage_error(&cmd, "--gpu-ratio needs --hybrid");
    }
    if (strcmp(ooc_estimate, "auto") != 0 && strcmp(ooc_estimate, "cohen") != 0 &&
        strcmp(ooc_estimate, "exact") != 0)
        return cli_usage_error(&cmd, "--ooc-estimate: '%s' is not one of auto|cohen|exact",
                               ooc_estimate);
    if (d.gpu_resident && !d.on)
        return cli_usage_error(&cmd,
                               "--gpu-resident needs a distributed --algo (summa or one-sided)");
    if (c.gpu_mem || c.gpu_flops >= 0 || d.gpu_resident) c.gpu = 1; // they imply --gpu
    if (hybrid && !c.gpu && alg != DSMM_SPGEMM_GPU)
        return cli_usage_error(&cmd, "--hybrid needs --gpu");
    if (hybrid && alg == DSMM_SPGEMM_CUSPARSE)
        return cli_usage_error(&cmd, "--hybrid runs dsmm's kernels, not --kernel cusparse");
    if ((alg == DSMM_SPGEMM_GPU || alg == DSMM_SPGEMM_CUSPARSE || c.gpu) && !DSMM_HAVE_CUDA) {
        fprintf(stderr,
                "dsmm spgemm: %s: this dsmm was built without CUDA "
                "(configure with -DDSMM_USE_CUDA=ON)\n",
                alg == DSMM_SPGEMM_GPU        ? "--kernel gpu"
                : alg == DSMM_SPGEMM_CUSPARSE ? "--kernel cusparse"
                                              : "--gpu");
        return CLI_FAIL;
    }
    if (alg == DSMM_SPGEMM_GPU || alg == DSMM_SPGEMM_CUSPARSE) c.gpu = 1; // they need the device
    if (ooc_mem || row_panels || col_panels || hybrid) ooc = 1;
    // --gpu with dsmm's kernel: the chunked driver, one chunk when the product fits the device
    // (distributed: the tile products go to the device instead)
    if (c.gpu && (alg == DSMM_SPGEMM_AUTO || alg == DSMM_SPGEMM_GPU) && mask_path == NULL && !d.on)
        ooc = 1;
    if (ooc && (mask_path || d.on))
        return cli_usage_error(&cmd, "out of core (--ooc, --ooc-mem, --row-panels, --col-panels, "
                                     "--hybrid) does not take --mask or --algo summa");
    rc = cli_dir_writable(&cmd, "-o", out);
    if (rc == CLI_OK) rc = cli_dir_writable(&cmd, "--stats", c.stats);
    if (rc != CLI_OK) return rc;
    int multiply = out != NULL || c.stats != NULL;
    if (d.on) {
        static const int dtypes[] = {-1, DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
        dsmm_spgemm_opts so;
        dsmm_spgemm_opts_init(&so);
        so.alg = alg;
        so.semiring = sr;
        so.type = dtypes[type];
        return cli_spgemm_dist(&cmd, &c, &d, pos[0], npos == 2 ? pos[1] : NULL, out, &so, sr_auto,
                               repeat);
    }

    static const int types[] = {-1, DSMM_DOUBLE, DSMM_FLOAT, DSMM_PATTERN};
    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *Bfile = NULL, *M = NULL, *Bt = NULL, *C = NULL;
    dsmm_labels *la = NULL, *lb = NULL;
    const dsmm_labels *lc = NULL;
    dsmm_read_opts ro;
    run_report r;
    memset(&r, 0, sizeof r);
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    cli_read_opts(&c, &ro);
    double t0 = dsmmi_wtime();
    rc = read_matrix(ctx, &ro, pos[0], &A, &la);
    if (rc == CLI_OK && npos == 2) rc = read_matrix(ctx, &ro, pos[1], &Bfile, &lb);
    if (rc == CLI_OK && mask_path) rc = read_matrix(ctx, &ro, mask_path, &M, NULL);
    if (rc != CLI_OK) goto done;
    r.io_seconds = dsmmi_wtime() - t0;
    const dsmm_csr *B = Bfile ? Bfile : A;
    r.a_path = pos[0];
    r.b_path = npos == 2 ? pos[1] : NULL;
    r.m_path = mask_path;
    r.out = out;
    r.A = A;
    r.B = B;
    r.M = M;
    r.alg = alg;
    r.transpose_b = transpose_b;
    if (sr_auto) {
        int a_vals = A->type != DSMM_PATTERN, b_vals = B->type != DSMM_PATTERN;
        sr = a_vals && b_vals ? DSMM_PLUS_TIMES : DSMM_PLUS_PAIR;
        r.sr_why = a_vals && b_vals ? (Bfile ? "A and B hold values" : "A holds values")
                   : !a_vals        ? "A is pattern-only"
                                    : "B is pattern-only";
        if (c.verbose)
            fprintf(stderr, "dsmm spgemm: semiring auto -> %s (%s)\n", dsmm_semiring_name(sr),
                    r.sr_why);
    }
    r.sr = sr;
    // abc labels carry over to C only when both operands number their vertices alike.
    if (la && (Bfile == NULL || labels_same(la, lb))) lc = la;
    if (la && lb && lc == NULL && !c.quiet)
        fprintf(stderr,
                "dsmm spgemm: warning: %s and %s number their labels differently (abc "
                "files are numbered by first appearance); C uses 0-based indices\n",
                pos[0], pos[1]);

    if (estimate) {
        r.estimated = 1;
        const dsmm_csr *Be = B;
        if (transpose_b) {
            if (dsmm_csr_transpose(ctx, B, &Bt) != DSMM_OK) {
                rc = cli_fail(&cmd, ctx, "cannot transpose B");
                goto done;
            }
            Be = Bt;
        }
        r.est_st = dsmm_spgemm_estimate(ctx, A, Be, ESTIMATE_KEYS, ESTIMATE_SEED, NULL, &r.est);
        if (r.est_st == DSMM_ERR_DIM || r.est_st == DSMM_ERR_NOMEM) {
            rc = cli_fail(&cmd, ctx, "estimate failed");
            goto done;
        }
        if (r.est_st != DSMM_OK && !multiply) {
            rc = cli_fail(&cmd, ctx, "estimate failed");
            goto done;
        }
        if (r.est_st != DSMM_OK) { // not built in yet, or a kernel bug: say so and go on
            snprintf(r.est_why, sizeof r.est_why, "%s", dsmm_ctx_last_error(ctx));
            dsmm_ctx_clear_error(ctx);
        }
        dsmm_csr_destroy(&Bt);
    }

    if (multiply) {
        dsmm_spgemm_opts so;
        dsmm_spgemm_opts_init(&so);
        so.alg = alg;
        so.semiring = sr;
        so.mask = M;
        so.transpose_b = transpose_b;
        so.unsorted = unsorted;
        so.type = types[type];
        dsmm_idx ncols_c = transpose_b ? B->nrows : B->ncols;
        so.col_bits = ncols_c <= INT32_MAX ? 32 : 64; // a third less memory for C's columns
        if (ooc) {
            dsmm_ooc_opts oo;
            dsmm_ooc_opts_init(&oo);
            oo.mem_bytes = ooc_mem;
            oo.row_panels = row_panels;
            oo.col_panels = col_panels;
            oo.use_gpu = c.gpu;
            oo.hybrid = hybrid;
            oo.gpu_ratio = ratio;
            oo.estimate_keys = strcmp(ooc_estimate, "exact") == 0   ? 0
                               : strcmp(ooc_estimate, "cohen") == 0 ? 8
                                                                    : -1;
            if (dsmm_csr_spgemm_ooc(ctx, A, B, &so, &oo, &C, &r.oinfo) != DSMM_OK) {
                rc = cli_fail(&cmd, ctx, "multiply failed");
                goto done;
            }
            r.ooc = 1;
            r.info.flops = r.oinfo.flops;
            r.info.nnz = r.oinfo.nnz;
            r.info.cf = r.oinfo.nnz > 0 ? r.oinfo.flops / (double)r.oinfo.nnz : 0.0;
            r.info.sorted = C->sorted;
            r.info.threads = dsmm_ctx_threads(ctx);
            r.info.seconds = r.oinfo.seconds;
        } else if (dsmm_csr_spgemm_ex(ctx, A, B, &so, &C, &r.info) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "multiply failed");
            goto done;
        }
        r.C = C;
        if (out) {
            dsmm_write_opts wo;
            dsmm_write_opts_init(&wo);
            double t1 = dsmmi_wtime();
            if (dsmm_write(ctx, out, C, lc, &wo) != DSMM_OK) {
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
    }
    if (!c.quiet) {
        FILE *f = cli_report_stream(&c, out);
        print_summary(f, &r);
        if (fflush(f) != 0) rc = cli_fail(&cmd, NULL, "cannot write the summary");
    }
done:
    if (ctx) dsmm_free(ctx, r.oinfo.chunk);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&Bt);
    dsmm_csr_destroy(&M);
    dsmm_csr_destroy(&Bfile);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&la);
    dsmm_labels_destroy(&lb);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
