// src/gpu/gpu.h: the C-callable gateway to the CUDA backend; other layers see only this.
// Host-side logic (pool, staging, row bins, the AUTO decision) is plain C and built in every
// configuration, so CI tests it without a GPU; the .cu files hold the device code.
#ifndef DSMM_GPU_H
#define DSMM_GPU_H

#include "kernels/kernels.h"

/* dsmmi_gpu_device_count: CUDA devices visible (0 without CUDA or without a device). */
int dsmmi_gpu_device_count(void);
/* dsmmi_gpu_describe: "NVIDIA H100 80GB HBM3, 79 GiB, sm_90" or a reason there is none. */
void dsmmi_gpu_describe(char *buf, size_t len);

/* ------------------------------------------------------------------------------------------ */
/* Device memory pool (pool.c): one allocation made up front, carved into aligned blocks       */
/* ------------------------------------------------------------------------------------------ */

/* First fit over a list of blocks kept in address order; freeing merges a block with free
 * neighbours, so the list stays short (blocks in use + 1 in steady state). The out-of-core
 * paper (§IV.B) gives the reason for a pool: cudaMalloc/cudaFree synchronise the device and
 * serialise the streams. The pool never touches the memory: base may be a device pointer or,
 * in tests, a host array. Not thread-safe: one host thread drives a context's device. */
typedef struct dsmmi_dpool_block {
    size_t off, size;
    int used;
} dsmmi_dpool_block;

typedef struct dsmmi_dpool {
    char *base;
    size_t size;  // bytes managed
    size_t align; // every block starts at a multiple of this (a power of two)
    dsmmi_dpool_block *blk;
    int nblk, capblk;
    size_t in_use, peak; // bytes in used blocks (rounded to align), and their maximum
    size_t peak_mark;    // in_use when dsmmi_dpool_peak_reset last ran (peaks per product)
    size_t local_peak;   // maximum of in_use since that reset
} dsmmi_dpool;

/* dsmmi_dpool_init: manages [base, base + size) in blocks aligned to align (0: 256 bytes, the
 * CUDA allocation granule for coalesced access). The block list is host memory from ctx.
 * Errors: DSMM_ERR_ARG (align not a power of two, base misaligned); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_dpool_init(dsmm_ctx *ctx, dsmmi_dpool *p, void *base, size_t size, size_t align);
/* dsmmi_dpool_destroy: frees the block list (not base). */
void dsmmi_dpool_destroy(dsmm_ctx *ctx, dsmmi_dpool *p);
/* dsmmi_dpool_alloc: *out = an aligned block of at least bytes (bytes 0 gives a NULL block
 * that dsmmi_dpool_free accepts). what names the buffer in the error message.
 * Errors: DSMM_ERR_NOMEM "device pool: <what> needs X MiB but the largest free block is
 * Y MiB of Z MiB free (pool W MiB)"; DSMM_ERR_NOMEM for the host block list. */
dsmm_status dsmmi_dpool_alloc(dsmm_ctx *ctx, dsmmi_dpool *p, size_t bytes, const char *what,
                              void **out);
/* dsmmi_dpool_free: returns the block that starts at ptr (NULL: nothing); returns NULL so
 * callers write x_d = dsmmi_dpool_free(pool, x_d). A pointer the pool did not give is ignored
 * and reported by dsmmi_dpool_check. */
void *dsmmi_dpool_free(dsmmi_dpool *p, void *ptr);
/* dsmmi_dpool_largest_free: the largest block an allocation could get now. */
size_t dsmmi_dpool_largest_free(const dsmmi_dpool *p);
/* dsmmi_dpool_peak_reset: starts a new local peak (dsmm_spgemm_info.device_bytes). */
void dsmmi_dpool_peak_reset(dsmmi_dpool *p);
/* dsmmi_dpool_check: 1 when the list covers [0, size) in order with no gaps, no two free
 * neighbours, aligned offsets, and in_use equals the used blocks' sum (tests). */
int dsmmi_dpool_check(const dsmmi_dpool *p);

/* ------------------------------------------------------------------------------------------ */
/* Staged copies (stage.c): host <-> device through two pinned buffers, double-buffered       */
/* ------------------------------------------------------------------------------------------ */

/* A transfer of n elements runs in pieces of at most `cap` elements. Upload: piece i is
 * produced by `pack` on the host into buffer i % 2 (which may convert types: 64-bit columns
 * to 32-bit, float values to double), then `copy` starts its asynchronous transfer and
 * `record` marks its completion; before buffer b is packed again, `wait` blocks on its last
 * mark (also when that mark came from an earlier call, so uploads may follow each other
 * without a synchronisation). So packing piece i + 1 overlaps the transfer of piece i. Download:
 * `copy` starts piece i into buffer i % 2 and `record` marks it; then piece i - 1 is waited for and
 * unpacked by `unpack`, overlapping the transfer of piece i. The device side (the .cu
 * file) or a test's fake supplies the operations; this loop is what the tests check. */
typedef struct dsmmi_stage_ops {
    void *user;
    void *buf[2];     // pinned host buffers, cap * elem_bytes bytes each
    size_t buf_bytes; // size of each
    // Device side: start the asynchronous copy of n elements (elem_bytes each) between
    // buf[b] and the device at element offset off; mark buffer b; wait for b's mark.
    dsmm_status (*copy)(void *user, int up, int b, size_t off, size_t n, size_t elem_bytes);
    dsmm_status (*record)(void *user, int b);
    dsmm_status (*wait)(void *user, int b);
} dsmmi_stage_ops;

/* pack: writes elements [off, off + n) of the source, converted, into dst (a staging buffer).
 * unpack: reads n elements from src (a staging buffer) into the destination at off. */
typedef void (*dsmmi_stage_pack_fn)(void *arg, void *dst, size_t off, size_t n);
typedef void (*dsmmi_stage_unpack_fn)(void *arg, const void *src, size_t off, size_t n);

/* dsmmi_stage_up / dsmmi_stage_down: move n elements of elem_bytes (their size on the device
 * and in the staging buffer) through the two buffers. On return every piece's copy has been
 * started (upload: the caller synchronises the stream before freeing its source) or, for a
 * download, finished and unpacked. pieces (may be NULL) counts the pieces.
 * Errors: whatever an operation returns; DSMM_ERR_ARG when a buffer cannot hold one element. */
dsmm_status dsmmi_stage_up(dsmm_ctx *ctx, const dsmmi_stage_ops *ops, size_t n, size_t elem_bytes,
                           dsmmi_stage_pack_fn pack, void *arg, size_t *pieces);
dsmm_status dsmmi_stage_down(dsmm_ctx *ctx, const dsmmi_stage_ops *ops, size_t n, size_t elem_bytes,
                             dsmmi_stage_unpack_fn unpack, void *arg, size_t *pieces);

/* ------------------------------------------------------------------------------------------ */
/* Row bins of the SpGEMM kernel (plan.c)                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Rows go to bins by u = min(flops, ncols(B)), an upper bound of their nnz (nsparse/spECK):
 * bin 0 holds rows with u == 0 (nothing to compute); bins 1..DSMMI_GPU_SHARED_BINS hold rows
 * whose hash table of size 2^(5 + bin) fits in shared memory with a load of at most 1/2
 * (u <= 2^(4 + bin)), so tables of 64 .. 8192 entries; the last bin holds larger rows, each
 * with a table of its own in device memory (dsmmi_gpu_global_table). */
#define DSMMI_GPU_SHARED_BINS 8
#define DSMMI_GPU_NBINS       (DSMMI_GPU_SHARED_BINS + 2)
#define DSMMI_GPU_GLOBAL_BIN  (DSMMI_GPU_NBINS - 1)

/* Table size (entries) of a shared bin; threads per row and rows per block of its kernels. */
static inline int dsmmi_gpu_bin_table(int bin)
{
    return 1 << (5 + bin);
}
static inline int dsmmi_gpu_bin_group(int bin)
{
    // a warp per row up to 512 entries (several rows per block), then a block per row
    return bin <= 4 ? 32 : bin == 5 ? 128 : bin == 6 ? 256 : 512;
}

/* What the host and the device both compute (the bins are made on either side and must agree):
 * inline functions marked for both under nvcc, and the count of leading zeros of each. */
#ifdef __CUDACC__
#define DSMMI_GPU_HD __host__ __device__
#else
#define DSMMI_GPU_HD
#endif
#ifdef __CUDA_ARCH__
#define DSMMI_GPU_CLZLL(x) __clzll((long long)(x))
#else
#define DSMMI_GPU_CLZLL(x) __builtin_clzll(x)
#endif

/* ceil(log2 u) for u >= 1, without a loop. */
static inline DSMMI_GPU_HD int dsmmi_gpu_ceil_log2(dsmm_idx u)
{
    return u == 1 ? 0 : 64 - DSMMI_GPU_CLZLL((unsigned long long)(u - 1));
}

static inline DSMMI_GPU_HD int dsmmi_gpu_bin_of(dsmm_idx flops, dsmm_idx ncols)
{
    dsmm_idx u = flops < ncols ? flops : ncols;
    if (u <= 0) return 0;
    // the least b >= 1 with u <= 2^(4 + b)
    int lg = dsmmi_gpu_ceil_log2(u);
    int b = lg <= 5 ? 1 : lg - 4;
    return b <= DSMMI_GPU_SHARED_BINS ? b : DSMMI_GPU_GLOBAL_BIN;
}

/* Entries of a global-bin row's own table: the power of two >= 2u (a hash table, load at most
 * 1/2), or ncols when that power is ncols or more: then the table is dense, slot c holding
 * column c, which needs no probing, keeps the products of one row of B on neighbouring slots
 * and reads out in column order, so the row needs no sort. A row's table is dense exactly
 * when its size equals ncols (a hash table is then always smaller). */
static inline DSMMI_GPU_HD dsmm_idx dsmmi_gpu_global_table(dsmm_idx flops, dsmm_idx ncols)
{
    dsmm_idx u = flops < ncols ? flops : ncols;
    if (u <= 0) return 1 >= ncols ? ncols : 1;
    // the least power of two >= 2u is 2^(ceil(log2 u) + 1); past 2^62 it is above any ncols
    int lg = dsmmi_gpu_ceil_log2(u);
    if (lg + 1 >= 63) return ncols;
    dsmm_idx t = (dsmm_idx)1 << (lg + 1);
    return t >= ncols ? ncols : t; // a dense table is no larger than the hash table: take it
}

/* Products (flops) one thread block takes of a global row: a row of f flops is spread over
 * ceil(f / DSMMI_GPU_GLOBAL_BLOCK_FLOPS) blocks that share its table, so one hub row does not
 * leave a single multiprocessor working while the others idle. */
#define DSMMI_GPU_GLOBAL_BLOCK_FLOPS 32768
static inline DSMMI_GPU_HD dsmm_idx dsmmi_gpu_global_blocks(dsmm_idx flops)
{
    return (flops + DSMMI_GPU_GLOBAL_BLOCK_FLOPS - 1) / DSMMI_GPU_GLOBAL_BLOCK_FLOPS;
}

/* The rows of one product sorted into bins: rows[start[b] .. start[b + 1]) are bin b's rows
 * in increasing order; the global bin also gets each row's table offset (prefix sums of
 * dsmmi_gpu_global_table, in entries) and its first thread block (prefix sums of the blocks
 * per row). Made on the host (dsmmi_gpu_bins_make) or on the device (spgemm.cu), which keeps
 * the row list there (rows NULL on the host) and brings back the counts and the global rows'
 * offsets, which the host needs to launch the kernels. */
typedef struct dsmmi_gpu_bins {
    dsmm_idx count[DSMMI_GPU_NBINS];
    dsmm_idx start[DSMMI_GPU_NBINS + 1];
    int32_t *rows;        // nrows entries
    dsmm_idx *gtab_off;   // count[GLOBAL] + 1 entries: table offsets of the global rows
    dsmm_idx *gblk_off;   // count[GLOBAL] + 1 entries: first block of each global row
    dsmm_idx max_flops;   // the largest row's flops
    dsmm_idx total_flops; // sum over rows
} dsmmi_gpu_bins;

/* dsmmi_gpu_bins_make: bins of the rows whose flops are given (nrows < 2^31).
 * Errors: DSMM_ERR_ARG (nrows too large for 32-bit row ids); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_gpu_bins_make(dsmm_ctx *ctx, const dsmm_idx *flops, dsmm_idx nrows,
                                dsmm_idx ncols, dsmmi_gpu_bins *out);
void dsmmi_gpu_bins_free(dsmm_ctx *ctx, dsmmi_gpu_bins *b);

/* dsmmi_gpu_bins_device: the bins of A * B made on ctx's device as the SpGEMM makes them
 * (spgemm.cu: row flops by a kernel, the rows sorted by bin with CUB's stable radix sort, the
 * global rows' offsets by device scans), then downloaded whole, rows included: the same arrays
 * as dsmmi_gpu_bins_make from the host's row flops (the tests compare them).
 * Errors: DSMM_ERR_UNSUPPORTED (no device on ctx, or no CUDA); DSMM_ERR_ARG (2^31 rows or
 * columns or more); DSMM_ERR_NOMEM (host or pool); DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_bins_device(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                                  dsmmi_gpu_bins *out);

/* dsmmi_gpu_global_batches: splits the global rows [0, n) into batches whose tables fit in
 * max_entries (a row larger than that gets a batch of its own and fails later if it does not
 * fit the pool); bounds[0..*nb] with bounds[0] = 0, bounds[*nb] = n. bounds needs n + 1
 * entries. */
void dsmmi_gpu_global_batches(const dsmm_idx *gtab_off, dsmm_idx n, dsmm_idx max_entries,
                              dsmm_idx *bounds, dsmm_idx *nb);

/* ------------------------------------------------------------------------------------------ */
/* SpMM variant and the AUTO decision (plan.c)                                                */
/* ------------------------------------------------------------------------------------------ */

/* The SpMM kernel variant for A (m rows, nnz entries) and k columns: 1 (split rows) when the
 * longest row holds more than 8 times the mean row length plus 64 entries, so a warp per row
 * would leave most warps idle behind a few long rows; else 0 (row-split). */
int dsmmi_gpu_spmm_variant(const dsmm_csr *A);

/* Split rows: the row-split kernel takes the first `cap` entries of every row and writes C;
 * each further `cap` entries of a longer row are an item of their own (row, first entry),
 * whose sums a second kernel adds into C with atomics. The cap (dsmmi_gpu_spmm_cap) gives
 * about four waves of work groups on the device, within [16, 256] entries: small matrices
 * with long rows get short items (parallelism), large ones long items (fewer atomics). */
dsmm_idx dsmmi_gpu_spmm_cap(dsmm_idx nnz, int lanes, int sm_count);
typedef struct dsmmi_gpu_spmm_segs {
    dsmm_idx n;      // items
    int32_t *row;    // row of each item
    dsmm_idx *begin; // first entry (index into A's entries) of each item
} dsmmi_gpu_spmm_segs;

/* The items of A for a cap of `cap` entries, in row order (NULL arrays when n == 0). */
dsmm_status dsmmi_gpu_spmm_segs_make(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx cap,
                                     dsmmi_gpu_spmm_segs *out);
void dsmmi_gpu_spmm_segs_free(dsmm_ctx *ctx, dsmmi_gpu_spmm_segs *s);

/* Lanes that share one row in the row-split SpMM kernel: k <= 8 -> 8, <= 16 -> 16, else 32
 * (a warp); each lane then handles columns lane, lane + lanes, ... (4 at a time when k is a
 * multiple of 4 and vectorised loads are possible). */
static inline int dsmmi_gpu_spmm_lanes(dsmm_idx k)
{
    return k <= 8 ? 8 : k <= 16 ? 16 : 32;
}

/* Entries whose B loads a lane of the SpMM kernel keeps in flight, for `groups` vector groups
 * per row of B (k / VEC: 16-byte vectors where k allows, else single values):
 * dsmm_gpu_opts.spmm_unroll when it is 1 or 4; by default (0) 4 while a lane holds at most one
 * group, 1 when it holds several. Measured on an H200 (2026-11-28, float, 15 matrices, against
 * cuSPARSE): 4 beat 1 at k = 32 and 128 (one group a lane; geomean 1.53-1.61x against 1.40x and
 * 0.93-1.00x against 0.83x) and lost at k = 256 (two groups a lane: 0.99-1.03x against 1.07x);
 * docs/gpu.md ("Loads in flight"). */
static inline int dsmmi_gpu_spmm_unroll(int opt, dsmm_idx groups)
{
    if (opt == 1 || opt == 4) return opt;
    return groups <= dsmmi_gpu_spmm_lanes(groups) ? 4 : 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Products kept on the device (resident.cu): dsmm_dist_opts.gpu_resident                    */
/* ------------------------------------------------------------------------------------------ */

/* When the accumulator merges (sum_tree.c, plain C): a fixed binary tree over nslots slots.
 * Leaf s is slot s; a node is complete when every slot under it is filled (with a sum) or
 * skipped, and two complete siblings become their parent, their sums merged when both hold
 * one. In slot order that is HipMCL-GPU §IV's binary schedule (about log2(nslots) sums held);
 * in any order the same pairs are merged, so the sum does not depend on the order the
 * products arrive in. A sum is kept where its first product was put: the caller's storage is
 * indexed by slot. Per node, by its first slot: level (-1: no node starts there), at (the
 * slot whose storage holds its sum), has (it holds one). */
typedef struct dsmmi_sum_tree {
    int n;
    int *level, *at;
    unsigned char *has, *filled;
} dsmmi_sum_tree;

/* dsmmi_sum_tree_init: every slot pending. Errors: DSMM_ERR_ARG (nslots < 0); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_sum_tree_init(dsmm_ctx *ctx, dsmmi_sum_tree *t, int nslots);
void dsmmi_sum_tree_free(dsmm_ctx *ctx, dsmmi_sum_tree *t);
/* dsmmi_sum_tree_put: slot is filled, with a sum (has) or skipped (an empty stage). pairs
 * (room for DSMMI_SUM_TREE_MAX_PAIRS) gets the merges to make now, in order: the sum stored
 * at slot pairs[i][1] merged into the one at pairs[i][0] (the nearest held sum before it),
 * *npairs of them. Errors: DSMM_ERR_INTERNAL (slot out of range or filled twice). */
enum { DSMMI_SUM_TREE_MAX_PAIRS = 32 };
dsmm_status dsmmi_sum_tree_put(dsmm_ctx *ctx, dsmmi_sum_tree *t, int slot, int has, int pairs[][2],
                               int *npairs);
/* dsmmi_sum_tree_held: the slots storing the sums held, in slot order, into first (room for
 * n); returns how many. At most one once every slot is filled. */
int dsmmi_sum_tree_held(const dsmmi_sum_tree *t, int *first);

/* An accumulator of nrows x ncols products on ctx's device: each product stays in the pool
 * and is merged there (the semiring's add over equal (row, column) keys: a radix sort of the
 * entries by row * ncols + column, then a reduction by key), two sums at a time as the sum
 * tree over its slots says; finishing merges what is left and downloads C's tile once. */
typedef struct dsmmi_gpu_acc dsmmi_gpu_acc;

/* dsmmi_gpu_acc_create: an empty accumulator of nslots slots (SUMMA's stages; a one-sided
 * algorithm's items of the tile) under semiring sr.
 * Errors: DSMM_ERR_UNSUPPORTED (no device on ctx, or no CUDA); DSMM_ERR_ARG (ncols beyond the
 * device's 32-bit columns); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_gpu_acc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_semiring sr,
                                 int nslots, dsmmi_gpu_acc **out);
/* dsmmi_gpu_acc_multiply: A * B on the device (A nrows x m, B m x ncols, 64-bit row pointers
 * from 0 and 32-bit columns, as a SUMMA piece's view), the product put in slot. a_dev / b_dev
 * say the operand's arrays are device memory (received by a CUDA-aware MPI: used where they
 * are, float or pattern values widened on the device); else they are uploaded. info as a
 * local product's (flops, nnz of the product, device and copy seconds, on_gpu 1).
 * Errors: DSMM_ERR_DIM; DSMM_ERR_NOMEM (pool or host); DSMM_ERR_CUDA; DSMM_ERR_INTERNAL (slot
 * out of range or filled before). */
dsmm_status dsmmi_gpu_acc_multiply(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot, const dsmm_csr *A,
                                   int a_dev, const dsmm_csr *B, int b_dev, dsmm_spgemm_info *info);
/* dsmmi_gpu_acc_add: P (host, nrows x ncols, any column width and value type) uploaded and
 * put in slot, as a product made on the host (a partial fetched from another rank).
 * Errors: as dsmmi_gpu_acc_multiply. */
dsmm_status dsmmi_gpu_acc_add(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot, const dsmm_csr *P);
/* dsmmi_gpu_acc_skip: slot has no product (an empty stage); its neighbours may merge now.
 * Errors: DSMM_ERR_INTERNAL (slot out of range or filled before); those of a merge. */
dsmm_status dsmmi_gpu_acc_skip(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot);
/* dsmmi_gpu_acc_finish: the sum of everything added, as a new host CSR (rows sorted, values
 * of type, col_bits-wide columns): one download. Slots never filled are empty; the sums still
 * held then are merged at once, in slot order. acc holds nothing afterwards. merges and
 * merge_seconds (either may be NULL) get the merges made since acc was created and their
 * device time (events). Errors: DSMM_ERR_NOMEM; DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_acc_finish(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, dsmm_type type, int col_bits,
                                 dsmm_csr **C, int *merges, double *merge_seconds);
/* dsmmi_gpu_acc_merge_seconds: the device seconds (events) of the merges acc has made so far
 * (0 for NULL): a caller tells a multiply's time from the merges it set off. */
double dsmmi_gpu_acc_merge_seconds(const dsmmi_gpu_acc *acc);
/* dsmmi_gpu_acc_free: frees acc and every product it holds (*acc NULL afterwards). */
void dsmmi_gpu_acc_free(dsmm_ctx *ctx, dsmmi_gpu_acc **acc);

/* The distributed SpMM's resident C tile (spmm.cu): a dense nrows x k tile (FLOAT or DOUBLE,
 * packed, ld = k) on ctx's device, zero at first, into which each stage's or item's product
 * A * B is added where it is made (the row-split kernels with beta = 1) and each partial made
 * elsewhere is added after one upload; finishing downloads it once. Without it every product
 * uploads C's tile and downloads it again (beta = 1 through the local SpMM). */
typedef struct dsmmi_gpu_dacc dsmmi_gpu_dacc;

/* dsmmi_gpu_dacc_create: a zero tile. Errors: DSMM_ERR_UNSUPPORTED (no device on ctx, or no
 * CUDA); DSMM_ERR_ARG (type neither FLOAT nor DOUBLE); DSMM_ERR_NOMEM (pool or host). */
dsmm_status dsmmi_gpu_dacc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx k, dsmm_type type,
                                  dsmmi_gpu_dacc **out);
/* dsmmi_gpu_dacc_multiply: tile += A * B (A nrows x n, any value type, a pattern read as
 * ones; B n x k of the tile's type). a_dev: A's arrays are device memory (64-bit row pointers
 * from 0, 32-bit columns, as a SUMMA piece received by a CUDA-aware MPI; values of another
 * type converted on the device); b_dev: B's values are device memory with ld = k. Otherwise
 * they are uploaded. info as a local SpMM's (flops, bytes, seconds_device and
 * seconds_transfer, device_bytes, on_gpu 1, gpu_variant).
 * Errors: DSMM_ERR_DIM; DSMM_ERR_ARG (B of another type, a device B with ld != k);
 * DSMM_ERR_NOMEM; DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_dacc_multiply(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, const dsmm_csr *A,
                                    int a_dev, const dsmm_dense *B, int b_dev,
                                    dsmm_spmm_info *info);
/* dsmmi_gpu_dacc_add: tile += P (host, nrows x k of the tile's type: a partial fetched from
 * another rank). Errors: DSMM_ERR_DIM; DSMM_ERR_ARG; DSMM_ERR_NOMEM; DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_dacc_add(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, const dsmm_dense *P);
/* dsmmi_gpu_dacc_finish: the tile downloaded into C (host, nrows x k of the tile's type, any
 * ld >= k; overwritten). products gets the products and partials added. The tile stays (a
 * second finish downloads the same values). Errors: DSMM_ERR_DIM; DSMM_ERR_ARG; DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_dacc_finish(dsmm_ctx *ctx, dsmmi_gpu_dacc *acc, dsmm_dense *C, int *products);
/* dsmmi_gpu_dacc_free: frees the tile (*acc NULL afterwards). */
void dsmmi_gpu_dacc_free(dsmm_ctx *ctx, dsmmi_gpu_dacc **acc);

/* dsmmi_gpu_buf_alloc / dsmmi_gpu_buf_free (gpu.c): a block of the device pool for the caller
 * (receive buffers a CUDA-aware MPI writes into). Errors: DSMM_ERR_UNSUPPORTED (no device);
 * DSMM_ERR_NOMEM naming what. */
dsmm_status dsmmi_gpu_buf_alloc(dsmm_ctx *ctx, size_t bytes, const char *what, void **out);
void *dsmmi_gpu_buf_free(dsmm_ctx *ctx, void *p);
/* dsmmi_gpu_copy (device.cu): bytes from src to dst, host to device (to_device 1) or device to
 * host, on the context's stream 0 (after the work queued there) and completed on return (tests
 * place a piece where a CUDA-aware MPI would leave it).
 * Errors: DSMM_ERR_UNSUPPORTED (no device); DSMM_ERR_CUDA. */
dsmm_status dsmmi_gpu_copy(dsmm_ctx *ctx, void *dst, const void *src, size_t bytes, int to_device);

/* ------------------------------------------------------------------------------------------ */
/* The device state of a context (device.cu; gpu.c holds the C side)                          */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmmi_gpu dsmmi_gpu;
struct dsmmi_gpu {
    int device;
    int sm_count; // multiprocessors (sizes the SpMM's split of long rows)
    char name[96];
    double auto_flops;
    int host_planning; // dsmm_gpu_opts.host_planning
    int spread;        // dsmm_gpu_opts.spgemm_spread
    int spmm_unroll;   // dsmm_gpu_opts.spmm_unroll: 1, 4, or 0 (by k: dsmmi_gpu_spmm_unroll)
    dsmmi_dpool pool;
    void *pool_base_d; // the one cudaMalloc
    void *stream[2];   // cudaStream_t: 0 compute (and uploads), 1 transfers that overlap
    // cudaEvent_t: 0-1 staging marks, 2-7 timing: a product on lane L times with 2 + 3 L + k
    // (k < 3), so lane 1 uses 5-7; the resident merges (resident.cu) and the copy-bandwidth
    // probe also use 6-7, which is safe only because neither runs beside a lane-1 product
    // (resident products run on lane 0, the out-of-core driver is not used with them).
    void *ev[8];
    void *pinned[2]; // cudaMallocHost staging buffers
    size_t pinned_bytes;
    void *cusparse;                      // cusparseHandle_t, created on first use
    void (*cusparse_free)(dsmmi_gpu *g); // destroys it (set with it)
    dsmm_gpu_info info;
};

/* The context's device state, or NULL (ctx->gpu). */
static inline dsmmi_gpu *dsmmi_gpu_of(dsmm_ctx *ctx)
{
    return (dsmmi_gpu *)ctx->gpu;
}

/* dsmmi_gpu_wants: AUTO's choice for a product of `flops` multiply-adds: 1 when ctx has a
 * device and flops >= its auto_flops (HipMCL §III sends only large tile products to the GPU:
 * small ones cost more in launches and copies than they save). */
int dsmmi_gpu_wants(dsmm_ctx *ctx, double flops);

/* Device side (device.cu, or gpu_stub.c returning DSMM_ERR_UNSUPPORTED). */
dsmm_status dsmmi_gpu_state_create(dsmm_ctx *ctx, const dsmm_gpu_opts *o, dsmmi_gpu **out);
void dsmmi_gpu_state_destroy(dsmm_ctx *ctx, dsmmi_gpu **g);

/* dsmmi_gpu_copy_bandwidth: device memory bandwidth in GB/s (read + write), from the best of
 * five device-to-device copies of a quarter of the pool's largest free block (at most 1 GiB),
 * timed with events: the HBM floor that SpMM's bytes are set against (benchmarks). */
dsmm_status dsmmi_gpu_copy_bandwidth(dsmm_ctx *ctx, double *gbps);

/* Table entries (spgemm.cu, spmm.cu, cusparse.cu; the stubs fail with UNSUPPORTED). The GPU
 * entries run what the device kernels support (FULL products in double arithmetic, no mask,
 * any semiring; SpMM without transpose) and hand the rest, and AUTO products that
 * dsmmi_gpu_wants declines, to the CPU kernels. */
dsmm_status dsmmi_gpu_spgemm(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info);
dsmm_status dsmmi_gpu_spgemm_cusparse(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                      dsmmi_spgemm_phase phase, dsmm_csr **C,
                                      dsmm_spgemm_info *info);
dsmm_status dsmmi_gpu_spmm(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);
dsmm_status dsmmi_gpu_spmm_cusparse(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info);

#endif // DSMM_GPU_H
