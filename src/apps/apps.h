// src/apps/apps.h: internal header of the apps layer (Markov clustering, cluster tools, GCN
// training).
#ifndef DSMM_APPS_H
#define DSMM_APPS_H

#include "dist/dist.h"

/* dsmmi_mix64: murmur3's 64-bit finaliser (GCN dropout, the MCL checkpoint's fingerprint). */
static inline uint64_t dsmmi_mix64(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdULL;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ULL;
    z ^= z >> 33;
    return z;
}

// clm (src/apps/clm/clm.c) -------------------------------------------------------------------

/* dsmmi_clm_symmetrize: S = A with every entry mirrored, repeated (i, j) keeping the largest
 * value: the graph mcxload --stream-mirror builds from an abc file (its default -re max).
 * A square; S is new (double values, pattern stays pattern).
 * Errors: DSMM_ERR_DIM (not square); DSMM_ERR_NOMEM. On error *S is NULL. */
dsmm_status dsmmi_clm_symmetrize(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **S);
/* dsmmi_clustering_read_buffer: dsmm_clustering_read on len bytes in memory (gzip detected);
 * name is used in messages. For the fuzz target (tests/fuzz/fuzz_clusters.c). */
dsmm_status dsmmi_clustering_read_buffer(dsmm_ctx *ctx, const char *buf, size_t len,
                                         const char *name, dsmm_labels **labels, int grow,
                                         dsmm_clustering **out);
/* clm info's measures in pieces, for graphs whose rows are spread over ranks (mcl --analyze):
 * the sums over some rows (dsmmi_clm_info_rows; add them over the ranks), then the measures
 * (dsmmi_clm_info_finish). win and deg hold one entry per cluster. */
typedef struct dsmmi_clm_sums {
    double eff, mf, total; // coverage and mass fraction over listed nodes; off-diagonal weight
    double *win, *deg;     // per cluster: off-diagonal weight inside it, weighted degree
} dsmmi_clm_sums;
/* dsmmi_clm_af_shown: the af that clm info and mcl --analyze print for s: s->areafrac, except
 * that clm takes an area of 0 as -1 (no cluster of two or more nodes: -1 / (n (n - 1)); a
 * graph of at most one node: 1). The statistics keep the true 0. */
double dsmmi_clm_af_shown(const dsmm_clm_info_stats *s);
/* dsmmi_clm_sizes: *size (new, k + 1 entries) = the nodes of each cluster of cluster[0..n)
 * (-1: none). Errors: DSMM_ERR_ARG (an id >= k); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_clm_sizes(dsmm_ctx *ctx, const dsmm_idx *cluster, dsmm_idx n, dsmm_idx k,
                            dsmm_idx **size);
/* dsmmi_clm_memberships: the clusters of each node from cluster lists (cluster c: members
 * [start[c] .. start[c + 1]), nodes 0..n-1; they may overlap): node v's clusters are
 * vcl[vstart[v] .. vstart[v + 1]) (ascending); *size[c] = |c|. All three new.
 * Errors: DSMM_ERR_ARG (a member outside 0..n-1); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_clm_memberships(dsmm_ctx *ctx, dsmm_idx n, dsmm_idx k, const dsmm_idx *start,
                                  const dsmm_idx *members, dsmm_idx **vstart, dsmm_idx **vcl,
                                  dsmm_idx **size);
/* dsmmi_clm_info_rows: adds to s the rows of G (row i is node row0 + i; columns are nodes),
 * each node once per cluster it is in (memberships as dsmmi_clm_memberships gives them, for
 * nodes 0..n-1). stored_loops 0: each node's loop weighs its row's largest weight (clm info);
 * 1: the loop stored in the row, 0 when none (mcl --analyze on mcl's start matrix). */
void dsmmi_clm_info_rows(const dsmm_csr *G, dsmm_idx row0, const dsmm_idx *vstart,
                         const dsmm_idx *vcl, dsmm_idx n, const dsmm_idx *size, int stored_loops,
                         dsmmi_clm_sums *s);
/* dsmmi_clm_info_finish: *out from the sums of all nn rows and the k cluster sizes. */
dsmm_status dsmmi_clm_info_finish(dsmm_ctx *ctx, dsmm_idx nn, dsmm_idx k, const dsmm_idx *size,
                                  const dsmmi_clm_sums *s, dsmm_clm_info_stats *out);
// end clm ------------------------------------------------------------------------------------

// mcl ------------------------------------------------------------------------------------------

/* Pruning rules of one run (mcl's -P/-p, -S, -R, -pct): cut = 0.99999 / P (0: no threshold). */
typedef struct dsmmi_mcl_rules {
    double cut;
    dsmm_idx S, R;
    double pct; // a fraction (mcl's -pct 90 is 0.9)
} dsmmi_mcl_rules;

/* Measures of an expanded column taken before pruning (mcl's maxval, center, n_expand). */
typedef struct dsmmi_mcl_col {
    dsmm_idx n_expand;
    double maxval, center;
} dsmmi_mcl_col;

/* dsmmi_mcl_measure: cs from the expanded column's values (max(0, max), sum of squares, n). */
void dsmmi_mcl_measure(const float *val, dsmm_idx n, dsmmi_mcl_col *cs);

/* dsmmi_mcl_prune: prunes column c (entries idx/val[0..n), ascending idx) in place as mcl does,
 * rescales it to sum 1 and returns the new count; *chaos gets the column's chaos. The entries
 * may be a candidate subset of the expanded column (distributed runs) as long as they hold
 * every entry >= cut and, below cut, at least the R largest with all their ties; cs describes
 * the whole column. scratch holds n floats. */
dsmm_idx dsmmi_mcl_prune(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val, dsmm_idx n,
                         const dsmmi_mcl_col *cs, float *scratch, float *chaos);

/* dsmmi_mcl_prune_whole: dsmmi_mcl_measure then dsmmi_mcl_prune on a whole expanded column
 * (the same results, one pass fewer). */
dsmm_idx dsmmi_mcl_prune_whole(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val,
                               dsmm_idx n, float *scratch, float *chaos);

/* dsmmi_mcl_sum_exact: whether a running double sum of n floats, each >= bar and <= mx, is
 * exact at every step (then every order of the additions gives the same bits).
 * dsmmi_mcl_sum4: the double sum of v[0..n) as four running sums joined in a fixed order. */
int dsmmi_mcl_sum_exact(double bar, double mx, dsmm_idx n);
double dsmmi_mcl_sum4(const float *v, dsmm_idx n);

/* dsmmi_mcl_kth_largest: the k-th largest (1-based, with multiplicity) of v[0..n), 1 <= k <= n
 * (Hoare's selection; v is reordered). */
float dsmmi_mcl_kth_largest(float *v, dsmm_idx n, dsmm_idx k);

/* dsmmi_mcl_inflate: v := v^power then divided by the column sum (floats, double sums);
 * returns n, or 0 when the sum is not positive (the column is emptied). */
dsmm_idx dsmmi_mcl_inflate(float *val, dsmm_idx n, double power);

/* A local block of rows of T = M^T (row c = column c of M): 64-bit row pointers, global
 * 32-bit columns (mcl's index limit), float values as mcl stores them. */
typedef struct dsmmi_mcl_mat {
    dsmm_idx nrows, nnz;
    dsmm_idx *rowptr;
    int32_t *col;
    float *val;
    // Relabelled (dsmmi_mcl_relabel; not owned): vertex v is stored as row newof[v], row u
    // holds vertex orig[u]; column numbers stay the original vertices (entries in their
    // order), so every sum runs in mcl's order. NULL: not relabelled.
    const int32_t *newof, *orig;
} dsmmi_mcl_mat;

/* dsmmi_mcl_relabel: the rows of M (all N rows) stored in breadth-first order, so that columns
 * expanded one after the other share the rows they read (locality; column numbers and the
 * arithmetic are unchanged). *newof and *orig are new (N entries each). dsmmi_mcl_unlabel
 * undoes it. */
dsmm_status dsmmi_mcl_relabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M, int32_t **newof, int32_t **orig);
dsmm_status dsmmi_mcl_unlabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M);

dsmm_status dsmmi_mcl_mat_alloc(dsmm_ctx *ctx, dsmmi_mcl_mat *M, dsmm_idx nrows, dsmm_idx nnz);
void dsmmi_mcl_mat_free(dsmm_ctx *ctx, dsmmi_mcl_mat *M);
/* dsmmi_mcl_mat_from_tile: M (new) from a double (or pattern: ones) tile whose columns are the
 * global vertex numbers (a P x 1 grid), values rounded to float as mcl stores them. */
dsmm_status dsmmi_mcl_mat_from_tile(dsmm_ctx *ctx, const dsmm_csr *tile, dsmmi_mcl_mat *M);

/* dsmmi_mcl_icl: mcl's -icl (mclxBlockPartition) on the graph: M holds this rank's rows of
 * T = G^T from row0. Row v keeps its entries to the vertices of its own cluster (cluster[v],
 * n vertices; -1 or v >= n: none, the row empties), and of those, when the median of its other
 * weights is positive and below their largest, only the ones above that median; then an arc
 * stays only when both directions stayed, with the smaller weight. Collective. */
dsmm_status dsmmi_mcl_icl(dsmm_ctx *ctx, dsmm_idx N, dsmm_idx row0, dsmmi_mcl_mat *M,
                          const int64_t *cluster, int64_t n);
/* dsmmi_mcl_tf_run: mcl's -tf on the graph: M holds this rank's rows of T = G^T (the equal split
 * of N rows, first row row0, columns sorted). Value steps act on each weight (a result of 0
 * leaves the graph), graph-wide steps (#knn, #knnj, #ceilnb) on the whole graph; a weight left
 * NaN, infinite or negative fails with DSMM_ERR_ARG. Collective; fails together. */
dsmm_status dsmmi_mcl_tf_run(dsmm_ctx *ctx, const dsmm_mcl_tf *tf, dsmm_idx N, dsmm_idx row0,
                             dsmmi_mcl_mat *M);

/* What one iteration measured on this rank. */
typedef struct dsmmi_mcl_iter_stats {
    dsmm_idx nnz_expand, nnz_pruned, dense_cols;
    double chaos;
    double flops; // multiply-adds of the expansion (fused and replicated; the distributed
                  // expansion counts its own in dsmm_mcl_iter.flops)
} dsmmi_mcl_iter_stats;

/* dsmmi_mcl_expand_col: column row0 + r of M*M (r: a local row of M) into idx/val (ascending,
 * floats as mcl computes them); G holds rows g0.. of T that M's rows reference; acc/seen are
 * N-long scratch (both all zero on entry and exit); idx/val hold N + 16 entries (the dense path
 * stores 16 at a time). The SIMD loops are used once dsmmi_mcl_iterate_local or
 * dsmmi_mcl_simd has checked the CPU. *dense_path: mcl's dense path was used. */
dsmm_idx dsmmi_mcl_expand_col(const dsmmi_mcl_mat *M, dsmm_idx r, dsmm_idx N,
                              const dsmmi_mcl_mat *G, dsmm_idx g0, double *acc, uint64_t *seen,
                              int32_t *idx, float *val, int *dense_path);

/* Columns expanded together as a panel by the fused expansion (dsmmi_mcl_expand_panel). */
#define DSMMI_MCL_PANEL 4

/* dsmmi_mcl_dense_col: whether column row0 + r takes mcl's dense path (flops * 10 >= N). */
int dsmmi_mcl_dense_col(const dsmmi_mcl_mat *M, dsmm_idx r, dsmm_idx N, const dsmmi_mcl_mat *G,
                        dsmm_idx g0);

/* dsmmi_mcl_work_bounds: bnd[0..nb] cuts M's rows into nb contiguous ranges of equal work, a
 * row weighing its flops against G (rows from g0) plus its entries: how the fused threads'
 * blocks and the replicated expansion's ranks share an iteration. rflops (M->nrows entries, or
 * NULL) receives each row's flops; without it they are counted twice. */
void dsmmi_mcl_work_bounds(const dsmmi_mcl_mat *M, const dsmmi_mcl_mat *G, dsmm_idx g0, int nb,
                           dsmm_idx *rflops, dsmm_idx *bnd);

/* dsmmi_mcl_expand_panel: the w (2..DSMMI_MCL_PANEL) dense-path columns of local rows r0..r0+w
 * accumulated together into acc (N * DSMMI_MCL_PANEL doubles, all zero on entry; entry j of
 * column c at acc[j * DSMMI_MCL_PANEL + c]). dsmmi_mcl_panel_take then gives column c as
 * dsmmi_mcl_expand_col would (idx/val hold N + 16 entries; returns the count), and
 * dsmmi_mcl_panel_clear zeroes acc again. */
void dsmmi_mcl_expand_panel(const dsmmi_mcl_mat *M, dsmm_idx r0, int w, const dsmmi_mcl_mat *G,
                            dsmm_idx g0, double *acc);
dsmm_idx dsmmi_mcl_panel_take(const double *acc, dsmm_idx N, int c, int32_t *idx, float *val);
void dsmmi_mcl_panel_clear(double *acc, dsmm_idx N);

/* dsmmi_mcl_simd: the x86 SIMD loops of the expansion the CPU may use: 3 (the default) all it
 * has; 2 all but the AVX-512 panel rows (AVX2 panel rows); 1 AVX2 only (products and collect; no
 * AVX-512 collect or panel take); 0 none (the portable loops). For tests and benchmarks; not
 * thread-safe, call between runs. */
void dsmmi_mcl_simd(int level);

/* dsmmi_mcl_iterate_local: the next iterate of M's rows (global rows row0..): every column
 * expanded against G, pruned, rescaled and inflated with `inflation` (0: not inflated), OpenMP
 * threads over columns. out is new. */
dsmm_status dsmmi_mcl_iterate_local(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx row0,
                                    dsmm_idx N, const dsmmi_mcl_mat *G, dsmm_idx g0,
                                    const dsmmi_mcl_rules *rules, double inflation,
                                    dsmmi_mcl_mat *out, dsmmi_mcl_iter_stats *stats);

/* dsmmi_mcl_rules_from: the pruning rules of p (scheme defaults, explicit overrides). */
dsmm_status dsmmi_mcl_rules_from(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmmi_mcl_rules *r);

/* dsmmi_mcl_iterate_dist: as dsmmi_mcl_iterate_local for the rows of every rank (row blocks of
 * the equal split over the ranks), with the expansion by distributed SpGEMM in it->phases
 * phases and the pruning at each column's owner. Collective. */
dsmm_status dsmmi_mcl_iterate_dist(dsmm_ctx *ctx, const dsmm_mcl_params *p, const dsmmi_mcl_mat *M,
                                   dsmm_idx row0, dsmm_idx N, const dsmmi_mcl_rules *rules,
                                   double inflation, dsmmi_mcl_mat *out,
                                   dsmmi_mcl_iter_stats *stats, dsmm_mcl_iter *it);

/* The loop state a checkpoint keeps. */
typedef struct dsmmi_mcl_loop {
    int n_ite, main_done, converged;
    double inflation_main; // with the bumps after 40 iterations
    uint64_t graph_fp;     // the input's dsmmi_mcl_graph_fp (runs that checkpoint or resume)
} dsmmi_mcl_loop;

/* dsmmi_mcl_graph_fp: a fingerprint of the input graph as numbered (every entry's row, column
 * and value, summed over the entries, so it does not depend on the grid or the rank count).
 * A checkpoint records it and --resume refuses another graph, or the same one with its
 * vertices numbered otherwise (an abc file with its lines reordered). Collective. */
dsmm_status dsmmi_mcl_graph_fp(dsmm_ctx *ctx, const dsmm_dist *G, uint64_t *fp);

dsmm_status dsmmi_mcl_checkpoint_write(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                       const dsmmi_mcl_mat *M, dsmm_idx row0,
                                       const dsmmi_mcl_loop *loop);
dsmm_status dsmmi_mcl_checkpoint_read(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                      dsmmi_mcl_mat *M, dsmm_idx *row0, dsmmi_mcl_loop *loop);
/* dsmmi_mcl_checkpoint_peek: the vertex count of the checkpoint in dir, whether its run
 * symmetrised the input, and the fingerprint of the graph it was made from (what a reader
 * without the input, such as bench/mcl_expand, needs before dsmmi_mcl_checkpoint_read).
 * Collective. */
dsmm_status dsmmi_mcl_checkpoint_peek(dsmm_ctx *ctx, const char *dir, dsmm_idx *N, int *sym,
                                      uint64_t *graph_fp);

/* dsmmi_mcl_interpret: clusters of the limit matrix (local rows of L^T), by mcl's rules, into
 * res (n, cluster, nclusters, start, members, attractors, overlap, garbage), overlap handled
 * and clusters ordered as mode and sort say. Collective. */
dsmm_status dsmmi_mcl_interpret(dsmm_ctx *ctx, const dsmmi_mcl_mat *L, dsmm_idx row0, dsmm_idx N,
                                dsmm_mcl_overlap mode, dsmm_mcl_sort sort, dsmm_mcl_result *res);
/* dsmmi_mcl_connect: the connected components that res's clusters induce in the graph whose
 * local rows (vertices row0 .., any direction) are rowptr/col: res->components; with force,
 * clusters that are not connected are split (largest first, as mcl) and the clustering
 * before goes to res->orig_*. Collective. */
dsmm_status dsmmi_mcl_connect(dsmm_ctx *ctx, const dsmm_idx *rowptr, const int32_t *col,
                              dsmm_idx nrows, dsmm_idx row0, int force, dsmm_mcl_result *res);

// gcn (src/apps/gcn/) ------------------------------------------------------------------------

/* Split membership bits of a local row. */
enum { DSMMI_GCN_TRAIN = 1, DSMMI_GCN_VAL = 2, DSMMI_GCN_TEST = 4 };

/* A dataset on this rank (gcn_data.c): the plan of Ahat = D^-1/2 (A + I) D^-1/2 over all
 * ranks, and, for this rank's panel rows (vertex[r]: the original node of local row r), the
 * labels, the split bits and the input features. Counts are global. */
typedef struct dsmmi_gcn_data {
    dsmm_idx n, nloc, nfeat, nclasses, edges, ntrain, nval, ntest;
    dsmm_idx ahat_nnz; // entries of this rank's rows of Ahat
    dsmm_cola *plan;
    const dsmm_idx *vertex; // the plan's (not owned)
    int32_t *label;         // nloc classes (-1: none)
    unsigned char *split;   // nloc DSMMI_GCN_* bits
    dsmm_gcn_features kind;
    dsmm_csr *X; // FILE: the local rows, float, each summing to 1 (or empty)
    float *Xr;   // RANDOM: nloc x nfeat, row-major
} dsmmi_gcn_data;

/* dsmmi_gcn_data_load: PREFIX.{adj.mtx,features.mtx,labels.txt,split.txt}.gz as dsmm_gcn_train
 * describes them (features only for FILE), Ahat built distributed and planned with p->cola.
 * Collective; fails together with the message of the first failing rank (file and line). */
dsmm_status dsmmi_gcn_data_load(dsmm_ctx *ctx, const char *prefix, const dsmm_gcn_params *p,
                                dsmmi_gcn_data *d);
void dsmmi_gcn_data_free(dsmm_ctx *ctx, dsmmi_gcn_data *d);

/* The network and its training state (gcn_model.c), replicated weights, this rank's rows of
 * every activation. Layer l maps width[l] to width[l + 1] columns. */
typedef struct dsmmi_gcn_model {
    const dsmmi_gcn_data *d;
    dsmm_gcn_params p;
    int L;
    dsmm_idx *width;           // L + 1
    float **W, **dW, **m, **v; // L each, width[l] x width[l + 1]
    float **Hd;                // input of layer l after dropout (l >= 1; nloc x width[l])
    float **M, **Z;            // Hd * W and Ahat * M (nloc x width[l + 1])
    float *g1, *g2;            // gradient scratch, nloc x max width
    dsmm_csr *Xd;              // FILE: X after dropout (X's pattern)
    float *Xrd;                // RANDOM: after dropout
    double *red;               // all-reduce buffer (largest W)
    double agg_seconds, comm_seconds, cola_seconds; // dsmm_cola_spmm so far
    double flops;     // this rank's products so far, 2 per multiply-add (aggregations, X * W, BLAS)
    int step;         // Adam steps taken
    int train, epoch; // the last forward pass: dropout applied, the epoch of its masks
} dsmmi_gcn_model;

dsmm_status dsmmi_gcn_model_init(dsmm_ctx *ctx, const dsmmi_gcn_data *d, const dsmm_gcn_params *p,
                                 dsmmi_gcn_model *m);
void dsmmi_gcn_model_free(dsmm_ctx *ctx, dsmmi_gcn_model *m);
/* dsmmi_gcn_forward: logits in m->Z[L - 1]; dropout (masks of `epoch`) when train != 0.
 * Collective. */
dsmm_status dsmmi_gcn_forward(dsmm_ctx *ctx, dsmmi_gcn_model *m, int epoch, int train);
/* dsmmi_gcn_loss: the mean cross-entropy over the training nodes of the last forward pass
 * plus weight_decay / 2 * ||W_0||^2 (every rank); grad != 0: also dL/dlogits into m->g1.
 * Collective. */
dsmm_status dsmmi_gcn_loss(dsmm_ctx *ctx, dsmmi_gcn_model *m, int grad, double *loss);
/* dsmmi_gcn_backward: m->dW from the last forward pass and dsmmi_gcn_loss(grad = 1), summed
 * over the ranks, the weight decay's gradient included. Collective. */
dsmm_status dsmmi_gcn_backward(dsmm_ctx *ctx, dsmmi_gcn_model *m);
/* dsmmi_gcn_step: one Adam step of every W with m->dW (the same on every rank). */
void dsmmi_gcn_step(dsmmi_gcn_model *m);
/* dsmmi_gcn_accuracy: train / val / test accuracy of the last forward pass. Collective. */
dsmm_status dsmmi_gcn_accuracy(dsmm_ctx *ctx, dsmmi_gcn_model *m, double acc[3]);

/* Dense math (gcn_math.c). dsmmi_gcn_blas_load: loads OpenBLAS (dlopen, once per process;
 * collective: DSMM_ERR_UNSUPPORTED on every rank, naming why, when a rank cannot);
 * dsmmi_gcn_model_init calls it, and the two calls below need it loaded.
 * dsmmi_gcn_blas_threads: sets OpenBLAS's thread count, returns the previous one (-1, and
 * nothing set, when OpenBLAS is not loaded or n < 1). dsmmi_gcn_gemm: C = op(A) * op(B),
 * row-major floats, C m x n, inner k. */
dsmm_status dsmmi_gcn_blas_load(dsmm_ctx *ctx);
int dsmmi_gcn_blas_threads(int n);
void dsmmi_gcn_gemm(int ta, int tb, dsmm_idx m, dsmm_idx n, dsmm_idx k, const float *A,
                    dsmm_idx lda, const float *B, dsmm_idx ldb, float *C, dsmm_idx ldc);
/* Glorot uniform W (fan_in x fan_out) of layer `layer` from hashes of (seed, layer, i, j). */
void dsmmi_gcn_glorot(uint64_t seed, int layer, dsmm_idx fan_in, dsmm_idx fan_out, float *W);
/* Dropout: the stream of row `vertex` (original id) in `layer` at `epoch` (Philox), and
 * whether its column col is dropped: murmur3's 64-bit finaliser of stream ^ col * golden
 * ratio, 24 bits of it below thr = dsmmi_gcn_drop_threshold(rate) (probability rate). A few
 * multiplies per entry, inlined: a Philox call per entry made dropout most of an epoch. */
uint64_t dsmmi_gcn_drop_stream(uint64_t seed, int epoch, int layer, dsmm_idx vertex);
uint64_t dsmmi_gcn_drop_threshold(double rate);
static inline int dsmmi_gcn_dropped(uint64_t stream, dsmm_idx col, uint64_t thr)
{
    return (dsmmi_mix64(stream ^ ((uint64_t)col * 0x9e3779b97f4a7c15ULL)) >> 40) < thr;
}
/* RANDOM features: uniform [0, 1) from (seed, vertex, col). */
float dsmmi_gcn_random_feature(uint64_t seed, dsmm_idx vertex, dsmm_idx col);
void dsmmi_gcn_relu(const float *Z, dsmm_idx n, float *H);
/* dsmmi_gcn_xent: the summed cross-entropy of softmax(Z) over the rows with the TRAIN bit;
 * dZ (may be NULL) gets scale * (softmax - onehot) there and 0 elsewhere. */
double dsmmi_gcn_xent(const float *Z, dsmm_idx nrows, dsmm_idx c, const int32_t *label,
                      const unsigned char *split, double scale, float *dZ);
/* dsmmi_gcn_correct: correctly classified rows (argmax) of each split: count[0] train, [1] val,
 * [2] test. */
void dsmmi_gcn_correct(const float *Z, dsmm_idx nrows, dsmm_idx c, const int32_t *label,
                       const unsigned char *split, double count[3]);
/* dsmmi_gcn_adam: one bias-corrected Adam step (beta1 0.9, beta2 0.999, eps 1e-8), t >= 1. */
void dsmmi_gcn_adam(float *W, const float *g, float *m, float *v, dsmm_idx n, double lr, int t);
// end gcn ------------------------------------------------------------------------------------

#endif // DSMM_APPS_H
