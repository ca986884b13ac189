/* byocl: the reference executor. Runs any module on host memory with the ops' plain C
 * kernels; the ground truth that the compiled paths are checked against. */
#ifndef BYOCL_REFERENCE_H
#define BYOCL_REFERENCE_H

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs function `fn_name` (usually "main") of a type-checked module. `inputs` holds one
 * tensor per parameter, in parameter order, with the parameter's dtype and shape. The
 * result is flattened (a tuple result gives its tensors in order): *outputs is a malloc'ed
 * array of *n_outputs new references; free with byocl_tensors_free. Calls of global
 * functions run their callee. */
byocl_status byocl_reference_run(const byocl_module *m, const char *fn_name,
                                 byocl_tensor *const *inputs, int n_inputs,
                                 byocl_tensor ***outputs, int *n_outputs, byocl_error *err);

void byocl_tensors_free(byocl_tensor **tensors, int n);

#ifdef __cplusplus
}
#endif
#endif
