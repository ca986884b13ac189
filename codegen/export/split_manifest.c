/* The stage directory: byocl_stages_write and byocl_stages_read.
 *
 * DIR/stage_<k>.relay holds stage k (typed Relay text), DIR/stage_<k>.npz its tensor
 * constants when it has any, and DIR/manifest.json the wiring:
 *
 *   {
 *     "format": "byocl-stages",
 *     "version": 1,
 *     "inputs": [{"name": "data", "type": "Tensor[(1, 3, 224, 224), float32]"}],
 *     "stages": [
 *       {
 *         "file": "stage_0.relay", "params": "stage_0.npz" (or null),
 *         "first": "%0", "last": "%29", "nodes": 39, "flops": 1234,
 *         "cost": 12.5 (only when byocl_split_weighted placed the cuts),
 *         "inputs": [{"name": "data", "input": 0}, {"name": "s0_22", "stage": 0, "output": 1}],
 *         "outputs": [{"node": "%29", "op": "nn.relu", "type": "Tensor[...]"}]
 *       }, ...
 *     ]
 *   }
 *
 * (the writer puts each input and output on a line of its own). The reader accepts what
 * the writer writes and checks it against the stage files, so that a hand-edited or
 * mismatched directory is refused with the file and the entry named. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byocl/frontend.h"
#include "byocl/passes.h"
#include "byocl/tensor_io.h"
#include "base/file_util.h"
#include "ir/ir_impl.h"
#include "base/json.h"
#include "passes/split_impl.h"
#include "base/textbuf.h"

#define MANIFEST_NAME "manifest.json"
#define MANIFEST_FORMAT "byocl-stages"
#define MANIFEST_VERSION 1
#define MAX_LEAVES 4096

/* ------------------------------------------------------------------ writing */

static void write_type(byocl_textbuf *f, const byocl_type *t)
{
    char buf[4096];
    base_json_write_string(f, byocl_type_str(t, buf, sizeof buf));
}

static void write_stage(byocl_textbuf *f, const split_stage *st, int k, bool has_params)
{
    base_textbuf_printf(f, "    {\n      \"file\": \"stage_%d.relay\",\n      \"params\": ", k);
    if (has_params)
        base_textbuf_printf(f, "\"stage_%d.npz\"", k);
    else
        base_textbuf_puts(f, "null");
    base_textbuf_puts(f, ",\n      \"first\": ");
    base_json_write_string(f, st->first);
    base_textbuf_puts(f, ",\n      \"last\": ");
    base_json_write_string(f, st->last);
    base_textbuf_printf(f, ",\n      \"nodes\": %d,\n      \"flops\": %lld,", st->n_nodes,
                        (long long)st->flops);
    if (st->cost >= 0)
        base_textbuf_printf(f, "\n      \"cost\": %.6g,", st->cost);
    base_textbuf_puts(f, "\n      \"inputs\": [");
    for (int i = 0; i < st->n_inputs; i++) {
        const byocl_stage_input *in = &st->inputs[i];
        base_textbuf_printf(f, "%s\n        {\"name\": ", i ? "," : "");
        base_json_write_string(f, in->name);
        if (in->stage < 0)
            base_textbuf_printf(f, ", \"input\": %d}", in->index);
        else
            base_textbuf_printf(f, ", \"stage\": %d, \"output\": %d}", in->stage, in->index);
    }
    base_textbuf_printf(f, "%s],\n      \"outputs\": [", st->n_inputs ? "\n      " : "");
    for (int i = 0; i < st->n_outputs; i++) {
        const byocl_stage_output *o = &st->outputs[i];
        base_textbuf_printf(f, "%s\n        {\"node\": ", i ? "," : "");
        base_json_write_string(f, o->node);
        base_textbuf_puts(f, ", \"op\": ");
        base_json_write_string(f, o->op);
        base_textbuf_puts(f, ", \"type\": ");
        write_type(f, o->type);
        base_textbuf_putc(f, '}');
    }
    base_textbuf_printf(f, "%s]\n    }", st->n_outputs ? "\n      " : "");
}

/* The manifest's text (malloc'ed) or NULL when out of memory. */
static char *manifest_text(const byocl_stages *s, const bool *has_params, size_t *len)
{
    byocl_textbuf text = {0}, *f = &text;
    base_textbuf_printf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"inputs\": [",
                        MANIFEST_FORMAT, MANIFEST_VERSION);
    int n_inputs = byocl_stages_num_inputs(s);
    for (int i = 0; i < n_inputs; i++) {
        base_textbuf_printf(f, "%s\n    {\"name\": ", i ? "," : "");
        base_json_write_string(f, byocl_stages_input_name(s, i));
        base_textbuf_puts(f, ", \"type\": ");
        write_type(f, byocl_stages_input_type(s, i));
        base_textbuf_putc(f, '}');
    }
    base_textbuf_printf(f, "%s],\n  \"stages\": [\n", n_inputs ? "\n  " : "");
    for (int k = 0; k < s->n_stages; k++) {
        write_stage(f, &s->stages[k], k, has_params[k]);
        base_textbuf_puts(f, k + 1 < s->n_stages ? ",\n" : "\n");
    }
    base_textbuf_puts(f, "  ]\n}\n");
    *len = text.len;
    return base_textbuf_take(&text);
}

/* DIR must not exist, or be an empty directory (which the rename then replaces). */
static byocl_status check_target(const char *dir, byocl_error *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return errno == ENOENT ? BYOCL_OK
                               : byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: %s", dir,
                                                 strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: a file of that name exists",
                               dir);
    DIR *d = opendir(dir);
    if (!d)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot write %s: %s", dir, strerror(errno));
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    if (!empty)
        return byocl_error_set(err, BYOCL_ERR_IO,
                               "%s exists and is not empty; remove it or choose another "
                               "directory",
                               dir);
    return BYOCL_OK;
}

/* Writes every file into `tmp`. */
static byocl_status write_files(const byocl_stages *s, const char *tmp, byocl_error *err)
{
    bool *has_params = calloc((size_t)s->n_stages, sizeof *has_params);
    if (!has_params)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < s->n_stages && st == BYOCL_OK; k++) {
        char name[64];
        snprintf(name, sizeof name, "stage_%d.relay", k);
        char *text_path = base_path_join(tmp, name);
        snprintf(name, sizeof name, "stage_%d.npz", k);
        char *params_path = base_path_join(tmp, name);
        if (!text_path || !params_path)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        else
            st = byocl_save_model(s->stages[k].mod, text_path, params_path, err);
        has_params[k] = st == BYOCL_OK && access(params_path, F_OK) == 0;
        free(text_path);
        free(params_path);
    }
    char *text = NULL, *path = NULL;
    size_t len = 0;
    if (st == BYOCL_OK && (!(text = manifest_text(s, has_params, &len)) ||
                           !(path = base_path_join(tmp, MANIFEST_NAME))))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK) {
        byocl_file_part part = {text, len};
        st = base_file_write_atomic(path, &part, 1, err);
    }
    free(text);
    free(path);
    free(has_params);
    return st;
}

/* `dir` without trailing slashes ("out/" is "out"), malloc'ed. */
static char *trim_dir(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    char *copy = malloc(n + 1);
    if (copy) {
        memcpy(copy, dir, n);
        copy[n] = '\0';
    }
    return copy;
}

/* Creates "<target>.tmp.<pid>[.<k>]" beside the target; returns it (malloc'ed) or NULL. */
static char *make_temp_dir(const char *target, byocl_error *err)
{
    size_t n = strlen(target) + 48;
    char *tmp = malloc(n);
    if (!tmp) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int k = 0; k < 100; k++) {
        if (k == 0)
            snprintf(tmp, n, "%s.tmp.%ld", target, (long)getpid());
        else
            snprintf(tmp, n, "%s.tmp.%ld.%d", target, (long)getpid(), k);
        if (mkdir(tmp, 0777) == 0)
            return tmp;
        if (errno != EEXIST)
            break;
    }
    byocl_error_set(err, BYOCL_ERR_IO, "cannot create a directory beside %s: %s", target,
                    strerror(errno));
    free(tmp);
    return NULL;
}

byocl_status byocl_stages_write(const byocl_stages *s, const char *dir, byocl_error *err)
{
    byocl_error local;
    if (!err)
        err = &local; /* read back below */
    if (!s || !dir || !*dir)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_stages_write: stages and a directory are required");
    char *target = trim_dir(dir);
    if (!target)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = check_target(target, err);
    char *tmp = st == BYOCL_OK ? make_temp_dir(target, err) : NULL;
    if (st == BYOCL_OK && !tmp)
        st = err->status;
    if (tmp) {
        st = write_files(s, tmp, err);
        /* An empty directory at the target is replaced by the rename. */
        if (st == BYOCL_OK && rename(tmp, target) != 0)
            st = byocl_error_set(err, BYOCL_ERR_IO, "cannot create %s: %s", target,
                                 errno == ENOTEMPTY || errno == EEXIST
                                     ? "it was created meanwhile and is not empty"
                                     : strerror(errno));
        if (st != BYOCL_OK)
            base_dir_remove_files(tmp);
    }
    free(target);
    free(tmp);
    return st;
}

/* ------------------------------------------------------------------ reading */

typedef struct manifest_reader {
    const char *path; /* DIR/manifest.json, for messages */
    byocl_error *err;
} manifest_reader;

/* "DIR/manifest.json:LINE:COL: WHERE: MSG" */
static byocl_status bad(const manifest_reader *r, const byocl_json *at, const char *where,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static byocl_status bad(const manifest_reader *r, const byocl_json *at, const char *where,
                        const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return byocl_error_set(r->err, BYOCL_ERR_INVALID, "%s:%d:%d: %s: %s", r->path, at->line,
                           at->col, where, msg);
}

/* Member `key` of `obj`, which must have `kind` (a null is accepted when `nullable`). */
static byocl_status member(const manifest_reader *r, const byocl_json *obj, const char *where,
                           const char *key, byocl_json_kind kind, bool nullable,
                           const byocl_json **out)
{
    const byocl_json *v = base_json_get(obj, key);
    if (!v)
        return bad(r, obj, where, "missing \"%s\"", key);
    if (v->kind != kind && !(nullable && v->kind == BYOCL_JSON_NULL))
        return bad(r, v, where, "\"%s\" must be a%s %s, not %s", key,
                   kind == BYOCL_JSON_ARRAY || kind == BYOCL_JSON_OBJECT ? "n" : "",
                   base_json_kind_name(kind), base_json_kind_name(v->kind));
    *out = v;
    return BYOCL_OK;
}

static byocl_status member_int(const manifest_reader *r, const byocl_json *obj,
                               const char *where, const char *key, int64_t lo, int64_t hi,
                               int64_t *out)
{
    const byocl_json *v = NULL;
    byocl_status st = member(r, obj, where, key, BYOCL_JSON_NUMBER, false, &v);
    if (st != BYOCL_OK)
        return st;
    if (!v->is_int || v->integer < lo || v->integer > hi) {
        if (hi < lo)
            return bad(r, v, where, "\"%s\" has nothing to refer to here", key);
        return bad(r, v, where, "\"%s\" must be an integer from %lld to %lld", key,
                   (long long)lo, (long long)hi);
    }
    *out = v->integer;
    return BYOCL_OK;
}

static byocl_status member_str(const manifest_reader *r, const byocl_json *obj,
                               const char *where, const char *key, char **out)
{
    const byocl_json *v = NULL;
    byocl_status st = member(r, obj, where, key, BYOCL_JSON_STRING, false, &v);
    if (st != BYOCL_OK)
        return st;
    if (!(*out = split_strdup(v->string)))
        return byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->path);
    return BYOCL_OK;
}

/* A stage file name: plain, inside DIR. */
static byocl_status member_file(const manifest_reader *r, const byocl_json *obj,
                                const char *where, const char *key, bool nullable,
                                const char **out)
{
    const byocl_json *v = NULL;
    byocl_status st = member(r, obj, where, key, BYOCL_JSON_STRING, nullable, &v);
    if (st != BYOCL_OK)
        return st;
    *out = v->kind == BYOCL_JSON_NULL ? NULL : v->string;
    if (*out && (!**out || strchr(*out, '/') || strcmp(*out, ".") == 0 ||
                 strcmp(*out, "..") == 0))
        return bad(r, v, where, "\"%s\" must name a file in the directory, not \"%s\"", key,
                   *out);
    return BYOCL_OK;
}

/* The type that `text` spells ("Tensor[(1, 3), float32]"), read by the Relay parser from
 * `def @main(%x: TYPE) { %x }` and required to print back the same. */
static byocl_status parse_type(const manifest_reader *r, const byocl_json *at,
                               const char *where, byocl_function *sig, const char *name,
                               byocl_error *err)
{
    const char *text = at->string;
    size_t n = strlen(text) + 64;
    char *src = malloc(n);
    if (!src)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->path);
    snprintf(src, n, "def @main(%%x: %s) { %%x }", text);
    byocl_module *m = NULL;
    byocl_error local;
    byocl_status st = byocl_text_parse(src, strlen(src), "type", NULL, &m, &local);
    const byocl_function *fn = st == BYOCL_OK ? byocl_module_find(m, "main") : NULL;
    char back[4096] = "";
    if (fn && byocl_module_num_functions(m) == 1 && byocl_function_num_params(fn) == 1)
        byocl_type_str(byocl_node_type(fn, byocl_function_param(fn, 0)), back, sizeof back);
    if (!fn || strcmp(back, text) != 0)
        st = bad(r, at, where, "\"%s\" is not a type", text);
    else if (byocl_function_add_param(sig, name, byocl_node_type(fn, byocl_function_param(fn, 0)),
                                      err) < 0)
        st = err->status;
    byocl_module_free(m);
    free(src);
    return st;
}

static byocl_status read_inputs(const manifest_reader *r, const byocl_json *root,
                                byocl_stages *s)
{
    const byocl_json *list = NULL;
    byocl_status st = member(r, root, "the top level", "inputs", BYOCL_JSON_ARRAY, false, &list);
    byocl_function *sig = st == BYOCL_OK ? byocl_module_add_function(s->signature, "main", r->err)
                                         : NULL;
    if (st == BYOCL_OK && !sig)
        st = r->err->status;
    for (int i = 0; st == BYOCL_OK && i < list->n; i++) {
        const byocl_json *in = &list->items[i];
        char where[64];
        snprintf(where, sizeof where, "inputs[%d]", i);
        const byocl_json *name = NULL, *type = NULL;
        if (in->kind != BYOCL_JSON_OBJECT)
            st = bad(r, in, where, "expected an object, not %s", base_json_kind_name(in->kind));
        if (st == BYOCL_OK)
            st = member(r, in, where, "name", BYOCL_JSON_STRING, false, &name);
        if (st == BYOCL_OK)
            st = member(r, in, where, "type", BYOCL_JSON_STRING, false, &type);
        if (st == BYOCL_OK && (!*name->string || byocl_function_find_param(sig, name->string) >= 0))
            st = bad(r, name, where, "\"%s\" %s", name->string,
                     *name->string ? "is the name of an earlier input" : "is not a name");
        if (st == BYOCL_OK)
            st = parse_type(r, type, where, sig, name->string, r->err);
    }
    int body = st == BYOCL_OK ? byocl_function_add_tuple(sig, NULL, 0, r->err) : -1;
    if (st == BYOCL_OK && (body < 0 || byocl_function_set_body(sig, body, r->err) != BYOCL_OK ||
                           byocl_infer_types(s->signature, r->err) != BYOCL_OK))
        st = r->err->status;
    return st;
}

/* Parameter i of the stage's @main against the manifest's inputs[i]. */
static byocl_status read_stage_input(const manifest_reader *r, const byocl_stages *s, int k,
                                     const byocl_json *in, const char *where, const char *file,
                                     const byocl_function *fn, int i, byocl_stage_input *out)
{
    if (in->kind != BYOCL_JSON_OBJECT)
        return bad(r, in, where, "expected an object, not %s", base_json_kind_name(in->kind));
    char *name = NULL;
    byocl_status st = member_str(r, in, where, "name", &name);
    if (st != BYOCL_OK)
        return st;
    out->name = name;
    int64_t a = 0, b = 0;
    const byocl_type *want = NULL;
    if (base_json_get(in, "input")) {
        st = member_int(r, in, where, "input", 0, byocl_stages_num_inputs(s) - 1, &a);
        out->stage = -1;
        out->index = (int)a;
        want = st == BYOCL_OK ? byocl_stages_input_type(s, out->index) : NULL;
    } else {
        if (!base_json_get(in, "stage"))
            return bad(r, in, where, "needs \"input\" (a pipeline input) or \"stage\" and "
                                     "\"output\" (an earlier stage's output)");
        st = member_int(r, in, where, "stage", 0, k - 1, &a);
        if (st == BYOCL_OK)
            st = member_int(r, in, where, "output", 0, s->stages[a].n_outputs - 1, &b);
        out->stage = (int)a;
        out->index = (int)b;
        want = st == BYOCL_OK ? s->stages[a].outputs[b].type : NULL;
    }
    if (st != BYOCL_OK)
        return st;
    const char *param = byocl_node_name(fn, byocl_function_param(fn, i));
    if (strcmp(param, name) != 0)
        return bad(r, in, where, "says \"%s\" but parameter %d of @main in %s is %%%s", name, i,
                   file, param);
    const byocl_type *got = byocl_node_type(fn, byocl_function_param(fn, i));
    if (!byocl_type_equal(got, want)) {
        char want_s[1024], got_s[1024];
        return bad(r, in, where, "%%%s of %s is %s but what it receives is %s", param, file,
                   byocl_type_str(got, got_s, sizeof got_s),
                   byocl_type_str(want, want_s, sizeof want_s));
    }
    return BYOCL_OK;
}

static byocl_status read_stage_output(const manifest_reader *r, const byocl_json *o,
                                      const char *where, const char *file,
                                      const byocl_type *type, byocl_stage_output *out)
{
    if (o->kind != BYOCL_JSON_OBJECT)
        return bad(r, o, where, "expected an object, not %s", base_json_kind_name(o->kind));
    char *node = NULL, *op = NULL;
    byocl_status st = member_str(r, o, where, "node", &node);
    out->node = node;
    if (st == BYOCL_OK)
        st = member_str(r, o, where, "op", &op);
    out->op = op;
    out->type = type;
    const byocl_json *t = NULL;
    if (st == BYOCL_OK)
        st = member(r, o, where, "type", BYOCL_JSON_STRING, false, &t);
    char got[4096];
    if (st == BYOCL_OK && strcmp(byocl_type_str(type, got, sizeof got), t->string) != 0)
        st = bad(r, t, where, "says %s but @main of %s returns %s there", t->string, file, got);
    return st;
}

static byocl_status read_stage(const manifest_reader *r, const char *dir, const byocl_json *js,
                               byocl_stages *s, int k)
{
    split_stage *st_k = &s->stages[k];
    char where[64];
    snprintf(where, sizeof where, "stages[%d]", k);
    if (js->kind != BYOCL_JSON_OBJECT)
        return bad(r, js, where, "expected an object, not %s", base_json_kind_name(js->kind));
    const char *file = NULL, *params_file = NULL;
    const byocl_json *inputs = NULL, *outputs = NULL;
    int64_t n_nodes = 0, flops = 0;
    byocl_status st = member_file(r, js, where, "file", false, &file);
    if (st == BYOCL_OK)
        st = member_file(r, js, where, "params", true, &params_file);
    if (st == BYOCL_OK)
        st = member_str(r, js, where, "first", &st_k->first);
    if (st == BYOCL_OK)
        st = member_str(r, js, where, "last", &st_k->last);
    if (st == BYOCL_OK)
        st = member_int(r, js, where, "nodes", 1, INT32_MAX, &n_nodes);
    if (st == BYOCL_OK)
        st = member_int(r, js, where, "flops", 0, INT64_MAX, &flops);
    const byocl_json *cost = NULL; /* optional: manifests of byocl_split have none */
    if (st == BYOCL_OK && base_json_get(js, "cost")) {
        st = member(r, js, where, "cost", BYOCL_JSON_NUMBER, false, &cost);
        if (st == BYOCL_OK && !(cost->number >= 0))
            st = bad(r, cost, where, "\"cost\" must be a number of at least 0");
    }
    if (st == BYOCL_OK)
        st = member(r, js, where, "inputs", BYOCL_JSON_ARRAY, false, &inputs);
    if (st == BYOCL_OK)
        st = member(r, js, where, "outputs", BYOCL_JSON_ARRAY, false, &outputs);
    if (st != BYOCL_OK)
        return st;
    st_k->n_nodes = (int)n_nodes;
    st_k->flops = flops;
    st_k->cost = cost ? cost->number : -1;

    /* The stage's module. */
    char *path = base_path_join(dir, file);
    char *params_path = params_file ? base_path_join(dir, params_file) : NULL;
    byocl_params *params = NULL;
    if (!path || (params_file && !params_path))
        st = byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", dir);
    if (st == BYOCL_OK && params_path)
        st = byocl_npz_read(params_path, &params, r->err);
    if (st == BYOCL_OK)
        st = byocl_load_model(path, params, &st_k->mod, r->err);
    byocl_params_free(params);
    free(params_path);
    const byocl_function *fn = st == BYOCL_OK ? byocl_module_find(st_k->mod, "main") : NULL;
    if (st == BYOCL_OK && !fn)
        st = byocl_error_set(r->err, BYOCL_ERR_INVALID, "%s has no @main", path);
    if (st == BYOCL_OK && byocl_function_num_params(fn) != inputs->n)
        st = bad(r, inputs, where, "lists %d input%s but @main of %s has %d parameter%s",
                 inputs->n, inputs->n == 1 ? "" : "s", path, byocl_function_num_params(fn),
                 byocl_function_num_params(fn) == 1 ? "" : "s");
    if (st == BYOCL_OK && !(st_k->inputs = calloc((size_t)(inputs->n ? inputs->n : 1),
                                                  sizeof *st_k->inputs)))
        st = byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->path);
    for (int i = 0; st == BYOCL_OK && i < inputs->n; i++) {
        char at[96];
        snprintf(at, sizeof at, "%s.inputs[%d]", where, i);
        st_k->n_inputs = i + 1; /* so that a name read before a failure is freed */
        st = read_stage_input(r, s, k, &inputs->items[i], at, path, fn, i, &st_k->inputs[i]);
    }

    /* Its outputs: the tensors of its result. */
    const byocl_type *leaves[MAX_LEAVES];
    int n_leaves = 0;
    if (st == BYOCL_OK) {
        n_leaves = split_type_leaves(byocl_node_type(fn, byocl_function_body(fn)), leaves,
                                     MAX_LEAVES);
        if (n_leaves != outputs->n || n_leaves > MAX_LEAVES)
            st = bad(r, outputs, where, "lists %d output%s but @main of %s returns %d tensor%s",
                     outputs->n, outputs->n == 1 ? "" : "s", path, n_leaves,
                     n_leaves == 1 ? "" : "s");
    }
    if (st == BYOCL_OK && !(st_k->outputs = calloc((size_t)(outputs->n ? outputs->n : 1),
                                                   sizeof *st_k->outputs)))
        st = byocl_error_set(r->err, BYOCL_ERR_NOMEM, "out of memory reading %s", r->path);
    for (int i = 0; st == BYOCL_OK && i < outputs->n; i++) {
        char at[96];
        snprintf(at, sizeof at, "%s.outputs[%d]", where, i);
        st_k->n_outputs = i + 1;
        st = read_stage_output(r, &outputs->items[i], at, path, leaves[i], &st_k->outputs[i]);
    }
    free(path);
    return st;
}

static byocl_status read_manifest(const manifest_reader *r, const char *dir,
                                  const byocl_json *root, byocl_stages **out)
{
    if (root->kind != BYOCL_JSON_OBJECT)
        return bad(r, root, "the top level", "expected an object, not %s",
                   base_json_kind_name(root->kind));
    const byocl_json *format = NULL, *stages = NULL;
    int64_t version = 0;
    byocl_status st = member(r, root, "the top level", "format", BYOCL_JSON_STRING, false, &format);
    if (st == BYOCL_OK && strcmp(format->string, MANIFEST_FORMAT) != 0)
        st = bad(r, format, "the top level", "\"format\" is \"%s\", not \"%s\"", format->string,
                 MANIFEST_FORMAT);
    if (st == BYOCL_OK)
        st = member_int(r, root, "the top level", "version", MANIFEST_VERSION, MANIFEST_VERSION,
                        &version);
    if (st == BYOCL_OK)
        st = member(r, root, "the top level", "stages", BYOCL_JSON_ARRAY, false, &stages);
    if (st == BYOCL_OK && stages->n == 0)
        st = bad(r, stages, "the top level", "\"stages\" is empty");
    if (st != BYOCL_OK)
        return st;
    byocl_stages *s = split_stages_new(stages->n, r->err);
    if (!s)
        return r->err->status;
    st = read_inputs(r, root, s);
    for (int k = 0; st == BYOCL_OK && k < stages->n; k++)
        st = read_stage(r, dir, &stages->items[k], s, k);
    if (st != BYOCL_OK) {
        byocl_stages_free(s);
        return st;
    }
    *out = s;
    return BYOCL_OK;
}

byocl_status byocl_stages_read(const char *dir, byocl_stages **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_stages_read: no place for the result");
    *out = NULL;
    if (!dir || !*dir)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_stages_read: no directory");
    byocl_error local;
    if (!err)
        err = &local; /* the readers below read the status back */
    char *trimmed = trim_dir(dir);
    char *path = trimmed ? base_path_join(trimmed, MANIFEST_NAME) : NULL;
    if (!path) {
        free(trimmed);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    void *text = NULL;
    size_t len = 0;
    byocl_json *root = NULL;
    struct stat sb;
    byocl_status st = BYOCL_OK;
    if (stat(trimmed, &sb) != 0)
        st = byocl_error_set(err, BYOCL_ERR_IO, "cannot read stages from %s: %s", trimmed,
                             strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        st = byocl_error_set(err, BYOCL_ERR_IO,
                             "cannot read stages from %s: it is a file, not a directory",
                             trimmed);
    else
        st = base_file_read_all(path, &text, &len, err);
    if (st == BYOCL_OK)
        st = base_json_parse(text, len, path, &root, err);
    if (st == BYOCL_OK) {
        manifest_reader r = {path, err};
        st = read_manifest(&r, trimmed, root, out);
    }
    base_json_free(root);
    free(text);
    free(path);
    free(trimmed);
    return st;
}
