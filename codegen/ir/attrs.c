/* Attribute lists: lookup, typed getters, setters and copies (storage in the module). */
#include <string.h>

#include "ir_impl.h"

const byocl_attr *byocl_attrs_find(const byocl_attrs *attrs, const char *key)
{
    if (!attrs)
        return NULL;
    for (int i = 0; i < attrs->n; i++)
        if (strcmp(attrs->items[i].key, key) == 0)
            return &attrs->items[i];
    return NULL;
}

int64_t byocl_attrs_get_int(const byocl_attrs *attrs, const char *key, int64_t fallback)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    return a && (a->kind == BYOCL_ATTR_INT || a->kind == BYOCL_ATTR_BOOL) ? a->i : fallback;
}

double byocl_attrs_get_float(const byocl_attrs *attrs, const char *key, double fallback)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    if (a && a->kind == BYOCL_ATTR_FLOAT)
        return a->f;
    if (a && a->kind == BYOCL_ATTR_INT)
        return (double)a->i;
    return fallback;
}

bool byocl_attrs_get_bool(const byocl_attrs *attrs, const char *key, bool fallback)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    return a && (a->kind == BYOCL_ATTR_BOOL || a->kind == BYOCL_ATTR_INT) ? a->i != 0 : fallback;
}

const char *byocl_attrs_get_str(const byocl_attrs *attrs, const char *key, const char *fallback)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    return a && a->kind == BYOCL_ATTR_STR ? a->s : fallback;
}

int byocl_attrs_get_ints(const byocl_attrs *attrs, const char *key, const int64_t **out)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    if (a && a->kind == BYOCL_ATTR_INTS) {
        *out = a->ints;
        return a->n;
    }
    if (a && a->kind == BYOCL_ATTR_INT) {
        *out = &a->i;
        return 1;
    }
    return -1;
}

int byocl_attrs_get_floats(const byocl_attrs *attrs, const char *key, const double **out)
{
    const byocl_attr *a = byocl_attrs_find(attrs, key);
    if (a && a->kind == BYOCL_ATTR_FLOATS) {
        *out = a->floats;
        return a->n;
    }
    if (a && a->kind == BYOCL_ATTR_FLOAT) {
        *out = &a->f;
        return 1;
    }
    return -1;
}

byocl_attrs *byocl_attrs_new(byocl_module *m)
{
    return ir_arena_alloc(&m->arena, sizeof(byocl_attrs));
}

/* Copies one attribute's storage into m. */
static bool attr_copy(byocl_module *m, const byocl_attr *src, byocl_attr *dst)
{
    *dst = *src;
    dst->key = ir_arena_strdup(&m->arena, src->key);
    if (!dst->key)
        return false;
    if (src->kind == BYOCL_ATTR_STR) {
        dst->s = ir_arena_strdup(&m->arena, src->s ? src->s : "");
        if (!dst->s)
            return false;
    } else if (src->kind == BYOCL_ATTR_INTS) {
        dst->ints = ir_arena_memdup(&m->arena, src->ints, sizeof(int64_t) * (size_t)src->n);
        if (!dst->ints)
            return false;
    } else if (src->kind == BYOCL_ATTR_FLOATS) {
        dst->floats = ir_arena_memdup(&m->arena, src->floats, sizeof(double) * (size_t)src->n);
        if (!dst->floats)
            return false;
    }
    return true;
}

byocl_status byocl_attrs_set(byocl_module *m, byocl_attrs *a, const byocl_attr *attr)
{
    byocl_attr copy;
    if (!attr_copy(m, attr, &copy))
        return BYOCL_ERR_NOMEM;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->items[i].key, attr->key) == 0) {
            a->items[i] = copy;
            return BYOCL_OK;
        }
    /* Arena storage: grow by copying into a new array (lists are short). */
    byocl_attr *items = ir_arena_alloc(&m->arena, sizeof *items * (size_t)(a->n + 1));
    if (!items)
        return BYOCL_ERR_NOMEM;
    if (a->n)
        memcpy(items, a->items, sizeof *items * (size_t)a->n);
    items[a->n] = copy;
    a->items = items;
    a->n++;
    return BYOCL_OK;
}

byocl_status byocl_attrs_set_int(byocl_module *m, byocl_attrs *a, const char *key, int64_t v)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_INT, .i = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_float(byocl_module *m, byocl_attrs *a, const char *key, double v)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_FLOAT, .f = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_bool(byocl_module *m, byocl_attrs *a, const char *key, bool v)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_BOOL, .i = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_str(byocl_module *m, byocl_attrs *a, const char *key, const char *v)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_STR, .s = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_ints(byocl_module *m, byocl_attrs *a, const char *key,
                                  const int64_t *v, int n)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_INTS, .n = n, .ints = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_floats(byocl_module *m, byocl_attrs *a, const char *key,
                                    const double *v, int n)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_FLOATS, .n = n, .floats = v};
    return byocl_attrs_set(m, a, &at);
}

byocl_status byocl_attrs_set_null(byocl_module *m, byocl_attrs *a, const char *key)
{
    byocl_attr at = {.key = key, .kind = BYOCL_ATTR_NULL};
    return byocl_attrs_set(m, a, &at);
}

byocl_status ir_attrs_copy(byocl_module *m, const byocl_attrs *src, byocl_attrs *dst,
                           byocl_error *err)
{
    dst->n = 0;
    dst->items = NULL;
    if (!src || src->n == 0)
        return BYOCL_OK;
    byocl_attr *items = ir_arena_alloc(&m->arena, sizeof *items * (size_t)src->n);
    if (!items)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory copying attributes");
    for (int i = 0; i < src->n; i++)
        if (!attr_copy(m, &src->items[i], &items[i]))
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory copying attributes");
    dst->items = items;
    dst->n = src->n;
    return BYOCL_OK;
}
