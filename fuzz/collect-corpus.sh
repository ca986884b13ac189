#!/bin/sh
# Seeds fuzz/corpus/<target>/ from the test fixtures (tests/fixtures/**), the inputs that
# once crashed (tests/fuzz_regressions/<target>/), the few hand-written seeds of
# fuzz/seeds/<target>/ (formats the fixtures lack) and, for the text parser, the built-in
# models as `byocl print` writes them. Copies are named by content (cp of the same file
# twice is harmless), so a corpus the fuzzer has grown is kept and only topped up.
# Usage: fuzz/collect-corpus.sh TARGET [BYOCL_CLI]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
target=$1
cli=${2:-}
corpus="$root/fuzz/corpus/$target"
mkdir -p "$corpus"

case $target in
text) pattern='*.relay' ;;
onnx) pattern='*.onnx' ;;
npy) pattern='*.npy' ;;
npz) pattern='*.npz' ;;
pb) pattern='*.pb' ;;
capture) pattern='manifest.json' ;;
*) echo "collect-corpus: unknown target '$target' (text, onnx, npy, npz, pb, capture)" >&2; exit 2 ;;
esac

add() { # add FILE: copies it under its checksum
    sum=$(sha1sum "$1" | cut -d' ' -f1)
    [ -e "$corpus/$sum" ] || cp "$1" "$corpus/$sum"
}

find "$root/tests/fixtures" -type f -name "$pattern" | while read -r f; do add "$f"; done
for dir in "$root/tests/fuzz_regressions/$target" "$root/fuzz/seeds/$target"; do
    [ -d "$dir" ] || continue
    find "$dir" -type f | while read -r f; do add "$f"; done
done
if [ "$target" = text ] && [ -n "$cli" ] && [ -x "$cli" ]; then
    tmp=$(mktemp)
    for model in seed resnet18 mobilenet_v2; do
        "$cli" print "builtin:$model" >"$tmp" 2>/dev/null && add "$tmp"
    done
    rm -f "$tmp"
fi
echo "collect-corpus: $target: $(ls "$corpus" | wc -l) inputs in fuzz/corpus/$target"
