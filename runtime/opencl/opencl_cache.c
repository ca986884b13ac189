/* The program cache: OpenCL program binaries on disk, so that a model's regions build in
 * milliseconds after the first run.
 *
 * An entry (runtime/base/cache.h: DIR/<key>.clbin, written atomically, checked when read) is
 * the binary from CL_PROGRAM_BINARIES, keyed by everything it depends on: the source,
 * the build options, the device's name and version, the driver and platform versions.
 * An entry that fails a check, or that the driver refuses, is deleted and the program
 * rebuilt from source. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/clock.h"
#include "opencl_impl.h"

/* Format 2: SHA-256 keys and digests (runtime/base/cache.c); format 1 entries had other names. */
static byocl_cache_kind program_cache = BYOCL_CACHE_KIND_INIT("BYOCLPC1", 2u, ".clbin");

ocl_cache_stats ocl_cache_stats_get(void) { return base_cache_stats_get(&program_cache); }

void ocl_cache_stats_reset(void) { base_cache_stats_reset(&program_cache); }

/* Regions may build on several threads: the totals have a lock. */
static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;
static byocl_opencl_build_totals totals;

void ocl_build_totals_add(int compiled, int loaded, int by_workers, double since_ms)
{
    double ms = base_now_ms() - since_ms;
    pthread_mutex_lock(&totals_lock);
    totals.compiled += compiled;
    totals.loaded += loaded;
    totals.compiled_by_workers += by_workers;
    if (compiled)
        totals.compiled_ms += ms;
    else
        totals.loaded_ms += ms;
    pthread_mutex_unlock(&totals_lock);
}

void byocl_opencl_build_totals_get(byocl_opencl_build_totals *out)
{
    pthread_mutex_lock(&totals_lock);
    *out = totals;
    pthread_mutex_unlock(&totals_lock);
}

static void device_key(const ocl_device *dev, const char *source, const char *options,
                       byocl_cache_key *key)
{
    const char *fields[] = {
        "byocl program cache 2", source, options, dev->info.name,
        dev->info.platform, dev->device_version, dev->info.driver, dev->platform_version,
    };
    byocl_cache_hasher h;
    base_cache_key_begin(&h);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        base_cache_key_string(&h, fields[i]);
    base_cache_key_end(&h, key);
}

byocl_status ocl_cache_entry_path(const char *dir, const ocl_device *dev, const char *source,
                                  const char *options, char **out, byocl_error *err)
{
    byocl_cache_key key;
    device_key(dev, source, options, &key);
    return base_cache_entry_path(&program_cache, dir, &key, out, err);
}

/* Stores the program's binary; a cache that cannot be written only costs the next build. */
static void entry_write(const char *path, const byocl_cache_key *key, cl_program program)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) !=
            CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *binary = malloc(size);
    if (!binary)
        return;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) ==
        CL_SUCCESS)
        base_cache_store(&program_cache, path, key, binary, size);
    free(binary);
}

/* ------------------------------------------------------------------ builds */

/* The program line of the first error in a build log, or 0: the first line of the log
 * that mentions "error" and holds ":LINE:COL:" (clang writes "FILE:LINE:COL: error: ...",
 * PoCL "error: FILE:LINE:COL: ..."). */
static int first_error_line(const char *log)
{
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char text[1024];
        snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1),
                 line);
        for (const char *p = strstr(text, "error") ? strchr(text, ':') : NULL; p;
             p = strchr(p + 1, ':')) {
            int number, column, used = 0;
            if (sscanf(p, ":%d:%d:%n", &number, &column, &used) == 2 && used > 0 && number > 0)
                return number;
        }
        if (!end)
            break;
        line = end + 1;
    }
    return 0;
}

/* The kernel whose text holds line `line` of `source`: the last `#define KNAME name` (the
 * templates' kernel name) or `__kernel void name(` before it. False when none does. */
static bool kernel_at_line(const char *source, int line, char *name, size_t len)
{
    bool found = false;
    const char *p = source;
    for (int at = 1; at <= line && *p; at++) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char text[512];
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text ? n : sizeof text - 1), p);
        char ident[128];
        if (sscanf(text, " #define KNAME %127[A-Za-z0-9_]", ident) == 1 ||
            ((strstr(text, "__kernel") || strncmp(text, "kernel ", 7) == 0) &&
             strstr(text, "void ") &&
             sscanf(strstr(text, "void ") + 5, " %127[A-Za-z0-9_]", ident) == 1 &&
             strcmp(ident, "KNAME") != 0)) {
            snprintf(name, len, "%s", ident);
            found = true;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return found;
}

static byocl_status build_failure(ocl_device *dev, cl_program program, const char *region,
                                  const char *source, cl_int e, byocl_error *err)
{
    char code[64];
    size_t len = 0;
    char *log = NULL;
    if (clGetProgramBuildInfo(program, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
            CL_SUCCESS &&
        (log = malloc(len + 1)) &&
        clGetProgramBuildInfo(program, dev->id, CL_PROGRAM_BUILD_LOG, len, log, NULL) ==
            CL_SUCCESS)
        log[len] = '\0';
    else if (log)
        log[0] = '\0';
    int line = log ? first_error_line(log) : 0;
    char kernel[192] = "";
    if (line > 0) {
        char name[128];
        if (kernel_at_line(source, line, name, sizeof name))
            snprintf(kernel, sizeof kernel, " in kernel %s (line %d of the program)", name, line);
        else
            snprintf(kernel, sizeof kernel, " at line %d of the program, outside any kernel",
                     line);
    }
    byocl_error_set(err, BYOCL_ERR_RUNTIME,
                    "region %s: the OpenCL program does not build on device %d (%s): %s%s; "
                    "build log:\n%s",
                    region, dev->info.index, dev->info.name, ocl_error_name(e, code, sizeof code),
                    kernel, log && *log ? log : "(empty)");
    free(log);
    return BYOCL_ERR_RUNTIME;
}

static cl_int build(ocl_device *dev, cl_program program, const char *options)
{
    return clBuildProgram(program, 1, &dev->id, options ? options : "", NULL, NULL);
}

static cl_program from_binary(ocl_device *dev, const unsigned char *binary, size_t size,
                              const char *options)
{
    cl_int e, status;
    cl_program program =
        clCreateProgramWithBinary(dev->context, 1, &dev->id, &size, &binary, &status, &e);
    if (e != CL_SUCCESS || status != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        return NULL;
    }
    if (build(dev, program, options) != CL_SUCCESS) {
        clReleaseProgram(program);
        return NULL;
    }
    return program;
}

byocl_status ocl_program_get(ocl_device *dev, const char *dir, const char *region,
                             const char *source, const char *options, cl_program *out,
                             byocl_error *err)
{
    double start_ms = base_now_ms();
    bool compiled = false;
    byocl_status st = ocl_program_fetch(dev, dir, region, source, options, out, &compiled, err);
    if (st == BYOCL_OK)
        ocl_build_totals_add(compiled, !compiled, 0, start_ms);
    return st;
}

bool ocl_program_cached(const ocl_device *dev, const char *dir, const char *source,
                        const char *options)
{
    char *path = NULL;
    if (!dir || ocl_cache_entry_path(dir, dev, source, options, &path, NULL) != BYOCL_OK)
        return false;
    bool there = access(path, R_OK) == 0;
    free(path);
    return there;
}

byocl_status ocl_program_fetch(ocl_device *dev, const char *dir, const char *region,
                               const char *source, const char *options, cl_program *out,
                               bool *compiled, byocl_error *err)
{
    *out = NULL;
    *compiled = false;
    byocl_cache_key key;
    char *path = NULL;
    device_key(dev, source, options, &key);
    if (dir) {
        byocl_status st = base_cache_entry_path(&program_cache, dir, &key, &path, err);
        if (st != BYOCL_OK)
            return st;
        size_t size = 0;
        unsigned char *binary = base_cache_load(&program_cache, path, &key, &size);
        if (binary) {
            *out = from_binary(dev, binary, size, options);
            free(binary);
            if (*out) {
                base_cache_accept(&program_cache);
                free(path);
                return BYOCL_OK;
            }
            base_cache_reject(&program_cache, path);
        }
    }
    cl_int e;
    char code[64];
    byocl_status st = BYOCL_OK;
    cl_program program = clCreateProgramWithSource(dev->context, 1, &source, NULL, &e);
    if (e != CL_SUCCESS)
        st = byocl_error_set(err, e == CL_OUT_OF_HOST_MEMORY ? BYOCL_ERR_NOMEM : BYOCL_ERR_RUNTIME,
                             "region %s: clCreateProgramWithSource failed: %s", region,
                             ocl_error_name(e, code, sizeof code));
    else if ((e = build(dev, program, options)) != CL_SUCCESS)
        st = build_failure(dev, program, region, source, e, err);
    if (st == BYOCL_OK && path)
        entry_write(path, &key, program);
    free(path);
    if (st != BYOCL_OK) {
        if (program)
            clReleaseProgram(program);
        return st;
    }
    *out = program;
    *compiled = true;
    return BYOCL_OK;
}
