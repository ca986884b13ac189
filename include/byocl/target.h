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
    /* Optional. Called once when the target is unregistered (or at exit). */
    void (*release)(void *ctx);
} byocl_target_i;

/* Registers a copy of `target` (its name is copied too). Errors: a missing name or
 * supports, a name with other characters, a name already registered, an api_version
 * other than BYOCL_TARGET_API_VERSION. */
byocl_status byocl_target_register(const byocl_target_i *target, byocl_error *err);
byocl_status byocl_target_unregister(const char *name, byocl_error *err);
/* NULL when no target has that name. */
const byocl_target_i *byocl_target_find(const char *name);
int byocl_target_count(void);
const byocl_target_i *byocl_target_at(int index);

#ifdef __cplusplus
}
#endif
#endif
