// src/cli/cmd_gcn.c: dsmm gcn --dataset PREFIX [options]: full-batch GCN training
// (dsmm_gcn_train) alone or under mpirun, the aggregation on the 1D distributed SpMM (CoLa and
// its baselines); one line per epoch, the final accuracies, the per-rank communication volume
// of the aggregation (CoLa paper §3.1) and, with --stats, a JSON record with the curve.
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "comm/comm.h"

static const cli_cmd cmd = {
    "gcn", "--dataset PREFIX [options]",
    "train a graph convolutional network (Kipf & Welling) with distributed aggregation",
    "Trains an L-layer GCN on PREFIX.adj.mtx.gz (symmetric adjacency), PREFIX.features.mtx.gz\n"
    "(node features; not read with --features onehot|random), PREFIX.labels.txt.gz (a class\n"
    "per line, -1 for none) and PREFIX.split.txt.gz (lines 'train ids', 'val ids', 'test ids',\n"
    "0-based): Ahat = D^-1/2 (A + I) D^-1/2, relu between layers, softmax cross-entropy over\n"
    "the training nodes, Adam, dropout, weight decay on the first layer. Every Ahat * M runs\n"
    "on the 1D distributed SpMM named by --algo; under mpirun every rank count trains the\n"
    "same network. Prints the loss and accuracies every 10 epochs (each with --verbose), the\n"
    "final accuracies and, per rank, the aggregation's volume at k = hidden in bytes.\n"
    "docs/gcn.md has the details; exit 0 ok, 1 failure, 2 usage."};

typedef struct gcn_args {
    const char *dataset, *algo, *reorder, *comm;
    int layers, hidden, epochs, features, random_dim, wg, gpu_resident;
    double lr, dropout, wd;
    uint64_t seed;
} gcn_args;

typedef struct progress_ctx {
    FILE *f;
    int every, quiet;
} progress_ctx;

static void header(FILE *f)
{
    fprintf(f, "%6s %9s %7s %7s %7s %9s %9s %9s %9s\n", "epoch", "loss", "train", "val", "test",
            "seconds", "agg", "comm", "dense");
}

static void progress(void *user, const dsmm_gcn_epoch *e)
{
    progress_ctx *pc = user;
    if (pc->quiet) return;
    if (e->epoch == 1) header(pc->f);
    if (e->epoch % pc->every != 0 && e->epoch != 1) return;
    fprintf(pc->f, "%6d %9.5f %7.4f %7.4f %7.4f %9.5f %9.5f %9.5f %9.5f\n", e->epoch, e->loss,
            e->train_accuracy, e->val_accuracy, e->test_accuracy, e->seconds, e->agg_seconds,
            e->comm_seconds, e->dense_seconds);
}

// A growing string for the JSON arrays of the statistics.
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int bad;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) DSMMI_PRINTF(2, 3);
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->bad) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? 2 * b->cap : 4096) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

// JSON numbers: non-finite values (a diverged loss) as null.
static void put_num(sbuf *b, double v)
{
    if (isfinite(v))
        put(b, "%.9g", v);
    else
        put(b, "null");
}

static dsmm_status curve_json(const dsmm_gcn_result *r, sbuf *b)
{
    static const char *keys[] = {"loss",    "train_accuracy", "val_accuracy", "test_accuracy",
                                 "seconds", "agg_seconds",    "comm_seconds", "dense_seconds"};
    put(b, "{");
    for (int k = 0; k < 8; k++) {
        put(b, "%s\"%s\": [", k ? ", " : "", keys[k]);
        for (int e = 0; e < r->epochs; e++) {
            const dsmm_gcn_epoch *x = &r->curve[e];
            double v[8] = {x->loss,    x->train_accuracy, x->val_accuracy, x->test_accuracy,
                           x->seconds, x->agg_seconds,    x->comm_seconds, x->dense_seconds};
            if (e) put(b, ", ");
            put_num(b, v[k]);
        }
        put(b, "]");
    }
    put(b, "}");
    return b->bad ? DSMM_ERR_NOMEM : DSMM_OK;
}

// The per-rank volume (cli_cola_gather's rows, without the received bytes) as arrays.
static dsmm_status volume_json(const int64_t *all, int P, sbuf *b)
{
    static const char *keys[CLI_COLA_NCOL - 2] = {"rows",     "lsc_nnz",        "rsc_nnz",
                                                  "rsc_cols", "v_cg",           "v_fr",
                                                  "v_fc",     "inter_nofusion", "inter_fused"};
    put(b, "{");
    for (int j = 0; j < CLI_COLA_NCOL - 2; j++) {
        put(b, "%s\"%s\": [", j ? ", " : "", keys[j]);
        for (int r = 0; r < P; r++)
            put(b, "%s%lld", r ? ", " : "", (long long)all[r * CLI_COLA_NCOL + j]);
        put(b, "]");
    }
    put(b, "}");
    return b->bad ? DSMM_ERR_NOMEM : DSMM_OK;
}

static dsmm_status write_stats(dsmm_ctx *ctx, const char *path, const gcn_args *a,
                               const dsmm_gcn_params *p, const dsmm_gcn_result *r,
                               const int64_t *vol, int64_t bytes_sent, int64_t peak)
{
    static const char *feats[] = {"file", "onehot", "random"};
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    sbuf b = {0};
    int P = dsmm_ctx_size(ctx);
    DSMM_TRY(dsmm_stats_create(ctx, "gcn", &s));
    DSMM_TRY(dsmm_stats_set_str(s, "algo", dsmm_cola_alg_name(p->cola.alg)));
    DSMM_TRY(dsmm_stats_set_int(s, "ranks", P));
    DSMM_TRY(dsmm_stats_set_int(s, "threads", dsmm_ctx_threads(ctx)));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds", r->seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "io_seconds", r->setup_seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "flops", r->flops));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_in", r->edges));
    DSMM_TRY(dsmm_stats_set_int(s, "peak_bytes", peak));
    DSMM_TRY(dsmm_stats_set_int(s, "bytes_sent", bytes_sent));
    DSMM_TRY(dsmm_stats_set_str(s, "dataset", a->dataset));
    DSMM_TRY(dsmm_stats_set_num(s, "train_accuracy", r->train_accuracy));
    DSMM_TRY(dsmm_stats_set_num(s, "val_accuracy", r->val_accuracy));
    DSMM_TRY(dsmm_stats_set_num(s, "test_accuracy", r->test_accuracy));
    DSMM_TRY(dsmm_stats_set_int(s, "epochs", r->epochs));
    DSMM_TRY(dsmm_stats_set_num(s, "setup_seconds", r->setup_seconds));
    if (r->epochs > 0) {
        const dsmm_gcn_epoch *e = &r->curve[r->epochs - 1];
        DSMM_TRY(dsmm_stats_set_num(s, "loss", e->loss));
        DSMM_TRY(dsmm_stats_set_num(s, "epoch_seconds", e->seconds));
        DSMM_TRY(dsmm_stats_set_num(s, "agg_seconds", e->agg_seconds));
        DSMM_TRY(dsmm_stats_set_num(s, "comm_seconds", e->comm_seconds));
        DSMM_TRY(dsmm_stats_set_num(s, "dense_seconds", e->dense_seconds));
    }
    DSMM_TRY(dsmm_stats_set_int(s, "nodes", r->nodes));
    DSMM_TRY(dsmm_stats_set_int(s, "edges", r->edges));
    DSMM_TRY(dsmm_stats_set_int(s, "features", r->nfeatures));
    DSMM_TRY(dsmm_stats_set_int(s, "classes", r->nclasses));
    DSMM_TRY(dsmm_stats_set_int(s, "ntrain", r->ntrain));
    DSMM_TRY(dsmm_stats_set_int(s, "nval", r->nval));
    DSMM_TRY(dsmm_stats_set_int(s, "ntest", r->ntest));
    DSMM_TRY(dsmm_stats_set_int(s, "layers", p->layers));
    DSMM_TRY(dsmm_stats_set_int(s, "hidden", p->hidden));
    DSMM_TRY(dsmm_stats_set_num(s, "lr", p->lr));
    DSMM_TRY(dsmm_stats_set_num(s, "dropout", p->dropout));
    DSMM_TRY(dsmm_stats_set_num(s, "weight_decay", p->weight_decay));
    DSMM_TRY(dsmm_stats_set_int(s, "seed", (int64_t)p->seed));
    DSMM_TRY(dsmm_stats_set_str(s, "features_kind", feats[p->features]));
    DSMM_TRY(dsmm_stats_set_str(s, "reorder", dsmm_reorder_name(p->cola.reorder)));
    DSMM_TRY(dsmm_stats_set_str(s, "comm", dsmm_cola_comm_name(p->cola.comm)));
    DSMM_TRY(dsmm_stats_set_int(s, "workgroup_size", a->wg));
    st = curve_json(r, &b);
    if (st == DSMM_OK) st = dsmmi_stats_set_raw(s, "curve", b.s);
    b.len = 0;
    if (st == DSMM_OK) st = volume_json(vol, P, &b);
    if (st == DSMM_OK) st = dsmmi_stats_set_raw(s, "volume", b.s);
    DSMM_TRY(st);
    DSMM_TRY(cli_gpu_stats(ctx, s)); // rank 0's device record (when it has one)
    DSMM_TRY(dsmm_stats_write(s, path));
cleanup:
    free(b.s);
    dsmm_stats_destroy(&s);
    return st;
}

int cli_gcn(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    gcn_args a;
    memset(&a, 0, sizeof a);
    a.algo = "cola";
    a.reorder = "none";
    a.comm = "alltoallv";
    a.layers = 2;
    a.hidden = 16;
    a.epochs = 200;
    a.lr = 0.01;
    a.dropout = 0.5;
    a.wd = 5e-4;
    a.seed = 1;
    a.random_dim = 64;
    const cli_opt opts[] = {
        CLI_COMMON_OPTS(c),
        {"dataset", 'd', "PREFIX", "PREFIX.{adj.mtx,features.mtx,labels.txt,split.txt}.gz",
         CLI_STRING, &a.dataset, 0, 0},
        {"layers", 0, "L", "graph convolution layers (default 2)", CLI_INT, &a.layers, 1, 64},
        {"hidden", 0, "H", "hidden width (default 16)", CLI_INT, &a.hidden, 1, 1 << 20},
        {"epochs", 'e', "N", "training epochs (default 200)", CLI_INT, &a.epochs, 0, 1 << 24},
        {"lr", 0, "F", "Adam learning rate (default 0.01)", CLI_DOUBLE, &a.lr, 1e-12, 1e6},
        {"dropout", 0, "F", "dropout rate in [0, 1) (default 0.5)", CLI_DOUBLE, &a.dropout, 0,
         0.999999},
        {"weight-decay", 0, "F", "L2 weight decay of the first layer (default 5e-4)", CLI_DOUBLE,
         &a.wd, 0, 1e6},
        {"seed", 's', "S", "seed of the weights, dropout and random features (default 1)", CLI_U64,
         &a.seed, 0, 0},
        {"features", 0, "file|onehot|random", "input features (default file)", CLI_ENUM,
         &a.features, 0, 0},
        {"random-dim", 0, "N", "--features random: features per node (default 64)", CLI_INT,
         &a.random_dim, 1, 1 << 20},
        {"algo", 0, "cola|cola-nofusion|bcast-1d|rowwise-1d",
         "distributed SpMM of the aggregation (default cola)", CLI_STRING, &a.algo, 0, 0},
        {"reorder", 0, "none|rcm|rabbit", "vertex reordering before the row split (default none)",
         CLI_STRING, &a.reorder, 0, 0},
        {"comm", 0, "alltoallv|neighbor|put",
         "cola-nofusion: transfer of the rows (default "
         "alltoallv)",
         CLI_STRING, &a.comm, 0, 0},
        {"workgroup-size", 0, "G", "emulate nodes of G ranks (default: ranks sharing memory)",
         CLI_INT, &a.wg, 1, 1 << 20},
        CLI_GPU_OPTS(c),
        {"gpu-resident", 0, NULL,
         "implies --gpu: each aggregation's C panel on the device, every local product added "
         "there, one download",
         CLI_FLAG, &a.gpu_resident, 0, 0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char *pos[1];
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, 0);
    if (rc != CLI_OK) return rc;
    if (a.dataset == NULL) return cli_usage_error(&cmd, "needs --dataset PREFIX");
    if (c.gpu_mem || c.gpu_flops >= 0 || a.gpu_resident) c.gpu = 1; // they imply --gpu

    dsmm_gcn_params p;
    dsmm_gcn_params_init(&p);
    p.layers = a.layers;
    p.hidden = a.hidden;
    p.epochs = a.epochs;
    p.lr = a.lr;
    p.dropout = a.dropout;
    p.weight_decay = a.wd;
    p.seed = a.seed;
    p.features = (dsmm_gcn_features)a.features;
    p.random_dim = a.random_dim;
    if (dsmm_cola_alg_from_name(a.algo, &p.cola.alg) != DSMM_OK)
        return cli_usage_error(&cmd,
                               "--algo: '%s' is not one of cola|cola-nofusion|bcast-1d|"
                               "rowwise-1d",
                               a.algo);
    if (dsmm_reorder_from_name(a.reorder, &p.cola.reorder) != DSMM_OK)
        return cli_usage_error(&cmd, "--reorder: '%s' is not one of none|rcm|rabbit", a.reorder);
    if (dsmm_cola_comm_from_name(a.comm, &p.cola.comm) != DSMM_OK)
        return cli_usage_error(&cmd, "--comm: '%s' is not one of alltoallv|neighbor|put", a.comm);
    p.cola.gpu_resident = a.gpu_resident;
    if (cli_dir_writable(&cmd, "--stats", c.stats) != CLI_OK) return CLI_FAIL;

    cli_dist d;
    memset(&d, 0, sizeof d);
    d.wg = a.wg;
    dsmm_ctx *ctx = NULL;
    int serial = !cli_dist_launched();
    if (serial) {
        // One process without a launcher: no MPI start-up.
        rc = cli_ctx(&cmd, &c, &ctx);
        if (rc != CLI_OK) return rc;
        if (a.wg && dsmm_ctx_set_workgroup_size(ctx, a.wg) != DSMM_OK) {
            rc = cli_fail(&cmd, ctx, "bad --workgroup-size");
            dsmm_ctx_destroy(&ctx);
            return rc;
        }
    } else if (cli_dist_ctx(&cmd, &c, &d, &ctx) != CLI_OK) {
        return CLI_FAIL;
    }
    int root = dsmm_ctx_rank(ctx) == 0, P = dsmm_ctx_size(ctx);
    FILE *out = cli_report_stream(&c, NULL);
    progress_ctx pcx = {out, c.verbose ? 1 : 10, c.quiet};
    p.progress = progress;
    p.progress_user = &pcx;
    dsmm_gcn_result res;
    memset(&res, 0, sizeof res);
    int64_t *vol = NULL;
    dsmm_traffic t0, t1;
    dsmm_ctx_traffic(ctx, &t0);
    dsmm_status st = dsmm_gcn_train(ctx, a.dataset, &p, &res);
    if (st != DSMM_OK) {
        if (root) cli_fail(&cmd, ctx, a.dataset);
        rc = CLI_FAIL;
        goto done;
    }
    dsmm_ctx_traffic(ctx, &t1);
    int64_t sums[2] = {t1.bytes_sent[0] + t1.bytes_sent[1] - t0.bytes_sent[0] - t0.bytes_sent[1],
                       (int64_t)dsmm_ctx_mem_peak(ctx)};
    st = cli_cola_gather(ctx, &res.volume, NULL, &vol);
    if (st == DSMM_OK) st = dsmmi_allreduce_i64(ctx, &sums[0], 1, '+');
    if (st == DSMM_OK) st = dsmmi_allreduce_i64(ctx, &sums[1], 1, '>');
    if (st != DSMM_OK) {
        if (root) cli_fail(&cmd, ctx, "gathering the volume");
        rc = CLI_FAIL;
        goto done;
    }
    if (root) {
        fprintf(out,
                "dsmm gcn: %lld nodes, %lld edges, %lld features, %lld classes; %d layers, "
                "hidden %d, %d epochs on %d rank%s (%s)\n",
                (long long)res.nodes, (long long)res.edges, (long long)res.nfeatures,
                (long long)res.nclasses, p.layers, p.hidden, res.epochs, P, P == 1 ? "" : "s",
                dsmm_cola_alg_name(p.cola.alg));
        fprintf(out,
                "final: train accuracy %.4f, val accuracy %.4f, test accuracy %.4f; training "
                "%.3f s (%.2f ms/epoch), setup %.3f s\n",
                res.train_accuracy, res.val_accuracy, res.test_accuracy, res.seconds,
                res.epochs ? 1e3 * res.seconds / res.epochs : 0.0, res.setup_seconds);
        if (!c.quiet) {
            char title[96];
            snprintf(
                title, sizeof title,
                "aggregation volume per multiply at k = %d (bytes received, float):", p.hidden);
            cli_cola_print(out, title, vol, P, 0);
        }
        if (c.stats && write_stats(ctx, c.stats, &a, &p, &res, vol, sums[0], sums[1]) != DSMM_OK)
            rc = cli_fail(&cmd, ctx, "cannot write the statistics");
    }
done:
    dsmmi_free(ctx, vol);
    dsmm_gcn_result_free(&res);
    if (serial)
        dsmm_ctx_destroy(&ctx);
    else
        cli_dist_end(&ctx);
    return rc;
}
