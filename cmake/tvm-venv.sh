#!/bin/sh
# Installs tvm-ffi (PyPI's apache-tvm-ffi: tvm/ffi/c_api.h, dlpack.h, libtvm_ffi.so and the
# tvm-ffi-config program) into a Python venv, BUILD_DIR/tvm-venv, for byocl's TVM bridge
# (cmake/tvm.cmake, docs/tvm.md), and prints the path of its tvm-ffi-config on stdout, to
# be given to CMake as -DBYOCL_TVM_FFI_CONFIG. `make test` and `make test-asan` run it.
# With `relax`, it also installs Apache TVM itself and onnx (about 450 MB) for the Relax
# tests (tests/tvm/test_relax.py); `make test` asks for that.
#
#   cmake/tvm-venv.sh BUILD_DIR [relax]
#
# A venv that has tvm-ffi-config already is reused without any download. When there is no
# python3 with venv (Debian: python3-venv) or PyPI cannot be reached, it says so on stderr,
# leaves no venv, prints nothing on stdout and exits 0: byocl then builds without the
# bridge; when TVM cannot be installed, the bridge is still built and the Relax tests say
# they are skipped. Environment: PYTHON (default python3), BYOCL_TVM_FFI_PIP (what pip
# installs; default apache-tvm-ffi==0.1.*, the series that TVM 0.27 uses), BYOCL_TVM_PIP
# (default "apache-tvm==0.27.* onnx").
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ $# -eq 2 ] && [ "$2" != relax ]; }; then
    echo "usage: $0 BUILD_DIR [relax]" >&2
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

# Apache TVM and onnx for the Relax tests, unless the venv has them.
install_relax() {
    [ "${1:-}" = relax ] || return 0
    "$venv/bin/python" -c "import tvm, onnx" >/dev/null 2>&1 && return 0
    relax_requirement="${BYOCL_TVM_PIP:-apache-tvm==0.27.* onnx}"
    echo "tvm-venv: pip install $relax_requirement into $venv" >&2
    # shellcheck disable=SC2086 # the requirement is a list
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet \
        --timeout 15 --retries 1 $relax_requirement >"$venv.log" 2>&1; then
        tail -n 3 "$venv.log" >&2
        echo "tvm-venv: cannot install $relax_requirement from PyPI (offline?); the Relax" \
            "tests (tvm_relax) will say they are skipped" >&2
    fi
    rm -f "$venv.log"
}

if [ -x "$config" ] && "$config" --libdir >/dev/null 2>&1; then
    install_relax "${2:-}"
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
install_relax "${2:-}"
echo "$config"
