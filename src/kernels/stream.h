// src/kernels/stream.h: streaming (non-temporal) stores for output written once and not read
// back soon: C of a row-wise SpMM, C of a SpGEMM. A plain store reads the line first (a read
// for ownership) and writes it back later; a streaming store writes it once and leaves the
// cache alone. SSE2 (every x86-64); elsewhere plain copies.
#ifndef DSMM_KERNELS_STREAM_H
#define DSMM_KERNELS_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define DSMMI_HAVE_STREAM 1
#else
#define DSMMI_HAVE_STREAM 0
#endif

/* 32 bytes from src to dst (16-byte aligned). */
static inline void dsmmi_stream32(void *dst, const void *src)
{
#if DSMMI_HAVE_STREAM
    __m128i lo, hi;
    memcpy(&lo, src, 16);
    memcpy(&hi, (const char *)src + 16, 16);
    _mm_stream_si128((__m128i *)dst, lo);
    _mm_stream_si128((__m128i *)dst + 1, hi);
#else
    memcpy(dst, src, 32);
#endif
}

/* The value y (a vector variable, a multiple of 32 bytes when nt) stored at dst: with
 * streaming stores when nt (dst 16-byte aligned), else a plain copy. */
#define DSMMI_STORE_STREAMED(nt, dst, y)                                                           \
    do {                                                                                           \
        if (nt) {                                                                                  \
            for (size_t o_ = 0; o_ < sizeof(y); o_ += 32)                                          \
                dsmmi_stream32((char *)(dst) + o_, (const char *)&(y) + o_);                       \
        } else {                                                                                   \
            memcpy((dst), &(y), sizeof(y));                                                        \
        }                                                                                          \
    } while (0)
/* Orders the streaming stores before what follows (another thread may read them next). */
static inline void dsmmi_stream_fence(void)
{
#if DSMMI_HAVE_STREAM
    _mm_sfence();
#endif
}

/* memcpy of n bytes with streaming stores for the 16-byte-aligned middle, not fenced: the
 * caller runs dsmmi_stream_fence before another thread may read dst. */
static inline void dsmmi_stream_copy_unfenced(void *dst, const void *src, size_t n)
{
#if DSMMI_HAVE_STREAM
    char *d = dst;
    const char *s = src;
    size_t head = (size_t)(-(uintptr_t)d & 15);
    if (n < head + 64) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)s);
        __m128i x1 = _mm_loadu_si128((const __m128i *)s + 1);
        __m128i x2 = _mm_loadu_si128((const __m128i *)s + 2);
        __m128i x3 = _mm_loadu_si128((const __m128i *)s + 3);
        _mm_stream_si128((__m128i *)d, x0);
        _mm_stream_si128((__m128i *)d + 1, x1);
        _mm_stream_si128((__m128i *)d + 2, x2);
        _mm_stream_si128((__m128i *)d + 3, x3);
    }
    memcpy(d, s, n);
#else
    memcpy(dst, src, n);
#endif
}

/* memcpy of n bytes with streaming stores for the 16-byte-aligned middle; fenced. */
static inline void dsmmi_stream_copy(void *dst, const void *src, size_t n)
{
    dsmmi_stream_copy_unfenced(dst, src, n);
    dsmmi_stream_fence();
}

#endif
