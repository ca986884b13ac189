/* Pad as nn.pad where it can be, and the rest: Pad's modes 'edge' and 'reflect' with a
 * negative pad (cropping) or a reflection wider than the axis (numpy.pad, which the ONNX
 * reference uses, mirrors again; nn.pad does not) become a take per padded axis of a
 * constant int64 index vector that names, for each output cell, the input cell it copies.
 * A constant Pad whose pads are all <= 0 only crops: a strided_slice. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"

/* The input cell that output cell i (i counted from the input's first cell; negative
 * before it) copies, for an axis of n >= 1 cells. */
static int64_t source_cell(int64_t i, int64_t n, bool reflect)
{
    if (!reflect || n == 1)
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    int64_t period = 2 * (n - 1);
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - m;
}

/* An axis of `n` cells padded by (before, after) must keep at least zero cells. */
static byocl_status padded_length(onnx_ctx *cx, int axis, int64_t n, int64_t before,
                                  int64_t after, int64_t *out)
{
    const int64_t limit = INT64_MAX / 4; /* n + before + after stays inside int64 */
    if (before > limit || before < -limit || after > limit || after < -limit)
        return onnx_fail(cx, BYOCL_ERR_INVALID, "pads (%lld, %lld) of axis %d are out of range",
                         (long long)before, (long long)after, axis);
    *out = n + before + after;
    if (*out < 0)
        return onnx_fail(cx, BYOCL_ERR_INVALID,
                         "pads (%lld, %lld) crop more than the %lld cells of axis %d",
                         (long long)before, (long long)after, (long long)n, axis);
    return BYOCL_OK;
}

byocl_status onnx_pad_op(onnx_ctx *cx, int x, int value, const int64_t *pads, int rank,
                         const char *mode, int *y)
{
    int64_t width[2 * BYOCL_MAX_RANK], len;
    for (int d = 0; d < rank; d++) {
        TRY(padded_length(cx, d, onnx_type(cx, x)->shape.dims[d], pads[d], pads[rank + d],
                          &len));
        width[2 * d] = pads[d];
        width[2 * d + 1] = pads[rank + d];
    }
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "pad_width", width, 2 * rank)));
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "pad_mode", mode)));
    int args[2] = {x, value};
    if ((*y = onnx_call(cx, "nn.pad", args, 2, a)) < 0)
        return cx->err->status;
    return BYOCL_OK;
}

byocl_status onnx_pad_by_index(onnx_ctx *cx, int x, const int64_t *pads, int rank,
                               bool reflect, int *y)
{
    const char *mode = reflect ? "reflect" : "edge";
    *y = x;
    for (int axis = 0; axis < rank; axis++) {
        int64_t before = pads[axis], after = pads[rank + axis];
        if (before == 0 && after == 0)
            continue;
        int64_t n = onnx_type(cx, *y)->shape.dims[axis], len = 0;
        TRY(padded_length(cx, axis, n, before, after, &len));
        if (n == 0 && len > 0)
            return onnx_fail(cx, BYOCL_ERR_INVALID,
                             "mode '%s' cannot pad axis %d: it has no cells to copy", mode,
                             axis);
        byocl_shape s = byocl_shape_make(1, &len);
        byocl_tensor *idx = byocl_tensor_new(BYOCL_INT64, &s, cx->err);
        if (!idx) { /* too large: the message, about this node */
            char msg[BYOCL_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", cx->err->msg);
            return onnx_fail(cx, cx->err->status, "the indices of axis %d: %s", axis, msg);
        }
        int64_t *cells = byocl_tensor_data(idx);
        for (int64_t i = 0; i < len; i++)
            cells[i] = source_cell(i - before, n, reflect);
        int at = onnx_constant(cx, idx);
        byocl_tensor_unref(idx);
        byocl_attrs *a = at >= 0 ? onnx_attrs(cx) : NULL;
        if (!a)
            return cx->err->status;
        TRY(onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "axis", axis)));
        TRY(onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "mode", "clip")));
        int args[2] = {*y, at};
        if ((*y = onnx_call(cx, "take", args, 2, a)) < 0)
            return cx->err->status;
    }
    return BYOCL_OK;
}

byocl_status onnx_crop(onnx_ctx *cx, int x, const int64_t *pads, int rank, int *y)
{
    const byocl_shape *s = &onnx_type(cx, x)->shape;
    int64_t begin[BYOCL_MAX_RANK], end[BYOCL_MAX_RANK];
    for (int axis = 0; axis < rank; axis++) {
        int64_t len = 0;
        TRY(padded_length(cx, axis, s->dims[axis], pads[axis], pads[rank + axis], &len));
        begin[axis] = -pads[axis];
        end[axis] = begin[axis] + len;
    }
    byocl_attrs *a = onnx_attrs(cx);
    if (!a)
        return cx->err->status;
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "begin", begin, rank)));
    TRY(onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, "end", end, rank)));
    if ((*y = onnx_call1(cx, "strided_slice", x, a)) < 0)
        return cx->err->status;
    return BYOCL_OK;
}
