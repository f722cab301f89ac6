// src/dist/cola.c: the plan of the 1D CoLa SpMM family (CoLa paper §2.2, §3.2, §4.2-4.3): the
// optional reordering (rank 0 orders the gathered pattern, everyone applies the permutation),
// row blocks of equal nnz (+1 per row, so empty rows still spread), each rank's rows cut by
// source panel (the LSC and the pieces of the RSC), the rows each rank needs from each owner
// (the nonempty RSC columns, V_FC), and the index lists of the transfers, built once and
// reused by every multiply:
//  - without fusion, owner s packs need_t(s) for every rank t (serve lists, put offsets);
//  - with fusion, the needs of a workgroup from s are united at one member, the holder (the
//    member whose local rank matches s's, §4.2 "local-rank matching"), which receives U[s]
//    once per multiply and shares it with its workgroup through a shared-memory window.
// Every count of dsmm_cola_volume_get comes from these lists, so they are exact.
#include <stdlib.h>
#include <string.h>

#include "dist/cola.h"

static const char *const alg_names[DSMM_COLA_ALG_COUNT] = {"cola", "cola-nofusion", "bcast-1d",
                                                           "rowwise-1d"};
static const char *const comm_names[] = {"alltoallv", "neighbor", "put"};

dsmm_status dsmm_cola_alg_from_name(const char *name, dsmm_cola_alg *alg)
{
    for (int a = 0; name && alg && a < DSMM_COLA_ALG_COUNT; a++)
        if (strcmp(name, alg_names[a]) == 0) {
            *alg = (dsmm_cola_alg)a;
            return DSMM_OK;
        }
    return DSMM_ERR_ARG;
}

const char *dsmm_cola_alg_name(dsmm_cola_alg alg)
{
    return (unsigned)alg < DSMM_COLA_ALG_COUNT ? alg_names[alg] : "?";
}

dsmm_status dsmm_cola_comm_from_name(const char *name, dsmm_cola_comm *c)
{
    for (int a = 0; name && c && a < 3; a++)
        if (strcmp(name, comm_names[a]) == 0) {
            *c = (dsmm_cola_comm)a;
            return DSMM_OK;
        }
    return DSMM_ERR_ARG;
}

const char *dsmm_cola_comm_name(dsmm_cola_comm c)
{
    return (unsigned)c < 3 ? comm_names[c] : "?";
}

void dsmm_cola_opts_init(dsmm_cola_opts *o)
{
    if (o == NULL) return;
    memset(o, 0, sizeof *o);
    o->alg = DSMM_COLA;
    o->reorder = DSMM_REORDER_NONE;
    o->comm = DSMM_COLA_ALLTOALLV;
    o->pipeline = 1;
    o->balance = 1;
    o->lsc_alg = DSMM_SPMM_AUTO;
    o->rsc_alg = DSMM_SPMM_AUTO;
}

static void mats_free(dsmm_cola *p, dsmmi_cola_mats *m)
{
    for (int s = 0; m->piece && s < p->P; s++) dsmm_csr_destroy(&m->piece[s]);
    for (int s = 0; m->fpiece && s < p->P; s++) dsmm_csr_destroy(&m->fpiece[s]);
    dsmm_csr_destroy(&m->rsc);
    m->piece = dsmmi_free(p->ctx, m->piece);
    m->fpiece = dsmmi_free(p->ctx, m->fpiece);
    m->type = 0;
}

void dsmm_cola_destroy(dsmm_cola **plan)
{
    if (plan == NULL || *plan == NULL) return;
    dsmm_cola *p = *plan;
    dsmm_ctx *ctx = p->ctx;
    mats_free(p, &p->mats[0]);
    mats_free(p, &p->mats[1]);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; p->tiles[t] && i < DSMMI_COLA_TILE_SLOTS(p->P); i++)
            dsmm_spmm_tiles_destroy(&p->tiles[t][i]);
        p->tiles[t] = dsmmi_free(ctx, p->tiles[t]);
    }
    void **arrays[] = {(void **)&p->rb,        (void **)&p->perm,      (void **)&p->vertex,
                       (void **)&p->need_ptr,  (void **)&p->need_idx,  (void **)&p->serve_ptr,
                       (void **)&p->serve_idx, (void **)&p->put_disp,  (void **)&p->wg_of,
                       (void **)&p->lr_of,     (void **)&p->members,   (void **)&p->holder,
                       (void **)&p->hoff,      (void **)&p->ulen,      (void **)&p->mem_rmax,
                       (void **)&p->fsend_ptr, (void **)&p->fsend_idx, (void **)&p->sbuf,
                       (void **)&p->rbuf};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        *arrays[i] = dsmmi_free(ctx, *arrays[i]);
    dsmmi_shm_free(ctx, &p->shm);
    if (p->win) (void)dsmmi_win_free(ctx, &p->win);
    dsmmi_nbr_free(ctx, &p->nbr);
    p->magic = 0;
    *plan = dsmmi_free(ctx, p);
}

void dsmm_cola_rows(const dsmm_cola *p, dsmm_idx *row0, dsmm_idx *nrows, const dsmm_idx **vertex)
{
    if (row0) *row0 = p ? p->row0 : 0;
    if (nrows) *nrows = p ? p->nrows : 0;
    if (vertex) *vertex = p ? p->vertex : NULL;
}

const dsmm_idx *dsmm_cola_perm(const dsmm_cola *p)
{
    return p ? p->perm : NULL;
}

void dsmm_cola_volume_get(const dsmm_cola *p, dsmm_idx k, size_t elem, dsmm_cola_volume *v)
{
    if (v == NULL) return;
    memset(v, 0, sizeof *v);
    if (p == NULL || p->magic != DSMMI_COLA_MAGIC) return;
    int64_t row = (int64_t)k * (int64_t)elem;
    v->nrows = p->nrows;
    v->lsc_nnz = p->lsc_nnz;
    v->rsc_nnz = p->rsc_nnz;
    v->rsc_cols = p->need_ptr[p->P];
    v->v_cg = row * (p->n - p->nrows);
    v->v_fr = row * p->rsc_nnz;
    v->v_fc = row * v->rsc_cols;
    v->inter_nofusion = row * p->inter_nofusion;
    v->inter_fused = row * p->inter_fused;
}

static int owner_of(const dsmm_idx *rb, int P, dsmm_idx i)
{
    int lo = 0, hi = P - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (rb[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Position of v in the ascending list a[0..n) (it is there).
static dsmm_idx find(const dsmm_idx *a, dsmm_idx n, dsmm_idx v)
{
    dsmm_idx lo = 0, hi = n - 1;
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_idx(const void *a, const void *b)
{
    dsmm_idx x = *(const dsmm_idx *)a, y = *(const dsmm_idx *)b;
    return (x > y) - (x < y);
}

// The permutation of opts->reorder: ordered on rank 0 from the gathered pattern, then sent to
// every rank.
static dsmm_status make_perm(dsmm_ctx *ctx, const dsmm_dist *A, dsmm_reorder kind, dsmm_idx **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_csr *G = NULL;
    dsmm_idx *perm = NULL, n = A->nrows;
    *out = NULL;
    DSMM_TRY(dsmm_dist_gather(ctx, A, 0, &G));
    if (ctx->rank == 0)
        local = dsmm_csr_reorder(ctx, G, kind, &perm);
    else {
        perm = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *perm);
        if (perm == NULL) local = DSMM_ERR_NOMEM;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, perm, (size_t)n * sizeof *perm));
    *out = perm;
    perm = NULL;
cleanup:
    dsmm_csr_destroy(&G);
    dsmmi_free(ctx, perm);
    return st;
}

// Row bounds: equal nnz + rows (balance) or equal rows.
static dsmm_status row_bounds(dsmm_ctx *ctx, dsmm_cola *p, const dsmm_idx *row, dsmm_idx cnt)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = p->P;
    dsmm_idx n = p->n;
    int64_t *rc = NULL;
    p->rb = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *p->rb);
    if (p->rb == NULL) local = DSMM_ERR_NOMEM;
    if (local == DSMM_OK && p->opts.balance && P > 1) {
        if (n > INT32_MAX)
            local = dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__,
                                "nnz-balanced rows of %lld rows (use balance 0)", (long long)n);
        else if ((rc = dsmmi_calloc(ctx, n ? (size_t)n : 1, sizeof *rc)) == NULL)
            local = DSMM_ERR_NOMEM;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    if (rc == NULL) {
        dsmmi_equal_split(n, P, p->rb);
        goto cleanup;
    }
    for (dsmm_idx k = 0; k < cnt; k++) rc[row[k]]++;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, rc, (int)n, '+'));
    int64_t total = 0;
    for (dsmm_idx r = 0; r < n; r++) total += rc[r] + 1;
    p->rb[0] = 0;
    int64_t acc = 0;
    int b = 1;
    for (dsmm_idx r = 0; r < n && b < P; r++) {
        acc += rc[r] + 1;
        // Block b starts after the row where the running weight first reaches b / P of it.
        while (b < P && acc * P >= total * (int64_t)b) p->rb[b++] = r + 1;
    }
    while (b < P) p->rb[b++] = n;
    p->rb[P] = n;
cleanup:
    dsmmi_free(ctx, rc);
    return st;
}

// This rank's rows (global columns, sorted) from the entries any rank holds.
static dsmm_status gather_rows(dsmm_ctx *ctx, dsmm_cola *p, const dsmm_idx *row,
                               const dsmm_idx *col, const double *val, dsmm_idx cnt, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = p->P;
    size_t *scount = dsmmi_calloc(ctx, (size_t)P, sizeof *scount);
    size_t *sdispl = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *sdispl);
    size_t *rcount = dsmmi_calloc(ctx, (size_t)P, sizeof *rcount);
    double *sb = NULL;
    char *rb = NULL;
    dsmm_coo T = {0};
    const size_t rec = 3 * sizeof(double); // row, column, value (indices below 2^53)
    if (!scount || !sdispl || !rcount)
        local = DSMM_ERR_NOMEM;
    else {
        for (dsmm_idx k = 0; k < cnt; k++) scount[owner_of(p->rb, P, row[k])] += rec;
        for (int t = 0; t < P; t++) sdispl[t + 1] = sdispl[t] + scount[t];
        sb = dsmmi_malloc(ctx, (size_t)cnt * 3 + 1, sizeof *sb);
        if (sb == NULL) local = DSMM_ERR_NOMEM;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    {
        size_t *fill = rcount; // reused as cursors, reset below
        for (int t = 0; t < P; t++) fill[t] = sdispl[t] / sizeof(double);
        for (dsmm_idx k = 0; k < cnt; k++) {
            size_t *at = &fill[owner_of(p->rb, P, row[k])];
            sb[*at] = (double)row[k];
            sb[*at + 1] = (double)col[k];
            sb[*at + 2] = val ? val[k] : 1.0;
            *at += 3;
        }
    }
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)sb, scount, sdispl, &rb, rcount));
    size_t nrec = 0;
    for (int t = 0; t < P; t++) nrec += rcount[t] / rec;
    T.nrows = p->nrows;
    T.ncols = p->n;
    T.nnz = T.cap = (dsmm_idx)nrec;
    T.type = DSMM_DOUBLE;
    T.ctx = ctx;
    T.row = dsmmi_malloc(ctx, nrec + 1, sizeof *T.row);
    T.col = dsmmi_malloc(ctx, nrec + 1, sizeof *T.col);
    T.val = dsmmi_malloc(ctx, nrec + 1, sizeof(double));
    DSMM_CHECK(ctx, T.row && T.col && T.val, DSMM_ERR_NOMEM, "%zu entries of rank %d's rows", nrec,
               p->me);
    const double *r = (const double *)rb;
    for (size_t e = 0; e < nrec; e++) {
        T.row[e] = (dsmm_idx)r[3 * e] - p->row0;
        T.col[e] = (dsmm_idx)r[3 * e + 1];
        ((double *)T.val)[e] = r[3 * e + 2];
    }
    DSMM_TRY(dsmm_coo_to_csr(ctx, &T, DSMM_DUP_SUM, out));
cleanup:
    dsmmi_free(ctx, T.row);
    dsmmi_free(ctx, T.col);
    dsmmi_free(ctx, T.val);
    dsmmi_free(ctx, scount);
    dsmmi_free(ctx, sdispl);
    dsmmi_free(ctx, rcount);
    dsmmi_free(ctx, sb);
    dsmmi_free(ctx, rb);
    return st;
}

// A CSR (64-bit columns, double values) of `nrows` rows with room for nnz entries.
static dsmm_status new_csr(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx nnz,
                           dsmm_csr **out)
{
    return dsmmi_csr_create_ex(ctx, nrows, ncols, nnz, DSMM_DOUBLE, 64, out);
}

// piece[s] = the columns of panel s of L (global columns, sorted), renumbered from rb[s].
static dsmm_status cut_pieces(dsmm_ctx *ctx, dsmm_cola *p, const dsmm_csr *L)
{
    dsmm_status st = DSMM_OK;
    int P = p->P;
    dsmm_idx *cnt = NULL;
    dsmmi_cola_mats *m = &p->mats[0];
    m->type = DSMM_DOUBLE;
    m->piece = dsmmi_calloc(ctx, (size_t)P, sizeof *m->piece);
    cnt = dsmmi_calloc(ctx, (size_t)P, sizeof *cnt);
    DSMM_CHECK(ctx, m->piece && cnt, DSMM_ERR_NOMEM, "pieces of %d panels", P);
    for (dsmm_idx k = 0; k < L->nnz; k++) cnt[owner_of(p->rb, P, dsmm_csr_col(L, k))]++;
    for (int s = 0; s < P; s++) {
        if (cnt[s] == 0) continue;
        DSMM_TRY(new_csr(ctx, L->nrows, p->rb[s + 1] - p->rb[s], cnt[s], &m->piece[s]));
        m->piece[s]->nnz = 0;
    }
    const double *lv = L->val;
    for (dsmm_idx i = 0; i < L->nrows; i++) {
        for (dsmm_idx k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
            dsmm_idx c = dsmm_csr_col(L, k);
            int s = owner_of(p->rb, P, c);
            dsmm_csr *X = m->piece[s];
            X->colidx[X->nnz] = c - p->rb[s];
            ((double *)X->val)[X->nnz] = lv ? lv[k] : 1.0;
            X->nnz++;
        }
        for (int s = 0; s < P; s++)
            if (m->piece[s]) m->piece[s]->rowptr[i + 1] = m->piece[s]->nnz;
    }
    p->lsc_nnz = cnt[p->me];
    for (int s = 0; s < P; s++)
        if (s != p->me) p->rsc_nnz += cnt[s];
cleanup:
    dsmmi_free(ctx, cnt);
    return st;
}

// need lists: the distinct columns of every remote piece, ascending.
static dsmm_status needs(dsmm_ctx *ctx, dsmm_cola *p)
{
    dsmm_status st = DSMM_OK;
    int P = p->P;
    const dsmmi_cola_mats *m = &p->mats[0];
    p->need_ptr = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *p->need_ptr);
    p->need_idx = dsmmi_malloc(ctx, (size_t)p->rsc_nnz + 1, sizeof *p->need_idx);
    DSMM_CHECK(ctx, p->need_ptr && p->need_idx, DSMM_ERR_NOMEM, "need lists of %lld entries",
               (long long)p->rsc_nnz);
    dsmm_idx at = 0;
    for (int s = 0; s < P; s++) {
        p->need_ptr[s] = at;
        const dsmm_csr *X = m->piece[s];
        if (s == p->me || X == NULL) continue;
        memcpy(p->need_idx + at, X->colidx, (size_t)X->nnz * sizeof *X->colidx);
        qsort(p->need_idx + at, (size_t)X->nnz, sizeof *p->need_idx, cmp_idx);
        dsmm_idx u = 0;
        for (dsmm_idx k = 0; k < X->nnz; k++)
            if (k == 0 || p->need_idx[at + k] != p->need_idx[at + k - 1])
                p->need_idx[at + u++] = p->need_idx[at + k];
        at += u;
    }
    p->need_ptr[P] = at;
cleanup:
    return st;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static dsmm_status workgroups(dsmm_ctx *ctx, dsmm_cola *p)
{
    dsmm_status st = DSMM_OK;
    int P = p->P;
    int *id = dsmmi_malloc(ctx, 3 * (size_t)P, sizeof *id), *sorted = id + P, *size = id + 2 * P;
    p->wg_of = dsmmi_malloc(ctx, (size_t)P, sizeof *p->wg_of);
    p->lr_of = dsmmi_malloc(ctx, (size_t)P, sizeof *p->lr_of);
    p->members = dsmmi_malloc(ctx, (size_t)P, sizeof *p->members);
    DSMM_CHECK(ctx, id && p->wg_of && p->lr_of && p->members, DSMM_ERR_NOMEM, "workgroups");
    for (int r = 0; r < P; r++) id[r] = P > 1 ? dsmm_ctx_workgroup(ctx, r) : 0;
    // Group index: position of the group's id among the distinct ids, ascending; local rank:
    // position among the group's ranks, ascending (ranks are visited in order).
    memcpy(sorted, id, (size_t)P * sizeof *id);
    qsort(sorted, (size_t)P, sizeof *sorted, cmp_int);
    p->W = 0;
    for (int r = 0; r < P; r++)
        if (p->W == 0 || sorted[r] != sorted[p->W - 1]) sorted[p->W++] = sorted[r];
    memset(size, 0, (size_t)P * sizeof *size);
    for (int r = 0; r < P; r++) {
        int lo = 0, hi = p->W - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (sorted[mid] < id[r])
                lo = mid + 1;
            else
                hi = mid;
        }
        p->wg_of[r] = lo;
        p->lr_of[r] = size[lo]++;
    }
    p->mywg = p->wg_of[p->me];
    p->nmem = 0;
    for (int r = 0; r < P; r++)
        if (p->wg_of[r] == p->mywg) p->members[p->nmem++] = r;
cleanup:
    dsmmi_free(ctx, id);
    return st;
}

int dsmmi_cola_holder(const dsmm_cola *p, int g, int s)
{
    int size = 0;
    for (int r = 0; r < p->P; r++) size += p->wg_of[r] == g;
    int want = p->lr_of[s] % size;
    for (int r = 0; r < p->P; r++)
        if (p->wg_of[r] == g && p->lr_of[r] == want) return r;
    return -1;
}

/* Builds, from int64 records per destination, one exchange. The caller fills msg[t] (an
 * int64 vector per destination); *recv/rcount as dsmmi_exchange (bytes). */
typedef struct msgs {
    int64_t **v;
    size_t *len, *cap;
} msgs;

static dsmm_status msgs_init(dsmm_ctx *ctx, msgs *m, int P)
{
    m->v = dsmmi_calloc(ctx, (size_t)P, sizeof *m->v);
    m->len = dsmmi_calloc(ctx, (size_t)P, sizeof *m->len);
    m->cap = dsmmi_calloc(ctx, (size_t)P, sizeof *m->cap);
    return m->v && m->len && m->cap ? DSMM_OK
                                    : dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "plan");
}

static void msgs_free(dsmm_ctx *ctx, msgs *m, int P)
{
    for (int t = 0; m->v && t < P; t++) dsmmi_free(ctx, m->v[t]);
    dsmmi_free(ctx, m->v);
    dsmmi_free(ctx, m->len);
    dsmmi_free(ctx, m->cap);
    memset(m, 0, sizeof *m);
}

static dsmm_status msgs_put(dsmm_ctx *ctx, msgs *m, int t, int64_t x)
{
    if (m->len[t] == m->cap[t]) {
        size_t nc = m->cap[t] ? 2 * m->cap[t] : 16;
        int64_t *v = dsmmi_realloc(ctx, m->v[t], nc, sizeof *v);
        if (v == NULL) return dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "plan lists");
        m->v[t] = v;
        m->cap[t] = nc;
    }
    m->v[t][m->len[t]++] = x;
    return DSMM_OK;
}

// Sends every m->v[t] to t; *recv (int64) and counts (in int64 units) from each rank.
static dsmm_status msgs_send(dsmm_ctx *ctx, msgs *m, int P, dsmm_status local, int64_t **recv,
                             size_t *rcount)
{
    dsmm_status st = DSMM_OK;
    char *sb = NULL;
    size_t *sc = dsmmi_malloc(ctx, (size_t)P, sizeof *sc);
    size_t *sd = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *sd);
    if (local == DSMM_OK && (sc == NULL || sd == NULL)) local = DSMM_ERR_NOMEM;
    if (local == DSMM_OK) {
        sd[0] = 0;
        for (int t = 0; t < P; t++) {
            sc[t] = m->len[t] * sizeof(int64_t);
            sd[t + 1] = sd[t] + sc[t];
        }
        sb = dsmmi_malloc(ctx, sd[P] + 1, 1);
        if (sb == NULL)
            local = DSMM_ERR_NOMEM;
        else
            for (int t = 0; t < P; t++)
                if (sc[t]) memcpy(sb + sd[t], m->v[t], sc[t]);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_exchange(ctx, sb, sc, sd, (char **)recv, rcount));
    for (int t = 0; t < P; t++) rcount[t] /= sizeof(int64_t);
cleanup:
    dsmmi_free(ctx, sb);
    dsmmi_free(ctx, sc);
    dsmmi_free(ctx, sd);
    return st;
}

// Without fusion: every owner learns what each rank needs from it and where it goes.
static dsmm_status plan_nofusion(dsmm_ctx *ctx, dsmm_cola *p)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = p->P;
    msgs m = {0};
    int64_t *rv = NULL;
    size_t *rc = dsmmi_calloc(ctx, (size_t)P, sizeof *rc);
    local = rc ? msgs_init(ctx, &m, P) : DSMM_ERR_NOMEM;
    for (int s = 0; local == DSMM_OK && s < P; s++) {
        dsmm_idx lo = p->need_ptr[s], hi = p->need_ptr[s + 1];
        if (hi == lo) continue;
        local = msgs_put(ctx, &m, s, lo); // offset (rows) of s's rows in my receive buffer
        for (dsmm_idx k = lo; local == DSMM_OK && k < hi; k++)
            local = msgs_put(ctx, &m, s, p->need_idx[k]);
    }
    DSMM_TRY(msgs_send(ctx, &m, P, local, &rv, rc));
    p->serve_ptr = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *p->serve_ptr);
    p->put_disp = dsmmi_calloc(ctx, (size_t)P, sizeof *p->put_disp);
    size_t tot = 0;
    for (int t = 0; t < P; t++) tot += rc[t];
    p->serve_idx = dsmmi_malloc(ctx, tot + 1, sizeof *p->serve_idx);
    local = p->serve_ptr && p->put_disp && p->serve_idx ? DSMM_OK : DSMM_ERR_NOMEM;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    size_t off = 0, at = 0;
    for (int t = 0; t < P; t++) {
        p->serve_ptr[t] = (dsmm_idx)at;
        if (rc[t]) {
            p->put_disp[t] = rv[off];
            for (size_t k = 1; k < rc[t]; k++) p->serve_idx[at++] = rv[off + k];
        }
        off += rc[t];
    }
    p->serve_ptr[P] = (dsmm_idx)at;
cleanup:
    msgs_free(ctx, &m, P);
    dsmmi_free(ctx, rv);
    dsmmi_free(ctx, rc);
    return st;
}

typedef struct pair {
    dsmm_idx s, c;
} pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->s != y->s) return (x->s > y->s) - (x->s < y->s);
    return (x->c > y->c) - (x->c < y->c);
}

// The stage at which this rank's group processes panels of group g.
static int stage_of(const dsmm_cola *p, int g)
{
    return (g - p->mywg + p->W) % p->W;
}

/* With fusion (§4.2-4.3): (1) every rank sends its needs from s outside its group to the
 * group's holder of s; (2) the holder unites them into U[s], lays its stage buffers out, and
 * sends U[s] to s (what s packs for it every multiply) and the layout with every U[s] to the
 * members of its group (where to read and how to renumber their pieces). */
static dsmm_status plan_fused(dsmm_ctx *ctx, dsmm_cola *p, dsmm_idx **ulist_out,
                              dsmm_idx **uptr_out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = p->P;
    msgs m = {0};
    int64_t *rv = NULL;
    pair *pr = NULL;
    dsmm_idx *ulist = NULL, *uptr = NULL, *stage_rows = NULL, *held_off = NULL;
    size_t *rc = dsmmi_calloc(ctx, (size_t)P, sizeof *rc);
    local = rc ? msgs_init(ctx, &m, P) : DSMM_ERR_NOMEM;
    for (int s = 0; local == DSMM_OK && s < P; s++) {
        dsmm_idx lo = p->need_ptr[s], hi = p->need_ptr[s + 1];
        if (hi == lo || p->wg_of[s] == p->mywg) continue;
        int h = dsmmi_cola_holder(p, p->mywg, s);
        local = msgs_put(ctx, &m, h, s);
        if (local == DSMM_OK) local = msgs_put(ctx, &m, h, hi - lo);
        for (dsmm_idx k = lo; local == DSMM_OK && k < hi; k++)
            local = msgs_put(ctx, &m, h, p->need_idx[k]);
    }
    DSMM_TRY(msgs_send(ctx, &m, P, local, &rv, rc));
    msgs_free(ctx, &m, P);
    // (2) unite.
    size_t tot = 0, npr = 0;
    for (int t = 0; t < P; t++) tot += rc[t];
    pr = dsmmi_malloc(ctx, tot + 1, sizeof *pr);
    uptr = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *uptr);
    p->holder = dsmmi_malloc(ctx, (size_t)P, sizeof *p->holder);
    p->hoff = dsmmi_calloc(ctx, (size_t)P, sizeof *p->hoff);
    p->ulen = dsmmi_calloc(ctx, (size_t)P, sizeof *p->ulen);
    p->mem_rmax = dsmmi_calloc(ctx, (size_t)p->nmem, sizeof *p->mem_rmax);
    stage_rows = dsmmi_calloc(ctx, (size_t)p->W, sizeof *stage_rows);
    held_off = dsmmi_calloc(ctx, (size_t)P, sizeof *held_off);
    local = pr && uptr && p->holder && p->hoff && p->ulen && p->mem_rmax && stage_rows && held_off
                ? DSMM_OK
                : DSMM_ERR_NOMEM;
    if (local == DSMM_OK) local = msgs_init(ctx, &m, P);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (size_t i = 0; i < tot;) { // records: s, count, columns...
        dsmm_idx s = rv[i], c = rv[i + 1];
        for (dsmm_idx k = 0; k < c; k++) pr[npr++] = (pair){s, rv[i + 2 + k]};
        i += 2 + (size_t)c;
    }
    qsort(pr, npr, sizeof *pr, cmp_pair);
    size_t nu = 0;
    for (size_t i = 0; i < npr; i++)
        if (nu == 0 || pr[i].s != pr[nu - 1].s || pr[i].c != pr[nu - 1].c) pr[nu++] = pr[i];
    for (size_t i = 0; i < nu;) { // per s held here: offset in its stage's buffer
        dsmm_idx s = pr[i].s;
        size_t j = i;
        while (j < nu && pr[j].s == s) j++;
        int stg = stage_of(p, p->wg_of[s]);
        held_off[s] = stage_rows[stg];
        stage_rows[stg] += (dsmm_idx)(j - i);
        i = j;
    }
    p->rmax = 0;
    for (int j = 0; j < p->W; j++)
        if (stage_rows[j] > p->rmax) p->rmax = stage_rows[j];
    p->inter_fused = (int64_t)nu;
    // Messages: to s, U[s]; to each member, rmax then (s, offset, count, U[s]) for all held s.
    for (int q = 0; local == DSMM_OK && q < p->nmem; q++)
        local = msgs_put(ctx, &m, p->members[q], p->rmax);
    for (size_t i = 0; local == DSMM_OK && i < nu;) {
        dsmm_idx s = pr[i].s;
        size_t j = i;
        while (j < nu && pr[j].s == s) j++;
        local = msgs_put(ctx, &m, (int)s, (int64_t)(j - i));
        for (size_t k = i; local == DSMM_OK && k < j; k++)
            local = msgs_put(ctx, &m, (int)s, pr[k].c);
        for (int q = 0; local == DSMM_OK && q < p->nmem; q++) {
            int t = p->members[q];
            local = msgs_put(ctx, &m, t, s);
            if (local == DSMM_OK) local = msgs_put(ctx, &m, t, held_off[s]);
            if (local == DSMM_OK) local = msgs_put(ctx, &m, t, (int64_t)(j - i));
            for (size_t k = i; local == DSMM_OK && k < j; k++)
                local = msgs_put(ctx, &m, t, pr[k].c);
        }
        i = j;
    }
    rv = dsmmi_free(ctx, rv);
    DSMM_TRY(msgs_send(ctx, &m, P, local, &rv, rc));
    // Read: from holders of my group (layout and U lists), from other groups (what to send).
    tot = 0;
    for (int t = 0; t < P; t++) tot += rc[t];
    p->fsend_ptr = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *p->fsend_ptr);
    p->fsend_idx = dsmmi_malloc(ctx, tot + 1, sizeof *p->fsend_idx);
    ulist = dsmmi_malloc(ctx, tot + 1, sizeof *ulist);
    local = p->fsend_ptr && p->fsend_idx && ulist ? DSMM_OK : DSMM_ERR_NOMEM;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (int s = 0; s < P; s++) p->holder[s] = -1;
    // fsend ranges in rank order (ranks of this group and ranks holding nothing: empty);
    // uptr[s]: where U[s] starts in ulist.
    size_t off = 0, nf = 0, nl = 0;
    for (int t = 0; t < P; t++) {
        const int64_t *v = rv + off;
        p->fsend_ptr[t] = (dsmm_idx)nf;
        if (p->wg_of[t] != p->mywg) { // t holds my rows for its group
            if (rc[t])
                for (int64_t k = 0; k < v[0]; k++) p->fsend_idx[nf++] = v[1 + k];
        } else if (rc[t]) {
            int q = 0;
            while (p->members[q] != t) q++;
            p->mem_rmax[q] = v[0];
            for (size_t i = 1; i < rc[t];) {
                dsmm_idx s = v[i], ho = v[i + 1], c = v[i + 2];
                p->holder[s] = t;
                p->hoff[s] = ho;
                p->ulen[s] = c;
                uptr[s] = (dsmm_idx)nl;
                for (dsmm_idx k = 0; k < c; k++) ulist[nl++] = v[i + 3 + k];
                i += 3 + (size_t)c;
            }
        }
        off += rc[t];
    }
    p->fsend_ptr[P] = (dsmm_idx)nf;
    *ulist_out = ulist;
    *uptr_out = uptr;
    ulist = NULL;
    uptr = NULL;
cleanup:
    msgs_free(ctx, &m, P);
    dsmmi_free(ctx, rv);
    dsmmi_free(ctx, rc);
    dsmmi_free(ctx, pr);
    dsmmi_free(ctx, ulist);
    dsmmi_free(ctx, uptr);
    dsmmi_free(ctx, stage_rows);
    dsmmi_free(ctx, held_off);
    return st;
}

// A piece with its columns renumbered to positions in the ascending list lst[0..len): the
// compressed pieces of the RSC (only needed rows in the buffer).
static dsmm_status compress(dsmm_ctx *ctx, const dsmm_csr *X, const dsmm_idx *lst, dsmm_idx len,
                            dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(new_csr(ctx, X->nrows, len, X->nnz, out));
    dsmm_csr *Y = *out;
    memcpy(Y->rowptr, X->rowptr, (size_t)(X->nrows + 1) * sizeof *X->rowptr);
    for (dsmm_idx k = 0; k < X->nnz; k++) Y->colidx[k] = find(lst, len, X->colidx[k]);
    memcpy(Y->val, X->val, (size_t)X->nnz * sizeof(double));
    Y->nnz = X->nnz;
cleanup:
    return st;
}

// The RSC of COLA_NOFUSION: all remote pieces side by side, columns = rows of the receive
// buffer (need order).
static dsmm_status build_rsc(dsmm_ctx *ctx, dsmm_cola *p)
{
    dsmm_status st = DSMM_OK;
    dsmmi_cola_mats *m = &p->mats[0];
    DSMM_TRY(new_csr(ctx, p->nrows, p->need_ptr[p->P], p->rsc_nnz, &m->rsc));
    dsmm_csr *R = m->rsc;
    dsmm_idx at = 0;
    for (dsmm_idx i = 0; i < p->nrows; i++) {
        for (int s = 0; s < p->P; s++) {
            const dsmm_csr *X = m->piece[s];
            if (s == p->me || X == NULL) continue;
            dsmm_idx lo = p->need_ptr[s], len = p->need_ptr[s + 1] - lo;
            for (dsmm_idx k = X->rowptr[i]; k < X->rowptr[i + 1]; k++) {
                R->colidx[at] = lo + find(p->need_idx + lo, len, X->colidx[k]);
                ((double *)R->val)[at++] = ((const double *)X->val)[k];
            }
        }
        R->rowptr[i + 1] = at;
    }
    R->nnz = at;
cleanup:
    return st;
}

dsmm_status dsmm_cola_create(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_cola_opts *opts,
                             dsmm_cola **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_cola *p = NULL;
    dsmm_idx *row = NULL, *col = NULL, cnt = 0, *inv = NULL, *ulist = NULL, *uptr = NULL;
    double *val = NULL;
    dsmm_csr *L = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dsmm_cola_create: out is NULL");
    *out = NULL;
    dsmm_cola_opts o;
    dsmm_cola_opts_init(&o);
    if (opts) o = *opts;
    if (!dsmmi_dist_ok(ctx, A))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dsmm_cola_create: A is not a live distributed matrix of this context");
    else if (A->nrows != A->ncols)
        local = dsmmi_error(ctx, DSMM_ERR_DIM, __FILE__, __LINE__,
                            "dsmm_cola_create: A is %lld x %lld; the 1D SpMM needs a square A",
                            (long long)A->nrows, (long long)A->ncols);
    else if ((unsigned)o.alg >= DSMM_COLA_ALG_COUNT || (unsigned)o.comm > DSMM_COLA_PUT ||
             (unsigned)o.reorder > DSMM_REORDER_RABBIT ||
             (unsigned)o.lsc_alg >= DSMM_SPMM_ALG_COUNT ||
             (unsigned)o.rsc_alg >= DSMM_SPMM_ALG_COUNT)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dsmm_cola_create: an option is out of range");
    else if (o.gpu_resident && ((o.lsc_alg != DSMM_SPMM_AUTO && o.lsc_alg != DSMM_SPMM_GPU) ||
                                (o.rsc_alg != DSMM_SPMM_AUTO && o.rsc_alg != DSMM_SPMM_GPU)))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dsmm_cola_create: gpu_resident multiplies with dsmm's GPU kernel; "
                            "lsc_alg and rsc_alg must be auto or gpu");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    p = dsmmi_calloc(ctx, 1, sizeof *p);
    local = p ? DSMM_OK : DSMM_ERR_NOMEM;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    p->magic = DSMMI_COLA_MAGIC;
    p->ctx = ctx;
    p->opts = o;
    p->P = ctx->size;
    p->me = ctx->rank;
    p->n = A->nrows;
    DSMM_TRY(dsmmi_comm_agree(ctx, dsmmi_dist_triples(ctx, A, &row, &col, &val, &cnt)));
    if (o.reorder != DSMM_REORDER_NONE) {
        DSMM_TRY(make_perm(ctx, A, o.reorder, &p->perm));
        for (dsmm_idx k = 0; k < cnt; k++) {
            row[k] = p->perm[row[k]];
            col[k] = p->perm[col[k]];
        }
    }
    DSMM_TRY(row_bounds(ctx, p, row, cnt));
    p->row0 = p->rb[p->me];
    p->nrows = p->rb[p->me + 1] - p->row0;
    DSMM_TRY(gather_rows(ctx, p, row, col, val, cnt, &L));
    row = dsmmi_free(ctx, row);
    col = dsmmi_free(ctx, col);
    val = dsmmi_free(ctx, val);
    p->vertex = dsmmi_malloc(ctx, (size_t)p->nrows + 1, sizeof *p->vertex);
    local = p->vertex ? DSMM_OK : DSMM_ERR_NOMEM;
    if (local == DSMM_OK && p->perm) {
        inv = dsmmi_malloc(ctx, (size_t)p->n + 1, sizeof *inv);
        if (inv == NULL)
            local = DSMM_ERR_NOMEM;
        else {
            for (dsmm_idx v = 0; v < p->n; v++) inv[p->perm[v]] = v;
            for (dsmm_idx r = 0; r < p->nrows; r++) p->vertex[r] = inv[p->row0 + r];
        }
    } else if (local == DSMM_OK) {
        for (dsmm_idx r = 0; r < p->nrows; r++) p->vertex[r] = p->row0 + r;
    }
    if (local == DSMM_OK) local = cut_pieces(ctx, p, L);
    if (local == DSMM_OK) local = needs(ctx, p);
    if (local == DSMM_OK) local = workgroups(ctx, p);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (int s = 0; s < p->P; s++)
        if (p->wg_of[s] != p->mywg) p->inter_nofusion += p->need_ptr[s + 1] - p->need_ptr[s];
    if (p->P > 1) {
        DSMM_TRY(plan_nofusion(ctx, p));
        DSMM_TRY(plan_fused(ctx, p, &ulist, &uptr));
    }
    dsmmi_cola_mats *m = &p->mats[0];
    if (o.alg == DSMM_COLA_NOFUSION) local = build_rsc(ctx, p);
    if (o.alg == DSMM_COLA && p->P > 1) {
        m->fpiece = dsmmi_calloc(ctx, (size_t)p->P, sizeof *m->fpiece);
        local = m->fpiece ? DSMM_OK : DSMM_ERR_NOMEM;
        for (int s = 0; local == DSMM_OK && s < p->P; s++)
            if (p->wg_of[s] != p->mywg && m->piece[s])
                local = compress(ctx, m->piece[s], ulist + uptr[s], p->ulen[s], &m->fpiece[s]);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    if (o.alg == DSMM_COLA && p->P > 1) {
        // The shared window is made now, so a workgroup spanning nodes fails here.
        DSMM_TRY(dsmmi_shm_create(ctx, 8, &p->shm));
        p->shm_bytes = 8;
    }
    *out = p;
    p = NULL;
cleanup:
    dsmmi_free(ctx, row);
    dsmmi_free(ctx, col);
    dsmmi_free(ctx, val);
    dsmmi_free(ctx, inv);
    dsmmi_free(ctx, ulist);
    dsmmi_free(ctx, uptr);
    dsmm_csr_destroy(&L);
    dsmm_cola_destroy(&p);
    return st;
}

static dsmm_status to_float(dsmm_ctx *ctx, const dsmm_csr *X, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK;
    *out = NULL;
    if (X == NULL) return DSMM_OK;
    DSMM_TRY(dsmmi_csr_create_ex(ctx, X->nrows, X->ncols, X->nnz, DSMM_FLOAT, 64, out));
    memcpy((*out)->rowptr, X->rowptr, (size_t)(X->nrows + 1) * sizeof *X->rowptr);
    memcpy((*out)->colidx, X->colidx, (size_t)X->nnz * sizeof *X->colidx);
    for (dsmm_idx k = 0; k < X->nnz; k++)
        ((float *)(*out)->val)[k] = (float)((const double *)X->val)[k];
    (*out)->nnz = X->nnz;
cleanup:
    return st;
}

dsmm_status dsmmi_cola_mats_get(dsmm_ctx *ctx, dsmm_cola *p, dsmm_type type,
                                const dsmmi_cola_mats **out)
{
    dsmm_status st = DSMM_OK;
    if (type == DSMM_DOUBLE) {
        *out = &p->mats[0];
        return DSMM_OK;
    }
    dsmmi_cola_mats *d = &p->mats[0], *f = &p->mats[1];
    if (f->type != DSMM_FLOAT) {
        f->piece = dsmmi_calloc(ctx, (size_t)p->P, sizeof *f->piece);
        DSMM_CHECK(ctx, f->piece != NULL, DSMM_ERR_NOMEM, "float pieces");
        if (d->fpiece) {
            f->fpiece = dsmmi_calloc(ctx, (size_t)p->P, sizeof *f->fpiece);
            DSMM_CHECK(ctx, f->fpiece != NULL, DSMM_ERR_NOMEM, "float pieces");
        }
        for (int s = 0; s < p->P; s++) {
            DSMM_TRY(to_float(ctx, d->piece[s], &f->piece[s]));
            if (d->fpiece) DSMM_TRY(to_float(ctx, d->fpiece[s], &f->fpiece[s]));
        }
        DSMM_TRY(to_float(ctx, d->rsc, &f->rsc));
        f->type = DSMM_FLOAT;
    }
    *out = f;
cleanup:
    if (st != DSMM_OK) mats_free(p, f);
    return st;
}
