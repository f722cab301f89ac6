// src/comm/mpi_p2p.c: the data movements of the 1D CoLa SpMM (dist/cola*.c): non-blocking
// point-to-point messages, an all-to-all whose counts both sides know (MPI_Alltoallv), the
// same over a distributed-graph communicator of the actual partners (MPI_Neighbor_alltoallv),
// and windows of memory shared by a workgroup (MPI_Win_allocate_shared). Every byte is
// counted in the context's traffic counters by link class, like dsmmi_exchange.
#include <limits.h>
#include <mpi.h>
#include <string.h>

#include "comm/comm.h"

static void count(dsmm_ctx *ctx, int peer, size_t bytes, int nmsgs, int sent)
{
    dsmm_traffic *t = dsmmi_traffic(ctx);
    int l = dsmmi_link(ctx, ctx->rank, peer);
    if (sent) {
        t->msgs_sent[l] += nmsgs;
        t->bytes_sent[l] += (int64_t)bytes;
    } else {
        t->msgs_recv[l] += nmsgs;
        t->bytes_recv[l] += (int64_t)bytes;
    }
}

// Room for `more` requests in r (the array grows geometrically).
static dsmm_status req_room(dsmm_ctx *ctx, dsmmi_req *r, size_t more)
{
    dsmm_status st = DSMM_OK;
    size_t cap = r->reqs ? (size_t)r->cap : 0, need = (size_t)r->n + more;
    if (need <= cap) return DSMM_OK;
    DSMM_CHECK(ctx, need <= INT_MAX, DSMM_ERR_ARG, "%zu requests in flight", need);
    size_t ncap = 16;
    while (ncap < need) ncap = ncap > INT_MAX / 2 ? INT_MAX : ncap << 1;
    MPI_Request *p = dsmmi_realloc(ctx, r->reqs, ncap, sizeof *p);
    DSMM_CHECK(ctx, p != NULL, DSMM_ERR_NOMEM, "%zu requests", ncap);
    r->reqs = p;
    r->cap = (int)ncap;
cleanup:
    return st;
}

static dsmm_status post(dsmm_ctx *ctx, void *buf, size_t bytes, int peer, int tag, dsmmi_req *r,
                        int send)
{
    dsmm_status st = DSMM_OK;
    if (bytes == 0) return DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx), nchunks = (bytes + chunk - 1) / chunk;
    DSMM_TRY(req_room(ctx, r, nchunks));
    MPI_Comm comm = dsmmi_comm(ctx);
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * chunk, n = bytes - off < chunk ? bytes - off : chunk;
        MPI_Request *q = (MPI_Request *)r->reqs + r->n;
        if (send)
            DSMM_MPI_TRY(ctx, MPI_Isend((char *)buf + off, (int)n, MPI_BYTE, peer, tag, comm, q));
        else
            DSMM_MPI_TRY(ctx, MPI_Irecv((char *)buf + off, (int)n, MPI_BYTE, peer, tag, comm, q));
        r->n++;
    }
    count(ctx, peer, bytes, (int)nchunks, send);
cleanup:
    return st;
}

dsmm_status dsmmi_isend(dsmm_ctx *ctx, const void *buf, size_t bytes, int peer, int tag,
                        dsmmi_req *r)
{
    return post(ctx, (void *)buf, bytes, peer, tag, r, 1);
}

dsmm_status dsmmi_irecv(dsmm_ctx *ctx, void *buf, size_t bytes, int peer, int tag, dsmmi_req *r)
{
    return post(ctx, buf, bytes, peer, tag, r, 0);
}

// int counts and displacements of n peers; DSMM_ERR_ARG past INT_MAX.
static dsmm_status int_counts(dsmm_ctx *ctx, int n, const size_t *cnt, const size_t *dsp, int *ic,
                              int *id)
{
    dsmm_status st = DSMM_OK;
    for (int p = 0; p < n; p++) {
        DSMM_CHECK(ctx, cnt[p] <= INT_MAX && dsp[p] <= INT_MAX, DSMM_ERR_ARG,
                   "all-to-all part of %zu bytes at offset %zu exceeds MPI's int count", cnt[p],
                   dsp[p]);
        ic[p] = (int)cnt[p];
        id[p] = (int)dsp[p];
    }
cleanup:
    return st;
}

dsmm_status dsmmi_alltoallv(dsmm_ctx *ctx, const void *sendbuf, const size_t *scount,
                            const size_t *sdispl, void *recvbuf, const size_t *rcount,
                            const size_t *rdispl)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = ctx->size;
    int *ib = dsmmi_malloc(ctx, 4 * (size_t)P, sizeof *ib);
    if (ib == NULL)
        local = DSMM_ERR_NOMEM;
    else {
        local = int_counts(ctx, P, scount, sdispl, ib, ib + P);
        if (local == DSMM_OK) local = int_counts(ctx, P, rcount, rdispl, ib + 2 * P, ib + 3 * P);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_MPI_TRY(ctx, MPI_Alltoallv(sendbuf, ib, ib + P, MPI_BYTE, recvbuf, ib + 2 * P, ib + 3 * P,
                                    MPI_BYTE, dsmmi_comm(ctx)));
    for (int p = 0; p < P; p++) {
        if (p == ctx->rank) continue;
        if (scount[p]) count(ctx, p, scount[p], 1, 1);
        if (rcount[p]) count(ctx, p, rcount[p], 1, 0);
    }
cleanup:
    dsmmi_free(ctx, ib);
    return st;
}

struct dsmmi_nbr {
    MPI_Comm comm;
    int nsrc, ndst;
    int *src, *dst; // context ranks
};

dsmm_status dsmmi_nbr_create(dsmm_ctx *ctx, int nsrc, const int *sources, int ndst,
                             const int *dests, dsmmi_nbr **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    *out = NULL;
    dsmmi_nbr *nb = dsmmi_calloc(ctx, 1, sizeof *nb);
    if (nb != NULL) {
        nb->comm = MPI_COMM_NULL;
        nb->src = dsmmi_malloc(ctx, (size_t)nsrc + 1, sizeof *nb->src);
        nb->dst = dsmmi_malloc(ctx, (size_t)ndst + 1, sizeof *nb->dst);
    }
    if (nb == NULL || nb->src == NULL || nb->dst == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "neighbour lists");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    nb->nsrc = nsrc;
    nb->ndst = ndst;
    if (nsrc) memcpy(nb->src, sources, (size_t)nsrc * sizeof *sources);
    if (ndst) memcpy(nb->dst, dests, (size_t)ndst * sizeof *dests);
// Open MPI's MPI_UNWEIGHTED is a sentinel address gcc takes for an empty array.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    DSMM_MPI_TRY(ctx, MPI_Dist_graph_create_adjacent(dsmmi_comm(ctx), nsrc, nb->src, MPI_UNWEIGHTED,
                                                     ndst, nb->dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                                     0, &nb->comm));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    *out = nb;
    nb = NULL;
cleanup:
    dsmmi_nbr_free(ctx, &nb);
    return st;
}

dsmm_status dsmmi_nbr_alltoallv(dsmm_ctx *ctx, dsmmi_nbr *nb, const void *sendbuf,
                                const size_t *scount, const size_t *sdispl, void *recvbuf,
                                const size_t *rcount, const size_t *rdispl)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int ns = nb->nsrc, nd = nb->ndst;
    int *ib = dsmmi_malloc(ctx, 2 * (size_t)(ns + nd) + 1, sizeof *ib);
    if (ib == NULL)
        local = DSMM_ERR_NOMEM;
    else {
        local = int_counts(ctx, nd, scount, sdispl, ib, ib + nd);
        if (local == DSMM_OK)
            local = int_counts(ctx, ns, rcount, rdispl, ib + 2 * nd, ib + 2 * nd + ns);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_MPI_TRY(ctx, MPI_Neighbor_alltoallv(sendbuf, ib, ib + nd, MPI_BYTE, recvbuf, ib + 2 * nd,
                                             ib + 2 * nd + ns, MPI_BYTE, nb->comm));
    for (int d = 0; d < nd; d++)
        if (nb->dst[d] != ctx->rank && scount[d]) count(ctx, nb->dst[d], scount[d], 1, 1);
    for (int s = 0; s < ns; s++)
        if (nb->src[s] != ctx->rank && rcount[s]) count(ctx, nb->src[s], rcount[s], 1, 0);
cleanup:
    dsmmi_free(ctx, ib);
    return st;
}

void dsmmi_nbr_free(dsmm_ctx *ctx, dsmmi_nbr **nb)
{
    if (nb == NULL || *nb == NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && (*nb)->comm != MPI_COMM_NULL) MPI_Comm_free(&(*nb)->comm);
    dsmmi_free(ctx, (*nb)->src);
    dsmmi_free(ctx, (*nb)->dst);
    *nb = dsmmi_free(ctx, *nb);
}

struct dsmmi_shm {
    MPI_Comm wg;  // this rank's workgroup
    MPI_Win win;  // shared, locked for all members for its whole life
    int nmem;     // members
    int *members; // context ranks of the members, ascending
    void **base;  // their segments
    size_t *bytes;
    int locked;
};

dsmm_status dsmmi_shm_create(dsmm_ctx *ctx, size_t bytes, dsmmi_shm **out)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    MPI_Comm node = MPI_COMM_NULL;
    *out = NULL;
    dsmmi_shm *w = dsmmi_calloc(ctx, 1, sizeof *w);
    if (w == NULL)
        local = DSMM_ERR_NOMEM;
    else {
        w->wg = MPI_COMM_NULL;
        w->win = MPI_WIN_NULL;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    int me = ctx->rank;
    DSMM_MPI_TRY(ctx, MPI_Comm_split(dsmmi_comm(ctx), dsmm_ctx_workgroup(ctx, me), me, &w->wg));
    DSMM_MPI_TRY(ctx, MPI_Comm_size(w->wg, &w->nmem));
    int nnode = 0;
    DSMM_MPI_TRY(ctx, MPI_Comm_split_type(w->wg, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    DSMM_MPI_TRY(ctx, MPI_Comm_size(node, &nnode));
    if (nnode != w->nmem)
        local = dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "workgroup of rank %d: its %d ranks do not share memory (only %d "
                            "do); make workgroups of ranks on one node",
                            me, w->nmem, nnode);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    w->members = dsmmi_malloc(ctx, (size_t)w->nmem, sizeof *w->members);
    w->base = dsmmi_calloc(ctx, (size_t)w->nmem, sizeof *w->base);
    w->bytes = dsmmi_calloc(ctx, (size_t)w->nmem, sizeof *w->bytes);
    local = w->members && w->base && w->bytes ? DSMM_OK : DSMM_ERR_NOMEM;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_MPI_TRY(ctx, MPI_Allgather(&me, 1, MPI_INT, w->members, 1, MPI_INT, w->wg));
    void *mine = NULL;
    // Each segment asks for DSMMI_WIN_ALIGN - 1 bytes more and starts at its first aligned
    // byte; every member finds that byte from the segment's address, without communication.
    DSMM_MPI_TRY(ctx, MPI_Win_allocate_shared((MPI_Aint)(bytes + DSMMI_WIN_ALIGN - 1), 1,
                                              MPI_INFO_NULL, w->wg, &mine, &w->win));
    for (int m = 0; m < w->nmem; m++) {
        MPI_Aint sz = 0;
        int du = 1;
        char *seg = NULL;
        DSMM_MPI_TRY(ctx, MPI_Win_shared_query(w->win, m, &sz, &du, &seg));
        size_t skip = dsmmi_align_skip(seg, DSMMI_WIN_ALIGN);
        w->base[m] = seg + skip;
        w->bytes[m] = (size_t)sz - (DSMMI_WIN_ALIGN - 1);
    }
    DSMM_MPI_TRY(ctx, MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
    w->locked = 1;
    *out = w;
    w = NULL;
cleanup:
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    dsmmi_shm_free(ctx, &w);
    return st;
}

void *dsmmi_shm_base(const dsmmi_shm *w, int r, size_t *bytes)
{
    for (int m = 0; m < w->nmem; m++)
        if (w->members[m] == r) {
            if (bytes) *bytes = w->bytes[m];
            return w->base[m];
        }
    if (bytes) *bytes = 0;
    return NULL;
}

dsmm_status dsmmi_shm_sync(dsmm_ctx *ctx, dsmmi_shm *w)
{
    dsmm_status st = DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Win_sync(w->win));
    DSMM_MPI_TRY(ctx, MPI_Barrier(w->wg));
    DSMM_MPI_TRY(ctx, MPI_Win_sync(w->win));
cleanup:
    return st;
}

void dsmmi_shm_free(dsmm_ctx *ctx, dsmmi_shm **w)
{
    if (w == NULL || *w == NULL) return;
    dsmmi_shm *s = *w;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        if (s->win != MPI_WIN_NULL) {
            if (s->locked) MPI_Win_unlock_all(s->win);
            MPI_Win_free(&s->win);
        }
        if (s->wg != MPI_COMM_NULL) MPI_Comm_free(&s->wg);
    }
    dsmmi_free(ctx, s->members);
    dsmmi_free(ctx, s->base);
    dsmmi_free(ctx, s->bytes);
    *w = dsmmi_free(ctx, s);
}
