/* libbyocl_tvm.so's access to byocl's target registry, which is not thread-safe: one lock
 * held while a region compiles (byocl_compile registers the built-in targets), while a
 * call's support is asked, and while plugins load. */
#ifndef BYOCL_TVM_REGISTRY_H
#define BYOCL_TVM_REGISTRY_H

#include "byocl/error.h"

void tvm_registry_lock(void);
void tvm_registry_unlock(void);

/* Registers the built-in targets, then loads each plugin of `plugins` ("A.so:B.so"; NULL or
 * "": none) while `target` is not registered yet; takes the lock itself. */
byocl_status tvm_registry_load_plugins(const char *target, const char *plugins,
                                       byocl_error *err);

#endif
