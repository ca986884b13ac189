/* The "ref" region module: runs a region's function with the reference executor, the
 * module every region gets until its target can compile it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/tensor_impl.h"
#include "byocl/reference.h"
#include "byocl/runtime.h"
#include "ir/ir_impl.h"
#include "module/dlpack.h"

typedef struct ref_region {
    byocl_module *mod;     /* the region and its callees */
    const byocl_function *fn;
    char *symbol;
    int n_out;
    const byocl_type **out_types; /* the result's tensors, flattened */
} ref_region;

/* The reference executor takes and drops references to constant tensors, which every copy
 * of a module shares (and reference counts are not atomic): one region runs at a time. */
static pthread_mutex_t ref_region_lock = PTHREAD_MUTEX_INITIALIZER;

static void ref_region_destroy(void *ctx)
{
    ref_region *r = ctx;
    if (!r)
        return;
    byocl_module_free(r->mod);
    free(r->symbol);
    free(r->out_types);
    free(r);
}

/* Appends the tensor leaves of `type` (depth-first) to leaves[*at...]. */
static void flatten_type(const byocl_type *type, const byocl_type **leaves, int *at)
{
    if (type->kind == BYOCL_TYPE_TUPLE) {
        for (int k = 0; k < type->n_fields; k++)
            flatten_type(type->fields[k], leaves, at);
        return;
    }
    leaves[(*at)++] = type;
}

/* Copies `fn` and every function it calls, transitively, from its module into `dst`. */
static byocl_status copy_with_callees(byocl_module *dst, const byocl_function *fn,
                                      byocl_error *err)
{
    const byocl_module *src = byocl_function_module(fn);
    if (!byocl_module_copy_function(dst, fn, NULL, err))
        return err ? err->status : BYOCL_ERR_INVALID;
    /* dst->fns grows while we walk it: each new function is scanned in turn. */
    for (int f = 0; f < dst->n_fns; f++) {
        const byocl_function *g = dst->fns[f];
        for (int id = 0; id < g->n_nodes; id++) {
            const char *callee = g->nodes[id].callee;
            if (g->nodes[id].kind != BYOCL_NODE_CALL || !callee || byocl_module_find(dst, callee))
                continue;
            const byocl_function *h = byocl_module_find(src, callee);
            if (!h)
                return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                       "@%s calls @%s, which is not defined", g->name, callee);
            if (!byocl_module_copy_function(dst, h, NULL, err))
                return err ? err->status : BYOCL_ERR_INVALID;
        }
    }
    return BYOCL_OK;
}

static byocl_status ref_region_run(void *ctx, const char *symbol, DLTensor *const *args,
                                   int n_in, int n_out, byocl_error *err)
{
    ref_region *r = ctx;
    const byocl_function *fn = r->fn;
    if (strcmp(symbol, r->symbol) != 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "the ref region module runs %s, not %s", r->symbol, symbol);
    if (n_in != fn->n_params || n_out != r->n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "region %s takes %d input%s and %d output%s, got %d and %d",
                               r->symbol, fn->n_params, fn->n_params == 1 ? "" : "s", r->n_out,
                               r->n_out == 1 ? "" : "s", n_in, n_out);
    for (int k = 0; k < n_in + n_out; k++) {
        const byocl_type *want =
            k < n_in ? fn->nodes[fn->params[k]].type : r->out_types[k - n_in];
        byocl_status st = dl_check(args[k], want, err);
        if (st != BYOCL_OK) {
            if (k < n_in)
                byocl_error_prefix(err, "region %s, input %d (%%%s): ", r->symbol, k,
                                   fn->nodes[fn->params[k]].name);
            else
                byocl_error_prefix(err, "region %s, output %d: ", r->symbol, k - n_in);
            return st;
        }
    }
    byocl_tensor **in = calloc(n_in > 0 ? (size_t)n_in : 1, sizeof *in);
    if (!in)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < n_in && st == BYOCL_OK; k++) {
        const byocl_type *t = fn->nodes[fn->params[k]].type;
        in[k] = base_tensor_wrap(t->dtype, &t->shape,
                                 (char *)args[k]->data + args[k]->byte_offset, err);
        if (!in[k])
            st = err ? err->status : BYOCL_ERR_NOMEM;
    }
    byocl_tensor **outs = NULL;
    int n_outs = 0;
    if (st == BYOCL_OK) {
        pthread_mutex_lock(&ref_region_lock);
        st = byocl_reference_run(r->mod, fn->name, in, n_in, &outs, &n_outs, err);
        pthread_mutex_unlock(&ref_region_lock);
    }
    for (int k = 0; st == BYOCL_OK && k < n_out; k++) {
        size_t nbytes = byocl_tensor_nbytes(outs[k]);
        if (nbytes)
            memcpy((char *)args[n_in + k]->data + args[n_in + k]->byte_offset,
                   byocl_tensor_cdata(outs[k]), nbytes);
    }
    if (outs)
        byocl_tensors_free(outs, n_outs);
    for (int k = 0; k < n_in; k++)
        base_tensor_wrap_free(in[k]);
    free(in);
    return st;
}

byocl_status byocl_rtmod_ref_new(const byocl_function *region, byocl_rtmod **out,
                                 byocl_error *err)
{
    if (out)
        *out = NULL;
    if (!region || !out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_rtmod_ref_new: no region given");
    const byocl_type *ret = region->body >= 0 ? region->nodes[region->body].type : NULL;
    if (!ret || ret->kind == BYOCL_TYPE_NONE)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "region @%s is not type-checked (run byocl_infer_types)",
                               region->name);
    for (int k = 0; k < region->n_params; k++) {
        const byocl_node *p = &region->nodes[region->params[k]];
        if (p->type->kind != BYOCL_TYPE_TENSOR)
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "region @%s: parameter %%%s is not a tensor; the ref region "
                                   "module takes tensor parameters only",
                                   region->name, p->name);
    }
    ref_region *r = calloc(1, sizeof *r);
    if (!r)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    r->n_out = byocl_type_num_tensors(ret);
    r->symbol = strdup(byocl_attrs_get_str(&region->attrs, "global_symbol", region->name));
    r->out_types = calloc(r->n_out > 0 ? (size_t)r->n_out : 1, sizeof *r->out_types);
    r->mod = byocl_module_new();
    if (!r->symbol || !r->out_types || !r->mod)
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st == BYOCL_OK)
        st = copy_with_callees(r->mod, region, err);
    if (st != BYOCL_OK) {
        ref_region_destroy(r);
        return st;
    }
    r->fn = byocl_module_find(r->mod, region->name);
    int at = 0;
    ret = r->fn->nodes[r->fn->body].type; /* the copy's, alive as long as r->mod */
    flatten_type(ret, r->out_types, &at);
    static const byocl_rtmod_i iface = {.run = ref_region_run, .destroy = ref_region_destroy};
    return byocl_rtmod_new("ref", &iface, r, out, err);
}
