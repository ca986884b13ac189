/* Which calls the OpenCL target accepts: the ops the generator has kernels for, on
 * float32 and float16 tensors (float16 as storage: every kernel computes in float), and
 * the int32 or int64 indices of take, gather, gather_nd, scatter_elements, scatter_nd and
 * one_hot, trilu's int32 or int64 k, topk's int32 or int64 indices and argmax/argmin's
 * int32 results. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cl_impl.h"
#include "ops/elemwise_util.h"
#include "ops/index.h"
#include "ops/op_impl.h"
#include "ops/reduce.h"

/* Kernels index with 32-bit ints. */
#define CLG_MAX_ELEMS ((int64_t)1 << 31)
/* topk's steps in one work-item (line length times k, kernels_cl/topk.cl): about 0.1 s
 * on a CPU core at the bound; longer sorts stay on the host, which sorts in n log n. */
#define CLG_MAX_TOPK_STEPS ((int64_t)1 << 26)
/* Taps of a conv2d kernel are unrolled in the generated code. */
#define CLG_MAX_CONV_TAPS 256

/* Besides the elementwise ops (clg_is_elemwise_op: cl_epilogue.c's table). */
static const char *const supported_ops[] = {
    "nn.conv2d",     "nn.dense",      "nn.max_pool2d",    "nn.avg_pool2d",
    "nn.global_avg_pool2d", "nn.softmax", "nn.log_softmax", "nn.layer_norm",
    "nn.batch_flatten", "reshape",
    "transpose",     "concatenate",   "sum",              "mean",
    "prod",          "max",           "min",              "nn.batch_matmul",
    "strided_slice", "broadcast_to",  "take",             "gather",
    "image.resize2d",
    "nn.conv2d_transpose", "argmax",  "argmin",           "topk",
    "one_hot",       "cumsum",        "scatter_elements", "scatter_nd",
    "nn.depth_to_space", "nn.space_to_depth", "nn.pad",
    "all",           "any",           "variance",         "trilu",
    "gather_nd",
};

static bool refuse(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool refuse(char *why, size_t why_len, const char *fmt, ...)
{
    if (why && why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* A tensor that is non-empty and small enough to index with an int. */
static bool size_ok(const byocl_type *type, char *why, size_t why_len)
{
    int64_t n = byocl_shape_numel(&type->shape);
    if (n == 0)
        return refuse(why, why_len, "empty tensors are not supported");
    if (n < 0 || n >= CLG_MAX_ELEMS)
        return refuse(why, why_len, "tensors of 2^31 elements or more are not supported");
    return true;
}

/* Which dtypes besides float32 and float16 a tensor may have. */
typedef enum other_dtypes {
    FLOAT_ONLY,
    INT32_TOO, /* argmax/argmin's results */
    BOOL_TOO   /* the ops on bools (clg_takes_bool) */
} other_dtypes;

/* Every tensor of `type` (tuple fields included) is float32/float16 (or what `other`
 * allows), non-empty and small enough to index with an int. */
static bool tensors_ok(const byocl_type *type, other_dtypes other, char *why, size_t why_len)
{
    if (type->kind == BYOCL_TYPE_TUPLE) {
        for (int i = 0; i < type->n_fields; i++)
            if (!tensors_ok(type->fields[i], other, why, why_len))
                return false;
        return true;
    }
    if (type->kind != BYOCL_TYPE_TENSOR)
        return refuse(why, why_len, "the call has no inferred type");
    if (type->dtype != BYOCL_FLOAT32 && type->dtype != BYOCL_FLOAT16 &&
        !(other == INT32_TOO && type->dtype == BYOCL_INT32) &&
        !(other == BOOL_TOO && type->dtype == BYOCL_BOOL))
        return refuse(why, why_len,
                      "dtype %s is not supported (the opencl target computes float32 and "
                      "float16)",
                      byocl_dtype_name(type->dtype));
    return size_ok(type, why, why_len);
}

/* The ops that take or give bools, as 0.0f and 1.0f in float (cl_epilogue.c):
 * comparisons, logical ops, isnan, isinf, where, cast, and the reductions all and any. */
static bool takes_bool(const char *op)
{
    static const char *const ops[] = {"equal",       "not_equal",   "less",        "greater",
                                      "less_equal",  "greater_equal", "logical_and", "logical_or",
                                      "logical_xor", "logical_not", "isnan",       "isinf",
                                      "where",       "cast",        "all",         "any"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* Which argument of `op` holds indices: the second of take, gather, gather_nd and the
 * scatters (and trilu's k, an integer read the same way), one_hot's first; -1 for ops
 * without. */
static int indices_arg(const char *op)
{
    if (strcmp(op, "one_hot") == 0)
        return 0;
    bool second = strcmp(op, "take") == 0 || strcmp(op, "gather") == 0 ||
                  strcmp(op, "gather_nd") == 0 || strcmp(op, "trilu") == 0 ||
                  strcmp(op, "scatter_elements") == 0 || strcmp(op, "scatter_nd") == 0;
    return second ? 1 : -1;
}

/* The extent of the axis that element i of call n's indices indexes: row j of
 * scatter_nd's and gather_nd's indices indexes data axis j after the batch axes; the
 * others index one axis (take's axis None: the data flattened). */
static int64_t index_extent(const byocl_node *n, const byocl_function *fn, int64_t i)
{
    const char *op = n->op->name;
    const byocl_shape *data = &fn->nodes[n->args[0]].type->shape;
    if (strcmp(op, "scatter_nd") == 0 || strcmp(op, "gather_nd") == 0) {
        int64_t row = byocl_tensor_numel(fn->nodes[n->args[1]].value) /
                      byocl_tensor_shape(fn->nodes[n->args[1]].value)->dims[0];
        return data->dims[byocl_attrs_get_int(&n->attrs, "batch_dims", 0) + i / row];
    }
    int axis = strcmp(op, "take") == 0 ? ops_take_axis(&n->attrs, data->rank)
                                       : ops_gather_axis(&n->attrs, data->rank);
    return axis < 0 ? byocl_shape_numel(data) : data->dims[axis];
}

/* The indices of take, gather, gather_nd, the scatters and one_hot (and trilu's k): an
 * int32 or int64 tensor. An index out of range (take with mode "fast"; gather, gather_nd
 * and the scatters, where -n..-1 count from the end) is an error that only the host
 * reports (the kernels give NaN or skip the update there): constant indices are checked
 * here, so that a region never holds a call the host would fail. one_hot has an answer
 * for every index, trilu for every k. */
static bool indices_ok(const byocl_node *n, const byocl_function *fn, char *why,
                       size_t why_len)
{
    const char *op = n->op->name;
    const byocl_node *idx = &fn->nodes[n->args[indices_arg(op)]];
    const byocl_type *t = idx->type;
    if (t->kind != BYOCL_TYPE_TENSOR)
        return refuse(why, why_len, "the indices have no inferred type");
    if (t->dtype != BYOCL_INT32 && t->dtype != BYOCL_INT64)
        return refuse(why, why_len,
                      "%s's %s %s (the opencl target reads int32 and int64)", op,
                      strcmp(op, "trilu") == 0 ? "k is" : "indices are",
                      byocl_dtype_name(t->dtype));
    if (!size_ok(t, why, why_len))
        return false;
    bool take = strcmp(op, "take") == 0;
    /* The kernel's index arithmetic has no batch: such a take stays on the host. */
    if (take && byocl_attrs_get_int(&n->attrs, "batch_dims", 0) != 0)
        return refuse(why, why_len, "take with batch_dims %lld is not supported (the opencl "
                      "target takes batch_dims 0)",
                      (long long)byocl_attrs_get_int(&n->attrs, "batch_dims", 0));
    if (idx->kind != BYOCL_NODE_CONSTANT || strcmp(op, "one_hot") == 0 ||
        strcmp(op, "trilu") == 0 ||
        (take && ops_take_mode_of(&n->attrs) != OPS_TAKE_FAST))
        return true;
    for (int64_t i = 0, m = byocl_tensor_numel(idx->value); i < m; i++) {
        int64_t v = elemwise_load_int(idx->value, i), count = index_extent(n, fn, i);
        if (v >= (take ? 0 : -count) && v < count)
            continue;
        if (take)
            return refuse(why, why_len, "take: index %lld is out of range for an axis of %lld "
                          "(mode \"fast\" fails there; the host reports it)",
                          (long long)v, (long long)count);
        return refuse(why, why_len,
                      "%s: index %lld is out of range for an axis of %lld (the host reports it)",
                      op, (long long)v, (long long)count);
    }
    return true;
}

/* A scatter's gather form (cl_emit_scan.c) takes numel(output) x candidates steps. */
_Static_assert(CLG_MAX_SCATTER_STEPS == (int64_t)1 << 24, "the refusal below says 2^24");
static bool scatter_cost_ok(const byocl_node *n, const byocl_function *fn, char *why,
                            size_t why_len)
{
    int64_t elems = byocl_shape_numel(&n->type->shape), each = clg_scatter_candidates(fn, n);
    if (each <= CLG_MAX_SCATTER_STEPS / elems)
        return true;
    return refuse(why, why_len,
                  "%s: %lld output elements x %lld candidate updates each is over 2^24 steps "
                  "(the opencl target's gather form; the host applies the updates in one pass)",
                  n->op->name, (long long)elems, (long long)each);
}

/* topk's results: values as any float tensor, indices int32 or int64; with both, each read
 * through a TupleGetItem (the generator stores the fields apart, cl_graph.c); a line
 * short enough for one work-item to sort. */
static bool topk_ok(const byocl_node *n, int node, const byocl_function *fn, char *why,
                    size_t why_len)
{
    const byocl_type *x = fn->nodes[n->args[0]].type;
    ops_topk p;
    if (x->kind != BYOCL_TYPE_TENSOR || !ops_topk_plan(&n->attrs, &x->shape, &p))
        return refuse(why, why_len, "topk: the call is not type-checked");
    const byocl_type *t = n->type;
    for (int f = 0; f < p.values + p.indices; f++) {
        const byocl_type *field = t->kind == BYOCL_TYPE_TUPLE ? t->fields[f] : t;
        bool indices = f == 1 || !p.values;
        if (indices ? !size_ok(field, why, why_len)
                    : !tensors_ok(field, FLOAT_ONLY, why, why_len))
            return false;
    }
    if (p.len * p.k > CLG_MAX_TOPK_STEPS)
        return refuse(why, why_len,
                      "topk: keeping %lld of %lld elements per line takes up to %lld steps in "
                      "one work-item (at most 2^26); the host sorts it",
                      (long long)p.k, (long long)p.len, (long long)(p.k * p.len));
    if (!(p.values && p.indices))
        return true;
    for (int id = node + 1; id <= fn->body; id++) {
        const byocl_node *user = &fn->nodes[id];
        bool reads = false;
        for (int k = 0; k < user->n_args; k++)
            reads = reads || user->args[k] == node;
        if (reads && user->kind != BYOCL_NODE_GETITEM)
            return refuse(why, why_len,
                          "topk: its (values, indices) tuple is used whole; the opencl target "
                          "needs each result taken by a TupleGetItem");
    }
    if (fn->body == node)
        return refuse(why, why_len,
                      "topk: its (values, indices) tuple is returned whole; the opencl target "
                      "needs each result taken by a TupleGetItem");
    return true;
}

/* variance reads its mean at the output's index (kernels_cl/reduce.cl), so the mean must
 * have the data's shape with the reduced axes 1: what relay.variance passes. */
static bool variance_mean_ok(const byocl_node *n, const byocl_function *fn, char *why,
                             size_t why_len)
{
    const byocl_shape *data = &fn->nodes[n->args[0]].type->shape;
    const byocl_shape *mean = &fn->nodes[n->args[1]].type->shape;
    bool reduced[BYOCL_MAX_RANK];
    byocl_error err = {0};
    if (ops_reduce_axes(&n->attrs, data->rank, reduced, &err) != BYOCL_OK)
        return refuse(why, why_len, "%s", err.msg);
    for (int d = 0; d < data->rank; d++)
        if (mean->dims[d] != (reduced[d] ? 1 : data->dims[d]))
            return refuse(why, why_len,
                          "variance's mean must be 1 along the reduced axes and the data's size "
                          "along the others (as relay.variance builds it); axis %d has %lld",
                          d, (long long)mean->dims[d]);
    return true;
}

static bool layout_ok(const byocl_attrs *attrs, const char *key, const char *want,
                      char *why, size_t why_len)
{
    const char *s = byocl_attrs_get_str(attrs, key, want);
    if (s[0] == '\0' || strcmp(s, want) == 0)
        return true;
    return refuse(why, why_len, "layout %s is not supported (%s only)", s, want);
}

static bool conv2d_ok(const byocl_node *n, const byocl_function *fn, char *why, size_t why_len)
{
    if (!layout_ok(&n->attrs, "data_layout", "NCHW", why, why_len) ||
        !layout_ok(&n->attrs, "kernel_layout", "OIHW", why, why_len) ||
        !layout_ok(&n->attrs, "out_layout", "NCHW", why, why_len))
        return false;
    const byocl_type *w = fn->nodes[n->args[1]].type;
    if (w->kind == BYOCL_TYPE_TENSOR && w->shape.rank == 4 &&
        w->shape.dims[2] * w->shape.dims[3] > CLG_MAX_CONV_TAPS)
        return refuse(why, why_len, "a kernel of %lld taps is not supported (at most %d)",
                      (long long)(w->shape.dims[2] * w->shape.dims[3]), CLG_MAX_CONV_TAPS);
    const int64_t *strides = NULL;
    int k = byocl_attrs_get_ints(&n->attrs, "strides", &strides);
    for (int i = 0; i < k; i++)
        if (strides[i] > CLG_MAX_CONV_STRIDE)
            return refuse(why, why_len, "strides above %d are not supported",
                          CLG_MAX_CONV_STRIDE);
    return true;
}

bool clg_supports(const byocl_function *fn, int node, char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (!fn || node < 0 || node >= fn->n_nodes)
        return refuse(why, why_len, "no such node");
    const byocl_node *n = &fn->nodes[node];
    if (n->kind != BYOCL_NODE_CALL)
        return refuse(why, why_len, "only op calls run on the opencl target");
    if (!n->op)
        return refuse(why, why_len,
                      "calls of global functions (@%s) are not supported by the opencl target",
                      n->callee);
    const char *op = n->op->name;
    bool known = clg_is_elemwise_op(op);
    for (size_t i = 0; i < sizeof supported_ops / sizeof supported_ops[0]; i++)
        known = known || strcmp(op, supported_ops[i]) == 0;
    /* The 3-D windows would need a depth loop in every conv and pool kernel and schedule;
     * they stay on the host, which runs them as direct loop nests. */
    static const char *const ops_3d[] = {"nn.conv3d", "nn.conv3d_transpose", "nn.max_pool3d",
                                         "nn.avg_pool3d"};
    for (size_t i = 0; i < sizeof ops_3d / sizeof ops_3d[0]; i++)
        if (strcmp(op, ops_3d[i]) == 0)
            return refuse(why, why_len,
                          "op %s is not supported by the opencl target: its conv and pool "
                          "kernels are 2-D (NCHW) only; 3-D (NCDHW) windows run on the host",
                          op);
    if (!known)
        return refuse(why, why_len, "op %s is not supported by the opencl target", op);
    /* argmax and argmin: float data in, int32 positions out. */
    ops_reduce_kind reduce = ops_reduce_kind_of(op);
    bool int32_result = reduce == OPS_REDUCE_ARGMAX || reduce == OPS_REDUCE_ARGMIN;
    other_dtypes other = int32_result ? INT32_TOO : takes_bool(op) ? BOOL_TOO : FLOAT_ONLY;
    bool topk = strcmp(op, "topk") == 0;
    if (topk ? !topk_ok(n, node, fn, why, why_len) : !tensors_ok(n->type, other, why, why_len))
        return false;
    bool scatter = strcmp(op, "scatter_elements") == 0 || strcmp(op, "scatter_nd") == 0;
    int indices = indices_arg(op);
    for (int k = 0; k < n->n_args; k++)
        if (!(k == indices ? indices_ok(n, fn, why, why_len)
                           : tensors_ok(fn->nodes[n->args[k]].type,
                                        other == BOOL_TOO ? BOOL_TOO : FLOAT_ONLY, why,
                                        why_len)))
            return false;
    if (scatter)
        return scatter_cost_ok(n, fn, why, why_len);
    if (strcmp(op, "nn.conv2d") == 0)
        return conv2d_ok(n, fn, why, why_len);
    if (reduce == OPS_REDUCE_VARIANCE)
        return variance_mean_ok(n, fn, why, why_len);
    if (strcmp(op, "nn.conv2d_transpose") == 0)
        return layout_ok(&n->attrs, "data_layout", "NCHW", why, why_len) &&
               layout_ok(&n->attrs, "kernel_layout", "IOHW", why, why_len) &&
               layout_ok(&n->attrs, "out_layout", "NCHW", why, why_len);
    if (strcmp(op, "nn.max_pool2d") == 0 || strcmp(op, "nn.avg_pool2d") == 0 ||
        strcmp(op, "nn.global_avg_pool2d") == 0)
        return layout_ok(&n->attrs, "layout", "NCHW", why, why_len) &&
               layout_ok(&n->attrs, "out_layout", "NCHW", why, why_len);
    return true;
}
