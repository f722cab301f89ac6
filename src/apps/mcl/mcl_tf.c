// src/apps/mcl/mcl_tf.c: mcl's transforms (-tf, -abc-tf, --abc-neg-log[10]): a list of steps
// name(value) parsed once. Value steps are applied to each weight in double; the edge cases
// follow mcl 22-282 as measured (docs/mcl.md, "Transforms"): the log of 0 is -FLT_MAX, and the
// stream's negated log of 0 is FLT_MAX / ln(base). Graph-wide steps (#knn, #knnj, #ceilnb and
// the transpose joins #max #min #add #mul #arcmax #arcsub #tp #tug) act on the whole graph,
// distributed by rows, in dsmmi_mcl_tf_run (below).
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/apps.h"
#include "io/io.h"

typedef enum {
    TF_NEG_LOG, // the stream's --abc-neg-log / --abc-neg-log10 (a = ln(base))
    TF_GT,
    TF_GQ,
    TF_LT,
    TF_LQ,
    TF_CEIL,
    TF_FLOOR,
    TF_ADD,
    TF_MUL,
    TF_POW,
    TF_LOG,    // a = ln(base), 1 for ln
    TF_NEGLOG, // a = ln(base), 1 for ln
    TF_EXP,    // a = the base, e for exp()
    TF_ABS,
    TF_G_KNN,    // graph-wide (a = mcl's value): #knn(k) the k-NN graph, mutual
    TF_G_KNNJ,   // #knnj(k): the k-NN graph, joined (either side's selection)
    TF_G_CEILNB, // #ceilnb(k): degrees capped at k, hubs first
    TF_G_MAX,    // the graph joined with its transpose (mutual's JOIN_* modes, same order):
    TF_G_MIN,    // #max(), #min(), #add(), #mul() entry by entry (an absent arc counts 0),
    TF_G_ADD,    // #arcmax() an arc kept when at least as heavy as its reverse, #arcsub()
    TF_G_MUL,    // an arc minus its reverse, #tp() the transpose (a value is ignored, as
    TF_G_ARCMAX, // mcl ignores it)
    TF_G_ARCSUB,
    TF_G_TP,
    TF_G_TUG // #tug(): each arc (j, i) with j < i copied over its reverse (measured on mcl)
} tf_op;

static int is_graph_op(tf_op op)
{
    return op >= TF_G_KNN;
}

typedef struct {
    tf_op op;
    double a;
} tf_step;

struct dsmm_mcl_tf {
    dsmm_ctx *ctx;
    int n;
    tf_step *step;
    char *spec; // normalised text
};

// The steps mcl knows; need: 1 the value is required, 0 optional, -1 none allowed.
static const struct {
    const char *name;
    tf_op op;
    int need;
} known[] = {{"gt", TF_GT, 1},   {"gq", TF_GQ, 1},         {"lt", TF_LT, 1},
             {"lq", TF_LQ, 1},   {"ceil", TF_CEIL, 1},     {"floor", TF_FLOOR, 1},
             {"add", TF_ADD, 1}, {"mul", TF_MUL, 1},       {"pow", TF_POW, 1},
             {"log", TF_LOG, 0}, {"neglog", TF_NEGLOG, 0}, {"exp", TF_EXP, 0},
             {"abs", TF_ABS, -1}};
static const struct {
    const char *name;
    tf_op op;
    int need;
} known_graph[] = {{"knn", TF_G_KNN, 1}, {"knnj", TF_G_KNNJ, 1},     {"ceilnb", TF_G_CEILNB, 1},
                   {"max", TF_G_MAX, 0}, {"min", TF_G_MIN, 0},       {"add", TF_G_ADD, 0},
                   {"mul", TF_G_MUL, 0}, {"arcmax", TF_G_ARCMAX, 0}, {"arcsub", TF_G_ARCSUB, 0},
                   {"tp", TF_G_TP, 0},   {"tug", TF_G_TUG, 0}};

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

// One step at *sp ("name(value)"), appended to tf; *sp moves past it.
static dsmm_status parse_step(dsmm_ctx *ctx, const char **sp, dsmm_mcl_tf *tf, size_t *len)
{
    dsmm_status st = DSMM_OK;
    const char *s = skip_space(*sp), *name = s;
    int k = -1, graph = *s == '#';
    if (graph) s++;
    while (isalpha((unsigned char)*s)) s++;
    int nlen = (int)(s - name);
    DSMM_CHECK(ctx, nlen > graph, DSMM_ERR_ARG, "mcl transform: a step name expected at '%s'",
               name);
    if (graph) {
        for (int i = 0; i < (int)(sizeof known_graph / sizeof known_graph[0]); i++)
            if ((int)strlen(known_graph[i].name) == nlen - 1 &&
                strncmp(known_graph[i].name, name + 1, (size_t)nlen - 1) == 0)
                k = i;
        DSMM_CHECK(
            ctx, k >= 0, DSMM_ERR_UNSUPPORTED,
            "mcl transform: '%.*s': this graph-wide transform of mcl's is not supported by "
            "dsmm (graph-wide: #knn #knnj #ceilnb #max #min #add #mul #arcmax #arcsub #tp #tug; "
            "value transforms: gt gq lt lq ceil floor add mul pow log neglog exp abs)",
            nlen, name);
    } else {
        for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
            if ((int)strlen(known[i].name) == nlen &&
                strncmp(known[i].name, name, (size_t)nlen) == 0)
                k = i;
    }
    if (k < 0 && ((nlen == 4 && strncmp(name, "acos", 4) == 0) ||
                  (nlen == 4 && strncmp(name, "rand", 4) == 0)))
        DSMM_FAIL(ctx, DSMM_ERR_UNSUPPORTED, "mcl transform: '%.*s' is not supported by dsmm", nlen,
                  name);
    DSMM_CHECK(
        ctx, k >= 0, DSMM_ERR_ARG,
        "mcl transform: unknown step '%.*s' (gt gq lt lq ceil floor add mul pow log neglog "
        "exp abs; graph-wide #knn #knnj #ceilnb #max #min #add #mul #arcmax #arcsub #tp #tug)",
        nlen, name);
    int need = graph ? known_graph[k].need : known[k].need;
    tf_op op = graph ? known_graph[k].op : known[k].op;
    s = skip_space(s);
    DSMM_CHECK(ctx, *s == '(', DSMM_ERR_ARG, "mcl transform: '%.*s' needs parentheses: %.*s(...)",
               nlen, name, nlen, name);
    s = skip_space(s + 1);
    int has = *s != ')';
    double a = 0.0;
    if (has) {
        char *e = NULL;
        errno = 0;
        a = strtod(s, &e);
        DSMM_CHECK(ctx, e != s && errno == 0 && isfinite(a), DSMM_ERR_ARG,
                   "mcl transform: '%.*s': the value '%.*s' is not a finite number", nlen, name,
                   (int)strcspn(s, ")"), s);
        s = skip_space(e);
    }
    DSMM_CHECK(ctx, *s == ')', DSMM_ERR_ARG, "mcl transform: '%.*s': ')' expected at '%s'", nlen,
               name, s);
    s++;
    DSMM_CHECK(ctx, has || need != 1, DSMM_ERR_ARG, "mcl transform: '%.*s' needs a value", nlen,
               name);
    DSMM_CHECK(ctx, !has || need != -1, DSMM_ERR_ARG, "mcl transform: '%.*s' takes no value", nlen,
               name);
    // mcl rounds a graph step's count (k = a + 0.5, truncated); a negative one is refused.
    DSMM_CHECK(ctx, need != 1 || !graph || (a >= 0.0 && a < 2147483647.0), DSMM_ERR_ARG,
               "mcl transform: '%.*s(%g)': the count must be in 0..2147483646", nlen, name, a);
    tf_step t = {op, a};
    if (t.op == TF_LOG || t.op == TF_NEGLOG) {
        DSMM_CHECK(ctx, !has || (a > 0.0 && a != 1.0), DSMM_ERR_ARG,
                   "mcl transform: '%.*s(%g)': a logarithm's base must be > 0 and not 1", nlen,
                   name, a);
        t.a = has ? log(a) : 1.0;
    } else if (t.op == TF_EXP) {
        t.a = has ? a : exp(1.0);
    }
    tf->step[tf->n++] = t;
    // The normalised text: name(value), the value as the shortest decimal that reads back.
    char buf[80], num[40] = "";
    if (has) dsmmi_format_double(num, a);
    const char *comma = *len > 0 ? "," : "";
    int w = snprintf(buf, sizeof buf, "%s%.*s(%s)", comma, nlen, name, num);
    memcpy(tf->spec + *len, buf, (size_t)w + 1);
    *len += (size_t)w;
    *sp = s;
cleanup:
    return st;
}

dsmm_status dsmm_mcl_tf_parse(dsmm_ctx *ctx, const char *spec, double neg_log_base,
                              dsmm_mcl_tf **out)
{
    dsmm_status st = DSMM_OK;
    dsmm_mcl_tf *tf = NULL;
    DSMM_CHECK(ctx, out != NULL, DSMM_ERR_ARG, "mcl transform: out must be non-NULL");
    *out = NULL;
    DSMM_CHECK(ctx, neg_log_base == 0.0 || (neg_log_base > 0.0 && neg_log_base != 1.0),
               DSMM_ERR_ARG, "mcl transform: negated log base %g (0: none; > 0 and not 1)",
               neg_log_base);
    if (spec == NULL) spec = "";
    size_t slen = strlen(spec);
    // At most one step per comma, plus the negated log; each normalised step takes at most
    // the name (known, <= 7 with '#'), 2 parentheses, a comma and a %.17g value (<= 24).
    size_t nmax = 2;
    for (size_t i = 0; i < slen; i++) nmax += spec[i] == ',';
    tf = dsmmi_calloc(ctx, 1, sizeof *tf);
    DSMM_CHECK(ctx, tf != NULL, DSMM_ERR_NOMEM, "mcl transform");
    tf->ctx = ctx;
    tf->step = dsmmi_malloc(ctx, nmax, sizeof *tf->step);
    tf->spec = dsmmi_malloc(ctx, nmax * 40 + 1, 1);
    DSMM_CHECK(ctx, tf->step && tf->spec, DSMM_ERR_NOMEM, "mcl transform of %zu steps", nmax);
    tf->spec[0] = '\0';
    if (neg_log_base > 0.0) tf->step[tf->n++] = (tf_step){TF_NEG_LOG, log(neg_log_base)};
    size_t len = 0; // the normalised text leaves the negated log out
    const char *s = skip_space(spec);
    while (*s) {
        DSMM_TRY(parse_step(ctx, &s, tf, &len));
        s = skip_space(s);
        if (*s == ',') {
            s = skip_space(s + 1);
            DSMM_CHECK(ctx, *s != '\0', DSMM_ERR_ARG, "mcl transform: '%s' ends with a comma",
                       spec);
        } else {
            DSMM_CHECK(ctx, *s == '\0', DSMM_ERR_ARG,
                       "mcl transform: ',' expected between steps at '%s'", s);
        }
    }
    *out = tf;
    tf = NULL;
cleanup:
    dsmm_mcl_tf_destroy(&tf);
    return st;
}

// w after steps [from, to) (graph-wide steps are skipped).
static double apply_steps(const dsmm_mcl_tf *tf, int from, int to, double w)
{
    for (int i = from; i < to; i++) {
        const tf_step *t = &tf->step[i];
        switch (t->op) {
        case TF_NEG_LOG:
            w = w == 0.0 ? (double)FLT_MAX / t->a : -log(w) / t->a;
            break;
        case TF_GT:
            w = w > t->a ? w : 0.0;
            break;
        case TF_GQ:
            w = w >= t->a ? w : 0.0;
            break;
        case TF_LT:
            w = w < t->a ? w : 0.0;
            break;
        case TF_LQ:
            w = w <= t->a ? w : 0.0;
            break;
        case TF_CEIL:
            w = w > t->a ? t->a : w;
            break;
        case TF_FLOOR:
            w = w < t->a ? t->a : w;
            break;
        case TF_ADD:
            w += t->a;
            break;
        case TF_MUL:
            w *= t->a;
            break;
        case TF_POW:
            w = pow(w, t->a);
            break;
        case TF_LOG:
            w = w == 0.0 ? -(double)FLT_MAX : log(w) / t->a;
            break;
        case TF_NEGLOG:
            w = w == 0.0 ? (double)FLT_MAX : -log(w) / t->a;
            break;
        case TF_EXP:
            w = pow(t->a, w);
            break;
        case TF_ABS:
            w = fabs(w);
            break;
        default: // graph-wide steps
            break;
        }
    }
    return w;
}

double dsmm_mcl_tf_apply(const void *arg, double w)
{
    const dsmm_mcl_tf *tf = arg;
    return tf == NULL ? w : apply_steps(tf, 0, tf->n, w);
}

int dsmm_mcl_tf_graph_steps(const dsmm_mcl_tf *tf)
{
    int n = 0;
    for (int i = 0; tf != NULL && i < tf->n; i++) n += is_graph_op(tf->step[i].op);
    return n;
}

const char *dsmm_mcl_tf_spec(const dsmm_mcl_tf *tf)
{
    return tf ? tf->spec : "";
}

void dsmm_mcl_tf_destroy(dsmm_mcl_tf **tf)
{
    if (tf == NULL || *tf == NULL) return;
    dsmm_ctx *ctx = (*tf)->ctx;
    dsmmi_free(ctx, (*tf)->step);
    dsmmi_free(ctx, (*tf)->spec);
    dsmmi_free(ctx, *tf);
    *tf = NULL;
}

// ------------------------------------------------------------------------------------------
// The transforms on the graph: M holds this rank's rows of T = G^T (mcl's columns), in the
// equal split of N rows over the ranks, columns sorted.
// ------------------------------------------------------------------------------------------

// mcl's count of a graph step: a + 0.5, truncated.
static dsmm_idx step_count(double a)
{
    return (dsmm_idx)(a + 0.5);
}

// mcl's choice of a vector's k highest entries (its mclvSelectHighest, for n > k entries whose
// values are x[0..n), reordered): the entries >= the returned bar stay. The bar is the k-th
// largest value; when ties at it would keep more than k, it is that value times
// (1 + FLT_EPSILON) (mcl's float epsilon), so that none of the tied stay. k = 0 keeps none.
static double select_bar(float *x, dsmm_idx n, dsmm_idx k)
{
    if (k == 0) return INFINITY;
    for (dsmm_idx i = 0; i < n; i++)
        if (isnan(x[i])) x[i] = -INFINITY;
    float f = dsmmi_mcl_kth_largest(x, n, k);
    dsmm_idx cnt = 0;
    for (dsmm_idx i = 0; i < n; i++) cnt += x[i] >= f;
    return cnt > k ? (double)f * (1.0 + FLT_EPSILON) : (double)f;
}

// The value steps [from, to) on every entry of M, each result stored as a float (as mcl stores
// it); entries that become 0 leave the graph, as in mcl.
static void apply_values(const dsmm_mcl_tf *tf, int from, int to, dsmmi_mcl_mat *M)
{
    dsmm_idx q = 0, a = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx b = M->rowptr[i + 1];
        for (dsmm_idx k = a; k < b; k++) {
            float w = (float)apply_steps(tf, from, to, (double)M->val[k]);
            if (w != 0.0f) {
                M->col[q] = M->col[k];
                M->val[q++] = w;
            }
        }
        a = b;
        M->rowptr[i + 1] = q;
    }
    M->nnz = q;
}

static dsmm_idx max_row(const dsmmi_mcl_mat *M)
{
    dsmm_idx m = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++)
        if (M->rowptr[i + 1] - M->rowptr[i] > m) m = M->rowptr[i + 1] - M->rowptr[i];
    return m;
}

// How mutual() joins an arc (i, j) of M, weight w, with the arc (j, i), weight t (0 when
// absent): kept only when both are in M, with w (mcl's #knn) or min(w, t) (-icl's block
// partition, #min), or w t (#mul); kept when either is, with max(w, t) (#knnj, #max) or w + t
// (#add); w kept when w >= t (#arcmax); w - t, kept unless 0 (#arcsub); t (#tp); by position
// (#tug, as mcl 22-282 does it, measured with -write-graphx): in row i (mcl's column i) an
// entry j < i stays as it is, and for j > i the reverse arc, when there is one, takes its
// place (the arcs of the upper triangle in mcl's terms are mirrored over the lower one). Float
// arithmetic, as mcl's. JOIN_EITHER_MAX..JOIN_TUG follow TF_G_MAX..TF_G_TUG.
enum {
    JOIN_BOTH_OWN,
    JOIN_EITHER_MAX,
    JOIN_BOTH_MIN,
    JOIN_EITHER_ADD,
    JOIN_BOTH_MUL,
    JOIN_ARCMAX,
    JOIN_ARCSUB,
    JOIN_TP,
    JOIN_TUG
};

// The joined weight *x of arc (i, j) present in M (hw, weight w), in the transpose (ht, weight
// t) or both, as mode says; returns whether the arc stays. The arithmetic modes drop a result
// of 0 (#arcsub's ties), as mcl does; the others keep what they select whatever its weight.
static int join_weight(int mode, dsmm_idx i, dsmm_idx j, int hw, float w, int ht, float t, float *x)
{
    if (!hw) w = 0.0f;
    if (!ht) t = 0.0f;
    switch (mode) {
    case JOIN_BOTH_OWN:
        *x = w;
        return hw && ht;
    case JOIN_EITHER_MAX:
        *x = !ht || (hw && w > t) ? w : t;
        return 1;
    case JOIN_BOTH_MIN:
        *x = w < t ? w : t;
        return hw && ht;
    case JOIN_EITHER_ADD:
        *x = w + t;
        return *x != 0.0f;
    case JOIN_BOTH_MUL:
        *x = w * t;
        return hw && ht && *x != 0.0f;
    case JOIN_ARCMAX:
        *x = w;
        return hw && w >= t;
    case JOIN_ARCSUB:
        *x = w - t;
        return *x != 0.0f;
    case JOIN_TP:
        *x = t;
        return ht;
    default: // JOIN_TUG
        *x = j > i && ht ? t : w;
        return hw || (j > i && ht);
    }
}

// The most arcs a join in this mode can keep, from m arcs in M and t in its transpose: the
// modes that keep only arcs of M (or only of the transpose) need no room for the other side.
static dsmm_idx join_bound(int mode, dsmm_idx m, dsmm_idx t)
{
    switch (mode) {
    case JOIN_BOTH_OWN:
    case JOIN_BOTH_MIN:
    case JOIN_BOTH_MUL:
    case JOIN_ARCMAX:
        return m;
    case JOIN_TP:
        return t;
    default:
        return m + t;
    }
}

// M joined with its transpose as mode says; the transpose comes as M's triples sent to the
// owners of their columns' rows (what names them in messages). Collective; fails together.
static dsmm_status mutual(dsmm_ctx *ctx, dsmm_idx N, dsmm_idx row0, dsmmi_mcl_mat *M, int mode,
                          const char *what)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx);
    double *tv = NULL;
    dsmm_idx *tr = NULL, *tc = NULL;
    dsmm_dist *C = NULL;
    dsmmi_mcl_mat out = {0};
    // The arcs transposed: row j of C holds the columns whose rows hold j.
    tr = dsmmi_malloc(ctx, (size_t)M->nnz + 1, sizeof *tr);
    tc = dsmmi_malloc(ctx, (size_t)M->nnz + 1, sizeof *tc);
    tv = dsmmi_malloc(ctx, (size_t)M->nnz + 1, sizeof *tv);
    if (!tr || !tc || !tv)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: %s: %lld entries", what,
                            (long long)M->nnz);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (dsmm_idx i = 0; i < M->nrows; i++)
        for (dsmm_idx e = M->rowptr[i]; e < M->rowptr[i + 1]; e++) {
            tr[e] = M->col[e];
            tc[e] = row0 + i;
            tv[e] = (double)M->val[e];
        }
    DSMM_TRY(dsmmi_dist_from_triples(ctx, N, N, DSMM_DOUBLE, M->nnz, tr, tc, tv, DSMM_DOUBLE,
                                     DSMM_DUP_ERROR, what, P, 1, &C));
    tr = dsmmi_free(ctx, tr);
    tc = dsmmi_free(ctx, tc);
    tv = dsmmi_free(ctx, tv);
    const dsmm_csr *t = C->tile;
    const double *cv = t->val;
    if (C->rb[C->grid->myrow] != row0 || t->nrows != M->nrows || !t->sorted)
        local = dsmmi_error(ctx, DSMM_ERR_INTERNAL, __FILE__, __LINE__,
                            "mcl: %s: the transposed arcs are not in the graph's rows", what);
    if (local == DSMM_OK)
        local = dsmmi_mcl_mat_alloc(ctx, &out, M->nrows, join_bound(mode, M->nnz, t->nnz));
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_idx q = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx e = M->rowptr[i], eb = M->rowptr[i + 1];
        dsmm_idx f = t->rowptr[i], fb = t->rowptr[i + 1];
        while (e < eb || f < fb) {
            dsmm_idx ce = e < eb ? (dsmm_idx)M->col[e] : N, cf = f < fb ? dsmm_csr_col(t, f) : N;
            dsmm_idx c = ce < cf ? ce : cf;
            int hw = ce == c, ht = cf == c;
            float x;
            int keep = join_weight(mode, row0 + i, c, hw, hw ? M->val[e] : 0.0f, ht,
                                   ht ? (float)cv[f] : 0.0f, &x);
            e += hw;
            f += ht;
            if (keep) {
                out.col[q] = (int32_t)c;
                out.val[q++] = x;
            }
        }
        out.rowptr[i + 1] = q;
    }
    out.nnz = q;
    dsmmi_mcl_mat_free(ctx, M);
    *M = out;
    out = (dsmmi_mcl_mat){0};
cleanup:
    dsmm_dist_destroy(&C);
    dsmmi_mcl_mat_free(ctx, &out);
    dsmmi_free(ctx, tr);
    dsmmi_free(ctx, tc);
    dsmmi_free(ctx, tv);
    return st;
}

dsmm_status dsmmi_mcl_icl(dsmm_ctx *ctx, dsmm_idx N, dsmm_idx row0, dsmmi_mcl_mat *M,
                          const int64_t *cluster, int64_t n)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    float *x = dsmmi_malloc(ctx, (size_t)max_row(M) + 1, sizeof *x);
    if (x == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: -icl");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_idx q = 0, a = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx b = M->rowptr[i + 1], v = row0 + i; // (rowptr[i + 1] is rewritten below)
        int64_t c = v < n ? cluster[v] : -1;
        // The weights to other clusters (and to vertices in none): their median (the mean of
        // the two middle ones for an even count), as mclxBlockPartition takes it.
        dsmm_idx nx = 0;
        float wmax = 0;
        int any = 0;
        for (dsmm_idx e = a; e < b; e++) {
            int64_t cu = M->col[e] < n ? cluster[M->col[e]] : -1;
            if (c >= 0 && cu == c) {
                if (!any || M->val[e] > wmax) wmax = M->val[e];
                any = 1;
            } else {
                x[nx++] = M->val[e];
            }
        }
        double med = 0;
        if (nx > 0) // ascending positions nx / 2 and (nx - 1) / 2, as descending ranks
            med = ((double)dsmmi_mcl_kth_largest(x, nx, nx - nx / 2) +
                   (double)dsmmi_mcl_kth_largest(x, nx, nx - (nx - 1) / 2)) /
                  2.0;
        int cut = med != 0 && any && med < (double)wmax;
        for (dsmm_idx e = a; e < b && c >= 0; e++) {
            int64_t cu = M->col[e] < n ? cluster[M->col[e]] : -1;
            if (cu != c || (cut && !((double)M->val[e] > med))) continue;
            M->col[q] = M->col[e];
            M->val[q++] = M->val[e];
        }
        a = b;
        M->rowptr[i + 1] = q;
    }
    M->nnz = q;
    DSMM_TRY(mutual(ctx, N, row0, M, JOIN_BOTH_MIN, "-icl's blocks"));
cleanup:
    dsmmi_free(ctx, x);
    return st;
}

// #knn(k) (join 0) and #knnj(k) (join 1), as mcl's k-NN: each column keeps its k highest
// entries; then an arc stays when the other end chose it too (knn), or when either end chose
// it, with the larger of the two weights (knnj). The other end's choices come as the transpose
// of the choices (their triples sent to the owners of the rows). Collective; fails together.
static dsmm_status graph_knn(dsmm_ctx *ctx, dsmm_idx N, dsmm_idx row0, dsmmi_mcl_mat *M, dsmm_idx k,
                             int join)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    float *x = NULL;

    x = dsmmi_malloc(ctx, (size_t)max_row(M) + 1, sizeof *x);
    if (x == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: #knn");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    dsmm_idx q = 0, a = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx b = M->rowptr[i + 1], n = b - a;
        double bar = -INFINITY;
        if (n > k) {
            memcpy(x, M->val + a, (size_t)n * sizeof *x);
            bar = select_bar(x, n, k);
        }
        for (dsmm_idx e = a; e < b; e++)
            if (n <= k || (double)M->val[e] >= bar) {
                M->col[q] = M->col[e];
                M->val[q++] = M->val[e];
            }
        a = b;
        M->rowptr[i + 1] = q;
    }
    M->nnz = q;

    DSMM_TRY(mutual(ctx, N, row0, M, join ? JOIN_EITHER_MAX : JOIN_BOTH_OWN, "the k-NN choices"));
cleanup:
    dsmmi_free(ctx, x);
    return st;
}

typedef struct hub {
    int64_t len;
    int32_t id, slot;
} hub;

static int hub_cmp(const void *pa, const void *pb) // degree descending, then vertex ascending
{
    const hub *a = pa, *b = pb;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static int cmp_i32(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

// Rank 0's part of #ceilnb: the hubs' rows (packed as id, length, columns, values; ascending
// ids) in buf; mcl's greedy order: hubs by degree descending (ties: lower vertex first), each
// keeps its k highest remaining entries and drops the others, also from the other end's
// column. The dropped arcs (hub, other) are appended to pairs (2 int32 each; room for every
// hub entry). Returns the number of pairs, or -1 when out of memory.
static dsmm_idx ceilnb_greedy(dsmm_ctx *ctx, const char *buf, size_t bytes, dsmm_idx k,
                              int32_t *pairs)
{
    dsmm_idx H = 0, tot = 0, npairs = -1;
    for (size_t o = 0; o < bytes; H++) {
        int64_t len;
        memcpy(&len, buf + o + 8, 8);
        tot += len;
        o += 16 + (size_t)len * 8;
    }
    hub *h = dsmmi_malloc(ctx, (size_t)H + 1, sizeof *h);
    int32_t *hid = dsmmi_malloc(ctx, (size_t)H + 1, sizeof *hid);
    dsmm_idx *off = dsmmi_malloc(ctx, (size_t)H + 1, sizeof *off);
    int32_t *col = dsmmi_malloc(ctx, (size_t)tot + 1, sizeof *col);
    float *val = dsmmi_malloc(ctx, (size_t)tot + 1, sizeof *val);
    unsigned char *alive = dsmmi_malloc(ctx, (size_t)tot + 1, 1);
    float *x = NULL;
    if (!h || !hid || !off || !col || !val || !alive) goto out;
    dsmm_idx mx = 0, e = 0;
    size_t o = 0;
    for (dsmm_idx s = 0; s < H; s++) {
        int64_t id, len;
        memcpy(&id, buf + o, 8);
        memcpy(&len, buf + o + 8, 8);
        memcpy(col + e, buf + o + 16, (size_t)len * 4);
        memcpy(val + e, buf + o + 16 + (size_t)len * 4, (size_t)len * 4);
        o += 16 + (size_t)len * 8;
        h[s] = (hub){len, (int32_t)id, (int32_t)s};
        hid[s] = (int32_t)id;
        off[s] = e;
        e += len;
        if (len > mx) mx = len;
    }
    off[H] = e;
    memset(alive, 1, (size_t)tot + 1);
    x = dsmmi_malloc(ctx, (size_t)mx + 1, sizeof *x);
    if (x == NULL) goto out;
    qsort(h, (size_t)H, sizeof *h, hub_cmp);
    npairs = 0;
    for (dsmm_idx r = 0; r < H; r++) {
        dsmm_idx s = h[r].slot, n = 0;
        for (dsmm_idx f = off[s]; f < off[s + 1]; f++)
            if (alive[f]) x[n++] = val[f];
        if (n <= k) continue;
        double bar = select_bar(x, n, k);
        for (dsmm_idx f = off[s]; f < off[s + 1]; f++) {
            if (!alive[f] || (double)val[f] >= bar) continue;
            alive[f] = 0;
            pairs[2 * npairs] = hid[s];
            pairs[2 * npairs + 1] = col[f];
            npairs++;
            const int32_t *dp =
                col[f] != hid[s] ? bsearch(&col[f], hid, (size_t)H, sizeof *hid, cmp_i32) : NULL;
            if (dp != NULL) { // the other end is a hub: its arc back goes too
                dsmm_idx d = dp - hid;
                const int32_t *g = bsearch(&hid[s], col + off[d], (size_t)(off[d + 1] - off[d]),
                                           sizeof *col, cmp_i32);
                if (g != NULL) alive[g - col] = 0;
            }
        }
    }
out:
    dsmmi_free(ctx, h);
    dsmmi_free(ctx, hid);
    dsmmi_free(ctx, off);
    dsmmi_free(ctx, col);
    dsmmi_free(ctx, val);
    dsmmi_free(ctx, alive);
    dsmmi_free(ctx, x);
    return npairs;
}

// #ceilnb(k), as mcl's: the nodes of more than k neighbours ("hubs"), in order of degree
// (highest first), each keep their k highest remaining arcs; an arc a hub drops goes both ways.
// The order makes it sequential: the hubs' rows are gathered on rank 0, which runs mcl's
// greedy and sends each rank the arcs to drop from its rows (memory on rank 0: the hubs' rows).
// Collective; fails together.
static dsmm_status graph_ceilnb(dsmm_ctx *ctx, dsmm_idx N, dsmm_idx row0, dsmmi_mcl_mat *M,
                                dsmm_idx k)
{
    dsmm_status st = DSMM_OK, local = DSMM_OK;
    int P = dsmm_ctx_size(ctx), me = dsmm_ctx_rank(ctx);
    size_t *sc = NULL, *sd = NULL, *rc = NULL, *fill = NULL, bytes = 0;
    char *sbuf = NULL, *rbuf = NULL;
    int32_t *pairs = NULL, *send = NULL;
    uint64_t *drop = NULL;
    dsmm_idx npairs = 0;

    sc = dsmmi_calloc(ctx, (size_t)P, sizeof *sc);
    sd = dsmmi_calloc(ctx, (size_t)P, sizeof *sd);
    rc = dsmmi_calloc(ctx, (size_t)P, sizeof *rc);
    fill = dsmmi_calloc(ctx, (size_t)P, sizeof *fill);
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx len = M->rowptr[i + 1] - M->rowptr[i];
        if (len > k) bytes += 16 + (size_t)len * 8;
    }
    sbuf = dsmmi_malloc(ctx, bytes + 1, 1);
    if (!sc || !sd || !rc || !fill || !sbuf)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: #ceilnb");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    size_t o = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        int64_t id = row0 + i, len = M->rowptr[i + 1] - M->rowptr[i];
        if (len <= k) continue;
        memcpy(sbuf + o, &id, 8);
        memcpy(sbuf + o + 8, &len, 8);
        memcpy(sbuf + o + 16, M->col + M->rowptr[i], (size_t)len * 4);
        memcpy(sbuf + o + 16 + (size_t)len * 4, M->val + M->rowptr[i], (size_t)len * 4);
        o += 16 + (size_t)len * 8;
    }
    sc[0] = bytes;
    DSMM_TRY(dsmmi_exchange(ctx, sbuf, sc, sd, &rbuf, rc));
    sbuf = dsmmi_free(ctx, sbuf);

    // Rank 0: the greedy, then each dropped arc (a, b) to the owners of rows a and b.
    size_t total = 0;
    for (int p = 0; p < P; p++) total += rc[p];
    if (me == 0) {
        pairs = dsmmi_malloc(ctx, total / 4 + 2, sizeof *pairs); // >= 2 per hub entry
        npairs = pairs ? ceilnb_greedy(ctx, rbuf, total, k, pairs) : -1;
        if (npairs < 0)
            local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__,
                                "mcl: #ceilnb on %zu bytes of rows", total);
    }
    rbuf = dsmmi_free(ctx, rbuf);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    memset(sc, 0, (size_t)P * sizeof *sc);
    for (dsmm_idx r = 0; r < npairs; r++) {
        sc[dsmmi_block_of(N, P, pairs[2 * r])] += 8;
        if (pairs[2 * r] != pairs[2 * r + 1]) sc[dsmmi_block_of(N, P, pairs[2 * r + 1])] += 8;
    }
    size_t sum = 0;
    for (int p = 0; p < P; p++) {
        sd[p] = sum;
        sum += sc[p];
    }
    send = dsmmi_malloc(ctx, sum / 4 + 1, sizeof *send);
    if (send == NULL)
        local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: #ceilnb: %lld arcs",
                            (long long)npairs);
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (int p = 0; p < P; p++) fill[p] = sd[p] / 4;
    for (dsmm_idx r = 0; r < npairs; r++) {
        int32_t a = pairs[2 * r], b = pairs[2 * r + 1];
        int pa = dsmmi_block_of(N, P, a), pb = dsmmi_block_of(N, P, b);
        send[fill[pa]++] = a;
        send[fill[pa]++] = b;
        if (a != b) {
            send[fill[pb]++] = b;
            send[fill[pb]++] = a;
        }
    }
    pairs = dsmmi_free(ctx, pairs);
    DSMM_TRY(dsmmi_exchange(ctx, (const char *)send, sc, sd, &rbuf, rc));
    send = dsmmi_free(ctx, send);

    // Each rank: drop the arcs it was sent (row, column) from its rows.
    total = 0;
    for (int p = 0; p < P; p++) total += rc[p];
    dsmm_idx nd = (dsmm_idx)(total / 8);
    drop = dsmmi_malloc(ctx, (size_t)nd + 1, sizeof *drop);
    if (drop == NULL) local = dsmmi_error(ctx, DSMM_ERR_NOMEM, __FILE__, __LINE__, "mcl: #ceilnb");
    DSMM_TRY(dsmmi_comm_agree(ctx, local));
    for (dsmm_idx r = 0; r < nd; r++) {
        int32_t a, b;
        memcpy(&a, rbuf + 8 * r, 4);
        memcpy(&b, rbuf + 8 * r + 4, 4);
        drop[r] = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    }
    qsort(drop, (size_t)nd, sizeof *drop, cmp_u64);
    dsmm_idx q = 0, a = 0, r = 0;
    for (dsmm_idx i = 0; i < M->nrows; i++) {
        dsmm_idx b = M->rowptr[i + 1];
        uint64_t id = (uint64_t)(row0 + i);
        for (dsmm_idx e = a; e < b; e++) {
            uint64_t key = id << 32 | (uint32_t)M->col[e];
            while (r < nd && drop[r] < key) r++;
            if (r < nd && drop[r] == key) continue;
            M->col[q] = M->col[e];
            M->val[q++] = M->val[e];
        }
        a = b;
        M->rowptr[i + 1] = q;
    }
    M->nnz = q;
cleanup:
    dsmmi_free(ctx, sc);
    dsmmi_free(ctx, sd);
    dsmmi_free(ctx, rc);
    dsmmi_free(ctx, fill);
    dsmmi_free(ctx, sbuf);
    dsmmi_free(ctx, rbuf);
    dsmmi_free(ctx, pairs);
    dsmmi_free(ctx, send);
    dsmmi_free(ctx, drop);
    return st;
}

dsmm_status dsmmi_mcl_tf_run(dsmm_ctx *ctx, const dsmm_mcl_tf *tf, dsmm_idx N, dsmm_idx row0,
                             dsmmi_mcl_mat *M)
{
    dsmm_status st = DSMM_OK, bad = DSMM_OK;
    int from = 0;
    for (int i = 0; i <= tf->n; i++) {
        if (i < tf->n && !is_graph_op(tf->step[i].op)) continue;
        if (i > from) apply_values(tf, from, i, M);
        from = i + 1;
        if (i == tf->n) break;
        dsmm_idx k = step_count(tf->step[i].a);
        tf_op op = tf->step[i].op;
        if (op >= TF_G_MAX)
            DSMM_TRY(mutual(ctx, N, row0, M, JOIN_EITHER_MAX + (int)(op - TF_G_MAX),
                            "the -tf transpose join"));
        else if (op == TF_G_CEILNB)
            DSMM_TRY(graph_ceilnb(ctx, N, row0, M, k));
        else if (tf->step[i].a != 0.0) // mcl: #knn(0) leaves the graph as it is
            DSMM_TRY(graph_knn(ctx, N, row0, M, k, tf->step[i].op == TF_G_KNNJ));
    }
    for (dsmm_idx i = 0; i < M->nrows && bad == DSMM_OK; i++)
        for (dsmm_idx e = M->rowptr[i]; e < M->rowptr[i + 1]; e++) {
            double w = (double)M->val[e];
            if (!isfinite(w) || w < 0.0) {
                bad = dsmmi_error(ctx, DSMM_ERR_ARG, __FILE__, __LINE__,
                                  "mcl: edge %lld -> %lld has weight %g after -tf '%s' "
                                  "(weights must be finite and >= 0; gt(0) drops the others)",
                                  (long long)M->col[e] + 1, (long long)(row0 + i) + 1, w,
                                  dsmm_mcl_tf_spec(tf));
                break;
            }
        }
    DSMM_TRY(dsmmi_comm_agree(ctx, bad));
cleanup:
    return st;
}
