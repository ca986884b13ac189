/* Regions to runtime modules through the target registry: a region's Compiler attribute
 * names a target; a target with a compile member makes the region's runtime module; a
 * failure either fails the build or, with a fallback, leaves the region to the host. */
#include <string.h>

#include "byocl/target.h"
#include "region_targets.h"
#include "target/target_impl.h"

/* The LLVM host backend serves fallback "host" when the build has it (as in build.c). */
#if __has_include("llvm/llvm_backend.h")
#define HAVE_LLVM_BACKEND 1
#else
#define HAVE_LLVM_BACKEND 0
#endif

byocl_status driver_region_check_fallback(const char *fallback, byocl_error *err)
{
    if (!fallback || strcmp(fallback, "host") == 0 || strcmp(fallback, "ref") == 0)
        return BYOCL_OK;
    return byocl_error_set(err, BYOCL_ERR_INVALID,
                           "unknown fallback '%s' for regions (known: host, ref)", fallback);
}

static byocl_status fall_back(const byocl_function *region, const byocl_build_options *opt,
                              int threads, const byocl_error *why, byocl_rtmod **out,
                              byocl_error *err)
{
    if (opt->on_fallback)
        opt->on_fallback(opt->fallback_user, byocl_function_name(region), why->msg);
    if (HAVE_LLVM_BACKEND && strcmp(opt->fallback, "host") == 0)
        return byocl_rtmod_host_new(region, "host", threads, out, err);
    return byocl_rtmod_ref_new(region, out, err);
}

byocl_status driver_region_rtmod(const byocl_function *region, const byocl_build_options *opt,
                                 int threads, byocl_rtmod **out, byocl_error *err)
{
    *out = NULL;
    const char *name = byocl_attrs_get_str(byocl_function_attrs(region), "Compiler", NULL);
    const byocl_target_i *target = name ? byocl_target_find(name) : NULL;
    if (!target || !target->compile)
        return byocl_rtmod_ref_new(region, out, err);
    byocl_error why;
    byocl_target_config config;
    byocl_status st = target_config_init(&config, name, opt->target_options, err);
    if (st != BYOCL_OK) /* the user's options are wrong: no fallback hides that */
        return st;
    st = target->compile(target->ctx, region, &config, out, &why);
    if (st == BYOCL_OK) /* no module: the target leaves the region to the default */
        return *out ? BYOCL_OK : byocl_rtmod_ref_new(region, out, err);
    byocl_rtmod_free(*out);
    *out = NULL;
    if (opt->fallback)
        return fall_back(region, opt, threads, &why, out, err);
    if (err)
        *err = why;
    return st;
}
