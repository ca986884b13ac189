#!/bin/sh
# The host conv2d's two register tiles side by side (docs/host-codegen.md, "The
# micro-kernels"): single-conv models (conv + bias + relu, random weights) of the shapes
# of mobilenet_v2's and resnet18's layers, each run by `byocl run --target host` with
# BYOCL_LLVM_CONV_TILES=position, =channel and unset (the cost model's choice), in turn.
# Prints, per layer, the fastest and the median of RUNS runs (default 40) in ms and the
# by-channel / by-position ratio of the fastest runs.
#
#   tools/bench_conv_tiles.sh [BYOCL [OUT_DIR]]
#
# BYOCL defaults to build/tools/byocl, OUT_DIR (models and caches) to build/conv-tiles;
# THREADS (default 1) sets --threads. Needs Debian's python3-onnx and python3-numpy (as
# tools/bench_peers.sh installs them).
set -eu

BYOCL=${1:-build/tools/byocl}
OUT=${2:-build/conv-tiles}
RUNS=${RUNS:-40}
THREADS=${THREADS:-1}
mkdir -p "$OUT"

# name, in channels, out channels, input size, kernel, stride, padding
LAYERS="mnv2_stem 3 32 224 3 2 1
mnv2_1x1_32_16 32 16 112 1 1 0
mnv2_1x1_16_96 16 96 112 1 1 0
mnv2_1x1_24_144 24 144 56 1 1 0
mnv2_1x1_144_24 144 24 56 1 1 0
mnv2_1x1_32_192 32 192 28 1 1 0
mnv2_1x1_144_32 144 32 28 1 1 0
mnv2_1x1_64_384 64 384 14 1 1 0
mnv2_1x1_960_160 960 160 7 1 1 0
rn18_stem 3 64 224 7 2 3
rn18_layer1 64 64 56 3 1 1
rn18_down2 64 128 56 1 2 0
rn18_layer2 128 128 28 3 1 1
rn18_layer3 256 256 14 3 1 1
rn18_layer4 512 512 7 3 1 1"

echo "$LAYERS" | /usr/bin/python3 -c '
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
for line in sys.stdin:
    name, cin, cout, size, k, s, p = line.split()
    cin, cout, size, k, s, p = map(int, (cin, cout, size, k, s, p))
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((cout, cin, k, k)) * 0.1).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), "b")
    osize = (size + 2 * p - k) // s + 1
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4),
         helper.make_node("Relu", ["y"], ["z"])], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, size, size])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, cout, osize, osize])], [w, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "%s/%s.onnx" % (out, name))
' "$OUT"

# "min/median" of one tile shape's runs
time_layer() {
    BYOCL_LLVM_CONV_TILES=$2 BYOCL_CACHE_DIR="$OUT/cache-${2:-auto}" "$BYOCL" run "$OUT/$1.onnx" \
        --random-inputs --target host --threads "$THREADS" --runs "$RUNS" 2>&1 |
        sed -n 's/.*min \([0-9.]*\) ms, median \([0-9.]*\) ms.*/\1 \2/p'
}

printf '%-18s %16s %16s %16s %8s\n' layer "position min/med" "channel min/med" "chosen min/med" "ch/pos"
echo "$LAYERS" | while read -r name rest; do
    set -- $(time_layer "$name" position) $(time_layer "$name" channel) $(time_layer "$name" "")
    printf '%-18s %16s %16s %16s %8.2f\n' "$name" "$1/$2" "$3/$4" "$5/$6" "$(echo "$3 / $1" | bc -l)"
done
