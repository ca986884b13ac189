/* byocl: loading and saving models. The one entry point that the CLI and the C API share,
 * so that a model reaches the passes the same way whoever asks for it. */
#ifndef BYOCL_FRONTEND_H
#define BYOCL_FRONTEND_H

#include "byocl/ir.h"
#include "byocl/text.h"
#include "byocl/tensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the model that `spec` names and returns it typed and verified:
 *   "builtin:NAME"  a built-in model (see models.h);
 *   "PATH.onnx"     an ONNX model (opsets 7 to 18; docs/onnx.md lists the ops): @main's
 *                   parameters are the graph's inputs that are not initializers, named
 *                   by byocl_onnx_relay_name; initializers become constants;
 *   any other path  a Relay text file.
 * `params` (may be NULL) holds named tensors, as read from an .npz: members named
 * "relay.Constant.K" are the text's meta constants (`meta[relay.Constant][K]`); every
 * other member binds the parameter of @main with that name (TVM's bind_params_by_name),
 * which then disappears from @main's parameter list. A member that is neither a
 * parameter of @main nor a meta constant of the text is an error naming it. For an ONNX
 * model, a member binds the graph input (by its ONNX name or its Relay name) or replaces
 * the initializer of that name.
 * On failure *out is NULL. */
byocl_status byocl_load_model(const char *spec, const byocl_params *params,
                              byocl_module **out, byocl_error *err);

/* The shape of one model input, as `--shape NAME=1x3x224x224` gives it. */
typedef struct byocl_input_shape {
    const char *name; /* the input's ONNX name, or the Relay name byocl gives it */
    byocl_shape shape;
} byocl_input_shape;

typedef struct byocl_load_options {
    const byocl_params *params;       /* as byocl_load_model's `params`; may be NULL */
    /* ONNX models only: the shapes of inputs whose dimensions the model leaves symbolic
     * ("batch") or unknown. A given shape must have the model's rank and agree with its
     * fixed dimensions. An input with a symbolic dimension and no shape here is an error
     * naming the input and the dimension. */
    const byocl_input_shape *shapes;
    int n_shapes;
} byocl_load_options;

/* byocl_load_model with options (NULL: none). */
byocl_status byocl_load_model_opts(const char *spec, const byocl_load_options *opt,
                                   byocl_module **out, byocl_error *err);

/* Parses "NAME=1x3x224x224" (dims separated by 'x' or ','; the last '=' separates the
 * name, which may itself contain '='). *name receives a malloc'ed copy of NAME: free() it. */
byocl_status byocl_input_shape_parse(const char *text, char **name, byocl_shape *shape,
                                     byocl_error *err);

/* The Relay name the ONNX importer gives a graph input: ONNX allows any string, Relay's
 * text format does not (`%input.1` would read as item 1 of %input). Each character that
 * the text format would not accept where it stands becomes '_' (letters, digits and '_'
 * stay; '/', ':' and '-' stay before a letter, digit or '_'; '.' stays before a letter or
 * '_'); a name that does not start with a letter or '_' gets a leading '_'. So "input.1"
 * becomes "input_1" and "0" becomes "_0". (When two inputs end up with the same name, the
 * importer appends "_2", "_3", ... to the later ones.) Returns buf. */
char *byocl_onnx_relay_name(const char *onnx_name, char *buf, size_t len);

/* Writes `m` as typed Relay text to `text_path` and, when the module has tensor (non-scalar)
 * constants, their values to `params_path` (.npz, members "relay.Constant.K"), so that
 * byocl_load_model(text_path, <params_path read back>) gives the same module. Each file
 * is written to a temporary name and renamed: it appears whole or not at all.
 * `params_path` may be NULL when the module has no tensor constants. */
byocl_status byocl_save_model(const byocl_module *m, const char *text_path,
                              const char *params_path, byocl_error *err);
/* The same with printing options (NULL: types shown, as byocl_save_model). With
 * opt->metadata BYOCL_METADATA_INLINE the constants' values go into the text's #[metadata]
 * section instead, and no parameter file is written (`params_path` may be NULL). */
byocl_status byocl_save_model_opts(const byocl_module *m, const char *text_path,
                                   const char *params_path, const byocl_print_options *opt,
                                   byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
