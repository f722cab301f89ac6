// src/dist/read.c: dsmm_dist_read: parallel reading of a matrix file into a distributed matrix.
//
// Matrix Market (coordinate): every rank parses the header from a prefix of the file, then
// reads with pread only its byte range of the data section, [data + r len / P, data + (r + 1)
// len / P) moved to line starts (a rank owns the lines that start in its range and reads past
// its end to finish the last one). An exclusive prefix sum of the ranges' newline counts gives
// each rank the file line of its first byte, so messages carry true line numbers; the lines
// are parsed by the serial reader's own code (io.h, dsmmi_mtx_parse_lines) and the entries go
// to their owners through dsmmi_dist_from_triples. A gzip file cannot be entered in the
// middle: every rank inflates the whole file and parses only its range of it. Binary files:
// every rank reads the header, then the row pointers, columns and values of its block of rows
// (pread at offsets); the payload checksum is combined from the ranks' pieces (crc32_combine),
// so a corrupt file is caught as the serial reader catches it. abc label files (and inputs
// that are not regular files, such as pipes): rank 0 reads with dsmm_read and scatters; the
// labels are dropped. Each phase is local work that records its status, then one agreement,
// so a failure on any rank fails every rank at the same point and nobody waits.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dist/dist.h"

#define PREFIX_BYTES ((size_t)1 << 16) // first read of the header, doubled until it fits

// The input: a regular file read with pread, or a whole inflated gzip file in memory.
typedef struct input {
    const char *path;
    int fd;
    size_t size;      // bytes (uncompressed)
    dsmmi_source src; // mem: src.buf (gzip only)
    int gzipped;
} input;

// Reads [off, off + len) of the input into dst (the caller keeps within size).
static dsmm_status in_read(dsmm_ctx *ctx, const input *in, size_t off, size_t len, char *dst)
{
    dsmm_status st = DSMM_OK;
    if (in->src.buf != NULL) {
        DSMM_CHECK(ctx, off <= in->size && len <= in->size - off, DSMM_ERR_INTERNAL,
                   "%s: read of %zu bytes at %zu past the end", in->path, len, off);
        memcpy(dst, in->src.buf + off, len);
        return DSMM_OK;
    }
    while (len > 0) {
        size_t want = len > ((size_t)1 << 30) ? (size_t)1 << 30 : len;
        ssize_t got = pread(in->fd, dst, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        DSMM_CHECK(ctx, got >= 0, DSMM_ERR_IO, "%s: read failed: %s", in->path, strerror(errno));
        DSMM_CHECK(ctx, got > 0, DSMM_ERR_IO,
                   "%s: unexpected end of file at byte %zu (was it changed while being read?)",
                   in->path, off);
        dst += got;
        off += (size_t)got;
        len -= (size_t)got;
    }
cleanup:
    return st;
}

static void in_close(dsmm_ctx *ctx, input *in)
{
    if (in->fd >= 0) close(in->fd);
    in->fd = -1;
    dsmmi_source_free(ctx, &in->src);
}

// Opens path and reads its first bytes (inflated for gzip) into head[0..*hlen) for format
// detection. *regular: a regular file (pread works); otherwise rank 0 reads the whole input.
static dsmm_status in_open(dsmm_ctx *ctx, const char *path, input *in, char *head, size_t cap,
                           size_t *hlen, int *regular)
{
    dsmm_status st = DSMM_OK;
    gzFile gz = NULL;

    *hlen = 0;
    *regular = 0;
    struct stat sb;
    DSMM_CHECK(ctx, stat(path, &sb) == 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
    DSMM_CHECK(ctx, !S_ISDIR(sb.st_mode), DSMM_ERR_IO, "%s: is a directory", path);
    // A pipe or device can be read only once (and opening a FIFO may block): rank 0 reads it.
    if (!S_ISREG(sb.st_mode)) return DSMM_OK;
    in->fd = open(path, O_RDONLY);
    DSMM_CHECK(ctx, in->fd >= 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
    DSMM_CHECK(ctx, fstat(in->fd, &sb) == 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
    *regular = S_ISREG(sb.st_mode);
    if (!*regular) return DSMM_OK;
    in->size = (size_t)sb.st_size;
    unsigned char magic[2] = {0, 0};
    if (in->size >= 2) DSMM_TRY(in_read(ctx, in, 0, 2, (char *)magic));
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
        in->gzipped = 1;
        int fd2 = dup(in->fd);
        DSMM_CHECK(ctx, fd2 >= 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
        gz = gzdopen(fd2, "rb");
        if (gz == NULL) close(fd2);
        DSMM_CHECK(ctx, gz != NULL, DSMM_ERR_NOMEM, "%s: gzdopen failed", path);
        int got = gzread(gz, head, (unsigned)cap);
        int zerr = Z_OK;
        const char *zmsg = got < 0 ? gzerror(gz, &zerr) : NULL;
        DSMM_CHECK(ctx, got >= 0, DSMM_ERR_IO, "%s: corrupt gzip stream: %s", path,
                   zmsg ? zmsg : "inflate failed");
        *hlen = (size_t)got;
    } else {
        *hlen = in->size < cap ? in->size : cap;
        DSMM_TRY(in_read(ctx, in, 0, *hlen, head));
    }
cleanup:
    if (gz != NULL) gzclose(gz);
    return st;
}

// r * len / P without overflow.
static size_t split_at(size_t len, int P, int r)
{
    return len / (size_t)P * (size_t)r + len % (size_t)P * (size_t)r / (size_t)P;
}

/* ------------------------------------------------------------------------------------------ */
/* Matrix Market                                                                              */
/* ------------------------------------------------------------------------------------------ */

// The header from a prefix of the input, read longer until the size line is complete.
static dsmm_status mtx_header(dsmm_ctx *ctx, const input *in, dsmmi_mtx_header *h)
{
    dsmm_status st = DSMM_OK;
    char *buf = NULL;
    size_t len = in->size < PREFIX_BYTES ? in->size : PREFIX_BYTES;
    for (;;) {
        buf = dsmmi_free(ctx, buf);
        buf = dsmmi_malloc(ctx, len + 1, 1);
        DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes of header", in->path, len);
        DSMM_TRY(in_read(ctx, in, 0, len, buf));
        buf[len] = '\0';
        dsmmi_source src = {buf, len, in->path, in->gzipped};
        int more = 0, partial = len < in->size;
        DSMM_TRY(dsmmi_mtx_header_parse(ctx, &src, partial, h, &more));
        if (!more) break;
        len = len > in->size / 2 ? in->size : 2 * len;
    }
cleanup:
    buf = dsmmi_free(ctx, buf);
    return st;
}

// The first line start at or after file offset x: data_off for x <= data_off, else just after
// the first newline at or after x - 1. buf holds the input's bytes [b0, b1); a search that
// runs off it ends at b1 (the end of the input, or where the reader stopped).
static size_t line_start(const char *buf, size_t b0, size_t b1, size_t x, size_t data_off)
{
    if (x <= data_off) return data_off;
    if (x >= b1) return b1;
    const char *nl = memchr(buf + (x - 1 - b0), '\n', b1 - (x - 1));
    return nl ? b0 + (size_t)(nl - buf) + 1 : b1;
}

// This rank's lines: reads from just before its range to the end of the last line that starts
// in it (at most a line's length limit past the range: a longer line is an error for the rank
// that owns it). *buf holds bytes [*b0, *b1) plus a NUL; [*s, *e) are the owned lines.
static dsmm_status mtx_range(dsmm_ctx *ctx, const input *in, size_t data_off, char **pbuf,
                             size_t *pb0, size_t *ps, size_t *pe)
{
    dsmm_status st = DSMM_OK;
    char *buf = NULL;
    const int P = dsmm_ctx_size(ctx), r = dsmm_ctx_rank(ctx);
    const size_t len = in->size - data_off;
    const size_t lo = data_off + split_at(len, P, r), hi = data_off + split_at(len, P, r + 1);
    const size_t b0 = lo > data_off ? lo - 1 : lo;
    size_t b1 = hi, cap = hi - b0 + 1;

    buf = dsmmi_malloc(ctx, cap, 1);
    DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes of entries", in->path, cap);
    DSMM_TRY(in_read(ctx, in, b0, hi - b0, buf));
    // Finish the last line: read on until a newline, the end of the input, or the line limit.
    const size_t limit = hi + DSMMI_MAX_LINE + 2;
    size_t step = 4096;
    while (b1 < in->size && b1 < limit && (b1 == b0 || buf[b1 - 1 - b0] != '\n')) {
        size_t n = step;
        if (n > in->size - b1) n = in->size - b1;
        if (n > limit - b1) n = limit - b1;
        char *nb = dsmmi_realloc(ctx, buf, b1 - b0 + n + 1, 1);
        DSMM_CHECK(ctx, nb != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes of entries", in->path,
                   b1 - b0 + n + 1);
        buf = nb;
        DSMM_TRY(in_read(ctx, in, b1, n, buf + (b1 - b0)));
        const char *nl = memchr(buf + (b1 - b0), '\n', n);
        b1 = nl ? b0 + (size_t)(nl - buf) + 1 : b1 + n;
        if (step < ((size_t)1 << 20)) step *= 2;
    }
    buf[b1 - b0] = '\0';
    size_t s = line_start(buf, b0, b1, lo, data_off), e = line_start(buf, b0, b1, hi, data_off);
    if (hi >= in->size) e = b1;
    if (s > e) s = e;
    *pbuf = buf;
    *pb0 = b0;
    *ps = s;
    *pe = e;
    buf = NULL;
cleanup:
    buf = dsmmi_free(ctx, buf);
    return st;
}

static dsmm_idx count_newlines(const char *p, const char *e)
{
    dsmm_idx n = 0;
    while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

static dsmm_status read_mtx(dsmm_ctx *ctx, const input *in, const dsmm_read_opts *o, int pr, int pc,
                            dsmm_dist **out, dsmm_file_info *fi)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmmi_mtx_header h;
    char *buf = NULL;
    int64_t *all = NULL;
    dsmm_idx *I = NULL, *J = NULL;
    double *V = NULL;
    size_t b0 = 0, s = 0, e = 0;
    const int P = dsmm_ctx_size(ctx), r = dsmm_ctx_rank(ctx);
    const char *name = in->path;

    // Phase 1: the header (every rank reads the same bytes) and this rank's lines.
    memset(&h, 0, sizeof h);
    char last = '\n';
    local = mtx_header(ctx, in, &h);
    if (local == DSMM_OK && h.array)
        local = dsmmi_error(ctx, DSMM_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "%s: a Matrix Market array (dense) file cannot be read as a "
                            "distributed sparse matrix; read it with dsmm_read_dense",
                            name);
    if (local == DSMM_OK) local = dsmmi_mtx_check_fits(ctx, name, &h, in->size - h.data_off);
    if (local == DSMM_OK) local = in_read(ctx, in, in->size - 1, 1, &last);
    if (local == DSMM_OK) local = mtx_range(ctx, in, h.data_off, &buf, &b0, &s, &e);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    fi->array = h.array;
    fi->field = h.field;
    fi->symmetry = h.sym;
    fi->nrows = h.nrows;
    fi->ncols = h.ncols;
    fi->stored = h.stored;

    // Phase 2: the file line of each range's first byte (exclusive prefix sum of newlines),
    // then the entry lines of each range; over-long lines fail here.
    const char *p = buf + (s - b0), *pend = buf + (e - b0);
    all = dsmmi_malloc(ctx, (size_t)P, sizeof *all);
    local = all ? DSMM_OK : dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%d counters", P);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    int64_t mine = count_newlines(p, pend);
    DSMM_TRY(dsmmi_allgather_i64(ctx, &mine, 1, all));
    // Newlines before the data: one per line up to the size line, which has one unless it
    // ends the file.
    dsmm_idx header_nl = h.size_line - 1 + (h.data_off < in->size || last == '\n' ? 1 : 0);
    dsmm_idx line = h.size_line + 1, file_nl = header_nl;
    for (int q = 0; q < P; q++) {
        if (q < r) line += all[q];
        file_nl += all[q];
    }
    dsmm_idx found = 0;
    local = dsmmi_mtx_count_lines(ctx, name, p, pend, line, o->threads, &found);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));

    // Phase 3: the number of entries across the ranks must be the declared one.
    mine = found;
    DSMM_TRY(dsmmi_allgather_i64(ctx, &mine, 1, all));
    dsmm_idx total = 0, before = 0;
    for (int q = 0; q < P; q++) {
        if (q < r) before += all[q];
        total += all[q];
    }
    if (total < h.stored) {
        // The serial reader names the file's last line.
        dsmm_idx last_line = last == '\n' ? file_nl : file_nl + 1;
        local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                            "%s:%lld: file ends after %lld of %lld entries", name,
                            (long long)last_line, (long long)total, (long long)h.stored);
    } else if (total > h.stored && h.stored >= before && h.stored < before + found) {
        size_t off = dsmmi_mtx_entry_offset(p, pend, h.stored - before);
        local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                            "%s:%lld: more than %lld entries (the size line declares %lld)", name,
                            (long long)(line + count_newlines(p, p + off)), (long long)h.stored,
                            (long long)h.stored);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    all = dsmmi_free(ctx, all);

    // Phase 4: parse (the serial reader's checks), then send each entry to its owner.
    dsmm_idx n = 0;
    local = dsmmi_mtx_parse_lines(ctx, name, &h, o, p, pend, line, &n, &I, &J, &V);
    buf = dsmmi_free(ctx, buf);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_type type = o->type;
    if (h.field == DSMM_MM_PATTERN && o->keep_pattern) type = DSMM_PATTERN;
    DSMM_TRY(dsmmi_dist_from_triples(ctx, h.nrows, h.ncols, type, n, I, J, V,
                                     V ? DSMM_DOUBLE : DSMM_PATTERN, o->dup, name, pr, pc, out));
cleanup:
    buf = dsmmi_free(ctx, buf);
    all = dsmmi_free(ctx, all);
    I = dsmmi_free(ctx, I);
    J = dsmmi_free(ctx, J);
    V = dsmmi_free(ctx, V);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Binary (layout: src/io/binary.c, docs/formats.md)                                          */
/* ------------------------------------------------------------------------------------------ */

// The header, parsed and checked by the serial reader's code (io.h), with its messages.
static dsmm_status bin_header_read(dsmm_ctx *ctx, const input *in, dsmmi_bin_header *bh)
{
    dsmm_status st = DSMM_OK;
    char h[DSMMI_BIN_HEADER];

    memset(h, 0, sizeof h);
    DSMM_TRY(in_read(ctx, in, 0, in->size < sizeof h ? in->size : sizeof h, h));
    DSMM_TRY(dsmmi_bin_header_parse(ctx, in->path, h, in->size, bh));
cleanup:
    return st;
}

static dsmm_status read_bin(dsmm_ctx *ctx, const input *in, const dsmm_read_opts *o, int pr, int pc,
                            dsmm_dist **out, dsmm_file_info *fi)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_idx *bounds = NULL, *rp = NULL, *I = NULL, *J = NULL;
    int64_t *cols = NULL, *all = NULL;
    char *vals = NULL;
    dsmmi_bin_header bh;
    const int P = dsmm_ctx_size(ctx), r = dsmm_ctx_rank(ctx);
    const char *name = in->path;

    // Phase 1: the header (all ranks), then the row pointers of this rank's block of rows:
    // rowptr[r0 .. r1], so neighbouring blocks share one value and together check that the
    // row pointers never decrease.
    memset(&bh, 0, sizeof bh);
    local = bin_header_read(ctx, in, &bh);
    dsmm_idx r0 = 0, r1 = 0, k0 = 0, k1 = 0;
    if (local == DSMM_OK) {
        bounds = dsmmi_malloc(ctx, (size_t)P + 1, sizeof *bounds);
        rp = bounds ? dsmmi_malloc(ctx, (size_t)(bh.nrows / P) + 2, sizeof *rp) : NULL;
        if (rp == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%s: row pointers", name);
    }
    if (local == DSMM_OK) {
        dsmmi_equal_split(bh.nrows, P, bounds);
        r0 = bounds[r];
        r1 = bounds[r + 1];
        local = in_read(ctx, in, bh.rowptr_off + (size_t)r0 * 8, ((size_t)(r1 - r0) + 1) * 8,
                        (char *)rp);
    }
    for (dsmm_idx i = r0; local == DSMM_OK && i <= r1; i++) {
        dsmm_idx v = rp[i - r0];
        if (i == 0 && v != 0)
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                "%s: invalid matrix: rowptr[0] = %lld, not 0", name, (long long)v);
        else if (v < 0 || v > bh.nnz)
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                "%s: invalid matrix: rowptr[%lld] = %lld outside 0..%lld", name,
                                (long long)i, (long long)v, (long long)bh.nnz);
        else if (i > r0 && v < rp[i - r0 - 1])
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                "%s: invalid matrix: rowptr[%lld] = %lld > rowptr[%lld] = %lld: "
                                "row pointers decrease",
                                name, (long long)(i - 1), (long long)rp[i - r0 - 1], (long long)i,
                                (long long)v);
        else if (i == bh.nrows && v != bh.nnz)
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                "%s: invalid matrix: rowptr[%lld] = %lld but nnz = %lld", name,
                                (long long)i, (long long)v, (long long)bh.nnz);
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    fi->field = bh.type == DSMM_PATTERN ? DSMM_MM_PATTERN : DSMM_MM_REAL;
    fi->symmetry = DSMM_MM_GENERAL;
    fi->nrows = bh.nrows;
    fi->ncols = bh.ncols;
    fi->stored = bh.nnz;

    // Phase 2: this block's columns and values; the payload checksum from every rank's pieces
    // (row pointers, columns, values: the file's order) joined with crc32_combine.
    k0 = rp[0];
    k1 = rp[r1 - r0];
    const size_t vsize = dsmmi_type_size(bh.type), m = (size_t)(k1 - k0);
    const size_t ci0 = bh.colidx_off, v0 = bh.val_off;
    cols = dsmmi_malloc(ctx, m ? m : 1, sizeof *cols);
    vals = vsize ? dsmmi_malloc(ctx, m ? m : 1, vsize) : NULL;
    all = dsmmi_malloc(ctx, (size_t)P * 6, sizeof *all);
    local = cols && all && (vals || !vsize)
                ? DSMM_OK
                : dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%s: %zu entries", name, m);
    if (local == DSMM_OK) local = in_read(ctx, in, ci0 + (size_t)k0 * 8, m * 8, (char *)cols);
    if (local == DSMM_OK && vsize)
        local = in_read(ctx, in, v0 + (size_t)k0 * vsize, m * vsize, vals);
    uint64_t trailer = 0;
    if (local == DSMM_OK) local = in_read(ctx, in, bh.trailer_off, 8, (char *)&trailer);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    size_t rp_len = (size_t)(r1 - r0 + (r == P - 1 ? 1 : 0)) * 8;
    int64_t piece[6] = {(int64_t)dsmmi_crc32(0, rp, rp_len),      (int64_t)rp_len,
                        (int64_t)dsmmi_crc32(0, cols, m * 8),     (int64_t)(m * 8),
                        (int64_t)dsmmi_crc32(0, vals, m * vsize), (int64_t)(m * vsize)};
    DSMM_TRY(dsmmi_allgather_i64(ctx, piece, 6, all));
    uLong crc = 0;
    for (int part = 0; part < 3; part++)
        for (int q = 0; q < P; q++)
            if (all[q * 6 + 2 * part + 1] > 0)
                crc = crc32_combine(crc, (uLong)all[q * 6 + 2 * part],
                                    (z_off_t)all[q * 6 + 2 * part + 1]);
    local = DSMM_OK;
    if (trailer != (uint64_t)crc)
        local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                            "%s: checksum mismatch: file is corrupt", name);
    all = dsmmi_free(ctx, all);

    // Phase 3: columns in range (and increasing in sorted files), then the triples.
    I = dsmmi_malloc(ctx, m ? m : 1, sizeof *I);
    J = (dsmm_idx *)cols;
    if (local == DSMM_OK && I == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%s: %zu rows", name, m);
    for (dsmm_idx i = r0; local == DSMM_OK && i < r1; i++)
        for (dsmm_idx k = rp[i - r0] - k0; k < rp[i - r0 + 1] - k0; k++) {
            I[k] = i;
            if (J[k] < 0 || J[k] >= bh.ncols) {
                local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                    "%s: invalid matrix: row %lld: colidx[%lld] = %lld outside "
                                    "0..%lld",
                                    name, (long long)i, (long long)(k + k0), (long long)J[k],
                                    (long long)bh.ncols - 1);
                break;
            }
            if (bh.sorted && k > rp[i - r0] - k0 && J[k] <= J[k - 1]) {
                local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                    "%s: invalid matrix: row %lld: colidx[%lld] = %lld <= "
                                    "colidx[%lld] = %lld: columns not strictly increasing "
                                    "though sorted = 1",
                                    name, (long long)i, (long long)(k + k0), (long long)J[k],
                                    (long long)(k + k0 - 1), (long long)J[k - 1]);
                break;
            }
        }
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_type type = o->type;
    if (bh.type == DSMM_PATTERN && o->keep_pattern) type = DSMM_PATTERN;
    DSMM_TRY(dsmmi_dist_from_triples(ctx, bh.nrows, bh.ncols, type, (dsmm_idx)m, I, J, vals,
                                     bh.type, o->dup, name, pr, pc, out));
cleanup:
    bounds = dsmmi_free(ctx, bounds);
    rp = dsmmi_free(ctx, rp);
    cols = dsmmi_free(ctx, cols);
    vals = dsmmi_free(ctx, vals);
    all = dsmmi_free(ctx, all);
    I = dsmmi_free(ctx, I);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Through rank 0 (abc, pipes)                                                                */
/* ------------------------------------------------------------------------------------------ */

static dsmm_status read_root(dsmm_ctx *ctx, const char *path, const dsmm_read_opts *o, int pr,
                             int pc, dsmm_dist **out, dsmm_file_info *fi)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    dsmm_csr *A = NULL;
    if (dsmm_ctx_rank(ctx) == 0) local = dsmm_read(ctx, path, o, &A, NULL, fi);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, fi, sizeof *fi));
    DSMM_TRY(dsmm_dist_scatter(ctx, 0, A, pr, pc, out));
cleanup:
    dsmm_csr_destroy(&A);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmm_dist_read(dsmm_ctx *ctx, const char *path, const dsmm_read_opts *opts, int pr,
                           int pc, dsmm_dist **out, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    input in;
    dsmm_read_opts o;
    dsmm_file_info fi;
    char *head = NULL;
    size_t hlen = 0;
    int regular = 0;

    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    if (out) *out = NULL;
    memset(&in, 0, sizeof in);
    in.fd = -1;
    in.path = path;
    memset(&fi, 0, sizeof fi);
    if (opts)
        o = *opts;
    else
        dsmm_read_opts_init(&o);

    // Phase 0 (local): arguments, grid, the file's kind and format.
    if (path == NULL || out == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                            "dist_read: path and out must be non-NULL");
    int gpr = 0, gpc = 0;
    if (local == DSMM_OK) local = dsmmi_read_check_opts(ctx, &o);
    if (local == DSMM_OK) local = dsmmi_grid_resolve(ctx, pr, pc, &gpr, &gpc);
    if (local == DSMM_OK) {
        head = dsmmi_malloc(ctx, PREFIX_BYTES + 1, 1);
        if (head == NULL)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "%s: read buffer", path);
    }
    if (local == DSMM_OK) local = in_open(ctx, path, &in, head, PREFIX_BYTES, &hlen, &regular);
    dsmm_format fmt = o.format;
    if (local == DSMM_OK && regular) {
        if (hlen == 0)
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__, "%s: empty file", path);
        else if (fmt == DSMM_FORMAT_AUTO)
            fmt = dsmmi_format_detect(head, hlen, path);
    }
    // Every rank inflates a gzip file it will parse (a gzip stream cannot be entered midway).
    if (local == DSMM_OK && regular && in.gzipped && fmt != DSMM_FORMAT_ABC) {
        local = dsmmi_source_load(ctx, path, &in.src);
        in.size = in.src.len;
        if (local == DSMM_OK && in.size == 0)
            local = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__, "%s: empty file", path);
    }
    head = dsmmi_free(ctx, head);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    // Ranks agree on the path they take: all saw the same file (a pipe is seen by rank 0).
    int64_t kind[2] = {regular, (int64_t)fmt};
    DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, kind, sizeof kind));
    if (!kind[0] || (dsmm_format)kind[1] == DSMM_FORMAT_ABC ||
        (dsmm_format)kind[1] == DSMM_FORMAT_MCI) {
        in_close(ctx, &in);
        DSMM_TRY(read_root(ctx, path, &o, gpr, gpc, out, &fi));
    } else {
        fi.format = (dsmm_format)kind[1];
        fi.bytes = in.size;
        fi.gzipped = in.gzipped;
        if (fi.format == DSMM_FORMAT_BIN)
            DSMM_TRY(read_bin(ctx, &in, &o, gpr, gpc, out, &fi));
        else
            DSMM_TRY(read_mtx(ctx, &in, &o, gpr, gpc, out, &fi));
    }
    if (info) *info = fi;
cleanup:
    head = dsmmi_free(ctx, head);
    in_close(ctx, &in);
    return st;
}
