/* An example target plugin in plain C (docs/writing-a-target.md walks through it).
 *
 * Target "example" claims three elementwise ops on float32 tensors: nn.relu, abs, and add
 * of two operands of one shape. Its compile turns a region into a small program for its
 * own interpreter: one instruction per op call, each writing a buffer of its own; the
 * runtime module runs the instructions on the region's inputs and copies the results into
 * the outputs. It uses only byocl's public headers.
 *
 * Built three ways by CMake (cmake/plugins.cmake): as is, with
 * EXAMPLE_API_VERSION=99 (a plugin built for another target API) and with EXAMPLE_NO_INIT
 * (its init misnamed), for the loader's error tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/byocl.h"
#include "byocl/plugin.h"
#include "byocl/runtime.h"
#include "byocl/target.h"

#ifndef EXAMPLE_API_VERSION
#define EXAMPLE_API_VERSION BYOCL_TARGET_API_VERSION
#endif

/* ------------------------------------------------------------------ supports */

typedef enum ex_op { EX_RELU, EX_ABS, EX_ADD } ex_op;

static bool op_of(const char *name, ex_op *out)
{
    static const struct {
        const char *name;
        ex_op op;
    } ops[] = {{"nn.relu", EX_RELU}, {"abs", EX_ABS}, {"add", EX_ADD}};
    for (size_t i = 0; name && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(name, ops[i].name) == 0) {
            *out = ops[i].op;
            return true;
        }
    return false;
}

static bool is_f32_tensor(const byocl_type *t)
{
    return t->kind == BYOCL_TYPE_TENSOR && t->dtype == BYOCL_FLOAT32;
}

static bool example_supports(void *ctx, const byocl_function *fn, int node, char *why,
                             size_t why_len)
{
    (void)ctx;
    ex_op op;
    const char *name = byocl_node_op(fn, node);
    if (!op_of(name, &op)) {
        snprintf(why, why_len, "op %s is not one of nn.relu, abs, add", name ? name : "?");
        return false;
    }
    const byocl_type *t = byocl_node_type(fn, node);
    if (!is_f32_tensor(t)) {
        snprintf(why, why_len, "dtype %s is not float32", byocl_dtype_name(t->dtype));
        return false;
    }
    for (int k = 0; k < byocl_node_num_args(fn, node); k++) {
        const byocl_type *a = byocl_node_type(fn, byocl_node_arg(fn, node, k));
        if (!is_f32_tensor(a) || !byocl_shape_equal(&a->shape, &t->shape)) {
            snprintf(why, why_len, "operands of another shape (broadcasting) are not supported");
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------- the program */

/* Values are numbered: inputs 0..n_in-1, then one per instruction. */
typedef struct ex_instr {
    ex_op op;
    int a, b;      /* argument values (b for add only) */
    int64_t numel; /* elements of the result (and of the arguments) */
} ex_instr;

typedef struct ex_program {
    char *symbol;
    int n_in, n_instr, n_out;
    ex_instr *instr;
    int *outputs;    /* the value each output copies */
    float **values;  /* instruction results, numel floats each */
} ex_program;

static void program_free(void *ctx)
{
    ex_program *p = ctx;
    if (!p)
        return;
    for (int i = 0; p->values && i < p->n_instr; i++)
        free(p->values[i]);
    free(p->values);
    free(p->instr);
    free(p->outputs);
    free(p->symbol);
    free(p);
}

static byocl_status example_run(void *ctx, const char *symbol, DLTensor *const *args, int n_in,
                                int n_out, byocl_error *err)
{
    ex_program *p = ctx;
    if (strcmp(symbol, p->symbol) != 0 || n_in != p->n_in || n_out != p->n_out)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "example target: region %s takes %d inputs and %d outputs; "
                               "called as %s with %d and %d",
                               p->symbol, p->n_in, p->n_out, symbol, n_in, n_out);
    for (int i = 0; i < p->n_instr; i++) {
        const ex_instr *in = &p->instr[i];
        const float *a = in->a < p->n_in ? args[in->a]->data : p->values[in->a - p->n_in];
        const float *b = in->op != EX_ADD ? NULL
                         : in->b < p->n_in ? args[in->b]->data
                                           : p->values[in->b - p->n_in];
        float *y = p->values[i];
        for (int64_t e = 0; e < in->numel; e++)
            y[e] = in->op == EX_RELU  ? (a[e] > 0 ? a[e] : 0)
                   : in->op == EX_ABS ? (a[e] < 0 ? -a[e] : a[e])
                                      : a[e] + b[e];
    }
    for (int k = 0; k < n_out; k++) {
        int v = p->outputs[k];
        const float *src = v < p->n_in ? args[v]->data : p->values[v - p->n_in];
        int64_t numel = 1;
        for (int d = 0; d < args[n_in + k]->ndim; d++)
            numel *= args[n_in + k]->shape[d];
        memcpy(args[n_in + k]->data, src, (size_t)numel * sizeof(float));
    }
    return BYOCL_OK;
}

/* The value node `id` holds, or -1 when the node is not an input or an instruction. */
static int value_of(const int *node_value, int id)
{
    return id >= 0 ? node_value[id] : -1;
}

/* The options compile accepts (byocl checks their values before compile sees them). */
static const byocl_target_option example_options[] = {
    {"max_ops", BYOCL_OPTION_INT, NULL, "unlimited",
     "refuse regions of more ops (their compile fails; --fallback runs them on the host)"},
    {NULL, 0, NULL, NULL, NULL},
};

static byocl_status example_compile(void *ctx, const byocl_function *region,
                                    const byocl_target_config *config, byocl_rtmod **out,
                                    byocl_error *err)
{
    (void)ctx;
    const char *max_ops = byocl_target_config_get(config, "max_ops");
    int n_nodes = byocl_function_num_nodes(region);
    ex_program *p = calloc(1, sizeof *p);
    int *node_value = malloc(((size_t)n_nodes + 1) * sizeof *node_value);
    if (!p || !node_value) {
        free(p);
        free(node_value);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "example target: out of memory");
    }
    p->symbol = strdup(byocl_attrs_get_str(byocl_function_attrs(region), "global_symbol",
                                           byocl_function_name(region)));
    p->n_in = byocl_function_num_params(region);
    p->instr = calloc((size_t)n_nodes + 1, sizeof *p->instr);
    p->values = calloc((size_t)n_nodes + 1, sizeof *p->values);
    p->outputs = calloc((size_t)n_nodes + 1, sizeof *p->outputs);
    byocl_status st = p->symbol && p->instr && p->values && p->outputs
                          ? BYOCL_OK
                          : byocl_error_set(err, BYOCL_ERR_NOMEM, "example target: out of memory");
    for (int id = 0; id < n_nodes; id++)
        node_value[id] = -1;
    for (int k = 0; k < p->n_in; k++)
        node_value[byocl_function_param(region, k)] = k;
    for (int id = 0; id < n_nodes && st == BYOCL_OK; id++) {
        if (byocl_node_kind_of(region, id) != BYOCL_NODE_CALL)
            continue;
        ex_instr in;
        char why[128];
        if (!op_of(byocl_node_op(region, id), &in.op) ||
            !example_supports(NULL, region, id, why, sizeof why)) {
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED, "example target: node %d: %s", id,
                                 op_of(byocl_node_op(region, id), &in.op) ? why
                                                                           : "not an op it has");
            break;
        }
        in.a = value_of(node_value, byocl_node_arg(region, id, 0));
        in.b = in.op == EX_ADD ? value_of(node_value, byocl_node_arg(region, id, 1)) : 0;
        if (in.a < 0 || in.b < 0) {
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                 "example target: node %d reads a value it cannot hold", id);
            break;
        }
        in.numel = byocl_shape_numel(&byocl_node_type(region, id)->shape);
        if (!(p->values[p->n_instr] = malloc((size_t)in.numel * sizeof(float) + 1))) {
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "example target: out of memory");
            break;
        }
        p->instr[p->n_instr] = in;
        node_value[id] = p->n_in + p->n_instr++;
    }
    if (st == BYOCL_OK && max_ops && p->n_instr > atoi(max_ops))
        st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                             "example target: region has %d ops, more than max_ops=%s",
                             p->n_instr, max_ops);
    /* The outputs: the body, or the fields of the tuple it is. */
    int body = byocl_function_body(region);
    bool tuple = byocl_node_kind_of(region, body) == BYOCL_NODE_TUPLE;
    int n_out = tuple ? byocl_node_num_args(region, body) : 1;
    for (int k = 0; k < n_out && st == BYOCL_OK; k++) {
        int v = value_of(node_value, tuple ? byocl_node_arg(region, body, k) : body);
        if (v < 0)
            st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                                 "example target: output %d is not a value it computes", k);
        p->outputs[p->n_out++] = v;
    }
    free(node_value);
    if (st != BYOCL_OK) {
        program_free(p);
        return st;
    }
    static const byocl_rtmod_i iface = {.run = example_run, .destroy = program_free};
    return byocl_rtmod_new("example", &iface, p, out, err);
}

/* ------------------------------------------------------------ the plugin */

const uint32_t byocl_target_plugin_api_version = EXAMPLE_API_VERSION;

/* EXAMPLE_NO_INIT: a plugin whose init has the wrong name. */
#ifndef EXAMPLE_NO_INIT
byocl_status byocl_target_plugin_init(uint32_t api_version, byocl_error *err)
#else
byocl_status byocl_target_plugin_setup(uint32_t api_version, byocl_error *err);
byocl_status byocl_target_plugin_setup(uint32_t api_version, byocl_error *err)
#endif
{
    if (api_version != BYOCL_TARGET_API_VERSION)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "example target: built for target API %u, loaded by %u",
                               (unsigned)BYOCL_TARGET_API_VERSION, (unsigned)api_version);
    const byocl_target_i target = {
        .name = "example",
        .api_version = BYOCL_TARGET_API_VERSION,
        .supports = example_supports,
        .compile = example_compile,
        .options = example_options,
    };
    return byocl_target_register(&target, err);
}
