// src/base/alloc.c: host allocation with overflow checks, a memory budget, peak tracking,
// a user allocator and k-th-failure injection.
// Each block carries a 64-byte header: the bytes it counts against the budget, then the
// bytes it holds (larger after dsmmi_shrink_account), so frees are accounted exactly and the
// block cache knows what a kept block can hold, then how far the header sits into what the
// system (or the user's allocator) returned. That offset (0-63 bytes, PAD asked for on top)
// puts the user part on a 64-byte boundary, a cache line and an AVX-512 vector: the SpMM
// kernels' 64-byte loads and stores of dense rows then split no line (docs/kernels.md).
// posix_memalign would align too, but glibc then served the 13.5 MB private copies of a
// column-wise SpMM from fresh pages on the first calls (faulted in as huge pages, 15-35 ms a
// call against 2 ms), where malloc's blocks are reused; and no realloc keeps its alignment.
#ifdef __linux__
#define _DEFAULT_SOURCE // madvise
#include <sys/mman.h>
#include <unistd.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define ALIGN 64
#define HDR   64          // a multiple of ALIGN: the user part is aligned when the header is
#define PAD   (ALIGN - 1) // asked for on top of HDR + bytes, for the offset

static void hdr_set(unsigned char *base, size_t counted, size_t held)
{
    memcpy(base, &counted, sizeof counted);
    memcpy(base + sizeof counted, &held, sizeof held);
}

static size_t hdr_counted(const unsigned char *base)
{
    size_t v;
    memcpy(&v, base, sizeof v);
    return v;
}

static size_t hdr_held(const unsigned char *base)
{
    size_t v;
    memcpy(&v, base + sizeof v, sizeof v);
    return v;
}

static size_t hdr_off(const unsigned char *base)
{
    size_t v;
    memcpy(&v, base + 2 * sizeof v, sizeof v);
    return v;
}

// How far into a raw block the header goes: to the first byte whose user part is aligned.
static size_t place_off(const unsigned char *raw)
{
    return dsmmi_align_skip(raw + HDR, ALIGN);
}

// The header's place in a raw block (place_off), recorded in the header.
static unsigned char *hdr_place(unsigned char *raw)
{
    size_t off = place_off(raw);
    unsigned char *base = raw + off;
    memcpy(base + 2 * sizeof off, &off, sizeof off);
    return base;
}

bool dsmmi_mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

static void *raw_malloc(dsmm_ctx *ctx, size_t n)
{
    if (ctx && ctx->have_alloc) return ctx->alloc.malloc_fn(ctx->alloc.user, n);
    return malloc(n);
}

static void *raw_realloc(dsmm_ctx *ctx, void *p, size_t n)
{
    if (ctx && ctx->have_alloc) return ctx->alloc.realloc_fn(ctx->alloc.user, p, n);
    return realloc(p, n);
}

static void raw_free(dsmm_ctx *ctx, void *p)
{
    if (ctx && ctx->have_alloc)
        ctx->alloc.free_fn(ctx->alloc.user, p);
    else
        free(p);
}

// Frees a block by its header.
static void block_free(dsmm_ctx *ctx, unsigned char *base)
{
    raw_free(ctx, base - hdr_off(base));
}

// Counts one allocation attempt; true if this one must fail (injection).
static bool inject_failure(dsmm_ctx *ctx)
{
    long k = __atomic_fetch_add(&ctx->alloc_count, 1, __ATOMIC_RELAXED);
    long f = __atomic_load_n(&ctx->fail_at, __ATOMIC_RELAXED);
    return f >= 0 && k == f;
}

// Reserves bytes in the budget; false (and nothing reserved) if they do not fit.
static bool reserve(dsmm_ctx *ctx, size_t bytes)
{
    size_t cur = __atomic_load_n(&ctx->in_use, __ATOMIC_RELAXED);
    for (;;) {
        if (bytes > SIZE_MAX - cur) return false;
        size_t next = cur + bytes;
        if (ctx->budget != 0 && next > ctx->budget) return false;
        if (__atomic_compare_exchange_n(&ctx->in_use, &cur, next, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            size_t pk = __atomic_load_n(&ctx->peak, __ATOMIC_RELAXED);
            while (next > pk && !__atomic_compare_exchange_n(&ctx->peak, &pk, next, true,
                                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
            return true;
        }
    }
}

static void unreserve(dsmm_ctx *ctx, size_t bytes)
{
    __atomic_fetch_sub(&ctx->in_use, bytes, __ATOMIC_RELAXED);
}

// Large blocks (SpGEMM outputs reach gigabytes) ask for transparent huge pages where the
// kernel leaves them to madvise: first touch then faults once per 2 MiB instead of per 4 KiB,
// which was 10-20% of a large multiply. Only the 2 MiB-aligned interior is advised.
static void advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (n < 4 * huge) return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

void dsmmi_move_release(void *dst, void *src, size_t n)
{
    enum { PIECE = 1 << 18 };
    char *d = dst, *s = src;
#ifdef __linux__
    // Only whole pages inside src: the allocator's header before it and the page holding its
    // end are left alone.
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 0, done = (uintptr_t)s;
    if (page > 0) done = (done + page - 1) / page * page;
#endif
    for (size_t at = 0; at < n; at += PIECE) {
        size_t len = n - at < PIECE ? n - at : PIECE;
        memcpy(d + at, s + at, len);
#ifdef __linux__
        uintptr_t end = page > 0 ? (uintptr_t)(s + at + len) / page * page : 0;
        if (end > done) {
            (void)madvise((void *)done, end - done, MADV_DONTNEED);
            done = end;
        }
#endif
    }
}

// Freed blocks of CACHE_MIN to CACHE_SMALL_TOP bytes, and of CACHE_BIG or more, are kept for
// the next allocation of about their size, at most CACHE_BIG_SLOTS of the big ones (SpGEMM
// outputs of gigabytes); the smaller ones take the other slots (CACHE_SMALL_BYTES at most).
// CACHE_MIN is 16 KiB: a product's workspaces and staging buffers (tens of KiB each) came
// from glibc's heap, whose top was given back after each product when the process had not
// freed a large block before (glibc then trims above 128 KiB): p2p-Gnutella08's A*A read
// from a raw CSR file faulted ~50 pages a product, 0.53 against 0.42 ms on 2 threads
// (measured 2026-11-23, eighteenth session; kept from 128 KiB up before). Below 32 MiB,
// glibc serves a block from its heap and gives the heap's top back to the kernel when it exceeds a
// threshold that follows the blocks it has seen, so a product repeated on 2 threads (C, then two
// staging buffers above it) had its C faulted in afresh each time: p2p-Gnutella08's A*A took
// 1.2-1.7 ms on 2 threads against 0.7-0.9 with glibc's trimming off (measured 2026-11-23).
#define CACHE_MIN         ((size_t)16 << 10)
#define CACHE_SMALL_TOP   ((size_t)2 << 20) // below it and from CACHE_BIG up, not between
#define CACHE_BIG         DSMMI_CACHE_BIG
#define CACHE_BIG_SLOTS   2
#define CACHE_SMALL_BYTES ((size_t)12 << 20)

size_t dsmmi_cache_min(dsmm_ctx *ctx, size_t bytes)
{
    if (ctx == NULL) return 0;
    size_t old = ctx->cache_min;
    ctx->cache_min = bytes;
    return old;
}

// Whether a block of bytes may be kept. Blocks of 2 to 32 MiB are not: kept, they were often
// not the sizes the next requests asked for, and they added to the peak (cit-HepPh's A*A at 2
// threads: 56 MB kept below 2 MiB, 70 MB kept from 1 MiB up or up to 64 MiB of them).
static bool cache_fits(const dsmm_ctx *ctx, size_t bytes)
{
    size_t lo = ctx->cache_min != 0 ? ctx->cache_min : CACHE_MIN;
    return bytes >= lo && (bytes < CACHE_SMALL_TOP || bytes >= CACHE_BIG);
}

static void cache_lock(dsmm_ctx *ctx)
{
    while (__atomic_test_and_set(&ctx->cache_lock, __ATOMIC_ACQUIRE)) {
    }
}

static void cache_unlock(dsmm_ctx *ctx)
{
    __atomic_clear(&ctx->cache_lock, __ATOMIC_RELEASE);
}

void dsmmi_cache_drop(dsmm_ctx *ctx)
{
    if (ctx == NULL) return;
    cache_lock(ctx);
    for (int s = 0; s < DSMMI_CACHE_SLOTS; s++) {
        if (ctx->cache[s]) block_free(ctx, ctx->cache[s]);
        ctx->cache[s] = NULL;
        ctx->cache_bytes[s] = 0;
    }
    ctx->cached = 0;
    cache_unlock(ctx);
}

// The smallest kept block of bytes..2*bytes (raw pointer, header included), or NULL.
// Smallest, not first: a product's column array is often half its value array, and a
// first fit handed the value array's block to the columns, so the values took a fresh
// block (faulted in afresh) on every product.
static unsigned char *cache_take(dsmm_ctx *ctx, size_t bytes)
{
    unsigned char *p = NULL;
    cache_lock(ctx);
    int best = -1;
    for (int s = 0; s < DSMMI_CACHE_SLOTS; s++) {
        size_t b = ctx->cache_bytes[s];
        if (ctx->cache[s] && b >= bytes && b / 2 <= bytes &&
            (best < 0 || b < ctx->cache_bytes[best]))
            best = s;
    }
    if (best >= 0) {
        p = ctx->cache[best];
        ctx->cached -= ctx->cache_bytes[best];
        ctx->cache[best] = NULL;
        ctx->cache_bytes[best] = 0;
    }
    cache_unlock(ctx);
    return p;
}

// Keeps a freed block when a slot is free, the limits above and the budget leave room; true
// if kept.
static bool cache_put(dsmm_ctx *ctx, unsigned char *base, size_t bytes)
{
    bool kept = false;
    cache_lock(ctx);
    size_t in_use = __atomic_load_n(&ctx->in_use, __ATOMIC_RELAXED);
    int big = 0, free_slots = 0;
    size_t small = 0;
    for (int s = 0; s < DSMMI_CACHE_SLOTS; s++) {
        if (ctx->cache[s] == NULL)
            free_slots++;
        else if (ctx->cache_bytes[s] >= CACHE_BIG)
            big++;
        else
            small += ctx->cache_bytes[s];
    }
    // A smaller block leaves the free slots the big ones may still take.
    int room = bytes >= CACHE_BIG
                   ? big < CACHE_BIG_SLOTS && free_slots > 0
                   : free_slots > CACHE_BIG_SLOTS - big && small + bytes <= CACHE_SMALL_BYTES;
    if (room && (ctx->budget == 0 || in_use + ctx->cached + bytes <= ctx->budget)) {
        for (int s = 0; s < DSMMI_CACHE_SLOTS && !kept; s++) {
            if (ctx->cache[s] == NULL) {
                ctx->cache[s] = base;
                ctx->cache_bytes[s] = bytes;
                ctx->cached += bytes;
                kept = true;
            }
        }
    }
    cache_unlock(ctx);
    return kept;
}

static void *alloc_common(dsmm_ctx *ctx, size_t n, size_t size, bool zero)
{
    size_t bytes;
    if (!dsmmi_mul_ok(n, size, &bytes) || bytes > SIZE_MAX - HDR - PAD) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "allocation of %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    if (ctx == NULL) return zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
    if (inject_failure(ctx)) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "injected failure of allocation #%ld (%zu bytes)", ctx->fail_at, bytes);
        return NULL;
    }
    if (cache_fits(ctx, bytes)) {
        unsigned char *c = cache_take(ctx, bytes);
        if (c != NULL) {
            size_t held = hdr_held(c); // all of it counts: its pages may be resident
            if (reserve(ctx, held)) {
                hdr_set(c, held, held);
                if (zero) memset(c + HDR, 0, bytes); // resident pages: cheaper than faults
                return c + HDR;
            }
            block_free(ctx, c);
        }
    }
    // Kept blocks count against the budget too: drop them before failing.
    if (ctx->budget != 0 && ctx->cached != 0 &&
        __atomic_load_n(&ctx->in_use, __ATOMIC_RELAXED) + ctx->cached + bytes > ctx->budget)
        dsmmi_cache_drop(ctx);
    if (!reserve(ctx, bytes)) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "allocation of %zu bytes exceeds the memory budget (%zu of %zu bytes in use)",
                    bytes, ctx->in_use, ctx->budget);
        return NULL;
    }
    unsigned char *raw = raw_malloc(ctx, bytes + HDR + PAD);
    if (raw == NULL) {
        unreserve(ctx, bytes);
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "out of memory allocating %zu bytes",
                    bytes);
        return NULL;
    }
    unsigned char *p = hdr_place(raw);
    hdr_set(p, bytes, bytes);
    advise_huge(raw, bytes + HDR + PAD);
    if (zero) memset(p + HDR, 0, bytes);
    return p + HDR;
}

void *dsmmi_malloc(dsmm_ctx *ctx, size_t n, size_t size)
{
    return alloc_common(ctx, n, size, false);
}

void *dsmmi_calloc(dsmm_ctx *ctx, size_t n, size_t size)
{
    return alloc_common(ctx, n, size, true);
}

void *dsmmi_realloc(dsmm_ctx *ctx, void *p, size_t n, size_t size)
{
    if (p == NULL) return dsmmi_malloc(ctx, n, size);
    size_t bytes;
    if (!dsmmi_mul_ok(n, size, &bytes) || bytes > SIZE_MAX - HDR - PAD) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "reallocation to %zu x %zu bytes overflows", n, size);
        return NULL;
    }
    if (ctx == NULL) return realloc(p, bytes ? bytes : 1);
    unsigned char *base = (unsigned char *)p - HDR;
    size_t old = hdr_counted(base);
    if (inject_failure(ctx)) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "injected failure of allocation #%ld (%zu bytes)", ctx->fail_at, bytes);
        return NULL;
    }
    if (bytes > old && !reserve(ctx, bytes - old)) {
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "allocation of %zu bytes exceeds the memory budget (%zu of %zu bytes in use)",
                    bytes - old, ctx->in_use, ctx->budget);
        return NULL;
    }
    size_t off = hdr_off(base);
    unsigned char *q = raw_realloc(ctx, base - off, bytes + HDR + PAD);
    if (q == NULL) {
        if (bytes > old) unreserve(ctx, bytes - old);
        dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                    "out of memory reallocating to %zu bytes", bytes);
        return NULL;
    }
    if (bytes < old) unreserve(ctx, old - bytes);
    // The new block may sit differently against 64 bytes: move header and data to its place.
    size_t noff = place_off(q);
    if (noff != off) memmove(q + noff, q + off, HDR + (bytes < old ? bytes : old));
    unsigned char *nb = hdr_place(q);
    hdr_set(nb, bytes, bytes);
    return nb + HDR;
}

void dsmmi_shrink_account(dsmm_ctx *ctx, void *p, size_t n, size_t size)
{
    size_t bytes;
    if (ctx == NULL || p == NULL || !dsmmi_mul_ok(n, size, &bytes)) return;
    unsigned char *base = (unsigned char *)p - HDR;
    size_t old = hdr_counted(base);
    if (bytes >= old) return;
    unreserve(ctx, old - bytes);
    hdr_set(base, bytes, hdr_held(base));
}

void *dsmmi_free(dsmm_ctx *ctx, void *p)
{
    if (p == NULL) return NULL;
    if (ctx == NULL) {
        free(p);
        return NULL;
    }
    unsigned char *base = (unsigned char *)p - HDR;
    size_t held = hdr_held(base);
    unreserve(ctx, hdr_counted(base));
    if (!cache_fits(ctx, held) || !cache_put(ctx, base, held)) block_free(ctx, base);
    return NULL;
}

void *dsmm_free(dsmm_ctx *ctx, void *p)
{
    return dsmmi_free(dsmmi_ctx_ok(ctx) ? ctx : NULL, p);
}

char *dsmmi_strdup(dsmm_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = dsmmi_malloc(ctx, n, 1);
    if (d) memcpy(d, s, n);
    return d;
}

bool dsmmi_budget_room(const dsmm_ctx *ctx, size_t bytes)
{
    if (ctx == NULL || ctx->budget == 0) return true;
    size_t in_use = __atomic_load_n(&ctx->in_use, __ATOMIC_RELAXED);
    return bytes <= ctx->budget && in_use <= ctx->budget - bytes;
}

dsmm_status dsmmi_budget_check(dsmm_ctx *ctx, size_t bytes, const char *what)
{
    if (dsmmi_budget_room(ctx, bytes)) return DSMM_OK;
    size_t in_use = __atomic_load_n(&ctx->in_use, __ATOMIC_RELAXED);
    return dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                       "%s needs %zu bytes, more than the memory budget allows (%zu of %zu "
                       "bytes in use)",
                       what, bytes, in_use, ctx->budget);
}

dsmm_status dsmm_ctx_set_allocator(dsmm_ctx *ctx, const dsmm_allocator *alloc)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, ctx->in_use == 0, DSMM_ERR_ARG,
               "allocator changed while %zu bytes are allocated", ctx->in_use);
    dsmmi_cache_drop(ctx); // kept blocks belong to the old allocator
    if (alloc == NULL) {
        ctx->have_alloc = 0;
    } else {
        DSMM_CHECK(ctx, alloc->malloc_fn && alloc->realloc_fn && alloc->free_fn, DSMM_ERR_ARG,
                   "allocator needs malloc_fn, realloc_fn and free_fn");
        ctx->alloc = *alloc;
        ctx->have_alloc = 1;
    }
cleanup:
    return st;
}

void dsmm_ctx_set_mem_budget(dsmm_ctx *ctx, size_t bytes)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    dsmmi_cache_drop(ctx);
    ctx->budget = bytes;
}

size_t dsmm_ctx_mem_budget(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->budget : 0;
}

size_t dsmm_ctx_mem_in_use(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->in_use : 0;
}

size_t dsmm_ctx_mem_peak(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->peak : 0;
}

void dsmm_ctx_fail_alloc_at(dsmm_ctx *ctx, long k)
{
    if (!dsmmi_ctx_ok(ctx)) return;
    ctx->fail_at = k < 0 ? -1 : ctx->alloc_count + k;
}

long dsmm_ctx_alloc_count(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->alloc_count : 0;
}
