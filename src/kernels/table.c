// src/kernels/table.c: the local-multiply tables (STYLE.md §1): which kernel runs each
// dsmm_spgemm_alg and each dsmm_spmm_alg. They start with the reference kernel in every CPU
// slot; the row-wise SpGEMM driver (hash, heap, dense accumulators and AUTO's per-row mix) and
// the row- and column-wise SpMM kernels replace them; the GPU slots stay empty until the gpu
// layer fills them with dsmmi_spgemm_kernel_set / dsmmi_spmm_kernel_set.
#include "kernels/kernels.h"

// clang-format off
static dsmmi_spgemm_fn spgemm_table[DSMM_SPGEMM_ALG_COUNT] = {
    [DSMM_SPGEMM_AUTO]  = dsmmi_spgemm_rowwise,
    [DSMM_SPGEMM_HASH]  = dsmmi_spgemm_rowwise,
    [DSMM_SPGEMM_HEAP]  = dsmmi_spgemm_rowwise,
    [DSMM_SPGEMM_DENSE] = dsmmi_spgemm_rowwise,
    [DSMM_SPGEMM_REF]   = dsmmi_spgemm_ref,
    [DSMM_SPGEMM_GPU]   = NULL,
};
// clang-format on

dsmmi_spgemm_fn dsmmi_spgemm_kernel(dsmm_spgemm_alg alg)
{
    if ((int)alg < 0 || alg >= DSMM_SPGEMM_ALG_COUNT) return NULL;
    return spgemm_table[alg];
}

void dsmmi_spgemm_kernel_set(dsmm_spgemm_alg alg, dsmmi_spgemm_fn fn)
{
    if ((int)alg >= 0 && alg < DSMM_SPGEMM_ALG_COUNT) spgemm_table[alg] = fn;
}

// clang-format off
static dsmmi_spmm_fn spmm_table[DSMM_SPMM_ALG_COUNT] = {
    [DSMM_SPMM_AUTO] = NULL, // resolved to ROW or COL by dsmmi_local_spmm
    [DSMM_SPMM_ROW]  = dsmmi_spmm_row,
    [DSMM_SPMM_COL]  = dsmmi_spmm_col,
    [DSMM_SPMM_REF]  = dsmmi_spmm_ref,
    [DSMM_SPMM_GPU]  = NULL,
};
// clang-format on

dsmmi_spmm_fn dsmmi_spmm_kernel(dsmm_spmm_alg alg)
{
    if ((int)alg < 0 || alg >= DSMM_SPMM_ALG_COUNT) return NULL;
    return spmm_table[alg];
}

void dsmmi_spmm_kernel_set(dsmm_spmm_alg alg, dsmmi_spmm_fn fn)
{
    if ((int)alg >= 0 && alg < DSMM_SPMM_ALG_COUNT) spmm_table[alg] = fn;
}
