// placeholder until the col kernel lands
#include "kernels/kernels.h"
dsmm_status dsmmi_spmm_col(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    return dsmmi_spmm_ref(ctx, a, info);
}
