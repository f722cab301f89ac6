// src/kernels/ooc.c: out-of-core SpGEMM (out-of-core paper §III-IV, docs/ooc.md).
//
// C = A * B in chunks C[i][j] = A[i] * B[j]: A cut into row panels, B into column panels (the
// row-column formulation, §III.A: a chunk's values are final). The plan: B's column panels
// are cut by nnz so that one fits half the budget; then rows are added to a row panel while
// every chunk of that panel still fits the budget (A's rows, B's panel, the estimated chunk
// of C, the kernel's workspace). Chunks run largest flops first (§IV.C) on the executors that
// take them from one queue: the host (the CPU kernels), the device (src/gpu/ooc.cu), or both
// at once (hybrid, Alg. 4). Each result goes back as a host CSR; the assembly then copies the
// chunks into one CSR, column panels in order, so rows stay sorted.
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/ooc.h"

#define DEFAULT_RATIO 0.65

void dsmm_ooc_opts_init(dsmm_ooc_opts *o)
{
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->gpu_ratio = DEFAULT_RATIO;
    o->estimate_keys = -1;
    o->seed = 1;
}

/* A chunk as the run keeps it: the public part first, so executors' pointers convert back. */
typedef struct node {
    dsmmi_ooc_chunk c;
    dsmm_csr *C;    // the result, once done (NULL once placed in the output)
    dsmm_idx nnz;   // its nnz
    int side;       // who took it (-1: not yet)
    int split;      // 1: replaced by two halves
    double t_taken; // wall time when taken
    int id;         // its index in run->nodes
} node;

struct dsmmi_ooc {
    dsmm_ctx *ctx;
    const dsmm_csr *A, *B;
    dsmmi_spgemm_args args;
    dsmm_spgemm_alg host_alg;
    size_t budget;
    int device;       // 1: a device executor runs (its side counts C twice: pipelined)
    int ncp;          // column panels
    dsmm_idx *cbound; // ncp + 1 column bounds
    dsmm_csr **Bp;    // ncp panels (Bp[0] == B when ncp == 1, not owned then)
    dsmm_idx *fl;     // flops per row and panel: fl[r * ncp + j]
    double *est;      // estimated nnz per row and panel (same layout)
    node **nodes;     // every chunk made, splits included
    int nnodes, capnodes;
    int *q; // the planned chunks by flops, largest first (indices into nodes)
    int nq, front, back;
    int boundary; // device takes q[front, boundary), host q[boundary, back); -1: not set
    int ratio_auto;
    double ratio;   // aimed device share of the flops
    double rate[2]; // flops per second of each side's first chunk (auto), 0 = not yet
    int *stack[2];  // split halves waiting, per side (LIFO)
    int nstack[2], capstack[2];
    int host_from_front; // 1: the host is alone and takes largest first
    int abort;           // an executor failed: nobody takes more
    int splits;
    // With exact counts (estimate_keys 0) C is allocated after the plan and each chunk is
    // copied into place as it comes back, so the host holds C plus the chunks in flight;
    // else the chunks wait for the assembly (C twice at its peak).
    int exact;      // run->est holds exact counts
    dsmm_csr *Cout; // the output, when exact
    int out_sorted; // every chunk came back sorted
    pthread_mutex_t lock;
};

static size_t val_bytes(dsmm_type t)
{
    return t == DSMM_DOUBLE ? 8 : t == DSMM_FLOAT ? 4 : 0;
}

static size_t csr_bytes(dsmm_idx rows, double nnz, int col_bits, size_t vb)
{
    return (size_t)(rows + 1) * sizeof(dsmm_idx) + (size_t)(nnz * (double)(col_bits / 8 + vb));
}

static dsmm_idx col_at(const dsmm_csr *M, dsmm_idx k)
{
    return M->colidx32 ? (dsmm_idx)M->colidx32[k] : M->colidx[k];
}

/* ------------------------------------------------------------------------------------------ */
/* Panels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Column bounds of ncp panels of about equal nnz of B (every panel at least one column). */
static dsmm_status cut_columns(dsmm_ctx *ctx, const dsmm_csr *B, int ncp, dsmm_idx *bound)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx n = B->ncols, *cnt = NULL;
    bound[0] = 0;
    bound[ncp] = n;
    if (ncp == 1) return DSMM_OK;
    cnt = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *cnt);
    DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "ooc: column counts of B");
    for (dsmm_idx k = 0; k < B->nnz; k++) cnt[col_at(B, k)]++;
    {
        double per = (double)B->nnz / ncp, acc = 0;
        int j = 1;
        for (dsmm_idx c = 0; c < n && j < ncp; c++) {
            acc += (double)cnt[c];
            // cut after column c when the panel's share is reached, leaving a column for
            // every later panel
            if ((acc >= per * j && c + 1 >= bound[j - 1] + 1) || n - (c + 1) == ncp - j)
                bound[j++] = c + 1;
        }
        for (; j < ncp; j++) bound[j] = bound[j - 1] + 1; // not reached with n >= ncp
    }
cleanup:
    dsmmi_free(ctx, cnt);
    return st;
}

/* B's column panels: rows of B restricted to [bound[j], bound[j + 1]), columns renumbered. */
static dsmm_status make_col_panels(dsmm_ctx *ctx, const dsmm_csr *B, int ncp, const dsmm_idx *bound,
                                   dsmm_csr **Bp)
{
    dsmm_status st = DSMM_OK;
    int32_t *map = NULL;
    int failed = 0;
    dsmm_idx k = B->nrows;
    size_t vb = val_bytes(B->type);
    if (ncp == 1 && (B->colidx32 != NULL || B->nnz == 0 || B->ncols > INT32_MAX)) {
        Bp[0] = (dsmm_csr *)B; // already 32-bit: B is its own panel
        return DSMM_OK;
    }
    // (one panel of a B with 64-bit columns is copied at 32 bits: the kernels then read and
    // write a third fewer bytes, and C's chunks come out 32-bit without converting B per chunk)
    map = dsmmi_malloc(ctx, (size_t)B->ncols + 1, sizeof *map);
    DSMM_CHECK(ctx, map != NULL, DSMM_ERR_NOMEM, "ooc: column-to-panel map");
    for (int j = 0; j < ncp; j++)
        for (dsmm_idx c = bound[j]; c < bound[j + 1]; c++) map[c] = j;
    // count per panel and row, then allocate each panel exactly
    for (int j = 0; j < ncp; j++) {
        DSMM_CHECK(ctx, bound[j + 1] - bound[j] <= INT32_MAX, DSMM_ERR_ARG,
                   "ooc: column panel %d is %lld columns wide (at most 2^31 - 1)", j,
                   (long long)(bound[j + 1] - bound[j]));
        DSMM_TRY(dsmmi_csr_create_ex(ctx, k, bound[j + 1] - bound[j], 0, B->type, 32, &Bp[j]));
        memset(Bp[j]->rowptr, 0, ((size_t)k + 1) * sizeof(dsmm_idx));
    }
    for (dsmm_idx r = 0; r < k; r++)
        for (dsmm_idx e = B->rowptr[r]; e < B->rowptr[r + 1]; e++)
            Bp[map[col_at(B, e)]]->rowptr[r + 1]++;
    for (int j = 0; j < ncp; j++) {
        dsmm_idx *rp = Bp[j]->rowptr;
        for (dsmm_idx r = 0; r < k; r++) rp[r + 1] += rp[r];
        DSMM_TRY(dsmm_csr_reserve(Bp[j], rp[k]));
        Bp[j]->nnz = rp[k];
        Bp[j]->sorted = B->sorted;
    }
    // fill, rows in parallel: a row's entries of panel j go to panel j's row in order; cur[j]
    // counts the entries of the current row placed in panel j (reset for the panels touched)
#ifdef _OPENMP
#pragma omp parallel num_threads(dsmmi_threads(ctx))
#endif
    {
        dsmm_idx *cur = calloc((size_t)ncp, sizeof *cur);
        if (cur == NULL) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        } else {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 512)
#endif
            for (dsmm_idx r = 0; r < k; r++) {
                for (dsmm_idx e = B->rowptr[r]; e < B->rowptr[r + 1]; e++) {
                    dsmm_idx c = col_at(B, e);
                    int j = map[c];
                    dsmm_csr *P = Bp[j];
                    dsmm_idx pos = P->rowptr[r] + cur[j]++;
                    P->colidx32[pos] = (int32_t)(c - bound[j]);
                    if (vb)
                        memcpy((char *)P->val + (size_t)pos * vb,
                               (const char *)B->val + (size_t)e * vb, vb);
                }
                for (dsmm_idx e = B->rowptr[r]; e < B->rowptr[r + 1]; e++)
                    cur[map[col_at(B, e)]] = 0;
            }
            free(cur);
        }
    }
    DSMM_CHECK(ctx, !failed, DSMM_ERR_NOMEM, "ooc: panel cursors");
cleanup:
    dsmmi_free(ctx, map);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The plan                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Working set of a chunk: A's rows, B's panel, C (copies: 2 on the device, where chunk i - 1
 * is copied back while chunk i computes), the kernel's workspace (host: one accumulator per
 * thread of up to 2 * the largest row flops or the panel width; device: row bins, counts and
 * row pointers, and a global table of the largest row). */
typedef struct cost_model {
    size_t a_vb, c_vb; // value bytes of A and of C (C on the device: doubles)
    int a_cb;          // column bytes of A
    int copies;        // copies of C held at once
    int b_conv;        // 1: the host kernel converts B's values to C's type (nnz(B_j) values)
    int threads;
    int device;
} cost_model;

static size_t chunk_cost(const cost_model *m, dsmm_idx rows, dsmm_idx annz, size_t bbytes,
                         double cnnz, dsmm_idx max_row, dsmm_idx width)
{
    size_t a = (size_t)(rows + 1) * sizeof(dsmm_idx) + (size_t)annz * (m->a_cb + m->a_vb);
    size_t conv = m->b_conv ? bbytes / 2 : 0; // at most B_j's values again
    size_t c = (size_t)m->copies * csr_bytes(rows, cnnz, 32, m->c_vb);
    double acc = fmin(2.0 * (double)max_row, (double)width);
    size_t ws;
    if (m->device)
        ws = (size_t)rows * 28 + (max_row > 4096 ? (size_t)(2.0 * acc) * 12 : 0) + (1u << 20);
    else
        ws = (size_t)rows * sizeof(dsmm_idx) + (size_t)m->threads * ((size_t)(acc * 16.0) + 4096);
    return a + bbytes + c + ws + conv;
}

static dsmm_status add_node(dsmmi_ooc *run, const dsmmi_ooc_chunk *c, int *id)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    node *nd = NULL;
    if (run->nnodes == run->capnodes) {
        int cap = run->capnodes ? 2 * run->capnodes : 16;
        node **nn = dsmmi_realloc(ctx, run->nodes, (size_t)cap, sizeof *nn);
        DSMM_CHECK(ctx, nn != NULL, DSMM_ERR_NOMEM, "ooc: chunk list");
        run->nodes = nn;
        run->capnodes = cap;
    }
    nd = dsmmi_calloc(ctx, 1, sizeof *nd);
    DSMM_CHECK(ctx, nd != NULL, DSMM_ERR_NOMEM, "ooc: chunk");
    nd->c = *c;
    nd->side = -1;
    nd->id = run->nnodes;
    *id = run->nnodes;
    run->nodes[run->nnodes++] = nd;
cleanup:
    return st;
}

/* Flops and estimated nnz of rows [r0, r1) in panel j, with the largest row's flops. */
static void range_sums(const dsmmi_ooc *run, dsmm_idx r0, dsmm_idx r1, int j, double *flops,
                       double *nnz, dsmm_idx *max_row)
{
    double f = 0, z = 0;
    dsmm_idx mx = 0;
    for (dsmm_idx r = r0; r < r1; r++) {
        dsmm_idx v = run->fl[(size_t)r * run->ncp + j];
        f += (double)v;
        z += run->est[(size_t)r * run->ncp + j];
        if (v > mx) mx = v;
    }
    *flops = f;
    *nnz = z;
    *max_row = mx;
}

/* qsort orders of chunks (arrays of node pointers). */
static int by_flops_desc(const void *x, const void *y)
{
    const node *a = *(node *const *)x, *b = *(node *const *)y;
    if (a->c.flops != b->c.flops) return a->c.flops > b->c.flops ? -1 : 1;
    if (a->c.rp != b->c.rp) return a->c.rp < b->c.rp ? -1 : 1;
    return a->c.cp < b->c.cp ? -1 : a->c.cp > b->c.cp;
}

static int by_col0(const void *x, const void *y)
{
    const node *a = *(node *const *)x, *b = *(node *const *)y;
    if (a->c.c0 != b->c.c0) return a->c.c0 < b->c.c0 ? -1 : 1;
    return a->c.r0 < b->c.r0 ? -1 : a->c.r0 > b->c.r0;
}

static int by_taken(const void *x, const void *y)
{
    const node *a = *(node *const *)x, *b = *(node *const *)y;
    return a->t_taken < b->t_taken ? -1 : a->t_taken > b->t_taken;
}

/* Per-row flops and nnz estimates per column panel. */
static dsmm_status row_stats(dsmmi_ooc *run, const dsmm_ooc_opts *o, const cost_model *cm)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    const dsmm_csr *A = run->A;
    dsmm_idx m = A->nrows, *cnt = NULL;
    double *full = NULL;
    int ncp = run->ncp;
    run->exact = 0;
    run->fl = dsmmi_malloc(ctx, (size_t)m * ncp + 1, sizeof *run->fl);
    run->est = dsmmi_malloc(ctx, (size_t)m * ncp + 1, sizeof *run->est);
    DSMM_CHECK(ctx, run->fl != NULL && run->est != NULL, DSMM_ERR_NOMEM,
               "ooc: flops per row and panel (%lld x %d)", (long long)m, ncp);
    for (int j = 0; j < ncp; j++) {
        const dsmm_idx *bp = run->Bp[j]->rowptr;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1024) num_threads(dsmmi_threads(ctx))
#endif
        for (dsmm_idx r = 0; r < m; r++) {
            dsmm_idx f = 0;
            for (dsmm_idx e = A->rowptr[r]; e < A->rowptr[r + 1]; e++) {
                dsmm_idx c = col_at(A, e);
                f += bp[c + 1] - bp[c];
            }
            run->fl[(size_t)r * ncp + j] = f;
        }
    }
    {
        // When the whole product fits the budget even with nnz(C) at its upper bound (a row's
        // flops, at most the panel's width), one chunk it is, with no estimate to pay for.
        double ub = 0;
        dsmm_idx mx = 0;
        for (dsmm_idx r = 0; r < m; r++) {
            for (int j = 0; j < ncp; j++) {
                dsmm_idx f = run->fl[(size_t)r * ncp + j];
                double w = (double)(run->cbound[j + 1] - run->cbound[j]);
                run->est[(size_t)r * ncp + j] = fmin((double)f, w);
                ub += fmin((double)f, w);
                if (f > mx) mx = f;
            }
        }
        const dsmm_csr *B0 = run->Bp[0];
        size_t one = chunk_cost(
            cm, m, A->nnz,
            csr_bytes(B0->nrows, (double)B0->nnz, dsmmi_csr_col_bits(B0), val_bytes(B0->type)), ub,
            mx, run->B->ncols);
        if (ncp == 1 && o->row_panels <= 1 && one <= run->budget) goto cleanup;
    }
    if (o->estimate_keys == 0) {
        // exact: the symbolic count of each column panel
        cnt = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *cnt);
        DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "ooc: row counts");
        for (int j = 0; j < ncp; j++) {
            DSMM_TRY(dsmmi_spgemm_count(ctx, A, run->Bp[j], cnt, NULL, NULL));
            for (dsmm_idx r = 0; r < m; r++) run->est[(size_t)r * ncp + j] = (double)cnt[r];
        }
        run->exact = 1;
    } else {
        // Cohen's estimate of each row of A * B, shared among the panels by their flops
        dsmm_spgemm_estimate_result er;
        full = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *full);
        DSMM_CHECK(ctx, full != NULL, DSMM_ERR_NOMEM, "ooc: row estimates");
        DSMM_TRY(dsmm_spgemm_estimate(ctx, A, run->B, o->estimate_keys, o->seed, full, &er));
        for (dsmm_idx r = 0; r < m; r++) {
            double tot = 0;
            for (int j = 0; j < ncp; j++) tot += (double)run->fl[(size_t)r * ncp + j];
            for (int j = 0; j < ncp; j++) {
                double f = (double)run->fl[(size_t)r * ncp + j];
                double w = (double)(run->cbound[j + 1] - run->cbound[j]);
                // 1.25: headroom for the estimator's error (one row's relative error is
                // 1/sqrt(r - 2); a chunk sums many rows, so its error is far smaller)
                double e = tot > 0 ? 1.25 * full[r] * f / tot : 0;
                run->est[(size_t)r * ncp + j] = fmin(e, fmin(f, w));
            }
        }
    }
cleanup:
    dsmmi_free(ctx, cnt);
    dsmmi_free(ctx, full);
    return st;
}

/* Row cuts: forced (nrp > 0: equal flops), or greedy under the budget. On success the chunks
 * are in run->nodes and run->q. *too_big receives a row that alone exceeds the budget (-1:
 * none) with its bytes, so the caller may try more column panels. */
static dsmm_status cut_rows(dsmmi_ooc *run, int nrp, const cost_model *cm, dsmm_idx *too_big,
                            size_t *too_big_bytes, int *nrp_out)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    const dsmm_csr *A = run->A;
    dsmm_idx m = A->nrows, *rb = NULL;
    int ncp = run->ncp, npanels = 0;
    size_t *bbytes = NULL;
    double *zsum = NULL;
    dsmm_idx *rmax = NULL;
    *too_big = -1;
    bbytes = dsmmi_malloc(ctx, (size_t)ncp, sizeof *bbytes);
    zsum = dsmmi_malloc(ctx, (size_t)ncp, sizeof *zsum);
    rmax = dsmmi_malloc(ctx, (size_t)ncp, sizeof *rmax);
    rb = dsmmi_malloc(ctx, (size_t)m + 2, sizeof *rb);
    DSMM_CHECK(ctx, bbytes != NULL && zsum != NULL && rmax != NULL && rb != NULL, DSMM_ERR_NOMEM,
               "ooc: row cuts");
    for (int j = 0; j < ncp; j++)
        bbytes[j] = csr_bytes(run->Bp[j]->nrows, (double)run->Bp[j]->nnz,
                              dsmmi_csr_col_bits(run->Bp[j]), val_bytes(run->Bp[j]->type));
    rb[0] = 0;
    if (nrp > 0) {
        // equal shares of the flops (rows summed over the panels)
        double total = 0, acc = 0;
        for (size_t e = 0; e < (size_t)m * ncp; e++) total += (double)run->fl[e];
        int p = 1;
        for (dsmm_idx r = 0; r < m && p < nrp; r++) {
            for (int j = 0; j < ncp; j++) acc += (double)run->fl[(size_t)r * ncp + j];
            if ((total > 0 ? acc >= total * p / nrp : r + 1 >= (dsmm_idx)((double)m * p / nrp)) ||
                m - (r + 1) == nrp - p)
                rb[p++] = r + 1;
        }
        while (p < nrp) rb[p++] = m; // only when m == 0
        rb[nrp] = m;
        npanels = nrp;
    } else {
        // greedy: grow the panel while every chunk of it fits (sums kept per panel)
        dsmm_idx r0 = 0;
        while (r0 < m) {
            dsmm_idx r = r0, annz = 0;
            for (int j = 0; j < ncp; j++) {
                zsum[j] = 0;
                rmax[j] = 0;
            }
            for (; r < m; r++) {
                dsmm_idx an = annz + (A->rowptr[r + 1] - A->rowptr[r]);
                int fits = 1;
                for (int j = 0; j < ncp && fits; j++) {
                    dsmm_idx f = run->fl[(size_t)r * ncp + j];
                    double z = zsum[j] + run->est[(size_t)r * ncp + j];
                    dsmm_idx mx = f > rmax[j] ? f : rmax[j];
                    size_t cost = chunk_cost(cm, r + 1 - r0, an, bbytes[j], z, mx,
                                             run->cbound[j + 1] - run->cbound[j]);
                    if (cost > run->budget) {
                        fits = 0;
                        if (r == r0) {
                            *too_big = r;
                            *too_big_bytes = cost;
                        }
                    }
                }
                if (!fits) break;
                for (int j = 0; j < ncp; j++) {
                    dsmm_idx f = run->fl[(size_t)r * ncp + j];
                    zsum[j] += run->est[(size_t)r * ncp + j];
                    if (f > rmax[j]) rmax[j] = f;
                }
                annz = an;
            }
            if (*too_big >= 0) goto cleanup;
            rb[++npanels] = r;
            r0 = r;
        }
        if (npanels == 0) rb[++npanels] = 0; // m == 0: one empty panel
    }
    // the chunks (those with no flops produce nothing and are not run)
    for (int i = 0; i < npanels; i++) {
        for (int j = 0; j < ncp; j++) {
            dsmmi_ooc_chunk c = {0};
            double f, z;
            dsmm_idx mx, an = A->rowptr[rb[i + 1]] - A->rowptr[rb[i]];
            int id;
            range_sums(run, rb[i], rb[i + 1], j, &f, &z, &mx);
            if (f <= 0) continue;
            c.rp = i;
            c.cp = j;
            c.r0 = rb[i];
            c.r1 = rb[i + 1];
            c.c0 = run->cbound[j];
            c.c1 = run->cbound[j + 1];
            c.flops = f;
            c.est_nnz = z;
            c.est_bytes = chunk_cost(cm, c.r1 - c.r0, an, bbytes[j], z, mx, c.c1 - c.c0);
            DSMM_TRY(add_node(run, &c, &id));
        }
    }
    *nrp_out = npanels;
cleanup:
    dsmmi_free(ctx, bbytes);
    dsmmi_free(ctx, zsum);
    dsmmi_free(ctx, rmax);
    dsmmi_free(ctx, rb);
    return st;
}

static void free_panels(dsmmi_ooc *run)
{
    if (run->Bp != NULL) {
        for (int j = 0; j < run->ncp; j++)
            if (run->Bp[j] != run->B) dsmm_csr_destroy(&run->Bp[j]);
    }
    run->Bp = dsmmi_free(run->ctx, run->Bp);
    run->cbound = dsmmi_free(run->ctx, run->cbound);
    run->fl = dsmmi_free(run->ctx, run->fl);
    run->est = dsmmi_free(run->ctx, run->est);
}

static void free_nodes(dsmmi_ooc *run)
{
    for (int i = 0; i < run->nnodes; i++) {
        if (run->nodes[i] == NULL) continue;
        dsmm_csr_destroy(&run->nodes[i]->C);
        dsmmi_free(run->ctx, run->nodes[i]);
    }
    run->nodes = dsmmi_free(run->ctx, run->nodes);
    run->nnodes = run->capnodes = 0;
    run->q = dsmmi_free(run->ctx, run->q);
}

/* The whole plan: column panels (forced, or the fewest whose largest fits half the budget,
 * doubled while a single row does not fit), row panels, the chunk order. */
static dsmm_status plan(dsmmi_ooc *run, const dsmm_ooc_opts *o, int *nrp_out)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    const dsmm_csr *B = run->B;
    cost_model cm = {.a_vb = val_bytes(run->A->type),
                     .c_vb = run->device ? (run->args.type == DSMM_PATTERN ? 0 : 8)
                                         : val_bytes(run->args.type),
                     .a_cb = dsmmi_csr_col_bits(run->A) / 8,
                     .copies = run->device ? 2 : 1,
                     .threads = dsmmi_threads(ctx),
                     .device = run->device,
                     .b_conv = !run->device && run->args.sr != DSMM_PLUS_PAIR &&
                               run->args.type != DSMM_PATTERN && run->B->type != run->args.type};
    dsmm_idx n = B->ncols, m = run->A->nrows;
    // at most 4096 column panels, and per-row statistics (16 bytes a row and panel) of at most
    // 1 GiB: beyond that, narrower panels cost more than they save
    dsmm_idx max_cp = n > 0 ? n : 1;
    if (max_cp > 4096) max_cp = 4096;
    if (m > 0 && max_cp > ((dsmm_idx)1 << 26) / m)
        max_cp = ((dsmm_idx)1 << 26) / m > 0 ? ((dsmm_idx)1 << 26) / m : 1;
    int ncp = o->col_panels;
    if (ncp > 0 && (dsmm_idx)ncp > max_cp) max_cp = ncp; // asked for: allowed
    // no chunk is smaller than B's row pointers and one row of A: a budget below that fails now
    {
        size_t floor_b = ((size_t)B->nrows + 1) * sizeof(dsmm_idx) + 2 * sizeof(dsmm_idx);
        DSMM_CHECK(ctx, run->budget > floor_b, DSMM_ERR_NOMEM,
                   "ooc: a budget of %zu bytes cannot hold a column panel's row pointers (%zu "
                   "bytes for the %lld rows of B); raise the budget (--ooc-mem / --gpu-mem)",
                   run->budget, floor_b, (long long)B->nrows);
    }
    if (ncp <= 0) {
        // fewest panels whose largest holds at most half the budget (B / ncp on average)
        size_t bb = csr_bytes(B->nrows, (double)B->nnz, 32, val_bytes(B->type));
        ncp = 1;
        while ((size_t)ncp < (size_t)max_cp && bb / (size_t)ncp > run->budget / 2) ncp *= 2;
        if ((dsmm_idx)ncp > max_cp) ncp = (int)max_cp;
    }
    for (;;) {
        dsmm_idx big = -1;
        size_t big_bytes = 0;
        run->ncp = ncp;
        run->cbound = dsmmi_malloc(ctx, (size_t)ncp + 1, sizeof *run->cbound);
        run->Bp = dsmmi_calloc(ctx, (size_t)ncp, sizeof *run->Bp);
        DSMM_CHECK(ctx, run->cbound != NULL && run->Bp != NULL, DSMM_ERR_NOMEM, "ooc: panels");
        DSMM_TRY(cut_columns(ctx, B, ncp, run->cbound));
        DSMM_TRY(make_col_panels(ctx, B, ncp, run->cbound, run->Bp));
        DSMM_TRY(row_stats(run, o, &cm));
        DSMM_TRY(cut_rows(run, o->row_panels, &cm, &big, &big_bytes, nrp_out));
        if (big < 0) break;
        // one row does not fit against its column panel: narrower panels, if allowed
        if (o->col_panels > 0 || ncp >= max_cp || ncp >= 1 << 20) {
            DSMM_FAIL(ctx, DSMM_ERR_NOMEM,
                      "ooc: row %lld of A alone needs %zu bytes against a column panel of B "
                      "(%d panel%s), more than the budget of %zu bytes; raise the budget "
                      "(--ooc-mem / --gpu-mem)%s",
                      (long long)big, big_bytes, ncp, ncp == 1 ? "" : "s", run->budget,
                      o->col_panels > 0 ? " or allow more column panels" : "");
        }
        free_nodes(run);
        free_panels(run);
        ncp = (dsmm_idx)ncp * 2 > max_cp ? (int)max_cp : ncp * 2;
    }
    // the order: largest flops first (§IV.C)
    run->nq = run->nnodes;
    run->q = dsmmi_malloc(ctx, (size_t)run->nq + 1, sizeof *run->q);
    DSMM_CHECK(ctx, run->q != NULL, DSMM_ERR_NOMEM, "ooc: chunk order");
    if (run->nq > 0) qsort(run->nodes, (size_t)run->nq, sizeof *run->nodes, by_flops_desc);
    for (int i = 0; i < run->nq; i++) {
        run->nodes[i]->id = i; // nothing refers to the ids yet
        run->q[i] = i;
    }
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The queue                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The boundary for the device's share `ratio` of the flops (Alg. 4, lines 16-24): the first g
 * chunks hold at least that share; kept within the chunks nobody has taken yet. */
static int boundary_for(const dsmmi_ooc *run, double ratio)
{
    double total = 0, acc = 0;
    int g = 0;
    for (int i = 0; i < run->nq; i++) total += run->nodes[run->q[i]]->c.flops;
    if (ratio <= 0)
        g = 0;
    else if (ratio >= 1)
        g = run->nq;
    else {
        for (g = 0; g < run->nq;) {
            acc += run->nodes[run->q[g]]->c.flops;
            g++;
            if (acc >= ratio * total) break;
        }
    }
    if (g < run->front) g = run->front;
    if (g > run->back) g = run->back;
    return g;
}

dsmmi_ooc_chunk *dsmmi_ooc_take(dsmmi_ooc *run, int side)
{
    node *nd = NULL;
    pthread_mutex_lock(&run->lock);
    if (!run->abort) {
        if (run->nstack[side] > 0) {
            nd = run->nodes[run->stack[side][--run->nstack[side]]];
        } else if (side == DSMMI_OOC_DEV) {
            int lim = run->boundary >= 0 ? run->boundary : run->back;
            if (run->front < lim) nd = run->nodes[run->q[run->front++]];
        } else {
            int lim = run->boundary >= 0 ? run->boundary : run->front;
            if (run->host_from_front) {
                if (run->front < run->back) nd = run->nodes[run->q[run->front++]];
            } else if (run->back > lim) {
                nd = run->nodes[run->q[--run->back]];
            }
        }
    }
    if (nd != NULL) {
        nd->side = side;
        nd->t_taken = dsmmi_wtime();
    }
    pthread_mutex_unlock(&run->lock);
    return nd ? &nd->c : NULL;
}

dsmm_status dsmmi_ooc_panels(dsmmi_ooc *run, const dsmmi_ooc_chunk *c, dsmm_csr **Ai,
                             const dsmm_csr **Bj)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    const dsmm_csr *A = run->A;
    dsmm_idx rows = c->r1 - c->r0, base = A->rowptr[c->r0];
    size_t vb = val_bytes(A->type);
    dsmm_csr *P = NULL;
    *Ai = NULL;
    // One block: the struct, then the rebased row pointers; columns and values borrow A's
    // (owns_arrays = 0, so dsmm_csr_destroy frees just the block).
    P = dsmmi_malloc(ctx, 1, sizeof *P + ((size_t)rows + 1) * sizeof(dsmm_idx));
    DSMM_CHECK(ctx, P != NULL, DSMM_ERR_NOMEM, "ooc: row panel of A (%lld rows)", (long long)rows);
    memset(P, 0, sizeof *P);
    P->rowptr = (dsmm_idx *)(P + 1);
    for (dsmm_idx r = 0; r <= rows; r++) P->rowptr[r] = A->rowptr[c->r0 + r] - base;
    P->nrows = rows;
    P->ncols = A->ncols;
    P->nnz = P->cap = P->rowptr[rows];
    if (A->colidx32)
        P->colidx32 = A->colidx32 + base;
    else
        P->colidx = A->colidx + base;
    P->val = vb ? (char *)A->val + (size_t)base * vb : NULL;
    P->type = A->type;
    P->sorted = A->sorted;
    P->owns_arrays = 0;
    P->ctx = ctx;
    *Ai = P;
    *Bj = run->Bp[c->cp];
cleanup:
    return st;
}

void dsmmi_ooc_row_flops(const dsmmi_ooc *run, const dsmmi_ooc_chunk *c, dsmm_idx *flops)
{
    for (dsmm_idx r = c->r0; r < c->r1; r++)
        flops[r - c->r0] = run->fl[(size_t)r * run->ncp + c->cp];
}

const dsmmi_spgemm_args *dsmmi_ooc_args(const dsmmi_ooc *run)
{
    return &run->args;
}

size_t dsmmi_ooc_budget(const dsmmi_ooc *run)
{
    return run->budget;
}

/* One row piece of chunk K (len entries from s0) into C at d, columns shifted by c0. */
static void copy_row(dsmm_csr *C, dsmm_idx d, const dsmm_csr *K, dsmm_idx s0, dsmm_idx len,
                     dsmm_idx c0, size_t vb)
{
    for (dsmm_idx e = 0; e < len; e++) {
        dsmm_idx col = c0 + col_at(K, s0 + e);
        if (C->colidx32)
            C->colidx32[d + e] = (int32_t)col;
        else
            C->colidx[d + e] = col;
    }
    if (vb)
        memcpy((char *)C->val + (size_t)d * vb, (const char *)K->val + (size_t)s0 * vb,
               (size_t)len * vb);
}

/* Copies chunk K (node nd) into its place in run->Cout: row r's piece of column panel j starts
 * after the row's pieces of panels 0..j-1, whose exact sizes the plan counted. Chunks write
 * disjoint ranges, so executors may place at the same time. */
static dsmm_status place(dsmmi_ooc *run, const node *nd, const dsmm_csr *K, int parallel)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    dsmm_csr *C = run->Cout;
    int ncp = run->ncp, cp = nd->c.cp, bad = 0;
    dsmm_idx r0 = nd->c.r0, c0 = nd->c.c0;
    size_t vb = val_bytes(run->args.type);
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 256) num_threads(dsmmi_threads(ctx)) if (parallel)
#endif
    for (dsmm_idx r = 0; r < K->nrows; r++) {
        dsmm_idx g = r0 + r, d = C->rowptr[g], s0 = K->rowptr[r], len = K->rowptr[r + 1] - s0;
        for (int j = 0; j < cp; j++) d += (dsmm_idx)run->est[(size_t)g * ncp + j];
        if (len != (dsmm_idx)run->est[(size_t)g * ncp + cp]) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            bad = 1;
            continue;
        }
        copy_row(C, d, K, s0, len, c0, vb);
    }
    DSMM_CHECK(ctx, !bad, DSMM_ERR_INTERNAL,
               "ooc: chunk [%lld, %lld) x [%lld, %lld) has rows of other lengths than counted",
               (long long)nd->c.r0, (long long)nd->c.r1, (long long)nd->c.c0, (long long)nd->c.c1);
    if (!K->sorted) {
        pthread_mutex_lock(&run->lock);
        run->out_sorted = 0;
        pthread_mutex_unlock(&run->lock);
    }
cleanup:
    return st;
}

dsmm_status dsmmi_ooc_done(dsmmi_ooc *run, dsmmi_ooc_chunk *c, dsmm_csr *C)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    node *nd = (node *)c;
    double now = dsmmi_wtime();
    DSMM_CHECK(ctx,
               C != NULL && C->nrows == c->r1 - c->r0 && C->ncols == c->c1 - c->c0 &&
                   C->type == run->args.type,
               DSMM_ERR_ARG,
               "ooc: chunk [%lld, %lld) x [%lld, %lld) came back with the wrong shape or type",
               (long long)c->r0, (long long)c->r1, (long long)c->c0, (long long)c->c1);
    nd->nnz = C->nnz;
    if (run->Cout != NULL) {
        DSMM_TRY(place(run, nd, C, nd->side == DSMMI_OOC_HOST));
        dsmm_csr_destroy(&C); // its memory goes back now, not at the assembly
    }
    pthread_mutex_lock(&run->lock);
    if (C != NULL && !C->sorted) run->out_sorted = 0;
    nd->C = C;
    C = NULL;
    if (run->ratio_auto && run->boundary < 0 && run->rate[nd->side] == 0) {
        double t = now - nd->t_taken;
        run->rate[nd->side] = c->flops / (t > 1e-9 ? t : 1e-9);
        if (run->rate[0] > 0 && run->rate[1] > 0) {
            double s = run->rate[1] / run->rate[0]; // device over host
            run->ratio = s / (s + 1);
            run->boundary = boundary_for(run, run->ratio);
        }
    }
    pthread_mutex_unlock(&run->lock);
cleanup:
    dsmm_csr_destroy(&C);
    return st;
}

dsmm_status dsmmi_ooc_split(dsmmi_ooc *run, dsmmi_ooc_chunk *c, int side)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    dsmmi_ooc_chunk h[2];
    dsmm_idx cut = c->r0;
    int id[2] = {-1, -1};
    pthread_mutex_lock(&run->lock);
    DSMM_CHECK(ctx, c->r1 - c->r0 > 1, DSMM_ERR_NOMEM,
               "ooc: row %lld of A against columns [%lld, %lld) of B does not fit the %s "
               "memory (%.1f MiB planned for it); raise the budget",
               (long long)c->r0, (long long)c->c0, (long long)c->c1,
               side == DSMMI_OOC_DEV ? "device" : "host", (double)c->est_bytes / 1048576.0);
    {
        double half = c->flops / 2, acc = 0;
        for (cut = c->r0; cut < c->r1 - 1; cut++) {
            acc += (double)run->fl[(size_t)cut * run->ncp + c->cp];
            if (acc >= half) break;
        }
        cut++;
        if (cut >= c->r1) cut = c->r1 - 1;
    }
    for (int k = 0; k < 2; k++) {
        double f, z;
        dsmm_idx mx;
        h[k] = *c;
        h[k].r0 = k == 0 ? c->r0 : cut;
        h[k].r1 = k == 0 ? cut : c->r1;
        range_sums(run, h[k].r0, h[k].r1, c->cp, &f, &z, &mx);
        h[k].flops = f;
        h[k].est_nnz = z;
        h[k].est_bytes = c->est_bytes / 2;
        h[k].on_gpu = 0;
        h[k].seconds_compute = h[k].seconds_transfer = h[k].seconds_hidden = 0;
        h[k].bytes = 0;
        // a half without flops produces nothing: it is not run (its rows of C stay empty)
        // (c stays valid when the node array grows: nodes are separate blocks)
        if (f > 0) DSMM_TRY(add_node(run, &h[k], &id[k]));
    }
    if (run->nstack[side] + 2 > run->capstack[side]) {
        int cap = run->capstack[side] ? 2 * run->capstack[side] : 8;
        int *s = dsmmi_realloc(ctx, run->stack[side], (size_t)cap, sizeof *s);
        DSMM_CHECK(ctx, s != NULL, DSMM_ERR_NOMEM, "ooc: split chunks");
        run->stack[side] = s;
        run->capstack[side] = cap;
    }
    // the first half is taken first
    if (id[1] >= 0) run->stack[side][run->nstack[side]++] = id[1];
    if (id[0] >= 0) run->stack[side][run->nstack[side]++] = id[0];
    ((node *)c)->split = 1;
    run->splits++;
cleanup:
    pthread_mutex_unlock(&run->lock);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Executors                                                                                  */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmmi_ooc_host_exec(dsmm_ctx *ctx, dsmmi_ooc *run, int side, void *user)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *Ai = NULL, *Cc = NULL;
    dsmmi_ooc_chunk *c;
    (void)user;
    while ((c = dsmmi_ooc_take(run, side)) != NULL) {
        const dsmm_csr *Bj = NULL;
        dsmm_spgemm_opts o;
        dsmm_spgemm_info inf;
        dsmm_spgemm_opts_init(&o);
        o.alg = run->host_alg;
        o.semiring = run->args.sr;
        o.type = (int)run->args.type;
        o.unsorted = !run->args.sorted;
        DSMM_TRY(dsmmi_ooc_panels(run, c, &Ai, &Bj));
        o.col_bits = dsmmi_csr_col_bits(Bj); // C's columns as wide as B's: no conversion
        DSMM_TRY(dsmmi_local_spgemm(ctx, Ai, Bj, &o, DSMMI_SPGEMM_FULL, &Cc, &inf));
        c->on_gpu = 0;
        c->seconds_compute = inf.seconds;
        c->bytes =
            csr_bytes(Ai->nrows, (double)Ai->nnz, dsmmi_csr_col_bits(Ai), val_bytes(Ai->type)) +
            csr_bytes(Bj->nrows, (double)Bj->nnz, dsmmi_csr_col_bits(Bj), val_bytes(Bj->type)) +
            csr_bytes(Cc->nrows, (double)Cc->nnz, dsmmi_csr_col_bits(Cc), val_bytes(Cc->type)) +
            inf.workspace_bytes;
        dsmm_csr_destroy(&Ai);
        st = dsmmi_ooc_done(run, c, Cc);
        Cc = NULL;
        if (st != DSMM_OK) goto cleanup;
    }
cleanup:
    dsmm_csr_destroy(&Ai);
    dsmm_csr_destroy(&Cc);
    return st;
}

typedef struct dev_thread {
    dsmm_ctx *ctx;
    dsmmi_ooc *run;
    dsmmi_ooc_exec_fn fn;
    void *user;
    dsmm_status st;
    double seconds;
} dev_thread;

static void *dev_main(void *arg)
{
    dev_thread *d = arg;
    double t0 = dsmmi_wtime();
    d->st = d->fn(d->ctx, d->run, DSMMI_OOC_DEV, d->user);
    if (d->st != DSMM_OK) {
        pthread_mutex_lock(&d->run->lock);
        d->run->abort = 1;
        pthread_mutex_unlock(&d->run->lock);
    }
    d->seconds = dsmmi_wtime() - t0;
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Assembly                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static int leaf(const node *nd)
{
    return !nd->split;
}

/* leaves: a new array of the chunks that ran (not split), sorted by cmp; *n their count. */
static dsmm_status leaves(const dsmmi_ooc *run, int (*cmp)(const void *, const void *), node ***out,
                          int *n)
{
    dsmm_status st = DSMM_OK;
    node **v = dsmmi_malloc(run->ctx, (size_t)run->nnodes + 1, sizeof *v);
    *n = 0;
    DSMM_CHECK(run->ctx, v != NULL, DSMM_ERR_NOMEM, "ooc: chunk list");
    for (int i = 0; i < run->nnodes; i++)
        if (leaf(run->nodes[i])) v[(*n)++] = run->nodes[i];
    qsort(v, (size_t)*n, sizeof *v, cmp);
cleanup:
    *out = v;
    return st;
}

/* The chunks (all done) into one CSR: row counts summed, then each chunk's rows copied into
 * place, column panels in order so every row comes out in column order. */
static dsmm_status assemble(dsmmi_ooc *run, int col_bits, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = run->ctx;
    dsmm_idx m = run->A->nrows, n = run->B->ncols, *pos = NULL;
    dsmm_csr *C = NULL;
    node **v = NULL;
    int nv = 0, sorted = run->args.sorted;
    size_t vb = val_bytes(run->args.type);
    if (run->Cout != NULL) {
        // placed as they came back
        run->Cout->sorted = run->args.sorted && run->out_sorted;
        *out = run->Cout;
        run->Cout = NULL;
        return DSMM_OK;
    }
    // column panels in increasing order (then rows), so a row's pieces land left to right
    DSMM_TRY(leaves(run, by_col0, &v, &nv));
    if (nv == 1 && v[0]->C != NULL && v[0]->c.r0 == 0 && v[0]->c.r1 == m && v[0]->c.c0 == 0 &&
        v[0]->c.c1 == n && dsmmi_csr_col_bits(v[0]->C) == col_bits) {
        // one chunk covering C with C's column width: it is C
        *out = v[0]->C;
        v[0]->C = NULL;
        goto cleanup;
    }
    pos = dsmmi_calloc(ctx, (size_t)m + 1, sizeof *pos);
    DSMM_CHECK(ctx, pos != NULL, DSMM_ERR_NOMEM, "ooc: assembly");
    for (int t = 0; t < nv; t++) {
        const node *nd = v[t];
        DSMM_CHECK(ctx, nd->C != NULL, DSMM_ERR_INTERNAL,
                   "ooc: chunk [%lld, %lld) x [%lld, %lld) has no result", (long long)nd->c.r0,
                   (long long)nd->c.r1, (long long)nd->c.c0, (long long)nd->c.c1);
        for (dsmm_idx r = 0; r < nd->C->nrows; r++)
            pos[nd->c.r0 + r + 1] += nd->C->rowptr[r + 1] - nd->C->rowptr[r];
        sorted = sorted && nd->C->sorted;
    }
    for (dsmm_idx r = 0; r < m; r++) pos[r + 1] += pos[r];
    DSMM_TRY(dsmmi_csr_create_ex(ctx, m, n, pos[m], run->args.type, col_bits, &C));
    memcpy(C->rowptr, pos, ((size_t)m + 1) * sizeof *pos);
    C->nnz = pos[m];
    for (int t = 0; t < nv; t++) {
        node *nd = v[t];
        const dsmm_csr *K = nd->C;
        dsmm_idx c0 = nd->c.c0, r0 = nd->c.r0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 256) num_threads(dsmmi_threads(ctx))
#endif
        for (dsmm_idx r = 0; r < K->nrows; r++) {
            dsmm_idx d = pos[r0 + r], s0 = K->rowptr[r], len = K->rowptr[r + 1] - s0;
            copy_row(C, d, K, s0, len, c0, vb);
            pos[r0 + r] = d + len;
        }
        dsmm_csr_destroy(&nd->C); // its bytes go back before the next chunk's copy
    }
    C->sorted = sorted;
    *out = C;
    C = NULL;
cleanup:
    dsmm_csr_destroy(&C);
    dsmmi_free(ctx, v);
    dsmmi_free(ctx, pos);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The product                                                                                */
/* ------------------------------------------------------------------------------------------ */

static size_t default_budget(dsmm_ctx *ctx, int device)
{
    if (device) {
        // 90% of what the device pool has free
        dsmm_gpu_info gi;
        if (dsmm_ctx_gpu_info(ctx, &gi) != DSMM_OK) return 0;
        if (!gi.enabled) return default_budget(ctx, 0); // a stand-in executor (tests)
        return (gi.pool_bytes - gi.pool_in_use) / 10 * 9;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return (size_t)pages * (size_t)page / 4;
    return (size_t)1 << 30;
}

dsmm_status dsmmi_ooc_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                             const dsmm_spgemm_opts *opts, const dsmm_ooc_opts *ooc,
                             dsmmi_ooc_exec_fn dev_exec, void *dev_user, dsmm_csr **C,
                             dsmm_ooc_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_ooc run;
    dsmm_ooc_opts o;
    dsmm_spgemm_opts so;
    dsmm_csr *Bt = NULL;
    dsmm_ooc_chunk_info *ci = NULL;
    node **taken = NULL;
    int lock_made = 0, nrp = 0, saved_auto = ctx ? ctx->gpu_auto : 0, saved_threads = 0;
    int device = 0, threads_set = 0;
    double t0 = dsmmi_wtime(), t_plan = 0, t_asm = 0, t_dev = 0, t_host = 0;
    dev_thread dt;
    memset(&run, 0, sizeof run);
    memset(&dt, 0, sizeof dt);
    run.boundary = -1;

    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "spgemm ooc: invalid or destroyed context");
    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_ARG, "spgemm ooc: C must be non-NULL");
    *C = NULL;
    if (info) memset(info, 0, sizeof *info);
    DSMM_CHECK(ctx, A != NULL && B != NULL, DSMM_ERR_ARG, "spgemm ooc: A and B must be non-NULL");
    if (opts)
        so = *opts;
    else
        dsmm_spgemm_opts_init(&so);
    if (ooc)
        o = *ooc;
    else
        dsmm_ooc_opts_init(&o);
    DSMM_CHECK(ctx, so.mask == NULL, DSMM_ERR_UNSUPPORTED,
               "spgemm ooc: masks are not supported out of core; run the masked product in core");
    DSMM_CHECK(ctx, !o.hybrid || o.use_gpu, DSMM_ERR_ARG,
               "spgemm ooc: hybrid needs the device (--gpu)");
    DSMM_CHECK(ctx, o.gpu_ratio <= 1.0 && !isnan(o.gpu_ratio), DSMM_ERR_ARG,
               "spgemm ooc: gpu ratio %g is above 1 (a share of the flops, or < 0 for auto)",
               o.gpu_ratio);
    DSMM_CHECK(ctx, o.row_panels >= 0 && o.col_panels >= 0, DSMM_ERR_ARG,
               "spgemm ooc: negative panel count");
    DSMM_CHECK(ctx, o.estimate_keys == -1 || o.estimate_keys == 0 || o.estimate_keys >= 3,
               DSMM_ERR_ARG, "spgemm ooc: estimate keys %d: use -1 (auto), 0 (exact) or at least 3",
               o.estimate_keys);
    // auto: exact counts on the host alone (C then grows by one chunk at a time), Cohen's
    // estimate when the device runs (an exact count would cost the CPU a symbolic phase)
    if (o.estimate_keys == -1) o.estimate_keys = o.use_gpu ? 8 : 0;
    device = o.use_gpu;
    if (device && dev_exec == NULL) {
        DSMM_CHECK(ctx, ctx->gpu != NULL, DSMM_ERR_UNSUPPORTED,
                   "spgemm ooc: the device is asked for but %s",
                   DSMM_HAVE_CUDA ? "the context has none (dsmm_ctx_set_gpu, --gpu)"
                                  : "this dsmm was built without CUDA");
        dev_exec = dsmmi_gpu_ooc_exec;
    }
    // the checks and normalisation of an in-core product, then the panel counts
    DSMM_TRY(dsmmi_spgemm_args_make(ctx, A, B, &so, &run.args));
    {
        dsmm_idx ncols_c = so.transpose_b ? B->nrows : B->ncols;
        DSMM_CHECK(ctx, (dsmm_idx)o.row_panels <= (A->nrows > 0 ? A->nrows : 1), DSMM_ERR_ARG,
                   "spgemm ooc: %d row panels for %lld rows of A", o.row_panels,
                   (long long)A->nrows);
        DSMM_CHECK(ctx, (dsmm_idx)o.col_panels <= (ncols_c > 0 ? ncols_c : 1), DSMM_ERR_ARG,
                   "spgemm ooc: %d column panels for %lld columns of B", o.col_panels,
                   (long long)ncols_c);
    }
    if (so.transpose_b) {
        DSMM_TRY(dsmm_csr_transpose(ctx, B, &Bt));
        B = Bt;
    }
    run.ctx = ctx;
    run.A = A;
    run.B = B;
    run.device = device;
    run.args.A = run.args.B = run.args.M = NULL; // executors take the panels
    // the host's chunks run on the CPU kernels (a device kernel name means AUTO there)
    run.host_alg =
        (so.alg == DSMM_SPGEMM_GPU || so.alg == DSMM_SPGEMM_CUSPARSE) ? DSMM_SPGEMM_AUTO : so.alg;
    run.budget = o.mem_bytes ? o.mem_bytes : default_budget(ctx, device);
    DSMM_CHECK(ctx, run.budget > 0, DSMM_ERR_NOMEM,
               "spgemm ooc: no memory budget (the device pool is full)");
    run.ratio_auto = o.hybrid && o.gpu_ratio < 0;
    run.ratio = !device ? 0.0 : !o.hybrid ? 1.0 : o.gpu_ratio < 0 ? -1.0 : o.gpu_ratio;
    DSMM_CHECK(ctx, pthread_mutex_init(&run.lock, NULL) == 0, DSMM_ERR_INTERNAL, "ooc: mutex");
    lock_made = 1;

    DSMM_TRY(plan(&run, &o, &nrp));
    run.out_sorted = 1;
    if (run.exact) {
        dsmm_idx m = A->nrows, tot = 0;
        DSMM_TRY(dsmmi_csr_create_ex(ctx, m, B->ncols, 0, run.args.type, so.col_bits, &run.Cout));
        for (dsmm_idx r = 0; r < m; r++) {
            for (int j = 0; j < run.ncp; j++) tot += (dsmm_idx)run.est[(size_t)r * run.ncp + j];
            run.Cout->rowptr[r + 1] = tot;
        }
        DSMM_TRY(dsmm_csr_reserve(run.Cout, tot));
        run.Cout->nnz = tot;
    }
    run.front = 0;
    run.back = run.nq;
    run.host_from_front = !device;
    if (!run.ratio_auto) run.boundary = boundary_for(&run, run.ratio);
    t_plan = dsmmi_wtime() - t0;
    dsmmi_log(ctx, DSMM_LOG_INFO, "spgemm ooc: %d x %d panels, %d chunks, budget %.1f MiB%s", nrp,
              run.ncp, run.nq, (double)run.budget / 1048576.0,
              device ? (o.hybrid ? ", hybrid" : ", device") : "");

    // the run: one thread drives the device, the others run the host's chunks
    ctx->gpu_auto = 0; // the host side's AUTO must not reach the device the other thread drives
    if (device && o.hybrid) {
        pthread_t th;
        int t = dsmmi_threads(ctx);
        saved_threads = ctx->threads;
        threads_set = 1;
        ctx->threads = t > 1 ? t - 1 : 1;
        dt.ctx = ctx;
        dt.run = &run;
        dt.fn = dev_exec;
        dt.user = dev_user;
        DSMM_CHECK(ctx, pthread_create(&th, NULL, dev_main, &dt) == 0, DSMM_ERR_INTERNAL,
                   "spgemm ooc: cannot start the device thread");
        double th0 = dsmmi_wtime();
        st = dsmmi_ooc_host_exec(ctx, &run, DSMMI_OOC_HOST, NULL);
        t_host = dsmmi_wtime() - th0;
        if (st != DSMM_OK) {
            pthread_mutex_lock(&run.lock);
            run.abort = 1;
            pthread_mutex_unlock(&run.lock);
        }
        pthread_join(th, NULL);
        t_dev = dt.seconds;
        if (st == DSMM_OK) st = dt.st;
        if (st != DSMM_OK) goto cleanup;
    } else if (device) {
        double th0 = dsmmi_wtime();
        DSMM_TRY(dev_exec(ctx, &run, DSMMI_OOC_DEV, dev_user));
        t_dev = dsmmi_wtime() - th0;
    } else {
        double th0 = dsmmi_wtime();
        DSMM_TRY(dsmmi_ooc_host_exec(ctx, &run, DSMMI_OOC_HOST, NULL));
        t_host = dsmmi_wtime() - th0;
    }
    if (threads_set) {
        ctx->threads = saved_threads;
        threads_set = 0;
    }
    // every chunk must have been taken (a side with nothing left stops; the other finishes)
    DSMM_CHECK(ctx,
               run.front == run.back || (run.front >= run.boundary && run.back <= run.boundary),
               DSMM_ERR_INTERNAL, "ooc: chunks left in the queue (%d..%d)", run.front, run.back);
    if (info) {
        // the chunks in the order they were taken
        int nl = 0;
        DSMM_TRY(leaves(&run, by_taken, &taken, &nl));
        ci = dsmmi_calloc(ctx, (size_t)nl + 1, sizeof *ci);
        DSMM_CHECK(ctx, ci != NULL, DSMM_ERR_NOMEM, "spgemm ooc: chunk records");
        for (int i = 0; i < nl; i++) {
            const node *nd = taken[i];
            dsmm_ooc_chunk_info *x = &ci[i];
            x->row_panel = nd->c.rp;
            x->col_panel = nd->c.cp;
            x->row0 = nd->c.r0;
            x->row1 = nd->c.r1;
            x->col0 = nd->c.c0;
            x->col1 = nd->c.c1;
            x->flops = nd->c.flops;
            x->nnz = nd->nnz;
            x->est_nnz = nd->c.est_nnz;
            x->est_bytes = nd->c.est_bytes;
            x->bytes = nd->c.bytes;
            x->on_gpu = nd->c.on_gpu;
            x->seconds_compute = nd->c.seconds_compute;
            x->seconds_transfer = nd->c.seconds_transfer;
            x->seconds_hidden = nd->c.seconds_hidden;
            info->chunks_gpu += nd->c.on_gpu;
            info->flops += nd->c.flops;
            if (nd->c.on_gpu) {
                info->flops_gpu += nd->c.flops;
                info->seconds_compute += nd->c.seconds_compute;
                info->seconds_transfer += nd->c.seconds_transfer;
                info->seconds_hidden += nd->c.seconds_hidden;
            }
            if (nd->c.est_bytes > info->max_est_bytes) info->max_est_bytes = nd->c.est_bytes;
            if (nd->c.bytes > info->max_bytes) info->max_bytes = nd->c.bytes;
        }
        info->chunks = nl;
    }
    {
        double ta = dsmmi_wtime();
        DSMM_TRY(assemble(&run, so.col_bits, C));
        t_asm = dsmmi_wtime() - ta;
    }
    if (info) {
        info->row_panels = nrp;
        info->col_panels = run.ncp;
        info->splits = run.splits;
        info->mem_bytes = run.budget;
        info->nnz = (*C)->nnz;
        // auto: the measured ratio; when one side finished before the other's first chunk
        // (nothing to measure), the share the device took
        info->gpu_ratio = run.ratio >= 0    ? run.ratio
                          : info->flops > 0 ? info->flops_gpu / info->flops
                                            : 0;
        info->seconds_plan = t_plan;
        info->seconds_assemble = t_asm;
        info->seconds_gpu = t_dev;
        info->seconds_cpu = t_host;
        info->hidden_fraction =
            info->seconds_compute > 0 ? info->seconds_hidden / info->seconds_compute : 0;
        info->chunk = ci;
        ci = NULL;
        info->seconds = dsmmi_wtime() - t0;
    }
cleanup:
    if (ctx != NULL && dsmmi_ctx_ok(ctx)) {
        ctx->gpu_auto = saved_auto;
        if (threads_set) ctx->threads = saved_threads;
    }
    if (st != DSMM_OK && C != NULL) dsmm_csr_destroy(C);
    dsmmi_free(ctx, ci);
    dsmmi_free(ctx, taken);
    for (int sd = 0; sd < 2; sd++) dsmmi_free(ctx, run.stack[sd]);
    if (lock_made) pthread_mutex_destroy(&run.lock);
    free_nodes(&run);
    free_panels(&run);
    dsmm_csr_destroy(&run.Cout);
    dsmm_csr_destroy(&Bt);
    return st;
}

dsmm_status dsmm_csr_spgemm_ooc(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                const dsmm_spgemm_opts *opts, const dsmm_ooc_opts *ooc,
                                dsmm_csr **C, dsmm_ooc_info *info)
{
    return dsmmi_ooc_spgemm(ctx, A, B, opts, ooc, NULL, NULL, C, info);
}
