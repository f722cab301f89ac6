// src/io/labels.c: the label dictionary of abc networks: name <-> index in insertion order.
// Names live NUL-terminated in one growing arena (offsets, not pointers, so it may move);
// an open-addressing table with linear probing maps a name's hash to its index. The table
// stays at most half full, so a lookup touches one or two slots on average.
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

struct dsmm_labels {
    dsmm_ctx *ctx;
    char *arena; // names, each followed by '\0'
    size_t arena_len, arena_cap;
    size_t *off;      // off[i]: start of name i in arena; off[n]: arena_len
    dsmm_idx n, ncap; // names, room in off (ncap + 1 entries)
    dsmm_idx *slot;   // index of the name in each slot, -1 empty
    uint32_t *shash;  // low hash bits of each slot, to skip most string compares
    size_t nslots;    // power of two
};

// FNV-1a over 8-byte words with a final avalanche: labels are short, so this beats byte loops.
static uint64_t hash_name(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
        s += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, len);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

static size_t name_len(const dsmm_labels *L, dsmm_idx i)
{
    return L->off[i + 1] - L->off[i] - 1;
}

// Slot holding name[0..len) or the empty slot where it would go.
static size_t probe(const dsmm_labels *L, const char *name, size_t len, uint64_t h)
{
    size_t mask = L->nslots - 1;
    size_t s = (size_t)h & mask;
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        dsmm_idx i = L->slot[s];
        if (i < 0) return s;
        if (L->shash[s] == tag && name_len(L, i) == len &&
            memcmp(L->arena + L->off[i], name, len) == 0)
            return s;
        s = (s + 1) & mask;
    }
}

static dsmm_status rehash(dsmm_labels *L, size_t nslots)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *slot = dsmmi_malloc(L->ctx, nslots, sizeof *slot);
    uint32_t *shash = dsmmi_malloc(L->ctx, nslots, sizeof *shash);
    DSMM_CHECK(L->ctx, slot != NULL && shash != NULL, DSMM_ERR_NOMEM,
               "label dictionary: %zu hash slots", nslots);
    for (size_t s = 0; s < nslots; s++) slot[s] = -1;
    L->slot = dsmmi_free(L->ctx, L->slot);
    L->shash = dsmmi_free(L->ctx, L->shash);
    L->slot = slot;
    L->shash = shash;
    L->nslots = nslots;
    slot = NULL;
    shash = NULL;
    for (dsmm_idx i = 0; i < L->n; i++) {
        uint64_t h = hash_name(L->arena + L->off[i], name_len(L, i));
        size_t s = probe(L, L->arena + L->off[i], name_len(L, i), h);
        L->slot[s] = i;
        L->shash[s] = (uint32_t)(h >> 32);
    }
cleanup:
    dsmmi_free(L->ctx, slot);
    dsmmi_free(L->ctx, shash);
    return st;
}

dsmm_status dsmmi_labels_create(dsmm_ctx *ctx, dsmm_labels **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_labels *L = NULL;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "labels: out must be non-NULL");
    *out = NULL;
    L = dsmmi_calloc(ctx, 1, sizeof *L);
    DSMM_CHECK(ctx, L != NULL, DSMM_ERR_NOMEM, "label dictionary");
    L->ctx = ctx;
    L->ncap = 64;
    L->off = dsmmi_malloc(ctx, (size_t)L->ncap + 1, sizeof *L->off);
    L->arena_cap = 1024;
    L->arena = dsmmi_malloc(ctx, L->arena_cap, 1);
    DSMM_CHECK(ctx, L->off != NULL && L->arena != NULL, DSMM_ERR_NOMEM, "label dictionary");
    L->off[0] = 0;
    DSMM_TRY(rehash(L, 128));
    *out = L;
    L = NULL;
cleanup:
    dsmm_labels_destroy(&L);
    return st;
}

dsmm_status dsmmi_labels_intern(dsmm_labels *L, const char *name, size_t len, dsmm_idx *idx)
{
    dsmm_status st = DSMM_OK;
    uint64_t h = hash_name(name, len);
    size_t s = probe(L, name, len, h);
    if (L->slot[s] >= 0) {
        *idx = L->slot[s];
        return DSMM_OK;
    }
    if (L->n == L->ncap) {
        dsmm_idx ncap = 2 * L->ncap;
        size_t *off = dsmmi_realloc(L->ctx, L->off, (size_t)ncap + 1, sizeof *off);
        DSMM_CHECK(L->ctx, off != NULL, DSMM_ERR_NOMEM, "label dictionary: %lld names",
                   (long long)ncap);
        L->off = off;
        L->ncap = ncap;
    }
    if (len + 1 > L->arena_cap - L->arena_len) {
        size_t cap = L->arena_cap;
        while (len + 1 > cap - L->arena_len) {
            DSMM_CHECK(L->ctx, cap <= SIZE_MAX / 2, DSMM_ERR_NOMEM, "label arena overflows");
            cap *= 2;
        }
        char *arena = dsmmi_realloc(L->ctx, L->arena, cap, 1);
        DSMM_CHECK(L->ctx, arena != NULL, DSMM_ERR_NOMEM, "label dictionary: %zu bytes of names",
                   cap);
        L->arena = arena;
        L->arena_cap = cap;
    }
    memcpy(L->arena + L->arena_len, name, len);
    L->arena[L->arena_len + len] = '\0';
    L->arena_len += len + 1;
    dsmm_idx i = L->n++;
    L->off[L->n] = L->arena_len;
    L->slot[s] = i;
    L->shash[s] = (uint32_t)(h >> 32);
    *idx = i;
    // Keep the load factor at most 1/2; on failure the name stays (the table is still valid).
    if ((size_t)L->n * 2 > L->nslots) DSMM_TRY(rehash(L, 2 * L->nslots));
cleanup:
    return st;
}

dsmm_idx dsmm_labels_count(const dsmm_labels *L)
{
    return L ? L->n : 0;
}

const char *dsmm_labels_name(const dsmm_labels *L, dsmm_idx i)
{
    if (L == NULL || i < 0 || i >= L->n) return NULL;
    return L->arena + L->off[i];
}

dsmm_idx dsmm_labels_find(const dsmm_labels *L, const char *name)
{
    if (L == NULL || name == NULL) return -1;
    size_t len = strlen(name);
    return L->slot[probe(L, name, len, hash_name(name, len))];
}

void dsmm_labels_destroy(dsmm_labels **L)
{
    if (L == NULL || *L == NULL) return;
    dsmm_ctx *ctx = (*L)->ctx;
    dsmmi_free(ctx, (*L)->arena);
    dsmmi_free(ctx, (*L)->off);
    dsmmi_free(ctx, (*L)->slot);
    dsmmi_free(ctx, (*L)->shash);
    dsmmi_free(ctx, *L);
    *L = NULL;
}

// One line of a tab file: "index<TAB>label" (label to the end of the line, CR dropped).
typedef struct {
    dsmm_idx idx;
    const char *name;
    size_t len;
    dsmm_idx line;
} tab_entry;

static int tab_cmp(const void *a, const void *b)
{
    const tab_entry *x = a, *y = b;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

dsmm_status dsmmi_labels_read_tab(dsmm_ctx *ctx, const char *path, dsmm_idx n, dsmm_labels **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    tab_entry *e = NULL;
    dsmm_labels *L = NULL;
    *out = NULL;
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "tab file: %lld vertices", (long long)n);
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    e = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *e);
    DSMM_CHECK(ctx, e != NULL, DSMM_ERR_NOMEM, "%s: %lld labels", path, (long long)n);
    dsmm_idx m = 0, line = 0;
    const char *p = src.buf, *end = src.buf + src.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        line++;
        const char *q = p;
        p = nl ? nl + 1 : end;
        if (eol > q && eol[-1] == '\r') eol--;
        if (q == eol) continue; // blank line
        dsmm_idx idx = 0;
        int digits = 0;
        while (q < eol && *q >= '0' && *q <= '9' && digits < 19)
            idx = idx * 10 + (*q++ - '0'), digits++;
        DSMM_CHECK(ctx,
                   digits > 0 && digits < 19 && q < eol && (*q == '\t' || *q == ' ') && q + 1 < eol,
                   DSMM_ERR_FORMAT, "%s:%lld: expected 'index<TAB>label'", path, (long long)line);
        DSMM_CHECK(ctx, idx < n, DSMM_ERR_FORMAT, "%s:%lld: index %lld outside the graph's 0..%lld",
                   path, (long long)line, (long long)idx, (long long)n - 1);
        DSMM_CHECK(ctx, m < n, DSMM_ERR_FORMAT, "%s:%lld: more than %lld labels", path,
                   (long long)line, (long long)n);
        q++;
        e[m++] = (tab_entry){idx, q, (size_t)(eol - q), line};
    }
    qsort(e, (size_t)m, sizeof *e, tab_cmp);
    for (dsmm_idx k = 0; k < m; k++) {
        // Sorted: a repeat shows as an index below its place, a gap as one above it.
        DSMM_CHECK(ctx, e[k].idx >= k, DSMM_ERR_FORMAT, "%s:%lld: index %lld listed twice", path,
                   (long long)e[k].line, (long long)e[k].idx);
        DSMM_CHECK(ctx, e[k].idx == k, DSMM_ERR_FORMAT, "%s: index %lld has no label", path,
                   (long long)k);
    }
    DSMM_CHECK(ctx, m == n, DSMM_ERR_FORMAT,
               "%s: index %lld has no label (%lld labels for a graph of %lld vertices)", path,
               (long long)m, (long long)m, (long long)n);
    DSMM_TRY(dsmmi_labels_create(ctx, &L));
    for (dsmm_idx k = 0; k < n; k++) {
        dsmm_idx got = -1;
        DSMM_TRY(dsmmi_labels_intern(L, e[k].name, e[k].len, &got));
        DSMM_CHECK(ctx, got == k, DSMM_ERR_FORMAT, "%s:%lld: label '%.*s' also names index %lld",
                   path, (long long)e[k].line, (int)(e[k].len > 60 ? 60 : e[k].len), e[k].name,
                   (long long)got);
    }
    *out = L;
    L = NULL;
cleanup:
    dsmm_labels_destroy(&L);
    dsmmi_free(ctx, e);
    dsmmi_source_free(ctx, &src);
    return st;
}
