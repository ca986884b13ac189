"""Writes the input files of the bad-input corpus (tests/bad/*.cases, run by
tests/test_bad_inputs.c) into tests/bad/text/, tests/bad/onnx/ and tests/bad/tensor/.
Run with /usr/bin/python3 (Debian's python3-onnx 1.12 for the .onnx files); the files are
small and committed, so the tests need neither. Each file is broken in one way, named by
its file name; tests/bad/*.cases say which command reads it and what it must print."""

import os
import struct
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def write(sub, name, data):
    os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(HERE, sub, name), mode) as f:
        f.write(data)


# ------------------------------------------------------------------ text IR

FN = "def @main(%x: Tensor[(4), float32]) {\n"


def text_files():
    write("text", "deep_calls.relay", FN + "  " + "abs(" * 250 + "%x" + ")" * 250 + "\n}\n")
    write("text", "deep_tuples.relay", FN + "  " + "(" * 250 + "%x" + ",)" * 250 + "\n}\n")
    write("text", "deep_types.relay",
          "def @main(%x: " + "(" * 250 + "Tensor[(4), float32]" + ",)" * 250 + ") {\n  %x\n}\n")
    write("text", "rank_20.relay",
          "def @main(%x: Tensor[(" + ", ".join(["1"] * 20) + "), float32]) {\n  %x\n}\n")
    write("text", "dim_too_big.relay",
          "def @main(%x: Tensor[(99999999999999999999), float32]) {\n  %x\n}\n")
    write("text", "numel_overflow.relay",
          "def @main(%x: Tensor[(4294967296, 4294967296, 4294967296), float32]) {\n"
          "  nn.relu(%x)\n}\n")
    write("text", "broadcast_overflow.relay",
          "def @main(%x: Tensor[(4294967296, 1), int8], %y: Tensor[(1, 4294967296), int8]) {\n"
          "  add(%x, %y)\n}\n")
    write("text", "tensor_4tb.relay",
          "def @main(%x: Tensor[(1000000, 1000000), float32]) {\n  nn.relu(%x)\n}\n")
    write("text", "recursive_self.relay",
          FN + "  @f(%x)\n}\n"
          "def @f(%y: Tensor[(4), float32]) {\n  @f(%y)\n}\n")
    write("text", "recursive_mutual.relay",
          FN + "  @f(%x)\n}\n"
          "def @f(%y: Tensor[(4), float32]) {\n  @g(%y)\n}\n"
          "def @g(%z: Tensor[(4), float32]) {\n  @f(%z)\n}\n")
    write("text", "huge_attr_list.relay",
          "def @main(%x: Tensor[(1, 1, 4, 4), float32]) {\n"
          "  nn.max_pool2d(%x, pool_size=[" + ", ".join(["1"] * 20000) + "])\n}\n")
    write("text", "unknown_op.relay", FN + "  nn.frobnicate(%x)\n}\n")
    write("text", "undefined_var.relay", FN + "  add(%x, %y)\n}\n")
    write("text", "unknown_global.relay", FN + "  @nowhere(%x)\n}\n")
    write("text", "shape_mismatch.relay",
          "def @main(%x: Tensor[(4), float32], %y: Tensor[(3), float32]) {\n"
          "  add(%x, %y)\n}\n")
    write("text", "empty.relay", "")
    write("text", "unclosed_body.relay", FN + "  nn.relu(%x)\n")
    write("text", "duplicate_param.relay",
          "def @main(%x: Tensor[(4), float32], %x: Tensor[(4), float32]) {\n  %x\n}\n")
    write("text", "binary_junk.relay", bytes(range(256)))
    write("text", "unterminated_string.relay",
          FN + '  %0 = annotation.compiler_begin(%x, compiler="opencl);\n  %0\n}\n')
    # annotations
    write("text", "annot_mismatch.relay",
          FN + '  %0 = annotation.compiler_begin(%x, compiler="opencl");\n'
          "  %1 = nn.relu(%0);\n"
          '  annotation.compiler_end(%1, compiler="other")\n}\n')
    write("text", "annot_end_only.relay",
          FN + "  %0 = nn.relu(%x);\n"
          '  annotation.compiler_end(%0, compiler="opencl")\n}\n')
    write("text", "annot_reenter.relay",
          FN + '  %0 = annotation.compiler_begin(%x, compiler="opencl");\n'
          "  %1 = nn.relu(%0);\n"
          '  %2 = annotation.compiler_end(%1, compiler="opencl");\n'
          "  %3 = abs(%2);\n"
          '  %4 = annotation.compiler_begin(%3, compiler="opencl");\n'
          '  %5 = annotation.compiler_begin(%1, compiler="opencl");\n'
          "  %6 = add(%4, %5);\n"
          '  annotation.compiler_end(%6, compiler="opencl")\n}\n')
    write("text", "annot_empty_compiler.relay",
          FN + '  %0 = annotation.compiler_begin(%x, compiler="");\n'
          "  %1 = nn.relu(%0);\n"
          '  annotation.compiler_end(%1, compiler="")\n}\n')
    write("text", "small.relay", FN + "  %0 = add(%x, %x);\n  nn.relu(%0)\n}\n")


# ------------------------------------------------------------------ ONNX

def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save_onnx(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name.replace(".onnx", ""), inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="byocl tests/bad")
    model.ir_version = 7
    data = model.SerializeToString()
    write("onnx", name, data)
    return data


def raw_tensor(name, dims, floats):
    """A TensorProto as written, without the helper's size check (some are wrong on purpose)."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.float_data.extend(floats)
    return t


def onnx_files():
    x = vi("x", [1, 4])
    y = vi("y", None)
    good = save_onnx("relu_ok.onnx", [helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    write("onnx", "truncated.onnx", good[: len(good) // 2])
    write("onnx", "not_onnx.onnx", b"this is not a protobuf message\n")
    save_onnx("self_reference.onnx", [helper.make_node("Relu", ["y"], ["y"])], [x], [y])
    save_onnx("cycle.onnx", [helper.make_node("Add", ["x", "b"], ["a"]),
                             helper.make_node("Relu", ["a"], ["b"])], [x], [vi("b", None)])
    save_onnx("undefined_input.onnx", [helper.make_node("Add", ["x", "ghost"], ["y"])], [x], [y])
    save_onnx("rank_20.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1] * 20)], [y])
    save_onnx("negative_dim.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [-5, 3])],
              [y])
    save_onnx("symbolic_dim.onnx", [helper.make_node("Relu", ["x"], ["y"])],
              [vi("x", ["batch", 4])], [y])
    save_onnx("numel_overflow.onnx", [helper.make_node("Relu", ["x"], ["y"])],
              [vi("x", [4294967296, 4294967296, 4294967296])], [y])
    save_onnx("weight_dims_overflow.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x], [y],
              [raw_tensor("w", [4294967296, 4294967296], [])])
    save_onnx("weight_too_few_values.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x],
              [y], [raw_tensor("w", [1, 4], [1.0, 2.0])])
    save_onnx("output_assigned_twice.onnx", [helper.make_node("Relu", ["x"], ["y"]),
                                             helper.make_node("Abs", ["x"], ["y"])], [x], [y])
    save_onnx("many_attributes.onnx",
              [helper.make_node("Relu", ["x"], ["y"], **{"a%d" % i: i for i in range(1000)})],
              [x], [y])
    save_onnx("unsupported_op.onnx", [helper.make_node("Frobnicate", ["x"], ["y"])], [x], [y])
    save_onnx("no_nodes.onnx", [], [x], [y])
    for name, equation, shapes in (
            ("einsum_term_count", "ij,jk->ik", [[2, 3]]),
            ("einsum_bad_char", "i$,jk->ik", [[2, 3], [3, 4]]),
            ("einsum_size_mismatch", "ij,jk->ik", [[2, 3], [4, 5]]),
            ("einsum_output_unknown", "ij->iz", [[2, 3]]),
            ("einsum_rank_mismatch", "ijk->i", [[2, 3]])):
        names = ["x%d" % i for i in range(len(shapes))]
        save_onnx(name + ".onnx", [helper.make_node("Einsum", names, ["y"], equation=equation)],
                  [vi(n, sh) for n, sh in zip(names, shapes)], [y], opset=12)
    # an op used in a model of an opset before the op existed
    save_onnx("op_after_opset.onnx",
              [helper.make_node("LayerNormalization", ["x", "scale"], ["y"])], [x], [y],
              [numpy_helper.from_array(np.ones((4,), np.float32), "scale")], opset=13)
    save_onnx("matmul_batch_mismatch.onnx", [helper.make_node("MatMul", ["a", "b"], ["y"])],
              [vi("a", [2, 3, 4])], [y],
              [numpy_helper.from_array(np.ones((3, 4, 5), np.float32), "b")])


def onnx_loading_files():
    """onnx_loading.cases: training-mode Dropout, the opset and the ops refused together, old
    forms refused (an opset-6 training BatchNormalization, Upsample bilinear), Resize's refusals,
    initializers whose values the importer reads straight from the file."""
    x = vi("x", [1, 4])
    y = vi("y", None)
    true = helper.make_tensor("train", TensorProto.BOOL, [], [True])
    save_onnx("dropout_training_ratio.onnx",
              [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")], [x], [y],
              [helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.1]), true])
    save_onnx("dropout_training_default_ratio.onnx",
              [helper.make_node("Dropout", ["x", "", "train"], ["y"], name="drop")], [x], [y],
              [true])
    save_onnx("dropout_training_ratio_runtime.onnx",
              [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")],
              [x, helper.make_tensor_value_info("ratio", TensorProto.FLOAT, [])], [y], [true])
    # Shape inputs computed at run time: Slice's starts, ConstantOfShape's shape.
    ints = helper.make_tensor_value_info("starts", TensorProto.INT64, [1])
    save_onnx("slice_runtime_starts.onnx",
              [helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="slice")],
              [x, ints], [y], [helper.make_tensor("ends", TensorProto.INT64, [1], [3])])
    save_onnx("constant_of_shape_runtime.onnx",
              [helper.make_node("Relu", ["x"], ["r"]),
               helper.make_node("Cast", ["r"], ["shape"], to=TensorProto.INT64),
               helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")],
              [x], [y])
    # A shape computed from two graph inputs: both named as what to bind.
    save_onnx("expand_runtime_two_inputs.onnx",
              [helper.make_node("Add", ["a", "b"], ["shape"]),
               helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
              [x, helper.make_tensor_value_info("a", TensorProto.INT64, [2]),
               helper.make_tensor_value_info("b", TensorProto.INT64, [2])], [y])
    # A loss's reduction that ONNX does not define.
    save_onnx("nllloss_bad_reduction.onnx",
              [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nll",
                                reduction="average")],
              [vi("x", [2, 3]), helper.make_tensor_value_info("t", TensorProto.INT64, [2])],
              [y])
    save_onnx("opset6_unsupported_op.onnx", [helper.make_node("Relu", ["x"], ["r"]),
                                             helper.make_node("Frobnicate", ["r"], ["y"])],
              [x], [y], opset=6)
    # Old forms byocl refuses: a training-mode BatchNormalization (is_test=0, the default
    # before opset 7) and Upsample's linear mode.
    save_onnx("batchnorm_opset6_training.onnx",
              [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
              [x, vi("s", [4]), vi("b", [4]), vi("m", [4]), vi("v", [4])], [y], opset=6)
    save_onnx("upsample_bilinear.onnx",
              [helper.make_node("Upsample", ["x"], ["y"], mode="bilinear", scales=[1.0, 2.0])],
              [x], [y], opset=7)
    # Resize: scales computed at run time, tf_crop_and_resize cropping the channel axis,
    # its roi computed at run time or of the wrong length, a resized leading axis.
    img = vi("x", [1, 1, 2, 4])
    save_onnx("resize_runtime_scales.onnx",
              [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize")],
              [img, helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])], [y])
    save_onnx("resize_crop.onnx",
              [helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="resize",
                                coordinate_transformation_mode="tf_crop_and_resize")],
              [img], [y], [helper.make_tensor("roi", TensorProto.FLOAT, [8],
                                              [0, 0.25, 0, 0] + [1] * 4),
                           helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, 3, 3])])
    save_onnx("resize_runtime_roi.onnx",
              [helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="resize",
                                coordinate_transformation_mode="tf_crop_and_resize")],
              [img, helper.make_tensor_value_info("roi", TensorProto.FLOAT, [8])], [y],
              [helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, 3, 3])])
    save_onnx("resize_roi_count.onnx",
              [helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="resize",
                                coordinate_transformation_mode="tf_crop_and_resize")],
              [img], [y], [helper.make_tensor("roi", TensorProto.FLOAT, [4], [0, 0, 1, 1]),
                           helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, 3, 3])])
    save_onnx("resize_channels.onnx",
              [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize")],
              [img], [y], [helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 2, 1, 1])])
    save_onnx("opset19_unsupported_ops.onnx", [helper.make_node("LSTM", ["x"], ["a"]),
                                               helper.make_node("Relu", ["a"], ["b"]),
                                               helper.make_node("LSTM", ["b"], ["y"])],
              [x], [y], opset=19)
    # raw_data of 12 bytes for 16 (the importer reads it from the file, not unpacked).
    short = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1, 4], raw_data=b"\0" * 12)
    save_onnx("weight_short_raw.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x], [y],
              [short])
    # Cut in the middle of a 4 KiB weight's raw_data.
    big = numpy_helper.from_array(np.arange(1024, dtype=np.float32).reshape(256, 4), "w")
    whole = save_onnx("weight_cut.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x],
                      [vi("y", [256, 4])], [big])
    write("onnx", "weight_cut.onnx", whole[: len(whole) // 2])


def external_tensor(name, dims, entries):
    """A float32 TensorProto whose values lie in an external file: external_data `entries`
    ((key, value) pairs) as written, right or wrong."""
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims,
                    data_location=TensorProto.EXTERNAL)
    for key, value in entries:
        t.external_data.add(key=key, value=value)
    return t


def external_data_files():
    """onnx_loading.cases: external data that byocl refuses to read. external_16.bin holds
    16 bytes, the values of a (1, 4) float32 tensor; each model adds x to w, whose
    external_data is wrong in one way."""
    write("onnx", "external_16.bin", np.arange(4, dtype="<f4").tobytes())
    x = vi("x", [1, 4])
    y = vi("y", None)
    bin_ = ("location", "external_16.bin")
    for name, entries in (
            ("external_missing_file", [("location", "nowhere.bin")]),
            ("external_past_end", [bin_, ("offset", "8"), ("length", "16")]),
            ("external_offset_past_end", [bin_, ("offset", "100")]),
            ("external_wrong_length", [bin_, ("offset", "0"), ("length", "12")]),
            ("external_absolute", [("location", "/etc/passwd")]),
            ("external_escape", [("location", "sub/../../onnx/external_16.bin")]),
            ("external_unknown_key", [bin_, ("compression", "zstd")]),
            ("external_bad_offset", [bin_, ("offset", "-4")]),
            ("external_no_location", [("offset", "0")])):
        save_onnx(name + ".onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [x], [y],
                  [external_tensor("w", [1, 4], entries)])
    # A Constant node's value in a file that is not there: the message names the node.
    save_onnx("external_constant_missing.onnx",
              [helper.make_node("Constant", [], ["w"], name="weights",
                                value=external_tensor("w", [1, 4], [("location", "gone.bin")])),
               helper.make_node("Add", ["x", "w"], ["y"])], [x], [y])


def conv_pad_files():
    """ops_conv.cases: nn.conv2d_transpose with attributes or shapes it does not take (text),
    ONNX ConvTranspose and Pad (reflect, edge, negative pads) given what they refuse."""
    data = "def @main(%x: Tensor[(1, 4, 5, 5), float32], %w: Tensor[(4, 2, 3, 3), float32]) {\n"
    write("text", "ops_conv_t_output_padding.relay",
          data + "  nn.conv2d_transpose(%x, %w, output_padding=[1, -1])\n}\n")
    write("text", "ops_conv_t_kernel_layout.relay",
          data + "  nn.conv2d_transpose(%x, %w, kernel_layout=\"OIHW\")\n}\n")
    write("text", "ops_conv_t_channels.relay",
          "def @main(%x: Tensor[(1, 3, 5, 5), float32], %w: Tensor[(4, 2, 3, 3), float32]) {\n"
          "  nn.conv2d_transpose(%x, %w)\n}\n")
    write("text", "ops_conv_t_cropped_away.relay",
          data + "  nn.conv2d_transpose(%x, %w, padding=[0, 0, 7, 0])\n}\n")
    x4 = vi("x", [1, 2, 3, 3])
    y = vi("y", None)
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    save_onnx("convtranspose_output_shape_length.onnx",
              [helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_shape=[5])],
              [x4], [y], [w])
    save_onnx("convtranspose_output_padding_negative.onnx",
              [helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_padding=[0, -1])],
              [x4], [y], [w])
    save_onnx("convtranspose_4d.onnx",
              [helper.make_node("ConvTranspose", ["x", "w"], ["y"])],
              [vi("x", [1, 2, 3, 3, 3, 3])], [y],
              [numpy_helper.from_array(np.ones((2, 1, 3, 3, 3, 3), np.float32), "w")])
    save_onnx("convtranspose_huge_stride.onnx",
              [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[1, 1 << 40],
                                auto_pad="SAME_UPPER")],
              [x4], [y], [w])

    def pads(v):
        return numpy_helper.from_array(np.array(v, np.int64), "pads")

    x2 = vi("x", [2, 4])
    save_onnx("pad_reflect_overcrop.onnx",
              [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], [x2], [y],
              [pads([-2, 0, -1, 0])])
    save_onnx("pad_edge_huge.onnx",
              [helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], [x2], [y],
              [pads([0, 1 << 62, 0, 0])])
    save_onnx("pad_edge_over_tensor_limit.onnx",
              [helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], [x2], [y],
              [pads([0, 1 << 40, 0, 0])])
    save_onnx("pad_edge_empty_axis.onnx",
              [helper.make_node("Pad", ["x", "pads"], ["y"], mode="edge")], [vi("x", [0, 4])],
              [y], [pads([1, 0, 0, 0])])


def index_ops_files():
    """ops_index.cases: TopK's K computed at run time, ScatterND's reduction ONNX does not
    define, ScatterElements' constant index out of range (a run-time error)."""
    x = vi("x", [3, 4])
    save_onnx("topk_runtime_k.onnx",
              [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")],
              [x, helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
              [vi("v", None), helper.make_tensor_value_info("i", TensorProto.INT64, None)],
              opset=11)
    save_onnx("scatternd_bad_reduction.onnx",
              [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="scatter",
                                reduction="average")],
              [x, vi("u", [4])], [vi("y", None)],
              [helper.make_tensor("i", TensorProto.INT64, [1, 1], [2])], opset=16)
    save_onnx("scatter_elements_out_of_range.onnx",
              [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
              [x, vi("u", [1, 2])], [vi("y", None)],
              [helper.make_tensor("i", TensorProto.INT64, [1, 2], [1, 4])])


def transform_ops_files():
    """ops_transform.cases: ONNX DepthToSpace and SpaceToDepth given a block that does not
    divide the input, an unknown mode, no blocksize."""
    y = vi("y", None)
    save_onnx("depthtospace_channels.onnx",
              [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2)],
              [vi("x", [1, 6, 2, 2])], [y])
    save_onnx("depthtospace_mode.onnx",
              [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=2,
                                mode="RDC")],
              [vi("x", [1, 8, 2, 2])], [y])
    save_onnx("spacetodepth_no_blocksize.onnx",
              [helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d")],
              [vi("x", [1, 2, 4, 4])], [y])
    save_onnx("spacetodepth_height.onnx",
              [helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=3)],
              [vi("x", [1, 2, 4, 3])], [y])


def more_ops_files():
    """ops_index.cases and ops_elemwise.cases: ONNX Range, Expand, Where, CumSum, OneHot,
    Trilu, Elu, Gather, GatherElements and LogSoftmax given a value, shape, rank, dtype or
    attribute they do not take."""
    y = vi("y", None)

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, np.int64), name)

    def f32(name, v):
        return numpy_helper.from_array(np.array(v, np.float32), name)

    save_onnx("range_too_many.onnx",
              [helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")], [], [y],
              [f32("s", 0.0), f32("l", 1e30), f32("d", 1.0)], opset=11)
    save_onnx("trilu_rank1.onnx", [helper.make_node("Trilu", ["x"], ["y"], name="trilu")],
              [vi("x", [4])], [y], opset=14)
    save_onnx("expand_shape.onnx", [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
              [vi("x", [3, 4])], [y], [i64("s", [2, 3])])
    save_onnx("where_shapes.onnx",
              [helper.make_node("Where", ["c", "a", "b"], ["y"], name="where")],
              [helper.make_tensor_value_info("c", TensorProto.BOOL, [3]), vi("a", [4]),
               vi("b", [4])], [y])
    save_onnx("cumsum_axis.onnx", [helper.make_node("CumSum", ["x", "a"], ["y"], name="cumsum")],
              [vi("x", [3, 4])], [y], [i64("a", 2)])
    save_onnx("onehot_depth.onnx",
              [helper.make_node("OneHot", ["i", "d", "v"], ["y"], name="onehot")],
              [helper.make_tensor_value_info("i", TensorProto.INT64, [3])], [y],
              [i64("d", [0]), f32("v", [0.0, 1.0])], opset=11)
    save_onnx("elu_int.onnx", [helper.make_node("Elu", ["x"], ["y"], name="elu")],
              [helper.make_tensor_value_info("x", TensorProto.INT32, [4])],
              [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    save_onnx("gather_axis.onnx", [helper.make_node("Gather", ["x", "i"], ["y"], name="gather",
                                                    axis=2)],
              [vi("x", [3, 4])], [y], [i64("i", [0, 1])])
    save_onnx("gatherelements_rank.onnx",
              [helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=0)],
              [vi("x", [3, 4])], [y], [i64("i", [0, 1])])
    save_onnx("logsoftmax_axis.onnx",
              [helper.make_node("LogSoftmax", ["x"], ["y"], name="lsm", axis=3)],
              [vi("x", [3, 4])], [y])


def opset_forms_files():
    """onnx_loading.cases and ops_elemwise.cases: the old opsets' forms given what they do not
    take (BatchNormalization spatial=0 statistics of the wrong shape, Cast-1 to an unknown
    type, Tile-1's tiles at run time, Upsample-1 of rank 3 or without width_scale); Mod
    with fmod=0 on floats; float-only activations on integers."""
    y = vi("y", None)

    def f32(name, v):
        return numpy_helper.from_array(np.array(v, np.float32), name)

    stats = [f32(n, np.ones((3, 4))) for n in ("s", "b", "m", "v")]
    save_onnx("batchnorm_spatial0_shape.onnx",
              [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                name="bn", spatial=0)], [vi("x", [2, 3, 4, 5])], [y], stats,
              opset=7)
    save_onnx("cast1_unknown_type.onnx",
              [helper.make_node("Cast", ["x"], ["y"], name="cast", to="FLOAT32")],
              [vi("x", [4])], [y], opset=1)
    save_onnx("tile1_runtime_tiles.onnx",
              [helper.make_node("Tile", ["x", "t", "a"], ["y"], name="tile")],
              [vi("x", [2, 3]), vi("t", [])], [y], [f32("a", 1.0)], opset=1)
    save_onnx("upsample1_rank3.onnx",
              [helper.make_node("Upsample", ["x"], ["y"], name="up", height_scale=2.0,
                                width_scale=2.0)], [vi("x", [1, 2, 3])], [y], opset=1)
    save_onnx("upsample1_no_width.onnx",
              [helper.make_node("Upsample", ["x"], ["y"], name="up", height_scale=2.0)],
              [vi("x", [1, 1, 2, 3])], [y], opset=1)
    save_onnx("mod_float_fmod0.onnx", [helper.make_node("Mod", ["a", "b"], ["y"], name="mod")],
              [vi("a", [4]), vi("b", [4])], [y])
    i32 = helper.make_tensor_value_info("x", TensorProto.INT32, [4])
    for op, opset in (("HardSigmoid", 13), ("HardSwish", 14), ("LeakyRelu", 13),
                      ("Softplus", 13)):
        save_onnx(op.lower() + "_int.onnx", [helper.make_node(op, ["x"], ["y"], name="act")],
                  [i32], [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                  opset=opset)


# ------------------------------------------------------------------ tensor files

def npy(shape, data=b"", descr="<f4", fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def tensor_files():
    write("tensor", "x4.npy", npy("(4,)", struct.pack("<4f", 1, -2, 3, -4)))
    write("tensor", "x4_int32.npy", npy("(4,)", struct.pack("<4i", 1, 2, 3, 4), descr="<i4"))
    write("tensor", "x5.npy", npy("(5,)", b"\0" * 20))
    write("tensor", "claims_40gb.npy", npy("(100000, 100000)", b"\0" * 16))
    write("tensor", "numel_overflow.npy", npy("(4294967296, 4294967296, 4294967296)", b"\0" * 16))
    write("tensor", "rank_9.npy", npy("(1, 1, 1, 1, 1, 1, 1, 1, 1)", b"\0" * 4))
    write("tensor", "negative_dim.npy", npy("(-1, 4)", b"\0" * 16))
    write("tensor", "fortran.npy", npy("(2, 2)", b"\0" * 16, fortran=True))
    write("tensor", "complex.npy", npy("(4,)", b"\0" * 64, descr="<c16"))
    write("tensor", "truncated_data.npy", npy("(4,)", b"\0" * 15))
    write("tensor", "header_4gb.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFFF) + b"{")
    write("tensor", "not_npy.npy", b"hello, not numpy\n")
    with zipfile.ZipFile(os.path.join(HERE, "tensor", "x_64mb.npz"), "w",
                         zipfile.ZIP_DEFLATED) as z:
        member = zipfile.ZipInfo("x.npy", date_time=(1980, 1, 1, 0, 0, 0))  # reproducible
        member.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(member, npy("(4000, 4000)", b"\0" * (4000 * 4000 * 4)))
    write("tensor", "not_zip.npz", b"PK but not really a zip archive\n")
    # a TensorProto whose raw_data is shorter than its dims need
    t = TensorProto()
    t.data_type = TensorProto.FLOAT
    t.dims.extend([4])
    t.raw_data = b"\0" * 10
    write("tensor", "short_raw.pb", t.SerializeToString())
    write("tensor", "garbage.pb", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")


text_files()
onnx_files()
onnx_loading_files()
external_data_files()
conv_pad_files()
index_ops_files()
transform_ops_files()
more_ops_files()
opset_forms_files()
tensor_files()
