/* Region analysis (see regions.h): one walk over the nodes with a union-find over the
 * regions that compiler_begins start, then a compaction into final region numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "flatten_annotations.h"
#include "ops/op_impl.h"
#include "ops/node_util.h"
#include "regions.h"
#include "target/target_impl.h"

static bool is_op(const byocl_function *fn, int id, const char *name)
{
    const byocl_node *n = &fn->nodes[id];
    return n->kind == BYOCL_NODE_CALL && n->op && strcmp(n->op->name, name) == 0;
}

bool pass_is_compiler_begin(const byocl_function *fn, int id)
{
    return is_op(fn, id, BYOCL_COMPILER_BEGIN);
}

bool pass_is_compiler_end(const byocl_function *fn, int id)
{
    return is_op(fn, id, BYOCL_COMPILER_END);
}

bool pass_is_annotation(const byocl_function *fn, int id)
{
    return pass_is_compiler_begin(fn, id) || pass_is_compiler_end(fn, id);
}

const char *pass_annotation_compiler(const byocl_function *fn, int id)
{
    return byocl_attrs_get_str(&fn->nodes[id].attrs, "compiler", "");
}

char *pass_region_describe(const byocl_function *fn, int id, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[id];
    char label[128], where[48] = "";
    if (n->line > 0)
        snprintf(where, sizeof where, " at %d:%d", n->line, n->col);
    byocl_node_label(fn, id, label, sizeof label);
    switch (n->kind) {
    case BYOCL_NODE_VAR:
        snprintf(buf, len, "%s, a parameter", label);
        break;
    case BYOCL_NODE_CONSTANT:
        snprintf(buf, len, "a constant");
        break;
    case BYOCL_NODE_CALL:
        snprintf(buf, len, "%s, %s%s%s", label, n->op ? "" : "@", n->op ? n->op->name : n->callee,
                 where);
        break;
    case BYOCL_NODE_TUPLE:
        snprintf(buf, len, "%s, a tuple%s", label, where);
        break;
    case BYOCL_NODE_GETITEM:
        snprintf(buf, len, "%s, a tuple item%s", label, where);
        break;
    }
    return buf;
}

/* ---------------------------------------------------------------- the walk */

typedef struct analysis {
    const byocl_function *fn;
    bool lenient;
    /* Raw regions, one per compiler_begin, in creation order; parent[] is a union-find
     * whose root is always the smallest (earliest) member. */
    int n_raw;
    int *parent;
    const char **raw_target;
    int *value_of;  /* per node: raw region whose value the node is, or -1 */
    int *member_of; /* per node: raw region the node belongs to, or -1 */
    int n_gaps, cap_gaps;
    byocl_region_gap *gaps; /* region field: raw region until compaction */
    byocl_error *err;
} analysis;

int pass_uf_find(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

static int find(analysis *a, int r) { return pass_uf_find(a->parent, r); }

/* Joins two raw regions; returns the root. */
static int join(analysis *a, int r, int s)
{
    r = find(a, r);
    s = find(a, s);
    if (r == s)
        return r;
    if (s < r) {
        int t = r;
        r = s;
        s = t;
    }
    a->parent[s] = r;
    return r;
}

/* The number a region will most likely have once the walk is over (its rank among the
 * regions seen so far), for messages written during the walk. */
static int shown_number(analysis *a, int r)
{
    r = find(a, r);
    int number = 0;
    for (int s = 0; s < r; s++)
        number += find(a, s) == s;
    return number;
}

static bool is_constant(const analysis *a, int id)
{
    return a->fn->nodes[id].kind == BYOCL_NODE_CONSTANT;
}

static byocl_status fail_at(analysis *a, int id, byocl_status st)
{
    ops_node_error_at(a->err, a->fn, id);
    return st;
}

static byocl_status add_gap(analysis *a, int node, int arg, int raw_region, bool end)
{
    if (a->n_gaps == a->cap_gaps) {
        int cap = a->cap_gaps ? 2 * a->cap_gaps : 8;
        byocl_region_gap *g = realloc(a->gaps, sizeof *g * (size_t)cap);
        if (!g)
            return byocl_error_set(a->err, BYOCL_ERR_NOMEM, "out of memory analysing regions");
        a->gaps = g;
        a->cap_gaps = cap;
    }
    a->gaps[a->n_gaps++] = (byocl_region_gap){node, arg, raw_region, end};
    return BYOCL_OK;
}

#define HINT_BEGIN                                                                           \
    "hint: annotate every value that flows into a region (or run `byocl partition "         \
    "--complete`)"
#define HINT_END                                                                             \
    "hint: annotate every value that flows out of a region with annotation.compiler_end "   \
    "(or run `byocl partition --complete`)"

/* A value that lacks an annotation: in lenient mode a gap, else the error at `node`.
 * `arg` is the argument of `node` concerned (-1: `node` itself, the result); with `end`
 * the value leaves (root) region `r` without a compiler_end, else it enters r without a
 * compiler_begin. */
static byocl_status missing_annotation(analysis *a, int node, int arg, int r, bool end)
{
    if (a->lenient)
        return add_gap(a, node, arg, r, end);
    char what[256] = "it", value[192];
    if (arg >= 0)
        snprintf(what, sizeof what, "%s %d (%s)", end ? "field" : "argument", arg,
                 pass_region_describe(a->fn, a->fn->nodes[node].args[arg], value,
                                      sizeof value));
    if (end)
        byocl_error_set(a->err, BYOCL_ERR_INVALID,
                        "%s leaves region %d (%s) without annotation.compiler_end; " HINT_END,
                        what, shown_number(a, r), a->raw_target[r]);
    else
        byocl_error_set(a->err, BYOCL_ERR_INVALID,
                        "%s comes from outside region %d (%s) without "
                        "annotation.compiler_begin; " HINT_BEGIN,
                        what, shown_number(a, r), a->raw_target[r]);
    return fail_at(a, node, BYOCL_ERR_INVALID);
}

static byocl_status visit_begin(analysis *a, int id)
{
    const byocl_node *n = &a->fn->nodes[id];
    int arg = n->args[0];
    char what[192];
    if (a->value_of[arg] >= 0) {
        int r = find(a, a->value_of[arg]);
        byocl_error_set(a->err, BYOCL_ERR_INVALID,
                        "its argument (%s) is already inside region %d (%s); hint: a value "
                        "enters a region once: remove this compiler_begin, or close the "
                        "region first with annotation.compiler_end",
                        pass_region_describe(a->fn, arg, what, sizeof what), shown_number(a, r),
                        a->raw_target[r]);
        return fail_at(a, id, BYOCL_ERR_INVALID);
    }
    /* The compiler names a function and its parameters once partitioned. */
    if (target_check_name(pass_annotation_compiler(a->fn, id), a->err) != BYOCL_OK)
        return fail_at(a, id, BYOCL_ERR_INVALID);
    int r = a->n_raw++;
    a->parent[r] = r;
    a->raw_target[r] = pass_annotation_compiler(a->fn, id);
    a->value_of[id] = a->member_of[id] = r;
    return BYOCL_OK;
}

static byocl_status visit_end(analysis *a, int id)
{
    const byocl_node *n = &a->fn->nodes[id];
    int arg = n->args[0];
    char what[192];
    if (a->value_of[arg] < 0) {
        byocl_error_set(a->err, BYOCL_ERR_INVALID,
                        "its argument (%s) is not inside any region; hint: a compiler_end "
                        "closes a value computed in a region: give the region's inputs "
                        "annotation.compiler_begin, or remove this compiler_end",
                        pass_region_describe(a->fn, arg, what, sizeof what));
        return fail_at(a, id, BYOCL_ERR_INVALID);
    }
    int r = find(a, a->value_of[arg]);
    const char *compiler = pass_annotation_compiler(a->fn, id);
    if (strcmp(compiler, a->raw_target[r]) != 0) {
        /* TVM's compiler="default" marks host code, which a region's value reaches only
         * through the region's own compiler_end. */
        bool host = strcmp(compiler, BYOCL_COMPILER_DEFAULT) == 0;
        byocl_error_set(a->err, BYOCL_ERR_INVALID,
                        "compiler=\"%s\" does not match the region of its argument (%s), "
                        "region %d (%s); hint: a region's compiler_begin and compiler_end "
                        "name the same compiler%s%s%s",
                        compiler, pass_region_describe(a->fn, arg, what, sizeof what),
                        shown_number(a, r), a->raw_target[r],
                        host ? " (\"default\" marks what stays on the host: close the region "
                               "with compiler=\"" : "",
                        host ? a->raw_target[r] : "", host ? "\" first)" : "");
        return fail_at(a, id, BYOCL_ERR_INVALID);
    }
    a->member_of[id] = r;
    return BYOCL_OK;
}

/* A call, tuple or tuple item: joins its arguments' regions. */
static byocl_status visit_compute(analysis *a, int id)
{
    const byocl_function *fn = a->fn;
    const byocl_node *n = &fn->nodes[id];
    char what[192], other[192];
    int region = -1, region_arg = -1;
    for (int k = 0; k < n->n_args; k++) {
        int v = a->value_of[n->args[k]];
        if (v < 0)
            continue;
        v = find(a, v);
        if (region < 0) {
            region = v;
            region_arg = k;
        } else if (v != region) {
            if (strcmp(a->raw_target[v], a->raw_target[region]) != 0) {
                byocl_error_set(a->err, BYOCL_ERR_INVALID,
                                "argument %d (%s) is inside region %d (%s) but argument %d (%s) "
                                "is inside region %d (%s); hint: a node belongs to one region: "
                                "pass one of them through annotation.compiler_end and "
                                "annotation.compiler_begin",
                                region_arg,
                                pass_region_describe(fn, n->args[region_arg], what, sizeof what),
                                shown_number(a, region), a->raw_target[region], k,
                                pass_region_describe(fn, n->args[k], other, sizeof other),
                                shown_number(a, v), a->raw_target[v]);
                return fail_at(a, id, BYOCL_ERR_INVALID);
            }
            region = join(a, region, v);
        }
    }
    if (region < 0)
        return BYOCL_OK; /* a host node */
    for (int k = 0; k < n->n_args; k++) {
        int arg = n->args[k];
        if (a->value_of[arg] >= 0 || is_constant(a, arg))
            continue;
        byocl_status st = missing_annotation(a, id, k, region, false);
        if (st != BYOCL_OK)
            return st;
    }
    a->value_of[id] = a->member_of[id] = region;
    return BYOCL_OK;
}

/* A tuple result stays outside every region: its fields computed in a region leak. */
static byocl_status visit_result_tuple(analysis *a)
{
    const byocl_function *fn = a->fn;
    int body = fn->body;
    const byocl_node *n = &fn->nodes[body];
    for (int k = 0; k < n->n_args; k++) {
        int v = a->value_of[n->args[k]];
        byocl_status st = v < 0 ? BYOCL_OK : missing_annotation(a, body, k, find(a, v), true);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* Any other result computed in a region leaks out of it. */
static byocl_status check_result_leak(analysis *a)
{
    int body = a->fn->body;
    if (a->value_of[body] < 0)
        return BYOCL_OK;
    return missing_annotation(a, body, -1, find(a, a->value_of[body]), true);
}

static byocl_status walk(analysis *a)
{
    const byocl_function *fn = a->fn;
    if (fn->body < 0 || fn->body >= fn->n_nodes)
        return byocl_error_set(a->err, BYOCL_ERR_INVALID, "@%s has no body", fn->name);
    for (int id = 0; id < fn->n_nodes; id++) {
        a->value_of[id] = a->member_of[id] = -1;
        const byocl_node *n = &fn->nodes[id];
        byocl_status st = BYOCL_OK;
        if (n->kind == BYOCL_NODE_VAR || n->kind == BYOCL_NODE_CONSTANT)
            continue;
        bool begin = pass_is_compiler_begin(fn, id), end = pass_is_compiler_end(fn, id);
        if ((begin || end) && n->n_args != 1) {
            byocl_error_set(a->err, BYOCL_ERR_INVALID, "an annotation takes one argument");
            return fail_at(a, id, BYOCL_ERR_INVALID);
        }
        if (id == fn->body && n->kind == BYOCL_NODE_TUPLE)
            st = visit_result_tuple(a);
        else if (begin)
            st = visit_begin(a, id);
        else if (end)
            st = visit_end(a, id);
        else
            st = visit_compute(a, id);
        if (st == BYOCL_OK && id == fn->body)
            st = check_result_leak(a);
        if (st != BYOCL_OK)
            return st;
    }
    return BYOCL_OK;
}

/* ---------------------------------------------------------- compaction */

static byocl_status nomem(byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory analysing regions");
}

static byocl_status compact(analysis *a, byocl_regions *out)
{
    const byocl_function *fn = a->fn;
    int n = fn->n_nodes;
    int *number = malloc(sizeof *number * (size_t)(a->n_raw + 1));
    if (!number)
        return nomem(a->err);
    int n_regions = 0;
    for (int r = 0; r < a->n_raw; r++)
        number[r] = find(a, r) == r ? n_regions++ : -1;
    out->n_nodes = n;
    out->n_regions = n_regions;
    size_t nr = (size_t)(n_regions + 1);
    out->region_of = malloc(sizeof(int) * (size_t)(n + 1));
    out->target = calloc(nr, sizeof *out->target);
    out->n_inputs = calloc(nr, sizeof(int));
    out->n_outputs = calloc(nr, sizeof(int));
    out->inputs = calloc(nr, sizeof(int *));
    out->outputs = calloc(nr, sizeof(int *));
    if (!out->region_of || !out->target || !out->n_inputs || !out->n_outputs || !out->inputs ||
        !out->outputs) {
        free(number);
        return nomem(a->err);
    }
    for (int id = 0; id < n; id++) {
        int r = a->member_of[id];
        out->region_of[id] = r >= 0 ? number[find(a, r)] : -1;
        if (r < 0)
            continue;
        int R = out->region_of[id];
        out->target[R] = a->raw_target[find(a, r)];
        out->n_inputs[R] += pass_is_compiler_begin(fn, id);
        out->n_outputs[R] += pass_is_compiler_end(fn, id);
    }
    for (int R = 0; R < n_regions; R++) {
        out->inputs[R] = malloc(sizeof(int) * (size_t)(out->n_inputs[R] + 1));
        out->outputs[R] = malloc(sizeof(int) * (size_t)(out->n_outputs[R] + 1));
        if (!out->inputs[R] || !out->outputs[R]) {
            free(number);
            return nomem(a->err);
        }
        out->n_inputs[R] = out->n_outputs[R] = 0;
    }
    for (int id = 0; id < n; id++) {
        int R = out->region_of[id];
        if (R < 0)
            continue;
        if (pass_is_compiler_begin(fn, id))
            out->inputs[R][out->n_inputs[R]++] = id;
        else if (pass_is_compiler_end(fn, id))
            out->outputs[R][out->n_outputs[R]++] = id;
    }
    for (int g = 0; g < a->n_gaps; g++)
        a->gaps[g].region = number[find(a, a->gaps[g].region)];
    out->n_gaps = a->n_gaps;
    out->gaps = a->gaps;
    a->gaps = NULL;
    free(number);
    return BYOCL_OK;
}

static byocl_status analyze(const byocl_function *fn, bool lenient, byocl_regions *out,
                            byocl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = (size_t)fn->n_nodes + 1;
    analysis a = {.fn = fn, .lenient = lenient, .err = err};
    a.parent = malloc(sizeof(int) * n);
    a.raw_target = malloc(sizeof(char *) * n);
    a.value_of = malloc(sizeof(int) * n);
    a.member_of = malloc(sizeof(int) * n);
    byocl_status st = a.parent && a.raw_target && a.value_of && a.member_of ? walk(&a)
                                                                            : nomem(err);
    if (st == BYOCL_OK)
        st = compact(&a, out);
    free(a.parent);
    free(a.raw_target);
    free(a.value_of);
    free(a.member_of);
    free(a.gaps);
    if (st != BYOCL_OK)
        pass_regions_release(out);
    return st;
}

byocl_status pass_regions_analyze(const byocl_function *fn, byocl_regions *out,
                                  byocl_error *err)
{
    return analyze(fn, false, out, err);
}

byocl_status pass_regions_analyze_lenient(const byocl_function *fn, byocl_regions *out,
                                          byocl_error *err)
{
    return analyze(fn, true, out, err);
}

void pass_regions_release(byocl_regions *r)
{
    if (!r)
        return;
    for (int R = 0; R < r->n_regions; R++) {
        if (r->inputs)
            free(r->inputs[R]);
        if (r->outputs)
            free(r->outputs[R]);
    }
    free(r->region_of);
    free(r->target);
    free(r->n_inputs);
    free(r->n_outputs);
    free(r->inputs);
    free(r->outputs);
    free(r->gaps);
    memset(r, 0, sizeof *r);
}

byocl_status byocl_regions_of_nodes(const byocl_function *fn, int *region_of, int *n_regions,
                                    byocl_error *err)
{
    byocl_regions r;
    byocl_status st = pass_regions_analyze(fn, &r, err);
    if (st != BYOCL_OK)
        return st;
    memcpy(region_of, r.region_of, sizeof *region_of * (size_t)r.n_nodes);
    *n_regions = r.n_regions;
    pass_regions_release(&r);
    return BYOCL_OK;
}

/* ------------------------------------------------------------- convexity */

/* A value of region R: a member that is not a compiler_end (whose value is outside). */
static bool is_region_value(const byocl_function *fn, const byocl_regions *r, int id, int R)
{
    return r->region_of[id] == R && !pass_is_compiler_end(fn, id);
}

/* Appends " -> %N (op)" steps of `path` (in order) to buf, eliding the middle of long
 * paths. */
static void format_path(const byocl_function *fn, const int *path, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at + 1 < len; i++) {
        if (n > 10 && i == 4) {
            at += (size_t)snprintf(buf + at, len - at, " -> ...");
            i = n - 5;
            continue;
        }
        char label[64], what[96] = "";
        byocl_node_label(fn, path[i], label, sizeof label);
        const byocl_node *node = &fn->nodes[path[i]];
        if (node->kind == BYOCL_NODE_CALL)
            snprintf(what, sizeof what, " (%s%s)", node->op ? "" : "@",
                     node->op ? node->op->name : node->callee);
        at += (size_t)snprintf(buf + at, len - at, "%s%s%s", i ? " -> " : "", label, what);
    }
}

/* Reports the path from a value of R out of it and back into `into` (through `via`, an
 * argument of `into` reachable from R). */
static byocl_status report_cycle(const byocl_function *fn, const byocl_regions *r, int R,
                                 const bool *left, int into, int via, byocl_error *err)
{
    int *path = malloc(sizeof(int) * (size_t)(fn->n_nodes + 2));
    if (!path)
        return nomem(err);
    int n = 0;
    path[n++] = into;
    path[n++] = via;
    /* Walk back from `via` until an argument is a value of R. */
    for (int cur = via;;) {
        const byocl_node *node = &fn->nodes[cur];
        int from_region = -1, next = -1;
        for (int k = 0; k < node->n_args && from_region < 0; k++)
            if (is_region_value(fn, r, node->args[k], R))
                from_region = node->args[k];
        if (from_region >= 0) {
            path[n++] = from_region;
            break;
        }
        for (int k = 0; k < node->n_args && next < 0; k++)
            if (left[node->args[k]])
                next = node->args[k];
        if (next < 0)
            break; /* not reached: `left` nodes have such an argument */
        path[n++] = next;
        cur = next;
    }
    for (int i = 0; i < n / 2; i++) {
        int t = path[i];
        path[i] = path[n - 1 - i];
        path[n - 1 - i] = t;
    }
    char text[1200];
    format_path(fn, path, n, text, sizeof text);
    free(path);
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "in @%s: region %d (%s) is not convex: the path %s leaves it and "
                           "comes back, so the partitioned region would depend on itself; "
                           "hint: bring the nodes of that path into the region, or make the "
                           "part after it a region of its own",
                           fn->name, R, r->target[R], text);
}

byocl_status pass_regions_check_convex(const byocl_function *fn, const byocl_regions *r,
                                       byocl_error *err)
{
    int n = fn->n_nodes;
    bool *left = malloc(sizeof(bool) * (size_t)(n + 1));
    if (!left)
        return nomem(err);
    byocl_status st = BYOCL_OK;
    for (int R = 0; R < r->n_regions && st == BYOCL_OK; R++) {
        /* Only a region with an input computed by some node can be re-entered. */
        bool fed_by_node = false;
        for (int i = 0; i < r->n_inputs[R] && !fed_by_node; i++) {
            byocl_node_kind k = fn->nodes[fn->nodes[r->inputs[R][i]].args[0]].kind;
            fed_by_node = k != BYOCL_NODE_VAR && k != BYOCL_NODE_CONSTANT;
        }
        if (!fed_by_node)
            continue;
        /* left[id]: id is outside R's values and reachable from one of them. */
        for (int id = 0; id < n && st == BYOCL_OK; id++) {
            const byocl_node *node = &fn->nodes[id];
            left[id] = false;
            bool inside = is_region_value(fn, r, id, R);
            for (int k = 0; k < node->n_args; k++) {
                int a = node->args[k];
                if (inside && left[a]) {
                    st = report_cycle(fn, r, R, left, id, a, err);
                    break;
                }
                if (!inside && (left[a] || is_region_value(fn, r, a, R)))
                    left[id] = true;
            }
        }
    }
    free(left);
    return st;
}
