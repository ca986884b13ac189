/* The entry of the code that byocl's Relax codegen (relax.ext.byocl, python/byocl_tvm)
 * generates: TVM compiles that code with its own compiler options, without byocl's headers
 * or link flags, so the code finds this function with dlopen/dlsym and passes the region
 * as plain strings. The weights come as base64 text: g++ reads 45 MB of weights (resnet18)
 * as a base64 string literal in 2.4 s, as octal escapes in 5.2 s. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvm/ffi/c_api.h>

#include "byocl/tvm.h"
#include "base64.h"
#include "tvm_args.h"
#include "tvm_registry.h"

int byocl_tvm_embedded_call(byocl_tvm_region **slot, const char *symbol, const char *relay_text,
                            const char *weights_base64, const char *target,
                            const char *target_options, const char *plugins, int threads,
                            const void *args, int32_t num_args, void *result)
{
    byocl_tvm_region_spec spec = {symbol, relay_text, NULL, 0, target, target_options, threads};
    if (!slot || !tvm_region_wants_weights(slot))
        return byocl_tvm_region_call(slot, &spec, args, num_args, result);
    /* The first call, where the region compiles from the spec, or the first capturing one:
     * with the weights decoded. */
    byocl_error err = {0};
    if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE) &&
        tvm_registry_load_plugins(target, plugins, &err) != BYOCL_OK)
        return tvm_raise_error("RuntimeError", symbol, "%s", err.msg);
    void *weights = NULL;
    if (weights_base64 && *weights_base64 &&
        base_base64_decode(weights_base64, strlen(weights_base64), &weights,
                           &spec.weights_npz_len, &err) != BYOCL_OK)
        return tvm_raise_error("RuntimeError", symbol, "the embedded weights: %s", err.msg);
    spec.weights_npz = weights;
    int rc = byocl_tvm_region_call(slot, &spec, args, num_args, result);
    free(weights);
    return rc;
}
