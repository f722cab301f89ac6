// src/kernels/spgemm_masked.c: the pattern-driven accumulator: rows of C whose columns are
// known in advance. It serves the structural mask C<M> = A*B (only M(i,:)'s columns may appear,
// so triangle counting sum(L .* (L*L)) never forms L*L) and the numeric phase of a reused
// symbolic product (C's own row is the pattern). Columns map to slots through a per-thread
// dense position array (-1 = not in the pattern) when the driver could afford ncols entries,
// else through a hash table; values accumulate per slot.
#include "kernels/kernels.h"

static inline uint64_t hslot_of(dsmm_idx c, dsmm_idx mask)
{
    return ((uint64_t)c * 0x9E3779B97F4A7C15ULL >> 32) & (uint64_t)mask;
}

// Column c's slot, or -1.
static inline int32_t slot_get(const dsmmi_acc *w, dsmm_idx c, dsmm_idx hmask)
{
    if (w->pos) return w->pos[c];
    const dsmm_idx *keys = w->hkeys;
    for (uint64_t s = hslot_of(c, hmask);; s = (s + 1) & (uint64_t)hmask) {
        if (keys[s] == c) return w->hslot[s];
        if (keys[s] < 0) return -1;
    }
}

// Gives column c slot t unless it has one; returns 1 if it was new.
static inline int slot_put(dsmmi_acc *w, dsmm_idx c, int32_t t, dsmm_idx hmask)
{
    if (w->pos) {
        if (w->pos[c] >= 0) return 0;
        w->pos[c] = t;
        return 1;
    }
    dsmm_idx *keys = w->hkeys;
    for (uint64_t s = hslot_of(c, hmask);; s = (s + 1) & (uint64_t)hmask) {
        if (keys[s] == c) return 0;
        if (keys[s] < 0) {
            keys[s] = c;
            w->hslot[s] = t;
            return 1;
        }
    }
}

static dsmm_idx hash_mask_for(dsmm_idx n)
{
    dsmm_idx size = 16;
    while (size < 2 * n) size <<= 1;
    return size - 1;
}

// Forgets the d columns in skey.
static void slots_reset(dsmmi_acc *w, dsmm_idx d, dsmm_idx hmask)
{
    if (w->pos) {
        for (dsmm_idx t = 0; t < d; t++) w->pos[w->skey[t]] = -1;
    } else {
        dsmm_idx *keys = w->hkeys;
        for (dsmm_idx s = 0; s <= hmask; s++) keys[s] = -1;
    }
    for (dsmm_idx t = 0; t < d; t++) w->touched[t] = 0;
}

// Loads M's row i (columns may repeat or be unsorted) as the pattern; returns the number of
// distinct columns, listed in skey in first-seen order.
static dsmm_idx load_mask_row(dsmmi_acc *w, const dsmm_csr *M, dsmm_idx i, dsmm_idx *hmask)
{
    dsmm_idx m0 = M->rowptr[i], m1 = M->rowptr[i + 1], d = 0;
    *hmask = hash_mask_for(m1 - m0);
    if (!w->pos) {
        dsmm_idx *keys = w->hkeys;
        for (dsmm_idx s = 0; s <= *hmask; s++) keys[s] = -1;
    }
    for (dsmm_idx k = m0; k < m1; k++) {
        dsmm_idx c = dsmm_csr_col(M, k);
        if (slot_put(w, c, (int32_t)d, *hmask)) w->skey[d++] = c;
    }
    return d;
}

DSMMI_INLINE dsmm_idx masked_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol,
                                 void *cval, int sort, int fill, const int w32, const int kind,
                                 const int vt)
{
    dsmm_idx hmask = 0;
    dsmm_idx d = load_mask_row(w, m->M, i, &hmask);
    unsigned char *touched = w->touched;
    double *acc = w->sval;
    if (d > 0) {
        for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1]; k++) {
            dsmm_idx r = dsmmi_rw_acol(m, k);
            double a = !fill || kind == DSMMI_K_PATTERN || kind == DSMMI_K_PLUS_PAIR
                           ? 1.0
                           : dsmmi_rw_aval(m, k);
            for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++) {
                int32_t t = slot_get(w, DSMMI_COL(m->bc, q, w32), hmask);
                if (t < 0) continue;
                if (fill && kind != DSMMI_K_PATTERN) {
                    double p = kind == DSMMI_K_PLUS_PAIR
                                   ? 1.0
                                   : dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q, vt));
                    acc[t] = touched[t] ? dsmmi_sr_add(kind, acc[t], p) : p;
                }
                touched[t] = 1;
            }
        }
    }
    dsmm_idx o = 0;
    if (!fill) {
        for (dsmm_idx t = 0; t < d; t++) o += touched[t];
        slots_reset(w, d, hmask);
        return o;
    }
    // Forget the pattern while skey still lists it, then compact the touched slots to the
    // front of skey/acc (o <= t keeps it in place).
    if (w->pos) {
        for (dsmm_idx t = 0; t < d; t++) w->pos[w->skey[t]] = -1;
    } else {
        dsmm_idx *keys = w->hkeys;
        for (dsmm_idx s = 0; s <= hmask; s++) keys[s] = -1;
    }
    for (dsmm_idx t = 0; t < d; t++) {
        if (!touched[t]) continue;
        touched[t] = 0;
        w->skey[o] = w->skey[t];
        if (kind != DSMMI_K_PATTERN) acc[o] = acc[t];
        o++;
    }
    if (sort && !m->M->sorted) dsmmi_sort_pairs(w->skey, kind != DSMMI_K_PATTERN ? acc : NULL, o);
    for (dsmm_idx t = 0; t < o; t++) {
        DSMMI_SET_COL(ccol, t, w->skey[t], w32);
        if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, t, acc[t], vt);
    }
    return o;
}

DSMMI_INLINE void masked_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                              int sort, dsmm_idx *written, const int w32, const int kind,
                              const int vt)
{
    *written = masked_row(w, m, i, ccol, cval, sort, 1, w32, kind, vt);
}

dsmm_idx dsmmi_masked_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i)
{
    return m->w32 ? masked_row(w, m, i, NULL, NULL, 0, 0, 1, DSMMI_K_PATTERN, DSMM_PATTERN)
                  : masked_row(w, m, i, NULL, NULL, 0, 0, 0, DSMMI_K_PATTERN, DSMM_PATTERN);
}

dsmm_idx dsmmi_masked_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           int sort)
{
    dsmm_idx written = 0;
    DSMMI_RW_DISPATCH(m, masked_fill, w, m, i, ccol, cval, sort, &written);
    return written;
}

DSMMI_INLINE void known_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                            dsmm_idx nz, void *cval, dsmm_idx *result, const int w32,
                            const int kind, const int vt)
{
    dsmm_idx hmask = hash_mask_for(nz), bad = 0;
    unsigned char *touched = w->touched;
    double *acc = w->sval;
    if (!w->pos) {
        dsmm_idx *keys = w->hkeys;
        for (dsmm_idx s = 0; s <= hmask; s++) keys[s] = -1;
    }
    for (dsmm_idx t = 0; t < nz; t++) {
        dsmm_idx c = DSMMI_COL(ccol, t, w32);
        w->skey[t] = c;
        slot_put(w, c, (int32_t)t, hmask);
    }
    for (dsmm_idx k = m->ap[i]; k < m->ap[i + 1] && !bad; k++) {
        dsmm_idx r = dsmmi_rw_acol(m, k);
        double a = kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
        for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++) {
            int32_t t = slot_get(w, DSMMI_COL(m->bc, q, w32), hmask);
            if (t < 0) {
                if (m->M) continue; // masked out (a new product inside M goes unnoticed)
                bad = 1;
                break;
            }
            double p =
                kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q, vt));
            acc[t] = touched[t] ? dsmmi_sr_add(kind, acc[t], p) : p;
            touched[t] = 1;
        }
    }
    for (dsmm_idx t = 0; t < nz; t++) {
        bad |= !touched[t];
        if (!bad) DSMMI_SET_VAL(cval, t, acc[t], vt);
    }
    slots_reset(w, nz, hmask);
    *result = bad ? -1 : nz;
}

dsmm_idx dsmmi_numeric_known(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                             dsmm_idx nz, void *cval)
{
    dsmm_idx result = -1;
    if (m->kind == DSMMI_K_PATTERN) return -1;
    DSMMI_RW_DISPATCH(m, known_row, w, m, i, ccol, nz, cval, &result);
    return result;
}
