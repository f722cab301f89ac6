// src/dist/dist.c: distributed sparse matrices: regular 2D tiles on a process grid (owner of
// tile (i, j) is rank i * pc + j, ScaLAPACK-style), built by one entry exchange: every rank sends
// each of its entries (global row, column, value) to the owner of its tile, and owners
// assemble their tile. Scatter from a root, assembly from entries held anywhere, redistribution
// to another grid, symmetric permutation and gather all go through that exchange.
#include <string.h>

#include "dist/dist.h"

int dsmmi_block_of(dsmm_idx n, int p, dsmm_idx i)
{
    dsmm_idx base = n / p, extra = n % p;
    dsmm_idx big = extra * (base + 1); // indices in the first `extra` blocks (one longer)
    if (i < big) return (int)(i / (base + 1));
    return (int)(extra + (i - big) / base);
}

bool dsmmi_dist_ok(const dsmm_ctx *ctx, const dsmm_dist *A)
{
    return A != NULL && A->magic == DSMMI_DIST_MAGIC && A->ctx == ctx;
}

static dsmm_status check_dist(dsmm_ctx *ctx, const dsmm_dist *A, const char *what)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, dsmmi_dist_ok(ctx, A), DSMM_ERR_ARG,
               "%s: not a live distributed matrix of this context (NULL, destroyed or foreign)",
               what);
cleanup:
    return st;
}

dsmm_status dsmmi_dist_new(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type, int pr,
                           int pc, dsmm_dist **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist *A = NULL;
    const dsmmi_grid *g = NULL;
    *out = NULL;
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0, DSMM_ERR_ARG, "negative dimensions %lldx%lld",
               (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, dsmmi_type_ok(type), DSMM_ERR_ARG, "bad value type %d", (int)type);
    // The grid first (collective when new), then local allocations, agreed: a rank that runs
    // out of memory here must not leave the others waiting in the next collective.
    DSMM_TRY(dsmmi_grid_get(ctx, pr, pc, &g));
    A = dsmmi_calloc(ctx, 1, sizeof *A);
    if (A != NULL) {
        A->magic = DSMMI_DIST_MAGIC;
        A->ctx = ctx;
        A->nrows = nrows;
        A->ncols = ncols;
        A->type = type;
        A->grid = g;
        A->rb = dsmmi_malloc(ctx, (size_t)g->pr + 1, sizeof *A->rb);
        A->cb = dsmmi_malloc(ctx, (size_t)g->pc + 1, sizeof *A->cb);
    }
    if (A == NULL || A->rb == NULL || A->cb == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "distributed matrix");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmmi_equal_split(nrows, g->pr, A->rb);
    dsmmi_equal_split(ncols, g->pc, A->cb);
    *out = A;
    A = NULL;
cleanup:
    dsmm_dist_destroy(&A);
    return st;
}

void dsmm_dist_destroy(dsmm_dist **pA)
{
    if (pA == NULL || *pA == NULL) return;
    dsmm_dist *A = *pA;
    if (A->magic == DSMMI_DIST_MAGIC) {
        dsmm_ctx *ctx = A->ctx;
        dsmm_csr_destroy(&A->tile);
        A->rb = dsmmi_free(ctx, A->rb);
        A->cb = dsmmi_free(ctx, A->cb);
        A->magic = DSMMI_FREED_MAGIC;
        dsmmi_free(ctx, A);
    }
    *pA = NULL;
}

// This rank's tile shape on A's grid.
static void tile_shape(const dsmm_dist *A, dsmm_idx *r0, dsmm_idx *nr, dsmm_idx *c0, dsmm_idx *nc)
{
    const dsmmi_grid *g = A->grid;
    *r0 = A->rb[g->myrow];
    *nr = A->rb[g->myrow + 1] - *r0;
    *c0 = A->cb[g->mycol];
    *nc = A->cb[g->mycol + 1] - *c0;
}

dsmm_status dsmmi_dist_set_tile(dsmm_ctx *ctx, dsmm_dist *A, dsmm_csr *tile)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx r0, nr, c0, nc;
    tile_shape(A, &r0, &nr, &c0, &nc);
    if (tile->nrows != nr || tile->ncols != nc)
        st = dsmmi_error(ctx, DSMM_ERR_INTERNAL, __FILE__, __LINE__,
                         "tile %lldx%lld where %lldx%lld belongs", (long long)tile->nrows,
                         (long long)tile->ncols, (long long)nr, (long long)nc);
    if (st == DSMM_OK) st = dsmm_csr_set_col_width(tile, nc <= INT32_MAX ? 32 : 64);
    dsmm_csr_destroy(&A->tile);
    A->tile = tile;
    DSMM_TRY(dsmmi_comm_agree(ctx, st));
    int64_t nnz = tile->nnz;
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &nnz, 1, '+'));
    A->nnz = nnz;
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The entry exchange                                                                         */
/* ------------------------------------------------------------------------------------------ */

// A packed entry: global row and column, then the value when the matrix has values.
static size_t rec_bytes(int vals)
{
    return 2 * sizeof(dsmm_idx) + (vals ? sizeof(double) : 0);
}

static void put_rec(char *p, dsmm_idx i, dsmm_idx j, double v, int vals)
{
    memcpy(p, &i, sizeof i);
    memcpy(p + sizeof i, &j, sizeof j);
    if (vals) memcpy(p + 2 * sizeof i, &v, sizeof v);
}

// The records of buf[0..bytes) as triples of an nrows x ncols matrix, indices shifted by
// (-r0, -c0) into it (new *T).
static dsmm_status recs_to_coo(dsmm_ctx *ctx, const char *buf, size_t bytes, int vals,
                               dsmm_idx nrows, dsmm_idx ncols, dsmm_idx r0, dsmm_idx c0,
                               dsmm_coo **T)
{
    dsmm_status st = DSMM_OK;
    size_t rb = rec_bytes(vals);
    dsmm_idx m = (dsmm_idx)(bytes / rb);
    DSMM_TRY(dsmm_coo_create(ctx, nrows, ncols, m, vals ? DSMM_DOUBLE : DSMM_PATTERN, T));
    for (dsmm_idx k = 0; k < m; k++) {
        const char *p = buf + (size_t)k * rb;
        dsmm_idx i, j;
        memcpy(&i, p, sizeof i);
        memcpy(&j, p + sizeof i, sizeof j);
        (*T)->row[k] = i - r0;
        (*T)->col[k] = j - c0;
        if (vals) memcpy((double *)(*T)->val + k, p + 2 * sizeof i, sizeof(double));
    }
    (*T)->nnz = m;
cleanup:
    return st;
}

static double val_at(const void *val, dsmm_type t, dsmm_idx k)
{
    if (val == NULL || t == DSMM_PATTERN) return 1.0;
    return t == DSMM_FLOAT ? (double)((const float *)val)[k] : ((const double *)val)[k];
}

dsmm_status dsmmi_dist_from_triples(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_type type,
                                    dsmm_idx n, const dsmm_idx *row, const dsmm_idx *col,
                                    const void *val, dsmm_type vtype, dsmm_dup dup,
                                    const char *dup_what, int pr, int pc, dsmm_dist **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist *A = NULL;
    size_t *scount = NULL, *sdispl = NULL, *rcount = NULL, *fill = NULL;
    char *sbuf = NULL, *rbuf = NULL;
    dsmm_coo *T = NULL;
    dsmm_csr *tile = NULL;
    *out = NULL;
    DSMM_TRY(dsmmi_dist_new(ctx, nrows, ncols, type, pr, pc, &A));
    const dsmmi_grid *g = A->grid;
    int P = g->pr * g->pc, vals = type != DSMM_PATTERN;
    size_t rb = rec_bytes(vals);

    // Phase 1 (local): count entries per owner, pack them.
    scount = dsmmi_calloc(ctx, (size_t)P, sizeof *scount);
    sdispl = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *sdispl);
    rcount = dsmmi_calloc(ctx, (size_t)P, sizeof *rcount);
    fill = dsmmi_calloc(ctx, (size_t)P, sizeof *fill);
    if (!scount || !sdispl || !rcount || !fill)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "exchange counts");
    for (dsmm_idx k = 0; local == DSMM_OK && k < n; k++) {
        if (row[k] < 0 || row[k] >= nrows || col[k] < 0 || col[k] >= ncols) {
            local =
                dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "entry (%lld, %lld) outside the %lldx%lld matrix", (long long)row[k],
                            (long long)col[k], (long long)nrows, (long long)ncols);
            break;
        }
        int owner =
            dsmmi_block_of(nrows, g->pr, row[k]) * g->pc + dsmmi_block_of(ncols, g->pc, col[k]);
        scount[owner] += rb;
    }
    if (local == DSMM_OK) {
        for (int p = 0; p < P; p++) sdispl[p + 1] = sdispl[p] + scount[p];
        sbuf = dsmmi_malloc(ctx, sdispl[P] ? sdispl[P] : 1, 1);
        if (sbuf == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "exchange: %zu bytes of entries", sdispl[P]);
    }
    for (dsmm_idx k = 0; local == DSMM_OK && k < n; k++) {
        int owner =
            dsmmi_block_of(nrows, g->pr, row[k]) * g->pc + dsmmi_block_of(ncols, g->pc, col[k]);
        put_rec(sbuf + sdispl[owner] + fill[owner], row[k], col[k], val_at(val, vtype, k), vals);
        fill[owner] += rb;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));

    // Phase 2: the exchange (collective, fails together).
    DSMM_TRY(dsmmi_exchange(ctx, sbuf, scount, sdispl, &rbuf, rcount));
    sbuf = dsmmi_free(ctx, sbuf);

    // Phase 3 (local): assemble the tile from tile-local triples.
    dsmm_idx r0, nr, c0, nc;
    tile_shape(A, &r0, &nr, &c0, &nc);
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rcount[p];
    local = recs_to_coo(ctx, rbuf, total, vals, nr, nc, r0, c0, &T);
    if (local == DSMM_OK) {
        rbuf = dsmmi_free(ctx, rbuf);
        dsmm_idx dr = -1, dc = -1;
        local = dsmmi_coo_to_csr(ctx, T, dup, type, &tile, &dr, &dc);
        if (local == DSMM_ERR_FORMAT && dr >= 0) {
            dsmm_ctx_clear_error(ctx);
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                "%s: repeated entry (%lld, %lld)", dup_what ? dup_what : "entries",
                                (long long)(dr + r0 + 1), (long long)(dc + c0 + 1));
        }
    }
    dsmm_coo_destroy(&T);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_dist_set_tile(ctx, A, tile));
    tile = NULL;
    *out = A;
    A = NULL;
cleanup:
    dsmm_coo_destroy(&T);
    dsmm_csr_destroy(&tile);
    scount = dsmmi_free(ctx, scount);
    sdispl = dsmmi_free(ctx, sdispl);
    rcount = dsmmi_free(ctx, rcount);
    fill = dsmmi_free(ctx, fill);
    sbuf = dsmmi_free(ctx, sbuf);
    rbuf = dsmmi_free(ctx, rbuf);
    dsmm_dist_destroy(&A);
    return st;
}

dsmm_status dsmmi_dist_triples(dsmm_ctx *ctx, const dsmm_dist *A, dsmm_idx **prow, dsmm_idx **pcol,
                               double **pval, dsmm_idx *pn)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *row = NULL, *col = NULL;
    double *val = NULL;
    const dsmm_csr *T = A->tile;
    dsmm_idx r0, nr, c0, nc, n = T->nnz;
    tile_shape(A, &r0, &nr, &c0, &nc);
    row = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *row);
    col = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *col);
    if (T->type != DSMM_PATTERN) val = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *val);
    DSMM_CHECK(ctx, row && col && (val || T->type == DSMM_PATTERN), DSMM_ERR_NOMEM, "%lld entries",
               (long long)n);
    for (dsmm_idx i = 0; i < T->nrows; i++)
        for (dsmm_idx k = T->rowptr[i]; k < T->rowptr[i + 1]; k++) {
            row[k] = r0 + i;
            col[k] = c0 + dsmm_csr_col(T, k);
            if (val) val[k] = dsmm_csr_value(T, k);
        }
    *prow = row;
    *pcol = col;
    *pval = val;
    *pn = n;
    row = col = NULL;
    val = NULL;
cleanup:
    row = dsmmi_free(ctx, row);
    col = dsmmi_free(ctx, col);
    val = dsmmi_free(ctx, val);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Public constructors                                                                        */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmm_dist_from_coo(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, const dsmm_coo *T,
                               dsmm_dup dup, int pr, int pc, dsmm_dist **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_from_coo: out must be non-NULL");
    *out = NULL;
    if (T != NULL && (T->nrows != nrows || T->ncols != ncols))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dist_from_coo: local triples are %lldx%lld, the matrix %lldx%lld",
                            (long long)T->nrows, (long long)T->ncols, (long long)nrows,
                            (long long)ncols);
    if (local == DSMM_OK && !dsmmi_dup_ok(dup))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__, "bad dup policy %d", (int)dup);
    // Every rank must agree on the shape; the value type is the widest of the ranks' triples.
    int64_t hi[3] = {nrows, ncols, T ? (int64_t)T->type : (int64_t)DSMM_PATTERN};
    int64_t lo[2] = {nrows, ncols};
    if (local == DSMM_OK) local = dsmmi_allreduce_i64(ctx, hi, 3, '>');
    if (local == DSMM_OK) local = dsmmi_allreduce_i64(ctx, lo, 2, '<');
    if (local == DSMM_OK && (hi[0] != lo[0] || hi[1] != lo[1]))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dist_from_coo: ranks disagree on the shape (%lldx%lld here)",
                            (long long)nrows, (long long)ncols);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_type type = (dsmm_type)hi[2];
    dsmm_idx n = T ? T->nnz : 0;
    DSMM_TRY(dsmmi_dist_from_triples(
        ctx, nrows, ncols, type, n, T ? T->row : NULL, T ? T->col : NULL, T ? T->val : NULL,
        T ? T->type : DSMM_PATTERN, dup, "dist_from_coo", pr, pc, out));
cleanup:
    return st;
}

// Broadcasts what the root knows of a matrix (or a failure) so every rank can take part.
static dsmm_status root_shape(dsmm_ctx *ctx, int root, const dsmm_csr *A, dsmm_idx *nrows,
                              dsmm_idx *ncols, dsmm_type *type)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int64_t shape[3] = {0, 0, 0};
    if (root < 0 || root >= ctx->size) {
        DSMM_FAIL(ctx, DSMM_ERR_ARG, "root %d outside 0..%d", root, ctx->size - 1);
    }
    if (ctx->rank == root) {
        if (A == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__, "A is NULL on the root");
        else if ((local = dsmm_csr_check(ctx, A)) == DSMM_OK) {
            shape[0] = A->nrows;
            shape[1] = A->ncols;
            shape[2] = A->type;
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_bcast_ctl(ctx, root, shape, sizeof shape));
    *nrows = shape[0];
    *ncols = shape[1];
    *type = (dsmm_type)shape[2];
cleanup:
    return st;
}

dsmm_status dsmm_dist_scatter(dsmm_ctx *ctx, int root, const dsmm_csr *A, int pr, int pc,
                              dsmm_dist **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_idx *row = NULL, *col = NULL, nrows = 0, ncols = 0;
    dsmm_type type = DSMM_PATTERN;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_scatter: out must be non-NULL");
    *out = NULL;
    DSMM_TRY(root_shape(ctx, root, A, &nrows, &ncols, &type));
    dsmm_idx n = 0;
    if (ctx->rank == root) {
        n = A->nnz;
        row = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *row);
        col = dsmmi_malloc(ctx, n ? (size_t)n : 1, sizeof *col);
        if (row == NULL || col == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "scatter: %lld entries",
                                (long long)n);
        for (dsmm_idx i = 0; local == DSMM_OK && i < A->nrows; i++)
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                row[k] = i;
                col[k] = dsmm_csr_col(A, k);
            }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_dist_from_triples(ctx, nrows, ncols, type, n, row, col,
                                     ctx->rank == root ? A->val : NULL, type, DSMM_DUP_SUM,
                                     "dist_scatter", pr, pc, out));
cleanup:
    row = dsmmi_free(ctx, row);
    col = dsmmi_free(ctx, col);
    return st;
}

// A's entries moved by the index map map (NULL: identity) onto a pr x pc grid.
static dsmm_status remap(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_idx *map, int pr, int pc,
                         dsmm_dist **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *row = NULL, *col = NULL, n = 0;
    double *val = NULL;
    st = dsmmi_dist_triples(ctx, A, &row, &col, &val, &n);
    DSMM_TRY(dsmmi_comm_agree(ctx, st));
    if (map)
        for (dsmm_idx k = 0; k < n; k++) {
            row[k] = map[row[k]];
            col[k] = map[col[k]];
        }
    DSMM_TRY(dsmmi_dist_from_triples(ctx, A->nrows, A->ncols, A->type, n, row, col, val,
                                     val ? DSMM_DOUBLE : DSMM_PATTERN, DSMM_DUP_ERROR,
                                     "redistribution", pr, pc, out));
cleanup:
    row = dsmmi_free(ctx, row);
    col = dsmmi_free(ctx, col);
    val = dsmmi_free(ctx, val);
    return st;
}

dsmm_status dsmm_dist_redistribute(dsmm_ctx *ctx, const dsmm_dist *A, int pr, int pc,
                                   dsmm_dist **out)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_redistribute: out must be non-NULL");
    *out = NULL;
    DSMM_TRY(check_dist(ctx, A, "dist_redistribute"));
    DSMM_TRY(remap(ctx, A, NULL, pr, pc, out));
cleanup:
    return st;
}

dsmm_status dsmm_dist_permute(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_idx *perm,
                              dsmm_dist **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    char *seen = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_permute: out must be non-NULL");
    *out = NULL;
    DSMM_TRY(check_dist(ctx, A, "dist_permute"));
    DSMM_CHECK(ctx, A->nrows == A->ncols, DSMM_ERR_DIM,
               "dist_permute: a symmetric permutation needs a square matrix, not %lldx%lld",
               (long long)A->nrows, (long long)A->ncols);
    if (perm == NULL) {
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__, "dist_permute: perm is NULL");
    } else {
        seen = dsmmi_calloc(ctx, A->nrows ? (size_t)A->nrows : 1, 1);
        if (seen == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "permutation check");
        for (dsmm_idx i = 0; local == DSMM_OK && i < A->nrows; i++) {
            if (perm[i] < 0 || perm[i] >= A->nrows || seen[perm[i]]++)
                local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                                    "dist_permute: perm[%lld] = %lld: not a permutation of 0..%lld",
                                    (long long)i, (long long)perm[i], (long long)A->nrows - 1);
        }
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(remap(ctx, A, perm, A->grid->pr, A->grid->pc, out));
cleanup:
    seen = dsmmi_free(ctx, seen);
    return st;
}

dsmm_status dsmm_dist_gather(dsmm_ctx *ctx, const dsmm_dist *A, int root, dsmm_csr **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    size_t *scount = NULL, *sdispl = NULL, *rcount = NULL;
    char *sbuf = NULL, *rbuf = NULL;
    dsmm_coo *T = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "dist_gather: out must be non-NULL");
    *out = NULL;
    DSMM_TRY(check_dist(ctx, A, "dist_gather"));
    DSMM_CHECK(ctx, root >= 0 && root < ctx->size, DSMM_ERR_ARG, "root %d outside 0..%d", root,
               ctx->size - 1);
    int P = ctx->size, vals = A->type != DSMM_PATTERN;
    size_t rb = rec_bytes(vals);
    // This rank's entries, with global indices, packed straight from its tile for the root.
    const dsmm_csr *tl = A->tile;
    dsmm_idx n = tl->nnz, r0, nr, c0, nc;
    tile_shape(A, &r0, &nr, &c0, &nc);
    scount = dsmmi_calloc(ctx, (size_t)P, sizeof *scount);
    sdispl = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *sdispl);
    rcount = dsmmi_calloc(ctx, (size_t)P, sizeof *rcount);
    sbuf = dsmmi_malloc(ctx, n ? (size_t)n * rb : 1, 1);
    if (!scount || !sdispl || !rcount || !sbuf)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "gather: %lld entries",
                            (long long)n);
    if (local == DSMM_OK) {
        scount[root] = (size_t)n * rb;
        for (int p = 0; p < P; p++) sdispl[p + 1] = sdispl[p] + scount[p];
        for (dsmm_idx i = 0; i < tl->nrows; i++)
            for (dsmm_idx k = tl->rowptr[i]; k < tl->rowptr[i + 1]; k++)
                put_rec(sbuf + (size_t)k * rb, r0 + i, c0 + dsmm_csr_col(tl, k),
                        vals ? dsmm_csr_value(tl, k) : 1.0, vals);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_exchange(ctx, sbuf, scount, sdispl, &rbuf, rcount));
    if (ctx->rank == root) {
        size_t total = 0;
        for (int p = 0; p < P; p++) total += rcount[p];
        local = recs_to_coo(ctx, rbuf, total, vals, A->nrows, A->ncols, 0, 0, &T);
        if (local == DSMM_OK)
            local = dsmmi_coo_to_csr(ctx, T, DSMM_DUP_ERROR, A->type, out, NULL, NULL);
    }
    st = dsmmi_comm_agree(ctx, local);
    if (st != DSMM_OK) dsmm_csr_destroy(out);
cleanup:
    dsmm_coo_destroy(&T);
    scount = dsmmi_free(ctx, scount);
    sdispl = dsmmi_free(ctx, sdispl);
    rcount = dsmmi_free(ctx, rcount);
    sbuf = dsmmi_free(ctx, sbuf);
    rbuf = dsmmi_free(ctx, rbuf);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Accessors                                                                                  */
/* ------------------------------------------------------------------------------------------ */

dsmm_idx dsmm_dist_nrows(const dsmm_dist *A)
{
    return A && A->magic == DSMMI_DIST_MAGIC ? A->nrows : 0;
}

dsmm_idx dsmm_dist_ncols(const dsmm_dist *A)
{
    return A && A->magic == DSMMI_DIST_MAGIC ? A->ncols : 0;
}

dsmm_idx dsmm_dist_nnz(const dsmm_dist *A)
{
    return A && A->magic == DSMMI_DIST_MAGIC ? A->nnz : 0;
}

dsmm_type dsmm_dist_type(const dsmm_dist *A)
{
    return A && A->magic == DSMMI_DIST_MAGIC ? A->type : DSMM_PATTERN;
}

void dsmm_dist_grid(const dsmm_dist *A, int *pr, int *pc)
{
    int ok = A && A->magic == DSMMI_DIST_MAGIC;
    if (pr) *pr = ok ? A->grid->pr : 0;
    if (pc) *pc = ok ? A->grid->pc : 0;
}

const dsmm_csr *dsmm_dist_local(const dsmm_dist *A, dsmm_idx *row0, dsmm_idx *col0)
{
    int ok = A && A->magic == DSMMI_DIST_MAGIC;
    if (row0) *row0 = ok ? A->rb[A->grid->myrow] : 0;
    if (col0) *col0 = ok ? A->cb[A->grid->mycol] : 0;
    return ok ? A->tile : NULL;
}
