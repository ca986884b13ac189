/* TVM's #[metadata] section: the JSON that `mod.astext()` writes after the Relay text,
 * holding the tensors that `meta[relay.Constant][K]` refers to, and the NDArray save
 * format each tensor is stored in (base64 inside the JSON).
 *
 * The JSON (TVM's SaveJSON of the meta table):
 *   {"root": R, "nodes": [...], "b64ndarrays": ["P6G0lvBAXt0AAAAA...", ...],
 *    "attrs": {"tvm_version": "0.8.0"}}
 * nodes[R] is a Map ("Map", or "StrMap" in older TVM) from kinds to Arrays: with "keys"
 * (the kind names) and "data" (node indices of the Arrays, in the same order), or with
 * "data" alone as key, value, key, value, ... where each key is a "runtime.String" node
 * whose "repr_str" is the name. The Array of kind "relay.Constant" lists, in K order, the
 * nodes of type "relay.Constant"; such a node's attrs.data is the index (a string) of its
 * tensor in b64ndarrays. Other nodes (null, types, virtual devices) are not read.
 *
 * An NDArray blob, little-endian: uint64 magic 0xDD5E40F096B4A13F, uint64 reserved,
 * DLDevice (int32 type, int32 id), int32 ndim, DLDataType (uint8 code, uint8 bits,
 * uint16 lanes), int64 shape[ndim], int64 data size in bytes, then the data in C order.
 * byocl's dtypes map as byocl_dtype_to_dlpack says (bool is {kDLUInt, 1}, one byte per
 * element); reading also takes bool as DLPack's kDLBool with 8 bits. */
#ifndef BYOCL_TEXT_METADATA_H
#define BYOCL_TEXT_METADATA_H

#include <stddef.h>

#include "byocl/tensor.h"
#include "byocl/tensor_io.h"
#include "base/textbuf.h"

/* Reads the section's JSON, json[0..len), which starts at line:col of `filename` (the
 * character after `#[metadata]`). On success *out holds each relay.Constant as
 * "relay.Constant.K" (the caller frees it). Errors read "FILE:LINE:COL: error: #[metadata]
 * PATH: what is wrong", LINE:COL and PATH (b64ndarrays[2], nodes[3].attrs.data) naming
 * the JSON value at fault. */
byocl_status text_metadata_read(const char *json, size_t len, const char *filename, int line,
                                int col, byocl_params **out, byocl_error *err);

/* Appends the section for constants[0..n) (constant K is consts[K]): a blank line,
 * "#[metadata]\n" and the JSON, laid out as TVM writes them. Out of memory: out->oom. */
void text_metadata_print(byocl_textbuf *out, const byocl_tensor *const *consts, int n);

/* A tensor from an NDArray blob. Errors say what is wrong (the magic, a size, the dtype);
 * the caller adds where the blob came from. */
byocl_status text_metadata_decode_ndarray(const void *blob, size_t len, byocl_tensor **out,
                                          byocl_error *err);
/* The NDArray blob of a tensor (device CPU): malloc'ed, *len bytes; NULL when out of
 * memory. */
void *text_metadata_encode_ndarray(const byocl_tensor *t, size_t *len);

#endif
