/* The program cache: OpenCL program binaries on disk, so that a model's regions build in
 * milliseconds after the first run.
 *
 * An entry is DIR/<key>.clbin, where the key is a 128-bit hash of everything the binary
 * depends on: the source, the build options, the device's name and version, the driver
 * and platform versions. The file is a header (magic, format, the key again, the binary's
 * size and its checksum) and the binary from CL_PROGRAM_BINARIES. It is written to a
 * temporary file and renamed into place, so readers see a whole entry or none; an entry
 * that fails any check (short, another key, a checksum that does not match) is deleted
 * and the program rebuilt from source, as is one the driver refuses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_util.h"
#include "opencl_impl.h"

#define CACHE_MAGIC "BYOCLPC1"
#define CACHE_FORMAT 1u

typedef struct cache_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    uint64_t key[2];
    uint64_t size;     /* bytes of binary after the header */
    uint64_t checksum; /* FNV-1a of the binary */
} cache_header;

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static ocl_cache_stats stats;

static void count(int *field)
{
    pthread_mutex_lock(&stats_lock);
    (*field)++;
    pthread_mutex_unlock(&stats_lock);
}

ocl_cache_stats ocl_cache_stats_get(void)
{
    pthread_mutex_lock(&stats_lock);
    ocl_cache_stats s = stats;
    pthread_mutex_unlock(&stats_lock);
    return s;
}

void ocl_cache_stats_reset(void)
{
    pthread_mutex_lock(&stats_lock);
    memset(&stats, 0, sizeof stats);
    pthread_mutex_unlock(&stats_lock);
}

/* ------------------------------------------------------------------ hashing */

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define FNV_BASIS 0xcbf29ce484222325ull

/* Two independent 64-bit hashes of the key fields, each field length-prefixed so that
 * moving bytes from one field to the next changes the key. */
static void key_hash(const char *const *fields, int n, uint64_t key[2])
{
    key[0] = FNV_BASIS;
    key[1] = 0x84222325cbf29ce4ull;
    for (int i = 0; i < n; i++) {
        uint64_t len = strlen(fields[i]);
        for (int k = 0; k < 2; k++) {
            key[k] = fnv1a(key[k], &len, sizeof len);
            key[k] = fnv1a(key[k], fields[i], (size_t)len);
        }
    }
    /* splitmix64's finalizer on the second, so the two differ in more than the seed */
    uint64_t z = key[1];
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    key[1] = z ^ (z >> 31);
}

static void device_key(const ocl_device *dev, const char *source, const char *options,
                       uint64_t key[2])
{
    const char *fields[] = {
        "byocl program cache 1", source, options ? options : "", dev->info.name,
        dev->info.platform, dev->device_version, dev->info.driver, dev->platform_version,
    };
    key_hash(fields, (int)(sizeof fields / sizeof fields[0]), key);
}

/* ----------------------------------------------------------------- folders */

static byocl_status make_dirs(const char *dir, byocl_error *err)
{
    char *path = strdup(dir);
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    byocl_status st = BYOCL_OK;
    for (char *p = path + 1; st == BYOCL_OK; p++) {
        bool end = *p == '\0';
        if (*p != '/' && !end)
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            st = byocl_error_set(err, BYOCL_ERR_IO, "cannot create the program cache folder "
                                                    "%s: %s",
                                 path, strerror(errno));
        if (end)
            break;
        *p = '/';
    }
    free(path);
    return st;
}

byocl_status ocl_cache_dir(const char *opt_dir, char **out, byocl_error *err)
{
    *out = NULL;
    const char *dir = opt_dir ? opt_dir : getenv("BYOCL_CACHE_DIR");
    char buf[4096];
    if (!dir) {
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(buf, sizeof buf, "%s/byocl", xdg);
        else if (home && *home)
            snprintf(buf, sizeof buf, "%s/.cache/byocl", home);
        else
            return BYOCL_OK; /* nowhere to keep it */
        dir = buf;
    }
    if (!*dir)
        return BYOCL_OK;
    byocl_status st = make_dirs(dir, err);
    if (st != BYOCL_OK)
        return st;
    if (!(*out = strdup(dir)))
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    return BYOCL_OK;
}

static byocl_status entry_path(const char *dir, const uint64_t key[2], char **out,
                               byocl_error *err)
{
    size_t len = strlen(dir) + 48;
    if (!(*out = malloc(len)))
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "out of memory");
    snprintf(*out, len, "%s/%016llx%016llx.clbin", dir, (unsigned long long)key[0],
             (unsigned long long)key[1]);
    return BYOCL_OK;
}

byocl_status ocl_cache_entry_path(const char *dir, const ocl_device *dev, const char *source,
                                  const char *options, char **out, byocl_error *err)
{
    uint64_t key[2];
    device_key(dev, source, options, key);
    return entry_path(dir, key, out, err);
}

/* ----------------------------------------------------------------- entries */

/* The binary of a valid entry at `path` (malloc'ed), or NULL: absent (*corrupt false) or
 * failing a check (*corrupt true). */
static unsigned char *entry_read(const char *path, const uint64_t key[2], size_t *size,
                                 bool *corrupt)
{
    *corrupt = false;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return NULL;
    void *data = NULL;
    size_t len = 0;
    if (byocl_file_read_all(path, &data, &len, NULL) != BYOCL_OK) {
        *corrupt = true;
        return NULL;
    }
    cache_header h;
    bool ok = len >= sizeof h;
    if (ok)
        memcpy(&h, data, sizeof h);
    ok = ok && memcmp(h.magic, CACHE_MAGIC, 8) == 0 && h.format == CACHE_FORMAT &&
         h.key[0] == key[0] && h.key[1] == key[1] && h.size > 0 && h.size == len - sizeof h &&
         fnv1a(FNV_BASIS, (unsigned char *)data + sizeof h, (size_t)h.size) == h.checksum;
    if (!ok) {
        free(data);
        *corrupt = true;
        return NULL;
    }
    memmove(data, (unsigned char *)data + sizeof h, (size_t)h.size);
    *size = (size_t)h.size;
    return data;
}

/* Stores the program's binary; a cache that cannot be written only costs the next build. */
static void entry_write(const char *path, const uint64_t key[2], cl_program program)
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
        CL_SUCCESS) {
        cache_header h = {.format = CACHE_FORMAT, .key = {key[0], key[1]}, .size = size};
        memcpy(h.magic, CACHE_MAGIC, 8);
        h.checksum = fnv1a(FNV_BASIS, binary, size);
        byocl_file_part parts[2] = {{&h, sizeof h}, {binary, size}};
        if (byocl_file_write_atomic(path, parts, 2, NULL) == BYOCL_OK)
            count(&stats.stored);
    }
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
    *out = NULL;
    uint64_t key[2];
    char *path = NULL;
    device_key(dev, source, options, key);
    if (dir) {
        byocl_status st = entry_path(dir, key, &path, err);
        if (st != BYOCL_OK)
            return st;
        size_t size = 0;
        bool corrupt;
        unsigned char *binary = entry_read(path, key, &size, &corrupt);
        if (binary) {
            *out = from_binary(dev, binary, size, options);
            free(binary);
            if (*out) {
                count(&stats.hits);
                free(path);
                return BYOCL_OK;
            }
            count(&stats.rejected);
            unlink(path);
        } else if (corrupt) {
            count(&stats.corrupt);
            unlink(path);
        } else {
            count(&stats.misses);
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
        entry_write(path, key, program);
    free(path);
    if (st != BYOCL_OK) {
        if (program)
            clReleaseProgram(program);
        return st;
    }
    *out = program;
    return BYOCL_OK;
}
