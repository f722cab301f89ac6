// src/comm/rma_mpi.c: the one-sided layer (rma.h) on MPI-3 RMA: windows from MPI_Win_allocate
// or MPI_Win_create_dynamic, locked with MPI_Win_lock_all for their whole life (passive
// target), gets as MPI_Rget, puts as MPI_Put, atomics as MPI_Fetch_and_op / MPI_Accumulate on
// MPI_INT64_T, completion by MPI_Win_flush. An allocated window's memory starts on a 64-byte
// boundary on every rank (DSMMI_WIN_ALIGN): each rank asks for 63 bytes more, skips to the
// boundary, and the ranks swap those offsets (one allgather of bytes) so a displacement from a
// caller means the same byte on every target. Dense rows read in place from a window then
// take the same (AVX-512) SpMM instance as rows in the library's own memory: the result's
// bits do not depend on where B came from (tests/cli/test_cli_dist.sh).
#include <limits.h>
#include <string.h>

#include "comm/rma.h"

struct dsmmi_win {
    MPI_Win win;
    int dynamic;
    unsigned char *off; // allocated windows: each rank's skip to its aligned start
};

// Where a caller's displacement lies in target's memory.
static MPI_Aint at(const dsmmi_win *w, int target, uint64_t disp)
{
    return (MPI_Aint)(disp + (w->off ? w->off[target] : 0));
}

static void count(dsmm_ctx *ctx, int cls, int target, size_t bytes)
{
    if (cls == DSMMI_RMA_DATA) {
        dsmmi_count_rma(ctx, target, bytes);
    } else {
        dsmm_traffic *t = dsmmi_traffic(ctx);
        t->ctl_msgs++;
        t->ctl_bytes += (int64_t)bytes;
    }
}

static dsmm_status win_new(dsmm_ctx *ctx, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK;
    *w = dsmmi_calloc(ctx, 1, sizeof **w);
    DSMM_CHECK(ctx, *w != NULL, DSMM_ERR_NOMEM, "one-sided window");
    (*w)->win = MPI_WIN_NULL;
cleanup:
    return st;
}

dsmm_status dsmmi_win_allocate(dsmm_ctx *ctx, size_t bytes, void **base, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    *w = NULL;
    *base = NULL;
    local = win_new(ctx, w);
    if (local == DSMM_OK && bytes > (size_t)LONG_MAX - DSMMI_WIN_ALIGN)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "window of %zu bytes exceeds MPI_Aint", bytes);
    if (local == DSMM_OK) {
        (*w)->off = dsmmi_malloc(ctx, (size_t)dsmm_ctx_size(ctx), 1);
        if ((*w)->off == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "window offsets");
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    void *p = NULL;
    size_t ask = bytes ? bytes + DSMMI_WIN_ALIGN - 1 : 0;
    int rc = MPI_Win_allocate((MPI_Aint)ask, 1, MPI_INFO_NULL, dsmmi_comm(ctx), &p, &(*w)->win);
    local = rc == MPI_SUCCESS ? DSMM_OK
                              : dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                            "MPI_Win_allocate of %zu bytes failed", bytes);
    if (local != DSMM_OK) (*w)->win = MPI_WIN_NULL;
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    unsigned char skip = bytes ? (unsigned char)dsmmi_align_skip(p, DSMMI_WIN_ALIGN) : 0;
    DSMM_MPI_TRY(ctx, MPI_Allgather(&skip, 1, MPI_UNSIGNED_CHAR, (*w)->off, 1, MPI_UNSIGNED_CHAR,
                                    dsmmi_comm(ctx)));
    if (bytes) memset((char *)p + skip, 0, bytes);
    *base = bytes ? (char *)p + skip : NULL;
    DSMM_MPI_TRY(ctx, MPI_Win_lock_all(MPI_MODE_NOCHECK, (*w)->win));
    // Everyone's memory is zeroed before anyone reads it.
    DSMM_MPI_TRY(ctx, MPI_Barrier(dsmmi_comm(ctx)));
cleanup:
    if (st != DSMM_OK && *w) {
        if ((*w)->win != MPI_WIN_NULL) MPI_Win_free(&(*w)->win);
        dsmmi_free(ctx, (*w)->off);
        *w = dsmmi_free(ctx, *w);
        *base = NULL;
    }
    return st;
}

dsmm_status dsmmi_win_dynamic(dsmm_ctx *ctx, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK;
    *w = NULL;
    DSMM_TRY(dsmmi_comm_agree(ctx, win_new(ctx, w)));
    (*w)->dynamic = 1;
    DSMM_MPI_TRY(ctx, MPI_Win_create_dynamic(MPI_INFO_NULL, dsmmi_comm(ctx), &(*w)->win));
    DSMM_MPI_TRY(ctx, MPI_Win_lock_all(MPI_MODE_NOCHECK, (*w)->win));
cleanup:
    if (st != DSMM_OK && *w) {
        if ((*w)->win != MPI_WIN_NULL) MPI_Win_free(&(*w)->win);
        *w = dsmmi_free(ctx, *w);
    }
    return st;
}

dsmm_status dsmmi_win_attach(dsmm_ctx *ctx, dsmmi_win *w, void *p, size_t bytes, uint64_t *disp)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, w->dynamic && bytes <= (size_t)LONG_MAX, DSMM_ERR_ARG,
               "attach of %zu bytes to a window that is not dynamic", bytes);
    DSMM_MPI_TRY(ctx, MPI_Win_attach(w->win, p, (MPI_Aint)bytes));
    MPI_Aint a = 0;
    DSMM_MPI_TRY(ctx, MPI_Get_address(p, &a));
    *disp = (uint64_t)a;
cleanup:
    return st;
}

dsmm_status dsmmi_win_detach(dsmm_ctx *ctx, dsmmi_win *w, void *p)
{
    dsmm_status st = DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Win_detach(w->win, p));
cleanup:
    return st;
}

dsmm_status dsmmi_win_free(dsmm_ctx *ctx, dsmmi_win **w)
{
    dsmm_status st = DSMM_OK;
    if (w == NULL || *w == NULL) return DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Win_unlock_all((*w)->win));
    DSMM_MPI_TRY(ctx, MPI_Win_free(&(*w)->win));
cleanup:
    dsmmi_free(ctx, (*w)->off);
    *w = dsmmi_free(ctx, *w);
    return st;
}

dsmm_status dsmmi_rma_get(dsmm_ctx *ctx, dsmmi_win *w, void *dst, size_t bytes, int target,
                          uint64_t disp, int cls, dsmmi_req *r)
{
    dsmm_status st = DSMM_OK;
    dsmmi_req mine = {NULL, 0, 0};
    dsmmi_req *q = r ? r : &mine;
    q->reqs = NULL;
    q->n = q->cap = 0;
    if (bytes == 0) return DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx), n = (bytes + chunk - 1) / chunk;
    DSMM_CHECK(ctx, n <= INT_MAX, DSMM_ERR_ARG, "get of %zu bytes", bytes);
    if (r == NULL) {
        // Blocking: plain gets and a flush, no request array (nothing to allocate, so a
        // rank that is out of memory can still serve its queue).
        for (size_t c = 0; c < n; c++) {
            size_t off = c * chunk, len = bytes - off < chunk ? bytes - off : chunk;
            DSMM_MPI_TRY(ctx, MPI_Get((char *)dst + off, (int)len, MPI_BYTE, target,
                                      at(w, target, disp + off), (int)len, MPI_BYTE, w->win));
        }
        DSMM_MPI_TRY(ctx, MPI_Win_flush(target, w->win));
        count(ctx, cls, target, bytes);
        return DSMM_OK;
    }
    MPI_Request *reqs = dsmmi_malloc(ctx, n, sizeof *reqs);
    DSMM_CHECK(ctx, reqs != NULL, DSMM_ERR_NOMEM, "%zu get requests", n);
    q->reqs = reqs;
    q->cap = (int)n;
    for (size_t c = 0; c < n; c++) {
        size_t off = c * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        DSMM_MPI_TRY(ctx,
                     MPI_Rget((char *)dst + off, (int)len, MPI_BYTE, target,
                              at(w, target, disp + off), (int)len, MPI_BYTE, w->win, &reqs[c]));
        q->n++;
    }
    count(ctx, cls, target, bytes);
cleanup:
    if (st != DSMM_OK && q->n) {
        MPI_Waitall(q->n, q->reqs, MPI_STATUSES_IGNORE);
        q->n = 0;
    }
    if (st != DSMM_OK) {
        q->reqs = dsmmi_free(ctx, q->reqs);
        q->cap = 0;
    }
    return st;
}

dsmm_status dsmmi_rma_put(dsmm_ctx *ctx, dsmmi_win *w, const void *src, size_t bytes, int target,
                          uint64_t disp, int cls)
{
    dsmm_status st = DSMM_OK;
    size_t chunk = dsmmi_comm_chunk(ctx);
    for (size_t off = 0; off < bytes; off += chunk) {
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        DSMM_MPI_TRY(ctx, MPI_Put((const char *)src + off, (int)len, MPI_BYTE, target,
                                  at(w, target, disp + off), (int)len, MPI_BYTE, w->win));
    }
    if (bytes) count(ctx, cls, target, bytes);
cleanup:
    return st;
}

dsmm_status dsmmi_rma_fetch_add(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t add,
                                int64_t *old)
{
    dsmm_status st = DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Fetch_and_op(&add, old, MPI_INT64_T, target, at(w, target, disp),
                                       add ? MPI_SUM : MPI_NO_OP, w->win));
    DSMM_MPI_TRY(ctx, MPI_Win_flush(target, w->win));
    count(ctx, DSMMI_RMA_CTL, target, sizeof add);
cleanup:
    return st;
}

dsmm_status dsmmi_rma_store(dsmm_ctx *ctx, dsmmi_win *w, int target, uint64_t disp, int64_t v)
{
    dsmm_status st = DSMM_OK;
    DSMM_MPI_TRY(ctx, MPI_Accumulate(&v, 1, MPI_INT64_T, target, at(w, target, disp), 1,
                                     MPI_INT64_T, MPI_REPLACE, w->win));
    // MPI_Accumulate may read v after returning: complete it before v goes out of scope.
    DSMM_MPI_TRY(ctx, MPI_Win_flush(target, w->win));
    count(ctx, DSMMI_RMA_CTL, target, sizeof v);
cleanup:
    return st;
}

dsmm_status dsmmi_rma_flush(dsmm_ctx *ctx, dsmmi_win *w, int target)
{
    dsmm_status st = DSMM_OK;
    if (target < 0)
        DSMM_MPI_TRY(ctx, MPI_Win_flush_all(w->win));
    else
        DSMM_MPI_TRY(ctx, MPI_Win_flush(target, w->win));
cleanup:
    return st;
}

dsmm_status dsmmi_req_test(dsmm_ctx *ctx, dsmmi_req *r, int *done)
{
    dsmm_status st = DSMM_OK;
    int flag = 1;
    if (r->n > 0) DSMM_MPI_TRY(ctx, MPI_Testall(r->n, r->reqs, &flag, MPI_STATUSES_IGNORE));
    *done = flag;
    if (flag) {
        r->reqs = dsmmi_free(ctx, r->reqs);
        r->n = r->cap = 0;
    }
cleanup:
    return st;
}
