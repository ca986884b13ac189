/* ONNX external data (onnx.proto's TensorProto.external_data): models over protobuf's
 * 2 GiB keep their weights in files beside the .onnx, each tensor a range of bytes given
 * by `location` (relative to the model's folder), `offset` and `length`. Only the range is
 * mapped, copied once into the tensor that keeps it, and unmapped: loading takes about the
 * weights' size in memory, as for weights inside the model (onnx_model.c). Locations
 * are confined to the model's folder as ONNX Runtime does (no absolute path, no `..`), so
 * that a model cannot make byocl read any file it names. */
#define _DEFAULT_SOURCE /* madvise, O_CLOEXEC */
#include "onnx_external.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensorio/tensor_pb.h"

/* A tensor's external_data entries. */
typedef struct ext_ref {
    const char *location;
    uint64_t offset, length;
    bool has_offset, has_length;
} ext_ref;

/* A decimal number without sign or spaces that fits 64 bits. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

static byocl_status parse_entries(const Onnx__TensorProto *tp, const char *what, ext_ref *ref,
                                  byocl_error *err)
{
    *ref = (ext_ref){0};
    if (!tp->has_data_location ||
        tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: has external_data entries, but its data_location is not "
                               "EXTERNAL",
                               what);
    if (tp->has_raw_data)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: holds values in both raw_data and an external file (a "
                               "tensor uses one)",
                               what);
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *key = tp->external_data[i]->key ? tp->external_data[i]->key : "";
        const char *value = tp->external_data[i]->value ? tp->external_data[i]->value : "";
        bool seen;
        if (strcmp(key, "location") == 0) {
            seen = ref->location != NULL;
            ref->location = value;
        } else if (strcmp(key, "offset") == 0 || strcmp(key, "length") == 0) {
            bool is_offset = key[0] == 'o';
            seen = is_offset ? ref->has_offset : ref->has_length;
            if (!parse_u64(value, is_offset ? &ref->offset : &ref->length))
                return byocl_error_set(err, BYOCL_ERR_INVALID,
                                       "%s: external_data %s '%s' is not a decimal number",
                                       what, key, value);
            *(is_offset ? &ref->has_offset : &ref->has_length) = true;
        } else if (strcmp(key, "checksum") == 0) {
            continue; /* not checked, as ONNX Runtime does not */
        } else {
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: external_data has an unknown key '%s' (ONNX's are "
                                   "location, offset, length and checksum)",
                                   what, key);
        }
        if (seen)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: external_data gives '%s' twice", what, key);
    }
    if (!ref->location || !ref->location[0])
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: its values are in an external file, but external_data "
                               "gives no location",
                               what);
    return BYOCL_OK;
}

/* Refuses a location that could name a file outside the model's folder. */
static byocl_status check_location(const char *location, const char *what, byocl_error *err)
{
    if (location[0] == '/')
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: external data '%s' is an absolute path (it must be "
                               "relative to the model's folder)",
                               what, location);
    for (const char *p = location; *p;) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: external data '%s' leaves the model's folder ('..' "
                                   "is refused)",
                                   what, location);
        p += n;
        if (*p)
            p++;
    }
    return BYOCL_OK;
}

/* The location under the model's folder, malloc'ed. */
static char *beside(const char *model_path, const char *location)
{
    const char *slash = strrchr(model_path, '/');
    size_t dir = slash ? (size_t)(slash - model_path) + 1 : 0;
    char *path = malloc(dir + strlen(location) + 1);
    if (path) {
        memcpy(path, model_path, dir);
        strcpy(path + dir, location);
    }
    return path;
}

/* The tensor from bytes [ref->offset, + nbytes) of the open file `fd`: mapped from the
 * page that holds the first, handed to tensorio as raw_data, unmapped. */
static byocl_status read_range(int fd, const Onnx__TensorProto *tp, const ext_ref *ref,
                               size_t nbytes, const char *what, byocl_tensor **out,
                               byocl_error *err)
{
    Onnx__TensorProto with_raw = *tp;
    with_raw.has_data_location = 0;
    with_raw.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
    with_raw.n_external_data = 0;
    with_raw.external_data = NULL;
    with_raw.has_raw_data = 1;
    with_raw.raw_data.len = nbytes;
    with_raw.raw_data.data = NULL;
    if (nbytes == 0)
        return tensorio_tensor_from_onnx(&with_raw, what, out, err);
    long page = sysconf(_SC_PAGESIZE);
    uint64_t start = page > 0 ? ref->offset / (uint64_t)page * (uint64_t)page : ref->offset;
    size_t skip = (size_t)(ref->offset - start);
    if (nbytes > SIZE_MAX - skip || start > (uint64_t)INT64_MAX)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: external data is too large", what);
    void *map = mmap(NULL, skip + nbytes, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
    if (map == MAP_FAILED)
        return byocl_error_set(err, BYOCL_ERR_IO, "%s: external data '%s' cannot be mapped: %s",
                               what, ref->location, strerror(errno));
    (void)madvise(map, skip + nbytes, MADV_SEQUENTIAL); /* only a hint */
    with_raw.raw_data.data = (uint8_t *)map + skip;
    byocl_status st = tensorio_tensor_from_onnx(&with_raw, what, out, err);
    munmap(map, skip + nbytes);
    return st;
}

byocl_status onnx_external_read(const char *model_path, const Onnx__TensorProto *tp,
                                const char *what, byocl_tensor **out, byocl_error *err)
{
    *out = NULL;
    byocl_dtype dtype;
    byocl_shape shape;
    size_t nbytes;
    ext_ref ref;
    byocl_status st = tensorio_onnx_header(tp, what, &dtype, &shape, &nbytes, err);
    if (st == BYOCL_OK)
        st = parse_entries(tp, what, &ref, err);
    if (st == BYOCL_OK)
        st = check_location(ref.location, what, err);
    if (st != BYOCL_OK)
        return st;
    char *path = beside(model_path, ref.location);
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    int failed = fd < 0 || fstat(fd, &sb) != 0 ? errno : 0;
    free(path);
    if (failed) {
        st = byocl_error_set(err, BYOCL_ERR_IO, "%s: external data '%s' cannot be read: %s",
                             what, ref.location, strerror(failed));
    } else if (!S_ISREG(sb.st_mode)) {
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "%s: external data '%s' is not a regular file", what,
                             ref.location);
    } else {
        uint64_t size = (uint64_t)sb.st_size;
        /* Without a length, the values run to the end of the file. */
        uint64_t length = ref.has_length || ref.offset > size ? ref.length : size - ref.offset;
        char sbuf[160];
        byocl_shape_str(&shape, sbuf, sizeof sbuf);
        if (ref.offset > size)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s: external data '%s' has %llu bytes, but offset %llu is past "
                                 "its end",
                                 what, ref.location, (unsigned long long)size,
                                 (unsigned long long)ref.offset);
        else if (length > size - ref.offset)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s: external data '%s' has %llu bytes, but offset %llu and "
                                 "length %llu reach past its end",
                                 what, ref.location, (unsigned long long)size,
                                 (unsigned long long)ref.offset, (unsigned long long)length);
        else if (length != nbytes)
            st = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s: external data '%s' gives %llu bytes (offset %llu), but "
                                 "dims %s of %s need %zu",
                                 what, ref.location, (unsigned long long)length,
                                 (unsigned long long)ref.offset, sbuf, byocl_dtype_name(dtype),
                                 nbytes);
        else
            st = read_range(fd, tp, &ref, nbytes, what, out, err);
    }
    if (fd >= 0)
        close(fd);
    return st;
}
