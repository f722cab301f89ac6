// src/io/read.c: dsmm_read / dsmm_read_buffer / dsmm_read_dense: load the source, pick the
// format (content first, then the name) and hand it to the parser.
#include <string.h>

#include "io/io.h"

void dsmm_read_opts_init(dsmm_read_opts *opts)
{
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->format = DSMM_FORMAT_AUTO;
    opts->type = DSMM_DOUBLE;
    opts->keep_pattern = 1;
    opts->dup = DSMM_DUP_ERROR;
    opts->threads = 0;
    opts->base = 1;
    opts->allow_nonfinite = 0;
    opts->abc_map = NULL;
    opts->abc_map_arg = NULL;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    if (n < m) return 0;
    for (size_t k = 0; k < m; k++) {
        char c = s[n - m + k];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suffix[k]) return 0;
    }
    return 1;
}

dsmm_format dsmmi_format_from_name(const char *name)
{
    if (name == NULL) return DSMM_FORMAT_AUTO;
    size_t n = strlen(name);
    if (ends_with(name, n, ".gz")) n -= 3;
    if (ends_with(name, n, ".mtx") || ends_with(name, n, ".mm")) return DSMM_FORMAT_MTX;
    if (ends_with(name, n, ".abc") || ends_with(name, n, ".txt") || ends_with(name, n, ".tsv") ||
        ends_with(name, n, ".edgelist"))
        return DSMM_FORMAT_ABC;
    if (ends_with(name, n, ".dsmm") || ends_with(name, n, ".bin")) return DSMM_FORMAT_BIN;
    if (ends_with(name, n, ".mci")) return DSMM_FORMAT_MCI;
    return DSMM_FORMAT_AUTO;
}

// Does the first data line look like "label label [weight]"? Two or three printable words.
static int looks_like_abc(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (e == NULL) e = end;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q < e && *q != '#' && *q != '%') {
            int words = 0;
            while (q < e) {
                if ((unsigned char)*q < 32 && *q != '\t' && *q != '\r') return 0;
                if (*q == ' ' || *q == '\t' || *q == '\r') {
                    q++;
                    continue;
                }
                words++;
                while (q < e && *q != ' ' && *q != '\t' && *q != '\r') {
                    if ((unsigned char)*q < 32) return 0;
                    q++;
                }
            }
            return words == 2 || words == 3;
        }
        p = e + 1;
    }
    return 0;
}

dsmm_format dsmmi_format_detect(const char *buf, size_t len, const char *name)
{
    static const char banner[] = "%%matrixmarket";
    size_t bl = sizeof banner - 1;
    if (len >= bl) {
        size_t k = 0;
        while (k < bl) {
            char c = buf[k];
            if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            if (c != banner[k]) break;
            k++;
        }
        if (k == bl) return DSMM_FORMAT_MTX;
    }
    if (len >= 8 && memcmp(buf, "DSMMBIN1", 8) == 0) return DSMM_FORMAT_BIN;
    // mcl's native format: its header line in the first 64 KiB (free text may come first).
    if (dsmmi_mci_find_header(buf, buf + (len < 65536 ? len : 65536))) return DSMM_FORMAT_MCI;
    dsmm_format f = dsmmi_format_from_name(name);
    if (f != DSMM_FORMAT_AUTO) return f;
    if (len > 0 && buf[0] == '%') return DSMM_FORMAT_MTX; // a damaged banner: say so
    return looks_like_abc(buf, len) ? DSMM_FORMAT_ABC : DSMM_FORMAT_MTX;
}

// Parses a loaded source; D non-NULL asks for a dense result (Matrix Market only).
static dsmm_status parse_source(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *o,
                                dsmm_csr **A, dsmm_dense **D, dsmm_labels **labels,
                                dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_file_info local;
    if (info == NULL) info = &local;
    memset(info, 0, sizeof *info);
    info->bytes = src->len;
    info->gzipped = src->gzipped;
    DSMM_CHECK(ctx, src->len > 0, DSMM_ERR_FORMAT, "%s: empty file", src->name);
    dsmm_format fmt = o->format != DSMM_FORMAT_AUTO
                          ? o->format
                          : dsmmi_format_detect(src->buf, src->len, src->name);
    info->format = fmt;
    switch (fmt) {
    case DSMM_FORMAT_MTX:
        DSMM_TRY(dsmmi_mtx_parse(ctx, src, o, A, D, info));
        break;
    case DSMM_FORMAT_ABC:
        DSMM_CHECK(ctx, D == NULL, DSMM_ERR_UNSUPPORTED,
                   "%s: dense reading needs a Matrix Market file", src->name);
        DSMM_TRY(dsmmi_abc_parse(ctx, src, o, A, labels, info));
        break;
    case DSMM_FORMAT_BIN:
        DSMM_CHECK(ctx, D == NULL, DSMM_ERR_UNSUPPORTED,
                   "%s: dense reading needs a Matrix Market file", src->name);
        DSMM_TRY(dsmmi_bin_parse(ctx, src, o, A, info));
        break;
    case DSMM_FORMAT_MCI:
        DSMM_CHECK(ctx, D == NULL, DSMM_ERR_UNSUPPORTED,
                   "%s: dense reading needs a Matrix Market file", src->name);
        DSMM_TRY(dsmmi_mci_parse(ctx, src, o, A, info));
        break;
    default:
        DSMM_FAIL(ctx, DSMM_ERR_ARG, "unknown format %d", (int)fmt);
    }
    info->bytes = src->len;
    info->gzipped = src->gzipped;
cleanup:
    return st;
}

dsmm_status dsmmi_read_check_opts(dsmm_ctx *ctx, const dsmm_read_opts *o)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, o->format >= DSMM_FORMAT_AUTO && o->format <= DSMM_FORMAT_MCI, DSMM_ERR_ARG,
               "read: unknown format %d", (int)o->format);
    DSMM_CHECK(ctx, o->type >= DSMM_PATTERN && o->type <= DSMM_DOUBLE, DSMM_ERR_ARG,
               "read: unknown value type %d", (int)o->type);
    DSMM_CHECK(ctx, o->dup >= DSMM_DUP_SUM && o->dup <= DSMM_DUP_ERROR, DSMM_ERR_ARG,
               "read: unknown duplicate policy %d", (int)o->dup);
    DSMM_CHECK(ctx, o->base == 0 || o->base == 1, DSMM_ERR_ARG,
               "read: index base must be 0 or 1, not %d", o->base);
    DSMM_CHECK(ctx, o->threads >= 0, DSMM_ERR_ARG, "read: threads must be >= 0, not %d",
               o->threads);
    DSMM_CHECK(ctx, o->layout >= DSMM_LAYOUT_ABC && o->layout <= DSMM_LAYOUT_ETC, DSMM_ERR_ARG,
               "read: unknown label layout %d", (int)o->layout);
    DSMM_CHECK(ctx, !o->expect_values || o->layout != DSMM_LAYOUT_ABC, DSMM_ERR_ARG,
               "read: expect_values is for SIF and ETC label files");
cleanup:
    return st;
}

dsmm_status dsmm_read(dsmm_ctx *ctx, const char *path, const dsmm_read_opts *opts, dsmm_csr **A,
                      dsmm_labels **labels, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    dsmm_read_opts o;

    if (A) *A = NULL;
    if (labels) *labels = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "read: invalid context");
    DSMM_CHECK(ctx, path != NULL && A != NULL, DSMM_ERR_ARG, "read: path and A must be non-NULL");
    if (opts)
        o = *opts;
    else
        dsmm_read_opts_init(&o);
    DSMM_TRY(dsmmi_read_check_opts(ctx, &o));
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    DSMM_TRY(parse_source(ctx, &src, &o, A, NULL, labels, info));
cleanup:
    dsmmi_source_free(ctx, &src);
    return st;
}

dsmm_status dsmm_read_buffer(dsmm_ctx *ctx, const char *buf, size_t len, const char *name,
                             const dsmm_read_opts *opts, dsmm_csr **A, dsmm_labels **labels,
                             dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    dsmm_read_opts o;

    if (A) *A = NULL;
    if (labels) *labels = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "read: invalid context");
    DSMM_CHECK(ctx, (buf != NULL || len == 0) && A != NULL, DSMM_ERR_ARG,
               "read: buf and A must be non-NULL");
    if (opts)
        o = *opts;
    else
        dsmm_read_opts_init(&o);
    DSMM_TRY(dsmmi_read_check_opts(ctx, &o));
    DSMM_TRY(dsmmi_source_wrap(ctx, buf, len, name ? name : "(buffer)", &src));
    DSMM_TRY(parse_source(ctx, &src, &o, A, NULL, labels, info));
cleanup:
    dsmmi_source_free(ctx, &src);
    return st;
}

dsmm_status dsmm_read_dense(dsmm_ctx *ctx, const char *path, dsmm_type type, dsmm_dense **D)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    dsmm_read_opts o;

    if (D) *D = NULL;
    DSMM_CHECK(ctx, dsmmi_ctx_ok(ctx), DSMM_ERR_ARG, "read: invalid context");
    DSMM_CHECK(ctx, path != NULL && D != NULL, DSMM_ERR_ARG, "read: path and D must be non-NULL");
    DSMM_CHECK(ctx, type == DSMM_FLOAT || type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "read_dense: type must be float or double, not %s", dsmm_type_name(type));
    dsmm_read_opts_init(&o);
    o.format = DSMM_FORMAT_MTX;
    o.type = type;
    o.keep_pattern = 0;
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    DSMM_TRY(parse_source(ctx, &src, &o, NULL, D, NULL, NULL));
cleanup:
    dsmmi_source_free(ctx, &src);
    return st;
}
