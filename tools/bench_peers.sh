#!/bin/sh
# byocl against its peers on torchvision's resnet18, mobilenet_v2 and squeezenet1_1 (random
# weights, nothing downloaded but packages):
#
#   PyTorch      torch.jit.trace + torch.jit.freeze + torch.jit.optimize_for_inference
#   ONNX Runtime when `pip install onnxruntime` works (into a venv under OUT_DIR; optional)
#   byocl        `byocl bench MODEL.onnx`: the host build and the OpenCL-offloaded build
#
# all at THREADS threads (default 2), interleaved: ROUNDS rounds (default 5), each timing
# every runner for RUNS runs (default 10) after WARMUP runs (default 2), so that all of them
# see the same machine load. Reported: the median over the rounds of each round's median,
# and the ratios byocl / PyTorch (median against median). byocl's compile times come from
# its JSON: cold from the first round (fresh caches in OUT_DIR/caches), cached from the
# others. See docs/benchmarks.md.
#
#   tools/bench_peers.sh [BYOCL [OUT_DIR]]
#
# BYOCL defaults to build/tools/byocl, OUT_DIR to build/peers. Missing Debian packages
# (python3-torch, python3-torchvision, python3-onnx, python3-numpy, python3-venv) are
# installed with apt-get (as root, or through sudo).
set -eu

BYOCL=${1:-build/tools/byocl}
OUT=${2:-build/peers}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$BYOCL" ]; then
    echo "bench_peers.sh: $BYOCL is not an executable byocl (build first: make build)" >&2
    exit 1
fi

# Debian's packages for PyTorch, torchvision and the ONNX export.
need=""
$PY -c 'import torch' 2>/dev/null || need="$need python3-torch"
$PY -c 'import torchvision' 2>/dev/null || need="$need python3-torchvision"
$PY -c 'import onnx' 2>/dev/null || need="$need python3-onnx"
$PY -c 'import numpy' 2>/dev/null || need="$need python3-numpy"
$PY -c 'import ensurepip' 2>/dev/null || need="$need python3-venv"
if [ -n "$need" ]; then
    echo "bench_peers.sh: installing$need" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi
    $SUDO apt-get install -y $need >&2
fi

mkdir -p "$OUT"
for m in resnet18 mobilenet_v2 squeezenet1_1; do
    [ -s "$OUT/$m.onnx" ] || { $PY "$HERE/export_torchvision.py" "$OUT" >&2; break; }
done

# ONNX Runtime from PyPI, in a venv that sees Debian's packages; never required.
ORT_PY=""
if [ -x "$OUT/venv/bin/python" ] && "$OUT/venv/bin/python" -c 'import onnxruntime' 2>/dev/null; then
    ORT_PY="$OUT/venv/bin/python"
elif $PY -m venv --system-site-packages "$OUT/venv" >/dev/null 2>&1 &&
     "$OUT/venv/bin/pip" install --quiet onnxruntime >"$OUT/pip.log" 2>&1; then
    ORT_PY="$OUT/venv/bin/python"
else
    echo "bench_peers.sh: onnxruntime did not install (see $OUT/pip.log); going on without it" >&2
fi

# Fresh byocl and PoCL caches: round 1 compiles cold.
rm -rf "$OUT/caches"

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "threads $THREADS, $ROUNDS rounds of $RUNS runs after $WARMUP warm-up runs each"

# The driver: one process per runner and round, so that each runs alone.
ORT_PY="$ORT_PY" BYOCL="$BYOCL" OUT="$OUT" THREADS="$THREADS" ROUNDS="$ROUNDS" RUNS="$RUNS" \
WARMUP="$WARMUP" $PY - <<'EOF'
import json, os, statistics, subprocess, sys

env = os.environ
byocl, out = env["BYOCL"], env["OUT"]
threads, rounds, runs, warmup = (int(env[k]) for k in ("THREADS", "ROUNDS", "RUNS", "WARMUP"))
ort_py = env.get("ORT_PY") or None

# Times a model in a child Python: PyTorch-jit or ONNX Runtime. Prints the run times (ms).
TIMER = r'''
import sys, time, numpy as np
kind, name, out, threads, runs, warmup = sys.argv[1:7]
threads, runs, warmup = int(threads), int(runs), int(warmup)
x = np.load("%s/%s_input.npy" % (out, name))
if kind == "torch":
    import torch, torchvision
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        t = torch.from_numpy(x)
        m = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, t)))
        run = lambda: m(t)
        for _ in range(warmup): run()
        ms = []
        for _ in range(runs):
            t0 = time.perf_counter(); run(); ms.append((time.perf_counter() - t0) * 1e3)
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    s = ort.InferenceSession("%s/%s.onnx" % (out, name), so, providers=["CPUExecutionProvider"])
    feed = {"input": x}
    for _ in range(warmup): s.run(None, feed)
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter(); s.run(None, feed); ms.append((time.perf_counter() - t0) * 1e3)
print(" ".join("%.4f" % v for v in ms))
'''

def peer(py, kind, name):
    r = subprocess.run([py, "-c", TIMER, kind, name, out, str(threads), str(runs), str(warmup)],
                       check=True, capture_output=True, text=True)
    return statistics.median(float(v) for v in r.stdout.split())

def bench(name, rnd):
    path = "%s/%s.bench.json" % (out, name)
    subprocess.run([byocl, "bench", "%s/%s.onnx" % (out, name), "--threads", str(threads),
                    "--runs", str(runs), "--warmup", str(warmup), "--quiet",
                    "--cache-dir", "%s/caches" % out, "--json", path],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)

rows = []
for name in ("resnet18", "mobilenet_v2", "squeezenet1_1"):
    med = {"torch": [], "ort": [], "host": [], "offloaded": []}
    compile_ms = {}
    for rnd in range(rounds):
        print("  %s round %d/%d" % (name, rnd + 1, rounds), file=sys.stderr, flush=True)
        med["torch"].append(peer("/usr/bin/python3", "torch", name))
        if ort_py:
            med["ort"].append(peer(ort_py, "ort", name))
        j = bench(name, rnd)
        for p in ("host", "offloaded"):
            med[p].append(j[p]["median_ms"])
            if rnd == 0:
                compile_ms[p + "_cold"] = j[p]["compile_cold_ms"]
                compile_ms[p + "_first_run"] = j[p]["first_run_cold_ms"]
            else:
                compile_ms.setdefault(p + "_cached", []).append(j[p]["compile_cached_ms"])
    m = {k: statistics.median(v) if v else None for k, v in med.items()}
    rows.append((name, m, compile_ms))

def ms(v): return "%9.2f" % v if v is not None else "        -"
print()
print("median ms (median over rounds)   pytorch-jit  onnxruntime  byocl-host  byocl-offl.  host/pt  offl./pt")
for name, m, c in rows:
    print("  %-28s %11s  %11s  %10s  %11s  %6.2fx  %7.2fx" % (
        name, ms(m["torch"]), ms(m["ort"]), ms(m["host"]), ms(m["offloaded"]),
        m["host"] / m["torch"], m["offloaded"] / m["torch"]))
print()
print("byocl compile ms                 host cold  host cached  offl. cold (+1st run)  offl. cached")
for name, m, c in rows:
    cached = lambda p: statistics.median(c[p + "_cached"]) if c.get(p + "_cached") else float("nan")
    print("  %-28s %9.1f  %11.1f  %10.1f (+%7.1f)  %12.1f" % (
        name, c["host_cold"], cached("host"), c["offloaded_cold"], c["offloaded_first_run"],
        cached("offloaded")))
EOF
