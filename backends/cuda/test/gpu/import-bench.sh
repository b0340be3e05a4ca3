#!/usr/bin/env bash
# On the GPU machine, with the compiler carried by the device kit: Triton's
# kernels imported from their TTIR against Triton
# (backends/cuda/test/bench/triton_import_bench.py, Triton's TTIR and PTX
# kept in OUTDIR/ttir), then tk_launch_async against cuLaunchKernel
# (tk-bench-cuda). Writes OUTDIR/triton-import.json and .log, launch.json;
# exits non-zero when a step fails. The compiler kit and the tracked files
# pass the run tool's 64 MiB only with docs/ moved aside for the call:
#
#   ../shared/device/kit.sh pack build/lib/libtk.so build/lib/libtk_backend_cuda.so \
#     build/bin/tk-bench-cuda build/bin/tk-compile
#   # there, carrying .device (TK_COMMIT names the build the kit holds):
#   TK_COMMIT=<commit> bash .device/run.sh bash backends/cuda/test/gpu/import-bench.sh "$OUT"
#
# It measured the import figures of docs/bench/2026-12-06-2da6d23-h100 on an
# H100 (the kit of 8bd0ca0, 24 s for the Triton part).
set -uo pipefail
res=${1:-${OUT:?give an output folder}}
mkdir -p "$res"
failures=0
export TK_CACHE_DIR PYTHONUNBUFFERED=1 TK_BACKEND=cuda
TK_CACHE_DIR=$(mktemp -d)
# After run.sh's LLVM/MLIR libraries, not instead of them.
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
export TK_LIBRARY=$PWD/build/lib/libtk.so
nvidia-smi -L
t=$SECONDS
timeout "${IMPORT_TIMEOUT:-420}" python3 backends/cuda/test/bench/triton_import_bench.py \
  --out "$res" --commit "${TK_COMMIT:-}" --rounds "${ROUNDS:-3}" --reps 20 \
  --save-ttir "$res/ttir" ${ONLY:+--only "$ONLY"} >"$res/triton-import.log" 2>&1
status=$?
echo "triton import: status $status ($((SECONDS - t)) s)"
[ "$status" -eq 0 ] || failures=$((failures + 1))
tail -40 "$res/triton-import.log"
cubin=$(mktemp --suffix=.cubin)
./build/bin/tk-compile examples/kernels/vector_add.tk --backend cuda --entry vector_add \
  --arch sm_90a --num-warps 4 --emit binary -o "$cubin" &&
  ./build/bin/tk-bench-cuda --cubin "$cubin" >"$res/launch.json"
status=$?
echo "launch: status $status"
[ "$status" -eq 0 ] || failures=$((failures + 1))
head -30 "$res/launch.json"
echo "failures: $failures"
[ "$failures" -eq 0 ]
