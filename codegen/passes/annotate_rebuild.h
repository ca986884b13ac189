/* Shared by annotate_target and annotate_range: who uses each node, and the rebuild of
 * @main (rebuild.h) that puts annotation.compiler_begin/compiler_end on every edge that
 * enters or leaves a region. */
#ifndef BYOCL_ANNOTATE_REBUILD_H
#define BYOCL_ANNOTATE_REBUILD_H

#include "rebuild.h"

/* BYOCL_ERR_NOMEM, "out of memory annotating @main". */
byocl_status pass_annotate_nomem(byocl_error *err);

/* The users of every node: node id's users are list[start[id] .. start[id + 1]), in
 * increasing id order (a node that uses a value twice is listed twice). */
typedef struct byocl_users {
    int *start;
    int *list;
} byocl_users;

byocl_status pass_users_build(const byocl_function *fn, byocl_users *users, byocl_error *err);
void pass_users_free(byocl_users *users);

/* Which region each node of @main belongs to. Regions are numbered 0..n_regions-1; each
 * has one target (an index into target_names). Every region must be convex (no path
 * leaves it and comes back); the callers make sure of that. */
typedef struct byocl_region_plan {
    const int *region_of;     /* per node: its region, or -1 (host, params, constants) */
    const int *region_target; /* per region: index into target_names */
    const char *const *target_names;
    int n_targets;
} byocl_region_plan;

/* Replaces @main (`fn`, type-checked) by a copy in which:
 * - every value that flows into region R from outside it (a parameter, a constant, a host
 *   node, a node of another region) goes through one compiler_begin(compiler=target of R),
 *   shared by all of R's nodes that use it and placed just before the first of them;
 * - every value of region R used outside it or returned goes through a compiler_end
 *   (compiler=target of R), placed just after the value: one per (value, consumer
 *   target), where the host (and the function's result) is one consumer target, so all
 *   host users share one compiler_end; a node of another region takes its compiler_begin
 *   on that compiler_end;
 * - a tuple-typed value that crosses a boundary is taken apart: each field goes through
 *   its own annotation (annotations take tensors only) and a Tuple puts them back.
 * Binding names, parameter order and function attributes are kept; the new function is
 * type-checked before it takes @main's place. On an error the module is left as it was. */
byocl_status pass_annotate_rebuild(byocl_module *m, const byocl_function *fn,
                                   const byocl_region_plan *plan, byocl_error *err);

#endif
