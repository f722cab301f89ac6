// src/cli/json_read.h: a small JSON reader for the command-line tool (statistics files read by
// `dsmm report`): text -> tree of values, lookups by key, and an error that says where the text
// went wrong (line, column, byte).
#ifndef DSMM_CLI_JSON_READ_H
#define DSMM_CLI_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#define CLI_JSON_MAX_DEPTH 64                  // nesting of arrays and objects
#define CLI_JSON_MAX_BYTES ((size_t)256 << 20) // text size accepted by cli_json_parse

typedef enum cli_json_kind {
    CLI_JSON_NULL,
    CLI_JSON_BOOL,
    CLI_JSON_NUMBER,
    CLI_JSON_STRING,
    CLI_JSON_ARRAY,
    CLI_JSON_OBJECT
} cli_json_kind;

/* A value. Invariants: items[0..n) are the elements of an array or the members of an object (in
 * the order written; key non-NULL exactly for members of objects); str is NUL-terminated and
 * len bytes long (a \u0000 escape makes len larger than strlen). Numbers are doubles; is_int
 * says the text was an integer literal that fits int64, held exactly in i. */
typedef struct cli_json {
    cli_json_kind kind;
    char *key;
    int boolean;
    int is_int;
    int64_t i;
    double num;
    char *str;
    size_t len;
    struct cli_json *items;
    size_t n;
} cli_json;

/* Where and why parsing failed: line and column are 1-based, byte is the 0-based offset. */
typedef struct cli_json_error {
    size_t line, col, byte;
    char msg[128];
} cli_json_error;

/* cli_json_parse: the value starting at text[*pos] (after white space) of text[0..len); *pos
 * moves past it. Returns 0 and *out (free with cli_json_free), or -1 with err filled and *out
 * NULL (syntax error, nesting deeper than CLI_JSON_MAX_DEPTH, text longer than
 * CLI_JSON_MAX_BYTES, out of memory). Several values one after another: call again. */
int cli_json_parse(const char *text, size_t len, size_t *pos, cli_json **out, cli_json_error *err);

/* cli_json_at_end: skips white space from *pos; true when only white space was left. */
int cli_json_at_end(const char *text, size_t len, size_t *pos);

/* cli_json_where: the 1-based line and column of byte offset `byte` of text. */
void cli_json_where(const char *text, size_t byte, size_t *line, size_t *col);

/* cli_json_get: the member `key` of object v (the last one when repeated); NULL when v is not an
 * object or has no such member. */
const cli_json *cli_json_get(const cli_json *v, const char *key);

/* cli_json_kind_name: "null", "boolean", "number", "string", "array", "object". */
const char *cli_json_kind_name(cli_json_kind k);

/* cli_json_free: frees v and everything under it (NULL is fine). */
void cli_json_free(cli_json *v);

#endif // DSMM_CLI_JSON_READ_H
