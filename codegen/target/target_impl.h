/* Internal helpers of the target registry (include/byocl/target.h), shared by the passes
 * that name targets. */
#ifndef BYOCL_TARGET_IMPL_H
#define BYOCL_TARGET_IMPL_H

#include <stddef.h>

#include "byocl/target.h"
#include "base/strbuf.h"

/* A target name is 1 to BYOCL_TARGET_NAME_MAX - 1 letters, digits and '_' (it is the
 * Compiler attribute and part of symbols such as "<name>_main_0"). Registered or not:
 * annotate_range accepts names of targets that do not exist (yet). */
byocl_status target_check_name(const char *name, byocl_error *err);

/* "opencl, test_target" (registration order), or "none"; truncated to fit. Returns buf. */
char *target_list_names(char *buf, size_t len);

/* One target's view of an option set (options.c): what its compile receives. */
struct byocl_target_config {
    const char *target;
    const byocl_target_options *options;
    int device; /* the device option's index in the target's list, -1 when not given */
};

/* The config of `target` in `opts` (may be NULL), each of its options checked as
 * byocl_target_options_check does. */
byocl_status target_config_init(byocl_target_config *cfg, const char *target,
                                const byocl_target_options *opts, byocl_error *err);

/* on|off|true|false|yes|no|1|0, any case. */
bool target_option_parse_bool(const char *value, bool *out);

#endif
