// src/base/json.c: a small JSON writer (objects, arrays, strings with escapes, numbers).
// Numbers use %.17g so values read back exactly; NaN and Inf, which JSON lacks, become null.
#include <math.h>
#include <string.h>

#include "base/base.h"

void dsmmi_json_init(dsmmi_json *j, dsmm_ctx *ctx)
{
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
}

void dsmmi_json_free(dsmmi_json *j)
{
    j->buf = dsmmi_free(j->ctx, j->buf);
    j->len = j->cap = 0;
}

static void put(dsmmi_json *j, const char *s, size_t n)
{
    if (j->st != DSMM_OK) return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap) cap *= 2;
        char *b = dsmmi_realloc(j->ctx, j->buf, cap, 1);
        if (b == NULL) {
            j->st = DSMM_ERR_NOMEM;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(dsmmi_json *j, const char *s)
{
    put(j, s, strlen(s));
}

static void put_string(dsmmi_json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"':
            puts_(j, "\\\"");
            break;
        case '\\':
            puts_(j, "\\\\");
            break;
        case '\n':
            puts_(j, "\\n");
            break;
        case '\r':
            puts_(j, "\\r");
            break;
        case '\t':
            puts_(j, "\\t");
            break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else {
                put(j, (const char *)p, 1);
            }
        }
    }
    put(j, "\"", 1);
}

static void key(dsmmi_json *j, const char *k)
{
    if (j->need_comma) put(j, ",", 1);
    j->need_comma = 1;
    if (k) {
        put_string(j, k);
        put(j, ":", 1);
    }
}

void dsmmi_json_begin_object(dsmmi_json *j, const char *k)
{
    key(j, k);
    put(j, "{", 1);
    j->need_comma = 0;
}

void dsmmi_json_end_object(dsmmi_json *j)
{
    put(j, "}", 1);
    j->need_comma = 1;
}

void dsmmi_json_begin_array(dsmmi_json *j, const char *k)
{
    key(j, k);
    put(j, "[", 1);
    j->need_comma = 0;
}

void dsmmi_json_end_array(dsmmi_json *j)
{
    put(j, "]", 1);
    j->need_comma = 1;
}

void dsmmi_json_str(dsmmi_json *j, const char *k, const char *v)
{
    key(j, k);
    if (v)
        put_string(j, v);
    else
        puts_(j, "null");
}

void dsmmi_json_int(dsmmi_json *j, const char *k, int64_t v)
{
    char b[32];
    key(j, k);
    snprintf(b, sizeof b, "%lld", (long long)v);
    puts_(j, b);
}

void dsmmi_json_num(dsmmi_json *j, const char *k, double v)
{
    char b[40];
    key(j, k);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    snprintf(b, sizeof b, "%.17g", v);
    puts_(j, b);
}

void dsmmi_json_raw(dsmmi_json *j, const char *k, const char *v)
{
    key(j, k);
    puts_(j, v);
}

void dsmmi_json_bool(dsmmi_json *j, const char *k, int v)
{
    key(j, k);
    puts_(j, v ? "true" : "false");
}
