/* The first step of partition (see flatten_annotations.h), as in TVM's PartitionGraph
 * (RemoveDefaultAnnotations, then FlattenTupleOutputs): the annotations TVM's passes
 * print, brought to the form region analysis and partition work on.
 *
 * Two rebuilds of @main. The first removes compiler="default" annotations (their users
 * take the annotated value) and gives a tuple-typed annotation one annotation per field,
 * the fields taken from the annotated Tuple itself or as items of the value (an item
 * already there is reused), put back together by a Tuple; an item of that Tuple is the
 * field's annotation itself. The second drops what the first left unused: the Tuples
 * nobody needs whole, the annotations of fields nobody reads, and nodes that only fed
 * the rewritten annotations. Nodes unused in the input are kept: dead code is the
 * user's. */
#include <stdlib.h>
#include <string.h>

#include "flatten_annotations.h"
#include "ops/op_impl.h"
#include "rebuild.h"
#include "regions.h"

static bool is_default(const byocl_function *fn, int id)
{
    return pass_is_annotation(fn, id) &&
           strcmp(pass_annotation_compiler(fn, id), BYOCL_COMPILER_DEFAULT) == 0;
}

static bool is_tuple_annotation(const byocl_function *fn, int id)
{
    return pass_is_annotation(fn, id) && fn->nodes[id].type &&
           fn->nodes[id].type->kind == BYOCL_TYPE_TUPLE;
}

bool pass_annotations_need_flattening(const byocl_function *fn)
{
    for (int id = 0; id < fn->n_nodes; id++)
        if (is_default(fn, id) || is_tuple_annotation(fn, id))
            return true;
    return false;
}

static byocl_status nomem(byocl_error *err)
{
    return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory flattening annotations");
}

/* ------------------------------------------------------- the first rebuild */

typedef struct flattener {
    byocl_rebuild rb;
    bool *flat;     /* per old id: rb.map[id] is a Tuple made here, whose items fold */
    bool *copied;   /* per old id: rb.map[id] is its copy (not another node's) */
    byocl_error *err;
} flattener;

/* Item k of fresh node `tuple`: an item already in the new function, else a new one. */
static int item_of(flattener *fl, int tuple, int k)
{
    const byocl_function *fresh = fl->rb.fresh;
    for (int id = tuple + 1; id < fresh->n_nodes; id++) {
        const byocl_node *n = &fresh->nodes[id];
        if (n->kind == BYOCL_NODE_GETITEM && n->args[0] == tuple && n->index == k)
            return id;
    }
    return byocl_function_add_getitem(fl->rb.fresh, tuple, k, fl->err);
}

/* Annotation `op` (for `compiler`) of fresh value `v` of type `type`, field by field. A
 * constant field is not closed by a compiler_end: it belongs to no region. */
static int flatten(flattener *fl, int v, const byocl_type *type, const char *op,
                   const char *compiler)
{
    byocl_function *fresh = fl->rb.fresh;
    if (type->kind != BYOCL_TYPE_TUPLE) {
        if (strcmp(op, BYOCL_COMPILER_END) == 0 &&
            fresh->nodes[v].kind == BYOCL_NODE_CONSTANT)
            return v;
        return pass_add_annotation(fresh, op, v, compiler, fl->err);
    }
    int n = type->n_fields;
    int *fields = malloc(sizeof(int) * (size_t)(n + 1));
    if (!fields) {
        nomem(fl->err);
        return -1;
    }
    int id = 0;
    for (int k = 0; k < n && id >= 0; k++) {
        const byocl_node *node = &fresh->nodes[v];
        id = node->kind == BYOCL_NODE_TUPLE ? node->args[k] : item_of(fl, v, k);
        if (id >= 0)
            id = fields[k] = flatten(fl, id, type->fields[k], op, compiler);
    }
    if (id >= 0)
        id = byocl_function_add_tuple(fresh, fields, n, fl->err);
    free(fields);
    return id;
}

static byocl_status flatten_node(flattener *fl, int id)
{
    const byocl_function *old = fl->rb.old;
    const byocl_node *n = &old->nodes[id];
    int *map = fl->rb.map;
    if (is_default(old, id)) {
        map[id] = map[n->args[0]];
        fl->flat[id] = fl->flat[n->args[0]];
        return BYOCL_OK;
    }
    if (is_tuple_annotation(old, id)) {
        map[id] = flatten(fl, map[n->args[0]], n->type, n->op->name,
                          pass_annotation_compiler(old, id));
        fl->flat[id] = true;
    } else if (n->kind == BYOCL_NODE_GETITEM && fl->flat[n->args[0]]) {
        map[id] = fl->rb.fresh->nodes[map[n->args[0]]].args[n->index];
        fl->flat[id] = n->type->kind == BYOCL_TYPE_TUPLE;
    } else {
        fl->copied[id] = pass_rebuild_copy(&fl->rb, id, NULL, fl->err) >= 0;
        return fl->copied[id] ? BYOCL_OK : fl->err->status;
    }
    return map[id] >= 0 ? BYOCL_OK : fl->err->status;
}

/* Which nodes of the new function may go when unused (`droppable`, one flag per node):
 * the ones made here and the copies of nodes that had a use. */
static byocl_status mark_droppable(const flattener *fl, bool *droppable)
{
    const byocl_function *old = fl->rb.old;
    bool *used = calloc((size_t)old->n_nodes + 1, sizeof(bool));
    if (!used)
        return nomem(fl->err);
    for (int id = 0; id < fl->rb.fresh->n_nodes; id++)
        droppable[id] = true;
    for (int id = 0; id < old->n_nodes; id++)
        for (int k = 0; k < old->nodes[id].n_args; k++)
            used[old->nodes[id].args[k]] = true;
    for (int id = 0; id < old->n_nodes; id++)
        if (fl->copied[id])
            droppable[fl->rb.map[id]] = used[id];
    free(used);
    return BYOCL_OK;
}

/* Rebuilds @main (`fn`) flattened; *droppable gets the flags of mark_droppable for the
 * *n nodes of the new @main. */
static byocl_status flatten_main(byocl_module *m, const byocl_function *fn, bool **droppable,
                                 int *n, byocl_error *err)
{
    flattener fl = {.err = err};
    *droppable = NULL;
    byocl_status st = pass_rebuild_begin(&fl.rb, m, fn, "flatten", err);
    if (st != BYOCL_OK)
        return st;
    fl.flat = calloc((size_t)fn->n_nodes + 1, sizeof(bool));
    fl.copied = calloc((size_t)fn->n_nodes + 1, sizeof(bool));
    if (!fl.flat || !fl.copied)
        st = nomem(err);
    for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++)
        st = flatten_node(&fl, id);
    *n = fl.rb.fresh->n_nodes;
    if (st == BYOCL_OK && !(*droppable = malloc(sizeof(bool) * (size_t)(*n + 1))))
        st = nomem(err);
    if (st == BYOCL_OK)
        st = mark_droppable(&fl, *droppable);
    free(fl.flat);
    free(fl.copied);
    if (st == BYOCL_OK)
        return pass_rebuild_finish(&fl.rb, fl.rb.map[fn->body], err);
    pass_rebuild_abort(&fl.rb);
    return st;
}

/* ------------------------------------------------------ the second rebuild */

/* Rebuilds @main (`fn`) without its droppable nodes (flags for its first n_droppable)
 * that nothing kept uses. */
static byocl_status drop_unused(byocl_module *m, const byocl_function *fn, const bool *droppable,
                                int n_droppable, byocl_error *err)
{
    bool *keep = calloc((size_t)fn->n_nodes + 1, sizeof(bool));
    if (!keep)
        return nomem(err);
    keep[fn->body] = true;
    bool any_dropped = false;
    for (int id = fn->n_nodes - 1; id >= 0; id--) {
        const byocl_node *n = &fn->nodes[id];
        keep[id] |= id >= n_droppable || !droppable[id] || n->kind == BYOCL_NODE_VAR;
        any_dropped |= !keep[id];
        for (int k = 0; keep[id] && k < n->n_args; k++)
            keep[n->args[k]] = true;
    }
    byocl_status st = BYOCL_OK;
    if (any_dropped) {
        byocl_rebuild rb;
        st = pass_rebuild_begin(&rb, m, fn, "flatten", err);
        for (int id = 0; id < fn->n_nodes && st == BYOCL_OK; id++)
            if (keep[id] && pass_rebuild_copy(&rb, id, NULL, err) < 0)
                st = err->status;
        if (st == BYOCL_OK)
            st = pass_rebuild_finish(&rb, rb.map[fn->body], err);
        else
            pass_rebuild_abort(&rb);
    }
    free(keep);
    return st;
}

byocl_status pass_flatten_annotations(byocl_module *m, const byocl_function *fn,
                                      byocl_error *err)
{
    bool *droppable;
    int n_droppable;
    byocl_status st = flatten_main(m, fn, &droppable, &n_droppable, err);
    if (st == BYOCL_OK)
        st = drop_unused(m, byocl_module_find(m, BYOCL_PASS_MAIN), droppable, n_droppable, err);
    free(droppable);
    return st;
}
