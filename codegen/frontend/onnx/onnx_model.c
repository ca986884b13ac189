/* An ONNX model being imported. The file is mapped read-only, not read; its ModelProto is
 * unpacked without the initializers' raw_data (onnx_wire.c), so that checking the model
 * (its opset, its ops) touches no weight; each initializer's values are copied once,
 * straight from the mapping into the tensor that keeps them, when the importer needs
 * them, and the file's pages they came from are handed back at once. Loading a model
 * thus takes about its weights' size in memory, not three times that (the file read into
 * a buffer, protobuf-c's copy of each raw_data, the tensors). */
#define _DEFAULT_SOURCE /* madvise */
#include "onnx_model.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "onnx_external.h"
#include "tensorio/tensor_pb.h"

/* Unpacks m->data: the skeleton when the walk handles the bytes, else the whole. */
static byocl_status unpack(onnx_model *m, byocl_error *err)
{
    byocl_status st = onnx_wire_strip(m->data, m->len, &m->wire);
    if (st == BYOCL_ERR_NOMEM)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", m->path);
    if (st == BYOCL_OK) {
        m->proto = onnx__model_proto__unpack(NULL, m->wire.len, m->wire.data);
        free(m->wire.data); /* the records of where each raw_data lies stay */
        m->wire.data = NULL;
        m->wire.len = 0;
    } else {
        m->proto = onnx__model_proto__unpack(NULL, m->len, m->data);
    }
    if (!m->proto)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not an ONNX model (the protobuf data is truncated or "
                               "malformed)",
                               m->path);
    m->graph = m->proto->graph;
    if (m->proto->base.n_unknown_fields > 0 || !m->graph)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "%s: not an ONNX model: %s", m->path,
                               m->graph ? "it has fields that ModelProto does not define"
                                        : "it has no graph");
    /* One record per initializer, by construction; checked, as a wrong match would give
     * one initializer another's values. */
    if (m->wire.inits && m->graph->n_initializer != m->wire.n_inits)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not an ONNX model: %zu initializers, but %zu were found "
                               "in its bytes",
                               m->path, m->graph->n_initializer, m->wire.n_inits);
    return BYOCL_OK;
}

byocl_status onnx_model_open_mem(const void *data, size_t len, const char *path, onnx_model *m,
                                 byocl_error *err)
{
    *m = (onnx_model){.path = path, .data = data, .len = len};
    byocl_status st = unpack(m, err);
    if (st != BYOCL_OK)
        onnx_model_close(m);
    return st;
}

/* Maps a regular, non-empty file; false (nothing mapped) otherwise. */
static bool map_file(const char *path, onnx_model *m)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    struct stat sb;
    void *p = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size <= SIZE_MAX)
        p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd); /* the mapping stays */
    if (p == MAP_FAILED)
        return false;
    m->map = p;
    m->data = p;
    m->len = (size_t)sb.st_size;
    return true;
}

byocl_status onnx_model_open_file(const char *path, onnx_model *m, byocl_error *err)
{
    *m = (onnx_model){.path = path, .from_file = true};
    /* What cannot be mapped (a pipe, an empty file, no file) is read, and the reading
     * says what is wrong. */
    if (!map_file(path, m)) {
        size_t len;
        byocl_status st = base_file_read_all(path, &m->owned, &len, err);
        if (st != BYOCL_OK)
            return st;
        m->data = m->owned;
        m->len = len;
    }
    byocl_status st = unpack(m, err);
    if (st != BYOCL_OK)
        onnx_model_close(m);
    return st;
}

/* Hands the mapped pages wholly inside data[off, off + len) back to the kernel: they were
 * copied, and a later read maps them again from the file. */
static void release_pages(onnx_model *m, size_t off, size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!m->map || page <= 0)
        return;
    uintptr_t p = (uintptr_t)page;
    uintptr_t begin = ((uintptr_t)(m->data + off) + p - 1) / p * p;
    uintptr_t end = ((uintptr_t)(m->data + off) + len) / p * p;
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_DONTNEED); /* only a hint */
}

byocl_status onnx_model_tensor(const onnx_model *m, const Onnx__TensorProto *tp,
                               const char *what, byocl_tensor **out, byocl_error *err)
{
    if (!tensorio_onnx_is_external(tp))
        return tensorio_tensor_from_onnx(tp, what, out, err);
    *out = NULL;
    if (!m->from_file) /* no folder to look in, and a fuzzer's input must not read files */
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: values stored in an external file are only read for a "
                               "model loaded from a file",
                               what);
    return onnx_external_read(m->path, tp, what, out, err);
}

byocl_status onnx_model_initializer(onnx_model *m, size_t i, const char *what,
                                    byocl_tensor **out, byocl_error *err)
{
    const Onnx__TensorProto *tp = m->graph->initializer[i];
    if (!m->wire.inits || !m->wire.inits[i].has_raw)
        return onnx_model_tensor(m, tp, what, out, err);
    /* The skeleton's message with raw_data pointing into the model's bytes. */
    const onnx_wire_init *at = &m->wire.inits[i];
    Onnx__TensorProto with_raw = *tp;
    with_raw.has_raw_data = 1;
    with_raw.raw_data.data = (uint8_t *)(m->data + at->offset);
    with_raw.raw_data.len = at->len;
    byocl_status st = onnx_model_tensor(m, &with_raw, what, out, err);
    release_pages(m, at->offset, at->len);
    return st;
}

void onnx_model_close(onnx_model *m)
{
    if (m->proto)
        onnx__model_proto__free_unpacked(m->proto, NULL);
    onnx_wire_skeleton_free(&m->wire);
    if (m->map)
        munmap(m->map, m->len);
    free(m->owned);
    *m = (onnx_model){0};
}
