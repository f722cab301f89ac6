// src/io/binary.c: the dsmm binary format (docs/formats.md): a checksummed CSR image for fast
// re-reads. Little-endian; a 64-byte header (magic "DSMMBIN1", version, flags, value type,
// index width, nrows, ncols, nnz, crc32 of the header), then rowptr, colidx and values, then a
// u64 trailer with the crc32 of that payload. The reader checks every size against the
// buffer before it allocates, so a corrupt or hostile file cannot make it over-allocate.
// Files always hold 8-byte columns: the writer widens a matrix's 32-bit columns, so both
// widths of one matrix give the same file, and the reader gives 64-bit columns.
#include <string.h>
#include <zlib.h>

#include "io/io.h"

#define BIN_MAGIC       "DSMMBIN1"
#define BIN_VERSION     1u
#define BIN_HEADER      DSMMI_BIN_HEADER
#define BIN_CRC_AT      48 // the header crc covers bytes [0, 48)
#define BIN_FLAG_SORTED 1u

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) &&                                    \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BIN_BIG_ENDIAN 1
#else
#define BIN_BIG_ENDIAN 0
#endif

// zlib's crc32 takes a 32-bit length, so large payloads go in chunks.
uint32_t dsmmi_crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return crc;
}

static uint32_t get_u32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int64_t get_i64(const char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t get_u64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

dsmm_status dsmmi_bin_header_parse(dsmm_ctx *ctx, const char *name, const char *h, size_t size,
                                   dsmmi_bin_header *bh)
{
    dsmm_status st = DSMM_OK;

    DSMM_CHECK(ctx, !BIN_BIG_ENDIAN, DSMM_ERR_UNSUPPORTED,
               "%s: dsmm binary files are little-endian; this host is big-endian", name);
    DSMM_CHECK(ctx, size >= 8 && memcmp(h, BIN_MAGIC, 8) == 0, DSMM_ERR_FORMAT,
               "%s: not a dsmm binary file (no DSMMBIN1 magic)", name);
    DSMM_CHECK(ctx, size >= BIN_HEADER + 8, DSMM_ERR_FORMAT,
               "%s: truncated: %zu bytes, a dsmm binary file has at least %d", name, size,
               BIN_HEADER + 8);
    uint32_t version = get_u32(h + 8);
    DSMM_CHECK(ctx, version == BIN_VERSION, DSMM_ERR_FORMAT,
               "%s: binary version %u not supported (this dsmm reads %u)", name, version,
               BIN_VERSION);
    DSMM_CHECK(ctx, get_u64(h + BIN_CRC_AT) == dsmmi_crc32(0, h, BIN_CRC_AT), DSMM_ERR_FORMAT,
               "%s: header checksum mismatch: file is corrupt", name);
    uint32_t flags = get_u32(h + 12), vtype = get_u32(h + 16), iw = get_u32(h + 20);
    int64_t nrows = get_i64(h + 24), ncols = get_i64(h + 32), nnz = get_i64(h + 40);
    DSMM_CHECK(ctx, (flags & ~BIN_FLAG_SORTED) == 0, DSMM_ERR_FORMAT, "%s: unknown flags 0x%x",
               name, flags);
    DSMM_CHECK(ctx, vtype <= 2, DSMM_ERR_FORMAT, "%s: unknown value type %u", name, vtype);
    DSMM_CHECK(ctx, iw == 8, DSMM_ERR_FORMAT, "%s: index width %u not supported (8)", name, iw);
    DSMM_CHECK(ctx, get_u64(h + 56) == 0, DSMM_ERR_FORMAT, "%s: reserved header bytes not zero",
               name);
    DSMM_CHECK(ctx, nrows >= 0 && ncols >= 0 && nnz >= 0, DSMM_ERR_FORMAT,
               "%s: negative size %lld x %lld, nnz %lld", name, (long long)nrows, (long long)ncols,
               (long long)nnz);

    // Payload bytes, computed in units the file size bounds, so nothing overflows.
    dsmm_type type = (dsmm_type)vtype;
    size_t vsize = dsmmi_type_size(type);
    size_t avail = (size - BIN_HEADER - 8) / 8;
    DSMM_CHECK(ctx, (uint64_t)nrows < avail && (uint64_t)nnz <= avail, DSMM_ERR_FORMAT,
               "%s: truncated or corrupt: %lld rows and %lld entries do not fit in %zu bytes", name,
               (long long)nrows, (long long)nnz, size);
    size_t payload = ((size_t)nrows + 1) * 8 + (size_t)nnz * (8 + vsize);
    DSMM_CHECK(ctx, payload == size - BIN_HEADER - 8, DSMM_ERR_FORMAT,
               "%s: %zu bytes, expected %zu for %lld x %lld with %lld entries (truncated?)", name,
               size, payload + BIN_HEADER + 8, (long long)nrows, (long long)ncols, (long long)nnz);
    memset(bh, 0, sizeof *bh);
    bh->type = type;
    bh->index_width = (int)iw;
    bh->sorted = (flags & BIN_FLAG_SORTED) != 0;
    bh->nrows = nrows;
    bh->ncols = ncols;
    bh->nnz = nnz;
    bh->rowptr_off = BIN_HEADER;
    bh->colidx_off = bh->rowptr_off + ((size_t)nrows + 1) * 8;
    bh->val_off = bh->colidx_off + (size_t)nnz * 8;
    bh->trailer_off = BIN_HEADER + payload;
    bh->payload = payload;
cleanup:
    return st;
}

dsmm_status dsmmi_bin_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **out, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL, *B = NULL;
    const char *name = src->name ? src->name : "(buffer)";
    dsmmi_bin_header bh;

    *out = NULL;
    DSMM_TRY(dsmmi_bin_header_parse(ctx, name, src->buf, src->len, &bh));
    const char *pay = src->buf + bh.rowptr_off;
    DSMM_CHECK(ctx, get_u64(src->buf + bh.trailer_off) == dsmmi_crc32(0, pay, bh.payload),
               DSMM_ERR_FORMAT, "%s: checksum mismatch: file is corrupt", name);

    const dsmm_type type = bh.type;
    const dsmm_idx nrows = bh.nrows, nnz = bh.nnz;
    DSMM_TRY(dsmm_csr_create(ctx, nrows, bh.ncols, nnz, type, &A));
    memcpy(A->rowptr, src->buf + bh.rowptr_off, ((size_t)nrows + 1) * 8);
    size_t vsize = dsmmi_type_size(type);
    if (nnz > 0) {
        memcpy(A->colidx, src->buf + bh.colidx_off, (size_t)nnz * 8);
        if (vsize) memcpy(A->val, src->buf + bh.val_off, (size_t)nnz * vsize);
    }
    A->nnz = nnz;
    A->sorted = bh.sorted;
    if (dsmm_csr_check(ctx, A) != DSMM_OK) {
        char why[DSMMI_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", dsmm_ctx_last_error(ctx));
        dsmm_ctx_clear_error(ctx);
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s: invalid matrix: %s", name, why);
    }

    dsmm_type want = opts->type;
    if (type == DSMM_PATTERN && opts->keep_pattern) want = DSMM_PATTERN;
    if (want != type) {
        DSMM_TRY(dsmm_csr_copy(ctx, A, want, &B));
        dsmm_csr_destroy(&A);
        A = B;
        B = NULL;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->format = DSMM_FORMAT_BIN;
        info->field = type == DSMM_PATTERN ? DSMM_MM_PATTERN : DSMM_MM_REAL;
        info->symmetry = DSMM_MM_GENERAL;
        info->nrows = nrows;
        info->ncols = bh.ncols;
        info->stored = nnz;
        info->bytes = src->len;
        info->gzipped = src->gzipped;
    }
    *out = A;
    A = NULL;
cleanup:
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&B);
    return st;
}

static int put(FILE *f, const void *p, size_t n, uint32_t *crc)
{
    if (crc) *crc = dsmmi_crc32(*crc, p, n);
    return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1;
}

// 32-bit columns widened to the file's i64 through a small buffer (the crc runs over the
// bytes written, so it equals that of the 64-bit array).
static int put_cols32(FILE *f, const int32_t *c, dsmm_idx n, uint32_t *crc)
{
    int64_t buf[4096];
    for (dsmm_idx k = 0; k < n;) {
        size_t m = n - k < 4096 ? (size_t)(n - k) : 4096;
        for (size_t t = 0; t < m; t++) buf[t] = c[k + (dsmm_idx)t];
        if (put(f, buf, m * 8, crc)) return -1;
        k += (dsmm_idx)m;
    }
    return 0;
}

dsmm_status dsmmi_bin_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, f != NULL && A != NULL, DSMM_ERR_ARG, "binary write: f and A must be non-NULL");
    DSMM_CHECK(ctx, !BIN_BIG_ENDIAN, DSMM_ERR_UNSUPPORTED,
               "dsmm binary files are little-endian; this host is big-endian");
    // A file that fails its own reader's check would be a trap for later runs.
    DSMM_TRY(dsmm_csr_check(ctx, A));

    char h[BIN_HEADER];
    memset(h, 0, sizeof h);
    memcpy(h, BIN_MAGIC, 8);
    uint32_t u = BIN_VERSION;
    memcpy(h + 8, &u, 4);
    u = A->sorted ? BIN_FLAG_SORTED : 0;
    memcpy(h + 12, &u, 4);
    u = (uint32_t)A->type;
    memcpy(h + 16, &u, 4);
    u = 8;
    memcpy(h + 20, &u, 4);
    memcpy(h + 24, &A->nrows, 8);
    memcpy(h + 32, &A->ncols, 8);
    memcpy(h + 40, &A->nnz, 8);
    uint64_t hcrc = dsmmi_crc32(0, h, BIN_CRC_AT);
    memcpy(h + BIN_CRC_AT, &hcrc, 8);

    uint32_t crc = 0;
    int bad = put(f, h, sizeof h, NULL);
    bad = bad || put(f, A->rowptr, ((size_t)A->nrows + 1) * 8, &crc);
    if (A->colidx32)
        bad = bad || put_cols32(f, A->colidx32, A->nnz, &crc);
    else
        bad = bad || put(f, A->colidx, (size_t)A->nnz * 8, &crc);
    bad = bad || put(f, A->val, (size_t)A->nnz * dsmmi_type_size(A->type), &crc);
    uint64_t tcrc = crc;
    bad = bad || put(f, &tcrc, 8, NULL);
    DSMM_CHECK(ctx, !bad && !ferror(f), DSMM_ERR_IO, "binary write failed");
cleanup:
    return st;
}
