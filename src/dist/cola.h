// src/dist/cola.h: the plan of the 1D CoLa SpMM family (dsmm_cola_*; CoLa paper, Zhang et al.
// ICS'25): row blocks balanced by nnz, each rank's block cut by source panel, and the index
// lists of every transfer, built once (cola.c) and used by every multiply (cola_spmm.c).
#ifndef DSMM_DIST_COLA_H
#define DSMM_DIST_COLA_H
#include "comm/rma.h"
#include "dist/dist.h"

#define DSMMI_COLA_MAGIC 0x64736d6d636f6c61ULL

/* The local matrices of one value type (DOUBLE built at creation, FLOAT on first use). Every
 * CSR has 64-bit columns; rows are this rank's panel. */
typedef struct dsmmi_cola_mats {
    dsmm_type type;
    dsmm_csr **piece;  // [P]: A_{me,s}, columns local to panel s (NULL when empty); piece[me]: LSC
    dsmm_csr *rsc;     // COLA_NOFUSION: the RSC, column c = c-th needed remote row (need order)
    dsmm_csr **fpiece; // COLA: [P] for s outside the workgroup: columns = positions in U[s]
} dsmmi_cola_mats;

struct dsmm_cola {
    uint64_t magic;
    dsmm_ctx *ctx;
    dsmm_cola_opts opts;
    int P, me;
    dsmm_idx n, row0, nrows;
    dsmm_idx *rb;            // [P + 1] row bounds of the panels (plan numbering)
    dsmm_idx *perm;          // [n] or NULL
    dsmm_idx *vertex;        // [nrows] original vertex of each local row
    dsmmi_cola_mats mats[2]; // [0] DOUBLE, [1] FLOAT (type 0 until built)
    int64_t lsc_nnz, rsc_nnz;

    // Needed remote rows: need_idx[need_ptr[s] .. need_ptr[s+1]) local rows of panel s this
    // rank's RSC touches, ascending (need_ptr[me + 1] == need_ptr[me]).
    dsmm_idx *need_ptr, *need_idx;
    // COLA_NOFUSION: rows of this panel each rank needs (serve_idx[serve_ptr[t]..]), and where
    // they go in t's receive buffer (put_disp[t], rows).
    dsmm_idx *serve_ptr, *serve_idx, *put_disp;

    // Workgroups: W groups by index; wg_of[r] the index of rank r's group, lr_of[r] its local
    // rank (position among its group's ranks, ascending); members of this rank's group.
    int W, mywg, nmem;
    int *wg_of, *lr_of, *members;
    // COLA: for s outside the workgroup, the member holding U[s] (the union of the group's
    // needs from s), the offset (rows) of U[s] in the holder's stage buffer and |U[s]|; the
    // holder's buffer capacity (rows, both parities) and its panel height by member.
    int *holder;
    dsmm_idx *hoff, *ulen, *mem_rmax;
    dsmm_idx rmax; // this rank's stage buffer (rows)
    // COLA sends: for target rank t (the holder of this panel in t's group): U_t[me] as local
    // rows (fsend_idx[fsend_ptr[t]..]).
    dsmm_idx *fsend_ptr, *fsend_idx;
    int64_t inter_fused, inter_nofusion;

    // Resources of the multiplies, grown on demand (k and type may change between calls).
    dsmmi_shm *shm;
    size_t shm_bytes;
    dsmmi_win *win;
    void *win_base;
    size_t win_bytes;
    dsmmi_nbr *nbr;
    void *sbuf, *rbuf;
    size_t sbuf_bytes, rbuf_bytes;
    // The remote pieces prepared for the column-wise kernel (dsmm_spmm_tiles_create), by value
    // type ([0] DOUBLE, [1] FLOAT) and slot (DSMMI_COLA_TILE_SLOTS below), made on the first
    // column-wise multiply that reads them and kept (NULL: not made, or no room for them).
    dsmm_spmm_tiles **tiles[2];
    size_t tiles_bytes;
};

/* The slot of p->tiles[t] for a matrix of the plan: piece s (0 <= s < P), fpiece s (P + s),
 * the RSC (2P). */
#define DSMMI_COLA_TILE_SLOTS(P) (2 * (P) + 1)

/* dsmmi_cola_mats_get: the plan's matrices in `type` (built from the DOUBLE ones on first use). */
dsmm_status dsmmi_cola_mats_get(dsmm_ctx *ctx, dsmm_cola *p, dsmm_type type,
                                const dsmmi_cola_mats **out);

/* dsmmi_cola_holder: the member of workgroup g (by index) holding U[s] for it: the one whose
 * local rank matches s's, modulo the group's size (groups may differ in size). */
int dsmmi_cola_holder(const dsmm_cola *p, int g, int s);

#endif // DSMM_DIST_COLA_H
