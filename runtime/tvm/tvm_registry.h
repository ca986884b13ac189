/* Shared by the files of libbyocl_tvm.so: access to byocl's target registry, which is not
 * thread-safe (one lock held while a region compiles, byocl_compile registering the
 * built-in targets, while a call's support is asked, and while plugins load), and what a
 * region's next call needs. */
#ifndef BYOCL_TVM_REGISTRY_H
#define BYOCL_TVM_REGISTRY_H

#include <stdbool.h>

#include "byocl/error.h"
#include "byocl/tvm.h"

void tvm_registry_lock(void);
void tvm_registry_unlock(void);

/* Registers the built-in targets, then loads each plugin of `plugins` ("A.so:B.so"; NULL or
 * "": none) while `target` is not registered yet; takes the lock itself. */
byocl_status tvm_registry_load_plugins(const char *target, const char *plugins,
                                       byocl_error *err);

/* Whether the next call of *slot needs the spec's weights: the first call (it compiles the
 * region), or the first capturing one (it loads the region's module again to write it). */
bool tvm_region_wants_weights(byocl_tvm_region *const *slot);

#endif
