/* ONNX TensorProto: the `.pb` tensor files of the ONNX backend test suite, and the tensors
 * inside .onnx models (initializers, Constant nodes). Values sit either in raw_data
 * (little-endian bytes, possibly unaligned inside the protobuf buffer: copied with memcpy)
 * or in the field for the dtype (float_data; int32_data for int32, int16, int8, uint16,
 * uint8, bool and float16's and bfloat16's bits; int64_data; uint64_data for uint32 and uint64). Protobuf does not say which message a buffer holds, so a
 * file of another message type may parse; every field is checked to make sense. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byocl/tensor_io.h"
#include "base/file_util.h"
#include "onnx.pb-c.h"
#include "tensor_pb.h"

const char tensorio_onnx_supported_dtypes[] = BYOCL_DTYPE_NAMES;

/* byocl dtype -> ONNX data type, in byocl_dtype order. */
static const int32_t onnx_of_dtype[BYOCL_DTYPE_COUNT] = {
    [BYOCL_FLOAT32] = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
    [BYOCL_FLOAT16] = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
    [BYOCL_INT32] = ONNX__TENSOR_PROTO__DATA_TYPE__INT32,
    [BYOCL_INT64] = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
    [BYOCL_INT8] = ONNX__TENSOR_PROTO__DATA_TYPE__INT8,
    [BYOCL_UINT8] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8,
    [BYOCL_BOOL] = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
    [BYOCL_FLOAT64] = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE,
    [BYOCL_INT16] = ONNX__TENSOR_PROTO__DATA_TYPE__INT16,
    [BYOCL_UINT16] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT16,
    [BYOCL_UINT32] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32,
    [BYOCL_UINT64] = ONNX__TENSOR_PROTO__DATA_TYPE__UINT64,
    [BYOCL_BFLOAT16] = ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16,
};

bool tensorio_onnx_to_dtype(int32_t onnx_type, byocl_dtype *out)
{
    for (int d = 0; d < BYOCL_DTYPE_COUNT; d++) {
        if (onnx_of_dtype[d] == onnx_type) {
            *out = (byocl_dtype)d;
            return true;
        }
    }
    return false;
}

int32_t tensorio_onnx_from_dtype(byocl_dtype dtype) { return onnx_of_dtype[dtype]; }

const char *tensorio_onnx_dtype_name(int32_t onnx_type, char *buf, size_t len)
{
    static const char *const others[] = {
        [ONNX__TENSOR_PROTO__DATA_TYPE__STRING] = "string",
        [ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64] = "complex64",
        [ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128] = "complex128",
    };
    byocl_dtype d;
    if (tensorio_onnx_to_dtype(onnx_type, &d))
        return byocl_dtype_name(d);
    if (onnx_type >= 0 && onnx_type < (int32_t)(sizeof others / sizeof others[0]) &&
        others[onnx_type])
        return others[onnx_type];
    snprintf(buf, len, "data type %d", (int)onnx_type);
    return buf;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* The typed fields that hold values, with their counts; raw_data counts as one. */
typedef struct data_field {
    const char *name;
    size_t count;
} data_field;

/* Which typed field ONNX stores each byocl dtype in (when raw_data is not used). */
static const char *typed_field_of(byocl_dtype dtype)
{
    switch (dtype) {
    case BYOCL_FLOAT32:
        return "float_data";
    case BYOCL_INT64:
        return "int64_data";
    case BYOCL_FLOAT64:
        return "double_data";
    case BYOCL_UINT32:
    case BYOCL_UINT64:
        return "uint64_data";
    default:
        return "int32_data";
    }
}

static void fill_from_typed(const Onnx__TensorProto *tp, byocl_tensor *t)
{
    int64_t n = byocl_tensor_numel(t);
    void *data = byocl_tensor_data(t);
    if (n == 0) /* the typed field is then empty: protobuf-c leaves its pointer NULL */
        return;
    switch (byocl_tensor_dtype(t)) {
    case BYOCL_FLOAT32:
        memcpy(data, tp->float_data, (size_t)n * sizeof(float));
        break;
    case BYOCL_INT64:
        memcpy(data, tp->int64_data, (size_t)n * sizeof(int64_t));
        break;
    case BYOCL_INT32:
        memcpy(data, tp->int32_data, (size_t)n * sizeof(int32_t));
        break;
    case BYOCL_FLOAT64:
        memcpy(data, tp->double_data, (size_t)n * sizeof(double));
        break;
    case BYOCL_FLOAT16: /* the half's bits, zero-extended */
    case BYOCL_BFLOAT16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)data)[i] = (uint16_t)tp->int32_data[i];
        break;
    case BYOCL_INT8:
        for (int64_t i = 0; i < n; i++)
            ((int8_t *)data)[i] = (int8_t)tp->int32_data[i];
        break;
    case BYOCL_UINT8:
    case BYOCL_BOOL:
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)data)[i] = (uint8_t)tp->int32_data[i];
        break;
    case BYOCL_INT16:
        for (int64_t i = 0; i < n; i++)
            ((int16_t *)data)[i] = (int16_t)tp->int32_data[i];
        break;
    case BYOCL_UINT16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)data)[i] = (uint16_t)tp->int32_data[i];
        break;
    case BYOCL_UINT32:
        for (int64_t i = 0; i < n; i++)
            ((uint32_t *)data)[i] = (uint32_t)tp->uint64_data[i];
        break;
    case BYOCL_UINT64:
        memcpy(data, tp->uint64_data, (size_t)n * sizeof(uint64_t));
        break;
    case BYOCL_DTYPE_COUNT:
        break;
    }
}

/* Finds the one field that holds the values; more than one is an error. */
static byocl_status find_data_field(const Onnx__TensorProto *tp, const char *what,
                                    data_field *out, byocl_error *err)
{
    const data_field fields[] = {
        {"raw_data", tp->has_raw_data ? 1 : 0}, {"float_data", tp->n_float_data},
        {"int32_data", tp->n_int32_data},        {"int64_data", tp->n_int64_data},
        {"double_data", tp->n_double_data},      {"uint64_data", tp->n_uint64_data},
        {"string_data", tp->n_string_data},
    };
    out->name = NULL;
    out->count = 0;
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        if (fields[k].count == 0)
            continue;
        if (out->name)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: holds values in both %s and %s (a tensor uses one)",
                                   what, out->name, fields[k].name);
        *out = fields[k];
    }
    return BYOCL_OK;
}

byocl_status tensorio_onnx_header(const Onnx__TensorProto *tp, const char *what,
                                  byocl_dtype *dtype_out, byocl_shape *shape_out,
                                  size_t *nbytes_out, byocl_error *err)
{
    char tbuf[32];
    if (!tp->has_data_type || tp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not an ONNX TensorProto: it has no data_type", what);
    byocl_dtype dtype;
    if (!tensorio_onnx_to_dtype(tp->data_type, &dtype)) {
        const char *name = tensorio_onnx_dtype_name(tp->data_type, tbuf, sizeof tbuf);
        if (tp->data_type < 0 || tp->data_type > ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: not an ONNX TensorProto: unknown %s", what, name);
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: dtype %s is not supported (byocl has %s)", what, name,
                               tensorio_onnx_supported_dtypes);
    }
    if (tp->segment)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: segmented tensors are not supported", what);
    if (tp->n_dims > BYOCL_MAX_RANK)
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: rank %zu is more than byocl's maximum %d", what, tp->n_dims,
                               BYOCL_MAX_RANK);
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: not an ONNX TensorProto: dimension %zu is %lld", what,
                                   i, (long long)tp->dims[i]);
    byocl_shape shape = byocl_shape_make((int)tp->n_dims, tp->dims);
    int64_t numel = byocl_shape_numel(&shape);
    if (numel < 0 || (uint64_t)numel > SIZE_MAX / byocl_dtype_size(dtype)) {
        char sbuf[160];
        byocl_shape_str(&shape, sbuf, sizeof sbuf);
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not an ONNX TensorProto: dims %s are too large", what,
                               sbuf);
    }
    *dtype_out = dtype;
    *shape_out = shape;
    *nbytes_out = (size_t)numel * byocl_dtype_size(dtype);
    return BYOCL_OK;
}

bool tensorio_onnx_is_external(const Onnx__TensorProto *tp)
{
    return (tp->has_data_location &&
            tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
           tp->n_external_data > 0;
}

byocl_status tensorio_tensor_from_onnx(const Onnx__TensorProto *tp, const char *what,
                                       byocl_tensor **out, byocl_error *err)
{
    *out = NULL;
    byocl_dtype dtype;
    byocl_shape shape;
    size_t nbytes;
    byocl_status st = tensorio_onnx_header(tp, what, &dtype, &shape, &nbytes, err);
    if (st != BYOCL_OK)
        return st;
    if (tensorio_onnx_is_external(tp))
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: values stored in an external file are not supported", what);
    char sbuf[160];
    byocl_shape_str(&shape, sbuf, sizeof sbuf);
    int64_t numel = byocl_shape_numel(&shape);

    data_field field;
    st = find_data_field(tp, what, &field, err);
    if (st != BYOCL_OK)
        return st;
    if (!field.name && numel > 0)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: has no values for its %lld element%s (dims %s)", what,
                               (long long)numel, numel == 1 ? "" : "s", sbuf);
    bool raw = field.name && strcmp(field.name, "raw_data") == 0;
    if (raw && tp->raw_data.len != nbytes)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: raw_data has %zu bytes, but dims %s of %s need %zu", what,
                               tp->raw_data.len, sbuf, byocl_dtype_name(dtype), nbytes);
    if (raw && !host_is_little_endian())
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               "%s: raw_data is little-endian; this host is not", what);
    if (field.name && !raw) {
        if (strcmp(field.name, typed_field_of(dtype)) != 0)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: %s values are stored in %s, but ONNX keeps them in %s",
                                   what, byocl_dtype_name(dtype), field.name,
                                   typed_field_of(dtype));
        if (field.count != (size_t)numel)
            return byocl_error_set(err, BYOCL_ERR_INVALID,
                                   "%s: %s has %zu values, but dims %s need %lld", what,
                                   field.name, field.count, sbuf, (long long)numel);
    }

    byocl_tensor *t = byocl_tensor_new(dtype, &shape, err);
    if (!t) {
        byocl_error_prefix(err, "%s: ", what);
        return err ? err->status : BYOCL_ERR_NOMEM;
    }
    if (raw && nbytes > 0)
        memcpy(byocl_tensor_data(t), tp->raw_data.data, nbytes);
    else if (field.name)
        fill_from_typed(tp, t);
    if (dtype == BYOCL_BOOL) { /* byocl keeps bools as 0/1 */
        uint8_t *b = byocl_tensor_data(t);
        for (int64_t i = 0; i < numel; i++)
            b[i] = b[i] != 0;
    }
    *out = t;
    return BYOCL_OK;
}

/* ------------------------------------------------------------ .pb files */

byocl_status byocl_pb_read_mem(const void *data, size_t len, const char *what,
                               byocl_tensor **out, char **name, byocl_error *err)
{
    *out = NULL;
    if (name)
        *name = NULL;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, data);
    if (!tp)
        return byocl_error_set(err, BYOCL_ERR_INVALID,
                               "%s: not an ONNX TensorProto (the protobuf data is truncated or "
                               "malformed)",
                               what);
    byocl_status st = BYOCL_OK;
    if (tp->base.n_unknown_fields > 0)
        st = byocl_error_set(err, BYOCL_ERR_INVALID,
                             "%s: not an ONNX TensorProto: it has fields that TensorProto does "
                             "not define (another message type?)",
                             what);
    byocl_tensor *t = NULL;
    if (st == BYOCL_OK)
        st = tensorio_tensor_from_onnx(tp, what, &t, err);
    if (st == BYOCL_OK && name) {
        const char *n = tp->name ? tp->name : "";
        *name = malloc(strlen(n) + 1);
        if (!*name) {
            byocl_tensor_unref(t);
            t = NULL;
            st = byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory", what);
        } else {
            memcpy(*name, n, strlen(n) + 1);
        }
    }
    onnx__tensor_proto__free_unpacked(tp, NULL);
    *out = t;
    return st;
}

byocl_status byocl_pb_read(const char *path, byocl_tensor **out, char **name, byocl_error *err)
{
    void *data;
    size_t len;
    *out = NULL;
    if (name)
        *name = NULL;
    byocl_status st = base_file_read_all(path, &data, &len, err);
    if (st != BYOCL_OK)
        return st;
    st = byocl_pb_read_mem(data, len, path, out, name, err);
    free(data);
    return st;
}

byocl_status byocl_pb_write(const char *path, const byocl_tensor *t, const char *name,
                            byocl_error *err)
{
    if (!t || !path)
        return byocl_error_set(err, BYOCL_ERR_INVALID, "byocl_pb_write: no tensor or path");
    if (!host_is_little_endian())
        return byocl_error_set(err, BYOCL_ERR_UNSUPPORTED,
                               ".pb writing needs a little-endian host");
    const byocl_shape *shape = byocl_tensor_shape(t);
    int64_t dims[BYOCL_MAX_RANK];
    memcpy(dims, shape->dims, sizeof dims);
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.n_dims = (size_t)shape->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = tensorio_onnx_from_dtype(byocl_tensor_dtype(t));
    /* protobuf-c's fields are not const; packing only reads them. */
    tp.name = name && *name ? (char *)name : NULL;
    tp.has_raw_data = 1;
    tp.raw_data.len = byocl_tensor_nbytes(t);
    tp.raw_data.data = (uint8_t *)byocl_tensor_cdata(t);
    size_t len = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return byocl_error_set(err, BYOCL_ERR_NOMEM, "%s: out of memory encoding %zu bytes",
                               path, len);
    onnx__tensor_proto__pack(&tp, buf);
    byocl_file_part part = {buf, len};
    byocl_status st = base_file_write_atomic(path, &part, 1, err);
    free(buf);
    return st;
}
