// tests/apps/test_clm.c: the cluster tools (src/apps/clm/clm.c): reading clusterings (label and
// native formats, shared dictionaries, bad input), clm dist's measures on hand-computed cases
// and against brute-force pair counting on random clusterings, and clm info's measures on a
// hand-computed graph (the same numbers mcl 22-282's clm info prints) and against Newman's
// modularity written out over all node pairs.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "apps/apps.h"
#include "io/io.h"

static dsmm_status from_ids(dsmm_ctx *ctx, dsmm_idx n, const dsmm_idx *ids, dsmm_clustering **C)
{
    return dsmm_clustering_create(ctx, n, ids, C);
}

// Writes text to a scratch file and returns its path.
static const char *scratch(const char *name, const char *text)
{
    const char *p = test_path(name);
    return test_write_file(p, text, strlen(text)) == 0 ? p : NULL;
}

static int test_identical(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *A = NULL;
    const dsmm_idx ids[] = {0, 0, 1, 1, 1, 2, 3, 3};
    CHECK_OK(ctx, from_ids(ctx, 8, ids, &A));
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, A, &s));
    CHECK_EQ_IDX(s.n, 8);
    CHECK_EQ_IDX(s.nclusters_a, 4);
    CHECK_EQ_IDX(s.nclusters_b, 4);
    CHECK_EQ_IDX(s.sj, 0);
    CHECK_EQ_IDX(s.mk, 0);
    CHECK(s.vi == 0.0);
    CHECK(s.rand == 1.0 && s.jaccard == 1.0 && s.ari == 1.0);
    dsmm_clustering_destroy(&A);
    CHECK(A == NULL);
    dsmm_clustering_destroy(NULL);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// A = {0 1 2}{3 4 5}, B = {0 1}{2 3}{4 5}: cells |a & b| = 2 1 / 1 2 (a1: b1 b2, a2: b2 b3).
static int test_hand(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *A = NULL, *B = NULL;
    const dsmm_idx a[] = {7, 7, 7, 9, 9, 9}, b[] = {0, 0, 1, 1, 2, 2};
    CHECK_OK(ctx, from_ids(ctx, 6, a, &A));
    CHECK_OK(ctx, from_ids(ctx, 6, b, &B));
    CHECK_EQ_IDX(A->nclusters, 2);
    CHECK_EQ_IDX(A->cluster[0], 0);
    CHECK_EQ_IDX(A->cluster[5], 1);
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
    // split/join: d1 = 6 - (2 + 2) = 2 (largest cell of each A cluster), d2 = 6 - (2+1+2) = 1
    CHECK_EQ_IDX(s.sj_ab, 2);
    CHECK_EQ_IDX(s.sj_ba, 1);
    CHECK_EQ_IDX(s.sj, 3);
    // Mirkin: d1 = 9 + 9 - (4+1+1+4) = 8, d2 = 4 + 4 + 4 - 10 = 2
    CHECK_EQ_IDX(s.mk_ab, 8);
    CHECK_EQ_IDX(s.mk_ba, 2);
    CHECK_EQ_IDX(s.mk, 10);
    // VI: d1 = H(B|A) = (2 * 3 ln 3 - 2 * 2 ln 2) / 6 = ln 3 - (2/3) ln 2,
    //     d2 = H(A|B) = (3 * 2 ln 2 - 2 * 2 ln 2) / 6 = ln 2 / 3
    CHECK_NEAR(s.vi_ab, log(3.0) - 2.0 / 3.0 * log(2.0), 1e-12);
    CHECK_NEAR(s.vi_ba, log(2.0) / 3.0, 1e-12);
    CHECK_NEAR(s.vi, s.vi_ab + s.vi_ba, 1e-15);
    // Pairs: 15 in all; together in A 6, in B 3, in both 2.
    // Rand = (15 - 6 - 3 + 2 * 2) / 15 = 2/3; Jaccard = 2 / (6 + 3 - 2) = 2/7;
    // ARI: expected 6 * 3 / 15 = 1.2, (2 - 1.2) / ((6 + 3) / 2 - 1.2) = 0.8 / 3.3.
    CHECK_NEAR(s.rand, 2.0 / 3.0, 1e-12);
    CHECK_NEAR(s.jaccard, 2.0 / 7.0, 1e-12);
    CHECK_NEAR(s.ari, 0.8 / 3.3, 1e-12);
    // Swapping the sides swaps the directions.
    dsmm_clm_dist_stats r;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, B, A, &r));
    CHECK_EQ_IDX(r.sj_ab, 1);
    CHECK_EQ_IDX(r.sj_ba, 2);
    CHECK_EQ_IDX(r.mk_ab, 2);
    CHECK_NEAR(r.vi_ab, s.vi_ba, 1e-15);
    CHECK(r.ari == s.ari && r.rand == s.rand);
    dsmm_clustering_destroy(&A);
    dsmm_clustering_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// One node moved: A = {0 1 2}{3 4}, B = {0 1}{2 3 4}.
static int test_moved(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *A = NULL, *B = NULL;
    const dsmm_idx a[] = {0, 0, 0, 1, 1}, b[] = {0, 0, 1, 1, 1};
    CHECK_OK(ctx, from_ids(ctx, 5, a, &A));
    CHECK_OK(ctx, from_ids(ctx, 5, b, &B));
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
    // Moving node 2 back is one split and one join.
    CHECK_EQ_IDX(s.sj_ab, 1);
    CHECK_EQ_IDX(s.sj_ba, 1);
    // Pairs: 10; A together 3 + 1 = 4, B 1 + 3 = 4, both 1 + 1 = 2: Rand (10 - 8 + 4) / 10.
    CHECK_NEAR(s.rand, 0.6, 1e-12);
    CHECK_NEAR(s.jaccard, 2.0 / 6.0, 1e-12);
    // ARI: expected 4 * 4 / 10 = 1.6, (2 - 1.6) / (4 - 1.6) = 1/6.
    CHECK_NEAR(s.ari, 1.0 / 6.0, 1e-12);
    dsmm_clustering_destroy(&A);
    dsmm_clustering_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// All singletons against one cluster of 4 (clm dist prints d1=0 d2=3, vi d2 = ln 4, and
// rand = jaccard = arand = 0); singletons against singletons: clm prints nan, dsmm 1.
static int test_extremes(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *S = NULL, *O = NULL;
    const dsmm_idx s_ids[] = {0, 1, 2, 3}, o_ids[] = {5, 5, 5, 5};
    CHECK_OK(ctx, from_ids(ctx, 4, s_ids, &S));
    CHECK_OK(ctx, from_ids(ctx, 4, o_ids, &O));
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, S, O, &s));
    CHECK_EQ_IDX(s.sj_ab, 0);
    CHECK_EQ_IDX(s.sj_ba, 3);
    CHECK_EQ_IDX(s.mk_ab, 0);
    CHECK_EQ_IDX(s.mk_ba, 12);
    CHECK(s.vi_ab == 0.0);
    CHECK_NEAR(s.vi_ba, log(4.0), 1e-12);
    CHECK(s.rand == 0.0 && s.jaccard == 0.0 && s.ari == 0.0);
    CHECK_OK(ctx, dsmm_clm_dist(ctx, S, S, &s));
    CHECK(s.rand == 1.0 && s.jaccard == 1.0 && s.ari == 1.0);
    CHECK_OK(ctx, dsmm_clm_dist(ctx, O, O, &s));
    CHECK(s.rand == 1.0 && s.jaccard == 1.0 && s.ari == 1.0);
    CHECK_EQ_IDX(s.nclusters_a, 1);
    // Empty and one-node clusterings.
    dsmm_clustering *E = NULL, *one = NULL;
    CHECK_OK(ctx, from_ids(ctx, 0, NULL, &E));
    CHECK_OK(ctx, dsmm_clm_dist(ctx, E, E, &s));
    CHECK_EQ_IDX(s.n, 0);
    CHECK(s.ari == 1.0 && s.vi == 0.0);
    CHECK_OK(ctx, from_ids(ctx, 1, o_ids, &one));
    CHECK_OK(ctx, dsmm_clm_dist(ctx, one, E, &s)); // node 0 is E's extra cluster
    CHECK_EQ_IDX(s.n, 1);
    CHECK_EQ_IDX(s.only_a, 1);
    CHECK_EQ_IDX(s.sj, 0);
    dsmm_clustering_destroy(&E);
    dsmm_clustering_destroy(&one);
    dsmm_clustering_destroy(&S);
    dsmm_clustering_destroy(&O);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The nodes one clustering lacks form one extra cluster there (clm's "fixed" partition);
// nodes neither lists are not compared.
static int test_missing(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *A = NULL, *B = NULL;
    const dsmm_idx a[] = {0, 0, 1, 1, -1, -1, -1}, b[] = {0, 0, 0, 1, 1, 1, -1};
    CHECK_OK(ctx, from_ids(ctx, 7, a, &A));
    CHECK_OK(ctx, from_ids(ctx, 6, b, &B));
    CHECK_EQ_IDX(A->listed, 4);
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
    CHECK_EQ_IDX(s.n, 6); // node 6 is in neither
    CHECK_EQ_IDX(s.only_a, 0);
    CHECK_EQ_IDX(s.only_b, 2);
    CHECK_EQ_IDX(s.nclusters_a, 3); // {0 1} {2 3} and the extra {4 5}
    CHECK_EQ_IDX(s.nclusters_b, 2); // {0 1 2} {3 4 5}
    // Meet {0 1}{2}{3}{4 5}: A splits 2 or 3 off {2 3}: 1; B splits 2 off {0 1 2} and 3 off
    // {3 4 5}: 2.
    CHECK_EQ_IDX(s.sj_ab, 1);
    CHECK_EQ_IDX(s.sj_ba, 2);
    // Mirkin: A 4 + 4 + 4 - (4 + 1 + 1 + 4) = 2, B 9 + 9 - 10 = 8.
    CHECK_EQ_IDX(s.mk_ab, 2);
    CHECK_EQ_IDX(s.mk_ba, 8);
    const dsmm_idx bad[] = {0, -2};
    dsmm_clustering *X = NULL;
    CHECK_ST(ctx, dsmm_clustering_create(ctx, 2, bad, &X), DSMM_ERR_ARG);
    CHECK(X == NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_clm_dist(ctx, A, NULL, &s), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_clustering_destroy(&A);
    dsmm_clustering_destroy(&B);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Large and sparse ids are renumbered in order of first appearance.
static int test_create_ids(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_clustering *A = NULL;
    const dsmm_idx ids[] = {1000000, 5, -1, 1000000, 77, 5};
    CHECK_OK(ctx, from_ids(ctx, 6, ids, &A));
    CHECK_EQ_IDX(A->nclusters, 3);
    CHECK_EQ_IDX(A->listed, 5);
    const dsmm_idx want[] = {0, 1, -1, 0, 2, 1};
    for (int i = 0; i < 6; i++) CHECK_EQ_IDX(A->cluster[i], want[i]);
    dsmm_clustering_destroy(&A);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Brute force over all node pairs and a dense contingency table, on random clusterings with
// random missing nodes.
static int test_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng rng;
    dsmm_rng_init(&rng, test_seed(), 17);
    for (int trial = 0; trial < 200; trial++) {
        dsmm_idx n = 1 + (dsmm_idx)(dsmm_rng_u64(&rng) % 60);
        dsmm_idx ka = 1 + (dsmm_idx)(dsmm_rng_u64(&rng) % (uint64_t)n);
        dsmm_idx kb = 1 + (dsmm_idx)(dsmm_rng_u64(&rng) % (uint64_t)n);
        int holes = trial % 3 == 0;
        dsmm_idx *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        CHECK(a && b);
        for (dsmm_idx i = 0; i < n; i++) {
            a[i] = (dsmm_idx)(dsmm_rng_u64(&rng) % (uint64_t)ka);
            b[i] = (dsmm_idx)(dsmm_rng_u64(&rng) % (uint64_t)kb);
            if (holes && dsmm_rng_uniform(&rng) < 0.1) a[i] = -1;
            if (holes && dsmm_rng_uniform(&rng) < 0.1) b[i] = -1;
        }
        dsmm_clustering *A = NULL, *B = NULL;
        CHECK_OK(ctx, from_ids(ctx, n, a, &A));
        CHECK_OK(ctx, from_ids(ctx, n, b, &B));
        dsmm_clm_dist_stats s;
        CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
        // Reference: nodes listed by either; the missing ones of a side share the id n.
        dsmm_idx m = 0, *ra = malloc((size_t)n * sizeof *ra), *rb = malloc((size_t)n * sizeof *rb);
        CHECK(ra && rb);
        for (dsmm_idx i = 0; i < n; i++) {
            if (A->cluster[i] < 0 && B->cluster[i] < 0) continue;
            ra[m] = A->cluster[i] >= 0 ? A->cluster[i] : n;
            rb[m] = B->cluster[i] >= 0 ? B->cluster[i] : n;
            m++;
        }
        CHECK_EQ_IDX(s.n, m);
        double both = 0, only_a = 0, only_b = 0, none = 0;
        for (dsmm_idx i = 0; i < m; i++)
            for (dsmm_idx j = i + 1; j < m; j++) {
                int sa = ra[i] == ra[j], sb = rb[i] == rb[j];
                both += sa && sb;
                only_a += sa && !sb;
                only_b += !sa && sb;
                none += !sa && !sb;
            }
        double t = both + only_a + only_b + none;
        double rand_ref = t > 0 ? (both + none) / t : 1.0;
        double jac_ref = both + only_a + only_b > 0 ? both / (both + only_a + only_b) : 1.0;
        double pa = both + only_a, pb = both + only_b, e = t > 0 ? pa * pb / t : 0;
        double den = (pa + pb) / 2 - e;
        double ari_ref = den != 0 ? (both - e) / den : 1.0;
        CHECK_NEAR(s.rand, rand_ref, 1e-12);
        CHECK_NEAR(s.jaccard, jac_ref, 1e-12);
        CHECK_NEAR(s.ari, ari_ref, 1e-12);
        // Split/join, Mirkin and VI from a dense table over ids 0..2n.
        dsmm_idx K = 2 * n;
        dsmm_idx *tab = calloc((size_t)(K * K), sizeof *tab);
        dsmm_idx *sa = calloc((size_t)K, sizeof *sa), *sb = calloc((size_t)K, sizeof *sb);
        CHECK(tab && sa && sb);
        for (dsmm_idx i = 0; i < m; i++) tab[ra[i] * K + rb[i]]++, sa[ra[i]]++, sb[rb[i]]++;
        dsmm_idx sj_ab = m, sj_ba = m, q_ab = 0, q_a = 0, q_b = 0;
        double h_ab = 0, h_a = 0, h_b = 0;
        for (dsmm_idx x = 0; x < K; x++) {
            dsmm_idx best = 0, bestb = 0;
            for (dsmm_idx y = 0; y < K; y++) {
                dsmm_idx v = tab[x * K + y], w = tab[y * K + x];
                if (v > best) best = v;
                if (w > bestb) bestb = w;
                q_ab += v * v;
                if (v > 0) h_ab -= (double)v / (double)m * log((double)v / (double)m);
            }
            sj_ab -= best;
            sj_ba -= bestb;
            q_a += sa[x] * sa[x];
            q_b += sb[x] * sb[x];
            if (sa[x] > 0) h_a -= (double)sa[x] / (double)m * log((double)sa[x] / (double)m);
            if (sb[x] > 0) h_b -= (double)sb[x] / (double)m * log((double)sb[x] / (double)m);
        }
        CHECK_EQ_IDX(s.sj_ab, sj_ab);
        CHECK_EQ_IDX(s.sj_ba, sj_ba);
        CHECK_EQ_IDX(s.mk_ab, q_a - q_ab);
        CHECK_EQ_IDX(s.mk_ba, q_b - q_ab);
        // VI = 2 H(A,B) - H(A) - H(B); H(B|A) = H(A,B) - H(A).
        CHECK_NEAR(s.vi_ab, h_ab - h_a, 1e-9);
        CHECK_NEAR(s.vi_ba, h_ab - h_b, 1e-9);
        free(tab);
        free(sa);
        free(sb);
        free(ra);
        free(rb);
        free(a);
        free(b);
        dsmm_clustering_destroy(&A);
        dsmm_clustering_destroy(&B);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_read_labels(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_labels *L = NULL;
    dsmm_clustering *A = NULL, *B = NULL;
    // Tabs, spaces, CRLF, blank lines, no final newline.
    const char *pa = scratch("a.txt", "x\ty\tz\r\n\n  \t\nu v\nw");
    CHECK(pa != NULL);
    CHECK_OK(ctx, dsmm_clustering_read(ctx, pa, &L, 1, &A));
    CHECK(L != NULL);
    CHECK_EQ_IDX(A->n, 6);
    CHECK_EQ_IDX(A->nclusters, 3);
    CHECK_EQ_IDX(A->listed, 6);
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "z")], 0);
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "v")], 1);
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "w")], 2);
    // The second file shares the dictionary and adds a node A lacks.
    const char *pb = scratch("b.txt", "z y x u\nv w extra\n");
    CHECK_OK(ctx, dsmm_clustering_read(ctx, pb, &L, 1, &B));
    CHECK_EQ_IDX(dsmm_labels_count(L), 7);
    CHECK_EQ_IDX(B->n, 7);
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
    CHECK_EQ_IDX(s.n, 7);
    CHECK_EQ_IDX(s.only_b, 1);
    CHECK_EQ_IDX(s.nclusters_a, 4);
    // A = {x y z}{u v}{w}{extra}, B = {x y z u}{v w extra}: A to meet 1 (split u or v),
    // B to meet: {x y z u} -> 1, {v w extra} -> 2.
    CHECK_EQ_IDX(s.sj_ab, 1);
    CHECK_EQ_IDX(s.sj_ba, 3);
    dsmm_clustering_destroy(&A);
    dsmm_clustering_destroy(&B);

    // Empty file: no clusters; against a fixed dictionary unknown labels are errors.
    const char *pe = scratch("empty.txt", "");
    CHECK_OK(ctx, dsmm_clustering_read(ctx, pe, &L, 0, &A));
    CHECK_EQ_IDX(A->nclusters, 0);
    CHECK_EQ_IDX(A->listed, 0);
    CHECK_EQ_IDX(A->n, 7);
    dsmm_clustering_destroy(&A);
    const char *pu = scratch("unknown.txt", "x y\nz nobody\n");
    CHECK_ST(ctx, dsmm_clustering_read(ctx, pu, &L, 0, &A), DSMM_ERR_FORMAT);
    CHECK(A == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "unknown.txt:2: node 'nobody'");
    dsmm_ctx_clear_error(ctx);

    // A node listed twice: both lines named.
    const char *pd = scratch("dup.txt", "a b\n\nc a\n");
    CHECK_ST(ctx, dsmm_clustering_read(ctx, pd, &L, 1, &A), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx),
                   "dup.txt:3: node 'a' is listed twice (also on line 1)");
    dsmm_ctx_clear_error(ctx);
    const char *pd2 = scratch("dup2.txt", "a b a\n");
    CHECK_ST(ctx, dsmm_clustering_read(ctx, pd2, &L, 1, &A), DSMM_ERR_FORMAT);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "'a' is listed twice (twice on line 1)");
    dsmm_ctx_clear_error(ctx);
    // A NUL byte (fuzz_clusters found that such a label was added, then never found again).
    const char *pz = test_path("nul.txt");
    CHECK(test_write_file(pz, "a b\nc\0d e\n", 11) == 0);
    CHECK_ST(ctx, dsmm_clustering_read(ctx, pz, &L, 1, &A), DSMM_ERR_FORMAT);
    CHECK(A == NULL);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "nul.txt:2: NUL byte in a text file");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_clustering_read(ctx, test_path("no-such-file"), &L, 1, &A), DSMM_ERR_IO);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "no-such-file");
    dsmm_ctx_clear_error(ctx);
    CHECK_ST(ctx, dsmm_clustering_read(ctx, pa, NULL, 1, &A), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// mcl's native format: members are indices, unlisted domain nodes form one more cluster.
static int test_read_native(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_labels *L = NULL;
    dsmm_clustering *A = NULL, *B = NULL;
    const char *pn = scratch("n.mci", "# cline: mcl g.mci -I 2\n(mclheader\nmcltype matrix\n"
                                      "dimensions 7x3\n)\n(mclmatrix\nbegin\n0 0 1 2 $\n"
                                      "1 3:1 4:1.0 $\n2 $\n)\n");
    CHECK_OK(ctx, dsmm_clustering_read(ctx, pn, &L, 1, &A));
    CHECK_EQ_IDX(A->n, 7);
    CHECK_EQ_IDX(A->nclusters, 3); // {0 1 2} {3 4} and the unlisted {5 6}
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "4")], 1);
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "5")], 2);
    CHECK_EQ_IDX(A->cluster[dsmm_labels_find(L, "6")], 2);
    // The same clustering in label format, against an index dictionary.
    dsmm_labels *I = NULL;
    CHECK_OK(ctx, dsmm_labels_create_index(ctx, 7, &I));
    CHECK(strcmp(dsmm_labels_name(I, 5), "5") == 0);
    const char *pl = scratch("n.txt", "0\t1\t2\n3\t4\n5 6\n");
    CHECK_OK(ctx, dsmm_clustering_read(ctx, pl, &I, 0, &B));
    dsmm_clm_dist_stats s;
    CHECK_OK(ctx, dsmm_clm_dist(ctx, A, B, &s));
    CHECK_EQ_IDX(s.sj, 0);
    CHECK_EQ_IDX(s.n, 7);
    dsmm_clustering_destroy(&A);
    dsmm_clustering_destroy(&B);
    const char *bad[] = {
        "(mclheader\ndimensions 3x1\n)\n(mclmatrix\nbegin\n0 0 7 $\n)\n",
        "(mclheader\ndimensions 3x1\n)\n(mclmatrix\nbegin\n0 0 1\n",
        "(mclheader\ndimensions 3\n)\n(mclmatrix\nbegin\n)\n",
        "(mclheader\ndimensions 3x1\n)\n(mclmatrix\nbegin\n0 0 x $\n)\n",
        "(mclheader\ndimensions 3x1\n)\n(mclmatrix\nbegin\n0 0 1 $ 0 1 $\n)\n",
        "(mclheader\ndimensions 99999999999x1\n)\n(mclmatrix\nbegin\n)\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *pb = scratch("bad.mci", bad[k]);
        dsmm_status st = dsmm_clustering_read(ctx, pb, &L, 1, &A);
        CHECK_MSG(st == DSMM_ERR_FORMAT, "case %zu: %s", k, dsmm_ctx_last_error(ctx));
        CHECK(A == NULL);
        dsmm_ctx_clear_error(ctx);
    }
    dsmm_labels_destroy(&L);
    dsmm_labels_destroy(&I);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// The path a - b - c = d (weights 1, 1, 2), as clm info scores it (mcl 22-282 prints the same):
//   two = {a b}{c d}: loops a 1, b 1, c 2, d 2. Coverage 1 - (|c| - div/ctr) / |N u c|:
//     a: in 2, out 0, ssq 2: ctr 1/2, div 1: 1 - (2 - 2)/2 = 1
//     b: in 2 (loop, a), out 1 (c), ssq 3: ctr 1/3, div 1/3: 1 - (2 - 1)/3 = 2/3
//     c: in 4 (loop, d), out 1 (b), ssq 9: ctr 9/25, div 3/5: 1 - (2 - 5/3)/3 = 8/9
//     d: in 4, out 0, ssq 8: 1
//   eff = (1 + 2/3 + 8/9 + 1) / 4 = 8/9; mf = (1 + 2/3 + 4/5 + 1) / 4 = 13/15;
//   mod (no loops, 2m = 8): 2/8 - (3/8)^2 + 4/8 - (5/8)^2 = 7/32; af = (2 + 2) / 12 = 1/3.
static int test_info_hand(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_csr *A = NULL, *G = NULL;
    dsmm_labels *L = NULL;
    dsmm_clustering *C = NULL;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.format = DSMM_FORMAT_ABC;
    const char *net = "a\tb\t1\nb\tc\t1\nc\td\t2\n";
    CHECK_OK(ctx, dsmm_read_buffer(ctx, net, strlen(net), "net.abc", &o, &A, &L, NULL));
    CHECK_OK(ctx, dsmmi_clm_symmetrize(ctx, A, &G));
    CHECK_EQ_IDX(G->nnz, 6);
    dsmm_clm_info_stats s;

    CHECK_OK(ctx, dsmm_clustering_read(ctx, scratch("two.txt", "a b\nc d\n"), &L, 0, &C));
    CHECK_OK(ctx, dsmm_clm_info(ctx, G, C, &s));
    CHECK_NEAR(s.efficiency, 8.0 / 9.0, 1e-12);
    CHECK_NEAR(s.massfrac, 13.0 / 15.0, 1e-12);
    CHECK_NEAR(s.modularity, 7.0 / 32.0, 1e-12);
    CHECK_NEAR(s.areafrac, 1.0 / 3.0, 1e-12);
    CHECK_EQ_IDX(s.nclusters, 2);
    CHECK_EQ_IDX(s.size_max, 2);
    CHECK_EQ_IDX(s.dgi, 1);
    CHECK_EQ_IDX(s.twi, 1);
    CHECK_EQ_IDX(s.twl, 2);
    CHECK_EQ_IDX(s.qrt, 2);
    dsmm_clustering_destroy(&C);

    // Singletons: clm info prints eff=0.45370 mod=-0.28125 mf=0.43333 af=-0.08333 (a sentinel
    // of clm's, which dsmm prints too; the statistic is 0), ncl=4 max=1 ctr=1.0 avg=1.0 min=1
    // DGI=1 TWI=2 TWL=1 sgl=4.
    CHECK_OK(ctx, dsmm_clustering_read(ctx, scratch("sg.txt", "a\nb\nc\nd\n"), &L, 0, &C));
    CHECK_OK(ctx, dsmm_clm_info(ctx, G, C, &s));
    CHECK_NEAR(s.efficiency, 0.45370, 5e-6);
    CHECK_NEAR(s.modularity, -18.0 / 64.0, 1e-12);
    CHECK_NEAR(s.massfrac, 0.43333, 5e-6);
    CHECK(s.areafrac == 0.0);
    CHECK_NEAR(dsmmi_clm_af_shown(&s), -1.0 / 12.0, 1e-15);
    CHECK_EQ_IDX(s.singletons, 4);
    CHECK_EQ_IDX(s.twi, 2);
    CHECK_EQ_IDX(s.twl, 1);
    CHECK_NEAR(s.size_ctr, 1.0, 0);
    dsmm_clustering_destroy(&C);

    // One cluster: eff=0.61111 mod=0.00000 mf=1.00000 af=1.00000 DGI=1 TWI=0 TWL=4 qrt=1.
    CHECK_OK(ctx, dsmm_clustering_read(ctx, scratch("one.txt", "d c b a\n"), &L, 0, &C));
    CHECK_OK(ctx, dsmm_clm_info(ctx, G, C, &s));
    CHECK_NEAR(s.efficiency, 0.61111, 5e-6);
    CHECK_NEAR(s.modularity, 0.0, 1e-15);
    CHECK_NEAR(s.massfrac, 1.0, 1e-15);
    CHECK_NEAR(s.areafrac, 1.0, 1e-15);
    CHECK_EQ_IDX(s.twi, 0);
    CHECK_EQ_IDX(s.twl, 4);
    CHECK_EQ_IDX(s.qrt, 1);
    dsmm_clustering_destroy(&C);

    // A node left out is in no cluster: listed 3, af over all 4 nodes.
    CHECK_OK(ctx, dsmm_clustering_read(ctx, scratch("part.txt", "a b\nc\n"), &L, 0, &C));
    CHECK_OK(ctx, dsmm_clm_info(ctx, G, C, &s));
    CHECK_EQ_IDX(s.listed, 3);
    CHECK_EQ_IDX(s.n, 4);
    CHECK_NEAR(s.areafrac, 2.0 / 12.0, 1e-15);
    dsmm_clustering_destroy(&C);

    CHECK_ST(ctx, dsmm_clm_info(ctx, NULL, C, &s), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_clustering_destroy(&C);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&G);
    dsmm_labels_destroy(&L);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Modularity against Newman's definition over all pairs,
// Q = 1/(2m) sum_ij (A_ij - k_i k_j / 2m) [c_i == c_j], on random weighted graphs; mass
// fraction against its definition with the loop as clm sets it.
static int test_info_random(void)
{
    dsmm_ctx *ctx = test_ctx();
    dsmm_rng rng;
    dsmm_rng_init(&rng, test_seed(), 29);
    for (int trial = 0; trial < 50; trial++) {
        dsmm_idx n = 2 + (dsmm_idx)(dsmm_rng_u64(&rng) % 30);
        double *W = calloc((size_t)(n * n), sizeof *W);
        dsmm_idx *ids = malloc((size_t)n * sizeof *ids);
        CHECK(W && ids);
        dsmm_coo *T = NULL;
        CHECK_OK(ctx, dsmm_coo_create(ctx, n, n, 0, DSMM_DOUBLE, &T));
        for (dsmm_idx i = 0; i < n; i++)
            for (dsmm_idx j = i + 1; j < n; j++)
                if (dsmm_rng_uniform(&rng) < 0.3) {
                    double w = 0.5 + dsmm_rng_uniform(&rng);
                    W[i * n + j] = W[j * n + i] = w;
                    CHECK_OK(ctx, dsmm_coo_push(T, i, j, w));
                }
        for (dsmm_idx i = 0; i < n; i++)
            ids[i] = (dsmm_idx)(dsmm_rng_u64(&rng) % 4) - (trial % 2 == 0 ? 0 : 1);
        dsmm_csr *A = NULL, *G = NULL;
        dsmm_clustering *C = NULL;
        CHECK_OK(ctx, dsmm_coo_to_csr(ctx, T, DSMM_DUP_ERROR, &A));
        CHECK_OK(ctx, dsmmi_clm_symmetrize(ctx, A, &G));
        CHECK_OK(ctx, from_ids(ctx, n, ids, &C));
        dsmm_clm_info_stats s;
        CHECK_OK(ctx, dsmm_clm_info(ctx, G, C, &s));
        double two_m = 0, q = 0, mf = 0;
        dsmm_idx listed = 0;
        for (dsmm_idx i = 0; i < n * n; i++) two_m += W[i];
        for (dsmm_idx i = 0; i < n; i++) {
            double ki = 0, in = 0, wmax = 0;
            for (dsmm_idx j = 0; j < n; j++) {
                ki += W[i * n + j];
                if (W[i * n + j] > wmax) wmax = W[i * n + j];
                if (C->cluster[i] >= 0 && C->cluster[i] == C->cluster[j]) in += W[i * n + j];
            }
            if (C->cluster[i] < 0) continue;
            listed++;
            double loop = wmax > 0 ? wmax : 1.0;
            mf += (in + loop) / (ki + loop);
            for (dsmm_idx j = 0; j < n; j++) {
                double kj = 0;
                for (dsmm_idx l = 0; l < n; l++) kj += W[j * n + l];
                if (C->cluster[i] == C->cluster[j] && two_m > 0)
                    q += (W[i * n + j] - ki * kj / two_m) / two_m;
            }
        }
        CHECK_EQ_IDX(s.listed, listed);
        CHECK_NEAR(s.modularity, q, 1e-12);
        CHECK_NEAR(s.massfrac, listed ? mf / (double)listed : 0.0, 1e-12);
        CHECK(s.efficiency >= -1.0 && s.efficiency <= 1.0 + 1e-12);
        dsmm_coo_destroy(&T);
        dsmm_csr_destroy(&A);
        dsmm_csr_destroy(&G);
        dsmm_clustering_destroy(&C);
        free(W);
        free(ids);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every allocation of read, dist, info and symmetrize made to fail in turn: DSMM_ERR_NOMEM,
// outputs left NULL, nothing leaked (STYLE.md §7).
static int test_oom(void)
{
    dsmm_ctx *ctx = test_ctx();
    const char *pa = scratch("oom-a.txt", "a b\nc d e\n");
    const char *pb = scratch("oom-b.mci", "(mclheader\ndimensions 5x2\n)\n(mclmatrix\nbegin\n"
                                          "0 0 1 2 $\n1 3 $\n)\n");
    const char *net = "a b 1\nb c 2\nc d 1\nd e 1\n";
    int done = 0;
    for (long k = 0; !done && k < 10000; k++) {
        dsmm_labels *L = NULL, *I = NULL;
        dsmm_clustering *A = NULL, *B = NULL;
        dsmm_csr *G0 = NULL, *G = NULL;
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.format = DSMM_FORMAT_ABC;
        dsmm_clm_dist_stats ds;
        dsmm_clm_info_stats is;
        dsmm_ctx_fail_alloc_at(ctx, k);
        dsmm_status st = dsmm_clustering_read(ctx, pa, &L, 1, &A);
        if (st == DSMM_OK) st = dsmm_labels_create_index(ctx, 5, &I);
        if (st == DSMM_OK) st = dsmm_clustering_read(ctx, pb, &I, 0, &B);
        if (st == DSMM_OK) st = dsmm_clm_dist(ctx, A, A, &ds);
        if (st == DSMM_OK) st = dsmm_read_buffer(ctx, net, strlen(net), "n", &o, &G0, NULL, NULL);
        if (st == DSMM_OK) st = dsmmi_clm_symmetrize(ctx, G0, &G);
        if (st == DSMM_OK) st = dsmm_clm_info(ctx, G, B, &is);
        dsmm_ctx_fail_alloc_at(ctx, -1);
        if (st == DSMM_OK) {
            done = 1;
            CHECK_EQ_IDX(ds.sj, 0);
            CHECK_EQ_IDX(is.nclusters, 3);
        } else {
            CHECK_MSG(st == DSMM_ERR_NOMEM, "k = %ld: %s", k, dsmm_ctx_last_error(ctx));
            CHECK(L == NULL || A != NULL); // a failed first read leaves no dictionary
        }
        dsmm_ctx_clear_error(ctx);
        dsmm_clustering_destroy(&A);
        dsmm_clustering_destroy(&B);
        dsmm_labels_destroy(&L);
        dsmm_labels_destroy(&I);
        dsmm_csr_destroy(&G0);
        dsmm_csr_destroy(&G);
        CHECK_MSG(dsmm_ctx_mem_in_use(ctx) == 0, "k = %ld: %zu bytes leaked", k,
                  dsmm_ctx_mem_in_use(ctx));
    }
    CHECK(done);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_identical), TEST(test_hand),        TEST(test_moved),
        TEST(test_extremes),  TEST(test_missing),     TEST(test_create_ids),
        TEST(test_random),    TEST(test_read_labels), TEST(test_read_native),
        TEST(test_info_hand), TEST(test_info_random), TEST(test_oom),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
