#!/usr/bin/env bash
# make test-asan / make test-tsan: a build of only what the unit tests and
# the cpu conformance column need, with AddressSanitizer and
# UndefinedBehaviorSanitizer (asan) or ThreadSanitizer (tsan), then those
# tests. LLVM/MLIR 22 come uninstrumented from Debian; tk's own code,
# tests and the cpu plugin are instrumented.
#
#   tools/sanitizer-build.sh asan|tsan BUILD_DIR
set -euo pipefail
kind=$1 build=$2
case $kind in
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
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
        export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
  *) echo "sanitizer-build.sh: asan or tsan, not '$kind'" >&2; exit 2 ;;
esac
flags="$flags -fno-omit-frame-pointer -g1"
# The cpu backend alone: the tests below run on it.
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTK_BACKENDS=cpu \
  -DTK_WARNINGS_AS_ERRORS="${TK_WARNINGS_AS_ERRORS:-OFF}" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="${flags%% -fno-omit*}" \
  -DCMAKE_SHARED_LINKER_FLAGS="${flags%% -fno-omit*}" > "$build/sanitizer-configure.log" 2>&1 ||
  { cat "$build/sanitizer-configure.log"; exit 1; }
tests=(RuntimeTest CApiTest AutotuneTest BadInputsTest)
cmake --build "$build" --target "${tests[@]}" tk-conformance hello
# The cpu column once, against guard pages (the plain run adds nothing here).
regex="^($(IFS='|'; echo "${tests[*]}")|conformance-cpu-guard-pages|two-processes-one-cache)\$"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -R "$regex"
