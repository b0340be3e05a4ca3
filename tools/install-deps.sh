#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages tk builds and tests with (see
# DESIGN.md §7) — only those missing, so a second run costs a second.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ git pkg-config
  dpkg-dev                                                # cpack -G DEB (dpkg-shlibdeps)
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools  # IR, passes, lit, FileCheck
  libspdlog-dev                                           # logging
  libgtest-dev libgmock-dev libbenchmark-dev              # tests and benchmarks
  libvulkan-dev mesa-vulkan-drivers spirv-tools           # the Vulkan backend,
  vulkan-validationlayers                                 # run on Mesa's lavapipe
  lld-22                                                  # ld.lld: cpu and ROCm binaries
  rocm-device-libs libamdhip64-5                          # the ROCm backend: ocml/ockl,
                                                          # HIP runtime
  libze-dev libze1 intel-opencl-icd libigc-tools          # the Xe backend: Level Zero,
                                                          # ocloc (IGC), iga64
  clang-22 libclang-rt-22-dev                             # make fuzz: libFuzzer,
                                                          # ASan, UBSan; the cpu
                                                          # backend: builtins
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "tk: all build dependencies present"
  exit 0
fi

echo "tk: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "tk: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# LLVM/MLIR 22 come from bookworm-security on Debian 12; refresh the index once
# if a package is unknown.
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
