#!/usr/bin/env bash
# The CUDA backend's checks on a machine with an NVIDIA GPU (CI has none):
# the cuda column of the conformance matrix (every cell the backend does not
# declare UNSUPPORTED must PASS), the CUDA driver tests, the examples,
# compute-sanitizer memcheck and racecheck over the suite, and the SASS of
# the fp16 matmul for sm_80 and sm_90a. Results go to OUTDIR (default
# $OUT): summary.txt, sanitizers.txt (the sanitizers' summaries, which
# docs/ keeps), and each step's log. Exits non-zero when any step fails.
#
#   ../shared/device/kit.sh pack build/bin build/lib     # on the dev machine
#   bash .device/run.sh bash backends/cuda/test/gpu/cuda-suite.sh OUTDIR
set -uo pipefail
out=${1:-${OUT:?give an output folder}}
bin=./build/bin
source "$(dirname "$0")/steps.sh"
export TK_CACHE_DIR
# The TTIR corpus of this tree (tk-conformance's ttir_* cases), wherever it runs.
export TK_TTIR_CORPUS=$PWD/tests/ttir/corpus
TK_CACHE_DIR=$(mktemp -d)

step "device"
{ nvidia-smi -L; "$bin/tk-info"; } >>"$summary" 2>&1

step "conformance (cuda column)"
timeout ${CONFORMANCE_TIMEOUT:-300} "$bin/tk-conformance" --backend cuda \
  --expect pass --out "$out" >"$out/conformance.log" 2>&1
record tk-conformance $?
grep -E "cells|floor" "$out/conformance.log" >>"$summary"
grep -A1 " FAIL$" "$out/conformance.log" | head -40 >>"$summary"

step "CUDA driver and backend tests"
timeout 300 "$bin/tk-cuda-driver-test" >"$out/driver-test.log" 2>&1
record tk-cuda-driver-test $?
tail -3 "$out/driver-test.log" >>"$summary"

step "examples on cuda"
TK_BACKEND=cuda timeout 60 "$bin/tk-examples" softmax matmul >>"$summary" 2>&1
record tk-examples $?

step "a Triton kernel from its TTIR (examples/c/triton_kernel.c) on cuda"
TK_BACKEND=cuda timeout 60 "$bin/triton_kernel" \
  tests/ttir/corpus/vector_add/kernel.ttir >>"$summary" 2>&1
record triton_kernel $?

step "a dot the unit does not hold (mma.sync's emit path) against torch"
TK_BACKEND=cuda TK_LIBRARY="$PWD/build/lib/libtk.so" timeout 120 \
  python3 backends/cuda/test/gpu/unheld-dot.py >>"$summary" 2>&1
record unheld-dot $?

step "SASS of the fp16 matmul"
for arch in sm_80 sm_90a; do
  cubin=$(mktemp --suffix=.cubin)
  "$bin/tk-compile" examples/kernels/matmul.tk --backend cuda --entry matmul \
    --arch "$arch" --num-warps 4 --emit binary -o "$cubin" >>"$summary" 2>&1
  record "tk-compile cuda $arch" $?
  sass=$(cuobjdump -sass "$cubin")
  hmma=$(grep -c -E "HMMA|HGMMA" <<<"$sass")
  echo "$arch: $(grep -c HMMA <<<"$sass") HMMA, $(grep -c HGMMA <<<"$sass") HGMMA" >>"$summary"
  [ "$hmma" -gt 0 ]; record "tensor-core instructions in the $arch SASS" $?
done

sanitize() { # tool, kernels (empty: all)
  local tool=$1 kernels=$2 log=$out/$1.log
  local args=(--backend cuda --expect pass --out "$(mktemp -d)")
  [ -n "$kernels" ] && args+=(--kernel "$kernels")
  timeout ${SANITIZER_TIMEOUT:-400} compute-sanitizer --tool "$tool" --print-limit 20 \
    --error-exitcode 3 "$bin/tk-conformance" "${args[@]}" >"$log" 2>&1
  record "compute-sanitizer --tool $tool" $?
  { echo "== compute-sanitizer --tool $tool ($(date -u +%F), kernels: ${kernels:-all})";
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|cells|floor" "$log"; } >>"$out/sanitizers.txt"
}
if [ -z "${SKIP_SANITIZERS:-}" ]; then
  step "compute-sanitizer"
  : >"$out/sanitizers.txt"
  sanitize memcheck "${MEMCHECK_KERNELS:-}"
  sanitize racecheck "${RACECHECK_KERNELS:-}"
  cat "$out/sanitizers.txt" >>"$summary"
fi

echo "failures: $failures" | tee -a "$summary"
[ "$failures" -eq 0 ]
