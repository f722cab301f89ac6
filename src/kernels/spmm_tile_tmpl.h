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

// The rows layout: run u adds entries beg[u] .. beg[u + 1] - 1 (rows src[q] of B, in
// increasing order) into row dst[u] of the tile. The row's values are loaded once a run into
// vector variables (blocks of 8, 4, 2 and 1 vectors, then RUN_TAIL's pieces), every entry is
// added into them with the column-wise kernel's operation (alpha * a splat, y += vs * x), and they
// are stored once: the same operations in the same order on each value of C as COL_AXPY's,
// so the same bits, without a load and a store of C's row an entry. fresh: the rows start
// from +0 (beta = 0 and one run a row: the caller clears only rows without runs). The loop
// vectoriser is kept off: GCC 12 turned the scalar tail's sum into vector products added lane by
// lane in order, rounding each product where COL_AXPY's multiply-add does not (other bits).
// A run's values of C stored: streaming stores (nt: beta = 0, one run a row, a large C, rows
// 16-byte aligned) for whole 32-byte pieces, as the row-wise kernel writes C; else plain.
#define ROWS_STORE(dst, y) DSMMI_STORE_STREAMED(nt && sizeof(y) >= 32, dst, y)
#define RUN_VBLOCK(NV, KC)                                                                         \
    for (; j + (NV)*VL <= (KC); j += (NV)*VL) {                                                    \
        V acc[NV];                                                                                 \
        _Pragma("GCC unroll 8") for (int t = 0; t < (NV); t++)                                     \
        {                                                                                          \
            if (fresh) {                                                                           \
                acc[t] = VSPLAT((T)0);                                                             \
            } else {                                                                               \
                V c;                                                                               \
                memcpy(&c, cr + j + t * VL, sizeof c);                                             \
                acc[t] = c;                                                                        \
            }                                                                                      \
        }                                                                                          \
        for (dsmm_idx q = q0; q < q1; q++) {                                                       \
            const T *b = B + (dsmm_idx)src[q] * ldb + j;                                           \
            T sv = SVAL(q);                                                                        \
            V vs = VSPLAT(sv);                                                                     \
            _Pragma("GCC unroll 8") for (int t = 0; t < (NV); t++)                                 \
            {                                                                                      \
                V x;                                                                               \
                memcpy(&x, b + t * VL, sizeof x);                                                  \
                acc[t] += vs * x;                                                                  \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 8") for (int t = 0; t < (NV); t++)                                     \
            ROWS_STORE(cr + j + t * VL, acc[t]);                                                   \
    }

// Four runs side by side (a bucket's runs are distinct rows of C, longest first), for
// k of one vector or one value: four chains of multiply-adds in flight where one run alone
// waits on each add's latency. Each run still adds its own entries in order.
#define GROUP_ADD(Y, Q, YT, SPLAT)                                                                 \
    do {                                                                                           \
        T sv_ = SVAL(Q);                                                                           \
        YT x_;                                                                                     \
        memcpy(&x_, B + (dsmm_idx)src[Q] * ldb, sizeof x_);                                        \
        Y += SPLAT(sv_) * x_;                                                                      \
    } while (0)
#define GROUP_RUNS(YT, SPLAT)                                                                      \
    for (; u + 4 <= u1; u += 4) {                                                                  \
        dsmm_idx a0 = beg[u], a1 = beg[u + 1], a2 = beg[u + 2], a3 = beg[u + 3], e = beg[u + 4];   \
        dsmm_idx n = e - a3;                                                                       \
        if (a3 - a2 < n) n = a3 - a2;                                                              \
        if (a2 - a1 < n) n = a2 - a1;                                                              \
        if (a1 - a0 < n) n = a1 - a0;                                                              \
        T *c0 = C + (dsmm_idx)dst[u] * ldc, *c1 = C + (dsmm_idx)dst[u + 1] * ldc;                  \
        T *c2 = C + (dsmm_idx)dst[u + 2] * ldc, *c3 = C + (dsmm_idx)dst[u + 3] * ldc;              \
        YT y0 = SPLAT((T)0), y1 = y0, y2 = y0, y3 = y0;                                            \
        if (!fresh) {                                                                              \
            memcpy(&y0, c0, sizeof y0);                                                            \
            memcpy(&y1, c1, sizeof y1);                                                            \
            memcpy(&y2, c2, sizeof y2);                                                            \
            memcpy(&y3, c3, sizeof y3);                                                            \
        }                                                                                          \
        DSMMI_LOOP_SCALAR for (dsmm_idx i = 0; i < n; i++)                                         \
        {                                                                                          \
            GROUP_ADD(y0, a0 + i, YT, SPLAT);                                                      \
            GROUP_ADD(y1, a1 + i, YT, SPLAT);                                                      \
            GROUP_ADD(y2, a2 + i, YT, SPLAT);                                                      \
            GROUP_ADD(y3, a3 + i, YT, SPLAT);                                                      \
        }                                                                                          \
        DSMMI_LOOP_SCALAR for (dsmm_idx q = a0 + n; q < a1; q++) GROUP_ADD(y0, q, YT, SPLAT);      \
        DSMMI_LOOP_SCALAR for (dsmm_idx q = a1 + n; q < a2; q++) GROUP_ADD(y1, q, YT, SPLAT);      \
        DSMMI_LOOP_SCALAR for (dsmm_idx q = a2 + n; q < a3; q++) GROUP_ADD(y2, q, YT, SPLAT);      \
        DSMMI_LOOP_SCALAR for (dsmm_idx q = a3 + n; q < e; q++) GROUP_ADD(y3, q, YT, SPLAT);       \
        ROWS_STORE(c0, y0);                                                                        \
        ROWS_STORE(c1, y1);                                                                        \
        ROWS_STORE(c2, y2);                                                                        \
        ROWS_STORE(c3, y3);                                                                        \
    }
#ifndef GROUP_SAME
#define GROUP_SAME(x) (x)
#endif

// RUN_TAIL's pieces of run R (y8[R], y4[R], y2[R], y1[R]; one run: R = 0 of arrays of 1):
// TAIL_LOAD starts them from +0 or from C's row at CR, TAIL_ADD adds entry Q (B's row from
// column J), TAIL_STORE writes them back to CR.
#define TAIL_LOAD(R, CR)                                                                           \
    do {                                                                                           \
        y8[R] = (N8){0};                                                                           \
        y4[R] = (N4){0};                                                                           \
        y2[R] = (N2){0};                                                                           \
        y1[R] = 0;                                                                                 \
        if (!fresh) {                                                                              \
            if (o8 >= 0) memcpy(&y8[R], (CR) + o8, sizeof y8[R]);                                  \
            if (o4 >= 0) memcpy(&y4[R], (CR) + o4, sizeof y4[R]);                                  \
            if (o2 >= 0) memcpy(&y2[R], (CR) + o2, sizeof y2[R]);                                  \
            if (o1 >= 0) y1[R] = (CR)[o1];                                                         \
        }                                                                                          \
    } while (0)
#define TAIL_ADD(R, Q, J)                                                                          \
    do {                                                                                           \
        const T *b = B + (dsmm_idx)src[Q] * ldb + (J);                                             \
        T sv = SVAL(Q);                                                                            \
        RUN_PIECE(N8, y8[R], o8)                                                                   \
        RUN_PIECE(N4, y4[R], o4)                                                                   \
        RUN_PIECE(N2, y2[R], o2)                                                                   \
        if (o1 >= 0) y1[R] += sv * b[o1];                                                          \
    } while (0)
#define TAIL_STORE(R, CR)                                                                          \
    do {                                                                                           \
        if (o8 >= 0) memcpy((CR) + o8, &y8[R], sizeof y8[R]);                                      \
        if (o4 >= 0) memcpy((CR) + o4, &y4[R], sizeof y4[R]);                                      \
        if (o2 >= 0) memcpy((CR) + o2, &y2[R], sizeof y2[R]);                                      \
        if (o1 >= 0) (CR)[o1] = y1[R];                                                             \
    } while (0)
// The pieces' offsets for LEFT columns: 8, 4 and 2 lanes and one value, each where it fits
// (-1: none)
#define RUN_TAIL_OFFSETS(LEFT)                                                                     \
    dsmm_idx left = (LEFT), o8 = -1, o4 = -1, o2 = -1, o1 = -1, o = 0;                             \
    if (VL > 8 && left - o >= 8) o8 = o, o += 8;                                                   \
    if (VL > 4 && left - o >= 4) o4 = o, o += 4;                                                   \
    if (left - o >= 2) o2 = o, o += 2;                                                             \
    if (left - o >= 1) o1 = o;
// Four runs side by side for k below one vector (RUN_TAIL's pieces of 8, 4 and 2 lanes and one
// value, offsets o8, o4, o2 and o1 from RUN_TAIL_OFFSETS): one run alone waits on its pieces'
// multiply-adds every entry (col/row 1.45 at k = 3 float and 1.67 at k = 7 in geomean on the
// odd-k benchmark, where the row-wise loop keeps two sets of sums). Each run adds its own
// entries in order with RUN_PIECE's operations, so the same bits as RUN_TAIL. Floats of 3, 5,
// 6 and 7 columns only (two or three pieces): 0.65-0.76x the time at 2 threads on ca-condmat,
// email-enron, as-caida, EX5 and cage11; one piece (k = 4 float, 2 double) gained nothing, and
// k = 3 double ran 1.05-1.17x as long.
#define GROUP_TAIL(KC)                                                                             \
    {                                                                                              \
        RUN_TAIL_OFFSETS(KC)                                                                       \
        for (; u + 4 <= u1; u += 4) {                                                              \
            dsmm_idx ab[5] = {beg[u], beg[u + 1], beg[u + 2], beg[u + 3], beg[u + 4]};             \
            dsmm_idx n = ab[4] - ab[3];                                                            \
            if (ab[3] - ab[2] < n) n = ab[3] - ab[2];                                              \
            if (ab[2] - ab[1] < n) n = ab[2] - ab[1];                                              \
            if (ab[1] - ab[0] < n) n = ab[1] - ab[0];                                              \
            T *cg[4], y1[4];                                                                       \
            N8 y8[4];                                                                              \
            N4 y4[4];                                                                              \
            N2 y2[4];                                                                              \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)                                    \
            {                                                                                      \
                cg[r] = C + (dsmm_idx)dst[u + r] * ldc;                                            \
                TAIL_LOAD(r, cg[r]);                                                               \
            }                                                                                      \
            DSMMI_LOOP_SCALAR for (dsmm_idx i = 0; i < n; i++)                                     \
            {                                                                                      \
                TAIL_ADD(0, ab[0] + i, 0);                                                         \
                TAIL_ADD(1, ab[1] + i, 0);                                                         \
                TAIL_ADD(2, ab[2] + i, 0);                                                         \
                TAIL_ADD(3, ab[3] + i, 0);                                                         \
            }                                                                                      \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)                                    \
            {                                                                                      \
                DSMMI_LOOP_SCALAR for (dsmm_idx q = ab[r] + n; q < ab[r + 1]; q++)                 \
                    TAIL_ADD(r, q, 0);                                                             \
                TAIL_STORE(r, cg[r]);                                                              \
            }                                                                                      \
        }                                                                                          \
    }

#define RUN_ENTRIES(KC)                                                                            \
    dsmm_idx u = u0;                                                                               \
    if ((KC) == 1) {                                                                               \
        GROUP_RUNS(T, GROUP_SAME)                                                                  \
    } else if ((KC) == VL) {                                                                       \
        GROUP_RUNS(V, VSPLAT)                                                                      \
    } else if ((KC) < VL && sizeof(T) == 4 && ((KC) & ((KC)-1)) != 0 &&                            \
               dsmmi_spmm_tune.col_tile_group_tail) {                                              \
        GROUP_TAIL(KC)                                                                             \
    }                                                                                              \
    for (; u < u1; u++) {                                                                          \
        dsmm_idx q0 = beg[u], q1 = beg[u + 1], j = 0;                                              \
        T *cr = C + (dsmm_idx)dst[u] * ldc;                                                        \
        RUN_VBLOCK(8, KC)                                                                          \
        RUN_VBLOCK(4, KC)                                                                          \
        RUN_VBLOCK(2, KC)                                                                          \
        RUN_VBLOCK(1, KC)                                                                          \
        if (j < (KC)) RUN_TAIL(KC)                                                                 \
    }

// The fewer than VL columns left from j, in one pass over the run: pieces of 8, 4 and 2 lanes
// and one value, as COL_AXPY cuts them (one pass a column ran k = 7 float at 3.3 times k = 8's
// time, ca-condmat, 1 thread). Which pieces there are is fixed for the call.
#define RUN_PIECE(VT, Y, OFF)                                                                      \
    if (OFF >= 0) {                                                                                \
        VT x_;                                                                                     \
        memcpy(&x_, b + OFF, sizeof x_);                                                           \
        Y += sv * x_;                                                                              \
    }
#define RUN_TAIL(KC)                                                                               \
    {                                                                                              \
        RUN_TAIL_OFFSETS((KC)-j)                                                                   \
        N8 y8[1];                                                                                  \
        N4 y4[1];                                                                                  \
        N2 y2[1];                                                                                  \
        T y1[1];                                                                                   \
        TAIL_LOAD(0, cr + j);                                                                      \
        for (dsmm_idx q = q0; q < q1; q++) TAIL_ADD(0, q, j);                                      \
        TAIL_STORE(0, cr + j);                                                                     \
    }

// a's factor: alpha * a, or a where alpha is 1 (ONE, a constant where it is used)
#define SVAL(q) (ONE ? AVAL(q) : alpha * AVAL(q))
#define ROWS_SWITCH                                                                                \
    switch (k) {                                                                                   \
    case 1: {                                                                                      \
        RUN_ENTRIES(1)                                                                             \
    } break;                                                                                       \
    case 2: {                                                                                      \
        RUN_ENTRIES(2)                                                                             \
    } break;                                                                                       \
    case 4: {                                                                                      \
        RUN_ENTRIES(4)                                                                             \
    } break;                                                                                       \
    case 8: {                                                                                      \
        RUN_ENTRIES(8)                                                                             \
    } break;                                                                                       \
    case 16: {                                                                                     \
        RUN_ENTRIES(16)                                                                            \
    } break;                                                                                       \
    case 32: {                                                                                     \
        RUN_ENTRIES(32)                                                                            \
    } break;                                                                                       \
    case 64: {                                                                                     \
        RUN_ENTRIES(64)                                                                            \
    } break;                                                                                       \
    case 128: {                                                                                    \
        RUN_ENTRIES(128)                                                                           \
    } break;                                                                                       \
    case 256: {                                                                                    \
        RUN_ENTRIES(256)                                                                           \
    } break;                                                                                       \
    default: {                                                                                     \
        RUN_ENTRIES(k)                                                                             \
    } break;                                                                                       \
    }

#if PAT
#define ROWS_ATTR DSMMI_PAT_CONTRACT_OFF_NO_VECTORIZE
#else
#define ROWS_ATTR DSMMI_NO_VECTORIZE
#endif
SPMM_ATTR ROWS_ATTR static void
TILE_CAT(NAME, _rows)(dsmm_idx u0, dsmm_idx u1, const dsmm_idx *restrict beg,
                      const CI *restrict src, const uint16_t *restrict dst, const T *restrict av,
                      const T *restrict B, dsmm_idx ldb, T *restrict C, dsmm_idx ldc, dsmm_idx k,
                      T alpha, int fresh, int nt)
{
    TILE_CONTRACT_BODY
    // alpha == 1 multiplies nothing: alpha * a is a, bit for bit
    if (alpha == (T)1) {
        enum { ONE = 1 };
        ROWS_SWITCH
    } else {
        enum { ONE = 0 };
        ROWS_SWITCH
    }
}

#undef ROWS_ATTR
#undef ROWS_STORE
#undef ROWS_SWITCH
#undef SVAL
#undef RUN_ENTRIES
#undef GROUP_RUNS
#undef GROUP_ADD

#undef RUN_VBLOCK
#undef RUN_TAIL
#undef RUN_TAIL_OFFSETS
#undef RUN_PIECE
#undef GROUP_TAIL
#undef TAIL_LOAD
#undef TAIL_ADD
#undef TAIL_STORE
#undef SEG_ENTRIES
#undef TILE_CONTRACT
#undef TILE_CONTRACT_BODY
#undef TILE_ENTRIES
#undef AVAL
