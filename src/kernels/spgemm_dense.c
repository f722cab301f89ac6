// src/kernels/spgemm_dense.c: row-wise SpGEMM with a dense accumulator: one value per column
// and a bitmap of the columns touched, per thread (out-of-core paper §II.B / spECK's dense
// rows). Reading the bitmap word by word gives the row sorted with no sort at all, so the
// driver picks it for rows whose output fills a noticeable part of the columns; the symbolic
// count needs the bitmap only (ncols / 8 bytes, which stays in cache).
#include <string.h>

#include "kernels/kernels.h"

static inline void clear_bits(uint64_t *bm, dsmm_idx lo, dsmm_idx hi)
{
    if (hi >= lo) memset(bm + (lo >> 6), 0, (size_t)((hi >> 6) - (lo >> 6) + 1) * sizeof *bm);
}

// Accumulates row i into the bitmap and (unless PATTERN) dv; returns the number of columns
// reached, listing them in first-touch order when list != NULL, and their bounds in lo/hi.
DSMMI_INLINE dsmm_idx accumulate(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx *list,
                                 dsmm_idx *plo, dsmm_idx *phi, const int w32, const int kind,
                                 const int vt)
{
    uint64_t *bm = w->bitmap;
    double *dv = w->dvals;
    dsmm_idx n = 0, lo = m->ncols, hi = -1;
    for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++) {
        dsmm_idx r = dsmmi_rw_acol(m, k);
        dsmm_idx q0 = m->bp[r], q1 = m->bp[r + 1];
        if (q1 == q0) continue;
        dsmm_idx c0 = DSMMI_COL(m->bc, q0, w32), c1 = DSMMI_COL(m->bc, q1 - 1, w32);
        if (c0 < lo) lo = c0;
        if (c1 > hi) hi = c1;
        double a = kind == DSMMI_K_PATTERN || kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
        for (dsmm_idx q = q0; q < q1; q++) {
            dsmm_idx c = DSMMI_COL(m->bc, q, w32);
            uint64_t bit = (uint64_t)1 << (c & 63), old = bm[c >> 6];
            bm[c >> 6] = old | bit;
            if (!(old & bit)) {
                if (list) list[n] = c;
                n++;
            }
            if (kind == DSMMI_K_PATTERN) continue;
            // dv is all zero between rows, so the plus semirings add without a branch.
            if (kind == DSMMI_K_PLUS_PAIR) {
                dv[c] += 1.0;
            } else if (kind == DSMMI_K_PLUS_TIMES) {
                dv[c] += a * DSMMI_VAL(m->bv, q, vt);
            } else {
                double p = dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q, vt));
                dv[c] = (old & bit) ? dsmmi_sr_add(kind, dv[c], p) : p;
            }
        }
    }
    *plo = lo;
    *phi = hi;
    return n;
}

DSMMI_INLINE dsmm_idx count_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const int w32)
{
    uint64_t *bm = w->bitmap;
    dsmm_idx lo, hi;
    dsmm_idx n = accumulate(w, m, i, NULL, &lo, &hi, w32, DSMMI_K_PATTERN, DSMM_PATTERN);
    // Clear by walking the products again when they are fewer than the words between the
    // row's first and last column (short rows spread over many columns, as in meshes).
    if (hi >= lo && dsmmi_rw_flops(m, i) < (hi >> 6) - (lo >> 6)) {
        for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++) {
            dsmm_idx r = dsmmi_rw_acol(m, k);
            for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++)
                bm[DSMMI_COL(m->bc, q, w32) >> 6] = 0;
        }
    } else {
        clear_bits(bm, lo, hi);
    }
    return n;
}

dsmm_idx dsmmi_dense_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i)
{
    return m->w32 ? count_row(w, m, i, 1) : count_row(w, m, i, 0);
}

DSMMI_INLINE void fill_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           dsmm_idx *written, const int w32, const int kind, const int vt)
{
    uint64_t *bm = w->bitmap;
    double *dv = w->dvals;
    dsmm_idx *list = w->skey; // the row's columns in order of first touch (nz of them)
    dsmm_idx lo, hi;
    dsmm_idx n = accumulate(w, m, i, list, &lo, &hi, w32, kind, vt);
    dsmm_idx o = 0;
    if (hi < lo) {
        *written = 0;
        return;
    }
    // A short row spread over many columns: sorting its few columns beats scanning the
    // bitmap's words between its first and last column (meshes, road networks).
    if (n * 16 < (hi >> 6) - (lo >> 6) + 1) {
        dsmmi_sort_pairs(list, NULL, n);
        for (; o < n; o++) {
            dsmm_idx c = list[o];
            bm[c >> 6] = 0;
            DSMMI_SET_COL(ccol, o, c, w32);
            if (kind != DSMMI_K_PATTERN) {
                DSMMI_SET_VAL(cval, o, dv[c], vt);
                dv[c] = 0.0;
            }
        }
        *written = o;
        return;
    }
    for (dsmm_idx wd = lo >> 6; wd <= hi >> 6; wd++) {
        uint64_t bits = bm[wd];
        if (bits == 0) continue;
        bm[wd] = 0;
        while (bits) {
            dsmm_idx c = (wd << 6) + __builtin_ctzll(bits);
            bits &= bits - 1;
            DSMMI_SET_COL(ccol, o, c, w32);
            if (kind != DSMMI_K_PATTERN) {
                DSMMI_SET_VAL(cval, o, dv[c], vt);
                dv[c] = 0.0;
            }
            o++;
        }
    }
    *written = o;
}

dsmm_idx dsmmi_dense_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval)
{
    dsmm_idx written = 0;
    DSMMI_RW_DISPATCH(m, fill_row, w, m, i, ccol, cval, &written);
    return written;
}

// Numeric phase for a known row pattern through the dense accumulator: accumulate as in
// fill_row, then gather C's columns; the row matches iff every C column was reached and no
// other column was (the count of columns reached equals nz).
DSMMI_INLINE void known_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                            dsmm_idx nz, void *cval, dsmm_idx *result, const int w32,
                            const int kind, const int vt)
{
    uint64_t *bm = w->bitmap;
    double *dv = w->dvals;
    dsmm_idx lo, hi;
    dsmm_idx reached = accumulate(w, m, i, NULL, &lo, &hi, w32, kind, vt);
    int bad = reached != nz;
    for (dsmm_idx t = 0; t < nz; t++) {
        dsmm_idx c = DSMMI_COL(ccol, t, w32);
        if (c < 0 || c >= m->ncols || !(bm[c >> 6] & ((uint64_t)1 << (c & 63)))) {
            bad = 1;
            continue;
        }
        DSMMI_SET_VAL(cval, t, dv[c], vt);
    }
    // Reset every column reached: through C's columns when they are exactly those, else by
    // scanning the span.
    if (!bad) {
        for (dsmm_idx t = 0; t < nz; t++) {
            dsmm_idx c = DSMMI_COL(ccol, t, w32);
            bm[c >> 6] = 0;
            dv[c] = 0.0;
        }
    } else if (hi >= lo) {
        for (dsmm_idx wd = lo >> 6; wd <= hi >> 6; wd++) {
            uint64_t bits = bm[wd];
            bm[wd] = 0;
            while (bits) {
                dv[(wd << 6) + __builtin_ctzll(bits)] = 0.0;
                bits &= bits - 1;
            }
        }
    }
    *result = bad ? -1 : nz;
}

dsmm_idx dsmmi_dense_known(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                           dsmm_idx nz, void *cval)
{
    dsmm_idx result = -1;
    if (m->kind == DSMMI_K_PATTERN) return -1;
    DSMMI_RW_DISPATCH(m, known_row, w, m, i, ccol, nz, cval, &result);
    return result;
}
