// src/comm/serial.c: the comm layer without MPI: one rank. Agreement is the local status, the
// grid is 1 x 1, broadcasts have no receivers, an exchange copies the part to self, and
// collectives of one rank return their input.
#include <string.h>

#include "comm/comm.h"

dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local)
{
    (void)ctx;
    return local;
}

bool dsmmi_comm_funneled(void)
{
    return true;
}

int dsmm_ctx_workgroup(const dsmm_ctx *ctx, int r)
{
    (void)ctx;
    (void)r;
    return 0;
}

dsmm_status dsmmi_grid_get(dsmm_ctx *ctx, int pr, int pc, const dsmmi_grid **g)
{
    static const dsmmi_grid one = {1, 1, 0, 0, NULL, NULL};
    dsmm_status st = dsmmi_grid_resolve(ctx, pr, pc, &pr, &pc);
    *g = st == DSMM_OK ? &one : NULL;
    return st;
}

dsmm_status dsmmi_bcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                        size_t bytes)
{
    (void)ctx, (void)g, (void)dir, (void)root, (void)buf, (void)bytes;
    return DSMM_OK;
}

dsmm_status dsmmi_ibcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                         size_t bytes, dsmmi_req *r)
{
    r->reqs = NULL;
    r->n = r->cap = 0;
    return dsmmi_bcast(ctx, g, dir, root, buf, bytes);
}

dsmm_status dsmmi_req_wait(dsmm_ctx *ctx, dsmmi_req *r)
{
    (void)ctx;
    r->reqs = NULL;
    r->n = r->cap = 0;
    return DSMM_OK;
}

dsmm_status dsmmi_exchange(dsmm_ctx *ctx, const char *sendbuf, const size_t *scount,
                           const size_t *sdispl, char **recv, size_t *rcount)
{
    dsmm_status st = DSMM_OK;
    *recv = NULL;
    rcount[0] = scount[0];
    char *b = dsmmi_malloc(ctx, scount[0] ? scount[0] : 1, 1);
    DSMM_CHECK(ctx, b != NULL, DSMM_ERR_NOMEM, "exchange: %zu bytes", scount[0]);
    if (scount[0]) memcpy(b, sendbuf + sdispl[0], scount[0]);
    *recv = b;
cleanup:
    return st;
}

dsmm_status dsmmi_allreduce_i64(dsmm_ctx *ctx, int64_t *v, int n, char op)
{
    (void)ctx, (void)v, (void)n, (void)op;
    return DSMM_OK;
}

dsmm_status dsmmi_allreduce_f64(dsmm_ctx *ctx, double *v, int n, char op)
{
    (void)ctx, (void)v, (void)n, (void)op;
    return DSMM_OK;
}

dsmm_status dsmmi_allgather_i64(dsmm_ctx *ctx, const int64_t *in, int n, int64_t *out)
{
    (void)ctx;
    if (n > 0) memcpy(out, in, (size_t)n * sizeof *in);
    return DSMM_OK;
}

dsmm_status dsmmi_allgather_f64(dsmm_ctx *ctx, const double *in, int n, double *out)
{
    (void)ctx;
    if (n > 0) memcpy(out, in, (size_t)n * sizeof *in);
    return DSMM_OK;
}

dsmm_status dsmmi_bcast_ctl(dsmm_ctx *ctx, int root, void *buf, size_t bytes)
{
    (void)ctx, (void)root, (void)buf, (void)bytes;
    return DSMM_OK;
}

dsmm_status dsmmi_barrier(dsmm_ctx *ctx, double *waited)
{
    (void)ctx;
    if (waited) *waited = 0;
    return DSMM_OK;
}

dsmm_status dsmmi_comm_progress(dsmm_ctx *ctx)
{
    (void)ctx;
    return DSMM_OK;
}

dsmm_status dsmmi_isend(dsmm_ctx *ctx, const void *buf, size_t bytes, int peer, int tag,
                        dsmmi_req *r)
{
    (void)buf, (void)bytes, (void)tag, (void)r;
    return dsmmi_error(ctx, DSMM_ERR_INTERNAL, __FILE__, __LINE__, "send to rank %d of 1", peer);
}

dsmm_status dsmmi_irecv(dsmm_ctx *ctx, void *buf, size_t bytes, int peer, int tag, dsmmi_req *r)
{
    (void)buf, (void)bytes, (void)tag, (void)r;
    return dsmmi_error(ctx, DSMM_ERR_INTERNAL, __FILE__, __LINE__, "receive from rank %d of 1",
                       peer);
}

dsmm_status dsmmi_alltoallv(dsmm_ctx *ctx, const void *sendbuf, const size_t *scount,
                            const size_t *sdispl, void *recvbuf, const size_t *rcount,
                            const size_t *rdispl)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, scount[0] == rcount[0], DSMM_ERR_INTERNAL, "all-to-all: %zu sent, %zu expected",
               scount[0], rcount[0]);
    if (scount[0])
        memmove((char *)recvbuf + rdispl[0], (const char *)sendbuf + sdispl[0], scount[0]);
cleanup:
    return st;
}

struct dsmmi_nbr {
    int unused;
};

dsmm_status dsmmi_nbr_create(dsmm_ctx *ctx, int nsrc, const int *sources, int ndst,
                             const int *dests, dsmmi_nbr **out)
{
    (void)sources, (void)dests;
    dsmm_status st = DSMM_OK;
    *out = NULL;
    DSMM_CHECK(ctx, nsrc == 0 && ndst == 0, DSMM_ERR_INTERNAL, "neighbours of a lone rank");
    *out = dsmmi_calloc(ctx, 1, sizeof **out);
    DSMM_CHECK(ctx, *out != NULL, DSMM_ERR_NOMEM, "neighbour communicator");
cleanup:
    return st;
}

dsmm_status dsmmi_nbr_alltoallv(dsmm_ctx *ctx, dsmmi_nbr *nb, const void *sendbuf,
                                const size_t *scount, const size_t *sdispl, void *recvbuf,
                                const size_t *rcount, const size_t *rdispl)
{
    (void)ctx, (void)nb, (void)sendbuf, (void)scount, (void)sdispl, (void)recvbuf, (void)rcount,
        (void)rdispl;
    return DSMM_OK; // no neighbours
}

void dsmmi_nbr_free(dsmm_ctx *ctx, dsmmi_nbr **nb)
{
    if (nb && *nb) *nb = dsmmi_free(ctx, *nb);
}

struct dsmmi_shm {
    void *base;
    size_t bytes;
};

dsmm_status dsmmi_shm_create(dsmm_ctx *ctx, size_t bytes, dsmmi_shm **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_shm *w = dsmmi_calloc(ctx, 1, sizeof *w);
    *out = NULL;
    DSMM_CHECK(ctx, w != NULL, DSMM_ERR_NOMEM, "shared window");
    w->base = dsmmi_malloc(ctx, bytes ? bytes : 8, 1);
    DSMM_CHECK(ctx, w->base != NULL, DSMM_ERR_NOMEM, "shared window of %zu bytes", bytes);
    w->bytes = bytes;
    *out = w;
    w = NULL;
cleanup:
    dsmmi_shm_free(ctx, &w);
    return st;
}

void *dsmmi_shm_base(const dsmmi_shm *w, int r, size_t *bytes)
{
    if (bytes) *bytes = r == 0 ? w->bytes : 0;
    return r == 0 ? w->base : NULL;
}

dsmm_status dsmmi_shm_sync(dsmm_ctx *ctx, dsmmi_shm *w)
{
    (void)ctx, (void)w;
    return DSMM_OK;
}

void dsmmi_shm_free(dsmm_ctx *ctx, dsmmi_shm **w)
{
    if (w == NULL || *w == NULL) return;
    dsmmi_free(ctx, (*w)->base);
    *w = dsmmi_free(ctx, *w);
}

int dsmm_mpi_cuda_aware(void)
{
    return 0;
}
