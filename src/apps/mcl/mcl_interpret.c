// src/apps/mcl/mcl_interpret.c: the limit matrix into clusters, by mcl's rules (interpret.c
// of mcl 22-282): each column keeps its dominant entries (the DAG), attractors are vertices
// whose DAG column holds themselves, attractor systems are the connected components of the
// attractors' DAG made symmetric, ordered by size then smallest vertex; every other vertex
// joins the first (lowest numbered) system it reaches along DAG edges; vertices reaching none
// form one more cluster; clusters are then ordered by size, ties by smallest member.
// Distributed: every rank holds the DAG columns of its own rows only; components and reach
// are found by min-label propagation, each rank iterating its edges to a local fixpoint and
// then an all-reduce of the n-long label vector, until no label changes (no matrix gather).
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"

#define NONE INT64_MAX

// DAG column of a limit column, in place (mclDag then mcl's stochastic cut at 1/(n+1)).
static dsmm_idx dag_column(int32_t c, int32_t *idx, float *val, dsmm_idx n)
{
    double self = 0.0, mx = -3.4028234663852886e38;
    for (dsmm_idx k = 0; k < n; k++) {
        if (idx[k] == c) self = (double)val[k];
        if ((double)val[k] > mx) mx = (double)val[k];
    }
    double bar = self < mx ? 0.999 * self + 0.001 * mx : self / 1.01;
    dsmm_idx m = 0;
    double s = 0.0;
    for (dsmm_idx k = 0; k < n; k++)
        if ((double)val[k] >= bar) {
            idx[m] = idx[k];
            val[m] = val[k];
            s += (double)val[k];
            m++;
        }
    if (s != 0.0)
        for (dsmm_idx k = 0; k < m; k++) val[k] = (float)((double)val[k] / s);
    double b = 1.0 / (double)(m + 1);
    dsmm_idx q = 0;
    for (dsmm_idx k = 0; k < m; k++)
        if ((double)val[k] >= b) {
            idx[q] = idx[k];
            val[q] = val[k];
            q++;
        }
    return q;
}

// All-reduces v (n entries, chunked below INT_MAX) with op; *changed: some entry moved.
static dsmm_status reduce_vec(dsmm_ctx *ctx, int64_t *v, dsmm_idx n, char op)
{
    dsmm_status st = DSMM_OK;
    const dsmm_idx chunk = (dsmm_idx)1 << 26;
    for (dsmm_idx lo = 0; lo < n; lo += chunk) {
        dsmm_idx len = n - lo < chunk ? n - lo : chunk;
        DSMM_TRY(dsmmi_allreduce_i64(ctx, v + lo, (int)len, op));
    }
cleanup:
    return st;
}

typedef struct comp {
    int64_t size, first, id;
} comp;

static int cmp_comp(const void *a, const void *b)
{
    const comp *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

dsmm_status dsmmi_mcl_interpret(dsmm_ctx *ctx, const dsmmi_mcl_mat *L, dsmm_idx row0, dsmm_idx N,
                                dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mcl_mat D = {0};
    int64_t *attr = NULL, *lab = NULL, *rmin = NULL, *rmax = NULL, *cid = NULL, *cluster = NULL;
    comp *comps = NULL;
    int64_t ncomp = 0, nattr = 0, overlap = 0, garbage = 0;

    // 1. DAG of the local columns.
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, &D, L->nrows, L->nnz));
    dsmm_idx q = 0;
    for (dsmm_idx i = 0; i < L->nrows; i++) {
        dsmm_idx n = L->rowptr[i + 1] - L->rowptr[i];
        memcpy(D.col + q, L->col + L->rowptr[i], (size_t)n * sizeof *D.col);
        memcpy(D.val + q, L->val + L->rowptr[i], (size_t)n * sizeof *D.val);
        q += dag_column((int32_t)(row0 + i), D.col + q, D.val + q, n);
        D.rowptr[i + 1] = q;
    }
    D.nnz = q;

    // 2. Attractors (replicated flags).
    attr = dsmmi_calloc(ctx, (size_t)N, sizeof *attr);
    lab = dsmmi_malloc(ctx, (size_t)N, sizeof *lab);
    rmin = dsmmi_malloc(ctx, (size_t)N, sizeof *rmin);
    rmax = dsmmi_malloc(ctx, (size_t)N, sizeof *rmax);
    cid = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *cid);
    cluster = dsmmi_malloc(NULL, (size_t)N, sizeof *cluster);
    DSMM_CHECK(ctx, attr && lab && rmin && rmax && cid && cluster, DSMM_ERR_NOMEM,
               "mcl: interpretation vectors of %lld vertices", (long long)N);
    for (dsmm_idx i = 0; i < D.nrows; i++)
        for (dsmm_idx k = D.rowptr[i]; k < D.rowptr[i + 1]; k++)
            if (D.col[k] == row0 + i) attr[row0 + i] = 1;
    DSMM_TRY(reduce_vec(ctx, attr, N, '+'));

    // 3. Attractor systems: min-label propagation over attractor-attractor DAG edges.
    for (dsmm_idx v = 0; v < N; v++) lab[v] = attr[v] ? v : NONE;
    for (;;) {
        int64_t moved = 0;
        for (int local = 1; local;) {
            local = 0;
            for (dsmm_idx i = 0; i < D.nrows; i++) {
                dsmm_idx a = row0 + i;
                if (!attr[a]) continue;
                for (dsmm_idx k = D.rowptr[i]; k < D.rowptr[i + 1]; k++) {
                    dsmm_idx r = D.col[k];
                    if (!attr[r] || r == a) continue;
                    int64_t m = lab[a] < lab[r] ? lab[a] : lab[r];
                    if (lab[a] != m || lab[r] != m) {
                        lab[a] = lab[r] = m;
                        local = 1;
                        moved = 1;
                    }
                }
            }
            // Pointer jumping: a label is a vertex whose label may be smaller still.
            for (dsmm_idx v = 0; v < N; v++)
                if (lab[v] != NONE && lab[lab[v]] < lab[v]) {
                    lab[v] = lab[lab[v]];
                    local = 1;
                    moved = 1;
                }
        }
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &moved, 1, '>'));
        if (!moved) break;
        DSMM_TRY(reduce_vec(ctx, lab, N, '<'));
    }
    // Order the systems: by attractor count, then by their smallest vertex (the label).
    for (dsmm_idx v = 0; v < N; v++) cid[v] = 0;
    for (dsmm_idx v = 0; v < N; v++)
        if (attr[v]) {
            nattr++;
            cid[lab[v]]++;
        }
    comps = dsmmi_malloc(ctx, (size_t)(nattr > 0 ? nattr : 1) + 1, sizeof *comps);
    DSMM_CHECK(ctx, comps != NULL, DSMM_ERR_NOMEM, "mcl: %lld attractor systems", (long long)nattr);
    for (dsmm_idx v = 0; v < N; v++)
        if (attr[v] && lab[v] == v) comps[ncomp++] = (comp){cid[v], v, 0};
    qsort(comps, (size_t)ncomp, sizeof *comps, cmp_comp);
    for (int64_t c = 0; c < ncomp; c++) cid[comps[c].first] = c; // cid of a root: its rank
    for (dsmm_idx v = 0; v < N; v++) rmin[v] = rmax[v] = attr[v] ? cid[lab[v]] : NONE;
    for (dsmm_idx v = 0; v < N; v++)
        if (rmax[v] == NONE) rmax[v] = -1;

    // 4. Reach: the lowest and highest system reachable from each vertex along DAG edges.
    for (;;) {
        int64_t moved = 0;
        for (int local = 1; local;) {
            local = 0;
            for (dsmm_idx i = 0; i < D.nrows; i++) {
                dsmm_idx d = row0 + i;
                for (dsmm_idx k = D.rowptr[i]; k < D.rowptr[i + 1]; k++) {
                    dsmm_idx x = D.col[k];
                    if (rmin[x] < rmin[d]) {
                        rmin[d] = rmin[x];
                        local = moved = 1;
                    }
                    if (rmax[x] > rmax[d]) {
                        rmax[d] = rmax[x];
                        local = moved = 1;
                    }
                }
            }
        }
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &moved, 1, '>'));
        if (!moved) break;
        DSMM_TRY(reduce_vec(ctx, rmin, N, '<'));
        DSMM_TRY(reduce_vec(ctx, rmax, N, '>'));
    }

    // 5. Cut overlap to the first system; the unreached go to one extra cluster; order.
    for (int64_t c = 0; c <= ncomp; c++) comps[c] = (comp){0, NONE, c};
    for (dsmm_idx v = 0; v < N; v++) {
        int64_t c = attr[v] ? cid[lab[v]] : rmin[v];
        if (!attr[v] && c != NONE && rmax[v] != c) overlap++;
        if (c == NONE) {
            c = ncomp;
            garbage++;
        }
        cluster[v] = c;
        comps[c].size++;
        if (v < comps[c].first) comps[c].first = v;
    }
    int64_t nc = 0;
    for (int64_t c = 0; c <= ncomp; c++)
        if (comps[c].size > 0) comps[nc++] = comps[c];
    qsort(comps, (size_t)nc, sizeof *comps, cmp_comp);
    for (int64_t c = 0; c < nc; c++) cid[comps[c].id] = c; // old number -> output order
    for (dsmm_idx v = 0; v < N; v++) cluster[v] = cid[cluster[v]];

    res->n = N;
    res->cluster = cluster;
    cluster = NULL;
    res->nclusters = nc;
    res->attractors = nattr;
    res->overlap = overlap;
    res->garbage = garbage;
cleanup:
    dsmmi_mcl_mat_free(ctx, &D);
    dsmmi_free(ctx, attr);
    dsmmi_free(ctx, lab);
    dsmmi_free(ctx, rmin);
    dsmmi_free(ctx, rmax);
    dsmmi_free(ctx, cid);
    dsmmi_free(ctx, comps);
    dsmmi_free(NULL, cluster);
    return st;
}
