/* byocl: the partitioning pipeline, written once for the CLI and the C API.
 *
 *   annotate (by op support | by node range | the module's own annotations)
 *     -> check_annotations (--complete inserts the missing compiler_begins)
 *     -> merge_regions (unless no_merge)
 *     -> partition
 *
 * Each pass can dump the module it produced. */
#ifndef BYOCL_PIPELINE_H
#define BYOCL_PIPELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "byocl/ir.h"

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

/* The pass names --dump-after accepts, by index (NULL past the end): "annotate_target",
 * "annotate_range", "check_annotations", "merge_regions", "partition". */
const char *byocl_pipeline_pass_name(int index);

#ifdef __cplusplus
}
#endif
#endif
