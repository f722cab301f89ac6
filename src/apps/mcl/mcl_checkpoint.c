// src/apps/mcl/mcl_checkpoint.c: --checkpoint DIR / --resume DIR. After each iteration the
// iterate goes to DIR/iterate-<n>.bin (dsmm binary, written through the distributed writer,
// values exact: they are floats) and then DIR/state (text: the loop state, the inflation in
// effect to the last bit, and the settings that must match on resume), each atomically; the
// previous iterate file is removed only once the new state names the new one, so a run
// killed at any point leaves a consistent checkpoint. Resume works at any rank count, on the
// graph the checkpoint was made from (its fingerprint is in the state; format 2).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apps/apps.h"

#define STATE_MAGIC  "dsmm-mcl-checkpoint "
#define STATE_FORMAT 2

static void settings_line(const dsmm_mcl_params *p, const dsmmi_mcl_rules *r, char *buf, size_t len)
{
    int w = snprintf(buf, len, "I=%a i=%a l=%d cut=%a S=%lld R=%lld pct=%a c=%a pi=%a sym=%d",
                     (double)(float)p->inflation, (double)(float)p->init_inflation, p->init_loop,
                     r->cut, (long long)r->S, (long long)r->R, r->pct, p->loop_scale,
                     p->pre_inflation, p->symmetrize);
    // -tf and --discard-loops=n change the matrix the iterate was made from (checkpoints
    // without them read as before)
    if (p->tf != NULL && w > 0 && (size_t)w < len)
        w += snprintf(buf + w, len - (size_t)w, " tf=%s", dsmm_mcl_tf_spec(p->tf));
    if (p->keep_loops && w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " keep-loops=1");
}

dsmm_status dsmmi_mcl_graph_fp(dsmm_ctx *ctx, const dsmm_dist *G, uint64_t *fp)
{
    dsmm_status st = DSMM_OK;
    const dsmm_csr *t = G->tile;
    dsmm_idx r0 = G->rb[G->grid->myrow], c0 = G->cb[G->grid->mycol];
    // Each entry's hash, as two 32-bit halves summed in 64 bits: no overflow below 2^31
    // entries a rank, and the sum does not depend on the order or the split of the entries.
    int64_t v[3] = {0, 0, t->nnz};
    for (dsmm_idx i = 0; i < t->nrows; i++)
        for (dsmm_idx k = t->rowptr[i]; k < t->rowptr[i + 1]; k++) {
            double x = dsmm_csr_value(t, k);
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            uint64_t h =
                dsmmi_mix64(((uint64_t)(r0 + i) << 32) ^ (uint64_t)(c0 + dsmm_csr_col(t, k)));
            h = dsmmi_mix64(h ^ dsmmi_mix64(bits + 0x9e3779b97f4a7c15ULL));
            v[0] += (int64_t)(h & 0xffffffffu);
            v[1] += (int64_t)(h >> 32);
        }
    DSMM_TRY(dsmmi_allreduce_i64(ctx, v, 3, '+'));
    *fp =
        dsmmi_mix64((uint64_t)v[0] ^
                    dsmmi_mix64((uint64_t)v[1] ^ dsmmi_mix64((uint64_t)v[2] ^ (uint64_t)G->nrows)));
cleanup:
    return st;
}

static void path_in(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

dsmm_status dsmmi_mcl_checkpoint_write(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                       const dsmmi_mcl_mat *M, dsmm_idx row0,
                                       const dsmmi_mcl_loop *loop)
{
    dsmm_status st = DSMM_OK;
    dsmm_dist *D = NULL;
    dsmm_csr *tile = NULL;
    dsmmi_outfile out;
    int is_open = 0;
    char path[4096], name[64], set[1024];
    dsmmi_mcl_rules r;
    int P = dsmm_ctx_size(ctx);
    (void)row0;

    DSMM_TRY(dsmmi_mcl_rules_from(ctx, p, &r));
    DSMM_TRY(dsmmi_dist_new(ctx, N, N, DSMM_DOUBLE, P, 1, &D));
    DSMM_TRY(dsmm_csr_create(ctx, M->nrows, N, M->nnz, DSMM_DOUBLE, &tile));
    memcpy(tile->rowptr, M->rowptr, ((size_t)M->nrows + 1) * sizeof *tile->rowptr);
    for (dsmm_idx k = 0; k < M->nnz; k++) {
        if (tile->colidx32)
            tile->colidx32[k] = M->col[k];
        else
            tile->colidx[k] = M->col[k];
        ((double *)tile->val)[k] = (double)M->val[k];
    }
    tile->nnz = M->nnz;
    tile->sorted = 1;
    DSMM_TRY(dsmmi_dist_set_tile(ctx, D, tile));
    tile = NULL;
    snprintf(name, sizeof name, "iterate-%d.bin", loop->n_ite);
    path_in(path, sizeof path, p->checkpoint_dir, name);
    dsmm_write_opts wo;
    dsmm_write_opts_init(&wo);
    wo.format = DSMM_FORMAT_BIN;
    DSMM_TRY(dsmm_dist_write(ctx, path, D, &wo));
    if (dsmm_ctx_rank(ctx) == 0) {
        settings_line(p, &r, set, sizeof set);
        path_in(path, sizeof path, p->checkpoint_dir, "state");
        dsmm_status lst = dsmmi_outfile_open(ctx, &out, path);
        if (lst == DSMM_OK) {
            is_open = 1;
            fprintf(out.f,
                    "%s%d\nvertices %lld\ngraph %016llx\niteration %d\nmain_done %d\n"
                    "inflation %a\niterate %s\nsettings %s\n",
                    STATE_MAGIC, STATE_FORMAT, (long long)N, (unsigned long long)loop->graph_fp,
                    loop->n_ite, loop->main_done, loop->inflation_main, name, set);
            is_open = 0;
            lst = dsmmi_outfile_commit(ctx, &out);
        }
        if (lst == DSMM_OK && loop->n_ite > 1) {
            char old[64];
            snprintf(old, sizeof old, "iterate-%d.bin", loop->n_ite - 1);
            path_in(path, sizeof path, p->checkpoint_dir, old);
            (void)unlink(path);
        }
        st = lst;
    }
    DSMM_TRY(dsmmi_comm_agree(ctx, st));
cleanup:
    if (is_open) dsmmi_outfile_abort(ctx, &out);
    dsmm_csr_destroy(&tile);
    dsmm_dist_destroy(&D);
    return st;
}

// A checkpoint's state file as written above.
typedef struct state {
    long long n;
    int format, has_fp;
    unsigned long long fp;
    int ite, main_done;
    double infl;
    char name[256], set[1024];
} state;

// Reads DIR/state on rank 0 and sends it to all, so every rank decides the same way.
static dsmm_status state_read(dsmm_ctx *ctx, const char *dir, state *s)
{
    dsmm_status st = DSMM_OK;
    char path[4096], text[4096];
    int64_t len = -1;
    int ok = 0;
    *s = (state){.n = -1, .ite = -1, .main_done = -1};
    path_in(path, sizeof path, dir, "state");
    memset(text, 0, sizeof text);
    if (dsmm_ctx_rank(ctx) == 0) {
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            len = (int64_t)fread(text, 1, sizeof text - 1, f);
            fclose(f);
        } else {
            snprintf(text, sizeof text, "%s", strerror(errno));
        }
    }
    DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, &len, sizeof len));
    DSMM_TRY(dsmmi_bcast_ctl(ctx, 0, text, sizeof text));
    DSMM_CHECK(ctx, len >= 0, DSMM_ERR_IO, "mcl: --resume: %s: %s", path, text);
    {
        char *save = NULL, *line = strtok_r(text, "\n", &save);
        if (line != NULL && strncmp(line, STATE_MAGIC, strlen(STATE_MAGIC)) == 0 &&
            sscanf(line + strlen(STATE_MAGIC), "%d", &s->format) == 1) {
            ok = 1;
            while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
                if (sscanf(line, "vertices %lld", &s->n) == 1) continue;
                if (sscanf(line, "graph %llx", &s->fp) == 1) {
                    s->has_fp = 1;
                    continue;
                }
                if (sscanf(line, "iteration %d", &s->ite) == 1) continue;
                if (sscanf(line, "main_done %d", &s->main_done) == 1) continue;
                if (sscanf(line, "inflation %la", &s->infl) == 1) continue;
                if (sscanf(line, "iterate %255s", s->name) == 1) continue;
                if (strncmp(line, "settings ", 9) == 0)
                    snprintf(s->set, sizeof s->set, "%s", line + 9);
            }
        }
    }
    DSMM_CHECK(ctx,
               ok && s->n >= 0 && s->ite >= 0 && s->main_done >= 0 && s->infl > 0.0 &&
                   s->name[0] != '\0',
               DSMM_ERR_FORMAT, "mcl: --resume: %s is not a dsmm mcl checkpoint state", path);
    DSMM_CHECK(ctx, s->format == STATE_FORMAT && s->has_fp, DSMM_ERR_FORMAT,
               "mcl: --resume: %s is a checkpoint of format %d (this dsmm writes and resumes %d, "
               "which records the input graph's fingerprint); start the run again",
               path, s->format, STATE_FORMAT);
cleanup:
    return st;
}

dsmm_status dsmmi_mcl_checkpoint_peek(dsmm_ctx *ctx, const char *dir, dsmm_idx *N, int *sym,
                                      uint64_t *graph_fp)
{
    dsmm_status st = DSMM_OK;
    state s;
    DSMM_TRY(state_read(ctx, dir, &s));
    const char *k = strstr(s.set, " sym=");
    *N = (dsmm_idx)s.n;
    *sym = k != NULL && k[5] == '1';
    *graph_fp = s.fp;
cleanup:
    return st;
}

dsmm_status dsmmi_mcl_checkpoint_read(dsmm_ctx *ctx, const dsmm_mcl_params *p, dsmm_idx N,
                                      dsmmi_mcl_mat *M, dsmm_idx *row0, dsmmi_mcl_loop *loop)
{
    dsmm_status st = DSMM_OK;
    dsmm_dist *D = NULL;
    char path[4096], want[1024];
    state s;
    dsmmi_mcl_rules r;
    int P = dsmm_ctx_size(ctx);

    DSMM_TRY(dsmmi_mcl_rules_from(ctx, p, &r));
    settings_line(p, &r, want, sizeof want);
    DSMM_TRY(state_read(ctx, p->resume_dir, &s));
    DSMM_CHECK(ctx, s.n == N, DSMM_ERR_ARG,
               "mcl: --resume: the checkpoint has %lld vertices, the graph %lld", s.n,
               (long long)N);
    DSMM_CHECK(ctx, s.fp == loop->graph_fp, DSMM_ERR_ARG,
               "mcl: --resume: the checkpoint was made from another graph (fingerprint %016llx; "
               "this input %016llx): a different file, or the same edges with the vertices "
               "numbered otherwise (abc lines in another order)",
               s.fp, (unsigned long long)loop->graph_fp);
    DSMM_CHECK(ctx, strcmp(s.set, want) == 0, DSMM_ERR_ARG,
               "mcl: --resume: the checkpoint was made with other settings (%s; this run: %s)",
               s.set, want);
    path_in(path, sizeof path, p->resume_dir, s.name);
    DSMM_TRY(dsmm_dist_read(ctx, path, NULL, P, 1, &D, NULL));
    DSMM_CHECK(ctx, D->nrows == N && D->ncols == N, DSMM_ERR_FORMAT,
               "mcl: --resume: %s is %lld x %lld, not %lld x %lld", path, (long long)D->nrows,
               (long long)D->ncols, (long long)N, (long long)N);
    const dsmm_csr *t = D->tile;
    *row0 = D->rb[D->grid->myrow];
    // An iterate is column-stochastic: every value finite and in [0, 1]. Anything else is a
    // damaged or edited file, which the loop would carry on with silently.
    {
        dsmm_status bad = DSMM_OK;
        for (dsmm_idx i = 0; i < t->nrows && bad == DSMM_OK; i++)
            for (dsmm_idx k = t->rowptr[i]; k < t->rowptr[i + 1]; k++) {
                double x = dsmm_csr_value(t, k);
                if (x >= 0.0 && x <= 1.0) continue; // false for NaN
                bad = dsmmi_error(ctx, DSMM_ERR_FORMAT, __FILE__, __LINE__,
                                  "mcl: --resume: %s: entry (%lld, %lld) of the iterate is %g; an "
                                  "iterate holds values in [0, 1]",
                                  path, (long long)(*row0 + i + 1),
                                  (long long)(dsmm_csr_col(t, k) + 1), x);
                break;
            }
        DSMM_TRY(dsmmi_comm_agree(ctx, bad));
    }
    DSMM_TRY(dsmmi_mcl_mat_from_tile(ctx, t, M));
    loop->n_ite = s.ite;
    loop->main_done = s.main_done;
    loop->inflation_main = s.infl;
cleanup:
    dsmm_dist_destroy(&D);
    return st;
}
