// src/io/mtx_write.c: Matrix Market writer (coordinate real|pattern general|symmetric, and
// array for dense matrices) with shortest round-trip decimals and its own output buffer. The
// header and entry-line formatters are shared with the parallel writer (dist/write.c).
// Columns are read through dsmm_csr_col, so 32- and 64-bit matrices give the same bytes.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

// Formatting through a 256 KiB buffer instead of one fprintf per entry: the writer then runs
// at a few hundred MB/s, near what the reader parses.
typedef struct wbuf {
    FILE *f;
    char *buf;
    size_t n, cap;
    int err;
} wbuf;

static void wflush(wbuf *w)
{
    if (w->n && !w->err && fwrite(w->buf, 1, w->n, w->f) != w->n) w->err = errno ? errno : EIO;
    w->n = 0;
}

static void wput(wbuf *w, const char *s, size_t len)
{
    if (w->n + len > w->cap) wflush(w);
    if (len > w->cap) {
        if (!w->err && fwrite(s, 1, len, w->f) != len) w->err = errno ? errno : EIO;
        return;
    }
    memcpy(w->buf + w->n, s, len);
    w->n += len;
}

static int fmt_idx(char *out, long long v)
{
    char t[24];
    int n = 0, k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) out[k++] = '-';
    while (n) out[k++] = t[--n];
    out[k] = '\0';
    return k;
}

int dsmmi_format_double(char *buf, double v)
{
    if (isnan(v)) return snprintf(buf, 32, "nan");
    if (isinf(v)) return snprintf(buf, 32, v > 0 ? "inf" : "-inf");
    // Integers below 2^53 print exactly as integers; the common case for weights and counts.
    if (fabs(v) < 9007199254740992.0 && v == (double)(long long)v) {
        if (v == 0 && signbit(v)) return snprintf(buf, 32, "-0");
        return fmt_idx(buf, (long long)v);
    }
    for (int prec = 15; prec < 17; prec++) {
        int n = snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return n;
    }
    return snprintf(buf, 32, "%.17g", v);
}

// Shortest decimal that reads back (through double, rounded to float) to the same float.
static int format_float(char *buf, float v)
{
    if (!isfinite(v) || (fabsf(v) < 16777216.0f && v == (float)(long long)v))
        return dsmmi_format_double(buf, (double)v);
    for (int prec = 6; prec < 9; prec++) {
        int n = snprintf(buf, 32, "%.*g", prec, (double)v);
        if ((float)strtod(buf, NULL) == v) return n;
    }
    return snprintf(buf, 32, "%.9g", (double)v);
}

static int format_value(char *buf, const dsmm_csr *A, dsmm_idx k, int precision)
{
    if (precision > 0)
        return snprintf(buf, 32, "%.*g", precision > 17 ? 17 : precision, dsmm_csr_value(A, k));
    if (A->type == DSMM_FLOAT) return format_float(buf, ((const float *)A->val)[k]);
    return dsmmi_format_double(buf, dsmm_csr_value(A, k));
}

// Is A == A^T (pattern and values)? Rows must be sorted so the mirror is a binary search.
static int is_symmetric(const dsmm_csr *A, int threads)
{
    if (A->nrows != A->ncols || !A->sorted) return 0;
    int asym = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) reduction(| : asym)
#endif
    for (dsmm_idx i = 0; i < A->nrows; i++) {
        if (asym) continue;
        for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            dsmm_idx j = dsmm_csr_col(A, k);
            if (j == i) continue;
            dsmm_idx lo = A->rowptr[j], hi = A->rowptr[j + 1];
            while (lo < hi) {
                dsmm_idx mid = lo + (hi - lo) / 2;
                if (dsmm_csr_col(A, mid) < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo >= A->rowptr[j + 1] || dsmm_csr_col(A, lo) != i ||
                (A->type != DSMM_PATTERN && dsmm_csr_value(A, k) != dsmm_csr_value(A, lo))) {
                asym = 1;
                break;
            }
        }
    }
    (void)threads;
    return !asym;
}

// Appends s[0..len) at out + n when it fits with a NUL after it; returns the new length.
static size_t emit(char *out, size_t cap, size_t n, const char *s, size_t len)
{
    if (n + len < cap) memcpy(out + n, s, len);
    return n + len;
}

size_t dsmmi_mtx_format_header(char *out, size_t cap, dsmm_type type, int sym, const char *comment,
                               dsmm_idx nrows, dsmm_idx ncols, dsmm_idx count)
{
    char line[160];
    int len = snprintf(line, sizeof line, "%%%%MatrixMarket matrix coordinate %s %s\n",
                       type == DSMM_PATTERN ? "pattern" : "real", sym ? "symmetric" : "general");
    size_t n = emit(out, cap, 0, line, (size_t)len);
    for (const char *p = comment; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t plen = e ? (size_t)(e - p) : strlen(p);
        if (plen == 0 || p[0] != '%') n = emit(out, cap, n, "%", 1);
        n = emit(out, cap, n, p, plen);
        n = emit(out, cap, n, "\n", 1);
        p += plen + (e ? 1 : 0);
    }
    len = snprintf(line, sizeof line, "%lld %lld %lld\n", (long long)nrows, (long long)ncols,
                   (long long)count);
    n = emit(out, cap, n, line, (size_t)len);
    if (n < cap) out[n] = '\0';
    return n;
}

// The cursor and options live in locals: stores through out (a char pointer) may alias r.
size_t dsmmi_mtx_format_rows(dsmmi_mtx_rows *r, char *out, size_t cap)
{
    const dsmm_csr *A = r->A;
    const dsmm_idx *rowptr = A->rowptr, row0 = r->row0, col0 = r->col0;
    const int lower = r->lower, precision = r->precision, pattern = A->type == DSMM_PATTERN;
    dsmm_idx i = r->i, k = r->k;
    char *p = out, ib[24];
    int il = 0; // length of ib, the text of row index row0 + i + 1 (0: not formatted yet)
    while (i < A->nrows) {
        if (k >= rowptr[i + 1]) {
            i++;
            il = 0;
            continue;
        }
        const dsmm_idx j = col0 + dsmm_csr_col(A, k);
        if (lower && j > row0 + i) {
            k++;
            continue;
        }
        if (cap - (size_t)(p - out) < DSMMI_MTX_LINE_MAX) break;
        if (il == 0) il = fmt_idx(ib, (long long)(row0 + i) + 1);
        memcpy(p, ib, (size_t)il);
        p += il;
        *p++ = ' ';
        p += fmt_idx(p, (long long)j + 1);
        if (!pattern) {
            *p++ = ' ';
            p += format_value(p, A, k, precision);
        }
        *p++ = '\n';
        k++;
    }
    r->i = i;
    r->k = k;
    return (size_t)(p - out);
}

dsmm_status dsmmi_mtx_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_write_opts *o)
{
    dsmm_status st = DSMM_OK;
    wbuf w = {f, NULL, 0, (size_t)1 << 18, 0};

    DSMM_CHECK(ctx, f != NULL && A != NULL, DSMM_ERR_ARG, "stream and matrix must be non-NULL");
    int sym = o ? o->symmetric : -1;
    int precision = o ? o->precision : 0;
    if (sym < 0) {
        sym = is_symmetric(A, dsmmi_threads(ctx));
    } else if (sym > 0) {
        DSMM_CHECK(ctx, is_symmetric(A, dsmmi_threads(ctx)), DSMM_ERR_ARG,
                   "symmetric output asked for, but the matrix is not symmetric (or its rows "
                   "are not sorted)");
    }
    dsmm_idx count = A->nnz;
    if (sym) {
        count = 0;
        for (dsmm_idx i = 0; i < A->nrows; i++)
            for (dsmm_idx k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
                count += dsmm_csr_col(A, k) <= i;
    }
    const char *comment = o ? o->comment : NULL;
    size_t hlen =
        dsmmi_mtx_format_header(NULL, 0, A->type, sym, comment, A->nrows, A->ncols, count);
    if (hlen >= w.cap) w.cap = hlen + 1; // a long comment: the header still goes in one piece
    w.buf = dsmmi_malloc(ctx, w.cap, 1);
    DSMM_CHECK(ctx, w.buf != NULL, DSMM_ERR_NOMEM, "write buffer");
    w.n = dsmmi_mtx_format_header(w.buf, w.cap, A->type, sym, comment, A->nrows, A->ncols, count);
    dsmmi_mtx_rows rows = {A, 0, 0, sym, precision, 0, 0};
    while (!w.err) {
        w.n += dsmmi_mtx_format_rows(&rows, w.buf + w.n, w.cap - w.n);
        if (rows.i == A->nrows) break;
        wflush(&w);
    }
    wflush(&w);
    DSMM_CHECK(ctx, !w.err, DSMM_ERR_IO, "writing Matrix Market failed: %s", strerror(w.err));
cleanup:
    w.buf = dsmmi_free(ctx, w.buf);
    return st;
}

dsmm_status dsmmi_mtx_write_dense(dsmm_ctx *ctx, FILE *f, const dsmm_dense *D)
{
    dsmm_status st = DSMM_OK;
    wbuf w = {f, NULL, 0, (size_t)1 << 18, 0};
    char line[160];

    DSMM_CHECK(ctx, f != NULL && D != NULL, DSMM_ERR_ARG, "stream and matrix must be non-NULL");
    DSMM_CHECK(ctx, D->type == DSMM_FLOAT || D->type == DSMM_DOUBLE, DSMM_ERR_ARG,
               "dense matrix has type %s; Matrix Market array needs values",
               dsmm_type_name(D->type));
    w.buf = dsmmi_malloc(ctx, w.cap, 1);
    DSMM_CHECK(ctx, w.buf != NULL, DSMM_ERR_NOMEM, "write buffer");
    int n = snprintf(line, sizeof line, "%%%%MatrixMarket matrix array real general\n%lld %lld\n",
                     (long long)D->nrows, (long long)D->ncols);
    wput(&w, line, (size_t)n);
    // The array layout is column-major; D is row-major.
    for (dsmm_idx j = 0; j < D->ncols && !w.err; j++) {
        for (dsmm_idx i = 0; i < D->nrows; i++) {
            if (w.n + 64 > w.cap) wflush(&w);
            char *p = w.buf + w.n;
            if (D->type == DSMM_DOUBLE)
                p += dsmmi_format_double(p, ((const double *)D->val)[i * D->ld + j]);
            else
                p += format_float(p, ((const float *)D->val)[i * D->ld + j]);
            *p++ = '\n';
            w.n = (size_t)(p - w.buf);
        }
    }
    wflush(&w);
    DSMM_CHECK(ctx, !w.err, DSMM_ERR_IO, "writing Matrix Market failed: %s", strerror(w.err));
cleanup:
    w.buf = dsmmi_free(ctx, w.buf);
    return st;
}
