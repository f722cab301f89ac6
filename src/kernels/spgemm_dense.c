// src/kernels/spgemm_dense.c: row-wise SpGEMM with a dense accumulator (out-of-core paper
// §II.B, spECK's dense rows): per thread, one stamp and one value per column. A column is in
// the current row when its stamp equals the row's tag, so nothing is cleared between rows
// (a new row takes the next tag) and the first touch of a column is a compare, not a branch
// on a bit: the symbolic count is a load, a compare and a store per product. Under the plus
// semirings the values are 0 outside the current row (each is reset as it is written out),
// so a product is one unconditional add; the other semirings mask a stale value away by
// the stamp. The numeric fill
// lists the row's columns as it meets them (branch-free append), then orders them either by
// sorting the list (short rows spread over many columns) or by setting their bits in a bitmap
// and reading it word by word (rows that fill a noticeable part of their span).
// Under the plus semirings, rows with many products per column (docs/kernels.md, "The fill
// on marks") skip the stamps: a product is an add and a byte mark, and the row is read out by
// walking its span. The numeric phase of a known pattern checks the pattern the same way.
#include <string.h>

#include "kernels/kernels.h"

// The next row's tag; on wrap-around the stamps are reset so an old tag cannot match.
static inline uint32_t next_tag(dsmmi_acc *w, dsmm_idx ncols)
{
    if (++w->tag == 0) {
        memset(w->stamp, 0, (size_t)ncols * sizeof *w->stamp);
        w->tag = 1;
    }
    return w->tag;
}

// A column's value as the row is written out. Under the plus semirings the accumulator is kept
// at 0 outside the current row (reset here, as each value is read), so the accumulate loop
// adds without looking at the stamp.
DSMMI_INLINE double take(double *dv, dsmm_idx c, const int kind)
{
    double v = dv[c];
    if (DSMMI_PLUS_KIND(kind)) dv[c] = 0;
    return v;
}

// Prefetches the start of the B row that A's entry k + d of row i reads, so the row's
// cache misses overlap with the work on the rows before it.
DSMMI_INLINE void prefetch_b(const dsmmi_rw *m, dsmm_idx k, dsmm_idx end, dsmm_idx d, const int w32,
                             const int vals, const int vt)
{
    if (d > 0 && k + 2 * d < end && dsmmi_spgemm_tune.prefetch_bp)
        __builtin_prefetch(m->bp + dsmmi_rw_acol(m, k + 2 * d));
    if (d > 0 && k + d < end) {
        dsmm_idx q = m->bp[dsmmi_rw_acol(m, k + d)];
        __builtin_prefetch(w32 ? (const void *)((const int32_t *)m->bc + q)
                               : (const void *)((const dsmm_idx *)m->bc + q));
        if (vals)
            __builtin_prefetch(vt == DSMM_FLOAT ? (const void *)((const float *)m->bv + q)
                                                : (const void *)((const double *)m->bv + q));
    }
}

DSMMI_INLINE dsmm_idx count_row(dsmmi_acc *w, const dsmmi_rw *mp, dsmm_idx i, const int w32)
{
    const dsmmi_rw local = *mp, *m = &local; // as in accumulate
    uint32_t *st = w->stamp, tag = next_tag(w, m->ncols);
    dsmm_idx n = 0, end = m->ap[i + 1], pd = dsmmi_spgemm_tune.prefetch;
    for (dsmm_idx k = m->ap[i]; k < end; k++) {
        prefetch_b(m, k, m->a_end, pd, w32, 0, DSMM_PATTERN);
        dsmm_idx r = dsmmi_rw_acol(m, k);
        for (dsmm_idx q = m->bp[r]; q < m->bp[r + 1]; q++) {
            dsmm_idx c = DSMMI_COL(m->bc, q, w32);
            n += st[c] != tag;
            st[c] = tag;
        }
    }
    return n;
}

dsmm_idx dsmmi_dense_count(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i)
{
    return m->w32 ? count_row(w, m, i, 1) : count_row(w, m, i, 0);
}

// Accumulates row i: stamps, values in dv (a column's first product is stored, later ones
// added with the semiring), and, when list != NULL, the columns in order of first touch.
// Returns the number of columns reached; lo/hi get their bounds.
DSMMI_INLINE dsmm_idx accumulate(dsmmi_acc *w, const dsmmi_rw *mp, dsmm_idx i, void *list,
                                 dsmm_idx *plo, dsmm_idx *phi, const int w32, const int kind,
                                 const int vt)
{
    // A local copy of the row's inputs: the list's and stamps' 32-bit stores could alias the
    // int fields of *mp, which made the compiler reload them (and A's type and column width
    // tests) at every entry of A.
    const dsmmi_rw local = *mp, *m = &local;
    uint32_t *st = w->stamp, tag = next_tag(w, m->ncols);
    double *dv = w->dvals;
    dsmm_idx n = 0, lo = m->ncols, hi = -1, end = m->ap[i + 1], pd = dsmmi_spgemm_tune.prefetch;
    for (dsmm_idx k = m->ap[i]; k < end; k++) {
        prefetch_b(m, k, m->a_end, pd, w32, kind != DSMMI_K_PATTERN && kind != DSMMI_K_PLUS_PAIR,
                   vt);
        dsmm_idx r = dsmmi_rw_acol(m, k);
        dsmm_idx q0 = m->bp[r], q1 = m->bp[r + 1];
        if (q1 == q0) continue;
        dsmm_idx c0 = DSMMI_COL(m->bc, q0, w32), c1 = DSMMI_COL(m->bc, q1 - 1, w32);
        if (c0 < lo) lo = c0;
        if (c1 > hi) hi = c1;
        double a = kind == DSMMI_K_PATTERN || kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
        for (dsmm_idx q = q0; q < q1; q++) {
            dsmm_idx c = DSMMI_COL(m->bc, q, w32);
            int fresh = st[c] != tag;
            st[c] = tag;
            if (list) DSMMI_SET_COL(list, n, c, w32);
            n += fresh;
            if (kind == DSMMI_K_PATTERN) continue;
            double p =
                kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_sr_mul(kind, a, DSMMI_VAL(m->bv, q, vt));
            if (DSMMI_PLUS_KIND(kind)) {
                dv[c] += p; // 0 unless the row reached c before (take resets it)
                continue;
            }
            // Else branch-free: a fresh column takes p, else the sum with its value (which is
            // stale from an earlier row when fresh, and masked away).
            uint64_t keep = (uint64_t)fresh - 1, pb, sb;
            double sum = dsmmi_sr_add(kind, dv[c], p);
            memcpy(&sb, &sum, sizeof sb);
            memcpy(&pb, &p, sizeof pb);
            sb = (sb & keep) | (pb & ~keep);
            memcpy(&dv[c], &sb, sizeof sb);
        }
    }
    *plo = lo;
    *phi = hi;
    return n;
}

typedef int32_t v4i __attribute__((vector_size(16)));
typedef int32_t v8i __attribute__((vector_size(32)));

// rank[t] = the number of the n <= 32 distinct columns of l smaller than l[t]: VW columns at a
// time in the lanes of a vector VT, each column of the list broadcast and compared with all
// of them (n * ceil(n / VW) compares, no branch, no horizontal sums). NB: blocks of VW. The
// list is copied into a padded array first: the blocks' last lanes hold INT32_MAX, ranked but
// never written out (setting lanes one by one from the list compiled to a chain of branches).
#define RANK_BLOCKS(VT, VW, NB)                                                                    \
    do {                                                                                           \
        VT cv[NB], r[NB];                                                                          \
        int32_t pad[(NB) * (VW)]; /* the list, then columns that rank but are not written */       \
        VT top = (VT){0} + INT32_MAX;                                                              \
        for (int b = 0; b < (NB); b++) memcpy(pad + (VW)*b, &top, sizeof top);                     \
        memcpy(pad, l, (size_t)n * sizeof *pad);                                                   \
        for (int b = 0; b < (NB); b++) {                                                           \
            memcpy(&cv[b], pad + (VW)*b, sizeof cv[b]);                                            \
            r[b] = (VT){0};                                                                        \
        }                                                                                          \
        for (dsmm_idx u = 0; u < n; u++) {                                                         \
            VT x = (VT){0} + l[u];                                                                 \
            for (int b = 0; b < (NB); b++) r[b] += x < cv[b]; /* -1 where l[u] is smaller */       \
        }                                                                                          \
        for (int b = 0; b < (NB); b++) {                                                           \
            r[b] = -r[b];                                                                          \
            memcpy(rank + (VW)*b, &r[b], sizeof r[b]);                                             \
        }                                                                                          \
    } while (0)

// RANK_BLOCKS for the 1 to 8 blocks of VW columns the row needs (n <= 8 VW).
#define RANK_SWITCH(VT, VW)                                                                        \
    do {                                                                                           \
        switch ((n + (VW)-1) / (VW)) {                                                             \
        case 1:                                                                                    \
            RANK_BLOCKS(VT, VW, 1);                                                                \
            break;                                                                                 \
        case 2:                                                                                    \
            RANK_BLOCKS(VT, VW, 2);                                                                \
            break;                                                                                 \
        case 3:                                                                                    \
            RANK_BLOCKS(VT, VW, 3);                                                                \
            break;                                                                                 \
        case 4:                                                                                    \
            RANK_BLOCKS(VT, VW, 4);                                                                \
            break;                                                                                 \
        case 5:                                                                                    \
            RANK_BLOCKS(VT, VW, 5);                                                                \
            break;                                                                                 \
        case 6:                                                                                    \
            RANK_BLOCKS(VT, VW, 6);                                                                \
            break;                                                                                 \
        case 7:                                                                                    \
            RANK_BLOCKS(VT, VW, 7);                                                                \
            break;                                                                                 \
        default:                                                                                   \
            RANK_BLOCKS(VT, VW, 8);                                                                \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

// SSE2 (the baseline): four columns a vector.
static void rank_cols4(const int32_t *l, dsmm_idx n, int32_t *rank)
{
    RANK_SWITCH(v4i, 4);
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX2: eight columns a vector.
__attribute__((target("avx2"))) static void rank_cols8(const int32_t *l, dsmm_idx n, int32_t *rank)
{
    switch ((n + 7) / 8) {
    case 1:
        RANK_BLOCKS(v8i, 8, 1);
        return;
    case 2:
        RANK_BLOCKS(v8i, 8, 2);
        return;
    case 3:
        RANK_BLOCKS(v8i, 8, 3);
        return;
    default:
        RANK_BLOCKS(v8i, 8, 4);
        return;
    }
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
typedef int32_t v16i __attribute__((vector_size(64)));

// AVX-512: sixteen columns a vector, rows of up to 128 columns.
__attribute__((target("avx512f"))) static void rank_cols16(const int32_t *l, dsmm_idx n,
                                                           int32_t *rank)
{
    RANK_SWITCH(v16i, 16);
}
#endif

// The longest row rank_cols takes: 128 columns by AVX-512 (dense_rank_vec 3 and the CPU has
// it; dense_rank_max, 64, is the default limit), else 32.
static dsmm_idx rank_vec_max(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (dsmmi_spgemm_tune.dense_rank_vec >= 3 && __builtin_cpu_supports("avx512f")) return 128;
#endif
    return 32;
}

// Sixteen at a time where the CPU has AVX-512 and dense_rank_vec asks for it, eight where it
// has AVX2, else four. n <= rank_vec_max().
static void rank_cols(const int32_t *l, dsmm_idx n, int32_t *rank)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (dsmmi_spgemm_tune.dense_rank_vec >= 3 && __builtin_cpu_supports("avx512f")) {
        rank_cols16(l, n, rank);
        return;
    }
    if (dsmmi_spgemm_tune.dense_rank_vec >= 2 && __builtin_cpu_supports("avx2")) {
        rank_cols8(l, n, rank);
        return;
    }
#endif
    rank_cols4(l, n, rank);
}

// Writes out, in order, the columns of the bitmap words that summary word sw's bits name
// (each word non-zero), clearing them; *o counts the entries written.
DSMMI_INLINE void emit_words(uint64_t *bm, uint64_t words, dsmm_idx sw, void *ccol, void *cval,
                             double *dv, dsmm_idx *o, const int w32, const int kind, const int vt)
{
    dsmm_idx p = *o;
    while (words) {
        dsmm_idx wd = (sw << 6) + __builtin_ctzll(words);
        words &= words - 1;
        uint64_t bits = bm[wd];
        bm[wd] = 0;
        do {
            dsmm_idx c = (wd << 6) + __builtin_ctzll(bits);
            bits &= bits - 1;
            DSMMI_SET_COL(ccol, p, c, w32);
            if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, p, take(dv, c, kind), vt);
            p++;
        } while (bits);
    }
    *o = p;
}

DSMMI_INLINE void fill_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol, void *cval,
                           dsmm_idx *written, const int w32, const int kind, const int vt)
{
    double *dv = w->dvals;
    void *list = w->skey; // the row's columns in order of first touch (int32 when w32)
    dsmm_idx lo, hi;
    dsmm_idx n = accumulate(w, m, i, list, &lo, &hi, w32, kind, vt);
    *written = n;
    if (n == 0) return;
    const dsmmi_spgemm_tuning *tu = &dsmmi_spgemm_tune;
    // Short row: each column's place is the number of smaller columns (n^2 compares with no
    // branch; a sort mispredicts about once per entry), counted by rank_cols for 16 (AVX-512),
    // 8 (AVX2) or 4 (SSE2) columns at a time: rows of up to dense_rank_max (64) columns with
    // AVX-512, else 32; above 32 only where the stamp walk below does not apply and the span
    // has a 64-bit word a column or more (dense_rank_words). dense_rank_vec 0: one column at
    // a time, any row of up to dense_rank_max (tests and tuning). Measurements in
    // docs/kernels.md.
    dsmm_idx span = hi - lo + 1;
    dsmm_idx span_words = (hi >> 6) - (lo >> 6) + 1;
    if (w32 && n <= tu->dense_rank_max &&
        (n <= 32 || ((double)n * tu->dense_scan_ratio < span &&
                     (double)span_words * tu->dense_rank_words >= (double)n))) {
        const int32_t *l32 = list;
        if (tu->dense_rank_vec > 0 && n <= rank_vec_max()) {
            int32_t rank[128];
            rank_cols(l32, n, rank);
            for (dsmm_idx t = 0; t < n; t++) {
                int32_t c = l32[t];
                DSMMI_SET_COL(ccol, rank[t], c, w32);
                if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, rank[t], take(dv, c, kind), vt);
            }
            return;
        }
        if (tu->dense_rank_vec == 0) {
            for (dsmm_idx t = 0; t < n; t++) {
                int32_t c = l32[t];
                int32_t r = 0;
                for (dsmm_idx u = 0; u < n; u++) r += l32[u] < c;
                DSMMI_SET_COL(ccol, r, c, w32);
                if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, r, take(dv, c, kind), vt);
            }
            return;
        }
    }
    if (n * tu->dense_scan_ratio >= (double)span) {
        // The row fills a good part of its span: walk the span's stamps and keep the row's
        // columns with a branch-free compaction (the last column, hi, is the row's, so the
        // writes stay inside the row).
        const uint32_t *st = w->stamp;
        uint32_t tag = w->tag;
        dsmm_idx o = 0;
        for (dsmm_idx c = lo; c <= hi; c++) {
            DSMMI_SET_COL(ccol, o, c, w32);
            if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, take(dv, c, kind), vt);
            o += st[c] == tag;
        }
        return;
    }
    // Few columns over a wide span (meshes, road networks, sparse graph rows): sort the list.
    // Else set the columns' bits and read the span's words in order, clearing them.
    if (n * tu->dense_sort_ratio < (hi >> 6) - (lo >> 6) + 1) {
        dsmm_idx *l64 = w->skey;
        if (w32) // widen in place, from the end
            for (dsmm_idx t = n - 1; t >= 0; t--) l64[t] = ((const int32_t *)list)[t];
        dsmmi_sort_pairs(l64, NULL, n);
        for (dsmm_idx o = 0; o < n; o++) {
            dsmm_idx c = l64[o];
            DSMMI_SET_COL(ccol, o, c, w32);
            if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, take(dv, c, kind), vt);
        }
        return;
    }
    // Rows with many columns per word of their span set bits and walk the span's words. Else
    // two levels: a summary bit per bitmap word, so the walk visits only the span's non-zero
    // words (a row of a hundred columns over tens of thousands read hundreds of zero words,
    // with a mispredicted branch on most non-zero ones).
    uint64_t *bm = w->bitmap;
    if ((double)((hi >> 6) - (lo >> 6) + 1) * tu->dense_summary <= (double)n) {
        for (dsmm_idx t = 0; t < n; t++) {
            dsmm_idx c = DSMMI_COL(list, t, w32);
            bm[c >> 6] |= (uint64_t)1 << (c & 63);
        }
        dsmm_idx o = 0;
        for (dsmm_idx wd = lo >> 6; wd <= hi >> 6; wd++) {
            uint64_t bits = bm[wd];
            if (bits == 0) continue;
            bm[wd] = 0;
            while (bits) {
                dsmm_idx c = (wd << 6) + __builtin_ctzll(bits);
                bits &= bits - 1;
                DSMMI_SET_COL(ccol, o, c, w32);
                if (kind != DSMMI_K_PATTERN) DSMMI_SET_VAL(cval, o, take(dv, c, kind), vt);
                o++;
            }
        }
        return;
    }
    uint64_t *sm = bm + ((m->ncols + 63) >> 6);
    dsmm_idx o = 0, s0 = lo >> 12;
    if ((hi >> 12) - s0 < 2 && tu->dense_summary_regs) {
        // The span's summary is one or two words (8192 columns): kept in registers. In
        // memory, each column's summary bit was a load and store on the same word as the
        // column before, a store-forwarding chain through the whole list.
        uint64_t lo_w = 0, hi_w = 0;
        for (dsmm_idx t = 0; t < n; t++) {
            dsmm_idx c = DSMMI_COL(list, t, w32);
            bm[c >> 6] |= (uint64_t)1 << (c & 63);
            uint64_t bit = (uint64_t)1 << ((c >> 6) & 63), up = -(uint64_t)((c >> 12) != s0);
            lo_w |= bit & ~up;
            hi_w |= bit & up;
        }
        emit_words(bm, lo_w, s0, ccol, cval, dv, &o, w32, kind, vt);
        emit_words(bm, hi_w, s0 + 1, ccol, cval, dv, &o, w32, kind, vt);
        return;
    }
    for (dsmm_idx t = 0; t < n; t++) {
        dsmm_idx c = DSMMI_COL(list, t, w32);
        bm[c >> 6] |= (uint64_t)1 << (c & 63);
        sm[c >> 12] |= (uint64_t)1 << ((c >> 6) & 63);
    }
    for (dsmm_idx sw = lo >> 12; sw <= hi >> 12; sw++) {
        uint64_t words = sm[sw];
        sm[sw] = 0;
        emit_words(bm, words, sw, ccol, cval, dv, &o, w32, kind, vt);
    }
}

// Whether a row of `flops` products goes on marks: a plus semiring, marks allocated, and
// flops * ratio (0: never) reaching `span`, the columns its walk or check reads.
static inline int on_marks(const dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx flops, double ratio,
                           dsmm_idx span)
{
    return DSMMI_PLUS_KIND(m->kind) && w->seen != NULL && ratio > 0 &&
           (double)flops * ratio >= (double)span;
}

// Accumulates row i under the plus semirings on marks: each product is added to its column's
// value and the column marked (a byte store: no stamp compare, no count, no list). lo/hi get
// the bounds of the columns reached. The same sums, in the same order, as accumulate's.
DSMMI_INLINE void accumulate_marks(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx *plo,
                                   dsmm_idx *phi, const int w32, const int kind, const int vt)
{
    // Local restrict pointers: the byte stores of the marks could alias anything else, which
    // made the compiler reload B's pointers from m after each one.
    unsigned char *restrict seen = w->seen;
    double *restrict dv = w->dvals;
    const void *restrict bc = m->bc;
    const void *restrict bv = m->bv;
    dsmm_idx lo = m->ncols, hi = -1, end = m->ap[i + 1], pd = dsmmi_spgemm_tune.prefetch;
    for (dsmm_idx k = m->ap[i]; k < end; k++) {
        prefetch_b(m, k, m->a_end, pd, w32, kind != DSMMI_K_PLUS_PAIR, vt);
        dsmm_idx r = dsmmi_rw_acol(m, k);
        dsmm_idx q0 = m->bp[r], q1 = m->bp[r + 1];
        if (q1 == q0) continue;
        dsmm_idx c0 = DSMMI_COL(bc, q0, w32), c1 = DSMMI_COL(bc, q1 - 1, w32);
        if (c0 < lo) lo = c0;
        if (c1 > hi) hi = c1;
        double a = kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_rw_aval(m, k);
        for (dsmm_idx q = q0; q < q1; q++) {
            dsmm_idx c = DSMMI_COL(bc, q, w32);
            dv[c] += kind == DSMMI_K_PLUS_PAIR ? 1.0 : dsmmi_sr_mul(kind, a, DSMMI_VAL(bv, q, vt));
            seen[c] = 1;
        }
    }
    *plo = lo;
    *phi = hi;
}

// The fill under the plus semirings for rows whose flops outnumber their columns' range: the
// row accumulated on marks, then the span of B's columns walked in order, writing every
// column and advancing the output on a mark (branch-free, as the stamp walk), clearing values
// and marks as it goes. The writes stay inside the row: the last column of the span is the
// row's. The same sums, in the same order, as fill_row's.
DSMMI_INLINE void fill_row_marks(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, void *ccol,
                                 void *cval, dsmm_idx *written, const int w32, const int kind,
                                 const int vt)
{
    unsigned char *seen = w->seen;
    double *dv = w->dvals;
    dsmm_idx lo, hi;
    accumulate_marks(w, m, i, &lo, &hi, w32, kind, vt);
    dsmm_idx o = 0;
    for (dsmm_idx c = lo; c <= hi; c++) {
        DSMMI_SET_COL(ccol, o, c, w32);
        DSMMI_SET_VAL(cval, o, dv[c], vt);
        dv[c] = 0;
        o += seen[c];
        seen[c] = 0;
    }
    *written = o;
}

dsmm_idx dsmmi_dense_fill(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx flops, void *ccol,
                          void *cval)
{
    dsmm_idx written = 0;
    if (on_marks(w, m, flops, dsmmi_spgemm_tune.fill_mark_ratio, m->ncols)) {
        DSMMI_RW_DISPATCH(m, fill_row_marks, w, m, i, ccol, cval, &written);
        return written;
    }
    DSMMI_RW_DISPATCH(m, fill_row, w, m, i, ccol, cval, &written);
    return written;
}

// Whether any of the n bytes at s is non-zero.
static int any_set(const unsigned char *s, dsmm_idx n)
{
    uint64_t any = 0;
    dsmm_idx j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t x;
        memcpy(&x, s + j, sizeof x);
        any |= x;
    }
    for (; j < n; j++) any |= s[j];
    return any != 0;
}

// Numeric phase for a known row pattern under the plus semirings, for rows with flops enough
// to pay a pass over their span: the row accumulated on marks; gathering C's columns checks
// and clears their marks, and a mark left in the span is a product outside C's row. The same
// sums, in the same order, as known_row's.
DSMMI_INLINE void known_row_marks(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                                  dsmm_idx nz, void *cval, dsmm_idx *result, const int w32,
                                  const int kind, const int vt)
{
    unsigned char *seen = w->seen;
    double *dv = w->dvals;
    dsmm_idx lo, hi;
    accumulate_marks(w, m, i, &lo, &hi, w32, kind, vt);
    int bad = 0;
    for (dsmm_idx t = 0; t < nz; t++) {
        dsmm_idx c = DSMMI_COL(ccol, t, w32);
        if (c < 0 || c >= m->ncols) {
            bad = 1;
            break;
        }
        bad |= !seen[c];
        seen[c] = 0;
        DSMMI_SET_VAL(cval, t, take(dv, c, kind), vt);
    }
    if (hi >= lo && (bad || any_set(seen + lo, hi - lo + 1))) {
        bad = 1; // leave the accumulator and the marks clear for the next row
        memset(dv + lo, 0, (size_t)(hi - lo + 1) * sizeof *dv);
        memset(seen + lo, 0, (size_t)(hi - lo + 1));
    }
    *result = bad ? -1 : nz;
}

// Numeric phase for a known row pattern through the dense accumulator: accumulate as in
// fill_row, then gather C's columns; the row matches iff every C column was reached and no
// other column was (the count of columns reached equals nz). Nothing needs resetting.
DSMMI_INLINE void known_row(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, const void *ccol,
                            dsmm_idx nz, void *cval, dsmm_idx *result, const int w32,
                            const int kind, const int vt)
{
    const uint32_t *st = w->stamp;
    double *dv = w->dvals;
    dsmm_idx lo, hi;
    dsmm_idx reached = accumulate(w, m, i, NULL, &lo, &hi, w32, kind, vt);
    uint32_t tag = w->tag;
    int bad = reached != nz;
    for (dsmm_idx t = 0; t < nz && !bad; t++) {
        dsmm_idx c = DSMMI_COL(ccol, t, w32);
        if (c < 0 || c >= m->ncols || st[c] != tag) {
            bad = 1;
            break;
        }
        DSMMI_SET_VAL(cval, t, take(dv, c, kind), vt);
    }
    // A mismatch leaves values the row reached: clear its span, so the accumulator is 0
    // outside a row again (columns the row did not reach are 0 already).
    if (bad && DSMMI_PLUS_KIND(kind) && hi >= lo)
        memset(dv + lo, 0, (size_t)(hi - lo + 1) * sizeof *dv);
    *result = bad ? -1 : nz;
}

dsmm_idx dsmmi_dense_known(dsmmi_acc *w, const dsmmi_rw *m, dsmm_idx i, dsmm_idx flops,
                           const void *ccol, dsmm_idx nz, int sorted, void *cval)
{
    dsmm_idx result = -1;
    if (m->kind == DSMMI_K_PATTERN) return -1;
    // Marks when the row's products reach a quarter of its span (dense_mark_ratio 4:
    // the span's pass then costs little beside them); else the stamps.
    dsmm_idx span = m->ncols;
    if (nz > 0 && sorted) span = DSMMI_COL(ccol, nz - 1, m->w32) - DSMMI_COL(ccol, 0, m->w32) + 1;
    if (on_marks(w, m, flops, dsmmi_spgemm_tune.dense_mark_ratio, span)) {
        DSMMI_RW_DISPATCH(m, known_row_marks, w, m, i, ccol, nz, cval, &result);
        return result;
    }
    DSMMI_RW_DISPATCH(m, known_row, w, m, i, ccol, nz, cval, &result);
    return result;
}
