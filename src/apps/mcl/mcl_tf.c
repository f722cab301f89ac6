// src/apps/mcl/mcl_tf.c: mcl's value transforms (-tf, -abc-tf, --abc-neg-log[10]): a list of
// steps name(value) parsed once and applied to each weight in double. The edge cases follow
// mcl 22-282 as measured (docs/mcl.md, "Transforms"): the log of 0 is -FLT_MAX, and the
// stream's negated log of 0 is FLT_MAX / ln(base).
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
    TF_ABS
} tf_op;

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
    if (*s == '#') {
        while (*s && *s != ',' && *s != '(') s++;
        DSMM_FAIL(ctx, DSMM_ERR_UNSUPPORTED,
                  "mcl transform: '%.*s': mcl's graph-wide transforms are not supported by dsmm "
                  "(value transforms: gt gq lt lq ceil floor add mul pow log neglog exp abs)",
                  (int)(s - name), name);
    }
    while (isalpha((unsigned char)*s)) s++;
    int nlen = (int)(s - name), k = -1;
    for (int i = 0; i < (int)(sizeof known / sizeof known[0]); i++)
        if ((int)strlen(known[i].name) == nlen && strncmp(known[i].name, name, (size_t)nlen) == 0)
            k = i;
    if (k < 0 && ((nlen == 4 && strncmp(name, "acos", 4) == 0) ||
                  (nlen == 4 && strncmp(name, "rand", 4) == 0)))
        DSMM_FAIL(ctx, DSMM_ERR_UNSUPPORTED, "mcl transform: '%.*s' is not supported by dsmm", nlen,
                  name);
    DSMM_CHECK(ctx, nlen > 0, DSMM_ERR_ARG, "mcl transform: a step name expected at '%s'", s);
    DSMM_CHECK(ctx, k >= 0, DSMM_ERR_ARG,
               "mcl transform: unknown step '%.*s' (gt gq lt lq ceil floor add mul pow log neglog "
               "exp abs)",
               nlen, name);
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
    DSMM_CHECK(ctx, has || known[k].need != 1, DSMM_ERR_ARG, "mcl transform: '%.*s' needs a value",
               nlen, name);
    DSMM_CHECK(ctx, !has || known[k].need != -1, DSMM_ERR_ARG,
               "mcl transform: '%.*s' takes no value", nlen, name);
    tf_step t = {known[k].op, a};
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
    // the name (known, <= 6), 2 parentheses, a comma and a %.17g value (<= 24).
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

double dsmm_mcl_tf_apply(const void *arg, double w)
{
    const dsmm_mcl_tf *tf = arg;
    if (tf == NULL) return w;
    for (int i = 0; i < tf->n; i++) {
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
        }
    }
    return w;
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
