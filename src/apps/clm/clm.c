// src/apps/clm/clm.c: the cluster tools of mcl's clm, without mcl: reading clusterings (mcl's
// label format or its native matrix format), comparing two of them (clm dist: split/join,
// variation of information, Mirkin, Rand, Jaccard, adjusted Rand) and scoring one on its graph
// (clm info: efficiency, modularity, mass and area fractions, granularity).
//
// Method. dist builds the contingency table of A and B with two counting sorts (by B's cluster,
// then stably by A's), so each (a, b) cell is a run of equal pairs: O(n + clusters), no hashing.
// Every measure follows from the cell counts n_ab and the cluster sizes (van Dongen, INS-R0012,
// 2000; Meila 2005; Hubert and Arabie 1985); the formulas and the conventions taken from mcl
// 22-282 are in docs/clm.md. info is one pass over the graph's rows: the coverage of node v in
// its cluster c (van Dongen's efficiency) needs the weight inside and outside c, the sum of
// squared weights and the number of neighbours outside c, with v's loop set to the largest
// weight of its row as clm info does (mclxAdjustLoops with mclxLoopCBmax).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "io/io.h"

// (id, node) pairs, by id then node.
static int pair_cmp(const void *x, const void *y)
{
    const dsmm_idx *a = x, *b = y;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

static dsmm_status clustering_alloc(dsmm_ctx *ctx, dsmm_idx n, dsmm_clustering **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_clustering *C = dsmmi_calloc(ctx, 1, sizeof *C);
    DSMM_CHECK(ctx, C != NULL, DSMM_ERR_NOMEM, "clustering");
    C->ctx = ctx;
    C->n = n;
    C->cluster = dsmmi_malloc(ctx, n > 0 ? (size_t)n : 1, sizeof *C->cluster);
    DSMM_CHECK(ctx, C->cluster != NULL, DSMM_ERR_NOMEM, "clustering of %lld nodes", (long long)n);
    for (dsmm_idx i = 0; i < n; i++) C->cluster[i] = -1;
    *out = C;
    C = NULL;
cleanup:
    dsmm_clustering_destroy(&C);
    return st;
}

void dsmm_clustering_destroy(dsmm_clustering **C)
{
    if (C == NULL || *C == NULL) return;
    dsmm_ctx *ctx = (*C)->ctx;
    dsmmi_free(ctx, (*C)->cluster);
    dsmmi_free(ctx, *C);
    *C = NULL;
}

dsmm_status dsmm_clustering_create(dsmm_ctx *ctx, dsmm_idx n, const dsmm_idx *ids,
                                   dsmm_clustering **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_clustering *C = NULL;
    dsmm_idx *renum = NULL;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "clustering_create: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "clustering_create: n = %lld < 0", (long long)n);
    DSMM_CHECK(ctx, n == 0 || ids != NULL, DSMM_ERR_ARG, "clustering_create: ids is NULL");
    dsmm_idx maxid = -1;
    for (dsmm_idx i = 0; i < n; i++) {
        DSMM_CHECK(ctx, ids[i] >= -1, DSMM_ERR_ARG,
                   "clustering_create: node %lld has cluster id %lld < -1", (long long)i,
                   (long long)ids[i]);
        if (ids[i] > maxid) maxid = ids[i];
    }
    // Ids may be any numbers: renumber through a map when they fit in 0..n-1 (the usual
    // case), else through a sorted copy.
    DSMM_TRY(clustering_alloc(ctx, n, &C));
    if (maxid < n) {
        renum = dsmmi_malloc(ctx, n > 0 ? (size_t)n : 1, sizeof *renum);
        DSMM_CHECK(ctx, renum != NULL, DSMM_ERR_NOMEM, "clustering of %lld nodes", (long long)n);
        for (dsmm_idx i = 0; i < n; i++) renum[i] = -1;
        for (dsmm_idx i = 0; i < n; i++) {
            if (ids[i] < 0) continue;
            if (renum[ids[i]] < 0) renum[ids[i]] = C->nclusters++;
            C->cluster[i] = renum[ids[i]];
            C->listed++;
        }
    } else {
        // Large ids: sort (id, node) pairs; each run's first node is the id's first appearance.
        renum = dsmmi_malloc(ctx, (size_t)n, 2 * sizeof *renum);
        DSMM_CHECK(ctx, renum != NULL, DSMM_ERR_NOMEM, "clustering of %lld nodes", (long long)n);
        dsmm_idx m = 0;
        for (dsmm_idx i = 0; i < n; i++)
            if (ids[i] >= 0) renum[2 * m] = ids[i], renum[2 * m + 1] = i, m++;
        qsort(renum, (size_t)m, 2 * sizeof *renum, pair_cmp);
        for (dsmm_idx k = 0; k < m;) {
            dsmm_idx e = k;
            while (e < m && renum[2 * e] == renum[2 * k]) e++;
            for (dsmm_idx q = k; q < e; q++) C->cluster[renum[2 * q + 1]] = renum[2 * k + 1];
            k = e;
        }
        // cluster[i] now holds the first node of i's cluster: number clusters in node order.
        for (dsmm_idx i = 0; i < n; i++) {
            dsmm_idx f = C->cluster[i];
            if (f < 0) continue;
            C->cluster[i] = f == i ? C->nclusters++ : C->cluster[f];
            C->listed++;
        }
    }
    *out = C;
    C = NULL;
cleanup:
    dsmm_clustering_destroy(&C);
    dsmmi_free(ctx, renum);
    return st;
}

dsmm_status dsmm_labels_create_index(dsmm_ctx *ctx, dsmm_idx n, dsmm_labels **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_labels *L = NULL;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "labels_create_index: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "labels_create_index: n = %lld < 0", (long long)n);
    DSMM_TRY(dsmmi_labels_create(ctx, &L));
    for (dsmm_idx i = 0; i < n; i++) {
        char name[24];
        int len = snprintf(name, sizeof name, "%lld", (long long)i);
        dsmm_idx idx;
        DSMM_TRY(dsmmi_labels_intern(L, name, (size_t)len, &idx));
    }
    *out = L;
    L = NULL;
cleanup:
    dsmm_labels_destroy(&L);
    return st;
}

// The state of one read: the clustering grows with the dictionary (cluster[] covers every
// index seen so far), and each cluster remembers its line for duplicate messages.
typedef struct reader {
    dsmm_ctx *ctx;
    const char *path;
    dsmm_labels *L;
    int grow;
    dsmm_idx *cluster, cap; // per node index, -1 = not listed
    dsmm_idx *line, lcap;   // line of each cluster
    dsmm_idx ncl, listed;
} reader;

// Makes room for node index idx and cluster ncl.
static dsmm_status reader_room(reader *r, dsmm_idx idx)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = r->ctx;
    if (idx >= r->cap) {
        dsmm_idx cap = r->cap ? r->cap : 64;
        while (cap <= idx) cap *= 2;
        dsmm_idx *p = dsmmi_realloc(ctx, r->cluster, (size_t)cap, sizeof *p);
        DSMM_CHECK(ctx, p != NULL, DSMM_ERR_NOMEM, "%s: clustering of %lld nodes", r->path,
                   (long long)cap);
        for (dsmm_idx i = r->cap; i < cap; i++) p[i] = -1;
        r->cluster = p;
        r->cap = cap;
    }
    if (r->ncl >= r->lcap) {
        dsmm_idx cap = r->lcap ? 2 * r->lcap : 64;
        dsmm_idx *p = dsmmi_realloc(ctx, r->line, (size_t)cap, sizeof *p);
        DSMM_CHECK(ctx, p != NULL, DSMM_ERR_NOMEM, "%s: %lld clusters", r->path, (long long)cap);
        r->line = p;
        r->lcap = cap;
    }
cleanup:
    return st;
}

// The node index of name[0..len) (name[len] must be writable: it becomes NUL when the
// dictionary is only searched).
static dsmm_status reader_node(reader *r, char *name, size_t len, dsmm_idx line, dsmm_idx *idx)
{
    dsmm_status st = DSMM_OK;
    if (r->grow) {
        DSMM_TRY(dsmmi_labels_intern(r->L, name, len, idx));
    } else {
        char keep = name[len];
        name[len] = '\0';
        *idx = dsmm_labels_find(r->L, name);
        if (*idx < 0) {
            name[len] = keep;
            DSMM_FAIL(r->ctx, DSMM_ERR_FORMAT,
                      "%s:%lld: node '%.*s%s' is not among the %lld known nodes", r->path,
                      (long long)line, (int)(len > 200 ? 197 : len), name, len > 200 ? "..." : "",
                      (long long)dsmm_labels_count(r->L));
        }
        name[len] = keep;
    }
cleanup:
    return st;
}

// Puts node idx in the current cluster (r->ncl).
static dsmm_status reader_put(reader *r, dsmm_idx idx, dsmm_idx line)
{
    dsmm_status st = DSMM_OK;
    DSMM_TRY(reader_room(r, idx));
    if (r->cluster[idx] >= 0) {
        dsmm_idx first = r->line[r->cluster[idx]];
        DSMM_FAIL(r->ctx, DSMM_ERR_FORMAT, "%s:%lld: node '%s' is listed twice (%s line %lld)",
                  r->path, (long long)line, dsmm_labels_name(r->L, idx),
                  first == line ? "twice on" : "also on", (long long)first);
    }
    r->cluster[idx] = r->ncl;
    r->line[r->ncl] = line;
    r->listed++;
cleanup:
    return st;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// mcl's label format: one cluster per line, members separated by blanks.
static dsmm_status read_labels(reader *r, char *buf, size_t len)
{
    dsmm_status st = DSMM_OK;
    char *p = buf, *end = buf + len;
    dsmm_idx line = 1;
    while (p < end) {
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) eol = end;
        dsmm_idx members = 0;
        while (p < eol) {
            while (p < eol && is_blank(*p)) p++;
            char *t = p;
            while (p < eol && !is_blank(*p)) p++;
            if (p == t) break;
            dsmm_idx idx;
            DSMM_TRY(reader_node(r, t, (size_t)(p - t), line, &idx));
            DSMM_TRY(reader_put(r, idx, line));
            members++;
        }
        if (members > 0) r->ncl++;
        p = eol + 1;
        line++;
    }
cleanup:
    return st;
}

// A non-negative decimal at *p (no sign); advances *p. -1 when there is none or it overflows.
static dsmm_idx parse_index(const char **p, const char *end)
{
    const char *q = *p;
    dsmm_idx v = 0;
    if (q >= end || *q < '0' || *q > '9') return -1;
    while (q < end && *q >= '0' && *q <= '9') {
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = 10 * v + (*q++ - '0');
    }
    *p = q;
    return v;
}

// Skips blanks and newlines, counting the newlines in *line.
static const char *skip_space(const char *p, const char *end, dsmm_idx *line)
{
    for (; p < end && (is_blank(*p) || *p == '\n'); p++) *line += *p == '\n';
    return p;
}

// mcl's native format: a header "(mclheader ... dimensions NxK )", then "(mclmatrix begin",
// then per cluster its id, its members (node indices, each maybe ":value") and "$", then ")".
// Nodes of the domain 0..N-1 that no cluster lists form one more cluster, as clm does.
static dsmm_status read_native(reader *r, const char *buf, size_t len)
{
    dsmm_status st = DSMM_OK;
    dsmm_ctx *ctx = r->ctx;
    const char *end = buf + len, *p;
    dsmm_idx *dom = NULL;
    const char *dims = strstr(buf, "dimensions");
    const char *mat = strstr(buf, "(mclmatrix");
    DSMM_CHECK(ctx, dims != NULL && mat != NULL && dims < mat, DSMM_ERR_FORMAT,
               "%s: mcl matrix without 'dimensions' or '(mclmatrix'", r->path);
    dsmm_idx line = dsmmi_line_of(buf, (size_t)(dims - buf)), dims_line = line;
    p = skip_space(dims + strlen("dimensions"), end, &line);
    dsmm_idx nn = parse_index(&p, end), k = -1;
    if (nn >= 0 && p < end && *p == 'x') {
        p++;
        k = parse_index(&p, end);
    }
    DSMM_CHECK(ctx, nn >= 0 && k >= 0, DSMM_ERR_FORMAT, "%s:%lld: bad 'dimensions NxK' line",
               r->path, (long long)dims_line);
    // A domain far larger than the file could list is a corrupt header, not a clustering.
    DSMM_CHECK(ctx, (size_t)nn <= 4 * len + 4096, DSMM_ERR_FORMAT,
               "%s: dimensions %lldx%lld: more nodes than a file of %zu bytes can hold", r->path,
               (long long)nn, (long long)k, len);
    dom = dsmmi_malloc(ctx, nn > 0 ? (size_t)nn : 1, sizeof *dom);
    DSMM_CHECK(ctx, dom != NULL, DSMM_ERR_NOMEM, "%s: domain of %lld nodes", r->path,
               (long long)nn);
    for (dsmm_idx i = 0; i < nn; i++) {
        char name[24];
        int nl = snprintf(name, sizeof name, "%lld", (long long)i);
        DSMM_TRY(reader_node(r, name, (size_t)nl, dims_line, &dom[i]));
    }
    line = dsmmi_line_of(buf, (size_t)(mat - buf));
    p = skip_space(mat + strlen("(mclmatrix"), end, &line);
    DSMM_CHECK(ctx, (size_t)(end - p) >= 5 && memcmp(p, "begin", 5) == 0, DSMM_ERR_FORMAT,
               "%s:%lld: 'begin' expected after '(mclmatrix'", r->path, (long long)line);
    p += 5;
    for (;;) {
        p = skip_space(p, end, &line);
        DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT, "%s: the matrix does not end with ')'", r->path);
        if (*p == ')') break;
        dsmm_idx cid = parse_index(&p, end);
        DSMM_CHECK(ctx, cid >= 0 && cid < k, DSMM_ERR_FORMAT,
                   "%s:%lld: cluster index expected in 0..%lld", r->path, (long long)line,
                   (long long)k - 1);
        dsmm_idx members = 0;
        for (;;) {
            p = skip_space(p, end, &line);
            DSMM_CHECK(ctx, p < end, DSMM_ERR_FORMAT, "%s: cluster %lld does not end with '$'",
                       r->path, (long long)cid);
            if (*p == '$') {
                p++;
                break;
            }
            const char *at = p;
            dsmm_idx m = parse_index(&p, end);
            DSMM_CHECK(ctx, m >= 0 && m < nn, DSMM_ERR_FORMAT,
                       "%s:%lld: node index expected in 0..%lld", r->path, (long long)line,
                       (long long)nn - 1);
            if (p < end && *p == ':') { // a value: skip it
                p++;
                while (p < end && !is_blank(*p) && *p != '\n' && *p != '$') p++;
            }
            DSMM_CHECK(ctx, p >= end || is_blank(*p) || *p == '\n' || *p == '$', DSMM_ERR_FORMAT,
                       "%s:%lld: bad member '%.20s'", r->path, (long long)line, at);
            DSMM_TRY(reader_put(r, dom[m], line));
            members++;
        }
        if (members > 0) r->ncl++;
    }
    dsmm_idx missing = 0;
    for (dsmm_idx i = 0; i < nn; i++) {
        if (dom[i] < r->cap && r->cluster[dom[i]] >= 0) continue;
        DSMM_TRY(reader_put(r, dom[i], 0));
        missing++;
    }
    if (missing > 0) r->ncl++;
cleanup:
    dsmmi_free(ctx, dom);
    return st;
}

// The native format starts with "(mclheader", after blanks and '#' comment lines.
static int is_native(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    for (;;) {
        while (p < end && (is_blank(*p) || *p == '\n')) p++;
        if (p < end && *p == '#') {
            const char *eol = memchr(p, '\n', (size_t)(end - p));
            if (eol == NULL) return 0;
            p = eol + 1;
            continue;
        }
        break;
    }
    return (size_t)(end - p) >= 10 && memcmp(p, "(mclheader", 10) == 0;
}

// The clustering in src (mcl's native format or its label format): dsmm_clustering_read after
// the load, dsmmi_clustering_read_buffer after the wrap.
static dsmm_status clustering_parse(dsmm_ctx *ctx, const dsmmi_source *src, dsmm_labels **labels,
                                    int grow, dsmm_clustering **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_labels *own = NULL;
    dsmm_clustering *C = NULL;
    reader r;
    memset(&r, 0, sizeof r);

    if (*labels == NULL) {
        DSMM_TRY(dsmmi_labels_create(ctx, &own));
        grow = 1;
    }
    r.ctx = ctx;
    r.path = src->name;
    r.L = own ? own : *labels;
    r.grow = grow;
    // A label holding a NUL could be added to the dictionary but never looked up again (names
    // are C strings), and mcl's files have none: a NUL means this is not a cluster file.
    const char *nul = memchr(src->buf, '\0', src->len);
    DSMM_CHECK(ctx, nul == NULL, DSMM_ERR_FORMAT,
               "%s:%lld: NUL byte in a text file (not a cluster file?)", src->name,
               (long long)dsmmi_line_of(src->buf, (size_t)(nul - src->buf)));
    if (is_native(src->buf, src->len))
        DSMM_TRY(read_native(&r, src->buf, src->len));
    else
        DSMM_TRY(read_labels(&r, src->buf, src->len));
    dsmm_idx n = dsmm_labels_count(r.L);
    DSMM_TRY(clustering_alloc(ctx, n, &C));
    for (dsmm_idx i = 0; i < n && i < r.cap; i++) C->cluster[i] = r.cluster[i];
    C->nclusters = r.ncl;
    C->listed = r.listed;
    if (own) {
        *labels = own;
        own = NULL;
    }
    *out = C;
    C = NULL;
cleanup:
    dsmmi_free(ctx, r.cluster);
    dsmmi_free(ctx, r.line);
    dsmm_labels_destroy(&own);
    dsmm_clustering_destroy(&C);
    return st;
}

dsmm_status dsmm_clustering_read(dsmm_ctx *ctx, const char *path, dsmm_labels **labels, int grow,
                                 dsmm_clustering **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    int loaded = 0;

    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "clustering_read: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, path != NULL && labels != NULL, DSMM_ERR_ARG,
               "clustering_read: path and labels must be non-NULL");
    DSMM_TRY(dsmmi_source_load(ctx, path, &src));
    loaded = 1;
    DSMM_TRY(clustering_parse(ctx, &src, labels, grow, out));
cleanup:
    if (loaded) dsmmi_source_free(ctx, &src);
    return st;
}

dsmm_status dsmmi_clustering_read_buffer(dsmm_ctx *ctx, const char *buf, size_t len,
                                         const char *name, dsmm_labels **labels, int grow,
                                         dsmm_clustering **out)
{
    dsmm_status st = DSMM_OK;
    dsmmi_source src = {0};
    int loaded = 0;

    DSMM_CHECK(ctx, out != NULL && labels != NULL && (buf != NULL || len == 0), DSMM_ERR_ARG,
               "clustering_read_buffer: out, labels and buf must be non-NULL");
    *out = NULL;
    DSMM_TRY(dsmmi_source_wrap(ctx, buf, len, name ? name : "(buffer)", &src));
    loaded = 1;
    DSMM_TRY(clustering_parse(ctx, &src, labels, grow, out));
cleanup:
    if (loaded) dsmmi_source_free(ctx, &src);
    return st;
}

static double xlogx(double x)
{
    return x > 0 ? x * log(x) : 0.0;
}

static double pairs(double x)
{
    return 0.5 * x * (x - 1);
}

dsmm_status dsmm_clm_dist(dsmm_ctx *ctx, const dsmm_clustering *A, const dsmm_clustering *B,
                          dsmm_clm_dist_stats *out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *a = NULL, *b = NULL, *cnt = NULL, *by_b = NULL, *by_ab = NULL, *maxb = NULL;
    dsmm_idx *size_a = NULL, *size_b = NULL;
    DSMM_CHECK(ctx, A != NULL && B != NULL && out != NULL, DSMM_ERR_ARG,
               "clm_dist: A, B and out must be non-NULL");
    memset(out, 0, sizeof *out);
    dsmm_idx nall = A->n > B->n ? A->n : B->n;
    size_t cap = nall > 0 ? (size_t)nall : 1;
    a = dsmmi_malloc(ctx, cap, sizeof *a);
    b = dsmmi_malloc(ctx, cap, sizeof *b);
    by_b = dsmmi_malloc(ctx, cap, sizeof *by_b);
    by_ab = dsmmi_malloc(ctx, cap, sizeof *by_ab);
    DSMM_CHECK(ctx, a && b && by_b && by_ab, DSMM_ERR_NOMEM, "clm_dist: %lld nodes",
               (long long)nall);

    // The compared nodes, each with its cluster in A and in B; the nodes one side lacks go
    // together into one extra cluster there, as clm's "not a partition (fixed ...)" does.
    dsmm_idx n = 0, ka = A->nclusters + 1, kb = B->nclusters + 1;
    for (dsmm_idx i = 0; i < nall; i++) {
        dsmm_idx ca = i < A->n ? A->cluster[i] : -1, cb = i < B->n ? B->cluster[i] : -1;
        if (ca < 0 && cb < 0) continue;
        DSMM_CHECK(ctx, ca < A->nclusters && cb < B->nclusters, DSMM_ERR_ARG,
                   "clm_dist: node %lld has a cluster id beyond nclusters", (long long)i);
        if (ca < 0) ca = A->nclusters, out->only_b++;
        if (cb < 0) cb = B->nclusters, out->only_a++;
        a[n] = ca;
        b[n] = cb;
        n++;
    }
    size_t kmax = (size_t)(ka > kb ? ka : kb) + 1;
    cnt = dsmmi_calloc(ctx, kmax, sizeof *cnt);
    maxb = dsmmi_calloc(ctx, (size_t)kb + 1, sizeof *maxb);
    size_a = dsmmi_calloc(ctx, (size_t)ka + 1, sizeof *size_a);
    size_b = dsmmi_calloc(ctx, (size_t)kb + 1, sizeof *size_b);
    DSMM_CHECK(ctx, cnt && maxb && size_a && size_b, DSMM_ERR_NOMEM, "clm_dist: %lld clusters",
               (long long)kmax);
    for (dsmm_idx i = 0; i < n; i++) size_a[a[i]]++, size_b[b[i]]++;

    // Counting sort by b, then stably by a: equal (a, b) pairs form runs.
    for (dsmm_idx i = 0; i < n; i++) cnt[b[i] + 1]++;
    for (dsmm_idx c = 0; c < kb; c++) cnt[c + 1] += cnt[c];
    for (dsmm_idx i = 0; i < n; i++) by_b[cnt[b[i]]++] = i;
    memset(cnt, 0, kmax * sizeof *cnt);
    for (dsmm_idx i = 0; i < n; i++) cnt[a[i] + 1]++;
    for (dsmm_idx c = 0; c < ka; c++) cnt[c + 1] += cnt[c];
    for (dsmm_idx k = 0; k < n; k++) by_ab[cnt[a[by_b[k]]]++] = by_b[k];

    dsmm_idx sum_maxa = 0, ssq_ab = 0;
    double xl_ab = 0, pairs_ab = 0;
    for (dsmm_idx k = 0; k < n;) {
        dsmm_idx ca = a[by_ab[k]], row_max = 0;
        while (k < n && a[by_ab[k]] == ca) {
            dsmm_idx cb = b[by_ab[k]], e = k;
            while (e < n && a[by_ab[e]] == ca && b[by_ab[e]] == cb) e++;
            dsmm_idx nab = e - k;
            if (nab > row_max) row_max = nab;
            if (nab > maxb[cb]) maxb[cb] = nab;
            ssq_ab += nab * nab;
            xl_ab += xlogx((double)nab);
            pairs_ab += pairs((double)nab);
            k = e;
        }
        sum_maxa += row_max;
    }
    dsmm_idx sum_maxb = 0, ssq_a = 0, ssq_b = 0;
    double xl_a = 0, xl_b = 0, pairs_a = 0, pairs_b = 0;
    for (dsmm_idx c = 0; c < ka; c++) {
        if (size_a[c] == 0) continue;
        out->nclusters_a++;
        ssq_a += size_a[c] * size_a[c];
        xl_a += xlogx((double)size_a[c]);
        pairs_a += pairs((double)size_a[c]);
    }
    for (dsmm_idx c = 0; c < kb; c++) {
        if (size_b[c] == 0) continue;
        out->nclusters_b++;
        sum_maxb += maxb[c];
        ssq_b += size_b[c] * size_b[c];
        xl_b += xlogx((double)size_b[c]);
        pairs_b += pairs((double)size_b[c]);
    }

    out->n = n;
    out->sj_ab = n - sum_maxa;
    out->sj_ba = n - sum_maxb;
    out->sj = out->sj_ab + out->sj_ba;
    if (n > 0) {
        // H(B|A) = (sum_a |a| log |a| - sum_ab n_ab log n_ab) / n; rounding can leave -1e-17.
        out->vi_ab = fmax(0.0, (xl_a - xl_ab) / (double)n);
        out->vi_ba = fmax(0.0, (xl_b - xl_ab) / (double)n);
    }
    out->vi = out->vi_ab + out->vi_ba;
    out->mk_ab = ssq_a - ssq_ab;
    out->mk_ba = ssq_b - ssq_ab;
    out->mk = out->mk_ab + out->mk_ba;

    // Pairs of nodes: together in both (pairs_ab), in A only, in B only, apart in both.
    double t = pairs((double)n);
    out->rand = t > 0 ? (t - pairs_a - pairs_b + 2 * pairs_ab) / t : 1.0;
    double jden = pairs_a + pairs_b - pairs_ab;
    out->jaccard = jden > 0 ? pairs_ab / jden : 1.0;
    // Hubert-Arabie: (index - expected) / (max - expected). The denominator is 0 only when
    // both are all singletons or both one cluster, i.e. identical: ARI 1 (clm prints nan).
    double expect = t > 0 ? pairs_a * pairs_b / t : 0.0;
    double aden = 0.5 * (pairs_a + pairs_b) - expect;
    out->ari = aden != 0 ? (pairs_ab - expect) / aden : 1.0;
cleanup:
    dsmmi_free(ctx, a);
    dsmmi_free(ctx, b);
    dsmmi_free(ctx, cnt);
    dsmmi_free(ctx, by_b);
    dsmmi_free(ctx, by_ab);
    dsmmi_free(ctx, maxb);
    dsmmi_free(ctx, size_a);
    dsmmi_free(ctx, size_b);
    return st;
}

static int size_desc(const void *x, const void *y)
{
    dsmm_idx a = *(const dsmm_idx *)x, b = *(const dsmm_idx *)y;
    return (a < b) - (a > b);
}

// Granularity as clmGranularity: sizes sorted largest first, then accumulated from the
// smallest up; DGI counts the smallest clusters needed to reach the largest size, TWI is the
// position (largest first, 0-based) where they reach half the nodes.
static void granularity(dsmm_idx nn, dsmm_idx *sz, dsmm_idx k, dsmm_clm_info_stats *s)
{
    qsort(sz, (size_t)k, sizeof *sz, size_desc);
    s->nclusters = k;
    if (k == 0) return;
    dsmm_idx sum = 0, ssq = 0;
    for (dsmm_idx c = 0; c < k; c++) sum += sz[c], ssq += sz[c] * sz[c];
    s->size_max = sz[0];
    s->size_min = sz[k - 1];
    s->size_ctr = sum > 0 ? (double)ssq / (double)sum : 0.0;
    s->size_avg = (double)nn / (double)k;
    dsmm_idx acc = 0, half = (nn + 1) / 2;
    int have_tw = 0;
    for (dsmm_idx d = k - 1; d >= 0; d--) {
        acc += sz[d];
        if (sz[d] <= 1) s->singletons = k - d;
        if (sz[d] <= 4) s->qrt = k - d;
        if (s->dgi == 0 && acc >= s->size_max) s->dgi = k - d;
        if (!have_tw && acc >= half) {
            s->twi = d;
            s->twl = sz[d];
            have_tw = d != 0; // clm tests its index for 0, so index 0 may be overwritten
        }
    }
}

// Whether u is a member of cluster c (its clusters are vcl[vstart[u] .. vstart[u + 1])).
static int member_of(const dsmm_idx *vstart, const dsmm_idx *vcl, dsmm_idx n, dsmm_idx u,
                     dsmm_idx c)
{
    if (u >= n) return 0;
    for (dsmm_idx q = vstart[u]; q < vstart[u + 1]; q++)
        if (vcl[q] == c) return 1;
    return 0;
}

void dsmmi_clm_info_rows(const dsmm_csr *G, dsmm_idx row0, const dsmm_idx *vstart,
                         const dsmm_idx *vcl, dsmm_idx n, const dsmm_idx *size, int stored_loops,
                         dsmmi_clm_sums *s)
{
    for (dsmm_idx i = 0; i < G->nrows; i++) {
        dsmm_idx v = row0 + i;
        // The row's off-diagonal weight, largest weight and stored loop; stored zeros are no
        // edges (mcl keeps none). The loop: the row's largest weight (1 when it has none), as
        // clm info sets it, or the stored one (0 when none), as mcl --analyze reads its start.
        double wmax = 0, wsum = 0, stored = 0;
        int any = 0;
        for (dsmm_idx q = G->rowptr[i]; q < G->rowptr[i + 1]; q++) {
            dsmm_idx u = dsmm_csr_col(G, q);
            double w = dsmm_csr_value(G, q);
            if (u == v) stored += w;
            if (u == v || w == 0) continue;
            wsum += w;
            if (!any || w > wmax) wmax = w;
            any = 1;
        }
        s->total += wsum;
        double loop = stored_loops ? stored : any && wmax != 0 ? wmax : 1.0;
        // Each cluster of v (one in a partition; several where clusters overlap).
        for (dsmm_idx m = v < n ? vstart[v] : 0; v < n && m < vstart[v + 1]; m++) {
            dsmm_idx c = vcl[m];
            double in = 0, outw = 0, ssq = 0;
            dsmm_idx nout = 0;
            for (dsmm_idx q = G->rowptr[i]; q < G->rowptr[i + 1]; q++) {
                dsmm_idx u = dsmm_csr_col(G, q);
                double w = dsmm_csr_value(G, q);
                if (u == v || w == 0) continue;
                if (member_of(vstart, vcl, n, u, c)) {
                    in += w;
                } else {
                    outw += w;
                    nout++;
                }
                ssq += w * w;
            }
            s->deg[c] += wsum;
            s->win[c] += in;
            in += loop;
            ssq += loop * loop;
            double sum = in + outw;
            if (sum != 0) s->mf += in / sum;
            if (sum * sum > 0) {
                // van Dongen's coverage (clmVScoreCoverage): the node's neighbourhood N (loop
                // included) against its cluster c, over |N u c| = nout + |c| nodes.
                double ctr = ssq / (sum * sum), div = (in - outw) / sum;
                double njoin = (double)(nout + size[c]);
                s->eff += 1.0 - ((double)size[c] - div / ctr) / njoin;
            }
        }
    }
}

dsmm_status dsmmi_clm_memberships(dsmm_ctx *ctx, dsmm_idx n, dsmm_idx k, const dsmm_idx *start,
                                  const dsmm_idx *members, dsmm_idx **vstart, dsmm_idx **vcl,
                                  dsmm_idx **size)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx m = k > 0 ? start[k] : 0;
    dsmm_idx *vs = dsmmi_calloc(ctx, (size_t)n + 2, sizeof *vs);
    dsmm_idx *vc = dsmmi_malloc(ctx, (size_t)m + 1, sizeof *vc);
    dsmm_idx *sz = dsmmi_calloc(ctx, (size_t)k + 1, sizeof *sz);
    *vstart = *vcl = *size = NULL;
    DSMM_CHECK(ctx, vs && vc && sz, DSMM_ERR_NOMEM, "clm_info: %lld memberships", (long long)m);
    for (dsmm_idx c = 0; c < k; c++)
        for (dsmm_idx q = start[c]; q < start[c + 1]; q++) {
            DSMM_CHECK(ctx, members[q] >= 0 && members[q] < n, DSMM_ERR_ARG,
                       "clm_info: cluster %lld lists node %lld of %lld", (long long)c,
                       (long long)members[q], (long long)n);
            vs[members[q] + 2]++;
            sz[c]++;
        }
    for (dsmm_idx v = 0; v < n; v++) vs[v + 2] += vs[v + 1];
    for (dsmm_idx c = 0; c < k; c++) // clusters in increasing order within each node
        for (dsmm_idx q = start[c]; q < start[c + 1]; q++) vc[vs[members[q] + 1]++] = c;
    *vstart = vs;
    *vcl = vc;
    *size = sz;
    vs = vc = sz = NULL;
cleanup:
    dsmmi_free(ctx, vs);
    dsmmi_free(ctx, vc);
    dsmmi_free(ctx, sz);
    return st;
}

dsmm_status dsmmi_clm_info_finish(dsmm_ctx *ctx, dsmm_idx nn, dsmm_idx k, const dsmm_idx *size,
                                  const dsmmi_clm_sums *s, dsmm_clm_info_stats *out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *sz = dsmmi_malloc(ctx, (size_t)k + 1, sizeof *sz);
    DSMM_CHECK(ctx, sz != NULL, DSMM_ERR_NOMEM, "clm_info: %lld clusters", (long long)k);
    memset(out, 0, sizeof *out);
    double area = 0, total = s->total;
    dsmm_idx kk = 0;
    for (dsmm_idx c = 0; c < k; c++) {
        if (size[c] == 0) continue;
        out->listed += size[c];
        sz[kk++] = size[c];
        area += (double)size[c] * (double)(size[c] - 1);
        if (total != 0)
            out->modularity += s->win[c] / total - (s->deg[c] / total) * (s->deg[c] / total);
    }
    out->n = nn;
    out->efficiency = out->listed > 0 ? s->eff / (double)out->listed : 0.0;
    out->massfrac = out->listed > 0 ? s->mf / (double)out->listed : 0.0;
    double nn_area = (double)nn * (double)(nn - 1);
    out->areafrac = nn_area > 0 ? area / nn_area : 0.0;
    granularity(nn, sz, kk, out);
cleanup:
    dsmmi_free(ctx, sz);
    return st;
}

double dsmmi_clm_af_shown(const dsmm_clm_info_stats *s)
{
    if (s->areafrac != 0.0) return s->areafrac;
    double nn_area = (double)s->n * (double)(s->n - 1);
    return nn_area != 0.0 ? -1.0 / nn_area : 1.0;
}

dsmm_status dsmmi_clm_sizes(dsmm_ctx *ctx, const dsmm_idx *cluster, dsmm_idx n, dsmm_idx k,
                            dsmm_idx **size)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *sz = dsmmi_calloc(ctx, (size_t)k + 1, sizeof *sz);
    *size = NULL;
    DSMM_CHECK(ctx, sz != NULL, DSMM_ERR_NOMEM, "clm_info: %lld clusters", (long long)k);
    for (dsmm_idx i = 0; i < n; i++) {
        dsmm_idx c = cluster[i];
        if (c < 0) continue;
        DSMM_CHECK(ctx, c < k, DSMM_ERR_ARG, "clm_info: node %lld has cluster %lld >= %lld",
                   (long long)i, (long long)c, (long long)k);
        sz[c]++;
    }
    *size = sz;
    sz = NULL;
cleanup:
    dsmmi_free(ctx, sz);
    return st;
}

dsmm_status dsmm_clm_info(dsmm_ctx *ctx, const dsmm_csr *G, const dsmm_clustering *C,
                          dsmm_clm_info_stats *out)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *size = NULL, *vstart = NULL;
    dsmmi_clm_sums s = {0};
    DSMM_CHECK(ctx, G != NULL && C != NULL && out != NULL, DSMM_ERR_ARG,
               "clm_info: G, C and out must be non-NULL");
    memset(out, 0, sizeof *out);
    DSMM_CHECK(ctx, G->nrows == G->ncols, DSMM_ERR_DIM, "clm_info: the graph is %lld x %lld",
               (long long)G->nrows, (long long)G->ncols);
    DSMM_CHECK(ctx, C->n <= G->nrows, DSMM_ERR_DIM,
               "clm_info: the clustering has %lld nodes, the graph %lld", (long long)C->n,
               (long long)G->nrows);
    dsmm_idx k = C->nclusters;
    DSMM_TRY(dsmmi_clm_sizes(ctx, C->cluster, C->n, k, &size));
    // A partition's memberships: node v's cluster is listed[vstart[v]] when it has one
    vstart = dsmmi_malloc(ctx, (size_t)C->n + 1, sizeof *vstart);
    s.win = dsmmi_calloc(ctx, (size_t)k + 1, sizeof *s.win);
    s.deg = dsmmi_calloc(ctx, (size_t)k + 1, sizeof *s.deg);
    DSMM_CHECK(ctx, vstart && s.win && s.deg, DSMM_ERR_NOMEM, "clm_info: %lld clusters",
               (long long)k);
    dsmm_idx *listed = dsmmi_malloc(ctx, (size_t)C->n + 1, sizeof *listed);
    DSMM_CHECK(ctx, listed != NULL, DSMM_ERR_NOMEM, "clm_info: %lld nodes", (long long)C->n);
    dsmm_idx m = 0;
    for (dsmm_idx v = 0; v < C->n; v++) {
        vstart[v] = m;
        if (C->cluster[v] >= 0) listed[m++] = C->cluster[v];
    }
    vstart[C->n] = m;
    dsmmi_clm_info_rows(G, 0, vstart, listed, C->n, size, 0, &s);
    dsmmi_free(ctx, listed);
    DSMM_TRY(dsmmi_clm_info_finish(ctx, G->nrows, k, size, &s, out));
cleanup:
    dsmmi_free(ctx, size);
    dsmmi_free(ctx, vstart);
    dsmmi_free(ctx, s.win);
    dsmmi_free(ctx, s.deg);
    return st;
}

dsmm_status dsmmi_clm_symmetrize(dsmm_ctx *ctx, const dsmm_csr *A, dsmm_csr **S)
{
    dsmm_status st = DSMM_OK;
    dsmm_coo *T = NULL;
    DSMM_CHECK(ctx, A != NULL && S != NULL, DSMM_ERR_ARG, "symmetrize: A and S must be non-NULL");
    *S = NULL;
    DSMM_CHECK(ctx, A->nrows == A->ncols, DSMM_ERR_DIM, "symmetrize: the graph is %lld x %lld",
               (long long)A->nrows, (long long)A->ncols);
    dsmm_type type = A->type == DSMM_PATTERN ? DSMM_PATTERN : DSMM_DOUBLE;
    DSMM_TRY(dsmm_coo_create(ctx, A->nrows, A->ncols, 2 * A->nnz, type, &T));
    for (dsmm_idx i = 0; i < A->nrows; i++)
        for (dsmm_idx q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            dsmm_idx j = dsmm_csr_col(A, q);
            double w = dsmm_csr_value(A, q);
            DSMM_TRY(dsmm_coo_push(T, i, j, w));
            if (j != i) DSMM_TRY(dsmm_coo_push(T, j, i, w));
        }
    DSMM_TRY(dsmm_coo_to_csr(ctx, T, DSMM_DUP_MAX, S));
cleanup:
    dsmm_coo_destroy(&T);
    return st;
}
