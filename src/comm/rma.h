// src/comm/rma.h: the one-sided ("RDMA") layer under the RDMA algorithms (RDMA paper §3.1,
// §5.1): windows of memory other ranks read and write without the owner's involvement, and
// the five operations the algorithms use: get (blocking or non-blocking), put, atomic
// fetch-and-add, flush, and the context's barrier (comm.h). On MPI-3 every window is opened
// for passive target with MPI_Win_lock_all for its whole life, so no call synchronises with
// the target; without MPI (rma_serial.c) the one rank reads and writes its own memory. A
// GPU-initiated backend (NVSHMEM-like) would implement this header and nothing above it.
//
// Counting (dsmm_traffic): data calls (tiles, partial results) are counted in rma_bytes /
// rma_calls by link class; control calls (queue slots, reservation counters, polls) in ctl_*.
// A call whose target is the calling rank is counted the same way: the algorithms read their
// own tiles through local pointers and never issue one.
#ifndef DSMM_COMM_RMA_H
#define DSMM_COMM_RMA_H

#include "comm/comm.h"

typedef struct dsmmi_win dsmmi_win;

enum { DSMMI_RMA_DATA = 0, DSMMI_RMA_CTL = 1 };

/* dsmmi_win_allocate: a window of `bytes` zeroed bytes on every rank (each rank may pass its
 * own size; MPI_Win_allocate, displacement unit 1), locked for all targets. *base: this
 * rank's memory, DSMMI_WIN_ALIGN-aligned (NULL when bytes == 0). Collective; fails together. */
dsmm_status dsmmi_win_allocate(dsmm_ctx *ctx, size_t bytes, void **base, dsmmi_win **w);
/* dsmmi_win_dynamic: a window without memory (MPI_Win_create_dynamic) to which ranks attach
 * buffers later (dsmmi_win_attach); locked for all targets. Collective; fails together. */
dsmm_status dsmmi_win_dynamic(dsmm_ctx *ctx, dsmmi_win **w);
/* dsmmi_win_attach: exposes p[0..bytes) in the dynamic window w; *disp is the displacement
 * other ranks use to reach p (its address). Local. */
dsmm_status dsmmi_win_attach(dsmm_ctx *ctx, dsmmi_win *w, void *p, size_t bytes, uint64_t *disp);
dsmm_status dsmmi_win_detach(dsmm_ctx *ctx, dsmmi_win *w, void *p);
/* dsmmi_win_free: unlocks and frees the window (*w NULL afterwards; NULL is a no-op). The
 * caller has made sure no rank still accesses it (a barrier). Collective. */
dsmm_status dsmmi_win_free(dsmm_ctx *ctx, dsmmi_win **w);

/* dsmmi_rma_get: dst[0..bytes) = target's window bytes [disp, disp + bytes), split into
 * chunks of at most dsmmi_comm_chunk bytes. r NULL: blocking (complete on return); else
 * non-blocking (MPI_Rget): complete it with dsmmi_req_wait (comm.h) before touching dst.
 * cls: DSMMI_RMA_DATA or DSMMI_RMA_CTL (counting). */
dsmm_status dsmmi_rma_get(dsmm_ctx *ctx, dsmmi_win *w, void *dst, size_t bytes, int target,
                          uint64_t disp, int cls, dsmmi_req *r);
/* dsmmi_rma_put: target's window bytes [disp, disp + bytes) = src; complete (src reusable,
 * data visible at the target) after dsmmi_rma_flush(target). */
dsmm_status dsmmi_rma_put(dsmm_ctx *ctx, dsmmi_win *w, const void *src, size_t bytes, int target,
                          uint64_t disp, int cls);
/* dsmmi_rma_fetch_add: atomically adds `add` to the int64 at target's [disp] and returns the
 * previous value in *old (add 0: an atomic read). Complete on return. Counted as control. */
dsmm_status dsmmi_rma_fetch_add(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t add,
                                int64_t *old);
/* dsmmi_rma_store: atomically replaces the int64 at target's [disp] with v (complete after a
 * flush of target). Counted as control. */
dsmm_status dsmmi_rma_store(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t v);
/* dsmmi_rma_flush: completes every put and atomic this rank issued to target (-1: to all). */
dsmm_status dsmmi_rma_flush(dsmm_ctx *ctx, dsmmi_win *w, int target);
/* dsmmi_req_test: *done = 1 when every request of r has completed (r is then freed as by
 * dsmmi_req_wait); 0 otherwise. Lets a waiting rank do other work (serve its queue). */
dsmm_status dsmmi_req_test(dsmm_ctx *ctx, dsmmi_req *r, int *done);

#endif // DSMM_COMM_RMA_H
