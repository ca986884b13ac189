"""Writes the ONNX TensorProto (.pb) fixtures of tests/test_tensor_pb.c into
tests/fixtures/tensor_pb/, with onnx's own serializer (Debian python3-onnx 1.12).
Run with /usr/bin/python3. The values are the ones the C test spells out:

  VALUES = [-1.5, 0, 2.25, 3, -7, 100] (shape (2, 3)) in every dtype, as raw_data
  (<dtype>_raw.pb, named "x") and in the dtype's typed field (<dtype>_typed.pb, unnamed);
  bool holds [True, False, True, True, False, True], the unsigned dtypes the UNSIGNED
  values. Plus files that must be refused."""

import os

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "tensor_pb"))

VALUES = [-1.5, 0, 2.25, 3, -7, 100]
BOOLS = [True, False, True, True, False, True]

# byocl dtype name -> (numpy dtype, ONNX data type, typed field)
DTYPES = {
    "f32": (np.float32, TensorProto.FLOAT, "float_data"),
    "f16": (np.float16, TensorProto.FLOAT16, "int32_data"),
    "i32": (np.int32, TensorProto.INT32, "int32_data"),
    "i64": (np.int64, TensorProto.INT64, "int64_data"),
    "i8": (np.int8, TensorProto.INT8, "int32_data"),
    "u8": (np.uint8, TensorProto.UINT8, "int32_data"),
    "bool": (np.bool_, TensorProto.BOOL, "int32_data"),
    "f64": (np.float64, TensorProto.DOUBLE, "double_data"),
    "i16": (np.int16, TensorProto.INT16, "int32_data"),
    "u16": (np.uint16, TensorProto.UINT16, "int32_data"),
    "u32": (np.uint32, TensorProto.UINT32, "uint64_data"),
    "u64": (np.uint64, TensorProto.UINT64, "uint64_data"),
}
# The unsigned ones hold these instead (uint64's beyond 2^53 and above 2^63, exact).
UNSIGNED = {
    "u8": [1, 0, 2, 3, 7, 100],
    "u16": [1, 0, 65535, 3, 7, 100],
    "u32": [1, 0, 4294967295, 3, 7, 100],
    "u64": [1, 0, 18446744073709551615, 9223372036854775808, 9007199254740993, 100],
}


def write(name, proto):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(proto.SerializeToString())


def array(tag):
    np_type = DTYPES[tag][0]
    if tag == "bool":
        return np.array(BOOLS, dtype=np.bool_).reshape(2, 3)
    if tag in UNSIGNED:  # -1.5 and -7 would wrap: keep them non-negative here
        return np.array(UNSIGNED[tag], dtype=np_type).reshape(2, 3)
    return np.array(VALUES, dtype=np.float64).astype(np_type).reshape(2, 3)


def typed(tag):
    np_type, onnx_type, field = DTYPES[tag]
    a = array(tag)
    t = TensorProto()
    t.dims.extend(a.shape)
    t.data_type = onnx_type
    if tag == "f16":  # ONNX keeps float16 as its bits in int32_data
        getattr(t, field).extend(int(b) for b in a.view(np.uint16).flatten())
    else:
        getattr(t, field).extend(a.flatten().tolist())
    return t


def main():
    os.makedirs(OUT, exist_ok=True)
    for tag in DTYPES:
        write(tag + "_raw.pb", numpy_helper.from_array(array(tag), "x"))
        write(tag + "_typed.pb", typed(tag))
    # bfloat16 (numpy has none): the top halves of the float32 VALUES (all exact), as
    # little-endian raw_data and as uint16 bit patterns in int32_data.
    bits = (np.array(VALUES, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    write("bf16_raw.pb", TensorProto(dims=[2, 3], data_type=TensorProto.BFLOAT16, name="x",
                                     raw_data=bits.astype("<u2").tobytes()))
    write("bf16_typed.pb", TensorProto(dims=[2, 3], data_type=TensorProto.BFLOAT16,
                                       int32_data=[int(b) for b in bits]))

    # A scalar and an empty tensor.
    write("scalar_f32.pb", numpy_helper.from_array(np.array(2.5, dtype=np.float32), "s"))
    write("empty_f32.pb", numpy_helper.from_array(np.zeros((0, 3), dtype=np.float32), "e"))

    # Refused: dtypes byocl lacks, external data, inconsistent fields.
    write("complex64.pb", numpy_helper.from_array(np.ones((2,), dtype=np.complex64), "u"))
    t = numpy_helper.from_array(np.ones((2, 3), dtype=np.float32), "short")
    t.raw_data = t.raw_data[:20]
    write("raw_short.pb", t)
    t = numpy_helper.from_array(np.ones((2,), dtype=np.float32), "both")
    t.float_data.extend([1.0, 2.0])
    write("both_fields.pb", t)
    t = TensorProto(dims=[2, 2], data_type=TensorProto.FLOAT, name="none")
    write("no_data.pb", t)
    t = TensorProto(dims=[3], data_type=TensorProto.INT64, name="wrong")
    t.float_data.extend([1.0, 2.0, 3.0])
    write("wrong_field.pb", t)
    t = TensorProto(dims=[3], data_type=TensorProto.INT32, name="count")
    t.int32_data.extend([1, 2])
    write("typed_short.pb", t)
    t = TensorProto(dims=[4], data_type=TensorProto.FLOAT, name="ext",
                    data_location=TensorProto.EXTERNAL)
    e = t.external_data.add()
    e.key, e.value = "location", "weights.bin"
    write("external.pb", t)
    t = TensorProto(dims=[2], data_type=99, name="unknown")
    write("unknown_dtype.pb", t)

    # Another message type: a (tiny) ModelProto.
    node = onnx.helper.make_node("Relu", ["x"], ["y"])
    vi = onnx.helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    vo = onnx.helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = onnx.helper.make_graph([node], "g", [vi], [vo])
    write("model.pb", onnx.helper.make_model(graph))


if __name__ == "__main__":
    main()
