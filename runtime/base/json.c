/* The JSON reader: recursive descent over RFC 8259, building a tree. */
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting is refused rather than risking the stack. */
#define JSON_MAX_DEPTH 64

typedef struct json_reader {
    const char *p, *end;
    const char *line_start;
    int line;
    int col_base; /* columns before `text` on its first line (base_json_parse_at) */
    const char *filename;
    byocl_error *err;
} json_reader;

static int column(const json_reader *r)
{
    return r->col_base + (int)(r->p - r->line_start) + 1;
}

static byocl_status fail(json_reader *r, const char *what)
{
    return byocl_error_set(r->err, BYOCL_ERR_PARSE, "%s:%d:%d: error: %s", r->filename, r->line,
                           column(r), what);
}

static void skip_space(json_reader *r)
{
    while (r->p < r->end) {
        char c = *r->p;
        if (c == '\n') {
            r->line++;
            r->line_start = r->p + 1;
            r->col_base = 0;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        r->p++;
    }
}

static bool take(json_reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return false;
    r->p += n;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(json_reader *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(r->p[i]);
        if (d < 0)
            return false;
        v = v * 16 + (unsigned)d;
    }
    r->p += 4;
    *out = v;
    return true;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At the opening quote. The decoded string is never longer than its spelling. */
static byocl_status read_string(json_reader *r, char **out)
{
    const char *start = ++r->p;
    const char *q = start;
    while (q < r->end && *q != '"') {
        if (*q == '\\' && q + 1 < r->end)
            q++;
        q++;
    }
    char *s = malloc((size_t)(q - start) + 1);
    if (!s)
        return byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->filename);
    size_t n = 0;
    while (true) {
        if (r->p >= r->end) {
            free(s);
            return fail(r, "unterminated string");
        }
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20) {
            free(s);
            return fail(r, "control character in a string (write it as an escape)");
        }
        if (c != '\\') {
            s[n++] = (char)c;
            r->p++;
            continue;
        }
        const char *escape = r->p; /* errors point at the backslash */
        r->p++;
        char e = r->p < r->end ? *r->p++ : '\0';
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            s[n++] = decoded[simple - "\"\\/bfnrt"];
            continue;
        }
        unsigned cp;
        const char *problem = NULL;
        if (e != 'u' || !read_hex4(r, &cp)) {
            problem = "bad escape in a string";
        } else if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
            unsigned low;
            if (!take(r, "\\u") || !read_hex4(r, &low) || low < 0xDC00 || low > 0xDFFF)
                problem = "unpaired surrogate in a string";
            else
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            problem = "unpaired surrogate in a string";
        } else if (cp == 0) {
            problem = "\\u0000 in a string";
        }
        if (problem) {
            free(s);
            r->p = escape;
            return fail(r, problem);
        }
        n += put_utf8(s + n, cp);
    }
    s[n] = '\0';
    *out = s;
    return BYOCL_OK;
}

static byocl_status read_number(json_reader *r, byocl_json *v)
{
    const char *start = r->p;
    const char *q = r->p;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || *q < '0' || *q > '9')
        return fail(r, "expected a value");
    if (*q == '0')
        q++;
    else
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    bool integral = true;
    if (q < r->end && *q == '.') {
        integral = false;
        q++;
        if (q >= r->end || *q < '0' || *q > '9') {
            r->p = q;
            return fail(r, "expected a digit after '.'");
        }
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        integral = false;
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || *q < '0' || *q > '9') {
            r->p = q;
            return fail(r, "expected a digit in the exponent");
        }
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    char buf[64];
    if ((size_t)(q - start) >= sizeof buf)
        return fail(r, "number too long");
    memcpy(buf, start, (size_t)(q - start));
    buf[q - start] = '\0';
    v->kind = BYOCL_JSON_NUMBER;
    v->number = strtod(buf, NULL);
    if (integral) {
        errno = 0;
        long long i = strtoll(buf, NULL, 10);
        v->is_int = errno == 0; /* else beyond int64: a double only */
        v->integer = i;
    }
    r->p = q;
    return BYOCL_OK;
}

static byocl_status read_value(json_reader *r, byocl_json *v, int depth);

/* Grows items (and keys) to hold one more. */
static byocl_status push_item(json_reader *r, byocl_json *v, int *cap)
{
    if (v->n < *cap)
        return BYOCL_OK;
    int grown_cap = *cap ? 2 * *cap : 4;
    byocl_json *items = realloc(v->items, (size_t)grown_cap * sizeof *items);
    if (items)
        v->items = items;
    if (items && v->kind == BYOCL_JSON_OBJECT) {
        char **keys = realloc(v->keys, (size_t)grown_cap * sizeof *keys);
        if (!keys)
            items = NULL;
        else
            v->keys = keys;
    }
    if (!items)
        return byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->filename);
    *cap = grown_cap;
    return BYOCL_OK;
}

static byocl_status read_container(json_reader *r, byocl_json *v, int depth)
{
    bool object = *r->p == '{';
    char close = object ? '}' : ']';
    v->kind = object ? BYOCL_JSON_OBJECT : BYOCL_JSON_ARRAY;
    if (depth >= JSON_MAX_DEPTH)
        return fail(r, "nested too deeply");
    r->p++;
    skip_space(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return BYOCL_OK;
    }
    int cap = 0;
    while (true) {
        byocl_status st = push_item(r, v, &cap);
        if (st != BYOCL_OK)
            return st;
        byocl_json *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        if (object) {
            skip_space(r);
            if (r->p >= r->end || *r->p != '"')
                return fail(r, "expected a key (a string)");
            char *key;
            if ((st = read_string(r, &key)) != BYOCL_OK)
                return st;
            v->keys[v->n] = key;
            v->n++; /* counted now so that the key is freed on failure */
            skip_space(r);
            if (r->p >= r->end || *r->p != ':')
                return fail(r, "expected ':'");
            r->p++;
            st = read_value(r, item, depth + 1);
        } else {
            v->n++;
            st = read_value(r, item, depth + 1);
        }
        if (st != BYOCL_OK)
            return st;
        skip_space(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return BYOCL_OK;
        }
        return fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static byocl_status read_value(json_reader *r, byocl_json *v, int depth)
{
    skip_space(r);
    v->line = r->line;
    v->col = column(r);
    if (r->p >= r->end)
        return fail(r, "expected a value");
    switch (*r->p) {
    case '{':
    case '[':
        return read_container(r, v, depth);
    case '"':
        v->kind = BYOCL_JSON_STRING;
        return read_string(r, &v->string);
    default:
        break;
    }
    if (take(r, "true") || take(r, "false")) {
        v->kind = BYOCL_JSON_BOOL;
        v->boolean = r->p[-1] == 'e' && r->p[-2] == 'u'; /* "true", not "false" */
        return BYOCL_OK;
    }
    if (take(r, "null")) {
        v->kind = BYOCL_JSON_NULL;
        return BYOCL_OK;
    }
    return read_number(r, v);
}

static void free_children(byocl_json *v)
{
    for (int i = 0; i < v->n; i++) {
        free_children(&v->items[i]);
        if (v->kind == BYOCL_JSON_OBJECT)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void base_json_free(byocl_json *v)
{
    if (!v)
        return;
    free_children(v);
    free(v);
}

byocl_status base_json_parse(const char *text, size_t len, const char *filename,
                             byocl_json **out, byocl_error *err)
{
    return base_json_parse_at(text, len, filename, 1, 1, out, err);
}

byocl_status base_json_parse_at(const char *text, size_t len, const char *filename, int line,
                                int col, byocl_json **out, byocl_error *err)
{
    *out = NULL;
    byocl_json *v = calloc(1, sizeof *v);
    if (!v)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading %s", filename);
    json_reader r = {text, text + len, text, line, col - 1, filename, err};
    byocl_status st = read_value(&r, v, 0);
    if (st == BYOCL_OK) {
        skip_space(&r);
        if (r.p < r.end)
            st = fail(&r, "unexpected text after the value");
    }
    if (st != BYOCL_OK) {
        base_json_free(v);
        return st;
    }
    *out = v;
    return BYOCL_OK;
}

const byocl_json *base_json_get(const byocl_json *obj, const char *key)
{
    if (!obj || obj->kind != BYOCL_JSON_OBJECT)
        return NULL;
    for (int i = obj->n - 1; i >= 0; i--)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

const char *base_json_kind_name(byocl_json_kind kind)
{
    switch (kind) {
    case BYOCL_JSON_NULL: return "null";
    case BYOCL_JSON_BOOL: return "true/false";
    case BYOCL_JSON_NUMBER: return "number";
    case BYOCL_JSON_STRING: return "string";
    case BYOCL_JSON_ARRAY: return "array";
    case BYOCL_JSON_OBJECT: return "object";
    }
    return "?";
}

void base_json_write_string(byocl_textbuf *b, const char *s)
{
    base_textbuf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            base_textbuf_printf(b, "\\%c", c);
        else if (c == '\n')
            base_textbuf_puts(b, "\\n");
        else if (c == '\t')
            base_textbuf_puts(b, "\\t");
        else if (c < 0x20)
            base_textbuf_printf(b, "\\u%04x", c);
        else
            base_textbuf_putc(b, c);
    }
    base_textbuf_putc(b, '"');
}
