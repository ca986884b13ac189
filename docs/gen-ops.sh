#!/bin/sh
# Regenerates the op reference of docs/text-ir.md from `byocl ops --markdown`: replaces
# everything between the begin and end markers. tests/test_cli.c fails when they differ.
# Usage: docs/gen-ops.sh [BYOCL]   (default: build/tools/byocl)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
byocl=${1:-$root/build/tools/byocl}
doc=$root/docs/text-ir.md
begin='<!-- begin: byocl ops --markdown -->'
end='<!-- end: byocl ops --markdown -->'
tmp=$doc.tmp.$$
trap 'rm -f "$tmp" "$tmp.ops"' EXIT
"$byocl" ops --markdown >"$tmp.ops"
awk -v begin="$begin" -v end="$end" -v ops="$tmp.ops" '
    $0 == begin { print; while ((getline line < ops) > 0) print line; skipping = 1; next }
    $0 == end   { skipping = 0 }
    !skipping   { print }
' "$doc" >"$tmp"
grep -qxF "$begin" "$tmp" && grep -qxF "$end" "$tmp" || { echo "gen-ops: markers missing in $doc" >&2; exit 1; }
mv "$tmp" "$doc"
echo "gen-ops: updated the op reference of $doc"
