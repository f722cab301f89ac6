// src/kernels/spmm_tile_tmpl.h: the column-wise SpMM inner loop on tiles, instantiated by
// spmm_tiles.c once per (value type T with its vector V of VL lanes, 32 or 64 bytes by
// SPMM_WIDE, type CI of the B-row indices, pattern PAT) under the name NAME. Not a header of
// its own: no include guard, included only there.
//
// Tile t holds the entries of S = op(A)^T whose row of C lies in the tile, in S's row order:
// entry q adds alpha * val[q] * B(src[q], :) into row dst[q] of the tile (C points at the
// tile's first row). The tile's rows of C (32 KiB) stay in the L1 cache through the
// read-modify-writes, and B's rows come in increasing order. The arithmetic is
// spmm_col_tmpl.h's, entry for entry, so each row of C gets the same sums in the same order.
// NAME_seg (TILE_CAT(NAME, _seg)) reads the segmented layout instead: segment s is the run of
// a tile's entries beg[s] .. beg[s + 1] - 1 from one row src[s] of S, whose row of B is read
// once for the run (in registers where k allows) as in the column-wise kernel.

#define AVAL(q) (PAT ? (T)1 : av[q])

#define TILE_ENTRIES(KC)                                                                           \
    for (dsmm_idx q = q0; q < q1; q++) {                                                           \
        const T *b = B + (dsmm_idx)src[q] * ldb;                                                   \
        T *cr = C + (dsmm_idx)dst[q] * ldc;                                                        \
        T s = alpha * AVAL(q);                                                                     \
        V vs = VSPLAT(s);                                                                          \
        const T *bn = pfd > 0 ? B + (dsmm_idx)src[q + pfd < q1 ? q + pfd : q] * ldb : NULL;        \
        DSMMI_COL_AXPY(cr, b, vs, s, KC, bn)                                                       \
    }

#if PAT
#define TILE_CONTRACT      DSMMI_PAT_CONTRACT_OFF
#define TILE_CONTRACT_BODY DSMMI_PAT_CONTRACT_OFF_BODY
#else
#define TILE_CONTRACT
#define TILE_CONTRACT_BODY
#endif
SPMM_ATTR TILE_CONTRACT static void NAME(dsmm_idx q0, dsmm_idx q1, const CI *restrict src,
                                         const uint16_t *restrict dst, const T *restrict av,
                                         const T *restrict B, dsmm_idx ldb, T *restrict C,
                                         dsmm_idx ldc, dsmm_idx k, T alpha)
{
    TILE_CONTRACT_BODY
    // B's row pfd entries ahead fetched a line at a time, on rows of 256 bytes or more
    dsmm_idx pfd = k * (dsmm_idx)sizeof(T) >= 256 ? dsmmi_spmm_tune.col_tile_prefetch : 0;
    // k as a constant where it is a common width, so the loops unroll into straight vector code
    switch (k) {
    case 1:
        TILE_ENTRIES(1) break;
    case 2:
        TILE_ENTRIES(2) break;
    case 4:
        TILE_ENTRIES(4) break;
    case 8:
        TILE_ENTRIES(8) break;
    case 16:
        TILE_ENTRIES(16) break;
    case 32:
        TILE_ENTRIES(32) break;
    case 64:
        TILE_ENTRIES(64) break;
    case 128:
        TILE_ENTRIES(128) break;
    case 256:
        TILE_ENTRIES(256) break;
    default:
        TILE_ENTRIES(k) break;
    }
}

// A segment's entries, B's row b fixed for the run: the column-wise kernel's COL_ENTRY.
#define SEG_ENTRIES(KC)                                                                            \
    for (dsmm_idx s = s0; s < s1; s++) {                                                           \
        const T *b = B + (dsmm_idx)src[s] * ldb;                                                   \
        for (dsmm_idx q = beg[s]; q < beg[s + 1]; q++) {                                           \
            T *cr = C + (dsmm_idx)dst[q] * ldc;                                                    \
            T sv = alpha * AVAL(q);                                                                \
            V vs = VSPLAT(sv);                                                                     \
            DSMMI_COL_AXPY(cr, b, vs, sv, KC, (const T *)NULL)                                     \
        }                                                                                          \
    }

#ifndef TILE_CAT
#define TILE_CAT_(a, b) a##b
#define TILE_CAT(a, b)  TILE_CAT_(a, b)
#endif
SPMM_ATTR TILE_CONTRACT static void
TILE_CAT(NAME, _seg)(dsmm_idx s0, dsmm_idx s1, const dsmm_idx *restrict beg, const CI *restrict src,
                     const uint16_t *restrict dst, const T *restrict av, const T *restrict B,
                     dsmm_idx ldb, T *restrict C, dsmm_idx ldc, dsmm_idx k, T alpha)
{
    TILE_CONTRACT_BODY
    switch (k) {
    case 1:
        SEG_ENTRIES(1) break;
    case 2:
        SEG_ENTRIES(2) break;
    case 4:
        SEG_ENTRIES(4) break;
    case 8:
        SEG_ENTRIES(8) break;
    case 16:
        SEG_ENTRIES(16) break;
    case 32:
        SEG_ENTRIES(32) break;
    case 64:
        SEG_ENTRIES(64) break;
    default:
        SEG_ENTRIES(k) break;
    }
}

#undef SEG_ENTRIES
#undef TILE_CONTRACT
#undef TILE_CONTRACT_BODY
#undef TILE_ENTRIES
#undef AVAL
