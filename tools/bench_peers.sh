#!/bin/sh
# byocl against its peers on torchvision's classification models (random weights, nothing
# downloaded but packages):
#
#   PyTorch      torch.jit.trace + torch.jit.freeze + torch.jit.optimize_for_inference
#   ONNX Runtime when `pip install onnxruntime` works (into a venv under OUT_DIR; optional)
#   byocl        the host build and the OpenCL-offloaded build: `byocl run MODEL.onnx
#                --target host|opencl`, each alone in its process as the peers are; and
#                `byocl bench MODEL.onnx` for the compile times and the round trips
#
# MODELS (default resnet18,mobilenet_v2,squeezenet1_1): torchvision model names separated
# by commas, or `quick` (the smallest of each family) or `all`, as tools/export_torchvision.py
# --models/--quick/--all export them; models it could not export, and models byocl cannot
# build, get a row saying why. THREADS (default 2) is a thread count or a list of them
# ("1 2"): one table each. Per model and thread count, ROUNDS rounds (default 5), each timing
# every runner for RUNS runs (default 10) after WARMUP runs (default 2), so that all of them
# see the same machine load. Reported: the median over the rounds of each round's median;
# host / best peer (the faster of PyTorch-jit and ONNX Runtime) and offloaded / host, median
# against median (byocl's from `byocl run`'s steady state: RUNS + WARMUP runs after the one
# that follows the build; `byocl bench` alternates the two builds run by run, which cost
# both of them 3-15% on a 2-core machine, and its medians go to peers.json as
# bench_alternating_ms); byocl's compile times from its JSON: cold from the first round (fresh
# caches per thread count in OUT_DIR/caches), cached from the others; and the range of the
# cross-core round trips byocl bench measured before and after its runs (core rt ns: how
# close the cores were, which moves the two-thread figures on cloud machines).
# OUT_DIR/peers.tsv and OUT_DIR/peers.json hold the same figures. See docs/benchmarks.md.
#
#   tools/bench_peers.sh [BYOCL [OUT_DIR]]
#
# BYOCL defaults to build/tools/byocl, OUT_DIR to build/peers. Missing Debian packages
# (python3-torch, python3-torchvision, python3-onnx, python3-numpy, python3-venv) are
# installed with apt-get (as root, or through sudo).
set -eu

BYOCL=${1:-build/tools/byocl}
OUT=${2:-build/peers}
MODELS=${MODELS:-resnet18,mobilenet_v2,squeezenet1_1}
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
case "$MODELS" in
    quick) choice=--quick ;;
    all) choice=--all ;;
    *[!A-Za-z0-9_,]* | "" | ,)
        echo "bench_peers.sh: MODELS=$MODELS: expected quick, all, or model names separated" \
             "by commas (e.g. resnet18,mobilenet_v2)" >&2
        exit 1 ;;
    *) choice="--models $MODELS" ;;
esac
for t in $THREADS; do
    case "$t" in
        "" | *[!0-9]* | 0*) echo "bench_peers.sh: THREADS=$THREADS: expected thread counts" \
                                 "from 1 up, separated by spaces (e.g. \"1 2\")" >&2
                            exit 1 ;;
    esac
done
check_count() { # NAME VALUE
    case "$2" in
        "" | *[!0-9]*) echo "bench_peers.sh: $1=$2: expected a count" >&2; exit 1 ;;
    esac
}
check_count ROUNDS "$ROUNDS"
check_count RUNS "$RUNS"
check_count WARMUP "$WARMUP"
if [ "$ROUNDS" -lt 1 ] || [ "$RUNS" -lt 1 ] || [ -z "$THREADS" ]; then
    echo "bench_peers.sh: ROUNDS, RUNS and THREADS need at least 1" >&2
    exit 1
fi

# Debian's packages for PyTorch, torchvision and the ONNX export.
need=""
$PY -c 'import torch' 2>/dev/null || need="$need python3-torch"
$PY -c 'import torchvision' 2>/dev/null || need="$need python3-torchvision"
$PY -c 'import onnx.checker' 2>/dev/null || need="$need python3-onnx"
$PY -c 'import numpy' 2>/dev/null || need="$need python3-numpy"
$PY -c 'import ensurepip' 2>/dev/null || need="$need python3-venv"
if [ -n "$need" ]; then
    echo "bench_peers.sh: installing$need" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi
    # shellcheck disable=SC2086 # $need is a list of packages
    $SUDO apt-get install -y $need >&2
fi

# The models, exported (models already there are kept); OUT/models.tsv lists the ones asked
# for with their input size and "ok" or why the export failed.
mkdir -p "$OUT"
# shellcheck disable=SC2086 # $choice is one flag, or --models and its value
if ! $PY "$HERE/export_torchvision.py" $choice "$OUT" >&2; then
    echo "bench_peers.sh: exporting MODELS=$MODELS failed (see above)" >&2
    exit 1
fi

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

# Fresh byocl and PoCL caches: round 1 of each thread count compiles cold.
rm -rf "$OUT/caches"

MACHINE="$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $MACHINE"
echo "threads $THREADS, $ROUNDS rounds of $RUNS runs after $WARMUP warm-up runs each"

# The driver: one process per runner and round, so that each runs alone.
ORT_PY="$ORT_PY" BYOCL="$BYOCL" OUT="$OUT" THREADS="$THREADS" ROUNDS="$ROUNDS" RUNS="$RUNS" \
WARMUP="$WARMUP" MACHINE="$MACHINE" $PY - <<'DRIVER'
import json, os, re, statistics, subprocess, sys

env = os.environ
byocl, out = env["BYOCL"], env["OUT"]
thread_counts = [int(t) for t in env["THREADS"].split()]
rounds, runs, warmup = (int(env[k]) for k in ("ROUNDS", "RUNS", "WARMUP"))
ort_py = env.get("ORT_PY") or None

# Times a model in a child Python: PyTorch-jit or ONNX Runtime. Prints the run times (ms).
TIMER = r'''
import sys, time, warnings, numpy as np
kind, name, out, threads, runs, warmup = sys.argv[1:7]
threads, runs, warmup = int(threads), int(runs), int(warmup)
x = np.load("%s/%s_input.npy" % (out, name))
if kind == "torch":
    import torch, torchvision
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inception_v3's note on init_weights, the tracer's
        model = torchvision.models.get_model(name, weights=None).eval()
        with torch.no_grad():
            t = torch.from_numpy(x)
            m = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, t)))
    with torch.no_grad():
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
    feed = {"input": x}  # export_torchvision.py's input name
    for _ in range(warmup): s.run(None, feed)
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter(); s.run(None, feed); ms.append((time.perf_counter() - t0) * 1e3)
print(" ".join("%.4f" % v for v in ms))
'''

def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1].strip()[:300] if lines else "no message"

def peer(py, kind, name, threads):
    """The median ms of one round, or the reason it failed (a string)."""
    r = subprocess.run([py, "-c", TIMER, kind, name, out, str(threads), str(runs), str(warmup)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "%s failed: %s" % ({"torch": "pytorch-jit", "ort": "onnxruntime"}[kind],
                                  last_line(r.stderr))
    return statistics.median(float(v) for v in r.stdout.split())

def bench(name, threads):
    """byocl bench's JSON, or the reason it failed (a string)."""
    path = "%s/%s.threads%d.bench.json" % (out, name, threads)
    r = subprocess.run([byocl, "bench", "%s/%s.onnx" % (out, name), "--threads", str(threads),
                        "--runs", str(runs), "--warmup", str(warmup), "--quiet",
                        "--input", "input=%s/%s_input.npy" % (out, name),
                        "--cache-dir", "%s/caches/threads%d" % (out, threads), "--json", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return "byocl bench failed: " + last_line(r.stderr)
    with open(path) as f:
        return json.load(f)

def byocl_run(name, threads, target):
    """The steady-state median ms of `byocl run` of one build alone, in bench()'s caches (so
    built cached), or the reason it failed (a string)."""
    caches = "%s/caches/threads%d" % (out, threads)
    r = subprocess.run([byocl, "run", "%s/%s.onnx" % (out, name), "--target", target,
                        "--threads", str(threads), "--runs", str(runs + warmup + 1),
                        "--input", "input=%s/%s_input.npy" % (out, name)],
                       env=dict(env, BYOCL_CACHE_DIR=caches + "/byocl",
                                POCL_CACHE_DIR=caches + "/pocl"),
                       capture_output=True, text=True)
    steady = re.search(r"steady state \(\d+ runs\): min [0-9.]+ ms, median ([0-9.]+) ms",
                       r.stdout + r.stderr)
    if r.returncode != 0 or not steady:
        return "byocl run --target %s failed: %s" % (target, last_line(r.stderr))
    return float(steady.group(1))

def exported_models():
    """(name, input size, status) of each model of OUT/models.tsv, in its order."""
    with open(os.path.join(out, "models.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]
    return [(r[0], int(r[3]), r[5]) for r in rows]

def median(v): return statistics.median(v) if v else None
def ratio(a, b): return a / b if a is not None and b else None

RUNNERS = ("pytorch_jit", "onnxruntime", "byocl_host", "byocl_offloaded")

def measure(name, threads):
    """One model at one thread count: the runners' medians, byocl's compile times, and why
    a runner has no figure."""
    med = {k: [] for k in RUNNERS}
    compile_ms = {"host_cached": [], "offloaded_cached": []}
    alternating = {"host": [], "offloaded": []} # byocl bench's medians
    round_trips = [] # cross-core, ns: how close the cores were (docs/benchmarks.md)
    notes = {}
    for rnd in range(rounds):
        print("  %s, %d thread%s, round %d/%d" % (name, threads, "s" if threads > 1 else "",
                                                rnd + 1, rounds), file=sys.stderr, flush=True)
        peers = [("pytorch_jit", "/usr/bin/python3", "torch")]
        if ort_py:
            peers.append(("onnxruntime", ort_py, "ort"))
        for key, py, kind in peers:
            if key in notes:
                continue
            v = peer(py, kind, name, threads)
            if isinstance(v, str):
                notes[key] = v
            else:
                med[key].append(v)
        if "byocl" in notes:
            continue
        j = bench(name, threads)
        if isinstance(j, str):
            notes["byocl"] = j
            continue
        machine = j.get("machine", {})
        round_trips += [machine.get("cross_core_round_trip_ns_" + w) for w in ("before", "after")]
        for p, target in (("host", "host"), ("offloaded", "opencl")):
            v = byocl_run(name, threads, target)
            if isinstance(v, str):
                notes["byocl"] = v
                break
            med["byocl_" + p].append(v)
            alternating[p].append(j[p]["median_ms"])
            if rnd == 0:
                compile_ms[p + "_cold"] = j[p]["compile_cold_ms"]
                compile_ms[p + "_first_run"] = j[p]["first_run_cold_ms"]
                # the parts of the cold build, where this byocl writes them
                if "compile_cold_parts_ms" in j[p]:
                    compile_ms[p + "_cold_parts"] = j[p]["compile_cold_parts_ms"]
            else:
                compile_ms[p + "_cached"].append(j[p]["compile_cached_ms"])
    m = {k: median(v) for k, v in med.items()}
    for p in ("host", "offloaded"):
        compile_ms[p + "_cached"] = median(compile_ms[p + "_cached"])
        alternating[p] = median(alternating[p])
    peers = [(m[k], k) for k in ("pytorch_jit", "onnxruntime") if m[k] is not None]
    best = min(peers) if peers else (None, None)
    return {"model": name, "threads": threads, "median_ms": m, "best_peer": best[1],
            "host_over_best_peer": ratio(m["byocl_host"], best[0]),
            "offloaded_over_host": ratio(m["byocl_offloaded"], m["byocl_host"]),
            "compile_ms": compile_ms, "bench_alternating_ms": alternating, "notes": notes,
            "cross_core_round_trip_ns": [v for v in round_trips if v is not None]}

models = exported_models()
results = []
for threads in thread_counts:
    for name, size, status in models:
        if status != "ok":
            results.append({"model": name, "threads": threads, "input_size": size,
                            "notes": {"export": status}})
            continue
        r = measure(name, threads)
        r["input_size"] = size
        results.append(r)

def ms(v, width=9, digits=2):
    return "%*.*f" % (width, digits, v) if v is not None else "%*s" % (width, "-")

def x(v): return "%.2fx" % v if v is not None else "-"

def round_trips(r):
    """The cross-core round trips byocl bench measured in r's rounds: "min-max" ns."""
    v = r.get("cross_core_round_trip_ns")
    return "%.0f-%.0f" % (min(v), max(v)) if v else None

def why(r):
    """The reason a model has no byocl figures, or None."""
    n = r["notes"]
    return n.get("export") or n.get("byocl")

for threads in thread_counts:
    rows = [r for r in results if r["threads"] == threads]
    print()
    label = "%d thread%s" % (threads, "s" if threads > 1 else "")
    print("%-37s%s" % (label + ", median ms over rounds", "pytorch-jit  onnxruntime  "
                       "byocl-host  byocl-offl.  host/best peer  offl./host  core rt ns"))
    for r in rows:
        if "median_ms" not in r or why(r):
            if "median_ms" in r:
                m = r["median_ms"]
                print("  %-34s %11s  %11s  %s" % (r["model"], ms(m["pytorch_jit"]),
                                                   ms(m["onnxruntime"]), why(r)))
            else:
                print("  %-34s %s" % (r["model"], why(r)))
            continue
        m = r["median_ms"]
        best = {"pytorch_jit": " (pt)", "onnxruntime": " (ort)"}.get(r["best_peer"], "")
        print("  %-34s %11s  %11s  %10s  %11s  %14s  %10s  %10s" % (
            r["model"], ms(m["pytorch_jit"]), ms(m["onnxruntime"]), ms(m["byocl_host"]),
            ms(m["byocl_offloaded"]), x(r["host_over_best_peer"]) + best,
            x(r["offloaded_over_host"]), round_trips(r) or "-"))
    built = [r for r in rows if "median_ms" in r and not why(r)]
    if built:
        print()
        print("%-37s%s" % (label + ", byocl compile ms", "host cold  host cached  "
                           "offl. cold (+1st run)  offl. cached"))
    for r in built:
        c = r["compile_ms"]
        print("  %-34s %9s  %11s  %10s (+%7s)  %12s" % (
            r["model"], ms(c.get("host_cold"), 9, 1), ms(c["host_cached"], 11, 1),
            ms(c.get("offloaded_cold"), 10, 1), ms(c.get("offloaded_first_run"), 7, 1),
            ms(c["offloaded_cached"], 12, 1)))
    for r in rows:
        for key, note in sorted(r["notes"].items()):
            if key in ("pytorch_jit", "onnxruntime"):
                print("  %s: %s" % (r["model"], note))

# The same figures for docs: a TSV row per model and thread count, and the whole as JSON.
COLUMNS = ("threads", "model", "input_size", "pytorch_jit_ms", "onnxruntime_ms",
           "byocl_host_ms", "byocl_offloaded_ms", "best_peer", "host_over_best_peer",
           "offloaded_over_host", "host_cold_ms", "host_cached_ms", "offloaded_cold_ms",
           "offloaded_first_run_ms", "offloaded_cached_ms", "offloaded_cold_programs_ms",
           "cross_core_round_trip_ns", "note")
def cell(column, v):
    if v is None: return "-"
    if isinstance(v, float): return ("%.3f" if "_over_" in column else "%.2f") % v
    return str(v)
with open(os.path.join(out, "peers.tsv.part"), "w") as f:
    f.write("# " + "\t".join(COLUMNS) + "\n")
    for r in results:
        m, c = r.get("median_ms", {}), r.get("compile_ms", {})
        row = [r["threads"], r["model"], r["input_size"]]
        row += [m.get(k) for k in RUNNERS]
        row += [r.get("best_peer"), r.get("host_over_best_peer"), r.get("offloaded_over_host")]
        row += [c.get(k) for k in ("host_cold", "host_cached", "offloaded_cold",
                                   "offloaded_first_run", "offloaded_cached")]
        # of the offloaded cold build, the OpenCL programs (a byocl that writes it)
        row.append(c.get("offloaded_cold_parts", {}).get("opencl_programs"))
        row.append(round_trips(r))
        row.append("; ".join(note for _, note in sorted(r["notes"].items())) or None)
        f.write("\t".join(cell(c, v) for c, v in zip(COLUMNS, row)) + "\n")
with open(os.path.join(out, "peers.json.part"), "w") as f:
    json.dump({"machine": env["MACHINE"], "threads": thread_counts, "rounds": rounds,
               "runs": runs, "warmup": warmup, "onnxruntime": ort_py is not None,
               "results": results}, f, indent=1)
    f.write("\n")
for base in ("peers.tsv", "peers.json"):
    os.replace(os.path.join(out, base + ".part"), os.path.join(out, base))
print()
print("wrote %s/peers.tsv and %s/peers.json" % (out, out))
DRIVER
