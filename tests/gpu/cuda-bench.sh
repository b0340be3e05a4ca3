#!/usr/bin/env bash
# tk's CUDA benchmarks and the peers' reference figures in one command on the
# GPU machine, then the ratios. Results go to OUTDIR (default $OUT):
# tk_cuda.json, triton_reference.json, cublas_reference.json, ratios.json,
# autotune_matmul.svg and autotune_softmax_<cols>.svg (the tuning charts).
#
#   bash .device/run.sh bash tests/gpu/cuda-bench.sh OUTDIR
set -euo pipefail
out=${1:-${OUT:?give an output folder}}
shift || true
mkdir -p "$out"
export TK_BACKEND=cuda TK_CACHE_DIR
TK_CACHE_DIR=$(mktemp -d)
cubin=$(mktemp --suffix=.cubin)
# The launch-overhead reference launches the same vector add tk launches.
./build/bin/tk-cuda-compile examples/kernels/vector_add.tk --entry vector_add \
  --arch sm_90a --num-warps 4 --emit cubin -o "$cubin"
timeout ${BENCH_TIMEOUT:-300} ./build/bin/tk-bench-cuda --cubin "$cubin" \
  --plot "$out/autotune_matmul.svg" "$@" >"$out/tk_cuda.json"
cat "$out/tk_cuda.json"
OUT=$out python3 .device/triton_reference.py >"$out/triton_reference.log" 2>&1
OUT=$out python3 tests/bench/cublas_reference.py >"$out/cublas_reference.log" 2>&1
python3 tests/bench/cuda_ratios.py "$out/tk_cuda.json" \
  "$out/triton_reference.json" "$out/cublas_reference.json" >"$out/ratios.json"
cat "$out/ratios.json"
