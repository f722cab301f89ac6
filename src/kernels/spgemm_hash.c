// src/kernels/spgemm_hash.c: row-wise SpGEMM with a hash accumulator (symbolic count, numeric
// fill), plus the pair sort the unsorted accumulators share.
// Each thread owns one open-addressing table (linear probing, multiplicative hash), sized by
// the driver from the thread's largest hash row and reused across rows; a row uses only the
// first power of two >= 2 * min(flops, ncols) slots, so small rows stay in L1 (Nagasaka et
// al., as adopted by HipMCL §VI). Entries are gathered and, when asked, sorted by column.
#include "kernels/kernels.h"

static inline dsmm_idx table_size(dsmm_idx flops, dsmm_idx ncols)
{
    dsmm_idx need = flops < ncols ? flops : ncols;
    dsmm_idx size = 16;
    while (size < 2 * need) size <<= 1;
    return size;
}

static inline uint64_t slot_of(dsmm_idx c, dsmm_idx mask)
{
    return ((uint64_t)c * 0x9E3779B97F4A7C15ULL >> 32) & (uint64_t)mask;
}

static inline void clear_keys(void *keys, dsmm_idx size, int w32)
{
    if (w32) {
        int32_t *k = keys;
        for (dsmm_idx s = 0; s < size; s++) k[s] = -1;
    } else {
        dsmm_idx *k = keys;
        for (dsmm_idx s = 0; s < size; s++) k[s] = -1;
    }
}

DSMMI_INLINE dsmm_idx count_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const int w32)
{
    dsmm_idx size = table_size(dsmmi_rw_flops(m, i), m->ncols);
    dsmm_idx mask = size - 1, n = 0;
    clear_keys(w->hkeys, size, w32);
    for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++) {
        dsmm_idx r = dsmmi_rw_acol(m, k);
        for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++) {
            dsmm_idx c = DSMMI_COL(m->bc, q, w32);
            uint64_t s = slot_of(c, mask);
            for (;;) {
                dsmm_idx key = DSMMI_COL(w->hkeys, s, w32);
                if (key == c) break;
                if (key < 0) {
                    DSMMI_SET_COL(w->hkeys, s, c, w32);
                    n++;
                    break;
                }
                s = (s + 1) & (uint64_t)mask;
            }
        }
    }
    return n;
}

dsmm_idx dsmmi_hash_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i)
{
    return m->w32 ? count_row(w, m, i, 1) : count_row(w, m, i, 0);
}

DSMMI_INLINE void fill_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           int sort, dsmm_idx *written, const int w32, const int kind, const int vt)
{
    dsmm_idx size = table_size(dsmmi_rw_flops(m, i), m->ncols);
    dsmm_idx mask = size - 1, n = 0;
    double *hv = w->hvals;
    clear_keys(w->hkeys, size, w32);
    for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++) {
        dsmm_idx r = dsmmi_rw_acol(m, k);
        double a = kind == DSMMI_K_PATTERN || kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
        for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++) {
            dsmm_idx c = DSMMI_COL(m->bc, q, w32);
            double p = 0.0;
            if (kind != DSMMI_K_PATTERN)
                p = kind == DSMMI_K_PLUS_PAIR ? 1.0
                                              : dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q, vt));
            uint64_t s = slot_of(c, mask);
            for (;;) {
                dsmm_idx key = DSMMI_COL(w->hkeys, s, w32);
                if (key == c) {
                    if (kind != DSMMI_K_PATTERN) hv[s] = dsmmi_sr_add(kind, hv[s], p);
                    break;
                }
                if (key < 0) {
                    DSMMI_SET_COL(w->hkeys, s, c, w32);
                    if (kind != DSMMI_K_PATTERN) hv[s] = p;
                    n++;
                    break;
                }
                s = (s + 1) & (uint64_t)mask;
            }
        }
    }
    if (!sort) {
        dsmm_idx o = 0;
        for (dsmm_idx s = 0; s < size && o < n; s++) {
            dsmm_idx key = DSMMI_COL(w->hkeys, s, w32);
            if (key < 0) continue;
            DSMMI_SET_COL(ccol, o, key, w32);
            if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, hv[s], vt);
            o++;
        }
        *written = o;
        return;
    }
    dsmm_idx o = 0;
    for (dsmm_idx s = 0; s < size && o < n; s++) {
        dsmm_idx key = DSMMI_COL(w->hkeys, s, w32);
        if (key < 0) continue;
        w->skey[o] = key;
        if (kind != DSMMI_K_PATTERN) w->sval[o] = hv[s];
        o++;
    }
    dsmmi_sort_pairs(w->skey, kind != DSMMI_K_PATTERN ? w->sval : NULL, o);
    for (dsmm_idx t = 0; t < o; t++) {
        DSMMI_SET_COL(ccol, t, w->skey[t], w32);
        if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, t, w->sval[t], vt);
    }
    *written = o;
}

dsmm_idx dsmmi_hash_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                         int sort)
{
    dsmm_idx written = 0;
    DSMMI_RW_DISPATCH(m, fill_row, w, m, i, ccol, cval, sort, &written);
    return written;
}

// Insertion sort for short runs, median-of-three quicksort with the smaller side recursed
// first (depth O(log n)) above that.
static void sort_range(dsmm_idx *k, double *v, dsmm_idx lo, dsmm_idx hi)
{
    while (hi - lo > 24) {
        dsmm_idx mid = lo + (hi - lo) / 2, last = hi - 1;
        dsmm_idx a = k[lo], b = k[mid], c = k[last];
        dsmm_idx piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        dsmm_idx i = lo, j = last;
        for (;;) {
            while (k[i] < piv) i++;
            while (k[j] > piv) j--;
            if (i >= j) break;
            dsmm_idx tk = k[i];
            k[i] = k[j];
            k[j] = tk;
            if (v) {
                double tv = v[i];
                v[i] = v[j];
                v[j] = tv;
            }
            i++;
            j--;
        }
        // [lo, j] <= piv <= [j+1, hi)
        if (j + 1 - lo < hi - (j + 1)) {
            sort_range(k, v, lo, j + 1);
            lo = j + 1;
        } else {
            sort_range(k, v, j + 1, hi);
            hi = j + 1;
        }
    }
    for (dsmm_idx i = lo + 1; i < hi; i++) {
        dsmm_idx key = k[i];
        double val = v ? v[i] : 0.0;
        dsmm_idx j = i;
        while (j > lo && k[j - 1] > key) {
            k[j] = k[j - 1];
            if (v) v[j] = v[j - 1];
            j--;
        }
        k[j] = key;
        if (v) v[j] = val;
    }
}

void dsmmi_sort_pairs(dsmm_idx *keys, double *vals, dsmm_idx n)
{
    if (n > 1) sort_range(keys, vals, 0, n);
}
