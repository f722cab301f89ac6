// src/kernels/spmm_rows.c: a row-wise SpMM operand with its rows reordered by entry count
// (dsmm_spmm_rows). On graphs whose rows are short and of mixed lengths, the row-wise loops'
// exits (the pair loop, the k = 1 gather's 8-entry loop, the empty-row test) mispredict about
// once a row; with the rows of a block of DSMMI_SPMM_ROWS_BLOCK rows stored by length, row
// after row runs the same trip count. Blocks keep the rows of C a stretch of products writes
// within 4096 rows (in the L2 for the small k this is for) and B's rows of neighbouring rows of
// A together. Only the storage order changes: each row is computed whole, from its entries in
// A's order, and written to its own row of C (args.crow), so the bits are the plain row-wise
// kernel's (docs/kernels.md, "Rows by length").
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

// Rows of this many entries or more share the last length bucket (in A's order within it):
// their loops run long enough that one mispredicted exit does not count.
#define LEN_BUCKETS 64

size_t dsmm_spmm_rows_bytes(const dsmm_spmm_rows *rows)
{
    return rows == NULL ? 0 : rows->bytes;
}

int dsmm_spmm_rows_by_length(const dsmm_spmm_rows *rows)
{
    return rows != NULL && rows->crow != NULL;
}

void dsmm_spmm_rows_destroy(dsmm_spmm_rows **rows)
{
    if (rows == NULL || *rows == NULL) return;
    dsmm_spmm_rows *r = *rows;
    dsmm_ctx *ctx = r->ctx;
    dsmm_csr_destroy(&r->S);
    dsmmi_free(ctx, r->crow);
    dsmmi_free(ctx, r);
    *rows = NULL;
}

/* crow: the rows of A in stored order, by a stable counting sort of each block's rows on
 * min(length, LEN_BUCKETS - 1). */
static void order_rows(const dsmm_idx *rp, dsmm_idx m, dsmm_idx *crow)
{
    dsmm_idx count[LEN_BUCKETS + 1];
    for (dsmm_idx b0 = 0; b0 < m; b0 += DSMMI_SPMM_ROWS_BLOCK) {
        dsmm_idx b1 = m - b0 < DSMMI_SPMM_ROWS_BLOCK ? m : b0 + DSMMI_SPMM_ROWS_BLOCK;
        memset(count, 0, sizeof count);
        for (dsmm_idx i = b0; i < b1; i++) {
            dsmm_idx len = rp[i + 1] - rp[i];
            count[(len < LEN_BUCKETS - 1 ? len : LEN_BUCKETS - 1) + 1]++;
        }
        for (int l = 0; l < LEN_BUCKETS; l++) count[l + 1] += count[l];
        for (dsmm_idx i = b0; i < b1; i++) {
            dsmm_idx len = rp[i + 1] - rp[i];
            crow[b0 + count[len < LEN_BUCKETS - 1 ? len : LEN_BUCKETS - 1]++] = i;
        }
    }
}

/* Whether storing the rows by length pays (dsmmi_spmm_tune.rows_reorder -1): for rows of B
 * of at most 64 bytes (one vector of the one-vector loops, or k = 1), on rows short enough
 * that a mispredicted exit counts (at most 24 entries on average) whose pair-loop trip
 * counts change between neighbouring rows at least 40% of the time (sampled). Measured
 * (bench/spmm.sh, 2 threads, 2026-11-29): at k = 8 the graphs of short rows gained (as-caida
 * 0.70-0.81 of the time in A's order, ca-condmat 0.80, email-enron 0.79, ct2010 0.75-0.79);
 * meshes of even lengths (fe_4elt2, cage10, cage11: trip counts changing 14-21% of the time)
 * and rows of 33-45 entries (ego-twitter, facebook, EX5, bcsstk13) did not (0.92-1.23); at
 * k >= 64 nearly every input lost (1.0-1.7; B's rows of neighbouring rows no longer read
 * together, the likely cause). */
static int reorder_pays(const dsmm_csr *A, dsmm_idx k, dsmm_type type)
{
    int r = dsmmi_spmm_tune.rows_reorder;
    if (r >= 0) return r > 0;
    dsmm_idx m = A->nrows;
    if (m < 2 || (double)k * (double)dsmmi_type_size(type) > 64.0) return 0;
    if ((double)A->nnz > 24.0 * (double)m) return 0;
    enum { SAMPLES = 4096 };
    dsmm_idx step = (m - 1) / SAMPLES + 1, pairs = 0, changes = 0;
    for (dsmm_idx i = 0; i + 1 < m; i += step) {
        dsmm_idx a = (A->rowptr[i + 1] - A->rowptr[i]) / 2,
                 b = (A->rowptr[i + 2] - A->rowptr[i + 1]) / 2;
        changes += a != b;
        pairs++;
    }
    return 5 * changes >= 2 * pairs;
}

dsmm_status dsmm_spmm_rows_create(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx k, dsmm_type type,
                                  dsmm_spmm_rows **rows)
{
    dsmm_status st = DSMM_OK;
    dsmm_spmm_rows *r = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "spmm rows: invalid or destroyed context");
    DSMM_CHECK(ctx, rows != NULL, DSMM_ERR_ARG, "spmm rows: NULL result pointer");
    *rows = NULL;
    DSMM_CHECK(ctx, A != NULL && dsmmi_type_ok(A->type), DSMM_ERR_ARG,
               "spmm rows: A is NULL or has an invalid value type");
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "spmm rows: the product's values must be float or double");
    DSMM_CHECK(ctx, k >= 1, DSMM_ERR_ARG, "spmm rows: k = %lld (at least 1)", (long long)k);
    dsmm_idx m = A->nrows, nnz = A->nnz;
    int pat = A->type == DSMM_PATTERN;
    dsmm_type vt = pat ? DSMM_PATTERN : type;

    r = dsmmi_calloc(ctx, 1, sizeof *r);
    DSMM_CHECK(ctx, r != NULL, DSMM_ERR_NOMEM, "spmm rows: no memory");
    r->ctx = ctx;
    r->m = m;
    r->n = A->ncols;
    r->nnz = nnz;
    r->type = vt;
    if (reorder_pays(A, k, type)) {
        r->crow = dsmmi_malloc(ctx, (size_t)m + 1, sizeof(dsmm_idx));
        DSMM_CHECK(ctx, r->crow != NULL, DSMM_ERR_NOMEM, "spmm rows: no memory for %lld rows",
                   (long long)m);
        order_rows(A->rowptr, m, r->crow);
    }
    DSMM_TRY(dsmm_csr_create(ctx, m, A->ncols, nnz, vt, &r->S));
    if (nnz > 0 && A->ncols <= INT32_MAX) DSMM_TRY(dsmm_csr_set_col_width(r->S, 32));

    dsmm_csr *S = r->S;
    size_t w = dsmmi_type_size(type);
    dsmm_idx q = 0;
    S->rowptr[0] = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        dsmm_idx src = r->crow ? r->crow[i] : i;
        for (dsmm_idx p = A->rowptr[src]; p < A->rowptr[src + 1]; p++, q++) {
            dsmm_idx c = dsmm_csr_col(A, p);
            if (S->colidx32) {
                S->colidx32[q] = (int32_t)c;
            } else {
                S->colidx[q] = c;
            }
            if (pat) continue;
            double v = A->type == DSMM_DOUBLE ? ((const double *)A->val)[p]
                                              : (double)((const float *)A->val)[p];
            if (type == DSMM_DOUBLE) {
                ((double *)S->val)[q] = v;
            } else {
                ((float *)S->val)[q] =
                    A->type == DSMM_FLOAT ? ((const float *)A->val)[p] : (float)v;
            }
        }
        S->rowptr[i + 1] = q;
    }
    S->nnz = nnz;
    S->sorted = A->sorted;
    r->val = pat ? NULL : S->val;
    r->bytes = sizeof *r + (r->crow ? (size_t)m * sizeof(dsmm_idx) : 0) +
               (size_t)(m + 1) * sizeof(dsmm_idx) +
               (size_t)nnz * (S->colidx32 ? sizeof(int32_t) : sizeof(dsmm_idx)) +
               (pat ? 0 : (size_t)nnz * w);
    *rows = r;
    r = NULL;
cleanup:
    dsmm_spmm_rows_destroy(&r);
    return st;
}
