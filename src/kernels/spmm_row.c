// src/kernels/spmm_row.c: row-wise SpMM, C = alpha * A * B + beta * C with A in CSR: each row
// of C gathers the rows of B its row of A names. Rows are split into chunks of equal
// nnz + rows (prefix of rowptr plus the row index, binary search), 8 per thread, taken
// dynamically; each row is computed whole by one thread, so the result is bitwise the same
// at any thread count. The inner loops (spmm_row_tmpl.h) block k into register-sized pieces.
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/stream.h"

#define CHUNKS_PER_THREAD 8

#define SPMM_TMPL       "kernels/spmm_row_tmpl.h"
#define SPMM_FN(suffix) row_##suffix
#include "kernels/spmm_instances.h"
#undef SPMM_TMPL

#if DSMMI_HAVE_WIDE
#include <immintrin.h>

// k of one vector (a row of B of 32 bytes on AVX2, or 64 on AVX-512): ROW_VBLOCK(1)'s loop (two
// sets of sums for alternate entries, a row's odd entry into the first) with the odd entry
// taken under a mask instead of a branch on the row's parity, which on graphs mispredicts
// about every other row. The odd entry's multiply-add is always done, from entry min(p,
// plast), and kept by a blend only where the row has one; its row of B is read by a masked
// load, which reads nothing where the mask is off, so the stand-in costs no line of B and its
// NaN or inf never reaches the sum. The same operations on the kept sums as the template's
// instance (the x86-64-v3 clone, or the 64-byte one), so the same bits (test_odd_entry). The
// vector types are GCC's, as in the template, so the multiply-adds contract the same way; the
// masked load and the blend are intrinsics, hence functions of their own compiled for the
// ISA (the clones cannot hold intrinsics the baseline lacks). MASK(c) makes the mask of
// condition c, MLOAD(ptr, mask) loads under it and BLEND(mask, old, new) keeps new where set.
#define ROW_ODD1(NAME, ATTR, T, V, CI, PAT, MT, MASK, MLOAD, BLEND)                                \
    ATTR static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci,                      \
                          const T *restrict av, const T *restrict B, dsmm_idx ldb, T *restrict C,  \
                          dsmm_idx ldc, const dsmm_idx *restrict crow, T alpha, T beta,            \
                          dsmm_idx r0, dsmm_idx r1, int nt)                                        \
    {                                                                                              \
        const dsmm_idx plast = rp[r1] - 1; /* >= 0: the caller's check */                          \
        const V vzero = {0};                                                                       \
        (void)av;                                                                                  \
        for (dsmm_idx i = r0; i < r1; i++) {                                                       \
            dsmm_idx p = rp[i], p1 = rp[i + 1];                                                    \
            V s0 = vzero, s1 = vzero, x, y;                                                        \
            for (; p + 2 <= p1; p += 2) {                                                          \
                memcpy(&x, B + (dsmm_idx)ci[p] * ldb, sizeof x);                                   \
                memcpy(&y, B + (dsmm_idx)ci[p + 1] * ldb, sizeof y);                               \
                s0 += (PAT ? (T)1 : av[p]) * x;                                                    \
                s1 += (PAT ? (T)1 : av[p + 1]) * y;                                                \
            }                                                                                      \
            dsmm_idx q = p < plast ? p : plast;                                                    \
            MT keep = MASK(p < p1);                                                                \
            x = (V)MLOAD(B + (dsmm_idx)ci[q] * ldb, keep);                                         \
            y = s0 + (PAT ? (T)1 : av[q]) * x;                                                     \
            s0 = (V)BLEND(keep, s0, y);                                                            \
            V sum = s0 + s1;                                                                       \
            T *c = C + (crow ? crow[i] : i) * ldc;                                                 \
            y = alpha * sum;                                                                       \
            if (beta != 0) {                                                                       \
                memcpy(&x, c, sizeof x);                                                           \
                y += beta * x;                                                                     \
            }                                                                                      \
            if (nt) {                                                                              \
                for (size_t o = 0; o < sizeof y; o += 32)                                          \
                    dsmmi_stream32((char *)c + o, (const char *)&y + o);                           \
            } else {                                                                               \
                memcpy(c, &y, sizeof y);                                                           \
            }                                                                                      \
        }                                                                                          \
        if (nt) dsmmi_stream_fence();                                                              \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
#define ODD_AVX2          __attribute__((target("arch=x86-64-v3")))
#define MASK8(c)          _mm256_set1_epi32(-(int)(c))
#define MLOAD8F(ptr, m)   _mm256_maskload_ps(ptr, m)
#define MLOAD4D(ptr, m)   _mm256_maskload_pd(ptr, m)
#define BLEND8F(m, o, n)  _mm256_blendv_ps(o, n, _mm256_castsi256_ps(m))
#define BLEND4D(m, o, n)  _mm256_blendv_pd(o, n, _mm256_castsi256_pd(m))
#define MASK16(c)         ((__mmask16)(-(int)(c)))
#define MASK8W(c)         ((__mmask8)(-(int)(c)))
#define MLOAD16F(ptr, m)  _mm512_maskz_loadu_ps(m, ptr)
#define MLOAD8D(ptr, m)   _mm512_maskz_loadu_pd(m, ptr)
#define BLEND16F(m, o, n) _mm512_mask_blend_ps(m, o, n)
#define BLEND8D(m, o, n)  _mm512_mask_blend_pd(m, o, n)
#define ODD_F(NAME, CI, PAT)                                                                       \
    ROW_ODD1(NAME, ODD_AVX2, float, dsmmi_v8f, CI, PAT, __m256i, MASK8, MLOAD8F, BLEND8F)
#define ODD_D(NAME, CI, PAT)                                                                       \
    ROW_ODD1(NAME, ODD_AVX2, double, dsmmi_v4d, CI, PAT, __m256i, MASK8, MLOAD4D, BLEND4D)
#define ODD_FW(NAME, CI, PAT)                                                                      \
    ROW_ODD1(NAME, DSMMI_WIDE, float, dsmmi_v16f, CI, PAT, __mmask16, MASK16, MLOAD16F, BLEND16F)
#define ODD_DW(NAME, CI, PAT)                                                                      \
    ROW_ODD1(NAME, DSMMI_WIDE, double, dsmmi_v8d, CI, PAT, __mmask8, MASK8W, MLOAD8D, BLEND8D)
ODD_F(odd1_f32, int32_t, 0);
ODD_F(odd1_f64, dsmm_idx, 0);
ODD_F(odd1_f32p, int32_t, 1);
ODD_F(odd1_f64p, dsmm_idx, 1);
ODD_D(odd1_d32, int32_t, 0);
ODD_D(odd1_d64, dsmm_idx, 0);
ODD_D(odd1_d32p, int32_t, 1);
ODD_D(odd1_d64p, dsmm_idx, 1);
ODD_FW(odd1_f32_w, int32_t, 0);
ODD_FW(odd1_f64_w, dsmm_idx, 0);
ODD_FW(odd1_f32p_w, int32_t, 1);
ODD_FW(odd1_f64p_w, dsmm_idx, 1);
ODD_DW(odd1_d32_w, int32_t, 0);
ODD_DW(odd1_d64_w, dsmm_idx, 0);
ODD_DW(odd1_d32p_w, int32_t, 1);
ODD_DW(odd1_d64p_w, dsmm_idx, 1);
#undef ROW_ODD1

// k that no vector of 2, 4 or 8 lanes fits, below two vectors (3, 5, 6, 7 and 9-15 floats; 3
// and 5-7 doubles) on AVX2: NF = 0 or 1 whole vector of H lanes, then one vector under a mask of
// the k - NF * H lanes left, where ROW_SMALL_FN (spmm_row_tmpl.h) and ROW_PASS take two
// overlapping ones (two loads and two multiply-adds an entry where one does; ca-condmat at k = 3
// and 7 float ran 1.2x as long as at k = 4 and 8). The lanes past k read nothing, add 0 and are
// not stored. Two sets of sums for alternate entries, the odd entry from min(p, plast) kept by
// a blend: the same operations on each column as ROW_SMALL_FN and ROW_PASS with one vector and
// the extra one, so the same bits (test_odd_entry compares them with the branch's). MASKK(k) is
// the mask of the first k lanes, MLOAD and MSTORE load and store under it, MASK and BLEND as in
// ROW_ODD1.
#define ROW_SMALLM(NAME, ATTR, T, V, H, NF, CI, PAT, MT, MASKK, MASK, MLOAD, MSTORE, BLEND)        \
    ATTR static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci,                      \
                          const T *restrict av, const T *restrict B, dsmm_idx ldb, T *restrict C,  \
                          dsmm_idx ldc, const dsmm_idx *restrict crow, dsmm_idx k, T alpha,        \
                          T beta, dsmm_idx r0, dsmm_idx r1)                                        \
    {                                                                                              \
        const dsmm_idx plast = rp[r1] - 1; /* >= 0: the caller's check */                          \
        const V vzero = {0};                                                                       \
        const MT lanes = MASKK(k - (NF) * (H));                                                    \
        (void)av;                                                                                  \
        for (dsmm_idx i = r0; i < r1; i++) {                                                       \
            dsmm_idx p = rp[i], p1 = rp[i + 1];                                                    \
            V s0 = vzero, s1 = vzero, f0 = vzero, f1 = vzero, x, y;                                \
            for (; p + 2 <= p1; p += 2) {                                                          \
                const T *b0 = B + (dsmm_idx)ci[p] * ldb, *b1 = B + (dsmm_idx)ci[p + 1] * ldb;      \
                T a0 = PAT ? (T)1 : av[p], a1 = PAT ? (T)1 : av[p + 1];                            \
                if (NF) {                                                                          \
                    memcpy(&x, b0, sizeof x);                                                      \
                    memcpy(&y, b1, sizeof y);                                                      \
                    f0 += a0 * x;                                                                  \
                    f1 += a1 * y;                                                                  \
                }                                                                                  \
                x = (V)MLOAD(b0 + (NF) * (H), lanes);                                              \
                y = (V)MLOAD(b1 + (NF) * (H), lanes);                                              \
                s0 += a0 * x;                                                                      \
                s1 += a1 * y;                                                                      \
            }                                                                                      \
            dsmm_idx q = p < plast ? p : plast;                                                    \
            const T *bq = B + (dsmm_idx)ci[q] * ldb;                                               \
            T aq = PAT ? (T)1 : av[q];                                                             \
            MT keep = MASK(p < p1);                                                                \
            T *c = C + (crow ? crow[i] : i) * ldc;                                                 \
            if (NF) {                                                                              \
                memcpy(&x, bq, sizeof x);                                                          \
                y = f0 + aq * x;                                                                   \
                f0 = (V)BLEND(keep, f0, y);                                                        \
                y = alpha * (f0 + f1);                                                             \
                if (beta != 0) {                                                                   \
                    memcpy(&x, c, sizeof x);                                                       \
                    y += beta * x;                                                                 \
                }                                                                                  \
                memcpy(c, &y, sizeof y);                                                           \
            }                                                                                      \
            x = (V)MLOAD(bq + (NF) * (H), lanes);                                                  \
            y = s0 + aq * x;                                                                       \
            s0 = (V)BLEND(keep, s0, y);                                                            \
            y = alpha * (s0 + s1);                                                                 \
            if (beta != 0) {                                                                       \
                x = (V)MLOAD(c + (NF) * (H), lanes);                                               \
                y += beta * x;                                                                     \
            }                                                                                      \
            MSTORE(c + (NF) * (H), lanes, y);                                                      \
        }                                                                                          \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
// the first k lanes of 4 or 8 (k <= 8)
#define MASKK4(k) _mm_cmpgt_epi32(_mm_set1_epi32((int)(k)), _mm_setr_epi32(0, 1, 2, 3))
#define MASKK8(k)                                                                                  \
    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define MASKK4D(k)                                                                                 \
    _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)(k)), _mm256_setr_epi64x(0, 1, 2, 3))
#define MASK4(c)            _mm_set1_epi32(-(int)(c))
#define MASK4D(c)           _mm256_set1_epi64x(-(long long)(c))
#define MLOAD4F(ptr, m)     _mm_maskload_ps(ptr, m)
#define MSTORE4F(ptr, m, v) _mm_maskstore_ps(ptr, m, (__m128)(v))
#define MSTORE8F(ptr, m, v) _mm256_maskstore_ps(ptr, m, (__m256)(v))
#define MSTORE4D(ptr, m, v) _mm256_maskstore_pd(ptr, m, (__m256d)(v))
#define BLEND4F(m, o, n)    _mm_blendv_ps(o, n, _mm_castsi128_ps(m))
#define SMALLM_F4(NAME, CI, PAT)                                                                   \
    ROW_SMALLM(NAME, ODD_AVX2, float, dsmmi_v4f, 4, 0, CI, PAT, __m128i, MASKK4, MASK4, MLOAD4F,   \
               MSTORE4F, BLEND4F)
#define SMALLM_F8(NAME, NF, CI, PAT)                                                               \
    ROW_SMALLM(NAME, ODD_AVX2, float, dsmmi_v8f, 8, NF, CI, PAT, __m256i, MASKK8, MASK8, MLOAD8F,  \
               MSTORE8F, BLEND8F)
#define SMALLM_D4(NAME, NF, CI, PAT)                                                               \
    ROW_SMALLM(NAME, ODD_AVX2, double, dsmmi_v4d, 4, NF, CI, PAT, __m256i, MASKK4D, MASK4D,        \
               MLOAD4D, MSTORE4D, BLEND4D)
// The same loops on AVX-512VL: the lane masks in mask registers, the loads and stores under
// them. AVX2's masked store (vmaskmovps) took 3.4 ns a row against 0.8 for AVX-512's on the AMD
// EPYC (Zen 4) VM, where k = 7 float ran 1.35-1.7x as long as k = 8 (docs/kernels.md); the
// same sums, so the same bits.
#define MASKKW(k)            ((__mmask8)((1u << (unsigned)(k)) - 1u))
#define MLOAD4FW(ptr, m)     _mm_maskz_loadu_ps(m, ptr)
#define MLOAD8FW(ptr, m)     _mm256_maskz_loadu_ps(m, ptr)
#define MLOAD4DW(ptr, m)     _mm256_maskz_loadu_pd(m, ptr)
#define MSTORE4FW(ptr, m, v) _mm_mask_storeu_ps(ptr, m, (__m128)(v))
#define MSTORE8FW(ptr, m, v) _mm256_mask_storeu_ps(ptr, m, (__m256)(v))
#define MSTORE4DW(ptr, m, v) _mm256_mask_storeu_pd(ptr, m, (__m256d)(v))
#define BLEND4FW(m, o, n)    _mm_mask_blend_ps(m, o, n)
#define BLEND8FW(m, o, n)    _mm256_mask_blend_ps(m, o, n)
#define BLEND4DW(m, o, n)    _mm256_mask_blend_pd(m, o, n)
#define SMALLM_F4W(NAME, CI, PAT)                                                                  \
    ROW_SMALLM(NAME, DSMMI_WIDE, float, dsmmi_v4f, 4, 0, CI, PAT, __mmask8, MASKKW, MASK8W,        \
               MLOAD4FW, MSTORE4FW, BLEND4FW)
#define SMALLM_F8W(NAME, NF, CI, PAT)                                                              \
    ROW_SMALLM(NAME, DSMMI_WIDE, float, dsmmi_v8f, 8, NF, CI, PAT, __mmask8, MASKKW, MASK8W,       \
               MLOAD8FW, MSTORE8FW, BLEND8FW)
#define SMALLM_D4W(NAME, NF, CI, PAT)                                                              \
    ROW_SMALLM(NAME, DSMMI_WIDE, double, dsmmi_v4d, 4, NF, CI, PAT, __mmask8, MASKKW, MASK8W,      \
               MLOAD4DW, MSTORE4DW, BLEND4DW)
// Every instance of ROW_SMALLM for one instruction set: F4, F8 and D4 are the makers above, S
// the names' suffix (empty on AVX2, _w on AVX-512VL).
#define SMALLM_SET(F4, F8, D4, S)                                                                  \
    F4(small4_f32##S, int32_t, 0);                                                                 \
    F4(small4_f64##S, dsmm_idx, 0);                                                                \
    F4(small4_f32p##S, int32_t, 1);                                                                \
    F4(small4_f64p##S, dsmm_idx, 1);                                                               \
    F8(small8_f32##S, 0, int32_t, 0);                                                              \
    F8(small8_f64##S, 0, dsmm_idx, 0);                                                             \
    F8(small8_f32p##S, 0, int32_t, 1);                                                             \
    F8(small8_f64p##S, 0, dsmm_idx, 1);                                                            \
    F8(small16_f32##S, 1, int32_t, 0);                                                             \
    F8(small16_f64##S, 1, dsmm_idx, 0);                                                            \
    F8(small16_f32p##S, 1, int32_t, 1);                                                            \
    F8(small16_f64p##S, 1, dsmm_idx, 1);                                                           \
    D4(small4_d32##S, 0, int32_t, 0);                                                              \
    D4(small4_d64##S, 0, dsmm_idx, 0);                                                             \
    D4(small4_d32p##S, 0, int32_t, 1);                                                             \
    D4(small4_d64p##S, 0, dsmm_idx, 1);                                                            \
    D4(small8_d32##S, 1, int32_t, 0);                                                              \
    D4(small8_d64##S, 1, dsmm_idx, 0);                                                             \
    D4(small8_d32p##S, 1, int32_t, 1);                                                             \
    D4(small8_d64p##S, 1, dsmm_idx, 1)
SMALLM_SET(SMALLM_F4, SMALLM_F8, SMALLM_D4, );
SMALLM_SET(SMALLM_F4W, SMALLM_F8W, SMALLM_D4W, _w);
#undef SMALLM_SET
#undef ROW_SMALLM

// SpMV (k = 1) with B's column contiguous (ldb = 1), on AVX-512: a row's entries 8 at a time,
// B's values by a gather, the last (or only) piece of the row under a mask (zeros in the lanes
// past the row's end: no load, no NaN). A row of up to 8 entries so runs without a loop and
// without the branch on its length that the scalar loop mispredicts about once a row; longer
// rows loop once per 8 entries. The 8 lanes are summed at the row's end in a fixed order, so
// a row's sum does not depend on the thread count (it differs from the scalar loop's in the
// last bits). IDX(k, p) loads 8 columns under mask k, GATHER(k, idx) reads B at them, VAL(k,
// p) 8 values, FMA and HSUM combine them.
#define ROW_GATHER(NAME, T, VT, CI, PAT, IDX, GATHER, VAL, FMA, ADD, HSUM)                         \
    DSMMI_WIDE static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci,                \
                                const T *restrict av, const T *restrict B, T *restrict C,          \
                                dsmm_idx ldc, const dsmm_idx *restrict crow, T alpha, T beta,      \
                                dsmm_idx r0, dsmm_idx r1)                                          \
    {                                                                                              \
        (void)av;                                                                                  \
        for (dsmm_idx i = r0; i < r1; i++) {                                                       \
            dsmm_idx p = rp[i], p1 = rp[i + 1];                                                    \
            if (p == p1) { /* an empty row: the same sum, +0, without the gather and the adds */   \
                T zero = 0, *c = C + (crow ? crow[i] : i) * ldc;                                   \
                *c = beta != 0 ? alpha * zero + beta * *c : alpha * zero;                          \
                continue;                                                                          \
            }                                                                                      \
            VT acc = {0};                                                                          \
            for (; p + 8 <= p1; p += 8) {                                                          \
                VT g = GATHER(0xff, IDX(0xff, ci + p));                                            \
                acc = PAT ? ADD(acc, g) : FMA(VAL(0xff, av + p), g, acc);                          \
            }                                                                                      \
            __mmask8 km = (__mmask8)((1u << (unsigned)(p1 - p)) - 1u);                             \
            VT g = GATHER(km, IDX(km, ci + p));                                                    \
            acc = PAT ? ADD(acc, g) : FMA(VAL(km, av + p), g, acc);                                \
            T sum = HSUM(acc), *c = C + (crow ? crow[i] : i) * ldc;                                \
            *c = beta != 0 ? alpha * sum + beta * *c : alpha * sum;                                \
        }                                                                                          \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
DSMMI_WIDE static inline float hsum8f(__m256 v)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
DSMMI_WIDE static inline double hsum8d(__m512d v)
{
    __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}
#define IDX32(k, p)  _mm256_maskz_loadu_epi32(k, p)
#define IDX64(k, p)  _mm512_maskz_loadu_epi64(k, p)
#define GF32(k, idx) _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), k, idx, B, 4)
#define GF64(k, idx) _mm512_mask_i64gather_ps(_mm256_setzero_ps(), k, idx, B, 4)
#define GD32(k, idx) _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, idx, B, 8)
#define GD64(k, idx) _mm512_mask_i64gather_pd(_mm512_setzero_pd(), k, idx, B, 8)
#define VALF(k, p)   _mm256_maskz_loadu_ps(k, p)
#define VALD(k, p)   _mm512_maskz_loadu_pd(k, p)
#define GATHER_F(NAME, CI, PAT, IDX, G)                                                            \
    ROW_GATHER(NAME, float, __m256, CI, PAT, IDX, G, VALF, _mm256_fmadd_ps, _mm256_add_ps, hsum8f)
#define GATHER_D(NAME, CI, PAT, IDX, G)                                                            \
    ROW_GATHER(NAME, double, __m512d, CI, PAT, IDX, G, VALD, _mm512_fmadd_pd, _mm512_add_pd, hsum8d)
GATHER_F(gather_f32, int32_t, 0, IDX32, GF32);
GATHER_F(gather_f64, dsmm_idx, 0, IDX64, GF64);
GATHER_F(gather_f32p, int32_t, 1, IDX32, GF32);
GATHER_F(gather_f64p, dsmm_idx, 1, IDX64, GF64);
GATHER_D(gather_d32, int32_t, 0, IDX32, GD32);
GATHER_D(gather_d64, dsmm_idx, 0, IDX64, GD64);
GATHER_D(gather_d32p, int32_t, 1, IDX32, GD32);
GATHER_D(gather_d64p, dsmm_idx, 1, IDX64, GD64);
#undef ROW_GATHER
#endif

dsmmi_spmm_tuning dsmmi_spmm_tune = {
    .row_buffer_k = 0,
    .row_stream_min = (size_t)8 << 20,
    .row_prefetch = 2,
    .row_block_prefetch = -1,
    .row_odd_mask = 1,
    .row_gather = -1,
    .vec_bytes = 64,
    .col_split_bytes = 64.0,
    .col_private_max = (size_t)16 << 20,
    .col_tile_bytes = (size_t)32 << 10,
    .col_tile_prefetch = 2,
    .col_tile_src32_max = INT32_MAX,
    .col_tile_runs = -1,
    .col_tile_runs_min = 2.0,
    .col_tile_rows = 1,
    .col_tile_group_tail = 1,
    .col_tile_window = SIZE_MAX,
    .col_tile_slice = -1,
    .col_tile_stream = 1,
    .col_tile_stream_row = 1024.0,
    .min_thread_work = 8192.0,
    .rows_reorder = -1,
};

dsmm_idx dsmmi_spmm_buffer_k(void)
{
    return dsmmi_spmm_tune.row_buffer_k > 0 ? dsmmi_spmm_tune.row_buffer_k : 0;
}

int dsmmi_spmm_wide(const dsmmi_spmm_args *a, size_t min_bytes)
{
#if DSMMI_HAVE_WIDE
    size_t w = dsmmi_type_size(a->type);
    return dsmmi_spmm_tune.vec_bytes >= 64 && (double)a->k * (double)w >= (double)min_bytes &&
           (uintptr_t)a->B % 64 == 0 && (uintptr_t)a->C % 64 == 0 && (size_t)a->ldb * w % 64 == 0 &&
           (size_t)a->ldc * w % 64 == 0 && __builtin_cpu_supports("x86-64-v4");
#else
    (void)a;
    (void)min_bytes;
    return 0;
#endif
}

int dsmmi_spmm_slice(void)
{
    int s = dsmmi_spmm_tune.col_tile_slice;
#if defined(__x86_64__) && defined(__GNUC__)
    return s > 0 || (s < 0 && !__builtin_cpu_is("amd"));
#else
    return s != 0;
#endif
}

dsmm_idx dsmmi_spmm_block_prefetch(const dsmmi_spmm_args *a)
{
    dsmm_idx d = dsmmi_spmm_tune.row_block_prefetch;
    if (d >= 0) return d;
#if defined(__x86_64__) && defined(__GNUC__)
    // Measured on Zen 1 only (docs/kernels.md): 0.68-0.95 of the time on graphs, unbanded
    // meshes and R-MAT; banded matrices lose up to 1.10, and 1.16 with a B the L2 holds (hence
    // the size test). Other CPUs: mixed at k = 64 double (Intel, Zen 4), not re-measured.
    if (!__builtin_cpu_is("znver1")) return 0; // other CPUs never read sysfs for the L2
    static _Atomic long long l2 = -1;
    long long c = l2;
    if (c < 0) l2 = c = (long long)dsmmi_cpu_cache_bytes(2);
    double bbytes = (double)a->n * (double)a->k * (double)dsmmi_type_size(a->type);
    return c > 0 && bbytes > (double)c ? 8 : 0;
#else
    (void)a;
    return 0;
#endif
}

int dsmmi_spmm_gather(void)
{
#if DSMMI_HAVE_WIDE
    int g = dsmmi_spmm_tune.row_gather;
    return g != 0 && __builtin_cpu_supports("x86-64-v4") && (g > 0 || !__builtin_cpu_is("amd"));
#else
    return 0;
#endif
}

int dsmmi_spmm_parity_mixed(const dsmm_idx *rp, dsmm_idx m)
{
    enum { RUNS = 16, RUN = 64 };
    if (m < 2) return 0;
    dsmm_idx pairs = 0, changes = 0;
    dsmm_idx run = m - 1 < RUN ? m - 1 : RUN, gap = (m - 1 - run) / (RUNS - 1);
    for (int r = 0; r < RUNS; r++) {
        dsmm_idx i0 = (dsmm_idx)r * gap;
        for (dsmm_idx i = i0; i < i0 + run; i++) {
            changes += ((rp[i + 1] - rp[i]) ^ (rp[i + 2] - rp[i + 1])) & 1;
            pairs++;
        }
        if (gap == 0) break; // one run covers every pair
    }
    return 3 * changes >= pairs;
}

// The instance for value type TY and column width CW (SPMM_PICK) run on the rows at hand,
// A's columns in the CIX array; or, with odd1, ROW_ODD1's (64-byte vectors when wide).
#define TMPL_RUN(TY, CW, CIX)                                                                      \
    SPMM_PICK(TY, CW)                                                                              \
    (rp, A->CIX, av, B, a->ldb, C, a->ldc, a->crow, a->k, al, be, r0, r1, kbuf, pfd, pfb, nt)
#if DSMMI_HAVE_WIDE
#define ODD_PICK(TY, CW)                                                                           \
    (wide ? (pat ? odd1_##TY##CW##p_w : odd1_##TY##CW##_w)                                         \
          : (pat ? odd1_##TY##CW##p : odd1_##TY##CW))
#define GATHER_PICK(TY, CW) (pat ? gather_##TY##CW##p : gather_##TY##CW)
// ROW_SMALLM's: 4 lanes for 3 floats, 8 for 5-7, a vector and 8 lanes for 9-15; 4 lanes for 3
// doubles, a vector and 4 lanes for 5-7
// (odd1 3: their AVX-512VL instances)
#define SMALL_ISA(N)     (odd1 == 3 ? N##_w : N)
#define SMALL_PAT(N, NP) (pat ? SMALL_ISA(NP) : SMALL_ISA(N))
#define SMALL_PICK_f(CW)                                                                           \
    (a->k <= 4   ? SMALL_PAT(small4_f##CW, small4_f##CW##p)                                        \
     : a->k <= 8 ? SMALL_PAT(small8_f##CW, small8_f##CW##p)                                        \
                 : SMALL_PAT(small16_f##CW, small16_f##CW##p))
#define SMALL_PICK_d(CW)                                                                           \
    (a->k <= 4 ? SMALL_PAT(small4_d##CW, small4_d##CW##p)                                          \
               : SMALL_PAT(small8_d##CW, small8_d##CW##p))
#define ROW_RUN(TY, CW, CIX)                                                                       \
    do {                                                                                           \
        if (gather) {                                                                              \
            GATHER_PICK(TY, CW)(rp, A->CIX, av, B, C, a->ldc, a->crow, al, be, r0, r1);            \
        } else if (odd1 >= 2) {                                                                    \
            SMALL_PICK_##TY(CW)(rp, A->CIX, av, B, a->ldb, C, a->ldc, a->crow, a->k, al, be, r0,   \
                                r1);                                                               \
        } else if (odd1) {                                                                         \
            ODD_PICK(TY, CW)(rp, A->CIX, av, B, a->ldb, C, a->ldc, a->crow, al, be, r0, r1, nt);   \
        } else {                                                                                   \
            TMPL_RUN(TY, CW, CIX);                                                                 \
        }                                                                                          \
    } while (0)
#else
#define ROW_RUN TMPL_RUN
#endif

/* Rows [r0, r1) through the instantiation that fits A's columns, values and the type, by the
 * path dsmmi_spmm_row chose for the whole product: wide: the 64-byte vectors; gather: k = 1 by
 * ROW_GATHER; odd1 1: k of one vector, the odd entry under a mask (ROW_ODD1); 2: k of 3, 5-7 or
 * 9-15 floats or 3 or 5-7 doubles, the last vector under a lane mask (ROW_SMALLM); 3: the same
 * on AVX-512VL. */
static void row_range(const dsmmi_spmm_args *a, dsmm_idx r0, dsmm_idx r1, int wide, int gather,
                      int odd1, dsmm_idx pfb)
{
    const dsmm_csr *A = a->A;
    const dsmm_idx *rp = A->rowptr;
    int pat = a->av == NULL;
    dsmm_idx kbuf = dsmmi_spmm_buffer_k(), pfd = dsmmi_spmm_tune.row_prefetch;
    size_t w = dsmmi_type_size(a->type);
    (void)wide;
#if DSMMI_HAVE_WIDE
    odd1 = rp[r1] > 0 ? odd1 : 0; // the odd entry's stand-in needs an entry
#else
    (void)gather;
    (void)odd1;
#endif
    int nt = DSMMI_HAVE_STREAM && dsmmi_spmm_tune.row_stream_min > 0 && a->beta == 0 &&
             (double)a->m * (double)a->k * (double)w >= (double)dsmmi_spmm_tune.row_stream_min &&
             (uintptr_t)a->C % 16 == 0 && (size_t)a->ldc * w % 16 == 0;
    if (a->type == DSMM_DOUBLE) {
        const double *av = a->av;
        const double *B = a->B;
        double *C = a->C;
        double al = a->alpha, be = a->beta;
        if (A->colidx32) {
            ROW_RUN(d, 32, colidx32);
        } else {
            ROW_RUN(d, 64, colidx);
        }
    } else {
        const float *av = a->av;
        const float *B = a->B;
        float *C = a->C;
        float al = (float)a->alpha, be = (float)a->beta;
        if (A->colidx32) {
            ROW_RUN(f, 32, colidx32);
        } else {
            ROW_RUN(f, 64, colidx);
        }
    }
}

/* First row whose weight prefix rowptr[i] + i reaches w (rows 0..m). */
static dsmm_idx weight_row(const dsmm_idx *rp, dsmm_idx m, dsmm_idx w)
{
    dsmm_idx lo = 0, hi = m;
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (rp[mid] + mid < w) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

dsmm_status dsmmi_spmm_row(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    const dsmm_csr *A = a->A;
    dsmm_idx m = a->m;
    int threads = dsmmi_spmm_threads(ctx, a);
    info->threads = threads;
    info->workspace_bytes = 0;
    // k of one vector (32 bytes on AVX2, 64 on AVX-512): the odd entry under a mask where
    // rows' parity is mixed (graphs: 0.85-0.93x the branch's time at k = 8 float); on meshes,
    // whose parity the branch predicts, the mask ran 1.1-1.25x as long (fe_4elt2, cage11).
    // 64-byte vectors from rows of B of 128 bytes, and for rows of exactly one (two sets of
    // sums, ROW_VBLOCK(1)). Rows of 64 bytes with mixed parity take ROW_ODD1 instead: with the
    // branch, as-caida and ca-condmat at k = 8 double ran 1.11-1.26x as long as two 32-byte
    // vectors and one set (docs/kernels.md).
    size_t rowb = (size_t)a->k * dsmmi_type_size(a->type);
    int wide = dsmmi_spmm_wide(a, rowb == 64 ? 64 : 128), odd1 = 0, gather = 0;
#if DSMMI_HAVE_WIDE
    gather = a->k == 1 && a->ldb == 1 && dsmmi_spmm_gather();
    int om = dsmmi_spmm_tune.row_odd_mask;
    odd1 = om > 0 &&
           ((rowb == 32 && __builtin_cpu_supports("x86-64-v3")) || (rowb == 64 && wide)) &&
           (om >= 2 || dsmmi_spmm_parity_mixed(A->rowptr, m));
    // k of 3, 5-7 and 9-15 floats or 3 and 5-7 doubles (no vector of 2, 4 or 8 lanes fits):
    // a vector under a lane mask, the odd entry under a mask on graphs and meshes alike
    // (ROW_SMALL_FN's rule).
    int small = a->type == DSMM_FLOAT ? a->k == 3 || (a->k > 4 && a->k < 16 && a->k != 8)
                                      : a->k == 3 || (a->k > 4 && a->k < 8);
    if (om > 0 && small && __builtin_cpu_supports("x86-64-v3")) odd1 = 2;
    if (odd1 == 2 && dsmmi_spmm_tune.vec_bytes >= 64 && __builtin_cpu_supports("x86-64-v4"))
        odd1 = 3;
#endif
    dsmm_idx pfb = dsmmi_spmm_block_prefetch(a);
    if (threads <= 1) {
        row_range(a, 0, m, wide, gather, odd1, pfb);
        return DSMM_OK;
    }
    int nchunks = threads * CHUNKS_PER_THREAD;
    dsmm_idx total = A->rowptr[m] + m;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (int c = 0; c < nchunks; c++) {
        dsmm_idx r0 = weight_row(A->rowptr, m, (dsmm_idx)((double)total * c / nchunks));
        dsmm_idx r1 = c + 1 == nchunks
                          ? m
                          : weight_row(A->rowptr, m, (dsmm_idx)((double)total * (c + 1) / nchunks));
        if (r0 < r1) row_range(a, r0, r1, wide, gather, odd1, pfb);
    }
    return DSMM_OK;
}
