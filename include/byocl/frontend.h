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
 *   "PATH.onnx"     an ONNX file (not available yet: BYOCL_ERR_UNSUPPORTED);
 *   any other path  a Relay text file.
 * `params` (may be NULL) holds named tensors, as read from an .npz: members named
 * "relay.Constant.K" are the text's meta constants (`meta[relay.Constant][K]`); every
 * other member binds the parameter of @main with that name (TVM's bind_params_by_name),
 * which then disappears from @main's parameter list. A member that is neither a
 * parameter of @main nor a meta constant of the text is an error naming it.
 * On failure *out is NULL. */
byocl_status byocl_load_model(const char *spec, const byocl_params *params,
                              byocl_module **out, byocl_error *err);

/* Writes `m` as typed Relay text to `text_path` and, when the module has tensor (non-scalar)
 * constants, their values to `params_path` (.npz, members "relay.Constant.K"), so that
 * byocl_load_model(text_path, <params_path read back>) gives the same module. Each file
 * is written to a temporary name and renamed: it appears whole or not at all.
 * `params_path` may be NULL when the module has no tensor constants. */
byocl_status byocl_save_model(const byocl_module *m, const char *text_path,
                              const char *params_path, byocl_error *err);
/* The same with printing options (NULL: types shown, as byocl_save_model). */
byocl_status byocl_save_model_opts(const byocl_module *m, const char *text_path,
                                   const char *params_path, const byocl_print_options *opt,
                                   byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
