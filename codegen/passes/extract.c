/* Pass: extract. One partitioned region as a standalone module: @main is a copy of the
 * region's function without Compiler, Primitive, Inline and global_symbol (the attributes
 * that made the thread's standalone build fail with "Expr is not existing in storage
 * plan"), with the global functions it calls.
 *
 * Its parameters are named after what @main of the partitioned module passes to the
 * region's (first) call:
 *   a parameter of @main          its name                 %data, %bn_gamma
 *   a node bound to a name        that name                %x0
 *   node %N (as `byocl print`     n<N>_<what>, <what> the  %n1_add, %n4_nn_relu,
 *   numbers it) of an op or a     op with '.' as '_', the  %n7_opencl_main_0
 *   global function               function's name
 *   item I of a call's tuple %M   n<N>_<what of %M>_<I>    %n2_nn_batch_norm_1
 *   another node                  n<N>_tuple, n<N>_item<I>
 *   a constant (constants passed  const<K>, K the          %const3
 *   as arguments)                 parameter's position
 * A name already taken gets "_<K>" appended. When @main does not call the region its
 * parameters keep their names. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/text.h"
#include "ir/ir_impl.h"
#include "ops/op_impl.h"

static const char *const region_attrs[] = {"Compiler", "Primitive", "Inline", "global_symbol"};

static bool is_region_fn(const byocl_function *fn)
{
    return byocl_attrs_find(&fn->attrs, "Compiler") != NULL;
}

static const char *symbol_of(const byocl_function *fn)
{
    return byocl_attrs_get_str(&fn->attrs, "global_symbol", fn->name);
}

/* Whether `name` ends with "_main_<digits>" where the digits are `index`. */
static bool has_index(const char *name, const char *index)
{
    size_t n = strlen(name), k = strlen(index);
    return n > k + 6 && strcmp(name + n - k, index) == 0 &&
           strncmp(name + n - k - 6, "_main_", 6) == 0;
}

static byocl_status find_region(const byocl_module *m, const char *region,
                                const byocl_function **out, byocl_error *err)
{
    bool numeric = *region != '\0';
    for (const char *c = region; *c; c++)
        numeric &= isdigit((unsigned char)*c) != 0;
    char known[1024] = "";
    size_t at = 0;
    for (int i = 0; i < m->n_fns; i++) {
        const byocl_function *fn = m->fns[i];
        if (!is_region_fn(fn))
            continue;
        if (strcmp(fn->name, region) == 0 || strcmp(symbol_of(fn), region) == 0 ||
            (numeric && has_index(symbol_of(fn), region))) {
            *out = fn;
            return BYOCL_OK;
        }
        if (at < sizeof known)
            at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", at ? ", " : "",
                                   symbol_of(fn));
    }
    if (at == 0)
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                               "the module has no partitioned regions (functions with a "
                               "Compiler attribute); partition it first (byocl partition)");
    return byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                           "no region '%s' in the module (its regions: %s)", region, known);
}

/* ------------------------------------------------------------ naming */

/* "nn.relu" -> "nn_relu" appended to buf. */
static void append_ident(char *buf, size_t len, const char *s)
{
    size_t at = strlen(buf);
    for (; *s && at + 1 < len; s++)
        buf[at++] = isalnum((unsigned char)*s) || *s == '_' ? *s : '_';
    buf[at] = '\0';
}

/* What node `id` of @main computes, as a name part: the op, the callee, "tuple". */
static void what_of(const byocl_function *fn, int id, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[id];
    buf[0] = '\0';
    if (n->kind == BYOCL_NODE_CALL)
        append_ident(buf, len, n->op ? n->op->name : n->callee);
    else if (n->kind == BYOCL_NODE_TUPLE)
        snprintf(buf, len, "tuple");
}

/* The parameter name and the source description for argument `a` (param k). */
static void name_input(const byocl_function *main_fn, int a, int k, char *name, size_t name_len,
                       char *source, size_t source_len)
{
    const byocl_node *n = &main_fn->nodes[a];
    char label[128], what[128], type[256];
    byocl_node_label(main_fn, a, label, sizeof label);
    int number = byocl_text_node_number(main_fn, a);
    switch (n->kind) {
    case BYOCL_NODE_VAR:
        snprintf(name, name_len, "%s", n->name);
        snprintf(source, source_len, "%%%s", n->name);
        return;
    case BYOCL_NODE_CONSTANT:
        snprintf(name, name_len, "const%d", k);
        snprintf(source, source_len, "a constant %s", byocl_type_str(n->type, type, sizeof type));
        return;
    default:
        break;
    }
    if (number < 0 && n->name && n->name[strspn(n->name, "0123456789")] == '\0')
        number = atoi(n->name); /* the source's %78: n78_conv2d, as byocl's %78 would be */
    if (number < 0 && n->name) {
        snprintf(name, name_len, "%s", n->name);
    } else if (n->kind == BYOCL_NODE_GETITEM) {
        const byocl_node *tuple = &main_fn->nodes[n->args[0]];
        what_of(main_fn, n->args[0], what, sizeof what);
        if (tuple->kind == BYOCL_NODE_CALL)
            snprintf(name, name_len, "n%d_%s_%d", number, what, n->index);
        else
            snprintf(name, name_len, "n%d_item%d", number, n->index);
    } else {
        what_of(main_fn, a, what, sizeof what);
        snprintf(name, name_len, "n%d_%s", number, what);
    }
    if (n->kind == BYOCL_NODE_CALL) {
        snprintf(source, source_len, "%s (%s%s)", label, n->op ? "" : "@",
                 n->op ? n->op->name : n->callee);
    } else if (n->kind == BYOCL_NODE_GETITEM) {
        char tuple_label[128];
        byocl_node_label(main_fn, n->args[0], tuple_label, sizeof tuple_label);
        snprintf(source, source_len, "%s (%s.%d)", label, tuple_label, n->index);
    } else {
        snprintf(source, source_len, "%s (a tuple)", label);
    }
}

static int find_call(const byocl_function *main_fn, const char *callee)
{
    for (int id = 0; main_fn && id < main_fn->n_nodes; id++)
        if (main_fn->nodes[id].kind == BYOCL_NODE_CALL && main_fn->nodes[id].callee &&
            strcmp(main_fn->nodes[id].callee, callee) == 0)
            return id;
    return -1;
}

void byocl_extract_inputs_free(byocl_extract_input *inputs, int n)
{
    for (int k = 0; inputs && k < n; k++) {
        free(inputs[k].param);
        free(inputs[k].source);
    }
    free(inputs);
}

/* Renames the parameters of `fn` (the extracted @main) and records their sources. */
static byocl_status name_params(const byocl_module *m, const byocl_function *region,
                                byocl_function *fn, byocl_extract_input *inputs,
                                byocl_error *err)
{
    const byocl_function *main_fn = byocl_module_find(m, "main");
    int call = find_call(main_fn, region->name);
    for (int k = 0; k < fn->n_params; k++) {
        char name[256], source[512];
        int param = fn->params[k];
        if (call >= 0 && k < main_fn->nodes[call].n_args) {
            name_input(main_fn, main_fn->nodes[call].args[k], k, name, sizeof name, source,
                       sizeof source);
        } else {
            snprintf(name, sizeof name, "%s", fn->nodes[param].name);
            snprintf(source, sizeof source, "(@main does not call @%s)", region->name);
        }
        bool taken = false;
        for (int j = 0; j < k; j++)
            taken |= strcmp(fn->nodes[fn->params[j]].name, name) == 0;
        if (taken) {
            size_t at = strlen(name);
            snprintf(name + at, sizeof name - at, "_%d", k);
        }
        byocl_status st = byocl_node_set_name(fn, param, name, err);
        if (st != BYOCL_OK)
            return st;
        if (inputs && (!(inputs[k].param = strdup(name)) || !(inputs[k].source = strdup(source))))
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory extracting a region");
    }
    return BYOCL_OK;
}

/* Copies into `out` the global functions that `fn` calls, transitively. */
static byocl_status copy_callees(const byocl_module *m, byocl_module *out,
                                 const byocl_function *fn, byocl_error *err)
{
    for (int id = 0; id < fn->n_nodes; id++) {
        const char *callee = fn->nodes[id].callee;
        if (!callee || byocl_module_find(out, callee))
            continue;
        const byocl_function *src = byocl_module_find(m, callee);
        if (!src)
            return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "@%s calls @%s, which is not defined",
                                   fn->name, callee);
        byocl_function *copy = byocl_module_copy_function(out, src, NULL, err);
        if (!copy)
            return err ? err->status : BYOCL_ERR_NOMEM;
        byocl_status st = copy_callees(m, out, copy, err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* Keeps every function attribute of `fn` but the region's own. */
static byocl_status drop_region_attrs(byocl_function *fn, byocl_error *err)
{
    byocl_attrs old = fn->attrs;
    fn->attrs = (byocl_attrs){0, NULL};
    for (int i = 0; i < old.n; i++) {
        bool drop = false;
        for (size_t j = 0; j < sizeof region_attrs / sizeof region_attrs[0]; j++)
            drop |= strcmp(old.items[i].key, region_attrs[j]) == 0;
        byocl_status st = drop ? BYOCL_OK : byocl_function_set_attr(fn, &old.items[i], err);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

byocl_status byocl_extract_with_inputs(const byocl_module *m, const char *region,
                                       byocl_module **out, byocl_extract_input **inputs,
                                       int *n_inputs, byocl_error *err)
{
    if (out)
        *out = NULL;
    if (inputs)
        *inputs = NULL;
    if (n_inputs)
        *n_inputs = 0;
    if (!m || !region || !out)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_extract: bad arguments");
    const byocl_function *src;
    byocl_status st = find_region(m, region, &src, err);
    if (st != BYOCL_OK)
        return st;
    byocl_module *result = byocl_module_new();
    byocl_extract_input *ins = inputs ? calloc((size_t)src->n_params + 1, sizeof *ins) : NULL;
    if (!result || (inputs && !ins)) {
        byocl_module_free(result);
        free(ins);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory extracting a region");
    }
    byocl_function *fn = byocl_module_copy_function(result, src, "main", err);
    st = fn ? BYOCL_OK : (err ? err->status : BYOCL_ERR_NOMEM);
    if (st == BYOCL_OK)
        st = drop_region_attrs(fn, err);
    if (st == BYOCL_OK)
        st = name_params(m, src, fn, ins, err);
    if (st == BYOCL_OK)
        st = copy_callees(m, result, fn, err);
    if (st == BYOCL_OK)
        st = byocl_infer_types(result, err);
    if (st == BYOCL_OK)
        st = byocl_verify(result, true, err);
    if (st != BYOCL_OK) {
        byocl_module_free(result);
        byocl_extract_inputs_free(ins, src->n_params);
        return st;
    }
    *out = result;
    if (inputs) {
        *inputs = ins;
        *n_inputs = src->n_params;
    }
    return BYOCL_OK;
}

byocl_status byocl_extract(const byocl_module *m, const char *region, byocl_module **out,
                           byocl_error *err)
{
    return byocl_extract_with_inputs(m, region, out, NULL, NULL, err);
}
