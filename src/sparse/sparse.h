// src/sparse/sparse.h: internal header of the sparse layer (local formats and their tools).
#ifndef DSMM_SPARSE_H
#define DSMM_SPARSE_H

#include "base/base.h"

/* dsmmi_type_ok: t is one of DSMM_PATTERN, DSMM_FLOAT, DSMM_DOUBLE. */
bool dsmmi_type_ok(dsmm_type t);

/* dsmmi_dup_ok: dup is one of the dsmm_dup policies. */
bool dsmmi_dup_ok(dsmm_dup dup);

/* dsmmi_vals_convert: dst[k] = src[k] for k < n, converting the value type. A pattern source
 * gives ones; a pattern destination takes nothing (dst may be NULL). src and dst do not overlap
 * unless they are the same array of the same type. */
void dsmmi_vals_convert(void *dst, dsmm_type dtype, const void *src, dsmm_type stype, dsmm_idx n);

/* dsmmi_coo_to_csr: dsmm_coo_to_csr with the value type of the result chosen (converted from
 * T->type: pattern triples give ones, DOUBLE -> FLOAT rounds after merging in double) and the
 * first duplicate reported. dup_row/dup_col (may be NULL) receive the 0-based (i, j) of the
 * first duplicate in row-major order when DSMM_DUP_ERROR fails, else -1.
 * Duplicates of pattern triples collapse to one entry (value 1 when type has values) under
 * every policy but DSMM_DUP_ERROR. Entries outside the matrix give DSMM_ERR_FORMAT.
 * Result: sorted = 1, cap = T->nnz. */
dsmm_status dsmmi_coo_to_csr(dsmm_ctx *ctx, const dsmm_coo *T, dsmm_dup dup, dsmm_type type,
                             dsmm_csr **out, dsmm_idx *dup_row, dsmm_idx *dup_col);

/* Policy for dsmmi_rows_sort_merge that keeps duplicates (stable sort only). */
#define DSMMI_DUP_KEEP (-1)

/* dsmmi_rows_sort_merge: the engine behind coo_to_csr, sort_inplace and permute.
 * Row i's entries are (c1[k], v1[k]) for rowptr[i] <= k < rowptr[i+1] (v1 NULL: all ones).
 * Each row is sorted by column with a stable sort (insertion sort for short rows, bottom-up
 * merge sort ping-ponging with c0/v0 for long ones), then duplicates are merged by dup
 * (a dsmm_dup, or DSMMI_DUP_KEEP to keep them). The result goes to c0 and out_val (of
 * out_type; out_val NULL for DSMM_PATTERN), compacted, with rowptr rewritten and *nnz_out set.
 * c1 and v1 are clobbered. v0 is a double scratch of the same length, needed when v1 != NULL;
 * it may be out_val itself when out_type is DSMM_DOUBLE. *had_dups (may be NULL) tells whether
 * any row held a repeated column. Under DSMM_DUP_ERROR a duplicate fails with DSMM_ERR_FORMAT,
 * dup_row, dup_col (may be NULL) naming the first one (row-major), and the outputs are
 * unspecified. OpenMP over rows. */
dsmm_status dsmmi_rows_sort_merge(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx *rowptr, dsmm_idx *c1,
                                  double *v1, dsmm_idx *c0, double *v0, void *out_val,
                                  dsmm_type out_type, int dup, dsmm_idx *nnz_out, int *had_dups,
                                  dsmm_idx *dup_row, dsmm_idx *dup_col);

/* dsmmi_csr_rows_increasing: every row of A has strictly increasing columns (either width). */
bool dsmmi_csr_rows_increasing(const dsmm_csr *A);

/* dsmmi_csr_col_bits: the width of A's columns, 32 or 64 (64 when both arrays are NULL). */
static inline int dsmmi_csr_col_bits(const dsmm_csr *A)
{
    return A->colidx32 ? 32 : 64;
}

/* dsmmi_csr_need_cols64: DSMM_OK when A holds 64-bit columns (A->colidx32 == NULL), else
 * DSMM_ERR_UNSUPPORTED with "<fn>: 32-bit columns: call dsmm_csr_set_col_width(A, 64) first".
 * For operations that read or write A->colidx directly. */
dsmm_status dsmmi_csr_need_cols64(dsmm_ctx *ctx, const dsmm_csr *A, const char *fn);

/* dsmmi_equal_split: bounds[0..n] of an equal split of len into n parts, the first parts
 * taking the remainder. */
void dsmmi_equal_split(dsmm_idx len, int n, dsmm_idx *bounds);

/* dsmmi_csr_create_ex: dsmm_csr_create with the column width chosen (32 or 64; 32 needs
 * ncols <= INT32_MAX, else DSMM_ERR_ARG). */
dsmm_status dsmmi_csr_create_ex(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx cap,
                                dsmm_type type, int col_bits, dsmm_csr **out);

#endif // DSMM_SPARSE_H
