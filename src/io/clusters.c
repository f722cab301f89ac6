// src/io/clusters.c: cluster output as mcl writes it: one cluster per line, members separated
// by tabs, clusters in order of id and members in increasing vertex index (a stable counting
// sort by cluster id gives both in O(n + nclusters)), or given as lists (mcl's clusters, which
// may overlap). Ids with no member produce no line.
// Without labels members are vertex numbers from `base` (0, or 1 for Matrix Market input).
#include <string.h>

#include "io/io.h"

dsmm_status dsmm_write_clusters(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                const dsmm_idx *cluster, const dsmm_labels *labels)
{
    return dsmmi_write_clusters_base(ctx, path, n, cluster, labels, 0);
}

// The members of each cluster, in vertex order: cluster c is members[start[c] ..
// start[c + 1]), for c in 0..n-1 (ids without members give empty ranges). Checks the ids.
static dsmm_status group(dsmm_ctx *ctx, dsmm_idx n, const dsmm_idx *cluster, dsmm_idx **startp,
                         dsmm_idx **membersp)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *start = NULL, *members = NULL, *fill = NULL;
    for (dsmm_idx i = 0; i < n; i++)
        DSMM_CHECK(ctx, cluster[i] >= 0 && cluster[i] < n, DSMM_ERR_ARG,
                   "write_clusters: vertex %lld has cluster id %lld, outside 0..%lld", (long long)i,
                   (long long)cluster[i], (long long)n - 1);
    start = dsmmi_calloc(ctx, (size_t)n + 1, sizeof *start);
    members = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *members);
    fill = dsmmi_malloc(ctx, (size_t)n + 1, sizeof *fill);
    DSMM_CHECK(ctx, start && members && fill, DSMM_ERR_NOMEM, "clusters of %lld vertices",
               (long long)n);
    for (dsmm_idx i = 0; i < n; i++) start[cluster[i] + 1]++;
    for (dsmm_idx c = 0; c < n; c++) start[c + 1] += start[c];
    memcpy(fill, start, (size_t)n * sizeof *fill);
    for (dsmm_idx i = 0; i < n; i++) members[fill[cluster[i]]++] = i;
    *startp = start;
    *membersp = members;
    start = members = NULL;
cleanup:
    dsmmi_free(ctx, start);
    dsmmi_free(ctx, members);
    dsmmi_free(ctx, fill);
    return st;
}

// The clusters to write: nc lists (empty ones write nothing) of vertices in 0..n-1.
typedef struct lists {
    dsmm_idx n, nc;
    const dsmm_idx *start, *members;
    const char *trailer; // written after the clusters (mcl --analyze's measures), or NULL
} lists;

// What a writer puts in the file for the clusters; 0 on success, else a write failed.
typedef struct {
    const dsmm_labels *labels;
    int base;
} lines_arg;

static int write_lines(FILE *f, const lists *l, const void *argp)
{
    const lines_arg *a = argp;
    int bad = 0;
    for (dsmm_idx c = 0; c < l->nc && !bad; c++) {
        dsmm_idx lo = l->start[c], hi = l->start[c + 1];
        for (dsmm_idx k = lo; k < hi && !bad; k++) {
            if (k > lo) bad = fputc('\t', f) == EOF;
            if (a->labels)
                bad = bad || fputs(dsmm_labels_name(a->labels, l->members[k]), f) < 0;
            else
                bad = bad || fprintf(f, "%lld", (long long)l->members[k] + a->base) < 0;
        }
        if (hi > lo) bad = bad || fputc('\n', f) == EOF;
    }
    return bad;
}

static int write_native(FILE *f, const lists *l, const void *argp)
{
    (void)argp;
    dsmm_idx k = 0; // clusters (ids 0..k-1 are the non-empty ones)
    for (dsmm_idx c = 0; c < l->nc; c++)
        if (l->start[c + 1] > l->start[c]) k++;
    int width = 1; // mcl pads each vector's index to the digits of the domain's size, plus one
    for (dsmm_idx m = l->n; m >= 10; m /= 10) width++;
    int bad = fprintf(f, "(mclheader\nmcltype matrix\ndimensions %lldx%lld\n)\n(mclmatrix\nbegin\n",
                      (long long)l->n, (long long)k) < 0;
    dsmm_idx id = 0;
    for (dsmm_idx c = 0; c < l->nc && !bad; c++) {
        dsmm_idx lo = l->start[c], hi = l->start[c + 1];
        if (hi == lo) continue;
        // mcl 22-282's layout, byte for byte (checked against its output for domains of 7 to
        // 100000 vertices): a member starts a new line, indented by width + 3 spaces, when the
        // line already holds 70 - width characters or more; the closing '$' never does.
        int len = fprintf(f, "%-*lld", width + 1, (long long)id++);
        bad = len < 0;
        for (dsmm_idx m = lo; m <= hi && !bad; m++) {
            char word[24];
            int w = m < hi ? snprintf(word, sizeof word, "%lld", (long long)l->members[m])
                           : snprintf(word, sizeof word, "$");
            int first = m == lo;
            if (!first && m < hi && len >= 70 - width) {
                bad = fprintf(f, "\n%*s", width + 3, "") < 0;
                len = width + 3;
                first = 1;
            }
            bad = bad || fprintf(f, "%s%s", first ? "" : " ", word) < 0;
            len += (first ? 0 : 1) + w;
        }
        bad = bad || fputc('\n', f) == EOF;
    }
    return bad || fputs(")\n", f) < 0;
}

// Writes the clusters atomically with body.
static dsmm_status write_lists(dsmm_ctx *ctx, const char *path, const lists *l,
                               int (*body)(FILE *, const lists *, const void *), const void *arg)
{
    dsmm_status st = DSMM_OK;
    dsmmi_outfile out;
    int is_open = 0;
    DSMM_TRY(dsmmi_outfile_open(ctx, &out, path));
    is_open = 1;
    int bad = body(out.f, l, arg);
    if (!bad && l->trailer != NULL) bad = fputs(l->trailer, out.f) < 0;
    DSMM_CHECK(ctx, !bad && !ferror(out.f), DSMM_ERR_IO, "%s: write failed", path);
    is_open = 0;
    DSMM_TRY(dsmmi_outfile_commit(ctx, &out));
cleanup:
    if (is_open) dsmmi_outfile_abort(ctx, &out);
    return st;
}

dsmm_status dsmmi_write_cluster_lists(dsmm_ctx *ctx, const char *path, dsmm_idx n, dsmm_idx nc,
                                      const dsmm_idx *start, const dsmm_idx *members,
                                      const dsmm_labels *labels, int base, int native)
{
    return dsmmi_write_cluster_lists_trailer(ctx, path, n, nc, start, members, labels, base, native,
                                             NULL);
}

dsmm_status dsmmi_write_cluster_lists_trailer(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                              dsmm_idx nc, const dsmm_idx *start,
                                              const dsmm_idx *members, const dsmm_labels *labels,
                                              int base, int native, const char *trailer)
{
    dsmm_status st = DSMM_OK;
    DSMM_CHECK(ctx, path != NULL, DSMM_ERR_ARG, "write_clusters: path must be non-NULL");
    DSMM_CHECK(ctx, n >= 0 && nc >= 0, DSMM_ERR_ARG, "write_clusters: n = %lld, %lld clusters",
               (long long)n, (long long)nc);
    DSMM_CHECK(ctx, nc == 0 || (start != NULL && members != NULL), DSMM_ERR_ARG,
               "write_clusters: the cluster lists must be non-NULL");
    DSMM_CHECK(ctx, labels == NULL || dsmm_labels_count(labels) >= n, DSMM_ERR_ARG,
               "write_clusters: %lld labels for %lld vertices",
               (long long)dsmm_labels_count(labels), (long long)n);
    for (dsmm_idx c = 0; c < nc; c++) {
        DSMM_CHECK(ctx, start[c] <= start[c + 1], DSMM_ERR_ARG,
                   "write_clusters: cluster %lld ends before it starts", (long long)c);
        for (dsmm_idx k = start[c]; k < start[c + 1]; k++)
            DSMM_CHECK(ctx, members[k] >= 0 && members[k] < n, DSMM_ERR_ARG,
                       "write_clusters: cluster %lld lists vertex %lld, outside 0..%lld",
                       (long long)c, (long long)members[k], (long long)n - 1);
    }
    lists l = {n, nc, start, members, trailer};
    lines_arg a = {labels, base};
    st = native ? write_lists(ctx, path, &l, write_native, NULL)
                : write_lists(ctx, path, &l, write_lines, &a);
cleanup:
    return st;
}

// A partition (cluster[v] for every vertex) as lists, then written.
static dsmm_status write_partition(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                   const dsmm_idx *cluster, const dsmm_labels *labels, int base,
                                   int native)
{
    dsmm_status st = DSMM_OK;
    dsmm_idx *start = NULL, *members = NULL;
    DSMM_CHECK(ctx, path != NULL, DSMM_ERR_ARG, "write_clusters: path must be non-NULL");
    DSMM_CHECK(ctx, n >= 0, DSMM_ERR_ARG, "write_clusters: n = %lld < 0", (long long)n);
    DSMM_CHECK(ctx, n == 0 || cluster != NULL, DSMM_ERR_ARG,
               "write_clusters: cluster must be non-NULL");
    // Before cluster is read: too few labels may mean cluster is shorter than n.
    DSMM_CHECK(ctx, labels == NULL || dsmm_labels_count(labels) >= n, DSMM_ERR_ARG,
               "write_clusters: %lld labels for %lld vertices",
               (long long)dsmm_labels_count(labels), (long long)n);
    DSMM_TRY(group(ctx, n, cluster, &start, &members));
    DSMM_TRY(dsmmi_write_cluster_lists(ctx, path, n, n, start, members, labels, base, native));
cleanup:
    dsmmi_free(ctx, start);
    dsmmi_free(ctx, members);
    return st;
}

dsmm_status dsmmi_write_clusters_native(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                        const dsmm_idx *cluster)
{
    return write_partition(ctx, path, n, cluster, NULL, 0, 1);
}

dsmm_status dsmmi_write_clusters_base(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                      const dsmm_idx *cluster, const dsmm_labels *labels, int base)
{
    return write_partition(ctx, path, n, cluster, labels, base, 0);
}
