/* Rebuilding a function node by node (see rebuild.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "rebuild.h"

byocl_status pass_find_main(const byocl_module *m, const char *pass, byocl_function **out,
                            byocl_error *err)
{
    *out = NULL;
    if (!m)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: no module", pass);
    if (!(*out = byocl_module_find(m, BYOCL_PASS_MAIN)))
        return byocl_error_set(err, BYOCL_ERR_NOT_FOUND, "no function @%s in the module",
                               BYOCL_PASS_MAIN);
    return BYOCL_OK;
}

/* A name no function of `m` has: "<base>.<pass>.<k>", so that the old function and the
 * fresh one live side by side until the swap. */
static void unused_function_name(const byocl_module *m, const char *base, const char *pass,
                                 char *buf, size_t len)
{
    for (int k = 0;; k++) {
        snprintf(buf, len, "%s.%s.%d", base, pass, k);
        if (!byocl_module_find(m, buf))
            return;
    }
}

byocl_status pass_rebuild_begin(byocl_rebuild *rb, byocl_module *m, const byocl_function *old,
                                const char *pass, byocl_error *err)
{
    memset(rb, 0, sizeof *rb);
    char name[256];
    unused_function_name(m, old->name, pass, name, sizeof name);
    rb->map = malloc(sizeof(int) * (size_t)(old->n_nodes + 1));
    if (!rb->map)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory rewriting @%s", old->name);
    for (int id = 0; id < old->n_nodes; id++)
        rb->map[id] = -1;
    rb->fresh = byocl_module_add_function(m, name, err);
    if (!rb->fresh) {
        free(rb->map);
        rb->map = NULL;
        return err ? err->status : BYOCL_ERR_NOMEM;
    }
    rb->mod = m;
    rb->old = old;
    return BYOCL_OK;
}

int pass_rebuild_copy(byocl_rebuild *rb, int id, const int *args, byocl_error *err)
{
    byocl_node proto = rb->old->nodes[id];
    int small[8];
    int *mapped = NULL;
    if (!args && proto.n_args > 0) {
        mapped = proto.n_args <= 8 ? small : malloc(sizeof(int) * (size_t)proto.n_args);
        if (!mapped) {
            byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory rewriting @%s", rb->old->name);
            return -1;
        }
        for (int k = 0; k < proto.n_args; k++)
            mapped[k] = rb->map[proto.args[k]];
        args = mapped;
    }
    proto.args = (int *)args;
    int fresh_id = ir_fn_append(rb->fresh, &proto, err);
    if (mapped && mapped != small)
        free(mapped);
    if (fresh_id >= 0)
        rb->map[id] = fresh_id;
    return fresh_id;
}

int pass_add_annotation(byocl_function *fn, const char *op, int arg, const char *compiler,
                        byocl_error *err)
{
    byocl_attrs *attrs = byocl_attrs_new(fn->mod);
    if (!attrs || byocl_attrs_set_str(fn->mod, attrs, "compiler", compiler) != BYOCL_OK) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory adding %s", op);
        return -1;
    }
    return byocl_function_add_call(fn, op, &arg, 1, attrs, err);
}

void pass_rebuild_abort(byocl_rebuild *rb)
{
    if (rb->fresh)
        byocl_module_remove(rb->mod, rb->fresh->name, NULL);
    free(rb->map);
    memset(rb, 0, sizeof *rb);
}

static byocl_status set_params(byocl_rebuild *rb, byocl_error *err)
{
    const byocl_function *old = rb->old;
    byocl_function *fresh = rb->fresh;
    fresh->params = malloc(sizeof(int) * (size_t)(old->n_params + 1));
    if (!fresh->params)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory rewriting @%s", old->name);
    fresh->cap_params = old->n_params + 1;
    for (int k = 0; k < old->n_params; k++) {
        int p = old->params[k];
        if (rb->map[p] < 0 && pass_rebuild_copy(rb, p, NULL, err) < 0)
            return err ? err->status : BYOCL_ERR_NOMEM;
        fresh->params[fresh->n_params++] = rb->map[p];
    }
    return BYOCL_OK;
}

byocl_status pass_rebuild_finish(byocl_rebuild *rb, int body, byocl_error *err)
{
    byocl_function *fresh = rb->fresh;
    const byocl_function *old = rb->old;
    byocl_status st = set_params(rb, err);
    if (st == BYOCL_OK)
        st = byocl_function_set_body(fresh, body, err);
    if (st == BYOCL_OK)
        st = ir_attrs_copy(rb->mod, &old->attrs, &fresh->attrs, err);
    if (st == BYOCL_OK && old->ret_type &&
        !(fresh->ret_type = ir_type_copy(rb->mod, old->ret_type)))
        st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory rewriting @%s", old->name);
    if (st == BYOCL_OK)
        st = byocl_infer_types(rb->mod, err);
    if (st == BYOCL_OK)
        st = byocl_module_replace(rb->mod, old->name, fresh, err);
    if (st != BYOCL_OK) {
        pass_rebuild_abort(rb);
        return st;
    }
    free(rb->map);
    memset(rb, 0, sizeof *rb);
    return BYOCL_OK;
}
