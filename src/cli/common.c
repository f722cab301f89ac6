// src/cli/common.c: what subcommands share beyond option parsing: the context set up from the
// common options, read options, the --stats record and the early check of output paths.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "comm/comm.h"

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->gpu_flops = -1;
}

int cli_ctx(const cli_cmd *cmd, const cli_common *c, dsmm_ctx **ctx)
{
    *ctx = NULL;
    if (dsmm_ctx_create(ctx) != DSMM_OK) return cli_fail(cmd, NULL, "cannot create a context");
    if (dsmm_ctx_set_threads(*ctx, c->threads) != DSMM_OK) {
        int rc = cli_fail(cmd, *ctx, "bad thread count");
        dsmm_ctx_destroy(ctx);
        return rc;
    }
    if (c->mem) dsmm_ctx_set_mem_budget(*ctx, c->mem); // else the default: physical memory
    dsmm_log_level level = c->quiet ? DSMM_LOG_ERROR : c->verbose ? DSMM_LOG_DEBUG : DSMM_LOG_WARN;
    dsmm_ctx_set_log(*ctx, level, NULL, NULL);
    if (c->quiet) dsmm_ctx_set_progress(*ctx, 0);
    if (cli_gpu(cmd, c, *ctx) != CLI_OK) {
        dsmm_ctx_destroy(ctx);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_gpu(const cli_cmd *cmd, const cli_common *c, dsmm_ctx *ctx)
{
    if (!c->gpu && c->gpu_mem == 0 && c->gpu_flops < 0) return CLI_OK;
    dsmm_gpu_opts o;
    dsmm_gpu_opts_init(&o);
    o.pool_bytes = c->gpu_mem;
    if (c->gpu_flops >= 0) o.auto_flops = c->gpu_flops;
    dsmm_status st = dsmm_ctx_set_gpu(ctx, &o);
    // every rank learns that one got no device: the others would wait for it in the product's
    // collectives
    if (dsmmi_comm_agree(ctx, st) != DSMM_OK)
        return cli_fail(cmd, ctx, st != DSMM_OK ? "no GPU" : "another rank got no GPU");
    return CLI_OK;
}

dsmm_status cli_gpu_stats(const dsmm_ctx *ctx, dsmm_stats *s)
{
    dsmm_status st = DSMM_OK;
    dsmm_gpu_info g;
    char buf[512];
    DSMM_TRY(dsmm_ctx_gpu_info(ctx, &g));
    if (!g.enabled) goto cleanup;
    snprintf(buf, sizeof buf,
             "{\"device\": %d, \"pool_bytes\": %zu, \"pool_peak\": %zu, \"products_gpu\": %ld, "
             "\"products_cpu\": %ld, \"bytes_h2d\": %.0f, \"bytes_d2h\": %.0f, "
             "\"seconds_h2d\": %.6f, \"seconds_d2h\": %.6f, \"seconds_kernels\": %.6f}",
             g.device, g.pool_bytes, g.pool_peak, g.products_gpu, g.products_cpu, g.bytes_h2d,
             g.bytes_d2h, g.seconds_h2d, g.seconds_d2h, g.seconds_kernels);
    DSMM_TRY(dsmmi_stats_set_raw(s, "gpu", buf));
    DSMM_TRY(dsmm_stats_set_str(s, "gpu_name", g.name));
cleanup:
    return st;
}

void cli_read_opts(const cli_common *c, dsmm_read_opts *o)
{
    static const dsmm_format formats[] = {DSMM_FORMAT_AUTO, DSMM_FORMAT_MTX, DSMM_FORMAT_ABC,
                                          DSMM_FORMAT_BIN, DSMM_FORMAT_MCI};
    static const dsmm_dup dups[] = {DSMM_DUP_ERROR, DSMM_DUP_SUM, DSMM_DUP_MAX, DSMM_DUP_MIN,
                                    DSMM_DUP_LAST};
    dsmm_read_opts_init(o);
    o->format = formats[c->format];
    o->dup = dups[c->dup];
    o->base = c->base == 0 ? 1 : 0;
    o->type = DSMM_DOUBLE;
    o->keep_pattern = 1;
}

const char *cli_format_name(dsmm_format f)
{
    switch (f) {
    case DSMM_FORMAT_MTX:
        return "mtx";
    case DSMM_FORMAT_ABC:
        return "abc";
    case DSMM_FORMAT_BIN:
        return "bin";
    case DSMM_FORMAT_MCI:
        return "mci";
    default:
        return "auto";
    }
}

int cli_stats(const cli_cmd *cmd, const cli_common *c, dsmm_ctx *ctx, const char *op,
              const cli_run *run)
{
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    if (c->stats == NULL) return CLI_OK;
    DSMM_TRY(dsmm_stats_create(ctx, op, &s));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds", run->seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "io_seconds", run->io_seconds));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_in", run->nnz_in));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_out", run->nnz_out));
    DSMM_TRY(dsmm_stats_set_int(s, "peak_bytes", (int64_t)dsmm_ctx_mem_peak(ctx)));
    DSMM_TRY(dsmm_stats_write(s, c->stats));
cleanup:
    dsmm_stats_destroy(&s);
    return st == DSMM_OK ? CLI_OK : cli_fail(cmd, ctx, "cannot write the statistics");
}

static int stats_on_stdout(const cli_common *c)
{
    return c->stats != NULL && strcmp(c->stats, "-") == 0;
}

FILE *cli_report_stream(const cli_common *c, const char *out)
{
    return stats_on_stdout(c) || (out != NULL && strcmp(out, "-") == 0) ? stderr : stdout;
}

int cli_stdout_once(const cli_cmd *cmd, const cli_common *c, int other_on_stdout, const char *what)
{
    if (other_on_stdout && stats_on_stdout(c))
        return cli_usage_error(cmd, "%s and --stats - cannot both use stdout", what);
    return CLI_OK;
}

int cli_dir_state(const char *path, char *dir, size_t len)
{
    if (path == NULL || strcmp(path, "-") == 0) return 0;
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, len, ".");
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        snprintf(dir, len, "%.*s", (int)(n < len ? n : len - 1), path);
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 1;
    return access(dir, W_OK) != 0 ? 2 : 0;
}

// Can a file be created at path? Checked before the multiply, so a typo in -o does not cost
// the whole run. The write itself stays atomic (dsmm_write), this is only an early message.
int cli_dir_writable(const cli_cmd *c, const char *opt, const char *path)
{
    char dir[4096];
    int state = cli_dir_state(path, dir, sizeof dir);
    if (state == 1) {
        fprintf(stderr, "dsmm %s: %s %s: directory '%s' does not exist\n", c->name, opt, path, dir);
        return CLI_FAIL;
    }
    if (state == 2) {
        fprintf(stderr, "dsmm %s: %s %s: directory '%s' is not writable\n", c->name, opt, path,
                dir);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_parse_abcd(const char *s, dsmm_gen_params *p)
{
    double v[4];
    const char *q = s;
    for (int k = 0; k < 4; k++) {
        char *end = NULL;
        v[k] = strtod(q, &end);
        if (end == q || !(v[k] >= 0 && v[k] <= 1)) return -1; // NaN fails too
        if (k < 3 && *end != ',') return -1;
        if (k == 3 && *end != '\0') return -1;
        q = end + 1;
    }
    double sum = v[0] + v[1] + v[2] + v[3];
    if (sum < 1 - 1e-9 || sum > 1 + 1e-9) return -1;
    p->a = v[0];
    p->b = v[1];
    p->c = v[2];
    p->d = v[3];
    return 0;
}

void cli_random_b(dsmm_dense *B, uint64_t seed, const dsmm_idx *rows, dsmm_idx row0, dsmm_idx col0)
{
    for (dsmm_idx i = 0; i < B->nrows; i++) {
        dsmm_rng g;
        dsmm_rng_init(&g, seed, (uint64_t)(rows ? rows[i] : row0 + i));
        g.counter = (uint64_t)col0;
        for (dsmm_idx j = 0; j < B->ncols; j++) {
            double v = 2.0 * dsmm_rng_uniform(&g) - 1.0;
            if (B->type == DSMM_DOUBLE)
                ((double *)B->val)[i * B->ld + j] = v;
            else
                ((float *)B->val)[i * B->ld + j] = (float)v;
        }
    }
}
