// src/apps/apps.h: internal header of the apps layer (Markov clustering, cluster tools).
#ifndef DSMM_APPS_H
#define DSMM_APPS_H

#include "dist/dist.h"

// clm (src/apps/clm/clm.c) -------------------------------------------------------------------

/* dsmmi_clm_symmetrize: S = A with every entry mirrored, repeated (i, j) keeping the largest
 * value: the graph mcxload --stream-mirror builds from an abc file (its default -re max).
 * A square; S is new (double values, pattern stays pattern).
 * Errors: DSMM_ERR_DIM (not square); DSMM_ERR_NOMEM. On error *S is NULL. */
dsmm_status dsmmi_clm_symmetrize(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **S);
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
    // Relabelled (dsmmi_mcl_relabel; not owned): vertex v is stored as newof[v], label u was
    // vertex orig[u]; rows keep their entries in the original vertex order, so every sum runs
    // in mcl's order. NULL: not relabelled.
    const int32_t *newof, *orig;
} dsmmi_mcl_mat;

/* dsmmi_mcl_relabel: M (all N rows, original labels) stored in breadth-first order, so that
 * columns expanded one after the other share the rows they read (locality; the arithmetic is
 * unchanged). *newof and *orig are new (N entries each). dsmmi_mcl_unlabel undoes it. */
dsmm_status dsmmi_mcl_relabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M, int32_t **newof, int32_t **orig);
dsmm_status dsmmi_mcl_unlabel(dsmm_ctx *ctx, dsmmi_mcl_mat *M);

dsmm_status dsmmi_mcl_mat_alloc(dsmm_ctx *ctx, dsmmi_mcl_mat *M, dsmm_idx nrows, dsmm_idx nnz);
void dsmmi_mcl_mat_free(dsmm_ctx *ctx, dsmmi_mcl_mat *M);
/* dsmmi_mcl_mat_from_tile: M (new) from a double (or pattern: ones) tile whose columns are the
 * global vertex numbers (a P x 1 grid), values rounded to float as mcl stores them. */
dsmm_status dsmmi_mcl_mat_from_tile(dsmm_ctx *ctx, const dsmm_csr *tile, dsmmi_mcl_mat *M);

/* What one iteration measured on this rank. */
typedef struct dsmmi_mcl_iter_stats {
    dsmm_idx nnz_expand, nnz_pruned, dense_cols;
    double chaos;
} dsmmi_mcl_iter_stats;

/* dsmmi_mcl_expand_col: column row0 + r of M*M (r: a local row of M) into idx/val (ascending,
 * floats as mcl computes them); G holds rows g0.. of T that M's rows reference; acc/seen are
 * N-long scratch (both all zero on entry and exit). *dense_path: mcl's dense path was used. */
dsmm_idx dsmmi_mcl_expand_col(const dsmmi_mcl_mat *M, dsmm_idx r, dsmm_idx N,
                              const dsmmi_mcl_mat *G, dsmm_idx g0, double *acc, unsigned char *seen,
                              int32_t *idx, float *val, int *dense_path);

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
} dsmmi_mcl_loop;

dsmm_status dsmmi_mcl_checkpoint_write(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                       const dsmmi_mcl_mat *M, dsmm_idx row0,
                                       const dsmmi_mcl_loop *loop);
dsmm_status dsmmi_mcl_checkpoint_read(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                      dsmmi_mcl_mat *M, dsmm_idx *row0, dsmmi_mcl_loop *loop);

/* dsmmi_mcl_interpret: clusters of the limit matrix (local rows of L^T), by mcl's rules, into
 * res (n, cluster, nclusters, attractors, overlap, garbage). Collective. */
dsmm_status dsmmi_mcl_interpret(dsmm_ctx *ctx, const dsmmi_mcl_mat *L, dsmm_idx row0, dsmm_idx N,
                                dsmm_mcl_result *res);

#endif // DSMM_APPS_H
