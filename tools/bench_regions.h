/* Which region each op call of a model's @main lands in when @main is partitioned for a
 * region target, so that byocl bench can put the steps of the host-only build (whose
 * nodes are @main's own) beside the region calls of the offloaded build.
 *
 * bench_regions_annotate annotates a copy of @main the way the partitioning pipeline does
 * (annotate_target unless the model brings its own annotations, check_annotations,
 * merge_regions) and takes its regions from the analysis partition uses
 * (byocl_regions_of_nodes, docs/partitioning.md): regions are numbered in order of their
 * first compiler_begin, which is the <n> of the @<target>_main_<n> functions partition
 * makes. Annotating only
 * inserts annotation nodes (and, for tuple values crossing a boundary, Tuple/TupleGetItem
 * nodes), so the k-th op call of the annotated @main is the k-th op call of the original:
 * the map is checked op by op. */
#ifndef BYOCL_BENCH_REGIONS_H
#define BYOCL_BENCH_REGIONS_H

#include "byocl/byocl.h"

typedef struct bench_regions {
    int n_nodes;      /* nodes of the original @main */
    int *region_of;   /* per node of the original @main: its region, -1 for the host (and
                         for everything that is not an op call) */
    int n_regions;
    int *n_ops;       /* per region: its op calls */
    int n_host_ops;   /* op calls outside every region */
    byocl_module *annotated; /* the annotated copy, for the offloaded build to partition */
} bench_regions;

/* Fills `out` for @main of `m` (not changed) and region target `target`, the regions that
 * `policy` (may be NULL) keeps on the host left out (byocl_keep_regions_on_host). Errors: a model
 * already partitioned (functions with a Compiler attribute: its @main has no region nodes
 * to map), the passes' errors. */
byocl_status bench_regions_annotate(const byocl_module *m, const char *target,
                                    const byocl_offload_policy *policy, bench_regions *out,
                                    byocl_error *err);
void bench_regions_free(bench_regions *r);

#endif
