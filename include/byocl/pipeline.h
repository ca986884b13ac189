/* byocl: compiling a model, written once for the CLI and the C API.
 *
 *   byocl_compile: a loaded module -> a compiled model (runtime.h), in one call:
 *     the partitioning pipeline, when targets or a node range are given:
 *       annotate (by op support | by node range | the module's own annotations)
 *         -> check_annotations (--complete inserts the missing compiler_begins)
 *         -> merge_regions (unless no_merge)
 *         -> partition
 *     then byocl_build: every other op for the host backend, each region by its target.
 *
 * Each pass can dump the module it produced. */
#ifndef BYOCL_PIPELINE_H
#define BYOCL_PIPELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "byocl/ir.h"
#include "byocl/passes.h"
#include "byocl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct byocl_pipeline_options {
    /* Annotate by op support for these registered targets, in priority order
     * (byocl_annotate_target). n_targets 0: no annotation by op support. */
    const char *const *targets;
    int n_targets;
    /* Annotate nodes %range_first..%range_last of @main as one region of range_target
     * (byocl_annotate_range) when range_target is not NULL. Exclusive with targets.
     * When `range` is set ("%75:%82", see byocl_annotate_range_spec), it is used instead
     * of range_first and range_last. */
    const char *range_target;
    int range_first, range_last;
    const char *range;
    /* check_annotations inserts missing compiler_begins instead of failing. */
    bool complete;
    /* Skip merge_regions. */
    bool no_merge;
    /* Pass constants used by a region as arguments (byocl_partition_options). */
    bool constants_as_args;
    /* Which regions stay on the host for their cost (byocl_keep_regions_on_host, the pass
     * keep_on_host after merge_regions); zeroed: all are offloaded. */
    byocl_offload_policy offload;
    /* Print the module (typed Relay text) after the pass of this name, or after every
     * pass with "all"; NULL for none. Names: see byocl_pipeline_pass_name. */
    const char *dump_after;
    FILE *dump; /* where dumps go; NULL: stderr */
} byocl_pipeline_options;

/* Runs the pipeline on `m` (typed or not). Without targets and range, the module's own
 * annotations are checked and partitioned (a module without any is left as it was, its
 * types inferred). On failure the error names the pass ("merge_regions: ...") and `m` is
 * left as the last pass that succeeded made it. */
byocl_status byocl_pipeline_partition(byocl_module *m, const byocl_pipeline_options *opt,
                                      byocl_error *err);

/* The pass names --dump-after accepts, by index (NULL past the end): "fold_constants",
 * "annotate_target", "annotate_range", "check_annotations", "merge_regions",
 * "keep_on_host", "partition". */
const char *byocl_pipeline_pass_name(int index);

/* ------------------------------------------------------------------ compile */

typedef struct byocl_compile_options {
    /* How @main is partitioned: region targets in priority order (annotation by op
     * support) or a node range, the checks, merging and dumps. A module that brings its
     * own regions (compiler_begin annotations in @main, or functions with a Compiler
     * attribute) keeps them: the targets then annotate nothing. With neither targets nor
     * a range, the module is built as it is (regions it has run in their targets'
     * modules), its constants folded as byocl_build folds them. */
    byocl_pipeline_options partition;
    /* How the rest is built and the regions compiled: the host backend ("host" or "ref"),
     * threads, optimization level, fallback, the targets' own options. build.fn_name is
     * ignored (NULL means @main) when the module is partitioned: a region target always
     * builds @main. */
    byocl_build_options build;
} byocl_compile_options;

/* No targets, no range; byocl_build_options_default for the build. */
byocl_compile_options byocl_compile_options_default(void);

/* Whether `m` brings its own regions: compiler_begin annotations in @main, or functions
 * with a Compiler attribute. */
bool byocl_module_has_regions(const byocl_module *m);

/* Compiles `m` (typed or not; not changed, may be freed afterwards) for `opt` (NULL: the
 * defaults): registers the built-in targets, checks the target options, partitions a copy
 * when targets or a range are given, and builds it. An error names the step
 * ("merge_regions: ...", "target option opencl.device: ..."). */
byocl_status byocl_compile(const byocl_module *m, const byocl_compile_options *opt,
                           byocl_compiled **out, byocl_error *err);

/* The first half of byocl_compile: a copy of `m` partitioned as byocl_compile would
 * (*out: the caller frees it). For programs that look at the regions before building:
 * byocl_compile of the result builds it without partitioning again. */
byocl_status byocl_compile_partition(const byocl_module *m, const byocl_compile_options *opt,
                                     byocl_module **out, byocl_error *err);

/* Writes what each region target makes of the regions of `m` (functions with a Compiler
 * attribute; `m` need not be typed), for a person to read, into the existing folder `dir`:
 * the emit member of each region's target (the OpenCL target: <symbol>.cl and
 * <symbol>.launch.txt), with that target's options from `options` (may be NULL).
 * Regions of targets without emit are left out. *n_regions (may be NULL) receives how
 * many regions were written. */
byocl_status byocl_emit_regions(const byocl_module *m, const char *dir,
                                const byocl_target_options *options, int *n_regions,
                                byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
