/* The built-in OpenCL target, registered through the public target API like any
 * vendor's: supports is the code generator's clg_supports; compile reads the
 * target's options, chooses the device, generates the region's program and plans
 * (codegen/opencl/) and makes the runtime module (opencl_rtmod.c); devices lists every
 * OpenCL device. Nothing is process-wide: each compile gets its own options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/target.h"
#include "opencl/cl_codegen.h"
#include "opencl_impl.h"

#define OCL_TARGET_NAME "opencl"

byocl_opencl_options byocl_opencl_options_default(void)
{
    return (byocl_opencl_options){.device = NULL, .profile = false, .cache_dir = NULL,
                                  .buffers = BYOCL_OPENCL_BUFFERS_AUTO};
}

/* ------------------------------------------------------------------ target */

static const byocl_target_option target_options[] = {
    {"profile", BYOCL_OPTION_BOOL, NULL, "off",
     "time transfers and each kernel with OpenCL events (byocl run --profile sets it)"},
    {"cache_dir", BYOCL_OPTION_STRING, NULL, NULL,
     "the program cache folder (\"\": none; default: $BYOCL_CACHE_DIR, else ~/.cache/byocl)"},
    {"buffers", BYOCL_OPTION_CHOICE, "auto|zero_copy|copy", "auto",
     "how region tensors reach the device: wrapped (zero_copy) or copied"},
    {"keep_device", BYOCL_OPTION_BOOL, NULL, "off",
     "keep the device open after its last region, for programs that build many models"},
    {NULL, 0, NULL, NULL, NULL},
};

static bool target_supports(void *ctx, const byocl_function *fn, int node, char *why,
                            size_t why_len)
{
    (void)ctx;
    return clg_supports(fn, node, why, why_len);
}

/* The byocl_opencl_options that `config` asks for; `device` holds the device's index. */
static byocl_opencl_options options_of(const byocl_target_config *config, char *device,
                                       size_t device_len)
{
    byocl_opencl_options o = byocl_opencl_options_default();
    if (byocl_target_config_device(config) >= 0) {
        snprintf(device, device_len, "%d", byocl_target_config_device(config));
        o.device = device;
    }
    o.profile = byocl_target_config_bool(config, "profile", false);
    o.keep_device = byocl_target_config_bool(config, "keep_device", false);
    o.cache_dir = byocl_target_config_get(config, "cache_dir");
    const char *buffers = byocl_target_config_get(config, "buffers");
    if (buffers && strcmp(buffers, "zero_copy") == 0)
        o.buffers = BYOCL_OPENCL_BUFFERS_ZERO_COPY;
    else if (buffers && strcmp(buffers, "copy") == 0)
        o.buffers = BYOCL_OPENCL_BUFFERS_COPY;
    return o;
}

/* What the code generator needs to know of the device it generates for. */
static byocl_cl_codegen_options codegen_options(const byocl_opencl_device_info *info)
{
    return (byocl_cl_codegen_options){.compute_units = info->compute_units,
                                      .cpu = strcmp(info->type, "CPU") == 0,
                                      .vector_width = info->float_vector_width,
                                      .mem_base_align = info->mem_base_align};
}

/* The program and launch plan that compile would make, for a device the launches are
 * planned for (its compute units; 2 when there is no OpenCL device). */
static byocl_status target_emit(void *ctx, const byocl_function *region,
                                const byocl_target_config *config, const char *dir,
                                byocl_error *err)
{
    (void)ctx;
    char device[32];
    byocl_opencl_options o = options_of(config, device, sizeof device);
    byocl_cl_codegen_options copt = {.compute_units = 0};
    ocl_device_desc desc;
    if (ocl_choose_device(o.device, &desc, NULL) == BYOCL_OK)
        copt = codegen_options(&desc.info);
    const char *symbol = byocl_attrs_get_str(byocl_function_attrs(region), "global_symbol",
                                             byocl_function_name(region));
    byocl_cl_plan *plan = NULL;
    byocl_status st = clg_codegen(region, &copt, &plan, err);
    if (st == BYOCL_OK)
        st = clg_plan_write(plan, dir, symbol, err);
    clg_plan_free(plan);
    return st;
}

static byocl_status target_compile(void *ctx, const byocl_function *region,
                                   const byocl_target_config *config, byocl_rtmod **out,
                                   byocl_error *err)
{
    (void)ctx;
    char device[32];
    byocl_opencl_options o = options_of(config, device, sizeof device);
    return byocl_opencl_compile(region, &o, out, err);
}

/* Unregistered: the devices kept open for its compiles close (when no module uses them). */
static void target_release(void *ctx)
{
    (void)ctx;
    byocl_opencl_close_devices();
}

static byocl_device_kind kind_of(const char *type)
{
    if (strcmp(type, "CPU") == 0)
        return BYOCL_DEVICE_CPU;
    if (strcmp(type, "GPU") == 0)
        return BYOCL_DEVICE_GPU;
    return strcmp(type, "accelerator") == 0 ? BYOCL_DEVICE_ACCELERATOR : BYOCL_DEVICE_OTHER;
}

static byocl_status target_devices(void *ctx, byocl_device_info *out, int cap, int *n,
                                   byocl_error *err)
{
    (void)ctx;
    byocl_opencl_device_info *devs = NULL;
    byocl_status st = byocl_opencl_devices(&devs, n, err);
    for (int i = 0; st == BYOCL_OK && i < *n && i < cap; i++) {
        byocl_device_info *d = &out[i];
        memset(d, 0, sizeof *d);
        snprintf(d->name, sizeof d->name, "%s", devs[i].name);
        snprintf(d->description, sizeof d->description, "%.100s; %d compute unit%s, driver %.100s",
                 devs[i].platform, devs[i].compute_units, devs[i].compute_units == 1 ? "" : "s",
                 devs[i].driver);
        d->kind = kind_of(devs[i].type);
        d->memory_bytes = devs[i].global_mem_bytes;
        d->host_memory = devs[i].unified_memory;
    }
    free(devs);
    return st;
}

byocl_status byocl_opencl_register(void)
{
    if (byocl_target_find(OCL_TARGET_NAME))
        return BYOCL_OK;
    const byocl_target_i target = {
        .name = OCL_TARGET_NAME,
        .api_version = BYOCL_TARGET_API_VERSION,
        .ctx = NULL,
        .supports = target_supports,
        .compile = target_compile,
        .release = target_release,
        .options = target_options,
        .devices = target_devices,
        .emit = target_emit,
    };
    return byocl_target_register(&target, NULL);
}

/* ----------------------------------------------------------------- compile */

byocl_status byocl_opencl_compile(const byocl_function *region, const byocl_opencl_options *opt,
                                  byocl_rtmod **out, byocl_error *err)
{
    if (!out || !region)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_opencl_compile: %s",
                               out ? "no region given" : "no place for the result");
    *out = NULL;
    byocl_opencl_options defaults = byocl_opencl_options_default();
    if (!opt)
        opt = &defaults;
    if ((unsigned)opt->buffers > BYOCL_OPENCL_BUFFERS_COPY)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "byocl_opencl_compile: buffers must be AUTO, ZERO_COPY or COPY, "
                               "got %d",
                               (int)opt->buffers);
    ocl_device_desc desc;
    ocl_device *dev = NULL;
    byocl_cl_plan *plan = NULL;
    char *cache_dir = NULL;
    byocl_status st = ocl_choose_device(opt->device, &desc, err);
    if (st == BYOCL_OK)
        st = ocl_device_acquire(&desc, opt->profile, opt->buffers, &dev, err);
    if (st == BYOCL_OK && opt->keep_device)
        ocl_device_keep(dev);
    if (st == BYOCL_OK) {
        byocl_cl_codegen_options copt = codegen_options(&dev->info);
        st = clg_codegen(region, &copt, &plan, err);
    }
    /* A cache folder that cannot be made only costs build time: compile without one. */
    if (st == BYOCL_OK && base_cache_dir(opt->cache_dir, &cache_dir, NULL) != BYOCL_OK)
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
