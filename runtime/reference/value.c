/* Runtime values: tensors or tuples of them, stored flattened. */
#include "value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static byocl_status value_make(byocl_value *out, const byocl_type *type, int n,
                               byocl_error *err)
{
    *out = BYOCL_VALUE_EMPTY;
    byocl_tensor **ts = calloc(n > 0 ? (size_t)n : 1, sizeof *ts);
    if (!ts)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    *out = (byocl_value){type, n, ts};
    return BYOCL_OK;
}

byocl_status ref_value_from_tensors(byocl_value *out, const byocl_type *type,
                                    byocl_tensor *const *tensors, int n, byocl_error *err)
{
    byocl_status st = value_make(out, type, n, err);
    for (int i = 0; st == BYOCL_OK && i < n; i++)
        out->tensors[i] = byocl_tensor_ref(tensors[i]);
    return st;
}

/* Allocates the leaves of `type` depth-first into ts[*at...]. */
static byocl_status alloc_leaves(const byocl_type *type, byocl_tensor **ts, int *at,
                                 byocl_error *err)
{
    if (type->kind == BYOCL_TYPE_TUPLE) {
        for (int k = 0; k < type->n_fields; k++) {
            byocl_status st = alloc_leaves(type->fields[k], ts, at, err);
            if (st != BYOCL_OK)
                return st;
        }
        return BYOCL_OK;
    }
    if (type->kind != BYOCL_TYPE_TENSOR)
        return byocl_error_set(err, BYOCL_ERR_TYPE,
                               "the type is not inferred (run byocl_infer_types first)");
    if (!(ts[*at] = byocl_tensor_new(type->dtype, &type->shape, err)))
        return err ? err->status : BYOCL_ERR_NOMEM;
    (*at)++;
    return BYOCL_OK;
}

byocl_status ref_value_alloc(byocl_value *out, const byocl_type *type, byocl_error *err)
{
    byocl_status st = value_make(out, type, byocl_type_num_tensors(type), err);
    int at = 0;
    if (st == BYOCL_OK && (st = alloc_leaves(type, out->tensors, &at, err)) != BYOCL_OK)
        ref_value_release(out);
    return st;
}

byocl_status ref_value_tuple(byocl_value *out, const byocl_type *type,
                             const byocl_value *fields, int n_fields, byocl_error *err)
{
    int n = 0;
    for (int k = 0; k < n_fields; k++)
        n += fields[k].n;
    byocl_status st = value_make(out, type, n, err);
    for (int k = 0, at = 0; st == BYOCL_OK && k < n_fields; k++)
        for (int i = 0; i < fields[k].n; i++)
            out->tensors[at++] = byocl_tensor_ref(fields[k].tensors[i]);
    return st;
}

byocl_status ref_value_field(byocl_value *out, const byocl_value *tuple, int index,
                             byocl_error *err)
{
    *out = BYOCL_VALUE_EMPTY;
    const byocl_type *t = tuple->type;
    if (!t || t->kind != BYOCL_TYPE_TUPLE)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "field %d of a value that is not a tuple",
                               index);
    if (index < 0 || index >= t->n_fields)
        return byocl_error_set(err, BYOCL_ERR_TYPE, "field %d of a %d-tuple", index,
                               t->n_fields);
    int at = 0;
    for (int k = 0; k < index; k++)
        at += byocl_type_num_tensors(t->fields[k]);
    const byocl_type *ft = t->fields[index];
    return ref_value_from_tensors(out, ft, tuple->tensors + at, byocl_type_num_tensors(ft),
                                  err);
}

/* Compares the leaves of `type` with v's tensors from *at on. */
static bool leaves_match(const byocl_value *v, const byocl_type *type, int *at)
{
    if (type->kind == BYOCL_TYPE_TUPLE) {
        for (int k = 0; k < type->n_fields; k++)
            if (!leaves_match(v, type->fields[k], at))
                return false;
        return true;
    }
    if (type->kind != BYOCL_TYPE_TENSOR || *at >= v->n)
        return false;
    const byocl_tensor *t = v->tensors[(*at)++];
    return byocl_tensor_dtype(t) == type->dtype &&
           byocl_shape_equal(byocl_tensor_shape(t), &type->shape);
}

/* Writes the type the value actually has: its own structure with its tensors' types. */
static void value_type_str(const byocl_value *v, char *buf, size_t len)
{
    if (v->n == 1 && (!v->type || v->type->kind == BYOCL_TYPE_TENSOR)) {
        const byocl_shape *s = byocl_tensor_shape(v->tensors[0]);
        byocl_type t = byocl_type_tensor(byocl_tensor_dtype(v->tensors[0]), s->rank, s->dims);
        byocl_type_str(&t, buf, len);
        return;
    }
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < v->n && at < len; i++) {
        const byocl_shape *s = byocl_tensor_shape(v->tensors[i]);
        byocl_type t = byocl_type_tensor(byocl_tensor_dtype(v->tensors[i]), s->rank, s->dims);
        char one[256];
        int w = snprintf(buf + at, len - at, "%s%s", i ? ", " : "(",
                         byocl_type_str(&t, one, sizeof one));
        at += w > 0 ? (size_t)w : 0;
    }
    if (at < len)
        snprintf(buf + at, len - at, "%s)", v->n ? "" : "(");
}

byocl_status ref_value_check(const byocl_value *v, const byocl_type *type, byocl_error *err)
{
    int at = 0;
    if (leaves_match(v, type, &at) && at == v->n)
        return BYOCL_OK;
    char want[512], got[512];
    value_type_str(v, got, sizeof got);
    return byocl_error_set(err, BYOCL_ERR_TYPE, "expected %s, got %s",
                           byocl_type_str(type, want, sizeof want), got);
}

byocl_tensor **ref_value_take_tensors(byocl_value *v, int *n)
{
    byocl_tensor **ts = v->tensors;
    *n = v->n;
    *v = BYOCL_VALUE_EMPTY;
    return ts;
}

void ref_value_release(byocl_value *v)
{
    for (int i = 0; i < v->n; i++)
        byocl_tensor_unref(v->tensors[i]);
    free(v->tensors);
    *v = BYOCL_VALUE_EMPTY;
}
