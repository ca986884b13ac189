/* The ONNX importer's internals. onnx_import.c reads the model, resolves the graph's inputs
 * and shapes, walks the nodes and builds @main; onnx_ops.c converts one ONNX node into
 * byocl ops through the helpers below. docs/onnx.md describes the mapping for users. */
#ifndef BYOCL_ONNX_IMPORT_H
#define BYOCL_ONNX_IMPORT_H

#include "byocl/frontend.h"
#include "ir/ir_impl.h"
#include "onnx.pb-c.h"
#include "onnx_model.h"
#include "text/names.h"

/* The opsets of the default domain that byocl imports. */
#define ONNX_OPSET_MIN 1
#define ONNX_OPSET_MAX 18

/* A value of the ONNX graph (a graph input, an initializer or a node output), by name.
 * Values become byocl nodes lazily: constants only when an op takes them as a tensor (a
 * Reshape's shape is read at import time and never becomes a node), and a constant-mode
 * Pad only when its consumer cannot take the padding itself. */
typedef struct onnx_value {
    const char *name;               /* the ONNX name (owned by the model proto)        */
    int node;                       /* byocl node id, -1 until materialized              */
    int init;                       /* an initializer not converted yet (index), or -1   */
    byocl_tensor *constant;         /* value known at import time (owned), or NULL       */
    int pad_of;                     /* pending Pad: value index of its input, else -1    */
    int pad_rank;                   /* pending Pad: rank of the input                    */
    int64_t pads[2 * BYOCL_MAX_RANK]; /* pending Pad: ONNX order, all begins then ends   */
    double pad_value;               /* pending Pad: the constant filled in ...           */
    int pad_value_of;               /* ... or the value index of a run-time one, or -1   */
} onnx_value;

typedef struct onnx_ctx {
    const char *path;       /* the model file, for messages             */
    onnx_model *model;      /* its proto and initializers' values       */
    byocl_module *mod;
    byocl_function *fn;     /* @main under construction                 */
    int64_t opset;          /* of the default domain                    */
    onnx_value *values;
    int n_values, cap_values;
    text_names by_name;     /* ONNX name -> index into values           */
    const Onnx__NodeProto *node; /* the node being converted            */
    int node_index;
    int first_new;          /* @main's node count when this node began  */
    int folded;             /* calls onnx_call turned into constants    */
    byocl_error *err;
} onnx_ctx;

/* One ONNX op that byocl imports. */
typedef byocl_status (*onnx_convert_fn)(onnx_ctx *cx, const Onnx__NodeProto *node);
typedef struct onnx_op {
    const char *type;             /* ONNX op_type                                       */
    onnx_convert_fn convert;
    const char *const *attrs;     /* the attributes it handles; others are refused      */
    int since;                    /* the first opset that defines it (ONNX's Operators.md) */
} onnx_op;

/* onnx_ops.c: the op table. NULL for an op byocl does not import. */
const onnx_op *onnx_find_op(const char *op_type);
/* onnx_ops.c: whether `attr` of op_type is an attribute of an old opset that byocl accepts
 * there (consumed_inputs, is_test, broadcast, ...). */
bool onnx_legacy_attr(int64_t opset, const char *op_type, const char *attr);

/* onnx_shape.c: the shape and index ops (Shape, Size, Slice, Gather, GatherElements,
 * ConstantOfShape, Expand, Range, Tile), which onnx_ops.c's table lists. */
byocl_status onnx_convert_shape(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_size(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_slice(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_gather(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_gather_elements(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_constant_of_shape(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_expand(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_range(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_tile(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_upsample(onnx_ctx *cx, const Onnx__NodeProto *n);

/* onnx_index.c: GatherND, ScatterND, ScatterElements (and Scatter), TopK. */
byocl_status onnx_convert_gather_nd(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_scatter_nd(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_scatter_elements(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_topk(onnx_ctx *cx, const Onnx__NodeProto *n);
/* onnx_resize.c: Resize (image.resize2d), and Upsample's linear mode and fractional
 * scales: x resized by scales (one per axis) with Upsample's arithmetic (asymmetric
 * coordinates, nearest rounds down); -1 with the error recorded. */
byocl_status onnx_convert_resize(onnx_ctx *cx, const Onnx__NodeProto *n);
int onnx_upsample_resize(onnx_ctx *cx, int x, const double *scales, const char *mode);

/* onnx_loss.c: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
byocl_status onnx_convert_nll_loss(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_softmax_cross_entropy_loss(onnx_ctx *cx, const Onnx__NodeProto *n);

/* onnx_compose.c: PRelu, Celu, Shrink, GlobalMaxPool, InstanceNormalization,
 * MeanVarianceNormalization, Hardmax, EyeLike, OneHot and LRN as compositions. */
byocl_status onnx_convert_prelu(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_celu(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_shrink(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_global_max_pool(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_instance_norm(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_mvn(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_hardmax(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_eye_like(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_one_hot(onnx_ctx *cx, const Onnx__NodeProto *n);
byocl_status onnx_convert_lrn(onnx_ctx *cx, const Onnx__NodeProto *n);

/* onnx_compose.c: input k, which must be of a float dtype (ONNX's float-only ops, and
 * compositions that compute in the input's dtype): else an error naming the ONNX op. */
byocl_status onnx_float_input(onnx_ctx *cx, int k, int *x);
/* onnx_compose.c: MaxPool's Indices for x (N x C x H x W) pooled by the window (kernel,
 * stride, dilation: H then W; pad: top, left, bottom, right) into out_hw cells: int64,
 * each window's first maximum as its flat index in x, with H and W swapped when
 * storage_order is 1; -1 with the error recorded. */
int onnx_max_pool_indices(onnx_ctx *cx, int x, const int64_t kernel[2], const int64_t stride[2],
                          const int64_t dilation[2], const int64_t pad[4],
                          const int64_t out_hw[2], int64_t storage_order);

/* onnx_ops.c: nn.log_softmax of x over `axis`; -1 with the error recorded. */
int onnx_log_softmax(onnx_ctx *cx, int x, int axis);
/* onnx_ops.c: op(a, scalar v) or op(scalar v, a), v in a's dtype; -1 on failure. */
int onnx_with_scalar(onnx_ctx *cx, const char *op, int a, double v, bool scalar_first);
/* onnx_ops.c: the axis attribute of Softmax, LogSoftmax and Hardmax (default 1 before
 * opset 13, where the input is coerced to 2-D there; -1 from 13), normalized. */
byocl_status onnx_softmax_axis(onnx_ctx *cx, int rank, int *axis);
/* onnx_einsum.c: Einsum as sums, transposes, reshapes and nn.batch_matmul. */
byocl_status onnx_convert_einsum(onnx_ctx *cx, const Onnx__NodeProto *n);
/* onnx_ops.c: cast(x, dtype); -1 on failure (recorded). */
int onnx_cast(onnx_ctx *cx, int x, byocl_dtype dtype);
/* onnx_pad.c: nn.pad(x, value) by `pads` (rank begins, then rank ends; all >= 0) in
 * `mode` ("constant", "edge", "reflect"); *y is the result. */
byocl_status onnx_pad_op(onnx_ctx *cx, int x, int value, const int64_t *pads, int rank,
                         const char *mode, int *y);
/* onnx_pad.c: x padded by `pads` (rank begins, then rank ends; negative ones crop) in
 * Pad's mode 'reflect' or 'edge', as a take per padded axis, where nn.pad cannot (a pad
 * crops, or mirrors wider than the axis); *y is the result. */
byocl_status onnx_pad_by_index(onnx_ctx *cx, int x, const int64_t *pads, int rank,
                               bool reflect, int *y);
/* onnx_pad.c: x cropped by pads that are all <= 0 (a strided_slice). */
byocl_status onnx_crop(onnx_ctx *cx, int x, const int64_t *pads, int rank, int *y);

/* ------------------------------------------------ helpers for the converters */

/* Returns a failed status at once. */
#define TRY(expr)                                                                          \
    do {                                                                                   \
        byocl_status try_st_ = (expr);                                                     \
        if (try_st_ != BYOCL_OK)                                                           \
            return try_st_;                                                                \
    } while (0)
/* Builds a node into `var`; a failure (already recorded) returns its status. */
#define TRY_ID(var, expr)                                                                  \
    int var = (expr);                                                                      \
    if (var < 0)                                                                           \
        return cx->err->status


/* Records an error about the current node: "PATH: node 'NAME' (OpType): MSG". */
byocl_status onnx_fail(onnx_ctx *cx, byocl_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether input / output k is present (optional ones may be absent or named ""). */
bool onnx_has_input(const Onnx__NodeProto *node, int k);
bool onnx_has_output(const Onnx__NodeProto *node, int k);

/* The byocl node of input k (materializing constants and pending Pads). */
byocl_status onnx_input(onnx_ctx *cx, int k, int *id);
/* With `fold`, input k of rank 4 (NCHW) that is a pending zero-valued constant Pad of H
 * and W only gives the unpadded node and the padding as (top, left, bottom, right), for
 * the consumer to apply itself. Otherwise: the node as onnx_input gives it, zero padding. */
byocl_status onnx_input_unpadded(onnx_ctx *cx, int k, bool fold, int *id, int64_t pad_tlbr[4]);
/* The import-time value of input k (an initializer, a Constant's output, a bound input);
 * an input computed at run time is BYOCL_ERR_UNSUPPORTED saying that `why` needs it. */
byocl_status onnx_input_constant(onnx_ctx *cx, int k, const char *why,
                                 const byocl_tensor **out);
/* A constant integer input of at most `max` values (any rank), as int64. */
byocl_status onnx_input_ints(onnx_ctx *cx, int k, const char *why, int64_t *vals, int max,
                             int *n);
/* Whether input k is known at import time. */
bool onnx_input_is_constant(onnx_ctx *cx, int k);

/* Binds output k of the current node to a byocl node / to an import-time constant (the
 * context takes a reference). Absent outputs are ignored. */
byocl_status onnx_output(onnx_ctx *cx, int k, int id);
byocl_status onnx_output_constant(onnx_ctx *cx, int k, byocl_tensor *value);
/* Makes output k a pending Pad of input 0 (see onnx_value), filled with `value`, or with
 * the run-time value of input `value_input` when that is >= 0. */
byocl_status onnx_output_pad(onnx_ctx *cx, int k, const int64_t *pads, int rank, double value,
                             int value_input);

/* The type of a node (always a tensor for ONNX values). */
const byocl_type *onnx_type(onnx_ctx *cx, int id);

/* Builders: each types the new node at once, so that converters can read shapes. Return
 * the node id, or -1 with the error recorded (naming the ONNX node). An argument of -1 (a
 * builder that failed) gives -1 at once, so that builders nest. */
int onnx_call(onnx_ctx *cx, const char *op, const int *args, int n_args,
              const byocl_attrs *attrs);
int onnx_call1(onnx_ctx *cx, const char *op, int arg, const byocl_attrs *attrs);
/* A reshape of node id to dims (id itself when it has that shape already). */
int onnx_reshape(onnx_ctx *cx, int id, int rank, const int64_t *dims);
int onnx_scalar(onnx_ctx *cx, byocl_dtype dtype, double v);
int onnx_constant(onnx_ctx *cx, byocl_tensor *t);
int onnx_tuple(onnx_ctx *cx, const int *fields, int n);
int onnx_getitem(onnx_ctx *cx, int tuple, int index);
/* A fresh attribute list of the module; NULL with the error recorded when out of memory. */
byocl_attrs *onnx_attrs(onnx_ctx *cx);
/* Checks a byocl_attrs_set_* status, recording an error naming the node on failure. */
byocl_status onnx_attrs_ok(onnx_ctx *cx, byocl_status st);

/* ONNX attributes of the current node. Absent ones give the default (ints: *n = -1).
 * An attribute of the wrong type is an error. */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *node, const char *name);
byocl_status onnx_attr_int(onnx_ctx *cx, const char *name, int64_t def, int64_t *out);
byocl_status onnx_attr_float(onnx_ctx *cx, const char *name, double def, double *out);
byocl_status onnx_attr_ints(onnx_ctx *cx, const char *name, int64_t *out, int max, int *n);
byocl_status onnx_attr_string(onnx_ctx *cx, const char *name, const char *def, char *buf,
                              size_t len);

/* Normalizes an axis in [-rank, rank) to [0, rank); out of range is an error. */
byocl_status onnx_axis(onnx_ctx *cx, int64_t axis, int rank, const char *what, int *out);

#endif
