/* What host backends share: freeing a plan's groups, and the flops of an op call. */
#include <stdlib.h>
#include <string.h>

#include "host_backend.h"
#include "ir/ir_impl.h"
#include "ops/op_impl.h"
#include "ops/matmul.h"
#include "ops/reduce.h"

void host_groups_free(byocl_host_group *groups, int n_groups)
{
    if (!groups)
        return;
    for (int g = 0; g < n_groups; g++) {
        free(groups[g].nodes);
        free(groups[g].inputs);
        free(groups[g].outputs);
    }
    free(groups);
}

/* Leaf *k of `t` (depth-first), counting *k down. */
static const byocl_type *leaf(const byocl_type *t, int *k)
{
    if (t->kind != BYOCL_TYPE_TUPLE)
        return (*k)-- == 0 ? t : NULL;
    for (int f = 0; f < t->n_fields; f++) {
        const byocl_type *r = leaf(t->fields[f], k);
        if (r)
            return r;
    }
    return NULL;
}

const byocl_type *host_value_ref_type(const byocl_function *fn, byocl_value_ref v)
{
    if (v.node < 0 || v.node >= fn->n_nodes)
        return NULL;
    const byocl_type *t = fn->nodes[v.node].type;
    if (v.field < 0)
        return t->kind == BYOCL_TYPE_TENSOR ? t : NULL;
    int k = v.field;
    const byocl_type *r = leaf(t, &k);
    return r && r->kind == BYOCL_TYPE_TENSOR ? r : NULL;
}

/* Elements of the first tensor of a node's type (field 0 of a tuple). */
static double first_numel(const byocl_type *t)
{
    while (t->kind == BYOCL_TYPE_TUPLE && t->n_fields > 0)
        t = t->fields[0];
    if (t->kind != BYOCL_TYPE_TENSOR)
        return 0;
    int64_t n = byocl_shape_numel(&t->shape);
    return n > 0 ? (double)n : 0;
}

double host_node_flops(const byocl_function *fn, int node)
{
    const byocl_node *n = &fn->nodes[node];
    if (n->kind != BYOCL_NODE_CALL || !n->op)
        return 0;
    const char *op = n->op->name;
    double out = first_numel(n->type);
    const byocl_type *arg0 = n->n_args > 0 ? fn->nodes[n->args[0]].type : NULL;
    const byocl_type *arg1 = n->n_args > 1 ? fn->nodes[n->args[1]].type : NULL;
    if (strcmp(op, "nn.conv2d") == 0 && arg1 && arg1->kind == BYOCL_TYPE_TENSOR &&
        arg1->shape.rank == 4) /* OIHW: I is the input channels per group */
        return 2 * out * (double)(arg1->shape.dims[1] * arg1->shape.dims[2] * arg1->shape.dims[3]);
    if (strcmp(op, "nn.conv2d_transpose") == 0 && arg0 && arg0->kind == BYOCL_TYPE_TENSOR &&
        arg0->shape.rank == 4 && arg1 && arg1->kind == BYOCL_TYPE_TENSOR &&
        arg1->shape.rank == 4) /* IOHW: every input cell meets O / groups * H * W taps */
        return 2 * first_numel(arg0) *
               (double)(arg1->shape.dims[1] * arg1->shape.dims[2] * arg1->shape.dims[3]);
    if (strcmp(op, "nn.dense") == 0 && arg1 && arg1->kind == BYOCL_TYPE_TENSOR &&
        arg1->shape.rank == 2)
        return 2 * out * (double)arg1->shape.dims[1];
    ops_bmm_geom g;
    byocl_error ignored = {0};
    if (strcmp(op, "nn.batch_matmul") == 0 && arg0 && arg1 &&
        ops_batch_matmul_geometry(&n->attrs, &arg0->shape, &arg1->shape, &g, &ignored) ==
            BYOCL_OK)
        return 2 * out * (double)g.k;
    if (strcmp(op, "nn.max_pool2d") == 0 || strcmp(op, "nn.avg_pool2d") == 0) {
        const int64_t *pool = NULL;
        double window = 1;
        int k = byocl_attrs_get_ints(&n->attrs, "pool_size", &pool);
        for (int i = 0; i < k; i++)
            window *= (double)pool[i];
        return out * window;
    }
    if (strcmp(op, "nn.global_avg_pool2d") == 0 || ops_reduce_kind_of(op) != OPS_REDUCE_NONE)
        return arg0 ? first_numel(arg0) : 0;
    if (strcmp(op, "nn.batch_norm") == 0)
        return 2 * out;
    if (strcmp(op, "nn.softmax") == 0 || strcmp(op, "nn.log_softmax") == 0)
        return 3 * out;
    if (strcmp(op, "nn.layer_norm") == 0) /* the two sums, then subtract, scale, shift */
        return 7 * out;
    static const char *const data_movement[] = {
        "cast",    "copy",     "reshape",     "transpose",     "concatenate",
        "split",   "squeeze",  "expand_dims", "nn.batch_flatten", "annotation.compiler_begin",
        "annotation.compiler_end", "strided_slice", "broadcast_to", "take", "gather",
        "arange", "shape_of", "trilu", "nn.depth_to_space", "nn.space_to_depth",
    };
    for (size_t i = 0; i < sizeof data_movement / sizeof data_movement[0]; i++)
        if (strcmp(op, data_movement[i]) == 0)
            return 0;
    return out; /* elementwise */
}
