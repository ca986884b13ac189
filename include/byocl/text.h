/* byocl: TVM Relay's text format, parsed and printed.
 *
 * Tensor constants that are not scalars print as `meta[relay.Constant][K]`; their values
 * go to a parameter file (.npz) under the member name "relay.Constant.K" (see
 * tensor_io.h), or into a `#[metadata]` section after the text, as TVM's `mod.astext()`
 * writes them. Parsing takes either back. */
#ifndef BYOCL_TEXT_H
#define BYOCL_TEXT_H

#include <stdio.h>
#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct byocl_params byocl_params; /* named tensors, see tensor_io.h */

/* Parses Relay text. `filename` appears in errors as "file:line:col: ...". The tensor that
 * `meta[relay.Constant][K]` refers to is the member "relay.Constant.K" of `meta` (may be
 * NULL), else constant K of the text's `#[metadata]` section (TVM's JSON, read when the
 * text refers to a meta constant): where both have it, `meta` wins. A `ty=` comment after
 * a meta constant must match its dtype and shape. The result is not type-checked: run
 * byocl_infer_types. */
byocl_status byocl_text_parse(const char *text, size_t len, const char *filename,
                              const byocl_params *meta, byocl_module **out, byocl_error *err);
byocl_status byocl_text_parse_file(const char *path, const byocl_params *meta,
                                   byocl_module **out, byocl_error *err);

/* Where printing puts the values of tensor constants. */
typedef enum byocl_metadata_mode {
    BYOCL_METADATA_NPZ = 0, /* in `meta_out` only (the .npz beside the text)           */
    BYOCL_METADATA_INLINE   /* in a #[metadata] section after the text, as TVM does    */
} byocl_metadata_mode;

typedef struct byocl_print_options {
    bool show_types; /* end each binding with a "ty=TYPE" comment, as TVM does */
    byocl_metadata_mode metadata;
} byocl_print_options;

/* Prints the module. Non-scalar constants are numbered in order of appearance; when
 * `meta_out` is not NULL they are added to it as "relay.Constant.K"; with
 * BYOCL_METADATA_INLINE the text ends with a #[metadata] section that holds them.
 * Returns a malloc'ed string (caller frees) or NULL with err set. */
char *byocl_text_print(const byocl_module *m, const byocl_print_options *opt,
                       byocl_params *meta_out, byocl_error *err);

/* The number `byocl print` shows for node `id` of `fn` (%N), or -1 when the node has no
 * number (vars, constants, named bindings, the body printed inline). */
int byocl_text_node_number(const byocl_function *fn, int id);
/* The numbers of all nodes of fn at once (-1 where none), indexed by node id: what a
 * caller that numbers every node uses, since each byocl_text_node_number call walks the
 * whole function. A malloc'ed array (caller frees); NULL when out of memory. */
int *byocl_text_node_numbers(const byocl_function *fn);
/* The inverse: the node id printed as %N, or -1. */
int byocl_text_node_by_number(const byocl_function *fn, int number);

/* Parses an attribute list in the text syntax ("strides=[2, 2], channels=64") into `out`
 * (storage in m). Used by byocl_build_call_str. */
byocl_status byocl_text_parse_attrs(byocl_module *m, const char *text, byocl_attrs *out,
                                    byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
