// tests/fuzz/fuzz_json.c: libFuzzer target for the statistics reader behind `dsmm report`
// (src/cli/json_read.c). Every value of the text is parsed in turn: a parse either gives a tree
// whose strings are NUL-terminated at their length and whose nesting stays within
// CLI_JSON_MAX_DEPTH, or fails with a message and a position inside the text; either way the
// position moves forward, so a sequence of values always ends.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/json_read.h"
#include "fuzz.h"

static void walk(const cli_json *v, int depth)
{
    if (depth > CLI_JSON_MAX_DEPTH + 1) __builtin_trap();
    if (v->kind == CLI_JSON_STRING && (v->str == NULL || v->str[v->len] != '\0')) __builtin_trap();
    if (v->kind == CLI_JSON_NUMBER && v->is_int && (double)v->i != v->num) __builtin_trap();
    if ((v->kind == CLI_JSON_ARRAY || v->kind == CLI_JSON_OBJECT) && v->n > 0 && v->items == NULL)
        __builtin_trap();
    for (size_t i = 0; i < v->n; i++) {
        const cli_json *c = &v->items[i];
        if ((v->kind == CLI_JSON_OBJECT) != (c->key != NULL)) __builtin_trap();
        if (v->kind == CLI_JSON_OBJECT && cli_json_get(v, c->key) == NULL) __builtin_trap();
        walk(c, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t pos = 0;
    while (!cli_json_at_end(text, size, &pos)) {
        size_t before = pos;
        cli_json *v = NULL;
        cli_json_error err;
        memset(&err, 0, sizeof err);
        if (cli_json_parse(text, size, &pos, &v, &err) != 0) {
            if (v != NULL || err.msg[0] == '\0' || err.byte > size || err.line == 0)
                __builtin_trap();
            break;
        }
        if (v == NULL || pos <= before || pos > size) __builtin_trap();
        walk(v, 0);
        cli_json_free(v);
    }
    return 0;
}
