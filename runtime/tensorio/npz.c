/* .npz files: a zip archive of .npy members, as np.savez (stored) and
 * np.savez_compressed (deflated) write them. Read and written through libzip. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "byocl/limits.h"
#include "byocl/tensor_io.h"
#include "base/file_util.h"

#define NPY_SUFFIX ".npy"

static byocl_status zip_open_error(const char *path, int code, byocl_error *err)
{
    if (code == ZIP_ER_NOENT)
        return byocl_error_set(err, BYOCL_ERR_IO, "cannot open %s: %s", path, strerror(ENOENT));
    if (code == ZIP_ER_NOZIP)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not a zip archive (an .npz is what np.savez writes)", path);
    zip_error_t ze;
    zip_error_init_with_code(&ze, code);
    byocl_error_set(err, code == ZIP_ER_OPEN || code == ZIP_ER_READ ? BYOCL_ERR_IO
                                                                      : BYOCL_ERR_INVALID,
                    "%s: cannot read the zip archive: %s", path, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    return err ? err->status : BYOCL_ERR_INVALID;
}

/* Room for a member's .npy header over its tensor's bytes. */
#define NPZ_MEMBER_HEADER_MAX 65536

/* Deflate expands data at most 1032-fold. */
#define DEFLATE_MAX_RATIO 1032

/* Reads member `index` whole (decompressed, CRC-checked) into a malloc'ed buffer. The
 * archive is `archive_len` bytes long: a member's size beyond what its bytes in there can
 * inflate to is refused before anything is allocated for it. */
static byocl_status read_member(zip_t *za, const char *path, uint64_t archive_len,
                                zip_uint64_t index, const zip_stat_t *st, void **out,
                                byocl_error *err)
{
    *out = NULL;
    if (!(st->valid & ZIP_STAT_SIZE) || st->size >= SIZE_MAX)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: member %s has no usable size", path,
                               st->name);
    uint64_t packed = archive_len;
    if ((st->valid & ZIP_STAT_COMP_SIZE) && st->comp_size < packed)
        packed = st->comp_size;
    if (st->size / DEFLATE_MAX_RATIO > packed)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: corrupt member %s: it claims %llu bytes, more than its %llu "
                               "compressed bytes can hold",
                               path, st->name, (unsigned long long)st->size,
                               (unsigned long long)packed);
    /* A member is one tensor and its header: the one-tensor limit bounds it before anything
     * is inflated. */
    byocl_limits limits;
    if (byocl_limits_get(&limits, err) != BYOCL_OK)
        return err ? err->status : BYOCL_ERR_INVALID;
    if (limits.max_tensor_bytes && st->size > limits.max_tensor_bytes + NPZ_MEMBER_HEADER_MAX)
        return byocl_error_set(err, BYOCL_ERR_NOMEM,
                               "%s: member %s: %llu bytes is over the limit of %llu bytes for "
                               "one tensor (%s)",
                               path, st->name, (unsigned long long)st->size,
                               (unsigned long long)limits.max_tensor_bytes,
                               BYOCL_MAX_TENSOR_BYTES_ENV);
    char *buf = malloc((size_t)st->size + 1);
    if (!buf)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory reading member %s",
                               path, st->name);
    zip_file_t *zf = zip_fopen_index(za, index, 0);
    if (!zf) {
        byocl_error_set(err, BYOCL_ERR_INVALID, "%s: cannot open member %s: %s", path, st->name,
                        zip_strerror(za));
        free(buf);
        return BYOCL_ERR_INVALID;
    }
    /* Read one byte past the size: libzip checks the CRC when it reaches the end. */
    zip_uint64_t got = 0;
    zip_int64_t n;
    while ((n = zip_fread(zf, buf + got, st->size + 1 - got)) > 0 &&
           got + (zip_uint64_t)n <= st->size)
        got += (zip_uint64_t)n;
    byocl_status status = BYOCL_OK;
    if (n < 0)
        status = byocl_error_set(err, BYOCL_ERR_INVALID, "%s: corrupt member %s: %s", path,
                                 st->name, zip_file_strerror(zf));
    else if (n > 0 || got != st->size)
        status = byocl_error_set(err, BYOCL_ERR_INVALID,
                                 "%s: corrupt member %s: expected %llu bytes, found %s %llu",
                                 path, st->name, (unsigned long long)st->size,
                                 n > 0 ? "more than" : "", (unsigned long long)got);
    zip_fclose(zf);
    if (status != BYOCL_OK) {
        free(buf);
        return status;
    }
    *out = buf;
    return BYOCL_OK;
}

static byocl_status read_npz_entries(zip_t *za, const char *path, uint64_t archive_len,
                                     byocl_params *params, byocl_error *err)
{
    zip_int64_t count = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < count; i++) {
        zip_stat_t st;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
            return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: cannot read zip entry %lld: %s",
                                   path, (long long)i, zip_strerror(za));
        size_t name_len = strlen(st.name), suffix_len = strlen(NPY_SUFFIX);
        if (name_len <= suffix_len || strcmp(st.name + name_len - suffix_len, NPY_SUFFIX) != 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: member '%s' is not a .npy array (an .npz holds only "
                                   "NAME.npy members)",
                                   path, st.name);
        void *data;
        byocl_status s = read_member(za, path, archive_len, (zip_uint64_t)i, &st, &data, err);
        if (s != BYOCL_OK)
            return s;
        size_t what_len = strlen(path) + name_len + 16;
        char *what = malloc(what_len);
        char *name = strndup(st.name, name_len - suffix_len);
        byocl_tensor *t = NULL;
        if (!what || !name) {
            s = byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", path);
        } else {
            snprintf(what, what_len, "%s (member %s)", path, st.name);
            s = byocl_npy_read_mem(data, (size_t)st.size, what, &t, err);
        }
        if (s == BYOCL_OK)
            s = byocl_params_set(params, name, t, err);
        byocl_tensor_unref(t);
        free(data);
        free(what);
        free(name);
        if (s != BYOCL_OK)
            return s;
    }
    return BYOCL_OK;
}

/* Reads every member of the open archive (`archive_len` bytes) and closes it. */
static byocl_status read_npz_archive(zip_t *za, const char *path, uint64_t archive_len,
                                     byocl_params **out, byocl_error *err)
{
    byocl_params *params = byocl_params_new();
    byocl_status s = params ? read_npz_entries(za, path, archive_len, params, err)
                            : byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", path);
    zip_discard(za); /* read-only: nothing to write back */
    if (s != BYOCL_OK) {
        byocl_params_free(params);
        return s;
    }
    *out = params;
    return BYOCL_OK;
}

byocl_status byocl_npz_read(const char *path, byocl_params **out, byocl_error *err)
{
    *out = NULL;
    if (!path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "no file name given");
    /* libzip opens an empty file as an empty archive; numpy would not. */
    struct stat sb;
    bool regular = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    if (regular && sb.st_size == 0)
        return zip_open_error(path, ZIP_ER_NOZIP, err);
    int code = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY, &code);
    if (!za)
        return zip_open_error(path, code, err);
    return read_npz_archive(za, path, regular ? (uint64_t)sb.st_size : UINT64_MAX, out, err);
}

byocl_status byocl_npz_read_mem(const void *data, size_t len, const char *what,
                                byocl_params **out, byocl_error *err)
{
    *out = NULL;
    if (!what)
        what = "<memory>";
    if (!data || len == 0) /* as for an empty file */
        return zip_open_error(what, ZIP_ER_NOZIP, err);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(data, len, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
    if (!za) {
        zip_source_free(src); /* NULL is fine; an archive that opened owns its source */
        int code = zip_error_code_zip(&ze);
        zip_error_fini(&ze);
        return zip_open_error(what, code, err);
    }
    zip_error_fini(&ze);
    return read_npz_archive(za, what, len, out, err);
}

/* ------------------------------------------------------------- writing */

/* Adds one stored "NAME.npy" member. */
static byocl_status add_member(zip_t *za, const char *path, const char *name,
                               const byocl_tensor *t, byocl_error *err)
{
    void *npy;
    size_t len;
    byocl_status s = byocl_npy_encode(t, &npy, &len, err);
    if (s != BYOCL_OK) {
        byocl_error_prefix(err, "%s: member %s: ", path, name);
        return s;
    }
    size_t member_len = strlen(name) + sizeof NPY_SUFFIX;
    char *member = malloc(member_len);
    zip_source_t *src = member ? zip_source_buffer(za, npy, len, 1) : NULL;
    if (!src) {
        free(npy);
        free(member);
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory adding %s", path, name);
    }
    snprintf(member, member_len, "%s" NPY_SUFFIX, name);
    zip_int64_t index = zip_file_add(za, member, src, ZIP_FL_ENC_UTF_8);
    free(member);
    if (index < 0) {
        zip_source_free(src);
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: cannot add member %s: %s", path,
                               name, zip_strerror(za));
    }
    /* Stored like np.savez; a fixed time (1980-01-01) makes the bytes reproducible. */
    if (zip_set_file_compression(za, (zip_uint64_t)index, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(za, (zip_uint64_t)index, 315532800, 0) != 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: cannot add member %s: %s", path,
                               name, zip_strerror(za));
    return BYOCL_OK;
}

/* Builds the archive in memory, so that the file itself is written in one atomic step. */
static byocl_status build_npz(const char *path, const byocl_params *p, void **out,
                              size_t *out_len, byocl_error *err)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *mem = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = NULL;
    if (mem) {
        zip_source_keep(mem); /* zip_close must not free it: we read the result from it */
        za = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
    }
    if (!za) {
        byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: cannot create a zip archive: %s", path,
                        zip_error_strerror(&ze));
        zip_error_fini(&ze);
        if (mem)
            zip_source_free(mem);
        return BYOCL_ERR_NOMEM;
    }
    zip_error_fini(&ze);
    byocl_status s = BYOCL_OK;
    for (int i = 0; s == BYOCL_OK && i < byocl_params_count(p); i++)
        s = add_member(za, path, byocl_params_name(p, i), byocl_params_tensor(p, i), err);
    if (s == BYOCL_OK && zip_close(za) != 0)
        s = byocl_error_set(err, BYOCL_ERR_IO, "%s: cannot write the zip archive: %s", path,
                            zip_strerror(za));
    if (s != BYOCL_OK) {
        zip_discard(za);
        zip_source_free(mem);
        return s;
    }
    zip_stat_t st;
    char *buf = NULL;
    if (zip_source_stat(mem, &st) == 0 && (st.valid & ZIP_STAT_SIZE) && st.size < SIZE_MAX &&
        (buf = malloc((size_t)st.size + 1)) != NULL && zip_source_open(mem) == 0) {
        zip_int64_t n = st.size ? zip_source_read(mem, buf, st.size) : 0;
        zip_source_close(mem);
        if (n == (zip_int64_t)st.size) {
            zip_source_free(mem);
            *out = buf;
            *out_len = (size_t)st.size;
            return BYOCL_OK;
        }
    }
    free(buf);
    zip_source_free(mem);
    return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: cannot assemble the zip archive", path);
}

byocl_status byocl_npz_write(const char *path, const byocl_params *p, byocl_error *err)
{
    /* libzip writes nothing for an archive without members; numpy writes the 22-byte
     * end-of-central-directory record alone. */
    static const char empty_zip[22] = {'P', 'K', 5, 6};
    if (byocl_params_count(p) == 0) {
        byocl_file_part part = {empty_zip, sizeof empty_zip};
        return base_file_write_atomic(path, &part, 1, err);
    }
    void *data = NULL;
    size_t len = 0;
    byocl_status s = build_npz(path, p, &data, &len, err);
    if (s != BYOCL_OK)
        return s;
    byocl_file_part part = {data, len};
    s = base_file_write_atomic(path, &part, 1, err);
    free(data);
    return s;
}
