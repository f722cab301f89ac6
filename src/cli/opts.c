// src/cli/opts.c: the options-table parser shared by every subcommand (long `--name value`,
// `--name=value`, short `-x value`, flags; typed values validated into usage errors) and the
// --help text generated from the same table. In the manner of mcl's mcxOptAnchor tables.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dsmm %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nsee 'dsmm %s --help'\n", cmd->name);
    return CLI_USAGE;
}

int cli_fail(const cli_cmd *cmd, const dsmm_ctx *ctx, const char *what)
{
    const char *msg = ctx ? dsmm_ctx_last_error(ctx) : "";
    if (msg == NULL || msg[0] == '\0') msg = what;
    fprintf(stderr, "dsmm %s: %s\n", cmd->name, msg ? msg : "failed");
    return CLI_FAIL;
}

// Index of value among the '|'-separated choices, or -1.
static int enum_index(const char *choices, const char *value)
{
    size_t vlen = strlen(value);
    int idx = 0;
    for (const char *p = choices;; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vlen && strncmp(p, value, len) == 0) return idx;
        if (bar == NULL) return -1;
        p = bar + 1;
    }
}

static int out_of_range(const cli_opt *o, double v)
{
    return o->min != o->max && (v < o->min || v > o->max);
}

// Stores value into o->target; a usage error names the option as the user wrote it.
static int set_value(const cli_cmd *cmd, const cli_opt *o, const char *as, const char *value)
{
    char *end = NULL;
    errno = 0;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->target = 1;
        return CLI_OK;
    case CLI_STRING:
        *(const char **)o->target = value;
        return CLI_OK;
    case CLI_INT:
    case CLI_IDX: {
        long long v = strtoll(value, &end, 10);
        if (end == value || *end != '\0' || errno == ERANGE)
            return cli_usage_error(cmd, "%s: '%s' is not an integer", as, value);
        if (out_of_range(o, (double)v) || (o->kind == CLI_INT && (v < INT32_MIN || v > INT32_MAX)))
            return cli_usage_error(cmd, "%s: %s is out of range %.0f..%.0f", as, value, o->min,
                                   o->max);
        if (o->kind == CLI_INT)
            *(int *)o->target = (int)v;
        else
            *(int64_t *)o->target = (int64_t)v;
        return CLI_OK;
    }
    case CLI_U64: {
        unsigned long long v = strtoull(value, &end, 10);
        if (end == value || *end != '\0' || errno == ERANGE || value[0] == '-')
            return cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", as, value);
        *(uint64_t *)o->target = (uint64_t)v;
        return CLI_OK;
    }
    case CLI_DOUBLE: {
        double v = strtod(value, &end);
        if (end == value || *end != '\0' || !isfinite(v))
            return cli_usage_error(cmd, "%s: '%s' is not a number", as, value);
        if (out_of_range(o, v))
            return cli_usage_error(cmd, "%s: %s is out of range %g..%g", as, value, o->min, o->max);
        *(double *)o->target = v;
        return CLI_OK;
    }
    case CLI_SIZE: {
        size_t v = 0;
        if (dsmm_parse_size(value, &v) != DSMM_OK)
            return cli_usage_error(cmd, "%s: '%s' is not a size (e.g. 512M, 4G)", as, value);
        *(size_t *)o->target = v;
        return CLI_OK;
    }
    case CLI_ENUM: {
        int idx = enum_index(o->placeholder, value);
        if (idx < 0)
            return cli_usage_error(cmd, "%s: '%s' is not one of %s", as, value, o->placeholder);
        *(int *)o->target = idx;
        return CLI_OK;
    }
    }
    return cli_usage_error(cmd, "%s: unknown option kind", as);
}

int cli_parse(const cli_cmd *cmd, const cli_opt *opts, int argc, char **argv, char **pos, int *npos,
              int maxpos)
{
    int only_pos = 0;
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        int is_long = !only_pos && strncmp(arg, "--", 2) == 0 && arg[2] != '\0';
        int is_short = !only_pos && !is_long && arg[0] == '-' && arg[1] != '\0';
        if (!only_pos && strcmp(arg, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (!is_long && !is_short) {
            if (*npos >= maxpos) return cli_usage_error(cmd, "unexpected argument '%s'", arg);
            pos[(*npos)++] = arg;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_help(cmd, opts, stdout);
            return CLI_HELP_RC;
        }
        const cli_opt *o = NULL;
        const char *inline_value = NULL;
        size_t namelen = 0;
        if (is_long) {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            namelen = eq ? (size_t)(eq - name) : strlen(name);
            if (eq) inline_value = eq + 1;
            for (const cli_opt *p = opts; p->name; p++)
                if (strlen(p->name) == namelen && strncmp(p->name, name, namelen) == 0) o = p;
            if (o == NULL)
                return cli_usage_error(cmd, "unknown option '%.*s'", (int)namelen + 2, arg);
        } else {
            if (arg[2] != '\0') inline_value = arg + 2; // -t4
            for (const cli_opt *p = opts; p->name; p++)
                if (p->short_name != 0 && p->short_name == arg[1]) o = p;
            if (o == NULL) return cli_usage_error(cmd, "unknown option '-%c'", arg[1]);
        }
        char as[80];
        snprintf(as, sizeof as, "--%s", o->name);
        if (o->kind == CLI_FLAG) {
            if (inline_value) return cli_usage_error(cmd, "%s takes no value", as);
            *(int *)o->target = 1;
            continue;
        }
        const char *value = inline_value;
        if (value == NULL) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "%s needs a value (%s)", as, o->placeholder);
            value = argv[++i];
        }
        int rc = set_value(cmd, o, as, value);
        if (rc != CLI_OK) return rc;
    }
    return CLI_OK;
}

void cli_help(const cli_cmd *cmd, const cli_opt *opts, FILE *f)
{
    fprintf(f, "usage: dsmm %s %s\n\n%s\n", cmd->name, cmd->args, cmd->summary);
    if (cmd->details) fprintf(f, "\n%s\n", cmd->details);
    fprintf(f, "\noptions:\n");
    for (const cli_opt *o = opts; o->name; o++) {
        char left[96];
        int n = 0;
        if (o->short_name)
            n = snprintf(left, sizeof left, "  -%c, --%s", o->short_name, o->name);
        else
            n = snprintf(left, sizeof left, "      --%s", o->name);
        if (o->placeholder && n > 0 && (size_t)n < sizeof left)
            snprintf(left + n, sizeof left - (size_t)n, " %s", o->placeholder);
        if (strlen(left) < 30)
            fprintf(f, "%-30s %s\n", left, o->help);
        else
            fprintf(f, "%s\n%-30s %s\n", left, "", o->help);
    }
    fprintf(f, "  -h, --help                   this help\n");
}
