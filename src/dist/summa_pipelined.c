// src/dist/summa_pipelined.c: the stages of Pipelined Sparse SUMMA (HipMCL-GPU §III, Fig. 2):
// stage s's local multiply, and the merge of its partial product (binary merge, §IV), run
// while stage s+1's broadcasts move, so each step costs about the longer of the two instead
// of their sum. The paper multiplies on the GPU while the CPU broadcasts; here the calling
// thread (MPI's main thread, so MPI_THREAD_FUNNELED suffices) makes the blocking broadcasts
// and a nested team of the remaining threads multiplies and merges, in two receive slots.
// Only the first broadcast is never hidden. The stages, pieces and products are
// summa_spgemm.c's, so the result is the same as without the pipeline. With one thread, or an
// MPI without FUNNELED, the stages run as with prefetch (MPI_Ibcast posted before the multiply).
// The loop also measures HipMCL-GPU's Table V: the broadcasting thread's idle seconds (waiting
// for a multiply), and the device's (not running a stage product) when they ran on the GPU.
#include "dist/summa.h"

#ifdef _OPENMP
#include <omp.h>
#endif

dsmm_status dsmmi_summa_pipelined(dsmm_ctx *ctx, const dsmm_dist *A, const dsmm_dist *B,
                                  dsmmi_summa_run *r, const dsmm_spgemm_opts *lo,
                                  dsmm_status *local, dsmmi_rank_stats *rs)
{
    dsmm_status st = DSMM_OK;
    int S = r->plan.n, threads = dsmmi_threads(ctx);
    // Every rank must take the same branch: the pipeline broadcasts with blocking calls, the
    // fallback posts nonblocking ones, and MPI does not match the two kinds. Threads are a
    // rank's own setting (a node's core count, or the caller's), so the ranks agree on it.
    int64_t can = threads >= 2 && S > 1 && dsmmi_comm_funneled();
#ifdef _OPENMP
    int saved_threads = ctx->threads, saved_levels = omp_get_max_active_levels();
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &can, 1, '<'));
    if (can) {
        // The compute side gets the other threads: the kernels size their teams from ctx.
        ctx->threads = threads - 1;
        if (saved_levels < 2) omp_set_max_active_levels(2);
        double t = dsmmi_wtime();
        DSMM_TRY(dsmmi_summa_post(ctx, A, B, r, 0, 0, 0));
        double first = dsmmi_wtime() - t;
        rs->comm += first;
        rs->comm_exposed += first;
        for (int s = 0; s < S; s++) {
            dsmm_status cst = DSMM_OK, lst = *local;
            double tc = 0, tm = 0, t0 = dsmmi_wtime();
#pragma omp parallel num_threads(2)
            {
                int me = omp_get_thread_num(), team = omp_get_num_threads();
                // A team of one (thread limits) does both, broadcast first.
                if (me == 0 && s + 1 < S) {
                    double a = dsmmi_wtime();
                    cst = dsmmi_summa_post(ctx, A, B, r, s + 1, (s + 1) % 2, 0);
                    tc = dsmmi_wtime() - a;
                }
                if ((me == 1 || team == 1) && lst == DSMM_OK) {
                    double a = dsmmi_wtime();
                    lst = dsmmi_summa_multiply(ctx, A, B, r, s, s % 2, lo);
                    tm = dsmmi_wtime() - a;
                }
            }
            double step = dsmmi_wtime() - t0;
            rs->comm += tc;
            rs->comp += tm;
            // Table V's CPU idle: the broadcasting thread done, waiting for the multiply.
            rs->cpu_idle += step > tc ? step - tc : 0;
            // Exposed: the step's time without a multiply or merge; hidden: the rest of the
            // broadcast's time, which ran while the other threads computed.
            double bare = step > tm ? step - tm : 0;
            rs->comm_exposed += bare;
            if (tc > bare) rs->comm_overlapped += tc - bare;
            *local = lst;
            DSMM_TRY(cst);
        }
        // Table V's GPU idle: the loop's seconds (the first broadcast included) in which the
        // device ran none of the stage products' kernels or copies.
        rs->idle_known = 1;
        rs->gpu_products = r->gpu_products;
        double loop = dsmmi_wtime() - t;
        if (r->gpu_products > 0) rs->gpu_idle = loop > r->gpu_busy ? loop - r->gpu_busy : 0;
        goto cleanup;
    }
#endif
    (void)threads;
    (void)can;
    {
        // Prefetched (nonblocking) broadcasts, except into device memory: a CUDA-aware MPI
        // takes device buffers in blocking collectives only (Open MPI's CUDA notes).
        double c0 = rs->comm;
        DSMM_TRY(dsmmi_summa_stages(ctx, A, B, r, lo, !r->dev_recv, 0, local, rs));
        rs->comm_exposed += rs->comm - c0; // the waits for the posted broadcasts
    }
cleanup:
#ifdef _OPENMP
    ctx->threads = saved_threads;
    if (omp_get_max_active_levels() != saved_levels) omp_set_max_active_levels(saved_levels);
#endif
    return st;
}
