#!/usr/bin/env bash
# Makes the GPU machine's kit for package-run.sh, here, in .dvR/ (which
# .git/info/exclude ignores): the runtime without a compiler
# (libtk_runtime.so, the driver plugins, tk-conformance-run; under 1 MB as
# rt.txz), the conformance cells as one package for cuda:sm_90a and
# vulkan:32-coopmat (VULKAN_TARGET to change), the benchmark's kernels as a package for cuda:sm_90a with its
# manifest, and the Debian packages the runtime and NVIDIA's Vulkan ICD need
# there (libvulkan1, GLVND, spdlog, fmt). About 6 MB: no LLVM, so one call
# runs both columns, the sanitizers and cuda_bench.py (issue 48, item 5).
#
#   SAN_KERNELS=matmul,attention_fwd,... \
#     bash backends/cuda/test/gpu/package-kit.sh          # after a build
#   # there, carrying .dvR:
#   bash backends/cuda/test/gpu/package-run.sh OUTDIR
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
kit=$root/.dvR
bin=$root/build/bin
grep -qx '/.dvR/' .git/info/exclude 2>/dev/null || echo '/.dvR/' >> .git/info/exclude
mkdir -p "$kit/gpu"
# shellcheck source=backends/common/gpu/kit.sh
source backends/common/gpu/kit.sh
echo "kit: Debian packages"
gpu_kit_debs "$kit/debs"
echo "kit: the runtime"
gpu_kit_runtime build "$kit"
echo "kit: the conformance cells (a few minutes)"
# NVIDIA's Vulkan driver lists cooperative matrices (f16 into f32 at
# 16x16x16, 16x8x16, 16x8x8): vulkan:32-coopmat is its own target.
"$bin/tk-conformance" --write-package "$kit/gpu/cells.tkpkg" \
  --target "cuda:sm_90a,${VULKAN_TARGET:-vulkan:32-coopmat}" | tail -1
xz -T2 -f "$kit/gpu/cells.tkpkg"
echo "kit: the benchmark's kernels"
"$bin/tk-bench-kernels" --package "$kit/gpu/bench.tkpkg" --target cuda:sm_90a >/dev/null
xz -f "$kit/gpu/bench.tkpkg"
rm -rf "$kit/gpu/manifest"
"$bin/tk-bench-kernels" --emit "$kit/gpu/manifest" >/dev/null
# The kernels package-run.sh runs under compute-sanitizer (all cells
# without a list).
# An earlier kit's list is removed, not kept.
rm -f "$kit/sankernels"
[ -z "${SAN_KERNELS:-}" ] || echo "$SAN_KERNELS" > "$kit/sankernels"
git rev-parse --short HEAD > "$kit/COMMIT"
du -sh "$kit"
