# The newcomer's entry points. Each target first installs the missing Debian packages
# (cmake/install-deps.sh reads cmake/debian-packages.txt), then configures and builds.
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# The make targets are the project's own builds, so warnings are errors here (CI included);
# a plain `cmake` build leaves BYOCL_WERROR off. `make demo WERROR=OFF` for a newer compiler.
WERROR     ?= ON
BYOCL       = $(BUILD_DIR)/tools/byocl

.PHONY: all deps configure build demo test install docs clean fuzz test-asan test-valgrind \
        test-torchvision

all: build

deps:
	cmake/install-deps.sh

# The TVM bridge (docs/tvm.md) in the test builds: cmake/tvm-venv.sh installs tvm-ffi from
# PyPI into <build dir>/tvm-venv and prints its tvm-ffi-config (nothing without PyPI: then
# no bridge, and the tests go on); for `make test` also Apache TVM and onnx, for the Relax
# tests (TVM_BRIDGE=relax). `make test TVM_BRIDGE=` leaves it out.
TVM_BRIDGE ?=
test: TVM_BRIDGE = relax
TVM_FFI_FLAG = $(if $(TVM_BRIDGE),$$(cmake/tvm-venv.sh $(1) $(filter relax,$(TVM_BRIDGE)) | sed 's|^|-DBYOCL_TVM_FFI_CONFIG=|'))

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBYOCL_WERROR=$(WERROR) \
	    $(call TVM_FFI_FLAG,$(BUILD_DIR))

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on a built-in model (no files needed): ResNet-18 built for the host alone
# and with its regions offloaded to OpenCL, run side by side (byocl bench, random
# inputs; docs/benchmarks.md), then the thread's graph as typed text. The compile caches
# stay in $(BUILD_DIR)/bench-cache, so only the first demo compiles everything cold.
demo: build
	$(BYOCL) bench --cache-dir $(BUILD_DIR)/bench-cache
	$(BYOCL) print builtin:seed

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The hardening checks (docs/reliability.md). test-asan: every test built with ASan+UBSan
# in $(ASAN_DIR); the sanitizer settings are in each test's environment (tests/CMakeLists.txt),
# so a plain `ctest --test-dir $(ASAN_DIR)` runs with them too. CI runs it (.ci/run).
ASAN_DIR      ?= build-asan
test-asan: TVM_BRIDGE = on
test-asan: deps
	cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBYOCL_WERROR=$(WERROR) \
	    -DBYOCL_SANITIZE=ON $(call TVM_FFI_FLAG,$(ASAN_DIR))
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS)

# torchvision's classification models against PyTorch on the reference executor, the host
# and OpenCL (tests/test_torchvision.c prints the table; docs/onnx.md, "Real models").
# TORCHVISION=quick (the default): the smallest model of each family; all: every model (hours
# on two cores); or model names, comma-separated. Exported once into $(TORCHVISION_DIR).
TORCHVISION ?= quick
TORCHVISION_DIR = $(BUILD_DIR)/torchvision-$(TORCHVISION)
test-torchvision: build
	cmake/install-deps.sh cmake/debian-packages-torchvision.txt
	/usr/bin/python3 tools/export_torchvision.py $(if $(filter quick all,$(TORCHVISION)),--$(TORCHVISION),--models $(TORCHVISION)) \
	    $(TORCHVISION_DIR)
	BYOCL_TORCHVISION_DIR=$(abspath $(TORCHVISION_DIR)) ctest --test-dir $(BUILD_DIR) \
	    --output-on-failure --timeout 86400 -V -R '^test_torchvision$$'

# valgrind memcheck of the CLI running a built-in model with OpenCL regions: no error, no
# leak (tests/valgrind.supp: PoCL and the dynamic loader only). VALGRIND_MODELS adds more.
VALGRIND_MODELS ?= builtin:seed
VALGRIND = valgrind --leak-check=full --error-exitcode=9 --suppressions=tests/valgrind.supp
test-valgrind: build
	cmake/install-deps.sh cmake/debian-packages-hardening.txt
	for model in $(VALGRIND_MODELS); do \
	    $(VALGRIND) $(BYOCL) run $$model --target opencl --random-inputs || exit 1; \
	done

# libFuzzer targets (fuzz/) built with clang in $(FUZZ_DIR), each run for FUZZ_SECONDS on a
# corpus seeded from the tests; FUZZ_TARGETS picks some (text onnx npy npz pb capture).
FUZZ_DIR     ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
fuzz:
	cmake/install-deps.sh
	cmake/install-deps.sh cmake/debian-packages-hardening.txt
	CC=clang-14 cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DBYOCL_FUZZ=ON \
	    -DBYOCL_WERROR=$(WERROR) -DBYOCL_BUILD_TESTS=OFF
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_all byocl_cli
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh $(FUZZ_DIR) $(FUZZ_TARGETS)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Regenerates the op reference of docs/text-ir.md from `byocl ops --markdown`.
docs: build
	docs/gen-ops.sh $(BYOCL)

clean:
	rm -rf $(BUILD_DIR)
