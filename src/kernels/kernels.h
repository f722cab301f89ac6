// src/kernels/kernels.h: internal header of the kernels layer: the local-multiply table
// (STYLE.md §1) and what the SpGEMM kernels share.
#ifndef DSMM_KERNELS_H
#define DSMM_KERNELS_H

#include "sparse/sparse.h"

/* What a table entry is asked to do. */
typedef enum dsmmi_spgemm_phase {
    DSMMI_SPGEMM_FULL = 0, // *C new: pattern and values
    DSMMI_SPGEMM_SYMBOLIC, // *C new: pattern, values allocated and zero (none for PATTERN)
    DSMMI_SPGEMM_NUMERIC   // *C given: its values recomputed for its pattern
} dsmmi_spgemm_phase;

/* One local product, checked and normalised by dsmmi_local_spgemm before a kernel sees it:
 * A->ncols == B->nrows (B already transposed when opts asked), M NULL or nrows(A) x ncols(B),
 * sr's value needs met (A and B hold values unless sr == DSMM_PLUS_PAIR), type resolved to
 * PATTERN/FLOAT/DOUBLE, col_bits 32 only when ncols(B) <= INT32_MAX. A, B and M may hold
 * 32- or 64-bit columns (dsmm_csr_col) and any value type; M's values are ignored and its
 * rows need not be sorted. */
typedef struct dsmmi_spgemm_args {
    const dsmm_csr *A, *B, *M;
    dsmm_semiring sr;
    dsmm_spgemm_alg alg; // the entry's own name (AUTO/HASH/HEAP/DENSE share one driver)
    dsmm_type type;      // value type of C
    int col_bits;        // 32 or 64
    int sorted;          // 1: rows of C must come out sorted
} dsmmi_spgemm_args;

/* A table entry. FULL and SYMBOLIC: *C is NULL on entry, set only on success. NUMERIC: *C is
 * the caller's matrix (type != PATTERN, pattern from SYMBOLIC of the same args); a product
 * outside its pattern, or an entry of the pattern that no product reaches, fails with
 * DSMM_ERR_ARG. info (never NULL) is zeroed by the caller; the kernel fills flops, nnz,
 * rows_*, sorted, threads, seconds_symbolic/numeric and workspace_bytes. */
typedef dsmm_status (*dsmmi_spgemm_fn)(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                       dsmmi_spgemm_phase phase, dsmm_csr **C,
                                       dsmm_spgemm_info *info);

/* The table: starts with the reference kernel in every CPU slot (src/kernels/table.c);
 * optimised kernels replace entries at build time; GPU is NULL until the gpu layer fills it. */
dsmmi_spgemm_fn dsmmi_spgemm_kernel(dsmm_spgemm_alg alg);
void dsmmi_spgemm_kernel_set(dsmm_spgemm_alg alg, dsmmi_spgemm_fn fn);

/* dsmmi_local_spgemm: the one local multiply every layer above calls: checks and normalises
 * (dims, semiring vs pattern inputs, mask shape, transpose_b, type, col_bits), looks the
 * kernel up and runs it, filling info (may be NULL). phase as for a table entry. */
dsmm_status dsmmi_local_spgemm(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               const dsmm_spgemm_opts *opts, dsmmi_spgemm_phase phase,
                               dsmm_csr **C, dsmm_spgemm_info *info);

/* Kernels. */
dsmm_status dsmmi_spgemm_ref(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info);
dsmm_status dsmmi_spgemm_rowwise(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                 dsmmi_spgemm_phase phase, dsmm_csr **C, dsmm_spgemm_info *info);

/* dsmmi_spgemm_row_flops: flops[i] = sum over A(i,k) of nnz(B(k,:)) for each row i, and the
 * total in *total (may be NULL). flops has nrows(A) entries. OpenMP over rows. */
void dsmmi_spgemm_row_flops(const dsmm_csr *A, const dsmm_csr *B, dsmm_idx *flops,
                            dsmm_idx *total);

/* dsmmi_spgemm_count: exact nnz of each row of A * B (row_nnz, nrows(A) entries, may be NULL)
 * and in total, with the fast symbolic count of the row-wise kernel (no mask, no values).
 * Errors: DSMM_ERR_DIM; DSMM_ERR_NOMEM. */
dsmm_status dsmmi_spgemm_count(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               dsmm_idx *row_nnz, dsmm_idx *total);

#endif // DSMM_KERNELS_H
