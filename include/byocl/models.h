/* byocl: built-in models, made with the builder API so that the main job needs no file. */
#ifndef BYOCL_MODELS_H
#define BYOCL_MODELS_H

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

int byocl_builtin_count(void);
const char *byocl_builtin_name(int index);        /* "seed", "resnet18", "mobilenet_v2" */
const char *byocl_builtin_description(int index);

/* Builds `name` (without the "builtin:" prefix): a type-checked, verified module. The
 * networks' weights are constants filled with deterministic pseudo-random values scaled so
 * that activations stay finite; builtin:seed keeps the thread's weights as parameters
 * (bind them with --params or --random-inputs). Unknown names are an error listing the
 * known ones. */
byocl_status byocl_builtin_build(const char *name, byocl_module **out, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
