/* Which runtime module runs a region (region_targets.c), for byocl_build. */
#ifndef BYOCL_REGION_TARGETS_H
#define BYOCL_REGION_TARGETS_H

#include "byocl/runtime.h"

/* Checks byocl_build_options.fallback: NULL, "host" or "ref". */
byocl_status driver_region_check_fallback(const char *fallback, byocl_error *err);

/* The runtime module of `region` when the build's hook made none: the compile member of
 * the registered target its Compiler attribute names, with its options from
 * opt->target_options; when that fails and opt->fallback is set, the host region module
 * (`threads` for its executor) or the ref region module, after telling
 * opt->on_fallback; for a target that is not registered or has no compile (or whose
 * compile makes no module), the ref region module. */
byocl_status driver_region_rtmod(const byocl_function *region, const byocl_build_options *opt,
                                 int threads, byocl_rtmod **out, byocl_error *err);

#endif
