//===- TargetInfo.cpp - Vulkan devices as TargetInfo presets --------------===//
//
// Vulkan's one matrix unit is VK_KHR_cooperative_matrix, which places a
// matrix's elements among the lanes as the implementation likes: its
// intrinsics are opaque (MatrixIntrinsic::opaque), listed by the
// `vulkan-cooperative-matrix` preset for every shape a device may list, and
// a device keeps those it has (`intrinsics=`). Without the extension dots
// are subgroup FMA code. What differs between devices (subgroup size,
// workgroup memory, shapes) is read from the device at compile time and
// given as overrides.
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"
#include "compiler/DeviceTarget.h"

#include "tk/core/TargetInfo.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace {

tk::TargetInfo genericVulkan() {
  tk::TargetInfo info;
  info.name = "vulkan";
  info.warpSize = 32;
  info.maxThreadsPerBlock = 1024;
  info.sharedMemoryPerBlock = 48 * 1024;
  info.sharedMemoryBanks = 32;
  info.maxVectorLoadBytes = 16;
  // Workgroup variables are arrays of their element under SPIR-V's logical
  // addressing, which casts no pointer to a vector: element by element.
  info.workgroupVectorBytes = 0;
  return info;
}

/// Mesa's lavapipe as Debian 12 ships it (Mesa 22.3.6) on an AVX2 host.
tk::TargetInfo lavapipe() {
  tk::TargetInfo info = genericVulkan();
  info.name = "vulkan-lavapipe";
  info.warpSize = 8;
  info.sharedMemoryPerBlock = 32 * 1024;
  return info;
}

/// A device with VK_KHR_cooperative_matrix: every f16 x f16 -> f32,
/// bf16 x bf16 -> f32 and s8 x s8 -> s32 shape of 8, 16 or 32 rows and columns
/// and a k of 8, 16 or 32 (NVIDIA lists 16x16x16, 16x8x16 and 16x8x8 for f16,
/// 16x16x16 for bf16, 16x16x32 and 16x8x32 for s8; AMD 16x16x16; Intel
/// 8x16x16), the largest products first so that a dot takes the fewest
/// matrices; a device keeps those it lists (`intrinsics=`).
tk::TargetInfo cooperativeMatrixVulkan() {
  tk::TargetInfo info = genericVulkan();
  info.name = "vulkan-cooperative-matrix";
  std::vector<std::array<int64_t, 3>> shapes;
  for (int64_t m : {8, 16, 32})
    for (int64_t n : {8, 16, 32})
      for (int64_t k : {8, 16, 32})
        shapes.push_back({m, n, k});
  std::stable_sort(shapes.begin(), shapes.end(), [](auto x, auto y) {
    return x[0] * x[1] * x[2] > y[0] * y[1] * y[2];
  });
  using Types = tk::vulkan::CooperativeMatrixTypes;
  using ET = tk::MatrixElementType;
  for (auto [types, operands, sums] :
       {std::tuple{Types::F16F32, ET::F16, ET::F32},
        std::tuple{Types::BF16F32, ET::BF16, ET::F32},
        std::tuple{Types::S8S32, ET::I8, ET::I32}}) {
    for (auto [m, n, k] : shapes) {
      tk::MatrixIntrinsic intrinsic = tk::MatrixIntrinsic::of(
          m, n, k, operands, sums, tk::MatrixScope::Warp,
          tk::vulkan::cooperativeMatrixKey(m, n, k, types), std::nullopt,
          std::nullopt, tk::getOpaquePlacement(m, n, info.warpSize));
      intrinsic.opaque = true;
      info.intrinsics.push_back(intrinsic);
    }
  }
  return info;
}

} // namespace

void tk::vulkan::registerTargetPresets() {
  registerTargetPreset("vulkan", {}, genericVulkan);
  registerTargetPreset("vulkan-lavapipe", {"lavapipe"}, lavapipe);
  registerTargetPreset("vulkan-cooperative-matrix", {},
                       cooperativeMatrixVulkan);
}

std::string
tk::vulkan::targetSpec(int64_t subgroupSize, int64_t sharedMemoryBytes,
                       int64_t maxThreads,
                       const std::vector<std::string> &cooperativeMatrix) {
  std::string spec =
      cooperativeMatrix.empty() ? "vulkan" : "vulkan-cooperative-matrix";
  spec += ":warp-size=" + std::to_string(subgroupSize) +
          ":shared-memory=" + std::to_string(sharedMemoryBytes) +
          ":max-threads=" + std::to_string(maxThreads);
  if (!cooperativeMatrix.empty()) {
    spec += ":intrinsics=";
    for (size_t i = 0; i < cooperativeMatrix.size(); ++i)
      spec += (i ? "," : "") + cooperativeMatrix[i];
  }
  return spec;
}
