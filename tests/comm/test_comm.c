// tests/comm/test_comm.c: MPI contexts on 1..4 ranks: duplicated communicator, rank/size,
// collective status agreement (one failing rank makes every rank fail with its message), count
// conversion.
#include <mpi.h>
#include <stdio.h>

#include "comm/comm.h"
#include "check.h"

static int test_ctx_rank_size(void)
{
    dsmm_ctx *ctx = NULL;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(ctx, dsmm_ctx_create_mpi(MPI_COMM_WORLD, &ctx));
    CHECK_EQ_IDX(dsmm_ctx_rank(ctx), rank);
    CHECK_EQ_IDX(dsmm_ctx_size(ctx), size);
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(dsmmi_comm(ctx), MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_CONGRUENT); // a duplicate, not the user's communicator itself
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_agree(void)
{
    dsmm_ctx *ctx = NULL;
    CHECK_OK(ctx, dsmm_ctx_create_mpi(MPI_COMM_WORLD, &ctx));
    dsmm_ctx_set_log(ctx, DSMM_LOG_ERROR, NULL, NULL);
    int size = dsmm_ctx_size(ctx), rank = dsmm_ctx_rank(ctx);
    CHECK_EQ_IDX(dsmmi_comm_agree(ctx, DSMM_OK), DSMM_OK);
    // The last rank fails; every rank must see the failure with the failing rank's message.
    dsmm_status local = DSMM_OK;
    if (rank == size - 1)
        local = dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__, "graph.mtx:17: bad line");
    dsmm_status st = dsmmi_comm_agree(ctx, local);
    CHECK_EQ_IDX(st, DSMM_ERR_IO);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "graph.mtx:17: bad line");
    if (size > 1) {
        char want[64];
        snprintf(want, sizeof want, "DSMM_ERR_IO: rank %d: graph.mtx", size - 1);
        CHECK_CONTAINS(dsmm_ctx_last_error(ctx), want);
    }
    dsmm_ctx_clear_error(ctx);
    // The maximum status wins when several ranks fail differently.
    local = rank == 0 ? DSMM_ERR_ARG : DSMM_ERR_NOMEM;
    st = dsmmi_comm_agree(ctx, local);
    CHECK_EQ_IDX(st, size > 1 ? DSMM_ERR_NOMEM : DSMM_ERR_ARG);
    if (size > 1) CHECK_EQ_IDX(dsmm_ctx_last_status(ctx), st); // one rank: local stays as is
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int test_mpi_count(void)
{
    dsmm_ctx *ctx = NULL;
    int c = -1;
    CHECK_OK(ctx, dsmm_ctx_create_mpi(MPI_COMM_WORLD, &ctx));
    CHECK_OK(ctx, dsmmi_mpi_count(ctx, 12345, &c));
    CHECK_EQ_IDX(c, 12345);
    CHECK_ST(ctx, dsmmi_mpi_count(ctx, (size_t)1 << 31, &c), DSMM_ERR_ARG);
    CHECK_CONTAINS(dsmm_ctx_last_error(ctx), "exceeds MPI's int count");
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static const test_case tests[] = {TEST(test_ctx_rank_size), TEST(test_agree),
                                      TEST(test_mpi_count)};
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 && freopen("/dev/null", "w", stdout) == NULL) return 1; // rank 0 reports
    int rc = test_main(1, argv, tests, sizeof tests / sizeof tests[0]);
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}
