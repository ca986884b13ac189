/* A small JSON reader (a tree of values, with the line and column of each) and the string
 * escaping a writer needs. Enough for byocl's own files (the stage manifest) and TVM's
 * #[metadata] section; numbers are kept as doubles and, when integral, as int64. */
#ifndef BYOCL_JSON_H
#define BYOCL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "byocl/error.h"
#include "textbuf.h"

typedef enum byocl_json_kind {
    BYOCL_JSON_NULL,
    BYOCL_JSON_BOOL,
    BYOCL_JSON_NUMBER,
    BYOCL_JSON_STRING,
    BYOCL_JSON_ARRAY,
    BYOCL_JSON_OBJECT
} byocl_json_kind;

typedef struct byocl_json {
    byocl_json_kind kind;
    int line, col;
    bool boolean;
    double number;
    bool is_int; /* NUMBER: integral and within int64 */
    int64_t integer;
    char *string;               /* STRING (NUL-terminated; an embedded \u0000 is refused) */
    int n;                      /* ARRAY, OBJECT: number of items */
    struct byocl_json *items;   /* ARRAY items, OBJECT values */
    char **keys;                /* OBJECT keys, in file order */
} byocl_json;

/* Parses a whole JSON text. Errors read "FILENAME:LINE:COL: error: what was expected", as
 * the Relay text parser writes them. */
byocl_status base_json_parse(const char *text, size_t len, const char *filename,
                             byocl_json **out, byocl_error *err);
/* The same for a JSON text that starts at `line`:`col` (1-based) of a larger file, such as
 * the #[metadata] section after Relay text: positions in errors and in the tree count
 * from there. */
byocl_status base_json_parse_at(const char *text, size_t len, const char *filename, int line,
                                int col, byocl_json **out, byocl_error *err);
void base_json_free(byocl_json *v); /* NULL is fine */

/* The value of `key` in an object (the last one when repeated), or NULL. */
const byocl_json *base_json_get(const byocl_json *obj, const char *key);
/* "object", "array", "string", "number", "true/false", "null": for errors. */
const char *base_json_kind_name(byocl_json_kind kind);

/* Appends `s` as a JSON string literal, quotes included. */
void base_json_write_string(byocl_textbuf *b, const char *s);

#endif
