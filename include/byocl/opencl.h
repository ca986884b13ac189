/* byocl: the built-in "opencl" target and its runtime.
 *
 * Regions partitioned for "opencl" (Compiler="opencl") become OpenCL C programs
 * (codegen/opencl/) run by an OpenCL runtime module: one context and in-order queue per
 * device, shared by every region; programs built once and kept in an on-disk cache;
 * region tensors wrapped without copies on CPU and unified-memory devices, copied to and
 * from device buffers on discrete GPUs. docs/opencl-runtime.md explains each part. */
#ifndef BYOCL_OPENCL_H
#define BYOCL_OPENCL_H

#include <stdbool.h>
#include <stdint.h>

#include "byocl/ir.h"
#include "byocl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How region tensors reach the device. */
typedef enum byocl_opencl_buffers {
    BYOCL_OPENCL_BUFFERS_AUTO = 0, /* ZERO_COPY on CPU and unified-memory devices, else COPY */
    BYOCL_OPENCL_BUFFERS_ZERO_COPY, /* wrap the executor's memory (CL_MEM_USE_HOST_PTR) */
    BYOCL_OPENCL_BUFFERS_COPY       /* device buffers, written before and read after */
} byocl_opencl_buffers;

typedef struct byocl_opencl_options {
    /* The device: its index in byocl_opencl_devices ("0"), or a case-insensitive part of
     * its name or its platform's name ("pocl", "nvidia"). NULL: $BYOCL_OPENCL_DEVICE, and
     * when that is unset the first GPU or accelerator, else the first device. */
    const char *device;
    /* Time transfers and each kernel with OpenCL events (byocl_compiled_region_part). */
    bool profile;
    /* The program cache folder. NULL: $BYOCL_CACHE_DIR, else $XDG_CACHE_HOME/byocl, else
     * $HOME/.cache/byocl. "": no cache (every program is compiled from source). */
    const char *cache_dir;
    byocl_opencl_buffers buffers;
    /* Keep the device (its context and queue, shared by all regions on it) open after the
     * last region module using it is freed, until byocl_opencl_close_devices: for a
     * program that builds and frees many models in turn, such as a test runner (PoCL loads
     * its kernel library again for each new context, about a second). false: a device
     * closes with its last module. */
    bool keep_device;
} byocl_opencl_options;

/* device NULL, profile false, cache_dir NULL, buffers AUTO, keep_device false. */
byocl_opencl_options byocl_opencl_options_default(void);

/* Registers the OpenCL target (include/byocl/target.h; its name is "opencl"), once:
 * BYOCL_OK when it is registered already. Makes no OpenCL call. byocl_compile and
 * byocl_build register it through byocl_target_register_builtins. Its options (target
 * options "opencl.KEY=VALUE"): device (index or part of a name, byocl_opencl_devices),
 * profile (on|off), cache_dir (a folder; "" for none), buffers (auto|zero_copy|copy),
 * keep_device (on|off); each is the field of byocl_opencl_options of that name. byocl_target_registry_reset
 * unregisters it. */
byocl_status byocl_opencl_register(void);

/* Compiles one partitioned region (a typed function of a module, tensor parameters) into
 * an OpenCL runtime module with `opt` (NULL: the defaults). This is what the
 * target's compile does. Errors: no OpenCL platform or device (naming the fix), a device
 * `opt->device` does not match, a call the code generator does not support, a program
 * that does not build (naming the kernel and showing the build log), buffers the device
 * cannot allocate. */
byocl_status byocl_opencl_compile(const byocl_function *region, const byocl_opencl_options *opt,
                                  byocl_rtmod **out, byocl_error *err);

typedef struct byocl_opencl_device_info {
    int index;              /* what `device` = "<index>" picks */
    char name[256];
    char platform[256];
    char type[16];          /* "CPU", "GPU", "accelerator", "custom" */
    char driver[128];       /* CL_DRIVER_VERSION */
    char version[128];      /* CL_DEVICE_VERSION */
    int compute_units;
    int float_vector_width; /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: 8 on AVX2, 16 on
                             * AVX-512 (PoCL), 1 on GPUs */
    uint64_t global_mem_bytes;
    bool unified_memory;    /* CPU device or CL_DEVICE_HOST_UNIFIED_MEMORY */
    int mem_base_align;     /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (128 on PoCL) */
} byocl_opencl_device_info;

/* Every OpenCL device of every platform (*out malloc'ed: free()). Errors when there is no
 * platform or no device, naming the fix. */
byocl_status byocl_opencl_devices(byocl_opencl_device_info **out, int *n, byocl_error *err);

/* The device that `device` picks, as byocl_opencl_options.device does (NULL:
 * $BYOCL_OPENCL_DEVICE, else the first GPU or accelerator, else the first device): lets a
 * program refuse a wrong --device before any work instead of at the first region. Errors
 * as byocl_opencl_devices, or BYOCL_ERR_NOT_FOUND listing the devices there are. */
byocl_status byocl_opencl_device_find(const char *device, byocl_opencl_device_info *out,
                                      byocl_error *err);

/* What getting OpenCL programs built cost this process so far, over every device and
 * region: each region's program is compiled from its OpenCL C (clCreateProgramWithSource
 * and clBuildProgram, then written to the program cache) or loaded from byocl's program
 * cache (clCreateProgramWithBinary and clBuildProgram). A large region is built as several
 * programs, its parts, compiled at the same time by this process and worker processes
 * (docs/opencl-runtime.md, "Parallel builds"); those count as compiled, and the wall time of
 * the whole region's build goes to compiled_ms. Times are wall times summed over regions.
 * `byocl bench` reads it before and after a build. */
typedef struct byocl_opencl_build_totals {
    int compiled, loaded;          /* programs compiled from source, loaded from the cache */
    int compiled_by_workers;       /* of `compiled`, those that worker processes compiled */
    double compiled_ms, loaded_ms; /* the time each kind took */
} byocl_opencl_build_totals;

void byocl_opencl_build_totals_get(byocl_opencl_build_totals *out);

/* Closes the devices kept open (byocl_opencl_options.keep_device, the target option
 * keep_device) that no region module uses any more. The OpenCL target calls it when it is
 * unregistered (byocl_target_registry_reset). */
void byocl_opencl_close_devices(void);

#ifdef __cplusplus
}
#endif
#endif
