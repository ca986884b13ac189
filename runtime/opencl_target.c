/* The built-in "opencl" target, registered through the public target API like any
 * vendor's: supports is the code generator's byocl_cl_supports; compile chooses the
 * device, generates the region's program and plans (codegen/opencl/) and makes the
 * runtime module (opencl_rtmod.c). Its options are process-wide (byocl_opencl_configure)
 * because a target's compile has no options argument. */
#include <stdlib.h>
#include <string.h>

#include "byocl/passes.h"
#include "byocl/target.h"
#include "opencl/cl_codegen.h"
#include "opencl_impl.h"

/* The configured options; the strings are owned copies. */
static byocl_opencl_options config;

byocl_opencl_options byocl_opencl_options_default(void)
{
    return (byocl_opencl_options){.device = NULL, .profile = false, .cache_dir = NULL,
                                  .buffers = BYOCL_OPENCL_BUFFERS_AUTO};
}

void ocl_options_free_copy(byocl_opencl_options *opt)
{
    free((char *)opt->device);
    free((char *)opt->cache_dir);
    *opt = byocl_opencl_options_default();
}

/* A copy of `src` whose strings are the copy's own. */
static byocl_status options_copy(const byocl_opencl_options *src, byocl_opencl_options *out,
                                 byocl_error *err)
{
    *out = *src;
    out->device = src->device ? strdup(src->device) : NULL;
    out->cache_dir = src->cache_dir ? strdup(src->cache_dir) : NULL;
    if ((src->device && !out->device) || (src->cache_dir && !out->cache_dir)) {
        ocl_options_free_copy(out);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    }
    return BYOCL_OK;
}

byocl_status ocl_options_snapshot(byocl_opencl_options *out, byocl_error *err)
{
    return options_copy(&config, out, err);
}

/* ------------------------------------------------------------------ target */

static bool target_supports(void *ctx, const byocl_function *fn, int node, char *why,
                            size_t why_len)
{
    (void)ctx;
    return byocl_cl_supports(fn, node, why, why_len);
}

static byocl_status target_compile(void *ctx, const byocl_function *region, byocl_rtmod **out,
                                   byocl_error *err)
{
    (void)ctx;
    return byocl_opencl_compile(region, NULL, out, err);
}

static void target_release(void *ctx)
{
    (void)ctx;
    ocl_options_free_copy(&config);
}

byocl_status byocl_opencl_register(void)
{
    if (byocl_target_find("opencl"))
        return BYOCL_OK;
    const byocl_target_i target = {
        .name = "opencl",
        .api_version = BYOCL_TARGET_API_VERSION,
        .ctx = NULL,
        .supports = target_supports,
        .release = target_release,
        .compile = target_compile,
    };
    return byocl_target_register(&target, NULL);
}

byocl_status byocl_opencl_configure(const byocl_opencl_options *opt, byocl_error *err)
{
    if (!opt)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_opencl_configure: no options");
    if ((unsigned)opt->buffers > BYOCL_OPENCL_BUFFERS_COPY)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_opencl_configure: buffers must be AUTO, ZERO_COPY or COPY, "
                               "got %d",
                               (int)opt->buffers);
    if (byocl_opencl_register() != BYOCL_OK)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory registering the opencl "
                                                     "target");
    byocl_opencl_options copy;
    byocl_status st = options_copy(opt, &copy, err);
    if (st != BYOCL_OK)
        return st;
    ocl_options_free_copy(&config);
    config = copy;
    return BYOCL_OK;
}

/* ----------------------------------------------------------------- compile */

byocl_status byocl_opencl_compile(const byocl_function *region, const byocl_opencl_options *opt,
                                  byocl_rtmod **out, byocl_error *err)
{
    if (!out || !region)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_opencl_compile: %s",
                               out ? "no region given" : "no place for the result");
    *out = NULL;
    if (!opt)
        opt = &config;
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    byocl_cl_plan *plan = NULL;
    char *cache_dir = NULL;
    byocl_status st = ocl_choose_device(opt->device, &desc, err);
    if (st == BYOCL_OK)
        st = ocl_device_acquire(&desc, opt->profile, opt->buffers, &dev, err);
    if (st == BYOCL_OK) {
        byocl_cl_codegen_options copt = {.compute_units = dev->info.compute_units};
        st = byocl_cl_codegen(region, &copt, &plan, err);
    }
    /* A cache folder that cannot be made only costs build time: compile without one. */
    if (st == BYOCL_OK && byocl_cache_dir(opt->cache_dir, &cache_dir, NULL) != BYOCL_OK)
        cache_dir = NULL;
    if (st == BYOCL_OK) {
        ocl_rtmod_options ropt = {.cache_dir = cache_dir};
        st = ocl_rtmod_new(dev, region, plan, &ropt, out, err); /* takes the plan */
    }
    free(cache_dir);
    ocl_device_release(dev);
    return st;
}

/* -------------------------------------------------------------------- emit */

byocl_status byocl_opencl_emit(const byocl_module *m, const char *dir, int *n_regions,
                               byocl_error *err)
{
    if (n_regions)
        *n_regions = 0;
    if (!m || !dir)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_opencl_emit: %s",
                               m ? "no folder given" : "no module given");
    /* What a run would generate: the launches follow the device's compute units. */
    byocl_cl_codegen_options copt = {.compute_units = 0};
    ocl_device_desc desc;
    if (ocl_choose_device(config.device, &desc, NULL) == BYOCL_OK)
        copt.compute_units = desc.info.compute_units;
    byocl_module *typed = byocl_module_clone(m, err);
    if (!typed)
        return err ? err->status : BYOCL_ERR_NOMEM;
    byocl_status st = byocl_infer_types(typed, err);
    int written = 0;
    for (int f = 0; st == BYOCL_OK && f < byocl_module_num_functions(typed); f++) {
        const byocl_function *fn = byocl_module_function_at(typed, f);
        const char *compiler = byocl_attrs_get_str(byocl_function_attrs(fn), "Compiler", NULL);
        if (!compiler || strcmp(compiler, "opencl") != 0)
            continue;
        byocl_cl_plan *plan = NULL;
        const char *symbol = byocl_attrs_get_str(byocl_function_attrs(fn), "global_symbol",
                                                 byocl_function_name(fn));
        st = byocl_cl_codegen(fn, &copt, &plan, err);
        if (st == BYOCL_OK)
            st = byocl_cl_plan_write(plan, dir, symbol, err);
        byocl_cl_plan_free(plan);
        written += st == BYOCL_OK;
    }
    byocl_module_free(typed);
    if (n_regions)
        *n_regions = written;
    return st;
}
