// src/cli/cmd_mcl.c: dsmm mcl INPUT [options]: Markov clustering with mcl's command line
// (single-dash options as mcl spells them; "--name" works too), mcl's output file names and
// format, and what mcl lacks: any number of MPI ranks, a per-rank memory budget that turns
// into expansion phases, per-iteration JSON statistics, checkpoints, and an inflation sweep
// (-I 1.4,2,4) that reads the input once.
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "apps/apps.h"
#include "cli/cli.h"
#include "comm/comm.h"
#include "dist/dist.h"

static const cli_cmd cmd = {
    "mcl", "INPUT [options]",
    "Markov clustering as mcl does it (same options, output, clusters), over MPI",
    "Clusters the graph in INPUT as van Dongen's mcl 22-282 does, with the same clusters:\n"
    "abc label triples with --abc (edges made symmetric, repeated pairs by their maximum),\n"
    "else Matrix Market (or dsmm binary). Output: one cluster per line, members separated\n"
    "by tabs (labels with --abc, vertex numbers otherwise, 1-based unless -base 0), largest\n"
    "cluster first, to -o FILE or to mcl's default name out.INPUT.I<inflation>.\n"
    "Under mpirun the expansion is a distributed SpGEMM (--algo, SUMMA by default) in phases\n"
    "that fit --per-process-mem. docs/mcl.md has the details; exit 0 ok, 1 failure, 2 usage."};

typedef enum kind { K_FLAG, K_INT, K_DOUBLE, K_STRING, K_SIZE, K_LIST } kind;

typedef struct opt {
    const char *name; // without dashes
    const char *arg;  // placeholder, NULL for flags
    const char *help;
    kind k;
    void *target;
    double lo, hi;
} opt;

#define MAX_INFL 64

typedef struct mcl_args {
    int abc, mm, base0, d, quiet, silent, verbose, z, threads, scheme, phases, expand_i;
    int vmode;  // -v WORD given (mcl's verbosity modes: accepted, dsmm prints its own progress)
    int az, ax; // -az, -ax: print the output name or suffix and exit
    int show_schemes;     // --show-schemes: print the -scheme table and exit
    int version;          // --version: dsmm's version and the mcl it follows, then exit
    int64_t P, S, R, ram; // ram: -how-much-ram N (-1: not asked)
    int64_t resource;     // -resource n: S = R = n where it stands (0: not given)
    int threshold_set;    // -P, -p or -scheme given
    int pct, l, L, has_l, has_pi, has_c;
    double p, c, pi, i;
    double infl[MAX_INFL];
    int ninfl;
    const char *out, *stats, *checkpoint, *resume, *algo, *grid, *acc, *expand, *estimate;
    const char *tf, *abc_tf;             // -tf, -abc-tf
    const char *use_tab;                 // -use-tab: labels of native (.mci) input
    const char *odir, *ap, *aa;          // default output name: directory, prefix, appended text
    const char *overlap, *sort;          // -overlap, -sort (mcl's names)
    const char *force_conn, *check_conn; // --force-connected=y|n, --check-connected=y|n
    const char *analyze;                 // --analyze=y|n
    const char *discard_loops;           // --discard-loops=y|n
    const char *icl;                     // -icl FILE: subcluster this clustering
    const char *annot;                   // -annot STR: accepted (mcl copies it to its cline)
    int neg_log, neg_log10;              // --abc-neg-log, --abc-neg-log10
    size_t mem, budget, gpu_mem;         // --per-process-mem, --mem, --gpu-mem
    double gpu_flops;                    // --gpu-min-flops (-1: the library's default)
    int pipeline, gpu, gpu_resident;
    int sif, etc, expect;     // --sif, --etc, --expect-values
    dsmm_label_layout layout; // of label input (--abc, --sif, --etc)
} mcl_args;

static int usage_err(const char *fmt, const char *a)
{
    fprintf(stderr, "dsmm mcl: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\nsee 'dsmm mcl --help'\n");
    return CLI_USAGE;
}

static void help(const opt *t)
{
    printf("usage: dsmm mcl %s\n\n%s\n\noptions (mcl's single dash or a double dash):\n", cmd.args,
           cmd.details);
    for (; t->name; t++) {
        char left[64];
        snprintf(left, sizeof left, "-%s%s%s", t->name, t->arg ? " " : "", t->arg ? t->arg : "");
        printf("  %-26s %s\n", left, t->help);
    }
    printf("  %-26s %s\n", "-h, --help", "this text");
}

static int parse_list(const char *s, mcl_args *a)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *end = NULL;
        errno = 0;
        double v = strtod(tok, &end);
        if (end == tok || *end != '\0' || errno || !isfinite(v)) return -1;
        if (a->ninfl == MAX_INFL) return -1;
        a->infl[a->ninfl++] = v;
    }
    return 0;
}

// mcl's verbosity words: -v WORD and -V WORD take one of these.
static int is_mode_word(const char *w)
{
    return strcmp(w, "all") == 0 || strcmp(w, "pruning") == 0 || strcmp(w, "explain") == 0 ||
           strcmp(w, "cls") == 0;
}

// The value of mcl's -q SPEC (log levels), -V WORD and -v WORD after argv[*i], which dsmm's -q
// and -V do without: taken (*i moves past it) when it is not an option and either INPUT came
// already (mcl's INPUT comes first) or it is the option's kind of word (-q: a short spec such
// as x that names no file; -V/-v: all, pruning, explain, cls). -V all is dsmm's -V; -V with a
// single mode turns off a mode dsmm does not print (no effect); -v needs a word.
static int verbosity_value(int argc, char **argv, int *i, char which, int have_input, mcl_args *a)
{
    const char *w = *i + 1 < argc ? argv[*i + 1] : NULL;
    int take = 0;
    if (w != NULL && w[0] != '-' && w[0] != '\0') {
        if (which == 'q') {
            size_t n = strlen(w);
            take = have_input || (n <= 8 &&
                                  strspn(w, "0123456789abcdefghijklmnopqrstuvwxyz"
                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ#") == n &&
                                  access(w, F_OK) != 0);
        } else {
            take = is_mode_word(w) || have_input;
            if (take && !is_mode_word(w))
                return usage_err(which == 'V' ? "-V: '%s' is not all, pruning, explain or cls"
                                              : "-v: '%s' is not all, pruning, explain or cls",
                                 w);
        }
    }
    if (which == 'v' && !take)
        return usage_err("%s", "-v needs a mode: pruning, explain, cls or all");
    if (!take) return CLI_OK;
    (*i)++;
    if (which == 'V' && strcmp(w, "all") != 0) a->silent--; // one mode off: not silent
    return CLI_OK;
}

static int parse(int argc, char **argv, const opt *table, mcl_args *a, const char **input)
{
    *input = NULL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            help(table);
            return CLI_HELP_RC;
        }
        if (s[0] != '-' || s[1] == '\0') {
            if (*input) return usage_err("unexpected argument '%s' (one INPUT)", s);
            *input = s;
            continue;
        }
        const char *name = s + 1 + (s[1] == '-');
        // mcl's --name=value (double dash only, as mcl takes it).
        const char *eq = s[1] == '-' ? strchr(name, '=') : NULL;
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const opt *o = table;
        while (o->name && (strlen(o->name) != nlen || strncmp(o->name, name, nlen) != 0)) o++;
        if (!o->name) return usage_err("unknown option '%s'", s);
        if (o->k == K_FLAG) {
            if (eq) return usage_err("%s takes no value", s);
            (*(int *)o->target)++;
            if (o->target == &a->quiet || o->target == &a->silent || o->target == &a->vmode) {
                int rc = verbosity_value(argc, argv, &i,
                                         o->target == &a->quiet    ? 'q'
                                         : o->target == &a->silent ? 'V'
                                                                   : 'v',
                                         *input != NULL, a);
                if (rc != CLI_OK) return rc;
            }
            continue;
        }
        if (!eq && i + 1 >= argc) return usage_err("%s needs an argument", s);
        const char *v = eq ? eq + 1 : argv[++i];
        char *end = NULL;
        errno = 0;
        switch (o->k) {
        case K_INT: {
            double x = strtod(v, &end);
            if (end == v || *end || errno || x != floor(x) || x < o->lo || x > o->hi) {
                fprintf(stderr, "dsmm mcl: %s: '%s' is not an integer in %.0f..%.0f\n", s, v, o->lo,
                        o->hi);
                return CLI_USAGE;
            }
            if (o->hi > 2147483647.0)
                *(int64_t *)o->target = (int64_t)x;
            else
                *(int *)o->target = (int)x;
            break;
        }
        case K_DOUBLE: {
            double x = strtod(v, &end);
            if (end == v || *end || errno || !isfinite(x) || x < o->lo || x > o->hi) {
                fprintf(stderr, "dsmm mcl: %s: '%s' is not a number in [%g, %g]\n", s, v, o->lo,
                        o->hi);
                return CLI_USAGE;
            }
            *(double *)o->target = x;
            break;
        }
        case K_STRING:
            *(const char **)o->target = v;
            break;
        case K_SIZE:
            if (dsmm_parse_size(v, (size_t *)o->target) != DSMM_OK || *(size_t *)o->target == 0) {
                fprintf(stderr,
                        "dsmm mcl: --%s: '%s' is not a size such as 512M or 4G\n"
                        "see 'dsmm mcl --help'\n",
                        o->name, v);
                return CLI_USAGE;
            }
            break;
        case K_LIST:
            if (parse_list(v, a) != 0)
                return usage_err("-I: '%s' is not a number or a comma-separated list", v);
            break;
        case K_FLAG:
            break;
        }
        if (o->target == &a->l) a->has_l = 1;
        if (o->target == &a->pi) a->has_pi = 1;
        if (o->target == &a->c) a->has_c = 1;
        // mcl takes the pruning settings in order, the last word on each standing: -scheme
        // sets all four, -resource n S and R, -p and -P the same threshold. -resource n also
        // sets P = 10 n unless -P, -p or -scheme is given anywhere (mcl 22-282's rule, found by
        // comparing its clusterings; applied after parsing).
        if (o->target == &a->scheme) {
            a->P = a->S = a->R = -1;
            a->pct = -1;
            a->p = -1.0;
        }
        if (o->target == &a->resource) a->S = a->R = a->resource;
        if (o->target == &a->P) a->p = -1.0;
        if (o->target == &a->p) a->P = -1;
        if (o->target == &a->scheme || o->target == &a->P || o->target == &a->p)
            a->threshold_set = 1;
    }
    if (a->resource > 0 && !a->threshold_set) a->P = 10 * a->resource;
    if (!*input && !a->z && a->ram < 0 && !a->show_schemes && !a->version)
        return usage_err("%s", "no INPUT given");
    return CLI_OK;
}

// mcl's -overlap and -sort words, in the order of dsmm_mcl_overlap and dsmm_mcl_sort.
static const char *const overlap_names[] = {"cut", "keep", "split"};
static const char *const sort_names[] = {"revsize", "size", "lex", "none"};

// The index of word in names[0..n), or -1.
static int name_index(const char *const *names, int n, const char *word)
{
    for (int k = 0; k < n; k++)
        if (strcmp(word, names[k]) == 0) return k;
    return -1;
}

// mcl's y/n values: 1, y, Y, yes, ... on; 0, n, N, no, ... off (the first character decides).
static int yes_no(const char *v, int *on)
{
    if (v[0] != '\0' && strchr("1yY", v[0])) {
        *on = 1;
        return 0;
    }
    if (v[0] != '\0' && strchr("0nN", v[0])) {
        *on = 0;
        return 0;
    }
    return -1;
}

// raw without its '.' characters into out (mcl's suffixes: -I 1.4 -> "I14").
static void drop_dots(const char *raw, char *out, size_t len)
{
    size_t q = 0;
    for (size_t k = 0; raw[k] && q + 1 < len; k++)
        if (raw[k] != '.') out[q++] = raw[k];
    out[q] = '\0';
}

// mcl's suffix of automatic names: I<f> (+ l<n>i<f> when -l is not 0, pi<f>, c<f>), each
// number with one decimal of its float value, '.' dropped, then -aa's text (mcl -ax prints it).
static void auto_suffix(const mcl_args *a, double I, char *suf, size_t len)
{
    char raw[256];
    snprintf(raw, sizeof raw, "I%.1f", (double)(float)I);
    if (a->has_l && a->l != 0)
        snprintf(raw + strlen(raw), sizeof raw - strlen(raw), "l%di%.1f", a->l,
                 (double)(float)a->i);
    if (a->has_pi)
        snprintf(raw + strlen(raw), sizeof raw - strlen(raw), "pi%.1f", (double)(float)a->pi);
    if (a->has_c)
        snprintf(raw + strlen(raw), sizeof raw - strlen(raw), "c%.1f", (double)(float)fabs(a->c));
    drop_dots(raw, suf, len);
    if (a->aa) snprintf(suf + strlen(suf), len - strlen(suf), "%s", a->aa);
}

// snprintf's return n into a buffer of len bytes: 1 when the text did not fit (or failed).
static int cut(int n, size_t len)
{
    return n < 0 || (size_t)n >= len;
}

// mcl's automatic output name (as mcl 22-282 builds it; mcl -az prints it): -ap's prefix, with
// '=' standing for the input's name as given, or out.<input's base name> (in the input's
// directory with --d), then '.' and the suffix; -odir then takes the place of the name's
// directory ("." removes it). Returns 1 when the name does not fit in buf (len bytes).
static int auto_name(const mcl_args *a, const char *input, double I, char *buf, size_t len)
{
    const char *slash = strrchr(input, '/');
    char suf[512], name[4096];
    int n;
    auto_suffix(a, I, suf, sizeof suf);
    const char *eq = a->ap ? strchr(a->ap, '=') : NULL;
    if (eq)
        n = snprintf(name, sizeof name, "%.*s%s%s", (int)(eq - a->ap), a->ap, input, eq + 1);
    else if (a->ap)
        n = snprintf(name, sizeof name, "%s", a->ap);
    else if (a->icl)
        n = snprintf(name, sizeof name, "%s", a->icl);
    else if (slash && a->d)
        n = snprintf(name, sizeof name, "%.*sout.%s", (int)(slash + 1 - input), input, slash + 1);
    else
        n = snprintf(name, sizeof name, "out.%s", slash ? slash + 1 : input);
    if (cut(n, sizeof name)) return 1;
    size_t nl = (size_t)n; // name's length: it fit
    if (cut(snprintf(name + nl, sizeof name - nl, ".%s", suf), sizeof name - nl)) return 1;
    if (!a->odir) return cut(snprintf(buf, len, "%s", name), len);
    const char *ns = strrchr(name, '/');
    size_t dl = strlen(a->odir);
    int trail = dl > 0 && a->odir[dl - 1] == '/';
    if (ns && strcmp(a->odir, ".") == 0) return cut(snprintf(buf, len, "%s", ns + 1), len);
    if (ns) return cut(snprintf(buf, len, "%.*s%s", (int)(dl - (size_t)trail), a->odir, ns), len);
    if (strcmp(a->odir, ".") != 0)
        return cut(snprintf(buf, len, "%s%s%s", a->odir, trail ? "" : "/", name), len);
    return cut(snprintf(buf, len, "%s", name), len);
}

typedef struct progress_ctx {
    int quiet, header;
} progress_ctx;

static void progress(void *user, const dsmm_mcl_iter *it)
{
    progress_ctx *pc = user;
    if (pc->quiet) return;
    if (!pc->header) {
        fprintf(stderr, " ite   chaos   time   expanded     pruned  phases\n");
        pc->header = 1;
    }
    fprintf(stderr, "%4d %7.2f %6.2f %10lld %10lld %7d\n", it->iteration, it->chaos, it->seconds,
            (long long)it->nnz_expand, (long long)it->nnz_pruned, it->phases);
}

// What a run's --stats record needs beyond the result: measured around the run, on every rank.
typedef struct mcl_totals {
    double io_seconds; // reading the input (once, shared by a sweep) and writing this clustering
    int64_t nnz_in;    // entries of the input graph as read
    int64_t peak;      // largest rank's peak of dsmm-allocated bytes
    int64_t sent;      // bytes sent, all ranks
} mcl_totals;

static const char *expand_name(dsmm_mcl_expand e)
{
    return e == DSMM_MCL_DIST ? "dist" : e == DSMM_MCL_REPLICATED ? "replicated" : "fused";
}

// One iteration's record; the estimator's and the pipeline's keys only where they ran.
static void iter_json(dsmmi_json *j, const dsmm_mcl_iter *it)
{
    dsmmi_json_begin_object(j, NULL);
    dsmmi_json_int(j, "iteration", it->iteration);
    dsmmi_json_num(j, "inflation", it->inflation);
    dsmmi_json_num(j, "chaos", it->chaos);
    dsmmi_json_num(j, "seconds", it->seconds);
    dsmmi_json_num(j, "flops", it->flops);
    dsmmi_json_int(j, "nnz_in", it->nnz_in);
    dsmmi_json_int(j, "nnz_expand", it->nnz_expand);
    dsmmi_json_int(j, "nnz_pruned", it->nnz_pruned);
    dsmmi_json_int(j, "dense_cols", it->dense_cols);
    dsmmi_json_int(j, "phases", it->phases);
    dsmmi_json_str(j, "expand", expand_name(it->expand));
    dsmmi_json_num(j, "est_bytes", it->est_bytes);
    dsmmi_json_num(j, "resident_bytes", it->resident_bytes);
    dsmmi_json_int(j, "peak_bytes", it->peak_bytes);
    dsmmi_json_int(j, "merge_peak_bytes", it->merge_peak_bytes);
    dsmmi_json_num(j, "merge_seconds", it->merge_seconds);
    if (it->estimate_keys >= 0) { // how the distributed expansion was sized
        dsmmi_json_str(j, "estimator", it->estimate_keys ? "cohen" : "exact");
        dsmmi_json_int(j, "estimate_keys", it->estimate_keys);
        dsmmi_json_num(j, "estimate_seconds", it->estimate_seconds);
    }
    if (it->cpu_idle_seconds >= 0) { // the pipeline's idle times (HipMCL-GPU's Table V)
        dsmmi_json_num(j, "cpu_idle_seconds", it->cpu_idle_seconds);
        dsmmi_json_int(j, "gpu_products", it->gpu_products);
    }
    if (it->gpu_idle_seconds >= 0) dsmmi_json_num(j, "gpu_idle_seconds", it->gpu_idle_seconds);
    if (it->comp_seconds >= 0) { // the distributed SpGEMM's components (docs/dist.md)
        double c[4] = {it->comp_seconds, it->comm_seconds, it->acc_seconds, it->wait_seconds};
        for (int k = 0; k < 4; k++) dsmmi_json_num(j, dsmmi_stats_comp_keys[k], c[k]);
    }
    dsmmi_json_end_object(j);
}

// "algo" of the record: how the iterations expanded, "fused", "replicated", the distributed
// SpGEMM's name, or "replicated+NAME" when auto took both ways in one run.
static const char *algo_name(const dsmm_mcl_result *r, const char *dist, char *buf, size_t n)
{
    int repl = 0, dst = 0;
    for (int k = 0; k < r->niters; k++) {
        repl |= r->iters[k].expand == DSMM_MCL_REPLICATED;
        dst |= r->iters[k].expand == DSMM_MCL_DIST;
    }
    if (repl && dst)
        snprintf(buf, n, "replicated+%s", dist);
    else
        snprintf(buf, n, "%s",
                 dst ? dist : expand_name(repl ? DSMM_MCL_REPLICATED : DSMM_MCL_FUSED));
    return buf;
}

// The record of one clustering: DESIGN.md's stable keys first (flops summed over the
// iterations this call ran, nnz_out the vertices placed in clusters), then mcl's, then one
// object per iteration under "iterations" (fewer than iteration_count after a resume).
static int write_stats(dsmm_ctx *ctx, const char *path, const char *input, const mcl_args *a,
                       const dsmm_mcl_params *p, const dsmm_mcl_result *r, const char *algo,
                       const mcl_totals *t)
{
    dsmm_status st = DSMM_OK;
    dsmm_stats *s = NULL;
    dsmmi_json j;
    dsmmi_json_init(&j, ctx);
    double flops = 0.0;
    for (int k = 0; k < r->niters; k++) flops += r->iters[k].flops;
    DSMM_TRY(dsmm_stats_create(ctx, "mcl", &s));
    DSMM_TRY(dsmm_stats_set_str(s, "algo", algo));
    DSMM_TRY(dsmm_stats_set_int(s, "ranks", dsmm_ctx_size(ctx)));
    DSMM_TRY(dsmm_stats_set_int(s, "threads", dsmm_ctx_threads(ctx)));
    DSMM_TRY(dsmm_stats_set_num(s, "seconds", r->seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "io_seconds", t->io_seconds));
    DSMM_TRY(dsmm_stats_set_num(s, "flops", flops));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_in", t->nnz_in));
    DSMM_TRY(dsmm_stats_set_int(s, "nnz_out", r->n));
    DSMM_TRY(dsmm_stats_set_int(s, "peak_bytes", t->peak));
    DSMM_TRY(dsmm_stats_set_int(s, "bytes_sent", t->sent));
    DSMM_TRY(dsmm_stats_set_str(s, "input", input));
    DSMM_TRY(dsmm_stats_set_num(s, "inflation", p->inflation));
    // The weight transforms, normalised as the run read them (absent when none).
    if (p->tf) DSMM_TRY(dsmm_stats_set_str(s, "tf", dsmm_mcl_tf_spec(p->tf)));
    if (a->neg_log10 || a->neg_log)
        DSMM_TRY(dsmm_stats_set_str(s, "abc_neg_log", a->neg_log10 ? "10" : "e"));
    if (a->abc_tf) DSMM_TRY(dsmm_stats_set_str(s, "abc_tf", a->abc_tf));
    DSMM_TRY(dsmm_stats_set_int(s, "vertices", r->n));
    DSMM_TRY(dsmm_stats_set_int(s, "clusters", r->nclusters));
    DSMM_TRY(dsmm_stats_set_int(s, "iteration_count", r->iterations));
    DSMM_TRY(dsmmi_stats_set_raw(s, "converged", r->converged ? "true" : "false"));
    DSMM_TRY(dsmm_stats_set_int(s, "attractors", r->attractors));
    DSMM_TRY(dsmm_stats_set_int(s, "overlap", r->overlap));
    DSMM_TRY(dsmm_stats_set_int(s, "garbage", r->garbage));
    DSMM_TRY(dsmm_stats_set_str(s, "overlap_mode", overlap_names[p->overlap]));
    DSMM_TRY(dsmm_stats_set_str(s, "sort", sort_names[p->sort]));
    // Connected components the clusters induce (--force-connected / --check-connected).
    if (p->force_connected || p->check_connected) {
        DSMM_TRY(dsmm_stats_set_int(s, "components", r->components));
        if (r->orig_start)
            DSMM_TRY(dsmm_stats_set_int(s, "clusters_before_split", r->orig_nclusters));
    }
    // --analyze=y: mcl's performance measures of the clustering (on its start matrix).
    if (r->analyzed) {
        DSMM_TRY(dsmm_stats_set_num(s, "efficiency", r->analysis.efficiency));
        DSMM_TRY(dsmm_stats_set_num(s, "modularity", r->analysis.modularity));
        DSMM_TRY(dsmm_stats_set_num(s, "mass_fraction", r->analysis.massfrac));
        DSMM_TRY(dsmm_stats_set_num(s, "area_fraction", r->analysis.areafrac));
    }
    DSMM_TRY(dsmm_stats_set_int(s, "per_process_mem", (int64_t)a->mem));
    dsmmi_json_begin_array(&j, NULL);
    for (int k = 0; k < r->niters; k++) iter_json(&j, &r->iters[k]);
    dsmmi_json_end_array(&j);
    DSMM_TRY(j.st);
    DSMM_TRY(dsmmi_stats_set_raw(s, "iterations", j.buf));
    DSMM_TRY(cli_gpu_stats(ctx, s)); // rank 0's device: products, pool, copy and kernel times
    DSMM_TRY(dsmm_stats_write(s, path));
cleanup:
    dsmmi_json_free(&j);
    dsmm_stats_destroy(&s);
    if (st != DSMM_OK) {
        cli_fail(&cmd, ctx, path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void print_defaults(const dsmm_mcl_params *p, int64_t P, int64_t S, int64_t R, int pct)
{
    printf("[dsmm mcl] cell size: 8 (int32 index, float32 value, as mcl)\n");
    printf("%-40s%8lld%8s%s\n", "Prune number", (long long)P, "", "[-P n]");
    printf("%-40s%8lld%8s%s\n", "Selection number", (long long)S, "", "[-S n]");
    printf("%-40s%8lld%8s%s\n", "Recovery number", (long long)R, "", "[-R n]");
    printf("%-40s%8d%8s%s\n", "Recovery percentage", pct, "", "[-pct n]");
    printf("%-40s%8d%8s%s\n", "Initial loop length", p->init_loop, "", "[-l n]");
    printf("%-40s%8d%8s%s\n", "Main loop length", p->main_loop, "", "[-L n]");
    printf("%-40s%10.1f%6s%s\n", "Initial inflation", p->init_inflation, "", "[-i f]");
    printf("%-40s%10.1f%6s%s\n", "Main inflation", p->inflation, "", "[-I f]");
}

static int mcl_run_cli(mcl_args a, dsmm_mcl_params p, const char *input, const dsmm_mcl_tf *stf);

static void log_nothing(void *user, dsmm_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    (void)msg;
}

// mcl --analyze=y's lines after the clusters: clm's granularity, then its performance
// measures with the input and output names (as mcl 22-282 writes them), a blank line last.
// NULL when out of memory.
static char *analysis_text(const dsmm_clm_info_stats *s, const char *input, const char *output)
{
    const char *fmt = "ncl=%lld max=%lld  ctr=%.1f avg=%.1f min=%lld DGI=%lld TWI=%lld TWL=%lld "
                      "sgl=%lld qrt=%lld\neff=%.5f mod=%.5f mf=%.5f af=%.5f target-name=%s\n"
                      "source-name=%s\n\n";
#define ANALYSIS_ARGS                                                                              \
    (long long)s->nclusters, (long long)s->size_max, s->size_ctr, s->size_avg,                     \
        (long long)s->size_min, (long long)s->dgi, (long long)s->twi, (long long)s->twl,           \
        (long long)s->singletons, (long long)s->qrt, s->efficiency, s->modularity, s->massfrac,    \
        dsmmi_clm_af_shown(s), input, output
    int n = snprintf(NULL, 0, fmt, ANALYSIS_ARGS);
    char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (t != NULL) snprintf(t, (size_t)n + 1, fmt, ANALYSIS_ARGS);
#undef ANALYSIS_ARGS
    return t;
}

int cli_mcl(int argc, char **argv)
{
    mcl_args a;
    memset(&a, 0, sizeof a);
    a.gpu_flops = -1;
    a.P = a.S = a.R = a.ram = -1;
    a.pct = -1;
    a.scheme = 6;
    a.base0 = 1;
    a.L = 10000;
    a.i = 2.0;
    a.algo = "summa";
    a.acc = "auto";
    a.expand = "auto";
    a.estimate = "auto";
    a.p = -1.0;
    const opt table[] = {
        {"abc", NULL, "INPUT is abc label triples (label1 label2 [weight])", K_FLAG, &a.abc, 0, 0},
        {"sif", NULL, "INPUT is SIF label lines (source relation target...)", K_FLAG, &a.sif, 0, 0},
        {"etc", NULL, "INPUT is ETC label lines (source target...)", K_FLAG, &a.etc, 0, 0},
        {"expect-values", NULL, "--sif/--etc targets may carry weights: label:weight", K_FLAG,
         &a.expect, 0, 0},
        {"matrix-market", NULL, "INPUT is Matrix Market (HipMCL's option; the default)", K_FLAG,
         &a.mm, 0, 0},
        {"base", "0|1", "Matrix Market input: vertex numbers of the output from 0 or 1 (1)", K_INT,
         &a.base0, 0, 1},
        {"I", "f[,f...]", "inflation (2.0); several values: one clustering each, one read", K_LIST,
         NULL, 0, 0},
        {"o", "FILE|-", "output file ('-': stdout); default out.INPUT.I<f>", K_STRING, &a.out, 0,
         0},
        {"d", NULL, "default output name in the input file's directory (mcl's --d)", K_FLAG, &a.d,
         0, 0},
        {"odir", "DIR", "default output name in DIR (mcl's -odir)", K_STRING, &a.odir, 0, 0},
        {"ap", "STR", "default output name: STR instead of out.INPUT (mcl's -ap)", K_STRING, &a.ap,
         0, 0},
        {"aa", "STR", "default output name: STR appended to the suffix (mcl's -aa)", K_STRING,
         &a.aa, 0, 0},
        {"te", "N", "threads per rank (mcl's -te)", K_INT, &a.threads, 1, 4096},
        {"threads", "N", "the same as -te (dsmm's common option)", K_INT, &a.threads, 1, 4096},
        {"scheme", "k", "pruning scheme 1..7 (6): P, S, R, pct as mcl's", K_INT, &a.scheme, 1, 7},
        {"p", "f", "prune threshold 0..0.1: entries below about f go (sets P = 1/f)", K_DOUBLE,
         &a.p, 0, 0.1},
        {"P", "n", "prune number: threshold 0.99999/n (0: none)", K_INT, &a.P, 0, 1e15},
        {"S", "n", "selection number: keep the n largest per column (0: none)", K_INT, &a.S, 0,
         1e15},
        {"R", "n", "recovery number (0: none)", K_INT, &a.R, 0, 1e15},
        {"pct", "n", "recovery percentage 0..99", K_INT, &a.pct, 0, 99},
        {"resource", "n", "the same as -P 10n -S n -R n (mcl's -resource)", K_INT, &a.resource, 1,
         1e14},
        {"tf", "SPEC",
         "transform the graph, e.g. 'gq(0.3),add(-0.3)' or '#knn(50)' (mcl's -tf; docs/mcl.md)",
         K_STRING, &a.tf, 0, 0},
        {"abc-tf", "SPEC", "transform each abc weight as read, e.g. 'ceil(200)' (mcl's -abc-tf)",
         K_STRING, &a.abc_tf, 0, 0},
        {"abc-neg-log10", NULL, "abc weights w become -log10(w) first (BLAST e-values)", K_FLAG,
         &a.neg_log10, 0, 0},
        {"abc-neg-log", NULL, "abc weights w become -ln(w) first", K_FLAG, &a.neg_log, 0, 0},
        {"use-tab", "FILE",
         "mcl native input (.mci): label the output with the tab file's 'index<TAB>label' "
         "lines (mcxload -write-tab)",
         K_STRING, &a.use_tab, 0, 0},
        {"c", "f", "multiply the loops by |f| (0: no loops)", K_DOUBLE, &a.c, -1e9, 1e9},
        {"discard-loops", "y|n",
         "y (default): the input's loops replaced by each vertex's largest weight; n: kept as "
         "stored (times |c|), none added",
         K_STRING, &a.discard_loops, 0, 0},
        {"overlap", "cut|keep|split",
         "a vertex reaching several clusters: in the first (cut, mcl's default), in all (keep), "
         "or taken out into clusters of its own (split)",
         K_STRING, &a.overlap, 0, 0},
        {"sort", "revsize|size|lex|none",
         "cluster order: largest first (revsize, default), smallest first, by members, or as "
         "found",
         K_STRING, &a.sort, 0, 0},
        {"force-connected", "y|n",
         "split clusters into the connected components they induce in the graph; the clustering "
         "before goes to FILE-rags (mcl's native format)",
         K_STRING, &a.force_conn, 0, 0},
        {"check-connected", "y|n",
         "report on stderr whether every cluster is connected in the graph (output unchanged)",
         K_STRING, &a.check_conn, 0, 0},
        {"annot", "STR",
         "mcl's dummy annotation (mcl copies it into the '# cline' comment of its native output, "
         "which dsmm does not write): accepted, no effect",
         K_STRING, &a.annot, 0, 0},
        {"icl", "FILE",
         "subcluster this clustering (mcl's -icl): edges between its clusters go, weak ones "
         "inside too; the automatic output name starts with FILE",
         K_STRING, &a.icl, 0, 0},
        {"analyze", "y|n",
         "append mcl's performance measures (clm info's, on mcl's start matrix) to each output",
         K_STRING, &a.analyze, 0, 0},
        {"l", "n", "initial loop length (0)", K_INT, &a.l, 0, 1e6},
        {"i", "f", "initial inflation (2.0)", K_DOUBLE, &a.i, 0.1, 30},
        {"L", "n", "main loop length (10000)", K_INT, &a.L, 0, 1e9},
        {"pi", "f", "pre-inflation of the input", K_DOUBLE, &a.pi, 0.0001, 30},
        {"q", "[SPEC]", "quiet: no progress (errors still shown); mcl's -q SPEC (-q x) the same",
         K_FLAG, &a.quiet, 0, 0},
        {"quiet", NULL, "the same as -q", K_FLAG, &a.quiet, 0, 0},
        {"verbose", NULL, "the library's debug log on stderr as well", K_FLAG, &a.verbose, 0, 0},
        {"mem", "SIZE", "hard cap on each rank's allocations (beyond it: exit 1)", K_SIZE,
         &a.budget, 0, 0},
        {"V", "[all]",
         "silent: nothing on stderr but errors (mcl's -V all; -V pruning|explain|cls: modes dsmm "
         "does not print, no effect)",
         K_FLAG, &a.silent, 0, 0},
        {"v", "WORD",
         "mcl's verbosity modes (pruning, explain, cls, all): accepted; dsmm prints its own "
         "progress, and --stats has the pruning figures",
         K_FLAG, &a.vmode, 0, 0},
        {"z", NULL, "print the default settings and exit", K_FLAG, &a.z, 0, 0},
        {"version", NULL, "print dsmm's version and the mcl release it follows, and exit", K_FLAG,
         &a.version, 0, 0},
        {"show-schemes", NULL, "print the -scheme table (P, S, R, pct of 1..7) and exit", K_FLAG,
         &a.show_schemes, 0, 0},
        {"az", NULL, "print the output file name mcl would use (and exit)", K_FLAG, &a.az, 0, 0},
        {"ax", NULL, "print the suffix of mcl's automatic output names (and exit)", K_FLAG, &a.ax,
         0, 0},
        {"how-much-ram", "N",
         "print mcl's upper bound on the RAM a graph of N vertices needs with these -S/-R/-scheme "
         "settings (16 x max(S, R) x N bytes) and exit",
         K_INT, &a.ram, 0, 1e15},
        {"per-process-mem", "SIZE", "memory budget per rank for the expansion -> phases", K_SIZE,
         &a.mem, 0, 0},
        {"phases", "N", "expand in exactly N phases (testing)", K_INT, &a.phases, 1, 1 << 30},
        {"stats", "FILE", "JSON statistics per iteration to FILE ('-': stdout)", K_STRING, &a.stats,
         0, 0},
        {"checkpoint", "DIR", "after each iteration save the state in DIR", K_STRING, &a.checkpoint,
         0, 0},
        {"resume", "DIR", "continue the run saved in DIR", K_STRING, &a.resume, 0, 0},
        {"algo", "NAME", "distributed SpGEMM: summa (default) or a one-sided algorithm", K_STRING,
         &a.algo, 0, 0},
        {"accumulate", "auto|merge|fused|binary", "SUMMA's accumulation of stage products",
         K_STRING, &a.acc, 0, 0},
        {"pipeline", NULL, "Pipelined Sparse SUMMA (on with --gpu unless --accumulate fused)",
         K_FLAG, &a.pipeline, 0, 0},
        {"expand", "auto|fused|replicated|dist",
         "expansion: fused (one rank), replicated iterate, or distributed SpGEMM", K_STRING,
         &a.expand, 0, 0},
        {"estimate", "auto|exact|R",
         "distributed runs: size the expansion by the exact count or Cohen's estimator with R "
         "keys (auto: the cheaper)",
         K_STRING, &a.estimate, 0, 0},
        {"grid", "PRxPC", "process grid (default: as square as possible)", K_STRING, &a.grid, 0, 0},
        {"gpu", NULL, "expand with the distributed SpGEMM, large tile products on the CUDA device",
         K_FLAG, &a.gpu, 0, 0},
        {"gpu-resident", NULL,
         "implies --gpu: the expansion's partial products on the device, merged there (one "
         "download of each rank's tile an expansion; SUMMA's pieces land in device memory "
         "when MPI is CUDA-aware)",
         K_FLAG, &a.gpu_resident, 0, 0},
        {"gpu-mem", "SIZE",
         "device memory pool (default: 80% of free, split among the ranks on the device; implies "
         "--gpu)",
         K_SIZE, &a.gpu_mem, 0, 0},
        {"gpu-min-flops", "N",
         "tile products of at least N multiply-adds run on the device (default 2e6; implies --gpu)",
         K_DOUBLE, &a.gpu_flops, 0, 1e18},
        {NULL, NULL, NULL, K_FLAG, NULL, 0, 0}};
    const char *input = NULL;
    int rc = parse(argc, argv, table, &a, &input);
    if (rc == CLI_HELP_RC) return CLI_OK;
    if (rc != CLI_OK) return rc;
    // mcl's label layouts: SIF and ETC are read as abc is (labels, symmetrised, transforms).
    if ((a.abc > 0) + (a.sif > 0) + (a.etc > 0) > 1)
        return usage_err("%s", "--abc, --sif and --etc exclude each other");
    if (a.expect && !a.sif && !a.etc)
        return usage_err("%s", "--expect-values reads SIF or ETC weights (label:weight); give "
                               "--sif or --etc");
    a.layout = a.sif ? DSMM_LAYOUT_SIF : a.etc ? DSMM_LAYOUT_ETC : DSMM_LAYOUT_ABC;
    if (a.sif || a.etc) a.abc = 1;

    dsmm_mcl_params p;
    dsmm_mcl_params_init(&p);
    int64_t P0, S0, R0;
    int pct0;
    if (dsmm_mcl_scheme_values(a.scheme, &P0, &S0, &R0, &pct0) != DSMM_OK)
        return usage_err("-scheme: %s", "not in 1..7");
    p.scheme = a.scheme;
    p.prune_number = a.P;
    if (a.p >= 0.0) p.prune_number = a.p > 0.0 ? (int64_t)(1.0 / (double)(float)a.p) : 0;
    p.select_number = a.S;
    p.recover_number = a.R;
    p.recover_pct = a.pct;
    p.init_loop = a.l;
    p.main_loop = a.L;
    p.init_inflation = a.i;
    if (a.has_c) p.loop_scale = a.c;
    if (a.has_pi) p.pre_inflation = a.pi;
    if (a.overlap) {
        int m = name_index(overlap_names, 3, a.overlap);
        if (m < 0) return usage_err("-overlap: '%s' is not cut, keep or split", a.overlap);
        p.overlap = (dsmm_mcl_overlap)m;
    }
    if (a.sort) {
        int m = name_index(sort_names, 4, a.sort);
        if (m < 0) return usage_err("-sort: '%s' is not revsize, size, lex or none", a.sort);
        p.sort = (dsmm_mcl_sort)m;
    }
    if (a.force_conn && yes_no(a.force_conn, &p.force_connected) != 0)
        return usage_err("--force-connected: '%s' is not y or n", a.force_conn);
    if (a.check_conn && yes_no(a.check_conn, &p.check_connected) != 0)
        return usage_err("--check-connected: '%s' is not y or n", a.check_conn);
    if (a.analyze && yes_no(a.analyze, &p.analyze) != 0)
        return usage_err("--analyze: '%s' is not y or n", a.analyze);
    int discard = 1;
    if (a.discard_loops && yes_no(a.discard_loops, &discard) != 0)
        return usage_err("--discard-loops: '%s' is not y or n", a.discard_loops);
    p.keep_loops = !discard;
    p.per_process_mem = a.mem;
    p.phases = a.phases;
    p.checkpoint_dir = a.checkpoint;
    p.resume_dir = a.resume;
    if (a.ninfl == 0) a.infl[a.ninfl++] = 2.0;
    for (int k = 0; k < a.ninfl; k++)
        if (!(a.infl[k] > 0.0 && a.infl[k] <= 30.0)) {
            char b[64];
            snprintf(b, sizeof b, "%g", a.infl[k]);
            return usage_err("-I: %s is not in (0, 30]", b);
        }
    if (a.version) { // no INPUT needed, as mcl --version
        printf("dsmm mcl %s (the options, output and clusters of mcl 22-282)\n", dsmm_version());
        return CLI_OK;
    }
    if (a.show_schemes) { // mcl's table, in its layout
        printf("             Pruning      Selection       Recovery  Recover percentage\n");
        for (int k = 1; k <= 7; k++) {
            int64_t P, S, R;
            int pct;
            if (dsmm_mcl_scheme_values(k, &P, &S, &R, &pct) != DSMM_OK) return CLI_FAIL;
            printf("Scheme %d%12lld%15lld%15lld%15d\n", k, (long long)P, (long long)S, (long long)R,
                   pct);
        }
        return CLI_OK;
    }
    if (a.ram >= 0) { // mcl's formula and words (its manual page: 2 * cell size * k * N)
        int64_t S = a.S >= 0 ? a.S : S0, R = a.R >= 0 ? a.R : R0, k = S > R ? S : R;
        if (k > a.ram) k = a.ram; // (no more neighbours than vertices, as mcl caps it)
        double bytes = 2.0 * 8.0 * (double)k * (double)a.ram;
        printf("The current settings require at most <%.0fG> RAM for a graph with <%lld> nodes,\n"
               "assuming the average node degree of the input graph does not exceed <%lld>.\n"
               "This estimate will usually but not always be too cautious/high.\n",
               bytes / 1073741824.0, (long long)a.ram, (long long)(2 * k));
        return CLI_OK;
    }
    if (a.z) {
        p.inflation = a.infl[0];
        print_defaults(&p, p.prune_number >= 0 ? p.prune_number : P0, a.S >= 0 ? a.S : S0,
                       a.R >= 0 ? a.R : R0, a.pct >= 0 ? a.pct : pct0);
        return CLI_OK;
    }
    if (a.gpu_mem || a.gpu_flops >= 0 || a.gpu_resident) a.gpu = 1;
    // Options of the distributed SpGEMM ask for it: auto then means the distributed expansion
    // (the fused and replicated kernels are CPU-only and ignore them).
    int dist_opts = a.gpu || a.pipeline || a.grid || a.phases || strcmp(a.algo, "summa") != 0 ||
                    strcmp(a.acc, "auto") != 0 || strcmp(a.estimate, "auto") != 0;
    if (strcmp(a.expand, "auto") == 0)
        p.expand = dist_opts ? DSMM_MCL_DIST : DSMM_MCL_AUTO;
    else if (strcmp(a.expand, "fused") == 0)
        p.expand = DSMM_MCL_FUSED;
    else if (strcmp(a.expand, "dist") == 0)
        p.expand = DSMM_MCL_DIST;
    else if (strcmp(a.expand, "replicated") == 0)
        p.expand = DSMM_MCL_REPLICATED;
    else
        return usage_err("--expand: '%s' is not auto|fused|replicated|dist", a.expand);
    if (strcmp(a.estimate, "auto") == 0) {
        p.estimate_keys = -1;
    } else if (strcmp(a.estimate, "exact") == 0) {
        p.estimate_keys = 0;
    } else {
        char *end = NULL;
        errno = 0;
        long r = strtol(a.estimate, &end, 10);
        if (end == a.estimate || *end || errno || r < 3 || r > 1024)
            return usage_err("--estimate: '%s' is not auto, exact or a key count in 3..1024",
                             a.estimate);
        p.estimate_keys = (int)r;
    }
    if (dsmm_dist_alg_from_name(a.algo, &p.dist.alg) != DSMM_OK || p.dist.alg == DSMM_DIST_AUTO)
        return usage_err("--algo: '%s' is not summa or a one-sided algorithm (rdma-c, ...)",
                         a.algo);
    static const char *accs[] = {"auto", "merge", "fused", "binary"};
    int acc = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(a.acc, accs[k]) == 0) acc = k;
    if (acc < 0) return usage_err("--accumulate: '%s' is not auto|merge|fused|binary", a.acc);
    p.dist.accumulate = (dsmm_dist_acc)acc;
    // --gpu pipelines (HipMCL-GPU §III: the device multiplies stage s while the CPU broadcasts
    // stage s+1), unless the stages are fused into one product.
    p.dist.pipeline = a.pipeline || (a.gpu && p.dist.accumulate != DSMM_ACC_FUSED);
    p.dist.gpu_resident = a.gpu_resident;
    if (a.gpu_resident && p.dist.accumulate == DSMM_ACC_FUSED)
        return usage_err("%s", "--gpu-resident merges the stage products on the device; it does "
                               "not take --accumulate fused");
    if (a.abc && a.mm)
        return usage_err("%s", "label input (--abc, --sif, --etc) and --matrix-market exclude each "
                               "other");
    if (!a.abc && (a.abc_tf || a.neg_log || a.neg_log10))
        return usage_err("%s", "-abc-tf, --abc-neg-log and --abc-neg-log10 transform abc input: "
                               "give --abc (-tf transforms any input)");
    if (a.use_tab && (a.abc || a.mm))
        return usage_err("%s", "-use-tab labels mcl's native (.mci) input, not --abc or "
                               "--matrix-market input");
    if (a.neg_log && a.neg_log10)
        return usage_err("%s", "--abc-neg-log and --abc-neg-log10 exclude each other");
    if (a.out && strcmp(a.out, "-") == 0 && a.ninfl > 1)
        return usage_err("%s", "-o - takes one clustering; give -o FILE (suffixes .I<f> added) "
                               "with several -I values");
    if (a.checkpoint && a.ninfl > 1) return usage_err("%s", "--checkpoint takes one -I value");
    if (a.out && strcmp(a.out, "-") == 0 && a.stats && strcmp(a.stats, "-") == 0)
        return usage_err("%s", "-o - and --stats - cannot both use stdout");

    // The transforms, parsed on every rank on a context of their own (no MPI yet): a bad one
    // is a usage error before any work.
    dsmm_ctx *tfctx = NULL;
    dsmm_mcl_tf *tf = NULL, *stf = NULL;
    if (a.tf || a.abc_tf || a.neg_log || a.neg_log10) {
        if (dsmm_ctx_create(&tfctx) != DSMM_OK)
            return cli_fail(&cmd, NULL, "cannot create a context");
        dsmm_ctx_set_log(tfctx, DSMM_LOG_ERROR, log_nothing, NULL); // the message is ours
        const char *bad = NULL;
        if (a.tf && dsmm_mcl_tf_parse(tfctx, a.tf, 0.0, &tf) != DSMM_OK) bad = "-tf";
        if (!bad && (a.abc_tf || a.neg_log || a.neg_log10) &&
            dsmm_mcl_tf_parse(tfctx, a.abc_tf,
                              a.neg_log10 ? 10.0
                              : a.neg_log ? exp(1.0)
                                          : 0.0,
                              &stf) != DSMM_OK)
            bad = "-abc-tf";
        if (bad) {
            fprintf(stderr, "dsmm mcl: %s: %s\nsee 'dsmm mcl --help'\n", bad,
                    dsmm_ctx_last_error(tfctx));
        } else if (dsmm_mcl_tf_graph_steps(stf) > 0) {
            // mcl ignores them there, silently; a step that does nothing is refused.
            fprintf(stderr,
                    "dsmm mcl: -abc-tf '%s': graph-wide steps (#...) act on the whole "
                    "graph; give them with -tf\nsee 'dsmm mcl --help'\n",
                    a.abc_tf);
            bad = "-abc-tf";
        }
        if (bad) {
            dsmm_mcl_tf_destroy(&tf);
            dsmm_mcl_tf_destroy(&stf);
            dsmm_ctx_destroy(&tfctx);
            return CLI_USAGE;
        }
        p.tf = tf;
    }
    rc = mcl_run_cli(a, p, input, stf);
    dsmm_mcl_tf_destroy(&tf);
    dsmm_mcl_tf_destroy(&stf);
    dsmm_ctx_destroy(&tfctx);
    return rc;
}

// Whether the file at path (gzip or plain) is in mcl's native matrix format.
static int native_file(const char *path)
{
    char buf[64] = {0};
    gzFile f = gzopen(path, "rb");
    if (f == NULL) return 0;
    int n = gzread(f, buf, (unsigned)sizeof buf - 1);
    gzclose(f);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *s = buf;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return strncmp(s, "(mclheader", 10) == 0;
}

// -icl FILE, on rank 0: *out (new, N entries) = each vertex's cluster in FILE, -1 for none.
// Label input: FILE names the graph's labels (lines, as dsmm mcl --abc and mcl write them);
// numeric input: vertex numbers, from 0 in mcl's native format or for native (.mci) graphs,
// else from base (as this program writes Matrix Market clusterings).
static dsmm_status read_icl(dsmm_ctx *ctx, const char *path, dsmm_labels *graph_labels,
                            int native_graph, int base, int64_t N, int64_t **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_clustering *C = NULL;
    dsmm_labels *L = graph_labels;
    int64_t *icl = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *icl);
    *out = NULL;
    DSMM_CHECK(ctx, icl != NULL, DSMM_ERR_NOMEM, "-icl: %lld vertices", (long long)N);
    for (int64_t v = 0; v < N; v++) icl[v] = -1;
    if (graph_labels != NULL) { // every member must be one of the graph's labels
        DSMM_TRY(dsmm_clustering_read(ctx, path, &L, 0, &C));
        for (dsmm_idx i = 0; i < C->n && i < N; i++) icl[i] = C->cluster[i];
    } else {
        L = NULL;
        int off = native_graph || native_file(path) ? 0 : base;
        DSMM_TRY(dsmm_clustering_read(ctx, path, &L, 1, &C));
        for (dsmm_idx i = 0; i < C->n; i++) {
            const char *name = dsmm_labels_name(L, i);
            char *end = NULL;
            errno = 0;
            long long x = strtoll(name, &end, 10);
            DSMM_CHECK(ctx,
                       end != name && *end == '\0' && errno == 0 && x - off >= 0 && x - off < N,
                       DSMM_ERR_ARG,
                       "-icl: %s: member '%s' is not a vertex number of the graph (%d..%lld)", path,
                       name, off, (long long)N - 1 + off);
            icl[x - off] = C->cluster[i];
        }
    }
    *out = icl;
    icl = NULL;
cleanup:
    if (L != graph_labels) dsmm_labels_destroy(&L);
    dsmm_clustering_destroy(&C);
    dsmmi_free(ctx, icl);
    return st;
}

// The rest of dsmm mcl, after the options: contexts, reading, clustering, writing.
static int mcl_run_cli(mcl_args a, dsmm_mcl_params p, const char *input, const dsmm_mcl_tf *stf)
{
    int rc = CLI_OK;
    // Output paths first, so a bad one fails before the work.
    char paths[MAX_INFL][4096];
    for (int k = 0; k < a.ninfl; k++) {
        int bad;
        if (a.out && a.ninfl == 1) {
            bad = cut(snprintf(paths[k], sizeof paths[k], "%s", a.out), sizeof paths[k]);
        } else if (a.out) {
            char suf[64], raw[64];
            snprintf(raw, sizeof raw, "%.1f", a.infl[k]);
            drop_dots(raw, suf, sizeof suf);
            bad = cut(snprintf(paths[k], sizeof paths[k], "%s.I%s", a.out, suf), sizeof paths[k]);
        } else {
            bad = auto_name(&a, input, a.infl[k], paths[k], sizeof paths[k]);
        }
        if (bad) {
            fprintf(stderr, "dsmm mcl: the output file's name is longer than %zu characters\n",
                    sizeof paths[k] - 1);
            return CLI_USAGE;
        }
    }
    // mcl's -az and -ax: the output names or their suffixes, and nothing else (no newline
    // after the last, as mcl prints them).
    if (a.az || a.ax) {
        for (int k = 0; k < a.ninfl; k++) {
            char suf[512];
            if (a.ax) auto_suffix(&a, a.infl[k], suf, sizeof suf);
            printf("%s%s", k ? "\n" : "", a.ax ? suf : paths[k]);
        }
        fflush(stdout);
        return CLI_OK;
    }
    for (int k = 0; k < a.ninfl; k++) {
        // mcl writes to out.mcl when it cannot create the file it named, which happens with a
        // prefix whose '=' brings in an input path from elsewhere (-ap 'p=' with dir/g.abc
        // names pdir/g.abc.I20); dsmm does the same there, and refuses other unwritable paths.
        char dir[4096];
        if (!a.out && a.ap && strchr(a.ap, '=') && cli_dir_state(paths[k], dir, sizeof dir) == 1) {
            fprintf(stderr, "dsmm mcl: cannot create %s; writing to out.mcl instead (as mcl)\n",
                    paths[k]);
            snprintf(paths[k], sizeof paths[k], "out.mcl");
        }
        if (cli_dir_writable(&cmd, "-o", paths[k]) != CLI_OK) return CLI_FAIL;
    }
    if (a.stats && cli_dir_writable(&cmd, "--stats", a.stats) != CLI_OK) return CLI_FAIL;
    if (a.checkpoint) {
        struct stat sb;
        if (stat(a.checkpoint, &sb) != 0 && mkdir(a.checkpoint, 0777) != 0) {
            fprintf(stderr, "dsmm mcl: --checkpoint: cannot create %s: %s\n", a.checkpoint,
                    strerror(errno));
            return CLI_FAIL;
        }
    }

    // Large arrays straight from mmap: freed iterates go back to the system at once and
    // growing ones are moved by mremap, not copied, so the peak RSS stays near two iterates.
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    cli_common c;
    cli_common_init(&c);
    c.threads = a.threads;
    c.quiet = a.quiet || a.silent;
    c.verbose = a.verbose;
    c.mem = a.budget;
    c.gpu = a.gpu;
    c.gpu_mem = a.gpu_mem;
    c.gpu_flops = a.gpu_flops;
    cli_dist d;
    memset(&d, 0, sizeof d);
    d.grid = a.grid;
    if (a.grid) {
        char x = 0;
        if (sscanf(a.grid, "%d%c%d", &d.pr, &x, &d.pc) != 3 || (x != 'x' && x != 'X') || d.pr < 1 ||
            d.pc < 1)
            return usage_err("--grid: '%s' is not PRxPC (e.g. 2x3)", a.grid);
    }
    dsmm_ctx *ctx = NULL;
    int serial = !cli_dist_launched();
    if (serial) {
        // One process without a launcher: no MPI start-up (a singleton MPI_Init costs about a
        // second, longer than clustering a small network).
        if (dsmm_ctx_create(&ctx) != DSMM_OK)
            return cli_fail(&cmd, NULL, "cannot create a context");
        dsmm_ctx_set_log(ctx,
                         c.quiet     ? DSMM_LOG_ERROR
                         : c.verbose ? DSMM_LOG_DEBUG
                                     : DSMM_LOG_WARN,
                         NULL, NULL);
        dsmm_ctx_set_progress(ctx, 0);
        if (c.mem) dsmm_ctx_set_mem_budget(ctx, c.mem);
        if ((a.threads && dsmm_ctx_set_threads(ctx, a.threads) != DSMM_OK) ||
            (a.grid && dsmm_ctx_set_grid(ctx, d.pr, d.pc) != DSMM_OK)) {
            cli_fail(&cmd, ctx, "bad option");
            dsmm_ctx_destroy(&ctx);
            return CLI_FAIL;
        }
        if (cli_gpu(&cmd, &c, ctx) != CLI_OK) {
            dsmm_ctx_destroy(&ctx);
            return CLI_FAIL;
        }
    } else if (cli_dist_ctx(&cmd, &c, &d, &ctx) != CLI_OK) {
        return CLI_FAIL;
    }
    int root = dsmm_ctx_rank(ctx) == 0, native = 0;
    dsmm_dist *G = NULL;
    dsmm_csr *A = NULL;
    dsmm_labels *labels = NULL;
    int64_t *icl = NULL; // -icl: each vertex's cluster
    dsmm_mcl_result res;
    memset(&res, 0, sizeof res);
    dsmm_status st = DSMM_OK;
    rc = CLI_OK;

    dsmm_read_opts ro;
    dsmm_read_opts_init(&ro);
    ro.type = DSMM_DOUBLE;
    ro.keep_pattern = 1;
    ro.format = a.abc ? DSMM_FORMAT_ABC : (a.mm ? DSMM_FORMAT_MTX : DSMM_FORMAT_AUTO);
    ro.layout = a.layout;
    ro.expect_values = a.expect > 0;
    if (stf != NULL) {
        ro.abc_map = dsmm_mcl_tf_apply; // mcl's stream transforms, before pairs are merged
        ro.abc_map_arg = stf;
    }
    double t_read = dsmmi_wtime();
    if (a.abc) {
        // Labels live on rank 0 (for the output); the matrix is scattered from there.
        ro.dup = DSMM_DUP_MAX; // mcl merges repeated pairs by their maximum
        if (root) st = dsmm_read(ctx, input, &ro, &A, &labels, NULL);
        st = dsmmi_comm_agree(ctx, st);
        if (st == DSMM_OK) st = dsmm_dist_scatter(ctx, 0, A, 0, 0, &G);
        dsmm_csr_destroy(&A);
        p.symmetrize = 1;
    } else {
        dsmm_file_info fi;
        st = dsmm_dist_read(ctx, input, &ro, 0, 0, &G, &fi);
        // mcl's native matrix (mcxload's .mci): read as it is (mcl does not symmetrise it),
        // clusters written in mcl's native format, or with the labels of -use-tab.
        if (st == DSMM_OK) {
            native = fi.format == DSMM_FORMAT_MCI; // the same on every rank
            if (a.use_tab && !native) {
                if (root)
                    fprintf(stderr,
                            "dsmm mcl: -use-tab labels mcl's native (.mci) input; %s is %s\n",
                            input, cli_format_name(fi.format));
                rc = CLI_USAGE;
                goto done;
            }
            if (a.use_tab) {
                dsmm_status ts = DSMM_OK;
                if (root) {
                    ts = dsmmi_labels_read_tab(ctx, a.use_tab, dsmm_dist_nrows(G), &labels);
                    if (ts != DSMM_OK) cli_fail(&cmd, ctx, a.use_tab);
                }
                if (dsmmi_comm_agree(ctx, ts) != DSMM_OK) {
                    rc = CLI_FAIL;
                    goto done;
                }
            }
        }
    }
    if (st != DSMM_OK) {
        if (root) cli_fail(&cmd, ctx, input);
        rc = CLI_FAIL;
        goto done;
    }
    if (a.icl) { // rank 0 reads it (the labels are there), every rank gets the clusters
        int64_t N = dsmm_dist_nrows(G);
        dsmm_status is = DSMM_OK;
        if (root) {
            is = read_icl(ctx, a.icl, a.abc ? labels : NULL, native, a.base0, N, &icl);
            if (is != DSMM_OK) cli_fail(&cmd, ctx, a.icl);
        } else {
            icl = dsmmi_malloc(ctx, (size_t)N + 1, sizeof *icl);
            if (icl == NULL)
                is = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "-icl: %lld vertices",
                                 (long long)N);
        }
        if (dsmmi_comm_agree(ctx, is) != DSMM_OK ||
            dsmmi_bcast_ctl(ctx, 0, icl, (size_t)N * sizeof *icl) != DSMM_OK) {
            rc = CLI_FAIL;
            goto done;
        }
        p.icl = icl;
        p.icl_n = N;
    }
    t_read = dsmmi_wtime() - t_read;
    int64_t nnz_in = dsmm_dist_nnz(G);
    progress_ctx pcx = {a.quiet || a.silent, 0};
    p.progress = progress;
    p.progress_user = &pcx;
    for (int k = 0; k < a.ninfl && rc == CLI_OK; k++) {
        p.inflation = a.infl[k];
        pcx.header = 0;
        dsmm_traffic t0, t1;
        dsmm_ctx_traffic(ctx, &t0);
        // The last (or only) inflation value lets the library free the input once loaded.
        st = k + 1 < a.ninfl ? dsmm_mcl_run(ctx, G, &p, &res)
                             : dsmm_mcl_run_consume(ctx, &G, &p, &res);
        if (st != DSMM_OK) { // the same status on every rank
            if (root) cli_fail(&cmd, ctx, "clustering");
            if (root && st == DSMM_ERR_ARG && (a.neg_log || a.neg_log10) &&
                strstr(dsmm_ctx_last_error(ctx), "has weight -") != NULL)
                fprintf(stderr,
                        "dsmm mcl: note: --abc-neg-log%s makes weights above 1 (e-values) "
                        "negative; -abc-tf 'gt(0),...' drops them\n",
                        a.neg_log10 ? "10" : "");
            rc = CLI_FAIL;
            break;
        }
        dsmm_ctx_traffic(ctx, &t1);
        mcl_totals tot = {t_read, nnz_in, (int64_t)dsmm_ctx_mem_peak(ctx),
                          t1.bytes_sent[0] + t1.bytes_sent[1] - t0.bytes_sent[0] -
                              t0.bytes_sent[1]};
        st = dsmmi_allreduce_i64(ctx, &tot.peak, 1, '>');
        if (st == DSMM_OK) st = dsmmi_allreduce_i64(ctx, &tot.sent, 1, '+');
        if (st != DSMM_OK) {
            if (root) cli_fail(&cmd, ctx, "gathering the statistics");
            rc = CLI_FAIL;
            break;
        }
        if (root) {
            double tw = dsmmi_wtime();
            int base = a.abc ? 0 : a.base0, nat = native && labels == NULL;
            char rags[4200];
            dsmm_status ws = DSMM_OK;
            const char *failed = paths[k];
            // --force-connected split a cluster: the clustering before, as mcl writes it (its
            // native format, to OUTPUT-rags; none when the output is stdout).
            if (res.orig_start && strcmp(paths[k], "-") != 0) {
                snprintf(rags, sizeof rags, "%s-rags", paths[k]);
                failed = rags;
                ws = dsmmi_write_cluster_lists(ctx, rags, res.n, res.orig_nclusters, res.orig_start,
                                               res.orig_members, NULL, 0, 1);
            }
            if (ws == DSMM_OK) {
                char *trailer = res.analyzed ? analysis_text(&res.analysis, input, paths[k]) : NULL;
                failed = paths[k];
                if (res.analyzed && trailer == NULL)
                    ws = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "--analyze's text");
                else
                    ws = dsmmi_write_cluster_lists_trailer(ctx, paths[k], res.n, res.nclusters,
                                                           res.start, res.members, labels, base,
                                                           nat, trailer);
                free(trailer);
            }
            if (ws != DSMM_OK) {
                cli_fail(&cmd, ctx, failed);
                rc = CLI_FAIL;
            } else if (!a.silent) {
                if (res.overlap > 0 && p.overlap != DSMM_MCL_OVERLAP_CUT)
                    fprintf(stderr, "[dsmm mcl] %s %lld vertices in overlap\n",
                            p.overlap == DSMM_MCL_OVERLAP_KEEP ? "kept" : "split",
                            (long long)res.overlap);
                if (res.orig_start)
                    fprintf(stderr,
                            "[dsmm mcl] splitting yields an additional %lld clusters at a total "
                            "of %lld%s%s\n",
                            (long long)(res.nclusters - res.orig_nclusters),
                            (long long)res.nclusters, strcmp(paths[k], "-") ? "; before: " : "",
                            strcmp(paths[k], "-") ? rags : "");
                else if ((p.force_connected || p.check_connected) &&
                         res.components == res.nclusters)
                    fprintf(stderr, "[dsmm mcl] clustering induces connected components\n");
                else if (p.check_connected)
                    fprintf(stderr,
                            "[dsmm mcl] clusters not connected in the graph: they induce %lld "
                            "components in all (--force-connected=y splits them)\n",
                            (long long)res.components);
                fprintf(stderr, "[dsmm mcl] %lld clusters found (I = %g, %d iterations%s)\n",
                        (long long)res.nclusters, a.infl[k], res.iterations,
                        res.converged ? "" : ", not converged");
                fprintf(stderr, "[dsmm mcl] output is in %s\n", paths[k]);
            }
            tot.io_seconds += dsmmi_wtime() - tw;
            if (rc == CLI_OK && a.stats) {
                char sp[4096], an[64];
                if (a.ninfl > 1 && strcmp(a.stats, "-") != 0)
                    snprintf(sp, sizeof sp, "%s.%d", a.stats, k);
                else
                    snprintf(sp, sizeof sp, "%s", a.stats);
                rc = write_stats(ctx, sp, input, &a, &p, &res,
                                 algo_name(&res, dsmm_dist_alg_name(p.dist.alg), an, sizeof an),
                                 &tot);
            }
        }
        // Only rank 0 writes: every rank learns whether it failed, so none goes on alone into
        // the next inflation's collectives.
        if (dsmmi_comm_agree(ctx, rc == CLI_OK ? DSMM_OK : DSMM_ERR_IO) != DSMM_OK) rc = CLI_FAIL;
        dsmm_mcl_result_free(&res);
    }
done:
    dsmm_mcl_result_free(&res);
    dsmmi_free(ctx, icl);
    dsmm_dist_destroy(&G);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&labels);
    if (serial)
        dsmm_ctx_destroy(&ctx);
    else
        cli_dist_end(&ctx);
    return rc;
}
