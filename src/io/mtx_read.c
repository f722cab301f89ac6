// src/io/mtx_read.c: Matrix Market reader: header checks, multi-threaded parsing of the data
// section and CSR assembly (symmetric and skew storage expanded, duplicates per policy).
//
// Method: the data section is split at newline boundaries into one chunk per thread. Pass 1
// counts the entry lines of each chunk (and rejects over-long lines), so pass 2 can parse
// every chunk straight into its final slot of the triple arrays. Integers are parsed by hand;
// reals take Clinger's exact fast path (mantissa <= 2^53, |exponent| <= 22: one exact multiply
// or divide by an exact power of ten is correctly rounded) and fall back to strtod otherwise,
// so every value reads back bit-exactly. Errors only record a byte offset while parsing; the
// line number is counted afterwards, on the error path only.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "io/io.h"

// The per-entry helpers must inline into the parsing loops (a call per field costs ~15%).
#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

typedef dsmmi_mtx_header mtx_header;

// First error of one thread: where (byte offset of the line) and what.
typedef struct thread_err {
    int set;
    dsmm_status code;
    size_t off;
    char msg[256];
} thread_err;

// What the parsing threads share (read-only) and where they write.
typedef struct parse_job {
    const char *buf;
    const mtx_header *h;
    int base;
    int allow_nonfinite;
    int float_out; // values end up as floats: finite doubles beyond FLT_MAX are errors
    dsmm_idx *I, *J;
    double *V; // NULL for pattern files
} parse_job;

static ALWAYS_INLINE int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static ALWAYS_INLINE const char *skip_ws(const char *p)
{
    while (is_ws(*p)) p++;
    return p;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

// Case-insensitive: does the word [p, p + n) equal w?
static int word_is(const char *p, size_t n, const char *w)
{
    size_t m = strlen(w);
    if (n != m) return 0;
    for (size_t k = 0; k < n; k++)
        if (lower((unsigned char)p[k]) != w[k]) return 0;
    return 1;
}

// Copies the token at p (up to the next whitespace or line end, at most 32 characters) into
// out for messages, escaping what is not printable so binary garbage stays readable.
static const char *tok_str(const char *p, const char *e, char *out, size_t cap)
{
    size_t n = 0;
    if (p >= e) {
        snprintf(out, cap, "end of line");
        return out;
    }
    out[n++] = '\'';
    int k = 0;
    for (; p < e && !is_ws(*p) && k < 32 && n + 6 < cap; p++, k++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 32 && c < 127) {
            out[n++] = (char)c;
        } else {
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
        }
    }
    if (k == 32 && p < e && !is_ws(*p) && n + 4 < cap) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n++] = '\'';
    out[n] = '\0';
    return out;
}

static const char *line_end(const char *p, const char *end)
{
    const char *e = memchr(p, '\n', (size_t)(end - p));
    return e ? e : end;
}

static void set_err(thread_err *err, dsmm_status code, size_t off, const char *fmt, ...)
    DSMMI_PRINTF(4, 5);
static void set_err(thread_err *err, dsmm_status code, size_t off, const char *fmt, ...)
{
    if (err->set) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->set = 1;
    err->code = code;
    err->off = off;
}

/* ------------------------------------------------------------------------------------------ */
/* Numbers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Does a token end at p? Lines end at '\n' or at lim (the end of the input or chunk), so the
// parsers need not find the line end first.
static ALWAYS_INLINE int ends_tok(const char *p, const char *lim)
{
    return p == lim || *p == '\n' || is_ws(*p);
}

// A signed decimal integer token ending at whitespace or the line end. 0 on success.
static ALWAYS_INLINE int parse_int(const char **pp, const char *e, int64_t *out)
{
    const char *p = *pp;
    int neg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    const char *s = p;
    uint64_t v = 0;
    while ((unsigned)(*p - '0') < 10u) v = v * 10 + (uint64_t)(*p++ - '0');
    // 19 digits cannot overflow uint64; anything above INT64_MAX is rejected.
    if (p == s || p - s > 19 || v > (uint64_t)INT64_MAX || !ends_tok(p, e)) return -1;
    *out = neg ? -(int64_t)v : (int64_t)v;
    *pp = p;
    return 0;
}

// A real token ending at whitespace or the line end. 0 on success.
static int parse_real(const char **pp, const char *e, double *out)
{
    const char *p = *pp;
    int neg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    uint64_t m = 0;
    int digits = 0, exp10 = 0, any = 0;
    while (*p == '0') {
        p++;
        any = 1;
    }
    while ((unsigned)(*p - '0') < 10u) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            digits++;
        } else {
            exp10++;
            if (*p != '0') digits = 99; // inexact: leave it to strtod
        }
        p++;
        any = 1;
    }
    if (*p == '.') {
        p++;
        if (m == 0) {
            while (*p == '0') {
                p++;
                exp10--;
                any = 1;
            }
        }
        while ((unsigned)(*p - '0') < 10u) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                digits++;
                exp10--;
            } else if (*p != '0') {
                digits = 99;
            }
            p++;
            any = 1;
        }
    }
    if (!any) goto slow;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '-' || *p == '+') eneg = *p++ == '-';
        if ((unsigned)(*p - '0') >= 10u) return -1;
        int ev = 0;
        while ((unsigned)(*p - '0') < 10u) {
            if (ev < 100000) ev = ev * 10 + (*p - '0');
            p++;
        }
        exp10 += eneg ? -ev : ev;
    }
    if (!ends_tok(p, e)) goto slow;
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        *pp = p;
        return 0;
    }
    if (digits <= 19 && m <= ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)m;
        v = exp10 >= 0 ? v * pow10_exact[exp10] : v / pow10_exact[-exp10];
        *out = neg ? -v : v;
        *pp = p;
        return 0;
    }
slow:;
    // strtod stops at the whitespace (or NUL) that ends the token: the buffer is terminated.
    char *end = NULL;
    double v = strtod(*pp, &end);
    if (end == *pp || !ends_tok(end, e)) return -1;
    *out = v;
    *pp = end;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Header                                                                                      */
/* ------------------------------------------------------------------------------------------ */

// partial: src is a prefix of the file, so only its complete lines are looked at, and running
// out of them before the size line sets *more instead of failing.
static dsmm_status parse_header(dsmm_ctx *ctx, const dsmmi_source *src, int partial, mtx_header *h,
                                int *more)
{
    dsmm_status st = DSMM_OK;
    const char *buf = src->buf, *end = src->buf + src->len, *name = src->name;
    char tok[160];

    memset(h, 0, sizeof *h);
    *more = 0;
    if (partial) {
        const char *last = end;
        while (last > buf && last[-1] != '\n') last--;
        // No complete line yet: ask for more, unless the first line is already too long.
        if (last == buf && src->len <= DSMMI_MAX_LINE) {
            *more = 1;
            return DSMM_OK;
        }
        if (last > buf) end = last;
    }
    const char *e = line_end(buf, end);
    DSMM_CHECK(ctx, (size_t)(e - buf) <= DSMMI_MAX_LINE, DSMM_ERR_FORMAT,
               "%s:1: line longer than 1 MiB", name);
    static const char magic[] = "%%matrixmarket";
    size_t ml = sizeof magic - 1;
    if ((size_t)(e - buf) < ml || !word_is(buf, ml, magic)) {
        if (e - buf >= 2 && buf[0] == '%' && buf[1] == '%')
            DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                      "%s:1: bad banner %s, expected '%%%%MatrixMarket matrix ...'", name,
                      tok_str(buf, e, tok, sizeof tok));
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s:1: missing %%%%MatrixMarket banner (found %s)", name,
                  tok_str(skip_ws(buf), e, tok, sizeof tok));
    }
    const char *p = buf + ml;
    DSMM_CHECK(ctx, p == e || is_ws(*p), DSMM_ERR_FORMAT,
               "%s:1: bad banner %s, expected '%%%%MatrixMarket matrix ...'", name,
               tok_str(buf, e, tok, sizeof tok));
    const char *w[4];
    size_t wl[4];
    int nw = 0;
    for (;;) {
        p = skip_ws(p);
        if (p >= e) break;
        const char *s = p;
        while (p < e && !is_ws(*p)) p++;
        DSMM_CHECK(ctx, nw < 4, DSMM_ERR_FORMAT,
                   "%s:1: unexpected word %s at the end of the banner", name,
                   tok_str(s, e, tok, sizeof tok));
        w[nw] = s;
        wl[nw++] = (size_t)(p - s);
    }
    DSMM_CHECK(ctx, nw == 4, DSMM_ERR_FORMAT,
               "%s:1: banner has %d words after %%%%MatrixMarket, expected 4 (matrix format "
               "field symmetry)",
               name, nw);
    DSMM_CHECK(ctx, word_is(w[0], wl[0], "matrix"), DSMM_ERR_FORMAT,
               "%s:1: unknown object %s in banner, expected 'matrix'", name,
               tok_str(w[0], e, tok, sizeof tok));
    if (word_is(w[1], wl[1], "coordinate"))
        h->array = 0;
    else if (word_is(w[1], wl[1], "array"))
        h->array = 1;
    else
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "%s:1: unknown format %s in banner, expected 'coordinate' or 'array'", name,
                  tok_str(w[1], e, tok, sizeof tok));
    if (word_is(w[2], wl[2], "real") || word_is(w[2], wl[2], "double"))
        h->field = DSMM_MM_REAL;
    else if (word_is(w[2], wl[2], "integer"))
        h->field = DSMM_MM_INTEGER;
    else if (word_is(w[2], wl[2], "pattern"))
        h->field = DSMM_MM_PATTERN;
    else if (word_is(w[2], wl[2], "complex"))
        DSMM_FAIL(ctx, DSMM_ERR_UNSUPPORTED, "%s:1: complex matrices are not supported", name);
    else
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "%s:1: unknown field %s in banner, expected real, integer or pattern", name,
                  tok_str(w[2], e, tok, sizeof tok));
    if (word_is(w[3], wl[3], "general"))
        h->sym = DSMM_MM_GENERAL;
    else if (word_is(w[3], wl[3], "symmetric"))
        h->sym = DSMM_MM_SYMMETRIC;
    else if (word_is(w[3], wl[3], "skew-symmetric"))
        h->sym = DSMM_MM_SKEW;
    else if (word_is(w[3], wl[3], "hermitian"))
        DSMM_FAIL(ctx, DSMM_ERR_UNSUPPORTED, "%s:1: complex matrices are not supported (hermitian)",
                  name);
    else
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "%s:1: unknown symmetry %s in banner, expected general, symmetric or "
                  "skew-symmetric",
                  name, tok_str(w[3], e, tok, sizeof tok));
    DSMM_CHECK(ctx, !(h->array && h->field == DSMM_MM_PATTERN), DSMM_ERR_FORMAT,
               "%s:1: an array file cannot have field pattern", name);

    // Comments and blank lines, then the size line.
    dsmm_idx line = 1;
    p = e < end ? e + 1 : end;
    for (;;) {
        if (partial && p >= end) {
            *more = 1;
            return DSMM_OK;
        }
        DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT,
                   "%s:%lld: missing size line (the file ends after the header)", name,
                   (long long)line + (e < end ? 1 : 0));
        line++;
        e = line_end(p, end);
        DSMM_CHECK(ctx, (size_t)(e - p) <= DSMMI_MAX_LINE, DSMM_ERR_FORMAT,
                   "%s:%lld: line longer than 1 MiB", name, (long long)line);
        const char *q = skip_ws(p);
        if (q < e && *q != '%') {
            p = q;
            break;
        }
        p = e < end ? e + 1 : end;
        if (e == end) {
            DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                      "%s:%lld: missing size line (the file ends after the header)", name,
                      (long long)line);
        }
    }
    h->size_line = line;
    int need = h->array ? 2 : 3;
    int64_t v[3] = {0, 0, 0};
    static const char *what[3] = {"rows", "columns", "entries"};
    for (int k = 0; k < need; k++) {
        p = skip_ws(p);
        DSMM_CHECK(ctx, p < e, DSMM_ERR_FORMAT,
                   "%s:%lld: size line needs %d numbers (%s), found %d", name, (long long)line,
                   need, h->array ? "rows columns" : "rows columns entries", k);
        DSMM_CHECK(ctx, parse_int(&p, e, &v[k]) == 0, DSMM_ERR_FORMAT,
                   "%s:%lld: malformed size line: expected the number of %s, found %s", name,
                   (long long)line, what[k], tok_str(p, e, tok, sizeof tok));
        DSMM_CHECK(ctx, v[k] >= 0, DSMM_ERR_FORMAT, "%s:%lld: negative size %lld (%s)", name,
                   (long long)line, (long long)v[k], what[k]);
    }
    p = skip_ws(p);
    DSMM_CHECK(ctx, p >= e, DSMM_ERR_FORMAT, "%s:%lld: trailing garbage %s after the size line",
               name, (long long)line, tok_str(p, e, tok, sizeof tok));
    h->nrows = v[0];
    h->ncols = v[1];
    if (h->sym != DSMM_MM_GENERAL)
        DSMM_CHECK(ctx, h->nrows == h->ncols, DSMM_ERR_FORMAT,
                   "%s:%lld: %s matrix must be square, but it is %lld x %lld", name,
                   (long long)line, h->sym == DSMM_MM_SKEW ? "skew-symmetric" : "symmetric",
                   (long long)h->nrows, (long long)h->ncols);
    if (h->array) {
        size_t cells = 0;
        dsmm_idx n = h->nrows;
        if (h->sym == DSMM_MM_GENERAL) {
            DSMM_CHECK(ctx,
                       dsmmi_mul_ok((size_t)h->nrows, (size_t)h->ncols, &cells) &&
                           cells <= (size_t)INT64_MAX,
                       DSMM_ERR_FORMAT, "%s:%lld: array size %lld x %lld overflows 64 bits", name,
                       (long long)line, (long long)h->nrows, (long long)h->ncols);
        } else {
            size_t a = (size_t)n,
                   b = (size_t)(h->sym == DSMM_MM_SKEW ? (n > 0 ? n - 1 : 0) : n + 1);
            if (a % 2 == 0)
                a /= 2;
            else
                b /= 2;
            DSMM_CHECK(ctx, dsmmi_mul_ok(a, b, &cells) && cells <= (size_t)INT64_MAX,
                       DSMM_ERR_FORMAT, "%s:%lld: array size %lld x %lld overflows 64 bits", name,
                       (long long)line, (long long)n, (long long)n);
        }
        h->stored = (dsmm_idx)cells;
    } else {
        h->stored = v[2];
    }
    h->data_off = (size_t)((e < end ? e + 1 : end) - src->buf);
cleanup:
    return st;
}

dsmm_status dsmmi_mtx_header_parse(dsmm_ctx *ctx, const dsmmi_source *src, int partial,
                                   dsmmi_mtx_header *h, int *more)
{
    dsmm_status st = DSMM_OK;
    int dummy = 0;
    DSMM_CHECK(ctx, src != NULL && src->buf != NULL && h != NULL, DSMM_ERR_ARG,
               "mtx header: source and header must be non-NULL");
    DSMM_TRY(parse_header(ctx, src, partial, h, more ? more : &dummy));
cleanup:
    return st;
}

dsmm_status dsmmi_mtx_check_fits(dsmm_ctx *ctx, const char *name, const dsmmi_mtx_header *h,
                                 size_t avail)
{
    dsmm_status st = DSMM_OK;
    size_t min_len = h->array ? 2 : 4; // "1\n" and "1 1\n"
    DSMM_CHECK(ctx, (size_t)h->stored <= (avail + 1) / min_len, DSMM_ERR_NOMEM,
               "%s:%lld: declares %lld entries but only %zu bytes follow (each entry needs at "
               "least %zu): a wrong size line or a truncated file",
               name, (long long)h->size_line, (long long)h->stored, avail, min_len);
cleanup:
    return st;
}

// Rejects declared sizes the input cannot hold or the budget cannot afford, before any
// allocation: a 40-byte file declaring 10^15 entries must fail at once.
static dsmm_status check_declared(dsmm_ctx *ctx, const dsmmi_source *src, const mtx_header *h,
                                  size_t bytes_per_entry)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(dsmmi_mtx_check_fits(ctx, src->name, h, src->len - h->data_off));
    size_t need = 0, rows = 0;
    // Row pointers and cursors (or the dense array) come on top of the entries.
    size_t per_row = h->array ? 0 : 2 * sizeof(dsmm_idx);
    DSMM_CHECK(ctx,
               dsmmi_mul_ok((size_t)h->stored, bytes_per_entry, &need) &&
                   dsmmi_mul_ok((size_t)h->nrows + 1, per_row, &rows) && need <= SIZE_MAX - rows,
               DSMM_ERR_NOMEM, "%s:%lld: declares %lld x %lld with %lld entries, too many to hold",
               src->name, (long long)h->size_line, (long long)h->nrows, (long long)h->ncols,
               (long long)h->stored);
    need += rows;
    size_t budget = dsmm_ctx_mem_budget(ctx), in_use = dsmm_ctx_mem_in_use(ctx);
    DSMM_CHECK(ctx, budget == 0 || (need <= budget && in_use <= budget - need), DSMM_ERR_NOMEM,
               "%s:%lld: declares %lld entries (%lld rows), which need %zu bytes, more than the "
               "memory budget allows (%zu of %zu bytes in use)",
               src->name, (long long)h->size_line, (long long)h->stored, (long long)h->nrows, need,
               in_use, budget);
cleanup:
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Data section: chunks, pass 1 (count), pass 2 (parse)                                        */
/* ------------------------------------------------------------------------------------------ */

// Counts entry lines (not blank, not a comment) in [p, end) and rejects over-long lines.
static dsmm_idx count_chunk(const char *buf, const char *p, const char *end, thread_err *err)
{
    dsmm_idx n = 0;
    while (p < end) {
        const char *e = line_end(p, end);
        if ((size_t)(e - p) > DSMMI_MAX_LINE) {
            set_err(err, DSMM_ERR_FORMAT, (size_t)(p - buf), "line longer than 1 MiB");
            return n;
        }
        const char *q = skip_ws(p);
        if (q < e && *q != '%') n++;
        p = e + 1;
    }
    return n;
}

// Records a line error; finds the line end (for the token shown) only on this path.
#define LINE_ERR(...)                                                                              \
    do {                                                                                           \
        e = line_end(p, end);                                                                      \
        set_err(err, DSMM_ERR_FORMAT, (size_t)(p - buf), __VA_ARGS__);                             \
        return;                                                                                    \
    } while (0)

// Parses the value token at *qq (real or integer field) into *v. 0 on success.
static int parse_value(const parse_job *J, const char **qq, const char *end, double *v,
                       const char **what)
{
    if (J->h->field == DSMM_MM_INTEGER) {
        int64_t iv;
        *what = "an integer";
        if (parse_int(qq, end, &iv) != 0) return -1;
        *v = (double)iv;
        return 0;
    }
    *what = "a real";
    if (parse_real(qq, end, v) != 0) return -1;
    if (!J->allow_nonfinite && !isfinite(*v)) return 1;
    if (!J->allow_nonfinite && J->float_out && !isfinite((float)*v)) return 2;
    return 0;
}

// Lines end at '\n' or at `end` (the chunk ends right after a newline, or at the end of the
// input), so the common path never searches for the line end.
static void parse_coord_chunk(const parse_job *J, const char *p, const char *end, dsmm_idx k,
                              dsmm_idx kend, thread_err *err)
{
    const mtx_header *h = J->h;
    const char *buf = J->buf, *e;
    const int64_t lo = J->base, rhi = h->nrows - 1 + J->base, chi = h->ncols - 1 + J->base;
    const dsmm_mm_field field = h->field;
    const dsmm_mm_symmetry sym = h->sym;
    char tok[160];
    while (p < end && k < kend) {
        const char *q = skip_ws(p);
        if (q == end || *q == '\n' || *q == '%') {
            p = line_end(q, end) + 1;
            continue;
        }
        int64_t i, j;
        if (parse_int(&q, end, &i) != 0)
            LINE_ERR("expected an integer row index, found %s", tok_str(q, e, tok, sizeof tok));
        q = skip_ws(q);
        if (q == end || *q == '\n') LINE_ERR("missing column index");
        if (parse_int(&q, end, &j) != 0)
            LINE_ERR("expected an integer column index, found %s", tok_str(q, e, tok, sizeof tok));
        if (i < lo || i > rhi)
            LINE_ERR("row index %lld out of range %lld..%lld", (long long)i, (long long)lo,
                     (long long)rhi);
        if (j < lo || j > chi)
            LINE_ERR("column index %lld out of range %lld..%lld", (long long)j, (long long)lo,
                     (long long)chi);
        if (sym != DSMM_MM_GENERAL && i <= j) {
            if (i < j)
                LINE_ERR("%s file has entry (%lld, %lld) above the diagonal; only the lower "
                         "triangle may be stored",
                         sym == DSMM_MM_SKEW ? "skew-symmetric" : "symmetric", (long long)i,
                         (long long)j);
            if (sym == DSMM_MM_SKEW)
                LINE_ERR("skew-symmetric file has a diagonal entry (%lld, %lld)", (long long)i,
                         (long long)j);
        }
        q = skip_ws(q);
        if (field == DSMM_MM_PATTERN) {
            if (q != end && *q != '\n')
                LINE_ERR("pattern entry has a value %s", tok_str(q, e, tok, sizeof tok));
        } else {
            double v;
            const char *what, *t = q;
            if (q == end || *q == '\n') LINE_ERR("missing value");
            int rc = parse_value(J, &q, end, &v, &what);
            if (rc < 0)
                LINE_ERR("expected %s value, found %s", what, tok_str(t, e, tok, sizeof tok));
            if (rc == 2) LINE_ERR("value %g is out of range for float", v);
            if (rc > 0)
                LINE_ERR("value %s is not finite", isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf"));
            q = skip_ws(q);
            if (q != end && *q != '\n')
                LINE_ERR("trailing garbage %s after the entry", tok_str(q, e, tok, sizeof tok));
            J->V[k] = v;
        }
        J->I[k] = i - lo;
        J->J[k] = j - lo;
        k++;
        p = q + 1;
    }
}

static void parse_array_chunk(const parse_job *J, const char *p, const char *end, dsmm_idx k,
                              dsmm_idx kend, thread_err *err)
{
    const char *buf = J->buf, *e;
    char tok[160];
    while (p < end && k < kend) {
        const char *q = skip_ws(p);
        if (q == end || *q == '\n' || *q == '%') {
            p = line_end(q, end) + 1;
            continue;
        }
        double v;
        const char *what, *t = q;
        int rc = parse_value(J, &q, end, &v, &what);
        if (rc < 0) LINE_ERR("expected %s value, found %s", what, tok_str(t, e, tok, sizeof tok));
        if (rc == 2) LINE_ERR("value %g is out of range for float", v);
        if (rc > 0) LINE_ERR("value %s is not finite", isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf"));
        q = skip_ws(q);
        if (q != end && *q != '\n')
            LINE_ERR("trailing garbage %s after the value", tok_str(q, e, tok, sizeof tok));
        J->V[k++] = v;
        p = q + 1;
    }
}

#undef LINE_ERR

size_t dsmmi_mtx_entry_offset(const char *p, const char *end, dsmm_idx which)
{
    const char *start = p;
    dsmm_idx n = 0;
    while (p < end) {
        const char *e = line_end(p, end);
        const char *q = skip_ws(p);
        if (q < e && *q != '%') {
            if (n == which) return (size_t)(p - start);
            n++;
        }
        p = e + 1;
    }
    return (size_t)(end - start);
}

// Byte offset of the start of entry line number `which` (0-based) in the data section, or the
// end of the input. Error paths only.
static size_t offset_of_entry(const dsmmi_source *src, size_t from, dsmm_idx which)
{
    return from + dsmmi_mtx_entry_offset(src->buf + from, src->buf + src->len, which);
}

// A range [lo, hi) of buf cut at line starts into n chunks, one per thread: pass 1 fills
// cnt[t + 1] with the entry lines of chunk t and then turns cnt into prefix sums, so pass 2
// parses chunk t into slots cnt[t] .. cnt[t + 1]. Byte lo starts line line0 of the file.
typedef struct chunks {
    int n;
    size_t lo;
    dsmm_idx line0;
    size_t *cut;
    dsmm_idx *cnt;
    thread_err *errs;
} chunks;

static void chunks_free(dsmm_ctx *ctx, chunks *c)
{
    c->cut = dsmmi_free(ctx, c->cut);
    c->cnt = dsmmi_free(ctx, c->cnt);
    c->errs = dsmmi_free(ctx, c->errs);
}

// The file line of byte off (error paths only).
static dsmm_idx line_at(const char *buf, const chunks *c, size_t off)
{
    return c->line0 + dsmmi_line_of(buf + c->lo, off - c->lo) - 1;
}

// The first error of the chunks (in file order), recorded in ctx with its line.
static dsmm_status chunk_error(dsmm_ctx *ctx, const char *name, const char *buf, const chunks *c)
{
    dsmm_status st = DSMM_OK;
    for (int t = 0; t < c->n; t++)
        if (c->errs[t].set)
            DSMM_FAIL(ctx, c->errs[t].code, "%s:%lld: %s", name,
                      (long long)line_at(buf, c, c->errs[t].off), c->errs[t].msg);
cleanup:
    return st;
}

// Pass 1 over [lo, hi) of buf (see chunks); over-long lines fail here.
static dsmm_status count_range(dsmm_ctx *ctx, const char *name, const char *buf, size_t lo,
                               size_t hi, dsmm_idx line0, int nthreads, chunks *c)
{
    dsmm_status st = DSMM_OK;

    memset(c, 0, sizeof *c);
    if (nthreads < 1) nthreads = 1;
    if (hi - lo < ((size_t)1 << 16)) nthreads = 1; // not worth waking threads
    c->n = nthreads;
    c->lo = lo;
    c->line0 = line0;
    c->cut = dsmmi_malloc(ctx, (size_t)nthreads + 1, sizeof *c->cut);
    c->cnt = dsmmi_calloc(ctx, (size_t)nthreads + 1, sizeof *c->cnt);
    c->errs = dsmmi_calloc(ctx, (size_t)nthreads, sizeof *c->errs);
    DSMM_CHECK(ctx, c->cut && c->cnt && c->errs, DSMM_ERR_NOMEM, "%s: parser state", name);
    size_t *cut = c->cut;
    dsmm_idx *cnt = c->cnt;
    thread_err *errs = c->errs;
    cut[0] = lo;
    for (int t = 1; t < nthreads; t++) {
        size_t x = lo + (hi - lo) / (size_t)nthreads * (size_t)t;
        if (x < cut[t - 1]) x = cut[t - 1];
        const char *nl = memchr(buf + x, '\n', hi - x);
        cut[t] = nl ? (size_t)(nl - buf) + 1 : hi;
    }
    cut[nthreads] = hi;

#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static, 1)
#endif
    for (int t = 0; t < nthreads; t++)
        cnt[t + 1] = count_chunk(buf, buf + cut[t], buf + cut[t + 1], &errs[t]);
    DSMM_TRY(chunk_error(ctx, name, buf, c));
    for (int t = 0; t < nthreads; t++) cnt[t + 1] += cnt[t];
cleanup:
    return st;
}

// Pass 2: parses the chunks counted by count_range into I/J/V (cnt[n] slots).
static dsmm_status parse_range(dsmm_ctx *ctx, const char *name, const char *buf,
                               const mtx_header *h, const dsmm_read_opts *opts, const chunks *c,
                               dsmm_idx *I, dsmm_idx *J, double *V)
{
    parse_job job = {buf,
                     h,
                     h->array ? 0 : (opts->base == 0 ? 0 : 1),
                     opts->allow_nonfinite,
                     opts->type == DSMM_FLOAT,
                     I,
                     J,
                     V};
    const size_t *cut = c->cut;
    const dsmm_idx *cnt = c->cnt;
    thread_err *errs = c->errs;
#ifdef _OPENMP
#pragma omp parallel for num_threads(c->n) schedule(static, 1)
#endif
    for (int t = 0; t < c->n; t++) {
        if (h->array)
            parse_array_chunk(&job, buf + cut[t], buf + cut[t + 1], cnt[t], cnt[t + 1], &errs[t]);
        else
            parse_coord_chunk(&job, buf + cut[t], buf + cut[t + 1], cnt[t], cnt[t + 1], &errs[t]);
    }
    return chunk_error(ctx, name, buf, c);
}

// Runs both passes over the data section; on success I/J/V hold h->stored entries.
static dsmm_status parse_data(dsmm_ctx *ctx, const dsmmi_source *src, const mtx_header *h,
                              const dsmm_read_opts *opts, int nthreads, dsmm_idx *I, dsmm_idx *J,
                              double *V)
{
    dsmm_status st = DSMM_OK;
    chunks c = {0};
    const char *buf = src->buf, *name = src->name;

    // The data section starts on the line after the size line (or is empty).
    DSMM_TRY(count_range(ctx, name, buf, h->data_off, src->len, h->size_line + 1, nthreads, &c));
    dsmm_idx found = c.cnt[c.n];
    if (found < h->stored) {
        size_t last = src->len > 0 && buf[src->len - 1] == '\n' ? src->len - 1 : src->len;
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT, "%s:%lld: file ends after %lld of %lld entries", name,
                  (long long)dsmmi_line_of(buf, last), (long long)found, (long long)h->stored);
    }
    if (found > h->stored) {
        size_t off = offset_of_entry(src, h->data_off, h->stored);
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "%s:%lld: more than %lld entries (the size line "
                  "declares %lld)",
                  name, (long long)dsmmi_line_of(buf, off), (long long)h->stored,
                  (long long)h->stored);
    }
    DSMM_TRY(parse_range(ctx, name, buf, h, opts, &c, I, J, V));
cleanup:
    chunks_free(ctx, &c);
    return st;
}

static int threads_of(dsmm_ctx *ctx, int threads)
{
    int n = threads > 0 ? threads : dsmmi_threads(ctx);
    return n < 1 ? 1 : n;
}

dsmm_status dsmmi_mtx_count_lines(dsmm_ctx *ctx, const char *name, const char *p, const char *end,
                                  dsmm_idx line, int nthreads, dsmm_idx *count)
{
    dsmm_status st = DSMM_OK;
    chunks c = {0};

    DSMM_CHECK(ctx, p != NULL && end >= p && count != NULL, DSMM_ERR_ARG,
               "mtx count: bad line range");
    *count = 0;
    DSMM_TRY(count_range(ctx, name, p, 0, (size_t)(end - p), line, threads_of(ctx, nthreads), &c));
    *count = c.cnt[c.n];
cleanup:
    chunks_free(ctx, &c);
    return st;
}

dsmm_status dsmmi_mtx_parse_lines(dsmm_ctx *ctx, const char *name, const dsmmi_mtx_header *h,
                                  const dsmm_read_opts *opts, const char *p, const char *end,
                                  dsmm_idx line, dsmm_idx *n, dsmm_idx **I, dsmm_idx **J,
                                  double **V)
{
    dsmm_status st = DSMM_OK;
    chunks c = {0};
    dsmm_idx *ii = NULL, *jj = NULL;
    double *vv = NULL;

    DSMM_CHECK(ctx, h != NULL && opts != NULL && p != NULL && end >= p && n && I && J && V,
               DSMM_ERR_ARG, "mtx parse: bad arguments");
    *n = 0;
    *I = *J = NULL;
    *V = NULL;
    DSMM_CHECK(ctx, !h->array, DSMM_ERR_ARG, "%s: parse_lines needs a coordinate file", name);
    DSMM_TRY(
        count_range(ctx, name, p, 0, (size_t)(end - p), line, threads_of(ctx, opts->threads), &c));
    const dsmm_idx found = c.cnt[c.n];
    const int sym = h->sym != DSMM_MM_GENERAL;
    // Room for the mirrors, filled from the back below.
    size_t cap = (size_t)found * (sym ? 2 : 1);
    if (cap == 0) cap = 1;
    ii = dsmmi_malloc(ctx, cap, sizeof *ii);
    jj = dsmmi_malloc(ctx, cap, sizeof *jj);
    DSMM_CHECK(ctx, ii && jj, DSMM_ERR_NOMEM, "%s: %lld entries", name, (long long)found);
    if (h->field != DSMM_MM_PATTERN) {
        vv = dsmmi_malloc(ctx, cap, sizeof *vv);
        DSMM_CHECK(ctx, vv != NULL, DSMM_ERR_NOMEM, "%s: %lld values", name, (long long)found);
    }
    DSMM_TRY(parse_range(ctx, name, p, h, opts, &c, ii, jj, vv));
    dsmm_idx total = found;
    if (sym) {
        dsmm_idx off = 0;
        for (dsmm_idx k = 0; k < found; k++) off += ii[k] != jj[k];
        total = found + off;
        // Expands in place from the back: slot w >= k always, so nothing unread is overwritten.
        const double sgn = h->sym == DSMM_MM_SKEW ? -1.0 : 1.0;
        dsmm_idx w = total;
        for (dsmm_idx k = found - 1; k >= 0; k--) {
            dsmm_idx i = ii[k], j = jj[k];
            double x = vv ? vv[k] : 0.0;
            if (i != j) {
                w--;
                ii[w] = j;
                jj[w] = i;
                if (vv) vv[w] = sgn * x;
            }
            w--;
            ii[w] = i;
            jj[w] = j;
            if (vv) vv[w] = x;
        }
    }
    *n = total;
    *I = ii;
    *J = jj;
    *V = vv;
    ii = jj = NULL;
    vv = NULL;
cleanup:
    chunks_free(ctx, &c);
    ii = dsmmi_free(ctx, ii);
    jj = dsmmi_free(ctx, jj);
    vv = dsmmi_free(ctx, vv);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Assembly                                                                                    */
/* ------------------------------------------------------------------------------------------ */

// CSR from n triples (0-based), mirrored for symmetric (sym = 1) and skew (sym = 2, negated)
// storage. Scattering in file order keeps rows stable, and the sparse layer's row sort is
// stable, so DSMM_DUP_LAST means last in the file. V may be NULL (pattern input: values 1).
// *dup_i >= 0 reports a duplicate under DUP_ERROR; the caller words that message, since only
// it can find the lines.
static dsmm_status assemble(dsmm_ctx *ctx, dsmm_idx nrows, dsmm_idx ncols, dsmm_idx n,
                            const dsmm_idx *I, const dsmm_idx *J, const double *V, int sym,
                            dsmm_type type, dsmm_dup dup, int nthreads, dsmm_csr **out,
                            dsmm_idx *dup_i, dsmm_idx *dup_j)
{
    dsmm_status st = DSMM_OK;
    dsmm_csr *A = NULL;
    dsmm_idx *pos = NULL, *bounds = NULL, *c1 = NULL;
    double *v1 = NULL, *v0 = NULL;

    *out = NULL;
    *dup_i = *dup_j = -1;
    // Row ownership: thread t counts and fills only the rows in its range, scanning all
    // triples in file order. No two threads touch the same slot, nothing is atomic, and each
    // row keeps file order (which DSMM_DUP_LAST relies on) whatever the thread count.
    int nt = n < 16384 ? 1 : nthreads;
    pos = dsmmi_calloc(ctx, (size_t)nrows + 1, sizeof *pos);
    bounds = dsmmi_malloc(ctx, (size_t)nt + 1, sizeof *bounds);
    DSMM_CHECK(ctx, pos != NULL && bounds != NULL, DSMM_ERR_NOMEM, "assembly: %lld row cursors",
               (long long)nrows);
    for (int t = 0; t <= nt; t++) bounds[t] = (dsmm_idx)((double)nrows * t / nt);
    bounds[nt] = nrows;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1)
#endif
    for (int t = 0; t < nt; t++) {
        const dsmm_idx r0 = bounds[t], r1 = bounds[t + 1];
        dsmm_idx *cnt = pos + 1;
        for (dsmm_idx k = 0; k < n; k++) {
            dsmm_idx i = I[k], j = J[k];
            if (i >= r0 && i < r1) cnt[i]++;
            if (sym && j >= r0 && j < r1 && i != j) cnt[j]++;
        }
    }
    for (dsmm_idx r = 0; r < nrows; r++) pos[r + 1] += pos[r];
    dsmm_idx nnz = pos[nrows];
    DSMM_TRY(dsmm_csr_create(ctx, nrows, ncols, nnz, type, &A));
    dsmm_idx *rp = A->rowptr, *ci = A->colidx;
    memcpy(rp, pos, ((size_t)nrows + 1) * sizeof *rp);
    A->nnz = nnz;
    // Fill ranges of about equal entry counts.
    for (int t = 1; t < nt; t++) {
        dsmm_idx target = (dsmm_idx)((double)nnz * t / nt), lo = bounds[t - 1], hi = nrows;
        while (lo < hi) {
            dsmm_idx mid = lo + (hi - lo) / 2;
            if (rp[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        bounds[t] = lo;
    }
    const double sgn = sym == 2 ? -1.0 : 1.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1)
#endif
    for (int t = 0; t < nt; t++) {
        const dsmm_idx r0 = bounds[t], r1 = bounds[t + 1];
        for (dsmm_idx k = 0; k < n; k++) {
            dsmm_idx i = I[k], j = J[k];
            int fwd = i >= r0 && i < r1, mir = sym && i != j && j >= r0 && j < r1;
            if (!(fwd | mir)) continue;
            double x = V ? V[k] : 1.0;
            if (fwd) {
                dsmm_idx q = pos[i]++;
                ci[q] = j;
                if (type == DSMM_DOUBLE)
                    ((double *)A->val)[q] = x;
                else if (type == DSMM_FLOAT)
                    ((float *)A->val)[q] = (float)x;
            }
            if (mir) {
                dsmm_idx q = pos[j]++;
                ci[q] = i;
                if (type == DSMM_DOUBLE)
                    ((double *)A->val)[q] = sgn * x;
                else if (type == DSMM_FLOAT)
                    ((float *)A->val)[q] = (float)(sgn * x);
            }
        }
    }
    pos = dsmmi_free(ctx, pos);

    if (!dsmmi_csr_rows_increasing(A)) {
        // A row out of order or with a repeated column: the sparse layer's stable row sort
        // merges it, from copies. Files listed column by column (the usual) never get here.
        const int values = type != DSMM_PATTERN;
        c1 = dsmmi_malloc(ctx, nnz ? (size_t)nnz : 1, sizeof *c1);
        DSMM_CHECK(ctx, c1 != NULL, DSMM_ERR_NOMEM, "assembly: %lld columns", (long long)nnz);
        memcpy(c1, ci, (size_t)nnz * sizeof *c1);
        if (values) {
            v1 = dsmmi_malloc(ctx, nnz ? (size_t)nnz : 1, sizeof *v1);
            v0 =
                type == DSMM_DOUBLE ? A->val : dsmmi_malloc(ctx, nnz ? (size_t)nnz : 1, sizeof *v0);
            DSMM_CHECK(ctx, v1 != NULL && v0 != NULL, DSMM_ERR_NOMEM, "assembly: %lld values",
                       (long long)nnz);
            dsmmi_vals_convert(v1, DSMM_DOUBLE, A->val, type, nnz);
        }
        dsmm_idx nnz_out = 0;
        st = dsmmi_rows_sort_merge(ctx, nrows, rp, c1, v1, ci, v0, A->val, type, (int)dup, &nnz_out,
                                   NULL, dup_i, dup_j);
        if (st == DSMM_ERR_FORMAT && *dup_i >= 0) {
            dsmm_ctx_clear_error(ctx); // the caller's message names the lines instead
            st = DSMM_OK;
            goto cleanup;
        }
        DSMM_TRY(st);
        A->nnz = nnz_out;
    }
    A->sorted = 1;
    *out = A;
    A = NULL;
cleanup:
    dsmm_csr_destroy(&A);
    pos = dsmmi_free(ctx, pos);
    bounds = dsmmi_free(ctx, bounds);
    c1 = dsmmi_free(ctx, c1);
    v1 = dsmmi_free(ctx, v1);
    if (type != DSMM_DOUBLE) v0 = dsmmi_free(ctx, v0);
    return st;
}

// The two lines holding entry (r, c) (0-based, full matrix) for the duplicate message; in a
// symmetric file the stored entry may be the mirror (c, r).
static void find_dup_lines(const dsmmi_source *src, const mtx_header *h, int base, dsmm_idx r,
                           dsmm_idx c, dsmm_idx *l1, dsmm_idx *l2)
{
    const char *p = src->buf + h->data_off, *end = src->buf + src->len;
    dsmm_idx line = h->size_line;
    *l1 = *l2 = -1;
    while (p < end) {
        const char *e = line_end(p, end);
        line++;
        const char *q = skip_ws(p);
        int64_t i, j;
        if (q < e && *q != '%' && parse_int(&q, e, &i) == 0) {
            q = skip_ws(q);
            if (parse_int(&q, e, &j) == 0) {
                i -= base;
                j -= base;
                if ((i == r && j == c) || (h->sym != DSMM_MM_GENERAL && i == c && j == r)) {
                    if (*l1 < 0) {
                        *l1 = line;
                    } else {
                        *l2 = line;
                        return;
                    }
                }
            }
        }
        p = e + 1;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                 */
/* ------------------------------------------------------------------------------------------ */

dsmm_status dsmmi_mtx_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_dense **D, dsmm_file_info *info)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *I = NULL, *J = NULL;
    double *V = NULL;
    dsmm_csr *M = NULL;
    dsmm_dense *Dn = NULL;
    mtx_header h;

    if (A) *A = NULL;
    if (D) *D = NULL;
    int more = 0;
    DSMM_TRY(parse_header(ctx, src, 0, &h, &more));
    info->format = DSMM_FORMAT_MTX;
    info->array = h.array;
    info->field = h.field;
    info->symmetry = h.sym;
    info->nrows = h.nrows;
    info->ncols = h.ncols;
    info->stored = h.stored;
    int nthreads = opts->threads > 0 ? opts->threads : dsmmi_threads(ctx);
    if (nthreads < 1) nthreads = 1;
    const int base = opts->base == 0 ? 0 : 1;
    const int sym = h.sym == DSMM_MM_SYMMETRIC ? 1 : (h.sym == DSMM_MM_SKEW ? 2 : 0);
    const int pattern = h.field == DSMM_MM_PATTERN;

    // Triples, then the CSR (twice the entries when mirrored): a conservative estimate.
    size_t per_entry = (h.array ? 0 : 16) + (pattern ? 0 : 8) + (sym ? 2 : 1) * 16;
    DSMM_TRY(check_declared(ctx, src, &h, per_entry));
    size_t n = (size_t)h.stored;
    if (!h.array) {
        I = dsmmi_malloc(ctx, n ? n : 1, sizeof *I);
        J = dsmmi_malloc(ctx, n ? n : 1, sizeof *J);
        DSMM_CHECK(ctx, I && J, DSMM_ERR_NOMEM, "%s: %zu entries", src->name, n);
    }
    if (!pattern) {
        V = dsmmi_malloc(ctx, n ? n : 1, sizeof *V);
        DSMM_CHECK(ctx, V != NULL, DSMM_ERR_NOMEM, "%s: %zu values", src->name, n);
    }
    DSMM_TRY(parse_data(ctx, src, &h, opts, nthreads, I, J, V));

    if (D != NULL && h.array) {
        dsmm_type t = opts->type == DSMM_FLOAT ? DSMM_FLOAT : DSMM_DOUBLE;
        DSMM_TRY(dsmm_dense_create(ctx, h.nrows, h.ncols, t, &Dn));
        dsmm_idx k = 0;
        // Stop at the last stored value: a 0 x 2^32 array has no entries but 2^32 columns.
        for (dsmm_idx j = 0; j < h.ncols && k < (dsmm_idx)n; j++) {
            dsmm_idx i0 = sym == 0 ? 0 : (sym == 1 ? j : j + 1);
            for (dsmm_idx i = i0; i < h.nrows; i++, k++) {
                double x = V[k];
                if (t == DSMM_DOUBLE) {
                    double *d = Dn->val;
                    d[i * Dn->ld + j] = x;
                    if (sym && i != j) d[j * Dn->ld + i] = sym == 2 ? -x : x;
                } else {
                    float *d = Dn->val;
                    d[i * Dn->ld + j] = (float)x;
                    if (sym && i != j) d[j * Dn->ld + i] = (float)(sym == 2 ? -x : x);
                }
            }
        }
        *D = Dn;
        Dn = NULL;
        goto cleanup;
    }
    if (h.array) {
        // Only the nonzeros of a dense file become CSR entries (docs/formats.md).
        dsmm_idx nz = 0;
        for (size_t k = 0; k < n; k++) nz += V[k] != 0.0;
        I = dsmmi_malloc(ctx, nz ? (size_t)nz : 1, sizeof *I);
        J = dsmmi_malloc(ctx, nz ? (size_t)nz : 1, sizeof *J);
        DSMM_CHECK(ctx, I && J, DSMM_ERR_NOMEM, "%s: %lld entries", src->name, (long long)nz);
        dsmm_idx k = 0, w = 0;
        // Stop at the last stored value: a 0 x 2^32 array has no entries but 2^32 columns.
        for (dsmm_idx j = 0; j < h.ncols && k < (dsmm_idx)n; j++) {
            dsmm_idx i0 = sym == 0 ? 0 : (sym == 1 ? j : j + 1);
            for (dsmm_idx i = i0; i < h.nrows; i++, k++) {
                if (V[k] == 0.0) continue;
                I[w] = i;
                J[w] = j;
                V[w++] = V[k];
            }
        }
        n = (size_t)nz;
    }
    dsmm_type type = opts->type;
    if (pattern && opts->keep_pattern) type = DSMM_PATTERN;
    dsmm_dup dup = opts->dup;
    dsmm_idx di, dj;
    DSMM_TRY(assemble(ctx, h.nrows, h.ncols, (dsmm_idx)n, I, J, V, sym, type, dup, nthreads, &M,
                      &di, &dj));
    if (di >= 0) {
        dsmm_idx l1 = -1, l2 = -1;
        if (!h.array) find_dup_lines(src, &h, base, di, dj, &l1, &l2);
        DSMM_FAIL(ctx, DSMM_ERR_FORMAT,
                  "%s:%lld: duplicate entry (%lld, %lld) on lines %lld and "
                  "%lld",
                  src->name, (long long)l2, (long long)(di + base), (long long)(dj + base),
                  (long long)l1, (long long)l2);
    }
    if (D != NULL) {
        dsmm_type t = opts->type == DSMM_FLOAT ? DSMM_FLOAT : DSMM_DOUBLE;
        DSMM_TRY(dsmm_dense_create(ctx, h.nrows, h.ncols, t, &Dn));
        for (dsmm_idx r = 0; r < M->nrows; r++)
            for (dsmm_idx k = M->rowptr[r]; k < M->rowptr[r + 1]; k++) {
                double x = dsmm_csr_value(M, k);
                if (t == DSMM_DOUBLE)
                    ((double *)Dn->val)[r * Dn->ld + M->colidx[k]] = x;
                else
                    ((float *)Dn->val)[r * Dn->ld + M->colidx[k]] = (float)x;
            }
        *D = Dn;
        Dn = NULL;
    } else {
        *A = M;
        M = NULL;
    }
cleanup:
    I = dsmmi_free(ctx, I);
    J = dsmmi_free(ctx, J);
    V = dsmmi_free(ctx, V);
    dsmm_csr_destroy(&M);
    dsmm_dense_destroy(&Dn);
    return st;
}
