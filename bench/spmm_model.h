// bench/spmm_model.h: the traffic model bench/spmm.sh uses to explain the row-wise SpMM's
// distance from the compulsory-traffic floor (docs/bench.md, "Where the time goes when B is
// in the cache"): an LRU simulation of the lines of B that each thread's L2 must bring in.
// Header-only, for bench_spmm and tests/kernels/test_spmm_model.c (which checks the counts
// by hand).
#ifndef DSMM_BENCH_SPMM_MODEL_H
#define DSMM_BENCH_SPMM_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "dsmm.h"

// The traffic model of bench_spmm --l2-model: how many 64-byte lines of B the row-wise
// product C = H * B brings into the threads' level-2 caches. The rows of H (CSR, op(A)) are
// cut into 8 * threads chunks of equal nnz + rows, as the kernel cuts them, and dealt to the
// threads in turn (the kernel takes them dynamically); each thread keeps a fully associative
// LRU cache of cap_bytes / 64 lines, and each entry (i, c) touches, in H's order, the lines of
// B's row c (B row-major with ld = k, 64-byte aligned, as dsmm_dense_create allocates it).
// Returns the misses summed over the threads, or -1 when out of memory or B has 2^31 lines.
// Optimistic: a real L2 is set associative, not quite LRU, and holds A and C too.
static inline double bench_l2_model_misses(const dsmm_csr *H, dsmm_idx k, size_t w, int threads,
                                           double cap_bytes)
{
    size_t rowb = (size_t)k * w;
    if (rowb == 0 || H->nnz == 0) return 0.0;
    size_t nlines = ((size_t)H->ncols * rowb + 63) / 64;
    size_t cap = (size_t)(cap_bytes / 64.0);
    if (cap < 1) cap = 1;
    if (nlines > INT32_MAX - 1) return -1.0; // the list's links are 32-bit
    // calloc: GCC cannot tell that a line is linked before it is read
    int32_t *prev = calloc(nlines + 1, sizeof *prev), *next = calloc(nlines + 1, sizeof *next);
    unsigned char *in = malloc(nlines + 1);
    if (prev == NULL || next == NULL || in == NULL) {
        free(prev);
        free(next);
        free(in);
        return -1.0;
    }
    dsmm_idx nchunks = (dsmm_idx)8 * threads, m = H->nrows;
    dsmm_idx total = H->nnz + m;
    double misses = 0.0;
    int32_t head = (int32_t)nlines; // sentinel of the circular list: next = most recent
    for (int t = 0; t < threads; t++) {
        memset(in, 0, nlines + 1);
        prev[head] = next[head] = head;
        size_t size = 0;
        for (dsmm_idx c = t; c < nchunks; c += threads) {
            // chunk c: the rows i with c <= (rowptr[i] + i) * nchunks / total < c + 1
            dsmm_idx lo = 0, hi = 0;
            for (int e = 0; e < 2; e++) {
                int64_t bar = (int64_t)total * (c + e); // against (rowptr[i] + i) * nchunks
                dsmm_idx a = 0, b = m;
                while (a < b) { // the first row i with (rowptr[i] + i) * nchunks >= bar
                    dsmm_idx mid = a + (b - a) / 2;
                    if (((int64_t)H->rowptr[mid] + mid) * nchunks < bar)
                        a = mid + 1;
                    else
                        b = mid;
                }
                if (e == 0)
                    lo = a;
                else
                    hi = a;
            }
            for (dsmm_idx i = lo; i < hi; i++) {
                for (dsmm_idx p = H->rowptr[i]; p < H->rowptr[i + 1]; p++) {
                    size_t col = H->colidx32 ? (size_t)H->colidx32[p] : (size_t)H->colidx[p];
                    size_t l0 = col * rowb / 64, l1 = (col * rowb + rowb - 1) / 64;
                    for (size_t l = l0; l <= l1; l++) {
                        int32_t x = (int32_t)l;
                        if (in[l]) { // unlink, then to the front
                            next[prev[x]] = next[x];
                            prev[next[x]] = prev[x];
                        } else {
                            misses += 1.0;
                            in[l] = 1;
                            if (++size > cap) { // evict the least recent
                                int32_t y = prev[head];
                                next[prev[y]] = head;
                                prev[head] = prev[y];
                                in[y] = 0;
                                size--;
                            }
                        }
                        next[x] = next[head];
                        prev[x] = head;
                        prev[next[head]] = x;
                        next[head] = x;
                    }
                }
            }
        }
    }
    free(prev);
    free(next);
    free(in);
    return misses;
}

#endif
