#!/usr/bin/env bash
# The GPU benchmark on the GPU machine: tk, Triton, cuBLAS and SDPA timed in
# one process (backends/cuda/test/bench/cuda_bench.py), and
# tk_launch_async's host cost against a raw cuLaunchKernel (tk-bench-cuda,
# from backends/cuda/test/bench/bench_cuda.cpp). Writes OUTDIR/bench.json
# (the run: date, commit, GPU clocks, every figure with its ratios and
# spreads, the launch figure) and exits non-zero when any output was wrong.
# tests/bench/report.py turns a run into the README's table.
#
#   bash .device/run.sh bash backends/cuda/test/gpu/cuda-bench.sh OUTDIR \
#     [cuda_bench.py options]
set -euo pipefail
out=${1:-${OUT:?give an output folder}}
shift || true
mkdir -p "$out"
export TK_BACKEND=cuda TK_CACHE_DIR PYTHONUNBUFFERED=1
TK_CACHE_DIR=$(mktemp -d)
cubin=$(mktemp --suffix=.cubin)
# The launch-overhead reference launches the same vector add tk launches.
./build/bin/tk-compile examples/kernels/vector_add.tk --backend cuda \
  --entry vector_add --arch sm_90a --num-warps 4 --emit binary -o "$cubin"
./build/bin/tk-bench-cuda --cubin "$cubin" >"$out/launch.json"
commit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' \
  "$out/launch.json")
python3 backends/cuda/test/bench/cuda_bench.py --out "$out" --commit "$commit" \
  --launch "$out/launch.json" "$@"
