/* Internal view of the IR: the structs behind include/byocl/ir.h's handles. Code under
 * codegen/ and runtime/ may read these fields directly; users go through the accessors. */
#ifndef BYOCL_IR_IMPL_H
#define BYOCL_IR_IMPL_H

#include "byocl/ir.h"
#include "arena.h"

struct byocl_op;

typedef struct byocl_node {
    byocl_node_kind kind;
    const char *name;          /* Var name; binding name of other nodes or NULL */
    const byocl_type *type;    /* never NULL: points at a NONE type until inferred */
    const struct byocl_op *op; /* CALL of an op */
    const char *callee;        /* CALL of a global function */
    int n_args;
    int *args;                 /* CALL args, TUPLE fields, GETITEM tuple (args[0]) */
    byocl_attrs attrs;         /* CALL of an op */
    int index;                 /* GETITEM */
    byocl_tensor *value;       /* CONSTANT (one reference owned by the node) */
    int line, col;             /* source position, 0 when built */
} byocl_node;

struct byocl_function {
    byocl_module *mod;
    const char *name;
    byocl_node *nodes;
    int n_nodes, cap_nodes;
    int *params;
    int n_params, cap_params;
    int body;
    byocl_attrs attrs;
    const byocl_type *ret_type; /* NULL when neither declared nor inferred */
};

struct byocl_module {
    byocl_arena arena;
    byocl_function **fns;
    int n_fns, cap_fns;
};

/* The shared "not inferred" type. */
extern const byocl_type ir_type_none;

/* Deep copy of an attribute list into m (used when copying nodes between modules). */
byocl_status ir_attrs_copy(byocl_module *m, const byocl_attrs *src, byocl_attrs *dst,
                           byocl_error *err);
/* Deep copy of a type into m. */
const byocl_type *ir_type_copy(byocl_module *m, const byocl_type *t);

/* The shortest spelling of `v` that reads back to the same value at `bits` precision
 * (16: float16, 32: float32, 64: double), in TVM's %g style ("1000", "2e-05", "0.1"). */
void ir_format_real(double v, int bits, char *buf, size_t len);

/* Appends a node (args copied into the arena); returns its id or -1. Checks only that
 * argument ids are in range; callers validate the rest. */
int ir_fn_append(byocl_function *fn, const byocl_node *proto, byocl_error *err);

#endif
