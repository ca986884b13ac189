/* Private helpers of the conv, pool and nn op groups (conv.c, pool.c, nn.c): attribute
 * normalization, sliding-window geometry, type-relation checks and kernel plumbing.
 * Type relations and reference kernels compute shapes through the same functions, so a
 * kernel never trusts an output tensor whose shape its relation would not produce. */
#ifndef BYOCL_NN_UTIL_H
#define BYOCL_NN_UTIL_H

#include "op_impl.h"

/* ------------------------------------------------------------- attributes */

/* Most spatial dimensions of a window: the 3-D convs and pools (NCDHW). */
#define NN_MAX_SPATIAL 3

/* Schema entries that the convs, the pools and dense share; the _3D forms are the 3-D
 * ops' (depth, height, width). */
#define NN_ATTR_PAIR(key, def, what) \
    {.name = key, .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 2, \
     .def_ints = {def, def}, .doc = what}
#define NN_ATTR_TRIPLE(key, def, what) \
    {.name = key, .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 3, \
     .def_ints = {def, def, def}, .doc = what}
#define NN_ATTR_PADDING \
    {.name = "padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 4, \
     .def_ints = {0, 0, 0, 0}, \
     .doc = "padding: 1 value (all sides), 2 (top/bottom, left/right) or 4 (top, left, " \
            "bottom, right)"}
#define NN_ATTR_PADDING_3D \
    {.name = "padding", .kind = BYOCL_ATTR_INTS, .int_or_ints = true, .def_n = 6, \
     .def_ints = {0, 0, 0, 0, 0, 0}, \
     .doc = "padding: 1 value (all sides), 3 (front/back, top/bottom, left/right) or 6 " \
            "(front, top, left, back, bottom, right)"}
#define NN_ATTR_OUT_DTYPE \
    {.name = "out_dtype", .kind = BYOCL_ATTR_STR, .def_s = "", \
     .doc = "dtype of the result; \"\" means data's dtype"}
#define NN_ATTR_OUT_LAYOUT \
    {.name = "out_layout", .kind = BYOCL_ATTR_STR, .def_s = "", \
     .doc = "layout of the result: \"\" (as the input) or NCHW"}

/* INTS (or INT) attribute `key` as exactly `spatial` (2 or 3) positive values, e.g.
 * (height, width); one value serves all. */
byocl_status nn_attr_spatial(const byocl_attrs *attrs, const char *key, int spatial,
                             int64_t *out, byocl_error *err);
/* nn_attr_spatial for values that may be 0 (the transposed convs' output_padding). */
byocl_status nn_attr_spatial_nonnegative(const byocl_attrs *attrs, const char *key, int spatial,
                                         int64_t *out, byocl_error *err);
/* `padding` of 1, `spatial` or 2 * `spatial` values as TVM reads it, normalized to the
 * befores then the afters ((top, left, bottom, right) in 2-D, (front, top, left, back,
 * bottom, right) in 3-D): 1 value = all sides, `spatial` values = both sides of each
 * dimension. Must be >= 0. */
byocl_status nn_attr_padding(const byocl_attrs *attrs, int spatial, int64_t *out,
                             byocl_error *err);
/* Rewrites attribute `key` in place (keeping its position) as INTS of n values. */
byocl_status nn_attr_store_ints(byocl_module *m, byocl_attrs *attrs, const char *key,
                                const int64_t *values, int n, byocl_error *err);
/* A layout attribute must be `want`, or empty when `allow_empty` (out_layout). Anything
 * else is BYOCL_ERR_UNSUPPORTED. */
byocl_status nn_attr_layout(const byocl_attrs *attrs, const char *key, const char *want,
                            bool allow_empty, byocl_error *err);
/* `out_dtype`: "" means `fallback`; an unknown name is an error. */
byocl_status nn_attr_out_dtype(const byocl_attrs *attrs, byocl_dtype fallback,
                               byocl_dtype *out, byocl_error *err);
/* A nullable INT attribute that, when given, must be >= 1. *given tells whether it was. */
byocl_status nn_attr_optional_positive(const byocl_attrs *attrs, const char *key,
                                       bool *given, int64_t *value, byocl_error *err);
/* "NCHW" for 2 spatial dimensions, "NCDHW" for 3. */
const char *nn_data_layout(int spatial);
/* The data layout attribute `layout_key` ("data_layout", "layout") must be
 * nn_data_layout(spatial) and out_layout that or empty. */
byocl_status nn_attr_data_layouts(const byocl_attrs *attrs, const char *layout_key, int spatial,
                                  byocl_error *err);

/* --------------------------------------------------------- sliding windows */

/* The window of a conv or pool over its `spatial` dimensions ((H, W) in 2-D, (D, H, W)
 * in 3-D). */
typedef struct nn_window {
    int spatial;                        /* 2 or 3 */
    int64_t kernel[NN_MAX_SPATIAL];     /* kernel or pool size */
    int64_t stride[NN_MAX_SPATIAL];
    int64_t dilation[NN_MAX_SPATIAL];
    int64_t pad[2 * NN_MAX_SPATIAL];    /* befores then afters: top, left, bottom, right */
    bool ceil_mode;
} nn_window;

/* Reads strides, dilation, padding, ceil_mode (false when absent) and, unless
 * `kernel_key` is NULL or the attribute is None, the window size; kernel[] stays 0 then
 * and the caller fills it (conv2d takes it from the weight). */
byocl_status nn_window_read(const byocl_attrs *attrs, const char *kernel_key, int spatial,
                            nn_window *w, byocl_error *err);
/* check_attrs step shared by the convs and the pools: strides, dilation (and
 * `kernel_key`, unless NULL or None) become `spatial` values, padding 2 * `spatial`; all
 * validated; then the layouts (nn_attr_data_layouts with `layout_key`). */
byocl_status nn_window_check(byocl_module *m, byocl_attrs *attrs, const char *kernel_key,
                             const char *layout_key, int spatial, byocl_error *err);
/* Output size of the window over an input of in_sp (w->spatial values each). With
 * ceil_mode the last window may hang over the after padding but must start inside the
 * input or the before padding. An empty output is an error naming the dimension;
 * `kernel_name` is "kernel" or "pool window". */
byocl_status nn_window_out_size(const nn_window *w, const int64_t *in_sp,
                                const char *kernel_name, int64_t *out_sp, byocl_error *err);
/* Output size of the transposed window (the transposed convs) over in_sp:
 * (in - 1) * stride + dilation * (kernel - 1) + 1 - padding + out_pad. An empty input or
 * output is an error naming the dimension. */
byocl_status nn_window_transposed_size(const nn_window *w, const int64_t *in_sp,
                                       const int64_t *out_pad, int64_t *out_sp,
                                       byocl_error *err);
/* Outputs o in [*lo, *hi) are those for which o * stride + offset lies in [0, in_len). */
void nn_valid_range(int64_t out_len, int64_t in_len, int64_t stride, int64_t offset,
                    int64_t *lo, int64_t *hi);

/* NCHW (or NCDHW) data under a sliding window: what the convs and the pools know about a
 * call. */
typedef struct nn_slide {
    nn_window win;
    int64_t batch, channels;         /* N, C */
    int64_t in_hw[NN_MAX_SPATIAL];   /* H, W (D, H, W in 3-D) */
    int64_t out_hw[NN_MAX_SPATIAL];  /* from nn_window_out_size */
} nn_slide;

/* Kernels check what they are given: `shape` must have `rank` dims, else "weight must be
 * 4-D (OIHW), got shape (4, 3, 3)" with `what` and `layout`. */
byocl_status nn_shape_rank(const byocl_shape *shape, int rank, const char *what,
                           const char *layout, byocl_error *err);
/* `data` of rank spatial + 2 (NCHW or NCDHW) and the window attributes (nn_window_read
 * with `kernel_key`) into *s; out_hw is left for nn_window_out_size, once the window size
 * is known. */
byocl_status nn_slide_read(const byocl_attrs *attrs, const char *kernel_key, int spatial,
                           const byocl_shape *data, nn_slide *s, byocl_error *err);
/* (N, `channels`, out spatial dims...). */
byocl_shape nn_slide_out_shape(const nn_slide *s, int64_t channels);
/* The slide as 3-D: a 2-D one gains a leading depth of 1 (kernel 1, stride 1, no
 * padding), so the reference kernels run one loop nest for both. */
nn_slide nn_slide_3d(const nn_slide *s);

/* ---------------------------------------------------------- type relations */

/* Argument k as a tensor of `rank` dimensions (any rank when rank < 0). Errors read
 * "data must be a 4-D tensor (NCHW), got Tensor[(1, 3), float32]"; `layout_hint` may be
 * NULL. */
byocl_status nn_tensor_arg(const byocl_infer_ctx *ctx, int k, const char *what, int rank,
                           const char *layout_hint, const byocl_type **out, byocl_error *err);
/* `what` must have data's dtype: "weight dtype float16 does not match data dtype float32". */
byocl_status nn_same_dtype(const byocl_type *t, const char *what, const byocl_type *data,
                           byocl_error *err);
/* Normalizes a possibly negative axis for a tensor of `rank` dims. */
byocl_status nn_axis(int64_t axis, int rank, int *out, byocl_error *err);
/* A 1-D tensor `what` of data's dtype whose length is data's dimension `axis`
 * (bias_add's bias, batch_norm's gamma/beta/mean/var). */
byocl_status nn_channel_vector(const byocl_infer_ctx *ctx, int k, const char *what,
                               const byocl_type *data, int axis, byocl_error *err);

/* --------------------------------------------------------- kernel plumbing */

/* A kernel got `n_in` inputs and `n_out` outputs; anything but the expected counts (or
 * a NULL tensor) is an error naming the op. */
byocl_status nn_ref_args(const char *op, const byocl_tensor *const *in, int n_in, int want_in,
                         byocl_tensor *const *out, int n_out, int want_out, byocl_error *err);
/* The output tensor must have exactly the shape the type relation gives. */
byocl_status nn_ref_out_shape(const char *op, const byocl_tensor *out, const byocl_shape *want,
                              byocl_error *err);
/* Every element of t as a double (malloc'ed; free it). NULL with BYOCL_ERR_NOMEM. */
double *nn_to_doubles(const byocl_tensor *t, byocl_error *err);
/* Stores v[i] at every flat index of t with byocl_tensor_set's rounding. */
void nn_store_doubles(byocl_tensor *t, const double *v);
/* The smallest value of a dtype (-inf for floats): max pooling over an empty window. */
double nn_dtype_lowest(byocl_dtype dtype);

#endif
