#!/bin/sh
# byocl run-stages --mpi under mpirun (ctest mpi_stages; built where MPI is found):
#   tests/mpi_stages_test.sh BYOCL MPIRUN
# resnet18 in 2 and 3 stages, compiled for the host, on 2 and 3 ranks (and 3 stages on 2
# ranks): every item's outputs bitwise those of the one-process pipeline, which match the
# unsplit model's run within float error; a stage offloaded to OpenCL on its own rank; then
# the failures: a wrong -np, ranks that read different stages, a stage that does not build,
# a rank killed mid-stream (every rank gone, non-zero, within 10 s, the rank named).
set -eu
# Debian's python3 with python3-numpy (cmake/debian-packages.txt), whatever else is on PATH.
python=/usr/bin/python3
byocl=$1
mpirun=$2
tmp=${BYOCL_TEST_TMP:-/tmp}/mpi-stages
rm -rf "$tmp"
mkdir -p "$tmp"
# As root mpirun wants --allow-run-as-root; 2 cores hold 3 ranks only oversubscribed; TCP is
# the transport between hosts, so it is the one tested.
# In a sanitizer build the ranks check memory errors but not leaks: Open MPI unloads its
# components in MPI_Finalize, and what they keep is then reported with no frame to tell it
# from byocl's (the runs of one process below keep the leak check).
mpi() {
    np=$1
    shift
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "$mpirun" --allow-run-as-root --oversubscribe --mca btl self,tcp -np "$np" "$@"
}
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# same_outputs A B: every .npy under A is bitwise the one under B, and there is one.
same_outputs() {
    n=0
    for f in $(cd "$1" && find . -name '*.npy' | sort); do
        cmp -s "$1/$f" "$2/$f" || fail "$1/$f differs from $2/$f"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || fail "no outputs in $1"
}
# expect_failure NAME TEXT OUTPUT-FILE: the command failed and printed TEXT.
expect_text() {
    grep -qF -- "$2" "$3" || { cat "$3" >&2; fail "$1: no '$2' in the output"; }
}

"$byocl" split builtin:resnet18 --parts 2 -o "$tmp/r18-2" >/dev/null
"$byocl" split builtin:resnet18 --parts 3 -o "$tmp/r18-3" >/dev/null
items=4
flags="--random-inputs=7 --count $items --target host --threads 1"

# The unsplit model, item i's inputs from seed 7 + i: the reference of every split run.
i=0
while [ $i -lt $items ]; do
    "$byocl" run builtin:resnet18 --random-inputs=$((7 + i)) --target host --threads 1 \
        --output-dir "$tmp/whole/item_$i" >/dev/null
    i=$((i + 1))
done
for parts in 2 3; do
    # shellcheck disable=SC2086  # $flags is a list of flags
    "$byocl" run-stages "$tmp/r18-$parts" $flags --pipeline --output-dir "$tmp/pipe-$parts" \
        >/dev/null
    "$python" - "$tmp/pipe-$parts" "$tmp/whole" "$items" <<'EOF'
import sys, numpy as np
got, want, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    a = np.load(f"{got}/item_{i}/output_0.npy")
    b = np.load(f"{want}/item_{i}/output_0.npy")
    err = np.linalg.norm(a - b) / np.linalg.norm(b)
    if err > 1e-5:
        sys.exit(f"item {i}: relative L2 error {err} against the unsplit model")
EOF
    # shellcheck disable=SC2086
    mpi "$parts" "$byocl" run-stages "$tmp/r18-$parts" --mpi $flags \
        --output-dir "$tmp/mpi-$parts" >"$tmp/mpi-$parts.log" 2>&1 ||
        { cat "$tmp/mpi-$parts.log" >&2; fail "mpirun -np $parts"; }
    same_outputs "$tmp/mpi-$parts" "$tmp/pipe-$parts"
    expect_text "-np $parts" "streamed across $parts ranks (MPI, queues of 2) $items items through $parts stages of $tmp/r18-$parts in " "$tmp/mpi-$parts.log"
    expect_text "-np $parts" "rank 1 on " "$tmp/mpi-$parts.log"
    expect_text "-np $parts" " on rank 1 (target host)" "$tmp/mpi-$parts.log"
done

# Three stages on two ranks: rank 1 runs stages 1 and 2.
# shellcheck disable=SC2086
mpi 2 "$byocl" run-stages "$tmp/r18-3" --mpi --ranks 0,1,1 $flags --depth 1 \
    --output-dir "$tmp/mpi-3on2" >"$tmp/3on2.log" 2>&1 || { cat "$tmp/3on2.log" >&2; fail "--ranks 0,1,1"; }
same_outputs "$tmp/mpi-3on2" "$tmp/pipe-3"
expect_text "--ranks 0,1,1" "stages 1 to 2, $items items" "$tmp/3on2.log"

# A stage on OpenCL (a small model: PoCL compiles it in seconds), inputs from files.
cat >"$tmp/residual.relay" <<'EOF'
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 3, 3), float32], %w2: Tensor[(4, 4, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %w2, padding=[1, 1]);
  %3 = add(%2, %0);
  nn.relu(%3)
}
EOF
"$byocl" split "$tmp/residual.relay" --at %1 -o "$tmp/res" >/dev/null
"$python" - "$tmp/items" <<'EOF'
import os, sys, numpy as np
rng = np.random.default_rng(5)
os.makedirs(sys.argv[1])
for i in range(3):
    np.savez(f"{sys.argv[1]}/in_{i}.npz", x=rng.random((1, 4, 8, 8), dtype=np.float32),
             w1=rng.random((4, 4, 3, 3), dtype=np.float32),
             w2=rng.random((4, 4, 3, 3), dtype=np.float32))
EOF
"$byocl" run-stages "$tmp/res" --inputs "$tmp/items" --stage 1:target=opencl \
    --output-dir "$tmp/res-one" >/dev/null
mpi 2 "$byocl" run-stages "$tmp/res" --mpi --inputs "$tmp/items" --stage 1:target=opencl \
    --output-dir "$tmp/res-mpi" >"$tmp/res.log" 2>&1 || { cat "$tmp/res.log" >&2; fail "opencl stage"; }
same_outputs "$tmp/res-mpi" "$tmp/res-one"
expect_text "opencl stage" "rank 1: built stage 1 for target opencl in " "$tmp/res.log"

# A wrong -np: every rank stops before building, the message printed once.
status=0
mpi 2 "$byocl" run-stages "$tmp/r18-3" --mpi --random-inputs >"$tmp/np.log" 2>&1 || status=$?
[ "$status" = 1 ] || fail "-np 2 for 3 stages: exit status $status, not 1"
expect_text "-np 2" "byocl: error: the 3 stages are placed on 3 ranks, but the job has 2 (mpirun -np 2); start a rank per stage (mpirun -np 3) or place the stages with --ranks" "$tmp/np.log"
[ "$(grep -c 'byocl: error' "$tmp/np.log")" = 1 ] || fail "-np 2: the message more than once"
grep -q "built stage" "$tmp/np.log" && fail "-np 2: stages were built"

# A placement that is not one: ranks out of order, a rank per stage missing. The message
# once, from every rank alike.
if mpi 2 "$byocl" run-stages "$tmp/r18-3" --mpi --random-inputs --ranks 0,2,1 >"$tmp/ranks.log" 2>&1; then
    fail "--ranks 0,2,1 succeeded"
fi
expect_text "--ranks 0,2,1" "byocl: error: --ranks 0,2,1: stage 1 on rank 2: stage 0 goes on rank 0 and each stage on the rank of the one before or the next" "$tmp/ranks.log"
[ "$(grep -c 'byocl: error' "$tmp/ranks.log")" = 1 ] || fail "--ranks 0,2,1: the message more than once"
status=0
mpi 2 "$byocl" run-stages "$tmp/r18-3" --mpi --random-inputs --ranks 0,1 >"$tmp/ranks.log" 2>&1 ||
    status=$?
[ "$status" = 2 ] || fail "--ranks 0,1 for 3 stages: exit status $status, not 2 (a usage error)"
expect_text "--ranks 0,1" "byocl: error: --ranks 0,1: 2 ranks for 3 stages (one per stage); see 'byocl run-stages --help'" "$tmp/ranks.log"

# Ranks that read different stages (MPMD: rank 0 one split, rank 1 another).
if mpi 1 "$byocl" run-stages "$tmp/r18-2" --mpi --random-inputs : \
    -np 1 "$byocl" run-stages "$tmp/res" --mpi --random-inputs >"$tmp/mix.log" 2>&1; then
    fail "different stages on two ranks succeeded"
fi
expect_text "mixed stages" "byocl: error: rank 1 read other stages than rank 0: rank 0 has 'input 0: data Tensor[(1, 3, 224, 224), float32]', rank 1 has 'input 0: x Tensor[(1, 4, 8, 8), float32]' (every host needs the same split model)" "$tmp/mix.log"

# A stage that does not build: its rank's message, every rank stops.
if mpi 2 "$byocl" run-stages "$tmp/res" --mpi --random-inputs \
    --stage 1:target=opencl,device=nvidia >"$tmp/build.log" 2>&1; then
    fail "a stage that does not build succeeded"
fi
expect_text "build failure" "rank 1: byocl: error: stage 1: target option opencl.device: device 'nvidia' names no device of target opencl" "$tmp/build.log"

# An input file that does not match: rank 0's message.
"$python" -c "import numpy as np; np.save('$tmp/bad.npy', np.zeros((2, 2), np.float32))"
if mpi 2 "$byocl" run-stages "$tmp/r18-2" --mpi --input "data=$tmp/bad.npy" >"$tmp/input.log" 2>&1; then
    fail "a wrong input succeeded"
fi
expect_text "wrong input" "rank 0: byocl: error: input 'data': expected Tensor[(1, 3, 224, 224), float32], got Tensor[(2, 2), float32] from $tmp/bad.npy" "$tmp/input.log"

# An item file that does not fit, mid-stream: rank 0 names it and ends the job (MPI_Abort;
# Open MPI's own banner about that is not always whole), and no output is written.
cp -r "$tmp/items" "$tmp/items-bad"
"$python" -c "import numpy as np; np.savez('$tmp/items-bad/in_2.npz', x=np.zeros((1, 4, 8, 8), np.float32))"
if mpi 2 "$byocl" run-stages "$tmp/res" --mpi --inputs "$tmp/items-bad" \
    --output-dir "$tmp/res-bad" >"$tmp/bad-item.log" 2>&1; then
    fail "a bad item file succeeded"
fi
expect_text "bad item" "byocl: error: rank 0 (stage 0), item 2: $tmp/items-bad/in_2.npz has 2 unbound inputs: w1, w2; give each in $tmp/items-bad/in_2.npz" "$tmp/bad-item.log"
[ ! -e "$tmp/res-bad" ] || fail "outputs written by a job that failed"

# A rank killed mid-stream: mpirun ends every rank, non-zero, within 10 s, naming the rank;
# the ranks' first lines tell its stage.
mpi 3 "$byocl" run-stages "$tmp/r18-3" --mpi --random-inputs --count 100000 --target host \
    --threads 1 --output-dir "$tmp/killed" >"$tmp/kill.log" 2>&1 &
job=$!
victim=""
tries=0
while [ -z "$victim" ] && [ $tries -lt 600 ]; do
    for pid in $(pgrep -f "run-stages $tmp/r18-3 --mpi" || true); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" &&
            grep -q "rank 1 on .*: stage 1, 100000 items" "$tmp/kill.log"; then
            victim=$pid
        fi
    done 2>/dev/null
    tries=$((tries + 1))
    [ -n "$victim" ] || sleep 0.1
done
[ -n "$victim" ] || { kill "$job"; fail "rank 1 never started streaming"; }
sleep 1
kill -9 "$victim"
killed_at=$(date +%s)
status=0
wait "$job" || status=$?
took=$(($(date +%s) - killed_at))
[ "$status" -ne 0 ] || fail "mpirun exited 0 after rank 1 was killed"
[ "$took" -le 10 ] || fail "the job took $took s to end after rank 1 was killed"
expect_text "killed rank" "process rank 1 with PID" "$tmp/kill.log"
expect_text "killed rank" "rank 1 on " "$tmp/kill.log"
if pgrep -f "run-stages $tmp/r18-3 --mpi" >/dev/null; then
    fail "ranks left running after rank 1 was killed"
fi
[ ! -e "$tmp/killed" ] || fail "outputs written by a job that failed"
rm -rf "$tmp"
echo "mpi_stages: all passed"
