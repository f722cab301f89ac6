// src/io/source.c: whole-input sources: a file or a buffer in memory, gzip inflated on the fly
// (detected by the magic bytes 1f 8b, not the name), always NUL-terminated for the parsers.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "io/io.h"

static int is_gzip(const unsigned char *b, size_t len)
{
    return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

// Inflates gz[0..n) into a new NUL-terminated buffer grown geometrically through
// dsmmi_realloc, so a decompression bomb stops at the memory budget. Concatenated gzip members
// (as pigz and `cat a.gz b.gz` make) are all inflated.
static dsmm_status inflate_all(dsmm_ctx *ctx, const unsigned char *gz, size_t n, const char *name,
                               char **out, size_t *out_len)
{
    dsmm_status st = DSMM_OK;
    char *buf = NULL;
    size_t cap = n < ((size_t)1 << 28) ? 4 * n + 4096 : n + (n >> 1);
    size_t len = 0;
    z_stream zs;
    int zinit = 0;

    *out = NULL;
    memset(&zs, 0, sizeof zs);
    buf = dsmmi_malloc(ctx, cap, 1);
    DSMM_CHECK(ctx, buf != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes for decompression", name, cap);
    DSMM_CHECK(ctx, inflateInit2(&zs, 15 + 16) == Z_OK, DSMM_ERR_NOMEM, "%s: inflateInit failed",
               name);
    zinit = 1;
    size_t in_left = n;
    const unsigned char *in = gz;
    for (;;) {
        if (cap - len < 2) {
            size_t ncap = cap * 2;
            char *nb = dsmmi_realloc(ctx, buf, ncap, 1);
            DSMM_CHECK(ctx, nb != NULL, DSMM_ERR_NOMEM, "%s: decompressed data exceeds %zu bytes",
                       name, cap);
            buf = nb;
            cap = ncap;
        }
        uInt in_chunk = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        size_t room = cap - len - 1; // keep one byte for the terminating NUL
        uInt out_chunk = room > (1u << 30) ? (1u << 30) : (uInt)room;
        zs.next_in = (Bytef *)(uintptr_t)in;
        zs.avail_in = in_chunk;
        zs.next_out = (Bytef *)buf + len;
        zs.avail_out = out_chunk;
        int rc = inflate(&zs, Z_NO_FLUSH);
        size_t used = in_chunk - zs.avail_in;
        in += used;
        in_left -= used;
        len += out_chunk - zs.avail_out;
        if (rc == Z_STREAM_END) {
            // Another member may follow; trailing zero padding is tolerated as gzip(1) does.
            while (in_left > 0 && *in == 0) {
                in++;
                in_left--;
            }
            if (in_left == 0) break;
            DSMM_CHECK(ctx, is_gzip(in, in_left), DSMM_ERR_IO,
                       "%s: trailing garbage after the gzip stream", name);
            DSMM_CHECK(ctx, inflateReset(&zs) == Z_OK, DSMM_ERR_IO, "%s: inflateReset failed",
                       name);
            continue;
        }
        if (rc == Z_BUF_ERROR && zs.avail_out > 0 && in_left == 0)
            DSMM_FAIL(ctx, DSMM_ERR_IO,
                      "%s: truncated gzip stream (ends after %zu compressed "
                      "bytes)",
                      name, n);
        if (rc == Z_MEM_ERROR) DSMM_FAIL(ctx, DSMM_ERR_NOMEM, "%s: zlib out of memory", name);
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            DSMM_FAIL(ctx, DSMM_ERR_IO, "%s: corrupt gzip stream: %s", name,
                      zs.msg ? zs.msg : "inflate failed");
        if (rc == Z_OK && zs.avail_in == 0 && in_left == 0 && zs.avail_out > 0)
            DSMM_FAIL(ctx, DSMM_ERR_IO,
                      "%s: truncated gzip stream (ends after %zu compressed "
                      "bytes)",
                      name, n);
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    buf = NULL;
cleanup:
    if (zinit) inflateEnd(&zs);
    buf = dsmmi_free(ctx, buf);
    return st;
}

dsmm_status dsmmi_source_load(dsmm_ctx *ctx, const char *path, dsmmi_source *src)
{
    dsmm_status st = DSMM_OK;
    char *raw = NULL;
    int fd = -1;

    DSMM_CHECK(ctx, src != NULL && path != NULL, DSMM_ERR_ARG, "source and path must be non-NULL");
    memset(src, 0, sizeof *src);
    src->name = path;
    fd = open(path, O_RDONLY);
    DSMM_CHECK(ctx, fd >= 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    DSMM_CHECK(ctx, fstat(fd, &sb) == 0, DSMM_ERR_IO, "%s: %s", path, strerror(errno));
    DSMM_CHECK(ctx, !S_ISDIR(sb.st_mode), DSMM_ERR_IO, "%s: is a directory", path);
    // Regular files are read in one go; pipes and devices grow the buffer as data arrives.
    size_t cap = S_ISREG(sb.st_mode) ? (size_t)sb.st_size + 1 : 65536;
    size_t len = 0;
    raw = dsmmi_malloc(ctx, cap, 1);
    DSMM_CHECK(ctx, raw != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes to read the file", path, cap);
    for (;;) {
        if (len + 1 >= cap) {
            char *nb = dsmmi_realloc(ctx, raw, cap * 2, 1);
            DSMM_CHECK(ctx, nb != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes to read the file", path,
                       cap * 2);
            raw = nb;
            cap *= 2;
        }
        size_t want = cap - 1 - len;
        if (want > ((size_t)1 << 30)) want = (size_t)1 << 30;
        ssize_t got = read(fd, raw + len, want);
        if (got < 0 && errno == EINTR) continue;
        DSMM_CHECK(ctx, got >= 0, DSMM_ERR_IO, "%s: read failed: %s", path, strerror(errno));
        if (got == 0) break;
        len += (size_t)got;
    }
    raw[len] = '\0';
    if (is_gzip((const unsigned char *)raw, len)) {
        DSMM_TRY(inflate_all(ctx, (const unsigned char *)raw, len, path, &src->buf, &src->len));
        src->gzipped = 1;
        raw = dsmmi_free(ctx, raw);
    } else {
        src->buf = raw;
        src->len = len;
        raw = NULL;
    }
cleanup:
    if (fd >= 0) close(fd);
    raw = dsmmi_free(ctx, raw);
    return st;
}

dsmm_status dsmmi_source_wrap(dsmm_ctx *ctx, const char *buf, size_t len, const char *name,
                              dsmmi_source *src)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, src != NULL && (buf != NULL || len == 0), DSMM_ERR_ARG,
               "source and buffer must be non-NULL");
    memset(src, 0, sizeof *src);
    src->name = name ? name : "(buffer)";
    if (is_gzip((const unsigned char *)buf, len)) {
        DSMM_TRY(
            inflate_all(ctx, (const unsigned char *)buf, len, src->name, &src->buf, &src->len));
        src->gzipped = 1;
    } else {
        src->buf = dsmmi_malloc(ctx, len + 1, 1);
        DSMM_CHECK(ctx, src->buf != NULL, DSMM_ERR_NOMEM, "%s: %zu bytes to copy the buffer",
                   src->name, len + 1);
        if (len) memcpy(src->buf, buf, len);
        src->buf[len] = '\0';
        src->len = len;
    }
cleanup:
    return st;
}

void dsmmi_source_free(dsmm_ctx *ctx, dsmmi_source *src)
{
    if (src == NULL) return;
    src->buf = dsmmi_free(ctx, src->buf);
    src->len = 0;
}

dsmm_idx dsmmi_line_of(const char *buf, size_t off)
{
    dsmm_idx line = 1;
    const char *p = buf, *end = buf + off;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        line++;
        p++;
    }
    return line;
}
