#!/usr/bin/env bash
# Builds byocl (library, CLI, plugins, tests) with warnings as errors in each build type, with
# each compiler given, so that no build type a user picks meets a warning (CMake's default
# flags differ: -O3 in Release finds truncation warnings that -O2 does not).
#   tools/check_build_types.sh [-o DIR] [TYPE...]      TYPE: Debug RelWithDebInfo Release MinSizeRel
# CC may list several compilers: CC="gcc clang-14" tools/check_build_types.sh. Each build goes
# to DIR/<compiler>-<type> (default DIR: build-types). Exit status: 1 at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-types
if [[ "${1:-}" == "-o" ]]; then
    out=$2
    shift 2
fi
types=("$@")
[[ ${#types[@]} -gt 0 ]] || types=(Debug RelWithDebInfo Release MinSizeRel)
compilers=(${CC:-cc})
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$out"
for cc in "${compilers[@]}"; do
    for type in "${types[@]}"; do
        dir="$out/$(basename "$cc")-$type"
        echo "== $cc $type ($dir)"
        start=$(date +%s)
        CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DBYOCL_WERROR=ON >"$dir.log" 2>&1 ||
            { cat "$dir.log"; exit 1; }
        cmake --build "$dir" -j "$jobs" >>"$dir.log" 2>&1 || { grep -B2 -A6 -E 'error|warning' "$dir.log" | head -80; exit 1; }
        echo "   built without a warning in $(( $(date +%s) - start )) s"
    done
done
