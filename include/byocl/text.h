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
    /* Number the bindings from %0 (byocl's own numbering, #N) instead of keeping the
     * source's binding names that are numbers (%78); names like %x0 stay either way. */
    bool renumber;
} byocl_print_options;

/* Prints the module. Non-scalar constants are numbered in order of appearance; when
 * `meta_out` is not NULL they are added to it as "relay.Constant.K"; with
 * BYOCL_METADATA_INLINE the text ends with a #[metadata] section that holds them.
 * Returns a malloc'ed string (caller frees) or NULL with err set. */
char *byocl_text_print(const byocl_module *m, const byocl_print_options *opt,
                       byocl_params *meta_out, byocl_error *err);

/* The number `byocl print` shows for node `id` of `fn` (%N), or -1 when the node has no
 * number (vars, constants, bindings printed with the source's name such as %78 or %x0,
 * the body printed inline). Numbers skip the names kept. */
int byocl_text_node_number(const byocl_function *fn, int id);
/* The numbers of all nodes of fn at once (-1 where none), indexed by node id: what a
 * caller that numbers every node uses, since each byocl_text_node_number call walks the
 * whole function. A malloc'ed array (caller frees); NULL when out of memory. */
int *byocl_text_node_numbers(const byocl_function *fn);
/* How messages name node `id` (byocl_node_label): as `byocl print` shows it, by the
 * source's name where the printer keeps it ("%78", "%x0", "%data"), else by its number
 * ("%12"); a source name the printer cannot keep for its characters is quoted before
 * that number ("'/a.0/Conv' (%12)"); else "a constant" or "the result". Returns buf. */
char *byocl_text_node_label(const byocl_function *fn, int id, char *buf, size_t len);
/* byocl's own numbering (#N): the numbers `byocl print` shows with renumber, where the
 * source's numeric binding names (%78) are not kept. Same layout as above. */
int *byocl_text_node_own_numbers(const byocl_function *fn);
/* The node id `byocl print` shows as %N (by byocl's number or the source's), or -1. */
int byocl_text_node_by_number(const byocl_function *fn, int number);

/* Parses an attribute list in the text syntax ("strides=[2, 2], channels=64") into `out`
 * (storage in m). Used by byocl_function_add_call_str. */
byocl_status byocl_text_parse_attrs(byocl_module *m, const char *text, byocl_attrs *out,
                                    byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
