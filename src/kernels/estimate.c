// src/kernels/estimate.c: TEMPORARY STUB (helper h2 writes the real one).
#include "kernels/kernels.h"

dsmm_status dsmm_spgemm_estimate(dsmm_ctx *ctx, const dsmm_csr *A, const dsmm_csr *B, int keys,
                                 uint64_t seed, double *row_nnz, dsmm_spgemm_estimate_result *out)
{
    (void)A; (void)B; (void)keys; (void)seed; (void)row_nnz; (void)out;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "estimate: not yet");
}
