/* Modules, functions and nodes: storage, accessors and the builder API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/text.h"
#include "ir_impl.h"
#include "ops/op_impl.h"

/* ------------------------------------------------------------- modules */

byocl_module *byocl_module_new(void)
{
    byocl_module *m = calloc(1, sizeof *m);
    if (m)
        ir_arena_init(&m->arena);
    return m;
}

static void function_free(byocl_function *fn)
{
    for (int i = 0; i < fn->n_nodes; i++)
        byocl_tensor_unref(fn->nodes[i].value);
    free(fn->nodes);
    free(fn->params);
    free(fn);
}

void byocl_module_free(byocl_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_fns; i++)
        function_free(m->fns[i]);
    free(m->fns);
    ir_arena_release(&m->arena);
    free(m);
}

byocl_module *byocl_module_clone(const byocl_module *m, byocl_error *err)
{
    byocl_module *c = byocl_module_new();
    if (!c) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory cloning a module");
        return NULL;
    }
    for (int i = 0; i < m->n_fns; i++)
        if (!byocl_module_copy_function(c, m->fns[i], NULL, err)) {
            byocl_module_free(c);
            return NULL;
        }
    return c;
}

int byocl_module_num_functions(const byocl_module *m) { return m->n_fns; }

byocl_function *byocl_module_function_at(const byocl_module *m, int index)
{
    return index >= 0 && index < m->n_fns ? m->fns[index] : NULL;
}

byocl_function *byocl_module_find(const byocl_module *m, const char *name)
{
    for (int i = 0; i < m->n_fns; i++)
        if (strcmp(m->fns[i]->name, name) == 0)
            return m->fns[i];
    return NULL;
}

byocl_status byocl_module_remove(byocl_module *m, const char *name, byocl_error *err)
{
    for (int i = 0; i < m->n_fns; i++)
        if (strcmp(m->fns[i]->name, name) == 0) {
            function_free(m->fns[i]);
            memmove(&m->fns[i], &m->fns[i + 1], sizeof m->fns[0] * (size_t)(m->n_fns - i - 1));
            m->n_fns--;
            return BYOCL_OK;
        }
    return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module", name);
}

byocl_status byocl_module_replace(byocl_module *m, const char *name, byocl_function *fresh,
                                  byocl_error *err)
{
    int at = -1, from = -1;
    for (int i = 0; i < m->n_fns; i++) {
        if (strcmp(m->fns[i]->name, name) == 0)
            at = i;
        if (m->fns[i] == fresh)
            from = i;
    }
    if (at < 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module", name);
    if (from < 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "the replacement for @%s is not a function of this module", name);
    if (from == at)
        return BYOCL_OK;
    fresh->name = m->fns[at]->name; /* arena string: outlives the old function */
    function_free(m->fns[at]);
    m->fns[at] = fresh;
    memmove(&m->fns[from], &m->fns[from + 1], sizeof m->fns[0] * (size_t)(m->n_fns - from - 1));
    m->n_fns--;
    return BYOCL_OK;
}

byocl_function *byocl_module_add_function(byocl_module *m, const char *name, byocl_error *err)
{
    if (!name || !*name) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "a function needs a name");
        return NULL;
    }
    if (byocl_module_find(m, name)) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "duplicate function name @%s", name);
        return NULL;
    }
    if (m->n_fns == m->cap_fns) {
        int cap = m->cap_fns ? 2 * m->cap_fns : 4;
        byocl_function **fns = realloc(m->fns, sizeof *fns * (size_t)cap);
        if (!fns) {
            byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding @%s", name);
            return NULL;
        }
        m->fns = fns;
        m->cap_fns = cap;
    }
    byocl_function *fn = calloc(1, sizeof *fn);
    const char *copy = ir_arena_strdup(&m->arena, name);
    if (!fn || !copy) {
        free(fn);
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding @%s", name);
        return NULL;
    }
    fn->mod = m;
    fn->name = copy;
    fn->body = -1;
    m->fns[m->n_fns++] = fn;
    return fn;
}

byocl_function *byocl_module_copy_function(byocl_module *m, const byocl_function *src,
                                           const char *new_name, byocl_error *err)
{
    byocl_function *fn = byocl_module_add_function(m, new_name ? new_name : src->name, err);
    if (!fn)
        return NULL;
    for (int i = 0; i < src->n_nodes; i++)
        if (ir_fn_append(fn, &src->nodes[i], err) < 0)
            goto fail;
    for (int k = 0; k < src->n_params; k++) {
        if (fn->n_params == fn->cap_params) {
            int cap = fn->cap_params ? 2 * fn->cap_params : 8;
            int *p = realloc(fn->params, sizeof *p * (size_t)cap);
            if (!p) {
                byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory copying @%s", src->name);
                goto fail;
            }
            fn->params = p;
            fn->cap_params = cap;
        }
        fn->params[fn->n_params++] = src->params[k];
    }
    fn->body = src->body;
    if (ir_attrs_copy(m, &src->attrs, &fn->attrs, err) != BYOCL_OK)
        goto fail;
    if (src->ret_type && !(fn->ret_type = ir_type_copy(m, src->ret_type))) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory copying @%s", src->name);
        goto fail;
    }
    return fn;
fail:
    byocl_module_remove(m, fn->name, NULL);
    return NULL;
}

/* ----------------------------------------------------------- functions */

byocl_module *byocl_function_module(const byocl_function *fn) { return fn->mod; }
const char *byocl_function_name(const byocl_function *fn) { return fn->name; }
int byocl_function_num_nodes(const byocl_function *fn) { return fn->n_nodes; }
int byocl_function_num_params(const byocl_function *fn) { return fn->n_params; }
int byocl_function_param(const byocl_function *fn, int k)
{
    return k >= 0 && k < fn->n_params ? fn->params[k] : -1;
}
int byocl_function_body(const byocl_function *fn) { return fn->body; }
const byocl_type *byocl_function_ret_type(const byocl_function *fn) { return fn->ret_type; }
const byocl_attrs *byocl_function_attrs(const byocl_function *fn) { return &fn->attrs; }

int byocl_function_find_param(const byocl_function *fn, const char *name)
{
    for (int k = 0; k < fn->n_params; k++)
        if (strcmp(fn->nodes[fn->params[k]].name, name) == 0)
            return fn->params[k];
    return -1;
}

byocl_status byocl_function_set_body(byocl_function *fn, int id, byocl_error *err)
{
    if (id < 0 || id >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "@%s: body node %d does not exist",
                               fn->name, id);
    fn->body = id;
    return BYOCL_OK;
}

byocl_status byocl_function_set_attr(byocl_function *fn, const byocl_attr *attr, byocl_error *err)
{
    if (byocl_attrs_set(fn->mod, &fn->attrs, attr) != BYOCL_OK)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory setting attribute %s",
                               attr->key);
    return BYOCL_OK;
}

byocl_status byocl_function_set_ret_type(byocl_function *fn, const byocl_type *type,
                                         byocl_error *err)
{
    const byocl_type *t = type ? ir_type_copy(fn->mod, type) : NULL;
    if (type && !t)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    fn->ret_type = t;
    return BYOCL_OK;
}

/* --------------------------------------------------------------- nodes */

static const byocl_node *node_at(const byocl_function *fn, int id)
{
    return &fn->nodes[id];
}

byocl_node_kind byocl_node_kind_of(const byocl_function *fn, int id) { return node_at(fn, id)->kind; }
const char *byocl_node_name(const byocl_function *fn, int id) { return node_at(fn, id)->name; }
const byocl_type *byocl_node_type(const byocl_function *fn, int id) { return node_at(fn, id)->type; }
int byocl_node_num_args(const byocl_function *fn, int id) { return node_at(fn, id)->n_args; }
int byocl_node_arg(const byocl_function *fn, int id, int k) { return node_at(fn, id)->args[k]; }
const char *byocl_node_op(const byocl_function *fn, int id)
{
    const byocl_node *n = node_at(fn, id);
    return n->kind == BYOCL_NODE_CALL && n->op ? n->op->name : NULL;
}
const char *byocl_node_callee(const byocl_function *fn, int id)
{
    const byocl_node *n = node_at(fn, id);
    return n->kind == BYOCL_NODE_CALL ? n->callee : NULL;
}
int byocl_node_index(const byocl_function *fn, int id) { return node_at(fn, id)->index; }
const byocl_attrs *byocl_node_attrs(const byocl_function *fn, int id) { return &node_at(fn, id)->attrs; }
const byocl_tensor *byocl_node_value(const byocl_function *fn, int id) { return node_at(fn, id)->value; }

void byocl_node_pos(const byocl_function *fn, int id, int *line, int *col)
{
    if (line)
        *line = node_at(fn, id)->line;
    if (col)
        *col = node_at(fn, id)->col;
}

void byocl_node_set_pos(byocl_function *fn, int id, int line, int col)
{
    fn->nodes[id].line = line;
    fn->nodes[id].col = col;
}

byocl_status byocl_node_set_name(byocl_function *fn, int id, const char *name, byocl_error *err)
{
    if (id < 0 || id >= fn->n_nodes)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "node %d does not exist", id);
    const char *copy = name ? ir_arena_strdup(&fn->mod->arena, name) : NULL;
    if (name && !copy)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    fn->nodes[id].name = copy;
    return BYOCL_OK;
}

char *byocl_node_label(const byocl_function *fn, int id, char *buf, size_t len)
{
    return byocl_text_node_label(fn, id, buf, len);
}

int ir_fn_append(byocl_function *fn, const byocl_node *proto, byocl_error *err)
{
    byocl_module *m = fn->mod;
    for (int k = 0; k < proto->n_args; k++)
        if (proto->args[k] < 0 || proto->args[k] >= fn->n_nodes) {
            byocl_error_set(err, BYOCL_ERR_INVALID,
                            "argument %d refers to node %d, which does not exist yet", k,
                            proto->args[k]);
            return -1;
        }
    if (fn->n_nodes == fn->cap_nodes) {
        int cap = fn->cap_nodes ? 2 * fn->cap_nodes : 64;
        byocl_node *nodes = realloc(fn->nodes, sizeof *nodes * (size_t)cap);
        if (!nodes)
            goto nomem;
        fn->nodes = nodes;
        fn->cap_nodes = cap;
    }
    byocl_node n = *proto;
    n.args = NULL;
    if (proto->n_args &&
        !(n.args = ir_arena_memdup(&m->arena, proto->args, sizeof(int) * (size_t)proto->n_args)))
        goto nomem;
    if (proto->name && !(n.name = ir_arena_strdup(&m->arena, proto->name)))
        goto nomem;
    if (proto->callee && !(n.callee = ir_arena_strdup(&m->arena, proto->callee)))
        goto nomem;
    n.type = proto->type ? ir_type_copy(m, proto->type) : &ir_type_none;
    if (!n.type)
        goto nomem;
    if (ir_attrs_copy(m, &proto->attrs, &n.attrs, err) != BYOCL_OK)
        return -1;
    n.value = byocl_tensor_ref(proto->value);
    fn->nodes[fn->n_nodes] = n;
    return fn->n_nodes++;
nomem:
    byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding a node to @%s", fn->name);
    return -1;
}

/* ------------------------------------------------------------- builder */

int byocl_function_add_param(byocl_function *fn, const char *name, const byocl_type *type,
                             byocl_error *err)
{
    if (!name || !*name) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "a parameter of @%s needs a name", fn->name);
        return -1;
    }
    if (byocl_function_find_param(fn, name) >= 0) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "duplicate parameter name %%%s in @%s", name,
                        fn->name);
        return -1;
    }
    if (!type || type->kind == BYOCL_TYPE_NONE) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "parameter %%%s of @%s needs a type", name,
                        fn->name);
        return -1;
    }
    if (fn->n_params == fn->cap_params) {
        int cap = fn->cap_params ? 2 * fn->cap_params : 8;
        int *p = realloc(fn->params, sizeof *p * (size_t)cap);
        if (!p) {
            byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
            return -1;
        }
        fn->params = p;
        fn->cap_params = cap;
    }
    byocl_node proto = {.kind = BYOCL_NODE_VAR, .name = name, .type = type};
    int id = ir_fn_append(fn, &proto, err);
    if (id >= 0)
        fn->params[fn->n_params++] = id;
    return id;
}

int byocl_function_add_constant(byocl_function *fn, byocl_tensor *value, byocl_error *err)
{
    if (!value) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "a constant needs a tensor");
        return -1;
    }
    const byocl_shape *s = byocl_tensor_shape(value);
    byocl_type t = byocl_type_tensor(byocl_tensor_dtype(value), s->rank, s->dims);
    byocl_node proto = {.kind = BYOCL_NODE_CONSTANT, .type = &t, .value = value};
    return ir_fn_append(fn, &proto, err);
}

int byocl_function_add_scalar(byocl_function *fn, byocl_dtype dtype, double value, byocl_error *err)
{
    byocl_shape s = byocl_shape_make(0, NULL);
    byocl_tensor *t = byocl_tensor_new(dtype, &s, err);
    if (!t)
        return -1;
    byocl_tensor_set(t, 0, value);
    int id = byocl_function_add_constant(fn, t, err);
    byocl_tensor_unref(t);
    return id;
}

int byocl_function_add_call(byocl_function *fn, const char *op_name, const int *args, int n_args,
                            const byocl_attrs *attrs, byocl_error *err)
{
    const byocl_op *op = byocl_op_find(op_name);
    if (!op) {
        byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "unknown op '%s'", op_name);
        return -1;
    }
    if (n_args < op->min_args || (op->max_args >= 0 && n_args > op->max_args)) {
        if (op->min_args == op->max_args)
            byocl_error_set(err, BYOCL_ERR_INVALID, "%s takes %d argument%s but was given %d",
                            op->name, op->min_args, op->min_args == 1 ? "" : "s", n_args);
        else if (op->max_args < 0)
            byocl_error_set(err, BYOCL_ERR_INVALID,
                            "%s takes at least %d arguments but was given %d", op->name,
                            op->min_args, n_args);
        else
            byocl_error_set(err, BYOCL_ERR_INVALID,
                            "%s takes %d to %d arguments but was given %d", op->name,
                            op->min_args, op->max_args, n_args);
        return -1;
    }
    byocl_node proto = {.kind = BYOCL_NODE_CALL, .op = op, .n_args = n_args, .args = (int *)args};
    if (ops_normalize_attrs(fn->mod, op, attrs, &proto.attrs, err) != BYOCL_OK)
        return -1;
    return ir_fn_append(fn, &proto, err);
}

int byocl_function_add_call_str(byocl_function *fn, const char *op, const int *args, int n_args,
                                const char *attrs_text, byocl_error *err)
{
    byocl_attrs attrs = {0, NULL};
    if (attrs_text && *attrs_text &&
        byocl_text_parse_attrs(fn->mod, attrs_text, &attrs, err) != BYOCL_OK)
        return -1;
    return byocl_function_add_call(fn, op, args, n_args, &attrs, err);
}

int byocl_function_add_call_global(byocl_function *fn, const char *callee, const int *args,
                                   int n_args, byocl_error *err)
{
    if (!callee || !*callee) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "a call of a global function needs its name");
        return -1;
    }
    byocl_node proto = {.kind = BYOCL_NODE_CALL, .callee = callee, .n_args = n_args,
                        .args = (int *)args};
    return ir_fn_append(fn, &proto, err);
}

int byocl_function_add_tuple(byocl_function *fn, const int *fields, int n_fields, byocl_error *err)
{
    byocl_node proto = {.kind = BYOCL_NODE_TUPLE, .n_args = n_fields, .args = (int *)fields};
    return ir_fn_append(fn, &proto, err);
}

int byocl_function_add_getitem(byocl_function *fn, int tuple, int index, byocl_error *err)
{
    if (index < 0) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "tuple index %d is negative", index);
        return -1;
    }
    byocl_node proto = {.kind = BYOCL_NODE_GETITEM, .n_args = 1, .args = &tuple, .index = index};
    return ir_fn_append(fn, &proto, err);
}
