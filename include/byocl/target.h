/* byocl: targets, the external-compiler API (TVM's relay.ext.<name>, ggml's backends).
 *
 * A target is a small vtable registered by name. `supports` decides which calls may run
 * on it (annotate_target asks each target in priority order); `compile` (optional until a
 * target can build code) turns one partitioned function into a runtime module. The
 * built-in OpenCL target uses this same API, and a vendor's target can be registered by
 * any program that links byocl. */
#ifndef BYOCL_TARGET_H
#define BYOCL_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BYOCL_TARGET_API_VERSION 1u
#define BYOCL_TARGET_NAME_MAX 64

/* A runtime module (include/byocl/runtime.h). */
typedef struct byocl_rtmod byocl_rtmod;

typedef struct byocl_target_i {
    /* The Compiler attribute value, e.g. "opencl": letters, digits and '_' only. */
    const char *name;
    /* BYOCL_TARGET_API_VERSION of the header the target was built against. */
    uint32_t api_version;
    /* Passed back to every member. */
    void *ctx;
    /* Required. May call `node` of `fn` (a Call of an op, types inferred) run on this target?
     * When not, write a short reason into `why` (e.g. "layout NHWC is not supported"). */
    bool (*supports)(void *ctx, const byocl_function *fn, int node, char *why, size_t why_len);
    /* Optional. Called once when the target is unregistered (also by
     * byocl_target_registry_reset). */
    void (*release)(void *ctx);
    /* Optional. Compiles one partitioned region (a typed function with Compiler=<name>,
     * tensor parameters, a tensor or tuple result) into a runtime module (runtime.h) that
     * byocl_build's executor calls with the region's inputs then outputs. byocl_build
     * calls it once per region function. A target without compile has its regions run by
     * the ref region module (byocl_rtmod_ref_new). On failure return a status with `err`
     * set (byocl_build adds where the region is called); with
     * byocl_build_options.fallback set, byocl_build runs the region on the host instead. */
    byocl_status (*compile)(void *ctx, const byocl_function *region, byocl_rtmod **out,
                            byocl_error *err);
} byocl_target_i;

/* Registers a copy of `target` (its name is copied too). Errors: a missing name or
 * supports, a name with other characters or longer than BYOCL_TARGET_NAME_MAX - 1, a name
 * already registered, an api_version other than BYOCL_TARGET_API_VERSION. On an error
 * nothing is registered and `release` is not called (the caller still owns ctx). */
byocl_status byocl_target_register(const byocl_target_i *target, byocl_error *err);
/* Removes the target and calls its `release`; an unknown name is BYOCL_ERR_NOT_FOUND. */
byocl_status byocl_target_unregister(const char *name, byocl_error *err);
/* NULL when no target has that name. */
const byocl_target_i *byocl_target_find(const char *name);
/* Registered targets in registration order (index 0 first); NULL when out of range. The
 * pointers stay valid until that target is unregistered. */
int byocl_target_count(void);
const byocl_target_i *byocl_target_at(int index);
/* Unregisters every target, last registered first, calling each `release`; frees the
 * registry's own storage. byocl installs no atexit handler: a program (or test) that
 * registered targets calls this before it exits. The registry is not thread-safe:
 * register and unregister from one thread, before and after compiling. */
void byocl_target_registry_reset(void);

#ifdef __cplusplus
}
#endif
#endif
