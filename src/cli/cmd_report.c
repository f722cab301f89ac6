// src/cli/cmd_report.c: `dsmm report FILE...`: the statistics records written by --stats, as
// tables: per record a header line, the component breakdown in the layout of the RDMA paper's
// Table 2 (comp, comm, acc, load imbalance: seconds averaged over ranks), one row per rank and
// the flops imbalance; with several records a summary table. --json prints the same rows as
// JSON lines. A file is read and checked whole before anything of it is printed.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json_read.h"
#include "dist/dist.h"

static const cli_cmd cmd = {
    "report",
    "FILE [FILE...] [options]",
    "Prints the statistics records of runs (--stats FILE) as tables.",
    "Each FILE holds one JSON record as written by --stats, or several one after another (e.g.\n"
    "runs appended to one file); '-' reads standard input. Per record: a header line (op, algo,\n"
    "ranks, grid, threads, seconds, flops, nnz in -> out, GB sent); for distributed operations\n"
    "(records with ranks_detail) the component breakdown of the RDMA paper's Table 2 (Comp.,\n"
    "Comm., Acc., Load Imb.: seconds averaged over ranks; Load Imb. is the time spent waiting\n"
    "for slower ranks), one row per rank and the flops imbalance (max/avg end to end, worst\n"
    "stage, flops-weighted mean over stages); for dsmm mcl, one row per iteration. With several\n"
    "records, a summary table follows. MB and GB are 10^6 and 10^9 bytes.",
};

// The four components of Table 2, in ranks_detail's names.
enum { C_COMP, C_COMM, C_ACC, C_WAIT, NCOMP };
static const char *const comp_keys[NCOMP] = {"comp", "comm", "acc", "wait"};

typedef struct rank_row {
    int64_t rank, workgroup;
    double t[NCOMP], total, flops;
    double recv_intra, recv_inter; // bytes
    int64_t msgs_sent, msgs_recv;
} rank_row;

typedef struct record {
    const char *file;
    size_t index;                 // 1-based within the file
    const char *op, *algo, *grid; // point into the file's trees; grid NULL when absent
    int64_t ranks;
    double threads, seconds, flops, nnz_in, nnz_out, bytes_sent;
    int dist;       // has ranks_detail
    rank_row *rows; // ranks entries when dist
    double avg[NCOMP];
    int have_imb;
    double imb[3];         // end to end, worst stage, mean stage
    const cli_json *iters; // dsmm mcl: the "iterations" array, checked; NULL otherwise
} record;

// One file: its text, its parsed records and what was read from them.
typedef struct loaded {
    char *text;
    size_t len;
    cli_json **trees;
    record *recs;
    size_t n, cap;
} loaded;

static void loaded_free(loaded *L)
{
    for (size_t k = 0; k < L->n; k++) {
        cli_json_free(L->trees[k]);
        free(L->recs[k].rows);
    }
    free(L->trees);
    free(L->recs);
    free(L->text);
    memset(L, 0, sizeof *L);
}

// The message of a failed file, "FILE: ...", printed by the caller.
typedef struct msgbuf {
    char text[512];
} msgbuf;

static int say(msgbuf *m, const char *fmt, ...) DSMMI_PRINTF(2, 3);
static int say(msgbuf *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->text, sizeof m->text, fmt, ap);
    va_end(ap);
    return -1;
}

static int read_all(const char *path, loaded *L, msgbuf *m)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) return say(m, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : say(m, "%s: out of memory", path);
    while (rc == 0) {
        if (len + 1 >= cap) {
            if (cap > CLI_JSON_MAX_BYTES) {
                rc = say(m, "%s: larger than %zu bytes, the most a statistics file may hold", path,
                         CLI_JSON_MAX_BYTES);
                break;
            }
            char *b = realloc(buf, 2 * cap);
            if (b == NULL) {
                rc = say(m, "%s: out of memory", path);
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = say(m, "cannot read %s: %s", path, strerror(errno));
            break;
        }
    }
    if (!is_stdin) fclose(f);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    L->text = buf;
    L->len = len;
    return 0;
}

// Lookups that explain a missing or mistyped key: "FILE: record N (line L): ...".
typedef struct where {
    const char *file;
    size_t index, line;
    msgbuf *m;
} where;

static int bad(const where *w, const char *fmt, ...) DSMMI_PRINTF(2, 3);
static int bad(const where *w, const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return say(w->m, "%s: record %zu (line %zu): %s", w->file, w->index, w->line, what);
}

static int get(const where *w, const cli_json *o, const char *in, const char *key,
               cli_json_kind kind, const cli_json **out)
{
    const cli_json *v = cli_json_get(o, key);
    // The writer turns non-finite numbers into null: a null number reads as NaN.
    if (v != NULL && (v->kind == kind || (kind == CLI_JSON_NUMBER && v->kind == CLI_JSON_NULL))) {
        *out = v;
        return 0;
    }
    if (v == NULL) return bad(w, "missing key '%s%s'", in, key);
    return bad(w, "'%s%s' is %s %s, expected %s %s", in, key,
               v->kind == CLI_JSON_ARRAY || v->kind == CLI_JSON_OBJECT ? "an" : "a",
               cli_json_kind_name(v->kind),
               kind == CLI_JSON_ARRAY || kind == CLI_JSON_OBJECT ? "an" : "a",
               cli_json_kind_name(kind));
}

static int get_num(const where *w, const cli_json *o, const char *in, const char *key, double *x)
{
    const cli_json *v = NULL;
    if (get(w, o, in, key, CLI_JSON_NUMBER, &v) != 0) return -1;
    *x = v->kind == CLI_JSON_NULL ? NAN : v->num;
    return 0;
}

static int get_int(const where *w, const cli_json *o, const char *in, const char *key, int64_t *x)
{
    const cli_json *v = NULL;
    if (get(w, o, in, key, CLI_JSON_NUMBER, &v) != 0) return -1;
    if (v->kind != CLI_JSON_NUMBER || !v->is_int)
        return bad(w, "'%s%s' is not an integer", in, key);
    *x = v->i;
    return 0;
}

static int get_str(const where *w, const cli_json *o, const char *key, const char **s)
{
    const cli_json *v = NULL;
    if (get(w, o, "", key, CLI_JSON_STRING, &v) != 0) return -1;
    *s = v->str;
    return 0;
}

// Keys that only distributed operations write: their presence makes ranks_detail mandatory.
static const char *const dist_keys[] = {"ranks_detail", "grid",   "components",
                                        "imbalance",    "stages", "stages_count"};

static int read_rank(const where *w, const cli_json *o, size_t r, rank_row *row)
{
    char in[48];
    snprintf(in, sizeof in, "ranks_detail[%zu].", r);
    if (o->kind != CLI_JSON_OBJECT)
        return bad(w, "ranks_detail[%zu] is a %s, expected an object", r,
                   cli_json_kind_name(o->kind));
    int64_t msi = 0, mse = 0, mri = 0, mre = 0;
    if (get_int(w, o, in, "rank", &row->rank) || get_int(w, o, in, "workgroup", &row->workgroup))
        return -1;
    for (int c = 0; c < NCOMP; c++)
        if (get_num(w, o, in, comp_keys[c], &row->t[c])) return -1;
    if (get_num(w, o, in, "total", &row->total) || get_num(w, o, in, "flops", &row->flops) ||
        get_num(w, o, in, "bytes_recv_intra", &row->recv_intra) ||
        get_num(w, o, in, "bytes_recv_inter", &row->recv_inter) ||
        get_int(w, o, in, "msgs_sent_intra", &msi) || get_int(w, o, in, "msgs_sent_inter", &mse) ||
        get_int(w, o, in, "msgs_recv_intra", &mri) || get_int(w, o, in, "msgs_recv_inter", &mre))
        return -1;
    if (row->rank != (int64_t)r)
        return bad(w, "ranks_detail[%zu] is rank %lld", r, (long long)row->rank);
    row->msgs_sent = msi + mse;
    row->msgs_recv = mri + mre;
    return 0;
}

// dsmm mcl's per-iteration records: every one an object with the numbers the table prints
// (the components only where the iteration was distributed).
static const char *const iter_nums[] = {"iteration",  "seconds",    "flops", "nnz_in",
                                        "nnz_expand", "nnz_pruned", "chaos"};

static int read_iterations(const where *w, const cli_json *o, record *rec)
{
    const cli_json *a = NULL;
    if (get(w, o, "", "iterations", CLI_JSON_ARRAY, &a)) return -1;
    for (size_t i = 0; i < a->n; i++) {
        const cli_json *it = &a->items[i], *v = NULL;
        char in[48];
        snprintf(in, sizeof in, "iterations[%zu].", i);
        if (it->kind != CLI_JSON_OBJECT)
            return bad(w, "iterations[%zu] is a %s, expected an object", i,
                       cli_json_kind_name(it->kind));
        double x;
        for (size_t k = 0; k < sizeof iter_nums / sizeof iter_nums[0]; k++)
            if (get_num(w, it, in, iter_nums[k], &x)) return -1;
        if (get(w, it, in, "expand", CLI_JSON_STRING, &v)) return -1;
        for (int c = 0; c < NCOMP; c++)
            if (cli_json_get(it, dsmmi_stats_comp_keys[c]) &&
                get_num(w, it, in, dsmmi_stats_comp_keys[c], &x))
                return -1;
    }
    rec->iters = a;
    return 0;
}

// Everything printed later is read and checked here, so a bad record prints nothing.
static int read_record(const where *w, const cli_json *o, record *rec)
{
    static const char *const nums[] = {"threads", "seconds", "io_seconds", "flops",
                                       "nnz_in",  "nnz_out", "peak_bytes", "bytes_sent"};
    double x[sizeof nums / sizeof nums[0]];
    if (get_str(w, o, "op", &rec->op) || get_str(w, o, "algo", &rec->algo) ||
        get_int(w, o, "", "ranks", &rec->ranks))
        return -1;
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
        if (get_num(w, o, "", nums[k], &x[k])) return -1;
    rec->threads = x[0];
    rec->seconds = x[1];
    rec->flops = x[3];
    rec->nnz_in = x[4];
    rec->nnz_out = x[5];
    rec->bytes_sent = x[7];
    if (rec->ranks < 1 || rec->ranks > (1 << 24))
        return bad(w, "ranks is %lld, expected 1..%d", (long long)rec->ranks, 1 << 24);

    if (strcmp(rec->op, "mcl") == 0 && read_iterations(w, o, rec)) return -1;
    const char *marker = NULL;
    for (size_t k = 0; k < sizeof dist_keys / sizeof dist_keys[0] && !marker; k++)
        if (cli_json_get(o, dist_keys[k])) marker = dist_keys[k];
    if (marker == NULL) return 0; // a local operation: the header line is all there is
    const cli_json *detail = cli_json_get(o, "ranks_detail");
    if (detail == NULL)
        return bad(w,
                   "missing key 'ranks_detail' (a record with '%s' is of a distributed "
                   "operation and needs its per-rank breakdown)",
                   marker);
    if (get(w, o, "", "ranks_detail", CLI_JSON_ARRAY, &detail) || get_str(w, o, "grid", &rec->grid))
        return -1;
    if (detail->n != (size_t)rec->ranks)
        return bad(w, "ranks_detail has %zu entries but ranks is %lld", detail->n,
                   (long long)rec->ranks);
    rec->dist = 1;
    rec->rows = calloc(detail->n, sizeof *rec->rows);
    if (rec->rows == NULL) return bad(w, "out of memory");
    for (size_t r = 0; r < detail->n; r++) {
        if (read_rank(w, &detail->items[r], r, &rec->rows[r])) return -1;
        for (int c = 0; c < NCOMP; c++) rec->avg[c] += rec->rows[r].t[c];
    }
    for (int c = 0; c < NCOMP; c++) rec->avg[c] /= (double)detail->n;
    const cli_json *imb = cli_json_get(o, "imbalance");
    if (imb != NULL) {
        if (get(w, o, "", "imbalance", CLI_JSON_OBJECT, &imb) ||
            get_num(w, imb, "imbalance.", "flops_max_over_avg", &rec->imb[0]) ||
            get_num(w, imb, "imbalance.", "stage_max_over_avg_worst", &rec->imb[1]) ||
            get_num(w, imb, "imbalance.", "stage_max_over_avg_mean", &rec->imb[2]))
            return -1;
        rec->have_imb = 1;
    }
    return 0;
}

static int load(const char *path, loaded *L, msgbuf *m)
{
    if (read_all(path, L, m)) return -1;
    size_t pos = 0;
    while (!cli_json_at_end(L->text, L->len, &pos)) {
        cli_json *v = NULL;
        cli_json_error e;
        size_t start = pos, line = 0, col = 0;
        if (cli_json_parse(L->text, L->len, &pos, &v, &e))
            return say(m, "%s: line %zu, column %zu (byte %zu): %s", path, e.line, e.col, e.byte,
                       e.msg);
        cli_json_where(L->text, start, &line, &col);
        if (L->n == L->cap) {
            size_t c = L->cap ? 2 * L->cap : 4;
            cli_json **t = realloc(L->trees, c * sizeof *t);
            if (t) L->trees = t;
            record *r = realloc(L->recs, c * sizeof *r);
            if (r) L->recs = r;
            if (!t || !r) {
                cli_json_free(v);
                return say(m, "%s: out of memory", path);
            }
            L->cap = c;
        }
        L->trees[L->n] = v;
        record *rec = &L->recs[L->n++];
        memset(rec, 0, sizeof *rec);
        rec->file = path;
        rec->index = L->n;
        where w = {path, L->n, line, m};
        if (v->kind != CLI_JSON_OBJECT)
            return bad(&w, "a JSON %s, expected an object (one statistics record)",
                       cli_json_kind_name(v->kind));
        if (read_record(&w, v, rec)) return -1;
    }
    if (L->n == 0) return say(m, "%s: no JSON record (the file is empty)", path);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Text output                                                                                */
/* ------------------------------------------------------------------------------------------ */

static void print_header(const record *r)
{
    printf("== %s #%zu: %s %s, ranks %lld, grid %s, threads %.0f, seconds %.6f, flops %.6g, "
           "nnz %.0f -> %.0f, sent %.6f GB\n",
           r->file, r->index, r->op, r->algo[0] ? r->algo : "-", (long long)r->ranks,
           r->grid ? r->grid : "-", r->threads, r->seconds, r->flops, r->nnz_in, r->nnz_out,
           r->bytes_sent / 1e9);
}

// dsmm mcl: one row per iteration; the distributed SpGEMM's components where it ran.
static void print_iterations(const cli_json *a)
{
    printf("  %5s %10s %12s %12s %12s %12s %10s %-10s %9s %9s %9s %9s\n", "ite", "seconds", "flops",
           "nnz in", "expanded", "pruned", "chaos", "expand", "comp", "comm", "acc", "wait");
    for (size_t i = 0; i < a->n; i++) {
        const cli_json *it = &a->items[i];
        double x[sizeof iter_nums / sizeof iter_nums[0]];
        for (size_t k = 0; k < sizeof iter_nums / sizeof iter_nums[0]; k++) {
            const cli_json *v = cli_json_get(it, iter_nums[k]);
            x[k] = v->kind == CLI_JSON_NUMBER ? v->num : NAN;
        }
        printf("  %5.0f %10.4f %12.6g %12.0f %12.0f %12.0f %10.4g %-10s", x[0], x[1], x[2], x[3],
               x[4], x[5], x[6], cli_json_get(it, "expand")->str);
        for (int c = 0; c < NCOMP; c++) {
            const cli_json *v = cli_json_get(it, dsmmi_stats_comp_keys[c]);
            if (v != NULL && v->kind == CLI_JSON_NUMBER)
                printf(" %9.4f", v->num);
            else
                printf(" %9s", "-");
        }
        printf("\n");
    }
}

static void print_record(const record *r)
{
    print_header(r);
    if (r->iters != NULL) {
        print_iterations(r->iters);
        printf("\n");
        return;
    }
    if (!r->dist) {
        printf("  no per-rank breakdown (not a distributed operation)\n\n");
        return;
    }
    printf("  %-10s %6s %10s %10s %10s %10s   (seconds, average over ranks)\n", "Alg.", "Ranks",
           "Comp.", "Comm.", "Acc.", "Load Imb.");
    printf("  %-10s %6lld %10.6f %10.6f %10.6f %10.6f\n", r->algo, (long long)r->ranks,
           r->avg[C_COMP], r->avg[C_COMM], r->avg[C_ACC], r->avg[C_WAIT]);
    printf("  %5s %5s %10s %10s %10s %10s %10s %12s %14s %14s %10s %10s\n", "rank", "wg", "comp",
           "comm", "acc", "wait", "total", "flops", "MB recv intra", "MB recv inter", "msgs sent",
           "msgs recv");
    for (int64_t k = 0; k < r->ranks; k++) {
        const rank_row *q = &r->rows[k];
        printf("  %5lld %5lld %10.6f %10.6f %10.6f %10.6f %10.6f %12.6g %14.6f %14.6f %10lld "
               "%10lld\n",
               (long long)q->rank, (long long)q->workgroup, q->t[C_COMP], q->t[C_COMM], q->t[C_ACC],
               q->t[C_WAIT], q->total, q->flops, q->recv_intra / 1e6, q->recv_inter / 1e6,
               (long long)q->msgs_sent, (long long)q->msgs_recv);
    }
    if (r->have_imb)
        printf("  imbalance (flops max/avg): end to end %.4f, worst stage %.4f, mean stage %.4f\n",
               r->imb[0], r->imb[1], r->imb[2]);
    else
        printf("  imbalance: not in the record\n");
    printf("\n");
}

static void print_summary(record *const *all, size_t n)
{
    printf("== summary (%zu records)\n", n);
    printf("  %-8s %-10s %6s %-9s %10s %10s %10s %10s %10s\n", "op", "algo", "ranks", "grid",
           "seconds", "comp", "comm", "acc", "imb");
    for (size_t k = 0; k < n; k++) {
        const record *r = all[k];
        printf("  %-8s %-10s %6lld %-9s %10.6f", r->op, r->algo[0] ? r->algo : "-",
               (long long)r->ranks, r->grid ? r->grid : "-", r->seconds);
        if (r->dist)
            printf(" %10.6f %10.6f %10.6f %10.6f\n", r->avg[C_COMP], r->avg[C_COMM], r->avg[C_ACC],
                   r->avg[C_WAIT]);
        else
            printf(" %10s %10s %10s %10s\n", "-", "-", "-", "-");
    }
}

/* ------------------------------------------------------------------------------------------ */
/* JSON lines (--json): the same rows, one object per line; bytes unscaled                     */
/* ------------------------------------------------------------------------------------------ */

static void row_begin(dsmmi_json *j, const char *table, const record *r)
{
    dsmmi_json_init(j, NULL);
    dsmmi_json_begin_object(j, NULL);
    dsmmi_json_str(j, "table", table);
    dsmmi_json_str(j, "file", r->file);
    dsmmi_json_int(j, "record", (int64_t)r->index);
}

static int row_end(dsmmi_json *j)
{
    dsmmi_json_end_object(j);
    int ok = j->st == DSMM_OK;
    if (ok) printf("%s\n", j->buf);
    dsmmi_json_free(j);
    return ok ? 0 : -1;
}

static int json_record(const record *r)
{
    dsmmi_json j;
    int rc = 0;
    row_begin(&j, "record", r);
    dsmmi_json_str(&j, "op", r->op);
    dsmmi_json_str(&j, "algo", r->algo);
    dsmmi_json_int(&j, "ranks", r->ranks);
    dsmmi_json_str(&j, "grid", r->grid);
    dsmmi_json_num(&j, "threads", r->threads);
    dsmmi_json_num(&j, "seconds", r->seconds);
    dsmmi_json_num(&j, "flops", r->flops);
    dsmmi_json_num(&j, "nnz_in", r->nnz_in);
    dsmmi_json_num(&j, "nnz_out", r->nnz_out);
    dsmmi_json_num(&j, "bytes_sent", r->bytes_sent);
    dsmmi_json_bool(&j, "breakdown", r->dist);
    rc |= row_end(&j);
    if (!r->dist) return rc;
    row_begin(&j, "components", r);
    dsmmi_json_str(&j, "algo", r->algo);
    dsmmi_json_int(&j, "ranks", r->ranks);
    dsmmi_json_num(&j, "comp", r->avg[C_COMP]);
    dsmmi_json_num(&j, "comm", r->avg[C_COMM]);
    dsmmi_json_num(&j, "acc", r->avg[C_ACC]);
    dsmmi_json_num(&j, "load_imb", r->avg[C_WAIT]);
    rc |= row_end(&j);
    for (int64_t k = 0; k < r->ranks; k++) {
        const rank_row *q = &r->rows[k];
        row_begin(&j, "rank", r);
        dsmmi_json_int(&j, "rank", q->rank);
        dsmmi_json_int(&j, "workgroup", q->workgroup);
        for (int c = 0; c < NCOMP; c++) dsmmi_json_num(&j, comp_keys[c], q->t[c]);
        dsmmi_json_num(&j, "total", q->total);
        dsmmi_json_num(&j, "flops", q->flops);
        dsmmi_json_num(&j, "bytes_recv_intra", q->recv_intra);
        dsmmi_json_num(&j, "bytes_recv_inter", q->recv_inter);
        dsmmi_json_int(&j, "msgs_sent", q->msgs_sent);
        dsmmi_json_int(&j, "msgs_recv", q->msgs_recv);
        rc |= row_end(&j);
    }
    if (r->have_imb) {
        row_begin(&j, "imbalance", r);
        dsmmi_json_num(&j, "flops_max_over_avg", r->imb[0]);
        dsmmi_json_num(&j, "stage_max_over_avg_worst", r->imb[1]);
        dsmmi_json_num(&j, "stage_max_over_avg_mean", r->imb[2]);
        rc |= row_end(&j);
    }
    return rc;
}

static int json_summary(record *const *all, size_t n)
{
    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        const record *r = all[k];
        dsmmi_json j;
        row_begin(&j, "summary", r);
        dsmmi_json_str(&j, "op", r->op);
        dsmmi_json_str(&j, "algo", r->algo);
        dsmmi_json_int(&j, "ranks", r->ranks);
        dsmmi_json_str(&j, "grid", r->grid);
        dsmmi_json_num(&j, "seconds", r->seconds);
        static const char *const keys[NCOMP] = {"comp", "comm", "acc", "imb"};
        for (int c = 0; c < NCOMP; c++) {
            if (r->dist)
                dsmmi_json_num(&j, keys[c], r->avg[c]);
            else
                dsmmi_json_str(&j, keys[c], NULL);
        }
        rc |= row_end(&j);
    }
    return rc;
}

int cli_report(int argc, char **argv)
{
    int json = 0;
    const cli_opt opts[] = {
        {"json", 0, NULL, "print the table rows as JSON lines (for scripts)", CLI_FLAG, &json, 0,
         0},
        {NULL, 0, NULL, NULL, CLI_FLAG, NULL, 0, 0},
    };
    char **pos = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *pos);
    if (pos == NULL) return cli_fail(&cmd, NULL, "out of memory");
    int npos = 0;
    int rc = cli_parse(&cmd, opts, argc, argv, pos, &npos, argc);
    if (rc != CLI_OK) {
        free(pos);
        return rc;
    }
    if (npos < 1) {
        free(pos);
        return cli_usage_error(&cmd, "needs at least one FILE");
    }
    loaded *files = calloc((size_t)npos, sizeof *files);
    record **all = NULL;
    size_t nall = 0;
    if (files == NULL) {
        rc = cli_fail(&cmd, NULL, "out of memory");
        goto done;
    }
    for (int f = 0; f < npos; f++) {
        msgbuf m = {{0}};
        if (load(pos[f], &files[f], &m)) {
            fprintf(stderr, "dsmm %s: %s\n", cmd.name, m.text);
            loaded_free(&files[f]);
            rc = CLI_FAIL;
            continue;
        }
        record **a = realloc(all, (nall + files[f].n) * sizeof *a);
        if (a == NULL) {
            rc = cli_fail(&cmd, NULL, "out of memory");
            goto done;
        }
        all = a;
        for (size_t k = 0; k < files[f].n; k++) {
            all[nall++] = &files[f].recs[k];
            if (json && json_record(&files[f].recs[k]) != 0) {
                rc = cli_fail(&cmd, NULL, "out of memory");
                goto done;
            }
            if (!json) print_record(&files[f].recs[k]);
        }
    }
    if (nall > 1 && json && json_summary(all, nall) != 0)
        rc = cli_fail(&cmd, NULL, "out of memory");
    if (nall > 1 && !json) print_summary(all, nall);
    if (fflush(stdout) != 0) rc = cli_fail(&cmd, NULL, "cannot write to stdout");
done:
    if (files)
        for (int f = 0; f < npos; f++) loaded_free(&files[f]);
    free(files);
    free(all);
    free(pos);
    return rc;
}
