// src/comm/mpi.c: MPI contexts: a duplicated communicator per context (PETSc's
// PetscCommDuplicate lesson: dsmm's messages never meet the user's tags), workgroups from
// MPI_Comm_split_type(SHARED) or an emulated size, traffic counters, status agreement that
// carries the failing rank's message, process grids with row/column communicators, and the
// counted data movements (chunked so no message exceeds MPI's int count).
#include <limits.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

#define MAX_GRIDS 8

typedef struct grid_entry {
    dsmmi_grid g;
    MPI_Comm row, col;
} grid_entry;

typedef struct comm_state {
    MPI_Comm comm;
    int *node_wg; // workgroup of each rank from the shared-memory split
    grid_entry *grids[MAX_GRIDS];
    int ngrids;
} comm_state;

static void comm_free(dsmm_ctx *ctx)
{
    comm_state *cs = ctx->comm;
    if (cs == NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    for (int i = 0; i < cs->ngrids; i++) {
        grid_entry *e = cs->grids[i];
        if (!finalized) {
            if (e->row != MPI_COMM_NULL) MPI_Comm_free(&e->row);
            if (e->col != MPI_COMM_NULL) MPI_Comm_free(&e->col);
        }
        free(e);
    }
    if (!finalized && cs->comm != MPI_COMM_NULL) MPI_Comm_free(&cs->comm);
    free(cs->node_wg);
    free(cs); // part of the context itself, like the context struct: outside the accounting
    ctx->comm = NULL;
}

// Workgroups of the shared-memory split: each rank's group is named by its lowest rank.
static dsmm_status node_workgroups(dsmm_ctx *ctx, comm_state *cs)
{
    dsmm_status st = DSMM_OK;
    MPI_Comm node = MPI_COMM_NULL;
    DSMM_MPI_TRY(
        ctx, MPI_Comm_split_type(cs->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node));
    int lowest = ctx->rank;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node));
    DSMM_MPI_TRY(ctx, MPI_Allgather(&lowest, 1, MPI_INT, cs->node_wg, 1, MPI_INT, cs->comm));
cleanup:
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    return st;
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
    c->node_wg = calloc((size_t)ctx->size, sizeof *c->node_wg);
    DSMM_CHECK(ctx, c->node_wg != NULL, DSMM_ERR_NOMEM, "workgroup table of %d ranks", ctx->size);
    DSMM_TRY(node_workgroups(ctx, c));
    *out = ctx;
    ctx = NULL;
cleanup:
    free(cs);
    dsmm_ctx_destroy(&ctx);
    return st;
}

static comm_state *state(const dsmm_ctx *ctx)
{
    return dsmmi_ctx_ok(ctx) ? ctx->comm : NULL;
}

bool dsmmi_comm_funneled(void)
{
    int provided = MPI_THREAD_SINGLE, is_main = 0;
    if (MPI_Query_thread(&provided) != MPI_SUCCESS || provided < MPI_THREAD_FUNNELED) return false;
    return MPI_Is_thread_main(&is_main) == MPI_SUCCESS && is_main;
}

MPI_Comm dsmmi_comm(const dsmm_ctx *ctx)
{
    const comm_state *cs = state(ctx);
    return cs ? cs->comm : MPI_COMM_SELF;
}

/* ------------------------------------------------------------------------------------------ */
/* Workgroups                                                                                 */
/* ------------------------------------------------------------------------------------------ */

int dsmm_ctx_workgroup(const dsmm_ctx *ctx, int r)
{
    const comm_state *cs = state(ctx);
    if (cs == NULL || r < 0 || r >= ctx->size) return 0;
    if (ctx->wg_size > 0) return r / ctx->wg_size * ctx->wg_size;
    return cs->node_wg[r];
}

/* ------------------------------------------------------------------------------------------ */
/* Agreement                                                                                  */
/* ------------------------------------------------------------------------------------------ */

#define MSG_BYTES 1024

dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local)
{
    dsmm_status st = DSMM_OK;
    comm_state *cs = state(ctx);
    if (cs == NULL) return local;
    int worst = (int)local, root = INT_MAX;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, cs->comm));
    ctx->traffic.ctl_msgs++;
    ctx->traffic.ctl_bytes += (int64_t)sizeof(int);
    if (worst == DSMM_OK || ctx->size == 1) {
        st = (dsmm_status)worst;
        goto cleanup;
    }
    // The message of the lowest rank that failed with the worst status becomes everyone's.
    int mine = (int)local == worst ? ctx->rank : INT_MAX;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, cs->comm));
    char msg[MSG_BYTES] = {0};
    if (ctx->rank == root) snprintf(msg, sizeof msg, "%s", dsmm_ctx_last_error(ctx));
    DSMM_MPI_TRY(ctx, MPI_Bcast(msg, MSG_BYTES, MPI_CHAR, root, cs->comm));
    ctx->traffic.ctl_msgs += 2;
    ctx->traffic.ctl_bytes += (int64_t)sizeof(int) + MSG_BYTES;
    msg[MSG_BYTES - 1] = '\0';
    // "NAME: rank R: message (file:line)": the same text on every rank.
    const char *name = dsmm_status_name((dsmm_status)worst);
    size_t n = strlen(name);
    const char *body =
        strncmp(msg, name, n) == 0 && strncmp(msg + n, ": ", 2) == 0 ? msg + n + 2 : msg;
    char full[MSG_BYTES + 64];
    snprintf(full, sizeof full, "%s: rank %d: %s", name, root, body);
    dsmmi_error_replace(ctx, (dsmm_status)worst, full);
    st = (dsmm_status)worst;
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Grids                                                                                      */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmmi_grid_get(dsmm_ctx *ctx, int pr, int pc, const dsmmi_grid **g)
{
    dsmm_status st = DSMM_OK;
    grid_entry *e = NULL;
    *g = NULL;
    comm_state *cs = state(ctx);
    DSMM_TRY(dsmmi_grid_resolve(ctx, pr, pc, &pr, &pc));
    if (cs == NULL) { // a context without a communicator is one rank
        static const dsmmi_grid one = {1, 1, 0, 0, NULL, NULL};
        *g = &one;
        goto cleanup;
    }
    for (int i = 0; i < cs->ngrids; i++)
        if (cs->grids[i]->g.pr == pr && cs->grids[i]->g.pc == pc) {
            *g = &cs->grids[i]->g;
            goto cleanup;
        }
    DSMM_CHECK(ctx, cs->ngrids < MAX_GRIDS, DSMM_ERR_ARG, "more than %d grid shapes in use",
               MAX_GRIDS);
    e = calloc(1, sizeof *e);
    DSMM_CHECK(ctx, e != NULL, DSMM_ERR_NOMEM, "grid");
    e->row = e->col = MPI_COMM_NULL;
    e->g.pr = pr;
    e->g.pc = pc;
    e->g.myrow = ctx->rank / pc;
    e->g.mycol = ctx->rank % pc;
    DSMM_MPI_TRY(ctx, MPI_Comm_split(cs->comm, e->g.myrow, e->g.mycol, &e->row));
    DSMM_MPI_TRY(ctx, MPI_Comm_split(cs->comm, e->g.mycol, e->g.myrow, &e->col));
    DSMM_MPI_TRY(ctx, MPI_Comm_set_errhandler(e->row, MPI_ERRORS_RETURN));
    DSMM_MPI_TRY(ctx, MPI_Comm_set_errhandler(e->col, MPI_ERRORS_RETURN));
    e->g.row_comm = &e->row;
    e->g.col_comm = &e->col;
    cs->grids[cs->ngrids++] = e;
    *g = &e->g;
    e = NULL;
cleanup:
    if (e) {
        if (e->row != MPI_COMM_NULL) MPI_Comm_free(&e->row);
        if (e->col != MPI_COMM_NULL) MPI_Comm_free(&e->col);
        free(e);
    }
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Counted broadcasts                                                                         */
/* ------------------------------------------------------------------------------------------ */

// The context rank of member m of this rank's grid row (dir ROW) or column (dir COL).
static int member_rank(const dsmmi_grid *g, dsmmi_dir dir, int m)
{
    return dir == DSMMI_ALONG_ROW ? g->myrow * g->pc + m : m * g->pc + g->mycol;
}

static void count_bcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, size_t bytes,
                        int64_t chunks)
{
    dsmm_traffic *t = dsmmi_traffic(ctx);
    int q = dir == DSMMI_ALONG_ROW ? g->pc : g->pr;
    int me = dir == DSMMI_ALONG_ROW ? g->mycol : g->myrow;
    int root_rank = member_rank(g, dir, root);
    if (me == root) {
        for (int m = 0; m < q; m++) {
            if (m == root) continue;
            int l = dsmmi_link(ctx, root_rank, member_rank(g, dir, m));
            t->bytes_sent[l] += (int64_t)bytes;
            t->msgs_sent[l] += chunks;
        }
    } else {
        int l = dsmmi_link(ctx, root_rank, ctx->rank);
        t->bytes_recv[l] += (int64_t)bytes;
        t->msgs_recv[l] += chunks;
    }
}

static MPI_Comm dir_comm(const dsmmi_grid *g, dsmmi_dir dir)
{
    return *(MPI_Comm *)(dir == DSMMI_ALONG_ROW ? g->row_comm : g->col_comm);
}

dsmm_status dsmmi_bcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                        size_t bytes)
{
    dsmm_status st = DSMM_OK;
    int q = dir == DSMMI_ALONG_ROW ? g->pc : g->pr;
    if (q == 1 || bytes == 0) return DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx);
    int64_t chunks = 0;
    for (size_t off = 0; off < bytes; off += chunk, chunks++) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        DSMM_MPI_TRY(ctx, MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, dir_comm(g, dir)));
    }
    count_bcast(ctx, g, dir, root, bytes, chunks);
cleanup:
    return st;
}

dsmm_status dsmmi_ibcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                         size_t bytes, dsmmi_req *r)
{
    dsmm_status st = DSMM_OK;
    r->reqs = NULL;
    r->n = r->cap = 0;
    int q = dir == DSMMI_ALONG_ROW ? g->pc : g->pr;
    if (q == 1 || bytes == 0) return DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx);
    size_t nchunks = (bytes + chunk - 1) / chunk;
    DSMM_CHECK(ctx, nchunks <= INT_MAX, DSMM_ERR_ARG, "broadcast of %zu bytes", bytes);
    MPI_Request *reqs = dsmmi_malloc(ctx, nchunks, sizeof *reqs);
    DSMM_CHECK(ctx, reqs != NULL, DSMM_ERR_NOMEM, "%zu broadcast requests", nchunks);
    r->reqs = reqs;
    r->cap = (int)nchunks;
    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * chunk, n = bytes - off < chunk ? bytes - off : chunk;
        DSMM_MPI_TRY(
            ctx, MPI_Ibcast((char *)buf + off, (int)n, MPI_BYTE, root, dir_comm(g, dir), &reqs[c]));
        r->n++;
    }
    count_bcast(ctx, g, dir, root, bytes, (int64_t)nchunks);
cleanup:
    return st;
}

dsmm_status dsmmi_req_wait(dsmm_ctx *ctx, dsmmi_req *r)
{
    dsmm_status st = DSMM_OK;
    if (r->n > 0) DSMM_MPI_TRY(ctx, MPI_Waitall(r->n, r->reqs, MPI_STATUSES_IGNORE));
cleanup:
    r->reqs = dsmmi_free(ctx, r->reqs);
    r->n = r->cap = 0;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* All-to-all exchange of byte buffers                                                        */
/* ------------------------------------------------------------------------------------------ */

#define EXCHANGE_TAG 7

dsmm_status dsmmi_exchange(dsmm_ctx *ctx, const char *sendbuf, const size_t *scount,
                           const size_t *sdispl, char **recv, size_t *rcount)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    comm_state *cs = state(ctx);
    int P = ctx->size, me = ctx->rank;

    int64_t *ssz = NULL, *rsz = NULL;
    size_t *rdispl = NULL;
    MPI_Request *reqs = NULL;
    char *rbuf = NULL;
    *recv = NULL;
    if (cs == NULL) { // one rank: the part to self is all there is
        rcount[0] = scount[0];
        rbuf = dsmmi_malloc(ctx, scount[0] ? scount[0] : 1, 1);
        DSMM_CHECK(ctx, rbuf != NULL, DSMM_ERR_NOMEM, "exchange: %zu bytes", scount[0]);
        if (scount[0]) memcpy(rbuf, sendbuf + sdispl[0], scount[0]);
        *recv = rbuf;
        rbuf = NULL;
        goto cleanup;
    }
    ssz = dsmmi_malloc(ctx, (size_t)P, sizeof *ssz);
    rsz = dsmmi_malloc(ctx, (size_t)P, sizeof *rsz);
    rdispl = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *rdispl);
    if (ssz == NULL || rsz == NULL || rdispl == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "exchange: %d counts", P);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (int p = 0; p < P; p++) ssz[p] = (int64_t)scount[p];
    DSMM_MPI_TRY(ctx, MPI_Alltoall(ssz, 1, MPI_INT64_T, rsz, 1, MPI_INT64_T, cs->comm));
    ctx->traffic.ctl_msgs += P - 1;
    ctx->traffic.ctl_bytes += (int64_t)(P - 1) * 8;
    rdispl[0] = 0;
    for (int p = 0; p < P; p++) {
        rcount[p] = (size_t)rsz[p];
        rdispl[p + 1] = rdispl[p] + rcount[p];
    }
    size_t chunk = dsmmi_comm_chunk(ctx), nreq = 0;
    for (int p = 0; p < P; p++)
        if (p != me) nreq += (rcount[p] + chunk - 1) / chunk + (scount[p] + chunk - 1) / chunk;
    rbuf = dsmmi_malloc(ctx, rdispl[P] ? rdispl[P] : 1, 1);
    reqs = dsmmi_malloc(ctx, nreq ? nreq : 1, sizeof *reqs);
    if (rbuf == NULL || reqs == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                            "exchange: %zu bytes to receive", rdispl[P]);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    size_t k = 0;
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        for (size_t off = 0; off < rcount[p]; off += chunk) {
            size_t n = rcount[p] - off < chunk ? rcount[p] - off : chunk;
            DSMM_MPI_TRY(ctx, MPI_Irecv(rbuf + rdispl[p] + off, (int)n, MPI_BYTE, p, EXCHANGE_TAG,
                                        cs->comm, &reqs[k++]));
            int l = dsmmi_link(ctx, p, me);
            ctx->traffic.msgs_recv[l]++;
            ctx->traffic.bytes_recv[l] += (int64_t)n;
        }
    }
    for (int i = 1; i <= P; i++) {
        int p = (me + i) % P; // staggered, so rank 0 is not everyone's first target
        if (p == me) continue;
        for (size_t off = 0; off < scount[p]; off += chunk) {
            size_t n = scount[p] - off < chunk ? scount[p] - off : chunk;
            DSMM_MPI_TRY(ctx, MPI_Isend(sendbuf + sdispl[p] + off, (int)n, MPI_BYTE, p,
                                        EXCHANGE_TAG, cs->comm, &reqs[k++]));
            int l = dsmmi_link(ctx, me, p);
            ctx->traffic.msgs_sent[l]++;
            ctx->traffic.bytes_sent[l] += (int64_t)n;
        }
    }
    if (scount[me]) memcpy(rbuf + rdispl[me], sendbuf + sdispl[me], scount[me]);
    DSMM_MPI_TRY(ctx, MPI_Waitall((int)k, reqs, MPI_STATUSES_IGNORE));
    *recv = rbuf;
    rbuf = NULL;
cleanup:
    ssz = dsmmi_free(ctx, ssz);
    rsz = dsmmi_free(ctx, rsz);
    rdispl = dsmmi_free(ctx, rdispl);
    reqs = dsmmi_free(ctx, reqs);
    rbuf = dsmmi_free(ctx, rbuf);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Control collectives                                                                        */
/* ------------------------------------------------------------------------------------------ */

static MPI_Op mpi_op(char op)
{
    return op == '>' ? MPI_MAX : op == '<' ? MPI_MIN : MPI_SUM;
}

static void count_ctl(dsmm_ctx *ctx, size_t bytes)
{
    dsmm_traffic *t = dsmmi_traffic(ctx);
    t->ctl_msgs++;
    t->ctl_bytes += (int64_t)bytes;
}

dsmm_status dsmmi_allreduce_i64(dsmm_ctx *ctx, int64_t *v, int n, char op)
{
    dsmm_status st = DSMM_OK;
    if (state(ctx) == NULL || n == 0) return DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, mpi_op(op), dsmmi_comm(ctx)));
    count_ctl(ctx, (size_t)n * 8);
cleanup:
    return st;
}

dsmm_status dsmmi_allreduce_f64(dsmm_ctx *ctx, double *v, int n, char op)
{
    dsmm_status st = DSMM_OK;
    if (state(ctx) == NULL || n == 0) return DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, mpi_op(op), dsmmi_comm(ctx)));
    count_ctl(ctx, (size_t)n * 8);
cleanup:
    return st;
}

dsmm_status dsmmi_allgather_i64(dsmm_ctx *ctx, const int64_t *in, int n, int64_t *out)
{
    dsmm_status st = DSMM_OK;
    if (state(ctx) == NULL) {
        if (n > 0) memcpy(out, in, (size_t)n * sizeof *in);
        return DSMM_OK;
    }
    DSMM_MPI_TRY(ctx, MPI_Allgather(in, n, MPI_INT64_T, out, n, MPI_INT64_T, dsmmi_comm(ctx)));
    count_ctl(ctx, (size_t)n * 8);
cleanup:
    return st;
}

dsmm_status dsmmi_allgather_f64(dsmm_ctx *ctx, const double *in, int n, double *out)
{
    dsmm_status st = DSMM_OK;
    if (state(ctx) == NULL) {
        if (n > 0) memcpy(out, in, (size_t)n * sizeof *in);
        return DSMM_OK;
    }
    DSMM_MPI_TRY(ctx, MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, dsmmi_comm(ctx)));
    count_ctl(ctx, (size_t)n * 8);
cleanup:
    return st;
}

dsmm_status dsmmi_bcast_ctl(dsmm_ctx *ctx, int root, void *buf, size_t bytes)
{
    dsmm_status st = DSMM_OK;
    if (state(ctx) == NULL || bytes == 0) return DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx);
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        DSMM_MPI_TRY(ctx, MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, root, dsmmi_comm(ctx)));
    }
    count_ctl(ctx, bytes);
cleanup:
    return st;
}

dsmm_status dsmmi_barrier(dsmm_ctx *ctx, double *waited)
{
    dsmm_status st = DSMM_OK;
    double t0 = dsmmi_wtime();
    if (state(ctx) != NULL) DSMM_MPI_TRY(ctx, MPI_Barrier(dsmmi_comm(ctx)));
cleanup:
    if (waited) *waited = dsmmi_wtime() - t0;
    return st;
}

dsmm_status dsmmi_comm_progress(dsmm_ctx *ctx)
{
    dsmm_status st = DSMM_OK;
    int flag = 0;
    if (state(ctx) != NULL)
        DSMM_MPI_TRY(ctx, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dsmmi_comm(ctx), &flag,
                                     MPI_STATUS_IGNORE));
cleanup:
    return st;
}

int dsmm_mpi_cuda_aware(void)
{
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
    return MPIX_Query_cuda_support() == 1; // asked at run time: the loaded library decides
#else
    return 0;
#endif
}
