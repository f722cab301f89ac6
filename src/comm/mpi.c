// src/comm/mpi.c: MPI contexts: a duplicated communicator per context (PETSc's
// PetscCommDuplicate lesson: dsmm's messages never meet the user's tags), and status agreement.
#include <mpi.h>
#include <stdlib.h>

#include "comm/comm.h"

typedef struct comm_state {
    MPI_Comm comm;
} comm_state;

static void comm_free(dsmm_ctx *ctx)
{
    comm_state *cs = ctx->comm;
    if (cs == NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && cs->comm != MPI_COMM_NULL) MPI_Comm_free(&cs->comm);
    free(cs); // part of the context itself, like the context struct: outside the accounting
    ctx->comm = NULL;
}

dsmm_status dsmm_ctx_create_mpi(MPI_Comm comm, dsmm_ctx **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = NULL;
    comm_state *cs = NULL;
    if (out == NULL) return DSMM_ERR_ARG;
    *out = NULL;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) return DSMM_ERR_MPI;
    DSMM_TRY(dsmm_ctx_create(&ctx));
    cs = calloc(1, sizeof *cs);
    DSMM_CHECK(ctx, cs != NULL, DSMM_ERR_NOMEM, "communicator state");
    cs->comm = MPI_COMM_NULL;
    ctx->comm = cs;
    ctx->comm_free = comm_free;
    cs = NULL;
    comm_state *c = ctx->comm;
    DSMM_MPI_TRY(ctx, MPI_Comm_dup(comm, &c->comm));
    DSMM_MPI_TRY(ctx, MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
    DSMM_MPI_TRY(ctx, MPI_Comm_rank(c->comm, &ctx->rank));
    DSMM_MPI_TRY(ctx, MPI_Comm_size(c->comm, &ctx->size));
    *out = ctx;
    ctx = NULL;
cleanup:
    free(cs);
    dsmm_ctx_destroy(&ctx);
    return st;
}

MPI_Comm dsmmi_comm(const dsmm_ctx *ctx)
{
    const comm_state *cs = dsmmi_ctx_ok(ctx) ? ctx->comm : NULL;
    return cs ? cs->comm : MPI_COMM_SELF;
}

dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local)
{
    dsmm_status st = DSMM_OK;
    if (!dsmmi_ctx_ok(ctx) || ctx->comm == NULL) return local;
    int in = (int)local, out = 0;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, dsmmi_comm(ctx)));
    if (out != DSMM_OK && local == DSMM_OK)
        DSMM_FAIL(ctx, (dsmm_status)out, "another rank failed with %s",
                  dsmm_status_name((dsmm_status)out));
    st = (dsmm_status)out;
cleanup:
    return st;
}
