#!/usr/bin/env bash
# Softmax over 16384 fp32 columns against its ceiling, on a machine with an
# NVIDIA GPU and the CUDA toolkit: tk's kernel (16 and 32 warps, and the
# 32-warp kernel with its loads' cache operator edited in the PTX: .nc, .cg,
# .cs), hand-written CUDA softmaxes and a device-to-device copy of the same
# bytes, all in one process (softmax_ceiling.cu, beside this script). Writes
# softmax_ceiling.json to OUTDIR (default $OUT).
#
#   bash .device/run.sh bash backends/cuda/test/gpu/softmax-ceiling.sh OUTDIR
set -euo pipefail
out=${1:-${OUT:?give an output folder}}
mkdir -p "$out"
work=$(mktemp -d)
arch=sm_90a
# The softmax seed at BLOCK 16384 with its row strides declared multiples
# of 16 elements, as the bench builds it (its loads are 16 bytes wide).
./build/bin/tk-seed-kernels softmax |
  sed 's/1024/16384/g; s/%arg2: i32, %arg3: i32/%arg2: i32 {tk.divisibility = 16 : i32}, %arg3: i32 {tk.divisibility = 16 : i32}/' \
    >"$work/softmax.tk"
grep -q 'tensor<16384xf32>' "$work/softmax.tk" &&
  grep -q '%arg3: i32 {tk.divisibility = 16' "$work/softmax.tk" || {
  echo "softmax-ceiling: the softmax seed's text changed; update the edit above" >&2
  exit 1
}
variants=()
for warps in 16 32; do
  ./build/bin/tk-compile "$work/softmax.tk" --backend cuda --entry softmax \
    --arch $arch --num-warps $warps --emit asm -o "$work/w$warps.ptx"
  ptxas -arch=$arch "$work/w$warps.ptx" -o "$work/w$warps.cubin"
  variants+=("tk w$warps=$work/w$warps.cubin:$((warps * 32))")
done
for op in nc cg cs; do
  sed "s/ld\.global\./ld.global.$op./" "$work/w32.ptx" >"$work/w32_$op.ptx"
  ptxas -arch=$arch "$work/w32_$op.ptx" -o "$work/w32_$op.cubin"
  variants+=("tk w32 ld.global.$op=$work/w32_$op.cubin:1024")
done
nvcc -O3 -arch=$arch backends/cuda/test/gpu/softmax_ceiling.cu \
  -L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda -o "$work/softmax_ceiling"
"$work/softmax_ceiling" "${variants[@]}" | tee "$out/softmax_ceiling.json"
