// src/io/abc.c: mcl "abc" label triples ("label1 label2 [weight]" per line), and mcl's SIF
// and ETC label layouts ("source [relation] target ..."): parser, and the abc writer.
// Labels get indices in order of first appearance; the result is the square n x n matrix of
// the edges as listed (directed: mcl makes it symmetric itself). One sequential pass, because
// the label dictionary must see the labels in file order; the triples then go through
// COO -> CSR, which also finds duplicates. Line numbers of a duplicate are found again by a
// second scan, on the error path only, so the fast path stores no line numbers.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static dsmm_idx count_lines(const char *buf, size_t off)
{
    dsmm_idx line = 1;
    const char *p = buf, *end = buf + off;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        line++;
        p++;
    }
    return line;
}

// One data line split into fields; nf counts all of them, at most 3 are kept.
typedef struct abc_line {
    const char *f[3];
    size_t len[3];
    int nf;
} abc_line;

static void split_line(const char *p, const char *end, abc_line *ln)
{
    ln->nf = 0;
    while (p < end) {
        while (p < end && is_blank(*p)) p++;
        if (p == end) break;
        if (ln->nf == 0 && *p == '#') break; // a comment line
        const char *s = p;
        while (p < end && !is_blank(*p)) p++;
        if (ln->nf < 3) {
            ln->f[ln->nf] = s;
            ln->len[ln->nf] = (size_t)(p - s);
        }
        ln->nf++;
        if (ln->nf > 3) break;
    }
}

// Next line of src from *pos: [*p, *end); advances *pos past the newline.
static void next_line(const dsmmi_source *src, size_t *pos, const char **p, const char **end)
{
    *p = src->buf + *pos;
    const char *nl = memchr(*p, '\n', src->len - *pos);
    *end = nl ? nl : src->buf + src->len;
    *pos = nl ? (size_t)(nl - src->buf) + 1 : src->len;
}

// Error path of a duplicate (i, j): the lines of its first two occurrences.
static void find_dup_lines(const dsmmi_source *src, dsmm_labels *L, dsmm_idx i, dsmm_idx j,
                           dsmm_idx *l1, dsmm_idx *l2)
{
    size_t pos = 0;
    dsmm_idx line = 0;
    *l1 = *l2 = 0;
    while (pos < src->len) {
        const char *p, *end;
        abc_line ln;
        next_line(src, &pos, &p, &end);
        line++;
        split_line(p, end, &ln);
        if (ln.nf < 2) continue;
        dsmm_idx a = -1, b = -1;
        if (dsmmi_labels_intern(L, ln.f[0], ln.len[0], &a) != DSMM_OK) return;
        if (dsmmi_labels_intern(L, ln.f[1], ln.len[1], &b) != DSMM_OK) return;
        if (a != i || b != j) continue;
        if (*l1 == 0) {
            *l1 = line;
        } else {
            *l2 = line;
            return;
        }
    }
}

// Grows the triple arrays (and values, once any weight was seen) to hold cap entries.
static dsmm_status grow(dsmm_ctx *ctx, dsmm_idx **rows, dsmm_idx **cols, double **vals, size_t cap)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *r = dsmmi_realloc(ctx, *rows, cap, sizeof *r);
    DSMM_CHECK(ctx, r != NULL, DSMM_ERR_NOMEM, "abc: %zu edges", cap);
    *rows = r;
    dsmm_idx *c = dsmmi_realloc(ctx, *cols, cap, sizeof *c);
    DSMM_CHECK(ctx, c != NULL, DSMM_ERR_NOMEM, "abc: %zu edges", cap);
    *cols = c;
    if (*vals) {
        double *v = dsmmi_realloc(ctx, *vals, cap, sizeof *v);
        DSMM_CHECK(ctx, v != NULL, DSMM_ERR_NOMEM, "abc: %zu weights", cap);
        *vals = v;
    }
cleanup:
    return st;
}

// Room for edge m: the arrays grown when full, and the values allocated at the first weight
// (weighted: this edge has one, or a transform gives it one), the earlier edges weighing 1.
static dsmm_status room(dsmm_ctx *ctx, dsmm_idx **rows, dsmm_idx **cols, double **vals, size_t m,
                        size_t *cap, int weighted)
{
    dsmm_status st = DSMM_OK;
    if (m == *cap) {
        size_t ncap = *cap ? 2 * *cap : 1024;
        DSMM_TRY(grow(ctx, rows, cols, vals, ncap));
        *cap = ncap;
    }
    if (weighted && *vals == NULL) {
        *vals = dsmmi_malloc(ctx, *cap, sizeof **vals);
        DSMM_CHECK(ctx, *vals != NULL, DSMM_ERR_NOMEM, "abc: %zu weights", *cap);
        for (size_t k = 0; k < m; k++) (*vals)[k] = 1.0;
    }
cleanup:
    return st;
}

// SIF / ETC: the fields of one line, [p, end), as label ranges; *nf of them (at most cap).
static int split_fields(const char *p, const char *end, const char **f, size_t *len, int cap)
{
    int nf = 0;
    while (p < end) {
        while (p < end && is_blank(*p)) p++;
        if (p == end || (nf == 0 && *p == '#')) break; // the end, or a comment line
        const char *s = p;
        while (p < end && !is_blank(*p)) p++;
        if (nf == cap) return -1;
        f[nf] = s;
        len[nf++] = (size_t)(p - s);
    }
    return nf;
}

// mcl's --expect-values field "label:w": the label's length and w when the text after the
// last ':' is a finite number, else the whole field and 1.
static size_t field_value(const char *f, size_t len, double *w)
{
    *w = 1.0;
    const char *colon = NULL;
    for (size_t k = len; k > 0; k--)
        if (f[k - 1] == ':') {
            colon = f + k - 1;
            break;
        }
    if (colon == NULL || colon == f || colon + 1 == f + len) return len;
    char num[64];
    size_t nl = (size_t)(f + len - colon - 1);
    if (nl >= sizeof num) return len;
    memcpy(num, colon + 1, nl);
    num[nl] = '\0';
    char *e = NULL;
    errno = 0;
    double x = strtod(num, &e);
    if (e != num + nl || !isfinite(x)) return len;
    *w = x;
    return (size_t)(colon - f);
}

dsmm_status dsmmi_abc_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_labels **labels, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_labels *L = NULL;
    dsmm_idx *rows = NULL, *cols = NULL;
    double *vals = NULL;
    void *tval = NULL; // values in the result's type
    size_t m = 0, cap = 0;
    const char **fields = NULL; // SIF / ETC: one line's fields
    size_t *flen = NULL;
    const char *name = src->name ? src->name : "(buffer)";
    dsmm_idx line = 0;

    *A = NULL;
    if (labels) *labels = NULL;
    const char *nul = memchr(src->buf, '\0', src->len);
    if (nul != NULL)
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s:%lld: NUL byte in a text file (not abc?)", name,
                  (long long)count_lines(src->buf, (size_t)(nul - src->buf)));
    DSMM_TRY(dsmmi_labels_create(ctx, &L));

    size_t pos = 0;
    int fcap = 0;
    if (opts->layout != DSMM_LAYOUT_ABC) {
        fcap = 1024;
        fields = dsmmi_malloc(ctx, (size_t)fcap, sizeof *fields);
        flen = dsmmi_malloc(ctx, (size_t)fcap, sizeof *flen);
        DSMM_CHECK(ctx, fields && flen, DSMM_ERR_NOMEM, "%s: line fields", name);
    }
    while (pos < src->len) {
        const char *p, *end;
        abc_line ln;
        next_line(src, &pos, &p, &end);
        line++;
        DSMM_CHECK(ctx, (size_t)(end - p) <= DSMMI_MAX_LINE, DSMM_ERR_FORMAT,
                   "%s:%lld: line longer than %zu bytes", name, (long long)line, DSMMI_MAX_LINE);
        if (opts->layout != DSMM_LAYOUT_ABC) {
            int nf;
            while ((nf = split_fields(p, end, fields, flen, fcap)) < 0) {
                const char **nfp = dsmmi_realloc(ctx, fields, 2 * (size_t)fcap, sizeof *nfp);
                if (nfp) fields = nfp;
                size_t *nlp = nfp ? dsmmi_realloc(ctx, flen, 2 * (size_t)fcap, sizeof *nlp) : NULL;
                if (nlp) flen = nlp;
                DSMM_CHECK(ctx, nfp && nlp, DSMM_ERR_NOMEM, "%s:%lld: line fields", name,
                           (long long)line);
                fcap *= 2;
            }
            if (nf == 0) continue;
            dsmm_idx s0 = -1;
            st = dsmmi_labels_intern(L, fields[0], flen[0], &s0);
            int first = opts->layout == DSMM_LAYOUT_SIF ? 2 : 1; // SIF: the relation is skipped
            for (int t = first; t < nf && st == DSMM_OK; t++) {
                double w = 1.0;
                size_t ll = opts->expect_values ? field_value(fields[t], flen[t], &w) : flen[t];
                if (opts->abc_map) {
                    double w0 = w;
                    w = opts->abc_map(opts->abc_map_arg, w);
                    DSMM_CHECK(ctx, !isnan(w) && (isfinite(w) || opts->allow_nonfinite),
                               DSMM_ERR_FORMAT,
                               "%s:%lld: weight %g becomes %g after the transforms", name,
                               (long long)line, w0, w);
                }
                DSMM_TRY(room(ctx, &rows, &cols, &vals, m, &cap,
                              opts->expect_values || opts->abc_map != NULL));
                rows[m] = s0;
                st = dsmmi_labels_intern(L, fields[t], ll, &cols[m]);
                if (vals) vals[m] = w;
                m++;
            }
            if (st != DSMM_OK) {
                dsmm_ctx_clear_error(ctx);
                DSMM_FAIL(ctx, st, "%s:%lld: too many labels (%lld) for the memory budget", name,
                          (long long)line, (long long)dsmm_labels_count(L));
            }
            continue;
        }
        split_line(p, end, &ln);
        if (ln.nf == 0) continue;
        DSMM_CHECK(ctx, ln.nf != 1, DSMM_ERR_FORMAT,
                   "%s:%lld: one field; expected 'label1 label2 [weight]'", name, (long long)line);
        DSMM_CHECK(ctx, ln.nf <= 3, DSMM_ERR_FORMAT,
                   "%s:%lld: more than 3 fields; expected 'label1 label2 [weight]'", name,
                   (long long)line);
        double w = 1.0;
        if (ln.nf == 3) {
            char *e = NULL;
            errno = 0;
            w = strtod(ln.f[2], &e);
            DSMM_CHECK(ctx, e == ln.f[2] + ln.len[2], DSMM_ERR_FORMAT,
                       "%s:%lld: weight '%.*s' is not a number", name, (long long)line,
                       (int)(ln.len[2] > 40 ? 40 : ln.len[2]), ln.f[2]);
            DSMM_CHECK(ctx, isfinite(w) || opts->allow_nonfinite, DSMM_ERR_FORMAT,
                       "%s:%lld: weight '%.*s' is not finite", name, (long long)line,
                       (int)(ln.len[2] > 40 ? 40 : ln.len[2]), ln.f[2]);
        }
        if (opts->abc_map) {
            w = opts->abc_map(opts->abc_map_arg, w);
            DSMM_CHECK(ctx, !isnan(w) && (isfinite(w) || opts->allow_nonfinite), DSMM_ERR_FORMAT,
                       "%s:%lld: weight '%.*s' becomes %g after the transforms", name,
                       (long long)line, ln.nf == 3 ? (int)(ln.len[2] > 40 ? 40 : ln.len[2]) : 1,
                       ln.nf == 3 ? ln.f[2] : "1", w);
        }
        DSMM_TRY(room(ctx, &rows, &cols, &vals, m, &cap, ln.nf == 3 || opts->abc_map != NULL));
        st = dsmmi_labels_intern(L, ln.f[0], ln.len[0], &rows[m]);
        if (st == DSMM_OK) st = dsmmi_labels_intern(L, ln.f[1], ln.len[1], &cols[m]);
        if (st != DSMM_OK) {
            dsmm_ctx_clear_error(ctx);
            DSMM_FAIL(ctx, st, "%s:%lld: too many labels (%lld) for the memory budget", name,
                      (long long)line, (long long)dsmm_labels_count(L));
        }
        if (vals) vals[m] = w;
        m++;
    }
    // SIF and ETC may name vertices without edges; abc cannot.
    if (opts->layout == DSMM_LAYOUT_ABC)
        DSMM_CHECK(ctx, m > 0, DSMM_ERR_FORMAT, "%s: contains no edges", name);
    else
        DSMM_CHECK(ctx, dsmm_labels_count(L) > 0, DSMM_ERR_FORMAT, "%s: names no vertices", name);

    dsmm_type type = opts->type;
    if (vals == NULL && opts->keep_pattern) type = DSMM_PATTERN;
    if (type == DSMM_DOUBLE && vals == NULL) {
        vals = dsmmi_malloc(ctx, m, sizeof *vals);
        DSMM_CHECK(ctx, vals != NULL, DSMM_ERR_NOMEM, "abc: %zu weights", m);
        for (size_t k = 0; k < m; k++) vals[k] = 1.0;
    }
    if (type == DSMM_DOUBLE) {
        tval = vals;
        vals = NULL;
    } else if (type == DSMM_FLOAT) {
        float *fv = dsmmi_malloc(ctx, m, sizeof *fv);
        DSMM_CHECK(ctx, fv != NULL, DSMM_ERR_NOMEM, "abc: %zu weights", m);
        for (size_t k = 0; k < m; k++) fv[k] = vals ? (float)vals[k] : 1.0f;
        tval = fv;
        vals = dsmmi_free(ctx, vals);
    } else {
        vals = dsmmi_free(ctx, vals);
    }

    dsmm_idx n = dsmm_labels_count(L);
    dsmm_coo T = {.nrows = n,
                  .ncols = n,
                  .nnz = (dsmm_idx)m,
                  .cap = (dsmm_idx)cap,
                  .row = rows,
                  .col = cols,
                  .val = tval,
                  .type = type,
                  .ctx = ctx};
    dsmm_idx di = -1, dj = -1;
    st = dsmmi_coo_to_csr(ctx, &T, opts->dup, type, A, &di, &dj);
    if (st == DSMM_ERR_FORMAT && opts->dup == DSMM_DUP_ERROR && di >= 0 && dj >= 0 &&
        opts->layout == DSMM_LAYOUT_ABC) {
        dsmm_idx l1, l2;
        find_dup_lines(src, L, di, dj, &l1, &l2);
        dsmm_ctx_clear_error(ctx);
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s:%lld: duplicate edge (%s, %s), first on line %lld",
                  name, (long long)l2, dsmm_labels_name(L, di), dsmm_labels_name(L, dj),
                  (long long)l1);
    }
    DSMM_TRY(st);

    if (info) {
        memset(info, 0, sizeof *info);
        info->format = DSMM_FORMAT_ABC;
        info->field = type == DSMM_PATTERN ? DSMM_MM_PATTERN : DSMM_MM_REAL;
        info->symmetry = DSMM_MM_GENERAL;
        info->nrows = info->ncols = n;
        info->stored = (dsmm_idx)m;
        info->bytes = src->len;
        info->gzipped = src->gzipped;
    }
    if (labels) {
        *labels = L;
        L = NULL;
    }
cleanup:
    if (st != DSMM_OK) dsmm_csr_destroy(A);
    dsmm_labels_destroy(&L);
    dsmmi_free(ctx, rows);
    dsmmi_free(ctx, cols);
    dsmmi_free(ctx, vals);
    dsmmi_free(ctx, tval);
    dsmmi_free(ctx, fields);
    dsmmi_free(ctx, flen);
    return st;
}

// A label as text: the dictionary's name, else the 0-based index.
static int put_label(FILE *f, const dsmm_labels *labels, dsmm_idx i)
{
    if (labels) return fputs(dsmm_labels_name(labels, i), f) < 0 ? -1 : 0;
    return fprintf(f, "%lld", (long long)i) < 0 ? -1 : 0;
}

dsmm_status dsmmi_abc_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_labels *labels,
                            const dsmm_write_opts *o)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, f != NULL && A != NULL, DSMM_ERR_ARG, "abc write: f and A must be non-NULL");
    if (labels) {
        dsmm_idx need = A->nrows > A->ncols ? A->nrows : A->ncols;
        DSMM_CHECK(ctx, dsmm_labels_count(labels) >= need, DSMM_ERR_ARG,
                   "abc write: %lld labels for a %lld x %lld matrix",
                   (long long)dsmm_labels_count(labels), (long long)A->nrows, (long long)A->ncols);
    }
    int prec = o ? o->precision : 0;
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            char num[64];
            int bad = put_label(f, labels, i) || fputc('\t', f) == EOF ||
                      put_label(f, labels, dsmm_csr_col(A, k));
            if (A->type != DSMM_PATTERN) {
                double v = dsmm_csr_value(A, k);
                if (prec > 0)
                    snprintf(num, sizeof num, "%.*g", prec, v);
                else
                    dsmmi_format_double(num, v);
                bad = bad || fputc('\t', f) == EOF || fputs(num, f) < 0;
            }
            bad = bad || fputc('\n', f) == EOF;
            DSMM_CHECK(ctx, !bad && !ferror(f), DSMM_ERR_IO, "abc write failed");
        }
    }
cleanup:
    return st;
}
