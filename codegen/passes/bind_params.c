/* bind_params: parameters of @main become constants (TVM's bind_params_by_name).
 *
 * A new @main is built node by node: every node is copied as it is, except that a bound
 * parameter's Var becomes a Constant holding the tensor. Node ids stay the same, so no
 * argument needs renumbering, and the types that inference filled stay valid. The new
 * function then takes the old one's place (name and position in the module); on any error
 * the module is left as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "ir/ir_impl.h"

#define BIND_TARGET "main"

/* "%x, %w" for the error that lists what could have been meant. */
static void list_params(const byocl_function *fn, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < fn->n_params && at < len; k++) {
        int w = snprintf(buf + at, len - at, "%s%%%s", k ? ", " : "",
                         fn->nodes[fn->params[k]].name);
        at += w > 0 ? (size_t)w : 0;
    }
    if (fn->n_params == 0)
        snprintf(buf, len, "none");
}

/* Finds, for each name, the parameter it binds (bound_by[node id] = index into values)
 * and checks the tensor against the parameter's type. */
static byocl_status match_names(const byocl_function *fn, const char *const *names,
                                byocl_tensor *const *values, int n, int *bound_by,
                                byocl_error *err)
{
    for (int i = 0; i < n; i++) {
        if (!names[i] || !values[i])
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "binding %d has no %s", i, names[i] ? "tensor" : "name");
        int id = byocl_function_find_param(fn, names[i]);
        if (id < 0) {
            char known[1024];
            list_params(fn, known, sizeof known);
            return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                   "@%s has no parameter %%%s (its parameters: %s)", fn->name,
                                   names[i], known);
        }
        if (bound_by[id] >= 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "parameter %%%s is bound twice",
                                   names[i]);
        const byocl_shape *s = byocl_tensor_shape(values[i]);
        byocl_type got = byocl_type_tensor(byocl_tensor_dtype(values[i]), s->rank, s->dims);
        if (!byocl_type_equal(fn->nodes[id].type, &got)) {
            char want_s[512], got_s[512];
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "parameter %%%s of @%s: expected %s, got %s", names[i],
                                   fn->name, byocl_type_str(fn->nodes[id].type, want_s,
                                                            sizeof want_s),
                                   byocl_type_str(&got, got_s, sizeof got_s));
        }
        bound_by[id] = i;
    }
    return BYOCL_OK;
}

/* Fills `fresh` (empty, same module) with `old`'s nodes, bound Vars turned into constants. */
static byocl_status build_bound(const byocl_function *old, byocl_function *fresh,
                                const int *bound_by, byocl_tensor *const *values,
                                byocl_error *err)
{
    byocl_module *m = fresh->mod;
    for (int id = 0; id < old->n_nodes; id++) {
        byocl_node proto = old->nodes[id];
        if (proto.kind == BYOCL_NODE_VAR && bound_by[id] >= 0) {
            proto.kind = BYOCL_NODE_CONSTANT;
            proto.name = NULL;
            proto.value = values[bound_by[id]];
        }
        if (ir_fn_append(fresh, &proto, err) != id)
            return err ? err->status : BYOCL_ERR_NOMEM;
    }
    fresh->params = malloc((old->n_params > 0 ? (size_t)old->n_params : 1) * sizeof(int));
    if (!fresh->params)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory binding parameters");
    fresh->cap_params = old->n_params;
    for (int k = 0; k < old->n_params; k++)
        if (bound_by[old->params[k]] < 0)
            fresh->params[fresh->n_params++] = old->params[k];
    fresh->body = old->body;
    byocl_status st = ir_attrs_copy(m, &old->attrs, &fresh->attrs, err);
    if (st == BYOCL_OK && old->ret_type && !(fresh->ret_type = ir_type_copy(m, old->ret_type)))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory binding parameters");
    return st;
}

byocl_status byocl_bind_params(byocl_module *m, const char *const *names,
                               byocl_tensor *const *values, int n, byocl_error *err)
{
    if (!m || n < 0 || (n > 0 && (!names || !values)))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_bind_params: bad arguments");
    byocl_function *old = byocl_module_find(m, BIND_TARGET);
    if (!old)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module",
                               BIND_TARGET);
    if (n == 0)
        return BYOCL_OK;
    int *bound_by = malloc((size_t)(old->n_nodes > 0 ? old->n_nodes : 1) * sizeof *bound_by);
    if (!bound_by)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory binding parameters");
    for (int id = 0; id < old->n_nodes; id++)
        bound_by[id] = -1;
    byocl_status st = match_names(old, names, values, n, bound_by, err);
    if (st != BYOCL_OK) {
        free(bound_by);
        return st;
    }
    /* A name no function has, so that old and new can live side by side for a moment. */
    char tmp_name[64];
    for (int k = 0;; k++) {
        snprintf(tmp_name, sizeof tmp_name, "%s.bind_params.%d", BIND_TARGET, k);
        if (!byocl_module_find(m, tmp_name))
            break;
    }
    byocl_function *fresh = byocl_module_add_function(m, tmp_name, err);
    if (!fresh) {
        free(bound_by);
        return err ? err->status : BYOCL_ERR_NOMEM;
    }
    st = build_bound(old, fresh, bound_by, values, err);
    free(bound_by);
    if (st == BYOCL_OK)
        st = byocl_module_replace(m, old->name, fresh, err);
    else
        byocl_module_remove(m, tmp_name, NULL);
    return st;
}
