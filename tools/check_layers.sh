#!/bin/sh
# Checks that every include points down the layers of cmake/layers.txt (or stays in its own
# layer): a file of layer N may include headers of layers 0..N, never of a higher one. Files
# outside the layers (tools/, tests/, fuzz/, docs/examples/) sit above all of them; the CLI
# (tools/) may include public headers (byocl/...) and its own only.
#
#   tools/check_layers.sh [--list] [ROOT]
#
# --list prints every include as "FILE (LAYER) -> HEADER (LAYER)" first. Exits 1 and names
# each wrong-way include when there is one, and each public header that byocl.h leaves
# out. Run by ctest (check_layers).
set -eu
list=0
if [ "${1:-}" = "--list" ]; then
    list=1
    shift
fi
root=${1:-$(dirname "$0")/..}
cd "$root"

# The C files to check: git's list in a checkout (build folders left out), else a find.
sources() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -co --exclude-standard -- 'codegen/*.[ch]' 'runtime/*.[ch]' \
            'tools/*.[ch]' 'tests/*.[ch]' 'fuzz/*.[ch]' 'docs/examples/*.c'
    else
        find codegen runtime tools tests fuzz docs/examples -name '*.[ch]' 2>/dev/null | sort
    fi
}

awk -v list="$list" '
# cmake/layers.txt: layer name, then its folders, lowest layer first.
FNR == NR {
    if ($0 ~ /^[a-z]/) {
        for (i = 2; i <= NF; i++) {
            n = split($i, part, "/")
            layer_of_folder[$i] = $1
            rank_of_folder[$i] = n_layers
            # an include names a folder by its last component ("base/json.h")
            leaf = part[n]
            if (leaf in rank_of_leaf && rank_of_leaf[leaf] != n_layers) {
                printf "cmake/layers.txt: folder name %s is in two layers\n", leaf
                bad = 1
            }
            rank_of_leaf[leaf] = n_layers
            layer_of_leaf[leaf] = $1
        }
        n_layers++
    }
    next
}
FNR == 1 {
    file = FILENAME
    rank = n_layers  # above every layer unless its folder is one of them
    layer = "top"
    for (f in rank_of_folder)
        if (index(file, f "/") == 1) {
            rank = rank_of_folder[f]
            layer = layer_of_folder[f]
        }
    cli = index(file, "tools/") == 1
    # every file of codegen/ and runtime/ belongs to a layer (the build compiles no other)
    if (layer == "top" && file ~ /^(codegen|runtime)\//) {
        printf "%s: its folder is in no layer of cmake/layers.txt\n", file
        bad = 1
    }
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
    header = $0
    sub(/^[^"]*"/, "", header)
    sub(/".*/, "", header)
    if (header ~ /^byocl\//) {
        if (list) printf "%s (%s) -> %s (public)\n", file, layer, header
        next
    }
    slash = index(header, "/")
    leaf = slash ? substr(header, 1, slash - 1) : ""
    if (leaf in rank_of_leaf) {
        if (list) printf "%s (%s) -> %s (%s)\n", file, layer, header, layer_of_leaf[leaf]
        if (rank_of_leaf[leaf] > rank) {
            printf "%s:%d: includes %s of layer %s, above its own layer %s\n", file, FNR, \
                header, layer_of_leaf[leaf], layer
            bad = 1
        } else if (cli) {
            printf "%s:%d: includes %s of layer %s: the CLI uses the public API only\n", \
                file, FNR, header, layer_of_leaf[leaf]
            bad = 1
        }
    } else if (list) {
        printf "%s (%s) -> %s (own folder)\n", file, layer, header
    }
}
END { exit bad ? 1 : 0 }
' cmake/layers.txt $(sources) || status=1

# byocl.h is "everything public, in one include": every public header is in it.
for header in include/byocl/*.h; do
    [ -f include/byocl/byocl.h ] || break
    name=byocl/$(basename "$header")
    [ "$name" = byocl/byocl.h ] && continue
    if ! grep -q "#include \"$name\"" include/byocl/byocl.h; then
        echo "include/byocl/byocl.h: does not include $name"
        status=1
    fi
done
exit "${status:-0}"
