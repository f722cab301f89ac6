// src/apps/gcn/gcn_math.c: the dense math of GCN training: products on OpenBLAS (CBLAS,
// float32), Glorot initialisation and dropout masks from counter-based hashes of global
// indices (so every rank count and every vertex order draws the same numbers), ReLU, softmax
// cross-entropy with its gradient, and Adam.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
// After dsmm's headers: OpenBLAS's cblas.h includes <complex.h>, whose macro I would break
// the parameters named I there.
#include <cblas.h>
#include <dlfcn.h>

// OpenBLAS is loaded when the GCN first needs it (dlopen), not linked: mapping it and its
// Fortran runtime at start cost every other command about 3 MB resident (docs/gcn.md).
// Its own thread calls are declared here too because the cblas.h found may be the generic one
// of update-alternatives, which lacks them; the library loaded is OpenBLAS.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

static struct {
    int tried;
    void *lib;
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(openblas_set_num_threads) *set_threads;
    __typeof__(openblas_get_num_threads) *get_threads;
    char why[512];
} blas;

// The library CMake found (its real path), then OpenBLAS's soname through the loader's path;
// or only the file the environment's DSMM_OPENBLAS names.
#ifndef DSMM_OPENBLAS_PATH
#define DSMM_OPENBLAS_PATH "libopenblas.so.0"
#endif

dsmm_status dsmmi_gcn_blas_load(dsmm_ctx *ctx)
{
    dsmm_status st = DSMM_OK;
    int64_t failed;
    if (!blas.tried) {
        const char *names[] = {DSMM_OPENBLAS_PATH, "libopenblas.so.0", "libopenblas.so"};
        size_t nn = sizeof names / sizeof names[0];
        const char *env = getenv("DSMM_OPENBLAS");
        if (env != NULL && env[0] != 0) {
            names[0] = env;
            nn = 1;
        }
        const char *got = NULL;
        blas.tried = 1;
        for (size_t i = 0; i < nn && blas.lib == NULL; i++) {
            blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
            got = names[i];
            if (blas.lib == NULL && i == 0) {
                const char *e = dlerror();
                snprintf(blas.why, sizeof blas.why, "%s", e != NULL ? e : names[i]);
            }
        }
        if (blas.lib != NULL) {
            // POSIX: a void * from dlsym converts to a function pointer.
            *(void **)&blas.sgemm = dlsym(blas.lib, "cblas_sgemm");
            *(void **)&blas.set_threads = dlsym(blas.lib, "openblas_set_num_threads");
            *(void **)&blas.get_threads = dlsym(blas.lib, "openblas_get_num_threads");
            if (blas.sgemm == NULL || blas.set_threads == NULL || blas.get_threads == NULL) {
                snprintf(blas.why, sizeof blas.why,
                         "%s lacks cblas_sgemm or openblas_set_num_threads", got);
                dlclose(blas.lib);
                blas.lib = NULL;
                blas.sgemm = NULL;
            }
        }
    }
    // All ranks go on only if all could load it, so none is left waiting in a collective.
    failed = blas.sgemm == NULL;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &failed, 1, '>'));
    DSMM_CHECK(ctx, blas.sgemm != NULL, DSMM_ERR_UNSUPPORTED,
               "gcn: OpenBLAS could not be loaded (%s; apt-get install libopenblas0)", blas.why);
    DSMM_CHECK(ctx, failed == 0, DSMM_ERR_UNSUPPORTED,
               "gcn: OpenBLAS could not be loaded on another rank");
cleanup:
    return st;
}

int dsmmi_gcn_blas_threads(int n)
{
    if (blas.sgemm == NULL || n < 1) return -1;
    int old = blas.get_threads();
    blas.set_threads(n);
    return old;
}

void dsmmi_gcn_gemm(int ta, int tb, dsmm_idx m, dsmm_idx n, dsmm_idx k, const float *A,
                    dsmm_idx lda, const float *B, dsmm_idx ldb, float *C, dsmm_idx ldc)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (dsmm_idx i = 0; i < m; i++) memset(C + i * ldc, 0, (size_t)n * sizeof *C);
        return;
    }
    blas.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
               (int)m, (int)n, (int)k, 1.0f, A, (int)lda, B, (int)ldb, 0.0f, C, (int)ldc);
}

// Streams of the hashes: one tag per use, so no two uses share numbers.
#define TAG_INIT    0x676e2d696e6974ULL // "gn-init"
#define TAG_DROP    0x676e2d64726f70ULL // "gn-drop"
#define TAG_FEATURE 0x676e2d66656174ULL // "gn-feat"

static float unit(uint64_t u) // [0, 1), 24 bits
{
    return (float)(u >> 40) * 0x1.0p-24f;
}

void dsmmi_gcn_glorot(uint64_t seed, int layer, dsmm_idx fan_in, dsmm_idx fan_out, float *W)
{
    double r = sqrt(6.0 / (double)(fan_in + fan_out));
    for (dsmm_idx i = 0; i < fan_in; i++)
        for (dsmm_idx j = 0; j < fan_out; j++) {
            uint64_t u = dsmm_rng_at(seed, TAG_INIT + (uint64_t)layer, (uint64_t)(i * fan_out + j));
            W[i * fan_out + j] = (float)((2.0 * (double)unit(u) - 1.0) * r);
        }
}

uint64_t dsmmi_gcn_drop_stream(uint64_t seed, int epoch, int layer, dsmm_idx vertex)
{
    return dsmm_rng_at(seed ^ TAG_DROP, (uint64_t)epoch * 256u + (uint64_t)layer, (uint64_t)vertex);
}

uint64_t dsmmi_gcn_drop_threshold(double rate)
{
    // unit(u) < rate  <=>  (u >> 40) < rate * 2^24  <=>  (u >> 40) < ceil(rate * 2^24)
    return rate <= 0.0 ? 0 : (uint64_t)ceil(rate * 0x1.0p24);
}

float dsmmi_gcn_random_feature(uint64_t seed, dsmm_idx vertex, dsmm_idx col)
{
    return unit(dsmm_rng_at(seed ^ TAG_FEATURE, (uint64_t)vertex, (uint64_t)col));
}

void dsmmi_gcn_relu(const float *Z, dsmm_idx n, float *H)
{
    for (dsmm_idx i = 0; i < n; i++) H[i] = Z[i] > 0.0f ? Z[i] : 0.0f;
}

double dsmmi_gcn_xent(const float *Z, dsmm_idx nrows, dsmm_idx c, const int32_t *label,
                      const unsigned char *split, double scale, float *dZ)
{
    double loss = 0.0;
    for (dsmm_idx r = 0; r < nrows; r++) {
        const float *z = Z + r * c;
        float *g = dZ ? dZ + r * c : NULL;
        if (!(split[r] & DSMMI_GCN_TRAIN)) {
            if (g) memset(g, 0, (size_t)c * sizeof *g);
            continue;
        }
        double mx = z[0], s = 0.0;
        for (dsmm_idx j = 1; j < c; j++)
            if (z[j] > mx) mx = z[j];
        for (dsmm_idx j = 0; j < c; j++) s += exp((double)z[j] - mx);
        double lse = mx + log(s);
        loss += lse - (double)z[label[r]];
        if (g)
            for (dsmm_idx j = 0; j < c; j++)
                g[j] = (float)(scale * (exp((double)z[j] - lse) - (j == label[r] ? 1.0 : 0.0)));
    }
    return loss;
}

void dsmmi_gcn_correct(const float *Z, dsmm_idx nrows, dsmm_idx c, const int32_t *label,
                       const unsigned char *split, double count[3])
{
    count[0] = count[1] = count[2] = 0.0;
    for (dsmm_idx r = 0; r < nrows; r++) {
        if (!split[r]) continue;
        const float *z = Z + r * c;
        dsmm_idx best = 0; // the first maximum, as numpy's argmax
        for (dsmm_idx j = 1; j < c; j++)
            if (z[j] > z[best]) best = j;
        int hit = best == label[r];
        for (int s = 0; s < 3; s++)
            if (split[r] & (1 << s)) count[s] += hit;
    }
}

void dsmmi_gcn_adam(float *W, const float *g, float *m, float *v, dsmm_idx n, double lr, int t)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double c1 = 1.0 - pow(b1, t), c2 = 1.0 - pow(b2, t);
    for (dsmm_idx i = 0; i < n; i++) {
        double gi = g[i];
        double mi = b1 * m[i] + (1.0 - b1) * gi, vi = b2 * v[i] + (1.0 - b2) * gi * gi;
        m[i] = (float)mi;
        v[i] = (float)vi;
        W[i] = (float)((double)W[i] - lr * (mi / c1) / (sqrt(vi / c2) + eps));
    }
}
