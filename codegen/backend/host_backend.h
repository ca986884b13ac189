/* The contract between the graph executor (runtime/) and a host code generator
 * (codegen/llvm/, or the reference backend that calls the ops' C kernels).
 *
 * The executor works on tensor values: a node of @main whose type is a tensor is one
 * value; a node of tuple type (nn.batch_norm, split, a region call with several outputs)
 * has one value per field. Tuple and TupleGetItem nodes compute nothing: they only name
 * values. A host backend groups the compute nodes of @main (calls of ops that are not on
 * a region) into fusion groups, and compiles each group into one kernel.
 *
 * (Added by the executor.) Besides Tuples and TupleGetItems, the executor treats
 * annotation.compiler_begin/end, reshape, squeeze, expand_dims and nn.batch_flatten as
 * views of their argument's buffer (codegen/driver/build.c, is_view_op): they never appear in
 * `compute`, and a group input may name such a node, with that node's type. A group must
 * output every value of its nodes that a node outside the group reads (also through a
 * view, a Tuple or a region call) or that the function returns; the executor checks this
 * and fails the build naming the node otherwise. */
#ifndef BYOCL_HOST_BACKEND_H
#define BYOCL_HOST_BACKEND_H

#include <stdint.h>

#include "byocl/ir.h"

/* One tensor value: field -1 for a tensor-typed node, else the index of a tuple field
 * (flattened depth-first for nested tuples). */
typedef struct byocl_value_ref {
    int node;
    int field;
} byocl_value_ref;

/* A fusion group: op calls of @main computed by one kernel. */
typedef struct byocl_host_group {
    int n_nodes;
    int *nodes;                /* node ids, ascending (topological) */
    int n_inputs;
    byocl_value_ref *inputs;   /* values read from outside the group, in kernel arg order */
    int n_outputs;
    byocl_value_ref *outputs;  /* values of the group used outside it, in kernel arg order */
    char name[64];             /* e.g. "fused_nn_conv2d_add_nn_relu_3" (profiles, errors) */
    double flops;              /* arithmetic of the group (2 per multiply-add) */
} byocl_host_group;

/* A compiled kernel. `args` holds the data pointers of the group's inputs, then its outputs
 * (C-order tensors with the types the nodes have). The work is split into `n_tasks`
 * independent chunks; the executor's thread pool calls the kernel once per task index in
 * [0, n_tasks) (any order, possibly concurrently). Returns 0, or non-zero when the data
 * make the computation fail (integer division by zero); the backend's `error` member
 * then says what happened. */
typedef int32_t (*byocl_host_kernel_fn)(void *const *args, int64_t task, void *ctx);

typedef struct byocl_host_kernel {
    byocl_host_kernel_fn fn;
    void *ctx;          /* constant per-kernel data (e.g. packed weights), owned by the backend */
    int64_t n_tasks;    /* >= 1 */
} byocl_host_kernel;

typedef struct byocl_host_backend_options {
    int threads;        /* the executor's pool size; a backend may size n_tasks from it */
    int opt_level;      /* 0..3 */
    /* Where a backend may cache compiled code (runtime/base/cache.h): NULL is the default
     * folder ($BYOCL_CACHE_DIR, $XDG_CACHE_HOME/byocl, $HOME/.cache/byocl), "" none. */
    const char *cache_dir;
} byocl_host_backend_options;

typedef struct byocl_host_backend_i {
    const char *name;   /* "llvm", "ref" */
    /* Groups the nodes listed in `compute` (op calls of fn that run on the host) into fusion
     * groups, in an order that respects dependencies; *groups is malloc'ed. */
    byocl_status (*group)(const byocl_function *fn, const int *compute, int n_compute,
                          byocl_host_group **groups, int *n_groups, byocl_error *err);
    /* Compiles every group at once (one module for all, where the backend can). Fills
     * kernels[i] for groups[i]; *state keeps whatever the kernels need alive. */
    byocl_status (*compile)(const byocl_function *fn, const byocl_host_group *groups,
                            int n_groups, const byocl_host_backend_options *opt,
                            byocl_host_kernel *kernels, void **state, byocl_error *err);
    void (*release)(void *state);
    /* Optional: a message for the last failing kernel of `state` (thread-safe enough for
     * the executor, which stops at the first failure). */
    const char *(*error)(void *state);
} byocl_host_backend_i;

void host_groups_free(byocl_host_group *groups, int n_groups);

/* (host_backend.c) The arithmetic of one op call of fn,
 * for group flops: 2 per multiply-add for nn.conv2d and nn.dense, one per window cell
 * for pooling and means, one per output element for elementwise ops (two for batch_norm,
 * three for softmax and log_softmax, seven for layer_norm), 0 for ops that only move or
 * convert data. */
double host_node_flops(const byocl_function *fn, int node);
/* (Added by the executor.) The tensor type of a value: the node's type for field -1, else
 * the field's (depth-first over nested tuples); NULL when there is no such tensor. */
const byocl_type *host_value_ref_type(const byocl_function *fn, byocl_value_ref v);

/* The "ref" host backend (host_backend_ref.c): one kernel per op, the ops' C kernels. */
extern const byocl_host_backend_i host_backend_ref;

#endif
