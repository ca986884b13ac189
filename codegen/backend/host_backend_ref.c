/* The "ref" host backend: one group per op call, whose kernel runs the op's reference
 * kernel (codegen/ops) on tensors that wrap the executor's buffers. It needs no code
 * generator, so it is what `--target ref` builds, and the graph executor is checked
 * against the reference executor through it bit for bit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/text.h"
#include "host_backend.h"
#include "ops/op_impl.h"
#include "base/tensor_impl.h"

typedef struct ref_state ref_state;

typedef struct ref_kernel_ctx {
    const byocl_op *op;
    const byocl_attrs *attrs;
    int n_in, n_out;
    const byocl_type **types; /* the arguments' tensor types: inputs, then outputs */
    ref_state *state;
} ref_kernel_ctx;

struct ref_state {
    int n_kernels;
    ref_kernel_ctx *kernels;
    pthread_mutex_t mu; /* guards msg */
    char msg[BYOCL_ERROR_MSG_MAX];
};

/* The tensor values of node `node`: (node, -1) for a tensor, (node, k) per field else. */
static int node_value_refs(const byocl_function *fn, int node, byocl_value_ref *refs)
{
    const byocl_type *t = fn->nodes[node].type;
    if (t->kind != BYOCL_TYPE_TUPLE) {
        refs[0] = (byocl_value_ref){node, -1};
        return 1;
    }
    int n = byocl_type_num_tensors(t);
    for (int k = 0; k < n; k++)
        refs[k] = (byocl_value_ref){node, k};
    return n;
}

/* "nn_conv2d_3": the op with '_' for '.', and the node's number in `byocl print`
 * (`number`, -1 when it has none). */
static void group_name(const byocl_function *fn, int node, int number, char *buf, size_t len)
{
    const byocl_node *n = &fn->nodes[node];
    char op[48];
    snprintf(op, sizeof op, "%s", n->op->name);
    for (char *p = op; *p; p++)
        if (*p == '.')
            *p = '_';
    if (number >= 0)
        snprintf(buf, len, "%s_%d", op, number);
    else if (n->name)
        snprintf(buf, len, "%s_%s", op, n->name);
    else
        snprintf(buf, len, "%s_result", op);
}

static byocl_status ref_group(const byocl_function *fn, const int *compute, int n_compute,
                              byocl_host_group **groups_out, int *n_groups, byocl_error *err)
{
    *groups_out = NULL;
    *n_groups = 0;
    byocl_host_group *groups = calloc(n_compute > 0 ? (size_t)n_compute : 1, sizeof *groups);
    int *numbers = byocl_text_node_numbers(fn);
    if (!groups || !numbers) {
        free(groups);
        free(numbers);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    for (int g = 0; g < n_compute; g++) {
        int id = compute[g];
        const byocl_node *n = &fn->nodes[id];
        byocl_host_group *grp = &groups[g];
        int n_in = 0;
        for (int k = 0; k < n->n_args; k++)
            n_in += byocl_type_num_tensors(fn->nodes[n->args[k]].type);
        int n_out = byocl_type_num_tensors(n->type);
        grp->nodes = malloc(sizeof *grp->nodes);
        grp->inputs = malloc((n_in > 0 ? (size_t)n_in : 1) * sizeof *grp->inputs);
        grp->outputs = malloc((n_out > 0 ? (size_t)n_out : 1) * sizeof *grp->outputs);
        if (!grp->nodes || !grp->inputs || !grp->outputs) {
            host_groups_free(groups, n_compute);
            free(numbers);
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        }
        grp->n_nodes = 1;
        grp->nodes[0] = id;
        for (int k = 0; k < n->n_args; k++)
            grp->n_inputs += node_value_refs(fn, n->args[k], grp->inputs + grp->n_inputs);
        grp->n_outputs = node_value_refs(fn, id, grp->outputs);
        group_name(fn, id, numbers[id], grp->name, sizeof grp->name);
        grp->flops = host_node_flops(fn, id);
    }
    free(numbers);
    *groups_out = groups;
    *n_groups = n_compute;
    return BYOCL_OK;
}

static int32_t ref_kernel(void *const *args, int64_t task, void *vctx)
{
    (void)task; /* one task per kernel */
    ref_kernel_ctx *k = vctx;
    int n = k->n_in + k->n_out;
    byocl_error err;
    byocl_tensor **ts = calloc(n > 0 ? (size_t)n : 1, sizeof *ts);
    byocl_status st = ts ? BYOCL_OK : byocl_error_set(&err, BYOCL_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == BYOCL_OK; i++)
        if (!(ts[i] = base_tensor_wrap(k->types[i]->dtype, &k->types[i]->shape, args[i], &err)))
            st = err.status;
    if (st == BYOCL_OK)
        st = k->op->ref(k->attrs, (const byocl_tensor *const *)ts, k->n_in, ts + k->n_in,
                        k->n_out, &err);
    for (int i = 0; ts && i < n; i++)
        base_tensor_wrap_free(ts[i]);
    free(ts);
    if (st == BYOCL_OK)
        return 0;
    pthread_mutex_lock(&k->state->mu);
    snprintf(k->state->msg, sizeof k->state->msg, "%s", err.msg);
    pthread_mutex_unlock(&k->state->mu);
    return 1;
}

static void ref_release(void *vstate)
{
    ref_state *s = vstate;
    if (!s)
        return;
    for (int i = 0; i < s->n_kernels; i++)
        free(s->kernels[i].types);
    free(s->kernels);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static byocl_status ref_compile(const byocl_function *fn, const byocl_host_group *groups,
                                int n_groups, const byocl_host_backend_options *opt,
                                byocl_host_kernel *kernels, void **state_out, byocl_error *err)
{
    (void)opt;
    *state_out = NULL;
    ref_state *s = calloc(1, sizeof *s);
    if (!s)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    s->kernels = calloc(n_groups > 0 ? (size_t)n_groups : 1, sizeof *s->kernels);
    if (!s->kernels) {
        ref_release(s);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    s->n_kernels = n_groups;
    for (int g = 0; g < n_groups; g++) {
        const byocl_host_group *grp = &groups[g];
        ref_kernel_ctx *k = &s->kernels[g];
        const byocl_node *n = &fn->nodes[grp->nodes[0]];
        if (grp->n_nodes != 1 || n->kind != BYOCL_NODE_CALL || !n->op || !n->op->ref) {
            ref_release(s);
            return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                   "the ref backend runs one op call per kernel; group %s is not "
                                   "one",
                                   grp->name);
        }
        k->op = n->op;
        k->attrs = &n->attrs;
        k->n_in = grp->n_inputs;
        k->n_out = grp->n_outputs;
        k->state = s;
        k->types = malloc((size_t)(k->n_in + k->n_out + 1) * sizeof *k->types);
        if (!k->types) {
            ref_release(s);
            return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
        }
        for (int i = 0; i < k->n_in + k->n_out; i++) {
            const byocl_value_ref *v =
                i < k->n_in ? &grp->inputs[i] : &grp->outputs[i - k->n_in];
            k->types[i] = host_value_ref_type(fn, *v);
            if (!k->types[i] || k->types[i]->kind != BYOCL_TYPE_TENSOR) {
                ref_release(s);
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "group %s: argument %d is not a tensor value", grp->name,
                                       i);
            }
        }
        kernels[g] = (byocl_host_kernel){ref_kernel, k, 1};
    }
    *state_out = s;
    return BYOCL_OK;
}

/* A copy of the last kernel error, per calling thread, so the caller may read it while
 * another executor's kernel fails. */
static const char *ref_error(void *vstate)
{
    static _Thread_local char copy[BYOCL_ERROR_MSG_MAX];
    ref_state *s = vstate;
    pthread_mutex_lock(&s->mu);
    snprintf(copy, sizeof copy, "%s", s->msg);
    pthread_mutex_unlock(&s->mu);
    return copy;
}

const byocl_host_backend_i host_backend_ref = {
    .name = "ref",
    .group = ref_group,
    .compile = ref_compile,
    .release = ref_release,
    .error = ref_error,
};
