#!/bin/sh
# Runs libFuzzer targets one after the other, each for FUZZ_SECONDS, on a corpus seeded by
# collect-corpus.sh. Crashes, hangs, leaks and inputs that ask for more memory than the
# limit are written to fuzz/artifacts/<target>/ and make the script fail; the fuzzer's
# output is in fuzz/logs/<target>.log. `make fuzz` calls this after building build-fuzz.
# Usage: fuzz/run.sh BUILD_DIR [TARGET...]   (default: every target)
# Environment: FUZZ_SECONDS (600), FUZZ_RSS_MB (2048), FUZZ_TIMEOUT (10 s per input).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
shift
[ $# -gt 0 ] || set -- text onnx npy npz pb capture
seconds=${FUZZ_SECONDS:-600}
rss_mb=${FUZZ_RSS_MB:-2048}
timeout=${FUZZ_TIMEOUT:-10}
failed=""
for target in "$@"; do
    program="$build/fuzz/fuzz_$target"
    if [ ! -x "$program" ]; then
        echo "fuzz: $program is not built" >&2
        exit 1
    fi
    "$root/fuzz/collect-corpus.sh" "$target" "$build/tools/byocl"
    mkdir -p "$root/fuzz/artifacts/$target" "$root/fuzz/logs"
    log="$root/fuzz/logs/$target.log"
    dict=""
    [ -f "$root/fuzz/$target.dict" ] && dict="-dict=$root/fuzz/$target.dict"
    echo "fuzz: $target for ${seconds}s (log: fuzz/logs/$target.log)"
    # shellcheck disable=SC2086  # $dict is empty or one word
    if "$program" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout="$timeout" \
        -print_final_stats=1 -artifact_prefix="$root/fuzz/artifacts/$target/" $dict \
        "$root/fuzz/corpus/$target" >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz: $target: clean, $execs runs, $(ls "$root/fuzz/corpus/$target" | wc -l) corpus inputs"
    else
        echo "fuzz: $target: FAILED, see fuzz/logs/$target.log and fuzz/artifacts/$target/" >&2
        grep -m1 -E 'ERROR|SUMMARY|==[0-9]+==' "$log" >&2 || true
        failed="$failed $target"
    fi
done
[ -z "$failed" ] || { echo "fuzz: failed:$failed" >&2; exit 1; }
