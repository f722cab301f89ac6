// src/io/mci.c: mcl's native matrix format (mcxio(5), what mcxload writes and mcl reads): free
// text, a header "(mclheader mcltype matrix dimensions RxC )", then "(mclmatrix begin", one
// column vector per record "c r[:v] r[:v] ... $" and ")". Entry r of column c is A(r, c), mcl's
// column convention (the edge c -> r); an entry without ":v" weighs 1. Read only; mcl's
// domain sections (mcldoms, mclrows, mclcols: indices that are not 0..R-1) are refused.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

static int is_sp(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Skips blanks and newlines.
static const char *skip_sp(const char *p, const char *end)
{
    while (p < end && is_sp(*p)) p++;
    return p;
}

// A non-negative decimal index at *p (at most 18 digits), or -1; *p moves past it.
static dsmm_idx parse_idx(const char **p, const char *end)
{
    const char *q = *p;
    dsmm_idx v = 0;
    int digits = 0;
    while (q < end && *q >= '0' && *q <= '9' && digits < 19) {
        v = v * 10 + (*q - '0');
        q++;
        digits++;
    }
    if (digits == 0 || digits > 18) return -1;
    *p = q;
    return v;
}

// The length of the token at p (up to a blank, '$' or the end; at most 20), for messages.
static int tok(const char *p, const char *end)
{
    int n = 0;
    while (p + n < end && n < 20 && !is_sp(p[n]) && p[n] != '$') n++;
    return n ? n : (p < end ? 1 : 0);
}

// The word at p equals w and ends there (a blank, '(' or ')' or the end follows).
static int word_is(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 &&
           (p + n == end || is_sp(p[n]) || p[n] == ')' || p[n] == '(');
}

// "(mclheader" at the start of a line (after blanks); free text may come before it.
const char *dsmmi_mci_find_header(const char *buf, const char *end)
{
    const char *p = buf;
    while (p < end) {
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (word_is(q, end, "(mclheader")) return q;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL) break;
        p = nl + 1;
    }
    return NULL;
}

dsmm_status dsmmi_mci_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;
    const char *name = src->name ? src->name : "(buffer)";
    const char *buf = src->buf, *end = src->buf + src->len;
#define LINE(q) ((long long)dsmmi_line_of(buf, (size_t)((q)-buf)))
    *A = NULL;
    const char *p = dsmmi_mci_find_header(buf, end);
    DSMM_CHECK(ctx, p != NULL, DSMM_ERR_FORMAT, "%s: no '(mclheader' line: not mcl's native format",
               name);
    p += strlen("(mclheader");
    // The header: "key value" lines up to ')'.
    dsmm_idx R = -1, C = -1;
    int is_matrix = 0;
    for (;;) {
        p = skip_sp(p, end);
        DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT, "%s: the header does not end with ')'", name);
        if (*p == ')') {
            p++;
            break;
        }
        const char *key = p;
        if (word_is(p, end, "mcltype")) {
            p = skip_sp(p + 7, end);
            DSMM_CHECK(ctx, word_is(p, end, "matrix"), DSMM_ERR_UNSUPPORTED,
                       "%s:%lld: mcltype '%.*s': only 'matrix' is read", name, LINE(p), tok(p, end),
                       p);
            is_matrix = 1;
            p += 6;
        } else if (word_is(p, end, "dimensions")) {
            p = skip_sp(p + 10, end);
            R = parse_idx(&p, end);
            if (R >= 0 && p < end && *p == 'x') {
                p++;
                C = parse_idx(&p, end);
            }
            DSMM_CHECK(ctx, R >= 0 && C >= 0 && (p == end || is_sp(*p) || *p == ')'),
                       DSMM_ERR_FORMAT, "%s:%lld: bad 'dimensions RxC'", name, LINE(key));
        } else {
            // Other header keys (mcl writes none today): skipped to the end of the line.
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            DSMM_CHECK(ctx, nl != NULL, DSMM_ERR_FORMAT, "%s: the header does not end with ')'",
                       name);
            p = nl + 1;
        }
    }
    DSMM_CHECK(ctx, is_matrix && R >= 0, DSMM_ERR_FORMAT,
               "%s: the header lacks 'mcltype matrix' or 'dimensions RxC'", name);
    // mcl's indices are ints; a column vector takes at least 3 bytes ("c $"), so a file that
    // declares far more rows or columns than it could list is corrupt, not sparse: refused
    // before the row pointers are allocated.
    const double room = 8.0 * (double)src->len + 4096.0;
    DSMM_CHECK(ctx, R <= INT32_MAX && C <= INT32_MAX && (double)R <= room && (double)C <= room,
               DSMM_ERR_FORMAT, "%s: dimensions %lldx%lld: more than a file of %zu bytes can hold",
               name, (long long)R, (long long)C, src->len);
    p = skip_sp(p, end);
    DSMM_CHECK(ctx,
               !(word_is(p, end, "(mcldoms") || word_is(p, end, "(mclrows") ||
                 word_is(p, end, "(mclcols")),
               DSMM_ERR_UNSUPPORTED,
               "%s:%lld: mcl domains (indices other than 0..R-1): not supported; write the "
               "graph with canonical domains (mcxload does)",
               name, LINE(p));
    DSMM_CHECK(ctx, word_is(p, end, "(mclmatrix"), DSMM_ERR_FORMAT,
               "%s:%lld: '(mclmatrix' expected after the header", name, LINE(p));
    p = skip_sp(p + 10, end);
    DSMM_CHECK(ctx, word_is(p, end, "begin"), DSMM_ERR_FORMAT,
               "%s:%lld: 'begin' expected after '(mclmatrix'", name, LINE(p));
    p += 5;
    int values = 0; // some entry had ":v"
    DSMM_TRY(dsmm_coo_create(ctx, R, C, 0, DSMM_DOUBLE, &T));
    for (;;) {
        p = skip_sp(p, end);
        DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT, "%s: the matrix does not end with ')'", name);
        if (*p == ')') break;
        const char *at = p;
        dsmm_idx c = parse_idx(&p, end);
        DSMM_CHECK(ctx, c >= 0 && c < C && (p == end || is_sp(*p)), DSMM_ERR_FORMAT,
                   "%s:%lld: column index expected in 0..%lld, found '%.*s'", name, LINE(at),
                   (long long)C - 1, tok(at, end), at);
        for (;;) {
            p = skip_sp(p, end);
            DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT, "%s: column %lld does not end with '$'", name,
                       (long long)c);
            if (*p == '$') {
                p++;
                break;
            }
            const char *e0 = p;
            dsmm_idx r = parse_idx(&p, end);
            DSMM_CHECK(ctx, r >= 0 && r < R, DSMM_ERR_FORMAT,
                       "%s:%lld: row index expected in 0..%lld, found '%.*s'", name, LINE(e0),
                       (long long)R - 1, tok(e0, end), e0);
            double v = 1.0;
            if (p < end && *p == ':') {
                const char *vs = ++p;
                char *ve = NULL;
                errno = 0;
                v = strtod(vs, &ve);
                DSMM_CHECK(ctx,
                           ve != vs && (ve == end || is_sp(*ve) || *ve == '$') &&
                               (isfinite(v) || (opts->allow_nonfinite && !isnan(v))),
                           DSMM_ERR_FORMAT, "%s:%lld: value of entry '%.*s' is not a finite number",
                           name, LINE(e0), tok(e0, end), e0);
                p = ve;
                values = 1;
            }
            DSMM_CHECK(ctx, p == end || is_sp(*p) || *p == '$', DSMM_ERR_FORMAT,
                       "%s:%lld: bad entry '%.*s'", name, LINE(e0), tok(e0, end), e0);
            DSMM_TRY(dsmm_coo_push(T, r, c, v));
        }
    }
    p = skip_sp(p + 1, end);
    DSMM_CHECK(ctx, p == end, DSMM_ERR_FORMAT, "%s:%lld: text after the matrix's ')'", name,
               LINE(p));
    dsmm_type type = opts->type;
    if (!values && opts->keep_pattern) type = DSMM_PATTERN;
    dsmm_idx di = -1, dj = -1;
    st = dsmmi_coo_to_csr(ctx, T, opts->dup, type, A, &di, &dj);
    if (st == DSMM_ERR_FORMAT && di >= 0) {
        dsmm_ctx_clear_error(ctx);
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s: entry %lld of column %lld is listed twice", name,
                  (long long)di, (long long)dj);
    }
    DSMM_TRY(st);
    memset(info, 0, sizeof *info);
    info->format = DSMM_FORMAT_MCI;
    info->field = type == DSMM_PATTERN ? DSMM_MM_PATTERN : DSMM_MM_REAL;
    info->symmetry = DSMM_MM_GENERAL;
    info->nrows = R;
    info->ncols = C;
    info->stored = T->nnz;
    info->bytes = src->len;
    info->gzipped = src->gzipped;
#undef LINE
cleanup:
    if (st != DSMM_OK) dsmm_csr_destroy(A);
    dsmm_coo_destroy(&T);
    return st;
}

dsmm_status dsmmi_mci_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_write_opts *o)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *T = NULL;
    DSMM_CHECK(ctx, f != NULL && A != NULL, DSMM_ERR_ARG, "mci write: f and A must be non-NULL");
    DSMM_CHECK(ctx, A->nrows <= INT32_MAX && A->ncols <= INT32_MAX, DSMM_ERR_ARG,
               "mci write: %lld x %lld: mcl's indices are ints (at most 2147483647)",
               (long long)A->nrows, (long long)A->ncols);
    // mcl lists columns: column c's rows r as "c r:v ... $" (rows of A^T, sorted); a column
    // without entries is not listed (as mcl writes them), a pattern entry is the bare row.
    DSMM_TRY(dsmm_csr_transpose(ctx, A, &T));
    int prec = o ? o->precision : 0;
    int bad = fprintf(f, "(mclheader\nmcltype matrix\ndimensions %lldx%lld\n)\n(mclmatrix\nbegin\n",
                      (long long)A->nrows, (long long)A->ncols) < 0;
    for (dsmm_idx c = 0; c < T->nrows && !bad; c++) {
        if (T->rowptr[c] == T->rowptr[c + 1]) continue;
        bad = fprintf(f, "%lld", (long long)c) < 0;
        for (dsmm_idx k = T->rowptr[c]; k < T->rowptr[c + 1] && !bad; k++) {
            bad = fprintf(f, " %lld", (long long)dsmm_csr_col(T, k)) < 0;
            if (A->type != DSMM_PATTERN && !bad) {
                char num[64];
                double v = dsmm_csr_value(T, k);
                if (prec > 0)
                    snprintf(num, sizeof num, "%.*g", prec, v);
                else
                    dsmmi_format_double(num, v);
                bad = fputc(':', f) == EOF || fputs(num, f) < 0;
            }
        }
        bad = bad || fputs(" $\n", f) < 0;
    }
    bad = bad || fputs(")\n", f) < 0;
    DSMM_CHECK(ctx, !bad && !ferror(f), DSMM_ERR_IO, "mci write failed");
cleanup:
    dsmm_csr_destroy(&T);
    return st;
}
