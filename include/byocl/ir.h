/* byocl: the IR, in TVM Relay's vocabulary.
 *
 * A module maps global names to functions. A function stores its nodes in one array in
 * topological order: every node's arguments have smaller ids than the node itself, so a
 * forward walk over ids visits producers before consumers. Node ids are plain ints local
 * to their function. Nodes are Var (a parameter), Constant, Call (of an op or of a global
 * function), Tuple and TupleGetItem; the function's body is one node id.
 *
 * Everything a module owns (names, types, attributes, argument lists) lives in the module
 * and is freed with it; constant tensors are reference-counted and may be shared. */
#ifndef BYOCL_IR_H
#define BYOCL_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/error.h"
#include "byocl/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- types */

typedef enum byocl_type_kind {
    BYOCL_TYPE_NONE = 0, /* not inferred yet */
    BYOCL_TYPE_TENSOR,
    BYOCL_TYPE_TUPLE
} byocl_type_kind;

typedef struct byocl_type {
    byocl_type_kind kind;
    byocl_dtype dtype;                   /* TENSOR */
    byocl_shape shape;                   /* TENSOR; rank 0 is a scalar */
    int n_fields;                        /* TUPLE */
    const struct byocl_type *const *fields; /* TUPLE; owned by a module */
} byocl_type;

/* A tensor type by value (no allocation). */
byocl_type byocl_type_tensor(byocl_dtype dtype, int rank, const int64_t *dims);
bool byocl_type_equal(const byocl_type *a, const byocl_type *b);
/* Relay spelling: "Tensor[(1, 3), float32]", "float32" for a scalar, "(T1, T2)" for tuples,
 * "?" when not inferred. Truncated to fit; returns buf. */
char *byocl_type_str(const byocl_type *type, char *buf, size_t len);
/* Number of tensors in the type once tuples are flattened (a tensor counts 1). */
int byocl_type_num_tensors(const byocl_type *type);

/* ----------------------------------------------------------- attributes */

typedef enum byocl_attr_kind {
    BYOCL_ATTR_NULL = 0, /* None */
    BYOCL_ATTR_INT,
    BYOCL_ATTR_FLOAT,
    BYOCL_ATTR_BOOL,
    BYOCL_ATTR_STR,
    BYOCL_ATTR_INTS,     /* [1, 2, 3]; or [[0, 0], [1, 2]] (cols 2) */
    BYOCL_ATTR_FLOATS    /* [0f, 0.5f, 1f] (image.resize2d's roi) */
} byocl_attr_kind;

typedef struct byocl_attr {
    const char *key;
    byocl_attr_kind kind;
    int64_t i;            /* INT; BOOL as 0/1 */
    double f;             /* FLOAT */
    const char *s;        /* STR */
    int n;                /* INTS, FLOATS: count */
    const int64_t *ints;  /* INTS: values */
    int cols;             /* INTS: > 0 when written as a list of lists of `cols` each
                           * ([[0, 0], [1, 2]]: nn.pad's pad_width), kept flat in ints */
    const double *floats; /* FLOATS: values */
} byocl_attr;

/* An ordered list of attributes. Call attributes are kept in the op's declared order with
 * every default filled in (after validation), so kernels can rely on them being present. */
typedef struct byocl_attrs {
    int n;
    byocl_attr *items;
} byocl_attrs;

const byocl_attr *byocl_attrs_find(const byocl_attrs *attrs, const char *key);
/* Typed getters with a fallback when the key is absent or of another kind.
 * get_int accepts BOOL too; get_float accepts INT. */
int64_t byocl_attrs_get_int(const byocl_attrs *attrs, const char *key, int64_t fallback);
double byocl_attrs_get_float(const byocl_attrs *attrs, const char *key, double fallback);
bool byocl_attrs_get_bool(const byocl_attrs *attrs, const char *key, bool fallback);
const char *byocl_attrs_get_str(const byocl_attrs *attrs, const char *key, const char *fallback);
/* INTS: returns the count and points *out at the values; an INT gives count 1; else -1. */
int byocl_attrs_get_ints(const byocl_attrs *attrs, const char *key, const int64_t **out);
/* FLOATS: returns the count and points *out at the values; a FLOAT gives count 1; else -1. */
int byocl_attrs_get_floats(const byocl_attrs *attrs, const char *key, const double **out);

/* ------------------------------------------------------- module, function */

typedef struct byocl_module byocl_module;
typedef struct byocl_function byocl_function;

typedef enum byocl_node_kind {
    BYOCL_NODE_VAR = 0,
    BYOCL_NODE_CONSTANT,
    BYOCL_NODE_CALL,
    BYOCL_NODE_TUPLE,
    BYOCL_NODE_GETITEM
} byocl_node_kind;

byocl_module *byocl_module_new(void);
void byocl_module_free(byocl_module *m); /* NULL is fine */
/* A deep copy (constant tensors are shared by reference). */
byocl_module *byocl_module_clone(const byocl_module *m, byocl_error *err);

int byocl_module_num_functions(const byocl_module *m);
byocl_function *byocl_module_function_at(const byocl_module *m, int index);
byocl_function *byocl_module_find(const byocl_module *m, const char *name);
/* Removes and frees one function; other functions keep their indices' order. */
byocl_status byocl_module_remove(byocl_module *m, const char *name, byocl_error *err);

/* Puts `fresh` (a function of `m`, typically just built by a pass) in the place of the
 * function called `name`, which is freed; `fresh` takes its name and position. */
byocl_status byocl_module_replace(byocl_module *m, const char *name, byocl_function *fresh,
                                  byocl_error *err);
/* Starts a new, empty function `@name`; an existing name is an error. */
byocl_function *byocl_module_add_function(byocl_module *m, const char *name, byocl_error *err);
/* Deep-copies `fn` (from any module) into `m` under `new_name` (NULL keeps its name). */
byocl_function *byocl_module_copy_function(byocl_module *m, const byocl_function *fn,
                                           const char *new_name, byocl_error *err);

byocl_module *byocl_function_module(const byocl_function *fn);
const char *byocl_function_name(const byocl_function *fn);
int byocl_function_num_nodes(const byocl_function *fn);
int byocl_function_num_params(const byocl_function *fn);
int byocl_function_param(const byocl_function *fn, int k); /* node id of parameter k */
int byocl_function_body(const byocl_function *fn);         /* node id, -1 when unset */
/* Declared (parsed) or inferred return type; NULL when neither. */
const byocl_type *byocl_function_ret_type(const byocl_function *fn);
const byocl_attrs *byocl_function_attrs(const byocl_function *fn);
/* Node id of the parameter named `name` (without '%'), or -1. */
int byocl_function_find_param(const byocl_function *fn, const char *name);

/* --------------------------------------------------------- node accessors */

byocl_node_kind byocl_node_kind_of(const byocl_function *fn, int id);
/* Var: its name without '%'. Others: the name the source gave the node (the text's
 * binding name, "x0" for `%x0 = ...`, "78" for `%78 = ...`; an ONNX node's name) or NULL. */
const char *byocl_node_name(const byocl_function *fn, int id);
/* Inferred (or, for a Var, declared) type; kind NONE until byocl_infer_types. */
const byocl_type *byocl_node_type(const byocl_function *fn, int id);
int byocl_node_num_args(const byocl_function *fn, int id);
int byocl_node_arg(const byocl_function *fn, int id, int k);
/* Call of an op: the op's Relay name ("nn.conv2d"); else NULL. */
const char *byocl_node_op(const byocl_function *fn, int id);
/* Call of a global function: its name without '@'; else NULL. */
const char *byocl_node_callee(const byocl_function *fn, int id);
/* TupleGetItem: the field index. */
int byocl_node_index(const byocl_function *fn, int id);
/* Call: its attributes (op calls: validated, defaults filled). Others: empty. */
const byocl_attrs *byocl_node_attrs(const byocl_function *fn, int id);
/* Constant: its tensor (borrowed). */
const byocl_tensor *byocl_node_value(const byocl_function *fn, int id);
/* How errors name a node, as `byocl print` shows it: by the name the source gave it
 * ("%78", "%x0", a parameter "%data", an ONNX node "%conv1") where the printer keeps it,
 * else by byocl's number ("%12"), "a constant" or "the result" (the body, printed
 * inline); see byocl_text_node_label. Returns buf. */
char *byocl_node_label(const byocl_function *fn, int id, char *buf, size_t len);
/* Where the text parser found the node (1-based), or 0/0 for built nodes. */
void byocl_node_pos(const byocl_function *fn, int id, int *line, int *col);

/* --------------------------------------------------------------- builder
 * Each returns the new node id, or -1 with err set (unknown op, bad attribute, argument
 * id out of range). Attributes of op calls are checked against the op's schema at once. */

/* Attribute lists under construction (owned by the module). */
byocl_attrs *byocl_attrs_new(byocl_module *m);
byocl_status byocl_attrs_set_int(byocl_module *m, byocl_attrs *a, const char *key, int64_t v);
byocl_status byocl_attrs_set_float(byocl_module *m, byocl_attrs *a, const char *key, double v);
byocl_status byocl_attrs_set_bool(byocl_module *m, byocl_attrs *a, const char *key, bool v);
byocl_status byocl_attrs_set_str(byocl_module *m, byocl_attrs *a, const char *key, const char *v);
byocl_status byocl_attrs_set_ints(byocl_module *m, byocl_attrs *a, const char *key,
                                  const int64_t *v, int n);
byocl_status byocl_attrs_set_floats(byocl_module *m, byocl_attrs *a, const char *key,
                                    const double *v, int n);
byocl_status byocl_attrs_set_null(byocl_module *m, byocl_attrs *a, const char *key);
/* Sets (replacing an existing key) a copy of `attr` with all its storage in `m`. */
byocl_status byocl_attrs_set(byocl_module *m, byocl_attrs *a, const byocl_attr *attr);

int byocl_function_add_param(byocl_function *fn, const char *name, const byocl_type *type,
                             byocl_error *err);
/* The tensor is referenced, not copied. */
int byocl_function_add_constant(byocl_function *fn, byocl_tensor *value, byocl_error *err);
/* Scalar constant of any dtype (for `2f`, `0i64`). */
int byocl_function_add_scalar(byocl_function *fn, byocl_dtype dtype, double value,
                              byocl_error *err);
/* `attrs` may be NULL (all defaults). */
int byocl_function_add_call(byocl_function *fn, const char *op, const int *args, int n_args,
                            const byocl_attrs *attrs, byocl_error *err);
/* Same, with attributes in the text format's syntax: "strides=[2, 2], channels=64". */
int byocl_function_add_call_str(byocl_function *fn, const char *op, const int *args, int n_args,
                                const char *attrs_text, byocl_error *err);
int byocl_function_add_call_global(byocl_function *fn, const char *callee, const int *args,
                                   int n_args, byocl_error *err);
int byocl_function_add_tuple(byocl_function *fn, const int *fields, int n_fields, byocl_error *err);
int byocl_function_add_getitem(byocl_function *fn, int tuple, int index, byocl_error *err);

byocl_status byocl_function_set_body(byocl_function *fn, int id, byocl_error *err);
/* Function attributes, e.g. Compiler="my_npu", Primitive=1. */
byocl_status byocl_function_set_attr(byocl_function *fn, const byocl_attr *attr, byocl_error *err);
byocl_status byocl_function_set_ret_type(byocl_function *fn, const byocl_type *type,
                                         byocl_error *err);
/* Binding name shown by the printer instead of a number (NULL clears it). */
byocl_status byocl_node_set_name(byocl_function *fn, int id, const char *name, byocl_error *err);
void byocl_node_set_pos(byocl_function *fn, int id, int line, int col);

/* Allocates a type in the module (tuple types need this; tensor types may use it). */
const byocl_type *byocl_module_intern_type(byocl_module *m, const byocl_type *type);
const byocl_type *byocl_module_tuple_type(byocl_module *m, const byocl_type *const *fields,
                                          int n_fields);

#ifdef __cplusplus
}
#endif
#endif
