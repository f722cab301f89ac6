// src/cli/cmd_gen.c: `dsmm gen rmat|er|planted -o OUT`: synthetic matrices from the dsmm_gen_*
// generators, written with dsmm_write (format from OUT's name).
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_cmd cmd = {
    "gen",
    "rmat|er|planted -o OUT [options]",
    "Generates a sparse matrix and writes it to OUT (.mtx, .abc, .dsmm or .bin).",
    "rmat:    Graph500 R-MAT, 2^scale vertices, edge-factor * 2^scale edges before merging.\n"
    "er:      Erdos-Renyi G(n, p) with p = avg-degree / n.\n"
    "planted: stochastic block model, n vertices in `blocks` equal blocks, edge probability\n"
    "         p-in inside a block and p-out between blocks. --truth FILE writes the planted\n"
    "         blocks as clusters, one block per line with its 0-based vertices separated by\n"
    "         TABs (the format dsmm_write_clusters and mcl use).\n"
    "The same seed gives the same matrix whatever --threads is.",
};

int cli_gen(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    dsmm_gen_params p;
    dsmm_gen_params_init(&p);
    int scale = p.scale, blocks = p.nblocks, symmetric = 0, self_loops = 0, values = 0;
    const char *abcd = NULL, *out = NULL, *truth_path = NULL;
    int64_t n = p.n;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        {"output", 'o', "OUT", "output file; the format follows the name", CLI_STRING, &out, 0, 0},
        {"seed", 's', "S", "random seed (default 1)", CLI_U64, &p.seed, 0, 0},
        {"symmetric", 0, NULL, "undirected: A = A^T", CLI_FLAG, &symmetric, 0, 0},
        {"self-loops", 0, NULL, "keep diagonal entries", CLI_FLAG, &self_loops, 0, 0},
        {"values", 0, NULL, "random values in (0, 1] instead of a pattern", CLI_FLAG, &values, 0,
         0},
        {"scale", 0, "S", "rmat: 2^S vertices (default 10)", CLI_INT, &scale, 1, 40},
        {"edge-factor", 0, "F", "rmat: edges per vertex before merging (default 16)", CLI_DOUBLE,
         &p.edge_factor, 1e-9, 1e9},
        {"abcd", 0, "a,b,c,d", "rmat: quadrant probabilities (default 0.57,0.19,0.19,0.05)",
         CLI_STRING, &abcd, 0, 0},
        {"n", 'n', "N", "er, planted: vertices (default 1000)", CLI_IDX, &n, 1, 1e15},
        {"avg-degree", 0, "D", "er: expected entries per row (default 8)", CLI_DOUBLE,
         &p.avg_degree, 0, 1e15},
        {"blocks", 0, "K", "planted: number of blocks (default 4)", CLI_INT, &blocks, 1, 1 << 30},
        {"p-in", 0, "P", "planted: edge probability inside a block (default 0.05)", CLI_DOUBLE,
         &p.p_in, 0, 1},
        {"p-out", 0, "Q", "planted: edge probability between blocks (default 0.002)", CLI_DOUBLE,
         &p.p_out, 0, 1},
        {"truth", 0, "FILE", "planted: write the planted blocks as clusters", CLI_STRING,
         &truth_path, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 1);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_usage_error(&cmd, "needs one generator: rmat, er or planted");
    int kind = strcmp(pos[0], "rmat") == 0      ? 0
               : strcmp(pos[0], "er") == 0      ? 1
               : strcmp(pos[0], "planted") == 0 ? 2
                                                : -1;
    if (kind < 0)
        return cli_usage_error(&cmd, "unknown generator '%s' (rmat, er, planted)", pos[0]);
    if (out == NULL) return cli_usage_error(&cmd, "needs -o OUT");
    rc = cli_stdout_once(&cmd, &c, strcmp(out, "-") == 0, "-o -");
    if (rc != CLI_OK) return rc;
    if (truth_path && kind != 2) return cli_usage_error(&cmd, "--truth is for planted only");
    if (abcd && cli_parse_abcd(abcd, &p) != 0)
        return cli_usage_error(&cmd, "--abcd: '%s' is not four probabilities a,b,c,d summing to 1",
                               abcd);
    p.scale = scale;
    p.nblocks = blocks;
    p.n = n;
    p.symmetric = symmetric;
    p.self_loops = self_loops;
    p.type = values ? DSMM_DOUBLE : DSMM_PATTERN;

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL;
    dsmm_idx *truth = NULL;
    dsmm_status st = DSMM_OK;
    rc = cli_ctx(&cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    double t0 = dsmmi_wtime();
    if (kind == 0) st = dsmm_gen_rmat(ctx, &p, &A);
    if (kind == 1) st = dsmm_gen_er(ctx, &p, &A);
    if (kind == 2) st = dsmm_gen_planted(ctx, &p, &A, truth_path ? &truth : NULL);
    if (st != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "generator failed");
        goto done;
    }
    double t1 = dsmmi_wtime();
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    if (dsmm_write(ctx, out, A, NULL, &wo) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot write the output");
        goto done;
    }
    if (truth_path && dsmm_write_clusters(ctx, truth_path, A->nrows, truth, NULL) != DSMM_OK) {
        rc = cli_fail(&cmd, ctx, "cannot write the truth file");
        if (strcmp(out, "-") != 0) remove(out); // all outputs or none
        goto done;
    }
    double t2 = dsmmi_wtime();
    if (c.verbose)
        fprintf(stderr, "dsmm gen: %s %lld x %lld, %lld entries -> %s\n", pos[0],
                (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, out);
    cli_run run = {t2 - t0, t2 - t1, 0, A->nnz};
    rc = cli_stats(&cmd, &c, ctx, "gen", &run);
done:
    truth = dsmm_free(ctx, truth);
    dsmm_csr_destroy(&A);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
