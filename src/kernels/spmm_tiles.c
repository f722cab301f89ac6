// src/kernels/spmm_tiles.c: column-wise SpMM on tiles. The column-wise kernel (spmm_col.c)
// reads and writes a row of C for every entry of S = op(A)^T, at random over all of C: one
// load and one store of C's row from the L2 or beyond against the row-wise kernel's one load
// of B's row, which kept it at 1.6-2.4x the row-wise time. Here S's entries are grouped once,
// before the products, into tiles of C's rows (col_tile_bytes = 32 KiB of C a tile); a thread
// takes a whole tile, clears or scales its rows of C and adds the tile's entries into them.
// Three layouts of a tile's entries:
// - rows (the default, col_tile_rows = 1): window by window of B's rows (col_tile_window: all
//   of B by default, one window), row of C by row of C, each row's entries in S's row order: a
//   row of C is loaded once a window, gets its entries in registers, is stored once; at k = 1 the
//   runs are interleaved in chunks for a gather a step (slice_runs);
// - entries in S's row order, each a read-modify-write of its row of C (col_tile_rows = 0);
// - the same in segments, one row of B read once for a run of entries (col_tile_runs).
// Each row of C receives its updates in S's row order, with the column-wise kernel's
// arithmetic: the result is bitwise that of the column-wise kernel on one thread, at any
// thread count (docs/kernels.md, "Column-wise on tiles", "Rows of C within windows").
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/stream.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define SPMM_TMPL       "kernels/spmm_tile_tmpl.h"
#define SPMM_FN(suffix) tile_##suffix
#include "kernels/spmm_instances.h"
#undef SPMM_TMPL

// The most rows a tile may have: rows within a tile are 16-bit.
#define TILE_HEIGHT_MAX 65536
// Tiles a thread should get at least, where C has the rows, so that dynamic scheduling evens
// out tiles of unequal entry counts.
#define TILES_PER_THREAD 4

size_t dsmm_spmm_tiles_bytes(const dsmm_spmm_tiles *tiles)
{
    return tiles == NULL ? 0 : tiles->bytes;
}

void dsmm_spmm_tiles_destroy(dsmm_spmm_tiles **tiles)
{
    if (tiles == NULL || *tiles == NULL) return;
    dsmm_spmm_tiles *t = *tiles;
    dsmm_ctx *ctx = t->ctx;
    dsmmi_free(ctx, t->ptr);
    dsmmi_free(ctx, t->src32);
    dsmmi_free(ctx, t->src);
    dsmmi_free(ctx, t->dst);
    dsmmi_free(ctx, t->sptr);
    dsmmi_free(ctx, t->beg);
    dsmmi_free(ctx, t->bptr);
    dsmmi_free(ctx, t->rbeg);
    dsmmi_free(ctx, t->val);
    dsmmi_free(ctx, t);
    *tiles = NULL;
}

/* The widest row of B (bytes) that the segmented layout takes: 8 vectors of the widest the
 * CPU runs (64 bytes with AVX-512, else 32), which the compiler keeps in registers. */
static double seg_max_bytes(void)
{
#if DSMMI_HAVE_WIDE
    if (dsmmi_spmm_tune.vec_bytes >= 64 && __builtin_cpu_supports("x86-64-v4")) return 512;
#endif
    return 256;
}

/* The tile height for C's m rows of k values of w bytes with `threads` threads: col_tile_bytes
 * of C, fewer rows where C has too few for TILES_PER_THREAD tiles a thread. */
static dsmm_idx tile_height(dsmm_idx m, dsmm_idx k, size_t w, int threads)
{
    double rows = (double)dsmmi_spmm_tune.col_tile_bytes / ((double)k * (double)w);
    dsmm_idx h = rows >= TILE_HEIGHT_MAX ? TILE_HEIGHT_MAX : rows < 1 ? 1 : (dsmm_idx)rows;
    dsmm_idx want = (dsmm_idx)threads * TILES_PER_THREAD;
    dsmm_idx even = (m + want - 1) / want; // the height that gives `want` tiles
    if (even < h) h = even;
    return h < 1 ? 1 : h;
}

typedef struct {
    dsmm_idx len, u;
} run_key;

static int run_key_cmp(const void *x, const void *y)
{
    const run_key *a = x, *b = y;
    if (a->len != b->len) return a->len > b->len ? -1 : 1; // longest first
    return a->u < b->u ? -1 : a->u > b->u;
}

/* Each bucket's runs put longest first, so that the kernel's groups of runs side by side
 * (GROUP_RUNS) have about the same length. A bucket's runs are distinct rows of C, so their
 * order changes no sum. */
static dsmm_status sort_runs(dsmm_ctx *ctx, dsmm_spmm_tiles *t, size_t w, int narrow)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx nnz = t->nnz, nruns = t->nruns;
    size_t sw = narrow ? sizeof(int32_t) : sizeof(dsmm_idx);
    void *src = dsmmi_malloc(ctx, (size_t)nnz, sw);
    void *val = t->val != NULL ? dsmmi_malloc(ctx, (size_t)nnz, w) : NULL;
    dsmm_idx *rbeg = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof(dsmm_idx));
    uint16_t *dst = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof(uint16_t));
    run_key *key = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof(run_key));
    DSMM_CHECK(ctx,
               src != NULL && (t->val == NULL || val != NULL) && rbeg != NULL && dst != NULL &&
                   key != NULL,
               DSMM_ERR_NOMEM, "spmm tiles: no memory to order %lld runs", (long long)nruns);
    const char *osrc = narrow ? (const char *)t->src32 : (const char *)t->src;
    dsmm_idx q = 0;
    for (dsmm_idx i = 0; i < t->ntiles * t->nwin; i++) {
        dsmm_idx u0 = t->bptr[i], u1 = t->bptr[i + 1];
        for (dsmm_idx u = u0; u < u1; u++) key[u - u0] = (run_key){t->rbeg[u + 1] - t->rbeg[u], u};
        qsort(key, (size_t)(u1 - u0), sizeof *key, run_key_cmp);
        for (dsmm_idx v = u0; v < u1; v++) {
            dsmm_idx u = key[v - u0].u, len = key[v - u0].len;
            rbeg[v] = q;
            dst[v] = t->dst[u];
            memcpy((char *)src + (size_t)q * sw, osrc + (size_t)t->rbeg[u] * sw, (size_t)len * sw);
            if (val != NULL)
                memcpy((char *)val + (size_t)q * w, (const char *)t->val + (size_t)t->rbeg[u] * w,
                       (size_t)len * w);
            q += len;
        }
    }
    rbeg[nruns] = nnz;
    void *swap = narrow ? (void *)t->src32 : (void *)t->src;
    if (narrow) {
        t->src32 = src;
    } else {
        t->src = src;
    }
    src = swap;
    swap = t->val;
    t->val = val;
    val = swap;
    dsmm_idx *sb = t->rbeg;
    t->rbeg = rbeg;
    rbeg = sb;
    uint16_t *sd = t->dst;
    t->dst = dst;
    dst = sd;
cleanup:
    dsmmi_free(ctx, src);
    dsmmi_free(ctx, val);
    dsmmi_free(ctx, rbeg);
    dsmmi_free(ctx, dst);
    dsmmi_free(ctx, key);
    return st;
}

/* Rows layout at k = 1 (32-bit rows of B): each bucket's runs, longest first, taken G at a
 * time (a chunk: G = 8 doubles or 16 floats, fewer at a bucket's end), with the chunk's
 * entries interleaved step by step: the i-th entries of the chunk's runs that have one, in
 * run order (a prefix of the chunk, since lengths fall). A chunk's entries keep their place
 * in the array (rbeg of its first run); the kernel then reads step i's entries as one vector
 * and adds them into G sums side by side (docs/kernels.md, "k = 1 in chunks"). */
static dsmm_status slice_runs(dsmm_ctx *ctx, dsmm_spmm_tiles *t, size_t w, int G)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx nnz = t->nnz;
    int32_t *src = dsmmi_malloc(ctx, (size_t)nnz, sizeof *src);
    char *val = t->val != NULL ? dsmmi_malloc(ctx, (size_t)nnz, w) : NULL;
    DSMM_CHECK(ctx, src != NULL && (t->val == NULL || val != NULL), DSMM_ERR_NOMEM,
               "spmm tiles: no memory to interleave %lld entries", (long long)nnz);
    memcpy(src, t->src32, (size_t)nnz * sizeof *src);
    if (val != NULL) memcpy(val, t->val, (size_t)nnz * w);
    for (dsmm_idx b = 0; b < t->ntiles * t->nwin; b++) {
        for (dsmm_idx g = t->bptr[b]; g < t->bptr[b + 1]; g += G) {
            int lanes = t->bptr[b + 1] - g < G ? (int)(t->bptr[b + 1] - g) : G;
            dsmm_idx q = t->rbeg[g];
            for (dsmm_idx i = 0;; i++) {
                int c = 0;
                for (int l = 0; l < lanes; l++) {
                    dsmm_idx u = g + l;
                    if (t->rbeg[u + 1] - t->rbeg[u] <= i) break;
                    t->src32[q] = src[t->rbeg[u] + i];
                    if (val != NULL)
                        memcpy((char *)t->val + (size_t)q * w, val + (size_t)(t->rbeg[u] + i) * w,
                               w);
                    q++;
                    c++;
                }
                if (c == 0) break;
            }
        }
    }
    t->slice = G;
cleanup:
    dsmmi_free(ctx, src);
    dsmmi_free(ctx, val);
    return st;
}

/* The rows layout of tiles t (height, ntiles, type, narrow set) from R = op(A) in CSR, each
 * row's entries in the order the column-wise kernel adds them into that row of C (increasing
 * row of B; R sorted, or the transpose of S). Within a tile the entries go window by window
 * (W rows of B a window), within a window row by row of C, within a row in R's order: a run
 * is one row's entries in one window. */
static dsmm_status build_rows(dsmm_ctx *ctx, dsmm_spmm_tiles *t, const dsmm_csr *R, dsmm_idx k,
                              size_t w, int narrow)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *cnt = NULL;
    dsmm_idx m = R->nrows, n = R->ncols, nnz = R->nnz, h = t->height, nt = t->ntiles;
    int pat = t->type == DSMM_PATTERN;
    // rows of B a window: col_tile_window bytes of B (all of B by default: windows of the
    // last-level cache's size ran 1.1-1.7x as long on the AMD EPYC VM's 32 MiB L3, and paid
    // nothing on the Intel VM's 300 MiB; 0: the last-level cache's size, all of B where
    // unknown), and no more windows than keep the (tile, window) counts within a few
    // times the entries
    double rowb = (double)k * (double)w;
    dsmm_idx W = n < 1 ? 1 : n;
    double wbytes = dsmmi_spmm_tune.col_tile_window > 0 ? (double)dsmmi_spmm_tune.col_tile_window
                                                        : dsmmi_cpu_cache_bytes(0);
    if (wbytes > 0) {
        double rows = wbytes / rowb;
        if (rows < (double)W) W = rows < 1 ? 1 : (dsmm_idx)rows;
    }
    dsmm_idx nw = n < 1 ? 1 : (n - 1) / W + 1;
    double cap = 4.0 * (double)nnz + 65536.0;
    if ((double)nt * (double)nw > cap) {
        nw = (dsmm_idx)(cap / (double)(nt > 0 ? nt : 1));
        if (nw < 1) nw = 1;
        W = (n - 1) / nw + 1;
        nw = (n - 1) / W + 1;
    }
    t->window = W;
    size_t nb = (size_t)nt * (size_t)nw; // buckets (tile, window), in that order
    cnt = dsmmi_calloc(ctx, 2 * (nb + 1), sizeof(dsmm_idx));
    DSMM_CHECK(ctx, cnt != NULL, DSMM_ERR_NOMEM, "spmm tiles: no memory for %zu windows", nb);
    dsmm_idx *ecnt = cnt, *rcnt = cnt + nb + 1; // entries and runs a bucket, then where they go
    dsmm_idx nruns = 0;
    for (dsmm_idx i = 0; i < m; i++) {
        size_t b0 = (size_t)(i / h) * (size_t)nw;
        dsmm_idx prev = -1;
        for (dsmm_idx p = R->rowptr[i]; p < R->rowptr[i + 1]; p++) {
            dsmm_idx win = dsmm_csr_col(R, p) / W;
            ecnt[b0 + (size_t)win + 1]++;
            if (win != prev) {
                rcnt[b0 + (size_t)win + 1]++;
                nruns++;
                prev = win;
            }
        }
    }
    for (size_t b = 0; b < nb; b++) {
        ecnt[b + 1] += ecnt[b];
        rcnt[b + 1] += rcnt[b];
    }
    if (narrow) {
        t->src32 = dsmmi_malloc(ctx, (size_t)nnz, sizeof(int32_t));
    } else {
        t->src = dsmmi_malloc(ctx, (size_t)nnz, sizeof(dsmm_idx));
    }
    t->dst = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof(uint16_t));
    t->bptr = dsmmi_malloc(ctx, nb + 1, sizeof(dsmm_idx));
    t->rbeg = dsmmi_malloc(ctx, (size_t)nruns + 1, sizeof(dsmm_idx));
    if (!pat) t->val = dsmmi_malloc(ctx, (size_t)nnz, w);
    DSMM_CHECK(ctx,
               (t->src32 != NULL || t->src != NULL) && t->dst != NULL && t->bptr != NULL &&
                   t->rbeg != NULL && (pat || t->val != NULL),
               DSMM_ERR_NOMEM, "spmm tiles: no memory for %lld entries in %lld runs",
               (long long)nnz, (long long)nruns);
    t->nruns = nruns;
    t->nwin = nw;
    t->bytes = sizeof *t + ((size_t)nt + 1 + nb + 1) * sizeof(dsmm_idx) +
               (size_t)nnz * ((narrow ? sizeof(int32_t) : sizeof(dsmm_idx)) + (pat ? 0 : w)) +
               ((size_t)nruns + 1) * (sizeof(uint16_t) + sizeof(dsmm_idx));
    memcpy(t->bptr, rcnt, (nb + 1) * sizeof(dsmm_idx));
    for (dsmm_idx i = 0; i <= nt; i++) t->ptr[i] = ecnt[(size_t)i * (size_t)nw];
    t->rbeg[nruns] = nnz;
    for (dsmm_idx i = 0; i < m; i++) {
        size_t b0 = (size_t)(i / h) * (size_t)nw;
        dsmm_idx prev = -1;
        for (dsmm_idx p = R->rowptr[i]; p < R->rowptr[i + 1]; p++) {
            dsmm_idx c = dsmm_csr_col(R, p), win = c / W;
            dsmm_idx q = ecnt[b0 + (size_t)win]++;
            if (win != prev) {
                dsmm_idx u = rcnt[b0 + (size_t)win]++;
                t->rbeg[u] = q;
                t->dst[u] = (uint16_t)(i - (i / h) * h);
                prev = win;
            }
            if (narrow) {
                t->src32[q] = (int32_t)c;
            } else {
                t->src[q] = c;
            }
            if (pat) continue;
            double v = R->type == DSMM_DOUBLE ? ((const double *)R->val)[p]
                                              : (double)((const float *)R->val)[p];
            if (w == sizeof(double)) {
                ((double *)t->val)[q] = v;
            } else {
                ((float *)t->val)[q] = (float)v;
            }
        }
    }
    DSMM_TRY(sort_runs(ctx, t, w, narrow));
    if (k == 1 && narrow && dsmmi_spmm_slice())
        DSMM_TRY(slice_runs(ctx, t, w, w == sizeof(double) ? 8 : 16));
cleanup:
    dsmmi_free(ctx, cnt);
    return st;
}

dsmm_status dsmm_spmm_tiles_create(dsmm_ctx *ctx, const dsmm_csr *A, int transpose_a, dsmm_idx k,
                                   dsmm_type type, dsmm_spmm_tiles **tiles)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *At = NULL, *Rt = NULL;
    dsmm_spmm_tiles *t = NULL;
    dsmm_idx *fill = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "spmm tiles: invalid or destroyed context");
    DSMM_CHECK(ctx, tiles != NULL, DSMM_ERR_ARG, "spmm tiles: NULL result pointer");
    *tiles = NULL;
    DSMM_CHECK(ctx, A != NULL && dsmmi_type_ok(A->type), DSMM_ERR_ARG,
               "spmm tiles: A is NULL or has an invalid value type");
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "spmm tiles: the product's values must be float or double");
    DSMM_CHECK(ctx, k >= 1, DSMM_ERR_ARG, "spmm tiles: k = %lld (at least 1)", (long long)k);

    // S = op(A)^T: A itself for A^T * B, A's transpose for A * B; not formed for the rows
    // layout of a sorted A * B, which reads A itself (R below).
    int rows = A->nnz > 0 && dsmmi_spmm_tune.col_tile_rows;
    const dsmm_csr *S = A;
    if (!transpose_a && !(rows && A->sorted)) {
        DSMM_TRY(dsmm_csr_transpose(ctx, A, &At));
        S = At;
    }
    dsmm_idx m = transpose_a ? A->ncols : A->nrows, n = transpose_a ? A->nrows : A->ncols;
    dsmm_idx nnz = A->nnz;
    size_t w = dsmmi_type_size(type);
    dsmm_idx h = tile_height(m, k, w, dsmmi_threads(ctx));
    dsmm_idx nt = m == 0 ? 0 : (m - 1) / h + 1;
    int narrow = n <= dsmmi_spmm_tune.col_tile_src32_max;
    int pat = S->type == DSMM_PATTERN;

    t = dsmmi_calloc(ctx, 1, sizeof *t);
    DSMM_CHECK(ctx, t != NULL, DSMM_ERR_NOMEM, "spmm tiles: no memory");
    t->ctx = ctx;
    t->m = m;
    t->n = n;
    t->nnz = nnz;
    t->transpose_a = transpose_a != 0;
    t->type = pat ? DSMM_PATTERN : type;
    t->height = h;
    t->ntiles = nt;
    t->ptr = dsmmi_calloc(ctx, (size_t)nt + 1, sizeof(dsmm_idx));
    DSMM_CHECK(ctx, t->ptr != NULL, DSMM_ERR_NOMEM, "spmm tiles: no memory for %lld tiles",
               (long long)nt);

    if (rows) {
        // R = op(A) with each row in the column-wise kernel's order: A when sorted, else S^T
        const dsmm_csr *R = A;
        if (transpose_a || !A->sorted) {
            DSMM_TRY(dsmm_csr_transpose(ctx, S, &Rt));
            R = Rt;
        }
        DSMM_TRY(build_rows(ctx, t, R, k, w, narrow));
        *tiles = t;
        t = NULL;
        goto cleanup;
    }

    // scratch: the next entry, the next segment and the last row of S of each tile
    fill = dsmmi_malloc(ctx, 3 * ((size_t)nt + 1), sizeof(dsmm_idx));
    DSMM_CHECK(ctx, fill != NULL, DSMM_ERR_NOMEM, "spmm tiles: no memory for %lld tiles",
               (long long)nt);
    dsmm_idx *sfill = fill + nt + 1, *last = sfill + nt + 1;

    // Entries (ptr) and segments (runs of one row of S; sfill) a tile, walking S's rows in order.
    dsmm_idx nseg = 0;
    for (dsmm_idx i = 0; i <= nt; i++) {
        last[i] = -1;
        sfill[i] = 0;
    }
    for (dsmm_idx r = 0; r < n; r++) {
        for (dsmm_idx p = S->rowptr[r]; p < S->rowptr[r + 1]; p++) {
            dsmm_idx tile = dsmm_csr_col(S, p) / h;
            t->ptr[tile + 1]++;
            if (last[tile] != r) {
                last[tile] = r;
                sfill[tile + 1]++;
                nseg++;
            }
        }
    }
    // Segments read B's row once a run, into registers: a gain where a row of B takes 4 to 8
    // vectors and runs are long (docs/kernels.md, "Segments"); shorter rows of B gained nothing
    // and longer ones lost, as did runs of under 2 entries on average.
    int runs = dsmmi_spmm_tune.col_tile_runs;
    double rowb = (double)k * (double)w;
    int seg =
        nnz > 0 && (runs > 0 || (runs < 0 && rowb >= 256 && rowb <= seg_max_bytes() &&
                                 (double)nnz >= dsmmi_spmm_tune.col_tile_runs_min * (double)nseg));
    size_t nsrc = seg ? (size_t)nseg : (size_t)nnz;
    if (narrow) {
        t->src32 = dsmmi_malloc(ctx, nsrc, sizeof(int32_t));
    } else {
        t->src = dsmmi_malloc(ctx, nsrc, sizeof(dsmm_idx));
    }
    t->dst = dsmmi_malloc(ctx, (size_t)nnz, sizeof(uint16_t));
    if (!pat) t->val = dsmmi_malloc(ctx, (size_t)nnz, w);
    if (seg) {
        t->nseg = nseg;
        t->sptr = dsmmi_malloc(ctx, (size_t)nt + 1, sizeof(dsmm_idx));
        t->beg = dsmmi_malloc(ctx, nsrc + 1, sizeof(dsmm_idx));
    }
    DSMM_CHECK(ctx,
               (t->src32 != NULL || t->src != NULL) && t->dst != NULL && (pat || t->val != NULL) &&
                   (!seg || (t->sptr != NULL && t->beg != NULL)),
               DSMM_ERR_NOMEM, "spmm tiles: no memory for %lld entries in %lld tiles",
               (long long)nnz, (long long)nt);
    t->bytes = sizeof *t + ((size_t)nt + 1) * sizeof(dsmm_idx) +
               nsrc * (narrow ? sizeof(int32_t) : sizeof(dsmm_idx)) +
               (size_t)nnz * (sizeof(uint16_t) + (pat ? 0 : w)) +
               (seg ? ((size_t)nt + 1 + nsrc + 1) * sizeof(dsmm_idx) : 0);

    // Where each tile's entries and segments start, then each entry to its tile's next place.
    if (seg) {
        for (dsmm_idx i = 0; i < nt; i++) sfill[i + 1] += sfill[i];
        memcpy(t->sptr, sfill, ((size_t)nt + 1) * sizeof(dsmm_idx));
        t->beg[nseg] = nnz;
    }
    for (dsmm_idx i = 0; i < nt; i++) t->ptr[i + 1] += t->ptr[i];
    memcpy(fill, t->ptr, ((size_t)nt + 1) * sizeof(dsmm_idx));
    for (dsmm_idx i = 0; i < nt; i++) last[i] = -1;
    for (dsmm_idx r = 0; r < n; r++) {
        for (dsmm_idx p = S->rowptr[r]; p < S->rowptr[r + 1]; p++) {
            dsmm_idx c = dsmm_csr_col(S, p), tile = c / h;
            dsmm_idx q = fill[tile]++, at = q;
            if (seg) {
                if (last[tile] == r) {
                    at = -1; // the row's segment in this tile is open
                } else {
                    last[tile] = r;
                    at = sfill[tile]++;
                    t->beg[at] = q;
                }
            }
            if (at >= 0) {
                if (narrow) {
                    t->src32[at] = (int32_t)r;
                } else {
                    t->src[at] = r;
                }
            }
            t->dst[q] = (uint16_t)(c - tile * h);
            if (pat) continue;
            double v = S->type == DSMM_DOUBLE ? ((const double *)S->val)[p]
                                              : (double)((const float *)S->val)[p];
            if (type == DSMM_DOUBLE) {
                ((double *)t->val)[q] = v;
            } else {
                ((float *)t->val)[q] = (float)v;
            }
        }
    }
    *tiles = t;
    t = NULL;
cleanup:
    dsmm_spmm_tiles_destroy(&t);
    dsmmi_free(ctx, fill);
    dsmm_csr_destroy(&At);
    dsmm_csr_destroy(&Rt);
    return st;
}

// The instance for value type TY and index width CW (SPMM_PICK), on tile i's entries into its
// rows of C.
#if DSMMI_HAVE_WIDE
#define SEG_PICK(TY, CW)                                                                           \
    (wide ? (pat ? tile_##TY##CW##p_w_seg : tile_##TY##CW##_w_seg)                                 \
          : (pat ? tile_##TY##CW##p_seg : tile_##TY##CW##_seg))
#else
#define SEG_PICK(TY, CW) (pat ? tile_##TY##CW##p_seg : tile_##TY##CW##_seg)
#endif
#if DSMMI_HAVE_WIDE
#define ROWS_PICK(TY, CW)                                                                          \
    (wide ? (pat ? tile_##TY##CW##p_w_rows : tile_##TY##CW##_w_rows)                               \
          : (pat ? tile_##TY##CW##p_rows : tile_##TY##CW##_rows))
#else
#define ROWS_PICK(TY, CW) (pat ? tile_##TY##CW##p_rows : tile_##TY##CW##_rows)
#endif
#define TILE_RUN(TY, CW, SRC, T)                                                                   \
    if (tl->slice > 0) {                                                                           \
        for (dsmm_idx b = i * tl->nwin; b < (i + 1) * tl->nwin; b++)                               \
            slice_run(tl, a, tl->bptr[b], tl->bptr[b + 1], ct, ldt, fresh, fused);                 \
    } else if (tl->nruns > 0) {                                                                    \
        for (dsmm_idx b = i * tl->nwin; b < (i + 1) * tl->nwin; b++) ROWS_PICK(TY, CW)             \
        (tl->bptr[b], tl->bptr[b + 1], tl->rbeg, tl->SRC, tl->dst, (const T *)tl->val,             \
         (const T *)a->B, a->ldb, (T *)ct, ldt, a->k, (T)a->alpha, fresh, nt);                     \
    } else if (tl->nseg > 0) {                                                                     \
        SEG_PICK(TY, CW)                                                                           \
        (tl->sptr[i], tl->sptr[i + 1], tl->beg, tl->SRC, tl->dst, (const T *)tl->val,              \
         (const T *)a->B, a->ldb, (T *)ct, ldt, a->k, (T)a->alpha);                                \
    } else {                                                                                       \
        SPMM_PICK(TY, CW)                                                                          \
        (tl->ptr[i], tl->ptr[i + 1], tl->SRC, tl->dst, (const T *)tl->val, (const T *)a->B,        \
         a->ldb, (T *)ct, ldt, a->k, (T)a->alpha);                                                 \
    }

// k = 1 on the interleaved chunks (slice_runs): runs u0 .. u1 - 1 of a bucket, G at a time,
// each run's sum in its own lane, the chunk's step-i entries read together. Every lane adds
// its run's entries in order with the column-wise kernel's operation (alpha * a, then
// y += s * x: one multiply-add, or a multiply and an add for a pattern A), so the bits are
// the column-wise kernel's. SLICE_SCALAR: plain C (any CPU, any ldb, any k: tiles made for
// k = 1 serve any k, one column at a time); SLICE_512: AVX-512, k = 1, with
// B's column contiguous (ldb = 1), the step's values of B by one gather under the mask of the
// lanes still running.
#define SLICE_SCALAR(NAME, T, G, ATTR, PAT)                                                        \
    DSMMI_CLONES ATTR static void NAME(const dsmm_spmm_tiles *tl, dsmm_idx u0, dsmm_idx u1,        \
                                       const T *restrict B, dsmm_idx ldb, T *restrict C,           \
                                       dsmm_idx ldc, dsmm_idx k, T alpha, int fresh)               \
    {                                                                                              \
        const int32_t *src = tl->src32;                                                            \
        const T *av = tl->val;                                                                     \
        (void)av;                                                                                  \
        for (dsmm_idx g = u0; g < u1; g += (G)) {                                                  \
            int c0 = u1 - g < (G) ? (int)(u1 - g) : (G);                                           \
            dsmm_idx len[G];                                                                       \
            for (int l = 0; l < c0; l++) len[l] = tl->rbeg[g + l + 1] - tl->rbeg[g + l];           \
            for (dsmm_idx j = 0; j < k; j++) { /* tiles made for k = 1, used at any k */           \
                T acc[G];                                                                          \
                for (int l = 0; l < c0; l++)                                                       \
                    acc[l] = fresh ? (T)0 : C[(dsmm_idx)tl->dst[g + l] * ldc + j];                 \
                dsmm_idx q = tl->rbeg[g];                                                          \
                int c = c0;                                                                        \
                for (dsmm_idx i = 0; c > 0; i++) {                                                 \
                    while (c > 0 && len[c - 1] <= i) c--;                                          \
                    DSMMI_LOOP_SCALAR for (int l = 0; l < c; l++, q++)                             \
                    {                                                                              \
                        T sv = PAT ? alpha : alpha * av[q];                                        \
                        acc[l] += sv * B[(dsmm_idx)src[q] * ldb + j];                              \
                    }                                                                              \
                }                                                                                  \
                for (int l = 0; l < c0; l++) C[(dsmm_idx)tl->dst[g + l] * ldc + j] = acc[l];       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
SLICE_SCALAR(slice_d, double, 8, DSMMI_NO_VECTORIZE, 0);
SLICE_SCALAR(slice_f, float, 16, DSMMI_NO_VECTORIZE, 0);
SLICE_SCALAR(slice_dp, double, 8, DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE, 1);
SLICE_SCALAR(slice_fp, float, 16, DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE, 1);
#undef SLICE_SCALAR

/* Whether this file's plain C (the clone the CPU runs, as the column-wise kernel's) fuses
 * a * b + c into one multiply-add: with -ffp-contract=fast GCC does where the target has FMA
 * and it optimises at -O2, not in a debug build. The AVX-512 chunk kernel spells its
 * operations out, so it follows this answer to keep the column-wise kernel's bits. */
DSMMI_CLONES static double contract_probe(const volatile double *v)
{
    double a = v[0], b = v[1], c = v[2];
    return a * b + c;
}

static int plain_c_fuses(void)
{
    // (1 + 2^-30)^2 - (1 + 2^-29) is 2^-60 exactly when fused, 0 when the product is rounded
    static const volatile double v[3] = {1.0 + 0x1p-30, 1.0 + 0x1p-30, -(1.0 + 0x1p-29)};
    return contract_probe(v) != 0.0;
}

#if DSMMI_HAVE_WIDE
#include <immintrin.h>
// VT: the vector of G lanes; MT its mask; IDX(m, p) the step's rows of B, VAL(m, p) its values,
// GATH(m, idx) B at those rows, MUL/FMA3/MADD the masked arithmetic (lanes off keep their sum).
#define SLICE_512(NAME, T, G, VT, MT, IDX, VAL, GATH, SET1, MUL, FMA3, MADD, PAT)                  \
    DSMMI_WIDE static void NAME(const dsmm_spmm_tiles *tl, dsmm_idx u0, dsmm_idx u1,               \
                                const T *restrict B, T *restrict C, dsmm_idx ldc, T alpha,         \
                                int fresh, int fused)                                              \
    {                                                                                              \
        const int32_t *src = tl->src32;                                                            \
        const T *av = tl->val;                                                                     \
        (void)av;                                                                                  \
        const VT va = SET1(alpha);                                                                 \
        const int one = alpha == (T)1;                                                             \
        for (dsmm_idx g = u0; g < u1; g += (G)) {                                                  \
            int c = u1 - g < (G) ? (int)(u1 - g) : (G), c0 = c;                                    \
            T init[G];                                                                             \
            dsmm_idx len[G];                                                                       \
            for (int l = 0; l < (G); l++) {                                                        \
                len[l] = l < c ? tl->rbeg[g + l + 1] - tl->rbeg[g + l] : 0;                        \
                init[l] = fresh || l >= c ? (T)0 : C[(dsmm_idx)tl->dst[g + l] * ldc];              \
            }                                                                                      \
            VT acc;                                                                                \
            memcpy(&acc, init, sizeof acc);                                                        \
            dsmm_idx q = tl->rbeg[g];                                                              \
            for (dsmm_idx i = 0;; i++) {                                                           \
                while (c > 0 && len[c - 1] <= i) c--;                                              \
                if (c == 0) break;                                                                 \
                MT m = (MT)((1u << c) - 1u);                                                       \
                VT x = GATH(m, IDX(m, src + q));                                                   \
                if (PAT) {                                                                         \
                    acc = MADD(acc, m, acc, MUL(va, x));                                           \
                } else {                                                                           \
                    VT v = VAL(m, av + q);                                                         \
                    VT s = one ? v : MUL(va, v);                                                   \
                    acc = fused ? FMA3(s, x, acc, m) : MADD(acc, m, acc, MUL(s, x));               \
                }                                                                                  \
                q += c;                                                                            \
            }                                                                                      \
            memcpy(init, &acc, sizeof acc);                                                        \
            for (int l = 0; l < c0; l++) C[(dsmm_idx)tl->dst[g + l] * ldc] = init[l];              \
        }                                                                                          \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
#define S_IDX8(m, p)  _mm256_maskz_loadu_epi32(m, p)
#define S_IDX16(m, p) _mm512_maskz_loadu_epi32(m, p)
#define S_VALD(m, p)  _mm512_maskz_loadu_pd(m, p)
#define S_VALF(m, p)  _mm512_maskz_loadu_ps(m, p)
#define S_GD(m, idx)  _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, idx, B, 8)
#define S_GF(m, idx)  _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, B, 4)
SLICE_512(slice_d_512, double, 8, __m512d, __mmask8, S_IDX8, S_VALD, S_GD, _mm512_set1_pd,
          _mm512_mul_pd, _mm512_mask3_fmadd_pd, _mm512_mask_add_pd, 0);
SLICE_512(slice_f_512, float, 16, __m512, __mmask16, S_IDX16, S_VALF, S_GF, _mm512_set1_ps,
          _mm512_mul_ps, _mm512_mask3_fmadd_ps, _mm512_mask_add_ps, 0);
SLICE_512(slice_dp_512, double, 8, __m512d, __mmask8, S_IDX8, S_VALD, S_GD, _mm512_set1_pd,
          _mm512_mul_pd, _mm512_mask3_fmadd_pd, _mm512_mask_add_pd, 1);
SLICE_512(slice_fp_512, float, 16, __m512, __mmask16, S_IDX16, S_VALF, S_GF, _mm512_set1_ps,
          _mm512_mul_ps, _mm512_mask3_fmadd_ps, _mm512_mask_add_ps, 1);
#undef SLICE_512
#endif

/* Runs u0 .. u1 - 1 (one bucket) of sliced tiles at k = 1 into the tile at C. */
static void slice_run(const dsmm_spmm_tiles *tl, const dsmmi_spmm_args *a, dsmm_idx u0, dsmm_idx u1,
                      void *C, dsmm_idx ldc, int fresh, int fused)
{
    (void)fused;
    int pat = tl->type == DSMM_PATTERN, dbl = a->type == DSMM_DOUBLE;
#if DSMMI_HAVE_WIDE
    if (a->k == 1 && a->ldb == 1 && dsmmi_spmm_tune.vec_bytes >= 64 &&
        __builtin_cpu_supports("x86-64-v4")) {
        if (dbl) {
            (pat ? slice_dp_512 : slice_d_512)(tl, u0, u1, a->B, C, ldc, a->alpha, fresh, fused);
        } else {
            (pat ? slice_fp_512 : slice_f_512)(tl, u0, u1, a->B, C, ldc, (float)a->alpha, fresh,
                                               fused);
        }
        return;
    }
#endif
    if (dbl) {
        (pat ? slice_dp : slice_d)(tl, u0, u1, a->B, a->ldb, C, ldc, a->k, a->alpha, fresh);
    } else {
        (pat ? slice_fp : slice_f)(tl, u0, u1, a->B, a->ldb, C, ldc, a->k, (float)a->alpha, fresh);
    }
}

/* Rows [r0, r1) of C (ldc) into buf (ldb = k), times beta: what the tile starts from. */
static void tile_load(const dsmmi_spmm_args *a, void *buf, dsmm_idx r0, dsmm_idx r1)
{
    size_t w = dsmmi_type_size(a->type), row = (size_t)a->k * w;
    if (a->beta == 0.0) {
        memset(buf, 0, (size_t)(r1 - r0) * row);
        return;
    }
    for (dsmm_idx i = r0; i < r1; i++)
        memcpy((char *)buf + (size_t)(i - r0) * row, (const char *)a->C + (size_t)(i * a->ldc) * w,
               row);
    dsmmi_spmm_scale_rows(buf, a->type, a->k, 0, r1 - r0, a->k, a->beta);
}

/* buf's rows (ldb = k) written to rows [r0, r1) of C with streaming stores (unfenced: the
 * thread fences once after its last tile). */
static void tile_store(const dsmmi_spmm_args *a, const void *buf, dsmm_idx r0, dsmm_idx r1)
{
    size_t w = dsmmi_type_size(a->type), row = (size_t)a->k * w;
    if (a->ldc == a->k) {
        dsmmi_stream_copy_unfenced((char *)a->C + (size_t)(r0 * a->ldc) * w, buf,
                                   (size_t)(r1 - r0) * row);
        return;
    }
    for (dsmm_idx i = r0; i < r1; i++)
        dsmmi_stream_copy_unfenced((char *)a->C + (size_t)(i * a->ldc) * w,
                                   (const char *)buf + (size_t)(i - r0) * row, row);
}

/* The rows of tile i (h rows at ct, ldc) that no run of it writes, set to 0. Called with one
   window, where a row has at most one run a tile: h runs leave no row idle. Otherwise the
   runs' rows are marked in a bitmap and the idle ones found a word at a time. A test of every
   row's bit, done whatever the runs, took a third of fe_4elt2's k = 1 product (2026-11-29). */
static void clear_idle_rows(const dsmm_spmm_tiles *tl, dsmm_idx i, void *ct, dsmm_idx ldc,
                            dsmm_idx h, dsmm_idx k, size_t w)
{
    if (tl->bptr[i + 1] - tl->bptr[i] >= h) return;
    uint64_t seen[TILE_HEIGHT_MAX / 64];
    size_t words = (size_t)(h + 63) / 64;
    memset(seen, 0, words * sizeof *seen);
    for (dsmm_idx u = tl->bptr[i]; u < tl->bptr[i + 1]; u++)
        seen[tl->dst[u] / 64] |= (uint64_t)1 << (tl->dst[u] % 64);
    if (h % 64) seen[words - 1] |= ~(uint64_t)0 << (h % 64); // rows past h count as seen
    // Consecutive idle rows are cleared by one memset when C's rows are back to back (ldc = k),
    // not a call a row. p2p-Gnutella08's C has 3,836 rows of 6,301 without an entry: at k = 1
    // double (8-byte rows) the product took 0.030 ms against 0.034 with a call a row (median of
    // 8 alternated runs); at k = 8 and 64 float no difference was measured.
    dsmm_idx p0 = 0, p1 = 0; // the idle rows [p0, p1) not cleared yet
    for (size_t wd = 0; wd < words; wd++) {
        for (uint64_t idle = ~seen[wd]; idle; idle &= idle - 1) {
            dsmm_idx r = (dsmm_idx)(wd * 64) + __builtin_ctzll(idle);
            if (r != p1 || ldc != k) {
                if (p1 > p0)
                    memset((char *)ct + (size_t)(p0 * ldc) * w, 0, (size_t)(p1 - p0) * k * w);
                p0 = r;
            }
            p1 = r + 1;
        }
    }
    if (p1 > p0) memset((char *)ct + (size_t)(p0 * ldc) * w, 0, (size_t)(p1 - p0) * k * w);
}

dsmm_status dsmmi_spmm_col_tiles(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    dsmm_status st = DSMM_OK;
    const dsmm_spmm_tiles *tl = a->tiles;
    int threads = dsmmi_spmm_threads(ctx, a);
    if ((dsmm_idx)threads > tl->ntiles) threads = tl->ntiles < 1 ? 1 : (int)tl->ntiles;
    info->threads = threads;
    info->workspace_bytes = 0;
    int pat = tl->type == DSMM_PATTERN, narrow = tl->src32 != NULL;
    // A C of row_stream_min bytes or more (8 MiB) with rows of col_tile_stream_row (1 KiB) or
    // more is written with streaming stores, as the row-wise kernel writes it: each tile is
    // built in a thread's buffer (C's rows read once when beta != 0, never when 0) and streamed
    // out, so C's lines are not read for ownership and written back. Measured a gain at k =
    // 128 and 256 doubles, a loss at 64 (docs/kernels.md, "Column-wise on tiles").
    size_t w = dsmmi_type_size(a->type);
    double cbytes = (double)a->m * (double)a->k * (double)w;
    size_t tbytes = ((size_t)tl->height * (size_t)a->k * w + 63) / 64 * 64;
    void *bufs = NULL;
    // Rows layout, one window, beta = 0: each row of C has at most one run a tile, which starts
    // from +0 (what the clear would have left) and writes the row once; rows without a run
    // are cleared alone. Such rows go straight to C with streaming stores where the row-wise
    // kernel streams (C of row_stream_min bytes or more, 16-byte aligned rows): no buffer.
    int fresh = tl->nruns > 0 && tl->nwin == 1 && a->beta == 0.0;
    int fused = tl->slice > 0 && plain_c_fuses();
    int nt = fresh && tl->slice == 0 && DSMMI_HAVE_STREAM && dsmmi_spmm_tune.col_tile_stream &&
             dsmmi_spmm_tune.row_stream_min > 0 &&
             cbytes >= (double)dsmmi_spmm_tune.row_stream_min && (uintptr_t)a->C % 16 == 0 &&
             (size_t)a->ldc * w % 16 == 0;
    if (!nt && DSMMI_HAVE_STREAM && dsmmi_spmm_tune.col_tile_stream &&
        dsmmi_spmm_tune.row_stream_min > 0 && cbytes >= (double)dsmmi_spmm_tune.row_stream_min &&
        (double)a->k * (double)w >= dsmmi_spmm_tune.col_tile_stream_row) {
        bufs = dsmmi_malloc(ctx, (size_t)threads, tbytes);
        DSMM_CHECK(ctx, bufs != NULL, DSMM_ERR_NOMEM,
                   "spmm tiles: no memory for %d tile buffers of %zu bytes", threads, tbytes);
        info->workspace_bytes = (size_t)threads * tbytes;
    }
    // The buffers' rows hold k values back to back: the 64-byte vectors where those rows allow.
    dsmmi_spmm_args into = *a;
    if (bufs) {
        into.C = bufs;
        into.ldc = a->k;
    }
    int wide = dsmmi_spmm_wide(&into, 64);
    (void)wide;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
        for (dsmm_idx i = 0; i < tl->ntiles; i++) {
            dsmm_idx r0 = i * tl->height, r1 = r0 + tl->height < a->m ? r0 + tl->height : a->m;
            void *ct;
            dsmm_idx ldt;
            if (bufs) {
                int t = 0;
#ifdef _OPENMP
                t = omp_get_thread_num();
#endif
                ct = (char *)bufs + (size_t)t * tbytes;
                ldt = a->k;
                if (!fresh) tile_load(a, ct, r0, r1);
            } else {
                ct = (char *)a->C + (size_t)(r0 * a->ldc) * w;
                ldt = a->ldc;
                if (!fresh) dsmmi_spmm_scale_rows(a->C, a->type, a->ldc, r0, r1, a->k, a->beta);
            }
            if (fresh) clear_idle_rows(tl, i, ct, ldt, r1 - r0, a->k, w);
            if (a->type == DSMM_DOUBLE) {
                if (narrow) {
                    TILE_RUN(d, 32, src32, double);
                } else {
                    TILE_RUN(d, 64, src, double);
                }
            } else {
                if (narrow) {
                    TILE_RUN(f, 32, src32, float);
                } else {
                    TILE_RUN(f, 64, src, float);
                }
            }
            if (bufs) tile_store(a, ct, r0, r1);
        }
        if (bufs || nt) dsmmi_stream_fence(); // this thread's streamed rows, before the region ends
    }
cleanup:
    dsmmi_free(ctx, bufs);
    return st;
}
