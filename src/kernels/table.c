// src/kernels/table.c: the local-multiply table (STYLE.md §1): which kernel runs each
// dsmm_spgemm_alg. It starts with the reference kernel in every CPU slot; the row-wise driver
// (hash, heap, dense accumulators and AUTO's per-row mix) replaces them; the GPU slot stays
// empty until the gpu layer fills it with dsmmi_spgemm_kernel_set.
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
