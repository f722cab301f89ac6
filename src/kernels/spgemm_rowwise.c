// src/kernels/spgemm_rowwise.c: TEMPORARY STUB (lead is writing the real driver).
#include "kernels/kernels.h"

dsmm_status dsmmi_spgemm_rowwise(dsmm_ctx *ctx, const dsmmi_spgemm_args *a,
                                 dsmmi_spgemm_phase phase, dsmm_csr **C, dsmm_spgemm_info *info)
{
    return dsmmi_spgemm_ref(ctx, a, phase, C, info);
}

dsmm_status dsmmi_spgemm_count(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B,
                               dsmm_idx *row_nnz, dsmm_idx *total)
{
    (void)A; (void)B; (void)row_nnz; (void)total;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "count: not yet");
}
