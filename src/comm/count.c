// src/comm/count.c: conversion of sizes to MPI's int counts, the same with and without MPI.
#include <limits.h>

#include "comm/comm.h"

dsmm_status dsmmi_mpi_count(dsmm_ctx *ctx, size_t n, int *count)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, n <= (size_t)INT_MAX, DSMM_ERR_ARG,
               "message of %zu elements exceeds MPI's int count; split it", n);
    *count = (int)n;
cleanup:
    return st;
}
