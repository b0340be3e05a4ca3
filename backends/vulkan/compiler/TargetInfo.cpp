//===- TargetInfo.cpp - Vulkan devices as TargetInfo presets --------------===//
//
// Vulkan exposes no matrix unit to tk yet (VK_KHR_cooperative_matrix is
// not lowered), so dots are subgroup FMA code and the presets list no
// intrinsics. What differs between devices (subgroup size, workgroup memory)
// is read from the device at compile time and given as overrides.
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"

#include "tk/core/TargetInfo.h"

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

} // namespace

void tk::vulkan::registerTargetPresets() {
  registerTargetPreset("vulkan", {}, genericVulkan);
  registerTargetPreset("vulkan-lavapipe", {"lavapipe"}, lavapipe);
}

std::string tk::vulkan::targetSpec(int64_t subgroupSize,
                                   int64_t sharedMemoryBytes,
                                   int64_t maxThreads) {
  return "vulkan:warp-size=" + std::to_string(subgroupSize) +
         ":shared-memory=" + std::to_string(sharedMemoryBytes) +
         ":max-threads=" + std::to_string(maxThreads);
}
