/* Region analysis of an annotated function (TVM's AnnotatedRegionSet), shared by the
 * annotation checks, merge_regions, partition and the Graphviz view.
 *
 * Walking the nodes in order: each annotation.compiler_begin starts a region of its
 * compiler; a call, tuple or tuple item whose arguments come from regions joins them
 * (several regions of one compiler meeting at a node become one region); a
 * compiler_end closes its argument's region: the end node belongs to the region, the
 * value it gives is outside. Vars, host calls and compiler_end values are outside every
 * region. Constants belong to no region but may be used inside one without a
 * compiler_begin (they have no producer to cut): partition binds them into the region.
 * The function's result is never inside a region: a result (or a field of a result
 * tuple) computed in a region must leave it through a compiler_end.
 *
 * Regions are numbered 0, 1, ... in order of first appearance (their first
 * compiler_begin). */
#ifndef BYOCL_PASSES_REGIONS_H
#define BYOCL_PASSES_REGIONS_H

#include <stdbool.h>

#include "ir/ir_impl.h"

/* A value that lacks an annotation, found in lenient mode (see below). */
typedef struct byocl_region_gap {
    int node;   /* the node that uses the value */
    int arg;    /* which argument of `node`; -1: `node` itself (the function's result) */
    int region; /* the region concerned (final numbering) */
    bool end;   /* true: the value leaves `region` for the result without a compiler_end;
                   false: an outside value enters `region` without a compiler_begin */
} byocl_region_gap;

typedef struct byocl_regions {
    int n_nodes;
    int n_regions;
    /* Per node id: its region, or -1 for the host. Annotation nodes belong to their
     * region; constants are -1 even when a region uses them. */
    int *region_of;
    /* Per region: its compiler (the target's name), owned by the function's module. */
    const char **target;
    /* Per region: its compiler_begin nodes and its compiler_end nodes, in node order. */
    int *n_inputs;
    int **inputs;
    int *n_outputs;
    int **outputs;
    /* Lenient mode only: the values lacking a compiler_begin or compiler_end. */
    int n_gaps;
    byocl_region_gap *gaps;
} byocl_regions;

/* Fills `out` for `fn` (types not needed). Errors name the node: a call mixing region
 * values with outside values (the argument lacking a compiler_begin), a result leaving a
 * region without compiler_end, a compiler_end of a value outside every region, a
 * compiler_end whose compiler differs from its region's, a compiler_begin of a value
 * already inside a region, a node joining regions of different compilers. On failure
 * `out` holds nothing to release. */
byocl_status pass_regions_analyze(const byocl_function *fn, byocl_regions *out,
                                  byocl_error *err);
/* The same, except that a missing compiler_begin or compiler_end is recorded in
 * out->gaps (and the analysis goes on as if it were there) instead of failing. */
byocl_status pass_regions_analyze_lenient(const byocl_function *fn, byocl_regions *out,
                                          byocl_error *err);
void pass_regions_release(byocl_regions *r);

/* Checks that every region is convex: no path leaves a region (through its
 * compiler_end, host nodes or other regions) and comes back into it, which would make the
 * partitioned region depend on itself. The error names the nodes on such a path. */
byocl_status pass_regions_check_convex(const byocl_function *fn, const byocl_regions *r,
                                       byocl_error *err);

/* The annotation ops, and whether node `id` is a call of compiler_begin, of
 * compiler_end, or of either. */
#define BYOCL_COMPILER_BEGIN "annotation.compiler_begin"
#define BYOCL_COMPILER_END "annotation.compiler_end"
bool pass_is_compiler_begin(const byocl_function *fn, int id);
bool pass_is_compiler_end(const byocl_function *fn, int id);
bool pass_is_annotation(const byocl_function *fn, int id);
/* Its compiler attribute ("" when absent). */
const char *pass_annotation_compiler(const byocl_function *fn, int id);

/* The root of x in a union-find forest (parent[root] == root), halving the path. */
int pass_uf_find(int *parent, int x);

/* How messages describe a value: "%3, nn.conv2d", "%data, a parameter", "a constant",
 * "%8, a tuple item", "%4, a tuple", "%2, @f"; with " at L:C" when the text gave a
 * position. Returns buf. */
char *pass_region_describe(const byocl_function *fn, int id, char *buf, size_t len);

#endif
