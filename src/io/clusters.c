// src/io/clusters.c: cluster output as mcl writes it: one cluster per line, members separated
// by tabs, clusters in order of id and members in increasing vertex index (a stable counting
// sort by cluster id gives both in O(n + nclusters)). Ids with no member produce no line.
// Without labels members are vertex numbers from `base` (0, or 1 for Matrix Market input).
#include <string.h>

#include "io/io.h"

dsmm_status dsmm_write_clusters(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                const dsmm_idx *cluster, const dsmm_labels *labels)
{
    return dsmmi_write_clusters_base(ctx, path, n, cluster, labels, 0);
}

// The members of each cluster, in vertex order: cluster c is members[start[c - 1] ..
// start[c]) (start[-1] read as 0). Checks the ids.
static dsmm_status group(dsmm_ctx *ctx, dsmm_idx n, const dsmm_idx *cluster, dsmm_idx **startp,
                         dsmm_idx **membersp)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *start = NULL, *members = NULL;
    for (dsmm_idx i = 0; i < n; i++)
        DSMM_CHECK(ctx, cluster[i] >= 0 && cluster[i] < n, DSMM_ERR_ARG,
                   "write_clusters: vertex %lld has cluster id %lld, outside 0..%lld", (long long)i,
                   (long long)cluster[i], (long long)n - 1);
    start = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *start);
    members = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *members);
    DSMM_CHECK(ctx, start != NULL && members != NULL, DSMM_ERR_NOMEM, "clusters of %lld vertices",
               (long long)n);
    for (dsmm_idx i = 0; i < n; i++) start[cluster[i] + 1]++;
    for (dsmm_idx c = 0; c < n; c++) start[c + 1] += start[c];
    for (dsmm_idx i = 0; i < n; i++) members[start[cluster[i]]++] = i;
    *startp = start;
    *membersp = members;
    start = members = NULL;
cleanup:
    dsmmi_free(ctx, start);
    dsmmi_free(ctx, members);
    return st;
}

// What a writer puts in the file for the grouped clusters; 0 on success, else a write failed.
typedef struct {
    const dsmm_labels *labels;
    int base;
} lines_arg;

static int write_lines(FILE *f, dsmm_idx n, const dsmm_idx *start, const dsmm_idx *members,
                       const void *argp)
{
    const lines_arg *a = argp;
    dsmm_idx lo = 0;
    int bad = 0;
    for (dsmm_idx c = 0; c < n && !bad; c++) {
        dsmm_idx hi = start[c];
        for (dsmm_idx k = lo; k < hi && !bad; k++) {
            if (k > lo) bad = fputc('\t', f) == EOF;
            if (a->labels)
                bad = bad || fputs(dsmm_labels_name(a->labels, members[k]), f) < 0;
            else
                bad = bad || fprintf(f, "%lld", (long long)members[k] + a->base) < 0;
        }
        if (hi > lo) bad = bad || fputc('\n', f) == EOF;
        lo = hi;
    }
    return bad;
}

static int write_native(FILE *f, dsmm_idx n, const dsmm_idx *start, const dsmm_idx *members,
                        const void *argp)
{
    (void)argp;
    dsmm_idx k = 0; // clusters (ids 0..k-1 are the non-empty ones)
    for (dsmm_idx c = 0; c < n; c++)
        if (start[c] > (c ? start[c - 1] : 0)) k++;
    int width = 1; // mcl pads each vector's index to the digits of the domain's size, plus one
    for (dsmm_idx m = n; m >= 10; m /= 10) width++;
    int bad = fprintf(f, "(mclheader\nmcltype matrix\ndimensions %lldx%lld\n)\n(mclmatrix\nbegin\n",
                      (long long)n, (long long)k) < 0;
    dsmm_idx lo = 0, id = 0;
    for (dsmm_idx c = 0; c < n && !bad; c++) {
        dsmm_idx hi = start[c];
        if (hi == lo) continue;
        // mcl's layout, near enough for its readers: lines of at most 70 characters,
        // continued after 6 spaces (mcl's own breaks fall a few characters earlier at times).
        int len = fprintf(f, "%-*lld", width + 1, (long long)id++);
        bad = len < 0;
        for (dsmm_idx m = lo; m <= hi && !bad; m++) {
            char word[24];
            int w = m < hi ? snprintf(word, sizeof word, "%lld", (long long)members[m])
                           : snprintf(word, sizeof word, "$");
            int first = m == lo;
            if (!first && len + 1 + w > 70) {
                bad = fputs("\n      ", f) < 0;
                len = 6;
                first = 1;
            }
            bad = bad || fprintf(f, "%s%s", first ? "" : " ", word) < 0;
            len += (first ? 0 : 1) + w;
        }
        bad = bad || fputc('\n', f) == EOF;
        lo = hi;
    }
    return bad || fputs(")\n", f) < 0;
}

// Groups the clusters and writes them atomically with body.
static dsmm_status
write_grouped(dsmm_ctx *ctx, const char *path, dsmm_idx n, const dsmm_idx *cluster,
              int (*body)(FILE *, dsmm_idx, const dsmm_idx *, const dsmm_idx *, const void *),
              const void *arg)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *start = NULL, *members = NULL;
    dsmmi_outfile out;
    int is_open = 0;
    DSMM_CHECK(ctx, path != NULL, DSMM_ERR_ARG, "write_clusters: path must be non-NULL");
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "write_clusters: n = %lld < 0", (long long)n);
    DSMM_CHECK(ctx, n == 0 || cluster != NULL, DSMM_ERR_ARG,
               "write_clusters: cluster must be non-NULL");
    DSMM_TRY(group(ctx, n, cluster, &start, &members));
    DSMM_TRY(dsmmi_outfile_open(ctx, &out, path));
    is_open = 1;
    int bad = body(out.f, n, start, members, arg);
    DSMM_CHECK(ctx, !bad && !ferror(out.f), DSMM_ERR_IO, "%s: write failed", path);
    is_open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &out));
cleanup:
    if (is_open) dsmmi_outfile_abort(ctx, &out);
    dsmmi_free(ctx, start);
    dsmmi_free(ctx, members);
    return st;
}

dsmm_status dsmmi_write_clusters_native(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                        const dsmm_idx *cluster)
{
    return write_grouped(ctx, path, n, cluster, write_native, NULL);
}

dsmm_status dsmmi_write_clusters_base(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                      const dsmm_idx *cluster, const dsmm_labels *labels, int base)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, labels == NULL || dsmm_labels_count(labels) >= n, DSMM_ERR_ARG,
               "write_clusters: %lld labels for %lld vertices",
               (long long)dsmm_labels_count(labels), (long long)n);
    lines_arg a = {labels, base};
    st = write_grouped(ctx, path, n, cluster, write_lines, &a);
cleanup:
    return st;
}
