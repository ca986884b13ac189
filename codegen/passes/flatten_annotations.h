/* The annotations as TVM's passes print them, in the form partition works on: the first
 * step of partition, as RemoveDefaultAnnotations and FlattenTupleOutputs are the first
 * steps of TVM's PartitionGraph.
 *
 * - compiler="default" marks what stays on the host: those annotations go, their users
 *   take the annotated value;
 * - a compiler_begin/compiler_end of a tuple is one per field (a constant field of a
 *   compiler_end gets none: it belongs to no region), put back together by a Tuple, so
 *   that a region takes and gives tensors; an item of such an annotation is the field's
 *   annotation itself;
 * - what only fed the rewritten annotations and is now unused goes.
 * Call it on @main once its annotations have passed region analysis. */
#ifndef BYOCL_PASSES_FLATTEN_ANNOTATIONS_H
#define BYOCL_PASSES_FLATTEN_ANNOTATIONS_H

#include <stdbool.h>

#include "ir/ir_impl.h"

/* TVM's compiler name for "stays on the host". */
#define BYOCL_COMPILER_DEFAULT "default"

/* Whether @main (`fn`, typed) has a compiler="default" or a tuple-typed annotation. */
bool pass_annotations_need_flattening(const byocl_function *fn);
/* Replaces @main (`fn`, typed) by its flattened copy. On an error in the first rebuild
 * the module is left as it was. */
byocl_status pass_flatten_annotations(byocl_module *m, const byocl_function *fn,
                                      byocl_error *err);

#endif
