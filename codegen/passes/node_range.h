/* node_range: a --range "A:B" of @main's nodes, as the user writes it, resolved to the
 * nodes it covers (docs/partitioning.md, "Annotating a node range").
 *
 * Each end is one of
 *   %NAME   the binding `byocl print` shows as %NAME: the file's own name (%78, %x0, an
 *           ONNX node's name) or, for a node the source did not name, byocl's number;
 *   #N      byocl's own numbering: the %N of `byocl print --renumber`;
 *   N       a bare number: the file's %N when the function has bindings named by
 *           numbers, else byocl's numbering; where both readings name nodes and they
 *           differ, the range is ambiguous (an error that shows both);
 *   NAME    a bare name: %NAME.
 * Members: with both ends #N, the nodes numbered A..B; with both ends numbers in the
 * file's names, the nodes from the first end to the last whose names are numbers in
 * A..B, and those the source did not name (calls written inline); otherwise every node
 * from the first end to the last. Parameters and constants are never members. */
#ifndef BYOCL_PASSES_NODE_RANGE_H
#define BYOCL_PASSES_NODE_RANGE_H

#include <stdbool.h>

#include "ir/ir_impl.h"

typedef struct byocl_node_range {
    int id_first, id_last; /* the ends' node ids */
    char what[224];        /* how messages name the range: "range %75..%82" */
} byocl_node_range;

/* Whether `spec` is spelled as a range: "A:B" with both ends present and, where both are
 * numbers of the same kind, A <= B. Says nothing about the nodes. */
bool pass_node_range_spelled(const char *spec);

/* Resolves `spec` in `fn`: fills `out` and member[0..n_nodes) (true for members). Errors
 * say which end is missing and what the function's nodes are called, or show both
 * readings of an ambiguous bare range. */
byocl_status pass_node_range_resolve(const byocl_function *fn, const char *spec,
                                     byocl_node_range *out, bool *member, byocl_error *err);

#endif
