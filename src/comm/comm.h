// src/comm/comm.h: internal header of the comm layer: the MPI engine behind the context
// (duplicated communicator, workgroups, traffic counters, status agreement), process grids,
// and the counted data movements the distributed layer uses (broadcast along a grid row or
// column, non-blocking broadcast, all-to-all exchange of byte buffers, small control
// collectives). Without MPI, serial.c provides the same calls for one rank, so dist/ and apps/
// compile and run unchanged (PETSc's mpiuni).
#ifndef DSMM_COMM_H
#define DSMM_COMM_H

#include "dsmm_config.h"
#if DSMM_HAVE_MPI
#include <mpi.h> // before dsmm.h, which then declares dsmm_ctx_create_mpi
#endif
#include "base/base.h"

/* dsmmi_comm_agree: the maximum of local over all ranks (collective on ctx's communicator),
 * so a collective phase fails together (STYLE.md §4). The message of the lowest failing rank
 * becomes every rank's message ("rank R: ..."), so all ranks report the same problem.
 * Serial: returns local. */
dsmm_status dsmmi_comm_agree(dsmm_ctx *ctx, dsmm_status local);

/* dsmmi_mpi_count: n as an MPI count; DSMM_ERR_ARG above INT_MAX (never truncated). */
dsmm_status dsmmi_mpi_count(dsmm_ctx *ctx, size_t n, int *count);

/* dsmmi_comm_chunk: the largest message in bytes that one MPI call carries; larger buffers
 * go as several messages (never truncated). INT_MAX rounded down to 8 bytes by default;
 * tests lower it (dsmmi_comm_set_chunk) to exercise the splitting on small data. */
size_t dsmmi_comm_chunk(const dsmm_ctx *ctx);
void dsmmi_comm_set_chunk(dsmm_ctx *ctx, size_t bytes);

/* dsmmi_comm_funneled: this thread may make MPI calls while other threads of the process
 * compute: MPI provides at least MPI_THREAD_FUNNELED and this is the main thread (the one that
 * initialised MPI). Serial: true. */
bool dsmmi_comm_funneled(void);

#if DSMM_HAVE_MPI
/* dsmmi_comm: the context's duplicated communicator (MPI_COMM_SELF for serial contexts). */
MPI_Comm dsmmi_comm(const dsmm_ctx *ctx);
#endif

/* ------------------------------------------------------------------------------------------ */
/* Traffic counters (dsmm_traffic in dsmm.h): link class of a peer, and the counting calls     */
/* ------------------------------------------------------------------------------------------ */

enum { DSMMI_INTRA = 0, DSMMI_INTER = 1 };
/* dsmmi_link: DSMMI_INTRA when ranks a and b of the context share a workgroup. */
int dsmmi_link(const dsmm_ctx *ctx, int a, int b);
/* dsmmi_traffic: the context's live counters (never NULL for a live context). */
dsmm_traffic *dsmmi_traffic(dsmm_ctx *ctx);
/* dsmmi_count_rma: one one-sided call of `bytes` to/from rank `target` (for the RDMA layer). */
void dsmmi_count_rma(dsmm_ctx *ctx, int target, size_t bytes);
/* dsmmi_traffic_diff: d = after - before, field by field. */
void dsmmi_traffic_diff(const dsmm_traffic *after, const dsmm_traffic *before, dsmm_traffic *d);

/* ------------------------------------------------------------------------------------------ */
/* Process grids                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* A pr x pc grid over the context's ranks: rank = row * pc + col. The row communicator holds
 * the pc ranks of this rank's grid row (its rank there is mycol); the column communicator the
 * pr ranks of its grid column (rank there: myrow). */
typedef struct dsmmi_grid {
    int pr, pc, myrow, mycol;
    void *row_comm, *col_comm; // MPI_Comm * (NULL without MPI)
} dsmmi_grid;

typedef enum { DSMMI_ALONG_ROW = 0, DSMMI_ALONG_COL = 1 } dsmmi_dir;

/* dsmmi_grid_resolve: pr x pc from the arguments (0 x 0 = the context's grid, else
 * dsmm_grid_dims(size)); DSMM_ERR_ARG unless pr * pc == size. Local. */
dsmm_status dsmmi_grid_resolve(dsmm_ctx *ctx, int pr, int pc, int *opr, int *opc);
/* dsmmi_grid_create: the grid and its row/column communicators (collective; cached in the
 * context by shape, so repeated calls are cheap; the context frees them). */
dsmm_status dsmmi_grid_get(dsmm_ctx *ctx, int pr, int pc, const dsmmi_grid **g);

/* dsmmi_bcast: buf[0..bytes) from the member `root` of this rank's grid row (DSMMI_ALONG_ROW:
 * root is a grid column) or grid column (root is a grid row) to the others. Counted; split
 * into chunks; no-op when the communicator has one member or bytes == 0. */
dsmm_status dsmmi_bcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                        size_t bytes);

/* A non-blocking broadcast in flight (one MPI request per chunk). */
typedef struct dsmmi_req {
    void *reqs; // MPI_Request[n]
    int n;
    int cap; // room in reqs (grown by dsmmi_isend / dsmmi_irecv)
} dsmmi_req;
/* dsmmi_ibcast: dsmmi_bcast started with MPI_Ibcast; complete it with dsmmi_req_wait before
 * touching buf. Counted when started. */
dsmm_status dsmmi_ibcast(dsmm_ctx *ctx, const dsmmi_grid *g, dsmmi_dir dir, int root, void *buf,
                         size_t bytes, dsmmi_req *r);
/* dsmmi_req_wait: completes r (a zeroed r is complete) and frees it. */
dsmm_status dsmmi_req_wait(dsmm_ctx *ctx, dsmmi_req *r);

/* dsmmi_exchange: all-to-all of byte buffers over the context's ranks: send[p][0..scount[p])
 * goes to rank p; *recv (new, dsmmi_free) holds what came from rank 0, 1, ... in order, rcount[p]
 * bytes from p (rcount: size entries, filled). Sizes are exchanged first (a control message);
 * data moves point-to-point in chunks. Counted (the part to self is copied, not counted).
 * sdispl[p] is the offset of p's bytes in sendbuf. Collective; fails together. */
dsmm_status dsmmi_exchange(dsmm_ctx *ctx, const char *sendbuf, const size_t *scount,
                           const size_t *sdispl, char **recv, size_t *rcount);

/* Small control collectives over the context's ranks (counted as ctl): element-wise sum / max /
 * min of n int64 or double values in place, and an all-gather of n int64 per rank (out holds
 * size * n). */
dsmm_status dsmmi_allreduce_i64(dsmm_ctx *ctx, int64_t *v, int n, char op); // '+', '>', '<'
dsmm_status dsmmi_allreduce_f64(dsmm_ctx *ctx, double *v, int n, char op);
dsmm_status dsmmi_allgather_i64(dsmm_ctx *ctx, const int64_t *in, int n, int64_t *out);
dsmm_status dsmmi_allgather_f64(dsmm_ctx *ctx, const double *in, int n, double *out);
/* dsmmi_bcast_ctl: buf from context rank root to all (control data: counted as ctl). */
dsmm_status dsmmi_bcast_ctl(dsmm_ctx *ctx, int root, void *buf, size_t bytes);
/* dsmmi_barrier: waits for all ranks; returns the seconds spent waiting in *waited. */
dsmm_status dsmmi_barrier(dsmm_ctx *ctx, double *waited);
/* dsmmi_comm_progress: enters the MPI library's progress engine once (an MPI_Iprobe that
 * receives nothing), for a rank that spins on its own window while others read from it.
 * MPI promises passive-target progress only while the target is in some MPI call, and an
 * RMA call on a rank's own window may not count: Open MPI 5's osc/rdma emulates gets with
 * active messages where the transport has no RDMA, and the one-sided algorithms hung there
 * (bench/gpu/pack.sh's Open MPI 5.0.11, 3 ranks on one node) until their idle loops called
 * this. No-op without MPI. */
dsmm_status dsmmi_comm_progress(dsmm_ctx *ctx);

/* ------------------------------------------------------------------------------------------ */
/* Point-to-point, known-count all-to-all, neighbourhood all-to-all, shared-memory windows     */
/* (the 1D CoLa SpMM, dist/cola*.c; all counted like dsmmi_exchange)                            */
/* ------------------------------------------------------------------------------------------ */

/* dsmmi_isend / dsmmi_irecv: a non-blocking message of `bytes` to / from rank peer with tag,
 * appended to r (start r zeroed; complete all with dsmmi_req_wait). Split into chunks. The
 * receive is counted when posted, the send when started. Serial: DSMM_ERR_INTERNAL (one rank
 * has no peer). */
dsmm_status dsmmi_isend(dsmm_ctx *ctx, const void *buf, size_t bytes, int peer, int tag,
                        dsmmi_req *r);
dsmm_status dsmmi_irecv(dsmm_ctx *ctx, void *buf, size_t bytes, int peer, int tag, dsmmi_req *r);

/* dsmmi_alltoallv: MPI_Alltoallv of bytes whose counts both sides already know: scount[p]
 * bytes at sendbuf + sdispl[p] go to rank p, rcount[p] bytes from p land at recvbuf +
 * rdispl[p]. DSMM_ERR_ARG when a count or displacement exceeds MPI's int (use dsmmi_isend).
 * Collective. */
dsmm_status dsmmi_alltoallv(dsmm_ctx *ctx, const void *sendbuf, const size_t *scount,
                            const size_t *sdispl, void *recvbuf, const size_t *rcount,
                            const size_t *rdispl);

/* A distributed-graph communicator over the ranks a rank sends to and receives from
 * (MPI_Dist_graph_create_adjacent), for MPI_Neighbor_alltoallv. */
typedef struct dsmmi_nbr dsmmi_nbr;
/* dsmmi_nbr_create: sources[0..nsrc) send to this rank, dests[0..ndst) receive from it.
 * Collective. */
dsmm_status dsmmi_nbr_create(dsmm_ctx *ctx, int nsrc, const int *sources, int ndst,
                             const int *dests, dsmmi_nbr **out);
/* dsmmi_nbr_alltoallv: scount[d] bytes at sendbuf + sdispl[d] to dests[d]; rcount[s] bytes
 * from sources[s] to recvbuf + rdispl[s] (int counts, as dsmmi_alltoallv). Collective. */
dsmm_status dsmmi_nbr_alltoallv(dsmm_ctx *ctx, dsmmi_nbr *nb, const void *sendbuf,
                                const size_t *scount, const size_t *sdispl, void *recvbuf,
                                const size_t *rcount, const size_t *rdispl);
void dsmmi_nbr_free(dsmm_ctx *ctx, dsmmi_nbr **nb);

/* Where a window's memory starts on every rank (one-sided windows, rma.h; the shared segments
 * below): on a cache line and an AVX-512 vector, like the library's own allocations
 * (base/alloc.c), so the SpMM kernels read dense rows there with their 64-byte instances. */
enum { DSMMI_WIN_ALIGN = 64 };

/* A window of memory shared by the ranks of a workgroup (MPI_Win_allocate_shared over the
 * workgroup's communicator): every member reads the others' segments through plain pointers.
 * Each segment starts DSMMI_WIN_ALIGN-aligned.
 * dsmmi_shm_create: `bytes` for this rank (each may differ); DSMM_ERR_UNSUPPORTED when the
 * workgroup's ranks do not share memory (an emulated workgroup spanning nodes). Collective
 * over the context. Serial: plain memory of the one rank. */
typedef struct dsmmi_shm dsmmi_shm;
dsmm_status dsmmi_shm_create(dsmm_ctx *ctx, size_t bytes, dsmmi_shm **out);
/* dsmmi_shm_base: the segment of context rank r (a member of this rank's workgroup; NULL
 * otherwise) and its size in *bytes (may be NULL). */
void *dsmmi_shm_base(const dsmmi_shm *w, int r, size_t *bytes);
/* dsmmi_shm_sync: a memory barrier and a barrier over the workgroup: what members wrote
 * before is visible to all after. Collective over the workgroup. */
dsmm_status dsmmi_shm_sync(dsmm_ctx *ctx, dsmmi_shm *w);
/* dsmmi_shm_free: collective over the context (*w NULL afterwards; NULL is a no-op). */
void dsmmi_shm_free(dsmm_ctx *ctx, dsmmi_shm **w);

#endif // DSMM_COMM_H
