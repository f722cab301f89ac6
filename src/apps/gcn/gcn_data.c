// src/apps/gcn/gcn_data.c: a GCN dataset on this rank: the adjacency read in parallel and
// turned into Ahat = D^-1/2 (A + I) D^-1/2 (pattern of A made symmetric, values 1, I added so
// an existing loop becomes 2 as Kipf's adj + eye, D the row sums; degrees by one all-reduce),
// planned for dsmm_cola_spmm; the labels and the split read whole on every rank (small text
// files) and checked; the features of this rank's panel rows.
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"

#define MAX_CLASS 65535 // labels above this are taken for a corrupt file

static dsmm_status path_of(dsmm_ctx *ctx, const char *prefix, const char *suffix, char *out,
                           size_t cap)
{
    dsmm_status st = DSMM_OK;
    int len = snprintf(out, cap, "%s%s", prefix, suffix);
    DSMM_CHECK(ctx, len > 0 && (size_t)len < cap, DSMM_ERR_ARG, "gcn: dataset prefix too long: %s",
               prefix);
cleanup:
    return st;
}

// The next line of src from *pos: [*b, *e) without its newline; *pos moves past it. Returns 0
// at the end of the buffer.
static int next_line(const dsmmi_source *src, size_t *pos, const char **b, const char **e)
{
    if (*pos >= src->len) return 0;
    const char *p = src->buf + *pos, *end = src->buf + src->len;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *b = p;
    *e = nl ? nl : end;
    *pos = (size_t)((nl ? nl + 1 : end) - src->buf);
    if (*e > *b && (*e)[-1] == '\r') (*e)--;
    return 1;
}

static int blank(const char *b, const char *e)
{
    for (; b < e; b++)
        if (!isspace((unsigned char)*b)) return 0;
    return 1;
}

// The integer at *p (within [*p, e)), skipping blanks before it; 0 when none, -1 when malformed.
static int next_int(const char **p, const char *e, long long *v)
{
    const char *q = *p;
    while (q < e && isspace((unsigned char)*q)) q++;
    if (q == e) return 0;
    char buf[32];
    size_t n = 0;
    while (q < e && !isspace((unsigned char)*q) && n + 1 < sizeof buf) buf[n++] = *q++;
    buf[n] = '\0';
    if (q < e && !isspace((unsigned char)*q)) return -1; // token too long
    char *end = NULL;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (end == buf || *end != '\0' || errno) return -1;
    *v = x;
    *p = q;
    return 1;
}

// Labels: one integer per line, n lines (blank lines only at the end).
static dsmm_status read_labels(dsmm_ctx *ctx, const char *path, dsmm_idx n, const char *adj,
                               int32_t *label, dsmm_idx *nclasses)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    size_t pos = 0;
    const char *b, *e;
    dsmm_idx count = 0, line = 0, blank_at = 0, top = -1;
    while (next_line(&src, &pos, &b, &e)) {
        line++;
        if (blank(b, e)) {
            if (!blank_at) blank_at = line;
            continue;
        }
        DSMM_CHECK(ctx, !blank_at, DSMM_ERR_FORMAT, "%s:%lld: empty line (one label per line)",
                   path, (long long)blank_at);
        long long v = 0;
        const char *p = b;
        int got = next_int(&p, e, &v);
        DSMM_CHECK(ctx, got == 1 && blank(p, e), DSMM_ERR_FORMAT,
                   "%s:%lld: '%.*s' is not one integer label", path, (long long)line,
                   (int)(e - b > 40 ? 40 : e - b), b);
        DSMM_CHECK(ctx, v >= -1 && v <= MAX_CLASS, DSMM_ERR_FORMAT,
                   "%s:%lld: label %lld out of range -1..%d", path, (long long)line, v, MAX_CLASS);
        DSMM_CHECK(ctx, count < n, DSMM_ERR_DIM, "%s: more than %lld labels, but %s has %lld nodes",
                   path, (long long)n, adj, (long long)n);
        label[count++] = (int32_t)v;
        if (v > top) top = v;
    }
    DSMM_CHECK(ctx, count == n, DSMM_ERR_DIM, "%s: %lld labels, but %s has %lld nodes", path,
               (long long)count, adj, (long long)n);
    *nclasses = top + 1;
cleanup:
    dsmmi_source_free(ctx, &src);
    return st;
}

// Split: lines "train ids", "val ids", "test ids" (0-based); bits into flag[n].
static dsmm_status read_split(dsmm_ctx *ctx, const char *path, dsmm_idx n, const int32_t *label,
                              const char *lpath, unsigned char *flag, dsmm_idx count[3])
{
    static const char *names[3] = {"train", "val", "test"};
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    size_t pos = 0;
    const char *b, *e;
    dsmm_idx line = 0;
    int list = 0;
    while (list < 3 && next_line(&src, &pos, &b, &e)) {
        line++;
        if (blank(b, e)) continue;
        const char *p = b;
        while (p < e && isspace((unsigned char)*p)) p++;
        size_t len = strlen(names[list]);
        DSMM_CHECK(ctx,
                   (size_t)(e - p) >= len && memcmp(p, names[list], len) == 0 &&
                       (p + len == e || isspace((unsigned char)p[len])),
                   DSMM_ERR_FORMAT, "%s:%lld: expected a line starting with '%s'", path,
                   (long long)line, names[list]);
        p += len;
        unsigned char bit = (unsigned char)(1u << list);
        count[list] = 0;
        for (;;) {
            long long v = 0;
            int got = next_int(&p, e, &v);
            if (got == 0) break;
            DSMM_CHECK(ctx, got == 1, DSMM_ERR_FORMAT,
                       "%s:%lld: a node id in the %s list is not "
                       "an integer",
                       path, (long long)line, names[list]);
            DSMM_CHECK(ctx, v >= 0 && v < n, DSMM_ERR_FORMAT,
                       "%s:%lld: node id %lld in the %s list out of range 0..%lld", path,
                       (long long)line, v, names[list], (long long)n - 1);
            DSMM_CHECK(ctx, !(flag[v] & bit), DSMM_ERR_FORMAT,
                       "%s:%lld: node %lld repeated in the %s list", path, (long long)line, v,
                       names[list]);
            DSMM_CHECK(ctx, label[v] >= 0, DSMM_ERR_FORMAT,
                       "%s:%lld: node %lld of the %s list has no label (-1 in %s)", path,
                       (long long)line, v, names[list], lpath);
            flag[v] |= bit;
            count[list]++;
        }
        list++;
    }
    DSMM_CHECK(ctx, list == 3, DSMM_ERR_FORMAT, "%s:%lld: no '%s' line (expected train, val, test)",
               path, (long long)line, names[list < 3 ? list : 2]);
    DSMM_CHECK(ctx, count[0] > 0, DSMM_ERR_ARG, "%s: the training set is empty", path);
cleanup:
    dsmmi_source_free(ctx, &src);
    return st;
}

// Ahat on a P x 1 grid (each rank whole rows, so its degrees are complete), planned.
static dsmm_status build_ahat(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_cola_opts *opts,
                              dsmm_idx *edges, dsmm_idx *local_nnz, dsmm_cola **plan)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *r = NULL, *c = NULL, *tr = NULL, *tc = NULL, k = 0, m = 0;
    double *v = NULL, *tv = NULL, *deg = NULL;
    dsmm_dist *S = NULL;
    int P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    dsmm_idx n = A->nrows;
    dsmm_idx *b = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *b);
    DSMM_CHECK(ctx, b != NULL, DSMM_ERR_NOMEM, "gcn: split bounds");
    dsmmi_equal_split(n, P, b);
    DSMM_TRY(dsmmi_dist_triples(ctx, A, &r, &c, &v, &k));
    m = 2 * k + (b[me + 1] - b[me]);
    tr = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tr);
    tc = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tc);
    tv = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *tv);
    DSMM_CHECK(ctx, tr && tc && tv, DSMM_ERR_NOMEM, "gcn: %lld adjacency entries", (long long)m);
    // Repeats merge by their maximum: the union of A and A^T with ones, a loop of A 2, and
    // the identity's 1 wherever A has no loop.
    int64_t loops = 0;
    m = 0;
    for (dsmm_idx q = 0; q < k; q++) {
        if (r[q] == c[q]) {
            tr[m] = tc[m] = r[q];
            tv[m++] = 2.0;
            loops++;
            continue;
        }
        tr[m] = r[q];
        tc[m] = c[q];
        tv[m++] = 1.0;
        tr[m] = c[q];
        tc[m] = r[q];
        tv[m++] = 1.0;
    }
    for (dsmm_idx i = b[me]; i < b[me + 1]; i++) {
        tr[m] = tc[m] = i;
        tv[m++] = 1.0;
    }
    r = dsmmi_free(ctx, r);
    c = dsmmi_free(ctx, c);
    v = dsmmi_free(ctx, v);
    DSMM_TRY(dsmmi_dist_from_triples(ctx, n, n, DSMM_FLOAT, m, tr, tc, tv, DSMM_DOUBLE,
                                     DSMM_DUP_MAX, "the adjacency", P, 1, &S));
    tr = dsmmi_free(ctx, tr);
    tc = dsmmi_free(ctx, tc);
    tv = dsmmi_free(ctx, tv);

    dsmm_csr *T = S->tile;
    dsmm_idx row0 = S->rb[S->grid->myrow];
    float *val = T->val;
    deg = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *deg);
    DSMM_CHECK(ctx, deg != NULL, DSMM_ERR_NOMEM, "gcn: %lld degrees", (long long)n);
    for (dsmm_idx i = 0; i < T->nrows; i++)
        for (dsmm_idx q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) deg[row0 + i] += val[q];
    DSMM_CHECK(ctx, n <= INT32_MAX, DSMM_ERR_DIM, "gcn: %lld nodes (at most 2^31 - 1)",
               (long long)n);
    DSMM_TRY(dsmmi_allreduce_f64(ctx, deg, (int)n, '+'));
    for (dsmm_idx i = 0; i < T->nrows; i++)
        for (dsmm_idx q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
            val[q] = (float)((double)val[q] / sqrt(deg[row0 + i] * deg[dsmm_csr_col(T, q)]));
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &loops, 1, '+'));
    *edges = S->nnz - n + loops;
    *local_nnz = T->nnz;
    DSMM_TRY(dsmm_cola_create(ctx, S, opts, plan));
cleanup:
    dsmm_dist_destroy(&S);
    dsmmi_free(ctx, b);
    dsmmi_free(ctx, r);
    dsmmi_free(ctx, c);
    dsmmi_free(ctx, v);
    dsmmi_free(ctx, tr);
    dsmmi_free(ctx, tc);
    dsmmi_free(ctx, tv);
    dsmmi_free(ctx, deg);
    return st;
}

// FILE features of the local rows, each row divided by its sum (Kipf's preprocess_features;
// zero rows stay zero). Every rank reads the whole file and keeps its rows: simple, and the
// features of the datasets this is meant for (Planetoid) are a few MB.
static dsmm_status read_features(dsmm_ctx *ctx, const char *path, const char *adj,
                                 dsmmi_gcn_data *d)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *F = NULL, *X = NULL;
    dsmm_read_opts ro;
    dsmm_read_opts_init(&ro);
    ro.keep_pattern = 1;
    DSMM_TRY(dsmm_read(ctx, path, &ro, &F, NULL, NULL));
    DSMM_CHECK(ctx, F->nrows == d->n, DSMM_ERR_DIM, "%s: %lld feature rows, but %s has %lld nodes",
               path, (long long)F->nrows, adj, (long long)d->n);
    dsmm_idx nnz = 0;
    for (dsmm_idx r = 0; r < d->nloc; r++) {
        dsmm_idx u = d->vertex[r];
        nnz += F->rowptr[u + 1] - F->rowptr[u];
    }
    DSMM_TRY(dsmm_csr_create(ctx, d->nloc, F->ncols, nnz, DSMM_FLOAT, &X));
    float *xv = X->val;
    dsmm_idx q = 0;
    for (dsmm_idx r = 0; r < d->nloc; r++) {
        dsmm_idx u = d->vertex[r];
        double s = 0.0;
        for (dsmm_idx k = F->rowptr[u]; k < F->rowptr[u + 1]; k++) s += dsmm_csr_value(F, k);
        double inv = s != 0.0 && isfinite(1.0 / s) ? 1.0 / s : 0.0;
        for (dsmm_idx k = F->rowptr[u]; k < F->rowptr[u + 1]; k++) {
            X->colidx[q] = dsmm_csr_col(F, k);
            xv[q++] = (float)(dsmm_csr_value(F, k) * inv);
        }
        X->rowptr[r + 1] = q;
    }
    X->nnz = q;
    X->sorted = F->sorted;
    d->nfeat = F->ncols;
    d->X = X;
    X = NULL;
cleanup:
    dsmm_csr_destroy(&F);
    dsmm_csr_destroy(&X);
    return st;
}

void dsmmi_gcn_data_free(dsmm_ctx *ctx, dsmmi_gcn_data *d)
{
    if (d == NULL) return;
    dsmm_cola_destroy(&d->plan);
    dsmmi_free(ctx, d->label);
    dsmmi_free(ctx, d->split);
    dsmm_csr_destroy(&d->X);
    dsmmi_free(ctx, d->Xr);
    memset(d, 0, sizeof *d);
}

dsmm_status dsmmi_gcn_data_load(dsmm_ctx *ctx, const char *prefix, const dsmm_gcn_params *p,
                                dsmmi_gcn_data *d)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    char adj[4096], feat[4096], lab[4096], spl[4096];
    dsmm_dist *A = NULL;
    int32_t *labels = NULL;
    unsigned char *flag = NULL;
    dsmm_idx count[3] = {0, 0, 0};

    memset(d, 0, sizeof *d);
    DSMM_TRY(path_of(ctx, prefix, ".adj.mtx.gz", adj, sizeof adj));
    DSMM_TRY(path_of(ctx, prefix, ".features.mtx.gz", feat, sizeof feat));
    DSMM_TRY(path_of(ctx, prefix, ".labels.txt.gz", lab, sizeof lab));
    DSMM_TRY(path_of(ctx, prefix, ".split.txt.gz", spl, sizeof spl));
    d->kind = p->features;

    dsmm_read_opts ro;
    dsmm_read_opts_init(&ro);
    ro.keep_pattern = 1;
    DSMM_TRY(dsmm_dist_read(ctx, adj, &ro, 0, 0, &A, NULL));
    DSMM_CHECK(ctx, A->nrows == A->ncols, DSMM_ERR_DIM,
               "%s: the adjacency is %lld x %lld, not square", adj, (long long)A->nrows,
               (long long)A->ncols);
    d->n = A->nrows;
    DSMM_CHECK(ctx, d->n > 0, DSMM_ERR_ARG, "%s: the graph has no nodes", adj);

    labels = dsmmi_malloc(ctx, (size_t)d->n, sizeof *labels);
    flag = dsmmi_calloc(ctx, (size_t)d->n, sizeof *flag);
    if (labels == NULL || flag == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "gcn: %lld labels",
                            (long long)d->n);
    if (local == DSMM_OK) local = read_labels(ctx, lab, d->n, adj, labels, &d->nclasses);
    if (local == DSMM_OK) local = read_split(ctx, spl, d->n, labels, lab, flag, count);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    d->ntrain = count[0];
    d->nval = count[1];
    d->ntest = count[2];

    DSMM_TRY(build_ahat(ctx, A, &p->cola, &d->edges, &d->ahat_nnz, &d->plan));
    dsmm_dist_destroy(&A);
    dsmm_idx row0 = 0;
    dsmm_cola_rows(d->plan, &row0, &d->nloc, &d->vertex);

    d->label = dsmmi_malloc(ctx, (size_t)d->nloc + 1, sizeof *d->label);
    d->split = dsmmi_malloc(ctx, (size_t)d->nloc + 1, sizeof *d->split);
    if (d->label == NULL || d->split == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "gcn: %lld local rows",
                            (long long)d->nloc);
    for (dsmm_idx r = 0; local == DSMM_OK && r < d->nloc; r++) {
        d->label[r] = labels[d->vertex[r]];
        d->split[r] = flag[d->vertex[r]];
    }
    if (local == DSMM_OK) {
        switch (p->features) {
        case DSMM_GCN_FEATURES_FILE:
            local = read_features(ctx, feat, adj, d);
            break;
        case DSMM_GCN_FEATURES_ONEHOT:
            d->nfeat = d->n;
            break;
        case DSMM_GCN_FEATURES_RANDOM:
            d->nfeat = p->random_dim;
            d->Xr = dsmmi_malloc(ctx, (size_t)(d->nloc * d->nfeat) + 1, sizeof *d->Xr);
            if (d->Xr == NULL) {
                local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                    "gcn: %lld x %lld random features", (long long)d->nloc,
                                    (long long)d->nfeat);
                break;
            }
            for (dsmm_idx r = 0; r < d->nloc; r++)
                for (dsmm_idx j = 0; j < d->nfeat; j++)
                    d->Xr[r * d->nfeat + j] = dsmmi_gcn_random_feature(p->seed, d->vertex[r], j);
            break;
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
cleanup:
    dsmm_dist_destroy(&A);
    dsmmi_free(ctx, labels);
    dsmmi_free(ctx, flag);
    if (st != DSMM_OK) dsmmi_gcn_data_free(ctx, d);
    return st;
}
