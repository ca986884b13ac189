/* byocl: the op registry, read-only view (what `byocl ops` prints). */
#ifndef BYOCL_OPS_H
#define BYOCL_OPS_H

#include <stdbool.h>
#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct byocl_op byocl_op;

int byocl_op_count(void);
const byocl_op *byocl_op_at(int index);
const byocl_op *byocl_op_find(const char *name);

const char *byocl_op_name(const byocl_op *op);
const char *byocl_op_doc(const byocl_op *op);
/* Argument count range; max -1 means variadic. */
void byocl_op_arity(const byocl_op *op, int *min_args, int *max_args);
int byocl_op_num_attrs(const byocl_op *op);
/* Attribute k: name, kind, whether it is required, default as text ("[1, 1]", "None"),
 * one-line doc. */
const char *byocl_op_attr_name(const byocl_op *op, int k);
byocl_attr_kind byocl_op_attr_kind(const byocl_op *op, int k);
bool byocl_op_attr_required(const byocl_op *op, int k);
char *byocl_op_attr_default_str(const byocl_op *op, int k, char *buf, size_t len);
const char *byocl_op_attr_doc(const byocl_op *op, int k);

/* One attribute value in the text format's spelling: 1, 2e-05f, True, "NCHW", [1, 2], None. */
char *byocl_attr_value_str(const byocl_attr *attr, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
