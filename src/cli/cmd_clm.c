// src/cli/cmd_clm.c: `dsmm clm dist` and `dsmm clm info`, mcl's clm dist and clm info on cluster
// files (dsmm_clm_dist, dsmm_clm_info): one line per pair or per clustering in clm's own format,
// or one JSON object with every measure.
#include <string.h>

#include "apps/apps.h"
#include "cli/cli.h"

#define MAX_FILES 1024

static const cli_cmd clm_cmd = {
    "clm",
    "dist|info ...",
    "Cluster tools of mcl's clm: compare clusterings, score a clustering on its graph.",
    "  dsmm clm dist A B [C ...]       distances between clusterings (clm dist)\n"
    "  dsmm clm info GRAPH CL [CL ...] efficiency, modularity, mass and area fractions,\n"
    "                                  cluster sizes (clm info)\n"
    "'dsmm clm dist --help' and 'dsmm clm info --help' describe each; docs/clm.md has the\n"
    "formulas and how to cross-check with mcl's clm.",
};

static const cli_cmd dist_cmd = {
    "clm dist",
    "A B [C ...] [options]",
    "Distances between clusterings, as mcl's clm dist computes and prints them.",
    "Cluster files: one cluster per line, members (labels) separated by tabs or spaces, as\n"
    "mcl --abc -o and dsmm mcl write them (.gz too), or mcl's native matrix format. Every pair\n"
    "is compared (--chain: consecutive ones; --one-to-many: the first with each other) over the\n"
    "nodes either lists; the nodes only one lists form one extra cluster in the other (as clm\n"
    "dist does with clusterings that miss nodes). Lines as clm dist prints them:\n"
    "  d=D d1=D1 d2=D2 nn=N c1=K1 c2=K2 n1=A n2=B   (tab-separated)\n"
    "where d = d1 + d2 and d1 (d2) is the distance from A (B) to their meet, the largest\n"
    "common subclustering: --mode sj (split/join: nodes to move), vi (variation of information,\n"
    "natural log) or mk (Mirkin: sum of squared sizes minus squared overlaps).\n"
    "--index prints 'rand=R jaccard=J arand=ARI n1=A n2=B' instead (ARI: Hubert-Arabie).\n"
    "--json prints every measure of every pair as one JSON object.",
};

static const cli_cmd info_cmd = {
    "clm info",
    "GRAPH CLUSTERS [CLUSTERS ...] [options]",
    "Scores clusterings on their graph, as mcl's clm info computes and prints it.",
    "GRAPH: Matrix Market, abc or dsmm binary (.gz too). abc graphs are undirected: each line\n"
    "is an edge both ways, a pair given both ways keeps its larger weight (as mcxload\n"
    "--stream-mirror; repeated lines need --dup max). Other files are used as they are: row i\n"
    "holds node i's neighbours. Cluster members are the graph's labels (abc) or 0-based node\n"
    "indices (other formats), as dsmm mcl writes them. As in clm info, every node's loop weighs\n"
    "its row's largest weight, and graph nodes that a clustering leaves out are in no cluster.\n"
    "One line per clustering, '===' between:\n"
    "  eff=E mod=Q mf=M af=F  src=FILE ncl=K max=S  ctr=C avg=V min=S DGI=I TWI=I TWL=S sgl=K "
    "qrt=K\n"
    "eff: mean coverage (van Dongen's efficiency); mod: Newman's modularity (no loops); mf: mean\n"
    "fraction of a node's weight inside its cluster; af: sum |c|(|c|-1) / (n(n-1)); then the\n"
    "number of clusters, sizes (largest, sum of squares / nodes, mean, smallest), DGI, TWI, TWL,\n"
    "singletons and clusters of at most 4 nodes (docs/clm.md).",
};

// A note on stderr when X lists nodes that Y does not (count of them, the first by index).
static void note_missing(const cli_cmd *cmd, const cli_common *c, const dsmm_labels *labels,
                         const dsmm_clustering *X, const dsmm_clustering *Y, const char *xname,
                         const char *yname, dsmm_idx count, const char *what)
{
    if (c->quiet || count == 0) return;
    const char *first = NULL;
    dsmm_idx n = X->n > Y->n ? X->n : Y->n;
    for (dsmm_idx i = 0; i < n && first == NULL; i++) {
        int in_x = i < X->n && X->cluster[i] >= 0, in_y = i < Y->n && Y->cluster[i] >= 0;
        if (in_x && !in_y) first = dsmm_labels_name(labels, i);
    }
    fprintf(stderr, "dsmm %s: note: %lld node%s of %s %s not in %s (first: %s); %s\n", cmd->name,
            (long long)count, count == 1 ? "" : "s", xname, count == 1 ? "is" : "are", yname,
            first ? first : "?", what);
}

static void dist_json(dsmmi_json *j, const dsmm_clm_dist_stats *s, const char *n1, const char *n2)
{
    dsmmi_json_begin_object(j, NULL);
    dsmmi_json_str(j, "n1", n1);
    dsmmi_json_str(j, "n2", n2);
    dsmmi_json_int(j, "nn", s->n);
    dsmmi_json_int(j, "c1", s->nclusters_a);
    dsmmi_json_int(j, "c2", s->nclusters_b);
    dsmmi_json_int(j, "only1", s->only_a);
    dsmmi_json_int(j, "only2", s->only_b);
    dsmmi_json_begin_object(j, "sj");
    dsmmi_json_int(j, "d", s->sj);
    dsmmi_json_int(j, "d1", s->sj_ab);
    dsmmi_json_int(j, "d2", s->sj_ba);
    dsmmi_json_end_object(j);
    dsmmi_json_begin_object(j, "vi");
    dsmmi_json_num(j, "d", s->vi);
    dsmmi_json_num(j, "d1", s->vi_ab);
    dsmmi_json_num(j, "d2", s->vi_ba);
    dsmmi_json_end_object(j);
    dsmmi_json_begin_object(j, "mk");
    dsmmi_json_int(j, "d", s->mk);
    dsmmi_json_int(j, "d1", s->mk_ab);
    dsmmi_json_int(j, "d2", s->mk_ba);
    dsmmi_json_end_object(j);
    dsmmi_json_num(j, "rand", s->rand);
    dsmmi_json_num(j, "jaccard", s->jaccard);
    dsmmi_json_num(j, "arand", s->ari);
    dsmmi_json_end_object(j);
}

static void dist_line(FILE *out, const dsmm_clm_dist_stats *s, int mode, int index, int digits,
                      const char *n1, const char *n2)
{
    if (index) {
        fprintf(out, "rand=%.5f jaccard=%.5f arand=%.5f n1=%s n2=%s\n", s->rand, s->jaccard, s->ari,
                n1, n2);
    } else if (mode == 1) {
        fprintf(out, "d=%.*f\td1=%.*f\td2=%.*f", digits, s->vi, digits, s->vi_ab, digits, s->vi_ba);
    } else {
        dsmm_idx d = mode == 0 ? s->sj : s->mk, d1 = mode == 0 ? s->sj_ab : s->mk_ab;
        dsmm_idx d2 = mode == 0 ? s->sj_ba : s->mk_ba;
        fprintf(out, "d=%lld\td1=%lld\td2=%lld", (long long)d, (long long)d1, (long long)d2);
    }
    if (!index)
        fprintf(out, "\tnn=%lld\tc1=%lld\tc2=%lld\tn1=%s\tn2=%s\n", (long long)s->n,
                (long long)s->nclusters_a, (long long)s->nclusters_b, n1, n2);
}

static int cmd_dist(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int mode = 0, index = 0, chain = 0, one_to_many = 0, digits = 3, json = 0;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        {"mode", 0, "sj|vi|mk", "split/join (default), variation of information or Mirkin distance",
         CLI_ENUM, &mode, 0, 0},
        {"index", 0, NULL, "print Rand, Jaccard and adjusted Rand indices instead", CLI_FLAG,
         &index, 0, 0},
        {"chain", 0, NULL, "compare only consecutive clusterings", CLI_FLAG, &chain, 0, 0},
        {"one-to-many", 0, NULL, "compare the first clustering with each other one", CLI_FLAG,
         &one_to_many, 0, 0},
        {"digits", 0, "K", "decimals of --mode vi (default 3)", CLI_INT, &digits, 0, 17},
        {"json", 0, NULL, "print one JSON object with every measure of every pair", CLI_FLAG, &json,
         0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[MAX_FILES];
    int npos = 0;
    int rc = cli_parse(&dist_cmd, opts, argc, argv, pos, &npos, MAX_FILES);
    if (rc != CLI_OK) return rc;
    if (npos < 2) return cli_usage_error(&dist_cmd, "needs at least two cluster files");
    if (chain && one_to_many)
        return cli_usage_error(&dist_cmd, "--chain and --one-to-many exclude each other");
    rc = cli_stdout_once(&dist_cmd, &c, json, "--json");
    if (rc != CLI_OK) return rc;

    dsmm_ctx *ctx = NULL;
    dsmm_labels *labels = NULL;
    dsmm_clustering *cl[MAX_FILES] = {NULL};
    dsmmi_json j;
    dsmmi_json_init(&j, NULL);
    rc = cli_ctx(&dist_cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    j.ctx = ctx;
    double t0 = dsmmi_wtime();
    for (int f = 0; f < npos; f++) {
        if (dsmm_clustering_read(ctx, pos[f], &labels, 1, &cl[f]) != DSMM_OK) {
            rc = cli_fail(&dist_cmd, ctx, "cannot read a cluster file");
            goto done;
        }
    }
    double io = dsmmi_wtime() - t0;
    if (json) {
        dsmmi_json_begin_object(&j, NULL);
        dsmmi_json_begin_array(&j, "pairs");
    }
    for (int x = 0; x < npos; x++) {
        for (int y = x + 1; y < npos; y++) {
            if ((chain && y != x + 1) || (one_to_many && x != 0)) continue;
            dsmm_clm_dist_stats s;
            if (dsmm_clm_dist(ctx, cl[x], cl[y], &s) != DSMM_OK) {
                rc = cli_fail(&dist_cmd, ctx, "comparison failed");
                goto done;
            }
            if (s.n > 0 && s.only_a > 0 && s.only_b > 0 && s.only_a + s.only_b == s.n) {
                fprintf(stderr,
                        "dsmm clm dist: %s and %s have no node in common (labels against mcl's "
                        "native node indices?)\n",
                        pos[x], pos[y]);
                rc = CLI_FAIL;
                goto done;
            }
            const char *as_singletons = "they form one extra cluster there, as in clm dist";
            note_missing(&dist_cmd, &c, labels, cl[x], cl[y], pos[x], pos[y], s.only_a,
                         as_singletons);
            note_missing(&dist_cmd, &c, labels, cl[y], cl[x], pos[y], pos[x], s.only_b,
                         as_singletons);
            if (json)
                dist_json(&j, &s, pos[x], pos[y]);
            else
                dist_line(cli_report_stream(&c, NULL), &s, mode, index, digits, pos[x], pos[y]);
        }
    }
    if (json) {
        dsmmi_json_end_array(&j);
        dsmmi_json_end_object(&j);
        if (j.st != DSMM_OK) {
            rc = cli_fail(&dist_cmd, ctx, "out of memory");
            goto done;
        }
        printf("%s\n", j.buf);
    }
    if (fflush(stdout) != 0) {
        rc = cli_fail(&dist_cmd, NULL, "cannot write to stdout");
        goto done;
    }
    cli_run run = {dsmmi_wtime() - t0, io, 0, 0};
    rc = cli_stats(&dist_cmd, &c, ctx, "clm dist", &run);
done:
    dsmmi_json_free(&j);
    for (int f = 0; f < npos; f++) dsmm_clustering_destroy(&cl[f]);
    dsmm_labels_destroy(&labels);
    dsmm_ctx_destroy(&ctx);
    return rc;
}

static void info_json(dsmmi_json *j, const dsmm_clm_info_stats *s, const char *src)
{
    dsmmi_json_begin_object(j, NULL);
    dsmmi_json_str(j, "src", src);
    dsmmi_json_int(j, "nodes", s->n);
    dsmmi_json_int(j, "listed", s->listed);
    dsmmi_json_num(j, "eff", s->efficiency);
    dsmmi_json_num(j, "mod", s->modularity);
    dsmmi_json_num(j, "mf", s->massfrac);
    dsmmi_json_num(j, "af", s->areafrac);
    dsmmi_json_int(j, "ncl", s->nclusters);
    dsmmi_json_int(j, "max", s->size_max);
    dsmmi_json_num(j, "ctr", s->size_ctr);
    dsmmi_json_num(j, "avg", s->size_avg);
    dsmmi_json_int(j, "min", s->size_min);
    dsmmi_json_int(j, "DGI", s->dgi);
    dsmmi_json_int(j, "TWI", s->twi);
    dsmmi_json_int(j, "TWL", s->twl);
    dsmmi_json_int(j, "sgl", s->singletons);
    dsmmi_json_int(j, "qrt", s->qrt);
    dsmmi_json_end_object(j);
}

static void info_line(FILE *out, const dsmm_clm_info_stats *s, const char *src)
{
    fprintf(out,
            "eff=%.5f mod=%.5f mf=%.5f af=%.5f  src=%s ncl=%lld max=%lld  ctr=%.1f avg=%.1f "
            "min=%lld DGI=%lld TWI=%lld TWL=%lld sgl=%lld qrt=%lld\n",
            s->efficiency, s->modularity, s->massfrac, dsmmi_clm_af_shown(s), src,
            (long long)s->nclusters, (long long)s->size_max, s->size_ctr, s->size_avg,
            (long long)s->size_min, (long long)s->dgi, (long long)s->twi, (long long)s->twl,
            (long long)s->singletons, (long long)s->qrt);
}

static int cmd_info(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int json = 0;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        CLI_INPUT_OPTS(c),
        {"json", 0, NULL, "print one JSON object with the measures of every clustering", CLI_FLAG,
         &json, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[MAX_FILES];
    int npos = 0;
    int rc = cli_parse(&info_cmd, opts, argc, argv, pos, &npos, MAX_FILES);
    if (rc != CLI_OK) return rc;
    if (npos < 2) return cli_usage_error(&info_cmd, "needs a graph and at least one cluster file");
    rc = cli_stdout_once(&info_cmd, &c, json, "--json");
    if (rc != CLI_OK) return rc;

    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *G = NULL;
    dsmm_labels *labels = NULL;
    dsmm_clustering *C = NULL;
    dsmm_file_info fi = {0};
    dsmm_read_opts ro;
    dsmmi_json j;
    dsmmi_json_init(&j, NULL);
    rc = cli_ctx(&info_cmd, &c, &ctx);
    if (rc != CLI_OK) return rc;
    j.ctx = ctx;
    cli_read_opts(&c, &ro);
    double t0 = dsmmi_wtime();
    if (dsmm_read(ctx, pos[0], &ro, &A, &labels, &fi) != DSMM_OK) {
        rc = cli_fail(&info_cmd, ctx, "cannot read the graph");
        goto done;
    }
    if (A->nrows != A->ncols || A->nrows == 0) {
        fprintf(stderr,
                "dsmm clm info: %s: the graph is %lld x %lld, not a square matrix with "
                "nodes\n",
                pos[0], (long long)A->nrows, (long long)A->ncols);
        rc = CLI_FAIL;
        goto done;
    }
    if (fi.format == DSMM_FORMAT_ABC) {
        if (dsmmi_clm_symmetrize(ctx, A, &G) != DSMM_OK) {
            rc = cli_fail(&info_cmd, ctx, "cannot symmetrise the graph");
            goto done;
        }
    } else {
        G = A;
        A = NULL;
    }
    if (labels == NULL && dsmm_labels_create_index(ctx, G->nrows, &labels) != DSMM_OK) {
        rc = cli_fail(&info_cmd, ctx, "out of memory");
        goto done;
    }
    double io = dsmmi_wtime() - t0;
    if (json) {
        dsmmi_json_begin_object(&j, NULL);
        dsmmi_json_str(&j, "graph", pos[0]);
        dsmmi_json_int(&j, "nodes", G->nrows);
        dsmmi_json_int(&j, "edges", G->nnz);
        dsmmi_json_begin_array(&j, "clusterings");
    }
    for (int f = 1; f < npos; f++) {
        dsmm_clm_info_stats s;
        if (dsmm_clustering_read(ctx, pos[f], &labels, 0, &C) != DSMM_OK ||
            dsmm_clm_info(ctx, G, C, &s) != DSMM_OK) {
            rc = cli_fail(&info_cmd, ctx, "cannot score the clustering");
            goto done;
        }
        if (!c.quiet && s.listed < s.n) {
            const char *first = NULL;
            for (dsmm_idx i = 0; i < G->nrows && first == NULL; i++)
                if (i >= C->n || C->cluster[i] < 0) first = dsmm_labels_name(labels, i);
            fprintf(stderr,
                    "dsmm clm info: note: %s lists %lld of the %lld graph nodes (first missing: "
                    "%s); the others are in no cluster, as in clm info\n",
                    pos[f], (long long)s.listed, (long long)s.n, first ? first : "?");
        }
        if (json) {
            info_json(&j, &s, pos[f]);
        } else {
            FILE *out = cli_report_stream(&c, NULL);
            if (f > 1) fprintf(out, "===\n");
            info_line(out, &s, pos[f]);
        }
        dsmm_clustering_destroy(&C);
    }
    if (json) {
        dsmmi_json_end_array(&j);
        dsmmi_json_end_object(&j);
        if (j.st != DSMM_OK) {
            rc = cli_fail(&info_cmd, ctx, "out of memory");
            goto done;
        }
        printf("%s\n", j.buf);
    }
    if (fflush(stdout) != 0) {
        rc = cli_fail(&info_cmd, NULL, "cannot write to stdout");
        goto done;
    }
    cli_run run = {dsmmi_wtime() - t0, io, G->nnz, 0};
    rc = cli_stats(&info_cmd, &c, ctx, "clm info", &run);
done:
    dsmmi_json_free(&j);
    dsmm_clustering_destroy(&C);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&G);
    dsmm_labels_destroy(&labels);
    dsmm_ctx_destroy(&ctx);
    return rc;
}

int cli_clm(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "dist") == 0) return cmd_dist(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: dsmm %s %s\n\n%s\n\n%s\n", clm_cmd.name, clm_cmd.args, clm_cmd.summary,
               clm_cmd.details);
        return CLI_HELP_RC;
    }
    if (argc < 2) return cli_usage_error(&clm_cmd, "needs a tool: dist or info");
    return cli_usage_error(&clm_cmd, "unknown tool '%s' (dist or info)", argv[1]);
}
