/* The ONNX shape and index ops: Shape, Size, Slice, Gather, GatherElements,
 * ConstantOfShape, Expand, Range, Tile and Upsample. Input shapes are static when
 * importing, so Shape and Size are constants, and the shape arithmetic after
 * them folds as onnx_call builds it (onnx_import.c): what a Reshape, Slice,
 * Expand or ConstantOfShape reads as a constant may come from initializers,
 * Constants, --params or such arithmetic. A value computed at run time is
 * refused with the input's name and how to bind it. */
#include <stdio.h>
#include <string.h>

#include "onnx_import.h"
#include "ops/op_impl.h"
#include "tensorio/tensor_pb.h"

/* Sets `key` of a to the ints v[0..n). */
static byocl_status put_ints(onnx_ctx *cx, byocl_attrs *a, const char *key,
                             const int64_t *v, int n) {
  return onnx_attrs_ok(cx, byocl_attrs_set_ints(cx->mod, a, key, v, n));
}

/* A fresh int64 tensor of the n values v (rank 1, or rank 0 when `scalar`). */
static byocl_status int64_constant(onnx_ctx *cx, const int64_t *v, int64_t n,
                                   bool scalar, byocl_tensor **out) {
  byocl_shape s = byocl_shape_make(scalar ? 0 : 1, &n);
  *out = byocl_tensor_new(BYOCL_INT64, &s, cx->err);
  if (!*out)
    return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
  if (n > 0)
    memcpy(byocl_tensor_data(*out), v, sizeof *v * (size_t)n);
  return BYOCL_OK;
}

/* Output 0 as the import-time constant of the n values v. */
static byocl_status output_ints(onnx_ctx *cx, const int64_t *v, int64_t n,
                                bool scalar) {
  byocl_tensor *t;
  TRY(int64_constant(cx, v, n, scalar, &t));
  byocl_status st = onnx_output_constant(cx, 0, t);
  byocl_tensor_unref(t);
  return st;
}

/* Shape: the input's (static) dims, from opset 15 only those from `start` to
 * `end` (negative counts from the end; both clamped, as ONNX says). */
byocl_status onnx_convert_shape(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  int x;
  TRY(onnx_input(cx, 0, &x));
  const byocl_shape *s = &onnx_type(cx, x)->shape;
  int64_t start, end;
  TRY(onnx_attr_int(cx, "start", 0, &start));
  TRY(onnx_attr_int(cx, "end", s->rank, &end));
  start = start < 0 ? start + s->rank : start;
  end = end < 0 ? end + s->rank : end;
  start = start < 0 ? 0 : start > s->rank ? s->rank : start;
  end = end < start ? start : end > s->rank ? s->rank : end;
  return output_ints(cx, s->dims + start, end - start, false);
}

/* Size: the input's element count, an int64 scalar. */
byocl_status onnx_convert_size(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  int x;
  TRY(onnx_input(cx, 0, &x));
  int64_t count = byocl_shape_numel(&onnx_type(cx, x)->shape);
  return output_ints(cx, &count, 1, true);
}

/* Slice -> strided_slice (numpy's clamping is ONNX's). Before opset 10 starts,
 * ends and axes are attributes; from 10 on they and the steps are inputs, which
 * must be known when compiling (constants, or shape arithmetic that folds). */
byocl_status onnx_convert_slice(onnx_ctx *cx, const Onnx__NodeProto *n) {
  int x;
  TRY(onnx_input(cx, 0, &x));
  int64_t starts[BYOCL_MAX_RANK], ends[BYOCL_MAX_RANK], axes[BYOCL_MAX_RANK],
      steps[BYOCL_MAX_RANK];
  int n_starts, n_ends, n_axes = -1, n_steps = -1;
  if (cx->opset < 10) {
    TRY(onnx_attr_ints(cx, "starts", starts, BYOCL_MAX_RANK, &n_starts));
    TRY(onnx_attr_ints(cx, "ends", ends, BYOCL_MAX_RANK, &n_ends));
    TRY(onnx_attr_ints(cx, "axes", axes, BYOCL_MAX_RANK, &n_axes));
    if (n_starts < 0 || n_ends < 0)
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "attributes 'starts' and 'ends' are "
                       "required");
  } else {
    if (n->n_attribute > 0)
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "from opset 10 the starts and ends are "
                       "inputs, not attributes");
    TRY(onnx_input_ints(cx, 1, "the starts", starts, BYOCL_MAX_RANK,
                        &n_starts));
    TRY(onnx_input_ints(cx, 2, "the ends", ends, BYOCL_MAX_RANK, &n_ends));
    if (onnx_has_input(n, 3))
      TRY(onnx_input_ints(cx, 3, "the axes", axes, BYOCL_MAX_RANK, &n_axes));
    if (onnx_has_input(n, 4))
      TRY(onnx_input_ints(cx, 4, "the steps", steps, BYOCL_MAX_RANK, &n_steps));
  }
  if (n_ends != n_starts || (n_axes >= 0 && n_axes != n_starts) ||
      (n_steps >= 0 && n_steps != n_starts))
    return onnx_fail(
        cx, BYOCL_ERR_INVALID,
        "starts, ends, axes and steps differ in length (%d, %d, %d, %d)",
        n_starts, n_ends, n_axes, n_steps);
  byocl_attrs *a = onnx_attrs(cx);
  if (!a)
    return cx->err->status;
  TRY(put_ints(cx, a, "begin", starts, n_starts));
  TRY(put_ints(cx, a, "end", ends, n_ends));
  if (n_axes >= 0)
    TRY(put_ints(cx, a, "axes", axes, n_axes));
  if (n_steps >= 0)
    TRY(put_ints(cx, a, "strides", steps, n_steps));
  TRY_ID(y, onnx_call1(cx, "strided_slice", x, a));
  return onnx_output(cx, 0, y);
}

/* Gather -> take(mode="fast"), indices i < 0 made i + n first: ONNX allows [-n,
 * n) and calls anything else an error, which "fast" reports at run time ("wrap"
 * would give an answer for an index out of range). Constant indices fold to a
 * constant. */
byocl_status onnx_convert_gather(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  int data, idx;
  TRY(onnx_input(cx, 0, &data));
  TRY(onnx_input(cx, 1, &idx));
  int64_t axis;
  int ax;
  TRY(onnx_attr_int(cx, "axis", 0, &axis));
  TRY(onnx_axis(cx, axis, onnx_type(cx, data)->shape.rank, "axis", &ax));
  byocl_dtype it = onnx_type(cx, idx)->dtype;
  TRY_ID(zero, onnx_scalar(cx, it, 0));
  TRY_ID(dim, onnx_scalar(cx, it, (double)onnx_type(cx, data)->shape.dims[ax]));
  int lt_args[2] = {idx, zero}, add_args[2] = {idx, dim};
  TRY_ID(negative, onnx_call(cx, "less", lt_args, 2, NULL));
  TRY_ID(shifted, onnx_call(cx, "add", add_args, 2, NULL));
  int where_args[3] = {negative, shifted, idx};
  TRY_ID(at, onnx_call(cx, "where", where_args, 3, NULL));
  byocl_attrs *a = onnx_attrs(cx);
  if (!a)
    return cx->err->status;
  TRY(onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "axis", ax)));
  TRY(onnx_attrs_ok(cx, byocl_attrs_set_str(cx->mod, a, "mode", "fast")));
  int take_args[2] = {data, at};
  TRY_ID(y, onnx_call(cx, "take", take_args, 2, a));
  return onnx_output(cx, 0, y);
}

/* GatherElements -> gather (which takes negative indices and fails on
 * out-of-range ones, as ONNX says). */
byocl_status onnx_convert_gather_elements(onnx_ctx *cx,
                                          const Onnx__NodeProto *n) {
  (void)n;
  int args[2];
  TRY(onnx_input(cx, 0, &args[0]));
  TRY(onnx_input(cx, 1, &args[1]));
  int64_t axis;
  TRY(onnx_attr_int(cx, "axis", 0, &axis));
  byocl_attrs *a = onnx_attrs(cx);
  if (!a)
    return cx->err->status;
  TRY(onnx_attrs_ok(cx, byocl_attrs_set_int(cx->mod, a, "axis", axis)));
  TRY_ID(y, onnx_call(cx, "gather", args, 2, a));
  return onnx_output(cx, 0, y);
}

/* broadcast_to(x, dims) as output 0, or x itself when it has that shape. */
static byocl_status output_broadcast(onnx_ctx *cx, int x,
                                     const byocl_shape *to) {
  if (byocl_shape_equal(&onnx_type(cx, x)->shape, to))
    return onnx_output(cx, 0, x);
  byocl_attrs *a = onnx_attrs(cx);
  if (!a)
    return cx->err->status;
  TRY(put_ints(cx, a, "shape", to->dims, to->rank));
  TRY_ID(y, onnx_call1(cx, "broadcast_to", x, a));
  return onnx_output(cx, 0, y);
}

/* A constant shape input k as a byocl_shape (dims checked >= 0). */
static byocl_status input_shape(onnx_ctx *cx, int k, const char *why,
                                byocl_shape *out) {
  int64_t dims[BYOCL_MAX_RANK];
  int rank;
  TRY(onnx_input_ints(cx, k, why, dims, BYOCL_MAX_RANK, &rank));
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "input %d (%s) has %lld at dimension %d", k, why,
                       (long long)dims[i], i);
  *out = byocl_shape_make(rank, dims);
  return BYOCL_OK;
}

/* ConstantOfShape: the `value` attribute (one element; float32 0 without it)
 * broadcast to the shape input, which must be known when compiling. Up to
 * OPS_FOLD_MAX_BYTES the result folds to a constant; a larger one stays a
 * broadcast_to of the scalar. */
byocl_status onnx_convert_constant_of_shape(onnx_ctx *cx,
                                            const Onnx__NodeProto *n) {
  byocl_shape shape;
  TRY(input_shape(cx, 0, "the shape", &shape));
  const Onnx__AttributeProto *attr = onnx_attr(n, "value");
  byocl_tensor *t = NULL;
  if (attr && attr->t) {
    char what[600];
    snprintf(what, sizeof what, "%s: node '%s' (ConstantOfShape)", cx->path,
             n->name ? n->name : "");
    TRY(onnx_model_tensor(cx->model, attr->t, what, &t, cx->err));
  } else if (attr) {
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "attribute 'value' holds no tensor");
  } else {
    byocl_shape one = byocl_shape_make(0, NULL);
    if (!(t = byocl_tensor_new(BYOCL_FLOAT32, &one, cx->err)))
      return onnx_fail(cx, BYOCL_ERR_NOMEM, "out of memory");
  }
  if (byocl_tensor_numel(t) != 1) {
    byocl_tensor_unref(t);
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "attribute 'value' should hold one element");
  }
  int c = onnx_constant(cx, t);
  byocl_tensor_unref(t);
  if (c < 0)
    return cx->err->status;
  TRY_ID(scalar, onnx_reshape(cx, c, 0, NULL));
  return output_broadcast(cx, scalar, &shape);
}

/* Expand: broadcast_to the shape numpy broadcasting gives the input's shape and
 * the shape input (both ways: a 1 in the shape input keeps the input's dim). */
byocl_status onnx_convert_expand(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  int x;
  TRY(onnx_input(cx, 0, &x));
  byocl_shape want, to;
  TRY(input_shape(cx, 1, "the shape", &want));
  if (ops_broadcast_shapes(&onnx_type(cx, x)->shape, &want, &to, cx->err) !=
      BYOCL_OK)
    return onnx_fail(cx, cx->err->status, "%s", cx->err->msg);
  return output_broadcast(cx, x, &to);
}

/* The one value of scalar input k, known when compiling. */
static byocl_status input_scalar(onnx_ctx *cx, int k, const char *why,
                                 double *v) {
  const byocl_tensor *t;
  TRY(onnx_input_constant(cx, k, why, &t));
  if (byocl_tensor_numel(t) != 1)
    return onnx_fail(cx, BYOCL_ERR_INVALID, "input %d (%s) should be a scalar",
                     k, why);
  *v = byocl_tensor_get(t, 0);
  return BYOCL_OK;
}

/* Range -> arange(start, limit, delta) of constant scalars (the result's length needs
 * them when compiling; a constant once folded), in the dtype of start. */
byocl_status onnx_convert_range(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  const byocl_tensor *first;
  double v[3] = {0, 0, 0}; /* set by input_scalar; -O3 cannot see it */
  static const char *const what[3] = {"the start", "the limit", "the delta"};
  TRY(onnx_input_constant(cx, 0, what[0], &first));
  for (int k = 0; k < 3; k++)
    TRY(input_scalar(cx, k, what[k], &v[k]));
  if (v[2] == 0)
    return onnx_fail(cx, BYOCL_ERR_INVALID, "the delta is 0");
  byocl_dtype dt = byocl_tensor_dtype(first);
  byocl_attrs *a = onnx_attrs(cx);
  if (!a)
    return cx->err->status;
  TRY(onnx_attrs_ok(
      cx, byocl_attrs_set_str(cx->mod, a, "dtype", byocl_dtype_name(dt))));
  int args[3];
  for (int k = 0; k < 3; k++)
    if ((args[k] = onnx_scalar(cx, dt, v[k])) < 0)
      return cx->err->status;
  TRY_ID(y, onnx_call(cx, "arange", args, 3, a));
  return onnx_output(cx, 0, y);
}

/* x with each axis d repeated reps[d] times: a new axis of the count before it (whole:
 * copies of the whole axis, Tile) or after it (each element repeated, Upsample's
 * nearest mode), filled by broadcast_to, and a reshape merging the pairs. -1 with the
 * error recorded. */
static int repeat_axes(onnx_ctx *cx, int x, const int64_t *reps, bool whole) {
  const byocl_shape s = onnx_type(cx, x)->shape;
  int rank = s.rank;
  for (int d = 0; d < s.rank; d++)
    rank += reps[d] != 1;
  if (rank > BYOCL_MAX_RANK) {
    onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
              "repeating needs %d dims (one more per repeated axis); byocl "
              "handles at most %d",
              rank, BYOCL_MAX_RANK);
    return -1;
  }
  int64_t split[BYOCL_MAX_RANK], wide[BYOCL_MAX_RANK], out[BYOCL_MAX_RANK];
  rank = 0;
  for (int d = 0; d < s.rank; d++) {
    out[d] = s.dims[d] * reps[d];
    if (reps[d] != 1 && whole) {
      split[rank] = 1;
      wide[rank++] = reps[d];
    }
    split[rank] = s.dims[d];
    wide[rank++] = s.dims[d];
    if (reps[d] != 1 && !whole) {
      split[rank] = 1;
      wide[rank++] = reps[d];
    }
  }
  int lifted = onnx_reshape(cx, x, rank, split);
  byocl_attrs *a = lifted < 0 ? NULL : onnx_attrs(cx);
  if (!a || put_ints(cx, a, "shape", wide, rank) != BYOCL_OK)
    return -1;
  int b = onnx_call1(cx, "broadcast_to", lifted, a);
  return b < 0 ? -1 : onnx_reshape(cx, b, s.rank, out);
}

/* One whole number known at import time, input k of any numeric dtype: Tile-1 types
 * its tiles and axis as the data (T, a float type) though they count. */
static byocl_status whole_scalar_input(onnx_ctx *cx, int k, const char *why,
                                       int64_t *v) {
  const byocl_tensor *t;
  TRY(onnx_input_constant(cx, k, why, &t));
  if (byocl_tensor_numel(t) != 1)
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "input %d (%s) should be one value, got %lld", k, why,
                     (long long)byocl_tensor_numel(t));
  double d = byocl_tensor_get(t, 0);
  if (!(d == (double)(int64_t)d) || d > 1e15 || d < -1e15)
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "input %d (%s) is %g, not a whole number", k, why, d);
  *v = (int64_t)d;
  return BYOCL_OK;
}

/* Tile with constant repeats (opset 6 on), or Tile-1's `tiles` copies of the
 * whole input along `axis` (both inputs). */
byocl_status onnx_convert_tile(onnx_ctx *cx, const Onnx__NodeProto *n) {
  (void)n;
  int x;
  TRY(onnx_input(cx, 0, &x));
  const byocl_shape s = onnx_type(cx, x)->shape;
  int64_t reps[BYOCL_MAX_RANK];
  int count = s.rank;
  if (cx->opset < 6) {
    int64_t tiles, axis_in;
    int axis;
    TRY(whole_scalar_input(cx, 1, "the tiles", &tiles));
    TRY(whole_scalar_input(cx, 2, "the axis", &axis_in));
    TRY(onnx_axis(cx, axis_in, s.rank, "axis", &axis));
    for (int d = 0; d < s.rank; d++)
      reps[d] = d == axis ? tiles : 1;
  } else {
    TRY(onnx_input_ints(cx, 1, "the repeats", reps, BYOCL_MAX_RANK, &count));
  }
  if (count != s.rank)
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "input 1 (the repeats) has %d values for an "
                     "input of rank %d",
                     count, s.rank);
  for (int d = 0; d < s.rank; d++)
    if (reps[d] < 0)
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "repeat %lld on axis %d is negative", (long long)reps[d],
                       d);
  TRY_ID(y, repeat_axes(cx, x, reps, true));
  return onnx_output(cx, 0, y);
}

/* Upsample-1 (experimental, before opset 7): a 4-D input scaled on H and W by
 * the attributes height_scale and width_scale, mode 'nearest' or 'bilinear'
 * (opset 7's 'linear'). */
static byocl_status upsample1_scales(onnx_ctx *cx, const Onnx__NodeProto *n,
                                     int rank, double *scales, char *mode) {
  if (strcmp(mode, "bilinear") == 0)
    strcpy(mode, "linear");
  if (rank != 4)
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "the input has rank %d; Upsample-1 (opset %lld) takes "
                     "N x C x H x W",
                     rank, (long long)cx->opset);
  static const char *const names[2] = {"height_scale", "width_scale"};
  scales[0] = scales[1] = 1.0;
  for (int d = 0; d < 2; d++) {
    if (!onnx_attr(n, names[d]))
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "attribute '%s' is missing (opset %lld)", names[d],
                       (long long)cx->opset);
    TRY(onnx_attr_float(cx, names[d], 1.0, &scales[2 + d]));
  }
  return BYOCL_OK;
}

/* Upsample (opset 1 to 9; deprecated from 10, where Resize replaces it): the
 * scales are height_scale and width_scale before opset 7 (upsample1_scales), an
 * attribute in opsets 7 and 8, input 1 from 9. Nearest mode with
 * whole-number scales repeats each element (repeat_axes); linear mode and
 * fractional scales become image.resize2d (onnx_resize.c). */
byocl_status onnx_convert_upsample(onnx_ctx *cx, const Onnx__NodeProto *n) {
  char mode[32];
  TRY(onnx_attr_string(cx, "mode", "nearest", mode, sizeof mode));
  const char *other = cx->opset < 7 ? "bilinear" : "linear";
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, other) != 0)
    return onnx_fail(cx, BYOCL_ERR_UNSUPPORTED,
                     "attribute 'mode' value '%s' is not supported (expected "
                     "'nearest' or '%s')",
                     mode, other);
  int x;
  TRY(onnx_input(cx, 0, &x));
  const byocl_shape s = onnx_type(cx, x)->shape;
  double scales[BYOCL_MAX_RANK];
  int count = 0;
  if (cx->opset < 7) {
    TRY(upsample1_scales(cx, n, s.rank, scales, mode));
    count = s.rank;
  } else if (cx->opset < 9) {
    const Onnx__AttributeProto *at = onnx_attr(n, "scales");
    if (!at)
      return onnx_fail(cx, BYOCL_ERR_INVALID,
                       "attribute 'scales' is missing (opset %lld)",
                       (long long)cx->opset);
    count = (int)at->n_floats;
    for (int d = 0; d < count && d < BYOCL_MAX_RANK; d++)
      scales[d] = at->floats[d];
  } else {
    const byocl_tensor *t;
    TRY(onnx_input_constant(cx, 1, "the scales", &t));
    count = (int)byocl_tensor_numel(t);
    for (int d = 0; d < count && d < BYOCL_MAX_RANK; d++)
      scales[d] = byocl_tensor_get(t, d);
  }
  if (count != s.rank)
    return onnx_fail(cx, BYOCL_ERR_INVALID,
                     "%d scales for an input of rank %d", count, s.rank);
  int64_t reps[BYOCL_MAX_RANK];
  bool whole = strcmp(mode, "nearest") == 0;
  for (int d = 0; d < s.rank; d++) {
    if (!(scales[d] > 0))
      return onnx_fail(cx, BYOCL_ERR_INVALID, "scale %g on axis %d is not positive",
                       scales[d], d);
    reps[d] = (int64_t)scales[d];
    whole = whole && (double)reps[d] == scales[d];
  }
  TRY_ID(y, whole ? repeat_axes(cx, x, reps, false)
                  : onnx_upsample_resize(cx, x, scales, mode));
  return onnx_output(cx, 0, y);
}
