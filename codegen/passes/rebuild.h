/* Rebuilding @main node by node: the shape shared by the passes that rewrite @main's
 * annotations (annotate_target, annotate_range, check_annotations --complete,
 * merge_regions, partition).
 *
 * A fresh function is started under a temporary name next to the old one; the pass
 * appends copies of old nodes (arguments renumbered through `map`) and new nodes; finish
 * gives it the old one's parameters (renumbered), attributes and return type, re-infers
 * the module's types and puts it in the old one's place. On any error, abort leaves the
 * module as it was. */
#ifndef BYOCL_PASSES_REBUILD_H
#define BYOCL_PASSES_REBUILD_H

#include "ir/ir_impl.h"

/* The function these passes work on. */
#define BYOCL_PASS_MAIN "main"

/* *out = @main of `m`. Errors: "<pass>: no module" when m is NULL, "no function @main in
 * the module". */
byocl_status pass_find_main(const byocl_module *m, const char *pass, byocl_function **out,
                            byocl_error *err);

typedef struct byocl_rebuild {
    byocl_module *mod;
    const byocl_function *old;
    byocl_function *fresh;
    int *map; /* old node id -> fresh node id, -1 until copied */
} byocl_rebuild;

byocl_status pass_rebuild_begin(byocl_rebuild *rb, byocl_module *m, const byocl_function *old,
                                const char *pass, byocl_error *err);
/* Appends a copy of old node `id` whose arguments are `args` (fresh ids), or the old
 * arguments renumbered through map when `args` is NULL (each must be copied already).
 * Records map[id]. Returns the fresh id or -1. */
int pass_rebuild_copy(byocl_rebuild *rb, int id, const int *args, byocl_error *err);
/* Appends `op`(arg, compiler="<compiler>") to `fn`, where op is
 * "annotation.compiler_begin" or "annotation.compiler_end". Returns its id or -1. */
int pass_add_annotation(byocl_function *fn, const char *op, int arg, const char *compiler,
                        byocl_error *err);
/* Parameters of the old function that were not copied are appended; the parameter order
 * is the old one's either way. Frees the rebuild, also on an error (after an abort). */
byocl_status pass_rebuild_finish(byocl_rebuild *rb, int body, byocl_error *err);
void pass_rebuild_abort(byocl_rebuild *rb);

#endif
