/* The ONNX losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as compositions of
 * Relay ops, after ONNX's reference implementation: for input [N, C, d1..dk] (log
 * probabilities) and target [N, d1..dk], loss[n, d] = -input[n, target[n, d], d] *
 * weight[target[n, d]], where a target equal to ignore_index gives 0 and weight 0;
 * reduction "none" keeps that tensor, "sum" adds it up, "mean" divides the sum by the sum
 * of the weights applied (the element count without weights or ignore_index).
 * SoftmaxCrossEntropyLoss is the same of nn.log_softmax(scores) over axis 1, and its optional
 * second output is that log_softmax. */
#include <string.h>

#include "onnx_import.h"

typedef enum { REDUCE_NONE, REDUCE_SUM, REDUCE_MEAN } loss_reduction;

typedef struct loss_args {
    int x;      /* log probabilities [N, C, d1..dk] */
    int target; /* [N, d1..dk], int32 or int64     */
    int weight; /* [C], or -1                       */
    bool has_ignore;
    int64_t ignore_index;
    loss_reduction reduction;
} loss_args;

/* op(args) with the int attribute "axis" (expand_dims, gather), or the one-element ints
 * (squeeze, as_list). */
static int with_axis(onnx_ctx *cx, const char *op, const int *args, int n, int64_t axis,
                     bool as_list)
{
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return -1;
    byocl_status st = as_list ? byocl_attrs_set_ints(cx->mod, a, "axis", &axis, 1)
                              : byocl_attrs_set_int(cx->mod, a, "axis", axis);
    if (onnx_attrs_ok(cx, st) != BYOCL_OK)
        return -1;
    return onnx_call(cx, op, args, n, a);
}

static int call2(onnx_ctx *cx, const char *op, int a, int b)
{
    int args[2] = {a, b};
    return a < 0 || b < 0 ? -1 : onnx_call(cx, op, args, 2, NULL);
}

/* where(mask, 0, x) in x's dtype. */
static int zero_where(onnx_ctx *cx, int mask, int x)
{
    if (x < 0)
        return -1;
    int zero = onnx_scalar(cx, onnx_type(cx, x)->dtype, 0);
    int args[3] = {mask, zero, x};
    return zero < 0 ? -1 : onnx_call(cx, "where", args, 3, NULL);
}

/* `op` (sum or mean) over every axis, a scalar. */
static int reduce_all(onnx_ctx *cx, const char *op, int x)
{
    return x < 0 ? -1 : onnx_call1(cx, op, x, NULL);
}

/* The inputs and attributes, checked: what the composition below would get wrong or
 * type obscurely is refused here, naming the node. */
static byocl_status read_loss(onnx_ctx *cx, const char *what, loss_args *l)
{
    TRY(onnx_input(cx, 0, &l->x));
    TRY(onnx_input(cx, 1, &l->target));
    l->weight = -1;
    if (onnx_has_input(cx->node, 2))
        TRY(onnx_input(cx, 2, &l->weight));
    const byocl_type *xt = onnx_type(cx, l->x), *tt = onnx_type(cx, l->target);
    if (!byocl_dtype_is_float(xt->dtype))
        return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED, "%s must be float32 or float16, not %s",
                         what, byocl_dtype_name(xt->dtype));
    if (tt->dtype != BYOCL_INT32 && tt->dtype != BYOCL_INT64)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "the target must be int32 or int64, not %s",
                         byocl_dtype_name(tt->dtype));
    const byocl_shape *xs = &xt->shape, *ts = &tt->shape;
    bool match = xs->rank >= 2 && ts->rank == xs->rank - 1 && ts->dims[0] == xs->dims[0];
    for (int i = 1; match && i < ts->rank; i++)
        match = ts->dims[i] == xs->dims[i + 1];
    if (!match)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "%s (rank %d) must be [N, C, d1..dk] and the target (rank %d) "
                         "[N, d1..dk] of the same N and d",
                         what, xs->rank, ts->rank);
    if (l->weight >= 0) {
        const byocl_type *wt = onnx_type(cx, l->weight);
        if (wt->dtype != xt->dtype || wt->shape.rank != 1 || wt->shape.dims[0] != xs->dims[1])
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "the weight must be %s of shape [C] = [%lld]",
                             byocl_dtype_name(xt->dtype), (long long)xs->dims[1]);
    }
    l->has_ignore = onnx_attr(cx->node, "ignore_index") != NULL;
    TRY(onnx_attr_int(cx, "ignore_index", 0, &l->ignore_index));
    char red[16];
    TRY(onnx_attr_string(cx, "reduction", "mean", red, sizeof red));
    if (strcmp(red, "none") == 0)
        l->reduction = REDUCE_NONE;
    else if (strcmp(red, "sum") == 0)
        l->reduction = REDUCE_SUM;
    else if (strcmp(red, "mean") == 0)
        l->reduction = REDUCE_MEAN;
    else
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "reduction '%s' is not one of 'none', 'sum' and 'mean'", red);
    return BYOCL_OK;
}

/* The loss of l as one node (-1 with the error recorded). The index read at an ignored
 * position is made 0, a valid one, and its product is then zeroed by the weight. */
static int nll(onnx_ctx *cx, const loss_args *l)
{
    int idx = l->target, mask = -1;
    if (l->has_ignore) {
        byocl_dtype it = onnx_type(cx, idx)->dtype;
        mask = call2(cx, "equal", idx, onnx_scalar(cx, it, (double)l->ignore_index));
        if (mask < 0 || (idx = zero_where(cx, mask, idx)) < 0)
            return -1;
    }
    /* -x[n, idx[n, d], d]: gather along C with the index as [N, 1, d1..dk] */
    int picked = with_axis(cx, "expand_dims", &idx, 1, 1, false);
    int gather_args[2] = {l->x, picked};
    picked = picked < 0 ? -1 : with_axis(cx, "gather", gather_args, 2, 1, false);
    picked = picked < 0 ? -1 : with_axis(cx, "squeeze", &picked, 1, 1, true);
    int loss = picked < 0 ? -1 : onnx_call1(cx, "negative", picked, NULL);
    if (loss < 0)
        return -1;
    /* the weight of each position: weight[idx], 0 where ignored */
    int w = -1;
    if (l->weight >= 0) {
        int take_args[2] = {l->weight, idx};
        w = with_axis(cx, "take", take_args, 2, 0, false);
        if (w < 0 || (mask >= 0 && (w = zero_where(cx, mask, w)) < 0))
            return -1;
    } else if (mask >= 0) {
        w = zero_where(cx, mask, onnx_scalar(cx, onnx_type(cx, loss)->dtype, 1));
    }
    if (w >= 0 && (loss = call2(cx, "multiply", loss, w)) < 0)
        return -1;
    switch (l->reduction) {
    case REDUCE_NONE:
        return loss;
    case REDUCE_SUM:
        return reduce_all(cx, "sum", loss);
    case REDUCE_MEAN:
        break;
    }
    if (w < 0)
        return reduce_all(cx, "mean", loss);
    return call2(cx, "divide", reduce_all(cx, "sum", loss), reduce_all(cx, "sum", w));
}

/* NegativeLogLikelihoodLoss(input, target, weight?). */
byocl_status onnx_convert_nll_loss(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    loss_args l;
    TRY(read_loss(cx, "the input", &l));
    TRY_ID(loss, nll(cx, &l));
    return onnx_output(cx, 0, loss);
}

/* SoftmaxCrossEntropyLoss(scores, labels, weights?) -> output, log_prob?. */
byocl_status onnx_convert_softmax_cross_entropy_loss(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    loss_args l;
    TRY(read_loss(cx, "the scores", &l));
    TRY_ID(log_prob, onnx_log_softmax(cx, l.x, 1));
    l.x = log_prob;
    TRY_ID(loss, nll(cx, &l));
    TRY(onnx_output(cx, 0, loss));
    return onnx_output(cx, 1, log_prob);
}
