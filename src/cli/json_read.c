// src/cli/json_read.c: a small recursive-descent JSON reader (RFC 8259: objects, arrays, strings
// with every escape including surrogate pairs, numbers, true/false/null) into a tree. The depth
// is bounded, so hostile input cannot exhaust the stack; the first error stops the parse and
// records its byte offset, from which line and column are computed. Plain malloc (CLI layer).
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_read.h"

typedef struct parser {
    const char *s;
    size_t len, pos;
    cli_json_error *err;
} parser;

static int fail_at(parser *p, size_t byte, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    p->err->byte = byte;
    cli_json_where(p->s, byte, &p->err->line, &p->err->col);
    return -1;
}

// What stands at the current position, for messages: a printable character or a byte value.
static int unexpected(parser *p, const char *expected)
{
    if (p->pos >= p->len)
        return fail_at(p, p->pos, "unexpected end of input, expected %s", expected);
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        return fail_at(p, p->pos, "unexpected '%c', expected %s", c, expected);
    return fail_at(p, p->pos, "unexpected byte 0x%02x, expected %s", c, expected);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static void free_contents(cli_json *v)
{
    for (size_t k = 0; k < v->n; k++) free_contents(&v->items[k]);
    free(v->items);
    free(v->key);
    free(v->str);
    memset(v, 0, sizeof *v);
}

void cli_json_free(cli_json *v)
{
    if (v == NULL) return;
    free_contents(v);
    free(v);
}

static int hex4(const char *h, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = h[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

// A string at p->pos (the opening quote). The decoded text is never longer than the quoted
// text (an escape of 2, 6 or 12 characters gives 1 to 4 bytes), so one allocation suffices.
static int parse_string(parser *p, char **out, size_t *outlen)
{
    size_t start = p->pos++, end = p->pos;
    while (end < p->len && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len) return fail_at(p, start, "unterminated string");
    char *o = malloc(end - p->pos + 1);
    if (o == NULL) return fail_at(p, start, "out of memory");
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(o);
            return fail_at(p, p->pos, "control character 0x%02x in a string (write it escaped)", c);
        }
        if (c != '\\') {
            o[n++] = (char)c;
            p->pos++;
            continue;
        }
        char e = p->s[p->pos + 1];
        const char *simple = "\"\\/bfnrt", *value = "\"\\/\b\f\n\r\t";
        const char *hit = e != '\0' ? strchr(simple, e) : NULL;
        if (hit != NULL) {
            o[n++] = value[hit - simple];
            p->pos += 2;
            continue;
        }
        unsigned cp = 0, lo = 0;
        if (e != 'u' || p->pos + 6 > end || hex4(p->s + p->pos + 2, &cp) != 0) {
            free(o);
            if (e == 'u') return fail_at(p, p->pos, "\\u needs four hexadecimal digits");
            if (e >= 0x20 && e < 0x7f) return fail_at(p, p->pos, "invalid escape '\\%c'", e);
            return fail_at(p, p->pos, "invalid escape");
        }
        if (cp >= 0xdc00 && cp <= 0xdfff) {
            free(o);
            return fail_at(p, p->pos, "unpaired low surrogate \\u%04x", cp);
        }
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (p->pos + 12 > end || p->s[p->pos + 6] != '\\' || p->s[p->pos + 7] != 'u' ||
                hex4(p->s + p->pos + 8, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff) {
                free(o);
                return fail_at(p, p->pos, "high surrogate \\u%04x without its low half", cp);
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p->pos += 6;
        }
        n += put_utf8(o + n, cp);
        p->pos += 6;
    }
    o[n] = '\0';
    p->pos = end + 1;
    *out = o;
    *outlen = n;
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

// RFC 8259's grammar exactly: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
static int parse_number(parser *p, cli_json *v)
{
    size_t start = p->pos, q = p->pos;
    int integral = 1;
    if (q < p->len && p->s[q] == '-') q++;
    if (q >= p->len || !is_digit(p->s[q])) return fail_at(p, start, "invalid number");
    if (p->s[q] == '0')
        q++;
    else
        while (q < p->len && is_digit(p->s[q])) q++;
    if (q < p->len && p->s[q] == '.') {
        integral = 0;
        if (++q >= p->len || !is_digit(p->s[q]))
            return fail_at(p, start, "invalid number (a digit must follow '.')");
        while (q < p->len && is_digit(p->s[q])) q++;
    }
    if (q < p->len && (p->s[q] == 'e' || p->s[q] == 'E')) {
        integral = 0;
        q++;
        if (q < p->len && (p->s[q] == '+' || p->s[q] == '-')) q++;
        if (q >= p->len || !is_digit(p->s[q]))
            return fail_at(p, start, "invalid number (a digit must follow the exponent)");
        while (q < p->len && is_digit(p->s[q])) q++;
    }
    // strtod needs a terminated copy: the text need not end after the number.
    char small[64], *buf = small;
    size_t n = q - start;
    if (n >= sizeof small && (buf = malloc(n + 1)) == NULL)
        return fail_at(p, start, "out of memory");
    memcpy(buf, p->s + start, n);
    buf[n] = '\0';
    double d = strtod(buf, NULL);
    int range_err = !isfinite(d);
    if (integral) {
        errno = 0;
        long long i = strtoll(buf, NULL, 10);
        if (errno == 0) {
            v->is_int = 1;
            v->i = (int64_t)i;
        }
    }
    if (buf != small) free(buf);
    if (range_err) return fail_at(p, start, "number out of the range of a double");
    v->kind = CLI_JSON_NUMBER;
    v->num = d;
    p->pos = q;
    return 0;
}

static int parse_value(parser *p, cli_json *v, int depth);

// Appends *item (moved) to v->items.
static int push(parser *p, cli_json *v, cli_json *item, size_t *cap)
{
    if (v->n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        cli_json *it = realloc(v->items, c * sizeof *it);
        if (it == NULL) return fail_at(p, p->pos, "out of memory");
        v->items = it;
        *cap = c;
    }
    v->items[v->n++] = *item;
    memset(item, 0, sizeof *item);
    return 0;
}

static int parse_container(parser *p, cli_json *v, int depth, int object)
{
    const char close = object ? '}' : ']';
    const char *what = object ? "object" : "array";
    size_t cap = 0, open = p->pos;
    if (depth >= CLI_JSON_MAX_DEPTH)
        return fail_at(p, open, "arrays and objects nested deeper than %d", CLI_JSON_MAX_DEPTH);
    v->kind = object ? CLI_JSON_OBJECT : CLI_JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        cli_json item;
        memset(&item, 0, sizeof item);
        skip_ws(p);
        if (object) {
            size_t klen = 0;
            if (p->pos >= p->len || p->s[p->pos] != '"') return unexpected(p, "a string key");
            if (parse_string(p, &item.key, &klen) != 0) return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(item.key);
                return unexpected(p, "':' after the key");
            }
            p->pos++;
        }
        if (parse_value(p, &item, depth + 1) != 0 || push(p, v, &item, &cap) != 0) {
            free_contents(&item);
            return -1;
        }
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        if (p->pos >= p->len) {
            size_t line = 0, col = 0;
            cli_json_where(p->s, open, &line, &col);
            return fail_at(p, p->pos, "unexpected end of input in the %s opened at line %zu", what,
                           line);
        }
        return unexpected(p, object ? "',' or '}' in an object" : "',' or ']' in an array");
    }
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return unexpected(p, "a value");
    p->pos += n;
    return 0;
}

static int parse_value(parser *p, cli_json *v, int depth)
{
    skip_ws(p);
    if (p->pos >= p->len) return unexpected(p, "a value");
    char c = p->s[p->pos];
    switch (c) {
    case '{':
    case '[':
        return parse_container(p, v, depth, c == '{');
    case '"':
        v->kind = CLI_JSON_STRING;
        return parse_string(p, &v->str, &v->len);
    case 't':
    case 'f':
        v->kind = CLI_JSON_BOOL;
        v->boolean = c == 't';
        return literal(p, c == 't' ? "true" : "false");
    case 'n':
        v->kind = CLI_JSON_NULL;
        return literal(p, "null");
    default:
        if (c == '-' || is_digit(c)) return parse_number(p, v);
        return unexpected(p, "a value");
    }
}

int cli_json_parse(const char *text, size_t len, size_t *pos, cli_json **out, cli_json_error *err)
{
    parser p = {text, len, *pos, err};
    memset(err, 0, sizeof *err);
    *out = NULL;
    if (len > CLI_JSON_MAX_BYTES)
        return fail_at(&p, 0, "text of %zu bytes is longer than the %zu accepted", len,
                       CLI_JSON_MAX_BYTES);
    cli_json *v = calloc(1, sizeof *v);
    if (v == NULL) return fail_at(&p, p.pos, "out of memory");
    if (parse_value(&p, v, 0) != 0) {
        cli_json_free(v);
        return -1;
    }
    *pos = p.pos;
    *out = v;
    return 0;
}

int cli_json_at_end(const char *text, size_t len, size_t *pos)
{
    parser p = {text, len, *pos, NULL};
    skip_ws(&p);
    *pos = p.pos;
    return p.pos >= len;
}

void cli_json_where(const char *text, size_t byte, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (size_t k = 0; k < byte; k++) {
        if (text[k] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

const cli_json *cli_json_get(const cli_json *v, const char *key)
{
    if (v == NULL || v->kind != CLI_JSON_OBJECT) return NULL;
    for (size_t k = v->n; k-- > 0;)
        if (strcmp(v->items[k].key, key) == 0) return &v->items[k];
    return NULL;
}

const char *cli_json_kind_name(cli_json_kind k)
{
    static const char *const names[] = {
        [CLI_JSON_NULL] = "null",     [CLI_JSON_BOOL] = "boolean", [CLI_JSON_NUMBER] = "number",
        [CLI_JSON_STRING] = "string", [CLI_JSON_ARRAY] = "array",  [CLI_JSON_OBJECT] = "object",
    };
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}
