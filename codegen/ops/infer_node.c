/* One node's type from its arguments' types, through its op's type relation (or its
 * callee's signature): the step of byocl_infer_types (codegen/passes/infer_types.c) for one
 * node, which frontends also take while they build (the ONNX importer needs shapes). */
#include <stdlib.h>

#include "node_util.h"
#include "op_impl.h"

static byocl_status infer_call_global(const byocl_module *m, const byocl_function *fn,
                                      const byocl_node *n, const byocl_type **out,
                                      byocl_error *err)
{
    const byocl_function *callee = byocl_module_find(m, n->callee);
    if (!callee)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "call of @%s, which is not defined",
                               n->callee);
    if (n->n_args != callee->n_params)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "@%s takes %d argument%s but was given %d",
                               callee->name, callee->n_params, callee->n_params == 1 ? "" : "s",
                               n->n_args);
    for (int k = 0; k < n->n_args; k++) {
        const byocl_type *want = callee->nodes[callee->params[k]].type;
        const byocl_type *got = fn->nodes[n->args[k]].type;
        if (!byocl_type_equal(want, got)) {
            char a[256], b[256];
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "argument %d of @%s (%%%s) should be %s, got %s", k,
                                   callee->name, callee->nodes[callee->params[k]].name,
                                   byocl_type_str(want, a, sizeof a),
                                   byocl_type_str(got, b, sizeof b));
        }
    }
    *out = callee->ret_type;
    return BYOCL_OK;
}

/* An op's result whose element count overflows (broadcasting or reshaping huge shapes)
 * is refused here, before anything sizes buffers from it. */
static byocl_status check_countable(const byocl_type *t, byocl_error *err)
{
    char s[256];
    if (t->kind == BYOCL_TYPE_TENSOR && byocl_shape_numel(&t->shape) < 0)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "result shape %s has more elements than a 64-bit count holds",
                               byocl_shape_str(&t->shape, s, sizeof s));
    for (int i = 0; t->kind == BYOCL_TYPE_TUPLE && i < t->n_fields; i++)
        if (check_countable(t->fields[i], err) != BYOCL_OK)
            return err ? err->status : BYOCL_ERR_UNSUPPORTED;
    return BYOCL_OK;
}

/* The type of node n of fn given its arguments' types (all inferred). */
static byocl_status node_type(byocl_module *m, const byocl_function *fn, const byocl_node *n,
                              const byocl_type *const *arg_types, const byocl_type **result,
                              byocl_error *err)
{
    char s[256];
    switch (n->kind) {
    case BYOCL_NODE_VAR:
    case BYOCL_NODE_CONSTANT:
        if (n->type->kind == BYOCL_TYPE_NONE)
            return byocl_error_set(err, BYOCL_ERR_TYPE, "no type given");
        *result = n->type;
        return BYOCL_OK;
    case BYOCL_NODE_CALL: {
        if (n->callee)
            return infer_call_global(m, fn, n, result, err);
        const byocl_tensor *stack_values[16] = {NULL};
        const byocl_tensor **values = n->n_args <= 16 ? stack_values
                                                      : calloc((size_t)n->n_args, sizeof *values);
        if (!values)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        for (int k = 0; k < n->n_args; k++)
            if (fn->nodes[n->args[k]].kind == BYOCL_NODE_CONSTANT)
                values[k] = fn->nodes[n->args[k]].value;
        byocl_infer_ctx ctx = {.mod = m, .arg_types = arg_types, .n_args = n->n_args,
                               .attrs = &n->attrs, .arg_values = values};
        byocl_type out = ir_type_none;
        byocl_status st = n->op->infer(&ctx, &out, err);
        if (values != stack_values)
            free(values);
        if (st == BYOCL_OK)
            st = check_countable(&out, err);
        if (st != BYOCL_OK)
            return st;
        *result = ir_type_copy(m, &out);
        return BYOCL_OK;
    }
    case BYOCL_NODE_TUPLE:
        *result = byocl_module_tuple_type(m, arg_types, n->n_args);
        return BYOCL_OK;
    case BYOCL_NODE_GETITEM: {
        const byocl_type *t = arg_types[0];
        if (t->kind != BYOCL_TYPE_TUPLE)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "item %d taken from %s, which is not a tuple", n->index,
                                   byocl_type_str(t, s, sizeof s));
        if (n->index >= t->n_fields)
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "item %d taken from a tuple of %d field%s", n->index,
                                   t->n_fields, t->n_fields == 1 ? "" : "s");
        *result = t->fields[n->index];
        return BYOCL_OK;
    }
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID, "unknown node kind %d", (int)n->kind);
}

byocl_status ops_infer_node(byocl_module *m, byocl_function *fn, int id, byocl_error *err)
{
    byocl_node *n = &fn->nodes[id];
    const byocl_type *stack_types[16] = {NULL};
    const byocl_type **types = n->n_args <= 16 ? stack_types
                                               : malloc(sizeof *types * (size_t)n->n_args);
    if (!types)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int k = 0; k < n->n_args && st == BYOCL_OK; k++) {
        types[k] = fn->nodes[n->args[k]].type;
        if (types[k]->kind == BYOCL_TYPE_NONE)
            st = byocl_error_set(err, BYOCL_ERR_TYPE, "argument %d has no type", k);
    }
    const byocl_type *result = NULL;
    if (st == BYOCL_OK)
        st = node_type(m, fn, n, types, &result, err);
    if (types != stack_types)
        free(types);
    if (st != BYOCL_OK)
        return st;
    if (!result)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    n->type = result;
    return BYOCL_OK;
}
