// src/comm/comm.h: internal header of the comm layer (MPI engine; serial stand-in without MPI).
#ifndef DSMM_COMM_H
#define DSMM_COMM_H

#include "base/base.h"
#if DSMM_HAVE_MPI
#include <mpi.h>
#endif

/* dsmmi_comm_agree: the maximum of local over all ranks (collective on ctx's communicator),
 * so a collective phase fails together (STYLE.md §4). Serial: returns local. */
dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local);

/* dsmmi_mpi_count: n as an MPI count; DSMM_ERR_ARG above INT_MAX (never truncated). */
dsmm_status dsmmi_mpi_count(dsmm_ctx *ctx, size_t n, int *count);

#if DSMM_HAVE_MPI
/* dsmmi_comm: the context's duplicated communicator (MPI_COMM_SELF for serial contexts). */
MPI_Comm dsmmi_comm(const dsmm_ctx *ctx);
#endif

#endif // DSMM_COMM_H
