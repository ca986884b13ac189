#!/bin/sh
# Pipeline stages timed three ways in one run (docs/split-and-dot.md, "Figures"): a model
# split in PARTS stages, COUNT random items run one at a time, streamed by one process
# (--pipeline) and across PARTS ranks of an MPI job (--mpi), each compiled for TARGET with
# THREADS threads per stage; then the bytes that cross each cut per item.
#
#   tools/bench_stages.sh [MODEL] [PARTS] [COUNT]
#   BYOCL=build/tools/byocl TARGET=host THREADS=1 tools/bench_stages.sh builtin:mobilenet_v2 2 64
#
# Prints the machine (CPU model and cores) first: the figures mean nothing without it.
set -eu
model=${1:-builtin:resnet18}
parts=${2:-2}
count=${3:-64}
byocl=${BYOCL:-build/tools/byocl}
target=${TARGET:-host}
threads=${THREADS:-1}
mpirun=${MPIRUN:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "machine: $cpu, $(nproc) cores; $model in $parts stages, $count items, target $target," \
    "$threads thread(s) per stage"
"$byocl" split "$model" --parts "$parts" -o "$tmp/stages" | sed -n 's/^  stage/  stage/p'
flags="--random-inputs --count $count --target $target --threads $threads"

summary() { # the throughput and latency lines of a run's report
    grep -E "items/s|latency per item|busy" "$1" | sed 's/^/  /'
}
echo "one at a time:"
# shellcheck disable=SC2086  # $flags is a list of flags
"$byocl" run-stages "$tmp/stages" $flags >"$tmp/seq.log"
summary "$tmp/seq.log"
echo "--pipeline (one process, a worker thread per stage):"
# shellcheck disable=SC2086
"$byocl" run-stages "$tmp/stages" $flags --pipeline >"$tmp/pipe.log"
summary "$tmp/pipe.log"
if command -v "$mpirun" >/dev/null 2>&1; then
    echo "--mpi ($parts ranks on this host, TCP):"
    # shellcheck disable=SC2086
    "$mpirun" --allow-run-as-root --oversubscribe --mca btl self,tcp -np "$parts" \
        "$byocl" run-stages "$tmp/stages" --mpi $flags >"$tmp/mpi.log" 2>&1 ||
        { cat "$tmp/mpi.log" >&2; exit 1; }
    summary "$tmp/mpi.log"
else
    echo "--mpi: no $mpirun (install openmpi-bin)"
fi
