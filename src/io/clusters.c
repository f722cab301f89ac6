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

dsmm_status dsmmi_write_clusters_base(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                      const dsmm_idx *cluster, const dsmm_labels *labels, int base)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *start = NULL, *members = NULL;
    dsmmi_outfile out;
    int is_open = 0;

    DSMM_CHECK(ctx, path != NULL, DSMM_ERR_ARG, "write_clusters: path must be non-NULL");
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "write_clusters: n = %lld < 0", (long long)n);
    DSMM_CHECK(ctx, n == 0 || cluster != NULL, DSMM_ERR_ARG,
               "write_clusters: cluster must be non-NULL");
    DSMM_CHECK(ctx, labels == NULL || dsmm_labels_count(labels) >= n, DSMM_ERR_ARG,
               "write_clusters: %lld labels for %lld vertices",
               (long long)dsmm_labels_count(labels), (long long)n);
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
    // start[c] now ends cluster c, so cluster c is [start[c - 1], start[c]).

    DSMM_TRY(dsmmi_outfile_open(ctx, &out, path));
    is_open = 1;
    dsmm_idx lo = 0;
    int bad = 0;
    for (dsmm_idx c = 0; c < n && !bad; c++) {
        dsmm_idx hi = start[c];
        for (dsmm_idx k = lo; k < hi && !bad; k++) {
            if (k > lo) bad = fputc('\t', out.f) == EOF;
            if (labels)
                bad = bad || fputs(dsmm_labels_name(labels, members[k]), out.f) < 0;
            else
                bad = bad || fprintf(out.f, "%lld", (long long)members[k] + base) < 0;
        }
        if (hi > lo) bad = bad || fputc('\n', out.f) == EOF;
        lo = hi;
    }
    DSMM_CHECK(ctx, !bad && !ferror(out.f), DSMM_ERR_IO, "%s: write failed", path);
    is_open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &out));
cleanup:
    if (is_open) dsmmi_outfile_abort(ctx, &out);
    dsmmi_free(ctx, start);
    dsmmi_free(ctx, members);
    return st;
}
