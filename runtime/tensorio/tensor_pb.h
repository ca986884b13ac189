/* ONNX TensorProto <-> byocl tensors: shared by the .pb tensor files (tensor_pb.c) and the
 * ONNX importer (initializers, Constant nodes). The protobuf-c types stay opaque here so
 * that includers need not see the generated header. */
#ifndef BYOCL_TENSOR_PB_H
#define BYOCL_TENSOR_PB_H

#include <stdbool.h>
#include <stdint.h>

#include "byocl/tensor.h"

typedef struct Onnx__TensorProto Onnx__TensorProto;

/* ONNX TensorProto.DataType -> byocl dtype; false for the types byocl lacks
 * (double, int16, uint16, uint32, uint64, string, bfloat16, complex) and unknown ones. */
bool tensorio_onnx_to_dtype(int32_t onnx_type, byocl_dtype *out);
/* The ONNX data type of a byocl dtype. */
int32_t tensorio_onnx_from_dtype(byocl_dtype dtype);
/* How messages spell an ONNX data type: byocl's dtype names where they exist ("float32"),
 * otherwise ONNX's in lower case ("string", "complex64", "bfloat16"); "data type N" (in buf)
 * for an unknown one. Returns a static string or buf. */
const char *tensorio_onnx_dtype_name(int32_t onnx_type, char *buf, size_t len);
/* "float32, float16, int32, ..., uint64": what messages list as supported. */
extern const char tensorio_onnx_supported_dtypes[];

/* Checks what a TensorProto says of its values besides where they lie (dtype, segments,
 * rank, dims), with the messages of tensorio_tensor_from_onnx; gives their dtype, shape
 * and size in bytes. */
byocl_status tensorio_onnx_header(const Onnx__TensorProto *tp, const char *what,
                                  byocl_dtype *dtype, byocl_shape *shape, size_t *nbytes,
                                  byocl_error *err);
/* Whether the values lie in an external file (data_location EXTERNAL or external_data
 * entries): tensorio_tensor_from_onnx refuses those; the ONNX importer reads them. */
bool tensorio_onnx_is_external(const Onnx__TensorProto *tp);

/* Checks a TensorProto (dtype, dims, exactly one data field of the right size) and copies
 * its values into a new tensor. `what` names it in messages ("x.pb", "initializer 'w'").
 * Dtypes byocl lacks and external data are BYOCL_ERR_UNSUPPORTED; anything malformed is
 * BYOCL_ERR_INVALID. */
byocl_status tensorio_tensor_from_onnx(const Onnx__TensorProto *tp, const char *what,
                                       byocl_tensor **out, byocl_error *err);

#endif
