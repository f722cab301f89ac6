// placeholder until the row kernel lands
#include "kernels/kernels.h"
dsmm_status dsmmi_spmm_row(dsmm_ctx *ctx, const dsmmi_spmm_args *a, dsmm_spmm_info *info)
{
    return dsmmi_spmm_ref(ctx, a, info);
}
