/* Attribute schemas: validating a call's attributes against its op, filling defaults,
 * spelling values the way the text format does; and helpers shared by type relations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_impl.h"
#include "base/strbuf.h"

static const char *kind_expectation(const byocl_attr_schema *s)
{
    switch (s->kind) {
    case BYOCL_ATTR_INT: return "an integer";
    case BYOCL_ATTR_FLOAT: return "a number";
    case BYOCL_ATTR_BOOL: return "True or False";
    case BYOCL_ATTR_STR: return "a string";
    case BYOCL_ATTR_INTS: return s->int_or_ints ? "an integer or a list of integers"
                                 : s->cols == 2 ? "a list of [before, after] pairs"
                                 : s->cols      ? "a list of lists of integers"
                                                : "a list of integers";
    case BYOCL_ATTR_FLOATS: return "a list of numbers";
    case BYOCL_ATTR_NULL: break;
    }
    return "None";
}

/* The schema default as an attribute value. */
static byocl_attr schema_default(const byocl_attr_schema *s)
{
    byocl_attr a = {.key = s->name, .kind = s->kind};
    if (s->def_null) {
        a.kind = BYOCL_ATTR_NULL;
        return a;
    }
    switch (s->kind) {
    case BYOCL_ATTR_INT:
    case BYOCL_ATTR_BOOL: a.i = s->def_i; break;
    case BYOCL_ATTR_FLOAT: a.f = s->def_f; break;
    case BYOCL_ATTR_STR: a.s = s->def_s ? s->def_s : ""; break;
    case BYOCL_ATTR_INTS:
        a.n = s->def_n;
        a.ints = s->def_ints;
        break;
    case BYOCL_ATTR_FLOATS:
        a.n = s->def_n;
        a.floats = s->def_floats;
        break;
    case BYOCL_ATTR_NULL: break;
    }
    return a;
}

/* Converts `given` to the schema's kind where the text format allows it (an int for a
 * float, 0/1 for a bool, one int for a list, a list of ints for a list of floats; the
 * last in m's arena): BYOCL_ERR_INVALID when the kinds cannot agree. */
static byocl_status coerce(byocl_module *m, const byocl_attr_schema *s, const byocl_attr *given,
                           byocl_attr *out, int64_t *one_int)
{
    *out = *given;
    out->key = s->name;
    if (given->kind == BYOCL_ATTR_NULL)
        return s->nullable ? BYOCL_OK : BYOCL_ERR_INVALID;
    if (given->kind == BYOCL_ATTR_INTS && (given->cols || s->cols)) {
        /* Rows of the schema's width only; a flat list (the importers' spelling) is cut
         * into rows. */
        if (s->kind != BYOCL_ATTR_INTS || !s->cols || (given->cols && given->cols != s->cols) ||
            given->n % s->cols != 0)
            return BYOCL_ERR_INVALID;
        out->cols = s->cols;
        return BYOCL_OK;
    }
    if (given->kind == s->kind)
        return BYOCL_OK;
    switch (s->kind) {
    case BYOCL_ATTR_FLOAT:
        if (given->kind != BYOCL_ATTR_INT)
            return BYOCL_ERR_INVALID;
        out->kind = BYOCL_ATTR_FLOAT;
        out->f = (double)given->i;
        return BYOCL_OK;
    case BYOCL_ATTR_BOOL:
        if (given->kind != BYOCL_ATTR_INT || (given->i != 0 && given->i != 1))
            return BYOCL_ERR_INVALID;
        out->kind = BYOCL_ATTR_BOOL;
        return BYOCL_OK;
    case BYOCL_ATTR_INTS:
        if (given->kind != BYOCL_ATTR_INT)
            return BYOCL_ERR_INVALID;
        if (s->int_or_ints)
            return BYOCL_OK;
        *one_int = given->i;
        out->kind = BYOCL_ATTR_INTS;
        out->n = 1;
        out->ints = one_int;
        return BYOCL_OK;
    case BYOCL_ATTR_FLOATS: {
        if (given->kind != BYOCL_ATTR_INTS)
            return BYOCL_ERR_INVALID;
        double *v = ir_arena_alloc(&m->arena, sizeof *v * (size_t)(given->n ? given->n : 1));
        if (!v)
            return BYOCL_ERR_NOMEM;
        for (int i = 0; i < given->n; i++)
            v[i] = (double)given->ints[i];
        out->kind = BYOCL_ATTR_FLOATS;
        out->floats = v;
        return BYOCL_OK;
    }
    default: return BYOCL_ERR_INVALID;
    }
}

byocl_status ops_normalize_attrs(byocl_module *m, const byocl_op *op,
                                 const byocl_attrs *given, byocl_attrs *out,
                                 byocl_error *err)
{
    out->n = 0;
    out->items = NULL;
    int n_given = given ? given->n : 0;
    for (int g = 0; g < n_given; g++) {
        const char *key = given->items[g].key;
        bool known = false;
        for (int k = 0; k < op->n_attrs && !known; k++)
            known = strcmp(op->attrs[k].name, key) == 0;
        if (!known) {
            char list[512] = "";
            size_t at = 0;
            for (int k = 0; k < op->n_attrs && at < sizeof list; k++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", k ? ", " : "",
                                       op->attrs[k].name);
            if (op->n_attrs == 0)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "%s takes no attributes, but was given '%s'", op->name,
                                       key);
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s has no attribute '%s' (it has: %s)", op->name, key, list);
        }
        for (int h = 0; h < g; h++)
            if (strcmp(given->items[h].key, key) == 0)
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "attribute '%s' of %s is given twice", key, op->name);
    }
    if (op->n_attrs == 0)
        return BYOCL_OK;
    out->items = ir_arena_alloc(&m->arena, sizeof(byocl_attr) * (size_t)op->n_attrs);
    if (!out->items)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < op->n_attrs; k++) {
        const byocl_attr_schema *s = &op->attrs[k];
        const byocl_attr *g = byocl_attrs_find(given, s->name);
        byocl_attr value;
        int64_t one_int;
        byocl_status st = BYOCL_OK;
        if (!g) {
            if (s->required)
                return byocl_error_set(err, BYOCL_ERR_INVALID, "%s requires attribute '%s'",
                                       op->name, s->name);
            value = schema_default(s);
        } else if ((st = coerce(m, s, g, &value, &one_int)) == BYOCL_ERR_NOMEM) {
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        } else if (st != BYOCL_OK) {
            char got[256];
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "bad value for attribute '%s' of %s: expected %s, got %s",
                                   s->name, op->name, kind_expectation(s),
                                   byocl_attr_value_str(g, got, sizeof got));
        }
        /* Copy into the module (defaults point at static schema storage). */
        byocl_attrs one = {1, &value};
        byocl_attrs copied;
        if (ir_attrs_copy(m, &one, &copied, err) != BYOCL_OK)
            return BYOCL_ERR_NOMEM;
        out->items[k] = copied.items[0];
        out->n = k + 1;
    }
    if (op->check_attrs)
        return op->check_attrs(m, out, err);
    return BYOCL_OK;
}

static bool attr_values_equal(const byocl_attr *a, const byocl_attr *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case BYOCL_ATTR_NULL: return true;
    case BYOCL_ATTR_INT:
    case BYOCL_ATTR_BOOL: return a->i == b->i;
    case BYOCL_ATTR_FLOAT: return a->f == b->f;
    case BYOCL_ATTR_STR: return strcmp(a->s, b->s) == 0;
    case BYOCL_ATTR_INTS:
        return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n) == 0);
    case BYOCL_ATTR_FLOATS:
        if (a->n != b->n)
            return false;
        for (int i = 0; i < a->n; i++)
            if (a->floats[i] != b->floats[i])
                return false;
        return true;
    }
    return false;
}

bool ops_attr_is_default(const byocl_op *op, int k, const byocl_attr *value)
{
    const byocl_attr_schema *s = &op->attrs[k];
    if (s->required)
        return false;
    byocl_attr d = schema_default(s);
    return attr_values_equal(&d, value);
}

char *byocl_op_attr_default_str(const byocl_op *op, int k, char *buf, size_t len)
{
    if (op->attrs[k].required) {
        snprintf(buf, len, "(required)");
        return buf;
    }
    byocl_attr d = schema_default(&op->attrs[k]);
    return byocl_attr_value_str(&d, buf, len);
}

char *byocl_attr_value_str(const byocl_attr *attr, char *buf, size_t len)
{
    byocl_strbuf sb;
    base_strbuf_init(&sb, buf, len);
#define PUT(...) base_strbuf_printf(&sb, __VA_ARGS__)
    switch (attr->kind) {
    case BYOCL_ATTR_NULL: PUT("None"); break;
    case BYOCL_ATTR_INT: PUT("%lld", (long long)attr->i); break;
    case BYOCL_ATTR_BOOL: PUT("%s", attr->i ? "True" : "False"); break;
    case BYOCL_ATTR_FLOAT: {
        char num[64];
        ir_format_real(attr->f, 64, num, sizeof num);
        PUT("%sf", num);
        break;
    }
    case BYOCL_ATTR_FLOATS:
        PUT("[");
        for (int i = 0; i < attr->n; i++) {
            char num[64];
            ir_format_real(attr->floats[i], 64, num, sizeof num);
            PUT("%s%sf", i ? ", " : "", num);
        }
        PUT("]");
        break;
    case BYOCL_ATTR_STR:
        PUT("\"");
        for (const char *c = attr->s; c && *c; c++) {
            if (*c == '"' || *c == '\\')
                PUT("\\%c", *c);
            else if (*c == '\n')
                PUT("\\n");
            else if (*c == '\t')
                PUT("\\t");
            else
                PUT("%c", *c);
        }
        PUT("\"");
        break;
    case BYOCL_ATTR_INTS:
        PUT("[");
        for (int i = 0; i < attr->n; i++) {
            bool row_start = attr->cols > 0 && i % attr->cols == 0;
            bool row_end = attr->cols > 0 && (i + 1) % attr->cols == 0;
            PUT("%s%s%lld%s", i ? ", " : "", row_start ? "[" : "", (long long)attr->ints[i],
                row_end ? "]" : "");
        }
        PUT("]");
        break;
    }
#undef PUT
    return buf;
}

/* ----------------------------------------------- type relation helpers */

byocl_status ops_broadcast_shapes(const byocl_shape *a, const byocl_shape *b,
                                  byocl_shape *out, byocl_error *err)
{
    int rank = a->rank > b->rank ? a->rank : b->rank;
    byocl_shape r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    for (int i = 0; i < rank; i++) {
        int ia = a->rank - rank + i, ib = b->rank - rank + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1;
        int64_t db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[160], sb[160];
            return byocl_error_set(err, BYOCL_ERR_TYPE,
                                   "cannot broadcast shapes %s and %s: dimension %d is %lld vs %lld",
                                   byocl_shape_str(a, sa, sizeof sa),
                                   byocl_shape_str(b, sb, sizeof sb), i, (long long)da,
                                   (long long)db);
        }
        r.dims[i] = da == 1 ? db : da;
    }
    *out = r;
    return BYOCL_OK;
}

const byocl_type *ops_infer_tensor_arg(const byocl_infer_ctx *ctx, int k, byocl_error *err)
{
    if (k >= ctx->n_args) {
        byocl_error_set(err, BYOCL_ERR_TYPE, "argument %d is missing", k);
        return NULL;
    }
    const byocl_type *t = ctx->arg_types[k];
    if (t->kind != BYOCL_TYPE_TENSOR) {
        char s[256];
        byocl_error_set(err, BYOCL_ERR_TYPE, "argument %d must be a tensor, got %s", k,
                        byocl_type_str(t, s, sizeof s));
        return NULL;
    }
    return t;
}
