#!/usr/bin/env bash
# The CUDA backend's checks on a machine with an NVIDIA GPU (CI has none):
# the cuda column of the conformance matrix, compute-sanitizer memcheck and
# racecheck over the suite, and the SASS of the fp16 matmul for sm_80 and
# sm_90a. Results go to OUTDIR (default $OUT).
#
#   ../shared/device/kit.sh pack build/bin build/lib     # on the dev machine
#   bash .device/run.sh bash tests/gpu/cuda-suite.sh OUTDIR
set -uo pipefail
out=${1:-${OUT:?give an output folder}}
bin=./build/bin
mkdir -p "$out"
export TK_CACHE_DIR
TK_CACHE_DIR=$(mktemp -d)
summary=$out/summary.txt
: >"$summary"
step() { echo "== $*" | tee -a "$summary"; }

step "device"
{ nvidia-smi -L; "$bin/tk-info"; } >>"$summary" 2>&1

step "conformance (cuda column)"
timeout ${CONFORMANCE_TIMEOUT:-150} "$bin/tk-conformance" --backend cuda --out "$out" \
  >"$out/conformance.log" 2>&1
echo "tk-conformance exit $?" >>"$summary"
tail -45 "$out/conformance.log" >>"$summary"

step "examples on cuda"
TK_BACKEND=cuda timeout 60 "$bin/tk-examples" softmax matmul >>"$summary" 2>&1
echo "tk-examples exit $?" >>"$summary"

step "SASS of the fp16 matmul"
for arch in sm_80 sm_90a; do
  cubin=$(mktemp --suffix=.cubin)
  "$bin/tk-cuda-compile" examples/kernels/matmul.tk --entry matmul \
    --arch "$arch" --num-warps 4 --emit cubin -o "$cubin" >>"$summary" 2>&1
  sass=$(cuobjdump -sass "$cubin")
  echo "$arch: $(grep -c HMMA <<<"$sass") HMMA, $(grep -c HGMMA <<<"$sass") HGMMA" >>"$summary"
  grep -m2 -E "HMMA|HGMMA" <<<"$sass" >>"$summary"
done

sanitize() { # tool, kernels (empty: all)
  local tool=$1 kernels=$2 log=$out/$1.log
  local args=(--backend cuda --out "$(mktemp -d)")
  [ -n "$kernels" ] && args+=(--kernel "$kernels")
  timeout ${SANITIZER_TIMEOUT:-240} compute-sanitizer --tool "$tool" --print-limit 20 \
    --error-exitcode 3 "$bin/tk-conformance" "${args[@]}" >"$log" 2>&1
  echo "compute-sanitizer --tool $tool exit $?" >>"$summary"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|cells," "$log" >>"$summary"
}
[ -n "${SKIP_SANITIZERS:-}" ] && exit 0
step "compute-sanitizer"
sanitize memcheck "${MEMCHECK_KERNELS:-}"
sanitize racecheck "${RACECHECK_KERNELS:-}"
