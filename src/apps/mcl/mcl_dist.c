// src/apps/mcl/mcl_dist.c: one MCL iteration with a distributed expansion (HipMCL's way):
// the iterate goes onto the process grid, Cohen's estimator (distributed: min-key
// propagation with all-reductions of n-long key vectors) sizes the unpruned product and so
// the number of phases under per_process_mem; each phase multiplies a block of columns
// (rows of T) with the chosen distributed SpGEMM (SUMMA by default), then every rank sends,
// for each column piece it holds, its measures and its pruning candidates to the column's
// owner: every entry >= the cut and, below it, the R largest with their ties. That is a
// distributed top-k: the owner sees a superset of what mcl's rules can keep, so it prunes
// with the same code as one rank (mcl_prune.c). The owner then rescales and inflates.
// Stage partial sums differ from mcl's single running sum only by double rounding, which
// the float storage hides except on rare float-rounding boundaries (docs/mcl.md).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "dist/summa.h"

#define COHEN_KEYS 8
// Auto (estimate_keys -1) counts exactly when the expansion's flops are below this many times
// keys * nnz(T), the entries Cohen's estimator reads per key (docs/mcl.md, "Phases").
#define EXACT_FLOPS_PER_KEY_NNZ 4.0

// Record of one column piece: header, then ncand (int32 col, float val) pairs.
typedef struct piece_hdr {
    int64_t c, count, ncand;
    double maxval, center;
} piece_hdr;

static int cmp_f_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

// All-reduces the n doubles of v with op, in pieces of at most 2^26 (a count must fit an int).
static dsmm_status allreduce_f64_long(dsmm_ctx *ctx, double *v, dsmm_idx n, char op)
{
    dsmm_status st = DSMM_OK;
    const dsmm_idx chunk = (dsmm_idx)1 << 26;
    for (dsmm_idx lo = 0; lo < n; lo += chunk)
        DSMM_TRY(dsmmi_allreduce_f64(ctx, v + lo, (int)(n - lo < chunk ? n - lo : chunk), op));
cleanup:
    return st;
}

// Exact flops of each local row of T * T (rows M) and, with keys >= 3, Cohen's estimate of
// its nnz (est; untouched when keys == 0).
static dsmm_status estimate_rows(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx row0, dsmm_idx N,
                                 int keys, double *est, double *flops)
{
    dsmm_status st = DSMM_OK;
    double *m1 = NULL;
    int64_t *rownnz = NULL;
    rownnz = dsmmi_calloc(ctx, (size_t)N, sizeof *rownnz);
    m1 = dsmmi_malloc(ctx, (size_t)N, sizeof *m1);
    DSMM_CHECK(ctx, rownnz && m1, DSMM_ERR_NOMEM, "mcl: estimator vectors of %lld", (long long)N);
    for (dsmm_idx i = 0; i < M->nrows; i++) rownnz[row0 + i] = M->rowptr[i + 1] - M->rowptr[i];
    const dsmm_idx chunk = (dsmm_idx)1 << 26;
    for (dsmm_idx lo = 0; lo < N; lo += chunk)
        DSMM_TRY(
            dsmmi_allreduce_i64(ctx, rownnz + lo, (int)(N - lo < chunk ? N - lo : chunk), '+'));
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        double f = 0.0;
        for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++) f += (double)rownnz[M->col[k]];
        flops[i] = f;
    }
    if (keys == 0) goto cleanup;
    for (dsmm_idx i = 0; i < M->nrows; i++) est[i] = 0.0;
    for (int l = 0; l < keys; l++) {
        // m1[k] = min over the columns j of row k of key_l(j); keys are exponential(1),
        // key = -log((x + 0.5) 2^-53) of the hash's top 53 bits x. The key falls as x grows,
        // so the row's smallest key is that of its largest x: one log a row, not an entry
        // (the same value; pe_combined at 2 ranks spent 1.7 s of a 32 s run in the estimate).
        for (dsmm_idx v = 0; v < N; v++) m1[v] = INFINITY;
        for (dsmm_idx i = 0; i < M->nrows; i++) {
            uint64_t xmax = 0;
            dsmm_idx k0 = M->rowptr[i], k1 = M->rowptr[i + 1];
            for (dsmm_idx k = k0; k < k1; k++) {
                uint64_t x = dsmm_rng_at(0x6d636c, (uint64_t)l, (uint64_t)M->col[k]) >> 11;
                if (x > xmax) xmax = x;
            }
            m1[row0 + i] = k1 > k0 ? -log(((double)xmax + 0.5) * 0x1.0p-53) : INFINITY;
        }
        DSMM_TRY(allreduce_f64_long(ctx, m1, N, '<'));
        for (dsmm_idx i = 0; i < M->nrows; i++) {
            double m = INFINITY;
            for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++)
                if (m1[M->col[k]] < m) m = m1[M->col[k]];
            est[i] += m;
        }
    }
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        double e = est[i] > 0.0 && isfinite(est[i]) ? (keys - 1) / est[i] : 0.0;
        if (e > flops[i]) e = flops[i]; // never more than the flops (nor than N)
        if (e > (double)N) e = (double)N;
        est[i] = e;
    }
cleanup:
    dsmmi_free(ctx, rownnz);
    dsmmi_free(ctx, m1);
    return st;
}

// The grid matrix of the local rows in [lo, hi) (all of them: lo = 0, hi = N).
static dsmm_status to_grid(dsmm_ctx *ctx, const dsmmi_mcl_mat *M, dsmm_idx row0, dsmm_idx N,
                           dsmm_idx lo, dsmm_idx hi, dsmm_dist **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *r = NULL, *c = NULL, n = 0;
    double *v = NULL;
    dsmm_idx a = lo - row0 > 0 ? lo - row0 : 0, b = hi - row0 < M->nrows ? hi - row0 : M->nrows;
    dsmm_idx m = a < b ? M->rowptr[b] - M->rowptr[a] : 0;
    r = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *r);
    c = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *c);
    v = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *v);
    DSMM_CHECK(ctx, r && c && v, DSMM_ERR_NOMEM, "mcl: %lld entries to the grid", (long long)m);
    for (dsmm_idx i = a; i < b; i++)
        for (dsmm_idx k = M->rowptr[i]; k < M->rowptr[i + 1]; k++) {
            r[n] = row0 + i;
            c[n] = M->col[k];
            v[n] = (double)M->val[k];
            n++;
        }
    DSMM_TRY(dsmmi_dist_from_triples(ctx, N, N, DSMM_DOUBLE, n, r, c, v, DSMM_DOUBLE,
                                     DSMM_DUP_ERROR, "the mcl iterate", 0, 0, out));
cleanup:
    dsmmi_free(ctx, r);
    dsmmi_free(ctx, c);
    dsmmi_free(ctx, v);
    return st;
}

// Growable byte buffer per destination rank.
typedef struct outbuf {
    char *p;
    size_t n, cap;
} outbuf;

static int put(dsmm_ctx *ctx, outbuf *b, const void *src, size_t len)
{
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len) cap *= 2;
        char *q = dsmmi_realloc(ctx, b->p, cap, 1);
        if (q == NULL) return 0;
        b->p = q;
        b->cap = cap;
    }
    if (len > 0) memcpy(b->p + b->n, src, len); // b->p may be NULL with nothing put yet
    b->n += len;
    return 1;
}

// Candidates of one piece (sorted by column) into buf: every entry >= cut and the R largest
// below it with their ties. vals are the piece's floats; scratch holds n floats.
static int pack_piece(dsmm_ctx *ctx, outbuf *b, int64_t c, const int32_t *col, const float *val,
                      dsmm_idx n, const dsmmi_mcl_rules *r, float *scratch)
{
    piece_hdr h = {c, n, 0, 0.0, 0.0};
    dsmm_idx below = 0;
    for (dsmm_idx k = 0; k < n; k++) {
        double x = (double)val[k];
        if (x > h.maxval) h.maxval = x;
        h.center += x * x;
        if (!(r->cut <= 0.0 || x >= r->cut)) scratch[below++] = val[k];
    }
    double tbar = -INFINITY; // below-cut entries >= tbar are candidates
    if (below > r->R) {
        if (r->R == 0) {
            tbar = INFINITY;
        } else {
            qsort(scratch, (size_t)below, sizeof *scratch, cmp_f_desc);
            tbar = (double)scratch[r->R - 1];
        }
    }
    for (dsmm_idx k = 0; k < n; k++) {
        double x = (double)val[k];
        if (r->cut <= 0.0 || x >= r->cut || x >= tbar) h.ncand++;
    }
    if (!put(ctx, b, &h, sizeof h)) return 0;
    for (dsmm_idx k = 0; k < n; k++) {
        double x = (double)val[k];
        if (r->cut <= 0.0 || x >= r->cut || x >= tbar) {
            if (!put(ctx, b, &col[k], sizeof col[k]) || !put(ctx, b, &val[k], sizeof val[k]))
                return 0;
        }
    }
    return 1;
}

typedef struct cand {
    int32_t col;
    float val;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

dsmm_status dsmmi_mcl_iterate_dist(dsmm_ctx *ctx, const dsmm_mcl_params *p, const dsmmi_mcl_mat *M,
                                   dsmm_idx row0, dsmm_idx N, const dsmmi_mcl_rules *rules,
                                   double inflation, dsmmi_mcl_mat *out,
                                   dsmmi_mcl_iter_stats *stats, dsmm_mcl_iter *it)
{
    dsmm_status st = DSMM_OK;
    int P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    dsmm_dist *T = NULL, *A = NULL, *C = NULL;
    dsmm_stats *sst = NULL;
    double *est = NULL, *flops = NULL, *gest = NULL;
    dsmm_idx *bounds = NULL, *pb = NULL;
    outbuf *bufs = NULL;
    size_t *scount = NULL, *sdispl = NULL, *rcount = NULL;
    char *send = NULL, *recv = NULL;
    int32_t *ocol = NULL, *tcol = NULL;
    float *oval = NULL, *tval = NULL, *scratch = NULL;
    cand *cands = NULL;
    dsmmi_mcl_col *cs = NULL;
    dsmm_idx *cstart = NULL, *ccount = NULL;
    dsmm_idx ocap = 0, on = 0, ccap = 0;
    int h = 1;

    memset(out, 0, sizeof *out);
    memset(stats, 0, sizeof *stats);
    dsmm_idx nloc = M->nrows;
    est = dsmmi_malloc(ctx, (size_t)nloc + 1, sizeof *est);
    flops = dsmmi_malloc(ctx, (size_t)nloc + 1, sizeof *flops);
    gest = dsmmi_calloc(ctx, (size_t)N + 1, sizeof *gest);
    bounds = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *bounds);
    DSMM_CHECK(ctx, est && flops && gest && bounds, DSMM_ERR_NOMEM, "mcl: phase planning");
    dsmmi_equal_split(N, P, bounds);
    DSMM_TRY(to_grid(ctx, M, row0, N, 0, N, &T));

    // Sizing the unpruned product: the flops (exact, cheap), then either Cohen's estimate or
    // the exact count of SUMMA's stage products, whichever costs less (HipMCL-GPU §V).
    double t_est = dsmmi_wtime();
    int64_t nnz_all = M->nnz;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &nnz_all, 1, '+'));
    int keys = p->estimate_keys;
    DSMM_TRY(estimate_rows(ctx, M, row0, N, keys == -1 ? 0 : keys, est, flops));
    double ftotal = 0.0;
    for (dsmm_idx i = 0; i < nloc; i++) ftotal += flops[i];
    DSMM_TRY(dsmmi_allreduce_f64(ctx, &ftotal, 1, '+'));
    if (keys == -1) {
        keys = ftotal < EXACT_FLOPS_PER_KEY_NNZ * COHEN_KEYS * (double)nnz_all ? 0 : COHEN_KEYS;
        if (keys > 0) DSMM_TRY(estimate_rows(ctx, M, row0, N, keys, est, flops));
    }
    if (keys == 0) {
        dsmm_idx r0 = T->rb[T->grid->myrow];
        double f = 0.0;
        // The tile's row counts go into gest by global row, summed over the grid row's ranks:
        // every row's count on every rank, as the phase split below needs it.
        DSMM_TRY(dsmmi_summa_count(ctx, T, T, gest + r0, &f));
        DSMM_TRY(allreduce_f64_long(ctx, gest, N, '+'));
        for (dsmm_idx i = 0; i < nloc; i++) est[i] = gest[row0 + i];
    }
    it->estimate_keys = keys;
    it->flops = ftotal;
    it->estimate_seconds = dsmmi_wtime() - t_est;
    DSMM_TRY(dsmmi_allreduce_f64(ctx, &it->estimate_seconds, 1, '>'));

    // Phases: the unpruned product's bytes (C tile, plus as much again for the partial
    // products being merged) against what the budget leaves beside the iterate (2 copies on
    // the grid, the local rows, the next iterate).
    {
        double need = 0.0, biggest = 0.0;
        for (dsmm_idx i = 0; i < nloc; i++) {
            need += est[i];
            if (est[i] > biggest) biggest = est[i];
            if (keys > 0) gest[row0 + i] = est[i];
        }
        double v[2] = {need, biggest};
        DSMM_TRY(dsmmi_allreduce_f64(ctx, v, 2, '+'));
        double bmax = biggest;
        DSMM_TRY(dsmmi_allreduce_f64(ctx, &bmax, 1, '>'));
        // Every row's estimate on every rank (the exact count put them there already).
        if (keys > 0) DSMM_TRY(allreduce_f64_long(ctx, gest, N, '+'));
        double per_rank = 24.0 * v[0] / (double)P;
        it->est_bytes = per_rank;
        double resident =
            3.0 * 12.0 * (double)nnz_all / (double)P + 24.0 * (double)M->nnz + 16.0 * (double)N;
        DSMM_TRY(dsmmi_allreduce_f64(ctx, &resident, 1, '>')); // one decision on every rank
        it->resident_bytes = resident;
        if (p->phases > 0) {
            h = p->phases;
        } else if (p->per_process_mem > 0) {
            double avail = (double)p->per_process_mem - resident;
            DSMM_CHECK(ctx, avail > 24.0 * bmax, DSMM_ERR_NOMEM,
                       "mcl: --per-process-mem %.0f bytes is too small: the iterate needs about "
                       "%.0f bytes per rank and one column's expansion %.0f more",
                       (double)p->per_process_mem, resident, 24.0 * bmax);
            h = (int)ceil(per_rank / avail);
            if (h < 1) h = 1;
        }
        if (h > N) h = (int)N;
    }
    it->phases = h;

    // Phase bounds: contiguous columns with equal estimated product size.
    pb = dsmmi_malloc(ctx, (size_t)h + 1, sizeof *pb);
    DSMM_CHECK(ctx, pb != NULL, DSMM_ERR_NOMEM, "mcl: %d phases", h);
    {
        double total = 0.0, acc = 0.0;
        for (dsmm_idx v = 0; v < N; v++) total += gest[v] + 1.0;
        pb[0] = 0;
        int q = 1;
        for (dsmm_idx v = 0; v < N && q < h; v++) {
            acc += gest[v] + 1.0;
            if (acc >= total * q / h) pb[q++] = v + 1;
        }
        while (q <= h) pb[q++] = N;
    }

    bufs = dsmmi_calloc(ctx, (size_t)P, sizeof *bufs);
    scount = dsmmi_malloc(ctx, (size_t)P, sizeof *scount);
    sdispl = dsmmi_malloc(ctx, (size_t)P, sizeof *sdispl);
    rcount = dsmmi_malloc(ctx, (size_t)P, sizeof *rcount);
    scratch = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *scratch);
    tcol = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *tcol);
    tval = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *tval);
    cs = dsmmi_calloc(ctx, (size_t)nloc + 1, sizeof *cs);
    cstart = dsmmi_malloc(ctx, (size_t)nloc + 1, sizeof *cstart);
    ccount = dsmmi_malloc(ctx, (size_t)nloc + 1, sizeof *ccount);
    DSMM_TRY(dsmmi_mcl_mat_alloc(ctx, out, nloc, 0));
    DSMM_CHECK(ctx,
               bufs && scount && sdispl && rcount && scratch && tcol && tval && cs && cstart &&
                   ccount,
               DSMM_ERR_NOMEM, "mcl: exchange buffers");

    for (int ph = 0; ph < h; ph++) {
        DSMM_TRY(to_grid(ctx, M, row0, N, pb[ph], pb[ph + 1], &A));
        dsmm_dist_opts o = p->dist;
        DSMM_TRY(dsmm_stats_create(ctx, "spgemm", &sst));
        o.stats = sst;
        DSMM_TRY(dsmm_spgemm_ex(ctx, A, T, &o, &C));
        double mp = 0.0, ms = 0.0;
        if (dsmmi_stats_get_num(sst, "merge_peak_bytes", &mp) && (int64_t)mp > it->merge_peak_bytes)
            it->merge_peak_bytes = (int64_t)mp;
        if (dsmmi_stats_get_num(sst, "merge_seconds", &ms)) it->merge_seconds += ms;
        double ci = 0.0, gp = 0.0, gi = 0.0;
        if (dsmmi_stats_get_num(sst, "cpu_idle_seconds", &ci)) {
            dsmmi_stats_get_num(sst, "gpu_products", &gp);
            it->cpu_idle_seconds = (it->cpu_idle_seconds < 0 ? 0 : it->cpu_idle_seconds) + ci;
            it->gpu_products = (it->gpu_products < 0 ? 0 : it->gpu_products) + (int64_t)gp;
        }
        double *comp[4] = {&it->comp_seconds, &it->comm_seconds, &it->acc_seconds,
                           &it->wait_seconds};
        for (int c = 0; c < 4; c++) {
            double v = 0.0;
            if (dsmmi_stats_get_num(sst, dsmmi_stats_comp_keys[c], &v))
                *comp[c] = (*comp[c] < 0 ? 0 : *comp[c]) + v;
        }
        if (dsmmi_stats_get_num(sst, "gpu_idle_seconds", &gi))
            it->gpu_idle_seconds = (it->gpu_idle_seconds < 0 ? 0 : it->gpu_idle_seconds) + gi;
        dsmm_stats_destroy(&sst);
        dsmm_dist_destroy(&A);
        // Candidates of every local column piece to the column's owner.
        const dsmm_csr *tile = C->tile;
        dsmm_idx grow0 = C->rb[C->grid->myrow], gcol0 = C->cb[C->grid->mycol];
        int fail = 0;
        for (dsmm_idx i = 0; i < tile->nrows && !fail; i++) {
            dsmm_idx n = 0;
            for (dsmm_idx k = tile->rowptr[i]; k < tile->rowptr[i + 1]; k++) {
                dsmm_idx j = tile->colidx32 ? tile->colidx32[k] : tile->colidx[k];
                tcol[n] = (int32_t)(gcol0 + j);
                tval[n] = (float)((const double *)tile->val)[k];
                n++;
            }
            if (n == 0) continue;
            int64_t c = grow0 + i;
            int owner = dsmmi_block_of(N, P, c);
            fail = !pack_piece(ctx, &bufs[owner], c, tcol, tval, n, rules, scratch);
        }
        dsmm_dist_destroy(&C);
        DSMM_TRY(dsmmi_comm_agree(ctx, fail ? DSMM_ERR_NOMEM : DSMM_OK));
        size_t total = 0;
        for (int q = 0; q < P; q++) {
            sdispl[q] = total;
            scount[q] = bufs[q].n;
            total += bufs[q].n;
        }
        send = dsmmi_malloc(ctx, total + 1, 1);
        DSMM_CHECK(ctx, send != NULL, DSMM_ERR_NOMEM, "mcl: %zu bytes of candidates", total);
        for (int q = 0; q < P; q++) {
            if (bufs[q].n) memcpy(send + sdispl[q], bufs[q].p, bufs[q].n);
            bufs[q].n = 0;
        }
        DSMM_TRY(dsmmi_exchange(ctx, send, scount, sdispl, &recv, rcount));
        send = dsmmi_free(ctx, send);

        // Owner side: gather each column's candidates, then prune and inflate it.
        dsmm_idx a = pb[ph] - row0 > 0 ? pb[ph] - row0 : 0;
        dsmm_idx b = pb[ph + 1] - row0 < nloc ? pb[ph + 1] - row0 : nloc;
        for (dsmm_idx i = a; i < b; i++) {
            cs[i] = (dsmmi_mcl_col){0, 0.0, 0.0};
            ccount[i] = 0;
        }
        size_t off = 0, rtotal = 0;
        for (int q = 0; q < P; q++) rtotal += rcount[q];
        dsmm_idx ncand = 0;
        while (off < rtotal) { // pass 1: counts and measures
            piece_hdr hd;
            memcpy(&hd, recv + off, sizeof hd);
            off += sizeof hd + (size_t)hd.ncand * 8;
            dsmm_idx i = hd.c - row0;
            cs[i].n_expand += hd.count;
            if (hd.maxval > cs[i].maxval) cs[i].maxval = hd.maxval;
            cs[i].center += hd.center;
            ccount[i] += hd.ncand;
            ncand += hd.ncand;
        }
        if (ncand > ccap) {
            cands = dsmmi_free(ctx, cands);
            cands = dsmmi_malloc(ctx, (size_t)ncand, sizeof *cands);
            DSMM_CHECK(ctx, cands != NULL, DSMM_ERR_NOMEM, "mcl: %lld candidates",
                       (long long)ncand);
            ccap = ncand;
        }
        dsmm_idx s0 = 0;
        for (dsmm_idx i = a; i < b; i++) {
            cstart[i] = s0;
            s0 += ccount[i];
            ccount[i] = 0;
        }
        off = 0;
        while (off < rtotal) { // pass 2: entries
            piece_hdr hd;
            memcpy(&hd, recv + off, sizeof hd);
            off += sizeof hd;
            dsmm_idx i = hd.c - row0;
            for (int64_t e = 0; e < hd.ncand; e++) {
                cand cd;
                memcpy(&cd.col, recv + off, 4);
                memcpy(&cd.val, recv + off + 4, 4);
                off += 8;
                cands[cstart[i] + ccount[i]++] = cd;
            }
        }
        recv = dsmmi_free(ctx, recv);
        for (dsmm_idx i = a; i < b; i++) {
            dsmm_idx n = ccount[i];
            cand *cc = cands + cstart[i];
            qsort(cc, (size_t)n, sizeof *cc, cmp_cand);
            for (dsmm_idx k = 0; k < n; k++) {
                tcol[k] = cc[k].col;
                tval[k] = cc[k].val;
            }
            float chaos = 0.0f;
            stats->nnz_expand += cs[i].n_expand;
            if (flops[i] * 10.0 >= (double)N) stats->dense_cols++;
            n = dsmmi_mcl_prune(rules, (int32_t)(row0 + i), tcol, tval, n, &cs[i], scratch, &chaos);
            stats->nnz_pruned += n;
            if ((double)chaos > stats->chaos) stats->chaos = (double)chaos;
            if (inflation > 0.0) n = dsmmi_mcl_inflate(tval, n, inflation);
            if (on + n > ocap) {
                dsmm_idx nc = ocap ? ocap : 1024;
                while (nc < on + n) nc *= 2;
                int32_t *c2 = dsmmi_realloc(ctx, ocol, (size_t)nc, sizeof *c2);
                DSMM_CHECK(ctx, c2 != NULL, DSMM_ERR_NOMEM, "mcl: the next iterate");
                ocol = c2;
                float *v2 = dsmmi_realloc(ctx, oval, (size_t)nc, sizeof *v2);
                DSMM_CHECK(ctx, v2 != NULL, DSMM_ERR_NOMEM, "mcl: the next iterate");
                oval = v2;
                ocap = nc;
            }
            if (n > 0) { // an empty column (no loop, no edges) adds nothing
                memcpy(ocol + on, tcol, (size_t)n * sizeof *ocol);
                memcpy(oval + on, tval, (size_t)n * sizeof *oval);
            }
            on += n;
            out->rowptr[i + 1] = on;
        }
    }
    (void)me;
    out->col = dsmmi_free(ctx, out->col);
    out->val = dsmmi_free(ctx, out->val);
    out->col = ocol;
    out->val = oval;
    ocol = NULL;
    oval = NULL;
    if (out->col == NULL) {
        out->col = dsmmi_malloc(ctx, 1, sizeof *out->col);
        out->val = dsmmi_malloc(ctx, 1, sizeof *out->val);
        DSMM_CHECK(ctx, out->col && out->val, DSMM_ERR_NOMEM, "mcl: the next iterate");
    }
    out->nnz = on;
cleanup:
    dsmm_stats_destroy(&sst);
    dsmm_dist_destroy(&T);
    dsmm_dist_destroy(&A);
    dsmm_dist_destroy(&C);
    if (bufs != NULL)
        for (int q = 0; q < P; q++) dsmmi_free(ctx, bufs[q].p);
    dsmmi_free(ctx, bufs);
    dsmmi_free(ctx, est);
    dsmmi_free(ctx, flops);
    dsmmi_free(ctx, gest);
    dsmmi_free(ctx, bounds);
    dsmmi_free(ctx, pb);
    dsmmi_free(ctx, scount);
    dsmmi_free(ctx, sdispl);
    dsmmi_free(ctx, rcount);
    dsmmi_free(ctx, send);
    dsmmi_free(ctx, recv);
    dsmmi_free(ctx, ocol);
    dsmmi_free(ctx, oval);
    dsmmi_free(ctx, tcol);
    dsmmi_free(ctx, tval);
    dsmmi_free(ctx, scratch);
    dsmmi_free(ctx, cands);
    dsmmi_free(ctx, cs);
    dsmmi_free(ctx, cstart);
    dsmmi_free(ctx, ccount);
    if (st != DSMM_OK) dsmmi_mcl_mat_free(ctx, out);
    return st;
}
