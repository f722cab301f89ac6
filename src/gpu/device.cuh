// src/gpu/device.cuh: what the .cu files of the gpu layer share: CUDA handles of the context's
// device state, staged uploads and downloads of CSR arrays (with type conversion), device
// copies of a CSR, and event timing. C++ (CUDA); nothing outside src/gpu includes it.
#ifndef DSMM_GPU_DEVICE_CUH
#define DSMM_GPU_DEVICE_CUH

#include <cuda_runtime.h>

extern "C" {
#include "gpu/gpu.h"
}

namespace dsmmg {

static inline cudaStream_t stream(const dsmmi_gpu *g, int i)
{
    return (cudaStream_t)g->stream[i];
}
static inline cudaEvent_t event(const dsmmi_gpu *g, int i)
{
    return (cudaEvent_t)g->ev[i];
}

/* The pinned buffers minus their last SCRATCH_BYTES, which staged copies never touch:
 * scratch(g, k) is 8-byte word k (k < 32) of that tail in pinned[1], for small readbacks (the
 * nnz after the symbolic scan) that may land while a staged copy runs on the other stream.
 * Words 0-1: the SpGEMM lanes' nnz; 2: the cuSPARSE entry's flops count; 3: the entries of a
 * sum of resident stage products (resident.cu); 8-31: the bin counts of the SpGEMM's planning
 * on the device (12 words a lane). */
constexpr size_t SCRATCH_BYTES = 256;
static inline size_t stage_bytes(const dsmmi_gpu *g)
{
    return (g->pinned_bytes - SCRATCH_BYTES) & ~(size_t)(SCRATCH_BYTES - 1);
}
static inline void *scratch(const dsmmi_gpu *g, int k)
{
    return (char *)g->pinned[1] + stage_bytes(g) + (size_t)k * 8;
}

/* grid_stride_blocks: blocks of `block` threads for a grid-stride loop over n items: enough for
 * one item a thread, at least 1, at most 65535 * 32 (the loop covers the rest). */
static inline unsigned grid_stride_blocks(int block, dsmm_idx n)
{
    dsmm_idx b = (n + block - 1) / block;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 32 ? 65535 * 32 : b);
}

/* pool_alloc: dsmmi_dpool_alloc from g's pool that also sets *pool_full (when not NULL) if it
 * failed because no free block was large enough, as opposed to the host block list. */
dsmm_status pool_alloc(dsmm_ctx *ctx, dsmmi_gpu *g, size_t bytes, const char *what, void **out,
                       int *pool_full);

/* Staged copies (see dsmmi_stage_up/down); bytes and times go to g->info. Uploads run on
 * stream 0, downloads on stream s (0 or 1). The two pinned buffers are shared: an upload waits
 * (host) for a buffer's last copy before packing it, and a download's copy into a buffer waits
 * (stream s) for that buffer's last copy, so a download on stream 1 never overwrites a buffer
 * that an upload on stream 0 has not yet sent. */
dsmm_status upload(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst_d, size_t n, size_t elem_bytes,
                   dsmmi_stage_pack_fn pack, void *arg);
dsmm_status download(dsmm_ctx *ctx, dsmmi_gpu *g, const void *src_d, size_t n, size_t elem_bytes,
                     dsmmi_stage_unpack_fn unpack, void *arg, int s = 0);
/* A plain array of n elements of `bytes` each, no conversion. */
dsmm_status upload_raw(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst_d, const void *src, size_t n,
                       size_t bytes);
dsmm_status download_raw(dsmm_ctx *ctx, dsmmi_gpu *g, void *dst, const void *src_d, size_t n,
                         size_t bytes, int s = 0);

/* A CSR on the device: 64-bit row pointers, 32-bit columns, values as V (double or float) or
 * none (val_d NULL when the product does not read them). Every array comes from the pool. */
struct csr_d {
    dsmm_idx nrows, ncols, nnz;
    dsmm_idx *rowptr_d;
    int32_t *col_d;
    void *val_d;
    int val_bytes; // 8 double, 4 float, 0 none
};

/* Staging callbacks (dsmmi_stage_pack_fn / unpack_fn) for CSR arrays, arg a csr_arg:
 * pack_cols narrows A's columns to 32 bits, pack_vals converts A's values to t (DOUBLE or
 * FLOAT), pack_ones writes ones of type t instead (a pattern for cuSPARSE, which has no
 * implicit ones, or plus-pair as plus-times); unpack_cols writes 32-bit device columns into C's
 * (either width), unpack_vals device doubles into C's values (DOUBLE or FLOAT; not called for
 * PATTERN). */
struct csr_arg {
    const dsmm_csr *A;
    dsmm_csr *C;
    dsmm_type t;
};
void pack_cols(void *arg, void *dst, size_t off, size_t n);
void pack_vals(void *arg, void *dst, size_t off, size_t n);
void pack_ones(void *arg, void *dst, size_t off, size_t n);
void unpack_cols(void *arg, const void *src, size_t off, size_t n);
void unpack_vals(void *arg, const void *src, size_t off, size_t n);

/* pack_index: an index array (i64 or i32 set) packed at 64 bits (wide) or 32 bits, as
 * cuSPARSE wants its row offsets and columns; arg an index_arg. */
struct index_arg {
    const dsmm_idx *i64;
    const int32_t *i32;
    int wide;
};
void pack_index(void *arg, void *dst, size_t off, size_t n);

/* upload_csr: copies A to the device (columns narrowed to 32 bits, values converted to
 * val_type: DSMM_DOUBLE, DSMM_FLOAT, or DSMM_PATTERN for none). pool_full as for pool_alloc.
 * Errors: DSMM_ERR_ARG (more than INT32_MAX columns); DSMM_ERR_NOMEM (pool); DSMM_ERR_CUDA. */
dsmm_status upload_csr(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *A, dsmm_type val_type,
                       csr_d *out, int *pool_full = NULL);
void free_csr(dsmmi_gpu *g, csr_d *A);

/* download_csr: a new host CSR (col_bits wide, values of `type`, sorted flag as given) from a
 * device CSR whose values are double (or none for PATTERN). */
dsmm_status download_csr(dsmm_ctx *ctx, dsmmi_gpu *g, const csr_d *D, dsmm_type type, int col_bits,
                         int sorted, dsmm_csr **out);

/* cusparse_handle: the context's cuSPARSE handle (created on first use, bound to stream 0;
 * cusparse.cu). Errors: DSMM_ERR_CUDA with cuSPARSE's message. */
dsmm_status cusparse_handle(dsmm_ctx *ctx, dsmmi_gpu *g, void **handle);

/* The last i in [0, n) with p[i] <= x, for p increasing with p[0] <= x < p[n] (p[n] is never
 * read): the row of entry x when p holds row pointers, the owner of item x when p holds first
 * items, the A entry of product x when p holds a chunk's product offsets. I: dsmm_idx or int
 * (offsets in shared memory). */
template <typename I>
__device__ __forceinline__ I last_at_or_below(const I *__restrict__ p, I n, I x)
{
    I lo = 0, hi = n; // p[lo] <= x < p[hi]
    while (hi - lo > 1) {
        I mid = lo + ((hi - lo) >> 1);
        if (p[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Milliseconds between two recorded events (after they completed). */
double elapsed(const dsmmi_gpu *g, int e0, int e1);

/* The CUDA error of the last launch, as a status with message (after kernel launches). */
dsmm_status check_launch(dsmm_ctx *ctx, const char *what);

} // namespace dsmmg

#define DSMMG_CUDA(call) DSMM_CUDA_TRY(ctx, call)

#endif // DSMM_GPU_DEVICE_CUH
