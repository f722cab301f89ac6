// src/dist/model.c: the performance model of the distributed products (model.h; RDMA paper
// §1 Fig. 1 and §4), computed serially from whole matrices for any grid: per work item of the
// SUMMA stage plan the flops, piece sizes and the exact nnz of the partial product, then per
// algorithm and rank the flops executed and the bytes moved, counted as the distributed code
// counts them (broadcasts in comm/mpi.c, one-sided gets in dsmmi_count_rma).
//
// SpGEMM pass: for each column block j of B, the start and end of block j in every row of B
// (cursors advanced from block j-1, as dsmm_csr_col_panels does), then, row blocks of A in
// parallel, every row of A walked once in column order: its entries fall into the stages in
// order, and two markers over block j's columns count the distinct columns of the row of the
// partial product (stamp per row and stage) and of C (stamp per row). O(pc * (kk + nnz(A)) +
// flops) time, O(kk + cols of a block per thread) extra memory.
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist/model.h"

// Items above this are refused: the per-item arrays alone would take gigabytes.
#define MAX_ITEMS ((int64_t)1 << 27)
// Threads of the SpGEMM pass (over row blocks of A).
#define MAX_THREADS 64

static const char *const alg_names[DSMMI_MODEL_COUNT] = {"summa", "rdma-c", "rdma-a", "rdma-b"};

const char *dsmmi_model_alg_name(dsmmi_model_alg a)
{
    return (int)a >= 0 && a < DSMMI_MODEL_COUNT ? alg_names[a] : "?";
}

void dsmmi_model_free(dsmm_ctx *ctx, dsmmi_model *m)
{
    if (m == NULL) return;
    dsmmi_summa_plan_free(ctx, &m->plan);
    m->a_nnz = dsmmi_free(ctx, m->a_nnz);
    m->a_bytes = dsmmi_free(ctx, m->a_bytes);
    m->b_nnz = dsmmi_free(ctx, m->b_nnz);
    m->b_bytes = dsmmi_free(ctx, m->b_bytes);
    m->flops = dsmmi_free(ctx, m->flops);
    m->p_nnz = dsmmi_free(ctx, m->p_nnz);
    m->p_bytes = dsmmi_free(ctx, m->p_bytes);
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        m->rank_flops[a] = dsmmi_free(ctx, m->rank_flops[a]);
        m->rank_in[a] = dsmmi_free(ctx, m->rank_in[a]);
        m->rank_out[a] = dsmmi_free(ctx, m->rank_out[a]);
        m->rank_gets[a] = dsmmi_free(ctx, m->rank_gets[a]);
    }
    m->stage_flops = dsmmi_free(ctx, m->stage_flops);
    m->c_nnz = dsmmi_free(ctx, m->c_nnz);
    m->S = 0;
}

// The plan and every array, zeroed. m is zeroed by the caller.
static dsmm_status setup(dsmm_ctx *ctx, dsmm_idx kk, int pr, int pc, dsmmi_model *m)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, pr >= 1 && pc >= 1 && (int64_t)pr * pc <= INT32_MAX, DSMM_ERR_ARG,
               "model: grid %dx%d is not a grid of 1 to 2^31 - 1 ranks", pr, pc);
    DSMM_TRY(dsmmi_summa_plan_make(ctx, kk, pr, pc, &m->plan));
    m->pr = pr;
    m->pc = pc;
    m->P = pr * pc;
    m->S = m->plan.n;
    int64_t items = (int64_t)pr * m->S * pc;
    DSMM_CHECK(ctx, items <= MAX_ITEMS, DSMM_ERR_ARG,
               "model: grid %dx%d with %d stages has %lld work items, more than the model's "
               "limit of %lld",
               pr, pc, m->S, (long long)items, (long long)MAX_ITEMS);
    size_t ni = items ? (size_t)items : 1, P = (size_t)m->P, S = m->S ? (size_t)m->S : 1;
    m->a_nnz = dsmmi_calloc(ctx, (size_t)pr * S, sizeof *m->a_nnz);
    m->a_bytes = dsmmi_calloc(ctx, (size_t)pr * S, sizeof *m->a_bytes);
    m->b_nnz = dsmmi_calloc(ctx, S * (size_t)pc, sizeof *m->b_nnz);
    m->b_bytes = dsmmi_calloc(ctx, S * (size_t)pc, sizeof *m->b_bytes);
    m->flops = dsmmi_calloc(ctx, ni, sizeof *m->flops);
    m->p_nnz = dsmmi_calloc(ctx, ni, sizeof *m->p_nnz);
    m->p_bytes = dsmmi_calloc(ctx, ni, sizeof *m->p_bytes);
    m->stage_flops = dsmmi_calloc(ctx, P * S, sizeof *m->stage_flops);
    m->c_nnz = dsmmi_calloc(ctx, P, sizeof *m->c_nnz);
    DSMM_CHECK(ctx,
               m->a_nnz && m->a_bytes && m->b_nnz && m->b_bytes && m->flops && m->p_nnz &&
                   m->p_bytes && m->stage_flops && m->c_nnz,
               DSMM_ERR_NOMEM, "model: %lld work items", (long long)items);
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        m->rank_flops[a] = dsmmi_calloc(ctx, P, sizeof *m->rank_flops[a]);
        m->rank_in[a] = dsmmi_calloc(ctx, P, sizeof *m->rank_in[a]);
        m->rank_out[a] = dsmmi_calloc(ctx, P, sizeof *m->rank_out[a]);
        m->rank_gets[a] = dsmmi_calloc(ctx, P, sizeof *m->rank_gets[a]);
        DSMM_CHECK(ctx, m->rank_flops[a] && m->rank_in[a] && m->rank_out[a] && m->rank_gets[a],
                   DSMM_ERR_NOMEM, "model: per-rank arrays of %d ranks", m->P);
    }
cleanup:
    return st;
}

// A sorted view of X: X itself, or a sorted copy in *copy (repeated columns summed, as the
// distributed matrices hold them).
static dsmm_status sorted_view(dsmm_ctx *ctx, const dsmm_csr *X, dsmm_csr **copy,
                               const dsmm_csr **view)
{
    dsmm_status st = DSMM_OK;
    *view = X;
    if (X->sorted) return DSMM_OK;
    DSMM_TRY(dsmm_csr_copy(ctx, X, X->type, copy));
    DSMM_TRY(dsmm_csr_sort_inplace(ctx, *copy, DSMM_DUP_SUM));
    *view = *copy;
cleanup:
    return st;
}

// stage_of[k] for every inner index k, and the nnz of every piece A(i,s) with its wire bytes.
static void a_pieces(const dsmm_csr *A, const dsmm_idx *rb, const int *stage_of, dsmmi_model *m)
{
    int S = m->S;
    for (int i = 0; i < m->pr; i++) {
        for (dsmm_idx r = rb[i]; r < rb[i + 1]; r++)
            for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++)
                m->a_nnz[(size_t)i * S + stage_of[dsmm_csr_col(A, e)]]++;
        for (int s = 0; s < S; s++) {
            size_t x = (size_t)i * S + s;
            m->a_bytes[x] = (int64_t)dsmmi_piece_bytes(rb[i + 1] - rb[i], m->a_nnz[x], A->type);
        }
    }
}

static void fill_stage_of(const dsmmi_summa_plan *p, int *stage_of)
{
    for (int s = 0; s < p->n; s++)
        for (dsmm_idx k = p->lo[s]; k < p->hi[s]; k++) stage_of[k] = s;
}

// Row block i of A against column block j of B (bs/be: where block j starts and ends in each
// row of B): flops and partial nnz of the items (i, *, j), nnz of C(i,j). mark_s and mark_c
// hold stamps (cols_j entries each, all below *stamp on entry).
static void count_block(const dsmm_csr *A, const dsmm_csr *B, const dsmm_idx *rb, int i, int j,
                        const dsmm_idx *bs, const dsmm_idx *be, const int *stage_of, dsmm_idx c0,
                        int64_t *mark_s, int64_t *mark_c, int64_t *stamp, dsmmi_model *m)
{
    int S = m->S, pc = m->pc;
    int64_t cnnz = 0;
    for (dsmm_idx r = rb[i]; r < rb[i + 1]; r++) {
        int64_t rs = (*stamp)++, ss = 0;
        int cur = -1;
        size_t item = 0;
        int64_t f = 0, pn = 0;
        for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
            dsmm_idx k = dsmm_csr_col(A, e);
            int s = stage_of[k];
            if (s != cur) { // rows are sorted, so a stage's entries are consecutive
                if (cur >= 0) {
                    m->flops[item] += (double)f;
                    m->p_nnz[item] += pn;
                }
                cur = s;
                ss = (*stamp)++;
                item = ((size_t)i * S + s) * pc + j;
                f = pn = 0;
            }
            f += be[k] - bs[k];
            for (dsmm_idx q = bs[k]; q < be[k]; q++) {
                dsmm_idx c = dsmm_csr_col(B, q) - c0;
                if (mark_s[c] != ss) {
                    mark_s[c] = ss;
                    pn++;
                }
                if (mark_c[c] != rs) {
                    mark_c[c] = rs;
                    cnnz++;
                }
            }
        }
        if (cur >= 0) {
            m->flops[item] += (double)f;
            m->p_nnz[item] += pn;
        }
    }
    m->c_nnz[(size_t)i * pc + j] = cnnz;
}

// One fetch of `bytes` by rank `who` from rank `from` (none when they are the same rank).
static void get(dsmmi_model *m, int a, int who, int from, int64_t bytes)
{
    if (who == from) return;
    m->rank_in[a][who] += bytes;
    m->rank_out[a][from] += bytes;
    m->rank_gets[a][who]++;
}

// Per algorithm and rank, from the per-item numbers (model.h's rules).
static void account(dsmmi_model *m)
{
    int pr = m->pr, pc = m->pc, S = m->S;
    const dsmmi_summa_plan *p = &m->plan;
    for (int i = 0; i < pr; i++) {
        for (int s = 0; s < S; s++) {
            int64_t an = m->a_nnz[(size_t)i * S + s], ab = m->a_bytes[(size_t)i * S + s];
            int oa = i * pc + p->kc[s];
            for (int j = 0; j < pc; j++) {
                size_t it = ((size_t)i * S + s) * pc + j;
                int ob = p->kr[s] * pc + j, oc = i * pc + j;
                int64_t bn = m->b_nnz[(size_t)s * pc + j], bb = m->b_bytes[(size_t)s * pc + j];
                double f = m->flops[it];
                int64_t pb = m->p_bytes[it];
                m->stage_flops[(size_t)oc * S + s] = f;
                m->rank_flops[DSMMI_MODEL_SUMMA][oc] += f;
                if (an == 0 || bn == 0) continue;
                m->rank_flops[DSMMI_MODEL_RDMA_C][oc] += f;
                get(m, DSMMI_MODEL_RDMA_C, oc, oa, ab);
                get(m, DSMMI_MODEL_RDMA_C, oc, ob, bb);
                m->rank_flops[DSMMI_MODEL_RDMA_A][oa] += f;
                get(m, DSMMI_MODEL_RDMA_A, oa, ob, bb);
                if (pb > 0) get(m, DSMMI_MODEL_RDMA_A, oc, oa, pb);
                m->rank_flops[DSMMI_MODEL_RDMA_B][ob] += f;
                get(m, DSMMI_MODEL_RDMA_B, ob, oa, ab);
                if (pb > 0) get(m, DSMMI_MODEL_RDMA_B, oc, ob, pb);
            }
        }
    }
    // SUMMA: stage s broadcasts A(i,s) along grid row i from column kc[s] and B(s,j) along
    // grid column j from row kr[s]; empty pieces (0 bytes) are not sent (dsmmi_bcast).
    int64_t *in = m->rank_in[DSMMI_MODEL_SUMMA], *out = m->rank_out[DSMMI_MODEL_SUMMA];
    for (int s = 0; s < S; s++) {
        for (int i = 0; i < pr; i++) {
            int64_t ab = m->a_bytes[(size_t)i * S + s];
            for (int j = 0; j < pc && ab > 0; j++) {
                if (j == p->kc[s]) continue;
                in[i * pc + j] += ab;
                out[i * pc + p->kc[s]] += ab;
            }
        }
        for (int j = 0; j < pc; j++) {
            int64_t bb = m->b_bytes[(size_t)s * pc + j];
            for (int i = 0; i < pr && bb > 0; i++) {
                if (i == p->kr[s]) continue;
                in[i * pc + j] += bb;
                out[p->kr[s] * pc + j] += bb;
            }
        }
    }
}

dsmm_status dsmmi_model_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int pr, int pc,
                               const dsmm_spgemm_opts *opts, dsmmi_model *m)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Acopy = NULL, *Bcopy = NULL;
    dsmm_idx *rb = NULL, *cb = NULL, *bs = NULL, *be = NULL;
    int *stage_of = NULL;
    int64_t *marks = NULL;

    DSMM_CHECK(ctx, m != NULL, DSMM_ERR_ARG, "model: m must be non-NULL");
    memset(m, 0, sizeof *m);
    DSMM_CHECK(ctx, A != NULL && B != NULL, DSMM_ERR_ARG, "model: A and B must be non-NULL");
    DSMM_CHECK(ctx, A->ncols == B->nrows, DSMM_ERR_DIM,
               "model: A is %lldx%lld, B %lldx%lld: inner dimensions differ", (long long)A->nrows,
               (long long)A->ncols, (long long)B->nrows, (long long)B->ncols);
    int t = opts ? opts->type : -1;
    DSMM_CHECK(ctx, t == -1 || dsmmi_type_ok((dsmm_type)t), DSMM_ERR_ARG,
               "model: invalid value type %d for C", t);
    DSMM_TRY(setup(ctx, A->ncols, pr, pc, m));
    m->ctype = t != -1                                            ? (dsmm_type)t
               : (A->type == DSMM_FLOAT && B->type == DSMM_FLOAT) ? DSMM_FLOAT
                                                                  : DSMM_DOUBLE;
    const dsmm_csr *a = NULL, *b = NULL;
    DSMM_TRY(sorted_view(ctx, A, &Acopy, &a));
    DSMM_TRY(sorted_view(ctx, B, &Bcopy, &b));
    int S = m->S;
    dsmm_idx kk = A->ncols, n = B->ncols;
    rb = dsmmi_malloc(ctx, (size_t)pr + 1, sizeof *rb);
    cb = dsmmi_malloc(ctx, (size_t)pc + 1, sizeof *cb);
    stage_of = dsmmi_malloc(ctx, kk ? (size_t)kk : 1, sizeof *stage_of);
    bs = dsmmi_malloc(ctx, kk ? (size_t)kk : 1, sizeof *bs);
    be = dsmmi_malloc(ctx, kk ? (size_t)kk : 1, sizeof *be);
    DSMM_CHECK(ctx, rb && cb && stage_of && bs && be, DSMM_ERR_NOMEM,
               "model: bounds and cursors for %lld inner indices", (long long)kk);
    dsmmi_equal_split(A->nrows, pr, rb);
    dsmmi_equal_split(n, pc, cb);
    fill_stage_of(&m->plan, stage_of);
    a_pieces(a, rb, stage_of, m);
    dsmm_idx wmax = 0;
    for (int j = 0; j < pc; j++)
        if (cb[j + 1] - cb[j] > wmax) wmax = cb[j + 1] - cb[j];
    int nt = 1;
#ifdef _OPENMP
    nt = dsmmi_threads(ctx);
    if (nt > pr) nt = pr;
    if (nt < 1) nt = 1;
    if (nt > MAX_THREADS) nt = MAX_THREADS;
#endif
    size_t per = 2 * (size_t)(wmax ? wmax : 1);
    marks = dsmmi_malloc(ctx, (size_t)nt * per, sizeof *marks);
    DSMM_CHECK(ctx, marks != NULL, DSMM_ERR_NOMEM, "model: column markers of %d threads", nt);
    for (size_t x = 0; x < (size_t)nt * per; x++) marks[x] = -1;
    // Per thread, a cache line apart; a thread's stamps only meet its own markers.
    int64_t stamps[MAX_THREADS * 8];
    memset(stamps, 0, sizeof stamps);
    memcpy(bs, b->rowptr, (size_t)kk * sizeof *bs);
    for (int j = 0; j < pc; j++) {
        // be[k]: the end of block j in row k of B; the next block starts there.
        for (dsmm_idx k = 0; k < kk; k++) {
            dsmm_idx q = bs[k], e = b->rowptr[k + 1];
            while (q < e && dsmm_csr_col(b, q) < cb[j + 1]) q++;
            be[k] = q;
        }
        for (int s = 0; s < S; s++) {
            int64_t bn = 0;
            for (dsmm_idx k = m->plan.lo[s]; k < m->plan.hi[s]; k++) bn += be[k] - bs[k];
            size_t x = (size_t)s * pc + j;
            m->b_nnz[x] = bn;
            m->b_bytes[x] = (int64_t)dsmmi_piece_bytes(m->plan.hi[s] - m->plan.lo[s], bn, b->type);
        }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (int i = 0; i < pr; i++) {
            int th = 0;
#ifdef _OPENMP
            th = omp_get_thread_num();
#endif
            int64_t *ms = marks + (size_t)th * per;
            count_block(a, b, rb, i, j, bs, be, stage_of, cb[j], ms, ms + per / 2, &stamps[th * 8],
                        m);
        }
        dsmm_idx *tmp = bs;
        bs = be;
        be = tmp;
    }
    for (int i = 0; i < pr; i++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < pc; j++) {
                size_t it = ((size_t)i * S + s) * pc + j;
                if (m->a_nnz[(size_t)i * S + s] == 0 || m->b_nnz[(size_t)s * pc + j] == 0) {
                    m->flops[it] = 0;
                    m->p_nnz[it] = 0;
                }
                m->p_bytes[it] =
                    (int64_t)dsmmi_piece_bytes(rb[i + 1] - rb[i], m->p_nnz[it], m->ctype);
            }
    account(m);
cleanup:
    if (st != DSMM_OK && m != NULL) dsmmi_model_free(ctx, m);
    dsmm_csr_destroy(&Acopy);
    dsmm_csr_destroy(&Bcopy);
    rb = dsmmi_free(ctx, rb);
    cb = dsmmi_free(ctx, cb);
    bs = dsmmi_free(ctx, bs);
    be = dsmmi_free(ctx, be);
    stage_of = dsmmi_free(ctx, stage_of);
    marks = dsmmi_free(ctx, marks);
    return st;
}

dsmm_status dsmmi_model_spmm(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type btype, int pr,
                             int pc, dsmmi_model *m)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Acopy = NULL;
    dsmm_idx *rb = NULL, *cb = NULL;
    int *stage_of = NULL;

    DSMM_CHECK(ctx, m != NULL, DSMM_ERR_ARG, "model: m must be non-NULL");
    memset(m, 0, sizeof *m);
    DSMM_CHECK(ctx, A != NULL, DSMM_ERR_ARG, "model: A must be non-NULL");
    DSMM_CHECK(ctx, k >= 0, DSMM_ERR_ARG, "model: B has %lld columns", (long long)k);
    DSMM_CHECK(ctx, btype == DSMM_FLOAT || btype == DSMM_DOUBLE, DSMM_ERR_ARG,
               "model: dense B must be float or double, not type %d", (int)btype);
    DSMM_TRY(setup(ctx, A->ncols, pr, pc, m));
    m->spmm = 1;
    m->ctype = btype;
    const dsmm_csr *a = NULL;
    DSMM_TRY(sorted_view(ctx, A, &Acopy, &a));
    int S = m->S;
    dsmm_idx kk = A->ncols;
    size_t w = dsmmi_type_size(btype);
    rb = dsmmi_malloc(ctx, (size_t)pr + 1, sizeof *rb);
    cb = dsmmi_malloc(ctx, (size_t)pc + 1, sizeof *cb);
    stage_of = dsmmi_malloc(ctx, kk ? (size_t)kk : 1, sizeof *stage_of);
    DSMM_CHECK(ctx, rb && cb && stage_of, DSMM_ERR_NOMEM, "model: bounds of %lld inner indices",
               (long long)kk);
    dsmmi_equal_split(A->nrows, pr, rb);
    dsmmi_equal_split(k, pc, cb);
    fill_stage_of(&m->plan, stage_of);
    a_pieces(a, rb, stage_of, m);
    for (int s = 0; s < S; s++)
        for (int j = 0; j < pc; j++) {
            int64_t bn = (int64_t)(m->plan.hi[s] - m->plan.lo[s]) * (cb[j + 1] - cb[j]);
            m->b_nnz[(size_t)s * pc + j] = bn;
            m->b_bytes[(size_t)s * pc + j] = bn * (int64_t)w;
        }
    for (int i = 0; i < pr; i++)
        for (int j = 0; j < pc; j++) {
            int64_t cn = (int64_t)(rb[i + 1] - rb[i]) * (cb[j + 1] - cb[j]);
            m->c_nnz[(size_t)i * pc + j] = cn;
            for (int s = 0; s < S; s++) {
                size_t it = ((size_t)i * S + s) * pc + j;
                int64_t an = m->a_nnz[(size_t)i * S + s];
                if (an == 0 || m->b_nnz[(size_t)s * pc + j] == 0) continue;
                // dsmmi_local_spmm's convention: a multiply and an add per entry and column.
                m->flops[it] = 2.0 * (double)an * (double)(cb[j + 1] - cb[j]);
                m->p_nnz[it] = cn;
                m->p_bytes[it] = cn * (int64_t)w;
            }
        }
    account(m);
cleanup:
    if (st != DSMM_OK && m != NULL) dsmmi_model_free(ctx, m);
    dsmm_csr_destroy(&Acopy);
    rb = dsmmi_free(ctx, rb);
    cb = dsmmi_free(ctx, cb);
    stage_of = dsmmi_free(ctx, stage_of);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Imbalance and the roofline                                                                 */
/* ------------------------------------------------------------------------------------------ */

// max and sum of v[0..n) at stride.
static void max_sum(const double *v, int n, size_t stride, double *mx, double *sum)
{
    double m = 0, s = 0;
    for (int r = 0; r < n; r++) {
        double x = v[(size_t)r * stride];
        s += x;
        if (x > m) m = x;
    }
    *mx = m;
    *sum = s;
}

double dsmmi_model_imbalance(const double *v, int n)
{
    double mx = 0, sum = 0;
    if (v == NULL || n < 1) return 1.0;
    max_sum(v, n, 1, &mx, &sum);
    return sum > 0 ? mx / (sum / n) : 1.0;
}

int dsmmi_model_stage_imbalance(const double *stage_flops, int P, int S, double *out)
{
    int worst = -1;
    for (int s = 0; s < S; s++) {
        double mx = 0, sum = 0;
        max_sum(stage_flops + s, P, (size_t)S, &mx, &sum);
        out[s] = sum > 0 ? mx / (sum / P) : 0;
        if (sum > 0 && (worst < 0 || out[s] > out[worst])) worst = s;
    }
    return worst;
}

double dsmmi_model_sync_imbalance(const double *stage_flops, int P, int S)
{
    double smax = 0, savg = 0;
    for (int s = 0; s < S; s++) {
        double mx = 0, sum = 0;
        max_sum(stage_flops + s, P, (size_t)S, &mx, &sum);
        smax += mx;
        savg += sum / P;
    }
    return savg > 0 ? smax / savg : 1.0;
}

static int positive(double x)
{
    return isfinite(x) && x > 0;
}

dsmm_status dsmmi_model_roofline(dsmm_ctx *ctx, const dsmmi_model *m, const dsmmi_model_machine *mc,
                                 dsmmi_model_roof *out)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, m != NULL && mc != NULL && out != NULL, DSMM_ERR_ARG,
               "model roofline: m, mc and out must be non-NULL");
    DSMM_CHECK(ctx, positive(mc->bw) && positive(mc->peak) && positive(mc->membw), DSMM_ERR_ARG,
               "model roofline: bandwidth %g, peak %g and memory bandwidth %g must be positive",
               mc->bw, mc->peak, mc->membw);
    memset(out, 0, sizeof *out);
    int pr = m->pr, pc = m->pc, S = m->S, P = m->P;
    const dsmmi_summa_plan *p = &m->plan;
    double flops = 0, touched = 0, pnnz = 0;
    for (int i = 0; i < pr; i++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < pc; j++) {
                size_t it = ((size_t)i * S + s) * pc + j;
                if (m->a_nnz[(size_t)i * S + s] == 0 || m->b_nnz[(size_t)s * pc + j] == 0) continue;
                flops += m->flops[it];
                pnnz += (double)m->p_nnz[it];
                touched += (double)(m->a_bytes[(size_t)i * S + s] + m->b_bytes[(size_t)s * pc + j] +
                                    m->p_bytes[it]);
            }
    out->flops = flops;
    if (m->spmm) {
        out->local_ai = touched > 0 ? flops / touched : 0;
    } else {
        double b = (double)(dsmmi_type_size(m->ctype) + sizeof(int32_t));
        out->cf = pnnz > 0 ? flops / pnnz : 0;
        out->local_ai = out->cf / ((3 + 2 * out->cf) * b);
    }
    out->local_roof = fmin(mc->peak, out->local_ai * mc->membw);
    for (int a = 0; a < DSMMI_MODEL_COUNT; a++) {
        double bytes = 0;
        for (int r = 0; r < P; r++) bytes += (double)m->rank_in[a][r];
        out->bytes[a] = bytes;
        out->inter_ai[a] = bytes > 0 ? flops / bytes : INFINITY;
        out->attainable[a] =
            bytes > 0 ? fmin(out->local_roof, out->inter_ai[a] * mc->bw) : out->local_roof;
    }
    // Compute time of f flops at the local roof (no flops: no time, whatever the roof).
#define COMP(f) ((f) > 0 ? (f) / out->local_roof : 0.0)
    double t = 0;
    for (int s = 0; s < S; s++) {
        double worst = 0;
        for (int i = 0; i < pr; i++)
            for (int j = 0; j < pc; j++) {
                int r = i * pc + j;
                double recv = (j != p->kc[s] ? (double)m->a_bytes[(size_t)i * S + s] : 0) +
                              (i != p->kr[s] ? (double)m->b_bytes[(size_t)s * pc + j] : 0);
                double x = fmax(COMP(m->stage_flops[(size_t)r * S + s]), recv / mc->bw);
                if (x > worst) worst = x;
            }
        t += worst;
    }
    out->time[DSMMI_MODEL_SUMMA] = t;
    for (int a = DSMMI_MODEL_RDMA_C; a < DSMMI_MODEL_COUNT; a++) {
        double worst = 0;
        for (int r = 0; r < P; r++) {
            double link = (double)(m->rank_in[a][r] > m->rank_out[a][r] ? m->rank_in[a][r]
                                                                        : m->rank_out[a][r]);
            double x = fmax(COMP(m->rank_flops[a][r]), link / mc->bw);
            if (x > worst) worst = x;
        }
        out->time[a] = worst;
    }
#undef COMP
cleanup:
    return st;
}
