// src/base/base.h: internal header of the base layer: error macros, the context struct,
// allocation, timers, logging, progress, JSON building and atomic file output.
#ifndef DSMM_BASE_H
#define DSMM_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dsmm.h"

#if defined(__GNUC__) || defined(__clang__)
#define DSMMI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DSMMI_PRINTF(a, b)
#endif

#define DSMMI_CTX_MAGIC   0x64736d6d63747831ULL // "dsmmctx1"
#define DSMMI_FREED_MAGIC 0x0defaced0defacedULL
#define DSMMI_ERRMSG_MAX  1024
#define DSMMI_CACHE_SLOTS 16 // freed blocks a context keeps (alloc.c)

struct dsmm_ctx {
    uint64_t magic;
    dsmm_status last_status;
    char last_error[DSMMI_ERRMSG_MAX];
    int threads; // 0 = OpenMP default
    int rank, size;
    dsmm_log_level log_level;
    dsmm_log_fn log_fn;
    void *log_user;
    dsmm_allocator alloc;
    int have_alloc;
    size_t budget; // 0 = unlimited
    size_t in_use; // updated atomically
    size_t peak;
    // Freed blocks of 16 KiB to 2 MiB and of 32 MiB and more, kept for the next allocation
    // of about their size (alloc.c): repeated products (MCL iterations, GNN layers) then skip
    // the kernel's page zeroing.
    void *cache[DSMMI_CACHE_SLOTS];
    size_t cache_bytes[DSMMI_CACHE_SLOTS]; // block sizes; cached bytes are not in in_use
    size_t cached;                         // sum of cache_bytes
    size_t cache_min;                      // smallest block kept (0: 16 KiB; dsmmi_cache_min)
    int cache_lock;
    long alloc_count; // allocations so far (atomic)
    long fail_at;     // allocation number that fails, -1 = none
    int progress_mode;
    // Distributed settings and counts, kept here so contexts without MPI behave as one rank.
    int grid_pr, grid_pc; // default process grid (0 x 0: as square as possible)
    int wg_size;          // emulated workgroup size (0: from shared memory)
    size_t chunk;         // largest message of one MPI call (0: INT_MAX rounded down to 8)
    dsmm_traffic traffic; // this rank's counters (dsmm_ctx_traffic)
    // Test hooks of the RDMA engine (dist/rdma.h): a slowed rank and an item trace.
    int test_delay_rank;
    double test_delay;
    int64_t *rdma_trace, rdma_trace_n;
    void *comm;                       // comm layer state (MPI), NULL when serial
    void (*comm_free)(dsmm_ctx *ctx); // releases comm
    // CUDA device state (gpu/gpu.h, dsmm_ctx_set_gpu), NULL without one; gpu_auto: AUTO
    // local products may go to the device (the gpu layer's table entries decide).
    void *gpu;
    void (*gpu_free)(dsmm_ctx *ctx);
    int gpu_auto;
};

/* dsmmi_error: records "NAME: message (file:line)" in ctx (if non-NULL) and returns code.
 * Thread-safe; the first error of a parallel region wins. */
dsmm_status dsmmi_error(dsmm_ctx *ctx, dsmm_status code, const char *file, int line,
                        const char *fmt, ...) DSMMI_PRINTF(5, 6);

/* dsmmi_error_replace: sets ctx's status and message to exactly code and msg (a whole message
 * as dsmm_ctx_last_error returns it), replacing any earlier one (collective agreement). */
void dsmmi_error_replace(dsmm_ctx *ctx, dsmm_status code, const char *msg);

/* The three ways to reach `cleanup:` (STYLE.md §4). Each needs `dsmm_status st` in scope. */
#define DSMM_TRY(call)                                                                             \
    do {                                                                                           \
        st = (call);                                                                               \
        if (st != DSMM_OK) goto cleanup;                                                           \
    } while (0)

#define DSMM_FAIL(ctx, code, ...)                                                                  \
    do {                                                                                           \
        st = dsmmi_error((ctx), (code), __FILE__, __LINE__, __VA_ARGS__);                          \
        goto cleanup;                                                                              \
    } while (0)

#define DSMM_CHECK(ctx, cond, code, ...)                                                           \
    do {                                                                                           \
        if (!(cond)) DSMM_FAIL(ctx, code, __VA_ARGS__);                                            \
    } while (0)

#define DSMM_MPI_TRY(ctx, call)                                                                    \
    do {                                                                                           \
        int mpi_rc_ = (call);                                                                      \
        if (mpi_rc_ != MPI_SUCCESS) {                                                              \
            char mpi_msg_[MPI_MAX_ERROR_STRING];                                                   \
            int mpi_len_ = 0;                                                                      \
            MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);                                        \
            DSMM_FAIL(ctx, DSMM_ERR_MPI, "%s: %s", #call, mpi_msg_);                               \
        }                                                                                          \
    } while (0)

#define DSMM_CUDA_TRY(ctx, call)                                                                   \
    do {                                                                                           \
        int cuda_rc_ = (int)(call);                                                                \
        if (cuda_rc_ != 0)                                                                         \
            DSMM_FAIL(ctx, DSMM_ERR_CUDA, "%s: %s", #call,                                         \
                      cudaGetErrorString((cudaError_t)cuda_rc_));                                  \
    } while (0)

/* dsmmi_ctx_ok: ctx is a live context (magic intact). */
bool dsmmi_ctx_ok(const dsmm_ctx *ctx);

/* dsmmi_align_skip: bytes from p to the next multiple of align (a power of two); 0 when p is
 * aligned. */
static inline size_t dsmmi_align_skip(const void *p, size_t align)
{
    return (size_t)(-(uintptr_t)p & (align - 1));
}

/* Allocation. Every host allocation goes through these: n * size is checked for overflow,
 * bytes count against the budget, the user's allocator is used when set, and the k-th call
 * can be made to fail. They record a DSMM_ERR_NOMEM message in ctx and return NULL on
 * failure. ctx may be NULL (plain malloc, no accounting). */
void *dsmmi_malloc(dsmm_ctx *ctx, size_t n, size_t size);
void *dsmmi_calloc(dsmm_ctx *ctx, size_t n, size_t size);
/* dsmmi_realloc: on failure returns NULL and leaves p valid. */
void *dsmmi_realloc(dsmm_ctx *ctx, void *p, size_t n, size_t size);
/* dsmmi_shrink_account: from now on only the first n * size bytes of p are used. The budget
 * gets the rest back, but the block keeps its size: no realloc, so the allocator can hand the
 * same block to the next request of the old size (glibc's mmap threshold learns a block's size
 * when it is freed; a shrunk block taught it the smaller size, and every later request of the
 * old size was a fresh mmap and a page fault per 4 KiB). Pages never touched cost no memory.
 * No-op when n * size is not smaller than the block. */
void dsmmi_shrink_account(dsmm_ctx *ctx, void *p, size_t n, size_t size);
/* dsmmi_move_release: copies n bytes from src to dst (not overlapping) a piece at a time and,
 * on Linux, gives src's whole pages back to the kernel as soon as they are copied
 * (MADV_DONTNEED; they read back as zeros). For moving a block that is freed next into a
 * larger array: the pair then holds at most a piece twice instead of the whole block. */
void dsmmi_move_release(void *dst, void *src, size_t n);
/* dsmmi_free: frees p (NULL ok) and returns NULL: p = dsmmi_free(ctx, p). */
void *dsmmi_free(dsmm_ctx *ctx, void *p);
/* dsmmi_cache_drop: frees the blocks kept by dsmmi_free for reuse (context destruction,
 * allocator change, budget pressure). */
void dsmmi_cache_drop(dsmm_ctx *ctx);
/* dsmmi_cache_min: from now on dsmmi_free keeps only blocks of at least bytes (0: the default,
 * 16 KiB; DSMMI_CACHE_BIG: only the big ones); returns the previous setting. A caller whose
 * peak resident memory is its measure (MCL) keeps small blocks out. NULL-safe. */
size_t dsmmi_cache_min(dsmm_ctx *ctx, size_t bytes);
#define DSMMI_CACHE_BIG ((size_t)32 << 20)
/* dsmmi_mul_ok: *out = a * b without overflow; false on overflow. */
bool dsmmi_mul_ok(size_t a, size_t b, size_t *out);
/* dsmmi_cpu_cache_bytes: the size in bytes that sysfs gives for CPU 0's data or unified cache
 * of that level (1, 2, 3...; 0: the highest level listed); 0 when sysfs does not say. Reads a
 * few small files: call it per operation, not per element. */
double dsmmi_cpu_cache_bytes(int level);
/* dsmmi_budget_room: would `bytes` more fit in the budget? No message: for a caller with
 * another way to go. */
bool dsmmi_budget_room(const dsmm_ctx *ctx, size_t bytes);
/* dsmmi_budget_check: would `bytes` more fit in the budget? Records a message if not. */
dsmm_status dsmmi_budget_check(dsmm_ctx *ctx, size_t bytes, const char *what);
/* dsmmi_strdup */
char *dsmmi_strdup(dsmm_ctx *ctx, const char *s);

/* Threads: the number a parallel region on ctx should use. */
int dsmmi_threads(const dsmm_ctx *ctx);

/* Timers: wall-clock seconds from a monotonic clock. */
double dsmmi_wtime(void);

/* Logging through the context's logger (level filter, stderr default, rank prefix). */
void dsmmi_log(dsmm_ctx *ctx, dsmm_log_level level, const char *fmt, ...) DSMMI_PRINTF(3, 4);

/* Progress bar on stderr, only when enabled and stderr is a TTY (mode 1) or always (mode 2).
 * Redraws at most ~10 times a second; end() clears the line. */
typedef struct dsmmi_progress {
    int active;
    const char *label;
    double total;
    double last_draw;
    double start;
} dsmmi_progress;
void dsmmi_progress_begin(dsmm_ctx *ctx, dsmmi_progress *p, const char *label, double total);
void dsmmi_progress_update(dsmmi_progress *p, double done);
void dsmmi_progress_end(dsmmi_progress *p);

/* JSON builder: a growing string with proper escaping; nesting tracked by the caller. */
typedef struct dsmmi_json {
    dsmm_ctx *ctx;
    char *buf;
    size_t len, cap;
    int need_comma;
    dsmm_status st; // first failure; later calls are no-ops
} dsmmi_json;
void dsmmi_json_init(dsmmi_json *j, dsmm_ctx *ctx);
void dsmmi_json_free(dsmmi_json *j);
void dsmmi_json_begin_object(dsmmi_json *j, const char *key); // key NULL at top level/arrays
void dsmmi_json_end_object(dsmmi_json *j);
void dsmmi_json_begin_array(dsmmi_json *j, const char *key);
void dsmmi_json_end_array(dsmmi_json *j);
void dsmmi_json_str(dsmmi_json *j, const char *key, const char *v);
void dsmmi_json_int(dsmmi_json *j, const char *key, int64_t v);
void dsmmi_json_num(dsmmi_json *j, const char *key, double v); // NaN/Inf written as null
void dsmmi_json_bool(dsmmi_json *j, const char *key, int v);
void dsmmi_json_raw(dsmmi_json *j, const char *key, const char *v); // v: valid JSON, copied as is

/* Atomic output file: written to "<path>.tmp.<pid>" and renamed over path on commit, so a
 * failed run leaves no file. path "-" writes to stdout directly. */
typedef struct dsmmi_outfile {
    FILE *f;
    char *path;
    char *tmp;
    int is_stdout;
} dsmmi_outfile;
dsmm_status dsmmi_outfile_open(dsmm_ctx *ctx, dsmmi_outfile *o, const char *path);
dsmm_status dsmmi_outfile_commit(dsmm_ctx *ctx, dsmmi_outfile *o); // closes; renames
void dsmmi_outfile_abort(dsmm_ctx *ctx, dsmmi_outfile *o);         // closes; removes tmp

/* Size of a value type in bytes (0 for pattern). */
size_t dsmmi_type_size(dsmm_type t);

/* dsmmi_stats_set_raw: key -> a JSON value built by the caller (arrays, objects), written as
 * is (ranks_detail, stages of distributed operations). */
dsmm_status dsmmi_stats_set_raw(dsmm_stats *s, const char *key, const char *json);
/* dsmmi_stats_get_num: 1 and *v when key holds a number (or an integer) in s, else 0. */
int dsmmi_stats_get_num(const dsmm_stats *s, const char *key, double *v);

#endif // DSMM_BASE_H
