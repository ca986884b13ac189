/* byocl: tensor files. `.npy` (numpy's format), `.npz` (numpy's np.savez: a zip of
 * .npy members, stored or deflated), `.pb` (an ONNX TensorProto), and named tensor
 * collections ("params"). */
#ifndef BYOCL_TENSOR_IO_H
#define BYOCL_TENSOR_IO_H

#include "byocl/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct byocl_params byocl_params;

byocl_params *byocl_params_new(void);
void byocl_params_free(byocl_params *p); /* NULL is fine */
int byocl_params_count(const byocl_params *p);
const char *byocl_params_name(const byocl_params *p, int index);
byocl_tensor *byocl_params_tensor(const byocl_params *p, int index); /* borrowed */
byocl_tensor *byocl_params_find(const byocl_params *p, const char *name); /* borrowed */
/* Adds (or replaces) a named tensor; the params take a reference. */
byocl_status byocl_params_set(byocl_params *p, const char *name, byocl_tensor *t,
                              byocl_error *err);

/* .npy: every byocl dtype ('<f4', '<f2', '<i4', '<i8', '|i1', '|u1', '|b1'); C order only.
 * Fortran order, big-endian data, unknown dtypes and truncated data are errors that name
 * the file. */
byocl_status byocl_npy_read(const char *path, byocl_tensor **out, byocl_error *err);
byocl_status byocl_npy_read_mem(const void *data, size_t len, const char *what,
                                byocl_tensor **out, byocl_error *err);
/* Written to a temporary file then renamed: the file appears whole or not at all. */
byocl_status byocl_npy_write(const char *path, const byocl_tensor *t, byocl_error *err);
/* Serialized .npy bytes (malloc'ed). */
byocl_status byocl_npy_encode(const byocl_tensor *t, void **out, size_t *out_len,
                              byocl_error *err);

/* .npz: member "name.npy" becomes tensor "name". Written atomically, uncompressed
 * (as np.savez writes). */
byocl_status byocl_npz_read(const char *path, byocl_params **out, byocl_error *err);
/* The same from an archive in memory; `what` names it in messages. */
byocl_status byocl_npz_read_mem(const void *data, size_t len, const char *what,
                                byocl_params **out, byocl_error *err);
byocl_status byocl_npz_write(const char *path, const byocl_params *p, byocl_error *err);

/* .pb: one ONNX TensorProto, as the ONNX backend test suite stores its inputs and outputs.
 * Every byocl dtype (ONNX FLOAT, FLOAT16, INT32, INT64, INT8, UINT8, BOOL), values in
 * raw_data (little-endian) or in the dtype's typed field. Dtypes byocl lacks (double,
 * int16, ...) and external data are BYOCL_ERR_UNSUPPORTED; a truncated file, or one of
 * another message type (fields that make no sense for a tensor, a size that does not match
 * the dims), is BYOCL_ERR_INVALID naming the file. `name` may be NULL; otherwise it
 * receives the tensor's name, malloc'ed ("" when it has none): free() it. */
byocl_status byocl_pb_read(const char *path, byocl_tensor **out, char **name, byocl_error *err);
byocl_status byocl_pb_read_mem(const void *data, size_t len, const char *what,
                               byocl_tensor **out, char **name, byocl_error *err);
/* Writes `t` as a TensorProto with raw_data; `name` may be NULL (no name). Atomic. */
byocl_status byocl_pb_write(const char *path, const byocl_tensor *t, const char *name,
                            byocl_error *err);

/* Reads one tensor by the file's extension (case-insensitive): .npy; .npz with exactly one
 * member (more or none is an error listing the members); .pb. */
byocl_status byocl_tensor_read_file(const char *path, byocl_tensor **out, byocl_error *err);

#ifdef __cplusplus
}
#endif
#endif
