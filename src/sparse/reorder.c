// src/sparse/reorder.c: vertex orderings of a square matrix's graph (the pattern of A + A^T
// without loops): reverse Cuthill-McKee (RCM) and Rabbit Order's community ordering (RABBIT).
//
// Both start from the symmetric graph, sorted adjacency lists without repeats, in O(n + nnz):
// for a sorted A each row is merged with the same row of A^T (nnz + E indices at the peak, E
// the graph's 2 |edges|); otherwise every off-diagonal entry is bucketed under both ends and
// the buckets transposed once more, which sorts the lists (2 nnz indices twice).
//
// RCM (Cuthill & McKee 1969; George & Liu, "Computer Solution of Large Sparse Positive Definite
// Systems", 1981, §4.3): for each connected component, taken in order of its smallest vertex,
// a pseudo-peripheral start vertex is found by George and Liu's level-structure search (BFS from
// the component's vertex of least degree, then from the least-degree vertex of the last level
// while the eccentricity grows); a BFS from it appends the unvisited neighbours of each vertex
// in increasing degree (ties by vertex number), and the whole order is reversed at the end.
// O(nnz log dmax) for the BFS, times the few BFS of the start-vertex search.
//
// RABBIT (Arai, Shiokawa, Yamamuro, Onizuka, Iwamura, "Rabbit Order: Just-in-time Parallel
// Reordering for Fast Graph Analysis", IPDPS 2016): the paper's sequential algorithm, community
// detection by incremental aggregation, then a DFS of the dendrogram. Vertices are visited once,
// in increasing degree (ties by number); every edge weighs 1, d is a community's total degree,
// m the number of edges. Visiting u (still top level, since only a visited vertex merges into
// another) first aggregates u's edges with those of the communities merged into u before: each
// endpoint is mapped to its current community (union-find with path halving), internal edges
// are dropped and weights to the same community summed in a dense accumulator. u then merges
// into the neighbouring community v of largest dQ = 2 (w_uv / 2m - d_u d_v / (2m)^2) when
// dQ > 0 (ties: smallest v), becoming v's last child in the dendrogram; otherwise u stays a
// top-level community. An aggregated list is kept only until its parent's visit reads it, in
// one arena compacted when full (live lists cover disjoint sets of vertices, so they hold at
// most E entries) and grown when compaction frees less than half. The ordering is a preorder
// DFS of the dendrogram (a vertex, then its children in merge order), top-level communities in
// order of their smallest vertex, so each community, and each sub-community, gets consecutive
// numbers. Time about O(E alpha(n)) plus the re-aggregation of merged lists (each read once,
// by its parent); memory: the graph, 11 n indices and the arena (at most 2 (E + n) pairs,
// usually far less). Deviations from the paper's parallel version: no concurrent merges, so no
// retries or atomic updates of the community state, and the result is deterministic; children
// are numbered in merge order; isolated vertices are communities of their own.
#include <string.h>

#include "sparse/sparse.h"

// clang-format off
#define REORDER_COUNT 3
static const char *const reorder_names[REORDER_COUNT] = {
    [DSMM_REORDER_NONE] = "none", [DSMM_REORDER_RCM] = "rcm", [DSMM_REORDER_RABBIT] = "rabbit",
};
// clang-format on

dsmm_status dsmm_reorder_from_name(const char *name, dsmm_reorder *r)
{
    if (name == NULL || r == NULL) return DSMM_ERR_ARG;
    for (int k = 0; k < REORDER_COUNT; k++) {
        if (strcmp(name, reorder_names[k]) == 0) {
            *r = (dsmm_reorder)k;
            return DSMM_OK;
        }
    }
    return DSMM_ERR_ARG;
}

const char *dsmm_reorder_name(dsmm_reorder r)
{
    if ((int)r < 0 || (int)r >= REORDER_COUNT) return "?";
    return reorder_names[r];
}

/* ---- the symmetric graph ---------------------------------------------------------------- */

// Adjacency of the pattern of A + A^T without loops: neighbours of v are adj[ptr[v]..ptr[v+1]),
// strictly increasing.
typedef struct graph {
    dsmm_idx n;
    dsmm_idx *ptr, *adj;
} graph;

static void graph_free(dsmm_ctx *ctx, graph *g)
{
    g->ptr = dsmmi_free(ctx, g->ptr);
    g->adj = dsmmi_free(ctx, g->adj);
}

// Row v of A merged with t[a..b) (row v of A^T), both strictly increasing, v dropped: the
// neighbours of v, written to out (NULL: only counted). Returns their number.
static dsmm_idx merge_row(const dsmm_csr *A, dsmm_idx v, const dsmm_idx *t, dsmm_idx a, dsmm_idx b,
                          dsmm_idx *out)
{
    dsmm_idx k = A->rowptr[v], end = A->rowptr[v + 1], cnt = 0;
    while (k < end || a < b) {
        dsmm_idx x;
        if (a >= b || (k < end && dsmm_csr_col(A, k) <= t[a])) {
            x = dsmm_csr_col(A, k++);
            if (a < b && t[a] == x) a++;
        } else {
            x = t[a++];
        }
        if (x == v) continue;
        if (out) out[cnt] = x;
        cnt++;
    }
    return cnt;
}

// Sorted A: the rows of A^T (loops dropped) come out sorted when entries are bucketed in row
// order, and each list is the merge of a row of A with a row of A^T: one scatter of nnz
// entries, nnz + E indices at the peak (E = 2 nnz for a symmetric A would be 4 nnz unsorted).
static dsmm_status graph_build_sorted(dsmm_ctx *ctx, const dsmm_csr *A, graph *g)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx n = A->nrows, *tptr = NULL, *t = NULL;

    g->n = n;
    tptr = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *tptr);
    g->ptr = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *g->ptr);
    DSMM_CHECK(ctx, tptr != NULL && g->ptr != NULL, DSMM_ERR_NOMEM, "reorder: %lld vertices",
               (long long)n);
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (j != i) tptr[j + 1]++;
        }
    for (dsmm_idx v = 0; v < n; v++) tptr[v + 1] += tptr[v];
    t = dsmmi_malloc(ctx, tptr[n] ? (size_t)tptr[n] : 1, sizeof *t);
    DSMM_CHECK(ctx, t != NULL, DSMM_ERR_NOMEM, "reorder: transpose of %lld entries",
               (long long)tptr[n]);
    dsmm_idx *next = g->ptr; // borrowed until the counts below
    memcpy(next, tptr, (size_t)n * sizeof *next);
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (j != i) t[next[j]++] = i;
        }
    g->ptr[0] = 0;
    for (dsmm_idx v = 0; v < n; v++)
        g->ptr[v + 1] = g->ptr[v] + merge_row(A, v, t, tptr[v], tptr[v + 1], NULL);
    g->adj = dsmmi_malloc(ctx, g->ptr[n] ? (size_t)g->ptr[n] : 1, sizeof *g->adj);
    DSMM_CHECK(ctx, g->adj != NULL, DSMM_ERR_NOMEM, "reorder: %lld symmetric entries",
               (long long)g->ptr[n]);
    for (dsmm_idx v = 0; v < n; v++) merge_row(A, v, t, tptr[v], tptr[v + 1], g->adj + g->ptr[v]);
cleanup:
    tptr = dsmmi_free(ctx, tptr);
    t = dsmmi_free(ctx, t);
    if (st != DSMM_OK) graph_free(ctx, g);
    return st;
}

// Any A (rows unsorted, repeated columns): every off-diagonal entry bucketed under both ends,
// then the buckets transposed once more.
static dsmm_status graph_build_any(dsmm_ctx *ctx, const dsmm_csr *A, graph *g)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx n = A->nrows, *next = NULL, *bucket = NULL;

    g->n = n;
    g->ptr = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *g->ptr);
    next = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *next);
    DSMM_CHECK(ctx, g->ptr != NULL && next != NULL, DSMM_ERR_NOMEM, "reorder: %lld vertices",
               (long long)n);
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (j == i) continue;
            g->ptr[i + 1]++;
            g->ptr[j + 1]++;
        }
    for (dsmm_idx v = 0; v < n; v++) g->ptr[v + 1] += g->ptr[v];
    dsmm_idx total = g->ptr[n];
    bucket = dsmmi_malloc(ctx, total ? (size_t)total : 1, sizeof *bucket);
    g->adj = dsmmi_malloc(ctx, total ? (size_t)total : 1, sizeof *g->adj);
    DSMM_CHECK(ctx, bucket != NULL && g->adj != NULL, DSMM_ERR_NOMEM,
               "reorder: %lld symmetric entries", (long long)total);
    memcpy(next, g->ptr, (size_t)n * sizeof *next);
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (j == i) continue;
            bucket[next[i]++] = j;
            bucket[next[j]++] = i;
        }
    // Bucket v holds v's neighbours (with repeats) in any order, and the relation is symmetric,
    // so appending v to the list of each w in bucket v, v ascending, gives lists of the same
    // lengths, sorted.
    memcpy(next, g->ptr, (size_t)n * sizeof *next);
    for (dsmm_idx v = 0; v < n; v++)
        for (dsmm_idx k = g->ptr[v]; k < g->ptr[v + 1]; k++) g->adj[next[bucket[k]]++] = v;
    dsmm_idx out = 0, start = 0;
    for (dsmm_idx v = 0; v < n; v++) {
        dsmm_idx end = g->ptr[v + 1];
        g->ptr[v] = out;
        for (dsmm_idx k = start; k < end; k++)
            if (k == start || g->adj[k] != g->adj[k - 1]) g->adj[out++] = g->adj[k];
        start = end;
    }
    g->ptr[n] = out;
cleanup:
    next = dsmmi_free(ctx, next);
    bucket = dsmmi_free(ctx, bucket);
    if (st != DSMM_OK) graph_free(ctx, g);
    return st;
}

static inline dsmm_idx degree(const graph *g, dsmm_idx v)
{
    return g->ptr[v + 1] - g->ptr[v];
}

// Stable sort of a[0..len) by deg(a[k]) (insertion sort for short runs, else bottom-up merge
// sort through tmp[0..len)); a list already in increasing vertex order comes out ordered by
// (degree, vertex).
static void sort_by_degree(const graph *g, dsmm_idx *a, dsmm_idx len, dsmm_idx *tmp)
{
    if (len <= 32) {
        for (dsmm_idx k = 1; k < len; k++) {
            dsmm_idx x = a[k], dx = degree(g, x), t = k;
            for (; t > 0 && degree(g, a[t - 1]) > dx; t--) a[t] = a[t - 1];
            a[t] = x;
        }
        return;
    }
    dsmm_idx *src = a, *dst = tmp;
    for (dsmm_idx w = 1; w < len; w *= 2) {
        for (dsmm_idx lo = 0; lo < len; lo += 2 * w) {
            dsmm_idx mid = lo + w < len ? lo + w : len, hi = lo + 2 * w < len ? lo + 2 * w : len;
            dsmm_idx i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = degree(g, src[j]) < degree(g, src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        dsmm_idx *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, (size_t)len * sizeof *a);
}

/* ---- RCM -------------------------------------------------------------------------------- */

// BFS from r over the vertices not yet marked with stamp: q[0..*count) receives them level by
// level, *last the start of the last level. Returns the number of levels (eccentricity + 1).
static dsmm_idx bfs_levels(const graph *g, dsmm_idx r, dsmm_idx stamp, dsmm_idx *mark, dsmm_idx *q,
                           dsmm_idx *count, dsmm_idx *last)
{
    dsmm_idx tail = 1, start = 0, levels = 0;
    q[0] = r;
    mark[r] = stamp;
    while (start < tail) {
        dsmm_idx end = tail;
        levels++;
        *last = start;
        for (dsmm_idx k = start; k < end; k++) {
            dsmm_idx u = q[k];
            for (dsmm_idx e = g->ptr[u]; e < g->ptr[u + 1]; e++) {
                dsmm_idx w = g->adj[e];
                if (mark[w] != stamp) {
                    mark[w] = stamp;
                    q[tail++] = w;
                }
            }
        }
        start = end;
    }
    *count = tail;
    return levels;
}

// The vertex of least degree in a[0..len), ties by number.
static dsmm_idx min_degree(const graph *g, const dsmm_idx *a, dsmm_idx len)
{
    dsmm_idx best = a[0];
    for (dsmm_idx k = 1; k < len; k++) {
        dsmm_idx v = a[k], dv = degree(g, v), db = degree(g, best);
        if (dv < db || (dv == db && v < best)) best = v;
    }
    return best;
}

// mark[v] == 0: v not reached yet; each BFS marks with a fresh stamp, so no resets are needed.
static void rcm(const graph *g, dsmm_idx *mark, dsmm_idx *q, dsmm_idx *order, dsmm_idx *perm)
{
    dsmm_idx n = g->n, stamp = 0, done = 0;
    for (dsmm_idx s = 0; s < n; s++) {
        if (mark[s] != 0) continue;
        dsmm_idx count, last;
        bfs_levels(g, s, ++stamp, mark, q, &count, &last);
        // George-Liu: restart from the least-degree vertex of the last level while the
        // eccentricity grows (it is bounded by the component's diameter)
        dsmm_idx r = min_degree(g, q, count);
        dsmm_idx levels = bfs_levels(g, r, ++stamp, mark, q, &count, &last);
        for (;;) {
            dsmm_idx x = min_degree(g, q + last, count - last), xlast;
            dsmm_idx xlevels = bfs_levels(g, x, ++stamp, mark, q, &count, &xlast);
            if (xlevels <= levels) break;
            r = x;
            levels = xlevels;
            last = xlast;
        }
        // Cuthill-McKee BFS from r; order[] is its own queue and q the sort's scratch
        ++stamp;
        dsmm_idx head = done, tail = done;
        order[tail++] = r;
        mark[r] = stamp;
        while (head < tail) {
            dsmm_idx u = order[head++], first = tail;
            for (dsmm_idx e = g->ptr[u]; e < g->ptr[u + 1]; e++) {
                dsmm_idx w = g->adj[e];
                if (mark[w] != stamp) {
                    mark[w] = stamp;
                    order[tail++] = w;
                }
            }
            sort_by_degree(g, order + first, tail - first, q);
        }
        done = tail;
    }
    for (dsmm_idx k = 0; k < n; k++) perm[order[k]] = n - 1 - k;
}

/* ---- Rabbit Order ----------------------------------------------------------------------- */

typedef struct rabbit {
    const graph *g;
    dsmm_idx *dest;                         // union-find parent: the community a vertex merged into
    dsmm_idx *child, *last_child, *sibling; // dendrogram: children in merge order
    dsmm_idx *deg;              // total degree of the community a top-level vertex leads
    dsmm_idx *visited;          // 1 once visited; 2 for a root already numbered
    dsmm_idx *agg_at, *agg_len; // the vertex's aggregated list in the arena; agg_at -1: none
    dsmm_idx *acc, *touched;    // dense accumulator of edge weights, and its touched entries
    dsmm_idx *log;              // vertices owning arena lists, in arena order
    dsmm_idx nlog;
    dsmm_idx *nbr, *wgt; // arena of aggregated lists: (community, weight) pairs
    dsmm_idx used, cap;
} rabbit;

static dsmm_idx find(dsmm_idx *dest, dsmm_idx x)
{
    while (dest[x] != x) {
        dest[x] = dest[dest[x]];
        x = dest[x];
    }
    return x;
}

// Adds the edges of (x, w) pairs to the accumulator of community u.
static dsmm_idx accumulate(rabbit *R, dsmm_idx u, const dsmm_idx *x, const dsmm_idx *w,
                           dsmm_idx len, dsmm_idx ntouched)
{
    for (dsmm_idx k = 0; k < len; k++) {
        dsmm_idx c = find(R->dest, x[k]);
        if (c == u) continue; // internal edge
        if (R->acc[c] == 0) R->touched[ntouched++] = c;
        R->acc[c] += w ? w[k] : 1;
    }
    return ntouched;
}

// Makes room for len more arena entries: compacts the live lists to the front (in arena order,
// so the move never overwrites a list not yet moved) and grows the arena when that leaves less
// than half of it free.
static dsmm_status arena_reserve(dsmm_ctx *ctx, rabbit *R, dsmm_idx len)
{
    dsmm_status st = DSMM_OK;
    if (R->used + len <= R->cap) return DSMM_OK;
    dsmm_idx out = 0, nlog = 0;
    for (dsmm_idx k = 0; k < R->nlog; k++) {
        dsmm_idx v = R->log[k];
        if (R->agg_at[v] < 0) continue;
        memmove(R->nbr + out, R->nbr + R->agg_at[v], (size_t)R->agg_len[v] * sizeof *R->nbr);
        memmove(R->wgt + out, R->wgt + R->agg_at[v], (size_t)R->agg_len[v] * sizeof *R->wgt);
        R->agg_at[v] = out;
        out += R->agg_len[v];
        R->log[nlog++] = v;
    }
    R->used = out;
    R->nlog = nlog;
    if (2 * (R->used + len) > R->cap) {
        dsmm_idx cap = 2 * (R->used + len);
        dsmm_idx *nbr = dsmmi_realloc(ctx, R->nbr, (size_t)cap, sizeof *nbr);
        DSMM_CHECK(ctx, nbr != NULL, DSMM_ERR_NOMEM, "reorder: arena of %lld pairs",
                   (long long)cap);
        R->nbr = nbr;
        dsmm_idx *wgt = dsmmi_realloc(ctx, R->wgt, (size_t)cap, sizeof *wgt);
        DSMM_CHECK(ctx, wgt != NULL, DSMM_ERR_NOMEM, "reorder: arena of %lld pairs",
                   (long long)cap);
        R->wgt = wgt;
        R->cap = cap;
    }
cleanup:
    return st;
}

// Visits u: aggregates its edges and its children's lists, then merges u into the neighbouring
// community of best positive modularity gain, if any.
static dsmm_status rabbit_visit(dsmm_ctx *ctx, rabbit *R, dsmm_idx u, double m2)
{
    dsmm_status st = DSMM_OK;
    const graph *g = R->g;
    dsmm_idx nt = accumulate(R, u, g->adj + g->ptr[u], NULL, degree(g, u), 0);
    for (dsmm_idx c = R->child[u]; c >= 0; c = R->sibling[c]) {
        if (R->agg_at[c] < 0) continue;
        nt = accumulate(R, u, R->nbr + R->agg_at[c], R->wgt + R->agg_at[c], R->agg_len[c], nt);
        R->agg_at[c] = -1; // read once: garbage from now on
    }
    R->visited[u] = 1;
    // dQ scaled by (2m)^2 / 2 > 0: w_uv 2m - d_u d_v
    dsmm_idx best = -1;
    double best_gain = 0.0, du = (double)R->deg[u];
    for (dsmm_idx k = 0; k < nt; k++) {
        dsmm_idx v = R->touched[k];
        double gain = (double)R->acc[v] * m2 - du * (double)R->deg[v];
        if (gain > best_gain || (gain == best_gain && best >= 0 && v < best)) {
            best_gain = gain;
            best = v;
        }
    }
    if (best >= 0 && !R->visited[best]) {
        // best will aggregate this list when it is visited
        DSMM_TRY(arena_reserve(ctx, R, nt));
        R->agg_at[u] = R->used;
        R->agg_len[u] = nt;
        for (dsmm_idx k = 0; k < nt; k++) {
            R->nbr[R->used + k] = R->touched[k];
            R->wgt[R->used + k] = R->acc[R->touched[k]];
        }
        R->used += nt;
        R->log[R->nlog++] = u;
    }
    if (best >= 0) {
        R->dest[u] = best;
        R->deg[best] += R->deg[u];
        if (R->child[best] < 0)
            R->child[best] = u;
        else
            R->sibling[R->last_child[best]] = u;
        R->last_child[best] = u;
    }
cleanup:
    for (dsmm_idx k = 0; k < nt; k++) R->acc[R->touched[k]] = 0;
    return st;
}

static dsmm_status rabbit_order(dsmm_ctx *ctx, const graph *g, dsmm_idx *perm)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx n = g->n, *work = NULL;
    rabbit R;
    memset(&R, 0, sizeof R);
    R.g = g;

    work = dsmmi_calloc(ctx, 11 * (size_t)n + 1, sizeof *work);
    DSMM_CHECK(ctx, work != NULL, DSMM_ERR_NOMEM, "reorder: rabbit state of %lld vertices",
               (long long)n);
    R.dest = work;
    R.child = work + n;
    R.last_child = work + 2 * n;
    R.sibling = work + 3 * n;
    R.deg = work + 4 * n;
    R.visited = work + 5 * n;
    R.agg_at = work + 6 * n;
    R.agg_len = work + 7 * n;
    R.acc = work + 8 * n;
    R.touched = work + 9 * n;
    R.log = work + 10 * n;
    // live lists start small: most are short once internal edges are gone
    R.cap = g->ptr[n] / 8 + 16;
    R.nbr = dsmmi_malloc(ctx, (size_t)R.cap, sizeof *R.nbr);
    R.wgt = dsmmi_malloc(ctx, (size_t)R.cap, sizeof *R.wgt);
    DSMM_CHECK(ctx, R.nbr != NULL && R.wgt != NULL, DSMM_ERR_NOMEM, "reorder: arena of %lld pairs",
               (long long)R.cap);
    for (dsmm_idx v = 0; v < n; v++) {
        R.dest[v] = v;
        R.child[v] = R.last_child[v] = R.sibling[v] = -1;
        R.deg[v] = degree(g, v);
        R.agg_at[v] = -1;
    }
    // visiting order by (degree, vertex) in perm[], free until the numbering
    for (dsmm_idx v = 0; v < n; v++) perm[v] = v;
    sort_by_degree(g, perm, n, R.touched);
    double m2 = (double)g->ptr[n];
    for (dsmm_idx k = 0; k < n; k++) DSMM_TRY(rabbit_visit(ctx, &R, perm[k], m2));
    // preorder DFS of the dendrogram from each root, roots by their smallest vertex; the stack
    // (in touched[]) holds at most one pending sibling per level plus the next child
    dsmm_idx next = 0, *stack = R.touched;
    for (dsmm_idx x = 0; x < n; x++) {
        dsmm_idx r = find(R.dest, x);
        if (R.visited[r] == 2) continue;
        R.visited[r] = 2;
        dsmm_idx top = 0;
        stack[top++] = r;
        while (top > 0) {
            dsmm_idx v = stack[--top];
            perm[v] = next++;
            if (R.sibling[v] >= 0) stack[top++] = R.sibling[v];
            if (R.child[v] >= 0) stack[top++] = R.child[v];
        }
    }
cleanup:
    work = dsmmi_free(ctx, work);
    R.nbr = dsmmi_free(ctx, R.nbr);
    R.wgt = dsmmi_free(ctx, R.wgt);
    return st;
}

/* ---- front end -------------------------------------------------------------------------- */

dsmm_status dsmm_csr_reorder(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_reorder kind, dsmm_idx **perm)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *p = NULL, *work = NULL;
    graph g = {0, NULL, NULL};

    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, perm != NULL, DSMM_ERR_ARG, "csr_reorder: perm must be non-NULL");
    *perm = NULL;
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "csr_reorder: A must be non-NULL");
    DSMM_CHECK(ctx, (int)kind >= 0 && (int)kind < REORDER_COUNT, DSMM_ERR_ARG,
               "csr_reorder: unknown ordering %d", (int)kind);
    DSMM_CHECK(ctx, A->nrows == A->ncols, DSMM_ERR_DIM, "csr_reorder: A is %lld x %lld, not square",
               (long long)A->nrows, (long long)A->ncols);
    dsmm_idx n = A->nrows;
    p = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *p);
    DSMM_CHECK(ctx, p != NULL, DSMM_ERR_NOMEM, "csr_reorder: permutation of %lld", (long long)n);
    if (kind == DSMM_REORDER_NONE || n == 0) {
        for (dsmm_idx v = 0; v < n; v++) p[v] = v;
    } else {
        DSMM_TRY(A->sorted ? graph_build_sorted(ctx, A, &g) : graph_build_any(ctx, A, &g));
        if (kind == DSMM_REORDER_RCM) {
            work = dsmmi_calloc(ctx, 3 * (size_t)n, sizeof *work);
            DSMM_CHECK(ctx, work != NULL, DSMM_ERR_NOMEM, "csr_reorder: rcm state of %lld",
                       (long long)n);
            rcm(&g, work, work + n, work + 2 * n, p);
        } else {
            DSMM_TRY(rabbit_order(ctx, &g, p));
        }
    }
    *perm = p;
    p = NULL;
cleanup:
    p = dsmmi_free(ctx, p);
    work = dsmmi_free(ctx, work);
    graph_free(ctx, &g);
    return st;
}
