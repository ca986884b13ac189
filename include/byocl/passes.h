/* byocl: passes over modules. Each one is a function of its own file in codegen/passes/. */
#ifndef BYOCL_PASSES_H
#define BYOCL_PASSES_H

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills every node's type through the ops' type relations, callees before callers.
 * Errors name the function, the node (as `byocl print` numbers it) and the op. */
byocl_status byocl_infer_types(byocl_module *m, byocl_error *err);

/* Checks that the module is well formed: a body in every function, argument ids in range
 * and earlier than their user, known ops with valid attributes and arity, callees that
 * exist with matching arity, unique parameter names, no recursion, and (when
 * `require_types`) every node typed. Errors name the function and node. */
byocl_status byocl_verify(const byocl_module *m, bool require_types, byocl_error *err);

/* Binds parameters of `@main` by name to constant tensors (TVM's bind_params_by_name):
 * each bound parameter disappears from the parameter list and its uses see the constant.
 * A name that is not a parameter, or a tensor whose dtype/shape differs from the
 * parameter's type, is an error. */
byocl_status byocl_bind_params(byocl_module *m, const char *const *names,
                               byocl_tensor *const *values, int n, byocl_error *err);

/* Evaluates what @main can compute when it compiles (TVM's FoldConstant): each call of
 * an op whose arguments are all constants (or tuples of constants) runs its reference
 * kernel and becomes a constant, and shape_of of any value becomes its static shape, so
 * chains of shape arithmetic collapse; results over 1 MiB stay calls. Nodes nothing uses
 * any more are dropped. A kernel error (an index out of range in constant data) names
 * the node. Types are inferred first. */
byocl_status byocl_fold_constants(byocl_module *m, byocl_error *err);

/* ------------------------------------------------ annotation and partitioning
 * These passes work on @main, in TVM BYOC's order: annotate (by op support, by node range,
 * or by hand in the text), check the annotations, merge regions, partition. A region is a
 * set of calls of @main bounded by annotation.compiler_begin on every value that flows in
 * and annotation.compiler_end on every value that flows out. */

/* Each call of @main goes to the first target (in the given priority order, names of
 * registered targets, see target.h) whose `supports` accepts it; the others stay on the
 * host. compiler_begin/compiler_end go on every edge where the target changes (also on
 * parameters, constants and @main's result). Existing annotations are an error. */
byocl_status byocl_annotate_target(byocl_module *m, const char *const *targets, int n_targets,
                                   byocl_error *err);

/* Called once per call that annotate_target would leave on the host, with each target's
 * reason ("opencl: layout NHWC is not supported; mytarget: op not supported"). */
typedef void (*byocl_explain_fn)(void *user, const byocl_function *fn, int node,
                                 const char *reason);
byocl_status byocl_annotate_explain(const byocl_module *m, const char *const *targets,
                                    int n_targets, byocl_explain_fn report, void *user,
                                    byocl_error *err);

/* The nodes of `range` in @main become one region of `target`: every value that flows in
 * from outside (parameters, constants, outputs of other nodes), whichever node of the
 * range uses it, gets a compiler_begin; every value used outside the range or returned
 * gets a compiler_end. A range that is not convex (a path leaves it and comes back) is an
 * error naming the nodes on that path. `range` is "A:B" with each end written as
 * `byocl print` names the node (%78, %x0, an ONNX node's name; the '%' may be left out),
 * or #N in byocl's own numbering (the %N of `byocl print --renumber`); a bare number
 * means the file's %N when @main has bindings named by numbers, else byocl's #N, and is
 * an error that shows both readings when both exist and differ (docs/partitioning.md). */
byocl_status byocl_annotate_range_spec(byocl_module *m, const char *range, const char *target,
                                       byocl_error *err);
/* The same with bare numbers: the range "first:last". */
byocl_status byocl_annotate_range(byocl_module *m, int first, int last, const char *target,
                                  byocl_error *err);
/* Whether `range` is spelled as annotate_range reads it (A:B, both ends present, A <= B
 * where both are numbers of one kind); says nothing about the nodes. */
bool byocl_annotate_range_spelled(const char *range);

/* Checks hand-written annotations of @main: a call whose arguments mix region values and
 * unannotated outside values is an error naming the node, its op and the argument that
 * lacks a compiler_begin (with a hint); with `complete`, the missing compiler_begins are
 * inserted instead. A compiler_end outside any region and mismatched compiler names are
 * errors too. */
byocl_status byocl_check_annotations(byocl_module *m, bool complete, byocl_error *err);

/* Merges adjacent regions of the same target (a compiler_end feeding a compiler_begin of
 * the same compiler) unless the merge would create a cycle through host nodes. */
byocl_status byocl_merge_regions(byocl_module *m, byocl_error *err);

/* The region of each node of `fn`, an annotated function, as check_annotations,
 * merge_regions and partition see it: region_of[id] is its region's number (0, 1, ... in
 * order of each region's first compiler_begin; compiler_begin and compiler_end nodes
 * belong to their region), or -1 outside every region (host nodes, parameters,
 * constants). region_of has room for byocl_function_num_nodes(fn) ints. The errors are
 * byocl_check_annotations's (without `complete`). */
byocl_status byocl_regions_of_nodes(const byocl_function *fn, int *region_of, int *n_regions,
                                    byocl_error *err);

/* Cost-based offload (the keep_on_host pass, after merge_regions). */

/* One region's figures in a profile: `byocl bench --json`'s regions[]. */
typedef struct byocl_region_timing {
    const char *symbol;  /* "<target>_main_<n>", as partition names the region */
    double host_ms;      /* its nodes' time in the host build */
    double offloaded_ms; /* its time offloaded */
} byocl_region_timing;

/* What byocl_keep_regions_on_host says of each region it keeps on the host: its first
 * call (`first`, a node of @main `fn`), its target, number of ops and estimated FLOPs,
 * and why ("under the minimum of 5000 FLOPs", "opencl_main_3 took 0.21 ms offloaded
 * against 0.12 ms on the host in the profile"). */
typedef void (*byocl_kept_region_fn)(void *user, const byocl_function *fn, int first,
                                     const char *target, int n_ops, double flops,
                                     const char *why);

typedef struct byocl_offload_policy {
    /* Regions of fewer estimated FLOPs (byocl_split_node_flops summed over their calls)
     * stay on the host; 0: none. */
    double min_flops;
    /* A profile of the same model, targets and options (byocl_offload_profile_read):
     * regions that took longer offloaded than on the host stay on the host. Every
     * region must be in it and every entry must be a region; n_profile 0: none. */
    const byocl_region_timing *profile;
    int n_profile;
    byocl_kept_region_fn report; /* may be NULL */
    void *user;
} byocl_offload_policy;

/* Keeps the regions of @main (annotated, merged) that the policy says do not pay on the
 * host: their annotations become compiler="default", which partition removes. A policy
 * of no minimum and no profile changes nothing; a negative, infinite or NaN minimum, and
 * a profile that does not match the regions, are errors. */
byocl_status byocl_keep_regions_on_host(byocl_module *m, const byocl_offload_policy *policy,
                                        byocl_error *err);

/* Reads the regions[] of a `byocl bench --json` file (name, host_ms, offloaded_ms) into
 * *out (n entries; free with byocl_offload_profile_free). Errors name the file and the
 * entry. */
byocl_status byocl_offload_profile_read(const char *path, byocl_region_timing **out, int *n,
                                        byocl_error *err);
void byocl_offload_profile_free(byocl_region_timing *profile, int n); /* NULL is fine */

typedef struct byocl_partition_options {
    /* Pass constants used by a region as arguments instead of binding them inside it. */
    bool constants_as_args;
} byocl_partition_options;

/* Each region of @main becomes a function with Compiler="<target>",
 * global_symbol="<target>_main_<n>", Primitive=1, Inline=1 and parameters named
 * "<target>_<n>_i<k>"; @main calls it. A region with several outputs returns a tuple once
 * and its users take items. `opt` may be NULL (defaults). */
byocl_status byocl_partition(byocl_module *m, const byocl_partition_options *opt,
                             byocl_error *err);

/* A partitioned region (by global symbol, e.g. "opencl_main_0", or by its index n) as a
 * standalone module whose @main is that region without the Compiler attributes; its
 * parameters are named after the original values they receive. */
byocl_status byocl_extract(const byocl_module *m, const char *region, byocl_module **out,
                           byocl_error *err);

/* What a parameter of an extracted region receives in the partitioned @main: `param` is
 * its name in the extracted @main (no '%'), `source` the value as `byocl print` shows
 * @main: "%data", "%1 (add)", "%2 (%1.0)", "a constant Tensor[(16), float32]". The naming
 * rule is in docs/partitioning.md. */
typedef struct byocl_extract_input {
    char *param;
    char *source;
} byocl_extract_input;

/* byocl_extract, also returning one byocl_extract_input per parameter of the extracted
 * @main (in order; free with byocl_extract_inputs_free). */
byocl_status byocl_extract_with_inputs(const byocl_module *m, const char *region,
                                       byocl_module **out, byocl_extract_input **inputs,
                                       int *n_inputs, byocl_error *err);
void byocl_extract_inputs_free(byocl_extract_input *inputs, int n);

#ifdef __cplusplus
}
#endif
#endif
