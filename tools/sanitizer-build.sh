#!/usr/bin/env bash
# make test-asan / make test-tsan: a build of only what the unit tests and
# the cpu conformance column need, with AddressSanitizer and
# UndefinedBehaviorSanitizer (asan) or ThreadSanitizer (tsan), then those
# tests. LLVM/MLIR 22 come uninstrumented from Debian; tk's own code,
# tests and the cpu plugin are instrumented.
#
#   tools/sanitizer-build.sh asan|tsan BUILD_DIR [--build-only|--test-only]
#   tools/sanitizer-build.sh asan BUILD_DIR --configure-only
#
# The asan build is also `make fuzz`'s (tools/fuzz.sh): clang-22 at -O1
# (libFuzzer's advice) with libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) and every backend configured (TK_FUZZ=ON;
# tk-fuzz-package reads each backend's format), so the objects both need are
# compiled once. Only the targets asked for are built: test-asan builds the
# cpu backend and the tests below, fuzz.sh adds the fuzzers.
set -euo pipefail
kind=${1:-} build=${2:-} mode=${3:-all}
case $mode in
  all|--build-only|--test-only|--configure-only) ;;
  *) echo "sanitizer-build.sh: unknown option '$mode'" >&2; exit 2 ;;
esac
[ -n "$build" ] || { echo "usage: sanitizer-build.sh asan|tsan BUILD_DIR [--build-only|--test-only|--configure-only]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)

case $kind in
  asan) flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined"
        link="-fsanitize=address,undefined"
        compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
        options=(-DTK_FUZZ=ON -DTK_CONFORMANCE_GPU_PLUGINS=OFF
                 -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG"
                 -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG")
        # Tests link tk's static libraries and libtk.so, which exports the
        # same MLIR TypeIDs on purpose (runtime/CMakeLists.txt): the dynamic
        # linker binds both to one object. Level 1 still reports a global
        # defined twice with different sizes.
        # LLVM's inline allocators poison their slabs when compiled with
        # ASan (llvm/Support/Compiler.h), and libMLIR's uninstrumented
        # copies do not unpoison what they hand out: user poisoning off.
        export ASAN_OPTIONS=detect_leaks=1:detect_odr_violation=1:allow_user_poisoning=0:strict_string_checks=1
        export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
  tsan) flags="-fsanitize=thread"
        link=$flags
        compilers=()
        options=(-DTK_BACKENDS=cpu)
        export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
  *) echo "sanitizer-build.sh: asan or tsan, not '$kind'" >&2; exit 2 ;;
esac
flags="$flags -fno-omit-frame-pointer -g1"

# Configured again only when these arguments change (a second call, as
# make fuzz after make test-asan, goes straight to the build).
args=(-S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
      "${compilers[@]}" "${options[@]}"
      -DTK_WARNINGS_AS_ERRORS="${TK_WARNINGS_AS_ERRORS:-OFF}"
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
      -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link")
if [ "$mode" != --test-only ] &&
   { [ ! -f "$build/build.ninja" ] ||
     [ "$(cat "$build/sanitizer-args.txt" 2>/dev/null)" != "${args[*]}" ]; }; then
  mkdir -p "$build"
  rm -f "$build/sanitizer-args.txt"
  cmake "${args[@]}" > "$build/sanitizer-configure.log" 2>&1 ||
    { cat "$build/sanitizer-configure.log"; exit 1; }
  echo "${args[*]}" > "$build/sanitizer-args.txt"
fi
[ "$mode" = --configure-only ] && exit 0

tests=(RuntimeTest CApiTest AutotuneTest BadInputsTest PackageFormatTest)
if [ "$mode" != --test-only ]; then
  cmake --build "$build" --target "${tests[@]}" tk-conformance hello
fi
[ "$mode" = --build-only ] && exit 0

# The cpu column once, against guard pages (the plain run adds nothing here).
regex="^($(IFS='|'; echo "${tests[*]}")|conformance-cpu-guard-pages|two-processes-one-cache)\$"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -R "$regex"
