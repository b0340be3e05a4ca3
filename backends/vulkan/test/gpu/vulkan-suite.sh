#!/usr/bin/env bash
# The Vulkan backend on a GPU through its vendor's own Vulkan driver (CI runs
# the column on lavapipe only): tk-info, the vulkan column with --expect pass,
# the backend's tests, the examples and a Triton kernel from its TTIR, and
# that TK_BACKEND unset still picks cuda where its plugin is. Results go to
# OUTDIR (default $OUT): summary.txt, conformance.{json,md} and each step's
# log (eight files, what the GPU machine's run tool brings back). Exits non-zero when any step fails.
#
# On NVIDIA's driver (DESIGN.md §6): the loader and the GLVND libraries the
# ICD loads come as Debian debs in the DEBS_DIRs (libvulkan1 libglvnd0
# libglx0 libgl1 libegl1 libopengl0 libgles2), unpacked to /;
# VK_DRIVER_FILES names NVIDIA's ICD. Where a DEBS_DIR also holds
# vulkan-validationlayers and spirv-tools, the column runs with Khronos'
# validation layer and spirv-val on (TK_VULKAN_VALIDATION=1) and fails on
# any validation message.
#
#   bash .device/run.sh bash backends/vulkan/test/gpu/vulkan-suite.sh OUTDIR DEBS_DIR...
set -uo pipefail
out=${1:-${OUT:?give an output folder}}
shift || true
dirs=("${@:-.gl}")
bin=./build/bin
debs() { for dir in "${dirs[@]}"; do for name; do ls "$dir"/${name}_*.deb 2>/dev/null; done; done; }
source "$(dirname "$0")/../../../cuda/test/gpu/steps.sh"

step "set-up: the Vulkan loader and GLVND from ${dirs[*]}"
for deb in $(debs libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libopengl0 libgles2); do
  dpkg -x "$deb" /
done
ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
validation=0
if [ "$(debs vulkan-validationlayers spirv-tools | wc -l)" -eq 2 ]; then
  tools=$(mktemp -d)
  for deb in $(debs vulkan-validationlayers spirv-tools); do
    dpkg -x "$deb" "$tools"
  done
  export VK_ADD_LAYER_PATH=$tools/usr/share/vulkan/explicit_layer.d
  export LD_LIBRARY_PATH=$tools/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  export TK_SPIRV_VAL=$tools/usr/bin/spirv-val TK_VULKAN_VALIDATION=1
  validation=1
fi
echo "validation layer and spirv-val: $([ $validation = 1 ] && echo on || echo "off (not carried)")" | tee -a "$summary"

export TK_CACHE_DIR TK_BACKEND=vulkan
TK_CACHE_DIR=$(mktemp -d)
export TK_TTIR_CORPUS=$PWD/tests/ttir/corpus

step "device"
{ nvidia-smi -L; "$bin/tk-info"; } >>"$summary" 2>&1
record tk-info $?
grep -qE "device 0: NVIDIA" "$summary"
record "the vulkan device is the NVIDIA GPU, not a CPU implementation" $?

step "conformance (vulkan column)"
column=$(mktemp -d)
timeout ${CONFORMANCE_TIMEOUT:-420} "$bin/tk-conformance" --backend vulkan \
  --expect pass --out "$column" >"$out/conformance.log" 2>"$out/conformance-stderr.log"
record tk-conformance $?
cp "$column/conformance.json" "$column/conformance.md" "$out/"
grep -E "cells|floor" "$out/conformance.log" >>"$summary"
grep -B1 -A1 " FAIL$" "$out/conformance.log" | head -40 >>"$summary"
# Debian 12's layer (1.3.239) predates VK_KHR_cooperative_matrix (1.3.255)
# and VK_KHR_shader_bfloat16 (1.4.311): it reports the extensions, their
# feature structures and their SPIR-V capabilities as unknown and checks no
# module that uses them. Those messages are listed apart; any other counts.
predates='1000506000|1000141000|VK_KHR_cooperative_matrix is not supported by this layer|VK_KHR_shader_bfloat16 is not supported by this layer|Invalid capability operand: (6022|5116|5117|5118)|SPV_KHR_cooperative_matrix|SPV_KHR_bfloat16|Unhandled OpCapability'
messages=$(grep "tk-vulkan: validation:" "$out/conformance-stderr.log" | grep -cvE "$predates")
stale=$(grep "tk-vulkan: validation:" "$out/conformance-stderr.log" | grep -cE "$predates")
echo "validation messages: $messages (and $stale from a layer that predates VK_KHR_cooperative_matrix and VK_KHR_shader_bfloat16: the modules using them went unchecked)" >>"$summary"
[ "$messages" -eq 0 ]
record "no validation message" $?

step "Vulkan backend tests"
timeout 300 "$bin/tk-vulkan-backend-test" >"$out/backend-test.log" 2>&1
record tk-vulkan-backend-test $?
tail -3 "$out/backend-test.log" >>"$summary"

step "tk_stream_wrap with a VkQueue of tk's device"
timeout 120 "$bin/tk-vulkan-queue-wrap-test" >"$out/queue-wrap-test.log" 2>&1
record tk-vulkan-queue-wrap-test $?
tail -1 "$out/queue-wrap-test.log" >>"$summary"

step "examples on vulkan"
timeout 120 "$bin/tk-examples" softmax matmul >>"$summary" 2>&1
record tk-examples $?

step "a Triton kernel from its TTIR (examples/c/triton_kernel.c) on vulkan"
timeout 60 "$bin/triton_kernel" tests/ttir/corpus/vector_add/kernel.ttir >>"$summary" 2>&1
record triton_kernel $?

if [ -f build/lib/libtk_backend_cuda.so ]; then
  step "TK_BACKEND unset picks cuda"
  env -u TK_BACKEND "$bin/tk-info" >"$out/default-backend.log" 2>&1
  grep "^selected backend" "$out/default-backend.log" >>"$summary"
  grep -q "^selected backend: cuda" "$out/default-backend.log"
  record "the default backend is cuda" $?
fi

echo "failures: $failures" | tee -a "$summary"
[ "$failures" -eq 0 ]
