/* The reference executor: walks a function's nodes in id order (they are topologically
 * ordered) and runs each op's plain C kernel on host memory. Calls of global functions run
 * the callee the same way. Every intermediate value is released right after its last use,
 * so peak memory is what the live values need, not the whole graph. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/reference.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"
#include "value.h"

typedef struct run_ctx {
    const byocl_module *mod;
} run_ctx;

static byocl_status run_function(const run_ctx *ctx, const byocl_function *fn,
                                 const byocl_value *args, int depth, byocl_value *out,
                                 byocl_error *err);

/* Marks the nodes the body needs and, for each, the id of its last user (INT_MAX for the
 * body: it is the result). Nodes the body does not need are dead code and never run. */
static void plan_lifetimes(const byocl_function *fn, bool *needed, int *last_use)
{
    for (int id = 0; id < fn->n_nodes; id++) {
        needed[id] = false;
        last_use[id] = -1;
    }
    needed[fn->body] = true;
    last_use[fn->body] = INT_MAX;
    for (int id = fn->body; id >= 0; id--) {
        if (!needed[id])
            continue;
        const byocl_node *n = &fn->nodes[id];
        for (int k = 0; k < n->n_args; k++) {
            int a = n->args[k];
            needed[a] = true;
            if (last_use[a] < id)
                last_use[a] = id;
        }
    }
}

/* The op's kernel on the flattened argument tensors, into outputs shaped by the node's
 * inferred type. */
static byocl_status run_op(const byocl_node *n, const byocl_value *vals, byocl_value *out,
                           byocl_error *err)
{
    const byocl_op *op = n->op;
    if (!op->ref)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "%s has no reference kernel",
                               op->name);
    int n_in = 0;
    for (int k = 0; k < n->n_args; k++)
        n_in += vals[n->args[k]].n;
    const byocl_tensor **in = malloc((n_in > 0 ? (size_t)n_in : 1) * sizeof *in);
    if (!in)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0, at = 0; k < n->n_args; k++)
        for (int i = 0; i < vals[n->args[k]].n; i++)
            in[at++] = vals[n->args[k]].tensors[i];
    byocl_status st = ref_value_alloc(out, n->type, err);
    if (st == BYOCL_OK) {
        st = op->ref(&n->attrs, in, n_in, out->tensors, out->n, err);
        if (st != BYOCL_OK)
            ref_value_release(out);
    }
    free(in);
    return st;
}

static byocl_status run_call_global(const run_ctx *ctx, const byocl_node *n,
                                    const byocl_value *vals, int depth, byocl_value *out,
                                    byocl_error *err)
{
    const byocl_function *callee = byocl_module_find(ctx->mod, n->callee);
    if (!callee)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "call of @%s, which is not defined",
                               n->callee);
    if (callee->n_params != n->n_args)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "@%s takes %d argument%s but was given %d",
                               callee->name, callee->n_params, callee->n_params == 1 ? "" : "s",
                               n->n_args);
    /* Without a verified module a recursive call would never end: the call depth can
     * exceed the number of functions only through recursion. */
    if (depth + 1 >= ctx->mod->n_fns)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "recursive call of @%s", callee->name);
    byocl_value *args = calloc(n->n_args > 0 ? (size_t)n->n_args : 1, sizeof *args);
    if (!args)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n->n_args; k++)
        args[k] = vals[n->args[k]]; /* borrowed: the callee takes its own references */
    byocl_status st = run_function(ctx, callee, args, depth + 1, out, err);
    free(args);
    return st;
}

/* Evaluates node `id` into vals[id]. */
static byocl_status run_node(const run_ctx *ctx, const byocl_function *fn, int id,
                             const int *param_of, const byocl_value *args, byocl_value *vals,
                             int depth, byocl_error *err)
{
    const byocl_node *n = &fn->nodes[id];
    byocl_value *out = &vals[id];
    switch (n->kind) {
    case BYOCL_NODE_VAR:
        if (param_of[id] < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%%%s is not a parameter of @%s",
                                   n->name ? n->name : "?", fn->name);
        return ref_value_from_tensors(out, n->type, args[param_of[id]].tensors,
                                      args[param_of[id]].n, err);
    case BYOCL_NODE_CONSTANT:
        return ref_value_from_tensors(out, n->type, &n->value, 1, err);
    case BYOCL_NODE_CALL:
        return n->op ? run_op(n, vals, out, err)
                     : run_call_global(ctx, n, vals, depth, out, err);
    case BYOCL_NODE_TUPLE: {
        byocl_value *fields = calloc(n->n_args > 0 ? (size_t)n->n_args : 1, sizeof *fields);
        if (!fields)
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        for (int k = 0; k < n->n_args; k++)
            fields[k] = vals[n->args[k]]; /* borrowed */
        byocl_status st = ref_value_tuple(out, n->type, fields, n->n_args, err);
        free(fields);
        return st;
    }
    case BYOCL_NODE_GETITEM:
        return ref_value_field(out, &vals[n->args[0]], n->index, err);
    }
    return byocl_error_set(err, BYOCL_ERR_INVALID, "unknown node kind %d", (int)n->kind);
}

/* Checks that the argument values match the parameters' types. */
static byocl_status check_args(const byocl_function *fn, const byocl_value *args, int depth,
                               byocl_error *err)
{
    for (int k = 0; k < fn->n_params; k++) {
        const byocl_node *p = &fn->nodes[fn->params[k]];
        byocl_status st = ref_value_check(&args[k], p->type, err);
        if (st != BYOCL_OK) {
            if (depth == 0)
                byocl_error_prefix(err, "input %d (%%%s) of @%s: ", k, p->name, fn->name);
            else
                byocl_error_prefix(err, "in @%s: argument %%%s: ", fn->name, p->name);
            return st;
        }
    }
    return BYOCL_OK;
}

/* Checks up front that every node the run needs has an inferred type. */
static byocl_status check_typed(const byocl_function *fn, const bool *needed, byocl_error *err)
{
    for (int id = 0; id < fn->n_nodes; id++)
        if (needed[id] && fn->nodes[id].type->kind == BYOCL_TYPE_NONE) {
            byocl_error_set(err, BYOCL_ERR_TYPE,
                            "no inferred type (run byocl_infer_types before running)");
            ops_node_error_at(err, fn, id);
            return BYOCL_ERR_TYPE;
        }
    return BYOCL_OK;
}

static byocl_status run_function(const run_ctx *ctx, const byocl_function *fn,
                                 const byocl_value *args, int depth, byocl_value *out,
                                 byocl_error *err)
{
    *out = BYOCL_VALUE_EMPTY;
    if (fn->body < 0 || fn->body >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    byocl_status st = check_args(fn, args, depth, err);
    if (st != BYOCL_OK)
        return st;
    size_t n = (size_t)fn->n_nodes;
    bool *needed = malloc(n * sizeof *needed);
    int *last_use = malloc(n * sizeof *last_use);
    int *param_of = malloc(n * sizeof *param_of);
    byocl_value *vals = calloc(n, sizeof *vals);
    if (!needed || !last_use || !param_of || !vals) {
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory running @%s", fn->name);
        goto done;
    }
    plan_lifetimes(fn, needed, last_use);
    if ((st = check_typed(fn, needed, err)) != BYOCL_OK)
        goto done;
    for (size_t id = 0; id < n; id++)
        param_of[id] = -1;
    for (int k = 0; k < fn->n_params; k++)
        param_of[fn->params[k]] = k;

    for (int id = 0; id <= fn->body; id++) {
        if (!needed[id])
            continue;
        st = run_node(ctx, fn, id, param_of, args, vals, depth, err);
        if (st != BYOCL_OK) {
            ops_node_error_at(err, fn, id);
            goto done;
        }
        const byocl_node *node = &fn->nodes[id];
        for (int k = 0; k < node->n_args; k++)
            if (last_use[node->args[k]] == id)
                ref_value_release(&vals[node->args[k]]);
    }
    *out = vals[fn->body];
    vals[fn->body] = BYOCL_VALUE_EMPTY;
done:
    for (size_t id = 0; vals && id < n; id++)
        ref_value_release(&vals[id]);
    free(vals);
    free(param_of);
    free(last_use);
    free(needed);
    return st;
}

byocl_status byocl_reference_run(const byocl_module *m, const char *fn_name,
                                 byocl_tensor *const *inputs, int n_inputs,
                                 byocl_tensor ***outputs, int *n_outputs, byocl_error *err)
{
    if (!outputs || !n_outputs)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_reference_run: no outputs given");
    *outputs = NULL;
    *n_outputs = 0;
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_reference_run: no module");
    if (!fn_name)
        fn_name = "main";
    const byocl_function *fn = byocl_module_find(m, fn_name);
    if (!fn)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module",
                               fn_name);
    if (n_inputs != fn->n_params || (n_inputs > 0 && !inputs))
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s takes %d input%s, got %d", fn->name,
                               fn->n_params, fn->n_params == 1 ? "" : "s", inputs ? n_inputs : 0);
    byocl_value *args = calloc(n_inputs > 0 ? (size_t)n_inputs : 1, sizeof *args);
    if (!args)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (int k = 0; st == BYOCL_OK && k < n_inputs; k++) {
        const byocl_node *p = &fn->nodes[fn->params[k]];
        if (!inputs[k])
            st = byocl_error_set(err, BYOCL_ERR_INVALID, "input %d (%%%s) of @%s is missing", k,
                                 p->name, fn->name);
        else
            st = ref_value_from_tensors(&args[k], NULL, &inputs[k], 1, err);
    }
    byocl_value result = BYOCL_VALUE_EMPTY;
    run_ctx ctx = {m};
    if (st == BYOCL_OK)
        st = run_function(&ctx, fn, args, 0, &result, err);
    for (int k = 0; k < n_inputs; k++)
        ref_value_release(&args[k]);
    free(args);
    if (st == BYOCL_OK)
        *outputs = ref_value_take_tensors(&result, n_outputs);
    return st;
}

void byocl_tensors_free(byocl_tensor **tensors, int n)
{
    if (!tensors)
        return;
    for (int i = 0; i < n; i++)
        byocl_tensor_unref(tensors[i]);
    free(tensors);
}
