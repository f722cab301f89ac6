// src/kernels/spgemm_heap.c: row-wise SpGEMM by k-way merge: row i of C is the merge of the
// k = nnz(A(i,:)) sorted rows of B it selects, through a binary min-heap keyed by column
// (HipMCL §VI: heaps win at low compression factor, where a hash table mostly inserts).
// The output comes out sorted; O(flops log k) per row. Also the one-row copy (k = 1).
#include "kernels/kernels.h"

// Equal columns pop in the order of A's row (dsmmi_heap_before), so products are summed in the
// same order as by the hash and dense accumulators and the reference: every kernel gives
// bit-identical values, whatever AUTO picks.

// Loads the row's sources into the heap; returns the heap size.
DSMMI_INLINE dsmm_idx heap_init(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, int values,
                                const int w32)
{
    dsmm_idx n = 0;
    int32_t t = 0;
    for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++, t++) {
        dsmm_idx r = dsmmi_rw_acol(m, k);
        w->hp_pos[t] = m->bp[r];
        w->hp_end[t] = m->bp[r + 1];
        if (values) w->hp_a[t] = dsmmi_rw_aval(m, k);
        if (w->hp_pos[t] < w->hp_end[t]) {
            w->hp_key[n] = DSMMI_COL(m->bc, w->hp_pos[t], w32);
            w->hp_src[n] = t;
            n++;
        }
    }
    for (dsmm_idx s = n / 2; s-- > 0;) dsmmi_heap_sift_down(w->hp_key, w->hp_src, n, s);
    return n;
}

// Advances the top source; returns the new heap size.
DSMMI_INLINE dsmm_idx heap_next(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx n, const int w32)
{
    int32_t t = w->hp_src[0];
    dsmm_idx q = ++w->hp_pos[t];
    if (q < w->hp_end[t]) {
        w->hp_key[0] = DSMMI_COL(m->bc, q, w32);
    } else {
        n--;
        w->hp_key[0] = w->hp_key[n];
        w->hp_src[0] = w->hp_src[n];
    }
    if (n > 1) dsmmi_heap_sift_down(w->hp_key, w->hp_src, n, 0);
    return n;
}

DSMMI_INLINE dsmm_idx count_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const int w32)
{
    dsmm_idx n = heap_init(w, m, i, 0, w32), out = 0, last = -1;
    while (n > 0) {
        dsmm_idx c = w->hp_key[0];
        out += c != last;
        last = c;
        n = heap_next(w, m, n, w32);
    }
    return out;
}

dsmm_idx dsmmi_heap_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i)
{
    return m->w32 ? count_row(w, m, i, 1) : count_row(w, m, i, 0);
}

DSMMI_INLINE void fill_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           dsmm_idx *written, const int w32, const int kind, const int vt)
{
    int values = kind != DSMMI_K_PATTERN && kind != DSMMI_K_PLUS_PAIR;
    dsmm_idx n = heap_init(w, m, i, values, w32), o = -1, last = -1;
    double acc = 0.0;
    while (n > 0) {
        dsmm_idx c = w->hp_key[0];
        double p = 1.0;
        if (values) {
            int32_t t = w->hp_src[0];
            p = dsmmi_sr_mul(kind, w->hp_a[t], DSMMI_VAL(m->bv, w->hp_pos[t], vt));
        }
        if (c != last) {
            if (o >= 0 && kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, acc, vt);
            o++;
            DSMMI_SET_COL(ccol, o, c, w32);
            acc = p;
            last = c;
        } else if (kind != DSMMI_K_PATTERN) {
            acc = dsmmi_sr_add(kind, acc, p);
        }
        n = heap_next(w, m, n, w32);
    }
    if (o >= 0 && kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, acc, vt);
    *written = o + 1;
}

dsmm_idx dsmmi_heap_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval)
{
    dsmm_idx written = 0;
    DSMMI_RW_DISPATCH(m, fill_row, w, m, i, ccol, cval, &written);
    return written;
}

DSMMI_INLINE void copy_row(const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval, dsmm_idx *written,
                           const int w32, const int kind, const int vt)
{
    dsmm_idx k = m->ap[i];
    dsmm_idx r = dsmmi_rw_acol(m, k);
    double a = kind == DSMMI_K_PATTERN || kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
    dsmm_idx q0 = m->bp[r], n = m->bp[r + 1] - q0;
    for (dsmm_idx t = 0; t < n; t++) {
        DSMMI_SET_COL(ccol, t, DSMMI_COL(m->bc, q0 + t, w32), w32);
        if (kind == DSMMI_K_PATTERN) continue;
        double p =
            kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q0 + t, vt));
        DSMMI_SET_VAL(cval, t, p, vt);
    }
    *written = n;
}

dsmm_idx dsmmi_copy_fill(const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval)
{
    dsmm_idx written = 0;
    DSMMI_RW_DISPATCH(m, copy_row, m, i, ccol, cval, &written);
    return written;
}
