// src/kernels/ref/spgemm_ref.c: TEMPORARY STUB (helper h1 writes the real one).
#include "kernels/kernels.h"

dsmm_status dsmmi_spgemm_ref(dsmm_ctx *ctx, const dsmmi_spgemm_args *a, dsmmi_spgemm_phase phase,
                             dsmm_csr **C, dsmm_spgemm_info *info)
{
    (void)a; (void)phase; (void)C; (void)info;
    return dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__, "ref: not yet");
}
