# tk: two commands on a fresh Debian 12 machine.
#   make demo   install what is missing, configure, build, run the examples
#   make test   the same set-up, then every test through ctest
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps configure build demo test test-asan test-tsan fuzz conformance install deb format clean

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
# (plain and against guard pages) built with AddressSanitizer and
# UndefinedBehaviorSanitizer in $(BUILD)-asan: only what they need.
test-asan: deps
	bash tools/sanitizer-build.sh asan $(BUILD)-asan

# The same tests under ThreadSanitizer, in $(BUILD)-tsan.
test-tsan: deps
	bash tools/sanitizer-build.sh tsan $(BUILD)-tsan

# The libFuzzer targets of tests/fuzz (clang-22, ASan+UBSan) in
# $(BUILD)-fuzz, seeded from $(BUILD), each for FUZZ_SECONDS (CI: 60); FUZZ_TARGETS
# narrows them. Findings land in $(BUILD)-fuzz/fuzz/crashes/.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?=
fuzz: build
	bash tools/fuzz.sh $(BUILD) $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

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
