/* The ONNX ops that address elements through an index tensor or a sort: GatherND,
 * ScatterND, ScatterElements (and the deprecated Scatter, the same op), TopK.
 *
 * byocl's gather_nd and scatter_nd follow Relay: the index depth M is the indices' first
 * axis, (M, B.., Y..). ONNX puts it last, (B.., Y.., M), so the converters move that axis
 * to the front with a transpose (folded to a constant when the indices are one). */
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"

static byocl_status set_attr(onnx_ctx *cx, byocl_attrs *a, const char *key, int64_t v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, key, v));
}

static byocl_status set_str(onnx_ctx *cx, byocl_attrs *a, const char *key, const char *v)
{
    return onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, key, v));
}

/* Input k (ONNX indices with the depth last) with the depth moved first. */
static int index_first(onnx_ctx *cx, int k)
{
    int idx;
    if (onnx_input(cx, k, &idx) != BYOCL_OK)
        return -1;
    int rank = onnx_type(cx, idx)->shape.rank;
    if (rank < 2)
        return idx; /* (M): already first */
    int64_t perm[BYOCL_MAX_RANK];
    perm[0] = rank - 1;
    for (int d = 1; d < rank; d++)
        perm[d] = d - 1;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a || onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "axes", perm, rank)) !=
                  BYOCL_OK)
        return -1;
    return onnx_call1(cx, "transpose", idx, a);
}

/* GatherND: gather_nd with batch_dims (opset 12 on; 0 before). */
byocl_status onnx_convert_gather_nd(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    int64_t batch_dims;
    TRY(onnx_attr_int(cx, "batch_dims", 0, &batch_dims));
    int args[2];
    TRY(onnx_input(cx, 0, &args[0]));
    args[1] = index_first(cx, 1);
    if (args[1] < 0)
        return cx->err->status;
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(set_attr(cx, a, "batch_dims", batch_dims));
    TRY_ID(y, onnx_call(cx, "gather_nd", args, 2, a));
    return onnx_output(cx, 0, y);
}

/* The reduction attribute of ScatterND and ScatterElements (opset 16 on; "none" before)
 * as byocl spells it: "none" is "update"; add, mul (16), max and min (18) keep their
 * names. */
static byocl_status scatter_reduction(onnx_ctx *cx, const char **out)
{
    char r[16];
    TRY(onnx_attr_string(cx, "reduction", "none", r, sizeof r));
    static const char *const names[][2] = {
        {"none", "update"}, {"add", "add"}, {"mul", "mul"}, {"max", "max"}, {"min", "min"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(r, names[k][0]) == 0) {
            *out = names[k][1];
            return BYOCL_OK;
        }
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "attribute 'reduction' value '%s' is not supported (none, add, mul, max "
                     "or min)",
                     r);
}

/* ScatterND: scatter_nd, the reduction as its mode. */
byocl_status onnx_convert_scatter_nd(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    const char *mode = "update";
    TRY(scatter_reduction(cx, &mode));
    int args[3];
    TRY(onnx_input(cx, 0, &args[0]));
    args[1] = index_first(cx, 1);
    if (args[1] < 0)
        return cx->err->status;
    TRY(onnx_input(cx, 2, &args[2]));
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(set_str(cx, a, "mode", mode));
    TRY_ID(y, onnx_call(cx, "scatter_nd", args, 3, a));
    return onnx_output(cx, 0, y);
}

/* ScatterElements and Scatter (opsets 9 and 11, deprecated for ScatterElements, which it
 * is): scatter_elements with axis and reduction. */
byocl_status onnx_convert_scatter_elements(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    (void)n;
    const char *reduction = "update";
    int64_t axis;
    TRY(onnx_attr_int(cx, "axis", 0, &axis));
    TRY(scatter_reduction(cx, &reduction));
    int args[3];
    for (int k = 0; k < 3; k++)
        TRY(onnx_input(cx, k, &args[k]));
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(set_attr(cx, a, "axis", axis));
    TRY(set_str(cx, a, "reduction", reduction));
    TRY_ID(y, onnx_call(cx, "scatter_elements", args, 3, a));
    return onnx_output(cx, 0, y);
}

/* TopK: topk with k from the attribute (opset 1) or the constant input K (10 on), largest
 * (11 on) as is_ascend's opposite. Results are always sorted, which sorted=0 allows. The
 * indices are int64, as ONNX's. */
byocl_status onnx_convert_topk(onnx_ctx *cx, const Onnx__NodeProto *n)
{
    int64_t k, largest;
    if (cx->opset < 10) {
        if (!onnx_attr(n, "k"))
            return onnx_fail(cx, BYOCL_ERR_INVALID, "attribute 'k' is missing");
        TRY(onnx_attr_int(cx, "k", 0, &k));
    } else {
        int count;
        TRY(onnx_input_ints(cx, 1, "K", &k, 1, &count));
        if (count != 1)
            return onnx_fail(cx, BYOCL_ERR_INVALID, "K should be one value, got %d", count);
    }
    TRY(onnx_attr_int(cx, "largest", 1, &largest));
    int64_t sorted; /* read for its type only: byocl's results are sorted either way */
    TRY(onnx_attr_int(cx, "sorted", 1, &sorted));
    int x, axis;
    int64_t axis_attr;
    TRY(onnx_input(cx, 0, &x));
    TRY(onnx_attr_int(cx, "axis", -1, &axis_attr));
    const byocl_shape *s = &onnx_type(cx, x)->shape;
    TRY(onnx_axis(cx, axis_attr, s->rank, "axis", &axis));
    if (k < 1 || k > s->dims[axis])
        return onnx_fail(cx, BYOCL_ERR_INVALID, "K is %lld; expected 1..%lld (the size of axis "
                         "%d)", (long long)k, (long long)s->dims[axis], axis);
    bool values = onnx_has_output(n, 0), indices = onnx_has_output(n, 1);
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(set_attr(cx, a, "k", k));
    TRY(set_attr(cx, a, "axis", axis));
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_bool(cx->mod, a, "is_ascend", largest == 0)));
    TRY(set_str(cx, a, "ret_type", values && indices ? "both" : values ? "values" : "indices"));
    TRY_ID(y, onnx_call1(cx, "topk", x, a));
    if (!(values && indices))
        return onnx_output(cx, values ? 0 : 1, y);
    TRY_ID(v, onnx_getitem(cx, y, 0));
    TRY(onnx_output(cx, 0, v));
    TRY_ID(i, onnx_getitem(cx, y, 1));
    return onnx_output(cx, 1, i);
}
