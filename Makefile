# The newcomer's entry points. Each target first installs the missing Debian packages
# (cmake/install-deps.sh reads cmake/debian-packages.txt), then configures and builds.
BUILD_DIR  ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
BYOCL       = $(BUILD_DIR)/tools/byocl

.PHONY: all deps configure build demo test install docs clean

all: build

deps:
	cmake/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job on a built-in model (no files needed): ResNet-18 on the reference
# executor with deterministic random inputs, then the thread's graph as typed text.
demo: build
	$(BYOCL) run builtin:resnet18 --random-inputs
	$(BYOCL) print builtin:seed

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Regenerates the op reference of docs/text-ir.md from `byocl ops --markdown`.
docs: build
	docs/gen-ops.sh $(BYOCL)

clean:
	rm -rf $(BUILD_DIR)
