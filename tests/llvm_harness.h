/* Runs a module's @main through the LLVM host backend directly (plan, compile, then every
 * task of every kernel), without the graph executor, for tests/test_llvm_*.c: the
 * kernels are checked on their own, whatever schedule an executor would pick.
 * Header-only (static inline) because each suite is a single source file. */
#ifndef BYOCL_TESTS_LLVM_HARNESS_H
#define BYOCL_TESTS_LLVM_HARNESS_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"
#include "ir/ir_impl.h"
#include "llvm/llvm_backend.h"

typedef struct lh_options {
    int threads;        /* passed to compile (sizes n_tasks); 0 means 2 */
    int opt_level;      /* 0 means 2, the default of byocl_build_options */
    bool concurrent;    /* run the tasks of each kernel on two threads at once */
    int64_t *tasks;     /* if set: each kernel's n_tasks, in order, up to max_tasks of them */
    int max_tasks;
} lh_options;

/* The op calls @main's body needs, ascending. *compute is malloc'ed. */
static inline int lh_compute_nodes(const byocl_function *fn, int **compute)
{
    bool *needed = calloc((size_t)fn->n_nodes, sizeof *needed);
    int *list = malloc((size_t)fn->n_nodes * sizeof *list);
    assert_non_null(needed);
    assert_non_null(list);
    needed[fn->body] = true;
    for (int id = fn->body; id >= 0; id--)
        for (int k = 0; needed[id] && k < fn->nodes[id].n_args; k++)
            needed[fn->nodes[id].args[k]] = true;
    int n = 0;
    for (int id = 0; id < fn->n_nodes; id++)
        if (needed[id] && fn->nodes[id].kind == BYOCL_NODE_CALL && fn->nodes[id].op)
            list[n++] = id;
    free(needed);
    *compute = list;
    return n;
}

/* Flattened value id of (node, field). */
static inline int lh_value_index(const byocl_function *fn, const int *base, byocl_value_ref v)
{
    (void)fn;
    return base[v.node] + (v.field < 0 ? 0 : v.field);
}

typedef struct lh_task_run {
    byocl_host_kernel k;
    void *const *args;
    int64_t first, step;
    int32_t rc;
} lh_task_run;

static inline void *lh_task_thread(void *p)
{
    lh_task_run *r = p;
    for (int64_t t = r->first; t < r->k.n_tasks && r->rc == 0; t += r->step)
        r->rc = r->k.fn(r->args, r->k.n_tasks - 1 - t, r->k.ctx);
    return NULL;
}

/* Plans, compiles and runs @main; *outputs (the flattened body) are new references. On a
 * kernel failure returns BYOCL_ERR_RUNTIME with the backend's message. */
static inline byocl_status lh_run(const byocl_module *m, byocl_tensor *const *inputs,
                                  const lh_options *opt, byocl_tensor ***outputs, int *n_outputs,
                                  byocl_error *err)
{
    const byocl_host_backend_i *be = &byocl_host_backend_llvm;
    byocl_function *fn = byocl_module_find(m, "main");
    assert_non_null(fn);
    int *compute = NULL;
    int n_compute = lh_compute_nodes(fn, &compute);
    byocl_host_group *groups = NULL;
    int n_groups = 0;
    byocl_status st = be->group(fn, compute, n_compute, &groups, &n_groups, err);
    free(compute);
    if (st != BYOCL_OK)
        return st;
    byocl_host_kernel *kernels = calloc((size_t)(n_groups + 1), sizeof *kernels);
    assert_non_null(kernels);
    void *state = NULL;
    byocl_host_backend_options o = {.threads = opt && opt->threads ? opt->threads : 2,
                                    .opt_level = opt && opt->opt_level ? opt->opt_level : 2};
    st = be->compile(fn, groups, n_groups, &o, kernels, &state, err);
    if (st != BYOCL_OK) {
        free(kernels);
        host_groups_free(groups, n_groups);
        return st;
    }
    /* Every tensor value of fn, by (node, field). */
    int *base = malloc((size_t)fn->n_nodes * sizeof *base), n_vals = 0;
    assert_non_null(base);
    for (int id = 0; id < fn->n_nodes; id++) {
        base[id] = n_vals;
        int c = byocl_type_num_tensors(fn->nodes[id].type);
        n_vals += c > 0 ? c : 1;
    }
    byocl_tensor **vals = calloc((size_t)n_vals, sizeof *vals);
    assert_non_null(vals);
    for (int k = 0; k < fn->n_params; k++)
        vals[base[fn->params[k]]] = byocl_tensor_ref(inputs[k]);
    for (int id = 0; id < fn->n_nodes; id++)
        if (fn->nodes[id].kind == BYOCL_NODE_CONSTANT)
            vals[base[id]] = byocl_tensor_ref(fn->nodes[id].value);
    for (int g = 0; opt && opt->tasks && g < n_groups && g < opt->max_tasks; g++)
        opt->tasks[g] = kernels[g].n_tasks;
    for (int g = 0; g < n_groups && st == BYOCL_OK; g++) {
        const byocl_host_group *grp = &groups[g];
        int n_args = grp->n_inputs + grp->n_outputs;
        void **args = calloc((size_t)(n_args + 1), sizeof *args);
        assert_non_null(args);
        for (int i = 0; i < grp->n_inputs; i++) {
            byocl_tensor *t = vals[lh_value_index(fn, base, grp->inputs[i])];
            if (!t)
                fail_msg("kernel %s input %d is not computed yet", grp->name, i);
            args[i] = byocl_tensor_data(t);
        }
        for (int i = 0; i < grp->n_outputs; i++) {
            const byocl_type *t = host_value_ref_type(fn, grp->outputs[i]);
            assert_non_null(t);
            byocl_tensor *out = byocl_tensor_new(t->dtype, &t->shape, err);
            assert_non_null(out);
            /* junk, so that an element a kernel forgets shows */
            if (byocl_tensor_nbytes(out) > 0) /* an empty tensor has no data */
                memset(byocl_tensor_data(out), 0x7b, byocl_tensor_nbytes(out));
            int at = lh_value_index(fn, base, grp->outputs[i]);
            assert_null(vals[at]);
            vals[at] = out;
            args[grp->n_inputs + i] = byocl_tensor_data(out);
        }
        lh_task_run runs[2] = {{kernels[g], args, 0, 1, 0}, {kernels[g], args, 1, 2, 0}};
        if (opt && opt->concurrent && kernels[g].n_tasks > 1) {
            runs[0].step = 2;
            pthread_t th;
            assert_int_equal(pthread_create(&th, NULL, lh_task_thread, &runs[1]), 0);
            lh_task_thread(&runs[0]);
            pthread_join(th, NULL);
        } else {
            lh_task_thread(&runs[0]);
        }
        if (runs[0].rc || runs[1].rc)
            st = byocl_error_set(err, BYOCL_ERR_RUNTIME, "%s", be->error(state));
        free(args);
    }
    /* Tuple and GetItem nodes name tensors of other nodes. */
    for (int id = 0; st == BYOCL_OK && id < fn->n_nodes; id++) {
        const byocl_node *n = &fn->nodes[id];
        if (n->kind == BYOCL_NODE_GETITEM) {
            const byocl_type *t = fn->nodes[n->args[0]].type;
            int off = 0;
            for (int k = 0; k < n->index; k++)
                off += byocl_type_num_tensors(t->fields[k]);
            for (int f = 0; f < byocl_type_num_tensors(n->type); f++)
                if (vals[base[n->args[0]] + off + f])
                    vals[base[id] + f] = byocl_tensor_ref(vals[base[n->args[0]] + off + f]);
        } else if (n->kind == BYOCL_NODE_TUPLE) {
            int at = 0;
            for (int k = 0; k < n->n_args; k++)
                for (int f = 0; f < byocl_type_num_tensors(fn->nodes[n->args[k]].type); f++) {
                    if (vals[base[n->args[k]] + f])
                        vals[base[id] + at] = byocl_tensor_ref(vals[base[n->args[k]] + f]);
                    at++;
                }
        }
    }
    if (st == BYOCL_OK) {
        int n = byocl_type_num_tensors(fn->nodes[fn->body].type);
        byocl_tensor **outs = calloc((size_t)(n + 1), sizeof *outs);
        assert_non_null(outs);
        for (int f = 0; f < n; f++) {
            byocl_tensor *t = vals[base[fn->body] + f];
            if (!t)
                fail_msg("output %d was never computed", f);
            outs[f] = byocl_tensor_ref(t);
        }
        *outputs = outs;
        *n_outputs = n;
    }
    for (int i = 0; i < n_vals; i++)
        byocl_tensor_unref(vals[i]);
    free(vals);
    free(base);
    be->release(state);
    free(kernels);
    host_groups_free(groups, n_groups);
    return st;
}

#endif
