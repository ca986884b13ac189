/* An ONNX model being imported: its bytes and its ModelProto, weights aside (onnx_model.c). */
#ifndef BYOCL_ONNX_MODEL_H
#define BYOCL_ONNX_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "byocl/tensor.h"
#include "onnx.pb-c.h"
#include "onnx_wire.h"

typedef struct onnx_model {
    const char *path;              /* for messages, and where external data lies          */
    bool from_file;                /* read from `path` (else external data is refused)    */
    Onnx__ModelProto *proto;       /* without initializers' raw_data when `wire` has them */
    const Onnx__GraphProto *graph; /* proto->graph, never NULL once open                  */
    const uint8_t *data;           /* the serialized model: mapped, read, or the caller's */
    size_t len;
    void *map;                     /* data's mapping of the file, or NULL                 */
    void *owned;                   /* data as read when the file could not be mapped      */
    onnx_wire_skeleton wire;       /* where each initializer's raw_data lies (inits NULL:
                                      the proto was unpacked whole)                       */
} onnx_model;

/* Maps the file at `path` (reads it where it cannot be mapped) and unpacks its ModelProto
 * without the initializers' values. Malformed files are BYOCL_ERR_INVALID naming `path`. */
byocl_status onnx_model_open_file(const char *path, onnx_model *m, byocl_error *err);
/* The same from memory that the caller keeps until onnx_model_close. */
byocl_status onnx_model_open_mem(const void *data, size_t len, const char *path, onnx_model *m,
                                 byocl_error *err);
/* A tensor of the model (a Constant's value) as a new tensor; values in an external file
 * are read from it (onnx_external.c). `what` names it in messages. */
byocl_status onnx_model_tensor(const onnx_model *m, const Onnx__TensorProto *tp,
                               const char *what, byocl_tensor **out, byocl_error *err);
/* Initializer i's values as a new tensor, copied once from the model's bytes (and the
 * file's pages handed back to the kernel) or from its external file; `what` names it in
 * messages. */
byocl_status onnx_model_initializer(onnx_model *m, size_t i, const char *what,
                                    byocl_tensor **out, byocl_error *err);
void onnx_model_close(onnx_model *m);

#endif
