/* OpenCL devices: listing them, choosing one (index, name, $BYOCL_OPENCL_DEVICE), and the
 * context and queue that every region on a device shares.
 *
 * A shared device lives in a process-wide list while any runtime module holds it, so the
 * regions of a model (and of other models built meanwhile) use one context and one queue;
 * the last release frees them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_impl.h"
#include "base/strbuf.h"

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

const char *ocl_error_name(cl_int code, char *buf, size_t len)
{
    static const struct {
        cl_int code;
        const char *name;
    } names[] = {
        {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
        {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
        {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
        {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
        {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
        {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
        {CL_PROFILING_INFO_NOT_AVAILABLE, "CL_PROFILING_INFO_NOT_AVAILABLE"},
        {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
        {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
        {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
        {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT"},
        {CL_INVALID_HOST_PTR, "CL_INVALID_HOST_PTR"},
        {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
        {CL_INVALID_BINARY, "CL_INVALID_BINARY"},
        {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS"},
        {CL_INVALID_PROGRAM, "CL_INVALID_PROGRAM"},
        {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE"},
        {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME"},
        {CL_INVALID_KERNEL, "CL_INVALID_KERNEL"},
        {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX"},
        {CL_INVALID_ARG_VALUE, "CL_INVALID_ARG_VALUE"},
        {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE"},
        {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
        {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION"},
        {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
        {CL_INVALID_WORK_ITEM_SIZE, "CL_INVALID_WORK_ITEM_SIZE"},
        {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
        {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
        {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
        {CL_PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == code) {
            snprintf(buf, len, "%s (%d)", names[i].name, (int)code);
            return buf;
        }
    snprintf(buf, len, "OpenCL error %d", (int)code);
    return buf;
}

/* ------------------------------------------------------------------ listing */

static void device_string(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
        snprintf(buf, len, "?");
    buf[len - 1] = '\0';
}

static void describe(cl_platform_id p, cl_device_id d, int index, byocl_opencl_device_info *out)
{
    memset(out, 0, sizeof *out);
    out->index = index;
    device_string(d, CL_DEVICE_NAME, out->name, sizeof out->name);
    device_string(d, CL_DRIVER_VERSION, out->driver, sizeof out->driver);
    device_string(d, CL_DEVICE_VERSION, out->version, sizeof out->version);
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof out->platform, out->platform, NULL) !=
        CL_SUCCESS)
        snprintf(out->platform, sizeof out->platform, "?");
    out->platform[sizeof out->platform - 1] = '\0';
    cl_device_type type = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    snprintf(out->type, sizeof out->type, "%s",
             type & CL_DEVICE_TYPE_GPU           ? "GPU"
             : type & CL_DEVICE_TYPE_CPU         ? "CPU"
             : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                                 : "custom");
    cl_uint cu = 0;
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    out->compute_units = (int)cu;
    cl_uint width = 0;
    clGetDeviceInfo(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof width, &width, NULL);
    out->float_vector_width = (int)width;
    cl_ulong mem = 0;
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    out->global_mem_bytes = mem;
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    out->unified_memory = (type & CL_DEVICE_TYPE_CPU) || unified;
    cl_uint align_bits = 0;
    clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    out->mem_base_align = (int)(align_bits / 8);
}

byocl_status ocl_list_devices(ocl_device_desc **out, int *n, byocl_error *err)
{
    *out = NULL;
    *n = 0;
    cl_uint n_platforms = 0;
    char code[64];
    cl_int e = clGetPlatformIDs(0, NULL, &n_platforms);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || (e == CL_SUCCESS && n_platforms == 0))
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "no OpenCL platform found: the OpenCL ICD loader has no driver "
                               "to load; %s",
                               OCL_INSTALL_HINT);
    if (e != CL_SUCCESS)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "listing the OpenCL platforms failed with %s; %s",
                               ocl_error_name(e, code, sizeof code), OCL_INSTALL_HINT);
    cl_platform_id *platforms = malloc(n_platforms * sizeof *platforms);
    if (!platforms)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory listing OpenCL platforms");
    byocl_status st = BYOCL_OK;
    if ((e = clGetPlatformIDs(n_platforms, platforms, NULL)) != CL_SUCCESS)
        st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                             "listing the OpenCL platforms failed with %s",
                             ocl_error_name(e, code, sizeof code));
    ocl_device_desc *all = NULL;
    int count = 0;
    for (cl_uint p = 0; p < n_platforms && st == BYOCL_OK; p++) {
        cl_uint n_dev = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n_dev) != CL_SUCCESS ||
            n_dev == 0)
            continue; /* CL_DEVICE_NOT_FOUND: a platform without devices */
        cl_device_id *ids = malloc(n_dev * sizeof *ids);
        ocl_device_desc *grown = realloc(all, ((size_t)count + n_dev) * sizeof *grown);
        if (grown)
            all = grown;
        if (!ids || !grown) {
            free(ids);
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory listing OpenCL devices");
            break;
        }
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n_dev, ids, NULL) == CL_SUCCESS)
            for (cl_uint d = 0; d < n_dev; d++) {
                all[count].platform = platforms[p];
                all[count].id = ids[d];
                describe(platforms[p], ids[d], count, &all[count].info);
                count++;
            }
        free(ids);
    }
    free(platforms);
    if (st == BYOCL_OK && count == 0)
        st = byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                             "no OpenCL device found: %u platform%s but no device; %s",
                             (unsigned)n_platforms, n_platforms == 1 ? "" : "s",
                             OCL_INSTALL_HINT);
    if (st != BYOCL_OK) {
        free(all);
        return st;
    }
    *out = all;
    *n = count;
    return BYOCL_OK;
}

byocl_status byocl_opencl_devices(byocl_opencl_device_info **out, int *n, byocl_error *err)
{
    if (!out || !n)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_opencl_devices: no place for the "
                                                       "result");
    *out = NULL;
    *n = 0;
    ocl_device_desc *all;
    int count;
    byocl_status st = ocl_list_devices(&all, &count, err);
    if (st != BYOCL_OK)
        return st;
    byocl_opencl_device_info *info = malloc((size_t)count * sizeof *info);
    if (!info) {
        free(all);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory listing OpenCL devices");
    }
    for (int i = 0; i < count; i++)
        info[i] = all[i].info;
    free(all);
    *out = info;
    *n = count;
    return BYOCL_OK;
}

/* ------------------------------------------------------------------ choice */

static bool contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = haystack; *h; h++) {
        size_t k = 0;
        while (k < n && h[k] &&
               tolower((unsigned char)h[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return n == 0;
}

/* "0: NAME (PLATFORM), 1: ..." truncated to fit. */
static void list_text(const ocl_device_desc *all, int n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%d: %s (%s)", i ? ", " : "", i, all[i].info.name,
                         all[i].info.platform);
        at += w > 0 ? (size_t)w : 0;
    }
}

byocl_status ocl_choose_device(const char *spec, ocl_device_desc *out, byocl_error *err)
{
    const char *source = "device";
    if (!spec) {
        spec = getenv("BYOCL_OPENCL_DEVICE");
        source = "BYOCL_OPENCL_DEVICE";
    }
    ocl_device_desc *all;
    int n;
    byocl_status st = ocl_list_devices(&all, &n, err);
    if (st != BYOCL_OK)
        return st;
    int pick = -1;
    if (!spec || !*spec) {
        for (int i = 0; i < n && pick < 0; i++)
            if (strcmp(all[i].info.type, "GPU") == 0 ||
                strcmp(all[i].info.type, "accelerator") == 0)
                pick = i;
        if (pick < 0)
            pick = 0;
    } else if (base_str_all_digits(spec)) {
        long index = strlen(spec) < 9 ? strtol(spec, NULL, 10) : -1;
        pick = index >= 0 && index < n ? (int)index : -1;
    } else {
        for (int i = 0; i < n && pick < 0; i++)
            if (contains_nocase(all[i].info.name, spec) ||
                contains_nocase(all[i].info.platform, spec))
                pick = i;
    }
    if (pick < 0) {
        char list[1024];
        list_text(all, n, list, sizeof list);
        st = byocl_error_set(err, BYOCL_ERR_NOT_FOUND,
                             "%s '%s' names no OpenCL device: give an index from 0 to %d or a "
                             "part of a device's or platform's name (devices: %s)",
                             source, spec, n - 1, list);
    } else {
        *out = all[pick];
    }
    free(all);
    return st;
}

byocl_status byocl_opencl_device_find(const char *device, byocl_opencl_device_info *out,
                                      byocl_error *err)
{
    ocl_device_desc desc;
    byocl_status st = ocl_choose_device(device, &desc, err);
    if (st == BYOCL_OK && out)
        *out = desc.info;
    return st;
}

/* ------------------------------------------------------------ shared devices */

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static ocl_device *devices; /* live shared devices */

static void device_free(ocl_device *dev)
{
    if (dev->queue)
        clReleaseCommandQueue(dev->queue);
    if (dev->context)
        clReleaseContext(dev->context);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

/* PoCL compiles a kernel twice by default: once for the program binary that byocl's cache
 * stores (for any work-group size) and again at its first launch (specialized to the
 * launch's work-group size and offset). Every byocl kernel declares the one work-group
 * size it is launched with (reqd_work_group_size), so the first compilation is already as
 * specific, and turning the second off halves a cold build at no measured cost
 * (docs/opencl-codegen.md). PoCL reads the setting at each compilation; a value the user
 * set is kept. */
static void avoid_second_compilation(const ocl_device_desc *desc)
{
    if (strstr(desc->info.platform, "Portable Computing Language"))
        setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 0);
}

static byocl_status device_open(const ocl_device_desc *desc, bool profiling, bool zero_copy,
                                ocl_device **out, byocl_error *err)
{
    avoid_second_compilation(desc);
    ocl_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory opening an OpenCL device");
    pthread_mutex_init(&dev->lock, NULL);
    dev->refs = 1;
    dev->platform = desc->platform;
    dev->id = desc->id;
    dev->profiling = profiling;
    dev->zero_copy = zero_copy;
    dev->info = desc->info;
    clGetDeviceInfo(dev->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof dev->max_alloc,
                    &dev->max_alloc, NULL);
    clGetPlatformInfo(dev->platform, CL_PLATFORM_VERSION, sizeof dev->platform_version,
                      dev->platform_version, NULL);
    dev->platform_version[sizeof dev->platform_version - 1] = '\0';
    snprintf(dev->device_version, sizeof dev->device_version, "%s", desc->info.version);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform,
                                     0};
    cl_int e;
    char code[64];
    dev->context = clCreateContext(props, 1, &dev->id, NULL, NULL, &e);
    if (e == CL_SUCCESS)
        dev->queue = clCreateCommandQueue(dev->context, dev->id,
                                          profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS) {
        byocl_error_set(err, e == CL_OUT_OF_HOST_MEMORY ? BYOCL_ERR_NOMEM : BYOCL_ERR_RUNTIME,
                        "cannot open OpenCL device %d (%s): %s %s", desc->info.index,
                        desc->info.name, dev->context ? "clCreateCommandQueue" : "clCreateContext",
                        ocl_error_name(e, code, sizeof code));
        device_free(dev);
        return err ? err->status : BYOCL_ERR_RUNTIME;
    }
    *out = dev;
    return BYOCL_OK;
}

byocl_status ocl_device_acquire(const ocl_device_desc *desc, bool profiling,
                                byocl_opencl_buffers buffers, ocl_device **out,
                                byocl_error *err)
{
    bool zero_copy = buffers == BYOCL_OPENCL_BUFFERS_ZERO_COPY ||
                     (buffers == BYOCL_OPENCL_BUFFERS_AUTO && desc->info.unified_memory);
    pthread_mutex_lock(&devices_lock);
    ocl_device *dev = devices;
    while (dev && (dev->id != desc->id || dev->profiling != profiling ||
                   dev->zero_copy != zero_copy))
        dev = dev->next;
    byocl_status st = BYOCL_OK;
    if (dev) {
        dev->refs++;
    } else if ((st = device_open(desc, profiling, zero_copy, &dev, err)) == BYOCL_OK) {
        dev->next = devices;
        devices = dev;
    }
    pthread_mutex_unlock(&devices_lock);
    *out = st == BYOCL_OK ? dev : NULL;
    return st;
}

ocl_device *ocl_device_retain(ocl_device *dev)
{
    pthread_mutex_lock(&devices_lock);
    dev->refs++;
    pthread_mutex_unlock(&devices_lock);
    return dev;
}

/* Drops a reference; caller holds devices_lock. True when it was the last: dev is then
 * off the list, for the caller to free after unlocking. */
static bool drop_ref(ocl_device *dev)
{
    if (--dev->refs > 0)
        return false;
    ocl_device **at = &devices;
    while (*at != dev)
        at = &(*at)->next;
    *at = dev->next;
    return true;
}

void ocl_device_release(ocl_device *dev)
{
    if (!dev)
        return;
    pthread_mutex_lock(&devices_lock);
    bool last = drop_ref(dev);
    pthread_mutex_unlock(&devices_lock);
    if (last)
        device_free(dev);
}

void ocl_device_keep(ocl_device *dev)
{
    pthread_mutex_lock(&devices_lock);
    if (!dev->kept) {
        dev->kept = true;
        dev->refs++;
    }
    pthread_mutex_unlock(&devices_lock);
}

void byocl_opencl_close_devices(void)
{
    ocl_device *closing = NULL; /* freed after unlocking, as ocl_device_release does */
    pthread_mutex_lock(&devices_lock);
    for (ocl_device *d = devices, *next; d; d = next) {
        next = d->next;
        if (d->kept) {
            d->kept = false;
            if (drop_ref(d)) {
                d->next = closing;
                closing = d;
            }
        }
    }
    pthread_mutex_unlock(&devices_lock);
    for (ocl_device *d = closing, *next; d; d = next) {
        next = d->next;
        device_free(d);
    }
}

int ocl_device_live_count(void)
{
    pthread_mutex_lock(&devices_lock);
    int n = 0;
    for (const ocl_device *d = devices; d; d = d->next)
        n++;
    pthread_mutex_unlock(&devices_lock);
    return n;
}
