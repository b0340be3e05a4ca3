#!/usr/bin/env bash
# On the GPU machine, from packages and without a compiler (the kit of
# package-kit.sh, carried as .dvR): the cuda column and the vulkan column
# (NVIDIA's ICD; not with SKIP_VULKAN set) with --expect pass, compute-sanitizer memcheck,
# racecheck and synccheck (barriers: divergent or mismatched ones) over SAN_KERNELS (default: the kit's sankernels list, else every cell), and
# cuda_bench.py unless SKIP_BENCH is set (with BENCH_ARGS, default
# "--quick --rounds 3"; e.g. "--only attention" times every candidate). Writes seven files to OUTDIR (the
# run tool brings back eight at most): steps.txt, device.txt,
# sanitizers.txt, cuda-conformance.json, vulkan-conformance.json,
# bench.json and logs.txt (the tail of each step's log); exits non-zero when
# a step fails.
#
#   bash backends/cuda/test/gpu/package-run.sh "$OUT"
set -uo pipefail
res=${1:-${OUT:?give an output folder}}
root=$PWD
work=$(mktemp -d)
mkdir -p "$res"
failures=0
# shellcheck source=backends/common/gpu/kit.sh
source backends/common/gpu/kit.sh
STEPS_FILE=$res/steps.txt
record() { gpu_kit_record "$@"; }
gpu_kit_unpack .dvR "$work"
for f in .dvR/gpu/*.xz; do xz -dc "$f" > "$work/$(basename "${f%.xz}")"; done
export TK_TTIR_CORPUS=$root/tests/ttir/corpus TK_CACHE_DIR=$work/cache
run=$work/rt/build/bin/tk-conformance-run
pkg=$work/cells.tkpkg
kernels=${SAN_KERNELS:-$(cat .dvR/sankernels 2>/dev/null || true)}
{ nvidia-smi -L
  nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem --format=csv
  echo "kit: $(cat .dvR/COMMIT 2>/dev/null)"; } >"$res/device.txt" 2>&1
cat "$res/device.txt"
t=$SECONDS
TK_BACKEND=cuda timeout 240 "$run" --package "$pkg" --backend cuda --expect pass \
  --out "$work/cuda" >"$work/cuda.log" 2>&1
record "cuda column ($((SECONDS - t)) s)" $?
cp "$work/cuda/conformance.json" "$res/cuda-conformance.json"
if [ -z "${SKIP_VULKAN:-}" ]; then
  t=$SECONDS
  VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json TK_BACKEND=vulkan \
    timeout 240 "$run" --package "$pkg" --backend vulkan --expect pass \
    --out "$work/vulkan" >"$work/vulkan.log" 2>&1
  record "vulkan column ($((SECONDS - t)) s)" $?
  cp "$work/vulkan/conformance.json" "$res/vulkan-conformance.json"
fi
for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
  t=$SECONDS
  TK_BACKEND=cuda timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool \
    --print-limit 20 --error-exitcode 3 "$run" --package "$pkg" --backend cuda \
    --expect pass ${kernels:+--kernel "$kernels"} --out "$work/$tool" \
    >"$work/$tool.log" 2>&1
  record "compute-sanitizer $tool ($((SECONDS - t)) s)" $?
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|cells" "$work/$tool.log" |
    tee -a "$res/sanitizers.txt"
done
if [ -z "${SKIP_BENCH:-}" ]; then
  t=$SECONDS
  TK_BACKEND=cuda TK_LIBRARY=$work/rt/build/lib/libtk_runtime.so PYTHONUNBUFFERED=1 \
    timeout "${BENCH_TIMEOUT:-200}" python3 backends/cuda/test/bench/cuda_bench.py \
    --out "$res" --commit "$(cat .dvR/COMMIT 2>/dev/null)" --package "$work/bench.tkpkg" \
    --manifest .dvR/gpu/manifest ${BENCH_ARGS:---quick --rounds 3} >"$work/bench.log" 2>&1
  record "cuda_bench.py ($((SECONDS - t)) s)" $?
fi
for log in cuda vulkan memcheck racecheck synccheck bench; do
  [ -f "$work/$log.log" ] || continue
  echo "== $log"
  tail -c 40000 "$work/$log.log"
done >"$res/logs.txt"
echo "failures: $failures" | tee -a "$res/steps.txt"
[ "$failures" -eq 0 ]
