// src/dist/model.h: the performance model of the distributed products (RDMA paper §1 Fig. 1
// and §4), computed serially from whole matrices for any grid pr x pc: nothing runs
// distributed. It counts, per work item C(i,j) += A(i,s) * B(s,j) of the stage plan
// (summa.h), the flops, the bytes of both pieces and of the partial product, and from them,
// per algorithm and per rank, the flops and the bytes each rank moves, exactly as the
// distributed code counts them (dsmm_traffic), so a test can compare the two.
#ifndef DSMM_DIST_MODEL_H
#define DSMM_DIST_MODEL_H

#include "dist/summa.h"

/* Algorithms whose traffic the model predicts. The work-stealing variants run the static
 * assignment of their base algorithm when nothing is stolen (ws-random-a, ws-local-a: A;
 * ws-local-c: C). */
typedef enum {
    DSMMI_MODEL_SUMMA = 0, // bulk-synchronous: broadcast bytes (bytes_recv / bytes_sent)
    DSMMI_MODEL_RDMA_C,    // one-sided gets of A(i,s), B(s,j) by C(i,j)'s owner
    DSMMI_MODEL_RDMA_A,    // gets of B(s,j) by A(i,s)'s owner; partial fetched by C's owner
    DSMMI_MODEL_RDMA_B,    // gets of A(i,s) by B(s,j)'s owner; partial fetched by C's owner
    DSMMI_MODEL_COUNT
} dsmmi_model_alg;

/* Item (i, s, j), i < pr, s < S (plan stages), j < pc, has index (i * S + s) * pc + j.
 * Piece A(i,s): rows of A's row block i, columns [lo[s], hi[s]); owner i * pc + kc[s].
 * Piece B(s,j): rows [lo[s], hi[s]), columns of B's column block j; owner kr[s] * pc + j.
 * C(i,j): owner i * pc + j. An item is live when both pieces are non-empty (sparse: nnz > 0;
 * dense: rows x columns > 0); only live items are executed, fetched or pushed. */
typedef struct dsmmi_model {
    int pr, pc, P, S;
    int spmm;                 // 1: B dense (k columns), C dense
    dsmmi_summa_plan plan;    // the stages over the inner dimension
    int64_t *a_nnz, *a_bytes; // per A piece, index i * S + s (bytes: dsmmi_piece_bytes)
    int64_t *b_nnz, *b_bytes; // per B piece, index s * pc + j (dense: rows x cols x valsize)
    double *flops;            // per item: 2 x multiply-adds for SpMM, multiply-adds for SpGEMM
    int64_t *p_nnz, *p_bytes; // per item: nnz and wire bytes of the partial product C(i,j)_s
    /* Per algorithm a, per rank r ([a][r]): flops executed; bytes this rank fetches
     * (one-sided data gets, dsmm_traffic rma_bytes; SUMMA: broadcast bytes received,
     * bytes_recv) and bytes fetched from it (SUMMA: bytes_sent); data gets issued. */
    double *rank_flops[DSMMI_MODEL_COUNT];
    int64_t *rank_in[DSMMI_MODEL_COUNT], *rank_out[DSMMI_MODEL_COUNT];
    int64_t *rank_gets[DSMMI_MODEL_COUNT];
    double *stage_flops; // [r * S + s]: rank r's flops in stage s, SUMMA/stationary-C assignment
    dsmm_type ctype;     // value type of C (and of the partial products)
    int64_t *c_nnz;      // per C tile, index i * pc + j: nnz of C(i,j) (SpMM: rows x cols)
} dsmmi_model;

/* dsmmi_model_spgemm: the model of C = A * B (A m x kk, B kk x n, whole matrices held
 * locally) on a pr x pc grid; opts: the local kernel options (semiring, C's value type: -1 =
 * float when both are float, else double) used for the partial products' nnz. */
dsmm_status dsmmi_model_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                               const dsmm_spgemm_opts *opts, dsmmi_model *m);
/* dsmmi_model_spmm: the model of C = A * B with B dense kk x k of type btype (C: btype). */
dsmm_status dsmmi_model_spmm(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type btype, int pr,
                             int pc, dsmmi_model *m);
void dsmmi_model_free(dsmm_ctx *ctx, dsmmi_model *m);

/* dsmmi_model_alg_name: "summa", "rdma-c", "rdma-a", "rdma-b" ("?" otherwise). */
const char *dsmmi_model_alg_name(dsmmi_model_alg a);

/* Load imbalance (RDMA paper §1, Fig. 1), max/avg over ranks of flops.
 * dsmmi_model_imbalance: max/avg of v[0..n); 1 when the sum is 0 (no work is balanced).
 * dsmmi_model_stage_imbalance: out[s] (S entries) = max/avg over the P ranks of stage s's flops
 * in stage_flops[r * S + s]; 0 for stages without flops, which say nothing about balance.
 * Returns the worst stage (largest out[s]), -1 when no stage has flops.
 * dsmmi_model_sync_imbalance: what synchronising between stages costs: sum_s max_r /
 * sum_s avg_r (1 when there are no flops); >= the end-to-end imbalance of the totals. */
double dsmmi_model_imbalance(const double *v, int n);
int dsmmi_model_stage_imbalance(const double *stage_flops, int P, int S, double *out);
double dsmmi_model_sync_imbalance(const double *stage_flops, int P, int S);

/* The inter-node roofline of §4 for one machine: bw = network bytes/s per rank, peak = local
 * flop/s, membw = local memory bytes/s (all > 0 and finite). */
typedef struct dsmmi_model_machine {
    double bw, peak, membw;
} dsmmi_model_machine;

/* Local AI: SpMM flops / bytes of the A piece, B piece and C tile of the live items; SpGEMM
 * cf / ((3 + 2 cf) b), cf = flops / nnz of the partial products, b = bytes per nonzero of C
 * (value + 32-bit column). local_roof = min(peak, local_ai * membw). Per algorithm: bytes =
 * sum of rank_in, inter_ai = flops / bytes (INFINITY when nothing moves), attainable =
 * min(local_roof, inter_ai * bw) per rank, and time: SUMMA sum_s max_r max(flops_rs /
 * local_roof, recv_rs / bw), one-sided max_r max(flops_r / local_roof, max(in_r, out_r) / bw).
 * docs/model.md has the formulas. */
typedef struct dsmmi_model_roof {
    double flops, cf, local_ai, local_roof;
    double bytes[DSMMI_MODEL_COUNT], inter_ai[DSMMI_MODEL_COUNT];
    double attainable[DSMMI_MODEL_COUNT], time[DSMMI_MODEL_COUNT];
} dsmmi_model_roof;

/* dsmmi_model_roofline: the roofline numbers of m on machine mc. Errors: DSMM_ERR_ARG when a
 * machine number is not positive and finite. */
dsmm_status dsmmi_model_roofline(dsmm_ctx *ctx, const dsmmi_model *m, const dsmmi_model_machine *mc,
                                 dsmmi_model_roof *out);

#endif // DSMM_DIST_MODEL_H
