/* byocl: a module's @main as a Graphviz graph (`dot -Tsvg main.dot -o main.svg`).
 *
 * Each parameter is an ellipse and each other node of @main a box labeled with its number
 * as `byocl print` shows it, its op and its type ("%3 = nn.relu" / "Tensor[(1, 64, 56, 56),
 * float32]"); edges run from each value to its users. Constants (weights, scalar literals)
 * are not drawn. Regions are clusters filled with their target's color (the same color for
 * a target name on every graph):
 *  - in a partitioned module, each call of a function (`%3 = @opencl_main_0(...)`) is a
 *    cluster labeled with the call and the function's Compiler attribute, holding the
 *    function's own parameters and nodes (numbered as `byocl print` numbers that function);
 *  - in an annotated module, each region between compiler_begin and compiler_end (as the
 *    partition pass sees them) is a cluster labeled "region N: <target>". Annotations the
 *    region analysis rejects are reported in a comment at the top, and no region is drawn. */
#ifndef BYOCL_DOT_H
#define BYOCL_DOT_H

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Graphviz text of @main of `m`, malloc'ed (caller frees), or NULL with err set. */
char *byocl_dot(const byocl_module *m, byocl_error *err);

/* Writes byocl_dot's text to `path` (to a temporary name, then renamed: the file appears
 * whole or not at all). */
byocl_status byocl_dot_save(const byocl_module *m, const char *path, byocl_error *err);

/* The fill color that regions of target `name` get: "#rrggbb" from a fixed palette, chosen
 * by a hash of the name. */
const char *byocl_dot_target_color(const char *name);

#ifdef __cplusplus
}
#endif
#endif
