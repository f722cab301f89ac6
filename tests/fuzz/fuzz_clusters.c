// tests/fuzz/fuzz_clusters.c: libFuzzer target for the cluster-file reader behind `dsmm clm`
// (mcl's label format and its native "(mclheader" format; dsmmi_clustering_read_buffer). The
// input is read against a new dictionary (labels added) and, when that succeeds, again against
// the dictionary it made (no label may be new). A read that succeeds must give a clustering
// whose clusters are numbered 0..nclusters-1, that lists `listed` nodes, each in one cluster,
// and that reads the same the second time; a failure leaves no output and says why; the
// context ends empty.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "fuzz.h"

static void check(const dsmm_clustering *C, const dsmm_labels *L)
{
    if (C->n != dsmm_labels_count(L) || C->nclusters < 0 || C->listed > C->n) __builtin_trap();
    dsmm_idx listed = 0;
    for (dsmm_idx i = 0; i < C->n; i++) {
        if (C->cluster[i] < -1 || C->cluster[i] >= C->nclusters) __builtin_trap();
        listed += C->cluster[i] >= 0;
    }
    if (listed != C->listed) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dsmm_ctx *ctx = fuzz_ctx();
    if (ctx == NULL) return 0;
    const char *text = (const char *)data;
    dsmm_labels *L = NULL;
    dsmm_clustering *C = NULL, *C2 = NULL;
    dsmm_status st = dsmmi_clustering_read_buffer(ctx, text, size, "fuzz.clusters", &L, 1, &C);
    if (st == DSMM_OK) {
        if (C == NULL || L == NULL) __builtin_trap();
        check(C, L);
        st = dsmmi_clustering_read_buffer(ctx, text, size, "fuzz.clusters", &L, 0, &C2);
        if (st == DSMM_OK) {
            if (C2->n != C->n || C2->nclusters != C->nclusters || C2->listed != C->listed)
                __builtin_trap();
            for (dsmm_idx i = 0; i < C->n; i++)
                if (C2->cluster[i] != C->cluster[i]) __builtin_trap();
        } else if (st != DSMM_ERR_NOMEM) {
            __builtin_trap(); // the same bytes read the first time
        }
    } else if (C != NULL || L != NULL || dsmm_ctx_last_error(ctx)[0] == '\0') {
        __builtin_trap();
    }
    dsmm_clustering_destroy(&C);
    dsmm_clustering_destroy(&C2);
    dsmm_labels_destroy(&L);
    if (dsmm_ctx_mem_in_use(ctx) != 0) __builtin_trap();
    dsmm_ctx_destroy(&ctx);
    return 0;
}
