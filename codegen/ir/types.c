/* Types: tensor and tuple types, their equality and Relay spelling. */
#include <stdio.h>
#include <string.h>

#include "ir_impl.h"
#include "base/strbuf.h"

const byocl_type ir_type_none = {.kind = BYOCL_TYPE_NONE};

byocl_type byocl_type_tensor(byocl_dtype dtype, int rank, const int64_t *dims)
{
    byocl_type t;
    memset(&t, 0, sizeof t);
    t.kind = BYOCL_TYPE_TENSOR;
    t.dtype = dtype;
    t.shape = byocl_shape_make(rank, dims);
    return t;
}

bool byocl_type_equal(const byocl_type *a, const byocl_type *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case BYOCL_TYPE_NONE: return true;
    case BYOCL_TYPE_TENSOR: return a->dtype == b->dtype && byocl_shape_equal(&a->shape, &b->shape);
    case BYOCL_TYPE_TUPLE:
        if (a->n_fields != b->n_fields)
            return false;
        for (int i = 0; i < a->n_fields; i++)
            if (!byocl_type_equal(a->fields[i], b->fields[i]))
                return false;
        return true;
    }
    return false;
}

static void type_str_at(const byocl_type *t, byocl_strbuf *sb)
{
    switch (t->kind) {
    case BYOCL_TYPE_NONE: base_strbuf_printf(sb, "?"); break;
    case BYOCL_TYPE_TENSOR:
        if (t->shape.rank == 0) {
            base_strbuf_printf(sb, "%s", byocl_dtype_name(t->dtype));
        } else {
            char s[256];
            base_strbuf_printf(sb, "Tensor[%s, %s]", byocl_shape_str(&t->shape, s, sizeof s),
                               byocl_dtype_name(t->dtype));
        }
        break;
    case BYOCL_TYPE_TUPLE:
        base_strbuf_printf(sb, "(");
        for (int i = 0; i < t->n_fields; i++) {
            if (i)
                base_strbuf_printf(sb, ", ");
            type_str_at(t->fields[i], sb);
        }
        base_strbuf_printf(sb, t->n_fields == 1 ? ",)" : ")");
        break;
    }
}

char *byocl_type_str(const byocl_type *type, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    byocl_strbuf sb;
    base_strbuf_init(&sb, buf, len);
    type_str_at(type, &sb);
    if (sb.at >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
    return buf;
}

int byocl_type_num_tensors(const byocl_type *type)
{
    if (type->kind == BYOCL_TYPE_TENSOR)
        return 1;
    int n = 0;
    if (type->kind == BYOCL_TYPE_TUPLE)
        for (int i = 0; i < type->n_fields; i++)
            n += byocl_type_num_tensors(type->fields[i]);
    return n;
}

const byocl_type *ir_type_copy(byocl_module *m, const byocl_type *t)
{
    if (t->kind == BYOCL_TYPE_NONE)
        return &ir_type_none;
    if (t->kind == BYOCL_TYPE_TUPLE)
        return byocl_module_tuple_type(m, t->fields, t->n_fields);
    byocl_type *c = ir_arena_memdup(&m->arena, t, sizeof *t);
    if (c) {
        c->n_fields = 0;
        c->fields = NULL;
    }
    return c;
}

const byocl_type *byocl_module_intern_type(byocl_module *m, const byocl_type *type)
{
    return ir_type_copy(m, type);
}

const byocl_type *byocl_module_tuple_type(byocl_module *m, const byocl_type *const *fields,
                                          int n_fields)
{
    byocl_type *t = ir_arena_alloc(&m->arena, sizeof *t);
    const byocl_type **f =
        ir_arena_alloc(&m->arena, sizeof *f * (size_t)(n_fields > 0 ? n_fields : 1));
    if (!t || !f)
        return NULL;
    for (int i = 0; i < n_fields; i++) {
        f[i] = ir_type_copy(m, fields[i]);
        if (!f[i])
            return NULL;
    }
    t->kind = BYOCL_TYPE_TUPLE;
    t->n_fields = n_fields;
    t->fields = f;
    return t;
}
