// src/apps/mcl/mcl_interpret.c: the limit matrix into clusters, by mcl's rules (interpret.c
// of mcl 22-282): each column keeps its dominant entries (the DAG), attractors are vertices
// whose DAG column holds themselves, attractor systems are the connected components of the
// attractors' DAG made symmetric, ordered by size then smallest vertex; every other vertex
// joins the first (lowest numbered) system it reaches along DAG edges; vertices reaching none
// form one more cluster. A vertex reaching several systems (overlap) is cut to the first, kept
// in all, or split out with the others that reach the same systems (-overlap); the clusters
// are then ordered as -sort says (by size by default, ties by their member lists).
// --force-connected / --check-connected: the connected components each cluster induces in
// the graph (dsmmi_mcl_connect).
// Distributed: every rank holds the DAG columns (and graph rows) of its own vertices only;
// components and reach are found by min-label propagation, each rank iterating its edges to a
// local fixpoint and then an all-reduce of the n-long label vector, until no label changes (no
// matrix gather). Only the DAG columns of the vertices in overlap (rare: mcl's manual calls
// them improbable) are shared with every rank, to find the systems each reaches.
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

// Min-label propagation: lab[a] = lab[b] for every local pair (pairs[2k], pairs[2k + 1]),
// until every component carries its smallest index (labels are indices into lab, or NONE for
// entries that take no part). Collective: ranks pass their local pairs; lab is replicated.
static dsmm_status min_label(dsmm_ctx *ctx, int64_t *lab, dsmm_idx n, const int64_t *pairs,
                             int64_t npairs)
{
    dsmm_status st = DSMM_OK;
    for (;;) {
        int64_t moved = 0;
        for (int local = 1; local;) {
            local = 0;
            for (int64_t k = 0; k < npairs; k++) {
                int64_t a = pairs[2 * k], b = pairs[2 * k + 1];
                int64_t m = lab[a] < lab[b] ? lab[a] : lab[b];
                if (lab[a] != m || lab[b] != m) {
                    lab[a] = lab[b] = m;
                    local = 1;
                    moved = 1;
                }
            }
            // Pointer jumping: a label is an entry whose label may be smaller still.
            for (dsmm_idx v = 0; v < n; v++)
                if (lab[v] != NONE && lab[lab[v]] < lab[v]) {
                    lab[v] = lab[lab[v]];
                    local = 1;
                    moved = 1;
                }
        }
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &moved, 1, '>'));
        if (!moved) break;
        DSMM_TRY(reduce_vec(ctx, lab, n, '<'));
    }
cleanup:
    return st;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
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

// A cluster's member list, for ordering.
typedef struct clist {
    const int64_t *m;
    int64_t len, id;
} clist;

// Element by element; a list that is a prefix of the other comes first.
static int cmp_lex(const void *a, const void *b)
{
    const clist *x = a, *y = b;
    for (int64_t k = 0; k < x->len && k < y->len; k++)
        if (x->m[k] != y->m[k]) return x->m[k] < y->m[k] ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

static int cmp_revsize(const void *a, const void *b)
{
    const clist *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return cmp_lex(a, b);
}

static int cmp_size(const void *a, const void *b)
{
    return cmp_revsize(b, a);
}

// The clusters given as lists (cluster c: members[start[c] .. start[c + 1]), ascending; none
// empty) into res, in the order sort asks (NONE: as given), with cluster[v] the first cluster
// holding v. Takes start and members (freed, or owned by res).
static dsmm_status set_clusters(dsmm_ctx *ctx, int64_t nc, int64_t *start, int64_t *members,
                                dsmm_mcl_sort sort, dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    clist *L = dsmmi_malloc(ctx, (size_t)(nc > 0 ? nc : 1), sizeof *L);
    int64_t *s2 = dsmmi_malloc(NULL, (size_t)nc + 1, sizeof *s2);
    int64_t *m2 = dsmmi_malloc(NULL, (size_t)(start[nc] > 0 ? start[nc] : 1), sizeof *m2);
    int64_t *cluster = dsmmi_malloc(NULL, (size_t)(res->n > 0 ? res->n : 1), sizeof *cluster);
    DSMM_CHECK(ctx, L && s2 && m2 && cluster, DSMM_ERR_NOMEM, "mcl: %lld clusters", (long long)nc);
    for (int64_t c = 0; c < nc; c++) L[c] = (clist){members + start[c], start[c + 1] - start[c], c};
    if (sort != DSMM_MCL_SORT_NONE)
        qsort(L, (size_t)nc, sizeof *L,
              sort == DSMM_MCL_SORT_LEX    ? cmp_lex
              : sort == DSMM_MCL_SORT_SIZE ? cmp_size
                                           : cmp_revsize);
    for (int64_t v = 0; v < res->n; v++) cluster[v] = -1;
    s2[0] = 0;
    for (int64_t c = 0; c < nc; c++) {
        memcpy(m2 + s2[c], L[c].m, (size_t)L[c].len * sizeof *m2);
        s2[c + 1] = s2[c] + L[c].len;
        for (int64_t k = 0; k < L[c].len; k++)
            if (cluster[L[c].m[k]] < 0) cluster[L[c].m[k]] = c;
    }
    dsmm_free(NULL, res->cluster);
    dsmm_free(NULL, res->start);
    dsmm_free(NULL, res->members);
    res->cluster = cluster;
    res->start = s2;
    res->members = m2;
    res->nclusters = nc;
    cluster = s2 = m2 = NULL;
cleanup:
    dsmmi_free(ctx, L);
    dsmmi_free(NULL, s2);
    dsmmi_free(NULL, m2);
    dsmmi_free(NULL, cluster);
    dsmmi_free(NULL, start);
    dsmmi_free(NULL, members);
    return st;
}

// The systems each vertex of ov reaches (the n_ov vertices, ascending, that reach several;
// sys[x] is an attractor's own system, else the first one x reaches, and the only one for the
// vertices not in ov, NONE when they reach none): set o is set[sstart[o] .. sstart[o + 1]),
// ascending. An attractor reaches its own system and what its DAG successors reach. The DAG columns
// of the vertices in overlap are shared by every rank (an all-reduce of zero-filled vectors, each
// rank filling its own), then each rank finds the sets alone: a set is the union of its DAG
// successors' systems.
static dsmm_status overlap_sets(dsmm_ctx *ctx, const dsmmi_mcl_mat *D, dsmm_idx row0,
                                const int64_t *sys, const int64_t *ov, int64_t n_ov, int64_t ncomp,
                                int64_t *oix, int64_t **sstartp, int64_t **setp)
{
    dsmm_status st = DSMM_OK;
    int64_t *deg = NULL, *succ = NULL, *sstart = NULL, *set = NULL, *ns = NULL, *nset = NULL;
    int64_t *stamp = NULL;
    deg = dsmmi_calloc(ctx, (size_t)n_ov + 1, sizeof *deg);
    DSMM_CHECK(ctx, deg != NULL, DSMM_ERR_NOMEM, "mcl: %lld vertices in overlap", (long long)n_ov);
    for (int64_t o = 0; o < n_ov; o++)
        if (ov[o] >= row0 && ov[o] < row0 + D->nrows)
            deg[o + 1] = D->rowptr[ov[o] - row0 + 1] - D->rowptr[ov[o] - row0];
    DSMM_TRY(reduce_vec(ctx, deg + 1, n_ov, '+'));
    for (int64_t o = 0; o < n_ov; o++) deg[o + 1] += deg[o];
    succ = dsmmi_calloc(ctx, (size_t)(deg[n_ov] > 0 ? deg[n_ov] : 1), sizeof *succ);
    stamp = dsmmi_malloc(ctx, (size_t)ncomp + 1, sizeof *stamp);
    sstart = dsmmi_calloc(NULL, (size_t)n_ov + 1, sizeof *sstart);
    ns = dsmmi_calloc(ctx, (size_t)n_ov + 1, sizeof *ns);
    DSMM_CHECK(ctx, succ && stamp && sstart && ns, DSMM_ERR_NOMEM,
               "mcl: the DAG of %lld vertices in overlap", (long long)n_ov);
    for (int64_t o = 0; o < n_ov; o++)
        if (ov[o] >= row0 && ov[o] < row0 + D->nrows)
            for (dsmm_idx k = D->rowptr[ov[o] - row0]; k < D->rowptr[ov[o] - row0 + 1]; k++)
                succ[deg[o] + k - D->rowptr[ov[o] - row0]] = D->col[k];
    DSMM_TRY(reduce_vec(ctx, succ, deg[n_ov], '+'));
    for (int64_t c = 0; c <= ncomp; c++) stamp[c] = -1;
    // Fixpoint: sets only grow, so a pass that changes no size changes nothing.
    int64_t pass = 0;
    for (int changed = 1; changed; pass++) {
        changed = 0;
        int64_t cap = sstart[n_ov] + n_ov + 16, q = 0;
        nset = dsmmi_malloc(NULL, (size_t)cap, sizeof *nset);
        DSMM_CHECK(ctx, nset != NULL, DSMM_ERR_NOMEM, "mcl: overlap sets");
        for (int64_t o = 0; o < n_ov; o++) {
            int64_t tag = pass * n_ov + o, q0 = q;
            for (int64_t e = deg[o] - 1; e < deg[o + 1]; e++) {
                // First its own system (attractor) or the first it reaches, then its DAG
                // successors'.
                int64_t x = e < deg[o] ? -1 : succ[e];
                int64_t lo = 0, hi = 0, one = x < 0 ? sys[ov[o]] : sys[x];
                const int64_t *from = &one;
                if (x < 0) {
                    hi = 1;
                } else if (oix[x] >= 0) { // x in overlap: its set as found so far
                    if (set != NULL) {
                        from = set + sstart[oix[x]];
                        hi = sstart[oix[x] + 1] - sstart[oix[x]];
                    }
                } else if (one != NONE) {
                    hi = 1;
                }
                for (; lo < hi; lo++) {
                    int64_t c = from[lo];
                    if (stamp[c] == tag) continue;
                    stamp[c] = tag;
                    if (q == cap) {
                        int64_t *g = dsmmi_realloc(NULL, nset, (size_t)(2 * cap), sizeof *g);
                        DSMM_CHECK(ctx, g != NULL, DSMM_ERR_NOMEM, "mcl: overlap sets");
                        nset = g;
                        cap *= 2;
                    }
                    nset[q++] = c;
                }
            }
            qsort(nset + q0, (size_t)(q - q0), sizeof *nset, cmp_i64);
            if (q - q0 != sstart[o + 1] - sstart[o]) changed = 1;
            ns[o + 1] = q;
        }
        dsmmi_free(NULL, set);
        set = nset;
        nset = NULL;
        memcpy(sstart, ns, ((size_t)n_ov + 1) * sizeof *sstart);
    }
    *sstartp = sstart;
    *setp = set;
    sstart = set = NULL;
cleanup:
    dsmmi_free(ctx, deg);
    dsmmi_free(ctx, succ);
    dsmmi_free(ctx, stamp);
    dsmmi_free(ctx, ns);
    dsmmi_free(NULL, sstart);
    dsmmi_free(NULL, set);
    dsmmi_free(NULL, nset);
    return st;
}

// One pair of systems that a vertex in overlap reaches (a < b), for split_groups.
typedef struct sys_pair {
    int64_t a, b, o;
} sys_pair;

static int cmp_pair(const void *x, const void *y)
{
    const sys_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

static int64_t uf_root(int64_t *up, int64_t o)
{
    while (up[o] != o) o = up[o] = up[up[o]];
    return o;
}

// -overlap split as mcl 22-282 does it (clm's split of an overlapping clustering): the
// vertices of a cluster that are in no other stay together, and two vertices in overlap go
// together when some two clusters both hold them, joined transitively (the components of
// those pairwise intersections). Not the manual's "always occur paired": a vertex reaching
// systems 1, 2, 3 and one reaching 1, 2 share the intersection of 1 and 2, and mcl puts
// them together. The vertices in overlap here are ov's non-attractors (an attractor stays
// in its own system); gid[o] is the group of ov[o], groups numbered from 0 in order of their
// first vertex, *ngroups their count. Every rank computes the same from the shared sets.
static dsmm_status split_groups(dsmm_ctx *ctx, const int64_t *attr, const int64_t *ov, int64_t n_ov,
                                const int64_t *sstart, const int64_t *set, int64_t *gid,
                                int64_t *ngroups)
{
    dsmm_status st = DSMM_OK;
    sys_pair *P = NULL;
    int64_t *up = dsmmi_malloc(ctx, (size_t)n_ov, sizeof *up);
    DSMM_CHECK(ctx, up != NULL, DSMM_ERR_NOMEM, "mcl: %lld vertices in overlap", (long long)n_ov);
    size_t np = 0;
    for (int64_t o = 0; o < n_ov; o++) {
        up[o] = o;
        size_t m = attr[ov[o]] ? 0 : (size_t)(sstart[o + 1] - sstart[o]);
        np += m * (m - (m > 0)) / 2;
    }
    P = dsmmi_malloc(ctx, np > 0 ? np : 1, sizeof *P);
    DSMM_CHECK(ctx, P != NULL, DSMM_ERR_NOMEM, "mcl: %lld pairs of systems in overlap",
               (long long)np);
    size_t k = 0;
    for (int64_t o = 0; o < n_ov; o++)
        if (!attr[ov[o]])
            for (int64_t i = sstart[o]; i < sstart[o + 1]; i++)
                for (int64_t j = i + 1; j < sstart[o + 1]; j++)
                    P[k++] = (sys_pair){set[i], set[j], o};
    qsort(P, np, sizeof *P, cmp_pair);
    for (size_t i = 1; i < np; i++)
        if (cmp_pair(&P[i - 1], &P[i]) == 0) {
            int64_t r = uf_root(up, P[i - 1].o), s = uf_root(up, P[i].o);
            if (r != s) up[r > s ? r : s] = r < s ? r : s; // the smaller index roots
        }
    *ngroups = 0;
    for (int64_t o = 0; o < n_ov; o++) {
        gid[o] = -1;
        if (attr[ov[o]]) continue;
        int64_t r = uf_root(up, o);
        gid[o] = r == o ? (*ngroups)++ : gid[r]; // a root is the smallest of its group
    }
cleanup:
    dsmmi_free(ctx, up);
    dsmmi_free(ctx, P);
    return st;
}

dsmm_status dsmmi_mcl_interpret(dsmm_ctx *ctx, const dsmmi_mcl_mat *L, dsmm_idx row0, dsmm_idx N,
                                dsmm_mcl_overlap mode, dsmm_mcl_sort sort, dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mcl_mat D = {0};
    int64_t *attr = NULL, *lab = NULL, *rmin = NULL, *rmax = NULL, *cid = NULL, *sys = NULL;
    int64_t *pairs = NULL, *ov = NULL, *oix = NULL, *sstart = NULL, *set = NULL;
    int64_t *gid = NULL, *start = NULL, *members = NULL, *fill = NULL;
    comp *comps = NULL;
    int64_t ncomp = 0, nattr = 0, overlap = 0, garbage = 0, n_ov = 0;

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
    sys = dsmmi_malloc(ctx, (size_t)N, sizeof *sys);
    oix = dsmmi_malloc(ctx, (size_t)N, sizeof *oix);
    DSMM_CHECK(ctx, attr && lab && rmin && rmax && cid && sys && oix, DSMM_ERR_NOMEM,
               "mcl: interpretation vectors of %lld vertices", (long long)N);
    for (dsmm_idx i = 0; i < D.nrows; i++)
        for (dsmm_idx k = D.rowptr[i]; k < D.rowptr[i + 1]; k++)
            if (D.col[k] == row0 + i) attr[row0 + i] = 1;
    DSMM_TRY(reduce_vec(ctx, attr, N, '+'));

    // 3. Attractor systems: min-label propagation over attractor-attractor DAG edges.
    int64_t np = 0;
    for (int pass = 0; pass < 2; pass++) { // count, then fill
        np = 0;
        for (dsmm_idx i = 0; i < D.nrows; i++) {
            dsmm_idx a = row0 + i;
            if (!attr[a]) continue;
            for (dsmm_idx k = D.rowptr[i]; k < D.rowptr[i + 1]; k++) {
                dsmm_idx r = D.col[k];
                if (!attr[r] || r == a) continue;
                if (pass) {
                    pairs[2 * np] = a;
                    pairs[2 * np + 1] = r;
                }
                np++;
            }
        }
        if (!pass) {
            pairs = dsmmi_malloc(ctx, 2 * (size_t)np + 2, sizeof *pairs);
            DSMM_CHECK(ctx, pairs != NULL, DSMM_ERR_NOMEM, "mcl: %lld attractor edges",
                       (long long)np);
        }
    }
    for (dsmm_idx v = 0; v < N; v++) lab[v] = attr[v] ? v : NONE;
    DSMM_TRY(min_label(ctx, lab, N, pairs, np));
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

    // 5. Each vertex's system (an attractor's own; else the first it reaches: CUT), the
    // vertices in overlap (not attractors, reaching several systems), and (KEEP, SPLIT) all
    // the systems that each vertex reaching several reaches (attractors too: reach runs
    // through them, as in step 4).
    int64_t n_split = 0; // vertices in overlap among the n_ov of ov
    for (dsmm_idx v = 0; v < N; v++) {
        sys[v] = attr[v] ? cid[lab[v]] : rmin[v];
        oix[v] = -1;
        if (!attr[v] && sys[v] != NONE && rmax[v] != sys[v]) overlap++;
        if (mode != DSMM_MCL_OVERLAP_CUT && rmin[v] != NONE && rmax[v] != rmin[v]) {
            oix[v] = n_ov++;
            n_split += !attr[v];
        }
        if (sys[v] == NONE) garbage++;
    }
    if (n_ov > 0) {
        ov = dsmmi_malloc(ctx, (size_t)n_ov, sizeof *ov);
        DSMM_CHECK(ctx, ov != NULL, DSMM_ERR_NOMEM, "mcl: %lld vertices in overlap",
                   (long long)n_ov);
        for (dsmm_idx v = 0; v < N; v++)
            if (oix[v] >= 0) ov[oix[v]] = v;
        DSMM_TRY(overlap_sets(ctx, &D, row0, sys, ov, n_ov, ncomp, oix, &sstart, &set));
    }

    // 6. The clusters in the order of the systems, then the vertices reaching none, then
    // (SPLIT) the groups of vertices in overlap (split_groups).
    int64_t ngroups = 0;
    if (mode == DSMM_MCL_OVERLAP_SPLIT && n_split > 0) {
        gid = dsmmi_malloc(ctx, (size_t)n_ov, sizeof *gid);
        DSMM_CHECK(ctx, gid != NULL, DSMM_ERR_NOMEM, "mcl: %lld vertices in overlap",
                   (long long)n_ov);
        DSMM_TRY(split_groups(ctx, attr, ov, n_ov, sstart, set, gid, &ngroups));
    }
    int64_t nslots = ncomp + 1 + ngroups;
    start = dsmmi_calloc(NULL, (size_t)nslots + 1, sizeof *start);
    fill = dsmmi_malloc(ctx, (size_t)nslots + 1, sizeof *fill);
    DSMM_CHECK(ctx, start && fill, DSMM_ERR_NOMEM, "mcl: %lld clusters", (long long)nslots);
    for (int pass = 0; pass < 2; pass++) { // count the members of each slot, then place them
        if (pass) {
            for (int64_t c = 0; c < nslots; c++) start[c + 1] += start[c];
            members = dsmmi_malloc(NULL, (size_t)(start[nslots] > 0 ? start[nslots] : 1),
                                   sizeof *members);
            DSMM_CHECK(ctx, members != NULL, DSMM_ERR_NOMEM, "mcl: cluster lists");
            memcpy(fill, start, (size_t)nslots * sizeof *fill);
        }
        for (dsmm_idx v = 0; v < N; v++) {
            int64_t o = attr[v] ? -1 : oix[v]; // an attractor stays in its own system
            if (o < 0 || mode == DSMM_MCL_OVERLAP_SPLIT) {
                int64_t c = o >= 0 ? ncomp + 1 + gid[o] : sys[v] == NONE ? ncomp : sys[v];
                if (pass)
                    members[fill[c]++] = v;
                else
                    start[c + 1]++;
                continue;
            }
            for (int64_t k = sstart[o]; k < sstart[o + 1]; k++) { // KEEP: every system reached
                if (pass)
                    members[fill[set[k]]++] = v;
                else
                    start[set[k] + 1]++;
            }
        }
    }
    // Drop the empty slots (the vertices reaching no system may be none): the slots' ranges
    // are contiguous in slot order, so the non-empty ones keep theirs.
    int64_t nc = 0;
    for (int64_t c = 0; c < nslots; c++)
        if (start[c + 1] > start[c]) fill[nc++] = start[c + 1];
    for (int64_t c = 0; c < nc; c++) start[c + 1] = fill[c];
    res->n = N;
    res->attractors = nattr;
    res->overlap = overlap;
    res->garbage = garbage;
    st = set_clusters(ctx, nc, start, members,
                      mode == DSMM_MCL_OVERLAP_SPLIT && n_split > 0 && sort == DSMM_MCL_SORT_NONE
                          ? DSMM_MCL_SORT_REVSIZE
                          : sort,
                      res);
    start = members = NULL;
cleanup:
    dsmmi_mcl_mat_free(ctx, &D);
    dsmmi_free(ctx, attr);
    dsmmi_free(ctx, lab);
    dsmmi_free(ctx, rmin);
    dsmmi_free(ctx, rmax);
    dsmmi_free(ctx, cid);
    dsmmi_free(ctx, sys);
    dsmmi_free(ctx, oix);
    dsmmi_free(ctx, pairs);
    dsmmi_free(ctx, ov);
    dsmmi_free(NULL, sstart);
    dsmmi_free(NULL, set);
    dsmmi_free(ctx, gid);
    dsmmi_free(ctx, fill);
    dsmmi_free(NULL, start);
    dsmmi_free(NULL, members);
    dsmmi_free(ctx, comps);
    return st;
}

dsmm_status dsmmi_mcl_connect(dsmm_ctx *ctx, const dsmm_idx *rowptr, const int32_t *col,
                              dsmm_idx nrows, dsmm_idx row0, int force, dsmm_mcl_result *res)
{
    dsmm_status st = DSMM_OK;
    int64_t nc = res->nclusters, N = res->n, M = res->start[nc];
    int64_t *mc = NULL, *vstart = NULL, *vm = NULL, *lab = NULL, *pairs = NULL, *cid = NULL;
    int64_t *start = NULL, *members = NULL;
    mc = dsmmi_malloc(ctx, (size_t)M + 1, sizeof *mc);
    vstart = dsmmi_calloc(ctx, (size_t)N + 1, sizeof *vstart);
    vm = dsmmi_malloc(ctx, (size_t)M + 1, sizeof *vm);
    lab = dsmmi_malloc(ctx, (size_t)M + 1, sizeof *lab);
    cid = dsmmi_malloc(ctx, (size_t)M + 1, sizeof *cid);
    DSMM_CHECK(ctx, mc && vstart && vm && lab && cid, DSMM_ERR_NOMEM,
               "mcl: components of %lld clusters", (long long)nc);
    // Memberships m (entries of members): their cluster, and each vertex's (in cluster order).
    for (int64_t c = 0; c < nc; c++)
        for (int64_t m = res->start[c]; m < res->start[c + 1]; m++) {
            mc[m] = c;
            vstart[res->members[m] + 1]++;
        }
    for (int64_t v = 0; v < N; v++) vstart[v + 1] += vstart[v];
    memcpy(cid, vstart, (size_t)N * sizeof *cid);
    for (int64_t m = 0; m < M; m++) vm[cid[res->members[m]]++] = m;
    // Local pairs: an edge u - v joins u's and v's memberships of one cluster.
    int64_t np = 0;
    for (int pass = 0; pass < 2; pass++) {
        np = 0;
        for (dsmm_idx i = 0; i < nrows; i++) {
            int64_t u = row0 + i;
            for (dsmm_idx k = rowptr[i]; k < rowptr[i + 1]; k++) {
                int64_t v = col[k];
                if (v == u) continue;
                for (int64_t a = vstart[u]; a < vstart[u + 1]; a++)
                    for (int64_t b = vstart[v]; b < vstart[v + 1]; b++)
                        if (mc[vm[a]] == mc[vm[b]]) {
                            if (pass) {
                                pairs[2 * np] = vm[a];
                                pairs[2 * np + 1] = vm[b];
                            }
                            np++;
                        }
            }
        }
        if (!pass) {
            pairs = dsmmi_malloc(ctx, 2 * (size_t)np + 2, sizeof *pairs);
            DSMM_CHECK(ctx, pairs != NULL, DSMM_ERR_NOMEM, "mcl: %lld edges inside clusters",
                       (long long)np);
        }
    }
    for (int64_t m = 0; m < M; m++) lab[m] = m;
    DSMM_TRY(min_label(ctx, lab, M, pairs, np));
    int64_t ncc = 0;
    for (int64_t m = 0; m < M; m++)
        if (lab[m] == m) cid[m] = ncc++;
    res->components = ncc;
    if (!force || ncc == nc) goto cleanup;
    // Split: component k's members in membership order (one cluster's, so ascending).
    start = dsmmi_calloc(NULL, (size_t)ncc + 1, sizeof *start);
    members = dsmmi_malloc(NULL, (size_t)M + 1, sizeof *members);
    DSMM_CHECK(ctx, start && members, DSMM_ERR_NOMEM, "mcl: %lld components", (long long)ncc);
    for (int64_t m = 0; m < M; m++) start[cid[lab[m]] + 1]++;
    for (int64_t k = 0; k < ncc; k++) start[k + 1] += start[k];
    memcpy(vm, start, (size_t)ncc * sizeof *vm); // vm reused as fill pointers (M >= ncc)
    for (int64_t m = 0; m < M; m++) members[vm[cid[lab[m]]]++] = res->members[m];
    res->orig_nclusters = nc;
    res->orig_start = res->start;
    res->orig_members = res->members;
    res->start = res->members = NULL;
    st = set_clusters(ctx, ncc, start, members, DSMM_MCL_SORT_REVSIZE, res);
    start = members = NULL;
cleanup:
    dsmmi_free(ctx, mc);
    dsmmi_free(ctx, vstart);
    dsmmi_free(ctx, vm);
    dsmmi_free(ctx, lab);
    dsmmi_free(ctx, pairs);
    dsmmi_free(ctx, cid);
    dsmmi_free(NULL, start);
    dsmmi_free(NULL, members);
    return st;
}
