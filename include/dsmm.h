// include/dsmm.h: the whole public API of dsmm (sparse matrix multiplication at scale).
// Needs only standard headers; dsmm_ctx_create_mpi appears when dsmm was built with MPI.
#ifndef DSMM_H
#define DSMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dsmm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define DSMM_API
#elif defined(__GNUC__) || defined(__clang__)
#define DSMM_API __attribute__((visibility("default")))
#else
#define DSMM_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DSMM_NODISCARD __attribute__((warn_unused_result))
#else
#define DSMM_NODISCARD
#endif

/* ------------------------------------------------------------------------------------------ */
/* Basic types                                                                                 */
/* ------------------------------------------------------------------------------------------ */

// Global indices, row pointers and nonzero counts.
typedef int64_t dsmm_idx;

typedef enum dsmm_status {
    DSMM_OK = 0,
    DSMM_ERR_ARG,         // invalid argument or stale handle
    DSMM_ERR_DIM,         // dimensions do not match
    DSMM_ERR_FORMAT,      // malformed input data or a broken invariant
    DSMM_ERR_NOMEM,       // allocation failed or memory budget exceeded
    DSMM_ERR_IO,          // file could not be opened, read or written
    DSMM_ERR_MPI,         // an MPI call failed
    DSMM_ERR_CUDA,        // a CUDA call failed
    DSMM_ERR_UNSUPPORTED, // feature not compiled in or not supported
    DSMM_ERR_INTERNAL,    // a dsmm bug
    DSMM_STATUS_COUNT
} dsmm_status;

// Value type of a matrix. DSMM_PATTERN: no values (every stored entry is 1).
typedef enum dsmm_type { DSMM_PATTERN = 0, DSMM_FLOAT = 1, DSMM_DOUBLE = 2 } dsmm_type;

// What to do with repeated (i, j) entries when assembling a matrix from triples.
typedef enum dsmm_dup {
    DSMM_DUP_SUM = 0, // add values (pattern: keep one)
    DSMM_DUP_MAX,     // keep the largest value
    DSMM_DUP_MIN,     // keep the smallest value
    DSMM_DUP_LAST,    // keep the one that came last
    DSMM_DUP_ERROR    // a repeated entry is an error (DSMM_ERR_FORMAT)
} dsmm_dup;

/* dsmm_version: the version string "MAJOR.MINOR.PATCH". */
DSMM_API const char *dsmm_version(void);

/* dsmm_status_name: "DSMM_OK", "DSMM_ERR_IO", ...; "DSMM_ERR_?" for values out of range. */
DSMM_API const char *dsmm_status_name(dsmm_status st);

/* dsmm_type_name: "pattern", "float" or "double". */
DSMM_API const char *dsmm_type_name(dsmm_type t);

/* ------------------------------------------------------------------------------------------ */
/* Context: run state, errors, allocator, memory budget, threads, logging                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmm_ctx dsmm_ctx;

typedef enum dsmm_log_level {
    DSMM_LOG_ERROR = 0,
    DSMM_LOG_WARN = 1,
    DSMM_LOG_INFO = 2,
    DSMM_LOG_DEBUG = 3
} dsmm_log_level;

typedef void (*dsmm_log_fn)(void *user, dsmm_log_level level, const char *msg);

// A user allocator. Every host allocation of dsmm goes through it when set.
typedef struct dsmm_allocator {
    void *(*malloc_fn)(void *user, size_t size);
    void *(*realloc_fn)(void *user, void *p, size_t size);
    void (*free_fn)(void *user, void *p);
    void *user;
} dsmm_allocator;

/* dsmm_ctx_create: a serial context (one rank), threads from OpenMP's default.
 * Ownership: *ctx is new and belongs to the caller (dsmm_ctx_destroy).
 * Errors: DSMM_ERR_ARG if ctx is NULL; DSMM_ERR_NOMEM. On error *ctx is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_create(dsmm_ctx **ctx);

/* dsmm_ctx_destroy: frees the context and sets *ctx to NULL; accepts NULL and *ctx == NULL.
 * Objects made with the context must be destroyed before it. */
DSMM_API void dsmm_ctx_destroy(dsmm_ctx **ctx);

/* dsmm_ctx_last_error: the message of the first failure since the context was made or
 * dsmm_ctx_clear_error (the cause; later failures are its consequences and leave it), e.g.
 * "DSMM_ERR_IO: graph.mtx:17: column 0 out of range 1..500 (src/io/mtx_read.c:211)";
 * "" when nothing failed. The string belongs to ctx and lives until the error is cleared. */
DSMM_API const char *dsmm_ctx_last_error(const dsmm_ctx *ctx);
DSMM_API dsmm_status dsmm_ctx_last_status(const dsmm_ctx *ctx);
DSMM_API void dsmm_ctx_clear_error(dsmm_ctx *ctx);

/* dsmm_ctx_set_threads: OpenMP threads used by dsmm calls on this context (n >= 1; 0 = default).
 * Errors: DSMM_ERR_ARG if n < 0. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_set_threads(dsmm_ctx *ctx, int n);
DSMM_API int dsmm_ctx_threads(const dsmm_ctx *ctx);

/* dsmm_ctx_rank / dsmm_ctx_size: this process's rank and the number of ranks (0 / 1 serial). */
DSMM_API int dsmm_ctx_rank(const dsmm_ctx *ctx);
DSMM_API int dsmm_ctx_size(const dsmm_ctx *ctx);

/* dsmm_ctx_set_log: messages of level <= level go to fn (NULL: stderr). */
DSMM_API void dsmm_ctx_set_log(dsmm_ctx *ctx, dsmm_log_level level, dsmm_log_fn fn, void *user);

/* dsmm_ctx_set_allocator: use a user allocator (NULL: the C library's). Only while nothing
 * allocated through ctx is alive. Errors: DSMM_ERR_ARG if memory is still in use. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_set_allocator(dsmm_ctx *ctx,
                                                           const dsmm_allocator *alloc);

/* dsmm_ctx_set_mem_budget: host bytes dsmm may hold at once through ctx (0: unlimited; a new
 * context starts with the machine's physical memory).
 * An allocation that would exceed it fails with DSMM_ERR_NOMEM naming the budget. */
DSMM_API void dsmm_ctx_set_mem_budget(dsmm_ctx *ctx, size_t bytes);
DSMM_API size_t dsmm_ctx_mem_budget(const dsmm_ctx *ctx);
DSMM_API size_t dsmm_ctx_mem_in_use(const dsmm_ctx *ctx);
DSMM_API size_t dsmm_ctx_mem_peak(const dsmm_ctx *ctx);

/* dsmm_ctx_set_progress: 0 never, 1 on stderr when it is a terminal (default), 2 always. */
DSMM_API void dsmm_ctx_set_progress(dsmm_ctx *ctx, int mode);

/* ------------------------------------------------------------------------------------------ */
/* GPU (CUDA): one device per context, its memory pool, streams and staging buffers           */
/* ------------------------------------------------------------------------------------------ */

/* Settings of dsmm_ctx_set_gpu; dsmm_gpu_opts_init sets the defaults noted. */
typedef struct dsmm_gpu_opts {
    int device;         // CUDA device ordinal; -1 (default): the rank modulo the device count
    size_t pool_bytes;  // device pool, allocated once: 0 (default) = 80% of the free memory
    size_t stage_bytes; // each of the two pinned host staging buffers (default 16 MiB)
    double auto_flops;  // AUTO sends a local product to the GPU when its multiply-adds reach
                        // this (default 2e6, docs/gpu.md); < 0: AUTO never uses the GPU
    int host_planning;  // SpGEMM: 1 computes the row flops and bins on the host and uploads
                        // them (the path before 2026-11-25, kept for comparison); 0 (default):
                        // the device computes them
    int spgemm_spread;  // SpGEMM, rows with shared-memory tables: how a row's products go to
                        // its threads. 0 (default) spread evenly (each thread searches its
                        // entry of A); 1 by entry of A (a few threads an entry, the way before
                        // 2026-11-25); 2 decides per chunk of A entries (docs/gpu.md)
    int spmm_unroll;    // SpMM: entries of a row whose B rows are loaded before their products
                        // are added (loads in flight per lane): 1 or 4; 0 (default): by k, 4
                        // while a lane covers at most one vector group of B's row (k <= 128
                        // floats or 64 doubles with 16-byte vectors, k <= 32 where k is not a
                        // multiple of the vector), else 1 (timed on an H200, docs/gpu.md)
} dsmm_gpu_opts;
DSMM_API void dsmm_gpu_opts_init(dsmm_gpu_opts *opts);

/* dsmm_gpu_count: CUDA devices visible to this process (0 in a build without CUDA). */
DSMM_API int dsmm_gpu_count(void);

/* dsmm_ctx_set_gpu: gives ctx a CUDA device: the pool is allocated here, once (no device
 * allocation happens during products), with two streams, events and pinned staging buffers.
 * After it, the GPU and CUSPARSE kernels run on ctx and AUTO sends products of at least
 * auto_flops there. opts NULL = defaults. Calling it again replaces the device state.
 * Errors: DSMM_ERR_UNSUPPORTED (built without CUDA); DSMM_ERR_CUDA (no device, or the pool
 *         cannot be allocated, with CUDA's message); DSMM_ERR_ARG (bad settings). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_set_gpu(dsmm_ctx *ctx, const dsmm_gpu_opts *opts);

/* dsmm_mpi_cuda_aware: 1 when the MPI library says at run time that it takes device buffers
 * (Open MPI's MPIX_Query_cuda_support), else 0 (also without MPI); dsmm then stages device
 * data through pinned host buffers. */
DSMM_API int dsmm_mpi_cuda_aware(void);

/* What the context's device is and did. */
typedef struct dsmm_gpu_info {
    int enabled;        // dsmm_ctx_set_gpu succeeded on this context
    int device;         // CUDA ordinal
    char name[96];      // "NVIDIA H100 80GB HBM3, sm_90"
    size_t pool_bytes;  // size of the pool
    size_t pool_in_use; // bytes held now
    size_t pool_peak;   // most bytes held at once since dsmm_ctx_set_gpu
    long products_gpu;  // local products run on the device
    long products_cpu;  // AUTO products kept on the CPU (below auto_flops or unsupported)
    double bytes_h2d, bytes_d2h;
    double seconds_h2d, seconds_d2h, seconds_kernels; // device events, summed
} dsmm_gpu_info;

/* dsmm_ctx_gpu_info: fills *info (enabled = 0 and zeros when ctx has no device).
 * Errors: DSMM_ERR_ARG for NULL arguments. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_gpu_info(const dsmm_ctx *ctx, dsmm_gpu_info *info);

/* dsmm_parse_size: "512", "64K", "1.5G", "2GiB" -> bytes. Errors: DSMM_ERR_ARG. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_parse_size(const char *s, size_t *bytes);

#ifdef DSMM_EXPERIMENTAL
/* dsmm_ctx_fail_alloc_at: the k-th host allocation from now (k = 0: the next one) fails with
 * DSMM_ERR_NOMEM; k < 0 switches injection off. For testing error paths. */
DSMM_API void dsmm_ctx_fail_alloc_at(dsmm_ctx *ctx, long k);
/* dsmm_ctx_alloc_count: host allocations made through ctx so far. */
DSMM_API long dsmm_ctx_alloc_count(const dsmm_ctx *ctx);
#endif

/* ------------------------------------------------------------------------------------------ */
/* Local formats                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* Compressed sparse row. Invariants (dsmm_csr_check tests exactly these):
 *   nrows >= 0, ncols >= 0, 0 <= nnz <= cap;
 *   rowptr has nrows + 1 entries, rowptr[0] == 0, non-decreasing, rowptr[nrows] == nnz;
 *   exactly one of colidx (64-bit) and colidx32 (32-bit, only when ncols <= INT32_MAX) is
 *   non-NULL (both NULL allowed when cap == 0: colidx then counts as the 64-bit array);
 *   0 <= column k < ncols for k < nnz;
 *   sorted != 0: columns strictly increasing within each row (no duplicates);
 *   val == NULL iff type == DSMM_PATTERN; else val is float[cap] or double[cap].
 * A CSC matrix is the CSR of its transpose. Every operation reads either column width;
 * copy, reserve, sort_inplace, permute, extract and the panel functions keep the input's,
 * transpose and to_coo give 64-bit columns, and the readers return 64-bit columns.
 * Local tiles and large SpGEMM outputs use 32-bit columns to save a third of their memory. */
typedef struct dsmm_csr {
    dsmm_idx nrows, ncols, nnz, cap;
    dsmm_idx *rowptr;
    dsmm_idx *colidx;  // 64-bit columns, or NULL when colidx32 holds them
    int32_t *colidx32; // 32-bit columns, or NULL
    void *val;
    dsmm_type type;
    int sorted;      // rows sorted by column, no duplicates
    int owns_arrays; // 0: arrays borrowed from the caller (dsmm_csr_wrap)
    dsmm_ctx *ctx;   // the context whose allocator owns the arrays and the struct
} dsmm_csr;

/* Coordinate triples, in any order, possibly with duplicates. Same value rules as CSR. */
typedef struct dsmm_coo {
    dsmm_idx nrows, ncols, nnz, cap;
    dsmm_idx *row;
    dsmm_idx *col;
    void *val;
    dsmm_type type;
    dsmm_ctx *ctx;
} dsmm_coo;

/* Dense row-major: entry (i, j) at val[i * ld + j]; ld >= ncols. type is FLOAT or DOUBLE. */
typedef struct dsmm_dense {
    dsmm_idx nrows, ncols, ld;
    void *val;
    dsmm_type type;
    int owns_arrays;
    dsmm_ctx *ctx;
} dsmm_dense;

/* dsmm_csr_col: column of entry k, whichever the index width. */
static inline dsmm_idx dsmm_csr_col(const dsmm_csr *A, dsmm_idx k)
{
    return A->colidx32 ? (dsmm_idx)A->colidx32[k] : A->colidx[k];
}

/* dsmm_csr_value: entry k of A's values as a double (1 for pattern matrices). */
static inline double dsmm_csr_value(const dsmm_csr *A, dsmm_idx k)
{
    if (A->type == DSMM_DOUBLE) return ((const double *)A->val)[k];
    if (A->type == DSMM_FLOAT) return (double)((const float *)A->val)[k];
    return 1.0;
}

/* dsmm_csr_create: an nrows x ncols CSR with room for cap entries, rowptr zeroed, nnz = 0,
 * sorted = 1. Ownership: *out is new (dsmm_csr_destroy).
 * Errors: DSMM_ERR_ARG for negative sizes; DSMM_ERR_NOMEM. On error *out is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                                    dsmm_idx cap, dsmm_type type, dsmm_csr **out);

/* dsmm_csr_wrap: a CSR that borrows the caller's arrays (owns_arrays = 0); they are checked
 * with dsmm_csr_check. Errors: DSMM_ERR_FORMAT if an invariant fails; DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_wrap(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                                  dsmm_idx *rowptr, dsmm_idx *colidx, void *val,
                                                  dsmm_type type, dsmm_csr **out);

/* dsmm_csr_destroy: frees A (and its arrays when it owns them); sets *A to NULL. */
DSMM_API void dsmm_csr_destroy(dsmm_csr **A);

/* dsmm_csr_reserve: grows A's colidx/val to at least cap entries (keeps contents). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_reserve(dsmm_csr *A, dsmm_idx cap);

/* dsmm_csr_copy: a deep copy, optionally converting the value type (pattern -> values of 1;
 * values -> pattern drops them). Errors: DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_copy(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_type type,
                                                  dsmm_csr **out);

/* dsmm_csr_set_col_width: converts A's column indices in place to `bits` (32 or 64) wide.
 * Errors: DSMM_ERR_ARG if bits is neither, or 32 with ncols > INT32_MAX; DSMM_ERR_NOMEM
 * (A unchanged). Borrowed arrays (owns_arrays = 0) are not converted: DSMM_ERR_ARG. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_set_col_width(dsmm_csr *A, int bits);

/* dsmm_csr_check: DSMM_OK when every invariant above holds, else DSMM_ERR_FORMAT with a
 * message naming the first broken invariant (row and position). Reads A only. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_check(dsmm_ctx *ctx, const dsmm_csr *A);

/* dsmm_csr_sort_inplace: sorts every row by column (values follow) and merges duplicates with
 * policy dup; sets sorted = 1. Errors: DSMM_ERR_FORMAT for duplicates under DSMM_DUP_ERROR. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_sort_inplace(dsmm_ctx *ctx, dsmm_csr *A, dsmm_dup dup);

/* dsmm_csr_transpose: T = A^T, rows of T sorted. O(nnz + ncols). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_transpose(dsmm_ctx *ctx, const dsmm_csr *A,
                                                       dsmm_csr **out);

/* dsmm_csr_permute: B = A(p, q), i.e. B(i, j) = A(p[i], q[j]); p or q NULL means identity.
 * p and q must be permutations. Errors: DSMM_ERR_ARG if they are not. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_permute(dsmm_ctx *ctx, const dsmm_csr *A,
                                                     const dsmm_idx *p, const dsmm_idx *q,
                                                     dsmm_csr **out);

/* dsmm_csr_extract: the tile A(r0:r1, c0:c1) (half-open), columns renumbered from 0.
 * Errors: DSMM_ERR_ARG if the ranges are outside A or empty-reversed. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_extract(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_idx r0,
                                                     dsmm_idx r1, dsmm_idx c0, dsmm_idx c1,
                                                     dsmm_csr **out);

/* dsmm_csr_row_panels: splits A into npanels row panels at bounds (npanels + 1 increasing
 * row numbers, bounds[0] = 0, bounds[npanels] = nrows; NULL = equal split). panels[i] is new.
 * Ownership: the caller destroys every panel and frees the array with dsmm_csr_panels_free. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_row_panels(dsmm_ctx *ctx, const dsmm_csr *A,
                                                        int npanels, const dsmm_idx *bounds,
                                                        dsmm_csr ***panels);

/* dsmm_csr_col_panels: splits sorted A into npanels column panels (bounds as above, over
 * columns), columns renumbered from 0 in each panel. One pass over A per panel with a per-row
 * cursor (out-of-core paper §III.D): panel p starts each row where panel p-1 stopped.
 * Errors: DSMM_ERR_ARG if A is not sorted or bounds are invalid. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_col_panels(dsmm_ctx *ctx, const dsmm_csr *A,
                                                        int npanels, const dsmm_idx *bounds,
                                                        dsmm_csr ***panels);

/* dsmm_csr_panels_free: destroys npanels panels and the array; sets *panels to NULL. */
DSMM_API void dsmm_csr_panels_free(dsmm_ctx *ctx, dsmm_csr ***panels, int npanels);

/* Result of dsmm_csr_compare: where the first difference is. */
typedef struct dsmm_csr_diff {
    int equal;         // 1 when A and B agree within tolerance
    dsmm_idx row, col; // first differing entry (row-major order), -1 if dims/nnz differ
    double a, b;       // the two values there (0 where missing)
    char what[160];    // human-readable description
} dsmm_csr_diff;

/* dsmm_csr_compare: A and B equal in shape and pattern (explicit entries; rows compared as
 * sets of columns) and |a - b| <= atol + rtol * max(|a|, |b|) for every value.
 * Errors: DSMM_ERR_NOMEM only; inequality is reported in *diff, not as an error. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_compare(dsmm_ctx *ctx, const dsmm_csr *A,
                                                     const dsmm_csr *B, double rtol, double atol,
                                                     dsmm_csr_diff *diff);

/* dsmm_coo_create: empty triples with room for cap entries. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_coo_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                                    dsmm_idx cap, dsmm_type type, dsmm_coo **out);
DSMM_API void dsmm_coo_destroy(dsmm_coo **T);

/* dsmm_coo_push: appends (i, j, v), growing storage geometrically. v ignored for pattern.
 * Errors: DSMM_ERR_ARG if (i, j) is outside the matrix; DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_coo_push(dsmm_coo *T, dsmm_idx i, dsmm_idx j, double v);

/* dsmm_coo_to_csr: sorted CSR from triples; duplicates handled by dup (DSMM_DUP_SUM usual).
 * Errors: DSMM_ERR_FORMAT (duplicate under DSMM_DUP_ERROR, message names the entry);
 *         DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_coo_to_csr(dsmm_ctx *ctx, const dsmm_coo *T, dsmm_dup dup,
                                                    dsmm_csr **out);

/* dsmm_csr_to_coo: triples in row-major order. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_to_coo(dsmm_ctx *ctx, const dsmm_csr *A,
                                                    dsmm_coo **out);

/* dsmm_dense_create: zero-filled nrows x ncols, ld = ncols. type FLOAT or DOUBLE. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dense_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                                      dsmm_type type, dsmm_dense **out);
/* dsmm_dense_wrap: borrows val (ld >= ncols). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dense_wrap(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                                    dsmm_idx ld, void *val, dsmm_type type,
                                                    dsmm_dense **out);
DSMM_API void dsmm_dense_destroy(dsmm_dense **D);

/* dsmm_csr_to_dense: D = A as dense (type FLOAT or DOUBLE). For references and tests. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_to_dense(dsmm_ctx *ctx, const dsmm_csr *A,
                                                      dsmm_type type, dsmm_dense **out);

/* ------------------------------------------------------------------------------------------ */
/* Files: Matrix Market, abc label triples, binary; .gz input                                  */
/* ------------------------------------------------------------------------------------------ */

typedef enum dsmm_format {
    DSMM_FORMAT_AUTO = 0, // from the content (banner / magic) and the name
    DSMM_FORMAT_MTX,      // Matrix Market
    DSMM_FORMAT_ABC,      // mcl label triples: "label1 label2 [weight]"
    DSMM_FORMAT_BIN,      // dsmm binary (docs/formats.md)
    DSMM_FORMAT_MCI       // mcl's native matrix format (mcxload's .mci)
} dsmm_format;

typedef enum dsmm_mm_field { DSMM_MM_REAL = 0, DSMM_MM_INTEGER, DSMM_MM_PATTERN } dsmm_mm_field;

typedef enum dsmm_mm_symmetry {
    DSMM_MM_GENERAL = 0,
    DSMM_MM_SYMMETRIC,
    DSMM_MM_SKEW
} dsmm_mm_symmetry;

/* What a file declared (Matrix Market header; abc and binary fill what applies). */
typedef struct dsmm_file_info {
    dsmm_format format;
    int array; // Matrix Market "array" (dense) layout
    dsmm_mm_field field;
    dsmm_mm_symmetry symmetry;
    dsmm_idx nrows, ncols;
    dsmm_idx stored; // entries stored in the file (one triangle when symmetric)
    size_t bytes;    // uncompressed bytes read
    int gzipped;
} dsmm_file_info;

/* The line layout of a label file (dsmm_read_opts.layout). */
typedef enum dsmm_label_layout {
    DSMM_LAYOUT_ABC = 0, // "label1 label2 [weight]"
    DSMM_LAYOUT_SIF,     // "source relation target [target ...]" (Cytoscape's SIF)
    DSMM_LAYOUT_ETC      // "source target [target ...]"
} dsmm_label_layout;

typedef struct dsmm_read_opts {
    dsmm_format format;  // DSMM_FORMAT_AUTO
    dsmm_type type;      // value type of the result; DSMM_DOUBLE (pattern files: see keep_pattern)
    int keep_pattern;    // 1: pattern files give DSMM_PATTERN matrices (default 1)
    dsmm_dup dup;        // repeated (i, j) in the file: DSMM_DUP_ERROR by default
    int threads;         // parsing threads, 0 = the context's
    int base;            // index base of Matrix Market coordinates: 1 (standard) or 0
    int allow_nonfinite; // 0: NaN/Inf values are errors
    // abc files: each weight as read (1 where a line has none) becomes abc_map(abc_map_arg,
    // weight) before repeated pairs are merged (mcl's --abc-neg-log10 and -abc-tf, through
    // dsmm_mcl_tf_apply); a result that is NaN, or infinite without allow_nonfinite, is an
    // error naming the line. NULL (default): the weights as read.
    double (*abc_map)(const void *arg, double weight);
    const void *abc_map_arg;
    // Label files (DSMM_FORMAT_ABC) in mcl's other label layouts, as its --sif and --etc read
    // them: fields separated by blanks; SIF lines "source relation target..." (the relation
    // ignored), ETC lines "source target..."; an edge source -> target for each target, a
    // line with no target only names its source (a vertex, perhaps without edges).
    // expect_values (mcl's --expect-values, SIF and ETC only): a target "label:w" has weight
    // w when the text after its last ':' is a number, else the whole field is the label
    // (weight 1), as mcl reads it.
    dsmm_label_layout layout; // DSMM_LAYOUT_ABC
    int expect_values;
} dsmm_read_opts;

/* dsmm_read_opts_init: the defaults above. */
DSMM_API void dsmm_read_opts_init(dsmm_read_opts *opts);

/* Label dictionary of an abc network: index <-> name. Opaque. */
typedef struct dsmm_labels dsmm_labels;
DSMM_API dsmm_idx dsmm_labels_count(const dsmm_labels *L);
/* dsmm_labels_name: the label of index i (NULL if out of range). */
DSMM_API const char *dsmm_labels_name(const dsmm_labels *L, dsmm_idx i);
/* dsmm_labels_find: index of name, or -1. */
DSMM_API dsmm_idx dsmm_labels_find(const dsmm_labels *L, const char *name);
DSMM_API void dsmm_labels_destroy(dsmm_labels **L);

/* dsmm_read: reads a matrix file (Matrix Market, abc, binary or mcl's native format (read
 * only; docs/formats.md); ".gz" decompressed on the
 * fly), symmetric and skew-symmetric storage expanded to the full matrix.
 * labels may be NULL; for abc files it receives the label dictionary (else NULL).
 * info may be NULL; it receives what the file declared.
 * Errors: DSMM_ERR_IO (missing, unreadable, a directory), DSMM_ERR_FORMAT (the message names
 *         file:line and the problem), DSMM_ERR_UNSUPPORTED (complex, hermitian),
 *         DSMM_ERR_NOMEM (also for declared sizes beyond the budget or the file's length).
 *         On error *A and *labels are NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_read(dsmm_ctx *ctx, const char *path,
                                              const dsmm_read_opts *opts, dsmm_csr **A,
                                              dsmm_labels **labels, dsmm_file_info *info);

/* dsmm_read_buffer: as dsmm_read on len bytes in memory; name is used in messages. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_read_buffer(dsmm_ctx *ctx, const char *buf, size_t len,
                                                     const char *name, const dsmm_read_opts *opts,
                                                     dsmm_csr **A, dsmm_labels **labels,
                                                     dsmm_file_info *info);

/* dsmm_read_dense: a Matrix Market "array" file (or coordinate, densified) as dense. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_read_dense(dsmm_ctx *ctx, const char *path, dsmm_type type,
                                                    dsmm_dense **D);

typedef struct dsmm_write_opts {
    dsmm_format format;  // DSMM_FORMAT_AUTO: from the name (.mtx, .abc/.txt, .dsmm/.bin, .mci)
    int symmetric;       // Matrix Market: -1 detect (default), 0 general, 1 write one triangle
    int precision;       // significant digits for values; 0 = shortest round-trip (default)
    const char *comment; // optional comment line(s) after the banner
} dsmm_write_opts;

DSMM_API void dsmm_write_opts_init(dsmm_write_opts *opts);

/* dsmm_write: writes A to path atomically (a temporary file renamed at the end: on error no
 * file is left). abc needs labels or writes 0-based indices as labels.
 * Errors: DSMM_ERR_IO; DSMM_ERR_ARG (format cannot hold A). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_write(dsmm_ctx *ctx, const char *path, const dsmm_csr *A,
                                               const dsmm_labels *labels,
                                               const dsmm_write_opts *opts);

/* dsmm_write_dense: Matrix Market "array real general", atomically. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_write_dense(dsmm_ctx *ctx, const char *path,
                                                     const dsmm_dense *D);

/* dsmm_write_clusters: one cluster per line, members tab-separated, as mcl writes them:
 * cluster[i] is the cluster of vertex i (0..nclusters-1); members printed as labels when
 * labels != NULL, else as 0-based indices. Atomic like dsmm_write. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_write_clusters(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                                        const dsmm_idx *cluster,
                                                        const dsmm_labels *labels);

/* ------------------------------------------------------------------------------------------ */
/* Generators: same matrix for the same seed whatever the thread count                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmm_gen_params {
    uint64_t seed;  // default 1
    dsmm_type type; // DSMM_PATTERN (default) or DSMM_DOUBLE with values in (0, 1]
    int symmetric;  // 1: undirected (A = A^T), default 0
    int self_loops; // 1: keep diagonal entries (default 0)
    /* R-MAT (Graph500): 2^scale vertices, edge_factor * 2^scale edges before dedup */
    int scale;          // default 10
    double edge_factor; // default 16
    double a, b, c, d;  // default 0.57, 0.19, 0.19, 0.05
    /* Erdős–Rényi G(n, p) with p = avg_degree / n; planted partition uses n too */
    dsmm_idx n;        // default 1000
    double avg_degree; // default 8
    /* planted partition (stochastic block model): nblocks equal blocks, p_in / p_out */
    int nblocks;        // default 4
    double p_in, p_out; // default 0.05, 0.002
} dsmm_gen_params;

DSMM_API void dsmm_gen_params_init(dsmm_gen_params *p);

/* dsmm_gen_rmat: Graph500 R-MAT; duplicate edges merged (pattern) or summed (values). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_gen_rmat(dsmm_ctx *ctx, const dsmm_gen_params *p,
                                                  dsmm_csr **A);
/* dsmm_gen_er: Erdős–Rényi G(n, p): each (i, j) present with probability p. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_gen_er(dsmm_ctx *ctx, const dsmm_gen_params *p,
                                                dsmm_csr **A);
/* dsmm_gen_planted: stochastic block model; *truth (may be NULL) receives n block labels
 * (0-based), freed by the caller with dsmm_free. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_gen_planted(dsmm_ctx *ctx, const dsmm_gen_params *p,
                                                     dsmm_csr **A, dsmm_idx **truth);

/* dsmm_free: frees an array that a dsmm call returned (truth labels, ...). Returns NULL. */
DSMM_API void *dsmm_free(dsmm_ctx *ctx, void *p);

/* ------------------------------------------------------------------------------------------ */
/* Local SpGEMM: C = A * B on one rank's CSR matrices (threads inside)                         */
/* ------------------------------------------------------------------------------------------ */

/* Accumulators (docs/kernels.md). AUTO picks per row from the row's flops, the output
 * density and the compression factor cf = flops / nnz(C), like HipMCL. REF is the slow,
 * obviously right reference kernel; GPU is reserved for the CUDA backend. */
typedef enum dsmm_spgemm_alg {
    DSMM_SPGEMM_AUTO = 0,
    DSMM_SPGEMM_HASH,     // per-thread open-addressing hash table, reused across rows
    DSMM_SPGEMM_HEAP,     // k-way merge of the B rows; rows come out sorted
    DSMM_SPGEMM_DENSE,    // dense accumulator + bitmap over the columns; rows come out sorted
    DSMM_SPGEMM_REF,      // reference (src/kernels/ref), single-threaded
    DSMM_SPGEMM_GPU,      // dsmm's CUDA kernel (needs dsmm_ctx_set_gpu; DSMM_ERR_UNSUPPORTED
                          // without CUDA)
    DSMM_SPGEMM_CUSPARSE, // cusparseSpGEMM (ALG1), the reference the GPU kernel is checked
                          // and timed against (same needs as GPU)
    DSMM_SPGEMM_ALG_COUNT
} dsmm_spgemm_alg;

/* Semirings (add, multiply). PLUS_PAIR multiplies to 1 whatever the values, so C counts the
 * paths (triangles, common neighbours) and the inputs may be pattern-only; the others read
 * the values of both inputs. Entries of C are structural: a sum that cancels to 0 is kept. */
typedef enum dsmm_semiring {
    DSMM_PLUS_TIMES = 0, // (+, *), the default
    DSMM_PLUS_PAIR,      // (+, 1)
    DSMM_MIN_PLUS,       // (min, +), shortest paths
    DSMM_MAX_TIMES,      // (max, *), most reliable paths
    DSMM_SEMIRING_COUNT
} dsmm_semiring;

/* Names shared by the CLI and callers: "auto" "hash" "heap" "dense" "ref" "gpu" "cusparse";
 * "plus-times" "plus-pair" "min-plus" "max-times". Errors: DSMM_ERR_ARG for other names. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spgemm_alg_from_name(const char *name,
                                                              dsmm_spgemm_alg *alg);
DSMM_API const char *dsmm_spgemm_alg_name(dsmm_spgemm_alg alg);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_semiring_from_name(const char *name, dsmm_semiring *sr);
DSMM_API const char *dsmm_semiring_name(dsmm_semiring sr);

/* Options of dsmm_csr_spgemm_ex and the _symbolic/_numeric pair; dsmm_spgemm_opts_init sets
 * the defaults (AUTO, PLUS_TIMES, no mask, sorted rows, value type from the inputs, 64-bit
 * columns). */
typedef struct dsmm_spgemm_opts {
    dsmm_spgemm_alg alg;
    dsmm_semiring semiring;
    const dsmm_csr *mask; // structural mask M (nrows(A) x ncols(B)): C<M> = A*B keeps only
                          // entries where M has one; NULL = no mask
    int transpose_b;      // 1: C = A * B^T
    int unsorted;         // 1: rows of C may come out unsorted (C->sorted tells), saving sorts
    int type;             // value type of C: DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE, or -1 (the
                          // default): DOUBLE if A or B holds doubles or is pattern, else FLOAT
    int col_bits;         // 64 (default) or 32: width of C's columns (32 needs ncols <= INT32_MAX)
} dsmm_spgemm_opts;
DSMM_API void dsmm_spgemm_opts_init(dsmm_spgemm_opts *opts);

/* What a multiply did (optional output of the calls below). */
typedef struct dsmm_spgemm_info {
    double flops;                              // multiply-adds: sum_i sum_{k in A(i,:)} nnz(B(k,:))
    dsmm_idx nnz;                              // nnz(C)
    double cf;                                 // flops / nnz(C) (0 when C is empty)
    dsmm_idx rows_hash, rows_heap, rows_dense; // numeric rows per accumulator (AUTO mixes)
    dsmm_idx rows_masked; // rows handled by the masked (pattern-driven) accumulator
    int sorted;           // rows of C sorted by column
    int threads;          // threads used
    // seconds = the whole call; seconds_symbolic is 0 when the product ran in one pass
    // without the symbolic count (no mask; on more than one thread only when C at the flops
    // bound takes <= 8 MiB: docs/kernels.md)
    double seconds_symbolic, seconds_numeric, seconds;
    size_t workspace_bytes;  // scratch held at the peak (accumulators, conversions)
    int on_gpu;              // 1: the product ran on the GPU (GPU, CUSPARSE, or AUTO sending it)
    double seconds_transfer; // GPU: host<->device copies (device events)
    double seconds_device;   // GPU: from inputs on the device to C on the device (events)
    size_t device_bytes;     // GPU: device pool bytes held at the peak of this product
} dsmm_spgemm_info;

/* dsmm_csr_spgemm: C = A * B with the defaults (AUTO, plus-times, sorted rows).
 * A and B may hold 32- or 64-bit columns and any value types (converted as needed).
 * Ownership: *C is new (dsmm_csr_destroy); A and B are only read.
 * Errors: DSMM_ERR_DIM if A->ncols != B->nrows; DSMM_ERR_ARG if a semiring that reads values
 *         meets a pattern input; DSMM_ERR_NOMEM (budget too small; nothing leaked).
 *         On error *C is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spgemm(dsmm_ctx *ctx, const dsmm_csr *A,
                                                    const dsmm_csr *B, dsmm_csr **C);

/* dsmm_csr_spgemm_ex: dsmm_csr_spgemm with options (NULL = defaults); info may be NULL.
 * Errors as above, plus DSMM_ERR_DIM for a mask of the wrong shape, DSMM_ERR_UNSUPPORTED for
 * the GPU kernel in a build without CUDA. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spgemm_ex(dsmm_ctx *ctx, const dsmm_csr *A,
                                                       const dsmm_csr *B,
                                                       const dsmm_spgemm_opts *opts, dsmm_csr **C,
                                                       dsmm_spgemm_info *info);

/* dsmm_csr_spgemm_symbolic: the pattern of C = A * B (two passes: count, then fill), with
 * values allocated (type from opts) and set to 0. Use it once, then call
 * dsmm_csr_spgemm_numeric for each new set of values on the same patterns (GNN layers, MCL).
 * Ownership and errors as dsmm_csr_spgemm_ex. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spgemm_symbolic(dsmm_ctx *ctx, const dsmm_csr *A,
                                                             const dsmm_csr *B,
                                                             const dsmm_spgemm_opts *opts,
                                                             dsmm_csr **C, dsmm_spgemm_info *info);

/* dsmm_csr_spgemm_numeric: fills C's values in place for C's existing pattern, which must be
 * the pattern of A * B (from dsmm_csr_spgemm_symbolic with the same opts; A and B may have new
 * values, not new patterns). Pass the same opts as to the symbolic call.
 * Errors: DSMM_ERR_ARG if C is pattern-only or a product falls outside C's pattern (the
 *         patterns changed); DSMM_ERR_DIM; DSMM_ERR_NOMEM. On error C's values are undefined. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spgemm_numeric(dsmm_ctx *ctx, const dsmm_csr *A,
                                                            const dsmm_csr *B,
                                                            const dsmm_spgemm_opts *opts,
                                                            dsmm_csr *C, dsmm_spgemm_info *info);

/* Result of dsmm_spgemm_estimate. */
typedef struct dsmm_spgemm_estimate_result {
    double nnz;     // estimated nnz(A * B) (exact when keys == 0)
    double flops;   // exact multiply-adds
    double cf;      // flops / nnz (estimated)
    int keys;       // r, the keys per column used (0: exact symbolic count)
    double rel_err; // expected relative error of nnz (one standard deviation; 0 when exact)
    double seconds;
} dsmm_spgemm_estimate_result;

/* dsmm_spgemm_estimate: nnz(A * B) without forming it. keys == 0 counts exactly (the
 * symbolic phase, O(flops)); keys >= 3 uses Cohen's estimator (HipMCL §V): r = keys
 * exponential random keys per column of B, minima propagated through B's rows to A's rows,
 * nnz(C(i,:)) ~ (r - 1) / sum of row i's minima; O(r (nnz(A) + nnz(B))), independent of the
 * thread count for a given seed. row_nnz (may be NULL) receives the per-row estimates
 * (nrows(A) doubles). Errors: DSMM_ERR_DIM; DSMM_ERR_ARG for keys 1, 2 or < 0;
 * DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spgemm_estimate(dsmm_ctx *ctx, const dsmm_csr *A,
                                                         const dsmm_csr *B, int keys, uint64_t seed,
                                                         double *row_nnz,
                                                         dsmm_spgemm_estimate_result *out);

/* ------------------------------------------------------------------------------------------ */
/* Out-of-core SpGEMM: C = A * B chunk by chunk under a memory budget (docs/ooc.md)           */
/* ------------------------------------------------------------------------------------------ */

/* Settings of dsmm_csr_spgemm_ooc; dsmm_ooc_opts_init sets the defaults noted. */
typedef struct dsmm_ooc_opts {
    size_t mem_bytes;  // budget of one chunk's working set: A's row panel, B's column panel,
                       // the chunk of C (two on the device: one computing, one copying back)
                       // and the kernel's workspace. 0 (default): on the device 90% of the
                       // pool's largest free block, on the host a quarter of physical memory
    int row_panels;    // > 0: exactly this many row panels (cut by flops); 0 (default): as
                       // few as the budget allows
    int col_panels;    // > 0: exactly this many column panels (cut by nnz of B's columns);
                       // 0 (default): as few as the budget allows (usually 1)
    int use_gpu;       // 1: chunks run on the context's device (dsmm_ctx_set_gpu)
    int hybrid;        // 1 (with use_gpu): the largest chunks go to the device until
                       // gpu_ratio of the flops, the rest run on the CPU at the same time
    double gpu_ratio;  // the device's share of the flops (default 0.65); < 0: auto, from the
                       // rates both sides measure on their first chunk
    int estimate_keys; // nnz estimate behind the plan: 0 exact count per column panel (one
                       // symbolic pass; C is then allocated up front and each chunk copied
                       // into it as it comes back), >= 3 Cohen's estimator with that many
                       // keys (chunks held until the assembly), -1 (default): exact on the
                       // host alone, 8 keys when the device runs
    uint64_t seed;     // seed of the estimator's keys (default 1)
} dsmm_ooc_opts;
DSMM_API void dsmm_ooc_opts_init(dsmm_ooc_opts *opts);

/* One chunk as it ran (dsmm_ooc_info.chunk, in the order they were taken). */
typedef struct dsmm_ooc_chunk_info {
    int row_panel, col_panel;
    dsmm_idx row0, row1, col0, col1; // rows of A and columns of B: [row0, row1) x [col0, col1)
    double flops;                    // multiply-adds
    dsmm_idx nnz;                    // nnz of this chunk of C
    double est_nnz;                  // the plan's estimate of it
    size_t est_bytes, bytes;         // working set: planned, and measured
    int on_gpu;                      // 1: ran on the device
    double seconds_compute, seconds_transfer, seconds_hidden; // see dsmm_ooc_info
} dsmm_ooc_chunk_info;

/* What an out-of-core product did. */
typedef struct dsmm_ooc_info {
    int row_panels, col_panels; // the plan
    int chunks;                 // chunks run (more than row_panels * col_panels when some
                                // were split at run time because they did not fit)
    int chunks_gpu, splits;
    size_t mem_bytes;                // the budget planned for
    size_t max_est_bytes;            // the largest planned chunk working set (<= mem_bytes)
    size_t max_bytes;                // the largest measured one
    double flops, flops_gpu;         // multiply-adds in all, and on the device
    dsmm_idx nnz;                    // nnz(C)
    double gpu_ratio;                // the device's share of the flops that was aimed at (measured
                                     // when auto)
    double seconds_plan;             // estimate, panels, flops per chunk, cuts
    double seconds_assemble;         // chunks into one CSR
    double seconds;                  // the whole call
    double seconds_gpu, seconds_cpu; // wall time of each side's executor
    double seconds_compute;          // device: kernel time summed over chunks (events)
    double seconds_transfer;         // device: copy time summed over chunks
    double seconds_hidden;           // device: kernel time that ran under transfers
    double hidden_fraction;          // seconds_hidden / seconds_compute (0 without device chunks)
    dsmm_ooc_chunk_info *chunk;      // `chunks` entries; free with dsmm_free (NULL if info was not
                                     // asked for or the call failed)
} dsmm_ooc_info;

/* dsmm_csr_spgemm_ooc: C = A * B computed in chunks C[i][j] = A[i] * B[j] (A in row panels,
 * B in column panels), each within ooc->mem_bytes, on the CPU threads, on the device, or on
 * both at once (hybrid); chunks run largest flops first and are assembled into one CSR that
 * equals the in-core product (same pattern, values within rounding; with one accumulator
 * kind the same bits). opts as dsmm_csr_spgemm_ex (NULL = defaults) except masks; ooc NULL =
 * defaults; info may be NULL (else free info->chunk with dsmm_free).
 * Errors: as dsmm_csr_spgemm_ex; DSMM_ERR_UNSUPPORTED for a mask, or use_gpu without a device
 * on ctx; DSMM_ERR_ARG for hybrid without use_gpu, a gpu_ratio above 1, panel counts larger
 * than A's rows or B's columns; DSMM_ERR_NOMEM when the budget cannot hold one row of A
 * against one column panel (the message names the row and the bytes it needs). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spgemm_ooc(dsmm_ctx *ctx, const dsmm_csr *A,
                                                        const dsmm_csr *B,
                                                        const dsmm_spgemm_opts *opts,
                                                        const dsmm_ooc_opts *ooc, dsmm_csr **C,
                                                        dsmm_ooc_info *info);

/* ------------------------------------------------------------------------------------------ */
/* Local SpMM: C = alpha * op(A) * B + beta * C, A sparse, B and C dense (threads inside)     */
/* ------------------------------------------------------------------------------------------ */

/* Kernels (docs/kernels.md). ROW: each row of C gathers the rows of B that A's row names; the
 * k columns are blocked so a block of C's row stays in registers; bitwise the same result
 * at any thread count. COL: each column of op(A) scatters one row of B into the rows of C it
 * names (the CoLa column-wise form: every row of B is read once); no atomics: threads own
 * disjoint row ranges of C (bitwise the same at any thread count) or, when op(A)'s columns
 * are short, split them and add private copies of C (the same bits at a given thread
 * count, last bits may differ between counts). AUTO: COL when transpose_a (A^T * B without forming
 * A^T), else ROW. REF: the single-threaded reference. GPU: dsmm's CUDA kernels, CUSPARSE:
 * cusparseSpMM (both need dsmm_ctx_set_gpu; AUTO sends large products there once it is set). */
typedef enum dsmm_spmm_alg {
    DSMM_SPMM_AUTO = 0,
    DSMM_SPMM_ROW,
    DSMM_SPMM_COL,
    DSMM_SPMM_REF,
    DSMM_SPMM_GPU,      // dsmm's CUDA kernels (needs dsmm_ctx_set_gpu)
    DSMM_SPMM_CUSPARSE, // cusparseSpMM, the reference the GPU kernels are checked against
    DSMM_SPMM_ALG_COUNT
} dsmm_spmm_alg;

/* Names "auto" "row" "col" "ref" "gpu" "cusparse". Errors: DSMM_ERR_ARG for other names. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spmm_alg_from_name(const char *name, dsmm_spmm_alg *alg);
DSMM_API const char *dsmm_spmm_alg_name(dsmm_spmm_alg alg);

/* A sparse operand prepared for column-wise SpMM (dsmm_spmm_tiles_create): the entries of
 * S = op(A)^T, a copy, grouped into tiles of C's rows (32 KiB of C a tile) and, within a tile,
 * by row of C within windows of B's rows (as many rows of B as the last-level cache holds):
 * each row of C is loaded once a window, receives its entries in S's row order in registers,
 * and is stored once (docs/kernels.md, "Column-wise on tiles", "Rows of C within windows").
 * Built once, for products repeated with the same A (CoLa's remote chunks, GNN layers and
 * epochs); the result is bitwise that of the column-wise kernel on one thread. */
typedef struct dsmm_spmm_tiles dsmm_spmm_tiles;

/* A sparse operand prepared for row-wise SpMM (dsmm_spmm_rows_create): A's rows, a copy, stored
 * in another order: within each block of 4096 rows, by their entry count (where that pays). The
 * row-wise kernel's loops over a row's entries then run the same trip count row after row, and
 * their exits predict; on graphs of short rows of mixed lengths the plain order mispredicts about
 * once a row (docs/kernels.md, "Rows by length"). Each row of C is still computed whole from its
 * row of A, in A's entry order, and written in place: the result is bitwise that of the row-wise
 * kernel on A, at any thread count. Built once, for products repeated with the same A (GNN
 * layers and epochs, block iterative methods). */
typedef struct dsmm_spmm_rows dsmm_spmm_rows;

/* Options of dsmm_csr_spmm; dsmm_spmm_opts_init sets AUTO, no transpose, alpha 1, beta 0,
 * k_block 0 (auto), no tiles, no rows. */
typedef struct dsmm_spmm_opts {
    dsmm_spmm_alg alg;
    int transpose_a; // 1: C = alpha * A^T * B + beta * C, A^T never formed by AUTO and COL
                     // (ROW with transpose_a, and COL without, transpose A into scratch first)
    double alpha;
    double beta;      // 0: C is only written (NaN or garbage in C does not spread)
    dsmm_idx k_block; // columns per pass: 0 = auto and -1 = one pass (the same since slicing
                      // measured slower everywhere, docs/kernels.md); > 0 = passes of that
                      // many columns
    const dsmm_spmm_tiles *tiles; // non-NULL: the column-wise kernel (alg COL or AUTO) reads
                                  // these tiles, made from this A with this transpose_a,
                                  // instead of A (A then only checks shapes and counts)
    const dsmm_spmm_rows *rows;   // non-NULL: the row-wise kernel (alg ROW or AUTO, no
                                  // transpose) reads these rows, made from this A, instead
                                  // of A (A then only checks shapes and counts)
} dsmm_spmm_opts;
DSMM_API void dsmm_spmm_opts_init(dsmm_spmm_opts *opts);

/* What a multiply did, and how it compares with the memory-bandwidth floor. */
typedef struct dsmm_spmm_info {
    dsmm_spmm_alg alg;       // the kernel that ran (ROW or COL for AUTO)
    int threads;             // threads used
    double flops;            // 2 * nnz(A) * k (a multiply and an add per entry and column)
    double bytes;            // compulsory traffic: A, B and C each moved once (dsmm_spmm_bytes)
    double seconds;          // the whole call
    double gbps;             // bytes / seconds / 1e9
    size_t workspace_bytes;  // scratch held at the peak (converted values, a transpose)
    dsmm_idx k_block;        // columns per pass (k when one pass)
    int passes;              // passes over the sparse operand
    int on_gpu;              // 1: the product ran on the GPU
    int gpu_variant;         // GPU: 0 row-split (a warp or sub-warp per row), 1 nnz-split
    double seconds_transfer; // GPU: host<->device copies (device events)
    double seconds_device;   // GPU: the multiply alone, inputs already on the device (events)
    size_t device_bytes;     // GPU: device pool bytes held at the peak of this product
} dsmm_spmm_info;

/* dsmm_csr_spmm: C = alpha * op(A) * B + beta * C. B and C are row-major dense (dsmm_dense)
 * with leading dimensions (sub-blocks of bigger matrices work, nothing is copied), of one
 * type, FLOAT or DOUBLE; products accumulate in that type. A may be pattern (values 1), float
 * or double, with 32- or 64-bit columns; values of another type than B's are converted into
 * scratch. Shapes: op(A) is m x n, B n x k, C m x k. opts NULL = defaults; info may be NULL.
 * Errors: DSMM_ERR_DIM (shapes); DSMM_ERR_ARG (B and C of different or invalid types, C
 *         overlapping B, non-finite alpha or beta, unknown kernel, opts->tiles not made
 *         from this A, transpose_a and B's type, or with a kernel other than COL or AUTO;
 *         opts->rows not made from this A and B's type, or with transpose_a, tiles or a
 *         kernel other than ROW or AUTO);
 *         DSMM_ERR_UNSUPPORTED (GPU in a build without CUDA); DSMM_ERR_NOMEM. On error C's
 *         contents are undefined. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_spmm(dsmm_ctx *ctx, const dsmm_csr *A,
                                                  const dsmm_dense *B, dsmm_dense *C,
                                                  const dsmm_spmm_opts *opts, dsmm_spmm_info *info);

/* dsmm_spmm_tiles_create: A (transpose_a as the products will pass it) prepared for the
 * column-wise kernel, for products with about k columns of `type` (FLOAT or DOUBLE) values:
 * k and the type size the tiles (any k then works); A's values are converted to `type` (none
 * kept for a pattern A). The tiles copy A's entries: later changes to A do not reach them.
 * Errors: DSMM_ERR_ARG (invalid A, type or k < 1), DSMM_ERR_NOMEM. On error *tiles is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spmm_tiles_create(dsmm_ctx *ctx, const dsmm_csr *A,
                                                           int transpose_a, dsmm_idx k,
                                                           dsmm_type type, dsmm_spmm_tiles **tiles);
/* dsmm_spmm_tiles_bytes: the memory the tiles hold (0 for NULL). */
DSMM_API size_t dsmm_spmm_tiles_bytes(const dsmm_spmm_tiles *tiles);
/* dsmm_spmm_tiles_destroy: frees the tiles and sets *tiles to NULL (NULL and *NULL ok). */
DSMM_API void dsmm_spmm_tiles_destroy(dsmm_spmm_tiles **tiles);

/* dsmm_spmm_rows_create: A prepared for the row-wise kernel (A * B, not transposed) for
 * products with about k columns of `type` (FLOAT or DOUBLE) values. k, the type and A's row
 * lengths decide whether the rows are stored by length: where rows of B take at most 64
 * bytes and A's rows are short and of mixed lengths (graphs); otherwise they keep A's order
 * (any k then works, with the same bits). A's values are converted to `type` (none kept for a
 * pattern A), columns kept in 32 bits where A's column count allows. The rows copy A's
 * entries: later changes to A do not reach them. Memory: about A's own size plus 8 bytes a
 * row (dsmm_spmm_rows_bytes).
 * Errors: DSMM_ERR_ARG (invalid A or type, k < 1), DSMM_ERR_NOMEM. On error *rows is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spmm_rows_create(dsmm_ctx *ctx, const dsmm_csr *A,
                                                          dsmm_idx k, dsmm_type type,
                                                          dsmm_spmm_rows **rows);
/* dsmm_spmm_rows_bytes: the memory the rows hold (0 for NULL). */
DSMM_API size_t dsmm_spmm_rows_bytes(const dsmm_spmm_rows *rows);
/* dsmm_spmm_rows_by_length: 1 if the rows are stored by their entry count, 0 if in A's order
 * (or rows is NULL). */
DSMM_API int dsmm_spmm_rows_by_length(const dsmm_spmm_rows *rows);
/* dsmm_spmm_rows_destroy: frees the rows and sets *rows to NULL (NULL and *NULL ok). */
DSMM_API void dsmm_spmm_rows_destroy(dsmm_spmm_rows **rows);

/* dsmm_spmm_bytes: the compulsory traffic of C = alpha * op(A) * B + beta * C with k columns of
 * values of `type` (FLOAT or DOUBLE): A's row pointers, columns and values (none for pattern)
 * once, B (ncols(op(A)) x k) once, C (nrows(op(A)) x k) written once and, when beta != 0, read
 * once. Returns 0 for an invalid A or type. */
DSMM_API double dsmm_spmm_bytes(const dsmm_csr *A, int transpose_a, dsmm_idx k, dsmm_type type,
                                double beta);

/* dsmm_stream_triad: the machine's memory bandwidth as STREAM's triad a[i] = b[i] + s * c[i]
 * measures it, over three arrays of `bytes` each (0 = 64 MiB, well past the last-level cache),
 * with the context's threads; best of `repeats` (0 = 5) after a warm-up, counting 3 arrays
 * moved per pass, in GB/s (1e9 bytes). Errors: DSMM_ERR_ARG; DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stream_triad(dsmm_ctx *ctx, size_t bytes, int repeats,
                                                      double *gbps);

/* ------------------------------------------------------------------------------------------ */
/* Matrix summary (dsmm info)                                                                  */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmm_summary {
    dsmm_idx nrows, ncols, nnz;
    int pattern_symmetric; // A's pattern equals A^T's (square only)
    int value_symmetric;   // A == A^T
    int skew_symmetric;    // A == -A^T
    dsmm_idx diag_nnz;     // stored diagonal entries
    dsmm_idx empty_rows, empty_cols;
    dsmm_idx row_deg_min, row_deg_max, col_deg_min, col_deg_max;
    double row_deg_mean, col_deg_mean;
    double flops_aa; // sum_k nnz(A(:,k)) * nnz(A(k,:)) (exact below 2^53; -1 if not square)
    int procs;       // tile grid pr x pc used for the imbalance (pr * pc == procs)
    int grid_rows, grid_cols;
    dsmm_idx tile_nnz_max;
    double tile_nnz_avg, tile_imbalance; // max / avg over the grid's tiles
    double val_min, val_max;             // over stored values (1, 1 for pattern)
    int has_nonfinite;
} dsmm_summary;

/* dsmm_grid_dims: pr x pc == procs with pr <= pc and pr as large as possible (as square as
 * possible). Errors: DSMM_ERR_ARG if procs < 1. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_grid_dims(int procs, int *pr, int *pc);

/* dsmm_csr_summary: the numbers above; procs >= 1 picks the tile grid (dsmm_grid_dims). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_summary(dsmm_ctx *ctx, const dsmm_csr *A, int procs,
                                                     dsmm_summary *s);

/* ------------------------------------------------------------------------------------------ */
/* Statistics records (JSON with stable keys, DESIGN.md "Every run is measured")              */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmm_stats dsmm_stats;

/* dsmm_stats_create: a record for operation op ("spgemm", "spmm", "mcl", "gcn", "read", ...). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_create(dsmm_ctx *ctx, const char *op,
                                                      dsmm_stats **out);
DSMM_API void dsmm_stats_destroy(dsmm_stats **s);
/* Stable keys: algo, ranks, threads, seconds, io_seconds, flops, nnz_in, nnz_out, peak_bytes,
 * bytes_sent. dsmm_stats_set_* also accept any other key, written after the stable ones. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_set_num(dsmm_stats *s, const char *key, double v);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_set_int(dsmm_stats *s, const char *key, int64_t v);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_set_str(dsmm_stats *s, const char *key,
                                                       const char *v);
/* dsmm_stats_json: the record as one JSON object (new string, free with dsmm_free). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_json(const dsmm_stats *s, char **json);
/* dsmm_stats_write: the JSON to path ("-" = stdout), atomically. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_stats_write(const dsmm_stats *s, const char *path);

/* ------------------------------------------------------------------------------------------ */
/* Counter-based random numbers: stream s, position k -> value, independent of threads        */
/* ------------------------------------------------------------------------------------------ */

typedef struct dsmm_rng {
    uint64_t key;     // from the seed
    uint64_t stream;  // e.g. a row or an edge block
    uint64_t counter; // position in the stream
} dsmm_rng;

/* dsmm_rng_init: the stream `stream` of seed `seed`, at position 0. */
DSMM_API void dsmm_rng_init(dsmm_rng *r, uint64_t seed, uint64_t stream);
/* dsmm_rng_u64 / dsmm_rng_uniform: next 64 random bits / double in [0, 1) (53 bits). */
DSMM_API uint64_t dsmm_rng_u64(dsmm_rng *r);
DSMM_API double dsmm_rng_uniform(dsmm_rng *r);
/* dsmm_rng_at: the value at (seed, stream, position) without state. */
DSMM_API uint64_t dsmm_rng_at(uint64_t seed, uint64_t stream, uint64_t position);

/* ------------------------------------------------------------------------------------------ */
/* Distributed matrices and products (src/dist/, over the comm layer; collective calls)       */
/* ------------------------------------------------------------------------------------------ */

/* Process grids. A distributed matrix lives on a pr x pc grid of the context's ranks
 * (pr * pc == dsmm_ctx_size): rows split into pr equal blocks, columns into pc equal blocks
 * (the first n % p blocks one longer), and tile (i, j) belongs to rank i * pc + j
 * (ScaLAPACK's row-major grid). pr = P, pc = 1 is the 1D row layout. Passing pr = pc = 0 to a
 * call below takes the context's grid (dsmm_ctx_set_grid; default dsmm_grid_dims(P)). */

/* dsmm_ctx_set_grid: the default grid of new distributed matrices; 0 x 0 = as square as
 * possible. Errors: DSMM_ERR_ARG unless pr * pc == size (or both 0). Local (not collective),
 * but every rank must set the same grid. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_set_grid(dsmm_ctx *ctx, int pr, int pc);

/* dsmm_ctx_set_workgroup_size: ranks r with equal r / n form a workgroup (emulated nodes);
 * 0 (default) = ranks that share memory (MPI_Comm_split_type SHARED). Traffic counters split
 * bytes and messages by intra/inter workgroup. Every rank must set the same n. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_set_workgroup_size(dsmm_ctx *ctx, int n);
/* dsmm_ctx_workgroup: the workgroup (its lowest rank) of rank r of the context. */
DSMM_API int dsmm_ctx_workgroup(const dsmm_ctx *ctx, int r);

/* Traffic counters of this rank since the context was made (every send, receive, broadcast
 * and one-sided call of dsmm; [0] intra-workgroup, [1] inter-workgroup). Counts are logical
 * point-to-point volumes: a broadcast of b bytes to q other ranks counts b x q sent at the
 * root and b received at each of the q. Control messages (status agreement, sizes, stats)
 * are counted apart in ctl_*. */
typedef struct dsmm_traffic {
    int64_t bytes_sent[2], bytes_recv[2];
    int64_t msgs_sent[2], msgs_recv[2];
    int64_t rma_bytes[2], rma_calls[2]; // one-sided gets/puts/atomics issued by this rank
    int64_t ctl_bytes, ctl_msgs;
} dsmm_traffic;
DSMM_API void dsmm_ctx_traffic(const dsmm_ctx *ctx, dsmm_traffic *t);

/* A distributed sparse matrix: a CSR tile per rank (columns numbered from the tile's first
 * column; 32-bit when the tile has at most 2^31 - 1 columns), rows sorted. Opaque. */
typedef struct dsmm_dist dsmm_dist;

/* dsmm_dist_scatter: the matrix A held by rank root (ignored elsewhere; may be NULL there)
 * cut into tiles of a pr x pc grid. Collective.
 * Errors: DSMM_ERR_ARG (bad root or grid, A NULL on root); DSMM_ERR_NOMEM. Every rank
 *         returns the same status; on error *out is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_scatter(dsmm_ctx *ctx, int root, const dsmm_csr *A,
                                                      int pr, int pc, dsmm_dist **out);

/* dsmm_dist_from_coo: an nrows x ncols matrix from entries that any rank may hold (global
 * indices in T; T may be NULL or empty on some ranks); repeated (i, j), also across ranks,
 * follow dup. Collective. Errors: DSMM_ERR_ARG (entry outside the matrix, ranks disagreeing
 * on the shape); DSMM_ERR_FORMAT (repeated entry with DSMM_DUP_ERROR, as dsmm_coo_to_csr);
 * DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_from_coo(dsmm_ctx *ctx, dsmm_idx nrows,
                                                       dsmm_idx ncols, const dsmm_coo *T,
                                                       dsmm_dup dup, int pr, int pc,
                                                       dsmm_dist **out);

/* dsmm_dist_read: reads a file in parallel. Matrix Market (coordinate): every rank reads and
 * parses its own byte range (gzip files: each rank decompresses, then parses its range);
 * binary: every rank reads the rows it needs; abc files, pipes and other non-regular files:
 * rank 0 reads and scatters (abc labels are not returned: use dsmm_read for them). info
 * (may be NULL) as dsmm_read fills it. Collective.
 * Errors: as dsmm_read, with the file and line of the first bad line (of the lowest rank
 * that found one) reported on every rank; DSMM_ERR_UNSUPPORTED for Matrix Market array
 * (dense) files (dsmm_read_dense reads those). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_read(dsmm_ctx *ctx, const char *path,
                                                   const dsmm_read_opts *opts, int pr, int pc,
                                                   dsmm_dist **out, dsmm_file_info *info);

/* dsmm_dist_gather: the whole matrix on rank root (*out NULL on the other ranks). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_gather(dsmm_ctx *ctx, const dsmm_dist *A, int root,
                                                     dsmm_csr **out);

/* dsmm_dist_write: writes A to path (format from opts or the name, as dsmm_write); Matrix
 * Market is written in parallel (every rank writes its rows at its offset, rows in order),
 * other formats through rank 0. Atomic: a temporary name renamed on success. Collective. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_write(dsmm_ctx *ctx, const char *path,
                                                    const dsmm_dist *A,
                                                    const dsmm_write_opts *opts);

/* dsmm_dist_redistribute: the same matrix on another grid (e.g. 2D <-> 1D rows). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_redistribute(dsmm_ctx *ctx, const dsmm_dist *A,
                                                           int pr, int pc, dsmm_dist **out);

/* dsmm_dist_permute: B(perm[i], perm[j]) = A(i, j) (square A; perm a permutation of
 * 0..n-1, the same on every rank), on A's grid. dsmm_perm_random makes a random perm from a
 * seed (the same on every rank) and dsmm_perm_invert its inverse (undo with the inverse).
 * Random symmetric permutation balances the tiles of skewed graphs (CombBLAS's habit). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_permute(dsmm_ctx *ctx, const dsmm_dist *A,
                                                      const dsmm_idx *perm, dsmm_dist **out);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_perm_random(dsmm_ctx *ctx, dsmm_idx n, uint64_t seed,
                                                     dsmm_idx **perm);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_perm_invert(dsmm_ctx *ctx, dsmm_idx n,
                                                     const dsmm_idx *perm, dsmm_idx **inv);

DSMM_API void dsmm_dist_destroy(dsmm_dist **A);
DSMM_API dsmm_idx dsmm_dist_nrows(const dsmm_dist *A);
DSMM_API dsmm_idx dsmm_dist_ncols(const dsmm_dist *A);
DSMM_API dsmm_idx dsmm_dist_nnz(const dsmm_dist *A); // over all ranks
DSMM_API dsmm_type dsmm_dist_type(const dsmm_dist *A);
DSMM_API void dsmm_dist_grid(const dsmm_dist *A, int *pr, int *pc);
/* dsmm_dist_local: this rank's tile and the global index of its first row and column. */
DSMM_API const dsmm_csr *dsmm_dist_local(const dsmm_dist *A, dsmm_idx *row0, dsmm_idx *col0);

/* A distributed dense matrix (tall-skinny B and C of SpMM), tiled like dsmm_dist; pr x 1 is
 * the 1D row layout. Each tile is row-major with ld == its column count. Opaque. */
typedef struct dsmm_dist_dense dsmm_dist_dense;

/* dsmm_dist_dense_create: zeros. dsmm_dist_dense_scatter / _gather: from / to rank root. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_dense_create(dsmm_ctx *ctx, dsmm_idx nrows,
                                                           dsmm_idx ncols, dsmm_type type, int pr,
                                                           int pc, dsmm_dist_dense **out);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_dense_scatter(dsmm_ctx *ctx, int root,
                                                            const dsmm_dense *B, int pr, int pc,
                                                            dsmm_dist_dense **out);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_dense_gather(dsmm_ctx *ctx, const dsmm_dist_dense *B,
                                                           int root, dsmm_dense **out);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_dense_redistribute(dsmm_ctx *ctx,
                                                                 const dsmm_dist_dense *B, int pr,
                                                                 int pc, dsmm_dist_dense **out);
DSMM_API void dsmm_dist_dense_destroy(dsmm_dist_dense **B);
/* dsmm_dist_dense_local: this rank's tile (writable) and the global index of its first row
 * and column. */
DSMM_API dsmm_dense *dsmm_dist_dense_local(dsmm_dist_dense *B, dsmm_idx *row0, dsmm_idx *col0);
DSMM_API void dsmm_dist_dense_dims(const dsmm_dist_dense *B, dsmm_idx *nrows, dsmm_idx *ncols,
                                   int *pr, int *pc);

/* Distributed algorithms (names shared by the CLI: --algo summa). */
/* Distributed algorithms (RDMA paper §2-§3; docs/dist.md). The one-sided ones pull the tiles
 * they need with MPI-3 gets and run without lockstep stages; "stationary X" means work is
 * assigned by who owns X's tiles. Names (dsmm_dist_alg_name / _from_name, --algo) in
 * comments. */
typedef enum dsmm_dist_alg {
    DSMM_DIST_AUTO = 0,        // "auto": picked from the model (docs/dist.md "Choosing")
    DSMM_DIST_SUMMA = 1,       // "summa": bulk-synchronous Sparse SUMMA
    DSMM_DIST_RDMA_C = 2,      // "rdma-c": stationary C, gets of A and B tiles
    DSMM_DIST_RDMA_A = 3,      // "rdma-a": stationary A, partial C through remote queues
    DSMM_DIST_RDMA_B = 4,      // "rdma-b": stationary B, partial C through remote queues
    DSMM_DIST_WS_RANDOM_A = 5, // "ws-random-a": stationary A + random work stealing (2D claims)
    DSMM_DIST_WS_LOCAL_A = 6,  // "ws-local-a": stationary A + locality-aware stealing (3D)
    DSMM_DIST_WS_LOCAL_C = 7   // "ws-local-c": stationary C + locality-aware stealing (3D)
} dsmm_dist_alg;
DSMM_API DSMM_NODISCARD dsmm_status dsmm_dist_alg_from_name(const char *name, dsmm_dist_alg *alg);
DSMM_API const char *dsmm_dist_alg_name(dsmm_dist_alg alg);

/* How SUMMA SpGEMM accumulates a rank's C tile over the stages. MERGE keeps one partial
 * product per stage and merges them at the end with a k-way heap merge (HipMCL's baseline):
 * memory for the partial products (up to the flops). FUSED keeps the pieces it receives and
 * multiplies once at the end, the stages concatenated: no partial products and no merge,
 * memory for the received pieces instead (a row block of A and a column block of B). AUTO:
 * FUSED when the received pieces fit in the memory budget, else MERGE (never BINARY). BINARY
 * is HipMCL-GPU's binary merge (§IV, Algorithm 2): the partial products go on a stack and
 * after stage i with t >= 1 trailing zero bits the top t + 1 are merged into one, so merges
 * run during the stages (and overlap the broadcasts with pipeline) and fewer partial products
 * are held at once; the result has MERGE's pattern, and the same values up to the grouping of
 * each entry's sum (bit-identical with at most 5 stages, or for min/max adds). The
 * broadcasts, and so the bytes moved, are the same. */
typedef enum dsmm_dist_acc {
    DSMM_ACC_AUTO = 0,
    DSMM_ACC_MERGE,
    DSMM_ACC_FUSED,
    DSMM_ACC_BINARY
} dsmm_dist_acc;

/* Options of dsmm_spgemm_ex / dsmm_spmm_ex; dsmm_dist_opts_init sets the defaults. */
typedef struct dsmm_dist_opts {
    dsmm_dist_alg alg;
    int prefetch;             // 1: post stage s+1's broadcasts (MPI_Ibcast; one-sided: the next
                              // item's gets) before multiplying stage s, overlapping
                              // communication with computation
    dsmm_dist_acc accumulate; // SpGEMM: merge partial products (k-way or binary), or one
                              // fused multiply
    dsmm_spgemm_opts spgemm;  // local SpGEMM kernel options (alg, semiring, type); a mask and
                              // transpose_b are not supported in distributed products
    dsmm_spmm_opts spmm;      // local SpMM kernel options (alg, k_block); alpha, beta and
                              // transpose_a are not supported in distributed products
    dsmm_stats *stats;        // non-NULL: filled with the run's statistics on every rank
    int queue_capacity;       // one-sided algorithms: slots of each rank's accumulation queue
                              // (0: 64); any capacity >= 1 works, small ones only wait more
    int pipeline;             // SUMMA SpGEMM, MERGE or BINARY: 1 runs stage s's multiply (and
                              // merge) on the other threads while the calling thread broadcasts
                              // stage s+1 (Pipelined Sparse SUMMA, HipMCL-GPU §III); needs
                              // MPI_THREAD_FUNNELED and 2 threads, else prefetch's MPI_Ibcast.
                              // Results are the same as without.
    int gpu_resident;         // With a device on the context (dsmm_ctx_set_gpu): 1 keeps C's
                              // tile on the device. SpGEMM: the tile's partial products stay
                              // there, merged there (a fixed binary tree over the stages: the
                              // binary schedule in stage order, the same sum in any order of
                              // arrival). SpMM: the dense tile lives there and every product
                              // is added into it there. Either way C's tile is downloaded
                              // once. SUMMA multiplies every stage on the device, and received
                              // pieces land in device memory when MPI is CUDA-aware
                              // (dsmm_mpi_cuda_aware), else they are uploaded; the one-sided
                              // algorithms multiply their own tile's items on the device and
                              // upload the partials they fetch. AUTO picks SUMMA. Needs the
                              // local kernel (spgemm.alg or spmm.alg) AUTO or GPU, and for
                              // SpGEMM accumulate other than FUSED. 0 (default): each product
                              // or partial comes back to the host.
} dsmm_dist_opts;
DSMM_API void dsmm_dist_opts_init(dsmm_dist_opts *opts);

/* dsmm_spgemm: C = A * B for distributed matrices on the same grid (C on that grid).
 * Collective on the communicator of ctx.
 * Ownership: *C is new and belongs to the caller (dsmm_dist_destroy); A and B are only read.
 * Errors: DSMM_ERR_DIM if A's columns are not B's rows; DSMM_ERR_ARG for different grids or
 *         unsupported options; DSMM_ERR_NOMEM; DSMM_ERR_MPI.
 *         On error *C is NULL and every rank returns the same status. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spgemm(dsmm_ctx *ctx, const dsmm_dist *A,
                                                const dsmm_dist *B, dsmm_dist **C);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spgemm_ex(dsmm_ctx *ctx, const dsmm_dist *A,
                                                   const dsmm_dist *B, const dsmm_dist_opts *opts,
                                                   dsmm_dist **C);

/* dsmm_spmm: C = A * B, A distributed sparse, B distributed dense on A's grid (B's rows in
 * pr blocks, its columns in pc blocks; 1D when pc == 1); C is new, on the same grid, of B's
 * type. Collective. Errors and ownership as dsmm_spgemm. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spmm(dsmm_ctx *ctx, const dsmm_dist *A,
                                              const dsmm_dist_dense *B, dsmm_dist_dense **C);
DSMM_API DSMM_NODISCARD dsmm_status dsmm_spmm_ex(dsmm_ctx *ctx, const dsmm_dist *A,
                                                 const dsmm_dist_dense *B,
                                                 const dsmm_dist_opts *opts, dsmm_dist_dense **C);

/* ------------------------------------------------------------------------------------------ */
/* Markov clustering (MCL)                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Markov clustering as van Dongen's mcl 22-282 does it (docs/mcl.md): the graph's loops are
 * replaced by each column's largest weight, columns made stochastic, then each iteration
 * expands (M * M), prunes every column (threshold 1/P, selection of the S largest, recovery
 * to R when less than pct of the mass is left), inflates (Hadamard power, renormalised) until
 * the chaos drops below 1e-4; the limit is interpreted into clusters by mcl's rules
 * (attractor systems, overlap cut to the first cluster by default, clusters by size). Values
 * are float32 like mcl's, so one rank reproduces mcl's clusters exactly. */

/* How the expansion runs. FUSED: each rank expands and prunes its own columns one at a time,
 * the unpruned product never stored (needs the whole iterate on the rank: one rank only);
 * REPLICATED: every rank gathers the whole iterate, then expands its own columns as FUSED does
 * (mcl's arithmetic, so the same iterates as one rank; memory: the whole iterate per rank);
 * DIST: distributed SpGEMM on the process grid (dist.alg, SUMMA by default), in phases of
 * columns when the unpruned product does not fit per_process_mem, then every column pruned
 * by its owner from the ranks' candidates (top-k selection across ranks). AUTO: FUSED on one
 * rank; on several, per iteration, REPLICATED when its working set fits per_process_mem (or,
 * without one, the rank's share of the node's memory) and neither phases nor dist.pipeline is
 * set, else DIST. */
typedef enum dsmm_mcl_expand {
    DSMM_MCL_AUTO = 0,
    DSMM_MCL_FUSED,
    DSMM_MCL_DIST,
    DSMM_MCL_REPLICATED
} dsmm_mcl_expand;

/* One iteration as measured (dsmm_mcl_result.iters, the progress callback, --stats). */
typedef struct dsmm_mcl_iter {
    int iteration;            // 1-based, initial loop included
    double inflation;         // the power used
    double chaos;             // max over columns of mcl's chaos, after pruning
    double seconds;           // wall time of the iteration
    int64_t nnz_in;           // entries of the iterate multiplied
    int64_t nnz_expand;       // entries of the unpruned product M * M
    int64_t nnz_pruned;       // entries kept by pruning (before inflation)
    int64_t dense_cols;       // columns expanded on mcl's dense path
    int phases;               // expansion phases (1 unless the product did not fit the budget)
    dsmm_mcl_expand expand;   // how this iteration expanded: FUSED, REPLICATED or DIST
    double est_bytes;         // estimated bytes of a rank's unpruned product (DIST)
    double resident_bytes;    // a rank's share of the iterates held beside it (DIST)
    int estimate_keys;        // DIST: what sized the product: 0 the exact count, r Cohen's
                              // estimator with r keys; -1 when nothing was estimated (fused)
    double estimate_seconds;  // DIST: seconds of that estimate or count (largest rank)
    double flops;             // multiply-adds of the expansion (all ranks), every path
    int64_t merge_peak_bytes; // DIST with SUMMA merge/binary: largest peak of the stage
                              // products and merged lists over the phases and ranks
    double merge_seconds;     // DIST with SUMMA merge/binary: time merging (largest rank)
    int64_t peak_bytes;       // largest rank's peak of dsmm-allocated bytes so far
    // DIST: the distributed SpGEMM's time components (docs/dist.md "components": local
    // multiplies, broadcasts, merges, waiting at the end), largest rank, summed over the phases;
    // -1 otherwise.
    double comp_seconds, comm_seconds, acc_seconds, wait_seconds;
    // DIST with the two-thread Pipelined Sparse SUMMA (HipMCL-GPU's Table V), summed over the
    // phases, -1 otherwise: seconds the broadcasting thread waited for the stage multiplies
    // (largest rank), stage products on the GPU (all ranks), and the seconds the device was
    // not busy with them (largest rank; -1 unless gpu_products > 0).
    double cpu_idle_seconds;
    int64_t gpu_products;
    double gpu_idle_seconds;
} dsmm_mcl_iter;

/* mcl's value transforms (its -tf and -abc-tf options, mcxio(5)): a comma-separated list of
 * steps name(value), applied left to right to each weight, in double:
 *   gt(a) gq(a) lt(a) lq(a)  keep the weight when >, >=, <, <= a, else 0
 *   ceil(a) floor(a)         min(w, a), max(w, a)
 *   add(a) mul(a) pow(a)     w + a, w * a, w^a
 *   log() log(b)             ln w, log_b w (of 0: -FLT_MAX, as mcl)
 *   neglog() neglog(b)       -ln w, -log_b w (of 0: FLT_MAX)
 *   exp() exp(b)             e^w, b^w
 *   abs()                    |w|
 * and mcl's graph-wide steps, which act on the whole graph (in dsmm_mcl only, at their place in
 * the list; the count k is the value rounded as mcl does, a + 0.5 truncated):
 *   #knn(k)                  each vertex chooses its k heaviest edges; an edge stays when both
 *                            ends chose it (ties at the k-th weight that would exceed k: none
 *                            of the tied is chosen, as mcl); #knn(0) changes nothing
 *   #knnj(k)                 the same choices; an edge stays when either end chose it
 *   #ceilnb(k)               vertices of more than k neighbours, by degree (highest first, then
 *                            lower number), keep their k heaviest remaining edges; the others go
 *                            (both ways). mcl's order is sequential: with several ranks the rows
 *                            of those vertices are gathered on rank 0
 *   #max() #min() #add()     the graph and its transpose entry by entry (an absent arc is 0):
 *   #mul()                   max, min, sum, product of w and its reverse's weight t
 *   #arcmax()                an arc stays when w >= t
 *   #arcsub() #tp()          w - t (0 leaves); the transpose
 *   #tug()                   mcl's by position: an arc above the diagonal (mcl's row < column)
 *                            replaces its reverse (a value given to these 8 is ignored)
 * Spaces around names, parentheses and commas are allowed. mcl's other graph-wide steps (#step,
 * ...), acos and rand are not supported (DSMM_ERR_UNSUPPORTED, naming the step); a
 * negative count is DSMM_ERR_ARG. neg_log_base
 * > 0 puts mcl's --abc-neg-log (e) or --abc-neg-log10 (10) first: w -> -log_base(w), FLT_MAX /
 * ln(base) for w = 0 (mcl's value), NaN below 0. A weight of 0 after the steps is an entry the
 * clustering does not use (as a 0 in the input). spec may be NULL or "" (no steps).
 * Errors: DSMM_ERR_ARG (syntax: the message quotes the step), DSMM_ERR_UNSUPPORTED,
 *         DSMM_ERR_NOMEM. */
typedef struct dsmm_mcl_tf dsmm_mcl_tf;
DSMM_API DSMM_NODISCARD dsmm_status dsmm_mcl_tf_parse(dsmm_ctx *ctx, const char *spec,
                                                      double neg_log_base, dsmm_mcl_tf **tf);
/* dsmm_mcl_tf_apply: w after the value steps (graph-wide steps are skipped; tf is const void *
 * so that it can be dsmm_read_opts's abc_map_arg, with dsmm_mcl_tf_apply as abc_map).
 * dsmm_mcl_tf_graph_steps: how many graph-wide steps tf has (0 for NULL). */
DSMM_API double dsmm_mcl_tf_apply(const void *tf, double w);
DSMM_API int dsmm_mcl_tf_graph_steps(const dsmm_mcl_tf *tf);
/* dsmm_mcl_tf_spec: the steps as parsed, normalised (no spaces; "" for none). */
DSMM_API const char *dsmm_mcl_tf_spec(const dsmm_mcl_tf *tf);
DSMM_API void dsmm_mcl_tf_destroy(dsmm_mcl_tf **tf);

/* What becomes of a vertex whose DAG reaches several attractor systems (mcl's -overlap):
 * CUT (mcl's default) keeps it in the first system only; KEEP puts it in each of them (the
 * clusters overlap); SPLIT takes the vertices in overlap out and groups them in clusters of
 * their own, as mcl 22-282 does: two vertices together when they reach two systems in common,
 * and so on transitively (a vertex reaching systems 1, 2, 3 joins one reaching 1 and 2). */
typedef enum dsmm_mcl_overlap {
    DSMM_MCL_OVERLAP_CUT = 0,
    DSMM_MCL_OVERLAP_KEEP,
    DSMM_MCL_OVERLAP_SPLIT
} dsmm_mcl_overlap;

/* The order of the clusters (mcl's -sort): REVSIZE (the default) largest first, clusters of one
 * size by their member lists compared element by element (for disjoint clusters: smallest
 * member first); SIZE the exact reverse; LEX by member lists only; NONE the order the
 * interpretation makes them: attractor systems by attractor count, then smallest vertex, and
 * the vertices reaching no system last (when SPLIT took vertices out, mcl 22-282 gives
 * REVSIZE's order, and so does dsmm). */
typedef enum dsmm_mcl_sort {
    DSMM_MCL_SORT_REVSIZE = 0,
    DSMM_MCL_SORT_SIZE,
    DSMM_MCL_SORT_LEX,
    DSMM_MCL_SORT_NONE
} dsmm_mcl_sort;

typedef struct dsmm_mcl_params {
    double inflation;       // -I (2.0); rounded to float as mcl reads it
    double init_inflation;  // -i (2.0), for the init_loop first iterations
    int init_loop;          // -l (0)
    int main_loop;          // -L (10000): most iterations after the initial loop
    int scheme;             // -scheme 1..7 (6): default P, S, R, pct
    int64_t prune_number;   // -P (-1: the scheme's; 0: no threshold pruning)
    int64_t select_number;  // -S (-1: the scheme's; 0: no selection)
    int64_t recover_number; // -R (-1: the scheme's; 0: no recovery)
    int recover_pct;        // -pct 0..99 (-1: the scheme's)
    double loop_scale;      // -c: loops multiplied by |c| (1, the default: unchanged; 0: none)
    double pre_inflation;   // -pi (0: not set)
    int keep_loops;         // 1: the input's loops kept as stored (times |c|) and none added
                            // (mcl's --discard-loops=n); 0 (default): each column's loop set
                            // to its largest other weight (1 if none) whatever was stored
    int symmetrize;         // 1: G := max(G, G^T) first (mcl's --abc reading); default 0
    const dsmm_mcl_tf *tf;  // mcl's -tf: applied to the graph's weights after symmetrize and
                            // before the loops (NULL: none); the caller keeps it
    dsmm_mcl_expand expand; // AUTO
    size_t per_process_mem; // budget of one rank for the expansion (0: unlimited) -> phases
    int phases;             // > 0: this many phases, whatever the budget (testing)
    int estimate_keys;      // DIST: how the unpruned product is sized for the phases: 0 the exact
                            // count (SUMMA's stage products counted, HipMCL's exact scheme),
                            // >= 3 Cohen's estimator with that many keys, -1 (default) auto:
                            // exact when its work (the flops) is below what the estimator's
                            // passes cost (docs/mcl.md, "Phases"), else 8 keys
    dsmm_dist_opts dist;    // DIST: the distributed SpGEMM (alg, accumulate, pipeline, ...)
    void (*progress)(void *user, const dsmm_mcl_iter *it); // after each iteration (rank 0)
    void *progress_user;
    const char *checkpoint_dir; // non-NULL: the iterate and the loop state after each iteration
    const char *resume_dir;     // non-NULL: start from the checkpoint in this directory
    dsmm_mcl_overlap overlap;   // -overlap (CUT)
    dsmm_mcl_sort sort;         // -sort (REVSIZE)
    int force_connected;        // 1: split every cluster into the connected components it
                                // induces in the graph (edges either way, as clustered: after
                                // tf), as mcl's --force-connected=y; the clusters then come
                                // largest first whatever sort says (mcl's order); the
                                // clustering before the split is kept in res->orig_*
    int check_connected;        // 1: count those components (res->components) without
                                // changing the clustering (mcl's --check-connected=y)
    const int64_t *icl;         // non-NULL: mcl's -icl, subclustering: icl[v] is vertex v's
    int64_t icl_n;              // cluster (-1: none; v >= icl_n: none); edges between clusters
                                // go, and within a cluster those not above the median of the
                                // vertex's edges leaving it (when that is below its largest
                                // inside), kept only both ways (docs/mcl.md); before -tf
    int analyze;                // 1: res->analysis = clm info's measures of the clustering
                                // on mcl's start matrix (loops as -c set them, columns
                                // stochastic), as mcl's --analyze=y appends them; the start
                                // matrix is kept until the end (its size again in memory)
} dsmm_mcl_params;
DSMM_API void dsmm_mcl_params_init(dsmm_mcl_params *p);
/* dsmm_mcl_scheme_values: P, S, R, pct of scheme 1..7 (DSMM_ERR_ARG otherwise). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_mcl_scheme_values(int scheme, int64_t *P, int64_t *S,
                                                           int64_t *R, int *pct);

/* What dsmm_clm_info measures, as mcl's clm info (docs/clm.md has the formulas). */
typedef struct dsmm_clm_info_stats {
    dsmm_idx n;          // graph nodes
    dsmm_idx listed;     // nodes in some cluster (the others count in no cluster, as in clm)
    double efficiency;   // eff: mean over listed nodes of van Dongen's coverage
    double modularity;   // mod: Newman's Q on the graph without loops
    double massfrac;     // mf: mean over listed nodes of the fraction of weight inside
    double areafrac;     // af: sum |c| (|c| - 1) / (n (n - 1))
    dsmm_idx nclusters;  // ncl
    dsmm_idx size_max;   // max
    double size_ctr;     // ctr: sum |c|^2 / sum |c|
    double size_avg;     // avg: n / nclusters
    dsmm_idx size_min;   // min
    dsmm_idx dgi;        // DGI: fewest smallest clusters whose sizes add up to max
    dsmm_idx twi, twl;   // TWI: index (largest first) of the cluster where the smallest ones
                         // reach (n + 1) / 2 nodes; TWL: its size
    dsmm_idx singletons; // sgl: clusters of size 1
    dsmm_idx qrt;        // qrt: clusters of size <= 4
} dsmm_clm_info_stats;

typedef struct dsmm_mcl_result {
    int64_t n;        // vertices
    int64_t *cluster; // cluster[v] in 0..nclusters-1, numbered in mcl's output order (with
                      // KEEP overlap: the first cluster that holds v)
    int64_t nclusters;
    int64_t *start;         // nclusters + 1 offsets into members: cluster c is members[start[c] ..
    int64_t *members;       // start[c + 1]), vertices ascending (with KEEP overlap a vertex may be
                            // in several clusters; otherwise every vertex is in exactly one)
    int64_t components;     // force_connected or check_connected: the connected components the
                            // clusters induce (== nclusters when each is connected), else 0
    int64_t orig_nclusters; // force_connected and a cluster was split: the clustering before
    int64_t *orig_start;    // the split (as start/members), for mcl's OUT-rags file; else 0
    int64_t *orig_members;  // and NULL
    int iterations;
    int converged;      // 0: stopped by main_loop
    int64_t attractors; // vertices that attract (limit matrix)
    int64_t overlap;    // vertices in several attractor systems (cut, kept or split by
                        // params.overlap)
    int64_t garbage;    // vertices reaching no attractor, gathered in one cluster
    double seconds;
    dsmm_mcl_iter *iters; // niters entries: the iterations this call ran
    int niters;           // = iterations, or fewer after a resume (the ones since the checkpoint)
    int analyzed;         // params.analyze: 1 and analysis set
    dsmm_clm_info_stats analysis; // efficiency, modularity, mass and area fractions on the
                                  // start matrix (loops as stored there, modularity without
                                  // them), and the cluster sizes, in clm info's terms
} dsmm_mcl_result;

/* dsmm_mcl_run: clusters the graph G (square; G(i, j) = weight of the edge j -> i, mcl's
 * column convention; weights finite and >= 0). Collective on ctx's ranks.
 * Ownership: res's arrays are new (dsmm_mcl_result_free), the same on every rank.
 * Errors: DSMM_ERR_DIM (not square, or over 2^31 - 1 vertices); DSMM_ERR_ARG (bad parameter,
 *         NaN or negative weight, a checkpoint that does not match); DSMM_ERR_NOMEM (including
 *         a per_process_mem too small for one column); DSMM_ERR_IO (checkpoints).
 *         On error res is zeroed and every rank returns the same status. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_mcl_run(dsmm_ctx *ctx, const dsmm_dist *G,
                                                 const dsmm_mcl_params *p, dsmm_mcl_result *res);
/* dsmm_mcl_run_consume: dsmm_mcl_run that takes *G and destroys it (*G = NULL) as soon as the
 * first iterate is built, so the input is not part of the run's peak memory; *G is destroyed
 * on error too. Same results and errors as dsmm_mcl_run. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_mcl_run_consume(dsmm_ctx *ctx, dsmm_dist **G,
                                                         const dsmm_mcl_params *p,
                                                         dsmm_mcl_result *res);
DSMM_API void dsmm_mcl_result_free(dsmm_mcl_result *res);

/* ------------------------------------------------------------------------------------------ */
/* Comparing clusterings (clm)                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* A clustering: a partition of nodes named by a label dictionary (dsmm_labels), read from a
 * cluster file (one cluster per line, as mcl writes them) or built from cluster ids.
 * Invariants: n >= 0; cluster has n entries, each -1 (the node is not in this clustering: the
 * file does not name it) or in 0..nclusters-1; every cluster has at least one member; listed
 * is the number of entries >= 0. Clusters are numbered in file order. */
typedef struct dsmm_clustering {
    dsmm_idx n;         // nodes: the dictionary's size when the clustering was made
    dsmm_idx nclusters; // clusters
    dsmm_idx listed;    // nodes in some cluster
    dsmm_idx *cluster;  // cluster[i]: the cluster of node i, or -1
    dsmm_ctx *ctx;      // the context whose allocator owns the arrays and the struct
} dsmm_clustering;

/* dsmm_clustering_read: reads a cluster file (".gz" decompressed): one cluster per line,
 * members separated by tabs or spaces (mcl --abc -o, dsmm_write_clusters); empty lines are
 * skipped, an empty file has no clusters. mcl's native matrix format ("(mclheader", as
 * mcl -o and mcxload write) is read too: members are node indices, named "0", "1", ...;
 * nodes of its domain that no cluster lists form one more cluster, as clm does.
 * labels names the nodes and is shared between clusterings to compare: when *labels is NULL
 * a new dictionary is created and returned in it; labels not yet in *labels are added when
 * grow != 0, else they are an error (reading against a graph's labels).
 * Ownership: *out is new (dsmm_clustering_destroy); *labels belongs to the caller.
 * Errors: DSMM_ERR_IO (missing, unreadable); DSMM_ERR_FORMAT "path:line: ..." for a node
 *         listed twice (naming it and both lines), an unknown label when grow == 0, a malformed
 *         native file; DSMM_ERR_NOMEM. On error *out is NULL (*labels may have grown). */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_clustering_read(dsmm_ctx *ctx, const char *path,
                                                         dsmm_labels **labels, int grow,
                                                         dsmm_clustering **out);

/* dsmm_clustering_create: the clustering of n nodes given by ids: ids[i] >= 0 is node i's
 * cluster (any numbers; renumbered 0.. in order of first appearance), -1 leaves node i out.
 * Errors: DSMM_ERR_ARG (n < 0, ids NULL with n > 0, an id < -1); DSMM_ERR_NOMEM.
 *         On error *out is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_clustering_create(dsmm_ctx *ctx, dsmm_idx n,
                                                           const dsmm_idx *ids,
                                                           dsmm_clustering **out);
DSMM_API void dsmm_clustering_destroy(dsmm_clustering **C);

/* dsmm_labels_create_index: a dictionary naming n nodes by their 0-based index ("0" .. "n-1"),
 * for reading clusterings of graphs without labels (Matrix Market, binary), whose members
 * dsmm_write_clusters writes as indices. Errors: DSMM_ERR_ARG (n < 0); DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_labels_create_index(dsmm_ctx *ctx, dsmm_idx n,
                                                             dsmm_labels **out);

/* What dsmm_clm_dist measures, as mcl's clm dist: over the nodes that A or B lists; the nodes
 * that only one of them lists form one extra cluster in the other (as clm dist does with
 * clusterings of one domain that miss nodes: "not a partition (fixed ...)").
 * _ab is the distance from A to the meet (the largest common subclustering), _ba from B. */
typedef struct dsmm_clm_dist_stats {
    dsmm_idx n;                        // nodes compared
    dsmm_idx nclusters_a, nclusters_b; // clusters, with the extra one where nodes were missing
    dsmm_idx only_a, only_b;           // nodes that only A (only B) lists
    dsmm_idx sj, sj_ab, sj_ba;         // split/join: sj_ab = n - sum_a max_b |a & b|
    double vi, vi_ab, vi_ba;           // variation of information, natural log: H(B|A), H(A|B)
    dsmm_idx mk, mk_ab, mk_ba;         // Mirkin: mk_ab = sum_a |a|^2 - sum_ab |a & b|^2
    double rand, jaccard, ari;         // pair counting: Rand, Jaccard, adjusted Rand (Hubert-
                                       // Arabie); 1 where clm divides 0 by 0 (identical)
} dsmm_clm_dist_stats;

/* dsmm_clm_dist: compares clusterings A and B of nodes of one dictionary (A->n and B->n may
 * differ: nodes beyond one's n are not in it). O(n + clusters).
 * Errors: DSMM_ERR_ARG (NULL); DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_clm_dist(dsmm_ctx *ctx, const dsmm_clustering *A,
                                                  const dsmm_clustering *B,
                                                  dsmm_clm_dist_stats *out);

/* dsmm_clm_info: scores clustering C on graph G (square; row i holds node i's neighbours with
 * their weights, pattern entries weigh 1; give an undirected graph both directions), as clm
 * info does: every node's loop is set to the largest weight of its row (1 when it has none).
 * C->n may be less than G->nrows (the rest are in no cluster). O(nnz(G) + n).
 * Errors: DSMM_ERR_ARG (NULL); DSMM_ERR_DIM (G not square, C->n > G->nrows); DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_clm_info(dsmm_ctx *ctx, const dsmm_csr *G,
                                                  const dsmm_clustering *C,
                                                  dsmm_clm_info_stats *out);

/* ------------------------------------------------------------------------------------------ */
/* Graph reordering                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Vertex orderings that make a graph's adjacency closer to block diagonal (docs/cola.md).
 * RCM: reverse Cuthill-McKee (bandwidth). RABBIT: community-aware, Rabbit Order's incremental
 * aggregation (Arai et al., IPDPS'16): vertices in increasing degree order merge into the
 * neighbouring community of largest positive modularity gain, and the dendrogram of merges is
 * numbered depth first, so each community gets consecutive numbers. Names: "none", "rcm",
 * "rabbit". */
typedef enum dsmm_reorder {
    DSMM_REORDER_NONE = 0,
    DSMM_REORDER_RCM,
    DSMM_REORDER_RABBIT
} dsmm_reorder;
DSMM_API DSMM_NODISCARD dsmm_status dsmm_reorder_from_name(const char *name, dsmm_reorder *r);
DSMM_API const char *dsmm_reorder_name(dsmm_reorder r);

/* dsmm_csr_reorder: a permutation of square A's vertices: *perm (new, dsmm_free; n entries)
 * gives the new number of vertex v as perm[v], the convention of dsmm_dist_permute. The graph
 * is the pattern of A + A^T without loops (values and direction ignored). NONE: identity.
 * Deterministic (the same A gives the same perm). Errors: DSMM_ERR_ARG (NULL, bad kind);
 * DSMM_ERR_DIM (not square); DSMM_ERR_NOMEM. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_csr_reorder(dsmm_ctx *ctx, const dsmm_csr *A,
                                                     dsmm_reorder kind, dsmm_idx **perm);

/* ------------------------------------------------------------------------------------------ */
/* 1D distributed SpMM (CoLa) for GNN aggregation                                              */
/* ------------------------------------------------------------------------------------------ */

/* C = A * B with A split into P row blocks balanced by nnz, B and C in the matching row panels
 * (CoLa, Zhang et al. ICS'25; docs/cola.md). Rank i's block is its local chunk (LSC: columns
 * of its own panel) and its remote chunk (RSC). The algorithms (names for --algo):
 *  COLA ("cola"): the RSC multiplied column-wise from a buffer where every needed remote row
 *    of B arrives exactly once per multiply; ranks grouped in workgroups (the context's,
 *    dsmm_ctx_set_workgroup_size) receive the rows of another workgroup once per workgroup
 *    (at the rank of the same local rank) and read each other's buffers through a shared
 *    memory window; W stages, stage j+1's transfers overlapping stage j's multiply.
 *  COLA_NOFUSION ("cola-nofusion"): every rank receives exactly the rows it needs from each
 *    owner, one coalesced transfer per pair (opts.comm: MPI_Alltoallv, MPI_Neighbor_alltoallv
 *    or MPI_Put).
 *  BCAST ("bcast-1d"): every panel broadcast to all ranks in turn (CAGNET / MGG-GCN style).
 *  ROWWISE ("rowwise-1d"): the RSC row by row, one MPI_Get of a remote row per nonzero (MGG
 *    style).
 * All give C equal to the serial product up to the order of the sums. */
typedef enum dsmm_cola_alg {
    DSMM_COLA = 0,
    DSMM_COLA_NOFUSION,
    DSMM_COLA_BCAST,
    DSMM_COLA_ROWWISE,
    DSMM_COLA_ALG_COUNT
} dsmm_cola_alg;
DSMM_API DSMM_NODISCARD dsmm_status dsmm_cola_alg_from_name(const char *name, dsmm_cola_alg *alg);
DSMM_API const char *dsmm_cola_alg_name(dsmm_cola_alg alg);

/* Transfer of the coalesced rows in COLA_NOFUSION ("alltoallv", "neighbor", "put"). */
typedef enum dsmm_cola_comm {
    DSMM_COLA_ALLTOALLV = 0,
    DSMM_COLA_NEIGHBOR,
    DSMM_COLA_PUT
} dsmm_cola_comm;
DSMM_API DSMM_NODISCARD dsmm_status dsmm_cola_comm_from_name(const char *name, dsmm_cola_comm *c);
DSMM_API const char *dsmm_cola_comm_name(dsmm_cola_comm c);

typedef struct dsmm_cola_opts {
    dsmm_cola_alg alg;    // COLA
    dsmm_reorder reorder; // NONE: the rows keep A's numbering; else A's vertices renumbered
    dsmm_cola_comm comm;  // ALLTOALLV
    int pipeline;         // COLA: 1 (default) overlaps stage j+1's transfers with stage j
    int balance;          // 1 (default): row blocks of equal nnz; 0: equal row counts
    dsmm_spmm_alg lsc_alg, rsc_alg; // local kernels (AUTO: ROW for the LSC, COL for the
                                    // RSC; with a device on the context, AUTO: each product
                                    // above its threshold runs there, the rest on ROW)
    int gpu_resident; // 1: the rank's C panel lives on the context's device (dsmm_ctx_set_gpu),
                      // every local product added into it there, one download a multiply;
                      // needs lsc_alg and rsc_alg AUTO or GPU; a rank without a device fails
                      // the multiply (DSMM_ERR_UNSUPPORTED, every rank). 0 (default).
} dsmm_cola_opts;
DSMM_API void dsmm_cola_opts_init(dsmm_cola_opts *o);

typedef struct dsmm_cola dsmm_cola; // a plan: the layout, chunks and index lists (opaque)

/* dsmm_cola_create: the plan of square A (any grid; read only) under opts: reorders when
 * asked, moves rows to their balanced blocks, splits LSC / RSC, and builds the index lists
 * of every transfer once (reused by every multiply: GNN layers and epochs). Collective.
 * Errors: DSMM_ERR_ARG (NULL, bad options); DSMM_ERR_DIM (A not square);
 * DSMM_ERR_UNSUPPORTED (COLA with a workgroup whose ranks do not share memory);
 * DSMM_ERR_NOMEM; DSMM_ERR_MPI. Every rank returns the same status. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_cola_create(dsmm_ctx *ctx, const dsmm_dist *A,
                                                     const dsmm_cola_opts *opts, dsmm_cola **out);
DSMM_API void dsmm_cola_destroy(dsmm_cola **plan);

/* dsmm_cola_rows: this rank's panel: rows [row0, row0 + nrows) of the plan's numbering, and
 * (vertex may be NULL) the vertex of A each of them is: vertex[r] = original index of local
 * row r (the identity shifted by row0 without reordering). */
DSMM_API void dsmm_cola_rows(const dsmm_cola *plan, dsmm_idx *row0, dsmm_idx *nrows,
                             const dsmm_idx **vertex);
/* dsmm_cola_perm: perm[v] = the plan's number of vertex v of A (n entries, every rank), or
 * NULL without reordering. */
DSMM_API const dsmm_idx *dsmm_cola_perm(const dsmm_cola *plan);

/* Exact counts of this rank for k columns of `elem` bytes each (4 for float), as bytes this
 * rank receives in one multiply (CoLa paper §3.1): v_cg = elem*k*(n - nrows) (every other
 * panel), v_fr = elem*k*nnz(RSC) (a row per nonzero), v_fc = elem*k*(nonempty RSC columns);
 * inter_nofusion / inter_fused: the part of v_fc / of the fused transfers crossing workgroups
 * (received by this rank). The counts themselves are given too. */
typedef struct dsmm_cola_volume {
    int64_t v_cg, v_fr, v_fc, inter_nofusion, inter_fused;
    int64_t lsc_nnz, rsc_nnz, rsc_cols; // nnz of the chunks, nonempty RSC columns
    int64_t nrows;
} dsmm_cola_volume;
DSMM_API void dsmm_cola_volume_get(const dsmm_cola *plan, dsmm_idx k, size_t elem,
                                   dsmm_cola_volume *v);

/* What one multiply did on this rank: seconds in local multiplies, in communication (waits
 * included) and in total; bytes received over intra- / inter-workgroup links by messages,
 * collectives and one-sided gets (the context's traffic counters over the call), and bytes
 * read from workgroup peers' memory through the shared window. */
typedef struct dsmm_cola_info {
    double comp_seconds, comm_seconds, seconds;
    int64_t recv_intra, recv_inter, shared_read;
    dsmm_spmm_alg lsc_alg, rsc_alg; // the kernels asked of the local SpMM (AUTO resolved as
                                    // dsmm_cola_opts says)
    int64_t products, products_gpu; // this rank's local products, and those run on the GPU
    int gpu_resident;               // C's panel was on the device (dsmm_cola_opts)
    size_t tiles_bytes; // the remote pieces the plan holds in tiles for the column-wise kernel
                        // (made on the first column-wise multiply of each value type)
} dsmm_cola_info;

/* dsmm_cola_spmm: C = A * B in the plan's numbering; B and C are this rank's panels (nrows
 * from dsmm_cola_rows x k, FLOAT or DOUBLE, the same type and k on every rank); C is
 * overwritten. info may be NULL. Collective. Errors: DSMM_ERR_ARG (NULL, types differ);
 * DSMM_ERR_DIM (panel shape, k differing across ranks); DSMM_ERR_NOMEM; DSMM_ERR_MPI. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_cola_spmm(dsmm_ctx *ctx, dsmm_cola *plan,
                                                   const dsmm_dense *B, dsmm_dense *C,
                                                   dsmm_cola_info *info);

/* ------------------------------------------------------------------------------------------ */
/* GCN training                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Full-batch training of an L-layer graph convolutional network (Kipf & Welling, ICLR'17;
 * docs/gcn.md): H' = relu(Ahat * H * W) (no relu on the last layer), Ahat = D^-1/2 (A + I)
 * D^-1/2, softmax cross-entropy over the training nodes, Adam, dropout before every layer,
 * weight decay (L2) on the first layer's weights. The aggregations Ahat * X forward and
 * backward (Ahat is symmetric) run on dsmm_cola_spmm; dense products on BLAS. Dropout masks
 * and initial weights depend on the seed and global indices only, so every rank count trains
 * the same network (up to the order of floating-point sums). */
typedef enum dsmm_gcn_features {
    DSMM_GCN_FEATURES_FILE = 0, // PREFIX.features.mtx.gz, rows normalised to sum 1
    DSMM_GCN_FEATURES_ONEHOT,   // the identity (n features)
    DSMM_GCN_FEATURES_RANDOM    // random_dim uniform features from the seed
} dsmm_gcn_features;

/* One epoch: training loss and accuracies (after the epoch's update: the forward pass of the
 * next epoch evaluates val/test without dropout), and where the time went (largest rank):
 * aggregation multiplies, their communication, dense math (BLAS, softmax, Adam, allreduce). */
typedef struct dsmm_gcn_epoch {
    int epoch;
    double loss, train_accuracy, val_accuracy, test_accuracy;
    double seconds, agg_seconds, comm_seconds, dense_seconds;
} dsmm_gcn_epoch;

typedef struct dsmm_gcn_params {
    int layers;          // 2
    int hidden;          // 16
    int epochs;          // 200
    double lr;           // 0.01 (Adam, beta1 0.9, beta2 0.999, eps 1e-8)
    double dropout;      // 0.5 (rate of dropped entries)
    double weight_decay; // 5e-4
    uint64_t seed;       // 1
    dsmm_gcn_features features;
    int random_dim;                                        // RANDOM: features per node (default 64)
    dsmm_cola_opts cola;                                   // the aggregation's algorithm and layout
    void (*progress)(void *user, const dsmm_gcn_epoch *e); // after each epoch (rank 0)
    void *progress_user;
} dsmm_gcn_params;
DSMM_API void dsmm_gcn_params_init(dsmm_gcn_params *p);

typedef struct dsmm_gcn_result {
    int epochs;
    dsmm_gcn_epoch *curve;                              // epochs entries (dsmm_gcn_result_free)
    double train_accuracy, val_accuracy, test_accuracy; // final model, no dropout
    dsmm_idx nodes, edges, nfeatures, nclasses, ntrain, nval, ntest;
    double seconds, setup_seconds; // training; reading, normalising, the plan
    dsmm_cola_volume volume;       // the aggregation's counts at k = hidden (this rank)
    double flops; // products of every forward and backward pass, all ranks, 2 per multiply-add:
                  // the aggregations (nnz of Ahat x width), X * W_0 and its transpose, BLAS
} dsmm_gcn_result;

/* dsmm_gcn_train: trains on the dataset PREFIX.adj.mtx.gz (symmetric adjacency),
 * PREFIX.features.mtx.gz (FILE), PREFIX.labels.txt.gz (a class 0..c-1 per line, -1 for none)
 * and PREFIX.split.txt.gz (lines "train ids...", "val ids...", "test ids...", 0-based).
 * Collective. Errors: DSMM_ERR_IO / DSMM_ERR_FORMAT naming the file and line;
 * DSMM_ERR_DIM (files disagreeing on the node count); DSMM_ERR_ARG (bad params, empty
 * training set); DSMM_ERR_NOMEM; DSMM_ERR_MPI. On error *res is zeroed. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_gcn_train(dsmm_ctx *ctx, const char *prefix,
                                                   const dsmm_gcn_params *p, dsmm_gcn_result *res);
DSMM_API void dsmm_gcn_result_free(dsmm_gcn_result *res);

/* ------------------------------------------------------------------------------------------ */
/* MPI                                                                                         */
/* ------------------------------------------------------------------------------------------ */

#if DSMM_HAVE_MPI && defined(MPI_VERSION)
/* dsmm_ctx_create_mpi: a context over a duplicate of comm (collective on comm).
 * Errors: DSMM_ERR_MPI; DSMM_ERR_NOMEM. On error *ctx is NULL. */
DSMM_API DSMM_NODISCARD dsmm_status dsmm_ctx_create_mpi(MPI_Comm comm, dsmm_ctx **ctx);
#endif

#ifdef __cplusplus
}
#endif

#endif // DSMM_H
