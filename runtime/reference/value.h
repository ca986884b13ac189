/* The reference executor's values: one tensor, or a (possibly nested) tuple of
 * tensors. The tensors are kept flattened in field order, which is exactly how op kernels
 * and runtime modules take them; the value's type gives the tuple structure back. */
#ifndef BYOCL_VALUE_H
#define BYOCL_VALUE_H

#include "byocl/ir.h"

typedef struct byocl_value {
    const byocl_type *type; /* TENSOR or TUPLE (owned by a module); NULL when empty */
    int n;                  /* tensors once flattened */
    byocl_tensor **tensors; /* n references owned by the value */
} byocl_value;

/* An empty value (nothing to release). */
#define BYOCL_VALUE_EMPTY ((byocl_value){NULL, 0, NULL})

/* A value of `type` holding new references to `tensors` (n = byocl_type_num_tensors). */
byocl_status ref_value_from_tensors(byocl_value *out, const byocl_type *type,
                                    byocl_tensor *const *tensors, int n, byocl_error *err);
/* Fresh zero-filled tensors shaped like `type` (an op's output). */
byocl_status ref_value_alloc(byocl_value *out, const byocl_type *type, byocl_error *err);
/* The tuple (of `type`) of the given field values, sharing their tensors. */
byocl_status ref_value_tuple(byocl_value *out, const byocl_type *type,
                             const byocl_value *fields, int n_fields, byocl_error *err);
/* Field `index` of a tuple value, sharing its tensors. */
byocl_status ref_value_field(byocl_value *out, const byocl_value *tuple, int index,
                             byocl_error *err);
/* Checks that the tensors have the dtypes and shapes `type` describes; the error says
 * "expected <type>, got <type>" (callers prefix what the value is). */
byocl_status ref_value_check(const byocl_value *v, const byocl_type *type, byocl_error *err);
/* Moves the tensors out into a malloc'ed array (the value becomes empty). */
byocl_tensor **ref_value_take_tensors(byocl_value *v, int *n);
void ref_value_release(byocl_value *v);

#endif
