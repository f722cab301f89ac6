// tests/sparse/test_reorder.c: dsmm_csr_reorder (RCM, Rabbit Order) against naive dense
// references written independently (eager merging of a dense community weight matrix for
// Rabbit Order), hand-worked small graphs, and the properties the orderings are for: bandwidth
// 1 on a shuffled path, a narrow band on a shuffled grid, block-diagonal planted communities.
// Also: permutations on edge shapes (n = 0, 1, loops only, isolated vertices), direction,
// values, duplicates and column width ignored, names, errors, determinism, allocation failures.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ref.h"

static const dsmm_reorder kinds[] = {DSMM_REORDER_NONE, DSMM_REORDER_RCM, DSMM_REORDER_RABBIT};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* ---- helpers ---------------------------------------------------------------------------- */

static dsmm_idx rnd(dsmm_rng *g, dsmm_idx n)
{
    return n <= 0 ? 0 : (dsmm_idx)(dsmm_rng_u64(g) % (uint64_t)n);
}

static void rand_perm(dsmm_rng *g, dsmm_idx n, dsmm_idx *p)
{
    for (dsmm_idx i = 0; i < n; i++) p[i] = i;
    for (dsmm_idx i = n - 1; i > 0; i--) {
        dsmm_idx j = rnd(g, i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

// Edges (ei[k], ej[k]) renamed by q (NULL: identity), both directions when sym, as a sorted CSR.
static int edges_csr(dsmm_ctx *ctx, dsmm_idx n, dsmm_idx ne, const dsmm_idx *ei, const dsmm_idx *ej,
                     const dsmm_idx *q, int sym, dsmm_csr **A)
{
    dsmm_coo *T = NULL;
    CHECK_OK(ctx, dsmm_coo_create(ctx, n, n, 0, DSMM_PATTERN, &T));
    for (dsmm_idx k = 0; k < ne; k++) {
        dsmm_idx i = q ? q[ei[k]] : ei[k], j = q ? q[ej[k]] : ej[k];
        CHECK_OK(ctx, dsmm_coo_push(T, i, j, 1.0));
        if (sym) CHECK_OK(ctx, dsmm_coo_push(T, j, i, 1.0));
    }
    CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, A));
    dsmm_coo_destroy(&T);
    return TEST_PASS;
}

// p holds each of 0..n-1 once.
static int is_perm(const dsmm_idx *p, dsmm_idx n)
{
    unsigned char *seen = calloc((size_t)n + 1, 1);
    int ok = p != NULL;
    for (dsmm_idx i = 0; ok && i < n; i++) {
        ok = p[i] >= 0 && p[i] < n && !seen[p[i]];
        if (ok) seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

// max |p[i] - p[j]| over the off-diagonal entries of A (p NULL: identity).
static dsmm_idx bandwidth(const dsmm_csr *A, const dsmm_idx *p)
{
    dsmm_idx bw = 0;
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            dsmm_idx d = p ? p[i] - p[j] : i - j;
            if (d < 0) d = -d;
            if (d > bw) bw = d;
        }
    return bw;
}

// The pattern of A + A^T without loops as a dense n x n 0/1 matrix.
static unsigned char *dense_sym(const dsmm_csr *A)
{
    dsmm_idx n = A->nrows;
    unsigned char *adj = calloc((size_t)(n * n) + 1, 1);
    for (dsmm_idx i = 0; i < n; i++)
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (i == j) continue;
            adj[i * n + j] = adj[j * n + i] = 1;
        }
    return adj;
}

static int cmp_idx(const void *a, const void *b)
{
    dsmm_idx x = *(const dsmm_idx *)a, y = *(const dsmm_idx *)b;
    return (x > y) - (x < y);
}

/* ---- naive references ------------------------------------------------------------------- */

static dsmm_idx dense_deg(const unsigned char *adj, dsmm_idx n, dsmm_idx v)
{
    dsmm_idx d = 0;
    for (dsmm_idx w = 0; w < n; w++) d += adj[v * n + w];
    return d;
}

// (degree, vertex) order: a before b.
static int deg_less(const dsmm_idx *deg, dsmm_idx a, dsmm_idx b)
{
    return deg[a] < deg[b] || (deg[a] == deg[b] && a < b);
}

// BFS levels from r: lev[v] = level (-1 unreached); returns the eccentricity; the last level is
// the vertices with lev == ecc.
static dsmm_idx dense_levels(const unsigned char *adj, dsmm_idx n, dsmm_idx r, dsmm_idx *lev,
                             dsmm_idx *queue)
{
    for (dsmm_idx v = 0; v < n; v++) lev[v] = -1;
    dsmm_idx head = 0, tail = 0, ecc = 0;
    lev[r] = 0;
    queue[tail++] = r;
    while (head < tail) {
        dsmm_idx u = queue[head++];
        if (lev[u] > ecc) ecc = lev[u];
        for (dsmm_idx w = 0; w < n; w++)
            if (adj[u * n + w] && lev[w] < 0) {
                lev[w] = lev[u] + 1;
                queue[tail++] = w;
            }
    }
    return ecc;
}

// Reverse Cuthill-McKee as the library documents it, on a dense matrix.
static void ref_rcm(const dsmm_csr *A, dsmm_idx *perm)
{
    dsmm_idx n = A->nrows;
    unsigned char *adj = dense_sym(A);
    dsmm_idx *deg = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx *lev = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx *lev2 = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx *queue = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx *order = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    unsigned char *done = calloc((size_t)n + 1, 1);
    for (dsmm_idx v = 0; v < n; v++) deg[v] = dense_deg(adj, n, v);
    dsmm_idx cnt = 0;
    for (dsmm_idx s = 0; s < n; s++) {
        if (done[s]) continue;
        dense_levels(adj, n, s, lev, queue);
        dsmm_idx r = s;
        for (dsmm_idx v = 0; v < n; v++)
            if (lev[v] >= 0 && deg_less(deg, v, r)) r = v;
        dsmm_idx ecc = dense_levels(adj, n, r, lev, queue);
        for (;;) { // George-Liu: the least last-level vertex while the eccentricity grows
            dsmm_idx x = -1;
            for (dsmm_idx v = 0; v < n; v++)
                if (lev[v] == ecc && (x < 0 || deg_less(deg, v, x))) x = v;
            dsmm_idx ecc2 = dense_levels(adj, n, x, lev2, queue);
            if (ecc2 <= ecc) break;
            r = x;
            ecc = ecc2;
            memcpy(lev, lev2, sizeof(dsmm_idx) * (size_t)n);
        }
        dsmm_idx head = cnt;
        order[cnt++] = r;
        done[r] = 1;
        while (head < cnt) {
            dsmm_idx u = order[head++], first = cnt;
            for (dsmm_idx w = 0; w < n; w++)
                if (adj[u * n + w] && !done[w]) {
                    done[w] = 1;
                    order[cnt++] = w;
                }
            for (dsmm_idx a = first + 1; a < cnt; a++) // insertion sort by (degree, vertex)
                for (dsmm_idx b = a; b > first && deg_less(deg, order[b], order[b - 1]); b--) {
                    dsmm_idx t = order[b];
                    order[b] = order[b - 1];
                    order[b - 1] = t;
                }
        }
    }
    for (dsmm_idx k = 0; k < n; k++) perm[order[k]] = n - 1 - k;
    free(adj), free(deg), free(lev), free(lev2), free(queue), free(order), free(done);
}

// Preorder numbering of the dendrogram below v: children in merge order.
static void ref_number(dsmm_idx n, const dsmm_idx *parent, const dsmm_idx *when, dsmm_idx v,
                       dsmm_idx *next, dsmm_idx *perm)
{
    perm[v] = (*next)++;
    for (;;) { // the unnumbered child merged first
        dsmm_idx c = -1;
        for (dsmm_idx x = 0; x < n; x++)
            if (parent[x] == v && perm[x] < 0 && (c < 0 || when[x] < when[c])) c = x;
        if (c < 0) break;
        ref_number(n, parent, when, c, next, perm);
    }
}

// Rabbit Order with eager merging: W holds the edge weights between top-level communities.
static void ref_rabbit(const dsmm_csr *A, dsmm_idx *perm)
{
    dsmm_idx n = A->nrows;
    unsigned char *adj = dense_sym(A);
    dsmm_idx *W = calloc((size_t)(n * n) + 1, sizeof(dsmm_idx));
    dsmm_idx *deg = calloc((size_t)n + 1, sizeof(dsmm_idx));
    dsmm_idx *D = calloc((size_t)n + 1, sizeof(dsmm_idx));
    dsmm_idx *parent = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx *when = calloc((size_t)n + 1, sizeof(dsmm_idx));
    dsmm_idx *order = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    dsmm_idx m2 = 0;
    for (dsmm_idx v = 0; v < n; v++) {
        for (dsmm_idx w = 0; w < n; w++) W[v * n + w] = adj[v * n + w];
        deg[v] = D[v] = dense_deg(adj, n, v);
        m2 += deg[v];
        parent[v] = -1;
        order[v] = v;
    }
    for (dsmm_idx a = 1; a < n; a++)
        for (dsmm_idx b = a; b > 0 && deg_less(deg, order[b], order[b - 1]); b--) {
            dsmm_idx t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (dsmm_idx k = 0; k < n; k++) {
        dsmm_idx u = order[k], best = -1;
        double best_gain = 0.0;
        for (dsmm_idx v = 0; v < n; v++) {
            if (v == u || parent[v] >= 0 || W[u * n + v] == 0) continue;
            double gain = (double)W[u * n + v] * (double)m2 - (double)D[u] * (double)D[v];
            if (gain > best_gain) {
                best_gain = gain;
                best = v;
            }
        }
        if (best < 0) continue;
        for (dsmm_idx x = 0; x < n; x++) {
            W[best * n + x] += W[u * n + x];
            W[x * n + best] += W[x * n + u];
            W[u * n + x] = W[x * n + u] = 0;
        }
        W[best * n + best] = 0;
        D[best] += D[u];
        parent[u] = best;
        when[u] = k;
    }
    dsmm_idx next = 0;
    for (dsmm_idx v = 0; v < n; v++) perm[v] = -1;
    for (dsmm_idx x = 0; x < n; x++) {
        dsmm_idx r = x;
        while (parent[r] >= 0) r = parent[r];
        if (perm[r] < 0) ref_number(n, parent, when, r, &next, perm);
    }
    free(adj), free(W), free(deg), free(D), free(parent), free(when), free(order);
}

/* ---- tests ------------------------------------------------------------------------------ */

static int test_names(void)
{
    for (size_t k = 0; k < NKINDS; k++) {
        dsmm_reorder r = (dsmm_reorder)-1;
        CHECK(dsmm_reorder_from_name(dsmm_reorder_name(kinds[k]), &r) == DSMM_OK);
        CHECK(r == kinds[k]);
    }
    CHECK(strcmp(dsmm_reorder_name(DSMM_REORDER_NONE), "none") == 0);
    CHECK(strcmp(dsmm_reorder_name(DSMM_REORDER_RCM), "rcm") == 0);
    CHECK(strcmp(dsmm_reorder_name(DSMM_REORDER_RABBIT), "rabbit") == 0);
    dsmm_reorder r = DSMM_REORDER_RCM;
    CHECK(dsmm_reorder_from_name("RCM", &r) == DSMM_ERR_ARG);
    CHECK(dsmm_reorder_from_name("", &r) == DSMM_ERR_ARG);
    CHECK(dsmm_reorder_from_name("rabbits", &r) == DSMM_ERR_ARG);
    CHECK(dsmm_reorder_from_name(NULL, &r) == DSMM_ERR_ARG);
    CHECK(dsmm_reorder_from_name("rcm", NULL) == DSMM_ERR_ARG);
    CHECK(r == DSMM_REORDER_RCM);
    const char *bad = dsmm_reorder_name((dsmm_reorder)7);
    CHECK(bad != NULL && dsmm_reorder_from_name(bad, &r) == DSMM_ERR_ARG);
    return TEST_PASS;
}

static int test_errors(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL;
    dsmm_idx *p = (dsmm_idx *)&p;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 3, 4, 0, DSMM_PATTERN, &A));
    for (size_t k = 0; k < NKINDS; k++) {
        dsmm_ctx_clear_error(ctx);
        CHECK_ST(ctx, dsmm_csr_reorder(ctx, A, kinds[k], &p), DSMM_ERR_DIM);
        CHECK(p == NULL);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "3 x 4, not square");
    }
    dsmm_csr_destroy(&A);
    CHECK_OK(ctx, dsmm_csr_create(ctx, 3, 3, 0, DSMM_PATTERN, &A));
    dsmm_ctx_clear_error(ctx);
    p = (dsmm_idx *)&p;
    CHECK_ST(ctx, dsmm_csr_reorder(ctx, NULL, DSMM_REORDER_RCM, &p), DSMM_ERR_ARG);
    CHECK(p == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RCM, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    p = (dsmm_idx *)&p;
    CHECK_ST(ctx, dsmm_csr_reorder(ctx, A, (dsmm_reorder)3, &p), DSMM_ERR_ARG);
    CHECK(p == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "unknown ordering 3");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_csr_reorder(ctx, A, (dsmm_reorder)-1, &p), DSMM_ERR_ARG);
    CHECK_ST(ctx, dsmm_csr_reorder(NULL, A, DSMM_REORDER_RCM, &p), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Hand-worked RCM. Component {0..6}: least degree 2; BFS from 2 has eccentricity 3, from 4
// (least degree, smallest, of the last level) 4, from 6 again 4: start 4. Cuthill-McKee:
// 4 1 | 5 0 (degrees 1 < 3) | 2 3 (1 < 2) | 6, then {7, 8} from 7, then 9; reversed.
static int test_rcm_small(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx ei[] = {0, 0, 0, 1, 1, 3, 7}, ej[] = {1, 2, 3, 4, 5, 6, 8};
    dsmm_idx want[] = {6, 8, 5, 4, 9, 7, 3, 2, 1, 0};
    dsmm_csr *A = NULL;
    dsmm_idx *p = NULL;
    CHECK(edges_csr(ctx, 10, 7, ei, ej, NULL, 0, &A) == TEST_PASS);
    CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RCM, &p));
    for (int v = 0; v < 10; v++) CHECK_EQ_IDX(p[v], want[v]);
    p = dsmm_free(ctx, p);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Hand-worked Rabbit Order: two triangles {0,1,2}, {3,4,5} joined by 2-3 (m = 7). Visits 0 1 4
// 5 2 3: 0 -> 1 (gain 1 - 4/14 beats 1 - 6/14), {0,1} -> 2, 4 -> 5, {4,5} -> 3; then 2 and 3
// have dQ = 1 - 49/14 < 0 and stay top level. Dendrogram 2(1(0)), 3(5(4)).
static int test_rabbit_small(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_idx ei[] = {0, 1, 0, 3, 4, 3, 2}, ej[] = {1, 2, 2, 4, 5, 5, 3};
    dsmm_idx want[] = {2, 1, 0, 3, 5, 4};
    dsmm_csr *A = NULL;
    dsmm_idx *p = NULL;
    CHECK(edges_csr(ctx, 6, 7, ei, ej, NULL, 1, &A) == TEST_PASS);
    CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RABBIT, &p));
    for (int v = 0; v < 6; v++) CHECK_EQ_IDX(p[v], want[v]);
    p = dsmm_free(ctx, p);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every kind gives a permutation, NONE the identity, RCM and RABBIT the references' answer.
static int check_kinds(dsmm_ctx *ctx, const dsmm_csr *A, const char *what)
{
    dsmm_idx n = A->nrows;
    dsmm_idx *want = malloc(sizeof(dsmm_idx) * (size_t)(n + 1));
    for (size_t k = 0; k < NKINDS; k++) {
        dsmm_idx *p = NULL;
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, kinds[k], &p));
        CHECK_MSG(is_perm(p, n), "%s, %s: not a permutation", what, dsmm_reorder_name(kinds[k]));
        if (kinds[k] == DSMM_REORDER_NONE)
            for (dsmm_idx v = 0; v < n; v++) want[v] = v;
        if (kinds[k] == DSMM_REORDER_RCM) ref_rcm(A, want);
        if (kinds[k] == DSMM_REORDER_RABBIT) ref_rabbit(A, want);
        for (dsmm_idx v = 0; v < n; v++)
            CHECK_MSG(p[v] == want[v], "%s, %s: perm[%lld] = %lld, reference %lld", what,
                      dsmm_reorder_name(kinds[k]), (long long)v, (long long)p[v],
                      (long long)want[v]);
        p = dsmm_free(ctx, p);
    }
    free(want);
    return TEST_PASS;
}

static int test_against_reference(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    char what[96];
    // Erdős–Rényi from very sparse (mostly isolated vertices) to dense, both directions
    const double degs[] = {0.3, 1, 2.5, 6, 20};
    for (int t = 0; t < 5; t++)
        for (int sym = 0; sym < 2; sym++)
            for (dsmm_idx n = 1; n <= 200; n = n * 3 + 7) {
                dsmm_csr *A = NULL;
                CHECK_OK(ctx,
                         test_rand_er(ctx, n, degs[t] < (double)n ? degs[t] : (double)n, sym,
                                      DSMM_PATTERN, seed + (uint64_t)(100 * t + 10 * sym + n), &A));
                snprintf(what, sizeof what, "er n %lld deg %g sym %d", (long long)n, degs[t], sym);
                CHECK(check_kinds(ctx, A, what) == TEST_PASS);
                dsmm_csr_destroy(&A);
            }
    // skewed degrees (R-MAT), with values
    for (int scale = 3; scale <= 8; scale++) {
        dsmm_csr *A = NULL;
        CHECK_OK(ctx, test_rand_rmat(ctx, scale, 4, scale % 2, DSMM_DOUBLE,
                                     seed + 1000 + (uint64_t)scale, &A));
        snprintf(what, sizeof what, "rmat scale %d", scale);
        CHECK(check_kinds(ctx, A, what) == TEST_PASS);
        dsmm_csr_destroy(&A);
    }
    // shapes listed: 0 x 0, 1 x 1 with and without a loop, loops only, a star, a complete
    // graph, isolated vertices around a triangle
    dsmm_csr *A = NULL;
    CHECK_OK(ctx, dsmm_csr_create(ctx, 0, 0, 0, DSMM_PATTERN, &A));
    CHECK(check_kinds(ctx, A, "0 x 0") == TEST_PASS);
    dsmm_csr_destroy(&A);
    dsmm_idx loops[12], star_i[11], star_j[11], ki[190], kj[190], ne = 0;
    for (dsmm_idx v = 0; v < 12; v++) loops[v] = v;
    CHECK(edges_csr(ctx, 1, 0, loops, loops, NULL, 0, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "1 x 1") == TEST_PASS);
    dsmm_csr_destroy(&A);
    CHECK(edges_csr(ctx, 1, 1, loops, loops, NULL, 0, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "1 x 1 loop") == TEST_PASS);
    dsmm_csr_destroy(&A);
    CHECK(edges_csr(ctx, 12, 12, loops, loops, NULL, 0, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "loops only") == TEST_PASS);
    dsmm_idx *p = NULL;
    CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RABBIT, &p));
    for (dsmm_idx v = 0; v < 12; v++) CHECK_EQ_IDX(p[v], v); // singletons, by vertex
    p = dsmm_free(ctx, p);
    CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RCM, &p));
    for (dsmm_idx v = 0; v < 12; v++) CHECK_EQ_IDX(p[v], 11 - v); // reversed singletons
    p = dsmm_free(ctx, p);
    dsmm_csr_destroy(&A);
    for (dsmm_idx v = 0; v < 11; v++) star_i[v] = 5, star_j[v] = v < 5 ? v : v + 1;
    CHECK(edges_csr(ctx, 12, 11, star_i, star_j, NULL, 0, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "star") == TEST_PASS);
    dsmm_csr_destroy(&A);
    for (dsmm_idx i = 0; i < 20; i++)
        for (dsmm_idx j = i + 1; j < 20; j++) ki[ne] = i, kj[ne++] = j;
    CHECK(edges_csr(ctx, 20, ne, ki, kj, NULL, 1, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "K20") == TEST_PASS);
    dsmm_csr_destroy(&A);
    dsmm_idx ti[] = {3, 7, 7}, tj[] = {7, 9, 3};
    CHECK(edges_csr(ctx, 12, 3, ti, tj, NULL, 0, &A) == TEST_PASS);
    CHECK(check_kinds(ctx, A, "triangle and isolated vertices") == TEST_PASS);
    dsmm_csr_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The graph is the pattern of A + A^T without loops: a directed A with loops, values, rows
// shuffled with repeated columns, and 32-bit columns all give the symmetric pattern's answer.
static int test_input_forms(void)
{
    dsmm_ctx *ctx = test_ctx();
    uint64_t seed = test_seed();
    for (int rep = 0; rep < 4; rep++) {
        dsmm_idx n = 150 + 100 * rep;
        dsmm_csr *D = NULL, *S = NULL, *Dt = NULL, *forms[4] = {NULL, NULL, NULL, NULL};
        CHECK_OK(ctx,
                 test_rand_er(ctx, n, 1.5 + rep, 0, DSMM_DOUBLE, seed + 7 * (uint64_t)rep, &D));
        CHECK_OK(ctx, dsmm_csr_transpose(ctx, D, &Dt));
        // S = pattern of D + D^T, loops dropped, built independently of the library's code
        dsmm_coo *T = NULL;
        CHECK_OK(ctx, dsmm_coo_create(ctx, n, n, 0, DSMM_PATTERN, &T));
        int asym = 0;
        for (dsmm_idx i = 0; i < n; i++)
            for (dsmm_idx k = D->rowptr[i]; k < D->rowptr[i + 1]; k++) {
                dsmm_idx j = D->colidx[k];
                if (i == j) continue;
                CHECK_OK(ctx, dsmm_coo_push(T, i, j, 1));
                CHECK_OK(ctx, dsmm_coo_push(T, j, i, 1));
                int back = 0;
                for (dsmm_idx b = D->rowptr[j]; b < D->rowptr[j + 1]; b++)
                    back |= D->colidx[b] == i;
                asym |= !back;
            }
        CHECK(asym); // the input really is directed
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, &S));
        dsmm_coo_destroy(&T);
        // add loops to D: the graph must not change
        CHECK_OK(ctx, dsmm_csr_to_coo(ctx, D, &T));
        for (dsmm_idx v = 0; v < n; v += 3) CHECK_OK(ctx, dsmm_coo_push(T, v, v, 2.5));
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_SUM, &forms[0]));
        dsmm_coo_destroy(&T);
        CHECK_OK(ctx, test_csr_convert(ctx, forms[0], DSMM_FLOAT, 32, &forms[1]));
        CHECK_OK(ctx, test_csr_shuffle(ctx, forms[0], 1, seed + 11, &forms[2]));
        CHECK_OK(ctx, test_csr_convert(ctx, Dt, DSMM_PATTERN, 32, &forms[3]));
        CHECK(forms[1]->colidx32 != NULL && forms[2]->sorted == 0 && forms[3]->colidx32 != NULL);
        for (size_t k = 0; k < NKINDS; k++) {
            dsmm_idx *want = NULL;
            CHECK_OK(ctx, dsmm_csr_reorder(ctx, S, kinds[k], &want));
            CHECK(is_perm(want, n));
            for (int f = 0; f < 4; f++) {
                dsmm_idx *p = NULL;
                CHECK_OK(ctx, dsmm_csr_reorder(ctx, forms[f], kinds[k], &p));
                for (dsmm_idx v = 0; v < n; v++)
                    CHECK_MSG(p[v] == want[v], "%s, form %d, rep %d: perm[%lld] = %lld, want %lld",
                              dsmm_reorder_name(kinds[k]), f, rep, (long long)v, (long long)p[v],
                              (long long)want[v]);
                p = dsmm_free(ctx, p);
            }
            want = dsmm_free(ctx, want);
        }
        for (int f = 0; f < 4; f++) dsmm_csr_destroy(&forms[f]);
        dsmm_csr_destroy(&D);
        dsmm_csr_destroy(&Dt);
        dsmm_csr_destroy(&S);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A path 0-1-...-(n-1) and, in a second graph, two paths, renamed at random: RCM gives
// bandwidth 1 again.
static int test_rcm_path(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 1);
    const dsmm_idx n = 500;
    dsmm_idx *ei = malloc(sizeof(dsmm_idx) * (size_t)n), *ej = malloc(sizeof(dsmm_idx) * (size_t)n);
    dsmm_idx *q = malloc(sizeof(dsmm_idx) * (size_t)n);
    for (int paths = 1; paths <= 2; paths++) {
        dsmm_idx ne = 0;
        for (dsmm_idx v = 0; v + 1 < n; v++)
            if (paths == 1 || v + 1 != n / 2) ei[ne] = v, ej[ne++] = v + 1;
        rand_perm(&g, n, q);
        dsmm_csr *A = NULL;
        dsmm_idx *p = NULL;
        CHECK(edges_csr(ctx, n, ne, ei, ej, q, paths == 1, &A) == TEST_PASS);
        dsmm_idx before = bandwidth(A, NULL);
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RCM, &p));
        CHECK(is_perm(p, n));
        dsmm_idx after = bandwidth(A, p);
        printf("  rcm, %d path(s) of %lld vertices: bandwidth %lld shuffled, %lld after\n", paths,
               (long long)n, (long long)before, (long long)after);
        CHECK(before > n / 2);
        CHECK_EQ_IDX(after, 1);
        p = dsmm_free(ctx, p);
        dsmm_csr_destroy(&A);
    }
    free(ei), free(ej), free(q);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A 30 x 30 grid renamed at random: RCM brings the bandwidth back near the grid's 30 (the
// level sets of a corner start are anti-diagonals, at most 30 vertices each).
static int test_rcm_grid(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    dsmm_rng_init(&g, test_seed(), 2);
    const dsmm_idx s = 30, n = s * s;
    dsmm_idx *ei = malloc(sizeof(dsmm_idx) * (size_t)(2 * n));
    dsmm_idx *ej = malloc(sizeof(dsmm_idx) * (size_t)(2 * n));
    dsmm_idx *q = malloc(sizeof(dsmm_idx) * (size_t)n), ne = 0;
    for (dsmm_idx r = 0; r < s; r++)
        for (dsmm_idx c = 0; c < s; c++) {
            if (c + 1 < s) ei[ne] = r * s + c, ej[ne++] = r * s + c + 1;
            if (r + 1 < s) ei[ne] = r * s + c, ej[ne++] = (r + 1) * s + c;
        }
    rand_perm(&g, n, q);
    dsmm_csr *A = NULL;
    dsmm_idx *p = NULL;
    CHECK(edges_csr(ctx, n, ne, ei, ej, q, 1, &A) == TEST_PASS);
    dsmm_idx before = bandwidth(A, NULL);
    CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RCM, &p));
    CHECK(is_perm(p, n));
    dsmm_idx after = bandwidth(A, p);
    printf("  rcm, %lldx%lld grid: bandwidth %lld shuffled, %lld after\n", (long long)s,
           (long long)s, (long long)before, (long long)after);
    CHECK(before > n / 2);
    CHECK(after <= 2 * (s + 1));
    p = dsmm_free(ctx, p);
    dsmm_csr_destroy(&A);
    free(ei), free(ej), free(q);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Planted partition: 8 communities of 50, p_in 0.3, p_out 0.002, vertices renamed at random.
// After Rabbit Order most edges fall within distance 50 and most communities are contiguous.
static int test_rabbit_planted(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng g;
    uint64_t seed = test_seed();
    const dsmm_idx nb = 8, bs = 50, n = nb * bs;
    dsmm_idx *ei = malloc(sizeof(dsmm_idx) * (size_t)(n * n / 2));
    dsmm_idx *ej = malloc(sizeof(dsmm_idx) * (size_t)(n * n / 2));
    dsmm_idx *q = malloc(sizeof(dsmm_idx) * (size_t)n);
    dsmm_idx *comm = malloc(sizeof(dsmm_idx) * (size_t)n);
    dsmm_idx *mem = malloc(sizeof(dsmm_idx) * (size_t)n);
    for (int rep = 0; rep < 5; rep++) {
        dsmm_rng_init(&g, seed, 10 + (uint64_t)rep);
        dsmm_idx ne = 0;
        for (dsmm_idx i = 0; i < n; i++)
            for (dsmm_idx j = i + 1; j < n; j++)
                if (dsmm_rng_uniform(&g) < (i / bs == j / bs ? 0.3 : 0.002))
                    ei[ne] = i, ej[ne++] = j;
        rand_perm(&g, n, q);
        for (dsmm_idx v = 0; v < n; v++) comm[q[v]] = v / bs;
        dsmm_csr *A = NULL;
        dsmm_idx *p = NULL;
        CHECK(edges_csr(ctx, n, ne, ei, ej, q, 1, &A) == TEST_PASS);
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, DSMM_REORDER_RABBIT, &p));
        CHECK(is_perm(p, n));
        dsmm_idx far_before = 0, far_after = 0, in_block = 0, total = 0;
        for (dsmm_idx i = 0; i < n; i++)
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                dsmm_idx j = A->colidx[k];
                total++;
                far_before += llabs((long long)(i - j)) >= bs;
                far_after += llabs((long long)(p[i] - p[j])) >= bs;
                in_block += p[i] / bs == p[j] / bs;
            }
        // a community is contiguous when its members, but for the 2 lowest and 2 highest (a
        // low-degree vertex may join a neighbouring community first), span less than 2 bs
        int contiguous = 0, strict = 0;
        for (dsmm_idx c = 0; c < nb; c++) {
            dsmm_idx cnt = 0;
            for (dsmm_idx v = 0; v < n; v++)
                if (comm[v] == c) mem[cnt++] = p[v];
            qsort(mem, (size_t)cnt, sizeof *mem, cmp_idx);
            contiguous += mem[cnt - 3] - mem[2] < 2 * bs;
            strict += mem[cnt - 1] - mem[0] < 2 * bs;
        }
        printf("  rabbit, planted 8 x 50 (rep %d): edges at distance >= 50: %.1f%% shuffled, "
               "%.1f%% after; in diagonal blocks %.1f%%; communities spanning < 100: %d of 8, "
               "%d of 8 without their 2 + 2 outermost members\n",
               rep, 100.0 * (double)far_before / (double)total,
               100.0 * (double)far_after / (double)total, 100.0 * (double)in_block / (double)total,
               strict, contiguous);
        CHECK((double)far_before > 0.5 * (double)total);
        CHECK((double)far_after < 0.1 * (double)total);
        CHECK(contiguous >= 6);
        p = dsmm_free(ctx, p);
        dsmm_csr_destroy(&A);
    }
    free(ei), free(ej), free(q), free(comm), free(mem);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Two calls, and a call on another context, give the same permutation.
static int test_deterministic(void)
{
    dsmm_ctx *ctx = test_ctx(), *ctx2 = test_ctx();
    dsmm_csr *A = NULL, *B = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 12, 8, 0, DSMM_PATTERN, test_seed(), &A));
    CHECK_OK(ctx2, dsmm_csr_copy(ctx2, A, DSMM_PATTERN, &B));
    for (size_t k = 0; k < NKINDS; k++) {
        dsmm_idx *p1 = NULL, *p2 = NULL, *p3 = NULL;
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, kinds[k], &p1));
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, A, kinds[k], &p2));
        CHECK_OK(ctx2, dsmm_csr_reorder(ctx2, B, kinds[k], &p3));
        CHECK(is_perm(p1, A->nrows));
        CHECK(memcmp(p1, p2, sizeof *p1 * (size_t)A->nrows) == 0);
        CHECK(memcmp(p1, p3, sizeof *p1 * (size_t)A->nrows) == 0);
        p1 = dsmm_free(ctx, p1);
        p2 = dsmm_free(ctx, p2);
        p3 = dsmm_free(ctx2, p3);
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    CHECK_NO_LEAK(ctx);
    CHECK_NO_LEAK(ctx2);
    return TEST_PASS;
}

// The k-th allocation fails for k = 0, 1, ... until the call succeeds: DSMM_ERR_NOMEM, *perm
// NULL, nothing leaked; the answer after all is the undisturbed one.
static int test_oom(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *S = NULL;
    CHECK_OK(ctx, test_rand_rmat(ctx, 10, 8, 1, DSMM_PATTERN, test_seed(), &A));
    CHECK_OK(ctx, test_csr_shuffle(ctx, A, 0, test_seed() + 1, &S)); // the unsorted path
    for (size_t o = 0; o < 2 * NKINDS; o++) {
        const dsmm_csr *in = o % 2 ? S : A;
        dsmm_reorder kind = kinds[o / 2];
        dsmm_idx *want = NULL;
        CHECK_OK(ctx, dsmm_csr_reorder(ctx, in, kind, &want));
        size_t base = dsmm_ctx_mem_in_use(ctx);
        for (long k = 0;; k++) {
            CHECK(k < 1000);
            dsmm_idx *p = (dsmm_idx *)&p;
            dsmm_ctx_clear_error(ctx);
            dsmm_ctx_fail_alloc_at(ctx, k);
            dsmm_status st = dsmm_csr_reorder(ctx, in, kind, &p);
            dsmm_ctx_fail_alloc_at(ctx, -1);
            if (st == DSMM_OK) {
                CHECK(memcmp(p, want, sizeof *p * (size_t)in->nrows) == 0);
                p = dsmm_free(ctx, p);
                CHECK_MSG(k > 0, "%s made no allocation", dsmm_reorder_name(kind));
                break;
            }
            CHECK_MSG(st == DSMM_ERR_NOMEM, "%s, input %zu, k %ld: %s", dsmm_reorder_name(kind),
                      o % 2, k, dsmm_ctx_last_error(ctx));
            CHECK(p == NULL);
            CHECK_EQ_IDX(dsmm_ctx_mem_in_use(ctx), base);
        }
        want = dsmm_free(ctx, want);
    }
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&S);
    dsmm_ctx_clear_error(ctx);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_names),
        TEST(test_errors),
        TEST(test_rcm_small),
        TEST(test_rabbit_small),
        TEST(test_against_reference),
        TEST(test_input_forms),
        TEST(test_rcm_path),
        TEST(test_rcm_grid),
        TEST(test_rabbit_planted),
        TEST(test_deterministic),
        TEST(test_oom),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
