// src/cli/cmd_convert.c: `dsmm convert IN OUT`: any readable input to Matrix Market, abc or binary.
// OUT is written by dsmm_write, which is atomic, so a failed conversion leaves no OUT; this command
// never creates OUT itself.
#include <string.h>

#include "cli/cli.h"

static const cli_cmd cmd = {
    "convert",
    "IN OUT [options]",
    "Converts IN (Matrix Market, abc, dsmm binary; .gz too) to OUT.",
    "The output format follows OUT's name (.mtx, .abc/.txt, .dsmm/.bin) unless --to is given.\n"
    "abc labels are kept when OUT is abc; for other outputs --labels FILE writes the label\n"
    "dictionary, one label per line in index order (line i+1 names row/column i, 0-based i).\n"
    "On any failure neither OUT nor the labels file exists afterwards.",
};

// One label per line, in index order.
static dsmm_status write_labels(dsmm_ctx *ctx, FILE *f, const dsmm_labels *L)
{
    dsmm_idx n = dsmm_labels_count(L);
    for (dsmm_idx i = 0; i < n; i++)
        if (fprintf(f, "%s\n", dsmm_labels_name(L, i)) < 0)
            return dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__, "writing labels failed");
    return DSMM_OK;
}

int cli_convert(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int to = 0, sym = 0;
    const char *labels_path = NULL;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"to", 0, "auto|mtx|abc|bin", "output format (default: from OUT's name)", CLI_ENUM, &to, 0,
         0},
        {"symmetric", 0, "auto|yes|no",
         "Matrix Market output: one triangle when symmetric (auto, default), always, never",
         CLI_ENUM, &sym, 0, 0},
        {"labels", 0, "FILE", "write the abc label dictionary, one label per line", CLI_STRING,
         &labels_path, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[2];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 2);
    if (rc != CLI_OK) return rc;
    if (npos != 2) return cli_usage_error(&cmd, "needs IN and OUT");
    rc = cli_stdout_once(&cmd, &c, strcmp(pos[1], "-") == 0, "OUT -");
    if (rc != CLI_OK) return rc;

    static const dsmm_format formats[] = {DSMM_FORMAT_AUTO, DSMM_FORMAT_MTX, DSMM_FORMAT_ABC,
                                          DSMM_FORMAT_BIN};
    static const int syms[] = {-1, 1, 0};
    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL;
    dsmm_labels *labels = NULL;
    dsmm_read_opts ro;
    dsmmi_outfile lf = {0};
    int lf_open = 0;
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    cli_read_opts(&c, &ro);
    double t0 = dsmmi_wtime();
    if (dsmm_read(ctx, pos[0], &ro, &A, &labels, NULL) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot read the input");
        goto done;
    }
    if (labels_path) {
        if (labels == NULL) {
            fprintf(stderr, "dsmm convert: --labels: %s has no labels (not an abc file)\n", pos[0]);
            rc = CLI_FAIL;
            goto done;
        }
        // The labels file is committed only after OUT was written, so both or neither exist.
        if (dsmmi_outfile_open(ctx, &lf, labels_path) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot write the labels");
            goto done;
        }
        lf_open = 1;
        if (write_labels(ctx, lf.f, labels) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "cannot write the labels");
            goto done;
        }
    }
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    wo.format = formats[to];
    wo.symmetric = syms[sym];
    if (dsmm_write(ctx, pos[1], A, labels, &wo) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot write the output");
        goto done;
    }
    if (lf_open) {
        lf_open = 0;
        if (dsmmi_outfile_commit(ctx, &lf) != DSMM_OK) {
            remove(pos[1]);
            rc = cli_fail(&cmd, ctx, "cannot write the labels");
            goto done;
        }
    }
    double t2 = dsmmi_wtime();
    cli_run run = {t2 - t0, t2 - t0, A->nnz, A->nnz}; // convert is all I/O
    rc = cli_stats(&cmd, &c, ctx, "convert", &run);
done:
    if (lf_open) dsmmi_outfile_abort(ctx, &lf);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&labels);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
