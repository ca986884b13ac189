/* byocl_dot: @main as Graphviz text (include/byocl/dot.h describes the drawing).
 *
 * Dot ids: node `id` of @main is "n<id>"; inside the cluster of call node `c`, node `id`
 * of the callee is "n<c>_n<id>" (and so on for calls nested in callees). A call of a
 * function is not a node of its own: its arguments point at the callee's parameters and
 * its users are fed by the callee's result. Nodes are declared first (clusters holding
 * theirs), then every edge. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/dot.h"
#include "byocl/text.h"
#include "base/file_util.h"
#include "ir/ir_impl.h"
#include "ops/op_impl.h"
#include "passes/regions.h"
#include "base/textbuf.h"

/* Dot ids of nested nodes grow by "n<id>_" per level; calls nested so deep that their
 * ids would not fit are drawn as plain nodes. */
#define REF_MAX 256
#define PREFIX_ROOM (REF_MAX - 32)

static const char *const palette[] = {
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
};
#define PALETTE_SIZE ((uint32_t)(sizeof palette / sizeof palette[0]))

const char *byocl_dot_target_color(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a: stable across runs and machines */
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p; p++)
        h = (h ^ *p) * 16777619u;
    return palette[h % PALETTE_SIZE];
}

typedef struct dot_writer {
    byocl_textbuf out;
    const byocl_module *m;
    /* The %N of each drawn function's nodes, numbered once per function: numbering one
     * node walks the whole function. */
    const byocl_function **numbered;
    int **numbers;
    int n_numbered;
} dot_writer;

/* The %N of node id of fn (-1 when it has none). */
static int node_number(dot_writer *w, const byocl_function *fn, int id)
{
    for (int k = 0; k < w->n_numbered; k++)
        if (w->numbered[k] == fn)
            return w->numbers[k][id];
    int *numbers =
        w->numbers && w->n_numbered < w->m->n_fns ? byocl_text_node_numbers(fn) : NULL;
    if (!numbers) /* out of memory: number this node alone */
        return byocl_text_node_number(fn, id);
    w->numbered[w->n_numbered] = fn;
    w->numbers[w->n_numbered++] = numbers;
    return numbers[id];
}

/* Writes `s` escaped for a dot string: quotes and backslashes. */
static void put_escaped(byocl_textbuf *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            base_textbuf_putc(f, '\\');
        base_textbuf_putc(f, *s == '\n' ? ' ' : *s);
    }
}

/* How a label names a value: "%data", "%3", "%x0", "result" (the body printed inline),
 * as byocl_node_label does. */
static char *value_name(dot_writer *w, const byocl_function *fn, int id, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[id];
    int number = node_number(w, fn, id);
    if (number >= 0)
        snprintf(buf, len, "%%%d", number);
    else if (n->name)
        snprintf(buf, len, "%%%s", n->name);
    else
        snprintf(buf, len, "%s", n->kind == BYOCL_NODE_CONSTANT ? "constant" : "result");
    return buf;
}

/* The function a call node draws as a cluster, or NULL (an op call, a missing callee, a
 * call nested deeper than the module has functions (recursion) or than ids have room). */
static const byocl_function *cluster_callee(const dot_writer *w, const byocl_function *fn,
                                            const char *prefix, int id, int depth)
{
    const byocl_node *n = &fn->nodes[id];
    if (n->kind != BYOCL_NODE_CALL || n->op || depth >= w->m->n_fns ||
        strlen(prefix) >= PREFIX_ROOM)
        return NULL;
    return byocl_module_find(w->m, n->callee);
}

/* "<prefix>n<id><suffix>" into out[REF_MAX]; cluster_callee keeps prefixes short enough
 * for this to fit (it is cut short otherwise, never overrun). */
static void dot_id(char *out, const char *prefix, int id, const char *suffix)
{
    char number[16];
    snprintf(number, sizeof number, "n%d", id);
    size_t at = 0;
    const char *parts[3] = {prefix, number, suffix};
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && at + 1 < REF_MAX; p++)
            out[at++] = *p;
    out[at] = '\0';
}

/* The dot id of the node that gives value `id` of fn; false when it is not drawn. */
static bool value_ref(const dot_writer *w, const byocl_function *fn, const char *prefix, int id,
                      int depth, char *out)
{
    if (fn->nodes[id].kind == BYOCL_NODE_CONSTANT)
        return false;
    const byocl_function *callee = cluster_callee(w, fn, prefix, id, depth);
    if (callee && callee->body >= 0) {
        char inner[REF_MAX];
        dot_id(inner, prefix, id, "_");
        return value_ref(w, callee, inner, callee->body, depth + 1, out);
    }
    dot_id(out, prefix, id, "");
    return true;
}

static void indent(byocl_textbuf *f, int level)
{
    for (int i = 0; i < level; i++)
        base_textbuf_puts(f, "  ");
}

static void emit_nodes(dot_writer *w, const byocl_function *fn, const char *prefix, int depth,
                       int level, const int *region_of, int region);

static void emit_node(dot_writer *w, const byocl_function *fn, const char *prefix, int id,
                      int depth, int level)
{
    const byocl_node *n = &fn->nodes[id];
    byocl_textbuf *f = &w->out;
    char name[256], type[1024];
    if (n->kind == BYOCL_NODE_CONSTANT)
        return;
    value_name(w, fn, id, name, sizeof name);
    const byocl_function *callee = cluster_callee(w, fn, prefix, id, depth);
    if (callee) {
        const char *target = byocl_attrs_get_str(&callee->attrs, "Compiler", NULL);
        char inner[REF_MAX];
        dot_id(inner, prefix, id, "_");
        indent(f, level);
        base_textbuf_printf(f, "subgraph \"cluster_%sn%d\" {\n", prefix, id);
        indent(f, level + 1);
        base_textbuf_puts(f, "label=\"");
        put_escaped(f, name);
        base_textbuf_puts(f, " = @");
        put_escaped(f, callee->name);
        if (target) {
            base_textbuf_puts(f, " (");
            put_escaped(f, target);
            base_textbuf_puts(f, ")\";\n");
            indent(f, level + 1);
            base_textbuf_puts(f, "style=filled;\n");
            indent(f, level + 1);
            base_textbuf_printf(f, "fillcolor=\"%s\";\n", byocl_dot_target_color(target));
        } else {
            base_textbuf_puts(f, "\";\n");
            indent(f, level + 1);
            base_textbuf_puts(f, "style=dashed;\n");
        }
        emit_nodes(w, callee, inner, depth + 1, level + 1, NULL, -1);
        indent(f, level);
        base_textbuf_puts(f, "}\n");
        return;
    }
    indent(f, level);
    base_textbuf_printf(f, "%sn%d [label=\"", prefix, id);
    put_escaped(f, name);
    if (n->kind == BYOCL_NODE_CALL) {
        base_textbuf_puts(f, " = ");
        if (n->op) {
            put_escaped(f, n->op->name);
        } else {
            base_textbuf_putc(f, '@');
            put_escaped(f, n->callee);
        }
    } else if (n->kind == BYOCL_NODE_TUPLE) {
        base_textbuf_puts(f, " = Tuple");
    } else if (n->kind == BYOCL_NODE_GETITEM) {
        char tuple[256];
        base_textbuf_puts(f, " = ");
        put_escaped(f, value_name(w, fn, n->args[0], tuple, sizeof tuple));
        base_textbuf_printf(f, ".%d", n->index);
    }
    if (n->type->kind != BYOCL_TYPE_NONE) {
        base_textbuf_puts(f, "\\n");
        put_escaped(f, byocl_type_str(n->type, type, sizeof type));
    }
    base_textbuf_printf(f, "\"%s];\n", n->kind == BYOCL_NODE_VAR ? ", shape=ellipse" : "");
}

/* The nodes of fn; with region_of, only those of `region` (-1: outside every region). */
static void emit_nodes(dot_writer *w, const byocl_function *fn, const char *prefix, int depth,
                       int level, const int *region_of, int region)
{
    for (int id = 0; id < fn->n_nodes; id++)
        if (!region_of || region_of[id] == region)
            emit_node(w, fn, prefix, id, depth, level);
}

static void emit_edges(dot_writer *w, const byocl_function *fn, const char *prefix, int depth)
{
    char from[REF_MAX], to[REF_MAX];
    for (int id = 0; id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (n->kind == BYOCL_NODE_CONSTANT)
            continue;
        const byocl_function *callee = cluster_callee(w, fn, prefix, id, depth);
        char inner[REF_MAX];
        dot_id(inner, prefix, id, "_");
        for (int k = 0; k < n->n_args; k++) {
            if (!value_ref(w, fn, prefix, n->args[k], depth, from))
                continue;
            if (callee && k >= callee->n_params)
                break; /* an arity mismatch: verify reports it */
            if (callee)
                dot_id(to, inner, callee->params[k], "");
            else
                dot_id(to, prefix, id, "");
            base_textbuf_printf(&w->out, "  %s -> %s;\n", from, to);
        }
        if (callee)
            emit_edges(w, callee, inner, depth + 1);
    }
}

static bool has_annotations(const byocl_function *fn)
{
    for (int id = 0; id < fn->n_nodes; id++)
        if (pass_is_annotation(fn, id))
            return true;
    return false;
}

char *byocl_dot(const byocl_module *m, byocl_error *err)
{
    const byocl_function *fn = m ? byocl_module_find(m, "main") : NULL;
    if (!fn || fn->body < 0) {
        byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "the module has no @main to draw");
        return NULL;
    }
    byocl_regions regions = {0};
    bool with_regions = false;
    byocl_error region_err = {0};
    if (has_annotations(fn))
        with_regions = pass_regions_analyze_lenient(fn, &regions, &region_err) == BYOCL_OK;
    dot_writer w = {{0}, m, calloc((size_t)m->n_fns, sizeof *w.numbered),
                    calloc((size_t)m->n_fns, sizeof *w.numbers), 0};
    byocl_textbuf *f = &w.out;
    if (!w.numbered || !w.numbers) { /* no room: each node is numbered alone */
        free(w.numbered);
        free(w.numbers);
        w.numbered = NULL;
        w.numbers = NULL;
    }
    base_textbuf_puts(f, "digraph \"main\" {\n");
    if (region_err.status != BYOCL_OK) {
        base_textbuf_puts(f, "  // regions not drawn: ");
        for (const char *p = region_err.msg; *p; p++)
            base_textbuf_putc(f, *p == '\n' ? ' ' : *p);
        base_textbuf_putc(f, '\n');
    }
    base_textbuf_puts(f, "  node [shape=box, style=filled, fillcolor=white, "
                          "fontname=\"monospace\", fontsize=10];\n");
    base_textbuf_puts(f, "  graph [fontname=\"monospace\", fontsize=10];\n");
    emit_nodes(&w, fn, "", 0, 1, with_regions ? regions.region_of : NULL, -1);
    for (int r = 0; with_regions && r < regions.n_regions; r++) {
        base_textbuf_printf(f, "  subgraph \"cluster_region%d\" {\n    label=\"region %d: ", r, r);
        put_escaped(f, regions.target[r]);
        base_textbuf_printf(f, "\";\n    style=filled;\n    fillcolor=\"%s\";\n",
                            byocl_dot_target_color(regions.target[r]));
        emit_nodes(&w, fn, "", 0, 2, regions.region_of, r);
        base_textbuf_puts(f, "  }\n");
    }
    emit_edges(&w, fn, "", 0);
    base_textbuf_puts(f, "}\n");
    for (int k = 0; k < w.n_numbered; k++)
        free(w.numbers[k]);
    free(w.numbers);
    free(w.numbered);
    if (with_regions)
        pass_regions_release(&regions);
    char *text = base_textbuf_take(&w.out);
    if (!text)
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory drawing @main");
    return text;
}

byocl_status byocl_dot_save(const byocl_module *m, const char *path, byocl_error *err)
{
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_dot_save: no path");
    byocl_error local;
    if (!err)
        err = &local;
    char *text = byocl_dot(m, err);
    if (!text)
        return err->status;
    byocl_file_part part = {text, strlen(text)};
    byocl_status st = base_file_write_atomic(path, &part, 1, err);
    free(text);
    return st;
}
