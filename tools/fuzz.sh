#!/usr/bin/env bash
# make fuzz: the fuzz targets of tests/fuzz built by clang-22 with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer in FUZZ_DIR (the build
# make test-asan uses too: tools/sanitizer-build.sh), seeded from the tree and
# the tools of the plain build in BUILD_DIR (tests/fuzz/make-seeds.sh), each
# run for SECONDS.
#
#   tools/fuzz.sh BUILD_DIR FUZZ_DIR SECONDS [--seeds-only|--no-seeds]
#                 [--jobs N] [TARGET...]
#   tools/fuzz.sh --list          the targets, one a line
#
# --seeds-only builds the fuzzers and makes the seeds; --no-seeds runs on the
# seeds an earlier call made (CI times them apart). --jobs N runs N targets
# at a time (default 1), each for SECONDS on one core: CI gives every target
# its seconds in half the wall time on two cores.
#
# The corpus each target grows is kept in FUZZ_DIR/fuzz/corpus/<target>, so
# a second run starts where the first stopped. A crash, leak or timeout
# stops with its input saved in FUZZ_DIR/fuzz/crashes/<target>/; turn it
# into a regression test by fixing it and copying the input to
# tests/fuzz/regressions/<target>/. A summary line per target (runs,
# coverage, corpus) goes to FUZZ_DIR/fuzz/summary.txt.
set -euo pipefail
all=(tk-fuzz-ir-text tk-fuzz-ir-bytecode tk-fuzz-ir-ttir tk-fuzz-kernel-cache tk-fuzz-package tk-fuzz-tkpkg tk-fuzz-launch)
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${all[@]}"
  exit 0
fi
[ $# -ge 3 ] || { echo "usage: fuzz.sh BUILD_DIR FUZZ_DIR SECONDS [--seeds-only|--no-seeds] [TARGET...]" >&2; exit 2; }
plain=$1 build=$2 seconds=$3
shift 3
seeds=make
case ${1:-} in
  --seeds-only) seeds=only; shift ;;
  --no-seeds) seeds=skip; shift ;;
esac
jobs=1
if [ "${1:-}" = --jobs ]; then
  [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] ||
    { echo "fuzz.sh: --jobs needs a positive count, not '${2:-}'" >&2; exit 2; }
  jobs=$2
  shift 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for target in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $target "* ]] ||
    { echo "fuzz.sh: no fuzz target '$target' (--list shows them)" >&2; exit 2; }
done
src=$(cd "$(dirname "$0")/.." && pwd)

export ASAN_OPTIONS=detect_leaks=1:allow_user_poisoning=0:detect_odr_violation=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TK_BACKEND=cpu TK_BACKEND_PATH=$build/lib TK_LOG_LEVEL=off
export TK_CACHE_DIR=$build/fuzz/tk-cache

if [ $seeds != skip ]; then
  bash "$src/tools/sanitizer-build.sh" asan "$build" --configure-only
  cmake --build "$build" --target tk-fuzzers
  env -u ASAN_OPTIONS -u UBSAN_OPTIONS TK_BACKEND_PATH="$plain/lib" \
    bash "$src/tests/fuzz/make-seeds.sh" "$plain" "$build/fuzz/seeds"
  : > "$build/fuzz/summary.txt"
  [ $seeds = only ] && exit 0
fi
[ -d "$build/fuzz/seeds" ] ||
  { echo "fuzz.sh: no seeds in $build/fuzz/seeds (run without --no-seeds first)" >&2; exit 2; }

summary=$build/fuzz/summary.txt

# Runs one target; its summary line goes to FUZZ_DIR/fuzz/<target>.line, so
# that targets run side by side report in the order they were named.
fuzz_target() {
  local target=$1
  local corpus=$build/fuzz/corpus/$target crashes=$build/fuzz/crashes/$target
  local log=$build/fuzz/$target.log status=0
  mkdir -p "$corpus" "$crashes"
  echo "fuzz: $target for ${seconds}s (log: $log)"
  # -timeout: one input may take 25 s at most (a deep but legal kernel
  # verifies in well under that); -rss_limit_mb: 4 GiB.
  local inputs=("$corpus" "$build/fuzz/seeds/$target")
  [ -d "$src/tests/fuzz/regressions/$target" ] && inputs+=("$src/tests/fuzz/regressions/$target")
  if ! "$build/bin/$target" "${inputs[@]}" \
       -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 \
       -print_final_stats=1 -artifact_prefix="$crashes/" > "$log" 2>&1; then
    echo "fuzz: $target FAILED; its input is in $crashes:"
    grep -E "ERROR|invariant broken|SUMMARY" "$log" | head -5 || true
    status=1
  fi
  local runs done_line
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 | tr -s "[:space:]" " " || true)
  echo "$target: ${runs:-?} runs in ${seconds}s; ${done_line:-no DONE line}" \
    > "$build/fuzz/$target.line"
  echo "fuzz: $(cat "$build/fuzz/$target.line")"
  echo $status > "$build/fuzz/$target.status"
  return $status
}

status=0
pids=()
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "$build/fuzz/$target.line" "$build/fuzz/$target.status"
  fuzz_target "$target" &
  pids+=($!)
done
# A job wait -n reaped above has no status left to wait for: each target
# writes its own to FUZZ_DIR/fuzz/<target>.status.
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" 2>/dev/null || true
  [ "$(cat "$build/fuzz/${targets[$i]}.status" 2>/dev/null)" = 0 ] || status=1
  cat "$build/fuzz/${targets[$i]}.line" >> "$summary" 2>/dev/null ||
    echo "${targets[$i]}: no summary line (the run was cut short)" >> "$summary"
done
exit $status
