// src/base/stats.c: statistics records written as JSON. The stable top-level keys of
// DESIGN.md always come first and always exist (scripts rely on them); any other key set by
// the operation follows in the order it was first set.
#include <string.h>

#include "base/base.h"

#define STATS_MAGIC 0x64736d6d73746174ULL

typedef enum { KV_NUM, KV_INT, KV_STR, KV_RAW } kv_kind;

typedef struct kv {
    char *key;
    kv_kind kind;
    double num;
    int64_t i;
    char *str;
} kv;

struct dsmm_stats {
    uint64_t magic;
    dsmm_ctx *ctx;
    kv *items;
    size_t n, cap;
};

// clang-format off
static const struct { const char *key; kv_kind kind; } stable[] = {
    {"op", KV_STR}, {"algo", KV_STR}, {"ranks", KV_INT}, {"threads", KV_INT},
    {"seconds", KV_NUM}, {"io_seconds", KV_NUM}, {"flops", KV_NUM}, {"nnz_in", KV_INT},
    {"nnz_out", KV_INT}, {"peak_bytes", KV_INT}, {"bytes_sent", KV_INT},
};
// clang-format on
#define NSTABLE (sizeof stable / sizeof stable[0])

static kv *find_or_add(dsmm_stats *s, const char *key, dsmm_status *st)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].key, key) == 0) return &s->items[i];
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        kv *it = dsmmi_realloc(s->ctx, s->items, cap, sizeof *it);
        if (it == NULL) {
            *st = DSMM_ERR_NOMEM;
            return NULL;
        }
        s->items = it;
        s->cap = cap;
    }
    kv *e = &s->items[s->n];
    memset(e, 0, sizeof *e);
    e->key = dsmmi_strdup(s->ctx, key);
    if (e->key == NULL) {
        *st = DSMM_ERR_NOMEM;
        return NULL;
    }
    s->n++;
    return e;
}

static dsmm_status set(dsmm_stats *s, const char *key, kv_kind kind, double num, int64_t i,
                       const char *str)
{
    dsmm_status st = DSMM_OK;
    if (s == NULL || s->magic != STATS_MAGIC || key == NULL) return DSMM_ERR_ARG;
    kv *e = find_or_add(s, key, &st);
    if (e == NULL) return st;
    char *copy = NULL;
    if (kind == KV_STR || kind == KV_RAW) {
        copy = dsmmi_strdup(s->ctx, str ? str : "");
        if (copy == NULL) return DSMM_ERR_NOMEM;
    }
    e->str = dsmmi_free(s->ctx, e->str);
    e->kind = kind;
    e->num = num;
    e->i = i;
    e->str = copy;
    return DSMM_OK;
}

dsmm_status dsmm_stats_create(dsmm_ctx *ctx, const char *op, dsmm_stats **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    if (!dsmmi_ctx_ok(ctx)) return DSMM_ERR_ARG;
    DSMM_CHECK(ctx, op != NULL && out != NULL, DSMM_ERR_ARG, "op and out must be non-NULL");
    *out = NULL;
    s = dsmmi_calloc(ctx, 1, sizeof *s);
    DSMM_CHECK(ctx, s != NULL, DSMM_ERR_NOMEM, "statistics record");
    s->magic = STATS_MAGIC;
    s->ctx = ctx;
    for (size_t k = 0; k < NSTABLE; k++) {
        const char *key = stable[k].key;
        if (stable[k].kind == KV_STR)
            st = set(s, key, KV_STR, 0, 0, k == 0 ? op : "");
        else if (strcmp(key, "ranks") == 0)
            st = set(s, key, KV_INT, 0, ctx->size, NULL);
        else if (strcmp(key, "threads") == 0)
            st = set(s, key, KV_INT, 0, dsmmi_threads(ctx), NULL);
        else
            st = set(s, key, stable[k].kind, 0, 0, NULL);
        DSMM_CHECK(ctx, st == DSMM_OK, st, "statistics record");
    }
    *out = s;
    s = NULL;
cleanup:
    dsmm_stats_destroy(&s);
    return st;
}

void dsmm_stats_destroy(dsmm_stats **ps)
{
    if (ps == NULL || *ps == NULL) return;
    dsmm_stats *s = *ps;
    if (s->magic == STATS_MAGIC) {
        for (size_t i = 0; i < s->n; i++) {
            dsmmi_free(s->ctx, s->items[i].key);
            dsmmi_free(s->ctx, s->items[i].str);
        }
        dsmmi_free(s->ctx, s->items);
        s->magic = DSMMI_FREED_MAGIC;
        dsmmi_free(s->ctx, s);
    }
    *ps = NULL;
}

// Stable numeric keys keep their declared kind, so "ranks" stays an integer in the JSON.
static kv_kind stable_kind(const char *key, kv_kind asked)
{
    for (size_t k = 0; k < NSTABLE; k++)
        if (strcmp(stable[k].key, key) == 0 && stable[k].kind != KV_STR) return stable[k].kind;
    return asked;
}

dsmm_status dsmm_stats_set_num(dsmm_stats *s, const char *key, double v)
{
    if (key && stable_kind(key, KV_NUM) == KV_INT) return set(s, key, KV_INT, 0, (int64_t)v, NULL);
    return set(s, key, KV_NUM, v, 0, NULL);
}

dsmm_status dsmm_stats_set_int(dsmm_stats *s, const char *key, int64_t v)
{
    if (key && stable_kind(key, KV_INT) == KV_NUM) return set(s, key, KV_NUM, (double)v, 0, NULL);
    return set(s, key, KV_INT, 0, v, NULL);
}

dsmm_status dsmm_stats_set_str(dsmm_stats *s, const char *key, const char *v)
{
    return set(s, key, KV_STR, 0, 0, v);
}

dsmm_status dsmmi_stats_set_raw(dsmm_stats *s, const char *key, const char *json)
{
    if (json == NULL) return DSMM_ERR_ARG;
    return set(s, key, KV_RAW, 0, 0, json);
}

dsmm_status dsmm_stats_json(const dsmm_stats *s, char **json)
{
    if (s == NULL || s->magic != STATS_MAGIC || json == NULL) return DSMM_ERR_ARG;
    *json = NULL;
    dsmmi_json j;
    dsmmi_json_init(&j, s->ctx);
    dsmmi_json_begin_object(&j, NULL);
    for (size_t i = 0; i < s->n; i++) {
        const kv *e = &s->items[i];
        if (e->kind == KV_STR) dsmmi_json_str(&j, e->key, e->str);
        if (e->kind == KV_INT) dsmmi_json_int(&j, e->key, e->i);
        if (e->kind == KV_NUM) dsmmi_json_num(&j, e->key, e->num);
        if (e->kind == KV_RAW) dsmmi_json_raw(&j, e->key, e->str);
    }
    dsmmi_json_end_object(&j);
    if (j.st != DSMM_OK) {
        dsmmi_json_free(&j);
        return dsmmi_error(s->ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "statistics JSON");
    }
    *json = j.buf;
    return DSMM_OK;
}

dsmm_status dsmm_stats_write(const dsmm_stats *s, const char *path)
{
    dsmm_status st = DSMM_OK;
    char *json = NULL;
    dsmmi_outfile o = {0};
    int open = 0;
    if (s == NULL || s->magic != STATS_MAGIC) return DSMM_ERR_ARG;
    dsmm_ctx *ctx = s->ctx;
    DSMM_TRY(dsmm_stats_json(s, &json));
    DSMM_TRY(dsmmi_outfile_open(ctx, &o, path));
    open = 1;
    fprintf(o.f, "%s\n", json);
    open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &o));
cleanup:
    if (open) dsmmi_outfile_abort(ctx, &o);
    json = dsmmi_free(ctx, json);
    return st;
}

int dsmmi_stats_get_num(const dsmm_stats *s, const char *key, double *v)
{
    if (s == NULL) return 0;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].key, key) == 0) {
            if (s->items[i].kind == KV_NUM)
                *v = s->items[i].num;
            else if (s->items[i].kind == KV_INT)
                *v = (double)s->items[i].i;
            else
                return 0;
            return 1;
        }
    return 0;
}
