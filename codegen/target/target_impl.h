/* Internal helpers of the target registry (include/byocl/target.h), shared by the passes
 * that name targets. */
#ifndef BYOCL_TARGET_IMPL_H
#define BYOCL_TARGET_IMPL_H

#include <stddef.h>

#include "byocl/target.h"

/* A target name is 1 to BYOCL_TARGET_NAME_MAX - 1 letters, digits and '_' (it is the
 * Compiler attribute and part of symbols such as "<name>_main_0"). Registered or not:
 * annotate_range accepts names of targets that do not exist (yet). */
byocl_status byocl_target_check_name(const char *name, byocl_error *err);

/* "opencl, test_target" (registration order), or "none"; truncated to fit. Returns buf. */
char *byocl_target_list_names(char *buf, size_t len);

#endif
