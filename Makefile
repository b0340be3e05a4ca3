# tk: two commands on a fresh Debian 12 machine.
#   make demo   install what is missing, configure, build, run the examples
#   make test   the same set-up, then every test through ctest
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps configure build demo test test-asan test-tsan fuzz conformance docs install deb format clean

all: build

deps:
	@bash tools/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DTK_WARNINGS_AS_ERRORS=$(if $(CI),ON,OFF)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash tools/demo.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The unit tests, the bad-input catalogue and the cpu conformance column
# (against guard pages) built with AddressSanitizer and
# UndefinedBehaviorSanitizer in $(BUILD)-san: clang-22, only what they need.
# make fuzz builds its targets in the same folder, so the objects both need
# are compiled once (tools/sanitizer-build.sh).
test-asan: deps
	bash tools/sanitizer-build.sh asan $(BUILD)-san

# The same tests under ThreadSanitizer, in $(BUILD)-tsan.
test-tsan: deps
	bash tools/sanitizer-build.sh tsan $(BUILD)-tsan

# The libFuzzer targets of tests/fuzz (clang-22, ASan+UBSan) in
# $(BUILD)-san, seeded from $(BUILD), each for FUZZ_SECONDS (CI: 20), FUZZ_JOBS
# at a time (default: the cores);
# FUZZ_TARGETS narrows them. Findings land in $(BUILD)-san/fuzz/crashes/.
FUZZ_SECONDS ?= 120
FUZZ_TARGETS ?=
FUZZ_JOBS ?= $(shell nproc)
fuzz: build
	bash tools/fuzz.sh $(BUILD) $(BUILD)-san $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) $(FUZZ_TARGETS)

# Every conformance column whole, with its validators: cpu (and against
# guard pages), vulkan on lavapipe at subgroups of 8 and 16, cuda, rocm
# gfx942 and gfx1100, xe pvc and dg2 (make test runs the rocm and xe columns
# on a stated part of their cells: README "What CI runs"). Reports in
# $(BUILD)/conformance/<column>/.
conformance: build
	bash tools/conformance.sh $(BUILD)

# The op references at the end of docs/tile-ir.md and docs/warp-dialect.md,
# generated from the ODS (ctest's docs-generated checks them).
docs:
	bash tools/gen-docs.sh

# A prefix as users get it: bin/, include/tk/, lib/ (plugins in lib/tk/),
# lib/cmake/tk (find_package), lib/pkgconfig/tk.pc, share/tk/.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The same install as a Debian package, in $(BUILD)/packages.
deb: build
	cpack --config $(BUILD)/CPackConfig.cmake -G DEB -B $(BUILD)/packages

format:
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
