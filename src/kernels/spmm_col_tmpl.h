// src/kernels/spmm_col_tmpl.h: the column-wise SpMM inner loop, instantiated by spmm_col.c
// once per (value type T with its 32-byte vector V of VL lanes, column type CI, pattern PAT)
// under the name NAME. Not a header of its own: no include guard, included only there.
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

// Row r's entries from p on (within [c0, c1)) scattered with KC columns: KC is a constant in
// the cases the switch below names (1, 2, 4, 8, 16, 32, 64, so the loops unroll into straight
// vector code) and k otherwise.
#define COL_SCATTER(KC)                                                                            \
    for (; p < p1; p++) {                                                                          \
        dsmm_idx c = (dsmm_idx)ci[p];                                                              \
        if (c >= c1) {                                                                             \
            if (sorted) break;                                                                     \
            continue;                                                                              \
        }                                                                                          \
        if (c < c0) continue; /* unsorted rows only: sorted ones start at c0 */                    \
        if (PF && p + PF_DIST < p1) __builtin_prefetch(C + (dsmm_idx)ci[p + PF_DIST] * ldc, 1);    \
        T s = alpha * AVAL(p);                                                                     \
        T *cr = C + c * ldc;                                                                       \
        V vs = vzero + s;                                                                          \
        dsmm_idx j = 0;                                                                            \
        for (; j + VL <= (KC); j += VL) {                                                          \
            V x, y;                                                                                \
            memcpy(&x, b + j, sizeof x);                                                           \
            memcpy(&y, cr + j, sizeof y);                                                          \
            y += vs * x;                                                                           \
            memcpy(cr + j, &y, sizeof y);                                                          \
        }                                                                                          \
        for (; j < (KC); j++) cr[j] += s * b[j];                                                   \
    }

DSMMI_CLONES static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci,
                              const T *restrict av, const T *restrict B, dsmm_idx ldb,
                              T *restrict C, dsmm_idx ldc, dsmm_idx k, T alpha, dsmm_idx nrows_s,
                              dsmm_idx c0, dsmm_idx c1, int sorted)
{
    const V vzero = {0};
    const int PF = k * (dsmm_idx)sizeof(T) >= 256; // prefetch C's rows only when they are long
    (void)av;
    for (dsmm_idx r = 0; r < nrows_s; r++) {
        dsmm_idx p = rp[r], p1 = rp[r + 1];
        if (p == p1) continue;
        if (sorted && c0 > 0) {
            dsmm_idx lo = p, hi = p1; // first entry with column >= c0
            while (lo < hi) {
                dsmm_idx mid = lo + (hi - lo) / 2;
                if ((dsmm_idx)ci[mid] < c0) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            p = lo;
        }
        const T *b = B + r * ldb;
        switch (k) {
        case 1:
            COL_SCATTER(1) break;
        case 2:
            COL_SCATTER(2) break;
        case 4:
            COL_SCATTER(4) break;
        case 8:
            COL_SCATTER(8) break;
        case 16:
            COL_SCATTER(16) break;
        case 32:
            COL_SCATTER(32) break;
        case 64:
            COL_SCATTER(64) break;
        default:
            COL_SCATTER(k) break;
        }
    }
}

#undef COL_SCATTER
#undef AVAL
