/* Loading a model by name (builtin:NAME, Relay text, .onnx) and saving one as text + .npz:
 * the frontend that `byocl print`, `byocl run` and the C API all go through. */
#include "byocl/frontend.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "byocl/models.h"
#include "byocl/passes.h"
#include "base/file_util.h"
#include "frontend/onnx/onnx_frontend.h"

#define BUILTIN_PREFIX "builtin:"
#define META_PREFIX "relay.Constant."

static bool is_meta_name(const char *name)
{
    return strncmp(name, META_PREFIX, strlen(META_PREFIX)) == 0;
}

static bool has_suffix_nocase(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* True when some constant node of `m` holds the tensor `t` (the parser references the
 * meta tensors it was given) or an equal one (should it copy them). */
static bool module_uses_tensor(const byocl_module *m, const byocl_tensor *t)
{
    for (int f = 0; f < byocl_module_num_functions(m); f++) {
        const byocl_function *fn = byocl_module_function_at(m, f);
        for (int id = 0; id < byocl_function_num_nodes(fn); id++) {
            if (byocl_node_kind_of(fn, id) != BYOCL_NODE_CONSTANT)
                continue;
            const byocl_tensor *v = byocl_node_value(fn, id);
            if (v == t || byocl_tensor_equal(v, t))
                return true;
        }
    }
    return false;
}

/* Binds every member of `params` that is not a meta constant to @main's parameter of the
 * same name; meta constants must have been used by the text (`meta_allowed`). */
static byocl_status bind_by_name(byocl_module *m, const byocl_params *params, const char *spec,
                                 bool meta_allowed, byocl_error *err)
{
    int n = params ? byocl_params_count(params) : 0;
    if (n == 0)
        return BYOCL_OK;
    const char **names = malloc(sizeof *names * (size_t)n);
    byocl_tensor **values = malloc(sizeof *values * (size_t)n);
    if (!names || !values) {
        free(names);
        free(values);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory binding parameters");
    }
    const byocl_function *main_fn = byocl_module_find(m, "main");
    byocl_status st = BYOCL_OK;
    int n_bind = 0;
    for (int i = 0; i < n && st == BYOCL_OK; i++) {
        const char *name = byocl_params_name(params, i);
        byocl_tensor *t = byocl_params_tensor(params, i);
        if (is_meta_name(name)) {
            if (!meta_allowed)
                st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                     "params member '%s' is a meta constant, but %s is not a "
                                     "text file that could refer to it",
                                     name, spec);
            else if (!module_uses_tensor(m, t))
                st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                     "params member '%s' is not used by %s (no "
                                     "meta[relay.Constant][%s] in the text)",
                                     name, spec, name + strlen(META_PREFIX));
        } else if (main_fn && byocl_function_find_param(main_fn, name) >= 0) {
            names[n_bind] = name;
            values[n_bind] = t;
            n_bind++;
        } else if (!main_fn) {
            st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                 "params member '%s' cannot be bound: %s has no @main", name,
                                 spec);
        } else {
            st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                 "params member '%s' is neither a parameter of @main nor a "
                                 "meta constant (relay.Constant.K) of %s",
                                 name, spec);
        }
    }
    if (st == BYOCL_OK && n_bind > 0) {
        st = byocl_bind_params(m, names, values, n_bind, err);
        if (st != BYOCL_OK)
            byocl_error_prefix(err, "%s: binding params: ", spec);
    }
    free(names);
    free(values);
    return st;
}

byocl_status byocl_load_model(const char *spec, const byocl_params *params,
                              byocl_module **out, byocl_error *err)
{
    byocl_load_options opt = {.params = params};
    return byocl_load_model_opts(spec, &opt, out, err);
}

byocl_status byocl_load_model_opts(const char *spec, const byocl_load_options *opt,
                                   byocl_module **out, byocl_error *err)
{
    if (!out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_load_model: out is NULL");
    *out = NULL;
    if (!spec || !*spec)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no model given");
    const byocl_params *params = opt ? opt->params : NULL;
    bool is_onnx = has_suffix_nocase(spec, ".onnx");
    if (opt && opt->n_shapes > 0 && !is_onnx)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: input shapes (--shape) apply to ONNX models only", spec);

    byocl_module *m = NULL;
    byocl_status st;
    bool is_text = false;
    if (strncmp(spec, BUILTIN_PREFIX, strlen(BUILTIN_PREFIX)) == 0) {
        st = byocl_builtin_build(spec + strlen(BUILTIN_PREFIX), &m, err);
    } else if (is_onnx) {
        st = onnx_import(spec, opt, &m, err); /* binds `params` itself, by ONNX name */
    } else {
        is_text = true;
        st = byocl_text_parse_file(spec, params, &m, err);
    }
    if (st != BYOCL_OK) {
        byocl_module_free(m);
        return st;
    }

    st = is_onnx ? BYOCL_OK : bind_by_name(m, params, spec, is_text, err);
    if (st == BYOCL_OK) {
        st = byocl_infer_types(m, err);
        if (st == BYOCL_OK)
            st = byocl_verify(m, true, err);
        if (st != BYOCL_OK)
            byocl_error_prefix(err, "%s: ", spec);
    }
    if (st != BYOCL_OK) {
        byocl_module_free(m);
        return st;
    }
    *out = m;
    return BYOCL_OK;
}

byocl_status byocl_save_model_opts(const byocl_module *m, const char *text_path,
                                   const char *params_path, const byocl_print_options *opt,
                                   byocl_error *err)
{
    if (!m || !text_path)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_save_model: module and text path are required");
    byocl_error local;
    if (!err)
        err = &local; /* the status of byocl_text_print's failure is read below */
    byocl_print_options typed = {.show_types = true};
    if (!opt)
        opt = &typed;
    /* Inline metadata: the values are in the text, and no parameter file is written. */
    bool inline_meta = opt->metadata == BYOCL_METADATA_INLINE;
    byocl_params *meta = inline_meta ? NULL : byocl_params_new();
    if (!meta && !inline_meta)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory saving %s", text_path);
    char *text = byocl_text_print(m, opt, meta, err);
    byocl_status st = text ? BYOCL_OK : err->status;
    if (st == BYOCL_OK && meta && byocl_params_count(meta) > 0) {
        if (!params_path)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s: the module has %d tensor constant(s); give a path for "
                                 "their .npz file",
                                 text_path, byocl_params_count(meta));
        else
            /* The parameters first: once the text exists, what it refers to exists too. */
            st = byocl_npz_write(params_path, meta, err);
    }
    if (st == BYOCL_OK) {
        byocl_file_part part = {text, strlen(text)};
        st = base_file_write_atomic(text_path, &part, 1, err);
    }
    free(text);
    byocl_params_free(meta);
    return st;
}

byocl_status byocl_save_model(const byocl_module *m, const char *text_path,
                              const char *params_path, byocl_error *err)
{
    return byocl_save_model_opts(m, text_path, params_path, NULL, err);
}
