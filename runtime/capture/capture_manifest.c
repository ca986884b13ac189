/* A capture folder's manifest.json: writing it and parsing it back (from memory, so that
 * a fuzzer can feed it anything). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "capture_impl.h"
#include "base/json.h"

/* ------------------------------------------------------------------ writing */

static void print_key_string(byocl_textbuf *f, const char *indent, const char *key,
                             const char *value, const char *end)
{
    base_textbuf_printf(f, "%s\"%s\": ", indent, key);
    if (value)
        base_json_write_string(f, value);
    else
        base_textbuf_puts(f, "null");
    base_textbuf_puts(f, end);
}

static void print_tensor(byocl_textbuf *f, const byocl_capture_tensor *t, bool last)
{
    base_textbuf_puts(f, "    {");
    print_key_string(f, "", "name", t->name, ", ");
    print_key_string(f, "", "file", t->file, ", ");
    print_key_string(f, "", "dtype", byocl_dtype_name(t->dtype), ", ");
    base_textbuf_puts(f, "\"shape\": [");
    for (int d = 0; d < t->shape.rank; d++)
        base_textbuf_printf(f, "%s%lld", d ? ", " : "", (long long)t->shape.dims[d]);
    base_textbuf_puts(f, "], ");
    print_key_string(f, "", "node", t->node, ", ");
    print_key_string(f, "", "op", t->op, "");
    base_textbuf_printf(f, "}%s\n", last ? "" : ",");
}

void capture_manifest_print(const byocl_capture_manifest *m, byocl_textbuf *f)
{
    base_textbuf_printf(f, "{\n  \"format\": \"byocl-capture\",\n  \"version\": %d,\n",
                        m->version);
    print_key_string(f, "  ", "symbol", m->symbol, ",\n");
    print_key_string(f, "  ", "target", m->target, ",\n");
    print_key_string(f, "  ", "runner", m->runner, ",\n");
    print_key_string(f, "  ", "outputs_from", m->outputs_from, ",\n");
    print_key_string(f, "  ", "model", m->model, ",\n");
    print_key_string(f, "  ", "call_node", m->call_node, ",\n");
    print_key_string(f, "  ", "module", m->module, ",\n");
    print_key_string(f, "  ", "params", m->params, ",\n");
    base_textbuf_printf(f,
                        "  \"timing\": {\"calls\": %d, \"last_ms\": %.6f, \"min_ms\": %.6f, "
                        "\"median_ms\": %.6f},\n",
                        m->calls, m->last_ms, m->min_ms, m->median_ms);
    base_textbuf_puts(f, "  \"inputs\": [\n");
    for (int k = 0; k < m->n_inputs; k++)
        print_tensor(f, &m->inputs[k], k == m->n_inputs - 1);
    base_textbuf_puts(f, "  ],\n  \"outputs\": [\n");
    for (int i = 0; i < m->n_outputs; i++)
        print_tensor(f, &m->outputs[i], i == m->n_outputs - 1);
    base_textbuf_puts(f, "  ]\n}\n");
}

/* ------------------------------------------------------------------ reading */

typedef struct reader {
    const char *filename;
    byocl_error *err;
} reader;

/* "FILENAME:LINE:COL: error: MSG" at value `at`. */
static byocl_status bad(const reader *r, const byocl_json *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static byocl_status bad(const reader *r, const byocl_json *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return byocl_error_set(r->err, BYOCL_ERR_PARSE, "%s:%d:%d: error: %s", r->filename,
                           at->line, at->col, msg);
}

/* Member `key` of `obj` of kind `kind` (NULL allowed when `nullable`); *out NULL when
 * the value is null. */
static byocl_status member(const reader *r, const byocl_json *obj, const char *key,
                           byocl_json_kind kind, bool nullable, const byocl_json **out)
{
    const byocl_json *v = base_json_get(obj, key);
    *out = NULL;
    if (!v)
        return bad(r, obj, "missing \"%s\"", key);
    if (nullable && v->kind == BYOCL_JSON_NULL)
        return BYOCL_OK;
    if (v->kind != kind)
        return bad(r, v, "\"%s\" must be %s %s%s, not %s", key,
                   kind == BYOCL_JSON_ARRAY || kind == BYOCL_JSON_OBJECT ? "an" : "a",
                   base_json_kind_name(kind), nullable ? " or null" : "",
                   base_json_kind_name(v->kind));
    *out = v;
    return BYOCL_OK;
}

static byocl_status string_member(const reader *r, const byocl_json *obj, const char *key,
                                  bool nullable, char **out)
{
    const byocl_json *v;
    byocl_status st = member(r, obj, key, BYOCL_JSON_STRING, nullable, &v);
    if (st != BYOCL_OK || !v)
        return st;
    if (!(*out = strdup(v->string)))
        return byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory");
    return BYOCL_OK;
}

/* A file name of the folder: no '/', not "" and not starting with '.'. */
static byocl_status file_member(const reader *r, const byocl_json *obj, const char *key,
                                bool nullable, char **out)
{
    byocl_status st = string_member(r, obj, key, nullable, out);
    if (st != BYOCL_OK || !*out)
        return st;
    if (!**out || **out == '.' || strchr(*out, '/'))
        return bad(r, base_json_get(obj, key),
                   "\"%s\" must name a file in the capture folder, not '%s'", key, *out);
    return BYOCL_OK;
}

static byocl_status number_member(const reader *r, const byocl_json *obj, const char *key,
                                  double *out)
{
    const byocl_json *v;
    byocl_status st = member(r, obj, key, BYOCL_JSON_NUMBER, false, &v);
    if (st != BYOCL_OK)
        return st;
    if (!(v->number >= 0) || isinf(v->number))
        return bad(r, v, "\"%s\" must be a time >= 0", key);
    *out = v->number;
    return BYOCL_OK;
}

static byocl_status int_member(const reader *r, const byocl_json *obj, const char *key,
                               int64_t lo, int64_t hi, int64_t *out)
{
    const byocl_json *v;
    byocl_status st = member(r, obj, key, BYOCL_JSON_NUMBER, false, &v);
    if (st != BYOCL_OK)
        return st;
    if (!v->is_int || v->integer < lo || v->integer > hi)
        return bad(r, v, "\"%s\" must be an integer from %lld to %lld", key, (long long)lo,
                   (long long)hi);
    *out = v->integer;
    return BYOCL_OK;
}

static byocl_status read_tensor(const reader *r, const byocl_json *v, byocl_capture_tensor *t)
{
    if (v->kind != BYOCL_JSON_OBJECT)
        return bad(r, v, "a tensor must be an object, not %s", base_json_kind_name(v->kind));
    byocl_status st = string_member(r, v, "name", false, &t->name);
    if (st == BYOCL_OK)
        st = file_member(r, v, "file", false, &t->file);
    if (st == BYOCL_OK)
        st = string_member(r, v, "node", false, &t->node);
    if (st == BYOCL_OK)
        st = string_member(r, v, "op", false, &t->op);
    const byocl_json *dtype = NULL, *shape = NULL;
    if (st == BYOCL_OK)
        st = member(r, v, "dtype", BYOCL_JSON_STRING, false, &dtype);
    if (st == BYOCL_OK && !byocl_dtype_from_name(dtype->string, &t->dtype))
        st = bad(r, dtype, "unknown dtype '%s'", dtype->string);
    if (st == BYOCL_OK)
        st = member(r, v, "shape", BYOCL_JSON_ARRAY, false, &shape);
    if (st == BYOCL_OK && shape->n > BYOCL_MAX_RANK)
        st = bad(r, shape, "a shape has at most %d dimensions, not %d", BYOCL_MAX_RANK, shape->n);
    for (int d = 0; st == BYOCL_OK && d < shape->n; d++) {
        const byocl_json *dim = &shape->items[d];
        if (dim->kind != BYOCL_JSON_NUMBER || !dim->is_int || dim->integer < 0)
            st = bad(r, dim, "a dimension must be an integer >= 0");
        else
            t->shape.dims[d] = dim->integer;
    }
    if (st == BYOCL_OK) {
        t->shape.rank = shape->n;
        if (byocl_shape_numel(&t->shape) < 0)
            st = bad(r, shape, "the shape's element count overflows");
    }
    return st;
}

static byocl_status read_tensors(const reader *r, const byocl_json *root, const char *key,
                                 byocl_capture_tensor **out, int *n)
{
    const byocl_json *list;
    byocl_status st = member(r, root, key, BYOCL_JSON_ARRAY, false, &list);
    if (st != BYOCL_OK)
        return st;
    if (!(*out = calloc((size_t)list->n + 1, sizeof **out)))
        return byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < list->n && st == BYOCL_OK; i++) {
        st = read_tensor(r, &list->items[i], &(*out)[i]);
        *n = i + 1; /* freed with what it holds */
    }
    for (int i = 0; i < *n && st == BYOCL_OK; i++)
        for (int j = 0; j < i && st == BYOCL_OK; j++)
            if (strcmp((*out)[i].name, (*out)[j].name) == 0 ||
                strcmp((*out)[i].file, (*out)[j].file) == 0)
                st = bad(r, &list->items[i], "%s %d repeats the name or file of %s %d", key, i,
                         key, j);
    return st;
}

static void free_tensor_list(byocl_capture_tensor *ts, int n)
{
    for (int i = 0; ts && i < n; i++) {
        free(ts[i].name);
        free(ts[i].file);
        free(ts[i].node);
        free(ts[i].op);
    }
    free(ts);
}

void byocl_capture_manifest_free(byocl_capture_manifest *m)
{
    if (!m)
        return;
    free(m->symbol);
    free(m->target);
    free(m->runner);
    free(m->outputs_from);
    free(m->model);
    free(m->call_node);
    free(m->module);
    free(m->params);
    free_tensor_list(m->inputs, m->n_inputs);
    free_tensor_list(m->outputs, m->n_outputs);
    free(m);
}

static byocl_status read_manifest(const reader *r, const byocl_json *root,
                                  byocl_capture_manifest *m)
{
    if (root->kind != BYOCL_JSON_OBJECT)
        return bad(r, root, "a capture manifest is an object, not %s",
                   base_json_kind_name(root->kind));
    const byocl_json *format, *timing;
    byocl_status st = member(r, root, "format", BYOCL_JSON_STRING, false, &format);
    if (st == BYOCL_OK && strcmp(format->string, "byocl-capture") != 0)
        st = bad(r, format, "\"format\" must be \"byocl-capture\", not \"%s\"", format->string);
    int64_t version = 0, calls = 0;
    if (st == BYOCL_OK)
        st = int_member(r, root, "version", 1, 1, &version);
    m->version = (int)version;
    struct {
        const char *key;
        char **out;
        bool file, nullable;
    } strings[] = {
        {"symbol", &m->symbol, false, false},   {"target", &m->target, false, false},
        {"runner", &m->runner, false, false},   {"outputs_from", &m->outputs_from, false, false},
        {"model", &m->model, false, false},     {"call_node", &m->call_node, false, false},
        {"module", &m->module, true, false},    {"params", &m->params, true, true},
    };
    for (size_t i = 0; st == BYOCL_OK && i < sizeof strings / sizeof strings[0]; i++)
        st = strings[i].file ? file_member(r, root, strings[i].key, strings[i].nullable,
                                           strings[i].out)
                             : string_member(r, root, strings[i].key, false, strings[i].out);
    if (st == BYOCL_OK)
        st = member(r, root, "timing", BYOCL_JSON_OBJECT, false, &timing);
    if (st == BYOCL_OK)
        st = int_member(r, timing, "calls", 1, INT32_MAX, &calls);
    m->calls = (int)calls;
    if (st == BYOCL_OK)
        st = number_member(r, timing, "last_ms", &m->last_ms);
    if (st == BYOCL_OK)
        st = number_member(r, timing, "min_ms", &m->min_ms);
    if (st == BYOCL_OK)
        st = number_member(r, timing, "median_ms", &m->median_ms);
    if (st == BYOCL_OK)
        st = read_tensors(r, root, "inputs", &m->inputs, &m->n_inputs);
    if (st == BYOCL_OK)
        st = read_tensors(r, root, "outputs", &m->outputs, &m->n_outputs);
    if (st == BYOCL_OK && m->n_outputs == 0)
        st = bad(r, base_json_get(root, "outputs"), "a region has at least one output");
    return st;
}

byocl_status byocl_capture_manifest_parse(const char *text, size_t len, const char *filename,
                                          byocl_capture_manifest **out, byocl_error *err)
{
    *out = NULL;
    reader r = {filename ? filename : "manifest.json", err};
    byocl_json *root;
    byocl_status st = base_json_parse(text, len, r.filename, &root, err);
    if (st != BYOCL_OK)
        return st;
    byocl_capture_manifest *m = calloc(1, sizeof *m);
    st = m ? read_manifest(&r, root, m) : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    base_json_free(root);
    if (st != BYOCL_OK) {
        byocl_capture_manifest_free(m);
        return st;
    }
    *out = m;
    return BYOCL_OK;
}
