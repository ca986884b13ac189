/* ops_fold_node (fold.h): one call evaluated with its op's reference kernel. */
#include <string.h>

#include "fold.h"

/* The constant tensors behind argument `arg` (a constant, or a tuple of constants),
 * appended to ts; false when some field is not a constant. */
static bool constant_args(const byocl_function *fn, int arg, const byocl_tensor **ts, int *n,
                          int max)
{
    const byocl_node *a = &fn->nodes[arg];
    if (a->kind == BYOCL_NODE_CONSTANT && *n < max) {
        ts[(*n)++] = a->value;
        return true;
    }
    if (a->kind != BYOCL_NODE_TUPLE)
        return false;
    for (int k = 0; k < a->n_args; k++)
        if (!constant_args(fn, a->args[k], ts, n, max))
            return false;
    return true;
}

#define FOLD_MAX_INPUTS 64

byocl_status ops_fold_node(const byocl_function *fn, int id, ops_fold_limit limit,
                           byocl_tensor **out, byocl_error *err)
{
    *out = NULL;
    const byocl_node *n = &fn->nodes[id];
    if (n->kind != BYOCL_NODE_CALL || !n->op || !n->op->ref ||
        n->type->kind != BYOCL_TYPE_TENSOR)
        return BYOCL_OK;
    int64_t numel = byocl_shape_numel(&n->type->shape);
    size_t bytes = (size_t)numel * byocl_dtype_size(n->type->dtype);
    if (numel < 0 || (bytes > OPS_FOLD_MAX_BYTES && limit == OPS_FOLD_SMALL))
        return BYOCL_OK;
    if (strcmp(n->op->name, "shape_of") == 0) {
        /* Only the argument's static shape is read: no kernel needed. */
        byocl_tensor *t = byocl_tensor_new(n->type->dtype, &n->type->shape, err);
        if (!t)
            return err ? err->status : BYOCL_ERR_NOMEM;
        const byocl_shape *s = &fn->nodes[n->args[0]].type->shape;
        for (int d = 0; d < s->rank; d++)
            byocl_tensor_set(t, d, (double)s->dims[d]);
        *out = t;
        return BYOCL_OK;
    }
    const byocl_tensor *in[FOLD_MAX_INPUTS];
    int n_in = 0;
    for (int k = 0; k < n->n_args; k++)
        if (!constant_args(fn, n->args[k], in, &n_in, FOLD_MAX_INPUTS))
            return BYOCL_OK;
    size_t in_bytes = 0;
    for (int k = 0; k < n_in; k++)
        in_bytes += byocl_tensor_nbytes(in[k]);
    if (bytes > OPS_FOLD_MAX_BYTES && bytes > in_bytes)
        return BYOCL_OK;
    if (n->op->identity && fn->nodes[n->args[0]].kind == BYOCL_NODE_CONSTANT) {
        /* Constants are never written: the folded node shares its argument's data
         * (bench's annotated copy of wide_resnet50_2 had copied 275 MB of weights). */
        *out = byocl_tensor_ref(fn->nodes[n->args[0]].value);
        return BYOCL_OK;
    }
    byocl_tensor *t = byocl_tensor_new(n->type->dtype, &n->type->shape, err);
    if (!t)
        return err ? err->status : BYOCL_ERR_NOMEM;
    byocl_status st = n->op->ref(&n->attrs, in, n_in, &t, 1, err);
    if (st != BYOCL_OK) {
        byocl_tensor_unref(t);
        return st;
    }
    *out = t;
    return BYOCL_OK;
}

byocl_status ops_fold_in_place(byocl_function *fn, int id, ops_fold_limit limit, bool *done,
                               byocl_error *err)
{
    byocl_tensor *t;
    byocl_status st = ops_fold_node(fn, id, limit, &t, err);
    *done = t != NULL;
    if (t) {
        byocl_node *n = &fn->nodes[id];
        n->kind = BYOCL_NODE_CONSTANT;
        n->op = NULL;
        n->n_args = 0;
        n->args = NULL;
        n->attrs = (byocl_attrs){0};
        n->value = t; /* the node takes the reference */
    }
    return st;
}
