/* Pass: the verifier. Checks that a module is well formed without changing it; errors
 * name the function and node. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"

static byocl_status verify_node(const byocl_module *m, const byocl_function *fn, int id,
                                bool require_types, byocl_error *err)
{
    const byocl_node *n = &fn->nodes[id];
    for (int k = 0; k < n->n_args; k++) {
        int a = n->args[k];
        if (a < 0 || a >= id)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "argument %d refers to node #%d, which is not defined before it",
                                   k, a);
    }
    switch (n->kind) {
    case BYOCL_NODE_VAR: {
        bool is_param = false;
        for (int k = 0; k < fn->n_params && !is_param; k++)
            is_param = fn->params[k] == id;
        if (!is_param)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "variable %%%s is not a parameter of @%s (free variable)",
                                   n->name ? n->name : "?", fn->name);
        if (n->type->kind == BYOCL_TYPE_NONE)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "parameter has no type");
        break;
    }
    case BYOCL_NODE_CONSTANT:
        if (!n->value)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "constant without a value");
        break;
    case BYOCL_NODE_CALL:
        if (n->callee) {
            const byocl_function *callee = byocl_module_find(m, n->callee);
            if (!callee)
                return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                                       "call of @%s, which is not defined", n->callee);
            if (callee->n_params != n->n_args)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "@%s takes %d arguments but was given %d", n->callee,
                                       callee->n_params, n->n_args);
        } else if (!n->op) {
            return byocl_error_set(err, BYOCL_ERR_INVALID, "call without an op or callee");
        } else {
            const byocl_op *op = n->op;
            if (n->n_args < op->min_args || (op->max_args >= 0 && n->n_args > op->max_args))
                return byocl_error_set(err, BYOCL_ERR_INVALID, "%s was given %d arguments",
                                       op->name, n->n_args);
            if (n->attrs.n != op->n_attrs)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "attributes of %s were not validated", op->name);
            for (int k = 0; k < op->n_attrs; k++)
                if (strcmp(n->attrs.items[k].key, op->attrs[k].name) != 0)
                    return byocl_error_set(err, BYOCL_ERR_INVALID,
                                           "attribute %d of %s is '%s', expected '%s'", k,
                                           op->name, n->attrs.items[k].key, op->attrs[k].name);
        }
        break;
    case BYOCL_NODE_TUPLE: break;
    case BYOCL_NODE_GETITEM:
        if (n->n_args != 1 || n->index < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "malformed tuple item access");
        break;
    }
    if (require_types && n->type->kind == BYOCL_TYPE_NONE)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "node has no type (run type inference)");
    return BYOCL_OK;
}

static byocl_status verify_function(const byocl_module *m, const byocl_function *fn,
                                    bool require_types, byocl_error *err)
{
    if (fn->body < 0 || fn->body >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    for (int k = 0; k < fn->n_params; k++) {
        int p = fn->params[k];
        if (p < 0 || p >= fn->n_nodes || fn->nodes[p].kind != BYOCL_NODE_VAR)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "parameter %d of @%s is not a variable", k, fn->name);
        for (int j = 0; j < k; j++)
            if (strcmp(fn->nodes[fn->params[j]].name, fn->nodes[p].name) == 0)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "@%s has two parameters named %%%s", fn->name,
                                       fn->nodes[p].name);
    }
    for (int id = 0; id < fn->n_nodes; id++) {
        byocl_status st = verify_node(m, fn, id, require_types, err);
        if (st != BYOCL_OK) {
            ops_node_error_at(err, fn, id);
            return st;
        }
    }
    return BYOCL_OK;
}

byocl_status byocl_verify(const byocl_module *m, bool require_types, byocl_error *err)
{
    for (int i = 0; i < m->n_fns; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(m->fns[i]->name, m->fns[j]->name) == 0)
                return byocl_error_set(err, BYOCL_ERR_INVALID, "two functions named @%s",
                                       m->fns[i]->name);
    for (int i = 0; i < m->n_fns; i++) {
        byocl_status st = verify_function(m, m->fns[i], require_types, err);
        if (st != BYOCL_OK)
            return st;
    }
    /* Recursion and undefined callees. */
    int *order = malloc(sizeof *order * (size_t)(m->n_fns + 1));
    if (!order)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = ops_module_callee_order(m, order, err);
    free(order);
    return st;
}
