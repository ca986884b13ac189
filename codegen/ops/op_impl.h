/* Internal view of the op registry: what an op file defines.
 *
 * Each op group file (conv.c, pool.c, nn.c, elemwise.c, transform.c, index.c, image.c,
 * annotation.c)
 * exports one table `const byocl_op ops_<group>[]` and its length
 * `const int ops_<group>_count`; registry.c concatenates them. */
#ifndef BYOCL_OP_IMPL_H
#define BYOCL_OP_IMPL_H

#include "byocl/ops.h"
#include "ir/ir_impl.h"

#define BYOCL_OP_MAX_ATTRS 16

/* One attribute an op accepts, with its default. */
typedef struct byocl_attr_schema {
    const char *name;
    byocl_attr_kind kind;   /* INT, FLOAT, BOOL, STR, INTS or FLOATS                 */
    bool required;          /* no default: the call must give it                     */
    bool nullable;          /* None is accepted (and is the default when def_null)   */
    bool def_null;          /* default is None                                       */
    bool int_or_ints;       /* INTS that also accepts a single INT, kept as INT      */
    int cols;               /* INTS as a list of lists of `cols` (pad_width: 2); a   */
                            /* flat list of a multiple of `cols` is taken as well    */
    int64_t def_i;          /* INT/BOOL default                                      */
    double def_f;           /* FLOAT default                                         */
    const char *def_s;      /* STR default                                           */
    int def_n;              /* INTS, FLOATS default count                            */
    int64_t def_ints[8];    /* INTS default values                                   */
    double def_floats[4];   /* FLOATS default values                                 */
    const char *doc;
} byocl_attr_schema;

/* What a type relation sees. */
typedef struct byocl_infer_ctx {
    byocl_module *mod;                  /* allocate tuple result types here           */
    const byocl_type *const *arg_types; /* one per argument (tuples stay tuples)      */
    int n_args;
    const byocl_attrs *attrs;           /* validated, defaults filled                */
    /* Per argument, its value where it is a constant node, else NULL (arange's shape
     * needs its arguments' values); NULL itself when no argument is known. */
    const byocl_tensor *const *arg_values;
} byocl_infer_ctx;

struct byocl_op {
    const char *name;
    int min_args, max_args;  /* max -1: variadic */
    const byocl_attr_schema *attrs;
    int n_attrs;
    const char *doc;
    /* Optional: further checks and normalization of attribute values once the schema
     * check passed (e.g. padding of 2 values becomes 4). May rewrite items in place,
     * allocating in m. */
    byocl_status (*check_attrs)(byocl_module *m, byocl_attrs *attrs, byocl_error *err);
    /* Type relation: writes the result type (a tensor by value, or a tuple made with
     * byocl_module_tuple_type) into *out. Errors say what is wrong (the caller adds the
     * node and op). */
    byocl_status (*infer)(const byocl_infer_ctx *ctx, byocl_type *out, byocl_error *err);
    /* Reference kernel. Inputs and outputs are flattened: a tuple argument contributes
     * its tensors in order, a tuple result takes one output tensor per field. Outputs are
     * allocated by the caller with the inferred types. NULL for ops that never execute. */
    byocl_status (*ref)(const byocl_attrs *attrs, const byocl_tensor *const *in, int n_in,
                        byocl_tensor *const *out, int n_out, byocl_error *err);
    /* Optional: the result is the argument as it is (annotations, copy), so that folding
     * a call over a constant shares the constant's tensor instead of copying its data. */
    bool identity;
};

/* Validates `given` against the op's schema: unknown keys, wrong kinds and missing
 * required attributes are errors naming the attribute; the result lists every schema
 * attribute in order with defaults filled, then runs op->check_attrs. */
byocl_status ops_normalize_attrs(byocl_module *m, const byocl_op *op,
                                 const byocl_attrs *given, byocl_attrs *out,
                                 byocl_error *err);
/* True when attribute k of the call equals its schema default (the printer omits it). */
bool ops_attr_is_default(const byocl_op *op, int k, const byocl_attr *value);

/* Shared helpers for type relations. */
/* numpy broadcasting of two shapes; error says which dims clash. */
byocl_status ops_broadcast_shapes(const byocl_shape *a, const byocl_shape *b,
                                  byocl_shape *out, byocl_error *err);
/* Checks arg k is a tensor (not a tuple, inferred) and returns it. */
const byocl_type *ops_infer_tensor_arg(const byocl_infer_ctx *ctx, int k, byocl_error *err);

#endif
