// src/gpu/pool.c: the device memory pool: one region allocated up front and carved into
// aligned blocks by first fit, with neighbours merged on free (out-of-core paper §IV.B: no
// cudaMalloc/cudaFree while products run). Plain C over offsets, so tests run it on the host.
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

#define MIB(x) ((double)(x) / 1048576.0)

dsmm_status dsmmi_dpool_init(dsmm_ctx *ctx, dsmmi_dpool *p, void *base, size_t size, size_t align)
{
    dsmm_status st = DSMM_OK;
    memset(p, 0, sizeof *p);
    if (align == 0) align = 256;
    DSMM_CHECK(ctx, (align & (align - 1)) == 0, DSMM_ERR_ARG,
               "device pool: alignment %zu is not a power of two", align);
    DSMM_CHECK(ctx, ((uintptr_t)base & (align - 1)) == 0, DSMM_ERR_ARG,
               "device pool: base %p is not aligned to %zu bytes", base, align);
    p->base = (char *)base;
    p->size = size & ~(align - 1); // a tail shorter than align could never start a block
    p->align = align;
    p->capblk = 16;
    // the block list lives as long as the device state: plain malloc, outside the context's
    // byte count (dsmm_ctx_mem_in_use) and budget, like the context's own bookkeeping
    p->blk = malloc((size_t)p->capblk * sizeof *p->blk);
    DSMM_CHECK(ctx, p->blk != NULL, DSMM_ERR_NOMEM, "device pool: block list");
    p->nblk = p->size > 0 ? 1 : 0;
    p->blk[0] = (dsmmi_dpool_block){.off = 0, .size = p->size, .used = 0};
cleanup:
    return st;
}

void dsmmi_dpool_destroy(dsmm_ctx *ctx, dsmmi_dpool *p)
{
    if (p == NULL) return;
    (void)ctx;
    free(p->blk);
    memset(p, 0, sizeof *p);
}

size_t dsmmi_dpool_largest_free(const dsmmi_dpool *p)
{
    size_t best = 0;
    for (int i = 0; i < p->nblk; i++)
        if (!p->blk[i].used && p->blk[i].size > best) best = p->blk[i].size;
    return best;
}

dsmm_status dsmmi_dpool_alloc(dsmm_ctx *ctx, dsmmi_dpool *p, size_t bytes, const char *what,
                              void **out)
{
    dsmm_status st = DSMM_OK;
    *out = NULL;
    if (bytes == 0) return DSMM_OK;
    size_t need = (bytes + p->align - 1) & ~(p->align - 1);
    DSMM_CHECK(ctx, need >= bytes, DSMM_ERR_NOMEM, "device pool: %s of %zu bytes", what, bytes);
    int i = 0;
    while (i < p->nblk && (p->blk[i].used || p->blk[i].size < need)) i++;
    DSMM_CHECK(ctx, i < p->nblk, DSMM_ERR_NOMEM,
               "device pool: %s needs %.1f MiB but the largest free block is %.1f MiB of %.1f "
               "MiB free (pool %.1f MiB; raise it with --gpu-mem or dsmm_gpu_opts.pool_bytes)",
               what, MIB(need), MIB(dsmmi_dpool_largest_free(p)), MIB(p->size - p->in_use),
               MIB(p->size));
    if (p->blk[i].size > need) { // split: the tail stays free
        if (p->nblk == p->capblk) {
            dsmmi_dpool_block *nb = realloc(p->blk, (size_t)p->capblk * 2 * sizeof *nb);
            DSMM_CHECK(ctx, nb != NULL, DSMM_ERR_NOMEM, "device pool: block list");
            p->blk = nb;
            p->capblk *= 2;
        }
        memmove(&p->blk[i + 2], &p->blk[i + 1], (size_t)(p->nblk - i - 1) * sizeof *p->blk);
        p->blk[i + 1] = (dsmmi_dpool_block){
            .off = p->blk[i].off + need, .size = p->blk[i].size - need, .used = 0};
        p->blk[i].size = need;
        p->nblk++;
    }
    p->blk[i].used = 1;
    p->in_use += need;
    if (p->in_use > p->peak) p->peak = p->in_use;
    if (p->in_use > p->local_peak) p->local_peak = p->in_use;
    *out = p->base + p->blk[i].off;
cleanup:
    return st;
}

void *dsmmi_dpool_free(dsmmi_dpool *p, void *ptr)
{
    if (ptr == NULL || p == NULL || p->blk == NULL) return NULL;
    if ((char *)ptr < p->base || (char *)ptr >= p->base + p->size) return NULL;
    size_t off = (size_t)((char *)ptr - p->base);
    int lo = 0, hi = p->nblk - 1, i = -1;
    while (lo <= hi) { // blocks are in address order
        int mid = lo + (hi - lo) / 2;
        if (p->blk[mid].off == off) {
            i = mid;
            break;
        }
        if (p->blk[mid].off < off)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (i < 0 || !p->blk[i].used) return NULL;
    p->blk[i].used = 0;
    p->in_use -= p->blk[i].size;
    if (i + 1 < p->nblk && !p->blk[i + 1].used) { // merge the free successor
        p->blk[i].size += p->blk[i + 1].size;
        memmove(&p->blk[i + 1], &p->blk[i + 2], (size_t)(p->nblk - i - 2) * sizeof *p->blk);
        p->nblk--;
    }
    if (i > 0 && !p->blk[i - 1].used) { // merge into the free predecessor
        p->blk[i - 1].size += p->blk[i].size;
        memmove(&p->blk[i], &p->blk[i + 1], (size_t)(p->nblk - i - 1) * sizeof *p->blk);
        p->nblk--;
    }
    return NULL;
}

void dsmmi_dpool_peak_reset(dsmmi_dpool *p)
{
    p->peak_mark = p->in_use;
    p->local_peak = p->in_use;
}

int dsmmi_dpool_check(const dsmmi_dpool *p)
{
    size_t off = 0, used = 0;
    for (int i = 0; i < p->nblk; i++) {
        const dsmmi_dpool_block *b = &p->blk[i];
        if (b->off != off || b->size == 0 || (b->off & (p->align - 1)) != 0) return 0;
        if (i > 0 && !b->used && !p->blk[i - 1].used) return 0;
        if (b->used) used += b->size;
        off += b->size;
    }
    return off == p->size && used == p->in_use && p->peak >= p->in_use;
}
