// src/apps/gcn/gcn.c: dsmm_gcn_train, full-batch GCN training (Kipf & Welling, ICLR'17) on the
// 1D distributed SpMM (CoLa): the dataset and Ahat's plan (gcn_data.c), then per epoch a
// forward pass with dropout, the loss, the backward pass and an Adam step (gcn_model.c), and a
// forward pass without dropout that gives the epoch's train / val / test accuracy with the
// weights after the update. Times per epoch are the largest rank's.
#include <math.h>
#include <string.h>

#include "apps/apps.h"

void dsmm_gcn_params_init(dsmm_gcn_params *p)
{
    memset(p, 0, sizeof *p);
    p->layers = 2;
    p->hidden = 16;
    p->epochs = 200;
    p->lr = 0.01;
    p->dropout = 0.5;
    p->weight_decay = 5e-4;
    p->seed = 1;
    p->features = DSMM_GCN_FEATURES_FILE;
    p->random_dim = 64;
    dsmm_cola_opts_init(&p->cola);
}

void dsmm_gcn_result_free(dsmm_gcn_result *res)
{
    if (res == NULL) return;
    dsmm_free(NULL, res->curve);
    memset(res, 0, sizeof *res);
}

static dsmm_status check_params(dsmm_ctx *ctx, const char *prefix, const dsmm_gcn_params *p)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, prefix != NULL && p != NULL, DSMM_ERR_ARG,
               "gcn: prefix and p must be non-NULL");
    DSMM_CHECK(ctx, p->layers >= 1 && p->layers <= 64, DSMM_ERR_ARG,
               "gcn: layers %d is not in 1..64", p->layers);
    DSMM_CHECK(ctx, p->hidden >= 1 && p->hidden <= (1 << 20), DSMM_ERR_ARG,
               "gcn: hidden %d is not in 1..1048576", p->hidden);
    DSMM_CHECK(ctx, p->epochs >= 0 && p->epochs <= (1 << 24), DSMM_ERR_ARG,
               "gcn: epochs %d is not in 0..16777216", p->epochs);
    DSMM_CHECK(ctx, isfinite(p->lr) && p->lr > 0.0, DSMM_ERR_ARG, "gcn: lr %g is not > 0", p->lr);
    DSMM_CHECK(ctx, p->dropout >= 0.0 && p->dropout < 1.0, DSMM_ERR_ARG,
               "gcn: dropout %g is not in [0, 1)", p->dropout);
    DSMM_CHECK(ctx, isfinite(p->weight_decay) && p->weight_decay >= 0.0, DSMM_ERR_ARG,
               "gcn: weight decay %g is not >= 0", p->weight_decay);
    DSMM_CHECK(ctx,
               p->features == DSMM_GCN_FEATURES_FILE || p->features == DSMM_GCN_FEATURES_ONEHOT ||
                   p->features == DSMM_GCN_FEATURES_RANDOM,
               DSMM_ERR_ARG, "gcn: unknown features kind %d", (int)p->features);
    DSMM_CHECK(ctx,
               p->features != DSMM_GCN_FEATURES_RANDOM ||
                   (p->random_dim >= 1 && p->random_dim <= (1 << 20)),
               DSMM_ERR_ARG, "gcn: random_dim %d is not in 1..1048576", p->random_dim);
cleanup:
    return st;
}

dsmm_status dsmm_gcn_train(dsmm_ctx *ctx, const char *prefix, const dsmm_gcn_params *p,
                           dsmm_gcn_result *res)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gcn_data d;
    dsmmi_gcn_model m;
    dsmm_gcn_epoch *curve = NULL;
    memset(&d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    // The dense products are small (n x hidden by hidden x hidden); OpenBLAS's own threads
    // would only spin against the ranks and OpenMP threads sharing the cores: one thread here,
    // the caller's setting restored at the end.
    int blas_threads = -1;
    double t0 = dsmmi_wtime();

    DSMM_CHECK(ctx, res != NULL, DSMM_ERR_ARG, "gcn: res must be non-NULL");
    memset(res, 0, sizeof *res);
    DSMM_TRY(check_params(ctx, prefix, p));
    DSMM_TRY(dsmmi_gcn_data_load(ctx, prefix, p, &d));
    DSMM_TRY(dsmmi_gcn_model_init(ctx, &d, p, &m)); // loads OpenBLAS
    blas_threads = dsmmi_gcn_blas_threads(1);
    curve = dsmmi_calloc(NULL, (size_t)p->epochs + 1, sizeof *curve);
    DSMM_CHECK(ctx, curve != NULL, DSMM_ERR_NOMEM, "gcn: %d epoch records", p->epochs);
    double t1 = dsmmi_wtime();
    double acc[3] = {0.0, 0.0, 0.0};
    for (int e = 0; e < p->epochs; e++) {
        double te = dsmmi_wtime(), agg0 = m.agg_seconds, comm0 = m.comm_seconds,
               cola0 = m.cola_seconds, loss = 0.0;
        DSMM_TRY(dsmmi_gcn_forward(ctx, &m, e, 1));
        DSMM_TRY(dsmmi_gcn_loss(ctx, &m, 1, &loss));
        DSMM_TRY(dsmmi_gcn_backward(ctx, &m));
        dsmmi_gcn_step(&m);
        DSMM_TRY(dsmmi_gcn_forward(ctx, &m, e, 0));
        DSMM_TRY(dsmmi_gcn_accuracy(ctx, &m, acc));
        double total = dsmmi_wtime() - te;
        double t[4] = {total, m.agg_seconds - agg0, m.comm_seconds - comm0,
                       total - (m.cola_seconds - cola0)};
        DSMM_TRY(dsmmi_allreduce_f64(ctx, t, 4, '>'));
        dsmm_gcn_epoch *r = &curve[e];
        r->epoch = e + 1;
        r->loss = loss;
        r->train_accuracy = acc[0];
        r->val_accuracy = acc[1];
        r->test_accuracy = acc[2];
        r->seconds = t[0];
        r->agg_seconds = t[1];
        r->comm_seconds = t[2];
        r->dense_seconds = t[3];
        if (p->progress != NULL && dsmm_ctx_rank(ctx) == 0) p->progress(p->progress_user, r);
    }
    if (p->epochs == 0) { // the untrained network's accuracies
        DSMM_TRY(dsmmi_gcn_forward(ctx, &m, 0, 0));
        DSMM_TRY(dsmmi_gcn_accuracy(ctx, &m, acc));
    }
    double sec[2] = {t1 - t0, dsmmi_wtime() - t1};
    DSMM_TRY(dsmmi_allreduce_f64(ctx, sec, 2, '>'));
    DSMM_TRY(dsmmi_allreduce_f64(ctx, &m.flops, 1, '+'));
    res->flops = m.flops;
    res->epochs = p->epochs;
    res->curve = curve;
    curve = NULL;
    res->train_accuracy = acc[0];
    res->val_accuracy = acc[1];
    res->test_accuracy = acc[2];
    res->nodes = d.n;
    res->edges = d.edges;
    res->nfeatures = d.nfeat;
    res->nclasses = d.nclasses;
    res->ntrain = d.ntrain;
    res->nval = d.nval;
    res->ntest = d.ntest;
    res->setup_seconds = sec[0];
    res->seconds = sec[1];
    dsmm_cola_volume_get(d.plan, p->hidden, 4, &res->volume);
cleanup:
    if (blas_threads > 0) dsmmi_gcn_blas_threads(blas_threads);
    dsmmi_gcn_model_free(ctx, &m);
    dsmmi_gcn_data_free(ctx, &d);
    dsmmi_free(NULL, curve);
    if (st != DSMM_OK && res != NULL) dsmm_gcn_result_free(res);
    return st;
}
