#!/usr/bin/env bash
# On the GPU machine, from the kit of bench-kit.sh (carried as .dvV) and
# without a compiler: tests/bench/backend_bench.py times the kit's packages
# on cuda and on Vulkan (NVIDIA's ICD), one call each; with the kit's cells,
# the vulkan column first (--expect pass); then the driver's statistics of
# each kernel (statistics.txt). Writes to $OUT: device.txt, steps.txt, and
# results.tar (each package's backend-bench.json and log, statistics.txt;
# the run tool brings back eight files at most). Exits non-zero when a step
# fails.
#
#   OUT=... bash backends/vulkan/test/gpu/bench-run.sh
#   KERNELS=vector_add,softmax ROUNDS=5 ... (the seed package's kernels)
set -uo pipefail
OUT=${OUT:?give an output folder}
root=$PWD
work=$(mktemp -d)
results=$work/results
mkdir -p "$OUT" "$results"
failures=0
# shellcheck source=backends/common/gpu/kit.sh
source backends/common/gpu/kit.sh
STEPS_FILE=$OUT/steps.txt
record() { gpu_kit_record "$@"; }
gpu_kit_unpack .dvV "$work"
for f in .dvV/gpu/*.xz; do xz -dc "$f" > "$work/$(basename "${f%.xz}")"; done
export TK_CACHE_DIR=$work/cache TK_TTIR_CORPUS=$root/tests/ttir/corpus
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export TK_LIBRARY=$work/rt/build/lib/libtk_runtime.so PYTHONUNBUFFERED=1
{ nvidia-smi -L
  nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.mem --format=csv
  echo "kit: $(cat .dvV/COMMIT 2>/dev/null)"; } >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
commit=$(cat .dvV/COMMIT 2>/dev/null || true)
rounds=${ROUNDS:-3}

if [ -f "$work/cells.tkpkg" ]; then
  t=$SECONDS
  TK_BACKEND=vulkan timeout "${COLUMN_TIMEOUT:-300}" "$work/rt/build/bin/tk-conformance-run" \
    --package "$work/cells.tkpkg" --backend vulkan --expect pass --out "$results/vulkan-column" \
    >"$results/vulkan-column.log" 2>&1
  record "vulkan column ($((SECONDS - t)) s)" $?
  grep -E "cells|floor|FAIL" "$results/vulkan-column.log" | head -20
fi

bench() { # name, package, kernels[, backends]
  mkdir -p "$results/$1"
  local t=$SECONDS
  timeout "${BENCH_TIMEOUT:-240}" python3 tests/bench/backend_bench.py --package "$2" \
    --backends "${4:-cuda,vulkan}" --kernels "$3" --rounds "$rounds" --commit "$commit" \
    --out "$results/$1" >"$results/$1/bench.log" 2>&1
  record "$1 ($((SECONDS - t)) s)" $?
  tail -n 3 "$results/$1/bench.log"
}
bench seeds "$work/bench.tkpkg" \
  "${KERNELS:-vector_add,softmax,layernorm,matrix_transpose,matmul,matmul_128,persistent_softmax}"
[ -n "${SKIP_ATTENTION:-}" ] || bench attention "$work/attention.tkpkg" attention
for pkg in "$work"/tuned-*.tkpkg; do
  [ -f "$pkg" ] || continue
  name=$(basename "$pkg" .tkpkg)
  bench "$name" "$pkg" "${name#tuned-}"
done
# The same configurations on mma.sync (cuda:sm_80, bench-kit.sh's CUDA_SM80).
for pkg in "$work"/sm80-*.tkpkg; do
  [ -f "$pkg" ] || continue
  name=$(basename "$pkg" .tkpkg)
  bench "$name" "$pkg" "${name#sm80-}" cuda
done
# What NVIDIA's compiler made of each kernel (registers a thread, spills
# as local memory, binary size): VK_KHR_pipeline_executable_properties,
# printed at load by TK_VULKAN_STATISTICS=1.
TK_BACKEND=vulkan TK_VULKAN_STATISTICS=1 TK_CACHE_DIR=$work/statistics-cache \
  python3 - "$work" >"$results/statistics.txt" 2>&1 <<'PY'
import glob
import os
import sys
sys.path.insert(0, os.path.join(os.getcwd(), "capi", "python"))
import tk
device = tk.Device(0)
seeds = ["vector_add", "softmax", "layernorm", "matrix_transpose", "matmul",
         "matmul_128", "persistent_softmax"]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.tkpkg"))):
    name = os.path.basename(path)[:-len(".tkpkg")]
    if name.startswith("sm80-"):  # cuda alone
        continue
    entries = {"bench": seeds, "attention": ["attention_fwd"],
               "cells": []}.get(name, [name[len("tuned-"):]])
    with open(path, "rb") as f:
        data = f.read()
    for entry in entries:
        device.kernel(data, entry=entry, package=True)
PY
record "statistics" $?
cat "$results/statistics.txt"
tar -C "$results" -cf "$OUT/results.tar" .
echo "failures: $failures" | tee -a "$OUT/steps.txt"
[ "$failures" -eq 0 ]
