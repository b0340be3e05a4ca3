#!/usr/bin/env bash
# Makes the GPU machine's kit for bench-run.sh, here, in .dvV/ (which
# .git/info/exclude ignores), after a build: the runtime without a compiler
# (libtk_runtime.so and the driver plugins), the Debian packages it and
# NVIDIA's Vulkan ICD need there, and packages for cuda:sm_90a and
# vulkan:32-coopmat (VULKAN_TARGET to change) that
# tests/bench/backend_bench.py times on both backends:
#   - bench.tkpkg: the seed kernels (vector_add, softmax, layernorm,
#     matrix_transpose, matmul, matmul_128, persistent_softmax) and tk-bench-kernels' attention
#     (64x64 w4 s3, entry attention_fwd);
#   - tuned-<entry>.tkpkg, one a configuration: tk-bench-kernels' f16 4096³
#     matmul configurations and VULKAN_MATMULS (below), renamed
#     matmul_<BM>x<BN>x<BK>_w<W>_s<S>[_peel][_div16], with the constants
#     `tk-bench-kernels --matmul` lists (unit strides, as cuda_bench.py
#     compiles them); TUNED=0 makes none.
# With CUDA_SM80=1 each matmul configuration is also built for cuda:sm_80
# alone, as sm80-<entry>.tkpkg: mma.sync, the instruction class NVIDIA's
# driver gives KHR cooperative matrices, with the cuda backend's cp.async
# rings, so the figures say what that class reaches on the same GPU.
# With CELLS=1 also the conformance cells for the Vulkan target (a few
# minutes), which bench-run.sh runs as the vulkan column.
#
#   bash backends/vulkan/test/gpu/bench-kit.sh
#   # there, carrying .dvV:
#   OUT=... bash backends/vulkan/test/gpu/bench-run.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
kit=$root/.dvV
bin=$root/build/bin
vulkan=${VULKAN_TARGET:-vulkan:32-coopmat}
grep -qx '/.dvV/' .git/info/exclude 2>/dev/null || echo '/.dvV/' >> .git/info/exclude
rm -rf "$kit/gpu"
mkdir -p "$kit/gpu"
# shellcheck source=backends/common/gpu/kit.sh
source backends/common/gpu/kit.sh
echo "kit: Debian packages"
gpu_kit_debs "$kit/debs"
echo "kit: the runtime"
gpu_kit_runtime build "$kit"

sources=$(mktemp -d)
trap 'rm -rf "$sources"' EXIT
"$bin/tk-bench-kernels" --emit "$sources/emit" >/dev/null
echo "kit: the seed kernels and attention"
sed 's/64/128/g; s/@matmul(/@matmul_128(/' examples/kernels/matmul.tk > "$sources/matmul_128.tk"
attention=$(python3 -c "
import json, sys
m = json.load(open('$sources/emit/manifest.json'))
c = [c for f in m['figures'] if f['kind'] == 'attention' for c in f['candidates']][0]
print(c['file'], c['num_warps'], c['num_stages'])")
read -r file warps stages <<<"$attention"
"$bin/tk-compile" --package "$sources/attention.tkpkg" --target cuda:sm_90a --target "$vulkan" \
  --num-warps "$warps" --num-stages "$stages" "$sources/emit/$file:attention_fwd" >/dev/null
"$bin/tk-compile" --package "$sources/seeds.tkpkg" --target cuda:sm_90a --target "$vulkan" \
  examples/kernels/vector_add.tk examples/kernels/softmax.tk examples/kernels/layernorm.tk \
  examples/kernels/matrix_transpose.tk examples/kernels/matmul.tk "$sources/matmul_128.tk" \
  examples/kernels/persistent_softmax.tk >/dev/null
cp "$sources/seeds.tkpkg" "$kit/gpu/bench.tkpkg"
cp "$sources/attention.tkpkg" "$kit/gpu/attention.tkpkg"

echo "kit: the matmul configurations"
# tuned: tk-bench-kernels' figure, sized for the H100's 228 KB (the cuda
# backend's best); VULKAN_MATMULS: configurations that fit 48 KB with one
# stage (Vulkan has no asynchronous copy to fill more), each as it is, with
# the K loop peeled, and with M, N and K declared multiples of 16 (as
# Triton's launcher declares 4096: a mask a 16-byte run, not one an
# element).
tuned() {
  python3 -c "
import json
m = json.load(open('$sources/emit/manifest.json'))
f = [f for f in m['figures'] if f['name'] == 'matmul f16 4096x4096x4096'][0]
for c in f['candidates']:
    print(c['label'])
"
  for label in ${VULKAN_MATMULS:-128x128x32_w8_s1 128x256x32_w8_s1 256x128x32_w8_s1 \
    128x128x64_w8_s1 64x128x32_w4_s1 128x256x32_w16_s1 256x128x32_w16_s1}; do
    for variant in "" " peel" " div16"; do
      echo "${label//_/ }$variant"
    done
  done
}
[ "${TUNED:-1}" = 0 ] || tuned | while read -r label; do
  entry=matmul_${label// /_}
  # shellcheck disable=SC2086 # the flags split on purpose
  if flags=$("$bin/tk-bench-kernels" --matmul f16 "$label" "$sources/$entry.tk") &&
    sed -i "s/@matmul(/@$entry(/" "$sources/$entry.tk" &&
    "$bin/tk-compile" --package "$kit/gpu/tuned-$entry.tkpkg" --target cuda:sm_90a \
      --target "$vulkan" $flags "$sources/$entry.tk" >/dev/null &&
    { [ -z "${CUDA_SM80:-}" ] ||
      "$bin/tk-compile" --package "$kit/gpu/sm80-$entry.tkpkg" --target cuda:sm_80 \
        $flags "$sources/$entry.tk" >/dev/null; }; then
    echo "  $entry"
  else
    echo "  $entry: not compiled"
  fi
done
# bf16: BF16_MATMULS (the best f16 configuration of each backend at
# acb1075), as tuned-matmul_<label>_bf16: bf16 cooperative matrices on
# Vulkan, bf16 wgmma on cuda.
[ "${TUNED:-1}" = 0 ] ||
  for label in ${BF16_MATMULS:-256x128x32_w8_s1_div16 128x256x64_w8_s3_div16}; do
    entry=matmul_${label}_bf16
    # shellcheck disable=SC2086 # the flags split on purpose
    if flags=$("$bin/tk-bench-kernels" --matmul bf16 "${label//_/ }" "$sources/$entry.tk") &&
      sed -i "s/@matmul(/@$entry(/" "$sources/$entry.tk" &&
      "$bin/tk-compile" --package "$kit/gpu/tuned-$entry.tkpkg" --target cuda:sm_90a \
        --target "$vulkan" $flags "$sources/$entry.tk" >/dev/null; then
      echo "  $entry"
    else
      echo "  $entry: not compiled"
    fi
  done
if [ -n "${CELLS:-}" ]; then
  echo "kit: the conformance cells for $vulkan (a few minutes)"
  "$bin/tk-conformance" --write-package "$kit/gpu/cells.tkpkg" --target "$vulkan" | tail -1
fi
for f in "$kit"/gpu/*.tkpkg; do xz -T2 -f "$f"; done
git rev-parse --short HEAD > "$kit/COMMIT"
du -sh "$kit"
