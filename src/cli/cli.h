// src/cli/cli.h: internal header of the dsmm command-line tool: the options-table parser, the
// options every subcommand shares, and the subcommand entry points.
#ifndef DSMM_CLI_H
#define DSMM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "io/io.h"

// Exit codes (STYLE.md §11).
#define CLI_OK      0
#define CLI_FAIL    1    // runtime failure: the message comes from dsmm_ctx_last_error
#define CLI_USAGE   2    // unknown option, missing argument, bad number
#define CLI_HELP_RC (-1) // cli_parse printed --help: the command exits 0

typedef enum cli_kind {
    CLI_FLAG,   // int *: set to 1
    CLI_INT,    // int *, within [min, max]
    CLI_IDX,    // int64_t *, within [min, max]
    CLI_U64,    // uint64_t * (seeds)
    CLI_DOUBLE, // double *, finite, within [min, max]
    CLI_SIZE,   // size_t *, via dsmm_parse_size ("64K", "1.5G")
    CLI_STRING, // const char **
    CLI_ENUM    // int *: index of the value among the '|'-separated choices in placeholder
} cli_kind;

/* One row of a subcommand's options table; --help is generated from the table, so the help text and
 * the parser cannot disagree. min == max means no range check. */
typedef struct cli_opt {
    const char *name;        // long name without "--"
    char short_name;         // 0: none
    const char *placeholder; // NULL for flags; the choices "a|b|c" for CLI_ENUM
    const char *help;
    cli_kind kind;
    void *target;
    double min, max;
} cli_opt;

/* A subcommand: what --help prints around the options table. */
typedef struct cli_cmd {
    const char *name;    // "info"
    const char *args;    // "FILE [options]"
    const char *summary; // one line, for `dsmm --help`
    const char *details; // paragraph(s) after the usage line, may be NULL
} cli_cmd;

/* cli_parse: parses argv[1..argc) (argv[0] is the subcommand name) against opts, which ends with a
 * row whose name is NULL. Positional arguments go to pos[0..*npos), at most maxpos. "--" ends the
 * options. Returns CLI_OK, CLI_HELP_RC (help printed to stdout) or CLI_USAGE (message printed to
 * stderr as "dsmm CMD: ...", followed by "see 'dsmm CMD --help'"). */
int cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, char **pos, int *npos,
              int maxpos);

/* cli_help: the generated help of cmd to f. */
void cli_help(const cli_cmd *cmd, const cli_opt *opts, FILE *f);

/* cli_usage_error: prints "dsmm CMD: message" and the --help hint; returns CLI_USAGE. */
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) DSMMI_PRINTF(2, 3);

/* cli_fail: prints "dsmm CMD: <last error of ctx>" (or the given text when ctx has none); returns
 * CLI_FAIL. */
int cli_fail(const cli_cmd *cmd, const dsmm_ctx *ctx, const char *what);

/* Options shared by subcommands. */
typedef struct cli_common {
    int threads; // 0 = OpenMP default
    size_t mem;  // memory budget in bytes, 0 = unlimited
    int quiet, verbose;
    const char *stats; // --stats FILE
    int format;        // index into "auto|mtx|abc|bin|mci" (input format override)
    int dup;           // index into "error|sum|max|min|last"
    int base;          // index into "1|0"
    int gpu;           // --gpu: the context gets the CUDA device (AUTO sends large products)
    size_t gpu_mem;    // --gpu-mem: device pool bytes (0: dsmm_gpu_opts' default); implies --gpu
    double gpu_flops;  // --gpu-min-flops: AUTO's threshold (-1: the default); implies --gpu
} cli_common;

void cli_common_init(cli_common *c);

// Table rows for the shared options; every table starts with CLI_COMMON_OPTS and readers add
// CLI_INPUT_OPTS.
#define CLI_COMMON_OPTS(c)                                                                         \
    {"threads", 't',          "N", "OpenMP threads (default: OpenMP's default)",                   \
     CLI_INT,   &(c).threads, 1,   4096},                                                          \
        {"mem",    0,        "SIZE", "memory budget, e.g. 512M, 4G (default: unlimited)",          \
         CLI_SIZE, &(c).mem, 0,      0},                                                           \
        {"quiet", 'q', NULL, "only errors on stderr, no progress", CLI_FLAG, &(c).quiet, 0, 0},    \
        {"verbose", 'v', NULL, "more log messages", CLI_FLAG, &(c).verbose, 0, 0},                 \
    {                                                                                              \
        "stats", 0, "FILE", "write run statistics as JSON to FILE ('-': stdout)", CLI_STRING,      \
            &(c).stats, 0, 0                                                                       \
    }

#define CLI_INPUT_OPTS(c)                                                                          \
    {"format",                                                                                     \
     'f',                                                                                          \
     "auto|mtx|abc|bin|mci",                                                                       \
     "input format (default: from content and name)",                                              \
     CLI_ENUM,                                                                                     \
     &(c).format,                                                                                  \
     0,                                                                                            \
     0},                                                                                           \
        {"dup",                                                                                    \
         0,                                                                                        \
         "error|sum|max|min|last",                                                                 \
         "repeated entries in the input (default: error)",                                         \
         CLI_ENUM,                                                                                 \
         &(c).dup,                                                                                 \
         0,                                                                                        \
         0},                                                                                       \
    {                                                                                              \
        "base", 0, "1|0", "index base of Matrix Market coordinates (default: 1)", CLI_ENUM,        \
            &(c).base, 0, 0                                                                        \
    }

// Rows for the GPU options of the commands that multiply (spgemm, spmm, mcl).
#define CLI_GPU_OPTS(c)                                                                            \
    {                                                                                              \
        "gpu",    0,                                                                               \
        NULL,     "use the CUDA device: local products above the threshold run there",             \
        CLI_FLAG, &(c).gpu,                                                                        \
        0,        0},                                                                              \
        {"gpu-mem",                                                                                \
         0,                                                                                        \
         "SIZE",                                                                                   \
         "device memory pool, e.g. 2G (default: 80% of free, split among the ranks on the "        \
         "device; implies --gpu)",                                                                 \
         CLI_SIZE,                                                                                 \
         &(c).gpu_mem,                                                                             \
         0,                                                                                        \
         0},                                                                                       \
    {                                                                                              \
        "gpu-min-flops", 0, "N",                                                                   \
            "local products of at least N multiply-adds run on the device (default 2e6; implies "  \
            "--gpu)",                                                                              \
            CLI_DOUBLE, &(c).gpu_flops, 0, 1e18                                                    \
    }

/* cli_gpu: when c asks for the GPU (--gpu, --gpu-mem), gives ctx the device; CLI_OK, or
 * CLI_FAIL with the reason printed (no CUDA in this build, no device, pool too large). */
int cli_gpu(const cli_cmd *cmd, const cli_common *c, dsmm_ctx *ctx);

/* cli_gpu_stats: adds the device's record (name, pool, products, copy and kernel times) to s
 * as "gpu" when ctx has one. */
dsmm_status cli_gpu_stats(const dsmm_ctx *ctx, dsmm_stats *s);

/* cli_ctx: a context configured from c (threads, budget, log level, progress, GPU). Returns CLI_OK
 * or CLI_FAIL (message printed). */
int cli_ctx(const cli_cmd *cmd, const cli_common *c, dsmm_ctx **ctx);

/* cli_read_opts: read options from c (format, dup, base; values kept as double, pattern files stay
 * pattern). */
void cli_read_opts(const cli_common *c, dsmm_read_opts *o);

/* cli_stats: when --stats was given, writes op's record; other keys may be added by extra. Returns
 * CLI_OK or CLI_FAIL (message printed). */
typedef struct cli_run {
    double seconds, io_seconds;
    dsmm_idx nnz_in, nnz_out;
} cli_run;
/* cli_dir_state: 0 when a file can be created at path ("-" and NULL too), 1 when the directory
 * that would hold it does not exist, 2 when it is not writable; that directory in dir. */
int cli_dir_state(const char *path, char *dir, size_t len);
/* cli_dir_writable: CLI_OK if a file can be created at path ("-" and NULL pass), else a message
 * naming opt and CLI_FAIL. An early check before long work; the writes stay atomic. */
int cli_dir_writable(const cli_cmd *cmd, const char *opt, const char *path);
/* cli_parse_abcd: "a,b,c,d" -> R-MAT quadrant probabilities in p (each in [0, 1], summing to 1
 * within rounding; dsmm gen and dsmm model --gen). Returns 0, or -1 when malformed. */
int cli_parse_abcd(const char *s, dsmm_gen_params *p);

int cli_stats(const cli_cmd *cmd, const cli_common *c, dsmm_ctx *ctx, const char *op,
              const cli_run *run);
/* cli_report_stream: where a command's text report (a summary, a curve, info's lines) goes:
 * stdout, or stderr when --stats - or the output (out "-"; NULL: none) takes stdout. */
FILE *cli_report_stream(const cli_common *c, const char *out);
/* cli_stdout_once: CLI_OK, or the usage error "WHAT and --stats - cannot both use stdout" when
 * another output (what, e.g. "-o -") is on stdout (other_on_stdout) and --stats is "-". */
int cli_stdout_once(const cli_cmd *cmd, const cli_common *c, int other_on_stdout, const char *what);

/* Distributed runs of spgemm/spmm (dist_run.c): --algo, --grid, --prefetch, --workgroup-size,
 * --permute, --accumulate, --pipeline. on: 1 when the command runs distributed (--algo summa, or
 * auto under a launch of several processes). */
typedef struct cli_dist {
    const char *algo; // "auto" | "local" | a dsmm_dist_alg name
    const char *grid; // "PRxPC" or NULL
    int prefetch, wg, accumulate, queue_cap, pipeline;
    int gpu_resident; // spgemm/spmm --gpu-resident (dsmm_dist_opts.gpu_resident)
    int64_t permute_seed;
    int permute;
    int on, pr, pc;
    dsmm_dist_alg alg;
    int cola; // --algo names a 1D CoLa algorithm (cola_alg)
    dsmm_cola_alg cola_alg;
} cli_dist;

#define CLI_DIST_OPTS(d)                                                                             \
    {"algo",                                                                                         \
     0,                                                                                              \
     "auto|local|summa|rdma-c|rdma-a|rdma-b|ws-random-a|ws-local-a|ws-local-c|cola|cola-nofusion|"   \
     "bcast-1d|rowwise-1d",                                                                          \
     "local engine, Sparse SUMMA or a one-sided algorithm (default auto: distributed under "         \
     "mpirun)",                                                                                      \
     CLI_STRING,                                                                                     \
     &(d).algo,                                                                                      \
     0,                                                                                              \
     0},                                                                                             \
        {"grid",     0,         "PRxPC", "process grid (default: as square as possible)",            \
         CLI_STRING, &(d).grid, 0,       0},                                                         \
        {"accumulate",                                                                               \
         0,                                                                                          \
         "auto|merge|fused|binary",                                                                  \
         "spgemm: merge partial products (k-way), one fused multiply, or binary merge during the "   \
         "stages (default auto: fused or merge)",                                                    \
         CLI_ENUM,                                                                                   \
         &(d).accumulate,                                                                            \
         0,                                                                                          \
         0},                                                                                         \
        {"prefetch", 0,                                                                              \
         NULL,       "overlap the next stage's broadcasts with this stage's multiply",               \
         CLI_FLAG,   &(d).prefetch,                                                                  \
         0,          0},                                                                             \
        {"pipeline",                                                                                 \
         0,                                                                                          \
         NULL,                                                                                       \
         "spgemm: multiply and merge a stage on other threads while the next one is "                \
         "broadcast (Pipelined Sparse SUMMA)",                                                       \
         CLI_FLAG,                                                                                   \
         &(d).pipeline,                                                                              \
         0,                                                                                          \
         0},                                                                                         \
        {"workgroup-size", 0,       "N", "emulate nodes of N ranks (default: ranks sharing memory)", \
         CLI_INT,          &(d).wg, 1,   1 << 20},                                                   \
        {"queue-cap", 0,                                                                             \
         "N",         "one-sided algorithms: slots of each accumulation queue (default 64)",         \
         CLI_INT,     &(d).queue_cap,                                                                \
         1,           1 << 24},                                                                      \
    {                                                                                                \
        "permute", 0, "SEED", "random symmetric permutation for balance (A * A only)", CLI_IDX,      \
            &(d).permute_seed, 0, 0x1p53                                                             \
    }

/* cli_dist_launched: 1 when an MPI launcher started several processes (its environment). */
int cli_dist_launched(void);
/* cli_dist_resolve: checks the distributed options and sets d->on, d->alg, d->pr/pc. Returns
 * CLI_OK or CLI_USAGE (message printed). */
int cli_dist_resolve(const cli_cmd *cmd, cli_dist *d);
/* The distributed runs (MPI started and finalised inside); exit codes as the subcommands. */
int cli_spgemm_dist(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                    const char *b_path, const char *out, const dsmm_spgemm_opts *so,
                    int semiring_auto, int repeat);
int cli_spmm_dist(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                  dsmm_idx k, uint64_t seed, dsmm_type type, const char *out,
                  const dsmm_spmm_opts *so, int repeat);
/* cli_random_b: the random B of `dsmm spmm` (and its distributed runs): row r of the whole B is
 * uniform in [-1, 1) from the stream (seed, r), entry j at position j of it, so B depends on
 * nothing but seed, r and k. Fills B's rows i with r = rows[i] (rows non-NULL: a panel in
 * another numbering) or r = row0 + i, and columns from col0 (a tile of a 2D grid). */
void cli_random_b(dsmm_dense *B, uint64_t seed, const dsmm_idx *rows, dsmm_idx row0, dsmm_idx col0);
/* cli_median_run: the index of the run whose time t[i] is the (lower) median of t[0..n) (the
 * first such run), so "seconds" and the breakdown reported describe the same run. */
int cli_median_run(dsmm_ctx *ctx, const double *t, int n);
/* The 1D CoLa SpMM of `dsmm spmm --algo cola|cola-nofusion|bcast-1d|rowwise-1d` (cola_run.c):
 * plan, repeated multiplies, C written in A's vertex order, and the volume table. */
int cli_spmm_cola(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, const char *a_path,
                  dsmm_idx k, uint64_t seed, dsmm_type type, const char *out,
                  const dsmm_cola_opts *co, int repeat);
/* The per-rank volume table of the 1D algorithms (cola_run.c; `dsmm spmm --algo cola...` and
 * `dsmm gcn`). cli_cola_gather: every rank's row (CLI_COLA_NCOL values: rows, LSC nnz, RSC nnz,
 * nonempty RSC columns, V_CG, V_FR, V_FC, inter-workgroup bytes without and with fusion, and
 * the bytes received intra / inter, -1 when info is NULL) into *all (new, dsmmi_free) on every
 * rank. Collective. cli_cola_print: the title line, one line per rank and the totals, then the
 * redundant shares of V_CG and V_FR; the received bytes only with with_recv. */
#define CLI_COLA_NCOL 11
dsmm_status cli_cola_gather(dsmm_ctx *ctx, const dsmm_cola_volume *v, const dsmm_cola_info *info,
                            int64_t **all);
void cli_cola_print(FILE *f, const char *title, const int64_t *all, int P, int with_recv);

/* Names of enum values. */
const char *cli_format_name(dsmm_format f);

/* Subcommands: argv[0] is the subcommand name. Return an exit code (0, 1 or 2).
 */
int cli_info(int argc, char **argv);
int cli_gen(int argc, char **argv);
int cli_convert(int argc, char **argv);
int cli_spgemm(int argc, char **argv);
int cli_spmm(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_model(int argc, char **argv);
/* cli_dist_ctx: MPI up (when built with it) and a context over all processes, set from the
 * options (threads shared among a node's ranks, budget, log level, grid, workgroups);
 * cli_dist_end destroys it and finalises MPI. */
int cli_dist_ctx(const cli_cmd *cmd, const cli_common *c, const cli_dist *d, dsmm_ctx **ctx);
void cli_dist_end(dsmm_ctx **ctx);

int cli_mcl(int argc, char **argv);
int cli_clm(int argc, char **argv);
int cli_gcn(int argc, char **argv);

#endif // DSMM_CLI_H
