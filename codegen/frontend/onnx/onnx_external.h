/* ONNX external data: a tensor whose values lie in another file, next to the model
 * (onnx_external.c). */
#ifndef BYOCL_ONNX_EXTERNAL_H
#define BYOCL_ONNX_EXTERNAL_H

#include "byocl/tensor.h"
#include "onnx.pb-c.h"

/* The values of `tp`, whose data_location is EXTERNAL, as a new tensor: its external_data
 * entries (location, offset, length; checksum ignored) name a range of a file in the
 * folder of `model_path` or below it. Only that range is read (mapped, copied into the
 * tensor, unmapped). A location that is absolute or leaves the folder, a missing file, a
 * range past its end, a length other than the tensor's size, or an unknown key are
 * BYOCL_ERR_INVALID; `what` names the tensor in messages. */
byocl_status onnx_external_read(const char *model_path, const Onnx__TensorProto *tp,
                                const char *what, byocl_tensor **out, byocl_error *err);

#endif
