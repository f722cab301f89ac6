// src/comm/serial.c: the comm layer without MPI: one rank, agreement is the local status.
#include <limits.h>

#include "comm/comm.h"

dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local)
{
    (void)ctx;
    return local;
}

dsmm_status dsmmi_mpi_count(dsmm_ctx *ctx, size_t n, int *count)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, n <= (size_t)INT_MAX, DSMM_ERR_ARG,
               "message of %zu elements exceeds MPI's int count; split it", n);
    *count = (int)n;
cleanup:
    return st;
}
