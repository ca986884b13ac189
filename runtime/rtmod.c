/* Runtime modules (what a region runs in), DLPack conversions, and the built-in "ref"
 * region module, which runs a region's function with the reference executor: the module
 * every region gets until its target can compile it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/reference.h"
#include "executor_impl.h"
#include "ir/ir_impl.h"
#include "tensor_impl.h"

/* ------------------------------------------------------------------ DLPack */

DLDataType byocl_dtype_to_dlpack(byocl_dtype dtype)
{
    switch (dtype) {
    case BYOCL_FLOAT32: return (DLDataType){kDLFloat, 32, 1};
    case BYOCL_FLOAT16: return (DLDataType){kDLFloat, 16, 1};
    case BYOCL_INT32: return (DLDataType){kDLInt, 32, 1};
    case BYOCL_INT64: return (DLDataType){kDLInt, 64, 1};
    case BYOCL_INT8: return (DLDataType){kDLInt, 8, 1};
    case BYOCL_UINT8: return (DLDataType){kDLUInt, 8, 1};
    case BYOCL_BOOL: return (DLDataType){kDLUInt, 1, 1};
    case BYOCL_DTYPE_COUNT: break;
    }
    return (DLDataType){kDLOpaqueHandle, 0, 0};
}

bool byocl_dtype_from_dlpack(DLDataType type, byocl_dtype *out)
{
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        DLDataType t = byocl_dtype_to_dlpack((byocl_dtype)d);
        if (t.code == type.code && t.bits == type.bits && t.lanes == type.lanes) {
            *out = (byocl_dtype)d;
            return true;
        }
    }
    return false;
}

int64_t byocl_dl_nbytes(const DLTensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->shape[i];
        if (d < 0 || (d != 0 && n > INT64_MAX / d))
            return -1;
        n *= d;
    }
    int64_t elem = ((int64_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
    return elem != 0 && n > INT64_MAX / elem ? -1 : n * elem;
}

/* Whether `strides` (elements) describe compact C order for `shape`. */
static bool c_order(const DLTensor *t)
{
    if (!t->strides)
        return true;
    int64_t want = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != want)
            return false;
        want *= t->shape[i];
    }
    return true;
}

byocl_status byocl_dl_check(const DLTensor *t, const byocl_type *type, byocl_error *err)
{
    char want_s[256], got_s[256];
    byocl_type_str(type, want_s, sizeof want_s);
    if (!t)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got no tensor", want_s);
    if (t->device.device_type != kDLCPU)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "expected %s in host memory (kDLCPU), got device type %d", want_s,
                               (int)t->device.device_type);
    byocl_dtype dtype;
    if (!byocl_dtype_from_dlpack(t->dtype, &dtype))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "expected %s, got a DLPack type byocl does not know (code %u, "
                               "bits %u, lanes %u)",
                               want_s, (unsigned)t->dtype.code, (unsigned)t->dtype.bits,
                               (unsigned)t->dtype.lanes);
    if (t->ndim < 0 || t->ndim > BYOCL_MAX_RANK || (t->ndim > 0 && !t->shape))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got a tensor of rank %d",
                               want_s, t->ndim);
    byocl_type got = byocl_type_tensor(dtype, t->ndim, t->shape);
    if (!byocl_type_equal(&got, type))
        return byocl_error_set(err, BYOCL_ERR_TYPE, "expected %s, got %s", want_s,
                               byocl_type_str(&got, got_s, sizeof got_s));
    if (!c_order(t))
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "expected %s in C order, got strides that are not", want_s);
    if (!t->data && byocl_dl_nbytes(t) > 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "expected %s, got a tensor without data",
                               want_s);
    return BYOCL_OK;
}

/* --------------------------------------------------------- runtime modules */

struct byocl_rtmod {
    char *name;
    byocl_rtmod_i iface;
    void *ctx;
};

byocl_status byocl_rtmod_new(const char *name, const byocl_rtmod_i *iface, void *ctx,
                             byocl_rtmod **out, byocl_error *err)
{
    byocl_status st = BYOCL_OK;
    byocl_rtmod *mod = NULL;
    if (out)
        *out = NULL;
    if (!out || !iface || !iface->run)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "byocl_rtmod_new: a runtime module needs a run function");
    else if (!name || !*name)
        st = byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_rtmod_new: a runtime module needs "
                                                     "a name");
    else if (!(mod = calloc(1, sizeof *mod)) || !(mod->name = strdup(name)))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    if (st != BYOCL_OK) {
        if (mod)
            free(mod);
        if (iface && iface->destroy)
            iface->destroy(ctx);
        return st;
    }
    mod->iface = *iface;
    mod->ctx = ctx;
    *out = mod;
    return BYOCL_OK;
}

void byocl_rtmod_free(byocl_rtmod *mod)
{
    if (!mod)
        return;
    if (mod->iface.destroy)
        mod->iface.destroy(mod->ctx);
    free(mod->name);
    free(mod);
}

const char *byocl_rtmod_name(const byocl_rtmod *mod)
{
    return mod->name;
}

bool byocl_rtmod_memory(const byocl_rtmod *mod, byocl_device_memory *out)
{
    byocl_device_memory none = {.device = {kDLCPU, 0}};
    if (out)
        *out = none;
    if (!mod || !out || !mod->iface.memory || !mod->iface.memory(mod->ctx, out)) {
        if (out)
            *out = none; /* a module that said no may have written half of it */
        return false;
    }
    return true;
}

byocl_status byocl_rtmod_run(byocl_rtmod *mod, const char *symbol, DLTensor *const *args,
                             int n_in, int n_out, byocl_error *err)
{
    if (!mod || !symbol || n_in < 0 || n_out < 0 || (n_in + n_out > 0 && !args))
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_rtmod_run: needs a module, a symbol and the arguments");
    return mod->iface.run(mod->ctx, symbol, args, n_in, n_out, err);
}

/* ------------------------------------------------------ the ref region module */

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
        byocl_status st = byocl_dl_check(args[k], want, err);
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
        in[k] = byocl_tensor_wrap(t->dtype, &t->shape,
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
        byocl_tensor_wrap_free(in[k]);
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
