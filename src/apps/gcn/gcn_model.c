// src/apps/gcn/gcn_model.c: the GCN's forward and backward passes over this rank's rows.
// Layer l: Hd = dropout(H_l) (layer 0: on X's nonzeros), M = Hd * W_l (sparse X: dsmm_csr_spmm;
// dense: BLAS), Z = Ahat * M (dsmm_cola_spmm), H_{l+1} = relu(Z) but for the last layer.
// Backward through the same steps: dM = Ahat^T dZ = Ahat * dZ (Ahat is symmetric, so the
// forward plan serves), dW = Hd^T dM summed over the ranks in one all-reduce, dHd = dM W^T,
// then the dropout and ReLU masks. Weights are replicated and every rank applies the same
// Adam step, so they stay identical.
#include <math.h>
#include <string.h>

#include "apps/apps.h"

static dsmm_dense view(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, float *val)
{
    dsmm_dense D = {nrows, ncols, ncols, val, DSMM_FLOAT, 0, ctx};
    return D;
}

// C = Ahat * B (nloc x k), timed.
static dsmm_status aggregate(dsmm_ctx *ctx, dsmmi_gcn_model *m, dsmm_idx k, float *B, float *C)
{
    dsmm_dense b = view(ctx, m->d->nloc, k, B), c = view(ctx, m->d->nloc, k, C);
    dsmm_cola_info info;
    memset(&info, 0, sizeof info);
    dsmm_status st = dsmm_cola_spmm(ctx, m->d->plan, &b, &c, &info);
    m->flops += 2.0 * (double)m->d->ahat_nnz * (double)k;
    m->agg_seconds += info.comp_seconds;
    m->comm_seconds += info.comm_seconds;
    m->cola_seconds += info.seconds;
    return st;
}

// dsmmi_gcn_gemm, counted: C (m x n) = op(A) * op(B) with inner dimension k.
static void gemm(dsmmi_gcn_model *mo, int ta, int tb, dsmm_idx m, dsmm_idx n, dsmm_idx k,
                 const float *A, dsmm_idx lda, const float *B, dsmm_idx ldb, float *C, dsmm_idx ldc)
{
    mo->flops += 2.0 * (double)m * (double)n * (double)k;
    dsmmi_gcn_gemm(ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
}

static size_t wsize(const dsmmi_gcn_model *m, int l)
{
    return (size_t)(m->width[l] * m->width[l + 1]);
}

void dsmmi_gcn_model_free(dsmm_ctx *ctx, dsmmi_gcn_model *m)
{
    if (m == NULL) return;
    for (int l = 0; l < m->L; l++) {
        if (m->W) dsmmi_free(ctx, m->W[l]);
        if (m->dW) dsmmi_free(ctx, m->dW[l]);
        if (m->m) dsmmi_free(ctx, m->m[l]);
        if (m->v) dsmmi_free(ctx, m->v[l]);
        if (m->Hd) dsmmi_free(ctx, m->Hd[l]);
        if (m->M) dsmmi_free(ctx, m->M[l]);
        if (m->Z) dsmmi_free(ctx, m->Z[l]);
    }
    dsmmi_free(ctx, m->W);
    dsmmi_free(ctx, m->dW);
    dsmmi_free(ctx, m->m);
    dsmmi_free(ctx, m->v);
    dsmmi_free(ctx, m->Hd);
    dsmmi_free(ctx, m->M);
    dsmmi_free(ctx, m->Z);
    dsmmi_free(ctx, m->width);
    dsmmi_free(ctx, m->g1);
    dsmmi_free(ctx, m->g2);
    dsmmi_free(ctx, m->Xrd);
    dsmmi_free(ctx, m->red);
    dsmm_csr_destroy(&m->Xd);
    memset(m, 0, sizeof *m);
}

dsmm_status dsmmi_gcn_model_init(dsmm_ctx *ctx, const dsmmi_gcn_data *d, const dsmm_gcn_params *p,
                                 dsmmi_gcn_model *m)
{
    dsmm_status st = DSMM_OK;
    memset(m, 0, sizeof *m);
    DSMM_TRY(dsmmi_gcn_blas_load(ctx));
    m->d = d;
    m->p = *p;
    int L = m->L = p->layers;
    size_t Ls = (size_t)L;
    m->width = dsmmi_malloc(ctx, Ls + 1, sizeof *m->width);
    m->W = dsmmi_calloc(ctx, Ls, sizeof *m->W);
    m->dW = dsmmi_calloc(ctx, Ls, sizeof *m->dW);
    m->m = dsmmi_calloc(ctx, Ls, sizeof *m->m);
    m->v = dsmmi_calloc(ctx, Ls, sizeof *m->v);
    m->Hd = dsmmi_calloc(ctx, Ls, sizeof *m->Hd);
    m->M = dsmmi_calloc(ctx, Ls, sizeof *m->M);
    m->Z = dsmmi_calloc(ctx, Ls, sizeof *m->Z);
    DSMM_CHECK(ctx, m->width && m->W && m->dW && m->m && m->v && m->Hd && m->M && m->Z,
               DSMM_ERR_NOMEM, "gcn: %d layers", L);
    m->width[0] = d->nfeat;
    for (int l = 1; l < L; l++) m->width[l] = p->hidden;
    m->width[L] = d->nclasses;
    dsmm_idx wmax = 1, nloc = d->nloc;
    size_t wall = 0;
    for (int l = 0; l < L; l++) {
        if (m->width[l + 1] > wmax) wmax = m->width[l + 1];
        size_t w = wsize(m, l);
        wall += w;
        m->W[l] = dsmmi_malloc(ctx, w + 1, sizeof(float));
        m->dW[l] = dsmmi_malloc(ctx, w + 1, sizeof(float));
        m->m[l] = dsmmi_calloc(ctx, w + 1, sizeof(float));
        m->v[l] = dsmmi_calloc(ctx, w + 1, sizeof(float));
        m->M[l] = dsmmi_malloc(ctx, (size_t)(nloc * m->width[l + 1]) + 1, sizeof(float));
        m->Z[l] = dsmmi_malloc(ctx, (size_t)(nloc * m->width[l + 1]) + 1, sizeof(float));
        if (l > 0) m->Hd[l] = dsmmi_malloc(ctx, (size_t)(nloc * m->width[l]) + 1, sizeof(float));
        DSMM_CHECK(ctx,
                   m->W[l] && m->dW[l] && m->m[l] && m->v[l] && m->M[l] && m->Z[l] &&
                       (l == 0 || m->Hd[l]),
                   DSMM_ERR_NOMEM, "gcn: layer %d (%lld x %lld)", l, (long long)m->width[l],
                   (long long)m->width[l + 1]);
        dsmmi_gcn_glorot(p->seed, l, m->width[l], m->width[l + 1], m->W[l]);
    }
    DSMM_CHECK(ctx, wall <= (size_t)INT32_MAX, DSMM_ERR_DIM, "gcn: %zu weights (at most 2^31 - 1)",
               wall);
    m->g1 = dsmmi_malloc(ctx, (size_t)(nloc * wmax) + 1, sizeof(float));
    m->g2 = dsmmi_malloc(ctx, (size_t)(nloc * wmax) + 1, sizeof(float));
    m->red = dsmmi_malloc(ctx, wall + 1, sizeof(double));
    DSMM_CHECK(ctx, m->g1 && m->g2 && m->red, DSMM_ERR_NOMEM, "gcn: gradient buffers");
    if (d->kind == DSMM_GCN_FEATURES_FILE) DSMM_TRY(dsmm_csr_copy(ctx, d->X, DSMM_FLOAT, &m->Xd));
    if (d->kind == DSMM_GCN_FEATURES_RANDOM) {
        m->Xrd = dsmmi_malloc(ctx, (size_t)(nloc * d->nfeat) + 1, sizeof(float));
        DSMM_CHECK(ctx, m->Xrd != NULL, DSMM_ERR_NOMEM, "gcn: random features");
    }
cleanup:
    if (st != DSMM_OK) dsmmi_gcn_model_free(ctx, m);
    return st;
}

// One-hot features: the one nonzero of row u of X is in column u.
static float onehot_scale(const dsmmi_gcn_model *m, int epoch, dsmm_idx u, uint64_t thr, float keep)
{
    if (thr == 0) return 1.0f;
    return dsmmi_gcn_dropped(dsmmi_gcn_drop_stream(m->p.seed, epoch, 0, u), u, thr) ? 0.0f : keep;
}

// M_0 = dropout(X) * W_0.
static dsmm_status first_layer(dsmm_ctx *ctx, dsmmi_gcn_model *m, int epoch, double rate)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    uint64_t seed = m->p.seed, thr = dsmmi_gcn_drop_threshold(rate);
    float keep = (float)(1.0 / (1.0 - rate));
    dsmm_idx w1 = m->width[1];
    float *M = m->M[0];
    switch (d->kind) {
    case DSMM_GCN_FEATURES_FILE: {
        const float *x = d->X->val;
        float *xd = m->Xd->val;
        const dsmm_idx *col = d->X->colidx; // 64-bit: built so in gcn_data.c
        for (dsmm_idx r = 0; r < d->nloc; r++) {
            dsmm_idx k0 = d->X->rowptr[r], k1 = d->X->rowptr[r + 1];
            if (thr == 0) {
                memcpy(xd + k0, x + k0, (size_t)(k1 - k0) * sizeof *xd);
                continue;
            }
            uint64_t s = dsmmi_gcn_drop_stream(seed, epoch, 0, d->vertex[r]);
            for (dsmm_idx k = k0; k < k1; k++)
                xd[k] = dsmmi_gcn_dropped(s, col[k], thr) ? 0.0f : x[k] * keep;
        }
        dsmm_dense W = view(ctx, m->width[0], w1, m->W[0]), C = view(ctx, d->nloc, w1, M);
        DSMM_TRY(dsmm_csr_spmm(ctx, m->Xd, &W, &C, NULL, NULL));
        m->flops += 2.0 * (double)m->Xd->nnz * (double)w1;
        break;
    }
    case DSMM_GCN_FEATURES_ONEHOT: // one product per entry of M
        m->flops += (double)d->nloc * (double)w1;
        for (dsmm_idx r = 0; r < d->nloc; r++) {
            dsmm_idx u = d->vertex[r];
            float f = onehot_scale(m, epoch, u, thr, keep);
            for (dsmm_idx j = 0; j < w1; j++) M[r * w1 + j] = f * m->W[0][u * w1 + j];
        }
        break;
    case DSMM_GCN_FEATURES_RANDOM: {
        dsmm_idx F = d->nfeat;
        for (dsmm_idx r = 0; r < d->nloc; r++) {
            const float *x = d->Xr + r * F;
            float *xd = m->Xrd + r * F;
            if (thr == 0) {
                memcpy(xd, x, (size_t)F * sizeof *xd);
                continue;
            }
            uint64_t s = dsmmi_gcn_drop_stream(seed, epoch, 0, d->vertex[r]);
            for (dsmm_idx j = 0; j < F; j++)
                xd[j] = dsmmi_gcn_dropped(s, j, thr) ? 0.0f : x[j] * keep;
        }
        gemm(m, 0, 0, d->nloc, w1, F, m->Xrd, F, m->W[0], w1, M, w1);
        break;
    }
    }
cleanup:
    return st;
}

dsmm_status dsmmi_gcn_forward(dsmm_ctx *ctx, dsmmi_gcn_model *m, int epoch, int train)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    double rate = train ? m->p.dropout : 0.0;
    uint64_t thr = dsmmi_gcn_drop_threshold(rate);
    float keep = (float)(1.0 / (1.0 - rate));
    m->train = train;
    m->epoch = epoch;
    DSMM_TRY(first_layer(ctx, m, epoch, rate));
    DSMM_TRY(aggregate(ctx, m, m->width[1], m->M[0], m->Z[0]));
    for (int l = 1; l < m->L; l++) {
        dsmm_idx w = m->width[l], w1 = m->width[l + 1];
        float *H = m->Hd[l];
        const float *Z = m->Z[l - 1];
        if (thr == 0) {
            dsmmi_gcn_relu(Z, d->nloc * w, H);
        } else {
            for (dsmm_idx r = 0; r < d->nloc; r++) {
                uint64_t s = dsmmi_gcn_drop_stream(m->p.seed, epoch, l, d->vertex[r]);
                for (dsmm_idx j = 0; j < w; j++) {
                    float z = Z[r * w + j];
                    H[r * w + j] = z > 0.0f && !dsmmi_gcn_dropped(s, j, thr) ? z * keep : 0.0f;
                }
            }
        }
        gemm(m, 0, 0, d->nloc, w1, w, H, w, m->W[l], w1, m->M[l], w1);
        DSMM_TRY(aggregate(ctx, m, w1, m->M[l], m->Z[l]));
    }
cleanup:
    return st;
}

dsmm_status dsmmi_gcn_loss(dsmm_ctx *ctx, dsmmi_gcn_model *m, int grad, double *loss)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    double s = dsmmi_gcn_xent(m->Z[m->L - 1], d->nloc, m->width[m->L], d->label, d->split,
                              1.0 / (double)d->ntrain, grad ? m->g1 : NULL);
    DSMM_TRY(dsmmi_allreduce_f64(ctx, &s, 1, '+'));
    double w2 = 0.0;
    size_t n0 = wsize(m, 0);
    for (size_t i = 0; i < n0; i++) w2 += (double)m->W[0][i] * (double)m->W[0][i];
    *loss = s / (double)d->ntrain + 0.5 * m->p.weight_decay * w2;
cleanup:
    return st;
}

// dW_0 = dropout(X)^T * dM.
static dsmm_status first_grad(dsmm_ctx *ctx, dsmmi_gcn_model *m, const float *dM)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    dsmm_idx w1 = m->width[1];
    float *dW = m->dW[0];
    double rate = m->train ? m->p.dropout : 0.0;
    switch (d->kind) {
    case DSMM_GCN_FEATURES_FILE: {
        dsmm_spmm_opts o;
        dsmm_spmm_opts_init(&o);
        o.transpose_a = 1;
        dsmm_dense B = view(ctx, d->nloc, w1, (float *)dM), C = view(ctx, m->width[0], w1, dW);
        DSMM_TRY(dsmm_csr_spmm(ctx, m->Xd, &B, &C, &o, NULL));
        m->flops += 2.0 * (double)m->Xd->nnz * (double)w1;
        break;
    }
    case DSMM_GCN_FEATURES_ONEHOT: {
        m->flops += 2.0 * (double)d->nloc * (double)w1;
        memset(dW, 0, wsize(m, 0) * sizeof *dW);
        uint64_t thr = dsmmi_gcn_drop_threshold(rate);
        float keep = (float)(1.0 / (1.0 - rate));
        for (dsmm_idx r = 0; r < d->nloc; r++) {
            dsmm_idx u = d->vertex[r];
            float f = onehot_scale(m, m->epoch, u, thr, keep);
            for (dsmm_idx j = 0; j < w1; j++) dW[u * w1 + j] += f * dM[r * w1 + j];
        }
        break;
    }
    case DSMM_GCN_FEATURES_RANDOM:
        gemm(m, 1, 0, d->nfeat, w1, d->nloc, m->Xrd, d->nfeat, dM, w1, dW, w1);
        break;
    }
cleanup:
    return st;
}

dsmm_status dsmmi_gcn_backward(dsmm_ctx *ctx, dsmmi_gcn_model *m)
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    double rate = m->train ? m->p.dropout : 0.0;
    float *dZ = m->g1, *dM = m->g2;
    for (int l = m->L - 1; l >= 0; l--) {
        dsmm_idx w = m->width[l], w1 = m->width[l + 1];
        DSMM_TRY(aggregate(ctx, m, w1, dZ, dM));
        if (l == 0) {
            DSMM_TRY(first_grad(ctx, m, dM));
            break;
        }
        gemm(m, 1, 0, w, w1, d->nloc, m->Hd[l], w, dM, w1, m->dW[l], w1);
        gemm(m, 0, 1, d->nloc, w, w1, dM, w1, m->W[l], w1, dZ, w);
        // Hd = relu(Z) * s with s 0 or 1 / (1 - rate): Hd != 0 exactly where Z > 0 and the
        // entry was kept (s >= 1, so no underflow), and there dHd / dZ = s.
        const float *H = m->Hd[l];
        float keep = (float)(1.0 / (1.0 - rate));
        for (dsmm_idx q = 0; q < d->nloc * w; q++) dZ[q] = H[q] != 0.0f ? dZ[q] * keep : 0.0f;
    }
    // One all-reduce for every layer's gradient.
    size_t q = 0;
    for (int l = 0; l < m->L; l++)
        for (size_t i = 0; i < wsize(m, l); i++) m->red[q++] = m->dW[l][i];
    DSMM_TRY(dsmmi_allreduce_f64(ctx, m->red, (int)q, '+'));
    q = 0;
    for (int l = 0; l < m->L; l++)
        for (size_t i = 0; i < wsize(m, l); i++, q++)
            m->dW[l][i] =
                (float)(m->red[q] + (l == 0 ? m->p.weight_decay * (double)m->W[0][i] : 0.0));
cleanup:
    return st;
}

void dsmmi_gcn_step(dsmmi_gcn_model *m)
{
    m->step++;
    for (int l = 0; l < m->L; l++)
        dsmmi_gcn_adam(m->W[l], m->dW[l], m->m[l], m->v[l], (dsmm_idx)wsize(m, l), m->p.lr,
                       m->step);
}

dsmm_status dsmmi_gcn_accuracy(dsmm_ctx *ctx, dsmmi_gcn_model *m, double acc[3])
{
    dsmm_status st = DSMM_OK;
    const dsmmi_gcn_data *d = m->d;
    dsmmi_gcn_correct(m->Z[m->L - 1], d->nloc, m->width[m->L], d->label, d->split, acc);
    DSMM_TRY(dsmmi_allreduce_f64(ctx, acc, 3, '+'));
    dsmm_idx cnt[3] = {d->ntrain, d->nval, d->ntest};
    for (int s = 0; s < 3; s++) acc[s] = cnt[s] > 0 ? acc[s] / (double)cnt[s] : 0.0;
cleanup:
    return st;
}
