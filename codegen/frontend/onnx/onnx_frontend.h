/* The ONNX importer's entry point, for byocl_load_model (load.c). */
#ifndef BYOCL_ONNX_FRONTEND_H
#define BYOCL_ONNX_FRONTEND_H

#include "byocl/frontend.h"

/* Reads the ONNX model at `path` into a module whose @main is the graph: its inputs that
 * are not initializers (nor bound by opt->params) are the parameters, in order, its
 * outputs the result (a tuple when there are several). The module is built but not yet
 * type-checked as a whole: byocl_load_model runs infer_types and verify. */
byocl_status onnx_import(const char *path, const byocl_load_options *opt,
                         byocl_module **out, byocl_error *err);
/* The same from a serialized ModelProto in memory; `path` names it in messages (the
 * fuzz target fuzz/fuzz_onnx.c reads models this way). */
byocl_status onnx_import_mem(const void *data, size_t len, const char *path,
                             const byocl_load_options *opt, byocl_module **out,
                             byocl_error *err);

#endif
