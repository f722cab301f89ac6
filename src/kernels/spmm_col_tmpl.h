// src/kernels/spmm_col_tmpl.h: the column-wise SpMM inner loop, instantiated by spmm_col.c
// once per (value type T with its vector V of VL lanes, 32 or 64 bytes by SPMM_WIDE, column
// type CI, pattern PAT) under the name NAME. Not a header of its own: no include guard,
// included only there.
//
// The sparse operand S is op(A)^T in CSR: row r of S is column r of op(A). Row r scatters
// alpha * S(r, c) * B(r, :) into row c of C for each of its entries, so each row of B is read
// once, whatever the number of rows of C it feeds (CoLa's column-wise form). The calling
// thread owns rows [c0, c1) of C and takes only the entries of S in those columns: with
// sorted rows, a binary search finds where they start (not needed when c0 == 0) and the walk
// stops at c1; unsorted rows are filtered entry by entry. Each row of C thus receives its
// updates in S's row order at any thread count: the result is bitwise the same.

#define AVAL(p) (PAT ? (T)1 : av[p])
#ifndef PF_DIST
#define PF_DIST 8
#endif
#ifndef PF_BYTES
#define PF_BYTES 256
#endif

// Row r's entries from p on scattered with KC columns: KC is a constant in the cases the
// switch below names (1, 2, 4, 8, 16, 32, 64, so the loops unroll into straight vector code)
// and k otherwise. FULL (a constant): the caller takes every column of C, so no entry is
// filtered; else only those in [c0, c1).
#define COL_ENTRY(KC)                                                                              \
    {                                                                                              \
        T s = alpha * AVAL(p);                                                                     \
        T *cr = C + c * ldc;                                                                       \
        V vs = VSPLAT(s);                                                                          \
        DSMMI_COL_AXPY(cr, b, vs, s, KC, (const T *)NULL)                                          \
    }
#define COL_SCATTER(KC, FULL)                                                                      \
    for (; p < p1; p++) {                                                                          \
        dsmm_idx c = (dsmm_idx)ci[p];                                                              \
        if (!(FULL)) {                                                                             \
            if (c >= c1) {                                                                         \
                if (sorted) break;                                                                 \
                continue;                                                                          \
            }                                                                                      \
            if (c < c0) continue; /* unsorted rows only: sorted ones start at c0 */                \
        }                                                                                          \
        if (PF && p + PF_DIST < p1) __builtin_prefetch(C + (dsmm_idx)ci[p + PF_DIST] * ldc, 1);    \
        COL_ENTRY(KC)                                                                              \
    }
// A sorted row's entries in [c0, end of C), walked from the row's end down: no search for the
// start. The entries of one row of S go to distinct rows of C, so their order changes no sum.
#define COL_SCATTER_TAIL(KC)                                                                       \
    for (p = p1 - 1; p >= p0; p--) {                                                               \
        dsmm_idx c = (dsmm_idx)ci[p];                                                              \
        if (c < c0) break;                                                                         \
        if (PF && p - PF_DIST >= p0) __builtin_prefetch(C + (dsmm_idx)ci[p - PF_DIST] * ldc, 1);   \
        COL_ENTRY(KC)                                                                              \
    }

// Rows [r0, r1) of S with KC columns: the switch on k (and on FULL) is taken once, outside the
// row loop, so each case is its own loop with its pointers in registers (the loop with the
// switch inside kept them on the stack: ca-condmat at k = 1 took 0.53 ms, now 0.35).
#define COL_ROWS(KC, FULL)                                                                         \
    for (dsmm_idx r = r0; r < r1; r++) {                                                           \
        dsmm_idx p = rp[r], p1 = rp[r + 1];                                                        \
        if (p == p1) continue;                                                                     \
        const T *b = B + r * ldb;                                                                  \
        if (!(FULL) && tail) {                                                                     \
            dsmm_idx p0 = p;                                                                       \
            COL_SCATTER_TAIL(KC)                                                                   \
            continue;                                                                              \
        }                                                                                          \
        if (!(FULL) && sorted && c0 > 0) {                                                         \
            dsmm_idx lo = p, hi = p1; /* first entry with column >= c0 */                          \
            while (lo < hi) {                                                                      \
                dsmm_idx mid = lo + (hi - lo) / 2;                                                 \
                if ((dsmm_idx)ci[mid] < c0) {                                                      \
                    lo = mid + 1;                                                                  \
                } else {                                                                           \
                    hi = mid;                                                                      \
                }                                                                                  \
            }                                                                                      \
            p = lo;                                                                                \
        }                                                                                          \
        COL_SCATTER(KC, FULL)                                                                      \
    }

#define COL_CASES(FULL)                                                                            \
    switch (k) {                                                                                   \
    case 1:                                                                                        \
        COL_ROWS(1, FULL) break;                                                                   \
    case 2:                                                                                        \
        COL_ROWS(2, FULL) break;                                                                   \
    case 4:                                                                                        \
        COL_ROWS(4, FULL) break;                                                                   \
    case 8:                                                                                        \
        COL_ROWS(8, FULL) break;                                                                   \
    case 16:                                                                                       \
        COL_ROWS(16, FULL) break;                                                                  \
    case 32:                                                                                       \
        COL_ROWS(32, FULL) break;                                                                  \
    case 64:                                                                                       \
        COL_ROWS(64, FULL) break;                                                                  \
    default:                                                                                       \
        COL_ROWS(k, FULL) break;                                                                   \
    }

// full: the caller takes all of C's columns (c0 and c1 are then not read); tail: S's rows are
// sorted and the caller takes C's columns from c0 to the end.
#if PAT
#define COL_CONTRACT      DSMMI_PAT_CONTRACT_OFF
#define COL_CONTRACT_BODY DSMMI_PAT_CONTRACT_OFF_BODY
#else
#define COL_CONTRACT
#define COL_CONTRACT_BODY
#endif
SPMM_ATTR COL_CONTRACT static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci,
                                        const T *restrict av, const T *restrict B, dsmm_idx ldb,
                                        T *restrict C, dsmm_idx ldc, dsmm_idx k, T alpha,
                                        dsmm_idx r0, dsmm_idx r1, dsmm_idx c0, dsmm_idx c1,
                                        int sorted, int full, int tail)
{
    COL_CONTRACT_BODY
    const int PF = k * (dsmm_idx)sizeof(T) >= PF_BYTES; // prefetch C's rows only when long
    (void)av;
    if (full) {
        COL_CASES(1)
    } else {
        COL_CASES(0)
    }
}

#undef COL_CASES
#undef COL_CONTRACT
#undef COL_CONTRACT_BODY
#undef COL_ROWS
#undef COL_SCATTER
#undef COL_SCATTER_TAIL
#undef COL_ENTRY
#undef AVAL
