// src/cli/main.c: the dsmm command: dispatches to a subcommand; --help, --version, help CMD.
#include <string.h>

#include "cli/cli.h"
#include "gpu/gpu.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cli_info, "summarise a matrix file: dims, nnz, symmetry, degrees, flops, tiles"},
    {"gen", cli_gen, "generate an R-MAT, Erdos-Renyi or planted-partition matrix"},
    {"convert", cli_convert, "convert between Matrix Market, abc and binary (.gz input too)"},
    {"spgemm", cli_spgemm, "sparse x sparse product C = A * B: kernels, semirings, mask, estimate"},
    {"spmm", cli_spmm, "sparse x dense product C = A * B: GB/s and % of the bandwidth floor"},
    {"report", cli_report, "tables from --stats JSON: comp/comm/acc/imbalance, per rank, summary"},
    {"model", cli_model, "model a distributed product: flops imbalance, traffic, roofline"},
    {"mcl", cli_mcl, "Markov clustering as mcl does it (same options, output, clusters), over MPI"},
    {"clm", cli_clm, "compare clusterings (clm dist) and score one on its graph (clm info)"},
    {"gcn", cli_gcn, "train a GCN (Kipf & Welling) with distributed aggregation, over MPI"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: dsmm COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'dsmm COMMAND --help' or 'dsmm help COMMAND' describes a command.\n"
               "'dsmm --version' prints the version and the build's features.\n"
               "exit status: 0 ok, 1 runtime failure, 2 usage error.\n");
}

static int version(void)
{
    dsmm_ctx *ctx = NULL;
    int threads = 1;
    if (dsmm_ctx_create(&ctx) == DSMM_OK) threads = dsmm_ctx_threads(ctx);
    dsmm_ctx_destroy(&ctx);
    printf("dsmm %s\n", dsmm_version());
    printf("MPI: %s\n", DSMM_HAVE_MPI ? "yes" : "no");
    char gpu[256];
    dsmmi_gpu_describe(gpu, sizeof gpu);
    printf("CUDA: %s; GPU: %s\n", DSMM_HAVE_CUDA ? "yes" : "no", gpu);
#ifdef _OPENMP
    printf("OpenMP: yes, %d threads\n", threads);
#else
    (void)threads;
    printf("OpenMP: no, 1 thread\n");
#endif
    return CLI_OK;
}

static const command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) return version();
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return CLI_OK;
        }
        const command *c = find(argv[2]);
        if (c == NULL) {
            fprintf(stderr, "dsmm: unknown command '%s'\nsee 'dsmm --help'\n", argv[2]);
            return CLI_USAGE;
        }
        static char help_flag[] = "--help";
        char *hargv[] = {argv[2], help_flag, NULL};
        int rc = c->run(2, hargv);
        return rc == CLI_HELP_RC ? CLI_OK : rc;
    }
    const command *c = find(name);
    if (c == NULL) {
        fprintf(stderr, "dsmm: unknown command '%s'\nsee 'dsmm --help'\n", name);
        return CLI_USAGE;
    }
    int rc = c->run(argc - 1, argv + 1);
    return rc == CLI_HELP_RC ? CLI_OK : rc;
}
