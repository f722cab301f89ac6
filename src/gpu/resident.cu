// src/gpu/resident.cu: stage products that stay on the device (dsmm_dist_opts.gpu_resident).
// SUMMA multiplies one pair of pieces a stage; without residency every stage product is
// downloaded and merged on the host. Here each product stays in the pool and the products are
// summed on the device: all their entries get the key row * ncols + column, a stable radix sort
// orders them by key (equal keys keep the order they were added in), and a reduction by key
// adds each run with the semiring's add; row pointers come from a binary search of the keys.
// Each product goes in a slot (SUMMA's stage; a one-sided algorithm's item of the tile) and
// sums are merged two at a time as the fixed tree of sum_tree.c says: in stage order that is
// HipMCL-GPU §IV's binary schedule, which bounds the sums held at once by about log2 of the
// stages, and in any order of arrival the same two sums meet in each merge (each key at most
// once in either), so the result is the same to the bit. C's tile crosses the bus once, when
// the accumulator finishes. Operands already on the device (received by a CUDA-aware MPI) are
// multiplied where they are.
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include "gpu/spgemm.cuh"

struct dsmmi_gpu_acc {
    dsmm_idx nrows, ncols;
    dsmm_semiring sr;
    dsmmi_sum_tree tree;
    dsmmg::csr_d *sum;     // per slot: the sum of the tree's node starting there (values double)
    unsigned char *sorted; // per slot: that sum came out of a merge (a product's rows are not)
    int merges;
    double ms_merge;
};

namespace {

// The semiring's add, as the CPU's dsmmi_sr_add applies it (a the earlier value).
struct sr_add {
    int sr;
    __device__ __forceinline__ double operator()(double a, double b) const
    {
        if (sr == DSMM_MIN_PLUS) return b < a ? b : a;
        if (sr == DSMM_MAX_TIMES) return b > a ? b : a;
        return a + b;
    }
};

constexpr int BLOCK = 256;

__global__ void keys_of(const dsmm_idx *__restrict__ rp, const int32_t *__restrict__ col,
                        const double *__restrict__ val, dsmm_idx nrows, dsmm_idx nnz,
                        dsmm_idx ncols, unsigned long long *__restrict__ key,
                        double *__restrict__ out)
{
    for (dsmm_idx e = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; e < nnz;
         e += (dsmm_idx)gridDim.x * blockDim.x) {
        dsmm_idx r = dsmmg::last_at_or_below(rp, nrows, e); // rp[0] = 0 <= e < rp[nrows]
        key[e] = (unsigned long long)r * (unsigned long long)ncols + (unsigned long long)col[e];
        out[e] = val[e];
    }
}

// Row pointers of the merged sum: rp[r] = the first key at or past row r's first key.
__global__ void rows_of(const unsigned long long *__restrict__ key, dsmm_idx nnz, dsmm_idx nrows,
                        dsmm_idx ncols, dsmm_idx *__restrict__ rp)
{
    for (dsmm_idx r = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; r <= nrows;
         r += (dsmm_idx)gridDim.x * blockDim.x) {
        unsigned long long first = (unsigned long long)r * (unsigned long long)ncols;
        dsmm_idx lo = 0, hi = nnz; // the least index with key >= first
        while (lo < hi) {
            dsmm_idx mid = lo + (hi - lo) / 2;
            if (key[mid] < first)
                lo = mid + 1;
            else
                hi = mid;
        }
        rp[r] = lo;
    }
}

__global__ void cols_of(const unsigned long long *__restrict__ key, const double *__restrict__ agg,
                        dsmm_idx nnz, dsmm_idx ncols, int32_t *__restrict__ col,
                        double *__restrict__ val)
{
    for (dsmm_idx e = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; e < nnz;
         e += (dsmm_idx)gridDim.x * blockDim.x) {
        col[e] = (int32_t)(key[e] % (unsigned long long)ncols);
        val[e] = agg[e];
    }
}

// Values as double: from floats, or ones for a pattern.
__global__ void widen(const float *__restrict__ f, dsmm_idx n, double *__restrict__ d)
{
    for (dsmm_idx e = (dsmm_idx)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (dsmm_idx)gridDim.x * blockDim.x)
        d[e] = f ? (double)f[e] : 1.0;
}

using dsmmg::csr_d;
using dsmmg::pool_alloc;
using dsmmg::stream;

// Scratch word for the run count (device.cuh's list: 0-2 and 8-31 are taken).
constexpr int RUNS_WORD = 3;

// *out = the sum of in[0..k) (k >= 1, each nrows x ncols with double values), rows sorted; the
// inputs are freed (their blocks are reused only by work queued after the merge's kernels).
dsmm_status merge(dsmm_ctx *ctx, dsmmi_gpu *g, dsmm_semiring sr, csr_d *in, int k, csr_d *out)
{
    dsmm_status st = DSMM_OK;
    cudaStream_t s = stream(g, 0);
    unsigned long long *key[2] = {NULL, NULL};
    double *val[2] = {NULL, NULL};
    dsmm_idx *runs_d = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0, need = 0;
    dsmm_idx nrows = in[0].nrows, ncols = in[0].ncols, total = 0, nnz = 0;
    int res = 0; // the pair of buffers (key[res], val[res]) holding the sums
    memset(out, 0, sizeof *out);
    out->nrows = nrows;
    out->ncols = ncols;
    out->val_bytes = 8;
    for (int i = 0; i < k; i++) total += in[i].nnz;
    DSMM_TRY(pool_alloc(ctx, g, ((size_t)nrows + 1) * sizeof(dsmm_idx), "row pointers of a sum",
                        (void **)&out->rowptr_d, NULL));
    if (total == 0) { // (the inputs are freed at cleanup, as on every path)
        DSMMG_CUDA(cudaMemsetAsync(out->rowptr_d, 0, ((size_t)nrows + 1) * sizeof(dsmm_idx), s));
        goto cleanup;
    }
    for (int b = 0; b < 2; b++) {
        DSMM_TRY(pool_alloc(ctx, g, (size_t)total * sizeof **key, "keys of a merge",
                            (void **)&key[b], NULL));
        DSMM_TRY(pool_alloc(ctx, g, (size_t)total * sizeof **val, "values of a merge",
                            (void **)&val[b], NULL));
    }
    DSMM_TRY(pool_alloc(ctx, g, sizeof *runs_d, "run count", (void **)&runs_d, NULL));
    {
        dsmm_idx at = 0;
        for (int i = 0; i < k; i++) {
            if (in[i].nnz == 0) continue;
            keys_of<<<dsmmg::grid_stride_blocks(BLOCK, in[i].nnz), BLOCK, 0, s>>>(
                in[i].rowptr_d, in[i].col_d, (const double *)in[i].val_d, in[i].nrows, in[i].nnz,
                ncols, key[0] + at, val[0] + at);
            DSMM_TRY(dsmmg::check_launch(ctx, "merge keys"));
            at += in[i].nnz;
        }
    }
    for (int i = 0; i < k; i++) dsmmg::free_csr(g, &in[i]);
    {
        // keys below nrows * ncols <= 2^62: sort only the bits they use. The sort ping-pongs
        // between the two buffers (DoubleBuffer: CUB's scratch stays small, where the plain
        // SortPairs keeps two more arrays of keys and values inside it, 48 bytes an entry in
        // all); the sorted pairs are wherever it leaves Current(), and the reduction writes the
        // sums into the other pair, which `res` names.
        unsigned long long top = (unsigned long long)nrows * (unsigned long long)ncols - 1;
        int bits = top == 0 ? 1 : 64 - __builtin_clzll(top);
        cub::DoubleBuffer<unsigned long long> dk(key[0], key[1]);
        cub::DoubleBuffer<double> dv(val[0], val[1]);
        DSMMG_CUDA(cub::DeviceRadixSort::SortPairs(NULL, need, dk, dv, (int64_t)total, 0, bits, s));
        tmp_bytes = need;
        DSMMG_CUDA(cub::DeviceReduce::ReduceByKey(NULL, need, key[1], key[0], val[1], val[0],
                                                  runs_d, sr_add{(int)sr}, (int64_t)total, s));
        if (need > tmp_bytes) tmp_bytes = need;
        // (a NULL scratch would make the calls below size queries again: never 0 bytes)
        tmp_bytes = tmp_bytes ? tmp_bytes : 1;
        DSMM_TRY(pool_alloc(ctx, g, tmp_bytes, "CUB merge scratch", &tmp, NULL));
        need = tmp_bytes;
        DSMMG_CUDA(cub::DeviceRadixSort::SortPairs(tmp, need, dk, dv, (int64_t)total, 0, bits, s));
        need = tmp_bytes;
        DSMMG_CUDA(cub::DeviceReduce::ReduceByKey(tmp, need, dk.Current(), dk.Alternate(),
                                                  dv.Current(), dv.Alternate(), runs_d,
                                                  sr_add{(int)sr}, (int64_t)total, s));
        res = dk.Current() == key[0] ? 1 : 0;
    }
    DSMMG_CUDA(cudaMemcpyAsync(dsmmg::scratch(g, RUNS_WORD), runs_d, sizeof nnz,
                               cudaMemcpyDeviceToHost, s));
    DSMMG_CUDA(cudaStreamSynchronize(s));
    memcpy(&nnz, dsmmg::scratch(g, RUNS_WORD), sizeof nnz);
    out->nnz = nnz;
    DSMM_TRY(pool_alloc(ctx, g, (size_t)nnz * sizeof(int32_t), "columns of a sum",
                        (void **)&out->col_d, NULL));
    DSMM_TRY(
        pool_alloc(ctx, g, (size_t)nnz * sizeof(double), "values of a sum", &out->val_d, NULL));
    rows_of<<<dsmmg::grid_stride_blocks(BLOCK, nrows + 1), BLOCK, 0, s>>>(key[res], nnz, nrows,
                                                                          ncols, out->rowptr_d);
    DSMM_TRY(dsmmg::check_launch(ctx, "merge row pointers"));
    cols_of<<<dsmmg::grid_stride_blocks(BLOCK, nnz), BLOCK, 0, s>>>(
        key[res], val[res], nnz, ncols, out->col_d, (double *)out->val_d);
    DSMM_TRY(dsmmg::check_launch(ctx, "merge columns"));
cleanup:
    for (int b = 0; b < 2; b++) {
        dsmmi_dpool_free(&g->pool, key[b]);
        dsmmi_dpool_free(&g->pool, val[b]);
    }
    dsmmi_dpool_free(&g->pool, runs_d);
    dsmmi_dpool_free(&g->pool, tmp);
    // The inputs, whatever happened (already freed, and their pointers cleared, once their keys
    // were made; an empty merge left them until here, which had leaked their row pointers).
    for (int i = 0; i < k; i++) dsmmg::free_csr(g, &in[i]);
    if (st != DSMM_OK) dsmmg::free_csr(g, out);
    return st;
}

// Merges the sums stored at slots first[0..k) (in slot order) into first[0]'s, timed with
// events 6 and 7 (the timing pair no product in flight uses here).
dsmm_status merge_nodes(dsmm_ctx *ctx, dsmmi_gpu *g, dsmmi_gpu_acc *acc, const int *first, int k)
{
    dsmm_status st = DSMM_OK;
    csr_d m;
    csr_d *in = (csr_d *)dsmmi_malloc(ctx, (size_t)k, sizeof *in);
    cudaStream_t s = stream(g, 0);
    DSMM_CHECK(ctx, in != NULL, DSMM_ERR_NOMEM, "gpu resident tiles: a merge of %d sums", k);
    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 6), s));
    // merge frees its inputs whatever happens: they leave the slots first
    for (int i = 0; i < k; i++) {
        in[i] = acc->sum[first[i]];
        memset(&acc->sum[first[i]], 0, sizeof in[i]);
    }
    DSMM_TRY(merge(ctx, g, acc->sr, in, k, &m));
    acc->sum[first[0]] = m;
    acc->sorted[first[0]] = 1;
    DSMMG_CUDA(cudaEventRecord(dsmmg::event(g, 7), s));
    DSMMG_CUDA(cudaEventSynchronize(dsmmg::event(g, 7)));
    acc->ms_merge += dsmmg::elapsed(g, 6, 7);
    acc->merges++;
cleanup:
    dsmmi_free(ctx, in);
    return st;
}

dsmm_status slot_free(dsmm_ctx *ctx, const dsmmi_gpu_acc *acc, int slot)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, slot >= 0 && slot < acc->tree.n && !acc->tree.filled[slot], DSMM_ERR_INTERNAL,
               "gpu resident tiles: slot %d of %d is %s", slot, acc->tree.n,
               slot >= 0 && slot < acc->tree.n ? "filled already" : "out of range");
cleanup:
    return st;
}

// Puts a product (owned by acc from here on, also on failure) in slot, or none (P NULL), then
// makes the merges the tree says.
dsmm_status put(dsmm_ctx *ctx, dsmmi_gpu *g, dsmmi_gpu_acc *acc, int slot, csr_d *P)
{
    dsmm_status st = DSMM_OK;
    int pairs[DSMMI_SUM_TREE_MAX_PAIRS][2], np = 0;
    st = dsmmi_sum_tree_put(ctx, &acc->tree, slot, P != NULL, pairs, &np);
    if (st != DSMM_OK) {
        if (P) dsmmg::free_csr(g, P);
        goto cleanup;
    }
    if (P) {
        acc->sum[slot] = *P;
        acc->sorted[slot] = 0;
        memset(P, 0, sizeof *P);
    }
    for (int i = 0; i < np; i++) DSMM_TRY(merge_nodes(ctx, g, acc, pairs[i], 2));
cleanup:
    return st;
}

// A piece on the device as the kernel's operand: used in place (values widened to double
// when they are float or a pattern the semiring reads) or uploaded. own_val: a widened copy.
struct operand {
    csr_d d;
    int uploaded;
    void *own_val;
};

dsmm_status operand_make(dsmm_ctx *ctx, dsmmi_gpu *g, const dsmm_csr *P, int on_device, int values,
                         operand *o)
{
    dsmm_status st = DSMM_OK;
    memset(o, 0, sizeof *o);
    if (!on_device) {
        DSMM_TRY(dsmmg::upload_csr(ctx, g, P, values ? DSMM_DOUBLE : DSMM_PATTERN, &o->d));
        o->uploaded = 1;
        goto cleanup;
    }
    DSMM_CHECK(ctx, P->colidx32 != NULL && P->ncols <= INT32_MAX, DSMM_ERR_INTERNAL,
               "gpu resident tiles: a device operand needs 32-bit columns");
    o->d.nrows = P->nrows;
    o->d.ncols = P->ncols;
    o->d.nnz = P->nnz;
    o->d.rowptr_d = P->rowptr;
    o->d.col_d = P->colidx32;
    if (!values) goto cleanup; // val_d NULL, val_bytes 0
    o->d.val_bytes = 8;
    if (P->type == DSMM_DOUBLE) {
        o->d.val_d = P->val;
        goto cleanup;
    }
    DSMM_TRY(
        pool_alloc(ctx, g, (size_t)P->nnz * sizeof(double), "widened values", &o->own_val, NULL));
    o->d.val_d = o->own_val;
    widen<<<dsmmg::grid_stride_blocks(BLOCK, P->nnz), BLOCK, 0, stream(g, 0)>>>(
        P->type == DSMM_FLOAT ? (const float *)P->val : NULL, P->nnz, (double *)o->own_val);
    DSMM_TRY(dsmmg::check_launch(ctx, "widen values"));
cleanup:
    return st;
}

void operand_free(dsmmi_gpu *g, operand *o)
{
    if (o->uploaded) dsmmg::free_csr(g, &o->d);
    o->own_val = dsmmi_dpool_free(&g->pool, o->own_val);
    memset(&o->d, 0, sizeof o->d);
    o->uploaded = 0;
}

} // namespace

extern "C" dsmm_status dsmmi_gpu_acc_create(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols,
                                            dsmm_semiring sr, int nslots, dsmmi_gpu_acc **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu_acc *acc = NULL;
    *out = NULL;
    DSMM_CHECK(ctx, dsmmi_gpu_of(ctx) != NULL, DSMM_ERR_UNSUPPORTED,
               "gpu resident tiles: no device on this context (dsmm_ctx_set_gpu)");
    DSMM_CHECK(ctx, ncols <= INT32_MAX, DSMM_ERR_ARG,
               "gpu resident tiles: %lld columns do not fit the device's 32-bit columns",
               (long long)ncols);
    // A merge sorts keys row * ncols + col: they must stay below 2^62.
    DSMM_CHECK(ctx,
               nrows >= 0 && ncols >= 0 &&
                   (ncols == 0 || (uint64_t)nrows <= ((uint64_t)1 << 62) / (uint64_t)ncols),
               DSMM_ERR_ARG, "gpu resident tiles: a %lld x %lld tile's keys exceed 62 bits",
               (long long)nrows, (long long)ncols);
    DSMM_CHECK(ctx, (int)sr >= 0 && sr < DSMM_SEMIRING_COUNT, DSMM_ERR_ARG,
               "gpu resident tiles: unknown semiring %d", (int)sr);
    DSMM_CHECK(ctx, nslots >= 0, DSMM_ERR_ARG, "gpu resident tiles: %d slots", nslots);
    acc = (dsmmi_gpu_acc *)dsmmi_calloc(ctx, 1, sizeof *acc);
    DSMM_CHECK(ctx, acc != NULL, DSMM_ERR_NOMEM, "gpu resident tiles: accumulator");
    acc->nrows = nrows;
    acc->ncols = ncols;
    acc->sr = sr;
    DSMM_TRY(dsmmi_sum_tree_init(ctx, &acc->tree, nslots));
    acc->sum = (csr_d *)dsmmi_calloc(ctx, nslots ? (size_t)nslots : 1, sizeof *acc->sum);
    acc->sorted = (unsigned char *)dsmmi_calloc(ctx, nslots ? (size_t)nslots : 1, 1);
    DSMM_CHECK(ctx, acc->sum != NULL && acc->sorted != NULL, DSMM_ERR_NOMEM,
               "gpu resident tiles: %d slots", nslots);
    *out = acc;
    acc = NULL;
cleanup:
    dsmmi_gpu_acc_free(ctx, &acc);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_acc_multiply(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot,
                                              const dsmm_csr *A, int a_dev, const dsmm_csr *B,
                                              int b_dev, dsmm_spgemm_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    operand a, b;
    dsmmg::spgemm_run r;
    csr_d C;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&r, 0, sizeof r);
    memset(&C, 0, sizeof C);
    DSMM_CHECK(ctx, g != NULL && acc != NULL, DSMM_ERR_INTERNAL,
               "gpu resident tiles: no device or accumulator");
    DSMM_CHECK(ctx, A->ncols == B->nrows && A->nrows == acc->nrows && B->ncols == acc->ncols,
               DSMM_ERR_DIM, "gpu resident tiles: %lldx%lld times %lldx%lld into %lldx%lld",
               (long long)A->nrows, (long long)A->ncols, (long long)B->nrows, (long long)B->ncols,
               (long long)acc->nrows, (long long)acc->ncols);
    DSMM_TRY(slot_free(ctx, acc, slot));
    {
        int values = acc->sr != DSMM_PLUS_PAIR;
        double t0 = dsmmi_wtime();
        DSMMG_CUDA(cudaSetDevice(g->device));
        dsmmi_dpool_peak_reset(&g->pool);
        DSMM_TRY(operand_make(ctx, g, A, a_dev, values, &a));
        DSMM_TRY(operand_make(ctx, g, B, b_dev, values, &b));
        double t_up = dsmmi_wtime() - t0;
        // unsorted: the merge sorts every entry anyway
        DSMM_TRY(dsmmg::spgemm_begin(ctx, g, acc->sr, 0, &a.d, &b.d, NULL, 0, 1, &r));
        DSMM_TRY(dsmmg::spgemm_numeric(&r));
        operand_free(g, &a); // the kernels that read them are queued (spgemm.cuh)
        operand_free(g, &b);
        DSMM_TRY(dsmmg::spgemm_finish(&r));
        C = dsmmg::spgemm_result(&r);
        r.cp_d = NULL; // C's arrays pass to the accumulator
        r.cc_d = NULL;
        r.cv_d = NULL;
        memset(info, 0, sizeof *info);
        dsmmg::spgemm_report(&r, t_up + r.seconds_upload, info);
        dsmmg::spgemm_free(&r);
        DSMM_TRY(put(ctx, g, acc, slot, &C));
        info->device_bytes = g->pool.local_peak - g->pool.peak_mark;
    }
cleanup:
    if (g != NULL) {
        if (st != DSMM_OK) cudaStreamSynchronize(dsmmg::stream(g, 0));
        dsmmg::spgemm_free(&r);
        operand_free(g, &a);
        operand_free(g, &b);
        dsmmg::free_csr(g, &C);
    }
    return st;
}

extern "C" dsmm_status dsmmi_gpu_acc_add(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot,
                                         const dsmm_csr *P)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    csr_d D;
    memset(&D, 0, sizeof D);
    DSMM_CHECK(ctx, g != NULL && acc != NULL, DSMM_ERR_INTERNAL,
               "gpu resident tiles: no device or accumulator");
    DSMM_CHECK(ctx, P->nrows == acc->nrows && P->ncols == acc->ncols, DSMM_ERR_DIM,
               "gpu resident tiles: a %lldx%lld product added to %lldx%lld", (long long)P->nrows,
               (long long)P->ncols, (long long)acc->nrows, (long long)acc->ncols);
    DSMM_TRY(slot_free(ctx, acc, slot));
    DSMMG_CUDA(cudaSetDevice(g->device));
    DSMM_TRY(dsmmg::upload_csr(ctx, g, P, DSMM_DOUBLE, &D));
    DSMM_TRY(put(ctx, g, acc, slot, &D));
cleanup:
    if (g != NULL) dsmmg::free_csr(g, &D);
    return st;
}

extern "C" dsmm_status dsmmi_gpu_acc_skip(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, int slot)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    DSMM_CHECK(ctx, g != NULL && acc != NULL, DSMM_ERR_INTERNAL,
               "gpu resident tiles: no device or accumulator");
    DSMM_TRY(slot_free(ctx, acc, slot));
    DSMMG_CUDA(cudaSetDevice(g->device));
    DSMM_TRY(put(ctx, g, acc, slot, NULL));
cleanup:
    return st;
}

extern "C" double dsmmi_gpu_acc_merge_seconds(const dsmmi_gpu_acc *acc)
{
    return acc ? acc->ms_merge / 1e3 : 0.0;
}

extern "C" dsmm_status dsmmi_gpu_acc_finish(dsmm_ctx *ctx, dsmmi_gpu_acc *acc, dsmm_type type,
                                            int col_bits, dsmm_csr **C, int *merges,
                                            double *merge_seconds)
{
    dsmm_status st = DSMM_OK;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    int *first = NULL, k = 0;
    *C = NULL;
    DSMM_CHECK(ctx, g != NULL && acc != NULL, DSMM_ERR_INTERNAL,
               "gpu resident tiles: no device or accumulator");
    DSMMG_CUDA(cudaSetDevice(g->device));
    first = (int *)dsmmi_malloc(ctx, acc->tree.n ? (size_t)acc->tree.n : 1, sizeof *first);
    DSMM_CHECK(ctx, first != NULL, DSMM_ERR_NOMEM, "gpu resident tiles: %d slots", acc->tree.n);
    k = dsmmi_sum_tree_held(&acc->tree, first);
    if (k == 0) {
        DSMM_TRY(dsmmi_csr_create_ex(ctx, acc->nrows, acc->ncols, 0, type, col_bits, C));
        (*C)->sorted = 1;
    } else {
        // Sums left apart (slots never filled) are merged at once; a lone product was never
        // merged, so its rows are unsorted until it is.
        if (k > 1 || !acc->sorted[first[0]]) DSMM_TRY(merge_nodes(ctx, g, acc, first, k));
        DSMM_TRY(dsmmg::download_csr(ctx, g, &acc->sum[first[0]], type, col_bits, 1, C));
        dsmmg::free_csr(g, &acc->sum[first[0]]);
        if (acc->tree.n > 0) memset(acc->tree.has, 0, (size_t)acc->tree.n); // nothing held
    }
    if (merges) *merges = acc->merges;
    if (merge_seconds) *merge_seconds = acc->ms_merge / 1e3;
cleanup:
    dsmmi_free(ctx, first);
    return st;
}

extern "C" void dsmmi_gpu_acc_free(dsmm_ctx *ctx, dsmmi_gpu_acc **pacc)
{
    dsmmi_gpu_acc *acc = *pacc;
    if (acc == NULL) return;
    dsmmi_gpu *g = dsmmi_gpu_of(ctx);
    if (g != NULL) {
        cudaStreamSynchronize(dsmmg::stream(g, 0));
        for (int i = 0; acc->sum && i < acc->tree.n; i++) dsmmg::free_csr(g, &acc->sum[i]);
    }
    dsmmi_sum_tree_free(ctx, &acc->tree);
    dsmmi_free(ctx, acc->sum);
    dsmmi_free(ctx, acc->sorted);
    dsmmi_free(ctx, acc);
    *pacc = NULL;
}
