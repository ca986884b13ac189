#!/bin/sh
# Installs tvm-ffi (PyPI's apache-tvm-ffi: tvm/ffi/c_api.h, dlpack.h, libtvm_ffi.so and the
# tvm-ffi-config program) into a Python venv, BUILD_DIR/tvm-venv, for byocl's TVM bridge
# (cmake/tvm.cmake, docs/tvm.md), and prints the path of its tvm-ffi-config on stdout, to
# be given to CMake as -DBYOCL_TVM_FFI_CONFIG. `make test` and `make test-asan` run it.
#
#   cmake/tvm-venv.sh BUILD_DIR
#
# A venv that has tvm-ffi-config already is reused without any download. When there is no
# python3 with venv (Debian: python3-venv) or PyPI cannot be reached, it says so on stderr,
# leaves no venv, prints nothing on stdout and exits 0: byocl then builds without the
# bridge. Environment: PYTHON (default python3), BYOCL_TVM_FFI_PIP (what pip installs;
# default apache-tvm-ffi==0.1.*, the series that TVM 0.27 uses).
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
venv="$1/tvm-venv"
config="$venv/bin/tvm-ffi-config"
python="${PYTHON:-python3}"
requirement="${BYOCL_TVM_FFI_PIP:-apache-tvm-ffi==0.1.*}"

skip() {
    echo "tvm-venv: $*; byocl builds without the TVM bridge (docs/tvm.md)" >&2
    rm -rf "$venv"
    exit 0
}

if [ -x "$config" ] && "$config" --libdir >/dev/null 2>&1; then
    echo "$config"
    exit 0
fi
rm -rf "$venv"
mkdir -p "$1"
command -v "$python" >/dev/null 2>&1 || skip "no $python"
"$python" -m venv "$venv" >/dev/null 2>&1 ||
    skip "$python -m venv failed (Debian: apt-get install python3-venv)"
echo "tvm-venv: pip install $requirement into $venv" >&2
# Short timeouts and one retry: an offline machine gives up in well under a minute.
if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --timeout 15 \
    --retries 1 "$requirement" >"$venv.log" 2>&1; then
    tail -n 3 "$venv.log" >&2
    rm -f "$venv.log"
    skip "cannot install $requirement from PyPI (offline?)"
fi
rm -f "$venv.log"
[ -x "$config" ] && "$config" --libdir >/dev/null 2>&1 ||
    skip "$requirement installed no working tvm-ffi-config"
echo "$config"
