#!/usr/bin/python3
"""Expected results of annotation.compiler_begin / compiler_end (identities that copy),
for tests/test_ops_annotation.c. Writes tests/fixtures/ops/annotation_cases.h."""

import numpy as np

from ops_fixture import Fixture

rng = np.random.default_rng(11)
fx = Fixture("annotation")

x = rng.standard_normal((2, 3)).astype(np.float32)
fx.case("begin_f32", "annotation.compiler_begin", 'compiler="opencl"', [x], [x.copy()])
x = rng.integers(-128, 128, (1, 2, 2)).astype(np.int8)
fx.case("end_i8", "annotation.compiler_end", 'compiler="opencl"', [x], [x.copy()])
x = np.array(2.5, np.float16)
fx.case("begin_f16_scalar", "annotation.compiler_begin", 'compiler="my_npu"', [x], [x.copy()])
x = rng.integers(-2**40, 2**40, (3,)).astype(np.int64)
fx.case("end_i64", "annotation.compiler_end", 'compiler="opencl"', [x], [x.copy()])

fx.write("gen_ops_annotation.py")
