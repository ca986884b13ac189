#!/bin/sh
# tools/check_layers.sh must fail on an include that points up a layer, on a CLI file that
# includes a layer's header, on a source folder no layer lists and on a public header that
# byocl.h leaves out, naming file, line and layers; and pass on a clean tree.
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cmake" "$tmp/runtime/base" "$tmp/runtime/executor" "$tmp/tools" \
    "$tmp/include/byocl"
printf '#include "byocl/error.h"\n' > "$tmp/include/byocl/byocl.h"
printf '/* errors */\n' > "$tmp/include/byocl/error.h"
cp "$src/cmake/layers.txt" "$tmp/cmake/"
printf '#include "base/strbuf.h"\n' > "$tmp/runtime/executor/run.c"
printf '#include "byocl/runtime.h"\n#include "cli.h"\n' > "$tmp/tools/cmd.c"
if ! "$src/tools/check_layers.sh" "$tmp" > "$tmp/out" 2>&1; then
    echo "a clean tree failed:"; cat "$tmp/out"; exit 1
fi
printf '/* a comment */\n#include "executor/executor_impl.h"\n' > "$tmp/runtime/base/strbuf.c"
printf '#include "ir/ir_impl.h"\n' >> "$tmp/tools/cmd.c"
printf '/* forgotten */\n' > "$tmp/include/byocl/runtime.h"
mkdir -p "$tmp/runtime/misc"
printf 'int x;\n' > "$tmp/runtime/misc/stray.c"
"$src/tools/check_layers.sh" "$tmp" > "$tmp/out" 2>&1
rc=$?
want="runtime/base/strbuf.c:2: includes executor/executor_impl.h of layer executor, above its own layer base
runtime/misc/stray.c: its folder is in no layer of cmake/layers.txt
tools/cmd.c:3: includes ir/ir_impl.h of layer ir: the CLI uses the public API only
include/byocl/byocl.h: does not include byocl/runtime.h"
if [ "$rc" -ne 1 ] || [ "$(cat "$tmp/out")" != "$want" ]; then
    echo "exit $rc, output:"; cat "$tmp/out"; echo "wanted exit 1 and:"; echo "$want"; exit 1
fi
echo "check_layers.sh catches wrong-way includes"
