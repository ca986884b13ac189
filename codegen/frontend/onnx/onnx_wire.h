/* Protobuf's wire format, just enough to set a model's weights aside (onnx_wire.c). */
#ifndef BYOCL_ONNX_WIRE_H
#define BYOCL_ONNX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "byocl/error.h"

/* Where the values of one graph initializer lie in the serialized model. */
typedef struct onnx_wire_init {
    size_t offset, len; /* raw_data's bytes                                             */
    bool has_raw;       /* false: no raw_data (values in a typed field, or none at all) */
} onnx_wire_init;

/* A serialized ModelProto without the raw_data of its graph's initializers, and where
 * each of those lies in the original bytes: inits[i] is graph.initializer[i]'s. */
typedef struct onnx_wire_skeleton {
    uint8_t *data;
    size_t len;
    onnx_wire_init *inits;
    size_t n_inits;
} onnx_wire_skeleton;

/* Copies the ModelProto in data[0, len) without its initializers' raw_data, reading only
 * the headers of the fields it skips (a weight's bytes are not touched). BYOCL_ERR_INVALID
 * when the bytes are not a shape it handles (malformed protobuf, or a graph given in more
 * than one piece): the caller then unpacks the model whole, which reports what is wrong;
 * BYOCL_ERR_NOMEM when out of memory. Never fills an error: the caller words it. */
byocl_status onnx_wire_strip(const uint8_t *data, size_t len, onnx_wire_skeleton *out);
void onnx_wire_skeleton_free(onnx_wire_skeleton *s);

#endif
