/* The OpenCL runtime's internals, by file:
 *   opencl_device.c  devices: listing, choice (index or name), and the context and queue
 *                    that every region on one device shares (refcounted)
 *   opencl_cache.c   the on-disk program cache (binaries keyed by source, options, device
 *                    and driver; atomic writes; checksums)
 *   opencl_rtmod.c   the runtime module of one region: its program, kernels, buffers and
 *                    launches (codegen/opencl/cl_plan.h), run on every region call
 *   opencl_target.c  the OpenCL target: its options, devices, supports and compile
 * docs/opencl-runtime.md is the user's view. Tests include this header. */
#ifndef BYOCL_OPENCL_IMPL_H
#define BYOCL_OPENCL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <CL/cl.h>

#include "byocl/opencl.h"
#include "byocl/runtime.h"
#include "base/cache.h"
#include "opencl/cl_plan.h"

/* ----------------------------------------------------------- opencl_device.c */

/* The fix every "no OpenCL" error names. */
#define OCL_INSTALL_HINT                                                                     \
    "install an OpenCL driver (ICD) such as pocl-opencl-icd (Debian/Ubuntu: apt-get install "  \
    "pocl-opencl-icd), or check OCL_ICD_VENDORS and /etc/OpenCL/vendors"

/* One device as the platforms list it (index: its place over all platforms). */
typedef struct ocl_device_desc {
    cl_platform_id platform;
    cl_device_id id;
    byocl_opencl_device_info info;
} ocl_device_desc;

/* Every device of every platform, in platform order. An error when there is no platform
 * or no device (naming the fix). *out is malloc'ed. */
byocl_status ocl_list_devices(ocl_device_desc **out, int *n, byocl_error *err);

/* The device `spec` picks: a decimal index into ocl_list_devices, or a case-insensitive
 * substring of the device's name (or its platform's); NULL or "" picks the first GPU or
 * accelerator, else the first device. */
byocl_status ocl_choose_device(const char *spec, ocl_device_desc *out, byocl_error *err);

/* A device in use: one context and one in-order queue, shared by every region compiled
 * for it (with the same profiling setting) while any holds a reference. */
typedef struct ocl_device {
    int refs;                    /* guarded by the list's lock (opencl_device.c) */
    bool kept;                   /* one of refs keeps it open (ocl_device_keep; same lock) */
    struct ocl_device *next;
    cl_platform_id platform;
    cl_device_id id;
    cl_context context;
    cl_command_queue queue;
    bool profiling;              /* the queue records event times */
    bool zero_copy;              /* region tensors are wrapped (CL_MEM_USE_HOST_PTR) */
    byocl_opencl_device_info info;
    char platform_version[128], device_version[128];
    cl_ulong max_alloc;          /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    pthread_mutex_t lock;        /* one region call at a time on the queue */
} ocl_device;

/* The shared device for `desc` (made on first use), with a reference the caller drops
 * with ocl_device_release. `buffers` decides zero_copy (AUTO: CPU devices and devices
 * with CL_DEVICE_HOST_UNIFIED_MEMORY). */
byocl_status ocl_device_acquire(const ocl_device_desc *desc, bool profiling,
                                byocl_opencl_buffers buffers, ocl_device **out,
                                byocl_error *err);
/* Keeps `dev` open after its last region module, until byocl_opencl_close_devices (the
 * target's option keep_device). */
void ocl_device_keep(ocl_device *dev);
/* Another reference to a device the caller holds; returns dev. */
ocl_device *ocl_device_retain(ocl_device *dev);
void ocl_device_release(ocl_device *dev); /* NULL is fine */
/* Live shared devices (tests check that regions share one and that none leak). */
int ocl_device_live_count(void);

/* "CL_OUT_OF_RESOURCES (-5)": an OpenCL error code by name. */
const char *ocl_error_name(cl_int code, char *buf, size_t len);

/* ------------------------------------------------------------ opencl_cache.c */

/* What the program cache did, counted over the process (tests read it). */
typedef byocl_cache_stats ocl_cache_stats;

ocl_cache_stats ocl_cache_stats_get(void);
void ocl_cache_stats_reset(void);

/* The path of the entry for this program: DIR/<64 hex digits>.clbin. */
byocl_status ocl_cache_entry_path(const char *dir, const ocl_device *dev, const char *source,
                                  const char *options, char **out, byocl_error *err);

/* A built program for `source` on dev: from the cache folder `dir` when it holds a valid
 * entry, else compiled from source and stored there (dir NULL: no cache). A failed build
 * says which kernel the first error is in, on which line, and shows the build log;
 * `region` prefixes the message. */
byocl_status ocl_program_get(ocl_device *dev, const char *dir, const char *region,
                             const char *source, const char *options, cl_program *out,
                             byocl_error *err);

/* ocl_program_get without counting the build in the process's totals; *compiled says
 * whether it was compiled from source (else loaded from the cache). */
byocl_status ocl_program_fetch(ocl_device *dev, const char *dir, const char *region,
                               const char *source, const char *options, cl_program *out,
                               bool *compiled, byocl_error *err);

/* Whether the cache folder `dir` (NULL: none) holds an entry for this program; it may still
 * turn out corrupt when loaded. */
bool ocl_program_cached(const ocl_device *dev, const char *dir, const char *source,
                        const char *options);

/* Adds programs built since `since_ms` (base_now_ms) to byocl_opencl_build_totals. */
void ocl_build_totals_add(int compiled, int loaded, int by_workers, double since_ms);

/* ------------------------------------------------------- opencl_build_parts.c */

/* A region's programs: one, or one per part of a large region built in parallel. */
typedef struct ocl_program_parts {
    int n;
    cl_program *programs;  /* n programs (malloc'ed) */
    int *part_of_kernel;   /* per kernel span of the plan: the program that holds it */
} ocl_program_parts;

/* Builds the programs of `plan` for `region` on dev, through the cache folder `dir` (NULL:
 * none): one program, or, when the region's kernels cost enough to compile and several
 * build jobs are allowed, one per part, the parts after the first compiled by worker
 * processes (byocl-opencl-build) while this one compiles the first. Whatever a worker does
 * not deliver is compiled here, so errors are those of ocl_program_get. */
byocl_status ocl_program_parts_build(ocl_device *dev, const char *dir, const char *region,
                                     const byocl_cl_plan *plan, ocl_program_parts *out,
                                     byocl_error *err);
/* The program that holds kernel `name`, or NULL. */
cl_program ocl_program_parts_find(const ocl_program_parts *parts, const byocl_cl_plan *plan,
                                  const char *name);
void ocl_program_parts_release(ocl_program_parts *parts);

/* The number of build jobs: $BYOCL_OPENCL_BUILD_JOBS (a whole number from 1), else the
 * CPUs this process may run on. An error names a bad value. */
byocl_status ocl_build_jobs(int *out, byocl_error *err);
/* The worker program's path in buf, or NULL when there is none to run:
 * $BYOCL_OPENCL_BUILD_WORKER ("" turns workers off), else the one in the build tree that
 * made this library, else the installed one. */
const char *ocl_build_worker_path(char *buf, size_t len);

/* ------------------------------------------------------ opencl_build_worker.c */

/* The worker program's main: builds one program into a cache folder.
 *   byocl-opencl-build --protocol N --device INDEX --cache-dir DIR --options OPTIONS
 *                      --region NAME SOURCE_FILE
 * Exit status 0: the program is in the cache; 1: it did not build (the error on stderr);
 * 2: wrong arguments or another protocol. */
int ocl_build_worker_main(int argc, char **argv);

/* ------------------------------------------------------------ opencl_rtmod.c */

typedef struct ocl_rtmod_options {
    const char *cache_dir;       /* NULL: no program cache */
} ocl_rtmod_options;

/* A runtime module named "opencl" that runs `plan` (which it takes, also on failure) for
 * `region` (a typed function; its global_symbol names it) on `dev` (the module takes a
 * reference of its own). The program is built now, the kernels made, the scratch buffers
 * allocated and the constants uploaded. */
byocl_status ocl_rtmod_new(ocl_device *dev, const byocl_function *region, byocl_cl_plan *plan,
                           const ocl_rtmod_options *opt, byocl_rtmod **out, byocl_error *err);

#endif
