// src/kernels/spmm_row_tmpl.h: the row-wise SpMM inner loops, instantiated by spmm_row.c once
// per (value type T with its vector V of VL lanes, 32 or 64 bytes by SPMM_WIDE, column type
// CI, pattern PAT) under the name NAME. Not a header of its own: no include guard, included
// only there.
//
// Row i of C is alpha * sum_p A(i, col_p) * B(col_p, :) + beta * C(i, :). The k columns are
// cut into blocks of 8, 4, 2 and 1 vectors (32, 16, 8, 4 doubles or twice as many floats), the
// last block taking the columns left by one more vector that overlaps it, and k below one vector
// in vectors of 8, 4 or 2 lanes; a block's sums are a fixed set of vector variables (GCC vector
// extensions, so they live in registers and no intrinsics tie the code to one ISA), and A's row is
// walked once per block (it stays in L1). Sums run in A's row order, one row per thread, so a row's
// result does not depend on the thread count (nor does the order: it is fixed by the row).

#define AVAL(p) (PAT ? (T)1 : av[p])
#define CROW(i) (crow ? crow[i] : (i)) // C's row of stored row i (dsmm_spmm_rows)
#define BUFV    128 // vectors in the wide-k buffer: 4 KiB (8 KiB of 64-byte vectors)
// C's vector at dst gets y: a streaming store when nt (beta = 0, C 16-byte aligned, rows too).
#define STOREC(dst, y) DSMMI_STORE_STREAMED(nt, dst, y)

// One pass over A's row for the columns from j: NV vectors of type VT (H lanes) at j, j + H, ...,
// and with XV one more at k - H, which takes the fewer than H columns left after them by
// overlapping the last. Every vector's sums see the same entries in the same order, so columns
// two vectors share get the same sums; C's old values are all read before any store, so the
// second store writes the bytes the first did. The extra vector replaces the scalar tail's
// passes: with a pass over A's row per 4, 2 and 1 columns, k = 7 float took 2.8 times k = 8's
// time and k = 15 3.4 times k = 16's (ca-condmat, 1 thread). With one vector (and the extra
// one), and with vectors narrower than V (k below VL), the sums of alternate entries go to U =
// 2 separate sets (added at the end), so 2 multiply-add chains are in flight: the sums of
// ROW_SMALL_FN and ROW_SMALLM (spmm_row.c), which take k below two vectors on AVX2. 4 sets
// (and 2 for two vectors of V) ran 1.1-1.7x as long on graphs of 5-10 entries a row
// (ca-condmat, fe_4elt2, k = 8 float; email-enron k = 8 double): the leftover loop of up to 3
// entries mispredicts about once a row, and the 4 sums take 3 dependent adds. STORE(dst, y)
// stores the NV vectors (the extra one, at no vector boundary, is stored plainly).
#define ROW_PASS(VT, H, NV, XV, STORE)                                                             \
    {                                                                                              \
        enum { NA = (NV) + (XV), U = NA >= 2 && sizeof(VT) == sizeof(V) && (NV) > 1 ? 1 : 2 };     \
        const dsmm_idx xo = k - j - (H); /* the extra vector's column, from j */                   \
        VT acc[U][NA];                                                                             \
        _Pragma("GCC unroll 8") for (int u = 0; u < U; u++)                                        \
            _Pragma("GCC unroll 16") for (int t = 0; t < NA; t++) acc[u][t] = (VT){0};             \
        dsmm_idx p = p0;                                                                           \
        for (; p + U <= p1; p += U) {                                                              \
            _Pragma("GCC unroll 4") for (int u = 0; u < U; u++)                                    \
            {                                                                                      \
                const T *b = B + (dsmm_idx)ci[p + u] * ldb + j;                                    \
                T s = AVAL(p + u);                                                                 \
                if ((NV) * sizeof(VT) >= 128 && pfb > 0) {                                         \
                    dsmm_idx q = p + u + pfb < pend ? p + u + pfb : pend - 1;                      \
                    const char *bq = (const char *)(B + (dsmm_idx)ci[q] * ldb + j);                \
                    _Pragma("GCC unroll 16") for (size_t l = 0; l < (NV) * sizeof(VT); l += 64)    \
                        __builtin_prefetch(bq + l, 0, 3);                                          \
                }                                                                                  \
                _Pragma("GCC unroll 16") for (int t = 0; t < NA; t++)                              \
                {                                                                                  \
                    VT x;                                                                          \
                    memcpy(&x, b + (t < (NV) ? t * (H) : xo), sizeof x);                           \
                    acc[u][t] += s * x;                                                            \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (; p < p1; p++) { /* U = 2: the odd entry, into the first set */                       \
            const T *b = B + (dsmm_idx)ci[p] * ldb + j;                                            \
            T s = AVAL(p);                                                                         \
            _Pragma("GCC unroll 16") for (int t = 0; t < NA; t++)                                  \
            {                                                                                      \
                VT x;                                                                              \
                memcpy(&x, b + (t < (NV) ? t * (H) : xo), sizeof x);                               \
                acc[0][t] += s * x;                                                                \
            }                                                                                      \
        }                                                                                          \
        T *c = C + CROW(i) * ldc + j;                                                              \
        VT y[NA];                                                                                  \
        _Pragma("GCC unroll 16") for (int t = 0; t < NA; t++)                                      \
        {                                                                                          \
            VT sum = acc[0][t];                                                                    \
            _Pragma("GCC unroll 4") for (int u = 1; u < U; u++) sum += acc[u][t];                  \
            y[t] = alpha * sum;                                                                    \
            if (beta != 0) {                                                                       \
                VT x;                                                                              \
                memcpy(&x, c + (t < (NV) ? t * (H) : xo), sizeof x);                               \
                y[t] += beta * x;                                                                  \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 16") for (int t = 0; t < (NV); t++) STORE(c + t * (H), y[t]);          \
        if (XV) memcpy(c + xo, &y[NA - 1], sizeof y[0]);                                           \
    }
#define ROW_PLAIN(dst, y) memcpy((dst), &(y), sizeof(y))

// Blocks of NV vectors from column j while NV * VL columns are left; where fewer than VL columns
// would be left after a block, that block takes them too (ROW_PASS's extra vector).
#define ROW_VBLOCK(NV)                                                                             \
    for (; j + (NV)*VL <= k; j += (NV)*VL) {                                                       \
        if (k - j - (NV)*VL > 0 && k - j - (NV)*VL < VL) {                                         \
            ROW_PASS(V, VL, NV, 1, STOREC)                                                         \
            j = k - (NV)*VL; /* the step ends the loop at k */                                     \
        } else {                                                                                   \
            ROW_PASS(V, VL, NV, 0, STOREC)                                                         \
        }                                                                                          \
    }

// Fewer than VL columns left from j (k < VL without the branch-free odd entry, or after the
// wide-k buffer): one pass with one or two vectors of the most lanes of 8, 4 and 2 that fit (two
// overlapping where the count is no power of two), two sets of sums: the sums of ROW_SMALL_FN,
// so the same bits with row_odd_mask 0 or 1 (test_odd_entry); scalar sums for one column. Two
// floats or doubles take one vector: GCC compiled a scalar pair with multiply-adds in one
// instance and without in another, so A's rows (64-bit columns) and the same rows stored by
// dsmm_spmm_rows (32-bit) differed in the last bits.
#define ROW_NARROW_H(VT, H)                                                                        \
    if (k - j > (H)) {                                                                             \
        ROW_PASS(VT, H, 1, 1, ROW_PLAIN)                                                           \
    } else {                                                                                       \
        ROW_PASS(VT, H, 1, 0, ROW_PLAIN)                                                           \
    }
#define ROW_NARROW                                                                                 \
    if (j < k) {                                                                                   \
        if (VL > 8 && k - j >= 8) {                                                                \
            ROW_NARROW_H(N8, 8)                                                                    \
        } else if (VL > 4 && k - j >= 4) {                                                         \
            ROW_NARROW_H(N4, 4)                                                                    \
        } else if (k - j > 2) {                                                                    \
            ROW_PASS(N2, 2, 1, 1, ROW_PLAIN)                                                       \
        } else if (k - j == 2) {                                                                   \
            ROW_PASS(N2, 2, 1, 0, ROW_PLAIN)                                                       \
        } else {                                                                                   \
            ROW_SCOL                                                                               \
        }                                                                                          \
    }

// The single column at j (ROW_NARROW's last), in 2 sets of sums for alternate entries
// (measured: 4 sets won on facebook's long rows but lost on email-enron's short ones, where the
// leftover loop's exit mispredicts).
#define ROW_SCOL                                                                                   \
    {                                                                                              \
        T acc0 = 0, acc1 = 0;                                                                      \
        dsmm_idx p = p0;                                                                           \
        for (; p + 2 <= p1; p += 2) {                                                              \
            acc0 += AVAL(p) * B[(dsmm_idx)ci[p] * ldb + j];                                        \
            acc1 += AVAL(p + 1) * B[(dsmm_idx)ci[p + 1] * ldb + j];                                \
        }                                                                                          \
        if (p < p1) acc0 += AVAL(p) * B[(dsmm_idx)ci[p] * ldb + j];                                \
        T sum = acc0 + acc1, *c = C + CROW(i) * ldc + j;                                           \
        *c = beta != 0 ? alpha * sum + beta * *c : alpha * sum;                                    \
        j += 1;                                                                                    \
    }

#if !SPMM_WIDE // k = 1 never takes the wide instances
#ifndef SPMV_NAME
#define SPMV_CAT(n)  n##_spmv
#define SPMV_NAME(n) SPMV_CAT(n)
#endif

// SpMV (k = 1): alternate entries in two sums, the leftover in the first (the same sums as
// ROW_SCOL), in a loop of its own: in the general one the compiler kept the row's bounds
// and pointers on the stack, and as-caida ran at half scipy's speed. Not vectorised: GCC turned
// the float loop into 8-wide gathers with a per-row set-up, which ran 1.3-1.8x slower than
// this scalar loop (the double loop it left scalar).
DSMMI_CLONES DSMMI_NO_VECTORIZE static void
SPMV_NAME(NAME)(const dsmm_idx *restrict rp, const CI *restrict ci, const T *restrict av,
                const T *restrict B, dsmm_idx ldb, T *restrict C, dsmm_idx ldc,
                const dsmm_idx *restrict crow, T alpha, T beta, dsmm_idx r0, dsmm_idx r1)
{
    (void)av;
    // The last entry of the range (the odd entry's stand-in below; the mask needs one).
    const dsmm_idx plast = rp[r1] - 1;
    const int odd_mask = dsmmi_spmm_tune.row_odd_mask && plast >= 0;
    for (dsmm_idx i = r0; i < r1; i++) {
        dsmm_idx p = rp[i], p1 = rp[i + 1];
        T s0 = 0, s1 = 0;
        DSMMI_LOOP_SCALAR
        for (; p + 2 <= p1; p += 2) {
            s0 += AVAL(p) * B[(dsmm_idx)ci[p] * ldb];
            s1 += AVAL(p + 1) * B[(dsmm_idx)ci[p + 1] * ldb];
        }
        if (odd_mask) {
            // Branch-free: a row's parity is random on most graphs, and the branch on it
            // mispredicted about every other row. The odd entry's sum is always formed, from
            // entry min(p, plast), and kept only where the row has one: the same sum, rounded
            // the same way, as the branch (the product of another row's entry, maybe NaN, is
            // dropped with the sum, not multiplied by 0).
            dsmm_idx q = p < plast ? p : plast;
            T s0n = s0 + AVAL(q) * B[(dsmm_idx)ci[q] * ldb];
            SPMV_UINT nb, ob, keep = (SPMV_UINT)0 - (SPMV_UINT)(p < p1);
            memcpy(&nb, &s0n, sizeof nb);
            memcpy(&ob, &s0, sizeof ob);
            ob = (nb & keep) | (ob & ~keep);
            memcpy(&s0, &ob, sizeof s0);
        } else if (p < p1) {
            s0 += AVAL(p) * B[(dsmm_idx)ci[p] * ldb];
        }
        T sum = s0 + s1, *c = C + CROW(i) * ldc;
        *c = beta != 0 ? alpha * sum + beta * *c : alpha * sum;
    }
}
#endif

#if !SPMM_WIDE
// k of 2 to VL - 1 (2-7 floats, 2-3 doubles): a row of C in one vector of H lanes, or in two
// overlapping ones (XV: the second at k - H), sums of alternate entries in two sets and the odd
// entry branch-free as in the SpMV above. In the general loop such a k took one pass with a
// single set for two vectors (every entry waited on the last one's multiply-add) and a branch
// on the row's parity, which mispredicts about every other row on graphs: ca-condmat at k = 4
// float ran 2.1x as long as at k = 8, whose loop (ROW_ODD1) already worked so. The stand-in for
// a missing odd entry is entry min(p, plast), a row of B that exists (mostly the next row's
// first, read soon anyway); its sum is dropped by a bitwise select, so its NaN or inf never
// reaches C. Both vectors see the same entries in the same order, so the columns they share
// get the same sums; C's old values are read before either store.
#define ROW_SMALL_FN(FN, VT, H, XV)                                                                \
    DSMMI_CLONES static void FN(const dsmm_idx *restrict rp, const CI *restrict ci,                \
                                const T *restrict av, const T *restrict B, dsmm_idx ldb,           \
                                T *restrict C, dsmm_idx ldc, const dsmm_idx *restrict crow,        \
                                dsmm_idx k, T alpha, T beta, dsmm_idx r0, dsmm_idx r1)             \
    {                                                                                              \
        enum { NA = 1 + (XV) };                                                                    \
        typedef SPMV_UINT MT __attribute__((vector_size(sizeof(VT))));                             \
        const dsmm_idx plast = rp[r1] - 1; /* >= 0: the caller's check */                          \
        const dsmm_idx off[2] = {0, k - (H)};                                                      \
        (void)av;                                                                                  \
        for (dsmm_idx i = r0; i < r1; i++) {                                                       \
            dsmm_idx p = rp[i], p1 = rp[i + 1];                                                    \
            VT s0[NA], s1[NA], x, y;                                                               \
            _Pragma("GCC unroll 2") for (int t = 0; t < NA; t++) s0[t] = s1[t] = (VT){0};          \
            for (; p + 2 <= p1; p += 2) {                                                          \
                const T *b0 = B + (dsmm_idx)ci[p] * ldb, *b1 = B + (dsmm_idx)ci[p + 1] * ldb;      \
                T a0 = AVAL(p), a1 = AVAL(p + 1);                                                  \
                _Pragma("GCC unroll 2") for (int t = 0; t < NA; t++)                               \
                {                                                                                  \
                    memcpy(&x, b0 + off[t], sizeof x);                                             \
                    memcpy(&y, b1 + off[t], sizeof y);                                             \
                    s0[t] += a0 * x;                                                               \
                    s1[t] += a1 * y;                                                               \
                }                                                                                  \
            }                                                                                      \
            dsmm_idx q = p < plast ? p : plast;                                                    \
            const T *bq = B + (dsmm_idx)ci[q] * ldb;                                               \
            T aq = AVAL(q);                                                                        \
            MT keep = (MT){0} - (SPMV_UINT)(p < p1), nb, ob;                                       \
            T *c = C + CROW(i) * ldc;                                                              \
            VT out[NA];                                                                            \
            _Pragma("GCC unroll 2") for (int t = 0; t < NA; t++)                                   \
            {                                                                                      \
                memcpy(&x, bq + off[t], sizeof x);                                                 \
                y = s0[t] + aq * x;                                                                \
                memcpy(&nb, &y, sizeof nb);                                                        \
                memcpy(&ob, &s0[t], sizeof ob);                                                    \
                ob = (nb & keep) | (ob & ~keep);                                                   \
                memcpy(&y, &ob, sizeof y);                                                         \
                out[t] = alpha * (y + s1[t]);                                                      \
                if (beta != 0) {                                                                   \
                    memcpy(&x, c + off[t], sizeof x);                                              \
                    out[t] += beta * x;                                                            \
                }                                                                                  \
            }                                                                                      \
            _Pragma("GCC unroll 2") for (int t = 0; t < NA; t++)                                   \
                memcpy(c + off[t], &out[t], sizeof out[t]);                                        \
        }                                                                                          \
    }                                                                                              \
    _Static_assert(1, "an invocation ends with a semicolon")
#define SMALL_CAT(n, s)  n##_small##s
#define SMALL_NAME(n, s) SMALL_CAT(n, s)
ROW_SMALL_FN(SMALL_NAME(NAME, 2), N2, 2, 0);
ROW_SMALL_FN(SMALL_NAME(NAME, 2x), N2, 2, 1);
ROW_SMALL_FN(SMALL_NAME(NAME, 4), N4, 4, 0);
ROW_SMALL_FN(SMALL_NAME(NAME, 4x), N4, 4, 1);
#undef ROW_SMALL_FN
#endif

SPMM_ATTR static void NAME(const dsmm_idx *restrict rp, const CI *restrict ci, const T *restrict av,
                           const T *restrict B, dsmm_idx ldb, T *restrict C, dsmm_idx ldc,
                           const dsmm_idx *restrict crow, dsmm_idx k, T alpha, T beta, dsmm_idx r0,
                           dsmm_idx r1, dsmm_idx kbuf, dsmm_idx pfd, dsmm_idx pfb, int nt)
{
    const V vzero = {0};
    const dsmm_idx pend = rp[r1];
    (void)av;
#if !SPMM_WIDE
    if (k == 1) {
        SPMV_NAME(NAME)(rp, ci, av, B, ldb, C, ldc, crow, alpha, beta, r0, r1);
        return;
    }
    // k of 2 to VL - 1 in a loop of its own (ROW_SMALL_FN), where the range holds an entry for
    // the odd entry's stand-in and the tuning keeps the branch-free odd entry.
    if (k >= 2 && k < VL && pend > 0 && dsmmi_spmm_tune.row_odd_mask) {
        if (k == 2)
            SMALL_NAME(NAME, 2)(rp, ci, av, B, ldb, C, ldc, crow, k, alpha, beta, r0, r1);
        else if (k < 4 || VL <= 4)
            SMALL_NAME(NAME, 2x)(rp, ci, av, B, ldb, C, ldc, crow, k, alpha, beta, r0, r1);
        else if (k == 4)
            SMALL_NAME(NAME, 4)(rp, ci, av, B, ldb, C, ldc, crow, k, alpha, beta, r0, r1);
        else
            SMALL_NAME(NAME, 4x)(rp, ci, av, B, ldb, C, ldc, crow, k, alpha, beta, r0, r1);
        return;
    }
#endif
    // k of 1, 2 or 4 vectors also gets loops of its own, with the blocks the general loop
    // would run, so the same sums (k = 8 and 16 were 1.2-1.6x faster so; k = 64 as 8-vector
    // blocks gained nothing).
    if (k == VL || k == 2 * VL || k == 4 * VL) {
        for (dsmm_idx i = r0; i < r1; i++) {
            dsmm_idx p0 = rp[i], p1 = rp[i + 1];
            dsmm_idx j = 0;
            if (k == VL) {
                ROW_VBLOCK(1)
            } else if (k == 2 * VL) {
                ROW_VBLOCK(2)
            } else {
                ROW_VBLOCK(4)
            }
        }
        if (nt) dsmmi_stream_fence();
        return;
    }
    for (dsmm_idx i = r0; i < r1; i++) {
        dsmm_idx p0 = rp[i], p1 = rp[i + 1];
        dsmm_idx j = 0;
        // Wide k: the sums of up to BUFV vectors in an L1 buffer, each entry of A adding a whole
        // contiguous row piece of B (one stream per row of B for the hardware prefetcher,
        // instead of one short piece per register block and pass over A's row).
        while (kbuf > 0 && k - j >= kbuf) {
            dsmm_idx w = k - j < BUFV * VL ? (k - j) / VL * VL : BUFV * VL, nv = w / VL;
            V buf[BUFV];
            for (dsmm_idx t = 0; t < nv; t++) buf[t] = vzero;
            for (dsmm_idx p = p0; p < p1; p++) {
                const T *b = B + (dsmm_idx)ci[p] * ldb + j;
                V v = VSPLAT(AVAL(p));
                // The row of B named pfd entries ahead (in this range of rows; none when pfd
                // is 0) is fetched a cache line (two vectors) per two multiply-adds.
                const T *bn =
                    pfd > 0 ? B + (dsmm_idx)ci[p + pfd < pend ? p + pfd : p] * ldb + j : NULL;
                dsmm_idx t = 0;
                for (; t + 2 <= nv; t += 2) {
                    if (bn) __builtin_prefetch(bn + t * VL, 0, 3);
                    V x, y;
                    memcpy(&x, b + t * VL, sizeof x);
                    memcpy(&y, b + (t + 1) * VL, sizeof y);
                    buf[t] += v * x;
                    buf[t + 1] += v * y;
                }
                if (t < nv) {
                    V x;
                    memcpy(&x, b + t * VL, sizeof x);
                    buf[t] += v * x;
                }
            }
            T *c = C + CROW(i) * ldc + j;
            for (dsmm_idx t = 0; t < nv; t++) {
                V y = alpha * buf[t];
                if (beta != 0) {
                    V x;
                    memcpy(&x, c + t * VL, sizeof x);
                    y += beta * x;
                }
                STOREC(c + t * VL, y);
            }
            j += w;
        }
        // At most 256 bytes of a row of B per pass over A's row, 4 cache lines (8 vectors of 32
        // bytes, 4 of 64): with 8 lines of 64-byte vectors, as-caida at k = 64 double (B 13 MB
        // read at random) ran 1.12x as long as the 32-byte vectors' two passes of 4 lines.
        // k no multiple of VL: the vectors left (fewer than 8, or 4 of 64 bytes) and the last
        // columns in one pass. Multiples of VL keep the blocks of 4, 2 and 1 vectors.
        if (!SPMM_WIDE) {
            ROW_VBLOCK(8)
        } else {
            ROW_VBLOCK(4)
        }
        if (k % VL != 0 && k - j >= VL) {
            switch ((k - j) / VL) {
            case 1:
                ROW_PASS(V, VL, 1, 1, STOREC) break;
            case 2:
                ROW_PASS(V, VL, 2, 1, STOREC) break;
            case 3:
                ROW_PASS(V, VL, 3, 1, STOREC) break;
            case 4:
                ROW_PASS(V, VL, 4, 1, STOREC) break;
            case 5:
                ROW_PASS(V, VL, 5, 1, STOREC) break;
            case 6:
                ROW_PASS(V, VL, 6, 1, STOREC) break;
            default:
                ROW_PASS(V, VL, 7, 1, STOREC) break;
            }
            j = k;
        }
        ROW_VBLOCK(4)
        ROW_VBLOCK(2)
        ROW_VBLOCK(1)
        ROW_NARROW
    }
    if (nt) dsmmi_stream_fence();
}

#undef ROW_PASS
#undef ROW_PLAIN
#undef ROW_VBLOCK
#undef ROW_NARROW_H
#undef ROW_NARROW
#undef ROW_SCOL
#undef BUFV
#undef AVAL
#undef CROW
#undef STOREC
