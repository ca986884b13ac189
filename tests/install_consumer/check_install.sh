#!/usr/bin/env bash
# (Command substitutions are assigned first so that set -e sees their failures.)
# Installs the build in BUILD_DIR into a fresh prefix under WORK_DIR, then builds the
# consumer program against it twice (pkg-config, then CMake's find_package) and runs it,
# runs the installed CLI, and builds and runs the docs' example program both ways. Prints one line per check; on a failure, the step's log.
# Usage: check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
work=$2
prefix=$work/prefix
log=$work/step.log
rm -rf "$work"
mkdir -p "$work"

step() { # step COMMAND...: runs it quietly; shows its output only when it fails
    if ! "$@" >"$log" 2>&1; then
        echo "step failed: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}

step cmake --install "$build" --prefix "$prefix"
pc=$(find "$prefix" -name byocl.pc | head -n 1)
[ -n "$pc" ] || { echo "no byocl.pc under $prefix" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir byocl)
version=$(pkg-config --modversion byocl)
echo "pkg-config version: $version"

# shellcheck disable=SC2046  # pkg-config prints several words on purpose
step cc -std=c11 -Wall -Wextra -Werror "$here/consumer.c" -o "$work/consumer_pc" \
    $(pkg-config --cflags --libs byocl)
out=$(LD_LIBRARY_PATH=$libdir "$work/consumer_pc")
echo "pkg-config: $out"

step cmake -S "$here" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix"
step cmake --build "$work/consumer-build"
out=$("$work/consumer-build/consumer")
echo "find_package: $out"

out=$("$prefix/bin/byocl" --version)
echo "cli: $out"

# The OpenCL build worker, where the library looks for it; without arguments it says why
# it refuses (exit status 2).
rc=0
out=$("$prefix/libexec/byocl/byocl-opencl-build" 2>&1) || rc=$?
echo "worker: exit $rc: $(echo "$out" | head -n 1)"

# The docs' example program (docs/examples/run_model.c), built with pkg-config and with
# find_package, runs builtin:seed on target ref; each line of its output is prefixed.
examples=$here/../../docs/examples
# shellcheck disable=SC2046
step cc -std=c11 -Wall -Wextra -Werror "$examples/run_model.c" -o "$work/run_model_pc" \
    $(pkg-config --cflags --libs byocl)
out=$(LD_LIBRARY_PATH=$libdir "$work/run_model_pc" builtin:seed ref)
echo "$out" | sed 's/^/example pkg-config: /'
step cmake -S "$examples" -B "$work/example-build" -DCMAKE_PREFIX_PATH="$prefix"
step cmake --build "$work/example-build"
out=$("$work/example-build/run_model" builtin:seed ref)
echo "$out" | sed 's/^/example find_package: /'
