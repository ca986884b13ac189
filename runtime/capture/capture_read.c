/* Reading a capture folder back, and comparing tensors the way replay and bisect do. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/frontend.h"
#include "byocl/passes.h"
#include "byocl/tensor_io.h"
#include "capture_impl.h"
#include "base/file_util.h"

char *byocl_capture_file_name(const char *prefix, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", prefix, name);
    for (char *p = buf; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            *p = '_';
    if (buf[0] == '.')
        buf[0] = '_';
    return buf;
}

void byocl_capture_compare(const byocl_tensor *got, const byocl_tensor *want, double rtol,
                           double atol, byocl_capture_diff *out)
{
    byocl_compare_result r;
    byocl_compare_options opt = {.rtol = rtol, .atol = atol};
    if (byocl_tensor_compare(got, want, &opt, &r, NULL) != BYOCL_OK) {
        /* A tolerance it refuses (replay and bisect check theirs): nothing is within it. */
        r = (byocl_compare_result){.n_mismatches = byocl_tensor_numel(want), .first_mismatch = 0,
                                   .max_abs_error = INFINITY, .sum_sq_error = INFINITY};
    }
    /* A NaN where want has none is infinitely far, here as in the norm. */
    double diff2 = isnan(r.sum_sq_error) ? INFINITY : r.sum_sq_error;
    *out = (byocl_capture_diff){
        .max_abs = isnan(r.max_abs_error) ? INFINITY : r.max_abs_error,
        .rel_l2 = r.sum_sq_expected > 0 ? sqrt(diff2) / sqrt(r.sum_sq_expected) : sqrt(diff2),
        .first_bad = r.first_mismatch,
        .n_bad = r.n_mismatches,
        .ok = r.ok,
    };
}

/* ------------------------------------------------------------ the folder */

void byocl_capture_folder_free(byocl_capture_folder *f)
{
    if (!f)
        return;
    for (int i = 0; f->manifest && f->inputs && i < f->manifest->n_inputs; i++)
        byocl_tensor_unref(f->inputs[i]);
    for (int i = 0; f->manifest && f->outputs && i < f->manifest->n_outputs; i++)
        byocl_tensor_unref(f->outputs[i]);
    free(f->inputs);
    free(f->outputs);
    byocl_capture_manifest_free(f->manifest);
    byocl_module_free(f->module);
    free(f);
}

/* Reads `entry`'s file, which must hold the manifest's dtype and shape. */
static byocl_status read_tensor(const char *dir, const char *manifest_path,
                                const byocl_capture_tensor *entry, byocl_tensor **out,
                                byocl_error *err)
{
    char *path = base_path_join(dir, entry->file);
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = byocl_npy_read(path, out, err);
    if (st == BYOCL_OK && (byocl_tensor_dtype(*out) != entry->dtype ||
                           !byocl_shape_equal(byocl_tensor_shape(*out), &entry->shape))) {
        char want[256], got[256];
        byocl_type w = byocl_type_tensor(entry->dtype, entry->shape.rank, entry->shape.dims);
        byocl_type g = byocl_type_tensor(byocl_tensor_dtype(*out), byocl_tensor_shape(*out)->rank,
                                         byocl_tensor_shape(*out)->dims);
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "%s holds %s, but %s says %s for '%s'",
                             path, byocl_type_str(&g, got, sizeof got), manifest_path,
                             byocl_type_str(&w, want, sizeof want), entry->name);
        byocl_tensor_unref(*out);
        *out = NULL;
    }
    free(path);
    return st;
}

/* @main of the module must take the inputs and return the outputs, in order. */
static byocl_status check_module(const byocl_capture_folder *f, const char *module_path,
                                 const char *manifest_path, byocl_error *err)
{
    const byocl_capture_manifest *m = f->manifest;
    const byocl_function *main_fn = byocl_module_find(f->module, "main");
    if (!main_fn)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s has no @main", module_path);
    if (byocl_function_num_params(main_fn) != m->n_inputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "@main of %s takes %d inputs, %s lists %d", module_path,
                               byocl_function_num_params(main_fn), manifest_path, m->n_inputs);
    char want[256], got[256];
    for (int k = 0; k < m->n_inputs; k++) {
        int id = byocl_function_param(main_fn, k);
        const byocl_type *type = byocl_node_type(main_fn, id);
        byocl_type w = byocl_type_tensor(m->inputs[k].dtype, m->inputs[k].shape.rank,
                                         m->inputs[k].shape.dims);
        if (strcmp(byocl_node_name(main_fn, id), m->inputs[k].name) != 0 ||
            !byocl_type_equal(type, &w))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "input %d of %s is %%%s: %s, but %s lists '%s': %s", k,
                                   module_path, byocl_node_name(main_fn, id),
                                   byocl_type_str(type, got, sizeof got), manifest_path,
                                   m->inputs[k].name, byocl_type_str(&w, want, sizeof want));
    }
    const byocl_type *ret = byocl_node_type(main_fn, byocl_function_body(main_fn));
    int n_out = byocl_type_num_tensors(ret);
    if (n_out != m->n_outputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "@main of %s returns %d outputs, %s lists %d", module_path, n_out,
                               manifest_path, m->n_outputs);
    for (int i = 0; i < n_out; i++) {
        const byocl_type *field = ret->kind == BYOCL_TYPE_TUPLE ? ret->fields[i] : ret;
        byocl_type w = byocl_type_tensor(m->outputs[i].dtype, m->outputs[i].shape.rank,
                                         m->outputs[i].shape.dims);
        if (!byocl_type_equal(field, &w))
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "output %d of %s is %s, but %s lists %s", i, module_path,
                                   byocl_type_str(field, got, sizeof got), manifest_path,
                                   byocl_type_str(&w, want, sizeof want));
    }
    return BYOCL_OK;
}

static byocl_status read_folder(const char *dir, byocl_capture_folder *f, byocl_error *err)
{
    char *manifest_path = base_path_join(dir, "manifest.json");
    char *text = NULL, *module_path = NULL, *params_path = NULL;
    size_t len = 0;
    byocl_status st = manifest_path ? base_file_read_all(manifest_path, (void **)&text, &len, err)
                                    : byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = byocl_capture_manifest_parse(text, len, manifest_path, &f->manifest, err);
    free(text);
    const byocl_capture_manifest *m = f->manifest;
    if (st == BYOCL_OK) {
        module_path = base_path_join(dir, m->module);
        params_path = m->params ? base_path_join(dir, m->params) : NULL;
        f->inputs = calloc((size_t)m->n_inputs + 1, sizeof *f->inputs);
        f->outputs = calloc((size_t)m->n_outputs + 1, sizeof *f->outputs);
        if (!module_path || (m->params && !params_path) || !f->inputs || !f->outputs)
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    byocl_params *params = NULL;
    if (st == BYOCL_OK && params_path)
        st = byocl_npz_read(params_path, &params, err);
    if (st == BYOCL_OK)
        st = byocl_load_model(module_path, params, &f->module, err);
    byocl_params_free(params);
    if (st == BYOCL_OK)
        st = check_module(f, module_path, manifest_path, err);
    for (int k = 0; st == BYOCL_OK && k < m->n_inputs; k++)
        st = read_tensor(dir, manifest_path, &m->inputs[k], &f->inputs[k], err);
    for (int i = 0; st == BYOCL_OK && i < m->n_outputs; i++)
        st = read_tensor(dir, manifest_path, &m->outputs[i], &f->outputs[i], err);
    free(manifest_path);
    free(module_path);
    free(params_path);
    return st;
}

byocl_status byocl_capture_read(const char *dir, byocl_capture_folder **out, byocl_error *err)
{
    *out = NULL;
    byocl_capture_folder *f = calloc(1, sizeof *f);
    if (!f)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = read_folder(dir, f, err);
    if (st != BYOCL_OK) {
        byocl_capture_folder_free(f);
        return st;
    }
    *out = f;
    return BYOCL_OK;
}
