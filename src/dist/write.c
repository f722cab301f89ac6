// src/dist/write.c: dsmm_dist_write: writing a distributed matrix. Matrix Market is written in
// parallel: the matrix moves to the 1D row layout, every rank formats its rows with the serial
// writer's own formatters (io.h: dsmmi_mtx_format_header, dsmmi_mtx_format_rows), so both give
// the same bytes, an exclusive prefix sum of the byte counts gives each rank its offset (rank
// 0's bytes start with the header), and every rank writes its bytes at its offset into
// "<path>.tmp.<pid of rank 0>" (MPI_File_write_at_all; stdio for a context without MPI), which
// rank 0 renames over path once every rank has succeeded, so the file appears whole or not at
// all. The default symmetric = -1 asks whether A == A^T: each off-diagonal entry is sent to
// the owner of its mirror, which looks it up. Other formats (and standard output) go through
// rank 0: gather, then dsmm_write there.
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"

// A growing text buffer.
typedef struct text {
    char *buf;
    size_t n, cap;
} text;

static dsmm_status text_room(dsmm_ctx *ctx, text *t, size_t more)
{
    dsmm_status st = DSMM_OK;
    if (t->n + more <= t->cap) return DSMM_OK;
    size_t cap = t->cap ? t->cap : 65536;
    while (cap < t->n + more) cap *= 2;
    char *nb = dsmmi_realloc(ctx, t->buf, cap, 1);
    DSMM_CHECK(ctx, nb != NULL, DSMM_ERR_NOMEM, "write: %zu bytes of text", cap);
    t->buf = nb;
    t->cap = cap;
cleanup:
    return st;
}

// The serial writer's banner, comment lines and size line (io.h formats them).
static dsmm_status put_header(dsmm_ctx *ctx, text *t, const dsmm_dist *A, int sym,
                              const char *comment, dsmm_idx count)
{
    dsmm_status st = DSMM_OK;
    const dsmm_type type = dsmm_dist_type(A);
    const dsmm_idx nrows = dsmm_dist_nrows(A), ncols = dsmm_dist_ncols(A);
    size_t len = dsmmi_mtx_format_header(NULL, 0, type, sym, comment, nrows, ncols, count);
    DSMM_TRY(text_room(ctx, t, len + 1));
    t->n +=
        dsmmi_mtx_format_header(t->buf + t->n, len + 1, type, sym, comment, nrows, ncols, count);
cleanup:
    return st;
}

// This rank's rows of R (1D row layout) as entry lines, after what t holds already.
static dsmm_status put_rows(dsmm_ctx *ctx, text *t, const dsmm_dist *R, int sym, int precision)
{
    dsmm_status st = DSMM_OK;
    dsmmi_mtx_rows rows = {NULL, 0, 0, sym, precision, 0, 0};
    rows.A = dsmm_dist_local(R, &rows.row0, &rows.col0);
    while (rows.i < rows.A->nrows) {
        DSMM_TRY(text_room(ctx, t, DSMMI_MTX_LINE_MAX));
        t->n += dsmmi_mtx_format_rows(&rows, t->buf + t->n, t->cap - t->n);
    }
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Symmetry (A == A^T, pattern and values) of a matrix on the 1D row layout                   */
/* ------------------------------------------------------------------------------------------ */

// Entry k of row i of T (sorted rows): the position of column c, or -1.
static dsmm_idx find_col(const dsmm_csr *T, dsmm_idx i, dsmm_idx c)
{
    dsmm_idx lo = T->rowptr[i], hi = T->rowptr[i + 1];
    while (lo < hi) {
        dsmm_idx mid = lo + (hi - lo) / 2;
        if (dsmm_csr_col(T, mid) < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < T->rowptr[i + 1] && dsmm_csr_col(T, lo) == c ? lo : -1;
}

// *sym = 1 when every off-diagonal entry (i, j, v) has its mirror (j, i, v): each entry goes to
// the owner of row j, which looks it up. Collective; fails together.
static dsmm_status dist_symmetric(dsmm_ctx *ctx, const dsmm_dist *R, int *sym)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    size_t *scount = NULL, *sdispl = NULL, *rcount = NULL, *fill = NULL;
    char *sbuf = NULL, *rbuf = NULL;
    const int P = dsmm_ctx_size(ctx);
    const dsmm_idx n = dsmm_dist_nrows(R);

    *sym = 0;
    if (n != dsmm_dist_ncols(R)) return DSMM_OK;
    dsmm_idx row0 = 0, col0 = 0;
    const dsmm_csr *T = dsmm_dist_local(R, &row0, &col0);
    const int vals = T->type != DSMM_PATTERN;
    const size_t rb = 2 * sizeof(dsmm_idx) + (vals ? sizeof(double) : 0);
    scount = dsmmi_calloc(ctx, (size_t)P, sizeof *scount);
    sdispl = dsmmi_calloc(ctx, (size_t)P + 1, sizeof *sdispl);
    rcount = dsmmi_calloc(ctx, (size_t)P, sizeof *rcount);
    fill = dsmmi_calloc(ctx, (size_t)P, sizeof *fill);
    if (!scount || !sdispl || !rcount || !fill)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "symmetry check: counts");
    for (dsmm_idx i = 0; local == DSMM_OK && i < T->nrows; i++)
        for (dsmm_idx k = T->rowptr[i]; k < T->rowptr[i + 1]; k++) {
            dsmm_idx j = col0 + dsmm_csr_col(T, k);
            if (j != row0 + i) scount[dsmmi_block_of(n, P, j)] += rb;
        }
    if (local == DSMM_OK) {
        for (int p = 0; p < P; p++) sdispl[p + 1] = sdispl[p] + scount[p];
        sbuf = dsmmi_malloc(ctx, sdispl[P] ? sdispl[P] : 1, 1);
        if (sbuf == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "symmetry check: %zu bytes", sdispl[P]);
    }
    for (dsmm_idx i = 0; local == DSMM_OK && i < T->nrows; i++)
        for (dsmm_idx k = T->rowptr[i]; k < T->rowptr[i + 1]; k++) {
            dsmm_idx gi = row0 + i, j = col0 + dsmm_csr_col(T, k);
            if (j == gi) continue;
            int owner = dsmmi_block_of(n, P, j);
            char *p = sbuf + sdispl[owner] + fill[owner];
            memcpy(p, &j, sizeof j); // the mirror (j, gi)
            memcpy(p + sizeof j, &gi, sizeof gi);
            if (vals) {
                double v = dsmm_csr_value(T, k);
                memcpy(p + 2 * sizeof j, &v, sizeof v);
            }
            fill[owner] += rb;
        }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_exchange(ctx, sbuf, scount, sdispl, &rbuf, rcount));
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rcount[p];
    int64_t asym = 0;
    for (size_t off = 0; off < total && !asym; off += rb) {
        dsmm_idx a, b;
        memcpy(&a, rbuf + off, sizeof a);
        memcpy(&b, rbuf + off + sizeof a, sizeof b);
        dsmm_idx k = find_col(T, a - row0, b - col0);
        if (k < 0) {
            asym = 1;
        } else if (vals) {
            double v;
            memcpy(&v, rbuf + off + 2 * sizeof a, sizeof v);
            if (dsmm_csr_value(T, k) != v) asym = 1;
        }
    }
    DSMM_TRY(dsmmi_allreduce_i64(ctx, &asym, 1, '>'));
    *sym = !asym;
cleanup:
    scount = dsmmi_free(ctx, scount);
    sdispl = dsmmi_free(ctx, sdispl);
    rcount = dsmmi_free(ctx, rcount);
    fill = dsmmi_free(ctx, fill);
    sbuf = dsmmi_free(ctx, sbuf);
    rbuf = dsmmi_free(ctx, rbuf);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The file                                                                                   */
/* ------------------------------------------------------------------------------------------ */

// Writes every rank's t at its offset into a temporary, renamed over path when all succeeded.
static dsmm_status write_parts(dsmm_ctx *ctx, const char *path, const text *t, size_t offset)
{
    dsmm_status st = DSMM_OK;
    char *tmp = NULL;

#if DSMM_HAVE_MPI
    if (ctx->comm != NULL) {
        dsmm_status local = DSMM_OK;
        MPI_File fh = MPI_FILE_NULL;
        int64_t pid = (int64_t)getpid();
        size_t tlen = strlen(path) + 32;
        tmp = dsmmi_malloc(ctx, tlen, 1);
        if (tmp == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "output path");
        DSMM_TRY(dsmmi_comm_agree(ctx, local));
        if (ctx->rank == 0) {
            snprintf(tmp, tlen, "%s.tmp.%lld", path, (long long)pid);
            remove(tmp); // a leftover of a killed run would keep its stale tail
        }
        DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, &pid, sizeof pid));
        snprintf(tmp, tlen, "%s.tmp.%lld", path, (long long)pid);
        char msg[MPI_MAX_ERROR_STRING];
        int mlen = 0;
        int rc = MPI_File_open(dsmmi_comm(ctx), tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                               MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) {
            MPI_Error_string(rc, msg, &mlen);
            local = dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__, "%s: cannot create: %s", path,
                                msg);
        }
        st = dsmmi_comm_agree(ctx, local);
        if (st != DSMM_OK) {
            if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
            if (ctx->rank == 0) remove(tmp);
            goto cleanup;
        }
        // Collective writes, each at most one chunk; ranks with fewer chunks write nothing.
        const size_t chunk = dsmmi_comm_chunk(ctx);
        int64_t rounds = (int64_t)((t->n + chunk - 1) / chunk);
        local = dsmmi_allreduce_i64(ctx, &rounds, 1, '>');
        for (int64_t c = 0; local == DSMM_OK && c < rounds; c++) {
            size_t at = (size_t)c * chunk;
            size_t len = at < t->n ? (t->n - at < chunk ? t->n - at : chunk) : 0;
            int count = 0, done = 0;
            MPI_Status ms;
            if (dsmmi_mpi_count(ctx, len, &count) != DSMM_OK) count = 0;
            rc = MPI_File_write_at_all(fh, (MPI_Offset)(offset + (len ? at : 0)),
                                       len ? t->buf + at : t->buf, count, MPI_BYTE, &ms);
            if (rc == MPI_SUCCESS) MPI_Get_count(&ms, MPI_BYTE, &done);
            if (rc != MPI_SUCCESS || done != count) {
                msg[0] = '\0';
                if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &mlen);
                local = dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__, "%s: write failed: %s",
                                    path, rc != MPI_SUCCESS ? msg : "short write");
                // Keep taking part in the remaining collective writes.
                for (c++; c < rounds; c++)
                    MPI_File_write_at_all(fh, 0, t->buf, 0, MPI_BYTE, MPI_STATUS_IGNORE);
            }
        }
        rc = MPI_File_close(&fh);
        if (rc != MPI_SUCCESS && local == DSMM_OK) {
            MPI_Error_string(rc, msg, &mlen);
            local = dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__, "%s: write failed: %s", path,
                                msg);
        }
        st = dsmmi_comm_agree(ctx, local);
        local = DSMM_OK;
        if (st == DSMM_OK && ctx->rank == 0 && rename(tmp, path) != 0)
            local = dsmmi_error(ctx, DSMM_ERR_IO, __FILE__, __LINE__,
                                "%s: cannot rename from %s: %s", path, tmp, strerror(errno));
        if (ctx->rank == 0 && (st != DSMM_OK || local != DSMM_OK)) remove(tmp);
        if (st == DSMM_OK) st = dsmmi_comm_agree(ctx, local);
        goto cleanup;
    }
#endif
    {
        // One rank: the serial writer's atomic file.
        dsmmi_outfile of;
        DSMM_CHECK(ctx, dsmm_ctx_size(ctx) == 1 && offset == 0, DSMM_ERR_INTERNAL,
                   "write: stdio path on %d ranks", dsmm_ctx_size(ctx));
        DSMM_TRY(dsmmi_outfile_open(ctx, &of, path));
        if (t->n > 0 && fwrite(t->buf, 1, t->n, of.f) != t->n) {
            dsmmi_outfile_abort(ctx, &of);
            DSMM_FAIL(ctx, DSMM_ERR_IO, "writing Matrix Market failed: %s", strerror(errno));
        }
        DSMM_TRY(dsmmi_outfile_commit(ctx, &of));
    }
cleanup:
    tmp = dsmmi_free(ctx, tmp);
    return st;
}

static dsmm_status write_mtx(dsmm_ctx *ctx, const char *path, const dsmm_dist *A,
                             const dsmm_write_opts *o)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_dist *R1 = NULL;
    text t = {NULL, 0, 0};
    int64_t *all = NULL;
    const int P = dsmm_ctx_size(ctx), r = dsmm_ctx_rank(ctx);

    int pr = 0, pc = 0;
    dsmm_dist_grid(A, &pr, &pc);
    if (pc != 1) DSMM_TRY(dsmm_dist_redistribute(ctx, A, P, 1, &R1));
    const dsmm_dist *R = R1 ? R1 : A;

    int sym = o->symmetric;
    if (sym != 0) {
        int is_sym = 0;
        DSMM_TRY(dist_symmetric(ctx, R, &is_sym));
        DSMM_CHECK(ctx, sym < 0 || is_sym, DSMM_ERR_ARG,
                   "symmetric output asked for, but the matrix is not symmetric (or its rows "
                   "are not sorted)");
        sym = is_sym;
    }
    int64_t count = dsmm_dist_nnz(A);
    if (sym) {
        dsmm_idx row0 = 0, col0 = 0;
        const dsmm_csr *T = dsmm_dist_local(R, &row0, &col0);
        count = 0;
        for (dsmm_idx i = 0; i < T->nrows; i++)
            for (dsmm_idx k = T->rowptr[i]; k < T->rowptr[i + 1]; k++)
                count += col0 + dsmm_csr_col(T, k) <= row0 + i;
        DSMM_TRY(dsmmi_allreduce_i64(ctx, &count, 1, '+'));
    }

    // Text: rank 0 starts with the header; then every rank's rows.
    if (r == 0) local = put_header(ctx, &t, A, sym, o->comment, count);
    if (local == DSMM_OK) local = put_rows(ctx, &t, R, sym, o->precision);
    all = dsmmi_malloc(ctx, (size_t)P, sizeof *all);
    if (local == DSMM_OK && all == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%d offsets", P);
    dsmm_dist_destroy(&R1);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    int64_t mine = (int64_t)t.n;
    DSMM_TRY(dsmmi_allgather_i64(ctx, &mine, 1, all));
    size_t offset = 0;
    for (int q = 0; q < r; q++) offset += (size_t)all[q];
    DSMM_TRY(write_parts(ctx, path, &t, offset));
cleanup:
    dsmm_dist_destroy(&R1);
    t.buf = dsmmi_free(ctx, t.buf);
    all = dsmmi_free(ctx, all);
    return st;
}

dsmm_status dsmm_dist_write(dsmm_ctx *ctx, const char *path, const dsmm_dist *A,
                            const dsmm_write_opts *opts)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_csr *G = NULL;
    dsmm_write_opts o;

    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    if (opts)
        o = *opts;
    else
        dsmm_write_opts_init(&o);
    dsmm_format fmt = DSMM_FORMAT_MTX;
    if (path == NULL || path[0] == '\0')
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dist_write: path must be non-empty");
    else if (!dsmmi_dist_ok(ctx, A))
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dist_write: A is not a live distributed matrix of this context");
    else
        local = dsmmi_write_format(ctx, path, o.format, &fmt);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    if (fmt == DSMM_FORMAT_MTX && strcmp(path, "-") != 0) {
        DSMM_TRY(write_mtx(ctx, path, A, &o));
    } else {
        o.format = fmt;
        DSMM_TRY(dsmm_dist_gather(ctx, A, 0, &G));
        if (dsmm_ctx_rank(ctx) == 0) local = dsmm_write(ctx, path, G, NULL, &o);
        dsmm_csr_destroy(&G);
        DSMM_TRY(dsmmi_comm_agree(ctx, local));
    }
cleanup:
    dsmm_csr_destroy(&G);
    return st;
}
