// src/cli/cmd_info.c: `dsmm info FILE`: what the file declared and what the matrix is
// (dsmm_csr_summary), plus nnz(A*A) estimated (Cohen) and, with --exact, counted; as text or one
// JSON object.
#include <string.h>

#include "cli/cli.h"

// The nnz(A*A) estimate: keys and seed fixed, so that info prints the same numbers every run.
#define ESTIMATE_KEYS 16
#define ESTIMATE_SEED 1

static const cli_cmd cmd = {
    "info",
    "FILE [options]",
    "Reads a matrix file (Matrix Market, abc, dsmm binary; .gz too) and summarises it.",
    "Prints the declared header, dims, stored entries, nnz of the full matrix, value kind,\n"
    "pattern/numeric/skew symmetry, diagonal entries, empty rows and columns, row and column\n"
    "degrees, flops(A*A) = sum_k nnz(A(:,k)) * nnz(A(k,:)) (n/a when not square), the value\n"
    "range, and the nnz balance of the regular pr x pc tile grid for --procs P (pr * pc = P,\n"
    "as square as possible; rows and columns split into nearly-equal contiguous ranges).\n"
    "For square matrices also nnz(A*A) and cf = flops / nnz estimated with Cohen's estimator\n"
    "(16 keys, seed 1; the expected relative error is one standard deviation), and with\n"
    "--exact counted exactly (the symbolic phase of SpGEMM, O(flops)).",
};

// nnz(A*A): the estimate (always tried on square A) and the exact count (--exact).
typedef struct aa_nnz {
    int square, exact_asked;
    dsmm_status est_st; // DSMM_OK: est holds the estimate, else est_why says why not
    char est_why[DSMMI_ERRMSG_MAX];
    dsmm_spgemm_estimate_result est, exact;
} aa_nnz;

// The estimate is an extra of info: when it cannot run (not built in yet, out of memory), info
// prints why instead of failing. The exact count was asked for, so its failure is info's.
static dsmm_status count_aa(dsmm_ctx *ctx, const dsmm_csr *A, int exact, aa_nnz *aa)
{
    dsmm_status st = DSMM_OK;
    memset(aa, 0, sizeof *aa);
    aa->square = A->nrows == A->ncols;
    aa->exact_asked = exact;
    if (!aa->square) return DSMM_OK;
    aa->est_st = dsmm_spgemm_estimate(ctx, A, A, ESTIMATE_KEYS, ESTIMATE_SEED, NULL, &aa->est);
    if (aa->est_st != DSMM_OK) {
        snprintf(aa->est_why, sizeof aa->est_why, "%s", dsmm_ctx_last_error(ctx));
        dsmm_ctx_clear_error(ctx);
    }
    if (exact) DSMM_TRY(dsmm_spgemm_estimate(ctx, A, A, 0, 0, NULL, &aa->exact));
cleanup:
    return st;
}

static const char *field_name(dsmm_mm_field f)
{
    return f == DSMM_MM_INTEGER ? "integer" : f == DSMM_MM_PATTERN ? "pattern" : "real";
}

static const char *symmetry_name(dsmm_mm_symmetry s)
{
    return s == DSMM_MM_SYMMETRIC ? "symmetric" : s == DSMM_MM_SKEW ? "skew-symmetric" : "general";
}

static const char *yes_no(int v)
{
    return v ? "yes" : "no";
}

static void print_text(FILE *out, const char *path, const dsmm_file_info *fi, const dsmm_csr *A,
                       const dsmm_labels *labels, const dsmm_summary *s, const aa_nnz *aa,
                       double io_seconds)
{
#define ROW(key, ...)                                                                              \
    do {                                                                                           \
        fprintf(out, "%-20s", key ":");                                                            \
        fprintf(out, __VA_ARGS__);                                                                 \
        fprintf(out, "\n");                                                                        \
    } while (0)
    ROW("file", "%s", path);
    ROW("format", "%s%s", cli_format_name(fi->format), fi->gzipped ? " (gzip)" : "");
    if (fi->format == DSMM_FORMAT_MTX)
        ROW("header", "%s %s %s", fi->array ? "array" : "coordinate", field_name(fi->field),
            symmetry_name(fi->symmetry));
    ROW("dims", "%lld x %lld", (long long)s->nrows, (long long)s->ncols);
    ROW("stored entries", "%lld", (long long)fi->stored);
    ROW("nnz", "%lld", (long long)s->nnz);
    ROW("values", "%s", dsmm_type_name(A->type));
    if (labels) ROW("labels", "%lld", (long long)dsmm_labels_count(labels));
    if (s->nrows == s->ncols) {
        ROW("pattern symmetric", "%s", yes_no(s->pattern_symmetric));
        ROW("numeric symmetric", "%s", yes_no(s->value_symmetric));
        ROW("skew symmetric", "%s", yes_no(s->skew_symmetric));
    } else {
        ROW("symmetric", "n/a (not square)");
    }
    ROW("diagonal entries", "%lld", (long long)s->diag_nnz);
    ROW("empty rows", "%lld", (long long)s->empty_rows);
    ROW("empty columns", "%lld", (long long)s->empty_cols);
    ROW("row degree", "min %lld  mean %.4g  max %lld", (long long)s->row_deg_min, s->row_deg_mean,
        (long long)s->row_deg_max);
    ROW("column degree", "min %lld  mean %.4g  max %lld", (long long)s->col_deg_min,
        s->col_deg_mean, (long long)s->col_deg_max);
    if (s->flops_aa >= 0)
        ROW("flops(A*A)", "%.0f", s->flops_aa);
    else
        ROW("flops(A*A)", "n/a (not square)");
    if (!aa->square) {
        ROW("nnz(A*A) estimate", "n/a (not square)");
    } else if (aa->est_st != DSMM_OK) {
        ROW("nnz(A*A) estimate", "n/a (%s)", aa->est_why);
    } else {
        ROW("nnz(A*A) estimate", "%.0f (%d keys, expected relative error %.2f%%)", aa->est.nnz,
            aa->est.keys, 100.0 * aa->est.rel_err);
        ROW("cf(A*A) estimate", "%.4g", aa->est.cf);
    }
    if (aa->exact_asked && aa->square) {
        ROW("nnz(A*A)", "%.0f", aa->exact.nnz);
        ROW("cf(A*A)", "%.4g", aa->exact.cf);
    } else if (aa->exact_asked) {
        ROW("nnz(A*A)", "n/a (not square)");
    }
    if (s->nnz > 0)
        ROW("value range", "%.10g .. %.10g%s", s->val_min, s->val_max,
            s->has_nonfinite ? " (and non-finite values)" : "");
    else
        ROW("value range", "n/a (no entries)");
    ROW("grid", "%d x %d (%d procs)", s->grid_rows, s->grid_cols, s->procs);
    ROW("tile nnz", "max %lld  avg %.6g", (long long)s->tile_nnz_max, s->tile_nnz_avg);
    ROW("tile imbalance", "%.4f", s->tile_imbalance);
    ROW("io seconds", "%.6f", io_seconds);
#undef ROW
}

static dsmm_status print_json(dsmm_ctx *ctx, const char *path, const dsmm_file_info *fi,
                              const dsmm_csr *A, const dsmm_labels *labels, const dsmm_summary *s,
                              const aa_nnz *aa, double io_seconds)
{
    dsmmi_json j;
    dsmmi_json_init(&j, ctx);
    dsmmi_json_begin_object(&j, NULL);
    dsmmi_json_str(&j, "file", path);
    dsmmi_json_str(&j, "format", cli_format_name(fi->format));
    dsmmi_json_bool(&j, "gzipped", fi->gzipped);
    if (fi->format == DSMM_FORMAT_MTX) {
        dsmmi_json_begin_object(&j, "header");
        dsmmi_json_str(&j, "layout", fi->array ? "array" : "coordinate");
        dsmmi_json_str(&j, "field", field_name(fi->field));
        dsmmi_json_str(&j, "symmetry", symmetry_name(fi->symmetry));
        dsmmi_json_end_object(&j);
    }
    dsmmi_json_int(&j, "nrows", s->nrows);
    dsmmi_json_int(&j, "ncols", s->ncols);
    dsmmi_json_int(&j, "stored", fi->stored);
    dsmmi_json_int(&j, "nnz", s->nnz);
    dsmmi_json_str(&j, "values", dsmm_type_name(A->type));
    if (labels) dsmmi_json_int(&j, "labels", dsmm_labels_count(labels));
    dsmmi_json_bool(&j, "pattern_symmetric", s->pattern_symmetric);
    dsmmi_json_bool(&j, "numeric_symmetric", s->value_symmetric);
    dsmmi_json_bool(&j, "skew_symmetric", s->skew_symmetric);
    dsmmi_json_int(&j, "diagonal", s->diag_nnz);
    dsmmi_json_int(&j, "empty_rows", s->empty_rows);
    dsmmi_json_int(&j, "empty_cols", s->empty_cols);
    dsmmi_json_begin_object(&j, "row_degree");
    dsmmi_json_int(&j, "min", s->row_deg_min);
    dsmmi_json_num(&j, "mean", s->row_deg_mean);
    dsmmi_json_int(&j, "max", s->row_deg_max);
    dsmmi_json_end_object(&j);
    dsmmi_json_begin_object(&j, "col_degree");
    dsmmi_json_int(&j, "min", s->col_deg_min);
    dsmmi_json_num(&j, "mean", s->col_deg_mean);
    dsmmi_json_int(&j, "max", s->col_deg_max);
    dsmmi_json_end_object(&j);
    if (s->flops_aa >= 0)
        dsmmi_json_num(&j, "flops_aa", s->flops_aa);
    else
        dsmmi_json_str(&j, "flops_aa", NULL);
    if (aa->square && aa->est_st == DSMM_OK) {
        dsmmi_json_num(&j, "nnz_aa_estimate", aa->est.nnz);
        dsmmi_json_num(&j, "nnz_aa_estimate_rel_err", aa->est.rel_err);
        dsmmi_json_int(&j, "nnz_aa_estimate_keys", aa->est.keys);
        dsmmi_json_num(&j, "cf_aa_estimate", aa->est.cf);
    } else {
        dsmmi_json_str(&j, "nnz_aa_estimate", NULL);
        dsmmi_json_str(&j, "nnz_aa_estimate_why", aa->square ? aa->est_why : "not square");
    }
    if (aa->exact_asked) {
        if (aa->square) {
            dsmmi_json_num(&j, "nnz_aa", aa->exact.nnz);
            dsmmi_json_num(&j, "cf_aa", aa->exact.cf);
        } else {
            dsmmi_json_str(&j, "nnz_aa", NULL);
            dsmmi_json_str(&j, "cf_aa", NULL);
        }
    }
    if (s->nnz > 0) {
        dsmmi_json_num(&j, "value_min", s->val_min);
        dsmmi_json_num(&j, "value_max", s->val_max);
    } else {
        dsmmi_json_str(&j, "value_min", NULL);
        dsmmi_json_str(&j, "value_max", NULL);
    }
    dsmmi_json_bool(&j, "has_nonfinite", s->has_nonfinite);
    dsmmi_json_int(&j, "procs", s->procs);
    dsmmi_json_int(&j, "grid_rows", s->grid_rows);
    dsmmi_json_int(&j, "grid_cols", s->grid_cols);
    dsmmi_json_int(&j, "tile_nnz_max", s->tile_nnz_max);
    dsmmi_json_num(&j, "tile_nnz_avg", s->tile_nnz_avg);
    dsmmi_json_num(&j, "tile_imbalance", s->tile_imbalance);
    dsmmi_json_num(&j, "io_seconds", io_seconds);
    dsmmi_json_end_object(&j);
    dsmm_status st = j.st;
    if (st == DSMM_OK) printf("%s\n", j.buf);
    dsmmi_json_free(&j);
    return st;
}

int cli_info(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int procs = 4, json = 0, exact = 0;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"procs", 'p', "P", "tile grid of P processes for the imbalance (default 4)", CLI_INT,
         &procs, 1, 1 << 20},
        {"json", 0, NULL, "print one JSON object instead of text", CLI_FLAG, &json, 0, 0},
        {"exact", 0, NULL, "also count nnz(A*A) exactly (O(flops))", CLI_FLAG, &exact, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 1);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_usage_error(&cmd, "needs one FILE");
    rc = cli_stdout_once(&cmd, &c, json, "--json");
    if (rc != CLI_OK) return rc;

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL;
    dsmm_labels *labels = NULL;
    dsmm_file_info fi = {0};
    dsmm_read_opts ro;
    dsmm_summary s;
    aa_nnz aa;
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    cli_read_opts(&c, &ro);
    double t0 = dsmmi_wtime();
    if (dsmm_read(ctx, pos[0], &ro, &A, &labels, &fi) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot read the file");
        goto done;
    }
    double io = dsmmi_wtime() - t0;
    if (dsmm_csr_summary(ctx, A, procs, &s) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "summary failed");
        goto done;
    }
    if (count_aa(ctx, A, exact, &aa) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "counting nnz(A*A) failed");
        goto done;
    }
    if (json) {
        if (print_json(ctx, pos[0], &fi, A, labels, &s, &aa, io) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "out of memory");
            goto done;
        }
    } else {
        print_text(cli_report_stream(&c, NULL), pos[0], &fi, A, labels, &s, &aa, io);
    }
    if (fflush(stdout) != 0) {
        rc = cli_fail(&cmd, NULL, "cannot write to stdout");
        goto done;
    }
    cli_run run = {dsmmi_wtime() - t0, io, A->nnz, 0};
    rc = cli_stats(&cmd, &c, ctx, "info", &run);
done:
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&labels);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
